/*
   MATSEQSGDIACUDA and MATMPISGDIACUDA: MATSGDIA with a device copy of its values, and MatMult(), MatMultAdd()
   and MatGetDiagonal() on an NVIDIA GPU (kernels in sgdiakernels.cu). Built only against a PETSc with CUDA;
   it replaces the registration in sgdiacudareg.c.

   Each type is its host type (MatCreate_SeqSGDIA(), MatCreate_MPISGDIA()) plus one in-place convert,
   SGDIAConvertToCUDA_Private(): it hangs a Mat_SGDIACUDA on Mat_SGDIA's spptr, keeps the host ops table (for
   MatBindToCPU() and the way back to MATSGDIA), makes VECCUDA the vector type and sets the device ops. Every
   other operation is the host one, on the host array, which stays the master copy: the device copy records
   the object state of the matrix when it was made, and is made again once that state has changed (assembly,
   MatScale(), MatShift(), MatZeroRows(), MatSGDIARestoreArray(), ... all increase it).
*/
#include <petscdevice_cuda.h>
#include "sgdiaimpl.h"
#include "sgdiakernels.h"

#if defined(GPUKIT_SGDIACUDA_AVAILABLE)

#define GPUKIT_SGDIA_CUDA_BLOCK_SIZE 256 /* default threads per block */

typedef struct {
  PetscScalar     *v;                           /* device copy of Mat_SGDIA's v */
  PetscCount       nv;                          /* its length */
  long long       *off;                         /* 2k: stencil offsets in grid points, in the owned box (first k), then in the ghosted box */
  int             *delta;                       /* 3k: stencil offsets (dx, dy, dz) */
  PetscInt         k;                           /* stencil points that off and delta have room for */
  PetscBool        valid;                       /* is there a device copy */
  PetscObjectState state;                       /* the state of the matrix when the device copy was made */
  Vec              xl;                          /* device ghosted local vector, when the DMDA's local vectors are not VECSEQCUDA */
  PetscInt         block;                       /* threads per block of the kernels */
  PetscBool        told_host, told_vec, told_dof; /* PetscInfo() said it once */
  struct _MatOps   hostops;                     /* the host type's ops */
} Mat_SGDIACUDA;

/* ------------------------------------------------------------------------------------------------------
   Helpers
   ------------------------------------------------------------------------------------------------------ */

/* the stream of the current PETSc device context, on which the PETSc CUDA vectors work */
static PetscErrorCode SGDIACUDAGetStream_Private(cudaStream_t *stream)
{
  PetscDeviceContext dctx;
  PetscDeviceType    type;
  void              *handle;

  PetscFunctionBegin;
  PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
  PetscCall(PetscDeviceContextGetDeviceType(dctx, &type));
  PetscCheck(type == PETSC_DEVICE_CUDA, PETSC_COMM_SELF, PETSC_ERR_SUP, "MATSGDIACUDA launches its kernels on the stream of the current PetscDeviceContext, which is of type %s, not CUDA; leave -device_context_device_type at cuda", PetscDeviceTypes[type]);
  PetscCall(PetscDeviceContextGetStreamHandle(dctx, &handle));
  *stream = *(cudaStream_t *)handle;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGDIACUDAIsCUDAVec_Private(Vec v, PetscBool *flg)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)v, flg, VECSEQCUDA, VECMPICUDA, ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGDIACUDAIsMPI_Private(Mat A, PetscBool *ismpi)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, ismpi, MATMPISGDIA, MATMPISGDIACUDA, ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Does the product need the ghost exchange? Not on one rank without periodic dimensions (as in sgdia.c). */
static PetscBool SGDIACUDANeedsGhosts(const Mat_SGDIA *sg)
{
  for (PetscInt d = 0; d < 3; d++)
    if (sg->xm[d] != sg->gxm[d]) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* Make the device copy of the values and stencil offsets, unless the one there is of the current state. */
static PetscErrorCode MatSGDIACUDACopyToGPU(Mat A)
{
  Mat_SGDIA       *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA   *cu = (Mat_SGDIACUDA *)sg->spptr;
  const PetscInt   k  = sg->k;
  PetscObjectState state;
  cudaStream_t     stream;
  long long       *off;
  int             *delta;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (cu->valid && cu->state == state) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(sg->da && k > 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "MATSGDIACUDA matrix is not set up: create it with DMCreateMatrix() on a DMDA (-dm_mat_type sgdiacuda), or call MatSetDM() and MatSetUp()");
  if (!cu->told_host) {
    PetscCall(PetscInfo(A, "%s: MatMult, MatMultAdd and MatGetDiagonal run on the GPU; every other operation runs the host implementation on the host copy of the values (CUDA vectors are synced through VecGetArray)\n", ((PetscObject)A)->type_name));
    cu->told_host = PETSC_TRUE;
  }
  A->offloadmask = PETSC_OFFLOAD_CPU;
  PetscCall(SGDIACUDAGetStream_Private(&stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_CopyToGPU, A, 0, 0, 0));
  if (cu->nv != sg->nv) {
    if (cu->v) PetscCallCUDA(cudaFree(cu->v));
    cu->v = NULL;
    if (sg->nv) PetscCallCUDA(cudaMalloc((void **)&cu->v, (size_t)sg->nv * sizeof(PetscScalar)));
    cu->nv = sg->nv;
  }
  if (cu->k != k) {
    if (cu->off) PetscCallCUDA(cudaFree(cu->off));
    if (cu->delta) PetscCallCUDA(cudaFree(cu->delta));
    PetscCallCUDA(cudaMalloc((void **)&cu->off, 2 * (size_t)k * sizeof(long long)));
    PetscCallCUDA(cudaMalloc((void **)&cu->delta, 3 * (size_t)k * sizeof(int)));
    cu->k = k;
  }
  PetscCall(PetscMalloc2(2 * k, &off, 3 * k, &delta));
  for (PetscInt s = 0; s < k; s++) {
    off[s]     = (long long)sg->ooff[s];
    off[k + s] = (long long)sg->goff[s];
    for (PetscInt d = 0; d < 3; d++) delta[3 * s + d] = (int)sg->delta[3 * s + d];
  }
  if (sg->nv) PetscCallCUDA(cudaMemcpyAsync(cu->v, sg->v, (size_t)sg->nv * sizeof(PetscScalar), cudaMemcpyHostToDevice, stream));
  PetscCallCUDA(cudaMemcpyAsync(cu->off, off, 2 * (size_t)k * sizeof(long long), cudaMemcpyHostToDevice, stream));
  PetscCallCUDA(cudaMemcpyAsync(cu->delta, delta, 3 * (size_t)k * sizeof(int), cudaMemcpyHostToDevice, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream)); /* the host arrays may change as soon as we return */
  PetscCall(PetscFree2(off, delta));
  PetscCall(PetscLogCpuToGpu((PetscLogDouble)sg->nv * sizeof(PetscScalar) + (PetscLogDouble)k * (2 * sizeof(long long) + 3 * sizeof(int))));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_CopyToGPU, A, 0, 0, 0));
  cu->state      = state;
  cu->valid      = PETSC_TRUE;
  A->offloadmask = PETSC_OFFLOAD_BOTH;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a VECSEQCUDA over the ghosted box: the DMDA's own local vector if it is one, else one of ours */
static PetscErrorCode SGDIACUDAGetLocalVec_Private(Mat A, Vec *xl)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscInt       n  = sg->gxm[0] * sg->gxm[1] * sg->gxm[2] * sg->dof, nl;
  PetscBool      iscuda;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)sg->xl, VECSEQCUDA, &iscuda));
  if (iscuda) {
    *xl = sg->xl;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (cu->xl) {
    PetscCall(VecGetLocalSize(cu->xl, &nl));
    if (nl != n) PetscCall(VecDestroy(&cu->xl));
  }
  if (!cu->xl) {
    PetscCall(PetscInfo(A, "The DMDA's local vectors are of type %s, not VECSEQCUDA: MatMult gathers the ghosts into a VECSEQCUDA of its own (-dm_vec_type cuda avoids it)\n", ((PetscObject)sg->xl)->type_name));
    PetscCall(VecCreate(PETSC_COMM_SELF, &cu->xl));
    PetscCall(VecSetSizes(cu->xl, n, n));
    PetscCall(VecSetBlockSize(cu->xl, sg->dof));
    PetscCall(VecSetType(cu->xl, VECSEQCUDA));
  }
  *xl = cu->xl;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the kernel arguments; x over the ghosted box or over the owned box */
static PetscErrorCode SGDIACUDASetArgs_Private(Mat A, PetscBool ghosted, GpukitSGDIAMultArgs *a)
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
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Device ops
   ------------------------------------------------------------------------------------------------------ */

/* z = A x, or z = y + A x when y is not NULL (y may be z) */
static PetscErrorCode MatMultAdd_SGDIACUDA_Private(Mat A, Vec x, Vec y, Vec z)
{
  Mat_SGDIA          *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA      *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscBool           cux, cuy = PETSC_TRUE, cuz, ghosted;
  Vec                 xin = x;
  const PetscScalar  *xa, *ya = NULL;
  PetscScalar        *za;
  GpukitSGDIAMultArgs args;
  cudaStream_t        stream;

  PetscFunctionBegin;
  PetscCall(SGDIACUDAIsCUDAVec_Private(x, &cux));
  PetscCall(SGDIACUDAIsCUDAVec_Private(z, &cuz));
  if (y) PetscCall(SGDIACUDAIsCUDAVec_Private(y, &cuy));
  if (!cux || !cuy || !cuz) { /* host vectors: the host kernel reads them where they are */
    if (!cu->told_vec) {
      PetscCall(PetscInfo(A, "%s with a vector of type %s: running the host kernel; use VECCUDA vectors (MatCreateVecs(), -dm_vec_type cuda) to stay on the GPU\n", y ? "MatMultAdd" : "MatMult", ((PetscObject)(!cux ? x : !cuz ? z : y))->type_name));
      cu->told_vec = PETSC_TRUE;
    }
    if (y) PetscCall((*cu->hostops.multadd)(A, x, y, z));
    else PetscCall((*cu->hostops.mult)(A, x, z));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (sg->dof > GPUKIT_SGDIA_CUDA_MAX_DOF && !cu->told_dof) {
    PetscCall(PetscInfo(A, "dof %" PetscInt_FMT " has no kernel of its own (1..%d do): MatMult runs the generic kernel\n", sg->dof, GPUKIT_SGDIA_CUDA_MAX_DOF));
    cu->told_dof = PETSC_TRUE;
  }
  PetscCall(MatSGDIACUDACopyToGPU(A));
  PetscCall(SGDIACUDAGetStream_Private(&stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_MultCUDA, A, x, z, 0));
  ghosted = SGDIACUDANeedsGhosts(sg);
  if (ghosted) {
    PetscCall(SGDIACUDAGetLocalVec_Private(A, &xin));
    PetscCall(DMGlobalToLocalBegin(sg->da, x, INSERT_VALUES, xin));
    PetscCall(DMGlobalToLocalEnd(sg->da, x, INSERT_VALUES, xin));
  }
  PetscCall(SGDIACUDASetArgs_Private(A, ghosted, &args));
  PetscCall(VecCUDAGetArrayRead(xin, &xa));
  if (!y) PetscCall(VecCUDAGetArrayWrite(z, &za));
  else if (y == z) {
    PetscCall(VecCUDAGetArray(z, &za));
    ya = za;
  } else {
    PetscCall(VecCUDAGetArrayRead(y, &ya));
    PetscCall(VecCUDAGetArrayWrite(z, &za));
  }
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitSGDIAMultCUDA(&args, xa, ya, za, (int)cu->block, stream));
  PetscCall(PetscLogGpuTimeEnd());
  if (!y) PetscCall(VecCUDARestoreArrayWrite(z, &za));
  else if (y == z) PetscCall(VecCUDARestoreArray(z, &za));
  else {
    PetscCall(VecCUDARestoreArrayRead(y, &ya));
    PetscCall(VecCUDARestoreArrayWrite(z, &za));
  }
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

static PetscErrorCode MatGetDiagonal_SGDIACUDA(Mat A, Vec d)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscBool      cud;
  PetscScalar   *da;
  cudaStream_t   stream;

  PetscFunctionBegin;
  PetscCall(SGDIACUDAIsCUDAVec_Private(d, &cud));
  if (!cud) {
    if (!cu->told_vec) {
      PetscCall(PetscInfo(A, "MatGetDiagonal into a vector of type %s: running the host code; use VECCUDA vectors (MatCreateVecs(), -dm_vec_type cuda) to stay on the GPU\n", ((PetscObject)d)->type_name));
      cu->told_vec = PETSC_TRUE;
    }
    PetscCall((*cu->hostops.getdiagonal)(A, d));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatSGDIACUDACopyToGPU(A));
  PetscCall(SGDIACUDAGetStream_Private(&stream));
  PetscCall(VecCUDAGetArrayWrite(d, &da));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitSGDIAGetDiagonalCUDA((long long)sg->m, (int)sg->dof, (int)sg->center, cu->v, da, (int)cu->block, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(VecCUDARestoreArrayWrite(d, &da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* bound to the CPU: the host ops (MatBindToCPU() has set A->boundtocpu) */
static PetscErrorCode MatBindToCPU_SGDIACUDA(Mat A, PetscBool flg)
{
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)((Mat_SGDIA *)A->data)->spptr;

  PetscFunctionBegin;
  A->ops->mult        = flg ? cu->hostops.mult : MatMult_SGDIACUDA;
  A->ops->multadd     = flg ? cu->hostops.multadd : MatMultAdd_SGDIACUDA;
  A->ops->getdiagonal = flg ? cu->hostops.getdiagonal : MatGetDiagonal_SGDIACUDA;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSGDIACUDASetBlockSize_Private(Mat A, PetscInt block)
{
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)((Mat_SGDIA *)A->data)->spptr;

  PetscFunctionBegin;
  PetscCheck(block >= 32 && block <= 1024 && block % 32 == 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "MATSGDIACUDA block size (threads per block) must be a multiple of 32 in 32..1024, got %" PetscInt_FMT, block);
  cu->block = block;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetFromOptions_SGDIACUDA(Mat A, GpukitOptionItems PetscOptionsObject)
{
  Mat_SGDIACUDA *cu    = (Mat_SGDIACUDA *)((Mat_SGDIA *)A->data)->spptr;
  PetscInt       block = cu->block;
  PetscBool      set;

  PetscFunctionBegin;
  PetscCall((*cu->hostops.setfromoptions)(A, PetscOptionsObject));
  PetscOptionsHeadBegin(PetscOptionsObject, "MATSGDIACUDA options");
  PetscCall(PetscOptionsInt("-mat_sgdia_cuda_block_size", "Threads per block of the MATSGDIACUDA kernels (a multiple of 32 in 32..1024)", "MATSGDIACUDA", block, &block, &set));
  if (set) PetscCall(MatSGDIACUDASetBlockSize_Private(A, block));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Conversion, destroy, create
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode MatConvert_SGDIA_SGDIACUDA(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatConvert_SGDIACUDA_SGDIA(Mat, MatType, MatReuse, Mat *);

/* MatConvert() finds these: sgdia -> sgdiacuda on the new (CUDA) matrix, sgdiacuda -> sgdia on the CUDA matrix */
static PetscErrorCode SGDIACUDAComposeConverts_Private(Mat A, PetscBool set)
{
  PetscBool ismpi;

  PetscFunctionBegin;
  PetscCall(SGDIACUDAIsMPI_Private(A, &ismpi));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, ismpi ? "MatConvert_mpisgdia_mpisgdiacuda_C" : "MatConvert_seqsgdia_seqsgdiacuda_C", set ? MatConvert_SGDIA_SGDIACUDA : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, ismpi ? "MatConvert_mpisgdiacuda_mpisgdia_C" : "MatConvert_seqsgdiacuda_seqsgdia_C", set ? MatConvert_SGDIACUDA_SGDIA : NULL));
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
  PetscCall(VecDestroy(&(*cu)->xl));
  PetscCall(PetscFree(*cu));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_SGDIACUDA(Mat A)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscErrorCode (*hostdestroy)(Mat) = cu->hostops.destroy;

  PetscFunctionBegin;
  PetscCall(SGDIACUDAComposeConverts_Private(A, PETSC_FALSE));
  PetscCall(SGDIACUDAFree_Private(&cu));
  sg->spptr = NULL;
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
  cu->block = GPUKIT_SGDIA_CUDA_BLOCK_SIZE;
  PetscCall(PetscMemcpy(&cu->hostops, A->ops, sizeof(struct _MatOps)));
  sg->spptr              = cu;
  A->ops->mult           = MatMult_SGDIACUDA;
  A->ops->multadd        = MatMultAdd_SGDIACUDA;
  A->ops->getdiagonal    = MatGetDiagonal_SGDIACUDA;
  A->ops->bindtocpu      = MatBindToCPU_SGDIACUDA;
  A->ops->setfromoptions = MatSetFromOptions_SGDIACUDA;
  A->ops->destroy        = MatDestroy_SGDIACUDA;
  PetscCall(MatSetVecType(A, VECCUDA));
  A->boundtocpu  = PETSC_FALSE;
  A->offloadmask = PETSC_OFFLOAD_UNALLOCATED;
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, ismpi ? MATMPISGDIACUDA : MATSEQSGDIACUDA));
  PetscCall(SGDIACUDAComposeConverts_Private(A, PETSC_TRUE));
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
  PetscCall(SGDIACUDAComposeConverts_Private(A, PETSC_FALSE));
  PetscCall(PetscMemcpy(A->ops, &cu->hostops, sizeof(struct _MatOps)));
  PetscCall(SGDIACUDAFree_Private(&cu));
  sg->spptr = NULL;
  PetscCall(MatSetVecType(A, VECSTANDARD));
  A->boundtocpu  = PETSC_TRUE;
  A->offloadmask = PETSC_OFFLOAD_CPU;
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
   MATSEQSGDIACUDA - "seqsgdiacuda" - `MATSEQSGDIA` with a device copy of its values: `MatMult()`, `MatMultAdd()`
   and `MatGetDiagonal()` run on an NVIDIA GPU, every other operation on the host copy.

   Options Database Keys:
+  -mat_type seqsgdiacuda - the type (or -dm_mat_type sgdiacuda with `DMCreateMatrix()`)
-  -mat_sgdia_cuda_block_size <256> - threads per block of the kernels, a multiple of 32 in 32..1024

   Level: beginner

   Notes:
   The host array is the master copy; it is copied to the device (event SGDIACopyToGPU) at the first device
   operation after any change of values. Use `VECCUDA` vectors (`MatCreateVecs()`, -dm_vec_type cuda); with
   host vectors the products run on the host (see -info). `MatBindToCPU()` runs everything on the host.
   `MatConvert()` goes both ways between `MATSEQSGDIA` and `MATSEQSGDIACUDA`.

.seealso: `MATSGDIACUDA`, `MATMPISGDIACUDA`, `MATSGDIA`
M*/
static PetscErrorCode MatCreate_SeqSGDIACUDA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatCreate_SeqSGDIA(A));
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
  PetscFunctionBegin;
  PetscCall(MatCreate_MPISGDIA(A));
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
  PetscCall(MatRegisterRootName(MATSGDIACUDA, MATSEQSGDIACUDA, MATMPISGDIACUDA));
  PetscCall(MatRegister(MATSGDIACUDA, MatCreate_SGDIACUDA));
  PetscCall(MatRegister(MATSEQSGDIACUDA, MatCreate_SeqSGDIACUDA));
  PetscCall(MatRegister(MATMPISGDIACUDA, MatCreate_MPISGDIACUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool GpukitHaveCUDA(void)
{
  return PETSC_TRUE;
}
#endif /* GPUKIT_SGDIACUDA_AVAILABLE */
