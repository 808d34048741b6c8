/*
   Private declarations of MATDCSR (dynamic CSR), shared by its host code (dcsr.c, dcsrinsert.c, mpidcsr.c) and its
   CUDA twin (MATDCSRCUDA, dcsrcuda*). Format and semantics: docs/dcsr.md.

   Storage of one sequential block (Mat_SeqDCSR), m rows, n columns, at most K segments per row:
     row r is the concatenation of its nseg[r] segments s = 0..nseg[r]-1; segment s of row r is
       colidx[segstart[r*K + s] .. segstart[r*K + s] + seglen[r*K + s])   (and values[] at the same places)
     with segcap[r*K + s] >= seglen[r*K + s] slots reserved for it (the slack after the used part is free).
     The buffers colidx/values hold cap slots; slots [0, used) have been handed out by the bump allocator.

   INVARIANTS (every host function keeps them; the device code must too):
     I1  0 <= nseg[r] <= K; entries s >= nseg[r] of the row's segment table are meaningless (kept 0).
     I2  0 <= seglen[r*K+s] <= segcap[r*K+s]; every segment is sorted by strictly increasing column.
     I3  no column appears twice in a row (across all its segments): setting (i,j) again hits the slot already
         holding j: INSERT_VALUES overwrites, ADD_VALUES adds. Segments of one row are disjoint in columns but
         NOT ordered among themselves (segment 1 may hold smaller columns than segment 0).
     I4  segments (with their capacity) never overlap in the buffers and lie below used: segstart + segcap <= used
         <= cap.
     I5  rowlen[r] = sum_s seglen[r*K+s]; nz = sum_r rowlen[r].
     I6  a row with nseg[r] == 1 is sorted (the fast path of MatGetRow and of conversions). After a
         defragmentation every non-empty row has exactly one segment, rows lie in row order (with
         -mat_dcsr_reorder_rows: grouped by length, longest first, row order within a length; code must reach a
         row through segstart[], never assume the order), and the segment of row r has capacity rowlen[r] + ceil(slack*rowlen[r]) (empty rows: nseg 0).
     I7  columns are local to the block: 0..n-1 (the off-diagonal block of MATMPIDCSR: ghost indices into the
         append-only garray of Mat_MPIDCSR).

   Garbage: slots below used that belong to no segment (left by relocations of rows that hit K) are counted in
   garbage = used - sum of segcap; a defragmentation recovers them.
*/
#pragma once

#include <petsc/private/matimpl.h>
#include "../../sys/gpukitimpl.h"

#define GPUKIT_DCSR_MAX_K 64

/* when MatAssemblyEnd() defragments (see docs/dcsr.md) */
typedef enum {
  MAT_DCSR_DEFRAG_AUTO,   /* when more than defrag_fraction of the rows have several segments or at K/capacity */
  MAT_DCSR_DEFRAG_ALWAYS, /* at every assembly end that brought new entries */
  MAT_DCSR_DEFRAG_NEVER   /* only when the capacity forces it */
} MatDCSRDefragType;
PETSC_INTERN const char *const MatDCSRDefragTypes[];

