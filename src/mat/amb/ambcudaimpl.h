/*
   Private declarations of MATAMBCUDA (seqaijambcuda / mpiaijambcuda), for its PETSc/CUDA glue (ambcuda.cu; include
   from .cu files only). The host type is MATSEQAMB (ambimpl.h); the device data hangs on Mat_SeqAMB's spdev.

   The host AIJ arrays stay authoritative. The device keeps a cache of them, keyed by the host's states:
     - a device CSR (rowptr, colidx, values) uploaded from the host AIJ arrays: the structure when A->nonzerostate
       changed, the values alone (nnz*8 bytes, event AMBCUDACopyUp) when only the object state changed;
     - the AMB layout (ambkernels.h) built ON THE DEVICE from the device CSR (event AMBCUDABuild) when the structure,
       b, W, sigma or the value precision changed; otherwise its values are refreshed from the device CSR values
       through the CSR-position -> slot map (event AMBCUDARefresh, no transfer);
     - the transpose CSR (for MatMultTranspose), built on the device at the first transpose product.
   Operations that change the values on both sides (MatScale, MatShift, MatZeroEntries, COO) run the host op and the
   same change on the device, then accept the one state increase the Mat interface makes after them ("grace").
*/
#pragma once

#include <petscdevice_cuda.h>
#include "gpukitcuda.h"
#include "gpukittune.h"
#include "gpukittwin.h"
#include "gpukitcoo.h"
#include "gpukitmat.h"
#include "ambimpl.h"
#include "ambkernels.h"

#if defined(PETSC_USE_REAL_DOUBLE) && !defined(PETSC_USE_COMPLEX)
  #define GPUKIT_AMBCUDA_AVAILABLE 1
#endif

#if defined(GPUKIT_AMBCUDA_AVAILABLE)

#define GPUKIT_AMBCUDA_BLOCK 256                            /* default threads per block of the product */
#define AMBCUDA_WHO          "MATAMBCUDA launches its kernels" /* for GpukitCUDAGetStream() errors */

/* cuSPARSE's sliced ELLPACK (cusparseCreateSlicedEll(), CUSPARSE_SPMV_SELL_ALG1) came with CUDA 12.1 (cuSPARSE 12.1) */
#if defined(CUSPARSE_VERSION) && CUSPARSE_VERSION >= 12100
  #define GPUKIT_AMBCUDA_HAVE_CUSPARSE_SELL 1
#endif

/* the device product's layouts (the tuner's categorical knob "layout"; AMBCUDALayoutNames[] in ambcuda.cu) */
typedef enum {
  AMBCUDA_LAYOUT_AMB,      /* the AMB layout (ambkernels.h) */
  AMBCUDA_LAYOUT_CSR,      /* the device CSR through cuSPARSE CSR SpMV (what MATAIJCUSPARSE runs) */
  AMBCUDA_LAYOUT_SELL,     /* SELL-32 built on the device, cuSPARSE's sliced ELLPACK SpMV */
  AMBCUDA_LAYOUT_SELLK,    /* the same SELL-32, gpukit's own kernel (one thread per row, deterministic; FP32 values with
                              -mat_amb_values single) */
  AMBCUDA_LAYOUT_CSRK,     /* the device CSR through gpukit's own CSR kernel (FP32 values with -mat_amb_values single) */
  AMBCUDA_NLAYOUTS
} AMBCUDALayout;

/* -mat_amb_cuda_sell */
typedef enum {
  AMBCUDA_SELL_TUNE,     /* SELL (cuSPARSE and own kernel) are tuner candidates next to CSR and AMB (mode auto only) */
  AMBCUDA_SELL_OFF,      /* never SELL */
  AMBCUDA_SELL_CUSPARSE, /* always cuSPARSE SELL (overrides the model and -mat_amb_csr_fallback) */
  AMBCUDA_SELL_KERNEL    /* always gpukit's SELL kernel */
} AMBCUDASellMode;

/* -mat_amb_cuda_segments: the AMB layout's segments (ambkernels.h, DIAGONAL SEGMENTS) */
typedef enum {
  AMBCUDA_SEG_AUTO,    /* diagonal segments when the plan's counts give the model fewer bytes than column segments */
  AMBCUDA_SEG_GRID,    /* column segments g = col / W (the host layout's) */
  AMBCUDA_SEG_DIAGONAL /* segments of col - row + dshift (when n + dshift fits in 31 bits) */
} AMBCUDASegMode;

