/*
   PCGSAI's M (or G) kept in the device CSR the one-rank device set-up built, applied with cuSPARSE's generic SpMV
   (CSR, CUSPARSE_SPMV_CSR_ALG1, what MATAIJCUSPARSE uses), the MATSEQAIJCUSPARSE made only when asked for. See
   gsaidevm.h for the interface and the ownership of the arrays. Built only against a PETSc with CUDA.

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
  int    *ptr, *col; /* M's structure (owned) */
  double *val;       /* M's values (owned) */
  /* M^T: built once per structure when needed; tval[e] = val[tperm[e]] */
  int       *tptr, *tcol, *tperm;
  double    *tval;
  PetscBool havet;
  GpukitCSRSpMV op[2]; /* cuSPARSE's product with 0: M, 1: M^T */
  PC        pc;        /* the PC it belongs to (for -info and the events; not referenced) */
  Mat       mat;       /* the MATSEQAIJCUSPARSE, made when asked for */
} GSAIDevM_CUDA;


static PetscErrorCode GSAIDevMCheckSizes_Private(PetscInt n, PetscInt nnz)
{
  PetscFunctionBegin;
  PetscCheck(n >= 0 && nnz >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI's device M: negative size %" PetscInt_FMT " or nonzeros %" PetscInt_FMT, n, nnz);
  PetscCheck(n < INT_MAX && nnz <= INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "PCGSAI's device M uses 32-bit indices: %" PetscInt_FMT " rows, %" PetscInt_FMT " nonzeros is too large; use -pc_gsai_use_device false", n, nnz);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GSAIDevMAlloc_Private(PC pc, PetscInt n, PetscInt nnz, GSAIDevM_CUDA **dm, cudaStream_t stream)
{
  GSAIDevM_CUDA *d;

  PetscFunctionBegin;
  PetscCall(GSAIDevMCheckSizes_Private(n, nnz));
  PetscCall(PetscNew(&d));
  d->pc  = pc;
  d->n   = (int)n;
  d->nnz = (int)nnz;
  PetscCallCUDA(GpukitPoolMallocN(&d->val, (size_t)d->nnz, stream));
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
  PetscCall(GSAIDevMAlloc_Private(pc, n, nnz, &d, stream));
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
  PetscCall(GSAIDevMAlloc_Private(pc, n, nnz, &d, stream));
  d->ptr = *ptr;
  d->col = *col;
  *ptr   = NULL;
  *col   = NULL;
  if (!d->col) PetscCallCUDA(GpukitPoolMallocN(&d->col, 1, stream)); /* nnz 0: a valid pointer for cuSPARSE */
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
  if (nnz) *nnz = d->nnz;
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
    d->havet = PETSC_TRUE;
  } else PetscCallCUDA(GpukitCSRPermuteCUDA(d->nnz, d->tperm, d->val, d->tval, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogEventEnd(PC_GSAI_TransposeCUDA, d->pc, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the Mat's device values from val (the Mat exists) */
static PetscErrorCode GSAIDevMMatValues_Private(GSAIDevM_CUDA *d, cudaStream_t stream)
{
  PetscScalar *mv;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJCUSPARSEGetArrayWrite(d->mat, &mv));
  if (d->nnz) PetscCallCUDA(cudaMemcpyAsync(mv, d->val, (size_t)d->nnz * sizeof(double), cudaMemcpyDeviceToDevice, stream));
  PetscCall(MatSeqAIJCUSPARSERestoreArrayWrite(d->mat, &mv));
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
    PetscCall(PetscInfo(d->pc, "PCGSAI: making the MATSEQAIJCUSPARSE of M (%d rows, %d nonzeros) from its device CSR, asked for the first time\n", d->n, d->nnz));
    PetscCall(GpukitMatCreateSeqAIJCUSPARSEFromDeviceCSR(PETSC_COMM_SELF, d->n, d->n, d->nnz, d->ptr, d->col, d->val, &d->mat));
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
  PetscCall(VecCreateSeqCUDA(PETSC_COMM_SELF, d->n, v));
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

/* y = op x with op = M (t = 0) or M^T (t = 1) */
static PetscErrorCode GSAIDevMSpMV_Private(GSAIDevM_CUDA *d, int t, Vec x, Vec y)
{
  const PetscScalar *xa;
  PetscScalar       *ya;
  cudaStream_t       stream;
  PetscInt           nx, ny;

  PetscFunctionBegin;
  PetscCheck(x != y, PETSC_COMM_SELF, PETSC_ERR_ARG_IDN, "PCGSAI's device M: x and y must be different vectors");
  PetscCall(GSAIDevMCheckVecs_Private(x, y));
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(y, &ny));
  PetscCheck(nx == d->n && ny == d->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "PCGSAI's M is %d x %d, the vectors have %" PetscInt_FMT " and %" PetscInt_FMT " entries", d->n, d->n, nx, ny);
  PetscCall(GpukitCUDAGetStream("PCGSAI applies M on the device", &stream));
  if (t && !d->havet) {
    PetscCall(PetscInfo(d->pc, "PCGSAI: building M^T on the device for the transpose product (once per pattern)\n"));
    PetscCall(GSAIDevMTranspose_Private(d, stream));
  }
  PetscCall(PetscLogEventBegin(PC_GSAI_ApplyCUDA, d->pc, 0, 0, 0));
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  PetscCall(VecCUDAGetArrayWrite(y, &ya));
  PetscCall(PetscLogGpuTimeBegin());
  if (!d->n) {
    /* nothing to do */
  } else if (!d->nnz) {
    PetscCallCUDA(cudaMemsetAsync(ya, 0, (size_t)d->n * sizeof(double), stream));
  } else if (!t) PetscCall(GpukitCSRSpMVApply(&d->op[0], d->n, d->n, d->nnz, d->ptr, d->col, d->val, xa, NULL, ya, stream));
  else PetscCall(GpukitCSRSpMVApply(&d->op[1], d->n, d->n, d->nnz, d->tptr, d->tcol, d->tval, xa, NULL, ya, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)d->nnz));
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  PetscCall(VecCUDARestoreArrayWrite(y, &ya));
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
  for (int t = 0; t < 2; t++) PetscCall(GpukitCSRSpMVReset(&d->op[t], stream));
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
