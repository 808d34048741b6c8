/*
   KSPCACG: communication-avoiding (s-step) preconditioned conjugate gradients, the KSP type: create, set-up, view,
   options, the Set/Get functions and their man pages, registration. The algorithm is in cacgsolve.c (the files:
   cacgimpl.h). User documentation: docs/cacg.md.
*/
#include "cacgimpl.h"
#include "gpukittune.h"
#include "gpukitcsrmpk.h"

PetscLogEvent KSP_CACG_MPK, KSP_CACG_Gram, KSP_CACG_GramCUDA, KSP_CACG_Update, KSP_CACG_UpdateCUDA, KSP_CACG_Eig;

const char *const KSPCACGBasisTypes[] = {"monomial", "newton", "chebyshev", "KSPCACGBasisType", "KSP_CACG_BASIS_", NULL};

static PetscErrorCode KSPSetUp_CACG(KSP ksp)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  PetscCheck(ksp->pc_side == PC_LEFT, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "KSPCACG supports left preconditioning only, not %s", PCSides[ksp->pc_side]);
  PetscCheck(cg->basis == KSP_CACG_BASIS_MONOMIAL || cg->eiggiven || cg->eigsteps == 0 || cg->eigsteps >= 2, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "KSPCACG needs at least 2 CG steps for the eigenvalue estimate");
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPReset_CACG(KSP ksp)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  PetscCall(CACGFreeVectors(ksp));
  PetscCall(VecDestroy(&cg->Xb));
  if (cg->be && cg->be->reset) PetscCall((*cg->be->reset)(ksp));
  cg->be     = NULL;
  cg->nritz  = 0;
  cg->estA   = cg->estP = NULL;
  cg->anormA = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPDestroy_CACG(KSP ksp)
{
  PetscFunctionBegin;
  PetscCall(KSPReset_CACG(ksp));
  PetscCall(GpukitTunerDestroy(&((KSP_CACG *)ksp->data)->tuner));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetTune_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetS_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGGetS_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetBasis_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGGetBasis_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetEigenvalues_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGGetEigenvalues_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetEigenvalueSteps_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetReplace_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetCheckTrueResidual_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetUseMatrixPowers_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetFusedGram_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetFusedUpdate_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetLeanBasis_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGGetStatistics_C", NULL));
  PetscCall(PetscFree(ksp->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPView_CACG(KSP ksp, PetscViewer viewer)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;
  PetscBool isascii, isstring, aset = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERSTRING, &isstring));
  if (isstring) PetscCall(PetscViewerStringSPrintf(viewer, " s = %" PetscInt_FMT " basis %s", cg->s, KSPCACGBasisTypes[cg->basis]));
  if (!isascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerASCIIPrintf(viewer, "  s = %" PetscInt_FMT " CG steps per outer iteration (one global reduction each), basis %s\n", cg->s, KSPCACGBasisTypes[cg->basis]));
  if (cg->basis != KSP_CACG_BASIS_MONOMIAL) {
    if (cg->eiggiven) PetscCall(PetscViewerASCIIPrintf(viewer, "  spectrum of M^{-1}A: [%g, %g] (given)\n", (double)cg->emin, (double)cg->emax));
    else if (cg->nritz) PetscCall(PetscViewerASCIIPrintf(viewer, "  spectrum of M^{-1}A: [%g, %g] (Ritz values of %" PetscInt_FMT " CG steps)\n", (double)cg->ritz[0], (double)cg->ritz[cg->nritz - 1], cg->nritz));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "  spectrum of M^{-1}A: estimated by %" PetscInt_FMT " CG steps at the first solve\n", cg->eigsteps ? cg->eigsteps : PetscMax(2 * cg->s, 10)));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "  residual replacement: %s; true residual check: %s; matrix powers hook: %s\n", cg->replace ? "on" : "off", cg->truecheck ? "on" : "off", cg->usehook ? "used if the matrix has one (GpukitMatGetCaps())" : "off"));
  if (ksp->pc) PetscCall(PCGetOperatorsSet(ksp->pc, &aset, NULL));
  if (cg->tuner) PetscCall(GpukitTunerView(cg->tuner, viewer));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "  run-time tuning of s, plain CG steps and the basis's kernel: %s\n", cg->tuneopt == 0 ? "off" : cg->tuneopt > 0 ? "on (one rank)" : "on CUDA vectors (one rank)"));
  if (aset) { /* the choices of the tuners of the operator's CSR matrix powers kernel, once it ran */
    const char *const kernels[] = {GPUKIT_CSR_MPK_TUNER, GPUKIT_CSR_MPK_TUNER_LEAN};
    Mat               A;

    PetscCall(PCGetOperators(ksp->pc, &A, NULL));
    for (size_t i = 0; i < PETSC_STATIC_ARRAY_LENGTH(kernels); i++) {
      GpukitTuner t;
      PetscCall(GpukitTuneFind((PetscObject)A, kernels[i], &t));
      if (t) PetscCall(GpukitTunerView(t, viewer));
    }
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "  fused Gram: %s; fused update: %s; lean basis: %s\n", cg->fusedgram ? "on" : "off", cg->fusedupdate ? "on (CUDA vectors with Jacobi or no preconditioner)" : "off", cg->leanopt ? (cg->stats.leanbasis ? "on (used in the last solve)" : "on where it applies (CUDA vectors, Jacobi, a matrix powers kernel)") : "off"));
  if (cg->stats.outer)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  last solve: %" PetscInt_FMT " outer iterations, %" PetscInt_FMT " CG steps for the estimate, %" PetscInt_FMT " reductions, %" PetscInt_FMT " replacements, %" PetscInt_FMT " truncations (s at the end %" PetscInt_FMT ")\n", cg->stats.outer, cg->stats.cgsteps, cg->stats.reductions, cg->stats.replacements, cg->stats.truncations, cg->stats.s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSetFromOptions_CACG(KSP ksp, GpukitOptionItems PetscOptionsObject)
{
  KSP_CACG        *cg = (KSP_CACG *)ksp->data;
  PetscInt         s  = cg->s, nsteps = cg->eigsteps, n = 2;
  KSPCACGBasisType basis = cg->basis;
  PetscReal        ev[2] = {cg->emin, cg->emax};
  PetscBool        flg, b;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "KSP CACG (s-step CG) options");
  PetscCall(PetscOptionsInt("-ksp_cacg_s", "CG steps per outer iteration (one global reduction each)", "KSPCACGSetS", s, &s, &flg));
  if (flg) PetscCall(KSPCACGSetS(ksp, s));
  PetscCall(PetscOptionsEnum("-ksp_cacg_basis", "Polynomial basis of the s-step Krylov basis", "KSPCACGSetBasis", KSPCACGBasisTypes, (PetscEnum)basis, (PetscEnum *)&basis, &flg));
  if (flg) PetscCall(KSPCACGSetBasis(ksp, basis));
  PetscCall(PetscOptionsRealArray("-ksp_cacg_eigenvalues", "emin,emax: interval of the spectrum of M^{-1}A (default: estimated)", "KSPCACGSetEigenvalues", ev, &n, &flg));
  if (flg) {
    PetscCheck(n == 2, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_SIZ, "-ksp_cacg_eigenvalues takes two numbers, emin,emax; got %" PetscInt_FMT, n);
    PetscCall(KSPCACGSetEigenvalues(ksp, ev[0], ev[1]));
  }
  PetscCall(PetscOptionsInt("-ksp_cacg_eig_steps", "CG steps that estimate the spectrum (0: max(2s, 10))", "KSPCACGSetEigenvalueSteps", nsteps, &nsteps, &flg));
  if (flg) PetscCall(KSPCACGSetEigenvalueSteps(ksp, nsteps));
  b = cg->replace;
  PetscCall(PetscOptionsBool("-ksp_cacg_replace", "Residual replacement", "KSPCACGSetReplace", b, &b, &flg));
  if (flg) PetscCall(KSPCACGSetReplace(ksp, b));
  b = cg->truecheck;
  PetscCall(PetscOptionsBool("-ksp_cacg_true_residual", "Check the true residual at convergence", "KSPCACGSetCheckTrueResidual", b, &b, &flg));
  if (flg) PetscCall(KSPCACGSetCheckTrueResidual(ksp, b));
  b = cg->fusedgram;
  PetscCall(PetscOptionsBool("-ksp_cacg_fused_gram", "All local inner products in one pass (host loop or CUDA kernel) and one MPI_Allreduce (else VecMDot and a split reduction)", "KSPCACGSetFusedGram", b, &b, &flg));
  if (flg) PetscCall(KSPCACGSetFusedGram(ksp, b));
  b = cg->fusedupdate;
  PetscCall(PetscOptionsBool("-ksp_cacg_fused_update", "On CUDA vectors with Jacobi or no preconditioner: x, the next u, r, p, z of an outer iteration in one device kernel (else VecMAXPY + PCApply)", "KSPCACGSetFusedUpdate", b, &b, &flg));
  if (flg) PetscCall(KSPCACGSetFusedUpdate(ksp, b));
  b = cg->leanopt;
  PetscCall(PetscOptionsBool("-ksp_cacg_lean_basis", "On CUDA vectors with Jacobi and a matrix powers kernel: keep the basis as W alone, M^{-1} W formed where it is read", "KSPCACGSetLeanBasis", b, &b, &flg));
  if (flg) PetscCall(KSPCACGSetLeanBasis(ksp, b));
  b = (PetscBool)(cg->tuneopt != 0);
  PetscCall(PetscOptionsBool("-ksp_cacg_tune", "Tune at run time (one rank): s (up to -ksp_cacg_s), plain CG steps instead of s-step ones, the matrix powers kernel or s products (default: on CUDA vectors; -gpukit_tune off turns every tuner off)", "KSPCACGSetTune", b, &b, &flg));
  if (flg) PetscCall(KSPCACGSetTune(ksp, b));
  b = cg->usehook;
  PetscCall(PetscOptionsBool("-ksp_cacg_matrix_powers", "Use the matrix's matrix powers kernel when it has one (MatMatrixPowers_C, or gpukit's CSR kernel for MATSEQAIJCUSPARSE)", "KSPCACGSetUseMatrixPowers", b, &b, &flg));
  if (flg) PetscCall(KSPCACGSetUseMatrixPowers(ksp, b));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------------------- */
