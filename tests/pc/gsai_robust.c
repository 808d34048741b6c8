/*
   PCGSAI's defaults and traps (issue 18), each against an independent reference:
     -case zerodiag -f <file>   a matrix with zero or missing diagonal entries: the default set-up succeeds, every row of
                                M reduces its row of ||MA - I||_F below that of M = 0 (the reference: 1 per row, since the
                                pattern reaches every index), PCView() reports the zero diagonal entries and the rows
                                that got the structure of A^T; with -converge, GMRES(30) (rtol 1e-8) converges.
     -case zerodiag_random      the same on a random matrix with stored zero diagonal (GKRandomMatrix()), and GMRES converges.
     -case spd_nonsym -n <n>    a 2-D Laplacian whose Dirichlet rows are the identity (A mildly nonsymmetric, as stock KSP
                                ex45/ex66): CG with -pc_gsai_type spd converges in at most the iterations of CG + Jacobi.
     -case auto                 -pc_gsai_type auto picks spd for a symmetric A with a positive diagonal, and for a
                                nonsymmetric A marked MAT_SPD; general for a nonsymmetric A and for a symmetric A with a
                                negative diagonal entry; PCView() says which and why.
     -case report               the cap and ignored options are reported: PCView() shows the budget cap and the rows it
                                cut; -pc_gsai_threshold with -pc_gsai_pattern a is reported as ignored in PCView() and
                                in the -info output (written to a file and read back).
   Runs on any number of ranks.
*/
#include "gktest.h"
#include "gsaiprob.h"
#include <unistd.h>

