static const char help[] = "KSPCACG's run-time tuner (s, plain CG steps, kernel or products) with an injected timer, against KSPCG.\n"
                           "  -dim <2,3> -n <m>    the DMDA Poisson problem (GKFillPoisson), Jacobi\n"
                           "  -fast <sstep,cg,s1,s2,products>  the candidate the fake timer makes fastest\n"
                           "  -expect <s,b,m>      the tuner's final choice: s, basis (0 kernel, 1 products), method (0 sstep, 1 cg)\n"
                           "  -solves <k>          KSPSolve calls (the search may span them; default 3)\n"
                           "  -expect_timed <n>    timed calls in the run (-1: any; -2: at least one)\n"
                           "  -expect_products     the last solve built its bases by products (a kernel existed)\n"
                           "  -real_timer          the clocks, not the fake timer (on a GPU: whatever is fastest there)\n";

/*
   The fake timer gives each outer iteration a time per CG step from the candidate's knobs, so each line knows the
   right choice. Every solve must still converge to KSPCG's solution (1e-6 relative) in about KSPCG's iterations,
   whatever candidate the tuner tried on the way: the candidates change the speed, never the answer.
*/
#include <petscksp.h>
#include "gktest.h"
#include "gpukittune.h"

typedef struct {
  char fast[16];
} Fake;

