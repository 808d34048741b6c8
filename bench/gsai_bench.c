static const char help[] = "PCGSAI benchmark: set-up time of gpukit's PCGSAI (per stage) against hypre's ParaSails with the same pattern, and\n"
                           "time to solution of KSPBCGS with PCGSAI, PCJACOBI and no preconditioner, on one matrix, one MPI rank.\n\n"
                           "  -f file.mtx[.gz]         a Matrix Market matrix (tests/pc/gsaiprob.h reads it), or\n"
                           "  -da 2|3 -n n [-beta b]   the 5-/7-point Laplacian on an n^dim DMDA, plus upwind convection beta (1, 1/2, 1/4)\n"
                           "  -mat_type t              aij (host, default) or aijcusparse (GPU, VECCUDA vectors); any other host type is allowed\n"
                           "  -batches b               timed set-ups (and solves) of each kind, the fastest is reported (default 3)\n"
                           "  -parasails               also time -pc_type hypre -pc_hypre_type parasails (PETSc with hypre only) with the pattern\n"
                           "                           of A: thresh 0, nlevels 0, filter 0, sym nonsymmetric (SPD with -pc_gsai_type spd); the\n"
                           "                           options -parasails_pc_hypre_parasails_* override these (bench/gsai.sh passes\n"
                           "                           ParaSails's own defaults, thresh 0.1, nlevels 1, filter 0.1, for the adaptive pattern);\n"
                           "                           the record's \"parasails_params\" says which were used\n"
                           "  -solve <bool>            time the solves (default true); -solvers gsai,jacobi,none[,parasails] which ones\n"
                           "                           (default gsai,jacobi,none, plus parasails with -parasails)\n"
                           "  -rtol r -max_it k        KSPBCGS tolerance (default 1e-7) and iteration limit (default 10000)\n"
                           "  -side left|right         preconditioning side of every solve (default left; PCGSAISetSide() follows it)\n"
                           "  -check_max_rows m        check M against Jacobi (below) only up to m rows (default 3000000)\n"
                           "  -json path               append one JSON record to this file (one record a line); it holds \"pattern\", the\n"
                           "                           PCGSAI pattern the set-up used, and for the adaptive pattern its counts\n"
                           "                           (PCGSAIGetAdaptiveInfo(): \"adaptive_met\", \"adaptive_capped\", \"adaptive_ratio\",\n"
                           "                           \"adaptive_maxres\") and settings (\"adaptive_steps\", \"adaptive_per_step\", \"adaptive_tol\")\n"
                           "  -label word              appended to the case name: \"<case> <word>\" (e.g. -label adaptive: \"sherman5 adaptive\")\n"
                           "  -cpu_time                time the set-ups by the process's CPU time, not wall-clock time (host only: on a\n"
                           "                           machine shared with other jobs, the time slices given to others do not count)\n"
                           "  -pc_gsai_*               PCGSAI's options (type, pattern, ...); default: general, pattern of A\n\n"
                           "Before anything is timed: M has no NaN; with the pattern of A and no cap, nnz(M) is the nnz of the pattern\n"
                           "(of the lower triangle for the spd type) plus the missing diagonal entries; for the general type ||MA - I||_F\n"
                           "(right: ||AM - I||_F) is at most that of Jacobi's D^-1 (which lies in the pattern: GSAI's minimum cannot be\n"
                           "larger), for the spd type diag(G A G^T) = 1 (to 1e-8), checked on host copies of A and M. Every converged\n"
                           "GSAI solve must have a true relative residual below 100 rtol. A set-up is timed on a new PC each batch (one\n"
                           "untimed warm-up first), between device synchronisations; the stage times are PCGSAIGetSetUpTimes() of the\n"
                           "fastest batch. A solve is timed after an untimed one (which gives the iterations); a solve that does not\n"
                           "converge is not timed again. b = A x with x random (fixed seed), x0 = 0.\n"
                           "Environment: GPUKIT_COMMIT, GPUKIT_SOURCE_STATE, GPUKIT_HOST, GPUKIT_MACHINE, GPUKIT_DATE, GPUKIT_LOAD go into the\n"
                           "JSON record; GPUKIT_DEVICE names the GPU where the program cannot ask CUDA.\n";

#include <petscksp.h>
#include <petscgpukit.h>
#include <petsctime.h>
#include <time.h>
#include "gpukitcompat.h"
#include "gkbench.h"
#include "../tests/pc/gsaiprob.h"
#if defined(GK_BENCH_CUDA)
  #include <petscdevice_cuda.h>
#endif

enum {
  S_GSAI,
  S_JACOBI,
  S_NONE,
  S_PARASAILS,
  S_N
};
static const char *const SolverNames[S_N] = {"gsai", "jacobi", "none", "parasails"};

