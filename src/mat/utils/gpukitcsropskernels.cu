/*
   Device kernels on CSR matrices (gpukitcsropskernels.h). The transpose sorts the column indices of S with CUB's stable
   radix sort, carrying the entry numbers (the permutation), and rebuilds the row pointers of T from the sorted keys;
   every other kernel is one thread per entry. CUB's temporary storage comes from the library's stream-ordered pool.
*/
#include <climits>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/transform_iterator.h>
#include "gpukitpool.h"
#include "gpukitcsropskernels.h"

#define GPUKIT_CSR_TRY(call) \
  do { \
    cudaError_t err_ = (call); \
    if (err_ != cudaSuccess) return err_; \
  } while (0)

namespace
{

constexpr int THREADS = 256;

inline unsigned Blocks(long long work, int per)
{
  return (unsigned)((work + per - 1) / per);
}

/* rows[e] = the row of entry e, one warp per row */
__global__ void ExpandRowsKernel(int m, const int *__restrict__ ptr, int *__restrict__ rows)
{
  const int w = (int)((blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (w >= m) return;
  for (int e = ptr[w] + lane; e < ptr[w + 1]; e += 32) rows[e] = w;
}

__global__ void IotaKernel(int nnz, int *__restrict__ v)
{
  const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (e < nnz) v[e] = (int)e;
}

/* ptr (n+1) of the rows of sorted keys (nnz > 0): ptr[c] = first e with keys[e] >= c */
__global__ void RowPtrFromSortedKernel(int n, int nnz, const int *__restrict__ keys, int *__restrict__ ptr)
{
  const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (e > nnz) return;
  const int lo = e == 0 ? 0 : keys[e - 1] + 1, hi = e == nnz ? n : keys[e];
  for (int c = lo; c <= hi; c++) ptr[c] = (int)e;
}

__global__ void GatherTransposeKernel(int nnz, const int *__restrict__ perm, const int *__restrict__ rows, const double *__restrict__ sval, int *__restrict__ tcol, double *__restrict__ tval)
{
  const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (e >= nnz) return;
  tcol[e] = rows[perm[e]];
  if (tval) tval[e] = sval[perm[e]];
}

__global__ void PermuteKernel(int nnz, const int *__restrict__ perm, const double *__restrict__ in, double *__restrict__ out)
{
  const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (e < nnz) out[e] = in[perm[e]];
}

__global__ void ScatterKernel(int nnz, const int *__restrict__ perm, const double *__restrict__ in, double *__restrict__ out)
{
  const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (e < nnz) out[perm[e]] = in[e];
}

struct ToLongLong {
  __host__ __device__ long long operator()(int c) const { return c; }
};

} // namespace

extern "C" cudaError_t GpukitCSRTransposeCUDA(int m, int n, int nnz, const int *sptr, const int *scol, const double *sval, int *tptr, int *tcol, double *tval, int *perm, cudaStream_t stream)
{
  GpukitPoolTemp idx(stream), rows(stream), tmp(stream);
  size_t         bytes = 0;
  int            bits  = 1;

  if (m < 0 || n < 0 || nnz < 0 || !tptr || (nnz > 0 && (!sptr || !scol || !tcol || !perm))) return cudaErrorInvalidValue;
  if (nnz == 0) return cudaMemsetAsync(tptr, 0, ((size_t)n + 1) * sizeof(int), stream);
  if (m == 0) return cudaErrorInvalidValue; /* entries without rows */
  while (bits < 31 && (1 << bits) < n) bits++;
  GPUKIT_CSR_TRY(idx.Get((size_t)nnz * sizeof(int)));
  GPUKIT_CSR_TRY(rows.Get((size_t)nnz * sizeof(int)));
  IotaKernel<<<Blocks(nnz, THREADS), THREADS, 0, stream>>>(nnz, idx.As<int>());
  GPUKIT_CSR_TRY(cudaGetLastError());
  ExpandRowsKernel<<<Blocks(32LL * m, THREADS), THREADS, 0, stream>>>(m, sptr, rows.As<int>());
  GPUKIT_CSR_TRY(cudaGetLastError());
  /* stable: the entries of a column keep their increasing row order; the sorted keys go to tcol for a moment */
  {
    const unsigned *kin  = reinterpret_cast<const unsigned *>(scol); /* the columns are non-negative */
    unsigned       *kout = reinterpret_cast<unsigned *>(tcol);
    GPUKIT_CSR_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, kin, kout, idx.As<int>(), perm, nnz, 0, bits, stream));
    GPUKIT_CSR_TRY(tmp.Get(bytes));
    GPUKIT_CSR_TRY(cub::DeviceRadixSort::SortPairs(tmp.p, bytes, kin, kout, idx.As<int>(), perm, nnz, 0, bits, stream));
  }
  RowPtrFromSortedKernel<<<Blocks((long long)nnz + 1, THREADS), THREADS, 0, stream>>>(n, nnz, tcol, tptr);
  GPUKIT_CSR_TRY(cudaGetLastError());
  GatherTransposeKernel<<<Blocks(nnz, THREADS), THREADS, 0, stream>>>(nnz, perm, rows.As<int>(), sval, tcol, sval ? tval : nullptr);
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitCSRPermuteCUDA(int nnz, const int *perm, const double *in, double *out, cudaStream_t stream)
{
  if (nnz < 0) return cudaErrorInvalidValue;
  if (nnz == 0) return cudaSuccess;
  PermuteKernel<<<Blocks(nnz, THREADS), THREADS, 0, stream>>>(nnz, perm, in, out);
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitCSRScatterCUDA(int nnz, const int *perm, const double *in, double *out, cudaStream_t stream)
{
  if (nnz < 0) return cudaErrorInvalidValue;
  if (nnz == 0) return cudaSuccess;
  ScatterKernel<<<Blocks(nnz, THREADS), THREADS, 0, stream>>>(nnz, perm, in, out);
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitCSRScanCUDA(int n, const int *cnt, int *ptr, int *dtotal, int *htotal, cudaStream_t stream)
{
  GpukitPoolTemp tmp(stream);
  size_t         bytes = 0;

  if (n < 0 || !ptr) return cudaErrorInvalidValue;
  GPUKIT_CSR_TRY(cudaMemsetAsync(ptr, 0, sizeof(int), stream));
  if (htotal) { /* the total on the host first: 32-bit indices */
    GpukitPoolTemp sum(stream);
    long long      total = 0;
    auto           in    = thrust::make_transform_iterator(cnt, ToLongLong{});

    if (n > 0) {
      GPUKIT_CSR_TRY(sum.Get(sizeof(long long)));
      GPUKIT_CSR_TRY(cub::DeviceReduce::Sum(nullptr, bytes, in, sum.As<long long>(), n, stream));
      GPUKIT_CSR_TRY(tmp.Get(bytes));
      GPUKIT_CSR_TRY(cub::DeviceReduce::Sum(tmp.p, bytes, in, sum.As<long long>(), n, stream));
      GPUKIT_CSR_TRY(cudaMemcpyAsync(&total, sum.p, sizeof(total), cudaMemcpyDeviceToHost, stream));
      GPUKIT_CSR_TRY(cudaStreamSynchronize(stream));
      GPUKIT_CSR_TRY(tmp.Release());
      bytes = 0;
    }
    if (total > INT_MAX) return cudaErrorInvalidValue;
    *htotal = (int)total;
  }
  if (n > 0) {
    GPUKIT_CSR_TRY(cub::DeviceScan::InclusiveSum(nullptr, bytes, cnt, ptr + 1, n, stream));
    GPUKIT_CSR_TRY(tmp.Get(bytes));
    GPUKIT_CSR_TRY(cub::DeviceScan::InclusiveSum(tmp.p, bytes, cnt, ptr + 1, n, stream));
  }
  if (dtotal) GPUKIT_CSR_TRY(cudaMemcpyAsync(dtotal, ptr + n, sizeof(int), cudaMemcpyDeviceToDevice, stream));
  return cudaGetLastError();
}
