/*
   Device kernel of KSPCACG for the Gram matrices of a lean basis: m vectors W = [w_0 .. w_{m-1}] (m = 2s+1), a
   diagonal weight d (Jacobi's inverse diagonal) and optionally x, in one pass over the vectors:

     G = W^T D W,   G2 = W^T D^2 W (optional),   G1 = W^T W (optional),   x.x (optional)

   Pure CUDA with a C interface, no PETSc. The products run on the FP64 tensor cores (mma.sync m8n8k4 or m16n8k16:
   every product is an IEEE double FMA, only the order of the sums differs from a loop over the rows); see
   cacggramkernels.cu for the design. Test: tests/gpu/cacg_gram_cuda.c.
*/
#pragma once

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPUKIT_CACG_GRAMW_MAX_M 33 /* 2 s + 1 for s <= 16 */

/* the tensor-core instruction (a tuning choice; every variant gives the same sums up to rounding). Below 16 basis
   vectors (one block of 8, plus one vector for m = 9) every variant uses m8n8k4. */
#define GPUKIT_CACG_GRAMW_DEFAULT   0 /* m16n8k16 (Hopper's DMMA.16x8x16) */
#define GPUKIT_CACG_GRAMW_M8N8K4    1 /* 8 x 8 tiles for every m */
#define GPUKIT_CACG_GRAMW_M16N8K8   2 /* 16 x 8 tiles, 8 rows per instruction */
#define GPUKIT_CACG_GRAMW_M16N8K16  3 /* 16 x 8 tiles, 16 rows per instruction (m16n8k8 where that would spill) */

typedef struct {
  long long     n;                          /* rows of every vector (may be 0) */
  int           m;                          /* basis vectors, 1..GPUKIT_CACG_GRAMW_MAX_M */
  const double *w[GPUKIT_CACG_GRAMW_MAX_M]; /* device arrays, 8-byte aligned (any offset into an allocation) */
  const double *d;                          /* device weights, or NULL: d = 1 everywhere */
  const double *x;                          /* device, or NULL: no x.x */
  int           gd2;                        /* 1: also W^T D^2 W (needs d); 0 or 1 */
  int           g1;                         /* 1: also W^T W (needs d); 0 or 1 */
  int           variant;                    /* GPUKIT_CACG_GRAMW_*: 0 (a zeroed struct) is the default */
} GpukitCACGGramWArgs;

/* doubles of result: m*m*(1+gd2+g1) + (x != NULL); 0 for a NULL a */
long long GpukitCACGGramWResultSize(const GpukitCACGGramWArgs *a);

/* doubles of device workspace GpukitCACGGramWCUDA() needs for these arguments (0 when n <= 0); it depends only on
   n, m, gd2, g1, not on the device */
long long GpukitCACGGramWWorkSize(const GpukitCACGGramWArgs *a);

/* result (HOST memory, GpukitCACGGramWResultSize() doubles): the full symmetric row-major m x m matrices one after
   the other, W^T D W, then W^T D^2 W (gd2), then W^T W (g1), then x.x (x). Every vector is read once from device
   memory by one kernel; a second kernel adds the blocks' partial sums in a fixed order (no atomics: the same inputs
   on the same device give bit-identical results, and each matrix is exactly symmetric); one device-to-host copy,
   after which the stream is synchronised. work: device memory of GpukitCACGGramWWorkSize() doubles (unused when
   n == 0: then result is zeros). Returns cudaErrorInvalidValue for bad arguments (NULL a or result, n < 0, m out of
   range, gd2/g1 not 0 or 1, gd2/g1 without d, a NULL or misaligned array or NULL work with n > 0, unknown variant),
   before touching the device. */
cudaError_t GpukitCACGGramWCUDA(const GpukitCACGGramWArgs *a, double *work, double *result, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
