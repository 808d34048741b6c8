/*
   MATSEQDCSRCUDA and MATMPIDCSRCUDA: MATDCSR with its segmented structure on an NVIDIA GPU (docs/dcsr.md, "On the
   GPU"). Built only against a PETSc with CUDA (real double scalars, 32-bit PetscInt); it replaces the registration
   stubs of dcsrcudareg.c. Kernels: dcsrkernels.cu (batch insertion, defragmentation, the binned, fused and rows
   products, ops).

   MATSEQDCSRCUDA is MATSEQDCSR (dcsr.c, H3's) plus one in-place convert, DCSRConvertToCUDA_Private(): it hangs a
   Mat_SeqDCSRCUDA on Mat_SeqDCSR's spdev and attaches the twin (gpukittwin.h), which keeps the host ops (for
   MatBindToCPU() and the way back to MATSEQDCSR), makes VECCUDA the vector type and installs the device ops of ONE
   list, DCSRCUDAOps[].

   Where the matrix lives:
   - the device copy of the structure is authoritative after a device insertion (A->offloadmask GPU); host code of
     MATSEQDCSR calls Mat_SeqDCSR's hostaccess hook first, which copies everything down (event DCSRCUDACopy) when
     only the device is current, and marks the host as the only valid copy when it writes;
   - MatSetValues() stashes (i, j, v) on the host; MatAssemblyEnd() uploads ONLY those entries and inserts them with
     the device batch (sort by (row, column) on the device, duplicates reduced as AIJ does, hits resolved, new entries
     by the allocation kernel (one atomic per row) and the insertion kernel; a row at K segments or a full buffer
     raises a device flag that the host reads: then the device defragments, growing the buffer if needed, and the
     batch is planned again; nothing overflows silently);
   - MatDCSRSetValuesCOODevice() runs the same batch on device arrays: no host copy of the entries at all.
   So an iterative code that adds entries every step moves only the new entries, never the matrix.
*/
#include "dcsrcudaimpl.h"

#if defined(GPUKIT_DCSRCUDA_AVAILABLE)

  #include <type_traits>
  #include "gpukitpool.h"

static_assert(sizeof(PetscInt) == sizeof(int), "MATDCSRCUDA mirrors PetscInt arrays as int");
static_assert(sizeof(PetscCount) == sizeof(long long), "MATDCSRCUDA mirrors PetscCount arrays as long long");
static_assert(sizeof(PetscScalar) == sizeof(double), "MATDCSRCUDA works in real double precision");

PetscLogEvent MAT_DCSRCUDA_Insert, MAT_DCSRCUDA_Defrag, MAT_DCSRCUDA_Mult, MAT_DCSRCUDA_Copy;
/* the steps of a device batch, inside DCSRCUDAInsert (each with its synchronisation, if any) */
PetscLogEvent MAT_DCSRCUDA_BatchSort, MAT_DCSRCUDA_BatchPlan, MAT_DCSRCUDA_BatchApply, MAT_DCSRCUDA_Finish;

static const PetscInt DCSRCUDATprValues[] = {1, 2, 4, 8, 16, 32};
static const PetscInt DCSRCUDATprStart[GPUKIT_DCSR_NBINS] = {1, 3, 5, 5}; /* indices: 2, 8, 32, 32 threads per row */

/* whether every row has at most one segment (1), not (0) or unknown (-1), for the current structure version (the rows
   kernel's applicability, known without a read-back at the product) */
static inline void DCSRCUDASetSingle_Private(Mat_SeqDCSRCUDA *cu, PetscInt single)
{
  cu->single    = single;
  cu->singlever = cu->structver;
}

static inline PetscInt DCSRCUDAGetSingle_Private(const Mat_SeqDCSRCUDA *cu)
{
  return cu->singlever == cu->structver ? cu->single : -1;
}

