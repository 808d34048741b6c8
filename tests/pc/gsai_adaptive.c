/*
   PCGSAI's adaptive pattern (-pc_gsai_pattern adaptive) against a brute-force dense reference computed here.

   -case ref (default): for every row k of N (M, M^T for the right type, G for spd) the reference grows the pattern by the
     documented rule from the dense matrix (LAPACK gelss least squares, or the FSAI row), round by round: residual
     r = x^T B(J,:) - e_k^T (spd: r_i = (x^T A)_i / sqrt(a_ii), i < k, i not in J), stop at the target residual, the cap or
     no candidate, else add the per_step indices with the largest |r_i| (single precision, ties to the smaller index).
     The pattern of N must be exactly the reference pattern, its values the least-squares (FSAI) optimum on it (relative
     -tol), and PCGSAIGetAdaptiveInfo()'s counts those of the reference. -exact_seq: M on several ranks bit for bit M on
     one rank. -view: PCView() must print the adaptive line. -reuse: rows (columns; spd both sides) of A scaled, set up again
     with SAME_NONZERO_PATTERN: the pattern must be kept and the values be the optimum of the new A on it.
   -case errors: bad values of PCGSAISetAdaptive() and the options give clear errors; the info of a non-adaptive set-up
     is refused; adaptive options with another pattern are reported as ignored.
   -case converge: GMRES (CG for spd) iterations with the adaptive pattern against the budgeted power pattern given at least
     as many nonzeros (cap ceil(nnz(M_adaptive) / n)): the adaptive one must need at most as many (-slack s: s more allowed).

   Problem: -f <file.mtx[.gz]> | -random <n> [-nper k] | -da <dim> -n <n> [-beta b].
*/
#include "gktest.h"
#include "gsaiprob.h"
#include <petscblaslapack.h>

typedef struct {
  PetscInt     n;
  PetscScalar *a; /* row-major */
  PetscBool   *s;
} Dense;

