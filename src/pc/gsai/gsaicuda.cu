/*
   PCGSAI's device set-up for a MATSEQAIJCUSPARSE matrix (a MATSEQSGDIACUDA one is converted first): the
   PETSc glue around gsaikernels.cu. Built only against a PETSc with CUDA. The steps mirror PCSetUp_GSAI_Host()
   in gsai.c, which is their reference (tests/gpu/gsai_cuda.c compares both):
     rows     - B = A (left, spd) or A^T (right, by a stable sort on the device; its permutation is kept so that
                new values of A only permute)
     pattern  - select (threshold, lower part, cap) and union (powers) kernels: J as CSR on the device
     dims     - |I| of every row (a union count), the workspace of every row and its exact offset (a prefix
                sum), the size classes (warp per row up to 32 x 32, block per row above)
     solve    - batches of consecutive rows whose workspace fits the limit (-pc_gsai_device_workspace, else half
                the free device memory): gather the dense local problems, solve them (Householder QR least
                squares or FSAI Cholesky), fall back to the diagonal where documented
     assemble - M (or G) as MATSEQAIJCUSPARSE through MatSetPreallocationCOO() (PETSc analyses the COO indices
                on the host, once per pattern) and MatSetValuesCOO() with the device values
   With SAME_NONZERO_PATTERN the pattern, the sizes, the offsets and M's structure are kept: only the values of
   B, the local problems and MatSetValuesCOO() run again. The values never leave the device.
*/
#include <petscdevice_cuda.h>
#include "gpukitcuda.h"
#include "gsaiimpl.h"
#include "gsaikernels.h"

#if defined(GPUKIT_GSAICUDA_AVAILABLE)

typedef struct {
  int n;
  /* right: B = A^T, owned here; perm: bval[e] = aval[perm[e]] */
  int    *bptr, *bcol, *perm;
  double *bval;
  int     nnzb;
  /* the pattern J of the rows of N, and what the local problems need */
  int       *jptr, *jcol, nnzj;
  int       *n1, *cur, *pos, *small, *large, *status;
  long long *woff, wtotal;
  int        ns, nl, maxn1, maxn2;
  double    *vals;
} PC_GSAI_CUDA;

