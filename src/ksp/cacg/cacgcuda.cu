/*
   KSPCACG's CUDA backend (CACGBackend, cacgimpl.h): the Gram matrices of an outer iteration by one device pass
   (cacgkernels.cu, or for the lean basis cacggramkernels.cu) and one device-to-host copy, instead of one VecMDot (each
   with its own copy and synchronisation) per basis vector; the update of step 4 in one device pass. Built only
   against a PETSc with CUDA; KSPSolve_CACG() takes it for CUDA vectors (CACGGetBackendCUDA_Private()).
*/
#include <petscdevice_cuda.h>
#include "gpukitcuda.h"
#include "cacgimpl.h"
#include "cacgkernels.h"
#include "cacggramkernels.h"

static_assert(GPUKIT_CACG_UPDATE_MAX_M >= GPUKIT_CACG_MAX_M, "the update kernel takes every basis vector");
static_assert(GPUKIT_CACG_GRAMW_MAX_M >= GPUKIT_CACG_MAX_M, "the lean Gram kernel takes every basis vector");

/* the Gram kernels' device workspace, grown to need doubles (kept in cg->gramwork), and the stream to launch on */
static PetscErrorCode CACGGramWorkspace(KSP ksp, long long need, cudaStream_t *stream)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  if (need > cg->gramworksize) {
    if (cg->gramwork) PetscCallCUDA(cudaFree(cg->gramwork));
    cg->gramwork = NULL;
    PetscCallCUDA(cudaMalloc(&cg->gramwork, (size_t)need * sizeof(double)));
    cg->gramworksize = need;
  }
  PetscCall(GpukitCUDAGetStream("KSPCACG launches its Gram kernel", stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The local sums of the np inner products cg->pa[p] . cg->pb[p] into local[] (host), when every vector is a CUDA
   vector (done = PETSC_TRUE); otherwise nothing (done = PETSC_FALSE). */
static PetscErrorCode CACGGramCUDA(KSP ksp, PetscInt np, PetscScalar local[], PetscBool *done)
{
  KSP_CACG          *cg = (KSP_CACG *)ksp->data;
  const Vec         *pa = cg->pa, *pb = cg->pb;
  GpukitCACGGramArgs args;
  Vec                uniq[GPUKIT_CACG_GRAM_MAX_VECS];
  const PetscScalar *arr[GPUKIT_CACG_GRAM_MAX_VECS];
  PetscInt           nu = 0, nloc;
  long long          need;
  cudaStream_t       stream;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  if (!PetscDefined(USE_REAL_DOUBLE) || PetscDefined(USE_COMPLEX) || np > GPUKIT_CACG_GRAM_MAX_PAIRS) PetscFunctionReturn(PETSC_SUCCESS); /* the kernel is for real double */
  for (PetscInt p = 0; p < np; p++) {
    Vec v[2] = {pa[p], pb[p]};
    for (PetscInt t = 0; t < 2; t++) {
      PetscInt u = 0;
      while (u < nu && uniq[u] != v[t]) u++;
      if (u == nu) {
        PetscBool iscuda;
        PetscCall(PetscObjectTypeCompareAny((PetscObject)v[t], &iscuda, VECSEQCUDA, VECMPICUDA, ""));
        if (!iscuda || nu == GPUKIT_CACG_GRAM_MAX_VECS) PetscFunctionReturn(PETSC_SUCCESS);
        uniq[nu++] = v[t];
      }
      if (t == 0) args.a[p] = (unsigned char)u;
      else args.b[p] = (unsigned char)u;
    }
  }
  PetscCall(PetscLogEventBegin(KSP_CACG_GramCUDA, ksp, 0, 0, 0));
  PetscCall(VecGetLocalSize(uniq[0], &nloc));
  args.n      = nloc;
  args.nvec   = (int)nu;
  args.npairs = (int)np;
  for (PetscInt u = 0; u < nu; u++) {
    PetscCall(VecCUDAGetArrayRead(uniq[u], &arr[u]));
    args.v[u] = arr[u];
  }
  need = GpukitCACGGramWorkSize(&args);
  PetscCall(CACGGramWorkspace(ksp, need, &stream));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitCACGGramCUDA(&args, (double *)cg->gramwork, (double *)local, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuToCpu(np * sizeof(PetscScalar)));
  PetscCall(PetscLogGpuFlops(2.0 * np * nloc));
  for (PetscInt u = 0; u < nu; u++) PetscCall(VecCUDARestoreArrayRead(uniq[u], &arr[u]));
  PetscCall(PetscLogEventEnd(KSP_CACG_GramCUDA, ksp, 0, 0, 0));
  *done = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The lean basis's local sums into local[] (host): W^T D W, then W^T D^2 W (gd2), then W^T W (g1), full m x m
   matrices, then x.x (withx), with D = diag(cg->dinv); *nsum is their number. KSPSolve_CACG() chose the lean basis
   only on CUDA vectors: anything else is an error here. */
static PetscErrorCode CACGGramLeanCUDA(KSP ksp, PetscInt m, PetscBool gd2, PetscBool g1, PetscBool withx, PetscScalar local[], PetscInt *nsum)
{
  KSP_CACG           *cg = (KSP_CACG *)ksp->data;
  GpukitCACGGramWArgs args;
  const PetscScalar  *wa[GPUKIT_CACG_MAX_M], *da, *xa = NULL;
  PetscInt            nloc;
  long long           need;
  cudaStream_t        stream;

  PetscFunctionBegin;
  PetscCheck(m >= 1 && m <= GPUKIT_CACG_MAX_M && cg->dinv, PetscObjectComm((PetscObject)ksp), PETSC_ERR_PLIB, "KSPCACG lean basis: %" PetscInt_FMT " basis vectors, dinv %s", m, cg->dinv ? "set" : "missing");
  PetscCall(PetscLogEventBegin(KSP_CACG_GramCUDA, ksp, 0, 0, 0));
  PetscCall(PetscMemzero(&args, sizeof(args)));
  PetscCall(VecGetLocalSize(cg->W[0], &nloc));
  args.n   = nloc;
  args.m   = (int)m;
  args.gd2 = gd2 ? 1 : 0;
  args.g1  = g1 ? 1 : 0;
  for (PetscInt j = 0; j < m; j++) {
    PetscCall(VecCUDAGetArrayRead(cg->W[j], &wa[j]));
    args.w[j] = wa[j];
  }
  PetscCall(VecCUDAGetArrayRead(cg->dinv, &da));
  args.d = da;
  if (withx) {
    PetscCall(VecCUDAGetArrayRead(ksp->vec_sol, &xa));
    args.x = xa;
  }
  *nsum = (PetscInt)GpukitCACGGramWResultSize(&args);
  need  = GpukitCACGGramWWorkSize(&args);
  PetscCall(CACGGramWorkspace(ksp, need, &stream));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitCACGGramWCUDA(&args, (double *)cg->gramwork, (double *)local, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuToCpu(*nsum * sizeof(PetscScalar)));
  /* per row: m(m+1)/2 products for each matrix and the m scalings by d */
  PetscCall(PetscLogGpuFlops((m * (m + 1.0) * (1 + gd2 + g1) + 2.0 * m + (withx ? 2.0 : 0.0)) * nloc));
  if (xa) PetscCall(VecCUDARestoreArrayRead(ksp->vec_sol, &xa));
  PetscCall(VecCUDARestoreArrayRead(cg->dinv, &da));
  for (PetscInt j = 0; j < m; j++) PetscCall(VecCUDARestoreArrayRead(cg->W[j], &wa[j]));
  PetscCall(PetscLogEventEnd(KSP_CACG_GramCUDA, ksp, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the Gram kernels' workspace goes */
static PetscErrorCode CACGResetCUDA(KSP ksp)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  if (cg->gramwork) PetscCallCUDA(cudaFree(cg->gramwork));
  cg->gramwork     = NULL;
  cg->gramworksize = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Step 4 of an outer iteration in one device pass (GpukitCACGUpdateCUDA()): x += Y xc, Un = W pc, Rn = W zc and,
   with Jacobi (cg->dinv), Pn = dinv .* Un, Zn = dinv .* Rn, when every vector involved is a CUDA vector (done =
   PETSC_TRUE); otherwise nothing (done = PETSC_FALSE). The caller checks that the preconditioner is none (aliased)
   or Jacobi with cg->dinv, without a null space and not in a transpose solve. Purely local: no communication. */
static PetscErrorCode CACGUpdateCUDA(KSP ksp, PetscInt m, const double xc[], const double pc[], const double zc[], PetscBool *done)
{
  KSP_CACG            *cg = (KSP_CACG *)ksp->data;
  GpukitCACGUpdateArgs args;
  const PetscScalar   *ya[GPUKIT_CACG_MAX_M], *wa[GPUKIT_CACG_MAX_M], *da = NULL;
  PetscScalar         *xa, *una, *rna, *pna = NULL, *zna = NULL;
  const PetscBool      jac = (PetscBool)!cg->aliased, lean = cg->lean;
  Vec                  chk[2 * GPUKIT_CACG_MAX_M + 6];
  PetscInt             nc = 0, nloc;
  cudaStream_t         stream;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  if (!PetscDefined(USE_REAL_DOUBLE) || PetscDefined(USE_COMPLEX) || m < 1 || m > GPUKIT_CACG_UPDATE_MAX_M) PetscFunctionReturn(PETSC_SUCCESS);
  if (jac && !cg->dinv) PetscFunctionReturn(PETSC_SUCCESS);
  chk[nc++] = ksp->vec_sol;
  chk[nc++] = cg->Un;
  chk[nc++] = cg->Rn;
  for (PetscInt j = 0; j < m; j++) chk[nc++] = cg->W[j];
  if (jac) {
    chk[nc++] = cg->Pn;
    chk[nc++] = cg->Zn;
    chk[nc++] = cg->dinv;
    for (PetscInt j = 0; j < m && !lean; j++) chk[nc++] = cg->Y[j]; /* lean: Y = dinv .* W in the kernel */
  }
  for (PetscInt k = 0; k < nc; k++) {
    PetscBool iscuda;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)chk[k], &iscuda, VECSEQCUDA, VECMPICUDA, ""));
    if (!iscuda) PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscLogEventBegin(KSP_CACG_UpdateCUDA, ksp, 0, 0, 0));
  PetscCall(PetscMemzero(&args, sizeof(args)));
  PetscCall(VecGetLocalSize(ksp->vec_sol, &nloc));
  args.n = nloc;
  args.m = (int)m;
  for (PetscInt j = 0; j < m; j++) {
    PetscCall(VecCUDAGetArrayRead(cg->W[j], &wa[j]));
    args.w[j]  = wa[j];
    args.xc[j] = xc[j];
    args.pc[j] = pc[j];
    args.zc[j] = zc[j];
    if (jac && !lean) {
      PetscCall(VecCUDAGetArrayRead(cg->Y[j], &ya[j]));
      args.y[j] = ya[j];
    } else args.y[j] = jac ? NULL : wa[j]; /* lean: not stored; aliased: Y == W */
  }
  PetscCall(VecCUDAGetArray(ksp->vec_sol, &xa));
  PetscCall(VecCUDAGetArrayWrite(cg->Un, &una));
  PetscCall(VecCUDAGetArrayWrite(cg->Rn, &rna));
  args.x  = xa;
  args.un = una;
  args.rn = rna;
  if (jac) {
    PetscCall(VecCUDAGetArrayRead(cg->dinv, &da));
    PetscCall(VecCUDAGetArrayWrite(cg->Pn, &pna));
    PetscCall(VecCUDAGetArrayWrite(cg->Zn, &zna));
    args.dinv = da;
    args.pn   = pna;
    args.zn   = zna;
  }
  PetscCall(GpukitCUDAGetStream("KSPCACG launches its update kernel", &stream));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitCACGUpdateCUDA(&args, stream));
  PetscCall(PetscLogGpuTimeEnd());
  /* x += Y xc: 2m flops a row (lean: and the scaling); Un, Rn: 2m - 1 each; Pn, Zn: 1 each */
  PetscCall(PetscLogGpuFlops((2.0 * m + 2.0 * (2.0 * m - 1.0) + (jac ? 2.0 : 0.0) + (lean ? 1.0 : 0.0)) * nloc));
  if (jac) {
    PetscCall(VecCUDARestoreArrayWrite(cg->Zn, &zna));
    PetscCall(VecCUDARestoreArrayWrite(cg->Pn, &pna));
    PetscCall(VecCUDARestoreArrayRead(cg->dinv, &da));
  }
  PetscCall(VecCUDARestoreArrayWrite(cg->Rn, &rna));
  PetscCall(VecCUDARestoreArrayWrite(cg->Un, &una));
  PetscCall(VecCUDARestoreArray(ksp->vec_sol, &xa));
  for (PetscInt j = 0; j < m; j++) {
    if (jac && !lean) PetscCall(VecCUDARestoreArrayRead(cg->Y[j], &ya[j]));
    PetscCall(VecCUDARestoreArrayRead(cg->W[j], &wa[j]));
  }
  PetscCall(PetscLogEventEnd(KSP_CACG_UpdateCUDA, ksp, 0, 0, 0));
  *done = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const CACGBackend CACGBackendCUDA = {"cuda", PETSC_TRUE, CACGGramCUDA, CACGGramLeanCUDA, CACGUpdateCUDA, CACGResetCUDA};

/* The CUDA backend for vectors like v: a CUDA vector (VECSEQCUDA, VECMPICUDA) not bound to the CPU; else NULL */
PetscErrorCode CACGGetBackendCUDA_Private(Vec v, const CACGBackend **be)
{
  PetscBool iscuda, bound;

  PetscFunctionBegin;
  *be = NULL;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)v, &iscuda, VECSEQCUDA, VECMPICUDA, ""));
  if (!iscuda) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecBoundToCPU(v, &bound));
  if (!bound) *be = &CACGBackendCUDA;
  PetscFunctionReturn(PETSC_SUCCESS);
}
