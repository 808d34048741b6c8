/*
   CUDA helpers shared by every gpukit type's PETSc/CUDA glue. Built only against a PETSc with CUDA.
*/
#include <petscdevice_cuda.h>
#include "gpukitcuda.h"
#include "gpukitpool.h"

/* one cuSPARSE handle for the whole library (cusparseCreate() costs milliseconds): MATAMBCUDA's products, PCGSAI's
   device M; set to the caller's stream at every call, destroyed at PetscFinalize() */
static cusparseHandle_t GpukitCUSPARSEHandle = NULL;

static PetscErrorCode GpukitCUSPARSEHandleDestroy_Private(void)
{
  PetscFunctionBegin;
  if (GpukitCUSPARSEHandle) PetscCallCUSPARSE(cusparseDestroy(GpukitCUSPARSEHandle));
  GpukitCUSPARSEHandle = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GpukitCUSPARSEGetHandle(cudaStream_t stream, cusparseHandle_t *h)
{
  PetscFunctionBegin;
  if (!GpukitCUSPARSEHandle) {
    PetscCallCUSPARSE(cusparseCreate(&GpukitCUSPARSEHandle));
    PetscCall(PetscRegisterFinalize(GpukitCUSPARSEHandleDestroy_Private));
  }
  PetscCallCUSPARSE(cusparseSetStream(GpukitCUSPARSEHandle, stream));
  *h = GpukitCUSPARSEHandle;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the descriptor, the work buffer and (when due, or now) ALG1's analysis for the CSR (rowptr, col, val) and x, y */
static PetscErrorCode GpukitCSRSpMVSetUp_Private(GpukitCSRSpMV *s, cusparseHandle_t h, PetscInt m, PetscInt n, PetscCount nnz, const int *rowptr, const int *col, const double *val, const double *x, double *y, PetscBool now, cudaStream_t stream)
{
  const double one = 1.0;

  PetscFunctionBegin;
  PetscCheck(nnz <= (PetscCount)PETSC_INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "gpukit's cuSPARSE CSR product takes at most 2^31 - 1 entries, not %" PetscCount_FMT, nnz);
  if (!s->mat || s->row != rowptr || s->col != col || s->val != val || s->nnz != nnz || s->m != m || s->n != n) {
    if (s->mat) PetscCallCUSPARSE(cusparseDestroySpMat(s->mat));
    if (s->x) PetscCallCUSPARSE(cusparseDestroyDnVec(s->x));
    if (s->y) PetscCallCUSPARSE(cusparseDestroyDnVec(s->y));
    PetscCallCUSPARSE(cusparseCreateCsr(&s->mat, m, n, (int64_t)nnz, (void *)rowptr, (void *)col, (void *)val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    PetscCallCUSPARSE(cusparseCreateDnVec(&s->x, n, (void *)x, CUDA_R_64F));
    PetscCallCUSPARSE(cusparseCreateDnVec(&s->y, m, (void *)y, CUDA_R_64F));
    s->row    = rowptr;
    s->col    = col;
    s->val    = val;
    s->nnz    = nnz;
    s->m      = m;
    s->n      = n;
    s->bufok  = PETSC_FALSE;
    s->prepok = PETSC_FALSE;
    s->ncalls = 0;
  }
  PetscCallCUSPARSE(cusparseDnVecSetValues(s->x, (void *)x));
  PetscCallCUSPARSE(cusparseDnVecSetValues(s->y, (void *)y));
  if (!s->bufok) { /* the same size for beta 0 and 1 */
    size_t need = 0;
    PetscCallCUSPARSE(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->mat, s->x, &one, s->y, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1, &need));
    if (need > s->bufsize || !s->buf) {
      if (s->buf) PetscCallCUDA(GpukitPoolFree(s->buf, stream));
      s->buf = NULL;
      PetscCallCUDA(GpukitPoolMalloc(&s->buf, need ? need : 1, stream));
      s->bufsize = need;
    }
    s->bufok = PETSC_TRUE;
  }
#if CUDART_VERSION >= 12040
  if (!s->prepok && (now || s->ncalls >= s->prepafter)) {
    /* the analysis ALG1 uses to balance irregular rows (MATAIJCUSPARSE does it once too); valid while the arrays stay */
    PetscCallCUSPARSE(cusparseSpMV_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->mat, s->x, &one, s->y, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1, s->buf));
    s->prepok = PETSC_TRUE;
  }
#else
  (void)now;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* GpukitCSRSpMVApply - y = A x (z NULL) or y = z + A x (z may be y) for the m x n CSR (rowptr, col, val) of nnz entries,
   all device arrays, on stream; see GpukitCSRSpMV in gpukitcuda.h */
PetscErrorCode GpukitCSRSpMVApply(GpukitCSRSpMV *s, PetscInt m, PetscInt n, PetscCount nnz, const int *rowptr, const int *col, const double *val, const double *x, const double *z, double *y, cudaStream_t stream)
{
  cusparseHandle_t h;
  const double     one = 1.0, zero = 0.0;

  PetscFunctionBegin;
  PetscCall(GpukitCUSPARSEGetHandle(stream, &h));
  PetscCall(GpukitCSRSpMVSetUp_Private(s, h, m, n, nnz, rowptr, col, val, x, y, PETSC_FALSE, stream));
  if (z && z != y) PetscCallCUDA(cudaMemcpyAsync(y, z, (size_t)m * sizeof(double), cudaMemcpyDeviceToDevice, stream));
  s->ncalls++;
  PetscCallCUSPARSE(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->mat, s->x, z ? &one : &zero, s->y, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1, s->buf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* GpukitCSRSpMVAnalyse - what GpukitCSRSpMVApply() would set up, ALG1's analysis included whatever prepafter says, and no
   product (e.g. before a tuner times the product against other kernels: the analysis then is not in a timed call) */
PetscErrorCode GpukitCSRSpMVAnalyse(GpukitCSRSpMV *s, PetscInt m, PetscInt n, PetscCount nnz, const int *rowptr, const int *col, const double *val, const double *x, double *y, cudaStream_t stream)
{
  cusparseHandle_t h;

  PetscFunctionBegin;
  PetscCall(GpukitCUSPARSEGetHandle(stream, &h));
  PetscCall(GpukitCSRSpMVSetUp_Private(s, h, m, n, nnz, rowptr, col, val, x, y, PETSC_TRUE, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the sum of |last column - first column| over the rows of a CSR (a warp's sum, then one 64-bit integer atomic a
   warp: the same sum at every run) */
__global__ static void GpukitCSRRowSpanKernel(int m, const int *__restrict__ rowptr, const int *__restrict__ col, unsigned long long *sum)
{
  unsigned long long s = 0;

  for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < m; r += (long long)gridDim.x * blockDim.x) {
    const int b = rowptr[r], e = rowptr[r + 1];
    if (e > b) {
      const int d = col[e - 1] - col[b];
      s += (unsigned long long)(d < 0 ? -d : d);
    }
  }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0 && s) atomicAdd(sum, s);
}

/* GpukitCSRMeanRowSpan - the mean over the m rows of a device CSR (columns sorted in each row) of the row's last column
   minus its first (0 for an empty row): the locality class of the tuners' keys (GpukitTuneShapeAppendSpan()). Reads
   2 ints a row and the row pointers; one synchronisation of stream. */
PetscErrorCode GpukitCSRMeanRowSpan(PetscInt m, const int *rowptr, const int *col, cudaStream_t stream, PetscReal *mean)
{
  unsigned long long h = 0;
  GpukitPoolTemp     d(stream);
  const long long    blocks = PetscMin(((long long)m + 255) / 256, 1024);

  PetscFunctionBegin;
  *mean = 0;
  if (m <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallCUDA(d.Get(sizeof(h)));
  PetscCallCUDA(cudaMemsetAsync(d.p, 0, sizeof(h), stream));
  GpukitCSRRowSpanKernel<<<(unsigned)blocks, 256, 0, stream>>>((int)m, rowptr, col, d.As<unsigned long long>());
  PetscCallCUDA(cudaGetLastError());
  PetscCallCUDA(cudaMemcpyAsync(&h, d.p, sizeof(h), cudaMemcpyDeviceToHost, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream));
  PetscCall(PetscLogGpuToCpu(sizeof(h)));
  *mean = (PetscReal)h / (PetscReal)m;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* GpukitCSRSpMVReset - frees what GpukitCSRSpMVApply() made (the work buffer stream-ordered) and zeroes *s */
PetscErrorCode GpukitCSRSpMVReset(GpukitCSRSpMV *s, cudaStream_t stream)
{
  PetscFunctionBegin;
  if (s->mat) PetscCallCUSPARSE(cusparseDestroySpMat(s->mat));
  if (s->x) PetscCallCUSPARSE(cusparseDestroyDnVec(s->x));
  if (s->y) PetscCallCUSPARSE(cusparseDestroyDnVec(s->y));
  if (s->buf) PetscCallCUDA(GpukitPoolFree(s->buf, stream));
  {
    const PetscInt prepafter = s->prepafter; /* the caller's setting stays */
    PetscCall(PetscMemzero(s, sizeof(*s)));
    s->prepafter = prepafter;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The stream of the current PETSc device context, on which PETSc's CUDA vectors work; who names the caller in the
   error (e.g. "MATSGDIACUDA launches its kernels") */
PetscErrorCode GpukitCUDAGetStream(const char who[], cudaStream_t *stream)
{
  PetscDeviceContext dctx;
  PetscDeviceType    type;
  void              *handle;

  PetscFunctionBegin;
  PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
  PetscCall(PetscDeviceContextGetDeviceType(dctx, &type));
  PetscCheck(type == PETSC_DEVICE_CUDA, PETSC_COMM_SELF, PETSC_ERR_SUP, "%s on the stream of the current PetscDeviceContext, which is of type %s, not CUDA; leave -device_context_device_type at cuda", who, PetscDeviceTypes[type]);
  PetscCall(PetscDeviceContextGetStreamHandle(dctx, &handle));
  *stream = *(cudaStream_t *)handle;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device array of v for reading, got once per GpukitCUDAReads set (see gpukitcuda.h) */
PetscErrorCode GpukitCUDAReadsGet(GpukitCUDAReads *r, Vec v, const PetscScalar **a)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < r->n; i++) {
    if (r->v[i] == v) {
      *a = r->a[i];
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  PetscCheck(r->n < GPUKIT_CUDA_READS_MAX, PETSC_COMM_SELF, PETSC_ERR_PLIB, "more than %d input vectors in one kernel launch", GPUKIT_CUDA_READS_MAX);
  PetscCall(VecCUDAGetArrayRead(v, &r->a[r->n]));
  r->v[r->n] = v;
  *a         = r->a[r->n++];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* gives back every array of the set and empties it */
PetscErrorCode GpukitCUDAReadsRestore(GpukitCUDAReads *r)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < r->n; i++) PetscCall(VecCUDARestoreArrayRead(r->v[i], &r->a[i]));
  r->n = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Step j of a device matrix powers hook: the epilogue's coefficients and the arrays it reads and writes. The terms
   are those GpukitMatMatrixPowersReference() adds: W[j] and W[j-1] with a gamma term, W[j] with a theta term, none for a scaling.
   The caller has put the product input into rd (and e->xs) before, or puts it after: rd gets each vector once. */
PetscErrorCode GpukitCUDAPowersStepBegin(GpukitCUDAReads *rd, PetscInt j, const PetscReal theta[], const PetscReal sigma[], const PetscReal gamma[], Vec dinv, Vec V[], Vec W[], GpukitPowersEpilogue *e, PetscScalar **w1)
{
  PetscFunctionBegin;
  e->a   = 1.0 / sigma[j];
  e->b   = -theta[j] / sigma[j];
  e->c   = -gamma[j] / sigma[j];
  e->w0  = e->wm1 = e->dinv = NULL;
  e->v1  = NULL;
  if (j > 0 && gamma[j] != 0.0) {
    PetscCall(GpukitCUDAReadsGet(rd, W[j], &e->w0));
    PetscCall(GpukitCUDAReadsGet(rd, W[j - 1], &e->wm1));
  } else if (theta[j] != 0.0) PetscCall(GpukitCUDAReadsGet(rd, W[j], &e->w0));
  if (dinv && V) {
    PetscCall(GpukitCUDAReadsGet(rd, dinv, &e->dinv));
    PetscCall(VecCUDAGetArrayWrite(V[j + 1], &e->v1));
  }
  PetscCall(VecCUDAGetArrayWrite(W[j + 1], w1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* gives back what GpukitCUDAPowersStepBegin() and the caller got for step j; V[j+1] = W[j+1] without dinv when V is
   another array (not KSPCACG's case: there V == W) */
PetscErrorCode GpukitCUDAPowersStepEnd(GpukitCUDAReads *rd, PetscInt j, Vec dinv, Vec V[], Vec W[], GpukitPowersEpilogue *e, PetscScalar **w1)
{
  PetscFunctionBegin;
  PetscCall(VecCUDARestoreArrayWrite(W[j + 1], w1));
  if (e->v1) PetscCall(VecCUDARestoreArrayWrite(V[j + 1], &e->v1));
  PetscCall(GpukitCUDAReadsRestore(rd));
  if (!dinv && V && V[j + 1] != W[j + 1]) PetscCall(VecCopy(W[j + 1], V[j + 1]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the tuner's device clock and cache key (gpukittune.c) ------------------------------------------------ */
#define GPUKIT_CUDA_TIMER_EVENTS 9 /* GPUKIT_TUNE_MAX_SAMPLES + 1 marks */

/* records mark i of a timed call on stream; the events are created at the first use */
PETSC_INTERN PetscErrorCode GpukitCUDATimerRecord(void **events, PetscInt i, void *stream)
{
  cudaEvent_t *ev = (cudaEvent_t *)*events;

  PetscFunctionBegin;
  PetscCheck(i >= 0 && i < GPUKIT_CUDA_TIMER_EVENTS, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "timer mark %" PetscInt_FMT " outside 0..%d", i, GPUKIT_CUDA_TIMER_EVENTS - 1);
  if (!ev) {
    PetscCall(PetscMalloc1(GPUKIT_CUDA_TIMER_EVENTS, &ev));
    for (int e = 0; e < GPUKIT_CUDA_TIMER_EVENTS; e++) PetscCallCUDA(cudaEventCreate(&ev[e]));
    *events = ev;
  }
  PetscCallCUDA(cudaEventRecord(ev[i], stream ? *(cudaStream_t *)&stream : (cudaStream_t)0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ms[i] = the time between marks i and i+1, for i < n (waits for mark n) */
PETSC_INTERN PetscErrorCode GpukitCUDATimerElapsed(void *events, PetscInt n, PetscReal ms[])
{
  cudaEvent_t *ev = (cudaEvent_t *)events;

  PetscFunctionBegin;
  PetscCheck(ev && n >= 1 && n < GPUKIT_CUDA_TIMER_EVENTS, PETSC_COMM_SELF, PETSC_ERR_ORDER, "no timed launches to read");
  PetscCallCUDA(cudaEventSynchronize(ev[n]));
  for (PetscInt i = 0; i < n; i++) {
    float t;
    PetscCallCUDA(cudaEventElapsedTime(&t, ev[i], ev[i + 1]));
    ms[i] = (PetscReal)t;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode GpukitCUDATimerDestroy(void **events)
{
  cudaEvent_t *ev = (cudaEvent_t *)*events;

  PetscFunctionBegin;
  if (!ev) PetscFunctionReturn(PETSC_SUCCESS);
  for (int e = 0; e < GPUKIT_CUDA_TIMER_EVENTS; e++) PetscCallCUDA(cudaEventDestroy(ev[e]));
  PetscCall(PetscFree(ev));
  *events = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* "<device name> sm_<major><minor>" of the current device: the device part of a tuning cache key */
PETSC_INTERN PetscErrorCode GpukitCUDADeviceKey(char buf[], size_t len)
{
  static int  known = -1;
  static char key[160];
  int         dev;

  PetscFunctionBegin;
  PetscCallCUDA(cudaGetDevice(&dev));
  if (dev != known) {
    cudaDeviceProp p;
    PetscCallCUDA(cudaGetDeviceProperties(&p, dev));
    PetscCall(PetscSNPrintf(key, sizeof(key), "%s sm_%d%d", p.name, p.major, p.minor));
    known = dev;
  }
  PetscCall(PetscStrncpy(buf, key, len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* waits for all work on the device (the tuner's host clock for a device kernel timed without a stream) */
PETSC_INTERN PetscErrorCode GpukitCUDASynchronize(void)
{
  PetscFunctionBegin;
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscFunctionReturn(PETSC_SUCCESS);
}
