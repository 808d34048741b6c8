/*
   Device kernels of MATAMBCUDA (interface and layout in ambkernels.h; the host reference is ambhost.c).

   The build from the device CSR, in passes over the rows, the (row, segment) pairs and the chunks:
     1. CountPairs  (thread per row, block per long row): pairs per row -> pairptr (scan); rows with no or several
                    segments counted;
     2. FillPairs   (thread per row): segment, row, first and last entry, block count of every pair;
     3. sort        CUB's stable radix sort of the pair numbers, by block count descending, then by (segment, window):
                    the pairs of a segment in window order, within a window by block count, ties by row;
     4. chunks      a histogram of pairs per segment and two scans give each sorted pair its chunk and lane;
                    atomicMax gives the chunk's block count, a scan its offset cs; the long chunks (more than
                    longnb blocks) get their slices and their one-segment rows become atomic rows;
     5. Fill        (thread per pair): block indices, padding indices, and the source of each value slot (its CSR
                    entry; -1 for zero fill and padding).
   The values are written by the refresh kernel, a thread per value slot reading the CSR entry it holds (the same kernel
   refreshes them when only the values change). Gathering keeps the writes coalesced; a scatter through a CSR entry ->
   slot map wrote 8 bytes into a 32-byte sector of its own.
   CUB's temporary storage, the build's work arrays and the layout's own arrays come from the library's
   stream-ordered pool (no cudaMalloc()/cudaFree(), which synchronise the device); the layout's arrays are allocated
   once at their final size.
   Three host synchronisations read sizes (pairs, chunks, stored values) and one ends the build.
*/
#include <chrono>
#include <climits>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_reduce.cuh>
#include "gpukitpool.h"
#include "ambkernels.h"

#define GPUKIT_AMB_TRY(call) \
  do { \
    cudaError_t err_ = (call); \
    if (err_ != cudaSuccess) return err_; \
  } while (0)

namespace
{

constexpr int THREADS = 256;

/* host wall time since t0, ms (the build's phases end at its synchronisations) */
inline double MsSince(std::chrono::steady_clock::time_point t0)
{
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

inline unsigned Blocks(long long work, int per)
{
  return (unsigned)((work + per - 1) / per);
}

/* log2 of a power of 2 (segment widths are checked to be one): col / W = col >> Log2(W) for col >= 0 */
inline int Log2(int W)
{
  int s = 0;
  while ((1 << s) < W) s++;
  return s;
}

/* ------------------------------------------------------------------------------------------------------------------
   Build
   ------------------------------------------------------------------------------------------------------------------ */

/* rows longer than this are counted by a block each (CountPairsLongKernel, BlockCountsLongKernel); shorter ones by a
   thread, reading AMB_COUNT_BATCH entries at a time */
constexpr int AMB_COUNT_LONG  = 1024;
constexpr int AMB_COUNT_BATCH = 8;

/* cnt[r] = the segments row r has entries in: an entry starts a segment when it is the row's first or its segment differs
   from the previous entry's (columns ascend within a row). W = 1 << ws. A thread per row, its entries read
   AMB_COUNT_BATCH at a time; rows longer than AMB_COUNT_LONG get cnt[r] = 0 and go to a list (longrows[atomicAdd(nlong)])
   for CountPairsLongKernel (a power-law row of 50000 entries is not walked by one thread). A warp per row (until session
   24) left most of its lanes idle on FEM rows: 244 us on fem_p1, 2.5 times its product. (No counter of the init rows
   here: InitRowsKernel counts them a warp at a time.) */
__global__ void CountPairsKernel(int m, const int *__restrict__ rowptr, const int *__restrict__ colidx, int ws, int *__restrict__ cnt, int *__restrict__ longrows, unsigned long long *__restrict__ nlong)
{
  const long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (r >= m) return;
  const int beg = rowptr[r], end = rowptr[r + 1];
  int       np = 0, gprev = -1;
  if (end - beg > AMB_COUNT_LONG) {
    cnt[r]                            = 0;
    longrows[atomicAdd(nlong, 1ULL)] = (int)r;
    return;
  }
  for (long long e = beg; e < end; e += AMB_COUNT_BATCH) { /* 64-bit: e + AMB_COUNT_BATCH may pass INT_MAX near the end */
    int c[AMB_COUNT_BATCH];
#pragma unroll
    for (int k = 0; k < AMB_COUNT_BATCH; k++) c[k] = e + k < end ? colidx[e + k] : 0;
#pragma unroll
    for (int k = 0; k < AMB_COUNT_BATCH; k++)
      if (e + k < end) {
        const int g = c[k] >> ws;
        np += g != gprev;
        gprev = g;
      }
  }
  cnt[r] = np;
}

/* the listed long rows, a block each (grid-stride over *nlong), its threads over the entries; one atomic a warp */
__global__ void CountPairsLongKernel(const int *__restrict__ rowptr, const int *__restrict__ colidx, int ws, const int *__restrict__ longrows, const unsigned long long *__restrict__ nlong, int *__restrict__ cnt)
{
  const long long nl = (long long)*nlong;
  for (long long l = blockIdx.x; l < nl; l += gridDim.x) {
    const int r = longrows[l], beg = rowptr[r], end = rowptr[r + 1];
    int       np = 0;
    for (long long e = beg + (long long)threadIdx.x; e < end; e += blockDim.x) np += e == beg || (colidx[e] >> ws) != (colidx[e - 1] >> ws);
    for (int off = 16; off > 0; off /= 2) np += __shfl_down_sync(0xffffffffu, np, off);
    if ((threadIdx.x & 31) == 0 && np) atomicAdd(cnt + r, np);
  }
}

/* the rows with no or several segments, *counter of them (any order: the init pass does not depend on it). One atomic
   per warp that has such rows (its leader reserves the warp's places); launched with whole warps and no thread leaves
   before the ballot */
__global__ void InitRowsKernel(int m, const int *__restrict__ pairptr, int *__restrict__ initrows, unsigned long long *__restrict__ counter)
{
  const long long    r    = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  const bool         init = r < m && pairptr[r + 1] - pairptr[r] != 1;
  const unsigned     mask = __ballot_sync(0xffffffffu, init);
  const int          lane = (int)(threadIdx.x & 31), leader = __ffs(mask) - 1;
  unsigned long long base = 0;
  if (!mask) return; /* the whole warp */
  if (lane == leader) base = atomicAdd(counter, (unsigned long long)__popc(mask));
  base = __shfl_sync(0xffffffffu, base, leader);
  if (init) initrows[base + (unsigned long long)__popc(mask & ((1u << lane) - 1u))] = (int)r;
}

/* per pair: its segment, row, entries [beg, end) and block count (greedy blocking with width b) */
__global__ void FillPairsKernel(int m, const int *__restrict__ rowptr, const int *__restrict__ colidx, int ws, int b, const int *__restrict__ pairptr, int *__restrict__ pseg, int *__restrict__ prow, int *__restrict__ pbeg, int *__restrict__ pend, int *__restrict__ pnblk)
{
  const long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (r >= m) return;
  int p = pairptr[r] - 1, gcur = -1, col0 = 0, nb = 0;
  const int end = rowptr[r + 1];
  for (int e = rowptr[r]; e < end; e++) {
    const int col = colidx[e], g = col >> ws; /* col / W */
    if (g != gcur) {
      if (p >= pairptr[r]) { /* close the previous pair */
        pend[p]  = e;
        pnblk[p] = nb;
      }
      p++;
      gcur    = g;
      pseg[p] = g;
      prow[p] = (int)r;
      pbeg[p] = e;
      col0    = col;
      nb      = 1;
    } else if (col - col0 >= b) {
      col0 = col;
      nb++;
    }
  }
  if (p >= pairptr[r]) {
    pend[p]  = end;
    pnblk[p] = nb;
  }
}

__global__ void IotaKernel(long long n, int *__restrict__ v)
{
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) v[i] = (int)i;
}

/* key1: block count descending (nblk <= W <= 65536) */
__global__ void Key1Kernel(long long np, const int *__restrict__ pnblk, unsigned *__restrict__ key)
{
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < np) key[i] = 65536u - (unsigned)pnblk[i];
}

/* key2 of the pair at sorted position i: (segment, window of its row) */
__global__ void Key2Kernel(long long np, const int *__restrict__ idx, const int *__restrict__ pseg, const int *__restrict__ prow, int sigma, unsigned long long nwin, unsigned long long *__restrict__ key)
{
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= np) return;
  const int p = idx[i];
  key[i]      = (unsigned long long)pseg[p] * nwin + (sigma > 1 ? (unsigned long long)(prow[p] / sigma) : 0ULL);
}

/* segcnt[g] += the pairs of segment g. The lanes of a warp with the same segment (neighbouring rows: mostly all 32)
   add once, through their first lane: one atomic a pair on a few dozen counters took 1.35 ms on fem_p1's 1.8M pairs */
__global__ void SegHistKernel(long long np, const int *__restrict__ pseg, int *__restrict__ segcnt)
{
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= np) return;
  const int      g     = pseg[i];
  const unsigned peers = __match_any_sync(__activemask(), g);
  if ((int)(threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(segcnt + g, __popc(peers));
}

__global__ void SegChunksKernel(int nseg, const int *__restrict__ segcnt, int *__restrict__ segch)
{
  const long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (g < nseg) segch[g] = (segcnt[g] + GPUKIT_AMB_C - 1) / GPUKIT_AMB_C;
}

/* the chunk and lane of the pair at sorted position i */
__global__ void ChunkKernel(long long np, const int *__restrict__ order, const int *__restrict__ pseg, const int *__restrict__ prow, const int *__restrict__ pnblk, const int *__restrict__ pairptr, const int *__restrict__ segstart, const int *__restrict__ chunkstart, int W, int *__restrict__ cnblk, int *__restrict__ cxoff, int *__restrict__ cseg, int *__restrict__ lanerow, int *__restrict__ pairslot)
{
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= np) return;
  const int  p = order[i], g = pseg[p], r = prow[p];
  const long rank = (long)(i - segstart[g]);
  const int  c = chunkstart[g] + (int)(rank / GPUKIT_AMB_C), l = (int)(rank % GPUKIT_AMB_C);
  atomicMax(cnblk + c, pnblk[p]);
  if (l == 0) {
    cxoff[c] = g * W;
    cseg[c]  = g;
  }
  lanerow[(long long)c * GPUKIT_AMB_C + l] = (pairptr[r + 1] - pairptr[r] == 1) ? r : -(r + 2);
  pairslot[p]                               = c * GPUKIT_AMB_C + l;
}

