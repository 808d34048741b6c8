/*
   The CSR matrix powers step (see gpukitcsrmpkkernels.h). A group of TPR lanes of a warp sums one row: the
   group walks the row in passes of 2 TPR entries, each lane loading two entries (values and column indices
   streamed with __ldcs, they are read once per step) before it gathers their x (through the read-only cache), so
   that a warp has 2 * 32 entries in flight per pass; the group's partial sums are then reduced by xor shuffles and
   its first lane applies the epilogue. The sum order differs from a sequential MatMult only in rounding.
*/
#include "gpukitcsrmpkkernels.h"

namespace
{

constexpr int      kBlock = GPUKIT_CSR_POWERS_BLOCK;
constexpr unsigned kFull  = 0xffffffffu;

template <bool XS>
__device__ __forceinline__ double CSRInput(const double *__restrict__ x, const double *__restrict__ xs, int c)
{
  if (XS) return __ldg(xs + c) * __ldg(x + c); /* the lean basis: dinv .* W[j], one product per entry */
  return __ldg(x + c);
}

/* Every thread of the block runs to the shuffles (rows past m sum nothing), so the full mask is valid. */
template <int TPR, bool XS>
__global__ void __launch_bounds__(kBlock) CSRPowersKernel(const GpukitCSRArgs a, const GpukitCSRPowersArgs e, const double *__restrict__ x, double *__restrict__ w1)
{
  constexpr int   rows  = kBlock / TPR; /* rows per block */
  const long long r     = (long long)blockIdx.x * rows + threadIdx.x / TPR;
  const int       lane  = (int)(threadIdx.x & (TPR - 1));
  const bool      valid = r < (long long)a.m;
  double          t0 = 0.0, t1 = 0.0, t;

  if (valid) {
    const int *__restrict__ col    = a.colidx;
    const double *__restrict__ val = a.val;
    const unsigned beg             = (unsigned)__ldg(a.rowptr + r), end = (unsigned)__ldg(a.rowptr + r + 1);

    /* unsigned: base + 2 TPR cannot overflow, as rowptr[m] <= INT_MAX */
    for (unsigned base = beg; base < end; base += 2 * TPR) {
      const unsigned k0 = base + lane, k1 = k0 + TPR;
      double         a0 = 0.0, a1 = 0.0;
      int            c0 = 0, c1 = 0;

      if (k0 < end) {
        a0 = __ldcs(val + k0);
        c0 = __ldcs(col + k0);
      }
      if (k1 < end) {
        a1 = __ldcs(val + k1);
        c1 = __ldcs(col + k1);
      }
      if (k0 < end) t0 += a0 * CSRInput<XS>(x, e.xs, c0);
      if (k1 < end) t1 += a1 * CSRInput<XS>(x, e.xs, c1);
    }
  }
  t = t0 + t1;
#pragma unroll
  for (int off = TPR / 2; off > 0; off >>= 1) t += __shfl_xor_sync(kFull, t, off);
  if (valid && lane == 0) {
    GpukitPowersEpilogueApply(e, (long long)r, t, w1);
  }
}

template <int TPR>
void CSRPowersLaunch(const GpukitCSRArgs &a, const GpukitCSRPowersArgs &e, const double *x, double *w1, cudaStream_t stream)
{
  const unsigned grid = (unsigned)(((long long)a.m + kBlock / TPR - 1) / (kBlock / TPR)); /* <= INT_MAX / 8 + 1 */

  if (e.xs) CSRPowersKernel<TPR, true><<<grid, kBlock, 0, stream>>>(a, e, x, w1);
  else CSRPowersKernel<TPR, false><<<grid, kBlock, 0, stream>>>(a, e, x, w1);
}

bool Overlaps(const void *out, const void *in)
{
  return in && out == in;
}

} // namespace

/* the smallest power of two >= mean/4: each lane takes about four entries of a row (two passes of two). Measured on
   an H200, 2D 5-point Laplacian with 16.7M rows (5.0 a row), one step with dinv / lean, us: 1 thread 589 / 692,
   2 threads 549 / 484, 4 threads 721 / 617, 8 threads 1299 / 1105 (cuSPARSE's MatMult alone: 502); 3D 7-point,
   257^3: 1 thread 1442 / 2004, 2 threads 651 / 665, 4 threads 765 / 677, 8 threads 1292 / 1129 (cuSPARSE: 641) */
int GpukitCSRPowersThreadsPerRow(long long m, long long nnz)
{
  const double quarter = m > 0 && nnz > 0 ? 0.25 * (double)nnz / (double)m : 0.0;
  int          tpr     = 1;

  while (tpr < 32 && (double)tpr < quarter) tpr *= 2;
  return tpr;
}

cudaError_t GpukitCSRPowersCUDA(const GpukitCSRArgs *a, const GpukitCSRPowersArgs *e, const double *x, double *w1, int tpr, cudaStream_t stream)
{
  if (!a || !e || a->m < 0 || a->nnz < 0) return cudaErrorInvalidValue;
  if (tpr != 0 && tpr != 1 && tpr != 2 && tpr != 4 && tpr != 8 && tpr != 16 && tpr != 32) return cudaErrorInvalidValue;
  if ((e->dinv == NULL) != (e->v1 == NULL)) return cudaErrorInvalidValue;
  if (a->m == 0) return cudaSuccess;
  if (!a->rowptr || !x || !w1 || (a->nnz > 0 && (!a->colidx || !a->val))) return cudaErrorInvalidValue;
  if (Overlaps(w1, x) || Overlaps(w1, e->xs) || Overlaps(w1, e->w0) || Overlaps(w1, e->wm1) || Overlaps(w1, e->dinv) || Overlaps(w1, e->v1)) return cudaErrorInvalidValue;
  if (e->v1 && (Overlaps(e->v1, x) || Overlaps(e->v1, e->xs) || Overlaps(e->v1, e->w0) || Overlaps(e->v1, e->wm1) || Overlaps(e->v1, e->dinv))) return cudaErrorInvalidValue;
  if (!tpr) tpr = GpukitCSRPowersThreadsPerRow(a->m, a->nnz);
  switch (tpr) {
  case 1:
    CSRPowersLaunch<1>(*a, *e, x, w1, stream);
    break;
  case 2:
    CSRPowersLaunch<2>(*a, *e, x, w1, stream);
    break;
  case 4:
    CSRPowersLaunch<4>(*a, *e, x, w1, stream);
    break;
  case 8:
    CSRPowersLaunch<8>(*a, *e, x, w1, stream);
    break;
  case 16:
    CSRPowersLaunch<16>(*a, *e, x, w1, stream);
    break;
  default:
    CSRPowersLaunch<32>(*a, *e, x, w1, stream);
  }
  return cudaGetLastError();
}
