/*
   Device kernel of KSPCACG's matrix powers hook for CSR matrices (MATSEQAIJCUSPARSE, cacgcsrcuda.cu): one step of
   the three-term basis recurrence, the product fused with the update and the Jacobi scaling, so that each new basis
   vector costs one pass over the matrix and the vectors. Pure CUDA with a C interface, no PETSc. The contract is the
   comment above GpukitMatMatrixPowersFn in cacgimpl.h; the reference is CACGPowersDefault() in cacg.c.
*/
#pragma once

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* threads per block of the kernel */
#define GPUKIT_CSR_POWERS_BLOCK 256

/* a square m x m CSR matrix on the device, 32-bit indices, 0-based */
typedef struct {
  int           m;      /* rows = columns */
  int           nnz;    /* rowptr[m]: chooses the threads per row and is checked against the arrays' presence */
  const int    *rowptr; /* m + 1 row offsets, nondecreasing, rowptr[0] = 0, rowptr[m] = nnz */
  const int    *colidx; /* nnz column indices, each in 0..m-1 */
  const double *val;    /* nnz values */
} GpukitCSRArgs;

/* The epilogue of one step, for each row i, t = sum_k val_ik x_k with x_k = xs ? xs[k] * x[k] : x[k]:
       w1[i] = alpha t + beta w0[i] + gamma wm1[i]     (a term whose array is NULL is left out; in this order)
       v1[i] = dinv[i] w1[i]                           (when v1 is not NULL; dinv and v1 both given or both NULL)
   Every array has m entries on the device; w1 and v1 must not overlap each other or any input. */
typedef struct {
  double        alpha, beta, gamma;
  const double *w0, *wm1; /* or NULL */
  const double *dinv;     /* or NULL: no v1 */
  double       *v1;       /* or NULL */
  const double *xs;       /* or NULL: the product input is xs .* x, each entry one product (the lean basis) */
} GpukitCSRPowersArgs;

/* the threads per row the kernel uses for tpr = 0: the smallest power of two, 1..32, at least a quarter of the mean
   row, nnz / m entries (about four entries a thread; measured best on the 5-point Laplacian) */
int GpukitCSRPowersThreadsPerRow(long long m, long long nnz);

/* One step: w1 (and v1) from x as above, by one kernel launch on stream, not synchronised. tpr: threads per row
   (1, 2, 4, 8, 16 or 32; each row is summed by a group of tpr lanes of a warp and reduced by shuffles), 0 chooses
   GpukitCSRPowersThreadsPerRow(a->m, a->nnz). Returns cudaErrorInvalidValue for bad arguments (missing arrays,
   outputs that are inputs, tpr not as above), otherwise cudaGetLastError() after the launch. */
cudaError_t GpukitCSRPowersCUDA(const GpukitCSRArgs *a, const GpukitCSRPowersArgs *e, const double *x, double *w1, int tpr, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
