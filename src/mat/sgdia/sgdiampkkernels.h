/*
   Device kernels of MATSGDIACUDA's ghost-region matrix powers route (glue: sgdiapowerscuda.cu; the host route and the
   shared set-up: sgdiampk.c, sgdiampk.h). Pure CUDA with a C interface, no PETSc. Arrays "over the box" hold dof values
   per point of the ghosted box lo, n (global grid coordinates, x fastest); the matrix values over the box are
       val[(s*dof + c)*vm + p*dof + r],   vm = points of the box * dof.
   Every launch function returns cudaErrorInvalidValue for bad arguments, launches nothing when there is no work, and
   returns the launch status; launches are asynchronous on the given stream.
*/
#pragma once

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int              dof, k;      /* components per point, stencil points */
  int              M[3];        /* global grid extent (1 in unused dimensions) */
  int              periodic[3]; /* nonzero along periodic dimensions */
  int              lo[3], n[3]; /* the ghosted box */
  int              olo[3], on[3]; /* the owned box (the owned vectors' layout) */
  long long        vm;          /* points of the box * dof */
  const double    *val;         /* device: the matrix values over the box */
  const long long *off;         /* device: k stencil offsets in the box, in points */
  const int       *delta;       /* device: 3k stencil offsets (dx, dy, dz) */
  /* for k <= GPUKIT_SGDIA_MPK_PARAM_K the same by value (pk = 1), read from the kernel's parameter space */
  int              pk;
  long long        poff[32];
  signed char      pdelta[3 * 32];
} GpukitSGDIAMPKBox;
#define GPUKIT_SGDIA_MPK_PARAM_K 32

/* One level on the region [rlo, rhi) of the box (global grid coordinates) for every row r of every point p there:
     t = sum over the stencil points s in the domain, then c:  val[(s*dof + c)*vm + p*dof + r] * x'[(p + off[s])*dof + c]
         with x' = xs .* x (each entry one product) when xs is not NULL, else x;
     w = a t (+ b w0) (+ c wm1)   (the order of src/sys/gpukitpowers.h; w0, wm1 may be NULL)
   written to wn over the box; and, for the points of the owned box, to wo (owned layout) and vo = dg .* w (vo and dg
   both NULL or both given). x, xs, w0, wm1, dg and wn are over the box; wn must not be any input. */
cudaError_t GpukitSGDIAMPKLevelCUDA(const GpukitSGDIAMPKBox *b, const int rlo[3], const int rhi[3], const double *x, const double *xs, double a, double bb, double cc, const double *w0, const double *wm1, const double *dg, double *wn, double *wo, double *vo, int block, cudaStream_t stream);

/* root[(nu*p + u)*dof + c] = src_u[p*dof + c] for the nrp owned points p = rp[i] and u < nu (nu 1: src0; 2: src0, src1) */
cudaError_t GpukitSGDIAMPKPackCUDA(int dof, long long nrp, const int *rp, int nu, const double *src0, const double *src1, double *root, int block, cudaStream_t stream);

/* dst_u[gidx[i]*dof + c] = leaf[(nu*i + u)*dof + c] for the nleaves ghost points i (dst over the box) */
cudaError_t GpukitSGDIAMPKUnpackCUDA(int dof, long long nleaves, const int *gidx, int nu, const double *leaf, double *dst0, double *dst1, int block, cudaStream_t stream);

/* the owned part of an array over the box from an owned vector (owned layout) */
cudaError_t GpukitSGDIAMPKOwnedToBoxCUDA(const GpukitSGDIAMPKBox *b, const double *src, double *dst, int block, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