static PetscErrorCode DenseFromMat(Mat A, Dense *D)
{
  Mat                Aaij, *sub;
  IS                 all;
  PetscInt           n, nc;
  const PetscInt    *c;
  const PetscScalar *v;

  PetscFunctionBegin;
  PetscCall(MatGetSize(A, &n, NULL));
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &Aaij));
  PetscCall(ISCreateStride(PETSC_COMM_SELF, n, 0, 1, &all));
  PetscCall(MatCreateSubMatrices(Aaij, 1, &all, &all, MAT_INITIAL_MATRIX, &sub));
  D->n = n;
  PetscCall(PetscCalloc2(n * n, &D->a, n * n, &D->s));
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(MatGetRow(sub[0], i, &nc, &c, &v));
    for (PetscInt e = 0; e < nc; e++) {
      D->a[i * n + c[e]] = v[e];
      D->s[i * n + c[e]] = PETSC_TRUE;
    }
    PetscCall(MatRestoreRow(sub[0], i, &nc, &c, &v));
  }
  PetscCall(MatDestroySubMatrices(1, &sub));
  PetscCall(ISDestroy(&all));
  PetscCall(MatDestroy(&Aaij));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DenseDestroy(Dense *D)
{
  PetscFunctionBegin;
  PetscCall(PetscFree2(D->a, D->s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void DenseTransposeInPlace(Dense *D)
{
  const PetscInt n = D->n;
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt j = i + 1; j < n; j++) {
      PetscScalar t     = D->a[i * n + j];
      PetscBool   u     = D->s[i * n + j];
      D->a[i * n + j]   = D->a[j * n + i];
      D->a[j * n + i]   = t;
      D->s[i * n + j]   = D->s[j * n + i];
      D->s[j * n + i]   = u;
    }
}

/* least squares min || B(J,:)^T x - e_k || by gelss; *res: the residual norm */
static PetscErrorCode RefLS(const Dense *B, PetscInt k, PetscInt nJ, const PetscInt *J, PetscScalar *x, PetscScalar *r, PetscReal *res)
{
  const PetscInt n = B->n;
  PetscScalar   *C, *rhs, *work;
  PetscReal     *sv, rcond = -1.0, r2 = 0.0;
  PetscBLASInt   m, nn, one = 1, rank, lwork, info;

  PetscFunctionBegin;
  PetscCall(PetscBLASIntCast(n, &m));
  PetscCall(PetscBLASIntCast(nJ, &nn));
  lwork = 5 * (m + nn) + 64 * (m + nn);
  PetscCall(PetscMalloc4(n * nJ, &C, n, &rhs, nJ, &sv, lwork, &work));
  for (PetscInt c = 0; c < nJ; c++)
    for (PetscInt i = 0; i < n; i++) C[c * n + i] = B->a[J[c] * n + i];
  for (PetscInt i = 0; i < n; i++) rhs[i] = (i == k) ? 1.0 : 0.0;
  PetscCallBLAS("LAPACKgelss", LAPACKgelss_(&m, &nn, &one, C, &m, rhs, &m, sv, &rcond, &rank, work, &lwork, &info));
  PetscCheck(info == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "gelss failed: %d", (int)info);
  for (PetscInt c = 0; c < nJ; c++) x[c] = rhs[c];
  for (PetscInt i = 0; i < n; i++) {
    PetscScalar t = (i == k) ? -1.0 : 0.0;
    for (PetscInt c = 0; c < nJ; c++) t += B->a[J[c] * n + i] * x[c];
    r[i] = t;
    r2 += PetscRealPart(t * t);
  }
  *res = PetscSqrtReal(r2);
  PetscCall(PetscFree4(C, rhs, sv, work));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* FSAI row on J (sorted, last = k) from the symmetric matrix that A dominates; r_i = (x^T A)_i / sqrt(a_ii) for i < k not in J */
static PetscErrorCode RefFSAI(const Dense *A, PetscInt k, PetscInt nJ, const PetscInt *J, PetscScalar *x, PetscScalar *r, PetscReal *res)
{
  const PetscInt n = A->n;
  PetscScalar   *S, *rhs, *work;
  PetscReal     *sv, rcond = -1.0, r2 = 0.0;
  PetscBLASInt   m, one = 1, rank, lwork, info;

  PetscFunctionBegin;
  PetscCall(PetscBLASIntCast(nJ, &m));
  lwork = 64 * (m + 1);
  PetscCall(PetscMalloc4(nJ * nJ, &S, nJ, &rhs, nJ, &sv, lwork, &work));
  for (PetscInt a = 0; a < nJ; a++)
    for (PetscInt b = 0; b < nJ; b++) {
      const PetscInt  hi = PetscMax(J[a], J[b]), lo = PetscMin(J[a], J[b]);
      const PetscReal p = PetscRealPart(A->a[hi * n + lo]), q = PetscRealPart(A->a[lo * n + hi]);
      S[a + b * nJ]     = (a == b) ? A->a[hi * n + lo] : ((p > 0 && q > 0) ? PetscMin(p, q) : ((p < 0 && q < 0) ? PetscMax(p, q) : 0.0));
    }
  for (PetscInt a = 0; a < nJ; a++) rhs[a] = (J[a] == k) ? 1.0 : 0.0;
  PetscCallBLAS("LAPACKgelss", LAPACKgelss_(&m, &m, &one, S, &m, rhs, &m, sv, &rcond, &rank, work, &lwork, &info));
  PetscCheck(info == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "gelss failed: %d", (int)info);
  PetscCheck(PetscRealPart(rhs[nJ - 1]) > 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "reference FSAI: g_k <= 0 in row %" PetscInt_FMT, k);
  for (PetscInt a = 0; a < nJ; a++) x[a] = rhs[a] / PetscSqrtScalar(rhs[nJ - 1]);
  for (PetscInt i = 0; i < n; i++) {
    PetscBool inJ = PETSC_FALSE;
    r[i]          = 0.0;
    for (PetscInt c = 0; c < nJ; c++) inJ = (inJ || J[c] == i) ? PETSC_TRUE : PETSC_FALSE;
    if (i >= k || inJ) continue;
    for (PetscInt c = 0; c < nJ; c++) r[i] += x[c] * A->a[J[c] * n + i];
    r[i] = PetscRealPart(A->a[i * n + i]) > 0 ? r[i] / PetscSqrtReal(PetscRealPart(A->a[i * n + i])) : 0.0;
    r2 += PetscRealPart(r[i] * r[i]);
  }
  *res = PetscSqrtReal(r2);
  PetscCall(PetscFree4(S, rhs, sv, work));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  float    w;
  PetscInt j;
} Cand;

static int CandCmp(const void *x, const void *y)
{
  const Cand *a = (const Cand *)x, *b = (const Cand *)y;
  if (a->w != b->w) return a->w > b->w ? -1 : 1;
  return a->j < b->j ? -1 : (a->j > b->j ? 1 : 0);
}

static int IntCmp(const void *x, const void *y)
{
  const PetscInt a = *(const PetscInt *)x, b = *(const PetscInt *)y;
  return a < b ? -1 : (a > b ? 1 : 0);
}

static PetscErrorCode CaseRef(PC pc, Mat A, PetscReal tol)
{
  PCGSAIType        type;
  PCGSAIPatternType pattern;
  PCSide            side;
  PetscInt          maxnnz, steps, perstep, n, nmet = 0, nmetpc, ncappedpc, ncapped = 0, denselimit, nnzB = 0;
  PetscReal         target, ratio, maxres, refmax = 0.0;
  Mat               M;
  Dense             B, N;
  PetscScalar      *x, *r;
  PetscInt         *J;
  Cand             *cand;

  PetscFunctionBegin;
  PetscCall(PCSetUp(pc));
  PetscCall(PCGSAIGetSetUpChoices(pc, &type, &pattern, NULL, NULL, &maxnnz));
  PetscCheck(pattern == PCGSAI_PATTERN_ADAPTIVE, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "run with -pc_gsai_pattern adaptive");
  PetscCall(PCGSAIGetAdaptive(pc, &steps, &perstep, &target));
  PetscCall(PCGSAIGetSide(pc, &side));
  PetscCall(PCGSAIGetAdaptiveInfo(pc, &nmetpc, &ncappedpc, &ratio, &maxres));
  PetscCall(PCGSAIGetMatrix(pc, &M));
  PetscCall(DenseFromMat(A, &B));
  PetscCall(DenseFromMat(M, &N));
  n = B.n;
  if (type == PCGSAI_GENERAL && side == PC_RIGHT) { /* B = A^T, N = M^T */
    DenseTransposeInPlace(&B);
    DenseTransposeInPlace(&N);
  }
  for (PetscInt i = 0; i < n * n; i++) nnzB += B.s[i] ? 1 : 0;
  denselimit = PetscMax(64, (PetscInt)PetscCeilReal(10.0 * (PetscReal)nnzB / (PetscReal)n));
  PetscCall(PetscMalloc4(n, &x, n, &r, n, &J, n, &cand));
  for (PetscInt k = 0; k < n; k++) {
    const PetscInt cap = maxnnz > 0 ? PetscMin(maxnnz, n) : n, room = PetscMin(cap, 1 + steps * perstep);
    PetscInt       nJ = 1, nN = 0;
    PetscReal      res = 1.0;
    PetscCheck(B.a[k * n + k] != 0.0, PETSC_COMM_SELF, PETSC_ERR_SUP, "the reference handles a nonzero diagonal only (row %" PetscInt_FMT ")", k);
    J[0] = k;
    for (PetscInt s = 0; s <= steps; s++) {
      PetscInt nc = 0, na;
      if (type == PCGSAI_SPD) PetscCall(RefFSAI(&B, k, nJ, J, x, r, &res));
      else PetscCall(RefLS(&B, k, nJ, J, x, r, &res));
      if (s == steps || res <= target || nJ >= room) break;
      for (PetscInt i = 0; i < n; i++) {
        PetscBool inJ = PETSC_FALSE, dense;
        PetscInt  cnt = 0;
        for (PetscInt c = 0; c < nJ; c++) inJ = (inJ || J[c] == i) ? PETSC_TRUE : PETSC_FALSE;
        for (PetscInt j = 0; j < n; j++) cnt += B.s[i * n + j] ? 1 : 0;
        dense = cnt > denselimit ? PETSC_TRUE : PETSC_FALSE;
        if (inJ || dense || PetscAbsScalar(r[i]) <= 1e-10 || (type == PCGSAI_SPD && i >= k)) continue;
        cand[nc].w   = (float)PetscAbsScalar(r[i]);
        cand[nc++].j = i;
      }
      if (!nc) break;
      qsort(cand, (size_t)nc, sizeof(Cand), CandCmp);
      na = PetscMin(perstep, PetscMin(nc, room - nJ));
      for (PetscInt a = 0; a < na; a++) J[nJ++] = cand[a].j;
      qsort(J, (size_t)nJ, sizeof(PetscInt), IntCmp);
    }
    if (res <= target) nmet++;
    else if (nJ >= cap) ncapped++;
    refmax = PetscMax(refmax, res);
    /* the pattern of row k of N is J, its values x (the optimum on J) */
    for (PetscInt j = 0; j < n; j++) nN += N.s[k * n + j] ? 1 : 0;
    if (nN != nJ) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "row %" PetscInt_FMT ": reference pattern", k));
      for (PetscInt c = 0; c < nJ; c++) PetscCall(PetscPrintf(PETSC_COMM_SELF, " %" PetscInt_FMT, J[c]));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "; PCGSAI's"));
      for (PetscInt j = 0; j < n; j++)
        if (N.s[k * n + j]) PetscCall(PetscPrintf(PETSC_COMM_SELF, " %" PetscInt_FMT, j));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "\n"));
    }
    PetscCheck(nN == nJ, PETSC_COMM_SELF, PETSC_ERR_PLIB, "row %" PetscInt_FMT " of N has %" PetscInt_FMT " entries, the reference pattern %" PetscInt_FMT, k, nN, nJ);
    for (PetscInt c = 0; c < nJ; c++) {
      const PetscScalar v = N.a[k * n + J[c]];
      PetscCheck(N.s[k * n + J[c]], PETSC_COMM_SELF, PETSC_ERR_PLIB, "row %" PetscInt_FMT " of N lacks the reference entry %" PetscInt_FMT, k, J[c]);
      PetscCheck(PetscAbsScalar(v - x[c]) <= tol * (PetscAbsScalar(x[c]) + 1e-300) || PetscAbsScalar(v - x[c]) <= tol * 1e-3, PETSC_COMM_SELF, PETSC_ERR_PLIB, "N(%" PetscInt_FMT ",%" PetscInt_FMT ") = %.15g, the least-squares optimum on the pattern %.15g", k, J[c], (double)PetscRealPart(v), (double)PetscRealPart(x[c]));
    }
  }
  PetscCheck(nmet == nmetpc, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "rows that met the target: PCGSAI %" PetscInt_FMT ", reference %" PetscInt_FMT, nmetpc, nmet);
  PetscCheck(ncapped == ncappedpc, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "rows stopped at the cap: PCGSAI %" PetscInt_FMT ", reference %" PetscInt_FMT, ncappedpc, ncapped);
  PetscCheck(PetscAbsReal(refmax - maxres) <= 1e-8, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "largest residual: PCGSAI %g, reference %g", (double)maxres, (double)refmax);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "adaptive %s%s: n %" PetscInt_FMT ", steps %" PetscInt_FMT ", per step %" PetscInt_FMT ", target %g, cap %" PetscInt_FMT ": pattern and values equal the reference; nnz(M)/nnz(A) %.3f, %" PetscInt_FMT " rows met the target, %" PetscInt_FMT " capped, largest residual %.3g\n", type == PCGSAI_SPD ? "spd" : "general", type == PCGSAI_SPD ? "" : (side == PC_RIGHT ? " right" : " left"), n, steps, perstep, (double)target, maxnnz, (double)ratio, nmet, ncapped, (double)maxres));
  PetscCall(PetscFree4(x, r, J, cand));
  PetscCall(DenseDestroy(&B));
  PetscCall(DenseDestroy(&N));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* SAME_NONZERO_PATTERN: A's rows (columns for the right type; both for spd) scaled, set up again: the pattern is kept and
   every row's values are the optimum of the new B on it */
static PetscErrorCode CheckReuse(PC pc, Mat A, PetscReal tol)
{
  PCGSAIType   type;
  PCSide       side;
  Mat          M;
  Dense        N0, N1, B;
  Vec          r;
  PetscRandom  rnd;
  PetscInt     n;
  PetscScalar *x, *rr;
  PetscInt    *J;
  PetscReal    res;

  PetscFunctionBegin;
  PetscCall(PCGSAIGetSetUpChoices(pc, &type, NULL, NULL, NULL, NULL));
  PetscCall(PCGSAIGetSide(pc, &side));
  PetscCall(PCGSAIGetMatrix(pc, &M));
  PetscCall(DenseFromMat(M, &N0));
  PetscCall(MatCreateVecs(A, &r, NULL));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, 0.5, 4.0));
  PetscCall(PetscRandomSetSeed(rnd, 7));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(r, rnd));
  if (type == PCGSAI_SPD) PetscCall(MatDiagonalScale(A, r, r));
  else PetscCall(MatDiagonalScale(A, side == PC_RIGHT ? NULL : r, side == PC_RIGHT ? r : NULL));
  PetscCall(PCSetOperators(pc, A, A));
  PetscCall(PCSetUp(pc));
  PetscCall(PCGSAIGetMatrix(pc, &M));
  PetscCall(DenseFromMat(M, &N1));
  PetscCall(DenseFromMat(A, &B));
  n = B.n;
  if (type == PCGSAI_GENERAL && side == PC_RIGHT) {
    DenseTransposeInPlace(&B);
    DenseTransposeInPlace(&N0);
    DenseTransposeInPlace(&N1);
  }
  PetscCall(PetscMalloc3(n, &x, n, &rr, n, &J));
  for (PetscInt k = 0; k < n; k++) {
    PetscInt nJ = 0;
    for (PetscInt j = 0; j < n; j++) {
      PetscCheck(N0.s[k * n + j] == N1.s[k * n + j], PETSC_COMM_SELF, PETSC_ERR_PLIB, "SAME_NONZERO_PATTERN changed the pattern of row %" PetscInt_FMT " at %" PetscInt_FMT, k, j);
      if (N0.s[k * n + j]) J[nJ++] = j;
    }
    if (type == PCGSAI_SPD) PetscCall(RefFSAI(&B, k, nJ, J, x, rr, &res));
    else PetscCall(RefLS(&B, k, nJ, J, x, rr, &res));
    for (PetscInt c = 0; c < nJ; c++) {
      const PetscScalar v = N1.a[k * n + J[c]];
      PetscCheck(PetscAbsScalar(v - x[c]) <= tol * PetscAbsScalar(x[c]) || PetscAbsScalar(v - x[c]) <= tol * 1e-3, PETSC_COMM_SELF, PETSC_ERR_PLIB, "after SAME_NONZERO_PATTERN N(%" PetscInt_FMT ",%" PetscInt_FMT ") = %.15g, the optimum on the kept pattern %.15g", k, J[c], (double)PetscRealPart(v), (double)PetscRealPart(x[c]));
    }
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "SAME_NONZERO_PATTERN: the adaptive pattern is kept, the values are the optimum of the new A on it\n"));
  PetscCall(PetscFree3(x, rr, J));
  PetscCall(DenseDestroy(&N0));
  PetscCall(DenseDestroy(&N1));
  PetscCall(DenseDestroy(&B));
  PetscCall(VecDestroy(&r));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ExactSeq(PC pc, Mat A)
{
  Mat         Aseq, *sub, M, Mseq;
  IS          all;
  PC          pcs;
  PetscInt    N;
  Dense       Dp, Ds;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &Aseq));
  PetscCall(ISCreateStride(PETSC_COMM_SELF, N, 0, 1, &all));
  PetscCall(MatCreateSubMatrices(Aseq, 1, &all, &all, MAT_INITIAL_MATRIX, &sub));
  PetscCall(PCCreate(PETSC_COMM_SELF, &pcs));
  PetscCall(PCSetType(pcs, PCGSAI));
  PetscCall(PCSetOperators(pcs, sub[0], sub[0]));
  PetscCall(PCGSAISetPattern(pcs, PCGSAI_PATTERN_ADAPTIVE));
  PetscCall(PCSetFromOptions(pcs));
  PetscCall(PCSetUp(pcs));
  PetscCall(PCGSAIGetMatrix(pc, &M));
  PetscCall(PCGSAIGetMatrix(pcs, &Mseq));
  PetscCall(DenseFromMat(M, &Dp));
  PetscCall(DenseFromMat(Mseq, &Ds));
  for (PetscInt i = 0; i < N * N; i++) {
    PetscCheck(Dp.s[i] == Ds.s[i], PETSC_COMM_SELF, PETSC_ERR_PLIB, "M on %d ranks and on one rank differ in pattern at (%" PetscInt_FMT ",%" PetscInt_FMT ")", size, i / N, i % N);
    PetscCheck(Dp.a[i] == Ds.a[i], PETSC_COMM_SELF, PETSC_ERR_PLIB, "M on %d ranks and on one rank differ at (%" PetscInt_FMT ",%" PetscInt_FMT "): %.17g vs %.17g", size, i / N, i % N, (double)PetscRealPart(Dp.a[i]), (double)PetscRealPart(Ds.a[i]));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "adaptive M on %d ranks is bit for bit M on one rank\n", size));
  PetscCall(DenseDestroy(&Dp));
  PetscCall(DenseDestroy(&Ds));
  PetscCall(PCDestroy(&pcs));
  PetscCall(MatDestroySubMatrices(1, &sub));
  PetscCall(ISDestroy(&all));
  PetscCall(MatDestroy(&Aseq));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckContains(const char *text, const char *what)
{
  char *found;

  PetscFunctionBegin;
  PetscCall(PetscStrstr(text, what, &found));
  if (!found) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PCView:\n%s\n", text));
  PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "PCView does not say \"%s\"", what);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CaseErrors(Mat A)
{
  PC             pc;
  PetscErrorCode ierr;
  PetscInt       s, p;
  PetscReal      t;
  static char    text[8192];

  PetscFunctionBegin;
  PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
  PetscCall(PCSetType(pc, PCGSAI));
  PetscCall(PCSetOperators(pc, A, A));
  PetscCall(GKExpectErrorBegin());
  ierr = PCGSAISetAdaptive(pc, 0, 2, 0.1);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "steps must be 1 or more", "adaptive steps 0"));
  PetscCall(GKExpectErrorBegin());
  ierr = PCGSAISetAdaptive(pc, 3, 0, 0.1);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "entries per step must be 1 or more", "adaptive per step 0"));
  PetscCall(GKExpectErrorBegin());
  ierr = PCGSAISetAdaptive(pc, 3, 2, -0.5);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "target residual must lie in [0, 1)", "adaptive tol -0.5"));
  PetscCall(GKExpectErrorBegin());
  ierr = PCGSAISetAdaptive(pc, 3, 2, 1.0);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "target residual must lie in [0, 1)", "adaptive tol 1"));
  /* the option goes through the same check */
  PetscCall(PetscOptionsSetValue(NULL, "-pc_gsai_adaptive_per_step", "-3"));
  PetscCall(GKExpectErrorBegin());
  ierr = PCSetFromOptions(pc);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "entries per step must be 1 or more", "-pc_gsai_adaptive_per_step -3"));
  PetscCall(PetscOptionsClearValue(NULL, "-pc_gsai_adaptive_per_step"));
  /* nothing changed by the refused calls; PETSC_DEFAULT restores the defaults */
  PetscCall(PCGSAIGetAdaptive(pc, &s, &p, &t));
  PetscCheck(s == 5 && p == 2 && t == 0.1, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "adaptive defaults changed: %" PetscInt_FMT " %" PetscInt_FMT " %g", s, p, (double)t);
  PetscCall(PCGSAISetAdaptive(pc, 4, 3, 0.25));
  PetscCall(PCGSAIGetAdaptive(pc, &s, &p, &t));
  PetscCheck(s == 4 && p == 3 && t == 0.25, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "PCGSAISetAdaptive() not kept");
  /* info before any set-up, and after a set-up with another pattern */
  PetscCall(GKExpectErrorBegin());
  ierr = PCGSAIGetAdaptiveInfo(pc, NULL, NULL, NULL, NULL);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_WRONGSTATE, "call PCSetUp()", "adaptive info before PCSetUp()"));
  PetscCall(PCGSAISetPattern(pc, PCGSAI_PATTERN_POWER));
  PetscCall(PCSetUp(pc));
  PetscCall(GKExpectErrorBegin());
  ierr = PCGSAIGetAdaptiveInfo(pc, NULL, NULL, NULL, NULL);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_WRONGSTATE, "not set up with the adaptive pattern", "adaptive info of a power pattern"));
  PetscCall(GKPCViewToString(pc, text, sizeof(text)));
  PetscCall(CheckContains(text, "have no effect unless -pc_gsai_pattern adaptive"));
  /* the adaptive pattern: PCView's line, and threshold/power reported as ignored */
  PetscCall(PCGSAISetPattern(pc, PCGSAI_PATTERN_ADAPTIVE));
  PetscCall(PCGSAISetThreshold(pc, 0.5));
  PetscCall(PCSetUp(pc));
  PetscCall(GKPCViewToString(pc, text, sizeof(text)));
  PetscCall(CheckContains(text, "pattern adaptive"));
  PetscCall(CheckContains(text, "4 steps, 3 entries per step, target residual 0.25"));
  PetscCall(CheckContains(text, "/nnz(A) = "));
  PetscCall(CheckContains(text, "met the target residual"));
  PetscCall(CheckContains(text, "-pc_gsai_threshold and -pc_gsai_power have no effect with -pc_gsai_pattern adaptive"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "adaptive errors: ok\n"));
  PetscCall(PCDestroy(&pc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SolveWith(Mat A, Vec b, PetscBool adaptive, PetscInt cap, PetscInt *its, PetscInt *nnz)
{
  KSP                ksp;
  PC                 pc;
  Vec                x;
  KSPConvergedReason reason;
  PCGSAIType         type;

  PetscFunctionBegin;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPGMRES));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 5000));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCGSAI));
  PetscCall(KSPSetFromOptions(ksp));
  if (!adaptive) { /* the budgeted power pattern at the given cap */
    PetscCall(PCGSAISetPattern(pc, PCGSAI_PATTERN_POWER));
    PetscCall(PCGSAISetThreshold(pc, 1.0));
    PetscCall(PCGSAISetPower(pc, 2));
    PetscCall(PCGSAISetMaxNnz(pc, cap));
  } else PetscCall(PCGSAISetPattern(pc, PCGSAI_PATTERN_ADAPTIVE));
  PetscCall(KSPSetUp(ksp));
  PetscCall(PCGSAIGetSetUpChoices(pc, &type, NULL, NULL, NULL, NULL));
  if (type == PCGSAI_SPD) PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  if (reason < 0) *its = -1;
  PetscCall(PCGSAIGetSetUpInfo(pc, nnz, NULL, NULL));
  PetscCall(VecDestroy(&x));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CaseConverge(Mat A, PetscInt slack)
{
  Vec         b, xt;
  PetscRandom r;
  PetscInt    n, ita, its, nnza, nnzs, cap;

  PetscFunctionBegin;
  PetscCall(MatGetSize(A, &n, NULL));
  PetscCall(MatCreateVecs(A, &xt, &b));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &r));
  PetscCall(PetscRandomSetSeed(r, 42));
  PetscCall(PetscRandomSeed(r));
  PetscCall(VecSetRandom(xt, r));
  PetscCall(MatMult(A, xt, b));
  PetscCall(SolveWith(A, b, PETSC_TRUE, 0, &ita, &nnza));
  cap = (nnza + n - 1) / n;
  PetscCall(SolveWith(A, b, PETSC_FALSE, cap, &its, &nnzs));
  for (PetscInt c = cap + 1; nnzs < nnza && c <= cap + 8; c++) PetscCall(SolveWith(A, b, PETSC_FALSE, c, &its, &nnzs));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "adaptive: %" PetscInt_FMT " iterations with nnz(M) %" PetscInt_FMT "; power pattern (threshold 1, power 2, cap %" PetscInt_FMT "): %" PetscInt_FMT " iterations with nnz(M) %" PetscInt_FMT " (-1: not converged)\n", ita, nnza, cap, its, nnzs));
  PetscCheck(ita >= 0, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "the adaptive pattern did not converge");
  PetscCheck(nnzs >= nnza, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "could not give the static pattern as many nonzeros");
  PetscCheck(its < 0 || ita <= its + slack, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the adaptive pattern needed %" PetscInt_FMT " iterations, the static one %" PetscInt_FMT " with at least as many nonzeros", ita, its);
  PetscCall(PetscRandomDestroy(&r));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat       A;
  DM        da = NULL;
  PC        pc;
  char      file[PETSC_MAX_PATH_LEN] = "", cs[32] = "ref";
  PetscInt  nrand = 0, nper = 4, dim = 0, n = 8, slack = 0;
  PetscReal tol = 1e-8, beta = 0.0;
  PetscBool exactseq = PETSC_FALSE, view = PETSC_FALSE, reuse = PETSC_FALSE, isref, iserr, isconv;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-case", cs, sizeof(cs), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-random", &nrand, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-nper", &nper, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-da", &dim, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-beta", &beta, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &tol, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-slack", &slack, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-exact_seq", &exactseq, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-view", &view, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-reuse", &reuse, NULL));
  PetscCall(PetscStrcmp(cs, "ref", &isref));
  PetscCall(PetscStrcmp(cs, "errors", &iserr));
  PetscCall(PetscStrcmp(cs, "converge", &isconv));
  PetscCheck(isref || iserr || isconv, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-case ref, errors or converge, not %s", cs);

  if (file[0]) PetscCall(GKLoadMatrixMarket(PETSC_COMM_WORLD, file, MATAIJ, &A));
  else if (nrand) PetscCall(GKRandomMatrix(PETSC_COMM_WORLD, nrand, nper, PETSC_FALSE, &A));
  else {
    PetscCheck(dim == 2 || dim == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "give -f <file>, -random <n> or -da 2|3");
    PetscCall(GKDMDAOperator(PETSC_COMM_WORLD, dim, n, beta, &da, &A));
  }
  if (iserr) PetscCall(CaseErrors(A));
  else if (isconv) PetscCall(CaseConverge(A, slack));
  else {
    PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
    PetscCall(PCSetType(pc, PCGSAI));
    PetscCall(PCSetOperators(pc, A, A));
    PetscCall(PCGSAISetPattern(pc, PCGSAI_PATTERN_ADAPTIVE));
    PetscCall(PCSetFromOptions(pc));
    PetscCall(CaseRef(pc, A, tol));
    if (view) {
      static char text[8192];
      PetscCall(GKPCViewToString(pc, text, sizeof(text)));
      PetscCall(CheckContains(text, "met the target residual"));
      PetscCall(PCView(pc, PETSC_VIEWER_STDOUT_WORLD));
    }
    if (exactseq) PetscCall(ExactSeq(pc, A));
    if (reuse) PetscCall(CheckReuse(pc, A, tol));
    PetscCall(PCDestroy(&pc));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "gsai_adaptive: ok\n"));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
