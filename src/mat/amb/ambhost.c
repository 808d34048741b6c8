/*
   MATAMB host side without a Mat: the layout builder (from CSR), the values-only refresh, the host AMB product (the
   reference the device kernels reproduce) and the traffic model. The layout is defined at the top of ambimpl.h.
*/
#include "ambimpl.h"

PetscInt AMBClampB(PetscInt b, PetscInt n, PetscInt W)
{
  PetscInt nseg, wlast;

  if (n <= 0) return 1;
  nseg  = (n + W - 1) / W;
  wlast = n - (nseg - 1) * W;
  return PetscMax(1, PetscMin(b, wlast));
}

PetscLogDouble AMBModelBytes(PetscCount nzzf, PetscInt b, PetscInt nchunks, PetscInt m, PetscInt n, PetscInt v)
{
  return (PetscLogDouble)nzzf * ((PetscLogDouble)v + 2.0 / (PetscLogDouble)b) + (PetscLogDouble)nchunks * (2.0 * v * AMB_C + 2.0 * AMB_C + 10.0) + (PetscLogDouble)(m + n) * v;
}

PetscLogDouble AMBModelBytesCSR(PetscCount nnz, PetscInt m, PetscInt n)
{
  return 12.0 * (PetscLogDouble)nnz + 4.0 * (PetscLogDouble)m + 8.0 * (PetscLogDouble)(m + n);
}

/* the (row, segment) pairs of a CSR, grouped by segment (ascending), rows ascending within a segment */
typedef struct {
  PetscInt  npair, nseg;
  PetscInt *segptr;     /* nseg+1: pairs of segment g are segptr[g] .. segptr[g+1]-1 */
  PetscInt *prow;       /* npair: the row */
  PetscInt *pbeg, *pend; /* npair: its CSR positions [pbeg, pend) */
  PetscInt *nblk;       /* npair: blocks for the current b */
  PetscInt *order;      /* npair: pair indices in layout order (sorted within sigma windows) */
  PetscInt *work;       /* npair: merge sort buffer */
} AMBPairs;

