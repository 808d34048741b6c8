/*
   The AIJ forwarder (gpukitaijfwd.h): read-only operations, products and factorizations of a matrix type that owns
   its storage, run on the AIJ copy the type supplies.

   What is forwarded is decided per op slot of struct _MatOps: a slot gets our forwarder only when the type left it
   NULL and AIJ of the same kind (MATSEQAIJ on one rank, MATMPIAIJ on more) implements it, so MatHasOperation()
   says what AIJ would say (exceptions: convert, which AIJ does through composed converters, is always installed;
   multdiagonalblock, which AIJ sets at assembly when it finds inodes, is always installed and our hasoperation asks
   the copy about it). Ops that change the matrix are never in the table below.
*/
#include "gpukitaijfwd.h"


#define FWD_CONTAINER "GpukitMatAIJFwd"

typedef struct {
  GpukitMatGetAIJFn getaij;
  PetscErrorCode (*view)(Mat, PetscViewer); /* the type's own view (ASCII viewers go there) */
  Mat rowcopy, ijcopy, colijcopy;           /* the copy a get was served from, for the matching restore */
} FwdCtx;

static PetscErrorCode FwdGetCtx(Mat A, FwdCtx **ctx)
{
  PetscContainer c;

  PetscFunctionBegin;
  *ctx = NULL;
  PetscCall(PetscObjectQuery((PetscObject)A, FWD_CONTAINER, (PetscObject *)&c));
  if (c) PetscCall(PetscContainerGetPointer(c, (void **)ctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the current AIJ copy of A, with A's symmetry knowledge */
static PetscErrorCode FwdGetAIJ(Mat A, Mat *aij)
{
  FwdCtx *ctx;

  PetscFunctionBegin;
  PetscCall(FwdGetCtx(A, &ctx));
  PetscCheck(ctx, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "Matrix of type %s has no AIJ forwarder (GpukitMatAIJForwardInstall() was not called by its constructor)", ((PetscObject)A)->type_name);
  PetscCall((*ctx->getaij)(A, aij));
  PetscCheck(*aij, PetscObjectComm((PetscObject)A), PETSC_ERR_PLIB, "The %s matrix returned no AIJ copy", ((PetscObject)A)->type_name);
  PetscCheck((*aij)->rmap->n == A->rmap->n && (*aij)->cmap->n == A->cmap->n && (*aij)->rmap->N == A->rmap->N && (*aij)->cmap->N == A->cmap->N, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The AIJ copy of the %s matrix has local sizes %" PetscInt_FMT "x%" PetscInt_FMT " (global %" PetscInt_FMT "x%" PetscInt_FMT "), the matrix %" PetscInt_FMT "x%" PetscInt_FMT " (%" PetscInt_FMT "x%" PetscInt_FMT ")",
             ((PetscObject)A)->type_name, (*aij)->rmap->n, (*aij)->cmap->n, (*aij)->rmap->N, (*aij)->cmap->N, A->rmap->n, A->cmap->n, A->rmap->N, A->cmap->N);
  if ((*aij)->rmap->bs != A->rmap->bs || (*aij)->cmap->bs != A->cmap->bs) {
    PetscCall(PetscInfo(A, "The AIJ copy of the %s matrix gets its block sizes %" PetscInt_FMT "x%" PetscInt_FMT "\n", ((PetscObject)A)->type_name, A->rmap->bs, A->cmap->bs));
    PetscCall(MatSetBlockSizesFromMats(*aij, A, A));
  }
  (*aij)->symmetric                   = A->symmetric;
  (*aij)->hermitian                   = A->hermitian;
  (*aij)->structurally_symmetric      = A->structurally_symmetric;
  (*aij)->spd                         = A->spd;
  (*aij)->symmetry_eternal            = A->symmetry_eternal;
  (*aij)->structural_symmetry_eternal = A->structural_symmetry_eternal;
  (*aij)->spd_eternal                 = A->spd_eternal;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the AIJ copy when M has a forwarder, M itself otherwise */
static PetscErrorCode FwdSource(Mat M, Mat *src)
{
  FwdCtx *ctx;

  PetscFunctionBegin;
  PetscCall(FwdGetCtx(M, &ctx));
  if (ctx) PetscCall(FwdGetAIJ(M, src));
  else *src = M;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitMatAIJForwardGetAIJ - Returns the AIJ copy through which a gpukit matrix type runs the operations it does
  not implement

  Collective

  Input Parameter:
. A - a matrix whose type installed the AIJ forwarder

  Output Parameter:
. aij - the copy, current with A's values; owned by A (do not destroy it, do not change it)

  Level: developer

.seealso: `GpukitMatAIJForwardInstall()`, `GpukitMatAIJForwardRegisterFactors()`
@*/
PetscErrorCode GpukitMatAIJForwardGetAIJ(Mat A, Mat *aij)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  GpukitAssertPointer(aij, 2);
  PetscCall(FwdGetAIJ(A, aij));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* calls op of the copy, with a clear error when the copy's type lacks it */
#define FWD_CALL(aij, op, ...) \
  do { \
    PetscCheck((aij)->ops->op, PetscObjectComm((PetscObject)(aij)), PETSC_ERR_SUP, "The AIJ copy (type %s) has no method " #op, ((PetscObject)(aij))->type_name); \
    PetscCall((*(aij)->ops->op)(aij, __VA_ARGS__)); \
  } while (0)

/* ------------------------------------------------------------------------------------------------------------
   The forwarders: each gets the copy and runs AIJ's own op on it
   ------------------------------------------------------------------------------------------------------------ */
static PetscErrorCode FwdGetRow(Mat A, PetscInt row, PetscInt *nz, PetscInt **idx, PetscScalar **v)
{
  FwdCtx *ctx;
  Mat     aij;

  PetscFunctionBegin;
  PetscCall(FwdGetCtx(A, &ctx));
  PetscCall(FwdGetAIJ(A, &aij));
  ctx->rowcopy = aij;
  FWD_CALL(aij, getrow, row, nz, idx, v);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdRestoreRow(Mat A, PetscInt row, PetscInt *nz, PetscInt **idx, PetscScalar **v)
{
  FwdCtx *ctx;

  PetscFunctionBegin;
  PetscCall(FwdGetCtx(A, &ctx));
  PetscCheck(ctx->rowcopy, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "MatRestoreRow() without MatGetRow()");
  if (ctx->rowcopy->ops->restorerow) PetscCall((*ctx->rowcopy->ops->restorerow)(ctx->rowcopy, row, nz, idx, v));
  ctx->rowcopy = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdSOR(Mat A, Vec b, PetscReal omega, MatSORType flag, PetscReal shift, PetscInt its, PetscInt lits, Vec x)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, sor, b, omega, flag, shift, its, lits, x);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The result is an AIJ matrix; MatTranspose() records A as its parent. MAT_REUSE_MATRIX: AIJ's reuse checks the
   parent record, so it is pointed at the copy for the call. MAT_INPLACE_MATRIX: A gets its own type back. */
static PetscErrorCode FwdTranspose(Mat A, MatReuse reuse, Mat *B)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  if (reuse == MAT_INITIAL_MATRIX) {
    FWD_CALL(aij, transpose, MAT_INITIAL_MATRIX, B);
  } else if (reuse == MAT_REUSE_MATRIX) {
    PetscContainer        c;
    GpukitMatParentState *rb;
    PetscObjectId         id;
    PetscObjectState      nz;

    PetscCall(PetscObjectQuery((PetscObject)*B, "MatTransposeParent", (PetscObject *)&c));
    PetscCheck(c, PetscObjectComm((PetscObject)*B), PETSC_ERR_ARG_WRONG, "Reuse matrix was not generated from a call to MatTranspose()");
    PetscCall(PetscContainerGetPointer(c, (void **)&rb));
    PetscCheck(rb->nonzerostate == A->nonzerostate, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "The nonzero pattern of the %s matrix changed since the transpose was made: use MAT_INITIAL_MATRIX", ((PetscObject)A)->type_name);
    id               = rb->id;
    nz               = rb->nonzerostate;
    rb->id           = ((PetscObject)aij)->id;
    rb->nonzerostate = aij->nonzerostate;
    FWD_CALL(aij, transpose, MAT_REUSE_MATRIX, B);
    rb->id           = id;
    rb->nonzerostate = nz;
  } else {
    Mat T, N;

    PetscCall(PetscInfo(A, "In-place transpose of a %s matrix: through its AIJ copy, converted back to %s\n", ((PetscObject)A)->type_name, ((PetscObject)A)->type_name));
    FWD_CALL(aij, transpose, MAT_INITIAL_MATRIX, &T);
    PetscCall(MatConvert(T, ((PetscObject)A)->type_name, MAT_INITIAL_MATRIX, &N));
    PetscCall(MatDestroy(&T));
    PetscCall(MatHeaderReplace(A, &N));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdTransposeSymbolic(Mat A, Mat *B)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, transposesymbolic, B);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdGetInfo(Mat A, MatInfoType flag, MatInfo *info)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, getinfo, flag, info);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatEqual() calls this when A and B share it: both have forwarders (or B is A's type) */
static PetscErrorCode FwdEqual(Mat A, Mat B, PetscBool *flg)
{
  Mat a, b;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &a));
  PetscCall(FwdSource(B, &b));
  PetscCall(MatEqual(a, b, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdNorm(Mat A, NormType type, PetscReal *nrm)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, norm, type, nrm);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdGetDiagonalBlock(Mat A, Mat *d)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, getdiagonalblock, d);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdCreateSubMatrices(Mat A, PetscInt n, const IS irow[], const IS icol[], MatReuse scall, Mat *submat[])
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, createsubmatrices, n, irow, icol, scall, submat);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdCreateSubMatricesMPI(Mat A, PetscInt n, const IS irow[], const IS icol[], MatReuse scall, Mat *submat[])
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, createsubmatricesmpi, n, irow, icol, scall, submat);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdIncreaseOverlap(Mat A, PetscInt n, IS is[], PetscInt ov)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, increaseoverlap, n, is, ov);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdGetValues(Mat A, PetscInt m, const PetscInt im[], PetscInt n, const PetscInt in[], PetscScalar v[])
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, getvalues, m, im, n, in, v);
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define FWD_ROWREDUCTION(name, op) \
  static PetscErrorCode name(Mat A, Vec v, PetscInt idx[]) \
  { \
    Mat aij; \
    PetscFunctionBegin; \
    PetscCall(FwdGetAIJ(A, &aij)); \
    FWD_CALL(aij, op, v, idx); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }
FWD_ROWREDUCTION(FwdGetRowMax, getrowmax)
FWD_ROWREDUCTION(FwdGetRowMin, getrowmin)
FWD_ROWREDUCTION(FwdGetRowMaxAbs, getrowmaxabs)
FWD_ROWREDUCTION(FwdGetRowMinAbs, getrowminabs)

#define FWD_IJ(name, op, slot) \
  static PetscErrorCode name(Mat A, PetscInt shift, PetscBool sym, PetscBool inode, PetscInt *n, const PetscInt *ia[], const PetscInt *ja[], PetscBool *done) \
  { \
    FwdCtx *ctx; \
    Mat     aij; \
    PetscFunctionBegin; \
    PetscCall(FwdGetCtx(A, &ctx)); \
    PetscCall(FwdGetAIJ(A, &aij)); \
    ctx->slot = aij; \
    if (aij->ops->op) PetscCall((*aij->ops->op)(aij, shift, sym, inode, n, ia, ja, done)); \
    else *done = PETSC_FALSE; \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }
#define FWD_RESTOREIJ(name, op, slot) \
  static PetscErrorCode name(Mat A, PetscInt shift, PetscBool sym, PetscBool inode, PetscInt *n, const PetscInt *ia[], const PetscInt *ja[], PetscBool *done) \
  { \
    FwdCtx *ctx; \
    Mat     aij; \
    PetscFunctionBegin; \
    PetscCall(FwdGetCtx(A, &ctx)); \
    aij = ctx->slot; \
    PetscCheck(aij, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "Restore of the IJ structure of a %s matrix without a matching get", ((PetscObject)A)->type_name); \
    if (aij->ops->op) PetscCall((*aij->ops->op)(aij, shift, sym, inode, n, ia, ja, done)); \
    else *done = PETSC_FALSE; \
    ctx->slot = NULL; \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }
FWD_IJ(FwdGetRowIJ, getrowij, ijcopy)
FWD_RESTOREIJ(FwdRestoreRowIJ, restorerowij, ijcopy)
FWD_IJ(FwdGetColumnIJ, getcolumnij, colijcopy)
FWD_RESTOREIJ(FwdRestoreColumnIJ, restorecolumnij, colijcopy)

/* MatGetOrdering() expands an ordering of inode-compressed rows (MatGetRowIJ(..., inode = PETSC_TRUE, ...)) through
   this: it must use the same copy's inodes */
static PetscErrorCode FwdInodeAdjustForInodes(Mat A, IS *rperm, IS *cperm)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  PetscTryMethod(aij, "MatInodeAdjustForInodes_C", (Mat, IS *, IS *), (aij, rperm, cperm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdPermute(Mat A, IS row, IS col, Mat *B)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, permute, row, col, B);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdCreateSubMatrix(Mat A, IS isrow, IS iscol, MatReuse reuse, Mat *B)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, createsubmatrix, isrow, iscol, reuse, B);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ASCII viewers go to the type's own view (when it has one), every other viewer (binary, draw, HDF5, ...) to the
   copy's, so a binary file written from the type is AIJ's file */
static PetscErrorCode FwdView(Mat A, PetscViewer viewer)
{
  FwdCtx   *ctx;
  PetscBool ascii;
  Mat       aij;

  PetscFunctionBegin;
  PetscCall(FwdGetCtx(A, &ctx));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (ascii && ctx->view) {
    PetscCall((*ctx->view)(A, viewer));
  } else {
    PetscCall(FwdGetAIJ(A, &aij));
    FWD_CALL(aij, view, viewer);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatConvert() reaches this when no specialized converter is known: convert the copy */
static PetscErrorCode FwdConvert(Mat A, MatType newtype, MatReuse reuse, Mat *M)
{
  Mat       aij, N;
  PetscBool same, issame;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, newtype, &same));
  PetscCall(PetscStrcmp(newtype, "same", &issame));
  if ((same || issame) && reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *M, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(FwdGetAIJ(A, &aij));
  PetscCall(PetscInfo(A, "Converting a %s matrix to %s through its AIJ copy\n", ((PetscObject)A)->type_name, newtype));
  if (reuse == MAT_INPLACE_MATRIX) {
    PetscCall(MatConvert(aij, newtype, MAT_INITIAL_MATRIX, &N));
    PetscCall(MatHeaderReplace(A, &N));
  } else PetscCall(MatConvert(aij, newtype, reuse, M));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdFindZeroDiagonals(Mat A, IS *is)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, findzerodiagonals, is);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdFindNonzeroRows(Mat A, IS *is)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, findnonzerorows, is);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdFindOffBlockDiagonalEntries(Mat A, IS *is)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, findoffblockdiagonalentries, is);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdIsSymmetric(Mat A, PetscReal tol, PetscBool *flg)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, issymmetric, tol, flg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdIsHermitian(Mat A, PetscReal tol, PetscBool *flg)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, ishermitian, tol, flg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdIsStructurallySymmetric(Mat A, PetscBool *flg)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, isstructurallysymmetric, flg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* composed "MatIsTranspose_C" / "MatIsHermitianTranspose_C" (MatIsSymmetric() goes through it in recent releases) */
static PetscErrorCode FwdIsTranspose(Mat A, Mat B, PetscReal tol, PetscBool *flg)
{
  Mat a, b;

  PetscFunctionBegin;
  PetscCall(FwdSource(A, &a));
  PetscCall(FwdSource(B, &b));
  PetscCall(MatIsTranspose(a, b, tol, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdIsHermitianTranspose(Mat A, Mat B, PetscReal tol, PetscBool *flg)
{
  Mat a, b;

  PetscFunctionBegin;
  PetscCall(FwdSource(A, &a));
  PetscCall(FwdSource(B, &b));
  PetscCall(MatIsHermitianTranspose(a, b, tol, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdGetColumnVector(Mat A, Vec v, PetscInt col)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, getcolumnvector, v, col);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdGetSeqNonzeroStructure(Mat A, Mat *B)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, getseqnonzerostructure, B);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdGetGhosts(Mat A, PetscInt *nghosts, const PetscInt *ghosts[])
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, getghosts, nghosts, ghosts);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdMultDiagonalBlock(Mat A, Vec x, Vec y)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, multdiagonalblock, x, y);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdGetMultiProcBlock(Mat A, MPI_Comm comm, MatReuse reuse, Mat *B)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, getmultiprocblock, comm, reuse, B);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdGetColumnReductions(Mat A, PetscInt type, PetscReal *r)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, getcolumnreductions, type, r);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the inverted blocks live in the copy, as they live in an AIJ matrix: valid until the next change of A */
static PetscErrorCode FwdInvertBlockDiagonal(Mat A, const PetscScalar **values)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, invertblockdiagonal, values);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdInvertVariableBlockDiagonal(Mat A, PetscInt nblocks, const PetscInt bsizes[], PetscScalar *diag)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, invertvariableblockdiagonal, nblocks, bsizes, diag);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdCreateGraph(Mat A, GPUKIT_CREATEGRAPH_ARGS)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  PetscCheck(aij->ops->creategraph, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "The AIJ copy (type %s) has no method creategraph", ((PetscObject)aij)->type_name);
  PetscCall((*aij->ops->creategraph)GPUKIT_CREATEGRAPH_PASS(aij));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if PETSC_VERSION_LT(3, 25, 0)
