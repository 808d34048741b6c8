/*
   Device kernel of KSPCACG: the local part of every inner product of one outer iteration (the Gram matrices) in
   one pass over the vectors. Pure CUDA with a C interface, no PETSc. The host reference is CACGGramHost() in
   cacg.c, which computes the same sums on the CPU (in another order); the PETSc glue is cacgcuda.cu.
*/
#pragma once

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* at most 2 (2s+1) basis vectors and x for s <= 16; at most two triangles of (2s+1)^2, 2s+1 column norms, the
   symmetry pair and x.x (GPUKIT_CACG_MAX_PAIRS of cacgimpl.h) */
#define GPUKIT_CACG_GRAM_MAX_VECS  67
#define GPUKIT_CACG_GRAM_MAX_PAIRS 1157

/* passed by value to the kernel (kernel parameters, under 4 KB) */
typedef struct {
  long long     n;                                  /* rows of every vector */
  int           nvec, npairs;                       /* vectors, inner products */
  const double *v[GPUKIT_CACG_GRAM_MAX_VECS];       /* device pointers of the vectors */
  unsigned char a[GPUKIT_CACG_GRAM_MAX_PAIRS];      /* inner product p is v[a[p]] . v[b[p]] */
  unsigned char b[GPUKIT_CACG_GRAM_MAX_PAIRS];
} GpukitCACGGramArgs;

/* doubles of device workspace GpukitCACGGramCUDA() needs for these arguments */
long long GpukitCACGGramWorkSize(const GpukitCACGGramArgs *a);

/* result[p] = v[a[p]] . v[b[p]] for p < npairs, into host memory; work is device memory of
   GpukitCACGGramWorkSize() doubles. Each vector is read once from device memory: blocks load tiles of all vectors
   into shared memory and accumulate every product of the tile; a second kernel sums the blocks' partial sums; one
   device-to-host copy, after which the stream is synchronised. Returns cudaErrorInvalidValue for bad arguments. */
cudaError_t GpukitCACGGramCUDA(const GpukitCACGGramArgs *a, double *work, double *result, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
