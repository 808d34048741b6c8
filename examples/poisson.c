static const char help[] = "Poisson problem -Lap u = f on the unit square or cube with homogeneous Dirichlet boundary,\n"
                           "5- or 7-point finite differences on a DMDA, solved with KSP; the matrix comes from\n"
                           "DMCreateMatrix(), so -dm_mat_type sgdia selects gpukit's MATSGDIA.\n"
                           "Options: -dim 2|3 (default 3) -n grid points per direction (default 65 in 3-D, 513 in 2-D)\n"
                           "         -error_tol t: fail unless max|x - u_exact| / max|u_exact| <= t (default 0: no check)\n"
                           "         and every PETSc option (-dm_mat_type, -ksp_type, -pc_type, -da_grid_x, ...).\n";

/*
   Stands in for the driven-cavity example until that exists.

   The grid has M (x N (x P)) points on [0,1]^d, spacing h_x = 1/(M-1) and so on; boundary points are Dirichlet
   rows (identity, right-hand side 0). An interior row is the standard second difference scaled by h^2 with
   h = min(h_x, h_y, h_z): on a uniform grid the familiar 2d on the diagonal and -1 off it. Couplings to
   boundary points are left out (their values are zero), so the matrix is symmetric positive definite.

   The exact solution is u = 16 x(1-x) y(1-y) e^(x+2y) (times 4 z(1-z) e^(-z) in 3-D) sampled on the grid, zero
   on the boundary and rich in every mode of the operator. The right-hand side is the discrete operator applied
   to it, evaluated point by point from the formula (not with the matrix under test), so u is the exact
   solution of the discrete problem and the reported error is the algebraic error of the solve.
*/
#include "gktest.h"
#include "gpukitcompat.h"
#include <petscksp.h>
#include <petscdmda.h>
#include <petsctime.h>

typedef struct {
  PetscInt  dim;
  PetscInt  M[3];  /* grid points per direction (1 in unused directions) */
  PetscReal h[3];  /* grid spacing per direction */
  PetscReal scale; /* interior rows are multiplied by this (h_min^2) */
  PetscReal etol;  /* fail if the relative max error exceeds it; 0: no check */
} AppCtx;