static PetscErrorCode FwdMissingDiagonal(Mat A, PetscBool *missing, PetscInt *d)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, missingdiagonal, missing, d);
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

#if PETSC_VERSION_GE(3, 21, 0)
static PetscErrorCode FwdGetRowSumAbs(Mat A, Vec v)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, getrowsumabs, v);
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

#if PETSC_VERSION_GE(3, 22, 0)
static PetscErrorCode FwdGetBlockDiagonal(Mat A, Mat *D)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  FWD_CALL(aij, getblockdiagonal, D);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdGetVBlockDiagonal(Mat A, Mat *D)
{
  Mat             aij;
  PetscInt        nb;
  const PetscInt *bsizes;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  PetscCall(MatGetVariableBlockSizes(A, &nb, &bsizes));
  if (nb) PetscCall(MatSetVariableBlockSizes(aij, nb, (PetscInt *)bsizes));
  FWD_CALL(aij, getvblockdiagonal, D);
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* ------------------------------------------------------------------------------------------------------------
   Products. A product D with a forwarded A, B or C is AIJ's product of the copies: our setfromoptions asks AIJ's
   dispatch with the copies in D->product, our symbolic runs AIJ's symbolic the same way (D becomes an AIJ
   matrix), our numeric refreshes the copies and runs AIJ's numeric. D->product keeps the caller's matrices between
   the calls, so MatProductReplaceMats() and MAT_REUSE_MATRIX see their own types. When a copy's nonzero pattern
   changed since the symbolic phase, the numeric phase redoes the symbolic one first, as MatProductReplaceMats()
   does for a new type.
   ------------------------------------------------------------------------------------------------------------ */
