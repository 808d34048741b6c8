static const char help[] = "MATDCSR from DMCreateMatrix() of a DMDA against AIJ: the same pattern, and SNES with Jacobians by\n"
                           "finite-difference colouring (MatFDColoring) gives the same Jacobian, iterations and solution.\n"
                           "  -dim <1,2>     DMDA dimension (default 1)\n"
                           "  -n <n>         grid points per direction (default 42; periodic: a multiple of 2s+1)\n"
                           "  -dof <d>       components per point (default 2)\n"
                           "  -s <s>         stencil width (default 1)\n"
                           "  -periodic      periodic boundary (default none)\n"
                           "  -type <t>      the DCSR type to test (default dcsr)\n";

/* A nonlinear reaction-diffusion system on a DMDA (Bratu-like, dof components coupled through the reaction):
     F_c(u) = -(discrete Laplacian of u_c, with stencil width s) + u_c^3 / 10 + u_c - lambda exp(-u_c^2) + 0.3 u_{c+1}
   with u = 0 outside a non-periodic domain. SNES gets no Jacobian routine, so it uses finite-difference colouring
   of the DM (SNESComputeJacobianDefaultColor) on the matrix DMCreateMatrix() gives with -dm_mat_type. */
#include <petscsnes.h>
#include <petscdmda.h>
#include "gktest.h"

typedef struct {
  PetscInt  dim, dof, s;
  PetscReal lambda;
} AppCtx;

static PetscScalar Reaction(const AppCtx *ctx, const PetscScalar *u, PetscInt c)
{
  PetscScalar v = u[c], w = u[(c + 1) % ctx->dof];
  return 0.1 * v * v * v + v - ctx->lambda * PetscExpScalar(-v * v) + (ctx->dof > 1 ? 0.3 * w : 0.0);
}

