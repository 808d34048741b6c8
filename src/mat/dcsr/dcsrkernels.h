/*
   Device kernels of MATDCSRCUDA: pure CUDA (CUB for sorts and scans, work arrays from gpukit's stream-ordered pool,
   src/sys/gpukitpool.h) with a C interface, no PETSc. The glue
   (dcsrcuda.cu) mirrors Mat_SeqDCSR's arrays (dcsrimpl.h) on the device by plain copies, so the layout and the
   invariants I1..I7 of dcsrimpl.h are the ones here:
     row r = its nseg[r] segments s; segment s of row r holds colidx/values[segstart[r*K+s] .. + seglen[r*K+s])
     with segcap[r*K+s] >= seglen slots reserved; every segment sorted by strictly increasing column; no column twice
     in a row; segments disjoint and below used <= cap; rowlen[r] = sum of the row's seglen.
   Types: PetscInt arrays are int (MATDCSRCUDA needs 32-bit PetscInt), PetscCount arrays long long, values double.

   The host functions they must agree with (dcsrinsert.c / dcsr.c, H3): DCSRFindEntry_Private() (a hit),
   DCSRInsertRow_Private() (INSERT overwrites, ADD adds; a new entry goes to the row's last segment when it has room,
   else to a new bump-allocated segment of capacity max(needed, ceil(slack*rowlen), minseg)), DCSRDefragment_Private()
   (one sorted segment per row, rows in row order, capacity len + ceil(slack*len)), MatMult_SeqDCSR().

   A batch of entries (i, j, v) goes in four steps, each all-or-nothing for the matrix:
     GpukitDCSRBatchValidate  every index in range (negative ones are ignored, as MatSetValues does); nothing written
     GpukitDCSRBatchCreate    sort by (row, column) on the device (stable: duplicates keep their order), reduce the
                              duplicates (INSERT: the last one wins; ADD: their sum, in order), find the hits (entries
                              already stored) and group the rest by row; nothing written in the matrix
     GpukitDCSRBatchPlan      the allocation kernel: per row that gets new entries, either room in its last segment,
                              or ONE atomicAdd on the bump pointer for a new segment; a row that would exceed K
                              segments, or a segment beyond cap, raises a flag instead of writing anything (the caller
                              then defragments or grows, GpukitDCSRDefragment with the batch's rows as extra room, and
                              plans again); the bump pointer is put back by the caller when a flag is raised
     GpukitDCSRBatchApply     the hits (INSERT/ADD), then the insertion kernel: per row, a sorted merge into the last
                              segment or the new segment written sorted, and the segment table
   Every function returns a CUDA error code (cudaErrorMemoryAllocation when the device has no room for the work space,
   with the matrix unchanged); the ones that return host results synchronise the stream.
*/
#pragma once

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* the device mirror of one Mat_SeqDCSR */
typedef struct {
  int        m, n, K;
  long long *segstart;         /* [m*K] */
  int       *seglen, *segcap;  /* [m*K] */
  int       *nseg, *rowlen;    /* [m] */
  int       *colidx;           /* [cap] from the pool (GpukitPoolMalloc/GpukitPoolFree): GpukitDCSRDefragment() swaps them */
  double    *values;           /* [cap] from the pool */
  long long  used, cap;        /* host copies of the bump pointer and the capacity */
  unsigned long long *dused;   /* [1] the bump pointer on the device (the allocation kernel's atomic) */
} GpukitDCSRDev;

/* the first index out of range of a batch: entry (-1: none) and its indices as given */
typedef struct {
  long long entry;
  long long row, col;
} GpukitDCSRBad;

/* what a batch holds and what its plan found (host copies) */
typedef struct {
  long long nvalid;   /* entries with non-negative indices */
  long long nunique;  /* distinct (row, column) among them */
  long long nnew;     /* of which not stored yet */
  long long nrows;    /* rows touched */
  long long nrowsnew; /* rows that get new entries */
  /* from GpukitDCSRBatchPlan */
  long long segfull;  /* rows that would need more than K segments */
  long long capfull;  /* rows whose new segment would end beyond cap */
  long long need;     /* slots the new segments asked for */
  long long newmulti; /* rows going from one to two segments */
  int       maxnseg;  /* the largest segment count after the batch */
} GpukitDCSRBatchInfo;

