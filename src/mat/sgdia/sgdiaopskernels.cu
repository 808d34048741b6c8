/*
   Device kernels of MATSGDIACUDA other than the product and the diagonal (see sgdiaopskernels.h for the
   interface). Each kernel names its host reference in sgdia.c. Layout: v[(s*dof + c)*m + p*dof + r].

   Threads: one per row for the kernels that walk the stencil of a row (right scaling, Dirichlet columns), one per
   output entry of the box for the transpose product (a gather, so no atomics), one per element for the array
   algebra (16-byte accesses when the arrays allow it), and one per grid point for the block inversion (the COO
   assembly kernel is the shared one of src/mat/utils/gpukitcookernels.cu). Consecutive threads take consecutive rows,
   so the accesses to a stored column of v are coalesced.
*/
#include <climits>
#include <cstdint>
#include "sgdiaopskernels.h"

/* the dofs with kernels of their own; keep in step with GPUKIT_SGDIA_CUDA_MAX_DOF (sgdiakernels.h) and
   GPUKIT_SGDIA_CUDA_MAX_INV_DOF */
#define GPUKIT_SGDIA_OPS_DOFS(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8)


namespace
{

/* ------------------------------------------------------------------------------------------------------
   Launch helpers (as in sgdiakernels.cu)
   ------------------------------------------------------------------------------------------------------ */

bool OpsBlockValid(int block)
{
  return block >= 32 && block <= 1024 && block % 32 == 0;
}

/* ceil(n/per_block) blocks, or 0 when that exceeds the grid limit */
unsigned OpsGrid(long long n, long long per_block)
{
  const long long grid = (n + per_block - 1) / per_block;
  return grid > INT_MAX ? 0u : (unsigned)grid;
}

/* int index arithmetic when every thread index of the grid (and slack) fits */
bool OpsSmallIndex(long long n, long long slack)
{
  return n <= (long long)INT_MAX - slack;
}

bool OpsAligned16(const void *ptr)
{
  return ((uintptr_t)ptr & 15u) == 0;
}

/* the checks common to the kernels that walk the stencil of an owned box (a->v is not checked: the callers that
   read it check it) */
bool OpsStencilArgsValid(const GpukitSGDIAMultArgs *a, bool need_off)
{
  long long np = 1;

  if (a->k < 1 || a->m % a->dof || !a->delta || (need_off && !a->off)) return false;
  for (int d = 0; d < 3; d++) {
    if (a->xm[d] < 1 || a->n[d] < 1 || a->M[d] < 1 || a->sw[d] < 0) return false;
    np *= a->xm[d];
  }
  return np * a->dof == a->m;
}

/* owned row i -> owned point p and its global grid coordinates g (as SGDIAMultKernel does) */
template <typename IT>
__device__ inline void OpsRowPoint(const GpukitSGDIAMultArgs &a, IT p, int g[3])
{
  const IT  t  = p / a.xm[0];
  const int l2 = (int)(t / a.xm[1]);

  g[0] = a.xs[0] + (int)(p - t * a.xm[0]);
  g[1] = a.xs[1] + (int)(t - (IT)l2 * a.xm[1]);
  g[2] = a.xs[2] + l2;
}

/* does the whole stencil of the owned point at g lie in the domain (no per-neighbour checks needed)? */
__device__ inline bool OpsStencilInside(const GpukitSGDIAMultArgs &a, const int g[3])
{
  bool inside = true;
#pragma unroll
  for (int d = 0; d < 3; d++)
    if (!a.periodic[d] && (g[d] - a.sw[d] < 0 || g[d] + a.sw[d] >= a.M[d])) inside = false;
  return inside;
}

/* SGDIANeighbourInDomain(): does neighbour s of the owned point at g lie in the domain? */
__device__ inline bool OpsNeighbourInDomain(const GpukitSGDIAMultArgs &a, const int g[3], int s)
{
  bool in = true;
#pragma unroll
  for (int d = 0; d < 3; d++) {
    const int q = g[d] + __ldg(a.delta + 3 * s + d);
    if (!a.periodic[d] && (q < 0 || q >= a.M[d])) in = false;
  }
  return in;
}

/* ------------------------------------------------------------------------------------------------------
   Transpose product (MatMultTransposeAdd_SGDIA), gather form
   ------------------------------------------------------------------------------------------------------ */

template <typename IT, int DOF, bool ADD>
__global__ void __launch_bounds__(1024) SGDIAMultTransposeKernel(const GpukitSGDIAMultArgs a, IT nbox, const double *__restrict__ x, const double *y0, double *y)
{
  const int dof = DOF > 0 ? DOF : a.dof;
  const IT  i   = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x;

  if (i >= nbox) return;
  const IT        qi     = i / dof;
  const int       c      = (int)(i - qi * dof);
  const IT        t      = qi / a.n[0];
  const int       l2     = (int)(t / a.n[1]);
  const int       q[3]   = {a.lo[0] + (int)(qi - t * a.n[0]), a.lo[1] + (int)(t - (IT)l2 * a.n[1]), a.lo[2] + l2};
  const long long stride = (long long)dof * a.m; /* from stencil point s to s+1 in v */
  double          sum    = ADD ? y0[i] : 0.0;
  bool            qin = true, interior = true;

#pragma unroll
  for (int d = 0; d < 3; d++) {
    if (!a.periodic[d] && (q[d] < 0 || q[d] >= a.M[d])) qin = false; /* no in-domain coupling reaches q */
    if (q[d] - a.sw[d] < a.xs[d] || q[d] + a.sw[d] >= a.xs[d] + a.xm[d]) interior = false; /* every source is owned */
  }
  if (qin) {
    const double *vc = a.v + (long long)c * a.m;
    for (int s = 0; s < a.k; s++, vc += stride) {
      int  p[3];
      bool owned = true;
#pragma unroll
      for (int d = 0; d < 3; d++) {
        p[d] = q[d] - __ldg(a.delta + 3 * s + d) - a.xs[d]; /* the source point, in owned-box coordinates */
        if (!interior && (p[d] < 0 || p[d] >= a.xm[d])) owned = false;
      }
      if (!owned) continue;
      const long long base = ((long long)p[0] + (long long)a.xm[0] * ((long long)p[1] + (long long)a.xm[1] * (long long)p[2])) * dof;
      const double   *vs   = vc + base;
      const double   *xp   = x + base;
      if constexpr (DOF > 0) {
#pragma unroll
        for (int r = 0; r < DOF; r++) sum += __ldg(vs + r) * __ldg(xp + r);
      } else {
        for (int r = 0; r < dof; r++) sum += __ldg(vs + r) * __ldg(xp + r);
      }
    }
  }
  y[i] = sum;
}

template <typename IT, bool ADD>
void SGDIAMultTransposeLaunch(const GpukitSGDIAMultArgs &a, IT nbox, const double *x, const double *y0, double *y, unsigned grid, int block, cudaStream_t stream)
{
  switch (a.dof) {
#define GPUKIT_SGDIA_MULTT_CASE(D) \
  case D: \
    SGDIAMultTransposeKernel<IT, D, ADD><<<grid, block, 0, stream>>>(a, nbox, x, y0, y); \
    break;
    GPUKIT_SGDIA_OPS_DOFS(GPUKIT_SGDIA_MULTT_CASE)
#undef GPUKIT_SGDIA_MULTT_CASE
  default:
    SGDIAMultTransposeKernel<IT, 0, ADD><<<grid, block, 0, stream>>>(a, nbox, x, y0, y);
  }
}

/* ------------------------------------------------------------------------------------------------------
   Array algebra (MatScale_SGDIA, MatAXPY_SGDIA), 16-byte accesses when both arrays are 16-byte aligned
   ------------------------------------------------------------------------------------------------------ */

template <typename IT>
__global__ void __launch_bounds__(1024) SGDIAScaleKernel(IT n, double alpha, double *__restrict__ v)
{
  const IT i = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x;

  if (i < n) v[i] *= alpha;
}

/* thread i takes elements 2i and 2i+1 */
template <typename IT>
__global__ void __launch_bounds__(1024) SGDIAScale2Kernel(IT n, double alpha, double *__restrict__ v)
{
  const IT i = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x, j = 2 * i;

  if (j + 1 < n) {
    double2 t = reinterpret_cast<double2 *>(v)[i];
    t.x *= alpha;
    t.y *= alpha;
    reinterpret_cast<double2 *>(v)[i] = t;
  } else if (j < n) v[j] *= alpha;
}

/* x may be y. The product is rounded before the sum (no fused multiply-add), as on the host, so that a device
   matrix and its host twin stay equal bit for bit. */
template <typename IT>
__global__ void __launch_bounds__(1024) SGDIAAXPYKernel(IT n, double alpha, const double *x, double *y)
{
  const IT i = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x;

  if (i < n) y[i] = __dadd_rn(y[i], __dmul_rn(alpha, x[i]));
}

template <typename IT>
__global__ void __launch_bounds__(1024) SGDIAAXPY2Kernel(IT n, double alpha, const double *x, double *y)
{
  const IT i = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x, j = 2 * i;

  if (j + 1 < n) {
    const double2 xx = reinterpret_cast<const double2 *>(x)[i];
    double2       yy = reinterpret_cast<double2 *>(y)[i];
    yy.x = __dadd_rn(yy.x, __dmul_rn(alpha, xx.x));
    yy.y = __dadd_rn(yy.y, __dmul_rn(alpha, xx.y));
    reinterpret_cast<double2 *>(y)[i] = yy;
  } else if (j < n) y[j] = __dadd_rn(y[j], __dmul_rn(alpha, x[j]));
}

/* ------------------------------------------------------------------------------------------------------
   Diagonal (MatShift_SGDIA, MatDiagonalSet_SGDIA, MatDiagonalScale_SGDIA)
   ------------------------------------------------------------------------------------------------------ */

/* ADD: v(i,i) += alpha + d[i] with d possibly NULL (shift: d NULL; add-diagonal: alpha 0); else v(i,i) = d[i] */
template <typename IT, bool ADD>
__global__ void __launch_bounds__(1024) SGDIADiagonalUpdateKernel(IT m, int dof, int center, double alpha, const double *__restrict__ d, double *__restrict__ v)
{
  const IT i = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x;

  if (i >= m) return;
  double *e = v + ((long long)center * dof + (long long)(i % dof)) * (long long)m + i;
  if (ADD) *e += d ? d[i] : alpha;
  else *e = d[i];
}

/* v[j*m + i] *= l[i]: one thread per row, its kdof stored entries */
template <typename IT>
__global__ void __launch_bounds__(1024) SGDIAScaleLeftKernel(IT m, int kdof, const double *__restrict__ l, double *__restrict__ v)
{
  const IT i = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x;

  if (i >= m) return;
  const double li = l[i];
  double      *e  = v + i;
  for (int j = 0; j < kdof; j++, e += m) *e *= li;
}

/* entry (s, c, p, r) *= rl[(xb(p) + off[s])*dof + c] for the in-domain couplings: one thread per row */
template <typename IT, int DOF>
__global__ void __launch_bounds__(1024) SGDIAScaleRightKernel(const GpukitSGDIAMultArgs a, const double *__restrict__ rl, double *__restrict__ v)
{
  const int dof = DOF > 0 ? DOF : a.dof;
  const IT  i   = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x;
  int       g[3];

  if (i >= (IT)a.m) return;
  OpsRowPoint<IT>(a, i / dof, g);
  const long long xb     = (long long)(g[0] - a.lo[0]) + (long long)a.n[0] * ((long long)(g[1] - a.lo[1]) + (long long)a.n[1] * (long long)(g[2] - a.lo[2]));
  const long long stride = (long long)dof * a.m;
  const bool      inside = OpsStencilInside(a, g);
  double         *vs     = v + i;

  for (int s = 0; s < a.k; s++, vs += stride) {
    if (!inside && !OpsNeighbourInDomain(a, g, s)) continue;
    const double *rp = rl + (xb + __ldg(a.off + s)) * dof;
    if constexpr (DOF > 0) {
#pragma unroll
      for (int c = 0; c < DOF; c++) vs[c * a.m] *= __ldg(rp + c);
    } else {
      for (int c = 0; c < dof; c++) vs[c * a.m] *= __ldg(rp + c);
    }
  }
}

template <typename IT>
void SGDIAScaleRightLaunch(const GpukitSGDIAMultArgs &a, const double *rl, double *v, unsigned grid, int block, cudaStream_t stream)
{
  switch (a.dof) {
#define GPUKIT_SGDIA_SCALER_CASE(D) \
  case D: \
    SGDIAScaleRightKernel<IT, D><<<grid, block, 0, stream>>>(a, rl, v); \
    break;
    GPUKIT_SGDIA_OPS_DOFS(GPUKIT_SGDIA_SCALER_CASE)
#undef GPUKIT_SGDIA_SCALER_CASE
  default:
    SGDIAScaleRightKernel<IT, 0><<<grid, block, 0, stream>>>(a, rl, v);
  }
}

/* ------------------------------------------------------------------------------------------------------
   Dirichlet rows and columns (SGDIAZeroLocalRows, MatZeroRowsColumns_SGDIA)
   ------------------------------------------------------------------------------------------------------ */

/* thread t = j*nrows + u: stored column j of listed row u, so that consecutive threads take consecutive listed
   rows of one stored column. Every slot gets its final value directly (0, or diag on the diagonal), so repeated
   rows write the same values and no thread waits for another. */
template <typename IT>
__global__ void __launch_bounds__(1024) SGDIAZeroRowsKernel(IT nrows, IT ntot, const long long *__restrict__ lrows, long long m, int dof, int center, double diag, double *__restrict__ v, const double *__restrict__ x, double *__restrict__ b)
{
  const IT t = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x;

  if (t >= ntot) return;
  const IT        j  = t / nrows;
  const IT        u  = t - j * nrows;
  const long long lr = __ldg(lrows + u);
  if (lr < 0 || lr >= m) return; /* not a local row: nothing to do (the caller passes local rows) */
  v[(long long)j * m + lr] = (long long)j == (long long)center * dof + lr % dof ? diag : 0.0;
  if (j == 0 && x && b) b[lr] = diag * x[lr];
}

/* one thread per owned row; the fix-up of b uses separate multiply and subtract (no fused multiply-add), in the
   host's order, so that it agrees with the host bit for bit */
template <typename IT, int DOF>
__global__ void __launch_bounds__(1024) SGDIAZeroColumnsKernel(const GpukitSGDIAMultArgs a, const double *__restrict__ maskl, const double *__restrict__ xl, double *__restrict__ b, double *__restrict__ v)
{
  const int dof = DOF > 0 ? DOF : a.dof;
  const IT  i   = (IT)blockIdx.x * (IT)blockDim.x + (IT)threadIdx.x;
  int       g[3];

  if (i >= (IT)a.m) return;
  OpsRowPoint<IT>(a, i / dof, g);
  const long long xb     = (long long)(g[0] - a.lo[0]) + (long long)a.n[0] * ((long long)(g[1] - a.lo[1]) + (long long)a.n[1] * (long long)(g[2] - a.lo[2]));
  const long long stride = (long long)dof * a.m;
  const bool      inside = OpsStencilInside(a, g);
  double         *vs     = v + i;
  double          bi     = b ? b[i] : 0.0;

  for (int s = 0; s < a.k; s++, vs += stride) {
    if (!inside && !OpsNeighbourInDomain(a, g, s)) continue;
    const long long col0 = (xb + __ldg(a.off + s)) * dof;
    for (int c = 0; c < dof; c++) {
      if (__ldg(maskl + col0 + c) == 0.0) continue;
      double *e = vs + c * a.m;
      if (b) bi = __dsub_rn(bi, __dmul_rn(*e, __ldg(xl + col0 + c)));
      *e = 0.0;
    }
  }
  if (b) b[i] = bi;
}

template <typename IT>
void SGDIAZeroColumnsLaunch(const GpukitSGDIAMultArgs &a, const double *maskl, const double *xl, double *b, double *v, unsigned grid, int block, cudaStream_t stream)
{
  switch (a.dof) {
#define GPUKIT_SGDIA_ZEROC_CASE(D) \
  case D: \
    SGDIAZeroColumnsKernel<IT, D><<<grid, block, 0, stream>>>(a, maskl, xl, b, v); \
    break;
    GPUKIT_SGDIA_OPS_DOFS(GPUKIT_SGDIA_ZEROC_CASE)
#undef GPUKIT_SGDIA_ZEROC_CASE
  default:
    SGDIAZeroColumnsKernel<IT, 0><<<grid, block, 0, stream>>>(a, maskl, xl, b, v);
  }
}

/* ------------------------------------------------------------------------------------------------------
   Inverse of the diagonal blocks (MatInvertBlockDiagonal_SGDIA)
   ------------------------------------------------------------------------------------------------------ */

/* *singular = min(*singular, p), where -1 means "none yet" */
__device__ inline void OpsRecordSingular(long long *singular, long long p)
{
  unsigned long long *addr = reinterpret_cast<unsigned long long *>(singular);
  unsigned long long  old  = *reinterpret_cast<volatile unsigned long long *>(addr);

  while (true) {
    const long long cur = (long long)old;
    if (cur >= 0 && cur <= p) break;
    const unsigned long long prev = atomicCAS(addr, old, (unsigned long long)p);
    if (prev == old) break;
    old = prev;
  }
}

/* Gauss-Jordan on [B | I] with partial pivoting, the host's algorithm: the same pivot choice (first row of largest
   magnitude), the same row operations in the same order, each product and difference rounded separately (no
   fused multiply-add), so the inverse is the host's bit for bit. Every index into lu[] and iv[] is a compile-time
   constant (the loops are unrolled and the row swap is a predicated swap per candidate row), so both blocks stay
   in registers. Columns of lu left of the pivot column are never read again, so they are not updated (the host
   updates them; that changes nothing in iv). */
template <int DOF>
__global__ void __launch_bounds__(GPUKIT_SGDIA_INV_MAX_BLOCK) SGDIAInvertBlockKernel(long long np, int center, long long m, const double *__restrict__ v, double *__restrict__ inv, long long *singular)
{
  const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  double          lu[DOF * DOF], iv[DOF * DOF];

  if (p >= np) return;
#pragma unroll
  for (int c = 0; c < DOF; c++) {
    const double *vc = v + ((long long)center * DOF + c) * m + p * DOF;
#pragma unroll
    for (int r = 0; r < DOF; r++) {
      lu[r + c * DOF] = __ldg(vc + r);
      iv[r + c * DOF] = r == c ? 1.0 : 0.0;
    }
  }
#pragma unroll
  for (int c = 0; c < DOF; c++) {
    int    pr   = c;
    double best = fabs(lu[c + c * DOF]);
#pragma unroll
    for (int r = c + 1; r < DOF; r++)
      if (fabs(lu[r + c * DOF]) > best) {
        best = fabs(lu[r + c * DOF]);
        pr   = r;
      }
    if (best == 0.0) {
      OpsRecordSingular(singular, p);
      return;
    }
#pragma unroll
    for (int r = c + 1; r < DOF; r++) {
      if (r != pr) continue;
#pragma unroll
      for (int j = 0; j < DOF; j++) {
        double t;
        if (j >= c) {
          t               = lu[c + j * DOF];
          lu[c + j * DOF] = lu[r + j * DOF];
          lu[r + j * DOF] = t;
        }
        t               = iv[c + j * DOF];
        iv[c + j * DOF] = iv[r + j * DOF];
        iv[r + j * DOF] = t;
      }
    }
    {
      const double d = 1.0 / lu[c + c * DOF];
#pragma unroll
      for (int j = 0; j < DOF; j++) {
        if (j > c) lu[c + j * DOF] = __dmul_rn(lu[c + j * DOF], d);
        iv[c + j * DOF] = __dmul_rn(iv[c + j * DOF], d);
      }
    }
#pragma unroll
    for (int r = 0; r < DOF; r++) {
      if (r == c) continue;
      const double f = lu[r + c * DOF];
      if (f == 0.0) continue;
#pragma unroll
      for (int j = 0; j < DOF; j++) {
        if (j > c) lu[r + j * DOF] = __dsub_rn(lu[r + j * DOF], __dmul_rn(f, lu[c + j * DOF]));
        iv[r + j * DOF] = __dsub_rn(iv[r + j * DOF], __dmul_rn(f, iv[c + j * DOF]));
      }
    }
  }
  {
    double *out = inv + p * (DOF * DOF);
#pragma unroll
    for (int e = 0; e < DOF * DOF; e++) out[e] = iv[e];
  }
}

} // namespace

