/*
   PCGSAI: a static sparse approximate inverse preconditioner (seed 004, chapter 5), host set-up for one or
   more ranks, and the PC itself (apply, view, options, public functions). The device set-up for a
   MATSEQAIJCUSPARSE matrix is in gsaicuda.cu; both compute the same M (see gsaiimpl.h for the formulation).

   Host set-up, on every rank for its own rows of N:
     1. B: A (left, spd) or A^T (right), as a matrix whose rows can be read (converted to AIJ if needed).
     2. Rows: the rows of B that the pattern and the local problems need; on several ranks they come from the
        other ranks through MatCreateSubMatrices().
     3. Pattern: J_k for every local row k (threshold, powers, lower part for spd, cap).
     4. Solve: one dense Householder QR least-squares problem (general) or Cholesky solve (spd) per row.
     5. Assemble: N as MATAIJ with exact preallocation; M = N, N^T (right) or G = N (spd).
   Every step visits rows, entries and columns in increasing global order, so M does not depend on the
   number of ranks.
*/
#include <petsctime.h>
#include "gsaiimpl.h"

const char *const PCGSAITypes[]        = {"general", "spd", "PCGSAIType", "PCGSAI_", NULL};
const char *const PCGSAIPatternTypes[] = {"a", "threshold", "power", "PCGSAIPatternType", "PCGSAI_PATTERN_", NULL};
const char *const GSAIStageNames[]     = {"rows", "pattern", "solve", "assemble"};

PetscLogEvent PC_GSAI_SetUp, PC_GSAI_Rows, PC_GSAI_Pattern, PC_GSAI_Solve, PC_GSAI_Assemble, PC_GSAI_PatternCUDA, PC_GSAI_DimsCUDA, PC_GSAI_SolveCUDA, PC_GSAI_AssembleCUDA;

/* ------------------------------------------------------------------------------------------------------
   A local copy of some rows of B, with global column numbers and a compact numbering of those columns
   ------------------------------------------------------------------------------------------------------ */
typedef struct {
  PetscInt     n;   /* rows held */
  PetscInt    *gid; /* their global numbers, increasing */
  PetscInt    *ptr; /* n+1 */
  PetscInt    *col; /* global columns, increasing within a row */
  PetscScalar *val;
  PetscInt     nu;    /* distinct numbers among the columns and gid */
  PetscInt    *ucol;  /* them, increasing: compact number -> global number */
  PetscInt    *lcol;  /* compact number of every col[] */
  PetscInt    *rowof; /* compact number -> row held, or -1 */
} GSAIRows;

