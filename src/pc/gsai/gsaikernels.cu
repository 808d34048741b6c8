/*
   Device kernels of PCGSAI's set-up (see gsaikernels.h). Row-wise steps run one warp per row. The local problems
   come in three size classes: small ones (at most GPUKIT_GSAI_WARP_MAX pattern entries, at most
   GPUKIT_GSAI_SMALL_WS doubles) are gathered and solved by one warp each in shared memory, with no global workspace;
   larger ones are gathered into a global workspace, at an exact offset from a prefix sum of their sizes, and solved
   by one block each (a block size of GPUKIT_GSAI_LARGE_NT, or of GPUKIT_GSAI_HUGE_NT for the huge class: the
   tuner's choice, GPUKIT_GSAI_BLOCK_THREADS and GPUKIT_GSAI_HUGE_THREADS to start with). The same
   device functions serve all classes (a Group of NT threads: a warp, or a block). In the block solve every warp
   applies the Householder reflector of a column to its own share of the remaining columns, so that a column costs
   one reduction and a few barriers. Every reduction leaves the same value in every thread, so the threads of a
   group take the same branches. Scans and selections are CUB's, with their temporary storage from the library's
   stream-ordered memory pool (src/sys/gpukitpool.h); nothing synchronises the stream unless its comment says so. The
   generic CSR steps (transpose, permutations, row pointers from lengths) are the library's
   (src/mat/utils/gpukitcsropskernels.cu).
*/
#include <climits>
#include <cfloat>
#include <cstdint>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cub/device/device_reduce.cuh>
#include <thrust/execution_policy.h>
#include <thrust/binary_search.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include "gpukitpool.h"
#include "gsaikernels.h"

#define GSAI_TRY(call) \
  do { \
    cudaError_t err_ = (call); \
    if (err_ != cudaSuccess) return err_; \
  } while (0)

namespace
{

constexpr unsigned FULL          = 0xffffffffu;
constexpr int      WARPS_PER_BLK = 8;        /* warp-per-row kernels: 256 threads per block */
constexpr int      SMEM_LIMIT    = 48 * 1024; /* dynamic shared memory of the small solve, without opt-in */
constexpr int      HUGE_PW       = 8;         /* huge class: reflectors per panel */
constexpr int      HUGE_RW       = 32;        /* huge class: a column in registers, n1 <= 32 HUGE_RW (else unblocked) */

__device__ inline double WarpSum(double v)
{
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL, v, o); /* a + b == b + a: every lane gets the same sum */
  return v;
}

__device__ inline long long WarpSumLL(long long v)
{
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL, v, o);
  return v;
}

__device__ inline double WarpMax(double v)
{
  for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(FULL, v, o));
  return v;
}

__device__ inline int WarpMin(int v)
{
  for (int o = 16; o > 0; o >>= 1) v = min(v, __shfl_xor_sync(FULL, v, o));
  return v;
}

/* atomicMax that skips the atomic when the value cannot raise the maximum (most rows) */
__device__ inline void RaiseMax(int *m, int v)
{
  if (v > *(volatile int *)m) atomicMax(m, v);
}

inline unsigned Blocks(long long work, int per)
{
  return (unsigned)((work + per - 1) / per);
}

/* NT threads on one local problem: one warp (NT = 32) or one block (NT > 32, a multiple of 32) */
template <int NT>
struct Group {
  int t; /* thread in the group */
  __device__ explicit Group(int tid) : t(tid) { }
  /* sum over the group, the same in every thread; red: NT/32 doubles of shared memory */
  __device__ double Sum(double v, double *red)
  {
    double s = 0.0;
    v        = WarpSum(v);
    __syncthreads(); /* the previous Sum() has read red */
    if ((t & 31) == 0) red[t >> 5] = v;
    __syncthreads();
    for (int w = 0; w < NT / 32; w++) s += red[w];
    return s;
  }
  __device__ void Sync() { __syncthreads(); }
};

template <>
struct Group<32> {
  int t;
  __device__ explicit Group(int lane) : t(lane) { }
  __device__ double Sum(double v, double *) { return WarpSum(v); }
  __device__ void   Sync() { __syncwarp(); }
};

/* ------------------------------------------------------------------------------------------------------
   Selection (threshold, lower part, cap), one warp per row
   ------------------------------------------------------------------------------------------------------ */