typedef struct {
  PetscInt     m, n, K;
  PetscCount  *segstart; /* [m*K] */
  PetscInt    *seglen;   /* [m*K] */
  PetscInt    *segcap;   /* [m*K] */
  PetscInt    *nseg;     /* [m] */
  PetscInt    *rowlen;   /* [m] entries of the row (I5) */
  PetscInt    *colidx;   /* [cap] */
  PetscScalar *values;   /* [cap] */
  PetscCount   used, cap;
  PetscCount   nz;       /* entries stored (I5) */

  /* policy (options, see docs/dcsr.md) */
  PetscReal         slack;           /* -mat_dcsr_slack: a new segment gets ceil(slack*len) spare slots */
  PetscReal         defragslack;     /* -mat_dcsr_defrag_slack: a defragmented row gets ceil(defragslack*len) (0: plain CSR) */
  PetscInt          minseg;          /* -mat_dcsr_min_segment: smallest capacity of a new segment */
  PetscReal         capfactor;       /* -mat_dcsr_capacity_factor: buffer capacity = capfactor * needed, when (re)allocated */
  MatDCSRDefragType defrag;          /* -mat_dcsr_defrag */
  PetscReal         defrag_fraction; /* -mat_dcsr_defrag_fraction: auto defragments when more rows than this are fragmented */
  PetscBool         reorder_rows;    /* -mat_dcsr_reorder_rows: host defragmentation places rows grouped by length (dcsrinsert.c) */

  /* assembly state */
  PetscBool  assembling;   /* between MatAssemblyBegin() and MatAssemblyEnd(): MatSetValues() errors */
  PetscCount nnew;         /* new nonzeros since the last assembly end */
  PetscInt   nonew;        /* 0: new locations allowed; 1: dropped silently (MAT_NEW_NONZERO_LOCATIONS false); -1: error */
  PetscBool  roworiented, ignorezero;
  PetscBool  keepnz;       /* MAT_KEEP_NONZERO_PATTERN: MatZeroRows() keeps the zeroed entries (else removes them, as AIJ) */
  PetscBool  preallocated; /* storage exists (preallocation or MatSetUp()) */

  /* statistics (MatView() ::ascii_info, MatDCSRGetInfo()) */
  PetscInt   ndefrag, nrelocate, ngrow;

  /* MatGetRow() buffers (merged, sorted rows) */
  PetscInt    *rowcols;
  PetscScalar *rowvals;
  PetscInt     rowbufsize;
  PetscBool    getrowactive;

  /* host MatMult() fast path: per row the start and length of its only segment (len0 -1: several segments),
     rebuilt when tabstate (bumped by every host change of the segment tables, and by DCSRHostAccess() on the CUDA
     twin) moved; not used while hostaccess is set. The CUDA twin: bump tabstate when it writes the host tables
     itself (e.g. a copy back from the device that does not go through DCSRHostAccess()). */
  PetscInt     tabstate, faststate;
  PetscCount  *start0;
  PetscInt    *len0;

  /* the AIJ copy that the AIJ forwarder and factorizations use (see MatDCSRGetAIJ_Private()) */
  Mat              aij;
  PetscObjectState aijstate, aijnzstate;

  /* the CUDA twin (MATSEQDCSRCUDA): its private data, NULL on the host type */
  void *spdev;
  /* the CUDA twin's hook, called before host code touches the storage: with write = PETSC_FALSE it brings the
     device storage back when the device copy is newer; with PETSC_TRUE it also marks the host copy as the only
     valid one. NULL on the host type. Every host function calls DCSRHostAccess() first (see below). */
  PetscErrorCode (*hostaccess)(Mat, PetscBool);
  /* the CUDA twin's lines for MatView() with ::ascii_info, or NULL */
  PetscErrorCode (*viewinfo)(Mat, PetscViewer);
  /* the CUDA twin's options (-mat_dcsr_cuda_*), read inside the "MATDCSR options" block of DCSRSetFromOptions_Private()
     for the matrix (arg 1) from its first block blk[0] and given to all nblk blocks, or NULL */
  PetscErrorCode (*devoptions)(Mat, PetscInt, const Mat[], GpukitOptionItems);

  /* (added) DMCreateMatrix() of a 1-D DMDA on one process without periodic boundary (dcsr.c, DCSRDMDA1dShield):
     PETSc calls MatSeqAIJSetTotalPreallocation() on the matrix, which writes AIJ's private structure; while it runs,
     A->data is a stand-in SEQAIJ's and this structure is kept by the stand-in. Saved here: the ops that call
     replaces, and the per-row capacity the stencil needs. Not used otherwise. */
  PetscErrorCode (*shieldsetvalues)(Mat, PetscInt, const PetscInt[], PetscInt, const PetscInt[], const PetscScalar[], InsertMode);
  PetscErrorCode (*shieldl2g)(Mat, ISLocalToGlobalMapping, ISLocalToGlobalMapping);
  PetscInt shieldnz;
} Mat_SeqDCSR;

