/*
   PCGSAI's M (or G) kept in the device CSR the device set-up built, applied with cuSPARSE's generic SpMV (CSR,
   CUSPARSE_SPMV_CSR_ALG1, what MATAIJCUSPARSE uses), the MATSEQAIJCUSPARSE (one rank) or MATMPIAIJCUSPARSE (several)
   made only when asked for. See gsaidevm.h for the interface and the ownership of the arrays. Built only against a
   PETSc with CUDA.

   Several ranks: the local rows as a diagonal block (local columns) and an off-diagonal block over the ghost columns
   (compact numbers, garray[] global and ascending), as MATMPIAIJ splits them; the product scatters x's ghost values
   into lvec (VecScatter, PETSc's star forest: device buffers, staged through the host without a CUDA-aware MPI) while
   the diagonal block's product runs, then adds the off-diagonal block's; the transpose product sums the off-diagonal
   block's transpose product into the other ranks' rows by the reverse scatter.

   Per product: gpukit's shared CSR product (gpukitcuda.h GpukitCSRSpMVApply(): the stream of the current
   PetscDeviceContext, the two vector pointers, one cusparseSpMV()); the matrix descriptors, the work buffer and
   cuSPARSE's analysis are made at the first product of each direction: the values change in place.
*/
#include <petscdevice_cuda.h>
#include <climits>
#include "gpukitcuda.h"
#include "gpukitpool.h"
#include "gpukitcsropskernels.h"
#include "gpukitaijcuda.h"
#include "gsaidevm.h"

#if defined(GPUKIT_GSAICUDA_AVAILABLE)


typedef struct {
  int     n, nnz;
  int    *ptr, *col; /* M's structure (owned); several ranks: the diagonal block's, nnz entries */
  double *val;       /* M's values (owned): nnz, then onnz of the off-diagonal block (several ranks) */
  /* M^T: built once per structure when needed; tval[e] = val[tperm[e]] (several ranks: the diagonal block's) */
  int       *tptr, *tcol, *tperm;
  double    *tval;
  PetscBool havet;
  /* several ranks (mpi): the off-diagonal block, n x ng over the ghost columns garray[] (global, ascending; host),
     onnz entries, and its transpose (ng x n, otval[e] = val[nnz + otperm[e]]) built with M^T's */
  PetscBool  mpi;
  MPI_Comm   comm;
  PetscInt   N;
  int        ng, onnz;
  int       *optr, *ocol, *otptr, *otcol, *otperm;
  double    *otval;
  PetscInt  *garray;
  Vec        lvec;     /* the ghost values (VECSEQCUDA of ng) */
  VecScatter Mvctx;    /* x -> lvec */
  GpukitCSRSpMV op[4]; /* cuSPARSE's product with 0: M (the diagonal block), 1: its transpose, 2: the off-diagonal block, 3: its transpose */
  PC        pc;        /* the PC it belongs to (for -info and the events; not referenced) */
  Mat       mat;       /* the MATSEQAIJCUSPARSE or MATMPIAIJCUSPARSE, made when asked for */
} GSAIDevM_CUDA;