typedef struct _p_GpukitDCSRBatch *GpukitDCSRBatch;

/* bytes of device work space per batch entry that GpukitDCSRBatchCreate() needs (an upper bound) */
long long GpukitDCSRBatchBytesPerEntry(void);

/* rows must lie in [rstart, rstart + m) and columns in [cstart, cstart + n) (negative ones are skipped) */
cudaError_t GpukitDCSRBatchValidate(const GpukitDCSRDev *A, long long nent, const int *i, const int *j, long long rstart, long long cstart, GpukitDCSRBad *bad, cudaStream_t stream);
/* add = 1: ADD_VALUES, 0: INSERT_VALUES; v may be NULL (zeros); dropzero = 1: a new entry whose (reduced) value is 0
   off the diagonal is dropped (MAT_IGNORE_ZERO_ENTRIES). bad not NULL: the batch is validated as by
   GpukitDCSRBatchValidate() in the same pass (no extra synchronisation); when an index is out of range, bad->entry is
   the first such entry, *b is NULL and cudaSuccess is returned (nothing written). bad NULL: entries out of range are
   skipped like negative ones (the caller checked them). */
cudaError_t GpukitDCSRBatchCreate(const GpukitDCSRDev *A, long long nent, const int *i, const int *j, const double *v, long long rstart, long long cstart, int add, int dropzero, GpukitDCSRBad *bad, GpukitDCSRBatch *b, GpukitDCSRBatchInfo *info, cudaStream_t stream);
/* insertnew = 0: new entries are dropped (MAT_NEW_NONZERO_LOCATIONS false), only the hits are applied */
cudaError_t GpukitDCSRBatchPlan(GpukitDCSRDev *A, GpukitDCSRBatch b, int insertnew, double slack, int minseg, GpukitDCSRBatchInfo *info, cudaStream_t stream);
/* extra[r] = new entries of row r in the batch (extra must hold m ints), for GpukitDCSRDefragment() */
cudaError_t GpukitDCSRBatchRowExtra(const GpukitDCSRDev *A, GpukitDCSRBatch b, int *extra, cudaStream_t stream);
/* after a defragmentation the slots of the hits moved: find them again (hits stay hits, new entries stay new) */
cudaError_t GpukitDCSRBatchRelocate(const GpukitDCSRDev *A, GpukitDCSRBatch b, cudaStream_t stream);
cudaError_t GpukitDCSRBatchApply(GpukitDCSRDev *A, GpukitDCSRBatch b, int insertnew, cudaStream_t stream);
cudaError_t GpukitDCSRBatchDestroy(GpukitDCSRBatch *b);

/* buffers that a defragmentation reuses instead of allocating: the ones the previous defragmentation replaced (pool
   memory; colidx/values NULL: none); the caller owns them (GpukitPoolFree()) */
typedef struct {
  int      *colidx;
  double   *values;
  long long cap;
} GpukitDCSRSpare;

/* What a defragmentation with no extra room needs to know before it compacts, when the host knows it already: from
   GpukitDCSRSegmentStats() of the same structure (row lengths) and slack. With it the defragmentation reads nothing
   back (no synchronisation). */
typedef struct {
  double    slack;   /* the slack the sizes are for */
  long long total;   /* the sum over the rows of the capacity the defragmentation gives them */
  long long nlong;   /* rows the compaction moves a grid of blocks each (longer than its long-row length) */
  long long maxlong; /* the longest of them (0: none) */
} GpukitDCSRDefragHint;

/* Every row to one sorted segment, in row order, with capacity rowlen + max(ceil(slack*rowlen), extra[r]) (extra may be
   NULL), into new buffers of capacity max(total, mincap) (total: the sum of the row capacities; *grew says whether
   that exceeds the old cap). The new buffers are spare's when it holds at least that capacity (no allocation), else
   from the pool (spare's then go back to it); the old buffers become the spare (spare not NULL) or go back to the
   pool (stream-ordered). A scan of the row capacities, one read-back (one synchronisation; none with a hint for this
   slack when extra is NULL, whose sizes are then trusted: they must be those of this structure), the long rows moved by a
   grid of blocks each, the others a warp per 32 consecutive rows. On a failed allocation A is unchanged. rowptr not
   NULL ([m+1]): the new row starts, rowptr[m] the total (with slack 0 and no extra, the row pointers of a plain CSR),
   and zero (not NULL, [m+1]) zeroed (the CSR base's marks and count), both only when the total is at most INT_MAX
   (A->used tells). The compaction kernel also writes the allocator's count (A->dused): no launch of its own. */
