/*
   MATSEQSGDIACUDA and MATMPISGDIACUDA: MATSGDIA with its values on an NVIDIA GPU. Built only against a PETSc with
   CUDA; it replaces the registration in sgdiacudareg.c. Kernels: sgdiakernels.cu (products, diagonal) and
   sgdiaopskernels.cu (everything else). Other rooms of the type: sgdiapowerscuda.cu (the device matrix powers hook),
   sgdiacsrcuda.cu (the device CSR of MATSEQSGDIACUDA); shared layer: gpukittwin.h (host/device twin), gpukitcoo.h
   (COO assembly), gpukittune.h (the product's knobs).

   Each type is its host type (MatCreate_SeqSGDIA(), MatCreate_MPISGDIA()) plus one in-place convert,
   SGDIAConvertToCUDA_Private(): it hangs a Mat_SGDIACUDA on Mat_SGDIA's spptr and attaches the twin (gpukittwin.h),
   which keeps the host ops table (for MatBindToCPU() and the way back to MATSGDIA), makes VECCUDA the vector type and
   installs the device ops of ONE list, SGDIACUDAOps[].

   Two copies of the values, and A->offloadmask says which are valid, as for PETSc's own GPU types:
   - host code (MatSetValues(), MatGetRow(), MatView(), conversions, ...) calls SGDIAHostAccess() first, which
     lands in GpukitTwinHostAccess(): it copies the values back when only the device has them (GPU), and a writer
     leaves the host copy as the only valid one (CPU);
   - device code calls SGDIACUDACopyToGPU_Private() first, which copies to the device when only the host has them, and
     a device writer leaves the device copy as the only valid one (GPU);
   so a Newton loop that assembles on the host uploads once per assembly, and one that assembles on the device
   (MatSetValuesCOO(), MatSGDIAGetArrayWriteCUDA()) never moves the matrix at all.
*/
#include "sgdiacudaimpl.h"
#include "sgdiahalocuda.h"
#include "gpukitaijfwd.h"

#if defined(GPUKIT_SGDIACUDA_AVAILABLE)

static const char *const SGDIACUDAVariants[] = {"row", "row2", "stencil", "SGDIACUDAVariant", "", NULL};

