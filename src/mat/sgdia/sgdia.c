/*
   MATSGDIA: structured-grid diagonal storage for DMDA stencil operators (host implementation, Seq and MPI).

   One implementation serves MATSEQSGDIA and MATMPISGDIA: every rank stores the rows of its own grid
   points, and the neighbours of a point are addressed through constant offsets into the DMDA's ghosted
   local vector. The MPI-only pieces (stash exchange, rows sent to their owners) are in mpisgdia.c; every
   read-only operation not implemented here (SOR, factorizations, sub-matrices, overlap, products, graph, symmetry
   tests, ...) runs on an AIJ copy through the AIJ forwarder (gpukitaijfwd.h), the copy made in sgdiaaij.c;
   the finite-difference colouring in sgdiafd.c.
*/
#include "sgdiaimpl.h"
#include "sgdiampk.h" /* -mat_sgdia_mpk_ghost_region */
#include "../utils/gpukitdmda.h"
#include "../utils/gpukitaijfwd.h"

/* ------------------------------------------------------------------------------------------------------
   Grid <-> index helpers
   ------------------------------------------------------------------------------------------------------ */

/* global PETSc row/column index -> grid coordinates and component */
static inline void SGDIAIndexToGrid(const Mat_SGDIA *sg, const PetscInt *range, PetscInt idx, PetscInt g[3], PetscInt *c)
{
  PetscInt r[3], q, xm, ym, rank, lo = 0, hi = sg->nranks[0] * sg->nranks[1] * sg->nranks[2] - 1;

  while (lo < hi) { /* owning rank from the row layout */
    PetscInt mid = (lo + hi + 1) / 2;
    if (range[mid] <= idx) lo = mid;
    else hi = mid - 1;
  }
  rank = lo;
  r[0] = rank % sg->nranks[0];
  r[1] = (rank / sg->nranks[0]) % sg->nranks[1];
  r[2] = rank / (sg->nranks[0] * sg->nranks[1]);
  xm   = sg->rstart[0][r[0] + 1] - sg->rstart[0][r[0]];
  ym   = sg->rstart[1][r[1] + 1] - sg->rstart[1][r[1]];
  q    = idx - range[rank];
  *c   = q % sg->dof;
  q /= sg->dof;
  g[0] = sg->rstart[0][r[0]] + q % xm;
  g[1] = sg->rstart[1][r[1]] + (q / xm) % ym;
  g[2] = sg->rstart[2][r[2]] + q / (xm * ym);
}

/* grid coordinates (inside the domain) and component -> global PETSc index */
static inline PetscInt SGDIAGridToIndex(const Mat_SGDIA *sg, const PetscInt *range, const PetscInt g[3], PetscInt c)
{
  PetscInt r[3], l[3], n[3], rank;

  for (PetscInt d = 0; d < 3; d++) {
    r[d] = SGDIAOwnerInDim(sg, d, g[d]);
    l[d] = g[d] - sg->rstart[d][r[d]];
    n[d] = sg->rstart[d][r[d] + 1] - sg->rstart[d][r[d]];
  }
  rank = r[0] + sg->nranks[0] * (r[1] + sg->nranks[1] * r[2]);
  return range[rank] + sg->dof * (l[0] + n[0] * (l[1] + n[1] * l[2])) + c;
}

