/*
   Device kernels of MATAMBCUDA (ambkernels.cu): the AMB layout built on the device from a device CSR, the values
   refresh (a thread per stored value, from the CSR entry it holds), the products (AMB with atomics, AMB deterministic, CSR) and the small
   value kernels. Pure CUDA with a C interface, no PETSc: the glue (ambcuda.cu) fills the arguments.

   THE LAYOUT is the one of src/mat/amb/ambimpl.h (AMBLayout, the host reference built by AMBLayoutBuild_Host() in
   ambhost.c), built here with the same rules so that both give the same chunks:
     segments  g = col / W (with diagonal segments, below: g = (col - row + dshift) / W, and the columns are the
               shifted ones throughout); b (already clamped by the caller to the last segment's width) is the block width;
     pairs     one per (row, segment) with entries; per segment (ascending) the rows ascending, stable-sorted by the
               pair's block count (descending) within windows of sigma consecutive rows (sigma <= 1: no sort);
     chunks    32 consecutive pairs of a segment's list (never two segments in a chunk);
     blocking  greedy: base = first column, later columns join while col - base < b; base clamped to n - b;
               index = base - g*W (16 bits), value j at column base + j;
     storage   cs[c] = sum over c' < c of 32*b*nblk[c'];  index of block k of lane l: colidx[cs[c]/b + 32*k + l];
               value j: val[cs[c] + 32*(k*b + j) + l];  padding blocks repeat the lane's last index with values 0,
               padding lanes have index 0 and values 0.
   Beyond the host layout the device one keeps, per lane, a row code (lanerow): row r when r has entries in exactly one
   segment and its chunk is not long (the product stores y[r] with a plain store), -(r+2) when r has several segments
   or its only pair lies in a long chunk (the product adds with FP64 atomicAdd after an init pass over initrows[], the
   rows with no or several segments and the one-segment rows of long chunks), -1 for a padding lane.
   LONG CHUNKS (power-law rows: one thread per lane would walk a 50000-entry row alone while the rest of the GPU
   idles): a chunk with more than longnb blocks is summed in pieces of at most longnb blocks, the first by the lane's
   thread of the main kernel, the others (the slices slchunk/slbeg) by a second kernel; all add atomically. The stored
   layout is unchanged (same cs, colidx, val, src): only who sums which blocks. The deterministic product ignores it.

   ORDER of the deterministic product (AMBMult_Host's, bitwise): ONE running sum acc = init (0, or z[r]); for each of
   r's pairs in ascending segment order, for k, j ascending: acc = acc + val*x (each multiply and add rounded:
   __dmul_rn, __dadd_rn, no FMA); y[r] = acc. The entries are met in CSR column order and the zero fill adds exact
   zeros, so for finite x this is also the sequential CSR sum of MatMult_SeqAIJ without inodes.
   Both AMB kernels skip the terms whose stored value is 0 (zero fill, padding and explicit zeros): an Inf or NaN in x
   then reaches only the rows with a nonzero in its column, as in AIJ (AIJ would also turn an explicitly stored zero
   times Inf into NaN; these kernels add nothing for it). For finite x the skipped terms are exact zeros.

   Every function returns the first CUDA error (cudaErrorInvalidValue for bad arguments); launches nothing for empty
   work; runs on the given stream. GpukitAMBBuildCUDA() synchronises the stream (it needs sizes on the host).
*/
#pragma once

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPUKIT_AMB_C          32 /* lanes per chunk */
#define GPUKIT_AMB_CUDA_MAX_B 8  /* block widths 1..8 have a kernel each */

/* a device CSR block: m x n, nnz entries, 32-bit indices, columns sorted within each row, no duplicates */
typedef struct {
  int        m, n, nnz;
  const int *rowptr; /* m + 1 */
  const int *colidx; /* nnz */
} GpukitAMBCSR;

