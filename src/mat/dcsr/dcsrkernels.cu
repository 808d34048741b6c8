/*
   Device kernels of MATDCSRCUDA (contract: dcsrkernels.h). Pure CUDA + CUB, no PETSc; the glue is dcsrcuda.cu.
   Work arrays come from gpukit's stream-ordered pool (src/sys/gpukitpool.h): no cudaMalloc()/cudaFree() (each of which
   synchronises the device) on the batch, defragmentation or binning paths; each function synchronises the stream at
   most once, where its comment says it returns host results.

   The seed's listings (King 2017, Alg. 4-7) are followed in their intent with their bugs fixed (seed digest sec. 6):
   - the free room of a row is that of its LAST segment, cap - len (Alg. 4 line 22 used end - start);
   - the allocation checks the segment count against K and the end of the new segment against cap, and raises a flag
     instead of writing (Alg. 4 has no guard); rows with no segment at all get one;
   - the product walks the segments with a running segment index, clamps nothing beyond seglen (our segments carry
     their length), starts each lane at its offset and reduces over the group of lanes (Alg. 6 does none of these);
   - duplicates never accumulate in the matrix: the batch is sorted by (row, column) and reduced first, and entries
     already stored are hits (INSERT overwrites, ADD adds), so every row keeps unique, sorted segments;
   - the defragmentation merges the segments of a row into one SORTED segment (they are disjoint in columns but not
     ordered among themselves) and leaves slack after every row.
   The allocation kernel has one thread per row and one atomic per warp of rows (the warp's new segments back to back,
   in row order): never one per entry. No shared memory, no volatile tricks: warp reductions use __shfl_down_sync with the
   mask of the lanes of the row's group.
*/
#include <climits>
#include <cmath>
#include <new>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include "gpukitpool.h"
#include "dcsrkernels.h"

#define DCSR_BLOCK 256

static inline unsigned DCSRGrid(long long n, int block)
{
  return (unsigned)((n + block - 1) / block);
}

#define DCSR_CHECK(call) \
  do { \
    cudaError_t dcsr_err_ = (call); \
    if (dcsr_err_ != cudaSuccess) return dcsr_err_; \
  } while (0)

/* what the allocation kernel reports */
typedef struct {
  unsigned long long segfull, capfull, need, newmulti;
  int                maxnseg;
} DCSRPlanDev;

struct _p_GpukitDCSRBatch {
  long long           nu, ng, nnew; /* unique entries, row groups, new entries */
  int                 add, dropzero;
  cudaStream_t        stream;       /* the pool memory below is given back on it */
  void               *mem;          /* one pool block holding the arrays below */
  int                *urow, *ucol;  /* [nu] sorted by (row, column) */
  double             *uval;         /* [nu] reduced values */
  long long          *upos;         /* [nu] slot of a hit, -1 for a new entry */
  int                *grow, *gstart, *gnew; /* [ng] row, [ng+1] first unique entry, [ng] new entries of the row */
  long long          *galloc;       /* [ng] plan: -2 nothing to insert, -1 merge into the last segment, >= 0 new segment */
  int                *gsize;        /* [ng] capacity of the new segment */
  DCSRPlanDev        *plan;         /* [1] */
};

long long GpukitDCSRBatchBytesPerEntry(void)
{
  /* kept: urow/ucol 8, uval 8, upos 8, groups 4+4+4+8+4 (48); work: keys 2x8, perm 2x4, flags 2x4, ids 2x4, starts 4
     (44); CUB's radix sort temporary storage ~12 and alignment */
  return 128;
}

/* 256-byte aligned carving of one pool block */
static inline size_t DCSRAlign(size_t b)
{
  return (b + 255) & ~(size_t)255;
}

/* ------------------------------------------------------------------------------------------------------
   Validation
   ------------------------------------------------------------------------------------------------------ */

__global__ static void DCSRValidateKernel(long long n, const int *__restrict__ i, const int *__restrict__ j, long long rstart, long long m, long long cstart, long long ncol, unsigned long long *firstbad)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  const long long r = i[e], c = j[e];
  if (r < 0 || c < 0) return; /* ignored, as MatSetValues() ignores negative indices */
  if (r < rstart || r - rstart >= m || c < cstart || c - cstart >= ncol) atomicMin(firstbad, (unsigned long long)e);
}

/* one synchronisation (two when an index is bad) */
cudaError_t GpukitDCSRBatchValidate(const GpukitDCSRDev *A, long long nent, const int *i, const int *j, long long rstart, long long cstart, GpukitDCSRBad *bad, cudaStream_t stream)
{
  GpukitPoolTemp     d(stream);
  unsigned long long h = ULLONG_MAX;
  int                ij[2];

  bad->entry = -1;
  bad->row = bad->col = 0;
  if (nent <= 0) return cudaSuccess;
  if (!i || !j) return cudaErrorInvalidValue;
  DCSR_CHECK(d.Get(sizeof(unsigned long long)));
  DCSR_CHECK(cudaMemsetAsync(d.p, 0xff, sizeof(unsigned long long), stream)); /* ULLONG_MAX */
  DCSRValidateKernel<<<DCSRGrid(nent, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(nent, i, j, rstart, A->m, cstart, A->n, d.As<unsigned long long>());
  DCSR_CHECK(cudaGetLastError());
  DCSR_CHECK(cudaMemcpyAsync(&h, d.p, sizeof(h), cudaMemcpyDeviceToHost, stream));
  DCSR_CHECK(cudaStreamSynchronize(stream));
  if (h != ULLONG_MAX) {
    DCSR_CHECK(cudaMemcpyAsync(&ij[0], i + h, sizeof(int), cudaMemcpyDeviceToHost, stream));
    DCSR_CHECK(cudaMemcpyAsync(&ij[1], j + h, sizeof(int), cudaMemcpyDeviceToHost, stream));
    DCSR_CHECK(cudaStreamSynchronize(stream));
    bad->entry = (long long)h;
    bad->row   = ij[0];
    bad->col   = ij[1];
  }
  return cudaSuccess;
}

/* ------------------------------------------------------------------------------------------------------
   Batch: sort, reduce, hits, row groups. Keys (local row << cb | local column), cb the bits of the block's largest
   column, so that the radix sort's passes cover only the bits a key can have (e.g. 38 of 64 at 512K x 512K, 5 passes
   instead of 7: each pass is a launch of its own, latency-bound on a small batch); an entry with a negative index gets
   the key of row m (after every valid key), so the valid entries are the first nvalid of the sorted batch. The unique
   entries and the row groups are numbered by two scans of head flags over the sorted keys; every array is sized by
   the batch (an upper bound of both counts), so nothing waits for a count before the last kernel: one
   synchronisation per batch, for the counts the caller needs. Both scans are one (int2 flags), and one memset clears
   the counts.
   ------------------------------------------------------------------------------------------------------ */

/* what GpukitDCSRBatchCreate() reads back (one copy) */
typedef struct {
  unsigned long long nvalid, nu, ng, nnew, nrowsnew;
  unsigned long long firstbad; /* ULLONG_MAX - the first entry out of range (0: none; so that one memset clears the counts) */
} DCSRBatchCounts;

/* an entry with a negative index, or out of range (recorded in firstbad when validate), gets the key of row m */
__global__ static void DCSRKeysKernel(long long n, const int *__restrict__ i, const int *__restrict__ j, long long rstart, long long cstart, long long m, long long ncol, int cb, int validate, unsigned long long *key, int *perm, unsigned long long *firstbad)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  const long long r = i[e], c = j[e];
  bool            ok = r >= 0 && c >= 0;
  if (ok && (r < rstart || r - rstart >= m || c < cstart || c - cstart >= ncol)) {
    ok = false;
    if (validate) atomicMax(firstbad, ULLONG_MAX - (unsigned long long)e);
  }
  key[e]  = ok ? (((unsigned long long)(r - rstart)) << cb) | (unsigned long long)(c - cstart) : ((unsigned long long)m << cb);
  perm[e] = (int)e;
}

/* over the sorted keys: flag.x = 1 where a distinct (row, column) starts, flag.y = 1 where a row starts (valid entries
   only); the last valid entry records nvalid */
__global__ static void DCSRHeadsKernel(long long n, const unsigned long long *__restrict__ key, unsigned long long m, int cb, int2 *flag, DCSRBatchCounts *cnt)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  const unsigned long long k     = key[e];
  const bool               valid = (k >> cb) < m;
  flag[e]                        = make_int2((valid && (e == 0 || key[e - 1] != k)) ? 1 : 0, (valid && (e == 0 || (key[e - 1] >> cb) != (k >> cb))) ? 1 : 0);
  if (valid && (e == n - 1 || (key[e + 1] >> cb) >= m)) cnt->nvalid = (unsigned long long)(e + 1);
}

/* the scan of the head flags: both components at once (one scan instead of two) */
struct DCSRPairSum {
  __host__ __device__ __forceinline__ int2 operator()(const int2 &a, const int2 &b) const { return make_int2(a.x + b.x, a.y + b.y); }
};

/* id = inclusive scan of flag (x: distinct entries, y: rows). ustart[u] = first sorted entry of distinct entry u
   (ustart[nu] = nvalid); gstart[g] = first distinct entry of row group g (gstart[ng] = nu); the counts nu, ng */
__global__ static void DCSRStartsKernel(long long n, const unsigned long long *__restrict__ key, unsigned long long m, int cb, const int2 *__restrict__ flag, const int2 *__restrict__ id, int *ustart, int *gstart, DCSRBatchCounts *cnt)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  const unsigned long long k = key[e];
  if ((k >> cb) >= m) return;
  const int2 f = flag[e], q = id[e];
  if (f.x) ustart[q.x - 1] = (int)e;
  if (f.y) gstart[q.y - 1] = q.x - 1;
  if (e == n - 1 || (key[e + 1] >> cb) >= m) { /* the last valid entry */
    ustart[q.x] = (int)(e + 1);
    gstart[q.y] = q.x;
    cnt->nu     = (unsigned long long)q.x;
    cnt->ng     = (unsigned long long)q.y;
  }
}

/* the slot of column c in row r, or -1 (every segment is sorted: a binary search per segment) */
__device__ static long long DCSRFind(int r, int c, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx)
{
  const long long base = (long long)r * K;
  const int       ns   = nseg[r];
  for (int s = 0; s < ns; s++) {
    const long long st = segstart[base + s];
    int             lo = 0, hi = seglen[base + s];
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      const int cm  = colidx[st + mid];
      if (cm == c) return st + mid;
      if (cm < c) lo = mid + 1;
      else hi = mid;
    }
  }
  return -1;
}

/* one thread per sorted entry; the head of each distinct (row, column) reduces its duplicates (INSERT: the last one,
   the sort being stable; ADD: their sum in input order) and looks it up: upos = slot of a hit, -1 new, -2 a new zero
   off the diagonal dropped (MAT_IGNORE_ZERO_ENTRIES) */
__global__ static void DCSRReduceLookupKernel(long long n, const unsigned long long *__restrict__ key, int cb, const int *__restrict__ perm, const double *__restrict__ v, int add, int dropzero, const int2 *__restrict__ flag, const int2 *__restrict__ id, const int *__restrict__ ustart, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx, int *urow, int *ucol, double *uval, long long *upos)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n || !flag[e].x) return;
  const int                u = id[e].x - 1;
  const int                t = ustart[u + 1];
  const unsigned long long k = key[e];
  const int                r = (int)(k >> cb), c = (int)(k & ((1ULL << cb) - 1ULL));
  double                   val = 0.0;
  if (v) {
    if (add)
      for (int p = (int)e; p < t; p++) val += v[perm[p]];
    else val = v[perm[t - 1]];
  }
  urow[u]     = r;
  ucol[u]     = c;
  uval[u]     = val;
  long long p = DCSRFind(r, c, K, segstart, seglen, nseg, colidx);
  if (p < 0 && dropzero && val == 0.0 && r != c) p = -2;
  upos[u] = p;
}

/* again a lookup, after a defragmentation moved the slots of the hits */
__global__ static void DCSRLookupKernel(long long nu, const int *__restrict__ urow, const int *__restrict__ ucol, const double *__restrict__ uval, int dropzero, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx, long long *upos)
{
  const long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (u >= nu) return;
  long long p = DCSRFind(urow[u], ucol[u], K, segstart, seglen, nseg, colidx);
  if (p < 0 && dropzero && uval[u] == 0.0 && urow[u] != ucol[u]) p = -2;
  upos[u] = p;
}

/* one thread per sorted entry; the head of each row group: its row, its new entries, and the batch's counts (summed over
   the warp first: one atomic per warp and count, not one per row on the same two addresses). Every thread reaches the
   warp step */
__global__ static void DCSRGroupKernel(long long n, const unsigned long long *__restrict__ key, int cb, const int2 *__restrict__ flag, const int2 *__restrict__ id, const int *__restrict__ gstart, const long long *__restrict__ upos, int *grow, int *gnew, DCSRBatchCounts *cnt)
{
  const long long    e    = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int          lane = (int)(threadIdx.x & 31);
  unsigned long long nn = 0, rows = 0;
  if (e < n && flag[e].y) {
    const int g = id[e].y - 1;
    int       k = 0;
    for (int u = gstart[g]; u < gstart[g + 1]; u++) k += upos[u] == -1 ? 1 : 0;
    grow[g] = (int)(key[e] >> cb);
    gnew[g] = k;
    nn      = (unsigned long long)k;
    rows    = k ? 1 : 0;
  }
  for (int o = 16; o > 0; o >>= 1) {
    nn += __shfl_down_sync(0xffffffffu, nn, o);
    rows += __shfl_down_sync(0xffffffffu, rows, o);
  }
  if (lane == 0 && nn) {
    atomicAdd(&cnt->nnew, nn);
    atomicAdd(&cnt->nrowsnew, rows);
  }
}

cudaError_t GpukitDCSRBatchDestroy(GpukitDCSRBatch *b)
{
  cudaError_t err = cudaSuccess;

  if (!*b) return cudaSuccess;
  if ((*b)->mem) err = GpukitPoolFree((*b)->mem, (*b)->stream);
  delete *b;
  *b = NULL;
  return err;
}

/* the number of bits of the keys' row part: rows 0..m (m: the invalid entries) */
static int DCSRRowBits(long long m)
{
  int bits = 1;
  while (bits < 32 && (m >> bits) != 0) bits++;
  return bits;
}

/* the number of bits of the keys' column part: columns 0..n-1 */
static int DCSRColBits(long long n)
{
  int bits = 1;
  while (bits < 32 && ((n - 1) >> bits) > 0) bits++;
  return bits;
}

