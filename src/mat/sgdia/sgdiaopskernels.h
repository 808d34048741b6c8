/*
   Device kernels of MATSGDIACUDA for the operations other than the product and the diagonal (those are in
   sgdiakernels.h): transpose product, whole-array algebra, diagonal operations, Dirichlet rows and columns,
   inversion of the diagonal blocks (the COO assembly is the shared src/mat/utils/gpukitcookernels.h). Pure CUDA with
   a C interface, no PETSc; the PETSc glue (sgdiacuda.cu) fills the arguments from Mat_SGDIA. The storage is the one of sgdiaimpl.h:
       v[(s*dof + c)*m + p*dof + r]
   couples row component r of owned point p to component c of its neighbour p + delta_s through stencil point s;
   slots whose neighbour lies outside a non-periodic domain are zero and no kernel here reads or writes them
   (except MatZeroRows, which zeroes whole rows, and the whole-array ones, which keep zeros zero).

   Conventions, as in sgdiakernels.h: every launch function checks its arguments and returns
   cudaErrorInvalidValue for bad ones (NULL arrays, negative sizes, a block size that is not a multiple of 32 in
   32..1024), launches nothing when there is nothing to do, returns cudaErrorInvalidConfiguration when the grid
   would need more than 2^31-1 blocks, and otherwise the launch status (cudaGetLastError()). Launches are
   asynchronous on the given stream. block is the number of threads per block, a multiple of 32 in 32..1024 (the
   block inversion uses at most GPUKIT_SGDIA_INV_MAX_BLOCK of them). Index arithmetic is in int when every thread
   index fits, else in 64 bits. Each function names the host code in sgdia.c that it must agree with.

   Rounding: the element-wise kernels (scale, AXPY, shift, diagonal set, diagonal scaling, Dirichlet rows and
   columns, block inversion) do the host's operations in the host's order, each rounded on its own (no
   fused multiply-add), so a device matrix and its host twin keep equal values bit for bit. The transpose product
   sums in another order than the host and may differ in the last bits.
*/
#pragma once

#include <cuda_runtime.h>
#include "sgdiakernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dof 1..GPUKIT_SGDIA_CUDA_MAX_INV_DOF have a block-inversion kernel (GpukitSGDIAInvertBlockDiagonalCUDA), which
   runs at most GPUKIT_SGDIA_INV_MAX_BLOCK threads per block (two dof x dof blocks per thread in registers) */
#define GPUKIT_SGDIA_CUDA_MAX_INV_DOF 8
#define GPUKIT_SGDIA_INV_MAX_BLOCK    128

/* Transpose product, gather form (no atomics): one thread per output entry (q, c) of the box a->lo, a->n,
       y[q*dof + c] = (y0 ? y0[q*dof + c] : 0) + sum_s sum_r v[(s*dof + c)*m + lp*dof + r] * x[lp*dof + r],
   summed over the stencil points s whose source point p = q - delta_s (global, unwrapped coordinates) lies in
   the owned box a->xs, a->xm, lp being its owned-box index, and whose coupling lies in the domain: along a
   non-periodic dimension q must be in [0, M). x holds the m owned rows; y and y0 (if not NULL; y0 may be y)
   cover the box, which is the owned box or the DMDA's ghosted box. Along periodic dimensions a ghost q
   outside [0, M) receives the contributions of its wrapped image: the caller adds the ghosted box into the
   global vector (DMLocalToGlobal with ADD_VALUES). a->off is not used, a->delta is read. Host reference:
   MatMultTransposeAdd_SGDIA(). */
cudaError_t GpukitSGDIAMultTransposeCUDA(const GpukitSGDIAMultArgs *a, const double *x, const double *y0, double *y, int block, cudaStream_t stream);

/* v[i] *= alpha for the n values (MatScale_SGDIA()) */
cudaError_t GpukitSGDIAScaleCUDA(long long n, double alpha, double *v, int block, cudaStream_t stream);

/* y[i] += alpha * x[i] for the n values (the fast path of MatAXPY_SGDIA()); x may be y, otherwise they must not
   overlap. The product is rounded before the sum (no fused multiply-add), as the host computes it. */
cudaError_t GpukitSGDIAAXPYCUDA(long long n, double alpha, const double *x, double *y, int block, cudaStream_t stream);

