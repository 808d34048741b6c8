/*
   PCGSAI's adaptive pattern (-pc_gsai_pattern adaptive), the host reference for one or more ranks.

   Every row k of N starts from the diagonal (general type with b_kk = 0: also the rows j with b_jk != 0, the largest
   |b_jk| first within the cap, so that index k is in reach). Then, for `steps` rounds, each row that is still growing
   solves its local problem on its pattern J (the same problem as the static patterns, gsaiimpl.h) and looks at its residual:
     - general: r = x^T B(J,:) - e_k^T, a row vector over the columns of B; its norm ||r||_2 is the row's residual
       (||e_k|| = 1, so 0 <= ||r|| <= 1) and the candidates are the columns i not in J with r_i != 0;
     - spd (FSAI): x the normalised row of G (x^T A x = 1), r_i = (x^T A)_i / sqrt(a_ii) for i < k, i not in J: r_i^2 is
       the decrease of the Kaplan functional that index i alone would bring (as in adaptive FSAI, Janna et al.), and
       |r_i| <= 1 for an SPD A; the residual is ||r||_2 over those i, and the candidates are those i with r_i != 0
       (r_i = 0 on J for a symmetric A). Every rank holds the whole diagonal of A for the scaling.
   A row stops when its residual is at most the target (-pc_gsai_adaptive_tol), when it holds the cap (-pc_gsai_max_nnz,
   by default the budget: about budget x nnz(A) / n per row) or when it has no candidate; otherwise it takes the
   min(per_step, cap - |J|) candidates with the largest |r_i| (|r_i| > GSAI_ADAPTIVE_RDROP = 1e-10: both residuals are
   scaled so that |r_i| <= 1, and rounding noise must not decide) (compared in single precision, ties to the smaller index),
   the cheap form of SPAI's (Grote-Huckle) rule. Dense rows (gsaiimpl.h) are never candidates. After the last round the
   residual of the final pattern is measured once more (PCView() reports how many rows met the target).
   The values of M are then computed on the final pattern by the host driver (gsaihost.c) as for a reused pattern.

   Every row is computed from the global rows of B it needs, in increasing global order, so the pattern (and M) do not
   depend on the number of ranks; on several ranks each round fetches the rows of the growing patterns from their owners.
*/
#include <petsctime.h>
#include "gsaiimpl.h"

/* B: the matrix whose rows the set-up reads (as gsaihost.c's driver: A, A^T for the right type; AIJ if needed) */
static PetscErrorCode GSAIAdaptiveGetB(PC pc, Mat A, Mat *B)
{
  PC_GSAI    *gs = (PC_GSAI *)pc->data;
  PetscMPIInt size;
  PetscBool   isaij;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(PetscObjectBaseTypeCompareAny((PetscObject)A, &isaij, MATSEQAIJ, MATMPIAIJ, ""));
  if (gs->sideused == PC_RIGHT && gs->type == PCGSAI_GENERAL) {
    Mat Aaij = A;
    if (!isaij) PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &Aaij));
    PetscCall(MatTranspose(Aaij, MAT_INITIAL_MATRIX, B));
    if (Aaij != A) PetscCall(MatDestroy(&Aaij));
  } else if ((size == 1 && A->ops->getrow) || isaij) {
    PetscCall(PetscObjectReference((PetscObject)A));
    *B = A;
  } else PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* min || C x - e_p ||_2, C n1 x n2 column-major (overwritten), by Householder QR; PETSC_FALSE when p < 0, n1 < n2, a
   pivot is at most GSAI_RCOND_TOL times the largest or x is not finite (the rule of the final solve, gsaisolve.c) */