__global__ void ChunkSizeKernel(long long nc, int b, const int *__restrict__ cnblk, long long *__restrict__ t)
{
  const long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (c < nc) t[c] = (long long)GPUKIT_AMB_C * b * cnblk[c];
  else if (c == nc) t[c] = 0;
}

/* per pair, in sorted order (a warp's threads are neighbouring lanes of a chunk, so that its writes of a block's indices
   and sources are side by side): the indices of its blocks (and of the chunk's padding blocks of its lane) and, in src,
   the CSR entry of each value slot its entries take (src starts at -1 everywhere) */
__global__ void FillKernel(long long np, const int *__restrict__ order, const int *__restrict__ colidx, int n, int b, const int *__restrict__ pbeg, const int *__restrict__ pend, const int *__restrict__ pairslot, const long long *__restrict__ cs, const int *__restrict__ cnblk, const int *__restrict__ cxoff, unsigned short *__restrict__ lidx, int *__restrict__ src)
{
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= np) return;
  const int       p = order[i], s = pairslot[p], c = s / GPUKIT_AMB_C, l = s % GPUKIT_AMB_C, origin = cxoff[c], nbc = cnblk[c];
  const long long cs0 = cs[c], k0 = cs0 / b + l;
  int             k = -1, col0 = 0, base = 0, idx = 0;
  for (int e = pbeg[p]; e < pend[p]; e++) {
    const int col = colidx[e];
    if (k < 0 || col - col0 >= b) { /* a new block */
      k++;
      col0 = col;
      base = col < n - b ? col : n - b;
      idx  = base - origin;
      lidx[k0 + (long long)GPUKIT_AMB_C * k] = (unsigned short)idx;
    }
    src[cs0 + (long long)GPUKIT_AMB_C * ((long long)k * b + (col - base)) + l] = e;
  }
  for (int kk = k + 1; kk < nbc; kk++) lidx[k0 + (long long)GPUKIT_AMB_C * kk] = (unsigned short)idx;
}

/* the one-segment rows of long chunks (nblk > longnb) become atomic rows: code -(r+2), listed in extra[] for the init
   pass (each such row has exactly one lane, so it is listed once) */
__global__ void LongLanesKernel(long long nslots, const int *__restrict__ cnblk, int longnb, int *__restrict__ lanerow, int *__restrict__ extra, unsigned long long *__restrict__ nextra)
{
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= nslots || cnblk[i / GPUKIT_AMB_C] <= longnb) return;
  const int code = lanerow[i];
  if (code < 0) return; /* padding lane, or already atomic */
  lanerow[i]                        = -(code + 2);
  extra[atomicAdd(nextra, 1ULL)] = code;
}

/* slices per chunk beyond its first longnb blocks (t[nc] = 0 for the exclusive scan's total) */
__global__ void SliceCountKernel(long long nc, const int *__restrict__ cnblk, int longnb, int *__restrict__ t)
{
  const long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (c < nc) t[c] = cnblk[c] > longnb ? (cnblk[c] - 1) / longnb : 0;
  else if (c == nc) t[c] = 0;
}

__global__ void SliceFillKernel(long long nc, const int *__restrict__ cnblk, int longnb, const int *__restrict__ soff, int *__restrict__ slchunk, int *__restrict__ slbeg)
{
  const long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (c >= nc) return;
  for (int s = soff[c]; s < soff[c + 1]; s++) {
    slchunk[s] = (int)c;
    slbeg[s]   = (s - soff[c] + 1) * longnb;
  }
}

/* a thread per value slot: its CSR entry's value, 0 for zero fill and padding. The 32 lanes of a warp write side by
   side; their reads are 32 rows' entries, and the warp's next slots (the next column of the chunk) read the entries next
   to them, from the same sectors */
template <typename T>
__global__ void RefreshKernel(long long nval, const int *__restrict__ src, const double *__restrict__ a, T *__restrict__ val)
{
  const long long s = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (s < nval) {
    const int e = src[s];
    val[s]      = e >= 0 ? (T)a[e] : (T)0;
  }
}

/* the plan's block counts: for each b = i + 1, the blocks the greedy cover of every (row, segment) pair takes (a block
   starts at the pair's first entry and at every entry at least b columns past the last block's start), and the pairs.
   Rows of at most AMB_COUNT_LONG entries: a thread each, their entries read AMB_COUNT_BATCH at a time (one load latency
   for the batch, not one an entry); longer rows (power-law rows reach 50000 entries, which one thread walked in 7 ms)
   go to a list and a block each, a thread per segment: the pairs are independent, and a pair's entries are found by
   two binary searches. Exact in both. */

/* entry c of a pair: a new block for each b = i + 1 that it is at least b columns past the block's start */
__device__ __forceinline__ void CountEntry(int c, int col0[GPUKIT_AMB_CUDA_MAX_B], unsigned long long cnt[GPUKIT_AMB_CUDA_MAX_B + 1])
{
#pragma unroll
  for (int i = 0; i < GPUKIT_AMB_CUDA_MAX_B; i++)
    if (c - col0[i] >= i + 1) {
      col0[i] = c;
      cnt[i]++;
    }
}

/* the first pair entry: starts a block for every b (col0 = c - b makes CountEntry() start one) */
__device__ __forceinline__ void CountPairStart(int c, int col0[GPUKIT_AMB_CUDA_MAX_B], unsigned long long cnt[GPUKIT_AMB_CUDA_MAX_B + 1])
{
  cnt[GPUKIT_AMB_CUDA_MAX_B]++;
#pragma unroll
  for (int i = 0; i < GPUKIT_AMB_CUDA_MAX_B; i++) col0[i] = c - (i + 1);
}

/* warp sums, block sums in shared memory, then one atomic per block and count (one per warp put half a million
   atomics on 9 counters for 1.8M rows); every thread of the block calls it, and blocks have at least
   GPUKIT_AMB_CUDA_MAX_B + 1 threads */
__device__ __forceinline__ void CountFlush(const unsigned long long cnt[GPUKIT_AMB_CUDA_MAX_B + 1], unsigned long long *__restrict__ out)
{
  __shared__ unsigned long long bsum[GPUKIT_AMB_CUDA_MAX_B + 1];
  if (threadIdx.x <= GPUKIT_AMB_CUDA_MAX_B) bsum[threadIdx.x] = 0;
  __syncthreads();
#pragma unroll
  for (int i = 0; i <= GPUKIT_AMB_CUDA_MAX_B; i++) {
    unsigned long long v = cnt[i];
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0 && v) atomicAdd(bsum + i, v);
  }
  __syncthreads();
  if (threadIdx.x <= GPUKIT_AMB_CUDA_MAX_B && bsum[threadIdx.x]) atomicAdd(out + threadIdx.x, bsum[threadIdx.x]);
}

/* a thread per row; rows longer than AMB_COUNT_LONG are listed (longrows[atomicAdd(nlong)]) for BlockCountsLongKernel */
__global__ void BlockCountsKernel(int m, const int *__restrict__ rowptr, const int *__restrict__ colidx, int ws, unsigned long long *__restrict__ out, int *__restrict__ longrows, unsigned long long *__restrict__ nlong)
{
  const long long    r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  unsigned long long cnt[GPUKIT_AMB_CUDA_MAX_B + 1];
#pragma unroll
  for (int i = 0; i <= GPUKIT_AMB_CUDA_MAX_B; i++) cnt[i] = 0;
  if (r < m) {
    const int beg = rowptr[r], end = rowptr[r + 1];
    if (end - beg > AMB_COUNT_LONG) longrows[atomicAdd(nlong, 1ULL)] = (int)r;
    else {
      int gcur = -1, col0[GPUKIT_AMB_CUDA_MAX_B];
      for (long long e = beg; e < end; e += AMB_COUNT_BATCH) {
        int c[AMB_COUNT_BATCH];
#pragma unroll
        for (int k = 0; k < AMB_COUNT_BATCH; k++) c[k] = e + k < end ? colidx[e + k] : 0;
#pragma unroll
        for (int k = 0; k < AMB_COUNT_BATCH; k++)
          if (e + k < end) {
            const int g = c[k] >> ws; /* c / W */
            if (g != gcur) {
              gcur = g;
              CountPairStart(c[k], col0, cnt);
            }
            CountEntry(c[k], col0, cnt);
          }
      }
    }
  }
  CountFlush(cnt, out);
}

/* the first entry of row entries [lo, hi) whose column is at least c (hi when none) */
__device__ __forceinline__ int RowLowerBound(const int *__restrict__ colidx, int lo, int hi, long long c)
{
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if ((long long)colidx[mid] < c) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* the listed long rows, a block each (grid-stride over *nlong), a thread per segment of the row's column range */
__global__ void BlockCountsLongKernel(const int *__restrict__ rowptr, const int *__restrict__ colidx, int ws, const int *__restrict__ longrows, const unsigned long long *__restrict__ nlong, unsigned long long *__restrict__ out)
{
  unsigned long long cnt[GPUKIT_AMB_CUDA_MAX_B + 1];
  const long long    nl = (long long)*nlong;
#pragma unroll
  for (int i = 0; i <= GPUKIT_AMB_CUDA_MAX_B; i++) cnt[i] = 0;
  for (long long l = blockIdx.x; l < nl; l += gridDim.x) {
    const int r = longrows[l], beg = rowptr[r], end = rowptr[r + 1];
    const int g0 = colidx[beg] >> ws, g1 = colidx[end - 1] >> ws;
    for (long long g = g0 + (long long)threadIdx.x; g <= g1; g += blockDim.x) {
      const int e0 = RowLowerBound(colidx, beg, end, g << ws), e1 = RowLowerBound(colidx, e0, end, (g + 1) << ws);
      int       col0[GPUKIT_AMB_CUDA_MAX_B];
      if (e0 == e1) continue; /* no entry in this segment */
      CountPairStart(colidx[e0], col0, cnt);
      for (long long e = e0; e < e1; e += AMB_COUNT_BATCH) {
        int c[AMB_COUNT_BATCH];
#pragma unroll
        for (int k = 0; k < AMB_COUNT_BATCH; k++) c[k] = e + k < e1 ? colidx[e + k] : 0;
#pragma unroll
        for (int k = 0; k < AMB_COUNT_BATCH; k++)
          if (e + k < e1) CountEntry(c[k], col0, cnt);
      }
    }
  }
  CountFlush(cnt, out);
}

/* ------------------------------------------------------------------------------------------------------------------
   Products
   ------------------------------------------------------------------------------------------------------------------ */

template <bool SINGLE>
__device__ __forceinline__ double LoadVal(const void *val, long long i)
{
  if (SINGLE) return (double)__ldcs((const float *)val + i);
  else return __ldcs((const double *)val + i);
}

/* y[r] = z[r] (or 0) for the rows with no or several segments */
template <bool ADD>
__global__ void InitKernel(long long ninit, const int *__restrict__ initrows, const double *z, double *y)
{
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= ninit) return;
  const int r = initrows[i];
  y[r]        = ADD ? z[r] : 0.0;
}