cudaError_t GpukitDCSRDefragment(GpukitDCSRDev *A, double slack, const int *extra, const GpukitDCSRDefragHint *hint, long long mincap, double capfactor, GpukitDCSRSpare *spare, int *grew, int *rowptr, int *zero, cudaStream_t stream);

/* The CSR base (MATDCSRCUDA's product when the layout was plain CSR, dcsrcudaimpl.h): rowptr[m+1] of that layout stays
   the place of every row's first segment while batches add segments. After a batch's insertion GpukitDCSRBaseMark
   gives each row with new entries a place in the tail table once (dirty[r] = place + 1, *dcount places; the rows of a
   warp take consecutive places in row order) and writes its record there: trow[place] = r and tpiece[place] = up to two
   pieces (start, length) of its entries outside the base range, w = -1 when it has more pieces or more than
   GPUKIT_DCSR_TAIL_LONG entries. The product is cuSPARSE's CSR product over the base plus GpukitDCSRBaseFixup: y[r] +=
   the pieces of each record, a group of lanes (1, 2, 4 or 8) per record in table order, grid-stride over *dcount (read on the
   device: no synchronisation; nmax bounds it); the w = -1 rows by a whole warp each, over the row's segment table. The
   starts are 32-bit: the buffer must hold at most INT_MAX slots */
#define GPUKIT_DCSR_TAIL_LONG 64
/* whether the layout is plain CSR (every nonempty row one segment, the rows back to back from slot 0, e.g. after the
   first assembly into exact preallocation): rowptr[m+1] gets the scan of the row lengths, *bad (device) is set to 1 where
   a row breaks it (the caller zeroes it first and reads it back); the buffer must hold at most INT_MAX slots */
cudaError_t GpukitDCSRPlainCheck(const GpukitDCSRDev *A, int *rowptr, int *bad, cudaStream_t stream);
cudaError_t GpukitDCSRBaseMark(const GpukitDCSRDev *A, GpukitDCSRBatch b, const int *rowptr, int *dirty, int *trow, int4 *tpiece, int *dcount, cudaStream_t stream);
cudaError_t GpukitDCSRBaseFixup(const GpukitDCSRDev *A, const int *rowptr, const int *trow, const int4 *tpiece, const int *dcount, long long nmax, int lanes, const double *x, double *y, cudaStream_t stream);

/* row lengths -> bins of the product: bins 0..GPUKIT_DCSR_NBINS-1 hold the rows of length <= 4, 5..32, 33..256 and
   more (threads per row tuned by bin), the long bin GPUKIT_DCSR_NBINS the rows longer than longrow (>= 1; a block of
   threads per row; it takes precedence); perm[] (m ints) lists the rows bin by bin, in row order inside a bin;
   rowst/rowln[] (m ints each, in the order of perm) the start and length of each row that has one segment (0, 0 for
   an empty row; length -1: several segments, or a buffer of more than INT_MAX slots: read through the segment
   table); binstart[GPUKIT_DCSR_NBINS_ALL + 1] (host) where each bin starts; maxlen (host) the longest row; nnz (host)
   the stored entries. One synchronisation. */
#define GPUKIT_DCSR_NBINS     4
#define GPUKIT_DCSR_NBINS_ALL (GPUKIT_DCSR_NBINS + 1)
#define GPUKIT_DCSR_LONG_ROW  256 /* the default longrow */
cudaError_t GpukitDCSRBinRows(const GpukitDCSRDev *A, long long longrow, int *perm, int *rowst, int *rowln, long long binstart[], long long *maxlen, long long *nnz, cudaStream_t stream);

/* the row table rowst/rowln of GpukitDCSRBinRows() again for the same perm (the rows' lengths, hence their bins, did not
   change: e.g. after a defragmentation); no synchronisation */
