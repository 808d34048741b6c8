/*
   Device kernel of KSPCACG: the local part of every inner product of one outer iteration (the Gram matrices) in
   one pass over the vectors. Pure CUDA with a C interface, no PETSc. The host reference is CACGGramHost() in
   cacggram.c, which computes the same sums on the CPU (in another order); the PETSc glue is cacgcuda.cu.
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

/* the update at the end of an outer iteration, passed by value (under 2 KB): for each row i
     x[i] += sum_j xc[j] y[j][i];  un = sum_j pc[j] w[j][i];  rn = sum_j zc[j] w[j][i];  un[i] = un;  rn[i] = rn;
     and when dinv != NULL (Jacobi):  pn[i] = dinv[i] un;  zn[i] = dinv[i] rn
   m <= GPUKIT_CACG_UPDATE_MAX_M (2 GPUKIT_CACG_MAX_S + 1 of cacgimpl.h). Without dinv (no preconditioner) y == w
   may be the same arrays and pn, zn are not used. With dinv and y[0] == NULL (the lean basis: Y = dinv .* W, not
   stored) x[i] += dinv[i] sum_j xc[j] w[j][i]. The outputs must not overlap the inputs. */
#define GPUKIT_CACG_UPDATE_MAX_M 33

typedef struct {
  long long     n; /* rows */
  int           m; /* basis vectors */
  const double *y[GPUKIT_CACG_UPDATE_MAX_M], *w[GPUKIT_CACG_UPDATE_MAX_M];
  const double *dinv;               /* NULL: no preconditioner */
  double       *x, *un, *rn, *pn, *zn; /* pn, zn: only with dinv */
  double        xc[GPUKIT_CACG_UPDATE_MAX_M], pc[GPUKIT_CACG_UPDATE_MAX_M], zc[GPUKIT_CACG_UPDATE_MAX_M];
} GpukitCACGUpdateArgs;

/* One pass over the basis: every y[j] and w[j] read once, x read and written, un, rn (pn, zn) written once. Launched
   on stream, not synchronised. Returns cudaErrorInvalidValue for bad arguments. */
cudaError_t GpukitCACGUpdateCUDA(const GpukitCACGUpdateArgs *a, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
