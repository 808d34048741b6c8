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
   64 bits. DOF 0 is the generic code, which reads the dof from the arguments. */

/* the grid point of owned point p, its offset in the x box, and whether its whole stencil lies in the domain */
template <typename IT>
__device__ __forceinline__ void SGDIAPoint(const GpukitSGDIAMultArgs &a, IT p, int g[3], long long *xb, bool *inside)
{
  const IT  t  = p / a.xm[0];
  const int l2 = (int)(t / a.xm[1]);

  g[0]    = a.xs[0] + (int)(p - t * a.xm[0]);
  g[1]    = a.xs[1] + (int)(t - (IT)l2 * a.xm[1]);
  g[2]    = a.xs[2] + l2;
  *xb     = (long long)(g[0] - a.lo[0]) + (long long)a.n[0] * ((long long)(g[1] - a.lo[1]) + (long long)a.n[1] * (long long)(g[2] - a.lo[2]));
  *inside = true;
#pragma unroll
  for (int d = 0; d < 3; d++)
    if (!a.periodic[d] && (g[d] - a.sw[d] < 0 || g[d] + a.sw[d] >= a.M[d])) *inside = false;
}

/* SGDIANeighbourInDomain(): does stencil point s of grid point g stay in the domain */
__device__ __forceinline__ bool SGDIANeighbourIn(const GpukitSGDIAMultArgs &a, const int g[3], int s)
{
  bool in = true;
#pragma unroll
  for (int d = 0; d < 3; d++) {
    const int q = g[d] + __ldg(a.delta + 3 * s + d);
    if (!a.periodic[d] && (q < 0 || q >= a.M[d])) in = false;
  }
  return in;
}

/* row i of A x; with XS, of A (xs .* x) (xs in the layout of x: KSPCACG's lean basis, see GpukitSGDIAPowersCUDA()) */
template <typename IT, int DOF, bool XS = false>
__device__ __forceinline__ double SGDIARow(const GpukitSGDIAMultArgs &a, const double *__restrict__ x, IT i, const double *__restrict__ xs = nullptr)
{
  const int       dof    = DOF > 0 ? DOF : a.dof;
  const long long stride = (long long)dof * a.m; /* from stencil point s to s+1 in v */
  const double   *vs     = a.v + i;
  double          sum    = 0.0;
  int             g[3];
  long long       xb;
  bool            inside; /* the whole stencil lies in the domain: no checks per neighbour */

  SGDIAPoint<IT>(a, i / dof, g, &xb, &inside);
  for (int s = 0; s < a.k; s++, vs += stride) {
    if (!inside && !SGDIANeighbourIn(a, g, s)) continue;
    const long long xo = (xb + __ldg(a.off + s)) * dof;
    const double   *xp = x + xo;
    if constexpr (DOF > 0) {
#pragma unroll
      for (int c = 0; c < DOF; c++) sum += __ldg(vs + c * a.m) * (XS ? __ldg(xs + xo + c) * __ldg(xp + c) : __ldg(xp + c));
    } else {
      for (int c = 0; c < dof; c++) sum += __ldg(vs + c * a.m) * (XS ? __ldg(xs + xo + c) * __ldg(xp + c) : __ldg(xp + c));
    }
  }
  return sum;
}

/* the rows a product computes: all (on == 0), or those whose grid point lies in [lo, hi) (the interior half of an
   overlapped MPI product) */
struct SGDIARowBox {
  int on;
  int lo[3], hi[3];
};

/* is row i's grid point outside the box (so that the thread has nothing to do) */
template <typename IT>
__device__ __forceinline__ bool SGDIASkipRow(const GpukitSGDIAMultArgs &a, const SGDIARowBox &box, IT i, int dof)
{
  if (!box.on) return false;
  const IT  p  = i / dof;
  const IT  t  = p / a.xm[0];
  const int l2 = (int)(t / a.xm[1]);
  const int g0 = a.xs[0] + (int)(p - t * a.xm[0]), g1 = a.xs[1] + (int)(t - (IT)l2 * a.xm[1]), g2 = a.xs[2] + l2;
  return g0 < box.lo[0] || g0 >= box.hi[0] || g1 < box.lo[1] || g1 >= box.hi[1] || g2 < box.lo[2] || g2 >= box.hi[2];
}

