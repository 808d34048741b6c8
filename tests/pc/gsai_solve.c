/*
   Krylov solves with PCGSAI: the same system (b = A x, x random with a fixed seed) solved with no
   preconditioner, PCJACOBI and PCGSAI, with the KSP and side from the options (-ksp_type, -ksp_pc_side,
   -ksp_rtol; default BiCGStab, rtol 1e-7 as in the seed). Prints one table row:
     name | ksp | side | iterations none / jacobi / gsai | nnz(M)/nnz(A)
   and fails unless GSAI converges with a true relative residual below 10 rtol. -expect_better: GSAI must
   also need fewer iterations than Jacobi. -expect_its n [-expect_its_rtol r]: GSAI must need n iterations
   (within r n: M is the same on any number of ranks, but the Krylov method's reductions are not, so counts on
   several ranks move a little, with Jacobi as well). -skip_none: no unpreconditioned solve (shown as "-").

   Problem: -f <file.mtx[.gz]> | -da <2|3> -n <n> [-beta b] (-dm_mat_type applies) | -random n.
*/
#include "gktest.h"
#include "gsaiprob.h"

static PetscErrorCode Solve(Mat A, Vec b, PCType pctype, const char *name, PetscInt *its, PetscBool *conv, PetscReal *relres, PetscInt *nnzM)
{
  KSP                ksp;
  PC                 pc;
  Vec                x, r;
  KSPConvergedReason reason;
  PetscReal          nb, nr;

  PetscFunctionBegin;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPBCGS));
  PetscCall(KSPSetTolerances(ksp, 1e-7, PETSC_DEFAULT, PETSC_DEFAULT, 10000));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, pctype));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  *conv = reason > 0 ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAXPY(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &nr));
  PetscCall(VecNorm(b, NORM_2, &nb));
  *relres = nr / nb;
  if (nnzM) PetscCall(PCGSAIGetSetUpInfo(pc, nnzM, NULL, NULL));
  PetscCall(PetscInfo(ksp, "%s: %" PetscInt_FMT " iterations, reason %s\n", name, *its, KSPConvergedReasons[reason]));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&r));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat         A;
  DM          da = NULL;
  Vec         b, xex;
  PetscRandom rnd;
  char        file[PETSC_MAX_PATH_LEN] = "", name[PETSC_MAX_PATH_LEN] = "", kspname[64] = "bcgs", sidename[64] = "left";
  PetscInt    dim = 0, n = 16, nrand = 0, its[3] = {0, 0, 0}, nnzM = 0, expect_its = -1;
  PetscReal   beta = 0.0, rres[3] = {0, 0, 0}, rtol = 1e-7, its_rtol = 0.0;
  PetscBool   conv[3] = {PETSC_FALSE, PETSC_FALSE, PETSC_FALSE}, better = PETSC_FALSE, skipnone = PETSC_FALSE;
  MatInfo     info;
  const char *pcs[3] = {PCNONE, PCJACOBI, PCGSAI};

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-da", &dim, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-random", &nrand, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-beta", &beta, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_better", &better, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_its", &expect_its, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-expect_its_rtol", &its_rtol, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-skip_none", &skipnone, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-ksp_type", kspname, sizeof(kspname), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-ksp_pc_side", sidename, sizeof(sidename), NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-ksp_rtol", &rtol, NULL));

  if (file[0]) {
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    PetscCall(PetscStrncpy(name, base, sizeof(name)));
    {
      char *dot;
      PetscCall(PetscStrchr(name, '.', &dot));
      if (dot) *dot = 0;
    }
    PetscCall(GKLoadMatrixMarket(PETSC_COMM_WORLD, file, MATAIJ, &A));
  } else if (nrand) {
    PetscCall(PetscSNPrintf(name, sizeof(name), "random %" PetscInt_FMT, nrand));
    PetscCall(GKRandomMatrix(PETSC_COMM_WORLD, nrand, 4, PETSC_FALSE, &A));
  } else {
    PetscCheck(dim == 2 || dim == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "give -f <file>, -random <n> or -da 2|3");
    PetscCall(GKDMDAOperator(PETSC_COMM_WORLD, dim, n, beta, &da, &A));
    PetscCall(PetscSNPrintf(name, sizeof(name), "DMDA %" PetscInt_FMT "-D %" PetscInt_FMT "^%" PetscInt_FMT " %s", dim, n, dim, beta != 0.0 ? "conv-diff" : "Poisson"));
    if (beta != 0.0) {
      size_t l;
      PetscCall(PetscStrlen(name, &l));
      PetscCall(PetscSNPrintf(name + l, sizeof(name) - l, " beta %d", (int)beta));
    }
  }
  PetscCall(MatCreateVecs(A, &xex, &b));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 2026));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(xex, rnd));
  PetscCall(MatMult(A, xex, b));
  for (PetscInt p = skipnone ? 1 : 0; p < 3; p++) PetscCall(Solve(A, b, pcs[p], name, &its[p], &conv[p], &rres[p], p == 2 ? &nnzM : NULL));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  {
    char cell[3][32];
    for (PetscInt p = 0; p < 3; p++) PetscCall(PetscSNPrintf(cell[p], sizeof(cell[p]), conv[p] ? "%" PetscInt_FMT : "%" PetscInt_FMT "*", its[p]));
    if (skipnone) PetscCall(PetscStrncpy(cell[0], "-", sizeof(cell[0])));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "| %s | %s | %s | %s | %s | %s | %.2f |\n", name, kspname, sidename, cell[0], cell[1], cell[2], (double)nnzM / info.nz_used));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "(* = not converged; true relative residuals %.1e / %.1e / %.1e)\n", (double)rres[0], (double)rres[1], (double)rres[2]));
  }
  PetscCheck(conv[2], PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "%s: GSAI did not converge in %" PetscInt_FMT " iterations", name, its[2]);
  PetscCheck(rres[2] <= 10 * rtol, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "%s: GSAI true relative residual %g above 10 rtol", name, (double)rres[2]);
  if (better) PetscCheck(!conv[1] || its[2] < its[1], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: GSAI needed %" PetscInt_FMT " iterations, Jacobi %" PetscInt_FMT, name, its[2], its[1]);
  if (expect_its >= 0)
    PetscCheck(PetscAbsReal((PetscReal)(its[2] - expect_its)) <= its_rtol * expect_its, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: GSAI needed %" PetscInt_FMT " iterations, expected %" PetscInt_FMT " (within %g relative)", name, its[2], expect_its, (double)its_rtol);
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xex));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
