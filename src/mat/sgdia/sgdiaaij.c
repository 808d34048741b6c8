/*
   MATSGDIA operations done through an AIJ copy of the matrix: SOR, LU/ILU/Cholesky/ICC factorizations,
   the diagonal block for PCBJACOBI, sub-matrices and the CSR structure for orderings.

   The copy is made on first use, kept, and refreshed when the matrix's state changes (PetscInfo says when).
*/
#include "sgdiaimpl.h"

/* The AIJ copy, with inodes (as DMCreateMatrix()'s AIJ has them, so that SOR is AIJ's inode SOR) or without
   (for AIJ's factorizations, whose inode variants expect orderings computed on inode-compressed rows). */
PetscErrorCode SGDIAGetAIJ_Private(Mat A, PetscBool inodes, Mat *aij)
{
  Mat_SGDIA       *sg   = (Mat_SGDIA *)A->data;
  Mat             *copy = inodes ? &sg->aij : &sg->aijnoinode;
  PetscObjectState st, *cst = inodes ? &sg->aijstate : &sg->aijnoinodestate;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_FALSE));
  PetscCall(PetscObjectStateGet((PetscObject)A, &st));
  if (!*copy || st != *cst) {
    PetscCall(PetscInfo(A, "%s the AIJ copy (%s inodes) of the MATSGDIA matrix used by %s\n", *copy ? "Refreshing" : "Making", inodes ? "with" : "without", inodes ? "SOR, block Jacobi and sub-matrices" : "factorizations"));
    if (!*copy) {
      PetscCall(MatConvert_SGDIA_AIJ(A, MATAIJ, MAT_INITIAL_MATRIX, copy));
      if (!inodes) PetscCall(MatSetOption(*copy, MAT_USE_INODES, PETSC_FALSE));
    }
    PetscCall(MatConvert_SGDIA_AIJ(A, MATAIJ, MAT_REUSE_MATRIX, copy));
    *cst = st;
  }
  *aij = *copy;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatSOR_SGDIA(Mat A, Vec b, PetscReal omega, MatSORType flag, PetscReal shift, PetscInt its, PetscInt lits, Vec x)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(SGDIAGetAIJ_Private(A, PETSC_TRUE, &aij));
  PetscCall(MatSOR(aij, b, omega, flag, shift, its, lits, x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatGetDiagonalBlock_SGDIA(Mat A, Mat *d)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(SGDIAGetAIJ_Private(A, PETSC_TRUE, &aij));
  PetscCall(MatGetDiagonalBlock(aij, d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatCreateSubMatrix_SGDIA(Mat A, IS isrow, IS iscol, MatReuse reuse, Mat *B)
{
  Mat aij;

  PetscFunctionBegin;
  PetscCall(SGDIAGetAIJ_Private(A, PETSC_TRUE, &aij));
  PetscCall(MatCreateSubMatrix(aij, isrow, iscol, reuse, B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatGetRowIJ_SGDIA(Mat A, PetscInt shift, PetscBool sym, PetscBool inode, PetscInt *n, const PetscInt *ia[], const PetscInt *ja[], PetscBool *done)
{
  Mat aij;

  PetscFunctionBegin;
  /* never inode-compressed: MATSGDIA has no inodes to expand an ordering with */
  (void)inode;
  PetscCall(SGDIAGetAIJ_Private(A, PETSC_FALSE, &aij));
  PetscCall(MatGetRowIJ(aij, shift, sym, PETSC_FALSE, n, ia, ja, done));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatRestoreRowIJ_SGDIA(Mat A, PetscInt shift, PetscBool sym, PetscBool inode, PetscInt *n, const PetscInt *ia[], const PetscInt *ja[], PetscBool *done)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)A->data;

  PetscFunctionBegin;
  (void)inode;
  PetscCall(MatRestoreRowIJ(sg->aijnoinode, shift, sym, PETSC_FALSE, n, ia, ja, done));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Factorizations: the factor is PETSc's own SeqAIJ factor; its symbolic and numeric stages are handed the
   AIJ copy in place of the MATSGDIA matrix.
   ------------------------------------------------------------------------------------------------------ */

typedef struct {
  PetscErrorCode (*lusym)(Mat, Mat, IS, IS, const MatFactorInfo *);
  PetscErrorCode (*ilusym)(Mat, Mat, IS, IS, const MatFactorInfo *);
  PetscErrorCode (*cholsym)(Mat, Mat, IS, const MatFactorInfo *);
  PetscErrorCode (*iccsym)(Mat, Mat, IS, const MatFactorInfo *);
  PetscErrorCode (*lunum)(Mat, Mat, const MatFactorInfo *);
  PetscErrorCode (*cholnum)(Mat, Mat, const MatFactorInfo *);
} SGDIAFactorCtx;

static PetscErrorCode SGDIAFactorCtxGet(Mat F, SGDIAFactorCtx **ctx)
{
  PetscContainer c;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)F, "SGDIAFactorCtx", (PetscObject *)&c));
  PetscCheck(c, PetscObjectComm((PetscObject)F), PETSC_ERR_PLIB, "Factor matrix lost its MATSGDIA context");
  PetscCall(PetscContainerGetPointer(c, (void **)ctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the matrix to hand to AIJ's factorization code: the AIJ copy of a MATSGDIA matrix, or the matrix itself */
static PetscErrorCode SGDIAFactorSource(Mat A, Mat *src)
{
  PetscBool isg;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &isg, MATSEQSGDIA, MATSEQSGDIACUDA, ""));
  if (isg) PetscCall(SGDIAGetAIJ_Private(A, PETSC_FALSE, src));
  else *src = A;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGDIALUNumeric(Mat F, Mat A, const MatFactorInfo *info)
{
  SGDIAFactorCtx *ctx;
  Mat             src;

  PetscFunctionBegin;
  PetscCall(SGDIAFactorCtxGet(F, &ctx));
  PetscCall(SGDIAFactorSource(A, &src));
  PetscCall((*ctx->lunum)(F, src, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGDIACholNumeric(Mat F, Mat A, const MatFactorInfo *info)
{
  SGDIAFactorCtx *ctx;
  Mat             src;

  PetscFunctionBegin;
  PetscCall(SGDIAFactorCtxGet(F, &ctx));
  PetscCall(SGDIAFactorSource(A, &src));
  PetscCall((*ctx->cholnum)(F, src, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* after a symbolic stage, AIJ has set its numeric stage: keep it and put ours in front */
static void SGDIAWrapNumeric(Mat F, SGDIAFactorCtx *ctx)
{
  if (F->ops->lufactornumeric && F->ops->lufactornumeric != SGDIALUNumeric) {
    ctx->lunum                = F->ops->lufactornumeric;
    F->ops->lufactornumeric   = SGDIALUNumeric;
  }
  if (F->ops->choleskyfactornumeric && F->ops->choleskyfactornumeric != SGDIACholNumeric) {
    ctx->cholnum                    = F->ops->choleskyfactornumeric;
    F->ops->choleskyfactornumeric   = SGDIACholNumeric;
  }
}

static PetscErrorCode SGDIALUSymbolic(Mat F, Mat A, IS r, IS c, const MatFactorInfo *info)
{
  SGDIAFactorCtx *ctx;
  Mat             src;

  PetscFunctionBegin;
  PetscCall(SGDIAFactorCtxGet(F, &ctx));
  PetscCall(SGDIAFactorSource(A, &src));
  PetscCall((*ctx->lusym)(F, src, r, c, info));
  SGDIAWrapNumeric(F, ctx);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGDIAILUSymbolic(Mat F, Mat A, IS r, IS c, const MatFactorInfo *info)
{
  SGDIAFactorCtx *ctx;
  Mat             src;

  PetscFunctionBegin;
  PetscCall(SGDIAFactorCtxGet(F, &ctx));
  PetscCall(SGDIAFactorSource(A, &src));
  PetscCall((*ctx->ilusym)(F, src, r, c, info));
  SGDIAWrapNumeric(F, ctx);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGDIACholSymbolic(Mat F, Mat A, IS p, const MatFactorInfo *info)
{
  SGDIAFactorCtx *ctx;
  Mat             src;

  PetscFunctionBegin;
  PetscCall(SGDIAFactorCtxGet(F, &ctx));
  PetscCall(SGDIAFactorSource(A, &src));
  PetscCall((*ctx->cholsym)(F, src, p, info));
  SGDIAWrapNumeric(F, ctx);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGDIAICCSymbolic(Mat F, Mat A, IS p, const MatFactorInfo *info)
{
  SGDIAFactorCtx *ctx;
  Mat             src;

  PetscFunctionBegin;
  PetscCall(SGDIAFactorCtxGet(F, &ctx));
  PetscCall(SGDIAFactorSource(A, &src));
  PetscCall((*ctx->iccsym)(F, src, p, info));
  SGDIAWrapNumeric(F, ctx);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGetFactor_SGDIA_PETSc(Mat A, MatFactorType ftype, Mat *F)
{
  Mat             aij;
  SGDIAFactorCtx *ctx;
  PetscContainer  c;

  PetscFunctionBegin;
  PetscCall(SGDIAGetAIJ_Private(A, PETSC_FALSE, &aij));
  PetscCall(PetscInfo(A, "Factorization %s of MATSGDIA goes through its AIJ copy (PETSc's SeqAIJ factor)\n", MatFactorTypes[ftype]));
  PetscCall(MatGetFactor(aij, MATSOLVERPETSC, ftype, F));
  PetscCall(PetscNew(&ctx));
  ctx->lusym                       = (*F)->ops->lufactorsymbolic;
  ctx->ilusym                      = (*F)->ops->ilufactorsymbolic;
  ctx->cholsym                     = (*F)->ops->choleskyfactorsymbolic;
  ctx->iccsym                      = (*F)->ops->iccfactorsymbolic;
  if (ctx->lusym) (*F)->ops->lufactorsymbolic = SGDIALUSymbolic;
  if (ctx->ilusym) (*F)->ops->ilufactorsymbolic = SGDIAILUSymbolic;
  if (ctx->cholsym) (*F)->ops->choleskyfactorsymbolic = SGDIACholSymbolic;
  if (ctx->iccsym) (*F)->ops->iccfactorsymbolic = SGDIAICCSymbolic;
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscContainerSetPointer(c, ctx));
  PetscCall(GpukitContainerSetFreeDestroy(c));
  PetscCall(PetscObjectCompose((PetscObject)*F, "SGDIAFactorCtx", (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  PetscFunctionReturn(PETSC_SUCCESS);
}