cudaError_t GpukitDCSRRowTable(const GpukitDCSRDev *A, const int *perm, int *rowst, int *rowln, cudaStream_t stream);

/* The long bin split by entries: a row of the long bin (rows = perm + binstart[GPUKIT_DCSR_NBINS], nlong of them) gets
   ceil(rowlen / GPUKIT_DCSR_LONG_CHUNK) blocks, each summing GPUKIT_DCSR_LONG_CHUNK consecutive entries of the row (in
   the order of its segments), so that one row of 50000 entries no longer runs on one block while the rest of the GPU
   idles. lchunk[g] (nlong + 1 ints): the first chunk of long row g, lchunk[nlong] = *nchunk. One synchronisation. */
#define GPUKIT_DCSR_LONG_CHUNK 2048
cudaError_t GpukitDCSRLongChunks(const GpukitDCSRDev *A, long long nlong, const int *rows, int *lchunk, long long *nchunk, cudaStream_t stream);

/* z = A x (y NULL) or z = y + A x (y may be z): the rows of bin b < GPUKIT_DCSR_NBINS by groups of tpr[b] threads (1,
   2, 4, 8, 16, 32), those of the long bin by a block each (lchunk NULL) or, with lchunk/nchunk from
   GpukitDCSRLongChunks(), by nchunk blocks writing partial sums to lpart[nchunk] that a second kernel adds per row in a
   fixed order; no atomics, z[r] written once, the result does not depend on the scheduling. perm, rowst, rowln,
   binstart from GpukitDCSRBinRows() on the current structure */
cudaError_t GpukitDCSRMultCUDA(const GpukitDCSRDev *A, const int *perm, const int *rowst, const int *rowln, const long long binstart[], const int tpr[], const int *lchunk, long long nchunk, double *lpart, const double *x, const double *y, double *z, cudaStream_t stream);
/* the same product in one launch (DCSRMultFusedKernel): the bins' groups and the long bin's chunks; the last chunk block
   of a long row adds the row's partial sums in a fixed order (lcount: nlong ints, zero on entry, left zero). Falls back
   on GpukitDCSRMultCUDA() when the long bin has no chunks */
cudaError_t GpukitDCSRMultFusedCUDA(const GpukitDCSRDev *A, const int *perm, const int *rowst, const int *rowln, const long long binstart[], const int tpr[], const int *lchunk, long long nchunk, double *lpart, int *lcount, const double *x, const double *y, double *z, cudaStream_t stream);
/* The row-order product ("rows") of a block whose rows ALL have at most one segment and whose buffer has at most
   INT_MAX slots. Its view: view[r] = (start, length) of row r in row order (m int2; (0, 0) for an empty row, (0, -1)
   for a row of several segments). GpukitDCSRRowsView() rebuilds it from the segment table: multi NULL, no
   synchronisation (the caller knows that every row has at most one segment); multi not NULL, *multi = 1 when some row
   has several segments (one synchronisation). cudaErrorInvalidValue when cap > INT_MAX. */
cudaError_t GpukitDCSRRowsView(const GpukitDCSRDev *A, int2 *view, int *multi, cudaStream_t stream);
/* z = A x (y NULL) or z = y + A x (y may be z) through the view, in ONE launch: the rows of length <= longrow by groups
   of tpr lanes (1, 2, 4, 8, 16, 32) in row order (z written coalesced), the long bin's rows (perm, rowst, rowln,
   binstart, lchunk, nchunk, lpart, lcount of GpukitDCSRBinRows()/GpukitDCSRLongChunks(), the same longrow) by their
   chunks as in GpukitDCSRMultFusedCUDA() (same fixed order of the partial sums). No atomics besides the chunk counters,
   z[r] written once, the result does not depend on the scheduling. The view must be current; it is meant for blocks
   whose rows all have at most one segment (a row of several, view length -1, is still summed right, through the segment
   table). */