/* ------------------------------------------------------------------------------------------------------
   Launch functions
   ------------------------------------------------------------------------------------------------------ */

cudaError_t GpukitSGDIAMultTransposeCUDA(const GpukitSGDIAMultArgs *a, const double *x, const double *y0, double *y, int block, cudaStream_t stream)
{
  GpukitSGDIAMultArgs b;
  long long           nbox;
  unsigned            grid;

  if (!a || a->m < 0 || a->dof < 1 || !OpsBlockValid(block)) return cudaErrorInvalidValue;
  for (int d = 0; d < 3; d++)
    if (a->n[d] < 0) return cudaErrorInvalidValue;
  nbox = (long long)a->n[0] * a->n[1] * a->n[2] * a->dof;
  if (nbox == 0) return cudaSuccess;
  if (!y) return cudaErrorInvalidValue;
  b = *a;
  if (a->m > 0) {
    if (!OpsStencilArgsValid(a, false) || !a->v || !x) return cudaErrorInvalidValue;
  } else b.k = 0; /* no owned rows: y = y0 (or 0) over the box */
  grid = OpsGrid(nbox, block);
  if (!grid) return cudaErrorInvalidConfiguration;
  if (OpsSmallIndex(nbox, block)) {
    if (y0) SGDIAMultTransposeLaunch<int, true>(b, (int)nbox, x, y0, y, grid, block, stream);
    else SGDIAMultTransposeLaunch<int, false>(b, (int)nbox, x, y0, y, grid, block, stream);
  } else {
    if (y0) SGDIAMultTransposeLaunch<long long, true>(b, nbox, x, y0, y, grid, block, stream);
    else SGDIAMultTransposeLaunch<long long, false>(b, nbox, x, y0, y, grid, block, stream);
  }
  return cudaGetLastError();
}