#define FWD_PRODUCT_CONTAINER "GpukitMatAIJFwdProduct"

typedef struct {
  PetscErrorCode (*symbolic)(Mat); /* AIJ's, chosen by AIJ's setfromoptions */
  PetscErrorCode (*numeric)(Mat);  /* AIJ's, set by its symbolic */
  Mat              copy[3];        /* the matrices the symbolic phase used (no references held) */
  PetscObjectState nzstate[3];
  Mat              replaced[3]; /* what AIJ's symbolic put in an input's place (e.g. B^T for ABt), kept for numeric */
  PetscObjectState state[3];    /* the state of the input whose place was taken, when it was taken */
} FwdProduct;

static PetscErrorCode FwdProductReset(FwdProduct *p)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < 3; i++) PetscCall(MatDestroy(&p->replaced[i]));
  p->symbolic = NULL;
  p->numeric  = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a container destroy hook with the signature of each release (3.18-3.22, 3.23-3.24, 3.25+) */
#if PETSC_VERSION_LT(3, 23, 0)
static PetscErrorCode FwdProductDestroy(void *ctx)
{
  FwdProduct *p = (FwdProduct *)ctx;
#elif PETSC_VERSION_LT(3, 25, 0)
static PetscErrorCode FwdProductDestroy(void **ctx)
{
  FwdProduct *p = (FwdProduct *)*ctx;
#else
static PetscErrorCode FwdProductDestroy(void *ctx)
{
  FwdProduct *p = *(FwdProduct **)ctx;
#endif
  PetscFunctionBegin;
  PetscCall(FwdProductReset(p));
  PetscCall(PetscFree(p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdProductGet(Mat D, PetscBool create, FwdProduct **p)
{
  PetscContainer c;

  PetscFunctionBegin;
  *p = NULL;
  PetscCall(PetscObjectQuery((PetscObject)D, FWD_PRODUCT_CONTAINER, (PetscObject *)&c));
  if (!c && create) {
    FwdProduct *np;

    PetscCall(PetscNew(&np));
    PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
    PetscCall(PetscContainerSetPointer(c, np));
#if PETSC_VERSION_LT(3, 23, 0)
    PetscCall(PetscContainerSetUserDestroy(c, FwdProductDestroy));
#else
    PetscCall(PetscContainerSetCtxDestroy(c, FwdProductDestroy));
#endif
    PetscCall(PetscObjectCompose((PetscObject)D, FWD_PRODUCT_CONTAINER, (PetscObject)c));
    PetscCall(PetscContainerDestroy(&c));
    PetscCall(PetscObjectQuery((PetscObject)D, FWD_PRODUCT_CONTAINER, (PetscObject *)&c));
  }
  if (c) PetscCall(PetscContainerGetPointer(c, (void **)p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Puts into D->product, in place of the caller's inputs (kept in orig[]), what AIJ's code is to see: the copy of a
   forwarded input, the input itself otherwise, or what AIJ's symbolic phase put there earlier. Each slot holds a
   reference of its own, since AIJ's code may destroy an input and put a matrix of its own in its place. */
static PetscErrorCode FwdProductSwapIn(Mat D, FwdProduct *p, Mat orig[3], Mat src[3])
{
  Mat_Product *pr      = D->product;
  Mat         *slot[3] = {&pr->A, &pr->B, &pr->C};

  PetscFunctionBegin;
  for (PetscInt i = 0; i < 3; i++) {
    orig[i] = *slot[i];
    src[i]  = orig[i];
    if (p && p->replaced[i]) src[i] = p->replaced[i];
    else if (orig[i]) PetscCall(FwdSource(orig[i], &src[i]));
  }
  for (PetscInt i = 0; i < 3; i++) {
    if (src[i]) PetscCall(PetscObjectReference((PetscObject)src[i]));
    *slot[i] = src[i];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* puts the caller's inputs back; keeps what AIJ's code put in an input's place */
static PetscErrorCode FwdProductSwapOut(Mat D, FwdProduct *p, Mat orig[3], Mat src[3])
{
  Mat_Product *pr      = D->product;
  Mat         *slot[3] = {&pr->A, &pr->B, &pr->C};

  PetscFunctionBegin;
  for (PetscInt i = 0; i < 3; i++) {
    if (*slot[i] == src[i]) {
      if (src[i]) PetscCall(PetscObjectDereference((PetscObject)src[i]));
    } else {
      PetscCheck(p, PetscObjectComm((PetscObject)D), PETSC_ERR_PLIB, "AIJ's product code replaced an input outside of the symbolic phase");
      PetscCall(MatDestroy(&p->replaced[i]));
      p->replaced[i] = *slot[i];
      PetscCall(PetscObjectStateGet((PetscObject)orig[i], &p->state[i]));
    }
    *slot[i] = orig[i];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdProductNumeric(Mat D);

static PetscErrorCode FwdProductSymbolic(Mat D)
{
  FwdProduct *p;
  Mat         orig[3], src[3];

  PetscFunctionBegin;
  PetscCall(FwdProductGet(D, PETSC_FALSE, &p));
  PetscCheck(p && p->symbolic, PetscObjectComm((PetscObject)D), PETSC_ERR_ORDER, "Call MatProductSetFromOptions() before MatProductSymbolic()");
  PetscCall(FwdProductSwapIn(D, p, orig, src));
  for (PetscInt i = 0; i < 3; i++) {
    p->copy[i]    = src[i];
    p->nzstate[i] = src[i] ? src[i]->nonzerostate : 0;
  }
  D->ops->productnumeric = NULL;
  PetscCall((*p->symbolic)(D));
  PetscCall(FwdProductSwapOut(D, p, orig, src));
  PetscCheck(D->ops->productnumeric, PetscObjectComm((PetscObject)D), PETSC_ERR_PLIB, "AIJ's symbolic product of the AIJ copies set no numeric phase");
  p->numeric              = D->ops->productnumeric;
  D->ops->productnumeric  = FwdProductNumeric;
  D->ops->productsymbolic = FwdProductSymbolic;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdProductNumeric(Mat D)
{
  FwdProduct  *p;
  Mat_Product *pr      = D->product;
  Mat          in[3]   = {pr->A, pr->B, pr->C}, orig[3], src[3];
  PetscBool    changed = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(FwdProductGet(D, PETSC_FALSE, &p));
  PetscCheck(p && p->numeric, PetscObjectComm((PetscObject)D), PETSC_ERR_ORDER, "Call MatProductSymbolic() before MatProductNumeric()");
  for (PetscInt i = 0; i < 3; i++) {
    Mat              s = in[i];
    PetscObjectState st;

    if (!s) continue;
    if (p->replaced[i]) {
      /* AIJ's symbolic phase made its own matrix from this input (B^T for ABt): values only there */
      PetscCall(PetscObjectStateGet((PetscObject)s, &st));
      if (st != p->state[i]) changed = PETSC_TRUE;
      continue;
    }
    PetscCall(FwdSource(in[i], &s));
    if (s != p->copy[i] || s->nonzerostate != p->nzstate[i]) changed = PETSC_TRUE;
  }
  if (changed) {
    PetscCall(PetscInfo(D, "The nonzero pattern of an input of the %s product changed since its symbolic phase (or AIJ's symbolic phase holds data made from a changed input): redoing it\n", MatProductTypes[pr->type]));
    if (pr->destroy) PetscCall(GpukitMatProductDestroyData(pr));
    pr->destroy = NULL;
    pr->data    = NULL;
    PetscCall(MatProductSetFromOptions(D));
    PetscCall(MatProductSymbolic(D));
    PetscCall(FwdProductGet(D, PETSC_FALSE, &p));
  }
  PetscCall(FwdProductSwapIn(D, p, orig, src));
  PetscCall((*p->numeric)(D));
  PetscCall(FwdProductSwapOut(D, p, orig, src));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ops->productsetfromoptions and the composed MatProductSetFromOptions_anytype_C of a forwarded matrix */
static PetscErrorCode FwdProductSetFromOptions(Mat D)
{
  FwdProduct *p;
  Mat         orig[3], src[3];

  PetscFunctionBegin;
  PetscCall(FwdProductGet(D, PETSC_TRUE, &p));
  PetscCall(FwdProductReset(p));
  PetscCall(FwdProductSwapIn(D, p, orig, src));
  D->ops->productsymbolic = NULL;
  PetscCall(MatProductSetFromOptions(D));
  PetscCall(FwdProductSwapOut(D, p, orig, src));
  if (D->ops->productsymbolic) {
    p->symbolic             = D->ops->productsymbolic;
    D->ops->productsymbolic = FwdProductSymbolic;
    PetscCall(PetscInfo(D, "MatProduct %s through the AIJ copies of its inputs\n", MatProductTypes[D->product->type]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------
   Factorizations: the factor is AIJ's (or MUMPS's, SuperLU_dist's) factor of the copy; its symbolic and numeric
   stages are handed the copy, refreshed, in place of the matrix.
   ------------------------------------------------------------------------------------------------------------ */
#define FWD_FACTOR_CONTAINER "GpukitMatAIJFwdFactor"

typedef struct {
  PetscErrorCode (*lusym)(Mat, Mat, IS, IS, const MatFactorInfo *);
  PetscErrorCode (*ilusym)(Mat, Mat, IS, IS, const MatFactorInfo *);
  PetscErrorCode (*cholsym)(Mat, Mat, IS, const MatFactorInfo *);
  PetscErrorCode (*iccsym)(Mat, Mat, IS, const MatFactorInfo *);
  PetscErrorCode (*lunum)(Mat, Mat, const MatFactorInfo *);
  PetscErrorCode (*cholnum)(Mat, Mat, const MatFactorInfo *);
  PetscBool        device;   /* the factor is a device package's (cuSPARSE): it is handed a MATSEQAIJCUSPARSE copy */
  PetscObjectState devstate; /* the state of the AIJ copy that the device copy was made from */
  Mat              devfrom;  /* that AIJ copy (not referenced) */
} FwdFactor;

#define FWD_FACTOR_DEVCOPY "GpukitMatAIJFwdDeviceCopy"

static PetscErrorCode FwdFactorGet(Mat F, FwdFactor **f)
{
  PetscContainer c;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)F, FWD_FACTOR_CONTAINER, (PetscObject *)&c));
  PetscCheck(c, PetscObjectComm((PetscObject)F), PETSC_ERR_PLIB, "The factor lost its AIJ forwarder context");
  PetscCall(PetscContainerGetPointer(c, (void **)f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* what the package's stage is handed: the AIJ copy, or for a device package a MATSEQAIJCUSPARSE copy of it (kept on
   the factor, remade only when the AIJ copy changed) */
static PetscErrorCode FwdFactorSource(Mat F, FwdFactor *f, Mat A, Mat *src)
{
  PetscObjectState st;
  Mat              dev = NULL;

  PetscFunctionBegin;
  PetscCall(FwdSource(A, src));
  if (!f->device) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectStateGet((PetscObject)*src, &st));
  PetscCall(PetscObjectQuery((PetscObject)F, FWD_FACTOR_DEVCOPY, (PetscObject *)&dev));
  if (!dev || st != f->devstate || *src != f->devfrom) {
    PetscCall(MatConvert(*src, MATSEQAIJCUSPARSE, MAT_INITIAL_MATRIX, &dev));
    PetscCall(PetscObjectCompose((PetscObject)F, FWD_FACTOR_DEVCOPY, (PetscObject)dev));
    PetscCall(MatDestroy(&dev)); /* F holds it */
    PetscCall(PetscObjectQuery((PetscObject)F, FWD_FACTOR_DEVCOPY, (PetscObject *)&dev));
    f->devstate = st;
    f->devfrom  = *src;
  }
  *src = dev;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdLUNumeric(Mat F, Mat A, const MatFactorInfo *info)
{
  FwdFactor *f;
  Mat        src;

  PetscFunctionBegin;
  PetscCall(FwdFactorGet(F, &f));
  PetscCall(FwdFactorSource(F, f, A, &src));
  PetscCall((*f->lunum)(F, src, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdCholNumeric(Mat F, Mat A, const MatFactorInfo *info)
{
  FwdFactor *f;
  Mat        src;

  PetscFunctionBegin;
  PetscCall(FwdFactorGet(F, &f));
  PetscCall(FwdFactorSource(F, f, A, &src));
  PetscCall((*f->cholnum)(F, src, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* after a symbolic stage the factor's numeric stage is set: keep it, put ours in front */
static void FwdWrapNumeric(Mat F, FwdFactor *f)
{
  if (F->ops->lufactornumeric && F->ops->lufactornumeric != FwdLUNumeric) {
    f->lunum                = F->ops->lufactornumeric;
    F->ops->lufactornumeric = FwdLUNumeric;
  }
  if (F->ops->choleskyfactornumeric && F->ops->choleskyfactornumeric != FwdCholNumeric) {
    f->cholnum                    = F->ops->choleskyfactornumeric;
    F->ops->choleskyfactornumeric = FwdCholNumeric;
  }
}

static PetscErrorCode FwdLUSymbolic(Mat F, Mat A, IS r, IS c, const MatFactorInfo *info)
{
  FwdFactor *f;
  Mat        src;

  PetscFunctionBegin;
  PetscCall(FwdFactorGet(F, &f));
  PetscCall(FwdFactorSource(F, f, A, &src));
  PetscCall((*f->lusym)(F, src, r, c, info));
  FwdWrapNumeric(F, f);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdILUSymbolic(Mat F, Mat A, IS r, IS c, const MatFactorInfo *info)
{
  FwdFactor *f;
  Mat        src;

  PetscFunctionBegin;
  PetscCall(FwdFactorGet(F, &f));
  PetscCall(FwdFactorSource(F, f, A, &src));
  PetscCall((*f->ilusym)(F, src, r, c, info));
  FwdWrapNumeric(F, f);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdCholSymbolic(Mat F, Mat A, IS p, const MatFactorInfo *info)
{
  FwdFactor *f;
  Mat        src;

  PetscFunctionBegin;
  PetscCall(FwdFactorGet(F, &f));
  PetscCall(FwdFactorSource(F, f, A, &src));
  PetscCall((*f->cholsym)(F, src, p, info));
  FwdWrapNumeric(F, f);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdICCSymbolic(Mat F, Mat A, IS p, const MatFactorInfo *info)
{
  FwdFactor *f;
  Mat        src;

  PetscFunctionBegin;
  PetscCall(FwdFactorGet(F, &f));
  PetscCall(FwdFactorSource(F, f, A, &src));
  PetscCall((*f->iccsym)(F, src, p, info));
  FwdWrapNumeric(F, f);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FwdGetFactor_Package(Mat A, MatSolverType pkg, MatFactorType ftype, Mat *F)
{
  Mat            aij, dev = NULL;
  FwdFactor     *f;
  PetscContainer c;
  PetscBool      device;

  PetscFunctionBegin;
  PetscCall(FwdGetAIJ(A, &aij));
  PetscCall(PetscStrcmp(pkg, MATSOLVERCUSPARSE, &device));
  PetscCall(PetscInfo(A, "%s factorization (%s) of a %s matrix: through its %s copy\n", MatFactorTypes[ftype], pkg, ((PetscObject)A)->type_name, device ? "MATSEQAIJCUSPARSE" : "AIJ"));
  if (device) {
    PetscCall(MatConvert(aij, MATSEQAIJCUSPARSE, MAT_INITIAL_MATRIX, &dev));
    PetscCall(MatGetFactor(dev, pkg, ftype, F));
  } else PetscCall(MatGetFactor(aij, pkg, ftype, F));
  if (!*F) {
    PetscCall(MatDestroy(&dev));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscNew(&f));
  f->device = device;
  if (dev) {
    PetscCall(PetscObjectStateGet((PetscObject)aij, &f->devstate));
    f->devfrom = aij;
    PetscCall(PetscObjectCompose((PetscObject)*F, FWD_FACTOR_DEVCOPY, (PetscObject)dev));
    PetscCall(MatDestroy(&dev));
  }
  f->lusym   = (*F)->ops->lufactorsymbolic;
  f->ilusym  = (*F)->ops->ilufactorsymbolic;
  f->cholsym = (*F)->ops->choleskyfactorsymbolic;
  f->iccsym  = (*F)->ops->iccfactorsymbolic;
  if (f->lusym) (*F)->ops->lufactorsymbolic = FwdLUSymbolic;
  if (f->ilusym) (*F)->ops->ilufactorsymbolic = FwdILUSymbolic;
  if (f->cholsym) (*F)->ops->choleskyfactorsymbolic = FwdCholSymbolic;
  if (f->iccsym) (*F)->ops->iccfactorsymbolic = FwdICCSymbolic;
  FwdWrapNumeric(*F, f);
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscContainerSetPointer(c, f));
  PetscCall(GpukitContainerSetFreeDestroy(c));
  PetscCall(PetscObjectCompose((PetscObject)*F, FWD_FACTOR_CONTAINER, (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatSolverTypeRegister()'s callback is MatSolverFn(Mat, MatFactorType, Mat *): no context pointer, and MatGetFactor()
   does not pass the package it looked up (with no package asked for it takes the first registered), so one function
   cannot serve several packages. FWD_GET_FACTOR(name, pkg) generates the one-line callback of each package; the table
   fwd_factors below says what is registered, in registration order (the first package registered for a type name is
   its default). */
#define FWD_GET_FACTOR(name, pkg) \
  static PetscErrorCode FwdGetFactor_##name(Mat A, MatFactorType ftype, Mat *F) \
  { \
    PetscFunctionBegin; \
    PetscCall(FwdGetFactor_Package(A, pkg, ftype, F)); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }

FWD_GET_FACTOR(PETSc, MATSOLVERPETSC)
#if defined(PETSC_HAVE_SUPERLU)
FWD_GET_FACTOR(SuperLU, MATSOLVERSUPERLU)
#endif
#if defined(PETSC_HAVE_SUITESPARSE)
FWD_GET_FACTOR(UMFPACK, MATSOLVERUMFPACK)
FWD_GET_FACTOR(KLU, MATSOLVERKLU)
FWD_GET_FACTOR(CHOLMOD, MATSOLVERCHOLMOD)
#endif
#if defined(PETSC_HAVE_MUMPS)
FWD_GET_FACTOR(MUMPS, MATSOLVERMUMPS)
#endif
#if defined(PETSC_HAVE_SUPERLU_DIST)
FWD_GET_FACTOR(SuperLU_DIST, MATSOLVERSUPERLU_DIST)
#endif
#if defined(PETSC_HAVE_CUDA)
FWD_GET_FACTOR(CUSPARSE, MATSOLVERCUSPARSE)
#endif

#define FWD_LU       (1 << MAT_FACTOR_LU)
#define FWD_ILU      (1 << MAT_FACTOR_ILU)
#define FWD_CHOLESKY (1 << MAT_FACTOR_CHOLESKY)
#define FWD_ICC      (1 << MAT_FACTOR_ICC)

typedef struct {
  MatSolverType pkg;
  PetscInt      ftypes;  /* FWD_LU | FWD_ILU | ... */
  PetscBool     seqonly; /* only for one-rank type names (not starting with "mpi") */
  PetscErrorCode (*getfactor)(Mat, MatFactorType, Mat *);
} FwdFactorEntry;

static const FwdFactorEntry fwd_factors[] = {
  {MATSOLVERPETSC,        FWD_LU | FWD_ILU | FWD_CHOLESKY | FWD_ICC, PETSC_TRUE,  FwdGetFactor_PETSc       },
#if defined(PETSC_HAVE_SUPERLU)
  {MATSOLVERSUPERLU,      FWD_LU | FWD_ILU,                          PETSC_TRUE,  FwdGetFactor_SuperLU     },
#endif
#if defined(PETSC_HAVE_SUITESPARSE)
  {MATSOLVERUMFPACK,      FWD_LU,                                    PETSC_TRUE,  FwdGetFactor_UMFPACK     },
  {MATSOLVERKLU,          FWD_LU,                                    PETSC_TRUE,  FwdGetFactor_KLU         },
  {MATSOLVERCHOLMOD,      FWD_CHOLESKY,                              PETSC_TRUE,  FwdGetFactor_CHOLMOD     },
#endif
#if defined(PETSC_HAVE_MUMPS)
  {MATSOLVERMUMPS,        FWD_LU | FWD_CHOLESKY,                     PETSC_FALSE, FwdGetFactor_MUMPS       },
#endif
#if defined(PETSC_HAVE_SUPERLU_DIST)
  {MATSOLVERSUPERLU_DIST, FWD_LU,                                    PETSC_FALSE, FwdGetFactor_SuperLU_DIST},
#endif
};

#if defined(PETSC_HAVE_CUDA)
static const FwdFactorEntry fwd_device_factors[] = {
  {MATSOLVERCUSPARSE, FWD_LU | FWD_ILU | FWD_CHOLESKY | FWD_ICC, PETSC_FALSE, FwdGetFactor_CUSPARSE},
};
#endif

/* registers the entries of a table for one type name, in table order, each entry's factor types in PETSc's
   order LU, ILU, Cholesky, ICC (as registered before the table) */
static PetscErrorCode FwdRegisterTable(MatType type, const FwdFactorEntry *tab, size_t n)
{
  const MatFactorType order[] = {MAT_FACTOR_LU, MAT_FACTOR_ILU, MAT_FACTOR_CHOLESKY, MAT_FACTOR_ICC};
  PetscBool           mpi;

  PetscFunctionBegin;
  PetscCall(PetscStrbeginswith(type, "mpi", &mpi));
  for (size_t i = 0; i < n; i++) {
    if (mpi && tab[i].seqonly) continue;
    for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
      if (tab[i].ftypes & (1 << order[k])) PetscCall(MatSolverTypeRegister(tab[i].pkg, type, order[k], tab[i].getfactor));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitMatAIJForwardRegisterFactors - Registers factorizations of a gpukit matrix type through its AIJ copy

  Not Collective

  Input Parameter:
. type - the type name of one kind (e.g. "seqdcsr" or "mpidcsr"; a name starting with "mpi" is a parallel type)

  Notes:
  A type not starting with "mpi" gets PETSc's LU, ILU, Cholesky and ICC (`MATSOLVERPETSC`), and SuperLU (LU, ILU), UMFPACK
  and KLU (LU) and CHOLMOD (Cholesky) when PETSc has them; every type gets
  `MATSOLVERMUMPS` (LU, Cholesky) and `MATSOLVERSUPERLU_DIST` (LU) when PETSc has them, so the default solver of each
  kind is the one AIJ gets. The factor is the package's factor of the AIJ copy; every numeric factorization
  refreshes the copy from the matrix's current values.

  Level: developer

.seealso: `GpukitMatAIJForwardInstall()`, `MatSolverTypeRegister()`
@*/
PetscErrorCode GpukitMatAIJForwardRegisterFactors(MatType type)
{
  PetscFunctionBegin;
  PetscCall(FwdRegisterTable(type, fwd_factors, sizeof(fwd_factors) / sizeof(fwd_factors[0])));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitMatAIJForwardRegisterDeviceFactors - Registers cuSPARSE factorizations (LU, ILU, Cholesky, ICC) of a one-rank
  gpukit device matrix type through a MATSEQAIJCUSPARSE copy, so that its triangular solves run on the device

  Not Collective

  Input Parameter:
. type - the type name of the one-rank kind (e.g. "seqsgdiacuda")

  Notes:
  Call it BEFORE any other registration for exactly this type name: `MatGetFactor()` without a solver type takes the
  first package registered for the exact type name, so cuSPARSE becomes the default, as it is for
  `MATSEQAIJCUSPARSE` (PCLU/PCILU on the coarse level of PCMG then solve on the device, with no copies in PCApply).
  `-pc_factor_mat_solver_type petsc` still gets the host factorization registered for the type's host base name.
  The factor is cuSPARSE's factor of a `MATSEQAIJCUSPARSE` copy made from the type's AIJ copy; each numeric
  factorization after a change of values remakes the copy. Without CUDA it does nothing.

  Level: developer

.seealso: `GpukitMatAIJForwardRegisterFactors()`, `MatSolverTypeRegister()`
@*/
PetscErrorCode GpukitMatAIJForwardRegisterDeviceFactors(MatType type)
{
  PetscFunctionBegin;
#if defined(PETSC_HAVE_CUDA)
  PetscCall(FwdRegisterTable(type, fwd_device_factors, sizeof(fwd_device_factors) / sizeof(fwd_device_factors[0])));
#else
  (void)type;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatHasOperation(): what the slot says, as PETSc's default does, except for ops AIJ sets at assembly (inodes), which
   the copy decides */
static PetscErrorCode FwdHasOperation(Mat A, MatOperation op, PetscBool *has)
{
  void (*fn)(void) = ((void (**)(void))A->ops)[op];

  PetscFunctionBegin;
  if (fn == (void (*)(void))FwdMultDiagonalBlock) {
    Mat aij;

    PetscCall(FwdGetAIJ(A, &aij));
    PetscCall(MatHasOperation(aij, op, has));
  } else if (fn) {
    *has = PETSC_TRUE;
  } else {
    *has = PETSC_FALSE;
    if (op == MATOP_CREATE_SUBMATRIX) {
      PetscMPIInt size;

      PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
      if (size == 1) PetscCall(MatHasOperation(A, MATOP_CREATE_SUBMATRICES, has));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------
   Install
   ------------------------------------------------------------------------------------------------------------ */

/* the op tables of MATSEQAIJ [0] and MATMPIAIJ [1], taken once from an empty matrix of each */
static struct _MatOps fwd_aijops[2];
static PetscBool      fwd_aijops_set[2];

static PetscErrorCode FwdAIJOps(PetscBool mpi, const struct _MatOps **ops)
{
  PetscFunctionBegin;
  if (!fwd_aijops_set[mpi]) {
    Mat P;

    PetscCall(MatCreate(PETSC_COMM_SELF, &P));
    PetscCall(MatSetType(P, mpi ? MATMPIAIJ : MATSEQAIJ));
    PetscCall(PetscMemcpy(&fwd_aijops[mpi], P->ops, sizeof(struct _MatOps)));
    PetscCall(MatDestroy(&P));
    fwd_aijops_set[mpi] = PETSC_TRUE;
  }
  *ops = &fwd_aijops[mpi];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitMatAIJForwardInstall - Makes a matrix type that owns its storage work wherever AIJ works, by running the
  read-only operations it does not implement on an AIJ copy of the matrix

  Logically Collective

  Input Parameters:
+ A      - the matrix, with the type's own ops already set (call this at the end of the type's constructor)
- getaij - the type's callback: returns a `MATSEQAIJ` (one rank) or `MATMPIAIJ` copy of A with A's layouts and
           block sizes, owned by A, current with A's values (refresh it when A's state changed; when only values
           changed, in place, so that the copy's state and that of its blocks increase)

  Notes:
  Every read-only op of struct _MatOps that A leaves NULL and AIJ implements gets a forwarder: SOR, sub-matrices,
  overlap, diagonal block (MPI), row and column IJ structure (with inodes), transpose (an AIJ result;
  `MAT_INPLACE_MATRIX` converts back to A's type), norm, row and column reductions, (variable) block diagonal
  inverse, symmetry tests, getinfo, getvalues, getrow, permute, graph (`MatCreateGraph()`), zero/off-block
  diagonal search, multi-process block, equal (both matrices through their copies), convert to any type, and
  views on non-ASCII viewers. Products with A as any input are AIJ's products of the copies (`MatProductNumeric()`
  refreshes them). Ops that change A are never forwarded. Factorizations: `GpukitMatAIJForwardRegisterFactors()`.

  Level: developer

.seealso: `GpukitMatAIJForwardRegisterFactors()`, `GpukitMatAIJForwardGetAIJ()`
@*/
PetscErrorCode GpukitMatAIJForwardInstall(Mat A, PetscErrorCode (*getaij)(Mat A, Mat *aij))
{
  FwdCtx               *ctx;
  const struct _MatOps *aijops = NULL;
  PetscMPIInt           size;
  struct _MatOps       *ops = A->ops;
  PetscErrorCode (*f)(void);

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscCheck(getaij, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_NULL, "The AIJ forwarder needs the type's getaij callback");
  PetscCall(FwdGetCtx(A, &ctx));
  if (!ctx) {
    PetscContainer c;

    PetscCall(PetscNew(&ctx));
    PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
    PetscCall(PetscContainerSetPointer(c, ctx));
    PetscCall(GpukitContainerSetFreeDestroy(c));
    PetscCall(PetscObjectCompose((PetscObject)A, FWD_CONTAINER, (PetscObject)c));
    PetscCall(PetscContainerDestroy(&c));
  }
  ctx->getaij = getaij;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(FwdAIJOps((PetscBool)(size > 1), &aijops));

#define FWD_SET(field, fn) \
  do { \
    if (!ops->field && aijops->field) ops->field = fn; \
  } while (0)
  FWD_SET(getrow, FwdGetRow);
  if (ops->getrow == FwdGetRow) ops->restorerow = FwdRestoreRow;
  FWD_SET(sor, FwdSOR);
  FWD_SET(transpose, FwdTranspose);
  FWD_SET(transposesymbolic, FwdTransposeSymbolic);
  FWD_SET(getinfo, FwdGetInfo);
  FWD_SET(equal, FwdEqual);
  FWD_SET(norm, FwdNorm);
  if (size > 1) FWD_SET(getdiagonalblock, FwdGetDiagonalBlock); /* one rank: MatGetDiagonalBlock() gives A itself, as for AIJ */
  FWD_SET(createsubmatrices, FwdCreateSubMatrices);
  FWD_SET(createsubmatricesmpi, FwdCreateSubMatricesMPI);
  FWD_SET(increaseoverlap, FwdIncreaseOverlap);
  FWD_SET(getvalues, FwdGetValues);
  FWD_SET(getrowmax, FwdGetRowMax);
  FWD_SET(getrowmin, FwdGetRowMin);
  FWD_SET(getrowmaxabs, FwdGetRowMaxAbs);
  FWD_SET(getrowminabs, FwdGetRowMinAbs);
  if (!ops->getrowij && !ops->restorerowij && aijops->getrowij) {
    ops->getrowij     = FwdGetRowIJ;
    ops->restorerowij = FwdRestoreRowIJ;
  }
  if (!ops->getcolumnij && !ops->restorecolumnij && aijops->getcolumnij) {
    ops->getcolumnij     = FwdGetColumnIJ;
    ops->restorecolumnij = FwdRestoreColumnIJ;
  }
  FWD_SET(permute, FwdPermute);
  FWD_SET(createsubmatrix, FwdCreateSubMatrix);
  if (!ops->convert) ops->convert = FwdConvert; /* AIJ converts through composed functions instead: ours is the general one */
  FWD_SET(findzerodiagonals, FwdFindZeroDiagonals);
  FWD_SET(findnonzerorows, FwdFindNonzeroRows);
  FWD_SET(findoffblockdiagonalentries, FwdFindOffBlockDiagonalEntries);
  FWD_SET(issymmetric, FwdIsSymmetric);
  FWD_SET(ishermitian, FwdIsHermitian);
  FWD_SET(isstructurallysymmetric, FwdIsStructurallySymmetric);
  FWD_SET(getcolumnvector, FwdGetColumnVector);
  FWD_SET(getseqnonzerostructure, FwdGetSeqNonzeroStructure);
  FWD_SET(getghosts, FwdGetGhosts);
  if (!ops->multdiagonalblock) ops->multdiagonalblock = FwdMultDiagonalBlock; /* AIJ sets it at assembly (inodes): */
  if (!ops->hasoperation) ops->hasoperation = FwdHasOperation;                /* there the copy answers */
  FWD_SET(getmultiprocblock, FwdGetMultiProcBlock);
  FWD_SET(getcolumnreductions, FwdGetColumnReductions);
  FWD_SET(invertblockdiagonal, FwdInvertBlockDiagonal);
  FWD_SET(invertvariableblockdiagonal, FwdInvertVariableBlockDiagonal);
  FWD_SET(creategraph, FwdCreateGraph);
#if PETSC_VERSION_LT(3, 25, 0)
  FWD_SET(missingdiagonal, FwdMissingDiagonal);
#endif
#if PETSC_VERSION_GE(3, 21, 0)
  FWD_SET(getrowsumabs, FwdGetRowSumAbs);
#endif
#if PETSC_VERSION_GE(3, 22, 0)
  FWD_SET(getblockdiagonal, FwdGetBlockDiagonal);
  FWD_SET(getvblockdiagonal, FwdGetVBlockDiagonal);
#endif
#undef FWD_SET
  /* views: ASCII to the type's own, others to the copy's */
  if (ops->view != FwdView) {
    ctx->view = ops->view;
    ops->view = FwdView;
  }
  /* products with A as any input */
  if (!ops->productsetfromoptions) ops->productsetfromoptions = FwdProductSetFromOptions;
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatProductSetFromOptions_anytype_C", &f));
  if (!f) PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_anytype_C", FwdProductSetFromOptions));
  /* transpose and symmetry tests */
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatIsTranspose_C", &f));
  if (!f) PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatIsTranspose_C", FwdIsTranspose));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatIsHermitianTranspose_C", &f));
  if (!f) PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatIsHermitianTranspose_C", FwdIsHermitianTranspose));
  /* orderings on inode-compressed rows (MatGetOrdering()) */
  if (ops->getrowij == FwdGetRowIJ) {
    PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatInodeAdjustForInodes_C", &f));
    if (!f) PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatInodeAdjustForInodes_C", FwdInodeAdjustForInodes));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  GpukitMatAIJForwardUninstall - Removes what `GpukitMatAIJForwardInstall()` composed on a matrix (call it from the
  type's destroy)

  Logically Collective

  Input Parameter:
. A - the matrix

  Level: developer

.seealso: `GpukitMatAIJForwardInstall()`
@*/
PetscErrorCode GpukitMatAIJForwardUninstall(Mat A)
{
  PetscErrorCode (*f)(void);

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscCall(PetscObjectCompose((PetscObject)A, FWD_CONTAINER, NULL));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatProductSetFromOptions_anytype_C", &f));
  if (f == (PetscErrorCode(*)(void))FwdProductSetFromOptions) PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_anytype_C", NULL));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatIsTranspose_C", &f));
  if (f == (PetscErrorCode(*)(void))FwdIsTranspose) PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatIsTranspose_C", NULL));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatIsHermitianTranspose_C", &f));
  if (f == (PetscErrorCode(*)(void))FwdIsHermitianTranspose) PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatIsHermitianTranspose_C", NULL));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatInodeAdjustForInodes_C", &f));
  if (f == (PetscErrorCode(*)(void))FwdInodeAdjustForInodes) PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatInodeAdjustForInodes_C", NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}