/* the device layout; every pointer is device memory owned by the layout (GpukitAMBLayoutFree()) */
typedef struct {
  /* parameters */
  int b, W, sigma, single; /* single: val holds floats */
  /* sizes (host copies) */
  int       m, n, nnz;
  long long npairs;  /* (row, segment) pairs = real lanes */
  long long nchunks; /* chunks */
  long long nval;    /* stored values including zero fill and padding = cs[nchunks] */
  long long ninit;   /* rows with no or several segments */
  int       maxnblk; /* the longest chunk, in blocks */
  int       longnb;  /* long-chunk limit: a lane's thread sums at most longnb blocks; the blocks of a longer chunk past
                        the first longnb go to slices of longnb blocks, each summed by its own 32 threads */
  long long nslices; /* those slices (0 when no chunk is longer than longnb) */
  /* device arrays */
  long long      *cs;       /* nchunks + 1 */
  int            *cnblk;    /* nchunks: blocks per lane in the chunk */
  int            *cxoff;    /* nchunks: first column of the chunk's segment, g*W */
  int            *cseg;     /* nchunks: the chunk's segment */
  int            *lanerow;  /* 32*nchunks: row code, see above */
  unsigned short *colidx;   /* nval / b */
  void           *val;      /* nval doubles (single: floats) */
  int            *src;      /* nval: the CSR entry each position of val holds, -1 for zero fill and padding */
  int            *initrows; /* ninit */
  int            *pairptr;  /* m + 1: the pairs of row r are pairptr[r] .. pairptr[r+1]-1, ascending segment */
  int            *pairslot; /* npairs: 32*chunk + lane of each pair */
  int            *slchunk;  /* nslices: the chunk of each slice */
  int            *slbeg;    /* nslices: its first block (its last is min(slbeg + longnb, cnblk[chunk]) - 1) */
  double          tphase[4]; /* host wall time of the build's phases, ms: pairs (to the first synchronisation), sort and
                                chunk counts (second), chunks and sizes (third), indices and sources (the end) */
  long long       dshift;    /* 0: segments of columns (g = col / W); > 0: diagonal segments, built from the columns
                                col - row + dshift (GpukitAMBDiagColumnsCUDA()); lane l of chunk c reads x at
                                cxoff[c] + index + row - dshift */
} GpukitAMBLayout;

/* DIAGONAL SEGMENTS. A stencil or FEM row's columns lie within a band around the diagonal, |col - row| < W/2, but about
   one row in three to four (fem_p1 43%, band_wide 49%, stencil7 78% at W = 65536) straddles a boundary between two
   segments of W columns: two pairs, an init pass and two atomics for the row. Segments of the shifted columns
   col - row + dshift, with dshift = a multiple of W plus W/2 (at least m + W/2), put every row whose entries satisfy
   |col - row| < W/2 in one segment. The layout is built by the same code from those columns (n + dshift of them;
   GpukitAMBDiagColumnsCUDA() writes them); the blocks are the same (b consecutive columns of a row stay consecutive),
   a lane adds its row back when it reads x, and a block's base is not clamped (its columns past n - 1 can only be
   zero fill, never read). The sums are the same terms in the same order per pair, and the deterministic product's
   order (ascending shifted column = ascending column within a row) is unchanged. */

/* colT[e] = colidx[e] - row(e) + dshift for the nnz entries of the CSR (a warp per row) */
cudaError_t GpukitAMBDiagColumnsCUDA(const GpukitAMBCSR *csr, long long dshift, int *colT, cudaStream_t stream);

/* Builds the structure of L (sizes, cs, cnblk, cxoff, cseg, lanerow, colidx, src, initrows, pairptr, pairslot) from the
   CSR; val is allocated, not filled (GpukitAMBRefreshCUDA() writes every entry of it). b in 1..8 and b <= width of the
   last segment, W a power of 2 in 32..65536, sigma 0, 1 or a multiple of 32 dividing W. L must be zeroed or freed before.
   longnb: the long-chunk limit in blocks (>= 1), 0 chooses max(GPUKIT_AMB_LONG_MIN, 8 x the mean blocks per pair).
   Synchronises the stream. Temporary memory from the library's pool (src/sys/gpukitpool.h).
   dshift: 0, or the CSR holds diagonal-segment columns (GpukitAMBDiagColumnsCUDA() with this dshift; csr->n is then the
   original n + dshift) and L is built for them. */
