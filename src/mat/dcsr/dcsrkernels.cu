/*
   Device kernels of MATDCSRCUDA (contract: dcsrkernels.h). Pure CUDA + thrust, no PETSc; the glue is dcsrcuda.cu.

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
   Lane 0 alone does the allocation's atomic (one thread per row in the allocation kernel): one atomic per row per
   batch, never one per entry. No shared memory, no volatile tricks: warp reductions use __shfl_down_sync with the
   mask of the lanes of the row's group.
*/
#include <climits>
#include <cmath>
#include <new>
#include <thrust/binary_search.h>
#include <thrust/count.h>
#include <thrust/execution_policy.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system_error.h>
#include "dcsrkernels.h"

#define DCSR_BLOCK 256

const int GPUKIT_DCSR_BIN_MAX[GPUKIT_DCSR_NBINS] = {4, 32, 256, INT_MAX};

static inline unsigned DCSRGrid(long long n, int block)
{
  return (unsigned)((n + block - 1) / block);
}

/* thrust reports errors by exceptions: turn them into CUDA error codes */
#define DCSR_THRUST(stmt) \
  do { \
    try { \
      stmt; \
    } catch (const std::bad_alloc &) { \
      return cudaErrorMemoryAllocation; \
    } catch (const thrust::system_error &e) { \
      return e.code().value() ? (cudaError_t)e.code().value() : cudaErrorUnknown; \
    } catch (...) { \
      return cudaErrorUnknown; \
    } \
  } while (0)

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
  /* keys 8, perm 4, flags/scan 4, starts 4, urow/ucol 8, uval 8, upos 8, groups 4+4+4+8+4, thrust's sort buffers ~16 */
  return 96;
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

cudaError_t GpukitDCSRBatchValidate(const GpukitDCSRDev *A, long long nent, const int *i, const int *j, long long rstart, long long cstart, GpukitDCSRBad *bad, cudaStream_t stream)
{
  unsigned long long *d, h = ULLONG_MAX;
  int                 ij[2];

  bad->entry = -1;
  bad->row = bad->col = 0;
  if (nent <= 0) return cudaSuccess;
  if (!i || !j) return cudaErrorInvalidValue;
  DCSR_CHECK(cudaMalloc((void **)&d, sizeof(*d)));
  cudaError_t err = cudaMemcpyAsync(d, &h, sizeof(h), cudaMemcpyHostToDevice, stream);
  if (err == cudaSuccess) {
    DCSRValidateKernel<<<DCSRGrid(nent, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(nent, i, j, rstart, A->m, cstart, A->n, d);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = cudaMemcpyAsync(&h, d, sizeof(h), cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (err == cudaSuccess && h != ULLONG_MAX) {
    err = cudaMemcpyAsync(&ij[0], i + h, sizeof(int), cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess) err = cudaMemcpyAsync(&ij[1], j + h, sizeof(int), cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
    if (err == cudaSuccess) {
      bad->entry = (long long)h;
      bad->row   = ij[0];
      bad->col   = ij[1];
    }
  }
  cudaError_t err2 = cudaFree(d);
  return err != cudaSuccess ? err : err2;
}

/* ------------------------------------------------------------------------------------------------------
   Batch: sort, reduce, hits, row groups
   ------------------------------------------------------------------------------------------------------ */

__global__ static void DCSRKeysKernel(long long n, const int *__restrict__ i, const int *__restrict__ j, long long rstart, long long cstart, unsigned long long *key, int *perm)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  const long long r = i[e], c = j[e];
  key[e]  = (r < 0 || c < 0) ? ULLONG_MAX : (((unsigned long long)(r - rstart)) << 32) | (unsigned long long)(unsigned)(c - cstart);
  perm[e] = (int)e;
}

/* flag[e] = 1 where a run of equal keys starts */
__global__ static void DCSRHeadKernel(long long n, const unsigned long long *__restrict__ key, int *flag)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  flag[e] = (e == 0 || key[e] != key[e - 1]) ? 1 : 0;
}

__global__ static void DCSRHeadIntKernel(long long n, const int *__restrict__ key, int *flag)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  flag[e] = (e == 0 || key[e] != key[e - 1]) ? 1 : 0;
}

/* start[id[e] - 1] = e where a run starts (id = inclusive scan of the heads), start[nruns] = n */
__global__ static void DCSRRunStartKernel(long long n, const unsigned long long *__restrict__ key, const int *__restrict__ id, int *start)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  if (e == 0 || key[e] != key[e - 1]) start[id[e] - 1] = (int)e;
  if (e == n - 1) start[id[e]] = (int)n;
}