/* one thread per lane: the lane's partial sum, stored (one-segment row) or added atomically (several) */
template <int B, bool SINGLE, bool ADD>
__global__ void __launch_bounds__(1024) MultKernel(long long nslots, const long long *__restrict__ cs, const int *__restrict__ cnblk, const int *__restrict__ cxoff, const int *__restrict__ lanerow, const unsigned short *__restrict__ colidx, const void *__restrict__ val, int longnb, long long dshift, const double *__restrict__ x, const double *z, double *y)
{
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= nslots) return;
  const int code = __ldcs(lanerow + i);
  if (code == -1) return; /* padding lane */
  const long long c = i / GPUKIT_AMB_C;
  const int       l = (int)(i % GPUKIT_AMB_C), nb = min(cnblk[c], longnb); /* a long chunk's other blocks: TailKernel */
  const long long v0 = cs[c] + l, k0 = cs[c] / B + l;
  const double   *xo  = x + cxoff[c] + (dshift ? (long long)(code >= 0 ? code : -code - 2) - dshift : 0LL);
  double          sum = 0.0;
  for (int k = 0; k < nb; k++) {
    const double   *xp = xo + __ldcs(colidx + k0 + (long long)GPUKIT_AMB_C * k);
    const long long vk = v0 + (long long)GPUKIT_AMB_C * B * k;
#pragma unroll
    for (int j = 0; j < B; j++) {
      const double a = LoadVal<SINGLE>(val, vk + (long long)GPUKIT_AMB_C * j);
      if (a != 0.0) sum += a * __ldg(xp + j); /* zero fill adds nothing, even against an Inf or NaN in x */
    }
  }
  if (code >= 0) y[code] = ADD ? z[code] + sum : sum;
  else atomicAdd(y + (-code - 2), sum);
}

/* the slices of the long chunks: 32 threads per slice (one per lane), blocks [slbeg, min(slbeg + longnb, nblk)) of the
   lane, added atomically (every row of a long chunk is an atomic row, initialised by InitKernel) */
template <int B, bool SINGLE>
__global__ void __launch_bounds__(1024) TailKernel(long long nt, const int *__restrict__ slchunk, const int *__restrict__ slbeg, int longnb, const long long *__restrict__ cs, const int *__restrict__ cnblk, const int *__restrict__ cxoff, const int *__restrict__ lanerow, const unsigned short *__restrict__ colidx, const void *__restrict__ val, long long dshift, const double *__restrict__ x, double *y)
{
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= nt) return;
  const long long q = i / GPUKIT_AMB_C;
  const int       l = (int)(i % GPUKIT_AMB_C), c = slchunk[q], code = lanerow[(long long)c * GPUKIT_AMB_C + l];
  if (code >= -1) return; /* padding lane (-1); a plain-store row never lies in a long chunk */
  const int       kb = slbeg[q], ke = min(kb + longnb, cnblk[c]);
  const long long v0 = cs[c] + l, k0 = cs[c] / B + l;
  const double   *xo  = x + cxoff[c] + (dshift ? (long long)(-code - 2) - dshift : 0LL);
  double          sum = 0.0;
  bool            any = false;
  for (int k = kb; k < ke; k++) {
    const double   *xp = xo + __ldcs(colidx + k0 + (long long)GPUKIT_AMB_C * k);
    const long long vk = v0 + (long long)GPUKIT_AMB_C * B * k;
#pragma unroll
    for (int j = 0; j < B; j++) {
      const double a = LoadVal<SINGLE>(val, vk + (long long)GPUKIT_AMB_C * j);
      if (a != 0.0) {
        sum += a * __ldg(xp + j);
        any = true;
      }
    }
  }
  if (any) atomicAdd(y + (-code - 2), sum); /* a short row's padding blocks in a long chunk add nothing */
}

/* one thread per row, ONE running sum from init over its pairs in ascending segment order, blocks and block columns
   in order, every multiply and add rounded on its own (AMBMult_Host's order: the sequential CSR sum, bitwise) */
template <int B, bool SINGLE, bool ADD>
__global__ void __launch_bounds__(1024) DetKernel(int m, const int *__restrict__ pairptr, const int *__restrict__ pairslot, const long long *__restrict__ cs, const int *__restrict__ cnblk, const int *__restrict__ cxoff, const unsigned short *__restrict__ colidx, const void *__restrict__ val, long long dshift, const double *__restrict__ x, const double *z, double *y)
{
  const long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (r >= m) return;
  double acc = ADD ? z[r] : 0.0;
  for (int p = pairptr[r]; p < pairptr[r + 1]; p++) {
    const int       s = pairslot[p], c = s / GPUKIT_AMB_C, l = s % GPUKIT_AMB_C, nb = cnblk[c];
    const long long v0 = cs[c] + l, k0 = cs[c] / B + l;
    const double   *xo = x + cxoff[c] + (dshift ? r - dshift : 0LL);
    for (int k = 0; k < nb; k++) {
      const double   *xp = xo + colidx[k0 + (long long)GPUKIT_AMB_C * k];
      const long long vk = v0 + (long long)GPUKIT_AMB_C * B * k;
#pragma unroll
      for (int j = 0; j < B; j++) {
        const double a = LoadVal<SINGLE>(val, vk + (long long)GPUKIT_AMB_C * j);
        if (a != 0.0) acc = __dadd_rn(acc, __dmul_rn(a, xp[j])); /* zero fill skipped: for finite x it adds +-0 */
      }
    }
  }
  y[r] = acc;
}

template <int B, bool SINGLE, bool ADD>
cudaError_t LaunchMult(const GpukitAMBLayout *L, const double *x, const double *z, double *y, int block, int det, cudaStream_t stream)
{
  if (det) {
    if (L->m == 0) return cudaSuccess;
    DetKernel<B, SINGLE, ADD><<<Blocks(L->m, block), block, 0, stream>>>(L->m, L->pairptr, L->pairslot, L->cs, L->cnblk, L->cxoff, L->colidx, L->val, L->dshift, x, z, y);
    return cudaGetLastError();
  }
  if (L->ninit > 0) {
    InitKernel<ADD><<<Blocks(L->ninit, block), block, 0, stream>>>(L->ninit, L->initrows, z, y);
    GPUKIT_AMB_TRY(cudaGetLastError());
  }
  if (L->nchunks == 0) return cudaSuccess;
  const long long nslots = L->nchunks * GPUKIT_AMB_C;
  MultKernel<B, SINGLE, ADD><<<Blocks(nslots, block), block, 0, stream>>>(nslots, L->cs, L->cnblk, L->cxoff, L->lanerow, L->colidx, L->val, L->longnb, L->dshift, x, z, y);
  GPUKIT_AMB_TRY(cudaGetLastError());
  if (L->nslices > 0) {
    const long long nt = L->nslices * GPUKIT_AMB_C;
    TailKernel<B, SINGLE><<<Blocks(nt, block), block, 0, stream>>>(nt, L->slchunk, L->slbeg, L->longnb, L->cs, L->cnblk, L->cxoff, L->lanerow, L->colidx, L->val, L->dshift, x, y);
    GPUKIT_AMB_TRY(cudaGetLastError());
  }
  return cudaSuccess;
}

template <int B>
cudaError_t LaunchMultB(const GpukitAMBLayout *L, const double *x, const double *z, double *y, int block, int det, cudaStream_t stream)
{
  if (L->single) return z ? LaunchMult<B, true, true>(L, x, z, y, block, det, stream) : LaunchMult<B, true, false>(L, x, z, y, block, det, stream);
  return z ? LaunchMult<B, false, true>(L, x, z, y, block, det, stream) : LaunchMult<B, false, false>(L, x, z, y, block, det, stream);
}

