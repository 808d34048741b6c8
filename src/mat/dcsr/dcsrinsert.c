/*
   MATSEQDCSR storage: the bump allocator, insertion of entries (hits and new nonzeros), relocation of a row that
   reached K segments, growth and defragmentation of the buffers. The invariants are listed in dcsrimpl.h.
*/
#include "dcsrimpl.h"

const char *const MatDCSRDefragTypes[] = {"auto", "always", "never", "MatDCSRDefragType", "MAT_DCSR_DEFRAG_", NULL};

static inline PetscInt DCSRSlackOf(const Mat_SeqDCSR *a, PetscInt len)
{
  return (PetscInt)PetscCeilReal(a->slack * (PetscReal)len);
}

/* the spare slots of a defragmented row (-mat_dcsr_defrag_slack; 0, the default: the rows back to back, plain CSR) */
static inline PetscInt DCSRDefragSlackOf(const Mat_SeqDCSR *a, PetscInt len)
{
  return (PetscInt)PetscCeilReal(a->defragslack * (PetscReal)len);
}

/* free the storage (not the tables' sizes) */
static PetscErrorCode DCSRFreeStorage(Mat_SeqDCSR *a)
{
  PetscFunctionBegin;
  PetscCall(PetscFree5(a->segstart, a->seglen, a->segcap, a->nseg, a->rowlen));
  PetscCall(PetscFree2(a->colidx, a->values));
  a->used = a->cap = a->nz = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Fresh, empty storage: row r gets one empty segment of capacity nnz[r] (or nz), the buffer that much room times
   the capacity factor. */
PetscErrorCode DCSRAllocate_Private(Mat A, const PetscInt nnz[], PetscInt nz)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;
  PetscInt     m, K;
  PetscCount   total = 0, cap;

  PetscFunctionBegin;
  PetscCall(PetscLayoutSetUp(A->rmap));
  PetscCall(PetscLayoutSetUp(A->cmap));
  m = a->m = A->rmap->n;
  a->n      = A->cmap->n;
  K         = a->K;
  if (nz == PETSC_DEFAULT || nz == PETSC_DECIDE) nz = 5;
  PetscCheck(nz >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "nz cannot be less than 0: value %" PetscInt_FMT, nz);
  if (nnz)
    for (PetscInt r = 0; r < m; r++) PetscCheck(nnz[r] >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "nnz cannot be less than 0: row %" PetscInt_FMT " value %" PetscInt_FMT, r, nnz[r]);
  PetscCall(DCSRHostAccess(A, PETSC_TRUE));
  PetscCall(DCSRFreeStorage(a));
  PetscCall(PetscCalloc5((size_t)m * K, &a->segstart, (size_t)m * K, &a->seglen, (size_t)m * K, &a->segcap, m, &a->nseg, m, &a->rowlen));
  for (PetscInt r = 0; r < m; r++) {
    PetscInt c = nnz ? nnz[r] : nz;
    if (c > a->n) c = a->n;
    if (c > 0) {
      a->nseg[r]          = 1;
      a->segstart[r * K]  = total;
      a->segcap[r * K]    = c;
      total              += c;
    }
  }
  cap = (PetscCount)PetscCeilReal(a->capfactor * (PetscReal)total);
  if (cap < total) cap = total;
  if (cap < 1) cap = 1;
  PetscCall(PetscMalloc2(cap, &a->colidx, cap, &a->values));
  a->used         = total;
  a->cap          = cap;
  a->nz           = 0;
  a->nnew         = 0;
  a->preallocated = PETSC_TRUE;
  A->preallocated = PETSC_TRUE;
  A->nonzerostate++;
  a->tabstate++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* slot of column c in local row r, or -1 */
PetscErrorCode DCSRFindEntry_Private(Mat_SeqDCSR *a, PetscInt r, PetscInt c, PetscCount *slot)
{
  PetscFunctionBegin;
  *slot = -1;
  for (PetscInt s = 0; s < a->nseg[r]; s++) {
    PetscCount     st  = a->segstart[r * a->K + s];
    PetscInt       lo  = 0, hi = a->seglen[r * a->K + s] - 1;
    const PetscInt *cj = a->colidx + st;

    if (hi < 0 || c < cj[0] || c > cj[hi]) continue;
    while (lo <= hi) {
      PetscInt mid = lo + (hi - lo) / 2;
      if (cj[mid] == c) {
        *slot = st + mid;
        PetscFunctionReturn(PETSC_SUCCESS);
      }
      if (cj[mid] < c) lo = mid + 1;
      else hi = mid - 1;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the entries of row r, merged and sorted, into cols/vals (room for rowlen[r]) */
static PetscErrorCode DCSRMergeRow(const Mat_SeqDCSR *a, PetscInt r, PetscInt *cols, PetscScalar *vals)
{
  PetscInt k = 0;

  PetscFunctionBegin;
  for (PetscInt s = 0; s < a->nseg[r]; s++) {
    PetscCount st = a->segstart[r * a->K + s];
    PetscInt   l  = a->seglen[r * a->K + s];
    PetscCall(PetscArraycpy(cols + k, a->colidx + st, l));
    if (vals) PetscCall(PetscArraycpy(vals + k, a->values + st, l));
    k += l;
  }
  if (a->nseg[r] > 1) {
    if (vals) PetscCall(PetscSortIntWithScalarArray(k, cols, vals));
    else PetscCall(PetscSortInt(k, cols));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Row r, sorted and duplicate-free: pointers into the buffers when the row is one segment, else merged into
   a->rowcols/rowvals (valid until the next call) */
PetscErrorCode DCSRGetSortedRow_Private(Mat A, PetscInt r, PetscInt *len, PetscInt **cols, PetscScalar **vals)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;
  PetscInt     l = a->rowlen[r];

  PetscFunctionBegin;
  *len = l;
  if (a->nseg[r] <= 1) {
    PetscCount st = a->nseg[r] ? a->segstart[r * a->K] : 0;
    if (cols) *cols = l ? a->colidx + st : NULL;
    if (vals) *vals = l ? a->values + st : NULL;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (l > a->rowbufsize) {
    PetscCall(PetscFree2(a->rowcols, a->rowvals));
    a->rowbufsize = PetscMax(l, 2 * a->rowbufsize);
    PetscCall(PetscMalloc2(a->rowbufsize, &a->rowcols, a->rowbufsize, &a->rowvals));
  }
  PetscCall(DCSRMergeRow(a, r, a->rowcols, a->rowvals));
  if (cols) *cols = a->rowcols;
  if (vals) *vals = a->rowvals;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DCSRFragmentedRows_Private(Mat_SeqDCSR *a, PetscInt *nfrag)
{
  PetscInt c = 0;

  PetscFunctionBegin;
  for (PetscInt r = 0; r < a->m; r++)
    if (a->nseg[r] > 1) c++;
  *nfrag = c;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Defragmentation: every row becomes ONE sorted segment, rows in row order (or by length, DCSRRowOrder()), each followed by ceil(slack*len) free
   slots, in a new buffer of capacity >= that size + extra (grown by the capacity factor when it must grow). newK > 0
   changes the segment cap K. */
/* -mat_dcsr_reorder_rows: the order in which a defragmentation places the rows in the new buffer, grouped by length
   (longest first, row order within a length: a counting sort), so that rows of one length lie together as the
   seed's binned device product wants; NULL (row order) without the option. The row -> storage map stays in
   segstart[], so every consumer (MatMult, MatGetRow, the device mirror) works unchanged. */
static PetscErrorCode DCSRRowOrder(Mat A, PetscInt **ord)
{
  const Mat_SeqDCSR *a      = (Mat_SeqDCSR *)A->data;
  PetscInt           maxlen = 0, *cnt;

  PetscFunctionBegin;
  *ord = NULL;
  if (!a->reorder_rows || a->m == 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscInfo(A, "gpukit: -mat_dcsr_reorder_rows: the defragmentation places the rows grouped by length; the host MatMult runs in row order and gains nothing measurable from it (docs/dcsr.md)\n"));
  for (PetscInt r = 0; r < a->m; r++) maxlen = PetscMax(maxlen, a->rowlen[r]);
  PetscCall(PetscCalloc1(maxlen + 2, &cnt));
  PetscCall(PetscMalloc1(a->m, ord));
  for (PetscInt r = 0; r < a->m; r++) cnt[maxlen - a->rowlen[r] + 1]++; /* bucket 0 = the longest rows */
  for (PetscInt b = 1; b <= maxlen + 1; b++) cnt[b] += cnt[b - 1];
  for (PetscInt r = 0; r < a->m; r++) (*ord)[cnt[maxlen - a->rowlen[r]]++] = r;
  PetscCall(PetscFree(cnt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DCSRDefragment_Private(Mat A, PetscCount extra, PetscInt newK)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;
  PetscInt     m = a->m, nK = newK > 0 ? newK : a->K;
  PetscCount   size = 0, cap, pos = 0;
  PetscInt    *ncol, *nseglen, *nsegcap, *nnseg, *nrowlen, *ord = NULL;
  PetscCount  *nsegstart;
  PetscScalar *nval;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(MAT_DCSR_Defrag, A, 0, 0, 0));
  PetscCall(DCSRHostAccess(A, PETSC_TRUE));
  for (PetscInt r = 0; r < m; r++) size += a->rowlen[r] + DCSRDefragSlackOf(a, a->rowlen[r]);
  if (size + extra <= a->cap) cap = a->cap;
  else {
    cap = (PetscCount)PetscCeilReal(a->capfactor * (PetscReal)(size + extra));
    if (cap < size + extra) cap = size + extra;
    a->ngrow++;
  }
  if (cap < 1) cap = 1;
  PetscCall(PetscMalloc2(cap, &ncol, cap, &nval));
  PetscCall(DCSRRowOrder(A, &ord));
  if (nK == a->K) { /* the tables are rewritten in place (row r's entries s >= 1 cleared where they were used) */
    PetscInt K = a->K;
    for (PetscInt q = 0; q < m; q++) {
      PetscInt r = ord ? ord[q] : q, l = a->rowlen[r];
      if (l) PetscCall(DCSRMergeRow(a, r, ncol + pos, nval + pos));
      for (PetscInt s = 1; s < a->nseg[r]; s++) a->segstart[r * K + s] = a->seglen[r * K + s] = a->segcap[r * K + s] = 0;
      a->nseg[r] = l ? 1 : 0;
      a->segstart[r * K] = l ? pos : 0;
      a->seglen[r * K]   = l;
      a->segcap[r * K]   = l ? l + DCSRDefragSlackOf(a, l) : 0;
      pos += a->segcap[r * K];
    }
    PetscCall(PetscFree2(a->colidx, a->values));
    a->colidx = ncol;
    a->values = nval;
  } else {
    PetscCall(PetscCalloc5((size_t)m * nK, &nsegstart, (size_t)m * nK, &nseglen, (size_t)m * nK, &nsegcap, m, &nnseg, m, &nrowlen));
    for (PetscInt q = 0; q < m; q++) {
      PetscInt r = ord ? ord[q] : q, l = a->rowlen[r];
      nrowlen[r] = l;
      if (l == 0) continue;
      PetscCall(DCSRMergeRow(a, r, ncol + pos, nval + pos));
      nnseg[r]          = 1;
      nsegstart[r * nK] = pos;
      nseglen[r * nK]   = l;
      nsegcap[r * nK]   = l + DCSRDefragSlackOf(a, l);
      pos += nsegcap[r * nK];
    }
    PetscCall(PetscFree2(a->colidx, a->values));
    PetscCall(PetscFree5(a->segstart, a->seglen, a->segcap, a->nseg, a->rowlen));
    a->colidx   = ncol;
    a->values   = nval;
    a->segstart = nsegstart;
    a->seglen   = nseglen;
    a->segcap   = nsegcap;
    a->nseg     = nnseg;
    a->rowlen   = nrowlen;
    PetscCall(PetscFree2(a->start0, a->len0)); /* sized for the old tables' rows: same m, but rebuild anyway */
  }
  PetscCall(PetscFree(ord));
  a->K    = nK;
  a->used = pos;
  a->cap  = cap;
  a->ndefrag++;
  a->tabstate++;
  PetscCall(PetscLogEventEnd(MAT_DCSR_Defrag, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* merge the sorted entries (nc, cols, vals) into the sorted dc/dv of length len that has room for them (from the end) */
static void DCSRMergeInto(PetscInt *dc, PetscScalar *dv, PetscInt len, PetscInt nc, const PetscInt cols[], const PetscScalar vals[])
{
  PetscInt i = len - 1, j = nc - 1, k = len + nc - 1;

  while (j >= 0) {
    if (i >= 0 && dc[i] > cols[j]) {
      dc[k] = dc[i];
      dv[k] = dv[i];
      i--;
    } else {
      dc[k] = cols[j];
      dv[k] = vals[j];
      j--;
    }
    k--;
  }
}

/* Place nc new entries (sorted, none present in the row) into local row r: the last segment if it has room, else
   a new bump-allocated segment, else (the row has K segments) the whole row is relocated as one segment; when the
   buffer is full it is defragmented into a larger one first. */
static PetscErrorCode DCSRPlaceNew(Mat A, PetscInt r, PetscInt nc, const PetscInt cols[], const PetscScalar vals[])
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;
  PetscInt     K = a->K;

  PetscFunctionBegin;
  if (!nc) PetscFunctionReturn(PETSC_SUCCESS);
  for (;;) {
    PetscInt   ns = a->nseg[r], len = a->rowlen[r];
    PetscCount size;

    K = a->K;
    if (ns > 0) { /* 1. room in the last segment: keep it sorted by an insertion shift */
      PetscInt q = r * K + ns - 1;
      if (a->segcap[q] - a->seglen[q] >= nc) {
        PetscCount st = a->segstart[q];
        DCSRMergeInto(a->colidx + st, a->values + st, a->seglen[q], nc, cols, vals);
        a->seglen[q] += nc;
        break;
      }
      if (a->seglen[q] == 0) ns--; /* an empty segment without room: its slots become garbage, its table entry is reused */
    }
    if (ns < K) { /* 2. a new segment */
      size = PetscMax(PetscMax((PetscCount)nc, (PetscCount)DCSRSlackOf(a, len + nc)), (PetscCount)a->minseg);
      if (a->used + size <= a->cap) {
        PetscInt q = r * K + ns;
        a->segstart[q] = a->used;
        a->segcap[q]   = (PetscInt)size;
        a->seglen[q]   = nc;
        PetscCall(PetscArraycpy(a->colidx + a->used, cols, nc));
        PetscCall(PetscArraycpy(a->values + a->used, vals, nc));
        a->used += size;
        a->nseg[r] = ns + 1;
        break;
      }
    } else { /* 3. the row has K segments: relocate it as one sorted segment with slack */
      size = len + nc + PetscMax(DCSRSlackOf(a, len + nc), 0);
      if (a->used + size <= a->cap) {
        PetscCount st = a->used;
        PetscCall(DCSRMergeRow(a, r, a->colidx + st, a->values + st));
        DCSRMergeInto(a->colidx + st, a->values + st, len, nc, cols, vals);
        for (PetscInt s = 1; s < a->K; s++) a->segstart[r * K + s] = a->seglen[r * K + s] = a->segcap[r * K + s] = 0;
        a->segstart[r * K] = st;
        a->seglen[r * K]   = len + nc;
        a->segcap[r * K]   = (PetscInt)size;
        a->nseg[r]         = 1;
        a->used += size;
        a->nrelocate++;
        break;
      }
    }
    /* 4. the buffer is full: defragment into a buffer with room for this row's request, then try again (a
       defragmented row has one segment, so step 1, 2 or 3 succeeds) */
    PetscCall(PetscInfo(A, "gpukit: DCSR buffer full (%" PetscCount_FMT " of %" PetscCount_FMT " slots used), defragmenting and growing\n", a->used, a->cap));
    PetscCall(DCSRDefragment_Private(A, size + len + nc, 0));
  }
  a->rowlen[r] += nc;
  a->nz += nc;
  a->nnew += nc;
  a->tabstate++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Set or add entries (local columns, all in range or negative = skipped) of local row r: hits update their slot,
   new locations are honoured as AIJ honours them (nonew, ignorezero), duplicates among the new ones resolved as AIJ
   resolves them (INSERT_VALUES: the last one wins; ADD_VALUES: summed) and placed by DCSRPlaceNew(). */
PetscErrorCode DCSRInsertRow_Private(Mat A, PetscInt r, PetscInt n, const PetscInt cols[], const PetscScalar vals[], InsertMode mode)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;
  PetscInt     np = 0, nu = 0, pcs[64], pps[64], *pc = pcs, *pp = pps;
  PetscScalar  uvs[64], *uv = uvs;

  PetscFunctionBegin;
  if (n > 64) PetscCall(PetscMalloc3(n, &pc, n, &pp, n, &uv));
  for (PetscInt l = 0; l < n; l++) {
    PetscInt    c = cols[l];
    PetscScalar v = vals ? vals[l] : 0.0;
    PetscCount  slot;

    if (c < 0) continue;
    PetscCall(DCSRFindEntry_Private(a, r, c, &slot));
    if (slot >= 0) {
      if (mode == ADD_VALUES) a->values[slot] += v;
      else a->values[slot] = v;
      continue;
    }
    if (a->ignorezero && v == 0.0 && r != c) continue;
    if (a->nonew == 1) continue;
    PetscCheck(a->nonew != -1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Inserting a new nonzero at local (%" PetscInt_FMT ",%" PetscInt_FMT ") in the matrix, which MAT_NEW_NONZERO_LOCATION_ERR forbids", r, c);
    pc[np] = c;
    pp[np] = l;
    np++;
  }
  if (np) {
    PetscCall(PetscSortIntWithArray(np, pc, pp));
    for (PetscInt k = 0; k < np;) {
      PetscInt    e = k, last = pp[k];
      PetscScalar sum = 0.0;
      while (e < np && pc[e] == pc[k]) {
        sum += vals ? vals[pp[e]] : 0.0;
        if (pp[e] > last) last = pp[e];
        e++;
      }
      pc[nu] = pc[k];
      uv[nu] = mode == ADD_VALUES ? sum : (vals ? vals[last] : 0.0);
      nu++;
      k = e;
    }
    PetscCall(DCSRPlaceNew(A, r, nu, pc, uv));
  }
  if (n > 64) PetscCall(PetscFree3(pc, pp, uv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* validating setters of the options (docs/dcsr.md) */
PetscErrorCode DCSRSetMaxSegments_Private(Mat A, PetscInt K)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  PetscCheck(K >= 1 && K <= GPUKIT_DCSR_MAX_K, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_dcsr_max_segments must be 1..%d, got %" PetscInt_FMT, GPUKIT_DCSR_MAX_K, K);
  if (K == a->K) PetscFunctionReturn(PETSC_SUCCESS);
  if (a->preallocated) PetscCall(DCSRDefragment_Private(A, 0, K)); /* re-lay the tables out with the new K */
  else a->K = K;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a slack (spare slots per stored entry) given with option opt: 0..100, else a clear error */
static PetscErrorCode DCSRSlackSet(Mat A, const char opt[], PetscReal slack, PetscReal *dest)
{
  PetscFunctionBegin;
  PetscCheck(slack >= 0.0 && slack <= 100.0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "%s must be in [0, 100] (spare slots per stored entry), got %g", opt, (double)slack);
  *dest = slack;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DCSRSetSlack_Private(Mat A, PetscReal slack)
{
  PetscFunctionBegin;
  PetscCall(DCSRSlackSet(A, "-mat_dcsr_slack", slack, &((Mat_SeqDCSR *)A->data)->slack));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DCSRSetDefragSlack_Private(Mat A, PetscReal slack)
{
  PetscFunctionBegin;
  PetscCall(DCSRSlackSet(A, "-mat_dcsr_defrag_slack", slack, &((Mat_SeqDCSR *)A->data)->defragslack));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DCSRSetMinSegment_Private(Mat A, PetscInt minseg)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  PetscCheck(minseg >= 1 && minseg <= 1048576, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_dcsr_min_segment must be 1..1048576, got %" PetscInt_FMT, minseg);
  a->minseg = minseg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DCSRSetCapacityFactor_Private(Mat A, PetscReal f)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  PetscCheck(f >= 1.0 && f <= 100.0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_dcsr_capacity_factor must be in [1, 100], got %g", (double)f);
  a->capfactor = f;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DCSRSetDefragFraction_Private(Mat A, PetscReal f)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  PetscCheck(f >= 0.0 && f <= 1.0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_dcsr_defrag_fraction must be in [0, 1], got %g", (double)f);
  a->defrag_fraction = f;
  PetscFunctionReturn(PETSC_SUCCESS);
}