static PetscBool AdaptiveLeastSquares(PetscInt n1, PetscInt n2, PetscScalar *C, PetscInt p, PetscScalar *y, PetscScalar *d, PetscScalar *x)
{
  PetscReal big = 0.0, small = PETSC_MAX_REAL;

  if (p < 0 || n1 < n2) return PETSC_FALSE;
  for (PetscInt i = 0; i < n1; i++) y[i] = (i == p) ? 1.0 : 0.0;
  for (PetscInt c = 0; c < n2; c++) {
    PetscScalar *v = C + c * n1 + c;
    PetscInt     m = n1 - c;
    PetscReal    nrm2 = 0.0, nrm, a, h;
    for (PetscInt i = 0; i < m; i++) nrm2 += PetscRealPart(v[i] * v[i]);
    nrm = PetscSqrtReal(nrm2);
    if (nrm == 0.0) return PETSC_FALSE;
    a = PetscRealPart(v[0]) >= 0.0 ? -nrm : nrm;
    h = 2.0 / (2.0 * nrm * (nrm + PetscAbsScalar(v[0])));
    v[0] -= a;
    for (PetscInt c2 = c + 1; c2 <= n2; c2++) { /* column n2: the right-hand side */
      PetscScalar *w = (c2 < n2) ? C + c2 * n1 + c : y + c, t = 0.0;
      for (PetscInt i = 0; i < m; i++) t += v[i] * w[i];
      t *= h;
      for (PetscInt i = 0; i < m; i++) w[i] -= t * v[i];
    }
    d[c]  = a;
    big   = PetscMax(big, PetscAbsReal(a));
    small = PetscMin(small, PetscAbsReal(a));
  }
  if (small <= GSAI_RCOND_TOL * big) return PETSC_FALSE;
  for (PetscInt c = n2 - 1; c >= 0; c--) {
    PetscScalar t = y[c];
    for (PetscInt c2 = c + 1; c2 < n2; c2++) t -= C[c2 * n1 + c] * x[c2];
    x[c] = t / d[c];
    if (PetscIsInfOrNanScalar(x[c])) return PETSC_FALSE;
  }
  return PETSC_TRUE;
}

/* the normalised FSAI row x = g / sqrt(g_last), g = S^{-1} e_last, S n x n column-major (lower part used, overwritten) */
static PetscBool AdaptiveFSAIRow(PetscInt n, PetscScalar *S, PetscScalar *x)
{
  for (PetscInt j = 0; j < n; j++) {
    PetscScalar t = S[j + j * n];
    for (PetscInt q = 0; q < j; q++) t -= S[j + q * n] * S[j + q * n];
    if (!(PetscRealPart(t) > GSAI_RCOND_TOL * PetscRealPart(S[j + j * n]))) return PETSC_FALSE;
    t            = PetscSqrtScalar(t);
    S[j + j * n] = t;
    for (PetscInt i = j + 1; i < n; i++) {
      PetscScalar u = S[i + j * n];
      for (PetscInt q = 0; q < j; q++) u -= S[i + q * n] * S[j + q * n];
      S[i + j * n] = u / t;
    }
  }
  x[n - 1] = 1.0 / S[(n - 1) + (n - 1) * n];
  for (PetscInt i = n - 2; i >= 0; i--) {
    PetscScalar u = 0.0;
    for (PetscInt q = i + 1; q < n; q++) u += S[q + i * n] * x[q];
    x[i] = -u / S[i + i * n];
  }
  for (PetscInt i = 0; i < n; i++)
    if (PetscIsInfOrNanScalar(x[i])) return PETSC_FALSE;
  return PETSC_TRUE;
}

typedef struct {
  float    w;
  PetscInt g;
} GSAICand;

/* larger weight first, then the smaller global index */
static int GSAICandCompare(const void *a, const void *b)
{
  const GSAICand *x = (const GSAICand *)a, *y = (const GSAICand *)b;
  if (x->w != y->w) return x->w > y->w ? -1 : 1;
  return x->g < y->g ? -1 : (x->g > y->g ? 1 : 0);
}

