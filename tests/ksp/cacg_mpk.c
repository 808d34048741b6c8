static const char help[] = "MATSGDIA's matrix powers kernel (MatMatrixPowers_C) against MatMult + VecAXPBYPCZ + VecPointwiseMult.\n\n"
                           "  -mode powers|ksp     powers: the kernel against the reference on random matrices (default);\n"
                           "                       ksp: KSPCACG + Jacobi on a DMDA Poisson, with and without the kernel\n"
                           "  powers: -dims 2,3 -stencils 0,1 (star, box) -dofs 1,3 -widths 1,2 -periodic 0,1 -kmax 8 -n2 40 -n3 12\n"
                           "          every k = 1..kmax, without dinv, with dinv, and lean (V = NULL); max relative difference <= -tol (1e-12); neighbour\n"
                           "          exchanges (VecScatterBegin + SFBcastBegin calls) per call: 1 where the ghost region fits, k where it does not,\n"
                           "          0 on one rank without periodic dimensions. -expect_ghost / -expect_fallback: at least one call\n"
                           "          must have taken that route; -expect_forced_error: some call forced on (-mat_sgdia_mpk_ghost_region true)\n"
                           "          where the region does not fit (it must fail with the documented error)\n"
                           "          -korder up|down|alternate: k = 1..kmax, kmax..1, or kmax, kmax-1, kmax, ... (KSPCACG's s, s-1)\n"
                           "  ksp:    -dim 2|3 -n n -s 4,8: the same iteration count and solutions within 1e-10\n"
                           "  both:   -mat_type sgdia|sgdiacuda (CUDA vectors; the device hook, and the same cases through the host MATSGDIA\n"
                           "          hook of a copy: -host_tol 1e-12 in powers, the same iterations and solutions within 1e-10 in ksp)\n"
                           "          -mat_sgdia_mpk_ghost_region true|false is honoured in the expected routes; true where the region does\n"
                           "          not fit must give the documented error (checked)\n";

#include "gktest.h"
#include <petscksp.h>

static PetscErrorCode GKEventCount(const char *, PetscInt *);

/* neighbour exchanges so far: VecScatterBegin (MatMult's ghost update) + SFBcastBegin (the kernel's own PetscSF; a
   VecScatter's bcast is logged as VecScatterBegin only) + the CUDA IPC exchanges of MATSGDIACUDA */
