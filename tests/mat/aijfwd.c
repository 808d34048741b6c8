static const char help[] = "The AIJ forwarder (src/mat/utils/gpukitaijfwd.c) on a test-only matrix type, against AIJ.\n"
                           "  -test solve : KSP solves (KSP/PC from the options) with the type and with AIJ: same\n"
                           "                iteration counts and solutions; -change repeats with new values\n"
                           "  -test ops   : products (INITIAL, REUSE after new values, REUSE after a new nonzero),\n"
                           "                converts, transposes, equal, reductions, norms, sub-matrices, views, ...\n"
                           "  -n <m> -dof <k> -sym  the 2-D DMDA grid and whether the operator is symmetric\n"
                           "  -tf_getrow <bool>      the type implements getrow itself (default true)\n";

/*
   "testfwd" (seqtestfwd / mpitestfwd) is a matrix type written for this test only: it owns its storage (an inner AIJ
   matrix it never exposes), implements just the ops a storage-owning gpukit type implements natively (set values,
   assembly, products, diagonal, scale, shift, zero entries/rows, duplicate, copy, getrow, ASCII view, options,
   AIJ preallocation), and hands everything else to the forwarder through a SEPARATE AIJ copy that it refreshes the
   way MATDCSR does (values in place when only values changed, a new copy when the nonzero pattern changed). Every
   result is compared with the same computation on plain AIJ.
*/
#include <unistd.h>
#include <stddef.h>
#include <petscdmda.h>
#include <petscksp.h>
#include "gktest.h"
#include "gpukitaijfwd.c" /* the forwarder is library-internal: compile it into the test */

#define MATTESTFWD    "testfwd"
#define MATSEQTESTFWD "seqtestfwd"
#define MATMPITESTFWD "mpitestfwd"

static PetscBool tf_getrow = PETSC_TRUE;

typedef struct {
  Mat              in;   /* the storage */
  Mat              copy; /* the AIJ copy for the forwarder */
  PetscObjectState copystate, copynz, innz;
  PetscInt         nrebuild, nrefresh;
} TF;

