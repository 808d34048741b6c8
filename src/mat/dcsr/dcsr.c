/*
   MATSEQDCSR: dynamic CSR on one rank (docs/dcsr.md). Rows are up to K sorted segments in one buffer with a bump
   allocator (dcsrinsert.c), so entries at new locations after assembly are inserted in place, without a rebuild.
   This file: the constructor with its ops table, the native operations, conversions, the registration hook and the
   public API. Operations not implemented here run on an AIJ copy through the AIJ forwarder (gpukitaijfwd.h).
*/
#include "dcsrimpl.h"
#include <petsc/private/dmimpl.h>
#include <petsc/private/dmdaimpl.h>
#if !defined(GPUKIT_WITHOUT_AIJFWD)
  #include "gpukitaijfwd.h"
#endif

PetscLogEvent MAT_DCSR_Insert, MAT_DCSR_Defrag, MAT_DCSR_Mult, MAT_DCSR_Assembly;

/* ------------------------------------------------------------------------------------------------------
   Insertion and assembly
   ------------------------------------------------------------------------------------------------------ */

PetscErrorCode MatSetValues_SeqDCSR(Mat A, PetscInt m, const PetscInt im[], PetscInt n, const PetscInt in[], const PetscScalar v[], InsertMode mode)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;
  PetscScalar  buf[64], *col = buf;

  PetscFunctionBegin;
  PetscCheck(!a->assembling, PETSC_COMM_SELF, PETSC_ERR_ORDER, "MatSetValues() was called between MatAssemblyBegin() and MatAssemblyEnd() of this MATDCSR matrix; call MatAssemblyEnd() first");
  /* check every index first, so that a bad one leaves the matrix unchanged */
  for (PetscInt k = 0; k < m; k++) PetscCheck(im[k] < A->rmap->n, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Row %" PetscInt_FMT " is out of range: the matrix has %" PetscInt_FMT " rows (0..%" PetscInt_FMT ")", im[k], A->rmap->n, A->rmap->n - 1);
  for (PetscInt l = 0; l < n; l++) PetscCheck(in[l] < A->cmap->n, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Column %" PetscInt_FMT " is out of range: the matrix has %" PetscInt_FMT " columns (0..%" PetscInt_FMT ")", in[l], A->cmap->n, A->cmap->n - 1);
  if (!a->preallocated) PetscCall(DCSRAllocate_Private(A, NULL, PETSC_DEFAULT));
  PetscCall(DCSRHostAccess(A, PETSC_TRUE));
  PetscCall(PetscLogEventBegin(MAT_DCSR_Insert, A, 0, 0, 0));
  if (!a->roworiented && n > 64) PetscCall(PetscMalloc1(n, &col));
  for (PetscInt k = 0; k < m; k++) {
    const PetscScalar *rv = NULL;
    if (im[k] < 0) continue;
    if (v) {
      if (a->roworiented) rv = v + (size_t)k * n;
      else {
        for (PetscInt l = 0; l < n; l++) col[l] = v[k + (size_t)l * m];
        rv = col;
      }
    }
    PetscCall(DCSRInsertRow_Private(A, im[k], n, in, rv, mode));
  }
  if (col != buf) PetscCall(PetscFree(col));
  PetscCall(PetscLogEventEnd(MAT_DCSR_Insert, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGetValues_SeqDCSR(Mat A, PetscInt m, const PetscInt im[], PetscInt n, const PetscInt in[], PetscScalar v[])
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  PetscCall(DCSRHostAccess(A, PETSC_FALSE));
  for (PetscInt k = 0; k < m; k++) {
    for (PetscInt l = 0; l < n; l++) {
      PetscCount slot = -1;
      if (im[k] < 0 || in[l] < 0) continue;
      PetscCheck(im[k] < A->rmap->n && in[l] < A->cmap->n, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Entry (%" PetscInt_FMT ",%" PetscInt_FMT ") is outside the %" PetscInt_FMT " x %" PetscInt_FMT " matrix", im[k], in[l], A->rmap->n, A->cmap->n);
      PetscCall(DCSRFindEntry_Private(a, im[k], in[l], &slot));
      v[k * n + l] = slot >= 0 ? a->values[slot] : 0.0;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAssemblyBegin_SeqDCSR(Mat A, MatAssemblyType type)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  if (!a->preallocated) PetscCall(DCSRAllocate_Private(A, NULL, 0));
  a->assembling = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the end of an insertion phase: nonzerostate, then the defragmentation policy */
static PetscErrorCode DCSRFinishInsertion(Mat A)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;
  PetscInt     nfrag;
  PetscBool    defrag = PETSC_FALSE;

  PetscFunctionBegin;
  if (!a->nnew) PetscFunctionReturn(PETSC_SUCCESS);
  A->nonzerostate++;
  PetscCall(DCSRFragmentedRows_Private(a, &nfrag));
  switch (a->defrag) {
  case MAT_DCSR_DEFRAG_ALWAYS:
    defrag = PETSC_TRUE;
    break;
  case MAT_DCSR_DEFRAG_AUTO: {
    PetscCount live = 0;
    for (PetscInt q = 0; q < a->m * a->K; q++) live += a->segcap[q];
    /* many fragmented rows, or more than half of the allocated slots are garbage */
    defrag = (PetscBool)((PetscReal)nfrag > a->defrag_fraction * (PetscReal)a->m || 2 * live < a->used);
  } break;
  case MAT_DCSR_DEFRAG_NEVER:
    break;
  default:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "Unknown MatDCSRDefragType %d", (int)a->defrag);
  }
  PetscCall(PetscInfo(A, "gpukit: DCSR %" PetscCount_FMT " new nonzeros, %" PetscInt_FMT " of %" PetscInt_FMT " rows fragmented%s\n", a->nnew, nfrag, a->m, defrag ? ", defragmenting" : ""));
  if (defrag && nfrag) PetscCall(DCSRDefragment_Private(A, 0, 0));
  a->nnew = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatAssemblyEnd_SeqDCSR(Mat A, MatAssemblyType type)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  a->assembling = PETSC_FALSE;
  if (type == MAT_FLUSH_ASSEMBLY) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(MAT_DCSR_Assembly, A, 0, 0, 0));
  PetscCall(DCSRFinishInsertion(A));
  PetscCall(PetscLogEventEnd(MAT_DCSR_Assembly, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Products
   ------------------------------------------------------------------------------------------------------ */

/* z = y + A x (y == NULL: z = A x; y == z allowed); the table and buffers read through local restrict pointers */
static PetscErrorCode MatMultAdd_SeqDCSR_Private(Mat A, Vec xx, Vec yy, Vec zz)
{
  Mat_SeqDCSR                     *a = (Mat_SeqDCSR *)A->data;
  const PetscScalar               *x, *y = NULL;
  PetscScalar                     *z;
  const PetscInt                   m = a->m, K = a->K;
  const PetscInt *PETSC_RESTRICT   nseg = a->nseg, *PETSC_RESTRICT seglen = a->seglen, *PETSC_RESTRICT cj = a->colidx;
  const PetscCount *PETSC_RESTRICT segstart = a->segstart;
  const PetscScalar *PETSC_RESTRICT av      = a->values;

  PetscFunctionBegin;
  PetscCall(DCSRHostAccess(A, PETSC_FALSE));
  nseg = a->nseg; seglen = a->seglen; cj = a->colidx; segstart = a->segstart; av = a->values; /* after the hook */
  PetscCall(PetscLogEventBegin(MAT_DCSR_Mult, A, xx, zz, 0));
  PetscCall(VecGetArrayRead(xx, &x));
  if (yy && yy != zz) PetscCall(VecGetArrayRead(yy, &y));
  PetscCall(VecGetArray(zz, &z));
  if (yy == zz) y = z;
  if (!a->hostaccess) { /* the fast path: one start and one length per row */
    const PetscCount *PETSC_RESTRICT s0;
    const PetscInt *PETSC_RESTRICT   l0;
    if (a->faststate != a->tabstate || !a->start0) {
      if (!a->start0) PetscCall(PetscMalloc2(m + 1, &a->start0, m + 1, &a->len0));
      for (PetscInt r = 0; r < m; r++) {
        a->start0[r] = nseg[r] ? segstart[r * K] : 0;
        a->len0[r]   = nseg[r] <= 1 ? a->rowlen[r] : -1;
      }
      a->faststate = a->tabstate;
    }
    s0 = a->start0;
    l0 = a->len0;
    for (PetscInt r = 0; r < m; r++) {
      PetscScalar sum = y ? y[r] : 0.0;
      const PetscInt l = l0[r];
      if (l >= 0) {
        const PetscInt *PETSC_RESTRICT    c = cj + s0[r];
        const PetscScalar *PETSC_RESTRICT v = av + s0[r];
        for (PetscInt k = 0; k < l; k++) sum += v[k] * x[c[k]];
      } else {
        for (PetscInt s = 0; s < nseg[r]; s++) {
          const PetscCount st = segstart[r * K + s];
          const PetscInt   ls = seglen[r * K + s];
          for (PetscInt k = 0; k < ls; k++) sum += av[st + k] * x[cj[st + k]];
        }
      }
      z[r] = sum;
    }
  } else for (PetscInt r = 0; r < m; r++) {
    PetscScalar sum = y ? y[r] : 0.0;
    for (PetscInt s = 0; s < nseg[r]; s++) {
      const PetscCount st = segstart[r * K + s];
      const PetscInt   l  = seglen[r * K + s];
      for (PetscInt k = 0; k < l; k++) sum += av[st + k] * x[cj[st + k]];
    }
    z[r] = sum;
  }
  PetscCall(VecRestoreArray(zz, &z));
  if (yy && yy != zz) PetscCall(VecRestoreArrayRead(yy, &y));
  PetscCall(VecRestoreArrayRead(xx, &x));
  PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)a->nz));
  PetscCall(PetscLogEventEnd(MAT_DCSR_Mult, A, xx, zz, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_SeqDCSR(Mat A, Vec xx, Vec yy)
{
  PetscFunctionBegin;
  PetscCall(MatMultAdd_SeqDCSR_Private(A, xx, NULL, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultAdd_SeqDCSR(Mat A, Vec xx, Vec yy, Vec zz)
{
  PetscFunctionBegin;
  PetscCall(MatMultAdd_SeqDCSR_Private(A, xx, yy, zz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTransposeAdd_SeqDCSR(Mat A, Vec xx, Vec yy, Vec zz)
{
  Mat_SeqDCSR       *a = (Mat_SeqDCSR *)A->data;
  const PetscScalar *x;
  PetscScalar       *z;

  PetscFunctionBegin;
  PetscCall(DCSRHostAccess(A, PETSC_FALSE));
  if (!yy) PetscCall(VecSet(zz, 0.0));
  else if (yy != zz) PetscCall(VecCopy(yy, zz));
  PetscCall(VecGetArrayRead(xx, &x));
  PetscCall(VecGetArray(zz, &z));
  for (PetscInt r = 0; r < a->m; r++) {
    for (PetscInt s = 0; s < a->nseg[r]; s++) {
      const PetscCount st = a->segstart[r * a->K + s];
      for (PetscInt k = 0; k < a->seglen[r * a->K + s]; k++) z[a->colidx[st + k]] += a->values[st + k] * x[r];
    }
  }
  PetscCall(VecRestoreArray(zz, &z));
  PetscCall(VecRestoreArrayRead(xx, &x));
  PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)a->nz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTranspose_SeqDCSR(Mat A, Vec xx, Vec yy)
{
  PetscFunctionBegin;
  PetscCall(MatMultTransposeAdd_SeqDCSR(A, xx, NULL, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Rows, diagonal, values
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatGetRow_SeqDCSR(Mat A, PetscInt row, PetscInt *nz, PetscInt **idx, PetscScalar **v)
{
  PetscInt len;

  PetscFunctionBegin;
  PetscCheck(row >= 0 && row < A->rmap->n, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Row %" PetscInt_FMT " is out of range 0..%" PetscInt_FMT, row, A->rmap->n - 1);
  PetscCall(DCSRHostAccess(A, PETSC_FALSE));
  PetscCall(DCSRGetSortedRow_Private(A, row, &len, idx, v));
  if (nz) *nz = len;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatRestoreRow_SeqDCSR(Mat A, PetscInt row, PetscInt *nz, PetscInt **idx, PetscScalar **v)
{
  PetscFunctionBegin;
  if (idx) *idx = NULL;
  if (v) *v = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGetDiagonal_SeqDCSR(Mat A, Vec d)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;
  PetscScalar *x;
  PetscInt     n;

  PetscFunctionBegin;
  PetscCall(DCSRHostAccess(A, PETSC_FALSE));
  PetscCall(VecGetLocalSize(d, &n));
  PetscCheck(n == A->rmap->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Vector of local size %" PetscInt_FMT " for a matrix of %" PetscInt_FMT " local rows", n, A->rmap->n);
  PetscCall(VecGetArrayWrite(d, &x));
  for (PetscInt r = 0; r < n; r++) {
    PetscCount slot = -1;
    if (r < a->n) PetscCall(DCSRFindEntry_Private(a, r, r, &slot));
    x[r] = slot >= 0 ? a->values[slot] : 0.0;
  }
  PetscCall(VecRestoreArrayWrite(d, &x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* apply f to every stored value of row r */
#define DCSR_FOR_ROW(a, r, body) \
  do { \
    for (PetscInt s_ = 0; s_ < (a)->nseg[r]; s_++) { \
      const PetscCount st_ = (a)->segstart[(r) * (a)->K + s_]; \
      for (PetscInt k_ = 0; k_ < (a)->seglen[(r) * (a)->K + s_]; k_++) { \
        const PetscCount q = st_ + k_; \
        body; \
      } \
    } \
  } while (0)

static PetscErrorCode MatScale_SeqDCSR(Mat A, PetscScalar alpha)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  PetscCall(DCSRHostAccess(A, PETSC_TRUE));
  for (PetscInt r = 0; r < a->m; r++) DCSR_FOR_ROW(a, r, a->values[q] *= alpha);
  PetscCall(PetscLogFlops((PetscLogDouble)a->nz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatZeroEntries_SeqDCSR(Mat A)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  if (!a->preallocated) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DCSRHostAccess(A, PETSC_TRUE));
  for (PetscInt r = 0; r < a->m; r++) DCSR_FOR_ROW(a, r, a->values[q] = 0.0);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* add alpha to the diagonal (inserting missing diagonal entries, as AIJ does) */
static PetscErrorCode MatShift_SeqDCSR(Mat A, PetscScalar alpha)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;
  PetscInt     nonew = a->nonew;

  PetscFunctionBegin;
  PetscCall(DCSRHostAccess(A, PETSC_TRUE));
  a->nonew = 0;
  for (PetscInt r = 0; r < PetscMin(a->m, a->n); r++) PetscCall(DCSRInsertRow_Private(A, r, 1, &r, &alpha, ADD_VALUES));
  a->nonew = nonew;
  PetscCall(DCSRFinishInsertion(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDiagonalScale_SeqDCSR(Mat A, Vec ll, Vec rr)
{
  Mat_SeqDCSR       *a = (Mat_SeqDCSR *)A->data;
  const PetscScalar *l = NULL, *rv = NULL;

  PetscFunctionBegin;
  PetscCall(DCSRHostAccess(A, PETSC_TRUE));
  if (ll) PetscCall(VecGetArrayRead(ll, &l));
  if (rr) PetscCall(VecGetArrayRead(rr, &rv));
  if (l)
    for (PetscInt r = 0; r < a->m; r++) DCSR_FOR_ROW(a, r, a->values[q] *= l[r]);
  if (rv)
    for (PetscInt r = 0; r < a->m; r++) DCSR_FOR_ROW(a, r, a->values[q] *= rv[a->colidx[q]]);
  if (ll) PetscCall(VecRestoreArrayRead(ll, &l));
  if (rr) PetscCall(VecRestoreArrayRead(rr, &rv));
  PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)a->nz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* zero the given local rows; put diag on their diagonal (inserted when missing and diag != 0, as AIJ); b = diag*x */
PETSC_INTERN PetscErrorCode MatZeroRows_SeqDCSR_Local(Mat A, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b)
{
  Mat_SeqDCSR *a       = (Mat_SeqDCSR *)A->data;
  PetscBool    removed = PETSC_FALSE;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < n; i++) PetscCheck(rows[i] >= 0 && rows[i] < a->m, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Row %" PetscInt_FMT " to zero is out of range 0..%" PetscInt_FMT, rows[i], a->m - 1);
  PetscCall(DCSRHostAccess(A, PETSC_TRUE));
  if (x && b) {
    const PetscScalar *xx;
    PetscScalar       *bb;
    PetscCall(VecGetArrayRead(x, &xx));
    PetscCall(VecGetArray(b, &bb));
    for (PetscInt i = 0; i < n; i++) bb[rows[i]] = diag * xx[rows[i]];
    PetscCall(VecRestoreArray(b, &bb));
    PetscCall(VecRestoreArrayRead(x, &xx));
  }
  for (PetscInt i = 0; i < n; i++) {
    PetscInt r = rows[i];
    if (a->keepnz) DCSR_FOR_ROW(a, r, a->values[q] = 0.0);
    else if (a->rowlen[r]) { /* as AIJ: the row's entries leave the pattern; its first segment keeps its capacity */
      for (PetscInt s = 0; s < a->nseg[r]; s++) a->seglen[r * a->K + s] = 0;
      for (PetscInt s = 1; s < a->nseg[r]; s++) a->segstart[r * a->K + s] = a->segcap[r * a->K + s] = 0;
      a->nseg[r] = a->nseg[r] ? 1 : 0;
      a->nz -= a->rowlen[r];
      a->rowlen[r] = 0;
      a->tabstate++;
      removed      = PETSC_TRUE;
    }
    if (diag != 0.0 && r < a->n) {
      PetscInt nonew = a->nonew;
      a->nonew       = 0;
      PetscCall(DCSRInsertRow_Private(A, r, 1, &r, &diag, INSERT_VALUES));
      a->nonew = nonew;
    }
  }
  if (removed && !a->nnew) A->nonzerostate++;
  PetscCall(DCSRFinishInsertion(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatZeroRows_SeqDCSR(Mat A, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b)
{
  PetscFunctionBegin;
  PetscCall(MatZeroRows_SeqDCSR_Local(A, n, rows, diag, x, b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatZeroRowsColumns_SeqDCSR(Mat A, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;
  PetscBool   *zc;

  PetscFunctionBegin;
  PetscCheck(a->m == a->n, PETSC_COMM_SELF, PETSC_ERR_SUP, "MatZeroRowsColumns() needs a square MATDCSR matrix");
  for (PetscInt i = 0; i < n; i++) PetscCheck(rows[i] >= 0 && rows[i] < a->m, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Row %" PetscInt_FMT " to zero is out of range 0..%" PetscInt_FMT, rows[i], a->m - 1);
  PetscCall(DCSRHostAccess(A, PETSC_TRUE));
  PetscCall(PetscCalloc1(a->n, &zc));
  for (PetscInt i = 0; i < n; i++) zc[rows[i]] = PETSC_TRUE;
  if (x && b) { /* b_i -= a_ij x_j for the zeroed columns j, then b = diag*x on the zeroed rows */
    const PetscScalar *xx;
    PetscScalar       *bb;
    PetscCall(VecGetArrayRead(x, &xx));
    PetscCall(VecGetArray(b, &bb));
    for (PetscInt r = 0; r < a->m; r++)
      if (!zc[r]) DCSR_FOR_ROW(a, r, if (zc[a->colidx[q]]) bb[r] -= a->values[q] * xx[a->colidx[q]]);
    for (PetscInt i = 0; i < n; i++) bb[rows[i]] = diag * xx[rows[i]];
    PetscCall(VecRestoreArray(b, &bb));
    PetscCall(VecRestoreArrayRead(x, &xx));
  }
  for (PetscInt r = 0; r < a->m; r++) DCSR_FOR_ROW(a, r, if (zc[r] || zc[a->colidx[q]]) a->values[q] = 0.0);
  PetscCall(PetscFree(zc));
  if (diag != 0.0) {
    PetscInt nonew = a->nonew;
    a->nonew       = 0;
    for (PetscInt i = 0; i < n; i++) PetscCall(DCSRInsertRow_Private(A, rows[i], 1, &rows[i], &diag, INSERT_VALUES));
    a->nonew = nonew;
  }
  PetscCall(DCSRFinishInsertion(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatNorm_SeqDCSR(Mat A, NormType type, PetscReal *nrm)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  PetscCall(DCSRHostAccess(A, PETSC_FALSE));
  *nrm = 0.0;
  if (type == NORM_FROBENIUS) {
    PetscReal sum = 0.0;
    for (PetscInt r = 0; r < a->m; r++) DCSR_FOR_ROW(a, r, sum += PetscRealPart(PetscConj(a->values[q]) * a->values[q]));
    *nrm = PetscSqrtReal(sum);
  } else if (type == NORM_INFINITY) {
    for (PetscInt r = 0; r < a->m; r++) {
      PetscReal sum = 0.0;
      DCSR_FOR_ROW(a, r, sum += PetscAbsScalar(a->values[q]));
      if (sum > *nrm) *nrm = sum; /* as AIJ: a NaN row sum does not win the max */
    }
  } else if (type == NORM_1) {
    PetscReal *cs;
    PetscCall(PetscCalloc1(a->n + 1, &cs));
    for (PetscInt r = 0; r < a->m; r++) DCSR_FOR_ROW(a, r, cs[a->colidx[q]] += PetscAbsScalar(a->values[q]));
    for (PetscInt c = 0; c < a->n; c++)
      if (cs[c] > *nrm) *nrm = cs[c];
    PetscCall(PetscFree(cs));
  } else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "MATDCSR has no norm of type %s; use NORM_1, NORM_FROBENIUS or NORM_INFINITY", NormTypes[type]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Copies, conversions
   ------------------------------------------------------------------------------------------------------ */

static void DCSRCopyOptions(const Mat_SeqDCSR *a, Mat_SeqDCSR *b)
{
  b->slack           = a->slack;
  b->defragslack     = a->defragslack;
  b->minseg          = a->minseg;
  b->capfactor       = a->capfactor;
  b->defrag          = a->defrag;
  b->defrag_fraction = a->defrag_fraction;
  b->reorder_rows    = a->reorder_rows;
  b->nonew           = a->nonew;
  b->roworiented     = a->roworiented;
  b->ignorezero      = a->ignorezero;
  b->keepnz          = a->keepnz;
}

/* B's storage becomes an exact copy of A's (values zeroed unless values) */
static PetscErrorCode DCSRCopyStorage(Mat A, Mat B, PetscBool values)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data, *b = (Mat_SeqDCSR *)B->data;
  PetscInt     mk = a->m * a->K;

  PetscFunctionBegin;
  PetscCall(PetscLayoutSetUp(B->rmap));
  PetscCall(PetscLayoutSetUp(B->cmap));
  PetscCall(DCSRHostAccess(A, PETSC_FALSE));
  PetscCall(DCSRHostAccess(B, PETSC_TRUE));
  PetscCall(PetscFree5(b->segstart, b->seglen, b->segcap, b->nseg, b->rowlen));
  PetscCall(PetscFree2(b->colidx, b->values));
  b->m = a->m;
  b->n = a->n;
  b->K = a->K;
  PetscCall(PetscMalloc5(mk, &b->segstart, mk, &b->seglen, mk, &b->segcap, a->m, &b->nseg, a->m, &b->rowlen));
  PetscCall(PetscArraycpy(b->segstart, a->segstart, mk));
  PetscCall(PetscArraycpy(b->seglen, a->seglen, mk));
  PetscCall(PetscArraycpy(b->segcap, a->segcap, mk));
  PetscCall(PetscArraycpy(b->nseg, a->nseg, a->m));
  PetscCall(PetscArraycpy(b->rowlen, a->rowlen, a->m));
  PetscCall(PetscMalloc2(a->cap, &b->colidx, a->cap, &b->values));
  PetscCall(PetscArraycpy(b->colidx, a->colidx, a->used));
  if (values) PetscCall(PetscArraycpy(b->values, a->values, a->used));
  else PetscCall(PetscArrayzero(b->values, a->used));
  b->tabstate++;
  b->used         = a->used;
  b->cap          = a->cap;
  b->nz           = a->nz;
  b->nnew         = 0;
  b->preallocated = PETSC_TRUE;
  B->preallocated = PETSC_TRUE;
  B->nonzerostate++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the duplicate keeps A's local-to-global maps, as AIJ's duplicate (which shares A's layouts) does: MatSetValuesLocal()
   and MatSetValuesStencil() on it then address the same entries (SNES's Picard function fills a duplicate of a DMDA's
   matrix that way; without the maps the local indices were taken as global ones on more than one rank) */
PETSC_INTERN PetscErrorCode DCSRDuplicateMaps(Mat A, Mat B)
{
  PetscFunctionBegin;
  if (A->rmap->mapping) PetscCall(PetscLayoutSetISLocalToGlobalMapping(B->rmap, A->rmap->mapping));
  if (A->cmap->mapping) PetscCall(PetscLayoutSetISLocalToGlobalMapping(B->cmap, A->cmap->mapping));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDuplicate_SeqDCSR(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), B));
  PetscCall(MatSetSizes(*B, A->rmap->n, A->cmap->n, A->rmap->N, A->cmap->N));
  PetscCall(MatSetBlockSizesFromMats(*B, A, A)); /* the block size (PBJacobi, ML, forwarded ops read it) */
  PetscCall(MatSetType(*B, ((PetscObject)A)->type_name));
  DCSRCopyOptions(a, (Mat_SeqDCSR *)(*B)->data);
  PetscCall(DCSRDuplicateMaps(A, *B));
  if (a->preallocated) {
    PetscCall(DCSRCopyStorage(A, *B, op == MAT_COPY_VALUES ? PETSC_TRUE : PETSC_FALSE));
    (*B)->assembled = A->assembled;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* as AIJ: with SAME_NONZERO_PATTERN the values (a plain copy of the storage when B is of A's type); else B is
   zeroed and gets A added (B's pattern becomes the union, as MatCopy_Basic()'s MatAYPX()) */
PETSC_INTERN PetscErrorCode MatCopy_DCSR_Generic(Mat A, Mat B, MatStructure str)
{
  PetscFunctionBegin;
  if (str == SAME_NONZERO_PATTERN) {
    PetscInt rstart, rend;
    PetscCall(MatZeroEntries(B));
    PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
    for (PetscInt r = rstart; r < rend; r++) {
      PetscInt           nc;
      const PetscInt    *cols;
      const PetscScalar *vals;
      PetscCall(MatGetRow(A, r, &nc, &cols, &vals));
      PetscCall(MatSetValues(B, 1, &r, nc, cols, vals, INSERT_VALUES));
      PetscCall(MatRestoreRow(A, r, &nc, &cols, &vals));
    }
    PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  } else {
    PetscCall(MatZeroEntries(B));
    PetscCall(MatAXPY(B, 1.0, A, str));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCopy_SeqDCSR(Mat A, Mat B, MatStructure str)
{
  PetscBool same;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)B, ((PetscObject)A)->type_name, &same));
  if (same && str == SAME_NONZERO_PATTERN) {
    PetscObjectState nz = B->nonzerostate;
    PetscCall(DCSRCopyStorage(A, B, PETSC_TRUE));
    B->nonzerostate = nz;
    PetscCall(PetscObjectStateIncrease((PetscObject)B));
  } else PetscCall(MatCopy_DCSR_Generic(A, B, str));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Y += alpha X for any X: X's rows are added into Y, new locations inserted in place whatever str says */
PETSC_INTERN PetscErrorCode MatAXPY_DCSR_Generic(Mat Y, PetscScalar alpha, Mat X, MatStructure str)
{
  PetscInt     rstart, rend, bufsize = 0;
  PetscScalar *buf = NULL;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(X, &rstart, &rend));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscCall(MatGetRow(X, r, &nc, &cols, &vals));
    if (nc > bufsize) {
      PetscCall(PetscFree(buf));
      bufsize = PetscMax(nc, 2 * bufsize);
      PetscCall(PetscMalloc1(bufsize, &buf));
    }
    for (PetscInt k = 0; k < nc; k++) buf[k] = alpha * vals[k];
    PetscCall(MatSetValues(Y, 1, &r, nc, cols, buf, ADD_VALUES));
    PetscCall(MatRestoreRow(X, r, &nc, &cols, &vals));
  }
  PetscCall(PetscFree(buf));
  PetscCall(MatAssemblyBegin(Y, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Y, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAXPY_SeqDCSR(Mat Y, PetscScalar alpha, Mat X, MatStructure str)
{
  Mat_SeqDCSR *y = (Mat_SeqDCSR *)Y->data;
  PetscInt     nonew = y->nonew;

  PetscFunctionBegin;
  y->nonew = 0; /* Y gets X's pattern too, as AIJ's MatAXPY() */
  PetscCall(MatAXPY_DCSR_Generic(Y, alpha, X, str));
  y->nonew = nonew;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* CSR arrays of A's rows, sorted (row order) */
static PetscErrorCode DCSRGetCSR(Mat A, PetscInt **ia, PetscInt **ja, PetscScalar **va)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;
  PetscInt    *i, *j;
  PetscScalar *v;

  PetscFunctionBegin;
  PetscCall(DCSRHostAccess(A, PETSC_FALSE));
  PetscCall(PetscMalloc3(a->m + 1, &i, a->nz, &j, a->nz, &v));
  i[0] = 0;
  for (PetscInt r = 0; r < a->m; r++) {
    PetscInt     len;
    PetscInt    *c;
    PetscScalar *x;
    PetscCall(DCSRGetSortedRow_Private(A, r, &len, &c, &x));
    PetscCall(PetscArraycpy(j + i[r], c, len));
    PetscCall(PetscArraycpy(v + i[r], x, len));
    i[r + 1] = i[r] + len;
  }
  *ia = i;
  *ja = j;
  *va = v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatConvert_SeqDCSR_SeqAIJ(Mat A, MatType newtype, MatReuse reuse, Mat *B)
{
  Mat          C;
  PetscInt    *i, *j;
  PetscScalar *v;

  PetscFunctionBegin;
  PetscCall(DCSRGetCSR(A, &i, &j, &v));
  if (reuse == MAT_REUSE_MATRIX) C = *B;
  else {
    PetscCall(MatCreate(PetscObjectComm((PetscObject)A), &C));
    PetscCall(MatSetSizes(C, A->rmap->n, A->cmap->n, A->rmap->N, A->cmap->N));
    PetscCall(MatSetBlockSizesFromMats(C, A, A)); /* the block size (PBJacobi, ML, forwarded ops read it) */
    PetscCall(MatSetType(C, MATSEQAIJ));
  }
  PetscCall(MatSeqAIJSetPreallocationCSR(C, i, j, v));
  PetscCall(PetscFree3(i, j, v));
  if (reuse == MAT_INPLACE_MATRIX) PetscCall(MatHeaderReplace(A, &C));
  else *B = C;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B (MATSEQDCSR, sizes set) gets the rows of the one-rank matrix S: one sorted segment per row, with the slack of a
   defragmentation (-mat_dcsr_defrag_slack; 0: plain CSR) */
PETSC_INTERN PetscErrorCode DCSRFillFromMat_Private(Mat S, Mat B)
{
  Mat_SeqDCSR *b;
  PetscInt     m, *nnz;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(S, &m, NULL));
  b = (Mat_SeqDCSR *)B->data;
  PetscCall(PetscMalloc1(m, &nnz));
  for (PetscInt r = 0; r < m; r++) {
    PetscCall(MatGetRow(S, r, &nnz[r], NULL, NULL));
    PetscCall(MatRestoreRow(S, r, NULL, NULL, NULL));
    nnz[r] += (PetscInt)PetscCeilReal(b->defragslack * nnz[r]); /* laid out as a defragmentation lays them out */
  }
  PetscCall(DCSRAllocate_Private(B, nnz, 0));
  PetscCall(PetscFree(nnz));
  for (PetscInt r = 0; r < m; r++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscCall(MatGetRow(S, r, &nc, &cols, &vals));
    PetscCall(DCSRInsertRow_Private(B, r, nc, cols, vals, INSERT_VALUES));
    PetscCall(MatRestoreRow(S, r, &nc, &cols, &vals));
  }
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_SeqAIJ_SeqDCSR(Mat A, MatType newtype, MatReuse reuse, Mat *B)
{
  Mat C;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) C = *B;
  else {
    PetscCall(MatCreate(PetscObjectComm((PetscObject)A), &C));
    PetscCall(MatSetSizes(C, A->rmap->n, A->cmap->n, A->rmap->N, A->cmap->N));
    PetscCall(MatSetBlockSizesFromMats(C, A, A)); /* the block size (PBJacobi, ML, forwarded ops read it) */
    PetscCall(MatSetType(C, MATSEQDCSR));
  }
  PetscCall(DCSRFillFromMat_Private(A, C));
  if (reuse == MAT_INPLACE_MATRIX) PetscCall(MatHeaderReplace(A, &C));
  else *B = C;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the forwarder's callback: an AIJ copy owned by A, values refreshed when A changed, rebuilt when its pattern did */
PetscErrorCode MatDCSRGetAIJ_Private(Mat A, Mat *aij)
{
  Mat_SeqDCSR     *a = (Mat_SeqDCSR *)A->data;
  PetscObjectState st;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &st));
  if (a->aij && a->aijstate == st) {
    *aij = a->aij;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (a->aij && a->aijnzstate == A->nonzerostate) { /* values only: same sorted pattern, row after row */
    PetscScalar *v;
    PetscCount   k = 0;
    PetscCall(DCSRHostAccess(A, PETSC_FALSE));
    PetscCall(MatSeqAIJGetArrayWrite(a->aij, &v));
    for (PetscInt r = 0; r < a->m; r++) {
      PetscInt     len;
      PetscScalar *x;
      PetscCall(DCSRGetSortedRow_Private(A, r, &len, NULL, &x));
      PetscCall(PetscArraycpy(v + k, x, len));
      k += len;
    }
    PetscCall(MatSeqAIJRestoreArrayWrite(a->aij, &v));
  } else {
    PetscCall(MatDestroy(&a->aij));
    PetscCall(MatConvert_SeqDCSR_SeqAIJ(A, MATSEQAIJ, MAT_INITIAL_MATRIX, &a->aij));
  }
  a->aijstate   = st;
  a->aijnzstate = A->nonzerostate;
  *aij          = a->aij;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Jacobians by finite-difference colouring (MatFDColoring; SNES's default on a DMDA)

   PETSc's own AIJ implementation runs on the AIJ copy (MatDCSRGetAIJ_Private()/MatMPIDCSRGetAIJ_Private()), so
   the Jacobian is exactly AIJ's: create and set up compute the colour groups and the addresses of the copy's
   values; apply differences F into the copy and then copies its values into the DCSR storage (same pattern). The
   copy is composed on the MatFDColoring: the addresses stay valid while A's nonzero pattern does not change (the
   copy is refreshed in place); a new pattern gives a new copy and apply errors (create a new MatFDColoring, as
   AIJ would need too).
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode DCSRFDGetAIJ(Mat A, Mat *aij)
{
  PetscBool mpi;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &mpi, MATMPIDCSR, MATMPIDCSRCUDA, ""));
  if (mpi) PetscCall(MatMPIDCSRGetAIJ_Private(A, aij));
  else PetscCall(MatDCSRGetAIJ_Private(A, aij));
  /* ghosted (IS_COLORING_LOCAL) colourings need the local-to-global map that DMCreateMatrix() gave A */
  if (A->cmap->mapping && !(*aij)->cmap->mapping) PetscCall(MatSetLocalToGlobalMapping(*aij, A->rmap->mapping, A->cmap->mapping));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatFDColoringCreate_DCSR(Mat A, ISColoring iscoloring, MatFDColoring c)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(DCSRFDGetAIJ(A, &aij));
  PetscCheck(aij->ops->fdcoloringcreate, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "The AIJ copy of this %s matrix has no finite-difference colouring", ((PetscObject)A)->type_name);
  PetscCall((*aij->ops->fdcoloringcreate)(aij, iscoloring, c));
  PetscCall(PetscObjectCompose((PetscObject)c, "GpukitDCSRFDAIJ", (PetscObject)aij));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the AIJ copy the colouring was made on; errors when A's pattern changed since */
static PetscErrorCode DCSRFDCheckAIJ(Mat A, MatFDColoring c, Mat *aij)
{
  Mat aij0 = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)c, "GpukitDCSRFDAIJ", (PetscObject *)&aij0));
  PetscCheck(aij0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "This MatFDColoring was not created with MatFDColoringCreate() on this %s matrix", ((PetscObject)A)->type_name);
  PetscCall(DCSRFDGetAIJ(A, aij));
  PetscCheck(*aij == aij0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "The nonzero pattern of this %s matrix changed after MatFDColoringCreate(): create a new MatFDColoring for the new pattern", ((PetscObject)A)->type_name);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatFDColoringSetUp_DCSR(Mat A, ISColoring iscoloring, MatFDColoring c)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(DCSRFDCheckAIJ(A, c, &aij));
  PetscCheck(aij->ops->fdcoloringsetup, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "The AIJ copy of this %s matrix has no finite-difference colouring", ((PetscObject)A)->type_name);
  PetscCall((*aij->ops->fdcoloringsetup)(aij, iscoloring, c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* values of the sequential block S := those of the SEQAIJ matrix C with the same pattern; column c of S is column
   cmap[c] of C (cmap NULL: the same) */
static PetscErrorCode DCSRBlockValuesFromAIJ(Mat S, Mat C, const PetscInt cmap[])
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)S->data;

  PetscFunctionBegin;
  if (!a->preallocated) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DCSRHostAccess(S, PETSC_TRUE));
  for (PetscInt r = 0; r < a->m; r++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *vals;

    PetscCall(MatGetRow(C, r, &nc, &cols, &vals));
    for (PetscInt s = 0; s < a->nseg[r]; s++) {
      PetscCount st = a->segstart[r * a->K + s];
      for (PetscInt e = 0; e < a->seglen[r * a->K + s]; e++) {
        PetscInt col = a->colidx[st + e], loc = -1;
        if (cmap) col = cmap[col];
        if (col >= 0) PetscCall(PetscFindInt(col, nc, cols, &loc));
        PetscCheck(loc >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "gpukit: entry (%" PetscInt_FMT ", %" PetscInt_FMT ") of a MATDCSR block is not in its AIJ copy", r, a->colidx[st + e]);
        a->values[st + e] = vals[loc];
      }
    }
    PetscCall(MatRestoreRow(C, r, &nc, &cols, &vals));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatFDColoringApply_DCSR(Mat A, MatFDColoring c, Vec x1, void *sctx)
{
  Mat              aij;
  PetscBool        mpi;
  PetscObjectState st;

  PetscFunctionBegin;
  PetscCall(DCSRFDCheckAIJ(A, c, &aij));
  PetscCheck(aij->ops->fdcoloringapply, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "The AIJ copy of this %s matrix has no finite-difference colouring", ((PetscObject)A)->type_name);
  PetscCall((*aij->ops->fdcoloringapply)(aij, c, x1, sctx));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &mpi, MATMPIDCSR, MATMPIDCSRCUDA, ""));
  if (mpi) {
    Mat_MPIDCSR    *d = (Mat_MPIDCSR *)A->data;
    Mat             Ad, Ao;
    const PetscInt *garray;
    PetscInt        no, *cmap;

    PetscCall(MatMPIAIJGetSeqAIJ(aij, &Ad, &Ao, &garray));
    PetscCall(MatGetLocalSize(Ao, NULL, &no));
    PetscCall(DCSRBlockValuesFromAIJ(d->A, Ad, NULL));
    PetscCall(PetscMalloc1(d->nghost + 1, &cmap));
    for (PetscInt g = 0; g < d->nghost; g++) PetscCall(PetscFindInt(d->garray[g], no, garray, &cmap[g]));
    PetscCall(DCSRBlockValuesFromAIJ(d->B, Ao, cmap));
    PetscCall(PetscFree(cmap));
  } else PetscCall(DCSRBlockValuesFromAIJ(A, aij, NULL));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  /* the copy holds exactly these values: it needs no refresh */
  PetscCall(PetscObjectStateGet((PetscObject)A, &st));
  if (mpi) ((Mat_MPIDCSR *)A->data)->aijstate = st;
  else ((Mat_SeqDCSR *)A->data)->aijstate = st;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Information, viewing, options, set up, destruction
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatGetInfo_SeqDCSR(Mat A, MatInfoType flag, MatInfo *info)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(info, sizeof(*info)));
  info->block_size   = 1.0;
  info->nz_allocated = (PetscLogDouble)a->cap;
  info->nz_used      = (PetscLogDouble)a->nz;
  info->nz_unneeded  = (PetscLogDouble)(a->cap - a->nz);
  info->assemblies   = (PetscLogDouble)A->num_ass;
  info->mallocs      = (PetscLogDouble)a->ngrow;
  info->memory       = 0;
  if (A->factortype) info->factor_mallocs = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DCSRMaxSegInUse(Mat_SeqDCSR *a, PetscInt *mx)
{
  PetscFunctionBegin;
  *mx = 0;
  for (PetscInt r = 0; r < a->m; r++) *mx = PetscMax(*mx, a->nseg[r]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatView() ::ascii_info of a DCSR matrix A made of the sequential blocks blk[0..nblk-1] (seq: A itself; MPI: its
   diagonal and off-diagonal blocks): the statistics summed over the blocks and over A's ranks (collective on A) */
PETSC_INTERN PetscErrorCode DCSRViewInfo_Private(Mat A, PetscInt nblk, const Mat blk[], PetscViewer viewer)
{
  Mat_SeqDCSR   *a0 = (Mat_SeqDCSR *)blk[0]->data;
  PetscInt64     sum[9] = {0}, mx = 0; /* fragmented rows, rows, nz, used, garbage, cap, defrags, relocations, growths */
  PetscMPIInt    size;

  PetscFunctionBegin;
  for (PetscInt b = 0; b < nblk; b++) {
    Mat_SeqDCSR *a    = (Mat_SeqDCSR *)blk[b]->data;
    PetscInt     nfrag = 0, bmx = 0;
    PetscCount   live  = 0;

    if (a->preallocated) {
      PetscCall(DCSRHostAccess(blk[b], PETSC_FALSE));
      PetscCall(DCSRFragmentedRows_Private(a, &nfrag));
      PetscCall(DCSRMaxSegInUse(a, &bmx));
      for (PetscInt q = 0; q < a->m * a->K; q++) live += a->segcap[q];
    }
    sum[0] += nfrag;
    if (b == 0) sum[1] += a->m; /* the rows of A (the off-diagonal block has the same rows) */
    sum[2] += a->nz;
    sum[3] += a->used;
    sum[4] += a->used - live;
    sum[5] += a->cap;
    sum[6] += a->ndefrag;
    sum[7] += a->nrelocate;
    sum[8] += a->ngrow;
    mx = PetscMax(mx, bmx);
  }
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size > 1) {
    PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, sum, 9, MPIU_INT64, MPI_SUM, PetscObjectComm((PetscObject)A)));
    PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &mx, 1, MPIU_INT64, MPI_MAX, PetscObjectComm((PetscObject)A)));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "DCSR: K (max segments per row) %" PetscInt_FMT ", segments in use at most %" PetscInt64_FMT ", rows with several segments %" PetscInt64_FMT " of %" PetscInt64_FMT "%s\n", a0->K, mx, sum[0], sum[1], nblk > 1 ? " (all blocks, all ranks)" : ""));
  PetscCall(PetscViewerASCIIPrintf(viewer, "DCSR: nonzeros %" PetscInt64_FMT ", slots used %" PetscInt64_FMT " (garbage %" PetscInt64_FMT ") of capacity %" PetscInt64_FMT "\n", sum[2], sum[3], sum[4], sum[5]));
  PetscCall(PetscViewerASCIIPrintf(viewer, "DCSR: defragmentations %" PetscInt64_FMT ", row relocations %" PetscInt64_FMT ", buffer growths %" PetscInt64_FMT "; slack %g, defragmentation slack %g, defrag %s, reorder rows %s\n", sum[6], sum[7], sum[8], (double)a0->slack, (double)a0->defragslack, MatDCSRDefragTypes[a0->defrag], a0->reorder_rows ? "yes" : "no"));
  if (nblk == 1 && a0->viewinfo) PetscCall((*a0->viewinfo)(blk[0], viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatView_SeqDCSR(Mat A, PetscViewer viewer)
{
  PetscBool         ascii;
  PetscViewerFormat format;
  Mat               aij;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (ascii) {
    PetscCall(PetscViewerGetFormat(viewer, &format));
    if (format == PETSC_VIEWER_ASCII_INFO || format == PETSC_VIEWER_ASCII_INFO_DETAIL) {
      PetscCall(DCSRViewInfo_Private(A, 1, &A, viewer));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  /* every other format: AIJ's own printing of the copy (the header was already printed for A) */
  PetscCall(MatDCSRGetAIJ_Private(A, &aij));
  PetscCall((*aij->ops->view)(aij, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The -mat_dcsr_* options of the matrix A (its communicator and prefix), applied to its sequential blocks
   blk[0..nblk-1] (seq: A itself; MPI: the diagonal and off-diagonal blocks), read from blk[0]. They are read in
   their own options block titled "MATDCSR options" (not inside MatSetFromOptions()'s "Matrix (Mat) options"), so
   that -help lists them even when another matrix with the same prefix printed the Mat options first. */
PETSC_INTERN PetscErrorCode DCSRSetFromOptions_Private(Mat A, PetscInt nblk, const Mat blk[])
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)blk[0]->data;
  PetscInt     K = a->K, minseg = a->minseg, dt = (PetscInt)a->defrag;
  PetscReal    slack = a->slack, dslack = a->defragslack, cf = a->capfactor, fr = a->defrag_fraction;
  PetscBool    reorder = a->reorder_rows;
  PetscBool    setK = PETSC_FALSE, setslack = PETSC_FALSE, setdslack = PETSC_FALSE, setmin = PETSC_FALSE, setcf = PETSC_FALSE, setdt = PETSC_FALSE, setfr = PETSC_FALSE, setre = PETSC_FALSE;

  PetscFunctionBegin;
  PetscOptionsBegin(PetscObjectComm((PetscObject)A), ((PetscObject)A)->prefix, "MATDCSR options", "Mat");
  PetscCall(PetscOptionsInt("-mat_dcsr_max_segments", "Maximum number of segments per row (K)", "MatDCSRGetInfo", K, &K, &setK));
  PetscCall(PetscOptionsReal("-mat_dcsr_slack", "Spare slots of a new segment, as a fraction of the row length", "MatDCSRDefragment", slack, &slack, &setslack));
  PetscCall(PetscOptionsReal("-mat_dcsr_defrag_slack", "Spare slots of a defragmented row, as a fraction of its length (0: plain CSR, whose product is cuSPARSE's on the device)", "MatDCSRDefragment", dslack, &dslack, &setdslack));
  PetscCall(PetscOptionsInt("-mat_dcsr_min_segment", "Smallest capacity of a new segment", "MatDCSRDefragment", minseg, &minseg, &setmin));
  PetscCall(PetscOptionsReal("-mat_dcsr_capacity_factor", "Buffer capacity over what is needed when the buffer is allocated or grown", "MatDCSRGetInfo", cf, &cf, &setcf));
  PetscCall(PetscOptionsEList("-mat_dcsr_defrag", "When MatAssemblyEnd() defragments", "MatDCSRDefragment", MatDCSRDefragTypes, 3, MatDCSRDefragTypes[a->defrag], &dt, &setdt));
  PetscCall(PetscOptionsReal("-mat_dcsr_defrag_fraction", "auto: defragment when more than this fraction of rows has several segments", "MatDCSRDefragment", fr, &fr, &setfr));
  PetscCall(PetscOptionsBool("-mat_dcsr_reorder_rows", "Place the rows grouped by length (longest first) in the buffer at defragmentation", "MatDCSRDefragment", reorder, &reorder, &setre));
  if (a->devoptions) PetscCall((*a->devoptions)(A, nblk, blk, PetscOptionsObject)); /* MATDCSRCUDA's, in the same block */
  PetscOptionsEnd();
  for (PetscInt b = 0; b < nblk; b++) {
    Mat          B = blk[b];
    Mat_SeqDCSR *s = (Mat_SeqDCSR *)B->data;
    if (setK || s->K != K) PetscCall(DCSRSetMaxSegments_Private(B, K));
    if (setslack || b) PetscCall(DCSRSetSlack_Private(B, slack));
    if (setdslack || b) PetscCall(DCSRSetDefragSlack_Private(B, dslack));
    if (setmin || b) PetscCall(DCSRSetMinSegment_Private(B, minseg));
    if (setcf || b) PetscCall(DCSRSetCapacityFactor_Private(B, cf));
    if (setdt || b) s->defrag = (MatDCSRDefragType)dt;
    if (setfr || b) PetscCall(DCSRSetDefragFraction_Private(B, fr));
    if (setre || b) s->reorder_rows = reorder;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetFromOptions_SeqDCSR(Mat A, GpukitOptionItems PetscOptionsObject)
{
  PetscFunctionBegin;
  (void)PetscOptionsObject;
  PetscCall(DCSRSetFromOptions_Private(A, 1, &A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetUp_SeqDCSR(Mat A)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  if (!a->preallocated) PetscCall(DCSRAllocate_Private(A, NULL, PETSC_DEFAULT));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   DMCreateMatrix() of a 1-D DMDA on one process without periodic boundary

   PETSc's DMDA takes every type that composes MatSeqAIJSetPreallocation_C for AIJ; for this case (and only this)
   it then calls MatSeqAIJSetTotalPreallocation(), a function that writes MATSEQAIJ's private structure into
   A->data whatever A's type (fdda.c, DMCreateMatrix_DA_1d_SeqAIJ_NoPreallocation(), in 3.18 and 3.26), then
   MatSetLocalToGlobalMapping() and MatSetValuesLocal() of the stencil. The call right before it is
   MatSetBlockSize(), which reaches our setblocksizes op with the DMDA already attached (MatSetDM()). There, for
   exactly that case, A->data becomes the structure of a stand-in MATSEQAIJ (composed on A) that keeps ours, so
   that PETSc's function writes into a real SEQAIJ structure; our setlocaltoglobalmapping op, the next call,
   swaps them back, restores the setvalues op PETSc replaced, destroys the stand-in (and what PETSc allocated in
   it) and preallocates the stencil's (2s+1)*dof entries per row. The stencil is then inserted by DMDA as for AIJ.
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode DCSRDMDA1dShieldEnd(Mat A)
{
  Mat          T = NULL;
  Mat_SeqDCSR *a;
  void        *data;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)A, "GpukitDCSRDMDA1dShield", (PetscObject *)&T));
  if (!T) PetscFunctionReturn(PETSC_SUCCESS);
  data    = A->data; /* the stand-in's SEQAIJ structure, filled by MatSeqAIJSetTotalPreallocation() */
  A->data = T->data;
  T->data = data;
  a       = (Mat_SeqDCSR *)A->data;
  A->ops->setvalues               = a->shieldsetvalues;
  A->ops->setlocaltoglobalmapping = a->shieldl2g;
  a->shieldsetvalues              = NULL;
  a->shieldl2g                    = NULL;
  PetscCall(PetscObjectCompose((PetscObject)A, "GpukitDCSRDMDA1dShield", NULL)); /* destroys the stand-in */
  if (!a->preallocated) PetscCall(DCSRAllocate_Private(A, NULL, a->shieldnz));
  PetscCall(PetscInfo(A, "gpukit: MATSEQDCSR preallocated for a 1-D DMDA (%" PetscInt_FMT " entries per row)\n", a->shieldnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetLocalToGlobalMapping_SeqDCSRShield(Mat A, ISLocalToGlobalMapping rmap, ISLocalToGlobalMapping cmap)
{
  PetscFunctionBegin;
  PetscCall(DCSRDMDA1dShieldEnd(A));
  if (A->ops->setlocaltoglobalmapping) PetscUseTypeMethod(A, setlocaltoglobalmapping, rmap, cmap);
  else { /* what MatSetLocalToGlobalMapping() does for a type without this op */
    PetscCall(PetscLayoutSetISLocalToGlobalMapping(A->rmap, rmap));
    PetscCall(PetscLayoutSetISLocalToGlobalMapping(A->cmap, cmap));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetBlockSizes_SeqDCSR(Mat A, PetscInt rbs, PetscInt cbs)
{
  Mat_SeqDCSR   *a  = (Mat_SeqDCSR *)A->data;
  DM             dm = NULL;
  PetscBool      isda;
  PetscInt       dim, s, dof;
  DMBoundaryType bx;
  Mat            T;
  void          *data;

  PetscFunctionBegin;
  (void)rbs;
  (void)cbs;
  if (a->preallocated || a->shieldsetvalues) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetDM(A, &dm));
  if (!dm) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)dm, DMDA, &isda));
  if (!isda || dm->prealloc_skip || ((DM_DA *)dm->data)->ofill) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DMDAGetInfo(dm, &dim, NULL, NULL, NULL, NULL, NULL, NULL, &dof, &s, &bx, NULL, NULL, NULL));
  if (dim != 1 || bx != DM_BOUNDARY_NONE || A->rmap->n != ((DM_DA *)dm->data)->M * dof) PetscFunctionReturn(PETSC_SUCCESS);
  /* PETSc's DMCreateMatrix_DA_1d_SeqAIJ_NoPreallocation() is running: MatSeqAIJSetTotalPreallocation() is next */
  PetscCall(MatCreate(PETSC_COMM_SELF, &T));
  PetscCall(MatSetSizes(T, A->rmap->n, A->cmap->n, A->rmap->n, A->cmap->n));
  PetscCall(MatSetType(T, MATSEQAIJ));
  a->shieldsetvalues              = A->ops->setvalues;
  a->shieldl2g                    = A->ops->setlocaltoglobalmapping;
  a->shieldnz                     = (2 * s + 1) * dof;
  A->ops->setlocaltoglobalmapping = MatSetLocalToGlobalMapping_SeqDCSRShield;
  data                            = A->data;
  A->data                         = T->data;
  T->data                         = data;
  PetscCall(PetscObjectCompose((PetscObject)A, "GpukitDCSRDMDA1dShield", (PetscObject)T));
  PetscCall(MatDestroy(&T));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSeqAIJSetPreallocation_SeqDCSR(Mat A, PetscInt nz, const PetscInt nnz[])
{
  PetscFunctionBegin;
  PetscCall(DCSRDMDA1dShieldEnd(A)); /* (never active here with PETSc's DMDA; safe if a PETSc version calls this instead) */
  PetscCall(DCSRAllocate_Private(A, nnz, nz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode DCSRSetOption_Private(Mat A, MatOption op, PetscBool flg)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  switch (op) {
  case MAT_ROW_ORIENTED:
    a->roworiented = flg;
    break;
  case MAT_NEW_NONZERO_LOCATIONS:
    a->nonew = flg ? 0 : 1;
    break;
  case MAT_NEW_NONZERO_LOCATION_ERR:
    a->nonew = flg ? -1 : 0;
    break;
  case MAT_IGNORE_ZERO_ENTRIES:
    a->ignorezero = flg;
    break;
  case MAT_KEEP_NONZERO_PATTERN:
    a->keepnz = flg;
    break;
  case MAT_NEW_NONZERO_ALLOCATION_ERR:
    /* as AIJ, the option replaces MAT_NEW_NONZERO_LOCATIONS / _LOCATION_ERR set before it (SNESComputeJacobianDefault()
       turns it off to insert where DMCreateMatrix() had set LOCATION_ERR); true refuses new nonzeros that need an
       allocation, and a new nonzero never reallocates a DCSR matrix: either way new nonzeros are inserted */
    a->nonew = 0;
    PetscCall(PetscInfo(A, "gpukit: MATDCSR inserts new nonzeros in place; MAT_NEW_NONZERO_ALLOCATION_ERR %s: new nonzeros allowed (it replaces an earlier MAT_NEW_NONZERO_LOCATIONS or MAT_NEW_NONZERO_LOCATION_ERR, as for AIJ)\n", flg ? "true" : "false"));
    break;
  default:
    PetscCall(PetscInfo(A, "gpukit: option %s ignored by MATDCSR\n", MatOptions[op]));
    break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetOption_SeqDCSR(Mat A, MatOption op, PetscBool flg)
{
  PetscFunctionBegin;
  PetscCall(DCSRSetOption_Private(A, op, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatLoad_SeqDCSR(Mat A, PetscViewer viewer)
{
  Mat S;

  PetscFunctionBegin;
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), &S));
  PetscCall(MatSetType(S, MATSEQAIJ));
  PetscCall(MatLoad(S, viewer));
  if (A->rmap->n < 0 || A->cmap->n < 0) PetscCall(MatSetSizes(A, S->rmap->n, S->cmap->n, S->rmap->N, S->cmap->N));
  PetscCall(DCSRFillFromMat_Private(S, A));
  PetscCall(MatDestroy(&S));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatDestroy_SeqDCSR(Mat A)
{
  Mat_SeqDCSR *a;

  PetscFunctionBegin;
  PetscCall(DCSRDMDA1dShieldEnd(A)); /* only after an error inside DMCreateMatrix() */
  a = (Mat_SeqDCSR *)A->data;
  PetscCall(PetscFree5(a->segstart, a->seglen, a->segcap, a->nseg, a->rowlen));
  PetscCall(PetscFree2(a->colidx, a->values));
  PetscCall(PetscFree2(a->rowcols, a->rowvals));
  PetscCall(PetscFree2(a->start0, a->len0));
  PetscCall(MatDestroy(&a->aij));
  PetscCall(PetscFree(A->data));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSeqAIJSetPreallocation_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqdcsr_seqaij_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqdcsr_aij_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_seqdcsr_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_dcsr_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatDCSRDefragment_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatDCSRGetInfo_C", NULL));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDCSRDefragment_SeqDCSR(Mat A)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  if (a->preallocated) PetscCall(DCSRDefragment_Private(A, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDCSRGetInfo_SeqDCSR(Mat A, PetscInt *K, PetscInt *maxseg, PetscCount *used, PetscCount *cap)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  if (a->preallocated) PetscCall(DCSRHostAccess(A, PETSC_FALSE));
  if (K) *K = a->K;
  if (maxseg) {
    *maxseg = 0;
    if (a->preallocated) PetscCall(DCSRMaxSegInUse(a, maxseg));
  }
  if (used) *used = a->used;
  if (cap) *cap = a->cap;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATSEQDCSR - "seqdcsr" - `MATDCSR` on one process: rows made of at most K sorted segments in one buffer with a
   bump allocator, so that `MatSetValues()` at new locations after assembly inserts in place, without a rebuild

   Options Database Keys:
+  -mat_dcsr_max_segments <4>     - K, 1..64
.  -mat_dcsr_slack <0.25>          - spare slots of a new segment, as a fraction of the row length
.  -mat_dcsr_defrag_slack <0>      - spare slots of a defragmented row, as a fraction of its length (0: the rows back to back, plain CSR)
.  -mat_dcsr_min_segment <4>       - smallest capacity of a new segment
.  -mat_dcsr_capacity_factor <1.2> - buffer capacity over what is needed when allocated or grown
.  -mat_dcsr_defrag <auto,always,never> - when `MatAssemblyEnd()` defragments
.  -mat_dcsr_defrag_fraction <0.0625> - auto: defragment when more rows than this fraction have several segments
-  -mat_dcsr_reorder_rows          - place the rows grouped by length at defragmentation (no gain for the host product)

   Level: intermediate

.seealso: `MATDCSR`, `MATMPIDCSR`, `MatDCSRDefragment()`, `MatDCSRGetInfo()`, `MATAIJ`
M*/
PetscErrorCode MatCreate_SeqDCSR(Mat A)
{
  Mat_SeqDCSR *a;
  PetscMPIInt  size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCheck(size == 1, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "MATSEQDCSR needs a one-process communicator; use MATDCSR or MATMPIDCSR");
  PetscCall(PetscNew(&a));
  A->data            = (void *)a;
  a->K               = 4;
  a->slack           = 0.25;
  a->minseg          = 4;
  a->capfactor       = 1.2;
  a->defrag          = MAT_DCSR_DEFRAG_AUTO;
  a->defrag_fraction = 0.0625; /* MATDCSRCUDA measured: the CSR base's fix-up at 1/8 of the rows cost up to 0.16 of a product (x and y beyond L2) */
  a->roworiented     = PETSC_TRUE;
  a->m               = A->rmap->n;
  a->n               = A->cmap->n;

  A->ops->setvalues          = MatSetValues_SeqDCSR;
  A->ops->getvalues          = MatGetValues_SeqDCSR;
  A->ops->assemblybegin      = MatAssemblyBegin_SeqDCSR;
  A->ops->assemblyend        = MatAssemblyEnd_SeqDCSR;
  A->ops->mult               = MatMult_SeqDCSR;
  A->ops->multadd            = MatMultAdd_SeqDCSR;
  A->ops->multtranspose      = MatMultTranspose_SeqDCSR;
  A->ops->multtransposeadd   = MatMultTransposeAdd_SeqDCSR;
  A->ops->getrow             = MatGetRow_SeqDCSR;
  A->ops->restorerow         = MatRestoreRow_SeqDCSR;
  A->ops->getdiagonal        = MatGetDiagonal_SeqDCSR;
  A->ops->scale              = MatScale_SeqDCSR;
  A->ops->shift              = MatShift_SeqDCSR;
  A->ops->diagonalscale      = MatDiagonalScale_SeqDCSR;
  A->ops->zeroentries        = MatZeroEntries_SeqDCSR;
  A->ops->zerorows           = MatZeroRows_SeqDCSR;
  A->ops->zerorowscolumns    = MatZeroRowsColumns_SeqDCSR;
  A->ops->norm               = MatNorm_SeqDCSR;
  A->ops->duplicate          = MatDuplicate_SeqDCSR;
  A->ops->copy               = MatCopy_SeqDCSR;
  A->ops->axpy               = MatAXPY_SeqDCSR;
  A->ops->getinfo            = MatGetInfo_SeqDCSR;
  A->ops->view               = MatView_SeqDCSR;
  A->ops->setfromoptions     = MatSetFromOptions_SeqDCSR;
  A->ops->destroy            = MatDestroy_SeqDCSR;
  A->ops->load               = MatLoad_SeqDCSR;
  A->ops->setup              = MatSetUp_SeqDCSR;
  A->ops->setoption          = MatSetOption_SeqDCSR;
  A->ops->fdcoloringcreate   = MatFDColoringCreate_DCSR;
  A->ops->fdcoloringsetup    = MatFDColoringSetUp_DCSR;
  A->ops->fdcoloringapply    = MatFDColoringApply_DCSR;
  A->ops->setblocksizes      = MatSetBlockSizes_SeqDCSR;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSeqAIJSetPreallocation_C", MatSeqAIJSetPreallocation_SeqDCSR));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqdcsr_seqaij_C", MatConvert_SeqDCSR_SeqAIJ));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqdcsr_aij_C", MatConvert_SeqDCSR_SeqAIJ));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_seqdcsr_C", MatConvert_SeqAIJ_SeqDCSR));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_dcsr_C", MatConvert_SeqAIJ_SeqDCSR));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatDCSRDefragment_C", MatDCSRDefragment_SeqDCSR));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatDCSRGetInfo_C", MatDCSRGetInfo_SeqDCSR));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATSEQDCSR));
#if !defined(GPUKIT_WITHOUT_AIJFWD)
  PetscCall(GpukitMatAIJForwardInstall(A, MatDCSRGetAIJ_Private));
#endif
  PetscCall(PetscInfo(A, "gpukit: created a %s matrix\n", MATSEQDCSR));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATDCSR - "dcsr" - dynamic CSR: `MATSEQDCSR` on one process, `MATMPIDCSR` on several. Entries at new locations
   after assembly are inserted in place (docs/dcsr.md)

   Options Database Key:
.  -mat_type dcsr - selects it with `MatSetFromOptions()`

   Level: intermediate

.seealso: `MATSEQDCSR`, `MATMPIDCSR`, `MATDCSRCUDA`, `MatDCSRDefragment()`, `MatDCSRGetInfo()`
M*/
PetscErrorCode MatCreate_DCSR(Mat A)
{
  PetscFunctionBegin;
  PetscCall(GpukitMatSetTypeBySize_Private(A, MATSEQDCSR, MATMPIDCSR));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatRegister_DCSR_Private(void)
{
  PetscFunctionBegin;
  PetscCall(MatRegisterRootName(MATDCSR, MATSEQDCSR, MATMPIDCSR));
  PetscCall(PetscLogEventRegister("DCSRInsert", MAT_CLASSID, &MAT_DCSR_Insert));
  PetscCall(PetscLogEventRegister("DCSRDefrag", MAT_CLASSID, &MAT_DCSR_Defrag));
  PetscCall(PetscLogEventRegister("DCSRMult", MAT_CLASSID, &MAT_DCSR_Mult));
  PetscCall(PetscLogEventRegister("DCSRAssembly", MAT_CLASSID, &MAT_DCSR_Assembly));
  PetscCall(MatRegister(MATDCSR, MatCreate_DCSR));
  PetscCall(MatRegister(MATSEQDCSR, MatCreate_SeqDCSR));
  PetscCall(MatRegister(MATMPIDCSR, MatCreate_MPIDCSR));
#if !defined(GPUKIT_WITHOUT_AIJFWD)
  PetscCall(GpukitMatAIJForwardRegisterFactors(MATSEQDCSR));
  PetscCall(GpukitMatAIJForwardRegisterFactors(MATMPIDCSR));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Public API
   ------------------------------------------------------------------------------------------------------ */

/*@
  MatDCSRDefragment - Returns every row of a `MATDCSR` matrix to one sorted segment, in row order, with the slack
  of `-mat_dcsr_defrag_slack` (default 0: the rows back to back, plain CSR) after it

  Collective

  Input Parameter:
. A - the `MATDCSR` or `MATDCSRCUDA` matrix, assembled

  Level: advanced

  Notes:
  The matrix defragments by itself according to `-mat_dcsr_defrag` (at `MatAssemblyEnd()`) and whenever a row
  would need more than K segments or the buffer is full; call this to get the fastest `MatMult()` now. It changes
  neither the values nor the nonzero pattern (`MatGetNonzeroState()` stays the same).

.seealso: `MATDCSR`, `MatDCSRGetInfo()`
@*/
PetscErrorCode MatDCSRDefragment(Mat A)
{
  PetscErrorCode (*f)(Mat) = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatDCSRDefragment_C", &f));
  PetscCheck(f, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "MatDCSRDefragment() is only for MATDCSR and MATDCSRCUDA matrices, not %s", ((PetscObject)A)->type_name ? ((PetscObject)A)->type_name : "a matrix without a type");
  PetscCheck(!A->factortype, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "Not for a factored matrix");
  PetscCall((*f)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatDCSRGetInfo - Gets the segment statistics of a `MATDCSR` matrix

  Collective

  Input Parameter:
. A - the `MATDCSR` or `MATDCSRCUDA` matrix

  Output Parameters:
+ maxseg      - K, the most segments a row may have (`-mat_dcsr_max_segments`), or `NULL`
. maxseginuse - the most segments any row has now (over all processes), or `NULL`
. used        - slots handed out by the bump allocators (summed over the blocks and processes), or `NULL`
- capacity    - slots allocated (summed likewise), or `NULL`

  Level: advanced

  Note:
  used minus the number of nonzeros (`MatGetInfo()`) is the free room inside segments plus the garbage left by
  relocated rows; `MatDCSRDefragment()` recovers the garbage.

.seealso: `MATDCSR`, `MatDCSRDefragment()`, `MatGetInfo()`
@*/
PetscErrorCode MatDCSRGetInfo(Mat A, PetscInt *maxseg, PetscInt *maxseginuse, PetscCount *used, PetscCount *capacity)
{
  PetscErrorCode (*f)(Mat, PetscInt *, PetscInt *, PetscCount *, PetscCount *) = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatDCSRGetInfo_C", &f));
  PetscCheck(f, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "MatDCSRGetInfo() is only for MATDCSR and MATDCSRCUDA matrices, not %s", ((PetscObject)A)->type_name ? ((PetscObject)A)->type_name : "a matrix without a type");
  PetscCall((*f)(A, maxseg, maxseginuse, used, capacity));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatDCSRSetValuesCOODevice - Inserts or adds a batch of entries whose indices and values are already in device
  memory into a `MATDCSRCUDA` matrix, without copying them to the host

  Collective

  Input Parameters:
+ A    - the `MATDCSRCUDA` matrix, assembled
. n    - the number of entries on this process
. i    - device array of n GLOBAL row indices, all of rows this process owns
. j    - device array of n GLOBAL column indices
. v    - device array of n values
- mode - `INSERT_VALUES` or `ADD_VALUES`

  Level: advanced

  Notes:
  Entries at existing locations are overwritten or added; new locations are inserted in place (the batch path
  of docs/dcsr.md). Duplicates within one batch resolve as `MatSetValues()` resolves them: with `INSERT_VALUES` the
  last one wins, with `ADD_VALUES` they are summed. The matrix is assembled on return.

  Only for `MATDCSRCUDA` (`MATSEQDCSRCUDA`, `MATMPIDCSRCUDA`); other types error.

.seealso: `MATDCSRCUDA`, `MATDCSR`, `MatSetValues()`, `MatSetValuesCOO()`
@*/
PetscErrorCode MatDCSRSetValuesCOODevice(Mat A, PetscCount n, const PetscInt i[], const PetscInt j[], const PetscScalar v[], InsertMode mode)
{
  PetscErrorCode (*f)(Mat, PetscCount, const PetscInt[], const PetscInt[], const PetscScalar[], InsertMode) = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatDCSRSetValuesCOODevice_C", &f));
  PetscCheck(f, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "MatDCSRSetValuesCOODevice() is only for MATDCSRCUDA matrices, not %s; use MatSetValues()", ((PetscObject)A)->type_name ? ((PetscObject)A)->type_name : "a matrix without a type");
  PetscCheck(n >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "n = %" PetscCount_FMT " cannot be negative", n);
  PetscCheck(mode == INSERT_VALUES || mode == ADD_VALUES, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "mode must be INSERT_VALUES or ADD_VALUES");
  PetscCall((*f)(A, n, i, j, v, mode));
  PetscFunctionReturn(PETSC_SUCCESS);
}
