static const char help[] = "KSPCACG on CUDA vectors and GPU matrices (aijcusparse, sgdiacuda) against KSPCACG on the host (aij) in the same run.\n\n"
                           "  -dim 2|3 -n n            Poisson grid (default 2, 128)\n"
                           "  -mat_types t1,t2         GPU matrix types (default aijcusparse,sgdiacuda)\n"
                           "  -s 2,4,8 -bases b1,b2    KSPCACG parameters to run (default 2,4,8 and newton,chebyshev)\n"
                           "  -rtol r                  relative tolerance (default 1e-10)\n"
                           "  -sol_tol t               ||x_gpu - x_host|| <= t ||x_host|| (default 1e-6)\n"
                           "  -expect_device_gram 0|1  the Gram matrices must come from the device kernel (default 1; 0 with -ksp_cacg_fused_gram 0)\n"
                           "  -expect_lean 0|1         on sgdiacuda, and on aijcusparse on one rank, every outer iteration must have used the lean\n"
                           "                           basis (KSPCACGSetLeanBasis(); default 1; 0 where an option turns it off)\n"
                           "Other -ksp_cacg_* options reach both solvers.\n\n"
                           "  -test mpk                the MATSGDIACUDA matrix powers hook instead (MatMatrixPowers_C, below):\n"
                           "  -dim 2|3 -n n -dof d -stencil star|box -periodic 0|1   its grid (default 2, 32, 1, star, 0)\n"
                           "  -mpk_tol t               hook vs host reference, relative max norm (default 1e-12)\n"
                           "  -ksp_sol_tol t           KSPCACG with vs without the hook (default 1e-10)\n\n"
                           "  -test update             the fused update kernel (-ksp_cacg_fused_update) against VecMAXPY + PCApply:\n"
                           "  -dim 2|3 -n n -s 2,4,8 -mat_types t1,t2 -pcs jacobi,none   its problems (default 2, 64, 2,4,8, aijcusparse,sgdiacuda, jacobi,none)\n"
                           "  -upd_sol_tol t           fused vs unfused solutions, relative 2-norm (default 1e-10)\n";

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
#include <petscdmda.h>

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
  { /* D A D with D a fixed function of the global row in [0.5, 1.5): a diagonal that varies, the same on every matrix
       type, so that a misplaced Jacobi entry shows (Jacobi PCG takes the same steps on D A D as on A) */
    Vec          D;
    PetscScalar *d;
    PetscInt     lo, hi;
    PetscCall(DMCreateGlobalVector(*da, &D));
    PetscCall(VecGetOwnershipRange(D, &lo, &hi));
    PetscCall(VecGetArrayWrite(D, &d));
    for (PetscInt i = lo; i < hi; i++) d[i - lo] = 0.5 + (PetscReal)((unsigned long long)(i + 1) * 2654435761ULL % 1000003ULL) / 1000003.0;
    PetscCall(VecRestoreArrayWrite(D, &d));
    PetscCall(MatDiagonalScale(*A, D, D));
    PetscCall(VecDestroy(&D));
  }
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

/* ------------------------------------------------------------------------------------------------------------
   -test mpk: MATSGDIACUDA's "MatMatrixPowers_C" (src/mat/sgdia/sgdiacuda.cu) against the host reference: for k = 1..8,
   with and without dinv, the basis from MatMult + VecAXPBYPCZ/VecAXPBY/VecScale + VecPointwiseMult on a host MATSGDIA
   with the same values; V[0], W[0] unchanged; on one rank no host<->device copy inside the hook and the event
   SGDIAMatPowCUDA logged once per call; MatBindToCPU() removes the hook and puts it back, MatConvert() to MATSGDIA
   drops it; then KSPCACG on the GPU matrix with the hook and with -ksp_cacg_matrix_powers 0: same iterations, same
   solution, the hook's event seen only in the first.
   ------------------------------------------------------------------------------------------------------------ */

typedef PetscErrorCode (*MPKFn)(Mat, Vec, PetscInt, const PetscReal[], const PetscReal[], const PetscReal[], Vec[], Vec[]);

/* a symmetric value for the pair of natural indices p < q: in [0.1, 1) */
static PetscReal MPKHash(PetscInt p, PetscInt q)
{
  unsigned long long h = (unsigned long long)(p < q ? p : q) * 0x9E3779B97F4A7C15ULL ^ (unsigned long long)(p < q ? q : p) * 0xC2B2AE3D27D4EB4FULL;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 32;
  return 0.1 + 0.9 * (PetscReal)(h % 1000003ULL) / 1000003.0;
}