/* A(i,i) += alpha for the m local rows: v[(center*dof + i%dof)*m + i] += alpha (MatShift_SGDIA()) */
cudaError_t GpukitSGDIAShiftCUDA(long long m, int dof, int center, double alpha, double *v, int block, cudaStream_t stream);

/* A(i,i) = d[i] (add == 0) or A(i,i) += d[i] (add != 0) for the m local rows (MatDiagonalSet_SGDIA()) */
cudaError_t GpukitSGDIADiagonalSetCUDA(long long m, int dof, int center, const double *d, int add, double *v, int block, cudaStream_t stream);

/* Left scaling, v[j*m + i] *= l[i] for the kdof = k*dof stored columns j and the m rows i: A = diag(l) A
   (MatDiagonalScale_SGDIA() with l). One thread per row. */
cudaError_t GpukitSGDIADiagonalScaleLeftCUDA(long long m, int kdof, const double *l, double *v, int block, cudaStream_t stream);

/* Right scaling, A = A diag(r): v[(s*dof + c)*m + p*dof + rr] *= rl[(xb(p) + off[s])*dof + c] for every in-domain
   coupling, where rl is the right vector over the box a->lo, a->n (the ghosted box, gathered by the caller),
   xb(p) the position of owned point p in that box and a->off the k stencil offsets in that box. Out-of-domain
   slots are left alone (they are zero). a->v is ignored: the values are v, changed in place. One thread per row.
   Host reference: MatDiagonalScale_SGDIA() with r. */
cudaError_t GpukitSGDIADiagonalScaleRightCUDA(const GpukitSGDIAMultArgs *a, const double *rl, double *v, int block, cudaStream_t stream);

/* Dirichlet rows: for each of the nrows local rows lr = lrows[u] (device array, 0 <= lr < m; a row may appear
   more than once), zero its k*dof stored entries and set its diagonal to diag; when x and b are both not NULL,
   also b[lr] = diag * x[lr]. Host reference: SGDIAZeroLocalRows(). */
cudaError_t GpukitSGDIAZeroRowsCUDA(long long nrows, const long long *lrows, long long m, int dof, int k, int center, double diag, double *v, const double *x, double *b, int block, cudaStream_t stream);

/* Dirichlet columns: maskl and xl cover the box a->lo, a->n (the ghosted box) and a->off has the stencil offsets
   in that box. For every in-domain entry (s, c, p, r) whose column (xb(p) + off[s])*dof + c has maskl != 0:
   when b is not NULL, b[p*dof + r] -= v * xl[col] (b holds the m owned rows; xl must then not be NULL), then the
   entry is set to zero. One thread per row, stencil points and components in the host's order, no atomics.
   a->v is ignored: the values are v, changed in place. The rows themselves are zeroed afterwards with
   GpukitSGDIAZeroRowsCUDA(). Host reference: the column loop of MatZeroRowsColumns_SGDIA(). */
cudaError_t GpukitSGDIAZeroColumnsCUDA(const GpukitSGDIAMultArgs *a, const double *maskl, const double *xl, double *b, double *v, int block, cudaStream_t stream);

/* Inverse of each dof x dof diagonal block, for PCPBJACOBI: for each of the np owned points p, the block
   B[r + c*dof] = v[(center*dof + c)*m + p*dof + r] is inverted by Gauss-Jordan elimination with partial pivoting
   into inv + p*dof*dof, column-major, exactly as MatInvertBlockDiagonal_SGDIA() does: the same pivots, and the
   same operations in the same order without fused multiply-adds, so that the result agrees with the host bit for
   bit. One thread per point; the block and its inverse live in registers (a kernel per dof, fully unrolled, every
   index a compile-time constant; at dof 8 the compiler spills a few of them, 80 bytes, at fixed offsets). The
   launch uses min(block, GPUKIT_SGDIA_INV_MAX_BLOCK) threads per block.
   singular (device, one long long) is set to -1 on the stream before the launch, and to the smallest index of a
   point whose block has a zero pivot (that block's inverse is then left incomplete); the caller reads it after
   the launch and reports the grid point.
   Only dof 1..GPUKIT_SGDIA_CUDA_MAX_INV_DOF: any other dof returns cudaErrorInvalidValue without launching
   anything, and the caller inverts on the host. */
cudaError_t GpukitSGDIAInvertBlockDiagonalCUDA(long long np, int dof, int center, long long m, const double *v, double *inv, long long *singular, int block, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
