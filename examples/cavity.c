static const char help[] = "Nonlinear driven cavity (the physics of PETSc's SNES ex19) with an analytic Jacobian, for any -dm_mat_type.\n"
                           "Velocity-vorticity form with temperature on a 2-D DMDA (4 dof, 5-point star), lid-driven and/or buoyant.\n"
                           "Options:\n"
                           "  -lidvelocity <v>   dimensionless lid velocity (default 1/(mx*my), as ex19)\n"
                           "  -grashof <g>       Grashof number (default 1)\n"
                           "  -prandtl <p>       Prandtl number (default 1, at least 0)\n"
                           "  -jacobian_assembly auto|stencil|array   host Jacobian through MatSetValuesStencil, or written straight\n"
                           "                     into the matrix: the MATSGDIA array, or COO (MatSetValuesCOO) for other types; auto\n"
                           "                     (default): each matrix type's own fast path, array for sgdia, stencil for the others\n"
                           "  -use_gpu           residual and Jacobian by CUDA kernels on device arrays (needs -dm_vec_type cuda and\n"
                           "                     -dm_mat_type sgdiacuda or aijcusparse)\n"
                           "  -cavity_aij_fill auto|coo|csr   how the Jacobian's values reach an AIJ matrix (-use_gpu with aijcusparse,\n"
                           "                     or -jacobian_assembly array with aij): csr, straight into the CSR value array of a\n"
                           "                     one-rank matrix given the stencil's structure by the example (checked once per\n"
                           "                     matrix); coo, MatSetPreallocationCOO once per matrix and MatSetValuesCOO; auto\n"
                           "                     (default): csr on one rank, else coo\n"
                           "  -coarse_mat_type <type>   with -pc_type mg: matrix type of the coarsest level (e.g. aijcusparse, so that\n"
                           "                     its LU solves run on the GPU; densecuda, one rank, with\n"
                           "                     -mg_coarse_pc_factor_mat_solver_type cuda: LU by cuSOLVER on the device)\n"
                           "  -cavity_device_interpolation <bool>   with -use_gpu and -pc_type mg: build the MG interpolation on the\n"
                           "                     device (a MATSHELL of CUDA kernels, default true), else DMDA's host matrix converted\n"
                           "  -check_interpolation      with -use_gpu: compare the device interpolation with DMDA's on every coarsening\n"
                           "                     of the grid by 2 (products and scaling vector), print the differences and exit\n"
                           "  -check_converged <bool>   exit with an error if SNES did not converge (default true)\n"
                           "and every PETSc option (-da_refine, -da_grid_x, -dm_mat_type, -snes_*, -ksp_*, -pc_*, ...).\n"
                           "The last line is a summary: grid, Newton and KSP iterations, final residual norm, SNESSolve time.\n";

/*
   The driven cavity of PETSc's SNES ex19 (same equations, boundary conditions, options and defaults, so results
   compare one to one), with what ex19 lacks: an analytic Jacobian, and a GPU path.

   Equations (unit square, uniform grid mx x my, h = 1/(m-1)):
       - Lap U - dOmega/dy                                = 0
       - Lap V + dOmega/dx                                = 0
       - Lap Omega + div(U Omega, V Omega) - Gr dT/dx     = 0
       - Lap T + Pr div(U T, V T)                         = 0
   5-point differences, upwinded convection, central source terms, every equation multiplied by hx*hy. No-slip
   walls with the lid (y = 1) moving at lidvelocity (U = lidvelocity); Omega from its definition on the walls; T = 0 on the left,
   T = (Gr > 0) on the right, dT/dy = 0 at the bottom and top. The point formulas are in cavity.h, shared by the
   host code here and the CUDA kernels in cavitycuda.cu.

   Jacobian:
     - host, -jacobian_assembly auto (default): array below for MATSGDIA (its native interface: no index per entry),
       stencil below for every other type (for AIJ MatSetValuesStencil is faster than COO, whose set-up is per matrix);
     - host, -jacobian_assembly stencil: MatSetValuesStencil, 4 rows x (in-domain star points x 4)
       per grid point, so any matrix type works (aij, baij, sgdia, aijcusparse, sgdiacuda, ...);
     - host, -jacobian_assembly array: the values written in MATSGDIA's array layout, straight into the matrix
       (MatSGDIAGetArray) for sgdia types, or as COO values (MatSetPreallocationCOO once per matrix, then
       MatSetValuesCOO) for any other type, or, for AIJ on one rank (-cavity_aij_fill auto or csr), straight into
       the CSR value array (MatSeqAIJGetArrayWrite()): the host twin of the GPU path;
     - -use_gpu: the same layout written by a CUDA kernel into MatSGDIAGetArrayWriteCUDA() (sgdiacuda), or for
       aijcusparse straight into the device CSR value array (MatSeqAIJCUSPARSEGetArrayWrite(), one rank,
       -cavity_aij_fill auto or csr) or into a device array given to MatSetValuesCOO() (several ranks, or
       -cavity_aij_fill coo); the residual by a kernel on the DMDA's device local vector. No host round trip per
       Newton step.
   The CSR fill (CavityGetCSR()): DMCreateMatrix() makes no structure (DMSetMatrixPreallocateSkip(): DMDA's own,
   zeros inserted through MatSetValuesLocal(), costs seconds at 1025^2); the first Jacobian of each matrix gives it
   the stencil's structure (exact preallocation, MatSeqAIJSetColumnIndices(), assembly: O(nonzeros), no sort), and
   checks it row by row (on the device for aijcusparse) once per nonzero state; on one rank each row's columns are
   its in-domain star points in ascending order, so the CSR value array is the COO value array and the same row
   function writes both.
   With -pc_type mg every level is rediscretised: PCMG coarsens the DMDA and the Jacobian above runs on each
   level (on the GPU with -use_gpu). DMDA makes the interpolation MATAIJ (host) for any -dm_mat_type whose name
   does not start with "aij" (sgdia, sgdiacuda), and its scaling vector by host products. With -use_gpu this
   program replaces both: a DM coarsen hook gives every coarse DMDA a DMCreateInterpolation() that returns a
   MATSHELL whose products are CUDA kernels, and the scaling vector computed with them (cavitycuda.cu), so that
   PCMG's set-up copies nothing between host and device for them. Where that does not apply (another refinement
   ratio, -cavity_device_interpolation 0, Galerkin coarse operators, ...) DMDA's host interpolation is converted
   to MATAIJCUSPARSE once, after the first PCSetUp (a KSP pre-solve hook, CavityInterpolationToGPU()).
*/
#include <petscgpukit.h>
#include <petscsnes.h>
#include <petscdmda.h>
#include <petsctime.h>
#include "cavity.h"

PetscLogEvent CAVITY_Residual, CAVITY_Jacobian, CAVITY_ResidualCUDA, CAVITY_JacobianCUDA, CAVITY_InterpToGPU, CAVITY_InterpCUDA, CAVITY_COOSetUp, CAVITY_CSRSetUp, CAVITY_CSRColumns, CAVITY_CSRStructure, CAVITY_CSRCheck;
static const char *const CavityFills[] = {"auto", "coo", "csr", "CavityFill", "CAVITY_FILL_", NULL};

typedef enum {
  CAVITY_ASSEMBLY_AUTO,
  CAVITY_ASSEMBLY_STENCIL,
  CAVITY_ASSEMBLY_ARRAY
} CavityAssembly;
static const char *const CavityAssemblies[] = {"auto", "stencil", "array", "CavityAssembly", "CAVITY_ASSEMBLY_", NULL};