/* the working state of one rank */
typedef struct {
  PetscInt     nloc, first, cap; /* local rows, first global row, entries per row at most */
  PetscInt    *len, *room, *off; /* per local row: |J|, room, offset in col */
  PetscInt    *col;              /* J of every row, sorted */
  PetscBool   *grow;             /* still growing */
  PetscReal   *res;              /* last residual */
  PetscInt     wcap;             /* workspace */
  PetscScalar *C, *C0, *y, *d, *x;
  PetscInt    *mark, *list, nmark;
  GSAICand    *cand;
  PetscInt     ncand;
  PetscScalar *diag; /* spd: the whole diagonal of A */
} GSAIAdapt;

static PetscErrorCode AdaptWork(GSAIAdapt *S, PetscInt n1, PetscInt n2, PetscInt nu)
{
  PetscFunctionBegin;
  if (n1 * n2 > S->wcap || n1 > S->wcap) {
    S->wcap = PetscMax(2 * S->wcap, PetscMax(n1 * n2, n1));
    PetscCall(PetscFree5(S->C, S->C0, S->y, S->d, S->x));
    PetscCall(PetscMalloc5(S->wcap, &S->C, S->wcap, &S->C0, S->wcap, &S->y, S->wcap, &S->d, S->wcap, &S->x));
  }
  if (nu > S->nmark) {
    PetscCall(PetscFree3(S->mark, S->list, S->cand));
    S->nmark = nu;
    PetscCall(PetscMalloc3(nu, &S->mark, nu, &S->list, nu, &S->cand));
    for (PetscInt u = 0; u < nu; u++) S->mark[u] = -1;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* row i (local) on the rows R: its residual *res and, with grow, its candidates S->cand[0..S->ncand) sorted by the rule;
   *ok: PETSC_FALSE when the local problem has no solution (the row stops; the final solve applies its fallback) */
static PetscErrorCode AdaptRow(const PC_GSAI *gs, GSAIAdapt *S, const GSAIRows *R, PetscInt i, PetscBool *ok, PetscReal *res)
{
  const PetscInt  gk = S->first + i, n2 = S->len[i];
  const PetscInt *J  = S->col + S->off[i];
  PetscInt        n1 = 0, rk = GSAIRowsFind(R, gk);
  PetscReal       r2 = 0.0;

  PetscFunctionBegin;
  PetscCheck(rk >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "adaptive pattern: row %" PetscInt_FMT " is not held", gk);
  S->ncand = 0;
  *ok      = PETSC_FALSE;
  if (gs->type == PCGSAI_GENERAL) {
    PetscInt p = -1, uk = GSAIRowsCompact(R, gk);
    /* I: the columns of the rows J of B, increasing */
    for (PetscInt c = 0; c < n2; c++) {
      const PetscInt r = GSAIRowsFind(R, J[c]);
      PetscCheck(r >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "adaptive pattern: row %" PetscInt_FMT " is not held", J[c]);
      for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++)
        if (S->mark[R->lcol[e]] < 0) {
          S->mark[R->lcol[e]] = 0;
          S->list[n1++]       = R->lcol[e];
        }
    }
    PetscCall(PetscSortInt(n1, S->list));
    for (PetscInt t = 0; t < n1; t++) S->mark[S->list[t]] = t;
    PetscCall(AdaptWork(S, n1, n2, 0));
    PetscCall(PetscArrayzero(S->C, n1 * n2));
    for (PetscInt c = 0; c < n2; c++) {
      const PetscInt r = GSAIRowsFind(R, J[c]);
      for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++) S->C[c * n1 + S->mark[R->lcol[e]]] = R->val[e];
    }
    PetscCall(PetscArraycpy(S->C0, S->C, n1 * n2));
    if (uk >= 0) p = S->mark[uk];
    for (PetscInt t = 0; t < n1; t++) S->mark[S->list[t]] = -1;
    if (AdaptiveLeastSquares(n1, n2, S->C, p, S->y, S->d, S->x)) {
      *ok = PETSC_TRUE;
      for (PetscInt t = 0; t < n1; t++) {
        PetscScalar rt = (t == p) ? -1.0 : 0.0;
        for (PetscInt c = 0; c < n2; c++) rt += S->C0[c * n1 + t] * S->x[c];
        r2 += PetscRealPart(rt * rt);
        if (PetscAbsScalar(rt) > GSAI_ADAPTIVE_RDROP) {
          const PetscInt g = R->ucol[S->list[t]];
          PetscInt       lo = 0, hi = n2;
          while (lo < hi) { /* g in J? */
            PetscInt mid = (lo + hi) / 2;
            if (J[mid] < g) lo = mid + 1;
            else hi = mid;
          }
          if ((lo < n2 && J[lo] == g) || GSAIIsDense(gs, g)) continue;
          S->cand[S->ncand].w   = (float)PetscAbsScalar(rt);
          S->cand[S->ncand++].g = g;
        }
      }
    } else r2 = 1.0; /* x = 0 */
  } else {
    /* spd: S = the symmetric matrix A dominates on J x J (gsaisolve.c), x the normalised row of G */
    PetscScalar akk = 0.0;
    PetscInt    L   = 0; /* bound of the columns the residual touches */
    for (PetscInt e = R->ptr[rk]; e < R->ptr[rk + 1]; e++)
      if (R->col[e] == gk) akk = R->val[e];
    for (PetscInt c = 0; c < n2; c++) {
      const PetscInt r = GSAIRowsFind(R, J[c]);
      PetscCheck(r >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "adaptive pattern: row %" PetscInt_FMT " is not held", J[c]);
      L += R->ptr[r + 1] - R->ptr[r];
    }
    PetscCall(AdaptWork(S, PetscMax(n2, L), n2, 0));
    PetscCall(PetscArrayzero(S->C, n2 * n2));
    for (PetscInt c = 0; c < n2; c++) S->mark[GSAIRowsCompact(R, J[c])] = c;
    for (PetscInt c = 0; c < n2; c++) {
      const PetscInt r = GSAIRowsFind(R, J[c]);
      PetscCheck(r >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "adaptive pattern: row %" PetscInt_FMT " is not held", J[c]);
      for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++) {
        const PetscInt t = S->mark[R->lcol[e]];
        if (t >= 0) S->C[c + t * n2] = R->val[e];
      }
    }
    for (PetscInt c = 0; c < n2; c++) S->mark[GSAIRowsCompact(R, J[c])] = -1;
    for (PetscInt c = 0; c < n2; c++)
      for (PetscInt t = 0; t < c; t++) S->C[c + t * n2] = GSAISymmetricEntry(S->C[c + t * n2], S->C[t + c * n2]);
    if (PetscRealPart(akk) > 0.0 && AdaptiveFSAIRow(n2, S->C, S->x)) {
      *ok = PETSC_TRUE;
      /* r = x^T A(J,:) on the columns below k, accumulated in the compact numbering, then read in increasing order */
      for (PetscInt c = 0; c < n2; c++) {
        const PetscInt r = GSAIRowsFind(R, J[c]);
        for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++) {
          if (R->col[e] >= gk) continue;
          if (S->mark[R->lcol[e]] < 0) {
            S->mark[R->lcol[e]] = 0;
            S->list[n1++]       = R->lcol[e];
          }
        }
      }
      /* in increasing column order (the compact numbering is increasing), as the device sums ||r||^2 */
      PetscCall(PetscSortInt(n1, S->list));
      for (PetscInt t = 0; t < n1; t++) {
        S->mark[S->list[t]] = t;
        S->y[t]             = 0.0;
      }
      /* sum in the order c = 0..n2-1 for every column, whatever the rank's numbering */
      for (PetscInt c = 0; c < n2; c++) {
        const PetscInt r = GSAIRowsFind(R, J[c]);
        for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++)
          if (R->col[e] < gk) S->y[S->mark[R->lcol[e]]] += S->x[c] * R->val[e];
      }
      for (PetscInt t = 0; t < n1; t++) {
        const PetscInt  g   = R->ucol[S->list[t]];
        const PetscReal aii = PetscRealPart(S->diag[g]);
        PetscScalar     rt  = aii > 0.0 ? S->y[t] / PetscSqrtReal(aii) : 0.0; /* a_ii <= 0: not SPD there, no candidate */
        PetscInt        lo = 0, hi = n2;
        S->mark[S->list[t]] = -1;
        while (lo < hi) {
          PetscInt mid = (lo + hi) / 2;
          if (J[mid] < g) lo = mid + 1;
          else hi = mid;
        }
        if (lo < n2 && J[lo] == g) continue; /* on J: zero for a symmetric A, not counted */
        r2 += PetscRealPart(rt * rt);
        if (PetscAbsScalar(rt) <= GSAI_ADAPTIVE_RDROP || GSAIIsDense(gs, g)) continue;
        S->cand[S->ncand].w   = (float)PetscAbsScalar(rt);
        S->cand[S->ncand++].g = g;
      }
    } else r2 = 1.0;
  }
  if (S->ncand > 1) qsort(S->cand, (size_t)S->ncand, sizeof(GSAICand), GSAICandCompare);
  *res = PetscSqrtReal(r2);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the forced entries of the rows with b_kk = 0 (general): rows j with b_jk != 0, the largest |b_jk| first (ties: smaller j),
   at most cap - 1; fptr/fcol per local row (NULL when there are none) */