/* -mat_amb_cuda_csr: which CSR kernels the CSR fallback may run */
typedef enum {
  AMBCUDA_CSR_TUNE,     /* cuSPARSE's (the start) and gpukit's (a tuner candidate; not with -mat_amb_deterministic) */
  AMBCUDA_CSR_CUSPARSE, /* cuSPARSE's only (the default) */
  AMBCUDA_CSR_KERNEL    /* gpukit's only, in place of cuSPARSE's */
} AMBCUDACsrMode;

#define AMBCUDA_MAX_TWIN_OPS  96 /* entries of the twin's op list (device ops and host wrappers) */
#define AMBCUDA_SELL_MAX_FILL 2.0 /* SELL is a candidate only with at most this many stored entries per nonzero */
#define AMBCUDA_TUNE_RATIO    1.2 /* with the tuner on, AMB stays a candidate up to this many times CSR's model bytes (ambcuda.cu) */
#define AMBCUDA_SEG_AUTO_MAX_ROW 64.0 /* -mat_amb_cuda_segments auto: diagonal segments only for at most this many entries a row on average */

/* what the device layout was built with; a change rebuilds it */
typedef struct {
  PetscInt  b, W, sigma;
  PetscBool single;
  PetscInt  longnb; /* the long-chunk limit asked for (0: automatic; ambkernels.h) */
  long long dshift; /* 0: column segments; > 0: diagonal segments with this shift */
} AMBCUDAKey;

typedef struct {
  /* the device CSR of the host AIJ arrays */
  int             *rowptr, *colidx;
  double          *val;
  PetscInt         m, n, nnz;
  PetscBool        csrvalid;       /* rowptr/colidx/val hold the structure of nzstate */
  PetscObjectState nzstate;        /* A->nonzerostate of the device CSR */
  PetscObjectState valstate;       /* object state whose values the device CSR holds */
  PetscBool        grace;          /* a device+host value op ran: one more state increase is ours */
  PetscBool        ambvalstale;    /* the layout's values lag behind the device CSR values */

  /* the plan: model, b, fallback */
  PetscBool      planned;          /* for this structure and these options */
  AMBOptions     planopt;          /* the options the plan is for */
  PetscInt       bmax, bmodel;     /* largest usable b on the device, the model's b */
  long long      blk[GPUKIT_AMB_CUDA_MAX_B], npairs;
  PetscBool      fallback;         /* the CSR kernel runs instead of AMB */
  PetscBool      inband;           /* the built AMB layout has 0.97-1.2 x CSR's model bytes: CSR first, AMB a candidate */
  long long      nlongrows;        /* the plan's rows of more than 1024 entries */
  AMBCUDASegMode segmode;          /* -mat_amb_cuda_segments */
  long long      dshift;           /* the plan's choice: 0 column segments, > 0 diagonal segments (colT holds the columns) */
  long long      npairsgrid, npairsdiag; /* the plan's (row, segment) pairs with either (0: not counted) */
  int           *colT;             /* nnz: col - row + dshift (pool), while dshift > 0 */
  PetscInt       tunevals[2];      /* in band: the b and threads per block AMB is timed with (other values run only AMB) */
  PetscInt       kb, kblk, klay;   /* the places of the knobs b, block and layout in the tuner's order */
  /* the CSR fallback through cuSPARSE (the kernel MATAIJCUSPARSE runs): gpukit's shared CSR product (gpukitcuda.h) */
  GpukitCSRSpMV csrmv;
  char           why[160];
  /* the layouts the product may run: candidates of the tuner's "layout" knob (first = the start), the one in use */
  PetscBool       decided;          /* the plan's candidates are set for the current plan */
  PetscInt        nlayouts, layouts[AMBCUDA_NLAYOUTS], layout;
  const char     *layoutlabels[AMBCUDA_NLAYOUTS];
  AMBCUDASellMode sellmode;
  long long       sellnval;         /* SELL-32 stored entries (padding included), -1 not measured */
  char            sellwhy[128];     /* why SELL is or is not a candidate */
  GpukitAMBSell   S;                /* SELL-32 on the device */
  PetscBool       sellbuilt, sellvalstale;
  cusparseSpMatDescr_t spsell;      /* cuSPARSE's descriptor of S */
  cusparseDnVecDescr_t ssx, ssy;
  void                *sellbuf;
  size_t               sellbufsize;
  PetscBool            sellbufok;
  PetscBool            tuneclean;   /* after the search: the layouts that lost were freed */
  PetscInt             nsellbuild;
  /* gpukit's CSR kernel (layout csrk): long-row lists and, with FP32 values, their copy */
  AMBCUDACsrMode csrmode;
  GpukitAMBCSRK  K;
  PetscBool      csrkbuilt, csrkvalstale;
  PetscInt       csrlanes; /* -mat_amb_cuda_csr_lanes: lanes per short row (0: from the mean row length) */
  PetscInt       csrlong;  /* -mat_amb_cuda_csr_long: rows of more than this many entries are cut into chunks (0: 32 lanes' worth) */
  PetscLogDouble bytes, bytescsr;  /* model of the kernel in use (AMB with the layout's b), CSR */

  /* the AMB layout on the device */
  GpukitAMBLayout L;
  PetscBool       built;
  AMBCUDAKey      key;

  /* the transpose CSR, built on the device at the first transpose product */
  int      *tptr, *tcol, *tperm;
  double   *tval;
  PetscBool tbuilt, tvalstale;
  GpukitAMBCSRK KT;                /* gpukit's CSR kernel's long-row lists of the transpose (not with -mat_amb_deterministic) */

  /* the product's knobs: b (when not fixed) and threads per block, on the tuner "amb_mult" */
  GpukitTuner tuner;
  PetscInt    block;               /* threads per block when not tuned */
  PetscInt    longnb;              /* -mat_amb_cuda_long_blocks: long-chunk limit in blocks, 0 automatic */
  PetscBool   fixblock, autotune;

  /* COO on the device (gpukitcoo.h): entries -> CSR positions */
  GpukitCOO coo;
  PetscInt  coonnz; /* the nonzeros of the pattern the COO map was made for */

  /* counters (tests read them through "MatAMBCUDAGetStats_C") */
  PetscInt nstructup, nvalup, nbuild, nrefresh, ncoo;
  PetscInt ncopydown; /* copies of the values down to the host (a stale host copy read by a host operation) */
  PetscBool told_vec;

  /* the host copy after a device COO refresh (-mat_amb_cuda_lazy_copydown): left stale (offload mask GPU) and copied
     down by the first host operation that reads it; PETSC_FALSE copies it down at every refresh */
  PetscBool lazyhost;

  GpukitTwin   twin;                           /* the host ops (for MatBindToCPU() and the way back) and the op list */
  GpukitTwinOp twinops[AMBCUDA_MAX_TWIN_OPS]; /* the twin's op list: the device ops, then the syncing host wrappers */
} Mat_SeqAMBCUDA;