static PetscErrorCode ExpectText(const char *buf, const char *text, const char *what)
{
  char *p;

  PetscFunctionBegin;
  PetscCall(PetscStrstr(buf, text, &p));
  PetscCheck(p, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: \"%s\" is not in PCView():\n%s", what, text, buf);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GetChoices(PC pc, PCGSAIType *type, PetscInt *maxnnz)
{
  PetscErrorCode (*f)(PC, PCGSAIType *, PCGSAIPatternType *, PetscReal *, PetscInt *, PetscInt *) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)pc, "PCGSAIGetSetUpChoices_C", &f));
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCGSAI has no PCGSAIGetSetUpChoices_C");
  PetscCall((*f)(pc, type, NULL, NULL, NULL, maxnnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the largest row of ||MA - I||_F^2 (left M), or column of ||AM - I||_F^2 (right), by MatMatMult */
static PetscErrorCode MaxRowResidual(Mat M, Mat A, PetscBool right, PetscReal *rmax)
{
  Mat       R;
  PetscInt  rs, re, nc;
  PetscReal loc = 0.0;

  PetscFunctionBegin;
  if (right) {
    Mat AM;
    PetscCall(MatMatMult(A, M, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &AM));
    PetscCall(MatTranspose(AM, MAT_INITIAL_MATRIX, &R));
    PetscCall(MatDestroy(&AM));
  } else PetscCall(MatMatMult(M, A, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &R));
  PetscCall(MatShift(R, -1.0));
  PetscCall(MatGetOwnershipRange(R, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    const PetscScalar *v;
    PetscReal          s = 0.0;
    PetscCall(MatGetRow(R, i, &nc, NULL, &v));
    for (PetscInt e = 0; e < nc; e++) s += PetscRealPart(v[e] * PetscConj(v[e]));
    PetscCall(MatRestoreRow(R, i, &nc, NULL, &v));
    loc = PetscMax(loc, s);
  }
  PetscCallMPI(MPI_Allreduce(&loc, rmax, 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  PetscCall(MatDestroy(&R));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* solve A x = A 1 with ksptype and the PC pctype (PCGSAI options from the database); iterations and reason */
static PetscErrorCode Solve(Mat A, KSPType ksptype, PCType pctype, PetscReal rtol, Vec xex, PetscInt *its, KSPConvergedReason *reason)
{
  KSP ksp;
  PC  pc;
  Vec x, b;

  PetscFunctionBegin;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, ksptype));
  PetscCall(KSPGMRESSetRestart(ksp, 30));
  PetscCall(KSPSetTolerances(ksp, rtol, PETSC_DEFAULT, PETSC_DEFAULT, 5000));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, pctype));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(MatCreateVecs(A, &x, &b));
  if (xex) PetscCall(VecCopy(xex, x));
  else PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(A, x, b));
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, reason));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CaseZeroDiag(Mat A, PetscBool converge, const char *name)
{
  PC                 pc;
  Mat                M;
  PetscReal          rmax;
  PetscInt           its, nf;
  KSPConvergedReason reason;
  char               buf[4096];
  PCSide             side;

  PetscFunctionBegin;
  PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
  PetscCall(PCSetType(pc, PCGSAI));
  PetscCall(PCSetOperators(pc, A, A));
  PetscCall(PCSetFromOptions(pc));
  PetscCall(PCSetUp(pc));
  PetscCall(PCGSAIGetMatrix(pc, &M));
  PetscCall(PCGSAIGetSetUpInfo(pc, NULL, &nf, NULL));
  PetscCall(PCGSAIGetSide(pc, &side));
  PetscCall(MaxRowResidual(M, A, side == PC_RIGHT ? PETSC_TRUE : PETSC_FALSE, &rmax));
  PetscCheck(rmax < 1.0 - 1e-10, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: a row of MA - I has squared norm %g, no better than M = 0", name, (double)rmax);
  PetscCall(GKPCViewToString(pc, buf, sizeof(buf)));
  PetscCall(ExpectText(buf, "zero or missing diagonal entries of A:", name));
  PetscCall(ExpectText(buf, "given the structure of A^T there:", name));
  PetscCall(PCDestroy(&pc));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: %s: set-up without error, %" PetscInt_FMT " fallbacks, largest row of ||MA - I||_F^2 = %.3g < 1\n", name, nf, (double)rmax));
  if (converge) {
    PetscCall(Solve(A, KSPGMRES, PCGSAI, 1e-8, NULL, &its, &reason));
    PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: GMRES(30) with PCGSAI did not converge: %s after %" PetscInt_FMT " iterations", name, KSPConvergedReasons[reason], its);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: %s: GMRES(30) + GSAI converges in %" PetscInt_FMT " iterations\n", name, its));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* 2-D Laplacian on an n x n grid, Dirichlet rows = the identity scaled by 2 (interior rows keep their boundary couplings) */
static PetscErrorCode LaplacianDirichletRows(PetscInt n, Mat *A)
{
  PetscInt rs, re, N = n * n;

  PetscFunctionBegin;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, N, N, 5, NULL, 4, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt r = rs; r < re; r++) {
    const PetscInt i = r / n, j = r % n;
    if (i == 0 || j == 0 || i == n - 1 || j == n - 1) PetscCall(MatSetValue(*A, r, r, 2.0, INSERT_VALUES));
    else {
      PetscCall(MatSetValue(*A, r, r, 4.0, INSERT_VALUES));
      PetscCall(MatSetValue(*A, r, r - 1, -1.0, INSERT_VALUES));
      PetscCall(MatSetValue(*A, r, r + 1, -1.0, INSERT_VALUES));
      PetscCall(MatSetValue(*A, r, r - n, -1.0, INSERT_VALUES));
      PetscCall(MatSetValue(*A, r, r + n, -1.0, INSERT_VALUES));
    }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CaseSPDNonsym(PetscInt n)
{
  Mat                A;
  PetscInt           itj, itg;
  KSPConvergedReason rj, rg;
  PetscBool          sym;
  Vec                xex;

  PetscFunctionBegin;
  PetscCall(LaplacianDirichletRows(n, &A));
  PetscCall(MatIsSymmetric(A, 0.0, &sym));
  PetscCheck(!sym, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the test matrix should be nonsymmetric");
  { /* homogeneous Dirichlet values (as ex45/ex66): x = 1 inside, 0 on the boundary */
    PetscInt rs, re;
    PetscCall(MatCreateVecs(A, &xex, NULL));
    PetscCall(VecGetOwnershipRange(xex, &rs, &re));
    for (PetscInt r = rs; r < re; r++) {
      const PetscInt i = r / n, j = r % n;
      PetscCall(VecSetValue(xex, r, (i == 0 || j == 0 || i == n - 1 || j == n - 1) ? 0.0 : 1.0, INSERT_VALUES));
    }
    PetscCall(VecAssemblyBegin(xex));
    PetscCall(VecAssemblyEnd(xex));
  }
  PetscCall(Solve(A, KSPCG, PCJACOBI, 1e-8, xex, &itj, &rj));
  PetscCall(PetscOptionsSetValue(NULL, "-pc_gsai_type", "spd"));
  PetscCall(Solve(A, KSPCG, PCGSAI, 1e-8, xex, &itg, &rg));
  PetscCall(VecDestroy(&xex));
  PetscCall(PetscOptionsClearValue(NULL, "-pc_gsai_type"));
  PetscCheck(rj > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "CG + Jacobi did not converge: %s", KSPConvergedReasons[rj]);
  PetscCheck(rg > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "CG + GSAI spd did not converge on the nearly symmetric Laplacian: %s after %" PetscInt_FMT " iterations (Jacobi: %" PetscInt_FMT ")", KSPConvergedReasons[rg], itg, itj);
  PetscCheck(itg <= itj, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "CG + GSAI spd took %" PetscInt_FMT " iterations, CG + Jacobi %" PetscInt_FMT, itg, itj);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: Laplacian with Dirichlet identity rows (nonsymmetric), CG: Jacobi %" PetscInt_FMT ", GSAI spd %" PetscInt_FMT " iterations\n", itj, itg));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ExpectAuto(Mat A, PCGSAIType expect, const char *why, const char *what)
{
  PC         pc;
  PCGSAIType type, opt;
  char       buf[4096];

  PetscFunctionBegin;
  PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
  PetscCall(PCSetType(pc, PCGSAI));
  PetscCall(PCSetOperators(pc, A, A));
  PetscCall(PCGSAIGetType(pc, &opt));
  PetscCheck(!strcmp(PCGSAITypes[opt], "auto"), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the default type is %s, not auto", PCGSAITypes[opt]);
  PetscCall(PCSetUp(pc));
  PetscCall(GetChoices(pc, &type, NULL));
  PetscCheck(type == expect, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: auto picked %s, expected %s", what, PCGSAITypes[type], PCGSAITypes[expect]);
  PetscCall(GKPCViewToString(pc, buf, sizeof(buf)));
  PetscCall(ExpectText(buf, "(picked by auto)", what));
  PetscCall(ExpectText(buf, why, what));
  PetscCall(PCDestroy(&pc));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: auto: %s -> %s\n", what, PCGSAITypes[expect]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CaseAuto(void)
{
  Mat A;
  DM  da;

  PetscFunctionBegin;
  PetscCall(GKDMDAOperator(PETSC_COMM_WORLD, 2, 8, 0.0, &da, &A)); /* symmetric Laplacian */
  PetscCall(ExpectAuto(A, PCGSAI_SPD, "A is symmetric (checked) with a positive diagonal", "2-D Laplacian"));
  PetscCall(MatScale(A, -1.0)); /* symmetric, negative diagonal */
  PetscCall(ExpectAuto(A, PCGSAI_GENERAL, "diagonal entries are not positive", "minus the 2-D Laplacian"));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscCall(GKDMDAOperator(PETSC_COMM_WORLD, 2, 8, 50.0, &da, &A)); /* convection: nonsymmetric */
  PetscCall(ExpectAuto(A, PCGSAI_GENERAL, "A is not symmetric (checked)", "2-D convection-diffusion"));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscCall(LaplacianDirichletRows(8, &A)); /* nonsymmetric, but marked SPD: the flag is trusted */
  PetscCall(MatSetOption(A, MAT_SPD, PETSC_TRUE));
  PetscCall(ExpectAuto(A, PCGSAI_SPD, "A is marked SPD (MAT_SPD)", "Laplacian marked MAT_SPD"));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CaseReport(void)
{
  Mat         A;
  DM          da;
  PC          pc;
  PCGSAIType  type;
  PetscInt    cap;
  char        buf[4096], fname[PETSC_MAX_PATH_LEN], *p = NULL;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(GKDMDAOperator(PETSC_COMM_WORLD, 2, 10, 30.0, &da, &A));
  /* the default: the power pattern capped by the budget, the cut rows counted */
  PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
  PetscCall(PCSetType(pc, PCGSAI));
  PetscCall(PCSetOperators(pc, A, A));
  PetscCall(PCSetUp(pc));
  PetscCall(GetChoices(pc, &type, &cap));
  PetscCheck(cap == 10, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the budget cap of a 5-point operator should be ceil(2 x 5 (less at the boundary)) = 10, got %" PetscInt_FMT, cap);
  PetscCall(GKPCViewToString(pc, buf, sizeof(buf)));
  PetscCall(ExpectText(buf, "pattern power (picked by auto)", "default pattern"));
  PetscCall(ExpectText(buf, "nonzeros per row (budget)", "default cap"));
  PetscCall(ExpectText(buf, "capped: the cap cut the pattern of", "default cap"));
  PetscCall(PCDestroy(&pc));
  /* an option without effect: in PCView() and in the -info output */
  PetscCall(PetscSNPrintf(fname, sizeof(fname), "gsai_robust_info.%d", (int)getpid()));
  PetscCall(PetscInfoSetFile(fname, "w")); /* PETSc appends .<rank> */
  PetscCall(PetscInfoAllow(PETSC_TRUE));
  PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
  PetscCall(PCSetType(pc, PCGSAI));
  PetscCall(PCSetOperators(pc, A, A));
  PetscCall(PCGSAISetPattern(pc, PCGSAI_PATTERN_A));
  PetscCall(PCGSAISetThreshold(pc, 0.5));
  PetscCall(PCSetUp(pc));
  PetscCall(PetscInfoAllow(PETSC_FALSE));
  PetscCall(PetscInfoSetFile(NULL, NULL));
  PetscCall(GKPCViewToString(pc, buf, sizeof(buf)));
  PetscCall(ExpectText(buf, "ignored: -pc_gsai_threshold has no effect with -pc_gsai_pattern a", "threshold with pattern a"));
  PetscCall(PCDestroy(&pc));
  PetscCall(PetscStrlcat(fname, rank == 0 ? ".0" : "", sizeof(fname)));
  if (rank == 0) {
    FILE  *f = fopen(fname, "r");
    char   info[65536];
    size_t len;
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot read back the -info file %s", fname);
    len       = fread(info, 1, sizeof(info) - 1, f);
    info[len] = 0;
    fclose(f);
    PetscCall(PetscStrstr(info, "-pc_gsai_threshold has no effect with -pc_gsai_pattern a", &p));
    PetscCheck(p, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the -info output does not say that -pc_gsai_threshold is ignored:\n%s", info);
  }
  if (rank == 0) (void)remove(fname);
  else {
    PetscCall(PetscSNPrintf(fname, sizeof(fname), "gsai_robust_info.%d.%d", (int)getpid(), (int)rank));
    (void)remove(fname);
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: report: budget cap %" PetscInt_FMT " and the cut rows in PCView(); the ignored threshold in PCView() and -info\n", cap));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A(i,:) = T(i+1 mod n,:), T = 4 on the diagonal and -1, 0.5 at offsets -2, +2: nonsingular, no diagonal entry */
static PetscErrorCode ShiftedPentadiagonal(PetscInt n, Mat *A)
{
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n, n, 3, NULL, 3, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    const PetscInt t = (i + 1) % n;
    PetscCall(MatSetValue(*A, i, t, 4.0, INSERT_VALUES));
    if (t >= 2) PetscCall(MatSetValue(*A, i, t - 2, -1.0, INSERT_VALUES));
    if (t + 2 < n) PetscCall(MatSetValue(*A, i, t + 2, 0.5, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char      kase[64] = "", file[PETSC_MAX_PATH_LEN] = "";
  PetscInt  n = 32;
  PetscBool converge = PETSC_FALSE;
  Mat       A;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-case", kase, sizeof(kase), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-converge", &converge, NULL));
  if (!strcmp(kase, "zerodiag")) {
    PetscCall(GKLoadMatrixMarket(PETSC_COMM_WORLD, file, MATAIJ, &A));
    PetscCall(CaseZeroDiag(A, converge, file));
    PetscCall(MatDestroy(&A));
  } else if (!strcmp(kase, "zerodiag_random")) {
    PetscCall(ShiftedPentadiagonal(200, &A));
    PetscCall(CaseZeroDiag(A, PETSC_TRUE, "row-shifted pentadiagonal (no diagonal)"));
    PetscCall(MatDestroy(&A));
  } else if (!strcmp(kase, "spd_nonsym")) PetscCall(CaseSPDNonsym(n));
  else if (!strcmp(kase, "auto")) PetscCall(CaseAuto());
  else if (!strcmp(kase, "report")) PetscCall(CaseReport());
  else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-case zerodiag|zerodiag_random|spd_nonsym|auto|report, got \"%s\"", kase);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "gsai_robust: ok\n"));
  PetscCall(PetscFinalize());
  return 0;
}