typedef struct {
  PetscBool run, conv;
  PetscInt  its;
  PetscReal t;      /* seconds, fastest timed solve (the untimed one when it did not converge) */
  PetscReal relres; /* true relative residual of the first solve */
} SolveResult;

/* a number field in milliseconds (from seconds), or null when v < 0 */
static PetscErrorCode JSONMs(FILE *fp, const char *key, PetscReal v)
{
  PetscFunctionBegin;
  if (v < 0) PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"%s\": null, ", key));
  else PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"%s\": %.6g, ", key, 1e3 * (double)v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ||C - I||_F of a host AIJ matrix, one rank */
static PetscErrorCode FrobeniusMinusIdentity(Mat C, PetscReal *f)
{
  PetscInt rs, re;
  double   s = 0.0;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(C, &rs, &re));
  for (PetscInt r = rs; r < re; r++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscBool          diag = PETSC_FALSE;
    PetscCall(MatGetRow(C, r, &nc, &cols, &vals));
    for (PetscInt e = 0; e < nc; e++) {
      PetscReal v = PetscRealPart(vals[e]);
      if (cols[e] == r) {
        diag = PETSC_TRUE;
        v -= 1.0;
      }
      s += (double)(v * v);
    }
    if (!diag) s += 1.0;
    PetscCall(MatRestoreRow(C, r, &nc, &cols, &vals));
  }
  *f = (PetscReal)PetscSqrtReal((PetscReal)s);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   The checks before timing (host copies Ah of A and Mh of M or G): no NaN; nnz of the default pattern; the general
   type's Frobenius residual at most Jacobi's; the spd type's diag(G A G^T) = 1. Returns the residual norms.