template <typename T>
static PetscErrorCode GSAICUDAMalloc(T **p, size_t n)
{
  PetscFunctionBegin;
  PetscCallCUDA(cudaMalloc((void **)p, (n ? n : 1) * sizeof(T)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <typename T>
static PetscErrorCode GSAICUDAFree(T **p)
{
  PetscFunctionBegin;
  if (*p) PetscCallCUDA(cudaFree((void *)*p));
  *p = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the pattern, its sizes and the local problems' bookkeeping */
static PetscErrorCode GSAICUDAFreePattern(PC_GSAI_CUDA *cu)
{
  PetscFunctionBegin;
  PetscCall(GSAICUDAFree(&cu->jptr));
  PetscCall(GSAICUDAFree(&cu->jcol));
  PetscCall(GSAICUDAFree(&cu->n1));
  PetscCall(GSAICUDAFree(&cu->cur));
  PetscCall(GSAICUDAFree(&cu->pos));
  PetscCall(GSAICUDAFree(&cu->small));
  PetscCall(GSAICUDAFree(&cu->large));
  PetscCall(GSAICUDAFree(&cu->status));
  PetscCall(GSAICUDAFree(&cu->woff));
  PetscCall(GSAICUDAFree(&cu->vals));
  cu->nnzj = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCReset_GSAI_CUDA(PC pc)
{
  PC_GSAI      *gs = (PC_GSAI *)pc->data;
  PC_GSAI_CUDA *cu = (PC_GSAI_CUDA *)gs->cuda;

  PetscFunctionBegin;
  if (!cu) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GSAICUDAFreePattern(cu));
  PetscCall(GSAICUDAFree(&cu->bptr));
  PetscCall(GSAICUDAFree(&cu->bcol));
  PetscCall(GSAICUDAFree(&cu->bval));
  PetscCall(GSAICUDAFree(&cu->perm));
  PetscCall(PetscFree(gs->cuda));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* rows (selected and capped) of (ptr, col, val) with weights w (NULL: |val|): a new CSR, and its weights when ow */
static PetscErrorCode GSAICUDASelect(int n, const int *ptr, const int *col, const double *val, const double *w, const GpukitGSAISelectArgs *a, int **optr, int **ocol, double **ow, int *nnz, cudaStream_t stream)
{
  int *cnt;

  PetscFunctionBegin;
  PetscCall(GSAICUDAMalloc(&cnt, (size_t)n));
  PetscCall(GSAICUDAMalloc(optr, (size_t)n + 1));
  PetscCallCUDA(GpukitGSAISelectCUDA(n, ptr, col, val, w, a, cnt, NULL, NULL, NULL, stream));
  PetscCallCUDA(GpukitGSAIScanCUDA(n, cnt, *optr, nnz, stream));
  PetscCall(GSAICUDAFree(&cnt));
  PetscCall(GSAICUDAMalloc(ocol, (size_t)*nnz));
  if (ow) PetscCall(GSAICUDAMalloc(ow, (size_t)*nnz));
  PetscCallCUDA(GpukitGSAISelectCUDA(n, ptr, col, val, w, a, NULL, *optr, *ocol, ow ? *ow : NULL, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one level of the power: row k = union of T(j,:) over j in S(k,:), weights summed */
static PetscErrorCode GSAICUDAUnion(int n, const int *sptr, const int *scol, const double *sw, int snnz, const int *tptr, const int *tcol, const double *tw, int **optr, int **ocol, double **ow, int *nnz, cudaStream_t stream)
{
  int *cnt, *cur;

  PetscFunctionBegin;
  PetscCall(GSAICUDAMalloc(&cnt, (size_t)n));
  PetscCall(GSAICUDAMalloc(&cur, (size_t)snnz));
  PetscCall(GSAICUDAMalloc(optr, (size_t)n + 1));
  PetscCallCUDA(GpukitGSAIUnionCUDA(n, sptr, scol, NULL, tptr, tcol, NULL, cur, cnt, NULL, NULL, NULL, stream));
  PetscCallCUDA(GpukitGSAIScanCUDA(n, cnt, *optr, nnz, stream));
  PetscCall(GSAICUDAMalloc(ocol, (size_t)*nnz));
  PetscCall(GSAICUDAMalloc(ow, (size_t)*nnz));
  PetscCallCUDA(GpukitGSAIUnionCUDA(n, sptr, scol, sw, tptr, tcol, tw, cur, NULL, *optr, *ocol, *ow, stream));
  PetscCall(GSAICUDAFree(&cnt));
  PetscCall(GSAICUDAFree(&cur));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* J on the device (GSAIPatternRows() in gsai.c) */
static PetscErrorCode GSAICUDAPattern(PC_GSAI *gs, PC_GSAI_CUDA *cu, const int *bptr, const int *bcol, const double *bval, cudaStream_t stream)
{
  const int            n = cu->n;
  GpukitGSAISelectArgs a;

  PetscFunctionBegin;
  a.tau = (double)gs->tau;
  if (gs->pattern != PCGSAI_PATTERN_POWER || gs->power == 1) {
    a.threshold = gs->pattern != PCGSAI_PATTERN_A;
    a.lower     = gs->type == PCGSAI_SPD;
    a.cap       = (int)gs->maxnnz;
    PetscCall(GSAICUDASelect(n, bptr, bcol, bval, NULL, &a, &cu->jptr, &cu->jcol, NULL, &cu->nnzj, stream));
  } else {
    int    *tptr, *tcol, *lptr, *lcol, tnnz, lnnz;
    double *tw, *lw;

    /* level 1: T, the thresholded rows with their diagonal, weights |a| */
    a.threshold = 1;
    a.lower     = 0;
    a.cap       = 0;
    PetscCall(GSAICUDASelect(n, bptr, bcol, bval, NULL, &a, &tptr, &tcol, &tw, &tnnz, stream));
    lptr = tptr;
    lcol = tcol;
    lw   = tw;
    lnnz = tnnz;
    for (PetscInt l = 2; l <= gs->power; l++) {
      int    *nptr, *ncol, nnnz;
      double *nw;
      PetscCall(GSAICUDAUnion(n, lptr, lcol, lw, lnnz, tptr, tcol, tw, &nptr, &ncol, &nw, &nnnz, stream));
      if (lptr != tptr) {
        PetscCall(GSAICUDAFree(&lptr));
        PetscCall(GSAICUDAFree(&lcol));
        PetscCall(GSAICUDAFree(&lw));
      }
      lptr = nptr;
      lcol = ncol;
      lw   = nw;
      lnnz = nnnz;
    }
    /* the lower part (spd) and the cap, on the weights of the power */
    a.threshold = 0;
    a.lower     = gs->type == PCGSAI_SPD;
    a.cap       = (int)gs->maxnnz;
    PetscCall(GSAICUDASelect(n, lptr, lcol, NULL, lw, &a, &cu->jptr, &cu->jcol, NULL, &cu->nnzj, stream));
    PetscCall(GSAICUDAFree(&lptr));
    PetscCall(GSAICUDAFree(&lcol));
    PetscCall(GSAICUDAFree(&lw));
    PetscCall(GSAICUDAFree(&tptr));
    PetscCall(GSAICUDAFree(&tcol));
    PetscCall(GSAICUDAFree(&tw));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A(k,k) for the message of a failure, from the device CSR */
static PetscErrorCode GSAICUDADiagonalEntry(const int *ptr, const int *col, const double *val, int k, PetscReal *akk)
{
  int     range[2], len;
  int    *c;
  double *v;

  PetscFunctionBegin;
  *akk = 0.0;
  PetscCallCUDA(cudaMemcpy(range, ptr + k, 2 * sizeof(int), cudaMemcpyDeviceToHost));
  len = range[1] - range[0];
  if (len <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscMalloc2(len, &c, len, &v));
  PetscCallCUDA(cudaMemcpy(c, col + range[0], (size_t)len * sizeof(int), cudaMemcpyDeviceToHost));
  PetscCallCUDA(cudaMemcpy(v, val + range[0], (size_t)len * sizeof(double), cudaMemcpyDeviceToHost));
  for (int e = 0; e < len; e++)
    if (c[e] == k) *akk = v[e];
  PetscCall(PetscFree2(c, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GSAICUDASync(cudaStream_t stream)
{
  PetscFunctionBegin;
  PetscCallCUDA(cudaStreamSynchronize(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCSetUp_GSAI_CUDA(PC pc, Mat A, PetscBool reuse)
{
  PC_GSAI           *gs = (PC_GSAI *)pc->data;
  PC_GSAI_CUDA      *cu;
  Mat                Aaij;
  const PetscInt    *ai, *aj;
  const PetscScalar *aa;
  const int         *bptr, *bcol;
  const double      *bval;
  cudaStream_t       stream;
  MatInfo            info;
  PetscBool          isaij, right;
  PetscLogDouble     t0, t1;
  GpukitGSAIProblem  P;
  int                nf, failrow, failstatus, nnza;
  GSAIFailure        fail;

  PetscFunctionBegin;
  if (!gs->cuda) PetscCall(PetscNew((PC_GSAI_CUDA **)&gs->cuda));
  cu    = (PC_GSAI_CUDA *)gs->cuda;
  right = (gs->type == PCGSAI_GENERAL && gs->sideused == PC_RIGHT) ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(GpukitCUDAGetStream("PCGSAI builds M (or use -pc_gsai_use_device false)", &stream));
  gs->conversion[0] = 0;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJCUSPARSE, &isaij));
  if (isaij) {
    PetscCall(PetscObjectReference((PetscObject)A));
    Aaij = A;
  } else {
    PetscCall(PetscSNPrintf(gs->conversion, sizeof(gs->conversion), "%s converted to MATSEQAIJCUSPARSE for its CSR", ((PetscObject)A)->type_name));
    PetscCall(PetscInfo(pc, "The device set-up reads CSR: converting the %s matrix to MATSEQAIJCUSPARSE\n", ((PetscObject)A)->type_name));
    PetscCall(MatConvert(A, MATSEQAIJCUSPARSE, MAT_INITIAL_MATRIX, &Aaij));
  }
  PetscCall(MatGetInfo(Aaij, MAT_LOCAL, &info));
  nnza  = (int)info.nz_used;
  cu->n = (int)Aaij->rmap->n;
  PetscCall(MatSeqAIJCUSPARSEGetIJ(Aaij, PETSC_FALSE, &ai, &aj));
  PetscCall(MatSeqAIJCUSPARSEGetArrayRead(Aaij, &aa));

  /* rows: B */
  PetscCall(PetscLogEventBegin(PC_GSAI_PatternCUDA, pc, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  if (right) {
    if (!reuse || !cu->perm || cu->nnzb != nnza) {
      PetscCall(GSAICUDAFree(&cu->bptr));
      PetscCall(GSAICUDAFree(&cu->bcol));
      PetscCall(GSAICUDAFree(&cu->bval));
      PetscCall(GSAICUDAFree(&cu->perm));
      PetscCall(GSAICUDAMalloc(&cu->bptr, (size_t)cu->n + 1));
      PetscCall(GSAICUDAMalloc(&cu->bcol, (size_t)nnza));
      PetscCall(GSAICUDAMalloc(&cu->bval, (size_t)nnza));
      PetscCall(GSAICUDAMalloc(&cu->perm, (size_t)nnza));
      PetscCallCUDA(GpukitGSAITransposeCUDA(cu->n, nnza, ai, aj, aa, cu->bptr, cu->bcol, cu->bval, cu->perm, stream));
      cu->nnzb = nnza;
    } else PetscCallCUDA(GpukitGSAIPermuteCUDA(nnza, cu->perm, aa, cu->bval, stream));
    bptr = cu->bptr;
    bcol = cu->bcol;
    bval = cu->bval;
  } else {
    bptr = ai;
    bcol = aj;
    bval = aa;
  }
  PetscCall(GSAICUDASync(stream));
  PetscCall(PetscTime(&t1));
  gs->time[GSAI_STAGE_ROWS] += t1 - t0;

  /* pattern */
  if (!reuse || !cu->jptr) {
    PetscCall(GSAICUDAFreePattern(cu));
    PetscCall(PetscTime(&t0));
    PetscCall(GSAICUDAPattern(gs, cu, bptr, bcol, bval, stream));
    PetscCall(GSAICUDASync(stream));
    PetscCall(PetscTime(&t1));
    gs->time[GSAI_STAGE_PATTERN] += t1 - t0;
  }
  PetscCall(PetscLogEventEnd(PC_GSAI_PatternCUDA, pc, 0, 0, 0));

  P.n    = cu->n;
  P.spd  = gs->type == PCGSAI_SPD;
  P.bptr = bptr;
  P.bcol = bcol;
  P.bval = bval;
  P.jptr = cu->jptr;
  P.jcol = cu->jcol;

  /* dims: |I|, workspace offsets, size classes */
  PetscCall(PetscLogEventBegin(PC_GSAI_DimsCUDA, pc, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  if (!cu->woff) {
    PetscCall(GSAICUDAMalloc(&cu->cur, (size_t)cu->nnzj));
    PetscCall(GSAICUDAMalloc(&cu->pos, (size_t)cu->n));
    PetscCall(GSAICUDAMalloc(&cu->woff, (size_t)cu->n + 1));
    PetscCall(GSAICUDAMalloc(&cu->small, (size_t)cu->n));
    PetscCall(GSAICUDAMalloc(&cu->large, (size_t)cu->n));
    PetscCall(GSAICUDAMalloc(&cu->status, (size_t)cu->n));
    PetscCall(GSAICUDAMalloc(&cu->vals, (size_t)cu->nnzj));
    if (!P.spd) {
      PetscCall(GSAICUDAMalloc(&cu->n1, (size_t)cu->n));
      PetscCallCUDA(GpukitGSAIUnionCUDA(cu->n, cu->jptr, cu->jcol, NULL, bptr, bcol, NULL, cu->cur, cu->n1, NULL, NULL, NULL, stream));
    }
    P.n1   = cu->n1;
    P.woff = cu->woff;
    P.cur  = cu->cur;
    P.pos  = cu->pos;
    PetscCallCUDA(GpukitGSAIPlanCUDA(&P, cu->small, &cu->ns, cu->large, &cu->nl, &cu->wtotal, &cu->maxn1, &cu->maxn2, stream));
  }
  P.n1   = cu->n1;
  P.woff = cu->woff;
  P.cur  = cu->cur;
  P.pos  = cu->pos;
  PetscCall(GSAICUDASync(stream));
  PetscCall(PetscTime(&t1));
  gs->time[GSAI_STAGE_SOLVE] += t1 - t0;
  PetscCall(PetscLogEventEnd(PC_GSAI_DimsCUDA, pc, 0, 0, 0));

  /* solve, in batches that fit the workspace */
  PetscCall(PetscLogEventBegin(PC_GSAI_SolveCUDA, pc, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  {
    long long budget, cap = 0, base, size;
    int       nb = 0, r0, r1;
    double   *ws;

    if (gs->workspace > 0) budget = (long long)gs->workspace * 1024 / (long long)sizeof(double);
    else {
      size_t fr, tot;
      PetscCallCUDA(cudaMemGetInfo(&fr, &tot));
      budget = (long long)(fr / 2 / sizeof(double));
    }
    /* the largest batch first, to allocate the workspace once */
    for (r0 = 0; r0 < cu->n; r0 = r1, nb++) {
      PetscCallCUDA(GpukitGSAINextBatchCUDA(&P, r0, budget, &r1, &base, &size, stream));
      cap = PetscMax(cap, size);
    }
    PetscCall(PetscInfo(pc, "%d local problems (%d warp per row, %d block per row), workspace %lld doubles in %d batch(es) of at most %lld\n", cu->n, cu->ns, cu->nl, cu->wtotal, nb, cap));
    PetscCall(GSAICUDAMalloc(&ws, (size_t)cap));
    for (r0 = 0; r0 < cu->n; r0 = r1) {
      PetscCallCUDA(GpukitGSAINextBatchCUDA(&P, r0, budget, &r1, &base, &size, stream));
      PetscCallCUDA(GpukitGSAISolveBatchCUDA(&P, r0, r1, cu->small, cu->ns, cu->large, cu->nl, ws, base, size, cu->vals, cu->status, stream));
    }
    PetscCall(GSAICUDAFree(&ws));
    PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)cu->wtotal * (PetscLogDouble)cu->maxn2));
  }
  PetscCallCUDA(GpukitGSAIStatusCUDA(cu->n, cu->status, &nf, &failrow, &failstatus, stream));
  PetscCall(PetscTime(&t1));
  gs->time[GSAI_STAGE_SOLVE] += t1 - t0;
  PetscCall(PetscLogEventEnd(PC_GSAI_SolveCUDA, pc, 0, 0, 0));
  fail.row = -1;
  if (failrow >= 0) {
    fail.row   = failrow;
    fail.kind  = failstatus - GPUKIT_GSAI_FAIL;
    fail.value = 0.0;
    if (fail.kind == GSAI_FAIL_NOTSPD) PetscCall(GSAICUDADiagonalEntry(bptr, bcol, bval, failrow, &fail.value));
  }

  /* assemble M (or G) once per pattern, then its values */
  PetscCall(PetscLogEventBegin(PC_GSAI_AssembleCUDA, pc, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  if (fail.row < 0) {
    if (!gs->M) {
      int *rows, *coo_i, *coo_j;
      PetscCall(GSAICUDAMalloc(&rows, (size_t)cu->nnzj));
      PetscCallCUDA(GpukitGSAIExpandRowsCUDA(cu->n, cu->jptr, rows, stream));
      PetscCall(GSAICUDASync(stream));
      coo_i = right ? cu->jcol : rows; /* right: M = N^T */
      coo_j = right ? rows : cu->jcol;
      PetscCall(MatCreate(PETSC_COMM_SELF, &gs->M));
      PetscCall(MatSetSizes(gs->M, cu->n, cu->n, cu->n, cu->n));
      PetscCall(MatSetType(gs->M, MATSEQAIJCUSPARSE));
      PetscCall(MatSetPreallocationCOO(gs->M, cu->nnzj, coo_i, coo_j));
      PetscCall(GSAICUDAFree(&rows));
    }
    PetscCall(MatSetValuesCOO(gs->M, cu->vals, INSERT_VALUES));
  }
  PetscCall(PetscTime(&t1));
  gs->time[GSAI_STAGE_ASSEMBLE] += t1 - t0;
  PetscCall(PetscLogEventEnd(PC_GSAI_AssembleCUDA, pc, 0, 0, 0));

  PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(Aaij, &aa));
  PetscCall(MatSeqAIJCUSPARSERestoreIJ(Aaij, PETSC_FALSE, &ai, &aj));
  PetscCall(MatDestroy(&Aaij));
  PetscCall(GSAIRaiseFailure(pc, &fail)); /* one rank: no agreement needed */

  gs->nnz         = cu->nnzj;
  gs->nfallback   = nf;
  gs->maxn1       = cu->maxn1;
  gs->maxn2       = cu->maxn2;
  gs->nloc        = cu->n;
  gs->havepattern = PETSC_TRUE;
  gs->ptype       = gs->type;
  gs->pside       = gs->sideused;
  if (nf) PetscCall(PetscInfo(pc, "%d local problems fell back to the diagonal (singular or ill-conditioned)\n", nf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif
