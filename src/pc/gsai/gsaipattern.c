/*
   PCGSAI's host set-up, part 1: the rows of B it reads (GSAIRows: a local copy of some rows with a compact numbering
   of their columns, on several ranks fetched from the other ranks) and the pattern J_k of every local row of N
   (threshold, powers, lower part for spd, cap). The device kernels of the same steps (gsaikernels.cu) follow these.
*/
#include "gsaiimpl.h"

/* ------------------------------------------------------------------------------------------------------
   A local copy of some rows of B (GSAIRows, gsaiimpl.h)
   ------------------------------------------------------------------------------------------------------ */

PetscErrorCode GSAIRowsDestroy(GSAIRows *R)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(R->gid));
  PetscCall(PetscFree3(R->ptr, R->col, R->val));
  PetscCall(PetscFree3(R->ucol, R->lcol, R->rowof));
  PetscCall(PetscMemzero(R, sizeof(*R)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* R holds rows roff .. roff+n-1 of S (MatGetRow() numbering), which are rows gid[0..n-1] of B; takes gid */
PetscErrorCode GSAIRowsCreate(Mat S, PetscInt roff, PetscInt n, PetscInt *gid, GSAIRows *R)
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
  {
    const PetscInt N = PetscMax(S->cmap->N, n ? gid[n - 1] + 1 : 0);

    if (N <= 4 * nall + 1024) { /* a table over the global numbers: no sort, no search */
      PetscInt *map, u = 0;

      PetscCall(PetscCalloc1(N, &map));
      for (PetscInt e = 0; e < nnz; e++) map[R->col[e]] = 1;
      for (PetscInt i = 0; i < n; i++) map[gid[i]] = 1;
      nall = 0;
      for (PetscInt g = 0; g < N; g++) nall += map[g];
      R->nu = nall;
      PetscCall(PetscMalloc3(nall, &R->ucol, nnz, &R->lcol, nall, &R->rowof));
      for (PetscInt g = 0; g < N; g++)
        if (map[g]) {
          R->ucol[u]   = g;
          R->rowof[u]  = -1;
          map[g]       = u++;
        }
      for (PetscInt e = 0; e < nnz; e++) R->lcol[e] = map[R->col[e]];
      for (PetscInt i = 0; i < n; i++) R->rowof[map[gid[i]]] = i;
      PetscCall(PetscFree(map));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
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

/* the rows of B with the global numbers in rows (sorted), from every rank: kept in *sub for reuse */
PetscErrorCode GSAIRowsFetch(Mat B, IS rows, MatReuse reuse, Mat **sub, GSAIRows *R)
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
/* the thresholds of all rows of R, computed once (a row is expanded for every row of the pattern that reaches it) */
static PetscErrorCode GSAIRowThresholds(const PC_GSAI *gs, const GSAIRows *R, PetscReal **thr)
{
  PetscFunctionBegin;
  PetscCall(PetscMalloc1(R->n + 1, thr));
  for (PetscInt r = 0; r < R->n; r++) {
    PetscReal amax = 0.0;
    for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++) amax = PetscMax(amax, PetscAbsScalar(R->val[e]));
    (*thr)[r] = (1.0 - gs->tau) * amax;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GSAIAccumSort(GSAIAccum *a)
{
  PetscInt umin = PETSC_MAX_INT, umax = -1;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < a->n; i++) {
    umin = PetscMin(umin, a->list[i]);
    umax = PetscMax(umax, a->list[i]);
  }
  if (a->n > 1 && umax - umin + 1 <= 8 * a->n) { /* a narrow span (banded B): in order by a scan, not a sort */
    PetscInt n = 0;
    for (PetscInt u = umin; u <= umax; u++)
      if (a->in[u]) a->list[n++] = u;
  } else PetscCall(PetscSortInt(a->n, a->list));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* add weight * |T(r,:)| to a, T = the thresholded row r of B plus its diagonal (weight |b_rr|, 0 if not stored) */
/* thr: the threshold of row r, (1 - tau) max_j |b_rj| (GSAIRowThresholds()); only the compact numbers up to ulim are
   added (the last level of the spd type's pattern keeps only the lower part: the others would be dropped) */
static void GSAIAddThresholdedRow(const PC_GSAI *gs, const GSAIRows *R, PetscInt r, PetscReal thr, PetscReal weight, PetscInt ulim, GSAIAccum *a)
{
  PetscInt diag = -1;

  for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++) {
    const PetscReal v = PetscAbsScalar(R->val[e]);
    if (R->lcol[e] > ulim) break; /* columns are increasing */
    if (R->col[e] == R->gid[r]) diag = e;
    else if (gs->pattern == PCGSAI_PATTERN_A || v > thr) GSAIAccumAdd(a, R->lcol[e], weight * v);
  }
  if (diag >= 0) GSAIAccumAdd(a, R->lcol[diag], weight * PetscAbsScalar(R->val[diag]));
  else if (ulim >= R->nu || R->gid[r] <= R->ucol[ulim]) GSAIAccumAdd(a, GSAIRowsCompact(R, R->gid[r]), 0.0); /* else beyond ulim */
}

/* candidate order of the cap: forced entries (zero diagonal: the rows j with b_jk != 0, without which k is out of
   reach) first, then larger (single precision) weight, then smaller global column */
typedef struct {
  float    w;
  int      forced;
  PetscInt g;
} GSAICand;

static int GSAICandCompare(const void *x, const void *y)
{
  const GSAICand *a = (const GSAICand *)x, *b = (const GSAICand *)y;
  if (a->forced != b->forced) return a->forced > b->forced ? -1 : 1;
  if (a->w != b->w) return a->w > b->w ? -1 : 1;
  return a->g < b->g ? -1 : (a->g > b->g ? 1 : 0);
}

/*
   The pattern of the local rows gk = first .. first+nloc-1 of N, from `levels` levels of the power (all rows
   the first levels-1 levels reach must be in R). With final, the lower part (spd) and the cap are applied and
   the result goes to Jptr/Jcol (global columns, sorted); otherwise the union of the last level over all local
   rows goes to *need (sorted global numbers, the rows the next level needs).
   The forced entries fptr/fcol/fval of a local row (its b_kk is zero or not stored: the rows j with b_jk != 0, sorted)
   join its pattern ahead of every other candidate of the cap, the largest |b_jk| first, so that index k stays within
   reach of its local problem (gsaiimpl.h).
*/
PetscErrorCode GSAIPatternRows(const PC_GSAI *gs, const GSAIRows *R, PetscInt first, PetscInt nloc, PetscInt levels, PetscBool final, const PetscInt *fptr, const PetscInt *fcol, const PetscReal *fval, PetscInt **Jptr, PetscInt **Jcol, PetscInt *nneed, PetscInt **need, PetscInt *ncapped, PetscInt *nforcedcut)
{
  GSAIAccum a, b;
  PetscInt  cap = final ? gs->maxnnz : 0, nJ = 0, nalloc = 0, *ptr = NULL, *col = NULL, *mark = NULL, nn = 0, *nl = NULL, ncut = 0, nfcut = 0, nfmax = 0;
  GSAICand *cand = NULL;
  PetscReal *rthr = NULL;

  PetscFunctionBegin;
  PetscCall(GSAIAccumCreate(R->nu, &a));
  PetscCall(GSAIAccumCreate(R->nu, &b));
  PetscCall(GSAIRowThresholds(gs, R, &rthr));
  if (final) {
    nalloc = 8 * nloc + 8;
    PetscCall(PetscMalloc1(nloc + 1, &ptr));
    PetscCall(PetscMalloc1(nalloc, &col));
    if (fptr)
      for (PetscInt i = 0; i < nloc; i++) nfmax = PetscMax(nfmax, fptr[i + 1] - fptr[i]);
    PetscCall(PetscMalloc1(R->nu + nfmax, &cand));
    ptr[0] = 0;
  } else {
    PetscCall(PetscCalloc1(R->nu, &mark));
  }
  for (PetscInt i = 0, r = 0, uk = 0; i < nloc; i++) {
    const PetscInt gk = first + i;
    PetscInt       ulim, ncand = 0, keep;
    PetscBool      hasdiag = PETSC_FALSE;

    /* the row held and the compact number of gk: both increase with gk */
    while (r < R->n && R->gid[r] < gk) r++;
    while (uk < R->nu && R->ucol[uk] < gk) uk++;
    PetscCheck(r < R->n && R->gid[r] == gk && uk < R->nu, PETSC_COMM_SELF, PETSC_ERR_PLIB, "row %" PetscInt_FMT " is not held", gk);
    /* the last level of the spd type's final pattern: only columns <= gk matter */
    ulim = (final && gs->type == PCGSAI_SPD) ? uk : PETSC_MAX_INT;
    GSAIAccumClear(&a);
    GSAIAddThresholdedRow(gs, R, r, rthr[r], 1.0, levels == 1 ? ulim : PETSC_MAX_INT, &a);
    PetscCall(GSAIAccumSort(&a));
    for (PetscInt l = 1; l < levels; l++) {
      GSAIAccumClear(&b);
      for (PetscInt t = 0; t < a.n; t++) {
        const PetscInt rr = R->rowof[a.list[t]];
        if (R->ucol[a.list[t]] != gk && GSAIIsDense(gs, R->ucol[a.list[t]])) continue; /* dense rows are not expanded (gsaiimpl.h) */
        PetscCheck(rr >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "row %" PetscInt_FMT " needed by the power pattern is not held", R->ucol[a.list[t]]);
        GSAIAddThresholdedRow(gs, R, rr, rthr[rr], a.w[a.list[t]], l == levels - 1 ? ulim : PETSC_MAX_INT, &b);
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
    /* lower part (spd), the forced entries, then the cap: the diagonal plus the cap-1 first others */
    {
      const PetscInt  f0 = fptr ? fptr[i] : 0, nf = fptr ? fptr[i + 1] - f0 : 0;
      const PetscInt *fc = nf ? fcol + f0 : NULL;
      PetscInt        nforced = 0;

      for (PetscInt t = 0; t < nf; t++) {
        if (fc[t] == gk) continue;
        cand[ncand].w        = (float)fval[f0 + t];
        cand[ncand].forced   = 1;
        cand[ncand++].g      = fc[t];
        nforced++;
      }
      for (PetscInt t = 0; t < a.n; t++) {
        const PetscInt g = R->ucol[a.list[t]];
        PetscInt       loc = -1;
        if (g == gk) hasdiag = PETSC_TRUE;
        if (g == gk || (gs->type == PCGSAI_SPD && g > gk) || GSAIIsDense(gs, g)) continue;
        if (nf) PetscCall(PetscFindInt(g, nf, fc, &loc));
        if (loc >= 0) continue; /* already a forced candidate */
        cand[ncand].w        = (float)a.w[a.list[t]];
        cand[ncand].forced   = 0;
        cand[ncand++].g      = g;
      }
      PetscCheck(hasdiag, PETSC_COMM_SELF, PETSC_ERR_PLIB, "diagonal missing from the pattern of row %" PetscInt_FMT, gk);
      keep = (cap > 0 && ncand + 1 > cap) ? cap - 1 : ncand;
      if (keep < ncand) {
        qsort(cand, (size_t)ncand, sizeof(GSAICand), GSAICandCompare);
        ncut++;
        if (keep < nforced) nfcut++;
      }
    }
    if (nJ + keep + 1 > nalloc) {
      PetscInt *ncol;
      nalloc = PetscMax(2 * nalloc, nJ + keep + 1);
      PetscCall(PetscMalloc1(nalloc, &ncol));
      PetscCall(PetscArraycpy(ncol, col, nJ));
      PetscCall(PetscFree(col));
      col = ncol;
    }
    {
      PetscInt *cj = col + nJ, pos = keep;
      PetscBool sorted = PETSC_TRUE;

      for (PetscInt t = 0; t < keep; t++) {
        cj[t] = cand[t].g;
        if (t > 0 && cj[t] < cj[t - 1]) sorted = PETSC_FALSE;
      }
      if (sorted) { /* no cut and no forced entries: the candidates came in increasing order; insert the diagonal */
        while (pos > 0 && cj[pos - 1] > gk) {
          cj[pos] = cj[pos - 1];
          pos--;
        }
        cj[pos] = gk;
      } else {
        cj[keep] = gk;
        PetscCall(PetscSortInt(keep + 1, cj));
      }
    }
    nJ += keep + 1;
    ptr[i + 1] = nJ;
  }
  if (final) {
    *Jptr = ptr;
    *Jcol = col;
    if (ncapped) *ncapped = ncut;
    if (nforcedcut) *nforcedcut = nfcut;
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
  PetscCall(PetscFree(rthr));
  PetscFunctionReturn(PETSC_SUCCESS);
}