cudaError_t GpukitSGDIAScaleCUDA(long long n, double alpha, double *v, int block, cudaStream_t stream)
{
  const bool vec2 = OpsAligned16(v);
  unsigned   grid;

  if (n < 0 || !OpsBlockValid(block)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!v) return cudaErrorInvalidValue;
  grid = OpsGrid(n, vec2 ? 2LL * block : block);
  if (!grid) return cudaErrorInvalidConfiguration;
  if (OpsSmallIndex(n, 2LL * block)) {
    if (vec2) SGDIAScale2Kernel<int><<<grid, block, 0, stream>>>((int)n, alpha, v);
    else SGDIAScaleKernel<int><<<grid, block, 0, stream>>>((int)n, alpha, v);
  } else {
    if (vec2) SGDIAScale2Kernel<long long><<<grid, block, 0, stream>>>(n, alpha, v);
    else SGDIAScaleKernel<long long><<<grid, block, 0, stream>>>(n, alpha, v);
  }
  return cudaGetLastError();
}

cudaError_t GpukitSGDIAAXPYCUDA(long long n, double alpha, const double *x, double *y, int block, cudaStream_t stream)
{
  const bool vec2 = OpsAligned16(x) && OpsAligned16(y);
  unsigned   grid;

  if (n < 0 || !OpsBlockValid(block)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!x || !y) return cudaErrorInvalidValue;
  grid = OpsGrid(n, vec2 ? 2LL * block : block);
  if (!grid) return cudaErrorInvalidConfiguration;
  if (OpsSmallIndex(n, 2LL * block)) {
    if (vec2) SGDIAAXPY2Kernel<int><<<grid, block, 0, stream>>>((int)n, alpha, x, y);
    else SGDIAAXPYKernel<int><<<grid, block, 0, stream>>>((int)n, alpha, x, y);
  } else {
    if (vec2) SGDIAAXPY2Kernel<long long><<<grid, block, 0, stream>>>(n, alpha, x, y);
    else SGDIAAXPYKernel<long long><<<grid, block, 0, stream>>>(n, alpha, x, y);
  }
  return cudaGetLastError();
}

