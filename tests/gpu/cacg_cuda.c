static const char help[] = "KSPCACG on CUDA vectors and GPU matrices (aijcusparse, sgdiacuda) against KSPCACG on the host (aij) in the same run.\n\n"
                           "  -dim 2|3 -n n            Poisson grid (default 2, 128)\n"
                           "  -mat_types t1,t2         GPU matrix types (default aijcusparse,sgdiacuda)\n"
                           "  -s 2,4,8 -bases b1,b2    KSPCACG parameters to run (default 2,4,8 and newton,chebyshev)\n"
                           "  -rtol r                  relative tolerance (default 1e-10)\n"
                           "  -sol_tol t               ||x_gpu - x_host|| <= t ||x_host|| (default 1e-6)\n"
                           "  -expect_device_gram 0|1  the Gram matrices must come from the device kernel (default 1; 0 with -ksp_cacg_fused_gram 0)\n"
                           "Other -ksp_cacg_* options reach both solvers.\n";

/*
   For each GPU matrix type and each (basis, s): KSPCACG + Jacobi on the host (MATAIJ, host vectors) and on the GPU
   (VECCUDA vectors), the same right-hand side. Checks: both converge; iteration counts within 2% (at least 1) of
   each other; solutions within -sol_tol; GPU KSPCACG within 10% of GPU KSPCG's iterations; with the fused Gram
   matrix, every outer iteration's Gram matrix came from the device kernel; and in a second GPU solve (the
   spectrum estimate reused) on one rank no host-to-device copy at all and at most one device-to-host copy per outer
   iteration plus a few (PETSc logs the single scalars of its own dot products apart; those are not counted).
*/
#include "gktest.h"
#include <petscksp.h>

/* the vector copies between host and device PETSc has logged (not the single scalars of dot products) */
#if PetscDefined(HAVE_CUDA)
  #define GK_GTOC() petsc_gtoc_ct
  #define GK_CTOG() petsc_ctog_ct
#else
  #define GK_GTOC() 0.0
  #define GK_CTOG() 0.0
#endif

static PetscErrorCode CreateProblem(PetscInt dim, PetscInt n, const char *mattype, PetscBool gpu, DM *da, Mat *A)
{
  PetscFunctionBegin;
  if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, da));
  if (gpu) PetscCall(DMSetVecType(*da, VECCUDA));
  PetscCall(DMSetMatType(*da, mattype));
  PetscCall(DMSetUp(*da));
  PetscCall(DMCreateMatrix(*da, A));
  PetscCall(GKFillPoisson(*da, *A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CreateSolver(Mat A, KSPType type, PetscInt s, KSPCACGBasisType basis, PetscReal rtol, KSP *ksp)
{
  PC pc;

  PetscFunctionBegin;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, ksp));
  PetscCall(KSPSetOperators(*ksp, A, A));
  PetscCall(KSPSetType(*ksp, type));
  PetscCall(KSPGetPC(*ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(*ksp, rtol, PETSC_DEFAULT, PETSC_DEFAULT, 100000));
  if (s) {
    PetscCall(KSPCACGSetS(*ksp, s));
    PetscCall(KSPCACGSetBasis(*ksp, basis));
  }
  PetscCall(KSPSetFromOptions(*ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* dst (any type) = src (any type), through host arrays */
static PetscErrorCode CopyValues(Vec src, Vec dst)
{
  const PetscScalar *s;
  PetscScalar       *d;
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(src, &n));
  PetscCall(VecGetArrayRead(src, &s));
  PetscCall(VecGetArrayWrite(dst, &d));
  PetscCall(PetscArraycpy(d, s, n));
  PetscCall(VecRestoreArrayWrite(dst, &d));
  PetscCall(VecRestoreArrayRead(src, &s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ||a - b|| / ||b|| for vectors of different types */
static PetscErrorCode RelDiff(Vec a, Vec b, PetscReal *rel)
{
  Vec       t;
  PetscReal nd, nb;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(b, &t));
  PetscCall(CopyValues(a, t));
  PetscCall(VecAXPY(t, -1.0, b));
  PetscCall(VecNorm(t, NORM_2, &nd));
  PetscCall(VecNorm(b, NORM_2, &nb));
  PetscCall(VecDestroy(&t));
  *rel = nd / nb;
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char        *types[4], *bases[4];
  PetscInt     dim = 2, n = 128, slist[8] = {2, 4, 8}, ns = 8, nt = 4, nb = 4, fails = 0;
  PetscReal    rtol = 1e-10, soltol = 1e-6;
  PetscBool    flg, expectdev = PETSC_TRUE;
  PetscMPIInt  size;
  DM           dah;
  Mat          Ah;
  Vec          bh, xh;
  PetscRandom  rnd;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "KSPCACG GPU test", NULL);
  PetscCall(PetscOptionsInt("-dim", "dimension", NULL, dim, &dim, NULL));
  PetscCall(PetscOptionsInt("-n", "grid points per direction", NULL, n, &n, NULL));
  PetscCall(PetscOptionsStringArray("-mat_types", "GPU matrix types", NULL, types, &nt, &flg));
  if (!flg) {
    nt = 2;
    PetscCall(PetscStrallocpy(MATAIJCUSPARSE, &types[0]));
    PetscCall(PetscStrallocpy(MATSGDIACUDA, &types[1]));
  }
  PetscCall(PetscOptionsIntArray("-s", "values of s", NULL, slist, &ns, &flg));
  if (!flg) ns = 3;
  PetscCall(PetscOptionsStringArray("-bases", "bases", NULL, bases, &nb, &flg));
  if (!flg) {
    nb = 2;
    PetscCall(PetscStrallocpy("newton", &bases[0]));
    PetscCall(PetscStrallocpy("chebyshev", &bases[1]));
  }
  PetscCall(PetscOptionsReal("-rtol", "relative tolerance", NULL, rtol, &rtol, NULL));
  PetscCall(PetscOptionsReal("-sol_tol", "solution tolerance", NULL, soltol, &soltol, NULL));
  PetscCall(PetscOptionsBool("-expect_device_gram", "device Gram kernel expected", NULL, expectdev, &expectdev, NULL));
  PetscOptionsEnd();
  PetscCheck(PetscDefined(HAVE_CUDA), PETSC_COMM_WORLD, PETSC_ERR_SUP, "This test needs a PETSc configured with CUDA (make petsc-cuda) and a GPU");

  /* the host reference problem */
  PetscCall(CreateProblem(dim, n, MATAIJ, PETSC_FALSE, &dah, &Ah));
  PetscCall(DMCreateGlobalVector(dah, &bh));
  PetscCall(VecDuplicate(bh, &xh));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 4242));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(xh, rnd));
  PetscCall(MatMult(Ah, xh, bh));

  for (PetscInt ti = 0; ti < nt; ti++) {
    DM       dad;
    Mat      Ad;
    Vec      bd, xd;
    PetscInt itscg;
    {
      KSP ksp;
      PetscCall(CreateProblem(dim, n, types[ti], PETSC_TRUE, &dad, &Ad));
      PetscCall(DMCreateGlobalVector(dad, &bd));
      PetscCall(VecDuplicate(bd, &xd));
      PetscCall(CopyValues(bh, bd));
      PetscCall(CreateSolver(Ad, KSPCG, 0, KSP_CACG_BASIS_NEWTON, rtol, &ksp));
      PetscCall(VecSet(xd, 0.0));
      PetscCall(KSPSolve(ksp, bd, xd));
      PetscCall(KSPGetIterationNumber(ksp, &itscg));
      PetscCall(KSPDestroy(&ksp));
    }
    for (PetscInt bi = 0; bi < nb; bi++) {
      KSPCACGBasisType basis;
      PetscCall(PetscEnumFind(KSPCACGBasisTypes, bases[bi], (PetscEnum *)&basis, &flg));
      PetscCheck(flg, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-bases: unknown basis %s", bases[bi]);
      for (PetscInt si = 0; si < ns; si++) {
        KSP                kh, kd;
        PetscInt           itsh, itsd;
        KSPConvergedReason rh, rd;
        KSPCACGStatistics  sth, std;
        PetscReal          diff = 0.0;
        PetscLogDouble     gtoc0, ctog0, gtoc, ctog;
        char               tag[128];

        PetscCall(PetscSNPrintf(tag, sizeof(tag), "%s s=%" PetscInt_FMT " %s", types[ti], slist[si], bases[bi]));
        PetscCall(CreateSolver(Ah, KSPCACG, slist[si], basis, rtol, &kh));
        PetscCall(VecSet(xh, 0.0));
        PetscCall(KSPSolve(kh, bh, xh));
        PetscCall(KSPGetIterationNumber(kh, &itsh));
        PetscCall(KSPGetConvergedReason(kh, &rh));
        PetscCall(KSPCACGGetStatistics(kh, &sth));

        PetscCall(CreateSolver(Ad, KSPCACG, slist[si], basis, rtol, &kd));
        PetscCall(VecSet(xd, 0.0));
        PetscCall(KSPSolve(kd, bd, xd)); /* the first solve estimates the spectrum; the second is counted */
        PetscCall(VecSet(xd, 0.0));
        gtoc0 = GK_GTOC();
        ctog0 = GK_CTOG();
        PetscCall(KSPSolve(kd, bd, xd));
        gtoc = GK_GTOC() - gtoc0;
        ctog = GK_CTOG() - ctog0;
        PetscCall(KSPGetIterationNumber(kd, &itsd));
        PetscCall(KSPGetConvergedReason(kd, &rd));
        PetscCall(KSPCACGGetStatistics(kd, &std));
        PetscCall(RelDiff(xd, xh, &diff));
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: host %s %" PetscInt_FMT " its, GPU %s %" PetscInt_FMT " its (GPU KSPCG %" PetscInt_FMT "), ||x_gpu - x_host||/||x_host|| %.2e; GPU solve: %" PetscInt_FMT " outer (%" PetscInt_FMT " on the device Gram kernel), %g device-to-host and %g host-to-device copies\n", tag, KSPConvergedReasons[rh], itsh,
                              KSPConvergedReasons[rd], itsd, itscg, (double)diff, std.outer, std.devicegram, (double)gtoc, (double)ctog));
        if (rh <= 0 || rd <= 0) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: did not converge\n", tag));
          fails++;
        }
        if (PetscAbsInt(itsh - itsd) > PetscMax(1, itsh / 50)) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: %" PetscInt_FMT " iterations on the GPU, %" PetscInt_FMT " on the host\n", tag, itsd, itsh));
          fails++;
        }
        if (itsd > 1.1 * itscg + 0.5 || itsd < 0.9 * itscg - 0.5) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: %" PetscInt_FMT " iterations, GPU KSPCG %" PetscInt_FMT ": more than 10%% apart\n", tag, itsd, itscg));
          fails++;
        }
        if (!(diff <= soltol)) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: solutions differ by %.2e relative (tolerance %.2e)\n", tag, (double)diff, (double)soltol));
          fails++;
        }
        if (expectdev && std.devicegram != std.outer) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: %" PetscInt_FMT " of %" PetscInt_FMT " Gram matrices came from the device kernel\n", tag, std.devicegram, std.outer));
          fails++;
        }
        if (size == 1 && expectdev && (ctog > 0 || gtoc > std.outer + std.direct + 2 * std.cgsteps + 6)) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: %g host-to-device copies (0 expected), %g device-to-host (at most %" PetscInt_FMT " expected)\n", tag, (double)ctog, (double)gtoc, std.outer + std.direct + 2 * std.cgsteps + 6));
          fails++;
        }
        PetscCall(KSPDestroy(&kh));
        PetscCall(KSPDestroy(&kd));
      }
    }
    PetscCall(VecDestroy(&bd));
    PetscCall(VecDestroy(&xd));
    PetscCall(MatDestroy(&Ad));
    PetscCall(DMDestroy(&dad));
  }
  PetscCheck(!fails, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%" PetscInt_FMT " checks failed", fails);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "all checks passed\n"));
  for (PetscInt i = 0; i < nt; i++) PetscCall(PetscFree(types[i]));
  for (PetscInt i = 0; i < nb; i++) PetscCall(PetscFree(bases[i]));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(VecDestroy(&bh));
  PetscCall(VecDestroy(&xh));
  PetscCall(MatDestroy(&Ah));
  PetscCall(DMDestroy(&dah));
  PetscCall(PetscFinalize());
  return 0;
}
