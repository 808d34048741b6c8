/*
   MATSEQSGDIACUDA's device CSR (interface and contract in sgdiacsrkernels.h): count, scan (CUB), fill. One thread per
   row in the count and the fill; consecutive threads take consecutive rows, so the reads of a stored column of v are
   coalesced.
*/
#include <climits>
#include <cub/cub.cuh>
#include "sgdiacsrkernels.h"

namespace
{

bool CSRBlockValid(int block)
{
  return block >= 32 && block <= 1024 && block % 32 == 0;
}

/* the arguments the kernels read, checked; the grid of one thread per row */
bool CSRArgsValid(const GpukitSGDIAMultArgs *a, int block, unsigned *grid)
{
  long long np = 1;

  if (!a || a->m < 0 || a->dof < 1 || a->k < 1 || !CSRBlockValid(block)) return false;
  for (int d = 0; d < 3; d++) {
    if (a->M[d] < 1 || a->xs[d] != 0 || a->xm[d] != a->M[d] || a->sw[d] < 0) return false;
    np *= a->xm[d];
  }
  if (a->m != np * a->dof || a->m + block > INT_MAX) return false;
  if (a->m > 0 && (!a->v || !a->delta)) return false;
  *grid = (unsigned)((a->m + block - 1) / block);
  return true;
}

/* Neighbour s of the grid point g: its global point index, or -1 when it lies outside a non-periodic domain or another
   stencil point reaches it canonically (the host's SGDIANeighbourInDomain() && SGDIACanonical()); *wrapped is set
   when a periodic dimension wrapped it (then stencil order is not column order) */
__device__ __forceinline__ long long CSRNeighbour(const GpukitSGDIAMultArgs &a, const int g[3], int s, bool *wrapped)
{
  long long q[3];

  for (int d = 0; d < 3; d++) {
    const int e = __ldg(a.delta + 3 * s + d);
    q[d]        = (long long)g[d] + e;
    if (a.periodic[d]) {
      int rep = ((e % a.M[d]) + a.M[d]) % a.M[d]; /* the representative nearest zero, positive on ties */
      if (rep > a.sw[d]) rep -= a.M[d];
      if (rep != e) return -1;
      if (q[d] < 0 || q[d] >= a.M[d]) {
        q[d]     = ((q[d] % a.M[d]) + a.M[d]) % a.M[d];
        *wrapped = true;
      }
    } else if (q[d] < 0 || q[d] >= a.M[d]) return -1;
  }
  return q[0] + (long long)a.M[0] * (q[1] + (long long)a.M[1] * q[2]);
}

__device__ __forceinline__ void CSRPoint(const GpukitSGDIAMultArgs &a, int i, int g[3])
{
  const int p = i / a.dof;

  g[0] = p % a.xm[0];
  g[1] = (p / a.xm[0]) % a.xm[1];
  g[2] = p / (a.xm[0] * a.xm[1]);
}

__global__ void __launch_bounds__(1024) SGDIACSRCountKernel(const GpukitSGDIAMultArgs a, int *__restrict__ counts)
{
  const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  int       g[3], n = 0;
  bool      wrapped = false;

  if (i >= a.m) return;
  CSRPoint(a, i, g);
  for (int s = 0; s < a.k; s++)
    if (CSRNeighbour(a, g, s, &wrapped) >= 0) n++;
  counts[i] = n * a.dof;
}

__global__ void __launch_bounds__(1024) SGDIACSRFillKernel(const GpukitSGDIAMultArgs a, const int *__restrict__ rowptr, int *__restrict__ colidx, double *__restrict__ val)
{
  const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  int       g[3], t, t0;
  bool      wrapped = false;

  if (i >= a.m) return;
  CSRPoint(a, i, g);
  t0 = t = __ldg(rowptr + i);
  for (int s = 0; s < a.k; s++) {
    const long long q = CSRNeighbour(a, g, s, &wrapped);
    if (q < 0) continue;
    for (int c = 0; c < a.dof; c++, t++) {
      colidx[t] = (int)(q * a.dof + c);
      val[t]    = __ldg(a.v + ((long long)s * a.dof + c) * a.m + i);
    }
  }
  if (!wrapped) return;
  for (int u = t0 + 1; u < t; u++) { /* insertion sort by column: only the wrapped neighbours are out of place */
    const int    cu = colidx[u];
    const double vu = val[u];
    int          w  = u - 1;
    for (; w >= t0 && colidx[w] > cu; w--) {
      colidx[w + 1] = colidx[w];
      val[w + 1]    = val[w];
    }
    colidx[w + 1] = cu;
    val[w + 1]    = vu;
  }
}

} // namespace

cudaError_t GpukitSGDIACSRCountCUDA(const GpukitSGDIAMultArgs *a, int *counts, int block, cudaStream_t stream)
{
  unsigned grid;

  if (!CSRArgsValid(a, block, &grid)) return cudaErrorInvalidValue;
  if (a->m == 0) return cudaSuccess;
  if (!counts) return cudaErrorInvalidValue;
  SGDIACSRCountKernel<<<grid, block, 0, stream>>>(*a, counts);
  return cudaGetLastError();
}

cudaError_t GpukitSGDIACSRScanCUDA(long long m, const int *counts, int *rowptr, void *work, size_t *workbytes, cudaStream_t stream)
{
  cudaError_t err;

  if (m < 0 || m >= INT_MAX || !workbytes) return cudaErrorInvalidValue;
  if (!work) {
    *workbytes = 0;
    if (m == 0) return cudaSuccess;
    return cub::DeviceScan::InclusiveSum(NULL, *workbytes, counts, rowptr, (int)m, stream);
  }
  if (!rowptr) return cudaErrorInvalidValue;
  err = cudaMemsetAsync(rowptr, 0, sizeof(int), stream);
  if (err != cudaSuccess || m == 0) return err;
  if (!counts) return cudaErrorInvalidValue;
  err = cub::DeviceScan::InclusiveSum(work, *workbytes, counts, rowptr + 1, (int)m, stream);
  if (err != cudaSuccess) return err;
  return cudaGetLastError();
}

cudaError_t GpukitSGDIACSRFillCUDA(const GpukitSGDIAMultArgs *a, const int *rowptr, int *colidx, double *val, int block, cudaStream_t stream)
{
  unsigned grid;

  if (!CSRArgsValid(a, block, &grid)) return cudaErrorInvalidValue;
  if (a->m == 0) return cudaSuccess;
  if (!rowptr || !colidx || !val) return cudaErrorInvalidValue;
  SGDIACSRFillKernel<<<grid, block, 0, stream>>>(*a, rowptr, colidx, val);
  return cudaGetLastError();
}