/* ------------------------------------------------------------------------------------------------------
   Set-up from the DMDA
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode SGDIAFreeStorage_Private(Mat_SGDIA *sg)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(sg->v));
  PetscCall(PetscFree3(sg->delta, sg->goff, sg->ooff));
  PetscCall(PetscFree(sg->sindex));
  for (PetscInt d = 0; d < 3; d++) PetscCall(PetscFree(sg->rstart[d]));
  PetscCall(PetscFree(sg->ibdiag));
  PetscCall(PetscFree(sg->colorl));
  PetscCall(PetscFree2(sg->rowcols, sg->rowvals));
  PetscCall(PetscFree(sg->aijord.ptr));
  PetscCall(PetscFree(sg->aijord.list));
  PetscCall(PetscMemzero(&sg->aijord, sizeof(sg->aijord)));
  PetscCall(PetscFree2(sg->stash.ij, sg->stash.v));
  sg->stash.n = sg->stash.nalloc = 0;
  PetscCall(VecDestroy(&sg->xl));
  PetscCall(VecDestroy(&sg->yl));
  PetscCall(MatDestroy(&sg->aij));
  PetscCall(SGDIAMPKDestroy_Private(&sg->mpk));
  PetscCall(DMDestroy(&sg->da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGDIASetUpFromDM_Private(Mat A, DM da)
{
  Mat_SGDIA             *sg = (Mat_SGDIA *)A->data;
  PetscBool              isda;
  PetscInt               dim, M, N, P, pm, pn, pp, dof, sw, w, s, nloc, l[3];
  DMBoundaryType         bx, by, bz;
  DMDAStencilType        st;
  const PetscInt        *lx[3];
  ISLocalToGlobalMapping ltog;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)da, DMDA, &isda));
  PetscCheck(isda, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "MATSGDIA stores DMDA stencil operators, but the DM attached to this matrix is of type %s; use MATAIJ for it", ((PetscObject)da)->type_name);
  PetscCall(DMDAGetInfo(da, &dim, &M, &N, &P, &pm, &pn, &pp, &dof, &sw, &bx, &by, &bz, &st));
  PetscCheck(sw <= GPUKIT_SGDIA_MAX_WIDTH, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "MATSGDIA supports stencil widths 0..%d, the DMDA has %" PetscInt_FMT "; use MATAIJ", GPUKIT_SGDIA_MAX_WIDTH, sw);
  PetscCall(SGDIAFreeStorage_Private(sg));
  PetscCall(PetscObjectReference((PetscObject)da));
  sg->da    = da;
  sg->dim   = dim;
  sg->dof   = dof;
  sg->sw    = sw;
  sg->stype = st;
  sg->bd[0] = bx;
  sg->bd[1] = dim > 1 ? by : DM_BOUNDARY_NONE;
  sg->bd[2] = dim > 2 ? bz : DM_BOUNDARY_NONE;
  sg->M[0]  = M;
  sg->M[1]  = dim > 1 ? N : 1;
  sg->M[2]  = dim > 2 ? P : 1;
  PetscCall(DMDAGetCorners(da, &sg->xs[0], &sg->xs[1], &sg->xs[2], &sg->xm[0], &sg->xm[1], &sg->xm[2]));
  PetscCall(DMDAGetGhostCorners(da, &sg->gxs[0], &sg->gxs[1], &sg->gxs[2], &sg->gxm[0], &sg->gxm[1], &sg->gxm[2]));
  for (PetscInt d = dim; d < 3; d++) {
    sg->xs[d] = sg->gxs[d] = 0;
    sg->xm[d] = sg->gxm[d] = 1;
  }
  sg->np = sg->xm[0] * sg->xm[1] * sg->xm[2];
  sg->m  = sg->np * dof;

  /* sizes: those of the DMDA; anything the user set must agree */
  nloc = sg->m;
  PetscCheck(A->rmap->n < 0 || A->rmap->n == nloc, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Local row size %" PetscInt_FMT " of the matrix does not match the DMDA, which gives %" PetscInt_FMT " (dof %" PetscInt_FMT " x %" PetscInt_FMT " owned points)", A->rmap->n, nloc, dof, sg->np);
  PetscCheck(A->cmap->n < 0 || A->cmap->n == nloc, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Local column size %" PetscInt_FMT " of the matrix does not match the DMDA, which gives %" PetscInt_FMT, A->cmap->n, nloc);
  PetscCheck(A->rmap->N < 0 || A->rmap->N == dof * M * sg->M[1] * sg->M[2], PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_SIZ, "Global size %" PetscInt_FMT " of the matrix does not match the DMDA, which gives %" PetscInt_FMT, A->rmap->N, dof * M * sg->M[1] * sg->M[2]);
  A->rmap->n = A->cmap->n = nloc;
  PetscCall(PetscLayoutSetBlockSize(A->rmap, dof));
  PetscCall(PetscLayoutSetBlockSize(A->cmap, dof));
  PetscCall(PetscLayoutSetUp(A->rmap));
  PetscCall(PetscLayoutSetUp(A->cmap));

  /* stencil points, lexicographic with x fastest; the centre is the middle one */
  w     = 2 * sw + 1;
  sg->k = 0;
  PetscCall(PetscMalloc1(w * w * w, &sg->sindex));
  for (PetscInt i = 0; i < w * w * w; i++) sg->sindex[i] = -1;
  PetscCall(PetscMalloc3(3 * w * w * w, &sg->delta, w * w * w, &sg->goff, w * w * w, &sg->ooff));
  for (PetscInt dz = (dim > 2 ? -sw : 0); dz <= (dim > 2 ? sw : 0); dz++) {
    for (PetscInt dy = (dim > 1 ? -sw : 0); dy <= (dim > 1 ? sw : 0); dy++) {
      for (PetscInt dx = -sw; dx <= sw; dx++) {
        PetscInt nnz = (dx != 0) + (dy != 0) + (dz != 0);
        if (st == DMDA_STENCIL_STAR && nnz > 1) continue;
        s                  = sg->k++;
        sg->delta[3 * s]     = dx;
        sg->delta[3 * s + 1] = dy;
        sg->delta[3 * s + 2] = dz;
        sg->goff[s]          = dx + sg->gxm[0] * (dy + sg->gxm[1] * dz);
        sg->ooff[s]          = dx + sg->xm[0] * (dy + sg->xm[1] * dz);
        sg->sindex[(dx + sw) + w * ((dy + sw) + w * (dz + sw))] = s;
        if (!nnz) sg->center = s;
      }
    }
  }

  /* process grid and ownership, to map global indices to grid points */
  PetscCall(DMDAGetOwnershipRanges(da, &lx[0], &lx[1], &lx[2]));
  sg->nranks[0] = pm;
  sg->nranks[1] = dim > 1 ? pn : 1;
  sg->nranks[2] = dim > 2 ? pp : 1;
  for (PetscInt d = 0; d < 3; d++) {
    PetscCall(PetscMalloc1(sg->nranks[d] + 1, &sg->rstart[d]));
    sg->rstart[d][0] = 0;
    for (PetscInt r = 0; r < sg->nranks[d]; r++) sg->rstart[d][r + 1] = sg->rstart[d][r] + (d < dim ? lx[d][r] : 1);
  }
  sg->periodic_alias = PETSC_FALSE;
  for (PetscInt d = 0; d < dim; d++)
    if (sg->bd[d] == DM_BOUNDARY_PERIODIC && sg->M[d] < w) sg->periodic_alias = PETSC_TRUE;

  sg->nv     = (PetscCount)sg->k * dof * sg->m;
  sg->nzused = -1;
  PetscCall(PetscCalloc1(sg->nv, &sg->v));
  PetscCall(DMCreateLocalVector(da, &sg->xl));
  PetscCall(VecDuplicate(sg->xl, &sg->yl));

  /* so that MatSetValuesStencil()/MatSetValuesLocal() work on a matrix created by hand too */
  PetscCall(DMGetLocalToGlobalMapping(da, &ltog));
  PetscCall(MatSetLocalToGlobalMapping(A, ltog, ltog));
  for (PetscInt d = 0; d < 3; d++) l[d] = sg->gxm[d];
  {
    PetscInt dims[3], starts[3];
    for (PetscInt d = 0; d < dim; d++) {
      dims[d]   = sg->gxm[d];
      starts[d] = sg->gxs[d];
    }
    PetscCall(MatSetStencil(A, dim, dims, starts, dof));
  }
  (void)l;
  A->preallocated = PETSC_TRUE;
  PetscCall(GpukitDMDAUseDeviceInterpolation(da, A)); /* PCMG on this DMDA interpolates on the device for sgdiacuda */
  PetscCall(PetscInfo(A, "SGDIA from DMDA: dim %" PetscInt_FMT ", dof %" PetscInt_FMT ", %s stencil width %" PetscInt_FMT " (%" PetscInt_FMT " points), %" PetscInt_FMT " local rows, %" PetscCount_FMT " stored values\n", dim, dof, st == DMDA_STENCIL_STAR ? "star" : "box", sw, sg->k, sg->m, sg->nv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the error for a matrix used before it got its DMDA (MatSetUp() without a DM; or, where MatSetValues() does not set
   the matrix up, as in PETSc releases before 3.20 without debugging, the matrix DMCreateMatrix() builds for a
   DMComposite or DMRedundant whose type is sgdia: it sets values before it gives the matrix its DM) */
#define SGDIA_NO_DMDA_MSG \
  "MATSGDIA takes its layout from a DMDA, and this matrix has none: create it with DMCreateMatrix() on a DMDA (-dm_mat_type sgdia), or call MatSetDM() before MatSetUp(). " \
  "A DM that is not a DMDA (DMComposite, DMRedundant, DMShell, ...) cannot have sgdia matrices: use MATAIJ for it, e.g. give only the DMDA the type sgdia (DMSetMatType(), or -<prefix>dm_mat_type sgdia with the DMDA's options prefix)"

/* A MATSGDIA matrix without a DMDA that is not square can be no stencil operator: PETSc code that makes a matrix of
   the operator's type for another purpose (PCGAMG's prolongator: MatSetType(P, type of A), AIJ preallocation,
   MatSetValues()) gets MATAIJ storage instead, with its default preallocation (new nonzeros allowed). A square one
   keeps the clear error: it is a stencil operator that lacks its DMDA. The matrix is MATAIJ after *fell is true. */
static PetscErrorCode SGDIAFallBackToAIJ_Private(Mat A, PetscBool *fell)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)A->data;
  DM         dm;

  PetscFunctionBegin;
  *fell = PETSC_FALSE;
  PetscCall(MatGetDM(A, &dm));
  if (sg->da || dm) PetscFunctionReturn(PETSC_SUCCESS);
  if (A->rmap->n < 0 && A->rmap->N < 0) PetscFunctionReturn(PETSC_SUCCESS);
  if (A->cmap->n < 0 && A->cmap->N < 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLayoutSetUp(A->rmap));
  PetscCall(PetscLayoutSetUp(A->cmap));
  if (A->rmap->N == A->cmap->N && A->rmap->n == A->cmap->n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscInfo(A, "A %s matrix %" PetscInt_FMT " x %" PetscInt_FMT " without a DMDA is no stencil operator (as PCGAMG's prolongator, made with the operator's type): it becomes MATAIJ\n", ((PetscObject)A)->type_name, A->rmap->N, A->cmap->N));
  PetscCall(MatSetType(A, MATAIJ));
  PetscCall(MatSetUp(A));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  *fell = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetUp_SGDIA(Mat A)
{
  DM        da;
  PetscBool fell;

  PetscFunctionBegin;
  PetscCall(SGDIAFallBackToAIJ_Private(A, &fell));
  if (fell) PetscFunctionReturn(PETSC_SUCCESS); /* A is MATAIJ now, set up */
  PetscCall(MatGetDM(A, &da));
  PetscCheck(da, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, SGDIA_NO_DMDA_MSG);
  PetscCall(SGDIASetUpFromDM_Private(A, da));
  /* like DMCreateMatrix()'s AIJ: an assembled zero matrix whose structure is the whole stencil */
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Insertion
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode SGDIAStashPush(SGDIAStash *st, PetscInt row, PetscInt col, PetscScalar v)
{
  PetscFunctionBegin;
  if (st->n == st->nalloc) {
    PetscInt     na = PetscMax(64, 2 * st->nalloc), *ij;
    PetscScalar *vv;
    PetscCall(PetscMalloc2(2 * na, &ij, na, &vv));
    PetscCall(PetscArraycpy(ij, st->ij, 2 * st->n));
    PetscCall(PetscArraycpy(vv, st->v, st->n));
    PetscCall(PetscFree2(st->ij, st->v));
    st->ij     = ij;
    st->v      = vv;
    st->nalloc = na;
  }
  st->ij[2 * st->n]     = row;
  st->ij[2 * st->n + 1] = col;
  st->v[st->n++]        = v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGDIAOutsideStencil(Mat A, PetscInt row, PetscInt col, const PetscInt gr[3], PetscInt r, const PetscInt gc[3], PetscInt c)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)A->data;

  PetscFunctionBegin;
  if (sg->drop_outside) {
    sg->ndropped++;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
          "Entry (%" PetscInt_FMT ", %" PetscInt_FMT ") couples grid point (%" PetscInt_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT ") component %" PetscInt_FMT " to grid point (%" PetscInt_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT ") component %" PetscInt_FMT
          ", outside the DMDA's %s stencil of width %" PetscInt_FMT " that MATSGDIA stores; use MATAIJ, a wider DMDA stencil, or -mat_sgdia_drop_outside_stencil to drop such entries",
          row, col, gr[0], gr[1], gr[2], r, gc[0], gc[1], gc[2], c, sg->stype == DMDA_STENCIL_STAR ? "star" : "box", sg->sw);
}

PetscErrorCode MatSetValues_SGDIA(Mat A, PetscInt nr, const PetscInt rows[], PetscInt nc, const PetscInt cols[], const PetscScalar vals[], InsertMode mode)
{
  Mat_SGDIA      *sg = (Mat_SGDIA *)A->data;
  const PetscInt *range = A->rmap->range, rstart = A->rmap->rstart, rend = A->rmap->rend, dof = sg->dof, m = sg->m;

  PetscFunctionBegin;
  if (!sg->da) { /* never set up (PETSc releases before 3.20 without debugging do not set up in MatSetValues()) */
    PetscBool fell;
    PetscCall(SGDIAFallBackToAIJ_Private(A, &fell));
    if (fell) { /* A is MATAIJ now */
      PetscCall(MatSetValues(A, nr, rows, nc, cols, vals, mode));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  PetscCheck(sg->da, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, SGDIA_NO_DMDA_MSG);
  PetscCall(SGDIAHostAccess(A, PETSC_TRUE));
  for (PetscInt i = 0; i < nr; i++) {
    PetscInt row = rows[i], gr[3], gl, p, r;
    if (row < 0) continue;
    PetscCheck(row < A->rmap->N, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Row %" PetscInt_FMT " is not below the number of rows %" PetscInt_FMT, row, A->rmap->N);
    if (row < rstart || row >= rend) { /* another rank's row: keep it for assembly */
      if (sg->ignore_offproc) continue;
      for (PetscInt j = 0; j < nc; j++) {
        if (cols[j] < 0) continue;
        PetscCall(SGDIAStashPush(&sg->stash, row, cols[j], vals ? (sg->roworiented ? vals[i * nc + j] : vals[i + j * nr]) : 0.0));
      }
      continue;
    }
    p = (row - rstart) / dof;
    r = (row - rstart) % dof;
    SGDIAPointInfo(sg, p, gr, &gl);
    for (PetscInt j = 0; j < nc; j++) {
      PetscInt    col = cols[j], gc[3], c, s;
      PetscScalar v   = vals ? (sg->roworiented ? vals[i * nc + j] : vals[i + j * nr]) : 0.0;
      if (col < 0) continue;
      PetscCheck(col < A->cmap->N, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Column %" PetscInt_FMT " is not below the number of columns %" PetscInt_FMT, col, A->cmap->N);
      SGDIAIndexToGrid(sg, range, col, gc, &c);
      s = SGDIAStencilPoint(sg, gr, gc);
      if (s < 0) {
        PetscCall(SGDIAOutsideStencil(A, row, col, gr, r, gc, c));
        continue;
      }
      if (mode == ADD_VALUES) sg->v[(s * dof + c) * m + p * dof + r] += v;
      else sg->v[(s * dof + c) * m + p * dof + r] = v;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The position in v of entry (row, col), row owned by this rank; -1 when the entry lies outside the stencil and
   such entries are dropped (else the error of MatSetValues()). Used by the COO assembly of MATSGDIACUDA. */
PetscErrorCode SGDIAEntrySlot_Private(Mat A, PetscInt row, PetscInt col, PetscCount *slot)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)A->data;
  PetscInt   dof = sg->dof, p, r, c, s, gr[3], gc[3], gl;

  PetscFunctionBegin;
  PetscCheck(row >= A->rmap->rstart && row < A->rmap->rend, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Row %" PetscInt_FMT " is not owned by this rank", row);
  PetscCheck(col >= 0 && col < A->cmap->N, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Column %" PetscInt_FMT " is not in [0, %" PetscInt_FMT ")", col, A->cmap->N);
  p = (row - A->rmap->rstart) / dof;
  r = (row - A->rmap->rstart) % dof;
  SGDIAPointInfo(sg, p, gr, &gl);
  SGDIAIndexToGrid(sg, A->rmap->range, col, gc, &c);
  s     = SGDIAStencilPoint(sg, gr, gc);
  *slot = -1;
  if (s < 0) PetscCall(SGDIAOutsideStencil(A, row, col, gr, r, gc, c));
  else *slot = (PetscCount)(s * dof + c) * sg->m + p * dof + r;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetValues_SGDIA_Logged(Mat A, PetscInt nr, const PetscInt rows[], PetscInt nc, const PetscInt cols[], const PetscScalar vals[], InsertMode mode)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(MAT_SGDIA_SetValues, A, 0, 0, 0));
  PetscCall(MatSetValues_SGDIA(A, nr, rows, nc, cols, vals, mode));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_SetValues, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAssemblyBegin_SGDIA(Mat A, MatAssemblyType type)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)A->data;

  PetscFunctionBegin;
  (void)type;
  PetscCheck(sg->da, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, SGDIA_NO_DMDA_MSG);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatView_SGDIA(Mat, PetscViewer);

static PetscErrorCode MatAssemblyEnd_SGDIA(Mat A, MatAssemblyType type)
{
  Mat_SGDIA  *sg = (Mat_SGDIA *)A->data;
  PetscMPIInt size;

  PetscFunctionBegin;
  (void)type;
  PetscCall(PetscLogEventBegin(MAT_SGDIA_Assembly, A, 0, 0, 0));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size > 1 && !A->nooffprocentries) PetscCall(SGDIAStashExchange_Private(A));
  if (A->ops->view != MatView_SGDIA) { /* DMCreateMatrix() put the DMDA's natural-ordering viewer in our slot: keep
                                          it for the formats it serves, and our own for the layout (-mat_view ::ascii_info) */
    sg->dmview      = A->ops->view;
    A->ops->view    = MatView_SGDIA;
  }
  if (sg->ndropped) {
    PetscCall(PetscInfo(A, "Dropped %" PetscInt_FMT " entries outside the stencil (-mat_sgdia_drop_outside_stencil)\n", sg->ndropped));
    sg->ndropped = 0;
  }
  PetscCall(PetscLogEventEnd(MAT_SGDIA_Assembly, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatZeroEntries_SGDIA(Mat A)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)A->data;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_TRUE));
  PetscCall(PetscArrayzero(sg->v, sg->nv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetOption_SGDIA(Mat A, MatOption op, PetscBool flg)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)A->data;

  PetscFunctionBegin;
  switch (op) {
  case MAT_ROW_ORIENTED:
    sg->roworiented = flg;
    break;
  case MAT_NEW_NONZERO_LOCATIONS:
    sg->drop_outside = flg ? PETSC_FALSE : PETSC_TRUE;
    break;
  case MAT_NEW_NONZERO_LOCATION_ERR:
    if (flg) sg->drop_outside = PETSC_FALSE;
    break;
  case MAT_IGNORE_OFF_PROC_ENTRIES:
    sg->ignore_offproc = flg;
    break;
  default:
    PetscCall(PetscInfo(A, "Option %s has no effect on MATSGDIA\n", MatOptions[op]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Products
   ------------------------------------------------------------------------------------------------------ */

typedef enum {
  SGDIA_ALL,
  SGDIA_INTERIOR,
  SGDIA_BORDER
} SGDIARegion;

/* Is grid point q[] owned by this rank? */
static inline PetscBool SGDIAOwned(const Mat_SGDIA *sg, const PetscInt q[3])
{
  for (PetscInt d = 0; d < 3; d++)
    if (q[d] < sg->xs[d] || q[d] >= sg->xs[d] + sg->xm[d]) return PETSC_FALSE;
  return PETSC_TRUE;
}

/* Are all in-domain grid points within the stencil width of g[] owned (so its row has no ghost column)? */
static inline PetscBool SGDIAStencilOwned(const Mat_SGDIA *sg, const PetscInt g[3])
{
  for (PetscInt d = 0; d < sg->dim; d++) {
    const PetscInt lo = PetscMax(g[d] - sg->sw, 0), hi = PetscMin(g[d] + sg->sw, sg->M[d] - 1);
    if (lo < sg->xs[d] || hi >= sg->xs[d] + sg->xm[d]) return PETSC_FALSE;
  }
  return PETSC_TRUE;
}

/* AIJ's order (dof 1 on several ranks without periodic dimensions: range = the row layout's ranges, else NULL):
   MATMPIAIJ sums a row's diagonal-block terms (the owned columns, ascending), then adds its off-diagonal-block terms
   (the ghost columns, in ascending global order). The n stencil points sl[] of owned point g[] (all in the domain) are
   reordered so: the owned neighbours first, in stencil order (which is ascending local order), then the ghosts by
   global index. key[]: work of k entries. (Bitwise equality also assumes AIJ's plain sequential row kernel: a PETSc
   configured with PETSC_KERNEL_USE_UNROLL_4/2, the Fortran kernels or AVX-512 kernels sums differently.) */
static PetscErrorCode SGDIAOrderAIJ(const Mat_SGDIA *sg, const PetscInt *range, const PetscInt g[3], PetscInt n, PetscInt *sl, PetscInt *key)
{
  PetscInt no = 0, ng = 0;

  PetscFunctionBegin;
  for (PetscInt q = 0; q < n; q++) { /* owned ones compacted to the front, in order; ghosts' stencil points in key[] for now */
    const PetscInt s     = sl[q];
    PetscInt       c[3] = {g[0] + sg->delta[3 * s], g[1] + sg->delta[3 * s + 1], g[2] + sg->delta[3 * s + 2]};
    if (SGDIAOwned(sg, c)) sl[no++] = s;
    else key[ng++] = s;
  }
  for (PetscInt q = 0; q < ng; q++) sl[no + q] = key[q];
  for (PetscInt q = 0; q < ng; q++) {
    const PetscInt s    = sl[no + q];
    PetscInt       c[3] = {g[0] + sg->delta[3 * s], g[1] + sg->delta[3 * s + 1], g[2] + sg->delta[3 * s + 2]};
    key[q]              = SGDIAGridToIndex(sg, range, c, 0);
  }
  PetscCall(PetscSortIntWithArray(ng, key, sl + no));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y (+)= A x at one owned point p with global coordinates g[], checking every neighbour against the domain;
   x is an array over the box lo[], n[] (global grid coordinates) and off[] the stencil offsets in that box. */
static inline void SGDIAMultPoint(const Mat_SGDIA *sg, const PetscScalar *x, const PetscInt lo[3], const PetscInt n[3], const PetscInt *off, PetscInt p, const PetscInt g[3], const PetscScalar *yin, PetscScalar *y)
{
  const PetscInt     dof = sg->dof, m = sg->m;
  const PetscInt     xb  = (g[0] - lo[0]) + n[0] * ((g[1] - lo[1]) + n[1] * (g[2] - lo[2]));
  const PetscScalar *v   = sg->v;

  for (PetscInt r = 0; r < dof; r++) {
    PetscScalar sum = yin ? yin[p * dof + r] : 0.0;
    for (PetscInt s = 0; s < sg->k; s++) {
      if (!SGDIANeighbourInDomain(sg, g, s)) continue;
      for (PetscInt c = 0; c < dof; c++) sum += v[(s * dof + c) * m + p * dof + r] * x[(xb + off[s]) * dof + c];
    }
    y[p * dof + r] = sum;
  }
}

/* SGDIAMultPoint() in AIJ's order (range: dof 1 on several ranks without periodic dimensions, see SGDIAOrderAIJ()): a
   point whose stencil has no ghost column sums in stencil order (AIJ's); one with ghost columns reads its list from
   sg->aijord, made (and appended) at the first product, so that later products do not sort. wk: 2k work entries */
static PetscErrorCode SGDIAMultPointAIJ(Mat_SGDIA *sg, const PetscScalar *x, const PetscInt lo[3], const PetscInt n[3], const PetscInt *off, PetscInt p, const PetscInt g[3], const PetscScalar *yin, PetscScalar *y, const PetscInt *range, PetscInt *wk)
{
  SGDIAOrderCache   *oc = &sg->aijord;
  const PetscInt     m = sg->m, xb = (g[0] - lo[0]) + n[0] * ((g[1] - lo[1]) + n[1] * (g[2] - lo[2]));
  const PetscInt    *sl;
  PetscInt           ns = 0;
  PetscScalar        sum = yin ? yin[p] : 0.0;
  const PetscScalar *v   = sg->v;

  PetscFunctionBegin;
  if (SGDIAStencilOwned(sg, g)) {
    SGDIAMultPoint(sg, x, lo, n, off, p, g, yin, y);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (oc->built) {
    PetscCheck(oc->cur < oc->n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSGDIA: the border pass met more points with ghost columns (%" PetscInt_FMT ") than its first product", oc->cur + 1);
    sl = oc->list + oc->ptr[oc->cur];
    ns = oc->ptr[oc->cur + 1] - oc->ptr[oc->cur];
    oc->cur++;
  } else {
    PetscInt *l = wk;
    for (PetscInt s = 0; s < sg->k; s++)
      if (SGDIANeighbourInDomain(sg, g, s)) l[ns++] = s;
    PetscCall(SGDIAOrderAIJ(sg, range, g, ns, l, wk + sg->k));
    if (oc->n + 2 > oc->nalloc) {
      oc->nalloc = PetscMax(2 * oc->nalloc, 64);
      PetscCall(PetscRealloc((size_t)oc->nalloc * sizeof(PetscInt), &oc->ptr));
      if (!oc->n) oc->ptr[0] = 0;
    }
    if (oc->ptr[oc->n] + ns > oc->lalloc) {
      oc->lalloc = PetscMax(2 * oc->lalloc, oc->ptr[oc->n] + ns + 64 * sg->k);
      PetscCall(PetscRealloc((size_t)oc->lalloc * sizeof(PetscInt), &oc->list));
    }
    PetscCall(PetscArraycpy(oc->list + oc->ptr[oc->n], l, ns));
    oc->ptr[oc->n + 1] = oc->ptr[oc->n] + ns;
    oc->n++;
    sl = l;
  }
  for (PetscInt q = 0; q < ns; q++) sum += v[sl[q] * m + p] * x[xb + off[sl[q]]];
  y[p] = sum;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* SGDIAMultLine() for a dof > 1 known at compile time (called with a constant): one pass over the line's y per
   stencil point, each row of a point summing its dof components in a register, in ascending column order (stencil
   point, then component: the order of AIJ's row) */
static inline __attribute__((always_inline)) void SGDIAMultLineDof(const PetscScalar *v, PetscInt m, const PetscInt dof, const PetscScalar *x, PetscInt xb, const PetscInt *off, PetscInt ns, const PetscInt *sl, PetscInt p0, PetscInt len, PetscScalar *y)
{
  PetscScalar *yy = y + p0 * dof;

  for (PetscInt q = 0; q < ns; q++) {
    const PetscInt     s  = sl[q];
    const PetscScalar *vv = v + s * dof * m + p0 * dof, *xx = x + (xb + off[s]) * dof;

    for (PetscInt i = 0; i < len; i++) {
      for (PetscInt r = 0; r < dof; r++) {
        PetscScalar a = yy[i * dof + r];
        for (PetscInt c = 0; c < dof; c++) a += vv[c * m + i * dof + r] * xx[i * dof + c];
        yy[i * dof + r] = a;
      }
    }
  }
}

/* y (+)= A x along len consecutive owned points from p0, through the ns stencil points sl[] (those whose
   neighbours lie in the domain for every point of the stretch; the others are zero there); xb is the position of
   point p0 in x. A few passes over y with unit-stride, vectorisable loops. */
static inline void SGDIAMultLine(const Mat_SGDIA *sg, const PetscScalar *x, PetscInt xb, const PetscInt *off, PetscInt ns, const PetscInt *sl, PetscInt p0, PetscInt len, const PetscScalar *yin, PetscScalar *y)
{
  const PetscInt dof = sg->dof, m = sg->m, nl = len * dof;
  PetscScalar   *yy  = y + p0 * dof;

  if (!yin) {
    for (PetscInt i = 0; i < nl; i++) yy[i] = 0.0;
  } else if (yin != y) {
    for (PetscInt i = 0; i < nl; i++) yy[i] = yin[p0 * dof + i];
  }
  if (dof == 1) { /* four stored columns per pass over y, added one after the other in stencil order: the order in
                     which AIJ sums the row (ascending columns), so that one rank without periodic dimensions gives
                     AIJ's product bit for bit */
    PetscInt q = 0;
    for (; q + 4 <= ns; q += 4) {
      const PetscScalar *v0 = sg->v + sl[q] * m + p0, *v1 = sg->v + sl[q + 1] * m + p0, *v2 = sg->v + sl[q + 2] * m + p0, *v3 = sg->v + sl[q + 3] * m + p0;
      const PetscScalar *x0 = x + xb + off[sl[q]], *x1 = x + xb + off[sl[q + 1]], *x2 = x + xb + off[sl[q + 2]], *x3 = x + xb + off[sl[q + 3]];
      for (PetscInt i = 0; i < len; i++) yy[i] = (((yy[i] + v0[i] * x0[i]) + v1[i] * x1[i]) + v2[i] * x2[i]) + v3[i] * x3[i];
    }
    for (; q < ns; q++) {
      const PetscScalar *vv = sg->v + sl[q] * m + p0, *xx = x + xb + off[sl[q]];
      for (PetscInt i = 0; i < len; i++) yy[i] += vv[i] * xx[i];
    }
    return;
  }
  switch (dof) { /* a constant dof: the compiler unrolls the row and component loops */
  case 2:
    SGDIAMultLineDof(sg->v, m, 2, x, xb, off, ns, sl, p0, len, y);
    return;
  case 3:
    SGDIAMultLineDof(sg->v, m, 3, x, xb, off, ns, sl, p0, len, y);
    return;
  case 4:
    SGDIAMultLineDof(sg->v, m, 4, x, xb, off, ns, sl, p0, len, y);
    return;
  case 5:
    SGDIAMultLineDof(sg->v, m, 5, x, xb, off, ns, sl, p0, len, y);
    return;
  default:
    break;
  }
  for (PetscInt q = 0; q < ns; q++) {
    const PetscInt s = sl[q];
    for (PetscInt c = 0; c < dof; c++) {
      const PetscScalar *vv = sg->v + (s * dof + c) * m + p0 * dof;
      const PetscScalar *xx = x + (xb + off[s]) * dof + c;
      for (PetscInt i = 0; i < len; i++) {
        const PetscScalar xv = xx[i * dof];
        for (PetscInt r = 0; r < dof; r++) yy[i * dof + r] += vv[i * dof + r] * xv;
      }
    }
  }
}

/* y (+)= A x over the owned points of a region, line by line in x. x is an array over the box lo[], n[] (global
   grid coordinates), off[] the stencil offsets in that box:
   - SGDIA_ALL: x covers every in-domain neighbour of every owned point (one rank, no periodic dimension);
   - SGDIA_INTERIOR: x is the owned box; only points whose whole stencil lies in it;
   - SGDIA_BORDER: x is the ghosted box; the other points.
   Stretches of a line whose stencils stay inside the domain run without checks (SGDIAMultLine). range (SGDIA_BORDER,
   dof 1, no periodic dimension; else NULL): each row's terms in AIJ's order (SGDIAOrderAIJ()), so that the product is
   MATMPIAIJ's bit for bit: a line stretch whose x neighbours are owned sums its owned stencil points, then its ghost
   ones in the global order (the same for every point of the stretch), in one list (no extra pass over y); every other
   point by SGDIAMultPointAIJ(). The interior rows have owned neighbours only, summed in stencil order, which is AIJ's. */
static PetscErrorCode SGDIAMultRegion(Mat_SGDIA *sg, const PetscScalar *x, const PetscInt lo[3], const PetscInt n[3], const PetscInt *off, SGDIARegion region, const PetscScalar *yin, PetscScalar *y, const PetscInt *range)
{
  const PetscInt sw = sg->sw, xm = sg->xm[0];
  PetscInt       ia, ib, *sl, ns, *all, *wk; /* ia..ib: points of a line whose stencil stays in the domain along x */

  PetscFunctionBegin;
  PetscCall(PetscMalloc3(sg->k, &sl, sg->k, &all, 2 * sg->k, &wk));
  for (PetscInt s = 0; s < sg->k; s++) all[s] = s;
  ia = 0;
  ib = xm;
  if (sg->bd[0] != DM_BOUNDARY_PERIODIC) {
    ia = PetscMax(0, sw - sg->xs[0]);
    ib = PetscMin(xm, sg->M[0] - sw - sg->xs[0]);
    if (ib < ia) ib = ia;
  }
  if (range) { /* AIJ's order: the line stretches also keep their x neighbours owned */
    if (sg->xs[0] > 0) ia = PetscMax(ia, sw);
    if (sg->xs[0] + xm < sg->M[0]) ib = PetscMin(ib, xm - sw);
    if (ib < ia) ib = ia;
  }
  for (PetscInt l2 = 0; l2 < sg->xm[2]; l2++) {
    for (PetscInt l1 = 0; l1 < sg->xm[1]; l1++) {
      PetscInt  g[3] = {sg->xs[0], sg->xs[1] + l1, sg->xs[2] + l2}, l[3] = {0, l1, l2}, p0 = SGDIAPoint(sg, 0, l1, l2);
      PetscBool lineinterior = PETSC_TRUE;
      PetscInt  xb0 = (g[0] - lo[0]) + n[0] * ((g[1] - lo[1]) + n[1] * (g[2] - lo[2]));
      for (PetscInt d = 1; d < sg->dim; d++)
        if (l[d] - sw < 0 || l[d] + sw >= sg->xm[d]) lineinterior = PETSC_FALSE;
      if (region == SGDIA_INTERIOR) {
        if (lineinterior && xm > 2 * sw) SGDIAMultLine(sg, x, xb0 + sw, off, sg->k, all, p0 + sw, xm - 2 * sw, yin, y);
      } else if (region == SGDIA_ALL || !lineinterior) {
        /* the stencil points that stay in the domain along y and z, for the whole line */
        ns = 0;
        for (PetscInt s = 0; s < sg->k; s++) {
          PetscBool in = PETSC_TRUE;
          for (PetscInt d = 1; d < 3; d++) {
            PetscInt q = g[d] + sg->delta[3 * s + d];
            if (sg->bd[d] != DM_BOUNDARY_PERIODIC && (q < 0 || q >= sg->M[d])) in = PETSC_FALSE;
          }
          if (in) sl[ns++] = s;
        }
        for (PetscInt i = 0; i < xm; i++) {
          if (i == ia && ib > ia) {
            if (range) { /* owned stencil points, then the ghost ones in global order (that of the stretch's first point):
                            one pass list, summed in that order */
              g[0] = sg->xs[0] + ia;
              PetscCall(SGDIAOrderAIJ(sg, range, g, ns, sl, wk));
            }
            SGDIAMultLine(sg, x, xb0 + ia, off, ns, sl, p0 + ia, ib - ia, yin, y);
            i = ib - 1;
            continue;
          }
          g[0] = sg->xs[0] + i;
          if (range) PetscCall(SGDIAMultPointAIJ(sg, x, lo, n, off, p0 + i, g, yin, y, range, wk));
          else SGDIAMultPoint(sg, x, lo, n, off, p0 + i, g, yin, y);
        }
      } else { /* an interior line in the border pass: its first and last sw points */
        for (PetscInt i = 0; i < xm; i++) {
          if (i >= sw && i < xm - sw) i = xm - sw;
          if (i >= xm) break;
          g[0] = sg->xs[0] + i;
          if (range) PetscCall(SGDIAMultPointAIJ(sg, x, lo, n, off, p0 + i, g, yin, y, range, wk));
          else SGDIAMultPoint(sg, x, lo, n, off, p0 + i, g, yin, y);
        }
      }
    }
  }
  PetscCall(PetscFree3(sl, all, wk));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Does the product need the ghost exchange? Not on one rank without periodic dimensions. */
static PetscBool SGDIANeedsGhosts(Mat A)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)A->data;

  for (PetscInt d = 0; d < 3; d++)
    if (sg->xm[d] != sg->gxm[d]) return PETSC_TRUE;
  (void)A;
  return PETSC_FALSE;
}

/* z = y + A x (y may be NULL); the ghost exchange overlaps the interior rows */
static PetscErrorCode MatMultAdd_SGDIA(Mat A, Vec x, Vec y, Vec z)
{
  Mat_SGDIA         *sg = (Mat_SGDIA *)A->data;
  const PetscScalar *xa, *ya = NULL, *xla;
  PetscScalar       *za;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_FALSE));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_Mult, A, x, z, 0));
  if (y && y != z) PetscCall(VecCopy(y, z));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArray(z, &za));
  if (y) ya = za;
  if (!SGDIANeedsGhosts(A)) {
    PetscCall(SGDIAMultRegion(sg, xa, sg->xs, sg->xm, sg->ooff, SGDIA_ALL, ya, za, NULL));
  } else {
    /* dof 1 without periodic dimensions: the border rows in AIJ's order (MATMPIAIJ's product bit for bit) */
    PetscBool aijorder = sg->dof == 1 ? PETSC_TRUE : PETSC_FALSE;
    for (PetscInt d = 0; d < 3; d++)
      if (sg->bd[d] == DM_BOUNDARY_PERIODIC) aijorder = PETSC_FALSE;
    PetscCall(DMGlobalToLocalBegin(sg->da, x, INSERT_VALUES, sg->xl));
    PetscCall(SGDIAMultRegion(sg, xa, sg->xs, sg->xm, sg->ooff, SGDIA_INTERIOR, ya, za, NULL));
    PetscCall(DMGlobalToLocalEnd(sg->da, x, INSERT_VALUES, sg->xl));
    PetscCall(VecGetArrayRead(sg->xl, &xla));
    sg->aijord.cur = 0;
    PetscCall(SGDIAMultRegion(sg, xla, sg->gxs, sg->gxm, sg->goff, SGDIA_BORDER, ya, za, aijorder ? A->rmap->range : NULL));
    if (aijorder) {
      PetscCheck(!sg->aijord.built || sg->aijord.cur == sg->aijord.n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSGDIA: the border pass met %" PetscInt_FMT " points with ghost columns, its first product %" PetscInt_FMT, sg->aijord.cur, sg->aijord.n);
      sg->aijord.built = PETSC_TRUE;
    }
    PetscCall(VecRestoreArrayRead(sg->xl, &xla));
  }
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(VecRestoreArray(z, &za));
  PetscCall(PetscLogFlops(2.0 * sg->nv));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_Mult, A, x, z, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_SGDIA(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultAdd_SGDIA(A, x, NULL, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* z = y + A^T x (y may be NULL): contributions are scattered into the ghosted local vector, then added
   to their owners */
static PetscErrorCode MatMultTransposeAdd_SGDIA(Mat A, Vec x, Vec y, Vec z)
{
  Mat_SGDIA         *sg = (Mat_SGDIA *)A->data;
  const PetscInt     dof = sg->dof, m = sg->m, k = sg->k;
  const PetscScalar *xa, *v = sg->v;
  PetscScalar       *ya;
  PetscBool          ghosts = SGDIANeedsGhosts(A);
  Vec                w      = z;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_FALSE));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_MultTr, A, x, z, 0));
  if (y == z || (y && x == z)) PetscCall(VecDuplicate(z, &w)); /* keep y and x intact */
  if (ghosts) {
    PetscCall(VecSet(sg->yl, 0.0));
    PetscCall(VecGetArray(sg->yl, &ya));
  } else {
    PetscCall(VecSet(w, 0.0));
    PetscCall(VecGetArray(w, &ya));
  }
  PetscCall(VecGetArrayRead(x, &xa));
  for (PetscInt p = 0; p < sg->np; p++) {
    PetscInt g[3], gl, base;
    SGDIAPointInfo(sg, p, g, &gl);
    base = ghosts ? gl : p;
    for (PetscInt s = 0; s < k; s++) {
      PetscInt o;
      if (!SGDIANeighbourInDomain(sg, g, s)) continue;
      o = (base + (ghosts ? sg->goff[s] : sg->ooff[s])) * dof;
      for (PetscInt c = 0; c < dof; c++) {
        const PetscScalar *vc  = v + (s * dof + c) * m + p * dof;
        PetscScalar        acc = 0.0;
        for (PetscInt r = 0; r < dof; r++) acc += vc[r] * xa[p * dof + r];
        ya[o + c] += acc;
      }
    }
  }
  PetscCall(VecRestoreArrayRead(x, &xa));
  if (ghosts) {
    PetscCall(VecRestoreArray(sg->yl, &ya));
    PetscCall(VecSet(w, 0.0));
    PetscCall(DMLocalToGlobalBegin(sg->da, sg->yl, ADD_VALUES, w));
    PetscCall(DMLocalToGlobalEnd(sg->da, sg->yl, ADD_VALUES, w));
  } else PetscCall(VecRestoreArray(w, &ya));
  if (y) PetscCall(VecAXPY(w, 1.0, y));
  if (w != z) PetscCall(VecCopy(w, z));
  if (w != z) PetscCall(VecDestroy(&w));
  PetscCall(PetscLogFlops(2.0 * sg->nv));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_MultTr, A, x, z, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTranspose_SGDIA(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultTransposeAdd_SGDIA(A, x, NULL, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Diagonal, scaling, shifts
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatGetDiagonal_SGDIA(Mat A, Vec d)
{
  Mat_SGDIA   *sg = (Mat_SGDIA *)A->data;
  PetscScalar *da;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_FALSE));
  PetscCall(VecGetArrayWrite(d, &da));
  for (PetscInt i = 0; i < sg->m; i++) da[i] = sg->v[(sg->center * sg->dof + i % sg->dof) * sg->m + i];
  PetscCall(VecRestoreArrayWrite(d, &da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatScale_SGDIA(Mat A, PetscScalar a)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)A->data;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_TRUE));
  for (PetscCount i = 0; i < sg->nv; i++) sg->v[i] *= a;
  PetscCall(PetscLogFlops(sg->nv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatShift_SGDIA(Mat A, PetscScalar a)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)A->data;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_TRUE));
  for (PetscInt i = 0; i < sg->m; i++) sg->v[(sg->center * sg->dof + i % sg->dof) * sg->m + i] += a;
  PetscCall(PetscLogFlops(sg->m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDiagonalSet_SGDIA(Mat A, Vec D, InsertMode mode)
{
  Mat_SGDIA         *sg = (Mat_SGDIA *)A->data;
  const PetscScalar *da;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_TRUE));
  PetscCall(VecGetArrayRead(D, &da));
  for (PetscInt i = 0; i < sg->m; i++) {
    PetscScalar *e = &sg->v[(sg->center * sg->dof + i % sg->dof) * sg->m + i];
    *e             = mode == ADD_VALUES ? *e + da[i] : da[i];
  }
  PetscCall(VecRestoreArrayRead(D, &da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDiagonalScale_SGDIA(Mat A, Vec l, Vec r)
{
  Mat_SGDIA         *sg = (Mat_SGDIA *)A->data;
  const PetscInt     dof = sg->dof, m = sg->m;
  const PetscScalar *la, *ra;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_TRUE));
  if (l) {
    PetscCall(VecGetArrayRead(l, &la));
    for (PetscInt j = 0; j < sg->k * dof; j++)
      for (PetscInt i = 0; i < m; i++) sg->v[j * m + i] *= la[i];
    PetscCall(VecRestoreArrayRead(l, &la));
  }
  if (r) {
    PetscCall(DMGlobalToLocalBegin(sg->da, r, INSERT_VALUES, sg->xl));
    PetscCall(DMGlobalToLocalEnd(sg->da, r, INSERT_VALUES, sg->xl));
    PetscCall(VecGetArrayRead(sg->xl, &ra));
    for (PetscInt p = 0; p < sg->np; p++) {
      PetscInt g[3], gl;
      SGDIAPointInfo(sg, p, g, &gl);
      for (PetscInt s = 0; s < sg->k; s++) {
        if (!SGDIANeighbourInDomain(sg, g, s)) continue;
        for (PetscInt c = 0; c < dof; c++)
          for (PetscInt rr = 0; rr < dof; rr++) sg->v[(s * dof + c) * m + p * dof + rr] *= ra[(gl + sg->goff[s]) * dof + c];
      }
    }
    PetscCall(VecRestoreArrayRead(sg->xl, &ra));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Rows
   ------------------------------------------------------------------------------------------------------ */

/* the stored couplings of a local row, as global columns, sorted; n <= k*dof */
static PetscErrorCode SGDIAGetRowLocal(Mat A, PetscInt lrow, PetscInt *n, PetscInt *cols, PetscScalar *vals)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)A->data;
  PetscInt   dof = sg->dof, p = lrow / dof, r = lrow % dof, g[3], gl, cnt = 0;

  PetscFunctionBegin;
  SGDIAPointInfo(sg, p, g, &gl);
  for (PetscInt s = 0; s < sg->k; s++) {
    PetscInt b[3];
    if (!SGDIANeighbourInDomain(sg, g, s) || !SGDIACanonical(sg, g, s)) continue;
    for (PetscInt d = 0; d < 3; d++) b[d] = g[d] + sg->delta[3 * s + d];
    SGDIAWrap(sg, b);
    for (PetscInt c = 0; c < dof; c++) {
      cols[cnt] = SGDIAGridToIndex(sg, A->cmap->range, b, c);
      if (vals) vals[cnt] = sg->v[(s * dof + c) * sg->m + p * dof + r];
      cnt++;
    }
  }
  if (vals) PetscCall(PetscSortIntWithScalarArray(cnt, cols, vals));
  else PetscCall(PetscSortInt(cnt, cols));
  *n = cnt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGetRow_SGDIA(Mat A, PetscInt row, PetscInt *n, PetscInt **cols, PetscScalar **vals)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)A->data;
  PetscInt   nn;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_FALSE));
  PetscCheck(row >= A->rmap->rstart && row < A->rmap->rend, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "MatGetRow() on MATSGDIA takes locally owned rows [%" PetscInt_FMT ", %" PetscInt_FMT "), got %" PetscInt_FMT, A->rmap->rstart, A->rmap->rend, row);
  if (!sg->rowcols) PetscCall(PetscMalloc2(sg->k * sg->dof, &sg->rowcols, sg->k * sg->dof, &sg->rowvals));
  PetscCall(SGDIAGetRowLocal(A, row - A->rmap->rstart, &nn, sg->rowcols, sg->rowvals));
  if (n) *n = nn;
  if (cols) *cols = sg->rowcols;
  if (vals) *vals = sg->rowvals;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatRestoreRow_SGDIA(Mat A, PetscInt row, PetscInt *n, PetscInt **cols, PetscScalar **vals)
{
  PetscFunctionBegin;
  (void)A;
  (void)row;
  if (n) *n = 0;
  if (cols) *cols = NULL;
  if (vals) *vals = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Dirichlet rows
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode SGDIAZeroLocalRows(Mat A, PetscInt n, const PetscInt lrows[], PetscScalar diag, Vec x, Vec b)
{
  Mat_SGDIA         *sg = (Mat_SGDIA *)A->data;
  const PetscScalar *xa = NULL;
  PetscScalar       *ba = NULL;

  PetscFunctionBegin;
  if (x && b) {
    PetscCall(VecGetArrayRead(x, &xa));
    PetscCall(VecGetArray(b, &ba));
  }
  for (PetscInt i = 0; i < n; i++) {
    PetscInt lr = lrows[i];
    for (PetscInt j = 0; j < sg->k * sg->dof; j++) sg->v[j * sg->m + lr] = 0.0;
    sg->v[(sg->center * sg->dof + lr % sg->dof) * sg->m + lr] = diag;
    if (ba) ba[lr] = diag * xa[lr];
  }
  if (x && b) {
    PetscCall(VecRestoreArrayRead(x, &xa));
    PetscCall(VecRestoreArray(b, &ba));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatZeroRows_SGDIA(Mat A, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b)
{
  PetscInt nl, *lrows;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_TRUE));
  PetscCall(SGDIASendToOwners_Private(A, n, rows, &nl, &lrows));
  PetscCall(SGDIAZeroLocalRows(A, nl, lrows, diag, x, b));
  PetscCall(PetscFree(lrows));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatZeroRowsColumns_SGDIA(Mat A, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b)
{
  Mat_SGDIA         *sg = (Mat_SGDIA *)A->data;
  const PetscInt     dof = sg->dof, m = sg->m;
  PetscInt           nl, *lrows;
  Vec                mask, maskl, xg = NULL;
  PetscScalar       *ma, *ba = NULL;
  const PetscScalar *mla, *xla = NULL;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_TRUE));
  PetscCall(SGDIASendToOwners_Private(A, n, rows, &nl, &lrows));
  /* mark the zeroed rows, which are also the zeroed columns, and see them on the neighbours */
  PetscCall(DMGetGlobalVector(sg->da, &mask));
  PetscCall(DMGetLocalVector(sg->da, &maskl));
  PetscCall(VecSet(mask, 0.0));
  PetscCall(VecGetArray(mask, &ma));
  for (PetscInt i = 0; i < nl; i++) ma[lrows[i]] = 1.0;
  PetscCall(VecRestoreArray(mask, &ma));
  PetscCall(DMGlobalToLocalBegin(sg->da, mask, INSERT_VALUES, maskl));
  PetscCall(DMGlobalToLocalEnd(sg->da, mask, INSERT_VALUES, maskl));
  if (x && b) {
    PetscCall(DMGetLocalVector(sg->da, &xg));
    PetscCall(DMGlobalToLocalBegin(sg->da, x, INSERT_VALUES, xg));
    PetscCall(DMGlobalToLocalEnd(sg->da, x, INSERT_VALUES, xg));
    PetscCall(VecGetArrayRead(xg, &xla));
    PetscCall(VecGetArray(b, &ba));
  }
  PetscCall(VecGetArrayRead(maskl, &mla));
  for (PetscInt p = 0; p < sg->np; p++) {
    PetscInt g[3], gl;
    SGDIAPointInfo(sg, p, g, &gl);
    for (PetscInt s = 0; s < sg->k; s++) {
      if (!SGDIANeighbourInDomain(sg, g, s)) continue;
      for (PetscInt c = 0; c < dof; c++) {
        PetscInt col = (gl + sg->goff[s]) * dof + c;
        if (PetscRealPart(mla[col]) == 0.0) continue;
        for (PetscInt r = 0; r < dof; r++) {
          PetscScalar *e = &sg->v[(s * dof + c) * m + p * dof + r];
          if (ba) ba[p * dof + r] -= *e * xla[col];
          *e = 0.0;
        }
      }
    }
  }
  PetscCall(VecRestoreArrayRead(maskl, &mla));
  if (x && b) {
    PetscCall(VecRestoreArray(b, &ba));
    PetscCall(VecRestoreArrayRead(xg, &xla));
    PetscCall(DMRestoreLocalVector(sg->da, &xg));
  }
  PetscCall(DMRestoreLocalVector(sg->da, &maskl));
  PetscCall(DMRestoreGlobalVector(sg->da, &mask));
  PetscCall(SGDIAZeroLocalRows(A, nl, lrows, diag, x, b));
  PetscCall(PetscFree(lrows));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Whole-matrix operations
   ------------------------------------------------------------------------------------------------------ */

static PetscBool SGDIASameLayout(Mat A, Mat B)
{
  Mat_SGDIA *a = (Mat_SGDIA *)A->data, *b = (Mat_SGDIA *)B->data;

  if (a->nv != b->nv || a->dof != b->dof || a->k != b->k || a->m != b->m || a->sw != b->sw || a->stype != b->stype) return PETSC_FALSE;
  for (PetscInt d = 0; d < 3; d++)
    if (a->M[d] != b->M[d] || a->xs[d] != b->xs[d] || a->xm[d] != b->xm[d] || a->bd[d] != b->bd[d]) return PETSC_FALSE;
  return PETSC_TRUE;
}

static PetscErrorCode MatIsSGDIA(Mat B, PetscBool *flg)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)B, flg, MATSEQSGDIA, MATMPISGDIA, MATSEQSGDIACUDA, MATMPISGDIACUDA, ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Y += a X (or Y = X with a NULL mode) row by row through MatGetRow(), for X of any type */
static PetscErrorCode SGDIAAddRows(Mat Y, PetscScalar a, Mat X, InsertMode mode)
{
  PetscInt rstart, rend;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(X, &rstart, &rend));
  for (PetscInt row = rstart; row < rend; row++) {
    PetscInt           n;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscScalar       *sv;
    PetscCall(MatGetRow(X, row, &n, &cols, &vals));
    PetscCall(PetscMalloc1(n, &sv));
    for (PetscInt j = 0; j < n; j++) sv[j] = a * vals[j];
    PetscCall(MatSetValues(Y, 1, &row, n, cols, sv, mode));
    PetscCall(PetscFree(sv));
    PetscCall(MatRestoreRow(X, row, &n, &cols, &vals));
  }
  PetscCall(MatAssemblyBegin(Y, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Y, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAXPY_SGDIA(Mat Y, PetscScalar a, Mat X, MatStructure str)
{
  Mat_SGDIA *y = (Mat_SGDIA *)Y->data;
  PetscBool  isg;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(Y, PETSC_TRUE));
  (void)str;
  PetscCall(MatIsSGDIA(X, &isg));
  if (isg && SGDIASameLayout(Y, X)) {
    Mat_SGDIA *x = (Mat_SGDIA *)X->data;
    PetscCall(SGDIAHostAccess(X, PETSC_FALSE));
    for (PetscCount i = 0; i < y->nv; i++) y->v[i] += a * x->v[i];
    PetscCall(PetscLogFlops(2.0 * y->nv));
    PetscCall(PetscObjectStateIncrease((PetscObject)Y)); /* MatAXPY() does not, and device copies go by the state */
  } else {
    PetscCall(PetscInfo(Y, "MatAXPY with X of type %s: adding row by row\n", ((PetscObject)X)->type_name));
    PetscCall(SGDIAAddRows(Y, a, X, ADD_VALUES));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCopy_SGDIA(Mat A, Mat B, MatStructure str)
{
  Mat_SGDIA *a = (Mat_SGDIA *)A->data;
  PetscBool  isg;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_FALSE));
  (void)str;
  PetscCall(MatIsSGDIA(B, &isg));
  if (isg && SGDIASameLayout(A, B)) {
    Mat_SGDIA *b = (Mat_SGDIA *)B->data;
    PetscCall(SGDIAHostAccess(B, PETSC_TRUE));
    PetscCall(PetscArraycpy(b->v, a->v, a->nv));
    PetscCall(PetscObjectStateIncrease((PetscObject)B));
  } else {
    PetscCall(PetscInfo(A, "MatCopy into type %s: copying row by row\n", ((PetscObject)B)->type_name));
    PetscCall(MatZeroEntries(B));
    PetscCall(SGDIAAddRows(B, 1.0, A, INSERT_VALUES));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDuplicate_SGDIA(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_SGDIA *a = (Mat_SGDIA *)A->data;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_FALSE));
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), B));
  PetscCall(MatSetSizes(*B, A->rmap->n, A->cmap->n, A->rmap->N, A->cmap->N));
  PetscCall(MatSetType(*B, ((PetscObject)A)->type_name));
  PetscCall(MatSetDM(*B, a->da));
  PetscCall(MatSetUp(*B));
  if (op == MAT_COPY_VALUES || op == MAT_SHARE_NONZERO_PATTERN) {
    Mat_SGDIA *b = (Mat_SGDIA *)(*B)->data;
    if (op == MAT_COPY_VALUES) PetscCall(PetscArraycpy(b->v, a->v, a->nv));
  }
  PetscCall(MatAssemblyBegin(*B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*B, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatEqual_SGDIA(Mat A, Mat B, PetscBool *flg)
{
  PetscBool isg;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_FALSE));
  PetscCall(MatIsSGDIA(B, &isg));
  if (isg && SGDIASameLayout(A, B)) {
    Mat_SGDIA *a = (Mat_SGDIA *)A->data, *b = (Mat_SGDIA *)B->data;
    PetscBool  eq;
    PetscCall(SGDIAHostAccess(B, PETSC_FALSE));
    PetscCall(PetscArraycmp(a->v, b->v, a->nv, &eq));
    PetscCall(MPIU_Allreduce(&eq, flg, 1, GPUKIT_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)A)));
  } else {
    Mat Aa, Ba;
    PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &Aa));
    PetscCall(MatConvert(B, MATAIJ, MAT_INITIAL_MATRIX, &Ba));
    PetscCall(MatEqual(Aa, Ba, flg));
    PetscCall(MatDestroy(&Aa));
    PetscCall(MatDestroy(&Ba));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatNorm_SGDIA(Mat A, NormType type, PetscReal *nrm)
{
  Mat_SGDIA *sg   = (Mat_SGDIA *)A->data;
  MPI_Comm   comm = PetscObjectComm((PetscObject)A);
  PetscReal  loc  = 0.0;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_FALSE));
  if (type == NORM_FROBENIUS) {
    for (PetscCount i = 0; i < sg->nv; i++) loc += PetscRealPart(sg->v[i] * PetscConj(sg->v[i]));
    PetscCall(MPIU_Allreduce(&loc, nrm, 1, MPIU_REAL, MPIU_SUM, comm));
    *nrm = PetscSqrtReal(*nrm);
  } else if (type == NORM_INFINITY) {
    for (PetscInt i = 0; i < sg->m; i++) {
      PetscReal sum = 0.0;
      for (PetscInt j = 0; j < sg->k * sg->dof; j++) sum += PetscAbsScalar(sg->v[j * sg->m + i]);
      loc = PetscMax(loc, sum);
    }
    PetscCall(MPIU_Allreduce(&loc, nrm, 1, MPIU_REAL, MPIU_MAX, comm));
  } else if (type == NORM_1) { /* column sums land on the neighbours' owners */
    Vec          cs;
    PetscScalar *yl;
    PetscCall(VecSet(sg->yl, 0.0));
    PetscCall(VecGetArray(sg->yl, &yl));
    for (PetscInt p = 0; p < sg->np; p++) {
      PetscInt g[3], gl;
      SGDIAPointInfo(sg, p, g, &gl);
      for (PetscInt s = 0; s < sg->k; s++) {
        if (!SGDIANeighbourInDomain(sg, g, s)) continue;
        for (PetscInt c = 0; c < sg->dof; c++)
          for (PetscInt r = 0; r < sg->dof; r++) yl[(gl + sg->goff[s]) * sg->dof + c] += PetscAbsScalar(sg->v[(s * sg->dof + c) * sg->m + p * sg->dof + r]);
      }
    }
    PetscCall(VecRestoreArray(sg->yl, &yl));
    PetscCall(DMGetGlobalVector(sg->da, &cs));
    PetscCall(VecSet(cs, 0.0));
    PetscCall(DMLocalToGlobalBegin(sg->da, sg->yl, ADD_VALUES, cs));
    PetscCall(DMLocalToGlobalEnd(sg->da, sg->yl, ADD_VALUES, cs));
    PetscCall(VecNorm(cs, NORM_INFINITY, nrm));
    PetscCall(DMRestoreGlobalVector(sg->da, &cs));
  } else SETERRQ(comm, PETSC_ERR_SUP, "MATSGDIA computes the 1, infinity and Frobenius norms, not NormType %d", (int)type);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGetInfo_SGDIA(Mat A, MatInfoType flag, MatInfo *info)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  PetscLogDouble loc[5], glob[5];
  PetscCount     used;

  PetscFunctionBegin;
  if (sg->nzused < 0) { /* once per layout */
    used = 0;
    if (!sg->periodic_alias) { /* per stencil point, the owned points whose neighbour is in the domain: a product over the
                                  dimensions, O(k) (a pass over the grid took 0.2 s at 193^3) */
      for (PetscInt s = 0; s < sg->k; s++) {
        PetscCount n = 1;
        for (PetscInt d = 0; d < 3; d++) {
          PetscInt lo = sg->xs[d], hi = sg->xs[d] + sg->xm[d], dd = sg->delta[3 * s + d];
          if (sg->bd[d] != DM_BOUNDARY_PERIODIC) { /* x in [lo, hi) with x + dd in [0, M) */
            lo = PetscMax(lo, -dd);
            hi = PetscMin(hi, sg->M[d] - dd);
          }
          n *= hi > lo ? hi - lo : 0;
        }
        used += n * sg->dof * sg->dof;
      }
    } else { /* a periodic dimension shorter than the stencil: neighbours alias, count point by point */
      for (PetscInt p = 0; p < sg->np; p++) {
        PetscInt g[3], gl;
        SGDIAPointInfo(sg, p, g, &gl);
        for (PetscInt s = 0; s < sg->k; s++)
          if (SGDIANeighbourInDomain(sg, g, s) && SGDIACanonical(sg, g, s)) used += sg->dof * sg->dof;
      }
    }
    sg->nzused = used;
  }
  used = sg->nzused;
  loc[0] = (PetscLogDouble)sg->nv;
  loc[1] = (PetscLogDouble)used;
  loc[2] = (PetscLogDouble)(sg->nv - used);
  loc[3] = (PetscLogDouble)(sg->nv * sizeof(PetscScalar) + 3 * sg->k * sizeof(PetscInt));
  loc[4] = (PetscLogDouble)A->num_ass;
  if (flag == MAT_LOCAL) {
    for (int i = 0; i < 5; i++) glob[i] = loc[i];
  } else {
    PetscCall(MPIU_Allreduce(loc, glob, 5, MPIU_PETSCLOGDOUBLE, flag == MAT_GLOBAL_MAX ? MPI_MAX : MPI_SUM, PetscObjectComm((PetscObject)A)));
  }
  info->block_size        = (PetscLogDouble)sg->dof;
  info->nz_allocated      = glob[0];
  info->nz_used           = glob[1];
  info->nz_unneeded       = glob[2];
  info->memory            = glob[3];
  info->assemblies        = glob[4];
  info->mallocs           = 0;
  info->fill_ratio_given  = 0;
  info->fill_ratio_needed = 0;
  info->factor_mallocs    = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Conversion to and from AIJ
   ------------------------------------------------------------------------------------------------------ */

PetscErrorCode MatConvert_SGDIA_AIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat_SGDIA   *sg = (Mat_SGDIA *)A->data;
  Mat          B;
  PetscInt    *dnnz, *onnz, *cols, n;
  PetscScalar *vals;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_FALSE));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_ToAIJ, A, 0, 0, 0));
  PetscCall(PetscMalloc2(sg->k * sg->dof, &cols, sg->k * sg->dof, &vals));
  if (reuse == MAT_REUSE_MATRIX) {
    B = *newmat;
    PetscCall(MatZeroEntries(B));
  } else {
    PetscCall(MatCreate(PetscObjectComm((PetscObject)A), &B));
    PetscCall(MatSetSizes(B, A->rmap->n, A->cmap->n, A->rmap->N, A->cmap->N));
    PetscCall(MatSetBlockSizesFromMats(B, A, A));
    PetscCall(MatSetType(B, type));
    PetscCall(PetscMalloc2(sg->m, &dnnz, sg->m, &onnz));
    for (PetscInt i = 0; i < sg->m; i++) {
      PetscCall(SGDIAGetRowLocal(A, i, &n, cols, NULL));
      dnnz[i] = onnz[i] = 0;
      for (PetscInt j = 0; j < n; j++) {
        if (cols[j] >= A->cmap->rstart && cols[j] < A->cmap->rend) dnnz[i]++;
        else onnz[i]++;
      }
    }
    PetscCall(MatSeqAIJSetPreallocation(B, 0, dnnz));
    PetscCall(MatMPIAIJSetPreallocation(B, 0, dnnz, 0, onnz));
    PetscCall(PetscFree2(dnnz, onnz));
    PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  }
  for (PetscInt i = 0; i < sg->m; i++) {
    PetscInt row = A->rmap->rstart + i;
    PetscCall(SGDIAGetRowLocal(A, i, &n, cols, vals));
    PetscCall(MatSetValues(B, 1, &row, n, cols, vals, INSERT_VALUES));
  }
  PetscCall(PetscFree2(cols, vals));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  if (reuse != MAT_REUSE_MATRIX) PetscCall(MatSetDM(B, sg->da));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_ToAIJ, A, 0, 0, 0));
  if (reuse == MAT_INPLACE_MATRIX) PetscCall(MatHeaderReplace(A, &B));
  else *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_SGDIA(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscBool isaij;

  PetscFunctionBegin;
  PetscCall(PetscStrbeginswith(type, "aij", &isaij));
  if (!isaij) PetscCall(PetscStrbeginswith(type, "seqaij", &isaij));
  if (!isaij) PetscCall(PetscStrbeginswith(type, "mpiaij", &isaij));
  if (isaij) {
    PetscCall(MatConvert_SGDIA_AIJ(A, type, reuse, newmat));
  } else { /* any other type goes through AIJ */
    Mat T;
    PetscCall(PetscInfo(A, "Converting MATSGDIA to %s through MATAIJ\n", type));
    PetscCall(MatConvert_SGDIA_AIJ(A, MATAIJ, MAT_INITIAL_MATRIX, &T));
    if (reuse == MAT_INPLACE_MATRIX) {
      PetscCall(MatConvert(T, type, MAT_INPLACE_MATRIX, &T));
      PetscCall(MatHeaderReplace(A, &T));
    } else {
      PetscCall(MatConvert(T, type, reuse, newmat));
      PetscCall(MatDestroy(&T));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Any matrix whose DM is a DMDA -> MATSGDIA (the convertfrom slot of the SGDIA types) */
static PetscErrorCode MatConvertFrom_SGDIA(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  DM        da;
  Mat       B;
  PetscInt  rstart, rend;
  Mat_SGDIA *sg;

  PetscFunctionBegin;
  PetscCall(MatGetDM(A, &da));
  PetscCheck(da, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "Converting a %s matrix to %s needs the DMDA it lives on: attach it with MatSetDM() (DMCreateMatrix() does this)", ((PetscObject)A)->type_name, type);
  PetscCall(PetscLogEventBegin(MAT_SGDIA_FromAIJ, A, 0, 0, 0));
  if (reuse == MAT_REUSE_MATRIX) {
    B = *newmat;
    PetscCall(MatZeroEntries(B));
  } else {
    PetscCall(MatCreate(PetscObjectComm((PetscObject)A), &B));
    PetscCall(MatSetSizes(B, A->rmap->n, A->cmap->n, A->rmap->N, A->cmap->N));
    PetscCall(MatSetType(B, type));
    PetscCall(MatSetDM(B, da));
    PetscCall(MatSetUp(B));
  }
  sg = (Mat_SGDIA *)B->data;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt row = rstart; row < rend; row++) {
    PetscInt           n, nk = 0;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscInt          *kc;
    PetscScalar       *kv;
    PetscCall(MatGetRow(A, row, &n, &cols, &vals));
    PetscCall(PetscMalloc2(n, &kc, n, &kv));
    /* explicit zeros outside the stencil are not entries; nonzeros there are an error */
    for (PetscInt j = 0; j < n; j++) {
      PetscInt g[3], gc[3], c, r, s;
      SGDIAIndexToGrid(sg, B->rmap->range, row, g, &r);
      SGDIAIndexToGrid(sg, B->cmap->range, cols[j], gc, &c);
      s = SGDIAStencilPoint(sg, g, gc);
      if (s < 0 && vals[j] == 0.0) continue;
      kc[nk]   = cols[j];
      kv[nk++] = vals[j];
    }
    PetscCall(MatSetValues(B, 1, &row, nk, kc, kv, INSERT_VALUES));
    PetscCall(PetscFree2(kc, kv));
    PetscCall(MatRestoreRow(A, row, &n, &cols, &vals));
  }
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_FromAIJ, A, 0, 0, 0));
  if (reuse == MAT_INPLACE_MATRIX) PetscCall(MatHeaderReplace(A, &B));
  else *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Block diagonal
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatInvertBlockDiagonal_SGDIA(Mat A, const PetscScalar **values)
{
  Mat_SGDIA   *sg  = (Mat_SGDIA *)A->data;
  PetscInt     dof = sg->dof, n2 = dof * dof;
  PetscScalar *a;
  PetscInt    *piv;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_FALSE));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_InvBlkDiag, A, 0, 0, 0));
  if (!sg->ibdiag) PetscCall(PetscMalloc1(sg->np * n2, &sg->ibdiag));
  PetscCall(PetscMalloc2(2 * n2, &a, dof, &piv));
  for (PetscInt p = 0; p < sg->np; p++) {
    PetscScalar *inv = sg->ibdiag + p * n2, *lu = a;
    /* lu = block (column-major), inv = identity; Gauss-Jordan with partial pivoting */
    for (PetscInt c = 0; c < dof; c++)
      for (PetscInt r = 0; r < dof; r++) {
        lu[r + c * dof]  = sg->v[(sg->center * dof + c) * sg->m + p * dof + r];
        inv[r + c * dof] = r == c ? 1.0 : 0.0;
      }
    for (PetscInt c = 0; c < dof; c++) {
      PetscInt  pr = c;
      PetscReal best = PetscAbsScalar(lu[c + c * dof]);
      for (PetscInt r = c + 1; r < dof; r++)
        if (PetscAbsScalar(lu[r + c * dof]) > best) {
          best = PetscAbsScalar(lu[r + c * dof]);
          pr   = r;
        }
      if (best == 0.0) {
        PetscInt g[3], gl;
        SGDIAPointInfo(sg, p, g, &gl);
        SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MAT_LU_ZRPVT, "The %" PetscInt_FMT "x%" PetscInt_FMT " diagonal block of grid point (%" PetscInt_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT ") is singular (zero pivot in column %" PetscInt_FMT "); PCPBJACOBI cannot invert it", dof, dof, g[0], g[1], g[2], c);
      }
      if (pr != c)
        for (PetscInt j = 0; j < dof; j++) {
          PetscScalar t       = lu[c + j * dof];
          lu[c + j * dof]     = lu[pr + j * dof];
          lu[pr + j * dof]    = t;
          t                   = inv[c + j * dof];
          inv[c + j * dof]    = inv[pr + j * dof];
          inv[pr + j * dof]   = t;
        }
      {
        PetscScalar d = 1.0 / lu[c + c * dof];
        for (PetscInt j = 0; j < dof; j++) {
          lu[c + j * dof] *= d;
          inv[c + j * dof] *= d;
        }
      }
      for (PetscInt r = 0; r < dof; r++) {
        PetscScalar f;
        if (r == c) continue;
        f = lu[r + c * dof];
        if (f == 0.0) continue;
        for (PetscInt j = 0; j < dof; j++) {
          lu[r + j * dof] -= f * lu[c + j * dof];
          inv[r + j * dof] -= f * inv[c + j * dof];
        }
      }
    }
  }
  PetscCall(PetscFree2(a, piv));
  *values = sg->ibdiag;
  PetscCall(PetscLogEventEnd(MAT_SGDIA_InvBlkDiag, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   View, options, destroy, create
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatView_SGDIA(Mat A, PetscViewer viewer)
{
  Mat_SGDIA        *sg = (Mat_SGDIA *)A->data;
  PetscBool         isascii;
  PetscViewerFormat format;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (isascii && (format == PETSC_VIEWER_ASCII_INFO || format == PETSC_VIEWER_ASCII_INFO_DETAIL)) {
    PetscInt  gv[2], lv[2] = {sg->m, (PetscInt)sg->nv};
    PetscReal mib;
    PetscCall(MPIU_Allreduce(lv, gv, 2, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)A)));
    mib = (PetscReal)gv[1] * sizeof(PetscScalar) / 1048576.0;
    PetscCall(PetscViewerASCIIPrintf(viewer, "SG-DIA storage: %" PetscInt_FMT "-d grid %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT ", dof %" PetscInt_FMT ", %s stencil width %" PetscInt_FMT " (%" PetscInt_FMT " points)\n", sg->dim, sg->M[0], sg->M[1], sg->M[2], sg->dof, sg->stype == DMDA_STENCIL_STAR ? "star" : "box", sg->sw, sg->k));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  layout: %" PetscInt_FMT " columns (stencil point x component) of length (owned points x dof), column-major, no column indices\n", sg->k * sg->dof));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  boundaries: %s %s %s\n", DMBoundaryTypes[sg->bd[0]], DMBoundaryTypes[sg->bd[1]], DMBoundaryTypes[sg->bd[2]]));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  stored values: %" PetscInt_FMT " (%.3f MiB), AIJ copy held (for the operations run through AIJ): %s\n", gv[1], (double)mib, sg->aij ? "yes" : "no"));
    if (format == PETSC_VIEWER_ASCII_INFO_DETAIL) {
      PetscCall(PetscViewerASCIIPushSynchronized(viewer));
      PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "  [%d] owned box [%" PetscInt_FMT ",%" PetscInt_FMT ")x[%" PetscInt_FMT ",%" PetscInt_FMT ")x[%" PetscInt_FMT ",%" PetscInt_FMT "), %" PetscInt_FMT " rows\n", PetscGlobalRank, sg->xs[0], sg->xs[0] + sg->xm[0], sg->xs[1], sg->xs[1] + sg->xm[1], sg->xs[2], sg->xs[2] + sg->xm[2], sg->m));
      PetscCall(PetscViewerFlush(viewer));
      PetscCall(PetscViewerASCIIPopSynchronized(viewer));
    }
    if (sg->viewinfo) PetscCall((*sg->viewinfo)(A, viewer));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIAHostAccess(A, PETSC_FALSE));
  if (sg->dmview) { /* DMCreateMatrix() on several ranks views in the DMDA's natural ordering */
    PetscCall((*sg->dmview)(A, viewer));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  { /* everything else through AIJ */
    Mat B;
    PetscCall(MatConvert_SGDIA_AIJ(A, MATAIJ, MAT_INITIAL_MATRIX, &B));
    PetscCall(PetscObjectSetName((PetscObject)B, ((PetscObject)A)->name));
    PetscCall(MatView(B, viewer));
    PetscCall(MatDestroy(&B));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSGDIASetDropOutsideStencil_SGDIA(Mat A, PetscBool flg)
{
  PetscFunctionBegin;
  ((Mat_SGDIA *)A->data)->drop_outside = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetFromOptions_SGDIA(Mat A, GpukitOptionItems PetscOptionsObject)
{
  Mat_SGDIA *sg  = (Mat_SGDIA *)A->data;
  PetscBool  flg = sg->drop_outside, set;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "MATSGDIA options");
  PetscCall(PetscOptionsBool("-mat_sgdia_drop_outside_stencil", "Drop entries outside the DMDA stencil instead of raising an error", "MatSGDIASetDropOutsideStencil", flg, &flg, &set));
  if (set) PetscCall(MatSGDIASetDropOutsideStencil(A, flg));
  flg = (PetscBool)(sg->mpk && sg->mpk->force == 1);
  PetscCall(PetscOptionsBool("-mat_sgdia_mpk_ghost_region", "Matrix powers kernel on several ranks or periodic grids: one exchange of a ghost region of depth k*sw per call (true: always, an error where it does not fit; false: an exchange and a product per level; default: where it fits)", "MATSGDIA", flg, &flg, &set));
  if (set) PetscCall(SGDIAMPKSetForce_Private(A, flg ? 1 : 0));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSGDIAGetArray_SGDIA(Mat A, PetscScalar **v)
{
  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_TRUE));
  *v = ((Mat_SGDIA *)A->data)->v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSGDIAGetStencil_SGDIA(Mat A, PetscInt *dof, PetscInt *k, const PetscInt **delta)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)A->data;

  PetscFunctionBegin;
  if (dof) *dof = sg->dof;
  if (k) *k = sg->k;
  if (delta) *delta = sg->delta;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_SGDIA(Mat A)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)A->data;

  PetscFunctionBegin;
  PetscCall(SGDIAFreeStorage_Private(sg));
  PetscCall(PetscFree(A->data));
  PetscCall(GpukitMatAIJForwardUninstall(A));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSGDIASetDropOutsideStencil_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSGDIAGetArray_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSGDIAGetStencil_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqsgdia_seqaij_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpisgdia_mpiaij_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMatrixPowers_C", NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCreate_SGDIA_Common(Mat A, MatType name)
{
  Mat_SGDIA *sg;

  PetscFunctionBegin;
  PetscCall(PetscNew(&sg));
  A->data            = (void *)sg;
  sg->roworiented    = PETSC_TRUE;
  A->ops->setup              = MatSetUp_SGDIA;
  A->ops->setvalues          = MatSetValues_SGDIA_Logged;
  A->ops->assemblybegin      = MatAssemblyBegin_SGDIA;
  A->ops->assemblyend        = MatAssemblyEnd_SGDIA;
  A->ops->zeroentries        = MatZeroEntries_SGDIA;
  A->ops->setoption          = MatSetOption_SGDIA;
  A->ops->mult               = MatMult_SGDIA;
  A->ops->multadd            = MatMultAdd_SGDIA;
  A->ops->multtranspose      = MatMultTranspose_SGDIA;
  A->ops->multtransposeadd   = MatMultTransposeAdd_SGDIA;
  A->ops->getdiagonal        = MatGetDiagonal_SGDIA;
  A->ops->scale              = MatScale_SGDIA;
  A->ops->shift              = MatShift_SGDIA;
  A->ops->diagonalset        = MatDiagonalSet_SGDIA;
  A->ops->diagonalscale      = MatDiagonalScale_SGDIA;
  A->ops->getrow             = MatGetRow_SGDIA;
  A->ops->restorerow         = MatRestoreRow_SGDIA;
  A->ops->zerorows           = MatZeroRows_SGDIA;
  A->ops->zerorowscolumns    = MatZeroRowsColumns_SGDIA;
  A->ops->axpy               = MatAXPY_SGDIA;
  A->ops->copy               = MatCopy_SGDIA;
  A->ops->duplicate          = MatDuplicate_SGDIA;
  A->ops->equal              = MatEqual_SGDIA;
  A->ops->norm               = MatNorm_SGDIA;
  A->ops->getinfo            = MatGetInfo_SGDIA;
  A->ops->convert            = MatConvert_SGDIA;
  A->ops->convertfrom        = MatConvertFrom_SGDIA;
  A->ops->invertblockdiagonal = MatInvertBlockDiagonal_SGDIA;
  A->ops->fdcoloringcreate   = MatSGDIAFDColoringCreate_Private;
  A->ops->fdcoloringsetup    = MatSGDIAFDColoringSetUp_Private;
  A->ops->fdcoloringapply    = MatSGDIAFDColoringApply_Private;
  A->ops->view               = MatView_SGDIA;
  A->ops->setfromoptions     = MatSetFromOptions_SGDIA;
  A->ops->destroy            = MatDestroy_SGDIA;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSGDIASetDropOutsideStencil_C", MatSGDIASetDropOutsideStencil_SGDIA));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSGDIAGetArray_C", MatSGDIAGetArray_SGDIA));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSGDIAGetStencil_C", MatSGDIAGetStencil_SGDIA));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMatrixPowers_C", MatMatrixPowers_SGDIA)); /* KSPCACG's matrix powers kernel */
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, name));
  /* every read-only op left NULL above that AIJ has (SOR, sub-matrices, overlap, diagonal block, products, graph,
     symmetry tests, IJ structure, ...) runs on the AIJ copy; our view stays the one for every viewer (it keeps the
     DMDA's natural-ordering view that DMCreateMatrix() installs on several ranks) */
  PetscCall(GpukitMatAIJForwardInstall(A, SGDIAGetAIJ_Private));
  A->ops->view = MatView_SGDIA;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Sizes already set that are not square (on some rank): no stencil operator. PETSc code that makes a matrix of the
   operator's type for another purpose (PCGAMG's prolongator: MatSetSizes(), MatSetType(P, type of A), AIJ
   preallocation) gets MATAIJ; *aij says so (the matrix is then set up as MATAIJ, nothing else to do) */
