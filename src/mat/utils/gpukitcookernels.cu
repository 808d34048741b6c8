/*
   The COO assembly kernel (interface and contract in gpukitcookernels.h). One thread per unique slot; consecutive
   threads take consecutive slots, which the glue sorted, so the writes to v are mostly ordered.
*/
#include <climits>
#include "gpukitcookernels.h"

namespace
{

template <typename IT, bool ADD>
__global__ void __launch_bounds__(1024) GpukitCOOSetValuesKernel(IT nu, const long long *__restrict__ slot, const long long *__restrict__ jmap, const long long *__restrict__ perm, long long nlocal, const double *__restrict__ vlocal, const double *__restrict__ vrecv, double *__restrict__ v)
{
  const IT u = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x;

  if (u >= nu) return;
  const long long tb = __ldg(jmap + u), te = __ldg(jmap + u + 1);
  double          sum = 0.0;
  for (long long t = tb; t < te; t++) {
    const long long q = __ldg(perm + t);
    sum += q < nlocal ? __ldg(vlocal + q) : __ldg(vrecv + (q - nlocal));
  }
  double *e = v + __ldg(slot + u);
  *e        = ADD ? *e + sum : sum;
}

template <typename IT>
void GpukitCOOSetValuesLaunch(IT nu, const long long *slot, const long long *jmap, const long long *perm, long long nlocal, const double *vlocal, const double *vrecv, int add, double *v, unsigned grid, int block, cudaStream_t stream)
{
  if (add) GpukitCOOSetValuesKernel<IT, true><<<grid, block, 0, stream>>>(nu, slot, jmap, perm, nlocal, vlocal, vrecv, v);
  else GpukitCOOSetValuesKernel<IT, false><<<grid, block, 0, stream>>>(nu, slot, jmap, perm, nlocal, vlocal, vrecv, v);
}

} // namespace

cudaError_t GpukitCOOSetValuesCUDA(long long nu, const long long *slot, const long long *jmap, const long long *perm, long long nlocal, const double *vlocal, const double *vrecv, int add, double *v, int block, cudaStream_t stream)
{
  long long grid;

  if (nu < 0 || nlocal < 0 || block < 32 || block > 1024 || block % 32) return cudaErrorInvalidValue;
  if (nu == 0) return cudaSuccess;
  if (!slot || !jmap || !perm || !v || (nlocal > 0 && !vlocal)) return cudaErrorInvalidValue;
  grid = (nu + block - 1) / block;
  if (grid > INT_MAX) return cudaErrorInvalidConfiguration;
  if (nu + block <= INT_MAX) GpukitCOOSetValuesLaunch<int>((int)nu, slot, jmap, perm, nlocal, vlocal, vrecv, add, v, (unsigned)grid, block, stream);
  else GpukitCOOSetValuesLaunch<long long>(nu, slot, jmap, perm, nlocal, vlocal, vrecv, add, v, (unsigned)grid, block, stream);
  return cudaGetLastError();
}
