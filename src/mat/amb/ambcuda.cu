/*
   MATSEQAMBCUDA ("seqaijambcuda") and MATMPIAMBCUDA ("mpiaijambcuda"): MATAMB with its product on an NVIDIA GPU.
   Built only against a PETSc with CUDA; without one, ambcudareg.c registers the names with a clear error.

   seqaijambcuda = seqaijamb (amb.c, H1's host type: a SeqAIJ with an AMB product) + one in-place convert,
   AMBConvertToCUDA_Private(): it hangs a Mat_SeqAMBCUDA on Mat_SeqAMB's spdev (devdestroy/devview hooks), attaches the
   twin (gpukittwin.h: the host ops for MatBindToCPU(), VECCUDA vectors) and installs the device ops of ONE list.
   mpiaijambcuda = MPIAIJ whose two blocks are seqaijambcuda (H1's generic MatConvert_MPIAIJ_MPIAMB_Private()), so
   MPIAIJ's product overlaps the halo exchange with the diagonal block's device product.

   The host AIJ copy stays authoritative; the device holds a cache of it (see ambcudaimpl.h): the device CSR
   (uploaded only when the host changed), the AMB layout built from it ON THE DEVICE (ambkernels.cu), refreshed through
   the CSR-position -> slot map when only the values changed, and the transpose CSR for MatMultTranspose().
   Kernels: ambkernels.cu. The product's b and threads per block are on the tuner ("amb_mult"): the traffic model
   gives the starting b, timing refines it.
*/
#include <climits>
#include "ambcudaimpl.h"
#include "gpukitpool.h"
#include "gpukitcsropskernels.h"

#if defined(GPUKIT_AMBCUDA_AVAILABLE)

PetscLogEvent MAT_AMBCUDA_Mult, MAT_AMBCUDA_Build, MAT_AMBCUDA_Refresh, MAT_AMBCUDA_CopyUp;
PetscLogEvent MAT_AMBCUDA_Plan, MAT_AMBCUDA_SellBuild, MAT_AMBCUDA_Tune, MAT_AMBCUDA_COO, MAT_AMBCUDA_CopyDown, MAT_AMBCUDA_CSRKBuild;

static const PetscInt AMBCUDATuneBlocks[] = {64, 128, 256, 512, 1024};

static const char *const AMBCUDALayoutNames[AMBCUDA_NLAYOUTS] = {"amb", "csr", "sell", "sellk", "csrk"};
static const char *const AMBCUDASellModes[] = {"tune", "off", "cusparse", "kernel", "AMBCUDASellMode", "AMBCUDA_SELL_", NULL};
static const char *const AMBCUDASegModes[]  = {"auto", "grid", "diagonal", "AMBCUDASegMode", "AMBCUDA_SEG_", NULL};
static const char *const AMBCUDACsrModes[]  = {"tune", "cusparse", "kernel", "AMBCUDACsrMode", "AMBCUDA_CSR_", NULL};


/* ------------------------------------------------------------------------------------------------------------------
   Helpers
   ------------------------------------------------------------------------------------------------------------------ */