static PetscErrorCode GSAIDevMCheckSizes_Private(PetscInt n, PetscInt nnz)
{
  PetscFunctionBegin;
  PetscCheck(n >= 0 && nnz >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI's device M: negative size %" PetscInt_FMT " or nonzeros %" PetscInt_FMT, n, nnz);
  PetscCheck(n < INT_MAX && nnz <= INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "PCGSAI's device M uses 32-bit indices: %" PetscInt_FMT " rows, %" PetscInt_FMT " nonzeros is too large; use -pc_gsai_use_device false", n, nnz);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GSAIDevMAlloc_Private(PC pc, PetscInt n, PetscInt nnz, PetscInt onnz, GSAIDevM_CUDA **dm, cudaStream_t stream)
{
  GSAIDevM_CUDA *d;

  PetscFunctionBegin;
  PetscCall(GSAIDevMCheckSizes_Private(n, nnz + onnz));
  PetscCall(PetscNew(&d));
  d->pc   = pc;
  d->n    = (int)n;
  d->nnz  = (int)nnz;
  d->onnz = (int)onnz;
  PetscCallCUDA(GpukitPoolMallocN(&d->val, (size_t)d->nnz + (size_t)d->onnz, stream));
  *dm = d;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSAIDevMCreate(PC pc, PetscInt n, PetscInt nnz, const int *ptr, const int *col, void **devm)
{
  GSAIDevM_CUDA *d;
  cudaStream_t   stream;

  PetscFunctionBegin;
  GpukitAssertPointer(devm, 6);
  PetscCheck(!*devm, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCGSAI's device M exists already: destroy it first");
  PetscCheck(ptr && (col || !nnz), PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "PCGSAI's device M needs the device CSR structure");
  PetscCall(GpukitCUDAGetStream("PCGSAI keeps M on the device", &stream));
  PetscCall(GSAIDevMAlloc_Private(pc, n, nnz, 0, &d, stream));
  PetscCallCUDA(GpukitPoolMallocN(&d->ptr, (size_t)d->n + 1, stream));
  PetscCallCUDA(GpukitPoolMallocN(&d->col, (size_t)d->nnz, stream));
  PetscCallCUDA(cudaMemcpyAsync(d->ptr, ptr, ((size_t)d->n + 1) * sizeof(int), cudaMemcpyDeviceToDevice, stream));
  if (d->nnz) PetscCallCUDA(cudaMemcpyAsync(d->col, col, (size_t)d->nnz * sizeof(int), cudaMemcpyDeviceToDevice, stream));
  *devm = d;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSAIDevMCreateTake(PC pc, PetscInt n, PetscInt nnz, int **ptr, int **col, void **devm)
{
  GSAIDevM_CUDA *d;
  cudaStream_t   stream;

  PetscFunctionBegin;
  GpukitAssertPointer(devm, 6);
  PetscCheck(!*devm, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCGSAI's device M exists already: destroy it first");
  PetscCheck(ptr && *ptr && col && (*col || !nnz), PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "PCGSAI's device M needs the device CSR structure");
  PetscCall(GpukitCUDAGetStream("PCGSAI keeps M on the device", &stream));
  PetscCall(GSAIDevMAlloc_Private(pc, n, nnz, 0, &d, stream));
  d->ptr = *ptr;
  d->col = *col;
  *ptr   = NULL;
  *col   = NULL;
  if (!d->col) PetscCallCUDA(GpukitPoolMallocN(&d->col, 1, stream)); /* nnz 0: a valid pointer for cuSPARSE */
  *devm = d;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSAIDevMCreateMPITake(PC pc, Mat A, PetscInt nnz, int **ptr, int **col, PetscInt onnz, int **optr, int **ocol, PetscInt ng, PetscInt **garray, void **devm)
{
  GSAIDevM_CUDA *d;
  cudaStream_t   stream;
  PetscInt       n, N;
  Vec            xt;
  IS             is;

  PetscFunctionBegin;
  GpukitAssertPointer(devm, 11);
  PetscCheck(!*devm, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCGSAI's device M exists already: destroy it first");
  PetscCheck(ptr && *ptr && col && (*col || !nnz) && optr && *optr && ocol && (*ocol || !onnz) && garray && (*garray || !ng), PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "PCGSAI's device M needs the device CSR structure of both blocks and the ghost columns");
  PetscCheck(ng >= 0 && ng < INT_MAX && (ng > 0 || !onnz), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI's device M: %" PetscInt_FMT " ghost columns for %" PetscInt_FMT " off-diagonal entries", ng, onnz);
  PetscCall(MatGetLocalSize(A, &n, NULL));
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCall(GpukitCUDAGetStream("PCGSAI keeps M on the device", &stream));
  PetscCall(GSAIDevMAlloc_Private(pc, n, nnz, onnz, &d, stream));
  d->mpi    = PETSC_TRUE;
  d->comm   = PetscObjectComm((PetscObject)pc);
  d->N      = N;
  d->ng     = (int)ng;
  d->ptr    = *ptr;
  d->col    = *col;
  d->optr   = *optr;
  d->ocol   = *ocol;
  d->garray = *garray;
  *ptr = *col = *optr = *ocol = NULL;
  *garray                     = NULL;
  if (!d->col) PetscCallCUDA(GpukitPoolMallocN(&d->col, 1, stream)); /* no entries: valid pointers for cuSPARSE */
  if (!d->ocol) PetscCallCUDA(GpukitPoolMallocN(&d->ocol, 1, stream));
  /* the ghost scatter (collective): x's entries garray[] into lvec, as MATMPIAIJ's */
  PetscCall(VecCreateSeqCUDA(PETSC_COMM_SELF, ng, &d->lvec));
  PetscCall(VecCreateMPICUDAWithArray(d->comm, 1, n, N, NULL, &xt));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, ng, d->garray, PETSC_USE_POINTER, &is));
  PetscCall(VecScatterCreate(xt, is, d->lvec, NULL, &d->Mvctx));
  PetscCall(ISDestroy(&is));
  PetscCall(VecDestroy(&xt));
  *devm = d;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSAIDevMGetValues(void *devm, double **val)
{
  GSAIDevM_CUDA *d = (GSAIDevM_CUDA *)devm;

  PetscFunctionBegin;
  PetscCheck(d, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "PCGSAI has no device M");
  *val = d->val;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSAIDevMGetInfo(void *devm, PetscInt *n, PetscInt *nnz, PetscBool *hasmat)
{
  GSAIDevM_CUDA *d = (GSAIDevM_CUDA *)devm;

  PetscFunctionBegin;
  PetscCheck(d, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "PCGSAI has no device M");
  if (n) *n = d->n;
  if (nnz) *nnz = (PetscInt)d->nnz + d->onnz;
  if (hasmat) *hasmat = d->mat ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* M^T's structure and permutation (once per structure) and values */
static PetscErrorCode GSAIDevMTranspose_Private(GSAIDevM_CUDA *d, cudaStream_t stream)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PC_GSAI_TransposeCUDA, d->pc, 0, 0, 0));
  PetscCall(PetscLogGpuTimeBegin());
  if (!d->havet) {
    PetscCallCUDA(GpukitPoolMallocN(&d->tptr, (size_t)d->n + 1, stream));
    PetscCallCUDA(GpukitPoolMallocN(&d->tcol, (size_t)d->nnz, stream));
    PetscCallCUDA(GpukitPoolMallocN(&d->tval, (size_t)d->nnz, stream));
    PetscCallCUDA(GpukitPoolMallocN(&d->tperm, (size_t)d->nnz, stream));
    PetscCallCUDA(GpukitCSRTransposeCUDA(d->n, d->n, d->nnz, d->ptr, d->col, d->val, d->tptr, d->tcol, d->tval, d->tperm, stream));
    if (d->onnz) { /* several ranks: the off-diagonal block's, ng x n */
      PetscCallCUDA(GpukitPoolMallocN(&d->otptr, (size_t)d->ng + 1, stream));
      PetscCallCUDA(GpukitPoolMallocN(&d->otcol, (size_t)d->onnz, stream));
      PetscCallCUDA(GpukitPoolMallocN(&d->otval, (size_t)d->onnz, stream));
      PetscCallCUDA(GpukitPoolMallocN(&d->otperm, (size_t)d->onnz, stream));
      PetscCallCUDA(GpukitCSRTransposeCUDA(d->n, d->ng, d->onnz, d->optr, d->ocol, d->val + d->nnz, d->otptr, d->otcol, d->otval, d->otperm, stream));
    }
    d->havet = PETSC_TRUE;
  } else {
    PetscCallCUDA(GpukitCSRPermuteCUDA(d->nnz, d->tperm, d->val, d->tval, stream));
    if (d->onnz) PetscCallCUDA(GpukitCSRPermuteCUDA(d->onnz, d->otperm, d->val + d->nnz, d->otval, stream));
  }
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogEventEnd(PC_GSAI_TransposeCUDA, d->pc, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the Mat's device values from val (the Mat exists); several ranks: each block's from its part of val (the blocks'
   counts checked: MatAssemblyEnd() keeps the entries where they are, the ghost columns numbered in garray[]'s order) */
static PetscErrorCode GSAIDevMMatValues_Private(GSAIDevM_CUDA *d, cudaStream_t stream)
{
  PetscScalar *mv;

  PetscFunctionBegin;
  if (d->mpi) {
    Mat     B[2];
    MatInfo info;
    int     cnt[2] = {d->nnz, d->onnz};

    PetscCall(MatMPIAIJGetSeqAIJ(d->mat, &B[0], &B[1], NULL));
    for (int k = 0; k < 2; k++) {
      PetscCall(MatGetInfo(B[k], MAT_LOCAL, &info));
      PetscCheck((PetscInt)info.nz_used == cnt[k], PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCGSAI: the %s block of M's Mat holds %" PetscInt_FMT " entries, the device M %d", k ? "off-diagonal" : "diagonal", (PetscInt)info.nz_used, cnt[k]);
      if (!cnt[k]) continue;
      PetscCall(MatSeqAIJCUSPARSEGetArray(B[k], &mv)); /* uploads the block's structure the first time */
      PetscCallCUDA(cudaMemcpyAsync(mv, d->val + (k ? d->nnz : 0), (size_t)cnt[k] * sizeof(double), cudaMemcpyDeviceToDevice, stream));
      PetscCallCUDA(cudaStreamSynchronize(stream)); /* before PETSc's stream reads them */
      PetscCall(MatSeqAIJCUSPARSERestoreArray(B[k], &mv));
    }
    PetscCall(PetscObjectStateIncrease((PetscObject)d->mat));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatSeqAIJCUSPARSEGetArrayWrite(d->mat, &mv));
  if (d->nnz) PetscCallCUDA(cudaMemcpyAsync(mv, d->val, (size_t)d->nnz * sizeof(double), cudaMemcpyDeviceToDevice, stream));
  PetscCall(MatSeqAIJCUSPARSERestoreArrayWrite(d->mat, &mv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* several ranks: the MATMPIAIJCUSPARSE of M, on host copies of the two blocks' structure (one allocation, which
   MatCreateMPIAIJWithSplitArrays() uses in place and a container composed on the Mat frees; the off-diagonal block's
   columns global: MatAssemblyEnd() numbers them as garray[]), its values then copied on the device */
static PetscErrorCode GSAIDevMMatMPI_Private(GSAIDevM_CUDA *d, cudaStream_t stream)
{
  const size_t   n = (size_t)d->n, nz = (size_t)d->nnz + (size_t)d->onnz;
  void          *block;
  PetscScalar   *dv, *ov;
  PetscInt      *di, *oi, *dj, *oj;
  int           *h;
  PetscContainer c;

  PetscFunctionBegin;
  PetscCall(PetscMalloc(nz * sizeof(PetscScalar) + (2 * (n + 1) + nz) * sizeof(PetscInt), &block));
  dv = (PetscScalar *)block;
  ov = dv + d->nnz;
  di = (PetscInt *)(dv + nz);
  oi = di + n + 1;
  dj = oi + n + 1;
  oj = dj + d->nnz;
  PetscCall(PetscMalloc1(2 * (n + 1) + nz, &h));
  PetscCallCUDA(cudaMemcpyAsync(h, d->ptr, (n + 1) * sizeof(int), cudaMemcpyDeviceToHost, stream));
  PetscCallCUDA(cudaMemcpyAsync(h + n + 1, d->optr, (n + 1) * sizeof(int), cudaMemcpyDeviceToHost, stream));
  if (d->nnz) PetscCallCUDA(cudaMemcpyAsync(h + 2 * (n + 1), d->col, (size_t)d->nnz * sizeof(int), cudaMemcpyDeviceToHost, stream));
  if (d->onnz) PetscCallCUDA(cudaMemcpyAsync(h + 2 * (n + 1) + d->nnz, d->ocol, (size_t)d->onnz * sizeof(int), cudaMemcpyDeviceToHost, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream));
  for (size_t i = 0; i < 2 * (n + 1) + (size_t)d->nnz; i++) di[i] = h[i]; /* di, oi, dj are contiguous, as in h */
  for (int e = 0; e < d->onnz; e++) oj[e] = d->garray[h[2 * (n + 1) + d->nnz + e]];
  PetscCall(PetscFree(h));
  PetscCall(PetscArrayzero(dv, nz));
  PetscCall(MatCreateMPIAIJWithSplitArrays(d->comm, d->n, d->n, d->N, d->N, di, dj, dv, oi, oj, ov, &d->mat));
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscContainerSetPointer(c, block));
  PetscCall(GpukitContainerSetFreeDestroy(c));
  PetscCall(PetscObjectCompose((PetscObject)d->mat, "GSAIDevMBlocks", (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  PetscCall(MatConvert(d->mat, MATMPIAIJCUSPARSE, MAT_INPLACE_MATRIX, &d->mat));
  PetscCall(GSAIDevMMatValues_Private(d, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSAIDevMValuesUpdated(void *devm, PetscBool transpose)
{
  GSAIDevM_CUDA *d = (GSAIDevM_CUDA *)devm;
  cudaStream_t   stream;

  PetscFunctionBegin;
  PetscCheck(d, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "PCGSAI has no device M");
  PetscCall(GpukitCUDAGetStream("PCGSAI keeps M on the device", &stream));
  if (transpose || d->havet) PetscCall(GSAIDevMTranspose_Private(d, stream));
  if (d->mat) PetscCall(GSAIDevMMatValues_Private(d, stream)); /* whoever holds the Mat sees the new values */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSAIDevMGetMat(void *devm, Mat *M)
{
  GSAIDevM_CUDA *d = (GSAIDevM_CUDA *)devm;
  cudaStream_t   stream;

  PetscFunctionBegin;
  PetscCheck(d, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "PCGSAI has no device M");
  if (!d->mat) {
    PetscCall(PetscLogEventBegin(PC_GSAI_MatCUDA, d->pc, 0, 0, 0));
    PetscCall(GpukitCUDAGetStream("PCGSAI makes the Mat of M", &stream));
    PetscCallCUDA(cudaStreamSynchronize(stream)); /* the structure and values were written on this stream; the copy below runs on another */
    PetscCall(PetscInfo(d->pc, "PCGSAI: making the %s of M (%d local rows, %d nonzeros) from its device CSR, asked for the first time\n", d->mpi ? "MATMPIAIJCUSPARSE" : "MATSEQAIJCUSPARSE", d->n, d->nnz + d->onnz));
    if (d->mpi) PetscCall(GSAIDevMMatMPI_Private(d, stream));
    else PetscCall(GpukitMatCreateSeqAIJCUSPARSEFromDeviceCSR(PETSC_COMM_SELF, d->n, d->n, d->nnz, d->ptr, d->col, d->val, &d->mat));
    PetscCall(PetscLogEventEnd(PC_GSAI_MatCUDA, d->pc, 0, 0, 0));
  }
  *M = d->mat;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSAIDevMCreateVec(void *devm, Vec *v)
{
  GSAIDevM_CUDA *d = (GSAIDevM_CUDA *)devm;

  PetscFunctionBegin;
  PetscCheck(d, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "PCGSAI has no device M");
  if (d->mpi) PetscCall(VecCreateMPICUDA(d->comm, d->n, d->N, v));
  else PetscCall(VecCreateSeqCUDA(PETSC_COMM_SELF, d->n, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x and y must be CUDA vectors (as MATSEQAIJCUSPARSE's MatMult() wants them) */
static PetscErrorCode GSAIDevMCheckVecs_Private(Vec x, Vec y)
{
  PetscBool cx, cy;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)x, &cx, VECSEQCUDA, VECMPICUDA, ""));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)y, &cy, VECSEQCUDA, VECMPICUDA, ""));
  PetscCheck(cx && cy, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "PCGSAI built M on the device and applies it there: give it CUDA vectors (MatCreateVecs() of the CUDA matrix, -vec_type cuda), not %s and %s", ((PetscObject)x)->type_name, ((PetscObject)y)->type_name);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one block's product: y = B x (add false) or y += B x, with B = 0: M (several ranks: the diagonal block), 1: its
   transpose, 2: the off-diagonal block (n x ng), 3: its transpose (ng x n) */
static PetscErrorCode GSAIDevMBlock_Private(GSAIDevM_CUDA *d, int k, Vec x, Vec y, PetscBool add, cudaStream_t stream)
{
  const int         m = k == 3 ? d->ng : d->n, nc = k == 2 ? d->ng : d->n, nz = k < 2 ? d->nnz : d->onnz;
  const int        *ptr[4] = {d->ptr, d->tptr, d->optr, d->otptr}, *col[4] = {d->col, d->tcol, d->ocol, d->otcol};
  const double     *val[4] = {d->val, d->tval, d->val + d->nnz, d->otval};
  const PetscScalar *xa;
  PetscScalar       *ya;

  PetscFunctionBegin;
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  if (add) PetscCall(VecCUDAGetArray(y, &ya));
  else PetscCall(VecCUDAGetArrayWrite(y, &ya));
  PetscCall(PetscLogGpuTimeBegin());
  if (!nz) {
    if (!add) PetscCallCUDA(cudaMemsetAsync(ya, 0, (size_t)m * sizeof(double), stream));
  } else PetscCall(GpukitCSRSpMVApply(&d->op[k], m, nc, nz, ptr[k], col[k], val[k], xa, add ? ya : NULL, ya, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)nz));
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  if (add) PetscCall(VecCUDARestoreArray(y, &ya));
  else PetscCall(VecCUDARestoreArrayWrite(y, &ya));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = op x with op = M (t = 0) or M^T (t = 1). Several ranks: M x = Md x + Mo x_ghost, x's ghost values scattered
   while Md x runs; M^T x = Md^T x plus Mo^T x summed into the ranks that own those rows (the reverse scatter) */
static PetscErrorCode GSAIDevMSpMV_Private(GSAIDevM_CUDA *d, int t, Vec x, Vec y)
{
  cudaStream_t stream;
  PetscInt     nx, ny;
  PetscBool    ghosts = d->mpi; /* every rank takes part in the scatters (as an owner of x's entries), ghosts or not */

  PetscFunctionBegin;
  PetscCheck(x != y, PETSC_COMM_SELF, PETSC_ERR_ARG_IDN, "PCGSAI's device M: x and y must be different vectors");
  PetscCall(GSAIDevMCheckVecs_Private(x, y));
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(y, &ny));
  PetscCheck(nx == d->n && ny == d->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "PCGSAI's M has %d %srows and columns, the vectors have %" PetscInt_FMT " and %" PetscInt_FMT " %sentries", d->n, d->mpi ? "local " : "", nx, ny, d->mpi ? "local " : "");
  PetscCall(GpukitCUDAGetStream("PCGSAI applies M on the device", &stream));
  if (t && !d->havet) {
    PetscCall(PetscInfo(d->pc, "PCGSAI: building M^T on the device for the transpose product (once per pattern)\n"));
    PetscCall(GSAIDevMTranspose_Private(d, stream));
  }
  PetscCall(PetscLogEventBegin(PC_GSAI_ApplyCUDA, d->pc, 0, 0, 0));
  if (!t) {
    if (ghosts) PetscCall(VecScatterBegin(d->Mvctx, x, d->lvec, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(GSAIDevMBlock_Private(d, 0, x, y, PETSC_FALSE, stream));
    if (ghosts) {
      PetscCall(VecScatterEnd(d->Mvctx, x, d->lvec, INSERT_VALUES, SCATTER_FORWARD));
      PetscCall(GSAIDevMBlock_Private(d, 2, d->lvec, y, PETSC_TRUE, stream));
    }
  } else {
    if (ghosts) PetscCall(GSAIDevMBlock_Private(d, 3, x, d->lvec, PETSC_FALSE, stream));
    PetscCall(GSAIDevMBlock_Private(d, 1, x, y, PETSC_FALSE, stream));
    if (ghosts) {
      PetscCall(VecScatterBegin(d->Mvctx, d->lvec, y, ADD_VALUES, SCATTER_REVERSE));
      PetscCall(VecScatterEnd(d->Mvctx, d->lvec, y, ADD_VALUES, SCATTER_REVERSE));
    }
  }
  PetscCall(PetscLogEventEnd(PC_GSAI_ApplyCUDA, d->pc, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSAIDevMMult(void *devm, Vec x, Vec y)
{
  GSAIDevM_CUDA *d = (GSAIDevM_CUDA *)devm;

  PetscFunctionBegin;
  PetscCheck(d, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "PCGSAI has no device M");
  PetscCall(GSAIDevMSpMV_Private(d, 0, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSAIDevMMultTranspose(void *devm, Vec x, Vec y)
{
  GSAIDevM_CUDA *d = (GSAIDevM_CUDA *)devm;

  PetscFunctionBegin;
  PetscCheck(d, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "PCGSAI has no device M");
  PetscCall(GSAIDevMSpMV_Private(d, 1, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSAIDevMDestroy(void **devm)
{
  GSAIDevM_CUDA *d;
  cudaStream_t   stream;

  PetscFunctionBegin;
  if (!devm || !*devm) PetscFunctionReturn(PETSC_SUCCESS);
  d = (GSAIDevM_CUDA *)*devm;
  PetscCall(GpukitCUDAGetStream("PCGSAI frees its device M", &stream)); /* after every product enqueued on it */
  PetscCall(MatDestroy(&d->mat));
  for (int t = 0; t < 4; t++) PetscCall(GpukitCSRSpMVReset(&d->op[t], stream));
  PetscCall(VecScatterDestroy(&d->Mvctx));
  PetscCall(VecDestroy(&d->lvec));
  PetscCall(PetscFree(d->garray));
  PetscCallCUDA(GpukitPoolFreeN(&d->optr, stream));
  PetscCallCUDA(GpukitPoolFreeN(&d->ocol, stream));
  PetscCallCUDA(GpukitPoolFreeN(&d->otptr, stream));
  PetscCallCUDA(GpukitPoolFreeN(&d->otcol, stream));
  PetscCallCUDA(GpukitPoolFreeN(&d->otval, stream));
  PetscCallCUDA(GpukitPoolFreeN(&d->otperm, stream));
  PetscCallCUDA(GpukitPoolFreeN(&d->ptr, stream));
  PetscCallCUDA(GpukitPoolFreeN(&d->col, stream));
  PetscCallCUDA(GpukitPoolFreeN(&d->val, stream));
  PetscCallCUDA(GpukitPoolFreeN(&d->tptr, stream));
  PetscCallCUDA(GpukitPoolFreeN(&d->tcol, stream));
  PetscCallCUDA(GpukitPoolFreeN(&d->tval, stream));
  PetscCallCUDA(GpukitPoolFreeN(&d->tperm, stream));
  PetscCall(PetscFree(d));
  *devm = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif
