static const char help[] = "KSP benchmark: gpukit's KSPCACG (s-step CG) against KSPCG, KSPPIPECG and KSPGROPPCG, Jacobi preconditioner,\n"
                           "on the 2D 5-point or 3D 7-point Poisson matrix of a DMDA.\n\n"
                           "  -dim 2|3             grid dimension (default 2)\n"
                           "  -n n                 grid points per dimension (default 256)\n"
                           "  -nxyz nx,ny,nz       3D only: a box grid instead of n^3 (weak scaling at 256^3 per GPU: 512,256,256 on 2 GPUs,\n"
                           "                       512,512,256 on 4); the case is then named 3d7pt_<nx>x<ny>x<nz>\n"
                           "  -mat_type t          aij, sgdia (host) or aijcusparse, sgdiacuda (GPU, VECCUDA vectors); default aij\n"
                           "  -methods m1,m2,...   cg, pipecg, groppcg, cacg<s> (s = 1..16), cacg<s>mult, cacg<s>stored, cacg<s>tuned (the run-time\n"
                           "                       tuner: s up to <s>, plain CG steps, kernel or products; the others run untuned); default cg,pipecg,groppcg,\n"
                           "                       cacg2,cacg4,cacg8, and cacg4mult when the matrix has a matrix powers kernel (sgdia, sgdiacuda, and\n"
                           "                       KSPCACG's own for aijcusparse on one rank), cacg4stored on the GPU; the first is the baseline of the ratios.\n"
                           "                       cacg<s> uses the matrix powers kernel when there is one, cacg<s>mult never (-ksp_cacg_matrix_powers 0:\n"
                           "                       s MatMult + Jacobi calls), cacg<s>stored stores Y = M^{-1} W (-ksp_cacg_lean_basis 0); the record's\n"
                           "                       \"mpk\" says which route built the basis and \"cacg_lean\" in how many outer iterations the basis was lean\n"
                           "  -basis b             the KSPCACG basis: newton (default), chebyshev, monomial\n"
                           "  -its k               iterations of the fixed-length solves that give the time per iteration (default 200)\n"
                           "  -rtol r              relative tolerance of the solves to convergence that give the time to solution (default 1e-8)\n"
                           "  -batches b           timed solves of each kind per method, the fastest is reported (default 3)\n"
                           "  -json path           append one JSON record per method to this file (one record a line)\n\n"
                           "Every method first solves once untimed (set-up, and the spectrum estimate of KSPCACG, which later solves with\n"
                           "the same operators reuse). Then, per batch and method, one solve of exactly -its iterations (rtol = atol = 0:\n"
                           "the convergence test and its norms still run) and one solve to -rtol from a zero initial guess. The solution of\n"
                           "every method must agree with the baseline's (to 1e5 rtol relative) before anything is reported. On the GPU the\n"
                           "device is synchronised before each clock reading. Counted per iteration of the fixed-length solve: MPI\n"
                           "reductions (MPI_Allreduce and MPI_Iallreduce calls on more than one rank) and GPU-to-host copies (each one waits for the device).\n"
                           "Environment: GPUKIT_COMMIT, GPUKIT_SOURCE_STATE, GPUKIT_HOST, GPUKIT_MACHINE, GPUKIT_DATE, GPUKIT_LOAD go into the\n"
                           "JSON record; GPUKIT_DEVICE names the GPU where the program cannot ask CUDA.\n";

#include <petscdmda.h>
#include <petscksp.h>
#include <petscgpukit.h>
#include <petsctime.h>
#include "gpukitcompat.h"
#include "gkbench.h"
#include "gpukittune.h"
#include "gktest.h" /* GKFillPoisson() */
#if defined(GK_BENCH_CUDA)
  #include <petscdevice_cuda.h>
#endif

#define MAX_METHODS 16

/* Every MPI_Allreduce and MPI_Iallreduce of the process is counted (PMPI interposition: these definitions take the
   place of the MPI library's for PETSc too; PETSc's own count misses the non-blocking ones of split reductions) */
static long BenchAllreduces = 0;
#undef MPI_Allreduce
#undef MPI_Iallreduce

int MPI_Allreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
  int size;
  PMPI_Comm_size(c, &size);
  if (size > 1) BenchAllreduces++;
  return PMPI_Allreduce(sb, rb, n, t, op, c);
}

