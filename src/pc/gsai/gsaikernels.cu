/*
   Device kernels of PCGSAI's set-up (see gsaikernels.h). Row-wise steps run one warp per row; the local
   problems run one warp per row for the small size class and one block of GPUKIT_GSAI_BLOCK_THREADS threads per
   row for the large one, with the same device function for both (a Group of NT threads: a warp, or a block).
   Each local problem lives in its own slice of a workspace, at an exact offset from a prefix sum of its size.
   Every reduction leaves the same value in every thread, so the threads of a group take the same branches.
*/
#include <climits>
#include <cfloat>
#include <cstdint>
#include <thrust/execution_policy.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/sequence.h>
#include <thrust/binary_search.h>
#include <thrust/count.h>
#include <thrust/find.h>
#include <thrust/copy.h>
#include <thrust/reduce.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include "gsaikernels.h"

namespace
{

constexpr unsigned FULL          = 0xffffffffu;
constexpr int      WARPS_PER_BLK = 8; /* warp-per-row kernels: 256 threads per block */

__device__ inline double WarpSum(double v)
{
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL, v, o); /* a + b == b + a: every lane gets the same sum */
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
   Transpose
   ------------------------------------------------------------------------------------------------------ */
__global__ void ExpandRowsKernel(int n, const int *__restrict__ ptr, int *__restrict__ rows)
{
  const int w = (int)((blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (w >= n) return;
  for (int e = ptr[w] + lane; e < ptr[w + 1]; e += 32) rows[e] = w;
}

__global__ void GatherTransposeKernel(int nnz, const int *__restrict__ perm, const int *__restrict__ rows, const double *__restrict__ aval, int *__restrict__ bcol, double *__restrict__ bval)
{
  const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (e >= nnz) return;
  bcol[e] = rows[perm[e]];
  bval[e] = aval[perm[e]];
}

__global__ void PermuteKernel(int nnz, const int *__restrict__ perm, const double *__restrict__ in, double *__restrict__ out)
{
  const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (e < nnz) out[e] = in[perm[e]];
}

/* ------------------------------------------------------------------------------------------------------
   Selection (threshold, lower part, cap), one warp per row
   ------------------------------------------------------------------------------------------------------ */
template <bool FILL>
__global__ void SelectKernel(int n, const int *__restrict__ ptr, const int *__restrict__ col, const double *__restrict__ val, const double *__restrict__ w, GpukitGSAISelectArgs a, int *__restrict__ cnt, const int *__restrict__ optr, int *__restrict__ ocol, double *__restrict__ ow)
{
  const int k = (int)((blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (k >= n) return; /* the whole warp */
  const int     e0 = ptr[k], len = ptr[k + 1] - e0;
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
    if (j == k || (a.lower && j > k)) return false;
    return !a.threshold || fabs(v[e]) > thr;
  };
  auto weight = [&](int e) -> double { return w ? w[e0 + e] : fabs(v[e]); };
  for (int b = 0; b < len; b += 32) {
    const int  e  = b + lane;
    const bool ic = e < len && cand(e), id = e < len && c[e] == k;
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
      const int q = pos + __popc(bk & ((1u << lane) - 1u)) + (c[e] > k ? 1 : 0); /* room for the diagonal */
      ocol[o + q] = c[e];
      if (ow) ow[o + q] = weight(e);
    }
    if (e < len && c[e] == k) dw = weight(e);
    nlt += __popc(__ballot_sync(FULL, keep && c[e] < k));
    pos += __popc(bk);
  }
  dw = WarpSum(dw); /* one lane holds it, the others 0 */
  if (lane == 0) {
    ocol[o + nlt] = k;
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

/* ------------------------------------------------------------------------------------------------------
   Plan: workspace per row and size classes
   ------------------------------------------------------------------------------------------------------ */
__global__ void WorkKernel(GpukitGSAIProblem P, long long *__restrict__ woff, int *__restrict__ cls)
{
  const long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (k > P.n) return;
  if (k == P.n) {
    woff[k] = 0; /* the exclusive scan puts the total here */
    return;
  }
  const long long n2 = P.jptr[k + 1] - P.jptr[k], n1 = P.spd ? n2 : P.n1[k];
  woff[k] = P.spd ? n2 * n2 : n1 * (n2 + 1);
  cls[k]  = (n1 <= GPUKIT_GSAI_WARP_MAX && n2 <= GPUKIT_GSAI_WARP_MAX) ? 0 : 1;
}

struct IsClass {
  const int               *cls;
  int                      want;
  __host__ __device__ bool operator()(int k) const { return cls[k] == want; }
};

struct RowLength {
  const int              *ptr;
  __host__ __device__ int operator()(int k) const { return ptr[k + 1] - ptr[k]; }
};

struct IsFailure {
  __host__ __device__ bool operator()(int s) const { return s >= GPUKIT_GSAI_FAIL; }
};

/* ------------------------------------------------------------------------------------------------------
   Gathers: the dense local problem of each row into its workspace slice (zeroed), one warp per row
   ------------------------------------------------------------------------------------------------------ */

/* general: C (n1 x n2, column-major) with C(i, c) = B(J[c], I[i]), I the sorted union of the columns of the rows J;
   pos[k] = the position of k in I (-1 if absent) */
__global__ void GatherGeneralKernel(GpukitGSAIProblem P, int r0, int r1, double *__restrict__ ws, long long base)
{
  const int k = r0 + (int)((blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (k >= r1) return;
  const int j0 = P.jptr[k], n2 = P.jptr[k + 1] - j0, n1 = P.n1[k];
  double   *C = ws + (P.woff[k] - base);
  int       i = 0, p = -1;

  for (int c = lane; c < n2; c += 32) P.cur[j0 + c] = P.bptr[P.jcol[j0 + c]];
  for (;;) {
    int m = INT_MAX;
    for (int c = lane; c < n2; c += 32) {
      const int e = P.cur[j0 + c];
      if (e < P.bptr[P.jcol[j0 + c] + 1]) m = min(m, P.bcol[e]);
    }
    m = WarpMin(m);
    if (m == INT_MAX || i >= n1) break;
    if (m == k) p = i;
    for (int c = lane; c < n2; c += 32) {
      const int e = P.cur[j0 + c];
      if (e < P.bptr[P.jcol[j0 + c] + 1] && P.bcol[e] == m) {
        C[i + (long long)c * n1] = P.bval[e];
        P.cur[j0 + c]            = e + 1;
      }
    }
    i++;
  }
  if (lane == 0) P.pos[k] = p;
}

/* spd: S (n2 x n2, column-major) with S(c, t) = A(J[c], J[t]) where stored */
__global__ void GatherSPDKernel(GpukitGSAIProblem P, int r0, int r1, double *__restrict__ ws, long long base)
{
  const int k = r0 + (int)((blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (k >= r1) return;
  const int  j0 = P.jptr[k], n2 = P.jptr[k + 1] - j0;
  const int *J = P.jcol + j0;
  double    *S = ws + (P.woff[k] - base);

  for (int c = lane; c < n2; c += 32) {
    const int r = J[c];
    int       t = 0;
    for (int e = P.bptr[r]; e < P.bptr[r + 1] && t < n2; e++) {
      const int col = P.bcol[e];
      while (t < n2 && J[t] < col) t++;
      if (t < n2 && J[t] == col) S[c + (long long)t * n2] = P.bval[e];
    }
  }
}

/* ------------------------------------------------------------------------------------------------------
   Local solves (GSAILeastSquares() and GSAICholeskyRow() in gsai.c): 0 solved, 1 fall back
   ------------------------------------------------------------------------------------------------------ */
template <int NT>
__device__ int HouseholderSolve(Group<NT> &g, double *red, int n1, int n2, double *C, double *rhs, int p, double *x)
{
  double rmax = 0.0, rmin = DBL_MAX;

  if (p < 0 || n1 < n2) return 1;
  for (int i = g.t; i < n1; i += NT) rhs[i] = (i == p) ? 1.0 : 0.0;
  g.Sync();
  for (int c = 0; c < n2; c++) {
    double *v = C + (long long)c * n1;
    double  s = 0.0;
    for (int i = c + g.t; i < n1; i += NT) s += v[i] * v[i];
    s                 = g.Sum(s, red);
    const double norm = sqrt(s);
    if (norm == 0.0) return 1;
    const double x0 = v[c], alpha = x0 >= 0.0 ? -norm : norm, vtv = 2.0 * norm * (norm + fabs(x0));
    g.Sync(); /* every thread has read v[c] */
    if (g.t == 0) v[c] = x0 - alpha;
    g.Sync();
    for (int c2 = c + 1; c2 <= n2; c2++) { /* c2 = n2: the right-hand side */
      double *wc = (c2 < n2) ? C + (long long)c2 * n1 : rhs;
      double  d  = 0.0;
      for (int i = c + g.t; i < n1; i += NT) d += v[i] * wc[i];
      d = g.Sum(d, red) * (2.0 / vtv);
      for (int i = c + g.t; i < n1; i += NT) wc[i] -= d * v[i];
    }
    g.Sync();
    if (g.t == 0) v[c] = alpha; /* R(c,c); the reflector is no longer needed */
    g.Sync();
    rmax = fmax(rmax, fabs(alpha));
    rmin = fmin(rmin, fabs(alpha));
  }
  if (rmin <= GPUKIT_GSAI_RCOND_TOL * rmax) return 1;
  for (int c = n2 - 1; c >= 0; c--) { /* R x = (Q^T e_p)(0:n2), by columns */
    g.Sync();
    const double xc = rhs[c] / C[c + (long long)c * n1];
    for (int i = g.t; i < c; i += NT) rhs[i] -= C[i + (long long)c * n1] * xc;
    if (g.t == 0) x[c] = xc;
  }
  g.Sync();
  {
    double bad = 0.0;
    for (int c = g.t; c < n2; c += NT)
      if (!isfinite(x[c])) bad += 1.0;
    if (g.Sum(bad, red) > 0.0) return 1;
  }
  return 0;
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

/* solve row k, or fall back to the diagonal (GSAISolveRows()); writes vals and status */
template <int NT>
__device__ void SolveRow(Group<NT> &g, double *red, const GpukitGSAIProblem &P, int k, double *ws, long long base, double *vals, int *status)
{
  const int  j0 = P.jptr[k], n2 = P.jptr[k + 1] - j0;
  const int *J = P.jcol + j0;
  double    *x = vals + j0;
  int        fail;

  if (!P.spd) {
    const int n1 = P.n1[k], p = P.pos[k];
    double   *C = ws + (P.woff[k] - base);
    fail        = HouseholderSolve<NT>(g, red, n1, n2, C, C + (long long)n1 * n2, p, x);
    if (!fail) {
      if (g.t == 0) status[k] = 0;
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
      if (g.t == 0) status[k] = GPUKIT_GSAI_FAIL + (s == 0.0 ? 1 : (p < 0 ? 2 : 3));
      return;
    }
    for (int c = g.t; c < n2; c += NT) x[c] = (J[c] == k) ? bkk / s : 0.0;
    if (g.t == 0) status[k] = GPUKIT_GSAI_FALLBACK;
  } else {
    double *S = ws + (P.woff[k] - base);
    fail      = CholeskyRow<NT>(g, red, n2, S, x);
    if (!fail) {
      if (g.t == 0) status[k] = 0;
      return;
    }
    double akk = 0.0;
    for (int e = P.bptr[k] + g.t; e < P.bptr[k + 1]; e += NT)
      if (P.bcol[e] == k) akk = P.bval[e];
    akk = g.Sum(akk, red);
    g.Sync();
    if (!(akk > 0.0)) {
      if (g.t == 0) status[k] = GPUKIT_GSAI_FAIL + 4;
      return;
    }
    for (int c = g.t; c < n2; c += NT) x[c] = (J[c] == k) ? 1.0 / sqrt(akk) : 0.0;
    if (g.t == 0) status[k] = GPUKIT_GSAI_FALLBACK;
  }
}

/* small class: one warp per row of rows[0..nrows) */
__global__ void __launch_bounds__(32 * WARPS_PER_BLK) SolveWarpKernel(GpukitGSAIProblem P, const int *__restrict__ rows, int nrows, double *ws, long long base, double *vals, int *status)
{
  const int idx = blockIdx.x * WARPS_PER_BLK + (threadIdx.x >> 5);
  if (idx >= nrows) return; /* the whole warp */
  Group<32> g(threadIdx.x & 31);
  SolveRow<32>(g, nullptr, P, rows[idx], ws, base, vals, status);
}

/* large class: one block per row of rows[0..nrows) */
__global__ void __launch_bounds__(GPUKIT_GSAI_BLOCK_THREADS) SolveBlockKernel(GpukitGSAIProblem P, const int *__restrict__ rows, int nrows, double *ws, long long base, double *vals, int *status)
{
  __shared__ double                red[GPUKIT_GSAI_BLOCK_THREADS / 32];
  Group<GPUKIT_GSAI_BLOCK_THREADS> g(threadIdx.x);
  SolveRow<GPUKIT_GSAI_BLOCK_THREADS>(g, red, P, rows[blockIdx.x], ws, base, vals, status);
}

} // namespace

/* ------------------------------------------------------------------------------------------------------
   C interface
   ------------------------------------------------------------------------------------------------------ */
#define GSAI_TRY(call) \
  do { \
    cudaError_t err_ = (call); \
    if (err_ != cudaSuccess) return err_; \
  } while (0)

extern "C" cudaError_t GpukitGSAITransposeCUDA(int n, int nnz, const int *aptr, const int *acol, const double *aval, int *bptr, int *bcol, double *bval, int *perm, cudaStream_t stream)
{
  int *keys = nullptr, *rows = nullptr;

  if (n < 0 || nnz < 0) return cudaErrorInvalidValue;
  if (nnz == 0) return cudaMemsetAsync(bptr, 0, (size_t)(n + 1) * sizeof(int), stream);
  GSAI_TRY(cudaMalloc((void **)&keys, (size_t)nnz * sizeof(int)));
  GSAI_TRY(cudaMalloc((void **)&rows, (size_t)nnz * sizeof(int)));
  GSAI_TRY(cudaMemcpyAsync(keys, acol, (size_t)nnz * sizeof(int), cudaMemcpyDeviceToDevice, stream));
  if (n > 0) ExpandRowsKernel<<<Blocks(32LL * n, 256), 256, 0, stream>>>(n, aptr, rows);
  GSAI_TRY(cudaGetLastError());
  thrust::sequence(thrust::cuda::par.on(stream), perm, perm + nnz);
  /* stable: the entries of a column stay in increasing row order */
  thrust::stable_sort_by_key(thrust::cuda::par.on(stream), keys, keys + nnz, perm);
  thrust::lower_bound(thrust::cuda::par.on(stream), keys, keys + nnz, thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(n + 1), bptr);
  GatherTransposeKernel<<<Blocks(nnz, 256), 256, 0, stream>>>(nnz, perm, rows, aval, bcol, bval);
  GSAI_TRY(cudaGetLastError());
  GSAI_TRY(cudaStreamSynchronize(stream));
  GSAI_TRY(cudaFree(keys));
  GSAI_TRY(cudaFree(rows));
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitGSAIPermuteCUDA(int nnz, const int *perm, const double *in, double *out, cudaStream_t stream)
{
  if (nnz < 0) return cudaErrorInvalidValue;
  if (nnz == 0) return cudaSuccess;
  PermuteKernel<<<Blocks(nnz, 256), 256, 0, stream>>>(nnz, perm, in, out);
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

extern "C" cudaError_t GpukitGSAIScanCUDA(int n, const int *cnt, int *ptr, int *total, cudaStream_t stream)
{
  long long sum;

  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) {
    *total = 0;
    return cudaMemsetAsync(ptr, 0, sizeof(int), stream);
  }
  sum = thrust::reduce(thrust::cuda::par.on(stream), cnt, cnt + n, 0LL, thrust::plus<long long>());
  if (sum > INT_MAX) return cudaErrorInvalidValue; /* 32-bit indices */
  thrust::exclusive_scan(thrust::cuda::par.on(stream), cnt, cnt + n, ptr);
  *total = (int)sum;
  GSAI_TRY(cudaMemcpyAsync(ptr + n, total, sizeof(int), cudaMemcpyHostToDevice, stream));
  GSAI_TRY(cudaStreamSynchronize(stream));
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitGSAIExpandRowsCUDA(int n, const int *ptr, int *rows, cudaStream_t stream)
{
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  ExpandRowsKernel<<<Blocks(32LL * n, 256), 256, 0, stream>>>(n, ptr, rows);
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

extern "C" cudaError_t GpukitGSAIPlanCUDA(const GpukitGSAIProblem *P, int *small, int *ns, int *large, int *nl, long long *total, int *maxn1, int *maxn2, cudaStream_t stream)
{
  int      *cls = nullptr;
  const int n   = P ? P->n : -1;

  if (n < 0) return cudaErrorInvalidValue;
  GSAI_TRY(cudaMalloc((void **)&cls, (size_t)(n > 0 ? n : 1) * sizeof(int)));
  WorkKernel<<<Blocks((long long)n + 1, 256), 256, 0, stream>>>(*P, P->woff, cls);
  GSAI_TRY(cudaGetLastError());
  thrust::exclusive_scan(thrust::cuda::par.on(stream), P->woff, P->woff + n + 1, P->woff);
  *ns = (int)(thrust::copy_if(thrust::cuda::par.on(stream), thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(n), small, IsClass{cls, 0}) - small);
  *nl = (int)(thrust::copy_if(thrust::cuda::par.on(stream), thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(n), large, IsClass{cls, 1}) - large);
  GSAI_TRY(cudaMemcpyAsync(total, P->woff + n, sizeof(long long), cudaMemcpyDeviceToHost, stream));
  *maxn2 = n ? thrust::reduce(thrust::cuda::par.on(stream), thrust::make_transform_iterator(thrust::counting_iterator<int>(0), RowLength{P->jptr}), thrust::make_transform_iterator(thrust::counting_iterator<int>(n), RowLength{P->jptr}), 0, thrust::maximum<int>()) : 0;
  *maxn1 = (n && !P->spd) ? thrust::reduce(thrust::cuda::par.on(stream), P->n1, P->n1 + n, 0, thrust::maximum<int>()) : *maxn2;
  GSAI_TRY(cudaStreamSynchronize(stream));
  GSAI_TRY(cudaFree(cls));
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

extern "C" cudaError_t GpukitGSAISolveBatchCUDA(const GpukitGSAIProblem *P, int r0, int r1, const int *small, int ns, const int *large, int nl, double *ws, long long base, long long size, double *vals, int *status, cudaStream_t stream)
{
  int a0, a1, b0, b1;

  if (!P || r0 < 0 || r1 > P->n || r0 > r1 || size < 0) return cudaErrorInvalidValue;
  if (r0 == r1) return cudaSuccess;
  if (size) GSAI_TRY(cudaMemsetAsync(ws, 0, (size_t)size * sizeof(double), stream));
  if (P->spd) GatherSPDKernel<<<Blocks(32LL * (r1 - r0), 256), 256, 0, stream>>>(*P, r0, r1, ws, base);
  else GatherGeneralKernel<<<Blocks(32LL * (r1 - r0), 256), 256, 0, stream>>>(*P, r0, r1, ws, base);
  GSAI_TRY(cudaGetLastError());
  /* the rows of each class in [r0, r1): the class lists increase */
  a0 = (int)(thrust::lower_bound(thrust::cuda::par.on(stream), small, small + ns, r0) - small);
  a1 = (int)(thrust::lower_bound(thrust::cuda::par.on(stream), small, small + ns, r1) - small);
  b0 = (int)(thrust::lower_bound(thrust::cuda::par.on(stream), large, large + nl, r0) - large);
  b1 = (int)(thrust::lower_bound(thrust::cuda::par.on(stream), large, large + nl, r1) - large);
  if (a1 > a0) SolveWarpKernel<<<Blocks(a1 - a0, WARPS_PER_BLK), 32 * WARPS_PER_BLK, 0, stream>>>(*P, small + a0, a1 - a0, ws, base, vals, status);
  GSAI_TRY(cudaGetLastError());
  if (b1 > b0) SolveBlockKernel<<<(unsigned)(b1 - b0), GPUKIT_GSAI_BLOCK_THREADS, 0, stream>>>(*P, large + b0, b1 - b0, ws, base, vals, status);
  GSAI_TRY(cudaGetLastError());
  return cudaStreamSynchronize(stream); /* the workspace is reused by the next batch */
}

extern "C" cudaError_t GpukitGSAIStatusCUDA(int n, const int *status, int *nfallback, int *failrow, int *failstatus, cudaStream_t stream)
{
  if (n < 0) return cudaErrorInvalidValue;
  *nfallback  = n ? (int)thrust::count(thrust::cuda::par.on(stream), status, status + n, GPUKIT_GSAI_FALLBACK) : 0;
  *failrow    = n ? (int)(thrust::find_if(thrust::cuda::par.on(stream), status, status + n, IsFailure{}) - status) : 0;
  *failstatus = 0;
  if (*failrow < n) {
    GSAI_TRY(cudaMemcpyAsync(failstatus, status + *failrow, sizeof(int), cudaMemcpyDeviceToHost, stream));
    GSAI_TRY(cudaStreamSynchronize(stream));
  } else *failrow = -1;
  return cudaGetLastError();
}