__device__ int FindDiagonal(const int *__restrict__ rowptr, const int *__restrict__ colidx, int r)
{
  int lo = rowptr[r], hi = rowptr[r + 1] - 1;
  while (lo <= hi) {
    const int mid = lo + (hi - lo) / 2, c = colidx[mid];
    if (c == r) return mid;
    if (c < r) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

__global__ void DiagonalKernel(int m, int n, const int *__restrict__ rowptr, const int *__restrict__ colidx, const double *__restrict__ a, double *__restrict__ d)
{
  const long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (r >= m) return;
  const int e = r < n ? FindDiagonal(rowptr, colidx, (int)r) : -1;
  d[r]        = e >= 0 ? a[e] : 0.0;
}

__global__ void ShiftKernel(int mn, const int *__restrict__ rowptr, const int *__restrict__ colidx, double *__restrict__ a, double s, int *__restrict__ missing)
{
  const long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (r >= mn) return;
  const int e = FindDiagonal(rowptr, colidx, (int)r);
  if (e >= 0) a[e] += s;
  else if (missing) atomicAdd(missing, 1);
}

__global__ void ScaleKernel(long long n, double *__restrict__ a, double s)
{
  const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (e < n) a[e] *= s;
}

/* the layout's own arrays: from the library's stream-ordered pool (no cudaMalloc()/cudaFree() device synchronisation
   per array; a rebuild for another b reuses the memory of the layout it replaces) */
template <typename T>
cudaError_t DevAlloc(T **p, long long n, cudaStream_t stream)
{
  return GpukitPoolMallocN(p, (size_t)(n > 0 ? n : 1), stream);
}

bool ValidCSR(const GpukitAMBCSR *A)
{
  return A && A->m >= 0 && A->n >= 0 && A->nnz >= 0 && (A->m == 0 || A->rowptr) && (A->nnz == 0 || A->colidx);
}

/* the arrays of a layout without entries (m == 0 or nnz == 0): cs = {0}, the rest as far as built */
cudaError_t EmptyLayout(GpukitAMBLayout *L, cudaStream_t stream)
{
  GPUKIT_AMB_TRY(DevAlloc(&L->cs, 1, stream));
  GPUKIT_AMB_TRY(cudaMemsetAsync(L->cs, 0, sizeof(long long), stream));
  return cudaStreamSynchronize(stream);
}

} // namespace

extern "C" cudaError_t GpukitAMBLayoutFree(GpukitAMBLayout *L, cudaStream_t stream)
{
  void *arrays[] = {L->cs, L->cnblk, L->cxoff, L->cseg, L->lanerow, L->colidx, L->val, L->src, L->initrows, L->pairptr, L->pairslot, L->slchunk, L->slbeg};
  for (void *p : arrays)
    if (p) GPUKIT_AMB_TRY(GpukitPoolFree(p, stream));
  *L = GpukitAMBLayout();
  return cudaSuccess;
}

namespace
{
/* colT[e] = colidx[e] - r + dshift for the entries of row r: a warp per row (fem rows of 13-27 entries, lanes striding
   a power-law row) */
__global__ void DiagColumnsKernel(int m, const int *__restrict__ rowptr, const int *__restrict__ colidx, long long dshift, int *__restrict__ colT)
{
  const long long r = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
  if (r >= m) return;
  const int shift = (int)(dshift - r); /* the caller keeps n + dshift below 2^31 */
  for (int e = rowptr[r] + (int)(threadIdx.x & 31); e < rowptr[r + 1]; e += 32) colT[e] = colidx[e] + shift;
}

} // namespace

extern "C" cudaError_t GpukitAMBDiagColumnsCUDA(const GpukitAMBCSR *A, long long dshift, int *colT, cudaStream_t stream)
{
  if (!ValidCSR(A) || (A->nnz > 0 && !colT) || dshift < (long long)A->m || (long long)A->n + dshift >= (long long)INT_MAX) return cudaErrorInvalidValue;
  if (A->m == 0 || A->nnz == 0) return cudaSuccess;
  DiagColumnsKernel<<<Blocks((long long)A->m * 32, THREADS), THREADS, 0, stream>>>(A->m, A->rowptr, A->colidx, dshift, colT);
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitAMBBuildCUDA(const GpukitAMBCSR *A, int b, int W, int sigma, int single, int longnb, long long dshift, GpukitAMBLayout *L, cudaStream_t stream)
{
  const int      m = A ? A->m : 0, n = A ? A->n : 0, nnz = A ? A->nnz : 0;
  const int      nseg = n > 0 ? (int)(((long long)n + W - 1) / W) : 0;
  GpukitPoolTemp cnt(stream), counter(stream), tmp(stream);
  size_t         bytes = 0;
  int            hp[1] = {0};
  unsigned long long hninit = 0;

  if (!ValidCSR(A) || !L || b < 1 || b > GPUKIT_AMB_CUDA_MAX_B || W < 32 || W > 65536 || (W & (W - 1)) || sigma < 0 || longnb < 0 || dshift < 0 || dshift >= n + 1LL) return cudaErrorInvalidValue;
  if (!dshift && n > 0 && b > n - (nseg - 1) * W) return cudaErrorInvalidValue; /* b must fit the last segment (diagonal segments: no clamp) */
  const auto t0 = std::chrono::steady_clock::now();
  *L        = GpukitAMBLayout();
  L->b      = b;
  L->W      = W;
  L->sigma  = sigma;
  L->single = single ? 1 : 0;
  L->m      = m;
  L->n      = n;
  L->nnz    = nnz;
  L->dshift = dshift;
  GPUKIT_AMB_TRY(DevAlloc(&L->pairptr, (long long)m + 1, stream));
  GPUKIT_AMB_TRY(cudaMemsetAsync(L->pairptr, 0, sizeof(int), stream));
  if (m == 0) return EmptyLayout(L, stream);

  /* 1. pairs per row, pairptr, the rows of the init pass (collected in scratch memory of m rows: the long chunks'
     rows join them once the chunks are known) */
  GpukitPoolTemp irows(stream);
  GPUKIT_AMB_TRY(cnt.Get((size_t)m * sizeof(int)));
  GPUKIT_AMB_TRY(irows.Get((size_t)m * sizeof(int)));
  GPUKIT_AMB_TRY(counter.Get(sizeof(unsigned long long)));
  GPUKIT_AMB_TRY(cudaMemsetAsync(counter.p, 0, sizeof(unsigned long long), stream));
  {
    GpukitPoolTemp  lrows(stream), nlong(stream);
    const long long maxlong = nnz / (AMB_COUNT_LONG + 1); /* at most this many rows are long */
    GPUKIT_AMB_TRY(lrows.Get((size_t)(maxlong > 0 ? maxlong : 1) * sizeof(int)));
    GPUKIT_AMB_TRY(nlong.Get(sizeof(unsigned long long)));
    GPUKIT_AMB_TRY(cudaMemsetAsync(nlong.p, 0, sizeof(unsigned long long), stream));
    CountPairsKernel<<<Blocks(m, THREADS), THREADS, 0, stream>>>(m, A->rowptr, A->colidx, Log2(W), cnt.As<int>(), lrows.As<int>(), nlong.As<unsigned long long>());
    GPUKIT_AMB_TRY(cudaGetLastError());
    if (maxlong > 0) { /* a block per listed row (the kernel reads their count) */
      CountPairsLongKernel<<<(unsigned)(maxlong < 1024 ? maxlong : 1024), THREADS, 0, stream>>>(A->rowptr, A->colidx, Log2(W), lrows.As<int>(), nlong.As<unsigned long long>(), cnt.As<int>());
      GPUKIT_AMB_TRY(cudaGetLastError());
    }
  }
  GPUKIT_AMB_TRY(cub::DeviceScan::InclusiveSum(nullptr, bytes, cnt.As<int>(), L->pairptr + 1, m, stream));
  GPUKIT_AMB_TRY(tmp.Get(bytes));
  GPUKIT_AMB_TRY(cub::DeviceScan::InclusiveSum(tmp.p, bytes, cnt.As<int>(), L->pairptr + 1, m, stream));
  GPUKIT_AMB_TRY(tmp.Release());
  InitRowsKernel<<<Blocks(m, THREADS), THREADS, 0, stream>>>(m, L->pairptr, irows.As<int>(), counter.As<unsigned long long>());
  GPUKIT_AMB_TRY(cudaGetLastError());
  GPUKIT_AMB_TRY(cudaMemcpyAsync(hp, L->pairptr + m, sizeof(int), cudaMemcpyDeviceToHost, stream));
  GPUKIT_AMB_TRY(cudaMemcpyAsync(&hninit, counter.p, sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
  GPUKIT_AMB_TRY(cudaStreamSynchronize(stream));
  L->tphase[0] = MsSince(t0);
  L->npairs = hp[0];
  L->ninit  = (long long)hninit;
  if (longnb == 0) { /* automatic: 8 x the mean blocks per pair (at most nnz / (npairs b) when blocks are full) */
    const long long mean = L->npairs > 0 ? ((long long)nnz + L->npairs * b - 1) / (L->npairs * b) : 1;
    longnb               = (int)(8 * mean < GPUKIT_AMB_LONG_MIN ? GPUKIT_AMB_LONG_MIN : (8 * mean < INT_MAX ? 8 * mean : INT_MAX));
  }
  L->longnb = longnb;
  if (L->npairs == 0) { /* no entries: every row is an init row */
    GPUKIT_AMB_TRY(DevAlloc(&L->initrows, L->ninit, stream));
    GPUKIT_AMB_TRY(cudaMemcpyAsync(L->initrows, irows.p, (size_t)L->ninit * sizeof(int), cudaMemcpyDeviceToDevice, stream));
    return EmptyLayout(L, stream);
  }
  GPUKIT_AMB_TRY(DevAlloc(&L->pairslot, L->npairs, stream));

  /* 2. the pairs */
  const long long np = L->npairs;
  GpukitPoolTemp  pseg(stream), prow(stream), pbeg(stream), pend(stream), pnblk(stream), idxa(stream), order(stream), k1(stream), k1s(stream), k2(stream), k2s(stream);
  GPUKIT_AMB_TRY(pseg.Get((size_t)np * sizeof(int)));
  GPUKIT_AMB_TRY(prow.Get((size_t)np * sizeof(int)));
  GPUKIT_AMB_TRY(pbeg.Get((size_t)np * sizeof(int)));
  GPUKIT_AMB_TRY(pend.Get((size_t)np * sizeof(int)));
  GPUKIT_AMB_TRY(pnblk.Get((size_t)np * sizeof(int)));
  GPUKIT_AMB_TRY(idxa.Get((size_t)np * sizeof(int)));
  GPUKIT_AMB_TRY(order.Get((size_t)np * sizeof(int)));
  FillPairsKernel<<<Blocks(m, THREADS), THREADS, 0, stream>>>(m, A->rowptr, A->colidx, Log2(W), b, L->pairptr, pseg.As<int>(), prow.As<int>(), pbeg.As<int>(), pend.As<int>(), pnblk.As<int>());
  GPUKIT_AMB_TRY(cudaGetLastError());

  /* 3. sort: stable by block count descending (sigma > 1), then stable by (segment, window) */
  IotaKernel<<<Blocks(np, THREADS), THREADS, 0, stream>>>(np, idxa.As<int>());
  GPUKIT_AMB_TRY(cudaGetLastError());
  if (sigma > 1) {
    GpukitPoolTemp iota(stream);
    GPUKIT_AMB_TRY(iota.Get((size_t)np * sizeof(int)));
    GPUKIT_AMB_TRY(k1.Get((size_t)np * sizeof(unsigned)));
    GPUKIT_AMB_TRY(k1s.Get((size_t)np * sizeof(unsigned)));
    Key1Kernel<<<Blocks(np, THREADS), THREADS, 0, stream>>>(np, pnblk.As<int>(), k1.As<unsigned>());
    GPUKIT_AMB_TRY(cudaGetLastError());
    GPUKIT_AMB_TRY(cudaMemcpyAsync(iota.p, idxa.p, (size_t)np * sizeof(int), cudaMemcpyDeviceToDevice, stream));
    bytes = 0;
    GPUKIT_AMB_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, k1.As<unsigned>(), k1s.As<unsigned>(), iota.As<int>(), idxa.As<int>(), (int)np, 0, 17, stream));
    GPUKIT_AMB_TRY(tmp.Get(bytes));
    GPUKIT_AMB_TRY(cub::DeviceRadixSort::SortPairs(tmp.p, bytes, k1.As<unsigned>(), k1s.As<unsigned>(), iota.As<int>(), idxa.As<int>(), (int)np, 0, 17, stream));
    GPUKIT_AMB_TRY(tmp.Release());
  }
  {
    const unsigned long long nwin = sigma > 1 ? ((unsigned long long)m + sigma - 1) / sigma : 1ULL, maxkey = (unsigned long long)nseg * nwin;
    int                      bits = 1;
    while (bits < 64 && (1ULL << bits) < maxkey) bits++;
    GPUKIT_AMB_TRY(k2.Get((size_t)np * sizeof(unsigned long long)));
    GPUKIT_AMB_TRY(k2s.Get((size_t)np * sizeof(unsigned long long)));
    Key2Kernel<<<Blocks(np, THREADS), THREADS, 0, stream>>>(np, idxa.As<int>(), pseg.As<int>(), prow.As<int>(), sigma, nwin, k2.As<unsigned long long>());
    GPUKIT_AMB_TRY(cudaGetLastError());
    bytes = 0;
    GPUKIT_AMB_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, k2.As<unsigned long long>(), k2s.As<unsigned long long>(), idxa.As<int>(), order.As<int>(), (int)np, 0, bits, stream));
    GPUKIT_AMB_TRY(tmp.Get(bytes));
    GPUKIT_AMB_TRY(cub::DeviceRadixSort::SortPairs(tmp.p, bytes, k2.As<unsigned long long>(), k2s.As<unsigned long long>(), idxa.As<int>(), order.As<int>(), (int)np, 0, bits, stream));
    GPUKIT_AMB_TRY(tmp.Release());
  }

  /* 4. chunks: pairs and chunks per segment, each sorted pair's chunk and lane, chunk block counts and offsets */
  GpukitPoolTemp segcnt(stream), segstart(stream), segch(stream), chunkstart(stream), csz(stream);
  int            hnc = 0;
  GPUKIT_AMB_TRY(segcnt.Get(((size_t)nseg + 1) * sizeof(int)));
  GPUKIT_AMB_TRY(segstart.Get(((size_t)nseg + 1) * sizeof(int)));
  GPUKIT_AMB_TRY(segch.Get(((size_t)nseg + 1) * sizeof(int)));
  GPUKIT_AMB_TRY(chunkstart.Get(((size_t)nseg + 1) * sizeof(int)));
  GPUKIT_AMB_TRY(cudaMemsetAsync(segcnt.p, 0, ((size_t)nseg + 1) * sizeof(int), stream));
  GPUKIT_AMB_TRY(cudaMemsetAsync(segch.p, 0, ((size_t)nseg + 1) * sizeof(int), stream));
  SegHistKernel<<<Blocks(np, THREADS), THREADS, 0, stream>>>(np, pseg.As<int>(), segcnt.As<int>());
  GPUKIT_AMB_TRY(cudaGetLastError());
  SegChunksKernel<<<Blocks(nseg, THREADS), THREADS, 0, stream>>>(nseg, segcnt.As<int>(), segch.As<int>());
  GPUKIT_AMB_TRY(cudaGetLastError());
  bytes = 0;
  GPUKIT_AMB_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, segcnt.As<int>(), segstart.As<int>(), nseg + 1, stream));
  GPUKIT_AMB_TRY(tmp.Get(bytes));
  GPUKIT_AMB_TRY(cub::DeviceScan::ExclusiveSum(tmp.p, bytes, segcnt.As<int>(), segstart.As<int>(), nseg + 1, stream));
  GPUKIT_AMB_TRY(cub::DeviceScan::ExclusiveSum(tmp.p, bytes, segch.As<int>(), chunkstart.As<int>(), nseg + 1, stream));
  GPUKIT_AMB_TRY(tmp.Release());
  GPUKIT_AMB_TRY(cudaMemcpyAsync(&hnc, chunkstart.As<int>() + nseg, sizeof(int), cudaMemcpyDeviceToHost, stream));
  GPUKIT_AMB_TRY(cudaStreamSynchronize(stream));
  L->tphase[1] = MsSince(t0) - L->tphase[0];
  L->nchunks = hnc;
  if ((long long)hnc * GPUKIT_AMB_C > INT_MAX) return cudaErrorInvalidValue; /* lane numbers are int */
  GPUKIT_AMB_TRY(DevAlloc(&L->cnblk, hnc, stream));
  GPUKIT_AMB_TRY(DevAlloc(&L->cxoff, hnc, stream));
  GPUKIT_AMB_TRY(DevAlloc(&L->cseg, hnc, stream));
  GPUKIT_AMB_TRY(DevAlloc(&L->lanerow, (long long)hnc * GPUKIT_AMB_C, stream));
  GPUKIT_AMB_TRY(DevAlloc(&L->cs, (long long)hnc + 1, stream));
  GPUKIT_AMB_TRY(cudaMemsetAsync(L->cnblk, 0, (size_t)hnc * sizeof(int), stream));
  GPUKIT_AMB_TRY(cudaMemsetAsync(L->lanerow, 0xff, (size_t)hnc * GPUKIT_AMB_C * sizeof(int), stream)); /* -1: padding */
  ChunkKernel<<<Blocks(np, THREADS), THREADS, 0, stream>>>(np, order.As<int>(), pseg.As<int>(), prow.As<int>(), pnblk.As<int>(), L->pairptr, segstart.As<int>(), chunkstart.As<int>(), W, L->cnblk, L->cxoff, L->cseg, L->lanerow, L->pairslot);
  GPUKIT_AMB_TRY(cudaGetLastError());
  /* long chunks: their one-segment rows become atomic rows (listed in extra), their blocks past longnb slices */
  GpukitPoolTemp extra(stream), lcount(stream), scnt(stream), soff(stream);
  unsigned long long hnextra = 0;
  int                hnsl    = 0;
  GPUKIT_AMB_TRY(extra.Get((size_t)((long long)hnc * GPUKIT_AMB_C < m ? (long long)hnc * GPUKIT_AMB_C : m) * sizeof(int)));
  GPUKIT_AMB_TRY(lcount.Get(sizeof(unsigned long long)));
  GPUKIT_AMB_TRY(cudaMemsetAsync(lcount.p, 0, sizeof(unsigned long long), stream));
  GPUKIT_AMB_TRY(scnt.Get(((size_t)hnc + 1) * sizeof(int)));
  GPUKIT_AMB_TRY(soff.Get(((size_t)hnc + 1) * sizeof(int)));
  if (hnc > 0) {
    LongLanesKernel<<<Blocks((long long)hnc * GPUKIT_AMB_C, THREADS), THREADS, 0, stream>>>((long long)hnc * GPUKIT_AMB_C, L->cnblk, longnb, L->lanerow, extra.As<int>(), lcount.As<unsigned long long>());
    GPUKIT_AMB_TRY(cudaGetLastError());
  }
  SliceCountKernel<<<Blocks((long long)hnc + 1, THREADS), THREADS, 0, stream>>>(hnc, L->cnblk, longnb, scnt.As<int>());
  GPUKIT_AMB_TRY(cudaGetLastError());
  bytes = 0;
  GPUKIT_AMB_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, scnt.As<int>(), soff.As<int>(), hnc + 1, stream));
  GPUKIT_AMB_TRY(tmp.Get(bytes));
  GPUKIT_AMB_TRY(cub::DeviceScan::ExclusiveSum(tmp.p, bytes, scnt.As<int>(), soff.As<int>(), hnc + 1, stream));
  GPUKIT_AMB_TRY(tmp.Release());
  GPUKIT_AMB_TRY(csz.Get(((size_t)hnc + 1) * sizeof(long long)));
  ChunkSizeKernel<<<Blocks((long long)hnc + 1, THREADS), THREADS, 0, stream>>>(hnc, b, L->cnblk, csz.As<long long>());
  GPUKIT_AMB_TRY(cudaGetLastError());
  {
    GpukitPoolTemp mx(stream);
    bytes = 0;
    GPUKIT_AMB_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, csz.As<long long>(), L->cs, hnc + 1, stream));
    GPUKIT_AMB_TRY(tmp.Get(bytes));
    GPUKIT_AMB_TRY(cub::DeviceScan::ExclusiveSum(tmp.p, bytes, csz.As<long long>(), L->cs, hnc + 1, stream));
    GPUKIT_AMB_TRY(tmp.Release());
    GPUKIT_AMB_TRY(mx.Get(sizeof(int)));
    bytes = 0;
    GPUKIT_AMB_TRY(cub::DeviceReduce::Max(nullptr, bytes, L->cnblk, mx.As<int>(), hnc, stream));
    GPUKIT_AMB_TRY(tmp.Get(bytes));
    GPUKIT_AMB_TRY(cub::DeviceReduce::Max(tmp.p, bytes, L->cnblk, mx.As<int>(), hnc, stream));
    GPUKIT_AMB_TRY(cudaMemcpyAsync(&L->nval, L->cs + hnc, sizeof(long long), cudaMemcpyDeviceToHost, stream));
    GPUKIT_AMB_TRY(cudaMemcpyAsync(&L->maxnblk, mx.p, sizeof(int), cudaMemcpyDeviceToHost, stream));
    GPUKIT_AMB_TRY(cudaMemcpyAsync(&hnextra, lcount.p, sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
    GPUKIT_AMB_TRY(cudaMemcpyAsync(&hnsl, soff.As<int>() + hnc, sizeof(int), cudaMemcpyDeviceToHost, stream));
    GPUKIT_AMB_TRY(cudaStreamSynchronize(stream));
    GPUKIT_AMB_TRY(tmp.Release());
    L->tphase[2] = MsSince(t0) - L->tphase[0] - L->tphase[1];
  }

  /* the slices of the long chunks, and the init rows with the long chunks' one-segment rows appended */
  L->nslices = hnsl;
  GPUKIT_AMB_TRY(DevAlloc(&L->slchunk, L->nslices, stream));
  GPUKIT_AMB_TRY(DevAlloc(&L->slbeg, L->nslices, stream));
  if (hnsl > 0) {
    SliceFillKernel<<<Blocks(hnc, THREADS), THREADS, 0, stream>>>(hnc, L->cnblk, longnb, soff.As<int>(), L->slchunk, L->slbeg);
    GPUKIT_AMB_TRY(cudaGetLastError());
  }
  GPUKIT_AMB_TRY(DevAlloc(&L->initrows, L->ninit + (long long)hnextra, stream));
  if (L->ninit > 0) GPUKIT_AMB_TRY(cudaMemcpyAsync(L->initrows, irows.p, (size_t)L->ninit * sizeof(int), cudaMemcpyDeviceToDevice, stream));
  if (hnextra > 0) GPUKIT_AMB_TRY(cudaMemcpyAsync(L->initrows + L->ninit, extra.p, (size_t)hnextra * sizeof(int), cudaMemcpyDeviceToDevice, stream));
  L->ninit += (long long)hnextra;

  /* 5. indices and the slots' sources (-1: zero fill); the values are left to the refresh, which writes every slot */
  GPUKIT_AMB_TRY(DevAlloc(&L->colidx, L->nval / b, stream));
  GPUKIT_AMB_TRY(DevAlloc(&L->src, L->nval, stream));
  GPUKIT_AMB_TRY(GpukitPoolMalloc(&L->val, (size_t)(L->nval > 0 ? L->nval : 1) * (single ? sizeof(float) : sizeof(double)), stream));
  GPUKIT_AMB_TRY(cudaMemsetAsync(L->colidx, 0, (size_t)(L->nval / b) * sizeof(unsigned short), stream));
  GPUKIT_AMB_TRY(cudaMemsetAsync(L->src, 0xff, (size_t)L->nval * sizeof(int), stream));
  FillKernel<<<Blocks(np, THREADS), THREADS, 0, stream>>>(np, order.As<int>(), A->colidx, dshift ? INT_MAX : n, b, pbeg.As<int>(), pend.As<int>(), L->pairslot, L->cs, L->cnblk, L->cxoff, L->colidx, L->src);
  GPUKIT_AMB_TRY(cudaGetLastError());
  GPUKIT_AMB_TRY(cudaStreamSynchronize(stream));
  L->tphase[3] = MsSince(t0) - L->tphase[0] - L->tphase[1] - L->tphase[2];
  return cudaSuccess;
}