int MPI_Iallreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request *r)
{
  int size;
  PMPI_Comm_size(c, &size);
  if (size > 1) BenchAllreduces++;
  return PMPI_Iallreduce(sb, rb, n, t, op, c, r);
}

/* GPU-to-host copies PETSc has logged (declared only in PETSc builds with a device) */
#if defined(GK_BENCH_CUDA)
  #define GTOC_COUNT() petsc_gtoc_ct
#else
  #define GTOC_COUNT() 0.0
#endif

typedef struct {
  char      name[16];
  KSPType   type;
  PetscInt  s;      /* KSPCACG only */
  PetscBool nohook; /* KSPCACG without the matrix powers hook (cacg<s>mult) */
  PetscBool stored; /* KSPCACG with the stored basis (cacg<s>stored: -ksp_cacg_lean_basis 0) */
  PetscBool tuned;  /* KSPCACG with its run-time tuner (cacg<s>tuned: s up to <s>, plain CG steps, kernel or products);
                       every other KSPCACG method runs untuned, with exactly its s */
  char      choice[48]; /* cacg<s>tuned: the tuner's choice */
  PetscInt  lean;   /* KSPCACG: outer iterations of the last solve with the lean basis */
  char      mpk[8]; /* KSPCACG: "hook" (the matrix's MatMatrixPowers_C) or "default" (MatMult + PCApply); else "" */
  PetscReal tit;    /* seconds per iteration, fastest batch of the fixed-length solve */
  PetscReal titmed; /* median */
  PetscReal tts;    /* seconds to solution, fastest batch */
  PetscInt  its;    /* iterations to solution */
  PetscReal red;    /* MPI reductions per iteration (fixed-length solve; 0 on one rank) */
  PetscReal gtoc;   /* GPU-to-host copies per iteration */
  PetscReal err;    /* || x - x_baseline || / || x_baseline || at the end of the solve to solution */
  PetscInt  outer, cgsteps, replacements, truncations;
} Method;