static PetscErrorCode GSAIRowsDestroy(GSAIRows *R)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(R->gid));
  PetscCall(PetscFree3(R->ptr, R->col, R->val));
  PetscCall(PetscFree3(R->ucol, R->lcol, R->rowof));
  PetscCall(PetscMemzero(R, sizeof(*R)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* R holds rows roff .. roff+n-1 of S (MatGetRow() numbering), which are rows gid[0..n-1] of B; takes gid */
static PetscErrorCode GSAIRowsCreate(Mat S, PetscInt roff, PetscInt n, PetscInt *gid, GSAIRows *R)
{
  PetscInt           nnz = 0, ncols, nall;
  const PetscInt    *cols;
  const PetscScalar *vals;
  PetscInt          *all;

  PetscFunctionBegin;
  R->n   = n;
  R->gid = gid;
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(MatGetRow(S, roff + i, &ncols, NULL, NULL));
    nnz += ncols;
    PetscCall(MatRestoreRow(S, roff + i, &ncols, NULL, NULL));
  }
  PetscCall(PetscMalloc3(n + 1, &R->ptr, nnz, &R->col, nnz, &R->val));
  R->ptr[0] = 0;
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(MatGetRow(S, roff + i, &ncols, &cols, &vals));
    for (PetscInt e = 0; e < ncols; e++) {
      R->col[R->ptr[i] + e] = cols[e];
      R->val[R->ptr[i] + e] = vals[e];
      PetscCheck(e == 0 || cols[e] > cols[e - 1], PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRow() of %s gave unsorted columns in row %" PetscInt_FMT, ((PetscObject)S)->type_name, gid[i]);
    }
    R->ptr[i + 1] = R->ptr[i] + ncols;
    PetscCall(MatRestoreRow(S, roff + i, &ncols, &cols, &vals));
  }
  /* compact numbering of every column and row number that occurs */
  nall = nnz + n;
  PetscCall(PetscMalloc1(nall, &all));
  PetscCall(PetscArraycpy(all, R->col, nnz));
  PetscCall(PetscArraycpy(all + nnz, gid, n));
  PetscCall(PetscSortRemoveDupsInt(&nall, all));
  R->nu = nall;
  PetscCall(PetscMalloc3(nall, &R->ucol, nnz, &R->lcol, nall, &R->rowof));
  PetscCall(PetscArraycpy(R->ucol, all, nall));
  PetscCall(PetscFree(all));
  for (PetscInt e = 0; e < nnz; e++) PetscCall(PetscFindInt(R->col[e], nall, R->ucol, &R->lcol[e]));
  for (PetscInt u = 0; u < nall; u++) R->rowof[u] = -1;
  for (PetscInt i = 0; i < n; i++) {
    PetscInt u;
    PetscCall(PetscFindInt(gid[i], nall, R->ucol, &u));
    R->rowof[u] = i;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the row held for global row g (-1 if none) */
static inline PetscInt GSAIRowsFind(const GSAIRows *R, PetscInt g)
{
  PetscInt lo = 0, hi = R->n;
  while (lo < hi) {
    PetscInt mid = (lo + hi) / 2;
    if (R->gid[mid] < g) lo = mid + 1;
    else hi = mid;
  }
  return (lo < R->n && R->gid[lo] == g) ? lo : -1;
}

/* the compact number of global column g (-1 if none) */
static inline PetscInt GSAIRowsCompact(const GSAIRows *R, PetscInt g)
{
  PetscInt lo = 0, hi = R->nu;
  while (lo < hi) {
    PetscInt mid = (lo + hi) / 2;
    if (R->ucol[mid] < g) lo = mid + 1;
    else hi = mid;
  }
  return (lo < R->nu && R->ucol[lo] == g) ? lo : -1;
}

/* the rows of B with the global numbers in rows (sorted), from every rank: kept in *sub for reuse */
static PetscErrorCode GSAIFetch(Mat B, IS rows, MatReuse reuse, Mat **sub, GSAIRows *R)
{
  IS              all;
  PetscInt        n, *gid;
  const PetscInt *idx;

  PetscFunctionBegin;
  PetscCall(ISCreateStride(PETSC_COMM_SELF, B->cmap->N, 0, 1, &all));
  PetscCall(MatCreateSubMatrices(B, 1, &rows, &all, reuse, sub));
  PetscCall(ISDestroy(&all));
  PetscCall(ISGetLocalSize(rows, &n));
  PetscCall(ISGetIndices(rows, &idx));
  PetscCall(PetscMalloc1(n, &gid));
  PetscCall(PetscArraycpy(gid, idx, n));
  PetscCall(ISRestoreIndices(rows, &idx));
  PetscCall(GSAIRowsCreate((*sub)[0], 0, n, gid, R));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Pattern
   ------------------------------------------------------------------------------------------------------ */

/* sparse accumulator over the compact numbers of a GSAIRows */
typedef struct {
  PetscBool *in;   /* nu: touched */
  PetscInt  *list; /* compact numbers touched */
  PetscReal *w;    /* nu: weights */
  PetscInt   n;
} GSAIAccum;

static PetscErrorCode GSAIAccumCreate(PetscInt nu, GSAIAccum *a)
{
  PetscFunctionBegin;
  PetscCall(PetscCalloc3(nu, &a->in, nu, &a->list, nu, &a->w));
  a->n = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GSAIAccumDestroy(GSAIAccum *a)
{
  PetscFunctionBegin;
  PetscCall(PetscFree3(a->in, a->list, a->w));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline void GSAIAccumAdd(GSAIAccum *a, PetscInt u, PetscReal w)
{
  if (!a->in[u]) {
    a->in[u]        = PETSC_TRUE;
    a->list[a->n++] = u;
  }
  a->w[u] += w;
}

static inline void GSAIAccumClear(GSAIAccum *a)
{
  for (PetscInt i = 0; i < a->n; i++) {
    a->in[a->list[i]] = PETSC_FALSE;
    a->w[a->list[i]]  = 0.0;
  }
  a->n = 0;
}

/* sort the accumulator's list by compact (= global) number */
static PetscErrorCode GSAIAccumSort(GSAIAccum *a)
{
  PetscFunctionBegin;
  PetscCall(PetscSortInt(a->n, a->list));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* add weight * |T(r,:)| to a, T = the thresholded row r of B plus its diagonal (weight |b_rr|, 0 if not stored) */
static void GSAIAddThresholdedRow(const PC_GSAI *gs, const GSAIRows *R, PetscInt r, PetscReal weight, GSAIAccum *a)
{
  PetscReal amax = 0.0, thr;
  PetscInt  diag = -1;

  for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++) amax = PetscMax(amax, PetscAbsScalar(R->val[e]));
  thr = (1.0 - gs->tau) * amax;
  for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++) {
    const PetscReal v = PetscAbsScalar(R->val[e]);
    if (R->col[e] == R->gid[r]) diag = e;
    else if (gs->pattern == PCGSAI_PATTERN_A || v > thr) GSAIAccumAdd(a, R->lcol[e], weight * v);
  }
  if (diag >= 0) GSAIAccumAdd(a, R->lcol[diag], weight * PetscAbsScalar(R->val[diag]));
  else GSAIAccumAdd(a, GSAIRowsCompact(R, R->gid[r]), 0.0);
}

/* candidate order of the cap: larger (single precision) weight first, then smaller global column */
typedef struct {
  float    w;
  PetscInt g;
} GSAICand;

static int GSAICandCompare(const void *x, const void *y)
{
  const GSAICand *a = (const GSAICand *)x, *b = (const GSAICand *)y;
  if (a->w != b->w) return a->w > b->w ? -1 : 1;
  return a->g < b->g ? -1 : (a->g > b->g ? 1 : 0);
}

/*
   The pattern of the local rows gk = first .. first+nloc-1 of N, from `levels` levels of the power (all rows
   the first levels-1 levels reach must be in R). With final, the lower part (spd) and the cap are applied and
   the result goes to Jptr/Jcol (global columns, sorted); otherwise the union of the last level over all local
   rows goes to *need (sorted global numbers, the rows the next level needs).
*/
static PetscErrorCode GSAIPatternRows(const PC_GSAI *gs, const GSAIRows *R, PetscInt first, PetscInt nloc, PetscInt levels, PetscBool final, PetscInt **Jptr, PetscInt **Jcol, PetscInt *nneed, PetscInt **need)
{
  GSAIAccum a, b;
  PetscInt  cap = final ? gs->maxnnz : 0, nJ = 0, nalloc = 0, *ptr = NULL, *col = NULL, *mark = NULL, nn = 0, *nl = NULL;
  GSAICand *cand = NULL;

  PetscFunctionBegin;
  PetscCall(GSAIAccumCreate(R->nu, &a));
  PetscCall(GSAIAccumCreate(R->nu, &b));
  if (final) {
    nalloc = 8 * nloc + 8;
    PetscCall(PetscMalloc1(nloc + 1, &ptr));
    PetscCall(PetscMalloc1(nalloc, &col));
    PetscCall(PetscMalloc1(R->nu, &cand));
    ptr[0] = 0;
  } else {
    PetscCall(PetscCalloc1(R->nu, &mark));
  }
  for (PetscInt i = 0; i < nloc; i++) {
    const PetscInt gk = first + i, r = GSAIRowsFind(R, gk);
    PetscInt       ncand   = 0, keep;
    PetscBool      hasdiag = PETSC_FALSE;

    PetscCheck(r >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "row %" PetscInt_FMT " is not held", gk);
    GSAIAccumClear(&a);
    GSAIAddThresholdedRow(gs, R, r, 1.0, &a);
    PetscCall(GSAIAccumSort(&a));
    for (PetscInt l = 1; l < levels; l++) {
      GSAIAccumClear(&b);
      for (PetscInt t = 0; t < a.n; t++) {
        const PetscInt rr = R->rowof[a.list[t]];
        PetscCheck(rr >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "row %" PetscInt_FMT " needed by the power pattern is not held", R->ucol[a.list[t]]);
        GSAIAddThresholdedRow(gs, R, rr, a.w[a.list[t]], &b);
      }
      PetscCall(GSAIAccumSort(&b));
      { /* swap */
        GSAIAccum c = a;
        a           = b;
        b           = c;
      }
    }
    if (!final) {
      for (PetscInt t = 0; t < a.n; t++)
        if (!mark[a.list[t]]) {
          mark[a.list[t]] = 1;
          nn++;
        }
      continue;
    }
    /* lower part (spd), then the cap: the diagonal plus the cap-1 largest others */
    for (PetscInt t = 0; t < a.n; t++) {
      const PetscInt g = R->ucol[a.list[t]];
      if (g == gk) hasdiag = PETSC_TRUE;
      if (g == gk || (gs->type == PCGSAI_SPD && g > gk)) continue;
      cand[ncand].w   = (float)a.w[a.list[t]];
      cand[ncand++].g = g;
    }
    PetscCheck(hasdiag, PETSC_COMM_SELF, PETSC_ERR_PLIB, "diagonal missing from the pattern of row %" PetscInt_FMT, gk);
    keep = (cap > 0 && ncand + 1 > cap) ? cap - 1 : ncand;
    if (keep < ncand) qsort(cand, (size_t)ncand, sizeof(GSAICand), GSAICandCompare);
    if (nJ + keep + 1 > nalloc) {
      PetscInt *ncol;
      nalloc = PetscMax(2 * nalloc, nJ + keep + 1);
      PetscCall(PetscMalloc1(nalloc, &ncol));
      PetscCall(PetscArraycpy(ncol, col, nJ));
      PetscCall(PetscFree(col));
      col = ncol;
    }
    col[nJ + keep] = gk;
    for (PetscInt t = 0; t < keep; t++) col[nJ + t] = cand[t].g;
    PetscCall(PetscSortInt(keep + 1, col + nJ));
    nJ += keep + 1;
    ptr[i + 1] = nJ;
  }
  if (final) {
    *Jptr = ptr;
    *Jcol = col;
    PetscCall(PetscFree(cand));
  } else {
    PetscCall(PetscMalloc1(nn, &nl));
    nn = 0;
    for (PetscInt u = 0; u < R->nu; u++)
      if (mark[u]) nl[nn++] = R->ucol[u];
    PetscCall(PetscFree(mark));
    *nneed = nn;
    *need  = nl;
  }
  PetscCall(GSAIAccumDestroy(&a));
  PetscCall(GSAIAccumDestroy(&b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Local problems, in double precision
   ------------------------------------------------------------------------------------------------------ */

/*
   min || C x - e_p ||_2 by Householder QR, C n1 x n2 column-major (overwritten), rhs work of n1.
   Returns PETSC_FALSE (x untouched) when p < 0, n1 < n2, or a pivot |R(c,c)| is at most GSAI_RCOND_TOL times
   the largest, or x is not finite. The device kernels (gsaikernels.cu) follow the same steps.
*/
static PetscBool GSAILeastSquares(PetscInt n1, PetscInt n2, PetscScalar *C, PetscInt p, PetscScalar *rhs, PetscScalar *diag, PetscScalar *x)
{
  PetscReal rmax = 0.0, rmin = PETSC_MAX_REAL;

  if (p < 0 || n1 < n2) return PETSC_FALSE;
  for (PetscInt i = 0; i < n1; i++) rhs[i] = 0.0;
  rhs[p] = 1.0;
  for (PetscInt c = 0; c < n2; c++) {
    PetscScalar   *v = C + c * n1 + c; /* the part of column c at and below the diagonal */
    PetscReal      s = 0.0, norm, alpha, vtv;
    const PetscInt m = n1 - c;

    for (PetscInt i = 0; i < m; i++) s += PetscRealPart(v[i] * v[i]);
    norm = PetscSqrtReal(s);
    if (norm == 0.0) return PETSC_FALSE;
    alpha = PetscRealPart(v[0]) >= 0.0 ? -norm : norm;
    vtv   = 2.0 * norm * (norm + PetscAbsScalar(v[0]));
    v[0] -= alpha; /* v = x - alpha e_1, H = I - 2 v v^T / (v^T v) */
    for (PetscInt c2 = c + 1; c2 < n2; c2++) {
      PetscScalar *w = C + c2 * n1 + c, d = 0.0;
      for (PetscInt i = 0; i < m; i++) d += v[i] * w[i];
      d *= 2.0 / vtv;
      for (PetscInt i = 0; i < m; i++) w[i] -= d * v[i];
    }
    {
      PetscScalar *w = rhs + c, d = 0.0;
      for (PetscInt i = 0; i < m; i++) d += v[i] * w[i];
      d *= 2.0 / vtv;
      for (PetscInt i = 0; i < m; i++) w[i] -= d * v[i];
    }
    diag[c] = alpha;
    rmax    = PetscMax(rmax, PetscAbsReal(alpha));
    rmin    = PetscMin(rmin, PetscAbsReal(alpha));
  }
  if (rmin <= GSAI_RCOND_TOL * rmax) return PETSC_FALSE;
  for (PetscInt c = n2 - 1; c >= 0; c--) {
    PetscScalar s = rhs[c];
    for (PetscInt c2 = c + 1; c2 < n2; c2++) s -= C[c2 * n1 + c] * rhs[c2];
    rhs[c] = s / diag[c];
  }
  for (PetscInt c = 0; c < n2; c++)
    if (PetscIsInfOrNanScalar(rhs[c])) return PETSC_FALSE;
  for (PetscInt c = 0; c < n2; c++) x[c] = rhs[c];
  return PETSC_TRUE;
}

/*
   g = S^{-1} e_last by Cholesky (S n x n column-major, lower triangle used, overwritten), then x = g / sqrt(g_last).
   Returns PETSC_FALSE when a pivot is at most GSAI_RCOND_TOL times its diagonal entry (or not positive), or x
   is not finite.
*/
static PetscBool GSAICholeskyRow(PetscInt n, PetscScalar *S, PetscScalar *x)
{
  for (PetscInt j = 0; j < n; j++) {
    PetscScalar d = S[j + j * n];
    for (PetscInt k = 0; k < j; k++) d -= S[j + k * n] * S[j + k * n];
    if (!(PetscRealPart(d) > GSAI_RCOND_TOL * PetscRealPart(S[j + j * n]))) return PETSC_FALSE;
    d            = PetscSqrtScalar(d);
    S[j + j * n] = d;
    for (PetscInt i = j + 1; i < n; i++) {
      PetscScalar s = S[i + j * n];
      for (PetscInt k = 0; k < j; k++) s -= S[i + k * n] * S[j + k * n];
      S[i + j * n] = s / d;
    }
  }
  /* L y = e_last: y = e_last / L_last; L^T g = y; x = g / sqrt(g_last) = g * L_last */
  {
    const PetscScalar llast = S[(n - 1) + (n - 1) * n];
    x[n - 1]                = 1.0 / llast; /* g_last * L_last, g_last = 1 / L_last^2 */
    for (PetscInt i = n - 2; i >= 0; i--) {
      PetscScalar s = 0.0;
      for (PetscInt k = i + 1; k < n; k++) s += S[k + i * n] * x[k];
      x[i] = -s / S[i + i * n];
    }
  }
  for (PetscInt i = 0; i < n; i++)
    if (PetscIsInfOrNanScalar(x[i])) return PETSC_FALSE;
  return PETSC_TRUE;
}

/* the name of row k of B in messages */
static const char *GSAIWhat(const PC_GSAI *gs)
{
  if (gs->type == PCGSAI_SPD) return "row";
  return gs->sideused == PC_RIGHT ? "column" : "row";
}

/* values of the local rows of N on the pattern Jptr/Jcol; R holds every row of B in the pattern */
static PetscErrorCode GSAISolveRows(PC pc, const GSAIRows *R, PetscInt first, PetscScalar *vals, PetscInt *nfallback, PetscInt *maxn1, PetscInt *maxn2, GSAIFailure *fail)
{
  PC_GSAI       *gs   = (PC_GSAI *)pc->data;
  PetscInt       nloc = gs->nloc, *mark, *list, cap = 0, nf = 0, m1 = 0, m2 = 0;
  PetscScalar   *C = NULL, *rhs = NULL, *diag = NULL;
  PetscLogDouble flops = 0;

  PetscFunctionBegin;
  fail->row = -1;
  PetscCall(PetscMalloc2(R->nu, &mark, R->nu, &list));
  for (PetscInt u = 0; u < R->nu; u++) mark[u] = -1;
  for (PetscInt i = 0; i < nloc; i++) {
    const PetscInt  gk = first + i, n2 = gs->Jptr[i + 1] - gs->Jptr[i];
    const PetscInt *J  = gs->Jcol + gs->Jptr[i];
    PetscScalar    *x  = vals + gs->Jptr[i];
    PetscInt        n1 = 0, rk = GSAIRowsFind(R, gk), p = -1;
    PetscBool       ok;

    PetscCheck(rk >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "row %" PetscInt_FMT " is not held", gk);
    if (gs->type == PCGSAI_GENERAL) {
      /* I: the columns of the rows J of B, in increasing order */
      for (PetscInt c = 0; c < n2; c++) {
        const PetscInt r = GSAIRowsFind(R, J[c]);
        PetscCheck(r >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "row %" PetscInt_FMT " is not held", J[c]);
        for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++)
          if (mark[R->lcol[e]] < 0) {
            mark[R->lcol[e]] = 0;
            list[n1++]       = R->lcol[e];
          }
      }
      PetscCall(PetscSortInt(n1, list));
      for (PetscInt t = 0; t < n1; t++) mark[list[t]] = t;
      if (n1 * n2 > cap || n1 > cap) {
        cap = PetscMax(2 * cap, PetscMax(n1 * n2, n1));
        PetscCall(PetscFree3(C, rhs, diag));
        PetscCall(PetscMalloc3(cap, &C, cap, &rhs, cap, &diag));
      }
      PetscCall(PetscArrayzero(C, n1 * n2));
      for (PetscInt c = 0; c < n2; c++) {
        const PetscInt r = GSAIRowsFind(R, J[c]);
        for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++) C[c * n1 + mark[R->lcol[e]]] = R->val[e];
      }
      {
        const PetscInt uk = GSAIRowsCompact(R, gk);
        p                 = (uk >= 0) ? mark[uk] : -1;
      }
      for (PetscInt t = 0; t < n1; t++) mark[list[t]] = -1;
      ok = GSAILeastSquares(n1, n2, C, p, rhs, diag, x);
      flops += 2.0 * n1 * n2 * n2 + 4.0 * n1 * n2;
      if (!ok) {
        /* the diagonal-only least-squares solution b_kk / ||b_k||^2 */
        PetscReal   s   = 0.0;
        PetscScalar bkk = 0.0;
        for (PetscInt e = R->ptr[rk]; e < R->ptr[rk + 1]; e++) {
          s += PetscRealPart(R->val[e] * R->val[e]);
          if (R->col[e] == gk) bkk = R->val[e];
        }
        if (s == 0.0 || p < 0 || bkk == 0.0) { /* no fallback: an error, raised on every rank by GSAIRaiseFailure() */
          if (fail->row < 0) {
            fail->row   = gk;
            fail->kind  = s == 0.0 ? GSAI_FAIL_EMPTY : (p < 0 ? GSAI_FAIL_STRUCTURAL : GSAI_FAIL_SINGULAR);
            fail->value = 0.0;
          }
          continue;
        }
        for (PetscInt c = 0; c < n2; c++) x[c] = (J[c] == gk) ? bkk / s : 0.0;
        nf++;
      }
    } else {
      /* spd: S = A(J,J), lower triangle from rows J */
      if (n2 * n2 > cap) {
        cap = PetscMax(2 * cap, n2 * n2);
        PetscCall(PetscFree3(C, rhs, diag));
        PetscCall(PetscMalloc3(cap, &C, cap, &rhs, cap, &diag));
      }
      PetscCall(PetscArrayzero(C, n2 * n2));
      for (PetscInt c = 0; c < n2; c++) mark[GSAIRowsCompact(R, J[c])] = c;
      for (PetscInt c = 0; c < n2; c++) {
        const PetscInt r = GSAIRowsFind(R, J[c]);
        PetscCheck(r >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "row %" PetscInt_FMT " is not held", J[c]);
        for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++) {
          const PetscInt t = mark[R->lcol[e]];
          if (t >= 0) C[c + t * n2] = R->val[e];
        }
      }
      for (PetscInt c = 0; c < n2; c++) mark[GSAIRowsCompact(R, J[c])] = -1;
      n1 = n2;
      ok = GSAICholeskyRow(n2, C, x);
      flops += n2 * n2 * n2 / 3.0 + 2.0 * n2 * n2;
      if (!ok) {
        PetscScalar akk = 0.0;
        for (PetscInt e = R->ptr[rk]; e < R->ptr[rk + 1]; e++)
          if (R->col[e] == gk) akk = R->val[e];
        if (!(PetscRealPart(akk) > 0.0)) {
          if (fail->row < 0) {
            fail->row   = gk;
            fail->kind  = GSAI_FAIL_NOTSPD;
            fail->value = PetscRealPart(akk);
          }
          continue;
        }
        for (PetscInt c = 0; c < n2; c++) x[c] = (J[c] == gk) ? 1.0 / PetscSqrtScalar(akk) : 0.0;
        nf++;
      }
    }
    m1 = PetscMax(m1, n1);
    m2 = PetscMax(m2, n2);
  }
  PetscCall(PetscFree3(C, rhs, diag));
  PetscCall(PetscFree2(mark, list));
  PetscCall(PetscLogFlops(flops));
  *nfallback = nf;
  *maxn1     = m1;
  *maxn2     = m2;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Collective: makes *fail the first failure (lowest row) over all ranks, on every rank (row -1: none) */
PetscErrorCode GSAIAgreeFailure(PC pc, GSAIFailure *fail)
{
  MPI_Comm  comm;
  PetscInt  row = fail->row < 0 ? PETSC_MAX_INT : fail->row, grow, kind, gkind;
  PetscReal value, gvalue;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  PetscCallMPI(MPI_Allreduce(&row, &grow, 1, MPIU_INT, MPI_MIN, comm));
  kind  = (fail->row >= 0 && fail->row == grow) ? fail->kind : 0;
  value = (fail->row >= 0 && fail->row == grow) ? fail->value : -PETSC_MAX_REAL;
  PetscCallMPI(MPI_Allreduce(&kind, &gkind, 1, MPIU_INT, MPI_MAX, comm));
  PetscCallMPI(MPI_Allreduce(&value, &gvalue, 1, MPIU_REAL, MPI_MAX, comm));
  fail->row   = grow == PETSC_MAX_INT ? -1 : grow;
  fail->kind  = gkind;
  fail->value = gvalue;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the error of a failure agreed on by GSAIAgreeFailure(), the same on every rank */
PetscErrorCode GSAIRaiseFailure(PC pc, const GSAIFailure *fail)
{
  PC_GSAI        *gs = (PC_GSAI *)pc->data;
  MPI_Comm        comm;
  const char     *what = GSAIWhat(gs);
  const PetscInt  grow = fail->row, gkind = fail->kind;
  const PetscReal gvalue = fail->value;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  if (grow < 0) PetscFunctionReturn(PETSC_SUCCESS);
  switch (gkind) {
  case GSAI_FAIL_EMPTY:
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "PCGSAI: %s %" PetscInt_FMT " of A has no nonzero entry, so A is singular and has no approximate inverse", what, grow);
  case GSAI_FAIL_STRUCTURAL:
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "PCGSAI: %s %" PetscInt_FMT " of M cannot be computed: A(%" PetscInt_FMT ",%" PetscInt_FMT ") is not stored and no other %s of A in its pattern has an entry at index %" PetscInt_FMT ", so its local least-squares problem is structurally singular. The patterns of PCGSAI come from A, so A needs a zero-free diagonal here: permute A to put nonzeros on the diagonal, or use another preconditioner", what, grow, grow, grow, what, grow);
  case GSAI_FAIL_SINGULAR:
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "PCGSAI: the local least-squares problem of %s %" PetscInt_FMT " of M is (numerically) singular and A(%" PetscInt_FMT ",%" PetscInt_FMT ") = 0, so the diagonal fallback does not exist either; A is singular or nearly so", what, grow, grow, grow);
  case GSAI_FAIL_NOTSPD:
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "PCGSAI type spd needs a symmetric positive definite matrix, but A(%" PetscInt_FMT ",%" PetscInt_FMT ") = %g is not positive; use -pc_gsai_type general", grow, grow, (double)gvalue);
  default:
    SETERRQ(comm, PETSC_ERR_PLIB, "PCGSAI: unknown failure %" PetscInt_FMT " in row %" PetscInt_FMT, gkind, grow);
  }
}

/* ------------------------------------------------------------------------------------------------------
   Set-up
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode GSAIStageBegin(PetscLogEvent ev, PetscLogDouble *t0)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(ev, 0, 0, 0, 0));
  PetscCall(PetscTime(t0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GSAIStageEnd(PC_GSAI *gs, GSAIStage s, PetscLogEvent ev, PetscLogDouble t0)
{
  PetscLogDouble t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t1));
  gs->time[s] += t1 - t0;
  PetscCall(PetscLogEventEnd(ev, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* is A a CUDA matrix (then M is one too)? */
static PetscErrorCode GSAIIsCUDA(Mat A, PetscBool *iscuda)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, iscuda, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, MATAIJCUSPARSE, MATSEQSGDIACUDA, MATMPISGDIACUDA, ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B: the matrix whose rows the set-up reads (a new reference) */
static PetscErrorCode GSAIGetB(PC pc, Mat A, Mat *B)
{
  PC_GSAI    *gs = (PC_GSAI *)pc->data;
  PetscMPIInt size;
  PetscBool   isaij;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  gs->conversion[0] = 0;
  if (gs->sideused == PC_RIGHT) {
    Mat Aaij = A;
    PetscCall(PetscObjectBaseTypeCompareAny((PetscObject)A, &isaij, MATSEQAIJ, MATMPIAIJ, ""));
    if (!isaij) {
      PetscCall(PetscSNPrintf(gs->conversion, sizeof(gs->conversion), "%s converted to AIJ for the transpose", ((PetscObject)A)->type_name));
      PetscCall(PetscInfo(pc, "Right GSAI needs A^T: converting the %s matrix to MATAIJ first\n", ((PetscObject)A)->type_name));
      PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &Aaij));
    }
    PetscCall(MatTranspose(Aaij, MAT_INITIAL_MATRIX, B));
    if (Aaij != A) PetscCall(MatDestroy(&Aaij));
  } else {
    PetscBool readable = size == 1 ? (A->ops->getrow ? PETSC_TRUE : PETSC_FALSE) : (A->ops->createsubmatrices && A->ops->getrow ? PETSC_TRUE : PETSC_FALSE);
    if (readable && size > 1) { /* the fetched rows must be read with MatGetRow() on a sequential AIJ-like matrix */
      PetscCall(PetscObjectBaseTypeCompareAny((PetscObject)A, &isaij, MATMPIAIJ, ""));
      readable = isaij;
    }
    if (readable) {
      PetscCall(PetscObjectReference((PetscObject)A));
      *B = A;
    } else {
      PetscCall(PetscSNPrintf(gs->conversion, sizeof(gs->conversion), "%s converted to AIJ to read its rows", ((PetscObject)A)->type_name));
      PetscCall(PetscInfo(pc, "PCGSAI reads rows of A: converting the %s matrix to MATAIJ\n", ((PetscObject)A)->type_name));
      PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, B));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the side the KSP asked for: PCGSAISetSide(), else -ksp_pc_side in the options of the PC's prefix, else left */
static PetscErrorCode GSAIResolveSide(PC pc)
{
  PC_GSAI  *gs = (PC_GSAI *)pc->data;
  PCSide    side;
  PetscBool flg;

  PetscFunctionBegin;
  side = gs->side;
  if (side == PC_SIDE_DEFAULT) {
    PetscCall(PetscOptionsGetEnum(((PetscObject)pc)->options, ((PetscObject)pc)->prefix, "-ksp_pc_side", PCSides, (PetscEnum *)&side, &flg));
    if (!flg) side = PC_LEFT;
  }
  if (gs->type == PCGSAI_SPD) side = PC_SYMMETRIC; /* M = G^T G works on any side */
  PetscCheck(side != PC_SYMMETRIC || gs->type == PCGSAI_SPD, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP, "PCGSAI type general has no symmetric form; use -ksp_pc_side left or right, or -pc_gsai_type spd (M = G^T G, applied as G and G^T)");
  gs->sideused = side;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GSAIResetSetUp(PC_GSAI *gs)
{
  PetscFunctionBegin;
  PetscCall(MatDestroy(&gs->M));
  PetscCall(MatDestroy(&gs->N));
  PetscCall(VecDestroy(&gs->work));
  PetscCall(PetscFree(gs->Jptr));
  PetscCall(PetscFree(gs->Jcol));
  PetscCall(ISDestroy(&gs->fetchis));
  if (gs->fetched) PetscCall(MatDestroySubMatrices(1, &gs->fetched));
  gs->havepattern = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCReset_GSAI(PC);

static PetscErrorCode PCSetUp_GSAI_Host(PC pc, Mat A, PetscBool reuse)
{
  PC_GSAI       *gs = (PC_GSAI *)pc->data;
  MPI_Comm       comm;
  PetscMPIInt    size;
  Mat            B, N;
  GSAIRows       R;
  PetscInt       first, nloc, nf = 0, m1 = 0, m2 = 0, *dnz, *onz, cstart, cend;
  PetscScalar   *vals;
  PetscLogDouble t0;
  PetscBool      iscuda;
  GSAIFailure    fail;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscMemzero(&R, sizeof(R)));

  /* 1. B and the rows of B */
  PetscCall(GSAIStageBegin(PC_GSAI_Rows, &t0));
  PetscCall(GSAIGetB(pc, A, &B));
  PetscCall(MatGetOwnershipRange(B, &first, NULL));
  PetscCall(MatGetLocalSize(B, &nloc, NULL));
  PetscCall(MatGetOwnershipRangeColumn(B, &cstart, &cend));
  gs->nloc = nloc;
  if (size == 1) {
    PetscInt *gid;
    PetscCall(PetscMalloc1(nloc, &gid));
    for (PetscInt i = 0; i < nloc; i++) gid[i] = i;
    PetscCall(GSAIRowsCreate(B, 0, nloc, gid, &R));
  } else if (!reuse) {
    PetscInt *gid;
    PetscCall(PetscMalloc1(nloc, &gid));
    for (PetscInt i = 0; i < nloc; i++) gid[i] = first + i;
    PetscCall(GSAIRowsCreate(B, first, nloc, gid, &R)); /* the own rows: enough for the first level */
  }
  PetscCall(GSAIStageEnd(gs, GSAI_STAGE_ROWS, PC_GSAI_Rows, t0));

  /* 2. the pattern: on several ranks, level l of the power needs the rows that level l-1 reaches */
  if (!reuse) {
    const PetscInt levels = gs->pattern == PCGSAI_PATTERN_POWER ? gs->power : 1;
    PetscCall(PetscFree(gs->Jptr));
    PetscCall(PetscFree(gs->Jcol));
    if (size > 1) {
      for (PetscInt l = 1; l < levels; l++) {
        PetscInt nneed, *need;
        IS       is;
        Mat     *sub;

        PetscCall(GSAIStageBegin(PC_GSAI_Pattern, &t0));
        PetscCall(GSAIPatternRows(gs, &R, first, nloc, l, PETSC_FALSE, NULL, NULL, &nneed, &need));
        PetscCall(GSAIStageEnd(gs, GSAI_STAGE_PATTERN, PC_GSAI_Pattern, t0));
        PetscCall(GSAIStageBegin(PC_GSAI_Rows, &t0));
        PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nneed, need, PETSC_OWN_POINTER, &is));
        PetscCall(GSAIRowsDestroy(&R));
        PetscCall(GSAIFetch(B, is, MAT_INITIAL_MATRIX, &sub, &R));
        PetscCall(MatDestroySubMatrices(1, &sub));
        PetscCall(ISDestroy(&is));
        PetscCall(GSAIStageEnd(gs, GSAI_STAGE_ROWS, PC_GSAI_Rows, t0));
      }
    }
    PetscCall(GSAIStageBegin(PC_GSAI_Pattern, &t0));
    PetscCall(GSAIPatternRows(gs, &R, first, nloc, levels, PETSC_TRUE, &gs->Jptr, &gs->Jcol, NULL, NULL));
    gs->havepattern = PETSC_TRUE;
    gs->ptype       = gs->type;
    gs->pside       = gs->sideused;
    PetscCall(GSAIStageEnd(gs, GSAI_STAGE_PATTERN, PC_GSAI_Pattern, t0));
  }

  /* 3. on several ranks, the rows of B in the pattern */
  if (size > 1) {
    PetscCall(GSAIStageBegin(PC_GSAI_Rows, &t0));
    PetscCall(GSAIRowsDestroy(&R));
    if (!reuse) {
      PetscInt nJ = gs->Jptr[nloc], *need;
      PetscCall(PetscMalloc1(nJ, &need));
      PetscCall(PetscArraycpy(need, gs->Jcol, nJ));
      PetscCall(PetscSortRemoveDupsInt(&nJ, need));
      PetscCall(ISDestroy(&gs->fetchis));
      if (gs->fetched) PetscCall(MatDestroySubMatrices(1, &gs->fetched));
      PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nJ, need, PETSC_OWN_POINTER, &gs->fetchis));
    }
    PetscCall(GSAIFetch(B, gs->fetchis, reuse && gs->fetched ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX, &gs->fetched, &R));
    PetscCall(GSAIStageEnd(gs, GSAI_STAGE_ROWS, PC_GSAI_Rows, t0));
  }

  /* 4. the local problems */
  PetscCall(GSAIStageBegin(PC_GSAI_Solve, &t0));
  PetscCall(PetscMalloc1(gs->Jptr[nloc], &vals));
  PetscCall(GSAISolveRows(pc, &R, first, vals, &nf, &m1, &m2, &fail));
  PetscCall(GSAIRowsDestroy(&R));
  PetscCall(GSAIStageEnd(gs, GSAI_STAGE_SOLVE, PC_GSAI_Solve, t0));
  PetscCall(GSAIAgreeFailure(pc, &fail));
  if (fail.row >= 0) {
    PetscCall(PetscFree(vals));
    PetscCall(MatDestroy(&B));
    PetscCall(GSAIRaiseFailure(pc, &fail));
  }

  /* 5. N, then M */
  PetscCall(GSAIStageBegin(PC_GSAI_Assemble, &t0));
  if (!reuse || !gs->N) {
    PetscCall(MatDestroy(&gs->N));
    PetscCall(MatCreate(comm, &N));
    PetscCall(MatSetSizes(N, nloc, cend - cstart, B->rmap->N, B->cmap->N));
    PetscCall(MatSetType(N, MATAIJ));
    PetscCall(PetscMalloc2(nloc, &dnz, nloc, &onz));
    for (PetscInt i = 0; i < nloc; i++) {
      dnz[i] = onz[i] = 0;
      for (PetscInt e = gs->Jptr[i]; e < gs->Jptr[i + 1]; e++) {
        if (gs->Jcol[e] >= cstart && gs->Jcol[e] < cend) dnz[i]++;
        else onz[i]++;
      }
    }
    PetscCall(MatSeqAIJSetPreallocation(N, 0, dnz));
    PetscCall(MatMPIAIJSetPreallocation(N, 0, dnz, 0, onz));
    PetscCall(PetscFree2(dnz, onz));
    PetscCall(MatSetOption(N, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
    gs->N = N;
  }
  N = gs->N;
  for (PetscInt i = 0; i < nloc; i++) {
    const PetscInt row = first + i;
    PetscCall(MatSetValues(N, 1, &row, gs->Jptr[i + 1] - gs->Jptr[i], gs->Jcol + gs->Jptr[i], vals + gs->Jptr[i], INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(N, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(N, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree(vals));
  PetscCall(MatDestroy(&gs->M));
  if (gs->type == PCGSAI_GENERAL && gs->sideused == PC_RIGHT) PetscCall(MatTranspose(N, MAT_INITIAL_MATRIX, &gs->M));
  else {
    PetscCall(PetscObjectReference((PetscObject)N));
    gs->M = N;
  }
  PetscCall(GSAIIsCUDA(A, &iscuda));
  if (iscuda) {
    /* a copy, so that N keeps the host type it was preallocated with */
    Mat Mc;
    PetscCall(MatConvert(gs->M, MATAIJCUSPARSE, MAT_INITIAL_MATRIX, &Mc));
    PetscCall(MatDestroy(&gs->M));
    gs->M = Mc;
    PetscCall(PetscInfo(pc, "A is a CUDA matrix (%s) but M was built on the host; M is stored as MATAIJCUSPARSE\n", ((PetscObject)A)->type_name));
  }
  PetscCall(MatDestroy(&B));
  PetscCall(GSAIStageEnd(gs, GSAI_STAGE_ASSEMBLE, PC_GSAI_Assemble, t0));

  {
    PetscInt in[2] = {gs->Jptr[nloc], nf}, out[2], inm[2] = {m1, m2}, outm[2];
    PetscCallMPI(MPI_Allreduce(in, out, 2, MPIU_INT, MPI_SUM, comm));
    PetscCallMPI(MPI_Allreduce(inm, outm, 2, MPIU_INT, MPI_MAX, comm));
    gs->nnz       = out[0];
    gs->nfallback = out[1];
    gs->maxn1     = outm[0];
    gs->maxn2     = outm[1];
  }
  if (gs->nfallback) PetscCall(PetscInfo(pc, "%" PetscInt_FMT " %ss of M fell back to the diagonal (singular or ill-conditioned local problem)\n", gs->nfallback, GSAIWhat(gs)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCSetUp_GSAI(PC pc)
{
  PC_GSAI       *gs = (PC_GSAI *)pc->data;
  Mat            A  = pc->pmat;
  PetscBool      reuse, device = PETSC_FALSE, iscuda;
  PetscMPIInt    size;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCheck(A, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCGSAI needs a matrix: call KSPSetOperators() or PCSetOperators() first");
  PetscCheck(A->assembled, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCGSAI needs an assembled matrix: call MatAssemblyBegin()/MatAssemblyEnd() on it before PCSetUp() or KSPSetUp()");
  PetscCheck(A->rmap->N == A->cmap->N && A->rmap->n == A->cmap->n, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_SIZ, "PCGSAI needs a square matrix with the same row and column layouts; A is %" PetscInt_FMT " x %" PetscInt_FMT " with %" PetscInt_FMT " x %" PetscInt_FMT " local",
             A->rmap->N, A->cmap->N, A->rmap->n, A->cmap->n);
  PetscCall(PetscLogEventBegin(PC_GSAI_SetUp, pc, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  PetscCall(GSAIResolveSide(pc));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(GSAIIsCUDA(A, &iscuda));
#if defined(GPUKIT_GSAICUDA_AVAILABLE)
  if (gs->usedevice && size == 1) PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &device, MATSEQAIJCUSPARSE, MATSEQSGDIACUDA, ""));
  if (device && A->boundtocpu) {
    PetscCall(PetscInfo(pc, "A is bound to the CPU: building M on the host\n"));
    device = PETSC_FALSE;
  }
#endif
  if (iscuda && !device)
    PetscCall(PetscInfo(pc, "Building M on the host for a %s matrix (%s)\n", ((PetscObject)A)->type_name, !gs->usedevice ? "-pc_gsai_use_device false" : (size > 1 ? "the device set-up is for one rank" : "no device set-up for it in this build")));
  reuse = (pc->setupcalled && pc->flag == SAME_NONZERO_PATTERN && gs->havepattern && gs->ptype == gs->type && gs->pside == gs->sideused && gs->ondevice == device) ? PETSC_TRUE : PETSC_FALSE;
  if (!reuse) PetscCall(PCReset_GSAI(pc));
  for (PetscInt s = 0; s < GSAI_NSTAGES; s++) gs->time[s] = 0;
#if defined(GPUKIT_GSAICUDA_AVAILABLE)
  if (device) PetscCall(PCSetUp_GSAI_CUDA(pc, A, reuse));
  else
#endif
    PetscCall(PCSetUp_GSAI_Host(pc, A, reuse));
  gs->ondevice = device;
  if (gs->type == PCGSAI_SPD) {
    PetscBool seqcusparse;
    if (!gs->work) PetscCall(MatCreateVecs(gs->M, NULL, &gs->work));
    /* PCApply() multiplies with G^T too: let cuSPARSE keep an explicit transpose (of every new G) */
    PetscCall(PetscObjectTypeCompare((PetscObject)gs->M, MATSEQAIJCUSPARSE, &seqcusparse));
    if (seqcusparse) PetscCall(MatSetOption(gs->M, MAT_FORM_EXPLICIT_TRANSPOSE, PETSC_TRUE));
  }
  PetscCall(PetscTime(&t1));
  gs->ttotal = t1 - t0;
  PetscCall(PetscLogEventEnd(PC_GSAI_SetUp, pc, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Apply, view, options, reset, destroy
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode PCApply_GSAI(PC pc, Vec x, Vec y)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  if (gs->type == PCGSAI_SPD) { /* y = G^T G x */
    PetscCall(MatMult(gs->M, x, gs->work));
    PetscCall(MatMultTranspose(gs->M, gs->work, y));
  } else PetscCall(MatMult(gs->M, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCApplyTranspose_GSAI(PC pc, Vec x, Vec y)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  if (gs->type == PCGSAI_SPD) PetscCall(PCApply_GSAI(pc, x, y)); /* G^T G is symmetric */
  else PetscCall(MatMultTranspose(gs->M, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* symmetric application of M = G^T G: the operator is G A G^T */
static PetscErrorCode PCApplySymmetricLeft_GSAI(PC pc, Vec x, Vec y)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(gs->type == PCGSAI_SPD, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP, "PCGSAI type general has no symmetric form; use -pc_gsai_type spd");
  PetscCall(MatMult(gs->M, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCApplySymmetricRight_GSAI(PC pc, Vec x, Vec y)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(gs->type == PCGSAI_SPD, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP, "PCGSAI type general has no symmetric form; use -pc_gsai_type spd");
  PetscCall(MatMultTranspose(gs->M, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCView_GSAI(PC pc, PetscViewer viewer)
{
  PC_GSAI    *gs = (PC_GSAI *)pc->data;
  PetscBool   iascii;
  char        line[512];
  size_t      len;
  const char *what = gs->type == PCGSAI_SPD ? "row of G" : (pc->setupcalled && gs->sideused == PC_RIGHT ? "column" : "row");

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(PETSC_SUCCESS);
  if (gs->type == PCGSAI_SPD) PetscCall(PetscViewerASCIIPrintf(viewer, "type spd: M = G^T G, G lower triangular with diag(G A G^T) = 1 (FSAI)\n"));
  else if (!pc->setupcalled) PetscCall(PetscViewerASCIIPrintf(viewer, "type general, side %s\n", gs->side == PC_SIDE_DEFAULT ? "from -ksp_pc_side (left if not given)" : (gs->side == PC_RIGHT ? "right" : "left")));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "type general, side %s: %s\n", gs->sideused == PC_RIGHT ? "right" : "left", gs->sideused == PC_RIGHT ? "M minimises ||AM - I||_F column by column" : "M minimises ||MA - I||_F row by row"));
  PetscCall(PetscSNPrintf(line, sizeof(line), "pattern %s", PCGSAIPatternTypes[gs->pattern]));
  if (gs->pattern != PCGSAI_PATTERN_A) {
    PetscCall(PetscStrlen(line, &len));
    PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, ", threshold tau %g (relative to the largest |a| of the %s of A)", (double)gs->tau, gs->type == PCGSAI_GENERAL && pc->setupcalled && gs->sideused == PC_RIGHT ? "column" : "row"));
  }
  if (gs->pattern == PCGSAI_PATTERN_POWER) {
    PetscCall(PetscStrlen(line, &len));
    PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, ", power %" PetscInt_FMT, gs->power));
  }
  if (gs->maxnnz > 0) {
    PetscCall(PetscStrlen(line, &len));
    PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, ", at most %" PetscInt_FMT " nonzeros per %s", gs->maxnnz, what));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s\n", line));
  if (!pc->setupcalled || !gs->M) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s: %" PetscInt_FMT " nonzeros (%.2f per row), %s, built on the %s\n", gs->type == PCGSAI_SPD ? "G" : "M", gs->nnz, gs->M->rmap->N ? (double)gs->nnz / (double)gs->M->rmap->N : 0.0, ((PetscObject)gs->M)->type_name, gs->ondevice ? "device" : "host"));
  if (gs->conversion[0]) PetscCall(PetscViewerASCIIPrintf(viewer, "conversion: %s\n", gs->conversion));
  PetscCall(PetscViewerASCIIPrintf(viewer, "largest local problem %" PetscInt_FMT " x %" PetscInt_FMT "; fallbacks to the diagonal: %" PetscInt_FMT "\n", gs->maxn1, gs->maxn2, gs->nfallback));
  PetscCall(PetscSNPrintf(line, sizeof(line), "set-up time (s, rank 0): total %.3g;", gs->ttotal));
  for (PetscInt s = 0; s < GSAI_NSTAGES; s++) {
    PetscCall(PetscStrlen(line, &len));
    PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, " %s %.3g%s", GSAIStageNames[s], gs->time[s], s + 1 < GSAI_NSTAGES ? "," : ""));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s\n", line));
  if (gs->ondevice) PetscCall(PetscViewerASCIIPrintf(viewer, "(device: rows, pattern and solve are device times; assemble is the host's, while the device solves)\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCSetFromOptions_GSAI(PC pc, GpukitOptionItems PetscOptionsObject)
{
  PC_GSAI          *gs = (PC_GSAI *)pc->data;
  PetscBool         flg, b;
  PCGSAIType        type;
  PCGSAIPatternType pattern;
  PetscReal         tau;
  PetscInt          n;
  PCSide            side;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "GSAI (sparse approximate inverse) options");
  PetscCall(PetscOptionsEnum("-pc_gsai_type", "general: min ||AM-I||_F (right) or ||MA-I||_F (left); spd: M = G^T G (FSAI)", "PCGSAISetType", PCGSAITypes, (PetscEnum)gs->type, (PetscEnum *)&type, &flg));
  if (flg) PetscCall(PCGSAISetType(pc, type));
  PetscCall(PetscOptionsEnum("-pc_gsai_pattern", "Sparsity pattern of M: a, threshold or power", "PCGSAISetPattern", PCGSAIPatternTypes, (PetscEnum)gs->pattern, (PetscEnum *)&pattern, &flg));
  if (flg) PetscCall(PCGSAISetPattern(pc, pattern));
  PetscCall(PetscOptionsReal("-pc_gsai_threshold", "Keep |a_ij| > (1 - tau) max |a| of the row (left) or column (right), 0 <= tau <= 1", "PCGSAISetThreshold", gs->tau, &tau, &flg));
  if (flg) PetscCall(PCGSAISetThreshold(pc, tau));
  PetscCall(PetscOptionsInt("-pc_gsai_power", "Power of the thresholded A whose pattern M takes (pattern power), 1 or more", "PCGSAISetPower", gs->power, &n, &flg));
  if (flg) PetscCall(PCGSAISetPower(pc, n));
  PetscCall(PetscOptionsInt("-pc_gsai_max_nnz", "Largest number of nonzeros per row/column of M, diagonal included (0: no cap)", "PCGSAISetMaxNnz", gs->maxnnz, &n, &flg));
  if (flg) PetscCall(PCGSAISetMaxNnz(pc, n));
  {
    const char *sides[] = {"default", "left", "right"};
    PetscInt    cur = gs->side == PC_LEFT ? 1 : (gs->side == PC_RIGHT ? 2 : 0), idx = cur;
    PetscCall(PetscOptionsEList("-pc_gsai_side", "Side the general M is built for (default: -ksp_pc_side, else left)", "PCGSAISetSide", sides, 3, sides[cur], &idx, &flg));
    side = idx == 1 ? PC_LEFT : (idx == 2 ? PC_RIGHT : PC_SIDE_DEFAULT);
    if (flg) PetscCall(PCGSAISetSide(pc, side));
  }
  PetscCall(PetscOptionsBool("-pc_gsai_use_device", "Build M on the GPU when A is a CUDA matrix", "PCGSAISetUseDevice", gs->usedevice, &b, &flg));
  if (flg) PetscCall(PCGSAISetUseDevice(pc, b));
  PetscCall(PetscOptionsInt("-pc_gsai_device_workspace", "Device workspace for the local problems solved in global memory, in KiB (0: half the free device memory)", "PCGSAISetDeviceWorkspace", gs->workspace, &n, &flg));
  if (flg) PetscCall(PCGSAISetDeviceWorkspace(pc, n));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCReset_GSAI(PC pc)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCall(GSAIResetSetUp(gs));
#if defined(GPUKIT_GSAICUDA_AVAILABLE)
  PetscCall(PCReset_GSAI_CUDA(pc));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const char *const GSAIComposed[] = {"PCGSAISetType_C",   "PCGSAIGetType_C", "PCGSAISetPattern_C", "PCGSAIGetPattern_C",   "PCGSAISetThreshold_C", "PCGSAIGetThreshold_C",       "PCGSAISetPower_C",  "PCGSAIGetPower_C",    "PCGSAISetMaxNnz_C",
                                           "PCGSAIGetMaxNnz_C", "PCGSAISetSide_C", "PCGSAIGetSide_C",    "PCGSAISetUseDevice_C", "PCGSAIGetUseDevice_C", "PCGSAISetDeviceWorkspace_C", "PCGSAIGetMatrix_C", "PCGSAIGetSetUpInfo_C", "PCGSAIGetSetUpTimes_C"};

static PetscErrorCode PCDestroy_GSAI(PC pc)
{
  PetscFunctionBegin;
  PetscCall(PCReset_GSAI(pc));
  for (size_t i = 0; i < sizeof(GSAIComposed) / sizeof(GSAIComposed[0]); i++) PetscCall(PetscObjectComposeFunction((PetscObject)pc, GSAIComposed[i], NULL));
  PetscCall(PetscFree(pc->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   The methods behind the public functions
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode PCGSAISetType_GSAI(PC pc, PCGSAIType type)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(type == PCGSAI_GENERAL || type == PCGSAI_SPD, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "Unknown PCGSAIType %d: use PCGSAI_GENERAL or PCGSAI_SPD", (int)type);
  if (gs->type != type) pc->setupcalled = PETSC_FALSE;
  gs->type = type;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetType_GSAI(PC pc, PCGSAIType *type)
{
  PetscFunctionBegin;
  *type = ((PC_GSAI *)pc->data)->type;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetPattern_GSAI(PC pc, PCGSAIPatternType pattern)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(pattern >= PCGSAI_PATTERN_A && pattern <= PCGSAI_PATTERN_POWER, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "Unknown PCGSAIPatternType %d: use a, threshold or power", (int)pattern);
  if (gs->pattern != pattern) pc->setupcalled = PETSC_FALSE;
  gs->pattern = pattern;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetPattern_GSAI(PC pc, PCGSAIPatternType *pattern)
{
  PetscFunctionBegin;
  *pattern = ((PC_GSAI *)pc->data)->pattern;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetThreshold_GSAI(PC pc, PetscReal tau)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(tau >= 0.0 && tau <= 1.0, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI threshold tau must lie in [0, 1] (keep |a_ij| > (1 - tau) max |a|; 1 keeps every nonzero, 0 only the largest), got %g", (double)tau);
  if (gs->tau != tau) pc->setupcalled = PETSC_FALSE;
  gs->tau = tau;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetThreshold_GSAI(PC pc, PetscReal *tau)
{
  PetscFunctionBegin;
  *tau = ((PC_GSAI *)pc->data)->tau;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetPower_GSAI(PC pc, PetscInt power)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(power >= 1, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI power must be 1 or more (1: the thresholded pattern of A, k: the pattern of its k-th power), got %" PetscInt_FMT, power);
  if (gs->power != power) pc->setupcalled = PETSC_FALSE;
  gs->power = power;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetPower_GSAI(PC pc, PetscInt *power)
{
  PetscFunctionBegin;
  *power = ((PC_GSAI *)pc->data)->power;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetMaxNnz_GSAI(PC pc, PetscInt maxnnz)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(maxnnz >= 0, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI max nnz must be 0 (no cap) or at least 1 (the diagonal), got %" PetscInt_FMT, maxnnz);
  if (gs->maxnnz != maxnnz) pc->setupcalled = PETSC_FALSE;
  gs->maxnnz = maxnnz;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetMaxNnz_GSAI(PC pc, PetscInt *maxnnz)
{
  PetscFunctionBegin;
  *maxnnz = ((PC_GSAI *)pc->data)->maxnnz;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetSide_GSAI(PC pc, PCSide side)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(side == PC_SIDE_DEFAULT || side == PC_LEFT || side == PC_RIGHT, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI side must be left, right or default (follow -ksp_pc_side), got %d", (int)side);
  if (gs->side != side) pc->setupcalled = PETSC_FALSE;
  gs->side = side;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetSide_GSAI(PC pc, PCSide *side)
{
  PetscFunctionBegin;
  *side = ((PC_GSAI *)pc->data)->side;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetUseDevice_GSAI(PC pc, PetscBool flg)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  if (gs->usedevice != flg) pc->setupcalled = PETSC_FALSE;
  gs->usedevice = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetUseDevice_GSAI(PC pc, PetscBool *flg)
{
  PetscFunctionBegin;
  *flg = ((PC_GSAI *)pc->data)->usedevice;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetDeviceWorkspace_GSAI(PC pc, PetscInt kib)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(kib >= 0, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI device workspace must be 0 (automatic) or a size in KiB, got %" PetscInt_FMT, kib);
  gs->workspace = kib;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetMatrix_GSAI(PC pc, Mat *M)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(gs->M, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCGSAI has no approximate inverse yet: call PCSetUp() (or KSPSetUp()) first");
  *M = gs->M;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetSetUpInfo_GSAI(PC pc, PetscInt *nnz, PetscInt *nfallback, PetscBool *ondevice)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(gs->M, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCGSAI has no approximate inverse yet: call PCSetUp() (or KSPSetUp()) first");
  if (nnz) *nnz = gs->nnz;
  if (nfallback) *nfallback = gs->nfallback;
  if (ondevice) *ondevice = gs->ondevice;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetSetUpTimes_GSAI(PC pc, PetscReal *total, PetscReal *rows, PetscReal *pattern, PetscReal *solve, PetscReal *assemble)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(gs->M, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCGSAI has no approximate inverse yet: call PCSetUp() (or KSPSetUp()) first");
  if (total) *total = (PetscReal)gs->ttotal;
  if (rows) *rows = (PetscReal)gs->time[GSAI_STAGE_ROWS];
  if (pattern) *pattern = (PetscReal)gs->time[GSAI_STAGE_PATTERN];
  if (solve) *solve = (PetscReal)gs->time[GSAI_STAGE_SOLVE];
  if (assemble) *assemble = (PetscReal)gs->time[GSAI_STAGE_ASSEMBLE];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   PCGSAI - "gsai" - a static sparse approximate inverse preconditioner with a fixed pattern, built row by row
   (or column by column) from independent small dense problems, on the host or, for a `MATSEQAIJCUSPARSE`
   matrix, on the GPU (Dehnavi's GSAI, seed 004 chapter 5). `PCApply()` is one `MatMult()` with M.

   Options Database Keys:
+  -pc_gsai_type <general,spd>           - general: M minimises ||AM - I||_F (right) or ||MA - I||_F (left); spd: M = G^T G (FSAI), SPD for `KSPCG`
.  -pc_gsai_pattern <a,threshold,power>  - the pattern of M: that of A, thresholded A, or a power of thresholded A (always with the diagonal)
.  -pc_gsai_threshold <tau>              - 0 <= tau <= 1: keep |a_ij| > (1 - tau) max |a| of the row (left, spd) or column (right); default 0.9
.  -pc_gsai_power <k>                    - k >= 1: pattern of the k-th power of the thresholded A; default 2
.  -pc_gsai_max_nnz <n>                  - at most n nonzeros per row (left, spd) or column (right) of M: the diagonal and the largest others (0: no cap)
.  -pc_gsai_side <left,right>            - the side the general M is built for; default: `-ksp_pc_side`, else left
.  -pc_gsai_use_device <bool>            - build M on the GPU when A is a CUDA matrix (default true)
-  -pc_gsai_device_workspace <KiB>       - limit of the device workspace of the local problems (0: half the free memory)

   Level: intermediate

   Notes:
   A must be square and assembled; any type whose rows `MatGetRow()` reads works, others are converted to
   `MATAIJ` (`-info` says so). On several ranks each rank computes its own rows (or columns) of M, with the
   rows of A it needs from other ranks; M does not depend on the number of ranks. A singular or ill-conditioned
   local problem falls back to the diagonal (counted in `PCView()` and `-info`); one that has no diagonal
   fallback is an error. See docs/gsai.md.

.seealso: `PCGSAISetType()`, `PCGSAISetPattern()`, `PCGSAISetThreshold()`, `PCGSAISetPower()`, `PCGSAISetMaxNnz()`, `PCGSAISetSide()`, `PCGSAIGetMatrix()`, `PCJACOBI`, `PCHYPRE`
M*/
static PetscErrorCode PCCreate_GSAI(PC pc)
{
  PC_GSAI *gs;

  PetscFunctionBegin;
  PetscCall(PetscNew(&gs));
  pc->data      = (void *)gs;
  gs->type      = PCGSAI_GENERAL;
  gs->pattern   = PCGSAI_PATTERN_A;
  gs->tau       = 0.9;
  gs->power     = 2;
  gs->maxnnz    = 0;
  gs->side      = PC_SIDE_DEFAULT;
  gs->usedevice = PETSC_TRUE;
  gs->sideused  = PC_LEFT;

  pc->ops->setup               = PCSetUp_GSAI;
  pc->ops->apply               = PCApply_GSAI;
  pc->ops->applytranspose      = PCApplyTranspose_GSAI;
  pc->ops->applysymmetricleft  = PCApplySymmetricLeft_GSAI;
  pc->ops->applysymmetricright = PCApplySymmetricRight_GSAI;
  pc->ops->reset               = PCReset_GSAI;
  pc->ops->destroy             = PCDestroy_GSAI;
  pc->ops->setfromoptions      = PCSetFromOptions_GSAI;
  pc->ops->view                = PCView_GSAI;

  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetType_C", PCGSAISetType_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetType_C", PCGSAIGetType_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetPattern_C", PCGSAISetPattern_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetPattern_C", PCGSAIGetPattern_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetThreshold_C", PCGSAISetThreshold_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetThreshold_C", PCGSAIGetThreshold_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetPower_C", PCGSAISetPower_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetPower_C", PCGSAIGetPower_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetMaxNnz_C", PCGSAISetMaxNnz_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetMaxNnz_C", PCGSAIGetMaxNnz_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetSide_C", PCGSAISetSide_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetSide_C", PCGSAIGetSide_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetUseDevice_C", PCGSAISetUseDevice_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetUseDevice_C", PCGSAIGetUseDevice_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetDeviceWorkspace_C", PCGSAISetDeviceWorkspace_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetMatrix_C", PCGSAIGetMatrix_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetSetUpInfo_C", PCGSAIGetSetUpInfo_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetSetUpTimes_C", PCGSAIGetSetUpTimes_GSAI));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCRegister_GSAI_Private(void)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventRegister("GSAISetUp", PC_CLASSID, &PC_GSAI_SetUp));
  PetscCall(PetscLogEventRegister("GSAIRows", PC_CLASSID, &PC_GSAI_Rows));
  PetscCall(PetscLogEventRegister("GSAIPattern", PC_CLASSID, &PC_GSAI_Pattern));
  PetscCall(PetscLogEventRegister("GSAISolve", PC_CLASSID, &PC_GSAI_Solve));
  PetscCall(PetscLogEventRegister("GSAIAssemble", PC_CLASSID, &PC_GSAI_Assemble));
  PetscCall(PetscLogEventRegister("GSAIPatternCUDA", PC_CLASSID, &PC_GSAI_PatternCUDA));
  PetscCall(PetscLogEventRegister("GSAIDimsCUDA", PC_CLASSID, &PC_GSAI_DimsCUDA));
  PetscCall(PetscLogEventRegister("GSAISolveCUDA", PC_CLASSID, &PC_GSAI_SolveCUDA));
  PetscCall(PetscLogEventRegister("GSAIAssembleCUDA", PC_CLASSID, &PC_GSAI_AssembleCUDA));
  PetscCall(PCRegister(PCGSAI, PCCreate_GSAI));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Public functions
   ------------------------------------------------------------------------------------------------------ */

/*@
  PCGSAISetType - Sets the kind of approximate inverse `PCGSAI` builds

  Logically Collective

  Input Parameters:
+ pc   - the `PCGSAI` preconditioner
- type - `PCGSAI_GENERAL` (min ||AM - I||_F or ||MA - I||_F, see `PCGSAISetSide()`) or `PCGSAI_SPD` (M = G^T G, G lower triangular)

  Options Database Key:
. -pc_gsai_type <general,spd> - the type

  Level: intermediate

  Note:
  Use `PCGSAI_SPD` with `KSPCG`: the general M is not symmetric. The spd type needs a symmetric positive
  definite A and uses its lower triangle.

.seealso: `PCGSAI`, `PCGSAIGetType()`, `PCGSAIType`
@*/
PetscErrorCode PCGSAISetType(PC pc, PCGSAIType type)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(pc, type, 2);
  PetscTryMethod(pc, "PCGSAISetType_C", (PC, PCGSAIType), (pc, type));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetType - Gets the kind of approximate inverse `PCGSAI` builds

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner

  Output Parameter:
. type - `PCGSAI_GENERAL` or `PCGSAI_SPD`

  Level: intermediate

.seealso: `PCGSAI`, `PCGSAISetType()`
@*/
PetscErrorCode PCGSAIGetType(PC pc, PCGSAIType *type)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  GpukitAssertPointer(type, 2);
  PetscUseMethod(pc, "PCGSAIGetType_C", (PC, PCGSAIType *), (pc, type));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAISetPattern - Sets the sparsity pattern of the approximate inverse

  Logically Collective

  Input Parameters:
+ pc      - the `PCGSAI` preconditioner
- pattern - `PCGSAI_PATTERN_A` (the stored pattern of A), `PCGSAI_PATTERN_THRESHOLD` (A thresholded with `PCGSAISetThreshold()`) or `PCGSAI_PATTERN_POWER` (the `PCGSAISetPower()`-th power of the thresholded A)

  Options Database Key:
. -pc_gsai_pattern <a,threshold,power> - the pattern

  Level: intermediate

  Note:
  The diagonal is always in the pattern. The spd type keeps the lower triangular part. `PCGSAISetMaxNnz()`
  caps any of them.

.seealso: `PCGSAI`, `PCGSAIGetPattern()`, `PCGSAISetThreshold()`, `PCGSAISetPower()`, `PCGSAISetMaxNnz()`
@*/
PetscErrorCode PCGSAISetPattern(PC pc, PCGSAIPatternType pattern)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(pc, pattern, 2);
  PetscTryMethod(pc, "PCGSAISetPattern_C", (PC, PCGSAIPatternType), (pc, pattern));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetPattern - Gets the sparsity pattern type of the approximate inverse

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner

  Output Parameter:
. pattern - the pattern type

  Level: intermediate

.seealso: `PCGSAI`, `PCGSAISetPattern()`
@*/
PetscErrorCode PCGSAIGetPattern(PC pc, PCGSAIPatternType *pattern)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  GpukitAssertPointer(pattern, 2);
  PetscUseMethod(pc, "PCGSAIGetPattern_C", (PC, PCGSAIPatternType *), (pc, pattern));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAISetThreshold - Sets the threshold tau of the thresholded pattern (the seed's eq. 5.3)

  Logically Collective

  Input Parameters:
+ pc  - the `PCGSAI` preconditioner
- tau - 0 <= tau <= 1: an entry a of A enters the pattern when |a| > (1 - tau) max |a'|, the maximum over
        the same row of A (left, spd) or the same column (right); tau = 1 keeps every nonzero, tau = 0 only
        the largest. The diagonal is always kept.

  Options Database Key:
. -pc_gsai_threshold <tau> - the threshold (default 0.9)

  Level: intermediate

  Note:
  Used by the patterns `PCGSAI_PATTERN_THRESHOLD` and `PCGSAI_PATTERN_POWER` only.

.seealso: `PCGSAI`, `PCGSAIGetThreshold()`, `PCGSAISetPattern()`
@*/
PetscErrorCode PCGSAISetThreshold(PC pc, PetscReal tau)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveReal(pc, tau, 2);
  PetscTryMethod(pc, "PCGSAISetThreshold_C", (PC, PetscReal), (pc, tau));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetThreshold - Gets the threshold tau of the thresholded pattern

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner

  Output Parameter:
. tau - the threshold

  Level: intermediate

.seealso: `PCGSAI`, `PCGSAISetThreshold()`
@*/
PetscErrorCode PCGSAIGetThreshold(PC pc, PetscReal *tau)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  GpukitAssertPointer(tau, 2);
  PetscUseMethod(pc, "PCGSAIGetThreshold_C", (PC, PetscReal *), (pc, tau));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAISetPower - Sets the power of the thresholded A whose pattern the approximate inverse takes

  Logically Collective

  Input Parameters:
+ pc    - the `PCGSAI` preconditioner
- power - the power, 1 or more (1 is the thresholded pattern itself)

  Options Database Key:
. -pc_gsai_power <k> - the power (default 2)

  Level: intermediate

  Note:
  Used by the pattern `PCGSAI_PATTERN_POWER` only, as ParaSails' levels: the pattern of (thresholded A)^k.

.seealso: `PCGSAI`, `PCGSAIGetPower()`, `PCGSAISetThreshold()`, `PCGSAISetPattern()`
@*/
PetscErrorCode PCGSAISetPower(PC pc, PetscInt power)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveInt(pc, power, 2);
  PetscTryMethod(pc, "PCGSAISetPower_C", (PC, PetscInt), (pc, power));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetPower - Gets the power of the power pattern

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner

  Output Parameter:
. power - the power

  Level: intermediate

.seealso: `PCGSAI`, `PCGSAISetPower()`
@*/
PetscErrorCode PCGSAIGetPower(PC pc, PetscInt *power)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  GpukitAssertPointer(power, 2);
  PetscUseMethod(pc, "PCGSAIGetPower_C", (PC, PetscInt *), (pc, power));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAISetMaxNnz - Caps the nonzeros per row (left, spd) or column (right) of the approximate inverse

  Logically Collective

  Input Parameters:
+ pc     - the `PCGSAI` preconditioner
- maxnnz - 0 (no cap) or the largest number of nonzeros, diagonal included

  Options Database Key:
. -pc_gsai_max_nnz <n> - the cap

  Level: intermediate

  Note:
  A capped row keeps its diagonal and the n - 1 other entries with the largest weight: |a| for the patterns
  a and threshold, the entry of |thresholded A|^k for the power pattern (compared in single precision, ties
  to the smaller column).

.seealso: `PCGSAI`, `PCGSAIGetMaxNnz()`, `PCGSAISetPattern()`
@*/
PetscErrorCode PCGSAISetMaxNnz(PC pc, PetscInt maxnnz)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveInt(pc, maxnnz, 2);
  PetscTryMethod(pc, "PCGSAISetMaxNnz_C", (PC, PetscInt), (pc, maxnnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetMaxNnz - Gets the cap on nonzeros per row or column

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner

  Output Parameter:
. maxnnz - the cap (0: none)

  Level: intermediate

.seealso: `PCGSAI`, `PCGSAISetMaxNnz()`
@*/
PetscErrorCode PCGSAIGetMaxNnz(PC pc, PetscInt *maxnnz)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  GpukitAssertPointer(maxnnz, 2);
  PetscUseMethod(pc, "PCGSAIGetMaxNnz_C", (PC, PetscInt *), (pc, maxnnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAISetSide - Sets the side the general approximate inverse is built for

  Logically Collective

  Input Parameters:
+ pc   - the `PCGSAI` preconditioner
- side - `PC_RIGHT` (M minimises ||AM - I||_F, column by column), `PC_LEFT` (||MA - I||_F, row by row) or
         `PC_SIDE_DEFAULT`: the `-ksp_pc_side` option of the PC's prefix, else left

  Options Database Key:
. -pc_gsai_side <left,right> - the side

  Level: intermediate

  Note:
  A PC cannot see the side its `KSP` uses: a program that calls `KSPSetPCSide()` should call this too (the
  option `-ksp_pc_side` is seen). Either M works on either side; the matching one is the better preconditioner.
  The spd type ignores the side.

.seealso: `PCGSAI`, `PCGSAIGetSide()`, `KSPSetPCSide()`
@*/
PetscErrorCode PCGSAISetSide(PC pc, PCSide side)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(pc, side, 2);
  PetscTryMethod(pc, "PCGSAISetSide_C", (PC, PCSide), (pc, side));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetSide - Gets the side set with `PCGSAISetSide()`

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner

  Output Parameter:
. side - the side (`PC_SIDE_DEFAULT`: follow `-ksp_pc_side`)

  Level: intermediate

.seealso: `PCGSAI`, `PCGSAISetSide()`
@*/
PetscErrorCode PCGSAIGetSide(PC pc, PCSide *side)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  GpukitAssertPointer(side, 2);
  PetscUseMethod(pc, "PCGSAIGetSide_C", (PC, PCSide *), (pc, side));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAISetUseDevice - Sets whether M is built on the GPU when A is a CUDA matrix

  Logically Collective

  Input Parameters:
+ pc  - the `PCGSAI` preconditioner
- flg - `PETSC_TRUE` (default) to build on the GPU for a `MATSEQAIJCUSPARSE` or `MATSEQSGDIACUDA` matrix

  Options Database Key:
. -pc_gsai_use_device <bool> - the flag

  Level: advanced

  Note:
  With `PETSC_FALSE`, or on several ranks, M is built on the host and stored as `MATAIJCUSPARSE`.

.seealso: `PCGSAI`, `PCGSAIGetUseDevice()`, `PCGSAISetDeviceWorkspace()`
@*/
PetscErrorCode PCGSAISetUseDevice(PC pc, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveBool(pc, flg, 2);
  PetscTryMethod(pc, "PCGSAISetUseDevice_C", (PC, PetscBool), (pc, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetUseDevice - Gets whether M is built on the GPU for a CUDA matrix

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner

  Output Parameter:
. flg - the flag

  Level: advanced

.seealso: `PCGSAI`, `PCGSAISetUseDevice()`
@*/
PetscErrorCode PCGSAIGetUseDevice(PC pc, PetscBool *flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  GpukitAssertPointer(flg, 2);
  PetscUseMethod(pc, "PCGSAIGetUseDevice_C", (PC, PetscBool *), (pc, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAISetDeviceWorkspace - Limits the device memory that holds the local problems at once

  Logically Collective

  Input Parameters:
+ pc  - the `PCGSAI` preconditioner
- kib - the limit in KiB, or 0 (default) for half the free device memory

  Options Database Key:
. -pc_gsai_device_workspace <KiB> - the limit

  Level: advanced

  Note:
  The small local problems (at most 32 pattern entries and 2048 doubles) are solved in shared memory and need no
  workspace. The others are solved in batches of consecutive rows whose dense systems fit the limit (at least one
  row per batch); with the default, the free device memory is asked for only when they need more than 64 MiB.

.seealso: `PCGSAI`, `PCGSAISetUseDevice()`
@*/
PetscErrorCode PCGSAISetDeviceWorkspace(PC pc, PetscInt kib)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveInt(pc, kib, 2);
  PetscTryMethod(pc, "PCGSAISetDeviceWorkspace_C", (PC, PetscInt), (pc, kib));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetMatrix - Gets the approximate inverse built by `PCSetUp()`

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner, set up

  Output Parameter:
. M - the approximate inverse (general type), or the lower triangular factor G with M = G^T G (spd type);
      owned by the PC, do not destroy it

  Level: advanced

.seealso: `PCGSAI`, `PCGSAIGetSetUpInfo()`
@*/
PetscErrorCode PCGSAIGetMatrix(PC pc, Mat *M)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  GpukitAssertPointer(M, 2);
  PetscUseMethod(pc, "PCGSAIGetMatrix_C", (PC, Mat *), (pc, M));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetSetUpInfo - Gets facts about the last set-up of `PCGSAI`

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner, set up

  Output Parameters:
+ nnz       - the nonzeros of M (general) or G (spd), over all ranks (or `NULL`)
. nfallback - the rows or columns whose local problem fell back to the diagonal, over all ranks (or `NULL`)
- ondevice  - whether M was built on the GPU (or `NULL`)

  Level: advanced

.seealso: `PCGSAI`, `PCGSAIGetMatrix()`
@*/
PetscErrorCode PCGSAIGetSetUpInfo(PC pc, PetscInt *nnz, PetscInt *nfallback, PetscBool *ondevice)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscUseMethod(pc, "PCGSAIGetSetUpInfo_C", (PC, PetscInt *, PetscInt *, PetscBool *), (pc, nnz, nfallback, ondevice));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetSetUpTimes - Gets the times of the last set-up of `PCGSAI`, in total (wall clock) and per stage (the
  times `PCView()` prints)

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner, set up

  Output Parameters:
+ total    - the whole `PCSetUp()`, in seconds (or `NULL`)
. rows     - getting the rows of A (or of A^T for the right type) that the local problems need (or `NULL`)
. pattern  - thresholds, powers and caps: the pattern of M; on the device also the sizes and workspace of the local problems (or `NULL`)
. solve    - the local least-squares (or SPD) problems (or `NULL`)
- assemble - M (or G) as a PETSc matrix (or `NULL`)

  Level: advanced

  Note:
  The times are those of this rank (rank 0 is the one `PCView()` prints). On the device, rows, pattern and solve are
  measured on the device (CUDA events), and assemble is the host's time to build M (its structure, the copy of the
  structure to the device, the values); the host builds M's structure while the device solves, so the stages can add
  up to more than the total. After a set-up with `SAME_NONZERO_PATTERN` the pattern stage is 0 on the host and
  nearly 0 on the device (the pattern is reused).

.seealso: `PCGSAI`, `PCGSAIGetSetUpInfo()`, `PCView()`
@*/
PetscErrorCode PCGSAIGetSetUpTimes(PC pc, PetscReal *total, PetscReal *rows, PetscReal *pattern, PetscReal *solve, PetscReal *assemble)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscUseMethod(pc, "PCGSAIGetSetUpTimes_C", (PC, PetscReal *, PetscReal *, PetscReal *, PetscReal *, PetscReal *), (pc, total, rows, pattern, solve, assemble));
  PetscFunctionReturn(PETSC_SUCCESS);
}