/* Set/Get implementations                                                                                     */

static PetscErrorCode KSPCACGSetS_CACG(KSP ksp, PetscInt s)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  PetscCheck(s >= 1 && s <= GPUKIT_CACG_MAX_S, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "KSPCACG: s must be in 1..%d, got %" PetscInt_FMT " (s-step bases lose precision quickly; 2..8 is the useful range)", GPUKIT_CACG_MAX_S, s);
  if (s != cg->s) cg->nritz = 0; /* the default number of estimate steps depends on s */
  cg->s = s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetTune_CACG(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  ((KSP_CACG *)ksp->data)->tuneopt = flg ? 1 : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGGetS_CACG(KSP ksp, PetscInt *s)
{
  PetscFunctionBegin;
  *s = ((KSP_CACG *)ksp->data)->s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetBasis_CACG(KSP ksp, KSPCACGBasisType basis)
{
  PetscFunctionBegin;
  PetscCheck(basis >= KSP_CACG_BASIS_MONOMIAL && basis <= KSP_CACG_BASIS_CHEBYSHEV, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "KSPCACG: unknown basis %d; use monomial, newton or chebyshev", (int)basis);
  ((KSP_CACG *)ksp->data)->basis = basis;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGGetBasis_CACG(KSP ksp, KSPCACGBasisType *basis)
{
  PetscFunctionBegin;
  *basis = ((KSP_CACG *)ksp->data)->basis;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetEigenvalues_CACG(KSP ksp, PetscReal emin, PetscReal emax)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  if (emin == 0.0 && emax == 0.0) { /* back to the estimate */
    cg->eiggiven = PETSC_FALSE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(emin > 0.0 && emax > emin, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "KSPCACG: the spectrum of an SPD M^{-1}A lies in 0 < emin < emax; got emin %g, emax %g", (double)emin, (double)emax);
  cg->emin     = emin;
  cg->emax     = emax;
  cg->eiggiven = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGGetEigenvalues_CACG(KSP ksp, PetscReal *emin, PetscReal *emax)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  if (cg->eiggiven) {
    if (emin) *emin = cg->emin;
    if (emax) *emax = cg->emax;
  } else {
    if (emin) *emin = cg->nritz ? cg->ritz[0] : 0.0;
    if (emax) *emax = cg->nritz ? cg->ritz[cg->nritz - 1] : 0.0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetEigenvalueSteps_CACG(KSP ksp, PetscInt n)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  PetscCheck(n == 0 || (n >= 2 && n <= GPUKIT_CACG_MAX_EIG), PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "KSPCACG: the eigenvalue estimate takes 2..%d CG steps (0: the default max(2s, 10)), got %" PetscInt_FMT, GPUKIT_CACG_MAX_EIG, n);
  if (n != cg->eigsteps) cg->nritz = 0;
  cg->eigsteps = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetReplace_CACG(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  ((KSP_CACG *)ksp->data)->replace = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetCheckTrueResidual_CACG(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  ((KSP_CACG *)ksp->data)->truecheck = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetFusedGram_CACG(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  ((KSP_CACG *)ksp->data)->fusedgram = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetFusedUpdate_CACG(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  ((KSP_CACG *)ksp->data)->fusedupdate = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetLeanBasis_CACG(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  ((KSP_CACG *)ksp->data)->leanopt = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetUseMatrixPowers_CACG(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  ((KSP_CACG *)ksp->data)->usehook = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGGetStatistics_CACG(KSP ksp, KSPCACGStatistics *st)
{
  PetscFunctionBegin;
  *st = ((KSP_CACG *)ksp->data)->stats;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------------------- */

/*MC
   KSPCACG - "cacg" - communication-avoiding (s-step) preconditioned conjugate gradients, for SPD A and SPD M.

   Each outer iteration builds a basis of the Krylov space of the next s CG steps (2s-1 `MatMult()` and
   `PCApply()` calls, or one call of a matrix powers kernel the matrix provides), computes all the inner
   products those s steps need in ONE global reduction (a Gram matrix of 2s+1 vectors), and then performs the s
   steps on small coordinate vectors on the host. In exact arithmetic the iterates are those of `KSPCG`.

   Options Database Keys:
+  -ksp_cacg_s <4> - CG steps per outer iteration, 1..16
.  -ksp_cacg_basis <newton> - monomial, newton or chebyshev
.  -ksp_cacg_eigenvalues emin,emax - interval of the spectrum of M^{-1}A for the Newton and Chebyshev bases (default: estimated)
.  -ksp_cacg_eig_steps <n> - plain CG steps whose Ritz values give the estimate (default max(2s, 10))
.  -ksp_cacg_replace <true> - residual replacement, so that the true residual keeps converging
.  -ksp_cacg_true_residual <false> - check at convergence that b - Ax meets the tolerance too
.  -ksp_cacg_fused_gram <true> - the Gram matrices in one pass over the vectors (host loop or CUDA kernel) and one MPI_Allreduce
.  -ksp_cacg_fused_update <true> - on CUDA vectors with Jacobi or no preconditioner, the vector updates of an outer iteration in one device kernel
.  -ksp_cacg_lean_basis <true> - on CUDA vectors with Jacobi and a matrix powers kernel, keep the basis as W alone (M^{-1} W formed where read)
.  -ksp_cacg_tune <true on CUDA vectors> - tune s, plain CG steps instead of s-step ones, and the matrix powers kernel at run time (one rank; see `KSPCACGSetTune()`)
-  -ksp_cacg_matrix_powers <true> - use the matrix's matrix powers kernel: the one it composes as "MatMatrixPowers_C", or gpukit's CSR kernel for `MATSEQAIJCUSPARSE`

   Level: intermediate

   Notes:
   Left preconditioning only; norm types preconditioned (default), unpreconditioned, natural and none. The
   preconditioned and unpreconditioned norms need a second Gram matrix in the same reduction; the natural norm
   needs none. A matrix or preconditioner that is not positive definite stops the solve with
   `KSP_DIVERGED_INDEFINITE_MAT` or `KSP_DIVERGED_INDEFINITE_PC`; a basis too ill-conditioned for even one step
   with `KSP_DIVERGED_BREAKDOWN`. gpukit's CSR matrix powers kernel for `MATSEQAIJCUSPARSE` takes the matrix option
   -mat_csr_powers_threads_per_row <n> (1, 2, 4, ..., 32; 0, the default: from the mean row length), read at its first
   call. See docs/cacg.md.

.seealso: `KSPCG`, `KSPPIPECG`, `KSPGROPPCG`, `KSPCACGSetS()`, `KSPCACGSetBasis()`, `KSPCACGSetEigenvalues()`, `KSPCACGSetReplace()`, `KSPCACGSetLeanBasis()`, `KSPCACGGetStatistics()`
M*/
static PetscErrorCode KSPCreate_CACG(KSP ksp)
{
  KSP_CACG *cg;

  PetscFunctionBegin;
  PetscCheck(!PetscDefined(USE_COMPLEX), PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "KSPCACG supports real scalars only; use KSPCG");
  PetscCall(PetscNew(&cg));
  cg->s       = 4;
  cg->basis   = KSP_CACG_BASIS_NEWTON;
  cg->replace = PETSC_TRUE;
  cg->usehook   = PETSC_TRUE;
  cg->fusedgram = PETSC_TRUE;
  cg->fusedupdate = PETSC_TRUE;
  cg->leanopt     = PETSC_TRUE;
  cg->tuneopt     = -1;
  cg->anorm     = -1.0;
  ksp->data   = (void *)cg;

  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_PRECONDITIONED, PC_LEFT, 3));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_UNPRECONDITIONED, PC_LEFT, 2));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_NATURAL, PC_LEFT, 2));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_NONE, PC_LEFT, 1));

  ksp->ops->setup          = KSPSetUp_CACG;
  ksp->ops->solve          = KSPSolve_CACG;
  ksp->ops->reset          = KSPReset_CACG;
  ksp->ops->destroy        = KSPDestroy_CACG;
  ksp->ops->view           = KSPView_CACG;
  ksp->ops->setfromoptions = KSPSetFromOptions_CACG;
  ksp->ops->buildsolution  = KSPBuildSolution_CACG;
  ksp->ops->buildresidual  = KSPBuildResidualDefault;

  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetS_C", KSPCACGSetS_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGGetS_C", KSPCACGGetS_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetBasis_C", KSPCACGSetBasis_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGGetBasis_C", KSPCACGGetBasis_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetEigenvalues_C", KSPCACGSetEigenvalues_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGGetEigenvalues_C", KSPCACGGetEigenvalues_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetEigenvalueSteps_C", KSPCACGSetEigenvalueSteps_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetReplace_C", KSPCACGSetReplace_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetCheckTrueResidual_C", KSPCACGSetCheckTrueResidual_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetUseMatrixPowers_C", KSPCACGSetUseMatrixPowers_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetFusedGram_C", KSPCACGSetFusedGram_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetFusedUpdate_C", KSPCACGSetFusedUpdate_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetLeanBasis_C", KSPCACGSetLeanBasis_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetTune_C", KSPCACGSetTune_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGGetStatistics_C", KSPCACGGetStatistics_CACG));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPRegister_CACG_Private(void)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventRegister("CACGMatPowers", KSP_CLASSID, &KSP_CACG_MPK));
  PetscCall(PetscLogEventRegister("CACGGram", KSP_CLASSID, &KSP_CACG_Gram));
  PetscCall(PetscLogEventRegister("CACGGramCUDA", KSP_CLASSID, &KSP_CACG_GramCUDA));
  PetscCall(PetscLogEventRegister("CACGUpdate", KSP_CLASSID, &KSP_CACG_Update));
  PetscCall(PetscLogEventRegister("CACGUpdateCUDA", KSP_CLASSID, &KSP_CACG_UpdateCUDA));
  PetscCall(PetscLogEventRegister("CACGEigEstimate", KSP_CLASSID, &KSP_CACG_Eig));
  PetscCall(KSPRegister(KSPCACG, KSPCreate_CACG));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------------------- */
/* public functions                                                                                            */

/*@
  KSPCACGSetS - Sets the number of CG steps `KSPCACG` does per outer iteration, that is per global reduction

  Logically Collective

  Input Parameters:
+ ksp - the `KSPCACG` solver
- s   - the number of steps, 1..16 (default 4)

  Options Database Key:
. -ksp_cacg_s s - the number of steps

  Level: intermediate

  Notes:
  Each outer iteration costs 2s-1 products with A and M^{-1} (s+1 more than s CG steps) and one reduction,
  against 2s reductions for `KSPCG`. Larger s saves more reductions but the basis loses precision: with the
  Newton and Chebyshev bases s up to 8 converges like CG on well-behaved problems, the monomial basis only up
  to about 4. When the basis is too ill-conditioned for s steps, the method lowers s by itself (see
  `KSPCACGGetStatistics()`).

.seealso: `KSPCACG`, `KSPCACGGetS()`, `KSPCACGSetBasis()`
@*/
PetscErrorCode KSPCACGSetS(KSP ksp, PetscInt s)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveInt(ksp, s, 2);
  PetscTryMethod(ksp, "KSPCACGSetS_C", (KSP, PetscInt), (ksp, s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGGetS - Gets the number of CG steps `KSPCACG` does per outer iteration

  Not Collective

  Input Parameter:
. ksp - the `KSPCACG` solver

  Output Parameter:
. s - the number of steps

  Level: intermediate

.seealso: `KSPCACG`, `KSPCACGSetS()`
@*/
PetscErrorCode KSPCACGGetS(KSP ksp, PetscInt *s)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscUseMethod(ksp, "KSPCACGGetS_C", (KSP, PetscInt *), (ksp, s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetBasis - Sets the polynomial basis in which `KSPCACG` builds the s-step Krylov basis

  Logically Collective

  Input Parameters:
+ ksp   - the `KSPCACG` solver
- basis - `KSP_CACG_BASIS_MONOMIAL`, `KSP_CACG_BASIS_NEWTON` (default) or `KSP_CACG_BASIS_CHEBYSHEV`

  Options Database Key:
. -ksp_cacg_basis <monomial,newton,chebyshev> - the basis

  Level: intermediate

  Notes:
  The Newton basis shifts by Leja-ordered Ritz values, the Chebyshev basis uses an interval of the spectrum of
  M^{-1}A. Both take them from a few plain CG steps at the start of the first solve (they count as iterations)
  unless `KSPCACGSetEigenvalues()` gives an interval; the estimate is kept for later solves while the operators
  do not change.

.seealso: `KSPCACG`, `KSPCACGBasisType`, `KSPCACGSetEigenvalues()`, `KSPCACGSetEigenvalueSteps()`
@*/
PetscErrorCode KSPCACGSetBasis(KSP ksp, KSPCACGBasisType basis)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(ksp, basis, 2);
  PetscTryMethod(ksp, "KSPCACGSetBasis_C", (KSP, KSPCACGBasisType), (ksp, basis));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGGetBasis - Gets the polynomial basis of `KSPCACG`

  Not Collective

  Input Parameter:
. ksp - the `KSPCACG` solver

  Output Parameter:
. basis - the basis

  Level: intermediate

.seealso: `KSPCACG`, `KSPCACGSetBasis()`
@*/
PetscErrorCode KSPCACGGetBasis(KSP ksp, KSPCACGBasisType *basis)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscUseMethod(ksp, "KSPCACGGetBasis_C", (KSP, KSPCACGBasisType *), (ksp, basis));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetEigenvalues - Gives `KSPCACG` an interval that contains the spectrum of the preconditioned operator

  Logically Collective

  Input Parameters:
+ ksp  - the `KSPCACG` solver
. emin - the smallest eigenvalue of M^{-1}A (an estimate), > 0
- emax - the largest, > emin

  Options Database Key:
. -ksp_cacg_eigenvalues emin,emax - the interval

  Level: advanced

  Notes:
  The Chebyshev basis uses the interval; the Newton basis shifts by s Chebyshev points of it, in Leja order.
  Then no CG steps estimate the spectrum. emin = emax = 0 returns to the estimate.

.seealso: `KSPCACG`, `KSPCACGSetBasis()`, `KSPCACGGetEigenvalues()`
@*/
PetscErrorCode KSPCACGSetEigenvalues(KSP ksp, PetscReal emin, PetscReal emax)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveReal(ksp, emin, 2);
  PetscValidLogicalCollectiveReal(ksp, emax, 3);
  PetscTryMethod(ksp, "KSPCACGSetEigenvalues_C", (KSP, PetscReal, PetscReal), (ksp, emin, emax));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGGetEigenvalues - Gets the interval of the spectrum of M^{-1}A that `KSPCACG` uses: the given one, or the
  extreme Ritz values of its estimate (0, 0 before the first solve)

  Not Collective

  Input Parameter:
. ksp - the `KSPCACG` solver

  Output Parameters:
+ emin - the lower end (or `NULL`)
- emax - the upper end (or `NULL`)

  Level: advanced

.seealso: `KSPCACG`, `KSPCACGSetEigenvalues()`
@*/
PetscErrorCode KSPCACGGetEigenvalues(KSP ksp, PetscReal *emin, PetscReal *emax)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscUseMethod(ksp, "KSPCACGGetEigenvalues_C", (KSP, PetscReal *, PetscReal *), (ksp, emin, emax));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetEigenvalueSteps - Sets the number of plain CG steps whose Ritz values estimate the spectrum for the
  Newton and Chebyshev bases of `KSPCACG`

  Logically Collective

  Input Parameters:
+ ksp - the `KSPCACG` solver
- n   - the number of steps, 2..64, or 0 for the default max(2s, 10)

  Options Database Key:
. -ksp_cacg_eig_steps n - the number of steps

  Level: advanced

.seealso: `KSPCACG`, `KSPCACGSetBasis()`, `KSPCACGSetEigenvalues()`
@*/
PetscErrorCode KSPCACGSetEigenvalueSteps(KSP ksp, PetscInt n)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveInt(ksp, n, 2);
  PetscTryMethod(ksp, "KSPCACGSetEigenvalueSteps_C", (KSP, PetscInt), (ksp, n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetReplace - Turns residual replacement of `KSPCACG` on or off

  Logically Collective

  Input Parameters:
+ ksp - the `KSPCACG` solver
- flg - `PETSC_TRUE` (default) to replace

  Options Database Key:
. -ksp_cacg_replace <true,false> - residual replacement

  Level: advanced

  Notes:
  The residual that s-step CG updates drifts from b - Ax by rounding errors, more than in CG. The method keeps an
  estimate dev of ||b - Ax - r||: eps (||A|| ||x|| + ||r||) after r = b - Ax is computed, plus, per outer
  iteration, eps (||A|| ||x|| + ||A|| sum_i |x'_i| ||Y_i|| + sum_i |z'_i| ||W_i||) for the coordinates x', z' of
  the update in the basis columns Y_i, W_i = M Y_i. It replaces r by b - Ax (and z by M^{-1} r) at the end of an
  outer iteration when dev crossed sqrt(eps) ||r|| since the last one and grew by more than 10% since the last
  replacement (the criterion of van der Vorst and Ye, as Carson and Demmel use it for s-step methods). The norms
  come with the Gram matrix in the same reduction; ||A|| is `MatNorm(A, NORM_INFINITY)`, once per operator;
  a matrix without `MatNorm()` gets no replacement. A replacement costs one `MatMult()` and one `PCApply()`.

.seealso: `KSPCACG`, `KSPCACGSetCheckTrueResidual()`
@*/
PetscErrorCode KSPCACGSetReplace(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveBool(ksp, flg, 2);
  PetscTryMethod(ksp, "KSPCACGSetReplace_C", (KSP, PetscBool), (ksp, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetCheckTrueResidual - Makes `KSPCACG` check at the end of a solve that b - Ax meets the tolerance too

  Logically Collective

  Input Parameters:
+ ksp - the `KSPCACG` solver
- flg - `PETSC_TRUE` to check (default `PETSC_FALSE`)

  Options Database Key:
. -ksp_cacg_true_residual <true,false> - the check

  Level: advanced

  Notes:
  The check computes b - Ax (and M^{-1}(b - Ax) for the preconditioned and natural norms): one `MatMult()`, one
  `PCApply()` and one reduction. If the solve claims convergence but the true residual norm exceeds both
  10 max(rtol ||r_0||, abstol) and 10 times the final recursive norm, the reason becomes
  `KSP_DIVERGED_BREAKDOWN`. The norm is printed by -info (and in `KSPCACGGetStatistics()`).

.seealso: `KSPCACG`, `KSPCACGSetReplace()`
@*/
PetscErrorCode KSPCACGSetCheckTrueResidual(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveBool(ksp, flg, 2);
  PetscTryMethod(ksp, "KSPCACGSetCheckTrueResidual_C", (KSP, PetscBool), (ksp, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetUseMatrixPowers - Lets `KSPCACG` use (or not) a matrix powers kernel that the matrix provides

  Logically Collective

  Input Parameters:
+ ksp - the `KSPCACG` solver
- flg - `PETSC_TRUE` (default) to use the one `GpukitMatGetCaps()` reports: the function the matrix composes as
        "MatMatrixPowers_C", or gpukit's CSR kernel for a `MATSEQAIJCUSPARSE` (CUDA builds)

  Options Database Key:
. -ksp_cacg_matrix_powers <true,false> - use the kernel

  Level: developer

  Notes:
  The kernel is used with `PCNONE` and `PCJACOBI`, without a null space; otherwise the basis is built with
  `MatMult()` and `PCApply()`. The contract of the kernel, and its reference `GpukitMatMatrixPowersReference()`, are in
  src/mat/utils/gpukitmat.h.

.seealso: `KSPCACG`
@*/
PetscErrorCode KSPCACGSetUseMatrixPowers(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveBool(ksp, flg, 2);
  PetscTryMethod(ksp, "KSPCACGSetUseMatrixPowers_C", (KSP, PetscBool), (ksp, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetFusedGram - Chooses how `KSPCACG` computes the local part of its Gram matrices

  Logically Collective

  Input Parameters:
+ ksp - the `KSPCACG` solver
- flg - `PETSC_TRUE` (default): one pass over the rows that computes every inner product of the outer iteration
        (each basis vector read once; a host loop for host vectors, one CUDA kernel and one device-to-host copy for
        CUDA vectors), then one `MPI_Allreduce()` of the packed sums; `PETSC_FALSE`: one `VecMDotBegin()` per basis
        vector, one `PetscCommSplitReductionBegin()` and the `VecMDotEnd()` calls, which PETSc packs into one
        `MPI_Allreduce()` as well

  Options Database Key:
. -ksp_cacg_fused_gram <true,false> - the fused pass

  Level: developer

  Notes:
  Both give one global reduction per outer iteration. Vectors in device memory of another kind than CUDA always
  take the `VecMDotBegin()` route.

.seealso: `KSPCACG`
@*/
PetscErrorCode KSPCACGSetFusedGram(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveBool(ksp, flg, 2);
  PetscTryMethod(ksp, "KSPCACGSetFusedGram_C", (KSP, PetscBool), (ksp, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetFusedUpdate - Chooses how `KSPCACG` forms the vectors at the end of an outer iteration on CUDA vectors

  Logically Collective

  Input Parameters:
+ ksp - the `KSPCACG` solver
- flg - `PETSC_TRUE` (default): when the vectors are CUDA vectors (`VECSEQCUDA`, `VECMPICUDA`) and the
        preconditioner is `PCNONE` or `PCJACOBI` (without a null space, not a transpose solve), one CUDA kernel reads
        each basis vector once and writes x += Y x', u = W p', r = W z', p = M^{-1} u, z = M^{-1} r in one pass;
        `PETSC_FALSE`: `VecMAXPY()`, `VecAXPBY()` and `PCApply()` calls

  Options Database Key:
. -ksp_cacg_fused_update <true,false> - the fused kernel

  Level: developer

  Notes:
  The two agree to rounding (the sums are taken in another order). The kernel is local to each rank: no
  communication, no copy between host and device. Host vectors and other preconditioners always take the
  `VecMAXPY()` route. `PCJACOBI` is applied as the diagonal the preconditioner gives a vector of ones.

.seealso: `KSPCACG`, `KSPCACGSetFusedGram()`
@*/
PetscErrorCode KSPCACGSetFusedUpdate(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveBool(ksp, flg, 2);
  PetscTryMethod(ksp, "KSPCACGSetFusedUpdate_C", (KSP, PetscBool), (ksp, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetTune - Chooses whether `KSPCACG` tunes its outer iteration at run time: the number of steps s, plain CG steps
  instead of s-step ones, and the matrix powers kernel or s products for the basis

  Logically Collective

  Input Parameters:
+ ksp - the `KSPCACG` solver
- flg - `PETSC_TRUE` to tune (also on host vectors); `PETSC_FALSE` never. Without a call: tuned on CUDA vectors only

  Options Database Keys:
+ -ksp_cacg_tune <true,false> - tune
- -gpukit_tune <off,cached,on> - every gpukit tuner (off: none; cached, the default: the tuning cache's choice where it has one)

  Level: intermediate

  Notes:
  The tuner (docs/tuning.md) times the first outer iterations of the first solves with an operator, per CG step, and
  keeps the fastest candidate: s is one of the powers of two below the s of `KSPCACGSetS()` and that s; "cg" runs
  plain preconditioned CG steps (two reductions per step, as `KSPCG`) from the same state, so that `KSPCACG` is never
  noticeably slower than `KSPCG` where s-step CG does not pay (a bandwidth-bound product on one GPU); "products" builds
  the basis by s `MatMult()` calls instead of the matrix's matrix powers kernel. The choice is kept in the tuning cache,
  keyed by the operator's size class and type, the preconditioner and the norm, and shown by `KSPView()`. Tuning needs
  one MPI rank (every rank must take the same choice at the same iteration); on more, s and the kernel stay as set.
  `KSPCACGGetStatistics()` counts plain steps and product-built bases.

.seealso: `KSPCACG`, `KSPCACGSetS()`, `KSPCACGSetUseMatrixPowers()`, `KSPCACGGetStatistics()`
@*/
PetscErrorCode KSPCACGSetTune(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveBool(ksp, flg, 2);
  PetscTryMethod(ksp, "KSPCACGSetTune_C", (KSP, PetscBool), (ksp, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetLeanBasis - Chooses whether `KSPCACG` keeps its s-step basis as W alone on CUDA vectors with `PCJACOBI`

  Logically Collective

  Input Parameters:
+ ksp - the `KSPCACG` solver
- flg - `PETSC_TRUE` (default): where the vectors are CUDA vectors, the preconditioner is `PCJACOBI` (no null space,
        not a transpose solve), the matrix has a matrix powers kernel (`MATSGDIACUDA`, or `MATSEQAIJCUSPARSE` through
        gpukit's CSR kernel) and the fused Gram and update steps are on, the basis is stored as W only and Y = M^{-1} W is
        formed by each kernel where it reads it; `PETSC_FALSE`: both W and Y are stored

  Options Database Key:
. -ksp_cacg_lean_basis <true,false> - the lean basis

  Level: developer

  Notes:
  With s steps per outer iteration the basis has 2s + 1 columns; the lean basis writes 2s - 1 vectors fewer per outer
  iteration and the Gram and update kernels read 2s + 1 vectors fewer, which matters where the solve is bound by
  memory bandwidth (large grids on a GPU). Each entry of Y is the single product dinv[i] * W[j][i], as the stored Y
  would hold, so W and the iteration agree with the stored basis to rounding. `KSPCACGGetStatistics()` reports the
  outer iterations that used it.

.seealso: `KSPCACG`, `KSPCACGSetFusedUpdate()`, `KSPCACGSetFusedGram()`, `KSPCACGSetUseMatrixPowers()`
@*/
PetscErrorCode KSPCACGSetLeanBasis(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveBool(ksp, flg, 2);
  PetscTryMethod(ksp, "KSPCACGSetLeanBasis_C", (KSP, PetscBool), (ksp, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGGetStatistics - Gets what the last `KSPSolve()` with `KSPCACG` did: outer iterations, reductions,
  residual replacements, truncations of the basis

  Not Collective

  Input Parameter:
. ksp - the `KSPCACG` solver

  Output Parameter:
. st - the statistics

  Level: advanced

.seealso: `KSPCACG`, `KSPCACGStatistics`
@*/
PetscErrorCode KSPCACGGetStatistics(KSP ksp, KSPCACGStatistics *st)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  GpukitAssertPointer(st, 2);
  PetscUseMethod(ksp, "KSPCACGGetStatistics_C", (KSP, KSPCACGStatistics *), (ksp, st));
  PetscFunctionReturn(PETSC_SUCCESS);
}

