/*
   Mat-level contracts shared by gpukit's types and solvers (gpukitmat.h): the reference of the matrix powers
   contract, the device CSR of a matrix, and the capability query that KSPCACG and PCGSAI use instead of type names.
*/
#include "gpukitmat.h"

/*@C
  GpukitMatMatrixPowersReference - The reference implementation of the matrix powers contract ("MatMatrixPowers_C",
  see `src/mat/utils/gpukitmat.h`): k `MatMult()` calls, the three-term update and the diagonal preconditioner

  Collective

  Input Parameters:
+ A     - the matrix
. dinv  - the inverse diagonal of the preconditioner, or `NULL` for none
. k     - the number of new basis vectors
. theta - the recurrence's theta_j, length k
. sigma - the recurrence's sigma_j (never 0), length k
. gamma - the recurrence's gamma_j (gamma_0 = 0), length k
. V     - the preconditioned basis (V[0] on input), or `NULL` for the lean basis (then dinv is required)
- W     - the basis (W[0] on input)

  Level: developer

  Note:
  Every matrix powers kernel falls back to this one (host vectors, a matrix bound to the CPU) and is tested against
  it; its arithmetic order is the device epilogue's (`src/sys/gpukitpowers.h`).

.seealso: `KSPCACG`, `GpukitMatGetCaps()`
@*/
PetscErrorCode GpukitMatMatrixPowersReference(Mat A, Vec dinv, PetscInt k, const PetscReal theta[], const PetscReal sigma[], const PetscReal gamma[], Vec V[], Vec W[])
{
  Vec t = NULL; /* the lean basis (V == NULL): the product input dinv .* W[j] */

  PetscFunctionBegin;
  PetscCheck(V || dinv, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_NULL, "MatMatrixPowers: V may be NULL (the lean basis) only with a diagonal preconditioner dinv");
  PetscCheck(k >= 0 && k <= GPUKIT_MATPOWERS_MAX_K, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "MatMatrixPowers: k must be in 0..%d, got %" PetscInt_FMT, GPUKIT_MATPOWERS_MAX_K, k);
  if (!V && k > 0) PetscCall(VecDuplicate(W[0], &t));
  for (PetscInt j = 0; j < k; j++) {
    const PetscScalar a = 1.0 / sigma[j], b = -theta[j] / sigma[j], c = -gamma[j] / sigma[j];

    if (t) PetscCall(VecPointwiseMult(t, dinv, W[j]));
    PetscCall(MatMult(A, t ? t : V[j], W[j + 1]));
    if (j > 0 && gamma[j] != 0.0) PetscCall(VecAXPBYPCZ(W[j + 1], b, c, a, W[j], W[j - 1]));
    else if (theta[j] != 0.0) PetscCall(VecAXPBY(W[j + 1], b, a, W[j]));
    else if (sigma[j] != 1.0) PetscCall(VecScale(W[j + 1], a));
    if (t) continue;
    if (dinv) PetscCall(VecPointwiseMult(V[j + 1], dinv, W[j + 1]));
    else if (V[j + 1] != W[j + 1]) PetscCall(VecCopy(W[j + 1], V[j + 1]));
  }
  PetscCall(VecDestroy(&t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(GPUKIT_HAVE_CUDA)
/* gpukitmatcuda.cu: what gpukit serves itself for PETSc's MATSEQAIJCUSPARSE */
PETSC_INTERN PetscErrorCode GpukitMatGetDeviceCSR_SeqAIJCUSPARSE(Mat, GpukitDeviceCSR *);
PETSC_INTERN PetscErrorCode GpukitMatRestoreDeviceCSR_SeqAIJCUSPARSE(Mat, GpukitDeviceCSR *);
PETSC_INTERN PetscErrorCode GpukitMatGetPowers_SeqAIJCUSPARSE(Mat, GpukitMatMatrixPowersFn *);
PETSC_INTERN PetscErrorCode GpukitMatUtilsRegisterCUDA_Private(void);
#endif

/* the shared Mat layer's registration hook (called by GpukitInitializePackage()): its log events */
PetscErrorCode GpukitMatUtilsRegister_Private(void)
{
  PetscFunctionBegin;
#if defined(GPUKIT_HAVE_CUDA)
  PetscCall(GpukitMatUtilsRegisterCUDA_Private());
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GpukitMatIsSeqAIJCUSPARSE(Mat A, PetscBool *flg)
{
  PetscFunctionBegin;
  *flg = PETSC_FALSE;
#if defined(GPUKIT_HAVE_CUDA)
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJCUSPARSE, flg));
  if (*flg && A->boundtocpu) *flg = PETSC_FALSE;
#else
  (void)A;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitMatGetCaps - What gpukit's solvers may ask of a matrix: whether it runs on the device, whether it gives a
  device CSR, and its matrix powers kernel

  Not Collective

  Input Parameter:
. A - the matrix

  Output Parameter:
. caps - the capabilities

  Level: developer

  Note:
  A type states its capabilities by composing functions ("GpukitMatGetDeviceCSR_C", "MatMatrixPowers_C"); PETSc's
  `MATSEQAIJCUSPARSE` is served by gpukit itself. Solvers ask here, never by type name.

.seealso: `GpukitMatGetDeviceCSR()`, `GpukitMatMatrixPowersReference()`
@*/
PetscErrorCode GpukitMatGetCaps(Mat A, GpukitMatCaps *caps)
{
  PetscErrorCode (*getcsr)(Mat, GpukitDeviceCSR *) = NULL;
  PetscBool iscsr;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  GpukitAssertPointer(caps, 2);
  PetscCall(PetscMemzero(caps, sizeof(*caps)));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatMatrixPowers_C", &caps->powers));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "GpukitMatGetDeviceCSR_C", &getcsr));
  caps->devicecsr = getcsr ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(GpukitMatIsSeqAIJCUSPARSE(A, &iscsr));
  if (iscsr) {
    caps->devicecsr = PETSC_TRUE;
#if defined(GPUKIT_HAVE_CUDA)
    if (!caps->powers) PetscCall(GpukitMatGetPowers_SeqAIJCUSPARSE(A, &caps->powers));
#endif
  }
#if defined(GPUKIT_HAVE_CUDA)
  if (!A->boundtocpu) { /* a device type: allocated on the device, or its default vectors are CUDA ones */
    const char *vt = A->defaultvectype;
    PetscBool   cuda = (PetscBool)(A->offloadmask != PETSC_OFFLOAD_UNALLOCATED || iscsr || caps->devicecsr);

    if (!cuda && vt) PetscCall(PetscStrbeginswith(vt, VECCUDA, &cuda));
    if (!cuda && vt) PetscCall(PetscStrbeginswith(vt, VECSEQCUDA, &cuda));
    if (!cuda && vt) PetscCall(PetscStrbeginswith(vt, VECMPICUDA, &cuda));
    caps->device = cuda;
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitMatGetDeviceCSR - The local rows of a one-rank matrix as a CSR structure in device memory

  Not Collective

  Input Parameter:
. A - the matrix (`GpukitMatGetCaps()` says whether it gives one)

  Output Parameter:
. csr - the structure; give it back with `GpukitMatRestoreDeviceCSR()`

  Level: developer

.seealso: `GpukitMatGetCaps()`, `GpukitMatRestoreDeviceCSR()`
@*/
PetscErrorCode GpukitMatGetDeviceCSR(Mat A, GpukitDeviceCSR *csr)
{
  PetscErrorCode (*getcsr)(Mat, GpukitDeviceCSR *) = NULL;
  PetscBool iscsr;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  GpukitAssertPointer(csr, 2);
  PetscCall(PetscMemzero(csr, sizeof(*csr)));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "GpukitMatGetDeviceCSR_C", &getcsr));
  if (getcsr) {
    PetscCall((*getcsr)(A, csr));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(GpukitMatIsSeqAIJCUSPARSE(A, &iscsr));
#if defined(GPUKIT_HAVE_CUDA)
  if (iscsr) {
    PetscCall(GpukitMatGetDeviceCSR_SeqAIJCUSPARSE(A, csr));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "Matrix of type %s gives no device CSR (GpukitMatGetCaps() says which do)", ((PetscObject)A)->type_name);
}

/*@C
  GpukitMatRestoreDeviceCSR - Gives back what `GpukitMatGetDeviceCSR()` gave

  Not Collective

  Input Parameters:
+ A   - the matrix
- csr - the structure; zeroed on return

  Level: developer

.seealso: `GpukitMatGetDeviceCSR()`
@*/
PetscErrorCode GpukitMatRestoreDeviceCSR(Mat A, GpukitDeviceCSR *csr)
{
  PetscErrorCode (*restore)(Mat, GpukitDeviceCSR *) = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "GpukitMatRestoreDeviceCSR_C", &restore));
  if (restore) PetscCall((*restore)(A, csr));
#if defined(GPUKIT_HAVE_CUDA)
  else {
    PetscBool iscsr;
    PetscCall(GpukitMatIsSeqAIJCUSPARSE(A, &iscsr));
    if (iscsr) PetscCall(GpukitMatRestoreDeviceCSR_SeqAIJCUSPARSE(A, csr));
  }
#endif
  PetscCall(PetscMemzero(csr, sizeof(*csr)));
  PetscFunctionReturn(PETSC_SUCCESS);
}
