/*
   KSPCACG's matrix powers for MATSEQAIJCUSPARSE: the contract of GpukitMatMatrixPowersFn (cacgimpl.h) by one
   launch per step of our own fused CSR kernel (GpukitCSRPowersCUDA(), cacgcsrkernels.cu): the product, the update
   of the three-term recurrence and the Jacobi scaling in one pass over the matrix, where cuSPARSE's SpMV followed
   by the vector operations makes three or four. Built only against a PETSc with CUDA; cacg.c calls it for a
   MATSEQAIJCUSPARSE that composes no "MatMatrixPowers_C".

   The device arrays: the values from MatSeqAIJGetCSRAndMemType() (declared with the same signature by PETSc 3.18,
   /usr/lib/petsc/include/petscmat.h, and 3.26; for MATSEQAIJCUSPARSE it uploads the matrix when the host values
   are newer and says PETSC_MEMTYPE_CUDA), which must report device memory. Its row offsets are not used: when
   PETSc keeps the matrix in compressed rows (at least 60% empty rows), they are those of the nonempty rows only,
   without the row numbers. The row offsets of all m rows and the column indices come from
   MatSeqAIJCUSPARSEGetIJ(A, PETSC_FALSE, ...) (in 3.18 too, with int arrays), which uploads the full offsets once
   in that case; the column indices and values are the same arrays either way.
*/
#include <petscdevice_cuda.h>
#include "gpukitcuda.h"
#include "cacgimpl.h"
#include "cacgcsrkernels.h"

/* the device kernel takes real double values and 32-bit indices; other builds always run the reference */
#if PetscDefined(USE_REAL_DOUBLE) && !PetscDefined(USE_COMPLEX) && !PetscDefined(USE_64BIT_INDICES)
  #define CACG_CSR_DEVICE 1
static_assert(sizeof(PetscInt) == sizeof(int) && sizeof(PetscScalar) == sizeof(double), "the CSR kernel takes int indices and double values");
#else
  #define CACG_CSR_DEVICE 0
#endif

static PetscLogEvent KSP_CACG_MatPowCSR;
static PetscBool     CACGCSREventRegistered = PETSC_FALSE;

