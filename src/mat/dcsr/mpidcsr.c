/*
   MATMPIDCSR: a diagonal block (local columns) and an off-diagonal block whose columns are ghost indices into an
   APPEND-ONLY ghost map garray[]: a new off-process column is appended, existing ghost indices stay valid, and
   nothing is rebuilt but the x -> ghost scatter (only when ghosts were appended). Entries of other ranks' rows wait
   in a stash until assembly. The blocks are of the type given to MatCreate_MPIDCSR_Private() (MATSEQDCSR here,
   MATSEQDCSRCUDA for mpidcsrcuda); every block operation goes through the block's ops.
*/
#include "dcsrimpl.h"
#include <petsc/private/hashmapi.h>
#if !defined(GPUKIT_WITHOUT_AIJFWD)
  #include "gpukitaijfwd.h"
#endif

PETSC_INTERN PetscErrorCode DCSRViewInfo_Private(Mat, PetscInt, const Mat[], PetscViewer);
PETSC_INTERN PetscErrorCode DCSRSetFromOptions_Private(Mat, PetscInt, const Mat[]);
PETSC_INTERN PetscErrorCode DCSRSetOption_Private(Mat, MatOption, PetscBool);
PETSC_INTERN PetscErrorCode MatAXPY_DCSR_Generic(Mat, PetscScalar, Mat, MatStructure);
PETSC_INTERN PetscErrorCode MatCopy_DCSR_Generic(Mat, Mat, MatStructure);
PETSC_INTERN PetscErrorCode DCSRDuplicateMaps(Mat, Mat);
PETSC_INTERN PetscErrorCode MatZeroRows_SeqDCSR_Local(Mat, PetscInt, const PetscInt[], PetscScalar, Vec, Vec);
PETSC_INTERN PetscErrorCode MatFDColoringCreate_DCSR(Mat, ISColoring, MatFDColoring);
PETSC_INTERN PetscErrorCode MatFDColoringSetUp_DCSR(Mat, ISColoring, MatFDColoring);
PETSC_INTERN PetscErrorCode MatFDColoringApply_DCSR(Mat, MatFDColoring, Vec, void *);

#define DCSRColmap(d) ((PetscHMapI)(d)->colmap)

/* ------------------------------------------------------------------------------------------------------
   Exchange of records with the owners of their rows
   ------------------------------------------------------------------------------------------------------ */

