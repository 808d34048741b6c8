static const char help[] = "KSPCACG against KSPCG on the same system, in the same run.\n\n"
                           "  -problem poisson|mtx   2D/3D Poisson on a DMDA (-dim, -n, -dm_mat_type aij|sgdia) or a Matrix Market file (-mtx)\n"
                           "  -dim 2|3 -n n          the Poisson grid (default 2, 64)\n"
                           "  -shift a               Poisson only: A - a I (a large a makes A indefinite)\n"
                           "  -mtx file.mtx[.gz]     the matrix; b = A x* with a random x*\n"
                           "  -test_pc type          the preconditioner of both solvers (default jacobi)\n"
                           "  -test_norm_type t      the norm type of both solvers (default: the KSP default)\n"
                           "  -rtol r                relative tolerance of both (default 1e-10)\n"
                           "  -s 2,4,8               the values of s to run (default 4)\n"
                           "  -bases newton,...      the bases to run (default newton,chebyshev)\n"
                           "  -its_tol t             CACG may take at most (1+t) times CG's iterations (and at least (1-t)); < 0: no check (default 0.1)\n"
                           "  -sol_tol t             ||x_cacg - x_cg|| <= t ||x_cg|| (default 1e-6)\n"
                           "  -res_tol t             ||b - A x_cacg|| <= t ||b|| (default 10 rtol x the ratio CG reached)\n"
                           "  -no_truncation         fail if the basis was truncated (s lowered)\n"
                           "  -hook                  compose a MatMatrixPowers_C on the matrix (MatMult + diagonal scaling) and check it was used\n"
                           "  -solves k              solve k times with the same operators (the spectrum estimate is reused after the first)\n"
                           "  -expect converged|indefinite_mat|indefinite_pc|breakdown|diverged   what CACG must report (default converged)\n"
                           "  -max_reductions_per_outer r   on more than one rank: MPI_Allreduce calls during the solve per outer iteration\n"
                           "                         (after the eigenvalue estimate) must not exceed r (default 1.0 + 4 / outer iterations)\n"
                           "Other -ksp_* options reach the CACG solver only (the reference KSPCG has the prefix ref_).\n";

#include "gktest.h"
#include <petscksp.h>
#include <stdio.h>

/* Every MPI_Allreduce of the process is counted (PMPI interposition: this definition takes the place of the MPI
   library's for PETSc too): the test checks that CACG does one reduction per outer iteration. petsclog.h wraps
   both names in logging macros; the functions here are the real ones. */
static long GKAllreduces = 0;
#undef MPI_Allreduce
#undef MPI_Iallreduce

int MPI_Allreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
  GKAllreduces++;
  return PMPI_Allreduce(sb, rb, n, t, op, c);
}

int MPI_Iallreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request *r)
{
  GKAllreduces++;
  return PMPI_Iallreduce(sb, rb, n, t, op, c, r);
}

/* 2*dim on the diagonal, -1 for each neighbour in the domain (homogeneous Dirichlet outside), minus shift */
static PetscErrorCode Poisson(PetscInt dim, PetscInt n, PetscReal shift, DM *da, Mat *A)
{
  DMDALocalInfo info;

  PetscFunctionBegin;
  if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, da));
  PetscCall(DMSetFromOptions(*da));
  PetscCall(DMSetUp(*da));
  PetscCall(DMCreateMatrix(*da, A));
  PetscCall(DMDAGetLocalInfo(*da, &info));
  for (PetscInt k = info.zs; k < info.zs + info.zm; k++)
    for (PetscInt j = info.ys; j < info.ys + info.ym; j++)
      for (PetscInt i = info.xs; i < info.xs + info.xm; i++) {
        MatStencil  row = {0}, col[7];
        PetscScalar v[7];
        PetscInt    nc = 0;
        row.i = i;
        row.j = j;
        row.k = k;
        col[nc] = row;
        v[nc++] = 2.0 * dim - shift;
        for (PetscInt d = 0; d < dim; d++)
          for (PetscInt sgn = -1; sgn <= 1; sgn += 2) {
            MatStencil c = row;
            PetscInt   q;
            if (d == 0) q = (c.i += sgn);
            else if (d == 1) q = (c.j += sgn);
            else q = (c.k += sgn);
            if (q < 0 || q >= n) continue;
            col[nc] = c;
            v[nc++] = -1.0;
          }
        PetscCall(MatSetValuesStencil(*A, 1, &row, nc, col, v, INSERT_VALUES));
      }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A Matrix Market coordinate file (gzip-compressed if the name ends in .gz), real or integer, general or symmetric,
   into an AIJ matrix; every rank reads the file and keeps its rows */
static PetscErrorCode ReadMatrixMarket(const char *path, Mat *A)
{
  FILE       *fp;
  char        line[1024], cmd[PETSC_MAX_PATH_LEN + 32], field[64] = "", sym[64] = "";
  PetscInt    M = 0, N = 0, nz = 0, rstart, rend, *dnz, *onz, *ri, *ci, cstart, cend;
  PetscScalar *va;
  PetscBool   gz, symmetric;
  size_t      len;
  long        mm, nn, kk;

  PetscFunctionBegin;
  PetscCall(PetscStrlen(path, &len));
  gz = (PetscBool)(len > 3 && !strcmp(path + len - 3, ".gz"));
  if (gz) {
    PetscCall(PetscSNPrintf(cmd, sizeof(cmd), "gzip -dc '%s'", path));
    fp = popen(cmd, "r");
  } else fp = fopen(path, "r");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open %s (the SuiteSparse matrices are in tests/data/matrices, or set GPUKIT_MATRICES)", path);
  PetscCheck(fgets(line, sizeof(line), fp), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s is empty", path);
  PetscCheck(sscanf(line, "%%%%MatrixMarket matrix coordinate %63s %63s", field, sym) == 2, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: not a Matrix Market coordinate file: %s", path, line);
  PetscCheck(!strcmp(field, "real") || !strcmp(field, "integer"), PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: field %s; real or integer only", path, field);
  symmetric = (PetscBool)!strcmp(sym, "symmetric");
  PetscCheck(symmetric || !strcmp(sym, "general"), PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: symmetry %s; general or symmetric only", path, sym);
  while (fgets(line, sizeof(line), fp) && line[0] == '%') { }
  PetscCheck(sscanf(line, "%ld %ld %ld", &mm, &nn, &kk) == 3 && mm == nn, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: bad size line (square matrices only): %s", path, line);
  M  = (PetscInt)mm;
  N  = (PetscInt)nn;
  nz = (PetscInt)kk;
  PetscCall(PetscMalloc3(2 * nz, &ri, 2 * nz, &ci, 2 * nz, &va));
  for (PetscInt e = 0; e < nz; e++) {
    long   i, j;
    double v;
    PetscCheck(fgets(line, sizeof(line), fp) && sscanf(line, "%ld %ld %lf", &i, &j, &v) == 3, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: entry %" PetscInt_FMT " unreadable", path, e);
    ri[e] = (PetscInt)i - 1;
    ci[e] = (PetscInt)j - 1;
    va[e] = v;
  }
  if (gz) pclose(fp);
  else fclose(fp);
  if (symmetric) { /* the other triangle */
    PetscInt n2 = nz;
    for (PetscInt e = 0; e < nz; e++)
      if (ri[e] != ci[e]) {
        ri[n2]   = ci[e];
        ci[n2]   = ri[e];
        va[n2++] = va[e];
      }
    nz = n2;
  }
  {
    PetscLayout map;
    PetscCall(PetscLayoutCreate(PETSC_COMM_WORLD, &map));
    PetscCall(PetscLayoutSetSize(map, M));
    PetscCall(PetscLayoutSetUp(map));
    PetscCall(PetscLayoutGetRange(map, &rstart, &rend));
    PetscCall(PetscLayoutDestroy(&map));
  }
  cstart = rstart;
  cend   = rend;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, rend - rstart, rend - rstart, M, N));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(PetscCalloc2(rend - rstart, &dnz, rend - rstart, &onz));
  for (PetscInt e = 0; e < nz; e++)
    if (ri[e] >= rstart && ri[e] < rend) {
      if (ci[e] >= cstart && ci[e] < cend) dnz[ri[e] - rstart]++;
      else onz[ri[e] - rstart]++;
    }
  PetscCall(MatSeqAIJSetPreallocation(*A, 0, dnz));
  PetscCall(MatMPIAIJSetPreallocation(*A, 0, dnz, 0, onz));
  for (PetscInt e = 0; e < nz; e++)
    if (ri[e] >= rstart && ri[e] < rend) PetscCall(MatSetValue(*A, ri[e], ci[e], va[e], ADD_VALUES));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree2(dnz, onz));
  PetscCall(PetscFree3(ri, ci, va));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- a matrix powers hook for the test: the contract of gpukitmat.h, by MatMult and a diagonal scaling ---- */
static PetscInt GKHookCalls = 0;

static PetscErrorCode TestMatrixPowers(Mat A, Vec dinv, PetscInt k, const PetscReal theta[], const PetscReal sigma[], const PetscReal gamma[], Vec V[], Vec W[])
{
  PetscFunctionBegin;
  GKHookCalls++;
  for (PetscInt j = 0; j < k; j++) {
    PetscCall(MatMult(A, V[j], W[j + 1]));
    if (j > 0) PetscCall(VecAXPBYPCZ(W[j + 1], -theta[j] / sigma[j], -gamma[j] / sigma[j], 1.0 / sigma[j], W[j], W[j - 1]));
    else PetscCall(VecAXPBY(W[j + 1], -theta[j] / sigma[j], 1.0 / sigma[j], W[j]));
    if (dinv) PetscCall(VecPointwiseMult(V[j + 1], dinv, W[j + 1]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetCommon(KSP ksp, Mat A, const char *pctype, PetscReal rtol, KSPNormType nt, PetscBool setnt)
{
  PC pc;

  PetscFunctionBegin;
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, pctype));
  PetscCall(KSPSetTolerances(ksp, rtol, PETSC_DEFAULT, PETSC_DEFAULT, 100000));
  if (setnt) PetscCall(KSPSetNormType(ksp, nt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ||b - A x|| / ||b|| */
static PetscErrorCode TrueResidual(Mat A, Vec b, Vec x, PetscReal *rel)
{
  Vec       r;
  PetscReal nr, nb;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(b, &r));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &nr));
  PetscCall(VecNorm(b, NORM_2, &nb));
  *rel = nr / nb;
  PetscCall(VecDestroy(&r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char               problem[32] = "poisson", mtx[PETSC_MAX_PATH_LEN] = "", pctype[64] = PCJACOBI, expect[32] = "converged", *bases[8];
  PetscInt           dim = 2, n = 64, slist[16] = {4}, ns = 16, nb = 8, solves = 1, itsref, fails = 0;
  PetscReal          shift = 0.0, rtol = 1e-10, itstol = 0.1, soltol = 1e-6, restol = -1.0, maxred = -1.0, refres;
  PetscBool          flg, notrunc = PETSC_FALSE, hook = PETSC_FALSE, setnt;
  KSPNormType        nt = KSP_NORM_PRECONDITIONED;
  PetscMPIInt        size;
  DM                 da = NULL;
  Mat                A;
  Vec                b, x, xref, xstar;
  KSP                ref, ksp;
  KSPConvergedReason reason;
  PetscRandom        rnd;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "KSPCACG test", NULL);
  PetscCall(PetscOptionsString("-problem", "poisson or mtx", NULL, problem, problem, sizeof(problem), NULL));
  PetscCall(PetscOptionsInt("-dim", "Poisson dimension", NULL, dim, &dim, NULL));
  PetscCall(PetscOptionsInt("-n", "Poisson grid points per direction", NULL, n, &n, NULL));
  PetscCall(PetscOptionsReal("-shift", "Poisson shift", NULL, shift, &shift, NULL));
  PetscCall(PetscOptionsString("-mtx", "Matrix Market file", NULL, mtx, mtx, sizeof(mtx), NULL));
  PetscCall(PetscOptionsString("-test_pc", "preconditioner", NULL, pctype, pctype, sizeof(pctype), NULL));
  PetscCall(PetscOptionsEnum("-test_norm_type", "norm type", NULL, KSPNormTypes, (PetscEnum)nt, (PetscEnum *)&nt, &setnt));
  PetscCall(PetscOptionsReal("-rtol", "relative tolerance", NULL, rtol, &rtol, NULL));
  PetscCall(PetscOptionsIntArray("-s", "values of s", NULL, slist, &ns, &flg));
  if (!flg) ns = 1;
  PetscCall(PetscOptionsStringArray("-bases", "bases", NULL, bases, &nb, &flg));
  if (!flg) {
    nb = 2;
    PetscCall(PetscStrallocpy("newton", &bases[0]));
    PetscCall(PetscStrallocpy("chebyshev", &bases[1]));
  }
  PetscCall(PetscOptionsReal("-its_tol", "iteration count tolerance", NULL, itstol, &itstol, NULL));
  PetscCall(PetscOptionsReal("-sol_tol", "solution tolerance", NULL, soltol, &soltol, NULL));
  PetscCall(PetscOptionsReal("-res_tol", "true residual tolerance", NULL, restol, &restol, NULL));
  PetscCall(PetscOptionsBool("-no_truncation", "no truncation allowed", NULL, notrunc, &notrunc, NULL));
  PetscCall(PetscOptionsBool("-hook", "compose a matrix powers hook", NULL, hook, &hook, NULL));
  PetscCall(PetscOptionsInt("-solves", "solves", NULL, solves, &solves, NULL));
  PetscCall(PetscOptionsString("-expect", "expected outcome", NULL, expect, expect, sizeof(expect), NULL));
  PetscCall(PetscOptionsReal("-max_reductions_per_outer", "reductions per outer iteration", NULL, maxred, &maxred, NULL));
  PetscOptionsEnd();

  if (!strcmp(problem, "poisson")) PetscCall(Poisson(dim, n, shift, &da, &A));
  else {
    PetscCheck(!strcmp(problem, "mtx") && mtx[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-problem poisson, or -problem mtx -mtx file");
    PetscCall(ReadMatrixMarket(mtx, &A));
  }
  if (hook) PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMatrixPowers_C", TestMatrixPowers));
  {
    MatType type;
    PetscInt N;
    PetscCall(MatGetType(A, &type));
    PetscCall(MatGetSize(A, &N, NULL));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "problem %s%s%s: %" PetscInt_FMT " rows, matrix type %s, %d ranks, PC %s, rtol %g\n", problem, mtx[0] ? " " : "", mtx, N, type, size, pctype, (double)rtol));
  }
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(x, &xref));
  PetscCall(VecDuplicate(x, &xstar));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 12345));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(xstar, rnd));
  PetscCall(MatMult(A, xstar, b));

  /* the reference */
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ref));
  PetscCall(KSPSetOptionsPrefix(ref, "ref_"));
  PetscCall(SetCommon(ref, A, pctype, rtol, nt, setnt));
  PetscCall(KSPSetType(ref, KSPCG));
  PetscCall(KSPSetFromOptions(ref));
  {
    long c0 = GKAllreduces;
    PetscCall(KSPSolve(ref, b, xref));
    PetscCall(KSPGetIterationNumber(ref, &itsref));
    PetscCall(KSPGetConvergedReason(ref, &reason));
    PetscCall(TrueResidual(A, b, xref, &refres));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "KSPCG: %s after %" PetscInt_FMT " iterations, ||b-Ax||/||b|| %.3e, %ld MPI_Allreduce\n", KSPConvergedReasons[reason], itsref, (double)refres, GKAllreduces - c0));
    if (!strcmp(expect, "converged")) PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "The reference KSPCG did not converge (%s): no reference", KSPConvergedReasons[reason]);
  }
  if (restol < 0) restol = 10.0 * PetscMax(refres, rtol);

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(SetCommon(ksp, A, pctype, rtol, nt, setnt));
  PetscCall(KSPSetType(ksp, KSPCACG));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp)); /* the preconditioner's set-up reductions are not the method's */
  for (PetscInt bi = 0; bi < nb; bi++) {
    KSPCACGBasisType basis;
    PetscCall(PetscEnumFind(KSPCACGBasisTypes, bases[bi], (PetscEnum *)&basis, &flg));
    PetscCheck(flg, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-bases: unknown basis %s", bases[bi]);
    for (PetscInt si = 0; si < ns; si++) {
      PetscCall(KSPCACGSetBasis(ksp, basis));
      PetscCall(KSPCACGSetS(ksp, slist[si]));
      for (PetscInt sv = 0; sv < solves; sv++) {
        PetscInt          its, sgot;
        KSPCACGStatistics st;
        PetscReal         res, dx, nx, emin, emax;
        long              c0 = GKAllreduces, nred;
        KSPCACGBasisType  bgot;
        char              tag[128];

        GKHookCalls = 0;
        PetscCall(VecSet(x, 0.0));
        PetscCall(KSPSolve(ksp, b, x));
        nred = GKAllreduces - c0;
        PetscCall(KSPGetIterationNumber(ksp, &its));
        PetscCall(KSPGetConvergedReason(ksp, &reason));
        PetscCall(KSPCACGGetStatistics(ksp, &st));
        PetscCall(KSPCACGGetS(ksp, &sgot));
        PetscCall(KSPCACGGetBasis(ksp, &bgot));
        PetscCall(KSPCACGGetEigenvalues(ksp, &emin, &emax));
        PetscCall(PetscSNPrintf(tag, sizeof(tag), "KSPCACG s=%" PetscInt_FMT " %s solve %" PetscInt_FMT, slist[si], bases[bi], sv + 1));
        /* the parameters took effect */
        PetscCall(GKCheck((PetscBool)(sgot == slist[si] && bgot == basis), "KSPCACGGetS/GetBasis return what was set"));
        PetscCall(TrueResidual(A, b, x, &res));
        PetscCall(VecWAXPY(xstar, -1.0, xref, x)); /* xstar is free now */
        PetscCall(VecNorm(xstar, NORM_2, &dx));
        PetscCall(VecNorm(xref, NORM_2, &nx));
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %s after %" PetscInt_FMT " iterations (CG %" PetscInt_FMT "), ||b-Ax||/||b|| %.3e, ||x-x_cg||/||x_cg|| %.3e; %" PetscInt_FMT " outer, %" PetscInt_FMT " CG steps, %" PetscInt_FMT " reductions (%ld MPI_Allreduce), %" PetscInt_FMT " replacements, %" PetscInt_FMT " truncations (s now %" PetscInt_FMT "), %" PetscInt_FMT " direct; spectrum [%.3g, %.3g]%s\n",
                              tag, KSPConvergedReasons[reason], its, itsref, (double)res, (double)(dx / nx), st.outer, st.cgsteps, st.reductions, nred, st.replacements, st.truncations, st.s, st.direct, (double)emin, (double)emax, hook ? (GKHookCalls ? ", hook used" : ", hook NOT used") : ""));
        if (strcmp(expect, "converged")) {
          PetscBool ok;
          if (!strcmp(expect, "indefinite_mat")) ok = (PetscBool)(reason == KSP_DIVERGED_INDEFINITE_MAT);
          else if (!strcmp(expect, "indefinite_pc")) ok = (PetscBool)(reason == KSP_DIVERGED_INDEFINITE_PC);
          else if (!strcmp(expect, "breakdown")) ok = (PetscBool)(reason == KSP_DIVERGED_BREAKDOWN);
          else if (!strcmp(expect, "diverged")) ok = (PetscBool)(reason < 0 && reason != KSP_DIVERGED_ITS);
          else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-expect %s: unknown", expect);
          if (!ok) {
            PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: expected %s, got %s\n", tag, expect, KSPConvergedReasons[reason]));
            fails++;
          }
          continue;
        }
        if (reason <= 0) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: did not converge (%s)\n", tag, KSPConvergedReasons[reason]));
          fails++;
          continue;
        }
        if (res > restol) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: true residual %.3e above %.3e\n", tag, (double)res, (double)restol));
          fails++;
        }
        if (dx > soltol * nx) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: solution differs from CG's by %.3e relative (tolerance %.3e)\n", tag, (double)(dx / nx), (double)soltol));
          fails++;
        }
        if (itstol >= 0 && (its > (1.0 + itstol) * itsref + 0.5 || its < (1.0 - itstol) * itsref - 0.5)) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: %" PetscInt_FMT " iterations, CG %" PetscInt_FMT ": more than %g%% apart\n", tag, its, itsref, (double)(100 * itstol)));
          fails++;
        }
        if (notrunc && st.truncations) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: the basis was truncated %" PetscInt_FMT " times\n", tag, st.truncations));
          fails++;
        }
        if (hook && !GKHookCalls) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: the MatMatrixPowers_C hook was not called\n", tag));
          fails++;
        }
        if (sv > 0 && basis != KSP_CACG_BASIS_MONOMIAL && st.cgsteps) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: the spectrum was estimated again with unchanged operators\n", tag));
          fails++;
        }
        /* one reduction per outer iteration: what the solver counted, and what MPI saw */
        {
          /* 1 initial, 2 per CG step of the estimate, 1 per outer iteration, 1 per direct finish, at most 1 for ||A||, 1 for the true residual check */
          PetscInt  expected = 3 + 2 * st.cgsteps + st.outer + st.direct;
          PetscReal per      = st.outer ? (PetscReal)(nred - 2 * st.cgsteps) / st.outer : 0.0;
          PetscReal lim      = maxred > 0 ? maxred : 1.0 + (6.0 + st.direct) / PetscMax(st.outer, 1);
          if (st.reductions > expected) {
            PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: %" PetscInt_FMT " reductions, expected at most %" PetscInt_FMT "\n", tag, st.reductions, expected));
            fails++;
          }
          if (size > 1 && per > lim) {
            PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: %.2f MPI_Allreduce per outer iteration (limit %.2f)\n", tag, (double)per, (double)lim));
            fails++;
          }
        }
      }
    }
  }
  PetscCall(KSPViewFromOptions(ksp, NULL, "-final_view"));
  PetscCheck(!fails, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%" PetscInt_FMT " checks failed", fails);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "all checks passed\n"));

  for (PetscInt bi = 0; bi < nb; bi++) PetscCall(PetscFree(bases[bi]));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(KSPDestroy(&ref));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xref));
  PetscCall(VecDestroy(&xstar));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