template <bool FILL>
__global__ void SelectKernel(int n, const int *__restrict__ ptr, const int *__restrict__ col, const double *__restrict__ val, const double *__restrict__ w, GpukitGSAISelectArgs a, int *__restrict__ cnt, const int *__restrict__ optr, int *__restrict__ ocol, double *__restrict__ ow)
{
  const int k = (int)((blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (k >= n) return; /* the whole warp */
  const int     e0 = ptr[k], len = ptr[k + 1] - e0, kd = k + a.coff; /* the diagonal's column */
  const int    *c       = col + e0;
  const double *v       = val + e0;
  double        thr     = 0.0;
  int           ncand   = 0;
  bool          hasdiag = false;

  if (a.threshold) {
    double amax = 0.0;
    for (int e = lane; e < len; e += 32) amax = fmax(amax, fabs(v[e]));
    thr = (1.0 - a.tau) * WarpMax(amax);
  }
  auto cand = [&](int e) -> bool {
    const int j = c[e];
    if (j == kd || (a.lower && j > kd)) return false;
    return !a.threshold || fabs(v[e]) > thr;
  };
  auto weight = [&](int e) -> double { return w ? w[e0 + e] : fabs(v[e]); };
  for (int b = 0; b < len; b += 32) {
    const int  e  = b + lane;
    const bool ic = e < len && cand(e), id = e < len && c[e] == kd;
    ncand += __popc(__ballot_sync(FULL, ic));
    hasdiag = hasdiag || __ballot_sync(FULL, id) != 0;
  }
  const bool capped = a.cap > 0 && ncand + 1 > a.cap;
  const int  keepn  = capped ? a.cap - 1 : ncand;
  if (!FILL) {
    if (lane == 0) cnt[k] = keepn + 1;
    return;
  }
  const int o   = optr[k];
  int       pos = 0, nlt = 0;
  double    dw = 0.0;
  for (int b = 0; b < len; b += 32) {
    const int e    = b + lane;
    bool      keep = e < len && cand(e);
    if (keep && capped) { /* rank among the candidates: larger float weight first, then smaller column */
      const float we   = (float)weight(e);
      int         rank = 0;
      for (int f = 0; f < len; f++) {
        if (f == e || !cand(f)) continue;
        const float wf = (float)weight(f);
        if (wf > we || (wf == we && c[f] < c[e])) rank++;
      }
      keep = rank < keepn;
    }
    const unsigned bk = __ballot_sync(FULL, keep);
    if (keep) {
      const int q = pos + __popc(bk & ((1u << lane) - 1u)) + (c[e] > kd ? 1 : 0); /* room for the diagonal */
      ocol[o + q] = c[e];
      if (ow) ow[o + q] = weight(e);
    }
    if (e < len && c[e] == kd) dw = weight(e);
    nlt += __popc(__ballot_sync(FULL, keep && c[e] < kd));
    pos += __popc(bk);
  }
  dw = WarpSum(dw); /* one lane holds it, the others 0 */
  if (lane == 0) {
    ocol[o + nlt] = kd;
    if (ow) ow[o + nlt] = hasdiag ? dw : 0.0;
  }
}

/* ------------------------------------------------------------------------------------------------------
   Union of rows by a warp-wide merge: the cursors of the rows being merged are spread over the lanes
   ------------------------------------------------------------------------------------------------------ */
template <bool FILL>
__global__ void UnionKernel(int n, const int *__restrict__ sptr, const int *__restrict__ scol, const double *__restrict__ sw, const int *__restrict__ tptr, const int *__restrict__ tcol, const double *__restrict__ tw, int *__restrict__ cur, int *__restrict__ cnt, const int *__restrict__ optr, int *__restrict__ ocol, double *__restrict__ ow)
{
  const int k = (int)((blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (k >= n) return;
  const int  s0 = sptr[k], ns = sptr[k + 1] - s0;
  const bool weights = FILL && ow && sw && tw;
  int        i       = 0;

  for (int c = lane; c < ns; c += 32) cur[s0 + c] = tptr[scol[s0 + c]];
  for (;;) {
    int m = INT_MAX;
    for (int c = lane; c < ns; c += 32) {
      const int e = cur[s0 + c];
      if (e < tptr[scol[s0 + c] + 1]) m = min(m, tcol[e]);
    }
    m = WarpMin(m);
    if (m == INT_MAX) break;
    double ws = 0.0;
    for (int c = lane; c < ns; c += 32) {
      const int e = cur[s0 + c];
      if (e < tptr[scol[s0 + c] + 1] && tcol[e] == m) {
        if (weights) ws += sw[s0 + c] * tw[e];
        cur[s0 + c] = e + 1;
      }
    }
    if (FILL) {
      if (weights) ws = WarpSum(ws);
      if (lane == 0) {
        ocol[optr[k] + i] = m;
        if (weights) ow[optr[k] + i] = ws;
      }
    }
    i++;
  }
  if (!FILL && lane == 0) cnt[k] = i;
}

/*
   The merge that finds I, the sorted union of the columns of the rows J[0..n2) of B, one warp: lane l owns the rows
   J[l + 32 r], r < R (n2 <= 32 R), with their cursors in registers, so that a step of the merge costs a warp minimum
   and the loads of the rows that advance. With FILL it also writes C(i, c) = B(J[c], I[i]), or 0, for every i < |I|
   and c < n2 (column-major, leading dimension ld: no zeroing pass), and *p = the position of k in I (-1: absent).
   Returns |I|.
*/
template <int R, bool FILL>
__device__ int WarpMerge(const int *__restrict__ J, int n2, const int *__restrict__ bptr, const int *__restrict__ bcol, const double *__restrict__ bval, int k, double *C, long long ld, int lane, int *p)
{
  int    e[R], end[R], col[R], i = 0;
  double val[R];

#pragma unroll
  for (int r = 0; r < R; r++) {
    const int c = lane + 32 * r;
    e[r] = end[r] = 0;
    col[r]        = INT_MAX;
    val[r]        = 0.0;
    if (c < n2) {
      const int row = J[c];
      e[r]          = bptr[row];
      end[r]        = bptr[row + 1];
      if (e[r] < end[r]) {
        col[r] = bcol[e[r]];
        if (FILL) val[r] = bval[e[r]];
      }
    }
  }
  if (FILL) *p = -1;
  for (;;) {
    int m = INT_MAX;
#pragma unroll
    for (int r = 0; r < R; r++) m = min(m, col[r]);
    m = WarpMin(m);
    if (m == INT_MAX) break;
    if (FILL && m == k) *p = i;
#pragma unroll
    for (int r = 0; r < R; r++) {
      const int  c   = lane + 32 * r;
      const bool hit = col[r] == m;
      if (FILL && c < n2) C[i + c * ld] = hit ? val[r] : 0.0;
      if (hit) {
        e[r]++;
        col[r] = INT_MAX;
        if (e[r] < end[r]) {
          col[r] = bcol[e[r]];
          if (FILL) val[r] = bval[e[r]];
        }
      }
    }
    i++;
  }
  return i;
}

/* the same merge for any n2, the cursors in cur (n2 ints of global scratch) */
template <bool FILL>
__device__ int WarpMergeGlobal(const int *__restrict__ J, int n2, const int *__restrict__ bptr, const int *__restrict__ bcol, const double *__restrict__ bval, int k, double *C, long long ld, int *__restrict__ cur, int lane, int *p)
{
  int i = 0;

  for (int c = lane; c < n2; c += 32) cur[c] = bptr[J[c]];
  if (FILL) *p = -1;
  for (;;) {
    int m = INT_MAX;
    for (int c = lane; c < n2; c += 32) {
      const int e = cur[c];
      if (e < bptr[J[c] + 1]) m = min(m, bcol[e]);
    }
    m = WarpMin(m);
    if (m == INT_MAX) break;
    if (FILL && m == k) *p = i;
    for (int c = lane; c < n2; c += 32) {
      const int  e   = cur[c];
      const bool hit = e < bptr[J[c] + 1] && bcol[e] == m;
      if (FILL) C[i + c * ld] = hit ? bval[e] : 0.0;
      if (hit) cur[c] = e + 1;
    }
    i++;
  }
  return i;
}

/* WarpMerge with the register cursors when they fit (n2 <= 512), else with cur */
template <bool FILL>
__device__ int WarpMergeAny(const int *J, int n2, const int *bptr, const int *bcol, const double *bval, int k, double *C, long long ld, int *cur, int lane, int *p)
{
  if (n2 <= 32) return WarpMerge<1, FILL>(J, n2, bptr, bcol, bval, k, C, ld, lane, p);
  if (n2 <= 128) return WarpMerge<4, FILL>(J, n2, bptr, bcol, bval, k, C, ld, lane, p);
  if (n2 <= 512) return WarpMerge<16, FILL>(J, n2, bptr, bcol, bval, k, C, ld, lane, p);
  return WarpMergeGlobal<FILL>(J, n2, bptr, bcol, bval, k, C, ld, cur, lane, p);
}

/* ------------------------------------------------------------------------------------------------------
   Is J the pattern of B?
   ------------------------------------------------------------------------------------------------------ */
__global__ void SamePatternKernel(int n, int nnzb, const int *__restrict__ bptr, const int *__restrict__ bcol, const int *__restrict__ jptr, const int *__restrict__ jcol, GpukitGSAIInfo *info)
{
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (jptr[n] != nnzb) {
    if (t == 0) info->jdiffers = 1;
    return;
  }
  if ((t <= n && jptr[t] != bptr[t]) || (t < nnzb && jcol[t] != bcol[t])) info->jdiffers = 1;
}

/* ------------------------------------------------------------------------------------------------------
   Plan: the size class and workspace of every row, one warp per row
   ------------------------------------------------------------------------------------------------------ */
__global__ void PlanKernel(GpukitGSAIProblem P, int *__restrict__ cls, long long *__restrict__ wsz, GpukitGSAIInfo *info)
{
  const int k = (int)((blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (k >= P.n) return;
  const int  j0 = P.jptr[k], n2 = P.jptr[k + 1] - j0;
  const int *J  = P.jcol + j0;
  int        n1, ld;
  bool       small;

  if (P.spd) {
    n1 = ld = n2;
    small   = n2 <= GPUKIT_GSAI_WARP_MAX && n2 * n2 <= GPUKIT_GSAI_SMALL_WS;
  } else {
    /* a bound of |I| without a merge: the sum of the row lengths (at most n); the exact |I| only when needed */
    long long s = 0;
    for (int c = lane; c < n2; c += 32) s += P.bptr[J[c] + 1] - P.bptr[J[c]];
    s  = WarpSumLL(s);
    ld = (int)(s < P.n ? s : P.n);
    n1 = -1;
    if (!(n2 <= GPUKIT_GSAI_WARP_MAX && (long long)ld * (n2 + 1) <= GPUKIT_GSAI_SMALL_WS)) {
      n1 = ld = WarpMergeAny<false>(J, n2, P.bptr, P.bcol, nullptr, k, nullptr, 0, P.cur + j0, lane, nullptr);
    }
    small = n2 <= GPUKIT_GSAI_WARP_MAX && (long long)ld * (n2 + 1) <= GPUKIT_GSAI_SMALL_WS;
  }
  if (lane) return;
  const long long ws = P.spd ? (long long)n2 * n2 : (long long)ld * (n2 + 1);
  if (!P.spd) P.n1[k] = ld;
  cls[k] = small ? 0 : ((long long)ld * n2 >= GPUKIT_GSAI_HUGE_WORK ? 2 : 1);
  wsz[k] = small ? 0 : ws;
  RaiseMax(&info->maxn2, n2);
  if (small) RaiseMax(&info->smallws, (int)ws);
  else RaiseMax(&info->maxn1, n1 >= 0 ? n1 : n2);
  if (small && P.spd) RaiseMax(&info->maxn1, n2);
}

struct IsClass {
  const int               *cls;
  int                      want;
  __host__ __device__ bool operator()(int k) const { return cls[k] == want; }
};

/* the flops of a row's local problem, as the host counts them (small rows: from the bound of n1) */
struct RowFlops {
  GpukitGSAIProblem           P;
  __host__ __device__ double operator()(int k) const
  {
    const double n2 = P.jptr[k + 1] - P.jptr[k];
    if (P.spd) return n2 * n2 * n2 / 3.0 + 2.0 * n2 * n2;
    const double n1 = P.n1[k];
    return 2.0 * n1 * n2 * n2 + 4.0 * n1 * n2;
  }
};

__global__ void InfoInitKernel(GpukitGSAIInfo *info)
{
  if (blockIdx.x || threadIdx.x) return;
  info->wtotal    = 0;
  info->flops     = 0.0;
  info->nnzj      = 0;
  info->jdiffers  = 0;
  info->ns        = 0;
  info->nl        = 0;
  info->nh        = 0;
  info->smallws   = 0;
  info->maxn1     = 0;
  info->maxn2     = 0;
  info->nfallback = 0;
  info->failrow   = INT_MAX;
}

/* ------------------------------------------------------------------------------------------------------
   Gathers of the large classes: the dense local problem of each row of two lists (the huge rows first) into its
   workspace slice, every entry written (no zeroing pass), one warp per row
   ------------------------------------------------------------------------------------------------------ */

/* general: C (n1 x n2, column-major) with C(i, c) = B(J[c], I[i]), I the sorted union of the columns of the rows J;
   pos[k] = the position of k in I (-1 if absent) */
__global__ void GatherGeneralKernel(GpukitGSAIProblem P, const int *__restrict__ rows, int nrows, const int *__restrict__ rows2, int nrows2, double *__restrict__ ws, long long base)
{
  const int idx = (int)((blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (idx >= nrows + nrows2) return;
  const int k = idx < nrows ? rows[idx] : rows2[idx - nrows], j0 = P.jptr[k], n2 = P.jptr[k + 1] - j0, n1 = P.n1[k];
  int       p;

  (void)WarpMergeAny<true>(P.jcol + j0, n2, P.bptr, P.bcol, P.bval, k, ws + (P.woff[k] - base), n1, P.cur + j0, lane, &p);
  if (lane == 0) P.pos[k] = p;
}

/* spd: S (n2 x n2, column-major) with S(c, t) = A(J[c], J[t]) where stored, else 0 */
__global__ void GatherSPDKernel(GpukitGSAIProblem P, const int *__restrict__ rows, int nrows, const int *__restrict__ rows2, int nrows2, double *__restrict__ ws, long long base)
{
  const int idx = (int)((blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (idx >= nrows + nrows2) return;
  const int  k = idx < nrows ? rows[idx] : rows2[idx - nrows], j0 = P.jptr[k], n2 = P.jptr[k + 1] - j0;
  const int *J = P.jcol + j0;
  double    *S = ws + (P.woff[k] - base);

  for (int c = lane; c < n2; c += 32) {
    const int r = J[c];
    int       e = P.bptr[r];
    const int end = P.bptr[r + 1];
    for (int t = 0; t < n2; t++) {
      const int jt = J[t];
      while (e < end && P.bcol[e] < jt) e++;
      S[c + (long long)t * n2] = (e < end && P.bcol[e] == jt) ? P.bval[e] : 0.0;
    }
  }
}

/* ------------------------------------------------------------------------------------------------------
   Local solves (GSAILeastSquares() and GSAICholeskyRow() in gsai.c): 0 solved, 1 fall back
   ------------------------------------------------------------------------------------------------------ */

/* min ||C x - e_p|| for C n1 x n2 (leading dimension ld, overwritten), rhs n1 doubles of work, x n2. The reflector of
   column c is applied to the columns c+1..n2 (n2: the right-hand side) by the warps of the group, each warp to its
   own columns: one reduction of the group per column, and a warp reduction per column pair. */
/* the end of both Householder solves: x = R^{-1} rhs(0:n2), R in the upper triangle of C (by columns); 1 when x is not
   finite */
template <int NT>
__device__ int BackSubstitute(Group<NT> &g, double *red, int ld, int n2, const double *C, double *rhs, double *x)
{
  for (int c = n2 - 1; c >= 0; c--) { /* R x = (Q^T e_p)(0:n2), by columns */
    g.Sync();
    const double xc = rhs[c] / C[c + (long long)c * ld];
    for (int i = g.t; i < c; i += NT) rhs[i] -= C[i + (long long)c * ld] * xc;
    if (g.t == 0) x[c] = xc;
  }
  g.Sync();
  double bad = 0.0;
  for (int c = g.t; c < n2; c += NT)
    if (!isfinite(x[c])) bad += 1.0;
  return g.Sum(bad, red) > 0.0 ? 1 : 0;
}

/* The Householder reflector of column c of C (v, rows c..n1-1), in place: v[c] becomes v[c] - alpha, so that v is the
   reflector and R(c,c) = alpha; *vtv = v.v. Returns 1 for a zero column (every thread alike: the sum is the group's). */
template <int NT>
__device__ int HouseholderReflector(Group<NT> &g, double *red, int n1, int c, double *v, double *alpha, double *vtv)
{
  double s = 0.0;
  for (int i = c + g.t; i < n1; i += NT) s += v[i] * v[i];
  s                 = g.Sum(s, red);
  const double norm = sqrt(s);
  if (norm == 0.0) return 1;
  const double x0 = v[c];
  *alpha          = x0 >= 0.0 ? -norm : norm;
  *vtv            = 2.0 * norm * (norm + fabs(x0));
  g.Sync(); /* every thread has read v[c] */
  if (g.t == 0) v[c] = x0 - *alpha;
  g.Sync();
  return 0;
}

/* wc -= (2 v.wc / vtv) v over rows c..n1-1, by one warp */
__device__ __forceinline__ void ApplyReflectorWarp(const double *v, double *wc, int c, int n1, int lane, double vtv)
{
  double d = 0.0;
  for (int i = c + lane; i < n1; i += 32) d += v[i] * wc[i];
  d = WarpSum(d) * (2.0 / vtv);
  for (int i = c + lane; i < n1; i += 32) wc[i] -= d * v[i];
}

template <int NT>
__device__ int HouseholderSolve(Group<NT> &g, double *red, int n1, int ld, int n2, double *C, double *rhs, int p, double *x)
{
  constexpr int NW   = NT / 32;
  const int     lane = g.t & 31, warp = g.t >> 5;
  double        rmax = 0.0, rmin = DBL_MAX;

  if (p < 0 || n1 < n2) return 1;
  for (int i = g.t; i < n1; i += NT) rhs[i] = (i == p) ? 1.0 : 0.0;
  g.Sync();
  for (int c = 0; c < n2; c++) {
    double *v = C + (long long)c * ld;
    double  alpha, vtv;

    if (HouseholderReflector(g, red, n1, c, v, &alpha, &vtv)) return 1;
    for (int c2 = c + 1 + warp; c2 <= n2; c2 += NW) ApplyReflectorWarp(v, (c2 < n2) ? C + (long long)c2 * ld : rhs, c, n1, lane, vtv); /* c2 = n2: the right-hand side */
    g.Sync(); /* every warp is done with v */
    if (g.t == 0) v[c] = alpha; /* R(c,c); the reflector is no longer needed */
    g.Sync();
    rmax = fmax(rmax, fabs(alpha));
    rmin = fmin(rmin, fabs(alpha));
  }
  if (rmin <= GPUKIT_GSAI_RCOND_TOL * rmax) return 1;
  return BackSubstitute(g, red, ld, n2, C, rhs, x);
}

/*
   The same least-squares problem for the huge class, with the reflectors applied a panel of PW columns at a time: the
   panel's columns are factored as above (each reflector applied at once to the rest of the panel), then every warp
   takes its share of the remaining columns (and the right-hand side), holds a column in registers (n1 <= 32 RW) and
   applies the PW reflectors to it in order before writing it back. The arithmetic is that of HouseholderSolve()
   (the same reflectors applied in the same order), but a column is read and written once per panel instead of once
   per reflector; the reflectors, read by every warp, stay in L1. The reflector's first entry stays in C during the
   panel, R's diagonal is written after it.
*/
template <int NT, int PW, int RW>
__device__ int HouseholderSolvePanel(Group<NT> &g, double *red, int n1, int ld, int n2, double *C, double *rhs, int p, double *x)
{
  constexpr int    NW   = NT / 32;
  const int        lane = g.t & 31, warp = g.t >> 5;
  double           rmax = 0.0, rmin = DBL_MAX;
  __shared__ double alph[PW], vt[PW];

  if (p < 0 || n1 < n2) return 1;
  for (int i = g.t; i < n1; i += NT) rhs[i] = (i == p) ? 1.0 : 0.0;
  g.Sync();
  for (int c0 = 0; c0 < n2; c0 += PW) {
    const int pw = min(PW, n2 - c0);
    /* the panel */
    for (int j = 0; j < pw; j++) {
      const int c = c0 + j;
      double   *v = C + (long long)c * ld;
      double    alpha, vtv;

      if (HouseholderReflector(g, red, n1, c, v, &alpha, &vtv)) return 1;
      if (g.t == 0) { /* read after the g.Sync() below */
        alph[j] = alpha;
        vt[j]   = vtv;
      }
      for (int c2 = c + 1 + warp; c2 < c0 + pw; c2 += NW) ApplyReflectorWarp(v, C + (long long)c2 * ld, c, n1, lane, vtv);
      g.Sync();
      rmax = fmax(rmax, fabs(alpha));
      rmin = fmin(rmin, fabs(alpha));
    }
    /* the remaining columns and the right-hand side (c2 = n2), each in the registers of one warp */
    for (int c2 = c0 + pw + warp; c2 <= n2; c2 += NW) {
      double *wc = (c2 < n2) ? C + (long long)c2 * ld : rhs;
      double  w[RW];
#pragma unroll
      for (int r = 0; r < RW; r++) {
        const int i = c0 + lane + 32 * r;
        w[r]        = i < n1 ? wc[i] : 0.0;
      }
      for (int j = 0; j < pw; j++) {
        const int     c = c0 + j;
        const double *v = C + (long long)c * ld;
        double        d = 0.0;
#pragma unroll
        for (int r = 0; r < RW; r++) {
          const int i = c0 + lane + 32 * r;
          if (i >= c && i < n1) d += v[i] * w[r];
        }
        d = WarpSum(d) * (2.0 / vt[j]);
#pragma unroll
        for (int r = 0; r < RW; r++) {
          const int i = c0 + lane + 32 * r;
          if (i >= c && i < n1) w[r] -= d * v[i];
        }
      }
#pragma unroll
      for (int r = 0; r < RW; r++) {
        const int i = c0 + lane + 32 * r;
        if (i < n1) wc[i] = w[r];
      }
    }
    g.Sync(); /* every warp is done with the panel's reflectors */
    if (g.t < pw) C[(c0 + g.t) + (long long)(c0 + g.t) * ld] = alph[g.t]; /* R(c,c) */
    g.Sync();
  }
  if (rmin <= GPUKIT_GSAI_RCOND_TOL * rmax) return 1;
  return BackSubstitute(g, red, ld, n2, C, rhs, x);
}

template <int NT>
__device__ int CholeskyRow(Group<NT> &g, double *red, int n, double *S, double *x)
{
  for (int j = 0; j < n; j++) {
    double s = 0.0;
    for (int k = g.t; k < j; k += NT) s += S[j + (long long)k * n] * S[j + (long long)k * n];
    s                = g.Sum(s, red);
    const double sjj = S[j + (long long)j * n];
    double       d   = sjj - s;
    if (!(d > GPUKIT_GSAI_RCOND_TOL * sjj)) return 1;
    d = sqrt(d);
    for (int i = j + 1 + g.t; i < n; i += NT) {
      double t = S[i + (long long)j * n];
      for (int k = 0; k < j; k++) t -= S[i + (long long)k * n] * S[j + (long long)k * n];
      S[i + (long long)j * n] = t / d;
    }
    g.Sync(); /* every thread has read S(j,j) */
    if (g.t == 0) S[j + (long long)j * n] = d;
    g.Sync();
  }
  /* x = g / sqrt(g_last) with L L^T g = e_last: x_last = 1 / L_last, x_i = -(sum_{k>i} L(k,i) x_k) / L(i,i) */
  for (int i = g.t; i < n; i += NT) x[i] = 0.0;
  for (int k = n - 1; k >= 0; k--) {
    g.Sync();
    const double xk = (k == n - 1) ? 1.0 / S[k + (long long)k * n] : -x[k] / S[k + (long long)k * n];
    g.Sync(); /* every thread has read x[k] */
    for (int i = g.t; i < k; i += NT) x[i] += S[k + (long long)i * n] * xk;
    if (g.t == 0) x[k] = xk;
  }
  g.Sync();
  {
    double bad = 0.0;
    for (int c = g.t; c < n; c += NT)
      if (!isfinite(x[c])) bad += 1.0;
    if (g.Sum(bad, red) > 0.0) return 1;
  }
  return 0;
}

/* the end of a row: status, counts, and the first failure */
__device__ inline void RowDone(GpukitGSAIInfo *info, int *status, int k, int st)
{
  status[k] = st;
  if (st == GPUKIT_GSAI_FALLBACK) atomicAdd(&info->nfallback, 1);
  else if (st >= GPUKIT_GSAI_FAIL) atomicMin(&info->failrow, k);
}

/* general row k from its C (n1 x n2, leading dimension ld), or the fallback to the diagonal (GSAISolveRows()); PANEL (the
   huge class): the reflectors applied a panel at a time where a column fits the registers of a warp */
template <int NT, bool PANEL>
__device__ void SolveGeneral(Group<NT> &g, double *red, const GpukitGSAIProblem &P, int k, double *C, int ld, int n1, int p, double *vals, int *status, GpukitGSAIInfo *info)
{
  const int  j0 = P.jptr[k], n2 = P.jptr[k + 1] - j0;
  const int *J = P.jcol + j0;
  double    *x = vals + j0;

  int fail = -1;

  if constexpr (PANEL) {
    if (n1 <= 32 * HUGE_RW) fail = HouseholderSolvePanel<NT, HUGE_PW, HUGE_RW>(g, red, n1, ld, n2, C, C + (long long)n2 * ld, p, x);
  }
  if (fail < 0) fail = HouseholderSolve<NT>(g, red, n1, ld, n2, C, C + (long long)n2 * ld, p, x);
  if (!fail) {
    if (g.t == 0) RowDone(info, status, k, 0);
    return;
  }
  /* the diagonal-only least-squares solution b_kk / ||b_k||^2 */
  double s = 0.0, bkk = 0.0;
  for (int e = P.bptr[k] + g.t; e < P.bptr[k + 1]; e += NT) {
    s += P.bval[e] * P.bval[e];
    if (P.bcol[e] == k) bkk = P.bval[e];
  }
  s   = g.Sum(s, red);
  bkk = g.Sum(bkk, red);
  g.Sync();
  if (s == 0.0 || p < 0 || bkk == 0.0) {
    if (g.t == 0) RowDone(info, status, k, GPUKIT_GSAI_FAIL + (s == 0.0 ? 1 : (p < 0 ? 2 : 3)));
    return;
  }
  for (int c = g.t; c < n2; c += NT) x[c] = (J[c] == k) ? bkk / s : 0.0;
  if (g.t == 0) RowDone(info, status, k, GPUKIT_GSAI_FALLBACK);
}

/* spd row k from its S = A(J,J), or the fallback 1/sqrt(a_kk) */
template <int NT>
__device__ void SolveSPD(Group<NT> &g, double *red, const GpukitGSAIProblem &P, int k, double *S, double *vals, int *status, GpukitGSAIInfo *info)
{
  const int  j0 = P.jptr[k], n2 = P.jptr[k + 1] - j0;
  const int *J = P.jcol + j0;
  double    *x = vals + j0;

  /* S(c,t) = sign(a) min(|a|, |b|) for a = A(J[c],J[t]), b = A(J[t],J[c]) of the same sign, else 0, into the lower
     triangle that CholeskyRow() reads (GSAISymmetricEntry(), GSAISolveRows()): A's lower triangle for a symmetric A */
  for (long long idx = g.t; idx < (long long)n2 * n2; idx += NT) {
    const int c = (int)(idx % n2), t = (int)(idx / n2);
    if (c > t) {
      const double a = S[c + (long long)t * n2], b = S[t + (long long)c * n2];
      S[c + (long long)t * n2] = (a > 0.0 && b > 0.0) ? fmin(a, b) : ((a < 0.0 && b < 0.0) ? fmax(a, b) : 0.0);
    }
  }
  g.Sync();
  if (!CholeskyRow<NT>(g, red, n2, S, x)) {
    if (g.t == 0) RowDone(info, status, k, 0);
    return;
  }
  double akk = 0.0;
  for (int e = P.bptr[k] + g.t; e < P.bptr[k + 1]; e += NT)
    if (P.bcol[e] == k) akk = P.bval[e];
  akk = g.Sum(akk, red);
  g.Sync();
  if (!(akk > 0.0)) {
    if (g.t == 0) RowDone(info, status, k, GPUKIT_GSAI_FAIL + 4);
    return;
  }
  for (int c = g.t; c < n2; c += NT) x[c] = (J[c] == k) ? 1.0 / sqrt(akk) : 0.0;
  if (g.t == 0) RowDone(info, status, k, GPUKIT_GSAI_FALLBACK);
}

/* small class: one warp per row of rows[0..nrows), its problem gathered into its wsw doubles of shared memory. Lane c
   owns row J[c] of B (n2 <= 32): the merge keeps its cursor in registers and writes every entry of C. */
template <bool SPD>
__global__ void SmallKernel(GpukitGSAIProblem P, const int *__restrict__ rows, int nrows, int wsw, double *vals, int *status, GpukitGSAIInfo *info)
{
  extern __shared__ double smem[];
  const int                w = threadIdx.x >> 5, lane = threadIdx.x & 31, idx = blockIdx.x * (blockDim.x >> 5) + w;
  if (idx >= nrows) return; /* the whole warp */
  const int  k = rows[idx], j0 = P.jptr[k], n2 = P.jptr[k + 1] - j0;
  const int *J = P.jcol + j0;
  double    *W = smem + (size_t)w * wsw;
  Group<32>  g(lane);

  if (!SPD) {
    const int ld = P.n1[k];
    int       p;
    const int i = WarpMerge<1, true>(J, n2, P.bptr, P.bcol, P.bval, k, W, ld, lane, &p);
    __syncwarp();
    SolveGeneral<32, false>(g, nullptr, P, k, W, ld, i, p, vals, status, info);
    if (lane == 0) RaiseMax(&info->maxn1, i);
  } else {
    if (lane < n2) {
      const int r = J[lane], end = P.bptr[r + 1];
      int       e = P.bptr[r];
      for (int t = 0; t < n2; t++) {
        const int jt = J[t];
        while (e < end && P.bcol[e] < jt) e++;
        W[lane + t * n2] = (e < end && P.bcol[e] == jt) ? P.bval[e] : 0.0;
      }
    }
    __syncwarp();
    SolveSPD<32>(g, nullptr, P, k, W, vals, status, info);
  }
}

/* large and huge classes: one block of NT threads per row of rows[0..nrows), its problem in the global workspace */
template <int NT, bool PANEL>
__global__ void __launch_bounds__(NT) BlockKernel(GpukitGSAIProblem P, const int *__restrict__ rows, int nrows, double *ws, long long base, double *vals, int *status, GpukitGSAIInfo *info)
{
  __shared__ double red[NT / 32];
  Group<NT>         g(threadIdx.x);
  const int         k = rows[blockIdx.x];
  double           *W = ws + (P.woff[k] - base);

  (void)nrows;
  if (P.spd) SolveSPD<NT>(g, red, P, k, W, vals, status, info);
  else {
    const int n1 = P.n1[k];
    SolveGeneral<NT, PANEL>(g, red, P, k, W, n1, n1, P.pos[k], vals, status, info);
  }
}

/* BlockKernel for the large class (lnt threads, one of GPUKIT_GSAI_LARGE_NT) and for the huge class (hnt threads, one of
   GPUKIT_GSAI_HUGE_NT, the reflectors a panel at a time); other block sizes give cudaErrorInvalidValue */
cudaError_t LaunchLarge(int lnt, unsigned nblocks, cudaStream_t stream, const GpukitGSAIProblem &P, const int *rows, int nrows, double *ws, long long base, double *vals, int *status, GpukitGSAIInfo *info)
{
  switch (lnt) {
  case 64:
    BlockKernel<64, false><<<nblocks, 64, 0, stream>>>(P, rows, nrows, ws, base, vals, status, info);
    break;
  case 128:
    BlockKernel<128, false><<<nblocks, 128, 0, stream>>>(P, rows, nrows, ws, base, vals, status, info);
    break;
  case 256:
    BlockKernel<256, false><<<nblocks, 256, 0, stream>>>(P, rows, nrows, ws, base, vals, status, info);
    break;
  default:
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t LaunchHuge(int hnt, unsigned nblocks, cudaStream_t stream, const GpukitGSAIProblem &P, const int *rows, int nrows, double *ws, long long base, double *vals, int *status, GpukitGSAIInfo *info)
{
  switch (hnt) {
  case 256:
    BlockKernel<256, true><<<nblocks, 256, 0, stream>>>(P, rows, nrows, ws, base, vals, status, info);
    break;
  case 512:
    BlockKernel<512, true><<<nblocks, 512, 0, stream>>>(P, rows, nrows, ws, base, vals, status, info);
    break;
  default:
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

bool IsLargeNT(int nt)
{
  return nt == 64 || nt == 128 || nt == 256;
}

bool IsHugeNT(int nt)
{
  return nt == 256 || nt == 512;
}

/* ------------------------------------------------------------------------------------------------------
   Several ranks: the held rows (GpukitGSAIHeldRowsCUDA()), one thread per row (rows of a few tens of entries)
   ------------------------------------------------------------------------------------------------------ */
__global__ void HeldOwnKernel(int u0, int n, const int *__restrict__ di, const int *__restrict__ dj, const double *__restrict__ da, const int *__restrict__ oi, const int *__restrict__ oj, const double *__restrict__ oa, const int *__restrict__ gmap, int *__restrict__ len, const int *__restrict__ bptr, int *__restrict__ bcol, double *__restrict__ bval)
{
  const int i = (int)(blockIdx.x * (long long)blockDim.x + threadIdx.x);
  if (i >= n) return;
  const int d0 = di[i], d1 = di[i + 1], o1 = oi ? oi[i + 1] : 0;
  int       a  = oi ? oi[i] : 0;
  if (!bptr) {
    len[u0 + i] = d1 - d0 + o1 - a;
    return;
  }
  int o = bptr[u0 + i];
  for (; a < o1 && gmap[oj[a]] < 0; a++, o++) { /* the other ranks' columns left of the own ones */
    bcol[o] = gmap[oj[a]];
    bval[o] = oa[a];
  }
  for (int e = d0; e < d1; e++, o++) {
    bcol[o] = dj[e];
    bval[o] = da[e];
  }
  for (; a < o1; a++, o++) {
    bcol[o] = gmap[oj[a]];
    bval[o] = oa[a];
  }
}

__global__ void HeldFetchedKernel(int ns, const int *__restrict__ srow, const int *__restrict__ sptr, const int *__restrict__ scol, const double *__restrict__ sval, int *__restrict__ len, const int *__restrict__ bptr, int *__restrict__ bcol, double *__restrict__ bval)
{
  const int k = (int)(blockIdx.x * (long long)blockDim.x + threadIdx.x);
  if (k >= ns) return;
  const int s0 = sptr[k], s1 = sptr[k + 1];
  if (!bptr) {
    len[srow[k]] = s1 - s0;
    return;
  }
  const int o = bptr[srow[k]] - s0;
  for (int e = s0; e < s1; e++) {
    bcol[o + e] = scol[e];
    bval[o + e] = sval[e];
  }
}

/* ------------------------------------------------------------------------------------------------------
   Several ranks: J split into M's diagonal and off-diagonal blocks (GpukitGSAISplitCUDA()), one thread per row
   ------------------------------------------------------------------------------------------------------ */
__global__ void SplitKernel(int n, const int *__restrict__ jptr, const int *__restrict__ jcol, int *__restrict__ dcnt, int *__restrict__ ocnt, const int *__restrict__ dptr, const int *__restrict__ optr, int nd, int *__restrict__ dcol, int *__restrict__ ocol, int *__restrict__ perm)
{
  const int k = (int)(blockIdx.x * (long long)blockDim.x + threadIdx.x);
  if (k >= n) return;
  const int j0 = jptr[k], j1 = jptr[k + 1];
  if (!dptr) {
    int d = 0;
    for (int e = j0; e < j1; e++) d += (jcol[e] >= 0 && jcol[e] < n) ? 1 : 0;
    dcnt[k] = d;
    ocnt[k] = j1 - j0 - d;
    return;
  }
  int d = dptr[k], o = optr[k];
  for (int e = j0; e < j1; e++) {
    const int c = jcol[e];
    if (c >= 0 && c < n) {
      dcol[d]   = c;
      perm[d++] = e;
    } else {
      ocol[o]        = c;
      perm[nd + o++] = e;
    }
  }
}

} // namespace

/* ------------------------------------------------------------------------------------------------------
   C interface
   ------------------------------------------------------------------------------------------------------ */
extern "C" cudaError_t GpukitGSAIInfoInit(GpukitGSAIInfo *dinfo, cudaStream_t stream)
{
  if (!dinfo) return cudaErrorInvalidValue;
  InfoInitKernel<<<1, 1, 0, stream>>>(dinfo);
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitGSAIInfoGet(const GpukitGSAIInfo *dinfo, GpukitGSAIInfo *hinfo, cudaStream_t stream)
{
  if (!dinfo || !hinfo) return cudaErrorInvalidValue;
  GSAI_TRY(cudaMemcpyAsync(hinfo, dinfo, sizeof(*hinfo), cudaMemcpyDeviceToHost, stream));
  return cudaStreamSynchronize(stream);
}

extern "C" cudaError_t GpukitGSAIHeldRowsCUDA(int nu, int u0, int n, const int *di, const int *dj, const double *da, const int *oi, const int *oj, const double *oa, const int *gmap, int ns, const int *srow, const int *sptr, const int *scol, const double *sval, int *len, const int *bptr, int *bcol, double *bval, cudaStream_t stream)
{
  if (nu < 0 || n < 0 || ns < 0 || u0 < 0 || u0 + n > nu || (n && !(di && dj && da)) || (oi && !(oj && oa && gmap)) || (ns && !(srow && sptr && scol && sval)) || (!bptr && !len) || (bptr && !(bcol && bval))) return cudaErrorInvalidValue;
  if (!bptr && nu) GSAI_TRY(cudaMemsetAsync(len, 0, (size_t)nu * sizeof(int), stream));
  if (n) HeldOwnKernel<<<Blocks(n, 256), 256, 0, stream>>>(u0, n, di, dj, da, oi, oj, oa, gmap, len, bptr, bcol, bval);
  GSAI_TRY(cudaGetLastError());
  if (ns) HeldFetchedKernel<<<Blocks(ns, 256), 256, 0, stream>>>(ns, srow, sptr, scol, sval, len, bptr, bcol, bval);
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitGSAISplitCUDA(int n, const int *jptr, const int *jcol, int *dcnt, int *ocnt, const int *dptr, const int *optr, int nd, int *dcol, int *ocol, int *perm, cudaStream_t stream)
{
  if (n < 0 || nd < 0 || (n && !(jptr && jcol)) || (!dptr && !(dcnt && ocnt)) || (dptr && !(optr && dcol && ocol && perm))) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  SplitKernel<<<Blocks(n, 256), 256, 0, stream>>>(n, jptr, jcol, dcnt, ocnt, dptr, optr, nd, dcol, ocol, perm);
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitGSAISelectCUDA(int n, const int *ptr, const int *col, const double *val, const double *w, const GpukitGSAISelectArgs *a, int *cnt, const int *optr, int *ocol, double *ow, cudaStream_t stream)
{
  if (n < 0 || !a || a->cap < 0 || (!optr && !cnt) || (optr && !ocol)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!optr) SelectKernel<false><<<Blocks(32LL * n, 256), 256, 0, stream>>>(n, ptr, col, val, w, *a, cnt, optr, ocol, ow);
  else SelectKernel<true><<<Blocks(32LL * n, 256), 256, 0, stream>>>(n, ptr, col, val, w, *a, cnt, optr, ocol, ow);
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitGSAIUnionCUDA(int n, const int *sptr, const int *scol, const double *sw, const int *tptr, const int *tcol, const double *tw, int *cur, int *cnt, const int *optr, int *ocol, double *ow, cudaStream_t stream)
{
  if (n < 0 || (!optr && !cnt) || (optr && !ocol)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!optr) UnionKernel<false><<<Blocks(32LL * n, 256), 256, 0, stream>>>(n, sptr, scol, sw, tptr, tcol, tw, cur, cnt, optr, ocol, ow);
  else UnionKernel<true><<<Blocks(32LL * n, 256), 256, 0, stream>>>(n, sptr, scol, sw, tptr, tcol, tw, cur, cnt, optr, ocol, ow);
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitGSAISamePatternCUDA(int n, int nnzb, const int *bptr, const int *bcol, const int *jptr, const int *jcol, GpukitGSAIInfo *dinfo, cudaStream_t stream)
{
  const long long work = (long long)(nnzb > n + 1 ? nnzb : n + 1);

  if (n < 0 || nnzb < 0 || !dinfo) return cudaErrorInvalidValue;
  SamePatternKernel<<<Blocks(work, 256), 256, 0, stream>>>(n, nnzb, bptr, bcol, jptr, jcol, dinfo);
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitGSAIPlanCUDA(const GpukitGSAIProblem *P, int *cls, int *small, int *large, int *huge, GpukitGSAIInfo *dinfo, cudaStream_t stream)
{
  GpukitPoolTemp wsz(stream), tmp(stream);
  size_t    bytes = 0, b;
  const int n     = P ? P->n : -1;

  if (n < 0 || !dinfo) return cudaErrorInvalidValue;
  GSAI_TRY(cudaMemsetAsync(P->woff, 0, sizeof(long long), stream));
  if (n == 0) return cudaGetLastError();
  GSAI_TRY(wsz.Get((size_t)n * sizeof(long long)));
  PlanKernel<<<Blocks(32LL * n, 256), 256, 0, stream>>>(*P, cls, wsz.As<long long>(), dinfo);
  GSAI_TRY(cudaGetLastError());

  thrust::counting_iterator<int> rows(0);
  auto                           flops = thrust::make_transform_iterator(rows, RowFlops{*P});
  GSAI_TRY(cub::DeviceScan::InclusiveSum(nullptr, b, wsz.As<long long>(), P->woff + 1, n, stream));
  bytes = b;
  GSAI_TRY(cub::DeviceSelect::If(nullptr, b, rows, small, &dinfo->ns, n, IsClass{cls, 0}, stream));
  bytes = b > bytes ? b : bytes;
  GSAI_TRY(cub::DeviceReduce::Sum(nullptr, b, flops, &dinfo->flops, n, stream));
  bytes = b > bytes ? b : bytes;
  GSAI_TRY(tmp.Get(bytes));
  b = bytes;
  GSAI_TRY(cub::DeviceScan::InclusiveSum(tmp.p, b, wsz.As<long long>(), P->woff + 1, n, stream));
  b = bytes;
  GSAI_TRY(cub::DeviceSelect::If(tmp.p, b, rows, small, &dinfo->ns, n, IsClass{cls, 0}, stream));
  b = bytes;
  GSAI_TRY(cub::DeviceSelect::If(tmp.p, b, rows, large, &dinfo->nl, n, IsClass{cls, 1}, stream));
  b = bytes;
  GSAI_TRY(cub::DeviceSelect::If(tmp.p, b, rows, huge, &dinfo->nh, n, IsClass{cls, 2}, stream));
  b = bytes;
  GSAI_TRY(cub::DeviceReduce::Sum(tmp.p, b, flops, &dinfo->flops, n, stream));
  GSAI_TRY(cudaMemcpyAsync(&dinfo->wtotal, P->woff + n, sizeof(long long), cudaMemcpyDeviceToDevice, stream));
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitGSAINextBatchCUDA(const GpukitGSAIProblem *P, int r0, long long budget, int *r1, long long *base, long long *size, cudaStream_t stream)
{
  long long end;

  if (!P || r0 < 0 || r0 >= P->n || budget < 0) return cudaErrorInvalidValue;
  GSAI_TRY(cudaMemcpyAsync(base, P->woff + r0, sizeof(long long), cudaMemcpyDeviceToHost, stream));
  GSAI_TRY(cudaStreamSynchronize(stream));
  /* the largest r1 with woff[r1] <= woff[r0] + budget, at least r0 + 1 */
  *r1 = (int)(thrust::upper_bound(thrust::cuda::par.on(stream), P->woff + r0, P->woff + P->n + 1, *base + budget) - P->woff) - 1;
  if (*r1 <= r0) *r1 = r0 + 1;
  GSAI_TRY(cudaMemcpyAsync(&end, P->woff + *r1, sizeof(long long), cudaMemcpyDeviceToHost, stream));
  GSAI_TRY(cudaStreamSynchronize(stream));
  *size = end - *base;
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitGSAISolveSmallCUDA(const GpukitGSAIProblem *P, const int *small, int ns, int smallws, double *vals, int *status, GpukitGSAIInfo *dinfo, cudaStream_t stream)
{
  int    wpb;
  size_t smem;

  if (!P || ns < 0 || smallws < 0 || smallws > GPUKIT_GSAI_SMALL_WS || !dinfo) return cudaErrorInvalidValue;
  if (ns == 0) return cudaSuccess;
  wpb  = smallws ? SMEM_LIMIT / (int)(smallws * sizeof(double)) : WARPS_PER_BLK;
  wpb  = wpb < 1 ? 1 : (wpb > WARPS_PER_BLK ? WARPS_PER_BLK : wpb);
  smem = (size_t)wpb * smallws * sizeof(double);
  if (P->spd) SmallKernel<true><<<Blocks(ns, wpb), 32 * wpb, smem, stream>>>(*P, small, ns, smallws, vals, status, dinfo);
  else SmallKernel<false><<<Blocks(ns, wpb), 32 * wpb, smem, stream>>>(*P, small, ns, smallws, vals, status, dinfo);
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitGSAISolveLargeCUDA(const GpukitGSAIProblem *P, int r0, int r1, int whole, const int *large, int nl, const int *huge, int nh, double *ws, long long base, double *vals, int *status, GpukitGSAIInfo *dinfo, int lnt, int hnt, cudaStream_t stream, cudaStream_t aux, cudaEvent_t fork, cudaEvent_t join)
{
  int a0 = 0, a1 = nl, b0 = 0, b1 = nh;

  if (!P || r0 < 0 || r1 > P->n || r0 > r1 || nl < 0 || nh < 0 || !dinfo || !IsLargeNT(lnt) || !IsHugeNT(hnt)) return cudaErrorInvalidValue;
  if (r0 == r1) return cudaSuccess;
  if (!whole) { /* the rows of each class in [r0, r1): the class lists increase */
    a0 = (int)(thrust::lower_bound(thrust::cuda::par.on(stream), large, large + nl, r0) - large);
    a1 = (int)(thrust::lower_bound(thrust::cuda::par.on(stream), large, large + nl, r1) - large);
    b0 = (int)(thrust::lower_bound(thrust::cuda::par.on(stream), huge, huge + nh, r0) - huge);
    b1 = (int)(thrust::lower_bound(thrust::cuda::par.on(stream), huge, huge + nh, r1) - huge);
  }
  /* one gather for both classes, then the huge rows first: each is a long critical path */
  if (a1 > a0 || b1 > b0) {
    const long long nw = (long long)(b1 - b0) + (a1 - a0);
    if (P->spd) GatherSPDKernel<<<Blocks(32LL * nw, 256), 256, 0, stream>>>(*P, huge + b0, b1 - b0, large + a0, a1 - a0, ws, base);
    else GatherGeneralKernel<<<Blocks(32LL * nw, 256), 256, 0, stream>>>(*P, huge + b0, b1 - b0, large + a0, a1 - a0, ws, base);
    GSAI_TRY(cudaGetLastError());
  }
  /* with aux, the large rows run beside the few huge ones, which leave most of the device idle: aux starts after the
     gather, stream waits for aux at the end */
  const bool side = aux && fork && join && b1 > b0 && a1 > a0;
  if (side) {
    GSAI_TRY(cudaEventRecord(fork, stream));
    GSAI_TRY(cudaStreamWaitEvent(aux, fork, 0));
  }
  if (b1 > b0) GSAI_TRY(LaunchHuge(hnt, (unsigned)(b1 - b0), stream, *P, huge + b0, b1 - b0, ws, base, vals, status, dinfo));
  if (a1 > a0) GSAI_TRY(LaunchLarge(lnt, (unsigned)(a1 - a0), side ? aux : stream, *P, large + a0, a1 - a0, ws, base, vals, status, dinfo));
  if (side) {
    GSAI_TRY(cudaEventRecord(join, aux));
    GSAI_TRY(cudaStreamWaitEvent(stream, join, 0));
  }
  return cudaGetLastError();
}