static PetscErrorCode ProcessOptions(AppCtx *user, PetscInt *n)
{
  PetscFunctionBeginUser;
  user->dim  = 3;
  user->etol = 0.0;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Poisson example options", NULL);
  PetscCall(PetscOptionsInt("-dim", "Spatial dimension, 2 or 3", NULL, user->dim, &user->dim, NULL));
  *n = user->dim == 3 ? 65 : 513;
  PetscCall(PetscOptionsInt("-n", "Grid points per direction (65 in 3-D, 513 in 2-D unless given)", NULL, *n, n, NULL));
  PetscCall(PetscOptionsReal("-error_tol", "Fail unless the relative max error against the exact solution is at most this (0: no check)", NULL, user->etol, &user->etol, NULL));
  PetscOptionsEnd();
  PetscCheck(user->dim == 2 || user->dim == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dim must be 2 or 3, got %" PetscInt_FMT, user->dim);
  PetscCheck(*n >= 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n must be at least 3 (one interior point), got %" PetscInt_FMT, *n);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CreateGrid(AppCtx *user, PetscInt n, DM *da)
{
  PetscInt        dof, sw;
  DMBoundaryType  bx, by, bz;
  DMDAStencilType st;

  PetscFunctionBeginUser;
  if (user->dim == 2) {
    PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, da));
  } else {
    PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, da));
  }
  PetscCall(DMSetFromOptions(*da)); /* -da_grid_x, -da_refine, -dm_mat_type, ... */
  PetscCall(DMSetUp(*da));
  PetscCall(DMDAGetInfo(*da, NULL, &user->M[0], &user->M[1], &user->M[2], NULL, NULL, NULL, &dof, &sw, &bx, &by, &bz, &st));
  PetscCheck(dof == 1 && sw >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "Need a DMDA with 1 dof and stencil width >= 1, got dof %" PetscInt_FMT ", width %" PetscInt_FMT, dof, sw);
  PetscCheck(bx == DM_BOUNDARY_NONE && by == DM_BOUNDARY_NONE && bz == DM_BOUNDARY_NONE, PETSC_COMM_WORLD, PETSC_ERR_SUP, "Dirichlet problem: the DMDA must not be periodic or ghosted");
  if (user->dim == 2) user->M[2] = 1;
  user->scale = PETSC_MAX_REAL;
  for (PetscInt i = 0; i < user->dim; i++) {
    PetscCheck(user->M[i] >= 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "Need at least 3 grid points per direction, got %" PetscInt_FMT " in direction %" PetscInt_FMT, user->M[i], i);
    user->h[i]  = 1.0 / (PetscReal)(user->M[i] - 1);
    user->scale = PetscMin(user->scale, user->h[i] * user->h[i]);
  }
  if (user->dim == 2) user->h[2] = 1.0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool IsBoundary(const AppCtx *user, PetscInt i, PetscInt j, PetscInt k)
{
  if (i == 0 || i == user->M[0] - 1 || j == 0 || j == user->M[1] - 1) return PETSC_TRUE;
  if (user->dim == 3 && (k == 0 || k == user->M[2] - 1)) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* Rows of the owned points through MatSetValuesStencil: identity on the boundary, scaled second difference
   inside, without the couplings to boundary points. */
static PetscErrorCode AssembleOperator(const AppCtx *user, DM da, Mat A)
{
  PetscInt  xs, ys, zs, xm, ym, zm;
  PetscReal c[3];

  PetscFunctionBeginUser;
  PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
  for (PetscInt d = 0; d < 3; d++) c[d] = d < user->dim ? user->scale / (user->h[d] * user->h[d]) : 0.0;
  for (PetscInt k = zs; k < zs + zm; k++) {
    for (PetscInt j = ys; j < ys + ym; j++) {
      for (PetscInt i = xs; i < xs + xm; i++) {
        MatStencil  row = {.k = k, .j = j, .i = i}, col[7];
        PetscScalar v[7];
        PetscInt    nc = 0;

        if (IsBoundary(user, i, j, k)) {
          PetscCall(MatSetValuesStencil(A, 1, &row, 1, &row, (PetscScalar[]){1.0}, INSERT_VALUES));
          continue;
        }
        col[nc] = row;
        v[nc++] = 2.0 * (c[0] + c[1] + c[2]);
        for (PetscInt d = 0; d < user->dim; d++) {
          for (PetscInt s = -1; s <= 1; s += 2) {
            MatStencil nb = row;
            if (d == 0) nb.i += s;
            else if (d == 1) nb.j += s;
            else nb.k += s;
            if (IsBoundary(user, nb.i, nb.j, nb.k)) continue; /* known value 0: coupling dropped, keeps A symmetric */
            col[nc] = nb;
            v[nc++] = -c[d];
          }
        }
        PetscCall(MatSetValuesStencil(A, 1, &row, nc, col, v, INSERT_VALUES));
      }
    }
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(A, MAT_SPD, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The exact solution at grid point (i, j, k): exactly 0 on the boundary */
static PetscReal ExactSolution(const AppCtx *user, PetscInt i, PetscInt j, PetscInt k)
{
  PetscReal x = i * user->h[0], y = j * user->h[1], z = k * user->h[2], u;

  if (IsBoundary(user, i, j, k)) return 0.0;
  u = 16.0 * x * (1.0 - x) * y * (1.0 - y) * PetscExpReal(x + 2.0 * y);
  if (user->dim == 3) u *= 4.0 * z * (1.0 - z) * PetscExpReal(-z);
  return u;
}

/* u = the exact solution on the grid and b = A u, applied stencil-wise from the formula for u (not with the
   matrix under test), so u is the exact solution of the discrete problem */
static PetscErrorCode FormExactAndRHS(const AppCtx *user, DM da, Vec u, Vec b)
{
  PetscInt     xs, ys, zs, xm, ym, zm;
  PetscScalar *ua, *ba;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
  PetscCall(VecGetArray(u, &ua));
  PetscCall(VecGetArray(b, &ba));
  for (PetscInt k = zs, p = 0; k < zs + zm; k++) {
    for (PetscInt j = ys; j < ys + ym; j++) {
      for (PetscInt i = xs; i < xs + xm; i++, p++) {
        PetscReal uc = ExactSolution(user, i, j, k), lap = 0.0;

        if (!IsBoundary(user, i, j, k)) {
          lap += (2.0 * uc - ExactSolution(user, i - 1, j, k) - ExactSolution(user, i + 1, j, k)) / (user->h[0] * user->h[0]);
          lap += (2.0 * uc - ExactSolution(user, i, j - 1, k) - ExactSolution(user, i, j + 1, k)) / (user->h[1] * user->h[1]);
          if (user->dim == 3) lap += (2.0 * uc - ExactSolution(user, i, j, k - 1) - ExactSolution(user, i, j, k + 1)) / (user->h[2] * user->h[2]);
        }
        ua[p] = uc;
        ba[p] = user->scale * lap;
      }
    }
  }
  PetscCall(VecRestoreArray(u, &ua));
  PetscCall(VecRestoreArray(b, &ba));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  AppCtx             user;
  PetscInt           n, its;
  DM                 da;
  Mat                A;
  Vec                x, b, u, r;
  KSP                ksp;
  PC                 pc;
  MatType            mtype;
  KSPType            ktype;
  PCType             ptype;
  KSPConvergedReason reason;
  PetscReal          bnorm, rnorm, enorm, unorm, e2norm, u2norm;
  PetscLogDouble     t0, ta, t1, t2, t3;
  PetscMPIInt        size;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(ProcessOptions(&user, &n));
  PetscCall(CreateGrid(&user, n, &da));

  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(&t0));
  PetscCall(DMCreateMatrix(da, &A));
  PetscCall(AssembleOperator(&user, da, A));
  PetscCall(DMCreateGlobalVector(da, &x));
  PetscCall(VecDuplicate(x, &b));
  PetscCall(VecDuplicate(x, &u));
  PetscCall(VecDuplicate(x, &r));
  PetscCall(FormExactAndRHS(&user, da, u, b));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(&ta));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetDM(ksp, da));
  PetscCall(GpukitKSPSetDMActive(ksp, PETSC_FALSE)); /* the operator and right-hand side are ours */
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(&t1));

  PetscCall(VecSet(x, 0.0));
  PetscCall(PetscTime(&t2));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(&t3));

  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(KSPGetType(ksp, &ktype));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCGetType(pc, &ptype));
  PetscCall(MatGetType(A, &mtype));

  PetscCall(MatMult(A, x, r)); /* r = b - A x */
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rnorm));
  PetscCall(VecNorm(b, NORM_2, &bnorm));
  PetscCall(VecNorm(u, NORM_INFINITY, &unorm));
  PetscCall(VecNorm(u, NORM_2, &u2norm));
  PetscCall(VecAXPY(u, -1.0, x)); /* u := u_exact - x */
  PetscCall(VecNorm(u, NORM_INFINITY, &enorm));
  PetscCall(VecNorm(u, NORM_2, &e2norm));

  if (user.dim == 2) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Poisson 2-D, 5-point stencil, grid %" PetscInt_FMT " x %" PetscInt_FMT ", %" PetscInt_FMT " unknowns, %d MPI rank(s)\n", user.M[0], user.M[1], user.M[0] * user.M[1], size));
  } else {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Poisson 3-D, 7-point stencil, grid %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT ", %" PetscInt_FMT " unknowns, %d MPI rank(s)\n", user.M[0], user.M[1], user.M[2], user.M[0] * user.M[1] * user.M[2], size));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  Mat type            %s\n", mtype));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  KSP / PC            %s / %s\n", ktype, ptype));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  iterations          %" PetscInt_FMT " (%s)\n", its, KSPConvergedReasons[reason]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  ||b - Ax|| / ||b||  %.3e\n", (double)(rnorm / bnorm)));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  error vs exact      max %.3e, relative l2 %.3e\n", (double)(enorm / unorm), (double)(e2norm / u2norm)));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  assembly time       %.4f s (DMCreateMatrix, MatSetValuesStencil, right-hand side)\n", (double)(ta - t0)));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  setup time          %.4f s (KSPSetUp, including PCSetUp)\n", (double)(t1 - ta)));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  solve time          %.4f s (KSPSolve)\n", (double)(t3 - t2)));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "summary: mat=%s ksp=%s pc=%s ranks=%d unknowns=%" PetscInt_FMT " iterations=%" PetscInt_FMT " assembly_s=%.4f setup_s=%.4f solve_s=%.4f relres=%.3e maxerr=%.3e\n", mtype, ktype, ptype, size,
                        user.M[0] * user.M[1] * user.M[2], its, (double)(ta - t0), (double)(t1 - ta), (double)(t3 - t2), (double)(rnorm / bnorm), (double)(enorm / unorm)));
  PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "KSPSolve did not converge: %s after %" PetscInt_FMT " iterations", KSPConvergedReasons[reason], its);
  PetscCheck(user.etol <= 0.0 || enorm <= user.etol * unorm, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "Relative max error against the exact solution %.3e exceeds -error_tol %.3e: a wrong operator, or a tolerance tighter than -ksp_rtol can reach", (double)(enorm / unorm),
             (double)user.etol);

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&r));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