__global__ static void DCSRRunStartIntKernel(long long n, const int *__restrict__ key, const int *__restrict__ id, int *start)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  if (e == 0 || key[e] != key[e - 1]) start[id[e] - 1] = (int)e;
  if (e == n - 1) start[id[e]] = (int)n;
}

/* one distinct (row, column): INSERT takes the last of its duplicates (the sort is stable: input order), ADD their sum */
__global__ static void DCSRReduceKernel(long long nu, const int *__restrict__ start, const unsigned long long *__restrict__ key, const int *__restrict__ perm, const double *__restrict__ v, int add, int *urow, int *ucol, double *uval)
{
  const long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (u >= nu) return;
  const int                s = start[u], t = start[u + 1];
  const unsigned long long k = key[s];
  double                   val = 0.0;
  if (v) {
    if (add)
      for (int p = s; p < t; p++) val += v[perm[p]];
    else val = v[perm[t - 1]];
  }
  urow[u] = (int)(k >> 32);
  ucol[u] = (int)(unsigned)(k & 0xffffffffULL);
  uval[u] = val;
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

/* upos: the slot of a hit, -1 for a new entry, -2 for a new zero off the diagonal dropped (MAT_IGNORE_ZERO_ENTRIES) */
__global__ static void DCSRLookupKernel(long long nu, const int *__restrict__ urow, const int *__restrict__ ucol, const double *__restrict__ uval, int dropzero, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx, long long *upos)
{
  const long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (u >= nu) return;
  long long p = DCSRFind(urow[u], ucol[u], K, segstart, seglen, nseg, colidx);
  if (p < 0 && dropzero && uval[u] == 0.0 && urow[u] != ucol[u]) p = -2;
  upos[u] = p;
}

__global__ static void DCSRGroupKernel(long long ng, const int *__restrict__ gstart, const int *__restrict__ urow, const long long *__restrict__ upos, int *grow, int *gnew)
{
  const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= ng) return;
  int nn = 0;
  for (int e = gstart[g]; e < gstart[g + 1]; e++) nn += upos[e] == -1 ? 1 : 0;
  grow[g] = urow[gstart[g]];
  gnew[g] = nn;
}

struct DCSRIsNew {
  __host__ __device__ bool operator()(long long p) const { return p == -1; }
};
struct DCSRPositive {
  __host__ __device__ bool operator()(int p) const { return p > 0; }
};

cudaError_t GpukitDCSRBatchDestroy(GpukitDCSRBatch *b)
{
  cudaError_t err = cudaSuccess, e;
  void       *p[]  = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

  if (!*b) return cudaSuccess;
  p[0] = (*b)->urow;
  p[1] = (*b)->ucol;
  p[2] = (*b)->uval;
  p[3] = (*b)->upos;
  p[4] = (*b)->grow;
  p[5] = (*b)->gstart;
  p[6] = (*b)->gnew;
  p[7] = (*b)->galloc;
  p[8] = (*b)->gsize;
  p[9] = (*b)->plan;
  for (int k = 0; k < 10; k++)
    if (p[k] && (e = cudaFree(p[k])) != cudaSuccess && err == cudaSuccess) err = e;
  delete *b;
  *b = NULL;
  return err;
}

