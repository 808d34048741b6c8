/*
   Private declarations of MATAMB (adaptive multi-level blocking), shared by its host code (amb.c, mpiamb.c,
   ambhost.c; H1) and its CUDA code (MATAMBCUDA; H2). docs/amb.md describes the format for users.

   seqaijamb is a MATSEQAIJ (A->data is SeqAIJ's, untouched) whose product uses an AMB copy of the values:
   A->spptr is a Mat_SeqAMB. The AIJ arrays stay authoritative; the AMB layout is derived from them lazily, at the
   first product after an assembly or any other change of the object state:
     - nonzerostate unchanged since the build: values-only refresh through map[] ("AMBRefresh"),
     - nonzerostate changed: full rebuild ("AMBBuild").

   THE LAYOUT (AMBLayout), for an m x n block with CSR (ia, ja, a) (columns sorted within a row, as SeqAIJ keeps them):
     segments    g = col / W, nseg = ceil(n / W); the last one may be narrower: wlast = n - (nseg-1)*W.
     b           the block width actually used: min(requested or model-chosen b, wlast) (so every block fits in the
                 matrix, see "blocking"); 1 <= b <= AMB_MAX_B.
     row lists   for each segment g (ascending), the rows with at least one entry in g, in ascending row order, then
                 stable-sorted by nblk (number of blocks of the row in g, DESCENDING) within each window of sigma
                 consecutive matrix rows (window of row r = r / sigma; sigma 0 or 1: no sorting). Chunks are 32
                 (AMB_C) consecutive rows of this list; a chunk never mixes segments; only the last chunk of a segment
                 has padding lanes (row = -1). So there are no empty chunks and no empty real lanes.
     blocking    within the row's entries of segment g (ascending columns): greedy, base = first column, the next
                 columns join while col - base < b, else a new block starts at that column. A base with
                 base + b > n is clamped to base = n - b (this keeps it inside segment g because b <= wlast), the
                 values then sit at offset col - base. A block stores ONE index idx = base - g*W (0 <= idx < W, so it
                 fits in 16 bits) and b values (0 in the gaps). Blocks of a non-last segment may reach into the next
                 segment's columns (base + b <= n always holds).
     chunk c     seg[c] (its segment), nblk[c] = max over its lanes of the lane's blocks, cs[c] = sum over c' < c of
                 AMB_C*b*nblk[c'] (cs has nchunks+1 entries, cs[nchunks] = nzzf).
                 lane l, block k (0 <= k < nblk[c]): index colidx[cs[c]/b + AMB_C*k + l],
                 value j (0 <= j < b)      : val[cs[c] + AMB_C*(k*b + j) + l]      (ELL, column-major in the chunk).
                 Padding blocks (k >= the lane's own block count, and every block of a padding lane): values 0,
                 index = the lane's last real block's index (padding lanes: 0). Every stored index is valid:
                 g*W + idx + b <= n.
                 row[c*AMB_C + l]: the row of the lane, -1 for a padding lane.
     product     y[row] += sum over the lane's blocks k = 0..nblk[c]-1, j = 0..b-1 of val * x[seg[c]*W + idx + j].
     ORDER (the deterministic reference; AMBMult_Host computes exactly this): ONE running sum per row,
                 acc = init, init = 0 (MatMult) or z[r] (MatMultAdd); then for each of r's slots in ascending segment
                 order (rsptr/rslot below, = the order of the chunks), for k ascending, for j ascending:
                 acc += val * x[...]; finally y[r] = acc. (The host kernel keeps acc in y[r] between chunks.) Since the
                 entries are met in CSR column order and the zero-fill terms add exact zeros (x finite), this is
                 bitwise the sequential CSR sum PETSc's MatMult_SeqAIJ computes without inodes. One rounding per
                 multiply and per add: no FMA contraction (a device kernel that must be bitwise equal needs
                 __dmul_rn/__dadd_rn or -fmad=false). A row with no entries gets init.
     rsptr/rslot per row r: its slots (c*AMB_C + l, one per segment the row has entries in) in rslot[rsptr[r] ..
                 rsptr[r+1]-1], ascending segment order; nmulti = number of rows with 2 or more slots, listed
                 ascending in multirows[] (the device init pass touches only those).
     map         CSR position p (0 <= p < nnz) -> its slot in val[] (values-only refresh: val[map[p]] = a[p]; the
                 zero-fill slots stay 0).
   Padding and zero fill multiply real x entries (0*Inf = NaN), so an Inf/NaN in x could reach rows that AIJ leaves
   finite; the host product therefore scans x first (n reads) and, when x holds an Inf or NaN, computes that product
   with AIJ's own kernel (Inf/NaN exactly like AIJ; counted in nnonfinite). Inf/NaN in A's values or in z need nothing:
   they sit in real slots and propagate as in AIJ.

   TRAFFIC MODEL (bytes per product; v = 8, or 4 with single-precision values; C = AMB_C):
     AMB: nzzf*(v + 2/b) + nchunks*(2*v*C + 2*C + 10) + (m + n)*v
     CSR: nnz*12 + m*4 + (m + n)*8
   b (when not fixed by the user) minimises the AMB model over b = 1..AMB_MODEL_MAX_B (and <= wlast).
   CSR FALLBACK (mode auto): used when AMB bytes > 0.97 * CSR bytes, or mean nnz per row < AMB_FALLBACK_MIN_NNZ_ROW
   (mean over the rows of the block, m > 0); mode always: always CSR; never: always AMB.
*/
#pragma once

