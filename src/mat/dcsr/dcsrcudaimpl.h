/*
   Private declarations of MATDCSRCUDA (MATSEQDCSRCUDA, MATMPIDCSRCUDA), shared by its glue (dcsrcuda.cu) and its
   registration stubs (dcsrcudareg.c). The type is MATSEQDCSR (dcsrimpl.h, H3's) plus a device mirror of its arrays,
   hung on Mat_SeqDCSR's spdev; the kernels are dcsrkernels.{h,cu}.

   What lives where:
   - the segmented structure (segment table, columns, values, bump pointer) on the device, authoritative after device
     insertions (A->offloadmask GPU); the host arrays are brought back by the twin (gpukittwin.h) when host code asks
     for them through Mat_SeqDCSR's hostaccess hook, and uploaded whole only when host code changed them;
   - entries given with MatSetValues() are stashed on the host (local i, j, v) and ONLY they travel at
     MatAssemblyEnd(), into a device batch insertion (dcsrkernels.h);
   - the product: rows binned by length, threads per row per bin on the tuner (kernel "dcsr_mult2"), chunks of blocks
     for the longest rows, a coalesced row table for the rows that have one segment; or, when every row has at most
     one segment, the "rows" kernel on a row-order view (docs/dcsr.md);
   - device work arrays and the column/value buffers come from gpukit's stream-ordered pool (gpukitpool.h).
*/
#pragma once

#include "dcsrimpl.h"

/* the kernels are written for real double scalars and 32-bit PetscInt (plain copies of Mat_SeqDCSR's arrays) */
#if defined(GPUKIT_HAVE_CUDA) && defined(PETSC_USE_REAL_DOUBLE) && !defined(PETSC_USE_COMPLEX) && !defined(PETSC_USE_64BIT_INDICES)
  #define GPUKIT_DCSRCUDA_AVAILABLE 1
#endif

#if defined(GPUKIT_DCSRCUDA_AVAILABLE) && defined(__CUDACC__)
  #include <petscdevice_cuda.h>
  #include "gpukitcuda.h"
  #include "gpukittune.h"
  #include "gpukittwin.h"
  #include "dcsrkernels.h"

  #define DCSRCUDA_WHO "MATDCSRCUDA launches its kernels" /* for GpukitCUDAGetStream() errors */
  #define DCSR_BASE_NBUCKETS 4 /* the base product's tuners: no row marked, at most 1/16, 1/8, more */

/* MatSetValues() entries waiting for MatAssemblyEnd() (local indices, one InsertMode per assembly) */
typedef struct {
  PetscCount   n, nalloc;
  PetscInt    *i, *j;
  PetscScalar *v;
  InsertMode   mode;
} DCSRCUDAStash;

typedef struct {
  GpukitDCSRDev d;       /* the device mirror; d.segstart == NULL: nothing allocated yet */
  PetscInt      structver; /* changes with every change of the device structure (upload, insertion, defragmentation) */

  DCSRCUDAStash stash;

  /* the product's bins and row table (GpukitDCSRBinRows()), built for structure version binver; rows longer than
     longrow (-mat_dcsr_cuda_long_row) get a block of threads each */
  int      *perm, *rowst, *rowln;
  PetscInt  permm;
  long long binstart[GPUKIT_DCSR_NBINS_ALL + 1], nnz, maxlen;
  PetscInt  binver;
  PetscBool rowtablestale; /* the bins are those of binver but rowst/rowln not yet: a defragmentation that left a CSR base
                              (whose product does not read them) defers the table to the next product that does */
  PetscInt  longrow;
  /* the long bin split by entries (GpukitDCSRLongChunks()): lchunk[nlong + 1] first chunk of each long row, lpart[nchunk]
     the chunks' partial sums; allocated sizes lchunkalloc, lpartalloc (grown, never shrunk while the bins live) */
  int      *lchunk, *lcount; /* lcount[lchunkalloc]: the fused product's counters of done chunks per long row (kept 0) */
  double   *lpart;
  long long nchunk, lchunkalloc, lpartalloc;

  /* -mat_dcsr_cuda_trim: after a batch or a defragmentation that freed more than GPUKIT_DCSR_TRIM_BYTES of work space,
     the pool's unused memory goes back to the device (so that what the matrix holds is what cudaMemGetInfo() sees) */
  PetscBool trim;
  PetscInt  ntrim;

  /* -mat_dcsr_cuda_defrag_spare: the buffers a defragmentation replaced are kept for the next one (which then allocates
     nothing and trims nothing); without it they go back to the pool (and with -mat_dcsr_cuda_trim to the device) */
  PetscBool       keepspare;
  GpukitDCSRSpare spare;
  /* the sizes a defragmentation needs (dcsrkernels.h), from the segment statistics of structure version dhintver (a
     defragmentation keeps the row lengths, so it carries them on); with them it reads nothing back */
  GpukitDCSRDefragHint dhint;
  PetscBool            dhintok;
  PetscInt             dhintver;

  /* the product's kernel (-mat_dcsr_cuda_mult_kernel): DCSR_MULT_AUTO (the tuner's knob "kernel"), or fixed */
  PetscInt multkernel;

  /* the "rows" kernel (GpukitDCSRMultRowsCUDA()): its row-order view (start, length) of every row,
     GpukitDCSRRowsView(), evaluated for structure version viewver (viewok: it applies, i.e. every row has at most one
     segment and the buffer at most INT_MAX slots; rowsview then holds rowsviewm rows). single: every row has at most
     one segment (1), not (0), for structure version singlever (else unknown), told by the code that changes the
     structure (upload: the host's nseg; defragmentation: 1; batch: its plan's maxnseg; the assembly's segment
     statistics), so that the view is rebuilt at the next product without a read-back; unknown: the rebuild reads back
     one flag (once per structure) */
  int2     *rowsview;
  PetscInt  rowsviewm, viewver, single, singlever;
  PetscBool viewok;
  /* the last product's kernel (DCSR_MULT_BINNED, _FUSED, _ROWS; -1: none yet) and the rows kernel's lanes per row
     ("MatDCSRCUDAGetMultKernel_C", for tests) */
  PetscInt lastkernel, lasttpr;

  /* threads per row of each bin: the tuner's ("dcsr_mult2", knobs kernel, tpr0..tpr2; tpr3, for the rows of 257..longrow
     when -mat_dcsr_cuda_long_row > 256, is not tuned), or fixed by -mat_dcsr_cuda_threads_per_row, or the starting values
     with -mat_dcsr_autotune false */
  PetscInt    tpr[GPUKIT_DCSR_NBINS];
  PetscBool   fixtpr, autotune;
  GpukitTuner tuner;     /* while the rows kernel does not apply: knob kernel binned | fused */
  GpukitTuner tunerrows; /* while it applies: knob kernel binned | fused | rows1 .. rows32 (rows kernel, 1..32 lanes) */
  PetscInt    tune_m;
  PetscObjectState tunestate; /* the tuners' operator state: moves when nnz drifts by more than 1/16 since tunennz, not at
                                 every batch (a search needs about 7 products; batches between them would restart it) */
  long long        tunennz;

  /* the CSR base (-mat_dcsr_cuda_csr_base, default true): when the layout is plain CSR (every row one segment, the rows
     back to back from slot 0: after a defragmentation with -mat_dcsr_defrag_slack 0, the default, or an upload of such a
     host layout), baserow[m+1] are its row pointers and the product is cuSPARSE's CSR product over them (gpukitcuda.h
     GpukitCSRSpMVApply(), what MATAIJCUSPARSE runs). Batches of new entries keep the base (no row moves its first
     segment outside a defragmentation): each row that gets new entries gets a place in the tail table once
     (basedirty[r] = place + 1, *basecount places, on the device) and its record there is rewritten at every batch that
     adds to it (basetrow[place] = r, basetpiece[place] = where its entries outside the base range are); a fix-up kernel
     adds them after cuSPARSE's product (GpukitDCSRBaseFixup(), reading the table in order). Valid for structure version
     basever; ndirtyub bounds the marked rows (from the batches' counts, on the host); the product leaves the base for
     the other kernels while more than basemaxdirty (-mat_dcsr_cuda_csr_base_max_marked, 0.25) of the rows may be marked
     (the default auto defragmentation comes at a sixteenth of the rows fragmented, -mat_dcsr_defrag_fraction 0.0625) */
  PetscBool     usebase, baseok;
  PetscReal     basemaxdirty;
  int          *baserow, *basedirty, *basecount; /* one allocation of 2 m + 2 ints */
  int4         *basetpiece;                       /* the tail table: [m] records, then basetrow [m] (one allocation, at the first batch) */
  int          *basetrow;
  PetscInt      basem, basever;
  long long     basennz, ndirtyub;
  GpukitCSRSpMV csrmv;
  /* the base's product (-mat_dcsr_cuda_csr_base_product): DCSR_BASE_AUTO (with -mat_dcsr_autotune the tuner of the
     marked rows' bucket, "dcsr_base", knob kernel: cusparse, i.e. cuSPARSE plus the fix-up, or stream, the base stream
     kernel GpukitDCSRMultBaseStreamCUDA(); without the tuner cusparse), or forced: DCSR_BASE_CUSPARSE, DCSR_BASE_STREAM.
     blong: the base's rows longer than longrow for the stream kernel (blongok: built for this base) */
  PetscInt           baseprod;
  GpukitTuner        tunerbase[DCSR_BASE_NBUCKETS]; /* one per bucket of the marked rows' fraction (DCSRCUDABaseBucket_Private()) */
  long long          tunerbasennz[DCSR_BASE_NBUCKETS]; /* the base's entries when that tuner was made: a base that has drifted
                                                          by more than 1/16 from them gets a new tuner (its shape key, its search) */
  GpukitDCSRBaseLong blong;
  long long          blongalloc, blongpartalloc;
  PetscBool          blongok;

  /* statistics of the device side (MatView ::ascii_info) */
  PetscInt  ndevdefrag, ndevgrow, nbatch;
  PetscCount nuploaded; /* stashed entries uploaded so far */

  PetscBool  told_vec;
  GpukitTwin twin; /* offload mask, logged copies, the host ops for MatBindToCPU() and the way back */
} Mat_SeqDCSRCUDA;

/* the product's kernels: the binned launches (a kernel per bin, then the long bin's two), or the same work fused in one
   launch (dcsrkernels.h GpukitDCSRMultFusedCUDA) */
#define DCSR_MULT_AUTO   -1
#define DCSR_MULT_BINNED 0
#define DCSR_MULT_FUSED  1
/* the rows kernel (-mat_dcsr_cuda_mult_kernel rows); as a value of the tuner's knob "kernel", DCSR_MULT_ROWS + log2(t)
   is the rows kernel with t lanes per row (2..7: 1..32 lanes) */
#define DCSR_MULT_ROWS   2
#define DCSR_MULT_NROWST 6
/* lastkernel of a product through the CSR base (cuSPARSE and the fix-up of the marked rows, lasttpr 0; or the base
   stream kernel, lasttpr DCSR_BASE_STREAM_CODE) */
#define DCSR_MULT_CSRBASE 3
/* baseprod (also the values of the base tuner's knob), and the lane code of a product on the base by the stream kernel
   (lasttpr, "MatDCSRCUDAGetMultKernel_C") */
#define DCSR_BASE_AUTO        -1
#define DCSR_BASE_CUSPARSE    0
#define DCSR_BASE_STREAM      1
#define DCSR_BASE_STREAM_CODE 64

#define GPUKIT_DCSR_TRIM_BYTES (32.0 * 1048576.0)

static inline Mat_SeqDCSRCUDA *DCSRCUDAGet(Mat A)
{
  return (Mat_SeqDCSRCUDA *)((Mat_SeqDCSR *)A->data)->spdev;
}

PETSC_INTERN PetscLogEvent MAT_DCSRCUDA_Insert, MAT_DCSRCUDA_Defrag, MAT_DCSRCUDA_Mult, MAT_DCSRCUDA_Copy;
#endif