static PetscMPIInt DCSRRowOwner(const PetscInt *range, PetscMPIInt size, PetscInt idx)
{
  PetscMPIInt lo = 0, hi = size - 1;
  while (lo < hi) {
    PetscMPIInt mid = (lo + hi + 1) / 2;
    if (range[mid] <= idx) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* Send n records of ni PetscInt (the first a global row) and ns PetscScalar to the owners of their rows; receive
   this rank's records (freed by the caller) */
static PetscErrorCode DCSRExchange(Mat A, PetscCount n, PetscInt ni, const PetscInt ints[], PetscInt ns, const PetscScalar scal[], PetscCount *nr, PetscInt **rints, PetscScalar **rscal)
{
  MPI_Comm     comm = PetscObjectComm((PetscObject)A);
  PetscMPIInt  size, *scnt, *rcnt, *sdsp, *rdsp, *pos, *dest, *c2, *d2, *c3, *d3;
  PetscInt    *sbi;
  PetscScalar *sbs = NULL;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscCalloc5(size, &scnt, size, &rcnt, size + 1, &sdsp, size + 1, &rdsp, size, &pos));
  PetscCall(PetscMalloc1(n, &dest));
  for (PetscCount i = 0; i < n; i++) {
    dest[i] = DCSRRowOwner(A->rmap->range, size, ints[i * ni]);
    scnt[dest[i]]++;
  }
  PetscCallMPI(MPI_Alltoall(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, comm));
  for (PetscMPIInt r = 0; r < size; r++) {
    sdsp[r + 1] = sdsp[r] + scnt[r];
    rdsp[r + 1] = rdsp[r] + rcnt[r];
    pos[r]      = sdsp[r];
  }
  PetscCall(PetscMalloc1(n * ni, &sbi));
  if (ns) PetscCall(PetscMalloc1(n * ns, &sbs));
  for (PetscCount i = 0; i < n; i++) {
    PetscMPIInt q = pos[dest[i]]++;
    for (PetscInt j = 0; j < ni; j++) sbi[q * ni + j] = ints[i * ni + j];
    for (PetscInt j = 0; j < ns; j++) sbs[q * ns + j] = scal[i * ns + j];
  }
  PetscCall(PetscMalloc1((size_t)rdsp[size] * ni + 1, rints));
  if (rscal) PetscCall(PetscMalloc1((size_t)rdsp[size] * ns + 1, rscal));
  PetscCall(PetscMalloc4(size, &c2, size, &d2, size, &c3, size, &d3));
  for (PetscMPIInt r = 0; r < size; r++) {
    c2[r] = scnt[r] * (PetscMPIInt)ni;
    d2[r] = sdsp[r] * (PetscMPIInt)ni;
    c3[r] = rcnt[r] * (PetscMPIInt)ni;
    d3[r] = rdsp[r] * (PetscMPIInt)ni;
  }
  PetscCallMPI(MPI_Alltoallv(sbi, c2, d2, MPIU_INT, *rints, c3, d3, MPIU_INT, comm));
  if (ns) {
    for (PetscMPIInt r = 0; r < size; r++) {
      c2[r] = scnt[r] * (PetscMPIInt)ns;
      d2[r] = sdsp[r] * (PetscMPIInt)ns;
      c3[r] = rcnt[r] * (PetscMPIInt)ns;
      d3[r] = rdsp[r] * (PetscMPIInt)ns;
    }
    PetscCallMPI(MPI_Alltoallv(sbs, c2, d2, MPIU_SCALAR, *rscal, c3, d3, MPIU_SCALAR, comm));
  }
  *nr = rdsp[size];
  PetscCall(PetscFree4(c2, d2, c3, d3));
  PetscCall(PetscFree(sbi));
  PetscCall(PetscFree(sbs));
  PetscCall(PetscFree(dest));
  PetscCall(PetscFree5(scnt, rcnt, sdsp, rdsp, pos));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Blocks, ghosts, scatter
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode DCSRMPIApplyOptions(Mat A)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  for (PetscInt b = 0; b < 2; b++) {
    Mat          blk = b ? d->B : d->A;
    Mat_SeqDCSR *s   = (Mat_SeqDCSR *)blk->data;
    s->nonew         = d->nonew;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the two blocks, without storage yet */
static PetscErrorCode DCSRMPICreateBlocks(Mat A)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;
  PetscInt     m, n, N;

  PetscFunctionBegin;
  if (d->A) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLayoutSetUp(A->rmap));
  PetscCall(PetscLayoutSetUp(A->cmap));
  m = A->rmap->n;
  n = A->cmap->n;
  N = A->cmap->N;
  PetscCall(MatCreate(PETSC_COMM_SELF, &d->A));
  PetscCall(MatSetSizes(d->A, m, n, m, n));
  PetscCall(MatSetType(d->A, d->blocktype));
  PetscCall(MatCreate(PETSC_COMM_SELF, &d->B));
  PetscCall(MatSetSizes(d->B, m, N - n, m, N - n));
  PetscCall(MatSetType(d->B, d->blocktype));
#if PetscDefined(HAVE_DEVICE)
  if (A->boundtocpu && d->A->ops->bindtocpu) { /* a device block type, and MatBindToCPU(A, PETSC_TRUE) came before the blocks */
    PetscCall(MatBindToCPU(d->A, PETSC_TRUE));
    PetscCall(MatBindToCPU(d->B, PETSC_TRUE));
  }
#endif
  PetscCall(DCSRMPIApplyOptions(A));
  if (d->deferopts && A->ops->setfromoptions) { /* the options the blocks could not take before the sizes were known */
    d->deferopts = PETSC_FALSE;
    PetscObjectOptionsBegin((PetscObject)A);
    PetscCall((*A->ops->setfromoptions)(A, PetscOptionsObject));
    PetscOptionsEnd();
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DCSRMPIResetGhosts(Mat A)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  d->nghost   = 0;
  d->nghostsf = -1;
  if (d->colmap) PetscCall(PetscHMapIClear(DCSRColmap(d)));
  PetscCall(VecDestroy(&d->lvec));
  PetscCall(VecScatterDestroy(&d->Mvctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMPIAIJSetPreallocation_MPIDCSR(Mat A, PetscInt dnz, const PetscInt dnnz[], PetscInt onz, const PetscInt onnz[])
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  PetscCall(DCSRMPICreateBlocks(A));
  PetscCall(MatSeqAIJSetPreallocation(d->A, dnz == PETSC_DEFAULT || dnz == PETSC_DECIDE ? 5 : dnz, dnnz));
  PetscCall(MatSeqAIJSetPreallocation(d->B, onz == PETSC_DEFAULT || onz == PETSC_DECIDE ? 2 : onz, onnz));
  PetscCall(DCSRMPIResetGhosts(A));
  A->preallocated = PETSC_TRUE;
  A->nonzerostate++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetUp_MPIDCSR(Mat A)
{
  PetscFunctionBegin;
  if (!A->preallocated) PetscCall(MatMPIAIJSetPreallocation_MPIDCSR(A, PETSC_DEFAULT, NULL, PETSC_DEFAULT, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ghost index of global column c, appended to the map when new (append = PETSC_TRUE), else -1 */
static PetscErrorCode DCSRMPIGhost(Mat_MPIDCSR *d, PetscInt c, PetscBool append, PetscInt *g)
{
  PetscFunctionBegin;
  PetscCall(PetscHMapIGet(DCSRColmap(d), c, g));
  if (*g >= 0 || !append) PetscFunctionReturn(PETSC_SUCCESS);
  if (d->nghost == d->ghostalloc) {
    PetscInt *ng;
    d->ghostalloc = PetscMax(16, 2 * d->ghostalloc);
    PetscCall(PetscMalloc1(d->ghostalloc, &ng));
    PetscCall(PetscArraycpy(ng, d->garray, d->nghost));
    PetscCall(PetscFree(d->garray));
    d->garray = ng;
  }
  *g                     = d->nghost;
  d->garray[d->nghost++] = c;
  PetscCall(PetscHMapISet(DCSRColmap(d), c, *g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* (re)build lvec and the x -> lvec scatter when ghosts were appended on any rank (collective) */
static PetscErrorCode DCSRMPIUpdateScatter(Mat A)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;
  PetscBool    grew = (PetscBool)(d->nghostsf != d->nghost || !d->Mvctx), any;
  IS           is;
  Vec          gvec;

  PetscFunctionBegin;
  PetscCall(MPIU_Allreduce(&grew, &any, 1, GPUKIT_MPI_BOOL, MPI_LOR, PetscObjectComm((PetscObject)A)));
  if (!any) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecDestroy(&d->lvec));
  PetscCall(VecScatterDestroy(&d->Mvctx));
  PetscCall(VecCreate(PETSC_COMM_SELF, &d->lvec));
  PetscCall(VecSetSizes(d->lvec, d->nghost, d->nghost));
  PetscCall(VecSetType(d->lvec, A->defaultvectype ? A->defaultvectype : VECSTANDARD));
  PetscCall(VecCreateMPIWithArray(PetscObjectComm((PetscObject)A), 1, A->cmap->n, A->cmap->N, NULL, &gvec));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, d->nghost, d->garray, PETSC_USE_POINTER, &is));
  PetscCall(VecScatterCreate(gvec, is, d->lvec, NULL, &d->Mvctx));
  PetscCall(ISDestroy(&is));
  PetscCall(VecDestroy(&gvec));
  d->nghostsf = d->nghost;
  PetscCall(PetscInfo(A, "gpukit: MPIDCSR ghost scatter built for %" PetscInt_FMT " ghost columns\n", d->nghost));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Insertion and assembly
   ------------------------------------------------------------------------------------------------------ */

/* work arrays of at least n entries for the split of a row */
static PetscErrorCode DCSRMPIRowBuffers(Mat_MPIDCSR *d, PetscInt n)
{
  PetscFunctionBegin;
  if (n <= d->rowbufsize) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFree2(d->rowcols, d->rowvals));
  d->rowbufsize = PetscMax(n, 2 * d->rowbufsize);
  PetscCall(PetscMalloc2(2 * d->rowbufsize, &d->rowcols, 2 * d->rowbufsize, &d->rowvals));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* entries of local row lr (global columns in range or negative) into the blocks */
static PetscErrorCode DCSRMPISetOwnRow(Mat A, PetscInt lr, PetscInt n, const PetscInt cols[], const PetscScalar vals[], InsertMode mode)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;
  Mat_SeqDCSR *b = (Mat_SeqDCSR *)d->B->data;
  PetscInt     cstart = A->cmap->rstart, cend = A->cmap->rend, nd = 0, no = 0, *dc, *oc;
  PetscScalar *dv, *ov;

  PetscFunctionBegin;
  PetscCall(DCSRMPIRowBuffers(d, n));
  dc = d->rowcols;
  oc = d->rowcols + d->rowbufsize;
  dv = d->rowvals;
  ov = d->rowvals + d->rowbufsize;
  for (PetscInt l = 0; l < n; l++) {
    PetscInt    c = cols[l], g;
    PetscScalar v = vals ? vals[l] : 0.0;
    if (c < 0) continue;
    if (c >= cstart && c < cend) {
      dc[nd]   = c - cstart;
      dv[nd++] = v;
      continue;
    }
    PetscCall(DCSRMPIGhost(d, c, PETSC_FALSE, &g));
    if (g < 0) { /* a new off-process column: the entry is new, honoured as AIJ honours new entries */
      if (b->ignorezero && v == 0.0) continue;
      if (d->nonew == 1) continue;
      PetscCheck(d->nonew != -1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Inserting a new nonzero at global (%" PetscInt_FMT ",%" PetscInt_FMT ") in the matrix, which MAT_NEW_NONZERO_LOCATION_ERR forbids", lr + A->rmap->rstart, c);
      PetscCall(DCSRMPIGhost(d, c, PETSC_TRUE, &g));
    }
    oc[no]   = g;
    ov[no++] = v;
  }
  if (nd) PetscCall((*d->A->ops->setvalues)(d->A, 1, &lr, nd, dc, dv, mode));
  if (no) PetscCall((*d->B->ops->setvalues)(d->B, 1, &lr, no, oc, ov, mode));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DCSRStashPush(DCSRStash *st, PetscInt row, PetscInt col, PetscScalar v)
{
  PetscFunctionBegin;
  if (st->n == st->nalloc) {
    PetscInt    *ij;
    PetscScalar *nv;
    st->nalloc = PetscMax(64, 2 * st->nalloc);
    PetscCall(PetscMalloc2(2 * st->nalloc, &ij, st->nalloc, &nv));
    PetscCall(PetscArraycpy(ij, st->ij, 2 * st->n));
    PetscCall(PetscArraycpy(nv, st->v, st->n));
    PetscCall(PetscFree2(st->ij, st->v));
    st->ij = ij;
    st->v  = nv;
  }
  st->ij[2 * st->n]     = row;
  st->ij[2 * st->n + 1] = col;
  st->v[st->n++]        = v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetValues_MPIDCSR(Mat A, PetscInt m, const PetscInt im[], PetscInt n, const PetscInt in[], const PetscScalar v[], InsertMode mode)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;
  PetscInt     rstart = A->rmap->rstart, rend = A->rmap->rend;
  PetscScalar  buf[64], *col = buf;

  PetscFunctionBegin;
  PetscCheck(!d->assembling, PETSC_COMM_SELF, PETSC_ERR_ORDER, "MatSetValues() was called between MatAssemblyBegin() and MatAssemblyEnd() of this MATDCSR matrix; call MatAssemblyEnd() first");
  for (PetscInt k = 0; k < m; k++) PetscCheck(im[k] < A->rmap->N, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Row %" PetscInt_FMT " is out of range: the matrix has %" PetscInt_FMT " rows (0..%" PetscInt_FMT ")", im[k], A->rmap->N, A->rmap->N - 1);
  for (PetscInt l = 0; l < n; l++) PetscCheck(in[l] < A->cmap->N, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Column %" PetscInt_FMT " is out of range: the matrix has %" PetscInt_FMT " columns (0..%" PetscInt_FMT ")", in[l], A->cmap->N, A->cmap->N - 1);
  if (!A->preallocated) PetscCall(MatSetUp_MPIDCSR(A));
  if (!d->roworiented && n > 64) PetscCall(PetscMalloc1(n, &col));
  for (PetscInt k = 0; k < m; k++) {
    const PetscScalar *rv = NULL;
    if (im[k] < 0) continue;
    if (v) {
      if (d->roworiented) rv = v + (size_t)k * n;
      else {
        for (PetscInt l = 0; l < n; l++) col[l] = v[k + (size_t)l * m];
        rv = col;
      }
    }
    if (im[k] >= rstart && im[k] < rend) PetscCall(DCSRMPISetOwnRow(A, im[k] - rstart, n, in, rv, mode));
    else if (!d->donotstash && !A->nooffprocentries) {
      for (PetscInt l = 0; l < n; l++)
        if (in[l] >= 0) PetscCall(DCSRStashPush(&d->stash, im[k], in[l], rv ? rv[l] : 0.0));
    }
  }
  if (col != buf) PetscCall(PetscFree(col));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGetValues_MPIDCSR(Mat A, PetscInt m, const PetscInt im[], PetscInt n, const PetscInt in[], PetscScalar v[])
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;
  PetscInt     rstart = A->rmap->rstart, cstart = A->cmap->rstart, cend = A->cmap->rend;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < m; k++) {
    PetscInt lr = im[k] - rstart;
    if (im[k] < 0) continue;
    PetscCheck(im[k] >= rstart && im[k] < A->rmap->rend, PETSC_COMM_SELF, PETSC_ERR_SUP, "MatGetValues() of MATMPIDCSR only for local rows (%" PetscInt_FMT "..%" PetscInt_FMT "), got row %" PetscInt_FMT, rstart, A->rmap->rend - 1, im[k]);
    for (PetscInt l = 0; l < n; l++) {
      PetscInt c = in[l], g;
      if (c < 0) continue;
      PetscCheck(c < A->cmap->N, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Column %" PetscInt_FMT " is out of range 0..%" PetscInt_FMT, c, A->cmap->N - 1);
      if (c >= cstart && c < cend) {
        c -= cstart;
        PetscCall(MatGetValues(d->A, 1, &lr, 1, &c, &v[k * n + l]));
      } else {
        PetscCall(DCSRMPIGhost(d, c, PETSC_FALSE, &g));
        if (g < 0) v[k * n + l] = 0.0;
        else PetscCall(MatGetValues(d->B, 1, &lr, 1, &g, &v[k * n + l]));
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAssemblyBegin_MPIDCSR(Mat A, MatAssemblyType type)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  if (!A->preallocated) PetscCall(MatSetUp_MPIDCSR(A));
  d->assembling = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* nonzerostate of the MPI matrix: the sum of its blocks' over all ranks (collective), as MPIAIJ */
static PetscErrorCode DCSRMPIUpdateNonzeroState(Mat A)
{
  Mat_MPIDCSR     *d = (Mat_MPIDCSR *)A->data;
  PetscObjectState st = d->A->nonzerostate + d->B->nonzerostate, gst;

  PetscFunctionBegin;
  PetscCall(MPIU_Allreduce(&st, &gst, 1, MPIU_INT64, MPI_SUM, PetscObjectComm((PetscObject)A)));
  A->nonzerostate = gst;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAssemblyEnd_MPIDCSR(Mat A, MatAssemblyType type)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;
  PetscBool    other = PETSC_FALSE, anyother = PETSC_TRUE;

  PetscFunctionBegin;
  d->assembling = PETSC_FALSE;
  PetscCall(PetscLogEventBegin(MAT_DCSR_Assembly, A, 0, 0, 0));
  if (!d->donotstash && !A->nooffprocentries) {
    InsertMode   mode = A->insertmode, gmode;
    PetscCount   nr;
    PetscInt    *ri;
    PetscScalar *rv;

    other = (PetscBool)(d->stash.n > 0);
    PetscCall(MPIU_Allreduce(&other, &anyother, 1, GPUKIT_MPI_BOOL, MPI_LOR, PetscObjectComm((PetscObject)A)));
    if (anyother) {
      /* ranks that set nothing have NOT_SET_VALUES; the others agree (MatSetValues() checks that) */
      PetscCall(MPIU_Allreduce((int *)&mode, (int *)&gmode, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)A)));
      PetscCall(DCSRExchange(A, d->stash.n, 2, d->stash.ij, 1, d->stash.v, &nr, &ri, &rv));
      d->stash.n = 0;
      for (PetscCount i = 0; i < nr; i++) PetscCall(DCSRMPISetOwnRow(A, ri[2 * i] - A->rmap->rstart, 1, &ri[2 * i + 1], &rv[i], gmode == ADD_VALUES ? ADD_VALUES : INSERT_VALUES));
      PetscCall(PetscFree(ri));
      PetscCall(PetscFree(rv));
    }
  }
  PetscCall(MatAssemblyBegin(d->A, type));
  PetscCall(MatAssemblyEnd(d->A, type));
  PetscCall(MatAssemblyBegin(d->B, type));
  PetscCall(MatAssemblyEnd(d->B, type));
  if (type == MAT_FINAL_ASSEMBLY) {
    PetscCall(DCSRMPIUpdateScatter(A));
    PetscCall(DCSRMPIUpdateNonzeroState(A));
  }
  PetscCall(PetscLogEventEnd(MAT_DCSR_Assembly, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Products
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatMult_MPIDCSR(Mat A, Vec xx, Vec yy)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  PetscCall(VecScatterBegin(d->Mvctx, xx, d->lvec, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall((*d->A->ops->mult)(d->A, xx, yy));
  PetscCall(VecScatterEnd(d->Mvctx, xx, d->lvec, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall((*d->B->ops->multadd)(d->B, d->lvec, yy, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultAdd_MPIDCSR(Mat A, Vec xx, Vec yy, Vec zz)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  PetscCall(VecScatterBegin(d->Mvctx, xx, d->lvec, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall((*d->A->ops->multadd)(d->A, xx, yy, zz));
  PetscCall(VecScatterEnd(d->Mvctx, xx, d->lvec, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall((*d->B->ops->multadd)(d->B, d->lvec, zz, zz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTransposeAdd_MPIDCSR(Mat A, Vec xx, Vec yy, Vec zz)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  PetscCall((*d->B->ops->multtranspose)(d->B, xx, d->lvec));
  if (yy) PetscCall((*d->A->ops->multtransposeadd)(d->A, xx, yy, zz));
  else PetscCall((*d->A->ops->multtranspose)(d->A, xx, zz));
  PetscCall(VecScatterBegin(d->Mvctx, d->lvec, zz, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(d->Mvctx, d->lvec, zz, ADD_VALUES, SCATTER_REVERSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTranspose_MPIDCSR(Mat A, Vec xx, Vec yy)
{
  PetscFunctionBegin;
  PetscCall(MatMultTransposeAdd_MPIDCSR(A, xx, NULL, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Rows, diagonal, values
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatGetRow_MPIDCSR(Mat A, PetscInt row, PetscInt *nz, PetscInt **idx, PetscScalar **v)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;
  PetscInt     lr = row - A->rmap->rstart, na, nb, *ca, *cb, k = 0;
  PetscScalar *va, *vb;

  PetscFunctionBegin;
  PetscCheck(row >= A->rmap->rstart && row < A->rmap->rend, PETSC_COMM_SELF, PETSC_ERR_SUP, "MatGetRow() only for local rows (%" PetscInt_FMT "..%" PetscInt_FMT "), got %" PetscInt_FMT, A->rmap->rstart, A->rmap->rend - 1, row);
  PetscCheck(!d->getrowactive, PETSC_COMM_SELF, PETSC_ERR_ORDER, "Call MatRestoreRow() before the next MatGetRow()");
  d->getrowactive = PETSC_TRUE;
  PetscCall((*d->A->ops->getrow)(d->A, lr, &na, &ca, &va));
  PetscCall((*d->B->ops->getrow)(d->B, lr, &nb, &cb, &vb));
  PetscCall(DCSRMPIRowBuffers(d, na + nb)); /* the blocks' rows stay valid: they live in the blocks */
  for (PetscInt i = 0; i < na; i++, k++) {
    d->rowcols[k] = ca[i] + A->cmap->rstart;
    d->rowvals[k] = va[i];
  }
  for (PetscInt i = 0; i < nb; i++, k++) {
    d->rowcols[k] = d->garray[cb[i]];
    d->rowvals[k] = vb[i];
  }
  if (nb) PetscCall(PetscSortIntWithScalarArray(k, d->rowcols, d->rowvals));
  if (nz) *nz = k;
  if (idx) *idx = d->rowcols;
  if (v) *v = d->rowvals;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatRestoreRow_MPIDCSR(Mat A, PetscInt row, PetscInt *nz, PetscInt **idx, PetscScalar **v)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  d->getrowactive = PETSC_FALSE;
  if (idx) *idx = NULL;
  if (v) *v = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGetDiagonal_MPIDCSR(Mat A, Vec v)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  PetscCheck(A->rmap->rstart == A->cmap->rstart && A->rmap->rend == A->cmap->rend, PETSC_COMM_SELF, PETSC_ERR_SUP, "MatGetDiagonal() of MATMPIDCSR needs the same row and column ownership");
  PetscCall((*d->A->ops->getdiagonal)(d->A, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGetDiagonalBlock_MPIDCSR(Mat A, Mat *a)
{
  PetscFunctionBegin;
  *a = ((Mat_MPIDCSR *)A->data)->A;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatScale_MPIDCSR(Mat A, PetscScalar alpha)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  PetscCall(MatScale(d->A, alpha));
  PetscCall(MatScale(d->B, alpha));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatShift_MPIDCSR(Mat A, PetscScalar alpha)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  PetscCheck(A->rmap->rstart == A->cmap->rstart && A->rmap->rend == A->cmap->rend, PETSC_COMM_SELF, PETSC_ERR_SUP, "MatShift() of MATMPIDCSR needs the same row and column ownership");
  PetscCall(MatShift(d->A, alpha));
  PetscCall(DCSRMPIUpdateNonzeroState(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDiagonalScale_MPIDCSR(Mat A, Vec ll, Vec rr)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  if (rr) {
    PetscCall(VecScatterBegin(d->Mvctx, rr, d->lvec, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(d->Mvctx, rr, d->lvec, INSERT_VALUES, SCATTER_FORWARD));
  }
  PetscCall((*d->A->ops->diagonalscale)(d->A, ll, rr));
  PetscCall((*d->B->ops->diagonalscale)(d->B, ll, rr ? d->lvec : NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatZeroEntries_MPIDCSR(Mat A)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  if (!d->A) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatZeroEntries(d->A));
  PetscCall(MatZeroEntries(d->B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatZeroRows_MPIDCSR(Mat A, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;
  PetscCount   nr;
  PetscInt    *ri, nl;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < n; i++) PetscCheck(rows[i] >= 0 && rows[i] < A->rmap->N, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Row %" PetscInt_FMT " to zero is outside the matrix (0..%" PetscInt_FMT ")", rows[i], A->rmap->N - 1);
  PetscCall(DCSRExchange(A, n, 1, rows, 0, NULL, &nr, &ri, NULL));
  for (PetscCount i = 0; i < nr; i++) ri[i] -= A->rmap->rstart;
  nl = (PetscInt)nr;
  PetscCall(PetscSortRemoveDupsInt(&nl, ri));
  if (diag != 0.0) PetscCheck(A->rmap->rstart == A->cmap->rstart && A->rmap->rend == A->cmap->rend, PETSC_COMM_SELF, PETSC_ERR_SUP, "MatZeroRows() with a nonzero diagonal needs the same row and column ownership");
  PetscCall(MatZeroRows_SeqDCSR_Local(d->A, nl, ri, diag, x, b));
  PetscCall(MatZeroRows_SeqDCSR_Local(d->B, nl, ri, 0.0, NULL, NULL));
  PetscCall(PetscFree(ri));
  PetscCall(DCSRMPIUpdateNonzeroState(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* zero rows and columns (global rows given on any rank): columns are marked through the ghost scatter */
static PetscErrorCode MatZeroRowsColumns_MPIDCSR(Mat A, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b)
{
  Mat_MPIDCSR       *d = (Mat_MPIDCSR *)A->data;
  Mat_SeqDCSR       *a = (Mat_SeqDCSR *)d->A->data, *o = (Mat_SeqDCSR *)d->B->data;
  PetscCount         nr;
  PetscInt          *ri, nl;
  Vec                mask, lmask, lx = NULL;
  PetscScalar       *mk;
  const PetscScalar *lm, *xx = NULL, *lxx = NULL;

  PetscFunctionBegin;
  PetscCheck(A->rmap->rstart == A->cmap->rstart && A->rmap->rend == A->cmap->rend, PETSC_COMM_SELF, PETSC_ERR_SUP, "MatZeroRowsColumns() of MATMPIDCSR needs the same row and column ownership");
  for (PetscInt i = 0; i < n; i++) PetscCheck(rows[i] >= 0 && rows[i] < A->rmap->N, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Row %" PetscInt_FMT " to zero is outside the matrix (0..%" PetscInt_FMT ")", rows[i], A->rmap->N - 1);
  PetscCall(DCSRExchange(A, n, 1, rows, 0, NULL, &nr, &ri, NULL));
  for (PetscCount i = 0; i < nr; i++) ri[i] -= A->rmap->rstart;
  nl = (PetscInt)nr;
  PetscCall(PetscSortRemoveDupsInt(&nl, ri));
  PetscCall(MatCreateVecs(A, &mask, NULL));
  PetscCall(VecSet(mask, 0.0));
  PetscCall(VecGetArray(mask, &mk));
  for (PetscInt i = 0; i < nl; i++) mk[ri[i]] = 1.0;
  PetscCall(VecRestoreArray(mask, &mk));
  PetscCall(VecDuplicate(d->lvec, &lmask));
  PetscCall(VecScatterBegin(d->Mvctx, mask, lmask, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(d->Mvctx, mask, lmask, INSERT_VALUES, SCATTER_FORWARD));
  if (x && b) {
    PetscCall(VecDuplicate(d->lvec, &lx));
    PetscCall(VecScatterBegin(d->Mvctx, x, lx, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(d->Mvctx, x, lx, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecGetArrayRead(x, &xx));
    PetscCall(VecGetArrayRead(lx, &lxx));
  }
  PetscCall(DCSRHostAccess(d->A, PETSC_TRUE));
  PetscCall(DCSRHostAccess(d->B, PETSC_TRUE));
  PetscCall(VecGetArrayRead(mask, (const PetscScalar **)&mk));
  PetscCall(VecGetArrayRead(lmask, &lm));
  {
    PetscScalar *bb = NULL;
    if (x && b) PetscCall(VecGetArray(b, &bb));
    for (PetscInt r = 0; r < a->m; r++) {
      PetscBool zr = (PetscBool)(mk[r] != 0.0);
      for (PetscInt blk = 0; blk < 2; blk++) {
        Mat_SeqDCSR       *s  = blk ? o : a;
        const PetscScalar *cm = blk ? lm : mk, *cx = blk ? lxx : xx;
        for (PetscInt sg = 0; sg < s->nseg[r]; sg++) {
          PetscCount st = s->segstart[r * s->K + sg];
          for (PetscInt k = 0; k < s->seglen[r * s->K + sg]; k++) {
            PetscInt c = s->colidx[st + k];
            if (cm[c] != 0.0) {
              if (bb && !zr) bb[r] -= s->values[st + k] * cx[c];
              s->values[st + k] = 0.0;
            } else if (zr) s->values[st + k] = 0.0;
          }
        }
      }
    }
    if (bb) {
      for (PetscInt i = 0; i < nl; i++) bb[ri[i]] = diag * xx[ri[i]];
      PetscCall(VecRestoreArray(b, &bb));
    }
  }
  PetscCall(VecRestoreArrayRead(lmask, &lm));
  PetscCall(VecRestoreArrayRead(mask, (const PetscScalar **)&mk));
  if (x && b) {
    PetscCall(VecRestoreArrayRead(lx, &lxx));
    PetscCall(VecRestoreArrayRead(x, &xx));
  }
  if (diag != 0.0) {
    PetscInt nonew = a->nonew;
    a->nonew       = 0;
    for (PetscInt i = 0; i < nl; i++) PetscCall(DCSRInsertRow_Private(d->A, ri[i], 1, &ri[i], &diag, INSERT_VALUES));
    a->nonew = nonew;
    PetscCall(MatAssemblyBegin(d->A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(d->A, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(VecDestroy(&mask));
  PetscCall(VecDestroy(&lmask));
  PetscCall(VecDestroy(&lx));
  PetscCall(PetscFree(ri));
  PetscCall(DCSRMPIUpdateNonzeroState(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatNorm_MPIDCSR(Mat A, NormType type, PetscReal *nrm)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)d->A->data, *b = (Mat_SeqDCSR *)d->B->data;
  MPI_Comm     comm = PetscObjectComm((PetscObject)A);

  PetscFunctionBegin;
  PetscCall(DCSRHostAccess(d->A, PETSC_FALSE));
  PetscCall(DCSRHostAccess(d->B, PETSC_FALSE));
  if (type == NORM_FROBENIUS) {
    PetscReal na, nb, s;
    PetscCall(MatNorm(d->A, NORM_FROBENIUS, &na));
    PetscCall(MatNorm(d->B, NORM_FROBENIUS, &nb));
    s = na * na + nb * nb;
    PetscCall(MPIU_Allreduce(&s, nrm, 1, MPIU_REAL, MPIU_SUM, comm));
    *nrm = PetscSqrtReal(*nrm);
  } else if (type == NORM_INFINITY) {
    PetscReal mx = 0.0;
    for (PetscInt r = 0; r < a->m; r++) {
      PetscReal sum = 0.0;
      for (PetscInt blk = 0; blk < 2; blk++) {
        Mat_SeqDCSR *s = blk ? b : a;
        for (PetscInt sg = 0; sg < s->nseg[r]; sg++) {
          PetscCount st = s->segstart[r * s->K + sg];
          for (PetscInt k = 0; k < s->seglen[r * s->K + sg]; k++) sum += PetscAbsScalar(s->values[st + k]);
        }
      }
      if (sum > mx) mx = sum;
    }
    PetscCall(MPIU_Allreduce(&mx, nrm, 1, MPIU_REAL, MPIU_MAX, comm));
  } else if (type == NORM_1) {
    PetscReal *cs, *gcs;
    PetscInt   N = A->cmap->N;
    PetscCall(PetscCalloc2(N + 1, &cs, N + 1, &gcs));
    for (PetscInt r = 0; r < a->m; r++) {
      for (PetscInt blk = 0; blk < 2; blk++) {
        Mat_SeqDCSR *s = blk ? b : a;
        for (PetscInt sg = 0; sg < s->nseg[r]; sg++) {
          PetscCount st = s->segstart[r * s->K + sg];
          for (PetscInt k = 0; k < s->seglen[r * s->K + sg]; k++) {
            PetscInt c = s->colidx[st + k];
            cs[blk ? d->garray[c] : c + A->cmap->rstart] += PetscAbsScalar(s->values[st + k]);
          }
        }
      }
    }
    PetscCall(MPIU_Allreduce(cs, gcs, (PetscMPIInt)N, MPIU_REAL, MPIU_SUM, comm));
    *nrm = 0.0;
    for (PetscInt c = 0; c < N; c++)
      if (gcs[c] > *nrm) *nrm = gcs[c];
    PetscCall(PetscFree2(cs, gcs));
  } else SETERRQ(comm, PETSC_ERR_SUP, "MATDCSR has no norm of type %s; use NORM_1, NORM_FROBENIUS or NORM_INFINITY", NormTypes[type]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Copies, conversions
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatDuplicate_MPIDCSR(Mat A, MatDuplicateOption op, Mat *M)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data, *e;

  PetscFunctionBegin;
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), M));
  PetscCall(MatSetSizes(*M, A->rmap->n, A->cmap->n, A->rmap->N, A->cmap->N));
  PetscCall(MatSetBlockSizesFromMats(*M, A, A)); /* the block size (PBJacobi, ML, forwarded ops read it) */
  PetscCall(MatSetType(*M, ((PetscObject)A)->type_name));
  PetscCall(PetscLayoutSetUp((*M)->rmap));
  PetscCall(PetscLayoutSetUp((*M)->cmap));
  e              = (Mat_MPIDCSR *)(*M)->data;
  e->nonew       = d->nonew;
  e->roworiented = d->roworiented;
  e->donotstash  = d->donotstash;
  PetscCall(DCSRDuplicateMaps(A, *M));
  if (d->A) {
    PetscCall(MatDestroy(&e->A));
    PetscCall(MatDestroy(&e->B));
    PetscCall(MatDuplicate(d->A, op, &e->A));
    PetscCall(MatDuplicate(d->B, op, &e->B));
    PetscCall(PetscMalloc1(PetscMax(d->nghost, 1), &e->garray));
    PetscCall(PetscArraycpy(e->garray, d->garray, d->nghost));
    e->ghostalloc = PetscMax(d->nghost, 1);
    e->nghost     = d->nghost;
    for (PetscInt g = 0; g < d->nghost; g++) PetscCall(PetscHMapISet(DCSRColmap(e), d->garray[g], g));
    if (d->Mvctx) {
      PetscCall(VecDuplicate(d->lvec, &e->lvec));
      PetscCall(PetscObjectReference((PetscObject)d->Mvctx));
      e->Mvctx    = d->Mvctx;
      e->nghostsf = d->nghostsf;
    }
    (*M)->preallocated = A->preallocated;
    (*M)->assembled    = A->assembled;
    (*M)->nonzerostate = A->nonzerostate;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCopy_MPIDCSR(Mat A, Mat B, MatStructure str)
{
  PetscFunctionBegin;
  PetscCall(MatCopy_DCSR_Generic(A, B, str));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAXPY_MPIDCSR(Mat Y, PetscScalar alpha, Mat X, MatStructure str)
{
  Mat_MPIDCSR *y     = (Mat_MPIDCSR *)Y->data;
  PetscInt     nonew = y->nonew;

  PetscFunctionBegin;
  y->nonew = 0; /* Y gets X's pattern too, as AIJ's MatAXPY() */
  PetscCall(DCSRMPIApplyOptions(Y));
  PetscCall(MatAXPY_DCSR_Generic(Y, alpha, X, str));
  y->nonew = nonew;
  PetscCall(DCSRMPIApplyOptions(Y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* per-row diagonal/off-diagonal counts of any matrix with A's layouts */
static PetscErrorCode DCSRRowCounts(Mat S, PetscInt **dnnz, PetscInt **onnz)
{
  PetscInt rstart, rend, cstart, cend;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(S, &rstart, &rend));
  PetscCall(MatGetOwnershipRangeColumn(S, &cstart, &cend));
  PetscCall(PetscCalloc2(rend - rstart + 1, dnnz, rend - rstart + 1, onnz));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt        nc;
    const PetscInt *cols;
    PetscCall(MatGetRow(S, r, &nc, &cols, NULL));
    for (PetscInt k = 0; k < nc; k++) {
      if (cols[k] >= cstart && cols[k] < cend) (*dnnz)[r - rstart]++;
      else (*onnz)[r - rstart]++;
    }
    PetscCall(MatRestoreRow(S, r, &nc, &cols, NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* rows of S into the (preallocated) matrix M with INSERT_VALUES, then assembly */
static PetscErrorCode DCSRCopyRows(Mat S, Mat M)
{
  PetscInt rstart, rend;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(S, &rstart, &rend));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscCall(MatGetRow(S, r, &nc, &cols, &vals));
    PetscCall(MatSetValues(M, 1, &r, nc, cols, vals, INSERT_VALUES));
    PetscCall(MatRestoreRow(S, r, &nc, &cols, &vals));
  }
  PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatConvert_MPIDCSR_MPIAIJ(Mat A, MatType newtype, MatReuse reuse, Mat *B)
{
  Mat       C;
  PetscInt *dnnz, *onnz;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) C = *B;
  else {
    PetscCall(MatCreate(PetscObjectComm((PetscObject)A), &C));
    PetscCall(MatSetSizes(C, A->rmap->n, A->cmap->n, A->rmap->N, A->cmap->N));
    PetscCall(MatSetBlockSizesFromMats(C, A, A)); /* the block size (PBJacobi, ML, forwarded ops read it) */
    PetscCall(MatSetType(C, MATMPIAIJ));
  }
  PetscCall(DCSRRowCounts(A, &dnnz, &onnz));
  PetscCall(MatMPIAIJSetPreallocation(C, 0, dnnz, 0, onnz));
  PetscCall(PetscFree2(dnnz, onnz));
  PetscCall(DCSRCopyRows(A, C));
  if (reuse == MAT_INPLACE_MATRIX) PetscCall(MatHeaderReplace(A, &C));
  else *B = C;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DCSRMPIFillFrom(Mat S, Mat C)
{
  PetscInt *dnnz, *onnz;

  PetscFunctionBegin;
  PetscCall(DCSRRowCounts(S, &dnnz, &onnz));
  PetscCall(MatMPIAIJSetPreallocation(C, 0, dnnz, 0, onnz));
  PetscCall(PetscFree2(dnnz, onnz));
  PetscCall(DCSRCopyRows(S, C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_MPIAIJ_MPIDCSR(Mat A, MatType newtype, MatReuse reuse, Mat *B)
{
  Mat C;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) C = *B;
  else {
    PetscCall(MatCreate(PetscObjectComm((PetscObject)A), &C));
    PetscCall(MatSetSizes(C, A->rmap->n, A->cmap->n, A->rmap->N, A->cmap->N));
    PetscCall(MatSetBlockSizesFromMats(C, A, A)); /* the block size (PBJacobi, ML, forwarded ops read it) */
    PetscCall(MatSetType(C, MATMPIDCSR));
  }
  PetscCall(DCSRMPIFillFrom(A, C));
  if (reuse == MAT_INPLACE_MATRIX) PetscCall(MatHeaderReplace(A, &C));
  else *B = C;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the forwarder's callback: an MPIAIJ copy owned by A, values refreshed when A changed, rebuilt when its pattern did */
PetscErrorCode MatMPIDCSRGetAIJ_Private(Mat A, Mat *aij)
{
  Mat_MPIDCSR     *d = (Mat_MPIDCSR *)A->data;
  PetscObjectState st;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &st));
  if (d->aij && d->aijstate == st) {
    *aij = d->aij;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (d->aij && d->aijnzstate == A->nonzerostate) PetscCall(DCSRCopyRows(A, d->aij));
  else {
    PetscCall(MatDestroy(&d->aij));
    PetscCall(MatConvert_MPIDCSR_MPIAIJ(A, MATMPIAIJ, MAT_INITIAL_MATRIX, &d->aij));
  }
  d->aijstate   = st;
  d->aijnzstate = A->nonzerostate;
  *aij          = d->aij;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Information, viewing, options, destruction
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatGetInfo_MPIDCSR(Mat A, MatInfoType flag, MatInfo *info)
{
  Mat_MPIDCSR   *d = (Mat_MPIDCSR *)A->data;
  MatInfo        ia, ib;
  PetscLogDouble isend[5], irecv[5];

  PetscFunctionBegin;
  PetscCall(MatGetInfo(d->A, MAT_LOCAL, &ia));
  PetscCall(MatGetInfo(d->B, MAT_LOCAL, &ib));
  isend[0] = ia.nz_used + ib.nz_used;
  isend[1] = ia.nz_allocated + ib.nz_allocated;
  isend[2] = ia.nz_unneeded + ib.nz_unneeded;
  isend[3] = ia.memory + ib.memory;
  isend[4] = ia.mallocs + ib.mallocs;
  if (flag == MAT_LOCAL) PetscCall(PetscArraycpy(irecv, isend, 5));
  else if (flag == MAT_GLOBAL_MAX) PetscCall(MPIU_Allreduce(isend, irecv, 5, MPIU_PETSCLOGDOUBLE, MPI_MAX, PetscObjectComm((PetscObject)A)));
  else PetscCall(MPIU_Allreduce(isend, irecv, 5, MPIU_PETSCLOGDOUBLE, MPI_SUM, PetscObjectComm((PetscObject)A)));
  PetscCall(PetscMemzero(info, sizeof(*info)));
  info->block_size   = 1.0;
  info->nz_used      = irecv[0];
  info->nz_allocated = irecv[1];
  info->nz_unneeded  = irecv[2];
  info->memory       = irecv[3];
  info->mallocs      = irecv[4];
  info->assemblies   = (PetscLogDouble)A->num_ass;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatView_MPIDCSR(Mat A, PetscViewer viewer)
{
  Mat_MPIDCSR      *d = (Mat_MPIDCSR *)A->data;
  PetscBool         ascii;
  PetscViewerFormat format;
  Mat               aij;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (ascii) {
    PetscCall(PetscViewerGetFormat(viewer, &format));
    if (format == PETSC_VIEWER_ASCII_INFO || format == PETSC_VIEWER_ASCII_INFO_DETAIL) {
      Mat blk[2] = {d->A, d->B};
      if (!d->A) PetscFunctionReturn(PETSC_SUCCESS);
      PetscCall(DCSRViewInfo_Private(A, 2, blk, viewer));
      if (format == PETSC_VIEWER_ASCII_INFO_DETAIL) {
        PetscMPIInt rank;
        PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)A), &rank));
        PetscCall(PetscViewerASCIIPushSynchronized(viewer));
        PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "[%d] ghost columns %" PetscInt_FMT "\n", rank, d->nghost));
        PetscCall(PetscViewerFlush(viewer));
        PetscCall(PetscViewerASCIIPopSynchronized(viewer));
      }
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  PetscCall(MatMPIDCSRGetAIJ_Private(A, &aij));
  PetscCall((*aij->ops->view)(aij, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetFromOptions_MPIDCSR(Mat A, GpukitOptionItems PetscOptionsObject)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  if (!d->A && A->rmap->n < 0 && A->rmap->N < 0) { /* MatSetFromOptions() before MatSetSizes()/MatLoad(): later */
    d->deferopts = PETSC_TRUE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(DCSRMPICreateBlocks(A));
  {
    Mat blk[2] = {d->A, d->B};
    (void)PetscOptionsObject;
    PetscCall(DCSRSetFromOptions_Private(A, 2, blk));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetOption_MPIDCSR(Mat A, MatOption op, PetscBool flg)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  switch (op) {
  case MAT_ROW_ORIENTED:
    d->roworiented = flg;
    break;
  case MAT_NEW_NONZERO_LOCATIONS:
    d->nonew = flg ? 0 : 1;
    break;
  case MAT_NEW_NONZERO_LOCATION_ERR:
    d->nonew = flg ? -1 : 0;
    break;
  case MAT_NEW_NONZERO_ALLOCATION_ERR: /* as AIJ: replaces the two above; a DCSR matrix never allocates for a new nonzero */
    d->nonew = 0;
    break;
  case MAT_IGNORE_OFF_PROC_ENTRIES:
    d->donotstash = flg;
    break;
  case MAT_IGNORE_ZERO_ENTRIES:
  case MAT_KEEP_NONZERO_PATTERN:
    PetscCall(DCSRMPICreateBlocks(A));
    PetscCall(DCSRSetOption_Private(d->A, op, flg));
    PetscCall(DCSRSetOption_Private(d->B, op, flg));
    break;
  default:
    PetscCall(PetscInfo(A, "gpukit: option %s ignored by MATMPIDCSR\n", MatOptions[op]));
    break;
  }
  if (d->A) PetscCall(DCSRMPIApplyOptions(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatLoad_MPIDCSR(Mat A, PetscViewer viewer)
{
  Mat S;

  PetscFunctionBegin;
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), &S));
  PetscCall(MatSetType(S, MATMPIAIJ));
  PetscCall(MatLoad(S, viewer));
  if (A->rmap->n < 0 || A->cmap->n < 0) PetscCall(MatSetSizes(A, S->rmap->n, S->cmap->n, S->rmap->N, S->cmap->N));
  PetscCall(DCSRMPIFillFrom(S, A));
  PetscCall(MatDestroy(&S));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_MPIDCSR(Mat A)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  PetscCall(MatDestroy(&d->A));
  PetscCall(MatDestroy(&d->B));
  PetscCall(MatDestroy(&d->aij));
  PetscCall(PetscFree(d->garray));
  if (d->colmap) {
    PetscHMapI cm = DCSRColmap(d);
    PetscCall(PetscHMapIDestroy(&cm));
  }
  PetscCall(VecDestroy(&d->lvec));
  PetscCall(VecScatterDestroy(&d->Mvctx));
  PetscCall(PetscFree2(d->stash.ij, d->stash.v));
  PetscCall(PetscFree2(d->rowcols, d->rowvals));
  PetscCall(PetscFree(d->blocktype));
  PetscCall(PetscFree(A->data));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMPIAIJSetPreallocation_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpidcsr_mpiaij_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpidcsr_aij_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpiaij_mpidcsr_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpiaij_dcsr_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatDCSRDefragment_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatDCSRGetInfo_C", NULL));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDCSRDefragment_MPIDCSR(Mat A)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  if (!d->A) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatDCSRDefragment(d->A));
  PetscCall(MatDCSRDefragment(d->B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDCSRGetInfo_MPIDCSR(Mat A, PetscInt *K, PetscInt *maxseg, PetscCount *used, PetscCount *cap)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;
  PetscInt     k = 4, ma = 0, mb = 0, mx;
  PetscCount   ua = 0, ub = 0, ca = 0, cb = 0;
  PetscInt64   loc[2], glob[2];
  MPI_Comm     comm = PetscObjectComm((PetscObject)A);

  PetscFunctionBegin;
  if (d->A) {
    PetscCall(MatDCSRGetInfo(d->A, &k, &ma, &ua, &ca));
    PetscCall(MatDCSRGetInfo(d->B, NULL, &mb, &ub, &cb));
  }
  mx = PetscMax(ma, mb);
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &mx, 1, MPIU_INT, MPI_MAX, comm));
  loc[0] = (PetscInt64)(ua + ub);
  loc[1] = (PetscInt64)(ca + cb);
  PetscCall(MPIU_Allreduce(loc, glob, 2, MPIU_INT64, MPI_SUM, comm));
  if (K) *K = k;
  if (maxseg) *maxseg = mx;
  if (used) *used = (PetscCount)glob[0];
  if (cap) *cap = (PetscCount)glob[1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The MPI type with blocks of blocktype; sets the ops and the type name MATMPIDCSR (the CUDA twin renames) */
PetscErrorCode MatCreate_MPIDCSR_Private(Mat A, MatType blocktype)
{
  Mat_MPIDCSR *d;
  PetscHMapI   cm;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  A->data = (void *)d;
  PetscCall(PetscStrallocpy(blocktype, &d->blocktype));
  PetscCall(PetscHMapICreate(&cm));
  d->colmap      = (void *)cm;
  d->roworiented = PETSC_TRUE;
  d->nghostsf    = -1;

  A->ops->setvalues          = MatSetValues_MPIDCSR;
  A->ops->getvalues          = MatGetValues_MPIDCSR;
  A->ops->assemblybegin      = MatAssemblyBegin_MPIDCSR;
  A->ops->assemblyend        = MatAssemblyEnd_MPIDCSR;
  A->ops->mult               = MatMult_MPIDCSR;
  A->ops->multadd            = MatMultAdd_MPIDCSR;
  A->ops->multtranspose      = MatMultTranspose_MPIDCSR;
  A->ops->multtransposeadd   = MatMultTransposeAdd_MPIDCSR;
  A->ops->getrow             = MatGetRow_MPIDCSR;
  A->ops->restorerow         = MatRestoreRow_MPIDCSR;
  A->ops->getdiagonal        = MatGetDiagonal_MPIDCSR;
  A->ops->getdiagonalblock   = MatGetDiagonalBlock_MPIDCSR;
  A->ops->scale              = MatScale_MPIDCSR;
  A->ops->shift              = MatShift_MPIDCSR;
  A->ops->diagonalscale      = MatDiagonalScale_MPIDCSR;
  A->ops->zeroentries        = MatZeroEntries_MPIDCSR;
  A->ops->zerorows           = MatZeroRows_MPIDCSR;
  A->ops->zerorowscolumns    = MatZeroRowsColumns_MPIDCSR;
  A->ops->norm               = MatNorm_MPIDCSR;
  A->ops->duplicate          = MatDuplicate_MPIDCSR;
  A->ops->copy               = MatCopy_MPIDCSR;
  A->ops->axpy               = MatAXPY_MPIDCSR;
  A->ops->getinfo            = MatGetInfo_MPIDCSR;
  A->ops->view               = MatView_MPIDCSR;
  A->ops->setfromoptions     = MatSetFromOptions_MPIDCSR;
  A->ops->destroy            = MatDestroy_MPIDCSR;
  A->ops->load               = MatLoad_MPIDCSR;
  A->ops->setup              = MatSetUp_MPIDCSR;
  A->ops->setoption          = MatSetOption_MPIDCSR;
  A->ops->fdcoloringcreate   = MatFDColoringCreate_DCSR;
  A->ops->fdcoloringsetup    = MatFDColoringSetUp_DCSR;
  A->ops->fdcoloringapply    = MatFDColoringApply_DCSR;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMPIAIJSetPreallocation_C", MatMPIAIJSetPreallocation_MPIDCSR));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpidcsr_mpiaij_C", MatConvert_MPIDCSR_MPIAIJ));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpidcsr_aij_C", MatConvert_MPIDCSR_MPIAIJ));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpiaij_mpidcsr_C", MatConvert_MPIAIJ_MPIDCSR));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpiaij_dcsr_C", MatConvert_MPIAIJ_MPIDCSR));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatDCSRDefragment_C", MatDCSRDefragment_MPIDCSR));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatDCSRGetInfo_C", MatDCSRGetInfo_MPIDCSR));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATMPIDCSR));
#if !defined(GPUKIT_WITHOUT_AIJFWD)
  PetscCall(GpukitMatAIJForwardInstall(A, MatMPIDCSRGetAIJ_Private));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATMPIDCSR - "mpidcsr" - `MATDCSR` on several processes: a `MATSEQDCSR` diagonal block and an off-diagonal
   block whose columns index an append-only ghost map, so new off-process columns never rebuild the matrix

   Level: intermediate

.seealso: `MATDCSR`, `MATSEQDCSR`, `MatDCSRDefragment()`, `MatDCSRGetInfo()`
M*/
PetscErrorCode MatCreate_MPIDCSR(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatCreate_MPIDCSR_Private(A, MATSEQDCSR));
  PetscCall(PetscInfo(A, "gpukit: created a %s matrix\n", MATMPIDCSR));
  PetscFunctionReturn(PETSC_SUCCESS);
}