typedef struct {
  CavityParams   p;
  CavityAssembly assembly;
  PetscBool      use_gpu;
  PetscBool      check_converged;
  PetscBool      device_interp;       /* -cavity_device_interpolation */
  PetscBool      check_interp;        /* -check_interpolation */
  PetscBool      attach_interp;       /* the coarsen hook gives coarse DMDAs the device interpolation */
  char           coarse_mattype[256]; /* "" unless -coarse_mat_type */
  PetscInt       mglevels;            /* PCMG levels, for the coarsen hook */
} AppCtx;

PetscErrorCode CavityGetGrid(DM dm, const CavityParams *p, CavityGrid *g)
{
  DMDALocalInfo info;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetLocalInfo(dm, &info));
  g->mx      = info.mx;
  g->my      = info.my;
  g->xs      = info.xs;
  g->ys      = info.ys;
  g->xm      = info.xm;
  g->ym      = info.ym;
  g->gxs     = info.gxs;
  g->gys     = info.gys;
  g->gxm     = info.gxm;
  g->gym     = info.gym;
  g->dhx     = (PetscReal)(info.mx - 1);
  g->dhy     = (PetscReal)(info.my - 1);
  g->hx      = 1.0 / g->dhx;
  g->hy      = 1.0 / g->dhy;
  g->hxdhy   = g->hx * g->dhy;
  g->hydhx   = g->hy * g->dhx;
  g->lid     = p->lid;
  g->grashof = p->grashof;
  g->prandtl = p->prandtl;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* motionless fluid, T linear in x (as ex19) */
static PetscErrorCode FormInitialGuess(const AppCtx *user, DM da, Vec X)
{
  PetscInt      mx, xs, ys, xm, ym;
  CavityField **x;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(da, NULL, &mx, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, &xm, &ym, NULL));
  PetscCall(DMDAVecGetArrayWrite(da, X, &x));
  for (PetscInt j = ys; j < ys + ym; j++) {
    for (PetscInt i = xs; i < xs + xm; i++) {
      x[j][i].u     = 0.0;
      x[j][i].v     = 0.0;
      x[j][i].omega = 0.0;
      x[j][i].temp  = (PetscReal)(user->p.grashof > 0) * i / (PetscReal)(mx - 1);
    }
  }
  PetscCall(DMDAVecRestoreArrayWrite(da, X, &x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* host residual (DMDASNESSetFunctionLocal): x and f are DMDAVecGetArray() arrays, x ghosted */
static PetscErrorCode FormFunctionLocal(DMDALocalInfo *info, void *xx, void *ff, void *ctx)
{
  AppCtx            *user = (AppCtx *)ctx;
  CavityField      **x = (CavityField **)xx, **f = (CavityField **)ff;
  const CavityField *xl = &x[info->gys][info->gxs];
  CavityGrid         g;

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(CAVITY_Residual, 0, 0, 0, 0));
  PetscCall(CavityGetGrid(info->da, &user->p, &g));
  for (PetscInt j = g.ys; j < g.ys + g.ym; j++) {
    for (PetscInt i = g.xs; i < g.xs + g.xm; i++) {
      const CavityField *nb[CAVITY_NPOINTS];

      CavityNeighbours(&g, xl, i, j, nb);
      CavityResidualPoint(&g, i, j, nb, &f[j][i]);
    }
  }
  PetscCall(PetscLogFlops(84.0 * info->xm * info->ym));
  PetscCall(PetscLogEventEnd(CAVITY_Residual, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode IsSGDIA(Mat B, PetscBool *flg)
{
  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)B, flg, MATSEQSGDIA, MATMPISGDIA, MATSEQSGDIACUDA, MATMPISGDIACUDA, ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CavitySGDIALayout(Mat B, const CavityGrid *g, CavityLayout *L)
{
  PetscInt        dof, k;
  const PetscInt *delta;

  PetscFunctionBeginUser;
  PetscCall(MatSGDIAGetStencil(B, &dof, &k, &delta));
  PetscCheck(dof == CAVITY_DOF, PetscObjectComm((PetscObject)B), PETSC_ERR_ARG_WRONG, "The cavity has %d unknowns per grid point, the MATSGDIA matrix %" PetscInt_FMT, CAVITY_DOF, dof);
  PetscCheck(k <= CAVITY_MAX_K, PetscObjectComm((PetscObject)B), PETSC_ERR_SUP, "The MATSGDIA matrix has %" PetscInt_FMT " stencil points; the cavity writes stencils of width 1 (at most %d points): create the DMDA with stencil width 1", k, CAVITY_MAX_K);
  L->g = *g;
  L->k = k;
  for (PetscInt s = 0; s < k; s++) {
    const PetscInt dx = delta[3 * s], dy = delta[3 * s + 1], dz = delta[3 * s + 2];

    L->slot[s] = -1;
    if (dz != 0) continue;
    if (dx == 0 && dy == -1) L->slot[s] = CAVITY_S;
    else if (dx == -1 && dy == 0) L->slot[s] = CAVITY_W;
    else if (dx == 0 && dy == 0) L->slot[s] = CAVITY_C;
    else if (dx == 1 && dy == 0) L->slot[s] = CAVITY_E;
    else if (dx == 0 && dy == 1) L->slot[s] = CAVITY_N;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CavityGetCOO(DM dm, Mat B, PetscBool device, Vec *vals)
{
  CavityGrid   g;
  CavityParams none = {0, 0, 0, CAVITY_FILL_AUTO};
  PetscInt    *ci, *cj, n, e = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectQuery((PetscObject)B, "CavityCOOValues", (PetscObject *)vals));
  if (*vals) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(CAVITY_COOSetUp, B, 0, 0, 0));
  PetscCall(CavityGetGrid(dm, &none, &g));
  n = CavityCOOCount(&g);
  PetscCall(PetscMalloc2(n, &ci, n, &cj));
  /* CavityCOORow()'s order: row by row, in-domain star points S, W, C, E, N, components ascending; in ghosted local
     indices (the DMDA's local-to-global mapping, which DMCreateMatrix() gave the matrix) */
  for (PetscInt j = g.ys; j < g.ys + g.ym; j++) {
    for (PetscInt i = g.xs; i < g.xs + g.xm; i++) {
      const PetscInt pl = (j - g.gys) * g.gxm + (i - g.gxs);

      for (PetscInt r = 0; r < CAVITY_DOF; r++) {
        for (PetscInt s = 0; s < CAVITY_NPOINTS; s++) {
          const PetscInt dx = s == CAVITY_W ? -1 : (s == CAVITY_E ? 1 : 0), dy = s == CAVITY_S ? -1 : (s == CAVITY_N ? 1 : 0);

          if (i + dx < 0 || i + dx >= g.mx || j + dy < 0 || j + dy >= g.my) continue;
          for (PetscInt c = 0; c < CAVITY_DOF; c++, e++) {
            ci[e] = pl * CAVITY_DOF + r;
            cj[e] = (pl + dy * g.gxm + dx) * CAVITY_DOF + c;
          }
        }
      }
    }
  }
  PetscCheck(e == n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cavity: %" PetscInt_FMT " COO entries written, %" PetscInt_FMT " expected", e, n);
  PetscCall(PetscInfo(B, "Cavity: COO preallocation of %" PetscInt_FMT " entries (%s values)\n", n, device ? "device" : "host"));
  PetscCall(MatSetPreallocationCOOLocal(B, n, ci, cj));
  PetscCall(PetscFree2(ci, cj));
  PetscCall(VecCreate(PETSC_COMM_SELF, vals));
  PetscCall(VecSetSizes(*vals, n, n));
  PetscCall(VecSetType(*vals, device ? "seqcuda" : VECSEQ));
  PetscCall(PetscObjectCompose((PetscObject)B, "CavityCOOValues", (PetscObject)*vals));
  PetscCall(VecDestroy(vals)); /* B holds it */
  PetscCall(PetscObjectQuery((PetscObject)B, "CavityCOOValues", (PetscObject *)vals));
  PetscCall(PetscLogEventEnd(CAVITY_COOSetUp, B, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the rows of B's host CSR structure that differ from the stencil's (CavityCSRRowMatches()) */
static PetscErrorCode CavityCSRCheckHost(Mat B, const CavityGrid *g, PetscInt *nbad)
{
  const PetscInt *ia, *ja;
  PetscInt        n, nrows, m = CAVITY_DOF * g->xm * g->ym;
  PetscBool       done;

  PetscFunctionBeginUser;
  *nbad = 0;
  PetscCall(MatGetRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cavity: no CSR structure from MatGetRowIJ()");
  nrows = n; /* MatRestoreRowIJ() may clear n */
  if (nrows == m)
    for (PetscInt row = 0; row < m; row++) *nbad += !CavityCSRRowMatches(g, row, ia, ja);
  PetscCall(MatRestoreRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(nrows == m, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cavity: the CSR structure has %" PetscInt_FMT " rows, %" PetscInt_FMT " expected", nrows, m);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B's structure := the stencil's: exact preallocation, the columns of CavityCSRColumns(), assembly. O(nonzeros), no
   search or sort (DMDA's own structure, zeros inserted through MatSetValuesLocal(), takes seconds at 1025^2) */
static PetscErrorCode CavityCSRSetStructure(Mat B, const CavityGrid *g)
{
  const PetscInt m = CAVITY_DOF * g->xm * g->ym, n = CavityCOOCount(g);
  PetscInt      *nnz, *cols, e = 0;
  PetscScalar   *a;

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(CAVITY_CSRColumns, B, 0, 0, 0));
  PetscCall(PetscMalloc2(m, &nnz, n, &cols));
  for (PetscInt row = 0; row < m; row += CAVITY_DOF) { /* the 4 rows of a grid point have the same columns */
    PetscInt rc[CAVITY_NPOINTS * CAVITY_DOF], k = CavityCSRColumns(g, row, rc);

    PetscCheck(e + CAVITY_DOF * k <= n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cavity: more CSR entries than the %" PetscInt_FMT " counted", n);
    for (PetscInt r = 0; r < CAVITY_DOF; r++) PetscCall(PetscArraycpy(cols + e + r * k, rc, k));
    for (PetscInt r = 0; r < CAVITY_DOF; r++) nnz[row + r] = k;
    e += CAVITY_DOF * k;
  }
  PetscCheck(e == n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cavity: %" PetscInt_FMT " CSR entries written, %" PetscInt_FMT " expected", e, n);
  PetscCall(PetscLogEventEnd(CAVITY_CSRColumns, B, 0, 0, 0));
  PetscCall(PetscLogEventBegin(CAVITY_CSRStructure, B, 0, 0, 0));
  PetscCall(MatSeqAIJSetPreallocation(B, 0, nnz));
  PetscCall(MatSeqAIJSetColumnIndices(B, cols));
  PetscCall(PetscFree2(nnz, cols));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE));
  /* the host copy is the current one (aijcusparse: the next device access uploads the new structure, even if an older
     one was on the device). Its values are not initialised: the Jacobian writes every entry before any use */
  PetscCall(MatSeqAIJGetArrayWrite(B, &a));
  PetscCall(MatSeqAIJRestoreArrayWrite(B, &a));
  PetscCall(PetscLogEventEnd(CAVITY_CSRStructure, B, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the rows of B's structure that differ from the stencil's, on the device (its first device access: the upload of the
   structure and values) or the host */
static PetscErrorCode CavityCSRCheck(Mat B, const CavityGrid *g, PetscBool device, PetscInt *nbad)
{
  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(CAVITY_CSRCheck, B, 0, 0, 0));
#if defined(CAVITY_HAVE_CUDA)
  if (device) PetscCall(CavityCSRCheckCUDA(B, g, nbad));
  else
#endif
    PetscCall(CavityCSRCheckHost(B, g, nbad));
  PetscCall(PetscLogEventEnd(CAVITY_CSRCheck, B, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CavityGetCSR(DM dm, Mat B, CavityFill fill, PetscBool device, PetscBool *csr)
{
  Vec                rec = NULL; /* B's record: [nonzero state when checked, whether the CSR fill applies] */
  const PetscScalar *rv;
  PetscScalar       *wv;
  PetscObjectState   nzstate;
  PetscMPIInt        size;
  PetscBool          typeok, assembled = PETSC_FALSE;
  CavityGrid         g;
  CavityParams       none = {0, 0, 0, CAVITY_FILL_AUTO};
  PetscInt           M, N, mloc, nbad = -1;
  MatType            type;
  char               why[256] = "";

  PetscFunctionBeginUser;
  *csr = PETSC_FALSE;
  if (fill == CAVITY_FILL_COO) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetNonzeroState(B, &nzstate));
  PetscCall(PetscObjectQuery((PetscObject)B, "CavityCSRRecord", (PetscObject *)&rec));
  if (rec) { /* decided before: COO stays (its set-up changed the structure); CSR stays while the structure does */
    PetscBool done;

    PetscCall(VecGetArrayRead(rec, &rv));
    *csr = (PetscBool)(PetscRealPart(rv[1]) != 0);
    done = (PetscBool)(!*csr || (PetscObjectState)PetscRealPart(rv[0]) == nzstate);
    PetscCall(VecRestoreArrayRead(rec, &rv));
    if (done) PetscFunctionReturn(PETSC_SUCCESS);
    *csr = PETSC_FALSE;
  }
  PetscCall(PetscLogEventBegin(CAVITY_CSRSetUp, B, 0, 0, 0));
  PetscCall(CavityGetGrid(dm, &none, &g));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)B), &size));
  PetscCall(MatGetType(B, &type));
  if (device) PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAIJCUSPARSE, &typeok));
  else PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &typeok, MATSEQAIJ, MATSEQAIJCUSPARSE, ""));
  PetscCall(MatGetSize(B, &M, &N));
  PetscCall(MatGetLocalSize(B, &mloc, NULL));
  if (size > 1) PetscCall(PetscSNPrintf(why, sizeof(why), "the matrix lives on %d ranks (the CSR fill writes a one-rank matrix)", size));
  else if (!typeok) PetscCall(PetscSNPrintf(why, sizeof(why), "the matrix is %s, not %s", type, device ? MATSEQAIJCUSPARSE : "seqaij or seqaijcusparse"));
  else if (M != CAVITY_DOF * g.mx * g.my || N != M || mloc != CAVITY_DOF * g.xm * g.ym) PetscCall(PetscSNPrintf(why, sizeof(why), "the matrix is %" PetscInt_FMT " x %" PetscInt_FMT ", not the %" PetscInt_FMT " x %" PetscInt_FMT " of the %" PetscInt_FMT " x %" PetscInt_FMT " grid", M, N, (PetscInt)(CAVITY_DOF * g.mx * g.my), (PetscInt)(CAVITY_DOF * g.mx * g.my), g.mx, g.my));
  if (!why[0]) {
    /* a structure already there (e.g. DMDA's, without DMSetMatrixPreallocateSkip()) is used if it is the stencil's */
    PetscCall(MatAssembled(B, &assembled));
    if (assembled) PetscCall(CavityCSRCheck(B, &g, device, &nbad));
    if (nbad != 0) {
      PetscCall(PetscInfo(B, "Cavity: CSR fill: %s; the stencil's structure is set (%" PetscInt_FMT " entries)\n", assembled ? "the matrix's structure is not the stencil's" : "the matrix has no structure yet", CavityCOOCount(&g)));
      PetscCall(CavityCSRSetStructure(B, &g));
      PetscCall(CavityCSRCheck(B, &g, device, &nbad));
      if (nbad) PetscCall(PetscSNPrintf(why, sizeof(why), "%" PetscInt_FMT " rows of the structure set differ from the stencil's", nbad));
    }
  }
  PetscCheck(!why[0] || fill != CAVITY_FILL_CSR, PetscObjectComm((PetscObject)B), PETSC_ERR_SUP, "-cavity_aij_fill csr does not apply to the Jacobian of the %" PetscInt_FMT " x %" PetscInt_FMT " grid: %s; use -cavity_aij_fill auto or coo", g.mx, g.my, why);
  *csr = (PetscBool)!why[0];
  if (*csr) PetscCall(PetscInfo(B, "Cavity: CSR fill of the %" PetscInt_FMT " x %" PetscInt_FMT " grid's %s: values straight into the %s CSR array (structure checked)\n", g.mx, g.my, type, device ? "device" : "host"));
  else PetscCall(PetscInfo(B, "Cavity: CSR fill does not apply to the %" PetscInt_FMT " x %" PetscInt_FMT " grid's %s: %s; COO instead\n", g.mx, g.my, type, why));
  PetscCall(MatGetNonzeroState(B, &nzstate));
  if (!rec) {
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, 2, &rec));
    PetscCall(PetscObjectCompose((PetscObject)B, "CavityCSRRecord", (PetscObject)rec));
    PetscCall(VecDestroy(&rec)); /* B holds it */
    PetscCall(PetscObjectQuery((PetscObject)B, "CavityCSRRecord", (PetscObject *)&rec));
  }
  PetscCall(VecGetArrayWrite(rec, &wv));
  wv[0] = (PetscReal)nzstate;
  wv[1] = *csr ? 1.0 : 0.0;
  PetscCall(VecRestoreArrayWrite(rec, &wv));
  PetscCall(PetscLogEventEnd(CAVITY_CSRSetUp, B, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* does the Jacobian of a matrix of this type go through COO (CavityGetCOO()) or the CSR fill (CavityGetCSR())? Then
   DMCreateMatrix() only sets the sizes and the local-to-global mapping (DMSetMatrixPreallocateSkip(): the COO set-up,
   or CavityGetCSR() in O(nonzeros), makes the structure), instead of building a structure of zeros through
   MatSetValuesLocal() that the COO set-up would throw away and that costs more than CavityGetCSR()'s own */
static PetscErrorCode CavityUsesCOO(const AppCtx *user, MatType type, PetscBool *coo)
{
  PetscBool sg;

  PetscFunctionBeginUser;
  *coo = PETSC_FALSE;
  if (!type) PetscFunctionReturn(PETSC_SUCCESS);
  if (user->use_gpu) PetscCall(PetscStrInList(type, "aijcusparse,seqaijcusparse,mpiaijcusparse", ',', coo));
  else if (user->assembly == CAVITY_ASSEMBLY_ARRAY) {
    PetscCall(PetscStrInList(type, "sgdia,seqsgdia,mpisgdia,sgdiacuda,seqsgdiacuda,mpisgdiacuda", ',', &sg));
    *coo = (PetscBool)!sg;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* host Jacobian, MatSetValuesStencil: 4 rows, the in-domain star points' 4 components as columns */
static PetscErrorCode JacobianStencil(const CavityGrid *g, const CavityField *xl, Mat B)
{
  PetscFunctionBeginUser;
  for (PetscInt j = g->ys; j < g->ys + g->ym; j++) {
    for (PetscInt i = g->xs; i < g->xs + g->xm; i++) {
      const CavityField *nb[CAVITY_NPOINTS];
      PetscScalar        J[CAVITY_DOF][CAVITY_NPOINTS][CAVITY_DOF], vals[CAVITY_DOF * CAVITY_NPOINTS * CAVITY_DOF];
      MatStencil         rows[CAVITY_DOF], cols[CAVITY_NPOINTS * CAVITY_DOF];
      PetscInt           pts[CAVITY_NPOINTS], npts = 0, ncols;

      CavityNeighbours(g, xl, i, j, nb);
      for (PetscInt r = 0; r < CAVITY_DOF; r++) {
        CavityJacobianRow(g, i, j, r, nb, J[r]);
        rows[r].i = i;
        rows[r].j = j;
        rows[r].k = 0;
        rows[r].c = r;
      }
      for (PetscInt s = 0; s < CAVITY_NPOINTS; s++) {
        const PetscInt in = i + (s == CAVITY_W ? -1 : (s == CAVITY_E ? 1 : 0)), jn = j + (s == CAVITY_S ? -1 : (s == CAVITY_N ? 1 : 0));

        if (in < 0 || in >= g->mx || jn < 0 || jn >= g->my) continue;
        for (PetscInt c = 0; c < CAVITY_DOF; c++) {
          cols[npts * CAVITY_DOF + c].i = in;
          cols[npts * CAVITY_DOF + c].j = jn;
          cols[npts * CAVITY_DOF + c].k = 0;
          cols[npts * CAVITY_DOF + c].c = c;
        }
        pts[npts++] = s;
      }
      ncols = npts * CAVITY_DOF;
      for (PetscInt r = 0; r < CAVITY_DOF; r++)
        for (PetscInt q = 0; q < npts; q++)
          for (PetscInt c = 0; c < CAVITY_DOF; c++) vals[r * ncols + q * CAVITY_DOF + c] = J[r][pts[q]][c];
      PetscCall(MatSetValuesStencil(B, CAVITY_DOF, rows, ncols, cols, vals, INSERT_VALUES));
    }
  }
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* host Jacobian in the array layout: into the MATSGDIA array, straight into the CSR value array (AIJ, one rank), or
   COO values */
static PetscErrorCode JacobianArray(DM dm, const CavityGrid *g, const CavityField *xl, Mat B, CavityFill fill)
{
  CavityLayout L;
  PetscBool    issg, csr = PETSC_FALSE;
  PetscScalar *v;
  Vec          coo = NULL;
  PetscInt     m = CAVITY_DOF * g->xm * g->ym;

  PetscFunctionBeginUser;
  PetscCall(IsSGDIA(B, &issg));
  if (issg) {
    PetscCall(CavitySGDIALayout(B, g, &L));
    PetscCall(MatSGDIAGetArray(B, &v));
  } else {
    PetscCall(CavityGetCSR(dm, B, fill, PETSC_FALSE, &csr));
    if (csr) PetscCall(MatSeqAIJGetArrayWrite(B, &v));
    else {
      PetscCall(CavityGetCOO(dm, B, PETSC_FALSE, &coo));
      PetscCall(VecGetArrayWrite(coo, &v));
    }
  }
  if (issg)
    for (PetscInt row = 0; row < m; row++) CavityLayoutRow(&L, xl, row, v);
  else /* COO order, which is the CSR order of the stencil's structure on one rank (cavity.h) */
    for (PetscInt row = 0; row < m; row++) CavityCOORow(g, xl, row, v);
  if (issg) {
    PetscCall(MatSGDIARestoreArray(B, &v)); /* the matrix stays assembled; its values changed */
  } else if (csr) {
    PetscCall(MatSeqAIJRestoreArrayWrite(B, &v)); /* likewise */
  } else {
    PetscCall(VecRestoreArrayWrite(coo, &v));
    PetscCall(VecGetArrayRead(coo, (const PetscScalar **)&v));
    PetscCall(MatSetValuesCOO(B, v, INSERT_VALUES));
    PetscCall(VecRestoreArrayRead(coo, (const PetscScalar **)&v));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* host Jacobian (DMDASNESSetJacobianLocal) */
static PetscErrorCode FormJacobianLocal(DMDALocalInfo *info, void *xx, Mat J, Mat B, void *ctx)
{
  AppCtx            *user = (AppCtx *)ctx;
  CavityField      **x    = (CavityField **)xx;
  const CavityField *xl   = &x[info->gys][info->gxs];
  CavityGrid         g;

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(CAVITY_Jacobian, B, 0, 0, 0));
  PetscCall(CavityGetGrid(info->da, &user->p, &g));
  if (user->assembly == CAVITY_ASSEMBLY_AUTO) { /* per matrix: every MG level has its own, of the level's type */
    PetscBool issg;

    PetscCall(IsSGDIA(B, &issg));
    if (issg) PetscCall(JacobianArray(info->da, &g, xl, B, user->p.fill));
    else PetscCall(JacobianStencil(&g, xl, B));
  } else if (user->assembly == CAVITY_ASSEMBLY_STENCIL) PetscCall(JacobianStencil(&g, xl, B));
  else PetscCall(JacobianArray(info->da, &g, xl, B, user->p.fill));
  if (J != B) {
    PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(PetscLogEventEnd(CAVITY_Jacobian, B, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSP pre-solve hook: after PCMG's first set-up, its host MATAIJ interpolations (DMDA's choice for mat types
   not named aij*) become MATAIJCUSPARSE, so that restriction and interpolation run on the device */
static PetscErrorCode CavityInterpolationToGPU(KSP ksp, Vec b, Vec x, void *ctx)
{
  PC        pc;
  PetscBool ismg;
  PetscInt  n;

  PetscFunctionBeginUser;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCMG, &ismg));
  if (!ismg) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PCMGGetLevels(pc, &n));
  for (PetscInt l = 1; l < n; l++) {
    Mat       P, R, Pd;
    PetscBool phost, rhost;
    MatType   ptype;

    PetscCall(PCMGGetInterpolation(pc, l, &P));
    PetscCall(PCMGGetRestriction(pc, l, &R));
    /* with dof > 1 DMDA wraps the scalar interpolation as MAIJ, which PETSc converts to an expanded AIJCUSPARSE */
    PetscCall(PetscObjectTypeCompareAny((PetscObject)P, &phost, MATSEQAIJ, MATMPIAIJ, MATSEQMAIJ, MATMPIMAIJ, ""));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)R, &rhost, MATSEQAIJ, MATMPIAIJ, MATSEQMAIJ, MATMPIMAIJ, ""));
    if (!phost && !rhost) continue;
    PetscCall(PetscLogEventBegin(CAVITY_InterpToGPU, 0, 0, 0, 0));
    PetscCall(MatGetType(P, &ptype));
    PetscCall(PetscInfo(pc, "Cavity: MG level %" PetscInt_FMT ": interpolation%s of type %s converted to %s\n", l, R == P ? " (also the restriction)" : "", ptype, MATAIJCUSPARSE));
    PetscCall(PetscObjectReference((PetscObject)R));
    if (phost) {
      PetscCall(MatConvert(P, MATAIJCUSPARSE, MAT_INITIAL_MATRIX, &Pd));
      PetscCall(PCMGSetInterpolation(pc, l, Pd));
      if (R == P) PetscCall(PCMGSetRestriction(pc, l, Pd));
      PetscCall(MatDestroy(&Pd));
    }
    if (rhost && R != P) {
      PetscCall(MatConvert(R, MATAIJCUSPARSE, MAT_INITIAL_MATRIX, &Pd));
      PetscCall(PCMGSetRestriction(pc, l, Pd));
      PetscCall(MatDestroy(&Pd));
    }
    PetscCall(MatDestroy(&R));
    PetscCall(PetscLogEventEnd(CAVITY_InterpToGPU, 0, 0, 0, 0));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* DM coarsen hook, for PCMG, which coarsens the DMDA level by level:
   - -coarse_mat_type: the coarsest level's DM gets the matrix type asked for, so DMCreateMatrix() makes its
     Jacobian of that type;
   - -use_gpu: every coarse DMDA gets the device interpolation (CavityDeviceInterpolationAttach(), cavitycuda.cu:
     PCMG's DMCreateInterpolation(coarse, fine) then returns a MATSHELL of CUDA kernels where it applies) */
static PetscErrorCode CavityCoarsenHook(DM fine, DM coarse, void *ctx)
{
  AppCtx   *user = (AppCtx *)ctx;
  PetscInt  level;
  MatType   type;
  PetscBool coo;

  PetscFunctionBeginUser;
  PetscCall(DMCoarsenHookAdd(coarse, CavityCoarsenHook, NULL, ctx));
  PetscCall(DMGetCoarsenLevel(coarse, &level));
  if (user->coarse_mattype[0] && level == user->mglevels - 1) {
    PetscCall(PetscInfo(coarse, "Cavity: coarsest MG level (coarsened %" PetscInt_FMT " times) gets matrix type %s\n", level, user->coarse_mattype));
    PetscCall(DMSetMatType(coarse, user->coarse_mattype));
  }
  PetscCall(DMGetMatType(coarse, &type));
  PetscCall(CavityUsesCOO(user, type, &coo));
  PetscCall(DMSetMatrixPreallocateSkip(coarse, coo));
#if defined(CAVITY_HAVE_CUDA)
  if (user->attach_interp) PetscCall(CavityDeviceInterpolationAttach(coarse));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(CAVITY_HAVE_CUDA)
/* max|a - b| / max|b| (max|a - b| where b = 0) */
static PetscErrorCode CavityRelDiff(Vec a, Vec b, PetscReal *d)
{
  Vec       w;
  PetscReal nb;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(b, &w));
  PetscCall(VecWAXPY(w, -1.0, b, a));
  PetscCall(VecNorm(w, NORM_INFINITY, d));
  PetscCall(VecNorm(b, NORM_INFINITY, &nb));
  if (nb > 0) *d /= nb;
  PetscCall(VecDestroy(&w));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Pd against Ph: y = P x (P^T x with transpose), y = z + P x, and y = y + P x in place with y = z on entry; the three
   relative differences (CavityRelDiff()) in d */
static PetscErrorCode CavityCompareProducts(Mat Pd, Mat Ph, PetscBool transpose, Vec x, Vec z, Vec yd, Vec yh, PetscReal d[3])
{
  PetscErrorCode (*mult)(Mat, Vec, Vec)         = transpose ? MatMultTranspose : MatMult;
  PetscErrorCode (*multadd)(Mat, Vec, Vec, Vec) = transpose ? MatMultTransposeAdd : MatMultAdd;

  PetscFunctionBeginUser;
  PetscCall(mult(Pd, x, yd));
  PetscCall(mult(Ph, x, yh));
  PetscCall(CavityRelDiff(yd, yh, &d[0]));
  PetscCall(multadd(Pd, x, z, yd));
  PetscCall(multadd(Ph, x, z, yh));
  PetscCall(CavityRelDiff(yd, yh, &d[1]));
  PetscCall(VecCopy(z, yd));
  PetscCall(VecCopy(z, yh));
  PetscCall(multadd(Pd, x, yd, yd));
  PetscCall(multadd(Ph, x, yh, yh));
  PetscCall(CavityRelDiff(yd, yh, &d[2]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -check_interpolation: on every coarsening of the grid by 2 (DMCoarsen(), as PCMG does), the device interpolation
   (cavitycuda.cu) against DMDA's own from DMCreateInterpolation(): MatMult, MatMultAdd (into another vector and in
   place), MatMultTranspose, MatMultTransposeAdd (likewise) on random vectors, and the scaling vectors; one line per
   level with the relative differences (max norm), an error if one exceeds tol */
static PetscErrorCode CavityCheckInterpolation(DM da, PetscReal tol)
{
  static const char *const what[] = {"MatMult", "MatMultAdd", "MatMultAdd in place", "MatMultTranspose", "MatMultTransposeAdd", "MatMultTransposeAdd in place", "rscale"};
  PetscRandom              rnd;
  DM                       daf = da, dac;
  PetscInt                 nlev = 0, nbad = 0;
  PetscReal                worst = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(rnd, 20261121));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(PetscObjectReference((PetscObject)daf));
  for (;;) {
    PetscInt  Mf, Nf, Mc, Nc;
    Mat       Pd, Ph;
    Vec       sd, sh, xc, xf, zf, zc, yd, yh, cd, ch;
    PetscReal d[7];
    PetscBool ok;
    char      why[256], line[1024];
    size_t    len;

    PetscCall(DMDAGetInfo(daf, NULL, &Mf, &Nf, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    if (Mf < 5 || Nf < 5 || (Mf - 1) % 2 || (Nf - 1) % 2) break; /* no coarser grid with ratio 2 and 3 points */
    PetscCall(DMCoarsen(daf, MPI_COMM_NULL, &dac));
    PetscCall(DMDAGetInfo(dac, NULL, &Mc, &Nc, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    PetscCall(CavityInterpolationQualifies(dac, daf, &ok, why, sizeof(why)));
    PetscCheck(ok, PETSC_COMM_WORLD, PETSC_ERR_SUP, "-check_interpolation: the device interpolation does not apply to %" PetscInt_FMT "x%" PetscInt_FMT " -> %" PetscInt_FMT "x%" PetscInt_FMT ": %s", Mc, Nc, Mf, Nf, why);
    PetscCall(CavityCreateInterpolationCUDA(dac, daf, &Pd, &sd));
    PetscCall(DMCreateInterpolation(dac, daf, &Ph, &sh)); /* DMDA's own: this DMDA has no coarsen hook */
    PetscCall(DMCreateGlobalVector(dac, &xc));
    PetscCall(DMCreateGlobalVector(daf, &xf));
    PetscCall(VecDuplicate(xf, &zf));
    PetscCall(VecDuplicate(xf, &yd));
    PetscCall(VecDuplicate(xf, &yh));
    PetscCall(VecDuplicate(xc, &zc));
    PetscCall(VecDuplicate(xc, &cd));
    PetscCall(VecDuplicate(xc, &ch));
    PetscCall(VecSetRandom(xc, rnd));
    PetscCall(VecSetRandom(xf, rnd));
    PetscCall(VecSetRandom(zf, rnd));
    PetscCall(VecSetRandom(zc, rnd));
    PetscCall(CavityCompareProducts(Pd, Ph, PETSC_FALSE, xc, zf, yd, yh, &d[0]));
    PetscCall(CavityCompareProducts(Pd, Ph, PETSC_TRUE, xf, zc, cd, ch, &d[3]));
    PetscCheck(sd && sh, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "-check_interpolation: a scaling vector is missing");
    PetscCall(CavityRelDiff(sd, sh, &d[6]));
    PetscCall(PetscSNPrintf(line, sizeof(line), "cavity: interpolation %" PetscInt_FMT "x%" PetscInt_FMT " -> %" PetscInt_FMT "x%" PetscInt_FMT ", device vs DMDA, relative differences:", Mc, Nc, Mf, Nf));
    for (PetscInt k = 0; k < 7; k++) {
      PetscCall(PetscStrlen(line, &len));
      PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, "%s %s %.2e", k ? "," : "", what[k], (double)d[k]));
      if (!(d[k] <= tol)) nbad++;
      worst = PetscMax(worst, d[k]);
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", line));
    PetscCall(VecDestroy(&xc));
    PetscCall(VecDestroy(&xf));
    PetscCall(VecDestroy(&zf));
    PetscCall(VecDestroy(&zc));
    PetscCall(VecDestroy(&yd));
    PetscCall(VecDestroy(&yh));
    PetscCall(VecDestroy(&cd));
    PetscCall(VecDestroy(&ch));
    PetscCall(VecDestroy(&sd));
    PetscCall(VecDestroy(&sh));
    PetscCall(MatDestroy(&Pd));
    PetscCall(MatDestroy(&Ph));
    PetscCall(DMDestroy(&daf));
    daf = dac;
    nlev++;
  }
  PetscCall(DMDestroy(&daf));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCheck(nlev > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-check_interpolation: the grid does not coarsen by 2 (it needs (mx - 1) and (my - 1) even and at least 5 x 5 points)");
  PetscCheck(nbad == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "-check_interpolation: %" PetscInt_FMT " differences above %g (largest %g)", nbad, (double)tol, (double)worst);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "cavity: interpolation check passed: %" PetscInt_FMT " levels, largest relative difference %.2e (limit %.0e)\n", nlev, (double)worst, (double)tol));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

#if defined(CAVITY_HAVE_CUDA) && defined(PETSC_USE_LOG)
  #define CAVITY_COUNT_COPIES 1
  #define CAVITY_MAX_STEPS    64
/* host<->device copies (PETSc's counters: every logged CpuToGpu/GpuToCpu copy of this rank) at the start of
   SNESSolve, at each Newton iteration's monitor call (iteration 0 comes after the set-up and first residual), and at
   the end */
/* The third counter is the GpuToCpu copies logged by VecMDot: PETSc counts each VecMDot's few inner products read
   back to the host as one copy (VecNorm and VecDot log theirs separately, as scalars), so a Newton step's copies
   split into those reduction results and data copies. */
typedef struct {
  PetscLogDouble start[3], at[CAVITY_MAX_STEPS][3], end[3];
  PetscInt       last; /* last iteration recorded */
  PetscLogEvent  mdot; /* VecMDot's event */
} CavityCopies;

static PetscErrorCode CavityCopiesRead(CavityCopies *cp, PetscLogDouble c[3])
{
  PetscEventPerfInfo info;

  PetscFunctionBeginUser;
  c[0] = petsc_ctog_ct;
  c[1] = petsc_gtoc_ct;
  PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, cp->mdot, &info));
  c[2] = info.GpuToCpuCount;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CavityCopiesMonitor(SNES snes, PetscInt it, PetscReal fnorm, void *ctx)
{
  CavityCopies *cp = (CavityCopies *)ctx;

  PetscFunctionBeginUser;
  if (it < CAVITY_MAX_STEPS) {
    PetscCall(CavityCopiesRead(cp, cp->at[it]));
    cp->last = it;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one line: copies in SNESSolve, before the first Newton step, and in each Newton step (max over ranks); each entry
   CpuToGpu/GpuToCpu, and in parentheses how many of the GpuToCpu were VecMDot results */
static PetscErrorCode CavityCopiesReport(const CavityCopies *cp)
{
  PetscLogDouble loc[3 * (CAVITY_MAX_STEPS + 1)], glob[3 * (CAVITY_MAX_STEPS + 1)];
  PetscInt       n = cp->last + 1; /* entries: before the first step, then steps 1..last */
  char           buf[4096];
  size_t         len;

  PetscFunctionBeginUser;
  for (PetscInt k = 0; k < 3; k++) {
    loc[k]     = cp->end[k] - cp->start[k];
    loc[3 + k] = cp->at[0][k] - cp->start[k];
    for (PetscInt i = 1; i < n; i++) loc[3 * (i + 1) + k] = cp->at[i][k] - cp->at[i - 1][k];
  }
  PetscCallMPI(MPIU_Allreduce(loc, glob, (PetscMPIInt)(3 * (n + 1)), MPIU_PETSCLOGDOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  PetscCall(PetscSNPrintf(buf, sizeof(buf), "cavity: host<->device copies in SNESSolve (CpuToGpu/GpuToCpu (of which VecMDot results), max over ranks): total %.0f/%.0f (%.0f), before the first Newton step %.0f/%.0f (%.0f), Newton steps", glob[0], glob[1], glob[2], glob[3], glob[4], glob[5]));
  for (PetscInt i = 1; i < n; i++) {
    PetscCall(PetscStrlen(buf, &len));
    PetscCall(PetscSNPrintf(buf + len, sizeof(buf) - len, "%s %.0f/%.0f (%.0f)", i > 1 ? "," : "", glob[3 * (i + 1)], glob[3 * (i + 1) + 1], glob[3 * (i + 1) + 2]));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", buf));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

static PetscErrorCode ProcessOptions(DM da, AppCtx *user)
{
  PetscInt       mx, my, dof, sw;
  DMBoundaryType bx, by;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(da, NULL, &mx, &my, NULL, NULL, NULL, NULL, &dof, &sw, &bx, &by, NULL, NULL));
  PetscCheck(mx >= 3 && my >= 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "The cavity needs at least 3 x 3 grid points (one interior point), got %" PetscInt_FMT " x %" PetscInt_FMT ": use a larger -da_grid_x/-da_grid_y or -da_refine", mx, my);
  PetscCheck(bx == DM_BOUNDARY_NONE && by == DM_BOUNDARY_NONE, PETSC_COMM_WORLD, PETSC_ERR_SUP, "The cavity has walls on every side: the DMDA must not be periodic or ghosted (got %s x %s)", DMBoundaryTypes[bx], DMBoundaryTypes[by]);
  PetscCheck(dof == CAVITY_DOF && sw == 1, PETSC_COMM_WORLD, PETSC_ERR_SUP, "The cavity needs 4 unknowns per point and stencil width 1, got %" PetscInt_FMT " and %" PetscInt_FMT, dof, sw);

  user->p.lid             = 1.0 / (mx * my); /* as ex19 */
  user->p.prandtl         = 1.0;
  user->p.grashof         = 1.0;
  user->p.fill            = CAVITY_FILL_AUTO;
  user->assembly          = CAVITY_ASSEMBLY_AUTO;
  user->use_gpu           = PETSC_FALSE;
  user->check_converged   = PETSC_TRUE;
  user->device_interp     = PETSC_TRUE;
  user->check_interp      = PETSC_FALSE;
  user->attach_interp     = PETSC_FALSE;
  user->mglevels          = 1;
  user->coarse_mattype[0] = 0;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Driven cavity options", NULL);
  PetscCall(PetscOptionsReal("-lidvelocity", "Dimensionless velocity of the lid (default 1/(mx*my))", NULL, user->p.lid, &user->p.lid, NULL));
  PetscCall(PetscOptionsReal("-grashof", "Grashof number: dimensionless temperature gradient", NULL, user->p.grashof, &user->p.grashof, NULL));
  PetscCall(PetscOptionsReal("-prandtl", "Prandtl number: ratio of momentum to thermal diffusivity (at least 0)", NULL, user->p.prandtl, &user->p.prandtl, NULL));
  PetscCall(PetscOptionsEnum("-jacobian_assembly", "How the host Jacobian reaches the matrix", NULL, CavityAssemblies, (PetscEnum)user->assembly, (PetscEnum *)&user->assembly, NULL));
  PetscCall(PetscOptionsBool("-use_gpu", "Residual and Jacobian by CUDA kernels on device arrays", NULL, user->use_gpu, &user->use_gpu, NULL));
  PetscCall(PetscOptionsEnum("-cavity_aij_fill", "How the Jacobian's values reach an AIJ matrix (-use_gpu aijcusparse, -jacobian_assembly array aij): straight into the CSR array (one rank), or COO", NULL, CavityFills, (PetscEnum)user->p.fill, (PetscEnum *)&user->p.fill, NULL));
  PetscCall(PetscOptionsString("-coarse_mat_type", "With -pc_type mg: matrix type of the coarsest level", NULL, user->coarse_mattype, user->coarse_mattype, sizeof(user->coarse_mattype), NULL));
  PetscCall(PetscOptionsBool("-cavity_device_interpolation", "With -use_gpu and -pc_type mg: MG interpolation by CUDA kernels (else DMDA's host matrix, converted)", NULL, user->device_interp, &user->device_interp, NULL));
  PetscCall(PetscOptionsBool("-check_interpolation", "With -use_gpu: compare the device MG interpolation with DMDA's and exit", NULL, user->check_interp, &user->check_interp, NULL));
  PetscCall(PetscOptionsBool("-check_converged", "Exit with an error if SNES did not converge", NULL, user->check_converged, &user->check_converged, NULL));
  PetscOptionsEnd();
  PetscCheck(user->p.prandtl >= 0.0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-prandtl must be at least 0, got %g", (double)user->p.prandtl);
  PetscCheck(!PetscIsInfOrNanReal(user->p.lid), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-lidvelocity must be a finite number, got %g", (double)user->p.lid);
  PetscCheck(!PetscIsInfOrNanReal(user->p.grashof), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-grashof must be a finite number, got %g", (double)user->p.grashof);
  {
    PetscMPIInt size;

    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCheck(user->p.fill != CAVITY_FILL_CSR || size == 1, PETSC_COMM_WORLD, PETSC_ERR_SUP, "-cavity_aij_fill csr writes straight into the CSR arrays of a one-rank matrix; on %d ranks use -cavity_aij_fill auto (COO there) or coo", size);
  }
#if !defined(CAVITY_HAVE_CUDA)
  PetscCheck(!user->use_gpu, PETSC_COMM_WORLD, PETSC_ERR_SUP, "-use_gpu: this build has no CUDA; build gpukit and this example against a PETSc configured with CUDA (make petsc-cuda) and real scalars");
#endif
  if (user->use_gpu) {
    VecType   vtype;
    MatType   mtype;
    PetscBool cudavec, okmat;

    PetscCall(DMGetVecType(da, &vtype));
    PetscCall(DMGetMatType(da, &mtype));
    PetscCall(PetscStrInList(vtype, "cuda,seqcuda,mpicuda", ',', &cudavec));
    PetscCheck(cudavec, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-use_gpu computes on device arrays: add -dm_vec_type cuda (the vector type is %s)", vtype);
    PetscCall(PetscStrInList(mtype, "sgdiacuda,seqsgdiacuda,mpisgdiacuda,aijcusparse,seqaijcusparse,mpiaijcusparse", ',', &okmat));
    PetscCheck(okmat, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-use_gpu writes the Jacobian on the device into MATSGDIACUDA (-dm_mat_type sgdiacuda) or MATAIJCUSPARSE (-dm_mat_type aijcusparse), not %s", mtype);
  }
  PetscCheck(!user->check_interp || user->use_gpu, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-check_interpolation compares the device interpolation with DMDA's: add -use_gpu (and its -dm_vec_type cuda -dm_mat_type sgdiacuda)");
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  AppCtx              user;
  DM                  da;
  SNES                snes;
  KSP                 ksp;
  PC                  pc;
  Vec                 x, F;
  PetscInt            mx, my, its, lits;
  PetscReal           fnorm;
  PetscLogDouble      t0, t1;
  SNESConvergedReason reason;
  PetscClassId        classid;
  MatType             mtype;
  VecType             vtype;
  PetscBool           cudavec = PETSC_FALSE, ismg;
  PetscMPIInt         size;
#if defined(CAVITY_COUNT_COPIES)
  CavityCopies copies;
#endif

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscClassIdRegister("Cavity", &classid));
  PetscCall(PetscLogEventRegister("CavityResidual", classid, &CAVITY_Residual));
  PetscCall(PetscLogEventRegister("CavityJacobian", classid, &CAVITY_Jacobian));
  PetscCall(PetscLogEventRegister("CavityResidCUDA", classid, &CAVITY_ResidualCUDA));
  PetscCall(PetscLogEventRegister("CavityJacCUDA", classid, &CAVITY_JacobianCUDA));
  PetscCall(PetscLogEventRegister("CavityInterpGPU", classid, &CAVITY_InterpToGPU));
  PetscCall(PetscLogEventRegister("CavityInterpCUDA", classid, &CAVITY_InterpCUDA));
  PetscCall(PetscLogEventRegister("CavityCOOSetUp", classid, &CAVITY_COOSetUp));
  PetscCall(PetscLogEventRegister("CavityCSRSetUp", classid, &CAVITY_CSRSetUp));
  /* its parts: the stencil's column list, PETSc's structure from it (preallocation, column indices, assembly), the check
     (on the device: the first device access, which uploads the structure and the values) */
  PetscCall(PetscLogEventRegister("CavityCSRColumns", classid, &CAVITY_CSRColumns));
  PetscCall(PetscLogEventRegister("CavityCSRStruct", classid, &CAVITY_CSRStructure));
  PetscCall(PetscLogEventRegister("CavityCSRCheck", classid, &CAVITY_CSRCheck));

  /* the grid: 4 x 4 by default, -da_grid_x/y, -da_refine (as ex19) */
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 4, 4, PETSC_DECIDE, PETSC_DECIDE, CAVITY_DOF, 1, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(DMDASetFieldName(da, 0, "x_velocity"));
  PetscCall(DMDASetFieldName(da, 1, "y_velocity"));
  PetscCall(DMDASetFieldName(da, 2, "Omega"));
  PetscCall(DMDASetFieldName(da, 3, "temperature"));
  PetscCall(ProcessOptions(da, &user));
  PetscCall(DMDAGetInfo(da, NULL, &mx, &my, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMSetApplicationContext(da, &user));
  PetscCall(DMGetVecType(da, &vtype));
  PetscCall(PetscStrInList(vtype, "cuda,seqcuda,mpicuda", ',', &cudavec));
#if defined(CAVITY_HAVE_CUDA)
  if (user.check_interp) {
    PetscCall(CavityCheckInterpolation(da, 1e-14));
    PetscCall(DMDestroy(&da));
    PetscCall(PetscFinalize());
    return 0;
  }
#endif

  PetscCall(SNESCreate(PETSC_COMM_WORLD, &snes));
  PetscCall(SNESSetDM(snes, da));
  if (user.use_gpu) {
#if defined(CAVITY_HAVE_CUDA)
    PetscCall(DMSNESSetFunction(da, CavityFormFunctionCUDA, &user.p));
    PetscCall(DMSNESSetJacobian(da, CavityFormJacobianCUDA, &user.p));
#endif
  } else {
    PetscCall(DMDASNESSetFunctionLocal(da, INSERT_VALUES, FormFunctionLocal, &user));
    PetscCall(DMDASNESSetJacobianLocal(da, FormJacobianLocal, &user));
  }
  PetscCall(SNESSetFromOptions(snes));
  PetscCall(SNESGetKSP(snes, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCMG, &ismg));
  if (cudavec) PetscCall(KSPSetPreSolve(ksp, CavityInterpolationToGPU, NULL));
  if (ismg) PetscCall(PCMGGetLevels(pc, &user.mglevels));
  if (user.use_gpu && ismg && user.mglevels > 1) {
    PCMGGalerkinType galerkin;

    PetscCall(PCMGGetGalerkin(pc, &galerkin));
    if (!user.device_interp) PetscCall(PetscInfo(snes, "Cavity: -cavity_device_interpolation 0: DMDA's interpolation, converted to %s after the first PCSetUp\n", MATAIJCUSPARSE));
    else if (galerkin != PC_MG_GALERKIN_NONE) PetscCall(PetscInfo(snes, "Cavity: Galerkin coarse operators need an assembled interpolation: DMDA's, converted to %s after the first PCSetUp\n", MATAIJCUSPARSE));
    else user.attach_interp = PETSC_TRUE;
  }
  {
    PetscBool coo;

    PetscCall(DMGetMatType(da, &mtype));
    PetscCall(CavityUsesCOO(&user, mtype, &coo));
    PetscCall(DMSetMatrixPreallocateSkip(da, coo));
  }
  if (ismg && user.mglevels > 1) PetscCall(DMCoarsenHookAdd(da, CavityCoarsenHook, NULL, &user));
  if (user.coarse_mattype[0] && !ismg) PetscCall(PetscInfo(snes, "Cavity: -coarse_mat_type ignored: the PC is not PCMG\n"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "lid velocity = %g, prandtl # = %g, grashof # = %g\n", (double)user.p.lid, (double)user.p.prandtl, (double)user.p.grashof));

  PetscCall(DMCreateGlobalVector(da, &x));
  PetscCall(FormInitialGuess(&user, da, x));
#if defined(CAVITY_COUNT_COPIES)
  PetscCall(PetscMemzero(&copies, sizeof(copies)));
  PetscCall(PetscLogEventGetId("VecMDot", &copies.mdot));
  if (cudavec) PetscCall(SNESMonitorSet(snes, CavityCopiesMonitor, &copies, NULL));
  PetscCall(CavityCopiesRead(&copies, copies.start));
#endif
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(&t0));
  PetscCall(SNESSolve(snes, NULL, x));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(&t1));
#if defined(CAVITY_COUNT_COPIES)
  PetscCall(CavityCopiesRead(&copies, copies.end));
  if (cudavec) PetscCall(CavityCopiesReport(&copies));
#endif

  PetscCall(SNESGetIterationNumber(snes, &its));
  PetscCall(SNESGetLinearSolveIterations(snes, &lits));
  PetscCall(SNESGetConvergedReason(snes, &reason));
  PetscCall(SNESGetFunction(snes, &F, NULL, NULL));
  PetscCall(VecNorm(F, NORM_2, &fnorm));
  {
    Mat J;

    PetscCall(SNESGetJacobian(snes, NULL, &J, NULL, NULL));
    if (J) PetscCall(MatGetType(J, &mtype));
    else mtype = "none";
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "cavity: grid %" PetscInt_FMT "x%" PetscInt_FMT ", ranks %d, mat %s, vec %s, gpu %s, Newton its %" PetscInt_FMT ", KSP its %" PetscInt_FMT ", residual norm %.6e, SNESSolve %.4f s, %s\n", mx, my, size, mtype, vtype,
                        user.use_gpu ? "yes" : "no", its, lits, (double)fnorm, (double)(t1 - t0), SNESConvergedReasons[reason]));
  PetscCheck(!user.check_converged || reason > 0, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "SNESSolve did not converge: %s after %" PetscInt_FMT " Newton iterations (residual norm %g); -check_converged 0 accepts this", SNESConvergedReasons[reason], its, (double)fnorm);

  PetscCall(VecDestroy(&x));
  PetscCall(SNESDestroy(&snes));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
