/*
   KSPCACG: communication-avoiding (s-step) preconditioned conjugate gradients, the algorithm. User documentation:
   docs/cacg.md; the files of the type: cacgimpl.h.

   Notation: A SPD, M the preconditioner (PCApply gives M^{-1}), K = M^{-1} A. CG keeps x, r = b - A x,
   z = M^{-1} r and the direction p; this method also keeps u = M p. Each outer iteration does s CG steps:

   1. Matrix powers (CACGPowers): with a three-term polynomial basis rho_0..rho_s,
        A rho_j(K) = M (sigma_j rho_{j+1}(K) + theta_j rho_j(K) + gamma_j rho_{j-1}(K)),
      build Y = [rho_0(K) p .. rho_s(K) p | rho_0(K) z .. rho_{s-1}(K) z]   (m = 2s+1 columns)
      and   W = M Y, column by column: W(:,j+1) = (A Y(:,j) - theta_j W(:,j) - gamma_j W(:,j-1)) / sigma_j and
      Y(:,j+1) = M^{-1} W(:,j+1). W(:,0) = u and r, so M itself is never applied. 2s-1 MatMult and PCApply, or one
      call of the matrix's matrix powers kernel (gpukitmat.h). Without a preconditioner W is Y.
   2. ONE global reduction (CACGGram): the Gram matrix G = W^T Y = Y^T M Y (upper triangle) and, in the same
      reduction, the norm Gram (Y^T Y for the preconditioned norm, W^T W for the unpreconditioned one; nothing for
      the natural norm or without a preconditioner), column norms and ||x|| for residual replacement, and w_1^T y_0
      for the symmetry check of M: local sums in one pass (the backend's: a host loop, or the CUDA kernel of
      cacgkernels.cu) and one MPI_Allreduce, or VecMDotBegin()/End() around one PetscCommSplitReductionBegin()
      (cacggram.c).
   3. s CG steps on coordinates in Y, on the host in double (the dense algebra in cacgbasis.c): with B the change of
      basis (K Y(:,j) = Y B(:,j)), (r,z) = z'^T G z', (p, A p) = p'^T G B p', ||z||^2 = z'^T Y^T Y z', ... Each step
      calls KSPMonitor and the convergence test, so iteration counts and monitors are those of CG.
   4. x += Y x', u = W p', r = W z' (VecMAXPY, or the backend's update kernel), then p = M^{-1} u and z = M^{-1} r
      (PCApply): the z-space vectors stay M^{-1} of the r-space ones (updating both from the coordinates lets them
      drift apart, which on badly scaled problems stalls or breaks the iteration).

   Precision: each quadratic form q = a^T G b is checked against its rounding scale eps (|a|^T d)(|b|^T d),
   d_i = sqrt(G_ii). When (p, Ap) has lost more than CACG_LOSS of its relative accuracy the outer iteration ends
   before that step and s is lowered for the rest of the solve (a truncation); when (r, z) or the norm has, the
   step is finished and those two are computed directly (one more reduction). No step ever uses an unresolved
   number, so a poor basis costs iterations, not correctness.

   The steps whose code depends on where the vectors live (the Gram sums, the update) go through the backend table
   (CACGBackend, cacgimpl.h) chosen once per solve: this file holds no device code.
*/
#include "cacgimpl.h"

/* ---------------------------------------------------------------------------------------------------------- */
/* vectors                                                                                                     */

PetscErrorCode CACGFreeVectors(KSP ksp)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;
  PetscInt  n  = 2 * cg->sallocated - 1;

  PetscFunctionBegin;
  if (!cg->sallocated) PetscFunctionReturn(PETSC_SUCCESS);
  if (cg->wpool != cg->ypool) PetscCall(VecDestroyVecs(n, &cg->wpool));
  if (cg->ypool) PetscCall(VecDestroyVecs(n, &cg->ypool));
  cg->wpool = cg->ypool = NULL;
  PetscCall(VecDestroy(&cg->yt));
  if (cg->U != cg->P) {
    PetscCall(VecDestroy(&cg->U));
    PetscCall(VecDestroy(&cg->R));
    PetscCall(VecDestroy(&cg->Un));
    PetscCall(VecDestroy(&cg->Rn));
  }
  cg->U = cg->R = cg->Un = cg->Rn = NULL;
  PetscCall(VecDestroy(&cg->P));
  PetscCall(VecDestroy(&cg->Z));
  PetscCall(VecDestroy(&cg->Pn));
  PetscCall(VecDestroy(&cg->Zn));
  PetscCall(VecDestroy(&cg->dinv));
  cg->sallocated = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the vectors for s; lean: no pool for Y (then not aliased) */
static PetscErrorCode CACGAllocate(KSP ksp, PetscBool aliased, PetscBool lean)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;
  Vec      *v;

  PetscFunctionBegin;
  if (cg->sallocated == cg->s && cg->aliased == aliased && (cg->ypool == NULL) == lean) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CACGFreeVectors(ksp));
  if (lean) {
    PetscCall(KSPCreateVecs(ksp, 2 * cg->s - 1, &cg->wpool, 0, NULL));
    PetscCall(KSPCreateVecs(ksp, 1, &v, 0, NULL));
    cg->yt = v[0];
    PetscCall(PetscFree(v));
  } else {
    PetscCall(KSPCreateVecs(ksp, 2 * cg->s - 1, &cg->ypool, 0, NULL));
    if (aliased) cg->wpool = cg->ypool;
    else PetscCall(KSPCreateVecs(ksp, 2 * cg->s - 1, &cg->wpool, 0, NULL));
  }
  PetscCall(KSPCreateVecs(ksp, aliased ? 4 : 8, &v, 0, NULL));
  cg->P  = v[0];
  cg->Z  = v[1];
  cg->Pn = v[2];
  cg->Zn = v[3];
  if (aliased) {
    cg->U  = cg->P;
    cg->R  = cg->Z;
    cg->Un = cg->Pn;
    cg->Rn = cg->Zn;
  } else {
    cg->U  = v[4];
    cg->R  = v[5];
    cg->Un = v[6];
    cg->Rn = v[7];
  }
  PetscCall(PetscFree(v)); /* the array only; the vectors are kept */
  cg->sallocated = cg->s;
  cg->aliased    = aliased;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the basis arrays of one outer iteration of s steps: Y = [P pool(0..s-1) Z pool(s..2s-2)], W alike */
static void CACGBasisArrays(KSP_CACG *cg, PetscInt s)
{
  const PetscInt o = s + 1;

  cg->Y[0] = cg->P;
  cg->W[0] = cg->U;
  for (PetscInt j = 1; j <= s; j++) {
    cg->Y[j] = cg->ypool ? cg->ypool[j - 1] : NULL; /* NULL: the lean basis */
    cg->W[j] = cg->wpool[j - 1];
  }
  cg->Y[o] = cg->Z;
  cg->W[o] = cg->R;
  for (PetscInt j = 1; j < s; j++) {
    cg->Y[o + j] = cg->ypool ? cg->ypool[s + j - 1] : NULL;
    cg->W[o + j] = cg->wpool[s + j - 1];
  }
}