cudaError_t GpukitDCSRMultRowsCUDA(const GpukitDCSRDev *A, const int2 *view, int tpr, long long longrow, const int *perm, const int *rowst, const int *rowln, const long long binstart[], const int *lchunk, long long nchunk, double *lpart, int *lcount, const double *x, const double *y, double *z, cudaStream_t stream);
/* The CSR base's own product, the alternative to cuSPARSE's product plus GpukitDCSRBaseFixup(): z = A x (y NULL) or
   z = y + A x (y may be z) in ONE launch. A warp takes 32 consecutive rows: their base entries (less the long rows') as
   one coalesced stream through shared memory, 512 at a time, each lane adding its row's products in order (CSR-stream);
   then each lane adds its row's tail if it is marked (dirty[r] != 0: its tail record's pieces, or, w = -1, its segments
   less the base part) and writes z[r] once (no read-modify-write of y). The base rows longer than L->longrow are summed
   by chunks of GPUKIT_DCSR_LONG_CHUNK entries, a block each; the last chunk block of a row adds the partial sums in a
   fixed order and then the row's tail. No atomics besides the chunk counters; the result does not depend on the
   scheduling. L describes the long base rows (GpukitDCSRBaseLongCount()/GpukitDCSRBaseLongFill(), for this base and
   longrow); the buffer must hold at most INT_MAX slots. */
typedef struct {
  long long longrow;                    /* base rows longer than this are the chunks' */
  long long nlong, nchunk;              /* long base rows, their chunks */
  int      *lrow, *lst, *lln, *lchunk;  /* [nlong] row, base start, base length; [nlong + 1] first chunk */
  int      *lcount;                     /* [nlong] done chunks per row (zero, left zero) */
  double   *lpart;                      /* [nchunk] the chunks' partial sums */
} GpukitDCSRBaseLong;
cudaError_t GpukitDCSRMultBaseStreamCUDA(const GpukitDCSRDev *A, const int *rowptr, const int *dirty, const int4 *tpiece, const GpukitDCSRBaseLong *L, const double *x, const double *y, double *z, cudaStream_t stream);
/* the long base rows: Count (work: 4 (m + 1) ints of scratch) gives their number and their chunks (one
   synchronisation); the caller allocates L's arrays for them and Fill (the same work, not touched in between) writes
   them and zeroes lcount */
cudaError_t GpukitDCSRBaseLongCount(int m, const int *rowptr, long long longrow, int *work, long long *nlong, long long *nchunk, cudaStream_t stream);
cudaError_t GpukitDCSRBaseLongFill(int m, const int *rowptr, const int *work, GpukitDCSRBaseLong *L, cudaStream_t stream);
/* z += A^T x (z holds y, or zeros, on entry; atomics: the order of the sums is not fixed) */
cudaError_t GpukitDCSRMultTransposeAddCUDA(const GpukitDCSRDev *A, const double *x, double *z, cudaStream_t stream);
/* d[r] = A(r, r + coff) for the m rows (0 where not stored) */
cudaError_t GpukitDCSRGetDiagonalCUDA(const GpukitDCSRDev *A, long long coff, double *d, cudaStream_t stream);
/* values[0 .. used) *= a */
cudaError_t GpukitDCSRScaleCUDA(GpukitDCSRDev *A, double a, cudaStream_t stream);
/* i[r] = r + rstart, j[r] = r + cstart for r < nrows (a device batch of the diagonal) */
cudaError_t GpukitDCSRFillDiagonalBatchCUDA(long long nrows, long long rstart, long long cstart, double a, int *i, int *j, double *v, cudaStream_t stream);
/* the largest nseg, the number of rows with more than one segment and the slots the segments reserve (sum of segcap);
   dcount not NULL: the device int *dcount is read back with them into *hcount (one synchronisation for both); hint not
   NULL: what GpukitDCSRDefragment() with this slack and no extra room needs to know */
cudaError_t GpukitDCSRSegmentStats(const GpukitDCSRDev *A, const int *dcount, int *hcount, double slack, GpukitDCSRDefragHint *hint, int *maxnseg, long long *nmulti, long long *live, cudaStream_t stream);
/* the mean over the rows of (the row's largest column - its smallest), 0 for an empty row: the tuners' locality class
   (GpukitTuneShapeAppendSpan()); one synchronisation */
cudaError_t GpukitDCSRMeanRowSpan(const GpukitDCSRDev *A, double *mean, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
