/*
   Device kernels of the same-host halo exchange through CUDA IPC: see gpukitipckernels.h.
*/
#include "gpukitipckernels.h"

/* one thread per word of the output */
template <typename T>
__global__ static void IPCGatherKernel(long long n, int unit, const long long *__restrict__ src, const long long *__restrict__ dst, const int *__restrict__ slot, void *const *__restrict__ bases, const void *base, void *out)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n * unit) return;
  const long long i = e / unit;
  const int       c = (int)(e - i * unit);
  const T        *b = (const T *)(slot ? bases[slot[i]] : base);
  const long long o = dst ? dst[i] : i;

  ((T *)out)[o * unit + c] = b[src[i] * unit + c];
}

template <typename T>
static cudaError_t IPCGatherLaunch(const GpukitIPCGatherArgs *a, int block, cudaStream_t stream)
{
  const long long nw   = a->n * a->unit;
  const long long grid = (nw + block - 1) / block;

  if (grid > 2147483647LL) return cudaErrorInvalidValue;
  IPCGatherKernel<T><<<(unsigned)grid, block, 0, stream>>>(a->n, a->unit, a->src, a->dst, a->slot, a->bases, a->base, a->out);
  return cudaGetLastError();
}

cudaError_t GpukitIPCGatherCUDA(const GpukitIPCGatherArgs *a, int block, cudaStream_t stream)
{
  if (!a || a->n < 0 || a->unit < 1 || block < 32 || block > 1024 || block % 32) return cudaErrorInvalidValue;
  if (a->n == 0) return cudaSuccess;
  if (!a->src || !a->out || (a->slot ? !a->bases : !a->base)) return cudaErrorInvalidValue;
  switch (a->wsize) {
  case 4:
    return IPCGatherLaunch<unsigned int>(a, block, stream);
  case 8:
    return IPCGatherLaunch<unsigned long long>(a, block, stream);
  case 16:
    return IPCGatherLaunch<ulonglong2>(a, block, stream);
  default:
    return cudaErrorInvalidValue;
  }
}