/* variant 0: one thread per row; consecutive threads take consecutive rows, so the reads of v are coalesced */
template <typename IT, int DOF, bool ADD>
__global__ void __launch_bounds__(1024) SGDIAMultKernel(const GpukitSGDIAMultArgs a, const SGDIARowBox box, const double *__restrict__ x, const double *y0, double *y)
{
  const IT i = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x;

  if (i >= (IT)a.m || SGDIASkipRow<IT>(a, box, i, DOF > 0 ? DOF : a.dof)) return;
  const double sum = SGDIARow<IT, DOF>(a, x, i);
  y[i]             = ADD ? y0[i] + sum : sum;
}

/* variant 1: two consecutive rows per thread, v read in 16-byte loads (needs an even number of rows m); with an
   even dof both rows belong to one grid point and share every load of x */
template <typename IT, int DOF, bool ADD>
__global__ void __launch_bounds__(1024) SGDIAMult2Kernel(const GpukitSGDIAMultArgs a, const double *__restrict__ x, const double *y0, double *y)
{
  const int dof = DOF > 0 ? DOF : a.dof;
  const IT  i   = 2 * ((IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x);

  if (i >= (IT)a.m) return;
  int       g0[3], g1[3];
  long long xb0, xb1;
  bool      in0, in1;
  SGDIAPoint<IT>(a, i / dof, g0, &xb0, &in0);
  SGDIAPoint<IT>(a, (i + 1) / dof, g1, &xb1, &in1);
  double2 sum = make_double2(0.0, 0.0);
  if (in0 && in1) {
    const long long stride = (long long)dof * a.m;
    const double   *vs     = a.v + i;
    for (int s = 0; s < a.k; s++, vs += stride) {
      const long long o   = __ldg(a.off + s);
      const double   *xp0 = x + (xb0 + o) * dof, *xp1 = x + (xb1 + o) * dof;
      if constexpr (DOF > 0) {
#pragma unroll
        for (int c = 0; c < DOF; c++) {
          const double2 w  = __ldg((const double2 *)(vs + c * a.m));
          const double  x0 = __ldg(xp0 + c), x1 = DOF % 2 == 0 ? x0 : __ldg(xp1 + c);
          sum.x += w.x * x0;
          sum.y += w.y * x1;
        }
      } else {
        for (int c = 0; c < dof; c++) {
          const double2 w = __ldg((const double2 *)(vs + c * a.m));
          sum.x += w.x * __ldg(xp0 + c);
          sum.y += w.y * __ldg(xp1 + c);
        }
      }
    }
  } else { /* near a non-periodic boundary */
    sum.x = SGDIARow<IT, DOF>(a, x, i);
    sum.y = SGDIARow<IT, DOF>(a, x, i + 1);
  }
  if (ADD) {
    const double2 b = *(const double2 *)(y0 + i);
    sum.x += b.x;
    sum.y += b.y;
  }
  *(double2 *)(y + i) = sum;
}

/* SGDIANeighbourIn() with the stencil offsets from the kernel arguments (s a compile-time index) */
__device__ __forceinline__ bool SGDIANeighbourInByValue(const GpukitSGDIAMultArgs &a, const int g[3], int s)
{
  bool in = true;
#pragma unroll
  for (int d = 0; d < 3; d++) {
    const int q = g[d] + a.pdelta[3 * s + d];
    if (!a.periodic[d] && (q < 0 || q >= a.M[d])) in = false;
  }
  return in;
}

/* variant 2 (the row sum here, the kernel below it): one thread per row, specialised on the stencil size K as well as the dof: the stencil loop is unrolled
   with the offsets as compile-time indices into the kernel arguments, and the K*DOF loads of v (streamed: read
   once, so they should not evict x from L1) are issued before the first use. A row whose stencil leaves the domain
   runs the same code with each neighbour's x load and product predicated on its being in the domain (the terms and
   their order are those of SGDIARow()), so a warp holding a boundary row does not wait for a serial loop.
   Measured on an H200 outside PETSc (scratch harness, best block size of each), 27-point box 128^3 / 7-point 256^3 /
   7-point 128^3 dof 3, ms: this kernel (up to 64 registers) 0.129 / 0.280 / 0.271; boundary rows in the generic
   row code instead (32 registers) 0.138 / 0.290 / 0.274; that with an unrolled branch per neighbour for them 0.132 /
   0.292; this kernel held to 48 registers (spills) 0.148 / 0.280 / 0.294, to 32 registers 0.212. Earlier, on the
   generic-boundary form: __ldg for v 0.142, loads interleaved with the products 0.142, the generic row kernel 0.144. */
template <typename IT, int DOF, int K, bool XS = false>
__device__ __forceinline__ double SGDIAStencilRow(const GpukitSGDIAMultArgs &a, const double *__restrict__ x, IT i, const double *__restrict__ xs = nullptr)
{
  int       g[3];
  long long xb;
  bool      inside;
  double    sum = 0.0;

  SGDIAPoint<IT>(a, i / DOF, g, &xb, &inside);
  const long long stride = (long long)DOF * a.m;
  const double   *vs     = a.v + i;
  double          w[K * DOF];
#pragma unroll
  for (int s = 0; s < K; s++) {
#pragma unroll
    for (int c = 0; c < DOF; c++) w[s * DOF + c] = __ldcs(vs + s * stride + c * a.m);
  }
#pragma unroll
  for (int s = 0; s < K; s++) {
    const bool    in = inside || SGDIANeighbourInByValue(a, g, s);
    const long long xo = (xb + a.poff[s]) * DOF; /* read only when in the domain */
    const double   *xp = x + xo;
#pragma unroll
    for (int c = 0; c < DOF; c++) {
      const double xv = in ? (XS ? __ldg(xs + xo + c) * __ldg(xp + c) : __ldg(xp + c)) : 0.0, t = sum + w[s * DOF + c] * xv;
      sum = in ? t : sum;
    }
  }
  return sum;
}

template <typename IT, int DOF, int K, bool ADD>
__global__ void __launch_bounds__(1024) SGDIAMultStencilKernel(const GpukitSGDIAMultArgs a, const SGDIARowBox box, const double *__restrict__ x, const double *y0, double *y)
{
  const IT i = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x;

  if (i >= (IT)a.m || SGDIASkipRow<IT>(a, box, i, DOF)) return;
  const double sum = SGDIAStencilRow<IT, DOF, K>(a, x, i);
  y[i]             = ADD ? y0[i] + sum : sum;
}

/* the (dof, stencil size) pairs with a variant-2 kernel: 2D 5-point, 3D 7-point and 2D 9-point with 1..4
   components, and the 3D 27-point box with one */
#define GPUKIT_SGDIA_STENCIL_CASES(X) X(1, 5) X(1, 7) X(1, 9) X(1, 27) X(2, 5) X(2, 7) X(2, 9) X(3, 5) X(3, 7) X(3, 9) X(4, 5) X(4, 7) X(4, 9)

bool SGDIAStencilKernelExists(int dof, int k)
{
#define GPUKIT_SGDIA_STENCIL_EXISTS(D, K) \
  if (dof == D && k == K) return true;
  GPUKIT_SGDIA_STENCIL_CASES(GPUKIT_SGDIA_STENCIL_EXISTS)
#undef GPUKIT_SGDIA_STENCIL_EXISTS
  return false;
}

/* the device stencil arrays from the values in the arguments: off[s] = a.poff[s], delta = a.pdelta */
__global__ void SGDIAFillStencilKernel(const GpukitSGDIAMultArgs a, long long *off, int *delta)
{
  const int s = threadIdx.x;

  if (s >= a.k) return;
  off[s] = a.poff[s];
  for (int d = 0; d < 3; d++) delta[3 * s + d] = a.pdelta[3 * s + d];
}

template <typename IT>
__global__ void __launch_bounds__(1024) SGDIADiagonalKernel(IT m, int dof, int center, const double *__restrict__ v, double *__restrict__ d)
{
  const IT i = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x;

  if (i >= m) return;
  d[i] = __ldg(v + ((long long)center * dof + (long long)(i % dof)) * (long long)m + i);
}

template <typename IT, bool ADD>
void SGDIAMultLaunch(const GpukitSGDIAMultArgs &a, const SGDIARowBox &box, const double *x, const double *y0, double *y, unsigned grid, int block, int variant, cudaStream_t stream)
{
  if (variant == 2) {
#define GPUKIT_SGDIA_STENCIL_LAUNCH(D, K) \
  if (a.dof == D && a.k == K) { \
    SGDIAMultStencilKernel<IT, D, K, ADD><<<grid, block, 0, stream>>>(a, box, x, y0, y); \
    return; \
  }
    GPUKIT_SGDIA_STENCIL_CASES(GPUKIT_SGDIA_STENCIL_LAUNCH)
#undef GPUKIT_SGDIA_STENCIL_LAUNCH
    return; /* not reached: GpukitSGDIAMultVariantValid() checked the pair */
  }
  switch (a.dof) {
#define GPUKIT_SGDIA_MULT_CASE(D) \
  case D: \
    if (variant == 1) SGDIAMult2Kernel<IT, D, ADD><<<grid, block, 0, stream>>>(a, x, y0, y); \
    else SGDIAMultKernel<IT, D, ADD><<<grid, block, 0, stream>>>(a, box, x, y0, y); \
    break;
    GPUKIT_SGDIA_CUDA_DOFS(GPUKIT_SGDIA_MULT_CASE)
#undef GPUKIT_SGDIA_MULT_CASE
  default: /* any other dof */
    if (variant == 1) SGDIAMult2Kernel<IT, 0, ADD><<<grid, block, 0, stream>>>(a, x, y0, y);
    else SGDIAMultKernel<IT, 0, ADD><<<grid, block, 0, stream>>>(a, box, x, y0, y);
  }
}

/* the variant-0 product with the epilogue (XS: the product of A with e.xs .* x) */
template <typename IT, int DOF, bool XS>
__global__ void __launch_bounds__(1024) SGDIAPowersKernel(const GpukitSGDIAMultArgs a, const GpukitSGDIAPowersArgs e, const double *__restrict__ x, double *w1)
{
  const IT i = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x;

  if (i >= (IT)a.m) return;
  GpukitPowersEpilogueApply(e, (long long)i, SGDIARow<IT, DOF, XS>(a, x, i, e.xs), w1);
}

/* the variant-2 (stencil) product with the epilogue */
template <typename IT, int DOF, int K, bool XS>
__global__ void __launch_bounds__(1024) SGDIAPowersStencilKernel(const GpukitSGDIAMultArgs a, const GpukitSGDIAPowersArgs e, const double *__restrict__ x, double *w1)
{
  const IT i = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x;

  if (i >= (IT)a.m) return;
  GpukitPowersEpilogueApply(e, (long long)i, SGDIAStencilRow<IT, DOF, K, XS>(a, x, i, e.xs), w1);
}

template <typename IT, bool XS>
void SGDIAPowersLaunch(const GpukitSGDIAMultArgs &a, const GpukitSGDIAPowersArgs &e, const double *x, double *w1, unsigned grid, int block, int variant, cudaStream_t stream)
{
  if (variant == 2) {
#define GPUKIT_SGDIA_STENCIL_POWERS_LAUNCH(D, K) \
  if (a.dof == D && a.k == K) { \
    SGDIAPowersStencilKernel<IT, D, K, XS><<<grid, block, 0, stream>>>(a, e, x, w1); \
    return; \
  }
    GPUKIT_SGDIA_STENCIL_CASES(GPUKIT_SGDIA_STENCIL_POWERS_LAUNCH)
#undef GPUKIT_SGDIA_STENCIL_POWERS_LAUNCH
    return; /* not reached: the caller checked the pair */
  }
  switch (a.dof) {
#define GPUKIT_SGDIA_POWERS_CASE(D) \
  case D: \
    SGDIAPowersKernel<IT, D, XS><<<grid, block, 0, stream>>>(a, e, x, w1); \
    break;
    GPUKIT_SGDIA_CUDA_DOFS(GPUKIT_SGDIA_POWERS_CASE)
#undef GPUKIT_SGDIA_POWERS_CASE
  default: /* any other dof */
    SGDIAPowersKernel<IT, 0, XS><<<grid, block, 0, stream>>>(a, e, x, w1);
  }
}

/* the shell half of an overlapped MPI product: row rows[t]; a over the ghosted box (x: ghosts only), xo the owned
   vector with the owned-box offsets ooff; the terms in the order of SGDIARow() */
template <typename IT, bool ADD>
__global__ void __launch_bounds__(1024) SGDIAMultShellKernel(const GpukitSGDIAMultArgs a, const long long *__restrict__ ooff, const double *__restrict__ xo, const long long *__restrict__ rows, IT nrows, const double *__restrict__ x, const double *y0, double *y)
{
  const IT t = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x;

  if (t >= nrows) return;
  const long long i      = __ldg(rows + t);
  const int       dof    = a.dof;
  const long long stride = (long long)dof * a.m;
  const double   *vs     = a.v + i;
  double          sum    = 0.0;
  int             g[3];
  long long       xb;
  bool            inside;

  SGDIAPoint<long long>(a, i / dof, g, &xb, &inside);
  const long long xbo = (long long)(g[0] - a.xs[0]) + (long long)a.xm[0] * ((long long)(g[1] - a.xs[1]) + (long long)a.xm[1] * (long long)(g[2] - a.xs[2]));
  for (int s = 0; s < a.k; s++, vs += stride) {
    if (!inside && !SGDIANeighbourIn(a, g, s)) continue;
    bool own = true;
#pragma unroll
    for (int d = 0; d < 3; d++) {
      const int q = g[d] + __ldg(a.delta + 3 * s + d);
      if (q < a.xs[d] || q >= a.xs[d] + a.xm[d]) own = false;
    }
    const double *xp = own ? xo + (xbo + __ldg(ooff + s)) * dof : x + (xb + __ldg(a.off + s)) * dof;
    for (int c = 0; c < dof; c++) sum += __ldg(vs + c * a.m) * __ldg(xp + c);
  }
  y[i] = ADD ? y0[i] + sum : sum;
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

cudaError_t GpukitSGDIAMultCUDA(const GpukitSGDIAMultArgs *a, const double *x, const double *y0, double *y, int block, int variant, cudaStream_t stream)
{
  unsigned grid;

  if (!a || a->m < 0 || a->dof < 1 || !SGDIABlockValid(block) || variant < 0 || variant >= GPUKIT_SGDIA_CUDA_VARIANTS) return cudaErrorInvalidValue;
  if (a->m == 0) return cudaSuccess;
  if (a->k < 1 || a->m % a->dof || !a->v || !a->delta || !a->off || !x || !y) return cudaErrorInvalidValue;
  if (variant > 0 && !GpukitSGDIAMultVariantValid(a, variant)) return cudaErrorInvalidValue;
  for (int d = 0; d < 3; d++)
    if (a->xm[d] < 1 || a->n[d] < 1 || a->M[d] < 1 || a->sw[d] < 0) return cudaErrorInvalidValue;
  grid = SGDIAGrid(variant == 1 ? a->m / 2 : a->m, block);
  if (!grid) return cudaErrorInvalidConfiguration;
  const SGDIARowBox all = {0, {0, 0, 0}, {0, 0, 0}};
  if (SGDIASmallIndex(a->m, block)) {
    if (y0) SGDIAMultLaunch<int, true>(*a, all, x, y0, y, grid, block, variant, stream);
    else SGDIAMultLaunch<int, false>(*a, all, x, y0, y, grid, block, variant, stream);
  } else {
    if (y0) SGDIAMultLaunch<long long, true>(*a, all, x, y0, y, grid, block, variant, stream);
    else SGDIAMultLaunch<long long, false>(*a, all, x, y0, y, grid, block, variant, stream);
  }
  return cudaGetLastError();
}

cudaError_t GpukitSGDIAMultInteriorCUDA(const GpukitSGDIAMultArgs *a, const int ilo[3], const int ihi[3], const double *x, const double *y0, double *y, int block, int variant, cudaStream_t stream)
{
  unsigned    grid;
  SGDIARowBox box;

  if (!a || !ilo || !ihi || a->m < 0 || a->dof < 1 || !SGDIABlockValid(block) || variant < 0 || variant >= GPUKIT_SGDIA_CUDA_VARIANTS) return cudaErrorInvalidValue;
  if (a->m == 0) return cudaSuccess;
  if (a->k < 1 || a->m % a->dof || !a->v || !a->delta || !a->off || !x || !y) return cudaErrorInvalidValue;
  for (int d = 0; d < 3; d++)
    if (a->xm[d] < 1 || a->n[d] < 1 || a->M[d] < 1 || a->sw[d] < 0) return cudaErrorInvalidValue;
  if (variant == 1 || !GpukitSGDIAMultVariantValid(a, variant)) variant = 0; /* variant 1 pairs rows that may fall on both sides */
  box.on = 1;
  for (int d = 0; d < 3; d++) {
    box.lo[d] = ilo[d];
    box.hi[d] = ihi[d];
  }
  grid = SGDIAGrid(a->m, block);
  if (!grid) return cudaErrorInvalidConfiguration;
  if (SGDIASmallIndex(a->m, block)) {
    if (y0) SGDIAMultLaunch<int, true>(*a, box, x, y0, y, grid, block, variant, stream);
    else SGDIAMultLaunch<int, false>(*a, box, x, y0, y, grid, block, variant, stream);
  } else {
    if (y0) SGDIAMultLaunch<long long, true>(*a, box, x, y0, y, grid, block, variant, stream);
    else SGDIAMultLaunch<long long, false>(*a, box, x, y0, y, grid, block, variant, stream);
  }
  return cudaGetLastError();
}

cudaError_t GpukitSGDIAMultShellCUDA(const GpukitSGDIAMultArgs *a, const long long *ooff, const double *xo, const long long *rows, long long nrows, const double *x, const double *y0, double *y, int block, cudaStream_t stream)
{
  unsigned grid;

  if (!a || nrows < 0 || a->dof < 1 || !SGDIABlockValid(block)) return cudaErrorInvalidValue;
  if (nrows == 0 || a->m == 0) return cudaSuccess;
  if (a->k < 1 || a->m % a->dof || !a->v || !a->delta || !a->off || !ooff || !xo || !rows || !x || !y) return cudaErrorInvalidValue;
  grid = SGDIAGrid(nrows, block);
  if (!grid) return cudaErrorInvalidConfiguration;
  if (SGDIASmallIndex(nrows, block)) {
    if (y0) SGDIAMultShellKernel<int, true><<<grid, block, 0, stream>>>(*a, ooff, xo, rows, (int)nrows, x, y0, y);
    else SGDIAMultShellKernel<int, false><<<grid, block, 0, stream>>>(*a, ooff, xo, rows, (int)nrows, x, y0, y);
  } else {
    if (y0) SGDIAMultShellKernel<long long, true><<<grid, block, 0, stream>>>(*a, ooff, xo, rows, nrows, x, y0, y);
    else SGDIAMultShellKernel<long long, false><<<grid, block, 0, stream>>>(*a, ooff, xo, rows, nrows, x, y0, y);
  }
  return cudaGetLastError();
}

cudaError_t GpukitSGDIAPowersCUDA(const GpukitSGDIAMultArgs *a, const GpukitSGDIAPowersArgs *e, const double *x, double *w1, int block, int variant, cudaStream_t stream)
{
  unsigned grid;

  if (!a || !e || a->m < 0 || a->dof < 1 || !SGDIABlockValid(block) || variant < 0 || variant >= GPUKIT_SGDIA_CUDA_VARIANTS) return cudaErrorInvalidValue;
  if (a->m == 0) return cudaSuccess;
  if (a->k < 1 || a->m % a->dof || !a->v || !a->delta || !a->off || !x || !w1 || (e->v1 && !e->dinv)) return cudaErrorInvalidValue;
  for (int d = 0; d < 3; d++)
    if (a->xm[d] < 1 || a->n[d] < 1 || a->M[d] < 1 || a->sw[d] < 0) return cudaErrorInvalidValue;
  if (variant != 2 || !GpukitSGDIAMultVariantValid(a, 2)) variant = 0;
  grid = SGDIAGrid(a->m, block);
  if (!grid) return cudaErrorInvalidConfiguration;
  if (SGDIASmallIndex(a->m, block)) {
    if (e->xs) SGDIAPowersLaunch<int, true>(*a, *e, x, w1, grid, block, variant, stream);
    else SGDIAPowersLaunch<int, false>(*a, *e, x, w1, grid, block, variant, stream);
  } else {
    if (e->xs) SGDIAPowersLaunch<long long, true>(*a, *e, x, w1, grid, block, variant, stream);
    else SGDIAPowersLaunch<long long, false>(*a, *e, x, w1, grid, block, variant, stream);
  }
  return cudaGetLastError();
}

int GpukitSGDIAMultVariantValid(const GpukitSGDIAMultArgs *a, int variant)
{
  if (variant == 0) return 1;
  if (variant == 1) return a->m % 2 == 0;
  if (variant == 2) return a->k <= GPUKIT_SGDIA_CUDA_PARAM_K && SGDIAStencilKernelExists(a->dof, a->k);
  return 0;
}

cudaError_t GpukitSGDIAFillStencilCUDA(const GpukitSGDIAMultArgs *a, long long *off, int *delta, cudaStream_t stream)
{
  if (!a || a->k < 1 || a->k > GPUKIT_SGDIA_CUDA_PARAM_K || !off || !delta) return cudaErrorInvalidValue;
  SGDIAFillStencilKernel<<<1, GPUKIT_SGDIA_CUDA_PARAM_K, 0, stream>>>(*a, off, delta);
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