extern "C" cudaError_t GpukitAMBRefreshCUDA(const GpukitAMBLayout *L, const double *a, cudaStream_t stream)
{
  if (!L || (L->nnz > 0 && (!a || !L->src || !L->val))) return cudaErrorInvalidValue;
  if (L->nnz == 0 || L->nval == 0) return cudaSuccess;
  if (L->single) RefreshKernel<float><<<Blocks(L->nval, THREADS), THREADS, 0, stream>>>(L->nval, L->src, a, (float *)L->val);
  else RefreshKernel<double><<<Blocks(L->nval, THREADS), THREADS, 0, stream>>>(L->nval, L->src, a, (double *)L->val);
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitAMBMultCUDA(const GpukitAMBLayout *L, const double *x, const double *z, double *y, int block, int deterministic, cudaStream_t stream)
{
  if (!L || block < 32 || block > 1024 || block % 32 || (L->m > 0 && !y) || (L->nchunks > 0 && !x)) return cudaErrorInvalidValue;
  switch (L->b) {
  case 1:
    return LaunchMultB<1>(L, x, z, y, block, deterministic, stream);
  case 2:
    return LaunchMultB<2>(L, x, z, y, block, deterministic, stream);
  case 3:
    return LaunchMultB<3>(L, x, z, y, block, deterministic, stream);
  case 4:
    return LaunchMultB<4>(L, x, z, y, block, deterministic, stream);
  case 5:
    return LaunchMultB<5>(L, x, z, y, block, deterministic, stream);
  case 6:
    return LaunchMultB<6>(L, x, z, y, block, deterministic, stream);
  case 7:
    return LaunchMultB<7>(L, x, z, y, block, deterministic, stream);
  case 8:
    return LaunchMultB<8>(L, x, z, y, block, deterministic, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t GpukitAMBBlockCountsCUDA(const GpukitAMBCSR *A, int W, long long blk[8], long long *npairs, long long *nlong, cudaStream_t stream)
{
  GpukitPoolTemp     out(stream);
  unsigned long long h[GPUKIT_AMB_CUDA_MAX_B + 2]; /* the counts, then the long rows' count */
  const long long    maxlong = A ? A->nnz / (AMB_COUNT_LONG + 1) : 0; /* at most this many rows are long */
  const size_t       hb = sizeof(h);

  if (!ValidCSR(A) || !blk || !npairs || !nlong || W < 32 || W > 65536 || (W & (W - 1))) return cudaErrorInvalidValue;
  GPUKIT_AMB_TRY(out.Get(hb + (size_t)(maxlong > 0 ? maxlong : 1) * sizeof(int)));
  GPUKIT_AMB_TRY(cudaMemsetAsync(out.p, 0, hb, stream));
  if (A->m > 0) {
    unsigned long long *cnt = out.As<unsigned long long>(), *nlong = cnt + GPUKIT_AMB_CUDA_MAX_B + 1;
    int                *longrows = (int *)(out.As<char>() + hb);
    BlockCountsKernel<<<Blocks(A->m, THREADS), THREADS, 0, stream>>>(A->m, A->rowptr, A->colidx, Log2(W), cnt, longrows, nlong);
    GPUKIT_AMB_TRY(cudaGetLastError());
    if (maxlong > 0) { /* a block per listed row (the kernel reads their count) */
      BlockCountsLongKernel<<<(unsigned)(maxlong < 1024 ? maxlong : 1024), THREADS, 0, stream>>>(A->rowptr, A->colidx, Log2(W), longrows, nlong, cnt);
      GPUKIT_AMB_TRY(cudaGetLastError());
    }
  }
  GPUKIT_AMB_TRY(cudaMemcpyAsync(h, out.p, sizeof(h), cudaMemcpyDeviceToHost, stream));
  GPUKIT_AMB_TRY(cudaStreamSynchronize(stream));
  for (int i = 0; i < GPUKIT_AMB_CUDA_MAX_B; i++) blk[i] = (long long)h[i];
  *npairs = (long long)h[GPUKIT_AMB_CUDA_MAX_B];
  *nlong  = (long long)h[GPUKIT_AMB_CUDA_MAX_B + 1];
  return cudaSuccess;
}

extern "C" int GpukitAMBCSRThreadsPerRow(long long m, long long nnz)
{
  const double mean = m > 0 ? (double)nnz / (double)m : 0.0;
  int          tpr  = 1;
  while (tpr < 32 && 4.0 * tpr < mean) tpr *= 2; /* about four entries per lane */
  return tpr;
}

extern "C" cudaError_t GpukitAMBDiagonalCUDA(const GpukitAMBCSR *A, const double *a, double *d, cudaStream_t stream)
{
  if (!ValidCSR(A) || (A->m > 0 && !d) || (A->nnz > 0 && !a)) return cudaErrorInvalidValue;
  if (A->m == 0) return cudaSuccess;
  DiagonalKernel<<<Blocks(A->m, THREADS), THREADS, 0, stream>>>(A->m, A->n, A->rowptr, A->colidx, a, d);
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitAMBShiftCUDA(const GpukitAMBCSR *A, double *a, double s, int *dmissing, cudaStream_t stream)
{
  const int mn = A ? (A->m < A->n ? A->m : A->n) : 0;
  if (!ValidCSR(A) || (A->nnz > 0 && !a)) return cudaErrorInvalidValue;
  if (mn == 0) return cudaSuccess;
  ShiftKernel<<<Blocks(mn, THREADS), THREADS, 0, stream>>>(mn, A->rowptr, A->colidx, a, s, dmissing);
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitAMBScaleCUDA(long long n, double *a, double s, cudaStream_t stream)
{
  if (n < 0 || (n > 0 && !a)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  ScaleKernel<<<Blocks(n, THREADS), THREADS, 0, stream>>>(n, a, s);
  return cudaGetLastError();
}

/* ------------------------------------------------------------------------------------------------------------------
   SELL-32 (the short-row candidate next to the CSR fallback; the layout in ambkernels.h, GpukitAMBSell)
   ------------------------------------------------------------------------------------------------------------------ */
namespace
{

/* the stored entries of slice s, 32 x its longest row (slices past the last real row count 0) */
__global__ void SellSliceSizeKernel(long long ns, int m, const int *__restrict__ rowptr, long long *__restrict__ sz)
{
  const long long s = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (s > ns) return;
  int w = 0;
  if (s < ns) {
    const int r0 = (int)(s * GPUKIT_AMB_C), r1 = r0 + GPUKIT_AMB_C < m ? r0 + GPUKIT_AMB_C : m;
    for (int r = r0; r < r1; r++) w = max(w, rowptr[r + 1] - rowptr[r]);
  }
  sz[s] = (long long)GPUKIT_AMB_C * w; /* sz[ns] = 0: the exclusive scan's total lands at off[ns] */
}

__global__ void SellOffsetsKernel(long long n, const long long *__restrict__ off64, int *__restrict__ off)
{
  const long long s = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (s < n) off[s] = (int)off64[s];
}

/* one thread per (slice, lane): the lane's row, its columns then -1 (padding; also every entry of a lane past m) */
__global__ void SellFillKernel(long long nlanes, int m, const int *__restrict__ rowptr, const int *__restrict__ colidx, const int *__restrict__ off, int *__restrict__ col)
{
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= nlanes) return;
  const long long s = t / GPUKIT_AMB_C;
  const int       l = (int)(t % GPUKIT_AMB_C), base = off[s], w = (off[s + 1] - base) / GPUKIT_AMB_C;
  const int       r = (int)t, beg = r < m ? rowptr[r] : 0, len = r < m ? rowptr[r + 1] - beg : 0;
  for (int k = 0; k < w; k++) col[base + GPUKIT_AMB_C * k + l] = k < len ? colidx[beg + k] : -1;
}

template <typename T>
__global__ void SellRefreshKernel(long long nlanes, int m, const int *__restrict__ rowptr, const int *__restrict__ off, const double *__restrict__ a, T *__restrict__ val)
{
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= nlanes) return;
  const long long s = t / GPUKIT_AMB_C;
  const int       l = (int)(t % GPUKIT_AMB_C), base = off[s], w = (off[s + 1] - base) / GPUKIT_AMB_C;
  const int       r = (int)t, beg = r < m ? rowptr[r] : 0, len = r < m ? rowptr[r + 1] - beg : 0;
  for (int k = 0; k < w; k++) val[base + GPUKIT_AMB_C * k + l] = k < len ? (T)a[beg + k] : (T)0;
}

/* one thread per row, its entries in CSR order (one running sum, each multiply and add rounded: bitwise the host's
   sequential CSR sum, AMBMult_Host's order); padding (-1) ends the row. T float: each value widened exactly to FP64 */
template <typename T, bool ADD>
__global__ void SellMultKernel(int m, const int *__restrict__ off, const int *__restrict__ col, const T *__restrict__ val, const double *__restrict__ x, const double *z, double *y)
{
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= m) return;
  const int s = r / GPUKIT_AMB_C, l = r % GPUKIT_AMB_C, base = off[s], w = (off[s + 1] - base) / GPUKIT_AMB_C;
  double    acc = ADD ? z[r] : 0.0;
  for (int k = 0; k < w; k++) {
    const int e = base + GPUKIT_AMB_C * k + l, c = __ldcs(col + e);
    if (c < 0) break;
    acc = __dadd_rn(acc, __dmul_rn((double)__ldcs(val + e), __ldg(x + c))); /* no FMA: bitwise the sequential CSR sum */
  }
  y[r] = acc;
}

/* the slice sizes and their exclusive scan (off64, nslices + 1 entries, pool memory the caller frees) */
cudaError_t SellScan(const GpukitAMBCSR *A, long long ns, long long **off64, cudaStream_t stream)
{
  GpukitPoolTemp sz(stream), tmp(stream);
  size_t         bytes = 0;

  *off64 = nullptr;
  GPUKIT_AMB_TRY(sz.Get((size_t)(ns + 1) * sizeof(long long)));
  GPUKIT_AMB_TRY(GpukitPoolMallocN(off64, (size_t)(ns + 1), stream));
  SellSliceSizeKernel<<<Blocks(ns + 1, THREADS), THREADS, 0, stream>>>(ns, A->m, A->rowptr, sz.As<long long>());
  GPUKIT_AMB_TRY(cudaGetLastError());
  GPUKIT_AMB_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, sz.As<long long>(), *off64, ns + 1, stream));
  GPUKIT_AMB_TRY(tmp.Get(bytes));
  GPUKIT_AMB_TRY(cub::DeviceScan::ExclusiveSum(tmp.p, bytes, sz.As<long long>(), *off64, ns + 1, stream));
  return cudaSuccess;
}

} // namespace

extern "C" cudaError_t GpukitAMBSellSizeCUDA(const GpukitAMBCSR *A, long long *nval, cudaStream_t stream)
{
  long long *off64 = nullptr;

  if (!ValidCSR(A) || !nval) return cudaErrorInvalidValue;
  *nval = 0;
  if (A->m == 0) return cudaSuccess;
  const long long ns = ((long long)A->m + GPUKIT_AMB_C - 1) / GPUKIT_AMB_C;
  cudaError_t     err = SellScan(A, ns, &off64, stream);
  if (err == cudaSuccess) err = cudaMemcpyAsync(nval, off64 + ns, sizeof(long long), cudaMemcpyDeviceToHost, stream);
  if (off64) GpukitPoolFreeN(&off64, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  return err;
}

extern "C" cudaError_t GpukitAMBSellBuildCUDA(const GpukitAMBCSR *A, GpukitAMBSell *S, cudaStream_t stream)
{
  long long *off64 = nullptr;
  long long  nval  = 0;

  if (!ValidCSR(A) || !S) return cudaErrorInvalidValue;
  *S         = GpukitAMBSell();
  S->m       = A->m;
  S->n       = A->n;
  S->nnz     = A->nnz;
  S->nslices = ((long long)A->m + GPUKIT_AMB_C - 1) / GPUKIT_AMB_C;
  if (A->m > 0) {
    GPUKIT_AMB_TRY(SellScan(A, S->nslices, &off64, stream));
    GPUKIT_AMB_TRY(cudaMemcpyAsync(&nval, off64 + S->nslices, sizeof(long long), cudaMemcpyDeviceToHost, stream));
    GPUKIT_AMB_TRY(cudaStreamSynchronize(stream));
  }
  if (nval > INT_MAX) { /* 32-bit offsets (cuSPARSE's and ours) */
    GpukitPoolFreeN(&off64, stream);
    return cudaErrorInvalidValue;
  }
  S->nval = nval;
  GPUKIT_AMB_TRY(GpukitPoolMallocN(&S->off, (size_t)(S->nslices + 1), stream));
  GPUKIT_AMB_TRY(GpukitPoolMallocN(&S->col, (size_t)(nval > 0 ? nval : 1), stream));
  if (A->m > 0) {
    SellOffsetsKernel<<<Blocks(S->nslices + 1, THREADS), THREADS, 0, stream>>>(S->nslices + 1, off64, S->off);
    GPUKIT_AMB_TRY(cudaGetLastError());
    GPUKIT_AMB_TRY(GpukitPoolFreeN(&off64, stream));
    SellFillKernel<<<Blocks(S->nslices * GPUKIT_AMB_C, THREADS), THREADS, 0, stream>>>(S->nslices * GPUKIT_AMB_C, A->m, A->rowptr, A->colidx, S->off, S->col);
    GPUKIT_AMB_TRY(cudaGetLastError());
  } else GPUKIT_AMB_TRY(cudaMemsetAsync(S->off, 0, sizeof(int), stream));
  return cudaSuccess;
}

extern "C" cudaError_t GpukitAMBSellAllocValues(GpukitAMBSell *S, int single, int *fresh, cudaStream_t stream)
{
  if (!S || !fresh) return cudaErrorInvalidValue;
  *fresh = 0;
  if (single && !S->val32) {
    GPUKIT_AMB_TRY(GpukitPoolMallocN(&S->val32, (size_t)(S->nval > 0 ? S->nval : 1), stream));
    *fresh = 1;
  } else if (!single && !S->val) {
    GPUKIT_AMB_TRY(GpukitPoolMallocN(&S->val, (size_t)(S->nval > 0 ? S->nval : 1), stream));
    *fresh = 1;
  }
  return cudaSuccess;
}

extern "C" cudaError_t GpukitAMBSellFreeValues(GpukitAMBSell *S, int single, cudaStream_t stream)
{
  if (!S) return cudaSuccess;
  if (single) return GpukitPoolFreeN(&S->val32, stream);
  return GpukitPoolFreeN(&S->val, stream);
}

extern "C" cudaError_t GpukitAMBSellRefreshCUDA(const GpukitAMBCSR *A, const GpukitAMBSell *S, const double *a, cudaStream_t stream)
{
  if (!ValidCSR(A) || !S || A->m != S->m || A->nnz != S->nnz || (A->nnz > 0 && !a)) return cudaErrorInvalidValue;
  if (S->nslices == 0 || S->nval == 0) return cudaSuccess;
  if (S->val) {
    SellRefreshKernel<double><<<Blocks(S->nslices * GPUKIT_AMB_C, THREADS), THREADS, 0, stream>>>(S->nslices * GPUKIT_AMB_C, A->m, A->rowptr, S->off, a, S->val);
    GPUKIT_AMB_TRY(cudaGetLastError());
  }
  if (S->val32) {
    SellRefreshKernel<float><<<Blocks(S->nslices * GPUKIT_AMB_C, THREADS), THREADS, 0, stream>>>(S->nslices * GPUKIT_AMB_C, A->m, A->rowptr, S->off, a, S->val32);
    GPUKIT_AMB_TRY(cudaGetLastError());
  }
  return cudaSuccess;
}

extern "C" cudaError_t GpukitAMBSellMultCUDA(const GpukitAMBSell *S, int single, const double *x, const double *z, double *y, int block, cudaStream_t stream)
{
  if (!S || block < 32 || block > 1024 || block % 32 || (S->m > 0 && !y) || (S->nval > 0 && !x) || (S->nval > 0 && (single ? !S->val32 : !S->val))) return cudaErrorInvalidValue;
  if (S->m == 0) return cudaSuccess;
  if (single) {
    if (z) SellMultKernel<float, true><<<Blocks(S->m, block), block, 0, stream>>>(S->m, S->off, S->col, S->val32, x, z, y);
    else SellMultKernel<float, false><<<Blocks(S->m, block), block, 0, stream>>>(S->m, S->off, S->col, S->val32, x, z, y);
  } else {
    if (z) SellMultKernel<double, true><<<Blocks(S->m, block), block, 0, stream>>>(S->m, S->off, S->col, S->val, x, z, y);
    else SellMultKernel<double, false><<<Blocks(S->m, block), block, 0, stream>>>(S->m, S->off, S->col, S->val, x, z, y);
  }
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitAMBSellFree(GpukitAMBSell *S, cudaStream_t stream)
{
  if (!S) return cudaSuccess;
  GPUKIT_AMB_TRY(GpukitPoolFreeN(&S->off, stream));
  GPUKIT_AMB_TRY(GpukitPoolFreeN(&S->col, stream));
  GPUKIT_AMB_TRY(GpukitPoolFreeN(&S->val, stream));
  GPUKIT_AMB_TRY(GpukitPoolFreeN(&S->val32, stream));
  *S = GpukitAMBSell();
  return cudaSuccess;
}

/* ------------------------------------------------------------------------------------------------------------------
   gpukit's CSR product ("csrk"; ambkernels.h, GpukitAMBCSRK): short rows TPR lanes each, long rows in chunks of
   GPUKIT_AMB_CSRK_CHUNK entries, a thread block each, with one FP64 atomic a chunk
   ------------------------------------------------------------------------------------------------------------------ */
namespace
{

constexpr int CSRK_LONG_THREADS = 256;

/* the rows of more than longlen entries, in any order (the long-row kernel adds with atomics), and their chunk counts */
__global__ void CSRKLongListKernel(int m, const int *__restrict__ rowptr, int longlen, int cap, int det, int *__restrict__ longrow, long long *__restrict__ nch, unsigned *__restrict__ cnt)
{
  const long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (r >= m) return;
  const long long len = (long long)rowptr[r + 1] - rowptr[r];
  if (len <= longlen) return;
  const unsigned i = atomicAdd(cnt, 1u);
  if (i < (unsigned)cap) { /* cap = nnz / longlen + 1 > the number of rows longer than longlen: always true */
    longrow[i] = (int)r;
    nch[i]     = det ? 1 : (len + GPUKIT_AMB_CSRK_CHUNK - 1) / GPUKIT_AMB_CSRK_CHUNK;
  }
}

__global__ void CSRKRoundKernel(long long n, const double *__restrict__ a, float *__restrict__ v)
{
  const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (e < n) v[e] = (float)a[e];
}

/* TPR lanes per row of at most longlen entries; a longer row gets 0 or z[r] here (the long-row kernel adds its sum).
   Whole warps are launched (every shuffle has its 32 lanes) */
template <typename T, int TPR, bool ADD>
__global__ void CSRKShortKernel(int m, const int *__restrict__ rowptr, const int *__restrict__ colidx, const T *__restrict__ a, int longlen, const double *__restrict__ x, const double *z, double *y)
{
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x, r = t / TPR;
  const int       lane = (int)(t % TPR);
  double          sum  = 0.0;
  if (r < m) {
    const long long beg = rowptr[r], end = rowptr[r + 1];
    if (end - beg <= longlen)
      for (long long e = beg + lane; e < end; e += TPR) sum = fma((double)__ldcs(a + e), __ldg(x + __ldcs(colidx + e)), sum);
  }
#pragma unroll
  for (int off = TPR / 2; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffffu, sum, off, TPR);
  if (r < m && lane == 0) y[r] = ADD ? z[r] + sum : sum;
}

/* one block per chunk of a long row: the row by binary search over the chunk starts, the chunk's sum in the block, one
   atomic; DET: the chunk is the whole row, its sum in a fixed order, a plain add (the block is the row's only writer) */
template <typename T, bool DET>
__global__ void __launch_bounds__(CSRK_LONG_THREADS) CSRKLongKernel(int nlong, const int *__restrict__ longrow, const long long *__restrict__ chstart, const int *__restrict__ rowptr, const int *__restrict__ colidx, const T *__restrict__ a, const double *__restrict__ x, double *y)
{
  __shared__ double part[CSRK_LONG_THREADS / 32];
  const long long   b  = blockIdx.x;
  int               lo = 0, hi = nlong - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (chstart[mid] <= b) lo = mid;
    else hi = mid - 1;
  }
  const int       r   = longrow[lo];
  const long long beg = DET ? rowptr[r] : rowptr[r] + (b - chstart[lo]) * GPUKIT_AMB_CSRK_CHUNK;
  const long long end = DET || beg + GPUKIT_AMB_CSRK_CHUNK >= rowptr[r + 1] ? rowptr[r + 1] : beg + GPUKIT_AMB_CSRK_CHUNK;
  double          sum = 0.0;
  for (long long e = beg + threadIdx.x; e < end; e += CSRK_LONG_THREADS) sum = fma((double)__ldcs(a + e), __ldg(x + __ldcs(colidx + e)), sum);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffffu, sum, off);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    double s = 0.0;
    for (int w = 0; w < CSRK_LONG_THREADS / 32; w++) s += part[w];
    if (DET) y[r] += s;
    else atomicAdd(y + r, s);
  }
}

template <typename T, int TPR>
cudaError_t LaunchCSRK(const GpukitAMBCSR *A, const GpukitAMBCSRK *K, const T *a, const double *x, const double *z, double *y, cudaStream_t stream)
{
  const long long threads = (long long)A->m * TPR;
  if (z) CSRKShortKernel<T, TPR, true><<<Blocks(threads, THREADS), THREADS, 0, stream>>>(A->m, A->rowptr, A->colidx, a, K->longlen, x, z, y);
  else CSRKShortKernel<T, TPR, false><<<Blocks(threads, THREADS), THREADS, 0, stream>>>(A->m, A->rowptr, A->colidx, a, K->longlen, x, z, y);
  GPUKIT_AMB_TRY(cudaGetLastError());
  if (K->nlong > 0) {
    if (K->det) CSRKLongKernel<T, true><<<(unsigned)K->nchunks, CSRK_LONG_THREADS, 0, stream>>>(K->nlong, K->longrow, K->chstart, A->rowptr, A->colidx, a, x, y);
    else CSRKLongKernel<T, false><<<(unsigned)K->nchunks, CSRK_LONG_THREADS, 0, stream>>>(K->nlong, K->longrow, K->chstart, A->rowptr, A->colidx, a, x, y);
    GPUKIT_AMB_TRY(cudaGetLastError());
  }
  return cudaSuccess;
}

template <typename T>
cudaError_t LaunchCSRKT(const GpukitAMBCSR *A, const GpukitAMBCSRK *K, const T *a, const double *x, const double *z, double *y, cudaStream_t stream)
{
  switch (K->tpr) {
  case 1:
    return LaunchCSRK<T, 1>(A, K, a, x, z, y, stream);
  case 2:
    return LaunchCSRK<T, 2>(A, K, a, x, z, y, stream);
  case 4:
    return LaunchCSRK<T, 4>(A, K, a, x, z, y, stream);
  case 8:
    return LaunchCSRK<T, 8>(A, K, a, x, z, y, stream);
  case 16:
    return LaunchCSRK<T, 16>(A, K, a, x, z, y, stream);
  case 32:
    return LaunchCSRK<T, 32>(A, K, a, x, z, y, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

} // namespace

namespace
{
cudaError_t CSRKBuild(const GpukitAMBCSR *A, int tpr, int longlen, int single, int det, GpukitAMBCSRK *K, cudaStream_t stream)
{
  K->m       = A->m;
  K->nnz     = A->nnz;
  K->tpr     = tpr ? tpr : GpukitAMBCSRThreadsPerRow(A->m, A->nnz);
  K->longlen = longlen > 0 ? longlen : (32 * K->tpr < 128 ? 128 : 32 * K->tpr);
  K->det     = det ? 1 : 0;
  if (single) GPUKIT_AMB_TRY(GpukitPoolMallocN(&K->val32, (size_t)(A->nnz > 0 ? A->nnz : 1), stream));
  if (A->m == 0 || A->nnz <= K->longlen) return cudaSuccess; /* no row can be long */
  const int      cap = A->nnz / K->longlen + 1;
  GpukitPoolTemp nch(stream), cnt(stream), tmp(stream);
  unsigned       hcnt = 0;
  long long      htot = 0;
  size_t         bytes = 0;
  GPUKIT_AMB_TRY(GpukitPoolMallocN(&K->longrow, (size_t)cap, stream));
  GPUKIT_AMB_TRY(GpukitPoolMallocN(&K->chstart, (size_t)cap + 1, stream));
  GPUKIT_AMB_TRY(nch.Get(((size_t)cap + 1) * sizeof(long long)));
  GPUKIT_AMB_TRY(cnt.Get(sizeof(unsigned)));
  GPUKIT_AMB_TRY(cudaMemsetAsync(nch.p, 0, ((size_t)cap + 1) * sizeof(long long), stream));
  GPUKIT_AMB_TRY(cudaMemsetAsync(cnt.p, 0, sizeof(unsigned), stream));
  CSRKLongListKernel<<<Blocks(A->m, THREADS), THREADS, 0, stream>>>(A->m, A->rowptr, K->longlen, cap, K->det, K->longrow, nch.As<long long>(), cnt.As<unsigned>());
  GPUKIT_AMB_TRY(cudaGetLastError());
  GPUKIT_AMB_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, nch.As<long long>(), K->chstart, cap + 1, stream));
  GPUKIT_AMB_TRY(tmp.Get(bytes));
  GPUKIT_AMB_TRY(cub::DeviceScan::ExclusiveSum(tmp.p, bytes, nch.As<long long>(), K->chstart, cap + 1, stream));
  GPUKIT_AMB_TRY(cudaMemcpyAsync(&hcnt, cnt.p, sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
  GPUKIT_AMB_TRY(cudaMemcpyAsync(&htot, K->chstart + cap, sizeof(long long), cudaMemcpyDeviceToHost, stream));
  GPUKIT_AMB_TRY(cudaStreamSynchronize(stream));
  if (hcnt > (unsigned)cap || htot > (long long)INT_MAX) return cudaErrorInvalidValue; /* a grid of at most 2^31 - 1 blocks; cap cannot be passed (the list kernel) */
  K->nlong   = (int)hcnt;
  K->nchunks = htot;
  return cudaSuccess;
}
} // namespace

/* K is set only when the build succeeds (a failed one frees what it took and leaves K empty: no half-built lists) */
extern "C" cudaError_t GpukitAMBCSRKBuildCUDA(const GpukitAMBCSR *A, int tpr, int longlen, int single, int det, GpukitAMBCSRK *K, cudaStream_t stream)
{
  GpukitAMBCSRK t = GpukitAMBCSRK();
  cudaError_t   err;

  if (!ValidCSR(A) || !K || tpr < 0 || tpr > 32 || (tpr & (tpr - 1)) || longlen < 0) return cudaErrorInvalidValue;
  *K  = GpukitAMBCSRK();
  err = CSRKBuild(A, tpr, longlen, single, det, &t, stream);
  if (err != cudaSuccess) {
    (void)GpukitAMBCSRKFree(&t, stream);
    return err;
  }
  *K = t;
  return cudaSuccess;
}

extern "C" cudaError_t GpukitAMBCSRKRefreshCUDA(const GpukitAMBCSRK *K, const double *a, cudaStream_t stream)
{
  if (!K || (K->val32 && K->nnz > 0 && !a)) return cudaErrorInvalidValue;
  if (!K->val32 || K->nnz == 0) return cudaSuccess;
  CSRKRoundKernel<<<Blocks(K->nnz, THREADS), THREADS, 0, stream>>>(K->nnz, a, K->val32);
  return cudaGetLastError();
}

extern "C" cudaError_t GpukitAMBCSRKMultCUDA(const GpukitAMBCSR *A, const GpukitAMBCSRK *K, const double *a, const double *x, const double *z, double *y, cudaStream_t stream)
{
  if (!ValidCSR(A) || !K || K->m != A->m || K->nnz != A->nnz || (A->m > 0 && !y) || (A->nnz > 0 && (!x || (!K->val32 && !a)))) return cudaErrorInvalidValue;
  if (A->m == 0) return cudaSuccess;
  if (K->val32) return LaunchCSRKT<float>(A, K, K->val32, x, z, y, stream);
  return LaunchCSRKT<double>(A, K, a, x, z, y, stream);
}

extern "C" cudaError_t GpukitAMBCSRKFree(GpukitAMBCSRK *K, cudaStream_t stream)
{
  if (!K) return cudaSuccess;
  GPUKIT_AMB_TRY(GpukitPoolFreeN(&K->longrow, stream));
  GPUKIT_AMB_TRY(GpukitPoolFreeN(&K->chstart, stream));
  GPUKIT_AMB_TRY(GpukitPoolFreeN(&K->val32, stream));
  *K = GpukitAMBCSRK();
  return cudaSuccess;
}