static PetscErrorCode ParseMethod(const char *name, Method *m)
{
  PetscBool match;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(m, sizeof(*m))); /* the KSPCACG statistics stay 0 for the other methods */
  PetscCall(PetscStrncpy(m->name, name, sizeof(m->name)));
  m->s      = 0;
  m->nohook = PETSC_FALSE;
  m->stored = PETSC_FALSE;
  m->tuned  = PETSC_FALSE;
  m->mpk[0] = 0;
  PetscCall(PetscStrcmp(name, "cg", &match));
  if (match) m->type = KSPCG;
  else {
    PetscCall(PetscStrcmp(name, "pipecg", &match));
    if (match) m->type = KSPPIPECG;
    else {
      PetscCall(PetscStrcmp(name, "groppcg", &match));
      if (match) m->type = KSPGROPPCG;
      else {
        PetscCall(PetscStrncmp(name, "cacg", 4, &match));
        PetscCheck(match, PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "Unknown method '%s' in -methods; known: cg, pipecg, groppcg, cacg<s> and cacg<s>mult with s = 1..16 (cacg4, ...)", name);
        {
          char *end;
          m->type = KSPCACG;
          m->s    = (PetscInt)strtol(name + 4, &end, 10);
          PetscCall(PetscStrcmp(end, "mult", &m->nohook));
          PetscCall(PetscStrcmp(end, "stored", &m->stored));
          PetscCall(PetscStrcmp(end, "tuned", &m->tuned));
          PetscCheck(m->s >= 1 && m->s <= 16 && (!*end || m->nohook || m->stored || m->tuned), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "Method '%s': write cacg<s>, cacg<s>mult, cacg<s>stored or cacg<s>tuned with s = 1..16, e.g. cacg4", name);
        }
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CreateSolver(Method *m, Mat A, KSPCACGBasisType basis, KSP *ksp)
{
  PC pc;

  PetscFunctionBegin;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, ksp));
  PetscCall(KSPSetOptionsPrefix(*ksp, "bench_"));
  PetscCall(KSPSetOperators(*ksp, A, A));
  PetscCall(KSPSetType(*ksp, m->type));
  PetscCall(KSPGetPC(*ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  if (m->s) {
    PetscCall(KSPCACGSetS(*ksp, m->s));
    PetscCall(KSPCACGSetBasis(*ksp, basis));
    PetscCall(KSPCACGSetTune(*ksp, m->tuned));
  }
  PetscCall(KSPSetFromOptions(*ksp));
  if (m->nohook) PetscCall(KSPCACGSetUseMatrixPowers(*ksp, PETSC_FALSE)); /* the matrix powers route: see m->mpk after a solve */
  if (m->stored) PetscCall(KSPCACGSetLeanBasis(*ksp, PETSC_FALSE));
  PetscCall(KSPSetUp(*ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one solve from zero, timed between device synchronisations; the slowest rank's time */
static PetscErrorCode TimedSolve(KSP ksp, Vec b, Vec x, PetscBool gpu, PetscReal *t, PetscInt *its)
{
  PetscLogDouble t0, t1;
  PetscReal      dt;

  PetscFunctionBegin;
  PetscCall(VecSet(x, 0.0));
  PetscCall(GKDeviceSynchronize(gpu));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(&t0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(GKDeviceSynchronize(gpu));
  PetscCall(PetscTime(&t1));
  dt = (PetscReal)(t1 - t0);
  PetscCall(MPIU_Allreduce(&dt, t, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  DM               da;
  Mat              A;
  Vec              b, x, xref, xs;
  PetscRandom      rnd;
  Method           meth[MAX_METHODS];
  char            *names[MAX_METHODS], mattype[64] = "aij", json[PETSC_MAX_PATH_LEN] = "", casename[64], version[32], device[256] = "cpu", basisname[32] = "newton";
  PetscInt         nxyz[3] = {0, 0, 0}, nnxyz = 3;
  PetscBool        setxyz = PETSC_FALSE;
  PetscInt         dim = 2, n = 256, its = 200, batches = 3, nm = MAX_METHODS, rows, procs[3] = {1, 1, 1};
  PetscReal        rtol = 1e-8;
  PetscBool        set, gpu, hasjson;
  PetscMPIInt      size, rank;
  KSPCACGBasisType basis = KSP_CACG_BASIS_NEWTON;
  const char      *envdate = getenv("GPUKIT_DATE");

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "KSPCACG benchmark", "bench");
  PetscCall(PetscOptionsInt("-dim", "Grid dimension, 2 or 3", "bench", dim, &dim, NULL));
  PetscCall(PetscOptionsInt("-n", "Grid points per dimension", "bench", n, &n, NULL));
  PetscCall(PetscOptionsIntArray("-nxyz", "3D: grid points in x, y and z (instead of -n)", "bench", nxyz, &nnxyz, &setxyz));
  PetscCall(PetscOptionsString("-mat_type", "aij, sgdia, aijcusparse or sgdiacuda", "bench", mattype, mattype, sizeof(mattype), NULL));
  PetscCall(PetscOptionsStringArray("-methods", "Methods, comma-separated; the first is the baseline", "bench", names, &nm, &set));
  PetscCall(PetscOptionsEnum("-basis", "KSPCACG basis", "bench", KSPCACGBasisTypes, (PetscEnum)basis, (PetscEnum *)&basis, NULL));
  PetscCall(PetscOptionsInt("-its", "Iterations of the fixed-length solves", "bench", its, &its, NULL));
  PetscCall(PetscOptionsReal("-rtol", "Relative tolerance of the solves to solution", "bench", rtol, &rtol, NULL));
  PetscCall(PetscOptionsInt("-batches", "Timed batches (the fastest is reported)", "bench", batches, &batches, NULL));
  PetscCall(PetscOptionsString("-json", "Append JSON records (one a line) to this file", "bench", json, json, sizeof(json), &hasjson));
  PetscOptionsEnd();
  if (!set) {
    const char *def[] = {"cg", "pipecg", "groppcg", "cacg2", "cacg4", "cacg8"};
    nm                = 6;
    for (PetscInt i = 0; i < nm; i++) PetscCall(PetscStrallocpy(def[i], &names[i]));
    /* cacg4mult is appended below when the matrix has a matrix powers hook */
  }
  PetscCheck(nm >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-methods lists no method");
  PetscCheck(dim == 2 || dim == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dim must be 2 or 3, got %" PetscInt_FMT, dim);
  PetscCheck(n >= 3 && its >= 1 && batches >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n must be at least 3, -its and -batches at least 1");
  PetscCall(PetscStrncpy(basisname, KSPCACGBasisTypes[basis], sizeof(basisname)));
  for (PetscInt i = 0; i < nm; i++) PetscCall(ParseMethod(names[i], &meth[i]));
  {
    PetscBool c1, c2;
    PetscCall(PetscStrcmp(mattype, MATAIJCUSPARSE, &c1));
    PetscCall(PetscStrcmp(mattype, MATSGDIACUDA, &c2));
    gpu = (PetscBool)(c1 || c2);
  }
#if !defined(GK_BENCH_CUDA)
  PetscCheck(!gpu, PETSC_COMM_WORLD, PETSC_ERR_SUP, "-mat_type %s runs on a GPU; this build of the benchmark has none: build it against a PETSc 3.19 or later configured with CUDA", mattype);
#endif
  if (gpu) PetscCall(GKDeviceName(device, sizeof(device)));

  if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
  else {
    if (!setxyz) nxyz[0] = nxyz[1] = nxyz[2] = n;
    PetscCheck(!setxyz || nnxyz == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-nxyz takes three sizes, got %" PetscInt_FMT, nnxyz);
    PetscCheck(nxyz[0] >= 3 && nxyz[1] >= 3 && nxyz[2] >= 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-nxyz takes three sizes of at least 3");
    PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, nxyz[0], nxyz[1], nxyz[2], PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, &da));
  }
  if (gpu) PetscCall(DMSetVecType(da, VECCUDA));
  PetscCall(DMSetMatType(da, mattype));
  PetscCall(DMSetUp(da));
  PetscCall(DMCreateMatrix(da, &A));
  PetscCall(GKFillPoisson(da, A));
  PetscCall(MatSetOption(A, MAT_SPD, PETSC_TRUE)); /* Jacobi then keeps its diagonal on the device (facts.md) */
  if (!set) { /* the fused matrix powers kernel against s MatMults; the lean basis against the stored one */
    void (*hook)(void) = NULL;
    PetscBool csr = PETSC_FALSE;
    PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatMatrixPowers_C", &hook));
#if defined(GK_BENCH_CUDA)
    PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJCUSPARSE, &csr)); /* KSPCACG's own kernel */
#endif
    if (hook || csr) {
      PetscCall(PetscStrallocpy("cacg4mult", &names[nm]));
      PetscCall(ParseMethod(names[nm], &meth[nm]));
      nm++;
    }
    if (gpu) {
      PetscCall(PetscStrallocpy("cacg4stored", &names[nm]));
      PetscCall(ParseMethod(names[nm], &meth[nm]));
      nm++;
      PetscCall(PetscStrallocpy("cacg8tuned", &names[nm]));
      PetscCall(ParseMethod(names[nm], &meth[nm]));
      nm++;
    }
  }
  rows = dim == 3 ? nxyz[0] * nxyz[1] * nxyz[2] : n * n;
  PetscCall(DMDAGetInfo(da, NULL, NULL, NULL, NULL, &procs[0], &procs[1], &procs[2], NULL, NULL, NULL, NULL, NULL, NULL));
  if (dim == 3 && setxyz) PetscCall(PetscSNPrintf(casename, sizeof(casename), "3d7pt_%" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT, nxyz[0], nxyz[1], nxyz[2]));
  else PetscCall(PetscSNPrintf(casename, sizeof(casename), "%" PetscInt_FMT "d%" PetscInt_FMT "pt_n%" PetscInt_FMT, dim, 2 * dim + 1, n));
  PetscCall(DMCreateGlobalVector(da, &b));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecDuplicate(b, &xref));
  PetscCall(VecDuplicate(b, &xs));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 20261122));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(xs, rnd));
  PetscCall(MatMult(A, xs, b));
  PetscCall(PetscGetVersion(version, sizeof(version)));

  for (PetscInt i = 0; i < nm; i++) {
    Method            *m = &meth[i];
    KSP                ksp;
    PetscReal         *tb, t;
    PetscInt           k;
    PetscLogDouble     gtoc0;
    long               red0;
    KSPConvergedReason reason;

    PetscCall(CreateSolver(m, A, basis, &ksp));
    PetscCall(PetscMalloc1(batches, &tb));
    /* untimed: set-up, the spectrum estimate of KSPCACG */
    PetscCall(KSPSetTolerances(ksp, rtol, PETSC_DEFAULT, PETSC_DEFAULT, 100000));
    PetscCall(TimedSolve(ksp, b, x, gpu, &t, &k));
    m->tts = PETSC_MAX_REAL;
    for (PetscInt bt = 0; bt < batches; bt++) {
      /* the fixed-length solve: rtol = atol = 0 */
      PetscCall(KSPSetTolerances(ksp, 0.0, 0.0, PETSC_DEFAULT, its));
      red0  = BenchAllreduces;
      gtoc0 = GTOC_COUNT();
      PetscCall(TimedSolve(ksp, b, x, gpu, &t, &k));
      /* KSPPIPECG does max_it + 1 iterations */
      PetscCheck(k >= its, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Method %s stopped after %" PetscInt_FMT " of %" PetscInt_FMT " iterations: use a smaller -its", m->name, k, its);
      m->red  = (PetscReal)(BenchAllreduces - red0 - (size > 1 ? 1 : 0)) / k; /* less the timer's own */
      m->gtoc = (PetscReal)((GTOC_COUNT() - gtoc0) / k);
      tb[bt]  = t / k;
      /* to solution */
      PetscCall(KSPSetTolerances(ksp, rtol, PETSC_DEFAULT, PETSC_DEFAULT, 100000));
      PetscCall(TimedSolve(ksp, b, x, gpu, &t, &m->its));
      PetscCall(KSPGetConvergedReason(ksp, &reason));
      PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "Method %s did not converge (%s)", m->name, KSPConvergedReasons[reason]);
      m->tts = PetscMin(m->tts, t);
    }
    PetscCall(PetscSortReal(batches, tb));
    m->tit    = tb[0];
    m->titmed = batches % 2 ? tb[batches / 2] : 0.5 * (tb[batches / 2 - 1] + tb[batches / 2]);
    if (i == 0) PetscCall(VecCopy(x, xref));
    {
      PetscReal d, nr;
      PetscCall(VecWAXPY(xs, -1.0, xref, x));
      PetscCall(VecNorm(xs, NORM_2, &d));
      PetscCall(VecNorm(xref, NORM_2, &nr));
      m->err = d / nr;
      PetscCheck(m->err <= 1e5 * rtol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Method %s: the solution differs from %s's by %g relative (> 1e5 rtol): not reporting times of a wrong solve", m->name, meth[0].name, (double)m->err);
    }
    if (m->s) {
      KSPCACGStatistics st;
      PetscCall(KSPCACGGetStatistics(ksp, &st));
      m->outer        = st.outer;
      m->cgsteps      = st.cgsteps;
      m->lean         = st.leanbasis;
      PetscCall(PetscStrncpy(m->mpk, st.mpk ? "hook" : "default", sizeof(m->mpk))); /* a matrix powers kernel built the basis, or MatMult + PCApply */
      m->replacements = st.replacements;
      m->truncations  = st.truncations;
      if (m->tuned) { /* what the tuner chose (in the untimed first solve, or from the cache) */
        GpukitTuner     tu;
        const PetscInt *v;
        PetscBool       done;
        PetscCall(GpukitTuneFind((PetscObject)ksp, "CACGStep", &tu));
        if (tu) {
          PetscCall(GpukitTunerGetConfig(tu, &v, &done));
          PetscCall(PetscSNPrintf(m->choice, sizeof(m->choice), "%s s=%" PetscInt_FMT " %s%s", v[2] ? "cg" : "sstep", v[0], v[1] ? "products" : "kernel", done ? "" : " (searching)"));
        } else PetscCall(PetscStrncpy(m->choice, "not tuned", sizeof(m->choice)));
      }
    }
    PetscCall(PetscFree(tb));
    PetscCall(KSPDestroy(&ksp));
  }

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, %d rank(s), %s, Jacobi, %" PetscInt_FMT " rows; per iteration: %" PetscInt_FMT "-iteration solves; to solution: rtol %g; fastest of %" PetscInt_FMT "; KSPCACG basis %s\n", casename, size, mattype, rows, its, (double)rtol, batches, basisname));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-10s %12s %9s %12s %6s %9s %10s %10s %8s\n", "method", "ms/iter", "vs " "base", "ms to sol.", "its", "vs base", "red./iter", "D2H/iter", "mpk"));
  for (PetscInt i = 0; i < nm; i++) {
    Method *m = &meth[i];
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-10s %12.4f %8.2fx %12.2f %6" PetscInt_FMT " %8.2fx %10.2f %10.2f %8s\n", m->name, 1e3 * m->tit, (double)(meth[0].tit / m->tit), 1e3 * m->tts, m->its, (double)(meth[0].tts / m->tts), (double)m->red, (double)m->gtoc, m->mpk[0] ? m->mpk : "-"));
  }
  if (hasjson && json[0]) {
    FILE *fp;
    char  date[64];
    if (envdate) PetscCall(PetscStrncpy(date, envdate, sizeof(date)));
    else PetscCall(PetscGetDate(date, sizeof(date)));
    PetscCall(PetscFOpen(PETSC_COMM_WORLD, json, "a", &fp));
    if (rank == 0) {
      for (PetscInt i = 0; i < nm; i++) {
        Method *m = &meth[i];
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "{"));
        PetscCall(GKJSONString(fp, "bench", "cacg_bench", PETSC_FALSE));
        PetscCall(GKJSONString(fp, "case", casename, PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"nranks\": %d, \"dim\": %" PetscInt_FMT ", \"n\": %" PetscInt_FMT ", \"rows\": %" PetscInt_FMT ", ", size, dim, n, rows));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"procs\": \"%" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT "\", ", procs[0], procs[1], procs[2]));
        PetscCall(GKJSONString(fp, "mat_type", mattype, PETSC_FALSE));
        PetscCall(GKJSONString(fp, "pc", "jacobi", PETSC_FALSE));
        PetscCall(GKJSONString(fp, "method", m->name, PETSC_FALSE));
        PetscCall(GKJSONString(fp, "ksp_type", m->type, PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"s\": %" PetscInt_FMT ", ", m->s));
        PetscCall(GKJSONString(fp, "basis", m->s ? basisname : "", PETSC_FALSE));
        PetscCall(GKJSONString(fp, "mpk", m->mpk, PETSC_FALSE));
        if (m->tuned) PetscCall(GKJSONString(fp, "tuned_choice", m->choice, PETSC_FALSE));
        PetscCall(GKJSONString(fp, "baseline", meth[0].name, PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"its_fixed\": %" PetscInt_FMT ", \"time_per_it_ms\": %.6g, \"time_per_it_ms_median\": %.6g, \"speedup_per_it_vs_baseline\": %.6g, ", its, 1e3 * m->tit, 1e3 * m->titmed, (double)(meth[0].tit / m->tit)));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"rtol\": %g, \"its_to_solution\": %" PetscInt_FMT ", \"its_ratio_vs_baseline\": %.6g, \"time_to_solution_ms\": %.6g, \"speedup_to_solution_vs_baseline\": %.6g, ", (double)rtol, m->its, (double)m->its / meth[0].its, 1e3 * m->tts, (double)(meth[0].tts / m->tts)));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"reductions_per_it\": %.4g, \"gpu_to_host_copies_per_it\": %.4g, \"solution_diff_vs_baseline\": %.3g, ", (double)m->red, (double)m->gtoc, (double)m->err));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"cacg_outer\": %" PetscInt_FMT ", \"cacg_lean\": %" PetscInt_FMT ", \"cacg_replacements\": %" PetscInt_FMT ", \"cacg_truncations\": %" PetscInt_FMT ", \"batches\": %" PetscInt_FMT ", ", m->outer, m->lean, m->replacements, m->truncations, batches));
        PetscCall(GKJSONRunInfo(fp, version, date, device));
      }
    }
    PetscCall(PetscFClose(PETSC_COMM_WORLD, fp));
  }

  for (PetscInt i = 0; i < nm; i++) PetscCall(PetscFree(names[i]));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&xref));
  PetscCall(VecDestroy(&xs));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