cudaError_t GpukitAMBBuildCUDA(const GpukitAMBCSR *csr, int b, int W, int sigma, int single, int longnb, long long dshift, GpukitAMBLayout *L, cudaStream_t stream);
#define GPUKIT_AMB_LONG_MIN 128 /* the automatic long-chunk limit is at least this many blocks */

/* gives the device arrays of L back to the library's pool after the work enqueued on stream, and zeroes it */
cudaError_t GpukitAMBLayoutFree(GpukitAMBLayout *L, cudaStream_t stream);

/* the values of L from the CSR values a (nnz, device): val[s] = a[src[s]], 0 where src[s] < 0 (rounded to float with
   single); a thread per stored value, coalesced writes */
cudaError_t GpukitAMBRefreshCUDA(const GpukitAMBLayout *L, const double *a, cudaStream_t stream);

/* y = A x (z NULL) or y = z + A x (z may be y) with the AMB layout. deterministic 0: one thread per lane (at most
   longnb blocks; the rest of a long chunk by the tail kernel over the slices), plain stores for one-segment rows and
   FP64 atomics for the others (after an init pass over initrows when ninit > 0);
   1: one thread per row over its pairs in the host order (bitwise equal to AMBMult_Host for double values).
   block: threads per block, a multiple of 32 in 32..1024. */
cudaError_t GpukitAMBMultCUDA(const GpukitAMBLayout *L, const double *x, const double *z, double *y, int block, int deterministic, cudaStream_t stream);

/* for each b = 1..8: sum over the (row, segment) pairs of the pair's block count, in blk[b-1] (host array of 8), and the
   number of pairs in *npairs, the rows of more than 1024 entries in *nlong; W as above. Synchronises the stream. (The
   traffic model's input.) */
cudaError_t GpukitAMBBlockCountsCUDA(const GpukitAMBCSR *csr, int W, long long blk[8], long long *npairs, long long *nlong, cudaStream_t stream);

/* lanes per row of gpukit's CSR kernel (GpukitAMBCSRK below) from the mean row length: about four entries a lane */
int GpukitAMBCSRThreadsPerRow(long long m, long long nnz);

/* d[i] = A(i, i) for the m rows (0 where the entry is absent or i >= n) */
cudaError_t GpukitAMBDiagonalCUDA(const GpukitAMBCSR *csr, const double *a, double *d, cudaStream_t stream);
/* a[(i,i)] += s for i < min(m, n); *dmissing (device int, may be NULL) counts the rows without a diagonal entry */
cudaError_t GpukitAMBShiftCUDA(const GpukitAMBCSR *csr, double *a, double s, int *dmissing, cudaStream_t stream);
/* a[e] *= s, e < n */
cudaError_t GpukitAMBScaleCUDA(long long n, double *a, double s, cudaStream_t stream);

/* SELL-32 of a device CSR: the short-row candidate the glue times against the CSR fallback and the AMB layout (through
   cuSPARSE's sliced ELLPACK SpMV, CUSPARSE_SPMV_SELL_ALG1, or gpukit's own kernel below). Slice s holds rows
   32s .. 32s+31 in their order (no sorting), width w_s = its longest row; entry k of lane l at off[s] + 32*k + l
   (column-major in the slice), padding entries have column -1 and value 0 (the convention cuSPARSE requires). 32-bit
   offsets: nval = off[nslices] must be below 2^31. Arrays from the library's pool. */
typedef struct {
  int       m, n, nnz;
  long long nslices, nval;
  int      *off;   /* nslices + 1 */
  int      *col;   /* nval */
  double   *val;   /* nval FP64 values (cuSPARSE's SELL, the FP64 kernel), or NULL: GpukitAMBSellAllocValues() */
  float    *val32; /* nval FP32 values (the kernel with -mat_amb_values single), or NULL */
} GpukitAMBSell;

/* the stored entries SELL-32 would have (padding included) without building it; synchronises the stream */
cudaError_t GpukitAMBSellSizeCUDA(const GpukitAMBCSR *csr, long long *nval, cudaStream_t stream);
/* builds the structure of S (off, col) from the CSR (no value array: GpukitAMBSellAllocValues(), then
   GpukitAMBSellRefreshCUDA() fills them); cudaErrorInvalidValue when nval would reach 2^31; synchronises once (the size) */