static PetscErrorCode TFInner(Mat A)
{
  TF         *tf = (TF *)A->data;
  PetscMPIInt size;

  PetscFunctionBegin;
  if (tf->in) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLayoutSetUp(A->rmap));
  PetscCall(PetscLayoutSetUp(A->cmap));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), &tf->in));
  PetscCall(MatSetSizes(tf->in, A->rmap->n, A->cmap->n, A->rmap->N, A->cmap->N));
  PetscCall(MatSetBlockSizesFromMats(tf->in, A, A));
  PetscCall(MatSetType(tf->in, size > 1 ? MATMPIAIJ : MATSEQAIJ));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFSeqPrealloc(Mat A, PetscInt nz, const PetscInt nnz[])
{
  TF *tf = (TF *)A->data;

  PetscFunctionBegin;
  PetscCall(TFInner(A));
  PetscCall(MatSetBlockSizesFromMats(tf->in, A, A));
  PetscCall(MatSeqAIJSetPreallocation(tf->in, nz, nnz));
  A->preallocated = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFMPIPrealloc(Mat A, PetscInt dnz, const PetscInt dnnz[], PetscInt onz, const PetscInt onnz[])
{
  TF *tf = (TF *)A->data;

  PetscFunctionBegin;
  PetscCall(TFInner(A));
  PetscCall(MatSetBlockSizesFromMats(tf->in, A, A));
  PetscCall(MatMPIAIJSetPreallocation(tf->in, dnz, dnnz, onz, onnz));
  A->preallocated = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFSetUp(Mat A)
{
  TF *tf = (TF *)A->data;

  PetscFunctionBegin;
  PetscCall(TFInner(A));
  PetscCall(MatSetUp(tf->in));
  A->preallocated = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFSetValues(Mat A, PetscInt m, const PetscInt im[], PetscInt n, const PetscInt in[], const PetscScalar v[], InsertMode mode)
{
  PetscFunctionBegin;
  PetscCall(MatSetValues(((TF *)A->data)->in, m, im, n, in, v, mode));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFAssemblyBegin(Mat A, MatAssemblyType t)
{
  PetscFunctionBegin;
  PetscCall(MatAssemblyBegin(((TF *)A->data)->in, t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFAssemblyEnd(Mat A, MatAssemblyType t)
{
  TF *tf = (TF *)A->data;

  PetscFunctionBegin;
  PetscCall(MatAssemblyEnd(tf->in, t));
  if (tf->in->nonzerostate != tf->innz) {
    tf->innz = tf->in->nonzerostate;
    A->nonzerostate++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the forwarder's callback: a copy separate from the storage, refreshed as a storage-owning type refreshes it */
static PetscErrorCode TFGetAIJ(Mat A, Mat *aij)
{
  TF              *tf = (TF *)A->data;
  PetscObjectState st;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &st));
  if (!tf->copy || tf->copynz != A->nonzerostate) {
    PetscCall(MatDestroy(&tf->copy));
    PetscCall(MatDuplicate(tf->in, MAT_COPY_VALUES, &tf->copy));
    tf->copynz    = A->nonzerostate;
    tf->copystate = st;
    tf->nrebuild++;
  } else if (st != tf->copystate) {
    /* values only; the assembly makes AIJ drop what it caches from the values (SOR's inverted diagonal) */
    PetscCall(MatCopy(tf->in, tf->copy, SAME_NONZERO_PATTERN));
    PetscCall(MatAssemblyBegin(tf->copy, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(tf->copy, MAT_FINAL_ASSEMBLY));
    tf->copystate = st;
    tf->nrefresh++;
  }
  *aij = tf->copy;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFMult(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMult(((TF *)A->data)->in, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFMultAdd(Mat A, Vec x, Vec y, Vec z)
{
  PetscFunctionBegin;
  PetscCall(MatMultAdd(((TF *)A->data)->in, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFMultTranspose(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultTranspose(((TF *)A->data)->in, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFMultTransposeAdd(Mat A, Vec x, Vec y, Vec z)
{
  PetscFunctionBegin;
  PetscCall(MatMultTransposeAdd(((TF *)A->data)->in, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFGetDiagonal(Mat A, Vec d)
{
  PetscFunctionBegin;
  PetscCall(MatGetDiagonal(((TF *)A->data)->in, d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFScale(Mat A, PetscScalar a)
{
  PetscFunctionBegin;
  PetscCall(MatScale(((TF *)A->data)->in, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFShift(Mat A, PetscScalar a)
{
  PetscFunctionBegin;
  PetscCall(MatShift(((TF *)A->data)->in, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFZeroEntries(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatZeroEntries(((TF *)A->data)->in));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFZeroRows(Mat A, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b)
{
  PetscFunctionBegin;
  PetscCall(MatZeroRows(((TF *)A->data)->in, n, rows, diag, x, b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFGetRow(Mat A, PetscInt row, PetscInt *nz, PetscInt **idx, PetscScalar **v)
{
  PetscFunctionBegin;
  PetscCall(MatGetRow(((TF *)A->data)->in, row, nz, (const PetscInt **)idx, (const PetscScalar **)v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFRestoreRow(Mat A, PetscInt row, PetscInt *nz, PetscInt **idx, PetscScalar **v)
{
  PetscFunctionBegin;
  PetscCall(MatRestoreRow(((TF *)A->data)->in, row, nz, (const PetscInt **)idx, (const PetscScalar **)v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFSetOption(Mat A, MatOption op, PetscBool flg)
{
  TF *tf = (TF *)A->data;

  PetscFunctionBegin;
  if (tf->in) PetscCall(MatSetOption(tf->in, op, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFView(Mat A, PetscViewer v)
{
  TF *tf = (TF *)A->data;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "testfwd: copy rebuilt %" PetscInt_FMT " times, refreshed %" PetscInt_FMT " times; storage:\n", tf->nrebuild, tf->nrefresh));
  PetscCall(MatView(tf->in, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFCopy(Mat A, Mat B, MatStructure str)
{
  PetscBool same;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)B, ((PetscObject)A)->type_name, &same));
  PetscCheck(same, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "testfwd copies only to testfwd");
  PetscCall(MatCopy(((TF *)A->data)->in, ((TF *)B->data)->in, str));
  PetscCall(PetscObjectStateIncrease((PetscObject)B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFDuplicate(Mat A, MatDuplicateOption op, Mat *B)
{
  TF *tb;

  PetscFunctionBegin;
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), B));
  PetscCall(MatSetSizes(*B, A->rmap->n, A->cmap->n, A->rmap->N, A->cmap->N));
  PetscCall(MatSetBlockSizesFromMats(*B, A, A));
  PetscCall(PetscLayoutSetUp((*B)->rmap));
  PetscCall(PetscLayoutSetUp((*B)->cmap));
  PetscCall(MatSetType(*B, ((PetscObject)A)->type_name));
  tb = (TF *)(*B)->data;
  PetscCall(MatDuplicate(((TF *)A->data)->in, op, &tb->in));
  tb->innz           = tb->in->nonzerostate;
  (*B)->preallocated = PETSC_TRUE;
  (*B)->assembled    = A->assembled;
  (*B)->nonzerostate = A->nonzerostate;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFDestroy(Mat A)
{
  TF *tf = (TF *)A->data;

  PetscFunctionBegin;
  PetscCall(MatDestroy(&tf->in));
  PetscCall(MatDestroy(&tf->copy));
  PetscCall(GpukitMatAIJForwardUninstall(A));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSeqAIJSetPreallocation_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMPIAIJSetPreallocation_C", NULL));
  PetscCall(PetscFree(A->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TFCreate(Mat A, MatType type)
{
  TF *tf;

  PetscFunctionBegin;
  PetscCall(PetscNew(&tf));
  A->data                  = (void *)tf;
  A->ops->setvalues        = TFSetValues;
  A->ops->assemblybegin    = TFAssemblyBegin;
  A->ops->assemblyend      = TFAssemblyEnd;
  A->ops->mult             = TFMult;
  A->ops->multadd          = TFMultAdd;
  A->ops->multtranspose    = TFMultTranspose;
  A->ops->multtransposeadd = TFMultTransposeAdd;
  A->ops->getdiagonal      = TFGetDiagonal;
  A->ops->scale            = TFScale;
  A->ops->shift            = TFShift;
  A->ops->zeroentries      = TFZeroEntries;
  A->ops->zerorows         = TFZeroRows;
  A->ops->duplicate        = TFDuplicate;
  A->ops->copy             = TFCopy;
  A->ops->destroy          = TFDestroy;
  A->ops->setoption        = TFSetOption;
  A->ops->setup            = TFSetUp;
  A->ops->view             = TFView;
  if (tf_getrow) {
    A->ops->getrow     = TFGetRow;
    A->ops->restorerow = TFRestoreRow;
  }
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSeqAIJSetPreallocation_C", TFSeqPrealloc));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMPIAIJSetPreallocation_C", TFMPIPrealloc));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, type));
  PetscCall(GpukitMatAIJForwardInstall(A, TFGetAIJ));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCreate_SeqTestFwd(Mat A)
{
  PetscFunctionBegin;
  PetscCall(TFCreate(A, MATSEQTESTFWD));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCreate_MPITestFwd(Mat A)
{
  PetscFunctionBegin;
  PetscCall(TFCreate(A, MATMPITESTFWD));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCreate_TestFwd(Mat A)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(MatSetType(A, size > 1 ? MATMPITESTFWD : MATSEQTESTFWD));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ----------------------------------------------------------------------------------------------------------------- */

typedef struct {
  PetscInt  n, dof;
  PetscBool sym;
} Opts;

/* a value depending only on (global natural row, column, seed): symmetric with -sym, dominant positive diagonal */
static PetscScalar Value(PetscInt r, PetscInt c, PetscInt seed, PetscBool sym)
{
  unsigned long long a = (unsigned long long)(sym ? PetscMin(r, c) : r), b = (unsigned long long)(sym ? PetscMax(r, c) : c), h;

  h = a * 2654435761ULL ^ (b + 0x9e3779b97f4a7c15ULL) * 40503ULL ^ (unsigned long long)seed * 0x85ebca6bULL;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 32;
  if (r == c) return (PetscScalar)(12.0 + (double)(h % 1000) / 1000.0);
  return (PetscScalar)(-(double)(h % 1000) / 1000.0 - 0.2);
}

static PetscErrorCode Fill(DM da, Mat A, const Opts *o, PetscInt seed)
{
  DMDALocalInfo info;

  PetscFunctionBegin;
  PetscCall(DMDAGetLocalInfo(da, &info));
  for (PetscInt j = info.ys; j < info.ys + info.ym; j++)
    for (PetscInt i = info.xs; i < info.xs + info.xm; i++)
      for (PetscInt c = 0; c < o->dof; c++) {
        MatStencil  row = {0}, col[5 * 4];
        PetscScalar v[5 * 4];
        PetscInt    nc = 0, grow = (j * info.mx + i) * o->dof + c;
        const int   di[5] = {0, -1, 1, 0, 0}, dj[5] = {0, 0, 0, -1, 1};

        row.i = i;
        row.j = j;
        row.c = c;
        for (PetscInt s = 0; s < 5; s++) {
          PetscInt ii = i + di[s], jj = j + dj[s];
          if (ii < 0 || jj < 0 || ii >= info.mx || jj >= info.my) continue;
          for (PetscInt cc = 0; cc < o->dof; cc++) {
            PetscInt gcol = (jj * info.mx + ii) * o->dof + cc;
            if (s && cc != c) continue; /* couple the components at the point only */
            col[nc].i = ii;
            col[nc].j = jj;
            col[nc].k = 0;
            col[nc].c = cc;
            v[nc++]   = (s == 0 && cc != c) ? 0.1 * Value(grow, gcol, seed, o->sym) / 12.0 : Value(grow, gcol, seed, o->sym);
          }
        }
        PetscCall(MatSetValuesStencil(A, 1, &row, nc, col, v, INSERT_VALUES));
      }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CreatePair(DM da, const Opts *o, PetscInt seed, Mat *A, Mat *R)
{
  PetscFunctionBegin;
  PetscCall(DMSetMatType(da, MATTESTFWD));
  PetscCall(DMCreateMatrix(da, A));
  PetscCall(DMSetMatType(da, MATAIJ));
  PetscCall(DMCreateMatrix(da, R));
  PetscCall(Fill(da, *A, o, seed));
  PetscCall(Fill(da, *R, o, seed));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------- solves ------------------------------------------------------------ */
static PetscErrorCode SolvePair(DM da, Mat A, Mat R, Vec b, KSP *ka, KSP *kr, const char *what)
{
  Vec                xa, xr;
  PetscInt           ita, itr;
  KSPConvergedReason ra, rr;
  PetscReal          rel;
  KSP                k[2];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < 2; i++) {
    KSP *kk = i ? kr : ka;
    if (!*kk) {
      PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), kk));
      PetscCall(KSPSetDM(*kk, da));
      PetscCall(GpukitKSPSetDMActive(*kk, PETSC_FALSE));
      PetscCall(KSPSetTolerances(*kk, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 500));
      PetscCall(KSPSetFromOptions(*kk));
    }
    PetscCall(KSPSetOperators(*kk, i ? R : A, i ? R : A));
    k[i] = *kk;
  }
  PetscCall(VecDuplicate(b, &xa));
  PetscCall(VecDuplicate(b, &xr));
  PetscCall(KSPSolve(k[0], b, xa));
  PetscCall(KSPSolve(k[1], b, xr));
  PetscCall(KSPGetIterationNumber(k[0], &ita));
  PetscCall(KSPGetIterationNumber(k[1], &itr));
  PetscCall(KSPGetConvergedReason(k[0], &ra));
  PetscCall(KSPGetConvergedReason(k[1], &rr));
  PetscCall(GKRelDiff(xa, xr, NORM_INFINITY, &rel));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: iterations testfwd %" PetscInt_FMT " aij %" PetscInt_FMT ", reasons %s %s, solution difference %g\n", what, ita, itr, KSPConvergedReasons[ra], KSPConvergedReasons[rr], (double)rel));
  PetscCall(GKCheck((PetscBool)(rr > 0), "the AIJ solve converges"));
  PetscCall(GKCheck((PetscBool)(ra == rr), "same converged reason as AIJ"));
  PetscCall(GKCheck((PetscBool)(ita == itr), "same iteration count as AIJ"));
  PetscCall(GKCheck((PetscBool)(rel <= 1e-9), "same solution as AIJ"));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&xr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestSolve(DM da, const Opts *o)
{
  Mat       A, R;
  Vec       b;
  KSP       ka = NULL, kr = NULL;
  PetscBool change = PETSC_FALSE;
  PetscInt  rstart, rend;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-change", &change, NULL));
  PetscCall(CreatePair(da, o, 1, &A, &R));
  PetscCall(MatCreateVecs(R, NULL, &b));
  PetscCall(VecGetOwnershipRange(b, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; i++) PetscCall(VecSetValue(b, i, (PetscScalar)(1.0 + 0.5 * PetscSinReal((PetscReal)i)), INSERT_VALUES));
  PetscCall(VecAssemblyBegin(b));
  PetscCall(VecAssemblyEnd(b));
  PetscCall(SolvePair(da, A, R, b, &ka, &kr, "first solve"));
  if (change) {
    PetscCall(Fill(da, A, o, 2));
    PetscCall(Fill(da, R, o, 2));
    PetscCall(SolvePair(da, A, R, b, &ka, &kr, "solve after new values (same pattern)"));
    PetscCall(MatScale(A, 2.0));
    PetscCall(MatScale(R, 2.0));
    PetscCall(MatShift(A, 1.0));
    PetscCall(MatShift(R, 1.0));
    PetscCall(SolvePair(da, A, R, b, &ka, &kr, "solve after scale and shift"));
  }
  PetscCall(KSPDestroy(&ka));
  PetscCall(KSPDestroy(&kr));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------- operations -------------------------------------------------------- */
static PetscErrorCode Close(Mat X, Mat Y, const char *what)
{
  PetscFunctionBegin;
  PetscCall(GKCheckMatClose(X, Y, 1e-12, what));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: %s\n", what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckType(Mat X, const char *prefix, const char *what)
{
  PetscBool ok;

  PetscFunctionBegin;
  PetscCall(PetscStrbeginswith(((PetscObject)X)->type_name, prefix, &ok));
  if (!ok) {
    char t[64];
    PetscCall(PetscSNPrintf(t, sizeof(t), "%s", ((PetscObject)X)->type_name));
    ok = (PetscBool)(strstr(t, prefix) != NULL);
  }
  PetscCheck(ok, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: result type %s, expected a %s type", what, ((PetscObject)X)->type_name, prefix);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the products with the type as A, B or the middle of ABC, against AIJ */
typedef struct {
  Mat AP, PtAP, AtP, AAt, RA, RAP;
} Products;

static PetscErrorCode ProductsCompute(Mat A, Mat P, Mat Rt, Mat Raij, MatReuse reuse, Products *p)
{
  PetscFunctionBegin;
  PetscCall(MatMatMult(A, P, reuse, PETSC_DEFAULT, &p->AP));
  PetscCall(MatPtAP(A, P, reuse, PETSC_DEFAULT, &p->PtAP));
  PetscCall(MatTransposeMatMult(A, P, reuse, PETSC_DEFAULT, &p->AtP));
  PetscCall(MatMatTransposeMult(A, A, reuse, PETSC_DEFAULT, &p->AAt));
  PetscCall(MatMatMult(Raij, A, reuse, PETSC_DEFAULT, &p->RA));
  PetscCall(MatMatMatMult(Rt, A, P, reuse, PETSC_DEFAULT, &p->RAP));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ProductsCompare(Products *a, Products *r, const char *when)
{
  char msg[160];

  PetscFunctionBegin;
#define CMP(f, name) \
  do { \
    PetscCall(CheckType(a->f, "aij", name)); \
    PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s %s", name, when)); \
    PetscCall(Close(a->f, r->f, msg)); \
  } while (0)
  CMP(AP, "MatMatMult(A, P)");
  CMP(PtAP, "MatPtAP(A, P)");
  CMP(AtP, "MatTransposeMatMult(A, P)");
  CMP(AAt, "MatMatTransposeMult(A, A)");
  CMP(RA, "MatMatMult(aij, A)");
  CMP(RAP, "MatMatMatMult(R, A, P)");
#undef CMP
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ProductsDestroy(Products *p)
{
  PetscFunctionBegin;
  PetscCall(MatDestroy(&p->AP));
  PetscCall(MatDestroy(&p->PtAP));
  PetscCall(MatDestroy(&p->AtP));
  PetscCall(MatDestroy(&p->AAt));
  PetscCall(MatDestroy(&p->RA));
  PetscCall(MatDestroy(&p->RAP));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SameVec(Vec a, Vec b, const char *what)
{
  PetscFunctionBegin;
  PetscCall(GKCheckVecClose(a, b, 0.0, what));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: %s\n", what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestRowReductions(Mat A, Mat R)
{
  Vec       va, vr;
  PetscInt  m, *ia, *ir;
  PetscBool has;
  PetscErrorCode (*fn[4])(Mat, Vec, PetscInt[]) = {MatGetRowMax, MatGetRowMin, MatGetRowMaxAbs, MatGetRowMinAbs};
  const MatOperation op[4]                      = {MATOP_GET_ROW_MAX, MATOP_GET_ROW_MIN, MATOP_GET_ROW_MAX_ABS, MATOP_GET_ROW_MIN_ABS};
  const char        *name[4]                    = {"MatGetRowMax", "MatGetRowMin", "MatGetRowMaxAbs", "MatGetRowMinAbs"};

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(R, NULL, &va));
  PetscCall(MatCreateVecs(R, NULL, &vr));
  PetscCall(MatGetLocalSize(R, &m, NULL));
  PetscCall(PetscMalloc2(m, &ia, m, &ir));
  for (PetscInt k = 0; k < 4; k++) {
    PetscCall(MatHasOperation(R, op[k], &has));
    if (!has) continue;
    PetscCall((*fn[k])(A, va, ia));
    PetscCall((*fn[k])(R, vr, ir));
    PetscCall(SameVec(va, vr, name[k]));
    for (PetscInt i = 0; i < m; i++) PetscCheck(ia[i] == ir[i], PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: column of row %" PetscInt_FMT " is %" PetscInt_FMT ", AIJ says %" PetscInt_FMT, name[k], i, ia[i], ir[i]);
  }
  PetscCall(PetscFree2(ia, ir));
  PetscCall(VecDestroy(&va));
  PetscCall(VecDestroy(&vr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestOps(DM da, const Opts *o)
{
  Mat         A, R, P, Rt, Raij, X, Y, B;
  DM          dac;
  Products    pa = {0}, pr = {0};
  PetscMPIInt size, rank;
  PetscInt    rstart, rend, N;
  PetscBool   flg, flg2;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(CreatePair(da, o, 1, &A, &R));
  PetscCall(CheckType(A, "testfwd", "the matrix under test"));
  PetscCall(MatGetOwnershipRange(R, &rstart, &rend));
  PetscCall(MatGetSize(R, &N, NULL));
  /* an AIJ interpolation and restriction, and a second AIJ operand */
  PetscCall(DMCoarsen(da, PetscObjectComm((PetscObject)da), &dac));
  PetscCall(DMCreateInterpolation(dac, da, &P, NULL));
  PetscCall(MatConvert(P, MATAIJ, MAT_INPLACE_MATRIX, &P)); /* MAIJ for dof > 1 */
  PetscCall(MatTranspose(P, MAT_INITIAL_MATRIX, &Rt));
  PetscCall(MatDuplicate(R, MAT_COPY_VALUES, &Raij));

  /* ---- products: INITIAL, REUSE after new values, REUSE after a new nonzero */
  PetscCall(ProductsCompute(A, P, Rt, Raij, MAT_INITIAL_MATRIX, &pa));
  PetscCall(ProductsCompute(R, P, Rt, Raij, MAT_INITIAL_MATRIX, &pr));
  PetscCall(ProductsCompare(&pa, &pr, "(MAT_INITIAL_MATRIX)"));
  PetscCall(Fill(da, A, o, 2));
  PetscCall(Fill(da, R, o, 2));
  PetscCall(ProductsCompute(A, P, Rt, Raij, MAT_REUSE_MATRIX, &pa));
  PetscCall(ProductsDestroy(&pr)); /* the reference: AIJ's products made anew */
  PetscCall(ProductsCompute(R, P, Rt, Raij, MAT_INITIAL_MATRIX, &pr));
  PetscCall(ProductsCompare(&pa, &pr, "(MAT_REUSE_MATRIX, new values)"));
  {
    /* a new nonzero far from the diagonal: the REUSE products of the type redo their symbolic phase; AIJ is
       recomputed from scratch as the reference */
    PetscScalar v   = 0.5;
    PetscInt    row = rstart, col = N - 1 - rstart;

    PetscCall(MatSetOption(A, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_FALSE));
    PetscCall(MatSetOption(R, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_FALSE));
    PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MatSetOption(R, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    if (rend > rstart) PetscCall(MatSetValues(A, 1, &row, 1, &col, &v, ADD_VALUES));
    if (rend > rstart) PetscCall(MatSetValues(R, 1, &row, 1, &col, &v, ADD_VALUES));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyBegin(R, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(R, MAT_FINAL_ASSEMBLY));
    PetscCall(ProductsCompute(A, P, Rt, Raij, MAT_REUSE_MATRIX, &pa));
    PetscCall(ProductsDestroy(&pr));
    PetscCall(ProductsCompute(R, P, Rt, Raij, MAT_INITIAL_MATRIX, &pr));
    PetscCall(ProductsCompare(&pa, &pr, "(MAT_REUSE_MATRIX after a new nonzero)"));
  }
  PetscCall(ProductsDestroy(&pa));
  PetscCall(ProductsDestroy(&pr));
  /* MatProductCreate API with the type as B and AB with both operands of the type */
  PetscCall(MatMatMult(A, A, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &X));
  PetscCall(MatMatMult(R, R, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Y));
  PetscCall(Close(X, Y, "MatMatMult(A, A)"));
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&Y));

  /* ---- converts */
  {
    const MatType types[3] = {MATAIJ, MATDENSE, MATBAIJ};
    for (PetscInt t = 0; t < 3; t++) {
      char msg[64];
      PetscCall(MatConvert(A, types[t], MAT_INITIAL_MATRIX, &X));
      PetscCall(CheckType(X, types[t], "MatConvert"));
      PetscCall(PetscSNPrintf(msg, sizeof(msg), "MatConvert to %s", types[t]));
      PetscCall(Close(X, R, msg));
      PetscCall(MatConvert(A, types[t], MAT_REUSE_MATRIX, &X));
      PetscCall(PetscSNPrintf(msg, sizeof(msg), "MatConvert to %s (MAT_REUSE_MATRIX)", types[t]));
      PetscCall(Close(X, R, msg));
      PetscCall(MatDestroy(&X));
    }
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &X));
    PetscCall(MatConvert(X, MATAIJ, MAT_INPLACE_MATRIX, &X));
    PetscCall(CheckType(X, "aij", "MatConvert in place"));
    PetscCall(Close(X, R, "MatConvert to aij in place"));
    PetscCall(MatDestroy(&X));
  }

  /* ---- transposes: INITIAL, REUSE after new values, in place (keeps the type) */
  PetscCall(MatTranspose(A, MAT_INITIAL_MATRIX, &X));
  PetscCall(MatTranspose(R, MAT_INITIAL_MATRIX, &Y));
  PetscCall(Close(X, Y, "MatTranspose (MAT_INITIAL_MATRIX)"));
  PetscCall(MatScale(A, 3.0));
  PetscCall(MatScale(R, 3.0));
  PetscCall(MatTranspose(A, MAT_REUSE_MATRIX, &X));
  PetscCall(MatTranspose(R, MAT_REUSE_MATRIX, &Y));
  PetscCall(Close(X, Y, "MatTranspose (MAT_REUSE_MATRIX after MatScale)"));
  PetscCall(MatDestroy(&X));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &X));
  PetscCall(MatTranspose(X, MAT_INPLACE_MATRIX, &X));
  PetscCall(CheckType(X, "testfwd", "MatTranspose in place"));
  PetscCall(Close(X, Y, "MatTranspose (MAT_INPLACE_MATRIX) keeps the type"));
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&Y));

  /* ---- equal */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &X));
  PetscCall(MatEqual(A, X, &flg));
  PetscCall(GKCheck(flg, "MatEqual(A, duplicate of A)"));
  PetscCall(MatEqual(A, R, &flg));
  PetscCall(GKCheck(flg, "MatEqual(A, AIJ of the same values)"));
  if (rend > rstart) {
    PetscScalar v = 100.0;
    PetscCall(MatSetValues(X, 1, &rstart, 1, &rstart, &v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatEqual(A, X, &flg));
  PetscCall(GKCheck((PetscBool)!flg, "MatEqual(A, A with one value changed) is false"));
  PetscCall(MatDestroy(&X));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: MatEqual\n"));

  /* ---- reductions, norms, symmetry, info */
  PetscCall(TestRowReductions(A, R));
  {
    const NormType nt[3] = {NORM_1, NORM_FROBENIUS, NORM_INFINITY};
    PetscReal      na, nr, *ca, *cr;
    for (PetscInt k = 0; k < 3; k++) {
      PetscCall(MatNorm(A, nt[k], &na));
      PetscCall(MatNorm(R, nt[k], &nr));
      PetscCheck(PetscAbsReal(na - nr) <= 1e-12 * nr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatNorm %s: %g, AIJ %g", NormTypes[nt[k]], (double)na, (double)nr);
    }
    PetscCall(PetscMalloc2(N, &ca, N, &cr));
    PetscCall(MatGetColumnNorms(A, NORM_2, ca));
    PetscCall(MatGetColumnNorms(R, NORM_2, cr));
    for (PetscInt j = 0; j < N; j++) PetscCheck(PetscAbsReal(ca[j] - cr[j]) <= 1e-12 * cr[j], PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetColumnNorms: column %" PetscInt_FMT " %g, AIJ %g", j, (double)ca[j], (double)cr[j]);
    PetscCall(PetscFree2(ca, cr));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: MatNorm, MatGetColumnNorms\n"));
  }
  PetscCall(MatIsSymmetric(A, 0.0, &flg));
  PetscCall(MatIsSymmetric(R, 0.0, &flg2));
  PetscCall(GKCheck((PetscBool)(flg == flg2), "MatIsSymmetric agrees with AIJ"));
  PetscCall(MatTranspose(A, MAT_INITIAL_MATRIX, &X));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &Y));
  PetscCall(MatTranspose(Y, MAT_INPLACE_MATRIX, &Y)); /* of the type again */
  PetscCall(MatIsTranspose(A, Y, 0.0, &flg));
  PetscCall(GKCheck(flg, "MatIsTranspose(A, A^T of the type)"));
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&Y));
  PetscCall(MatHasOperation(R, MATOP_IS_STRUCTURALLY_SYMMETRIC, &flg));
  if (flg) {
    PetscCall(MatIsStructurallySymmetric(A, &flg));
    PetscCall(MatIsStructurallySymmetric(R, &flg2));
    PetscCall(GKCheck((PetscBool)(flg == flg2), "MatIsStructurallySymmetric agrees with AIJ"));
  }
  {
    MatInfo  ia, ir;
    IS       za, zr;
    PetscInt nza, nzr;
    PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &ia));
    PetscCall(MatGetInfo(R, MAT_GLOBAL_SUM, &ir));
    PetscCall(GKCheck((PetscBool)(ia.nz_used == ir.nz_used), "MatGetInfo nz_used agrees with AIJ"));
    PetscCall(MatFindZeroDiagonals(A, &za));
    PetscCall(MatFindZeroDiagonals(R, &zr));
    PetscCall(ISGetSize(za, &nza));
    PetscCall(ISGetSize(zr, &nzr));
    PetscCall(GKCheck((PetscBool)(nza == nzr), "MatFindZeroDiagonals agrees with AIJ"));
    PetscCall(ISDestroy(&za));
    PetscCall(ISDestroy(&zr));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: MatIsSymmetric, MatIsStructurallySymmetric, MatGetInfo, MatFindZeroDiagonals\n"));
  }

  /* ---- values and rows */
  if (rend > rstart) {
    PetscInt           rows[2] = {rstart, rend - 1}, cols[4] = {0, rstart, rend - 1, N - 1}, nca, ncr;
    PetscScalar        va[8], vr[8];
    const PetscInt    *ja, *jr;
    const PetscScalar *xa, *xr;
    PetscCall(MatGetValues(A, 2, rows, 4, cols, va));
    PetscCall(MatGetValues(R, 2, rows, 4, cols, vr));
    for (PetscInt k = 0; k < 8; k++) PetscCheck(va[k] == vr[k], PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetValues differs from AIJ at %" PetscInt_FMT, k);
    PetscCall(MatGetRow(A, rstart, &nca, &ja, &xa));
    PetscCall(MatGetRow(R, rstart, &ncr, &jr, &xr));
    PetscCheck(nca == ncr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRow: %" PetscInt_FMT " entries, AIJ %" PetscInt_FMT, nca, ncr);
    for (PetscInt k = 0; k < nca; k++) PetscCheck(ja[k] == jr[k] && xa[k] == xr[k], PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRow differs from AIJ at %" PetscInt_FMT, k);
    PetscCall(MatRestoreRow(A, rstart, &nca, &ja, &xa));
    PetscCall(MatRestoreRow(R, rstart, &ncr, &jr, &xr));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: MatGetValues, MatGetRow (%s)\n", tf_getrow ? "the type's" : "forwarded"));
  if (size == 1) {
    PetscInt        na, nr;
    const PetscInt *iaa, *jaa, *iar, *jar;
    PetscBool       da_, dr_;
    for (PetscInt inode = 0; inode < 2; inode++) {
      PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, (PetscBool)inode, &na, &iaa, &jaa, &da_));
      PetscCall(MatGetRowIJ(R, 0, PETSC_FALSE, (PetscBool)inode, &nr, &iar, &jar, &dr_));
      PetscCheck(da_ == dr_ && na == nr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ (inode %d): %" PetscInt_FMT " rows, AIJ %" PetscInt_FMT, (int)inode, na, nr);
      for (PetscInt i = 0; i <= na; i++) PetscCheck(iaa[i] == iar[i], PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ: ia differs");
      for (PetscInt i = 0; i < iaa[na]; i++) PetscCheck(jaa[i] == jar[i], PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ: ja differs");
      PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, (PetscBool)inode, &na, &iaa, &jaa, &da_));
      PetscCall(MatRestoreRowIJ(R, 0, PETSC_FALSE, (PetscBool)inode, &nr, &iar, &jar, &dr_));
    }
    {
      IS ra, ca, rr, cr;
      PetscCall(MatGetOrdering(A, MATORDERINGND, &ra, &ca));
      PetscCall(MatGetOrdering(R, MATORDERINGND, &rr, &cr));
      PetscCall(ISEqual(ra, rr, &flg));
      PetscCall(GKCheck(flg, "MatGetOrdering(nd) agrees with AIJ (inode-compressed rows)"));
      PetscCall(MatPermute(A, ra, ca, &X));
      PetscCall(MatPermute(R, rr, cr, &Y));
      PetscCall(Close(X, Y, "MatPermute"));
      PetscCall(MatDestroy(&X));
      PetscCall(MatDestroy(&Y));
      PetscCall(ISDestroy(&ra));
      PetscCall(ISDestroy(&ca));
      PetscCall(ISDestroy(&rr));
      PetscCall(ISDestroy(&cr));
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: MatGetRowIJ, MatGetOrdering\n"));
  } else {
    PetscCall(MatGetDiagonalBlock(A, &X));
    PetscCall(MatGetDiagonalBlock(R, &Y));
    PetscCall(MatEqual(X, Y, &flg));
    PetscCall(GKCheck(flg, "MatGetDiagonalBlock agrees with AIJ"));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: MatGetDiagonalBlock\n"));
  }
  {
    const PetscScalar *ba, *br;
    PetscInt           bs, m;
    PetscCall(MatGetBlockSize(R, &bs));
    PetscCall(MatGetLocalSize(R, &m, NULL));
    PetscCall(MatInvertBlockDiagonal(A, &ba));
    PetscCall(MatInvertBlockDiagonal(R, &br));
    for (PetscInt k = 0; k < m * bs; k++) PetscCheck(PetscAbsScalar(ba[k] - br[k]) <= 1e-14 * PetscAbsScalar(br[k]) + 1e-300, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatInvertBlockDiagonal differs at %" PetscInt_FMT, k);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: MatInvertBlockDiagonal (block size %" PetscInt_FMT ")\n", bs));
  }

  /* ---- sub-matrices */
  {
    IS   isr, is2[1], isa[1];
    Mat *sa, *sr;
    PetscCall(ISCreateStride(PETSC_COMM_WORLD, (rend - rstart + 1) / 2, rstart, 2, &isr));
    PetscCall(MatCreateSubMatrix(A, isr, isr, MAT_INITIAL_MATRIX, &X));
    PetscCall(MatCreateSubMatrix(R, isr, isr, MAT_INITIAL_MATRIX, &Y));
    PetscCall(Close(X, Y, "MatCreateSubMatrix"));
    PetscCall(MatCreateSubMatrix(A, isr, isr, MAT_REUSE_MATRIX, &X));
    PetscCall(Close(X, Y, "MatCreateSubMatrix (MAT_REUSE_MATRIX)"));
    PetscCall(MatDestroy(&X));
    PetscCall(MatDestroy(&Y));
    PetscCall(ISDestroy(&isr));
    PetscCall(ISCreateStride(PETSC_COMM_SELF, rend - rstart, rstart, 1, &isa[0]));
    PetscCall(ISCreateStride(PETSC_COMM_SELF, rend - rstart, rstart, 1, &is2[0]));
    PetscCall(MatIncreaseOverlap(A, 1, isa, 2));
    PetscCall(MatIncreaseOverlap(R, 1, is2, 2));
    PetscCall(ISSort(isa[0]));
    PetscCall(ISSort(is2[0]));
    PetscCall(ISEqual(isa[0], is2[0], &flg));
    PetscCall(GKCheck(flg, "MatIncreaseOverlap agrees with AIJ"));
    PetscCall(MatCreateSubMatrices(A, 1, isa, isa, MAT_INITIAL_MATRIX, &sa));
    PetscCall(MatCreateSubMatrices(R, 1, is2, is2, MAT_INITIAL_MATRIX, &sr));
    PetscCall(MatEqual(sa[0], sr[0], &flg));
    PetscCall(GKCheck(flg, "MatCreateSubMatrices agrees with AIJ"));
    PetscCall(MatCreateSubMatrices(A, 1, isa, isa, MAT_REUSE_MATRIX, &sa));
    PetscCall(MatEqual(sa[0], sr[0], &flg));
    PetscCall(GKCheck(flg, "MatCreateSubMatrices (MAT_REUSE_MATRIX) agrees with AIJ"));
    PetscCall(MatDestroySubMatrices(1, &sa));
    PetscCall(MatDestroySubMatrices(1, &sr));
    PetscCall(ISDestroy(&isa[0]));
    PetscCall(ISDestroy(&is2[0]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: MatIncreaseOverlap, MatCreateSubMatrices\n"));
  }

  /* ---- MatHasOperation says what AIJ says for every forwarded op */
  {
    /* op numbers from the slots of struct _MatOps (what MatHasOperation() reads), the same in every release */
#define OPIDX(f) ((MatOperation)(offsetof(struct _MatOps, f) / sizeof(void (*)(void))))
    const MatOperation ops[] = {OPIDX(sor), OPIDX(transpose), OPIDX(getinfo), OPIDX(equal), OPIDX(norm), OPIDX(createsubmatrices), OPIDX(increaseoverlap), OPIDX(getvalues), OPIDX(getrowmax), OPIDX(getrowmin), OPIDX(getrowmaxabs), OPIDX(getrowminabs), OPIDX(getrowij), OPIDX(getcolumnij), OPIDX(permute), OPIDX(createsubmatrix), OPIDX(findzerodiagonals), OPIDX(issymmetric), OPIDX(ishermitian), OPIDX(isstructurallysymmetric), OPIDX(getseqnonzerostructure), OPIDX(getmultiprocblock), OPIDX(invertblockdiagonal), OPIDX(invertvariableblockdiagonal), OPIDX(creategraph), OPIDX(getrow), OPIDX(getcolumnvector), OPIDX(multdiagonalblock), OPIDX(findoffblockdiagonalentries), OPIDX(getghosts), OPIDX(getcolumnreductions), OPIDX(findnonzerorows), OPIDX(transposesymbolic)};
#undef OPIDX
    for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
      PetscCall(MatHasOperation(A, ops[k], &flg));
      PetscCall(MatHasOperation(R, ops[k], &flg2));
      PetscCheck(flg == flg2, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatHasOperation(op %d): testfwd says %d, AIJ %d", (int)ops[k], (int)flg, (int)flg2);
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: MatHasOperation agrees with AIJ\n"));
  }

  /* ---- binary view: the file reads back as AIJ's */
  {
    PetscViewer v;
    char        fa[PETSC_MAX_PATH_LEN], fr[PETSC_MAX_PATH_LEN];
    int         pid = (int)getpid();
    PetscCallMPI(MPI_Bcast(&pid, 1, MPI_INT, 0, PETSC_COMM_WORLD));
    PetscCall(PetscSNPrintf(fa, sizeof(fa), "/tmp/gk_aijfwd_%d_a.bin", pid));
    PetscCall(PetscSNPrintf(fr, sizeof(fr), "/tmp/gk_aijfwd_%d_r.bin", pid));
    for (PetscInt k = 0; k < 2; k++) {
      PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, k ? fr : fa, FILE_MODE_WRITE, &v));
      PetscCall(MatView(k ? R : A, v));
      PetscCall(PetscViewerDestroy(&v));
    }
    PetscCall(MatCreate(PETSC_COMM_WORLD, &X));
    PetscCall(MatSetType(X, MATAIJ));
    PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, fa, FILE_MODE_READ, &v));
    PetscCall(MatLoad(X, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(MatCreate(PETSC_COMM_WORLD, &Y));
    PetscCall(MatSetType(Y, MATAIJ));
    PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, fr, FILE_MODE_READ, &v));
    PetscCall(MatLoad(Y, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(MatEqual(X, Y, &flg));
    PetscCall(GKCheck(flg, "binary MatView of the type reads back as AIJ's"));
    PetscCall(MatDestroy(&X));
    PetscCall(MatDestroy(&Y));
    if (!rank) {
      char info[PETSC_MAX_PATH_LEN + 8];
      (void)remove(fa);
      (void)remove(fr);
      PetscCall(PetscSNPrintf(info, sizeof(info), "%s.info", fa));
      (void)remove(info);
      PetscCall(PetscSNPrintf(info, sizeof(info), "%s.info", fr));
      (void)remove(info);
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: binary MatView\n"));
  }

  /* ---- factorization through the copy, refreshed at each numeric factorization (one rank: PETSc's LU) */
  if (size == 1) {
    Mat           F, G;
    IS            r, c;
    Vec           b, xa, xr;
    MatFactorInfo info;
    PetscCall(MatFactorInfoInitialize(&info));
    PetscCall(MatCreateVecs(R, &xa, &b));
    PetscCall(VecDuplicate(xa, &xr));
    PetscCall(VecSet(b, 1.0));
    PetscCall(MatGetFactor(A, MATSOLVERPETSC, MAT_FACTOR_LU, &F));
    PetscCall(MatGetFactor(R, MATSOLVERPETSC, MAT_FACTOR_LU, &G));
    PetscCall(MatGetOrdering(A, MATORDERINGND, &r, &c));
    PetscCall(MatLUFactorSymbolic(F, A, r, c, &info));
    PetscCall(MatLUFactorSymbolic(G, R, r, c, &info));
    for (PetscInt k = 0; k < 2; k++) {
      if (k) {
        PetscCall(MatShift(A, 5.0));
        PetscCall(MatShift(R, 5.0));
      }
      PetscCall(MatLUFactorNumeric(F, A, &info));
      PetscCall(MatLUFactorNumeric(G, R, &info));
      PetscCall(MatSolve(F, b, xa));
      PetscCall(MatSolve(G, b, xr));
      PetscCall(SameVec(xa, xr, k ? "MatLUFactorNumeric after MatShift" : "MatGetFactor/MatLUFactor through the copy"));
    }
    PetscCall(ISDestroy(&r));
    PetscCall(ISDestroy(&c));
    PetscCall(MatDestroy(&F));
    PetscCall(MatDestroy(&G));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&xa));
    PetscCall(VecDestroy(&xr));
  }

  /* ---- ops that change the matrix are never forwarded */
  {
    Vec            l;
    PetscErrorCode ierr;
    PetscCall(MatCreateVecs(R, NULL, &l));
    PetscCall(VecSet(l, 2.0));
    PetscCall(GKExpectErrorBegin());
    ierr = MatDiagonalScale(A, l, NULL);
    PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_SUP, "No method diagonalscale", "MatDiagonalScale (changes the matrix) is not forwarded"));
    PetscCall(VecDestroy(&l));
    PetscCall(MatHasOperation(A, MATOP_DIAGONAL_SCALE, &flg));
    PetscCall(GKCheck((PetscBool)!flg, "MatHasOperation(MATOP_DIAGONAL_SCALE) is false"));
  }

  /* the forwarder of a matrix without one: a clear error */
  {
    PetscErrorCode ierr;
    Mat            C;
    PetscCall(GKExpectErrorBegin());
    ierr = GpukitMatAIJForwardGetAIJ(R, &C);
    PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_WRONG, "has no AIJ forwarder", "GpukitMatAIJForwardGetAIJ() on AIJ"));
  }
  /* ASCII views are the type's own (one rank: on more, the DMDA's natural-ordering view takes over) */
  if (size == 1) {
    PetscViewer v;
    char        fn[PETSC_MAX_PATH_LEN], line[256];
    FILE       *fp;
    PetscBool   own = PETSC_FALSE;
    PetscCall(PetscSNPrintf(fn, sizeof(fn), "/tmp/gk_aijfwd_%d.txt", (int)getpid()));
    PetscCall(PetscViewerASCIIOpen(PETSC_COMM_SELF, fn, &v));
    PetscCall(MatView(A, v));
    PetscCall(PetscViewerDestroy(&v));
    fp = fopen(fn, "r");
    PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot read back %s", fn);
    while (fgets(line, sizeof(line), fp))
      if (strstr(line, "testfwd: copy rebuilt")) own = PETSC_TRUE;
    fclose(fp);
    (void)remove(fn);
    PetscCall(GKCheck(own, "an ASCII MatView runs the type's own view"));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: ASCII MatView is the type's\n"));
  }

  /* the products with the type as B (through MatProductCreate) */
  PetscCall(MatProductCreate(Raij, A, NULL, &X));
  PetscCall(MatProductSetType(X, MATPRODUCT_AtB));
  PetscCall(MatProductSetFromOptions(X));
  PetscCall(MatProductSymbolic(X));
  PetscCall(MatProductNumeric(X));
  PetscCall(MatTransposeMatMult(Raij, R, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Y));
  PetscCall(Close(X, Y, "MatProduct AtB(aij, A)"));
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&Y));

  PetscCall(MatDestroy(&P));
  PetscCall(MatDestroy(&Rt));
  PetscCall(MatDestroy(&Raij));
  PetscCall(DMDestroy(&dac));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  (void)B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  DM        da;
  Opts      o        = {17, 1, PETSC_FALSE};
  char      test[32] = "solve";
  PetscBool isops;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &o.n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dof", &o.dof, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-sym", &o.sym, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-tf_getrow", &tf_getrow, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-test", test, sizeof(test), NULL));
  PetscCall(MatRegister(MATTESTFWD, MatCreate_TestFwd));
  PetscCall(MatRegister(MATSEQTESTFWD, MatCreate_SeqTestFwd));
  PetscCall(MatRegister(MATMPITESTFWD, MatCreate_MPITestFwd));
  PetscCall(GpukitMatAIJForwardRegisterFactors(MATSEQTESTFWD));
  PetscCall(GpukitMatAIJForwardRegisterFactors(MATMPITESTFWD));
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, o.n, o.n, PETSC_DECIDE, PETSC_DECIDE, o.dof, 1, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(PetscStrcmp(test, "ops", &isops));
  if (isops) PetscCall(TestOps(da, &o));
  else PetscCall(TestSolve(da, &o));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "aijfwd: all checks passed\n"));
  PetscCall(PetscFinalize());
  return 0;
}
