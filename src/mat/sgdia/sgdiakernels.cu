/*
   Device kernels of MATSGDIACUDA (see sgdiakernels.h). One thread per row: consecutive threads take consecutive
   rows, so the k*dof reads of v of a warp are coalesced, and the reads of x of a warp cover a few contiguous
   grid points. The host reference is SGDIAMultRegion() in sgdia.c; it sums the same terms, in an order that may differ in rounding.
*/
#include <climits>
#include "sgdiakernels.h"

/* the dofs with a kernel of their own; keep in step with GPUKIT_SGDIA_CUDA_MAX_DOF */
#define GPUKIT_SGDIA_CUDA_DOFS(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8)

namespace
{

/* Row index arithmetic in IT (int when the rows allow it: the divisions are much cheaper), array offsets in
   64 bits. DOF 0 is the generic kernel, which reads the dof from the arguments. */
template <typename IT, int DOF, bool ADD>
__global__ void __launch_bounds__(1024) SGDIAMultKernel(const GpukitSGDIAMultArgs a, const double *__restrict__ x, const double *y0, double *y)
{
  const int dof = DOF > 0 ? DOF : a.dof;
  const IT  i   = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x;

  if (i >= (IT)a.m) return;
  const IT        p      = i / dof;
  const IT        t      = p / a.xm[0];
  const int       l2     = (int)(t / a.xm[1]);
  const int       g[3]   = {a.xs[0] + (int)(p - t * a.xm[0]), a.xs[1] + (int)(t - (IT)l2 * a.xm[1]), a.xs[2] + l2};
  const long long xb     = (long long)(g[0] - a.lo[0]) + (long long)a.n[0] * ((long long)(g[1] - a.lo[1]) + (long long)a.n[1] * (long long)(g[2] - a.lo[2]));
  const long long stride = (long long)dof * a.m; /* from stencil point s to s+1 in v */
  const double   *vs     = a.v + i;
  double          sum    = ADD ? y0[i] : 0.0;
  bool            inside = true; /* the whole stencil lies in the domain: no checks per neighbour */

#pragma unroll
  for (int d = 0; d < 3; d++)
    if (!a.periodic[d] && (g[d] - a.sw[d] < 0 || g[d] + a.sw[d] >= a.M[d])) inside = false;
  for (int s = 0; s < a.k; s++, vs += stride) {
    if (!inside) { /* SGDIANeighbourInDomain() */
      bool in = true;
#pragma unroll
      for (int d = 0; d < 3; d++) {
        const int q = g[d] + __ldg(a.delta + 3 * s + d);
        if (!a.periodic[d] && (q < 0 || q >= a.M[d])) in = false;
      }
      if (!in) continue;
    }
    const double *xp = x + (xb + __ldg(a.off + s)) * dof;
    if constexpr (DOF > 0) {
#pragma unroll
      for (int c = 0; c < DOF; c++) sum += __ldg(vs + c * a.m) * __ldg(xp + c);
    } else {
      for (int c = 0; c < dof; c++) sum += __ldg(vs + c * a.m) * __ldg(xp + c);
    }
  }
  y[i] = sum;
}

template <typename IT>
__global__ void __launch_bounds__(1024) SGDIADiagonalKernel(IT m, int dof, int center, const double *__restrict__ v, double *__restrict__ d)
{
  const IT i = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x;

  if (i >= m) return;
  d[i] = __ldg(v + ((long long)center * dof + (long long)(i % dof)) * (long long)m + i);
}

template <typename IT, bool ADD>
void SGDIAMultLaunch(const GpukitSGDIAMultArgs &a, const double *x, const double *y0, double *y, unsigned grid, int block, cudaStream_t stream)
{
  switch (a.dof) {
#define GPUKIT_SGDIA_MULT_CASE(D) \
  case D: \
    SGDIAMultKernel<IT, D, ADD><<<grid, block, 0, stream>>>(a, x, y0, y); \
    break;
    GPUKIT_SGDIA_CUDA_DOFS(GPUKIT_SGDIA_MULT_CASE)
#undef GPUKIT_SGDIA_MULT_CASE
  default: /* any other dof */
    SGDIAMultKernel<IT, 0, ADD><<<grid, block, 0, stream>>>(a, x, y0, y);
  }
}

bool SGDIABlockValid(int block)
{
  return block >= 32 && block <= 1024 && block % 32 == 0;
}

/* ceil(m/block) blocks, or 0 when that exceeds the grid limit */
unsigned SGDIAGrid(long long m, int block)
{
  const long long grid = (m + block - 1) / block;
  return grid > INT_MAX ? 0u : (unsigned)grid;
}

/* int row arithmetic when every thread index of the grid fits */
bool SGDIASmallIndex(long long m, int block)
{
  return m <= (long long)INT_MAX - block;
}

} // namespace

cudaError_t GpukitSGDIAMultCUDA(const GpukitSGDIAMultArgs *a, const double *x, const double *y0, double *y, int block, cudaStream_t stream)
{
  unsigned grid;

  if (!a || a->m < 0 || a->dof < 1 || !SGDIABlockValid(block)) return cudaErrorInvalidValue;
  if (a->m == 0) return cudaSuccess;
  if (a->k < 1 || a->m % a->dof || !a->v || !a->delta || !a->off || !x || !y) return cudaErrorInvalidValue;
  for (int d = 0; d < 3; d++)
    if (a->xm[d] < 1 || a->n[d] < 1 || a->M[d] < 1 || a->sw[d] < 0) return cudaErrorInvalidValue;
  grid = SGDIAGrid(a->m, block);
  if (!grid) return cudaErrorInvalidConfiguration;
  if (SGDIASmallIndex(a->m, block)) {
    if (y0) SGDIAMultLaunch<int, true>(*a, x, y0, y, grid, block, stream);
    else SGDIAMultLaunch<int, false>(*a, x, y0, y, grid, block, stream);
  } else {
    if (y0) SGDIAMultLaunch<long long, true>(*a, x, y0, y, grid, block, stream);
    else SGDIAMultLaunch<long long, false>(*a, x, y0, y, grid, block, stream);
  }
  return cudaGetLastError();
}

cudaError_t GpukitSGDIAGetDiagonalCUDA(long long m, int dof, int center, const double *v, double *d, int block, cudaStream_t stream)
{
  unsigned grid;

  if (m < 0 || dof < 1 || center < 0 || !SGDIABlockValid(block)) return cudaErrorInvalidValue;
  if (m == 0) return cudaSuccess;
  if (m % dof || !v || !d) return cudaErrorInvalidValue;
  grid = SGDIAGrid(m, block);
  if (!grid) return cudaErrorInvalidConfiguration;
  if (SGDIASmallIndex(m, block)) SGDIADiagonalKernel<int><<<grid, block, 0, stream>>>((int)m, dof, center, v, d);
  else SGDIADiagonalKernel<long long><<<grid, block, 0, stream>>>(m, dof, center, v, d);
  return cudaGetLastError();
}