cudaError_t GpukitAMBSellBuildCUDA(const GpukitAMBCSR *csr, GpukitAMBSell *S, cudaStream_t stream);
/* allocates the FP32 (single) or FP64 value array of S when it is missing (*fresh: it was; its values need a refresh) */
cudaError_t GpukitAMBSellAllocValues(GpukitAMBSell *S, int single, int *fresh, cudaStream_t stream);
/* frees the FP32 (single) or FP64 value array of S */
cudaError_t GpukitAMBSellFreeValues(GpukitAMBSell *S, int single, cudaStream_t stream);
/* the values of S from the CSR values a (nnz, device): every slot of each allocated value array, padding set to 0 (FP32:
   rounded to nearest) */
cudaError_t GpukitAMBSellRefreshCUDA(const GpukitAMBCSR *csr, const GpukitAMBSell *S, const double *a, cudaStream_t stream);
/* y = A x (z NULL) or y = z + A x (z may be y): one thread per row, one running sum acc = 0 or z[r], then acc + a*x in
   CSR order, each operation rounded (no FMA): bitwise AMBMult_Host's and the sequential CSR sum (deterministic). single:
   the FP32 values (each widened to FP64 exactly before its product), else the FP64 ones */
cudaError_t GpukitAMBSellMultCUDA(const GpukitAMBSell *S, int single, const double *x, const double *z, double *y, int block, cudaStream_t stream);

/* gpukit's own CSR product (the "csrk" layout): the device CSR's structure, its FP64 values or an FP32 copy (val32),
   vectors and sums in FP64. Rows of at most longlen entries: TPR lanes per row (TPR from the mean row length, about
   four entries a lane; longlen = 32 TPR, at least 128), a row's lanes summed by shuffles, one plain store per row. The
   longer rows (power-law and circuit rows of 10^4-10^5 entries; a row of 442649 on one warp took longer than the whole
   product of the rest): chunks of GPUKIT_AMB_CSRK_CHUNK entries, one thread block each, summed in the block and added
   with one FP64 atomic per chunk after the short-row kernel stored 0 or z[r] there. Not deterministic when long rows
   exist (the chunks' order of the atomics), except when built deterministic: then a long row is one chunk, one block
   sums it in a fixed order and adds it with a plain store (bitwise repeatable, one block on a row of 10^5 entries) */
#define GPUKIT_AMB_CSRK_CHUNK 4096
typedef struct {
  int        m, nnz, tpr, longlen;
  int        nlong;    /* rows of more than longlen entries */
  long long  nchunks;  /* their chunks: blocks of the long-row kernel */
  int        det;      /* one chunk per long row, no atomics */
  int       *longrow;  /* nlong (capacity nnz / longlen + 1) */
  long long *chstart;  /* capacity + 1: first chunk of each long row (exclusive scan) */
  float     *val32;    /* nnz FP32 values (single), or NULL */
} GpukitAMBCSRK;

/* the long-row lists of K from the CSR (one synchronisation: the counts); tpr lanes per row (1, 2, 4, 8, 16, 32; 0: from
   the mean row length); rows of more than longlen entries are long (0: 32 tpr, at least 128); single: val32 allocated
   (filled by GpukitAMBCSRKRefreshCUDA()); det: deterministic (above) */
cudaError_t GpukitAMBCSRKBuildCUDA(const GpukitAMBCSR *csr, int tpr, int longlen, int single, int det, GpukitAMBCSRK *K, cudaStream_t stream);
/* val32[e] = (float)a[e] (nothing without val32) */
cudaError_t GpukitAMBCSRKRefreshCUDA(const GpukitAMBCSRK *K, const double *a, cudaStream_t stream);
/* y = A x (z NULL) or y = z + A x (z may be y): with K's val32 when it has one, else with a (the FP64 CSR values) */
cudaError_t GpukitAMBCSRKMultCUDA(const GpukitAMBCSR *csr, const GpukitAMBCSRK *K, const double *a, const double *x, const double *z, double *y, cudaStream_t stream);
cudaError_t GpukitAMBCSRKFree(GpukitAMBCSRK *K, cudaStream_t stream);
cudaError_t GpukitAMBSellFree(GpukitAMBSell *S, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
