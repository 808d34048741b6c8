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
#include "gpukitcsropskernels.h"

#if defined(GPUKIT_AMBCUDA_AVAILABLE)

PetscLogEvent MAT_AMBCUDA_Mult, MAT_AMBCUDA_Build, MAT_AMBCUDA_Refresh, MAT_AMBCUDA_CopyUp;

static const PetscInt AMBCUDATuneBlocks[] = {64, 128, 256, 512, 1024};

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

static PetscErrorCode AMBCUDAFreeTranspose_Private(Mat_SeqAMBCUDA *cu)
{
  PetscFunctionBegin;
  if (cu->tptr) PetscCallCUDA(cudaFree(cu->tptr));
  if (cu->tcol) PetscCallCUDA(cudaFree(cu->tcol));
  if (cu->tperm) PetscCallCUDA(cudaFree(cu->tperm));
  if (cu->tval) PetscCallCUDA(cudaFree(cu->tval));
  cu->tptr = cu->tcol = cu->tperm = NULL;
  cu->tval                        = NULL;
  cu->tbuilt                      = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDAFreeLayout_Private(Mat_SeqAMBCUDA *cu)
{
  PetscFunctionBegin;
  PetscCallCUDA(GpukitAMBLayoutFree(&cu->L));
  cu->built = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDAFreeCSR_Private(Mat_SeqAMBCUDA *cu)
{
  PetscFunctionBegin;
  if (cu->rowptr) PetscCallCUDA(cudaFree(cu->rowptr));
  if (cu->colidx) PetscCallCUDA(cudaFree(cu->colidx));
  if (cu->val) PetscCallCUDA(cudaFree(cu->val));
  cu->rowptr = cu->colidx = NULL;
  cu->val                 = NULL;
  cu->csrvalid            = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   The device CSR: uploaded from the host AIJ arrays when they changed (structure: nonzerostate; values: object state)
   ------------------------------------------------------------------------------------------------------------------ */

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
    A->offloadmask = PETSC_OFFLOAD_BOTH;
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
    PetscCall(AMBCUDAFreeTranspose_Private(cu));
    PetscCall(GpukitTunerDestroy(&cu->tuner));
    cu->planned = PETSC_FALSE;
    cu->m       = m;
    cu->n       = n;
    cu->nnz     = nnz;
    PetscCallCUDA(cudaMalloc((void **)&cu->rowptr, ((size_t)m + 1) * sizeof(int)));
    PetscCallCUDA(cudaMalloc((void **)&cu->colidx, (size_t)PetscMax(nnz, 1) * sizeof(int)));
    PetscCallCUDA(cudaMalloc((void **)&cu->val, (size_t)PetscMax(nnz, 1) * sizeof(double)));
    if (sizeof(PetscInt) == sizeof(int)) {
      PetscCallCUDA(cudaMemcpyAsync(cu->rowptr, ia, ((size_t)m + 1) * sizeof(int), cudaMemcpyHostToDevice, stream));
      if (nnz) PetscCallCUDA(cudaMemcpyAsync(cu->colidx, ja, (size_t)nnz * sizeof(int), cudaMemcpyHostToDevice, stream));
      PetscCallCUDA(cudaStreamSynchronize(stream));
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
  cu->ambvalstale = PETSC_TRUE;
  cu->tvalstale   = PETSC_TRUE;
  A->offloadmask  = PETSC_OFFLOAD_BOTH;
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
  cu->ambvalstale = PETSC_TRUE; /* refreshed on the device at the next product, no transfer */
  cu->tvalstale   = PETSC_TRUE;
  A->offloadmask  = PETSC_OFFLOAD_BOTH;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   The plan: the traffic model's b, and AMB or the CSR fallback (the rules of ambimpl.h, on device counts)
   ------------------------------------------------------------------------------------------------------------------ */

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
  cu->planopt  = opt;
  cu->bmax     = PetscMin(GPUKIT_AMB_CUDA_MAX_B, AMBClampB(GPUKIT_AMB_CUDA_MAX_B, n, opt.W));
  cu->bytescsr = AMBModelBytesCSR(nnz, m, n);
  cu->bmodel   = 1;
  cu->npairs   = 0;
  if (m > 0 && n > 0 && nnz > 0) { /* block counts per b on the device; the zero fill of chunk padding is not counted */
    GpukitAMBCSR csr;
    cudaStream_t stream;
    PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
    AMBCUDACSR(cu, &csr);
    PetscCallCUDA(GpukitAMBBlockCountsCUDA(&csr, (int)opt.W, cu->blk, &cu->npairs, stream));
    for (PetscInt b = 1; b <= cu->bmax; b++) {
      PetscLogDouble bytes = AMBModelBytes((PetscCount)b * cu->blk[b - 1], b, (PetscInt)((cu->npairs + AMB_C - 1) / AMB_C), m, n, v);
      if (best < 0 || bytes < best) {
        best       = bytes;
        cu->bmodel = b;
      }
    }
  }
  if (opt.bset && opt.b > cu->bmax) PetscCall(PetscInfo(A, "gpukit: -mat_amb_b %" PetscInt_FMT ": the device kernels take b <= %" PetscInt_FMT " here (widths 1..%d, at most the last segment's width); using %" PetscInt_FMT "\n", opt.b, cu->bmax, GPUKIT_AMB_CUDA_MAX_B, cu->bmax));
  cu->bytes    = best;
  cu->fallback = PETSC_FALSE;
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
  cu->planned = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device layout with block width b, built on the device when the structure or a parameter changed, its values
   refreshed through the map when they lag behind the device CSR */
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
  PetscCall(PetscMemcmp(&key, &cu->key, sizeof(key), &same));
  PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
  if (!cu->built || !same) {
    GpukitAMBCSR csr;
    PetscCheck(b >= 1 && b <= cu->bmax, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA: block width %" PetscInt_FMT " outside 1..%" PetscInt_FMT, b, cu->bmax);
    PetscCall(AMBCUDAFreeLayout_Private(cu));
    AMBCUDACSR(cu, &csr);
    PetscCall(PetscLogEventBegin(MAT_AMBCUDA_Build, A, 0, 0, 0));
    PetscCallCUDA(GpukitAMBBuildCUDA(&csr, (int)b, (int)key.W, (int)key.sigma, key.single ? 1 : 0, (int)key.longnb, &cu->L, stream));
    PetscCall(PetscLogEventEnd(MAT_AMBCUDA_Build, A, 0, 0, 0));
    cu->built       = PETSC_TRUE;
    cu->key         = key;
    cu->ambvalstale = PETSC_TRUE;
    cu->nbuild++;
    cu->bytes = AMBModelBytes((PetscCount)cu->L.nval, b, (PetscInt)cu->L.nchunks, cu->m, cu->n, key.single ? 4 : 8);
    PetscCall(PetscInfo(A, "gpukit: AMB layout built on the device (build %" PetscInt_FMT "): %" PetscInt_FMT " x %" PetscInt_FMT ", nnz %" PetscInt_FMT ", b %" PetscInt_FMT ", W %" PetscInt_FMT ", sigma %" PetscInt_FMT ", %lld chunks (longest %d blocks), %lld stored values, %lld rows with no or several segments, %lld slices of long chunks (limit %d blocks), %s values, model %.4g bytes (CSR %.4g)\n", cu->nbuild, cu->m, cu->n, cu->nnz, b, key.W, key.sigma, cu->L.nchunks, cu->L.maxnblk, cu->L.nval, cu->L.ninit, cu->L.nslices, cu->L.longnb, key.single ? "single" : "double", cu->bytes, cu->bytescsr));
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

/* device CSR current, plan made; for AMB (auto mode) the model on the built layout may still choose the fallback */
static PetscErrorCode AMBCUDAPrepare_Private(Mat A)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);
  PetscBool       wasplanned;

  PetscFunctionBegin;
  PetscCheck(A->assembled, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "MATSEQAMBCUDA: the matrix must be assembled before a product");
  PetscCall(AMBCUDASyncCSR_Private(A));
  wasplanned = cu->planned;
  PetscCall(AMBCUDAPlan_Private(A));
  if (!wasplanned) {
    if (!cu->fallback && cu->planopt.fallback_mode == AMB_FALLBACK_AUTO) {
      PetscInt       b     = cu->planopt.bset ? PetscMin(cu->planopt.b, cu->bmax) : cu->bmodel;
      PetscInt       v     = cu->planopt.values == AMB_VALUES_SINGLE ? 4 : 8;
      /* the model without chunk padding is a lower bound of the built layout's (stored values b*blk <= nval, chunks
         ceil(npairs/32) <= the segments' chunks, and the model grows with both): when it already says CSR, so would
         the layout, and the build is skipped */
      PetscLogDouble lower = AMBModelBytes((PetscCount)b * cu->blk[b - 1], b, (PetscInt)((cu->npairs + AMB_C - 1) / AMB_C), cu->m, cu->n, v);
      if (lower > AMB_FALLBACK_RATIO * cu->bytescsr) {
        cu->fallback = PETSC_TRUE;
        PetscCall(PetscSNPrintf(cu->why, sizeof(cu->why), "model: AMB >= %.4g bytes (b %" PetscInt_FMT ", before chunk padding) > %g x CSR %.4g bytes", lower, b, (double)AMB_FALLBACK_RATIO, cu->bytescsr));
      } else {
        PetscCall(AMBCUDAEnsureLayout_Private(A, b)); /* the exact bytes, padding included */
        if (cu->bytes > AMB_FALLBACK_RATIO * cu->bytescsr) {
          cu->fallback = PETSC_TRUE;
          PetscCall(PetscSNPrintf(cu->why, sizeof(cu->why), "model: AMB %.4g bytes > %g x CSR %.4g bytes", cu->bytes, (double)AMB_FALLBACK_RATIO, cu->bytescsr));
          PetscCall(AMBCUDAFreeLayout_Private(cu));
        } else PetscCall(PetscSNPrintf(cu->why, sizeof(cu->why), "model: AMB %.4g bytes <= %g x CSR %.4g bytes", cu->bytes, (double)AMB_FALLBACK_RATIO, cu->bytescsr));
      }
    }
    PetscCall(PetscInfo(A, "gpukit: device product uses %s: %s\n", cu->fallback ? "the CSR fallback" : "the AMB kernel", cu->why));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   The product's knobs on gpukit's tuner: "b" (1..bmax, ordered, starting at the model's b; fixed by -mat_amb_b) and
   "block" (threads per block, ordered, starting at 256; fixed by -mat_amb_cuda_block_size). A candidate with another
   b rebuilds the layout on the device (untimed) before it is timed.
   ------------------------------------------------------------------------------------------------------------------ */

static PetscErrorCode AMBCUDATunerSetUp_Private(Mat A)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);
  GpukitTuneKnob  knobs[2];
  char            csr[128], shape[256];
  const PetscInt  nblocks = (PetscInt)(sizeof(AMBCUDATuneBlocks) / sizeof(AMBCUDATuneBlocks[0]));

  PetscFunctionBegin;
  if (!cu->autotune || cu->fallback) {
    PetscCall(GpukitTunerDestroy(&cu->tuner));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (cu->tuner) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscMemzero(knobs, sizeof(knobs)));
  knobs[0].name = "b";
  if (cu->planopt.bset) {
    knobs[0].n         = 1;
    knobs[0].values[0] = PetscMin(cu->planopt.b, cu->bmax);
  } else {
    knobs[0].n = cu->bmax;
    for (PetscInt b = 1; b <= cu->bmax; b++) knobs[0].values[b - 1] = b;
    knobs[0].start = cu->bmodel - 1;
  }
  knobs[1].name = "block";
  if (cu->fixblock) {
    knobs[1].n         = 1;
    knobs[1].values[0] = cu->block;
  } else {
    knobs[1].n = nblocks;
    for (PetscInt i = 0; i < nblocks; i++) {
      knobs[1].values[i] = AMBCUDATuneBlocks[i];
      if (AMBCUDATuneBlocks[i] == GPUKIT_AMBCUDA_BLOCK) knobs[1].start = i;
    }
  }
  PetscCall(GpukitTuneShapeCSR(cu->m, (PetscCount)cu->nnz, 0, csr, sizeof(csr)));
  PetscCall(PetscSNPrintf(shape, sizeof(shape), "n%d.W%" PetscInt_FMT ".s%" PetscInt_FMT ".%s%s.%s", (int)PetscCeilReal(PetscLog2Real((PetscReal)PetscMax(cu->n, 1))), cu->planopt.W, cu->planopt.sigma, cu->planopt.values == AMB_VALUES_SINGLE ? "f32" : "f64", cu->planopt.deterministic ? ".det" : "", csr));
  if (cu->longnb > 0) { /* a fixed long-chunk limit is another kernel configuration (the automatic one keeps the old key) */
    size_t len;
    PetscCall(PetscStrlen(shape, &len));
    PetscCall(PetscSNPrintf(shape + len, sizeof(shape) - len, ".L%" PetscInt_FMT, cu->longnb));
  }
  PetscCall(GpukitTunerCreate((PetscObject)A, "amb_mult", 2, knobs, &cu->tuner));
  PetscCall(GpukitTunerSetShape(cu->tuner, shape));
  PetscCall(GpukitTunerSetDevice(cu->tuner, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the b and threads per block in use: the tuner's current choice, or the fixed/model values without a tuner */
static PetscErrorCode AMBCUDAGetConfig_Private(Mat A, PetscInt *b, PetscInt *block)
{
  Mat_SeqAMBCUDA *cu = AMBCUDAGet(A);

  PetscFunctionBegin;
  if (cu->tuner) {
    const PetscInt *cfg;
    PetscCall(GpukitTunerGetConfig(cu->tuner, &cfg, NULL));
    *b     = cfg[0];
    *block = cfg[1];
  } else {
    *b     = cu->planopt.bset ? PetscMin(cu->planopt.b, cu->bmax) : cu->bmodel;
    *block = cu->block;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   Products
   ------------------------------------------------------------------------------------------------------------------ */

/* the CSR fallback: y = A x (za NULL) or y = z + A x through cuSPARSE's CSR SpMV with what MATAIJCUSPARSE uses per
   default (CUSPARSE_SPMV_CSR_ALG1, cusparseSpMV_preprocess() once per descriptor from CUDA 12.4), so that a matrix the
   model keeps on CSR runs as fast as with aijcusparse. Per call: the stream, the two vector pointers, the SpMV (and a
   device copy z -> y for y = z + A x with z != y); the descriptor, work buffer and analysis are made again only when the
   device CSR arrays were reallocated (new structure). */
#define AMBCUDA_SPMV_ALG CUSPARSE_SPMV_CSR_ALG1
static PetscErrorCode AMBCUDACusparseMult_Private(Mat A, const double *xa, const double *za, double *ya, cudaStream_t stream)
{
  Mat_SeqAMBCUDA *cu  = AMBCUDAGet(A);
  const double    one = 1.0, zero = 0.0;

  PetscFunctionBegin;
  if (!cu->sphandle) PetscCallCUSPARSE(cusparseCreate(&cu->sphandle));
  PetscCallCUSPARSE(cusparseSetStream(cu->sphandle, stream));
  if (!cu->spmat || cu->sprow != cu->rowptr || cu->spcol != cu->colidx || cu->spval != cu->val || cu->spnnz != cu->nnz) {
    if (cu->spmat) PetscCallCUSPARSE(cusparseDestroySpMat(cu->spmat));
    if (cu->spx) PetscCallCUSPARSE(cusparseDestroyDnVec(cu->spx));
    if (cu->spy) PetscCallCUSPARSE(cusparseDestroyDnVec(cu->spy));
    PetscCallCUSPARSE(cusparseCreateCsr(&cu->spmat, cu->m, cu->n, cu->nnz, cu->rowptr, cu->colidx, cu->val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    PetscCallCUSPARSE(cusparseCreateDnVec(&cu->spx, cu->n, (void *)xa, CUDA_R_64F));
    PetscCallCUSPARSE(cusparseCreateDnVec(&cu->spy, cu->m, (void *)ya, CUDA_R_64F));
    cu->sprow   = cu->rowptr;
    cu->spcol   = cu->colidx;
    cu->spval   = cu->val;
    cu->spnnz   = cu->nnz;
    cu->spbufok = PETSC_FALSE;
  }
  PetscCallCUSPARSE(cusparseDnVecSetValues(cu->spx, (void *)xa));
  PetscCallCUSPARSE(cusparseDnVecSetValues(cu->spy, (void *)ya));
  if (za && za != ya) PetscCallCUDA(cudaMemcpyAsync(ya, za, (size_t)cu->m * sizeof(double), cudaMemcpyDeviceToDevice, stream));
  if (!cu->spbufok) { /* the same size for beta 0 and 1 */
    size_t need = 0;
    PetscCallCUSPARSE(cusparseSpMV_bufferSize(cu->sphandle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, cu->spmat, cu->spx, &one, cu->spy, CUDA_R_64F, AMBCUDA_SPMV_ALG, &need));
    if (need > cu->spbufsize) {
      if (cu->spbuf) PetscCallCUDA(cudaFree(cu->spbuf));
      PetscCallCUDA(cudaMalloc(&cu->spbuf, need));
      cu->spbufsize = need;
    }
#if CUDART_VERSION >= 12040
    /* the analysis ALG1 uses to balance irregular rows (MATAIJCUSPARSE does it once too); it stays valid while the
       arrays stay: the values change in place, a new structure makes a new descriptor and comes back here */
    PetscCallCUSPARSE(cusparseSpMV_preprocess(cu->sphandle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, cu->spmat, cu->spx, &one, cu->spy, CUDA_R_64F, AMBCUDA_SPMV_ALG, cu->spbuf));
#endif
    cu->spbufok = PETSC_TRUE;
  }
  PetscCallCUSPARSE(cusparseSpMV(cu->sphandle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, cu->spmat, cu->spx, za ? &one : &zero, cu->spy, CUDA_R_64F, AMBCUDA_SPMV_ALG, cu->spbuf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A x, or y = z + A x when z is not NULL (z may be y) */
static PetscErrorCode MatMultAdd_AMBCUDA_Private(Mat A, Vec x, Vec z, Vec y)
{
  Mat_SeqAMBCUDA    *cu = AMBCUDAGet(A);
  Vec                vecs[3] = {x, z, y};
  PetscBool          ok;
  const PetscScalar *xa, *za = NULL;
  PetscScalar       *ya;
  cudaStream_t       stream;

  PetscFunctionBegin;
  PetscCall(AMBCUDAVecsOnDevice_Private(A, z ? "MatMultAdd" : "MatMult", 3, vecs, &ok));
  if (!ok) {
    if (z) PetscCall((*cu->twin.hostops.multadd)(A, x, z, y));
    else PetscCall((*cu->twin.hostops.mult)(A, x, y));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(AMBCUDAPrepare_Private(A));
  PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
  PetscCall(PetscLogEventBegin(MAT_AMBCUDA_Mult, A, x, y, 0));
  if (cu->fallback) {
    GpukitAMBCSR csr;
    AMBCUDACSR(cu, &csr);
    PetscCall(VecCUDAGetArrayRead(x, &xa));
    PetscCall(AMBCUDAGetOutArrays_Private(z, y, &za, &ya));
    PetscCall(PetscLogGpuTimeBegin());
    if (cu->nnz > 0 && cu->m > 0 && cu->n > 0) PetscCall(AMBCUDACusparseMult_Private(A, xa, za, ya, stream));
    else PetscCallCUDA(GpukitAMBCSRMultCUDA(&csr, cu->val, xa, za, ya, 0, stream));
    PetscCall(PetscLogGpuTimeEnd());
  } else {
    const PetscInt *cfg;
    PetscInt        nlaunch, fixed[2];
    PetscCall(AMBCUDATunerSetUp_Private(A));
    if (cu->built) PetscCall(AMBCUDAEnsureLayout_Private(A, cu->key.b)); /* a values refresh, if any, outside the timing */
    if (cu->tuner) { /* y = y + A x (z == y) must run once; any other product may be repeated while it is timed */
      PetscCall(GpukitTunerSetRepeatable(cu->tuner, (PetscBool)!(z && z == y)));
      PetscCall(GpukitTunerBegin(cu->tuner, A->nonzerostate, (void *)stream, &cfg, &nlaunch));
      if (cfg[0] != cu->key.b || !cu->built) { /* another b: build it untimed (a call without launches teaches nothing), then time */
        PetscInt b = cfg[0];
        PetscCall(GpukitTunerEnd(cu->tuner));
        PetscCall(AMBCUDAEnsureLayout_Private(A, b));
        PetscCall(GpukitTunerBegin(cu->tuner, A->nonzerostate, (void *)stream, &cfg, &nlaunch));
        PetscCheck(cfg[0] == b, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA: the tuner changed its candidate b from %" PetscInt_FMT " to %" PetscInt_FMT " between two calls", b, cfg[0]);
      }
    } else {
      PetscCall(AMBCUDAGetConfig_Private(A, &fixed[0], &fixed[1]));
      cfg     = fixed;
      nlaunch = 1;
      PetscCall(AMBCUDAEnsureLayout_Private(A, cfg[0]));
    }
    PetscCheck(cu->built && cu->key.b == cfg[0] && !cu->ambvalstale, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMBCUDA: the device layout (b %" PetscInt_FMT ") is not ready for the product with b %" PetscInt_FMT, cu->key.b, cfg[0]);
    PetscCall(VecCUDAGetArrayRead(x, &xa));
    PetscCall(AMBCUDAGetOutArrays_Private(z, y, &za, &ya));
    PetscCall(PetscLogGpuTimeBegin());
    for (PetscInt l = 0; l < nlaunch; l++) {
      PetscCallCUDA(GpukitAMBMultCUDA(&cu->L, xa, za, ya, (int)cfg[1], cu->planopt.deterministic ? 1 : 0, stream));
      if (cu->tuner) PetscCall(GpukitTunerMark(cu->tuner));
    }
    PetscCall(PetscLogGpuTimeEnd());
    if (cu->tuner) PetscCall(GpukitTunerEnd(cu->tuner));
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

/* y = A^T x (+ z): the CSR kernel on the transpose, built on the device at the first call (its values follow A's
   through the entry permutation); deterministic */
static PetscErrorCode MatMultTransposeAdd_AMBCUDA_Private(Mat A, Vec x, Vec z, Vec y)
{
  Mat_SeqAMBCUDA    *cu = AMBCUDAGet(A);
  Vec                vecs[3] = {x, z, y};
  PetscBool          ok;
  const PetscScalar *xa, *za = NULL;
  PetscScalar       *ya;
  cudaStream_t       stream;
  GpukitAMBCSR       csrt;

  PetscFunctionBegin;
  PetscCall(AMBCUDAVecsOnDevice_Private(A, z ? "MatMultTransposeAdd" : "MatMultTranspose", 3, vecs, &ok));
  if (!ok) {
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
  } else if (cu->tvalstale) {
    PetscCallCUDA(GpukitCSRPermuteCUDA((int)cu->nnz, cu->tperm, cu->val, cu->tval, stream));
    cu->tvalstale = PETSC_FALSE;
  }
  csrt.m      = (int)cu->n;
  csrt.n      = (int)cu->m;
  csrt.nnz    = (int)cu->nnz;
  csrt.rowptr = cu->tptr;
  csrt.colidx = cu->tcol;
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  PetscCall(AMBCUDAGetOutArrays_Private(z, y, &za, &ya));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitAMBCSRMultCUDA(&csrt, cu->tval, xa, za, ya, 0, stream));
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
  const PetscInt *ia, *ja;
  PetscScalar    *a;
  cudaStream_t    stream;

  PetscFunctionBegin;
  PetscCheck(cu->coo, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "MatSetValuesCOO() on a MATSEQAMBCUDA needs MatSetPreallocationCOO() first");
  PetscCheck(imode == INSERT_VALUES || imode == ADD_VALUES, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "MatSetValuesCOO() takes INSERT_VALUES or ADD_VALUES");
  PetscCall(AMBCUDASyncCSR_Private(A)); /* the structure (first call) and, for ADD_VALUES, the current values */
  PetscCheck(cu->nnz == cu->coonnz, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "MatSetValuesCOO(): the nonzero pattern changed since MatSetPreallocationCOO() (%" PetscInt_FMT " nonzeros, then %" PetscInt_FMT "); call MatSetPreallocationCOO() again", cu->coonnz, cu->nnz);
  PetscCall(GpukitCUDAGetStream(AMBCUDA_WHO, &stream));
  PetscCall(GpukitCOOSetValues(cu->coo, coo_v, imode, cu->val, (PetscCount)cu->nnz, (int)cu->block));
  /* the host copy follows (it stays authoritative) */
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ia, &ja, &a, NULL));
  PetscCall(PetscLogEventBegin(MAT_AMBCUDA_Refresh, A, 0, 0, 0));
  if (cu->nnz) PetscCallCUDA(cudaMemcpyAsync(a, cu->val, (size_t)cu->nnz * sizeof(double), cudaMemcpyDeviceToHost, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream));
  PetscCall(PetscLogGpuToCpu((PetscLogDouble)cu->nnz * sizeof(double)));
  PetscCall(PetscLogEventEnd(MAT_AMBCUDA_Refresh, A, 0, 0, 0));
  cu->ncoo++;
  PetscCall(AMBCUDADeviceFollowed_Private(A)); /* MatSetValuesCOO() assembles after this: its state increase is ours */
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
  if (fallback) *fallback = cu->fallback;
  if (bytes) *bytes = cu->fallback ? cu->bytescsr : cu->bytes;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   Binding, options, view
   ------------------------------------------------------------------------------------------------------------------ */

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

/* composed only while on the device */
static const GpukitTwinMethod AMBCUDAMethods[] = {
  GPUKIT_TWIN_METHOD("MatSetPreallocationCOO_C", MatSetPreallocationCOO_AMBCUDA),
  GPUKIT_TWIN_METHOD("MatSetValuesCOO_C", MatSetValuesCOO_AMBCUDA),
  GPUKIT_TWIN_METHOD("GpukitMatGetDeviceCSR_C", MatGetDeviceCSR_AMBCUDA),
  GPUKIT_TWIN_METHOD("GpukitMatRestoreDeviceCSR_C", MatRestoreDeviceCSR_AMBCUDA),
  GPUKIT_TWIN_METHOD("MatAMBGetInfo_C", MatAMBGetInfo_AMBCUDA),
};

static PetscErrorCode MatBindToCPU_AMBCUDA(Mat A, PetscBool flg)
{
  PetscFunctionBegin;
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
  PetscCall(PetscOptionsBool("-mat_amb_autotune", "Tune the device product's b and threads per block with gpukit's tuner (-gpukit_tune); false: the model's b and 256 threads", "MATAMBCUDA", tune, &tune, &set));
  if (set) {
    cu->autotune = tune;
    PetscCall(GpukitTunerDestroy(&cu->tuner));
  }
  PetscOptionsHeadEnd();
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
  if (cu->fallback) PetscCall(PetscViewerASCIIPrintf(viewer, "AMB on the GPU: CSR fallback kernel (%s)\n", cu->why));
  else {
    PetscInt b, block;
    PetscCall(AMBCUDAGetConfig_Private(A, &b, &block));
    PetscCall(PetscViewerASCIIPrintf(viewer, "AMB on the GPU: AMB kernel%s, %s values, b %" PetscInt_FMT " (model %" PetscInt_FMT "), %" PetscInt_FMT " threads per block (%s)\n", cu->planopt.deterministic ? " (deterministic: no atomics)" : "", cu->planopt.values == AMB_VALUES_SINGLE ? "single" : "double", b, cu->bmodel, block, cu->why));
    if (cu->built) PetscCall(PetscViewerASCIIPrintf(viewer, "  device layout: %lld chunks, %lld stored values, %lld atomic rows, %lld slices of long chunks (limit %d blocks), model %.4g bytes (CSR %.4g)\n", cu->L.nchunks, cu->L.nval, cu->L.ninit, cu->L.nslices, cu->L.longnb, cu->bytes, cu->bytescsr));
    if (cu->tuner) {
      PetscCall(PetscViewerASCIIPushTab(viewer));
      PetscCall(GpukitTunerView(cu->tuner, viewer));
      PetscCall(PetscViewerASCIIPopTab(viewer));
    } else if (!cu->autotune) PetscCall(PetscViewerASCIIPrintf(viewer, "  (not tuned: -mat_amb_autotune false)\n"));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "  device: %" PetscInt_FMT " structure uploads, %" PetscInt_FMT " value uploads, %" PetscInt_FMT " layout builds, %" PetscInt_FMT " value refreshes\n", cu->nstructup, cu->nvalup, cu->nbuild, cu->nrefresh));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   Conversion, destroy, create
   ------------------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatConvert_SeqAMB_SeqAMBCUDA(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatConvert_SeqAMBCUDA_SeqAMB(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatConvert_SeqAIJ_SeqAMBCUDA(Mat, MatType, MatReuse, Mat *);

static PetscErrorCode AMBCUDACompose_Private(Mat A, PetscBool on)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaijamb_seqaijambcuda_C", on ? GPUKIT_FN(MatConvert_SeqAMB_SeqAMBCUDA) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaijambcuda_seqaijamb_C", on ? GPUKIT_FN(MatConvert_SeqAMBCUDA_SeqAMB) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaijambcuda_seqamb_C", on ? GPUKIT_FN(MatConvert_SeqAMBCUDA_SeqAMB) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_seqaijambcuda_C", on ? GPUKIT_FN(MatConvert_SeqAIJ_SeqAMBCUDA) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_seqambcuda_C", on ? GPUKIT_FN(MatConvert_SeqAIJ_SeqAMBCUDA) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaij_ambcuda_C", on ? GPUKIT_FN(MatConvert_SeqAIJ_SeqAMBCUDA) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatConvert_seqaijambcuda_seqaij_C", on ? GPUKIT_FN(MatConvert_SeqAMB_SeqAIJ) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatAMBCUDAGetStats_C", on ? GPUKIT_FN(MatAMBCUDAGetStats_AMBCUDA) : NULL));
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
  if (cu->spmat) PetscCallCUSPARSE(cusparseDestroySpMat(cu->spmat));
  if (cu->spx) PetscCallCUSPARSE(cusparseDestroyDnVec(cu->spx));
  if (cu->spy) PetscCallCUSPARSE(cusparseDestroyDnVec(cu->spy));
  if (cu->spbuf) PetscCallCUDA(cudaFree(cu->spbuf));
  if (cu->sphandle) PetscCallCUSPARSE(cusparseDestroy(cu->sphandle));
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

/* the twin's copies: the host is authoritative and the device uploads by itself, so these only make the twin's
   protocol whole (GpukitTwinDetach() copies down only a device-only state, which never happens here) */
static PetscErrorCode AMBCUDACopyUp_Private(Mat A, PetscLogDouble *bytes)
{
  PetscFunctionBegin;
  *bytes = 0;
  if (A->assembled) PetscCall(AMBCUDASyncCSR_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AMBCUDACopyDown_Private(Mat A, PetscLogDouble *bytes)
{
  PetscFunctionBegin;
  (void)A;
  *bytes = 0;
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
  cu->twin.copyup   = AMBCUDACopyUp_Private;
  cu->twin.copydown = AMBCUDACopyDown_Private;
  cu->twin.evup     = MAT_AMBCUDA_CopyUp;
  cu->twin.evdown   = MAT_AMBCUDA_CopyUp;
  cu->twin.ops      = AMBCUDAOps;
  cu->twin.nops     = (PetscInt)(sizeof(AMBCUDAOps) / sizeof(AMBCUDAOps[0]));
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
     b <= 8; the model's b starts the tuner)
.  -mat_amb_deterministic - the product without atomics: one thread per row in the host kernel's order, bitwise equal to
     the host AMB product
.  -mat_amb_values <double,single> - the device values in FP32 (vectors and sums stay FP64)
.  -mat_amb_cuda_block_size <n> - threads per block of the product (fixes it; otherwise tuned)
.  -mat_amb_cuda_long_blocks <0> - a thread of the product sums at most this many blocks of a lane; longer chunks
     (power-law rows) are split over more threads and their rows added atomically (0: automatic, 8 x the mean blocks
     per (row, segment) pair and at least 128)
-  -mat_amb_autotune <true> - tune b and the threads per block with gpukit's tuner (kernel "amb_mult")

   Level: beginner

   Notes:
   The host AIJ copy is authoritative. Products, transpose products (CSR on a device-built transpose), the diagonal,
   scaling, shift, zero entries and COO assembly run on the device; everything else runs AIJ's host code, after which
   the device uploads the values once (event AMBCUDACopyUp; nnz*8 bytes when the pattern is unchanged) and refreshes the
   AMB values through the CSR-position -> slot map (AMBCUDARefresh). A new pattern rebuilds the layout on the device
   (AMBCUDABuild). `MatBindToCPU()` runs the host AMB kernel. `MatConvert()` goes both ways with `MATSEQAIJ` and
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
  PetscCall(MatRegisterRootName(MATAMBCUDA, MATSEQAMBCUDA, MATMPIAMBCUDA));
  PetscCall(MatRegister(MATAMBCUDA, MatCreate_AMBCUDA));
  PetscCall(MatRegister(MATSEQAMBCUDA, MatCreate_SeqAMBCUDA));
  PetscCall(MatRegister(MATMPIAMBCUDA, MatCreate_MPIAMBCUDA));
  PetscCall(MatRegister("seqambcuda", MatCreate_SeqAMBCUDA));
  PetscCall(MatRegister("mpiambcuda", MatCreate_MPIAMBCUDA));
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
