/*
   Device kernels on CSR matrices that any gpukit type or solver may use (gpukitcsropskernels.cu): the transpose (with
   the permutation of the entries, so that new values only permute), permutations of the values, and row pointers from
   row lengths. Pure CUDA with a C interface, no PETSc. Matrices are CSR with int indices, sorted columns and double
   values, all on the device. Every function returns the first CUDA error (cudaErrorInvalidValue for bad arguments) and
   only enqueues work on the stream unless its comment says that it synchronises. Temporary device memory comes from
   the library's stream-ordered pool (src/sys/gpukitpool.h).

   Host reference of the transpose: MatTranspose() of a MATSEQAIJ (the same structure, columns sorted within a row).
*/
#pragma once

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* T = S^T for S of m rows and n columns with nnz entries: tptr n+1, tcol nnz, perm nnz with T's entry e being S's entry
   perm[e]; tval (when sval and tval are not NULL) = sval[perm[e]]. Within a row of T the columns increase (a stable
   radix sort of S's columns). */
cudaError_t GpukitCSRTransposeCUDA(int m, int n, int nnz, const int *sptr, const int *scol, const double *sval, int *tptr, int *tcol, double *tval, int *perm, cudaStream_t stream);
/* out[e] = in[perm[e]], e < nnz (a gather: the values of a transpose from perm) */
cudaError_t GpukitCSRPermuteCUDA(int nnz, const int *perm, const double *in, double *out, cudaStream_t stream);
/* out[perm[e]] = in[e], e < nnz (a scatter: the inverse of GpukitCSRPermuteCUDA()) */
cudaError_t GpukitCSRScatterCUDA(int nnz, const int *perm, const double *in, double *out, cudaStream_t stream);
/* row pointers ptr (n+1) = the exclusive scan of the row lengths cnt (n); the total ptr[n] also to *dtotal (device,
   when not NULL) and to *htotal (host, when not NULL: then the stream is synchronised, and cudaErrorInvalidValue is
   returned when the total passes INT_MAX, before ptr is written) */
cudaError_t GpukitCSRScanCUDA(int n, const int *cnt, int *ptr, int *dtotal, int *htotal, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
