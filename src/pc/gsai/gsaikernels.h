/*
   Device kernels of PCGSAI's set-up: pure CUDA with a C interface, no PETSc. The PETSc glue (gsaicuda.cu)
   owns the arrays and the order of the steps; the host reference of every step is in gsaipattern.c and gsaisolve.c:
     GpukitGSAISelectCUDA()      - threshold, lower part, cap of each row (GSAIAddThresholdedRow(), GSAIPatternRows())
     GpukitGSAIUnionCUDA()       - one level of the power pattern (GSAIPatternRows())
     GpukitGSAIHeldRowsCUDA()    - several ranks: the rows of B a rank holds, from its device blocks and fetched rows
     GpukitGSAISplitCUDA()       - several ranks: J split into M's diagonal and off-diagonal blocks
     GpukitGSAIPlanCUDA()        - |I| of every row, its size class and workspace
     GpukitGSAISolveSmallCUDA()  - the local problems of the small class, one warp each, in shared memory
     GpukitGSAISolveLargeCUDA()  - the others, one block each, in a global workspace (in batches)
   Both solves do Householder QR least squares or FSAI Cholesky with the documented fallback to the diagonal
   (GSAILeastSquares(), GSAICholeskyRow(), GSAISolveRows()). The steps that are not GSAI's own come from the library:
   the transpose B = A^T and M = N^T's structure, the permutations of values and the row pointers from row lengths
   (src/mat/utils/gpukitcsropskernels.h), the device memory (src/sys/gpukitpool.h: a stream-ordered pool, so that a
   new set-up reuses the memory of the previous one instead of calling cudaMalloc()/cudaFree()).
   Matrices are CSR with int indices, sorted columns, double values, all on the device. Every function returns the
   first CUDA error (cudaErrorInvalidValue for bad arguments). Only the functions that say so synchronise the stream;
   the others only enqueue work on it.
*/
#pragma once

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* small class: at most GPUKIT_GSAI_WARP_MAX pattern entries and a dense problem of at most GPUKIT_GSAI_SMALL_WS
   doubles: one warp per row, the problem in shared memory. Large class: one block of GPUKIT_GSAI_BLOCK_THREADS
   threads per row; huge class (n1 n2 at least GPUKIT_GSAI_HUGE_WORK): one block of GPUKIT_GSAI_HUGE_THREADS. */
#define GPUKIT_GSAI_WARP_MAX      32
#define GPUKIT_GSAI_SMALL_WS      2048
#define GPUKIT_GSAI_BLOCK_THREADS 128
#define GPUKIT_GSAI_HUGE_THREADS  512
#define GPUKIT_GSAI_HUGE_WORK     32768
/* the block sizes GpukitGSAISolveLargeCUDA() can run for the large and the huge class (the run-time tuner's candidates;
   the two above are its starting values). The huge class applies the reflectors a panel at a time. */
#define GPUKIT_GSAI_LARGE_NT {64, 128, 256}
#define GPUKIT_GSAI_HUGE_NT  {256, 512}
/* pivots below this fraction of the largest fall back to the diagonal: keep equal to GSAI_RCOND_TOL (gsaiimpl.h) */
#define GPUKIT_GSAI_RCOND_TOL 1.0e-12

/* per-row status after the solve: 0 solved, 1 fell back to the diagonal, GPUKIT_GSAI_FAIL + kind no fallback,
   with kind as GSAIFailureKind in gsaiimpl.h (1 empty row, 2 structurally singular, 3 singular with zero
   diagonal, 4 not SPD) */
#define GPUKIT_GSAI_FALLBACK 1
#define GPUKIT_GSAI_FAIL     10

/* What the host needs to know of a set-up, gathered on the device and read with GpukitGSAIInfoGet() */
typedef struct {
  long long wtotal;    /* workspace of the large and huge classes, doubles */
  double    flops;     /* of the local problems, an estimate (small rows: from the bound of n1) */
  int       nnzj;      /* entries of the pattern J */
  int       jdiffers;  /* GpukitGSAISamePatternCUDA(): 1 when J is not the pattern of B */
  int       ns, nl, nh;                      /* rows in the small, large and huge classes */
  int       smallws;                         /* shared memory of the small class, doubles per warp */
  int       maxn1, maxn2;                    /* largest |I| (spd: |J|) and |J| */
  int       nfallback;                       /* rows that fell back to the diagonal */
  int       failrow;                         /* first row with no fallback, INT_MAX if none */
} GpukitGSAIInfo;

