/*
   The matrix powers kernel of MATSEQAIJCUSPARSE (gpukitmat.h: the contract of GpukitMatMatrixPowersFn, served through
   GpukitMatGetCaps()): one launch per step of our own fused CSR kernel (GpukitCSRPowersCUDA(),
   gpukitcsrmpkkernels.cu): the product, the update of the three-term recurrence and the Jacobi scaling in one pass
   over the matrix, where cuSPARSE's SpMV followed by the vector operations makes three or four. Built only against a
   PETSc with CUDA.

   The device arrays: the values from MatSeqAIJGetCSRAndMemType() (declared with the same signature by PETSc 3.18,
   /usr/lib/petsc/include/petscmat.h, and 3.26; for MATSEQAIJCUSPARSE it uploads the matrix when the host values
   are newer and says PETSC_MEMTYPE_CUDA), which must report device memory. Its row offsets are not used: when
   PETSc keeps the matrix in compressed rows (at least 60% empty rows), they are those of the nonempty rows only,
   without the row numbers. The row offsets of all m rows and the column indices come from
   MatSeqAIJCUSPARSEGetIJ(A, PETSC_FALSE, ...) (in 3.18 too, with int arrays), which uploads the full offsets once
   in that case; the column indices and values are the same arrays either way.

   Threads per row: the run-time tuner (gpukittune.h) picks them per matrix, one tuner for the stored basis and one for
   the lean one (their kernels differ), knob "tpr" over 1, 2, 4, ..., 32 from the rule of
   GpukitCSRPowersThreadsPerRow(); a step is out of place, so while it tunes one call launches it several times. A
   value set by -mat_csr_powers_threads_per_row or GpukitCSRMPKSetThreadsPerRow_Private() is a fixed knob.
*/
#include <petscdevice_cuda.h>
#include "gpukitcuda.h"
#include "gpukittune.h"
#include "gpukitcsrmpk.h"
#include "gpukitipc.h"
#include "gpukitcsrmpkkernels.h"

/* the device kernel takes real double values and 32-bit indices; other builds always run the reference */
#if PetscDefined(USE_REAL_DOUBLE) && !PetscDefined(USE_COMPLEX) && !PetscDefined(USE_64BIT_INDICES)
  #define GPUKIT_CSR_MPK_DEVICE 1
static_assert(sizeof(PetscInt) == sizeof(int) && sizeof(PetscScalar) == sizeof(double), "the CSR kernel takes int indices and double values");
#else
  #define GPUKIT_CSR_MPK_DEVICE 0
#endif

static PetscLogEvent MAT_CSR_MatPowCUDA;

/* the shared Mat layer's CUDA events, registered by GpukitMatUtilsRegister_Private() (gpukitmat.c) */
PETSC_INTERN PetscErrorCode GpukitMatUtilsRegisterCUDA_Private(void)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventRegister("CSRMatPowCUDA", MAT_CLASSID, &MAT_CSR_MatPowCUDA)); /* GpukitMatMatrixPowers_SeqAIJCUSPARSE() */
  PetscCall(GpukitIPCRegister_Private());                                                /* gpukitipccuda.cu */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* what the kernel keeps on the matrix (composed as "GpukitCSRMPKInfo") */
typedef struct {
  PetscInt    tpr;         /* threads per row; 0: tuned, starting from GpukitCSRPowersThreadsPerRow() */
  GpukitTuner tuner[2];    /* [0] the stored basis, [1] the lean basis (V == NULL) */
  PetscInt    tunertpr[2]; /* the tpr each tuner was made for */
} GpukitCSRMPKInfo;