static PetscErrorCode AdaptForced(const PC_GSAI *gs, Mat B, PetscInt first, PetscInt nloc, PetscInt cap, PetscInt **fptr, PetscInt **fcol, PetscInt *nforced, PetscInt *nfcut)
{
  PetscInt  *aptr, *acol, tot = 0, maxc = 0;
  PetscReal *aval;
  GSAICand  *cd;

  PetscFunctionBegin;
  *fptr = *fcol = NULL;
  *nforced = *nfcut = 0;
  if (gs->type != PCGSAI_GENERAL || gs->nzerodiag == 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GSAIForcedEntries(B, first, nloc, &aptr, &acol, &aval, nforced)); /* every entry, in column order */
  PetscCall(PetscMalloc1(nloc + 1, fptr));
  (*fptr)[0] = 0;
  for (PetscInt i = 0; i < nloc; i++) {
    PetscInt k = aptr[i + 1] - aptr[i];
    maxc = PetscMax(maxc, k);
    if (cap > 0 && k > cap - 1) {
      k = cap - 1;
      (*nfcut)++;
    }
    tot += k;
    (*fptr)[i + 1] = tot;
  }
  PetscCall(PetscMalloc1(tot + 1, fcol));
  PetscCall(PetscMalloc1(maxc + 1, &cd));
  for (PetscInt i = 0; i < nloc; i++) {
    const PetscInt k = aptr[i + 1] - aptr[i];
    if (!k) continue;
    for (PetscInt e = 0; e < k; e++) {
      cd[e].w = (float)aval[aptr[i] + e];
      cd[e].g = acol[aptr[i] + e];
    }
    if (k > 1) qsort(cd, (size_t)k, sizeof(GSAICand), GSAICandCompare);
    for (PetscInt e = 0; e < (*fptr)[i + 1] - (*fptr)[i]; e++) (*fcol)[(*fptr)[i] + e] = cd[e].g;
  }
  PetscCall(PetscFree(cd));
  PetscCall(PetscFree(aptr));
  PetscCall(PetscFree(acol));
  PetscCall(PetscFree(aval));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* insert the sorted set add[0..na) (none in J) into row i's sorted J */
static void AdaptInsert(GSAIAdapt *S, PetscInt i, PetscInt na, const PetscInt *add)
{
  PetscInt *J = S->col + S->off[i], a = na - 1, j = S->len[i] - 1, w = S->len[i] + na - 1;
  while (a >= 0) {
    if (j >= 0 && J[j] > add[a]) J[w--] = J[j--];
    else J[w--] = add[a--];
  }
  S->len[i] += na;
}

PetscErrorCode GSAIAdaptivePattern(PC pc, Mat A)
{
  PC_GSAI       *gs = (PC_GSAI *)pc->data;
  MPI_Comm       comm;
  PetscMPIInt    size;
  Mat            B, *sub = NULL;
  GSAIRows       R;
  GSAIAdapt      S;
  PetscInt       N, *fptr = NULL, *fcol = NULL, nforced = 0, nfcut = 0, tot = 0, *add, rounds = 0;
  PetscInt       cnt[4] = {0, 0, 0, 0}, gcnt[4];
  PetscReal      maxres = 0.0, nnzA;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PC_GSAI_Adaptive, pc, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscMemzero(&R, sizeof(R)));
  PetscCall(PetscMemzero(&S, sizeof(S)));
  PetscCall(GSAIAdaptiveGetB(pc, A, &B));
  PetscCall(MatGetSize(B, &N, NULL));
  PetscCall(MatGetOwnershipRange(B, &S.first, NULL));
  PetscCall(MatGetLocalSize(B, &S.nloc, NULL));
  gs->nloc = S.nloc;
  S.cap    = gs->maxnnz > 0 ? PetscMin(gs->maxnnz, N) : N;
  if (gs->type == PCGSAI_SPD) S.cap = PetscMin(S.cap, N); /* at most k + 1 in row k, checked by the candidates */

  /* the start: the diagonal and the forced entries */
  PetscCall(AdaptForced(gs, B, S.first, S.nloc, S.cap, &fptr, &fcol, &nforced, &nfcut));
  PetscCall(PetscMalloc5(S.nloc, &S.len, S.nloc, &S.room, S.nloc + 1, &S.off, S.nloc, &S.grow, S.nloc, &S.res));
  S.off[0] = 0;
  for (PetscInt i = 0; i < S.nloc; i++) {
    const PetscInt nf = fptr ? fptr[i + 1] - fptr[i] : 0;
    S.room[i]         = PetscMin(S.cap, 1 + nf + gs->adsteps * gs->adperstep);
    S.room[i]         = PetscMax(S.room[i], 1 + nf);
    S.off[i + 1]      = S.off[i] + S.room[i];
  }
  PetscCall(PetscMalloc1(S.off[S.nloc], &S.col));
  PetscCall(PetscMalloc1(PetscMax(gs->adperstep, 1) + 1, &add));
  for (PetscInt i = 0; i < S.nloc; i++) {
    const PetscInt gk = S.first + i, nf = fptr ? fptr[i + 1] - fptr[i] : 0;
    PetscInt      *J  = S.col + S.off[i];
    J[0]              = gk;
    for (PetscInt e = 0; e < nf; e++) J[1 + e] = fcol[fptr[i] + e];
    S.len[i] = 1 + nf;
    PetscCall(PetscSortInt(S.len[i], J));
    S.grow[i] = PETSC_TRUE;
    S.res[i]  = 1.0;
  }
  PetscCall(PetscFree(fptr));
  PetscCall(PetscFree(fcol));
  if (gs->type == PCGSAI_SPD) { /* the whole diagonal on every rank */
    Vec                d, dall;
    VecScatter         sc;
    const PetscScalar *a;
    PetscCall(MatCreateVecs(B, NULL, &d));
    if (B->ops->getdiagonal) PetscCall(MatGetDiagonal(B, d));
    else {
      PetscScalar *w;
      PetscCall(VecGetArrayWrite(d, &w));
      for (PetscInt i = 0; i < S.nloc; i++) {
        PetscInt           nc;
        const PetscInt    *c;
        const PetscScalar *v;
        w[i] = 0.0;
        PetscCall(MatGetRow(B, S.first + i, &nc, &c, &v));
        for (PetscInt e = 0; e < nc; e++)
          if (c[e] == S.first + i) w[i] = v[e];
        PetscCall(MatRestoreRow(B, S.first + i, &nc, &c, &v));
      }
      PetscCall(VecRestoreArrayWrite(d, &w));
    }
    PetscCall(VecScatterCreateToAll(d, &sc, &dall));
    PetscCall(VecScatterBegin(sc, d, dall, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(sc, d, dall, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(PetscMalloc1(N, &S.diag));
    PetscCall(VecGetArrayRead(dall, &a));
    PetscCall(PetscArraycpy(S.diag, a, N));
    PetscCall(VecRestoreArrayRead(dall, &a));
    PetscCall(VecScatterDestroy(&sc));
    PetscCall(VecDestroy(&dall));
    PetscCall(VecDestroy(&d));
  }

  if (size == 1) {
    PetscInt *gid;
    PetscCall(PetscMalloc1(S.nloc, &gid));
    for (PetscInt i = 0; i < S.nloc; i++) gid[i] = i;
    PetscCall(GSAIRowsCreate(B, 0, S.nloc, gid, &R));
  }
  /* rounds 0..steps-1 grow; round `steps` measures the final residuals. Collective: every rank runs every round */
  for (PetscInt s = 0; s <= gs->adsteps; s++) {
    PetscInt grew = 0, ggrew;
    if (size > 1) { /* the rows of B in the patterns of the rows still growing */
      PetscInt nneed = 0, *need;
      IS       is;
      for (PetscInt i = 0; i < S.nloc; i++)
        if (S.grow[i]) nneed += S.len[i] + 1;
      PetscCall(PetscMalloc1(nneed + 1, &need));
      nneed = 0;
      for (PetscInt i = 0; i < S.nloc; i++)
        if (S.grow[i]) {
          for (PetscInt e = 0; e < S.len[i]; e++) need[nneed++] = S.col[S.off[i] + e];
          need[nneed++] = S.first + i; /* row k itself (in J already; harmless) */
        }
      PetscCall(PetscSortRemoveDupsInt(&nneed, need));
      PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nneed, need, PETSC_OWN_POINTER, &is));
      PetscCall(GSAIRowsDestroy(&R));
      PetscCall(GSAIRowsFetch(B, is, MAT_INITIAL_MATRIX, &sub, &R));
      PetscCall(MatDestroySubMatrices(1, &sub));
      PetscCall(ISDestroy(&is));
    }
    PetscCall(AdaptWork(&S, 1, 1, R.nu));
    for (PetscInt i = 0; i < S.nloc; i++) {
      PetscBool ok;
      PetscInt  na;
      if (!S.grow[i]) continue; /* a row that stopped keeps the residual of its final pattern */
      PetscCall(AdaptRow(gs, &S, &R, i, &ok, &S.res[i]));
      if (s == gs->adsteps) continue;
      if (!ok || S.res[i] <= gs->adtol || S.len[i] >= S.room[i] || !S.ncand) {
        S.grow[i] = PETSC_FALSE;
        continue;
      }
      na = PetscMin(gs->adperstep, PetscMin(S.ncand, S.room[i] - S.len[i]));
      for (PetscInt a = 0; a < na; a++) add[a] = S.cand[a].g;
      PetscCall(PetscSortInt(na, add));
      AdaptInsert(&S, i, na, add);
      grew++;
    }
    if (s < gs->adsteps) {
      PetscCallMPI(MPI_Allreduce(&grew, &ggrew, 1, MPIU_INT, MPI_SUM, comm));
      if (ggrew) rounds = s + 1;
    }
  }
  PetscCall(GSAIRowsDestroy(&R));

  /* the pattern, the counts */
  for (PetscInt i = 0; i < S.nloc; i++) {
    tot += S.len[i];
    if (S.res[i] <= gs->adtol) cnt[0]++;
    else if (S.len[i] >= S.cap) cnt[1]++;
    maxres = PetscMax(maxres, S.res[i]);
  }
  PetscCall(PetscFree(gs->Jptr));
  PetscCall(PetscFree(gs->Jcol));
  PetscCall(PetscMalloc1(S.nloc + 1, &gs->Jptr));
  PetscCall(PetscMalloc1(tot + 1, &gs->Jcol));
  gs->Jptr[0] = 0;
  for (PetscInt i = 0; i < S.nloc; i++) {
    PetscCall(PetscArraycpy(gs->Jcol + gs->Jptr[i], S.col + S.off[i], S.len[i]));
    gs->Jptr[i + 1] = gs->Jptr[i] + S.len[i];
  }
  PetscCall(ISDestroy(&gs->fetchis));
  if (gs->fetched) PetscCall(MatDestroySubMatrices(1, &gs->fetched));
  if (size > 1) {
    PetscInt nJ = tot, *need;
    PetscCall(PetscMalloc1(nJ + 1, &need));
    PetscCall(PetscArraycpy(need, gs->Jcol, nJ));
    PetscCall(PetscSortRemoveDupsInt(&nJ, need));
    PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nJ, need, PETSC_OWN_POINTER, &gs->fetchis));
  }
  gs->havepattern = PETSC_TRUE;
  gs->ptype       = gs->type;
  gs->pside       = gs->sideused;

  cnt[2] = nforced;
  cnt[3] = nfcut;
  PetscCallMPI(MPI_Allreduce(cnt, gcnt, 4, MPIU_INT, MPI_SUM, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &maxres, 1, MPIU_REAL, MPI_MAX, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &tot, 1, MPIU_INT, MPI_SUM, comm));
  if (B->ops->getinfo) {
    MatInfo info;
    PetscCall(MatGetInfo(B, MAT_GLOBAL_SUM, &info));
    nnzA = info.nz_used;
  } else {
    PetscInt c = 0, nc, g;
    for (PetscInt i = 0; i < S.nloc; i++) {
      PetscCall(MatGetRow(B, S.first + i, &nc, NULL, NULL));
      c += nc;
      PetscCall(MatRestoreRow(B, S.first + i, &nc, NULL, NULL));
    }
    PetscCallMPI(MPI_Allreduce(&c, &g, 1, MPIU_INT, MPI_SUM, comm));
    nnzA = (PetscReal)g;
  }
  gs->admet      = gcnt[0];
  gs->adcapped   = gcnt[1];
  gs->nforced    = gcnt[2];
  gs->forcedcut  = gcnt[3];
  gs->ncapped    = gcnt[1];
  gs->adrounds   = rounds;
  gs->admaxres   = maxres;
  gs->adnnzratio = nnzA > 0 ? (PetscReal)tot / nnzA : 0.0;
  PetscCall(PetscFree5(S.len, S.room, S.off, S.grow, S.res));
  PetscCall(PetscFree(S.col));
  PetscCall(PetscFree(add));
  PetscCall(PetscFree5(S.C, S.C0, S.y, S.d, S.x));
  PetscCall(PetscFree3(S.mark, S.list, S.cand));
  PetscCall(PetscFree(S.diag));
  PetscCall(MatDestroy(&B));
  PetscCall(PetscTime(&t1));
  gs->time[GSAI_STAGE_PATTERN] += t1 - t0;
  PetscCall(PetscInfo(pc, "Adaptive pattern: %" PetscInt_FMT " rounds of growth, nnz %" PetscInt_FMT " (%.3g x nnz(A)); %" PetscInt_FMT " %ss met the target residual %g, %" PetscInt_FMT " stopped at the cap %" PetscInt_FMT "; largest residual %g\n", rounds, tot, (double)gs->adnnzratio, gs->admet, GSAIWhat(gs), (double)gs->adtol, gs->adcapped, S.cap, (double)maxres));
  PetscCall(PetscLogEventEnd(PC_GSAI_Adaptive, pc, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