/* zero *dinfo (failrow INT_MAX) */
cudaError_t GpukitGSAIInfoInit(GpukitGSAIInfo *dinfo, cudaStream_t stream);
/* *hinfo = *dinfo, then synchronise the stream */
cudaError_t GpukitGSAIInfoGet(const GpukitGSAIInfo *dinfo, GpukitGSAIInfo *hinfo, cudaStream_t stream);

typedef struct {
  int    threshold; /* 0: every stored entry is a candidate; 1: only |a| > (1 - tau) max |a| of the row */
  double tau;
  int    lower; /* only columns below the row (spd) */
  int    cap;   /* 0, or the largest row length, diagonal included: the diagonal and the cap-1 candidates of largest
                       weight (compared in single precision, ties to the smaller column) */
  int    coff;  /* the diagonal of row k is column k + coff: 0 for a square matrix; the rows of B held by one of
                       several ranks (their columns numbered from -u0, the first local row's number) use -u0 */
} GpukitGSAISelectArgs;

/* Row k of the result: the diagonal (always, column k + a->coff, weight w or |a| of the stored diagonal, else 0) and
   the selected candidates of row k of (ptr, col, val), in increasing column order (columns may be negative). Weights are w, or |val| when w is NULL.
   With optr NULL: cnt[k] = the row length. Otherwise: ocol (and ow when not NULL) filled at optr[k]. */
cudaError_t GpukitGSAISelectCUDA(int n, const int *ptr, const int *col, const double *val, const double *w, const GpukitGSAISelectArgs *a, int *cnt, const int *optr, int *ocol, double *ow, cudaStream_t stream);

/* Row k of the result: the union of the rows T(j,:) over j in S(k,:), in increasing column order, with weight
   sum_j sw_j tw_jm (when sw, tw and ow are not NULL). With optr NULL: cnt[k] = its length. Otherwise: ocol (and
   ow) filled at optr[k]. cur: scratch of sptr[n] ints. */
cudaError_t GpukitGSAIUnionCUDA(int n, const int *sptr, const int *scol, const double *sw, const int *tptr, const int *tcol, const double *tw, int *cur, int *cnt, const int *optr, int *ocol, double *ow, cudaStream_t stream);

/* dinfo->jdiffers = 1 unless (jptr, jcol) is the pattern (bptr, bcol) (n rows, nnzb entries; jcol holds at least
   min(jptr[n], nnzb) entries) */
cudaError_t GpukitGSAISamePatternCUDA(int n, int nnzb, const int *bptr, const int *bcol, const int *jptr, const int *jcol, GpukitGSAIInfo *dinfo, cudaStream_t stream);

/* The rows of B that one of several ranks holds, as one CSR over the compact numbers of their columns shifted by -u0
   (the rank's n own rows are rows u0 .. u0+n-1, their diagonal block's columns 0 .. n-1; nu rows in all, those not
   held empty): the own rows from the device CSR of B's diagonal block (di, dj, da) and off-diagonal block (oi, oj,
   oa, all NULL when it is empty; column c is gmap[c], gmap increasing), merged in column order (the blocks' rows must
   be sorted by column, as a GpukitDeviceCSR's are: nothing checks it here); the other ranks' ns
   rows copied from (sptr, scol, sval) into the rows srow. With bptr NULL: len[u] = the length of row u (nu entries).
   Otherwise bcol and bval filled at bptr. */
cudaError_t GpukitGSAIHeldRowsCUDA(int nu, int u0, int n, const int *di, const int *dj, const double *da, const int *oi, const int *oj, const double *oa, const int *gmap, int ns, const int *srow, const int *sptr, const int *scol, const double *sval, int *len, const int *bptr, int *bcol, double *bval, cudaStream_t stream);