/* one synchronisation: the counts (two when an index is bad) */
cudaError_t GpukitDCSRBatchCreate(const GpukitDCSRDev *A, long long nent, const int *i, const int *j, const double *v, long long rstart, long long cstart, int add, int dropzero, GpukitDCSRBad *bad, GpukitDCSRBatch *bout, GpukitDCSRBatchInfo *info, cudaStream_t stream)
{
  GpukitDCSRBatch b;
  DCSRBatchCounts hc = {0, 0, 0, 0, 0, 0};
  const size_t    n  = (size_t)(nent > 0 ? nent : 0);
  cudaError_t     err;

  *bout = NULL;
  info->nvalid = info->nunique = info->nnew = info->nrows = info->nrowsnew = 0;
  info->segfull = info->capfull = info->need = info->newmulti = 0;
  info->maxnseg = 0;
  if (bad) {
    bad->entry = -1;
    bad->row = bad->col = 0;
  }
  if (nent < 0 || nent >= (long long)INT_MAX) return cudaErrorInvalidValue; /* the caller splits larger batches */
  if (nent > 0 && (!i || !j)) return cudaErrorInvalidValue;
  b = new (std::nothrow) _p_GpukitDCSRBatch();
  if (!b) return cudaErrorMemoryAllocation;
  b->add      = add ? 1 : 0;
  b->dropzero = dropzero ? 1 : 0;
  b->stream   = stream;
  { /* the batch's own arrays, sized by the batch: one pool block */
    const size_t o_urow = 0, o_ucol = o_urow + DCSRAlign(n * sizeof(int)), o_uval = o_ucol + DCSRAlign(n * sizeof(int)), o_upos = o_uval + DCSRAlign(n * sizeof(double));
    const size_t o_grow = o_upos + DCSRAlign(n * sizeof(long long)), o_gstart = o_grow + DCSRAlign(n * sizeof(int)), o_gnew = o_gstart + DCSRAlign((n + 1) * sizeof(int));
    const size_t o_galloc = o_gnew + DCSRAlign(n * sizeof(int)), o_gsize = o_galloc + DCSRAlign(n * sizeof(long long)), o_plan = o_gsize + DCSRAlign(n * sizeof(int));
    const size_t total = o_plan + DCSRAlign(sizeof(DCSRPlanDev));
    char        *p;
    err = GpukitPoolMalloc(&b->mem, total, stream);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      delete b;
      return err;
    }
    p         = (char *)b->mem;
    b->urow   = (int *)(p + o_urow);
    b->ucol   = (int *)(p + o_ucol);
    b->uval   = (double *)(p + o_uval);
    b->upos   = (long long *)(p + o_upos);
    b->grow   = (int *)(p + o_grow);
    b->gstart = (int *)(p + o_gstart);
    b->gnew   = (int *)(p + o_gnew);
    b->galloc = (long long *)(p + o_galloc);
    b->gsize  = (int *)(p + o_gsize);
    b->plan   = (DCSRPlanDev *)(p + o_plan);
  }
  if (n > 0 && (A->m > 0 || bad)) {
    GpukitPoolTemp work(stream), tmp(stream);
    const size_t   o_k0 = 0, o_k1 = o_k0 + DCSRAlign(n * 8), o_p0 = o_k1 + DCSRAlign(n * 8), o_p1 = o_p0 + DCSRAlign(n * 4), o_fl = o_p1 + DCSRAlign(n * 4);
    const size_t   o_id = o_fl + DCSRAlign(n * 8), o_us = o_id + DCSRAlign(n * 8);
    const size_t   o_cnt = o_us + DCSRAlign((n + 1) * 4), total = o_cnt + DCSRAlign(sizeof(DCSRBatchCounts));
    size_t         bsort = 0, bscan = 0;
    const int      cb = DCSRColBits(A->n), nn = (int)n, endbit = cb + DCSRRowBits(A->m);

    err = work.Get(total);
    if (err == cudaSuccess) {
      char               *w     = work.As<char>();
      unsigned long long *key0  = (unsigned long long *)(w + o_k0), *key = (unsigned long long *)(w + o_k1);
      int                *perm0 = (int *)(w + o_p0), *perm = (int *)(w + o_p1);
      int2               *flag  = (int2 *)(w + o_fl), *id = (int2 *)(w + o_id);
      int                *ustart = (int *)(w + o_us);
      DCSRBatchCounts    *cnt   = (DCSRBatchCounts *)(w + o_cnt);

      err = cub::DeviceRadixSort::SortPairs(nullptr, bsort, key0, key, perm0, perm, nn, 0, endbit, stream);
      if (err == cudaSuccess) err = cub::DeviceScan::InclusiveScan(nullptr, bscan, flag, id, DCSRPairSum(), nn, stream);
      if (err == cudaSuccess) err = tmp.Get(bsort > bscan ? bsort : bscan);
      if (err == cudaSuccess) err = cudaMemsetAsync(cnt, 0, sizeof(DCSRBatchCounts), stream);
      if (err == cudaSuccess) {
        DCSRKeysKernel<<<DCSRGrid(nent, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(nent, i, j, rstart, cstart, A->m, A->n, cb, bad ? 1 : 0, key0, perm0, &cnt->firstbad);
        err = cudaGetLastError();
      }
      /* radix sort: stable, duplicates keep their input order */
      if (err == cudaSuccess) err = cub::DeviceRadixSort::SortPairs(tmp.p, bsort, key0, key, perm0, perm, nn, 0, endbit, stream);
      if (err == cudaSuccess) {
        DCSRHeadsKernel<<<DCSRGrid(nent, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(nent, key, (unsigned long long)A->m, cb, flag, cnt);
        err = cudaGetLastError();
      }
      if (err == cudaSuccess) err = cub::DeviceScan::InclusiveScan(tmp.p, bscan, flag, id, DCSRPairSum(), nn, stream);
      if (err == cudaSuccess) {
        DCSRStartsKernel<<<DCSRGrid(nent, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(nent, key, (unsigned long long)A->m, cb, flag, id, ustart, b->gstart, cnt);
        err = cudaGetLastError();
      }
      if (err == cudaSuccess) {
        DCSRReduceLookupKernel<<<DCSRGrid(nent, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(nent, key, cb, perm, v, b->add, b->dropzero, flag, id, ustart, A->K, A->segstart, A->seglen, A->nseg, A->colidx, b->urow, b->ucol, b->uval, b->upos);
        err = cudaGetLastError();
      }
      if (err == cudaSuccess) {
        DCSRGroupKernel<<<DCSRGrid(nent, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(nent, key, cb, flag, id, b->gstart, b->upos, b->grow, b->gnew, cnt);
        err = cudaGetLastError();
      }
      if (err == cudaSuccess) err = cudaMemcpyAsync(&hc, cnt, sizeof(hc), cudaMemcpyDeviceToHost, stream);
      if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
    }
    /* work and tmp go back to the pool here, ordered after the kernels on stream */
  }
  if (err == cudaSuccess && bad && hc.firstbad != 0) { /* refused: no batch, the matrix untouched */
    const unsigned long long e = ULLONG_MAX - hc.firstbad;
    int                      ij[2];
    err = cudaMemcpyAsync(&ij[0], i + e, sizeof(int), cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess) err = cudaMemcpyAsync(&ij[1], j + e, sizeof(int), cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
    if (err == cudaSuccess) {
      bad->entry = (long long)e;
      bad->row   = ij[0];
      bad->col   = ij[1];
      GpukitDCSRBatchDestroy(&b);
      return cudaSuccess;
    }
  }
  if (err != cudaSuccess) {
    (void)cudaGetLastError(); /* a failed allocation is not sticky: clear it */
    GpukitDCSRBatchDestroy(&b);
    return err;
  }
  b->nu          = (long long)hc.nu;
  b->ng          = (long long)hc.ng;
  b->nnew        = (long long)hc.nnew;
  info->nvalid   = (long long)hc.nvalid;
  info->nunique  = b->nu;
  info->nnew     = b->nnew;
  info->nrows    = b->ng;
  info->nrowsnew = (long long)hc.nrowsnew;
  *bout          = b;
  return cudaSuccess;
}

/* ------------------------------------------------------------------------------------------------------
   The allocation kernel (seed Alg. 4, with the guards) and the insertion kernel (Alg. 5, sorted)
   ------------------------------------------------------------------------------------------------------ */

/* one thread per row group; the rows that need a new segment share one atomic per warp: a warp's new segments are
   reserved back to back in group (row) order, so that a batch's new entries lie in row order in the buffer (the CSR
   base's fix-up then reads them coalesced). Every thread reaches the warp steps (no early return before them) */
__global__ static void DCSRPlanKernel(long long ng, const int *__restrict__ grow, const int *__restrict__ gnew, int K, const int *__restrict__ seglen, const int *__restrict__ segcap, const int *__restrict__ nseg, const int *__restrict__ rowlen, unsigned long long *dused, long long cap, double slack, int minseg, int insertnew, long long *galloc, int *gsize, DCSRPlanDev *pd)
{
  const long long    g    = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int          lane = (int)(threadIdx.x & 31);
  unsigned long long size = 0; /* of this row's new segment; 0: none */
  int                q    = 0;

  if (g < ng) {
    const int nn = gnew[g];
    galloc[g]    = -2;
    gsize[g]     = 0;
    if (insertnew && nn != 0) {
      const int       r    = grow[g];
      const int       ns   = nseg[r];
      const long long base = (long long)r * K;
      if (ns > 0 && segcap[base + ns - 1] - seglen[base + ns - 1] >= nn) { /* room in the last segment: the row's free slots are there only */
        galloc[g] = -1;
        atomicMax(&pd->maxnseg, ns);
      } else {
        q = (ns > 0 && seglen[base + ns - 1] == 0) ? ns - 1 : ns; /* an empty last segment without room: its table entry is reused */
        if (q >= K) { /* segment cap: the caller defragments */
          atomicAdd(&pd->segfull, 1ULL);
          galloc[g] = -3;
        } else {
          const long long len = (long long)rowlen[r] + nn;
          long long       sz  = (long long)ceil(slack * (double)len);
          if (sz < minseg) sz = minseg;
          if (sz > (long long)INT_MAX - 1) sz = (long long)INT_MAX - 1;
          if (sz < nn) sz = nn;
          size = (unsigned long long)sz;
        }
      }
    }
  }
  /* the warp's reservation: an inclusive scan of the sizes, one atomic by lane 31 */
  unsigned long long incl = size;
  for (int o = 1; o < 32; o <<= 1) {
    const unsigned long long t = __shfl_up_sync(0xffffffffu, incl, o);
    if (lane >= o) incl += t;
  }
  const unsigned long long total = __shfl_sync(0xffffffffu, incl, 31);
  unsigned long long       first = 0;
  if (total == 0) return; /* warp-uniform */
  if (lane == 31) {
    first = atomicAdd(dused, total);
    atomicAdd(&pd->need, total);
  }
  first = __shfl_sync(0xffffffffu, first, 31);
  if (size == 0) return;
  const unsigned long long addr = first + incl - size;
  if ((long long)(addr + size) > cap) { /* capacity: the caller grows and defragments; nothing written */
    atomicAdd(&pd->capfull, 1ULL);
    galloc[g] = -3;
    return;
  }
  galloc[g] = (long long)addr;
  gsize[g]  = (int)size;
  if (q == 1) atomicAdd(&pd->newmulti, 1ULL);
  atomicMax(&pd->maxnseg, q + 1);
}

cudaError_t GpukitDCSRBatchPlan(GpukitDCSRDev *A, GpukitDCSRBatch b, int insertnew, double slack, int minseg, GpukitDCSRBatchInfo *info, cudaStream_t stream)
{
  DCSRPlanDev        pd;
  unsigned long long used;

  info->segfull = info->capfull = info->need = info->newmulti = 0;
  info->maxnseg = 0;
  if (!b->ng || !insertnew || !b->nnew) return cudaSuccess;
  DCSR_CHECK(cudaMemsetAsync(b->plan, 0, sizeof(DCSRPlanDev), stream));
  DCSRPlanKernel<<<DCSRGrid(b->ng, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(b->ng, b->grow, b->gnew, A->K, A->seglen, A->segcap, A->nseg, A->rowlen, A->dused, A->cap, slack, minseg, insertnew, b->galloc, b->gsize, b->plan);
  DCSR_CHECK(cudaGetLastError());
  DCSR_CHECK(cudaMemcpyAsync(&pd, b->plan, sizeof(pd), cudaMemcpyDeviceToHost, stream));
  DCSR_CHECK(cudaMemcpyAsync(&used, A->dused, sizeof(used), cudaMemcpyDeviceToHost, stream));
  DCSR_CHECK(cudaStreamSynchronize(stream));
  info->segfull  = (long long)pd.segfull;
  info->capfull  = (long long)pd.capfull;
  info->need     = (long long)pd.need;
  info->newmulti = (long long)pd.newmulti;
  info->maxnseg  = pd.maxnseg;
  if (pd.segfull || pd.capfull) { /* nothing was written: put the bump pointer back */
    used = (unsigned long long)A->used;
    DCSR_CHECK(cudaMemcpyAsync(A->dused, &used, sizeof(used), cudaMemcpyHostToDevice, stream));
    DCSR_CHECK(cudaStreamSynchronize(stream));
  } else A->used = (long long)used;
  return cudaSuccess;
}

cudaError_t GpukitDCSRBatchRelocate(const GpukitDCSRDev *A, GpukitDCSRBatch b, cudaStream_t stream)
{
  if (!b->nu) return cudaSuccess;
  DCSRLookupKernel<<<DCSRGrid(b->nu, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(b->nu, b->urow, b->ucol, b->uval, b->dropzero, A->K, A->segstart, A->seglen, A->nseg, A->colidx, b->upos);
  return cudaGetLastError();
}

__global__ static void DCSRRowExtraKernel(long long ng, const int *__restrict__ grow, const int *__restrict__ gnew, int *extra)
{
  const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= ng) return;
  extra[grow[g]] = gnew[g];
}

cudaError_t GpukitDCSRBatchRowExtra(const GpukitDCSRDev *A, GpukitDCSRBatch b, int *extra, cudaStream_t stream)
{
  if (A->m > 0) DCSR_CHECK(cudaMemsetAsync(extra, 0, (size_t)A->m * sizeof(int), stream));
  if (!b->ng) return cudaSuccess;
  DCSRRowExtraKernel<<<DCSRGrid(b->ng, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(b->ng, b->grow, b->gnew, extra);
  return cudaGetLastError();
}

/* hits: distinct slots (the batch is reduced), so no two threads write one value */
__global__ static void DCSRHitKernel(long long nu, const long long *__restrict__ upos, const double *__restrict__ uval, int add, double *values)
{
  const long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (u >= nu) return;
  const long long p = upos[u];
  if (p < 0) return;
  if (add) values[p] += uval[u];
  else values[p] = uval[u];
}

/* one thread per row of the batch: the new entries (sorted) merged into the last segment from the back, or written
   into the new segment; then the row's segment table */
__global__ static void DCSRInsertKernel(long long ng, const int *__restrict__ grow, const int *__restrict__ gstart, const int *__restrict__ gnew, const long long *__restrict__ galloc, const int *__restrict__ gsize, const int *__restrict__ ucol, const double *__restrict__ uval, const long long *__restrict__ upos, int K, long long *segstart, int *seglen, int *segcap, int *nseg, int *rowlen, int *colidx, double *values)
{
  const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= ng) return;
  const long long a  = galloc[g];
  const int       nn = gnew[g];
  if (a < -1 || nn == 0) return;
  const int       r = grow[g], s0 = gstart[g], s1 = gstart[g + 1];
  const long long base = (long long)r * K;
  const int       ns   = nseg[r];
  if (a == -1) {
    const long long st = segstart[base + ns - 1];
    const int       L  = seglen[base + ns - 1];
    long long       k  = (long long)L + nn - 1;
    int             ii = L - 1, jj = s1 - 1;
    while (jj >= s0) {
      if (upos[jj] != -1) {
        jj--;
        continue;
      }
      const int c = ucol[jj];
      if (ii >= 0 && colidx[st + ii] > c) {
        colidx[st + k] = colidx[st + ii];
        values[st + k] = values[st + ii];
        ii--;
      } else {
        colidx[st + k] = c;
        values[st + k] = uval[jj];
        jj--;
      }
      k--;
    }
    seglen[base + ns - 1] = L + nn;
  } else {
    long long k = a;
    for (int e = s0; e < s1; e++) {
      if (upos[e] != -1) continue;
      colidx[k] = ucol[e];
      values[k] = uval[e];
      k++;
    }
    const int q = (ns > 0 && seglen[base + ns - 1] == 0) ? ns - 1 : ns; /* as the allocation kernel decided */
    segstart[base + q] = a;
    seglen[base + q]   = nn;
    segcap[base + q]   = gsize[g];
    nseg[r]            = q + 1;
  }
  rowlen[r] += nn;
}

cudaError_t GpukitDCSRBatchApply(GpukitDCSRDev *A, GpukitDCSRBatch b, int insertnew, cudaStream_t stream)
{
  if (!b->nu) return cudaSuccess;
  DCSRHitKernel<<<DCSRGrid(b->nu, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(b->nu, b->upos, b->uval, b->add, A->values);
  DCSR_CHECK(cudaGetLastError());
  if (!insertnew || !b->nnew) return cudaSuccess;
  DCSRInsertKernel<<<DCSRGrid(b->ng, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(b->ng, b->grow, b->gstart, b->gnew, b->galloc, b->gsize, b->ucol, b->uval, b->upos, A->K, A->segstart, A->seglen, A->segcap, A->nseg, A->rowlen, A->colidx, A->values);
  return cudaGetLastError();
}

/* ------------------------------------------------------------------------------------------------------
   Defragmentation (seed Alg. 7: a scan of the row sizes, a compaction; here each row also merged sorted)
   ------------------------------------------------------------------------------------------------------ */

#define DCSR_FULL_MASK_D 0xffffffffu

/* rows longer than this are moved by the long-row kernel (a grid of blocks per row), the others by the tile kernel */
#define DCSR_DEFRAG_LONG  1024
#define DCSR_DEFRAG_CHUNK 2048 /* entries of a long row a block moves per step */

/* what the defragmentation reads back, right after off[m] (one copy of 3 long longs, one synchronisation) */
typedef struct {
  long long nlong;   /* rows longer than DCSR_DEFRAG_LONG */
  long long maxlong; /* the longest of them */
} DCSRDefragCounts;

/* the capacity a defragmentation gives a row of len entries: len + max(ceil(slack*len), extra), at most INT_MAX - 1 */
__host__ __device__ static inline long long DCSRRowCapacity(long long len, double slack, int extra)
{
  long long rm = (long long)ceil(slack * (double)len);
  if (extra > rm) rm = extra;
  if (len + rm > (long long)INT_MAX - 1) rm = (long long)INT_MAX - 1 - len;
  return len + rm;
}

/* one thread per row: the row's new capacity into room[r] (room[m] = 0, the scan makes off[]), and the list of the
   long rows (order not fixed: every row's destination comes from off[], so the result does not depend on it) */
__global__ static void DCSRRowCapKernel(int m, const int *__restrict__ rowlen, double slack, const int *__restrict__ extra, long long *room, int *longrows, DCSRDefragCounts *cnt)
{
  const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r > m) return;
  if (r == m) {
    room[m] = 0;
    return;
  }
  const long long len = rowlen[r];
  room[r]             = DCSRRowCapacity(len, slack, extra ? extra[r] : 0);
  if (len > DCSR_DEFRAG_LONG) {
    longrows[atomicAdd((unsigned long long *)&cnt->nlong, 1ULL)] = (int)r;
    atomicMax((unsigned long long *)&cnt->maxlong, (unsigned long long)len);
  }
}

/* the capacity of row r (r < m; 0 for r = m) with no extra room: the defragmentation's scan reads the row lengths through
   it when no long-row list is needed (no array of capacities, no kernel to fill it) */
struct DCSRCapacityOp {
  const int *rowlen;
  int        m;
  double     slack;
  __host__ __device__ long long operator()(int r) const { return r < m ? DCSRRowCapacity(rowlen[r], slack, 0) : 0; }
};

/* the place in its row (0..rowlen-1) of entry k of segment s, column c: k + the entries of the other segments with a
   smaller column (the row's columns are distinct, its segments sorted) */
__device__ static inline long long DCSRMergedPlace(int s, int k, int c, int ns, long long base, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ colidx)
{
  long long d = k;
  for (int q = 0; q < ns; q++) {
    if (q == s) continue;
    const long long sq = segstart[base + q];
    int             lo = 0, hi = seglen[base + q];
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (colidx[sq + mid] < c) lo = mid + 1;
      else hi = mid;
    }
    d += lo;
  }
  return d;
}

/* entry k (0..rowlen-1, in the order of the segments) of a row with ns > 1 segments to its sorted place at out */
__device__ static inline void DCSRMoveMulti(long long k, int ns, long long base, long long out, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ colidx, const double *__restrict__ values, int *ncol, double *nval)
{
  long long acc = 0;
  for (int s = 0; s < ns; s++) {
    const int len = seglen[base + s];
    if (k < acc + len) {
      const long long src = segstart[base + s] + (k - acc);
      const int       c   = colidx[src];
      const long long d   = DCSRMergedPlace(s, (int)(k - acc), c, ns, base, segstart, seglen, colidx);
      ncol[out + d]       = c;
      nval[out + d]       = values[src];
      return;
    }
    acc += len;
  }
}

/* the long rows: block (x, y) moves chunks y, y + gridDim.y, ... of DCSR_DEFRAG_CHUNK entries of long row x. Reads the
   segment tables of its rows, writes none (the tile kernel, launched after, rewrites them) */
__global__ static void __launch_bounds__(DCSR_BLOCK) DCSRCompactLongKernel(const int *__restrict__ longrows, int K, const long long *__restrict__ off, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ rowlen, const int *__restrict__ colidx, const double *__restrict__ values, int *ncol, double *nval)
{
  const long long r    = longrows[blockIdx.x];
  const long long base = r * K;
  const int       ns   = nseg[r];
  const long long len  = rowlen[r];
  const long long out  = off[r];
  for (long long c0 = (long long)blockIdx.y * DCSR_DEFRAG_CHUNK; c0 < len; c0 += (long long)gridDim.y * DCSR_DEFRAG_CHUNK) {
    const long long c1 = c0 + DCSR_DEFRAG_CHUNK < len ? c0 + DCSR_DEFRAG_CHUNK : len;
    if (ns == 1) { /* a copy */
      const long long st = segstart[base];
      for (long long k = c0 + threadIdx.x; k < c1; k += blockDim.x) {
        ncol[out + k] = colidx[st + k];
        nval[out + k] = values[st + k];
      }
    } else
      for (long long k = c0 + threadIdx.x; k < c1; k += blockDim.x) DCSRMoveMulti(k, ns, base, out, segstart, seglen, colidx, values, ncol, nval);
  }
}

/* entries of a tile a lane moves per step: their loads are all issued before their stores (a lane's loads otherwise
   waited for its stores of the step before; ncu had the kernel at about 1.2 TB/s on an H200). A build may set it
   (EXTRA_CFLAGS=-DDCSR_TILE_UNROLL=1) to compare. */
#ifndef DCSR_TILE_UNROLL
  #define DCSR_TILE_UNROLL 4
#endif

/* a row of several segments with at most DCSR_MERGE_WARP entries (and at most 32 segments) is merged by the whole warp
   of its tile: its lanes load the row's entries (two each) and place each by counting the row's smaller columns through
   shuffles, no dependent loads; longer ones (rare: rows that got new entries are mostly short) by DCSRMoveMulti() */
#define DCSR_MERGE_WARP 64

/* the other rows, a warp per tile of 32 consecutive rows: the lanes scan the tile's row lengths and move its entries
   together (entry e of the tile by lane e % 32: consecutive rows that are contiguous in the buffer are read and written
   coalesced); a row with several segments merges them sorted (the short ones by the warp together, after the
   entries of the other rows). Then each lane rewrites the segment table of its row
   (long rows included): one segment of capacity off[r+1] - off[r] (or none), the old entries s < nseg zeroed (I1);
   rowptr (not NULL) gets the row's start, zero (not NULL, m+1 ints) zeros, and the lane of row m-1 writes rowptr[m]
   and *dused (the total, off[m]). No early return: every lane takes part in the shuffles. */
__global__ static void __launch_bounds__(DCSR_BLOCK) DCSRCompactTileKernel(int m, int K, const long long *__restrict__ off, long long *segstart, int *seglen, int *segcap, int *nseg, const int *__restrict__ rowlen, const int *__restrict__ colidx, const double *__restrict__ values, int *__restrict__ ncol, double *__restrict__ nval, int *__restrict__ rowptr, int *__restrict__ zero, unsigned long long *__restrict__ dused)
{
  const long long tile = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int       lane = (int)(threadIdx.x & 31);
  const long long r    = tile * 32 + lane;
  const bool      in   = r < m;
  const int       ns   = in ? nseg[r] : 0;
  const int       len  = in ? rowlen[r] : 0;
  const bool      wm   = ns > 1 && ns <= 32 && len > 0 && len <= DCSR_MERGE_WARP; /* merged by the warp below */
  const int       mine = (len > DCSR_DEFRAG_LONG || wm) ? 0 : len;                 /* long rows: moved by DCSRCompactLongKernel */
  const long long base = r * K;
  const long long out  = in ? off[r] : 0;
  const long long st0  = ns >= 1 ? segstart[base] : 0;
  int             incl = mine, total;
  unsigned        todo;

  if (tile * 32 >= m) return; /* the whole warp (tile is the same for its 32 lanes) */
  for (int o = 1; o < 32; o <<= 1) {
    const int v = __shfl_up_sync(DCSR_FULL_MASK_D, incl, o);
    if (lane >= o) incl += v;
  }
  total = __shfl_sync(DCSR_FULL_MASK_D, incl, 31);
  for (int e0 = 0; e0 < total; e0 += 32 * DCSR_TILE_UNROLL) {
    int       c[DCSR_TILE_UNROLL];
    double    v[DCSR_TILE_UNROLL];
    long long d[DCSR_TILE_UNROLL];
#pragma unroll
    for (int u = 0; u < DCSR_TILE_UNROLL; u++) {
      const int e = e0 + 32 * u + lane;
      int       i = 0; /* the lane (row of the tile) that owns entry e: the first with incl > e */
      d[u]        = -1;
      if (e0 + 32 * u >= total) continue; /* the same for the whole warp */
      for (int b = 16; b > 0; b >>= 1) {
        const int w = __shfl_sync(DCSR_FULL_MASK_D, incl, i + b - 1);
        if (w <= e) i += b;
      }
      i                   = i < 31 ? i : 31;
      const int       oi  = __shfl_sync(DCSR_FULL_MASK_D, incl - mine, i); /* entries of the tile before row i */
      const int       nsi = __shfl_sync(DCSR_FULL_MASK_D, ns, i);
      const long long sti = __shfl_sync(DCSR_FULL_MASK_D, st0, i);
      const long long oui = __shfl_sync(DCSR_FULL_MASK_D, out, i);
      if (e < total) {
        const long long k = e - oi;
        if (nsi == 1) {
          c[u] = colidx[sti + k];
          v[u] = values[sti + k];
          d[u] = oui + k;
        } else DCSRMoveMulti(k, nsi, (tile * 32 + i) * K, oui, segstart, seglen, colidx, values, ncol, nval);
      }
    }
#pragma unroll
    for (int u = 0; u < DCSR_TILE_UNROLL; u++)
      if (d[u] >= 0) {
        ncol[d[u]] = c[u];
        nval[d[u]] = v[u];
      }
  }
  /* the short rows of several segments, one after the other, each by the whole warp */
  todo = __ballot_sync(DCSR_FULL_MASK_D, wm);
  while (todo) {
    const int       i    = __ffs((int)todo) - 1;
    const int       nsi  = __shfl_sync(DCSR_FULL_MASK_D, ns, i);
    const int       leni = __shfl_sync(DCSR_FULL_MASK_D, len, i);
    const long long oui  = __shfl_sync(DCSR_FULL_MASK_D, out, i);
    const long long bi   = (tile * 32 + i) * K;
    long long       ss   = 0;
    int             sl   = 0, sincl, c[2], rk[2];
    double          v[2];
    todo &= todo - 1;
    if (lane < nsi) { /* the row's segment table, a segment a lane */
      ss = segstart[bi + lane];
      sl = seglen[bi + lane];
    }
    sincl = sl;
    for (int o = 1; o < 32; o <<= 1) {
      const int w = __shfl_up_sync(DCSR_FULL_MASK_D, sincl, o);
      if (lane >= o) sincl += w;
    }
#pragma unroll
    for (int h = 0; h < 2; h++) { /* entries lane and lane + 32 of the row, in the order of its segments */
      const int k = lane + 32 * h;
      int       q = 0; /* their segment: the first lane with sincl > k */
      for (int b = 16; b > 0; b >>= 1) {
        const int w = __shfl_sync(DCSR_FULL_MASK_D, sincl, q + b - 1);
        if (w <= k) q += b;
      }
      q                  = q < 31 ? q : 31;
      const long long sq = __shfl_sync(DCSR_FULL_MASK_D, ss, q);
      const int       eq = __shfl_sync(DCSR_FULL_MASK_D, sincl - sl, q);
      c[h]               = INT_MAX; /* no entry: larger than every column */
      v[h]               = 0.0;
      rk[h]              = 0;
      if (k < leni) {
        c[h] = colidx[sq + (k - eq)];
        v[h] = values[sq + (k - eq)];
      }
    }
    if (leni <= 32) /* the row's columns are distinct: an entry's place is the count of smaller ones */
      for (int j = 0; j < 32; j++) rk[0] += __shfl_sync(DCSR_FULL_MASK_D, c[0], j) < c[0];
    else
      for (int j = 0; j < 32; j++) {
        const int a0 = __shfl_sync(DCSR_FULL_MASK_D, c[0], j), a1 = __shfl_sync(DCSR_FULL_MASK_D, c[1], j);
        rk[0] += (a0 < c[0]) + (a1 < c[0]);
        rk[1] += (a0 < c[1]) + (a1 < c[1]);
      }
#pragma unroll
    for (int h = 0; h < 2; h++)
      if (lane + 32 * h < leni) {
        ncol[oui + rk[h]] = c[h];
        nval[oui + rk[h]] = v[h];
      }
  }
  __syncwarp(); /* every lane has read the tables of the tile's rows */
  if (in) {
    const long long next  = off[r + 1];
    const int       cap_r = (int)(next - out);
    for (int s = 1; s < ns; s++) {
      segstart[base + s] = 0;
      seglen[base + s]   = 0;
      segcap[base + s]   = 0;
    }
    /* a row of one segment keeps its length and count: not rewritten, nor its capacity when it stays (the tables are
       strided by K: every write dirties a sector of its own) */
    segstart[base] = cap_r > 0 ? out : 0;
    if (ns != 1 || cap_r <= 0) {
      seglen[base] = cap_r > 0 ? len : 0;
      nseg[r]      = cap_r > 0 ? 1 : 0;
    }
    if (ns != 1 || segcap[base] != cap_r) segcap[base] = cap_r;
    if (rowptr) rowptr[r] = (int)out;
    if (zero) zero[r] = 0;
    if (r == m - 1) {
      if (rowptr) rowptr[m] = (int)next;
      if (zero) zero[m] = 0;
      *dused = (unsigned long long)next;
    }
  }
}

/* One synchronisation (the total size and the long rows, one copy), none with a hint for this slack and no extra room.
   The new buffers are the spare ones when they are large enough (no allocation), else from the pool; the old ones
   become the spare (spare not NULL) or go back to the pool, stream-ordered, after the compaction. Work arrays: one pool
   block of about 20 bytes a row (8 with a hint and no long row) and the scan's work space. */
cudaError_t GpukitDCSRDefragment(GpukitDCSRDev *A, double slack, const int *extra, const GpukitDCSRDefragHint *hint, long long mincap, double capfactor, GpukitDCSRSpare *spare, int *grew, int *rowptr, int *zero, cudaStream_t stream)
{
  GpukitPoolTemp    work(stream);
  long long        *room, *off, total = 0, newcap, hb[3] = {0, 0, 0};
  int              *longrows, *ncol = NULL;
  double           *nval = NULL;
  DCSRDefragCounts *cnt;
  cudaError_t       err;
  size_t            bytes = 0, o_off, o_long, o_tmp, o_end;
  const size_t      m1    = (size_t)A->m + 1;
  bool              fromspare = false;

  *grew = 0;
  if (A->m <= 0) return cudaSuccess;
  if ((long long)A->m + 1 >= (long long)INT_MAX) return cudaErrorInvalidValue;
  /* the sizes known with no long row and no extra room: the scan reads the capacities through DCSRCapacityOp */
  const bool known = hint && !extra && hint->slack == slack, direct = known && hint->nlong == 0;
  const auto caps  = thrust::make_transform_iterator(thrust::counting_iterator<int>(0), DCSRCapacityOp{A->rowlen, A->m, slack});
  /* one block: room[m+1], then off[m+1] directly followed by the counts (so that off[m] and the counts are read back
     by one copy), then the long rows [m], then the scan's work space */
  if (direct) DCSR_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, caps, (long long *)nullptr, A->m + 1, stream));
  else DCSR_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, (long long *)nullptr, (long long *)nullptr, A->m + 1, stream));
  o_off  = direct ? 0 : DCSRAlign(m1 * sizeof(long long)); /* direct: no room[], no long-row list */
  o_long = DCSRAlign(o_off + m1 * sizeof(long long) + sizeof(DCSRDefragCounts));
  o_tmp  = o_long + (direct ? 0 : DCSRAlign((size_t)A->m * sizeof(int)));
  o_end  = o_tmp + DCSRAlign(bytes);
  DCSR_CHECK(work.Get(o_end));
  room     = direct ? NULL : work.As<long long>();
  off      = (long long *)(work.As<char>() + o_off);
  cnt      = (DCSRDefragCounts *)(off + m1);
  longrows = direct ? NULL : (int *)(work.As<char>() + o_long);
  if (direct) DCSR_CHECK(cub::DeviceScan::ExclusiveSum(work.As<char>() + o_tmp, bytes, caps, off, A->m + 1, stream));
  else {
    DCSR_CHECK(cudaMemsetAsync(cnt, 0, sizeof(DCSRDefragCounts), stream));
    DCSRRowCapKernel<<<DCSRGrid((long long)A->m + 1, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(A->m, A->rowlen, slack, extra, room, longrows, cnt);
    DCSR_CHECK(cudaGetLastError());
    DCSR_CHECK(cub::DeviceScan::ExclusiveSum(work.As<char>() + o_tmp, bytes, room, off, A->m + 1, stream));
  }
  if (known) { /* the host knows the sizes: nothing read back */
    hb[0] = hint->total;
    hb[1] = hint->nlong;
    hb[2] = hint->maxlong;
  } else {
    DCSR_CHECK(cudaMemcpyAsync(hb, off + A->m, sizeof(hb), cudaMemcpyDeviceToHost, stream));
    DCSR_CHECK(cudaStreamSynchronize(stream));
  }
  total  = hb[0];
  if (total > (long long)INT_MAX) rowptr = zero = NULL; /* no 32-bit row pointers (the caller sees A->used > INT_MAX) */
  newcap = total > mincap ? total : mincap;
  if (total > A->cap) { /* growth: leave room for what comes next */
    const long long want = (long long)ceil((capfactor > 1.0 ? capfactor : 1.0) * (double)total);
    if (want > newcap) newcap = want;
    *grew = 1;
  }
  if (newcap < 1) newcap = 1;
  if (spare && spare->colidx && spare->values && spare->cap >= newcap) { /* no allocation */
    ncol      = spare->colidx;
    nval      = spare->values;
    newcap    = spare->cap;
    fromspare = true;
  } else {
    if (spare) { /* too small: back to the pool first, so that its memory serves the new buffers */
      (void)GpukitPoolFreeN(&spare->colidx, stream);
      (void)GpukitPoolFreeN(&spare->values, stream);
      spare->cap = 0;
    }
    err = GpukitPoolMallocN(&ncol, (size_t)newcap, stream);
    if (err == cudaSuccess) err = GpukitPoolMallocN(&nval, (size_t)newcap, stream);
    if (err != cudaSuccess && *grew && newcap > total && total > 0) { /* not enough for the headroom: try the exact size */
      (void)cudaGetLastError();
      (void)GpukitPoolFreeN(&ncol, stream);
      (void)GpukitPoolFreeN(&nval, stream);
      newcap = total > A->cap ? total : A->cap;
      err    = GpukitPoolMallocN(&ncol, (size_t)newcap, stream);
      if (err == cudaSuccess) err = GpukitPoolMallocN(&nval, (size_t)newcap, stream);
    }
    if (err != cudaSuccess) { /* A unchanged */
      (void)cudaGetLastError();
      (void)GpukitPoolFreeN(&ncol, stream);
      (void)GpukitPoolFreeN(&nval, stream);
      *grew = 0;
      return cudaErrorMemoryAllocation;
    }
  }
  if (hb[1] > 0) { /* the long rows first: they read the segment tables that the tile kernel rewrites */
    const long long nch = (hb[2] + DCSR_DEFRAG_CHUNK - 1) / DCSR_DEFRAG_CHUNK;
    dim3            grid((unsigned)hb[1], (unsigned)(nch < 65535 ? nch : 65535));
    DCSRCompactLongKernel<<<grid, DCSR_BLOCK, 0, stream>>>(longrows, A->K, off, A->segstart, A->seglen, A->nseg, A->rowlen, A->colidx, A->values, ncol, nval);
    err = cudaGetLastError();
  } else err = cudaSuccess;
  if (err == cudaSuccess) {
    DCSRCompactTileKernel<<<DCSRGrid(((long long)A->m + 31) / 32 * 32, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(A->m, A->K, off, A->segstart, A->seglen, A->segcap, A->nseg, A->rowlen, A->colidx, A->values, ncol, nval, rowptr, zero, A->dused);
    err = cudaGetLastError();
  }
  if (err != cudaSuccess) { /* a launch failed: the tables may be half written; report it (the caller errors) */
    if (!fromspare) {
      (void)GpukitPoolFreeN(&ncol, stream);
      (void)GpukitPoolFreeN(&nval, stream);
    }
    return err;
  }
  if (spare) { /* the old buffers are the next defragmentation's new ones */
    spare->colidx = A->colidx;
    spare->values = A->values;
    spare->cap    = A->cap;
  } else {
    (void)GpukitPoolFree(A->colidx, stream);
    (void)GpukitPoolFree(A->values, stream);
  }
  A->colidx = ncol;
  A->values = nval;
  A->used   = total;
  A->cap    = newcap;
  return cudaSuccess;
}


/* ------------------------------------------------------------------------------------------------------
   The CSR base: the rows that got new entries since the layout was plain CSR, and their fix-up after cuSPARSE's product
   ------------------------------------------------------------------------------------------------------ */

__global__ static void DCSRPlainCheckKernel(int m, int K, const long long *__restrict__ segstart, const int *__restrict__ nseg, const int *__restrict__ rowlen, int *rowptr, int *bad)
{
  const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= m) return;
  const int len = rowlen[r];
  if (len > 0 && (nseg[r] != 1 || segstart[r * K] != (long long)rowptr[r])) atomicOr(bad, 1);
  if (r == m - 1) rowptr[m] = rowptr[r] + len;
}

cudaError_t GpukitDCSRPlainCheck(const GpukitDCSRDev *A, int *rowptr, int *bad, cudaStream_t stream)
{
  GpukitPoolTemp tmp(stream);
  size_t         bytes = 0;

  if (A->m <= 0) return cudaSuccess;
  if (A->cap > (long long)INT_MAX) return cudaErrorInvalidValue;
  DCSR_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, A->rowlen, rowptr, A->m, stream));
  DCSR_CHECK(tmp.Get(bytes));
  DCSR_CHECK(cub::DeviceScan::ExclusiveSum(tmp.p, bytes, A->rowlen, rowptr, A->m, stream));
  DCSRPlainCheckKernel<<<DCSRGrid(A->m, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(A->m, A->K, A->segstart, A->nseg, A->rowlen, rowptr, bad);
  return cudaGetLastError();
}

/* the tail table's record of row r: its entries outside the base range [rowptr[r], rowptr[r+1]) (the part of its first
   segment after the base entries, if it grew in place, and its other segments), as up to two pieces (start, length);
   w = -1: more pieces, or more than GPUKIT_DCSR_TAIL_LONG entries (a whole warp walks the segment table then) */
__device__ static inline int4 DCSRTailRecord(int r, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ rowptr)
{
  const long long b0 = rowptr[r];
  const int       bl = rowptr[r + 1] - rowptr[r];
  const long long rk = (long long)r * K;
  const int       ns = nseg[r];
  int4            p  = make_int4(0, 0, 0, 0);
  int             np = 0;
  long long       nt = 0;
  for (int s = 0; s < ns; s++) {
    const long long st   = segstart[rk + s];
    const int       len  = seglen[rk + s];
    const int       skip = st == b0 ? (bl < len ? bl : len) : 0;
    if (len - skip <= 0) continue;
    if (np == 0) {
      p.x = (int)(st + skip);
      p.y = len - skip;
    } else if (np == 1) {
      p.z = (int)(st + skip);
      p.w = len - skip;
    }
    np++;
    nt += len - skip;
  }
  if (np > 2 || nt > GPUKIT_DCSR_TAIL_LONG) p.w = -1;
  return p;
}

/* one thread per row group of the batch (after its insertion): a row with new entries gets its table position once
   (dirty[r] = position + 1; the new ones of a warp take consecutive positions with one atomic, in row order, the order of
   their new segments in the buffer) and its record rewritten. Every thread reaches the warp step */
__global__ static void DCSRBaseMarkKernel(long long ng, const int *__restrict__ grow, const int *__restrict__ gnew, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ rowptr, int *dirty, int *trow, int4 *tpiece, int *dcount)
{
  const long long g     = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int       lane  = (int)(threadIdx.x & 31);
  const bool      valid = g < ng && gnew[g] != 0;
  const int       r     = valid ? grow[g] : 0;
  const int       d     = valid ? dirty[r] : 1; /* one group per row in a batch: no other thread reads or writes dirty[r] */
  const unsigned  fresh = __ballot_sync(0xffffffffu, valid && d == 0);
  int             first = 0;
  if (fresh) {
    const int leader = __ffs(fresh) - 1;
    if (lane == leader) first = atomicAdd(dcount, __popc(fresh));
    first = __shfl_sync(0xffffffffu, first, leader);
  }
  if (!valid) return;
  const int pos = d == 0 ? first + __popc(fresh & ((1u << lane) - 1u)) : d - 1;
  if (d == 0) dirty[r] = pos + 1;
  trow[pos]   = r;
  tpiece[pos] = DCSRTailRecord(r, K, segstart, seglen, nseg, rowptr);
}

cudaError_t GpukitDCSRBaseMark(const GpukitDCSRDev *A, GpukitDCSRBatch b, const int *rowptr, int *dirty, int *trow, int4 *tpiece, int *dcount, cudaStream_t stream)
{
  if (!b->ng || !b->nnew) return cudaSuccess;
  DCSRBaseMarkKernel<<<DCSRGrid(b->ng, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(b->ng, b->grow, b->gnew, A->K, A->segstart, A->seglen, A->nseg, rowptr, dirty, trow, tpiece, dcount);
  return cudaGetLastError();
}

/* the sum of entries [st, st + len) by L lanes, two loads in flight per lane */
template <int L>
__device__ static inline double DCSRPieceSum(long long st, int len, int lane, const int *__restrict__ colidx, const double *__restrict__ values, const double *__restrict__ x)
{
  double sum = 0.0;
  int    k   = lane;
  for (; k + L < len; k += 2 * L) {
    const int    c0 = colidx[st + k], c1 = colidx[st + k + L];
    const double v0 = values[st + k], v1 = values[st + k + L];
    sum += v0 * __ldg(&x[c0]);
    sum += v1 * __ldg(&x[c1]);
  }
  if (k < len) sum += values[st + k] * __ldg(&x[colidx[st + k]]);
  return sum;
}

/* groups of L lanes, one table record per group and step: its one or two pieces (the record and the pieces read in
   table order: coalesced, and a batch's new segments are in table order too); lane 0 adds the sum to y[r]. The records
   marked w = -1 are then taken one at a time by the whole warp, which walks the row's segments (all but the base part of
   the segment at rowptr[r]) */
template <int L>
__global__ static void __launch_bounds__(DCSR_BLOCK) DCSRBaseFixupKernel(int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx, const double *__restrict__ values, const int *__restrict__ rowptr, const int *__restrict__ trow, const int4 *__restrict__ tpiece, const int *__restrict__ dcount, const double *__restrict__ x, double *y)
{
  const long long tid    = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long ngroup = (long long)gridDim.x * blockDim.x / L;
  const int       lane   = (int)(threadIdx.x & (L - 1));
  const int       wlane  = (int)(threadIdx.x & 31);
  const long long n      = *dcount;
  /* the groups of a warp leave the loop together only if every group stops at the same step: loop over whole warps */
  const long long wfirst = (tid / 32) * (32 / L); /* first group of this warp */
  for (long long g0 = wfirst; g0 < n; g0 += ngroup) {
    const long long g    = g0 + (tid / L) - wfirst;
    double          sum  = 0.0;
    int             r    = -1;
    bool            walk = false;
    if (g < n) {
      const int4 p = __ldg(tpiece + g);
      r            = __ldg(trow + g);
      if (p.w < 0) walk = true;
      else {
        sum = DCSRPieceSum<L>(p.x, p.y, lane, colidx, values, x);
        if (p.w > 0) sum += DCSRPieceSum<L>(p.z, p.w, lane, colidx, values, x);
      }
    }
    for (int o = L / 2; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o, L);
    if (r >= 0 && !walk && lane == 0) y[r] += sum;
    /* the warp's long or many-piece rows, by all 32 lanes */
    unsigned wm = __ballot_sync(0xffffffffu, walk && lane == 0);
    while (wm) {
      const int src = __ffs(wm) - 1;
      wm &= wm - 1;
      const int       rr = __shfl_sync(0xffffffffu, r, src);
      const long long b0 = rowptr[rr];
      const int       bl = rowptr[rr + 1] - rowptr[rr];
      const long long rk = (long long)rr * K;
      const int       ns = nseg[rr];
      double          s  = 0.0;
      for (int q = 0; q < ns; q++) {
        const long long st   = segstart[rk + q];
        const int       len  = seglen[rk + q];
        const int       skip = st == b0 ? (bl < len ? bl : len) : 0;
        s += DCSRPieceSum<32>(st + skip, len - skip, wlane, colidx, values, x);
      }
      for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
      if (wlane == 0) y[rr] += s;
    }
  }
}

cudaError_t GpukitDCSRBaseFixup(const GpukitDCSRDev *A, const int *rowptr, const int *trow, const int4 *tpiece, const int *dcount, long long nmax, int lanes, const double *x, double *y, cudaStream_t stream)
{
  long long groups = nmax < 1 ? 1 : nmax, blocks;

  if (groups > 262144) groups = 262144; /* grid-stride beyond: enough groups to fill the device */
  blocks = (groups * lanes + DCSR_BLOCK - 1) / DCSR_BLOCK;
  switch (lanes) {
#define DCSR_FIXUP_CASE(L) \
  case L: \
    DCSRBaseFixupKernel<L><<<(unsigned)blocks, DCSR_BLOCK, 0, stream>>>(A->K, A->segstart, A->seglen, A->nseg, A->colidx, A->values, rowptr, trow, tpiece, dcount, x, y); \
    break;
    DCSR_FIXUP_CASE(1)
    DCSR_FIXUP_CASE(2)
    DCSR_FIXUP_CASE(4)
    DCSR_FIXUP_CASE(8)
#undef DCSR_FIXUP_CASE
  default:
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

/* ------------------------------------------------------------------------------------------------------
   The product: rows binned by length (ADCSR), a group of TPR lanes per row, and a block per row for the rows longer
   than the long-row threshold. The bins also carry a row table in bin order (rowst/rowln: the start and length of a
   row with ONE segment, the case after a defragmentation or a fresh assembly), read coalesced by the kernels instead
   of the strided segment table; rows with several segments (rowln -1) walk the segment table.
   ------------------------------------------------------------------------------------------------------ */

#define DCSR_FULL_MASK 0xffffffffu

/* every thread of the launched blocks reaches the warp-wide steps (no early return): bins 0..3 by length, the long
   bin for rows longer than longrow; the counts aggregated per warp before the atomics */
__global__ static void DCSRBinKernel(int m, long long longrow, const int *__restrict__ rowlen, int *bin, int *iota, unsigned long long *cnt, unsigned long long *nnz, int *maxlen)
{
  const long long r    = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int       lane = (int)(threadIdx.x & 31);
  const bool      in   = r < m;
  const int       len  = in ? rowlen[r] : 0;
  int             b    = 0;
  if (in) {
    if (len > 256) b = 3;
    else if (len > 32) b = 2;
    else if (len > 4) b = 1;
    if ((long long)len > longrow) b = GPUKIT_DCSR_NBINS; /* the long bin */
    bin[r]  = b;
    iota[r] = (int)r;
  }
  unsigned long long s  = (unsigned long long)len;
  int                mx = len;
  for (int o = 16; o > 0; o >>= 1) {
    s += __shfl_down_sync(DCSR_FULL_MASK, s, o);
    const int other = __shfl_down_sync(DCSR_FULL_MASK, mx, o);
    mx              = other > mx ? other : mx;
  }
  for (int bb = 0; bb < GPUKIT_DCSR_NBINS_ALL; bb++) {
    const unsigned bal = __ballot_sync(DCSR_FULL_MASK, in && b == bb);
    if (lane == 0 && bal) atomicAdd(&cnt[bb], (unsigned long long)__popc(bal));
  }
  if (lane == 0) {
    if (s) atomicAdd(nnz, s);
    if (mx) atomicMax(maxlen, mx);
  }
}

/* the row table in bin order: start and length of a one-segment row (compact: the buffer has at most INT_MAX slots,
   so that a start fits an int), 0 for an empty row, -1 for a row the kernels read through the segment table */
__global__ static void DCSRRowTableKernel(int m, int K, int compact, const int *__restrict__ perm, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, int *rowst, int *rowln)
{
  const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= m) return;
  const long long r  = perm[g];
  const int       ns = nseg[r];
  if (ns == 0) {
    rowst[g] = 0;
    rowln[g] = 0;
  } else if (ns == 1 && compact) {
    rowst[g] = (int)segstart[r * K];
    rowln[g] = seglen[r * K];
  } else {
    rowst[g] = 0;
    rowln[g] = -1;
  }
}

cudaError_t GpukitDCSRRowTable(const GpukitDCSRDev *A, const int *perm, int *rowst, int *rowln, cudaStream_t stream)
{
  if (A->m <= 0) return cudaSuccess;
  DCSRRowTableKernel<<<DCSRGrid(A->m, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(A->m, A->K, A->cap <= (long long)INT_MAX ? 1 : 0, perm, A->segstart, A->seglen, A->nseg, rowst, rowln);
  return cudaGetLastError();
}

typedef struct {
  unsigned long long cnt[GPUKIT_DCSR_NBINS_ALL], nnz;
  int                maxlen;
} DCSRBinCounts;

/* one synchronisation (the counts) */
cudaError_t GpukitDCSRBinRows(const GpukitDCSRDev *A, long long longrow, int *perm, int *rowst, int *rowln, long long binstart[], long long *maxlen, long long *nnz, cudaStream_t stream)
{
  GpukitPoolTemp work(stream), tmp(stream);
  DCSRBinCounts  hc;
  size_t         bytes = 0;
  const size_t   m     = (size_t)(A->m > 0 ? A->m : 0);
  int           *bin, *bin2, *iota;
  DCSRBinCounts *dc;

  for (int b = 0; b <= GPUKIT_DCSR_NBINS_ALL; b++) binstart[b] = 0;
  *maxlen = 0;
  *nnz    = 0;
  if (A->m <= 0) return cudaSuccess;
  if (longrow < 1) return cudaErrorInvalidValue;
  DCSR_CHECK(work.Get(3 * DCSRAlign(m * sizeof(int)) + DCSRAlign(sizeof(DCSRBinCounts))));
  bin  = work.As<int>();
  bin2 = (int *)(work.As<char>() + DCSRAlign(m * sizeof(int)));
  iota = (int *)(work.As<char>() + 2 * DCSRAlign(m * sizeof(int)));
  dc   = (DCSRBinCounts *)(work.As<char>() + 3 * DCSRAlign(m * sizeof(int)));
  DCSR_CHECK(cudaMemsetAsync(dc, 0, sizeof(DCSRBinCounts), stream));
  DCSRBinKernel<<<DCSRGrid(A->m, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(A->m, longrow, A->rowlen, bin, iota, dc->cnt, &dc->nnz, &dc->maxlen);
  DCSR_CHECK(cudaGetLastError());
  /* stable: row order inside a bin; keys 0..GPUKIT_DCSR_NBINS (3 bits) */
  DCSR_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, bin, bin2, iota, perm, A->m, 0, 3, stream));
  DCSR_CHECK(tmp.Get(bytes));
  DCSR_CHECK(cub::DeviceRadixSort::SortPairs(tmp.p, bytes, bin, bin2, iota, perm, A->m, 0, 3, stream));
  DCSRRowTableKernel<<<DCSRGrid(A->m, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(A->m, A->K, A->cap <= (long long)INT_MAX ? 1 : 0, perm, A->segstart, A->seglen, A->nseg, rowst, rowln);
  DCSR_CHECK(cudaGetLastError());
  DCSR_CHECK(cudaMemcpyAsync(&hc, dc, sizeof(hc), cudaMemcpyDeviceToHost, stream));
  DCSR_CHECK(cudaStreamSynchronize(stream));
  for (int b = 0; b < GPUKIT_DCSR_NBINS_ALL; b++) binstart[b + 1] = binstart[b] + (long long)hc.cnt[b];
  *nnz    = (long long)hc.nnz;
  *maxlen = hc.maxlen;
  return cudaSuccess;
}

template <int TPR>
__global__ static void DCSRMultKernel(long long nrows, const int *__restrict__ rows, const int *__restrict__ rowst, const int *__restrict__ rowln, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx, const double *__restrict__ values, const double *__restrict__ x, const double *y, double *z)
{
  const long long t    = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long g    = t / TPR;
  const int       lane = (int)(t % TPR);
  if (g >= nrows) return; /* every lane of the group leaves together */
  const int r   = rows[g];
  const int ln  = rowln[g];
  double    sum = 0.0;
  if (ln >= 0) { /* one segment (or none): the row table */
    const long long st = rowst[g];
    for (int k = lane; k < ln; k += TPR) sum += values[st + k] * x[colidx[st + k]];
  } else {
    const long long base = (long long)r * K;
    const int       ns   = nseg[r];
    for (int s = 0; s < ns; s++) { /* the running segment index the seed's Alg. 6 lacks */
      const long long st  = segstart[base + s];
      const int       len = seglen[base + s];
      for (int k = lane; k < len; k += TPR) sum += values[st + k] * x[colidx[st + k]];
    }
  }
  if (TPR > 1) {
    const unsigned wl   = (unsigned)(threadIdx.x % 32);
    const unsigned mask = TPR == 32 ? DCSR_FULL_MASK : (((1u << TPR) - 1u) << (wl / TPR * TPR));
    for (int o = TPR / 2; o > 0; o >>= 1) sum += __shfl_down_sync(mask, sum, o, TPR);
  }
  if (lane == 0) z[r] = y ? y[r] + sum : sum;
}

#define DCSR_LONG_BLOCK 256

/* the block's threads over one segment, four independent sums so that four loads are in flight per thread */
__device__ static inline void DCSRLongSum(long long st, int len, const int *__restrict__ colidx, const double *__restrict__ values, const double *__restrict__ x, double *s)
{
  int k = (int)threadIdx.x;
  for (; k + 3 * DCSR_LONG_BLOCK < len; k += 4 * DCSR_LONG_BLOCK) {
    s[0] += values[st + k] * x[colidx[st + k]];
    s[1] += values[st + k + DCSR_LONG_BLOCK] * x[colidx[st + k + DCSR_LONG_BLOCK]];
    s[2] += values[st + k + 2 * DCSR_LONG_BLOCK] * x[colidx[st + k + 2 * DCSR_LONG_BLOCK]];
    s[3] += values[st + k + 3 * DCSR_LONG_BLOCK] * x[colidx[st + k + 3 * DCSR_LONG_BLOCK]];
  }
  for (; k < len; k += DCSR_LONG_BLOCK) s[0] += values[st + k] * x[colidx[st + k]];
}

/* one block of DCSR_LONG_BLOCK threads per row (the long bin); no early return: every thread reaches the barrier */
__global__ static void __launch_bounds__(DCSR_LONG_BLOCK) DCSRMultLongKernel(const int *__restrict__ rows, const int *__restrict__ rowst, const int *__restrict__ rowln, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx, const double *__restrict__ values, const double *__restrict__ x, const double *y, double *z)
{
  __shared__ double part[DCSR_LONG_BLOCK / 32];
  const long long   g    = blockIdx.x;
  const int         r    = rows[g];
  const int         ln   = rowln[g];
  const int         lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);
  double            s[4] = {0.0, 0.0, 0.0, 0.0}, sum;
  if (ln >= 0) DCSRLongSum(rowst[g], ln, colidx, values, x, s);
  else {
    const long long base = (long long)r * K;
    const int       ns   = nseg[r];
    for (int q = 0; q < ns; q++) DCSRLongSum(segstart[base + q], seglen[base + q], colidx, values, x, s);
  }
  sum = (s[0] + s[1]) + (s[2] + s[3]);
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(DCSR_FULL_MASK, sum, o);
  if (lane == 0) part[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    sum = lane < DCSR_LONG_BLOCK / 32 ? part[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(DCSR_FULL_MASK, sum, o);
    if (lane == 0) z[r] = y ? y[r] + sum : sum;
  }
}

/* chunk c of the long bin by this block's threads: its row g (the last with lchunk[g] <= c; every long row has at least
   one chunk, so lchunk is strictly increasing) is returned, and entries [q*CH, (q+1)*CH) of the row (q = c - lchunk[g],
   in the order of its segments) are added to the thread's s[4] */
__device__ static inline int DCSRLongChunkSum(int c, int nlong, const int *__restrict__ rows, const int *__restrict__ rowst, const int *__restrict__ rowln, const int *__restrict__ lchunk, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx, const double *__restrict__ values, const double *__restrict__ x, double *s)
{
  int lo = 0, hi = nlong - 1;

  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (lchunk[mid] <= c) lo = mid;
    else hi = mid - 1;
  }
  const int       g  = lo;
  const long long b0 = (long long)(c - lchunk[g]) * GPUKIT_DCSR_LONG_CHUNK, b1 = b0 + GPUKIT_DCSR_LONG_CHUNK;
  const int       ln = rowln[g];
  if (ln >= 0) {
    const long long e = b1 < (long long)ln ? b1 : (long long)ln;
    if (e > b0) DCSRLongSum((long long)rowst[g] + b0, (int)(e - b0), colidx, values, x, s);
  } else {
    const long long base = (long long)rows[g] * K;
    const int       ns   = nseg[rows[g]];
    long long       acc  = 0; /* entries of the row before segment q */
    for (int q = 0; q < ns && acc < b1; q++) {
      const int       len = seglen[base + q];
      const long long f   = acc > b0 ? acc : b0, e = acc + len < b1 ? acc + len : b1;
      if (e > f) DCSRLongSum(segstart[base + q] + (f - acc), (int)(e - f), colidx, values, x, s);
      acc += len;
    }
  }
  return g;
}

/* the long bin by chunks of GPUKIT_DCSR_LONG_CHUNK entries: block c sums its chunk (DCSRLongChunkSum()) and writes
   part[c]; no early return before the barrier */
__global__ static void __launch_bounds__(DCSR_LONG_BLOCK) DCSRMultLongSplitKernel(int nlong, const int *__restrict__ rows, const int *__restrict__ rowst, const int *__restrict__ rowln, const int *__restrict__ lchunk, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx, const double *__restrict__ values, const double *__restrict__ x, double *part)
{
  __shared__ double wpart[DCSR_LONG_BLOCK / 32];
  const int         c    = (int)blockIdx.x;
  const int         lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);
  double            s[4] = {0.0, 0.0, 0.0, 0.0}, sum;

  (void)DCSRLongChunkSum(c, nlong, rows, rowst, rowln, lchunk, K, segstart, seglen, nseg, colidx, values, x, s);
  sum = (s[0] + s[1]) + (s[2] + s[3]);
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(DCSR_FULL_MASK, sum, o);
  if (lane == 0) wpart[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    sum = lane < DCSR_LONG_BLOCK / 32 ? wpart[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(DCSR_FULL_MASK, sum, o);
    if (lane == 0) part[c] = sum;
  }
}

/* a warp per long row adds its chunks' partial sums (fixed order: the result does not depend on the scheduling) */
__global__ static void DCSRMultLongFinishKernel(int nlong, const int *__restrict__ rows, const int *__restrict__ lchunk, const double *__restrict__ part, const double *y, double *z)
{
  const long long t    = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long g    = t / 32;
  const int       lane = (int)(t % 32);
  double          sum  = 0.0;
  if (g >= nlong) return; /* blockDim is a multiple of 32: whole warps leave */
  for (int k = lchunk[g] + lane; k < lchunk[g + 1]; k += 32) sum += part[k];
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(DCSR_FULL_MASK, sum, o);
  if (lane == 0) {
    const int r = rows[g];
    z[r]        = y ? y[r] + sum : sum;
  }
}

__global__ static void DCSRLongCountKernel(int nlong, const int *__restrict__ rows, const int *__restrict__ rowlen, int *cnt)
{
  const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (g < nlong) {
    const int len = rowlen[rows[g]];
    cnt[g]        = len > 0 ? (len + GPUKIT_DCSR_LONG_CHUNK - 1) / GPUKIT_DCSR_LONG_CHUNK : 1; /* at least one chunk (lchunk strictly increasing) */
  } else if (g == nlong) cnt[g] = 0;
}

/* one synchronisation (the number of chunks) */
cudaError_t GpukitDCSRLongChunks(const GpukitDCSRDev *A, long long nlong, const int *rows, int *lchunk, long long *nchunk, cudaStream_t stream)
{
  GpukitPoolTemp work(stream), tmp(stream);
  size_t         bytes = 0;
  int            total = 0;

  *nchunk = 0;
  if (nlong <= 0) return cudaSuccess;
  if (nlong >= (long long)INT_MAX) return cudaErrorInvalidValue;
  DCSR_CHECK(work.Get((size_t)(nlong + 1) * sizeof(int)));
  DCSRLongCountKernel<<<DCSRGrid(nlong + 1, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>((int)nlong, rows, A->rowlen, work.As<int>());
  DCSR_CHECK(cudaGetLastError());
  DCSR_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, work.As<int>(), lchunk, (int)(nlong + 1), stream));
  DCSR_CHECK(tmp.Get(bytes));
  DCSR_CHECK(cub::DeviceScan::ExclusiveSum(tmp.p, bytes, work.As<int>(), lchunk, (int)(nlong + 1), stream));
  DCSR_CHECK(cudaMemcpyAsync(&total, lchunk + nlong, sizeof(int), cudaMemcpyDeviceToHost, stream));
  DCSR_CHECK(cudaStreamSynchronize(stream));
  *nchunk = total;
  return cudaSuccess;
}

template <int TPR>
static cudaError_t DCSRMultLaunch(const GpukitDCSRDev *A, long long nrows, const int *rows, const int *rowst, const int *rowln, const double *x, const double *y, double *z, cudaStream_t stream)
{
  DCSRMultKernel<TPR><<<DCSRGrid(nrows * TPR, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(nrows, rows, rowst, rowln, A->K, A->segstart, A->seglen, A->nseg, A->colidx, A->values, x, y, z);
  return cudaGetLastError();
}

cudaError_t GpukitDCSRMultCUDA(const GpukitDCSRDev *A, const int *perm, const int *rowst, const int *rowln, const long long binstart[], const int tpr[], const int *lchunk, long long nchunk, double *lpart, const double *x, const double *y, double *z, cudaStream_t stream)
{
  for (int b = 0; b < GPUKIT_DCSR_NBINS; b++) {
    const long long nrows = binstart[b + 1] - binstart[b];
    const int      *rows = perm + binstart[b], *st = rowst + binstart[b], *ln = rowln + binstart[b];
    cudaError_t     err;
    if (nrows <= 0) continue;
    switch (tpr[b]) {
    case 1:
      err = DCSRMultLaunch<1>(A, nrows, rows, st, ln, x, y, z, stream);
      break;
    case 2:
      err = DCSRMultLaunch<2>(A, nrows, rows, st, ln, x, y, z, stream);
      break;
    case 4:
      err = DCSRMultLaunch<4>(A, nrows, rows, st, ln, x, y, z, stream);
      break;
    case 8:
      err = DCSRMultLaunch<8>(A, nrows, rows, st, ln, x, y, z, stream);
      break;
    case 16:
      err = DCSRMultLaunch<16>(A, nrows, rows, st, ln, x, y, z, stream);
      break;
    case 32:
      err = DCSRMultLaunch<32>(A, nrows, rows, st, ln, x, y, z, stream);
      break;
    default:
      return cudaErrorInvalidValue;
    }
    if (err != cudaSuccess) return err;
  }
  { /* the long bin */
    const long long nrows = binstart[GPUKIT_DCSR_NBINS_ALL] - binstart[GPUKIT_DCSR_NBINS];
    const long long o     = binstart[GPUKIT_DCSR_NBINS];
    if (nrows > 0 && lchunk && lpart && nchunk > 0) { /* split by entries, then the partial sums per row */
      DCSRMultLongSplitKernel<<<(unsigned)nchunk, DCSR_LONG_BLOCK, 0, stream>>>((int)nrows, perm + o, rowst + o, rowln + o, lchunk, A->K, A->segstart, A->seglen, A->nseg, A->colidx, A->values, x, lpart);
      DCSR_CHECK(cudaGetLastError());
      DCSRMultLongFinishKernel<<<DCSRGrid(nrows * 32, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>((int)nrows, perm + o, lchunk, lpart, y, z);
      DCSR_CHECK(cudaGetLastError());
    } else if (nrows > 0) {
      DCSRMultLongKernel<<<(unsigned)nrows, DCSR_LONG_BLOCK, 0, stream>>>(perm + o, rowst + o, rowln + o, A->K, A->segstart, A->seglen, A->nseg, A->colidx, A->values, x, y, z);
      DCSR_CHECK(cudaGetLastError());
    }
  }
  return cudaSuccess;
}

/* ------------------------------------------------------------------------------------------------------
   The fused product: the same work as GpukitDCSRMultCUDA() (bins by length, TPR lanes per row, the long bin by chunks)
   in ONE launch: blocks [bbeg[b], bbeg[b+1]) do bin b, blocks from bbeg[GPUKIT_DCSR_NBINS] the long chunks, and the
   last chunk block of a long row (a counter per row) adds the row's partial sums in a fixed order, so no second launch
   and still no dependence on the scheduling. Values and columns are read with streaming loads (ld.global.cs: read once,
   evicted first, so that x stays in L2), x and the row table through the read-only path, two entries in flight per
   lane.
   ------------------------------------------------------------------------------------------------------ */

typedef struct {
  long long binstart[GPUKIT_DCSR_NBINS_ALL + 1];
  unsigned  bbeg[GPUKIT_DCSR_NBINS + 2];
  int       tpr[GPUKIT_DCSR_NBINS];
} DCSRFusedPlan;

template <int TPR>
__device__ static inline double DCSRFusedSum(long long st, int ln, int lane, const int *__restrict__ colidx, const double *__restrict__ values, const double *__restrict__ x)
{
  double s0 = 0.0, s1 = 0.0;
  int    k  = lane;
  for (; k + TPR < ln; k += 2 * TPR) {
    const int    c0 = __ldcs(colidx + st + k), c1 = __ldcs(colidx + st + k + TPR);
    const double v0 = __ldcs(values + st + k), v1 = __ldcs(values + st + k + TPR);
    s0 += v0 * __ldg(x + c0);
    s1 += v1 * __ldg(x + c1);
  }
  if (k < ln) s0 += __ldcs(values + st + k) * __ldg(x + __ldcs(colidx + st + k));
  return s0 + s1;
}

/* row r of several segments by the group's lanes: its segments in order, through the segment table */
template <int TPR>
__device__ static inline double DCSRFusedSegments(long long r, int lane, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx, const double *__restrict__ values, const double *__restrict__ x)
{
  const long long base = r * K;
  const int       ns   = nseg[r];
  double          sum  = 0.0;
  for (int s = 0; s < ns; s++) sum += DCSRFusedSum<TPR>(segstart[base + s], seglen[base + s], lane, colidx, values, x);
  return sum;
}

/* the group's partial sums to its lane 0, which writes row r of z (plus y[r] when y is given) */
template <int TPR>
__device__ static inline void DCSRGroupStore(double sum, int lane, long long r, const double *y, double *z)
{
  if (TPR > 1) {
    const unsigned wl   = (unsigned)(threadIdx.x % 32);
    const unsigned mask = TPR == 32 ? DCSR_FULL_MASK : (((1u << TPR) - 1u) << (wl / TPR * TPR));
    for (int off = TPR / 2; off > 0; off >>= 1) sum += __shfl_down_sync(mask, sum, off, TPR);
  }
  if (lane == 0) z[r] = y ? y[r] + sum : sum;
}

/* thread t of bin b's blocks: lane t % TPR of the group of row t / TPR of the bin (o: the bin's first place in perm) */
template <int TPR>
__device__ static inline void DCSRFusedGroup(long long t, long long o, long long nrows, const int *__restrict__ perm, const int *__restrict__ rowst, const int *__restrict__ rowln, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx, const double *__restrict__ values, const double *__restrict__ x, const double *y, double *z)
{
  const long long g    = t / TPR;
  const int       lane = (int)(t % TPR);
  if (g >= nrows) return; /* the whole group */
  const int r  = __ldg(perm + o + g);
  const int ln = __ldg(rowln + o + g);
  double    sum;
  if (ln >= 0) sum = DCSRFusedSum<TPR>((long long)__ldg(rowst + o + g), ln, lane, colidx, values, x);
  else sum = DCSRFusedSegments<TPR>((long long)r, lane, K, segstart, seglen, nseg, colidx, values, x);
  DCSRGroupStore<TPR>(sum, lane, (long long)r, y, z);
}

/* the entries of row r outside its base range [b0, b0 + bl), by L lanes: the pieces of its tail record
   (tpiece[dirty[r] - 1]), or (w = -1: more pieces, or a long tail) its segments less the base part */
template <int L>
__device__ static inline double DCSRBaseTailSum(int r, long long b0, int bl, int d, int lane, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int4 *__restrict__ tpiece, const int *__restrict__ colidx, const double *__restrict__ values, const double *__restrict__ x)
{
  const int4 p = __ldg(tpiece + d - 1);
  double     s = 0.0;
  if (p.w >= 0) {
    s = DCSRFusedSum<L>((long long)p.x, p.y, lane, colidx, values, x);
    if (p.w > 0) s += DCSRFusedSum<L>((long long)p.z, p.w, lane, colidx, values, x);
  } else {
    const long long rk = (long long)r * K;
    const int       ns = nseg[r];
    for (int q = 0; q < ns; q++) {
      const long long st   = segstart[rk + q];
      const int       len  = seglen[rk + q];
      const int       skip = st == b0 ? (bl < len ? bl : len) : 0;
      s += DCSRFusedSum<L>(st + skip, len - skip, lane, colidx, values, x);
    }
  }
  return s;
}

/* chunk c of the long bin (as DCSRMultLongSplitKernel), then the row's sum by its last chunk block. TAIL (the CSR base's
   long rows: rowst/rowln their base part): the finisher also adds the row's tail when it is marked (dirty, tpiece) */
template <bool TAIL>
__device__ static inline void DCSRLongChunks(int c, int nlong, const int *__restrict__ rows, const int *__restrict__ rowst, const int *__restrict__ rowln, const int *__restrict__ lchunk, const int *__restrict__ dirty, const int4 *__restrict__ tpiece, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx, const double *__restrict__ values, const double *__restrict__ x, const double *y, double *z, double *part, int *lcount)
{
  __shared__ double wpart[DCSR_LONG_BLOCK / 32];
  __shared__ int    amlast;
  const int         lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);
  double            s[4] = {0.0, 0.0, 0.0, 0.0}, sum;

  const int g = DCSRLongChunkSum(c, nlong, rows, rowst, rowln, lchunk, K, segstart, seglen, nseg, colidx, values, x, s);
  sum = (s[0] + s[1]) + (s[2] + s[3]);
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(DCSR_FULL_MASK, sum, o);
  if (lane == 0) wpart[warp] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    sum = 0.0;
    for (int w = 0; w < DCSR_LONG_BLOCK / 32; w++) sum += wpart[w];
    part[c] = sum;
    __threadfence(); /* the partial sum is visible before the count says so */
    amlast = atomicAdd(&lcount[g], 1) == lchunk[g + 1] - lchunk[g] - 1;
  }
  __syncthreads();
  if (amlast && warp == 0) { /* every chunk of row g is done: their sums in a fixed order */
    __threadfence();
    sum = 0.0;
    for (int k = lchunk[g] + lane; k < lchunk[g + 1]; k += 32) sum += __ldcg(part + k);
    if (TAIL) {
      const int r = rows[g], d = dirty[r];
      if (d) sum += DCSRBaseTailSum<32>(r, (long long)rowst[g], rowln[g], d, lane, K, segstart, seglen, nseg, tpiece, colidx, values, x);
    }
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(DCSR_FULL_MASK, sum, o);
    if (lane == 0) {
      const int r = rows[g];
      z[r]        = y ? y[r] + sum : sum;
      lcount[g]   = 0; /* for the next product */
    }
  }
}

__global__ static void __launch_bounds__(DCSR_BLOCK) DCSRMultFusedKernel(DCSRFusedPlan p, const int *__restrict__ perm, const int *__restrict__ rowst, const int *__restrict__ rowln, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx, const double *__restrict__ values, const double *__restrict__ x, const double *y, double *z, const int *__restrict__ lchunk, double *part, int *lcount)
{
  const unsigned bid = blockIdx.x;
  int            b   = GPUKIT_DCSR_NBINS, tp = 32;
  unsigned       bb  = 0;
  long long      o = 0, n = 0;
  /* the plan read with constant indices only (unrolled), so that it stays in the parameter space */
#pragma unroll
  for (int q = GPUKIT_DCSR_NBINS - 1; q >= 0; q--)
    if (bid < p.bbeg[q + 1]) b = q; /* the first bin whose blocks end after bid */
#pragma unroll
  for (int q = 0; q < GPUKIT_DCSR_NBINS; q++)
    if (q == b) {
      bb = p.bbeg[q];
      o  = p.binstart[q];
      n  = p.binstart[q + 1] - p.binstart[q];
      tp = p.tpr[q];
    }
  if (b < GPUKIT_DCSR_NBINS) { /* bin b: the block is uniform, so is the switch */
    const long long t = (long long)(bid - bb) * DCSR_BLOCK + threadIdx.x;
    switch (tp) {
    case 1:
      DCSRFusedGroup<1>(t, o, n, perm, rowst, rowln, K, segstart, seglen, nseg, colidx, values, x, y, z);
      break;
    case 2:
      DCSRFusedGroup<2>(t, o, n, perm, rowst, rowln, K, segstart, seglen, nseg, colidx, values, x, y, z);
      break;
    case 4:
      DCSRFusedGroup<4>(t, o, n, perm, rowst, rowln, K, segstart, seglen, nseg, colidx, values, x, y, z);
      break;
    case 8:
      DCSRFusedGroup<8>(t, o, n, perm, rowst, rowln, K, segstart, seglen, nseg, colidx, values, x, y, z);
      break;
    case 16:
      DCSRFusedGroup<16>(t, o, n, perm, rowst, rowln, K, segstart, seglen, nseg, colidx, values, x, y, z);
      break;
    default:
      DCSRFusedGroup<32>(t, o, n, perm, rowst, rowln, K, segstart, seglen, nseg, colidx, values, x, y, z);
      break;
    }
    return;
  }
  {
    const long long o = p.binstart[GPUKIT_DCSR_NBINS];
    DCSRLongChunks<false>((int)(bid - p.bbeg[GPUKIT_DCSR_NBINS]), (int)(p.binstart[GPUKIT_DCSR_NBINS_ALL] - o), perm + o, rowst + o, rowln + o, lchunk, NULL, NULL, K, segstart, seglen, nseg, colidx, values, x, y, z, part, lcount);
  }
}

cudaError_t GpukitDCSRMultFusedCUDA(const GpukitDCSRDev *A, const int *perm, const int *rowst, const int *rowln, const long long binstart[], const int tpr[], const int *lchunk, long long nchunk, double *lpart, int *lcount, const double *x, const double *y, double *z, cudaStream_t stream)
{
  DCSRFusedPlan   p;
  long long       nb    = 0;
  const long long nlong = binstart[GPUKIT_DCSR_NBINS_ALL] - binstart[GPUKIT_DCSR_NBINS];

  if (nlong > 0 && !(lchunk && lpart && lcount && nchunk > 0)) return GpukitDCSRMultCUDA(A, perm, rowst, rowln, binstart, tpr, lchunk, nchunk, lpart, x, y, z, stream);
  for (int b = 0; b <= GPUKIT_DCSR_NBINS_ALL; b++) p.binstart[b] = binstart[b];
  for (int b = 0; b < GPUKIT_DCSR_NBINS; b++) {
    const long long nrows = binstart[b + 1] - binstart[b];
    if (tpr[b] != 1 && tpr[b] != 2 && tpr[b] != 4 && tpr[b] != 8 && tpr[b] != 16 && tpr[b] != 32) return cudaErrorInvalidValue;
    p.tpr[b]  = tpr[b];
    p.bbeg[b] = (unsigned)nb;
    if (nrows > 0) nb += (nrows * tpr[b] + DCSR_BLOCK - 1) / DCSR_BLOCK;
  }
  p.bbeg[GPUKIT_DCSR_NBINS] = (unsigned)nb;
  if (nlong > 0) nb += nchunk;
  p.bbeg[GPUKIT_DCSR_NBINS + 1] = (unsigned)nb;
  if (nb <= 0) return cudaSuccess;
  if (nb >= (long long)INT_MAX) return cudaErrorInvalidValue;
  DCSRMultFusedKernel<<<(unsigned)nb, DCSR_BLOCK, 0, stream>>>(p, perm, rowst, rowln, A->K, A->segstart, A->seglen, A->nseg, A->colidx, A->values, x, y, z, lchunk, lpart, lcount);
  return cudaGetLastError();
}

/* ------------------------------------------------------------------------------------------------------
   The row-order product ("rows"), for a block whose rows all have at most one segment (after a defragmentation or a
   fresh assembly): a compact view in ROW order, view[r] = (start, length) as 32-bit ints (the buffer has at most
   INT_MAX slots), read coalesced with one 8-byte load per row instead of the bins' row id, start and length in bin
   order; a group of TPR lanes per row in row order, so that the groups of a warp write consecutive z[r] (coalesced,
   where the binned kernels scatter z by bin). Values and columns by streaming loads, x and the view through the
   read-only path, two entries in flight per lane (DCSRFusedSum: the fused kernel's order for the same TPR). Rows longer
   than longrow are left to the long bin's chunks, in the same launch (DCSRLongChunks<false>: the fused kernel's chunks and its
   fixed order of the partial sums).
   ------------------------------------------------------------------------------------------------------ */

/* view[r] = (start, length) of row r's one segment, (0, 0) for an empty row; a row of several segments gets (0, -1) and
   sets *multi (when not NULL) */
__global__ static void DCSRRowsViewKernel(int m, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, int2 *view, int *multi)
{
  const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= m) return;
  const int ns = nseg[r];
  int2      v;
  if (ns == 1) {
    v.x = (int)segstart[r * K];
    v.y = seglen[r * K];
  } else if (ns == 0) {
    v.x = 0;
    v.y = 0;
  } else {
    v.x = 0;
    v.y = -1;
    if (multi) *multi = 1;
  }
  view[r] = v;
}

cudaError_t GpukitDCSRRowsView(const GpukitDCSRDev *A, int2 *view, int *multi, cudaStream_t stream)
{
  GpukitPoolTemp work(stream);
  int            h = 0;

  if (multi) *multi = 0;
  if (A->m <= 0) return cudaSuccess;
  if (A->cap > (long long)INT_MAX) return cudaErrorInvalidValue;
  if (!multi) {
    DCSRRowsViewKernel<<<DCSRGrid(A->m, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(A->m, A->K, A->segstart, A->seglen, A->nseg, view, NULL);
    return cudaGetLastError();
  }
  DCSR_CHECK(work.Get(sizeof(int)));
  DCSR_CHECK(cudaMemsetAsync(work.p, 0, sizeof(int), stream));
  DCSRRowsViewKernel<<<DCSRGrid(A->m, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(A->m, A->K, A->segstart, A->seglen, A->nseg, view, work.As<int>());
  DCSR_CHECK(cudaGetLastError());
  DCSR_CHECK(cudaMemcpyAsync(&h, work.p, sizeof(int), cudaMemcpyDeviceToHost, stream));
  DCSR_CHECK(cudaStreamSynchronize(stream));
  *multi = h;
  return cudaSuccess;
}

typedef struct {
  long long longrow;   /* rows longer than this: the chunks' */
  unsigned  nbrows;    /* blocks of the row groups; the chunk blocks follow */
  long long lo, nlong; /* the long bin: perm/rowst/rowln + lo, nlong rows */
} DCSRRowsPlan;

/* blocks [0, nbrows): thread t is lane t % TPR of row t / TPR (row order); a row of several segments should not occur
   (the caller checked; if it does, the group walks the segment table: slower, still right), a long row is skipped by its
   whole group (its chunks sum it); blocks from nbrows: chunk
   bid - nbrows of the long bin, as the fused kernel's. At most 32 registers (8 blocks of 256 per SM: full occupancy on
   sm_90; ptxas reports no spill), where the chunk code alone would take 40 */
template <int TPR>
__global__ static void __launch_bounds__(DCSR_BLOCK, 8) DCSRMultRowsKernel(DCSRRowsPlan p, int m, const int2 *__restrict__ view, const int *__restrict__ perm, const int *__restrict__ rowst, const int *__restrict__ rowln, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ rowlen, const int *__restrict__ colidx, const double *__restrict__ values, const double *__restrict__ x, const double *y, double *z, const int *__restrict__ lchunk, double *part, int *lcount)
{
  const unsigned bid = blockIdx.x;
  if (bid < p.nbrows) {
    const long long t    = (long long)bid * DCSR_BLOCK + threadIdx.x;
    const long long r    = t / TPR;
    const int       lane = (int)(t % TPR);
    if (r >= m) return; /* the whole group */
    const int2 v = __ldg(view + r);
    double     sum;
    if (v.y >= 0) {
      if ((long long)v.y > p.longrow) return; /* the whole group: a long row is the chunks' */
      sum = DCSRFusedSum<TPR>((long long)v.x, v.y, lane, colidx, values, x);
    } else { /* several segments: not expected (the caller checked), but still right: the segment table */
      if ((long long)rowlen[r] > p.longrow) return; /* the chunks' */
      sum = DCSRFusedSegments<TPR>(r, lane, K, segstart, seglen, nseg, colidx, values, x);
    }
    DCSRGroupStore<TPR>(sum, lane, r, y, z);
    return;
  }
  DCSRLongChunks<false>((int)(bid - p.nbrows), (int)p.nlong, perm + p.lo, rowst + p.lo, rowln + p.lo, lchunk, NULL, NULL, K, segstart, seglen, nseg, colidx, values, x, y, z, part, lcount);
}

template <int TPR>
static cudaError_t DCSRMultRowsLaunch(const GpukitDCSRDev *A, DCSRRowsPlan p, unsigned nb, const int2 *view, const int *perm, const int *rowst, const int *rowln, const int *lchunk, double *lpart, int *lcount, const double *x, const double *y, double *z, cudaStream_t stream)
{
  DCSRMultRowsKernel<TPR><<<nb, DCSR_BLOCK, 0, stream>>>(p, A->m, view, perm, rowst, rowln, A->K, A->segstart, A->seglen, A->nseg, A->rowlen, A->colidx, A->values, x, y, z, lchunk, lpart, lcount);
  return cudaGetLastError();
}

cudaError_t GpukitDCSRMultRowsCUDA(const GpukitDCSRDev *A, const int2 *view, int tpr, long long longrow, const int *perm, const int *rowst, const int *rowln, const long long binstart[], const int *lchunk, long long nchunk, double *lpart, int *lcount, const double *x, const double *y, double *z, cudaStream_t stream)
{
  DCSRRowsPlan    p;
  long long       nb;
  const long long nlong = binstart[GPUKIT_DCSR_NBINS_ALL] - binstart[GPUKIT_DCSR_NBINS];

  if (A->m <= 0) return cudaSuccess;
  if (!view || A->cap > (long long)INT_MAX || longrow < 1) return cudaErrorInvalidValue;
  if (nlong > 0 && !(lchunk && lpart && lcount && nchunk > 0)) return cudaErrorInvalidValue; /* the long rows need their chunks */
  p.longrow = longrow;
  p.lo      = binstart[GPUKIT_DCSR_NBINS];
  p.nlong   = nlong;
  nb        = ((long long)A->m * tpr + DCSR_BLOCK - 1) / DCSR_BLOCK;
  if (nb >= (long long)INT_MAX) return cudaErrorInvalidValue;
  p.nbrows = (unsigned)nb;
  if (nlong > 0) nb += nchunk;
  if (nb >= (long long)INT_MAX) return cudaErrorInvalidValue;
  switch (tpr) {
#define DCSR_ROWS_CASE(L) \
  case L: \
    return DCSRMultRowsLaunch<L>(A, p, (unsigned)nb, view, perm, rowst, rowln, lchunk, lpart, lcount, x, y, z, stream);
    DCSR_ROWS_CASE(1)
    DCSR_ROWS_CASE(2)
    DCSR_ROWS_CASE(4)
    DCSR_ROWS_CASE(8)
    DCSR_ROWS_CASE(16)
    DCSR_ROWS_CASE(32)
#undef DCSR_ROWS_CASE
  default:
    return cudaErrorInvalidValue;
  }
}

/* ------------------------------------------------------------------------------------------------------
   The CSR base's own product (GpukitDCSRMultBaseStreamCUDA(), the tuner's alternative to cuSPARSE plus the fix-up): ONE
   launch over the base's row pointers, each row's entries since the base (its tail record) added before z[r] is written
   once. The base's rows longer than longrow are summed by chunk blocks after the row warps, their tails added by the
   chunk block that finishes the row. (A variant with 1-32 lanes a row, and the fix-up on a second stream beside
   cuSPARSE, were measured in session 18 and removed: neither beat both of these on the generated matrices.)
   ------------------------------------------------------------------------------------------------------ */

typedef struct {
  long long longrow; /* base rows longer than this: the chunks' */
  unsigned  nbrows;  /* blocks of the row groups; the chunk blocks follow */
  int       nlong;   /* long base rows */
} DCSRBaseLaunchPlan;

/* the launch of a base product: nthreads threads for the row groups, then a block per chunk of the long base rows */
static cudaError_t DCSRBasePlan(const GpukitDCSRDev *A, const int *rowptr, const int *dirty, const GpukitDCSRBaseLong *L, long long nthreads, DCSRBaseLaunchPlan *p, unsigned *nb)
{
  long long n;

  if (!rowptr || !dirty || !L || L->longrow < 1 || A->cap > (long long)INT_MAX) return cudaErrorInvalidValue;
  if (L->nlong > 0 && !(L->lrow && L->lst && L->lln && L->lchunk && L->lcount && L->lpart && L->nchunk > 0)) return cudaErrorInvalidValue;
  p->longrow = L->longrow;
  p->nlong   = (int)L->nlong;
  n          = (nthreads + DCSR_BLOCK - 1) / DCSR_BLOCK;
  if (n + L->nchunk >= (long long)INT_MAX) return cudaErrorInvalidValue;
  p->nbrows = (unsigned)n;
  *nb       = (unsigned)(n + L->nchunk);
  return cudaSuccess;
}


/* The base stream kernel (GpukitDCSRMultBaseStreamCUDA()): a warp per 32 consecutive rows. The warp multiplies their
   base entries (less those of its long rows) as one coalesced stream into shared memory, DCSR_STREAM_CAP at a time, and
   each lane adds the products of its row in the window in order (CSR-stream). Then each lane adds its row's tail
   (marked rows) and writes z[r]. Long base rows (> longrow) are the chunk blocks', as in the base rows kernel. */
#define DCSR_STREAM_CAP   512

__global__ static void __launch_bounds__(DCSR_BLOCK) DCSRMultBaseStreamKernel(DCSRBaseLaunchPlan p, int m, const int *__restrict__ rowptr, const int *__restrict__ dirty, const int4 *__restrict__ tpiece, const int *__restrict__ lrow, const int *__restrict__ lst, const int *__restrict__ lln, const int *__restrict__ lchunk, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx, const double *__restrict__ values, const double *__restrict__ x, const double *y, double *z, double *part, int *lcount)
{
  __shared__ double sm[DCSR_BLOCK / 32][DCSR_STREAM_CAP];
  const unsigned    bid = blockIdx.x;
  if (bid < p.nbrows) {
    const int       lane = (int)(threadIdx.x & 31), wid = (int)(threadIdx.x >> 5);
    const long long r0   = ((long long)bid * DCSR_BLOCK + threadIdx.x) - lane; /* the warp's first row */
    if (r0 >= m) return;                                                       /* the whole warp */
    const long long r     = r0 + lane;
    const bool      valid = r < m;
    const int       b     = __ldg(rowptr + (valid ? r : m));
    const int       last  = r0 + 32 < m ? 32 : (int)(m - r0); /* rows of the warp */
    int             e     = __shfl_down_sync(DCSR_FULL_MASK, b, 1);
    if (valid && (lane == 31 || lane == last - 1)) e = __ldg(rowptr + r + 1);
    const int  bl    = valid ? e - b : 0;
    const bool islng = (long long)bl > p.longrow;
    const int  wb    = __shfl_sync(DCSR_FULL_MASK, b, 0);
    const int  we    = __shfl_sync(DCSR_FULL_MASK, e, last - 1);
    unsigned   lm    = __ballot_sync(DCSR_FULL_MASK, islng); /* lanes whose rows are the chunks' */
    double     sum   = 0.0;
    double    *w     = sm[wid];
    int        s0    = wb;
    /* CSR-stream over the warp's entries less its long rows' (intervals between them), by windows of DCSR_STREAM_CAP
       entries: the warp multiplies a window into shared memory, each lane adds the products of its row in it in order */
    while (true) {
      const int q  = lm ? __ffs(lm) - 1 : -1;
      const int s1 = q >= 0 ? __shfl_sync(DCSR_FULL_MASK, b, q) : we;
      for (int k0 = s0; s1 - k0 > 0;) { /* k0 += n below: no int overflow near INT_MAX entries */
        const int n  = s1 - k0 < DCSR_STREAM_CAP ? s1 - k0 : DCSR_STREAM_CAP;
        const int lo = (b > k0 ? b : k0) - k0, hi = (e < k0 + n ? e : k0 + n) - k0;
        for (int k = lane; k < n; k += 32) w[k] = __ldcs(values + k0 + k) * __ldg(x + __ldcs(colidx + k0 + k));
        __syncwarp();
        for (int k = lo; k < hi && valid && !islng; k++) sum += w[k];
        __syncwarp();
        k0 += n;
      }
      if (q < 0) break;
      s0 = __shfl_sync(DCSR_FULL_MASK, e, q);
      lm &= lm - 1;
    }
    if (!valid || islng) return; /* a long row: the chunks' (its tail included) */
    const int d = __ldg(dirty + r);
    if (d) sum += DCSRBaseTailSum<1>((int)r, (long long)b, bl, d, 0, K, segstart, seglen, nseg, tpiece, colidx, values, x);
    z[r] = y ? y[r] + sum : sum;
    return;
  }
  DCSRLongChunks<true>((int)(bid - p.nbrows), p.nlong, lrow, lst, lln, lchunk, dirty, tpiece, K, segstart, seglen, nseg, colidx, values, x, y, z, part, lcount);
}

cudaError_t GpukitDCSRMultBaseStreamCUDA(const GpukitDCSRDev *A, const int *rowptr, const int *dirty, const int4 *tpiece, const GpukitDCSRBaseLong *L, const double *x, const double *y, double *z, cudaStream_t stream)
{
  DCSRBaseLaunchPlan p;
  unsigned         nb;

  if (A->m <= 0) return cudaSuccess;
  DCSR_CHECK(DCSRBasePlan(A, rowptr, dirty, L, (long long)A->m, &p, &nb)); /* a warp per 32 rows: a thread a row */
  DCSRMultBaseStreamKernel<<<nb, DCSR_BLOCK, 0, stream>>>(p, A->m, rowptr, dirty, tpiece, L->lrow, L->lst, L->lln, L->lchunk, A->K, A->segstart, A->seglen, A->nseg, A->colidx, A->values, x, y, z, L->lpart, L->lcount);
  return cudaGetLastError();
}

/* flag[r] = 1 for a base row longer than longrow, cnt[r] its chunks; the entries m hold 0 (the scans' totals) */
__global__ static void DCSRBaseLongFlagKernel(int m, const int *__restrict__ rowptr, long long longrow, int *flag, int *cnt)
{
  const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r < m) {
    const int bl = rowptr[r + 1] - rowptr[r];
    flag[r]      = (long long)bl > longrow;
    cnt[r]       = (long long)bl > longrow ? (bl + GPUKIT_DCSR_LONG_CHUNK - 1) / GPUKIT_DCSR_LONG_CHUNK : 0;
  } else if (r == m) {
    flag[r] = 0;
    cnt[r]  = 0;
  }
}

/* in place: the exclusive scans of flag and cnt give each long row its place g and its first chunk */
__global__ static void DCSRBaseLongFillKernel(int m, const int *__restrict__ rowptr, long long longrow, const int *__restrict__ pos, const int *__restrict__ cpos, int *lrow, int *lst, int *lln, int *lchunk)
{
  const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r < m) {
    const int b0 = rowptr[r], bl = rowptr[r + 1] - b0;
    if ((long long)bl > longrow) {
      const int g = pos[r];
      lrow[g]     = (int)r;
      lst[g]      = b0;
      lln[g]      = bl;
      lchunk[g]   = cpos[r];
    }
  } else if (r == m) lchunk[pos[m]] = cpos[m];
}

cudaError_t GpukitDCSRBaseLongCount(int m, const int *rowptr, long long longrow, int *work, long long *nlong, long long *nchunk, cudaStream_t stream)
{
  GpukitPoolTemp tmp(stream);
  size_t         bytes = 0;
  int           *flag = work, *cnt = work + (m + 1), *pos = work + 2 * ((long long)m + 1), *cpos = work + 3 * ((long long)m + 1);
  int            h[2] = {0, 0};

  *nlong  = 0;
  *nchunk = 0;
  if (m <= 0) return cudaSuccess;
  if (longrow < 1) return cudaErrorInvalidValue;
  DCSRBaseLongFlagKernel<<<DCSRGrid((long long)m + 1, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(m, rowptr, longrow, flag, cnt);
  DCSR_CHECK(cudaGetLastError());
  DCSR_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, flag, pos, m + 1, stream));
  DCSR_CHECK(tmp.Get(bytes));
  DCSR_CHECK(cub::DeviceScan::ExclusiveSum(tmp.p, bytes, flag, pos, m + 1, stream));
  DCSR_CHECK(cub::DeviceScan::ExclusiveSum(tmp.p, bytes, cnt, cpos, m + 1, stream));
  DCSR_CHECK(cudaMemcpyAsync(&h[0], pos + m, sizeof(int), cudaMemcpyDeviceToHost, stream));
  DCSR_CHECK(cudaMemcpyAsync(&h[1], cpos + m, sizeof(int), cudaMemcpyDeviceToHost, stream));
  DCSR_CHECK(cudaStreamSynchronize(stream));
  *nlong  = h[0];
  *nchunk = h[1];
  return cudaSuccess;
}

cudaError_t GpukitDCSRBaseLongFill(int m, const int *rowptr, const int *work, GpukitDCSRBaseLong *L, cudaStream_t stream)
{
  if (m <= 0 || L->nlong <= 0) return cudaSuccess;
  DCSRBaseLongFillKernel<<<DCSRGrid((long long)m + 1, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(m, rowptr, L->longrow, work + 2 * ((long long)m + 1), work + 3 * ((long long)m + 1), L->lrow, L->lst, L->lln, L->lchunk);
  DCSR_CHECK(cudaGetLastError());
  return cudaMemsetAsync(L->lcount, 0, (size_t)L->nlong * sizeof(int), stream);
}

/* 8 lanes per row; z[col] += a(r, col) x[r] with atomics */
__global__ static void DCSRMultTransposeKernel(int m, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx, const double *__restrict__ values, const double *__restrict__ x, double *z)
{
  const long long t    = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long r    = t / 8;
  const int       lane = (int)(t % 8);
  if (r >= m) return;
  const double    xr   = x[r];
  const long long base = r * K;
  const int       ns   = nseg[r];
  for (int s = 0; s < ns; s++) {
    const long long st  = segstart[base + s];
    const int       len = seglen[base + s];
    for (int k = lane; k < len; k += 8) atomicAdd(&z[colidx[st + k]], values[st + k] * xr);
  }
}

cudaError_t GpukitDCSRMultTransposeAddCUDA(const GpukitDCSRDev *A, const double *x, double *z, cudaStream_t stream)
{
  if (A->m <= 0) return cudaSuccess;
  DCSRMultTransposeKernel<<<DCSRGrid((long long)A->m * 8, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(A->m, A->K, A->segstart, A->seglen, A->nseg, A->colidx, A->values, x, z);
  return cudaGetLastError();
}

__global__ static void DCSRDiagonalKernel(int m, int n, long long coff, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx, const double *__restrict__ values, double *d)
{
  const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= m) return;
  const long long c = r + coff;
  long long       p = -1;
  if (c >= 0 && c < n) p = DCSRFind((int)r, (int)c, K, segstart, seglen, nseg, colidx);
  d[r] = p >= 0 ? values[p] : 0.0;
}

cudaError_t GpukitDCSRGetDiagonalCUDA(const GpukitDCSRDev *A, long long coff, double *d, cudaStream_t stream)
{
  if (A->m <= 0) return cudaSuccess;
  DCSRDiagonalKernel<<<DCSRGrid(A->m, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(A->m, A->n, coff, A->K, A->segstart, A->seglen, A->nseg, A->colidx, A->values, d);
  return cudaGetLastError();
}

__global__ static void DCSRScaleKernel(long long n, double a, double *v)
{
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (long long)gridDim.x * blockDim.x) v[e] *= a;
}

cudaError_t GpukitDCSRScaleCUDA(GpukitDCSRDev *A, double a, cudaStream_t stream)
{
  if (A->used <= 0) return cudaSuccess;
  const long long nb = (A->used + DCSR_BLOCK - 1) / DCSR_BLOCK;
  DCSRScaleKernel<<<(unsigned)(nb < 65535 ? nb : 65535), DCSR_BLOCK, 0, stream>>>(A->used, a, A->values);
  return cudaGetLastError();
}

__global__ static void DCSRFillDiagonalKernel(long long n, long long rstart, long long cstart, double a, int *i, int *j, double *v)
{
  const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  i[r] = (int)(r + rstart);
  j[r] = (int)(r + cstart);
  v[r] = a;
}

cudaError_t GpukitDCSRFillDiagonalBatchCUDA(long long nrows, long long rstart, long long cstart, double a, int *i, int *j, double *v, cudaStream_t stream)
{
  if (nrows <= 0) return cudaSuccess;
  DCSRFillDiagonalKernel<<<DCSRGrid(nrows, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(nrows, rstart, cstart, a, i, j, v);
  return cudaGetLastError();
}

typedef struct {
  unsigned long long nmulti, live, total, nlong, maxlong;
  int                maxnseg;
  int                count; /* a copy of the caller's device count, read back with the statistics */
} DCSRStatsDev;

__device__ static inline unsigned long long DCSRWarpSum(unsigned long long v)
{
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(DCSR_FULL_MASK, v, o);
  return v;
}

__device__ static inline unsigned long long DCSRWarpMax(unsigned long long v)
{
  for (int o = 16; o > 0; o >>= 1) {
    const unsigned long long w = __shfl_down_sync(DCSR_FULL_MASK, v, o);
    v                          = w > v ? w : v;
  }
  return v;
}

#define DCSR_NSTATS 6 /* nmulti, live, total, nlong (sums); maxnseg, maxlong (maxima) */

/* the warp's sums (v[0..3]) and maxima (v[4..5]), in lane 0 */
__device__ static inline void DCSRStatsWarpReduce(unsigned long long v[DCSR_NSTATS])
{
#pragma unroll
  for (int k = 0; k < 4; k++) v[k] = DCSRWarpSum(v[k]);
#pragma unroll
  for (int k = 4; k < DCSR_NSTATS; k++) v[k] = DCSRWarpMax(v[k]);
}

/* grid-stride over the rows; the sums of a block go through shared memory to one atomic per counter per block (one
   per warp made 3 x m/32 atomics on three addresses: 27-38 us at 512K rows on an H200 (ncu), for 10 MB of reads).
   Also what a defragmentation with this slack and no extra room needs to know (DCSRRowCapacity(), the long rows). */
__global__ static void __launch_bounds__(DCSR_BLOCK) DCSRStatsKernel(int m, int K, const int *__restrict__ nseg, const int *__restrict__ segcap, const int *__restrict__ rowlen, double slack, DCSRStatsDev *st)
{
  __shared__ unsigned long long sv[DCSR_NSTATS][DCSR_BLOCK / 32];
  const int                     lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x / 32);
  unsigned long long            v[DCSR_NSTATS] = {0, 0, 0, 0, 0, 0};

  for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < m; r += (long long)gridDim.x * blockDim.x) {
    const int ns  = nseg[r];
    const int len = rowlen[r];
    if (ns > 1) v[0]++;
    for (int s = 0; s < ns; s++) v[1] += (unsigned long long)segcap[r * (long long)K + s];
    v[2] += (unsigned long long)DCSRRowCapacity(len, slack, 0);
    if (len > DCSR_DEFRAG_LONG) {
      v[3]++;
      if ((unsigned long long)len > v[5]) v[5] = (unsigned long long)len;
    }
    if ((unsigned long long)ns > v[4]) v[4] = (unsigned long long)ns;
  }
  DCSRStatsWarpReduce(v);
  if (lane == 0)
    for (int k = 0; k < DCSR_NSTATS; k++) sv[k][warp] = v[k];
  __syncthreads();
  if (warp == 0) {
    const int nw = (int)(blockDim.x / 32);
    for (int k = 0; k < DCSR_NSTATS; k++) v[k] = lane < nw ? sv[k][lane] : 0;
    DCSRStatsWarpReduce(v);
    if (lane == 0) {
      if (v[0]) atomicAdd(&st->nmulti, v[0]);
      if (v[1]) atomicAdd(&st->live, v[1]);
      if (v[2]) atomicAdd(&st->total, v[2]);
      if (v[3]) atomicAdd(&st->nlong, v[3]);
      if (v[4]) atomicMax(&st->maxnseg, (int)v[4]);
      if (v[5]) atomicMax(&st->maxlong, v[5]);
    }
  }
}

/* one synchronisation */
cudaError_t GpukitDCSRSegmentStats(const GpukitDCSRDev *A, const int *dcount, int *hcount, double slack, GpukitDCSRDefragHint *hint, int *maxnseg, long long *nmulti, long long *live, cudaStream_t stream)
{
  GpukitPoolTemp d(stream);
  DCSRStatsDev   h = {0, 0, 0, 0, 0, 0, 0};

  *maxnseg = 0;
  *nmulti  = 0;
  *live    = 0;
  if (A->m <= 0) {
    if (hint) { /* nothing to size */
      hint->slack   = slack;
      hint->total   = 0;
      hint->nlong   = 0;
      hint->maxlong = 0;
    }
    return cudaSuccess;
  }
  DCSR_CHECK(d.Get(sizeof(h)));
  DCSR_CHECK(cudaMemsetAsync(d.p, 0, sizeof(h), stream));
  DCSRStatsKernel<<<DCSRGrid(A->m, DCSR_BLOCK) < 1024 ? DCSRGrid(A->m, DCSR_BLOCK) : 1024, DCSR_BLOCK, 0, stream>>>(A->m, A->K, A->nseg, A->segcap, A->rowlen, slack, d.As<DCSRStatsDev>());
  DCSR_CHECK(cudaGetLastError());
  if (dcount) DCSR_CHECK(cudaMemcpyAsync(&d.As<DCSRStatsDev>()->count, dcount, sizeof(int), cudaMemcpyDeviceToDevice, stream));
  DCSR_CHECK(cudaMemcpyAsync(&h, d.p, sizeof(h), cudaMemcpyDeviceToHost, stream));
  DCSR_CHECK(cudaStreamSynchronize(stream));
  if (hint) { /* written only now: a failed call leaves the caller's hint as it was */
    hint->slack   = slack;
    hint->total   = (long long)h.total;
    hint->nlong   = (long long)h.nlong;
    hint->maxlong = (long long)h.maxlong;
  }
  if (hcount) *hcount = h.count;
  *maxnseg = h.maxnseg;
  *nmulti  = (long long)h.nmulti;
  *live    = (long long)h.live;
  return cudaSuccess;
}

/* the sum over the rows of (the largest column of the row's segments - the smallest): each segment is sorted, so its
   first and last entries bound it; a warp's sum, then one 64-bit integer atomic a warp */
__global__ static void __launch_bounds__(DCSR_BLOCK) DCSRRowSpanKernel(int m, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx, unsigned long long *sum)
{
  unsigned long long s = 0;

  for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < m; r += (long long)gridDim.x * blockDim.x) {
    const long long base = r * K;
    const int       ns   = nseg[r];
    int             lo = INT_MAX, hi = INT_MIN;
    for (int q = 0; q < ns; q++) {
      const int len = seglen[base + q];
      if (len > 0) {
        const long long st = segstart[base + q];
        lo                 = min(lo, colidx[st]);
        hi                 = max(hi, colidx[st + len - 1]);
      }
    }
    if (hi >= lo) s += (unsigned long long)(hi - lo);
  }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(DCSR_FULL_MASK, s, o);
  if ((threadIdx.x & 31) == 0 && s) atomicAdd(sum, s);
}

cudaError_t GpukitDCSRMeanRowSpan(const GpukitDCSRDev *A, double *mean, cudaStream_t stream)
{
  GpukitPoolTemp     d(stream);
  unsigned long long h = 0;

  *mean = 0;
  if (A->m <= 0) return cudaSuccess;
  DCSR_CHECK(d.Get(sizeof(h)));
  DCSR_CHECK(cudaMemsetAsync(d.p, 0, sizeof(h), stream));
  DCSRRowSpanKernel<<<DCSRGrid(A->m, DCSR_BLOCK) < 1024 ? DCSRGrid(A->m, DCSR_BLOCK) : 1024, DCSR_BLOCK, 0, stream>>>(A->m, A->K, A->segstart, A->seglen, A->nseg, A->colidx, d.As<unsigned long long>());
  DCSR_CHECK(cudaGetLastError());
  DCSR_CHECK(cudaMemcpyAsync(&h, d.p, sizeof(h), cudaMemcpyDeviceToHost, stream));
  DCSR_CHECK(cudaStreamSynchronize(stream));
  *mean = (double)h / (double)A->m;
  return cudaSuccess;
}