static PetscErrorCode FakeTimer(void *ctx, const char kernel[], const PetscInt v[], PetscReal *ms)
{
  Fake     *f = (Fake *)ctx;
  PetscBool cg, s1, s2, prod, mine;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(kernel, "CACGStep", &mine));
  *ms = 1.0;
  if (!mine) PetscFunctionReturn(PETSC_SUCCESS); /* another kernel's tuner (a matrix powers kernel): all the same */
  PetscCall(PetscStrcmp(f->fast, "cg", &cg));
  PetscCall(PetscStrcmp(f->fast, "s1", &s1));
  PetscCall(PetscStrcmp(f->fast, "s2", &s2));
  PetscCall(PetscStrcmp(f->fast, "products", &prod));
  /* v: s, basis (0 kernel, 1 products), method (0 sstep, 1 cg); the model is a time per CG step, times the s steps of
     the call (plain steps run in blocks of s too) */
  if (cg) *ms = v[2] == 1 ? 0.5 : 1.0;
  else if (s1 || s2) *ms = v[2] == 1 ? 1.0 : 0.5 + 0.15 * PetscAbsReal(PetscLog2Real((PetscReal)v[0] / (s1 ? 1.0 : 2.0))); /* a bowl around the target */
  else if (prod) *ms = v[2] == 1 ? 1.0 : (v[1] == 1 ? 0.5 : 0.8);
  else *ms = v[2] == 1 ? 2.0 : 1.0 / (PetscReal)v[0]; /* sstep: the largest s */
  *ms *= (PetscReal)v[0];
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  DM          da;
  Mat         A;
  Vec         b, x, xcg;
  KSP         ksp, ref;
  PC          pc;
  Fake        fake = {"sstep"};
  PetscInt    dim = 2, n = 64, solves = 3, itcg, its, expect[3], ne = 3, expect_timed = -1, timed;
  PetscBool   eset, real = PETSC_FALSE, eprod = PETSC_FALSE;
  GpukitTuner t;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dim", &dim, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-solves", &solves, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_timed", &expect_timed, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-fast", fake.fast, sizeof(fake.fast), NULL));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-expect", expect, &ne, &eset));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-real_timer", &real, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_products", &eprod, NULL));
  if (!real) PetscCall(GpukitTuneSetTestTimer(FakeTimer, &fake));

  if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(DMCreateMatrix(da, &A));
  PetscCall(GKFillPoisson(da, A));
  PetscCall(DMCreateGlobalVector(da, &b));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecDuplicate(b, &xcg));
  PetscCall(VecSet(b, 1.0));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ref)); /* the reference: KSPCG, Jacobi */
  PetscCall(KSPSetOperators(ref, A, A));
  PetscCall(KSPSetType(ref, KSPCG));
  PetscCall(KSPGetPC(ref, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ref, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
  PetscCall(KSPSolve(ref, b, xcg));
  PetscCall(KSPGetIterationNumber(ref, &itcg));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCACG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
  PetscCall(KSPSetFromOptions(ksp));
  for (PetscInt k = 0; k < solves; k++) {
    KSPConvergedReason reason;
    KSPCACGStatistics  st;
    PetscCall(VecSet(x, 0.0));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCall(KSPGetIterationNumber(ksp, &its));
    PetscCall(KSPCACGGetStatistics(ksp, &st));
    PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "FAIL: solve %" PetscInt_FMT " did not converge (%s)", k, KSPConvergedReasons[reason]);
    PetscCheck(PetscAbsInt(its - itcg) <= PetscMax(2, itcg / 10), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "FAIL: solve %" PetscInt_FMT ": %" PetscInt_FMT " iterations, KSPCG %" PetscInt_FMT, k, its, itcg);
    PetscCall(GKCheckVecClose(x, xcg, 1e-6, "KSPCACG with the tuner against KSPCG"));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "solve %" PetscInt_FMT ": %" PetscInt_FMT " iterations (KSPCG %" PetscInt_FMT "), %" PetscInt_FMT " outer, %" PetscInt_FMT " plain steps, %" PetscInt_FMT " bases by products, s at the end %" PetscInt_FMT "\n", k, its, itcg, st.outer, st.plainsteps, st.products, st.s));
  }
  PetscCall(GpukitTuneFind((PetscObject)ksp, "CACGStep", &t));
  if (eset) {
    const PetscInt *v;
    PetscBool       done;
    PetscCheck(t, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "FAIL: KSPCACG made no tuner");
    PetscCall(GpukitTunerGetConfig(t, &v, &done));
    PetscCheck(done, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "FAIL: the tuner had not chosen after %" PetscInt_FMT " solves", solves);
    PetscCheck(v[0] == expect[0] && v[1] == expect[1] && v[2] == expect[2], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "FAIL: the tuner chose s %" PetscInt_FMT " basis %" PetscInt_FMT " method %" PetscInt_FMT ", expected %" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT, v[0], v[1], v[2], expect[0], expect[1], expect[2]);
    if (eprod) {
      KSPCACGStatistics st;
      PetscCall(KSPCACGGetStatistics(ksp, &st));
      PetscCheck(st.products == st.outer && st.outer > 0 && st.mpk == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "FAIL: products chosen, but the last solve built %" PetscInt_FMT " of %" PetscInt_FMT " bases by products (%" PetscInt_FMT " by the kernel)", st.products, st.outer, st.mpk);
    }
    if (v[2] == 1) { /* the last solve ran plain CG steps only */
      KSPCACGStatistics st;
      PetscCall(KSPCACGGetStatistics(ksp, &st));
      PetscCheck(st.outer == 0 && st.plainsteps > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "FAIL: plain CG chosen, but the last solve ran %" PetscInt_FMT " outer iterations and %" PetscInt_FMT " plain steps", st.outer, st.plainsteps);
    }
  }
  PetscCall(GpukitTuneGetCounts(&timed, NULL, NULL, NULL));
  if (expect_timed == -2) PetscCheck(timed > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "FAIL: no timed call");
  else if (expect_timed >= 0) PetscCheck(timed == expect_timed, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "FAIL: %" PetscInt_FMT " timed calls, expected %" PetscInt_FMT, timed, expect_timed);
  PetscCall(KSPView(ksp, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(KSPDestroy(&ref));
  PetscCall(MatDestroy(&A));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&xcg));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS\n"));
  PetscCall(PetscFinalize());
  return 0;
}
