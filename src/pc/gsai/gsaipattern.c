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

/*
   The local rows of an AIJ matrix (MATSEQAIJ, MATMPIAIJ and the types based on them, e.g. the CUSPARSE ones) read
   straight from the CSR arrays of its diagonal and off-diagonal blocks: MatGetRow() of MATMPIAIJ merges and copies
   every row, and MatCreateSubMatrices() of a rank's own rows copies them all again, which dominated the set-up on
   several ranks (issue 19). A row read here is the row MatGetRow() gives: the stored entries, global columns sorted
   (the off-diagonal block's columns map through garray, which increases).
*/
typedef struct {
  PetscBool          ok;     /* the arrays below are valid; else read with MatGetRow() */
  PetscBool          vals;   /* da and oa were taken too */
  Mat                Ad, Ao; /* Ao NULL: sequential */
  const PetscInt    *di, *dj, *oi, *oj, *garray;
  const PetscScalar *da, *oa;
  PetscInt           rstart, rend, cstart;
} GSAILocalCSR;

/* with values false only the structure (no value arrays, nothing brought back from a device) */
static PetscErrorCode GSAILocalCSRGet(Mat S, PetscBool values, GSAILocalCSR *L)
{
  PetscBool seq, mpi, dok = PETSC_FALSE, ook = PETSC_FALSE;
  PetscInt  n;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(L, sizeof(*L)));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)S, MATSEQAIJ, &seq));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)S, MATMPIAIJ, &mpi));
  if (!seq && !mpi) PetscFunctionReturn(PETSC_SUCCESS);
  if (mpi) {
    PetscCall(MatMPIAIJGetSeqAIJ(S, &L->Ad, &L->Ao, &L->garray));
    PetscCall(PetscObjectBaseTypeCompare((PetscObject)L->Ad, MATSEQAIJ, &seq));
    PetscCall(PetscObjectBaseTypeCompare((PetscObject)L->Ao, MATSEQAIJ, &mpi));
    if (!seq || !mpi) PetscFunctionReturn(PETSC_SUCCESS);
  } else L->Ad = S;
  PetscCall(MatGetOwnershipRange(S, &L->rstart, &L->rend));
  PetscCall(MatGetOwnershipRangeColumn(S, &L->cstart, NULL));
  /* no compression, no shift: the blocks' own arrays, not copies */
  PetscCall(MatGetRowIJ(L->Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &L->di, &L->dj, &dok));
  if (L->Ao) PetscCall(MatGetRowIJ(L->Ao, 0, PETSC_FALSE, PETSC_FALSE, &n, &L->oi, &L->oj, &ook));
  else ook = PETSC_TRUE;
  if (!dok || !ook) {
    if (dok) PetscCall(MatRestoreRowIJ(L->Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &L->di, &L->dj, &dok));
    if (ook && L->Ao) PetscCall(MatRestoreRowIJ(L->Ao, 0, PETSC_FALSE, PETSC_FALSE, &n, &L->oi, &L->oj, &ook));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  L->ok = PETSC_TRUE;
  if (!values) PetscFunctionReturn(PETSC_SUCCESS);
  PetscTryMethod(L->Ad, "GpukitMatSyncHost_C", (Mat), (L->Ad)); /* MATAMBCUDA after a lazy device refresh */
  PetscCall(MatSeqAIJGetArrayRead(L->Ad, &L->da)); /* brings device values back to the host when they are newer */
  if (L->Ao) PetscCall(MatSeqAIJGetArrayRead(L->Ao, &L->oa));
  L->vals = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GSAILocalCSRRestore(GSAILocalCSR *L)
{
  PetscInt  n;
  PetscBool done;

  PetscFunctionBegin;
  if (!L->ok) PetscFunctionReturn(PETSC_SUCCESS);
  if (L->vals) PetscCall(MatSeqAIJRestoreArrayRead(L->Ad, &L->da));
  PetscCall(MatRestoreRowIJ(L->Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &L->di, &L->dj, &done));
  if (L->Ao) {
    if (L->vals) PetscCall(MatSeqAIJRestoreArrayRead(L->Ao, &L->oa));
    PetscCall(MatRestoreRowIJ(L->Ao, 0, PETSC_FALSE, PETSC_FALSE, &n, &L->oi, &L->oj, &done));
  }
  L->ok   = PETSC_FALSE;
  L->vals = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscInt GSAILocalCSRLength(const GSAILocalCSR *L, PetscInt lr)
{
  return L->di[lr + 1] - L->di[lr] + (L->Ao ? L->oi[lr + 1] - L->oi[lr] : 0);
}

/* local row lr to col/val, global columns increasing: the off-diagonal entries left of the diagonal block, the
   diagonal block, the off-diagonal entries right of it */
static inline void GSAILocalCSRRow(const GSAILocalCSR *L, PetscInt lr, PetscInt *col, PetscScalar *val)
{
  PetscInt c = 0, o = L->Ao ? L->oi[lr] : 0;
  const PetscInt oend = L->Ao ? L->oi[lr + 1] : 0;

  for (; o < oend && L->garray[L->oj[o]] < L->cstart; o++, c++) {
    col[c] = L->garray[L->oj[o]];
    val[c] = L->oa[o];
  }
  for (PetscInt e = L->di[lr]; e < L->di[lr + 1]; e++, c++) {
    col[c] = L->dj[e] + L->cstart;
    val[c] = L->da[e];
  }
  for (; o < oend; o++, c++) {
    col[c] = L->garray[L->oj[o]];
    val[c] = L->oa[o];
  }
}

/* the lengths of the local rows of an AIJ matrix (MATSEQAIJ, MATMPIAIJ and the types based on them) from its blocks'
   row pointers, with no MatGetRow() (which merges and copies every row of a MATMPIAIJ) and no values; *done false for
   other types, whose rows the caller reads itself */
PetscErrorCode GSAIRowLengths(Mat C, PetscInt *len, PetscBool *done)
{
  GSAILocalCSR L;

  PetscFunctionBegin;
  PetscCall(GSAILocalCSRGet(C, PETSC_FALSE, &L));
  *done = L.ok;
  for (PetscInt i = 0; L.ok && i < L.rend - L.rstart; i++) len[i] = GSAILocalCSRLength(&L, i);
  PetscCall(GSAILocalCSRRestore(&L));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the compact numbering of R's columns and rows (R->ptr, col, gid, n set); N bounds the global numbers */
static PetscErrorCode GSAIRowsNumber(PetscInt N, GSAIRows *R)
{
  const PetscInt nnz = R->ptr[R->n], n = R->n, *gid = R->gid;
  PetscInt       nall = nnz + n, *all;

  PetscFunctionBegin;
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
        R->ucol[u]  = g;
        R->rowof[u] = -1;
        map[g]      = u++;
      }
    for (PetscInt e = 0; e < nnz; e++) R->lcol[e] = map[R->col[e]];
    for (PetscInt i = 0; i < n; i++) R->rowof[map[gid[i]]] = i;
    PetscCall(PetscFree(map));
    PetscFunctionReturn(PETSC_SUCCESS);
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

static PetscErrorCode GSAIRowsCheckSorted(Mat S, const GSAIRows *R, PetscInt i)
{
  PetscFunctionBegin;
  for (PetscInt e = R->ptr[i] + 1; e < R->ptr[i + 1]; e++) PetscCheck(R->col[e] > R->col[e - 1], PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRow() of %s gave unsorted columns in row %" PetscInt_FMT, ((PetscObject)S)->type_name, R->gid[i]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* R holds rows roff .. roff+n-1 of S (MatGetRow() numbering), which are rows gid[0..n-1] of B; takes gid */
PetscErrorCode GSAIRowsCreate(Mat S, PetscInt roff, PetscInt n, PetscInt *gid, GSAIRows *R)
{
  PetscInt           nnz = 0, ncols;
  const PetscInt    *cols;
  const PetscScalar *vals;
  GSAILocalCSR       L;

  PetscFunctionBegin;
  R->n   = n;
  R->gid = gid;
  PetscCall(GSAILocalCSRGet(S, PETSC_TRUE, &L));
  if (L.ok && roff >= L.rstart && roff + n <= L.rend) { /* the CSR arrays, no MatGetRow() */
    for (PetscInt i = 0; i < n; i++) nnz += GSAILocalCSRLength(&L, roff - L.rstart + i);
    PetscCall(PetscMalloc3(n + 1, &R->ptr, nnz, &R->col, nnz, &R->val));
    R->ptr[0] = 0;
    for (PetscInt i = 0; i < n; i++) R->ptr[i + 1] = R->ptr[i] + GSAILocalCSRLength(&L, roff - L.rstart + i);
    for (PetscInt i = 0; i < n; i++) {
      GSAILocalCSRRow(&L, roff - L.rstart + i, R->col + R->ptr[i], R->val + R->ptr[i]);
      PetscCall(GSAIRowsCheckSorted(S, R, i));
    }
    PetscCall(GSAILocalCSRRestore(&L));
  } else {
    PetscCall(GSAILocalCSRRestore(&L));
    for (PetscInt i = 0; i < n; i++) {
      PetscCall(MatGetRow(S, roff + i, &ncols, NULL, NULL));
      nnz += ncols;
      PetscCall(MatRestoreRow(S, roff + i, &ncols, NULL, NULL));
    }
    PetscCall(PetscMalloc3(n + 1, &R->ptr, nnz, &R->col, nnz, &R->val));
    R->ptr[0] = 0;
    for (PetscInt i = 0; i < n; i++) {
      PetscCall(MatGetRow(S, roff + i, &ncols, &cols, &vals));
      PetscCall(PetscArraycpy(R->col + R->ptr[i], cols, ncols));
      PetscCall(PetscArraycpy(R->val + R->ptr[i], vals, ncols));
      R->ptr[i + 1] = R->ptr[i] + ncols;
      PetscCall(MatRestoreRow(S, roff + i, &ncols, &cols, &vals));
      PetscCall(GSAIRowsCheckSorted(S, R, i));
    }
  }
  /* compact numbering of every column and row number that occurs */
  PetscCall(GSAIRowsNumber(PetscMax(S->cmap->N, n ? gid[n - 1] + 1 : 0), R));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   The rows of B with the global numbers in rows (sorted), from every rank: kept in *sub for reuse. This rank's own
   rows are read from B's CSR arrays; only the other ranks' rows go through MatCreateSubMatrices() (a few planes of a
   stencil matrix, not the whole local row set). *sub holds those rows only. B not AIJ: all rows through it.
*/
PetscErrorCode GSAIRowsFetch(Mat B, IS rows, MatReuse reuse, Mat **sub, GSAIRows *R)
{
  IS                 all, offis;
  PetscInt           n, *gid, noff = 0, *off, nnz = 0, ncols, k;
  const PetscInt    *idx, *cols;
  const PetscScalar *vals;
  GSAILocalCSR       L;
  Mat                S;

  PetscFunctionBegin;
  PetscCall(ISGetLocalSize(rows, &n));
  PetscCall(ISGetIndices(rows, &idx));
  PetscCall(PetscMalloc1(n, &gid));
  PetscCall(PetscArraycpy(gid, idx, n));
  PetscCall(ISRestoreIndices(rows, &idx));
  PetscCall(ISCreateStride(PETSC_COMM_SELF, B->cmap->N, 0, 1, &all));
  PetscCall(GSAILocalCSRGet(B, PETSC_TRUE, &L));
  if (!L.ok) { /* every row through MatCreateSubMatrices() (collective: every rank takes the same branch, B's type is the same) */
    PetscCall(MatCreateSubMatrices(B, 1, &rows, &all, reuse, sub));
    PetscCall(ISDestroy(&all));
    PetscCall(GSAIRowsCreate((*sub)[0], 0, n, gid, R));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMalloc1(n, &off));
  for (PetscInt i = 0; i < n; i++)
    if (gid[i] < L.rstart || gid[i] >= L.rend) off[noff++] = gid[i];
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, noff, off, PETSC_OWN_POINTER, &offis));
  PetscCall(MatCreateSubMatrices(B, 1, &offis, &all, reuse, sub));
  PetscCall(ISDestroy(&offis));
  PetscCall(ISDestroy(&all));
  S = (*sub)[0];
  R->n   = n;
  R->gid = gid;
  /* (MatRestoreRow() zeroes the count it is given: every count is taken before it) */
  for (PetscInt i = 0, k = 0; i < n; i++) {
    if (gid[i] >= L.rstart && gid[i] < L.rend) nnz += GSAILocalCSRLength(&L, gid[i] - L.rstart);
    else {
      PetscCall(MatGetRow(S, k, &ncols, NULL, NULL));
      nnz += ncols;
      PetscCall(MatRestoreRow(S, k++, &ncols, NULL, NULL));
    }
  }
  PetscCall(PetscMalloc3(n + 1, &R->ptr, nnz, &R->col, nnz, &R->val));
  R->ptr[0] = 0;
  k         = 0;
  for (PetscInt i = 0; i < n; i++) {
    if (gid[i] >= L.rstart && gid[i] < L.rend) {
      GSAILocalCSRRow(&L, gid[i] - L.rstart, R->col + R->ptr[i], R->val + R->ptr[i]);
      R->ptr[i + 1] = R->ptr[i] + GSAILocalCSRLength(&L, gid[i] - L.rstart);
    } else {
      PetscCall(MatGetRow(S, k, &ncols, &cols, &vals));
      PetscCall(PetscArraycpy(R->col + R->ptr[i], cols, ncols));
      PetscCall(PetscArraycpy(R->val + R->ptr[i], vals, ncols));
      R->ptr[i + 1] = R->ptr[i] + ncols;
      PetscCall(MatRestoreRow(S, k++, &ncols, &cols, &vals));
    }
    PetscCall(GSAIRowsCheckSorted(B, R, i));
  }
  PetscCall(GSAILocalCSRRestore(&L));
  PetscCall(GSAIRowsNumber(PetscMax(B->cmap->N, n ? gid[n - 1] + 1 : 0), R));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the sorted distinct columns of J (ptr, col: the local rows first .. first+nloc-1): the rows of B the local problems
   read. The local ones through a mark, only the others sorted (PetscSortRemoveDupsInt() of all of J cost as much as
   the pattern itself) */
PetscErrorCode GSAIPatternColumns(PetscInt first, PetscInt nloc, const PetscInt *ptr, const PetscInt *col, PetscInt *nneed, PetscInt **need)
{
  PetscBool *mark;
  PetscInt   nJ = ptr[nloc], noff = 0, *off, nlo, nl = 0, *out, c = 0;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(nloc, &mark));
  for (PetscInt e = 0; e < nJ; e++) {
    if (col[e] >= first && col[e] < first + nloc) mark[col[e] - first] = PETSC_TRUE;
    else noff++;
  }
  PetscCall(PetscMalloc1(noff, &off));
  noff = 0;
  for (PetscInt e = 0; e < nJ; e++)
    if (col[e] < first || col[e] >= first + nloc) off[noff++] = col[e];
  PetscCall(PetscSortRemoveDupsInt(&noff, off));
  for (PetscInt i = 0; i < nloc; i++) nl += mark[i];
  for (nlo = 0; nlo < noff && off[nlo] < first; nlo++) { }
  PetscCall(PetscMalloc1(noff + nl, &out));
  for (PetscInt t = 0; t < nlo; t++) out[c++] = off[t];
  for (PetscInt i = 0; i < nloc; i++)
    if (mark[i]) out[c++] = first + i;
  for (PetscInt t = nlo; t < noff; t++) out[c++] = off[t];
  PetscCall(PetscFree(off));
  PetscCall(PetscFree(mark));
  *nneed = c;
  *need  = out;
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
        /* the order is total (ties end at the distinct columns): any sort gives the same; a few tens of candidates
           per row sort faster by insertion than by qsort(), which allocates */
        if (ncand <= 64) {
          for (PetscInt t = 1; t < ncand; t++) {
            const GSAICand x = cand[t];
            PetscInt       p = t;
            for (; p > 0 && GSAICandCompare(&x, &cand[p - 1]) < 0; p--) cand[p] = cand[p - 1];
            cand[p] = x;
          }
        } else qsort(cand, (size_t)ncand, sizeof(GSAICand), GSAICandCompare);
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
