/* Device kernels of KSPCACG: the Gram matrices and the fused update; see cacgkernels.h. Host references:
   CACGGramHost() in cacggram.c and the VecMAXPY/PCApply update of CACGUpdate() in cacgsolve.c. */
#include "cacgkernels.h"

namespace
{

constexpr int kTile    = 64;                                                   /* rows per tile */
constexpr int kStride  = kTile + 1;                                            /* padded: pairs read different banks */
constexpr int kThreads = 256;                                                  /* threads of the partial-sum kernel */
constexpr int kPer     = (GPUKIT_CACG_GRAM_MAX_PAIRS + kThreads - 1) / kThreads; /* products per thread */
constexpr int kMaxBlocks = 1024;

int GramBlocks(long long n)
{
  long long tiles = (n + kTile - 1) / kTile;
  return (int)(tiles < kMaxBlocks ? (tiles > 0 ? tiles : 1) : kMaxBlocks);
}

/* partial[blk * npairs + p]: the sum of v[a[p]][r] v[b[p]][r] over the rows of the tiles of block blk */
__global__ void __launch_bounds__(kThreads) GramPartialKernel(const GpukitCACGGramArgs g, double *partial)
{
  extern __shared__ double sh[]; /* nvec tiles of kStride doubles */
  double acc[kPer];

#pragma unroll
  for (int q = 0; q < kPer; q++) acc[q] = 0.0;
  for (long long t0 = (long long)blockIdx.x * kTile; t0 < g.n; t0 += (long long)gridDim.x * kTile) {
    for (int idx = threadIdx.x; idx < g.nvec * kTile; idx += blockDim.x) {
      const int       v = idx / kTile, k = idx - v * kTile;
      const long long r = t0 + k;
      sh[v * kStride + k] = r < g.n ? g.v[v][r] : 0.0;
    }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < kPer; q++) {
      const int p = threadIdx.x + q * kThreads;
      if (p < g.npairs) {
        const double *x = sh + g.a[p] * kStride, *y = sh + g.b[p] * kStride;
        double        s = 0.0;
#pragma unroll 8
        for (int k = 0; k < kTile; k++) s += x[k] * y[k];
        acc[q] += s;
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int q = 0; q < kPer; q++) {
    const int p = threadIdx.x + q * kThreads;
    if (p < g.npairs) partial[(long long)blockIdx.x * g.npairs + p] = acc[q];
  }
}

/* out[p] = sum over the nblocks partial sums of product p: one block of 128 threads per product */
__global__ void __launch_bounds__(128) GramSumKernel(int npairs, int nblocks, const double *partial, double *out)
{
  __shared__ double red[128];
  const int         p = blockIdx.x;
  double            s = 0.0;

  for (int b = threadIdx.x; b < nblocks; b += blockDim.x) s += partial[(long long)b * npairs + p];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) red[threadIdx.x] += red[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[p] = red[0];
}

/* one thread per row (grid-stride); the coefficients and pointers are kernel parameters (constant bank) */
__global__ void __launch_bounds__(256) UpdateKernel(const GpukitCACGUpdateArgs g)
{
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < g.n; i += (long long)gridDim.x * blockDim.x) {
    double xs = 0.0, us = 0.0, rs = 0.0;
    if (g.dinv && !g.y[0]) { /* the lean basis: Y = dinv .* W */
      for (int j = 0; j < g.m; j++) {
        const double wv = g.w[j][i];
        xs += g.xc[j] * wv;
        us += g.pc[j] * wv;
        rs += g.zc[j] * wv;
      }
      const double d = g.dinv[i];
      xs *= d;
      g.pn[i] = d * us;
      g.zn[i] = d * rs;
    } else if (g.dinv) {
      for (int j = 0; j < g.m; j++) {
        const double yv = g.y[j][i], wv = g.w[j][i];
        xs += g.xc[j] * yv;
        us += g.pc[j] * wv;
        rs += g.zc[j] * wv;
      }
      const double d = g.dinv[i];
      g.pn[i]        = d * us;
      g.zn[i]        = d * rs;
    } else {
      for (int j = 0; j < g.m; j++) {
        const double wv = g.w[j][i];
        xs += g.xc[j] * wv;
        us += g.pc[j] * wv;
        rs += g.zc[j] * wv;
      }
    }
    g.x[i] += xs;
    g.un[i] = us;
    g.rn[i] = rs;
  }
}

} // namespace

cudaError_t GpukitCACGUpdateCUDA(const GpukitCACGUpdateArgs *a, cudaStream_t stream)
{
  const int threads = 256;
  long long blocks;

  if (!a || a->n < 0 || a->m < 1 || a->m > GPUKIT_CACG_UPDATE_MAX_M) return cudaErrorInvalidValue;
  if (a->n == 0) return cudaSuccess;
  if (!a->x || !a->un || !a->rn || (a->dinv && (!a->pn || !a->zn))) return cudaErrorInvalidValue;
  for (int j = 0; j < a->m; j++)
    if (!a->w[j] || (a->dinv && a->y[0] && !a->y[j])) return cudaErrorInvalidValue;
  if (!a->dinv)
    for (int j = 0; j < a->m; j++)
      if (a->y[j] && a->y[j] != a->w[j]) return cudaErrorInvalidValue; /* without a preconditioner Y == W */
  blocks = (a->n + threads - 1) / threads;
  if (blocks > 65535L * 16) blocks = 65535L * 16; /* grid-stride beyond */
  UpdateKernel<<<(unsigned)blocks, threads, 0, stream>>>(*a);
  return cudaGetLastError();
}

long long GpukitCACGGramWorkSize(const GpukitCACGGramArgs *a)
{
  if (!a) return 0;
  return (long long)(GramBlocks(a->n) + 1) * a->npairs;
}

cudaError_t GpukitCACGGramCUDA(const GpukitCACGGramArgs *a, double *work, double *result, cudaStream_t stream)
{
  int         nblocks;
  size_t      shmem;
  double     *out;
  cudaError_t err;

  if (!a || a->n < 0 || a->nvec < 1 || a->nvec > GPUKIT_CACG_GRAM_MAX_VECS || a->npairs < 0 || a->npairs > GPUKIT_CACG_GRAM_MAX_PAIRS || !result) return cudaErrorInvalidValue;
  if (a->npairs == 0) return cudaSuccess;
  if (!work) return cudaErrorInvalidValue;
  for (int p = 0; p < a->npairs; p++)
    if (a->a[p] >= a->nvec || a->b[p] >= a->nvec) return cudaErrorInvalidValue;
  for (int v = 0; v < a->nvec; v++)
    if (a->n > 0 && !a->v[v]) return cudaErrorInvalidValue;
  nblocks = GramBlocks(a->n);
  shmem   = (size_t)a->nvec * kStride * sizeof(double); /* at most 67 x 65 x 8 = 34840 bytes */
  out     = work + (long long)nblocks * a->npairs;
  GramPartialKernel<<<nblocks, kThreads, shmem, stream>>>(*a, work);
  if ((err = cudaGetLastError()) != cudaSuccess) return err;
  GramSumKernel<<<a->npairs, 128, 0, stream>>>(a->npairs, nblocks, work, out);
  if ((err = cudaGetLastError()) != cudaSuccess) return err;
  if ((err = cudaMemcpyAsync(result, out, (size_t)a->npairs * sizeof(double), cudaMemcpyDeviceToHost, stream)) != cudaSuccess) return err;
  return cudaStreamSynchronize(stream);
}
