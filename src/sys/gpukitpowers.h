/*
   The epilogue of one matrix powers step, shared by the device matrix powers kernels (MATSGDIACUDA's in
   src/mat/sgdia/sgdiakernels.cu, the CSR one in src/mat/utils/gpukitcsrmpkkernels.cu; contract: the comment above
   GpukitMatMatrixPowersFn in src/mat/utils/gpukitmat.h). Pure CUDA/C, no PETSc: the kernel headers include it. For
   row i, with t = (A x)_i, x_k = xs ? xs[k] * in[k] : in[k]:
       w1[i] = a t + b w0[i] + c wm1[i]     (a term whose array is NULL is left out; in this order)
       v1[i] = dinv[i] w1[i]                (when v1 is not NULL; dinv and v1 both given or both NULL)
   These are the terms and the order of GpukitMatMatrixPowersReference()'s VecAXPBYPCZ/VecAXPBY/VecScale and VecPointwiseMult,
   so the kernels agree with it to rounding. All arrays are on the device; w1 and v1 must not overlap the inputs.
*/
#pragma once

typedef struct {
  double        a, b, c;
  const double *w0, *wm1; /* or NULL */
  const double *dinv;     /* or NULL: no v1 */
  double       *v1;       /* or NULL (the lean basis) */
  const double *xs;       /* or NULL: the product input is xs .* in, each entry one product (the lean basis) */
} GpukitPowersEpilogue;

#if defined(__CUDACC__)
/* the epilogue for row i in the thread that summed t */
static __device__ __forceinline__ void GpukitPowersEpilogueApply(const GpukitPowersEpilogue &e, long long i, double t, double *w1)
{
  double r = e.a * t;

  if (e.w0) r += e.b * __ldg(e.w0 + i);
  if (e.wm1) r += e.c * __ldg(e.wm1 + i);
  w1[i] = r;
  if (e.v1) e.v1[i] = __ldg(e.dinv + i) * r;
}
#endif