static PetscErrorCode GpukitCSRMPKInfoDestroy_Private(GpukitCSRMPKInfo *info)
{
  PetscFunctionBegin;
  PetscCall(GpukitTunerDestroy(&info->tuner[0]));
  PetscCall(GpukitTunerDestroy(&info->tuner[1]));
  PetscCall(PetscFree(info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the container's destroy hook, whose argument changed as GpukitContainerSetFreeDestroy() in gpukitcompat.h says */
#if PETSC_VERSION_LT(3, 23, 0)
static PetscErrorCode GpukitCSRMPKInfoDestroy(void *ctx)
{
  return GpukitCSRMPKInfoDestroy_Private((GpukitCSRMPKInfo *)ctx);
}
  #define GpukitCSRMPKContainerSetDestroy(c) PetscContainerSetUserDestroy((c), GpukitCSRMPKInfoDestroy)
#elif PETSC_VERSION_LT(3, 25, 0)
static PetscErrorCode GpukitCSRMPKInfoDestroy(void **ctx)
{
  return GpukitCSRMPKInfoDestroy_Private((GpukitCSRMPKInfo *)*ctx);
}
  #define GpukitCSRMPKContainerSetDestroy(c) PetscContainerSetCtxDestroy((c), GpukitCSRMPKInfoDestroy)
#else
static PetscErrorCode GpukitCSRMPKInfoDestroy(void *ctx)
{
  return GpukitCSRMPKInfoDestroy_Private(*(GpukitCSRMPKInfo **)ctx);
}
  #define GpukitCSRMPKContainerSetDestroy(c) PetscContainerSetCtxDestroy((c), GpukitCSRMPKInfoDestroy)
#endif

static PetscErrorCode GpukitCSRMPKCheckThreadsPerRow_Private(Mat A, PetscInt tpr)
{
  PetscFunctionBegin;
  PetscCheck(tpr == 0 || tpr == 1 || tpr == 2 || tpr == 4 || tpr == 8 || tpr == 16 || tpr == 32, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "The CSR matrix powers kernel takes 1, 2, 4, 8, 16 or 32 threads per row, or 0 to choose from the mean row length; got %" PetscInt_FMT, tpr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the matrix's GpukitCSRMPKInfo, made (and the option -mat_csr_powers_threads_per_row read) at the first call */
static PetscErrorCode GpukitCSRMPKGetInfo_Private(Mat A, GpukitCSRMPKInfo **info)
{
  PetscContainer c = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)A, "GpukitCSRMPKInfo", (PetscObject *)&c));
  if (c) {
    PetscCall(PetscContainerGetPointer(c, (void **)info));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscNew(info));
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscContainerSetPointer(c, *info));
  PetscCall(GpukitCSRMPKContainerSetDestroy(c));
  PetscCall(PetscObjectCompose((PetscObject)A, "GpukitCSRMPKInfo", (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  {
    PetscInt  tpr = 0;
    PetscBool set;

    PetscObjectOptionsBegin((PetscObject)A);
    PetscCall(PetscOptionsInt("-mat_csr_powers_threads_per_row", "Threads per row of the CSR matrix powers kernel (1, 2, 4, ..., 32; 0: tuned, from the mean row length)", "KSPCACG", tpr, &tpr, &set));
    PetscOptionsEnd();
    if (set) {
      PetscCall(GpukitCSRMPKCheckThreadsPerRow_Private(A, tpr));
      (*info)->tpr = tpr;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   GpukitCSRMPKSetThreadsPerRow_Private - Sets the threads per row of the CSR matrix powers kernel on this matrix (the
   option -mat_csr_powers_threads_per_row with the matrix's prefix does the same): 1, 2, 4, 8, 16 or 32 (a fixed knob
   of the tuner), or 0 for the default: tuned at run time, starting from the smallest power of two at least a quarter of
   the mean row length (GpukitCSRPowersThreadsPerRow()). For the tests (tests/gpu/cacg_csr_cuda.c), which run every
   variant.
*/
PetscErrorCode GpukitCSRMPKSetThreadsPerRow_Private(Mat A, PetscInt tpr)
{
  GpukitCSRMPKInfo *info;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscCall(GpukitCSRMPKCheckThreadsPerRow_Private(A, tpr));
  PetscCall(GpukitCSRMPKGetInfo_Private(A, &info));
  info->tpr = tpr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* GpukitCSRMPKGetThreadsPerRow_Private - The threads per row set on this matrix (0: tuned) */
PetscErrorCode GpukitCSRMPKGetThreadsPerRow_Private(Mat A, PetscInt *tpr)
{
  GpukitCSRMPKInfo *info;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  GpukitAssertPointer(tpr, 2);
  PetscCall(GpukitCSRMPKGetInfo_Private(A, &info));
  *tpr = info->tpr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The tuner of the threads per row for this matrix and basis kind, made again when the setting changed */
static PetscErrorCode GpukitCSRMPKGetTuner_Private(Mat A, GpukitCSRMPKInfo *info, const GpukitCSRArgs *csr, PetscBool lean, GpukitTuner *t)
{
  static const PetscInt tprs[] = {1, 2, 4, 8, 16, 32};
  GpukitTuneKnob        knob;
  char                  shape[96];
  const PetscInt       *ia = NULL, *ja = NULL;
  PetscInt              n, maxrow = csr->m > 0 ? (csr->nnz + csr->m - 1) / csr->m : 0;
  PetscBool             done;

  PetscFunctionBegin;
  if (info->tuner[lean] && info->tunertpr[lean] == info->tpr) {
    *t = info->tuner[lean];
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(GpukitTunerDestroy(&info->tuner[lean]));
  PetscCall(PetscMemzero(&knob, sizeof(knob)));
  knob.name = "tpr";
  if (info->tpr) {
    knob.n         = 1;
    knob.values[0] = info->tpr;
  } else {
    const PetscInt rule = GpukitCSRPowersThreadsPerRow(csr->m, csr->nnz);

    knob.n = (PetscInt)PETSC_STATIC_ARRAY_LENGTH(tprs);
    for (PetscInt i = 0; i < knob.n; i++) {
      knob.values[i] = tprs[i];
      if (tprs[i] == rule) knob.start = i;
    }
  }
  /* the longest row, from the host's row offsets (the structure only: no values move) */
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  if (done) {
    maxrow = 0;
    for (PetscInt i = 0; i < n; i++) maxrow = PetscMax(maxrow, ia[i + 1] - ia[i]);
    PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  }
  PetscCall(GpukitTuneShapeCSR(csr->m, csr->nnz, maxrow, shape, sizeof(shape)));
  PetscCall(GpukitTunerCreate((PetscObject)A, lean ? GPUKIT_CSR_MPK_TUNER_LEAN : GPUKIT_CSR_MPK_TUNER, 1, &knob, &info->tuner[lean]));
  PetscCall(GpukitTunerSetShape(info->tuner[lean], shape));
  PetscCall(GpukitTunerSetDevice(info->tuner[lean], PETSC_TRUE));
  PetscCall(GpukitTunerSetRepeatable(info->tuner[lean], PETSC_TRUE)); /* out of place: a step can be launched again */
  info->tunertpr[lean] = info->tpr;
  *t                   = info->tuner[lean];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the device path can run, and why not (for PetscInfo) */
static PetscErrorCode GpukitCSRMPKCanRun_Private(Mat A, Vec dinv, PetscInt k, Vec V[], Vec W[], GpukitCSRMPKInfo **info, const char **why)
{
  PetscBool     flg;
  MatFactorType ft;
  PetscInt      m, nv;

  PetscFunctionBegin;
  *info = NULL;
  *why  = NULL;
  PetscCall(MatGetLocalSize(A, &m, NULL));
  if (!GPUKIT_CSR_MPK_DEVICE) {
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
  PetscCall(GpukitCSRMPKGetInfo_Private(A, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   GpukitMatMatrixPowers_SeqAIJCUSPARSE - The matrix powers kernel of a MATSEQAIJCUSPARSE (contract: the comment
   above GpukitMatMatrixPowersFn in gpukitmat.h): for j = 0..k-1
       W[j+1] = (A V[j] - theta[j] W[j] - gamma[j] W[j-1]) / sigma[j],   V[j+1] = dinv .* W[j+1] (dinv NULL: V == W)
   with V == NULL (the lean basis, dinv given) the product reading dinv .* W[j] and no V written. One launch of
   GpukitCSRPowersCUDA() per j on the device CSR arrays; no host-device copy once the matrix is on the device.
   Host vectors are an error (the type's MatMult does not take them either); anything else (another matrix type, a
   matrix bound to the CPU or factored, complex or single precision, 64-bit indices) runs the reference,
   GpukitMatMatrixPowersReference(). Exported only for tests/gpu/cacg_csr_cuda.c; solvers get it from
   GpukitMatGetCaps().
*/
PetscErrorCode GpukitMatMatrixPowers_SeqAIJCUSPARSE(Mat A, Vec dinv, PetscInt k, const PetscReal theta[], const PetscReal sigma[], const PetscReal gamma[], Vec V[], Vec W[])
{
  GpukitCSRMPKInfo *info;
  const char       *why;
  PetscInt          m, n;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  if (k < 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(theta && sigma && gamma && W, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_NULL, "MatMatrixPowers: the basis parameters and the W array must not be NULL");
  PetscCheck(V || dinv, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_NULL, "MatMatrixPowers: V may be NULL (the lean basis) only with a diagonal preconditioner dinv");
  PetscCheck(!dinv || !V || V[0] != W[0], PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "MatMatrixPowers: with dinv, V and W must be different vectors (V = W only without dinv)");
  PetscCall(MatGetLocalSize(A, &m, &n));
  PetscCheck(m == n, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_SIZ, "MatMatrixPowers needs a square matrix, got %" PetscInt_FMT " x %" PetscInt_FMT " local rows x columns", m, n);
  for (PetscInt j = 0; j < k; j++) PetscCheck(sigma[j] != 0.0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "MatMatrixPowers: sigma[%" PetscInt_FMT "] is 0", j);
  PetscCall(GpukitCSRMPKCanRun_Private(A, dinv, k, V, W, &info, &why));
  if (why) {
    PetscCall(PetscInfo(A, "The CSR matrix powers kernel runs the reference (MatMult and vector operations): %s\n", why));
    PetscCall(GpukitMatMatrixPowersReference(A, dinv, k, theta, sigma, gamma, V, W));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#if GPUKIT_CSR_MPK_DEVICE
  {
    const PetscBool  lean = (PetscBool)(V == NULL);
    const PetscInt  *ai, *aj;
    PetscScalar     *aa;
    PetscMemType     mtype;
    GpukitCSRArgs    csr;
    cudaStream_t     stream;
    PetscLogDouble   flops = 0.0;
    MatInfo          minfo;
    GpukitTuner      tuner;
    PetscObjectState state;

    PetscTryMethod(A, "GpukitMatSyncHost_C", (Mat), (A)); /* MATAMBCUDA after a lazy device refresh: the host copy first */
    PetscCall(MatSeqAIJGetCSRAndMemType(A, NULL, NULL, &aa, &mtype)); /* uploads the matrix when the host is newer */
    if (!PetscMemTypeDevice(mtype)) {
      PetscCall(PetscInfo(A, "The CSR matrix powers kernel runs the reference: MatSeqAIJGetCSRAndMemType() gave host arrays\n"));
      PetscCall(GpukitMatMatrixPowersReference(A, dinv, k, theta, sigma, gamma, V, W));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(MatSeqAIJCUSPARSEGetIJ(A, PETSC_FALSE, &ai, &aj)); /* the offsets of all m rows, also in compressed rows */
    PetscCall(MatGetInfo(A, MAT_LOCAL, &minfo));
    PetscCall(GpukitCUDAGetStream("The CSR matrix powers kernel", &stream));
    PetscCall(PetscLogEventBegin(MAT_CSR_MatPowCUDA, A, 0, 0, 0));
    csr.m      = (int)m;
    csr.nnz    = (int)minfo.nz_used;
    csr.rowptr = ai;
    csr.colidx = aj;
    csr.val    = aa;
    PetscCall(GpukitCSRMPKGetTuner_Private(A, info, &csr, lean, &tuner));
    PetscCall(PetscObjectStateGet((PetscObject)A, &state));
    for (PetscInt j = 0; j < k; j++) {
      GpukitCSRPowersArgs e;
      GpukitCUDAReads     rd;
      const PetscScalar  *xa;
      PetscScalar        *w1;
      const PetscInt     *cfg;
      PetscInt            nlaunch;

      rd.n = 0;
      PetscCall(GpukitCUDAReadsGet(&rd, lean ? W[j] : V[j], &xa));
      e.xs = NULL;
      if (lean) PetscCall(GpukitCUDAReadsGet(&rd, dinv, &e.xs));
      PetscCall(GpukitCUDAPowersStepBegin(&rd, j, theta, sigma, gamma, dinv, V, W, &e, &w1));
      PetscCall(PetscLogGpuTimeBegin());
      PetscCall(GpukitTunerBegin(tuner, state, (void *)stream, &cfg, &nlaunch));
      for (PetscInt l = 0; l < nlaunch; l++) { /* nlaunch > 1 only while the tuner times this step */
        PetscCallCUDA(GpukitCSRPowersCUDA(&csr, &e, xa, w1, (int)cfg[0], stream));
        PetscCall(GpukitTunerMark(tuner));
      }
      PetscCall(GpukitTunerEnd(tuner));
      PetscCall(PetscLogGpuTimeEnd());
      /* 2 per entry (and 1 more for the lean input), the epilogue's products and sums */
      flops += (lean ? 3.0 : 2.0) * (PetscLogDouble)csr.nnz + (PetscLogDouble)m * (1.0 + (e.w0 ? 2.0 : 0.0) + (e.wm1 ? 2.0 : 0.0) + (e.v1 ? 1.0 : 0.0));
      PetscCall(GpukitCUDAPowersStepEnd(&rd, j, dinv, V, W, &e, &w1));
    }
    PetscCall(PetscLogGpuFlops(flops));
    PetscCall(PetscLogEventEnd(MAT_CSR_MatPowCUDA, A, 0, 0, 0));
    PetscCall(MatSeqAIJCUSPARSERestoreIJ(A, PETSC_FALSE, &ai, &aj));
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* GpukitMatGetCaps()'s matrix powers kernel of a MATSEQAIJCUSPARSE (not bound to the CPU): this file's, in builds
   whose scalars and indices the device kernel takes (real double, 32-bit); NULL otherwise */
PetscErrorCode GpukitMatGetPowers_SeqAIJCUSPARSE(Mat A, GpukitMatMatrixPowersFn *powers)
{
  PetscFunctionBegin;
  (void)A;
  *powers = NULL;
  if (!GPUKIT_CSR_MPK_DEVICE) PetscFunctionReturn(PETSC_SUCCESS);
  *powers = GpukitMatMatrixPowers_SeqAIJCUSPARSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