/* ------------------------------------------------------------------------------------------------------
   Helpers
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode SGDIACUDAIsCUDAVec_Private(Vec v, PetscBool *flg)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)v, flg, VECSEQCUDA, VECMPICUDA, ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* are all the given vectors (NULL ones skipped) CUDA vectors; if not, say once that the host code runs */
PetscErrorCode SGDIACUDAVecsOnDevice_Private(Mat A, const char op[], PetscInt n, const Vec vecs[], PetscBool *ok)
{
  Mat_SGDIACUDA *cu = SGDIACUDAGet(A);

  PetscFunctionBegin;
  *ok = PETSC_TRUE;
  for (PetscInt i = 0; i < n && *ok; i++) {
    PetscBool iscuda;
    if (!vecs[i]) continue;
    PetscCall(SGDIACUDAIsCUDAVec_Private(vecs[i], &iscuda));
    if (!iscuda) {
      *ok = PETSC_FALSE;
      if (!cu->told_vec) {
        PetscCall(PetscInfo(A, "%s with a vector of type %s: running the host code; use VECCUDA vectors (MatCreateVecs(), -dm_vec_type cuda) to stay on the GPU\n", op, ((PetscObject)vecs[i])->type_name));
        cu->told_vec = PETSC_TRUE;
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGDIACUDAIsMPI_Private(Mat A, PetscBool *ismpi)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, ismpi, MATMPISGDIA, MATMPISGDIACUDA, ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGDIACUDAIsCUDAMat_Private(Mat A, PetscBool *flg)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, flg, MATSEQSGDIACUDA, MATMPISGDIACUDA, ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Does the product need the ghost exchange? Not on one rank without periodic dimensions (as in sgdia.c). */
/* Does the product need the ghost exchange? Not on one rank without periodic dimensions (as in sgdia.c). */
PetscBool SGDIACUDANeedsGhosts_Private(const Mat_SGDIA *sg)
{
  for (PetscInt d = 0; d < 3; d++)
    if (sg->xm[d] != sg->gxm[d]) return PETSC_TRUE;
  return PETSC_FALSE;
}


static PetscErrorCode SGDIACUDACheckSetUp_Private(Mat A)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)A->data;

  PetscFunctionBegin;
  PetscCheck(sg->da && sg->k > 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "MATSGDIACUDA matrix is not set up: create it with DMCreateMatrix() on a DMDA (-dm_mat_type sgdiacuda), or call MatSetDM() and MatSetUp()");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the stencil by value in the kernel arguments (k <= GPUKIT_SGDIA_CUDA_PARAM_K): offsets in the ghosted or the owned box */
static void SGDIACUDAStencilByValue(const Mat_SGDIA *sg, PetscBool ghosted, GpukitSGDIAMultArgs *a)
{
  for (PetscInt s = 0; s < sg->k; s++) {
    a->poff[s] = (long long)(ghosted ? sg->goff[s] : sg->ooff[s]);
    for (PetscInt d = 0; d < 3; d++) a->pdelta[3 * s + d] = (signed char)sg->delta[3 * s + d];
  }
}

/* Device storage of the right size and the stencil offsets on the device (written by a kernel for stencils of at
   most GPUKIT_SGDIA_CUDA_PARAM_K points, copied up otherwise); a new value array is zeroed, so the
   slots outside the domain are zero there as on the host. Copies no values. */
static PetscErrorCode SGDIACUDAAllocate_Private(Mat A, cudaStream_t stream)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  const PetscInt k  = sg->k;

  PetscFunctionBegin;
  PetscCall(SGDIACUDACheckSetUp_Private(A));
  if (cu->nv != sg->nv || !cu->v) {
    if (cu->v) PetscCallCUDA(cudaFree(cu->v));
    cu->v = NULL;
    if (sg->nv) {
      PetscCallCUDA(cudaMalloc((void **)&cu->v, (size_t)sg->nv * sizeof(PetscScalar)));
      PetscCallCUDA(cudaMemsetAsync(cu->v, 0, (size_t)sg->nv * sizeof(PetscScalar), stream));
    }
    cu->nv = sg->nv;
    PetscCall(GpukitTwinDeviceLost(A));
  }
  if (cu->k != k) {
    long long *off;
    int       *delta;
    if (cu->off) PetscCallCUDA(cudaFree(cu->off));
    if (cu->delta) PetscCallCUDA(cudaFree(cu->delta));
    cu->off   = NULL;
    cu->delta = NULL;
    cu->k     = 0;
    PetscCallCUDA(cudaMalloc((void **)&cu->off, 2 * (size_t)k * sizeof(long long)));
    PetscCallCUDA(cudaMalloc((void **)&cu->delta, 3 * (size_t)k * sizeof(int)));
    if (k <= GPUKIT_SGDIA_CUDA_PARAM_K) { /* written by a kernel from its arguments: no host-to-device copy */
      GpukitSGDIAMultArgs a;
      PetscCall(PetscMemzero(&a, sizeof(a)));
      a.k = (int)k;
      for (PetscInt b = 0; b < 2; b++) {
        SGDIACUDAStencilByValue(sg, (PetscBool)b, &a);
        PetscCallCUDA(GpukitSGDIAFillStencilCUDA(&a, cu->off + b * k, cu->delta, stream));
      }
      cu->k = k;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(PetscMalloc2(2 * k, &off, 3 * k, &delta));
    for (PetscInt s = 0; s < k; s++) {
      off[s]     = (long long)sg->ooff[s];
      off[k + s] = (long long)sg->goff[s];
      for (PetscInt d = 0; d < 3; d++) delta[3 * s + d] = (int)sg->delta[3 * s + d];
    }
    PetscCallCUDA(cudaMemcpyAsync(cu->off, off, 2 * (size_t)k * sizeof(long long), cudaMemcpyHostToDevice, stream));
    PetscCallCUDA(cudaMemcpyAsync(cu->delta, delta, 3 * (size_t)k * sizeof(int), cudaMemcpyHostToDevice, stream));
    PetscCallCUDA(cudaStreamSynchronize(stream));
    PetscCall(PetscFree2(off, delta));
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)k * (2 * sizeof(long long) + 3 * sizeof(int))));
    cu->k = k;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the twin's copies (gpukittwin.h logs them and keeps the offload mask) */
static PetscErrorCode SGDIACUDACopyUp_Private(Mat A, PetscLogDouble *bytes)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  cudaStream_t   stream;

  PetscFunctionBegin;
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
  if (sg->nv) PetscCallCUDA(cudaMemcpyAsync(cu->v, sg->v, (size_t)sg->nv * sizeof(PetscScalar), cudaMemcpyHostToDevice, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream)); /* the host array may change as soon as we return */
  *bytes = (PetscLogDouble)sg->nv * sizeof(PetscScalar);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGDIACUDACopyDown_Private(Mat A, PetscLogDouble *bytes)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  cudaStream_t   stream;

  PetscFunctionBegin;
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
  if (sg->nv) PetscCallCUDA(cudaMemcpyAsync(sg->v, cu->v, (size_t)sg->nv * sizeof(PetscScalar), cudaMemcpyDeviceToHost, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream));
  *bytes = (PetscLogDouble)sg->nv * sizeof(PetscScalar);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Make the device copy valid: device storage of the right size, then the values up when only the host has them. */
PetscErrorCode SGDIACUDACopyToGPU_Private(Mat A)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
  PetscCall(SGDIACUDAAllocate_Private(A, stream));
  PetscCall(GpukitTwinCopyToGPU(A, &SGDIACUDAGet(A)->twin));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Mat_SGDIA's hostaccess hook */
static PetscErrorCode SGDIACUDAHostAccess(Mat A, PetscBool write)
{
  PetscFunctionBegin;
  PetscCall(GpukitTwinHostAccess(A, &SGDIACUDAGet(A)->twin, write));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The device array for a device op that changes the values: with keep, the current values (copied up when
   needed); without, storage whose values will all be overwritten. The caller then calls GpukitTwinDeviceWritten(). */
static PetscErrorCode SGDIACUDADeviceWrite_Private(Mat A, PetscBool keep, PetscScalar **v, cudaStream_t *stream)
{
  Mat_SGDIACUDA *cu = SGDIACUDAGet(A);

  PetscFunctionBegin;
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, stream));
  if (keep) PetscCall(SGDIACUDACopyToGPU_Private(A));
  else PetscCall(SGDIACUDAAllocate_Private(A, *stream));
  *v = cu->v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* VECSEQCUDA vectors over the ghosted box: the DMDA's own local vectors if they are, else ours */
PetscErrorCode SGDIACUDAGetLocalVecs_Private(Mat A, Vec *xl, Vec *yl)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscInt       n  = sg->gxm[0] * sg->gxm[1] * sg->gxm[2] * sg->dof;
  PetscBool      iscuda;
  Vec           *mine[2] = {&cu->xl, &cu->yl}, dms[2] = {sg->xl, sg->yl}, *out[2] = {xl, yl};

  PetscFunctionBegin;
  for (PetscInt i = 0; i < 2; i++) {
    if (!out[i]) continue;
    PetscCall(PetscObjectTypeCompare((PetscObject)dms[i], VECSEQCUDA, &iscuda));
    if (iscuda) {
      *out[i] = dms[i];
      continue;
    }
    if (*mine[i]) {
      PetscInt nl;
      PetscCall(VecGetLocalSize(*mine[i], &nl));
      if (nl != n) PetscCall(VecDestroy(mine[i]));
    }
    if (!*mine[i]) {
      PetscCall(PetscInfo(A, "The DMDA's local vectors are of type %s, not VECSEQCUDA: MATSGDIACUDA gathers ghosts into a VECSEQCUDA of its own (-dm_vec_type cuda avoids it)\n", ((PetscObject)dms[i])->type_name));
      PetscCall(VecCreate(PETSC_COMM_SELF, mine[i]));
      PetscCall(VecSetSizes(*mine[i], n, n));
      PetscCall(VecSetBlockSize(*mine[i], sg->dof));
      PetscCall(VecSetType(*mine[i], VECSEQCUDA));
    }
    *out[i] = *mine[i];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the kernel arguments; x over the ghosted box or over the owned box */
PetscErrorCode SGDIACUDASetArgs_Private(Mat A, PetscBool ghosted, GpukitSGDIAMultArgs *a)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;

  PetscFunctionBegin;
  for (PetscInt d = 0; d < 3; d++) PetscCheck(sg->M[d] < PETSC_INT32_MAX - 2 * GPUKIT_SGDIA_MAX_WIDTH, PETSC_COMM_SELF, PETSC_ERR_SUP, "MATSGDIACUDA takes grids of fewer than 2^31 points along each dimension; dimension %" PetscInt_FMT " has %" PetscInt_FMT, d, sg->M[d]);
  a->m   = (long long)sg->m;
  a->dof = (int)sg->dof;
  a->k   = (int)sg->k;
  for (PetscInt d = 0; d < 3; d++) {
    a->xs[d]       = (int)sg->xs[d];
    a->xm[d]       = (int)sg->xm[d];
    a->M[d]        = (int)sg->M[d];
    a->periodic[d] = sg->bd[d] == DM_BOUNDARY_PERIODIC;
    a->sw[d]       = d < sg->dim ? (int)sg->sw : 0;
    a->lo[d]       = (int)(ghosted ? sg->gxs[d] : sg->xs[d]);
    a->n[d]        = (int)(ghosted ? sg->gxm[d] : sg->xm[d]);
  }
  a->v     = cu->v;
  a->delta = cu->delta;
  a->off   = cu->off + (ghosted ? sg->k : 0);
  if (sg->k <= GPUKIT_SGDIA_CUDA_PARAM_K) SGDIACUDAStencilByValue(sg, ghosted, a);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Products
   ------------------------------------------------------------------------------------------------------ */

static PetscBool SGDIACUDAAligned(const void *p)
{
  return ((uintptr_t)p % 16) == 0 ? PETSC_TRUE : PETSC_FALSE;
}

/* the device arrays of an output z = y + ... (y NULL: z is only written; y == z: read and written) */
static PetscErrorCode SGDIACUDAGetOutArrays_Private(Vec y, Vec z, const PetscScalar **ya, PetscScalar **za)
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

static PetscErrorCode SGDIACUDARestoreOutArrays_Private(Vec y, Vec z, const PetscScalar **ya, PetscScalar **za)
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

/* ------------------------------------------------------------------------------------------------------
   The product's knobs on gpukit's tuner (src/sys/gpukittune.h): "variant" (row, row2, stencil: categorical) and
   "block" (threads per block, ordered), starting at row/256. An option that sets a knob fixes it (one value);
   -mat_sgdia_autotune false makes no tuner at all: the product then runs the starting or fixed values.
   ------------------------------------------------------------------------------------------------------ */

static const PetscInt SGDIACUDATuneBlocks[] = {64, 96, 128, 192, 256, 512, 1024};

/* a variant the product can run on this matrix (row2 needs an even number of local rows, stencil a stencil with a
   kernel of its own); ctx is the Mat_SGDIACUDA, whose tuneargs hold the product's arguments */
static PetscBool SGDIACUDATuneValid(void *ctx, const PetscInt cfg[])
{
  const Mat_SGDIACUDA *cu = (const Mat_SGDIACUDA *)ctx;

  return GpukitSGDIAMultVariantValid(&cu->tuneargs, (int)cfg[0]) ? PETSC_TRUE : PETSC_FALSE;
}

/* the tuner of the product for the current layout and options (none with -mat_sgdia_autotune false). The shape class:
   grid dimension, dof, stencil points, and the local rows as a sparse operator (rows, stored values, values per row). */
static PetscErrorCode SGDIACUDATunerSetUp_Private(Mat A)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  GpukitTuneKnob knobs[2];
  char           csr[128], shape[256];
  const PetscInt nblocks = (PetscInt)(sizeof(SGDIACUDATuneBlocks) / sizeof(SGDIACUDATuneBlocks[0]));

  PetscFunctionBegin;
  if (!cu->autotune) {
    PetscCall(GpukitTunerDestroy(&cu->tuner));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!sg->da || sg->k < 1) PetscFunctionReturn(PETSC_SUCCESS); /* not set up: no product yet */
  if (cu->tuner && cu->tune_m == sg->m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GpukitTunerDestroy(&cu->tuner));
  PetscCall(PetscMemzero(knobs, sizeof(knobs)));
  knobs[0].name = "variant";
  if (cu->fixvariant) { /* labels[i] names values[i]: the one label of the fixed value */
    knobs[0].n         = 1;
    knobs[0].values[0] = cu->variant;
    knobs[0].labels    = SGDIACUDAVariants + cu->variant;
  } else {
    knobs[0].n = GPUKIT_SGDIA_CUDA_VARIANTS;
    for (PetscInt i = 0; i < GPUKIT_SGDIA_CUDA_VARIANTS; i++) knobs[0].values[i] = i;
    knobs[0].labels = SGDIACUDAVariants;
  }
  knobs[0].start = 0; /* row */
  knobs[1].name  = "block";
  if (cu->fixblock) {
    knobs[1].n         = 1;
    knobs[1].values[0] = cu->block;
  } else {
    knobs[1].n = nblocks;
    for (PetscInt i = 0; i < nblocks; i++) {
      knobs[1].values[i] = SGDIACUDATuneBlocks[i];
      if (SGDIACUDATuneBlocks[i] == GPUKIT_SGDIA_CUDA_BLOCK_SIZE) knobs[1].start = i;
    }
  }
  PetscCall(GpukitTuneShapeCSR(sg->m, sg->nv, sg->k * sg->dof, csr, sizeof(csr)));
  PetscCall(PetscSNPrintf(shape, sizeof(shape), "d%" PetscInt_FMT ".f%" PetscInt_FMT ".k%" PetscInt_FMT ".%s", sg->dim, sg->dof, sg->k, csr));
  PetscCall(SGDIACUDASetArgs_Private(A, SGDIACUDANeedsGhosts_Private(sg), &cu->tuneargs)); /* for the validity callback */
  PetscCall(GpukitTunerCreate((PetscObject)A, "sgdia_mult", 2, knobs, &cu->tuner));
  PetscCall(GpukitTunerSetShape(cu->tuner, shape));
  PetscCall(GpukitTunerSetDevice(cu->tuner, PETSC_TRUE));
  if (!cu->fixvariant) PetscCall(GpukitTunerSetValid(cu->tuner, SGDIACUDATuneValid, cu));
  cu->tune_m = sg->m;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the product's current variant and threads per block: the tuner's choice (its starting values until it has one), or
   the fixed ones without a tuner; the matrix powers hook follows it */
PetscErrorCode SGDIACUDAGetProductConfig_Private(Mat A, PetscInt *variant, PetscInt *block)
{
  Mat_SGDIACUDA *cu = SGDIACUDAGet(A);

  PetscFunctionBegin;
  PetscCall(SGDIACUDATunerSetUp_Private(A));
  if (cu->tuner) {
    const PetscInt *cfg;
    PetscBool       done;
    PetscCall(GpukitTunerGetConfig(cu->tuner, &cfg, &done));
    *variant = cfg[0];
    *block   = cfg[1];
  } else {
    *variant = cu->variant;
    *block   = cu->block;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the tuner must start again: an option changed a knob */
static PetscErrorCode SGDIACUDATunerReset_Private(Mat A)
{
  PetscFunctionBegin;
  PetscCall(GpukitTunerDestroy(&SGDIACUDAGet(A)->tuner));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* z = A x, or z = y + A x when y is not NULL (y may be z) */
static PetscErrorCode MatMultAdd_SGDIACUDA_Private(Mat A, Vec x, Vec y, Vec z)
{
  Mat_SGDIA          *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA      *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscBool           ok, ghosted;
  Vec                 xin = x, vecs[3] = {x, y, z};
  const PetscScalar  *xa, *ya = NULL;
  PetscScalar        *za;
  GpukitSGDIAMultArgs args;
  cudaStream_t        stream;
  const PetscInt     *cfg;
  PetscInt            nlaunch, fixed[2];
  int                 variant;

  PetscFunctionBegin;
  PetscCall(SGDIACUDAVecsOnDevice_Private(A, y ? "MatMultAdd" : "MatMult", 3, vecs, &ok));
  if (!ok) {
    if (y) PetscCall((*cu->twin.hostops.multadd)(A, x, y, z));
    else PetscCall((*cu->twin.hostops.mult)(A, x, z));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (sg->dof > GPUKIT_SGDIA_CUDA_MAX_DOF && !cu->told_dof) {
    PetscCall(PetscInfo(A, "dof %" PetscInt_FMT " has no kernel of its own (1..%d do): MatMult runs the generic kernel\n", sg->dof, GPUKIT_SGDIA_CUDA_MAX_DOF));
    cu->told_dof = PETSC_TRUE;
  }
  PetscCall(SGDIACUDACopyToGPU_Private(A));
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_MultCUDA, A, x, z, 0));
  ghosted = SGDIACUDANeedsGhosts_Private(sg);
  if (ghosted) { /* several ranks: the halo exchange overlapped with the interior rows (sgdiahalocuda.cu) */
    PetscBool done;
    PetscInt  hvariant, hblock;

    PetscCall(SGDIACUDAGetProductConfig_Private(A, &hvariant, &hblock));
    PetscCall(SGDIACUDAHaloMult_Private(A, &cu->halo, x, y, z, hvariant, hblock, &done));
    if (done) {
      PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)sg->nv));
      PetscCall(PetscLogEventEnd(MAT_SGDIA_MultCUDA, A, x, z, 0));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  if (ghosted) { /* one rank with periodic dimensions, or -mat_sgdia_overlap 0: PETSc's scatter, on device buffers */
    PetscCall(SGDIACUDAGetLocalVecs_Private(A, &xin, NULL));
    PetscCall(DMGlobalToLocalBegin(sg->da, x, INSERT_VALUES, xin));
    PetscCall(DMGlobalToLocalEnd(sg->da, x, INSERT_VALUES, xin));
  }
  PetscCall(SGDIACUDASetArgs_Private(A, ghosted, &args));
  PetscCall(VecCUDAGetArrayRead(xin, &xa));
  PetscCall(SGDIACUDAGetOutArrays_Private(y, z, &ya, &za));
  PetscCall(SGDIACUDATunerSetUp_Private(A));
  if (cu->tuner) { /* z = z + A x (y == z) must run once; any other product may be repeated while it is timed */
    cu->tuneargs = args;
    PetscCall(GpukitTunerSetRepeatable(cu->tuner, (PetscBool)!(y && y == z)));
    PetscCall(GpukitTunerBegin(cu->tuner, A->nonzerostate, (void *)stream, &cfg, &nlaunch));
  } else {
    fixed[0] = cu->variant;
    fixed[1] = cu->block;
    cfg      = fixed;
    nlaunch  = 1;
  }
  variant = (int)cfg[0];
  if (!GpukitSGDIAMultVariantValid(&args, variant) || !SGDIACUDAAligned(za) || (ya && !SGDIACUDAAligned(ya))) variant = 0;
  PetscCall(PetscLogGpuTimeBegin());
  for (PetscInt l = 0; l < nlaunch; l++) {
    PetscCallCUDA(GpukitSGDIAMultCUDA(&args, xa, ya, za, (int)cfg[1], variant, stream));
    if (cu->tuner) PetscCall(GpukitTunerMark(cu->tuner));
  }
  PetscCall(PetscLogGpuTimeEnd());
  if (cu->tuner) PetscCall(GpukitTunerEnd(cu->tuner));
  PetscCall(SGDIACUDARestoreOutArrays_Private(y, z, &ya, &za));
  PetscCall(VecCUDARestoreArrayRead(xin, &xa));
  PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)sg->nv));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_MultCUDA, A, x, z, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_SGDIACUDA(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultAdd_SGDIACUDA_Private(A, x, NULL, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultAdd_SGDIACUDA(Mat A, Vec x, Vec y, Vec z)
{
  PetscFunctionBegin;
  PetscCall(MatMultAdd_SGDIACUDA_Private(A, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* z = A^T x, or z = y + A^T x: gathered per output entry over the ghosted box, then added to the owners */
static PetscErrorCode MatMultTransposeAdd_SGDIACUDA_Private(Mat A, Vec x, Vec y, Vec z)
{
  Mat_SGDIA          *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA      *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscBool           ok, ghosted;
  Vec                 vecs[3] = {x, y, z}, yl;
  const PetscScalar  *xa, *ya = NULL;
  PetscScalar        *za;
  GpukitSGDIAMultArgs args;
  cudaStream_t        stream;

  PetscFunctionBegin;
  PetscCall(SGDIACUDAVecsOnDevice_Private(A, y ? "MatMultTransposeAdd" : "MatMultTranspose", 3, vecs, &ok));
  if (!ok) {
    if (y) PetscCall((*cu->twin.hostops.multtransposeadd)(A, x, y, z));
    else PetscCall((*cu->twin.hostops.multtranspose)(A, x, z));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIACUDACopyToGPU_Private(A));
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_MultTrCUDA, A, x, z, 0));
  ghosted = SGDIACUDANeedsGhosts_Private(sg);
  PetscCall(SGDIACUDASetArgs_Private(A, ghosted, &args));
  PetscCall(VecCUDAGetArrayRead(x, &xa));
  if (ghosted) {
    PetscCall(SGDIACUDAGetLocalVecs_Private(A, NULL, &yl));
    PetscCall(VecCUDAGetArrayWrite(yl, &za));
    PetscCall(PetscLogGpuTimeBegin());
    PetscCallCUDA(GpukitSGDIAMultTransposeCUDA(&args, xa, NULL, za, (int)cu->block, stream));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(VecCUDARestoreArrayWrite(yl, &za));
    PetscCall(VecCUDARestoreArrayRead(x, &xa));
    if (!y) PetscCall(VecSet(z, 0.0));
    else if (y != z) PetscCall(VecCopy(y, z));
    PetscCall(DMLocalToGlobalBegin(sg->da, yl, ADD_VALUES, z));
    PetscCall(DMLocalToGlobalEnd(sg->da, yl, ADD_VALUES, z));
  } else {
    PetscCall(SGDIACUDAGetOutArrays_Private(y, z, &ya, &za));
    PetscCall(PetscLogGpuTimeBegin());
    PetscCallCUDA(GpukitSGDIAMultTransposeCUDA(&args, xa, ya, za, (int)cu->block, stream));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(SGDIACUDARestoreOutArrays_Private(y, z, &ya, &za));
    PetscCall(VecCUDARestoreArrayRead(x, &xa));
  }
  PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)sg->nv));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_MultTrCUDA, A, x, z, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTranspose_SGDIACUDA(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMultTransposeAdd_SGDIACUDA_Private(A, x, NULL, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTransposeAdd_SGDIACUDA(Mat A, Vec x, Vec y, Vec z)
{
  PetscFunctionBegin;
  PetscCall(MatMultTransposeAdd_SGDIACUDA_Private(A, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Diagonal, scaling, AXPY, copies
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatGetDiagonal_SGDIACUDA(Mat A, Vec d)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscBool      ok;
  PetscScalar   *da;
  cudaStream_t   stream;

  PetscFunctionBegin;
  PetscCall(SGDIACUDAVecsOnDevice_Private(A, "MatGetDiagonal", 1, &d, &ok));
  if (!ok) {
    PetscCall((*cu->twin.hostops.getdiagonal)(A, d));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIACUDACopyToGPU_Private(A));
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
  PetscCall(VecCUDAGetArrayWrite(d, &da));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitSGDIAGetDiagonalCUDA((long long)sg->m, (int)sg->dof, (int)sg->center, cu->v, da, (int)cu->block, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(VecCUDARestoreArrayWrite(d, &da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatScale_SGDIACUDA(Mat A, PetscScalar a)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscScalar   *v;
  cudaStream_t   stream;

  PetscFunctionBegin;
  PetscCall(SGDIACUDADeviceWrite_Private(A, PETSC_TRUE, &v, &stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_OpsCUDA, A, 0, 0, 0));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitSGDIAScaleCUDA((long long)sg->nv, a, v, (int)cu->block, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops((PetscLogDouble)sg->nv));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_OpsCUDA, A, 0, 0, 0));
  PetscCall(GpukitTwinDeviceWritten(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatShift_SGDIACUDA(Mat A, PetscScalar a)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscScalar   *v;
  cudaStream_t   stream;

  PetscFunctionBegin;
  PetscCall(SGDIACUDADeviceWrite_Private(A, PETSC_TRUE, &v, &stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_OpsCUDA, A, 0, 0, 0));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitSGDIAShiftCUDA((long long)sg->m, (int)sg->dof, (int)sg->center, a, v, (int)cu->block, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops((PetscLogDouble)sg->m));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_OpsCUDA, A, 0, 0, 0));
  PetscCall(GpukitTwinDeviceWritten(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDiagonalSet_SGDIACUDA(Mat A, Vec D, InsertMode mode)
{
  Mat_SGDIA         *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA     *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscScalar       *v;
  const PetscScalar *da;
  PetscBool          ok;
  cudaStream_t       stream;

  PetscFunctionBegin;
  PetscCall(SGDIACUDAVecsOnDevice_Private(A, "MatDiagonalSet", 1, &D, &ok));
  if (!ok) {
    PetscCall((*cu->twin.hostops.diagonalset)(A, D, mode));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIACUDADeviceWrite_Private(A, PETSC_TRUE, &v, &stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_OpsCUDA, A, 0, 0, 0));
  PetscCall(VecCUDAGetArrayRead(D, &da));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitSGDIADiagonalSetCUDA((long long)sg->m, (int)sg->dof, (int)sg->center, da, mode == ADD_VALUES ? 1 : 0, v, (int)cu->block, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(VecCUDARestoreArrayRead(D, &da));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_OpsCUDA, A, 0, 0, 0));
  PetscCall(GpukitTwinDeviceWritten(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDiagonalScale_SGDIACUDA(Mat A, Vec l, Vec r)
{
  Mat_SGDIA         *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA     *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscScalar       *v;
  const PetscScalar *la, *ra;
  PetscBool          ok;
  Vec                vecs[2] = {l, r}, rl;
  cudaStream_t       stream;

  PetscFunctionBegin;
  PetscCall(SGDIACUDAVecsOnDevice_Private(A, "MatDiagonalScale", 2, vecs, &ok));
  if (!ok) {
    PetscCall((*cu->twin.hostops.diagonalscale)(A, l, r));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIACUDADeviceWrite_Private(A, PETSC_TRUE, &v, &stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_OpsCUDA, A, 0, 0, 0));
  if (l) {
    PetscCall(VecCUDAGetArrayRead(l, &la));
    PetscCall(PetscLogGpuTimeBegin());
    PetscCallCUDA(GpukitSGDIADiagonalScaleLeftCUDA((long long)sg->m, (int)(sg->k * sg->dof), la, v, (int)cu->block, stream));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(VecCUDARestoreArrayRead(l, &la));
  }
  if (r) {
    GpukitSGDIAMultArgs args;
    PetscCall(SGDIACUDAGetLocalVecs_Private(A, &rl, NULL));
    PetscCall(DMGlobalToLocalBegin(sg->da, r, INSERT_VALUES, rl));
    PetscCall(DMGlobalToLocalEnd(sg->da, r, INSERT_VALUES, rl));
    PetscCall(SGDIACUDASetArgs_Private(A, PETSC_TRUE, &args));
    PetscCall(VecCUDAGetArrayRead(rl, &ra));
    PetscCall(PetscLogGpuTimeBegin());
    PetscCallCUDA(GpukitSGDIADiagonalScaleRightCUDA(&args, ra, v, (int)cu->block, stream));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(VecCUDARestoreArrayRead(rl, &ra));
  }
  PetscCall(PetscLogEventEnd(MAT_SGDIA_OpsCUDA, A, 0, 0, 0));
  PetscCall(GpukitTwinDeviceWritten(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatZeroEntries_SGDIACUDA(Mat A)
{
  Mat_SGDIA   *sg = (Mat_SGDIA *)A->data;
  PetscScalar *v;
  cudaStream_t stream;

  PetscFunctionBegin;
  PetscCall(SGDIACUDADeviceWrite_Private(A, PETSC_FALSE, &v, &stream));
  if (sg->nv) PetscCallCUDA(cudaMemsetAsync(v, 0, (size_t)sg->nv * sizeof(PetscScalar), stream));
  PetscCall(GpukitTwinDeviceWritten(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool SGDIACUDASameLayout(const Mat_SGDIA *a, const Mat_SGDIA *b)
{
  if (a->nv != b->nv || a->dof != b->dof || a->k != b->k || a->m != b->m || a->sw != b->sw || a->stype != b->stype) return PETSC_FALSE;
  for (PetscInt d = 0; d < 3; d++)
    if (a->M[d] != b->M[d] || a->xs[d] != b->xs[d] || a->xm[d] != b->xm[d] || a->bd[d] != b->bd[d]) return PETSC_FALSE;
  return PETSC_TRUE;
}

static PetscErrorCode MatAXPY_SGDIACUDA(Mat Y, PetscScalar a, Mat X, MatStructure str)
{
  Mat_SGDIA     *sy = (Mat_SGDIA *)Y->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sy->spptr;
  PetscBool      xcuda;
  PetscScalar   *v;
  cudaStream_t   stream;

  PetscFunctionBegin;
  PetscCall(SGDIACUDAIsCUDAMat_Private(X, &xcuda));
  if (!xcuda || !SGDIACUDASameLayout(sy, (Mat_SGDIA *)X->data)) {
    PetscCall(PetscInfo(Y, "MatAXPY with X of type %s: host code\n", ((PetscObject)X)->type_name));
    PetscCall((*cu->twin.hostops.axpy)(Y, a, X, str));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIACUDACopyToGPU_Private(X));
  PetscCall(SGDIACUDADeviceWrite_Private(Y, PETSC_TRUE, &v, &stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_OpsCUDA, Y, X, 0, 0));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitSGDIAAXPYCUDA((long long)sy->nv, a, ((Mat_SGDIACUDA *)((Mat_SGDIA *)X->data)->spptr)->v, v, (int)cu->block, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)sy->nv));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_OpsCUDA, Y, X, 0, 0));
  PetscCall(GpukitTwinDeviceWritten(Y));
  PetscCall(PetscObjectStateIncrease((PetscObject)Y)); /* MatAXPY() does not */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* device to device when both are MATSGDIACUDA of one layout */
static PetscErrorCode MatCopy_SGDIACUDA(Mat A, Mat B, MatStructure str)
{
  Mat_SGDIA     *sa = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sa->spptr;
  PetscBool      bcuda;
  PetscScalar   *v;
  cudaStream_t   stream;

  PetscFunctionBegin;
  PetscCall(SGDIACUDAIsCUDAMat_Private(B, &bcuda));
  if (!bcuda || !SGDIACUDASameLayout(sa, (Mat_SGDIA *)B->data)) {
    PetscCall((*cu->twin.hostops.copy)(A, B, str));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIACUDACopyToGPU_Private(A));
  PetscCall(SGDIACUDADeviceWrite_Private(B, PETSC_FALSE, &v, &stream));
  if (sa->nv) PetscCallCUDA(cudaMemcpyAsync(v, cu->v, (size_t)sa->nv * sizeof(PetscScalar), cudaMemcpyDeviceToDevice, stream));
  PetscCall(GpukitTwinDeviceWritten(B));
  PetscCall(PetscObjectStateIncrease((PetscObject)B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDuplicate_SGDIACUDA(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_SGDIA     *sa = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *ca = (Mat_SGDIACUDA *)sa->spptr, *cb;

  PetscFunctionBegin;
  PetscCall((*ca->twin.hostops.duplicate)(A, MAT_DO_NOT_COPY_VALUES, B)); /* a MATSGDIACUDA of the same layout, zero */
  cb             = (Mat_SGDIACUDA *)((Mat_SGDIA *)(*B)->data)->spptr;
  cb->block      = ca->block; /* the settings; the duplicate makes its own tuner */
  cb->variant    = ca->variant;
  cb->fixblock   = ca->fixblock;
  cb->fixvariant = ca->fixvariant;
  cb->autotune   = ca->autotune;
  if (op == MAT_COPY_VALUES) PetscCall(MatCopy_SGDIACUDA(A, *B, SAME_NONZERO_PATTERN));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* two small kernels of the glue: marks of the zeroed rows, and the point-block diagonal in COO order */
__global__ static void SGDIAMarkRowsKernel(long long n, const long long *__restrict__ rows, double *mark)
{
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) mark[rows[i]] = 1.0;
}

static cudaError_t GpukitSGDIAMarkRowsCUDA(long long n, const long long *rows, double *mark, int block, cudaStream_t stream)
{
  if (n <= 0) return cudaSuccess;
  SGDIAMarkRowsKernel<<<(unsigned)((n + block - 1) / block), block, 0, stream>>>(n, rows, mark);
  return cudaGetLastError();
}

/* d[(p*dof + r)*dof + c] = block of point p, entry (r, c) */
__global__ static void SGDIAGatherBlockDiagonalKernel(long long n, int dof, int center, long long m, const double *__restrict__ v, double *d)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  const long long p = e / (dof * dof);
  const int       r = (int)((e / dof) % dof), c = (int)(e % dof);
  d[e]              = v[((long long)center * dof + c) * m + p * dof + r];
}

static cudaError_t GpukitSGDIAGatherBlockDiagonalCUDA(long long np, int dof, int center, long long m, const double *v, double *d, int block, cudaStream_t stream)
{
  const long long n = np * dof * dof;
  if (n <= 0) return cudaSuccess;
  SGDIAGatherBlockDiagonalKernel<<<(unsigned)((n + block - 1) / block), block, 0, stream>>>(n, dof, center, m, v, d);
  return cudaGetLastError();
}

/* ------------------------------------------------------------------------------------------------------
   Dirichlet rows
   ------------------------------------------------------------------------------------------------------ */

/* the owned rows among rows[] (named on any rank), on the device */
static PetscErrorCode SGDIACUDALocalRows_Private(Mat A, PetscInt n, const PetscInt rows[], PetscInt *nl, long long **dlrows, cudaStream_t stream)
{
  PetscInt  *lrows;
  long long *h;

  PetscFunctionBegin;
  PetscCall(SGDIASendToOwners_Private(A, n, rows, nl, &lrows));
  *dlrows = NULL;
  if (*nl) {
    PetscCall(PetscMalloc1(*nl, &h));
    for (PetscInt i = 0; i < *nl; i++) h[i] = (long long)lrows[i];
    PetscCallCUDA(cudaMalloc((void **)dlrows, (size_t)*nl * sizeof(long long)));
    PetscCallCUDA(cudaMemcpyAsync(*dlrows, h, (size_t)*nl * sizeof(long long), cudaMemcpyHostToDevice, stream));
    PetscCallCUDA(cudaStreamSynchronize(stream));
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)*nl * sizeof(long long)));
    PetscCall(PetscFree(h));
  }
  PetscCall(PetscFree(lrows));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGDIACUDAZeroRows_Private(Mat A, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b, PetscBool columns)
{
  Mat_SGDIA         *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA     *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscBool          ok = PETSC_TRUE, iscuda;
  Vec                vecs[2] = {x, b};
  PetscInt           nl;
  long long         *dl;
  PetscScalar       *v, *ba = NULL;
  const PetscScalar *xa = NULL;
  cudaStream_t       stream;

  PetscFunctionBegin;
  if (x && b) PetscCall(SGDIACUDAVecsOnDevice_Private(A, columns ? "MatZeroRowsColumns" : "MatZeroRows", 2, vecs, &ok));
  if (ok && columns) { /* the column marks travel in the DMDA's vectors */
    PetscCall(PetscObjectTypeCompareAny((PetscObject)sg->xl, &iscuda, VECSEQCUDA, ""));
    if (!iscuda) {
      ok = PETSC_FALSE;
      PetscCall(PetscInfo(A, "MatZeroRowsColumns on a DMDA whose vectors are of type %s: host code (-dm_vec_type cuda keeps it on the GPU)\n", ((PetscObject)sg->xl)->type_name));
    }
  }
  if (!ok) {
    if (columns) PetscCall((*cu->twin.hostops.zerorowscolumns)(A, n, rows, diag, x, b));
    else PetscCall((*cu->twin.hostops.zerorows)(A, n, rows, diag, x, b));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIACUDADeviceWrite_Private(A, PETSC_TRUE, &v, &stream));
  PetscCall(SGDIACUDALocalRows_Private(A, n, rows, &nl, &dl, stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_OpsCUDA, A, 0, 0, 0));
  if (columns) {
    GpukitSGDIAMultArgs args;
    Vec                 mask, maskl, xl = NULL;
    const PetscScalar  *ma, *xla = NULL;
    PetscScalar        *mw;
    PetscCall(DMGetGlobalVector(sg->da, &mask));
    PetscCall(DMGetLocalVector(sg->da, &maskl));
    PetscCall(VecSet(mask, 0.0));
    PetscCall(VecCUDAGetArray(mask, &mw));
    PetscCallCUDA(GpukitSGDIAMarkRowsCUDA((long long)nl, dl, mw, (int)cu->block, stream));
    PetscCall(VecCUDARestoreArray(mask, &mw));
    PetscCall(DMGlobalToLocalBegin(sg->da, mask, INSERT_VALUES, maskl));
    PetscCall(DMGlobalToLocalEnd(sg->da, mask, INSERT_VALUES, maskl));
    if (x && b) {
      PetscCall(DMGetLocalVector(sg->da, &xl));
      PetscCall(DMGlobalToLocalBegin(sg->da, x, INSERT_VALUES, xl));
      PetscCall(DMGlobalToLocalEnd(sg->da, x, INSERT_VALUES, xl));
      PetscCall(VecCUDAGetArrayRead(xl, &xla));
      PetscCall(VecCUDAGetArray(b, &ba));
    }
    PetscCall(SGDIACUDASetArgs_Private(A, PETSC_TRUE, &args));
    PetscCall(VecCUDAGetArrayRead(maskl, &ma));
    PetscCall(PetscLogGpuTimeBegin());
    PetscCallCUDA(GpukitSGDIAZeroColumnsCUDA(&args, ma, xla, ba, v, (int)cu->block, stream));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(VecCUDARestoreArrayRead(maskl, &ma));
    if (x && b) {
      PetscCall(VecCUDARestoreArray(b, &ba));
      PetscCall(VecCUDARestoreArrayRead(xl, &xla));
      PetscCall(DMRestoreLocalVector(sg->da, &xl));
      xla = NULL;
      ba  = NULL;
    }
    PetscCall(DMRestoreLocalVector(sg->da, &maskl));
    PetscCall(DMRestoreGlobalVector(sg->da, &mask));
  }
  if (x && b) {
    PetscCall(VecCUDAGetArrayRead(x, &xa));
    PetscCall(VecCUDAGetArray(b, &ba));
  }
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitSGDIAZeroRowsCUDA((long long)nl, dl, (long long)sg->m, (int)sg->dof, (int)sg->k, (int)sg->center, diag, v, xa, ba, (int)cu->block, stream));
  PetscCall(PetscLogGpuTimeEnd());
  if (x && b) {
    PetscCall(VecCUDARestoreArrayRead(x, &xa));
    PetscCall(VecCUDARestoreArray(b, &ba));
  }
  PetscCall(PetscLogEventEnd(MAT_SGDIA_OpsCUDA, A, 0, 0, 0));
  if (dl) PetscCallCUDA(cudaFree(dl));
  PetscCall(GpukitTwinDeviceWritten(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatZeroRows_SGDIACUDA(Mat A, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b)
{
  PetscFunctionBegin;
  PetscCall(SGDIACUDAZeroRows_Private(A, n, rows, diag, x, b, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatZeroRowsColumns_SGDIACUDA(Mat A, PetscInt n, const PetscInt rows[], PetscScalar diag, Vec x, Vec b)
{
  PetscFunctionBegin;
  PetscCall(SGDIACUDAZeroRows_Private(A, n, rows, diag, x, b, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Block diagonal (PCPBJACOBI)
   ------------------------------------------------------------------------------------------------------ */

/* inverted on the device; the API returns host memory, so the result is copied down once per call */
static PetscErrorCode MatInvertBlockDiagonal_SGDIACUDA(Mat A, const PetscScalar **values)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  const size_t   n  = (size_t)sg->np * sg->dof * sg->dof;
  long long      bad, *dbad;
  cudaStream_t   stream;

  PetscFunctionBegin;
  if (sg->dof > GPUKIT_SGDIA_CUDA_MAX_DOF) {
    PetscCall(PetscInfo(A, "MatInvertBlockDiagonal with dof %" PetscInt_FMT " > %d: host code\n", sg->dof, GPUKIT_SGDIA_CUDA_MAX_DOF));
    PetscCall((*cu->twin.hostops.invertblockdiagonal)(A, values));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIACUDACopyToGPU_Private(A));
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_InvBlkDiagCUDA, A, 0, 0, 0));
  if (!cu->ibdiag && n) PetscCallCUDA(cudaMalloc((void **)&cu->ibdiag, n * sizeof(PetscScalar)));
  if (!sg->ibdiag) PetscCall(PetscMalloc1(n, &sg->ibdiag));
  PetscCallCUDA(cudaMalloc((void **)&dbad, sizeof(long long)));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitSGDIAInvertBlockDiagonalCUDA((long long)sg->np, (int)sg->dof, (int)sg->center, (long long)sg->m, cu->v, cu->ibdiag, dbad, (int)cu->block, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCallCUDA(cudaMemcpyAsync(&bad, dbad, sizeof(long long), cudaMemcpyDeviceToHost, stream));
  if (n) PetscCallCUDA(cudaMemcpyAsync(sg->ibdiag, cu->ibdiag, n * sizeof(PetscScalar), cudaMemcpyDeviceToHost, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream));
  PetscCallCUDA(cudaFree(dbad));
  PetscCall(PetscLogGpuToCpu((PetscLogDouble)n * sizeof(PetscScalar) + sizeof(long long)));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_InvBlkDiagCUDA, A, 0, 0, 0));
  if (bad >= 0) {
    PetscInt g[3], gl;
    SGDIAPointInfo(sg, (PetscInt)bad, g, &gl);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MAT_LU_ZRPVT, "The %" PetscInt_FMT "x%" PetscInt_FMT " diagonal block of grid point (%" PetscInt_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT ") is singular; PCPBJACOBI cannot invert it", sg->dof, sg->dof, g[0], g[1], g[2]);
  }
  *values = sg->ibdiag;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if PETSC_VERSION_GE(3, 26, 0)
/* The point-block diagonal as an AIJCUSPARSE matrix built on the device: PCPBJACOBI then applies its inverse
   with its own CUDA kernel (it recognises AIJCUSPARSE only). The caller owns the matrix. */
static PetscErrorCode MatGetBlockDiagonal_SGDIACUDA(Mat A, Mat *D)
{
  Mat_SGDIA     *sg  = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu  = (Mat_SGDIACUDA *)sg->spptr;
  const PetscInt dof = sg->dof, n = sg->np * dof * dof, rstart = A->rmap->rstart;
  PetscInt      *ii, *jj;
  PetscScalar   *dv;
  cudaStream_t   stream;

  PetscFunctionBegin;
  PetscCall(SGDIACUDACopyToGPU_Private(A));
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), D));
  PetscCall(MatSetSizes(*D, A->rmap->n, A->cmap->n, A->rmap->N, A->cmap->N));
  PetscCall(MatSetBlockSize(*D, dof));
  PetscCall(MatSetType(*D, MATAIJCUSPARSE));
  PetscCall(PetscMalloc2(n, &ii, n, &jj));
  for (PetscInt p = 0, e = 0; p < sg->np; p++) /* entry e = (p, r, c), c fastest */
    for (PetscInt r = 0; r < dof; r++)
      for (PetscInt c = 0; c < dof; c++, e++) {
        ii[e] = rstart + p * dof + r;
        jj[e] = rstart + p * dof + c;
      }
  PetscCall(MatSetPreallocationCOO(*D, n, ii, jj));
  PetscCall(PetscFree2(ii, jj));
  PetscCallCUDA(cudaMalloc((void **)&dv, (size_t)PetscMax(n, 1) * sizeof(PetscScalar)));
  PetscCallCUDA(GpukitSGDIAGatherBlockDiagonalCUDA((long long)sg->np, (int)dof, (int)sg->center, (long long)sg->m, cu->v, dv, (int)cu->block, stream));
  PetscCall(MatSetValuesCOO(*D, dv, INSERT_VALUES));
  PetscCallCUDA(cudaFree(dv));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* ------------------------------------------------------------------------------------------------------
   COO assembly: MatSetPreallocationCOO() once, then MatSetValuesCOO() with host or device values, through the shared
   helper (gpukitcoo.h); MATSGDIA says where an entry lives (SGDIAEntrySlot_Private(): the error or the drop of an
   entry outside the stencil is the host's)
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatSetPreallocationCOO_SGDIACUDA(Mat A, PetscCount n, PetscInt coo_i[], PetscInt coo_j[])
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscCount     nrecv, nu;

  PetscFunctionBegin;
  PetscCall(SGDIACUDACheckSetUp_Private(A));
  PetscCall(GpukitCOODestroy(&cu->coo));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_COO, A, 0, 0, 0));
  PetscCall(GpukitCOOCreate(A, n, coo_i, coo_j, SGDIAEntrySlot_Private, sg->ignore_offproc, &cu->coo));
  PetscCall(GpukitCOOGetSizes(cu->coo, NULL, &nrecv, &nu));
  PetscCall(PetscInfo(A, "COO: %" PetscCount_FMT " entries, %" PetscCount_FMT " from other ranks, onto %" PetscCount_FMT " stored values\n", n, nrecv, nu));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_COO, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetValuesCOO_SGDIACUDA(Mat A, const PetscScalar coo_v[], InsertMode imode)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscScalar   *v;
  cudaStream_t   stream;

  PetscFunctionBegin;
  PetscCheck(cu->coo, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "MatSetValuesCOO() on a MATSGDIACUDA needs MatSetPreallocationCOO() first");
  PetscCheck(imode == INSERT_VALUES || imode == ADD_VALUES, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "MatSetValuesCOO() takes INSERT_VALUES or ADD_VALUES");
  PetscCall(SGDIACUDADeviceWrite_Private(A, imode == ADD_VALUES ? PETSC_TRUE : PETSC_FALSE, &v, &stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_COO, A, 0, 0, 0));
  PetscCall(GpukitCOOSetValues(cu->coo, coo_v, imode, v, sg->nv, (int)cu->block));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_COO, A, 0, 0, 0));
  PetscCall(GpukitTwinDeviceWritten(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Device arrays (MatSGDIAGetArrayCUDA() and friends)
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatSGDIAGetArrayCUDA_SGDIACUDA(Mat A, PetscScalar **v)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  PetscCall(SGDIACUDADeviceWrite_Private(A, PETSC_TRUE, v, &stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSGDIAGetArrayWriteCUDA_SGDIACUDA(Mat A, PetscScalar **v)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  PetscCall(SGDIACUDADeviceWrite_Private(A, PETSC_FALSE, v, &stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSGDIARestoreArrayCUDA_SGDIACUDA(Mat A, PetscScalar **v)
{
  PetscFunctionBegin;
  *v = NULL;
  PetscCall(GpukitTwinDeviceWritten(A));
  PetscCall(PetscObjectStateIncrease((PetscObject)A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSGDIAGetArrayReadCUDA_SGDIACUDA(Mat A, const PetscScalar **v)
{
  PetscFunctionBegin;
  PetscCall(SGDIACUDACopyToGPU_Private(A));
  *v = ((Mat_SGDIACUDA *)((Mat_SGDIA *)A->data)->spptr)->v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSGDIARestoreArrayReadCUDA_SGDIACUDA(Mat A, const PetscScalar **v)
{
  PetscFunctionBegin;
  (void)A;
  *v = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Options, view, binding
   ------------------------------------------------------------------------------------------------------ */

/* THE list of the ops that run on the device; MatBindToCPU(A, PETSC_TRUE) puts the host type's back (gpukittwin.h) */
static const GpukitTwinOp SGDIACUDAOps[] = {
  GPUKIT_TWIN_OP(mult, MatMult_SGDIACUDA),
  GPUKIT_TWIN_OP(multadd, MatMultAdd_SGDIACUDA),
  GPUKIT_TWIN_OP(multtranspose, MatMultTranspose_SGDIACUDA),
  GPUKIT_TWIN_OP(multtransposeadd, MatMultTransposeAdd_SGDIACUDA),
  GPUKIT_TWIN_OP(getdiagonal, MatGetDiagonal_SGDIACUDA),
  GPUKIT_TWIN_OP(scale, MatScale_SGDIACUDA),
  GPUKIT_TWIN_OP(shift, MatShift_SGDIACUDA),
  GPUKIT_TWIN_OP(diagonalset, MatDiagonalSet_SGDIACUDA),
  GPUKIT_TWIN_OP(diagonalscale, MatDiagonalScale_SGDIACUDA),
  GPUKIT_TWIN_OP(zeroentries, MatZeroEntries_SGDIACUDA),
  GPUKIT_TWIN_OP(axpy, MatAXPY_SGDIACUDA),
  GPUKIT_TWIN_OP(copy, MatCopy_SGDIACUDA),
  GPUKIT_TWIN_OP(duplicate, MatDuplicate_SGDIACUDA),
  GPUKIT_TWIN_OP(zerorows, MatZeroRows_SGDIACUDA),
  GPUKIT_TWIN_OP(zerorowscolumns, MatZeroRowsColumns_SGDIACUDA),
  GPUKIT_TWIN_OP(invertblockdiagonal, MatInvertBlockDiagonal_SGDIACUDA),
#if PETSC_VERSION_GE(3, 26, 0)
  GPUKIT_TWIN_OP(getblockdiagonal, MatGetBlockDiagonal_SGDIACUDA),
#endif
};

/* the functions composed only while on the device: COO assembly, KSPCACG's matrix powers hook (none while bound to
   the CPU: KSPCACG then runs the reference), and on one rank the device CSR (the last two; MATMPISGDIACUDA has none) */
static const GpukitTwinMethod SGDIACUDAMethods[] = {
  GPUKIT_TWIN_METHOD("MatSetPreallocationCOO_C", MatSetPreallocationCOO_SGDIACUDA),
  GPUKIT_TWIN_METHOD("MatSetValuesCOO_C", MatSetValuesCOO_SGDIACUDA),
  GPUKIT_TWIN_METHOD("MatMatrixPowers_C", MatMatrixPowers_SGDIACUDA),
  GPUKIT_TWIN_METHOD("GpukitMatGetDeviceCSR_C", MatGetDeviceCSR_SeqSGDIACUDA),
  GPUKIT_TWIN_METHOD("GpukitMatRestoreDeviceCSR_C", MatRestoreDeviceCSR_SeqSGDIACUDA),
};
#define SGDIACUDA_NMETHODS_MPI 3

static PetscErrorCode MatBindToCPU_SGDIACUDA(Mat A, PetscBool flg)
{
  PetscFunctionBegin;
  PetscCall(GpukitTwinBind(A, &SGDIACUDAGet(A)->twin, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSGDIACUDASetBlockSize_Private(Mat A, PetscInt block)
{
  Mat_SGDIACUDA *cu = SGDIACUDAGet(A);

  PetscFunctionBegin;
  PetscCheck(block >= 32 && block <= 1024 && block % 32 == 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "MATSGDIACUDA block size (threads per block) must be a multiple of 32 in 32..1024, got %" PetscInt_FMT, block);
  cu->block    = block;
  cu->fixblock = PETSC_TRUE;
  PetscCall(SGDIACUDATunerReset_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetFromOptions_SGDIACUDA(Mat A, GpukitOptionItems PetscOptionsObject)
{
  Mat_SGDIACUDA *cu    = SGDIACUDAGet(A);
  PetscInt       block = cu->block, variant = cu->variant;
  PetscBool      set, tune = cu->autotune;

  PetscFunctionBegin;
  PetscCall((*cu->twin.hostops.setfromoptions)(A, PetscOptionsObject));
  PetscOptionsHeadBegin(PetscOptionsObject, "MATSGDIACUDA options");
  PetscCall(PetscOptionsInt("-mat_sgdia_cuda_block_size", "Threads per block of the MATSGDIACUDA kernels (a multiple of 32 in 32..1024); fixes the product's, which is otherwise tuned", "MATSGDIACUDA", block, &block, &set));
  if (set) PetscCall(MatSGDIACUDASetBlockSize_Private(A, block));
  PetscCall(PetscOptionsEList("-mat_sgdia_cuda_variant", "Product kernel, fixed (otherwise tuned): row (a thread per row), row2 (two rows per thread, 16-byte loads) or stencil (a thread per row, specialised on the stencil size)", "MATSGDIACUDA", SGDIACUDAVariants, GPUKIT_SGDIA_CUDA_VARIANTS, SGDIACUDAVariants[variant], &variant, &set));
  if (set) {
    cu->variant    = variant;
    cu->fixvariant = PETSC_TRUE;
    PetscCall(SGDIACUDATunerReset_Private(A));
  }
  {
    PetscBool overlap = PETSC_TRUE;
    PetscCall(PetscOptionsBool("-mat_sgdia_overlap", "On several ranks, overlap the halo exchange with the rows whose stencil stays in the owned box (only ghost points travel)", "MATSGDIACUDA", overlap, &overlap, NULL)); /* read by sgdiahalocuda.cu at the first product */
  }
  {
    PetscBool ipc = PETSC_TRUE;
    PetscCall(PetscOptionsBool("-mat_sgdia_cuda_ipc", "On several ranks of one node, exchange the halos of the product and of the matrix powers ghost region device to device through CUDA IPC where each rank's GPU can reach its neighbours' (peer access or the same GPU); false: PETSc's star forest (staged through the host when MPI is not CUDA-aware)", "MATSGDIACUDA", ipc, &ipc, NULL)); /* read by sgdiahalocuda.cu and sgdiapowerscuda.cu at their first exchange */
  }
  PetscCall(PetscOptionsBool("-mat_sgdia_autotune", "Tune the product's variant and block size with gpukit's tuner (-gpukit_tune); false: no tuning for this matrix", "MATSGDIACUDA", tune, &tune, &set));
  if (set) {
    cu->autotune = tune;
    PetscCall(SGDIACUDATunerReset_Private(A));
  }
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Mat_SGDIA's viewinfo hook: the lines MatView() with ::ascii_info adds for the device */
static PetscErrorCode SGDIACUDAViewInfo(Mat A, PetscViewer viewer)
{
  Mat_SGDIACUDA *cu = SGDIACUDAGet(A);
  PetscInt       variant, block;

  PetscFunctionBegin;
  PetscCall(SGDIACUDAGetProductConfig_Private(A, &variant, &block));
  PetscCheck(variant >= 0 && variant < GPUKIT_SGDIA_CUDA_VARIANTS, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSGDIACUDA product variant %" PetscInt_FMT " is not one of its %d", variant, GPUKIT_SGDIA_CUDA_VARIANTS);
  PetscCall(PetscViewerASCIIPrintf(viewer, "  GPU product kernel: variant %s, %" PetscInt_FMT " threads per block", SGDIACUDAVariants[variant], block));
  if (!cu->autotune) PetscCall(PetscViewerASCIIPrintf(viewer, " (not tuned: -mat_sgdia_autotune false)\n"));
  else if (!cu->tuner) PetscCall(PetscViewerASCIIPrintf(viewer, " (tuned at the first product)\n"));
  else {
    PetscCall(PetscViewerASCIIPrintf(viewer, "\n"));
    PetscCall(PetscViewerASCIIPushTab(viewer));
    PetscCall(GpukitTunerView(cu->tuner, viewer));
    PetscCall(PetscViewerASCIIPopTab(viewer));
  }
  PetscCall(GpukitTwinView(A, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Conversion, destroy, create
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatConvert_SGDIA_SGDIACUDA(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatConvert_SGDIACUDA_SGDIA(Mat, MatType, MatReuse, Mat *);

/* MatConvert() finds the converts: sgdia -> sgdiacuda on the new (CUDA) matrix, sgdiacuda -> sgdia on the CUDA
   matrix; and the device array functions */
static PetscErrorCode SGDIACUDAComposeFunctions_Private(Mat A, PetscBool set)
{
  PetscBool ismpi;

  PetscFunctionBegin;
  PetscCall(SGDIACUDAIsMPI_Private(A, &ismpi));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, ismpi ? "MatConvert_mpisgdia_mpisgdiacuda_C" : "MatConvert_seqsgdia_seqsgdiacuda_C", set ? MatConvert_SGDIA_SGDIACUDA : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, ismpi ? "MatConvert_mpisgdiacuda_mpisgdia_C" : "MatConvert_seqsgdiacuda_seqsgdia_C", set ? MatConvert_SGDIACUDA_SGDIA : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSGDIAGetArrayCUDA_C", set ? MatSGDIAGetArrayCUDA_SGDIACUDA : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSGDIARestoreArrayCUDA_C", set ? MatSGDIARestoreArrayCUDA_SGDIACUDA : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSGDIAGetArrayWriteCUDA_C", set ? MatSGDIAGetArrayWriteCUDA_SGDIACUDA : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSGDIARestoreArrayWriteCUDA_C", set ? MatSGDIARestoreArrayCUDA_SGDIACUDA : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSGDIAGetArrayReadCUDA_C", set ? MatSGDIAGetArrayReadCUDA_SGDIACUDA : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSGDIARestoreArrayReadCUDA_C", set ? MatSGDIARestoreArrayReadCUDA_SGDIACUDA : NULL));
  if (!set) { /* and the twin's device-only functions */
    const GpukitTwin *tw = &SGDIACUDAGet(A)->twin;
    for (PetscInt i = 0; i < tw->nmethods; i++) PetscCall(PetscObjectComposeFunction((PetscObject)A, tw->methods[i].name, NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* free the device data; called with a device copy only in a CUDA build that made one */
static PetscErrorCode SGDIACUDAFree_Private(Mat_SGDIACUDA **cu)
{
  PetscFunctionBegin;
  if (!*cu) PetscFunctionReturn(PETSC_SUCCESS);
  if ((*cu)->v) PetscCallCUDA(cudaFree((*cu)->v));
  if ((*cu)->off) PetscCallCUDA(cudaFree((*cu)->off));
  if ((*cu)->delta) PetscCallCUDA(cudaFree((*cu)->delta));
  if ((*cu)->ibdiag) PetscCallCUDA(cudaFree((*cu)->ibdiag));
  PetscCall(GpukitCOODestroy(&(*cu)->coo));
  PetscCall(SGDIACUDACSRFree_Private(*cu));
  PetscCall(GpukitTunerDestroy(&(*cu)->tuner));
  PetscCall(VecDestroy(&(*cu)->xl));
  PetscCall(VecDestroy(&(*cu)->yl));
  PetscCall(VecDestroy(&(*cu)->dl));
  PetscCall(SGDIACUDAHaloDestroy_Private(&(*cu)->halo));
  PetscCall(SGDIACUDAMPKDestroy_Private(&(*cu)->mpkd));
  PetscCall(PetscFree(*cu));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_SGDIACUDA(Mat A)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscErrorCode (*hostdestroy)(Mat) = cu->twin.hostops.destroy;

  PetscFunctionBegin;
  PetscCall(SGDIACUDAComposeFunctions_Private(A, PETSC_FALSE));
  PetscCall(SGDIACUDAFree_Private(&cu));
  sg->spptr      = NULL;
  sg->hostaccess = NULL;
  sg->viewinfo   = NULL;
  PetscCall((*hostdestroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MATSEQSGDIA/MATMPISGDIA -> its CUDA twin, in place; nothing to do for a CUDA matrix */
static PetscErrorCode SGDIAConvertToCUDA_Private(Mat A)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu;
  PetscBool      ismpi;

  PetscFunctionBegin;
  if (sg->spptr) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SGDIACUDAIsMPI_Private(A, &ismpi));
  PetscCall(PetscNew(&cu));
  cu->block              = GPUKIT_SGDIA_CUDA_BLOCK_SIZE;
  cu->autotune           = PETSC_TRUE;
  cu->twin.copyup        = SGDIACUDACopyUp_Private;
  cu->twin.copydown      = SGDIACUDACopyDown_Private;
  cu->twin.evup          = MAT_SGDIA_CopyToGPU;
  cu->twin.evdown        = MAT_SGDIA_CopyFromGPU;
  cu->twin.ops           = SGDIACUDAOps;
  cu->twin.nops          = (PetscInt)(sizeof(SGDIACUDAOps) / sizeof(SGDIACUDAOps[0]));
  cu->twin.methods       = SGDIACUDAMethods;
  cu->twin.nmethods      = ismpi ? SGDIACUDA_NMETHODS_MPI : (PetscInt)(sizeof(SGDIACUDAMethods) / sizeof(SGDIACUDAMethods[0]));
  cu->twin.ondevice      = "products, diagonal, scaling, shifts, AXPY, copies, zeroing of rows, block-diagonal inverse and COO assembly run on the GPU; other operations run the host code on the host copy (see docs/sgdia.md)";
  sg->spptr              = cu;
  sg->hostaccess         = SGDIACUDAHostAccess;
  sg->viewinfo           = SGDIACUDAViewInfo;
  PetscCall(GpukitTwinAttach(A, &cu->twin)); /* saves the host ops (and host functions of the same names), installs the device ones */
  A->ops->bindtocpu      = MatBindToCPU_SGDIACUDA;
  A->ops->setfromoptions = MatSetFromOptions_SGDIACUDA;
  A->ops->destroy        = MatDestroy_SGDIACUDA;
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, ismpi ? MATMPISGDIACUDA : MATSEQSGDIACUDA));
  PetscCall(SGDIACUDAComposeFunctions_Private(A, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the CUDA twin -> MATSEQSGDIA/MATMPISGDIA, in place: the host ops table back, the device data freed */
static PetscErrorCode SGDIAConvertToHost_Private(Mat A)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscBool      ismpi;

  PetscFunctionBegin;
  if (!cu) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SGDIACUDAIsMPI_Private(A, &ismpi));
  PetscCall(SGDIACUDAComposeFunctions_Private(A, PETSC_FALSE));
  PetscCall(GpukitTwinDetach(A, &cu->twin)); /* values down; host ops, the host's functions (its matrix powers hook) and vectors back */
  sg->hostaccess = NULL;
  sg->viewinfo   = NULL;
  PetscCall(SGDIACUDAFree_Private(&cu));
  sg->spptr = NULL;
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, ismpi ? MATMPISGDIA : MATSEQSGDIA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the matrix to retype: A itself, a copy of it, or the reused one with A's values */
static PetscErrorCode SGDIAConvertTarget_Private(Mat A, MatReuse reuse, Mat *newmat, Mat *target)
{
  PetscFunctionBegin;
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  else if (reuse == MAT_REUSE_MATRIX) PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
  *target = reuse == MAT_INPLACE_MATRIX ? A : *newmat;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_SGDIA_SGDIACUDA(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat B;

  PetscFunctionBegin;
  (void)type;
  PetscCall(SGDIAConvertTarget_Private(A, reuse, newmat, &B));
  PetscCall(SGDIAConvertToCUDA_Private(B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_SGDIACUDA_SGDIA(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat B;

  PetscFunctionBegin;
  (void)type;
  PetscCall(SGDIAConvertTarget_Private(A, reuse, newmat, &B));
  PetscCall(SGDIAConvertToHost_Private(B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATSEQSGDIACUDA - "seqsgdiacuda" - `MATSEQSGDIA` with its values on an NVIDIA GPU: products (also transposed),
   diagonal, scaling, shifts, AXPY, copies, zeroing of rows and columns, block-diagonal inverse and COO assembly
   run on the device; other operations run the host code on the host copy.

   Options Database Keys:
+  -mat_type seqsgdiacuda - the type (or -dm_mat_type sgdiacuda with `DMCreateMatrix()`)
.  -mat_sgdia_cuda_block_size <256> - threads per block of the kernels, a multiple of 32 in 32..1024; fixes the
     product's (otherwise tuned)
.  -mat_sgdia_cuda_variant <row,row2,stencil> - product kernel, fixed (otherwise tuned): a thread per row; two rows per
     thread with 16-byte loads (an odd number of local rows falls back to row); a thread per row specialised on the
     stencil size (dof 1..4 with 5, 7 or 9 stencil points, dof 1 with 27; other stencils fall back to row)
-  -mat_sgdia_autotune <true> - tune the product's variant and block size with gpukit's tuner (-gpukit_tune,
     -gpukit_tune_cache); false: no tuning for this matrix (MatView shows the choice)

   Level: beginner

   Notes:
   The values live on the host, the device or both (the offload mask): host assembly is copied up once at the
   first device operation (event SGDIACopyToGPU), host reads after device changes copy down once (SGDIACopyFromGPU).
   Device code can assemble without the host through `MatSGDIAGetArrayWriteCUDA()` or `MatSetPreallocationCOO()` +
   `MatSetValuesCOO()`. Use `VECCUDA` vectors (`MatCreateVecs()`, -dm_vec_type cuda); with host vectors the
   operations run on the host (see -info). `MatBindToCPU()` runs everything on the host. `MatConvert()` goes
   both ways between `MATSEQSGDIA` and `MATSEQSGDIACUDA`.

   `KSPCACG` builds its s-step basis with the matrix's "MatMatrixPowers_C" (Jacobi or no preconditioner): here one
   kernel per basis vector that fuses the product with the three-term update and the Jacobi scaling (event
   SGDIAMatPowCUDA; the product's block size, and its variant when that is stencil, else row). Bound to the CPU the
   matrix has none.

   On one rank the matrix gives its local rows as a device CSR (`GpukitMatGetDeviceCSR()`, src/mat/utils/gpukitmat.h),
   built on the device from the device values and kept while the matrix's state is unchanged, so that `PCGSAI` builds
   its approximate inverse without copying the matrix to the host.

.seealso: `MATSGDIACUDA`, `MATMPISGDIACUDA`, `MATSGDIA`
M*/
static PetscErrorCode MatCreate_SeqSGDIACUDA(Mat A)
{
  PetscBool isg;

  PetscFunctionBegin;
  PetscCall(MatCreate_SeqSGDIA(A));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQSGDIA, &isg));
  if (!isg) PetscFunctionReturn(PETSC_SUCCESS); /* non-square sizes: made MATAIJ (host), see MatCreate_SeqSGDIA() */
  PetscCall(SGDIAConvertToCUDA_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATMPISGDIACUDA - "mpisgdiacuda" - `MATMPISGDIA` with a device copy of its values on each rank; see
   `MATSEQSGDIACUDA`. The product gathers the ghost values of x into a device local vector (`DMGlobalToLocalBegin()`)
   and runs the kernel on it.

   Level: beginner

.seealso: `MATSGDIACUDA`, `MATSEQSGDIACUDA`, `MATMPISGDIA`
M*/
static PetscErrorCode MatCreate_MPISGDIACUDA(Mat A)
{
  PetscBool isg;

  PetscFunctionBegin;
  PetscCall(MatCreate_MPISGDIA(A));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPISGDIA, &isg));
  if (!isg) PetscFunctionReturn(PETSC_SUCCESS); /* non-square sizes: made MATAIJ (host), see MatCreate_MPISGDIA() */
  PetscCall(SGDIAConvertToCUDA_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the root type: MATSEQSGDIACUDA on one rank, MATMPISGDIACUDA on more */
static PetscErrorCode MatCreate_SGDIACUDA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(GpukitMatSetTypeBySize_Private(A, MATSEQSGDIACUDA, MATMPISGDIACUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatRegister_SGDIACUDA_Private(void)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventRegister("SGDIAMatPowCUDA", MAT_CLASSID, &MAT_SGDIA_PowersCUDA)); /* sgdiapowerscuda.cu */
  PetscCall(PetscLogEventRegister("SGDIAMPKGhostCUDA", MAT_CLASSID, &MAT_SGDIA_MPKGhostCUDA)); /* sgdiapowerscuda.cu: the ghost-region route */
  PetscCall(PetscLogEventRegister("SGDIACSRCUDA", MAT_CLASSID, &MAT_SGDIA_CSRCUDA));        /* sgdiacsrcuda.cu */
  PetscCall(MatRegisterRootName(MATSGDIACUDA, MATSEQSGDIACUDA, MATMPISGDIACUDA));
  PetscCall(MatRegister(MATSGDIACUDA, MatCreate_SGDIACUDA));
  PetscCall(MatRegister(MATSEQSGDIACUDA, MatCreate_SeqSGDIACUDA));
  PetscCall(MatRegister(MATMPISGDIACUDA, MatCreate_MPISGDIACUDA));
  /* LU/ILU/Cholesky/ICC default to cuSPARSE's (as for MATSEQAIJCUSPARSE), so that e.g. PCMG's coarse LU solves on the device;
     -pc_factor_mat_solver_type petsc still gets the host factorization registered for seqsgdia */
  PetscCall(GpukitMatAIJForwardRegisterDeviceFactors(MATSEQSGDIACUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool GpukitHaveCUDA(void)
{
  return PETSC_TRUE;
}
#endif /* GPUKIT_SGDIACUDA_AVAILABLE */