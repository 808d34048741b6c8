/*
   Device kernel of the matrix powers kernel for CSR matrices (MATSEQAIJCUSPARSE, glue in gpukitcsrmpkcuda.cu): one
   step of the three-term basis recurrence, the product fused with the update and the Jacobi scaling, so that each new
   basis vector costs one pass over the matrix and the vectors. Pure CUDA with a C interface, no PETSc. The contract is
   the comment above GpukitMatMatrixPowersFn in gpukitmat.h; the reference is GpukitMatMatrixPowersReference() in
   gpukitmat.c.
*/
#pragma once

#include <cuda_runtime.h>
#include "gpukitpowers.h"

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

/* the epilogue of one step (src/sys/gpukitpowers.h), t = sum_k val_ik x_k; every array has m entries */
typedef GpukitPowersEpilogue GpukitCSRPowersArgs;

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
