/*
   MATSGDIACUDA's matrix powers hook, composed as "MatMatrixPowers_C" while the matrix runs on the device (contract and
   reference, GpukitMatMatrixPowersReference(), in src/mat/utils/gpukitmat.h). Kernel: GpukitSGDIAPowersCUDA() in
   sgdiakernels.cu, the product with the basis recurrence and the Jacobi scaling in its epilogue.
*/
#include "sgdiacudaimpl.h"

#if defined(GPUKIT_SGDIACUDA_AVAILABLE)

PetscLogEvent MAT_SGDIA_PowersCUDA; /* "SGDIAMatPowCUDA", registered with the types (sgdiacuda.cu) */

/* lean basis with ghosts: dinv over the ghosted box, gathered once per dinv (id and state) and kept for later calls */
static PetscErrorCode SGDIACUDAPowersGhostedDinv_Private(Mat A, Vec dinv, Vec xl, const PetscScalar **dla)
{
  Mat_SGDIA       *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA   *cu = SGDIACUDAGet(A);
  PetscObjectId    id;
  PetscObjectState st;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetId((PetscObject)dinv, &id));
  PetscCall(PetscObjectStateGet((PetscObject)dinv, &st));
  if (cu->dl) { /* the box changes with the grid (a new DM): then gather again */
    PetscInt nd, nx;
    PetscCall(VecGetLocalSize(cu->dl, &nd));
    PetscCall(VecGetLocalSize(xl, &nx));
    if (nd != nx || cu->dlda != sg->da) PetscCall(VecDestroy(&cu->dl));
  }
  if (!cu->dl) {
    PetscCall(VecDuplicate(xl, &cu->dl));
    cu->dlda = sg->da;
    cu->did  = 0;
  }
  if (cu->did != id || cu->dstate != st) {
    PetscCall(DMGlobalToLocalBegin(sg->da, dinv, INSERT_VALUES, cu->dl));
    PetscCall(DMGlobalToLocalEnd(sg->da, dinv, INSERT_VALUES, cu->dl));
    cu->did    = id;
    cu->dstate = st;
  }
  PetscCall(VecCUDAGetArrayRead(cu->dl, dla));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatMatrixPowers_SGDIACUDA - KSPCACG's matrix powers hook: for j = 0..k-1
       W[j+1] = (A V[j] - theta[j] W[j] - gamma[j] W[j-1]) / sigma[j],   V[j+1] = dinv .* W[j+1] (dinv NULL: V == W)
   with one kernel launch per j (GpukitSGDIAPowersCUDA(): the product with the update and the Jacobi scaling in its
   epilogue), so each new basis vector costs one pass instead of a product, an update and a Jacobi apply. On more
   than one rank (or with periodic dimensions) the ghost values of V[j] are gathered before each product as in
   MatMult. Everything stays on the device: no host-device copy on one rank. Host vectors, or a matrix bound to the
   CPU, run the reference GpukitMatMatrixPowersReference().
   Lean basis (V == NULL, dinv given): the product reads W[j] and dinv and multiplies them where it reads them, so
   only W is written: one vector less per step; with ghosts, dinv's are gathered once and kept while dinv (id and
   state) does not change.
   Kernel knobs: the product's current choice (the tuner's, or the fixed one): its block size, and the stencil variant
   when the product uses it and it applies here, else one thread per row. The hook itself times nothing.
*/
PetscErrorCode MatMatrixPowers_SGDIACUDA(Mat A, Vec dinv, PetscInt k, const PetscReal theta[], const PetscReal sigma[], const PetscReal gamma[], Vec V[], Vec W[])
{
  Mat_SGDIA          *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA      *cu = SGDIACUDAGet(A);
  PetscBool           ok = PETSC_TRUE, ghosted, lean = (PetscBool)(V == NULL);
  Vec                 xl = NULL;
  const PetscScalar  *dla = NULL;
  GpukitSGDIAMultArgs args;
  cudaStream_t        stream;
  PetscInt            pvariant, pblock;
  int                 variant;

  PetscFunctionBegin;
  if (k < 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(theta && sigma && gamma && W, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_NULL, "MatMatrixPowers: the basis parameters and the W array must not be NULL");
  PetscCheck(V || dinv, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_NULL, "MatMatrixPowers: V may be NULL (the lean basis) only with a diagonal preconditioner dinv");
  for (PetscInt j = 0; j <= k && ok; j++) {
    Vec vecs[3] = {lean ? NULL : V[j], W[j], j == 0 ? dinv : NULL};
    PetscCall(SGDIACUDAVecsOnDevice_Private(A, "MatMatrixPowers", 3, vecs, &ok));
  }
  if (!ok || A->boundtocpu) {
    PetscCall(GpukitMatMatrixPowersReference(A, dinv, k, theta, sigma, gamma, V, W));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIACUDACopyToGPU_Private(A));
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_PowersCUDA, A, 0, 0, 0));
  ghosted = SGDIACUDANeedsGhosts_Private(sg);
  if (ghosted) PetscCall(SGDIACUDAGetLocalVecs_Private(A, &xl, NULL));
  if (lean && ghosted) PetscCall(SGDIACUDAPowersGhostedDinv_Private(A, dinv, xl, &dla));
  PetscCall(SGDIACUDASetArgs_Private(A, ghosted, &args));
  PetscCall(SGDIACUDAGetProductConfig_Private(A, &pvariant, &pblock));
  variant = pvariant == 2 && GpukitSGDIAMultVariantValid(&args, 2) ? 2 : 0;
  for (PetscInt j = 0; j < k; j++) {
    GpukitSGDIAPowersArgs e;
    GpukitCUDAReads       rd;
    const PetscScalar    *xa;
    PetscScalar          *w1;
    Vec                   xin = lean ? W[j] : V[j];

    rd.n = 0;
    if (ghosted) {
      PetscCall(DMGlobalToLocalBegin(sg->da, xin, INSERT_VALUES, xl));
      PetscCall(DMGlobalToLocalEnd(sg->da, xin, INSERT_VALUES, xl));
      xin = xl;
    }
    PetscCall(GpukitCUDAReadsGet(&rd, xin, &xa));
    e.xs = NULL;
    if (lean) {
      if (ghosted) e.xs = dla;
      else PetscCall(GpukitCUDAReadsGet(&rd, dinv, &e.xs));
    }
    PetscCall(GpukitCUDAPowersStepBegin(&rd, j, theta, sigma, gamma, dinv, V, W, &e, &w1));
    PetscCall(PetscLogGpuTimeBegin());
    PetscCallCUDA(GpukitSGDIAPowersCUDA(&args, &e, xa, w1, (int)pblock, variant, stream));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(GpukitCUDAPowersStepEnd(&rd, j, dinv, V, W, &e, &w1));
  }
  if (dla) PetscCall(VecCUDARestoreArrayRead(cu->dl, &dla));
  PetscCall(PetscLogGpuFlops((PetscLogDouble)k * (2.0 * (PetscLogDouble)sg->nv + 6.0 * (PetscLogDouble)sg->m)));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_PowersCUDA, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif /* GPUKIT_SGDIACUDA_AVAILABLE */