*/
static PetscErrorCode CheckM(PC pc, Mat A, PCGSAIType type, PCSide side, PetscInt nnzM, PetscReal *fgsai, PetscReal *fjac)
{
  Mat               M, Ah, Mh, C;
  PCGSAIPatternType pattern;
  PetscInt          maxnnz, rs, re, expect = 0;
  PetscReal         norm;

  PetscFunctionBegin;
  *fgsai = *fjac = -1;
  PetscCall(PCGSAIGetMatrix(pc, &M));
  PetscCall(PCGSAIGetPattern(pc, &pattern));
  PetscCall(PCGSAIGetMaxNnz(pc, &maxnnz));
  PetscCall(MatConvert(A, MATSEQAIJ, MAT_INITIAL_MATRIX, &Ah));
  PetscCall(MatConvert(M, MATSEQAIJ, MAT_INITIAL_MATRIX, &Mh));
  PetscCall(MatNorm(Mh, NORM_FROBENIUS, &norm));
  PetscCheck(!PetscIsInfOrNanReal(norm), PETSC_COMM_SELF, PETSC_ERR_PLIB, "check failed: M holds Inf or NaN");
  PetscCall(MatGetOwnershipRange(Ah, &rs, &re));
  for (PetscInt r = rs; r < re; r++) {
    PetscInt        nc;
    const PetscInt *cols;
    PetscBool       diag = PETSC_FALSE;
    PetscCall(MatGetRow(Ah, r, &nc, &cols, NULL));
    for (PetscInt e = 0; e < nc; e++) {
      if (type == PCGSAI_GENERAL || cols[e] <= r) expect++;
      if (cols[e] == r) diag = PETSC_TRUE;
    }
    if (!diag) expect++;
    PetscCall(MatRestoreRow(Ah, r, &nc, &cols, NULL));
  }
  if (pattern == PCGSAI_PATTERN_A && maxnnz == 0)
    PetscCheck(nnzM == expect, PETSC_COMM_SELF, PETSC_ERR_PLIB, "check failed: nnz(M) = %" PetscInt_FMT ", but the pattern of A (with the diagonal%s) has %" PetscInt_FMT, nnzM, type == PCGSAI_SPD ? ", lower triangle" : "", expect);
  if (type == PCGSAI_GENERAL) {
    Mat J;
    Vec d;

    PetscCall(side == PC_RIGHT ? MatMatMult(Ah, Mh, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C) : MatMatMult(Mh, Ah, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
    PetscCall(FrobeniusMinusIdentity(C, fgsai));
    PetscCall(MatDestroy(&C));
    /* Jacobi: D^-1 (1 where a_kk = 0, as PCJACOBI does), which lies in the pattern of M */
    PetscCall(MatDuplicate(Ah, MAT_COPY_VALUES, &J));
    PetscCall(MatCreateVecs(Ah, &d, NULL));
    PetscCall(MatGetDiagonal(Ah, d));
    {
      PetscScalar *a;
      PetscInt     n;
      PetscCall(VecGetLocalSize(d, &n));
      PetscCall(VecGetArray(d, &a));
      for (PetscInt i = 0; i < n; i++) a[i] = a[i] == 0.0 ? 1.0 : 1.0 / a[i];
      PetscCall(VecRestoreArray(d, &a));
    }
    PetscCall(side == PC_RIGHT ? MatDiagonalScale(J, NULL, d) : MatDiagonalScale(J, d, NULL));
    PetscCall(FrobeniusMinusIdentity(J, fjac));
    PetscCall(VecDestroy(&d));
    PetscCall(MatDestroy(&J));
    PetscCheck(*fgsai <= *fjac * (1.0 + 1e-8) + 1e-12, PETSC_COMM_SELF, PETSC_ERR_PLIB, "check failed: ||%s - I||_F = %g for GSAI exceeds Jacobi's %g, whose D^-1 lies in the pattern", side == PC_RIGHT ? "AM" : "MA", (double)*fgsai, (double)*fjac);
  } else {
    /* diag(G A G^T)_k = sum_j (GA)_kj g_kj: 1 where A is symmetric (the spd type reads only the lower triangle) */
    PetscReal worst = 0.0;
    PetscBool sym;
    PetscCall(MatIsSymmetric(Ah, 0.0, &sym));
    if (!sym) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "check: A is not symmetric; diag(G A G^T) = 1 holds only for the symmetric matrix of its lower triangle: not checked\n"));
      PetscCall(MatDestroy(&Mh));
      PetscCall(MatDestroy(&Ah));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(MatMatMult(Mh, Ah, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
    for (PetscInt r = rs; r < re; r++) {
      PetscInt           n1, n2, p = 0;
      const PetscInt    *c1, *c2;
      const PetscScalar *v1, *v2;
      PetscScalar        s = 0.0;
      PetscCall(MatGetRow(C, r, &n1, &c1, &v1));
      PetscCall(MatGetRow(Mh, r, &n2, &c2, &v2));
      for (PetscInt q = 0; q < n2; q++) {
        while (p < n1 && c1[p] < c2[q]) p++;
        if (p < n1 && c1[p] == c2[q]) s += v1[p] * v2[q];
      }
      worst = PetscMax(worst, PetscAbsScalar(s - 1.0));
      PetscCall(MatRestoreRow(Mh, r, &n2, &c2, &v2));
      PetscCall(MatRestoreRow(C, r, &n1, &c1, &v1));
    }
    PetscCall(MatDestroy(&C));
    PetscCheck(worst <= 1e-8, PETSC_COMM_SELF, PETSC_ERR_PLIB, "check failed: diag(G A G^T) differs from 1 by %g", (double)worst);
    *fgsai = worst;
  }
  PetscCall(MatDestroy(&Mh));
  PetscCall(MatDestroy(&Ah));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a new PC of the kind given, on A; gsai and parasails read their options */
static PetscErrorCode CreatePC(Mat A, PetscInt kind, PCSide side, PetscBool sideset, PCGSAIType gtype, PC *pc)
{
  PetscFunctionBegin;
  PetscCall(PCCreate(PETSC_COMM_WORLD, pc));
  PetscCall(PCSetOperators(*pc, A, A));
  switch (kind) {
  case S_GSAI:
    PetscCall(PCSetType(*pc, PCGSAI));
    /* the benchmark's baseline (ParaSails with the same pattern): the pattern of A, uncapped, general unless
       -pc_gsai_type says otherwise; PCGSAI's own defaults (auto type, budgeted power pattern) are measured with
       stock KSP ex10 (bench/gsai.sh ex10, docs/gsai.md) */
    PetscCall(PCGSAISetType(*pc, PCGSAI_GENERAL));
    PetscCall(PCGSAISetPattern(*pc, PCGSAI_PATTERN_A));
    PetscCall(PCGSAISetMaxNnz(*pc, 0));
    PetscCall(PCSetFromOptions(*pc));
    if (sideset) PetscCall(PCGSAISetSide(*pc, side));
    break;
  case S_JACOBI:
    PetscCall(PCSetType(*pc, PCJACOBI));
    break;
  case S_NONE:
    PetscCall(PCSetType(*pc, PCNONE));
    break;
  default:
#if PetscDefined(HAVE_HYPRE)
    PetscCall(PCSetOptionsPrefix(*pc, "parasails_"));
    PetscCall(PCSetType(*pc, PCHYPRE));
    PetscCall(PCHYPRESetType(*pc, "parasails"));
    PetscCall(PCSetFromOptions(*pc));
#else
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_SUP, "ParaSails needs a PETSc configured with hypre; this one has none");
#endif
    break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* fastest of batches set-ups on a new PC each (after one untimed); *pcout: the untimed PC, set up, for checks */
/* -cpu_time: the set-ups are timed by the process's CPU time */
static PetscBool UseCPUTime = PETSC_FALSE;

static PetscErrorCode SetUpClock(PetscLogDouble *t)
{
  PetscFunctionBegin;
  if (UseCPUTime) {
    struct timespec ts;
    PetscCheck(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0, PETSC_COMM_SELF, PETSC_ERR_SYS, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed: run without -cpu_time");
    *t = (PetscLogDouble)ts.tv_sec + 1e-9 * (PetscLogDouble)ts.tv_nsec;
  } else PetscCall(PetscTime(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TimeSetUp(Mat A, PetscInt kind, PCSide side, PetscBool sideset, PCGSAIType gtype, PetscInt batches, PetscBool gpu, PC *pcout, PetscReal *tbest, PetscReal stages[4])
{
  PetscFunctionBegin;
  PetscCall(CreatePC(A, kind, side, sideset, gtype, pcout));
  PetscCall(PCSetUp(*pcout));
  PetscCall(GKDeviceSynchronize(gpu));
  *tbest = PETSC_MAX_REAL;
  for (PetscInt b = 0; b < batches; b++) {
    PC             pc;
    PetscLogDouble t0, t1;
    PetscCall(CreatePC(A, kind, side, sideset, gtype, &pc));
    PetscCall(GKDeviceSynchronize(gpu));
    PetscCall(SetUpClock(&t0));
    PetscCall(PCSetUp(pc));
    PetscCall(GKDeviceSynchronize(gpu));
    PetscCall(SetUpClock(&t1));
    if ((PetscReal)(t1 - t0) < *tbest) {
      *tbest = (PetscReal)(t1 - t0);
      if (kind == S_GSAI) PetscCall(PCGSAIGetSetUpTimes(pc, NULL, &stages[0], &stages[1], &stages[2], &stages[3]));
    }
    PetscCall(PCDestroy(&pc));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TimeSolve(Mat A, Vec b, PetscInt kind, PCSide side, PetscBool sideset, PCGSAIType gtype, PetscReal rtol, PetscInt maxit, PetscInt batches, PetscBool gpu, SolveResult *res)
{
  KSP                ksp;
  PC                 pc;
  Vec                x, r;
  KSPConvergedReason reason;
  PetscReal          nb, nr;
  PetscLogDouble     t0, t1;

  PetscFunctionBegin;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPBCGS));
  PetscCall(KSPSetTolerances(ksp, rtol, PETSC_DEFAULT, PETSC_DEFAULT, maxit));
  PetscCall(KSPSetPCSide(ksp, side));
  PetscCall(CreatePC(A, kind, side, sideset, gtype, &pc));
  PetscCall(KSPSetPC(ksp, pc));
  PetscCall(PCDestroy(&pc));
  PetscCall(KSPSetUp(ksp));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecDuplicate(b, &r));
  /* untimed: iterations, convergence, true residual */
  PetscCall(VecSet(x, 0.0));
  PetscCall(GKDeviceSynchronize(gpu));
  PetscCall(PetscTime(&t0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(GKDeviceSynchronize(gpu));
  PetscCall(PetscTime(&t1));
  res->t = (PetscReal)(t1 - t0);
  PetscCall(KSPGetIterationNumber(ksp, &res->its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  res->conv = reason > 0 ? PETSC_TRUE : PETSC_FALSE;
  res->run  = PETSC_TRUE;
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAXPY(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &nr));
  PetscCall(VecNorm(b, NORM_2, &nb));
  res->relres = nr / nb;
  if (kind == S_GSAI && res->conv)
    PetscCheck(res->relres <= 100 * rtol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "check failed: the GSAI solve converged (%s) but its true relative residual is %g > 100 rtol", KSPConvergedReasons[reason], (double)res->relres);
  if (res->conv) {
    for (PetscInt bt = 0; bt < batches; bt++) {
      PetscCall(VecSet(x, 0.0));
      PetscCall(GKDeviceSynchronize(gpu));
      PetscCall(PetscTime(&t0));
      PetscCall(KSPSolve(ksp, b, x));
      PetscCall(GKDeviceSynchronize(gpu));
      PetscCall(PetscTime(&t1));
      if (bt == 0 || (PetscReal)(t1 - t0) < res->t) res->t = (PetscReal)(t1 - t0);
    }
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&r));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat               A;
  DM                da = NULL;
  Vec               b, xs;
  PetscRandom       rnd;
  PC                pc;
  PCGSAIType        gtype;
  PCSide            side = PC_LEFT;
  SolveResult       sol[S_N];
  char              label[64] = "", psparams[256] = "", pssym[32] = "", file[PETSC_MAX_PATH_LEN] = "", mattype[64] = "aij", json[PETSC_MAX_PATH_LEN] = "", casename[PETSC_MAX_PATH_LEN], problem[32] = "file", version[64], device[256] = "cpu", sidename[16] = "left";
  char             *names[S_N];
  PetscInt          dim = 0, n = 64, batches = 3, maxit = 10000, rows, nnzM = 0, nfall = 0, nsolvers = S_N, checkmax = 3000000;
  PCGSAIPatternType pused = PCGSAI_PATTERN_A;
  PetscInt          adsteps = 0, adper = 0, admet = -1, adcapped = -1, usedmax = 0;
  PetscReal         adtol = 0, adratio = -1, admaxres = -1;
  PetscReal         beta = 0.0, rtol = 1e-7, tsetup = -1, stages[4] = {0, 0, 0, 0}, tps = -1, tconv = -1, fgsai = -1, fjac = -1;
  PetscBool         gpu, parasails = PETSC_FALSE, solve = PETSC_TRUE, hasjson, ondevice = PETSC_FALSE, set, sideset;
  PetscMPIInt       size;
  MatInfo           info;
  const char       *envdate = getenv("GPUKIT_DATE");
  MatType           atype;
  PetscLogDouble    t0, t1;

  PetscFunctionBeginUser;
  (void)GKRandomMatrix; /* tests/pc/gsaiprob.h's third problem, not used here */
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCheck(size == 1, PETSC_COMM_WORLD, PETSC_ERR_SUP, "gsai_bench runs on one MPI rank (the comparison is with ParaSails on one core)");
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "PCGSAI benchmark", "bench");
  PetscCall(PetscOptionsString("-f", "Matrix Market file", "bench", file, file, sizeof(file), NULL));
  PetscCall(PetscOptionsInt("-da", "DMDA dimension, 2 or 3 (instead of -f)", "bench", dim, &dim, NULL));
  PetscCall(PetscOptionsInt("-n", "DMDA grid points per dimension", "bench", n, &n, NULL));
  PetscCall(PetscOptionsReal("-beta", "DMDA convection strength (0: Poisson)", "bench", beta, &beta, NULL));
  PetscCall(PetscOptionsString("-mat_type", "aij or aijcusparse", "bench", mattype, mattype, sizeof(mattype), NULL));
  PetscCall(PetscOptionsInt("-batches", "Timed batches (the fastest is reported)", "bench", batches, &batches, NULL));
  PetscCall(PetscOptionsBool("-parasails", "Also time hypre's ParaSails", "bench", parasails, &parasails, NULL));
  PetscCall(PetscOptionsBool("-solve", "Time the solves", "bench", solve, &solve, NULL));
  PetscCall(PetscOptionsStringArray("-solvers", "Which solves: gsai, jacobi, none, parasails", "bench", names, &nsolvers, &set));
  PetscCall(PetscOptionsReal("-rtol", "KSPBCGS relative tolerance", "bench", rtol, &rtol, NULL));
  PetscCall(PetscOptionsInt("-max_it", "KSPBCGS iteration limit", "bench", maxit, &maxit, NULL));
  PetscCall(PetscOptionsString("-side", "Preconditioning side, left or right", "bench", sidename, sidename, sizeof(sidename), &sideset));
  PetscCall(PetscOptionsInt("-check_max_rows", "Largest matrix whose M is checked against Jacobi", "bench", checkmax, &checkmax, NULL));
  PetscCall(PetscOptionsString("-json", "Append a JSON record (one a line) to this file", "bench", json, json, sizeof(json), &hasjson));
  PetscCall(PetscOptionsString("-label", "Word appended to the case name", "bench", label, label, sizeof(label), NULL));
  PetscCall(PetscOptionsBool("-cpu_time", "Time the set-ups by the process's CPU time", "bench", UseCPUTime, &UseCPUTime, NULL));
  PetscOptionsEnd();
  PetscCheck(file[0] || dim == 2 || dim == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "Give a matrix: -f file.mtx[.gz], or -da 2|3 -n n [-beta b]");
  PetscCheck(!file[0] || !dim, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "Give -f or -da, not both");
  PetscCheck(batches >= 1 && n >= 3 && maxit >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-batches and -max_it must be at least 1, -n at least 3");
  {
    PetscBool l, r;
    PetscCall(PetscStrcmp(sidename, "left", &l));
    PetscCall(PetscStrcmp(sidename, "right", &r));
    PetscCheck(l || r, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-side must be left or right, not %s", sidename);
    side = r ? PC_RIGHT : PC_LEFT;
  }
#if !PetscDefined(HAVE_HYPRE)
  PetscCheck(!parasails, PETSC_COMM_WORLD, PETSC_ERR_SUP, "-parasails needs a PETSc configured with hypre; this one has none");
#endif
  for (PetscInt s = 0; s < S_N; s++) {
    sol[s].run = sol[s].conv = PETSC_FALSE;
    sol[s].its                = -1;
    sol[s].t = sol[s].relres = -1;
  }
  if (!set) {
    nsolvers = parasails ? 4 : 3;
    for (PetscInt s = 0; s < nsolvers; s++) PetscCall(PetscStrallocpy(SolverNames[s], &names[s]));
  }
  {
    PetscBool c1;
    PetscCall(PetscStrcmp(mattype, MATAIJCUSPARSE, &c1));
    gpu = c1;
    if (!gpu) PetscCall(PetscStrcmp(mattype, MATSEQAIJCUSPARSE, &gpu));
  }
#if !defined(GK_BENCH_CUDA)
  PetscCheck(!gpu, PETSC_COMM_WORLD, PETSC_ERR_SUP, "-mat_type %s runs on a GPU; this build of the benchmark has none: build it against a PETSc 3.19 or later configured with CUDA", mattype);
#endif
  if (gpu) PetscCall(GKDeviceName(device, sizeof(device)));
  PetscCheck(!gpu || !UseCPUTime, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-cpu_time measures host set-ups only; the device set-up is timed by the wall clock (run without -cpu_time)");

  /* the problem */
  PetscCall(PetscTime(&t0));
  if (file[0]) {
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    char       *dot;
    PetscCall(PetscStrncpy(casename, base, sizeof(casename)));
    if ((dot = strstr(casename, ".mtx"))) *dot = 0;
    PetscCall(GKLoadMatrixMarket(PETSC_COMM_WORLD, file, mattype, &A));
  } else {
    PetscCall(PetscOptionsSetValue(NULL, "-dm_mat_type", mattype));
    if (gpu) PetscCall(PetscOptionsSetValue(NULL, "-dm_vec_type", "cuda"));
    PetscCall(GKDMDAOperator(PETSC_COMM_WORLD, dim, n, beta, &da, &A));
    if (beta == 0.0) {
      PetscCall(PetscStrncpy(problem, "poisson", sizeof(problem)));
      PetscCall(PetscSNPrintf(casename, sizeof(casename), "poisson%" PetscInt_FMT "d_n%" PetscInt_FMT, dim, n));
    } else {
      PetscCall(PetscStrncpy(problem, "convdiff", sizeof(problem)));
      /* snprintf: PetscSNPrintf() would print 100 as "100." */
      snprintf(casename, sizeof(casename), "convdiff%dd_n%d_b%g", (int)dim, (int)n, (double)beta);
    }
  }
  if (label[0]) {
    PetscCheck(!strchr(label, '"') && !strchr(label, '\\'), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-label must not hold quotes or backslashes (it goes into the JSON record): %s", label);
    PetscCall(PetscStrlcat(casename, " ", sizeof(casename)));
    PetscCall(PetscStrlcat(casename, label, sizeof(casename)));
  }
  PetscCall(PetscTime(&t1));
  PetscCall(MatGetSize(A, &rows, NULL));
  PetscCall(MatGetType(A, &atype));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %" PetscInt_FMT " rows, %.0f nonzeros, %s, assembled in %.2f s\n", casename, rows, info.nz_used, atype, (double)(t1 - t0)));
  PetscCall(MatCreateVecs(A, &xs, &b));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 20261122));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(xs, rnd));
  PetscCall(MatMult(A, xs, b)); /* also moves A to the device */
  PetscCall(PetscGetVersion(version, sizeof(version)));

  /* (a) PCGSAI set-up, checked first */
  PetscCall(TimeSetUp(A, S_GSAI, side, sideset, PCGSAI_GENERAL, batches, gpu, &pc, &tsetup, stages));
  PetscCall(PCGSAIGetType(pc, &gtype));
  PetscCall(PCGSAIGetSetUpInfo(pc, &nnzM, &nfall, &ondevice));
  PetscCall(PCGSAIGetSetUpChoices(pc, NULL, &pused, NULL, NULL, &usedmax));
  if (pused == PCGSAI_PATTERN_ADAPTIVE) {
    PetscCall(PCGSAIGetAdaptive(pc, &adsteps, &adper, &adtol));
    PetscCall(PCGSAIGetAdaptiveInfo(pc, &admet, &adcapped, &adratio, &admaxres));
  }
  PetscCheck(!gpu || ondevice, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "M was built on the host for a %s matrix (see -info): not the device set-up this benchmark measures", mattype);
  if (rows <= checkmax) PetscCall(CheckM(pc, A, gtype, side, nnzM, &fgsai, &fjac));
  else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "(%" PetscInt_FMT " rows > -check_max_rows %" PetscInt_FMT ": M not checked against Jacobi; the solve's residual is)\n", rows, checkmax));
  PetscCall(PCDestroy(&pc));

  /* (b) ParaSails with the pattern of A */
  if (parasails) {
#if PetscDefined(HAVE_HYPRE)
    PetscBool has;
    PetscReal dummy[4];
    struct {
      const char *name, *value;
    } def[] = {
      {"-parasails_pc_hypre_parasails_thresh",  "0"                                          },
      {"-parasails_pc_hypre_parasails_nlevels", "0"                                          },
      {"-parasails_pc_hypre_parasails_filter",  "0"                                          },
      {"-parasails_pc_hypre_parasails_sym",     gtype == PCGSAI_SPD ? "SPD" : "nonsymmetric"}
    };
    for (size_t i = 0; i < sizeof(def) / sizeof(def[0]); i++) {
      PetscCall(PetscOptionsHasName(NULL, NULL, def[i].name, &has));
      if (!has) PetscCall(PetscOptionsSetValue(NULL, def[i].name, def[i].value));
    }
    /* the values ParaSails reads, for the record */
    for (size_t i = 0; i < 3; i++) {
      char v[64] = "";
      PetscCall(PetscOptionsGetString(NULL, NULL, def[i].name, v, sizeof(v), NULL));
      PetscCall(PetscStrlcat(psparams, psparams[0] ? " " : "", sizeof(psparams)));
      PetscCall(PetscStrlcat(psparams, def[i].name + strlen("-parasails_pc_hypre_parasails_"), sizeof(psparams)));
      PetscCall(PetscStrlcat(psparams, " ", sizeof(psparams)));
      PetscCall(PetscStrlcat(psparams, v, sizeof(psparams)));
    }
    PetscCall(PetscOptionsGetString(NULL, NULL, def[3].name, pssym, sizeof(pssym), NULL));
    PetscCall(TimeSetUp(A, S_PARASAILS, side, sideset, gtype, batches, gpu, &pc, &tps, dummy));
    PetscCall(PCDestroy(&pc));
    /* the part of its set-up that converts A to a hypre matrix */
    tconv = PETSC_MAX_REAL;
    for (PetscInt bt = 0; bt < batches; bt++) {
      Mat H;
      PetscCall(PetscTime(&t0));
      PetscCall(MatConvert(A, MATHYPRE, MAT_INITIAL_MATRIX, &H));
      PetscCall(PetscTime(&t1));
      tconv = PetscMin(tconv, (PetscReal)(t1 - t0)); /* wall clock */
      PetscCall(MatDestroy(&H));
    }
#endif
  }

  /* (c) solves */
  if (solve) {
    for (PetscInt i = 0; i < nsolvers; i++) {
      PetscInt k;
      for (k = 0; k < S_N; k++) {
        PetscBool match;
        PetscCall(PetscStrcmp(names[i], SolverNames[k], &match));
        if (match) break;
      }
      PetscCheck(k < S_N, PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "Unknown solver '%s' in -solvers; known: gsai, jacobi, none, parasails", names[i]);
      PetscCheck(k != S_PARASAILS || parasails, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-solvers parasails needs -parasails");
      PetscCall(TimeSolve(A, b, k, side, sideset, gtype, rtol, maxit, batches, gpu, &sol[k]));
    }
  }

  /* report */
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, %s, %s, %s side, %" PetscInt_FMT " rows, nnz(A) %.0f, nnz(M) %" PetscInt_FMT " (%.2f nnz(A)), %" PetscInt_FMT " fallbacks, M built on the %s; fastest of %" PetscInt_FMT "\n", casename, mattype, PCGSAITypes[gtype], side == PC_RIGHT ? "right" : "left", rows, info.nz_used,
                        nnzM, (double)nnzM / info.nz_used, nfall, ondevice ? "device" : "host", batches));
  if (pused == PCGSAI_PATTERN_ADAPTIVE)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "adaptive pattern (%" PetscInt_FMT " steps of %" PetscInt_FMT ", tol %g): nnz(M)/nnz(A) = %.3f; %" PetscInt_FMT " rows met the target, %" PetscInt_FMT " stopped at the cap; largest residual %.3g\n", adsteps, adper, (double)adtol, (double)adratio, admet, adcapped, (double)admaxres));
  if (psparams[0]) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ParaSails: %s, sym %s\n", psparams, pssym));
  if (gtype == PCGSAI_SPD && fgsai >= 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "check: max |diag(G A G^T) - 1| = %.3g\n", (double)fgsai));
  else if (fgsai >= 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "check: %s = %.6g for GSAI, %.6g for Jacobi's D^-1\n", side == PC_RIGHT ? "||AM - I||_F" : "||MA - I||_F", (double)fgsai, (double)fjac));
  if (UseCPUTime) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "set-ups timed by CPU time (-cpu_time); the stages by the wall clock\n"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "GSAI set-up %10.2f ms: rows %.2f, pattern %.2f, solve %.2f, assemble %.2f\n", 1e3 * tsetup, 1e3 * stages[0], 1e3 * stages[1], 1e3 * stages[2], 1e3 * stages[3]));
  if (tps >= 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ParaSails   %10.2f ms (of which MatConvert to MATHYPRE %.2f ms): GSAI %.2fx faster\n", 1e3 * tps, 1e3 * tconv, (double)(tps / tsetup)));
  if (solve) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "KSPBCGS rtol %g: %-10s %8s %12s %12s\n", (double)rtol, "pc", "its", "solve ms", "true relres"));
    for (PetscInt k = 0; k < S_N; k++)
      if (sol[k].run) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "                   %-10s %7" PetscInt_FMT "%s %12.2f %12.3g\n", SolverNames[k], sol[k].its, sol[k].conv ? " " : "*", 1e3 * sol[k].t, (double)sol[k].relres));
  }
  if (hasjson && json[0]) {
    FILE *fp;
    char  date[64];
    if (envdate) PetscCall(PetscStrncpy(date, envdate, sizeof(date)));
    else PetscCall(PetscGetDate(date, sizeof(date)));
    PetscCall(PetscFOpen(PETSC_COMM_WORLD, json, "a", &fp));
    PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "{"));
    PetscCall(GKJSONString(fp, "bench", "gsai_bench", PETSC_FALSE));
    PetscCall(GKJSONString(fp, "case", casename, PETSC_FALSE));
    PetscCall(GKJSONString(fp, "problem", problem, PETSC_FALSE));
    PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"nranks\": %d, \"rows\": %" PetscInt_FMT ", \"nnz\": %.0f, \"nnz_M\": %" PetscInt_FMT ", \"fallbacks\": %" PetscInt_FMT ", \"on_device\": %s, ", size, rows, info.nz_used, nnzM, nfall, ondevice ? "true" : "false"));
    PetscCall(GKJSONString(fp, "mat_type", mattype, PETSC_FALSE));
    PetscCall(GKJSONString(fp, "gsai_type", PCGSAITypes[gtype], PETSC_FALSE));
    PetscCall(GKJSONString(fp, "side", side == PC_RIGHT ? "right" : "left", PETSC_FALSE));
    PetscCall(GKJSONString(fp, "pattern", PCGSAIPatternTypes[pused], PETSC_FALSE));
    PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"max_nnz\": %" PetscInt_FMT ", ", usedmax));
    if (label[0]) PetscCall(GKJSONString(fp, "label", label, PETSC_FALSE));
    if (pused == PCGSAI_PATTERN_ADAPTIVE)
      PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"adaptive_steps\": %" PetscInt_FMT ", \"adaptive_per_step\": %" PetscInt_FMT ", \"adaptive_tol\": %g, \"adaptive_met\": %" PetscInt_FMT ", \"adaptive_capped\": %" PetscInt_FMT ", \"adaptive_ratio\": %.6g, \"adaptive_maxres\": %.6g, ", adsteps, adper, (double)adtol, admet, adcapped, (double)adratio, (double)admaxres));
    if (fgsai >= 0) PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"check_gsai\": %.6g, ", (double)fgsai));
    if (fjac >= 0) PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"check_jacobi\": %.6g, ", (double)fjac));
    PetscCall(GKJSONString(fp, "setup_timer", UseCPUTime ? "cpu" : "wall", PETSC_FALSE));
    PetscCall(JSONMs(fp, "setup_ms", tsetup));
    PetscCall(JSONMs(fp, "rows_ms", stages[0]));
    PetscCall(JSONMs(fp, "pattern_ms", stages[1]));
    PetscCall(JSONMs(fp, "solve_ms", stages[2]));
    PetscCall(JSONMs(fp, "assemble_ms", stages[3]));
    /* device set-up since issue 6's fast assembly: rows, pattern, solve timed on the device, assemble on the host while the device solves */
    if (ondevice) PetscCall(GKJSONString(fp, "gpu_stages", "device-events", PETSC_FALSE));
    PetscCall(JSONMs(fp, "parasails_setup_ms", tps));
    PetscCall(JSONMs(fp, "parasails_convert_ms", tconv));
    if (psparams[0]) {
      PetscCall(GKJSONString(fp, "parasails_params", psparams, PETSC_FALSE));
      PetscCall(GKJSONString(fp, "parasails_sym", pssym, PETSC_FALSE));
    }
    if (tps >= 0) PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"setup_speedup_vs_parasails\": %.6g, ", (double)(tps / tsetup)));
    PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"ksp\": \"bcgs\", \"rtol\": %g, \"max_it\": %" PetscInt_FMT ", ", (double)rtol, maxit));
    for (PetscInt k = 0; k < S_N; k++) {
      if (!sol[k].run) continue;
      PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"its_%s\": %" PetscInt_FMT ", \"converged_%s\": %s, \"relres_%s\": %.3g, ", SolverNames[k], sol[k].its, SolverNames[k], sol[k].conv ? "true" : "false", SolverNames[k], (double)sol[k].relres));
      {
        char key[64];
        PetscCall(PetscSNPrintf(key, sizeof(key), "time_%s_ms", SolverNames[k]));
        PetscCall(JSONMs(fp, key, sol[k].t));
      }
    }
    PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"batches\": %" PetscInt_FMT ", ", batches));
    PetscCall(GKJSONRunInfo(fp, version, date, device));
    PetscCall(PetscFClose(PETSC_COMM_WORLD, fp));
  }

  for (PetscInt i = 0; i < nsolvers; i++) PetscCall(PetscFree(names[i]));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xs));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