/* are all the given vectors (NULL skipped) CUDA vectors; if not, say once that the host code runs */
static PetscErrorCode AMBCUDAVecsOnDevice_Private(Mat A, const char op[], PetscInt n, const Vec vecs[], PetscBool *ok)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);

  PetscFunctionBegin;
  *ok = PETSC_TRUE;
  for (PetscInt i = 0; i < n && *ok; i++) {
    PetscBool iscuda;
    if (!vecs[i]) continue;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)vecs[i], &iscuda, VECSEQCUDA, VECMPICUDA, ""));
    if (!iscuda) {
      *ok = PETSC_FALSE;
      if (!cu->told_vec) {
        PetscCall(PetscInfo(A, "%s with a vector of type %s: running the host code; use VECCUDA vectors (MatCreateVecs(), -vec_type cuda) to stay on the GPU\n", op, ((PetscObject)vecs[i])->type_name));
        cu->told_vec = PETSC_TRUE;
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device arrays of an output y = z + ... (z NULL: y is only written; z == y: read and written) */
static PetscErrorCode AMBCUDAGetOutArrays_Private(Vec z, Vec y, const PetscScalar **za, PetscScalar **ya)
{
  PetscFunctionBegin;
  *za = NULL;
  if (!z) PetscCall(VecCUDAGetArrayWrite(y, ya));
  else if (z == y) {
    PetscCall(VecCUDAGetArray(y, ya));
    *za = *ya;
  } else {
    PetscCall(VecCUDAGetArrayRead(z, za));
    PetscCall(VecCUDAGetArrayWrite(y, ya));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDARestoreOutArrays_Private(Vec z, Vec y, const PetscScalar **za, PetscScalar **ya)
{
  PetscFunctionBegin;
  if (!z) PetscCall(VecCUDARestoreArrayWrite(y, ya));
  else if (z == y) PetscCall(VecCUDARestoreArray(y, ya));
  else {
    PetscCall(VecCUDARestoreArrayRead(z, za));
    PetscCall(VecCUDARestoreArrayWrite(y, ya));
  }
  *za = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void AMBCUDACSR(const Mat_SeqAMBCUDA *cu, GpukitAMBCSR *csr)
{
  csr->m      = (int)cu->m;
  csr->n      = (int)cu->n;
  csr->nnz    = (int)cu->nnz;
  csr->rowptr = cu->rowptr;
  csr->colidx = cu->colidx;
}

/* the CSR the AMB layout is built from: the device CSR, or with diagonal segments its shifted columns colT (n + dshift
   of them) */
static void AMBCUDASegCSR(const Mat_SeqAMBCUDA *cu, long long dshift, GpukitAMBCSR *csr)
{
  AMBCUDACSR(cu, csr);
  if (dshift > 0) {
    csr->n      = (int)(cu->n + dshift);
    csr->colidx = cu->colT;
  }
}

static PetscErrorCode AMBCUDAFreeTranspose_Private(Mat_SeqAMBCUDA *cu)
{
  PetscFunctionBegin;
  if (cu->tptr) PetscCallCUDA(cudaFree(cu->tptr));
  if (cu->tcol) PetscCallCUDA(cudaFree(cu->tcol));
  if (cu->tperm) PetscCallCUDA(cudaFree(cu->tperm));
  if (cu->tval) PetscCallCUDA(cudaFree(cu->tval));
  if (cu->KT.longrow || cu->KT.chstart) {
    cudaStream_t stream;
    PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
    PetscCallCUDA(GpukitAMBCSRKFree(&cu->KT, stream));
  }
  cu->tptr = cu->tcol = cu->tperm = NULL;
  cu->tval                        = NULL;
  cu->tbuilt                      = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDAFreeLayout_Private(Mat_SeqAMBCUDA *cu)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  if (!cu->built && !cu->L.cs && !cu->L.src && !cu->L.pairptr) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
  PetscCallCUDA(GpukitAMBLayoutFree(&cu->L, stream)); /* back to the pool, no device synchronisation */
  cu->built = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* cuSPARSE's SELL descriptors (they hold S's FP64 value array): made again at the next cuSPARSE SELL product */
static PetscErrorCode AMBCUDASellDescrDestroy_Private(Mat_SeqAMBCUDA *cu)
{
  PetscFunctionBegin;
  if (cu->spsell) PetscCallCUSPARSE(cusparseDestroySpMat(cu->spsell));
  if (cu->ssx) PetscCallCUSPARSE(cusparseDestroyDnVec(cu->ssx));
  if (cu->ssy) PetscCallCUSPARSE(cusparseDestroyDnVec(cu->ssy));
  cu->spsell = NULL;
  cu->ssx = cu->ssy = NULL;
  cu->sellbufok     = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDAFreeSell_Private(Mat_SeqAMBCUDA *cu)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  PetscCall(AMBCUDASellDescrDestroy_Private(cu));
  if (cu->S.off || cu->S.col || cu->S.val || cu->S.val32) {
    PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
    PetscCallCUDA(GpukitAMBSellFree(&cu->S, stream));
  }
  cu->sellbuilt = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* S's FP64 value array, with the cuSPARSE descriptors that hold it */
static PetscErrorCode AMBCUDAFreeSellDouble_Private(Mat_SeqAMBCUDA *cu)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  PetscCall(AMBCUDASellDescrDestroy_Private(cu));
  PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
  PetscCallCUDA(GpukitAMBSellFreeValues(&cu->S, 0, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDAFreeCSRK_Private(Mat_SeqAMBCUDA *cu)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  if (cu->K.longrow || cu->K.chstart || cu->K.val32) {
    PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
    PetscCallCUDA(GpukitAMBCSRKFree(&cu->K, stream));
  }
  cu->csrkbuilt = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the diagonal-segment columns of the plan (ambkernels.h, DIAGONAL SEGMENTS) */
static PetscErrorCode AMBCUDAFreeColT_Private(Mat_SeqAMBCUDA *cu)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  if (cu->colT) {
    PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
    PetscCallCUDA(GpukitPoolFree(cu->colT, stream));
  }
  cu->colT = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device CSR comes from the stream-ordered pool (gpukitpool.h): no cudaMalloc()/cudaFree() device synchronisation */
static PetscErrorCode AMBCUDAFreeCSR_Private(Mat_SeqAMBCUDA *cu)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  if (cu->rowptr || cu->colidx || cu->val) {
    PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
    if (cu->rowptr) PetscCallCUDA(GpukitPoolFree(cu->rowptr, stream));
    if (cu->colidx) PetscCallCUDA(GpukitPoolFree(cu->colidx, stream));
    if (cu->val) PetscCallCUDA(GpukitPoolFree(cu->val, stream));
    /* cuSPARSE's descriptor and analysis were made for these arrays; the stream-ordered pool may hand the same addresses
       back for the next structure, which the helper's pointer check would take for the old one */
    PetscCall(GpukitCSRSpMVReset(&cu->csrmv, stream));
  }
  cu->rowptr = cu->colidx = NULL;
  cu->val                 = NULL;
  cu->csrvalid            = PETSC_FALSE;
  PetscCall(AMBCUDAFreeColT_Private(cu)); /* made from those columns */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   The device CSR: uploaded from the host AIJ arrays when they changed (structure: nonzerostate; values: object state)
   ------------------------------------------------------------------------------------------------------------------ */

static PetscErrorCode AMBCUDADestroy_Private(Mat);

/* the device CSR holds the host's current values (grace: one state increase after a device+host op is ours) */
static PetscErrorCode AMBCUDAInSync_Private(Mat A, PetscBool *insync)
{
  Mat_SeqAMBCUDA  *cu = AMBCUDAGet(A);
  PetscObjectState state;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  *insync = (PetscBool)(cu->csrvalid && cu->nzstate == A->nonzerostate && cu->m == A->rmap->n && cu->n == A->cmap->n && (cu->valstate == state || (cu->grace && state == cu->valstate + 1)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDASyncCSR_Private(Mat A)
{
  Mat_SeqAMBCUDA    *cu = AMBCUDAGet(A);
  PetscObjectState   state;
  PetscBool          insync, structure;
  const PetscInt    *ia, *ja;
  PetscScalar       *a;
  PetscMemType       mtype;
  PetscInt           m = A->rmap->n, n = A->cmap->n, nnz;
  cudaStream_t       stream;
  PetscLogDouble     bytes = 0;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  PetscCall(AMBCUDAInSync_Private(A, &insync));
  if (insync) {
    cu->valstate = state;
    cu->grace    = PETSC_FALSE;
    if (A->offloadmask != PETSC_OFFLOAD_GPU) A->offloadmask = PETSC_OFFLOAD_BOTH; /* GPU: a stale host copy stays stale */
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ia, &ja, &a, &mtype));
  PetscCheck(mtype == PETSC_MEMTYPE_HOST, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA: the AIJ arrays must be on the host");
  nnz = m > 0 ? ia[m] : 0;
  PetscCheck(m < INT_MAX && n < INT_MAX && nnz < INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "MATSEQAMBCUDA keeps 32-bit indices on the device: a block of %" PetscInt_FMT " x %" PetscInt_FMT " with %" PetscInt_FMT " nonzeros is too large; use more MPI ranks", m, n, nnz);
  PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
  PetscCall(PetscLogEventBegin(MAT_AMBCUDA_CopyUp, A, 0, 0, 0));
  structure = (PetscBool)(!cu->csrvalid || cu->nzstate != A->nonzerostate || cu->m != m || cu->n != n);
  if (structure) {
    PetscCall(AMBCUDAFreeCSR_Private(cu));
    PetscCall(AMBCUDAFreeLayout_Private(cu));
    PetscCall(AMBCUDAFreeSell_Private(cu));
    PetscCall(AMBCUDAFreeCSRK_Private(cu));
    PetscCall(AMBCUDAFreeTranspose_Private(cu));
    PetscCall(GpukitTunerDestroy(&cu->tuner));
    cu->planned = PETSC_FALSE;
    cu->m       = m;
    cu->n       = n;
    cu->nnz     = nnz;
    PetscCallCUDA(GpukitPoolMallocN(&cu->rowptr, (size_t)m + 1, stream));
    PetscCallCUDA(GpukitPoolMallocN(&cu->colidx, (size_t)PetscMax(nnz, 1), stream));
    PetscCallCUDA(GpukitPoolMallocN(&cu->val, (size_t)PetscMax(nnz, 1), stream));
    if (sizeof(PetscInt) == sizeof(int)) {
      PetscCallCUDA(cudaMemcpyAsync(cu->rowptr, ia, ((size_t)m + 1) * sizeof(int), cudaMemcpyHostToDevice, stream));
      if (nnz) PetscCallCUDA(cudaMemcpyAsync(cu->colidx, ja, (size_t)nnz * sizeof(int), cudaMemcpyHostToDevice, stream));
    } else { /* 64-bit PetscInt: narrowed on the host (checked above) */
      int *ti, *tj;
      PetscCall(PetscMalloc2(m + 1, &ti, PetscMax(nnz, 1), &tj));
      for (PetscInt i = 0; i <= m; i++) ti[i] = (int)ia[i];
      for (PetscInt e = 0; e < nnz; e++) tj[e] = (int)ja[e];
      PetscCallCUDA(cudaMemcpyAsync(cu->rowptr, ti, ((size_t)m + 1) * sizeof(int), cudaMemcpyHostToDevice, stream));
      if (nnz) PetscCallCUDA(cudaMemcpyAsync(cu->colidx, tj, (size_t)nnz * sizeof(int), cudaMemcpyHostToDevice, stream));
      PetscCallCUDA(cudaStreamSynchronize(stream));
      PetscCall(PetscFree2(ti, tj));
    }
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)((m + 1) + nnz) * sizeof(int)));
    cu->nstructup++;
  } else cu->nvalup++;
  if (nnz) PetscCallCUDA(cudaMemcpyAsync(cu->val, a, (size_t)nnz * sizeof(double), cudaMemcpyHostToDevice, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream)); /* the host array may change as soon as we return */
  bytes = (PetscLogDouble)nnz * sizeof(double);
  PetscCall(PetscLogCpuToGpu(bytes));
  PetscCall(PetscLogEventEnd(MAT_AMBCUDA_CopyUp, A, 0, 0, 0));
  cu->csrvalid    = PETSC_TRUE;
  cu->nzstate     = A->nonzerostate;
  cu->valstate    = state;
  cu->grace       = PETSC_FALSE;
  cu->ambvalstale  = PETSC_TRUE;
  cu->sellvalstale = PETSC_TRUE;
  cu->csrkvalstale = PETSC_TRUE;
  cu->tvalstale    = PETSC_TRUE;
  A->offloadmask   = PETSC_OFFLOAD_BOTH;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* after an op that changed the values on both sides the same way: the device is current; the Mat interface's state
   increase after the op is accepted once */
static PetscErrorCode AMBCUDADeviceFollowed_Private(Mat A)
{
  Mat_SeqAMBCUDA  *cu = AMBCUDAGet(A);
  PetscObjectState state;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  cu->valstate    = state;
  cu->grace       = PETSC_TRUE;
  cu->ambvalstale  = PETSC_TRUE; /* refreshed on the device at the next product, no transfer */
  cu->sellvalstale = PETSC_TRUE;
  cu->csrkvalstale = PETSC_TRUE;
  cu->tvalstale   = PETSC_TRUE;
  A->offloadmask  = PETSC_OFFLOAD_BOTH;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   The host copy after a device COO refresh. MatSetValuesCOO() sums the entries into the device CSR and, with
   -mat_amb_cuda_lazy_copydown (opt-in; default false: the copy at every refresh), leaves the host AIJ values stale: A->offloadmask = PETSC_OFFLOAD_GPU, the device
   holds the truth. The first host operation that reads the values copies them down (twin.copydown, event
   AMBCUDACopyDown): every host op of the type goes through a wrapper that syncs first (AMBCUDAHostOps below), and so do
   MatBindToCPU(), the converts, the products of PETSc's AIJ code (their symbolic and numeric phases) and PETSc's own
   factorizations (MatGetFactor() with MATSOLVERPETSC or no solver type). The device's state bookkeeping (valstate,
   grace) is unchanged: the host is stale only while the object state is the one of the refresh.
   ------------------------------------------------------------------------------------------------------------------ */

/* twin.copydown: every value device -> host, when the device CSR holds the current values (the object state is the one
   of the device refresh). When the state moved on without a hook (the host arrays written directly), the host copy is
   the newer one and is kept. */
static PetscErrorCode AMBCUDACopyDown_Private(Mat A, PetscLogDouble *bytes)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);
  PetscBool       insync;
  PetscScalar    *a;
  cudaStream_t    stream;

  PetscFunctionBegin;
  *bytes = 0;
  PetscCall(AMBCUDAInSync_Private(A, &insync));
  if (!insync) {
    PetscCall(PetscInfo(A, "gpukit: the host values changed after a device refresh without passing the device copy: the host copy is kept\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatSeqAIJGetCSRAndMemType(A, NULL, NULL, &a, NULL));
  PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
  if (cu->nnz) PetscCallCUDA(cudaMemcpyAsync(a, cu->val, (size_t)cu->nnz * sizeof(double), cudaMemcpyDeviceToHost, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream));
  *bytes = (PetscLogDouble)cu->nnz * sizeof(double);
  cu->ncopydown++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the host AIJ values of A are current when this returns (a copy down when only the device had them) */
static PetscErrorCode AMBCUDAHostSync_Private(Mat A)
{
  Mat_SeqAMB *amb;

  PetscFunctionBegin;
  if (!A || A->offloadmask != PETSC_OFFLOAD_GPU) PetscFunctionReturn(PETSC_SUCCESS);
  amb = (Mat_SeqAMB *)A->spptr;
  if (!amb || !amb->spdev || amb->devdestroy != AMBCUDADestroy_Private) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GpukitTwinCopyFromGPU(A, &AMBCUDAGet(A)->twin));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the same for any matrix (another operand of a host op): only a MATSEQAMBCUDA can hold a stale host copy */
static PetscErrorCode AMBCUDAHostSyncAny_Private(Mat X)
{
  PetscBool is;

  PetscFunctionBegin;
  if (!X || X->offloadmask != PETSC_OFFLOAD_GPU) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)X, MATSEQAMBCUDA, &is));
  if (is) PetscCall(AMBCUDAHostSync_Private(X));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   The plan: the traffic model's b, and AMB or the CSR fallback (the rules of ambimpl.h, on device counts)
   ------------------------------------------------------------------------------------------------------------------ */

/* diagonal segments (ambkernels.h): counted when -mat_amb_cuda_segments is auto and the column segments split rows (more
   pairs than rows, but fewer than 2 a row: rows in a band around the diagonal; scattered columns gain nothing from the
   shift, and a second count would only add to the conversion), none longer than 1024 entries, of at most
   AMBCUDA_SEG_AUTO_MAX_ROW entries on average
   (longer rows gain from the split: two threads share a row's work; band_wide, 126 a row on 320000 rows, ran 0.304 ms
   with one lane a row and 0.247 ms split, H200), or when it is diagonal; taken when the model's bytes
   with them are lower (auto) or always (diagonal). The counts of the choice become the plan's. */
static PetscErrorCode AMBCUDAPlanSegments_Private(Mat A, PetscInt v, PetscLogDouble *best)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);
  const PetscInt  W  = cu->planopt.W, m = cu->m, n = cu->n;
  const long long D  = ((long long)m + W - 1) / W * W + W / 2; /* >= m + W/2, = W/2 mod W: |col - row| < W/2 is one segment */
  long long       blk[GPUKIT_AMB_CUDA_MAX_B], npairs = 0, nlong = 0;
  PetscLogDouble  bestd = -1.0;
  PetscInt        bd    = 1;
  GpukitAMBCSR    csr;
  cudaStream_t    stream;

  PetscFunctionBegin;
  cu->dshift     = 0;
  cu->npairsdiag = 0;
  PetscCall(AMBCUDAFreeColT_Private(cu));
  if (cu->segmode == AMBCUDA_SEG_GRID) {
    PetscCall(PetscInfo(A, "gpukit: column segments: -mat_amb_cuda_segments grid\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if ((long long)n + D >= (long long)PETSC_INT32_MAX - W) {
    PetscCall(PetscInfo(A, "gpukit: diagonal segments need n + %lld columns below 2^31; column segments\n", D));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (cu->segmode == AMBCUDA_SEG_AUTO && !(cu->npairs > m && cu->npairs < 2 * (long long)m)) PetscFunctionReturn(PETSC_SUCCESS);
  if (cu->segmode == AMBCUDA_SEG_AUTO && cu->nlongrows > 0) { /* power-law rows: the second count cost powerlaw_band 2.2 ms (23 SpMVs of conversion) for a layout the tuner then left for CSR */
    PetscCall(PetscInfo(A, "gpukit: column segments: %lld rows of more than 1024 entries\n", cu->nlongrows));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (cu->segmode == AMBCUDA_SEG_AUTO && (PetscReal)cu->nnz > AMBCUDA_SEG_AUTO_MAX_ROW * (PetscReal)m) {
    PetscCall(PetscInfo(A, "gpukit: column segments: %.1f entries a row on average, more than %g (a split row shares its work between two threads)\n", (double)((PetscReal)cu->nnz / (PetscReal)m), (double)AMBCUDA_SEG_AUTO_MAX_ROW));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
  PetscCallCUDA(GpukitPoolMalloc((void **)&cu->colT, (size_t)PetscMax(cu->nnz, 1) * sizeof(int), stream));
  AMBCUDACSR(cu, &csr);
  PetscCall(PetscLogEventBegin(MAT_AMBCUDA_Plan, A, 0, 0, 0));
  PetscCallCUDA(GpukitAMBDiagColumnsCUDA(&csr, D, cu->colT, stream));
  AMBCUDASegCSR(cu, D, &csr);
  PetscCallCUDA(GpukitAMBBlockCountsCUDA(&csr, (int)W, blk, &npairs, &nlong, stream));
  PetscCall(PetscLogEventEnd(MAT_AMBCUDA_Plan, A, 0, 0, 0));
  for (PetscInt b = 1; b <= cu->bmax; b++) {
    PetscLogDouble bytes = AMBModelBytes((PetscCount)b * blk[b - 1], b, (PetscInt)((npairs + AMB_C - 1) / AMB_C), m, n, v);
    if (bestd < 0 || bytes < bestd) {
      bestd = bytes;
      bd    = b;
    }
  }
  cu->npairsdiag = npairs;
  if (cu->segmode == AMBCUDA_SEG_DIAGONAL || bestd < *best) {
    PetscCall(PetscInfo(A, "gpukit: diagonal segments (shift %lld): %lld (row, segment) pairs for %" PetscInt_FMT " rows against %lld with column segments; model %.4g bytes against %.4g%s\n", D, npairs, m, cu->npairsgrid, bestd, *best, cu->segmode == AMBCUDA_SEG_DIAGONAL ? " (-mat_amb_cuda_segments diagonal)" : ""));
    cu->dshift = D;
    for (PetscInt b = 0; b < GPUKIT_AMB_CUDA_MAX_B; b++) cu->blk[b] = blk[b];
    cu->npairs    = npairs;
    cu->nlongrows = nlong;
    cu->bmodel    = bd;
    *best         = bestd;
  } else {
    PetscCall(PetscInfo(A, "gpukit: column segments: %lld (row, segment) pairs against %lld with diagonal segments; model %.4g bytes against %.4g\n", cu->npairsgrid, npairs, *best, bestd));
    PetscCall(AMBCUDAFreeColT_Private(cu));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDAPlan_Private(Mat A)
{
  Mat_SeqAMB     *amb = (Mat_SeqAMB *)A->spptr;
  Mat_SeqAMBCUDA *cu  = AMBCUDAGet(A);
  AMBOptions      opt = amb->opt;
  PetscBool       same;
  PetscInt        m = cu->m, n = cu->n, v = opt.values == AMB_VALUES_SINGLE ? 4 : 8;
  PetscCount      nnz = cu->nnz;
  PetscLogDouble  best = -1.0;

  PetscFunctionBegin;
  PetscCall(PetscMemcmp(&cu->planopt, &opt, sizeof(opt), &same));
  if (cu->planned && same) PetscFunctionReturn(PETSC_SUCCESS);
  if (!same) PetscCall(GpukitTunerDestroy(&cu->tuner)); /* the knobs depend on the options */
  PetscCall(AMBOptionsCheck_Private((PetscObject)A, &opt));
  cu->decided = PETSC_FALSE; /* the layouts are chosen again (AMBCUDAPrepare_Private()) */
  cu->planopt  = opt;
  cu->bmax     = PetscMin(GPUKIT_AMB_CUDA_MAX_B, AMBClampB(GPUKIT_AMB_CUDA_MAX_B, n, opt.W));
  cu->bytescsr = AMBModelBytesCSR(nnz, m, n);
  cu->bmodel   = 1;
  cu->npairs   = 0;
  cu->nlongrows = 0;
  cu->dshift     = 0;
  cu->npairsgrid = cu->npairsdiag = 0;
  PetscCall(AMBCUDAFreeColT_Private(cu));
  if (opt.bset && opt.b > cu->bmax) PetscCall(PetscInfo(A, "gpukit: -mat_amb_b %" PetscInt_FMT ": the device kernels take b <= %" PetscInt_FMT " here (widths 1..%d, at most the last segment's width); using %" PetscInt_FMT "\n", opt.b, cu->bmax, GPUKIT_AMB_CUDA_MAX_B, cu->bmax));
  cu->fallback = PETSC_FALSE;
  cu->inband   = PETSC_FALSE;
  switch (opt.fallback_mode) {
  case AMB_FALLBACK_ALWAYS:
    cu->fallback = PETSC_TRUE;
    PetscCall(PetscSNPrintf(cu->why, sizeof(cu->why), "-mat_amb_csr_fallback always"));
    break;
  case AMB_FALLBACK_NEVER:
    PetscCall(PetscSNPrintf(cu->why, sizeof(cu->why), "-mat_amb_csr_fallback never"));
    break;
  case AMB_FALLBACK_AUTO:
    if (m == 0 || nnz == 0) {
      cu->fallback = PETSC_TRUE;
      PetscCall(PetscSNPrintf(cu->why, sizeof(cu->why), "no nonzeros"));
    } else if ((PetscReal)nnz / (PetscReal)m < AMB_FALLBACK_MIN_NNZ_ROW) {
      cu->fallback = PETSC_TRUE;
      PetscCall(PetscSNPrintf(cu->why, sizeof(cu->why), "%.2f nonzeros per row, fewer than %g", (double)((PetscReal)nnz / (PetscReal)m), (double)AMB_FALLBACK_MIN_NNZ_ROW));
    } else PetscCall(PetscSNPrintf(cu->why, sizeof(cu->why), "model: decided once the layout is built"));
    break;
  default:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Unknown MATAMB fallback mode %d", (int)opt.fallback_mode);
  }
  if (n == 0 || nnz == 0) cu->fallback = PETSC_TRUE; /* nothing to lay out: the CSR kernel sets y = z or 0 */
  /* block counts per b on the device (the zero fill of chunk padding is not counted), for the model's b: only when AMB
     may run (the rules above did not already choose the fallback: one kernel, one copy and one synchronisation less) */
  if (!cu->fallback && m > 0 && n > 0 && nnz > 0) {
    GpukitAMBCSR csr;
    cudaStream_t stream;
    PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
    AMBCUDACSR(cu, &csr);
    PetscCall(PetscLogEventBegin(MAT_AMBCUDA_Plan, A, 0, 0, 0));
    PetscCallCUDA(GpukitAMBBlockCountsCUDA(&csr, (int)opt.W, cu->blk, &cu->npairs, &cu->nlongrows, stream));
    PetscCall(PetscLogEventEnd(MAT_AMBCUDA_Plan, A, 0, 0, 0));
    for (PetscInt b = 1; b <= cu->bmax; b++) {
      PetscLogDouble bytes = AMBModelBytes((PetscCount)b * cu->blk[b - 1], b, (PetscInt)((cu->npairs + AMB_C - 1) / AMB_C), m, n, v);
      if (best < 0 || bytes < best) {
        best       = bytes;
        cu->bmodel = b;
      }
    }
    cu->npairsgrid = cu->npairs;
    PetscCall(AMBCUDAPlanSegments_Private(A, v, &best));
  }
  cu->bytes = best;
  cu->planned = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device layout with block width b, built on the device when the structure or a parameter changed, its values
   refreshed (each stored value from its CSR entry) when they lag behind the device CSR */
static PetscErrorCode AMBCUDAEnsureLayout_Private(Mat A, PetscInt b)
{
  Mat_SeqAMBCUDA *cu  = AMBCUDAGet(A);
  AMBOptions     *opt = &cu->planopt;
  AMBCUDAKey      key;
  PetscBool       same;
  cudaStream_t    stream;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&key, sizeof(key)));
  key.b      = b;
  key.W      = opt->W;
  key.sigma  = opt->sigma;
  key.single = (PetscBool)(opt->values == AMB_VALUES_SINGLE);
  key.longnb = cu->longnb;
  key.dshift = cu->dshift;
  PetscCall(PetscMemcmp(&key, &cu->key, sizeof(key), &same));
  PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
  if (!cu->built || !same) {
    GpukitAMBCSR csr;
    PetscCheck(b >= 1 && b <= cu->bmax, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA: block width %" PetscInt_FMT " outside 1..%" PetscInt_FMT, b, cu->bmax);
    PetscCall(AMBCUDAFreeLayout_Private(cu));
    size_t pool0 = 0, pool1 = 0;
    PetscCheck(!key.dshift || cu->colT, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA: diagonal segments without their columns");
    AMBCUDASegCSR(cu, key.dshift, &csr);
    PetscCallCUDA(GpukitPoolReserved(&pool0));
    PetscCall(PetscLogEventBegin(MAT_AMBCUDA_Build, A, 0, 0, 0));
    PetscCallCUDA(GpukitAMBBuildCUDA(&csr, (int)b, (int)key.W, (int)key.sigma, key.single ? 1 : 0, (int)key.longnb, key.dshift, &cu->L, stream));
    PetscCall(PetscLogEventEnd(MAT_AMBCUDA_Build, A, 0, 0, 0));
    PetscCallCUDA(GpukitPoolReserved(&pool1));
    PetscCall(PetscInfo(A, "gpukit: AMB build's phases (host wall time at its synchronisations): pairs %.3f ms, sort %.3f ms, chunks %.3f ms, fill %.3f ms; gpukit's pool held %.1f MiB before, %.1f MiB after\n", cu->L.tphase[0], cu->L.tphase[1], cu->L.tphase[2], cu->L.tphase[3], (double)pool0 / 1048576.0, (double)pool1 / 1048576.0));
    cu->built       = PETSC_TRUE;
    cu->key         = key;
    cu->ambvalstale = PETSC_TRUE;
    cu->nbuild++;
    cu->bytes = AMBModelBytes((PetscCount)cu->L.nval, b, (PetscInt)cu->L.nchunks, cu->m, cu->n, key.single ? 4 : 8);
    PetscCall(PetscInfo(A, "gpukit: AMB layout built on the device (build %" PetscInt_FMT "): %" PetscInt_FMT " x %" PetscInt_FMT ", nnz %" PetscInt_FMT ", b %" PetscInt_FMT ", W %" PetscInt_FMT ", sigma %" PetscInt_FMT ", %lld chunks (longest %d blocks), %lld stored values, %lld rows with no or several segments, %lld slices of long chunks (limit %d blocks), %s values, %s segments, model %.4g bytes (CSR %.4g)\n", cu->nbuild, cu->m, cu->n, cu->nnz, b, key.W, key.sigma, cu->L.nchunks, cu->L.maxnblk, cu->L.nval, cu->L.ninit, cu->L.nslices, cu->L.longnb, key.single ? "single" : "double", key.dshift ? "diagonal" : "column", cu->bytes, cu->bytescsr));
  }
  if (cu->ambvalstale) {
    PetscCall(PetscLogEventBegin(MAT_AMBCUDA_Refresh, A, 0, 0, 0));
    PetscCall(PetscLogGpuTimeBegin());
    PetscCallCUDA(GpukitAMBRefreshCUDA(&cu->L, cu->val, stream));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(PetscLogEventEnd(MAT_AMBCUDA_Refresh, A, 0, 0, 0));
    cu->ambvalstale = PETSC_FALSE;
    cu->nrefresh++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the layout keeps FP32 values: gpukit's SELL and CSR kernels with -mat_amb_values single (cuSPARSE's SELL and CSR
   have no FP32-matrix x FP64-vector product) */
static inline PetscBool AMBCUDASingle(const Mat_SeqAMBCUDA *cu, PetscInt layout)
{
  return (PetscBool)(cu->planopt.values == AMB_VALUES_SINGLE && (layout == AMBCUDA_LAYOUT_SELLK || layout == AMBCUDA_LAYOUT_CSRK));
}

/* SELL-32 on the device, built from the device CSR when missing, its values refreshed when they lag behind; the value
   array the layout runs with (FP64 for cuSPARSE's SELL, FP32 for gpukit's kernel in single mode) allocated when missing
   (layout -1: only the refresh of the arrays there are) */
static PetscErrorCode AMBCUDAEnsureSell_Private(Mat A, PetscInt layout)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);
  GpukitAMBCSR    csr;
  cudaStream_t    stream;
  int             fresh = 0;

  PetscFunctionBegin;
  PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
  AMBCUDACSR(cu, &csr);
  if (!cu->sellbuilt) {
    PetscCall(AMBCUDAFreeSell_Private(cu));
    PetscCall(PetscLogEventBegin(MAT_AMBCUDA_SellBuild, A, 0, 0, 0));
    PetscCallCUDA(GpukitAMBSellBuildCUDA(&csr, &cu->S, stream));
    PetscCallCUDA(cudaStreamSynchronize(stream)); /* once per structure: the event then holds the whole build */
    PetscCall(PetscLogEventEnd(MAT_AMBCUDA_SellBuild, A, 0, 0, 0));
    cu->sellbuilt    = PETSC_TRUE;
    cu->sellvalstale = PETSC_TRUE;
    cu->nsellbuild++;
    PetscCall(PetscInfo(A, "gpukit: SELL-32 built on the device: %" PetscInt_FMT " rows, %lld slices, %lld stored entries for %" PetscInt_FMT " nonzeros\n", cu->m, cu->S.nslices, cu->S.nval, cu->nnz));
  }
  if (layout >= 0) {
    PetscCallCUDA(GpukitAMBSellAllocValues(&cu->S, AMBCUDASingle(cu, layout) ? 1 : 0, &fresh, stream));
    if (!cu->tuner) { /* one layout runs: the other precision's array (left by a -mat_amb_values change) goes */
      if (AMBCUDASingle(cu, layout) && cu->S.val) PetscCall(AMBCUDAFreeSellDouble_Private(cu));
      else if (!AMBCUDASingle(cu, layout) && cu->S.val32) PetscCallCUDA(GpukitAMBSellFreeValues(&cu->S, 1, stream));
    }
  }
  if (fresh) cu->sellvalstale = PETSC_TRUE; /* every allocated array is refreshed together */
  if (cu->sellvalstale) {
    PetscCall(PetscLogEventBegin(MAT_AMBCUDA_Refresh, A, 0, 0, 0));
    PetscCallCUDA(GpukitAMBSellRefreshCUDA(&csr, &cu->S, cu->val, stream));
    PetscCall(PetscLogEventEnd(MAT_AMBCUDA_Refresh, A, 0, 0, 0));
    cu->sellvalstale = PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* gpukit's CSR kernel: its long-row lists (and FP32 copy of the values in single mode) built when missing, the copy
   refreshed when it lags behind */
static PetscErrorCode AMBCUDAEnsureCSRK_Private(Mat A)
{
  Mat_SeqAMBCUDA *cu     = AMBCUDAGet(A);
  PetscBool       single = AMBCUDASingle(cu, AMBCUDA_LAYOUT_CSRK), det = cu->planopt.deterministic;
  GpukitAMBCSR    csr;
  cudaStream_t    stream;

  PetscFunctionBegin;
  PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
  AMBCUDACSR(cu, &csr);
  if (cu->csrkbuilt && ((PetscBool)(cu->K.val32 != NULL) != single || (PetscBool)(cu->K.det != 0) != det)) PetscCall(AMBCUDAFreeCSRK_Private(cu)); /* -mat_amb_values or -mat_amb_deterministic changed */
  if (!cu->csrkbuilt) {
    PetscCall(AMBCUDAFreeCSRK_Private(cu));
    PetscCall(PetscLogEventBegin(MAT_AMBCUDA_CSRKBuild, A, 0, 0, 0));
    PetscCallCUDA(GpukitAMBCSRKBuildCUDA(&csr, (int)cu->csrlanes, (int)cu->csrlong, single ? 1 : 0, det ? 1 : 0, &cu->K, stream));
    PetscCall(PetscLogEventEnd(MAT_AMBCUDA_CSRKBuild, A, 0, 0, 0));
    cu->csrkbuilt    = PETSC_TRUE;
    cu->csrkvalstale = PETSC_TRUE;
    PetscCall(PetscInfo(A, "gpukit: CSR kernel set up: %s values, %d lanes a row, %d rows of more than %d entries in %lld chunks%s\n", single ? "FP32" : "FP64", cu->K.tpr, cu->K.nlong, cu->K.longlen, cu->K.nchunks, det ? " (deterministic: one block a long row, no atomics)" : ""));
  }
  if (cu->csrkvalstale) {
    if (cu->K.val32) {
      PetscCall(PetscLogEventBegin(MAT_AMBCUDA_Refresh, A, 0, 0, 0));
      PetscCallCUDA(GpukitAMBCSRKRefreshCUDA(&cu->K, cu->val, stream));
      PetscCall(PetscLogEventEnd(MAT_AMBCUDA_Refresh, A, 0, 0, 0));
    }
    cu->csrkvalstale = PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the candidates of the "layout" knob, from the plan's decision (AMB or the fallback), -mat_amb_csr_fallback and
   -mat_amb_cuda_sell; the first is the start (the one used without tuning) */
static PetscErrorCode AMBCUDALayouts_Private(Mat A)
{
  Mat_SeqAMBCUDA *cu   = AMBCUDAGet(A);
  PetscBool       have = PETSC_FALSE, sellfits = PETSC_FALSE;
  AMBFallbackMode mode = cu->planopt.fallback_mode;

  PetscFunctionBegin;
#if defined(GPUKIT_AMBCUDA_HAVE_CUSPARSE_SELL)
  have = PETSC_TRUE;
#endif
  cu->nlayouts = 0;
  cu->sellnval = -1;
  PetscCall(PetscStrncpy(cu->sellwhy, "-mat_amb_cuda_sell off", sizeof(cu->sellwhy)));
  if (cu->sellmode != AMBCUDA_SELL_OFF && cu->m > 0 && cu->n > 0 && cu->nnz > 0 && (cu->sellmode != AMBCUDA_SELL_TUNE || mode == AMB_FALLBACK_AUTO)) {
    GpukitAMBCSR csr;
    cudaStream_t stream;
    PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
    AMBCUDACSR(cu, &csr);
    PetscCall(PetscLogEventBegin(MAT_AMBCUDA_Plan, A, 0, 0, 0));
    PetscCallCUDA(GpukitAMBSellSizeCUDA(&csr, &cu->sellnval, stream));
    PetscCall(PetscLogEventEnd(MAT_AMBCUDA_Plan, A, 0, 0, 0));
    sellfits = (PetscBool)(cu->sellnval < (long long)INT_MAX);
    if (!sellfits) PetscCall(PetscSNPrintf(cu->sellwhy, sizeof(cu->sellwhy), "SELL-32 would store %lld entries, beyond 32-bit offsets", cu->sellnval));
    else PetscCall(PetscSNPrintf(cu->sellwhy, sizeof(cu->sellwhy), "SELL-32 stores %.3g entries per nonzero", (double)cu->sellnval / (double)cu->nnz));
  } else if (cu->sellmode == AMBCUDA_SELL_TUNE) PetscCall(PetscStrncpy(cu->sellwhy, mode == AMB_FALLBACK_AUTO ? "no entries" : "not with -mat_amb_csr_fallback always/never", sizeof(cu->sellwhy)));
  if (cu->sellmode == AMBCUDA_SELL_CUSPARSE || cu->sellmode == AMBCUDA_SELL_KERNEL) {
    PetscCheck(cu->sellmode != AMBCUDA_SELL_CUSPARSE || have, PETSC_COMM_SELF, PETSC_ERR_SUP, "-mat_amb_cuda_sell cusparse needs cuSPARSE's sliced ELLPACK (CUDA 12.1 or later); this build has CUSPARSE_VERSION %d; use -mat_amb_cuda_sell kernel", (int)CUSPARSE_VERSION);
    if (cu->m > 0 && cu->n > 0 && cu->nnz > 0) {
      PetscCheck(sellfits, PETSC_COMM_SELF, PETSC_ERR_SUP, "-mat_amb_cuda_sell %s: %s; use more MPI ranks or another layout", AMBCUDASellModes[cu->sellmode], cu->sellwhy);
      cu->layouts[cu->nlayouts++] = cu->sellmode == AMBCUDA_SELL_CUSPARSE ? AMBCUDA_LAYOUT_SELL : AMBCUDA_LAYOUT_SELLK;
      cu->fallback                = PETSC_TRUE;
      PetscCall(PetscSNPrintf(cu->why, sizeof(cu->why), "-mat_amb_cuda_sell %s", AMBCUDASellModes[cu->sellmode]));
    } else cu->layouts[cu->nlayouts++] = AMBCUDA_LAYOUT_CSR; /* nothing to lay out */
  } else {
    if (cu->inband && !cu->fallback) { /* the model's tie: CSR first (AMBCUDAPrepare_Private()) */
      cu->layouts[cu->nlayouts++] = AMBCUDA_LAYOUT_CSR;
      cu->layouts[cu->nlayouts++] = AMBCUDA_LAYOUT_AMB;
    } else {
      if (!cu->fallback) cu->layouts[cu->nlayouts++] = AMBCUDA_LAYOUT_AMB;
      /* CSR next to AMB only without -mat_amb_deterministic (cuSPARSE's CSR ALG1 promises no bitwise repeatability) */
      if (cu->fallback || (mode == AMB_FALLBACK_AUTO && !cu->planopt.deterministic)) cu->layouts[cu->nlayouts++] = AMBCUDA_LAYOUT_CSR;
    }
    if (cu->sellmode == AMBCUDA_SELL_TUNE && mode == AMB_FALLBACK_AUTO && sellfits) {
      if ((double)cu->sellnval > AMBCUDA_SELL_MAX_FILL * (double)cu->nnz) {
        size_t len;
        PetscCall(PetscStrlen(cu->sellwhy, &len));
        PetscCall(PetscSNPrintf(cu->sellwhy + len, sizeof(cu->sellwhy) - len, ", more than %g: not a candidate", (double)AMBCUDA_SELL_MAX_FILL));
      } else {
        if (have && !cu->planopt.deterministic) cu->layouts[cu->nlayouts++] = AMBCUDA_LAYOUT_SELL;
        cu->layouts[cu->nlayouts++] = AMBCUDA_LAYOUT_SELLK;
      }
    }
  }
  /* gpukit's CSR kernel (-mat_amb_cuda_csr): in place of cuSPARSE's, or a candidate right after it (not with
     -mat_amb_deterministic: its long rows add with atomics) */
  if (cu->csrmode == AMBCUDA_CSR_KERNEL) {
    for (PetscInt i = 0; i < cu->nlayouts; i++)
      if (cu->layouts[i] == AMBCUDA_LAYOUT_CSR) cu->layouts[i] = AMBCUDA_LAYOUT_CSRK;
  } else if (cu->csrmode == AMBCUDA_CSR_TUNE && mode == AMB_FALLBACK_AUTO && !cu->planopt.deterministic && cu->m > 0 && cu->n > 0 && cu->nnz > 0) {
    for (PetscInt i = 0; i < cu->nlayouts; i++) {
      if (cu->layouts[i] != AMBCUDA_LAYOUT_CSR) continue;
      for (PetscInt j = cu->nlayouts; j > i + 1; j--) cu->layouts[j] = cu->layouts[j - 1];
      cu->layouts[i + 1] = AMBCUDA_LAYOUT_CSRK;
      cu->nlayouts++;
      break;
    }
  }
  {
    PetscBool hasamb = PETSC_FALSE, hassell = PETSC_FALSE, hascsrk = PETSC_FALSE;
    for (PetscInt i = 0; i < cu->nlayouts; i++) {
      cu->layoutlabels[i] = AMBCUDALayoutNames[cu->layouts[i]];
      hasamb              = (PetscBool)(hasamb || cu->layouts[i] == AMBCUDA_LAYOUT_AMB);
      hassell             = (PetscBool)(hassell || cu->layouts[i] == AMBCUDA_LAYOUT_SELL || cu->layouts[i] == AMBCUDA_LAYOUT_SELLK);
      hascsrk             = (PetscBool)(hascsrk || cu->layouts[i] == AMBCUDA_LAYOUT_CSRK);
    }
    if (!hasamb) PetscCall(AMBCUDAFreeLayout_Private(cu)); /* device memory of layouts that cannot run */
    if (!hassell) PetscCall(AMBCUDAFreeSell_Private(cu));
    if (!hascsrk) PetscCall(AMBCUDAFreeCSRK_Private(cu));
  }
  cu->layout    = cu->layouts[0];
  cu->fallback  = (PetscBool)(cu->layout != AMBCUDA_LAYOUT_AMB);
  cu->tuneclean = PETSC_FALSE;
  cu->decided   = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* device CSR current, plan made; for AMB (auto mode) the model on the built layout may still choose the fallback; then
   the layouts the product may run */
static PetscErrorCode AMBCUDAPrepare_Private(Mat A)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);

  PetscFunctionBegin;
  PetscCheck(A->assembled, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "MATSEQAMBCUDA: the matrix must be assembled before a product");
  PetscCall(AMBCUDASyncCSR_Private(A));
  PetscCall(AMBCUDAPlan_Private(A));
  if (!cu->decided) {
    if (!cu->fallback && cu->planopt.fallback_mode == AMB_FALLBACK_AUTO && cu->sellmode != AMBCUDA_SELL_CUSPARSE && cu->sellmode != AMBCUDA_SELL_KERNEL) {
      PetscInt       b     = cu->planopt.bset ? PetscMin(cu->planopt.b, cu->bmax) : cu->bmodel;
      PetscInt       v     = cu->planopt.values == AMB_VALUES_SINGLE ? 4 : 8;
      GpukitTuneMode tmode;
      PetscReal      ratio = AMB_FALLBACK_RATIO;
      /* the model counts bytes and assumes both kernels move them equally fast. They do not: cuSPARSE's CSR reached
         53% of the copy bandwidth on P1 FEM rows (H200), the AMB kernel 77%; there the built layout had 0.98 x CSR's
         bytes, the model kept CSR, and CSR ran at 0.68 x AMB's speed. So when the tuner will time the layouts and no
         row is longer than 1024 entries, a layout of up to AMBCUDA_TUNE_RATIO x CSR's bytes stays a candidate behind CSR
         (cu->inband): CSR starts, and AMB replaces it only when the tuner times it faster by its threshold. Not with
         long rows: there chunk padding takes the built layout far past the lower bound below (power-law rows: 1.2 x on
         the bound, more than that built, 50-140 SpMVs of conversion for a layout that cannot run) */
      PetscCall(GpukitTuneGetMode(&tmode));
      if (cu->autotune && tmode != GPUKIT_TUNE_OFF && !cu->planopt.deterministic && cu->nlongrows == 0) ratio = AMBCUDA_TUNE_RATIO;
      /* the model without chunk padding is a lower bound of the built layout's (stored values b*blk <= nval, chunks
         ceil(npairs/32) <= the segments' chunks, and the model grows with both): when it already says CSR, so would
         the layout, and the build is skipped */
      PetscLogDouble lower = AMBModelBytes((PetscCount)b * cu->blk[b - 1], b, (PetscInt)((cu->npairs + AMB_C - 1) / AMB_C), cu->m, cu->n, v);
      if (lower > ratio * cu->bytescsr) {
        cu->fallback = PETSC_TRUE;
        PetscCall(PetscSNPrintf(cu->why, sizeof(cu->why), "model: AMB >= %.4g bytes (b %" PetscInt_FMT ", before chunk padding) > %g x CSR %.4g bytes", lower, b, (double)ratio, cu->bytescsr));
      } else {
        PetscCall(AMBCUDAEnsureLayout_Private(A, b)); /* the exact bytes, padding included */
        if (cu->bytes > ratio * cu->bytescsr) {
          cu->fallback = PETSC_TRUE;
          PetscCall(PetscSNPrintf(cu->why, sizeof(cu->why), "model: AMB %.4g bytes > %g x CSR %.4g bytes", cu->bytes, (double)ratio, cu->bytescsr));
          PetscCall(AMBCUDAFreeLayout_Private(cu));
        } else if (cu->bytes > AMB_FALLBACK_RATIO * cu->bytescsr) {
          cu->inband = PETSC_TRUE;
          PetscCall(PetscSNPrintf(cu->why, sizeof(cu->why), "model: AMB %.4g bytes, between %g and %g x CSR %.4g bytes: CSR first, the tuner times AMB", cu->bytes, (double)AMB_FALLBACK_RATIO, (double)ratio, cu->bytescsr));
        } else PetscCall(PetscSNPrintf(cu->why, sizeof(cu->why), "model: AMB %.4g bytes <= %g x CSR %.4g bytes", cu->bytes, (double)AMB_FALLBACK_RATIO, cu->bytescsr));
      }
    }
    PetscCall(AMBCUDALayouts_Private(A));
    {
      char   list[64] = "";
      size_t len;
      for (PetscInt i = 0; i < cu->nlayouts; i++) {
        PetscCall(PetscStrlen(list, &len));
        PetscCall(PetscSNPrintf(list + len, sizeof(list) - len, "%s%s", i ? "," : "", cu->layoutlabels[i]));
      }
      PetscCall(PetscInfo(A, "gpukit: device product starts with the %s layout (%s); candidates %s (SELL: %s)\n", AMBCUDALayoutNames[cu->layout], cu->why, list, cu->sellwhy));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   The product's knobs on gpukit's tuner: "b" (1..bmax, ordered, starting at the model's b; fixed by -mat_amb_b) and
   "block" (threads per block, ordered, starting at 256; fixed by -mat_amb_cuda_block_size). A candidate with another
   b rebuilds the layout on the device (untimed) before it is timed.
   ------------------------------------------------------------------------------------------------------------------ */

/* in band (CSR first): b and the block size other than AMB's starting ones only with the AMB layout (CSR and SELL
   would be timed again for nothing, each other b after a rebuild); vals in the knobs' order (cu->kb, kblk, klay) */
static PetscBool AMBCUDATuneValid_Private(void *ctx, const PetscInt vals[])
{
  const Mat_SeqAMBCUDA *cu = (const Mat_SeqAMBCUDA *)ctx;
  return (PetscBool)(vals[cu->klay] == AMBCUDA_LAYOUT_AMB || (vals[cu->kb] == cu->tunevals[0] && vals[cu->kblk] == cu->tunevals[1]));
}

static PetscErrorCode AMBCUDATunerSetUp_Private(Mat A)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);
  GpukitTuneKnob  knobs[3], kn_b, kn_blk, kn_lay;
  char            csr[128], shape[256];
  const PetscInt  nblocks = (PetscInt)(sizeof(AMBCUDATuneBlocks) / sizeof(AMBCUDATuneBlocks[0]));
  PetscBool       hasamb  = PETSC_FALSE;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < cu->nlayouts; i++) hasamb = (PetscBool)(hasamb || cu->layouts[i] == AMBCUDA_LAYOUT_AMB);
  if (!cu->autotune || (cu->nlayouts < 2 && !hasamb)) { /* nothing to choose */
    PetscCall(GpukitTunerDestroy(&cu->tuner));
    cu->kb   = 0;
    cu->kblk = 1;
    cu->klay = 2;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (cu->tuner) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscMemzero(knobs, sizeof(knobs)));
  PetscCall(PetscMemzero(&kn_b, sizeof(kn_b)));
  PetscCall(PetscMemzero(&kn_blk, sizeof(kn_blk)));
  PetscCall(PetscMemzero(&kn_lay, sizeof(kn_lay)));
  kn_b.name = "b";
  if (!hasamb) { /* no AMB candidate: b and the block size do not matter */
    kn_b.n         = 1;
    kn_b.values[0] = PetscMax(1, cu->planopt.bset ? PetscMin(cu->planopt.b, cu->bmax) : cu->bmodel);
  } else if (cu->planopt.bset) {
    kn_b.n         = 1;
    kn_b.values[0] = PetscMin(cu->planopt.b, cu->bmax);
  } else {
    kn_b.n = cu->bmax;
    for (PetscInt b = 1; b <= cu->bmax; b++) kn_b.values[b - 1] = b;
    kn_b.start = cu->bmodel - 1;
  }
  kn_blk.name = "block";
  if (cu->fixblock || !hasamb) {
    kn_blk.n         = 1;
    kn_blk.values[0] = cu->block;
  } else {
    kn_blk.n = nblocks;
    for (PetscInt i = 0; i < nblocks; i++) {
      kn_blk.values[i] = AMBCUDATuneBlocks[i];
      if (AMBCUDATuneBlocks[i] == GPUKIT_AMBCUDA_BLOCK) kn_blk.start = i;
    }
  }
  cu->tunevals[0] = kn_b.values[kn_b.start];
  cu->tunevals[1] = kn_blk.values[kn_blk.start];
  kn_lay.name   = "layout";
  kn_lay.n      = cu->nlayouts;
  kn_lay.labels = cu->layoutlabels;
  for (PetscInt i = 0; i < cu->nlayouts; i++) kn_lay.values[i] = cu->layouts[i];
  /* The greedy walk visits each knob once. Normally the layout comes last: AMB's b and block size are tuned first
     and the other layouts meet the tuned AMB kernel. In the band CSR starts, so the layout comes first: AMB is timed
     against CSR at its starting b and block size, and when it wins, b and the block size are tuned for it (with the
     layout last they were walked while CSR ran, where only the starting values are valid: fem_p1 1.15x against 1.46x) */
  if (cu->inband && hasamb) {
    cu->klay = 0;
    cu->kb   = 1;
    cu->kblk = 2;
  } else {
    cu->kb   = 0;
    cu->kblk = 1;
    cu->klay = 2;
  }
  knobs[cu->kb]   = kn_b;
  knobs[cu->kblk] = kn_blk;
  knobs[cu->klay] = kn_lay;
  PetscCall(GpukitTuneShapeCSR(cu->m, (PetscCount)cu->nnz, 0, csr, sizeof(csr)));
  if (cu->csrvalid) { /* the columns' locality: a 3-D stencil and the same matrix under a random permutation share the class above */
    cudaStream_t stream;
    PetscReal    span;

    PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
    PetscCall(GpukitCSRMeanRowSpan(cu->m, cu->rowptr, cu->colidx, stream, &span));
    PetscCall(GpukitTuneShapeAppendSpan(span, csr, sizeof(csr)));
  }
  PetscCall(PetscSNPrintf(shape, sizeof(shape), "n%d.W%" PetscInt_FMT ".s%" PetscInt_FMT ".%s%s.%s", (int)PetscCeilReal(PetscLog2Real((PetscReal)PetscMax(cu->n, 1))), cu->planopt.W, cu->planopt.sigma, cu->planopt.values == AMB_VALUES_SINGLE ? "f32" : "f64", cu->planopt.deterministic ? ".det" : "", csr));
  { /* a fixed kernel parameter is another configuration: it names itself in the key (lanes and long-row threshold of
       gpukit's CSR kernel, the long-chunk limit); the automatic values keep the plain key */
    const struct {
      const char *tag;
      PetscInt    v;
    } fixed[] = {{"csrl", cu->csrlanes}, {"csrL", cu->csrlong}, {"L", cu->longnb}, {"dg", cu->dshift > 0 ? 1 : 0}};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
      size_t len;
      if (fixed[i].v <= 0) continue;
      PetscCall(PetscStrlen(shape, &len));
      PetscCall(PetscSNPrintf(shape + len, sizeof(shape) - len, ".%s%" PetscInt_FMT, fixed[i].tag, fixed[i].v));
    }
  }
  PetscCall(GpukitTunerCreate((PetscObject)A, "amb_mult", 3, knobs, &cu->tuner));
  if (cu->inband && hasamb) PetscCall(GpukitTunerSetValid(cu->tuner, AMBCUDATuneValid_Private, cu));
  PetscCall(GpukitTunerSetShape(cu->tuner, shape));
  PetscCall(GpukitTunerSetDevice(cu->tuner, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the b, threads per block and layout in use: the tuner's current choice, or the fixed/model values without a tuner */
static PetscErrorCode AMBCUDAGetConfig3_Private(Mat A, PetscInt *b, PetscInt *block, PetscInt *layout)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);

  PetscFunctionBegin;
  if (cu->tuner) {
    const PetscInt *cfg;
    PetscCall(GpukitTunerGetConfig(cu->tuner, &cfg, NULL));
    *b      = cfg[cu->kb];
    *block  = cfg[cu->kblk];
    *layout = cfg[cu->klay];
  } else {
    *b      = PetscMax(1, cu->planopt.bset ? PetscMin(cu->planopt.b, cu->bmax) : cu->bmodel);
    *block  = cu->block;
    *layout = cu->nlayouts > 0 ? cu->layouts[0] : AMBCUDA_LAYOUT_CSR;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDAGetConfig_Private(Mat A, PetscInt *b, PetscInt *block)
{
  PetscInt layout;

  PetscFunctionBegin;
  PetscCall(AMBCUDAGetConfig3_Private(A, b, block, &layout));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   Products
   ------------------------------------------------------------------------------------------------------------------ */

/* the CSR fallback: y = A x (za NULL) or y = z + A x through cuSPARSE's CSR SpMV with what MATAIJCUSPARSE uses per
   default (gpukit's shared GpukitCSRSpMVApply(): ALG1 and its analysis once per device CSR), so that a matrix the model
   keeps on CSR runs as fast as with aijcusparse; the descriptor is made again only when the device CSR arrays were
   reallocated (new structure) */
static PetscErrorCode AMBCUDACusparseMult_Private(Mat A, const double *xa, const double *za, double *ya, cudaStream_t stream)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);

  PetscFunctionBegin;
  PetscCall(GpukitCSRSpMVApply(&cu->csrmv, cu->m, cu->n, (PetscCount)cu->nnz, cu->rowptr, cu->colidx, cu->val, xa, za, ya, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* SELL-32 through cuSPARSE's sliced ELLPACK SpMV (CUSPARSE_SPMV_SELL_ALG1): the descriptor and work buffer are made once
   per built SELL; per call the stream, the two vector pointers and the SpMV (and z -> y for y = z + A x, z != y) */
static PetscErrorCode AMBCUDASellCusparseMult_Private(Mat A, const double *xa, const double *za, double *ya, cudaStream_t stream)
{
#if defined(GPUKIT_AMBCUDA_HAVE_CUSPARSE_SELL)
  Mat_SeqAMBCUDA  *cu  = AMBCUDAGet(A);
  const double     one = 1.0, zero = 0.0;
  cusparseHandle_t h;

  PetscFunctionBegin;
  PetscCall(GpukitCUSPARSEGetHandle(stream, &h));
  if (!cu->spsell) {
    PetscCallCUSPARSE(cusparseCreateSlicedEll(&cu->spsell, cu->m, cu->n, cu->nnz, cu->S.nval, GPUKIT_AMB_C, cu->S.off, cu->S.col, cu->S.val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    PetscCallCUSPARSE(cusparseCreateDnVec(&cu->ssx, cu->n, (void *)xa, CUDA_R_64F));
    PetscCallCUSPARSE(cusparseCreateDnVec(&cu->ssy, cu->m, (void *)ya, CUDA_R_64F));
    cu->sellbufok = PETSC_FALSE;
  }
  PetscCallCUSPARSE(cusparseDnVecSetValues(cu->ssx, (void *)xa));
  PetscCallCUSPARSE(cusparseDnVecSetValues(cu->ssy, (void *)ya));
  if (za && za != ya) PetscCallCUDA(cudaMemcpyAsync(ya, za, (size_t)cu->m * sizeof(double), cudaMemcpyDeviceToDevice, stream));
  if (!cu->sellbufok) {
    size_t need = 0;
    PetscCallCUSPARSE(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, cu->spsell, cu->ssx, &one, cu->ssy, CUDA_R_64F, CUSPARSE_SPMV_SELL_ALG1, &need));
    if (need > cu->sellbufsize) {
      if (cu->sellbuf) PetscCallCUDA(GpukitPoolFree(cu->sellbuf, stream));
      cu->sellbuf = NULL;
      PetscCallCUDA(GpukitPoolMalloc(&cu->sellbuf, need ? need : 1, stream));
      cu->sellbufsize = need;
    }
    cu->sellbufok = PETSC_TRUE;
  }
  PetscCallCUSPARSE(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, cu->spsell, cu->ssx, za ? &one : &zero, cu->ssy, CUDA_R_64F, CUSPARSE_SPMV_SELL_ALG1, cu->sellbuf));
  PetscFunctionReturn(PETSC_SUCCESS);
#else
  PetscFunctionBegin;
  (void)xa;
  (void)za;
  (void)ya;
  (void)stream;
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "MATSEQAMBCUDA: cuSPARSE's sliced ELLPACK needs CUDA 12.1 or later (CUSPARSE_VERSION >= 12100)");
#endif
}

/* the layout's data for a candidate: built (untimed) when missing, values refreshed when they lag */
static PetscErrorCode AMBCUDAReady_Private(Mat A, PetscInt b, PetscInt layout, PetscBool *ready)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);

  PetscFunctionBegin;
  switch (layout) {
  case AMBCUDA_LAYOUT_AMB:
    *ready = (PetscBool)(cu->built && cu->key.b == b && !cu->ambvalstale);
    break;
  case AMBCUDA_LAYOUT_SELL:
  case AMBCUDA_LAYOUT_SELLK:
    *ready = (PetscBool)(cu->sellbuilt && !cu->sellvalstale && (AMBCUDASingle(cu, layout) ? cu->S.val32 != NULL : cu->S.val != NULL));
    break;
  case AMBCUDA_LAYOUT_CSRK:
    *ready = (PetscBool)(cu->csrkbuilt && !cu->csrkvalstale && (PetscBool)(cu->K.val32 != NULL) == AMBCUDASingle(cu, layout) && (PetscBool)(cu->K.det != 0) == cu->planopt.deterministic);
    break;
  default:
    *ready = PETSC_TRUE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDAMakeReady_Private(Mat A, PetscInt b, PetscInt layout)
{
  PetscFunctionBegin;
  if (layout == AMBCUDA_LAYOUT_AMB) PetscCall(AMBCUDAEnsureLayout_Private(A, b));
  else if (layout == AMBCUDA_LAYOUT_SELL || layout == AMBCUDA_LAYOUT_SELLK) PetscCall(AMBCUDAEnsureSell_Private(A, layout));
  else if (layout == AMBCUDA_LAYOUT_CSRK) PetscCall(AMBCUDAEnsureCSRK_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A x, or y = z + A x when z is not NULL (z may be y): the layout in use (AMB, CSR, SELL), on the tuner while it
   searches (b, block size, layout) */
static PetscErrorCode MatMultAdd_AMBCUDA_Private(Mat A, Vec x, Vec z, Vec y)
{
  Mat_SeqAMBCUDA    *cu = AMBCUDAGet(A);
  Vec                vecs[3] = {x, z, y};
  PetscBool          ok, ready, searching = PETSC_FALSE;
  const PetscScalar *xa, *za = NULL;
  PetscScalar       *ya;
  cudaStream_t       stream;
  const PetscInt    *cfg;
  PetscInt           nlaunch, fixed[3], layout;
  PetscInt           kb, kbl, kl; /* the knobs' places in the tuner's order (AMBCUDATunerSetUp_Private()) */

  PetscFunctionBegin;
  PetscCall(AMBCUDAVecsOnDevice_Private(A, z ? "MatMultAdd" : "MatMult", 3, vecs, &ok));
  if (!ok) {
    PetscCall(AMBCUDAHostSync_Private(A)); /* the host kernels read the host values */
    if (z) PetscCall((*cu->twin.hostops.multadd)(A, x, z, y));
    else PetscCall((*cu->twin.hostops.mult)(A, x, y));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(AMBCUDAPrepare_Private(A));
  PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
  PetscCall(PetscLogEventBegin(MAT_AMBCUDA_Mult, A, x, y, 0));
  PetscCall(AMBCUDATunerSetUp_Private(A));
  kb  = cu->kb;
  kbl = cu->kblk;
  kl  = cu->klay;
  /* values refreshes, if any, outside the timing */
  if (cu->built) PetscCall(AMBCUDAEnsureLayout_Private(A, cu->key.b));
  if (cu->sellbuilt) PetscCall(AMBCUDAEnsureSell_Private(A, -1));
  if (cu->csrkbuilt) PetscCall(AMBCUDAEnsureCSRK_Private(A));
  if (cu->tuner) { /* y = y + A x (z == y) must run once; any other product may be repeated while it is timed */
    PetscBool done;
    PetscCall(GpukitTunerGetConfig(cu->tuner, &cfg, &done));
    searching = (PetscBool)!done;
    if (searching) PetscCall(PetscLogEventBegin(MAT_AMBCUDA_Tune, A, 0, 0, 0));
    PetscCall(GpukitTunerSetRepeatable(cu->tuner, (PetscBool)!(z && z == y)));
    PetscCall(GpukitTunerBegin(cu->tuner, A->nonzerostate, (void *)stream, &cfg, &nlaunch));
    PetscCall(AMBCUDAReady_Private(A, cfg[kb], cfg[kl], &ready));
    if (!ready) { /* another b or layout: build it untimed (a call without launches teaches nothing), then time */
      PetscInt b = cfg[kb], l = cfg[kl];
      PetscCall(GpukitTunerEnd(cu->tuner));
      PetscCall(AMBCUDAMakeReady_Private(A, b, l));
      PetscCall(GpukitTunerBegin(cu->tuner, A->nonzerostate, (void *)stream, &cfg, &nlaunch));
      PetscCheck(cfg[kb] == b && cfg[kl] == l, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA: the tuner changed its candidate (b %" PetscInt_FMT ", layout %" PetscInt_FMT ") to (b %" PetscInt_FMT ", layout %" PetscInt_FMT ") between two calls", b, l, cfg[kb], cfg[kl]);
    }
  } else {
    PetscCall(AMBCUDAGetConfig3_Private(A, &fixed[kb], &fixed[kbl], &fixed[kl]));
    cfg     = fixed;
    nlaunch = 1;
    PetscCall(AMBCUDAMakeReady_Private(A, cfg[kb], cfg[kl]));
  }
  layout = cfg[kl];
  PetscCall(AMBCUDAReady_Private(A, cfg[kb], layout, &ready));
  PetscCheck(ready, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA: the device layout %s (b %" PetscInt_FMT ") is not ready for the product", AMBCUDALayoutNames[layout], cfg[kb]);
  cu->layout   = layout;
  cu->fallback = (PetscBool)(layout != AMBCUDA_LAYOUT_AMB);
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  PetscCall(AMBCUDAGetOutArrays_Private(z, y, &za, &ya));
  PetscCall(PetscLogGpuTimeBegin());
  for (PetscInt l = 0; l < nlaunch; l++) {
    switch (layout) {
    case AMBCUDA_LAYOUT_AMB:
      PetscCallCUDA(GpukitAMBMultCUDA(&cu->L, xa, za, ya, (int)cfg[kbl], cu->planopt.deterministic ? 1 : 0, stream));
      break;
    case AMBCUDA_LAYOUT_SELL:
      PetscCall(AMBCUDASellCusparseMult_Private(A, xa, za, ya, stream));
      break;
    case AMBCUDA_LAYOUT_SELLK:
      PetscCallCUDA(GpukitAMBSellMultCUDA(&cu->S, AMBCUDASingle(cu, layout) ? 1 : 0, xa, za, ya, GPUKIT_AMBCUDA_BLOCK, stream));
      break;
    case AMBCUDA_LAYOUT_CSRK: {
      GpukitAMBCSR csr;
      AMBCUDACSR(cu, &csr);
      PetscCallCUDA(GpukitAMBCSRKMultCUDA(&csr, &cu->K, cu->val, xa, za, ya, stream));
    } break;
    default:
      if (cu->nnz > 0 && cu->m > 0 && cu->n > 0) PetscCall(AMBCUDACusparseMult_Private(A, xa, za, ya, stream));
      else if (cu->m > 0) { /* no entries: y = z or 0 */
        if (!za) PetscCallCUDA(cudaMemsetAsync(ya, 0, (size_t)cu->m * sizeof(double), stream));
        else if (za != ya) PetscCallCUDA(cudaMemcpyAsync(ya, za, (size_t)cu->m * sizeof(double), cudaMemcpyDeviceToDevice, stream));
      }
    }
    if (cu->tuner) PetscCall(GpukitTunerMark(cu->tuner));
  }
  PetscCall(PetscLogGpuTimeEnd());
  if (cu->tuner) {
    PetscBool done;
    PetscCall(GpukitTunerEnd(cu->tuner));
    PetscCall(GpukitTunerGetConfig(cu->tuner, &cfg, &done));
    if (done && !cu->tuneclean) { /* the search is over: free the layouts that lost (memory), keep the winner's */
      if (cfg[kl] != AMBCUDA_LAYOUT_AMB) PetscCall(AMBCUDAFreeLayout_Private(cu));
      if (cfg[kl] != AMBCUDA_LAYOUT_SELL && cfg[kl] != AMBCUDA_LAYOUT_SELLK) PetscCall(AMBCUDAFreeSell_Private(cu));
      else if (cfg[kl] == AMBCUDA_LAYOUT_SELLK && AMBCUDASingle(cu, cfg[kl])) PetscCall(AMBCUDAFreeSellDouble_Private(cu)); /* the FP32 kernel won */
      else if (cu->S.val32 && !AMBCUDASingle(cu, cfg[kl])) PetscCallCUDA(GpukitAMBSellFreeValues(&cu->S, 1, stream));
      if (cfg[kl] != AMBCUDA_LAYOUT_CSRK) PetscCall(AMBCUDAFreeCSRK_Private(cu));
      cu->tuneclean = PETSC_TRUE;
      PetscCall(PetscInfo(A, "gpukit: tuned device product: layout %s (b %" PetscInt_FMT ", %" PetscInt_FMT " threads per block)\n", AMBCUDALayoutNames[cfg[kl]], cfg[kb], cfg[kbl]));
    }
    if (searching) PetscCall(PetscLogEventEnd(MAT_AMBCUDA_Tune, A, 0, 0, 0));
  }
  PetscCall(AMBCUDARestoreOutArrays_Private(z, y, &za, &ya));
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)cu->nnz - (z ? 0.0 : (PetscLogDouble)cu->m)));
  PetscCall(PetscLogEventEnd(MAT_AMBCUDA_Mult, A, x, y, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_AMBCUDA(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultAdd_AMBCUDA_Private(A, x, NULL, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultAdd_AMBCUDA(Mat A, Vec x, Vec z, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultAdd_AMBCUDA_Private(A, x, z, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A^T x (+ z): gpukit's CSR kernel (csrk) on the transpose, built on the device at the first call (its values
   follow A's through the entry permutation). The transpose of power-law columns has rows of 10^4-10^5 entries: on one
   warp rmat20's took 1.85 ms against aijcusparse's 0.40 ms (H200); csrk splits them into chunks with atomics, or with
   -mat_amb_deterministic gives each one block and no atomics (bitwise repeatable) */
static PetscErrorCode MatMultTransposeAdd_AMBCUDA_Private(Mat A, Vec x, Vec z, Vec y)
{
  Mat_SeqAMBCUDA    *cu = AMBCUDAGet(A);
  Vec                vecs[3] = {x, z, y};
  PetscBool          ok;
  const PetscScalar *xa, *za = NULL;
  PetscScalar       *ya;
  cudaStream_t       stream;
  GpukitAMBCSR       csrt;
  const PetscBool    det   = ((Mat_SeqAMB *)A->spptr)->opt.deterministic; /* the host options: no plan is needed here */
  PetscBool          fresh = PETSC_FALSE; /* the transpose was (re)built by this call */

  PetscFunctionBegin;
  PetscCall(AMBCUDAVecsOnDevice_Private(A, z ? "MatMultTransposeAdd" : "MatMultTranspose", 3, vecs, &ok));
  if (!ok) {
    PetscCall(AMBCUDAHostSync_Private(A));
    if (z) PetscCall((*cu->twin.hostops.multtransposeadd)(A, x, z, y));
    else PetscCall((*cu->twin.hostops.multtranspose)(A, x, y));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(A->assembled, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "MATSEQAMBCUDA: the matrix must be assembled before a product");
  PetscCall(AMBCUDASyncCSR_Private(A));
  PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
  PetscCall(PetscLogEventBegin(MAT_AMBCUDA_Mult, A, x, y, 0));
  if (!cu->tbuilt) {
    PetscCall(AMBCUDAFreeTranspose_Private(cu));
    PetscCallCUDA(cudaMalloc((void **)&cu->tptr, ((size_t)cu->n + 1) * sizeof(int)));
    PetscCallCUDA(cudaMalloc((void **)&cu->tcol, (size_t)PetscMax(cu->nnz, 1) * sizeof(int)));
    PetscCallCUDA(cudaMalloc((void **)&cu->tperm, (size_t)PetscMax(cu->nnz, 1) * sizeof(int)));
    PetscCallCUDA(cudaMalloc((void **)&cu->tval, (size_t)PetscMax(cu->nnz, 1) * sizeof(double)));
    PetscCallCUDA(GpukitCSRTransposeCUDA((int)cu->m, (int)cu->n, (int)cu->nnz, cu->rowptr, cu->colidx, cu->val, cu->tptr, cu->tcol, cu->tval, cu->tperm, stream));
    cu->tbuilt    = PETSC_TRUE;
    cu->tvalstale = PETSC_FALSE;
    fresh         = PETSC_TRUE;
  } else if (cu->tvalstale) {
    PetscCallCUDA(GpukitCSRPermuteCUDA((int)cu->nnz, cu->tperm, cu->val, cu->tval, stream));
    cu->tvalstale = PETSC_FALSE;
  }
  csrt.m      = (int)cu->n;
  csrt.n      = (int)cu->m;
  csrt.nnz    = (int)cu->nnz;
  csrt.rowptr = cu->tptr;
  csrt.colidx = cu->tcol;
  if (fresh || (PetscBool)cu->KT.det != det) { /* the kernel's long-row lists: with a new transpose, and again when
                                                  -mat_amb_deterministic changed since they were made */
    if (!fresh) PetscCallCUDA(GpukitAMBCSRKFree(&cu->KT, stream));
    PetscCallCUDA(GpukitAMBCSRKBuildCUDA(&csrt, 0, (int)cu->csrlong, 0, det ? 1 : 0, &cu->KT, stream));
    if (fresh) PetscCall(PetscInfo(A, "gpukit: transpose built on the device: CSR kernel with %d lanes a row, %d rows of more than %d entries (%s)\n", cu->KT.tpr, cu->KT.nlong, cu->KT.longlen, det ? "deterministic: one block a long row" : "long rows in chunks with atomics"));
  }
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  PetscCall(AMBCUDAGetOutArrays_Private(z, y, &za, &ya));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitAMBCSRKMultCUDA(&csrt, &cu->KT, cu->tval, xa, za, ya, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(AMBCUDARestoreOutArrays_Private(z, y, &za, &ya));
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)cu->nnz - (z ? 0.0 : (PetscLogDouble)cu->n)));
  PetscCall(PetscLogEventEnd(MAT_AMBCUDA_Mult, A, x, y, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTranspose_AMBCUDA(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultTransposeAdd_AMBCUDA_Private(A, x, NULL, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTransposeAdd_AMBCUDA(Mat A, Vec x, Vec z, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultTransposeAdd_AMBCUDA_Private(A, x, z, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   Other device ops: the diagonal from the device CSR; scale, shift and zero entries on both sides
   ------------------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatGetDiagonal_AMBCUDA(Mat A, Vec d)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);
  PetscBool       ok;
  PetscScalar    *da;
  cudaStream_t    stream;
  GpukitAMBCSR    csr;

  PetscFunctionBegin;
  PetscCall(AMBCUDAVecsOnDevice_Private(A, "MatGetDiagonal", 1, &d, &ok));
  if (!ok || !A->assembled) {
    PetscCall(AMBCUDAHostSync_Private(A));
    PetscCall((*cu->twin.hostops.getdiagonal)(A, d));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(AMBCUDASyncCSR_Private(A));
  PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
  AMBCUDACSR(cu, &csr);
  PetscCall(VecCUDAGetArrayWrite(d, &da));
  PetscCallCUDA(GpukitAMBDiagonalCUDA(&csr, cu->val, da, stream));
  PetscCall(VecCUDARestoreArrayWrite(d, &da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device CSR is current before the host op (and the states it had) */
static PetscErrorCode AMBCUDABefore_Private(Mat A, PetscBool *insync, PetscObjectState *state, PetscObjectState *nzstate)
{
  PetscFunctionBegin;
  PetscCall(AMBCUDAInSync_Private(A, insync));
  PetscCall(PetscObjectStateGet((PetscObject)A, state));
  *nzstate = A->nonzerostate;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the host op kept the structure: the device applies the same change (SeqAIJ's ops may raise the state themselves,
   through MatSeqAIJRestoreArray(); the state after the host op is then the one the device matches) */
static PetscErrorCode AMBCUDAFollows_Private(Mat A, PetscBool insync, PetscObjectState state, PetscObjectState nzstate, PetscBool *follow)
{
  PetscFunctionBegin;
  (void)state;
  *follow = (PetscBool)(insync && A->nonzerostate == nzstate && !A->boundtocpu);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatScale_AMBCUDA(Mat A, PetscScalar s)
{
  Mat_SeqAMBCUDA  *cu = AMBCUDAGet(A);
  PetscBool        insync, follow;
  PetscObjectState state, nzstate;
  cudaStream_t     stream;

  PetscFunctionBegin;
  PetscCall(AMBCUDABefore_Private(A, &insync, &state, &nzstate));
  if (A->offloadmask == PETSC_OFFLOAD_GPU && insync && !A->boundtocpu) { /* stale host copy: scaled on the device only */
    PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
    PetscCallCUDA(GpukitAMBScaleCUDA((long long)cu->nnz, cu->val, (double)s, stream));
    PetscCall(AMBCUDADeviceFollowed_Private(A));
    PetscCall(GpukitTwinDeviceWritten(A));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall((*cu->twin.hostops.scale)(A, s));
  PetscCall(AMBCUDAFollows_Private(A, insync, state, nzstate, &follow));
  if (!follow) PetscFunctionReturn(PETSC_SUCCESS); /* the next device use uploads the values */
  PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
  PetscCallCUDA(GpukitAMBScaleCUDA((long long)cu->nnz, cu->val, (double)s, stream));
  PetscCall(AMBCUDADeviceFollowed_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatShift_AMBCUDA(Mat A, PetscScalar s)
{
  Mat_SeqAMBCUDA  *cu = AMBCUDAGet(A);
  PetscBool        insync, follow;
  PetscObjectState state, nzstate;
  cudaStream_t     stream;
  GpukitAMBCSR     csr;

  PetscFunctionBegin;
  PetscCall(AMBCUDAHostSync_Private(A)); /* the host op may insert missing diagonal entries: it needs the values */
  PetscCall(AMBCUDABefore_Private(A, &insync, &state, &nzstate));
  PetscCheck(cu->twin.hostops.shift, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA: the host type has no MatShift()");
  PetscCall((*cu->twin.hostops.shift)(A, s));
  PetscCall(AMBCUDAFollows_Private(A, insync, state, nzstate, &follow));
  if (!follow) PetscFunctionReturn(PETSC_SUCCESS);
  /* the host found every diagonal entry (the structure did not change), so the device finds them too */
  PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
  AMBCUDACSR(cu, &csr);
  PetscCallCUDA(GpukitAMBShiftCUDA(&csr, cu->val, (double)s, NULL, stream));
  PetscCall(AMBCUDADeviceFollowed_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatZeroEntries_AMBCUDA(Mat A)
{
  Mat_SeqAMBCUDA  *cu = AMBCUDAGet(A);
  PetscBool        insync, follow;
  PetscObjectState state, nzstate;
  cudaStream_t     stream;

  PetscFunctionBegin;
  PetscCall(AMBCUDABefore_Private(A, &insync, &state, &nzstate));
  PetscCall((*cu->twin.hostops.zeroentries)(A));
  PetscCall(AMBCUDAFollows_Private(A, insync, state, nzstate, &follow));
  if (!follow) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
  if (cu->nnz) PetscCallCUDA(cudaMemsetAsync(cu->val, 0, (size_t)cu->nnz * sizeof(double), stream));
  PetscCall(AMBCUDADeviceFollowed_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   COO on the device (gpukitcoo.h): the host AIJ builds the structure (its own MatSetPreallocationCOO), the entries are
   mapped to CSR positions once; MatSetValuesCOO() sums them into the device CSR values, the AMB values follow through
   the map, and the values are copied down once so that the host AIJ copy stays authoritative (logged GpuToCpu).
   ------------------------------------------------------------------------------------------------------------------ */

/* where entry (i, j) lives: its position in the host CSR (the device CSR has the same positions), or an error */
static PetscErrorCode AMBCUDACOOSlot_Private(Mat A, PetscInt i, PetscInt j, PetscCount *slot)
{
  const PetscInt *ia, *ja;
  PetscInt        lo, hi;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ia, &ja, NULL, NULL));
  lo = ia[i];
  hi = ia[i + 1] - 1;
  while (lo <= hi) {
    PetscInt mid = lo + (hi - lo) / 2;
    if (ja[mid] == j) {
      *slot = mid;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    if (ja[mid] < j) lo = mid + 1;
    else hi = mid - 1;
  }
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA COO: entry (%" PetscInt_FMT ", %" PetscInt_FMT ") is not in the nonzero pattern that MatSetPreallocationCOO() built", i, j);
}

static PetscErrorCode MatSetPreallocationCOO_AMBCUDA(Mat A, PetscCount n, PetscInt coo_i[], PetscInt coo_j[])
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);
  PetscErrorCode (*hostprealloc)(Mat, PetscCount, PetscInt[], PetscInt[]) = NULL;
  PetscCount nrecv, nu;
  PetscInt  *ci, *cj;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < cu->twin.nmethods; i++)
    if (!strcmp(cu->twin.methods[i].name, "MatSetPreallocationCOO_C")) hostprealloc = (PetscErrorCode(*)(Mat, PetscCount, PetscInt[], PetscInt[]))cu->twin.hostmethods[i];
  PetscCheck(hostprealloc, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA: the host type has no MatSetPreallocationCOO()");
  PetscCall(GpukitCOODestroy(&cu->coo));
  PetscCall(PetscMalloc2(n, &ci, n, &cj)); /* the host's preallocation may change coo_i, coo_j (PETSc's contract) */
  PetscCall(PetscArraycpy(ci, coo_i, n));
  PetscCall(PetscArraycpy(cj, coo_j, n));
  PetscCall((*hostprealloc)(A, n, coo_i, coo_j)); /* the AIJ structure on the host */
  PetscCall(GpukitCOOCreate(A, n, ci, cj, AMBCUDACOOSlot_Private, PETSC_TRUE, &cu->coo));
  {
    const PetscInt *ia;
    PetscCall(MatSeqAIJGetCSRAndMemType(A, &ia, NULL, NULL, NULL));
    cu->coonnz = A->rmap->n > 0 ? ia[A->rmap->n] : 0;
  }
  PetscCall(PetscFree2(ci, cj));
  PetscCall(GpukitCOOGetSizes(cu->coo, NULL, &nrecv, &nu));
  PetscCall(PetscInfo(A, "gpukit: COO on the device: %" PetscCount_FMT " entries onto %" PetscCount_FMT " nonzeros\n", n, nu));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetValuesCOO_AMBCUDA(Mat A, const PetscScalar coo_v[], InsertMode imode)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);

  PetscFunctionBegin;
  PetscCheck(cu->coo, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "MatSetValuesCOO() on a MATSEQAMBCUDA needs MatSetPreallocationCOO() first");
  PetscCheck(imode == INSERT_VALUES || imode == ADD_VALUES, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "MatSetValuesCOO() takes INSERT_VALUES or ADD_VALUES");
  { /* the structure (first call) and, for ADD_VALUES, the current values; INSERT_VALUES overwrites every value, so
       a device CSR with the right structure needs no value upload even when the host values changed */
    PetscBool structok = (PetscBool)(cu->csrvalid && cu->nzstate == A->nonzerostate && cu->m == A->rmap->n && cu->n == A->cmap->n);
    if (!(imode == INSERT_VALUES && structok)) PetscCall(AMBCUDASyncCSR_Private(A));
  }
  PetscCheck(cu->nnz == cu->coonnz, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "MatSetValuesCOO(): the nonzero pattern changed since MatSetPreallocationCOO() (%" PetscInt_FMT " nonzeros, then %" PetscInt_FMT "); call MatSetPreallocationCOO() again", cu->coonnz, cu->nnz);
  PetscCall(PetscLogEventBegin(MAT_AMBCUDA_COO, A, 0, 0, 0));
  PetscCall(GpukitCOOSetValues(cu->coo, coo_v, imode, cu->val, (PetscCount)cu->nnz, (int)cu->block));
  PetscCall(PetscLogEventEnd(MAT_AMBCUDA_COO, A, 0, 0, 0));
  cu->ncoo++;
  PetscCall(AMBCUDADeviceFollowed_Private(A)); /* MatSetValuesCOO() assembles after this: its state increase is ours */
  /* the device holds the new values, the host copy is stale (offload mask GPU) until a host operation reads it: then
     one nnz*8-byte copy down (event AMBCUDACopyDown, AMBCUDACopyDown_Private()). Without -mat_amb_cuda_lazy_copydown
     the copy is made now, as before (about 60 SpMVs of PCIe time on large matrices). */
  PetscCall(GpukitTwinDeviceWritten(A));
  if (!cu->lazyhost) PetscCall(AMBCUDAHostSync_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   Device CSR for gpukit's solvers (gpukitmat.h), stats, info
   ------------------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatGetDeviceCSR_AMBCUDA(Mat A, GpukitDeviceCSR *csr)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);

  PetscFunctionBegin;
  PetscCheck(A->assembled, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "MATSEQAMBCUDA: GpukitMatGetDeviceCSR() needs an assembled matrix");
  PetscCall(AMBCUDASyncCSR_Private(A));
  csr->m      = cu->m;
  csr->n      = cu->n;
  csr->nnz    = cu->nnz;
  csr->rowptr = cu->rowptr;
  csr->colidx = cu->colidx;
  csr->val    = cu->val;
  csr->ctx    = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatRestoreDeviceCSR_AMBCUDA(Mat A, GpukitDeviceCSR *csr)
{
  PetscFunctionBegin;
  (void)A;
  csr->rowptr = NULL;
  csr->colidx = NULL;
  csr->val    = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAMBCUDAGetStats_AMBCUDA(Mat A, PetscInt *nstructup, PetscInt *nvalup, PetscInt *nbuild, PetscInt *nrefresh, PetscInt *ncoo, PetscInt *b, PetscInt *block)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);
  PetscInt        bb = 0, bl = cu->block;

  PetscFunctionBegin;
  if (cu->planned && !cu->fallback) PetscCall(AMBCUDAGetConfig_Private(A, &bb, &bl));
  if (nstructup) *nstructup = cu->nstructup;
  if (nvalup) *nvalup = cu->nvalup;
  if (nbuild) *nbuild = cu->nbuild;
  if (nrefresh) *nrefresh = cu->nrefresh;
  if (ncoo) *ncoo = cu->ncoo;
  if (b) *b = bb;
  if (block) *block = bl;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatAMBGetInfo() of the device type: what the device product uses */
static PetscErrorCode MatAMBCUDAGetHostStats_AMBCUDA(Mat A, PetscInt *ncopydown, PetscBool *stale)
{
  PetscFunctionBegin;
  if (ncopydown) *ncopydown = AMBCUDAGet(A)->ncopydown;
  if (stale) *stale = (PetscBool)(A->offloadmask == PETSC_OFFLOAD_GPU);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAMBGetInfo_AMBCUDA(Mat A, PetscInt *b, PetscInt *W, PetscBool *fallback, PetscLogDouble *bytes)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);
  PetscInt        bb, bl;

  PetscFunctionBegin;
  PetscCall(AMBCUDAPrepare_Private(A));
  PetscCall(AMBCUDAGetConfig_Private(A, &bb, &bl));
  if (!cu->fallback && (!cu->built || cu->key.b != bb)) PetscCall(AMBCUDAEnsureLayout_Private(A, bb)); /* exact bytes */
  if (b) *b = bb;
  if (W) *W = cu->planopt.W;
  if (fallback) *fallback = cu->fallback; /* any layout but AMB */
  if (bytes) {
    if (!cu->fallback) *bytes = cu->bytes;
    else if ((cu->layout == AMBCUDA_LAYOUT_SELL || cu->layout == AMBCUDA_LAYOUT_SELLK) && cu->sellnval >= 0) *bytes = (AMBCUDASingle(cu, cu->layout) ? 8.0 : 12.0) * (PetscLogDouble)cu->sellnval + 4.0 * (PetscLogDouble)((cu->m + AMB_C - 1) / AMB_C + 1) + 8.0 * (PetscLogDouble)(cu->m + cu->n); /* SELL: values + columns, slice offsets, vectors */
    else if (AMBCUDASingle(cu, cu->layout)) *bytes = cu->bytescsr - 4.0 * (PetscLogDouble)cu->nnz; /* CSR with FP32 values */
    else *bytes = cu->bytescsr;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the plan's segment width, block counts for b = 1..8, (row, segment) pairs and segment shift (0: column segments; > 0:
   diagonal segments of col - row + dshift), for tests that count them on the host (npairs 0: the rules chose the
   fallback before counting, nothing counted) */
static PetscErrorCode MatAMBCUDAGetPlanCounts_AMBCUDA(Mat A, PetscInt *W, PetscInt64 blk[], PetscInt64 *npairs, PetscInt64 *dshift)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);

  PetscFunctionBegin;
  PetscCall(AMBCUDAPrepare_Private(A));
  *W = cu->planopt.W;
  for (PetscInt b = 0; b < GPUKIT_AMB_CUDA_MAX_B; b++) blk[b] = cu->blk[b];
  *npairs = cu->npairs;
  *dshift = cu->dshift;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the layout the device product uses now (before the first product: the one it starts with) */
static PetscErrorCode MatAMBCUDAGetLayout_AMBCUDA(Mat A, const char **name)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);

  PetscFunctionBegin;
  PetscCall(AMBCUDAPrepare_Private(A));
  *name = AMBCUDALayoutNames[cu->layout];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   Binding, options, view
   ------------------------------------------------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------------------------------------------------
   Host ops that read (or change part of) the values: the host copy is brought up to date first (a copy down after a
   lazy device COO refresh), then the host type's op runs. The wrappers sit in the twin's op list next to the device
   ops, so MatBindToCPU() puts the host type's own back (after one sync: MatBindToCPU_AMBCUDA()). Ops that take a second
   matrix sync it too when it is a MATSEQAMBCUDA. Ops PETSc dispatches by comparing the two operands' function pointers
   (MatAXPY, MatCopy, MatEqual) then take PETSc's generic path against other types, which reads through MatGetRow().
   ------------------------------------------------------------------------------------------------------------------ */

#define AMBCUDA_HOST_WRAP(op, params, args) \
  static PetscErrorCode AMBCUDAHost_##op params \
  { \
    PetscFunctionBegin; \
    PetscCheck(A->spptr && AMBCUDAGet(A), PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA host op on a matrix without device data"); \
    PetscCall(AMBCUDAHostSync_Private(A)); \
    PetscCall((*AMBCUDAGet(A)->twin.hostops.op)args); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }
#define AMBCUDA_HOST_WRAP2(op, other, params, args) \
  static PetscErrorCode AMBCUDAHost_##op params \
  { \
    PetscFunctionBegin; \
    PetscCheck(A->spptr && AMBCUDAGet(A), PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA host op on a matrix without device data"); \
    PetscCall(AMBCUDAHostSync_Private(A)); \
    PetscCall(AMBCUDAHostSyncAny_Private(other)); \
    PetscCall((*AMBCUDAGet(A)->twin.hostops.op)args); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }

AMBCUDA_HOST_WRAP(setvalues, (Mat A, PetscInt m, const PetscInt im[], PetscInt n, const PetscInt in[], const PetscScalar v[], InsertMode mode), (A, m, im, n, in, v, mode))
AMBCUDA_HOST_WRAP(setvaluesblocked, (Mat A, PetscInt m, const PetscInt im[], PetscInt n, const PetscInt in[], const PetscScalar v[], InsertMode mode), (A, m, im, n, in, v, mode))
AMBCUDA_HOST_WRAP(setvaluesrow, (Mat A, PetscInt row, const PetscScalar v[]), (A, row, v))
AMBCUDA_HOST_WRAP(getrow, (Mat A, PetscInt row, PetscInt *nz, PetscInt *idx[], PetscScalar *v[]), (A, row, nz, idx, v))
AMBCUDA_HOST_WRAP(getvalues, (Mat A, PetscInt m, const PetscInt im[], PetscInt n, const PetscInt in[], PetscScalar v[]), (A, m, im, n, in, v))
AMBCUDA_HOST_WRAP(sor, (Mat A, Vec b, PetscReal omega, MatSORType flag, PetscReal shift, PetscInt its, PetscInt lits, Vec x), (A, b, omega, flag, shift, its, lits, x))
AMBCUDA_HOST_WRAP(transpose, (Mat A, MatReuse reuse, Mat *B), (A, reuse, B))
AMBCUDA_HOST_WRAP(hermitiantranspose, (Mat A, MatReuse reuse, Mat *B), (A, reuse, B))
AMBCUDA_HOST_WRAP2(equal, B, (Mat A, Mat B, PetscBool *flg), (A, B, flg))
AMBCUDA_HOST_WRAP(diagonalscale, (Mat A, Vec l, Vec r), (A, l, r))
AMBCUDA_HOST_WRAP(norm, (Mat A, NormType type, PetscReal *nrm), (A, type, nrm))
AMBCUDA_HOST_WRAP(zerorows, (Mat A, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b), (A, n, rows, diag, x, b))
AMBCUDA_HOST_WRAP(zerorowscolumns, (Mat A, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b), (A, n, rows, diag, x, b))
AMBCUDA_HOST_WRAP(lufactor, (Mat A, IS r, IS c, const MatFactorInfo *info), (A, r, c, info))
AMBCUDA_HOST_WRAP(ilufactor, (Mat A, IS r, IS c, const MatFactorInfo *info), (A, r, c, info))
AMBCUDA_HOST_WRAP(choleskyfactor, (Mat A, IS r, const MatFactorInfo *info), (A, r, info))
AMBCUDA_HOST_WRAP(iccfactor, (Mat A, IS r, const MatFactorInfo *info), (A, r, info))
AMBCUDA_HOST_WRAP(duplicate, (Mat A, MatDuplicateOption op, Mat *B), (A, op, B))
AMBCUDA_HOST_WRAP2(axpy, X, (Mat A, PetscScalar a, Mat X, MatStructure str), (A, a, X, str))
AMBCUDA_HOST_WRAP(createsubmatrices, (Mat A, PetscInt n, const IS irow[], const IS icol[], MatReuse scall, Mat *submat[]), (A, n, irow, icol, scall, submat))
AMBCUDA_HOST_WRAP(createsubmatrix, (Mat A, IS isrow, IS iscol, MatReuse scall, Mat *B), (A, isrow, iscol, scall, B))
AMBCUDA_HOST_WRAP2(copy, B, (Mat A, Mat B, MatStructure str), (A, B, str))
AMBCUDA_HOST_WRAP(getrowmax, (Mat A, Vec v, PetscInt idx[]), (A, v, idx))
AMBCUDA_HOST_WRAP(getrowmin, (Mat A, Vec v, PetscInt idx[]), (A, v, idx))
AMBCUDA_HOST_WRAP(getrowmaxabs, (Mat A, Vec v, PetscInt idx[]), (A, v, idx))
AMBCUDA_HOST_WRAP(getrowminabs, (Mat A, Vec v, PetscInt idx[]), (A, v, idx))
AMBCUDA_HOST_WRAP(getrowsumabs, (Mat A, Vec v), (A, v))
AMBCUDA_HOST_WRAP(getcolumnvector, (Mat A, Vec v, PetscInt col), (A, v, col))
AMBCUDA_HOST_WRAP(getcolumnreductions, (Mat A, PetscInt type, PetscReal *red), (A, type, red))
AMBCUDA_HOST_WRAP(diagonalset, (Mat A, Vec d, InsertMode mode), (A, d, mode))
AMBCUDA_HOST_WRAP(view, (Mat A, PetscViewer viewer), (A, viewer))
AMBCUDA_HOST_WRAP(convert, (Mat A, MatType type, MatReuse reuse, Mat *B), (A, type, reuse, B))
AMBCUDA_HOST_WRAP(permute, (Mat A, IS r, IS c, Mat *B), (A, r, c, B))
AMBCUDA_HOST_WRAP(issymmetric, (Mat A, PetscReal tol, PetscBool *flg), (A, tol, flg))
AMBCUDA_HOST_WRAP(ishermitian, (Mat A, PetscReal tol, PetscBool *flg), (A, tol, flg))
AMBCUDA_HOST_WRAP(multhermitiantranspose, (Mat A, Vec x, Vec y), (A, x, y))
AMBCUDA_HOST_WRAP(multhermitiantransposeadd, (Mat A, Vec x, Vec z, Vec y), (A, x, z, y))
AMBCUDA_HOST_WRAP(invertblockdiagonal, (Mat A, const PetscScalar **v), (A, v))
AMBCUDA_HOST_WRAP(invertvariableblockdiagonal, (Mat A, PetscInt n, const PetscInt *bs, PetscScalar *v), (A, n, bs, v))
AMBCUDA_HOST_WRAP(findzerodiagonals, (Mat A, IS *is), (A, is))
AMBCUDA_HOST_WRAP(findnonzerorows, (Mat A, IS *is), (A, is))
AMBCUDA_HOST_WRAP(creategraph, (Mat A, PetscBool sym, PetscBool scale, PetscReal filter, PetscInt n, PetscInt idx[], Mat *G), (A, sym, scale, filter, n, idx, G))
AMBCUDA_HOST_WRAP(eliminatezeros, (Mat A, PetscBool keep), (A, keep))
AMBCUDA_HOST_WRAP(getblockdiagonal, (Mat A, Mat *B), (A, B))
AMBCUDA_HOST_WRAP(getvblockdiagonal, (Mat A, Mat *B), (A, B))
AMBCUDA_HOST_WRAP(fdcoloringapply, (Mat A, MatFDColoring fd, Vec x, void *ctx), (A, fd, x, ctx))
AMBCUDA_HOST_WRAP(residual, (Mat A, Vec b, Vec x, Vec r), (A, b, x, r))
AMBCUDA_HOST_WRAP(getmultiprocblock, (Mat A, MPI_Comm comm, MatReuse scall, Mat *B), (A, comm, scall, B))

/* ------------------------------------------------------------------------------------------------------------------
   Products computed by PETSc's AIJ code (MatMatMult, PtAP, ... with AIJ or MATSEQAMBCUDA operands): their numeric phase
   reads the operands' host arrays with no call on the operands, so the product's own symbolic and numeric ops are
   wrapped to sync every MATSEQAMBCUDA operand first. MATSEQAMBCUDA's productsetfromoptions is this wrapper (also
   composed as "MatProductSetFromOptions_anytype_C", which PETSc queries when the operands' ops differ): it hands the
   product to AIJ's exactly where PETSc did before (every operand's host op is AIJ's), else leaves it to PETSc.
   ------------------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatProductSetFromOptions_AMBCUDA(Mat);

/* the operand's productsetfromoptions as PETSc saw it before the wrappers */
static PetscErrorCode AMBCUDAHostProductOp_Private(Mat X, PetscErrorCode (**f)(Mat))
{
  PetscBool is;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)X, MATSEQAMBCUDA, &is));
  *f = X->ops->productsetfromoptions;
  if (is && *f == MatProductSetFromOptions_AMBCUDA) *f = AMBCUDAGet(X)->twin.hostops.productsetfromoptions;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDAProductSync_Private(Mat C)
{
  PetscFunctionBegin;
  if (!C->product) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(AMBCUDAHostSyncAny_Private(C->product->A));
  PetscCall(AMBCUDAHostSyncAny_Private(C->product->B));
  PetscCall(AMBCUDAHostSyncAny_Private(C->product->C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDAProductNumeric_Private(Mat C);

/* (re)wraps the product's numeric op, keeping the one AIJ's code set as "GpukitAMBCUDAProductNumeric_C" */
static PetscErrorCode AMBCUDAProductWrapNumeric_Private(Mat C)
{
  PetscFunctionBegin;
  if (C->ops->productnumeric && C->ops->productnumeric != AMBCUDAProductNumeric_Private) {
    PetscCall(PetscObjectComposeFunction((PetscObject)C, "GpukitAMBCUDAProductNumeric_C", C->ops->productnumeric));
    C->ops->productnumeric = AMBCUDAProductNumeric_Private;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDAProductNumeric_Private(Mat C)
{
  PetscErrorCode (*f)(Mat) = NULL;

  PetscFunctionBegin;
  PetscCall(AMBCUDAProductSync_Private(C));
  PetscCall(PetscObjectQueryFunction((PetscObject)C, "GpukitAMBCUDAProductNumeric_C", &f));
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA: the product lost its numeric phase");
  C->ops->productnumeric = f; /* while it runs: it may set another one */
  PetscCall((*f)(C));
  PetscCall(AMBCUDAProductWrapNumeric_Private(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDAProductSymbolic_Private(Mat C)
{
  PetscErrorCode (*f)(Mat) = NULL;

  PetscFunctionBegin;
  PetscCall(AMBCUDAProductSync_Private(C));
  PetscCall(PetscObjectQueryFunction((PetscObject)C, "GpukitAMBCUDAProductSymbolic_C", &f));
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA: the product lost its symbolic phase");
  C->ops->productsymbolic = f;
  PetscCall((*f)(C));
  C->ops->productsymbolic = AMBCUDAProductSymbolic_Private;
  PetscCall(AMBCUDAProductWrapNumeric_Private(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatProductSetFromOptions_AMBCUDA(Mat C)
{
  Mat_Product *p = C->product;
  Mat          X[3];
  PetscErrorCode (*aij)(Mat) = NULL, (*f)(Mat);

  PetscFunctionBegin;
  if (!p) PetscFunctionReturn(PETSC_SUCCESS);
  X[0] = p->A;
  X[1] = p->B;
  X[2] = p->type == MATPRODUCT_ABC ? p->C : NULL;
  for (PetscInt k = 0; k < 3 && !aij; k++) {
    PetscBool is = PETSC_FALSE;
    if (X[k]) PetscCall(PetscObjectTypeCompare((PetscObject)X[k], MATSEQAMBCUDA, &is));
    if (is) aij = AMBCUDAGet(X[k])->twin.hostops.productsetfromoptions;
  }
  if (!aij) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt k = 0; k < 3; k++) { /* PETSc's matching-op rule, on the host ops: otherwise PETSc goes on as before */
    if (!X[k]) continue;
    PetscCall(AMBCUDAHostProductOp_Private(X[k], &f));
    if (f != aij) PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall((*aij)(C));
  if (C->ops->productsymbolic && C->ops->productsymbolic != AMBCUDAProductSymbolic_Private) {
    PetscCall(PetscObjectComposeFunction((PetscObject)C, "GpukitAMBCUDAProductSymbolic_C", C->ops->productsymbolic));
    C->ops->productsymbolic = AMBCUDAProductSymbolic_Private;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   PETSc's own factorizations (MATSOLVERPETSC: LU, ILU, Cholesky, ICC) of a MATSEQAMBCUDA: AIJ's factor matrix, whose
   symbolic and numeric phases (they read A's host arrays) sync A first. Registered for MATSEQAMBCUDA, so MatGetFactor()
   finds it with no solver type (PCFactor's default) or with MATSOLVERPETSC.
   ------------------------------------------------------------------------------------------------------------------ */

typedef PetscErrorCode (*AMBCUDALUSymFn)(Mat, Mat, IS, IS, const MatFactorInfo *);
typedef PetscErrorCode (*AMBCUDACholSymFn)(Mat, Mat, IS, const MatFactorInfo *);
typedef PetscErrorCode (*AMBCUDANumFn)(Mat, Mat, const MatFactorInfo *);

static PetscErrorCode AMBCUDALUNumeric_Private(Mat F, Mat A, const MatFactorInfo *info);
static PetscErrorCode AMBCUDACholNumeric_Private(Mat F, Mat A, const MatFactorInfo *info);

static PetscErrorCode AMBCUDAFactorWrapNumeric_Private(Mat F)
{
  PetscFunctionBegin;
  if (F->ops->lufactornumeric && F->ops->lufactornumeric != AMBCUDALUNumeric_Private) {
    PetscCall(PetscObjectComposeFunction((PetscObject)F, "GpukitAMBCUDALUNumeric_C", F->ops->lufactornumeric));
    F->ops->lufactornumeric = AMBCUDALUNumeric_Private;
  }
  if (F->ops->choleskyfactornumeric && F->ops->choleskyfactornumeric != AMBCUDACholNumeric_Private) {
    PetscCall(PetscObjectComposeFunction((PetscObject)F, "GpukitAMBCUDACholNumeric_C", F->ops->choleskyfactornumeric));
    F->ops->choleskyfactornumeric = AMBCUDACholNumeric_Private;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define AMBCUDA_FACTOR_CALL(F, name, Fn, args) \
  do { \
    Fn f_ = NULL; \
    PetscCall(PetscObjectQueryFunction((PetscObject)(F), name, &f_)); \
    PetscCheck(f_, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA: the factor lost its %s", name); \
    PetscCall((*f_)args); \
  } while (0)

static PetscErrorCode AMBCUDALUNumeric_Private(Mat F, Mat A, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(AMBCUDAHostSyncAny_Private(A));
  F->ops->lufactornumeric = NULL; /* while it runs */
  AMBCUDA_FACTOR_CALL(F, "GpukitAMBCUDALUNumeric_C", AMBCUDANumFn, (F, A, info));
  if (!F->ops->lufactornumeric) F->ops->lufactornumeric = AMBCUDALUNumeric_Private;
  else PetscCall(AMBCUDAFactorWrapNumeric_Private(F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDACholNumeric_Private(Mat F, Mat A, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(AMBCUDAHostSyncAny_Private(A));
  F->ops->choleskyfactornumeric = NULL;
  AMBCUDA_FACTOR_CALL(F, "GpukitAMBCUDACholNumeric_C", AMBCUDANumFn, (F, A, info));
  if (!F->ops->choleskyfactornumeric) F->ops->choleskyfactornumeric = AMBCUDACholNumeric_Private;
  else PetscCall(AMBCUDAFactorWrapNumeric_Private(F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDALUSymbolic_Private(Mat F, Mat A, IS r, IS c, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(AMBCUDAHostSyncAny_Private(A));
  AMBCUDA_FACTOR_CALL(F, "GpukitAMBCUDALUSymbolic_C", AMBCUDALUSymFn, (F, A, r, c, info));
  PetscCall(AMBCUDAFactorWrapNumeric_Private(F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDAILUSymbolic_Private(Mat F, Mat A, IS r, IS c, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(AMBCUDAHostSyncAny_Private(A));
  AMBCUDA_FACTOR_CALL(F, "GpukitAMBCUDAILUSymbolic_C", AMBCUDALUSymFn, (F, A, r, c, info));
  PetscCall(AMBCUDAFactorWrapNumeric_Private(F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDACholSymbolic_Private(Mat F, Mat A, IS r, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(AMBCUDAHostSyncAny_Private(A));
  AMBCUDA_FACTOR_CALL(F, "GpukitAMBCUDACholSymbolic_C", AMBCUDACholSymFn, (F, A, r, info));
  PetscCall(AMBCUDAFactorWrapNumeric_Private(F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDAICCSymbolic_Private(Mat F, Mat A, IS r, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall(AMBCUDAHostSyncAny_Private(A));
  AMBCUDA_FACTOR_CALL(F, "GpukitAMBCUDAICCSymbolic_C", AMBCUDACholSymFn, (F, A, r, info));
  PetscCall(AMBCUDAFactorWrapNumeric_Private(F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define AMBCUDA_FACTOR_WRAP(F, field, name, fn) \
  do { \
    if ((F)->ops->field && (F)->ops->field != fn) { \
      PetscCall(PetscObjectComposeFunction((PetscObject)(F), name, (F)->ops->field)); \
      (F)->ops->field = fn; \
    } \
  } while (0)

static PetscErrorCode MatGetFactor_SeqAMBCUDA_Petsc(Mat A, MatFactorType ftype, Mat *F)
{
  PetscErrorCode (*conv)(Mat, MatFactorType, Mat *) = NULL;

  PetscFunctionBegin;
  *F = NULL;
  PetscCall(AMBCUDAHostSync_Private(A));
  PetscCall(MatSolverTypeGet(MATSOLVERPETSC, MATSEQAIJ, ftype, NULL, NULL, &conv));
  if (!conv) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall((*conv)(A, ftype, F));
  if (!*F) PetscFunctionReturn(PETSC_SUCCESS);
  AMBCUDA_FACTOR_WRAP(*F, lufactorsymbolic, "GpukitAMBCUDALUSymbolic_C", AMBCUDALUSymbolic_Private);
  AMBCUDA_FACTOR_WRAP(*F, ilufactorsymbolic, "GpukitAMBCUDAILUSymbolic_C", AMBCUDAILUSymbolic_Private);
  AMBCUDA_FACTOR_WRAP(*F, choleskyfactorsymbolic, "GpukitAMBCUDACholSymbolic_C", AMBCUDACholSymbolic_Private);
  AMBCUDA_FACTOR_WRAP(*F, iccfactorsymbolic, "GpukitAMBCUDAICCSymbolic_C", AMBCUDAICCSymbolic_Private);
  PetscCall(AMBCUDAFactorWrapNumeric_Private(*F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* "MatProductSetFromOptions_anytype_C" (PETSc asks A first, then B, then C): the wrapper above, and where it declines,
   what another operand composed under that name (as PETSc would have found without this one) */
static PetscErrorCode MatProductSetFromOptions_AMBCUDA_Anytype(Mat C)
{
  Mat_Product *p = C->product;

  PetscFunctionBegin;
  PetscCall(MatProductSetFromOptions_AMBCUDA(C));
  if (C->ops->productsymbolic || !p) PetscFunctionReturn(PETSC_SUCCESS);
  {
    Mat X[3] = {p->A, p->B, p->type == MATPRODUCT_ABC ? p->C : NULL};
    for (PetscInt k = 0; k < 3; k++) {
      PetscErrorCode (*f)(Mat) = NULL;
      if (!X[k]) continue;
      PetscCall(PetscObjectQueryFunction((PetscObject)X[k], "MatProductSetFromOptions_anytype_C", &f));
      if (!f || f == MatProductSetFromOptions_AMBCUDA_Anytype) continue;
      PetscCall((*f)(C));
      break;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the host wrappers, installed where the host type has the op */
#define AMBCUDA_HOST_OP(op) {offsetof(struct _MatOps, op), (GpukitTwinFn)(AMBCUDAHost_##op)}
static const GpukitTwinOp AMBCUDAHostOps[] = {
  AMBCUDA_HOST_OP(setvalues), AMBCUDA_HOST_OP(setvaluesblocked), AMBCUDA_HOST_OP(setvaluesrow), AMBCUDA_HOST_OP(getrow), AMBCUDA_HOST_OP(getvalues),
  AMBCUDA_HOST_OP(sor), AMBCUDA_HOST_OP(transpose), AMBCUDA_HOST_OP(hermitiantranspose), AMBCUDA_HOST_OP(equal), AMBCUDA_HOST_OP(diagonalscale),
  AMBCUDA_HOST_OP(norm), AMBCUDA_HOST_OP(zerorows), AMBCUDA_HOST_OP(zerorowscolumns), AMBCUDA_HOST_OP(lufactor), AMBCUDA_HOST_OP(ilufactor),
  AMBCUDA_HOST_OP(choleskyfactor), AMBCUDA_HOST_OP(iccfactor), AMBCUDA_HOST_OP(duplicate), AMBCUDA_HOST_OP(axpy), AMBCUDA_HOST_OP(createsubmatrices),
  AMBCUDA_HOST_OP(createsubmatrix), AMBCUDA_HOST_OP(copy), AMBCUDA_HOST_OP(getrowmax), AMBCUDA_HOST_OP(getrowmin), AMBCUDA_HOST_OP(getrowmaxabs),
  AMBCUDA_HOST_OP(getrowminabs), AMBCUDA_HOST_OP(getrowsumabs), AMBCUDA_HOST_OP(getcolumnvector), AMBCUDA_HOST_OP(getcolumnreductions), AMBCUDA_HOST_OP(diagonalset),
  AMBCUDA_HOST_OP(view), AMBCUDA_HOST_OP(convert), AMBCUDA_HOST_OP(permute), AMBCUDA_HOST_OP(issymmetric), AMBCUDA_HOST_OP(ishermitian),
  AMBCUDA_HOST_OP(multhermitiantranspose), AMBCUDA_HOST_OP(multhermitiantransposeadd), AMBCUDA_HOST_OP(invertblockdiagonal), AMBCUDA_HOST_OP(invertvariableblockdiagonal), AMBCUDA_HOST_OP(findzerodiagonals),
  AMBCUDA_HOST_OP(findnonzerorows), AMBCUDA_HOST_OP(creategraph), AMBCUDA_HOST_OP(eliminatezeros), AMBCUDA_HOST_OP(getblockdiagonal), AMBCUDA_HOST_OP(getvblockdiagonal),
  AMBCUDA_HOST_OP(fdcoloringapply), AMBCUDA_HOST_OP(residual), AMBCUDA_HOST_OP(getmultiprocblock),
  {offsetof(struct _MatOps, productsetfromoptions), (GpukitTwinFn)MatProductSetFromOptions_AMBCUDA},
};

/* THE list of the ops that run on the device; MatBindToCPU(A, PETSC_TRUE) puts the host type's back */
static const GpukitTwinOp AMBCUDAOps[] = {
  GPUKIT_TWIN_OP(mult, MatMult_AMBCUDA),
  GPUKIT_TWIN_OP(multadd, MatMultAdd_AMBCUDA),
  GPUKIT_TWIN_OP(multtranspose, MatMultTranspose_AMBCUDA),
  GPUKIT_TWIN_OP(multtransposeadd, MatMultTransposeAdd_AMBCUDA),
  GPUKIT_TWIN_OP(getdiagonal, MatGetDiagonal_AMBCUDA),
  GPUKIT_TWIN_OP(scale, MatScale_AMBCUDA),
  GPUKIT_TWIN_OP(shift, MatShift_AMBCUDA),
  GPUKIT_TWIN_OP(zeroentries, MatZeroEntries_AMBCUDA),
};


/* -mat_amb_cuda_csr_long: checked; a change sets gpukit's CSR kernel and the transpose up again at their next use */
static PetscErrorCode AMBCUDASetCsrLong_Private(Mat A, MPI_Comm comm, PetscInt lg)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);

  PetscFunctionBegin;
  PetscCheck(lg >= 0 && lg <= INT_MAX, comm, PETSC_ERR_ARG_OUTOFRANGE, "-mat_amb_cuda_csr_long must be 0 (32 lanes' worth) or a positive number of entries, got %" PetscInt_FMT, lg);
  if (lg != cu->csrlong) {
    cu->csrlong = lg;
    PetscCall(AMBCUDAFreeCSRK_Private(cu));
    PetscCall(AMBCUDAFreeTranspose_Private(cu));
    PetscCall(GpukitTunerDestroy(&cu->tuner));
    cu->tuneclean = PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -mat_amb_cuda_csr: a change chooses the layout candidates again */
static PetscErrorCode AMBCUDASetCsrMode_Private(Mat A, AMBCUDACsrMode mode)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);

  PetscFunctionBegin;
  if (mode != cu->csrmode) {
    cu->csrmode = mode;
    cu->planned = PETSC_FALSE;
    PetscCall(GpukitTunerDestroy(&cu->tuner));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -mat_amb_cuda_csr_lanes: checked; a change sets gpukit's CSR kernel up again at its next use */
static PetscErrorCode AMBCUDASetCsrLanes_Private(Mat A, MPI_Comm comm, PetscInt lanes)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);

  PetscFunctionBegin;
  PetscCheck(lanes == 0 || lanes == 1 || lanes == 2 || lanes == 4 || lanes == 8 || lanes == 16 || lanes == 32, comm, PETSC_ERR_ARG_OUTOFRANGE, "-mat_amb_cuda_csr_lanes must be 0 (from the mean row length) or 1, 2, 4, 8, 16 or 32, got %" PetscInt_FMT, lanes);
  if (lanes != cu->csrlanes) {
    cu->csrlanes = lanes;
    PetscCall(AMBCUDAFreeCSRK_Private(cu));
    PetscCall(GpukitTunerDestroy(&cu->tuner));
    cu->tuneclean = PETSC_FALSE; /* the next search frees its losers again */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
/* composed only while on the device */
static const GpukitTwinMethod AMBCUDAMethods[] = {
  GPUKIT_TWIN_METHOD("MatSetPreallocationCOO_C", MatSetPreallocationCOO_AMBCUDA),
  GPUKIT_TWIN_METHOD("MatSetValuesCOO_C", MatSetValuesCOO_AMBCUDA),
  GPUKIT_TWIN_METHOD("GpukitMatGetDeviceCSR_C", MatGetDeviceCSR_AMBCUDA),
  GPUKIT_TWIN_METHOD("GpukitMatRestoreDeviceCSR_C", MatRestoreDeviceCSR_AMBCUDA),
  GPUKIT_TWIN_METHOD("MatAMBGetInfo_C", MatAMBGetInfo_AMBCUDA),
  GPUKIT_TWIN_METHOD("MatProductSetFromOptions_anytype_C", MatProductSetFromOptions_AMBCUDA_Anytype),
};

static PetscErrorCode MatBindToCPU_AMBCUDA(Mat A, PetscBool flg)
{
  PetscFunctionBegin;
  if (flg) PetscCall(AMBCUDAHostSync_Private(A)); /* the host ops read the host values from now on */
  PetscCall(GpukitTwinBind(A, &AMBCUDAGet(A)->twin, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetFromOptions_AMBCUDA(Mat A, GpukitOptionItems PetscOptionsObject)
{
  Mat_SeqAMBCUDA *cu    = AMBCUDAGet(A);
  PetscInt        block = cu->block;
  PetscBool       set, tune = cu->autotune;

  PetscFunctionBegin;
  PetscCall((*cu->twin.hostops.setfromoptions)(A, PetscOptionsObject)); /* MATAMB's options */
  PetscOptionsHeadBegin(PetscOptionsObject, "MATAMBCUDA options");
  PetscCall(PetscOptionsInt("-mat_amb_cuda_block_size", "Threads per block of the MATAMBCUDA product (a multiple of 32 in 32..1024); fixes it, otherwise tuned", "MATAMBCUDA", block, &block, &set));
  if (set) {
    PetscCheck(block >= 32 && block <= 1024 && block % 32 == 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_amb_cuda_block_size must be a multiple of 32 in 32..1024, got %" PetscInt_FMT, block);
    cu->block    = block;
    cu->fixblock = PETSC_TRUE;
    PetscCall(GpukitTunerDestroy(&cu->tuner));
  }
  {
    PetscInt longnb = cu->longnb;
    PetscCall(PetscOptionsInt("-mat_amb_cuda_long_blocks", "Long-chunk limit of the MATAMBCUDA product in blocks: a thread sums at most this many blocks of a lane, longer chunks (power-law rows) are split over more threads (0 = automatic)", "MATAMBCUDA", longnb, &longnb, &set));
    if (set) {
      PetscCheck(longnb >= 0 && (long long)longnb <= (long long)INT_MAX, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_amb_cuda_long_blocks must be 0 (automatic) or a positive number of blocks, got %" PetscInt_FMT, longnb);
      if (longnb != cu->longnb) PetscCall(GpukitTunerDestroy(&cu->tuner)); /* its shape names the limit */
      cu->longnb = longnb;                                                   /* the layout is rebuilt at the next product */
    }
  }
  {
    PetscInt sm = (PetscInt)cu->sellmode;
    PetscCall(PetscOptionsEList("-mat_amb_cuda_sell", "SELL-32 on the device: tune (a candidate of the tuner next to the CSR fallback and AMB, with -mat_amb_csr_fallback auto), off, cusparse (always cuSPARSE's sliced ELLPACK), kernel (always gpukit's SELL kernel)", "MATAMBCUDA", AMBCUDASellModes, 4, AMBCUDASellModes[cu->sellmode], &sm, &set));
    if (set && sm != (PetscInt)cu->sellmode) {
      cu->sellmode = (AMBCUDASellMode)sm;
      cu->planned  = PETSC_FALSE; /* the candidates are chosen again */
      PetscCall(GpukitTunerDestroy(&cu->tuner));
    }
  }
  {
    PetscInt sg = (PetscInt)cu->segmode;
    PetscCall(PetscOptionsEList("-mat_amb_cuda_segments", "Segments of the device AMB layout: auto (diagonal ones where the model gains), grid (column segments of W), diagonal (segments of col - row, so that a band around the diagonal is one segment)", "MATAMBCUDA", AMBCUDASegModes, 3, AMBCUDASegModes[cu->segmode], &sg, &set));
    if (set && sg != (PetscInt)cu->segmode) {
      cu->segmode = (AMBCUDASegMode)sg;
      cu->planned = PETSC_FALSE; /* counted again; a changed choice rebuilds the layout (its key) */
      PetscCall(GpukitTunerDestroy(&cu->tuner));
    }
  }
  {
    PetscInt cm = (PetscInt)cu->csrmode;
    PetscCall(PetscOptionsEList("-mat_amb_cuda_csr", "The CSR fallback's kernel on the device: cusparse (only cuSPARSE's, the default), tune (cuSPARSE's first, gpukit's a tuner candidate; FP32 values with -mat_amb_values single), kernel (only gpukit's)", "MATAMBCUDA", AMBCUDACsrModes, 3, AMBCUDACsrModes[cu->csrmode], &cm, &set));
    if (set) PetscCall(AMBCUDASetCsrMode_Private(A, (AMBCUDACsrMode)cm));
  }
  {
    PetscInt lanes = cu->csrlanes;
    PetscCall(PetscOptionsInt("-mat_amb_cuda_csr_lanes", "Lanes per row of gpukit's CSR kernel (1, 2, 4, 8, 16 or 32; 0: from the mean row length)", "MATAMBCUDA", lanes, &lanes, &set));
    if (set) PetscCall(AMBCUDASetCsrLanes_Private(A, PetscObjectComm((PetscObject)A), lanes));
  }
  {
    PetscInt lg = cu->csrlong;
    PetscCall(PetscOptionsInt("-mat_amb_cuda_csr_long", "gpukit's CSR kernel (the csrk layout and MatMultTranspose): rows of more than this many entries are cut into chunks of 4096, a block each (0: 32 lanes' worth, at least 128)", "MATAMBCUDA", lg, &lg, &set));
    if (set) PetscCall(AMBCUDASetCsrLong_Private(A, PetscObjectComm((PetscObject)A), lg));
  }
  PetscCall(PetscOptionsBool("-mat_amb_cuda_lazy_copydown", "After a device COO refresh (MatSetValuesCOO), copy the values to the host only when a host operation reads them (false: at every refresh)", "MATAMBCUDA", cu->lazyhost, &cu->lazyhost, NULL));
  if (!cu->lazyhost) PetscCall(AMBCUDAHostSync_Private(A));
  PetscCall(PetscOptionsBool("-mat_amb_autotune", "Tune the device product's b and threads per block with gpukit's tuner (-gpukit_tune); false: the model's b and 256 threads", "MATAMBCUDA", tune, &tune, &set));
  if (set && tune != cu->autotune) {
    cu->autotune = tune;
    cu->planned  = PETSC_FALSE; /* the CSR fallback's band depends on it: the layouts are chosen again */
    PetscCall(GpukitTunerDestroy(&cu->tuner));
  }
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device options of an MPI matrix's block (MatSetFromOptions_MPIAMB() passes the MPI matrix: its options database
   and prefix; the blocks have none of their own): the same options and checks as MatSetFromOptions_AMBCUDA() */
static PetscErrorCode MatAMBCUDASetBlockOptions_AMBCUDA(Mat A, Mat parent)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);
  PetscOptions    options = ((PetscObject)parent)->options;
  const char     *prefix  = ((PetscObject)parent)->prefix;
  MPI_Comm        comm    = PetscObjectComm((PetscObject)parent);
  PetscInt        v;
  PetscBool       set, flg;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetInt(options, prefix, "-mat_amb_cuda_block_size", &v, &set));
  if (set) {
    PetscCheck(v >= 32 && v <= 1024 && v % 32 == 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-mat_amb_cuda_block_size must be a multiple of 32 in 32..1024, got %" PetscInt_FMT, v);
    if (!cu->fixblock || cu->block != v) PetscCall(GpukitTunerDestroy(&cu->tuner));
    cu->block    = v;
    cu->fixblock = PETSC_TRUE;
  }
  PetscCall(PetscOptionsGetInt(options, prefix, "-mat_amb_cuda_long_blocks", &v, &set));
  if (set) {
    PetscCheck(v >= 0 && (long long)v <= (long long)INT_MAX, comm, PETSC_ERR_ARG_OUTOFRANGE, "-mat_amb_cuda_long_blocks must be 0 (automatic) or a positive number of blocks, got %" PetscInt_FMT, v);
    if (v != cu->longnb) PetscCall(GpukitTunerDestroy(&cu->tuner));
    cu->longnb = v;
  }
  PetscCall(PetscOptionsGetBool(options, prefix, "-mat_amb_autotune", &flg, &set));
  if (set && flg != cu->autotune) {
    cu->autotune = flg;
    cu->planned  = PETSC_FALSE; /* the CSR fallback's band depends on it: the layouts are chosen again */
    PetscCall(GpukitTunerDestroy(&cu->tuner));
  }
  PetscCall(PetscOptionsGetEList(options, prefix, "-mat_amb_cuda_sell", AMBCUDASellModes, 4, &v, &set));
  if (set && v != (PetscInt)cu->sellmode) {
    cu->sellmode = (AMBCUDASellMode)v;
    cu->planned  = PETSC_FALSE;
    PetscCall(GpukitTunerDestroy(&cu->tuner));
  }
  PetscCall(PetscOptionsGetEList(options, prefix, "-mat_amb_cuda_segments", AMBCUDASegModes, 3, &v, &set));
  if (set && v != (PetscInt)cu->segmode) {
    cu->segmode = (AMBCUDASegMode)v;
    cu->planned = PETSC_FALSE;
    PetscCall(GpukitTunerDestroy(&cu->tuner));
  }
  PetscCall(PetscOptionsGetInt(options, prefix, "-mat_amb_cuda_csr_lanes", &v, &set));
  if (set) PetscCall(AMBCUDASetCsrLanes_Private(A, comm, v));
  PetscCall(PetscOptionsGetInt(options, prefix, "-mat_amb_cuda_csr_long", &v, &set));
  if (set) PetscCall(AMBCUDASetCsrLong_Private(A, comm, v));
  PetscCall(PetscOptionsGetEList(options, prefix, "-mat_amb_cuda_csr", AMBCUDACsrModes, 3, &v, &set));
  if (set) PetscCall(AMBCUDASetCsrMode_Private(A, (AMBCUDACsrMode)v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Mat_SeqAMB's devview hook: the device lines of MatView() ::ascii_info */
static PetscErrorCode AMBCUDAView_Private(Mat A, PetscViewer viewer)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);

  PetscFunctionBegin;
  if (!A->assembled) PetscFunctionReturn(PETSC_SUCCESS);
  if (A->boundtocpu) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "AMB on the GPU: bound to the CPU (MatBindToCPU()): the host kernels run\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(AMBCUDAPrepare_Private(A));
  {
    char   list[64] = "";
    size_t len;
    for (PetscInt i = 0; i < cu->nlayouts; i++) {
      PetscCall(PetscStrlen(list, &len));
      PetscCall(PetscSNPrintf(list + len, sizeof(list) - len, "%s%s", i ? "," : "", cu->layoutlabels[i]));
    }
    PetscCall(PetscViewerASCIIPrintf(viewer, "AMB on the GPU: layout in use %s (candidates %s; SELL: %s)\n", AMBCUDALayoutNames[cu->layout], list, cu->sellwhy));
  }
  if (cu->fallback) {
    if (cu->layout == AMBCUDA_LAYOUT_CSR) PetscCall(PetscViewerASCIIPrintf(viewer, "AMB on the GPU: CSR fallback kernel (cuSPARSE CSR SpMV; %s)\n", cu->why));
    else if (cu->layout == AMBCUDA_LAYOUT_CSRK) PetscCall(PetscViewerASCIIPrintf(viewer, "AMB on the GPU: CSR fallback kernel (gpukit's CSR kernel, %s values, %d lanes a row, %d long rows; %s)\n", AMBCUDASingle(cu, cu->layout) ? "FP32" : "FP64", cu->K.tpr, cu->K.nlong, cu->why));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "AMB on the GPU: SELL-32 %s%s (%lld stored entries for %" PetscInt_FMT " nonzeros; %s)\n", cu->layout == AMBCUDA_LAYOUT_SELL ? "through cuSPARSE's sliced ELLPACK SpMV" : "with gpukit's SELL kernel", AMBCUDASingle(cu, cu->layout) ? ", FP32 values" : "", cu->sellnval, cu->nnz, cu->why));
    if (cu->tuner) {
      PetscCall(PetscViewerASCIIPushTab(viewer));
      PetscCall(GpukitTunerView(cu->tuner, viewer));
      PetscCall(PetscViewerASCIIPopTab(viewer));
    }
  } else {
    PetscInt b, block;
    PetscCall(AMBCUDAGetConfig_Private(A, &b, &block));
    PetscCall(PetscViewerASCIIPrintf(viewer, "AMB on the GPU: AMB kernel%s, %s values, b %" PetscInt_FMT " (model %" PetscInt_FMT "), %" PetscInt_FMT " threads per block (%s)\n", cu->planopt.deterministic ? " (deterministic: no atomics)" : "", cu->planopt.values == AMB_VALUES_SINGLE ? "single" : "double", b, cu->bmodel, block, cu->why));
    if (cu->built) PetscCall(PetscViewerASCIIPrintf(viewer, "  device layout: %lld chunks, %lld stored values, %lld atomic rows, %lld slices of long chunks (limit %d blocks), model %.4g bytes (CSR %.4g)\n", cu->L.nchunks, cu->L.nval, cu->L.ninit, cu->L.nslices, cu->L.longnb, cu->bytes, cu->bytescsr));
    if (cu->npairsdiag > 0) PetscCall(PetscViewerASCIIPrintf(viewer, "  segments: %s (-mat_amb_cuda_segments %s): %lld (row, segment) pairs with column segments, %lld with diagonal ones\n", cu->dshift ? "diagonal" : "column", AMBCUDASegModes[cu->segmode], cu->npairsgrid, cu->npairsdiag));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "  segments: column (-mat_amb_cuda_segments %s)\n", AMBCUDASegModes[cu->segmode]));
    if (cu->tuner) {
      PetscCall(PetscViewerASCIIPushTab(viewer));
      PetscCall(GpukitTunerView(cu->tuner, viewer));
      PetscCall(PetscViewerASCIIPopTab(viewer));
    } else if (!cu->autotune) PetscCall(PetscViewerASCIIPrintf(viewer, "  (not tuned: -mat_amb_autotune false)\n"));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "  device: %" PetscInt_FMT " structure uploads, %" PetscInt_FMT " value uploads, %" PetscInt_FMT " layout builds, %" PetscInt_FMT " SELL builds, %" PetscInt_FMT " value refreshes, %" PetscInt_FMT " copies down to the host (%s after a device COO refresh)\n", cu->nstructup, cu->nvalup, cu->nbuild, cu->nsellbuild, cu->nrefresh, cu->ncopydown, cu->lazyhost ? "lazy" : "eager"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   Conversion, destroy, create
   ------------------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatConvert_SeqAMB_SeqAMBCUDA(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatConvert_SeqAMBCUDA_SeqAMB(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatConvert_SeqAIJ_SeqAMBCUDA(Mat, MatType, MatReuse, Mat *);

/* to plain AIJ: the host values current first (the device data is dropped) */
static PetscErrorCode MatConvert_SeqAMBCUDA_SeqAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscFunctionBegin;
  PetscCall(AMBCUDAHostSync_Private(A));
  if (reuse == MAT_REUSE_MATRIX) PetscCall(AMBCUDAHostSyncAny_Private(*newmat));
  PetscCall(MatConvert_SeqAMB_SeqAIJ(A, type, reuse, newmat));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDACompose_Private(Mat A, PetscBool on)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaijamb_seqaijambcuda_C", on ? GPUKIT_FN(MatConvert_SeqAMB_SeqAMBCUDA) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaijambcuda_seqaijamb_C", on ? GPUKIT_FN(MatConvert_SeqAMBCUDA_SeqAMB) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaijambcuda_seqamb_C", on ? GPUKIT_FN(MatConvert_SeqAMBCUDA_SeqAMB) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_seqaijambcuda_C", on ? GPUKIT_FN(MatConvert_SeqAIJ_SeqAMBCUDA) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_seqambcuda_C", on ? GPUKIT_FN(MatConvert_SeqAIJ_SeqAMBCUDA) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_ambcuda_C", on ? GPUKIT_FN(MatConvert_SeqAIJ_SeqAMBCUDA) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaijambcuda_seqaij_C", on ? GPUKIT_FN(MatConvert_SeqAMBCUDA_SeqAIJ) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatAMBCUDAGetStats_C", on ? GPUKIT_FN(MatAMBCUDAGetStats_AMBCUDA) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatAMBCUDAGetLayout_C", on ? GPUKIT_FN(MatAMBCUDAGetLayout_AMBCUDA) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatAMBCUDAGetPlanCounts_C", on ? GPUKIT_FN(MatAMBCUDAGetPlanCounts_AMBCUDA) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatAMBCUDAGetHostStats_C", on ? GPUKIT_FN(MatAMBCUDAGetHostStats_AMBCUDA) : NULL));
  /* for code that reads the AIJ arrays directly (MatSeqAIJGetArrayRead(), MatSeqAIJGetCSRAndMemType()): call
     PetscTryMethod(A, "GpukitMatSyncHost_C", (Mat), (A)) first */
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "GpukitMatSyncHost_C", on ? GPUKIT_FN(AMBCUDAHostSync_Private) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatAMBCUDASetBlockOptions_C", on ? GPUKIT_FN(MatAMBCUDASetBlockOptions_AMBCUDA) : NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDAFree_Private(Mat_SeqAMBCUDA **pcu)
{
  Mat_SeqAMBCUDA *cu = *pcu;

  PetscFunctionBegin;
  if (!cu) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(AMBCUDAFreeCSR_Private(cu));
  PetscCall(AMBCUDAFreeLayout_Private(cu));
  PetscCall(AMBCUDAFreeTranspose_Private(cu));
  PetscCall(GpukitCOODestroy(&cu->coo));
  PetscCall(GpukitTunerDestroy(&cu->tuner));
  PetscCall(AMBCUDAFreeSell_Private(cu));
  PetscCall(AMBCUDAFreeCSRK_Private(cu));
  if (cu->csrmv.mat || cu->csrmv.buf || cu->sellbuf) {
    cudaStream_t stream;
    PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
    PetscCall(GpukitCSRSpMVReset(&cu->csrmv, stream));
    if (cu->sellbuf) PetscCallCUDA(GpukitPoolFree(cu->sellbuf, stream));
  }
  PetscCall(PetscFree(*pcu));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Mat_SeqAMB's devdestroy hook (MatDestroy() and the convert to seqaij): the device data and what it composed */
static PetscErrorCode AMBCUDADestroy_Private(Mat A)
{
  Mat_SeqAMB     *amb = (Mat_SeqAMB *)A->spptr;
  Mat_SeqAMBCUDA *cu  = (Mat_SeqAMBCUDA *)amb->spdev;

  PetscFunctionBegin;
  if (!cu) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(AMBCUDACompose_Private(A, PETSC_FALSE));
  for (PetscInt i = 0; i < cu->twin.nmethods; i++) PetscCall(PetscObjectComposeFunction((PetscObject)A, cu->twin.methods[i].name, cu->twin.hostmethods[i]));
  PetscCall(AMBCUDAFree_Private(&cu));
  amb->spdev      = NULL;
  amb->devdestroy = NULL;
  amb->devview    = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the twin's copy up: the device uploads by itself (AMBCUDASyncCSR_Private(), keyed by the object state), so this only
   makes the twin's protocol whole; the copy down (AMBCUDACopyDown_Private()) is real: after a lazy device COO refresh */
static PetscErrorCode AMBCUDACopyUp_Private(Mat A, PetscLogDouble *bytes)
{
  PetscFunctionBegin;
  *bytes = 0;
  if (A->assembled) PetscCall(AMBCUDASyncCSR_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}


/* seqaijamb -> seqaijambcuda in place; nothing to do for one that is already */
static PetscErrorCode AMBConvertToCUDA_Private(Mat A)
{
  Mat_SeqAMB     *amb = (Mat_SeqAMB *)A->spptr;
  Mat_SeqAMBCUDA *cu;

  PetscFunctionBegin;
  PetscCheck(amb, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA: not a MATSEQAMB matrix");
  if (amb->spdev) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscNew(&cu));
  cu->block         = GPUKIT_AMBCUDA_BLOCK;
  cu->autotune      = PETSC_TRUE;
  cu->csrmode       = AMBCUDA_CSR_CUSPARSE; /* gpukit's CSR kernel lost to cuSPARSE's on all six irregular matrices (docs/amb.md) */
  cu->kb            = 0;
  cu->kblk          = 1;
  cu->klay          = 2;
  cu->lazyhost      = PETSC_FALSE; /* opt-in: some readers of the AIJ arrays cannot be hooked (see the man page) */
  cu->twin.copyup   = AMBCUDACopyUp_Private;
  cu->twin.copydown = AMBCUDACopyDown_Private;
  cu->twin.evup     = MAT_AMBCUDA_CopyUp;
  cu->twin.evdown   = MAT_AMBCUDA_CopyDown;
  { /* the device ops, then the syncing wrappers of the host ops the host type has */
    const PetscInt ndev = (PetscInt)(sizeof(AMBCUDAOps) / sizeof(AMBCUDAOps[0])), nhost = (PetscInt)(sizeof(AMBCUDAHostOps) / sizeof(AMBCUDAHostOps[0]));
    PetscInt       n    = 0;
    PetscCheck(ndev + nhost <= AMBCUDA_MAX_TWIN_OPS, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA: %" PetscInt_FMT " twin ops, room for %d", ndev + nhost, AMBCUDA_MAX_TWIN_OPS);
    for (PetscInt i = 0; i < ndev; i++) cu->twinops[n++] = AMBCUDAOps[i];
    for (PetscInt i = 0; i < nhost; i++)
      if (*(GpukitTwinFn *)((char *)A->ops + AMBCUDAHostOps[i].off)) cu->twinops[n++] = AMBCUDAHostOps[i];
    cu->twin.ops  = cu->twinops;
    cu->twin.nops = n;
  }
  cu->twin.methods  = AMBCUDAMethods;
  cu->twin.nmethods = (PetscInt)(sizeof(AMBCUDAMethods) / sizeof(AMBCUDAMethods[0]));
  cu->twin.ondevice = "products (AMB or CSR fallback), transpose products, diagonal, scaling, shift, zero entries and COO assembly run on the GPU; other operations run AIJ's host code and the device follows (docs/amb.md)";
  amb->spdev        = cu;
  amb->devdestroy   = AMBCUDADestroy_Private;
  amb->devview      = AMBCUDAView_Private;
  PetscCall(GpukitTwinAttach(A, &cu->twin)); /* saves the host ops, installs the device ones, VECCUDA */
  A->ops->bindtocpu      = MatBindToCPU_AMBCUDA;
  A->ops->setfromoptions = MatSetFromOptions_AMBCUDA;
  A->offloadmask         = PETSC_OFFLOAD_CPU;
  PetscCall(AMBCUDACompose_Private(A, PETSC_TRUE));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATSEQAMBCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* seqaijambcuda -> seqaijamb in place: the host ops back, the device data freed */
static PetscErrorCode AMBConvertToHost_Private(Mat A)
{
  Mat_SeqAMB     *amb = (Mat_SeqAMB *)A->spptr;
  Mat_SeqAMBCUDA *cu  = amb ? (Mat_SeqAMBCUDA *)amb->spdev : NULL;

  PetscFunctionBegin;
  if (!cu) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GpukitTwinDetach(A, &cu->twin)); /* host ops, the host's composed functions and vectors back */
  PetscCall(AMBCUDADestroy_Private(A));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATSEQAMB));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBConvertTarget_Private(Mat A, MatReuse reuse, Mat *newmat, Mat *target)
{
  PetscFunctionBegin;
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  else if (reuse == MAT_REUSE_MATRIX) PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
  *target = reuse == MAT_INPLACE_MATRIX ? A : *newmat;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_SeqAMB_SeqAMBCUDA(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat B;

  PetscFunctionBegin;
  (void)type;
  PetscCall(AMBConvertTarget_Private(A, reuse, newmat, &B));
  PetscCall(AMBConvertToCUDA_Private(B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_SeqAMBCUDA_SeqAMB(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat B;

  PetscFunctionBegin;
  (void)type;
  PetscCall(AMBConvertTarget_Private(A, reuse, newmat, &B));
  PetscCall(AMBConvertToHost_Private(B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* seqaij -> seqaijambcuda (all three reuse modes; in place keeps the Mat): through seqaijamb */
static PetscErrorCode MatConvert_SeqAIJ_SeqAMBCUDA(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat B;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) { /* *newmat is a seqaijambcuda: the values, or a new matrix for a new pattern */
    PetscBool same = PETSC_FALSE;
    Mat       C    = *newmat;
    if (A->rmap->n == C->rmap->n && A->cmap->n == C->cmap->n && A->assembled && C->assembled) {
      const PetscInt *ia, *ja, *ib, *jb;
      PetscCall(MatSeqAIJGetCSRAndMemType(A, &ia, &ja, NULL, NULL));
      PetscCall(MatSeqAIJGetCSRAndMemType(C, &ib, &jb, NULL, NULL));
      PetscCall(PetscArraycmp(ia, ib, A->rmap->n + 1, &same));
      if (same) PetscCall(PetscArraycmp(ja, jb, ia[A->rmap->n], &same));
    }
    if (same) PetscCall(MatCopy(A, C, SAME_NONZERO_PATTERN));
    else {
      PetscCall(PetscInfo(A, "gpukit: MAT_REUSE_MATRIX with a different nonzero pattern: rebuilding the target\n"));
      PetscCall(MatConvert_SeqAIJ_SeqAMBCUDA(A, type, MAT_INITIAL_MATRIX, &B));
      PetscCall(MatHeaderReplace(C, &B));
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  B = reuse == MAT_INPLACE_MATRIX ? A : NULL;
  PetscCall(MatConvert_SeqAIJ_SeqAMB(A, MATSEQAMB, reuse, reuse == MAT_INPLACE_MATRIX ? &A : &B));
  PetscCall(AMBConvertToCUDA_Private(B));
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATSEQAMBCUDA - "seqaijambcuda" (alias "seqambcuda") - `MATSEQAMB` with its product on an NVIDIA GPU: the AMB layout
   built on the device from a device copy of the AIJ arrays.

   Options Database Keys:
+  -mat_type seqaijambcuda - the type (or -mat_type ambcuda)
.  -mat_amb_b, -mat_amb_segment_width, -mat_amb_chunk_sort, -mat_amb_csr_fallback - as for `MATAMB` (device kernels take
     b <= 8; the model's b starts the tuner; with -mat_amb_csr_fallback auto, the tuner on and no row longer than 1024
     entries, a layout of 0.97-1.2 x CSR's model bytes is a candidate behind CSR, timed against it)
.  -mat_amb_deterministic - the product without atomics: one thread per row in the host kernel's order, bitwise equal to
     the host AMB product
.  -mat_amb_values <double,single> - the device values in FP32 (vectors and sums stay FP64)
.  -mat_amb_cuda_block_size <n> - threads per block of the product (fixes it; otherwise tuned)
.  -mat_amb_cuda_long_blocks <0> - a thread of the product sums at most this many blocks of a lane; longer chunks
     (power-law rows) are split over more threads and their rows added atomically (0: automatic, 8 x the mean blocks
     per (row, segment) pair and at least 128)
.  -mat_amb_cuda_lazy_copydown <false> - after a device COO refresh (`MatSetValuesCOO()`), leave the host copy stale and
     copy the values down when a host operation reads them (false, the default: at every refresh; opt in only when no
     factorization package other than PETSc's own and no code reading the AIJ arrays directly sees the matrix)
.  -mat_amb_cuda_sell <tune,off,cusparse,kernel> - SELL-32 built on the device from the device CSR: tune (default) makes
     it a candidate of the tuner's "layout" knob next to the CSR fallback and AMB (with -mat_amb_csr_fallback auto, when
     SELL stores at most 2 entries per nonzero); cusparse/kernel always run it through cuSPARSE's sliced ELLPACK SpMV
     (CUDA 12.1 or later) or gpukit's own SELL kernel (FP32 values with -mat_amb_values single)
.  -mat_amb_cuda_segments <auto,grid,diagonal> - the AMB layout's segments: grid cuts the columns into segments of W
     (the host layout's); diagonal cuts col - row instead, so that a row within W/2 of the diagonal has one segment (no
     init pass, no atomics); auto (default) counts both where the column segments split rows and takes the one with
     fewer model bytes
.  -mat_amb_cuda_csr <cusparse,tune,kernel> - the CSR fallback's kernel: cusparse (default) runs cuSPARSE's CSR SpMV;
     tune times gpukit's CSR kernel (FP32 values with -mat_amb_values single; long rows in chunks with FP64 atomics)
     after it; kernel runs only gpukit's (0.54-0.96x cuSPARSE's on the irregular matrices, H200: opt-in). The same
     kernel, with its automatic lanes, runs MatMultTranspose() on the device transpose (not bitwise repeatable where the
     transpose has long rows, except with -mat_amb_deterministic)
.  -mat_amb_cuda_csr_lanes <0> - lanes per row of gpukit's CSR kernel: 1, 2, 4, 8, 16 or 32; 0 (default) chooses about
     four entries a lane from the mean row length
.  -mat_amb_cuda_csr_long <0> - rows of more than this many entries are cut into chunks by gpukit's CSR kernel (also
     in MatMultTranspose()); 0 (default): 32 lanes' worth, at least 128
.  -gpukit_pool_keep <256> - global: MiB of device memory gpukit's pool (layouts, work arrays) holds on to across a
     synchronisation, in use or free
-  -mat_amb_autotune <true> - tune b, the threads per block and the layout (amb, csr, sell, sellk, csrk) with gpukit's
     tuner (kernel "amb_mult")

   Level: beginner

   Notes:
   The host AIJ copy is authoritative, except after a device COO refresh (see -mat_amb_cuda_lazy_copydown). Products, transpose products (CSR on a device-built transpose), the diagonal,
   scaling, shift, zero entries and COO assembly run on the device; everything else runs AIJ's host code, after which
   the device uploads the values once (event AMBCUDACopyUp; nnz*8 bytes when the pattern is unchanged) and refreshes the
   AMB values through the CSR-position -> slot map (AMBCUDARefresh). A new pattern rebuilds the layout on the device
   (AMBCUDABuild). The layout that runs the product (AMB, the CSR fallback, SELL-32) is the tuner's choice among the
   candidates the traffic model leaves (MatView() ::ascii_info names it); events AMBCUDAPlan (model counts),
   AMBCUDABuild/AMBCUDASellBuild (layouts), AMBCUDATune (products while the tuner searches), AMBCUDACOO (COO values
   summed on the device) and AMBCUDACopyDown (the values copied to the host AIJ arrays after a device COO refresh, when
   a host operation reads them: every host op of the type, MatBindToCPU(), AIJ products and PETSc's factorizations sync
   first). `MatBindToCPU()` runs the host AMB kernel. `MatConvert()` goes both ways with `MATSEQAIJ` and
   `MATSEQAMB`.

.seealso: `MATAMBCUDA`, `MATMPIAMBCUDA`, `MATSEQAMB`, `MatAMBGetInfo()`
M*/
static PetscErrorCode MatCreate_SeqAMBCUDA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
  PetscCall(MatSetType(A, MATSEQAIJ));
  PetscCall(MatConvert_SeqAIJ_SeqAMB(A, MATSEQAMB, MAT_INPLACE_MATRIX, &A));
  PetscCall(AMBConvertToCUDA_Private(A));
  PetscCall(PetscInfo(A, "gpukit: created a %s matrix\n", MATSEQAMBCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_MPIAIJ_MPIAMBCUDA(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscFunctionBegin;
  (void)type;
  PetscCall(MatConvert_MPIAIJ_MPIAMB_Private(A, MATSEQAMBCUDA, MATMPIAMBCUDA, reuse, newmat));
  if (reuse != MAT_REUSE_MATRIX) {
    PetscCall(PetscObjectComposeFunction((PetscObject)*newmat, "MatConvert_mpiaij_mpiaijambcuda_C", MatConvert_MPIAIJ_MPIAMBCUDA));
    PetscCall(PetscObjectComposeFunction((PetscObject)*newmat, "MatConvert_mpiaij_mpiambcuda_C", MatConvert_MPIAIJ_MPIAMBCUDA));
    PetscCall(PetscObjectComposeFunction((PetscObject)*newmat, "MatConvert_mpiaij_ambcuda_C", MatConvert_MPIAIJ_MPIAMBCUDA));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATMPIAMBCUDA - "mpiaijambcuda" (alias "mpiambcuda") - `MATMPIAIJ` whose diagonal and off-diagonal blocks are
   `MATSEQAMBCUDA`: MPIAIJ's product overlaps the halo exchange (on device vectors) with the diagonal block's device
   product, then adds the off-diagonal block's. Options as for `MATSEQAMBCUDA`.

   Level: beginner

.seealso: `MATAMBCUDA`, `MATSEQAMBCUDA`, `MATMPIAMB`
M*/
static PetscErrorCode MatCreate_MPIAMBCUDA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
  PetscCall(MatSetType(A, MATMPIAIJ));
  PetscCall(MatConvert_MPIAIJ_MPIAMBCUDA(A, MATMPIAMBCUDA, MAT_INPLACE_MATRIX, &A));
  PetscCall(PetscInfo(A, "gpukit: created a %s matrix\n", MATMPIAMBCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATAMBCUDA - "ambcuda" - `MATSEQAMBCUDA` on one rank, `MATMPIAMBCUDA` on more.

   Level: beginner

.seealso: `MATSEQAMBCUDA`, `MATMPIAMBCUDA`, `MATAMB`
M*/
static PetscErrorCode MatCreate_AMBCUDA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(GpukitMatSetTypeBySize_Private(A, MATSEQAMBCUDA, MATMPIAMBCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatRegister_AMBCUDA_Private(void)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventRegister("AMBCUDAMult", MAT_CLASSID, &MAT_AMBCUDA_Mult));
  PetscCall(PetscLogEventRegister("AMBCUDABuild", MAT_CLASSID, &MAT_AMBCUDA_Build));
  PetscCall(PetscLogEventRegister("AMBCUDARefresh", MAT_CLASSID, &MAT_AMBCUDA_Refresh));
  PetscCall(PetscLogEventRegister("AMBCUDACopyUp", MAT_CLASSID, &MAT_AMBCUDA_CopyUp));
  PetscCall(PetscLogEventRegister("AMBCUDAPlan", MAT_CLASSID, &MAT_AMBCUDA_Plan));
  PetscCall(PetscLogEventRegister("AMBCUDASellBuild", MAT_CLASSID, &MAT_AMBCUDA_SellBuild));
  PetscCall(PetscLogEventRegister("AMBCUDACSRKBuild", MAT_CLASSID, &MAT_AMBCUDA_CSRKBuild));
  PetscCall(PetscLogEventRegister("AMBCUDATune", MAT_CLASSID, &MAT_AMBCUDA_Tune));
  PetscCall(PetscLogEventRegister("AMBCUDACOO", MAT_CLASSID, &MAT_AMBCUDA_COO));
  PetscCall(PetscLogEventRegister("AMBCUDACopyDown", MAT_CLASSID, &MAT_AMBCUDA_CopyDown));
  PetscCall(MatRegisterRootName(MATAMBCUDA, MATSEQAMBCUDA, MATMPIAMBCUDA));
  PetscCall(MatRegister(MATAMBCUDA, MatCreate_AMBCUDA));
  PetscCall(MatRegister(MATSEQAMBCUDA, MatCreate_SeqAMBCUDA));
  PetscCall(MatRegister(MATMPIAMBCUDA, MatCreate_MPIAMBCUDA));
  PetscCall(MatRegister("seqambcuda", MatCreate_SeqAMBCUDA));
  PetscCall(MatRegister("mpiambcuda", MatCreate_MPIAMBCUDA));
  PetscCall(MatInitializePackage()); /* PETSc's own AIJ factorizations first: ours looks them up */
  PetscCall(MatSolverTypeRegister(MATSOLVERPETSC, MATSEQAMBCUDA, MAT_FACTOR_LU, MatGetFactor_SeqAMBCUDA_Petsc));
  PetscCall(MatSolverTypeRegister(MATSOLVERPETSC, MATSEQAMBCUDA, MAT_FACTOR_ILU, MatGetFactor_SeqAMBCUDA_Petsc));
  PetscCall(MatSolverTypeRegister(MATSOLVERPETSC, MATSEQAMBCUDA, MAT_FACTOR_CHOLESKY, MatGetFactor_SeqAMBCUDA_Petsc));
  PetscCall(MatSolverTypeRegister(MATSOLVERPETSC, MATSEQAMBCUDA, MAT_FACTOR_ICC, MatGetFactor_SeqAMBCUDA_Petsc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#else /* a CUDA PETSc with other scalars: the names give a clear error */

static PetscErrorCode MatCreate_AMBCUDA_Unsupported(Mat A)
{
  PetscFunctionBegin;
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "MATAMBCUDA needs a PETSc with real double-precision scalars; on the CPU use -mat_type amb");
}

PetscErrorCode MatRegister_AMBCUDA_Private(void)
{
  PetscFunctionBegin;
  PetscCall(MatRegisterRootName(MATAMBCUDA, MATSEQAMBCUDA, MATMPIAMBCUDA));
  PetscCall(MatRegister(MATAMBCUDA, MatCreate_AMBCUDA_Unsupported));
  PetscCall(MatRegister(MATSEQAMBCUDA, MatCreate_AMBCUDA_Unsupported));
  PetscCall(MatRegister(MATMPIAMBCUDA, MatCreate_AMBCUDA_Unsupported));
  PetscCall(MatRegister("seqambcuda", MatCreate_AMBCUDA_Unsupported));
  PetscCall(MatRegister("mpiambcuda", MatCreate_AMBCUDA_Unsupported));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif /* GPUKIT_AMBCUDA_AVAILABLE */