/* the work of GpukitDCSRBatchCreate() on the work arrays key, perm, flag, start (n each; start n+1) */
static cudaError_t DCSRBatchFill(const GpukitDCSRDev *A, long long n, const int *i, const int *j, const double *v, long long rstart, long long cstart, GpukitDCSRBatch b, unsigned long long *key, int *perm, int *flag, int *start, GpukitDCSRBatchInfo *info, cudaStream_t stream)
{
  auto      pol    = thrust::cuda::par.on(stream);
  long long nvalid = 0, nu = 0, ng = 0, nrowsnew = 0, nnew = 0;
  int       last;

  DCSRKeysKernel<<<DCSRGrid(n, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(n, i, j, rstart, cstart, key, perm);
  DCSR_CHECK(cudaGetLastError());
  DCSR_THRUST(thrust::stable_sort_by_key(pol, key, key + n, perm)); /* radix sort: stable, duplicates keep their order */
  DCSR_THRUST(nvalid = (long long)(thrust::lower_bound(pol, key, key + n, ULLONG_MAX) - key));
  info->nvalid = nvalid;
  if (nvalid == 0) return cudaSuccess;
  /* distinct (row, column) */
  DCSRHeadKernel<<<DCSRGrid(nvalid, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(nvalid, key, flag);
  DCSR_CHECK(cudaGetLastError());
  DCSR_THRUST(thrust::inclusive_scan(pol, flag, flag + nvalid, flag));
  DCSR_CHECK(cudaMemcpyAsync(&last, flag + nvalid - 1, sizeof(int), cudaMemcpyDeviceToHost, stream));
  DCSR_CHECK(cudaStreamSynchronize(stream));
  nu = last;
  DCSRRunStartKernel<<<DCSRGrid(nvalid, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(nvalid, key, flag, start);
  DCSR_CHECK(cudaGetLastError());
  DCSR_CHECK(cudaMalloc((void **)&b->urow, (size_t)nu * sizeof(int)));
  DCSR_CHECK(cudaMalloc((void **)&b->ucol, (size_t)nu * sizeof(int)));
  DCSR_CHECK(cudaMalloc((void **)&b->uval, (size_t)nu * sizeof(double)));
  DCSR_CHECK(cudaMalloc((void **)&b->upos, (size_t)nu * sizeof(long long)));
  DCSRReduceKernel<<<DCSRGrid(nu, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(nu, start, key, perm, v, b->add, b->urow, b->ucol, b->uval);
  DCSR_CHECK(cudaGetLastError());
  DCSRLookupKernel<<<DCSRGrid(nu, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(nu, b->urow, b->ucol, b->uval, b->dropzero, A->K, A->segstart, A->seglen, A->nseg, A->colidx, b->upos);
  DCSR_CHECK(cudaGetLastError());
  DCSR_THRUST(nnew = (long long)thrust::count_if(pol, b->upos, b->upos + nu, DCSRIsNew()));
  /* rows: groups of the distinct entries (sorted by row) */
  DCSRHeadIntKernel<<<DCSRGrid(nu, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(nu, b->urow, flag);
  DCSR_CHECK(cudaGetLastError());
  DCSR_THRUST(thrust::inclusive_scan(pol, flag, flag + nu, flag));
  DCSR_CHECK(cudaMemcpyAsync(&last, flag + nu - 1, sizeof(int), cudaMemcpyDeviceToHost, stream));
  DCSR_CHECK(cudaStreamSynchronize(stream));
  ng = last;
  DCSR_CHECK(cudaMalloc((void **)&b->gstart, (size_t)(ng + 1) * sizeof(int)));
  DCSR_CHECK(cudaMalloc((void **)&b->grow, (size_t)ng * sizeof(int)));
  DCSR_CHECK(cudaMalloc((void **)&b->gnew, (size_t)ng * sizeof(int)));
  DCSR_CHECK(cudaMalloc((void **)&b->galloc, (size_t)ng * sizeof(long long)));
  DCSR_CHECK(cudaMalloc((void **)&b->gsize, (size_t)ng * sizeof(int)));
  DCSRRunStartIntKernel<<<DCSRGrid(nu, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(nu, b->urow, flag, b->gstart);
  DCSR_CHECK(cudaGetLastError());
  DCSRGroupKernel<<<DCSRGrid(ng, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(ng, b->gstart, b->urow, b->upos, b->grow, b->gnew);
  DCSR_CHECK(cudaGetLastError());
  DCSR_THRUST(nrowsnew = (long long)thrust::count_if(pol, b->gnew, b->gnew + ng, DCSRPositive()));
  b->nu         = nu;
  b->ng         = ng;
  b->nnew       = nnew;
  info->nunique = nu;
  info->nnew    = nnew;
  info->nrows   = ng;
  info->nrowsnew = nrowsnew;
  return cudaSuccess;
}

cudaError_t GpukitDCSRBatchCreate(const GpukitDCSRDev *A, long long nent, const int *i, const int *j, const double *v, long long rstart, long long cstart, int add, int dropzero, GpukitDCSRBatch *bout, GpukitDCSRBatchInfo *info, cudaStream_t stream)
{
  GpukitDCSRBatch     b;
  unsigned long long *key  = NULL;
  int                *perm = NULL, *flag = NULL, *start = NULL;
  cudaError_t         err;

  *bout = NULL;
  info->nvalid = info->nunique = info->nnew = info->nrows = info->nrowsnew = 0;
  info->segfull = info->capfull = info->need = info->newmulti = 0;
  info->maxnseg = 0;
  if (nent < 0 || nent >= (long long)INT_MAX) return cudaErrorInvalidValue; /* the caller splits larger batches */
  if (nent > 0 && (!i || !j)) return cudaErrorInvalidValue;
  b = new (std::nothrow) _p_GpukitDCSRBatch();
  if (!b) return cudaErrorMemoryAllocation;
  b->add      = add ? 1 : 0;
  b->dropzero = dropzero ? 1 : 0;
  err    = cudaMalloc((void **)&b->plan, sizeof(DCSRPlanDev));
  if (err == cudaSuccess && nent > 0) {
    err = cudaMalloc((void **)&key, (size_t)nent * sizeof(*key));
    if (err == cudaSuccess) err = cudaMalloc((void **)&perm, (size_t)nent * sizeof(int));
    if (err == cudaSuccess) err = cudaMalloc((void **)&flag, (size_t)nent * sizeof(int));
    if (err == cudaSuccess) err = cudaMalloc((void **)&start, (size_t)(nent + 1) * sizeof(int));
    if (err == cudaSuccess) err = DCSRBatchFill(A, nent, i, j, v, rstart, cstart, b, key, perm, flag, start, info, stream);
  }
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream); /* the work arrays are freed below */
  if (key) cudaFree(key);
  if (perm) cudaFree(perm);
  if (flag) cudaFree(flag);
  if (start) cudaFree(start);
  if (err != cudaSuccess) {
    (void)cudaGetLastError(); /* a failed allocation is not sticky: clear it */
    GpukitDCSRBatchDestroy(&b);
    return err;
  }
  *bout = b;
  return cudaSuccess;
}

/* ------------------------------------------------------------------------------------------------------
   The allocation kernel (seed Alg. 4, with the guards) and the insertion kernel (Alg. 5, sorted)
   ------------------------------------------------------------------------------------------------------ */

__global__ static void DCSRPlanKernel(long long ng, const int *__restrict__ grow, const int *__restrict__ gnew, int K, const int *__restrict__ seglen, const int *__restrict__ segcap, const int *__restrict__ nseg, const int *__restrict__ rowlen, unsigned long long *dused, long long cap, double slack, int minseg, int insertnew, long long *galloc, int *gsize, DCSRPlanDev *pd)
{
  const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= ng) return;
  const int nn = gnew[g];
  galloc[g]    = -2;
  gsize[g]     = 0;
  if (!insertnew || nn == 0) return;
  const int       r    = grow[g];
  const int       ns   = nseg[r];
  const long long base = (long long)r * K;
  if (ns > 0 && segcap[base + ns - 1] - seglen[base + ns - 1] >= nn) { /* room in the last segment: the row's free slots are there only */
    galloc[g] = -1;
    atomicMax(&pd->maxnseg, ns);
    return;
  }
  const int q = (ns > 0 && seglen[base + ns - 1] == 0) ? ns - 1 : ns; /* an empty last segment without room: its table entry is reused */
  if (q >= K) { /* segment cap: the caller defragments */
    atomicAdd(&pd->segfull, 1ULL);
    galloc[g] = -3;
    return;
  }
  const long long len  = (long long)rowlen[r] + nn;
  long long       size = (long long)ceil(slack * (double)len);
  if (size < minseg) size = minseg;
  if (size > (long long)INT_MAX - 1) size = (long long)INT_MAX - 1;
  if (size < nn) size = nn;
  const unsigned long long addr = atomicAdd(dused, (unsigned long long)size); /* the one atomic of this row in this batch */
  atomicAdd(&pd->need, (unsigned long long)size);
  if ((long long)addr + size > cap) { /* capacity: the caller grows and defragments; nothing written */
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

__global__ static void DCSRRowCapKernel(int m, const int *__restrict__ rowlen, double slack, const int *__restrict__ extra, long long *off)
{
  const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r > m) return;
  if (r == m) {
    off[m] = 0;
    return;
  }
  const long long len  = rowlen[r];
  long long       room = (long long)ceil(slack * (double)len);
  if (extra && extra[r] > room) room = extra[r];
  if (len + room > (long long)INT_MAX - 1) room = (long long)INT_MAX - 1 - len;
  off[r] = len + room;
}

/* a warp per row: entry k of segment s goes to k + (entries of the other segments with a smaller column), since the
   row's columns are distinct; lane 0 rewrites the row's segment table once every lane has read it */
__global__ static void DCSRCompactKernel(int m, int K, const long long *__restrict__ off, long long *segstart, int *seglen, int *segcap, int *nseg, const int *__restrict__ rowlen, const int *__restrict__ colidx, const double *__restrict__ values, int *ncol, double *nval)
{
  const long long t    = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long r    = t / 32;
  const int       lane = (int)(t % 32);
  if (r >= m) return; /* the whole warp: r is the same for its 32 lanes */
  const long long base = r * K;
  const int       ns   = nseg[r];
  const long long out  = off[r];
  for (int s = 0; s < ns; s++) {
    const long long st  = segstart[base + s];
    const int       len = seglen[base + s];
    for (int k = lane; k < len; k += 32) {
      const int c = colidx[st + k];
      long long d = k;
      for (int q = 0; q < ns; q++) {
        if (q == s) continue;
        const long long sq = segstart[base + q];
        int             lo = 0, hi = seglen[base + q];
        while (lo < hi) { /* entries of segment q below c */
          const int mid = lo + (hi - lo) / 2;
          if (colidx[sq + mid] < c) lo = mid + 1;
          else hi = mid;
        }
        d += lo;
      }
      ncol[out + d] = c;
      nval[out + d] = values[st + k];
    }
  }
  __syncwarp();
  if (lane == 0) {
    const int cap_r = (int)(off[r + 1] - off[r]);
    for (int s = 0; s < K; s++) {
      segstart[base + s] = 0;
      seglen[base + s]   = 0;
      segcap[base + s]   = 0;
    }
    if (cap_r > 0) {
      segstart[base] = out;
      seglen[base]   = rowlen[r];
      segcap[base]   = cap_r;
      nseg[r]        = 1;
    } else nseg[r] = 0;
  }
}

cudaError_t GpukitDCSRDefragment(GpukitDCSRDev *A, double slack, const int *extra, long long mincap, double capfactor, int *grew, cudaStream_t stream)
{
  long long         *off = NULL, total = 0, newcap;
  int               *ncol = NULL;
  double            *nval = NULL;
  cudaError_t        err;
  unsigned long long u;

  *grew = 0;
  if (A->m <= 0) return cudaSuccess;
  DCSR_CHECK(cudaMalloc((void **)&off, (size_t)(A->m + 1) * sizeof(long long)));
  DCSRRowCapKernel<<<DCSRGrid((long long)A->m + 1, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(A->m, A->rowlen, slack, extra, off);
  err = cudaGetLastError();
  if (err == cudaSuccess) {
    try {
      thrust::exclusive_scan(thrust::cuda::par.on(stream), off, off + A->m + 1, off);
    } catch (const std::bad_alloc &) {
      err = cudaErrorMemoryAllocation;
    } catch (...) {
      err = cudaErrorUnknown;
    }
  }
  if (err == cudaSuccess) err = cudaMemcpyAsync(&total, off + A->m, sizeof(total), cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) {
    cudaFree(off);
    return err;
  }
  newcap = total > mincap ? total : mincap;
  if (total > A->cap) { /* growth: leave room for what comes next */
    const long long want = (long long)ceil((capfactor > 1.0 ? capfactor : 1.0) * (double)total);
    if (want > newcap) newcap = want;
    *grew = 1;
  }
  if (newcap < 1) newcap = 1;
  err = cudaMalloc((void **)&ncol, (size_t)newcap * sizeof(int));
  if (err == cudaSuccess) err = cudaMalloc((void **)&nval, (size_t)newcap * sizeof(double));
  if (err != cudaSuccess && *grew && newcap > total && total > 0) { /* not enough for the headroom: try the exact size */
    (void)cudaGetLastError();
    if (ncol) cudaFree(ncol);
    ncol   = NULL;
    newcap = total > A->cap ? total : A->cap;
    err    = cudaMalloc((void **)&ncol, (size_t)newcap * sizeof(int));
    if (err == cudaSuccess) err = cudaMalloc((void **)&nval, (size_t)newcap * sizeof(double));
  }
  if (err != cudaSuccess) { /* A unchanged */
    (void)cudaGetLastError();
    if (ncol) cudaFree(ncol);
    if (nval) cudaFree(nval);
    cudaFree(off);
    *grew = 0;
    return cudaErrorMemoryAllocation;
  }
  DCSRCompactKernel<<<DCSRGrid((long long)A->m * 32, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(A->m, A->K, off, A->segstart, A->seglen, A->segcap, A->nseg, A->rowlen, A->colidx, A->values, ncol, nval);
  err = cudaGetLastError();
  u   = (unsigned long long)total;
  if (err == cudaSuccess) err = cudaMemcpyAsync(A->dused, &u, sizeof(u), cudaMemcpyHostToDevice, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) {
    cudaFree(ncol);
    cudaFree(nval);
    cudaFree(off);
    return err;
  }
  cudaFree(A->colidx);
  cudaFree(A->values);
  cudaFree(off);
  A->colidx = ncol;
  A->values = nval;
  A->used   = total;
  A->cap    = newcap;
  return cudaSuccess;
}

/* ------------------------------------------------------------------------------------------------------
   The product: rows binned by length (ADCSR), a group of TPR lanes per row
   ------------------------------------------------------------------------------------------------------ */

__global__ static void DCSRBinKernel(int m, const int *__restrict__ rowlen, int *bin, int *perm, unsigned long long *cnt, unsigned long long *nnz, int *maxlen)
{
  const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= m) return;
  const int len = rowlen[r];
  int       b   = 0;
  while (b < GPUKIT_DCSR_NBINS - 1 && len > (b == 0 ? 4 : (b == 1 ? 32 : 256))) b++;
  bin[r]  = b;
  perm[r] = (int)r;
  atomicAdd(&cnt[b], 1ULL);
  atomicAdd(nnz, (unsigned long long)len);
  atomicMax(maxlen, len);
}

cudaError_t GpukitDCSRBinRows(const GpukitDCSRDev *A, int *perm, long long binstart[], long long *maxlen, long long *nnz, cudaStream_t stream)
{
  int                *bin = NULL, hmax = 0;
  unsigned long long *cnt = NULL, hcnt[GPUKIT_DCSR_NBINS + 1];
  cudaError_t         err;

  for (int b = 0; b <= GPUKIT_DCSR_NBINS; b++) binstart[b] = 0;
  *maxlen = 0;
  *nnz    = 0;
  if (A->m <= 0) return cudaSuccess;
  DCSR_CHECK(cudaMalloc((void **)&bin, (size_t)A->m * sizeof(int) + sizeof(int)));
  err = cudaMalloc((void **)&cnt, sizeof(hcnt));
  if (err == cudaSuccess) err = cudaMemsetAsync(cnt, 0, sizeof(hcnt), stream);
  if (err == cudaSuccess) err = cudaMemsetAsync(bin + A->m, 0, sizeof(int), stream);
  if (err == cudaSuccess) {
    DCSRBinKernel<<<DCSRGrid(A->m, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(A->m, A->rowlen, bin, perm, cnt, cnt + GPUKIT_DCSR_NBINS, bin + A->m);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) {
    try {
      thrust::stable_sort_by_key(thrust::cuda::par.on(stream), bin, bin + A->m, perm);
    } catch (const std::bad_alloc &) {
      err = cudaErrorMemoryAllocation;
    } catch (...) {
      err = cudaErrorUnknown;
    }
  }
  /* bin + m survived the sort (it sorts [0, m) only) */
  if (err == cudaSuccess) err = cudaMemcpyAsync(hcnt, cnt, sizeof(hcnt), cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaMemcpyAsync(&hmax, bin + A->m, sizeof(int), cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (bin) cudaFree(bin);
  if (cnt) cudaFree(cnt);
  if (err != cudaSuccess) return err;
  for (int b = 0; b < GPUKIT_DCSR_NBINS; b++) binstart[b + 1] = binstart[b] + (long long)hcnt[b];
  *nnz    = (long long)hcnt[GPUKIT_DCSR_NBINS];
  *maxlen = hmax;
  return cudaSuccess;
}

template <int TPR>
__global__ static void DCSRMultKernel(long long nrows, const int *__restrict__ rows, int K, const long long *__restrict__ segstart, const int *__restrict__ seglen, const int *__restrict__ nseg, const int *__restrict__ colidx, const double *__restrict__ values, const double *__restrict__ x, const double *y, double *z)
{
  const long long t    = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long g    = t / TPR;
  const int       lane = (int)(t % TPR);
  if (g >= nrows) return; /* every lane of the group leaves together */
  const int          r    = rows[g];
  const long long    base = (long long)r * K;
  const int          ns   = nseg[r];
  double             sum  = 0.0;
  for (int s = 0; s < ns; s++) { /* the running segment index the seed's Alg. 6 lacks */
    const long long st  = segstart[base + s];
    const int       len = seglen[base + s];
    for (int k = lane; k < len; k += TPR) sum += values[st + k] * x[colidx[st + k]];
  }
  if (TPR > 1) {
    const unsigned wl   = (unsigned)(threadIdx.x % 32);
    const unsigned mask = TPR == 32 ? 0xffffffffu : (((1u << TPR) - 1u) << (wl / TPR * TPR));
    for (int o = TPR / 2; o > 0; o >>= 1) sum += __shfl_down_sync(mask, sum, o, TPR);
  }
  if (lane == 0) z[r] = y ? y[r] + sum : sum;
}

template <int TPR>
static cudaError_t DCSRMultLaunch(const GpukitDCSRDev *A, long long nrows, const int *rows, const double *x, const double *y, double *z, cudaStream_t stream)
{
  DCSRMultKernel<TPR><<<DCSRGrid(nrows * TPR, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(nrows, rows, A->K, A->segstart, A->seglen, A->nseg, A->colidx, A->values, x, y, z);
  return cudaGetLastError();
}

cudaError_t GpukitDCSRMultCUDA(const GpukitDCSRDev *A, const int *perm, const long long binstart[], const int tpr[], const double *x, const double *y, double *z, cudaStream_t stream)
{
  for (int b = 0; b < GPUKIT_DCSR_NBINS; b++) {
    const long long nrows = binstart[b + 1] - binstart[b];
    const int      *rows  = perm + binstart[b];
    cudaError_t     err;
    if (nrows <= 0) continue;
    switch (tpr[b]) {
    case 1:
      err = DCSRMultLaunch<1>(A, nrows, rows, x, y, z, stream);
      break;
    case 2:
      err = DCSRMultLaunch<2>(A, nrows, rows, x, y, z, stream);
      break;
    case 4:
      err = DCSRMultLaunch<4>(A, nrows, rows, x, y, z, stream);
      break;
    case 8:
      err = DCSRMultLaunch<8>(A, nrows, rows, x, y, z, stream);
      break;
    case 16:
      err = DCSRMultLaunch<16>(A, nrows, rows, x, y, z, stream);
      break;
    case 32:
      err = DCSRMultLaunch<32>(A, nrows, rows, x, y, z, stream);
      break;
    default:
      return cudaErrorInvalidValue;
    }
    if (err != cudaSuccess) return err;
  }
  return cudaSuccess;
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

__global__ static void DCSRStatsKernel(int m, int K, const int *__restrict__ nseg, const int *__restrict__ segcap, int *maxnseg, unsigned long long *nmulti, unsigned long long *live)
{
  const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= m) return;
  const int          ns = nseg[r];
  unsigned long long c  = 0;
  for (int s = 0; s < ns; s++) c += (unsigned long long)segcap[r * (long long)K + s];
  if (ns > 1) atomicAdd(nmulti, 1ULL);
  if (c) atomicAdd(live, c);
  atomicMax(maxnseg, ns);
}

cudaError_t GpukitDCSRSegmentStats(const GpukitDCSRDev *A, int *maxnseg, long long *nmulti, long long *live, cudaStream_t stream)
{
  struct {
    unsigned long long nmulti, live;
    int                maxnseg;
  } h = {0, 0, 0}, *d = NULL;
  cudaError_t err;

  *maxnseg = 0;
  *nmulti  = 0;
  *live    = 0;
  if (A->m <= 0) return cudaSuccess;
  DCSR_CHECK(cudaMalloc((void **)&d, sizeof(h)));
  err = cudaMemsetAsync(d, 0, sizeof(h), stream);
  if (err == cudaSuccess) {
    DCSRStatsKernel<<<DCSRGrid(A->m, DCSR_BLOCK), DCSR_BLOCK, 0, stream>>>(A->m, A->K, A->nseg, A->segcap, &d->maxnseg, &d->nmulti, &d->live);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = cudaMemcpyAsync(&h, d, sizeof(h), cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  cudaFree(d);
  *maxnseg = h.maxnseg;
  *nmulti  = (long long)h.nmulti;
  *live    = (long long)h.live;
  return err;
}