/* Every host function that reads (write = PETSC_FALSE) or changes (PETSC_TRUE) the storage calls this first */
static inline PetscErrorCode DCSRHostAccess(Mat A, PetscBool write)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  if (a->hostaccess) {
    PetscCall((*a->hostaccess)(A, write));
    a->tabstate++; /* the device may have changed the tables: the host MatMult() fast path is rebuilt */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* an entry set on a row of another rank, waiting for assembly (global indices) */
typedef struct {
  PetscCount   n, nalloc;
  PetscInt    *ij; /* 2*n */
  PetscScalar *v;  /* n */
} DCSRStash;

/* MATMPIDCSR. The off-diagonal block B has the column layout N - n (an upper bound of the number of ghosts), so
   that appending a ghost never changes it; its columns in use are 0..nghost-1 and its products are called through
   B->ops with x = lvec (length nghost). Both blocks are created at setup/preallocation (or MatSetFromOptions()). */
typedef struct {
  Mat        A, B;         /* diagonal block (local columns), off-diagonal block (ghost columns); both of blocktype */
  char      *blocktype;    /* MATSEQDCSR, or MATSEQDCSRCUDA for mpidcsrcuda */
  PetscInt  *garray;       /* [nghost] global column of ghost index g: APPEND-ONLY, never reordered */
  PetscInt   nghost, ghostalloc;
  void      *colmap;       /* PetscHMapI: global column -> ghost index (dcsr's mpidcsr.c owns it) */
  Vec        lvec;         /* ghost values, length nghost, of type A->defaultvectype on PETSC_COMM_SELF */
  VecScatter Mvctx;        /* x -> lvec */
  PetscInt   nghostsf;     /* number of ghosts lvec/Mvctx were built for (rebuilt when nghost grew) */
  DCSRStash  stash;
  PetscBool  assembling, roworiented, donotstash;
  PetscInt   nonew;
  PetscBool  deferopts;    /* MatSetFromOptions() came before the sizes: run it again when the blocks are made */
  /* MatGetRow() buffers */
  PetscInt    *rowcols;
  PetscScalar *rowvals;
  PetscInt     rowbufsize;
  PetscBool    getrowactive;
  /* the MPIAIJ copy of the forwarder */
  Mat              aij;
  PetscObjectState aijstate, aijnzstate;
  void            *spdev; /* the CUDA twin's, NULL on the host type */
} Mat_MPIDCSR;

PETSC_INTERN PetscErrorCode MatCreate_SeqDCSR(Mat);
PETSC_INTERN PetscErrorCode MatCreate_MPIDCSR(Mat);
PETSC_INTERN PetscErrorCode MatCreate_DCSR(Mat);
/* the MPI type with diagonal/off-diagonal blocks of blocktype (MATSEQDCSR; H4's mpidcsrcuda passes MATSEQDCSRCUDA
   and then retypes what it needs; the blocks are created at setup/preallocation, lvec gets A->defaultvectype) */
PETSC_INTERN PetscErrorCode MatCreate_MPIDCSR_Private(Mat, MatType);

/* storage (dcsrinsert.c) */
PETSC_INTERN PetscErrorCode DCSRAllocate_Private(Mat, const PetscInt[], PetscInt);       /* fresh storage: per-row capacity nnz[] or nz each */
PETSC_INTERN PetscErrorCode DCSRDefragment_Private(Mat, PetscCount, PetscInt);          /* one sorted segment per row; extra capacity, new K (or 0: keep) */
PETSC_INTERN PetscErrorCode DCSRFindEntry_Private(Mat_SeqDCSR *, PetscInt, PetscInt, PetscCount *); /* slot of (r, c) or -1 */
PETSC_INTERN PetscErrorCode DCSRInsertRow_Private(Mat, PetscInt, PetscInt, const PetscInt[], const PetscScalar[], InsertMode); /* local row, local columns, checked */
PETSC_INTERN PetscErrorCode DCSRGetSortedRow_Private(Mat, PetscInt, PetscInt *, PetscInt **, PetscScalar **); /* merged sorted row into a->rowcols/rowvals */
PETSC_INTERN PetscErrorCode DCSRFragmentedRows_Private(Mat_SeqDCSR *, PetscInt *);
PETSC_INTERN PetscErrorCode DCSRSetMaxSegments_Private(Mat, PetscInt);
PETSC_INTERN PetscErrorCode DCSRSetSlack_Private(Mat, PetscReal);
PETSC_INTERN PetscErrorCode DCSRSetDefragSlack_Private(Mat, PetscReal);
PETSC_INTERN PetscErrorCode DCSRSetMinSegment_Private(Mat, PetscInt);
PETSC_INTERN PetscErrorCode DCSRSetCapacityFactor_Private(Mat, PetscReal);
PETSC_INTERN PetscErrorCode DCSRSetDefragFraction_Private(Mat, PetscReal);

/* host ops of the seq type that the CUDA twin may call back into (dcsr.c) */
PETSC_INTERN PetscErrorCode MatSetValues_SeqDCSR(Mat, PetscInt, const PetscInt[], PetscInt, const PetscInt[], const PetscScalar[], InsertMode);
PETSC_INTERN PetscErrorCode MatAssemblyEnd_SeqDCSR(Mat, MatAssemblyType);
PETSC_INTERN PetscErrorCode MatDestroy_SeqDCSR(Mat);
PETSC_INTERN PetscErrorCode MatConvert_SeqDCSR_SeqAIJ(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatConvert_MPIDCSR_MPIAIJ(Mat, MatType, MatReuse, Mat *);
/* the forwarder's getaij callbacks: an AIJ copy of A owned by A, refreshed when A's state changed */
PETSC_INTERN PetscErrorCode MatDCSRGetAIJ_Private(Mat, Mat *);
PETSC_INTERN PetscErrorCode MatMPIDCSRGetAIJ_Private(Mat, Mat *);

/* log events, registered by MatRegister_DCSR_Private() (dcsr.c) */
PETSC_INTERN PetscLogEvent MAT_DCSR_Insert, MAT_DCSR_Defrag, MAT_DCSR_Mult, MAT_DCSR_Assembly;