#include <petscmat.h>
#include <petsc/private/matimpl.h>
#include "../../sys/gpukitimpl.h"
#include <stdint.h>

#define AMB_C                     32    /* chunk height (lanes per chunk, one warp) */
#define AMB_MAX_B                 16    /* largest block width accepted by -mat_amb_b */
#define AMB_MODEL_MAX_B           8     /* the traffic model searches b = 1..AMB_MODEL_MAX_B */
#define AMB_MIN_W                 32    /* segment width: power of 2 in [AMB_MIN_W, AMB_MAX_W] */
#define AMB_MAX_W                 65536
#define AMB_DEFAULT_W             65536
#define AMB_DEFAULT_SIGMA         32768
#define AMB_FALLBACK_RATIO        0.97  /* CSR fallback when AMB bytes > AMB_FALLBACK_RATIO * CSR bytes */
#define AMB_FALLBACK_MIN_NNZ_ROW  7.0   /* ... or when the mean number of nonzeros per row is below this */

typedef enum {
  AMB_HOST_AMB, /* the host AMB kernel (AMBMult_Host) */
  AMB_HOST_CSR  /* AIJ's own product */
} AMBHostKernel;

typedef enum {
  AMB_FALLBACK_AUTO,  /* CSR when the traffic model says AMB cannot win (see above) */
  AMB_FALLBACK_NEVER, /* always AMB */
  AMB_FALLBACK_ALWAYS /* always CSR */
} AMBFallbackMode;

typedef enum {
  AMB_VALUES_DOUBLE,
  AMB_VALUES_SINGLE /* device only: values stored in FP32, vectors and sums in FP64 */
} AMBValues;

/* the user's choices (copied by MatDuplicate and from an MPI matrix to its blocks); 0 = automatic where noted */
typedef struct {
  PetscInt        b;     /* requested block width, 0 = chosen by the traffic model (device: then refined by timing) */
  PetscInt        W;     /* segment width */
  PetscInt        sigma; /* chunk sort window (0 or 1: no sorting) */
  AMBHostKernel   hostkernel;
  AMBFallbackMode fallback_mode;
  AMBValues       values; /* device only */
  PetscBool       deterministic; /* device only */
  PetscBool       bset, Wset, sigmaset; /* the user fixed them (the tuner leaves them alone) */
} AMBOptions;

/* the layout (see the top of this file) */
typedef struct {
  PetscInt        m, n;          /* rows, columns of the block */
  PetscInt        b, W, sigma;   /* in use (b = the block width after clamping to wlast) */
  PetscInt        nseg;
  PetscInt        nchunks;
  PetscCount      nnz;           /* entries of the CSR (length of map) */
  PetscCount      nzzf;          /* stored values including zero fill and padding = cs[nchunks] */
  PetscInt        nrowseg;       /* number of (row, segment) pairs with entries = real lanes */
  PetscInt64     *cs;            /* nchunks+1 */
  int32_t        *nblk;          /* nchunks */
  int32_t        *seg;           /* nchunks */
  int32_t        *row;           /* nchunks*AMB_C, -1 for padding lanes */
  uint16_t       *colidx;        /* nzzf/b */
  PetscScalar    *val;           /* nzzf */
  PetscInt64     *map;           /* nnz: CSR position -> index in val */
  int32_t        *rsptr;         /* m+1 */
  int32_t        *rslot;         /* nrowseg: slots c*AMB_C + l of each row, ascending segment order */
  PetscInt        nmulti;        /* rows with 2 or more slots */
  int32_t        *multirows;     /* nmulti, ascending */
  PetscLogDouble  bytes;         /* traffic model, AMB (double values), with this b */
  PetscLogDouble  bytescsr;      /* traffic model, CSR */
  PetscBool       fallback;      /* the product uses CSR instead (decided at build, from fallback_mode) */
  char            why[128];      /* why the fallback was or was not taken (view, -info) */
} AMBLayout;

typedef struct {
  AMBOptions       opt;
  AMBLayout        L;
  PetscBool        built;        /* L holds a layout (maybe stale) */
  PetscObjectState valstate;     /* object state of A whose values L holds */
  PetscObjectState nzstate;      /* A->nonzerostate L was built for */
  PetscInt         nbuild, nrefresh; /* counters (tests, -info) */
  PetscInt         nnonfinite;   /* products done with AIJ's kernel because x held an Inf or NaN */
  /* device side (MATAMBCUDA; H1 only passes these on) */
  void            *spdev;
  PetscErrorCode (*devdestroy)(Mat);
  PetscErrorCode (*devview)(Mat, PetscViewer);
} Mat_SeqAMB;

/* MPI: mpiaijamb is a MATMPIAIJ whose blocks are seqaijamb (or the blocktype given to the convert); spptr holds: */
typedef struct {
  AMBOptions opt;
  MatType    blocktype;          /* MATSEQAMB or MATSEQAMBCUDA (a static string) */
  PetscErrorCode (*mpiaijprealloc)(Mat, PetscInt, const PetscInt[], PetscInt, const PetscInt[]); /* the composed MPIAIJ one */
} Mat_MPIAMB;

PETSC_INTERN PetscLogEvent MAT_AMB_Build, MAT_AMB_Mult, MAT_AMB_Refresh;
PETSC_INTERN PetscErrorCode MatProductSetFromOptions_AMB_AsAIJ(Mat); /* a product that PETSc provides for AIJ by name (amb.c) */
PETSC_INTERN PetscErrorCode MatConvert_AMB_AsAIJ(Mat, MatType, MatReuse, Mat *); /* a conversion PETSc provides for AIJ by name (amb.c) */
PETSC_INTERN PetscErrorCode MatAMBComposeAIJConversions_Private(Mat, const char *, const char *, PetscBool); /* amb.c */