static PetscErrorCode AMBPairsCreate(PetscInt m, PetscInt n, const PetscInt *ia, const PetscInt *ja, PetscInt W, AMBPairs *P)
{
  PetscInt *cnt;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(P, sizeof(*P)));
  P->nseg = n > 0 ? (n + W - 1) / W : 0;
  PetscCall(PetscCalloc1(P->nseg + 1, &P->segptr));
  /* count pairs per segment */
  for (PetscInt r = 0; r < m; r++) {
    PetscInt gprev = -1;
    for (PetscInt p = ia[r]; p < ia[r + 1]; p++) {
      PetscInt g = ja[p] / W;
      if (g != gprev) {
        P->segptr[g + 1]++;
        gprev = g;
      }
    }
  }
  for (PetscInt g = 0; g < P->nseg; g++) P->segptr[g + 1] += P->segptr[g];
  P->npair = P->segptr[P->nseg];
  PetscCall(PetscMalloc6(P->npair, &P->prow, P->npair, &P->pbeg, P->npair, &P->pend, P->npair, &P->nblk, P->npair, &P->order, P->npair, &P->work));
  PetscCall(PetscMalloc1(P->nseg + 1, &cnt));
  PetscCall(PetscArraycpy(cnt, P->segptr, P->nseg + 1));
  for (PetscInt r = 0; r < m; r++) {
    PetscInt p = ia[r];
    while (p < ia[r + 1]) {
      PetscInt g = ja[p] / W, q = p, k;
      while (q < ia[r + 1] && ja[q] / W == g) q++;
      k          = cnt[g]++;
      P->prow[k] = r;
      P->pbeg[k] = p;
      P->pend[k] = q;
      p          = q;
    }
  }
  PetscCall(PetscFree(cnt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBPairsDestroy(AMBPairs *P)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(P->segptr));
  PetscCall(PetscFree6(P->prow, P->pbeg, P->pend, P->nblk, P->order, P->work));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the greedy blocks of the entries ja[beg..end) for block width b in a matrix of n columns: block base of an entry */
static inline PetscInt AMBBlockBase(PetscInt col, PetscInt b, PetscInt n)
{
  return col + b > n ? n - b : col;
}

static PetscInt AMBCountBlocks(const PetscInt *ja, PetscInt beg, PetscInt end, PetscInt b, PetscInt n)
{
  PetscInt nb = 0, base = 0;

  for (PetscInt p = beg; p < end; p++) {
    if (nb == 0 || ja[p] - base >= b) {
      base = AMBBlockBase(ja[p], b, n);
      nb++;
    }
  }
  return nb;
}

/* stable merge sort of idx[0..len) by key[idx] descending */
static void AMBStableSortDesc(PetscInt len, PetscInt *idx, const PetscInt *key, PetscInt *work)
{
  for (PetscInt w = 1; w < len; w *= 2) {
    for (PetscInt lo = 0; lo < len; lo += 2 * w) {
      PetscInt mid = PetscMin(lo + w, len), hi = PetscMin(lo + 2 * w, len), i = lo, j = mid, k = lo;
      if (mid >= hi) {
        for (; i < hi; i++) work[k++] = idx[i];
        continue;
      }
      while (i < mid && j < hi) {
        if (key[idx[j]] > key[idx[i]]) work[k++] = idx[j++]; /* strictly greater: ties keep the earlier one first */
        else work[k++] = idx[i++];
      }
      while (i < mid) work[k++] = idx[i++];
      while (j < hi) work[k++] = idx[j++];
    }
    for (PetscInt i = 0; i < len; i++) idx[i] = work[i];
  }
}

/* blocks per pair for b, then the layout order (sigma windows), then nzzf and nchunks */
static PetscErrorCode AMBPairsOrder(AMBPairs *P, const PetscInt *ja, PetscInt n, PetscInt b, PetscInt sigma, PetscCount *nzzf, PetscInt *nchunks)
{
  PetscCount zf = 0;
  PetscInt   nc = 0;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < P->npair; k++) {
    P->nblk[k]  = AMBCountBlocks(ja, P->pbeg[k], P->pend[k], b, n);
    P->order[k] = k;
  }
  if (sigma > 1) {
    for (PetscInt g = 0; g < P->nseg; g++) {
      PetscInt s = P->segptr[g];
      while (s < P->segptr[g + 1]) {
        PetscInt win = P->prow[s] / sigma, e = s;
        while (e < P->segptr[g + 1] && P->prow[e] / sigma == win) e++;
        if (e - s > 1) AMBStableSortDesc(e - s, P->order + s, P->nblk, P->work + s);
        s = e;
      }
    }
  }
  for (PetscInt g = 0; g < P->nseg; g++) {
    for (PetscInt s = P->segptr[g]; s < P->segptr[g + 1]; s += AMB_C) {
      PetscInt e = PetscMin(s + AMB_C, P->segptr[g + 1]), mx = 0;
      for (PetscInt k = s; k < e; k++) mx = PetscMax(mx, P->nblk[P->order[k]]);
      zf += (PetscCount)AMB_C * b * mx;
      nc++;
    }
  }
  *nzzf    = zf;
  *nchunks = nc;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode AMBLayoutCount_Host(PetscInt m, PetscInt n, const PetscInt *ia, const PetscInt *ja, PetscInt b, PetscInt W, PetscInt sigma, PetscCount *nzzf, PetscInt *nchunks)
{
  AMBPairs P;

  PetscFunctionBegin;
  PetscCall(AMBPairsCreate(m, n, ia, ja, W, &P));
  PetscCall(AMBPairsOrder(&P, ja, n, AMBClampB(b, n, W), sigma, nzzf, nchunks));
  PetscCall(AMBPairsDestroy(&P));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode AMBLayoutDestroy_Host(AMBLayout *L)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(L->cs));
  PetscCall(PetscFree(L->nblk));
  PetscCall(PetscFree(L->seg));
  PetscCall(PetscFree(L->row));
  PetscCall(PetscFree(L->colidx));
  PetscCall(PetscFree(L->val));
  PetscCall(PetscFree(L->map));
  PetscCall(PetscFree(L->rsptr));
  PetscCall(PetscFree(L->rslot));
  PetscCall(PetscFree(L->multirows));
  PetscCall(PetscMemzero(L, sizeof(*L)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode AMBLayoutBuild_Host(PetscInt m, PetscInt n, const PetscInt *ia, const PetscInt *ja, const PetscScalar *a, const AMBOptions *opt, AMBLayout *L)
{
  AMBPairs   P;
  PetscInt   W = opt->W, sigma = opt->sigma, b, nchunks = 0;
  PetscCount nzzf = 0, nnz = m > 0 ? ia[m] : 0;
  PetscBool  fallback = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(AMBLayoutDestroy_Host(L));
  PetscCheck(m <= INT32_MAX && n <= INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "MATAMB keeps 32-bit row numbers per block: %" PetscInt_FMT " x %" PetscInt_FMT " is too large; use more MPI ranks or MATAIJ", m, n);
  L->m     = m;
  L->n     = n;
  L->W     = W;
  L->sigma = sigma;
  L->nnz   = nnz;
  PetscCall(AMBPairsCreate(m, n, ia, ja, W, &P));
  L->nseg    = P.nseg;
  L->nrowseg = P.npair;
  PetscCheck((PetscCount)P.npair <= INT32_MAX / AMB_C, PETSC_COMM_SELF, PETSC_ERR_SUP, "MATAMB: too many (row, segment) pairs (%" PetscInt_FMT ") for 32-bit slots", P.npair);

  /* b: the user's (clamped), or the one minimising the traffic model */
  if (opt->b > 0) {
    b = AMBClampB(opt->b, n, W);
    PetscCall(AMBPairsOrder(&P, ja, n, b, sigma, &nzzf, &nchunks));
  } else {
    PetscLogDouble best = -1;
    PetscInt       bmax = AMBClampB(AMB_MODEL_MAX_B, n, W);
    b                   = 1;
    for (PetscInt bb = 1; bb <= bmax; bb++) {
      PetscCount     zf;
      PetscInt       nc;
      PetscLogDouble bytes;
      PetscCall(AMBPairsOrder(&P, ja, n, bb, sigma, &zf, &nc));
      bytes = AMBModelBytes(zf, bb, nc, m, n, 8);
      if (best < 0 || bytes < best) {
        best = bytes;
        b    = bb;
      }
    }
    PetscCall(AMBPairsOrder(&P, ja, n, b, sigma, &nzzf, &nchunks));
  }
  L->b        = b;
  L->nchunks  = nchunks;
  L->nzzf     = nzzf;
  L->bytes    = AMBModelBytes(nzzf, b, nchunks, m, n, 8);
  L->bytescsr = AMBModelBytesCSR(nnz, m, n);

  /* the CSR fallback */
  switch (opt->fallback_mode) {
  case AMB_FALLBACK_ALWAYS:
    fallback = PETSC_TRUE;
    PetscCall(PetscSNPrintf(L->why, sizeof(L->why), "-mat_amb_csr_fallback always"));
    break;
  case AMB_FALLBACK_NEVER:
    fallback = PETSC_FALSE;
    PetscCall(PetscSNPrintf(L->why, sizeof(L->why), "-mat_amb_csr_fallback never"));
    break;
  case AMB_FALLBACK_AUTO:
    if (m == 0 || nnz == 0) {
      fallback = PETSC_TRUE;
      PetscCall(PetscSNPrintf(L->why, sizeof(L->why), "no nonzeros"));
    } else if ((PetscReal)nnz / (PetscReal)m < AMB_FALLBACK_MIN_NNZ_ROW) {
      fallback = PETSC_TRUE;
      PetscCall(PetscSNPrintf(L->why, sizeof(L->why), "%.2f nonzeros per row, fewer than %d", (double)((PetscReal)nnz / (PetscReal)m), (int)AMB_FALLBACK_MIN_NNZ_ROW));
    } else if (L->bytes > AMB_FALLBACK_RATIO * L->bytescsr) {
      fallback = PETSC_TRUE;
      PetscCall(PetscSNPrintf(L->why, sizeof(L->why), "model: AMB %.4g bytes > %g x CSR %.4g bytes", L->bytes, (double)AMB_FALLBACK_RATIO, L->bytescsr));
    } else {
      PetscCall(PetscSNPrintf(L->why, sizeof(L->why), "model: AMB %.4g bytes <= %g x CSR %.4g bytes", L->bytes, (double)AMB_FALLBACK_RATIO, L->bytescsr));
    }
    break;
  default:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Unknown MATAMB fallback mode %d", (int)opt->fallback_mode);
  }
  L->fallback = fallback;

  /* the arrays */
  PetscCall(PetscMalloc1(nchunks + 1, &L->cs));
  PetscCall(PetscMalloc1(nchunks, &L->nblk));
  PetscCall(PetscMalloc1(nchunks, &L->seg));
  PetscCall(PetscMalloc1((size_t)nchunks * AMB_C, &L->row));
  PetscCall(PetscCalloc1(nzzf / b, &L->colidx));
  PetscCall(PetscCalloc1(nzzf, &L->val));
  PetscCall(PetscMalloc1(nnz, &L->map));
  PetscCall(PetscCalloc1(m + 1, &L->rsptr));
  PetscCall(PetscMalloc1(P.npair, &L->rslot));
  {
    PetscInt   c   = 0;
    PetscInt64 off = 0;
    for (PetscInt g = 0; g < P.nseg; g++) {
      for (PetscInt s = P.segptr[g]; s < P.segptr[g + 1]; s += AMB_C, c++) {
        PetscInt  e = PetscMin(s + AMB_C, P.segptr[g + 1]), mx = 0;
        PetscInt  segoff = g * W;
        uint16_t *ci;
        for (PetscInt k = s; k < e; k++) mx = PetscMax(mx, P.nblk[P.order[k]]);
        L->cs[c]   = off;
        L->nblk[c] = (int32_t)mx;
        L->seg[c]  = (int32_t)g;
        ci         = L->colidx + off / b;
        for (PetscInt l = 0; l < AMB_C; l++) {
          PetscInt lastidx = 0, nb = 0, base = 0;
          if (s + l >= e) {
            L->row[c * AMB_C + l] = -1;
            for (PetscInt k = 0; k < mx; k++) ci[AMB_C * k + l] = 0;
            continue;
          }
          {
            PetscInt pr = P.order[s + l];
            L->row[c * AMB_C + l] = (int32_t)P.prow[pr];
            L->rsptr[P.prow[pr] + 1]++;
            for (PetscInt p = P.pbeg[pr]; p < P.pend[pr]; p++) {
              PetscInt64 slot;
              if (nb == 0 || ja[p] - base >= b) {
                base    = AMBBlockBase(ja[p], b, n);
                lastidx = base - segoff;
                ci[AMB_C * nb + l] = (uint16_t)lastidx;
                nb++;
              }
              slot      = off + (PetscInt64)AMB_C * ((nb - 1) * b + (ja[p] - base)) + l;
              L->map[p] = slot;
              L->val[slot] = a ? a[p] : 0.0;
            }
            for (PetscInt k = nb; k < mx; k++) ci[AMB_C * k + l] = (uint16_t)lastidx;
          }
        }
        off += (PetscInt64)AMB_C * b * mx;
      }
    }
    L->cs[nchunks] = off;
  }
  /* rows -> slots, ascending segment order (= chunk order) */
  for (PetscInt r = 0; r < m; r++) L->rsptr[r + 1] += L->rsptr[r];
  {
    int32_t *fill;
    PetscCall(PetscMalloc1(m + 1, &fill));
    for (PetscInt r = 0; r <= m; r++) fill[r] = L->rsptr[r];
    for (PetscInt i = 0; i < nchunks * AMB_C; i++) {
      if (L->row[i] >= 0) L->rslot[fill[L->row[i]]++] = (int32_t)i;
    }
    PetscCall(PetscFree(fill));
  }
  L->nmulti = 0;
  for (PetscInt r = 0; r < m; r++)
    if (L->rsptr[r + 1] - L->rsptr[r] > 1) L->nmulti++;
  PetscCall(PetscMalloc1(L->nmulti, &L->multirows));
  for (PetscInt r = 0, k = 0; r < m; r++)
    if (L->rsptr[r + 1] - L->rsptr[r] > 1) L->multirows[k++] = (int32_t)r;
  PetscCall(AMBPairsDestroy(&P));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode AMBLayoutRefresh_Host(AMBLayout *L, const PetscScalar *a)
{
  PetscFunctionBegin;
  for (PetscCount p = 0; p < L->nnz; p++) L->val[L->map[p]] = a[p];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one chunk: block k of the 32 lanes at a time (contiguous indices; the block's b values of a lane are 32 apart),
   each lane's running sum in s[l] over blocks k, then columns j (the order of ambimpl.h) */
#define AMB_CHUNK_BODY(B) \
  do { \
    for (PetscInt k = 0; k < nb; k++) { \
      const uint16_t    *idx = ci + AMB_C * k; \
      const PetscScalar *vk  = v + AMB_C * k * (B); \
      for (PetscInt l = 0; l < AMB_C; l++) { \
        const PetscScalar *xx = xs + idx[l]; \
        PetscScalar        t  = s[l]; \
        for (PetscInt j = 0; j < (B); j++) t += vk[AMB_C * j + l] * xx[j]; \
        s[l] = t; \
      } \
    } \
  } while (0)

PetscErrorCode AMBMult_Host(const AMBLayout *L, const PetscScalar *x, const PetscScalar *z, PetscScalar *y)
{
  const PetscInt b = L->b;

  PetscFunctionBegin;
  if (z) {
    if (z != y) PetscCall(PetscArraycpy(y, z, L->m));
  } else PetscCall(PetscArrayzero(y, L->m));
  for (PetscInt c = 0; c < L->nchunks; c++) {
    const PetscInt     nb = L->nblk[c];
    const uint16_t    *ci = L->colidx + L->cs[c] / b;
    const PetscScalar *v  = L->val + L->cs[c];
    const PetscScalar *xs = x + (PetscInt64)L->seg[c] * L->W;
    const int32_t     *rw = L->row + (PetscInt64)c * AMB_C;
    PetscScalar        s[AMB_C];

    /* the running sum of each lane's row continues from the earlier segments (the order of ambimpl.h) */
    for (PetscInt l = 0; l < AMB_C; l++) s[l] = rw[l] >= 0 ? y[rw[l]] : 0.0;
    switch (b) {
    case 1:
      AMB_CHUNK_BODY(1);
      break;
    case 2:
      AMB_CHUNK_BODY(2);
      break;
    case 3:
      AMB_CHUNK_BODY(3);
      break;
    case 4:
      AMB_CHUNK_BODY(4);
      break;
    case 5:
      AMB_CHUNK_BODY(5);
      break;
    case 6:
      AMB_CHUNK_BODY(6);
      break;
    case 7:
      AMB_CHUNK_BODY(7);
      break;
    case 8:
      AMB_CHUNK_BODY(8);
      break;
    default:
      AMB_CHUNK_BODY(b);
    }
    for (PetscInt l = 0; l < AMB_C; l++) {
      if (rw[l] < 0) break; /* padding lanes are the last lanes of a chunk */
      y[rw[l]] = s[l];
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
