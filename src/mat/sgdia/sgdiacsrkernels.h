/*
   Device kernels of MATSEQSGDIACUDA's device CSR (glue in sgdiacsrcuda.cu, protocol in src/mat/utils/gpukitmat.h):
   the local rows of the SG-DIA storage as a CSR structure with 32-bit indices, built on the device from the device
   values. Pure CUDA with a C interface, no PETSc. Host reference: SGDIAGetRowLocal() in sgdia.c (MatGetRow(), and so
   MatConvert() to AIJ): row p*dof + r holds, for every stencil point s whose neighbour q = p + delta_s lies in the
   domain (non-periodic dimensions: 0 <= q < M; periodic ones wrap) and is reached canonically (a periodic dimension
   shorter than the stencil reaches one neighbour from several stencil points; only the offset nearest zero, the
   positive one on a tie, stores values), the dof columns q*dof + c with the values v[(s*dof + c)*m + p*dof + r],
   sorted by column. The explicit zeros of out-of-domain slots are left out, in-domain zeros are kept.

   Only for one rank: the owned box is the whole grid (a->xs = 0, a->xm = a->M), so a grid point's global index is
   its point index. a->v, a->delta, a->m, a->dof, a->k, a->xs, a->xm, a->M, a->periodic and a->sw are read; a->off,
   a->lo and a->n are not. Conventions as in sgdiakernels.h: bad arguments give cudaErrorInvalidValue, nothing is
   launched for no rows, asynchronous on stream. block: threads per block, a multiple of 32 in 32..1024.
*/
#pragma once

#include <cuda_runtime.h>
#include "sgdiakernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* counts[i] = the number of entries of local row i (as above), for the a->m rows; one thread per row */
cudaError_t GpukitSGDIACSRCountCUDA(const GpukitSGDIAMultArgs *a, int *counts, int block, cudaStream_t stream);

/* rowptr[0] = 0, rowptr[i+1] = counts[0] + ... + counts[i] for the m rows (rowptr has m+1 entries). work: device
   scratch of *workbytes bytes; with work NULL only *workbytes is set (the size to allocate) and nothing is launched. */
cudaError_t GpukitSGDIACSRScanCUDA(long long m, const int *counts, int *rowptr, void *work, size_t *workbytes, cudaStream_t stream);

/* colidx[rowptr[i]..rowptr[i+1]) and val[...] of each row i: the columns sorted increasingly, each with its value;
   one thread per row (stencil order is column order where no dimension wraps; a row with a wrapped neighbour is
   sorted in place by insertion) */
cudaError_t GpukitSGDIACSRFillCUDA(const GpukitSGDIAMultArgs *a, const int *rowptr, int *colidx, double *val, int block, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