/* ambhost.c: layout, host kernel, model (plain C, no PETSc Mat) */
PETSC_INTERN PetscErrorCode AMBLayoutBuild_Host(PetscInt m, PetscInt n, const PetscInt *ia, const PetscInt *ja, const PetscScalar *a, const AMBOptions *opt, AMBLayout *L);
PETSC_INTERN PetscErrorCode AMBLayoutRefresh_Host(AMBLayout *L, const PetscScalar *a); /* values only, same pattern */
PETSC_INTERN PetscErrorCode AMBLayoutDestroy_Host(AMBLayout *L);
PETSC_INTERN PetscErrorCode AMBMult_Host(const AMBLayout *L, const PetscScalar *x, const PetscScalar *z, PetscScalar *y); /* z NULL: y = A x; else y = z + A x (z may equal y) */
PETSC_INTERN PetscLogDouble AMBModelBytes(PetscCount nzzf, PetscInt b, PetscInt nchunks, PetscInt m, PetscInt n, PetscInt v);
PETSC_INTERN PetscLogDouble AMBModelBytesCSR(PetscCount nnz, PetscInt m, PetscInt n);
/* block counts for a candidate b without building: nzzf and nchunks of the layout that b would give */
PETSC_INTERN PetscErrorCode AMBLayoutCount_Host(PetscInt m, PetscInt n, const PetscInt *ia, const PetscInt *ja, PetscInt b, PetscInt W, PetscInt sigma, PetscCount *nzzf, PetscInt *nchunks);
/* the block width actually usable for n columns and segment width W: min(b, wlast) */
PETSC_INTERN PetscInt AMBClampB(PetscInt b, PetscInt n, PetscInt W);

/* amb.c */
PETSC_INTERN PetscErrorCode MatConvert_SeqAIJ_SeqAMB(Mat A, MatType type, MatReuse reuse, Mat *newmat);
PETSC_INTERN PetscErrorCode MatConvert_SeqAMB_SeqAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat);
PETSC_INTERN PetscErrorCode MatSeqAMBGetLayout_Private(Mat A, const AMBLayout **L); /* brings L up to date (build or refresh) */
PETSC_INTERN PetscErrorCode MatSeqAMBSetOptions_Private(Mat A, const AMBOptions *opt);
PETSC_INTERN PetscErrorCode AMBOptionsDefault_Private(AMBOptions *opt);
PETSC_INTERN PetscErrorCode AMBOptionsSetFromOptions_Private(PetscObject obj, GpukitOptionItems PetscOptionsObject, AMBOptions *opt); /* inside a PetscOptionsHeadBegin/End */
PETSC_INTERN PetscErrorCode AMBOptionsView_Private(const AMBOptions *opt, PetscViewer viewer);
/* validating setters (errors name the option and the valid range) */
PETSC_INTERN PetscErrorCode AMBOptionsSetB_Private(PetscObject obj, AMBOptions *opt, PetscInt b);
PETSC_INTERN PetscErrorCode AMBOptionsSetSegmentWidth_Private(PetscObject obj, AMBOptions *opt, PetscInt W);
PETSC_INTERN PetscErrorCode AMBOptionsSetChunkSort_Private(PetscObject obj, AMBOptions *opt, PetscInt sigma);
PETSC_INTERN PetscErrorCode AMBOptionsCheck_Private(PetscObject obj, const AMBOptions *opt); /* consistency: sigma vs W */

/* mpiamb.c: the generic MPIAIJ -> MPI AMB convert (blocktype: MATSEQAMB or MATSEQAMBCUDA; newtype: MATMPIAMB or
   MATMPIAMBCUDA); MAT_INITIAL_MATRIX, MAT_REUSE_MATRIX and MAT_INPLACE_MATRIX */
PETSC_INTERN PetscErrorCode MatConvert_MPIAIJ_MPIAMB_Private(Mat A, MatType blocktype, MatType newtype, MatReuse reuse, Mat *newmat);
PETSC_INTERN PetscErrorCode MatConvert_MPIAMB_MPIAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat);
PETSC_INTERN PetscErrorCode MatCreate_MPIAMB(Mat A);
PETSC_INTERN PetscErrorCode MatCreate_SeqAMB(Mat A);