static PetscErrorCode SGDIACreateRectangular_Private(Mat A, PetscBool *aij)
{
  PetscBool rect;

  PetscFunctionBegin;
  rect = (PetscBool)((A->rmap->n >= 0 && A->cmap->n >= 0 && A->rmap->n != A->cmap->n) || (A->rmap->N >= 0 && A->cmap->N >= 0 && A->rmap->N != A->cmap->N));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &rect, 1, GPUKIT_MPI_BOOL, MPI_LOR, PetscObjectComm((PetscObject)A)));
  *aij = rect;
  if (rect) {
    PetscCall(PetscInfo(A, "A MATSGDIA matrix with non-square sizes is no stencil operator (PCGAMG makes its prolongator with the operator's type): it is made MATAIJ\n"));
    PetscCall(MatSetType(A, MATAIJ));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCreate_SeqSGDIA(Mat A)
{
  PetscBool aij;

  PetscFunctionBegin;
  PetscCall(SGDIACreateRectangular_Private(A, &aij));
  if (aij) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatCreate_SGDIA_Common(A, MATSEQSGDIA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCreate_MPISGDIA(Mat A)
{
  PetscBool aij;

  PetscFunctionBegin;
  PetscCall(SGDIACreateRectangular_Private(A, &aij));
  if (aij) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatCreate_SGDIA_Common(A, MATMPISGDIA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the root type: MATSEQSGDIA on one rank, MATMPISGDIA on more */
PetscErrorCode MatCreate_SGDIA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(GpukitMatSetTypeBySize_Private(A, MATSEQSGDIA, MATMPISGDIA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscLogEvent MAT_SGDIA_Mult, MAT_SGDIA_MultTr, MAT_SGDIA_SetValues, MAT_SGDIA_Assembly, MAT_SGDIA_ToAIJ, MAT_SGDIA_FromAIJ, MAT_SGDIA_FDColor, MAT_SGDIA_InvBlkDiag;
PetscLogEvent MAT_SGDIA_CopyToGPU, MAT_SGDIA_CopyFromGPU, MAT_SGDIA_MultCUDA, MAT_SGDIA_MultTrCUDA, MAT_SGDIA_OpsCUDA, MAT_SGDIA_InvBlkDiagCUDA, MAT_SGDIA_COO;

/* the family's types, solvers and log events (the device-only events of MATSGDIACUDA: MatRegister_SGDIACUDA_Private()) */
PetscErrorCode MatRegister_SGDIA_Private(void)
{
  PetscFunctionBegin;
  PetscCall(MatRegisterRootName(MATSGDIA, MATSEQSGDIA, MATMPISGDIA));
  PetscCall(PetscLogEventRegister("SGDIAMult", MAT_CLASSID, &MAT_SGDIA_Mult));
  PetscCall(PetscLogEventRegister("SGDIAMultTr", MAT_CLASSID, &MAT_SGDIA_MultTr));
  PetscCall(PetscLogEventRegister("SGDIASetValues", MAT_CLASSID, &MAT_SGDIA_SetValues));
  PetscCall(PetscLogEventRegister("SGDIAAssembly", MAT_CLASSID, &MAT_SGDIA_Assembly));
  PetscCall(PetscLogEventRegister("SGDIAToAIJ", MAT_CLASSID, &MAT_SGDIA_ToAIJ));
  PetscCall(PetscLogEventRegister("SGDIAFromAIJ", MAT_CLASSID, &MAT_SGDIA_FromAIJ));
  PetscCall(PetscLogEventRegister("SGDIAFDColor", MAT_CLASSID, &MAT_SGDIA_FDColor));
  PetscCall(PetscLogEventRegister("SGDIAInvBlkDiag", MAT_CLASSID, &MAT_SGDIA_InvBlkDiag));
  PetscCall(PetscLogEventRegister("SGDIAMatPowers", MAT_CLASSID, &MAT_SGDIA_MatPowers)); /* MatMatrixPowers_SGDIA(), sgdiampk.c */
  PetscCall(PetscLogEventRegister("SGDIACopyToGPU", MAT_CLASSID, &MAT_SGDIA_CopyToGPU));
  PetscCall(PetscLogEventRegister("SGDIACopyFromGPU", MAT_CLASSID, &MAT_SGDIA_CopyFromGPU));
  PetscCall(PetscLogEventRegister("SGDIAMultCUDA", MAT_CLASSID, &MAT_SGDIA_MultCUDA));
  PetscCall(PetscLogEventRegister("SGDIAMultTrCUDA", MAT_CLASSID, &MAT_SGDIA_MultTrCUDA));
  PetscCall(PetscLogEventRegister("SGDIAOpsCUDA", MAT_CLASSID, &MAT_SGDIA_OpsCUDA));
  PetscCall(PetscLogEventRegister("SGDIAInvBlkDgCUDA", MAT_CLASSID, &MAT_SGDIA_InvBlkDiagCUDA));
  PetscCall(PetscLogEventRegister("SGDIASetValsCOO", MAT_CLASSID, &MAT_SGDIA_COO));
  PetscCall(MatRegister(MATSGDIA, MatCreate_SGDIA));
  PetscCall(MatRegister(MATSEQSGDIA, MatCreate_SeqSGDIA));
  PetscCall(MatRegister(MATMPISGDIA, MatCreate_MPISGDIA));
  /* factorizations of the AIJ copy: PETSc's on one rank, MUMPS and SuperLU_dist on any number (the CUDA types,
     whose names start with these, find them too) */
  PetscCall(GpukitMatAIJForwardRegisterFactors(MATSEQSGDIA));
  PetscCall(GpukitMatAIJForwardRegisterFactors(MATMPISGDIA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Public API
   ------------------------------------------------------------------------------------------------------ */

/*@
  MatCreateSGDIA - Creates a `MATSGDIA` matrix for the stencil operator of a `DMDA`

  Collective

  Input Parameter:
. da - the `DMDA`; its dimension, degrees of freedom, stencil type and width, and boundary types define the storage

  Output Parameter:
. A - the matrix, set up (all values zero) and ready for `MatSetValuesStencil()`

  Level: beginner

  Note:
  `DMCreateMatrix()` with `-dm_mat_type sgdia` (or `DMSetMatType(da, MATSGDIA)`) gives the same matrix.

.seealso: `MATSGDIA`, `DMCreateMatrix()`, `MatSGDIASetDropOutsideStencil()`
@*/
PetscErrorCode MatCreateSGDIA(DM da, Mat *A)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(da, DM_CLASSID, 1);
  PetscCall(GpukitInitializePackage());
  PetscCall(MatCreate(PetscObjectComm((PetscObject)da), A));
  PetscCall(MatSetType(*A, MATSGDIA));
  PetscCall(MatSetDM(*A, da));
  PetscCall(MatSetUp(*A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatSGDIASetDropOutsideStencil - Sets whether entries outside the DMDA stencil are dropped (and counted,
  see `-info`) instead of raising an error

  Logically Collective

  Input Parameters:
+ A   - the `MATSGDIA` matrix
- flg - `PETSC_TRUE` to drop such entries, `PETSC_FALSE` (default) to raise `PETSC_ERR_ARG_OUTOFRANGE`

  Options Database Key:
. -mat_sgdia_drop_outside_stencil - drop them

  Level: intermediate

.seealso: `MATSGDIA`, `MatSetOption()`, `MAT_NEW_NONZERO_LOCATIONS`
@*/
PetscErrorCode MatSGDIASetDropOutsideStencil(Mat A, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveBool(A, flg, 2);
  PetscTryMethod(A, "MatSGDIASetDropOutsideStencil_C", (Mat, PetscBool), (A, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatSGDIAGetArray - Gives the host array of a `MATSGDIA` matrix: k*dof columns of length (local rows),
  column-major, as described in docs/sgdia.md

  Not Collective

  Input Parameter:
. A - the `MATSGDIA` matrix, set up

  Output Parameter:
. v - the values; value (s*dof + c)*m + p*dof + r couples component r of owned point p to component c of its
      neighbour through stencil point s (see `MatSGDIAGetStencil()`), m being the number of local rows

  Level: advanced

  Note:
  Call `MatSGDIARestoreArray()` when done; writing into the array counts as a change of values.

.seealso: `MATSGDIA`, `MatSGDIARestoreArray()`, `MatSGDIAGetStencil()`
@*/
PetscErrorCode MatSGDIAGetArray(Mat A, PetscScalar **v)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscUseMethod(A, "MatSGDIAGetArray_C", (Mat, PetscScalar **), (A, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatSGDIARestoreArray - Returns the array from `MatSGDIAGetArray()`

  Not Collective

  Input Parameters:
+ A - the `MATSGDIA` matrix
- v - the array

  Level: advanced

.seealso: `MATSGDIA`, `MatSGDIAGetArray()`
@*/
PetscErrorCode MatSGDIARestoreArray(Mat A, PetscScalar **v)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  *v = NULL;
  PetscCall(PetscObjectStateIncrease((PetscObject)A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatSGDIAGetStencil - Gives the stencil of a `MATSGDIA` matrix

  Not Collective

  Input Parameter:
. A - the `MATSGDIA` matrix, set up

  Output Parameters:
+ dof   - degrees of freedom per grid point (or `NULL`)
. k     - number of stencil points (or `NULL`)
- delta - 3*k grid offsets (dx, dy, dz) of the stencil points, in storage order (or `NULL`)

  Level: advanced

.seealso: `MATSGDIA`, `MatSGDIAGetArray()`
@*/
PetscErrorCode MatSGDIAGetStencil(Mat A, PetscInt *dof, PetscInt *k, const PetscInt **delta)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscUseMethod(A, "MatSGDIAGetStencil_C", (Mat, PetscInt *, PetscInt *, const PetscInt **), (A, dof, k, delta));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device array functions: composed by MATSGDIACUDA; any other type gets an error that says so */
static PetscErrorCode SGDIACUDAArray_Private(Mat A, const char name[], const char fname[], void *v)
{
  PetscErrorCode (*f)(Mat, void *) = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  GpukitAssertPointer(v, 2);
  PetscCall(PetscObjectQueryFunction((PetscObject)A, name, &f));
  PetscCheck(f, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "%s() needs a MATSGDIACUDA matrix (-dm_mat_type sgdiacuda), not one of type %s", fname, ((PetscObject)A)->type_name);
  PetscCall((*f)(A, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatSGDIAGetArrayCUDA - Gives the device array of a `MATSGDIACUDA` matrix, for reading and writing, with the
  layout of `MatSGDIAGetArray()`

  Not Collective

  Input Parameter:
. A - the `MATSGDIACUDA` matrix, set up

  Output Parameter:
. v - device pointer to the k*dof*m values (m local rows; see `MatSGDIAGetStencil()` and docs/sgdia.md)

  Level: advanced

  Notes:
  The device copy is brought up to date first (a copy from the host only if the host values are newer).
  Work on the array on the stream of the current `PetscDeviceContext`, or synchronise before the restore.
  Call `MatSGDIARestoreArrayCUDA()` when done: the device copy then holds the only valid values and the
  object state increases. Slots whose neighbour lies outside a non-periodic domain must stay zero.

.seealso: `MATSGDIACUDA`, `MatSGDIARestoreArrayCUDA()`, `MatSGDIAGetArrayReadCUDA()`, `MatSGDIAGetArrayWriteCUDA()`, `MatSGDIAGetArray()`
@*/
PetscErrorCode MatSGDIAGetArrayCUDA(Mat A, PetscScalar **v)
{
  PetscFunctionBegin;
  PetscCall(SGDIACUDAArray_Private(A, "MatSGDIAGetArrayCUDA_C", "MatSGDIAGetArrayCUDA", (void *)v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatSGDIARestoreArrayCUDA - Returns the array from `MatSGDIAGetArrayCUDA()`

  Not Collective

  Input Parameters:
+ A - the `MATSGDIACUDA` matrix
- v - the array, set to NULL

  Level: advanced

.seealso: `MATSGDIACUDA`, `MatSGDIAGetArrayCUDA()`
@*/
PetscErrorCode MatSGDIARestoreArrayCUDA(Mat A, PetscScalar **v)
{
  PetscFunctionBegin;
  PetscCall(SGDIACUDAArray_Private(A, "MatSGDIARestoreArrayCUDA_C", "MatSGDIARestoreArrayCUDA", (void *)v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatSGDIAGetArrayReadCUDA - Gives the device array of a `MATSGDIACUDA` matrix, for reading only

  Not Collective

  Input Parameter:
. A - the `MATSGDIACUDA` matrix, set up

  Output Parameter:
. v - device pointer to the values (layout of `MatSGDIAGetArray()`)

  Level: advanced

.seealso: `MATSGDIACUDA`, `MatSGDIARestoreArrayReadCUDA()`, `MatSGDIAGetArrayCUDA()`
@*/
PetscErrorCode MatSGDIAGetArrayReadCUDA(Mat A, const PetscScalar **v)
{
  PetscFunctionBegin;
  PetscCall(SGDIACUDAArray_Private(A, "MatSGDIAGetArrayReadCUDA_C", "MatSGDIAGetArrayReadCUDA", (void *)v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatSGDIARestoreArrayReadCUDA - Returns the array from `MatSGDIAGetArrayReadCUDA()`

  Not Collective

  Input Parameters:
+ A - the `MATSGDIACUDA` matrix
- v - the array, set to NULL

  Level: advanced

.seealso: `MATSGDIACUDA`, `MatSGDIAGetArrayReadCUDA()`
@*/
PetscErrorCode MatSGDIARestoreArrayReadCUDA(Mat A, const PetscScalar **v)
{
  PetscFunctionBegin;
  PetscCall(SGDIACUDAArray_Private(A, "MatSGDIARestoreArrayReadCUDA_C", "MatSGDIARestoreArrayReadCUDA", (void *)v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatSGDIAGetArrayWriteCUDA - Gives the device array of a `MATSGDIACUDA` matrix, to be overwritten: the way
  device code assembles the matrix without the host

  Not Collective

  Input Parameter:
. A - the `MATSGDIACUDA` matrix, set up

  Output Parameter:
. v - device pointer to the k*dof*m values (layout of `MatSGDIAGetArray()`)

  Level: advanced

  Notes:
  Nothing is copied from the host: set every in-stencil value. The slots whose neighbour lies outside a
  non-periodic domain are zero in the array you get and must stay zero. Call `MatSGDIARestoreArrayWriteCUDA()`
  when done; no `MatAssemblyBegin()`/`MatAssemblyEnd()` is needed.

.seealso: `MATSGDIACUDA`, `MatSGDIARestoreArrayWriteCUDA()`, `MatSGDIAGetStencil()`, `MatSetValuesCOO()`
@*/
PetscErrorCode MatSGDIAGetArrayWriteCUDA(Mat A, PetscScalar **v)
{
  PetscFunctionBegin;
  PetscCall(SGDIACUDAArray_Private(A, "MatSGDIAGetArrayWriteCUDA_C", "MatSGDIAGetArrayWriteCUDA", (void *)v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatSGDIARestoreArrayWriteCUDA - Returns the array from `MatSGDIAGetArrayWriteCUDA()`; the device copy then
  holds the only valid values

  Not Collective

  Input Parameters:
+ A - the `MATSGDIACUDA` matrix
- v - the array, set to NULL

  Level: advanced

.seealso: `MATSGDIACUDA`, `MatSGDIAGetArrayWriteCUDA()`
@*/
PetscErrorCode MatSGDIARestoreArrayWriteCUDA(Mat A, PetscScalar **v)
{
  PetscFunctionBegin;
  PetscCall(SGDIACUDAArray_Private(A, "MatSGDIARestoreArrayWriteCUDA_C", "MatSGDIARestoreArrayWriteCUDA", (void *)v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

