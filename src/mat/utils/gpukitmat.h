/*
   Mat-level contracts shared by gpukit's matrix types and by the solvers that use them (KSPCACG, PCGSAI). A matrix
   type implements them; a KSP or PC asks for them through GpukitMatGetCaps() instead of comparing type names.
   Include from Mat code and from KSP/PC code alike; it needs no private header of any one type.
*/
#pragma once

#include <petsc/private/matimpl.h>
#include "gpukitimpl.h"

/* ----------------------------------------------------------------------------------------------------------
   The matrix powers kernel, composed on a Mat under the name "MatMatrixPowers_C".

     PetscErrorCode MatMatrixPowers(Mat A, Vec dinv, PetscInt k, const PetscReal theta[], const PetscReal sigma[],
                                    const PetscReal gamma[], Vec V[], Vec W[])

   Builds k new vectors of a three-term polynomial basis in one call. On entry V[0] and W[0] hold the start
   vector y_0 and w_0 = M y_0, where M^{-1} = diag(dinv) (dinv == NULL: M = I, and then W == V, the same array).
   For j = 0, ..., k-1 it must compute
       W[j+1] = (A V[j] - theta[j] W[j] - gamma[j] W[j-1]) / sigma[j]      (no gamma term for j = 0)
       V[j+1] = dinv .* W[j+1]                                              (nothing when dinv == NULL)
   leaving V[0], W[0] unchanged. theta, sigma (never 0) and gamma are host arrays of length k; gamma[0] is 0.
   Lean basis: V may be NULL when dinv is not NULL. Then the basis is kept as W alone: the product input is
   y_j = dinv .* W[j], formed where it is read (each entry the single product dinv[i] * W[j][i], so W comes out as
   with V given), and no V vector is written. KSPCACG passes V = NULL only on CUDA vectors (-ksp_cacg_lean_basis).
   All vectors are compatible with A (MatCreateVecs); on a device type they are device vectors, and the hook
   should leave the results valid on the device. k is 1..GPUKIT_MATPOWERS_MAX_K.

   GpukitMatMatrixPowersReference() is THE reference of this contract (k MatMult and pointwise products, in the
   order the device epilogue in src/sys/gpukitpowers.h follows): every hook falls back to it and every test
   compares with it. A hook that exchanges a ghost region of depth k once, or fuses the k products, saves
   messages or memory traffic.
   ---------------------------------------------------------------------------------------------------------- */
#define GPUKIT_MATPOWERS_MAX_K 16

typedef PetscErrorCode (*GpukitMatMatrixPowersFn)(Mat, Vec, PetscInt, const PetscReal[], const PetscReal[], const PetscReal[], Vec[], Vec[]);

PETSC_EXTERN PetscErrorCode GpukitMatMatrixPowersReference(Mat, Vec, PetscInt, const PetscReal[], const PetscReal[], const PetscReal[], Vec[], Vec[]);

/* ----------------------------------------------------------------------------------------------------------
   Device CSR: the local rows of a one-rank matrix as a CSR structure in device memory, 32-bit indices, values
   PetscScalar. A type composes "GpukitMatGetDeviceCSR_C" (PetscErrorCode (*)(Mat, GpukitDeviceCSR *)) and
   "GpukitMatRestoreDeviceCSR_C"; MATSEQAIJCUSPARSE is served by gpukit itself. The arrays stay valid until the
   restore; the caller must not write them. Rows are sorted by column, without duplicates.
   ---------------------------------------------------------------------------------------------------------- */
typedef struct {
  PetscInt           m, n;   /* rows, columns */
  PetscInt           nnz;    /* entries */
  const int         *rowptr; /* device, m+1 */
  const int         *colidx; /* device, nnz */
  const PetscScalar *val;    /* device, nnz */
  void              *ctx;    /* the provider's, for the restore (e.g. a temporary it built) */
} GpukitDeviceCSR;

PETSC_EXTERN PetscErrorCode GpukitMatGetDeviceCSR(Mat, GpukitDeviceCSR *);
PETSC_EXTERN PetscErrorCode GpukitMatRestoreDeviceCSR(Mat, GpukitDeviceCSR *);

/* ----------------------------------------------------------------------------------------------------------
   Capabilities: what a solver may ask of a matrix, by what it composes (never by its type name)
   ---------------------------------------------------------------------------------------------------------- */
typedef struct {
  PetscBool               device;    /* a CUDA matrix: its products run on the device (the offload mask is meaningful) */
  PetscBool               devicecsr; /* GpukitMatGetDeviceCSR() works on it */
  GpukitMatMatrixPowersFn powers;    /* its matrix powers kernel (composed "MatMatrixPowers_C"), or NULL */
} GpukitMatCaps;

PETSC_EXTERN PetscErrorCode GpukitMatGetCaps(Mat, GpukitMatCaps *);