cudaError_t GpukitSGDIAShiftCUDA(long long m, int dof, int center, double alpha, double *v, int block, cudaStream_t stream)
{
  unsigned grid;

  if (m < 0 || dof < 1 || center < 0 || !OpsBlockValid(block)) return cudaErrorInvalidValue;
  if (m == 0) return cudaSuccess;
  if (m % dof || !v) return cudaErrorInvalidValue;
  grid = OpsGrid(m, block);
  if (!grid) return cudaErrorInvalidConfiguration;
  if (OpsSmallIndex(m, block)) SGDIADiagonalUpdateKernel<int, true><<<grid, block, 0, stream>>>((int)m, dof, center, alpha, NULL, v);
  else SGDIADiagonalUpdateKernel<long long, true><<<grid, block, 0, stream>>>(m, dof, center, alpha, NULL, v);
  return cudaGetLastError();
}

cudaError_t GpukitSGDIADiagonalSetCUDA(long long m, int dof, int center, const double *d, int add, double *v, int block, cudaStream_t stream)
{
  unsigned grid;

  if (m < 0 || dof < 1 || center < 0 || !OpsBlockValid(block)) return cudaErrorInvalidValue;
  if (m == 0) return cudaSuccess;
  if (m % dof || !d || !v) return cudaErrorInvalidValue;
  grid = OpsGrid(m, block);
  if (!grid) return cudaErrorInvalidConfiguration;
  if (OpsSmallIndex(m, block)) {
    if (add) SGDIADiagonalUpdateKernel<int, true><<<grid, block, 0, stream>>>((int)m, dof, center, 0.0, d, v);
    else SGDIADiagonalUpdateKernel<int, false><<<grid, block, 0, stream>>>((int)m, dof, center, 0.0, d, v);
  } else {
    if (add) SGDIADiagonalUpdateKernel<long long, true><<<grid, block, 0, stream>>>(m, dof, center, 0.0, d, v);
    else SGDIADiagonalUpdateKernel<long long, false><<<grid, block, 0, stream>>>(m, dof, center, 0.0, d, v);
  }
  return cudaGetLastError();
}

