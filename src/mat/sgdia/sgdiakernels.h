/*
   Device kernels of MATSGDIACUDA: pure CUDA with a C interface, no PETSc. The PETSc glue (sgdiacuda.cu) fills
   the arguments from Mat_SGDIA; the storage is the one described in sgdiaimpl.h:
       v[(s*dof + c)*m + p*dof + r]
   couples row component r of owned point p to component c of its neighbour through stencil point s.

   Every launch function checks its arguments, returns cudaErrorInvalidValue for bad ones, launches nothing
   when there are no rows, and returns the launch status (cudaGetLastError()). Launches are asynchronous on
   the given stream.
*/
#pragma once

#include <cuda_runtime.h>
#include "gpukitpowers.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dof 1..GPUKIT_SGDIA_CUDA_MAX_DOF have a kernel of their own (unrolled over components); any other dof runs
   the generic kernel */
#define GPUKIT_SGDIA_CUDA_MAX_DOF 8

/* stencils of at most this many points (every DMDA stencil of width 1, and the star stencils of width <= 5 in 3D)
   travel in the kernel arguments too */
#define GPUKIT_SGDIA_CUDA_PARAM_K 32

typedef struct {
  long long        m;            /* local rows: owned points * dof */
  int              dof, k;       /* components per grid point, stencil points */
  int              xs[3], xm[3]; /* owned box: first global grid index and extent (0 and 1 in unused dimensions) */
  int              M[3];         /* global grid extent (1 in unused dimensions) */
  int              periodic[3];  /* nonzero along periodic dimensions */
  int              sw[3];        /* stencil width along each dimension (0 in unused dimensions) */
  int              lo[3], n[3];  /* the box that the input array x covers: first global grid index and extent */
  const double    *v;            /* device: k*dof*m values */
  const int       *delta;        /* device: 3*k stencil offsets (dx, dy, dz) */
  const long long *off;          /* device: k offsets of the stencil points in the x box, in grid points */
  /* for k <= GPUKIT_SGDIA_CUDA_PARAM_K also by value, for the stencil-specialised kernels (compile-time indices into
     the kernel's parameter space) and GpukitSGDIAFillStencilCUDA() */
  long long   poff[GPUKIT_SGDIA_CUDA_PARAM_K];       /* off by value */
  signed char pdelta[3 * GPUKIT_SGDIA_CUDA_PARAM_K]; /* delta by value (|delta| <= the stencil width <= 8) */
} GpukitSGDIAMultArgs;

/* kernel variants of the product: 0 one thread per row; 1 two consecutive rows per thread with 16-byte loads of
   v and y (needs an even number of local rows); 2 one thread per row, specialised on the stencil size as well
   (dof 1..4 with 5, 7 or 9 stencil points, dof 1 with 27). (A variant with four points of an x-line per thread sharing its x
   loads ran 1.8x slower on an H200: see docs/performance.md.) */
#define GPUKIT_SGDIA_CUDA_VARIANTS 3

/* y = A x, or y = y0 + A x when y0 is not NULL (y0 may be y). x covers the box a->lo, a->n with dof values per
   point; neighbours outside a non-periodic domain are skipped, so x needs no values there. block: threads per
   block, a multiple of 32 in 32..1024; variant: see GPUKIT_SGDIA_CUDA_VARIANTS. v, y0 and y must be 16-byte
   aligned for variant 1 (cudaMalloc'ed arrays are). */
cudaError_t GpukitSGDIAMultCUDA(const GpukitSGDIAMultArgs *a, const double *x, const double *y0, double *y, int block, int variant, cudaStream_t stream);

/* The two halves of an MPI product whose halo exchange overlaps the computation (sgdiahalocuda.cu):
   GpukitSGDIAMultInteriorCUDA() computes only the rows whose grid point lies in the box [ilo, ihi) (global grid
   indices; the rows whose whole stencil stays in the owned box), with x the OWNED vector (a->lo, a->n, a->off for the
   owned box), while the ghosts are on their way; the other rows are left untouched. variant 1 runs as 0.
   GpukitSGDIAMultShellCUDA() then computes the nrows rows listed in rows[] (device array, the other rows), with a
   over the GHOSTED box: a neighbour inside the owned box is read from xo (the owned vector, offsets ooff[k] in the
   owned box), any other from the ghosted array x, in which only the ghost points need values. Both sum the terms of
   a row in the order of variant 0, so the two halves give variant 0's result. */
cudaError_t GpukitSGDIAMultInteriorCUDA(const GpukitSGDIAMultArgs *a, const int ilo[3], const int ihi[3], const double *x, const double *y0, double *y, int block, int variant, cudaStream_t stream);
cudaError_t GpukitSGDIAMultShellCUDA(const GpukitSGDIAMultArgs *a, const long long *ooff, const double *xo, const long long *rows, long long nrows, const double *x, const double *y0, double *y, int block, cudaStream_t stream);

/* 1 when the variant can run on these arguments */
int GpukitSGDIAMultVariantValid(const GpukitSGDIAMultArgs *a, int variant);

/* The epilogue of one matrix powers step (src/sys/gpukitpowers.h), applied to t = (A x)_i in the thread that computed
   it; its arrays are over the m owned rows, except xs, which is in the layout of x (the ghosted box when x is) */
typedef GpukitPowersEpilogue GpukitSGDIAPowersArgs;

/* One step of the matrix powers kernel: the product of GpukitSGDIAMultCUDA() (x as there) fused with the epilogue
   e, so that w1 (and v1) are written in the same pass. variant 2 (the stencil kernel) where
   GpukitSGDIAMultVariantValid(a, 2), else 0 (one thread per row; any other variant runs as 0). */
cudaError_t GpukitSGDIAPowersCUDA(const GpukitSGDIAMultArgs *a, const GpukitSGDIAPowersArgs *e, const double *x, double *w1, int block, int variant, cudaStream_t stream);

/* off[0..k) and delta[0..3k) on the device from a->poff, a->pdelta (k <= GPUKIT_SGDIA_CUDA_PARAM_K), by a kernel:
   no host-to-device copy */
cudaError_t GpukitSGDIAFillStencilCUDA(const GpukitSGDIAMultArgs *a, long long *off, int *delta, cudaStream_t stream);

/* d[i] = A(i,i) for the m local rows: v is the device array of values, center the index of the stencil point (0,0,0) */
cudaError_t GpukitSGDIAGetDiagonalCUDA(long long m, int dof, int center, const double *v, double *d, int block, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