static inline Mat_SeqAMBCUDA *AMBCUDAGet(Mat A)
{
  return (Mat_SeqAMBCUDA *)((Mat_SeqAMB *)A->spptr)->spdev;
}

/* stats for tests: structure uploads, value uploads, layout builds, value refreshes, COO value sets, b in use (0 for
   the CSR fallback), threads per block in use */
typedef PetscErrorCode (*MatAMBCUDAGetStatsFn)(Mat, PetscInt *, PetscInt *, PetscInt *, PetscInt *, PetscInt *, PetscInt *, PetscInt *);

PETSC_INTERN PetscLogEvent MAT_AMBCUDA_Mult, MAT_AMBCUDA_Build, MAT_AMBCUDA_Refresh, MAT_AMBCUDA_CopyUp;
PETSC_INTERN PetscLogEvent MAT_AMBCUDA_Plan, MAT_AMBCUDA_SellBuild, MAT_AMBCUDA_Tune, MAT_AMBCUDA_COO, MAT_AMBCUDA_CopyDown, MAT_AMBCUDA_CSRKBuild;

/* the name of the layout the device product uses ("amb", "csr", "sell", "sellk"; tests, benchmarks) */
typedef PetscErrorCode (*MatAMBCUDAGetLayoutFn)(Mat, const char **);

/* "MatAMBCUDAGetHostStats_C" (tests): copies of the values down to the host so far, and whether the host copy is
   stale now (offload mask GPU: only the device holds the current values) */
typedef PetscErrorCode (*MatAMBCUDAGetHostStatsFn)(Mat, PetscInt *, PetscBool *);

#endif /* GPUKIT_AMBCUDA_AVAILABLE */