/* a symmetric, diagonally dominant matrix on every stencil point and component: off-diagonals -hash, the diagonal
   the sum of their magnitudes over the whole stencil plus 1 (so SPD); the same values for any matrix type */
static PetscErrorCode MPKFill(DM da, Mat A)
{
  DMDALocalInfo   info;
  DMDAStencilType st;
  PetscInt        dof, sw, nc, per;
  MatStencil     *col;
  PetscScalar    *v;

  PetscFunctionBegin;
  PetscCall(DMDAGetLocalInfo(da, &info));
  PetscCall(DMDAGetInfo(da, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &dof, &sw, NULL, NULL, NULL, &st));
  per = info.bx == DM_BOUNDARY_PERIODIC;
  PetscCall(PetscMalloc2(27 * dof, &col, 27 * dof, &v));
  for (PetscInt k = info.zs; k < info.zs + info.zm; k++)
    for (PetscInt j = info.ys; j < info.ys + info.ym; j++)
      for (PetscInt i = info.xs; i < info.xs + info.xm; i++)
        for (PetscInt r = 0; r < dof; r++) {
          PetscInt   g[3] = {i, j, k}, n[3] = {info.mx, info.my, info.mz}, prow = ((k * info.my + j) * info.mx + i) * dof + r, dg = -1;
          PetscReal  diag = 1.0;
          MatStencil row  = {0};
          row.i = i;
          row.j = j;
          row.k = k;
          row.c = r;
          nc    = 0;
          for (PetscInt dz = (info.dim > 2 ? -1 : 0); dz <= (info.dim > 2 ? 1 : 0); dz++)
            for (PetscInt dy = -1; dy <= 1; dy++)
              for (PetscInt dx = -1; dx <= 1; dx++) {
                PetscInt d[3] = {dx, dy, dz}, q[3], nz = (dx != 0) + (dy != 0) + (dz != 0), skip = 0;
                if (st == DMDA_STENCIL_STAR && nz > 1) continue;
                for (PetscInt e = 0; e < 3; e++) {
                  q[e] = g[e] + d[e];
                  if (q[e] < 0 || q[e] >= n[e]) {
                    if (per && e < info.dim) q[e] = (q[e] + n[e]) % n[e];
                    else skip = 1;
                  }
                }
                if (skip) continue;
                for (PetscInt c = 0; c < dof; c++) {
                  PetscInt pcol = ((q[2] * info.my + q[1]) * info.mx + q[0]) * dof + c;
                  col[nc].i     = g[0] + d[0];
                  col[nc].j     = g[1] + d[1];
                  col[nc].k     = g[2] + d[2];
                  col[nc].c     = c;
                  if (pcol == prow) {
                    dg      = nc;
                    v[nc++] = 0.0;
                  } else {
                    v[nc] = -MPKHash(prow, pcol);
                    diag += PetscAbsScalar(v[nc]);
                    nc++;
                  }
                }
              }
          PetscCheck(dg >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "no diagonal");
          v[dg] = diag;
          PetscCall(MatSetValuesStencil(A, 1, &row, nc, col, v, INSERT_VALUES));
        }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree2(col, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MPKCreate(PetscInt dim, PetscInt n, PetscInt dof, DMDAStencilType st, PetscBool per, const char *mattype, PetscBool gpu, DM *da, Mat *A)
{
  DMBoundaryType bt = per ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE;

  PetscFunctionBegin;
  if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, bt, bt, st, n, n, PETSC_DECIDE, PETSC_DECIDE, dof, 1, NULL, NULL, da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, bt, bt, bt, st, n, n, n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, dof, 1, NULL, NULL, NULL, da));
  PetscCall(DMSetFromOptions(*da));
  if (gpu) PetscCall(DMSetVecType(*da, VECCUDA));
  PetscCall(DMSetMatType(*da, mattype));
  PetscCall(DMSetUp(*da));
  PetscCall(DMCreateMatrix(*da, A));
  if (gpu) PetscCall(MatSetFromOptions(*A)); /* -mat_sgdia_cuda_variant */
  PetscCall(MPKFill(*da, *A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define MPK_MAXK 8

static PetscErrorCode RunMPK(PetscInt *fails)
{
  PetscInt        dim = 2, n = 32, dof = 1;
  PetscBool       per = PETSC_FALSE, gpu, hasdev = PetscDefined(HAVE_CUDA) ? PETSC_TRUE : PETSC_FALSE;
  PetscReal       tol = 1e-12, soltol = 1e-10;
  char            stname[16] = "star", mattype[64] = MATSGDIACUDA;
  DMDAStencilType st;
  DM              dah, dad;
  Mat             Ah, Ad;
  PetscMPIInt     size;
  PetscRandom     rnd;
  PetscLogEvent   ev;
  MPKFn           hook = NULL;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "KSPCACG GPU test: the SGDIACUDA matrix powers hook", NULL);
  PetscCall(PetscOptionsInt("-dim", "dimension", NULL, dim, &dim, NULL));
  PetscCall(PetscOptionsInt("-n", "grid points per direction", NULL, n, &n, NULL));
  PetscCall(PetscOptionsInt("-dof", "components", NULL, dof, &dof, NULL));
  PetscCall(PetscOptionsString("-stencil", "star or box", NULL, stname, stname, sizeof(stname), NULL));
  PetscCall(PetscOptionsBool("-periodic", "periodic in every dimension", NULL, per, &per, NULL));
  PetscCall(PetscOptionsReal("-mpk_tol", "hook vs host reference", NULL, tol, &tol, NULL));
  PetscCall(PetscOptionsString("-mpk_mat_type", "the matrix type whose hook is tested (sgdia: the host hook, to check this test on a CPU)", NULL, mattype, mattype, sizeof(mattype), NULL));
  PetscCall(PetscOptionsReal("-ksp_sol_tol", "KSPCACG with vs without the hook", NULL, soltol, &soltol, NULL));
  PetscOptionsEnd();
  PetscCall(PetscStrcmp(mattype, MATSGDIACUDA, &gpu));
  PetscCheck(hasdev || !gpu, PETSC_COMM_WORLD, PETSC_ERR_SUP, "This test needs a PETSc configured with CUDA (make petsc-cuda) and a GPU");
  {
    PetscBool isbox;
    PetscCall(PetscStrcmp(stname, "box", &isbox));
    st = isbox ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR;
  }
  PetscCall(MPKCreate(dim, n, dof, st, per, MATSGDIA, PETSC_FALSE, &dah, &Ah));
  PetscCall(MPKCreate(dim, n, dof, st, per, mattype, gpu, &dad, &Ad));
  { /* one product first, so that the matrix's one-time upload of its values happens before any count of copies */
    Vec a, b;

    PetscCall(MatCreateVecs(Ad, &a, &b));
    PetscCall(VecSet(a, 1.0));
    PetscCall(MatMult(Ad, a, b));
    PetscCall(VecDestroy(&a));
    PetscCall(VecDestroy(&b));
  }
  PetscCall(PetscLogEventGetId(gpu ? "SGDIAMatPowCUDA" : "SGDIAMatPowers", &ev));
  PetscCall(PetscObjectQueryFunction((PetscObject)Ad, "MatMatrixPowers_C", &hook));
  if (!hook) {
    MatType t;
    PetscCall(MatGetType(Ad, &t));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: %s has no MatMatrixPowers_C\n", t));
    (*fails)++;
    goto done;
  }
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, 0.5, 1.5));
  PetscCall(PetscRandomSetSeed(rnd, 777));
  PetscCall(PetscRandomSeed(rnd));
  for (PetscInt k = 1; k <= MPK_MAXK; k++) {
    for (PetscInt mode = 0; mode < 3; mode++) { /* no dinv; dinv; dinv and the lean basis (V = NULL: only W written) */
      const PetscBool withd = (PetscBool)(mode > 0), lean = (PetscBool)(mode == 2);
      PetscReal      theta[MPK_MAXK], sigma[MPK_MAXK], gamma[MPK_MAXK], worst = 0.0;
      Vec            Vh[MPK_MAXK + 1], Wh[MPK_MAXK + 1], Vd[MPK_MAXK + 1], Wd[MPK_MAXK + 1], dh = NULL, dd = NULL, v0 = NULL, w0 = NULL;
      PetscLogDouble gtoc0, ctog0, gtoc, ctog;
      PetscInt       c0, c1;

      /* every branch of the reference (plain product, scaling, theta term, theta and gamma terms), shifted with k */
      for (PetscInt j = 0; j < k; j++) {
        const PetscInt b = (j + k) % 4;
        theta[j]         = b >= 2 ? 0.35 + 0.1 * j : 0.0;
        sigma[j]         = b == 0 ? 1.0 : 0.8 + 0.15 * j;
        gamma[j]         = b == 3 && j > 0 ? 0.2 + 0.05 * j : 0.0;
      }
      for (PetscInt j = 0; j <= k; j++) {
        PetscCall(MatCreateVecs(Ah, &Wh[j], NULL));
        PetscCall(MatCreateVecs(Ad, &Wd[j], NULL));
        if (withd) {
          PetscCall(VecDuplicate(Wh[j], &Vh[j]));
          PetscCall(VecDuplicate(Wd[j], &Vd[j]));
        } else {
          Vh[j] = Wh[j];
          Vd[j] = Wd[j];
        }
      }
      PetscCall(VecSetRandom(Wh[0], rnd));
      if (withd) {
        PetscCall(VecDuplicate(Wh[0], &dh));
        PetscCall(VecDuplicate(Wd[0], &dd));
        PetscCall(VecSetRandom(dh, rnd));
        PetscCall(GKCopyValues(dh, dd));
        PetscCall(VecPointwiseMult(Vh[0], dh, Wh[0]));
        PetscCall(GKCopyValues(Vh[0], Vd[0]));
      }
      PetscCall(GKCopyValues(Wh[0], Wd[0]));
      PetscCall(VecDuplicate(Wh[0], &v0));
      PetscCall(VecDuplicate(Wh[0], &w0));
      PetscCall(VecCopy(Vh[0], v0));
      PetscCall(VecCopy(Wh[0], w0));
      PetscCall(GKMatPowersReference(Ah, dh, k, theta, sigma, gamma, Vh, Wh));

      /* the device hook, the data already on the device (GKCopyValues() wrote the inputs on the host) */
      for (PetscInt j = 1; j <= k; j++) {
        PetscCall(VecSet(Wd[j], 0.0));
        if (withd) PetscCall(VecSet(Vd[j], 0.0));
      }
      PetscCall(GKToDevice(Wd[0]));
      if (withd) PetscCall(GKToDevice(Vd[0]));
      PetscCall(GKToDevice(dd));
      /* a first call untimed: on the ghost-region route (periodic, or several ranks) it gathers and uploads the box
         values and dinv for this depth once; the counted call below is the steady state */
      PetscCall((*hook)(Ad, dd, k, theta, sigma, gamma, lean ? NULL : Vd, Wd));
      PetscCall(GKLogEventCount(ev, &c0));
      gtoc0 = GK_GTOC();
      ctog0 = GK_CTOG();
      PetscCall((*hook)(Ad, dd, k, theta, sigma, gamma, lean ? NULL : Vd, Wd));
      gtoc = GK_GTOC() - gtoc0;
      ctog = GK_CTOG() - ctog0;
      PetscCall(GKLogEventCount(ev, &c1));
      for (PetscInt j = 1; j <= k; j++) {
        PetscReal r;
        PetscCall(GKRelDiff(Wd[j], Wh[j], NORM_INFINITY, &r));
        worst = PetscMax(worst, r);
        if (withd && !lean) {
          PetscCall(GKRelDiff(Vd[j], Vh[j], NORM_INFINITY, &r));
          worst = PetscMax(worst, r);
        }
      }
      {
        PetscReal r0, r1;
        PetscCall(GKRelDiff(Vd[0], v0, NORM_INFINITY, &r0));
        PetscCall(GKRelDiff(Wd[0], w0, NORM_INFINITY, &r1));
        if (r0 != 0.0 || r1 != 0.0) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL k=%" PetscInt_FMT " dinv=%s: V[0] or W[0] changed (%g, %g)\n", k, lean ? "lean" : (withd ? "yes" : "no"), (double)r0, (double)r1));
          (*fails)++;
        }
      }
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "hook k=%" PetscInt_FMT " dinv=%s: max rel. diff vs host %.2e; %g device-to-host, %g host-to-device copies; hook event +%" PetscInt_FMT "\n", k, lean ? "lean" : (withd ? "yes" : "no"), (double)worst, (double)gtoc, (double)ctog, c1 - c0));
      if (!(worst <= tol)) {
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL k=%" PetscInt_FMT " dinv=%s: hook differs from the host reference by %.2e (tolerance %.2e)\n", k, lean ? "lean" : (withd ? "yes" : "no"), (double)worst, (double)tol));
        (*fails)++;
      }
      if (size == 1 && (gtoc > 0 || ctog > 0)) {
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL k=%" PetscInt_FMT ": %g device-to-host and %g host-to-device copies in the hook (0 expected)\n", k, (double)gtoc, (double)ctog));
        (*fails)++;
      }
      if (c1 - c0 != 1) {
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL k=%" PetscInt_FMT ": the hook's event logged %" PetscInt_FMT " times (1 expected: the device path)\n", k, c1 - c0));
        (*fails)++;
      }
      for (PetscInt j = 0; j <= k; j++) {
        if (withd) {
          PetscCall(VecDestroy(&Vh[j]));
          PetscCall(VecDestroy(&Vd[j]));
        }
        PetscCall(VecDestroy(&Wh[j]));
        PetscCall(VecDestroy(&Wd[j]));
      }
      PetscCall(VecDestroy(&dh));
      PetscCall(VecDestroy(&dd));
      PetscCall(VecDestroy(&v0));
      PetscCall(VecDestroy(&w0));
    }
  }
  PetscCall(PetscRandomDestroy(&rnd));

  /* MatBindToCPU() takes the hook away and gives it back; a convert to MATSGDIA drops the device one */
  if (gpu) {
    MPKFn h = NULL;
    Mat   C;
    PetscCall(MatBindToCPU(Ad, PETSC_TRUE));
    PetscCall(PetscObjectQueryFunction((PetscObject)Ad, "MatMatrixPowers_C", &h));
    if (h) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: MatMatrixPowers_C still composed after MatBindToCPU(A, PETSC_TRUE)\n"));
      (*fails)++;
    }
    PetscCall(MatBindToCPU(Ad, PETSC_FALSE));
    PetscCall(PetscObjectQueryFunction((PetscObject)Ad, "MatMatrixPowers_C", &h));
    if (h != hook) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: the device MatMatrixPowers_C not back after MatBindToCPU(A, PETSC_FALSE)\n"));
      (*fails)++;
    }
    PetscCall(MatConvert(Ad, MATSGDIA, MAT_INITIAL_MATRIX, &C));
    PetscCall(PetscObjectQueryFunction((PetscObject)C, "MatMatrixPowers_C", &h));
    if (h == hook) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: MatConvert() to MATSGDIA kept the device MatMatrixPowers_C\n"));
      (*fails)++;
    }
    PetscCall(MatDestroy(&C));
  }

  /* KSPCACG + Jacobi on the GPU matrix: with the hook and with -ksp_cacg_matrix_powers 0 */
  {
    Vec       b, x[2], xs;
    PetscInt  its[2], cnt[2];
    PetscReal rel;
    PetscCall(MatCreateVecs(Ad, &xs, &b));
    PetscCall(VecDuplicate(xs, &x[0]));
    PetscCall(VecDuplicate(xs, &x[1]));
    PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
    PetscCall(PetscRandomSetSeed(rnd, 4243));
    PetscCall(PetscRandomSeed(rnd));
    PetscCall(VecSetRandom(xs, rnd));
    PetscCall(PetscRandomDestroy(&rnd));
    PetscCall(MatMult(Ad, xs, b));
    for (PetscInt s = 4; s <= 8; s += 4) {
      for (PetscInt use = 0; use < 2; use++) {
        KSP                ksp;
        KSPConvergedReason reason;
        PetscInt           e0, e1;
        PetscCall(CreateSolver(Ad, KSPCACG, s, KSP_CACG_BASIS_NEWTON, 1e-11, &ksp));
        PetscCall(KSPCACGSetUseMatrixPowers(ksp, use == 0 ? PETSC_TRUE : PETSC_FALSE));
        PetscCall(VecSet(x[use], 0.0));
        PetscCall(GKLogEventCount(ev, &e0));
        PetscCall(KSPSolve(ksp, b, x[use]));
        PetscCall(GKLogEventCount(ev, &e1));
        PetscCall(KSPGetIterationNumber(ksp, &its[use]));
        PetscCall(KSPGetConvergedReason(ksp, &reason));
        cnt[use] = e1 - e0;
        if (reason <= 0) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL KSPCACG s=%" PetscInt_FMT " %s the hook: %s\n", s, use == 0 ? "with" : "without", KSPConvergedReasons[reason]));
          (*fails)++;
        }
        PetscCall(KSPDestroy(&ksp));
      }
      PetscCall(GKRelDiff(x[0], x[1], NORM_INFINITY, &rel));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "KSPCACG s=%" PetscInt_FMT ": %" PetscInt_FMT " its with the hook (%" PetscInt_FMT " hook calls), %" PetscInt_FMT " without (%" PetscInt_FMT "); solutions differ by %.2e relative\n", s, its[0], cnt[0], its[1], cnt[1], (double)rel));
      if (its[0] != its[1] || !(rel <= soltol) || cnt[0] < 1 || cnt[1] != 0) {
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL KSPCACG s=%" PetscInt_FMT ": iterations %" PetscInt_FMT " vs %" PetscInt_FMT " (equal expected), solutions %.2e apart (tolerance %.2e), hook calls %" PetscInt_FMT " and %" PetscInt_FMT " (>= 1 and 0 expected)\n", s, its[0], its[1], (double)rel, (double)soltol, cnt[0], cnt[1]));
        (*fails)++;
      }
    }
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&xs));
    PetscCall(VecDestroy(&x[0]));
    PetscCall(VecDestroy(&x[1]));
  }
done:
  PetscCall(MatDestroy(&Ah));
  PetscCall(MatDestroy(&Ad));
  PetscCall(DMDestroy(&dah));
  PetscCall(DMDestroy(&dad));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   -test update: KSPCACG with the fused device update (KSPCACGSetFusedUpdate(), cacgcuda.cu) against the same solver
   with VecMAXPY + PCApply, for each GPU matrix type, preconditioner (Jacobi, none) and s. Each solver solves twice
   (the first estimates the spectrum); the second solve is measured. Checks: both converge; the same iteration
   counts; solutions within -upd_sol_tol; the fused run used the kernel (event CACGUpdateCUDA, at most once per
   outer iteration, at least once) and the unfused run did not; the fused run made no more host<->device copies than
   the unfused one (on any rank).
*/
static PetscErrorCode RunUpdate(PetscInt *fails)
{
  char         *types[4], *pcs[4];
  PetscInt      dim = 2, n = 64, slist[8] = {2, 4, 8}, ns = 8, nt = 4, np = 4;
  PetscReal     soltol = 1e-10;
  PetscBool     flg;
  PetscLogEvent evk, evu;

  PetscFunctionBegin;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "KSPCACG GPU test: the fused update", NULL);
  PetscCall(PetscOptionsInt("-dim", "dimension", NULL, dim, &dim, NULL));
  PetscCall(PetscOptionsInt("-n", "grid points per direction", NULL, n, &n, NULL));
  PetscCall(PetscOptionsIntArray("-s", "values of s", NULL, slist, &ns, &flg));
  if (!flg) ns = 3;
  PetscCall(PetscOptionsStringArray("-mat_types", "GPU matrix types", NULL, types, &nt, &flg));
  if (!flg) {
    nt = 2;
    PetscCall(PetscStrallocpy(MATAIJCUSPARSE, &types[0]));
    PetscCall(PetscStrallocpy(MATSGDIACUDA, &types[1]));
  }
  PetscCall(PetscOptionsStringArray("-pcs", "preconditioners (jacobi, none)", NULL, pcs, &np, &flg));
  if (!flg) {
    np = 2;
    PetscCall(PetscStrallocpy(PCJACOBI, &pcs[0]));
    PetscCall(PetscStrallocpy(PCNONE, &pcs[1]));
  }
  PetscCall(PetscOptionsReal("-upd_sol_tol", "fused vs unfused solutions", NULL, soltol, &soltol, NULL));
  PetscOptionsEnd();
  PetscCheck(PetscDefined(HAVE_CUDA), PETSC_COMM_WORLD, PETSC_ERR_SUP, "This test needs a PETSc configured with CUDA (make petsc-cuda) and a GPU");
  PetscCall(PetscLogEventGetId("CACGUpdateCUDA", &evk));
  PetscCall(PetscLogEventGetId("CACGUpdate", &evu));

  for (PetscInt ti = 0; ti < nt; ti++) {
    DM          da;
    Mat         A;
    Vec         b, xs, x[2];
    PetscRandom rnd;

    PetscCall(CreateProblem(dim, n, types[ti], PETSC_TRUE, &da, &A));
    PetscCall(MatCreateVecs(A, &xs, &b));
    PetscCall(VecDuplicate(xs, &x[0]));
    PetscCall(VecDuplicate(xs, &x[1]));
    PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
    PetscCall(PetscRandomSetSeed(rnd, 4244));
    PetscCall(PetscRandomSeed(rnd));
    PetscCall(VecSetRandom(xs, rnd));
    PetscCall(PetscRandomDestroy(&rnd));
    PetscCall(MatMult(A, xs, b));
    for (PetscInt pi = 0; pi < np; pi++) {
      for (PetscInt si = 0; si < ns; si++) {
        PetscInt           its[2], kern[2], upd[2];
        PetscLogDouble     ctog[2], gtoc[2];
        KSPConvergedReason reason[2];
        PetscReal          rel;
        char               tag[128];
        int                bad = 0, gbad = 0;

        PetscCall(PetscSNPrintf(tag, sizeof(tag), "%s %s s=%" PetscInt_FMT, types[ti], pcs[pi], slist[si]));
        for (PetscInt f = 0; f < 2; f++) { /* f = 0: fused, 1: VecMAXPY + PCApply */
          KSP            ksp;
          PC             pc;
          PetscInt       k0, k1, u0, u1;
          PetscLogDouble c0, g0;

          PetscCall(CreateSolver(A, KSPCACG, slist[si], KSP_CACG_BASIS_NEWTON, 1e-10, &ksp));
          PetscCall(KSPGetPC(ksp, &pc));
          PetscCall(PCSetType(pc, pcs[pi]));
          PetscCall(KSPCACGSetFusedUpdate(ksp, f == 0 ? PETSC_TRUE : PETSC_FALSE));
          PetscCall(VecSet(x[f], 0.0));
          PetscCall(KSPSolve(ksp, b, x[f])); /* the spectrum estimate */
          PetscCall(VecSet(x[f], 0.0));
          PetscCall(GKToDevice(b));
          PetscCall(GKToDevice(x[f]));
          PetscCall(GKLogEventCount(evk, &k0));
          PetscCall(GKLogEventCount(evu, &u0));
          c0 = GK_CTOG();
          g0 = GK_GTOC();
          PetscCall(KSPSolve(ksp, b, x[f]));
          ctog[f] = GK_CTOG() - c0;
          gtoc[f] = GK_GTOC() - g0;
          PetscCall(GKLogEventCount(evk, &k1));
          PetscCall(GKLogEventCount(evu, &u1));
          kern[f] = k1 - k0;
          upd[f]  = u1 - u0;
          PetscCall(KSPGetIterationNumber(ksp, &its[f]));
          PetscCall(KSPGetConvergedReason(ksp, &reason[f]));
          PetscCall(KSPDestroy(&ksp));
        }
        PetscCall(GKRelDiff(x[0], x[1], NORM_2, &rel));
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: fused %s %" PetscInt_FMT " its (kernel %" PetscInt_FMT " of %" PetscInt_FMT " updates, %g/%g host-to-device/device-to-host copies), unfused %s %" PetscInt_FMT " its (kernel %" PetscInt_FMT ", %g/%g copies); solutions %.2e apart\n", tag, KSPConvergedReasons[reason[0]], its[0], kern[0], upd[0], (double)ctog[0], (double)gtoc[0], KSPConvergedReasons[reason[1]], its[1], kern[1], (double)ctog[1], (double)gtoc[1], (double)rel));
        if (reason[0] <= 0 || reason[1] <= 0) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: did not converge\n", tag));
          (*fails)++;
        }
        if (its[0] != its[1]) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: %" PetscInt_FMT " iterations fused, %" PetscInt_FMT " unfused (equal expected)\n", tag, its[0], its[1]));
          (*fails)++;
        }
        if (!(rel <= soltol)) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: solutions differ by %.2e relative (tolerance %.2e)\n", tag, (double)rel, (double)soltol));
          (*fails)++;
        }
        if (kern[0] < 1 || kern[0] > upd[0] || kern[1] != 0) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: the update kernel ran %" PetscInt_FMT " times in %" PetscInt_FMT " updates fused (1..%" PetscInt_FMT " expected) and %" PetscInt_FMT " times unfused (0 expected)\n", tag, kern[0], upd[0], upd[0], kern[1]));
          (*fails)++;
        }
        if (ctog[0] > ctog[1] || gtoc[0] > gtoc[1]) bad = 1;
        PetscCallMPI(MPI_Allreduce(&bad, &gbad, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD));
        if (gbad) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: more host<->device copies with the fused update than without (on some rank)\n", tag));
          (*fails)++;
        }
      }
    }
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&xs));
    PetscCall(VecDestroy(&x[0]));
    PetscCall(VecDestroy(&x[1]));
    PetscCall(MatDestroy(&A));
    PetscCall(DMDestroy(&da));
  }
  for (PetscInt i = 0; i < nt; i++) PetscCall(PetscFree(types[i]));
  for (PetscInt i = 0; i < np; i++) PetscCall(PetscFree(pcs[i]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char        *types[4], *bases[4];
  PetscInt     dim = 2, n = 128, slist[8] = {2, 4, 8}, ns = 8, nt = 4, nb = 4, fails = 0;
  PetscReal    rtol = 1e-10, soltol = 1e-6;
  PetscBool    flg, expectdev = PETSC_TRUE, expectlean = PETSC_TRUE;
  PetscMPIInt  size;
  DM           dah;
  Mat          Ah;
  Vec          bh, xh;
  PetscRandom  rnd;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  { /* these tests check given s-step paths (s, the kernel, the lean basis): KSPCACG's run-time tuner, on by default on
       CUDA vectors, would change them; tests/ksp/cacg_tune.c and tests/gpu/cacg.list's tuned lines test it */
    PetscBool has;
    PetscCall(PetscOptionsHasName(NULL, NULL, "-ksp_cacg_tune", &has));
    if (!has) PetscCall(PetscOptionsSetValue(NULL, "-ksp_cacg_tune", "0"));
  }
  PetscCall(PetscGPUKitInitialize());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  {
    char      test[16] = "ksp";
    PetscBool ismpk, isupd;
    PetscCall(PetscOptionsGetString(NULL, NULL, "-test", test, sizeof(test), NULL));
    PetscCall(PetscStrcmp(test, "mpk", &ismpk));
    PetscCall(PetscStrcmp(test, "update", &isupd));
    if (ismpk || isupd) {
      PetscCall(PetscLogDefaultBegin()); /* the event counts */
      if (ismpk) PetscCall(RunMPK(&fails));
      else PetscCall(RunUpdate(&fails));
      PetscCheck(!fails, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%" PetscInt_FMT " checks failed", fails);
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "all checks passed\n"));
      PetscCall(PetscFinalize());
      return 0;
    }
  }
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
  PetscCall(PetscOptionsBool("-expect_lean", "lean basis expected", NULL, expectlean, &expectlean, NULL));
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
      PetscCall(GKCopyValues(bh, bd));
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
        PetscCall(GKRelDiff(xd, xh, NORM_2, &diff));
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: host %s %" PetscInt_FMT " its, GPU %s %" PetscInt_FMT " its (GPU KSPCG %" PetscInt_FMT "), ||x_gpu - x_host||/||x_host|| %.2e; GPU solve: %" PetscInt_FMT " outer (%" PetscInt_FMT " on the device Gram kernel), %g device-to-host and %g host-to-device copies\n", tag, KSPConvergedReasons[rh], itsh,
                              KSPConvergedReasons[rd], itsd, itscg, (double)diff, std.outer, std.devicegram, (double)gtoc, (double)ctog));
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: lean basis in %" PetscInt_FMT " of %" PetscInt_FMT " outer iterations\n", tag, std.leanbasis, std.outer));
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
        {
          PetscBool sgd, leanhere;
          PetscCall(PetscStrcmp(types[ti], MATSGDIACUDA, &sgd));
          leanhere = (PetscBool)(expectlean && (sgd || size == 1)); /* MATMPIAIJCUSPARSE has no matrix powers kernel */
          if ((leanhere && std.leanbasis != std.outer) || (!leanhere && std.leanbasis)) {
            PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: %" PetscInt_FMT " of %" PetscInt_FMT " outer iterations used the lean basis (%s expected)\n", tag, std.leanbasis, std.outer, leanhere ? "all" : "none"));
            fails++;
          }
        }
        if (expectdev && std.devicegram != std.outer) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: %" PetscInt_FMT " of %" PetscInt_FMT " Gram matrices came from the device kernel\n", tag, std.devicegram, std.outer));
          fails++;
        }
        if (size == 1 && expectdev && (ctog > 0 || gtoc > std.outer + std.direct + 2 * std.cgsteps + 6)) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: %g host-to-device copies (0 expected), %g device-to-host (at most %" PetscInt_FMT " expected)\n", tag, (double)ctog, (double)gtoc, std.outer + std.direct + 2 * std.cgsteps + 6));
          fails++;
        }
        if (bi == 0 && si == 0) { /* new values between solves: dinv, and what a matrix powers kernel keeps of it, follow */
          PetscInt  ih, id;
          PetscReal d2;
          PetscCall(MatShift(Ah, 1.0));
          PetscCall(MatShift(Ad, 1.0));
          PetscCall(VecSet(xh, 0.0));
          PetscCall(KSPSolve(kh, bh, xh));
          PetscCall(VecSet(xd, 0.0));
          PetscCall(KSPSolve(kd, bd, xd));
          PetscCall(KSPGetIterationNumber(kh, &ih));
          PetscCall(KSPGetIterationNumber(kd, &id));
          PetscCall(GKRelDiff(xd, xh, NORM_2, &d2));
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, A + I: host %" PetscInt_FMT " its, GPU %" PetscInt_FMT " its, solutions %.2e apart\n", tag, ih, id, (double)d2));
          if (PetscAbsInt(ih - id) > PetscMax(1, ih / 50) || !(d2 <= soltol)) {
            PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: after MatShift the GPU solve differs from the host one\n", tag));
            fails++;
          }
          PetscCall(MatShift(Ah, -1.0));
          PetscCall(MatShift(Ad, -1.0));
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
