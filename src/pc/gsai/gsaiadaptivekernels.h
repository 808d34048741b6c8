/*
   Device kernels of PCGSAI's adaptive pattern (pure CUDA with a C interface, no PETSc). The glue is gsaiadaptivecuda.cu;
   the host reference of every step is gsaiadaptive.c (AdaptRow(), AdaptInsert()). The local problems of a round are
   solved by gsaikernels.h's batched solvers on the current pattern; these kernels then compute every growing row's
   residual, pick its new entries and merge them into the pattern.
*/
#pragma once

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* the device path handles rows of at most this many pattern entries and at most this many new entries per round */
#define GPUKIT_GSAI_ADAPT_MAXJ    64
#define GPUKIT_GSAI_ADAPT_MAXSTEP 16
/* |r_i| at most this is no candidate: keep equal to GSAI_ADAPTIVE_RDROP (gsaiimpl.h) */
#define GPUKIT_GSAI_ADAPT_RDROP 1.0e-10

typedef struct {
  int           n;           /* rows */
  int           spd;         /* 0: general (left), r = x^T B(J,:) - e_k^T; 1: r_i = (x^T A)_i / sqrt(a_ii), i < k, i not in J */
  int           perstep;     /* at most GPUKIT_GSAI_ADAPT_MAXSTEP */
  int           room;        /* entries per row at most (at most GPUKIT_GSAI_ADAPT_MAXJ) */
  double        tol;         /* target residual */
  const int    *bptr, *bcol; /* B (A for spd), sorted rows */
  const double *bval;
  const double *diag;        /* spd: the diagonal of A (n) */
  const int    *jptr, *jcol; /* the pattern, sorted rows */
  const double *x;           /* the solution on it (the solve's vals) */
  const int    *status;      /* the solve's status: 0 solved, else the row stops (fallback or failure) */
  int          *grow;        /* in/out: the row still grows */
  double       *res;         /* out: the residual of every row evaluated */
  int          *addcnt;      /* out: entries added to the row (0 for the rows not growing) */
  int          *add;         /* out: n * perstep, the new entries of each row, increasing */
} GpukitGSAIAdaptArgs;

/* One round for every growing row: its residual; unless last, its new entries (addcnt, add) and whether it still grows */
cudaError_t GpukitGSAIAdaptStepCUDA(const GpukitGSAIAdaptArgs *a, int last, cudaStream_t stream);

/* the new pattern: row k of (nptr, ncol) = row k of (jptr, jcol) merged with add[k * perstep ..][0 .. addcnt[k]) */
cudaError_t GpukitGSAIAdaptMergeCUDA(int n, const int *jptr, const int *jcol, const int *addcnt, const int *add, int perstep, const int *nptr, int *ncol, cudaStream_t stream);

/* jptr = 0, 1, .., n and jcol = 0, .., n-1: the diagonal pattern */
cudaError_t GpukitGSAIAdaptDiagonalCUDA(int n, int *jptr, int *jcol, cudaStream_t stream);

/* lengths of the rows of (jptr): cnt[k] = jptr[k+1] - jptr[k] + addcnt[k] */
cudaError_t GpukitGSAIAdaptLengthsCUDA(int n, const int *jptr, const int *addcnt, int *cnt, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