static PetscErrorCode GKExchanges(PetscInt *count)
{
  PetscInt a, b;

  PetscFunctionBegin;
  PetscCall(GKEventCount("VecScatterBegin", &a));
  PetscCall(GKEventCount("SFBcastBegin", &b));
  *count = a + b;
#if defined(PETSC_HAVE_CUDA)
  { /* MATSGDIACUDA's exchanges through CUDA IPC (src/mat/utils/gpukitipc.h): its event is logged by Begin and by End */
    PetscInt c;
    PetscCall(GKEventCount("GpukitIPCHalo", &c));
    *count += c / 2;
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GKEventCount(const char *name, PetscInt *count)
{
  PetscLogEvent ev;

  PetscFunctionBegin;
  PetscCall(PetscLogEventGetId(name, &ev));
  PetscCall(GKLogEventCount(ev, count));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a random matrix on the stencil: off-diagonal entries in [-1, 1], diagonal blocks dominant */
static PetscErrorCode FillRandom(DM da, Mat A, PetscRandom rnd)
{
  DMDALocalInfo   info;
  PetscInt        dof, sw, dim;
  DMDAStencilType st;
  DMBoundaryType  bd[3];

  PetscFunctionBegin;
  PetscCall(DMDAGetInfo(da, &dim, NULL, NULL, NULL, NULL, NULL, NULL, &dof, &sw, &bd[0], &bd[1], &bd[2], &st));
  PetscCall(DMDAGetLocalInfo(da, &info));
  for (PetscInt k = info.zs; k < info.zs + info.zm; k++)
    for (PetscInt j = info.ys; j < info.ys + info.ym; j++)
      for (PetscInt i = info.xs; i < info.xs + info.xm; i++) {
        for (PetscInt dz = (dim > 2 ? -sw : 0); dz <= (dim > 2 ? sw : 0); dz++)
          for (PetscInt dy = (dim > 1 ? -sw : 0); dy <= (dim > 1 ? sw : 0); dy++)
            for (PetscInt dx = -sw; dx <= sw; dx++) {
              PetscInt   q[3] = {i + dx, j + dy, k + dz}, n[3] = {info.mx, info.my, info.mz}, nnz = (dx != 0) + (dy != 0) + (dz != 0);
              PetscBool  in   = PETSC_TRUE;
              MatStencil row  = {0}, col = {0};
              if (st == DMDA_STENCIL_STAR && nnz > 1) continue;
              for (PetscInt d = 0; d < dim; d++)
                if (bd[d] != DM_BOUNDARY_PERIODIC && (q[d] < 0 || q[d] >= n[d])) in = PETSC_FALSE;
              if (!in) continue;
              row.i = i;
              row.j = j;
              row.k = k;
              col.i = q[0];
              col.j = q[1];
              col.k = q[2];
              for (PetscInt r = 0; r < dof; r++)
                for (PetscInt c = 0; c < dof; c++) {
                  PetscScalar v;
                  PetscCall(PetscRandomGetValue(rnd, &v));
                  v = 2.0 * v - 1.0;
                  if (!nnz && r == c) v += 2.0 * dof * (dim == 3 ? 125 : 25);
                  row.c = r;
                  col.c = c;
                  PetscCall(MatSetValuesStencil(A, 1, &row, 1, &col, &v, INSERT_VALUES));
                }
            }
      }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef PetscErrorCode (*MPKFn)(Mat, Vec, PetscInt, const PetscReal[], const PetscReal[], const PetscReal[], Vec[], Vec[]);

/* would the kernel's ghost region of depth k*sw fit (the same rule as sgdiampk.c, written again here)? */
static PetscErrorCode GhostFits(DM da, PetscInt k, PetscInt *route)
{
  PetscInt        dim, M[3], pm[3], sw;
  DMBoundaryType  bd[3];
  const PetscInt *lx[3];
  PetscMPIInt     size;
  PetscBool       periodic = PETSC_FALSE, fits = PETSC_TRUE;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)da), &size));
  PetscCall(DMDAGetInfo(da, &dim, &M[0], &M[1], &M[2], &pm[0], &pm[1], &pm[2], NULL, &sw, &bd[0], &bd[1], &bd[2], NULL));
  PetscCall(DMDAGetOwnershipRanges(da, &lx[0], &lx[1], &lx[2]));
  for (PetscInt d = 0; d < dim; d++) {
    if (bd[d] == DM_BOUNDARY_PERIODIC) periodic = PETSC_TRUE;
    if (pm[d] == 1 && bd[d] != DM_BOUNDARY_PERIODIC) continue;
    for (PetscInt r = 0; r < pm[d]; r++)
      if (lx[d][r] < k * sw) fits = PETSC_FALSE;
  }
  {
    PetscBool force = PETSC_TRUE, set;
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-mat_sgdia_mpk_ghost_region", &force, &set));
    if (set && !force) fits = PETSC_FALSE; /* forced off */
  }
  if ((size == 1 && !periodic) || sw == 0) *route = 0; /* local */
  else *route = fits ? 1 : 2;                           /* ghost region, fallback */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestPowers(void)
{
  PetscInt    dims[2] = {2, 3}, nd = 2, sts[2] = {0, 1}, nst = 2, dofs[2] = {1, 3}, ndof = 2, wids[2] = {1, 2}, nw = 2, pers[2] = {0, 1}, np = 2;
  PetscInt    kmax = 8, n2 = 40, n3 = 12, ncase = 0, nghost = 0, nfall = 0, nlocal = 0, nfail = 0;
  PetscReal   tol = 1e-12, worst = 0;
  PetscBool   expghost = PETSC_FALSE, expfall = PETSC_FALSE, flg, gpu, force = PETSC_FALSE, forceset, cmphost;
  PetscRandom rnd, rcoef;
  char        mattype[64] = "sgdia", korder[16] = "up";
  PetscReal   htol = 1e-12, hworst = 0;
  PetscInt    nerr = 0;
  PetscBool   experr = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-dims", dims, &nd, &flg));
  if (!flg) nd = 2;
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-stencils", sts, &nst, &flg));
  if (!flg) nst = 2;
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-dofs", dofs, &ndof, &flg));
  if (!flg) ndof = 2;
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-widths", wids, &nw, &flg));
  if (!flg) nw = 2;
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-periodic", pers, &np, &flg));
  if (!flg) np = 2;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-kmax", &kmax, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n2", &n2, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n3", &n3, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &tol, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_ghost", &expghost, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_fallback", &expfall, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_forced_error", &experr, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_type", mattype, sizeof(mattype), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-korder", korder, sizeof(korder), NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-host_tol", &htol, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-mat_sgdia_mpk_ghost_region", &force, &forceset));
  PetscCall(PetscStrcmp(mattype, "sgdiacuda", &gpu));
  cmphost = gpu;
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-compare_host", &cmphost, NULL));
  {
    PetscBool a, b, c;
    PetscCall(PetscStrcmp(korder, "up", &a));
    PetscCall(PetscStrcmp(korder, "down", &b));
    PetscCall(PetscStrcmp(korder, "alternate", &c));
    PetscCheck(a || b || c, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-korder is up, down or alternate, not %s", korder);
  }
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetFromOptions(rnd));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rcoef)); /* the coefficients: the same sequence on every rank */
  for (PetscInt a = 0; a < nd; a++)
    for (PetscInt b = 0; b < nst; b++)
      for (PetscInt c = 0; c < ndof; c++)
        for (PetscInt e = 0; e < nw; e++)
          for (PetscInt f = 0; f < np; f++) {
            PetscInt        dim = dims[a], dof = dofs[c], sw = wids[e], n = dim == 2 ? n2 : n3;
            DMDAStencilType st  = sts[b] ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR;
            DMBoundaryType  bt  = pers[f] ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE;
            DM              da;
            Mat             A;
            MPKFn           fn = NULL, fnh = NULL;
            Mat             Ah = NULL;
            Vec             dinv, *Vh, *Wh, *Vr, *Wr, dh = NULL, *Vhh = NULL, *Whh = NULL;
            PetscReal       nrm, theta[8], sigma[8], gamma[8];

            PetscCheck(kmax >= 1 && kmax <= 8, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-kmax is 1..8");
            if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, bt, bt, st, n, n - 4, PETSC_DECIDE, PETSC_DECIDE, dof, sw, NULL, NULL, &da));
            else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, bt, bt, bt, st, n, n - 1, n + 1, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, dof, sw, NULL, NULL, NULL, &da));
            if (gpu) PetscCall(DMSetVecType(da, VECCUDA));
            PetscCall(DMSetMatType(da, mattype));
            PetscCall(DMSetUp(da));
            PetscCall(DMCreateMatrix(da, &A));
            PetscCall(MatSetFromOptions(A)); /* -mat_sgdia_mpk_ghost_region */
            PetscCall(FillRandom(da, A, rnd));
            if (cmphost) { /* the host MATSGDIA with the same values, its hook, its vectors */
              PetscCall(MatConvert(A, MATSGDIA, MAT_INITIAL_MATRIX, &Ah));
              PetscCall(PetscObjectQueryFunction((PetscObject)Ah, "MatMatrixPowers_C", &fnh));
              PetscCheck(fnh, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MATSGDIA has no MatMatrixPowers_C");
              PetscCall(MatCreateVecs(Ah, &dh, NULL));
              PetscCall(VecDuplicateVecs(dh, 9, &Vhh));
              PetscCall(VecDuplicateVecs(dh, 9, &Whh));
            }
            PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatMatrixPowers_C", &fn));
            PetscCheck(fn, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MATSGDIA has no MatMatrixPowers_C");
            PetscCall(MatNorm(A, NORM_INFINITY, &nrm));
            PetscCall(MatCreateVecs(A, &dinv, NULL));
            PetscCall(VecSetRandom(dinv, rnd));
            PetscCall(VecShift(dinv, 0.5));
            if (cmphost) PetscCall(GKCopyValues(dinv, dh));
            PetscCall(VecDuplicateVecs(dinv, 9, &Vh));
            PetscCall(VecDuplicateVecs(dinv, 9, &Wh));
            PetscCall(VecDuplicateVecs(dinv, 9, &Vr));
            PetscCall(VecDuplicateVecs(dinv, 9, &Wr));
            for (PetscInt j = 0; j < 8; j++) { /* a bounded basis: sigma ~ ||A||; some theta, gamma zero; the same on every rank */
              PetscScalar r1, r2;
              PetscCall(PetscRandomGetValue(rcoef, &r1));
              PetscCall(PetscRandomGetValue(rcoef, &r2));
              sigma[j] = nrm * (1.0 + PetscRealPart(r1));
              theta[j] = j % 3 == 2 ? 0.0 : 0.5 * nrm * PetscRealPart(r2);
              gamma[j] = j == 0 || j % 4 == 3 ? 0.0 : 0.2 * nrm * PetscRealPart(r1);
            }
            for (PetscInt mode = 0; mode < 3; mode++) { /* no dinv; dinv; dinv and the lean basis (V = NULL) */
              const PetscBool usedinv = (PetscBool)(mode > 0), lean = (PetscBool)(mode == 2);
              for (PetscInt kk = 1; kk <= kmax; kk++) {
                const PetscInt k = korder[0] == 'u' ? kk : (korder[0] == 'd' ? kmax + 1 - kk : (kk % 2 ? kmax : PetscMax(kmax - 1, 1)));
                Vec           *V = lean ? NULL : (usedinv ? Vh : Wh), *VR = usedinv ? Vr : Wr;
                PetscInt       route, c0 = 0, c1 = 0, expect;
                PetscReal      rel = 0, r;

                PetscCall(GhostFits(da, k, &route));
                if (forceset && force && route == 2) { /* forced on where the region does not fit: the documented error */
                  PetscErrorCode ierr;
                  PetscCall(VecSetRandom(Wh[0], rnd));
                  if (usedinv) PetscCall(VecPointwiseMult(Vh[0], dinv, Wh[0]));
                  PetscCall(GKExpectErrorBegin());
                  ierr = fn(A, usedinv ? dinv : NULL, k, theta, sigma, gamma, V, Wh);
                  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_INCOMP, "-mat_sgdia_mpk_ghost_region true, but the ghost region", "the ghost region forced on where it does not fit"));
                  nerr++;
                  continue;
                }

                PetscCall(VecSetRandom(Wh[0], rnd));
                PetscCall(VecCopy(Wh[0], Wr[0]));
                if (usedinv) {
                  PetscCall(VecPointwiseMult(Vh[0], dinv, Wh[0]));
                  PetscCall(VecCopy(Vh[0], Vr[0]));
                }
                PetscCall(fn(A, usedinv ? dinv : NULL, k, theta, sigma, gamma, V, Wh)); /* warm-up: caches */
                PetscCall(GKExchanges(&c0));
                PetscCall(fn(A, usedinv ? dinv : NULL, k, theta, sigma, gamma, V, Wh));
                PetscCall(GKExchanges(&c1));
                PetscCall(GKMatPowersReference(A, usedinv ? dinv : NULL, k, theta, sigma, gamma, VR, Wr));
                for (PetscInt j = 1; j <= k; j++) {
                  PetscCall(GKRelDiff(Wh[j], Wr[j], NORM_INFINITY, &r));
                  rel = PetscMax(rel, r);
                  if (usedinv && !lean) {
                    PetscCall(GKRelDiff(Vh[j], Vr[j], NORM_INFINITY, &r));
                    rel = PetscMax(rel, r);
                  }
                }
                if (cmphost) { /* the host hook from the same start vectors */
                  Vec *VH = lean ? NULL : (usedinv ? Vhh : Whh);
                  PetscCall(GKCopyValues(Wr[0], Whh[0]));
                  if (usedinv) PetscCall(GKCopyValues(Vr[0], Vhh[0]));
                  PetscCall(fnh(Ah, usedinv ? dh : NULL, k, theta, sigma, gamma, VH, Whh));
                  for (PetscInt j = 1; j <= k; j++) {
                    PetscCall(GKRelDiff(Wh[j], Whh[j], NORM_INFINITY, &r));
                    hworst = PetscMax(hworst, r);
                    if (r > htol) nfail++;
                    if (usedinv && !lean) {
                      PetscCall(GKRelDiff(Vh[j], Vhh[j], NORM_INFINITY, &r));
                      hworst = PetscMax(hworst, r);
                      if (r > htol) nfail++;
                    }
                  }
                }
                expect = route == 0 ? 0 : (route == 1 ? 1 : k);
                ncase++;
                if (route == 0) nlocal++;
                else if (route == 1) nghost++;
                else nfall++;
                worst = PetscMax(worst, rel);
                if (!(rel <= tol) || c1 - c0 != expect) {
                  nfail++;
                  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL dim %" PetscInt_FMT " %s dof %" PetscInt_FMT " width %" PetscInt_FMT " %s k %" PetscInt_FMT " %s: max rel diff %g (tol %g), exchanges %" PetscInt_FMT " (expected %" PetscInt_FMT ")\n", dim, sts[b] ? "box" : "star", dof, sw, pers[f] ? "periodic" : "non-periodic", k, lean ? "lean" : (usedinv ? "dinv" : "no dinv"), (double)rel, (double)tol, c1 - c0, expect));
                }
              }
            }
            PetscCall(VecDestroyVecs(9, &Vh));
            PetscCall(VecDestroyVecs(9, &Wh));
            PetscCall(VecDestroyVecs(9, &Vr));
            PetscCall(VecDestroyVecs(9, &Wr));
            PetscCall(VecDestroy(&dinv));
            if (cmphost) {
              PetscCall(VecDestroyVecs(9, &Vhh));
              PetscCall(VecDestroyVecs(9, &Whh));
              PetscCall(VecDestroy(&dh));
              PetscCall(MatDestroy(&Ah));
            }
            PetscCall(MatDestroy(&A));
            PetscCall(DMDestroy(&da));
          }
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscRandomDestroy(&rcoef));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " cases (%" PetscInt_FMT " local, %" PetscInt_FMT " ghost region, %" PetscInt_FMT " fallback), %" PetscInt_FMT " failed; largest relative difference %g\n", ncase, nlocal, nghost, nfall, nfail, (double)worst));
  if (cmphost) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s hook against the host MATSGDIA hook: largest relative difference %g (tolerance %g)\n", mattype, (double)hworst, (double)htol));
  if (nerr) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " calls forced onto a ghost region that does not fit gave the documented error\n", nerr));
  PetscCheck(!nfail, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%" PetscInt_FMT " cases failed", nfail);
  PetscCheck(!experr || nerr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "-expect_forced_error: no call was forced onto a ghost region that does not fit");
  PetscCheck(!expghost || nghost, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "no case took the ghost-region route");
  PetscCheck(!expfall || nfall, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "no case took the fallback route");
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Solve(DM da, Mat A, Vec b, PetscInt s, PetscBool hook, Vec x, PetscInt *its, PetscInt *calls, PetscInt *scatters)
{
  KSP                ksp;
  PC                 pc;
  KSPConvergedReason reason;
  PetscInt           c0, c1, s0, s1;
  PetscBool          dev;

  PetscFunctionBegin;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, "cacg"));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
  PetscCall(KSPSetOptionsPrefix(ksp, hook ? "hook_" : "nohook_"));
  {
    char v[16];
    PetscCall(PetscSNPrintf(v, sizeof(v), "%" PetscInt_FMT, s));
    PetscCall(PetscOptionsSetValue(NULL, hook ? "-hook_ksp_cacg_s" : "-nohook_ksp_cacg_s", v));
    PetscCall(PetscOptionsSetValue(NULL, hook ? "-hook_ksp_cacg_matrix_powers" : "-nohook_ksp_cacg_matrix_powers", hook ? "1" : "0"));
  }
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &dev, MATSEQSGDIACUDA, MATMPISGDIACUDA, ""));
  PetscCall(GKEventCount(dev ? "SGDIAMatPowCUDA" : "SGDIAMatPowers", &c0));
  PetscCall(GKExchanges(&s0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(GKEventCount(dev ? "SGDIAMatPowCUDA" : "SGDIAMatPowers", &c1));
  PetscCall(GKExchanges(&s1));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "KSPCACG (s %" PetscInt_FMT ", hook %d) did not converge: %s", s, (int)hook, KSPConvergedReasons[reason]);
  PetscCall(KSPGetIterationNumber(ksp, its));
  *calls    = c1 - c0;
  *scatters = s1 - s0;
  PetscCall(KSPDestroy(&ksp));
  (void)da;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestKSP(void)
{
  PetscInt    dim = 2, n = 64, svals[4] = {4, 8}, ns = 2;
  DM          da;
  Mat         A;
  Vec         b, x1, x2;
  PetscRandom rnd;
  PetscBool   flg, gpu, expghost = PETSC_FALSE;
  char        mattype[64] = "sgdia";
  Mat         Ah = NULL;
  Vec         bh = NULL, xh = NULL;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_type", mattype, sizeof(mattype), NULL));
  PetscCall(PetscStrcmp(mattype, "sgdiacuda", &gpu));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_ghost", &expghost, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dim", &dim, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-s", svals, &ns, &flg));
  if (!flg) ns = 2;
  if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, &da));
  if (gpu) PetscCall(DMSetVecType(da, VECCUDA));
  PetscCall(DMSetMatType(da, mattype));
  PetscCall(DMSetUp(da));
  PetscCall(DMCreateMatrix(da, &A));
  PetscCall(MatSetFromOptions(A)); /* -mat_sgdia_mpk_ghost_region */
  PetscCall(GKFillPoisson(da, A));
  PetscCall(MatCreateVecs(A, &x1, &b));
  PetscCall(VecDuplicate(x1, &x2));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(VecSetRandom(b, rnd));
  if (gpu) { /* the same solve on the host MATSGDIA: the device hook must give its iterations and solution */
    PetscCall(MatConvert(A, MATSGDIA, MAT_INITIAL_MATRIX, &Ah));
    PetscCall(MatCreateVecs(Ah, &xh, &bh));
    PetscCall(GKCopyValues(b, bh));
  }
  for (PetscInt i = 0; i < ns; i++) {
    PetscInt  its1, its2, calls1, calls2, sc1, sc2;
    PetscReal nd, nx;

    PetscCall(Solve(da, A, b, svals[i], PETSC_TRUE, x1, &its1, &calls1, &sc1));
    PetscCall(Solve(da, A, b, svals[i], PETSC_FALSE, x2, &its2, &calls2, &sc2));
    PetscCall(VecAXPY(x2, -1.0, x1));
    PetscCall(VecNorm(x2, NORM_2, &nd));
    PetscCall(VecNorm(x1, NORM_2, &nx));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dim %" PetscInt_FMT " n %" PetscInt_FMT " s %" PetscInt_FMT ": iterations %" PetscInt_FMT " (kernel) %" PetscInt_FMT " (MatMult); kernel calls %" PetscInt_FMT ", %" PetscInt_FMT "; neighbour exchanges %" PetscInt_FMT " vs %" PetscInt_FMT "; solutions differ by %g relative\n", dim, n, svals[i], its1, its2, calls1, calls2, sc1, sc2, (double)(nd / nx)));
    PetscCheck(its1 == its2, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "iteration counts differ: %" PetscInt_FMT " with the kernel, %" PetscInt_FMT " without", its1, its2);
    PetscCheck(nd <= 1e-10 * nx, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "solutions differ by %g relative", (double)(nd / nx));
    PetscCheck(calls1 > 0 && calls2 == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the kernel was called %" PetscInt_FMT " times with the hook, %" PetscInt_FMT " without", calls1, calls2);
    PetscCheck(!expghost || sc1 < sc2, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "-expect_ghost: %" PetscInt_FMT " neighbour exchanges with the kernel, not fewer than the %" PetscInt_FMT " without", sc1, sc2);
    if (gpu) {
      PetscInt  itsh, callsh, sch;
      PetscReal rh;
      PetscCall(Solve(da, Ah, bh, svals[i], PETSC_TRUE, xh, &itsh, &callsh, &sch));
      PetscCall(GKRelDiff(x1, xh, NORM_2, &rh));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  host MATSGDIA with its hook: iterations %" PetscInt_FMT " (device %" PetscInt_FMT "), neighbour exchanges %" PetscInt_FMT " (device %" PetscInt_FMT "), solutions differ by %g relative\n", itsh, its1, sch, sc1, (double)rh));
      PetscCheck(itsh == its1, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "iteration counts differ: %" PetscInt_FMT " on the device, %" PetscInt_FMT " on the host", its1, itsh);
      PetscCheck(rh <= 1e-10, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "device and host solutions differ by %g relative", (double)rh);
      PetscCheck(callsh > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the host kernel was not called");
    }
  }
  PetscCall(VecDestroy(&bh));
  PetscCall(VecDestroy(&xh));
  PetscCall(MatDestroy(&Ah));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x1));
  PetscCall(VecDestroy(&x2));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char      mode[32] = "powers";
  PetscBool isksp;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscLogDefaultBegin()); /* to count exchanges and kernel calls; harmless under -log_view */
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mode", mode, sizeof(mode), NULL));
  PetscCall(PetscStrcmp(mode, "ksp", &isksp));
  if (isksp) PetscCall(TestKSP());
  else PetscCall(TestPowers());
  PetscCall(PetscFinalize());
  return 0;
}