static PetscErrorCode CACGCSRFinalize_Private(void)
{
  PetscFunctionBegin;
  CACGCSREventRegistered = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Registers the event "CACGMatPowCSR" (the device path of CACGMatMatrixPowers_SeqAIJCUSPARSE()) once per
   PetscInitialize(); KSPRegister_CACG_Private() calls it, and the hook does when it was not called */
PetscErrorCode CACGCSRRegisterEvents_Private(PetscClassId classid)
{
  PetscFunctionBegin;
  if (CACGCSREventRegistered) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventRegister("CACGMatPowCSR", classid, &KSP_CACG_MatPowCSR));
  PetscCall(PetscRegisterFinalize(CACGCSRFinalize_Private));
  CACGCSREventRegistered = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* what the hook keeps on the matrix (composed as "CACGCSRInfo") */
typedef struct {
  PetscInt tpr; /* threads per row; 0: GpukitCSRPowersThreadsPerRow() */
} CACGCSRInfo;

static PetscErrorCode CACGCSRCheckThreadsPerRow_Private(Mat A, PetscInt tpr)
{
  PetscFunctionBegin;
  PetscCheck(tpr == 0 || tpr == 1 || tpr == 2 || tpr == 4 || tpr == 8 || tpr == 16 || tpr == 32, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "KSPCACG's CSR matrix powers kernel takes 1, 2, 4, 8, 16 or 32 threads per row, or 0 to choose from the mean row length; got %" PetscInt_FMT, tpr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the matrix's CACGCSRInfo, made (and the option -mat_cacg_csr_threads_per_row read) at the first call */
static PetscErrorCode CACGCSRGetInfo_Private(Mat A, CACGCSRInfo **info)
{
  PetscContainer c = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)A, "CACGCSRInfo", (PetscObject *)&c));
  if (c) {
    PetscCall(PetscContainerGetPointer(c, (void **)info));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscNew(info));
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscContainerSetPointer(c, *info));
  PetscCall(GpukitContainerSetFreeDestroy(c));
  PetscCall(PetscObjectCompose((PetscObject)A, "CACGCSRInfo", (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  {
    PetscInt  tpr = 0;
    PetscBool set;

    PetscObjectOptionsBegin((PetscObject)A);
    PetscCall(PetscOptionsInt("-mat_cacg_csr_threads_per_row", "Threads per row of KSPCACG's CSR matrix powers kernel (1, 2, 4, ..., 32; 0: from the mean row length)", "KSPCACG", tpr, &tpr, &set));
    PetscOptionsEnd();
    if (set) {
      PetscCall(CACGCSRCheckThreadsPerRow_Private(A, tpr));
      (*info)->tpr = tpr;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   CACGCSRSetThreadsPerRow_Private - Sets the threads per row of the CSR matrix powers kernel on this matrix (the
   option -mat_cacg_csr_threads_per_row with the matrix's prefix does the same): 1, 2, 4, 8, 16 or 32, or 0 for the
   default, the smallest power of two at least a quarter of the mean row length (GpukitCSRPowersThreadsPerRow()). For tuning
   and for the tests (tests/gpu/cacg_csr_cuda.c), which run every variant.
*/
PetscErrorCode CACGCSRSetThreadsPerRow_Private(Mat A, PetscInt tpr)
{
  CACGCSRInfo *info;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscCall(CACGCSRCheckThreadsPerRow_Private(A, tpr));
  PetscCall(CACGCSRGetInfo_Private(A, &info));
  info->tpr = tpr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The reference: k MatMult and the vector operations of CACGPowersDefault(); for the lean basis (V == NULL) the
   product input dinv .* W[j] is formed in a work vector */
static PetscErrorCode CACGCSRPowersReference_Private(Mat A, Vec dinv, PetscInt k, const PetscReal theta[], const PetscReal sigma[], const PetscReal gamma[], Vec V[], Vec W[])
{
  Vec y = NULL;

  PetscFunctionBegin;
  if (!V) PetscCall(VecDuplicate(W[0], &y));
  for (PetscInt j = 0; j < k; j++) {
    const PetscScalar a = 1.0 / sigma[j], b = -theta[j] / sigma[j], c = -gamma[j] / sigma[j];

    if (!V) PetscCall(VecPointwiseMult(y, dinv, W[j]));
    PetscCall(MatMult(A, V ? V[j] : y, W[j + 1]));
    if (j > 0 && gamma[j] != 0.0) PetscCall(VecAXPBYPCZ(W[j + 1], b, c, a, W[j], W[j - 1]));
    else if (theta[j] != 0.0) PetscCall(VecAXPBY(W[j + 1], b, a, W[j]));
    else if (sigma[j] != 1.0) PetscCall(VecScale(W[j + 1], a));
    if (V && dinv) PetscCall(VecPointwiseMult(V[j + 1], dinv, W[j + 1]));
    else if (V && V[j + 1] != W[j + 1]) PetscCall(VecCopy(W[j + 1], V[j + 1])); /* no dinv: V = W */
  }
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the device path can run, and why not (for PetscInfo) */
static PetscErrorCode CACGCSRCanRun_Private(Mat A, Vec dinv, PetscInt k, Vec V[], Vec W[], CACGCSRInfo **info, const char **why)
{
  PetscBool     flg;
  MatFactorType ft;
  PetscInt      m, nv;

  PetscFunctionBegin;
  *info = NULL;
  *why  = NULL;
  PetscCall(MatGetLocalSize(A, &m, NULL));
  if (!CACG_CSR_DEVICE) {
    *why = "the kernel is for real double scalars and 32-bit indices";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJCUSPARSE, &flg));
  if (!flg) {
    *why = "the matrix is not MATSEQAIJCUSPARSE";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatBoundToCPU(A, &flg));
  if (flg) {
    *why = "the matrix is bound to the CPU";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatGetFactorType(A, &ft));
  if (ft != MAT_FACTOR_NONE) {
    *why = "the matrix is factored";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (PetscInt j = 0; j <= 2 * k + 2; j++) { /* W[0..k], V[0..k], dinv */
    const Vec v = j <= k ? W[j] : j <= 2 * k + 1 ? (V ? V[j - k - 1] : NULL) : dinv;

    if (!v) continue;
    PetscCall(VecGetLocalSize(v, &nv));
    PetscCheck(nv == m, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_SIZ, "MatMatrixPowers: a vector has %" PetscInt_FMT " entries, the matrix %" PetscInt_FMT " rows", nv, m);
    PetscCall(PetscObjectTypeCompare((PetscObject)v, VECSEQCUDA, &flg));
    /* MatMult of MATSEQAIJCUSPARSE itself does not take host vectors: no reference to fall back on */
    PetscCheck(flg, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "MatMatrixPowers of a MATSEQAIJCUSPARSE needs VECSEQCUDA vectors (MatCreateVecs()); a vector is of type %s", ((PetscObject)v)->type_name);
  }
  PetscCall(CACGCSRGetInfo_Private(A, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   CACGMatMatrixPowers_SeqAIJCUSPARSE - KSPCACG's matrix powers for a MATSEQAIJCUSPARSE (contract: the comment above
   GpukitMatMatrixPowersFn in cacgimpl.h): for j = 0..k-1
       W[j+1] = (A V[j] - theta[j] W[j] - gamma[j] W[j-1]) / sigma[j],   V[j+1] = dinv .* W[j+1] (dinv NULL: V == W)
   with V == NULL (the lean basis, dinv given) the product reading dinv .* W[j] and no V written. One launch of
   GpukitCSRPowersCUDA() per j on the device CSR arrays; no host-device copy once the matrix is on the device.
   Host vectors are an error (the type's MatMult does not take them either); anything else (another matrix type, a
   matrix bound to the CPU or factored, complex or single precision, 64-bit indices) runs the reference: k MatMult
   and vector operations.
*/
PetscErrorCode CACGMatMatrixPowers_SeqAIJCUSPARSE(Mat A, Vec dinv, PetscInt k, const PetscReal theta[], const PetscReal sigma[], const PetscReal gamma[], Vec V[], Vec W[])
{
  CACGCSRInfo *info;
  const char  *why;
  PetscInt     m, n;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  if (k < 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(theta && sigma && gamma && W, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_NULL, "MatMatrixPowers: the basis parameters and the W array must not be NULL");
  PetscCheck(V || dinv, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_NULL, "MatMatrixPowers: V may be NULL (the lean basis) only with a diagonal preconditioner dinv");
  PetscCheck(!dinv || !V || V[0] != W[0], PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "MatMatrixPowers: with dinv, V and W must be different vectors (V = W only without dinv)");
  PetscCall(MatGetLocalSize(A, &m, &n));
  PetscCheck(m == n, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_SIZ, "MatMatrixPowers needs a square matrix, got %" PetscInt_FMT " x %" PetscInt_FMT " local rows x columns", m, n);
  for (PetscInt j = 0; j < k; j++) PetscCheck(sigma[j] != 0.0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "MatMatrixPowers: sigma[%" PetscInt_FMT "] is 0", j);
  PetscCall(CACGCSRCanRun_Private(A, dinv, k, V, W, &info, &why));
  if (why) {
    PetscCall(PetscInfo(A, "KSPCACG's CSR matrix powers run the reference (MatMult and vector operations): %s\n", why));
    PetscCall(CACGCSRPowersReference_Private(A, dinv, k, theta, sigma, gamma, V, W));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#if CACG_CSR_DEVICE
  {
    const PetscBool lean = (PetscBool)(V == NULL);
    const PetscInt *ai, *aj;
    PetscScalar    *aa;
    PetscMemType    mtype;
    GpukitCSRArgs   csr;
    cudaStream_t    stream;
    PetscLogDouble  flops = 0.0;
    MatInfo         minfo;
    int             tpr;

    PetscCall(MatSeqAIJGetCSRAndMemType(A, NULL, NULL, &aa, &mtype)); /* uploads the matrix when the host is newer */
    if (!PetscMemTypeDevice(mtype)) {
      PetscCall(PetscInfo(A, "KSPCACG's CSR matrix powers run the reference: MatSeqAIJGetCSRAndMemType() gave host arrays\n"));
      PetscCall(CACGCSRPowersReference_Private(A, dinv, k, theta, sigma, gamma, V, W));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(MatSeqAIJCUSPARSEGetIJ(A, PETSC_FALSE, &ai, &aj)); /* the offsets of all m rows, also in compressed rows */
    PetscCall(MatGetInfo(A, MAT_LOCAL, &minfo));
    PetscCall(CACGCSRRegisterEvents_Private(KSP_CLASSID)); /* when KSPRegister_CACG_Private() did not */
    PetscCall(GpukitCUDAGetStream("KSPCACG launches its CSR matrix powers kernel", &stream));
    PetscCall(PetscLogEventBegin(KSP_CACG_MatPowCSR, A, 0, 0, 0));
    csr.m      = (int)m;
    csr.nnz    = (int)minfo.nz_used;
    csr.rowptr = ai;
    csr.colidx = aj;
    csr.val    = aa;
    tpr        = info->tpr ? (int)info->tpr : GpukitCSRPowersThreadsPerRow(csr.m, csr.nnz);
    for (PetscInt j = 0; j < k; j++) {
      GpukitCSRPowersArgs e;
      GpukitCUDAReads     rd;
      const PetscScalar  *xa;
      PetscScalar        *w1;

      rd.n = 0;
      PetscCall(GpukitCUDAReadsGet(&rd, lean ? W[j] : V[j], &xa));
      e.xs = NULL;
      if (lean) PetscCall(GpukitCUDAReadsGet(&rd, dinv, &e.xs));
      PetscCall(GpukitCUDAPowersStepBegin(&rd, j, theta, sigma, gamma, dinv, V, W, &e, &w1));
      PetscCall(PetscLogGpuTimeBegin());
      PetscCallCUDA(GpukitCSRPowersCUDA(&csr, &e, xa, w1, tpr, stream));
      PetscCall(PetscLogGpuTimeEnd());
      /* 2 per entry (and 1 more for the lean input), the epilogue's products and sums */
      flops += (lean ? 3.0 : 2.0) * (PetscLogDouble)csr.nnz + (PetscLogDouble)m * (1.0 + (e.w0 ? 2.0 : 0.0) + (e.wm1 ? 2.0 : 0.0) + (e.v1 ? 1.0 : 0.0));
      PetscCall(GpukitCUDAPowersStepEnd(&rd, j, dinv, V, W, &e, &w1));
    }
    PetscCall(PetscLogGpuFlops(flops));
    PetscCall(PetscLogEventEnd(KSP_CACG_MatPowCSR, A, 0, 0, 0));
    PetscCall(MatSeqAIJCUSPARSERestoreIJ(A, PETSC_FALSE, &ai, &aj));
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}