cudaError_t GpukitSGDIADiagonalScaleLeftCUDA(long long m, int kdof, const double *l, double *v, int block, cudaStream_t stream)
{
  unsigned grid;

  if (m < 0 || kdof < 1 || !OpsBlockValid(block)) return cudaErrorInvalidValue;
  if (m == 0) return cudaSuccess;
  if (!l || !v) return cudaErrorInvalidValue;
  grid = OpsGrid(m, block);
  if (!grid) return cudaErrorInvalidConfiguration;
  if (OpsSmallIndex(m, block)) SGDIAScaleLeftKernel<int><<<grid, block, 0, stream>>>((int)m, kdof, l, v);
  else SGDIAScaleLeftKernel<long long><<<grid, block, 0, stream>>>(m, kdof, l, v);
  return cudaGetLastError();
}

cudaError_t GpukitSGDIADiagonalScaleRightCUDA(const GpukitSGDIAMultArgs *a, const double *rl, double *v, int block, cudaStream_t stream)
{
  unsigned grid;

  if (!a || a->m < 0 || a->dof < 1 || !OpsBlockValid(block)) return cudaErrorInvalidValue;
  if (a->m == 0) return cudaSuccess;
  if (!OpsStencilArgsValid(a, true) || !rl || !v) return cudaErrorInvalidValue;
  grid = OpsGrid(a->m, block);
  if (!grid) return cudaErrorInvalidConfiguration;
  if (OpsSmallIndex(a->m, block)) SGDIAScaleRightLaunch<int>(*a, rl, v, grid, block, stream);
  else SGDIAScaleRightLaunch<long long>(*a, rl, v, grid, block, stream);
  return cudaGetLastError();
}

cudaError_t GpukitSGDIAZeroRowsCUDA(long long nrows, const long long *lrows, long long m, int dof, int k, int center, double diag, double *v, const double *x, double *b, int block, cudaStream_t stream)
{
  long long ntot;
  unsigned  grid;

  if (nrows < 0 || m < 0 || dof < 1 || k < 1 || center < 0 || center >= k || !OpsBlockValid(block)) return cudaErrorInvalidValue;
  if (nrows == 0 || m == 0) return cudaSuccess;
  if (m % dof || !lrows || !v) return cudaErrorInvalidValue;
  if (nrows > LLONG_MAX / ((long long)k * dof)) return cudaErrorInvalidValue;
  ntot = nrows * k * dof;
  grid = OpsGrid(ntot, block);
  if (!grid) return cudaErrorInvalidConfiguration;
  if (OpsSmallIndex(ntot, block)) SGDIAZeroRowsKernel<int><<<grid, block, 0, stream>>>((int)nrows, (int)ntot, lrows, m, dof, center, diag, v, x, b);
  else SGDIAZeroRowsKernel<long long><<<grid, block, 0, stream>>>(nrows, ntot, lrows, m, dof, center, diag, v, x, b);
  return cudaGetLastError();
}

cudaError_t GpukitSGDIAZeroColumnsCUDA(const GpukitSGDIAMultArgs *a, const double *maskl, const double *xl, double *b, double *v, int block, cudaStream_t stream)
{
  unsigned grid;

  if (!a || a->m < 0 || a->dof < 1 || !OpsBlockValid(block)) return cudaErrorInvalidValue;
  if (a->m == 0) return cudaSuccess;
  if (!OpsStencilArgsValid(a, true) || !maskl || !v || (b && !xl)) return cudaErrorInvalidValue;
  grid = OpsGrid(a->m, block);
  if (!grid) return cudaErrorInvalidConfiguration;
  if (OpsSmallIndex(a->m, block)) SGDIAZeroColumnsLaunch<int>(*a, maskl, xl, b, v, grid, block, stream);
  else SGDIAZeroColumnsLaunch<long long>(*a, maskl, xl, b, v, grid, block, stream);
  return cudaGetLastError();
}

cudaError_t GpukitSGDIAInvertBlockDiagonalCUDA(long long np, int dof, int center, long long m, const double *v, double *inv, long long *singular, int block, cudaStream_t stream)
{
  const int   tpb = block < GPUKIT_SGDIA_INV_MAX_BLOCK ? block : GPUKIT_SGDIA_INV_MAX_BLOCK;
  unsigned    grid;
  cudaError_t err;

  if (np < 0 || dof < 1 || dof > GPUKIT_SGDIA_CUDA_MAX_INV_DOF || center < 0 || m < 0 || !singular || !OpsBlockValid(block)) return cudaErrorInvalidValue;
  if (np > 0 && (m != np * dof || !v || !inv)) return cudaErrorInvalidValue;
  err = cudaMemsetAsync(singular, 0xff, sizeof(long long), stream); /* -1: no singular block */
  if (err != cudaSuccess) return err;
  if (np == 0) return cudaSuccess;
  grid = OpsGrid(np, tpb);
  if (!grid) return cudaErrorInvalidConfiguration;
  switch (dof) {
#define GPUKIT_SGDIA_INV_CASE(D) \
  case D: \
    SGDIAInvertBlockKernel<D><<<grid, tpb, 0, stream>>>(np, center, m, v, inv, singular); \
    break;
    GPUKIT_SGDIA_OPS_DOFS(GPUKIT_SGDIA_INV_CASE)
#undef GPUKIT_SGDIA_INV_CASE
  default:
    return cudaErrorInvalidValue; /* not reached: dof was checked above */
  }
  return cudaGetLastError();
}
