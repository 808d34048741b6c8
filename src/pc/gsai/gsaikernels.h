/*
   Device kernels of PCGSAI's set-up: pure CUDA with a C interface, no PETSc. The PETSc glue (gsaicuda.cu)
   owns the arrays and the order of the steps; the host reference of every step is in gsai.c:
     GpukitGSAITransposeCUDA()  - B = A^T for right preconditioning (MatTranspose())
     GpukitGSAISelectCUDA()     - threshold, lower part, cap of each row (GSAIAddThresholdedRow(), GSAIPatternRows())
     GpukitGSAIUnionCUDA()      - one level of the power pattern, and the sizes of the sets I (GSAIPatternRows())
     GpukitGSAISolveBatchCUDA() - the local problems: Householder QR least squares or FSAI Cholesky, with the
                                  documented fallback to the diagonal (GSAILeastSquares(), GSAICholeskyRow(),
                                  GSAISolveRows())
   Matrices are CSR with int indices, sorted columns, double values, all on the device. Every launch function
   returns the first CUDA error (cudaErrorInvalidValue for bad arguments); functions that return counts to the
   host synchronise the stream.
*/
#pragma once

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* a local problem with at most this many rows and columns is solved by one warp, a larger one by one block */
#define GPUKIT_GSAI_WARP_MAX      32
#define GPUKIT_GSAI_BLOCK_THREADS 128
/* pivots below this fraction of the largest fall back to the diagonal: keep equal to GSAI_RCOND_TOL (gsaiimpl.h) */
#define GPUKIT_GSAI_RCOND_TOL 1.0e-12

/* per-row status after the solve: 0 solved, 1 fell back to the diagonal, GPUKIT_GSAI_FAIL + kind no fallback,
   with kind as GSAIFailureKind in gsaiimpl.h (1 empty row, 2 structurally singular, 3 singular with zero
   diagonal, 4 not SPD) */
#define GPUKIT_GSAI_FALLBACK 1
#define GPUKIT_GSAI_FAIL     10

/* B = A^T (n x n, nnz entries): bptr n+1, bcol and bval nnz, and perm (nnz) with bval[e] = aval[perm[e]];
   within a row of B the columns increase */
cudaError_t GpukitGSAITransposeCUDA(int n, int nnz, const int *aptr, const int *acol, const double *aval, int *bptr, int *bcol, double *bval, int *perm, cudaStream_t stream);
/* out[e] = in[perm[e]] */
cudaError_t GpukitGSAIPermuteCUDA(int nnz, const int *perm, const double *in, double *out, cudaStream_t stream);

typedef struct {
  int    threshold; /* 0: every stored entry is a candidate; 1: only |a| > (1 - tau) max |a| of the row */
  double tau;
  int    lower; /* only columns below the row (spd) */
  int    cap;   /* 0, or the largest row length, diagonal included: the diagonal and the cap-1 candidates of largest
                       weight (compared in single precision, ties to the smaller column) */
} GpukitGSAISelectArgs;

/* Row k of the result: the diagonal (always, weight w or |a| of the stored diagonal, else 0) and the selected
   candidates of row k of (ptr, col, val), in increasing column order. Weights are w, or |val| when w is NULL.
   With optr NULL: cnt[k] = the row length. Otherwise: ocol (and ow when not NULL) filled at optr[k]. */
cudaError_t GpukitGSAISelectCUDA(int n, const int *ptr, const int *col, const double *val, const double *w, const GpukitGSAISelectArgs *a, int *cnt, const int *optr, int *ocol, double *ow, cudaStream_t stream);

/* ptr (n+1) = exclusive scan of cnt (n); *total = ptr[n] on the host; cudaErrorInvalidValue past INT_MAX */
cudaError_t GpukitGSAIScanCUDA(int n, const int *cnt, int *ptr, int *total, cudaStream_t stream);

/* rows[e] = k for ptr[k] <= e < ptr[k+1] */
cudaError_t GpukitGSAIExpandRowsCUDA(int n, const int *ptr, int *rows, cudaStream_t stream);

/* Row k of the result: the union of the rows T(j,:) over j in S(k,:), in increasing column order, with weight
   sum_j sw_j tw_jm (when sw, tw and ow are not NULL). With optr NULL: cnt[k] = its length. Otherwise: ocol (and
   ow) filled at optr[k]. cur: scratch of sptr[n] ints. */
cudaError_t GpukitGSAIUnionCUDA(int n, const int *sptr, const int *scol, const double *sw, const int *tptr, const int *tcol, const double *tw, int *cur, int *cnt, const int *optr, int *ocol, double *ow, cudaStream_t stream);

/* the local problems of the rows of N */
typedef struct {
  int           n;           /* rows */
  int           spd;         /* 0: least squares min ||B(J,:)^T x - e_k||; 1: FSAI row from A(J,J) */
  const int    *bptr, *bcol; /* B (A for spd) */
  const double *bval;
  const int    *jptr, *jcol; /* the pattern J of every row */
  const int    *n1;          /* general: |I| of every row (GpukitGSAIUnionCUDA() count of J over B) */
  long long    *woff;        /* n+1: workspace offset of every row, in doubles (GpukitGSAIPlanCUDA()) */
  int          *cur;         /* scratch: jptr[n] ints */
  int          *pos;         /* scratch: n ints, the position of k in I */
} GpukitGSAIProblem;

/* Workspace offsets (general n1 (n2 + 1), spd n2^2 doubles per row), the rows of each size class in increasing
   order (small: at most GPUKIT_GSAI_WARP_MAX rows and columns, warp per row; large: block per row), and on the
   host: ns, nl, the total workspace and the largest n1, n2. small and large have room for n rows. */
cudaError_t GpukitGSAIPlanCUDA(const GpukitGSAIProblem *P, int *small, int *ns, int *large, int *nl, long long *total, int *maxn1, int *maxn2, cudaStream_t stream);

/* The batch of rows [r0, *r1) whose workspace fits budget doubles (at least one row), its first offset and size (host) */
cudaError_t GpukitGSAINextBatchCUDA(const GpukitGSAIProblem *P, int r0, long long budget, int *r1, long long *base, long long *size, cudaStream_t stream);

/* Gather and solve the rows [r0, r1) (a batch) in the workspace ws (size doubles, offset base): the values of
   row k go to vals[jptr[k] ..], its status to status[k]. small (ns) and large (nl) as from GpukitGSAIPlanCUDA(). */
cudaError_t GpukitGSAISolveBatchCUDA(const GpukitGSAIProblem *P, int r0, int r1, const int *small, int ns, const int *large, int nl, double *ws, long long base, long long size, double *vals, int *status, cudaStream_t stream);

/* on the host: the rows that fell back to the diagonal, and the first row with no fallback (-1: none) with its status */
cudaError_t GpukitGSAIStatusCUDA(int n, const int *status, int *nfallback, int *failrow, int *failstatus, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