/* v += Y c over the first m columns; with the lean basis Y = dinv .* W (W c formed in cg->yt) */
static PetscErrorCode CACGAddBasis(KSP ksp, PetscInt m, const PetscScalar c[], Vec v)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  if (!cg->lean) {
    PetscCall(VecMAXPY(v, m, c, cg->Y));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(VecSet(cg->yt, 0.0));
  PetscCall(VecMAXPY(cg->yt, m, c, cg->W));
  PetscCall(VecPointwiseMult(cg->yt, cg->dinv, cg->yt));
  PetscCall(VecAXPY(v, 1.0, cg->yt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------------------- */
/* matrix powers                                                                                               */

/* The basis without a matrix powers kernel, for any preconditioner: k KSP_MatMult + KSP_PCApply. With PCNONE or
   PCJACOBI it computes what GpukitMatMatrixPowersReference() (gpukitmat.h) does, in the same order. */
static PetscErrorCode CACGPowersDefault(KSP ksp, Mat A, PetscInt k, const PetscReal *theta, const PetscReal *sigma, const PetscReal *gamma, Vec *Y, Vec *W, PetscBool aliased)
{
  PetscFunctionBegin;
  for (PetscInt j = 0; j < k; j++) {
    const PetscScalar a = 1.0 / sigma[j], b = -theta[j] / sigma[j], c = -gamma[j] / sigma[j];

    PetscCall(KSP_MatMult(ksp, A, Y[j], W[j + 1]));
    if (j > 0 && gamma[j] != 0.0) PetscCall(VecAXPBYPCZ(W[j + 1], b, c, a, W[j], W[j - 1]));
    else if (theta[j] != 0.0) PetscCall(VecAXPBY(W[j + 1], b, a, W[j]));
    else if (sigma[j] != 1.0) PetscCall(VecScale(W[j + 1], a));
    if (!aliased) PetscCall(KSP_PCApply(ksp, W[j + 1], Y[j + 1]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the matrix powers kernel for A, from its capabilities (GpukitMatGetCaps(): what it composes as "MatMatrixPowers_C",
   or gpukit's CSR kernel for MATSEQAIJCUSPARSE), or NULL (none, -ksp_cacg_matrix_powers 0, a transpose solve) */
static PetscErrorCode CACGGetHook(KSP ksp, Mat A, GpukitMatMatrixPowersFn *hook)
{
  KSP_CACG     *cg = (KSP_CACG *)ksp->data;
  GpukitMatCaps caps;

  PetscFunctionBegin;
  *hook = NULL;
  if (!cg->usehook || ksp->transpose_solve) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GpukitMatGetCaps(A, &caps));
  *hook = caps.powers;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* this solve's hook (cg->hook) when the preconditioner is none or Jacobi (cg->dinv is set only for Jacobi); else the
   default */
static PetscErrorCode CACGPowers(KSP ksp, Mat A, PetscInt k, Vec *Y, Vec *W)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  if (k < 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(KSP_CACG_MPK, ksp, 0, 0, 0));
  cg->hookused = PETSC_TRUE;
  if (cg->tproducts && (cg->lean || (cg->hook && (cg->aliased || cg->dinv)))) { /* the tuner's candidate: s products instead of the kernel */
    cg->hookused = PETSC_FALSE;
    if (cg->lean) { /* Y = dinv .* W one vector at a time in cg->yt: each step reads y_j and writes y_{j+1} there */
      Vec V[GPUKIT_CACG_MAX_S + 1];
      for (PetscInt j = 0; j <= k; j++) V[j] = cg->yt;
      PetscCall(VecPointwiseMult(cg->yt, cg->dinv, W[0]));
      PetscCall(GpukitMatMatrixPowersReference(A, cg->dinv, k, cg->theta, cg->sigma, cg->gamma, V, W));
    } else PetscCall(GpukitMatMatrixPowersReference(A, cg->aliased ? NULL : cg->dinv, k, cg->theta, cg->sigma, cg->gamma, Y, W));
  } else if (cg->lean) PetscCall((*cg->hook)(A, cg->dinv, k, cg->theta, cg->sigma, cg->gamma, NULL, W)); /* checked in KSPSolve_CACG() */
  else if (cg->hook && (cg->aliased || cg->dinv)) PetscCall((*cg->hook)(A, cg->aliased ? NULL : cg->dinv, k, cg->theta, cg->sigma, cg->gamma, Y, W));
  else {
    cg->hookused = PETSC_FALSE;
    PetscCall(CACGPowersDefault(ksp, A, k, cg->theta, cg->sigma, cg->gamma, Y, W, cg->aliased));
  }
  PetscCall(PetscLogEventEnd(KSP_CACG_MPK, ksp, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------------------- */

/* one more iterate: log, monitor, test */
static PetscErrorCode CACGTest(KSP ksp, PetscReal rnorm)
{
  PetscFunctionBegin;
  ksp->its++;
  ksp->rnorm = rnorm;
  PetscCall(KSPLogResidualHistory(ksp, rnorm));
  PetscCall(KSPMonitor(ksp, ksp->its, rnorm));
  PetscCall((*ksp->converged)(ksp, ksp->its, rnorm, &ksp->reason, ksp->cnvP));
  if (!ksp->reason && ksp->its >= ksp->max_it) ksp->reason = KSP_DIVERGED_ITS;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the norm of the current residual from (r, z) and the direct norms, by the KSP's norm type */
static PetscReal CACGNorm(KSP ksp, PetscReal rz, PetscReal zz, PetscReal rr)
{
  switch (ksp->normtype) {
  case KSP_NORM_PRECONDITIONED:
    return PetscSqrtReal(zz);
  case KSP_NORM_UNPRECONDITIONED:
    return PetscSqrtReal(rr);
  case KSP_NORM_NATURAL:
    return PetscSqrtReal(PetscAbsReal(rz));
  default:
    return 0.0;
  }
}

/* (r, z) and the norm's square, directly: one split reduction */
static PetscErrorCode CACGDirectDots(KSP ksp, Vec R, Vec Z, PetscReal *rz, PetscReal *nrm)
{
  KSP_CACG   *cg = (KSP_CACG *)ksp->data;
  PetscScalar d  = 0.0;
  PetscReal   n  = 0.0;

  PetscFunctionBegin;
  PetscCall(VecDotBegin(R, Z, &d));
  if (ksp->normtype == KSP_NORM_PRECONDITIONED) PetscCall(VecNormBegin(Z, NORM_2, &n));
  else if (ksp->normtype == KSP_NORM_UNPRECONDITIONED) PetscCall(VecNormBegin(R, NORM_2, &n));
  PetscCall(PetscCommSplitReductionBegin(PetscObjectComm((PetscObject)ksp)));
  PetscCall(VecDotEnd(R, Z, &d));
  if (ksp->normtype == KSP_NORM_PRECONDITIONED) PetscCall(VecNormEnd(Z, NORM_2, &n));
  else if (ksp->normtype == KSP_NORM_UNPRECONDITIONED) PetscCall(VecNormEnd(R, NORM_2, &n));
  cg->stats.reductions++;
  *rz = PetscRealPart(d);
  if (ksp->normtype == KSP_NORM_NATURAL) n = PetscSqrtReal(PetscAbsReal(*rz));
  *nrm = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* r = b - A x, z = M^{-1} r */
static PetscErrorCode CACGResidual(KSP ksp, Mat A, PetscBool zero)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  if (zero) PetscCall(VecCopy(ksp->vec_rhs, cg->R));
  else {
    PetscCall(KSP_MatMult(ksp, A, ksp->vec_sol, cg->R));
    PetscCall(VecAYPX(cg->R, -1.0, ksp->vec_rhs));
  }
  if (!cg->aliased) PetscCall(KSP_PCApply(ksp, cg->R, cg->Z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* set a divergence reason; an error instead with KSPSetErrorIfNotConverged() */
static PetscErrorCode CACGDiverged(KSP ksp, KSPConvergedReason reason, const char *why)
{
  PetscFunctionBegin;
  PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "KSPCACG: %s", why);
  PetscCall(PetscInfo(ksp, "diverged: %s\n", why));
  ksp->reason = reason;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Plain PCG steps that estimate the spectrum of K (Ritz values of the Lanczos matrix of the CG coefficients).
   On entry delta = (r, z), p = z (or the current direction), u = M p. */
static PetscErrorCode CACGEstimate(KSP ksp, Mat A, PetscInt nsteps, PetscReal *delta)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;
  double    alpha[GPUKIT_CACG_MAX_EIG], beta[GPUKIT_CACG_MAX_EIG], td[GPUKIT_CACG_MAX_EIG], te[GPUKIT_CACG_MAX_EIG], ev[GPUKIT_CACG_MAX_EIG];
  PetscInt  n = 0;
  Vec       Wv = cg->Zn; /* A p */

  PetscFunctionBegin;
  for (PetscInt k = 0; k < nsteps && !ksp->reason; k++) {
    PetscScalar pw;
    PetscReal   rz, nrm;

    PetscCall(KSP_MatMult(ksp, A, cg->P, Wv));
    PetscCall(VecDot(cg->P, Wv, &pw));
    cg->stats.reductions++;
    if (PetscIsInfOrNanScalar(pw)) {
      PetscCall(CACGDiverged(ksp, KSP_DIVERGED_NANORINF, "Inf or NaN in (p, Ap)"));
      break;
    }
    if (PetscRealPart(pw) <= 0.0) {
      PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_MAT, "(p, Ap) <= 0: the matrix is not positive definite"));
      break;
    }
    alpha[n] = *delta / PetscRealPart(pw);
    PetscCall(VecAXPY(ksp->vec_sol, alpha[n], cg->P));
    PetscCall(VecAXPY(cg->R, -alpha[n], Wv));
    if (!cg->aliased) PetscCall(KSP_PCApply(ksp, cg->R, cg->Z));
    PetscCall(CACGDirectDots(ksp, cg->R, cg->Z, &rz, &nrm));
    if (PetscIsInfOrNanReal(rz) || PetscIsInfOrNanReal(nrm)) {
      PetscCall(CACGDiverged(ksp, KSP_DIVERGED_NANORINF, "Inf or NaN in (r, z)"));
      break;
    }
    cg->stats.cgsteps++;
    n++;
    PetscCall(CACGTest(ksp, nrm));
    if (ksp->reason) break;
    if (rz < 0.0) {
      PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_PC, "(r, M^{-1} r) < 0: the preconditioner is not positive definite"));
      break;
    }
    beta[n - 1] = rz / *delta;
    *delta      = rz;
    PetscCall(VecAYPX(cg->P, beta[n - 1], cg->Z));
    if (!cg->aliased) PetscCall(VecAYPX(cg->U, beta[n - 1], cg->R));
  }
  if (ksp->reason || n == 0) PetscFunctionReturn(PETSC_SUCCESS);
  if (!cg->aliased) PetscCall(KSP_PCApply(ksp, cg->U, cg->P)); /* p = M^{-1} u exactly, as the s-step phase keeps it */
  PetscCall(PetscLogEventBegin(KSP_CACG_Eig, ksp, 0, 0, 0));
  for (PetscInt k = 0; k < n; k++) {
    td[k] = 1.0 / alpha[k] + (k > 0 ? beta[k - 1] / alpha[k - 1] : 0.0);
    if (k < n - 1) te[k] = PetscSqrtReal(beta[k]) / alpha[k];
  }
  CACGTridiagEigenvalues(n, td, te, ev);
  cg->nritz = n;
  for (PetscInt k = 0; k < n; k++) cg->ritz[k] = ev[k];
  PetscCall(PetscLogEventEnd(KSP_CACG_Eig, ksp, 0, 0, 0));
  PetscCall(PetscInfo(ksp, "%" PetscInt_FMT " CG steps: Ritz values of M^{-1}A in [%g, %g]\n", n, ev[0], ev[n - 1]));
  if (!(ev[0] > 0.0)) PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_MAT, "a Ritz value of M^{-1}A is not positive: the operator is not positive definite"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ||A||_inf for residual replacement, once per operator state; < 0 when the matrix cannot give it */
static PetscErrorCode CACGMatNorm(KSP ksp, Mat A)
{
  KSP_CACG        *cg = (KSP_CACG *)ksp->data;
  PetscObjectState st;
  PetscBool        has;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &st));
  if (cg->anormA == A && cg->anormstate == st) PetscFunctionReturn(PETSC_SUCCESS);
  cg->anormA     = A;
  cg->anormstate = st;
  cg->anorm      = -1.0;
  PetscCall(MatHasOperation(A, MATOP_NORM, &has));
  if (has) {
    PetscCall(MatNorm(A, NORM_INFINITY, &cg->anorm));
    cg->stats.reductions++;
  } else PetscCall(PetscInfo(ksp, "Matrix type %s has no MatNorm(): no residual replacement\n", ((PetscObject)A)->type_name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------------------- */
/* the solve                                                                                                   */

/* The set-up of one solve: the matrix powers kernel, the backend, the vectors, with the lean basis (Y = dinv .* W
   never stored) where the matrix powers kernel, the backend's Gram and update kernels can all form Y where they read
   it (Jacobi, both fused steps, a backend that has them), and the diagonal preconditioner for a matrix powers kernel
   and for the backend's update: the PC applied to ones */
static PetscErrorCode CACGSolveSetUp(KSP ksp, Mat A, MatNullSpace nsp)
{
  KSP_CACG               *cg = (KSP_CACG *)ksp->data;
  PetscBool               isnone, isjac, devupd, lean;
  GpukitMatMatrixPowersFn hook;
  const CACGBackend      *be;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCNONE, &isnone));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCJACOBI, &isjac));
  PetscCall(CACGGetHook(ksp, A, &hook));
  cg->hook = hook;
  /* the lean kernels are the backend's: the solution's type says where the vectors live */
  PetscCall(CACGGetBackend(ksp->vec_sol, &be));
  lean = (PetscBool)(cg->leanopt && isjac && !nsp && hook && cg->fusedgram && cg->fusedupdate && !ksp->transpose_solve && PetscDefined(USE_REAL_DOUBLE) && !PetscDefined(USE_COMPLEX) && be->gramlean && be->update);
  PetscCall(CACGAllocate(ksp, (PetscBool)(isnone && !nsp), lean));
  /* the solve's backend: that of the vectors KSPCreateVecs() made */
  PetscCall(CACGGetBackend(cg->P, &be));
  if (cg->be && cg->be != be && cg->be->reset) PetscCall((*cg->be->reset)(ksp));
  cg->be = be;
  devupd = (PetscBool)(cg->fusedupdate && !ksp->transpose_solve && be->update);
  if (lean && !devupd) PetscCall(CACGAllocate(ksp, (PetscBool)(isnone && !nsp), (lean = PETSC_FALSE))); /* KSPCreateVecs() made host vectors after all */
  cg->lean = lean;
  PetscCall(PetscInfo(ksp, "backend %s, matrix powers kernel %s, lean basis %s\n", be->name, hook ? "yes" : "no", lean ? "yes" : "no"));
  if ((hook || devupd) && isjac && !nsp) {
    Vec one = cg->Pn, t = cg->Zn; /* free until the first update (not aliased: Jacobi) */
    PetscCall(VecSet(one, 1.0));
    if (!cg->dinv) {
      PetscCall(VecDuplicate(cg->P, &cg->dinv));
      PetscCall(PCApply(ksp->pc, one, cg->dinv));
    } else { /* dinv keeps its object state when the diagonal did not change: a hook may cache what it derives from it */
      PetscReal diff;
      PetscCall(PCApply(ksp->pc, one, t));
      PetscCall(VecWAXPY(one, -1.0, cg->dinv, t));
      PetscCall(VecNorm(one, NORM_1, &diff)); /* 0 exactly when no entry changed (NORM_1: no copy logged on CUDA vectors) */
      if (diff != 0.0) PetscCall(VecCopy(t, cg->dinv));
    }
  } else PetscCall(VecDestroy(&cg->dinv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* r, z, p = z, u = r, the first norm and its test, and the spectrum: given, kept from the last solve with the same
   operators, or estimated by plain CG steps. On return delta = (r, z); ksp->reason set: the solve is over. */
static PetscErrorCode CACGStart(KSP ksp, Mat A, Mat Pmat, PetscReal *delta)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;
  PetscReal nrm;

  PetscFunctionBegin;
  PetscCall(CACGResidual(ksp, A, ksp->guess_zero));
  PetscCall(VecCopy(cg->Z, cg->P));
  if (!cg->aliased) PetscCall(VecCopy(cg->R, cg->U));
  PetscCall(CACGDirectDots(ksp, cg->R, cg->Z, delta, &nrm));
  KSPCheckNorm(ksp, nrm);
  KSPCheckDot(ksp, *delta);
  cg->rnorm0 = nrm;
  ksp->rnorm = nrm;
  PetscCall(KSPLogResidualHistory(ksp, nrm));
  PetscCall(KSPMonitor(ksp, 0, nrm));
  PetscCall((*ksp->converged)(ksp, 0, nrm, &ksp->reason, ksp->cnvP));
  if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS);
  if (*delta < 0.0) {
    PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_PC, "(r, M^{-1} r) < 0: the preconditioner is not positive definite"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (*delta == 0.0) {
    PetscCall(CACGDiverged(ksp, KSP_DIVERGED_BREAKDOWN, "(r, M^{-1} r) = 0 with a nonzero residual: the preconditioner is singular"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (cg->basis != KSP_CACG_BASIS_MONOMIAL && !cg->eiggiven) {
    PetscObjectState sa, sp, spc;
    PetscCall(PetscObjectStateGet((PetscObject)A, &sa));
    PetscCall(PetscObjectStateGet((PetscObject)Pmat, &sp));
    PetscCall(PetscObjectStateGet((PetscObject)ksp->pc, &spc));
    if (!(cg->nritz && cg->estA == A && cg->estP == Pmat && cg->estAstate == sa && cg->estPstate == sp && cg->estPCstate == spc)) {
      PetscInt steps = cg->eigsteps ? cg->eigsteps : PetscMax(2 * cg->s, 10);
      cg->nritz      = 0;
      PetscCall(CACGEstimate(ksp, A, PetscMin(steps, GPUKIT_CACG_MAX_EIG), delta));
      if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS);
      cg->estA       = A;
      cg->estP       = Pmat;
      cg->estAstate  = sa;
      cg->estPstate  = sp;
      cg->estPCstate = spc;
    }
  }
  PetscCall(CACGSetSpectrum(ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The diagonal of G (y^T M y >= 0) into d, that of Gn into dn */
static PetscErrorCode CACGGramDiagonal(KSP ksp, PetscInt m, double d[], double dn[])
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < m; i++) {
    if (cg->G[i * m + i] < 0.0) {
      PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_PC, "y^T M y < 0 for a basis vector y: the preconditioner is not positive definite"));
      break;
    }
    d[i]  = PetscSqrtReal(cg->G[i * m + i]);
    dn[i] = PetscSqrtReal(PetscAbsReal(cg->Gn[i * m + i]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Residual replacement (van der Vorst and Ye; Carson and Demmel): dev estimates ||b - A x - r||; replace says
   whether to replace r at the end of this outer iteration. o: the column of r in W. */
static void CACGDeviation(KSP_CACG *cg, PetscInt o, PetscBool *replace)
{
  const double eps = PETSC_MACHINE_EPSILON, epshat = PetscSqrtReal(PETSC_MACHINE_EPSILON);
  const double rk  = cg->wnrm[o];

  *replace = PETSC_FALSE;
  if (cg->devreset) {
    cg->dev = cg->devinit = eps * (cg->anorm * cg->xnrm + rk);
    cg->devreset          = PETSC_FALSE;
  } else {
    cg->dev += eps * (cg->anorm * cg->xnrm + cg->inc);
    if (cg->devprev <= epshat * cg->rprev && cg->dev > epshat * rk && cg->dev > 1.1 * cg->devinit) *replace = PETSC_TRUE;
  }
  cg->devprev = cg->dev;
  cg->rprev   = rk;
}

/* Symmetry: G = W^T Y = Y^T M Y is symmetric when M is, S = G B = Y^T A Y (columns with a successor) when A is. Beyond
   rounding (CACG_ASYM) the solve goes on while the asymmetry is small against the symmetric part (Dirichlet rows
   without symmetric elimination, as KSPCG tolerates), and stops above CACG_ASYM_REL. */
static PetscErrorCode CACGCheckSymmetry(KSP ksp, PetscInt m, PetscInt s, const double d[])
{
  KSP_CACG *cg    = (KSP_CACG *)ksp->data;
  double    round = 0.0, rel = 0.0;
  PetscBool pcsym = PETSC_TRUE;

  PetscFunctionBegin;
  if (!cg->aliased) {
    round = PetscAbsReal(cg->g10 - cg->G[1]) / (PETSC_MACHINE_EPSILON * d[0] * d[1]);
    if (round > CACG_ASYM) {
      rel   = PetscAbsReal(cg->g10 - cg->G[1]) / (d[0] * d[1]);
      pcsym = PETSC_FALSE;
    }
    if (rel > CACG_ASYM_REL) {
      char why[256];
      PetscCall(PetscSNPrintf(why, sizeof(why), "y^T M^T y' and y'^T M^T y differ by %.3g of ||y||_M ||y'||_M for basis vectors y, y': the preconditioner is not symmetric", rel));
      PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_PC, why));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    if (rel > cg->stats.pcasymmetry) cg->stats.pcasymmetry = rel;
  }
  CACGAsymmetry(m, s, cg->G, cg->B, d, &round, &rel);
  if (rel > CACG_ASYM_REL) { /* with a non-symmetric M, S is not symmetric either: blame M */
    char why[256];
    PetscCall(PetscSNPrintf(why, sizeof(why), "y^T A y' and y'^T A y differ by %.3g of ||y||_A ||y'||_A for basis vectors y, y' (from the Gram matrix, which assumes M symmetric): the %s is not symmetric", rel, pcsym ? "matrix" : "preconditioner"));
    PetscCall(CACGDiverged(ksp, pcsym ? KSP_DIVERGED_INDEFINITE_MAT : KSP_DIVERGED_INDEFINITE_PC, why));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (rel > cg->stats.asymmetry) cg->stats.asymmetry = rel;
  cg->asym = PetscMax(cg->asym, round);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Step 3: up to s CG steps on the coordinates pc, zc (in), cg->xc (out) with the Gram matrices, each monitored and
   tested. *steps: the steps done; *direct: the last one lost the precision of (r, z) or the norm in the Gram form
   (to be computed directly); a loss in (p, Ap) ends the outer iteration before the step and lowers cg->scur. */
static PetscErrorCode CACGInnerSteps(KSP ksp, PetscInt s, const double d[], const double dn[], double pc[], double zc[], PetscReal *delta, PetscInt *steps, PetscBool *direct)
{
  KSP_CACG    *cg = (KSP_CACG *)ksp->data;
  const PetscInt m = 2 * s + 1;
  const double *G = cg->G, *Gn = cg->Gn, *B = cg->B;
  double       *xc = cg->xc, wc[GPUKIT_CACG_MAX_M], dl, worst = 0.0;
  PetscInt      j;

  PetscFunctionBegin;
  *direct = PETSC_FALSE;
  for (PetscInt i = 0; i < m; i++) xc[i] = 0.0;
  cg->mcur  = m;
  cg->inner = PETSC_TRUE; /* KSPBuildSolution() adds Y xc */
  for (j = 0; j < s; j++) {
    double pap, rz, nn, alpha, beta;

    for (PetscInt i = 0; i < m; i++) {
      wc[i] = 0.0;
      for (PetscInt k = 0; k < m; k++) wc[i] += B[i * m + k] * pc[k];
    }
    pap   = CACGQuad(m, G, pc, wc);
    dl    = CACGLoss(pap, CACGScale(m, pc, d), CACGScale(m, wc, d));
    worst = PetscMax(worst, dl);
    if (dl > CACG_LOSS) {
      if (j == 0) {
        PetscCall(CACGDiverged(ksp, KSP_DIVERGED_BREAKDOWN, "the s-step basis lost the precision of (p, Ap) in the first step: use a smaller s or another basis"));
      } else {
        PetscCall(PetscInfo(ksp, "outer %" PetscInt_FMT ": (p, Ap) of step %" PetscInt_FMT " has relative error %g: s lowered from %" PetscInt_FMT " to %" PetscInt_FMT "\n", cg->stats.outer, j, dl, s, j));
        cg->stats.truncations++;
        cg->scur = j;
        cg->scap = j;
      }
      break;
    }
    if (pap <= 0.0) {
      PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_MAT, "(p, Ap) <= 0: the matrix is not positive definite"));
      break;
    }
    alpha = *delta / pap;
    for (PetscInt i = 0; i < m; i++) {
      xc[i] += alpha * pc[i];
      zc[i] -= alpha * wc[i];
    }
    rz = CACGQuad(m, G, zc, zc);
    dl = CACGLoss(rz, CACGScale(m, zc, d), CACGScale(m, zc, d));
    nn = 0.0;
    if (ksp->normtype == KSP_NORM_PRECONDITIONED || ksp->normtype == KSP_NORM_UNPRECONDITIONED) {
      double sz = CACGScale(m, zc, dn);
      nn        = CACGQuad(m, Gn, zc, zc);
      dl        = PetscMax(dl, CACGLoss(nn, sz, sz));
    }
    worst = PetscMax(worst, dl);
    if (dl > CACG_LOSS) { /* finish this step with direct inner products */
      *direct = PETSC_TRUE;
      j++;
      break;
    }
    if (rz < 0.0) {
      j++;
      PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_PC, "(r, M^{-1} r) < 0: the preconditioner is not positive definite"));
      break;
    }
    PetscCall(CACGTest(ksp, CACGNorm(ksp, rz, nn, nn)));
    if (ksp->reason) {
      j++;
      break;
    }
    beta   = rz / *delta;
    *delta = rz;
    for (PetscInt i = 0; i < m; i++) pc[i] = zc[i] + beta * pc[i];
  }
  *steps    = j;
  cg->inner = PETSC_FALSE;
  PetscCall(PetscInfo(ksp, "outer %" PetscInt_FMT ": %" PetscInt_FMT " steps of %" PetscInt_FMT ", largest relative rounding of a Gram inner product %g%s; deviation estimate %g\n", cg->stats.outer, j, s, worst, *direct ? " (last step direct)" : "", cg->dev));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Step 4, back to vectors: x += Y xc; the r-space vectors from W, u = W pc, r = W zc, and the z-space ones M^{-1} of
   them, so that u = M p and r = M z hold to rounding at every outer iteration (updating both from the coordinates
   lets them drift apart); by the backend's update in one pass where it applies, else VecMAXPY and PCApply. Nothing
   but x when steps is 0 or the solve is over. */
static PetscErrorCode CACGUpdate(KSP ksp, PetscInt m, PetscInt steps, const double pc[], const double zc[])
{
  KSP_CACG   *cg    = (KSP_CACG *)ksp->data;
  PetscBool   fused = PETSC_FALSE;
  PetscScalar coef[GPUKIT_CACG_MAX_M];

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(KSP_CACG_Update, ksp, 0, 0, 0));
  /* with no preconditioner or Jacobi (dinv: then PCApply is dinv .* v exactly), all of the below in one pass */
  if (cg->be->update && cg->fusedupdate && steps && !ksp->reason && !ksp->transpose_solve && (cg->aliased || cg->dinv)) PetscCall((*cg->be->update)(ksp, m, cg->xc, pc, zc, &fused));
  if (!fused) {
    for (PetscInt i = 0; i < m; i++) coef[i] = cg->xc[i];
    if (steps) PetscCall(CACGAddBasis(ksp, m, coef, ksp->vec_sol));
  }
  if (ksp->reason || !steps) {
    PetscCall(PetscLogEventEnd(KSP_CACG_Update, ksp, 0, 0, 0));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!fused) {
    for (PetscInt i = 0; i < m; i++) coef[i] = pc[i];
    PetscCall(VecAXPBY(cg->Un, coef[0], 0.0, cg->W[0]));
    PetscCall(VecMAXPY(cg->Un, m - 1, coef + 1, cg->W + 1));
    if (!cg->aliased) PetscCall(KSP_PCApply(ksp, cg->Un, cg->Pn));
    for (PetscInt i = 0; i < m; i++) coef[i] = zc[i];
    PetscCall(VecAXPBY(cg->Rn, coef[0], 0.0, cg->W[0]));
    PetscCall(VecMAXPY(cg->Rn, m - 1, coef + 1, cg->W + 1));
    if (!cg->aliased) PetscCall(KSP_PCApply(ksp, cg->Rn, cg->Zn));
  }
  {
    Vec t;
    t      = cg->P;
    cg->P  = cg->Pn;
    cg->Pn = t;
    t      = cg->Z;
    cg->Z  = cg->Zn;
    cg->Zn = t;
    if (!cg->aliased) {
      t      = cg->U;
      cg->U  = cg->Un;
      cg->Un = t;
      t      = cg->R;
      cg->R  = cg->Rn;
      cg->Rn = t;
    } else {
      cg->U  = cg->P;
      cg->R  = cg->Z;
      cg->Un = cg->Pn;
      cg->Rn = cg->Zn;
    }
  }
  PetscCall(PetscLogEventEnd(KSP_CACG_Update, ksp, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The last step's (r, z) and norm lost precision in the Gram form: compute them, test, then the step's beta.
   *finite = PETSC_FALSE when KSPCheckNorm()/KSPCheckDot() found Inf or NaN (they set the reason and return): then
   the solve ends at once. */
static PetscErrorCode CACGDirectStep(KSP ksp, PetscReal *delta, PetscBool *finite)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;
  PetscReal rz, nrm;

  PetscFunctionBegin;
  *finite = PETSC_FALSE;
  cg->stats.direct++;
  PetscCall(CACGDirectDots(ksp, cg->R, cg->Z, &rz, &nrm));
  KSPCheckNorm(ksp, nrm);
  KSPCheckDot(ksp, rz);
  *finite = PETSC_TRUE;
  PetscCall(CACGTest(ksp, nrm));
  if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS);
  if (rz < 0.0) {
    PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_PC, "(r, M^{-1} r) < 0: the preconditioner is not positive definite"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(VecAYPX(cg->P, rz / *delta, cg->Z));
  if (!cg->aliased) PetscCall(VecAYPX(cg->U, rz / *delta, cg->R));
  *delta         = rz; /* the (r, z) of this state: plain CG steps may follow (the next outer iteration takes it from G) */
  cg->deltastale = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One outer iteration of s = cg->scur steps (steps 1-4 of the header). It ends early with ksp->reason set; *finite as
   in CACGDirectStep(). */
static PetscErrorCode CACGOuter(KSP ksp, Mat A, PetscReal *delta, PetscBool *finite)
{
  KSP_CACG      *cg = (KSP_CACG *)ksp->data;
  const PetscInt s = cg->scur, m = 2 * s + 1, o = s + 1;
  const PetscBool useanorm = (PetscBool)(cg->replace && cg->anorm >= 0.0);
  CACGGramPlan   pl;
  double         d[GPUKIT_CACG_MAX_M], dn[GPUKIT_CACG_MAX_M], pc[GPUKIT_CACG_MAX_M] = {0}, zc[GPUKIT_CACG_MAX_M] = {0};
  PetscInt       steps  = 0;
  PetscBool      ok, direct = PETSC_FALSE, replace_now = PETSC_FALSE;

  PetscFunctionBegin;
  *finite = PETSC_TRUE;
  /* 1. the basis */
  CACGBasisArrays(cg, s);
  PetscCall(CACGPowers(ksp, A, s, cg->Y, cg->W));
  if (cg->hookused) cg->stats.mpk++;
  PetscCall(CACGPowers(ksp, A, s - 1, cg->Y + o, cg->W + o));

  /* 2. one reduction */
  pl.yy   = (PetscBool)(ksp->normtype == KSP_NORM_PRECONDITIONED);
  pl.ww   = (PetscBool)(ksp->normtype == KSP_NORM_UNPRECONDITIONED);
  pl.diag = useanorm;
  pl.x    = useanorm;
  PetscCall(CACGGram(ksp, m, &pl, &ok));
  cg->stats.outer++;
  if (cg->lean) cg->stats.leanbasis++;
  if (!ok) {
    PetscCall(CACGDiverged(ksp, KSP_DIVERGED_NANORINF, "Inf or NaN in the Gram matrix of the s-step basis"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(CACGGramDiagonal(ksp, m, d, dn));
  if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS);
  if (useanorm) CACGDeviation(cg, o, &replace_now);

  /* 3. s CG steps on the coordinates, after the symmetry check of S = G B */
  CACGChangeOfBasis(cg, s, cg->B);
  PetscCall(CACGCheckSymmetry(ksp, m, s, d));
  if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS);
  pc[0]  = 1.0;
  zc[o]  = 1.0;
  *delta = cg->G[o * m + o];
  PetscCall(CACGInnerSteps(ksp, s, d, dn, pc, zc, delta, &steps, &direct));

  /* 4. back to vectors */
  PetscCall(CACGUpdate(ksp, m, steps, pc, zc));
  if (ksp->reason || !steps) PetscFunctionReturn(PETSC_SUCCESS); /* !steps: truncated before the first step, a new basis with the smaller s */
  if (useanorm) cg->inc = cg->anorm * CACGScale(m, cg->xc, cg->ynrm) + CACGScale(m, zc, cg->wnrm);
  if (replace_now) {
    PetscCall(PetscInfo(ksp, "outer %" PetscInt_FMT ": residual replaced (deviation estimate %g, ||r|| %g)\n", cg->stats.outer, cg->dev, cg->rprev));
    PetscCall(CACGResidual(ksp, A, PETSC_FALSE));
    cg->stats.replacements++;
    cg->devreset   = PETSC_TRUE;
    cg->deltastale = PETSC_TRUE; /* r and z are new: (r, z) is no longer delta */
  }
  if (direct) {
    PetscCall(CACGDirectStep(ksp, delta, finite));
    if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (cg->scur != s) PetscCall(CACGSetSpectrum(ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Up to n plain preconditioned CG steps from the state an outer iteration leaves (x, p, u = M p, r, z, delta = (r, z)),
   two reductions each, leaving the same state: the tuner's "cg" candidate, for operators where s-step CG does not pay
   (a bandwidth-bound product on one GPU). q = A p lives in Rn, free between outer iterations. *finite as in
   CACGDirectStep(). */
static PetscErrorCode CACGPlainSteps(KSP ksp, Mat A, PetscInt n, PetscReal *delta, PetscBool *finite)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;
  Vec       q  = cg->Rn;

  PetscFunctionBegin;
  if (cg->deltastale) { /* a residual replacement made r and z anew */
    PetscScalar rz;
    PetscCall(VecDot(cg->R, cg->Z, &rz));
    cg->stats.reductions++;
    *delta         = PetscRealPart(rz);
    cg->deltastale = PETSC_FALSE;
  }
  for (PetscInt j = 0; j < n && !ksp->reason; j++) {
    PetscScalar pq;
    PetscReal   rz, nrm, alpha, beta;

    *finite = PETSC_FALSE;
    PetscCall(KSP_MatMult(ksp, A, cg->P, q));
    PetscCall(VecDot(cg->P, q, &pq));
    cg->stats.reductions++;
    KSPCheckDot(ksp, pq);
    *finite = PETSC_TRUE;
    if (PetscRealPart(pq) <= 0.0) {
      PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_MAT, "(p, Ap) <= 0: the matrix is not positive definite"));
      break;
    }
    alpha = *delta / PetscRealPart(pq);
    PetscCall(VecAXPY(ksp->vec_sol, alpha, cg->P));
    PetscCall(VecAXPY(cg->R, -alpha, q));
    if (!cg->aliased) PetscCall(KSP_PCApply(ksp, cg->R, cg->Z));
    *finite = PETSC_FALSE;
    PetscCall(CACGDirectDots(ksp, cg->R, cg->Z, &rz, &nrm));
    KSPCheckNorm(ksp, nrm);
    KSPCheckDot(ksp, rz);
    *finite = PETSC_TRUE;
    cg->stats.plainsteps++;
    PetscCall(CACGTest(ksp, nrm));
    if (ksp->reason) break;
    if (rz < 0.0) {
      PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_PC, "(r, M^{-1} r) < 0: the preconditioner is not positive definite"));
      break;
    }
    beta   = rz / *delta;
    *delta = rz;
    PetscCall(VecAYPX(cg->P, beta, cg->Z));
    if (!cg->aliased) PetscCall(VecAYPX(cg->U, beta, cg->R));
  }
  /* p and u were updated apart: p = M^{-1} u again, so that they do not drift apart when s-step iterations resume */
  if (!cg->aliased && !ksp->reason) PetscCall(KSP_PCApply(ksp, cg->U, cg->P));
  cg->devreset = PETSC_TRUE; /* the residual replacement's deviation estimate starts again */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const char *const CACGTuneMethods[]  = {"sstep", "cg"};
static const char *const CACGTuneBasisWay[] = {"kernel", "products"};
static const char *const CACGTuneBasisNone[] = {"products"}; /* no matrix powers kernel: products only */

/* whether this solve is tuned, and the tuner for it: on one rank, with -ksp_cacg_tune (default: CUDA vectors), unless
   -gpukit_tune off. Knobs, searched in this order: s (the powers of two below s, and s), basis (kernel, products: only
   with a matrix powers kernel), method (sstep, cg: plain CG steps in blocks of s, whatever s and basis say). Shape: the operator's size class, its type, the PC's type and the norm. */
static PetscErrorCode CACGTuneSetUp(KSP ksp, Mat A)
{
  KSP_CACG      *cg = (KSP_CACG *)ksp->data;
  PetscMPIInt    size;
  GpukitTuneMode mode;
  PetscBool      hook = (PetscBool)(cg->hook && (cg->lean || cg->aliased || cg->dinv));
  char           shape[128], csr[48];
  MatInfo        info;
  PetscInt       m;
  MatType        mt;
  PCType         pt;

  PetscFunctionBegin;
  cg->tuning    = PETSC_FALSE;
  cg->tplain    = PETSC_FALSE;
  cg->tproducts = PETSC_FALSE;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
  PetscCall(GpukitTuneGetMode(&mode));
  if (size > 1 || mode == GPUKIT_TUNE_OFF || cg->tuneopt == 0 || (cg->tuneopt < 0 && !cg->be->device) || ksp->transpose_solve) PetscFunctionReturn(PETSC_SUCCESS);
  if (cg->tuner && (cg->tunes != cg->s || cg->tunehook != (PetscInt)hook)) PetscCall(GpukitTunerDestroy(&cg->tuner)); /* other candidates */
  if (!cg->tuner) {
    GpukitTuneKnob knobs[3];
    PetscInt       n = 0;

    /* s first, then the kernel, then plain CG steps against the best s-step candidate */
    knobs[0].name   = "s";
    knobs[0].labels = NULL;
    for (PetscInt v = 1; v < cg->s; v *= 2) knobs[0].values[n++] = v;
    knobs[0].values[n++] = cg->s;
    knobs[0].n      = n;
    knobs[0].start  = n - 1;
    knobs[1].name      = "basis";
    knobs[1].labels    = hook ? CACGTuneBasisWay : CACGTuneBasisNone;
    knobs[1].values[0] = hook ? 0 : 1;
    knobs[1].values[1] = 1;
    knobs[1].n         = hook ? 2 : 1;
    knobs[1].start     = 0;
    knobs[2].name      = "method";
    knobs[2].labels    = CACGTuneMethods;
    knobs[2].values[0] = 0;
    knobs[2].values[1] = 1;
    knobs[2].n         = 2;
    knobs[2].start     = 0;
    PetscCall(GpukitTunerCreate((PetscObject)ksp, CACG_TUNER, 3, knobs, &cg->tuner));
    cg->tunes    = cg->s;
    cg->tunehook = hook;
  }
  PetscCall(GpukitTunerSetDevice(cg->tuner, cg->be->device)); /* the backend of this solve */
  if (cg->tuneA != A || cg->tuneAstate != A->nonzerostate) { /* MatGetInfo() can cost a pass over the matrix: once per operator */
    PetscCall(MatGetLocalSize(A, &m, NULL));
    info.nz_used = 0; /* a matrix that cannot say (a shell): the rows alone make its class */
    if (A->ops->getinfo) PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
    PetscCall(GpukitTuneShapeCSR(m, (PetscCount)info.nz_used, 0, cg->tunecsr, sizeof(cg->tunecsr)));
    cg->tuneA      = A;
    cg->tuneAstate = A->nonzerostate;
  }
  PetscCall(PetscStrncpy(csr, cg->tunecsr, sizeof(csr)));
  PetscCall(MatGetType(A, &mt));
  PetscCall(PCGetType(ksp->pc, &pt));
  PetscCall(PetscSNPrintf(shape, sizeof(shape), "%s.%s.%s.%s.%s", csr, mt, pt ? pt : "none", KSPNormTypes[ksp->normtype], cg->lean ? "lean" : "stored"));
  PetscCall(GpukitTunerSetShape(cg->tuner, shape));
  cg->tuning = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the tuner's candidate for the next outer iteration */
static PetscErrorCode CACGTuneBegin(KSP ksp, Mat A)
{
  KSP_CACG       *cg = (KSP_CACG *)ksp->data;
  const PetscInt *v;
  PetscInt        nl;

  PetscFunctionBegin;
  PetscCall(GpukitTunerBegin(cg->tuner, A->nonzerostate, NULL, &v, &nl));
  cg->tplain    = (PetscBool)(v[2] == 1);
  cg->tproducts = (PetscBool)(v[1] == 1 && cg->tunehook);
  cg->tblock    = v[0];
  if (!cg->tplain && PetscMin(v[0], cg->scap) != cg->scur) { /* a lost basis lowered s for the rest of the solve: a cap */
    cg->scur = PetscMin(v[0], cg->scap);
    PetscCall(CACGSetSpectrum(ksp));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the outer iteration's time per CG step to the tuner. An outer iteration that lost the basis's precision and did fewer
   steps counts as it is: its time per step is higher, which is what that s costs on this operator. */
static PetscErrorCode CACGTuneEnd(KSP ksp, PetscInt steps)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  if (steps > 0) {
    PetscCall(GpukitTunerMark(cg->tuner));
    PetscCall(GpukitTunerSetWork(cg->tuner, (PetscReal)steps));
  }
  PetscCall(GpukitTunerEnd(cg->tuner));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -ksp_cacg_true_residual: a converged claim must hold for b - A x too */
static PetscErrorCode CACGCheckTrueResidual(KSP ksp, Mat A)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;
  PetscReal rz, tn;
  Vec       Rs = cg->R, Zs = cg->Z;

  PetscFunctionBegin;
  cg->R = cg->Rn; /* keep the recursive vectors: work in the spares */
  cg->Z = cg->aliased ? cg->Rn : cg->Zn;
  PetscCall(CACGResidual(ksp, A, PETSC_FALSE));
  PetscCall(CACGDirectDots(ksp, cg->R, cg->Z, &rz, &tn));
  cg->R              = Rs;
  cg->Z              = Zs;
  cg->stats.truenorm = tn;
  if (ksp->reason > 0 && tn > 10.0 * PetscMax(ksp->rtol * cg->rnorm0, ksp->abstol) && tn > 10.0 * ksp->rnorm) cg->stats.truefail++;
  PetscCall(PetscViewerASCIIPrintf(PETSC_VIEWER_STDOUT_(PetscObjectComm((PetscObject)ksp)), "KSPCACG true residual check: %s norm of the true residual %g, of the recursive residual %g%s\n", KSPNormTypes[ksp->normtype], (double)tn, (double)ksp->rnorm,
                                   ksp->reason > 0 ? (cg->stats.truefail ? ": convergence NOT confirmed" : ": convergence confirmed") : ""));
  if (cg->stats.truefail) PetscCall(CACGDiverged(ksp, KSP_DIVERGED_BREAKDOWN, "the true residual does not meet the tolerance that the recursive residual met"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The algorithm of the header, backend-free: the backend (cg->be) and the matrix powers kernel (cg->hook) are chosen
   once by CACGSolveSetUp() */
PetscErrorCode KSPSolve_CACG(KSP ksp)
{
  KSP_CACG    *cg = (KSP_CACG *)ksp->data;
  Mat          A, Pmat;
  MatNullSpace nsp;
  PetscReal    delta;
  PetscBool    finite = PETSC_TRUE;

  PetscFunctionBegin;
  PetscCall(PCGetOperators(ksp->pc, &A, &Pmat));
  PetscCall(MatGetNullSpace(A, &nsp));
  PetscCall(PetscMemzero(&cg->stats, sizeof(cg->stats)));
  cg->asym     = 0.0;
  cg->scur     = cg->s;
  cg->scap     = cg->s;
  cg->deltastale = PETSC_FALSE;
  cg->devreset = PETSC_TRUE;
  ksp->its     = 0;
  ksp->reason  = KSP_CONVERGED_ITERATING;

  PetscCall(CACGSolveSetUp(ksp, A, nsp));
  if (cg->replace) PetscCall(CACGMatNorm(ksp, A));
  PetscCall(CACGStart(ksp, A, Pmat, &delta));
  if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CACGTuneSetUp(ksp, A));
  while (!ksp->reason) {
    PetscInt its = ksp->its;

    if (cg->tuning) PetscCall(CACGTuneBegin(ksp, A));
    if (cg->tplain) PetscCall(CACGPlainSteps(ksp, A, cg->tblock, &delta, &finite));
    else PetscCall(CACGOuter(ksp, A, &delta, &finite));
    if (cg->tproducts && !cg->tplain) cg->stats.products++;
    if (cg->tuning) PetscCall(CACGTuneEnd(ksp, ksp->its - its));
    if (!finite) PetscFunctionReturn(PETSC_SUCCESS); /* as KSPCheckNorm() does: nothing more */
  }
  if (cg->truecheck && ksp->normtype != KSP_NORM_NONE) PetscCall(CACGCheckTrueResidual(ksp, A));
  cg->stats.s = cg->scur;
  PetscCall(PetscInfo(ksp, "largest asymmetry of Y^T A Y: %g rounding units\n", cg->asym));
  if (cg->stats.asymmetry > 0.0) PetscCall(PetscInfo(ksp, "the matrix is not symmetric: y^T A y' - y'^T A y reached %g of ||y||_A ||y'||_A (CG converges only by luck)\n", (double)cg->stats.asymmetry));
  if (cg->stats.pcasymmetry > 0.0) PetscCall(PetscInfo(ksp, "the preconditioner is not symmetric: up to %g of ||y||_M ||y'||_M\n", (double)cg->stats.pcasymmetry));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* during the s inner steps the solution is x + Y x' (monitors of the true residual or the solution ask for it) */
PetscErrorCode KSPBuildSolution_CACG(KSP ksp, Vec v, Vec *V)
{
  KSP_CACG   *cg = (KSP_CACG *)ksp->data;
  PetscScalar coef[GPUKIT_CACG_MAX_M];

  PetscFunctionBegin;
  if (!cg->inner) {
    PetscCall(KSPBuildSolutionDefault(ksp, v, V));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!v) {
    if (!cg->Xb) PetscCall(VecDuplicate(ksp->vec_sol, &cg->Xb));
    v = cg->Xb;
  }
  for (PetscInt i = 0; i < cg->mcur; i++) coef[i] = cg->xc[i];
  PetscCall(VecCopy(ksp->vec_sol, v));
  PetscCall(CACGAddBasis(ksp, cg->mcur, coef, v));
  if (V) *V = v;
  PetscFunctionReturn(PETSC_SUCCESS);
}