/* ------------------------------------------------------------------------------------------------------
   Device storage and the twin's copies
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode DCSRCUDAFreeDev_Private(GpukitDCSRDev *d)
{
  PetscFunctionBegin;
  if (d->colidx || d->values) { /* pool memory (GpukitDCSRDefragment() swaps these buffers), given back on the stream of their uses */
    cudaStream_t stream;
    PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
    PetscCallCUDA(GpukitPoolFreeN(&d->colidx, stream));
    PetscCallCUDA(GpukitPoolFreeN(&d->values, stream));
  }
  if (d->segstart) PetscCallCUDA(cudaFree(d->segstart));
  if (d->seglen) PetscCallCUDA(cudaFree(d->seglen));
  if (d->segcap) PetscCallCUDA(cudaFree(d->segcap));
  if (d->nseg) PetscCallCUDA(cudaFree(d->nseg));
  if (d->rowlen) PetscCallCUDA(cudaFree(d->rowlen));
  if (d->dused) PetscCallCUDA(cudaFree(d->dused));
  PetscCall(PetscMemzero(d, sizeof(*d)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DCSRCUDAMalloc_Private(void **p, size_t bytes, const char *what)
{
  cudaError_t err;

  PetscFunctionBegin;
  err = cudaMalloc(p, bytes ? bytes : 1);
  if (err == cudaErrorMemoryAllocation) {
    size_t fre = 0, tot = 0;
    (void)cudaGetLastError();
    (void)cudaMemGetInfo(&fre, &tot);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "MATDCSRCUDA: no device memory for %s (%g MB asked, %g MB free of %g MB)", what, (double)bytes / 1048576.0, (double)fre / 1048576.0, (double)tot / 1048576.0);
  }
  PetscCallCUDA(err);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* bytes of pool memory (stream-ordered: usable on the PETSc stream), with the same error as DCSRCUDAMalloc_Private() */
static PetscErrorCode DCSRCUDAPoolMalloc_Private(void **p, size_t bytes, const char *what)
{
  cudaStream_t stream;
  cudaError_t  err;

  PetscFunctionBegin;
  PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
  err = GpukitPoolMalloc(p, bytes ? bytes : 1, stream);
  if (err == cudaErrorMemoryAllocation) {
    size_t fre = 0, tot = 0;
    (void)cudaGetLastError();
    (void)cudaMemGetInfo(&fre, &tot);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "MATDCSRCUDA: no device memory for %s (%g MB asked, %g MB free of %g MB)", what, (double)bytes / 1048576.0, (double)fre / 1048576.0, (double)tot / 1048576.0);
  }
  PetscCallCUDA(err);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DCSRCUDAPoolFree_Private(void *p)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  if (!p) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
  PetscCallCUDA(GpukitPoolFree(p, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   The CSR base (dcsrcudaimpl.h): row pointers of a plain CSR layout, and the rows marked since
   ------------------------------------------------------------------------------------------------------ */

/* the base rows kernel's table of the long base rows */
static PetscErrorCode DCSRCUDABaseLongFree_Private(Mat_SeqDCSRCUDA *cu)
{
  PetscFunctionBegin;
  if (cu->blong.lrow) PetscCallCUDA(cudaFree(cu->blong.lrow));
  if (cu->blong.lpart) PetscCallCUDA(cudaFree(cu->blong.lpart));
  PetscCall(PetscMemzero(&cu->blong, sizeof(cu->blong)));
  cu->blongalloc     = 0;
  cu->blongpartalloc = 0;
  cu->blongok        = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DCSRCUDABaseFree_Private(Mat_SeqDCSRCUDA *cu)
{
  PetscFunctionBegin;
  if (cu->csrmv.mat || cu->csrmv.buf) {
    cudaStream_t stream;
    PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
    PetscCall(GpukitCSRSpMVReset(&cu->csrmv, stream));
  }
  if (cu->baserow) PetscCallCUDA(cudaFree(cu->baserow));
  PetscCall(DCSRCUDAPoolFree_Private(cu->basetpiece));
  PetscCall(DCSRCUDABaseLongFree_Private(cu));
  cu->baserow = cu->basedirty = cu->basecount = cu->basetrow = NULL;
  cu->basetpiece = NULL;
  cu->basem    = 0;
  cu->baseok   = PETSC_FALSE;
  cu->ndirtyub = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the base's arrays for the current m (kept while m stays), and cuSPARSE's descriptor and analysis dropped (a new layout
   may come back at the same addresses: the spare buffers of the defragmentation alternate) */
static PetscErrorCode DCSRCUDABaseArrays_Private(Mat A, cudaStream_t stream)
{
  Mat_SeqDCSRCUDA *cu = DCSRCUDAGet(A);
  const size_t     m  = (size_t)cu->d.m;

  PetscFunctionBegin;
  cu->baseok  = PETSC_FALSE;
  cu->blongok = PETSC_FALSE;
  PetscCall(GpukitCSRSpMVReset(&cu->csrmv, stream));
  if (cu->baserow && cu->basem != cu->d.m) PetscCall(DCSRCUDABaseFree_Private(cu));
  if (!cu->baserow) {
    PetscCall(DCSRCUDAMalloc_Private((void **)&cu->baserow, (2 * m + 2) * sizeof(int), "the CSR base's row pointers and marks"));
    cu->basedirty = cu->baserow + m + 1;
    cu->basecount = cu->basedirty + m;
    cu->basem     = cu->d.m;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* baserow[] holds the row pointers of the current structure, nnz entries: no row marked (the marks and their count
   zeroed here, unless zeroed already on the stream), the base valid */
static PetscErrorCode DCSRCUDABaseSet_Private(Mat A, long long nnz, PetscBool zeroed, cudaStream_t stream)
{
  Mat_SeqDCSRCUDA *cu = DCSRCUDAGet(A);

  PetscFunctionBegin;
  if (!zeroed) PetscCallCUDA(cudaMemsetAsync(cu->basedirty, 0, ((size_t)cu->d.m + 1) * sizeof(int), stream)); /* marks, count */
  cu->basennz  = nnz;
  cu->ndirtyub = 0;
  cu->baseok   = PETSC_TRUE;
  cu->blongok  = PETSC_FALSE; /* new row pointers: the long base rows again */
  cu->basever  = cu->structver;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscBool DCSRCUDABaseValid_Private(const Mat_SeqDCSRCUDA *cu)
{
  return (PetscBool)(cu->usebase && cu->baseok && cu->basever == cu->structver && cu->basem == cu->d.m && cu->d.m > 0);
}

/* the base's tail table (records of the marked rows, 5 ints a row), made at the first batch that marks rows, from the
   stream-ordered pool (no cudaMalloc(), which would synchronise the device, inside a batch) */
static PetscErrorCode DCSRCUDABaseTable_Private(Mat_SeqDCSRCUDA *cu)
{
  PetscFunctionBegin;
  if (!cu->basetpiece) {
    PetscCall(DCSRCUDAPoolMalloc_Private((void **)&cu->basetpiece, (size_t)cu->basem * (sizeof(int4) + sizeof(int)), "the CSR base's tail table"));
    cu->basetrow = (int *)(cu->basetpiece + cu->basem);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* gives the library pool's unused memory (freed work arrays it keeps for the next allocation, up to GPUKIT_POOL_KEEP)
   back to the device after the stream's pending frees, keeping at most keep unused bytes (GpukitPoolTrim()); p: the
   work array just freed (NULL: nothing was pooled, nothing to do) */
static PetscErrorCode DCSRCUDATrimPool_Private(Mat A, const void *p, size_t keep, cudaStream_t stream)
{
  Mat_SeqDCSRCUDA *cu = DCSRCUDAGet(A);
  size_t           f0 = 0, f1 = 0, tot = 0;

  PetscFunctionBegin;
  if (!p || !cu->trim) PetscFunctionReturn(PETSC_SUCCESS);
  if (PetscLogPrintInfo) {
    PetscCallCUDA(cudaStreamSynchronize(stream));
    PetscCallCUDA(cudaMemGetInfo(&f0, &tot));
  }
  PetscCallCUDA(GpukitPoolTrim(keep, stream));
  cu->ntrim++;
  if (PetscLogPrintInfo) {
    PetscCallCUDA(cudaMemGetInfo(&f1, &tot));
    PetscCall(PetscInfo(A, "gpukit: MATDCSRCUDA gave %g MB of pooled work space back to the device (-mat_dcsr_cuda_trim)\n", ((double)f1 - (double)f0) / 1048576.0));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the defragmentation's spare buffers back to the pool */
static PetscErrorCode DCSRCUDAFreeSpare_Private(Mat_SeqDCSRCUDA *cu)
{
  PetscFunctionBegin;
  if (cu->spare.colidx || cu->spare.values) {
    cudaStream_t stream;
    PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
    PetscCallCUDA(GpukitPoolFreeN(&cu->spare.colidx, stream));
    PetscCallCUDA(GpukitPoolFreeN(&cu->spare.values, stream));
  }
  cu->spare.cap = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* device arrays of the host's sizes (m, K, cap); whatever they held is lost */
static PetscErrorCode DCSRCUDAAllocDev_Private(Mat A)
{
  Mat_SeqDCSR     *a  = (Mat_SeqDCSR *)A->data;
  Mat_SeqDCSRCUDA *cu = (Mat_SeqDCSRCUDA *)a->spdev;
  GpukitDCSRDev   *d  = &cu->d;
  const size_t     mk = (size_t)a->m * (size_t)a->K;

  PetscFunctionBegin;
  if (d->segstart && d->m == a->m && d->n == a->n && d->K == a->K && d->cap == a->cap) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(a->m < PETSC_INT_MAX && a->n < PETSC_INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "MATDCSRCUDA blocks have fewer than 2^31 rows and columns");
  PetscCall(DCSRCUDAFreeDev_Private(d));
  PetscCall(DCSRCUDAMalloc_Private((void **)&d->segstart, mk * sizeof(long long), "the segment table"));
  PetscCall(DCSRCUDAMalloc_Private((void **)&d->seglen, mk * sizeof(int), "the segment table"));
  PetscCall(DCSRCUDAMalloc_Private((void **)&d->segcap, mk * sizeof(int), "the segment table"));
  PetscCall(DCSRCUDAMalloc_Private((void **)&d->nseg, (size_t)a->m * sizeof(int), "the segment counts"));
  PetscCall(DCSRCUDAMalloc_Private((void **)&d->rowlen, (size_t)a->m * sizeof(int), "the row lengths"));
  PetscCall(DCSRCUDAPoolMalloc_Private((void **)&d->colidx, (size_t)a->cap * sizeof(int), "the column buffer"));
  PetscCall(DCSRCUDAPoolMalloc_Private((void **)&d->values, (size_t)a->cap * sizeof(double), "the value buffer"));
  PetscCall(DCSRCUDAMalloc_Private((void **)&d->dused, sizeof(unsigned long long), "the bump pointer"));
  d->m    = (int)a->m;
  d->n    = (int)a->n;
  d->K    = (int)a->K;
  d->cap  = (long long)a->cap;
  d->used = 0;
  PetscCall(GpukitTwinDeviceLost(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the twin's copy up: the whole host structure (tables, and the buffers up to used) */
static PetscErrorCode DCSRCUDACopyUp_Private(Mat A, PetscLogDouble *bytes)
{
  Mat_SeqDCSR       *a  = (Mat_SeqDCSR *)A->data;
  Mat_SeqDCSRCUDA   *cu = (Mat_SeqDCSRCUDA *)a->spdev;
  GpukitDCSRDev     *d  = &cu->d;
  const size_t       mk = (size_t)a->m * (size_t)a->K;
  unsigned long long u  = (unsigned long long)a->used;
  cudaStream_t       stream;

  PetscFunctionBegin;
  PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
  PetscCall(DCSRCUDAAllocDev_Private(A));
  if (mk) {
    PetscCallCUDA(cudaMemcpyAsync(d->segstart, a->segstart, mk * sizeof(long long), cudaMemcpyHostToDevice, stream));
    PetscCallCUDA(cudaMemcpyAsync(d->seglen, a->seglen, mk * sizeof(int), cudaMemcpyHostToDevice, stream));
    PetscCallCUDA(cudaMemcpyAsync(d->segcap, a->segcap, mk * sizeof(int), cudaMemcpyHostToDevice, stream));
  }
  if (a->m) {
    PetscCallCUDA(cudaMemcpyAsync(d->nseg, a->nseg, (size_t)a->m * sizeof(int), cudaMemcpyHostToDevice, stream));
    PetscCallCUDA(cudaMemcpyAsync(d->rowlen, a->rowlen, (size_t)a->m * sizeof(int), cudaMemcpyHostToDevice, stream));
  }
  if (a->used) {
    PetscCallCUDA(cudaMemcpyAsync(d->colidx, a->colidx, (size_t)a->used * sizeof(int), cudaMemcpyHostToDevice, stream));
    PetscCallCUDA(cudaMemcpyAsync(d->values, a->values, (size_t)a->used * sizeof(double), cudaMemcpyHostToDevice, stream));
  }
  PetscCallCUDA(cudaMemcpyAsync(d->dused, &u, sizeof(u), cudaMemcpyHostToDevice, stream));
  { /* a plain CSR layout on the host (each row one segment or empty, the rows back to back from slot 0): the CSR base */
    PetscInt  *rp    = NULL;
    PetscCount pos   = 0;
    PetscBool  plain = (PetscBool)(cu->usebase && a->m > 0 && a->used <= (PetscCount)INT_MAX);
    for (PetscInt r = 0; r < a->m && plain; r++) {
      const PetscInt l = a->rowlen[r];
      if (l && (a->nseg[r] != 1 || a->segstart[r * a->K] != pos)) plain = PETSC_FALSE;
      pos += l;
    }
    cu->baseok = PETSC_FALSE;
    if (plain) {
      PetscCall(DCSRCUDABaseArrays_Private(A, stream));
      PetscCall(PetscMalloc1(a->m + 1, &rp));
      rp[0] = 0;
      for (PetscInt r = 0; r < a->m; r++) rp[r + 1] = rp[r] + a->rowlen[r];
      PetscCallCUDA(cudaMemcpyAsync(cu->baserow, rp, ((size_t)a->m + 1) * sizeof(int), cudaMemcpyHostToDevice, stream));
    }
    PetscCallCUDA(cudaStreamSynchronize(stream)); /* the host arrays may change as soon as we return */
    PetscCall(PetscFree(rp));
    d->used = (long long)a->used;
    cu->structver++;
    if (plain) PetscCall(DCSRCUDABaseSet_Private(A, (long long)pos, PETSC_FALSE, stream));
  }
  { /* the host's segment counts tell whether the rows kernel applies (no read-back at the next product) */
    PetscInt single = 1;
    for (PetscInt r = 0; r < a->m && single; r++)
      if (a->nseg[r] > 1) single = 0;
    DCSRCUDASetSingle_Private(cu, single);
  }
  *bytes = (PetscLogDouble)mk * (sizeof(long long) + 2 * sizeof(int)) + (PetscLogDouble)a->m * 2 * sizeof(int) + (PetscLogDouble)a->used * (sizeof(int) + sizeof(double)) + sizeof(u);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the twin's copy down: the whole device structure; the host buffers follow the device capacity */
static PetscErrorCode DCSRCUDACopyDown_Private(Mat A, PetscLogDouble *bytes)
{
  Mat_SeqDCSR     *a  = (Mat_SeqDCSR *)A->data;
  Mat_SeqDCSRCUDA *cu = (Mat_SeqDCSRCUDA *)a->spdev;
  GpukitDCSRDev   *d  = &cu->d;
  const size_t     mk = (size_t)a->m * (size_t)a->K;
  cudaStream_t     stream;
  PetscCount       nz = 0;

  PetscFunctionBegin;
  PetscCheck(d->segstart && d->m == a->m && d->K == a->K, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATDCSRCUDA: the device structure (%d rows, K = %d) does not match the host's (%" PetscInt_FMT " rows, K = %" PetscInt_FMT ")", d->m, d->K, a->m, a->K);
  PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
  if (a->cap != d->cap) { /* the device buffer grew: so does the host's (dcsrinsert.c allocates them with PetscMalloc2) */
    PetscCall(PetscFree2(a->colidx, a->values));
    PetscCall(PetscMalloc2(d->cap, &a->colidx, d->cap, &a->values));
    a->cap = d->cap;
  }
  if (mk) {
    PetscCallCUDA(cudaMemcpyAsync(a->segstart, d->segstart, mk * sizeof(long long), cudaMemcpyDeviceToHost, stream));
    PetscCallCUDA(cudaMemcpyAsync(a->seglen, d->seglen, mk * sizeof(int), cudaMemcpyDeviceToHost, stream));
    PetscCallCUDA(cudaMemcpyAsync(a->segcap, d->segcap, mk * sizeof(int), cudaMemcpyDeviceToHost, stream));
  }
  if (a->m) {
    PetscCallCUDA(cudaMemcpyAsync(a->nseg, d->nseg, (size_t)a->m * sizeof(int), cudaMemcpyDeviceToHost, stream));
    PetscCallCUDA(cudaMemcpyAsync(a->rowlen, d->rowlen, (size_t)a->m * sizeof(int), cudaMemcpyDeviceToHost, stream));
  }
  if (d->used) {
    PetscCallCUDA(cudaMemcpyAsync(a->colidx, d->colidx, (size_t)d->used * sizeof(int), cudaMemcpyDeviceToHost, stream));
    PetscCallCUDA(cudaMemcpyAsync(a->values, d->values, (size_t)d->used * sizeof(double), cudaMemcpyDeviceToHost, stream));
  }
  PetscCallCUDA(cudaStreamSynchronize(stream));
  a->used = d->used;
  for (PetscInt r = 0; r < a->m; r++) nz += a->rowlen[r];
  a->nz  = nz;
  *bytes = (PetscLogDouble)mk * (sizeof(long long) + 2 * sizeof(int)) + (PetscLogDouble)a->m * 2 * sizeof(int) + (PetscLogDouble)d->used * (sizeof(int) + sizeof(double));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Mat_SeqDCSR's hostaccess hook */
static PetscErrorCode DCSRCUDAHostAccess(Mat A, PetscBool write)
{
  PetscFunctionBegin;
  PetscCall(GpukitTwinHostAccess(A, &DCSRCUDAGet(A)->twin, write));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* make the device structure current (storage first when the matrix has none yet) */
static PetscErrorCode DCSRCUDACopyToGPU_Private(Mat A)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  if (!a->preallocated) PetscCall(DCSRAllocate_Private(A, NULL, PETSC_DEFAULT));
  PetscCall(GpukitTwinCopyToGPU(A, &DCSRCUDAGet(A)->twin));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Defragmentation and batch insertion on the device
   ------------------------------------------------------------------------------------------------------ */

/* every row to one sorted segment with slack (and extra[r] more slots when extra is not NULL), growing if needed */
static PetscErrorCode DCSRCUDADefrag_Private(Mat A, const int *extra)
{
  Mat_SeqDCSR     *a  = (Mat_SeqDCSR *)A->data;
  Mat_SeqDCSRCUDA *cu = (Mat_SeqDCSRCUDA *)a->spdev;
  cudaStream_t     stream;
  cudaError_t      err;
  int              grew = 0;
  long long        oldcap = cu->d.cap;
  const PetscBool  binsok = (PetscBool)(cu->perm && cu->binver == cu->structver && cu->permm == cu->d.m);
  /* no slack and no extra room: the result is plain CSR, its row pointers the CSR base */
  const PetscBool  plain  = (PetscBool)(cu->usebase && a->defragslack == 0.0 && !extra && cu->d.m > 0 && cu->d.cap <= (long long)INT_MAX);
  PetscBool        hintok;

  PetscFunctionBegin;
  PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
  PetscCall(PetscLogEventBegin(MAT_DCSRCUDA_Defrag, A, 0, 0, 0));
  hintok     = (PetscBool)(cu->dhintok && cu->dhintver == cu->structver);
  cu->baseok = PETSC_FALSE;
  PetscCall(PetscInfo(A, "gpukit: MATDCSRCUDA defragmentation on the device, %s\n", hintok && !extra && cu->dhint.slack == (double)a->defragslack ? "its sizes known from the segment statistics (no read-back)" : "one read-back of its sizes"));
  if (plain && (!cu->baserow || cu->basem != cu->d.m)) PetscCall(DCSRCUDABaseArrays_Private(A, stream)); /* the row pointers' storage */
  PetscCall(PetscLogGpuTimeBegin());
  err = GpukitDCSRDefragment(&cu->d, (double)a->defragslack, extra, hintok ? &cu->dhint : NULL, cu->d.cap, (double)a->capfactor, cu->keepspare ? &cu->spare : NULL, &grew, plain ? cu->baserow : NULL, plain ? cu->basedirty : NULL, stream);
  PetscCall(PetscLogGpuTimeEnd());
  if (err == cudaErrorMemoryAllocation) {
    size_t fre = 0, tot = 0;
    (void)cudaGetLastError();
    (void)cudaMemGetInfo(&fre, &tot);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "MATDCSRCUDA: no device memory for the defragmented buffers (the old ones of %lld slots stay until the new ones are written; %g MB free of %g MB); the matrix is unchanged", oldcap, (double)fre / 1048576.0, (double)tot / 1048576.0);
  }
  PetscCallCUDA(err);
  /* the new layout is in place: its bookkeeping first, so that an error below leaves nothing that describes the old one */
  cu->structver++;
  if (hintok) cu->dhintver = cu->structver; /* the same row lengths */
  DCSRCUDASetSingle_Private(cu, 1); /* every row is one segment (or none): the rows kernel applies */
  PetscCall(GpukitTwinDeviceWritten(A));
  cu->ndevdefrag++;
  a->ndefrag++;
  if (plain) PetscCall(DCSRCUDABaseArrays_Private(A, stream)); /* cuSPARSE's descriptor of the old layout dropped, after the compaction's launches */
  if (grew) {
    cu->ndevgrow++;
    a->ngrow++;
    PetscCall(PetscInfo(A, "gpukit: MATDCSRCUDA buffer grown on the device from %lld to %lld slots\n", oldcap, cu->d.cap));
  }
  if (plain && cu->d.used <= (long long)INT_MAX) PetscCall(DCSRCUDABaseSet_Private(A, cu->d.used, PETSC_TRUE, stream)); /* the compaction zeroed the marks */
  /* the rows kept their lengths, hence their bins and long-row chunks: only the product's row table changes (no
     re-binning, no synchronisation at the next product); with a CSR base, whose product does not read the table, it is
     made by the next product that does (DCSRCUDABins_Private()) */
  if (binsok) {
    if (DCSRCUDABaseValid_Private(cu)) cu->rowtablestale = PETSC_TRUE;
    else {
      PetscCallCUDA(GpukitDCSRRowTable(&cu->d, cu->perm, cu->rowst, cu->rowln, stream));
      cu->rowtablestale = PETSC_FALSE;
    }
    cu->binver = cu->structver;
  }
  /* without the spare the old buffers went back to the pool: keep as much as the next defragmentation's new buffers
     need, give the rest of the pool's reserve back (-mat_dcsr_cuda_trim; this synchronises and unmaps memory) */
  if (!cu->keepspare && (double)oldcap * (double)(sizeof(int) + sizeof(double)) > GPUKIT_DCSR_TRIM_BYTES) PetscCall(DCSRCUDATrimPool_Private(A, cu->d.colidx, (size_t)cu->d.cap * (sizeof(int) + sizeof(double)), stream));
  PetscCall(PetscLogEventEnd(MAT_DCSRCUDA_Defrag, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* every index of a device batch in range (negative ones are skipped), else a clear error; nothing written */
static PetscErrorCode DCSRCUDAValidate_Private(Mat A, PetscCount n, const PetscInt *di, const PetscInt *dj, PetscInt rstart, PetscInt cstart, cudaStream_t stream)
{
  Mat_SeqDCSR     *a  = (Mat_SeqDCSR *)A->data;
  Mat_SeqDCSRCUDA *cu = (Mat_SeqDCSRCUDA *)a->spdev;
  GpukitDCSRBad    bad;

  PetscFunctionBegin;
  PetscCallCUDA(GpukitDCSRBatchValidate(&cu->d, (long long)n, di, dj, (long long)rstart, (long long)cstart, &bad, stream));
  PetscCall(PetscLogGpuToCpu(sizeof(unsigned long long)));
  PetscCheck(bad.entry < 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Entry %lld of the device batch, (%lld, %lld), is out of range: this process owns rows %" PetscInt_FMT "..%" PetscInt_FMT " and the block's columns are %" PetscInt_FMT "..%" PetscInt_FMT " (negative indices are skipped); the matrix is unchanged", bad.entry, bad.row,
             bad.col, rstart, rstart + a->m - 1, cstart, cstart + a->n - 1);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Insert (INSERT_VALUES) or add (ADD_VALUES) n entries given by device arrays (rows in [rstart, rstart + m), columns
   in [cstart, cstart + n): checked on the device first when validate, so that a bad index leaves A unchanged) */
static PetscErrorCode DCSRCUDABatch_Private(Mat A, PetscCount n, const PetscInt *di, const PetscInt *dj, const PetscScalar *dv, PetscInt rstart, PetscInt cstart, InsertMode mode, PetscBool validate)
{
  Mat_SeqDCSR     *a  = (Mat_SeqDCSR *)A->data;
  Mat_SeqDCSRCUDA *cu = (Mat_SeqDCSRCUDA *)a->spdev;
  cudaStream_t     stream;
  size_t           fre = 0, tot = 0;
  PetscCount       chunk, off = 0;
  const int        insertnew = a->nonew == 1 ? 0 : 1;

  PetscFunctionBegin;
  PetscCheck(mode == INSERT_VALUES || mode == ADD_VALUES, PETSC_COMM_SELF, PETSC_ERR_SUP, "MATDCSRCUDA inserts with INSERT_VALUES or ADD_VALUES, not InsertMode %d", (int)mode);
  PetscCall(DCSRCUDACopyToGPU_Private(A));
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
  if ((double)n * (double)GpukitDCSRBatchBytesPerEntry() > 256.0 * 1048576.0) { /* a large batch: chunks that fit the free memory */
    PetscCallCUDA(cudaMemGetInfo(&fre, &tot));
    chunk = (PetscCount)(fre / 2 / (size_t)GpukitDCSRBatchBytesPerEntry());
    chunk = PetscMax(chunk, (PetscCount)1024);
  } else chunk = n; /* no query (it costs a driver call per batch); a failed allocation still halves the chunk below */
  chunk = PetscMin(chunk, (PetscCount)(PETSC_INT_MAX / 2));
  if (chunk < n) PetscCall(PetscInfo(A, "gpukit: MATDCSRCUDA inserts a batch of %" PetscCount_FMT " entries in chunks of %" PetscCount_FMT " (%g MB of device memory free)\n", n, chunk, (double)fre / 1048576.0));
  /* the indices: a batch in one piece is checked by GpukitDCSRBatchCreate() in its own pass; one in chunks is checked
     whole first, so that a bad index leaves the matrix unchanged whatever chunk it is in */
  if (validate && chunk < n) PetscCall(DCSRCUDAValidate_Private(A, n, di, dj, rstart, cstart, stream));
  if (chunk < n) validate = PETSC_FALSE;
  while (off < n) {
    PetscCount          nc = PetscMin(chunk, n - off);
    GpukitDCSRBatch     b  = NULL;
    GpukitDCSRBatchInfo info;
    cudaError_t         err;

    for (;;) { /* the work space of a chunk must fit: halve it until it does */
      GpukitDCSRBad bad;
      PetscCall(PetscLogEventBegin(MAT_DCSRCUDA_BatchSort, A, 0, 0, 0));
      err = GpukitDCSRBatchCreate(&cu->d, (long long)nc, di + off, dj + off, dv ? dv + off : NULL, (long long)rstart, (long long)cstart, mode == ADD_VALUES ? 1 : 0, a->ignorezero ? 1 : 0, validate ? &bad : NULL, &b, &info, stream);
      PetscCall(PetscLogEventEnd(MAT_DCSRCUDA_BatchSort, A, 0, 0, 0));
      if (err == cudaSuccess && validate) { /* the whole batch (off == 0, nc == n) was checked */
        PetscCall(PetscLogGpuToCpu(sizeof(unsigned long long)));
        PetscCheck(bad.entry < 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Entry %lld of the device batch, (%lld, %lld), is out of range: this process owns rows %" PetscInt_FMT "..%" PetscInt_FMT " and the block's columns are %" PetscInt_FMT "..%" PetscInt_FMT " (negative indices are skipped); the matrix is unchanged", bad.entry,
                   bad.row, bad.col, rstart, rstart + a->m - 1, cstart, cstart + a->n - 1);
        validate = PETSC_FALSE;
      }
      if (err != cudaErrorMemoryAllocation || nc <= 1024) break;
      (void)cudaGetLastError();
      nc    = nc / 2;
      chunk = nc;
      PetscCall(PetscInfo(A, "gpukit: MATDCSRCUDA batch work space does not fit, chunks of %" PetscCount_FMT " entries now\n", nc));
      if (validate) { /* in chunks from now on: the whole batch checked first */
        PetscCall(DCSRCUDAValidate_Private(A, n, di, dj, rstart, cstart, stream));
        validate = PETSC_FALSE;
      }
    }
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      PetscCallCUDA(cudaMemGetInfo(&fre, &tot));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "MATDCSRCUDA: no device memory for the work space of a batch chunk of %" PetscCount_FMT " entries (%g MB free of %g MB); entries 0..%" PetscCount_FMT " of the batch were inserted, the others not: free device memory or insert smaller batches", nc, (double)fre / 1048576.0, (double)tot / 1048576.0, off - 1);
    }
    PetscCallCUDA(err);
    PetscCall(PetscLogGpuToCpu(4 * sizeof(int))); /* the counts the batch read back */
    if (a->nonew == -1 && info.nnew > 0) {
      PetscCallCUDA(GpukitDCSRBatchDestroy(&b));
      PetscCheck(off > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "The batch has %lld entries at new locations, which MAT_NEW_NONZERO_LOCATION_ERR forbids; the matrix is unchanged", info.nnew);
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "The batch has %lld entries at new locations in its entries %" PetscCount_FMT "..%" PetscCount_FMT ", which MAT_NEW_NONZERO_LOCATION_ERR forbids; its entries 0..%" PetscCount_FMT " were inserted, the others not", info.nnew, off, off + nc - 1, off - 1);
    }
    PetscCall(PetscLogEventBegin(MAT_DCSRCUDA_BatchPlan, A, 0, 0, 0));
    err = GpukitDCSRBatchPlan(&cu->d, b, insertnew, (double)a->slack, (int)a->minseg, &info, stream);
    PetscCall(PetscLogEventEnd(MAT_DCSRCUDA_BatchPlan, A, 0, 0, 0));
    PetscCallCUDA(err);
    if (info.segfull || info.capfull) { /* the device flags: nothing was written; defragment (and grow), then plan again */
      int *extra = NULL;
      PetscCall(PetscInfo(A, "gpukit: MATDCSRCUDA batch: %lld rows would exceed K = %" PetscInt_FMT " segments, %lld new segments would not fit in the buffer (%lld of %lld slots used): defragmenting on the device\n", info.segfull, a->K, info.capfull, cu->d.used, cu->d.cap));
      PetscCall(DCSRCUDAPoolMalloc_Private((void **)&extra, (size_t)a->m * sizeof(int), "the rows' extra room"));
      PetscCallCUDA(GpukitDCSRBatchRowExtra(&cu->d, b, extra, stream));
      PetscCall(DCSRCUDADefrag_Private(A, extra));
      PetscCall(DCSRCUDAPoolFree_Private(extra));
      PetscCallCUDA(GpukitDCSRBatchRelocate(&cu->d, b, stream)); /* the hits' slots moved */
      PetscCallCUDA(GpukitDCSRBatchPlan(&cu->d, b, insertnew, (double)a->slack, (int)a->minseg, &info, stream));
      PetscCheck(!info.segfull && !info.capfull, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATDCSRCUDA: the batch does not fit after a defragmentation that made room for it (%lld rows at K, %lld segments beyond the buffer)", info.segfull, info.capfull);
    }
    if (insertnew && info.nnew && DCSRCUDABaseValid_Private(cu)) { /* the base's tail table before anything is written: a
                                                                       failed allocation leaves the matrix as it was */
      if (cu->d.cap <= (long long)INT_MAX) {
        PetscErrorCode ierr = DCSRCUDABaseTable_Private(cu);
        if (ierr) (void)GpukitDCSRBatchDestroy(&b);
        PetscCall(ierr);
      } else cu->baseok = PETSC_FALSE; /* the table's 32-bit starts: not beyond 2^31 slots */
    }
    PetscCall(PetscLogEventBegin(MAT_DCSRCUDA_BatchApply, A, 0, 0, 0));
    PetscCall(PetscLogGpuTimeBegin());
    if (insertnew && info.nnew) cu->dhintok = PETSC_FALSE; /* the row lengths change now, before the version below */
    PetscCallCUDA(GpukitDCSRBatchApply(&cu->d, b, insertnew, stream));
    if (insertnew && info.nnew && DCSRCUDABaseValid_Private(cu)) { /* the CSR base stays: its rows that got new entries marked, their records written */
      PetscCallCUDA(GpukitDCSRBaseMark(&cu->d, b, cu->baserow, cu->basedirty, cu->basetrow, cu->basetpiece, cu->basecount, stream));
      cu->ndirtyub = PetscMin(cu->ndirtyub + info.nrowsnew, (long long)cu->d.m);
      cu->basever  = cu->structver + 1; /* the version this batch makes, below */
    }
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(PetscLogEventEnd(MAT_DCSRCUDA_BatchApply, A, 0, 0, 0));
    PetscCall(GpukitTwinDeviceWritten(A)); /* per chunk: a later failure leaves the device copy the valid one */
    PetscCallCUDA(GpukitDCSRBatchDestroy(&b));
    if (insertnew && info.nnew) {
      const PetscInt prev = DCSRCUDAGetSingle_Private(cu);
      a->nnew += info.nnew;
      a->nz += info.nnew;
      cu->structver++;
      /* the plan's maxnseg is over the rows that got new entries; a row never loses segments in a batch */
      DCSRCUDASetSingle_Private(cu, info.maxnseg > 1 || prev == 0 ? 0 : prev);
    }
    off += nc;
  }
  cu->nbatch++;
  PetscCall(GpukitTwinDeviceWritten(A));
  /* a large batch's work space (GpukitDCSRBatchBytesPerEntry() per entry) went back to the pool: to the device too */
  if ((double)PetscMin(n, chunk) * (double)GpukitDCSRBatchBytesPerEntry() > GPUKIT_DCSR_TRIM_BYTES) PetscCall(DCSRCUDATrimPool_Private(A, cu->d.colidx, 0, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the end of an insertion phase, as MATSEQDCSR's (dcsr.c DCSRFinishInsertion()): nonzerostate, then the policy */
static PetscErrorCode DCSRCUDAFinishInsertion_Private(Mat A)
{
  Mat_SeqDCSR     *a  = (Mat_SeqDCSR *)A->data;
  Mat_SeqDCSRCUDA *cu = (Mat_SeqDCSRCUDA *)a->spdev;
  PetscBool        defrag = PETSC_FALSE;
  int              maxnseg;
  long long        nmulti, live;
  cudaStream_t     stream;

  PetscFunctionBegin;
  if (!a->nnew) PetscFunctionReturn(PETSC_SUCCESS);
  A->nonzerostate++;
  PetscCall(PetscLogEventBegin(MAT_DCSRCUDA_Finish, A, 0, 0, 0));
  PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
  { /* the statistics, and with them (one read-back) the exact count of the CSR base's marked rows */
    const PetscBool base    = DCSRCUDABaseValid_Private(cu);
    int             nmarked = 0;
    cu->dhintok = PETSC_FALSE; /* set again only when the statistics came back */
    PetscCallCUDA(GpukitDCSRSegmentStats(&cu->d, base ? cu->basecount : NULL, &nmarked, (double)a->defragslack, &cu->dhint, &maxnseg, &nmulti, &live, stream));
    PetscCall(PetscLogGpuToCpu(6 * sizeof(long long) + (base ? sizeof(int) : 0)));
    cu->dhintok  = PETSC_TRUE;
    cu->dhintver = cu->structver;
    if (base) cu->ndirtyub = nmarked;
  }
  DCSRCUDASetSingle_Private(cu, maxnseg <= 1 ? 1 : 0);
  switch (a->defrag) {
  case MAT_DCSR_DEFRAG_ALWAYS:
    defrag = PETSC_TRUE;
    break;
  case MAT_DCSR_DEFRAG_AUTO: /* many fragmented rows, or more than half of the allocated slots are garbage */
    defrag = (PetscBool)((PetscReal)nmulti > a->defrag_fraction * (PetscReal)a->m || 2 * live < cu->d.used);
    break;
  case MAT_DCSR_DEFRAG_NEVER:
    break;
  default:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "Unknown MatDCSRDefragType %d", (int)a->defrag);
  }
  PetscCall(PetscInfo(A, "gpukit: DCSR (device) %" PetscCount_FMT " new nonzeros, %lld of %" PetscInt_FMT " rows fragmented, at most %d segments%s\n", a->nnew, nmulti, a->m, maxnseg, defrag && (nmulti || 2 * live < cu->d.used) ? ", defragmenting" : ""));
  if (defrag && (nmulti || 2 * live < cu->d.used)) PetscCall(DCSRCUDADefrag_Private(A, NULL));
  else if (cu->usebase && maxnseg <= 1 && (!DCSRCUDABaseValid_Private(cu) || cu->ndirtyub > 0) && cu->d.m > 0 && cu->d.cap <= (long long)INT_MAX) {
    /* every row is one segment, and there is no CSR base or rows were marked since (e.g. the first assembly into an
       empty preallocated layout marks every row): if the rows are also back to back (exact preallocation), the layout is
       plain CSR and gets a new CSR base (one scan, one check kernel, one read-back) */
    int  bad = 0, nnz = 0;
    int *rp  = NULL; /* scratch: rp[m+1] row pointers, rp[m+1] the flag; a base that fails the check stays as it was */
    PetscCall(DCSRCUDAPoolMalloc_Private((void **)&rp, ((size_t)cu->d.m + 2) * sizeof(int), "the plain-CSR check"));
    PetscCallCUDA(cudaMemsetAsync(rp + cu->d.m + 1, 0, sizeof(int), stream));
    PetscCallCUDA(GpukitDCSRPlainCheck(&cu->d, rp, rp + cu->d.m + 1, stream));
    PetscCallCUDA(cudaMemcpyAsync(&bad, rp + cu->d.m + 1, sizeof(int), cudaMemcpyDeviceToHost, stream));
    PetscCallCUDA(cudaMemcpyAsync(&nnz, rp + cu->d.m, sizeof(int), cudaMemcpyDeviceToHost, stream));
    PetscCallCUDA(cudaStreamSynchronize(stream));
    PetscCall(PetscLogGpuToCpu(2 * sizeof(int)));
    if (!bad) {
      PetscCall(DCSRCUDABaseArrays_Private(A, stream));
      PetscCallCUDA(cudaMemcpyAsync(cu->baserow, rp, ((size_t)cu->d.m + 1) * sizeof(int), cudaMemcpyDeviceToDevice, stream));
      PetscCall(DCSRCUDABaseSet_Private(A, (long long)nnz, PETSC_FALSE, stream));
    }
    PetscCall(DCSRCUDAPoolFree_Private(rp));
    PetscCall(PetscInfo(A, "gpukit: DCSR (device) every row is one segment; the layout is %s\n", bad ? "not plain CSR (no CSR base)" : "plain CSR: the product takes the CSR base"));
  }
  a->nnew = 0;
  PetscCall(PetscLogEventEnd(MAT_DCSRCUDA_Finish, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   MatSetValues() on the host: a stash, uploaded at MatAssemblyEnd()
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode DCSRCUDAStashGrow_Private(DCSRCUDAStash *s, PetscCount need)
{
  PetscInt    *i, *j;
  PetscScalar *v;
  PetscCount   na;

  PetscFunctionBegin;
  if (s->n + need <= s->nalloc) PetscFunctionReturn(PETSC_SUCCESS);
  na = PetscMax(PetscMax(2 * s->nalloc, s->n + need), (PetscCount)1024);
  PetscCall(PetscMalloc3(na, &i, na, &j, na, &v));
  if (s->n) {
    PetscCall(PetscArraycpy(i, s->i, s->n));
    PetscCall(PetscArraycpy(j, s->j, s->n));
    PetscCall(PetscArraycpy(v, s->v, s->n));
  }
  PetscCall(PetscFree3(s->i, s->j, s->v));
  s->i      = i;
  s->j      = j;
  s->v      = v;
  s->nalloc = na;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetValues_SeqDCSRCUDA(Mat A, PetscInt m, const PetscInt im[], PetscInt n, const PetscInt in[], const PetscScalar v[], InsertMode mode)
{
  Mat_SeqDCSR     *a  = (Mat_SeqDCSR *)A->data;
  Mat_SeqDCSRCUDA *cu = (Mat_SeqDCSRCUDA *)a->spdev;
  DCSRCUDAStash   *s  = &cu->stash;

  PetscFunctionBegin;
  PetscCheck(!a->assembling, PETSC_COMM_SELF, PETSC_ERR_ORDER, "MatSetValues() was called between MatAssemblyBegin() and MatAssemblyEnd() of this MATDCSRCUDA matrix; call MatAssemblyEnd() first");
  /* every index first, so that a bad one leaves the matrix (and the stash) unchanged */
  for (PetscInt k = 0; k < m; k++) PetscCheck(im[k] < A->rmap->n, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Row %" PetscInt_FMT " is out of range: the matrix has %" PetscInt_FMT " rows (0..%" PetscInt_FMT ")", im[k], A->rmap->n, A->rmap->n - 1);
  for (PetscInt l = 0; l < n; l++) PetscCheck(in[l] < A->cmap->n, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Column %" PetscInt_FMT " is out of range: the matrix has %" PetscInt_FMT " columns (0..%" PetscInt_FMT ")", in[l], A->cmap->n, A->cmap->n - 1);
  PetscCheck(mode == INSERT_VALUES || mode == ADD_VALUES, PETSC_COMM_SELF, PETSC_ERR_SUP, "MATDCSRCUDA takes INSERT_VALUES or ADD_VALUES, not InsertMode %d", (int)mode);
  PetscCheck(!s->n || s->mode == mode, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "Cannot mix INSERT_VALUES and ADD_VALUES in one assembly of a MATDCSRCUDA matrix; call MatAssemblyBegin/End() with MAT_FLUSH_ASSEMBLY in between");
  if (!a->preallocated) PetscCall(DCSRAllocate_Private(A, NULL, PETSC_DEFAULT));
  PetscCall(DCSRCUDAStashGrow_Private(s, (PetscCount)m * n));
  s->mode = mode;
  for (PetscInt k = 0; k < m; k++) {
    if (im[k] < 0) continue;
    for (PetscInt l = 0; l < n; l++) {
      const PetscScalar val = v ? (a->roworiented ? v[(size_t)k * n + l] : v[k + (size_t)l * m]) : 0.0;
      if (in[l] < 0) continue;
      if (a->ignorezero && mode == ADD_VALUES && val == 0.0 && im[k] != in[l]) continue; /* as AIJ: adding zero changes nothing */
      s->i[s->n] = im[k];
      s->j[s->n] = in[l];
      s->v[s->n] = val;
      s->n++;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the stash to the device (only its entries travel) and into the matrix, in chunks that fit the device memory */
static PetscErrorCode DCSRCUDAFlushStash_Private(Mat A)
{
  Mat_SeqDCSR     *a  = (Mat_SeqDCSR *)A->data;
  Mat_SeqDCSRCUDA *cu = (Mat_SeqDCSRCUDA *)a->spdev;
  DCSRCUDAStash   *s  = &cu->stash;
  cudaStream_t     stream;
  size_t           fre = 0, tot = 0;
  PetscCount       chunk, off = 0;
  const size_t     per = 2 * sizeof(PetscInt) + sizeof(PetscScalar);
  PetscInt        *di = NULL, *dj = NULL;
  PetscScalar     *dv = NULL;
  PetscErrorCode   ierr = PETSC_SUCCESS;

  PetscFunctionBegin;
  if (!s->n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(MAT_DCSRCUDA_Insert, A, 0, 0, 0));
  PetscCall(DCSRCUDACopyToGPU_Private(A));
  PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
  PetscCallCUDA(cudaMemGetInfo(&fre, &tot));
  chunk = PetscMin(s->n, PetscMax((PetscCount)(fre / 4 / per), (PetscCount)4096));
  PetscCall(DCSRCUDAPoolMalloc_Private((void **)&di, (size_t)chunk * sizeof(PetscInt), "the uploaded entries"));
  PetscCall(DCSRCUDAPoolMalloc_Private((void **)&dj, (size_t)chunk * sizeof(PetscInt), "the uploaded entries"));
  PetscCall(DCSRCUDAPoolMalloc_Private((void **)&dv, (size_t)chunk * sizeof(PetscScalar), "the uploaded entries"));
  while (off < s->n) {
    const PetscCount nc = PetscMin(chunk, s->n - off);
    PetscCallCUDA(cudaMemcpyAsync(di, s->i + off, (size_t)nc * sizeof(PetscInt), cudaMemcpyHostToDevice, stream));
    PetscCallCUDA(cudaMemcpyAsync(dj, s->j + off, (size_t)nc * sizeof(PetscInt), cudaMemcpyHostToDevice, stream));
    PetscCallCUDA(cudaMemcpyAsync(dv, s->v + off, (size_t)nc * sizeof(PetscScalar), cudaMemcpyHostToDevice, stream));
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)nc * per));
    ierr = DCSRCUDABatch_Private(A, nc, di, dj, dv, 0, 0, s->mode, PETSC_FALSE); /* indices checked by MatSetValues() */
    if (ierr) break;
    off += nc;
  }
  PetscCall(DCSRCUDAPoolFree_Private(di));
  PetscCall(DCSRCUDAPoolFree_Private(dj));
  PetscCall(DCSRCUDAPoolFree_Private(dv));
  if (ierr) { /* the stash is dropped: the error says what went in */
    s->n = 0;
    PetscCall(PetscLogEventEnd(MAT_DCSRCUDA_Insert, A, 0, 0, 0));
    PetscCall(ierr);
  }
  cu->nuploaded += s->n;
  s->n = 0;
  PetscCall(PetscLogEventEnd(MAT_DCSRCUDA_Insert, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAssemblyEnd_SeqDCSRCUDA(Mat A, MatAssemblyType type)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  a->assembling = PETSC_FALSE;
  PetscCall(DCSRCUDAFlushStash_Private(A));
  if (type == MAT_FLUSH_ASSEMBLY) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(MAT_DCSR_Assembly, A, 0, 0, 0));
  PetscCall(DCSRCUDAFinishInsertion_Private(A));
  PetscCall(PetscLogEventEnd(MAT_DCSR_Assembly, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   MatDCSRSetValuesCOODevice(), MatDCSRDefragment(), MatDCSRGetInfo() on the device
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode DCSRCUDACheckDevicePointer_Private(const void *p, const char *name)
{
  cudaPointerAttributes at;
  cudaError_t           err;

  PetscFunctionBegin;
  err = cudaPointerGetAttributes(&at, p);
  if (err != cudaSuccess) { /* not a pointer CUDA knows */
    (void)cudaGetLastError();
    at.type = cudaMemoryTypeUnregistered;
  }
  PetscCheck(at.type == cudaMemoryTypeDevice || at.type == cudaMemoryTypeManaged, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "MatDCSRSetValuesCOODevice(): %s is not device memory (a host pointer?); pass arrays from cudaMalloc(), or use MatSetValues() for host arrays", name);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDCSRSetValuesCOODevice_SeqDCSRCUDA(Mat A, PetscCount n, const PetscInt i[], const PetscInt j[], const PetscScalar v[], InsertMode mode)
{
  Mat_SeqDCSR     *a  = (Mat_SeqDCSR *)A->data;
  Mat_SeqDCSRCUDA *cu = (Mat_SeqDCSRCUDA *)a->spdev;
  PetscErrorCode   ierr;

  PetscFunctionBegin;
  PetscCheck(!a->assembling, PETSC_COMM_SELF, PETSC_ERR_ORDER, "MatDCSRSetValuesCOODevice() was called between MatAssemblyBegin() and MatAssemblyEnd(); call MatAssemblyEnd() first");
  PetscCheck(!cu->stash.n, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "MatDCSRSetValuesCOODevice(): %" PetscCount_FMT " entries set with MatSetValues() wait for MatAssemblyEnd(); assemble the matrix first", cu->stash.n);
  if (n) {
    PetscCall(DCSRCUDACheckDevicePointer_Private(i, "i"));
    PetscCall(DCSRCUDACheckDevicePointer_Private(j, "j"));
    if (v) PetscCall(DCSRCUDACheckDevicePointer_Private(v, "v"));
    PetscCallCUDA(cudaDeviceSynchronize()); /* the arrays may have been written on any stream (PETSc's is non-blocking) */
  }
  PetscCall(PetscLogEventBegin(MAT_DCSRCUDA_Insert, A, 0, 0, 0));
  ierr = DCSRCUDABatch_Private(A, n, i, j, v, A->rmap->rstart, A->cmap->rstart, mode, PETSC_TRUE);
  PetscCall(PetscLogEventEnd(MAT_DCSRCUDA_Insert, A, 0, 0, 0)); /* balanced also when the batch was refused */
  PetscCall(ierr);
  PetscCall(DCSRCUDAFinishInsertion_Private(A));
  PetscCall(PetscObjectStateIncrease((PetscObject)A));
  A->assembled = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDCSRDefragment_SeqDCSRCUDA(Mat A)
{
  Mat_SeqDCSR *a = (Mat_SeqDCSR *)A->data;

  PetscFunctionBegin;
  if (!a->preallocated) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DCSRCUDACopyToGPU_Private(A));
  PetscCall(DCSRCUDADefrag_Private(A, NULL));
  PetscCall(GpukitTwinDeviceWritten(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDCSRGetInfo_SeqDCSRCUDA(Mat A, PetscInt *K, PetscInt *maxseg, PetscCount *used, PetscCount *cap)
{
  Mat_SeqDCSR     *a  = (Mat_SeqDCSR *)A->data;
  Mat_SeqDCSRCUDA *cu = (Mat_SeqDCSRCUDA *)a->spdev;

  PetscFunctionBegin;
  if (K) *K = a->K;
  if (A->offloadmask == PETSC_OFFLOAD_GPU || A->offloadmask == PETSC_OFFLOAD_BOTH) { /* from the device: no copy of the matrix */
    int          mx = 0;
    long long    nmulti, live;
    cudaStream_t stream;
    if (maxseg) {
      PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
      cu->dhintok = PETSC_FALSE; /* set again only when the statistics came back */
      PetscCallCUDA(GpukitDCSRSegmentStats(&cu->d, NULL, NULL, (double)a->defragslack, &cu->dhint, &mx, &nmulti, &live, stream));
      cu->dhintok  = PETSC_TRUE;
      cu->dhintver = cu->structver;
      DCSRCUDASetSingle_Private(cu, mx <= 1 ? 1 : 0);
      *maxseg = mx;
    }
    if (used) *used = cu->d.used;
    if (cap) *cap = cu->d.cap;
  } else {
    if (maxseg) {
      *maxseg = 0;
      if (a->preallocated)
        for (PetscInt r = 0; r < a->m; r++) *maxseg = PetscMax(*maxseg, a->nseg[r]);
    }
    if (used) *used = a->used;
    if (cap) *cap = a->cap;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Products
   ------------------------------------------------------------------------------------------------------ */

/* are all the given vectors (NULL ones skipped) CUDA vectors; if not, say once that the host code runs */
static PetscErrorCode DCSRCUDAVecsOnDevice_Private(Mat A, const char op[], PetscInt n, const Vec vecs[], PetscBool *ok)
{
  Mat_SeqDCSRCUDA *cu = DCSRCUDAGet(A);

  PetscFunctionBegin;
  *ok = PETSC_TRUE;
  for (PetscInt i = 0; i < n && *ok; i++) {
    PetscBool iscuda;
    if (!vecs[i]) continue;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)vecs[i], &iscuda, VECSEQCUDA, VECMPICUDA, ""));
    if (!iscuda) {
      *ok = PETSC_FALSE;
      if (!cu->told_vec) {
        PetscCall(PetscInfo(A, "%s with a vector of type %s: running the host code; use VECCUDA vectors (MatCreateVecs()) to stay on the GPU\n", op, ((PetscObject)vecs[i])->type_name));
        cu->told_vec = PETSC_TRUE;
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DCSRCUDAFreeBins_Private(Mat_SeqDCSRCUDA *cu)
{
  PetscFunctionBegin;
  if (cu->perm) PetscCallCUDA(cudaFree(cu->perm));
  if (cu->rowst) PetscCallCUDA(cudaFree(cu->rowst));
  if (cu->rowln) PetscCallCUDA(cudaFree(cu->rowln));
  if (cu->lchunk) PetscCallCUDA(cudaFree(cu->lchunk));
  if (cu->lcount) PetscCallCUDA(cudaFree(cu->lcount));
  if (cu->lpart) PetscCallCUDA(cudaFree(cu->lpart));
  cu->lcount      = NULL;
  cu->perm        = NULL;
  cu->rowst       = NULL;
  cu->rowln       = NULL;
  cu->permm       = 0;
  cu->lchunk      = NULL;
  cu->lpart       = NULL;
  cu->nchunk      = 0;
  cu->lchunkalloc = 0;
  cu->lpartalloc  = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the rows binned by length for the current structure (rebuilt only when the structure changed) */
static PetscErrorCode DCSRCUDABins_Private(Mat A, cudaStream_t stream)
{
  Mat_SeqDCSRCUDA *cu = DCSRCUDAGet(A);

  PetscFunctionBegin;
  if (cu->perm && cu->binver == cu->structver && cu->permm == cu->d.m) {
    if (cu->rowtablestale) PetscCallCUDA(GpukitDCSRRowTable(&cu->d, cu->perm, cu->rowst, cu->rowln, stream)); /* deferred by a defragmentation */
    cu->rowtablestale = PETSC_FALSE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  cu->rowtablestale = PETSC_FALSE; /* the binning below writes the table */
  if (cu->permm != cu->d.m || !cu->perm) {
    PetscCall(DCSRCUDAFreeBins_Private(cu));
    PetscCall(DCSRCUDAMalloc_Private((void **)&cu->perm, (size_t)cu->d.m * sizeof(int), "the product's row bins"));
    PetscCall(DCSRCUDAMalloc_Private((void **)&cu->rowst, (size_t)cu->d.m * sizeof(int), "the product's row table"));
    PetscCall(DCSRCUDAMalloc_Private((void **)&cu->rowln, (size_t)cu->d.m * sizeof(int), "the product's row table"));
    cu->permm = cu->d.m;
  }
  PetscCallCUDA(GpukitDCSRBinRows(&cu->d, (long long)cu->longrow, cu->perm, cu->rowst, cu->rowln, cu->binstart, &cu->maxlen, &cu->nnz, stream));
  PetscCall(PetscLogGpuToCpu((PetscLogDouble)sizeof(long long) * (GPUKIT_DCSR_NBINS_ALL + 2)));
  { /* the long bin split by entries: chunks of GPUKIT_DCSR_LONG_CHUNK, a block each */
    const long long nlong = cu->binstart[GPUKIT_DCSR_NBINS_ALL] - cu->binstart[GPUKIT_DCSR_NBINS];
    cu->nchunk            = 0;
    if (nlong > 0) {
      if (nlong + 1 > cu->lchunkalloc) {
        if (cu->lchunk) PetscCallCUDA(cudaFree(cu->lchunk));
        if (cu->lcount) PetscCallCUDA(cudaFree(cu->lcount));
        cu->lchunk      = NULL;
        cu->lcount      = NULL;
        cu->lchunkalloc = 0;
        PetscCall(DCSRCUDAMalloc_Private((void **)&cu->lchunk, (size_t)(nlong + 1) * sizeof(int), "the product's long-row chunks"));
        PetscCall(DCSRCUDAMalloc_Private((void **)&cu->lcount, (size_t)(nlong + 1) * sizeof(int), "the product's long-row chunks"));
        PetscCallCUDA(cudaMemsetAsync(cu->lcount, 0, (size_t)(nlong + 1) * sizeof(int), stream));
        cu->lchunkalloc = nlong + 1;
      }
      PetscCallCUDA(GpukitDCSRLongChunks(&cu->d, nlong, cu->perm + cu->binstart[GPUKIT_DCSR_NBINS], cu->lchunk, &cu->nchunk, stream));
      PetscCall(PetscLogGpuToCpu(sizeof(int)));
      if (cu->nchunk > cu->lpartalloc) {
        if (cu->lpart) PetscCallCUDA(cudaFree(cu->lpart));
        cu->lpart      = NULL;
        cu->lpartalloc = 0;
        PetscCall(DCSRCUDAMalloc_Private((void **)&cu->lpart, (size_t)cu->nchunk * sizeof(double), "the product's long-row partial sums"));
        cu->lpartalloc = cu->nchunk;
      }
    }
  }
  cu->binver = cu->structver;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DCSRCUDAFreeRowsView_Private(Mat_SeqDCSRCUDA *cu)
{
  PetscFunctionBegin;
  if (cu->rowsview) PetscCallCUDA(cudaFree(cu->rowsview));
  cu->rowsview  = NULL;
  cu->rowsviewm = 0;
  cu->viewver   = -1;
  cu->viewok    = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* whether the product may choose the rows kernel: forced, or tuned among the others (-mat_dcsr_cuda_mult_kernel
   binned or fused, or auto without the tuner (fused), never build its view) */
static inline PetscBool DCSRCUDARowsWanted_Private(const Mat_SeqDCSRCUDA *cu)
{
  return (PetscBool)(cu->multkernel == DCSR_MULT_ROWS || (cu->multkernel == DCSR_MULT_AUTO && cu->autotune));
}

/* the rows kernel's row-order view for the current structure; *ok: the kernel applies (every row has at most one
   segment, the buffer at most INT_MAX slots) and may be chosen. Evaluated once per structure version; the rebuild is
   one kernel with no synchronisation when the code that changed the structure told whether every row has one segment
   (upload, defragmentation, batches, the assembly's statistics: DCSRCUDASetSingle_Private()), else it reads back one
   flag */
static PetscErrorCode DCSRCUDARowsView_Private(Mat A, cudaStream_t stream, PetscBool *ok)
{
  Mat_SeqDCSRCUDA *cu     = DCSRCUDAGet(A);
  const PetscInt   single = DCSRCUDAGetSingle_Private(cu);
  int              multi  = 0;

  PetscFunctionBegin;
  *ok = PETSC_FALSE;
  if (!DCSRCUDARowsWanted_Private(cu) || cu->d.m <= 0 || cu->d.cap > (long long)INT_MAX) PetscFunctionReturn(PETSC_SUCCESS);
  if (cu->viewver == cu->structver && (!cu->viewok || cu->rowsviewm == cu->d.m)) {
    *ok = cu->viewok;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  cu->viewok = PETSC_FALSE;
  if (single == 0) { /* some row has several segments: the other kernels */
    cu->viewver = cu->structver;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (cu->rowsviewm != cu->d.m || !cu->rowsview) {
    PetscCall(DCSRCUDAFreeRowsView_Private(cu));
    PetscCall(DCSRCUDAMalloc_Private((void **)&cu->rowsview, (size_t)cu->d.m * sizeof(int2), "the product's row-order view"));
    cu->rowsviewm = cu->d.m;
  }
  if (single == 1) PetscCallCUDA(GpukitDCSRRowsView(&cu->d, cu->rowsview, NULL, stream));
  else {
    PetscCallCUDA(GpukitDCSRRowsView(&cu->d, cu->rowsview, &multi, stream));
    PetscCall(PetscLogGpuToCpu(sizeof(int)));
    DCSRCUDASetSingle_Private(cu, multi ? 0 : 1);
  }
  cu->viewok  = (PetscBool)!multi;
  cu->viewver = cu->structver;
  *ok         = cu->viewok;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the rows kernel's lanes per row when nothing tunes them: about half the mean row length (the kernel keeps two entries
   in flight per lane), a power of two in 1..32 */
static PetscInt DCSRCUDARowsTprGuess_Private(const Mat_SeqDCSRCUDA *cu)
{
  const double mean = cu->d.m > 0 ? (double)cu->nnz / (double)cu->d.m : 0.0;
  PetscInt     t    = 1;

  while (2 * t <= 32 && (double)(2 * t) <= 0.5 * mean) t *= 2;
  return t;
}

static PetscInt DCSRCUDALog2_Private(PetscInt t)
{
  PetscInt l = 0;
  while ((PetscInt)1 << (l + 1) <= t) l++;
  return l;
}

static PetscErrorCode DCSRCUDATunersDestroy_Private(Mat_SeqDCSRCUDA *cu)
{
  PetscFunctionBegin;
  PetscCall(GpukitTunerDestroy(&cu->tuner));
  PetscCall(GpukitTunerDestroy(&cu->tunerrows));
  for (PetscInt b = 0; b < DCSR_BASE_NBUCKETS; b++) PetscCall(GpukitTunerDestroy(&cu->tunerbase[b]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the product's tuners: knobs kernel (categorical), tpr0..tpr2 (threads per row of bins 0..2 of the binned and fused
   kernels); none with -mat_dcsr_autotune false. tpr3 (bin 3: rows of 257..longrow, empty with the default longrow 256) is
   not tuned. Two tuners, both "dcsr_mult2": cu->tuner while the rows kernel does not apply (kernel: binned | fused, the
   candidates of before, so their cache entries keep their meaning), cu->tunerrows while it applies (kernel: binned |
   fused | rows1 .. rows32, the rows kernel with 1..32 lanes per row: another candidate set, hence another cache key);
   each keeps its choice when the matrix goes from one state to the other. With -mat_dcsr_cuda_mult_kernel rows:
   rows1 .. rows32 only (the binned kernels' tpr knobs fixed), or fused where the rows kernel does not apply */
static const char *const DCSRCUDAKernelLabels[] = {"binned", "fused", "rows1", "rows2", "rows4", "rows8", "rows16", "rows32"};

/* the mean row span of the device structure, for the tuners' locality class (GpukitTuneShapeAppendSpan()): without it a
   choice cached for a 3-D stencil was taken for the same matrix under a random permutation */
static PetscErrorCode DCSRCUDAMeanRowSpan_Private(Mat A, PetscReal *span)
{
  Mat_SeqDCSRCUDA *cu = DCSRCUDAGet(A);
  cudaStream_t     stream;
  double           mean;

  PetscFunctionBegin;
  PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
  PetscCallCUDA(GpukitDCSRMeanRowSpan(&cu->d, &mean, stream));
  PetscCall(PetscLogGpuToCpu(sizeof(unsigned long long)));
  *span = (PetscReal)mean;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DCSRCUDATunerSetUp_Private(Mat A, PetscBool rows, GpukitTuner *tuner)
{
  Mat_SeqDCSRCUDA   *cu = DCSRCUDAGet(A);
  GpukitTuneKnob     knobs[GPUKIT_DCSR_NBINS];
  static const char *names[GPUKIT_DCSR_NBINS - 1] = {"tpr0", "tpr1", "tpr2"};
  char               csr[128], shape[256];
  PetscReal          span;
  const PetscInt     nv      = (PetscInt)(sizeof(DCSRCUDATprValues) / sizeof(DCSRCUDATprValues[0]));
  GpukitTuner       *t       = rows ? &cu->tunerrows : &cu->tuner;
  const PetscBool    onlyrow = (PetscBool)(rows && cu->multkernel == DCSR_MULT_ROWS);

  PetscFunctionBegin;
  *tuner = NULL;
  if (!cu->autotune) {
    PetscCall(DCSRCUDATunersDestroy_Private(cu));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (cu->tune_m != cu->d.m) PetscCall(DCSRCUDATunersDestroy_Private(cu));
  if (*t) {
    *tuner = *t;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMemzero(knobs, sizeof(knobs)));
  knobs[0].name = "kernel";
  if (cu->multkernel == DCSR_MULT_AUTO) {
    knobs[0].n = rows ? 2 + DCSR_MULT_NROWST : 2;
    for (PetscInt i = 0; i < knobs[0].n; i++) knobs[0].values[i] = i; /* binned, fused, then rows1..rows32 */
    knobs[0].labels = DCSRCUDAKernelLabels;
    knobs[0].start  = 1; /* fused: another kernel must beat it by the tuner's threshold */
  } else if (onlyrow) {
    knobs[0].n = DCSR_MULT_NROWST;
    for (PetscInt i = 0; i < knobs[0].n; i++) knobs[0].values[i] = DCSR_MULT_ROWS + i;
    knobs[0].labels = DCSRCUDAKernelLabels + DCSR_MULT_ROWS;
    knobs[0].start  = DCSRCUDALog2_Private(DCSRCUDARowsTprGuess_Private(cu));
  } else {
    knobs[0].n         = 1;
    knobs[0].values[0] = cu->multkernel == DCSR_MULT_ROWS ? DCSR_MULT_FUSED : cu->multkernel; /* rows forced where it does not apply: fused */
  }
  for (PetscInt b = 0; b < GPUKIT_DCSR_NBINS - 1; b++) {
    GpukitTuneKnob *k = &knobs[b + 1];
    k->name           = names[b];
    if (cu->fixtpr || onlyrow) { /* the rows kernel does not use them */
      k->n         = 1;
      k->values[0] = cu->tpr[b];
    } else {
      k->n = nv;
      for (PetscInt i = 0; i < nv; i++) k->values[i] = DCSRCUDATprValues[i];
      k->start = DCSRCUDATprStart[b];
    }
  }
  PetscCall(GpukitTuneShapeCSR((PetscInt)cu->d.m, (PetscCount)cu->nnz, (PetscInt)cu->maxlen, csr, sizeof(csr)));
  PetscCall(DCSRCUDAMeanRowSpan_Private(A, &span));
  PetscCall(GpukitTuneShapeAppendSpan(span, csr, sizeof(csr)));
  PetscCall(PetscSNPrintf(shape, sizeof(shape), "K%d.L%d.%s", cu->d.K, (int)PetscMin(cu->longrow, 999999), csr));
  PetscCall(GpukitTunerCreate((PetscObject)A, "dcsr_mult2", GPUKIT_DCSR_NBINS, knobs, t));
  PetscCall(GpukitTunerSetShape(*t, shape));
  PetscCall(GpukitTunerSetDevice(*t, PETSC_TRUE));
  cu->tune_m = cu->d.m;
  *tuner     = *t;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the base rows kernel's table of the base's rows longer than longrow, for the current base (one synchronisation, once
   per base: after a defragmentation, an upload or a duplicate) */
static PetscErrorCode DCSRCUDABaseLong_Private(Mat A, cudaStream_t stream)
{
  Mat_SeqDCSRCUDA *cu   = DCSRCUDAGet(A);
  int             *work = NULL;
  long long        nlong, nchunk;
  PetscErrorCode   ierr;

  PetscFunctionBegin;
  if (cu->blongok && cu->blong.longrow == (long long)cu->longrow) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DCSRCUDAPoolMalloc_Private((void **)&work, 4 * ((size_t)cu->d.m + 1) * sizeof(int), "the long base rows' scans"));
  ierr = GpukitDCSRBaseLongCount(cu->d.m, cu->baserow, (long long)cu->longrow, work, &nlong, &nchunk, stream) ? PETSC_ERR_LIB : PETSC_SUCCESS;
  if (!ierr) ierr = PetscLogGpuToCpu(2 * sizeof(int));
  if (!ierr && nlong + 1 > cu->blongalloc) { /* lrow, lst, lln, lchunk, lcount: one allocation */
    if (cu->blong.lrow) (void)cudaFree(cu->blong.lrow);
    cu->blong.lrow  = NULL;
    cu->blongalloc  = 0;
    ierr            = DCSRCUDAMalloc_Private((void **)&cu->blong.lrow, 5 * ((size_t)nlong + 1) * sizeof(int), "the long base rows' table");
    if (!ierr) cu->blongalloc = nlong + 1;
  }
  if (!ierr && nchunk > cu->blongpartalloc) {
    if (cu->blong.lpart) (void)cudaFree(cu->blong.lpart);
    cu->blong.lpart    = NULL;
    cu->blongpartalloc = 0;
    ierr               = DCSRCUDAMalloc_Private((void **)&cu->blong.lpart, (size_t)nchunk * sizeof(double), "the long base rows' partial sums");
    if (!ierr) cu->blongpartalloc = nchunk;
  }
  if (!ierr) {
    const size_t a    = (size_t)cu->blongalloc;
    cu->blong.lst     = cu->blong.lrow + a;
    cu->blong.lln     = cu->blong.lst + a;
    cu->blong.lchunk  = cu->blong.lln + a;
    cu->blong.lcount  = cu->blong.lchunk + a;
    cu->blong.longrow = (long long)cu->longrow;
    cu->blong.nlong   = nlong;
    cu->blong.nchunk  = nchunk;
    ierr              = GpukitDCSRBaseLongFill(cu->d.m, cu->baserow, work, &cu->blong, stream) ? PETSC_ERR_LIB : PETSC_SUCCESS;
  }
  PetscCall(DCSRCUDAPoolFree_Private(work));
  PetscCheck(!ierr, PETSC_COMM_SELF, ierr, "MATDCSRCUDA: the table of the CSR base's long rows could not be built");
  cu->blongok = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the base product's tuners ("dcsr_base", knob kernel: cusparse | stream), one per bucket of the fraction of the rows
   marked since the base (none, at most 1/16, 1/8, more: the fix-up's share of the work changes the best choice); none
   without -mat_dcsr_autotune or with a product forced */
static const char *const DCSRCUDABaseLabels[] = {"cusparse", "stream"}; /* labels[i] names values[i] */

static PetscInt DCSRCUDABaseBucket_Private(const Mat_SeqDCSRCUDA *cu)
{
  if (cu->ndirtyub <= 0) return 0;
  if (16 * cu->ndirtyub <= (long long)cu->d.m) return 1;
  if (8 * cu->ndirtyub <= (long long)cu->d.m) return 2;
  return 3;
}

/* whether an entry count moved by more than 1/16 from the one a tuning was made at */
static inline PetscBool DCSRCUDADrifted_Private(long long nnz, long long ref)
{
  return (PetscBool)(16 * (nnz > ref ? nnz - ref : ref - nnz) > ref);
}

static PetscErrorCode DCSRCUDABaseTunerSetUp_Private(Mat A, GpukitTuner *tuner)
{
  Mat_SeqDCSRCUDA   *cu = DCSRCUDAGet(A);
  const Mat_SeqDCSR *a  = (const Mat_SeqDCSR *)A->data;
  const PetscInt     bk = DCSRCUDABaseBucket_Private(cu);
  GpukitTuneKnob     knob;
  char               csr[128], shape[256];

  PetscFunctionBegin;
  *tuner = NULL;
  if (!cu->autotune || cu->baseprod != DCSR_BASE_AUTO) PetscFunctionReturn(PETSC_SUCCESS);
  if (cu->tune_m != cu->d.m) PetscCall(DCSRCUDATunersDestroy_Private(cu));
  if (cu->tunerbase[bk]) {
    /* a tuner that has chosen keeps its choice while the operator changes (GpukitTunerBegin() compares the state only
       while it searches): a base whose entries drifted by more than 1/16 since (new entries defragmented in, e.g. at
       random columns) is another operator, with another shape key; measured on stencil7 at scale 3 (H100): the choice
       of the assembled matrix, the stream kernel, ran at 0.81x aijcusparse after 10% new entries */
    const long long z0 = cu->tunerbasennz[bk], z = cu->basennz;
    if (!DCSRCUDADrifted_Private(z, z0)) {
      *tuner = cu->tunerbase[bk];
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(PetscInfo(A, "gpukit: MATDCSRCUDA the CSR base has %lld entries, its product was tuned (marked-rows bucket %d) at %lld: tuned again\n", z, (int)bk, z0));
    PetscCall(GpukitTunerDestroy(&cu->tunerbase[bk]));
  }
  PetscCall(PetscMemzero(&knob, sizeof(knob)));
  knob.name      = "kernel";
  knob.n         = 2;
  knob.values[0] = DCSR_BASE_CUSPARSE;
  knob.values[1] = DCSR_BASE_STREAM;
  knob.labels    = DCSRCUDABaseLabels;
  knob.start     = 0; /* cuSPARSE: the stream kernel must beat it by the tuner's threshold */
  /* the key leaves the longest row out (x-1): the bins that count it are not built on the base path, so their count would
     make the key depend on the matrix's history */
  PetscCall(GpukitTuneShapeCSR((PetscInt)cu->d.m, (PetscCount)a->nz, 0, csr, sizeof(csr)));
  { /* the base's rows: its row pointers and the columns (each base row is sorted) */
    cudaStream_t stream;
    PetscReal    span;

    PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
    PetscCall(GpukitCSRMeanRowSpan((PetscInt)cu->d.m, cu->baserow, cu->d.colidx, stream, &span));
    PetscCall(GpukitTuneShapeAppendSpan(span, csr, sizeof(csr)));
  }
  PetscCall(PetscSNPrintf(shape, sizeof(shape), "K%d.L%d.base%d.%s", cu->d.K, (int)PetscMin(cu->longrow, 999999), (int)bk, csr));
  PetscCall(GpukitTunerCreate((PetscObject)A, "dcsr_base", 1, &knob, &cu->tunerbase[bk]));
  cu->tunerbasennz[bk] = cu->basennz;
  PetscCall(GpukitTunerSetShape(cu->tunerbase[bk], shape));
  PetscCall(GpukitTunerSetDevice(cu->tunerbase[bk], PETSC_TRUE));
  cu->tune_m = cu->d.m;
  *tuner     = cu->tunerbase[bk];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the tuners' operator state: moved when the entry count drifts by more than 1/16 from where the current search began */
static void DCSRCUDATuneState_Private(Mat_SeqDCSRCUDA *cu, long long nnz)
{
  if (cu->tunennz <= 0 || DCSRCUDADrifted_Private(nnz, cu->tunennz)) {
    cu->tunestate++;
    cu->tunennz = nnz;
  }
}

/* the device arrays of an output z = y + ... (y NULL: z is only written; y == z: read and written) */
static PetscErrorCode DCSRCUDAGetOutArrays_Private(Vec y, Vec z, const PetscScalar **ya, PetscScalar **za)
{
  PetscFunctionBegin;
  *ya = NULL;
  if (!y) PetscCall(VecCUDAGetArrayWrite(z, za));
  else if (y == z) {
    PetscCall(VecCUDAGetArray(z, za));
    *ya = *za;
  } else {
    PetscCall(VecCUDAGetArrayRead(y, ya));
    PetscCall(VecCUDAGetArrayWrite(z, za));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DCSRCUDARestoreOutArrays_Private(Vec y, Vec z, const PetscScalar **ya, PetscScalar **za)
{
  PetscFunctionBegin;
  if (!y) PetscCall(VecCUDARestoreArrayWrite(z, za));
  else if (y == z) PetscCall(VecCUDARestoreArray(z, za));
  else {
    PetscCall(VecCUDARestoreArrayRead(y, ya));
    PetscCall(VecCUDARestoreArrayWrite(z, za));
  }
  *ya = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* z = A x, or z = y + A x when y is not NULL (y may be z) */
static PetscErrorCode MatMultAdd_SeqDCSRCUDA_Private(Mat A, Vec x, Vec y, Vec z)
{
  Mat_SeqDCSRCUDA   *cu      = DCSRCUDAGet(A);
  Vec                vecs[3] = {x, y, z};
  PetscBool          ok;
  const PetscScalar *xa, *ya = NULL;
  PetscScalar       *za;
  cudaStream_t       stream;
  const PetscInt    *cfg;
  PetscInt           nlaunch;
  int                tpr[GPUKIT_DCSR_NBINS], kernel, lanes = 1;
  PetscBool          rowsok;
  GpukitTuner        tuner;

  PetscFunctionBegin;
  PetscCall(DCSRCUDAVecsOnDevice_Private(A, y ? "MatMultAdd" : "MatMult", 3, vecs, &ok));
  if (!ok) {
    if (y) PetscCall((*cu->twin.hostops.multadd)(A, x, y, z));
    else PetscCall((*cu->twin.hostops.mult)(A, x, z));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(DCSRCUDACopyToGPU_Private(A));
  PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
  PetscCall(PetscLogEventBegin(MAT_DCSRCUDA_Mult, A, x, z, 0));
  if (cu->multkernel == DCSR_MULT_AUTO && DCSRCUDABaseValid_Private(cu) && (double)cu->ndirtyub <= (double)cu->basemaxdirty * (double)cu->d.m) {
    /* the CSR base: cuSPARSE, then the marked rows (fix-up); or the base stream kernel, which does both in one launch */
    const Mat_SeqDCSR *a = (const Mat_SeqDCSR *)A->data;
    /* the fix-up's lanes per marked row: about two entries a lane of what the rows got since the base (their new
       segments, mostly a few entries: one lane per row then, so that a warp has 32 rows' loads in flight); at most 8
       (rows with long tails go to a whole warp each) */
    const double tail = cu->ndirtyub > 0 ? (double)PetscMax((PetscCount)0, a->nz - (PetscCount)cu->basennz) / (double)cu->ndirtyub : 0.0;
    int          t    = 1;
    PetscInt     prod = cu->baseprod == DCSR_BASE_STREAM ? DCSR_BASE_STREAM : DCSR_BASE_CUSPARSE; /* without the tuner */
    PetscBool    searching = PETSC_FALSE;

    while (2 * t <= 8 && (double)(2 * t) <= 0.5 * tail) t *= 2;
    PetscCall(DCSRCUDABaseTunerSetUp_Private(A, &tuner));
    if (tuner) {
      PetscBool done;
      PetscCall(GpukitTunerGetConfig(tuner, &cfg, &done));
      searching = (PetscBool)!done;
      if (searching || cfg[0] == DCSR_BASE_STREAM) PetscCall(DCSRCUDABaseLong_Private(A, stream)); /* a candidate, or the choice, needs it */
    } else if (prod == DCSR_BASE_STREAM) PetscCall(DCSRCUDABaseLong_Private(A, stream));
    PetscCall(VecCUDAGetArrayRead(x, &xa));
    PetscCall(DCSRCUDAGetOutArrays_Private(y, z, &ya, &za));
    if (tuner) {
      /* a search times cuSPARSE after its analysis, as it runs once chosen (the analysis comes at the 4th product of a
         base otherwise: before it, ALG1 is slower on irregular rows and lost where it wins after) */
      if (searching && cu->basennz > 0) PetscCall(GpukitCSRSpMVAnalyse(&cu->csrmv, cu->d.m, cu->d.n, (PetscCount)cu->basennz, cu->baserow, cu->d.colidx, cu->d.values, xa, za, stream));
      DCSRCUDATuneState_Private(cu, (long long)a->nz);
      PetscCall(GpukitTunerSetRepeatable(tuner, (PetscBool)!(y && y == z)));
      PetscCall(GpukitTunerBegin(tuner, cu->tunestate, (void *)stream, &cfg, &nlaunch));
      prod = cfg[0];
    } else nlaunch = 1;
    PetscCall(PetscLogGpuTimeBegin());
    for (PetscInt l = 0; l < nlaunch; l++) {
      if (prod == DCSR_BASE_STREAM) PetscCallCUDA(GpukitDCSRMultBaseStreamCUDA(&cu->d, cu->baserow, cu->basedirty, cu->basetpiece, &cu->blong, xa, ya, za, stream));
      else {
        if (cu->basennz > 0) PetscCall(GpukitCSRSpMVApply(&cu->csrmv, cu->d.m, cu->d.n, (PetscCount)cu->basennz, cu->baserow, cu->d.colidx, cu->d.values, xa, ya, za, stream));
        else if (!ya) PetscCallCUDA(cudaMemsetAsync(za, 0, (size_t)cu->d.m * sizeof(double), stream));
        else if (ya != za) PetscCallCUDA(cudaMemcpyAsync(za, ya, (size_t)cu->d.m * sizeof(double), cudaMemcpyDeviceToDevice, stream));
        if (cu->ndirtyub > 0) PetscCallCUDA(GpukitDCSRBaseFixup(&cu->d, cu->baserow, cu->basetrow, cu->basetpiece, cu->basecount, cu->ndirtyub, t, xa, za, stream));
      }
      if (tuner) PetscCall(GpukitTunerMark(tuner));
    }
    PetscCall(PetscLogGpuTimeEnd());
    if (tuner) PetscCall(GpukitTunerEnd(tuner));
    cu->lastkernel = DCSR_MULT_CSRBASE;
    cu->lasttpr    = prod == DCSR_BASE_STREAM ? DCSR_BASE_STREAM_CODE : 0;
    PetscCall(DCSRCUDARestoreOutArrays_Private(y, z, &ya, &za));
    PetscCall(VecCUDARestoreArrayRead(x, &xa));
    PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)a->nz));
    PetscCall(PetscLogEventEnd(MAT_DCSRCUDA_Mult, A, x, z, 0));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(DCSRCUDABins_Private(A, stream));
  PetscCall(DCSRCUDARowsView_Private(A, stream, &rowsok)); /* the rows kernel applies: every row has at most one segment */
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  PetscCall(DCSRCUDAGetOutArrays_Private(y, z, &ya, &za));
  PetscCall(DCSRCUDATunerSetUp_Private(A, rowsok, &tuner));
  if (tuner) { /* z = z + A x (y == z) must run once; any other product may be repeated while it is timed */
    /* the samples of a search stay comparable while nnz is within 1/16 of where it started: with the nonzero state a
       search restarted at every batch of new entries, so with a few products between batches it never ended and every
       product was a timed call (cu->nnz is current: the bins were refreshed above) */
    DCSRCUDATuneState_Private(cu, cu->nnz);
    PetscCall(GpukitTunerSetRepeatable(tuner, (PetscBool)!(y && y == z)));
    PetscCall(GpukitTunerBegin(tuner, cu->tunestate, (void *)stream, &cfg, &nlaunch));
  } else {
    cfg     = NULL;
    nlaunch = 1;
  }
  if (tuner) { /* cfg: kernel (DCSR_MULT_ROWS + log2(lanes) for the rows kernel), tpr0..tpr2 */
    kernel = (int)cfg[0];
    for (PetscInt b = 0; b < GPUKIT_DCSR_NBINS - 1; b++) tpr[b] = (int)cfg[b + 1];
  } else {
    kernel = cu->multkernel == DCSR_MULT_AUTO ? DCSR_MULT_FUSED : (int)cu->multkernel;
    if (kernel == DCSR_MULT_ROWS) kernel = rowsok ? DCSR_MULT_ROWS + (int)DCSRCUDALog2_Private(DCSRCUDARowsTprGuess_Private(cu)) : DCSR_MULT_FUSED;
    for (PetscInt b = 0; b < GPUKIT_DCSR_NBINS - 1; b++) tpr[b] = (int)cu->tpr[b];
  }
  tpr[GPUKIT_DCSR_NBINS - 1] = (int)cu->tpr[GPUKIT_DCSR_NBINS - 1];
  PetscCheck(kernel < DCSR_MULT_ROWS || (rowsok && kernel < DCSR_MULT_ROWS + DCSR_MULT_NROWST), PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATDCSRCUDA: the rows kernel (%d) chosen where it does not apply", kernel);
  if (kernel >= DCSR_MULT_ROWS) lanes = 1 << (kernel - DCSR_MULT_ROWS);
  PetscCall(PetscLogGpuTimeBegin());
  for (PetscInt l = 0; l < nlaunch; l++) {
    if (kernel >= DCSR_MULT_ROWS) PetscCallCUDA(GpukitDCSRMultRowsCUDA(&cu->d, cu->rowsview, lanes, (long long)cu->longrow, cu->perm, cu->rowst, cu->rowln, cu->binstart, cu->lchunk, cu->nchunk, cu->lpart, cu->lcount, xa, ya, za, stream));
    else if (kernel == DCSR_MULT_FUSED) PetscCallCUDA(GpukitDCSRMultFusedCUDA(&cu->d, cu->perm, cu->rowst, cu->rowln, cu->binstart, tpr, cu->lchunk, cu->nchunk, cu->lpart, cu->lcount, xa, ya, za, stream));
    else PetscCallCUDA(GpukitDCSRMultCUDA(&cu->d, cu->perm, cu->rowst, cu->rowln, cu->binstart, tpr, cu->lchunk, cu->nchunk, cu->lpart, xa, ya, za, stream));
    if (tuner) PetscCall(GpukitTunerMark(tuner));
  }
  PetscCall(PetscLogGpuTimeEnd());
  if (tuner) PetscCall(GpukitTunerEnd(tuner));
  cu->lastkernel = kernel >= DCSR_MULT_ROWS ? DCSR_MULT_ROWS : kernel;
  cu->lasttpr    = kernel >= DCSR_MULT_ROWS ? lanes : 0;
  PetscCall(DCSRCUDARestoreOutArrays_Private(y, z, &ya, &za));
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)cu->nnz));
  PetscCall(PetscLogEventEnd(MAT_DCSRCUDA_Mult, A, x, z, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_SeqDCSRCUDA(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultAdd_SeqDCSRCUDA_Private(A, x, NULL, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultAdd_SeqDCSRCUDA(Mat A, Vec x, Vec y, Vec z)
{
  PetscFunctionBegin;
  PetscCall(MatMultAdd_SeqDCSRCUDA_Private(A, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* z = A^T x, or z = y + A^T x */
static PetscErrorCode MatMultTransposeAdd_SeqDCSRCUDA_Private(Mat A, Vec x, Vec y, Vec z)
{
  Mat_SeqDCSRCUDA   *cu      = DCSRCUDAGet(A);
  Vec                vecs[3] = {x, y, z};
  PetscBool          ok;
  const PetscScalar *xa;
  PetscScalar       *za;
  cudaStream_t       stream;

  PetscFunctionBegin;
  PetscCall(DCSRCUDAVecsOnDevice_Private(A, y ? "MatMultTransposeAdd" : "MatMultTranspose", 3, vecs, &ok));
  if (!ok) {
    if (y) PetscCall((*cu->twin.hostops.multtransposeadd)(A, x, y, z));
    else PetscCall((*cu->twin.hostops.multtranspose)(A, x, z));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(DCSRCUDACopyToGPU_Private(A));
  PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
  PetscCall(PetscLogEventBegin(MAT_DCSRCUDA_Mult, A, x, z, 0));
  if (!y) PetscCall(VecSet(z, 0.0));
  else if (y != z) PetscCall(VecCopy(y, z));
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  PetscCall(VecCUDAGetArray(z, &za));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitDCSRMultTransposeAddCUDA(&cu->d, xa, za, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(VecCUDARestoreArray(z, &za));
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)((Mat_SeqDCSR *)A->data)->nz));
  PetscCall(PetscLogEventEnd(MAT_DCSRCUDA_Mult, A, x, z, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTranspose_SeqDCSRCUDA(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultTransposeAdd_SeqDCSRCUDA_Private(A, x, NULL, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTransposeAdd_SeqDCSRCUDA(Mat A, Vec x, Vec y, Vec z)
{
  PetscFunctionBegin;
  PetscCall(MatMultTransposeAdd_SeqDCSRCUDA_Private(A, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Diagonal, scaling, shift, zeroing
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatGetDiagonal_SeqDCSRCUDA(Mat A, Vec d)
{
  Mat_SeqDCSRCUDA *cu = DCSRCUDAGet(A);
  PetscBool        ok;
  PetscScalar     *da;
  cudaStream_t     stream;

  PetscFunctionBegin;
  PetscCall(DCSRCUDAVecsOnDevice_Private(A, "MatGetDiagonal", 1, &d, &ok));
  if (!ok) {
    PetscCall((*cu->twin.hostops.getdiagonal)(A, d));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(DCSRCUDACopyToGPU_Private(A));
  PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
  PetscCall(VecCUDAGetArrayWrite(d, &da));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitDCSRGetDiagonalCUDA(&cu->d, 0, da, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(VecCUDARestoreArrayWrite(d, &da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatScale_SeqDCSRCUDA(Mat A, PetscScalar s)
{
  Mat_SeqDCSRCUDA *cu = DCSRCUDAGet(A);
  cudaStream_t     stream;

  PetscFunctionBegin;
  PetscCall(DCSRCUDACopyToGPU_Private(A));
  PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitDCSRScaleCUDA(&cu->d, s, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops((PetscLogDouble)cu->d.used));
  PetscCall(GpukitTwinDeviceWritten(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A + s I: the diagonal as a device batch of ADD_VALUES (a missing diagonal entry is inserted, as AIJ does) */
static PetscErrorCode MatShift_SeqDCSRCUDA(Mat A, PetscScalar s)
{
  Mat_SeqDCSR  *a  = (Mat_SeqDCSR *)A->data;
  const PetscInt nr = PetscMin(a->m, a->n);
  PetscInt      *di = NULL, *dj = NULL;
  PetscScalar   *dv = NULL;
  cudaStream_t   stream;

  PetscFunctionBegin;
  PetscCall(DCSRCUDACopyToGPU_Private(A));
  if (!nr) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
  PetscCall(DCSRCUDAPoolMalloc_Private((void **)&di, (size_t)nr * sizeof(PetscInt), "the shift's diagonal batch"));
  PetscCall(DCSRCUDAPoolMalloc_Private((void **)&dj, (size_t)nr * sizeof(PetscInt), "the shift's diagonal batch"));
  PetscCall(DCSRCUDAPoolMalloc_Private((void **)&dv, (size_t)nr * sizeof(PetscScalar), "the shift's diagonal batch"));
  PetscCallCUDA(GpukitDCSRFillDiagonalBatchCUDA(nr, 0, 0, s, di, dj, dv, stream));
  PetscCall(PetscLogEventBegin(MAT_DCSRCUDA_Insert, A, 0, 0, 0));
  PetscCall(DCSRCUDABatch_Private(A, nr, di, dj, dv, 0, 0, ADD_VALUES, PETSC_FALSE));
  PetscCall(PetscLogEventEnd(MAT_DCSRCUDA_Insert, A, 0, 0, 0));
  PetscCall(DCSRCUDAPoolFree_Private(di));
  PetscCall(DCSRCUDAPoolFree_Private(dj));
  PetscCall(DCSRCUDAPoolFree_Private(dv));
  PetscCall(DCSRCUDAFinishInsertion_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatZeroEntries_SeqDCSRCUDA(Mat A)
{
  Mat_SeqDCSRCUDA *cu = DCSRCUDAGet(A);
  cudaStream_t     stream;

  PetscFunctionBegin;
  PetscCall(DCSRCUDACopyToGPU_Private(A));
  PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
  if (cu->d.used) PetscCallCUDA(cudaMemsetAsync(cu->d.values, 0, (size_t)cu->d.used * sizeof(double), stream));
  PetscCall(GpukitTwinDeviceWritten(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatDuplicate(): the host type's duplicate (the host copy of A, brought down once if the device is newer), then, when
   A's device structure is valid, B's device structure by device-to-device copies, so that B starts valid on both sides
   and its first device operation uploads nothing (as MATAIJCUSPARSE's duplicate keeps the device copy) */
static PetscErrorCode MatDuplicate_SeqDCSRCUDA(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_SeqDCSR     *a  = (Mat_SeqDCSR *)A->data;
  Mat_SeqDCSRCUDA *cu = DCSRCUDAGet(A);
  const PetscBool  devvalid = (PetscBool)((A->offloadmask == PETSC_OFFLOAD_GPU || A->offloadmask == PETSC_OFFLOAD_BOTH) && cu->d.segstart);
  PetscBool        iscuda;

  PetscFunctionBegin;
  PetscCheck(!cu->stash.n, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "MatDuplicate() of a MATSEQDCSRCUDA matrix with %" PetscCount_FMT " entries waiting for MatAssemblyEnd(): assemble it first", cu->stash.n);
  PetscCall((*cu->twin.hostops.duplicate)(A, op, B));
  PetscCall(PetscObjectTypeCompare((PetscObject)*B, MATSEQDCSRCUDA, &iscuda));
  if (!iscuda) PetscFunctionReturn(PETSC_SUCCESS);
  {
    Mat_SeqDCSR     *b  = (Mat_SeqDCSR *)(*B)->data;
    Mat_SeqDCSRCUDA *cb = DCSRCUDAGet(*B);
    const size_t     mk = (size_t)a->m * (size_t)a->K;
    cudaStream_t     stream;

    for (PetscInt k = 0; k < GPUKIT_DCSR_NBINS; k++) cb->tpr[k] = cu->tpr[k];
    cb->fixtpr     = cu->fixtpr;
    cb->autotune   = cu->autotune;
    cb->longrow    = cu->longrow;
    cb->trim       = cu->trim;
    cb->keepspare  = cu->keepspare;
    cb->multkernel = cu->multkernel;
    cb->usebase    = cu->usebase;
    cb->basemaxdirty = cu->basemaxdirty;
    cb->baseprod     = cu->baseprod;
    /* the device copy only when B's host storage is A's device structure, size for size */
    if (!devvalid || !b->preallocated || b->m != cu->d.m || b->K != cu->d.K || b->cap != cu->d.cap || b->used != cu->d.used) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(GpukitCUDAGetStream(DCSRCUDA_WHO, &stream));
    PetscCall(DCSRCUDAAllocDev_Private(*B));
    if (mk) {
      PetscCallCUDA(cudaMemcpyAsync(cb->d.segstart, cu->d.segstart, mk * sizeof(long long), cudaMemcpyDeviceToDevice, stream));
      PetscCallCUDA(cudaMemcpyAsync(cb->d.seglen, cu->d.seglen, mk * sizeof(int), cudaMemcpyDeviceToDevice, stream));
      PetscCallCUDA(cudaMemcpyAsync(cb->d.segcap, cu->d.segcap, mk * sizeof(int), cudaMemcpyDeviceToDevice, stream));
    }
    if (a->m) {
      PetscCallCUDA(cudaMemcpyAsync(cb->d.nseg, cu->d.nseg, (size_t)a->m * sizeof(int), cudaMemcpyDeviceToDevice, stream));
      PetscCallCUDA(cudaMemcpyAsync(cb->d.rowlen, cu->d.rowlen, (size_t)a->m * sizeof(int), cudaMemcpyDeviceToDevice, stream));
    }
    if (cu->d.used) {
      PetscCallCUDA(cudaMemcpyAsync(cb->d.colidx, cu->d.colidx, (size_t)cu->d.used * sizeof(int), cudaMemcpyDeviceToDevice, stream));
      if (op == MAT_COPY_VALUES) PetscCallCUDA(cudaMemcpyAsync(cb->d.values, cu->d.values, (size_t)cu->d.used * sizeof(double), cudaMemcpyDeviceToDevice, stream));
      else PetscCallCUDA(cudaMemsetAsync(cb->d.values, 0, (size_t)cu->d.used * sizeof(double), stream)); /* as the host copy: zeros */
    }
    PetscCallCUDA(cudaMemcpyAsync(cb->d.dused, cu->d.dused, sizeof(unsigned long long), cudaMemcpyDeviceToDevice, stream));
    cb->d.used = cu->d.used;
    cb->structver++;
    DCSRCUDASetSingle_Private(cb, DCSRCUDAGetSingle_Private(cu));
    if (DCSRCUDABaseValid_Private(cu) && cb->usebase) { /* the same layout: the same CSR base and marks */
      PetscCall(DCSRCUDABaseArrays_Private(*B, stream));
      PetscCallCUDA(cudaMemcpyAsync(cb->baserow, cu->baserow, ((size_t)2 * a->m + 2) * sizeof(int), cudaMemcpyDeviceToDevice, stream));
      if (cu->basetpiece && cu->ndirtyub > 0) {
        PetscCall(DCSRCUDABaseTable_Private(cb));
        PetscCallCUDA(cudaMemcpyAsync(cb->basetpiece, cu->basetpiece, (size_t)a->m * (sizeof(int4) + sizeof(int)), cudaMemcpyDeviceToDevice, stream));
      }
      cb->basennz  = cu->basennz;
      cb->ndirtyub = cu->ndirtyub;
      cb->baseok   = PETSC_TRUE;
      cb->basever  = cb->structver;
    }
    (*B)->offloadmask = PETSC_OFFLOAD_BOTH; /* the host copy (the host duplicate) and the device copy hold the same */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Options, view, binding
   ------------------------------------------------------------------------------------------------------ */

/* THE list of the ops that run on the device; MatBindToCPU(A, PETSC_TRUE) puts the host type's back (gpukittwin.h) */
static const GpukitTwinOp DCSRCUDAOps[] = {
  GPUKIT_TWIN_OP(setvalues, MatSetValues_SeqDCSRCUDA),
  GPUKIT_TWIN_OP(assemblyend, MatAssemblyEnd_SeqDCSRCUDA),
  GPUKIT_TWIN_OP(mult, MatMult_SeqDCSRCUDA),
  GPUKIT_TWIN_OP(multadd, MatMultAdd_SeqDCSRCUDA),
  GPUKIT_TWIN_OP(multtranspose, MatMultTranspose_SeqDCSRCUDA),
  GPUKIT_TWIN_OP(multtransposeadd, MatMultTransposeAdd_SeqDCSRCUDA),
  GPUKIT_TWIN_OP(getdiagonal, MatGetDiagonal_SeqDCSRCUDA),
  GPUKIT_TWIN_OP(scale, MatScale_SeqDCSRCUDA),
  GPUKIT_TWIN_OP(shift, MatShift_SeqDCSRCUDA),
  GPUKIT_TWIN_OP(zeroentries, MatZeroEntries_SeqDCSRCUDA),
  GPUKIT_TWIN_OP(duplicate, MatDuplicate_SeqDCSRCUDA),
};

/* the functions composed only while on the device (bound to the CPU: the host type's, or none) */
static const GpukitTwinMethod DCSRCUDAMethods[] = {
  GPUKIT_TWIN_METHOD("MatDCSRSetValuesCOODevice_C", MatDCSRSetValuesCOODevice_SeqDCSRCUDA),
  GPUKIT_TWIN_METHOD("MatDCSRDefragment_C", MatDCSRDefragment_SeqDCSRCUDA),
  GPUKIT_TWIN_METHOD("MatDCSRGetInfo_C", MatDCSRGetInfo_SeqDCSRCUDA),
};

static PetscErrorCode MatBindToCPU_SeqDCSRCUDA(Mat A, PetscBool flg)
{
  Mat_SeqDCSRCUDA *cu = DCSRCUDAGet(A);
  DCSRCUDAStash   *s  = &cu->stash;

  PetscFunctionBegin;
  if (flg && s->n) { /* entries set before the binding go to the host type's insertion */
    PetscCall(PetscInfo(A, "gpukit: MatBindToCPU() with %" PetscCount_FMT " stashed entries: handed to the host insertion\n", s->n));
    for (PetscCount e = 0; e < s->n; e++) PetscCall((*cu->twin.hostops.setvalues)(A, 1, &s->i[e], 1, &s->j[e], &s->v[e], s->mode));
    s->n = 0;
  }
  PetscCall(GpukitTwinBind(A, &cu->twin, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Mat_SeqDCSR's devoptions hook: the options of the device side, read by DCSRSetFromOptions_Private() (dcsr.c) inside
   its "MATDCSR options" block, for the matrix M (its communicator for errors) from its first block blk[0] (a
   MATSEQDCSRCUDA itself, or the diagonal block of a MATMPIDCSRCUDA), then copied to the other blocks */
static PetscErrorCode DCSRCUDASetFromOptions_Private(Mat M, PetscInt nblk, const Mat blk[], GpukitOptionItems PetscOptionsObject)
{
  Mat              A  = M;
  Mat_SeqDCSRCUDA *cu = DCSRCUDAGet(blk[0]);
  PetscInt         tpr[GPUKIT_DCSR_NBINS], n = GPUKIT_DCSR_NBINS;
  PetscBool        set, tune = cu->autotune, trim = cu->trim;

  PetscFunctionBegin;
  for (PetscInt b = 0; b < GPUKIT_DCSR_NBINS; b++) tpr[b] = cu->tpr[b];
  PetscCall(PetscOptionsIntArray("-mat_dcsr_cuda_threads_per_row", "Threads per row of the product for the rows of length <=4, 5..32, 33..256, >256 (1, 2, 4, 8, 16 or 32; one value for all); fixes them (otherwise tuned)", "MATDCSRCUDA", tpr, &n, &set));
  if (set) {
    PetscCheck(n >= 1, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "-mat_dcsr_cuda_threads_per_row needs 1 or %d values", GPUKIT_DCSR_NBINS);
    if (n == 1)
      for (PetscInt b = 1; b < GPUKIT_DCSR_NBINS; b++) tpr[b] = tpr[0];
    else PetscCheck(n == GPUKIT_DCSR_NBINS, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "-mat_dcsr_cuda_threads_per_row takes 1 or %d values, got %" PetscInt_FMT, GPUKIT_DCSR_NBINS, n);
    for (PetscInt b = 0; b < GPUKIT_DCSR_NBINS; b++) {
      PetscCheck(tpr[b] == 1 || tpr[b] == 2 || tpr[b] == 4 || tpr[b] == 8 || tpr[b] == 16 || tpr[b] == 32, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_dcsr_cuda_threads_per_row: %" PetscInt_FMT " is not one of 1, 2, 4, 8, 16, 32", tpr[b]);
      cu->tpr[b] = tpr[b];
    }
    cu->fixtpr = PETSC_TRUE;
    PetscCall(DCSRCUDATunersDestroy_Private(cu));
  }
  {
    PetscInt lr = cu->longrow;
    PetscCall(PetscOptionsInt("-mat_dcsr_cuda_long_row", "Rows longer than this get a block of threads each in the product", "MATDCSRCUDA", lr, &lr, &set));
    if (set) {
      PetscCheck(lr >= 1, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_dcsr_cuda_long_row must be at least 1, got %" PetscInt_FMT, lr);
      if (lr != cu->longrow) { /* the bins again at the next product, and the tuner's knobs (tpr3 is fixed when longrow <= 256) */
        cu->binver = -1;
        PetscCall(DCSRCUDATunersDestroy_Private(cu));
      }
      cu->longrow = lr;
    }
  }
  PetscCall(PetscOptionsBool("-mat_dcsr_autotune", "Tune the product's threads per row with gpukit's tuner (-gpukit_tune); false: the starting values 2, 8, 32, 32", "MATDCSRCUDA", tune, &tune, &set));
  if (set) {
    cu->autotune = tune;
    PetscCall(DCSRCUDATunersDestroy_Private(cu));
  }
  PetscCall(PetscOptionsBool("-mat_dcsr_cuda_trim", "Give the pooled work space of a large batch (and the buffers a defragmentation replaced, with -mat_dcsr_cuda_defrag_spare false) back to the device when it ends", "MATDCSRCUDA", trim, &trim, NULL));
  cu->trim = trim;
  {
    PetscBool keep = cu->keepspare;
    PetscCall(PetscOptionsBool("-mat_dcsr_cuda_defrag_spare", "Keep the buffers a defragmentation replaced for the next one (no allocation, no trim there; costs their memory)", "MATDCSRCUDA", keep, &keep, &set));
    if (set) {
      cu->keepspare = keep;
      if (!keep) PetscCall(DCSRCUDAFreeSpare_Private(cu));
    }
  }
  {
    const char *const kinds4[] = {"binned", "fused", "rows", "auto"};
    PetscBool         flg;
    PetscInt          sel = cu->multkernel < 0 ? 3 : cu->multkernel;
    PetscCall(PetscOptionsEList("-mat_dcsr_cuda_mult_kernel", "The product: a launch per bin (binned), all bins in one launch (fused), rows in row order when every row has at most one segment (rows; else fused), or the tuner's choice (auto)", "MATDCSRCUDA", kinds4, 4, kinds4[sel], &sel, &flg));
    if (flg) {
      cu->multkernel = sel == 3 ? DCSR_MULT_AUTO : sel;
      PetscCall(DCSRCUDATunersDestroy_Private(cu));
    }
  }
  {
    PetscBool usebase = cu->usebase;
    PetscCall(PetscOptionsBool("-mat_dcsr_cuda_csr_base", "With -mat_dcsr_cuda_mult_kernel auto: the product of a plain CSR layout (after a defragmentation with -mat_dcsr_defrag_slack 0), and of the rows added to it since, is cuSPARSE's CSR product plus a fix-up of those rows", "MATDCSRCUDA", usebase, &usebase, &set));
    if (set && !usebase) PetscCall(DCSRCUDABaseFree_Private(cu));
    cu->usebase = usebase;
  }
  {
    PetscReal frac = cu->basemaxdirty;
    PetscCall(PetscOptionsReal("-mat_dcsr_cuda_csr_base_max_marked", "The product takes the CSR base (cuSPARSE plus the fix-up) while at most this fraction of the rows got new entries since it was made (0..1)", "MATDCSRCUDA", frac, &frac, &set));
    PetscCheck(!set || (frac >= 0.0 && frac <= 1.0), PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_dcsr_cuda_csr_base_max_marked %g: give a fraction of the rows between 0 and 1", (double)frac);
    cu->basemaxdirty = frac;
  }
  {
    const char *const prods[] = {"cusparse", "stream", "auto"};
    PetscBool         flg;
    PetscInt          sel = cu->baseprod < 0 ? 2 : cu->baseprod;
    PetscCall(PetscOptionsEList("-mat_dcsr_cuda_csr_base_product", "The product on the CSR base: cuSPARSE's CSR product plus the fix-up of the rows marked since (cusparse), one launch with a warp per 32 rows streaming their entries through shared memory and adding the marked rows' new entries (stream), or the tuner's choice (auto; cusparse without -mat_dcsr_autotune)", "MATDCSRCUDA", prods, 3, prods[sel], &sel, &flg));
    if (flg) {
      cu->baseprod = sel == 2 ? DCSR_BASE_AUTO : sel;
      PetscCall(DCSRCUDATunersDestroy_Private(cu));
    }
  }
  for (PetscInt b = 1; b < nblk; b++) { /* the other blocks (the off-diagonal block of a MATMPIDCSRCUDA) as the first */
    Mat_SeqDCSRCUDA *cb = DCSRCUDAGet(blk[b]);
    for (PetscInt q = 0; q < GPUKIT_DCSR_NBINS; q++) cb->tpr[q] = cu->tpr[q];
    if (cb->usebase && !cu->usebase) PetscCall(DCSRCUDABaseFree_Private(cb));
    cb->usebase = cu->usebase;
    cb->basemaxdirty = cu->basemaxdirty;
    cb->baseprod     = cu->baseprod;
    cb->fixtpr   = cu->fixtpr;
    cb->autotune = cu->autotune;
    cb->trim     = cu->trim;
    if (cb->keepspare && !cu->keepspare) PetscCall(DCSRCUDAFreeSpare_Private(cb));
    cb->keepspare  = cu->keepspare;
    cb->multkernel = cu->multkernel;
    if (cb->longrow != cu->longrow) cb->binver = -1;
    cb->longrow = cu->longrow;
    PetscCall(DCSRCUDATunersDestroy_Private(cb));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the host's (MATSEQDCSR's): its "MATDCSR options" block reads the device options too (the devoptions hook) */
static PetscErrorCode MatSetFromOptions_SeqDCSRCUDA(Mat A, GpukitOptionItems PetscOptionsObject)
{
  PetscFunctionBegin;
  PetscCall((*DCSRCUDAGet(A)->twin.hostops.setfromoptions)(A, PetscOptionsObject));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* bytes of device memory the matrix holds: its structure (segment tables, row arrays, the buffers' full capacity, the
   bump pointer), the product's bins and the defragmentation's spare buffers; NOT the work space of batches and defragmentations, which goes back to the
   pool (and with -mat_dcsr_cuda_trim to the device) when they end */
static PetscLogDouble DCSRCUDAStorageBytes_Private(const Mat_SeqDCSRCUDA *cu)
{
  const GpukitDCSRDev *d  = &cu->d;
  const PetscLogDouble mk = (PetscLogDouble)d->m * (PetscLogDouble)d->K;

  if (!d->segstart) return 0;
  return mk * (sizeof(long long) + 2 * sizeof(int)) + (PetscLogDouble)d->m * 2 * sizeof(int) + (PetscLogDouble)d->cap * (sizeof(int) + sizeof(double)) + sizeof(unsigned long long) + (PetscLogDouble)cu->permm * 3 * sizeof(int) + (PetscLogDouble)cu->lchunkalloc * 2 * sizeof(int) + (PetscLogDouble)cu->lpartalloc * sizeof(double) + (PetscLogDouble)cu->spare.cap * (sizeof(int) + sizeof(double)) + (PetscLogDouble)cu->rowsviewm * sizeof(int2);
}

/* "MatDCSRCUDAGetDeviceBytes_C" (composed; queried by bench/dcsr_bench.c with PetscObjectQueryFunction()): the device
   bytes the matrix holds (DCSRCUDAStorageBytes_Private()), of this process's blocks */
static PetscErrorCode MatDCSRCUDAGetDeviceBytes_SeqDCSRCUDA(Mat A, PetscLogDouble *bytes)
{
  PetscFunctionBegin;
  *bytes = DCSRCUDAStorageBytes_Private(DCSRCUDAGet(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* "MatDCSRCUDAGetMultKernel_C" (composed; queried by tests/gpu/dcsr_cuda.c): the kernel of this block's last product
   (-1: none yet, 0 binned, 1 fused, 2 rows, 3 the CSR base) and the lanes per row of the rows kernel, or on the CSR base
   the product (0: cuSPARSE and the fix-up, DCSR_BASE_STREAM_CODE (64): the base stream kernel; 0 for the others) */
static PetscErrorCode MatDCSRCUDAGetMultKernel_SeqDCSRCUDA(Mat A, PetscInt *kernel, PetscInt *lanes)
{
  Mat_SeqDCSRCUDA *cu = DCSRCUDAGet(A);

  PetscFunctionBegin;
  if (kernel) *kernel = cu->lastkernel;
  if (lanes) *lanes = cu->lastkernel == DCSR_MULT_ROWS || cu->lastkernel == DCSR_MULT_CSRBASE ? cu->lasttpr : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* "MatDCSRCUDAGetBaseMarked_C" (composed; queried by bench/dcsr_bench.c): the rows marked since the CSR base was made
   (exact after an assembly: the count is read back with the segment statistics), -1 without a valid base; bound: the
   most fragmented rows that -mat_dcsr_defrag auto leaves (-mat_dcsr_defrag_fraction times the rows), -1 under another
   policy */
static PetscErrorCode MatDCSRCUDAGetBaseMarked_SeqDCSRCUDA(Mat A, PetscInt *marked, PetscInt *bound)
{
  Mat_SeqDCSR     *a  = (Mat_SeqDCSR *)A->data;
  Mat_SeqDCSRCUDA *cu = DCSRCUDAGet(A);

  PetscFunctionBegin;
  *marked = DCSRCUDABaseValid_Private(cu) ? (PetscInt)cu->ndirtyub : -1;
  if (bound) *bound = a->defrag == MAT_DCSR_DEFRAG_AUTO ? (PetscInt)PetscFloorReal(a->defrag_fraction * (PetscReal)a->m) : -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDCSRCUDAGetDeviceBytes_MPIDCSRCUDA(Mat A, PetscLogDouble *bytes)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  *bytes = 0;
  if (d->A) *bytes += DCSRCUDAStorageBytes_Private(DCSRCUDAGet(d->A));
  if (d->B) *bytes += DCSRCUDAStorageBytes_Private(DCSRCUDAGet(d->B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Mat_SeqDCSR's viewinfo hook: the device lines of MatView() ::ascii_info */
static PetscErrorCode DCSRCUDAViewInfo(Mat A, PetscViewer viewer)
{
  Mat_SeqDCSRCUDA *cu = DCSRCUDAGet(A);

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  device: %lld of %lld slots used, %" PetscInt_FMT " batches (%" PetscCount_FMT " MatSetValues entries uploaded), %" PetscInt_FMT " device defragmentations (%" PetscInt_FMT " grew the buffer)\n", cu->d.used, cu->d.cap, cu->nbatch, cu->nuploaded, cu->ndevdefrag, cu->ndevgrow));
  if (cu->perm) PetscCall(PetscViewerASCIIPrintf(viewer, "  product bins (rows of length <=4, <=32, <=256, more, and longer than %" PetscInt_FMT ": split in %lld chunks of %d entries, a block each): %lld, %lld, %lld, %lld, %lld rows\n", cu->longrow, cu->nchunk, GPUKIT_DCSR_LONG_CHUNK, cu->binstart[1] - cu->binstart[0], cu->binstart[2] - cu->binstart[1], cu->binstart[3] - cu->binstart[2], cu->binstart[4] - cu->binstart[3], cu->binstart[5] - cu->binstart[4]));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  device memory held: %g MB, of which %g MB the defragmentation's spare buffers (-mat_dcsr_cuda_defrag_spare %s; -mat_dcsr_cuda_trim %s: %" PetscInt_FMT " trims of the work pool)\n", (double)DCSRCUDAStorageBytes_Private(cu) / 1048576.0, (double)cu->spare.cap * (sizeof(int) + sizeof(double)) / 1048576.0, cu->keepspare ? "true" : "false", cu->trim ? "true" : "false", cu->ntrim));
  {
    static const char *const kname[] = {"binned", "fused", "rows", "cuSPARSE CSR over the CSR base, and the fix-up of the rows added since"};
    const char              *how     = cu->multkernel == DCSR_MULT_AUTO ? "tuned (binned, fused, or rows where every row has at most one segment)" : cu->multkernel == DCSR_MULT_ROWS ? "rows where every row has at most one segment, else fused (-mat_dcsr_cuda_mult_kernel)" : cu->multkernel == DCSR_MULT_FUSED ? "fused (-mat_dcsr_cuda_mult_kernel)" : "binned (-mat_dcsr_cuda_mult_kernel)";
    const char              *view    = cu->d.cap > (long long)INT_MAX ? "does not apply (a buffer of more than 2^31 slots)" : cu->viewver != cu->structver ? "not evaluated for this structure yet (at the next product)" : cu->viewok ? "applies (every row has at most one segment)" : "does not apply (some rows have several segments)";
    if (DCSRCUDARowsWanted_Private(cu)) PetscCall(PetscViewerASCIIPrintf(viewer, "  product kernel: %s; the rows kernel %s\n", how, view));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "  product kernel: %s\n", cu->multkernel == DCSR_MULT_AUTO ? "fused (-mat_dcsr_autotune false)" : how));
    if (cu->lastkernel >= 0) {
      if (cu->lastkernel == DCSR_MULT_ROWS) PetscCall(PetscViewerASCIIPrintf(viewer, "  last product: rows, %" PetscInt_FMT " lanes per row\n", cu->lasttpr));
      else PetscCall(PetscViewerASCIIPrintf(viewer, "  last product: %s\n", kname[cu->lastkernel]));
    }
  }
  if (!cu->usebase) PetscCall(PetscViewerASCIIPrintf(viewer, "  CSR base: off (-mat_dcsr_cuda_csr_base false)\n"));
  else if (DCSRCUDABaseValid_Private(cu)) {
    const char *prod = cu->baseprod == DCSR_BASE_STREAM ? "the base stream kernel" : cu->baseprod == DCSR_BASE_CUSPARSE || !cu->autotune ? "cuSPARSE's CSR product plus the fix-up" : "the tuner's choice of cuSPARSE plus the fix-up or the base stream kernel, by the fraction of rows marked";
    PetscCall(PetscViewerASCIIPrintf(viewer, "  CSR base: valid, %lld entries; at most %lld rows got new entries since (the product takes it while they are at most %g of the %d rows%s); its product: %s\n", cu->basennz, cu->ndirtyub, (double)cu->basemaxdirty, cu->d.m, cu->multkernel == DCSR_MULT_AUTO ? "" : "; not with a forced -mat_dcsr_cuda_mult_kernel", prod));
    if (cu->lastkernel == DCSR_MULT_CSRBASE) {
      PetscCall(PetscViewerASCIIPrintf(viewer, "  last product on the base: %s\n", cu->lasttpr == DCSR_BASE_STREAM_CODE ? "the base stream kernel" : "cuSPARSE, then the fix-up"));
    }
    PetscCall(PetscViewerASCIIPushTab(viewer));
    for (PetscInt b = 0; b < DCSR_BASE_NBUCKETS; b++)
      if (cu->tunerbase[b]) PetscCall(GpukitTunerView(cu->tunerbase[b], viewer));
    PetscCall(PetscViewerASCIIPopTab(viewer));
  }
  else PetscCall(PetscViewerASCIIPrintf(viewer, "  CSR base: none (the layout has not been plain CSR since the last upload or defragmentation; -mat_dcsr_defrag_slack 0 and MatDCSRDefragment() make one)\n"));
  if (cu->tuner || cu->tunerrows) {
    PetscCall(PetscViewerASCIIPushTab(viewer));
    if (cu->tuner) PetscCall(GpukitTunerView(cu->tuner, viewer));
    if (cu->tunerrows) PetscCall(GpukitTunerView(cu->tunerrows, viewer));
    PetscCall(PetscViewerASCIIPopTab(viewer));
  } else PetscCall(PetscViewerASCIIPrintf(viewer, "  threads per row by bin: %" PetscInt_FMT ", %" PetscInt_FMT ", %" PetscInt_FMT ", %" PetscInt_FMT "%s\n", cu->tpr[0], cu->tpr[1], cu->tpr[2], cu->tpr[3], cu->autotune ? " (tuned at the first product)" : " (not tuned: -mat_dcsr_autotune false)"));
  PetscCall(GpukitTwinView(A, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Conversion, destroy, create
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatConvert_SeqDCSR_SeqDCSRCUDA(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatConvert_SeqDCSRCUDA_SeqDCSR(Mat, MatType, MatReuse, Mat *);

static PetscErrorCode DCSRCUDAComposeFunctions_Private(Mat A, PetscBool set)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqdcsr_seqdcsrcuda_C", set ? MatConvert_SeqDCSR_SeqDCSRCUDA : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqdcsrcuda_seqdcsr_C", set ? MatConvert_SeqDCSRCUDA_SeqDCSR : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqdcsrcuda_seqaij_C", set ? MatConvert_SeqDCSR_SeqAIJ : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqdcsrcuda_aij_C", set ? MatConvert_SeqDCSR_SeqAIJ : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatDCSRCUDAGetDeviceBytes_C", set ? MatDCSRCUDAGetDeviceBytes_SeqDCSRCUDA : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatDCSRCUDAGetMultKernel_C", set ? MatDCSRCUDAGetMultKernel_SeqDCSRCUDA : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatDCSRCUDAGetBaseMarked_C", set ? MatDCSRCUDAGetBaseMarked_SeqDCSRCUDA : NULL));
  if (!set) { /* and the twin's device-only functions */
    const GpukitTwin *tw = &DCSRCUDAGet(A)->twin;
    for (PetscInt i = 0; i < tw->nmethods; i++) PetscCall(PetscObjectComposeFunction((PetscObject)A, tw->methods[i].name, NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DCSRCUDAFree_Private(Mat_SeqDCSRCUDA **cu)
{
  PetscFunctionBegin;
  if (!*cu) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DCSRCUDAFreeSpare_Private(*cu));
  PetscCall(DCSRCUDAFreeDev_Private(&(*cu)->d));
  PetscCall(DCSRCUDAFreeBins_Private(*cu));
  PetscCall(PetscFree3((*cu)->stash.i, (*cu)->stash.j, (*cu)->stash.v));
  PetscCall(DCSRCUDAFreeRowsView_Private(*cu));
  PetscCall(DCSRCUDABaseFree_Private(*cu));
  PetscCall(DCSRCUDATunersDestroy_Private(*cu));
  PetscCall(PetscFree(*cu));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_SeqDCSRCUDA(Mat A)
{
  Mat_SeqDCSR     *a  = (Mat_SeqDCSR *)A->data;
  Mat_SeqDCSRCUDA *cu = (Mat_SeqDCSRCUDA *)a->spdev;
  PetscErrorCode (*hostdestroy)(Mat) = cu->twin.hostops.destroy;

  PetscFunctionBegin;
  PetscCall(DCSRCUDAComposeFunctions_Private(A, PETSC_FALSE));
  PetscCall(DCSRCUDAFree_Private(&cu));
  a->spdev      = NULL;
  a->hostaccess = NULL;
  a->viewinfo   = NULL;
  a->devoptions = NULL;
  PetscCall((*hostdestroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MATSEQDCSR -> MATSEQDCSRCUDA, in place; nothing to do for a CUDA matrix */
static PetscErrorCode DCSRConvertToCUDA_Private(Mat A)
{
  Mat_SeqDCSR     *a = (Mat_SeqDCSR *)A->data;
  Mat_SeqDCSRCUDA *cu;

  PetscFunctionBegin;
  if (a->spdev) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscNew(&cu));
  for (PetscInt b = 0; b < GPUKIT_DCSR_NBINS; b++) cu->tpr[b] = DCSRCUDATprValues[DCSRCUDATprStart[b]];
  cu->autotune      = PETSC_TRUE;
  cu->binver        = -1;
  cu->longrow       = GPUKIT_DCSR_LONG_ROW;
  cu->trim          = PETSC_TRUE;
  cu->keepspare     = PETSC_TRUE;
  cu->multkernel    = DCSR_MULT_AUTO;
  cu->usebase       = PETSC_TRUE;
  cu->basemaxdirty  = 0.25;
  cu->baseprod      = DCSR_BASE_AUTO;
  cu->csrmv.prepafter = 3; /* cuSPARSE's analysis at the 4th product of a CSR base: one product after a batch pays none */
  cu->viewver       = -1;
  cu->singlever     = -1;
  cu->single        = -1;
  cu->lastkernel    = -1;
  cu->twin.copyup   = DCSRCUDACopyUp_Private;
  cu->twin.copydown = DCSRCUDACopyDown_Private;
  cu->twin.evup     = MAT_DCSRCUDA_Copy;
  cu->twin.evdown   = MAT_DCSRCUDA_Copy;
  cu->twin.ops      = DCSRCUDAOps;
  cu->twin.nops     = (PetscInt)(sizeof(DCSRCUDAOps) / sizeof(DCSRCUDAOps[0]));
  cu->twin.methods  = DCSRCUDAMethods;
  cu->twin.nmethods = (PetscInt)(sizeof(DCSRCUDAMethods) / sizeof(DCSRCUDAMethods[0]));
  cu->twin.ondevice = "insertion (MatSetValues entries uploaded at assembly, MatDCSRSetValuesCOODevice), defragmentation, products, diagonal, scaling, shift and zeroing run on the GPU; other operations run the host code on the host copy (docs/dcsr.md)";
  a->spdev          = cu;
  a->hostaccess     = DCSRCUDAHostAccess;
  a->viewinfo       = DCSRCUDAViewInfo;
  a->devoptions     = DCSRCUDASetFromOptions_Private;
  PetscCall(GpukitTwinAttach(A, &cu->twin)); /* saves the host ops (and the host's functions of the same names), installs the device ones */
  A->ops->bindtocpu      = MatBindToCPU_SeqDCSRCUDA;
  A->ops->setfromoptions = MatSetFromOptions_SeqDCSRCUDA;
  A->ops->destroy        = MatDestroy_SeqDCSRCUDA;
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATSEQDCSRCUDA));
  PetscCall(DCSRCUDAComposeFunctions_Private(A, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MATSEQDCSRCUDA -> MATSEQDCSR, in place: the structure down, the host ops back, the device data freed */
static PetscErrorCode DCSRConvertToHost_Private(Mat A)
{
  Mat_SeqDCSR     *a  = (Mat_SeqDCSR *)A->data;
  Mat_SeqDCSRCUDA *cu = (Mat_SeqDCSRCUDA *)a->spdev;

  PetscFunctionBegin;
  if (!cu) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(!cu->stash.n, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "MATSEQDCSRCUDA with %" PetscCount_FMT " entries waiting for MatAssemblyEnd(): assemble before converting", cu->stash.n);
  PetscCall(DCSRCUDAComposeFunctions_Private(A, PETSC_FALSE));
  PetscCall(GpukitTwinDetach(A, &cu->twin)); /* structure down; host ops and functions back */
  a->hostaccess = NULL;
  a->viewinfo   = NULL;
  a->devoptions = NULL;
  PetscCall(DCSRCUDAFree_Private(&cu));
  a->spdev = NULL;
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATSEQDCSR));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DCSRCUDAConvertTarget_Private(Mat A, MatReuse reuse, Mat *newmat, Mat *target)
{
  PetscFunctionBegin;
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  else if (reuse == MAT_REUSE_MATRIX) PetscCall(MatCopy(A, *newmat, DIFFERENT_NONZERO_PATTERN));
  *target = reuse == MAT_INPLACE_MATRIX ? A : *newmat;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_SeqDCSR_SeqDCSRCUDA(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat B;

  PetscFunctionBegin;
  (void)type;
  PetscCall(DCSRCUDAConvertTarget_Private(A, reuse, newmat, &B));
  PetscCall(DCSRConvertToCUDA_Private(B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_SeqDCSRCUDA_SeqDCSR(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat B;

  PetscFunctionBegin;
  (void)type;
  PetscCall(DCSRCUDAConvertTarget_Private(A, reuse, newmat, &B));
  PetscCall(DCSRConvertToHost_Private(B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATSEQDCSRCUDA - "seqdcsrcuda" - `MATSEQDCSR` with its segmented structure on an NVIDIA GPU: entries at new
   locations are inserted on the device in place, products and the other common operations run there.

   Options Database Keys:
+  -mat_type seqdcsrcuda - the type (or -mat_type dcsrcuda, -dm_mat_type dcsrcuda)
.  -mat_dcsr_cuda_threads_per_row <a[,b,c,d]> - threads per row of the product for rows of length <= 4, 5..32,
     33..256 and more (1, 2, 4, 8, 16 or 32; one value for all bins); fixes them, otherwise they are tuned
.  -mat_dcsr_autotune <true> - tune the product's kernel and the threads per row of bins 0-2 with gpukit's tuner
     (kernel dcsr_mult2; -gpukit_tune, -gpukit_tune_cache); false: the fused kernel, 2, 8, 32, 32
.  -mat_dcsr_cuda_mult_kernel <auto,binned,fused,rows> - the product in a launch per bin, in one launch, in row order
     when every row has at most one segment (rows; fused otherwise), or the tuner's choice among those that apply
.  -mat_dcsr_cuda_csr_base <true> - with auto: a plain CSR layout (after a defragmentation with
     -mat_dcsr_defrag_slack 0, the default) is multiplied by cuSPARSE's CSR product, and rows that get new entries
     afterwards by a fix-up kernel, until more than -mat_dcsr_cuda_csr_base_max_marked of the rows did
.  -mat_dcsr_cuda_csr_base_max_marked <0.25> - the fraction of rows with new entries up to which the CSR base is used
.  -mat_dcsr_cuda_csr_base_product <auto> - the product on the CSR base: cusparse (cuSPARSE plus the fix-up of the marked
     rows), stream (one launch: a warp per 32 rows through shared memory, the marked rows' new entries added), auto (the
     tuner's choice)
.  -mat_dcsr_cuda_long_row <256> - rows longer than this are summed in chunks of 2048 entries, a block each (not tuned)
.  -mat_dcsr_cuda_defrag_spare <true> - keep the buffers a defragmentation replaced for the next one (no allocation)
-  -mat_dcsr_cuda_trim <true> - give large batches' pooled work space back to the device

   and every option of `MATSEQDCSR` (K, slack, defragmentation policy).

   Level: intermediate

   Notes:
   The device copy of the structure is authoritative after device insertions. `MatSetValues()` stashes its entries on
   the host and `MatAssemblyEnd()` uploads only them, then inserts them on the device as one batch: sorted by (row,
   column) on the device, duplicates resolved as AIJ resolves them (`INSERT_VALUES`: the last wins; `ADD_VALUES`:
   summed), entries already stored overwritten or added, the others placed by an allocation kernel (one atomic per
   row per batch on the bump pointer) and an insertion kernel. A row that would exceed K segments or a full buffer
   makes the device defragment (growing the buffer if needed) before the insertion; nothing overflows. Entries
   already in device memory go in with `MatDCSRSetValuesCOODevice()` without any host copy.

   Host code (`MatGetRow()`, norms, conversions, the operations through the AIJ copy) copies the structure down once
   after device changes (event DCSRCUDACopy); `MatBindToCPU()` runs everything on the host. Use `VECCUDA` vectors
   (`MatCreateVecs()`); with host vectors the products run on the host.

.seealso: `MATDCSRCUDA`, `MATMPIDCSRCUDA`, `MATSEQDCSR`, `MatDCSRSetValuesCOODevice()`, `MatDCSRDefragment()`
M*/
static PetscErrorCode MatCreate_SeqDCSRCUDA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatCreate_SeqDCSR(A));
  PetscCall(DCSRConvertToCUDA_Private(A));
  PetscCall(PetscInfo(A, "gpukit: created a %s matrix\n", MATSEQDCSRCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   MATMPIDCSRCUDA: MATMPIDCSR (mpidcsr.c, H3's) with MATSEQDCSRCUDA blocks and a CUDA ghost vector
   ------------------------------------------------------------------------------------------------------ */

/* the device batch of an MPI matrix: the entries go to the host and through MatSetValues() (the off-diagonal
   block's ghost map is the host's), then the matrix is assembled; rows must be this rank's */
static PetscErrorCode MatDCSRSetValuesCOODevice_MPIDCSRCUDA(Mat A, PetscCount n, const PetscInt i[], const PetscInt j[], const PetscScalar v[], InsertMode mode)
{
  PetscInt    *hi = NULL, *hj = NULL;
  PetscScalar *hv = NULL;
  PetscInt     rstart, rend;

  PetscFunctionBegin;
  if (n) {
    PetscCall(DCSRCUDACheckDevicePointer_Private(i, "i"));
    PetscCall(DCSRCUDACheckDevicePointer_Private(j, "j"));
    if (v) PetscCall(DCSRCUDACheckDevicePointer_Private(v, "v"));
  }
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(PetscMalloc3(n, &hi, n, &hj, n, &hv));
  if (n) {
    PetscCallCUDA(cudaDeviceSynchronize()); /* the arrays may have been written on any stream (PETSc's is non-blocking) */
    PetscCallCUDA(cudaMemcpy(hi, i, (size_t)n * sizeof(PetscInt), cudaMemcpyDeviceToHost));
    PetscCallCUDA(cudaMemcpy(hj, j, (size_t)n * sizeof(PetscInt), cudaMemcpyDeviceToHost));
    if (v) PetscCallCUDA(cudaMemcpy(hv, v, (size_t)n * sizeof(PetscScalar), cudaMemcpyDeviceToHost));
    else PetscCall(PetscArrayzero(hv, n));
    PetscCall(PetscLogGpuToCpu((PetscLogDouble)n * (2 * sizeof(PetscInt) + sizeof(PetscScalar))));
  }
  for (PetscCount e = 0; e < n; e++) { /* every index first: a bad one leaves the matrix unchanged */
    if (hi[e] < 0 || hj[e] < 0) continue;
    PetscCheck(hi[e] >= rstart && hi[e] < rend && hj[e] < A->cmap->N, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Entry %" PetscCount_FMT " of the device batch, (%" PetscInt_FMT ", %" PetscInt_FMT "), is out of range: this process owns rows %" PetscInt_FMT "..%" PetscInt_FMT " of the %" PetscInt_FMT " x %" PetscInt_FMT " matrix; the matrix is unchanged", e, hi[e], hj[e], rstart, rend - 1, A->rmap->N, A->cmap->N);
  }
  for (PetscCount e = 0; e < n; e++) PetscCall(MatSetValues(A, 1, &hi[e], 1, &hj[e], &hv[e], mode));
  PetscCall(PetscFree3(hi, hj, hv));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MATMPIDCSR's setfromoptions (the same function for every matrix), saved by MatCreate_MPIDCSRCUDA() */
static PetscErrorCode (*DCSRCUDAMPIHostSetFromOptions)(Mat, GpukitOptionItems) = NULL;

/* MATMPIDCSR's: its "MATDCSR options" block reads the device options of both blocks (the blocks' devoptions hook),
   also when it runs again for a MatSetFromOptions() that came before the sizes */
static PetscErrorCode MatSetFromOptions_MPIDCSRCUDA(Mat A, GpukitOptionItems PetscOptionsObject)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  PetscCall((*DCSRCUDAMPIHostSetFromOptions)(A, PetscOptionsObject));
  if (!d->A && d->deferopts) PetscFunctionReturn(PETSC_SUCCESS); /* before the sizes: again when the blocks are made */
  PetscCheck(d->A && d->B, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATMPIDCSRCUDA: no blocks after MATMPIDCSR's MatSetFromOptions()");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the blocks and the ghost vector follow (blocks made later, at set-up, are not bound) */
static PetscErrorCode MatBindToCPU_MPIDCSRCUDA(Mat A, PetscBool flg)
{
  Mat_MPIDCSR *d = (Mat_MPIDCSR *)A->data;

  PetscFunctionBegin;
  if (d->A) PetscCall(MatBindToCPU(d->A, flg));
  if (d->B) PetscCall(MatBindToCPU(d->B, flg));
  if (d->lvec) PetscCall(VecBindToCPU(d->lvec, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATMPIDCSRCUDA - "mpidcsrcuda" - `MATMPIDCSR` whose diagonal and off-diagonal blocks are `MATSEQDCSRCUDA`, with a
   `VECCUDA` ghost vector: the product's local parts run on the device, new entries of the blocks are inserted there.

   Level: intermediate

   Note:
   `MatDCSRSetValuesCOODevice()` on more than one process stages the batch through the host (`MatSetValues()`), since
   the ghost map of the off-diagonal block is kept on the host.

.seealso: `MATDCSRCUDA`, `MATSEQDCSRCUDA`, `MATMPIDCSR`
M*/
static PetscErrorCode MatCreate_MPIDCSRCUDA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatCreate_MPIDCSR_Private(A, MATSEQDCSRCUDA));
  PetscCall(MatSetVecType(A, VECCUDA)); /* the ghost vector lvec and MatCreateVecs() */
  /* MatCreate() leaves a matrix bound to the CPU in a device build: a device MPI type is not bound (else MatBoundToCPU()
     says true, GpukitMatGetCaps() says host only, and a first MatBindToCPU(A, PETSC_TRUE) does nothing) */
#if PetscDefined(HAVE_DEVICE)
  A->boundtocpu = PETSC_FALSE;
#endif
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATMPIDCSRCUDA));
  A->ops->bindtocpu = MatBindToCPU_MPIDCSRCUDA;
  DCSRCUDAMPIHostSetFromOptions = A->ops->setfromoptions;
  A->ops->setfromoptions        = MatSetFromOptions_MPIDCSRCUDA;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatDCSRSetValuesCOODevice_C", MatDCSRSetValuesCOODevice_MPIDCSRCUDA));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpidcsrcuda_mpiaij_C", MatConvert_MPIDCSR_MPIAIJ));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_mpidcsrcuda_aij_C", MatConvert_MPIDCSR_MPIAIJ));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatDCSRCUDAGetDeviceBytes_C", MatDCSRCUDAGetDeviceBytes_MPIDCSRCUDA));
  PetscCall(PetscInfo(A, "gpukit: created a %s matrix\n", MATMPIDCSRCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATDCSRCUDA - "dcsrcuda" - `MATSEQDCSRCUDA` on one process, `MATMPIDCSRCUDA` on several

   Options Database Key:
.  -mat_type dcsrcuda - selects it with `MatSetFromOptions()`

   Level: intermediate

.seealso: `MATDCSR`, `MATSEQDCSRCUDA`, `MATMPIDCSRCUDA`, `MatDCSRSetValuesCOODevice()`
M*/
static PetscErrorCode MatCreate_DCSRCUDA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(GpukitMatSetTypeBySize_Private(A, MATSEQDCSRCUDA, MATMPIDCSRCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatRegister_DCSRCUDA_Private(void)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventRegister("DCSRCUDAInsert", MAT_CLASSID, &MAT_DCSRCUDA_Insert));
  PetscCall(PetscLogEventRegister("DCSRCUDADefrag", MAT_CLASSID, &MAT_DCSRCUDA_Defrag));
  PetscCall(PetscLogEventRegister("DCSRCUDAMult", MAT_CLASSID, &MAT_DCSRCUDA_Mult));
  PetscCall(PetscLogEventRegister("DCSRCUDACopy", MAT_CLASSID, &MAT_DCSRCUDA_Copy));
  PetscCall(PetscLogEventRegister("DCSRCUDABatchSort", MAT_CLASSID, &MAT_DCSRCUDA_BatchSort));
  PetscCall(PetscLogEventRegister("DCSRCUDABatchPlan", MAT_CLASSID, &MAT_DCSRCUDA_BatchPlan));
  PetscCall(PetscLogEventRegister("DCSRCUDABatchApply", MAT_CLASSID, &MAT_DCSRCUDA_BatchApply));
  PetscCall(PetscLogEventRegister("DCSRCUDAFinish", MAT_CLASSID, &MAT_DCSRCUDA_Finish));
  PetscCall(MatRegisterRootName(MATDCSRCUDA, MATSEQDCSRCUDA, MATMPIDCSRCUDA));
  PetscCall(MatRegister(MATDCSRCUDA, MatCreate_DCSRCUDA));
  PetscCall(MatRegister(MATSEQDCSRCUDA, MatCreate_SeqDCSRCUDA));
  PetscCall(MatRegister(MATMPIDCSRCUDA, MatCreate_MPIDCSRCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif /* GPUKIT_DCSRCUDA_AVAILABLE */