/* DMDAVecGetArray() arrays: 1-D u[i*dof + c], 2-D u[j][i*dof + c] */
static PetscErrorCode FormFunction1(DMDALocalInfo *info, PetscScalar *u, PetscScalar *f, void *p)
{
  AppCtx *ctx = (AppCtx *)p;

  PetscFunctionBeginUser;
  for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
    for (PetscInt c = 0; c < ctx->dof; c++) {
      PetscScalar lap = 0.0;
      for (PetscInt k = 1; k <= ctx->s; k++) {
        PetscScalar ul = 0.0, ur = 0.0;
        if (i - k >= 0 || info->bx == DM_BOUNDARY_PERIODIC) ul = u[(i - k) * ctx->dof + c];
        if (i + k < info->mx || info->bx == DM_BOUNDARY_PERIODIC) ur = u[(i + k) * ctx->dof + c];
        lap += (2.0 * u[i * ctx->dof + c] - ul - ur) / (PetscReal)k;
      }
      f[i * ctx->dof + c] = lap + Reaction(ctx, u + i * ctx->dof, c);
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FormFunction2(DMDALocalInfo *info, PetscScalar **u, PetscScalar **f, void *p)
{
  AppCtx   *ctx = (AppCtx *)p;
  PetscBool per = info->bx == DM_BOUNDARY_PERIODIC ? PETSC_TRUE : PETSC_FALSE;

  PetscFunctionBeginUser;
  for (PetscInt j = info->ys; j < info->ys + info->ym; j++) {
    for (PetscInt i = info->xs; i < info->xs + info->xm; i++) {
      for (PetscInt c = 0; c < ctx->dof; c++) {
        PetscScalar lap = 0.0;
        for (PetscInt k = 1; k <= ctx->s; k++) {
          PetscScalar ul = 0.0, ur = 0.0, ud = 0.0, uu = 0.0;
          if (i - k >= 0 || per) ul = u[j][(i - k) * ctx->dof + c];
          if (i + k < info->mx || per) ur = u[j][(i + k) * ctx->dof + c];
          if (j - k >= 0 || per) ud = u[j - k][i * ctx->dof + c];
          if (j + k < info->my || per) uu = u[j + k][i * ctx->dof + c];
          lap += (4.0 * u[j][i * ctx->dof + c] - ul - ur - ud - uu) / (PetscReal)k;
        }
        f[j][i * ctx->dof + c] = lap + Reaction(ctx, u[j] + i * ctx->dof, c);
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the same rows and columns, row by row */
static PetscErrorCode SamePattern(Mat A, Mat B, PetscBool *same)
{
  PetscInt  rstart, rend;
  PetscBool ok = PETSC_TRUE;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt r = rstart; r < rend && ok; r++) {
    PetscInt        na, nb;
    const PetscInt *ca, *cb;
    PetscInt       *cc;
    PetscCall(MatGetRow(A, r, &na, &ca, NULL));
    PetscCall(PetscMalloc1(na + 1, &cc));
    PetscCall(PetscArraycpy(cc, ca, na));
    PetscCall(MatRestoreRow(A, r, NULL, &ca, NULL)); /* (it would zero the count) */
    PetscCall(MatGetRow(B, r, &nb, &cb, NULL));
    if (na != nb) ok = PETSC_FALSE;
    for (PetscInt k = 0; k < na && ok; k++)
      if (cc[k] != cb[k]) ok = PETSC_FALSE;
    PetscCall(MatRestoreRow(B, r, NULL, &cb, NULL));
    PetscCall(PetscFree(cc));
  }
  {
    PetscMPIInt lok = ok ? 1 : 0, gok;
    PetscCallMPI(MPIU_Allreduce(&lok, &gok, 1, MPI_INT, MPI_MIN, PetscObjectComm((PetscObject)A)));
    *same = gok ? PETSC_TRUE : PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  AppCtx         ctx = {1, 2, 1, 0.5};
  PetscInt       n = 42, its[2], lits[2];
  PetscBool      periodic = PETSC_FALSE, same = PETSC_FALSE;
  char           type[64] = "dcsr";
  DM             da[2];
  SNES           snes[2];
  Vec            x[2];
  Mat            J[2];
  MatType        jt, rt;
  DMBoundaryType bt;
  PetscReal      jn, jd;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dim", &ctx.dim, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dof", &ctx.dof, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-s", &ctx.s, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-periodic", &periodic, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-type", type, sizeof(type), NULL));
  bt = periodic ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE;

  /* t = 0: AIJ (the reference), t = 1: the DCSR type; each with its own DMDA and SNES */
  for (PetscInt t = 0; t < 2; t++) {
    if (ctx.dim == 1) PetscCall(DMDACreate1d(PETSC_COMM_WORLD, bt, n, ctx.dof, ctx.s, NULL, &da[t]));
    else PetscCall(DMDACreate2d(PETSC_COMM_WORLD, bt, bt, DMDA_STENCIL_STAR, n, n, PETSC_DECIDE, PETSC_DECIDE, ctx.dof, ctx.s, NULL, NULL, &da[t]));
    PetscCall(DMSetFromOptions(da[t]));
    PetscCall(DMSetUp(da[t]));
    PetscCall(DMSetMatType(da[t], t ? type : MATAIJ));
    PetscCall(DMSetApplicationContext(da[t], &ctx));
    if (ctx.dim == 1) PetscCall(DMDASNESSetFunctionLocal(da[t], INSERT_VALUES, (PetscErrorCode (*)(DMDALocalInfo *, void *, void *, void *))FormFunction1, &ctx));
    else PetscCall(DMDASNESSetFunctionLocal(da[t], INSERT_VALUES, (PetscErrorCode (*)(DMDALocalInfo *, void *, void *, void *))FormFunction2, &ctx));
    PetscCall(SNESCreate(PETSC_COMM_WORLD, &snes[t]));
    PetscCall(SNESSetDM(snes[t], da[t]));
    PetscCall(SNESSetTolerances(snes[t], 1e-10, 1e-12, PETSC_DEFAULT, 50, PETSC_DEFAULT));
    {
      KSP ksp;
      PetscCall(SNESGetKSP(snes[t], &ksp));
      PetscCall(KSPSetTolerances(ksp, 1e-8, 1e-50, PETSC_DEFAULT, 500));
    }
    PetscCall(SNESSetFromOptions(snes[t]));
    PetscCall(DMCreateGlobalVector(da[t], &x[t]));
    PetscCall(VecSet(x[t], 0.0));
    PetscCall(SNESSolve(snes[t], NULL, x[t]));
    PetscCall(SNESGetIterationNumber(snes[t], &its[t]));
    PetscCall(SNESGetLinearSolveIterations(snes[t], &lits[t]));
    PetscCall(SNESGetJacobian(snes[t], &J[t], NULL, NULL, NULL));
  }
  PetscCall(MatGetType(J[1], &jt));
  PetscCall(MatGetType(J[0], &rt));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dim %" PetscInt_FMT ", dof %" PetscInt_FMT ", s %" PetscInt_FMT ", %s: Jacobian types %s and %s; SNES iterations %" PetscInt_FMT " and %" PetscInt_FMT ", linear iterations %" PetscInt_FMT " and %" PetscInt_FMT "\n", ctx.dim, ctx.dof, ctx.s, periodic ? "periodic" : "not periodic", rt, jt, its[0], its[1], lits[0], lits[1]));
  PetscCall(GKCheck(strstr(jt, "dcsr") ? PETSC_TRUE : PETSC_FALSE, "DMCreateMatrix() gives a DCSR matrix"));
  PetscCall(GKCheck(its[0] > 0 && its[0] == its[1], "same SNES iteration counts as AIJ"));
  PetscCall(GKCheck(lits[0] == lits[1], "same linear iteration counts as AIJ"));
  PetscCall(GKCheckVecClose(x[1], x[0], 1e-8, "SNES solution"));
  PetscCall(SamePattern(J[1], J[0], &same));
  PetscCall(GKCheck(same, "the DCSR Jacobian has the pattern of the AIJ one"));

  /* the colouring Jacobian at the same point, through SNESComputeJacobian(): equal to AIJ's (the same differences) */
  for (PetscInt t = 0; t < 2; t++) {
    Vec y;
    PetscCall(VecDuplicate(x[t], &y));
    PetscCall(VecCopy(x[0], y));
    PetscCall(VecScale(y, 0.7));
    PetscCall(SNESComputeJacobian(snes[t], y, J[t], J[t]));
    PetscCall(VecDestroy(&y));
  }
  PetscCall(MatNorm(J[0], NORM_FROBENIUS, &jn));
  PetscCall(GKCheck(jn > 0.0, "the Jacobian is not zero"));
  PetscCall(GKCheckMatClose(J[1], J[0], 1e-13, "Jacobian by colouring at the same point"));
  {
    Mat D;
    PetscCall(MatConvert(J[1], MATAIJ, MAT_INITIAL_MATRIX, &D));
    PetscCall(MatAXPY(D, -1.0, J[0], DIFFERENT_NONZERO_PATTERN));
    PetscCall(MatNorm(D, NORM_FROBENIUS, &jd));
    PetscCall(MatDestroy(&D));
  }
  /* the products agree too */
  {
    Vec y0, y1;
    PetscCall(VecDuplicate(x[0], &y0));
    PetscCall(VecDuplicate(x[1], &y1));
    PetscCall(MatMult(J[0], x[0], y0));
    PetscCall(MatMult(J[1], x[0], y1));
    PetscCall(GKCheckVecClose(y1, y0, 1e-10, "MatMult of the Jacobians"));
    PetscCall(VecDestroy(&y0));
    PetscCall(VecDestroy(&y1));
  }
  /* MatDuplicate() keeps the local-to-global maps (SNES's Picard function fills a duplicate of the DMDA's matrix with
     MatSetValuesStencil()): a duplicate without values filled through MatSetValuesLocal() equals AIJ's */
  {
    Mat D[2];
    for (PetscInt t = 0; t < 2; t++) {
      ISLocalToGlobalMapping map;
      const PetscInt        *g;
      PetscInt               nl, rs, re;
      PetscCall(MatDuplicate(J[t], MAT_DO_NOT_COPY_VALUES, &D[t]));
      PetscCall(MatGetLocalToGlobalMapping(D[t], &map, NULL));
      PetscCheck(map, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the duplicate of the %s matrix has no local-to-global map", t ? "DCSR" : "AIJ");
      PetscCall(ISLocalToGlobalMappingGetSize(map, &nl));
      PetscCall(ISLocalToGlobalMappingGetIndices(map, &g));
      PetscCall(MatGetOwnershipRange(D[t], &rs, &re));
      for (PetscInt l = 0; l < nl; l++) {
        PetscScalar v = 2.0 + (PetscScalar)g[l];
        if (g[l] < rs || g[l] >= re) continue; /* a ghost point */
        PetscCall(MatSetValuesLocal(D[t], 1, &l, 1, &l, &v, INSERT_VALUES));
      }
      PetscCall(ISLocalToGlobalMappingRestoreIndices(map, &g));
      PetscCall(MatAssemblyBegin(D[t], MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(D[t], MAT_FINAL_ASSEMBLY));
    }
    PetscCall(GKCheckMatClose(D[1], D[0], 0.0, "a duplicate (MAT_DO_NOT_COPY_VALUES) filled through MatSetValuesLocal()"));
    PetscCall(MatDestroy(&D[0]));
    PetscCall(MatDestroy(&D[1]));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: same pattern, iterations and solution; Jacobian difference %g of %g\n", (double)jd, (double)jn));
  /* a new nonzero in the DCSR Jacobian: the colouring made for the old pattern refuses it clearly */
  {
    PetscInt       N, rstart;
    PetscScalar    one = 1.0;
    PetscErrorCode ierr;
    PetscCall(MatGetSize(J[1], &N, NULL));
    PetscCall(MatGetOwnershipRange(J[1], &rstart, NULL));
    PetscCall(MatSetOption(J[1], MAT_NEW_NONZERO_LOCATION_ERR, PETSC_FALSE));
    if (rstart == 0) {
      PetscInt r = 0, c = N / 2; /* far from row 0 in the stencil, also when periodic */
      PetscCall(MatSetValues(J[1], 1, &r, 1, &c, &one, ADD_VALUES));
    }
    PetscCall(MatAssemblyBegin(J[1], MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(J[1], MAT_FINAL_ASSEMBLY));
    PetscCall(GKExpectErrorBegin());
    ierr = SNESComputeJacobian(snes[1], x[1], J[1], J[1]);
    PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_WRONGSTATE, "changed after MatFDColoringCreate", "colouring Jacobian after a new nonzero"));
  }
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(VecDestroy(&x[t]));
    PetscCall(SNESDestroy(&snes[t]));
    PetscCall(DMDestroy(&da[t]));
  }
  PetscCall(PetscFinalize());
  return 0;
}
