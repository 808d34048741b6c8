static const char help[] = "MATSGDIA against MATAIJ through the preconditioners that work with AIJ (issue 16).\n"
                           "Options: -dim 2|3 -dof d -stencil star|box -n points per dimension -mg_dm (PCMG levels from the DMDA) -poisson\n"
                           "         -exact (iteration counts and solutions must be identical) -rtol_sol r (default 1e-8)\n"
                           "         -check_symmetric; any KSP/PC options (prefix none), applied to both solves\n";

/*
   The same symmetric, diagonally dominant operator on the same DMDA is assembled once as DMCreateMatrix()'s AIJ and
   once as MATSGDIA, through the same MatSetValuesStencil() calls; the same right-hand side is solved with the same
   KSP options (PCASM, PCGASM, PCREDUNDANT, PCSVD, PCMG with Galerkin coarse operators, PCGAMG, LU/Cholesky with
   MUMPS or SuperLU_dist, ...). The iteration counts must agree and the solutions agree to -rtol_sol relative (with
   -exact: the same count and the same solution bit for bit). With -check_symmetric MatIsSymmetric() must say what it
   says for AIJ.
*/
#include "gktest.h"
#include <petscksp.h>
#include "gpukitcompat.h"

typedef struct {
  DM       da;
  PetscInt dim, dof;
} Ctx;

/* a symmetric coupling value of natural points a <= b, components r, c (never zero) */
static PetscBool poisson = PETSC_FALSE; /* -poisson: every coupling -1 (a plain Laplacian-like operator) */

static PetscScalar Coupling(PetscInt a, PetscInt b, PetscInt r, PetscInt c)
{
  if (poisson) return -1.0;
  PetscInt lo = PetscMin(a, b), hi = PetscMax(a, b), rr = PetscMin(r, c), cc = PetscMax(r, c);
  return -(0.5 + 0.125 * ((3 * lo + 5 * hi + 7 * rr + 11 * cc) % 8));
}

static PetscErrorCode Fill(Ctx *c, Mat A)
{
  DMDALocalInfo   info;
  DMDAStencilType st;
  PetscInt        sw, ez, ey, dof = c->dof;
  MatStencil     *cols;
  PetscScalar    *vals;

  PetscFunctionBegin;
  PetscCall(DMDAGetLocalInfo(c->da, &info));
  PetscCall(DMDAGetInfo(c->da, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &sw, NULL, NULL, NULL, &st));
  ez = c->dim > 2 ? sw : 0;
  ey = c->dim > 1 ? sw : 0;
  PetscCall(PetscMalloc2(27 * dof, &cols, 27 * dof, &vals));
  for (PetscInt k = info.zs; k < info.zs + info.zm; k++)
    for (PetscInt j = info.ys; j < info.ys + info.ym; j++)
      for (PetscInt i = info.xs; i < info.xs + info.xm; i++)
        for (PetscInt r = 0; r < dof; r++) {
          MatStencil  row = {.k = k, .j = j, .i = i, .c = r};
          PetscInt    nc = 0, p = i + info.mx * (j + info.my * k), diag = -1;
          PetscScalar off = 0;
          for (PetscInt dz = -ez; dz <= ez; dz++)
            for (PetscInt dy = -ey; dy <= ey; dy++)
              for (PetscInt dx = -sw; dx <= sw; dx++) {
                PetscInt ii = i + dx, jj = j + dy, kk = k + dz;
                if (st == DMDA_STENCIL_STAR && ((dx != 0) + (dy != 0) + (dz != 0)) > 1) continue;
                if (ii < 0 || ii >= info.mx || jj < 0 || jj >= info.my || kk < 0 || kk >= info.mz) continue;
                for (PetscInt cc = 0; cc < dof; cc++) {
                  PetscInt q = ii + info.mx * (jj + info.my * kk);
                  cols[nc].i = ii;
                  cols[nc].j = jj;
                  cols[nc].k = kk;
                  cols[nc].c = cc;
                  if (q == p && cc == r) {
                    diag     = nc;
                    vals[nc] = 0;
                  } else {
                    vals[nc] = Coupling(p, q, r, cc) * (q == p ? 0.25 : 1.0);
                    off += PetscAbsScalar(vals[nc]);
                  }
                  nc++;
                }
              }
          vals[diag] = off + 0.05; /* strictly diagonally dominant, symmetric: SPD */
          PetscCall(MatSetValuesStencil(A, 1, &row, nc, cols, vals, INSERT_VALUES));
        }
  PetscCall(PetscFree2(cols, vals));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Solve(Ctx *c, Mat A, PetscBool mgdm, Vec b, Vec x, PetscInt *its, KSPConvergedReason *reason)
{
  KSP ksp;

  PetscFunctionBegin;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  if (mgdm) { /* PCMG's levels and interpolation from the DMDA, the operator ours */
    PetscCall(KSPSetDM(ksp, c->da));
    PetscCall(GpukitKSPSetDMActive(ksp, PETSC_FALSE));
  }
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 200));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, reason));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Ctx                c;
  Mat                A, S;
  Vec                b, xa, xs;
  PetscInt           n = 9, ita, its;
  char               st[16] = "star";
  PetscBool          isbox, mgdm = PETSC_FALSE, exact = PETSC_FALSE, chksym = PETSC_FALSE;
  PetscReal          rtol = 1e-8, diff, nrm;
  KSPConvergedReason ra, rs;
  MatType            type;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  c.dim = 2;
  c.dof = 1;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dim", &c.dim, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dof", &c.dof, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-stencil", st, sizeof(st), NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-mg_dm", &mgdm, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-poisson", &poisson, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-exact", &exact, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-check_symmetric", &chksym, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-rtol_sol", &rtol, NULL));
  PetscCall(PetscStrcmp(st, "box", &isbox));
  if (c.dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, isbox ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, n, n, PETSC_DECIDE, PETSC_DECIDE, c.dof, 1, NULL, NULL, &c.da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, isbox ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, n, n, n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, c.dof, 1, NULL, NULL, NULL, &c.da));
  PetscCall(DMSetUp(c.da));
  PetscCall(DMSetMatType(c.da, MATAIJ));
  PetscCall(DMCreateMatrix(c.da, &A));
  PetscCall(DMSetMatType(c.da, MATSGDIA));
  PetscCall(DMCreateMatrix(c.da, &S));
  PetscCall(MatGetType(S, &type));
  PetscCall(GKCheck((PetscBool)(strstr(type, "sgdia") != NULL), "DMCreateMatrix() with the type sgdia gives a MATSGDIA"));
  PetscCall(Fill(&c, A));
  PetscCall(Fill(&c, S));

  if (chksym) {
    PetscBool sa, ss;
    PetscCall(MatIsSymmetric(A, 1e-14, &sa));
    PetscCall(MatIsSymmetric(S, 1e-14, &ss));
    PetscCall(GKCheck((PetscBool)(sa && ss), "MatIsSymmetric(): the operator is symmetric for AIJ and MATSGDIA"));
    { /* a copy with the entry (0,1) changed (inside the stencil for any dof) is not symmetric */
      Mat T;
      PetscCall(MatDuplicate(S, MAT_COPY_VALUES, &T));
      PetscCall(MatSetValue(T, 0, 1, 0.125, ADD_VALUES));
      PetscCall(MatAssemblyBegin(T, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(T, MAT_FINAL_ASSEMBLY));
      PetscCall(MatIsSymmetric(T, 1e-14, &ss));
      PetscCall(GKCheck((PetscBool)!ss, "MatIsSymmetric(): MATSGDIA with one entry changed is not symmetric"));
      PetscCall(MatDestroy(&T));
    }
  }

  PetscCall(MatCreateVecs(A, &xa, &b));
  PetscCall(VecDuplicate(xa, &xs));
  { /* b: a smooth function of the natural index, independent of the number of ranks */
    PetscInt     lo, hi;
    PetscScalar *ba;
    AO           ao;
    PetscInt    *idx;
    PetscCall(VecGetOwnershipRange(b, &lo, &hi));
    PetscCall(PetscMalloc1(hi - lo, &idx));
    for (PetscInt i = lo; i < hi; i++) idx[i - lo] = i;
    PetscCall(DMDAGetAO(c.da, &ao));
    PetscCall(AOPetscToApplication(ao, hi - lo, idx));
    PetscCall(VecGetArray(b, &ba));
    for (PetscInt i = lo; i < hi; i++) ba[i - lo] = 1.0 + 0.5 * PetscSinReal(0.37 * (PetscReal)idx[i - lo]);
    PetscCall(VecRestoreArray(b, &ba));
    PetscCall(PetscFree(idx));
  }
  PetscCall(Solve(&c, A, mgdm, b, xa, &ita, &ra));
  PetscCall(Solve(&c, S, mgdm, b, xs, &its, &rs));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "AIJ: %" PetscInt_FMT " iterations (%s), MATSGDIA: %" PetscInt_FMT " iterations (%s)\n", ita, KSPConvergedReasons[ra], its, KSPConvergedReasons[rs]));
  PetscCall(GKCheck((PetscBool)(ra > 0), "the AIJ solve converges"));
  PetscCall(GKCheck((PetscBool)(rs > 0), "the MATSGDIA solve converges"));
  PetscCheck(ita == its, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MATSGDIA took %" PetscInt_FMT " iterations, AIJ %" PetscInt_FMT, its, ita);
  PetscCall(VecNorm(xa, NORM_INFINITY, &nrm));
  PetscCall(VecAXPY(xs, -1.0, xa));
  PetscCall(VecNorm(xs, NORM_INFINITY, &diff));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "max |x_sgdia - x_aij| / max |x_aij| = %g\n", (double)(diff / nrm)));
  if (exact) PetscCheck(diff == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MATSGDIA's solution differs from AIJ's by %g (max norm), expected identical", (double)diff);
  else PetscCheck(diff <= rtol * nrm, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MATSGDIA's solution differs from AIJ's by %g relative, more than %g", (double)(diff / nrm), (double)rtol);
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&xs));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&S));
  PetscCall(DMDestroy(&c.da));
  PetscCall(PetscFinalize());
  return 0;
}