/* Several ranks, M with the local rows of N (left, spd): J (n rows, columns in the shifted compact numbers above, the
   own ones 0 .. n-1) split into M's diagonal block (the own columns) and off-diagonal block (the others), in J's order
   within each. With dptr NULL: dcnt[k], ocnt[k] = the entries of row k in each. Otherwise dcol (the own columns) and
   ocol (J's columns) filled at dptr[k] and optr[k], and perm: perm[dptr[k] + t] = the position in J of the t-th
   diagonal-block entry of row k, perm[nd + optr[k] + t] that of its t-th off-diagonal one (nd = dptr[n]). */
cudaError_t GpukitGSAISplitCUDA(int n, const int *jptr, const int *jcol, int *dcnt, int *ocnt, const int *dptr, const int *optr, int nd, int *dcol, int *ocol, int *perm, cudaStream_t stream);

/* the local problems of the rows of N */
typedef struct {
  int           n;           /* rows */
  int           spd;         /* 0: least squares min ||B(J,:)^T x - e_k||; 1: FSAI row from A(J,J) */
  const int    *bptr, *bcol; /* B (A for spd) */
  const double *bval;
  const int    *jptr, *jcol; /* the pattern J of every row */
  int          *n1;          /* general, from GpukitGSAIPlanCUDA(): |I| of every row of the large classes; for the
                                small class an upper bound of |I|, the leading dimension of its C */
  long long    *woff;        /* n+1: workspace offset of every row, in doubles (GpukitGSAIPlanCUDA()) */
  int          *cur;         /* scratch: jptr[n] ints */
  int          *pos;         /* scratch: n ints, the position of k in I (large classes) */
} GpukitGSAIProblem;

/* The size classes (cls: n ints of scratch) and the lists of their rows in increasing order (small, large and huge
   have room for n rows), the workspace offsets of the large and huge rows (small rows take none), and in dinfo: ns,
   nl, nh, smallws, maxn2, maxn1 (of the large classes; the small solve adds its own), wtotal, flops. Enqueued only. */
cudaError_t GpukitGSAIPlanCUDA(const GpukitGSAIProblem *P, int *cls, int *small, int *large, int *huge, GpukitGSAIInfo *dinfo, cudaStream_t stream);

/* The batch of rows [r0, *r1) whose workspace fits budget doubles (at least one row), its first offset and size
   (host; synchronises the stream) */
cudaError_t GpukitGSAINextBatchCUDA(const GpukitGSAIProblem *P, int r0, long long budget, int *r1, long long *base, long long *size, cudaStream_t stream);

/* Gather and solve the rows small[0..ns) in shared memory (smallws doubles per warp, from the plan): the values of
   row k go to vals[jptr[k] ..], its status to status[k]; dinfo's nfallback, failrow and maxn1 are updated */
cudaError_t GpukitGSAISolveSmallCUDA(const GpukitGSAIProblem *P, const int *small, int ns, int smallws, double *vals, int *status, GpukitGSAIInfo *dinfo, cudaStream_t stream);

/* Gather and solve the rows of large[0..nl) and huge[0..nh) in [r0, r1) in the workspace ws (offset base), as above,
   with blocks of lnt threads for the large rows and hnt for the huge ones (values of GPUKIT_GSAI_LARGE_NT and
   GPUKIT_GSAI_HUGE_NT; others give cudaErrorInvalidValue). With whole, [r0, r1) holds every row (no look-up, nothing
   synchronised); otherwise the sublists are looked up (synchronises the stream). With aux (a non-blocking stream) and the
   events fork and join (all may be NULL), the large rows are solved on aux beside the huge ones; stream waits for aux at
   the end. A second call on the same rows gives the same values and status (the problem is gathered again), but adds
   its fallbacks to dinfo->nfallback again: restore *dinfo in between. */
cudaError_t GpukitGSAISolveLargeCUDA(const GpukitGSAIProblem *P, int r0, int r1, int whole, const int *large, int nl, const int *huge, int nh, double *ws, long long base, double *vals, int *status, GpukitGSAIInfo *dinfo, int lnt, int hnt, cudaStream_t stream, cudaStream_t aux, cudaEvent_t fork, cudaEvent_t join);

#ifdef __cplusplus
}
#endif
