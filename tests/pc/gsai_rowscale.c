/*
   PCGSAI on a row-scaled symmetric matrix A = D_w S (issue 18, item 3: stock KSP ex66). The operator is a 2-D
   Laplacian, periodic in x, with mirror boundaries in y written as ex66 writes them: the stencil's ghost neighbour
   beyond a mirror boundary is the row's own interior neighbour, so that a boundary row holds twice the coupling to
   it. A is singular (constants) and mildly nonsymmetric; D_w^{-1} A is symmetric with w = 2 on the boundary rows.
     -case cg     CG with -pc_gsai_type spd (and with the default type, auto) converges in at most the iterations of
                  CG + Jacobi, the answer satisfies A x = b (true residual, null space removed), PCView() reports the
                  row scaling with max w / min w = 2, and auto picked spd; -pc_gsai_row_scaling 0 turns it off.
     -case random a random nonsymmetric perturbation of the same matrix: no row scaling (PCView() says nothing of it),
                  spd still sets up and GMRES with it converges.
   Options: -m, -n the grid (default 40 x 32). Runs on any number of ranks.
*/
#include "gktest.h"

static PetscErrorCode HasText(const char *buf, const char *text, PetscBool *has)
{
  char *p;

  PetscFunctionBegin;
  PetscCall(PetscStrstr(buf, text, &p));
  *has = p ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the mirror Laplacian (ex66's stencil; entries added, so a mirrored neighbour counts twice) */
static PetscErrorCode BuildMirror(DM da, Mat A, PetscBool perturb)
{
  PetscInt    M, N, xs, ys, xm, ym;
  PetscReal   hx, hy;
  PetscRandom rnd;

  PetscFunctionBegin;
  PetscCall(DMDAGetInfo(da, NULL, &M, &N, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, &xm, &ym, NULL));
  hx = 1.0 / (PetscReal)M;
  hy = 1.0 / (PetscReal)N;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, 0.0, 0.2));
  for (PetscInt j = ys; j < ys + ym; j++)
    for (PetscInt i = xs; i < xs + xm; i++) {
      MatStencil  row = {0}, col[5] = {{0}};
      PetscScalar v[5];
      row.i = i;
      row.j = j;
      /* the mirror: j = -1 is j = 1, j = N is j = N - 2 */
      col[0].i = i;
      col[0].j = j > 0 ? j - 1 : 1;
      col[1].i = i - 1;
      col[1].j = j;
      col[2].i = i;
      col[2].j = j;
      col[3].i = i + 1;
      col[3].j = j;
      col[4].i = i;
      col[4].j = j < N - 1 ? j + 1 : N - 2;
      v[0]     = -hx / hy;
      v[1]     = -hy / hx;
      v[2]     = 2.0 * (hx / hy + hy / hx);
      v[3]     = -hy / hx;
      v[4]     = -hx / hy;
      if (perturb) {
        PetscScalar r;
        PetscCall(PetscRandomGetValue(rnd, &r));
        v[1] *= 1.0 + r;
        v[2] *= 1.0 + r;
      }
      PetscCall(MatSetValuesStencil(A, 1, &row, 5, col, v, ADD_VALUES));
    }
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* solve A x = b with ksp/pc types and options; return iterations, reason and the true relative residual */
static PetscErrorCode Solve(Mat A, Vec b, const char *ksptype, const char *pctype, const char *opts, PetscInt *its, KSPConvergedReason *reason, PetscReal *res, char *view, size_t vlen)
{
  KSP          ksp;
  PC           pc;
  Vec          x, r;
  MatNullSpace ns;
  PetscReal    nb, nr;

  PetscFunctionBegin;
  PetscCall(PetscOptionsClearValue(NULL, "-pc_gsai_type"));
  if (opts) PetscCall(PetscOptionsInsertString(NULL, opts));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, ksptype));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, pctype));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 5000));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, reason));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(MatNullSpaceCreate(PETSC_COMM_WORLD, PETSC_TRUE, 0, NULL, &ns));
  PetscCall(MatNullSpaceRemove(ns, r)); /* KSP removes the constant from the iterates' residuals */
  PetscCall(MatNullSpaceDestroy(&ns));
  PetscCall(VecNorm(r, NORM_2, &nr));
  PetscCall(VecNorm(b, NORM_2, &nb));
  *res = nr / nb;
  if (view) PetscCall(GKPCViewToString(pc, view, vlen));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&r));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  DM                 da;
  Mat                A;
  Vec                b;
  MatNullSpace       ns;
  PetscInt           m = 40, n = 32, itj, its, ita;
  KSPConvergedReason rj, rs, ra;
  PetscReal          resj, ress, resa;
  char               casename[32] = "cg", view[8192];
  PetscBool          isrand, has;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-case", casename, sizeof(casename), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-m", &m, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscStrcmp(casename, "random", &isrand));
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, m, n, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(DMCreateMatrix(da, &A));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(BuildMirror(da, A, isrand));
  PetscCall(DMCreateGlobalVector(da, &b));
  { /* b = A x for a random x: consistent (the left null vector of A is 1/w, not the constant) */
    Vec x;
    PetscCall(VecDuplicate(b, &x));
    PetscCall(VecSetRandom(x, NULL));
    PetscCall(MatMult(A, x, b));
    PetscCall(VecDestroy(&x));
  }
  PetscCall(MatNullSpaceCreate(PETSC_COMM_WORLD, PETSC_TRUE, 0, NULL, &ns));
  if (!isrand) PetscCall(MatSetNullSpace(A, ns));
  PetscCall(MatNullSpaceDestroy(&ns));

  if (!isrand) {
    PetscCall(Solve(A, b, KSPCG, PCJACOBI, NULL, &itj, &rj, &resj, NULL, 0));
    PetscCall(Solve(A, b, KSPCG, "gsai", "-pc_gsai_type spd", &its, &rs, &ress, view, sizeof(view)));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "CG iterations: Jacobi %" PetscInt_FMT " (reason %d, residual %.2e), GSAI spd %" PetscInt_FMT " (reason %d, residual %.2e)\n", itj, (int)rj, (double)resj, its, (int)rs, (double)ress));
    PetscCheck(rj > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "CG + Jacobi did not converge (%d): the test problem is wrong", (int)rj);
    PetscCheck(rs > 0 && its <= itj, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "CG + GSAI spd: reason %d after %" PetscInt_FMT " iterations; CG + Jacobi took %" PetscInt_FMT, (int)rs, its, itj);
    PetscCheck(ress < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "CG + GSAI spd: true relative residual %g", (double)ress);
    PetscCall(HasText(view, "row scaling", &has));
    PetscCheck(has, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "PCView() does not report the row scaling:\n%s", view);
    PetscCall(HasText(view, "max/min 2.", &has));
    PetscCheck(has, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "PCView() does not report w with max/min 2:\n%s", view);
    /* the default type picks spd through the row scaling */
    PetscCall(Solve(A, b, KSPCG, "gsai", NULL, &ita, &ra, &resa, view, sizeof(view)));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "CG iterations: GSAI auto %" PetscInt_FMT " (reason %d, residual %.2e)\n", ita, (int)ra, (double)resa));
    PetscCheck(ra > 0 && ita <= itj && resa < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "CG + GSAI auto: reason %d after %" PetscInt_FMT " iterations (Jacobi %" PetscInt_FMT "), residual %g", (int)ra, ita, itj, (double)resa);
    PetscCall(HasText(view, "type spd", &has));
    PetscCheck(has, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "-pc_gsai_type auto did not pick spd:\n%s", view);
    /* -pc_gsai_row_scaling 0: the symmetric part, as before; PCView() says nothing of a scaling */
    PetscCall(Solve(A, b, KSPCG, "gsai", "-pc_gsai_type spd -pc_gsai_row_scaling 0 -ksp_max_it 300", &ita, &ra, &resa, view, sizeof(view)));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "CG iterations: GSAI spd without the row scaling %" PetscInt_FMT " (reason %d)\n", ita, (int)ra));
    PetscCall(HasText(view, "row scaling", &has));
    PetscCheck(!has, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "-pc_gsai_row_scaling 0 still scaled the rows:\n%s", view);
  } else {
    PetscCall(Solve(A, b, KSPGMRES, "gsai", "-pc_gsai_type spd", &its, &rs, &ress, view, sizeof(view)));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "GMRES iterations with GSAI spd on the perturbed matrix: %" PetscInt_FMT " (reason %d, residual %.2e)\n", its, (int)rs, (double)ress));
    PetscCall(HasText(view, "row scaling", &has));
    PetscCheck(!has, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "PCView() reports a row scaling for a matrix that has none:\n%s", view);
    PetscCheck(rs > 0 && ress < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "GMRES + GSAI spd on the perturbed matrix: reason %d, residual %g", (int)rs, (double)ress);
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "gsai_rowscale %s: ok\n", casename));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
