/*
   PCGSAI's host set-up, part 2: the local problems (Householder QR least squares, FSAI Cholesky) of the rows of N on
   their pattern, with the fallback to the diagonal, and the failures that have none: agreed on by every rank and raised
   as the same error everywhere. The device kernels (gsaikernels.cu) follow the same steps and the same fallback rule.
*/
#include "gsaiimpl.h"

/* ------------------------------------------------------------------------------------------------------
   Local problems, in double precision
   ------------------------------------------------------------------------------------------------------ */

/*
   min || C x - e_p ||_2 by Householder QR, C n1 x n2 column-major (overwritten) with one more column n2 for the
   right-hand side (set to e_p here). Returns PETSC_FALSE (x untouched) when p < 0, n1 < n2, or a pivot |R(c,c)| is at
   most GSAI_RCOND_TOL times the largest, or x is not finite. The device kernels (gsaikernels.cu) follow the same steps.

   C is sparse (column c is row J[c] of B on the rows I, in increasing order: a staircase), so the factorisation keeps
   for every column c a range [lo[c], hi[c]] of rows outside which its entries are exact zeros, and skips the products
   with those zeros: a reflector of column c reaches rows c .. hi[c] only, and a column whose range misses them is not
   touched. Skipped terms are exact zeros, so every sum is the same, in the same order, as over the full columns.
   The reflector is applied to up to four columns at a time (independent sums, one pass over the reflector).
   lo, hi, act: workspaces of n2 + 1.
*/
static PetscBool GSAILeastSquares(PetscInt n1, PetscInt n2, PetscScalar *C, PetscInt p, PetscScalar *diag, PetscScalar *x, PetscInt *lo, PetscInt *hi, PetscInt *act)
{
  PetscReal    rmax = 0.0, rmin = PETSC_MAX_REAL;
  PetscScalar *rhs  = C + n2 * n1;

  if (p < 0 || n1 < n2) return PETSC_FALSE;
  for (PetscInt i = 0; i < n1; i++) rhs[i] = 0.0;
  rhs[p] = 1.0;
  lo[n2] = hi[n2] = p;
  for (PetscInt c = 0; c < n2; c++) {
    PetscScalar   *v = C + c * n1; /* indexed by row: the reflector lives in rows c .. h */
    const PetscInt h = hi[c];
    PetscReal      s = 0.0, norm, alpha, vtv, scale;
    PetscInt       na = 0;

    for (PetscInt i = c; i <= h; i++) s += PetscRealPart(v[i] * v[i]);
    norm = PetscSqrtReal(s);
    if (norm == 0.0) return PETSC_FALSE;
    alpha = PetscRealPart(v[c]) >= 0.0 ? -norm : norm;
    vtv   = 2.0 * norm * (norm + PetscAbsScalar(v[c]));
    v[c] -= alpha; /* v = x - alpha e_1, H = I - 2 v v^T / (v^T v) */
    scale = 2.0 / vtv;
    /* the columns (and the right-hand side) the reflector reaches */
    for (PetscInt c2 = c + 1; c2 <= n2; c2++)
      if (lo[c2] <= h && hi[c2] >= c) act[na++] = c2;
    for (PetscInt t = 0; t < na; t += 4) {
      const PetscInt nb = PetscMin(4, na - t);
      PetscScalar   *w[4], d[4] = {0.0, 0.0, 0.0, 0.0};
      PetscInt       a = h, b = c;

      for (PetscInt q = 0; q < nb; q++) {
        w[q] = C + act[t + q] * n1;
        a    = PetscMin(a, PetscMax(c, lo[act[t + q]]));
        b    = PetscMax(b, PetscMin(h, hi[act[t + q]]));
      }
      for (PetscInt q = nb; q < 4; q++) w[q] = w[0];
      /* d_q = v^T w_q over the rows where both may be nonzero (the rest are exact zeros) */
      if (nb == 4) {
        PetscScalar d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0;
        for (PetscInt i = a; i <= b; i++) {
          const PetscScalar vi = v[i];
          d0 += vi * w[0][i];
          d1 += vi * w[1][i];
          d2 += vi * w[2][i];
          d3 += vi * w[3][i];
        }
        d[0] = d0, d[1] = d1, d[2] = d2, d[3] = d3;
      } else {
        for (PetscInt q = 0; q < nb; q++) {
          PetscScalar dq = 0.0;
          for (PetscInt i = a; i <= b; i++) dq += v[i] * w[q][i];
          d[q] = dq;
        }
      }
      for (PetscInt q = 0; q < nb; q++) {
        d[q] *= scale;
        if (d[q] != 0.0) {
          lo[act[t + q]] = PetscMin(lo[act[t + q]], c);
          hi[act[t + q]] = PetscMax(hi[act[t + q]], h);
        }
      }
      /* w_q -= d_q v on rows c .. h */
      if (nb == 4 && d[0] != 0.0 && d[1] != 0.0 && d[2] != 0.0 && d[3] != 0.0) {
        const PetscScalar d0 = d[0], d1 = d[1], d2 = d[2], d3 = d[3];
        PetscScalar      *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3];
        for (PetscInt i = c; i <= h; i++) {
          const PetscScalar vi = v[i];
          w0[i] -= d0 * vi;
          w1[i] -= d1 * vi;
          w2[i] -= d2 * vi;
          w3[i] -= d3 * vi;
        }
      } else {
        for (PetscInt q = 0; q < nb; q++) {
          const PetscScalar dq = d[q];
          PetscScalar      *wq = w[q];
          if (dq == 0.0) continue;
          for (PetscInt i = c; i <= h; i++) wq[i] -= dq * v[i];
        }
      }
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
   Column j of L is S(j:n, j) minus L(j:n, k) L(j, k) for k = 0 .. j-1 in this order, as columns (contiguous, one pass
   over up to four columns k at a time); the k with L(j, k) = 0 are skipped (exact zeros), so every entry is the same
   sum, in the same order, as the entry-by-entry form. kl: workspace of n.
*/
static PetscBool GSAICholeskyRow(PetscInt n, PetscScalar *S, PetscScalar *x, PetscInt *kl)
{
  for (PetscInt j = 0; j < n; j++) {
    PetscScalar      *sj  = S + j * n;
    const PetscScalar ajj = sj[j];
    PetscScalar       d;
    PetscInt          nk  = 0, t;

    for (PetscInt k = 0; k < j; k++)
      if (S[j + k * n] != 0.0) kl[nk++] = k;
    for (t = 0; t + 4 <= nk; t += 4) {
      const PetscScalar *l0 = S + kl[t] * n, *l1 = S + kl[t + 1] * n, *l2 = S + kl[t + 2] * n, *l3 = S + kl[t + 3] * n;
      const PetscScalar  f0 = l0[j], f1 = l1[j], f2 = l2[j], f3 = l3[j];
      for (PetscInt i = j; i < n; i++) sj[i] = (((sj[i] - l0[i] * f0) - l1[i] * f1) - l2[i] * f2) - l3[i] * f3;
    }
    for (; t < nk; t++) {
      const PetscScalar *l0 = S + kl[t] * n, f0 = l0[j];
      for (PetscInt i = j; i < n; i++) sj[i] -= l0[i] * f0;
    }
    d = sj[j];
    if (!(PetscRealPart(d) > GSAI_RCOND_TOL * PetscRealPart(ajj))) return PETSC_FALSE;
    d     = PetscSqrtScalar(d);
    sj[j] = d;
    for (PetscInt i = j + 1; i < n; i++) sj[i] = sj[i] / d;
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
const char *GSAIWhat(const PC_GSAI *gs)
{
  if (gs->type == PCGSAI_SPD) return "row";
  return gs->sideused == PC_RIGHT ? "column" : "row";
}

/* global number -> compact number of a GSAIRows by a table over its span (when not much longer than the numbers it
   holds; else by binary search): the local problems look up every row of every pattern */
typedef struct {
  PetscInt  g0, n;
  PetscInt *u; /* u[g - g0]: compact number of g, -1 if none; NULL: no table */
} GSAILookup;

static PetscErrorCode GSAILookupCreate(const GSAIRows *R, GSAILookup *L)
{
  PetscFunctionBegin;
  L->g0 = 0;
  L->n  = 0;
  L->u  = NULL;
  if (R->nu > 0 && R->ucol[R->nu - 1] - R->ucol[0] + 1 <= 4 * R->nu + 1024) {
    L->g0 = R->ucol[0];
    L->n  = R->ucol[R->nu - 1] - L->g0 + 1;
    PetscCall(PetscMalloc1(L->n, &L->u));
    for (PetscInt g = 0; g < L->n; g++) L->u[g] = -1;
    for (PetscInt u = 0; u < R->nu; u++) L->u[R->ucol[u] - L->g0] = u;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscInt GSAICompactOf(const GSAIRows *R, const GSAILookup *L, PetscInt g)
{
  if (!L->u) return GSAIRowsCompact(R, g);
  g -= L->g0;
  return (g >= 0 && g < L->n) ? L->u[g] : -1;
}

/* the row held for global row g (-1 if none), as GSAIRowsFind() */
static inline PetscInt GSAIRowOf(const GSAIRows *R, const GSAILookup *L, PetscInt g)
{
  PetscInt u;
  if (!L->u) return GSAIRowsFind(R, g);
  u = GSAICompactOf(R, L, g);
  return u >= 0 ? R->rowof[u] : -1;
}

/* values of the local rows of N on the pattern Jptr/Jcol; R holds every row of B in the pattern */
PetscErrorCode GSAISolveRows(PC pc, const GSAIRows *R, PetscInt first, PetscScalar *vals, PetscInt *nfallback, PetscInt *maxn1, PetscInt *maxn2, GSAIFailure *fail)
{
  PC_GSAI       *gs   = (PC_GSAI *)pc->data;
  PetscInt       nloc = gs->nloc, *mark, *list, cap = 0, icap = 0, nf = 0, m1 = 0, m2 = 0, *lo = NULL, *hi = NULL, *act = NULL, *rj = NULL;
  PetscScalar   *C = NULL, *diag = NULL;
  PetscLogDouble flops = 0;
  GSAILookup     L;

  PetscFunctionBegin;
  fail->row = -1;
  PetscCall(GSAILookupCreate(R, &L));
  PetscCall(PetscMalloc2(R->nu, &mark, R->nu, &list));
  for (PetscInt u = 0; u < R->nu; u++) mark[u] = -1;
  for (PetscInt i = 0; i < nloc; i++) {
    const PetscInt  gk = first + i, n2 = gs->Jptr[i + 1] - gs->Jptr[i];
    const PetscInt *J  = gs->Jcol + gs->Jptr[i];
    PetscScalar    *x  = vals + gs->Jptr[i];
    PetscInt        n1 = 0, rk = GSAIRowOf(R, &L, gk), p = -1;
    PetscBool       ok;

    PetscCheck(rk >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "row %" PetscInt_FMT " is not held", gk);
    if (gs->type == PCGSAI_GENERAL) {
      PetscInt umin = R->nu, umax = -1;

      if (n2 + 1 > icap) {
        icap = PetscMax(2 * icap, n2 + 1);
        PetscCall(PetscFree4(lo, hi, act, rj));
        PetscCall(PetscMalloc4(icap, &lo, icap, &hi, icap, &act, icap, &rj));
      }
      /* I: the columns of the rows J of B, in increasing order (compact numbers are increasing global numbers) */
      for (PetscInt c = 0; c < n2; c++) {
        const PetscInt r = GSAIRowOf(R, &L, J[c]);
        PetscCheck(r >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "row %" PetscInt_FMT " is not held", J[c]);
        rj[c] = r;
        if (R->ptr[r + 1] > R->ptr[r]) {
          umin = PetscMin(umin, R->lcol[R->ptr[r]]);
          umax = PetscMax(umax, R->lcol[R->ptr[r + 1] - 1]);
        }
        for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++)
          if (mark[R->lcol[e]] < 0) {
            mark[R->lcol[e]] = 0;
            list[n1++]       = R->lcol[e];
          }
      }
      if (n1 > 0 && umax - umin + 1 <= 8 * n1) { /* a narrow span (banded B): in order by a scan, not a sort */
        n1 = 0;
        for (PetscInt u = umin; u <= umax; u++)
          if (mark[u] == 0) list[n1++] = u;
      } else PetscCall(PetscSortInt(n1, list));
      for (PetscInt t = 0; t < n1; t++) mark[list[t]] = t;
      /* the workspaces grow (geometrically) and are kept for the next rows */
      if (n1 * (n2 + 1) > cap) {
        cap = PetscMax(2 * cap, n1 * (n2 + 1));
        PetscCall(PetscFree2(C, diag));
        PetscCall(PetscMalloc2(cap, &C, cap, &diag));
      }
      PetscCall(PetscArrayzero(C, n1 * n2));
      /* column c: row J[c] of B on the rows I; lo/hi: its first and last row (the columns are sorted, and so is I) */
      for (PetscInt c = 0; c < n2; c++) {
        const PetscInt r = rj[c], e0 = R->ptr[r], e1 = R->ptr[r + 1];
        for (PetscInt e = e0; e < e1; e++) C[c * n1 + mark[R->lcol[e]]] = R->val[e];
        lo[c] = e1 > e0 ? mark[R->lcol[e0]] : n1;
        hi[c] = e1 > e0 ? mark[R->lcol[e1 - 1]] : -1;
      }
      {
        const PetscInt uk = GSAICompactOf(R, &L, gk);
        p                 = (uk >= 0) ? mark[uk] : -1;
      }
      for (PetscInt t = 0; t < n1; t++) mark[list[t]] = -1;
      ok = GSAILeastSquares(n1, n2, C, p, diag, x, lo, hi, act);
      flops += 2.0 * n1 * n2 * n2 + 4.0 * n1 * n2;
      if (!ok) {
        /* the diagonal-only least-squares solution b_kk / ||b_k||^2 */
        PetscReal   s   = 0.0;
        PetscScalar bkk = 0.0;
        for (PetscInt e = R->ptr[rk]; e < R->ptr[rk + 1]; e++) {
          s += PetscRealPart(R->val[e] * R->val[e]);
          if (R->col[e] == gk) bkk = R->val[e];
        }
        if (s != 0.0 && p >= 0 && bkk == 0.0) {
          /* zero diagonal: the best one-entry solution, x_j = b_jk / ||b_j||^2 for the row j of the pattern with b_jk != 0
             and the largest b_jk^2 / ||b_j||^2 (the smallest residual 1 - b_jk^2 / ||b_j||^2) */
          PetscReal best = 0.0, bestx = 0.0;
          PetscInt  bestc = -1;
          for (PetscInt c = 0; c < n2; c++) {
            const PetscInt r = GSAIRowOf(R, &L, J[c]);
            PetscReal      sj = 0.0;
            PetscScalar    bjk = 0.0;
            for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++) {
              sj += PetscRealPart(R->val[e] * R->val[e]);
              if (R->col[e] == gk) bjk = R->val[e];
            }
            if (bjk != 0.0 && PetscRealPart(bjk * bjk) / sj > best) {
              best  = PetscRealPart(bjk * bjk) / sj;
              bestx = PetscRealPart(bjk) / sj;
              bestc = c;
            }
          }
          if (bestc >= 0) {
            for (PetscInt c = 0; c < n2; c++) x[c] = (c == bestc) ? bestx : 0.0;
            nf++;
            m1 = PetscMax(m1, n1);
            m2 = PetscMax(m2, n2);
            continue;
          }
        }
        if (s == 0.0 || p < 0 || bkk == 0.0) { /* no fallback: an error, raised on every rank by GSAIRaiseFailure() */
          if (fail->row < 0) {
            fail->row   = gk;
            fail->kind  = s == 0.0 ? GSAI_FAIL_EMPTY : (p < 0 ? (gs->maxnnz == 1 ? GSAI_FAIL_CAPPED : GSAI_FAIL_STRUCTURAL) : GSAI_FAIL_SINGULAR);
            fail->value = (PetscReal)gs->maxnnz;
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
        PetscCall(PetscFree2(C, diag));
        PetscCall(PetscMalloc2(cap, &C, cap, &diag));
      }
      if (n2 + 1 > icap) {
        icap = PetscMax(2 * icap, n2 + 1);
        PetscCall(PetscFree4(lo, hi, act, rj));
        PetscCall(PetscMalloc4(icap, &lo, icap, &hi, icap, &act, icap, &rj));
      }
      PetscCall(PetscArrayzero(C, n2 * n2));
      for (PetscInt c = 0; c < n2; c++) { /* lo: compact numbers of J, rj: rows held */
        lo[c] = GSAICompactOf(R, &L, J[c]);
        rj[c] = lo[c] >= 0 ? R->rowof[lo[c]] : -1;
        PetscCheck(rj[c] >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "row %" PetscInt_FMT " is not held", J[c]);
        mark[lo[c]] = c;
      }
      for (PetscInt c = 0; c < n2; c++) {
        const PetscInt r = rj[c];
        for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++) {
          const PetscInt t = mark[R->lcol[e]];
          if (t >= 0) C[c + t * n2] = R->val[e];
        }
      }
      for (PetscInt c = 0; c < n2; c++) mark[lo[c]] = -1;
      /* S = the symmetric matrix that A dominates entrywise, on J x J: s_ij = sign(a_ij) min(|a_ij|, |a_ji|) where
         a_ij and a_ji have the same sign, else 0. S = A when A is symmetric; when A is only nearly symmetric (Dirichlet
         rows that keep only their diagonal, as stock KSP ex45/ex66) the one-sided couplings drop out, so that M = G^T G
         does not mix the boundary and the interior and CG converges as with Jacobi (docs/gsai.md) */
      for (PetscInt c = 0; c < n2; c++)
        for (PetscInt t = 0; t < c; t++) C[c + t * n2] = GSAISymmetricEntry(C[c + t * n2], C[t + c * n2]);
      n1 = n2;
      ok = GSAICholeskyRow(n2, C, x, act);
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
  PetscCall(PetscFree2(C, diag));
  PetscCall(PetscFree4(lo, hi, act, rj));
  PetscCall(PetscFree(L.u));
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
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "PCGSAI: %s %" PetscInt_FMT " of M cannot be computed: A(%" PetscInt_FMT ",%" PetscInt_FMT ") is zero or not stored and no %s of A has a nonzero at index %" PetscInt_FMT ", so A is structurally singular and has no approximate inverse", what, grow, grow, grow, what, grow);
  case GSAI_FAIL_CAPPED:
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "PCGSAI: %s %" PetscInt_FMT " of M cannot be computed: A(%" PetscInt_FMT ",%" PetscInt_FMT ") is zero or not stored, and the cap -pc_gsai_max_nnz %g (PCGSAISetMaxNnz()) leaves no room in its pattern for the entries that reach index %" PetscInt_FMT "; raise the cap to 2 or more (or 0: none)", what, grow, grow, grow, (double)gvalue, grow);
  case GSAI_FAIL_SINGULAR:
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "PCGSAI: the local least-squares problem of %s %" PetscInt_FMT " of M is (numerically) singular and A(%" PetscInt_FMT ",%" PetscInt_FMT ") = 0, so the diagonal fallback does not exist either; A is singular or nearly so", what, grow, grow, grow);
  case GSAI_FAIL_NOTSPD:
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "PCGSAI type spd needs a symmetric positive definite matrix, but A(%" PetscInt_FMT ",%" PetscInt_FMT ") = %g is not positive; use -pc_gsai_type general", grow, grow, (double)gvalue);
  default:
    SETERRQ(comm, PETSC_ERR_PLIB, "PCGSAI: unknown failure %" PetscInt_FMT " in row %" PetscInt_FMT, gkind, grow);
  }
}
