/*
   MATSEQSGDIACUDA and MATMPISGDIACUDA: MATSGDIA with its values on an NVIDIA GPU. Built only against a PETSc with
   CUDA; it replaces the registration in sgdiacudareg.c. Kernels: sgdiakernels.cu (products, diagonal) and
   sgdiaopskernels.cu (everything else).

   Each type is its host type (MatCreate_SeqSGDIA(), MatCreate_MPISGDIA()) plus one in-place convert,
   SGDIAConvertToCUDA_Private(): it hangs a Mat_SGDIACUDA on Mat_SGDIA's spptr, keeps the host ops table (for
   MatBindToCPU() and the way back to MATSGDIA), makes VECCUDA the vector type and sets the device ops.

   Two copies of the values, and A->offloadmask says which are valid, as for PETSc's own GPU types:
   - host code (MatSetValues(), MatGetRow(), MatView(), conversions, ...) calls SGDIAHostAccess() first, which
     lands in SGDIACUDAHostAccess() here: it copies the values back when only the device has them (GPU), and
     a writer leaves the host copy as the only valid one (CPU);
   - device code calls SGDIACUDACopyToGPU() first, which copies to the device when only the host has them, and a
     device writer leaves the device copy as the only valid one (GPU);
   so a Newton loop that assembles on the host uploads once per assembly, and one that assembles on the device
   (MatSetValuesCOO(), MatSGDIAGetArrayWriteCUDA()) never moves the matrix at all.
*/
#include <petscdevice_cuda.h>
#include "gpukitcuda.h"
#include <petscsf.h>
#include <algorithm>
#include <vector>
#include "sgdiaimpl.h"
#include "sgdiakernels.h"
#include "sgdiaopskernels.h"

#if defined(GPUKIT_SGDIACUDA_AVAILABLE)

#define GPUKIT_SGDIA_CUDA_BLOCK_SIZE 256 /* default threads per block */
#define SGDIACUDA_WHO                "MATSGDIACUDA launches its kernels" /* for GpukitCUDAGetStream() errors */

static const char *const SGDIACUDAVariants[] = {"row", "row2", "stencil", "SGDIACUDAVariant", "", NULL};

typedef struct {
  PetscScalar   *v;     /* device copy of Mat_SGDIA's v */
  PetscCount     nv;    /* its length */
  long long     *off;   /* 2k: stencil offsets in grid points, in the owned box (first k), then in the ghosted box */
  int           *delta; /* 3k: stencil offsets (dx, dy, dz) */
  PetscInt       k;     /* stencil points that off and delta hold */
  Vec            xl, yl; /* device ghosted local vectors, when the DMDA's local vectors are not VECSEQCUDA */
  Vec            dl;     /* matrix powers, lean basis: dinv over the ghosted box of DM dlda, for dinv of id did and state dstate */
  DM             dlda;   /* not referenced: only compared */
  PetscObjectId  did;
  PetscObjectState dstate;
  PetscScalar   *ibdiag; /* device: inverted diagonal blocks */

  /* kernel knobs; autotune times every (variant, block) at the first product and keeps the fastest */
  PetscInt       block, variant;
  PetscBool      autotune, tuned;
  PetscReal      tune_ms, tune_default_ms; /* time of the chosen candidate and of the default (row, 256) */

  /* COO assembly: unique slots, and for each the entries (jmap/perm, local entries first, then received) */
  PetscCount     coo_n, coo_nrecv, coo_nu;
  long long     *coo_slot, *coo_jmap, *coo_perm; /* device */
  PetscSF        coo_sf;                         /* local entries for other ranks' rows -> their owners */
  PetscScalar   *coo_recv, *coo_vbuf;            /* device: received values; a device copy of host coo_v */

  PetscBool      told_host, told_vec, told_dof;
  struct _MatOps hostops; /* the host type's ops */
  PetscErrorCode (*hostmpk)(Mat, Vec, PetscInt, const PetscReal[], const PetscReal[], const PetscReal[], Vec[], Vec[]); /* the host type's "MatMatrixPowers_C", put back by the convert to it */
} Mat_SGDIACUDA;

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
static PetscErrorCode SGDIACUDAVecsOnDevice_Private(Mat A, const char op[], PetscInt n, const Vec vecs[], PetscBool *ok)
{
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)((Mat_SGDIA *)A->data)->spptr;

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
static PetscBool SGDIACUDANeedsGhosts(const Mat_SGDIA *sg)
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
    if (A->offloadmask == PETSC_OFFLOAD_GPU || A->offloadmask == PETSC_OFFLOAD_BOTH) A->offloadmask = PETSC_OFFLOAD_CPU;
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

/* Make the device copy valid: copy the values up when only the host has them. */
static PetscErrorCode SGDIACUDACopyToGPU(Mat A)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  cudaStream_t   stream;

  PetscFunctionBegin;
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
  PetscCall(SGDIACUDAAllocate_Private(A, stream));
  if (A->offloadmask == PETSC_OFFLOAD_GPU || A->offloadmask == PETSC_OFFLOAD_BOTH) PetscFunctionReturn(PETSC_SUCCESS);
  if (!cu->told_host) {
    PetscCall(PetscInfo(A, "%s: products, diagonal, scaling, shifts, AXPY, copies, zeroing of rows, block-diagonal inverse and COO assembly run on the GPU; other operations run the host code on the host copy (see docs/sgdia.md)\n", ((PetscObject)A)->type_name));
    cu->told_host = PETSC_TRUE;
  }
  PetscCall(PetscLogEventBegin(MAT_SGDIA_CopyToGPU, A, 0, 0, 0));
  if (sg->nv) PetscCallCUDA(cudaMemcpyAsync(cu->v, sg->v, (size_t)sg->nv * sizeof(PetscScalar), cudaMemcpyHostToDevice, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream)); /* the host array may change as soon as we return */
  PetscCall(PetscLogCpuToGpu((PetscLogDouble)sg->nv * sizeof(PetscScalar)));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_CopyToGPU, A, 0, 0, 0));
  A->offloadmask = PETSC_OFFLOAD_BOTH;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Make the host copy valid: copy the values down when only the device has them. */
static PetscErrorCode SGDIACUDACopyFromGPU(Mat A)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  cudaStream_t   stream;

  PetscFunctionBegin;
  if (A->offloadmask != PETSC_OFFLOAD_GPU) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_CopyFromGPU, A, 0, 0, 0));
  if (sg->nv) PetscCallCUDA(cudaMemcpyAsync(sg->v, cu->v, (size_t)sg->nv * sizeof(PetscScalar), cudaMemcpyDeviceToHost, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream));
  PetscCall(PetscLogGpuToCpu((PetscLogDouble)sg->nv * sizeof(PetscScalar)));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_CopyFromGPU, A, 0, 0, 0));
  A->offloadmask = PETSC_OFFLOAD_BOTH;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Mat_SGDIA's hostaccess hook */
static PetscErrorCode SGDIACUDAHostAccess(Mat A, PetscBool write)
{
  PetscFunctionBegin;
  PetscCall(SGDIACUDACopyFromGPU(A));
  if (write) A->offloadmask = PETSC_OFFLOAD_CPU;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The device array for a device op that changes the values: with keep, the current values (copied up when
   needed); without, storage whose values will all be overwritten. The caller then calls SGDIACUDAWritten(). */
static PetscErrorCode SGDIACUDADeviceWrite_Private(Mat A, PetscBool keep, PetscScalar **v, cudaStream_t *stream)
{
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)((Mat_SGDIA *)A->data)->spptr;

  PetscFunctionBegin;
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, stream));
  if (keep) PetscCall(SGDIACUDACopyToGPU(A));
  else PetscCall(SGDIACUDAAllocate_Private(A, *stream));
  *v = cu->v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGDIACUDAWritten(Mat A)
{
  PetscFunctionBegin;
  A->offloadmask = PETSC_OFFLOAD_GPU;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* VECSEQCUDA vectors over the ghosted box: the DMDA's own local vectors if they are, else ours */
static PetscErrorCode SGDIACUDAGetLocalVecs_Private(Mat A, Vec *xl, Vec *yl)
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

/* Time every (variant, block) candidate on this product and keep the fastest (-mat_sgdia_autotune) */
static PetscErrorCode SGDIACUDAAutotune_Private(Mat A, const GpukitSGDIAMultArgs *args, const PetscScalar *xa, cudaStream_t stream)
{
  Mat_SGDIA     *sg       = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu       = (Mat_SGDIACUDA *)sg->spptr;
  const int      blocks[] = {64, 96, 128, 192, 256, 512, 1024}, reps = 5;
  cudaEvent_t    e0, e1;
  float          best = -1.0f;
  PetscScalar   *za;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(MAT_SGDIA_Autotune, A, 0, 0, 0));
  PetscCallCUDA(cudaMalloc((void **)&za, (size_t)PetscMax(args->m, 1) * sizeof(PetscScalar))); /* the output vector may be an input */
  PetscCallCUDA(cudaEventCreate(&e0));
  PetscCallCUDA(cudaEventCreate(&e1));
  for (int var = 0; var < GPUKIT_SGDIA_CUDA_VARIANTS; var++) {
    if (!GpukitSGDIAMultVariantValid(args, var)) continue;
    for (size_t b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++) {
      float ms;
      PetscCallCUDA(GpukitSGDIAMultCUDA(args, xa, NULL, za, blocks[b], var, stream)); /* warm-up */
      PetscCallCUDA(cudaEventRecord(e0, stream));
      for (int r = 0; r < reps; r++) PetscCallCUDA(GpukitSGDIAMultCUDA(args, xa, NULL, za, blocks[b], var, stream));
      PetscCallCUDA(cudaEventRecord(e1, stream));
      PetscCallCUDA(cudaEventSynchronize(e1));
      PetscCallCUDA(cudaEventElapsedTime(&ms, e0, e1));
      ms /= reps;
      PetscCall(PetscInfo(A, "autotune: variant %s, %d threads per block: %g ms per product\n", SGDIACUDAVariants[var], blocks[b], (double)ms));
      if (var == 0 && blocks[b] == GPUKIT_SGDIA_CUDA_BLOCK_SIZE) cu->tune_default_ms = ms;
      if (best < 0 || ms < best) {
        best        = ms;
        cu->variant = var;
        cu->block   = blocks[b];
      }
    }
  }
  PetscCallCUDA(cudaEventDestroy(e0));
  PetscCallCUDA(cudaEventDestroy(e1));
  PetscCallCUDA(cudaFree(za));
  cu->tune_ms = best;
  cu->tuned   = PETSC_TRUE;
  PetscCall(PetscInfo(A, "autotune: variant %s, %" PetscInt_FMT " threads per block, %g ms per product (default row/256: %g ms)\n", SGDIACUDAVariants[cu->variant], cu->block, (double)best, (double)cu->tune_default_ms));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_Autotune, A, 0, 0, 0));
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
  int                 variant;

  PetscFunctionBegin;
  PetscCall(SGDIACUDAVecsOnDevice_Private(A, y ? "MatMultAdd" : "MatMult", 3, vecs, &ok));
  if (!ok) {
    if (y) PetscCall((*cu->hostops.multadd)(A, x, y, z));
    else PetscCall((*cu->hostops.mult)(A, x, z));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (sg->dof > GPUKIT_SGDIA_CUDA_MAX_DOF && !cu->told_dof) {
    PetscCall(PetscInfo(A, "dof %" PetscInt_FMT " has no kernel of its own (1..%d do): MatMult runs the generic kernel\n", sg->dof, GPUKIT_SGDIA_CUDA_MAX_DOF));
    cu->told_dof = PETSC_TRUE;
  }
  PetscCall(SGDIACUDACopyToGPU(A));
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_MultCUDA, A, x, z, 0));
  ghosted = SGDIACUDANeedsGhosts(sg);
  if (ghosted) { /* PETSc's scatter, on device buffers */
    PetscCall(SGDIACUDAGetLocalVecs_Private(A, &xin, NULL));
    PetscCall(DMGlobalToLocalBegin(sg->da, x, INSERT_VALUES, xin));
    PetscCall(DMGlobalToLocalEnd(sg->da, x, INSERT_VALUES, xin));
  }
  PetscCall(SGDIACUDASetArgs_Private(A, ghosted, &args));
  PetscCall(VecCUDAGetArrayRead(xin, &xa));
  PetscCall(SGDIACUDAGetOutArrays_Private(y, z, &ya, &za));
  if (cu->autotune && !cu->tuned) PetscCall(SGDIACUDAAutotune_Private(A, &args, xa, stream));
  variant = (int)cu->variant;
  if (!GpukitSGDIAMultVariantValid(&args, variant) || !SGDIACUDAAligned(za) || (ya && !SGDIACUDAAligned(ya))) variant = 0;
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitSGDIAMultCUDA(&args, xa, ya, za, (int)cu->block, variant, stream));
  PetscCall(PetscLogGpuTimeEnd());
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
    if (y) PetscCall((*cu->hostops.multtransposeadd)(A, x, y, z));
    else PetscCall((*cu->hostops.multtranspose)(A, x, z));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIACUDACopyToGPU(A));
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_MultTrCUDA, A, x, z, 0));
  ghosted = SGDIACUDANeedsGhosts(sg);
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
   Matrix powers (KSPCACG's "MatMatrixPowers_C", contract in src/ksp/cacg/cacgimpl.h)
   ------------------------------------------------------------------------------------------------------ */

static PetscLogEvent MAT_SGDIA_PowersCUDA; /* "SGDIAMatPowCUDA", registered with the types below */


/*
   MatMatrixPowers_SGDIACUDA - KSPCACG's matrix powers hook: for j = 0..k-1
       W[j+1] = (A V[j] - theta[j] W[j] - gamma[j] W[j-1]) / sigma[j],   V[j+1] = dinv .* W[j+1] (dinv NULL: V == W)
   with one kernel launch per j (GpukitSGDIAPowersCUDA(): the product with the update and the Jacobi scaling in its
   epilogue), so each new basis vector costs one pass instead of a product, an update and a Jacobi apply. On more
   than one rank (or with periodic dimensions) the ghost values of V[j] are gathered before each product as in
   MatMult. Everything stays on the device: no host-device copy on one rank. Host vectors, or a matrix bound to the
   CPU, run the reference (k MatMult and vector operations).
   Lean basis (V == NULL, dinv given): the product reads W[j] and dinv and multiplies them where it reads them, so
   only W is written: one vector less per step; with ghosts, dinv's are gathered once and kept while dinv (id and
   state) does not change.
*/
static PetscErrorCode MatMatrixPowers_SGDIACUDA(Mat A, Vec dinv, PetscInt k, const PetscReal theta[], const PetscReal sigma[], const PetscReal gamma[], Vec V[], Vec W[])
{
  Mat_SGDIA          *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA      *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscBool           ok = PETSC_TRUE, ghosted, lean = (PetscBool)(V == NULL);
  Vec                 xl = NULL;
  const PetscScalar  *dla = NULL;
  GpukitSGDIAMultArgs args;
  cudaStream_t        stream;
  int                 variant;

  PetscFunctionBegin;
  if (k < 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(theta && sigma && gamma && W, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_NULL, "MatMatrixPowers: the basis parameters and the W array must not be NULL");
  PetscCheck(V || dinv, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_NULL, "MatMatrixPowers: V may be NULL (the lean basis) only with a diagonal preconditioner dinv");
  for (PetscInt j = 0; j <= k && ok; j++) {
    Vec vecs[3] = {lean ? NULL : V[j], W[j], j == 0 ? dinv : NULL};
    PetscCall(SGDIACUDAVecsOnDevice_Private(A, "MatMatrixPowers", 3, vecs, &ok));
  }
  if (!ok || A->boundtocpu || !PetscDefined(USE_REAL_DOUBLE) || PetscDefined(USE_COMPLEX)) {
    PetscCall(MatMatrixPowersReference_SGDIA_Private(A, dinv, k, theta, sigma, gamma, V, W));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIACUDACopyToGPU(A));
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_PowersCUDA, A, 0, 0, 0));
  ghosted = SGDIACUDANeedsGhosts(sg);
  if (ghosted) PetscCall(SGDIACUDAGetLocalVecs_Private(A, &xl, NULL));
  if (lean && ghosted) { /* dinv over the ghosted box: gathered once per dinv (id and state), kept for later calls */
    PetscObjectId    id;
    PetscObjectState st;
    PetscCall(PetscObjectGetId((PetscObject)dinv, &id));
    PetscCall(PetscObjectStateGet((PetscObject)dinv, &st));
    if (cu->dl) { /* the box changes with the grid (a new DM): then gather again */
      PetscInt nd, nx;
      PetscCall(VecGetLocalSize(cu->dl, &nd));
      PetscCall(VecGetLocalSize(xl, &nx));
      if (nd != nx || cu->dlda != sg->da) PetscCall(VecDestroy(&cu->dl));
    }
    if (!cu->dl) {
      PetscCall(VecDuplicate(xl, &cu->dl));
      cu->dlda = sg->da;
      cu->did  = 0;
    }
    if (cu->did != id || cu->dstate != st) {
      PetscCall(DMGlobalToLocalBegin(sg->da, dinv, INSERT_VALUES, cu->dl));
      PetscCall(DMGlobalToLocalEnd(sg->da, dinv, INSERT_VALUES, cu->dl));
      cu->did    = id;
      cu->dstate = st;
    }
    PetscCall(VecCUDAGetArrayRead(cu->dl, &dla));
  }
  PetscCall(SGDIACUDASetArgs_Private(A, ghosted, &args));
  for (PetscInt j = 0; j < k; j++) {
    GpukitSGDIAPowersArgs e;
    GpukitCUDAReads       rd;
    const PetscScalar    *xa;
    PetscScalar          *w1;
    Vec                   xin = lean ? W[j] : V[j];

    rd.n = 0;
    if (ghosted) {
      PetscCall(DMGlobalToLocalBegin(sg->da, xin, INSERT_VALUES, xl));
      PetscCall(DMGlobalToLocalEnd(sg->da, xin, INSERT_VALUES, xl));
      xin = xl;
    }
    PetscCall(GpukitCUDAReadsGet(&rd, xin, &xa));
    e.xs = NULL;
    if (lean) {
      if (ghosted) e.xs = dla;
      else PetscCall(GpukitCUDAReadsGet(&rd, dinv, &e.xs));
    }
    if (cu->autotune && !cu->tuned) PetscCall(SGDIACUDAAutotune_Private(A, &args, xa, stream));
    PetscCall(GpukitCUDAPowersStepBegin(&rd, j, theta, sigma, gamma, dinv, V, W, &e, &w1));
    variant = cu->variant == 2 && GpukitSGDIAMultVariantValid(&args, 2) ? 2 : 0;
    PetscCall(PetscLogGpuTimeBegin());
    PetscCallCUDA(GpukitSGDIAPowersCUDA(&args, &e, xa, w1, (int)cu->block, variant, stream));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(GpukitCUDAPowersStepEnd(&rd, j, dinv, V, W, &e, &w1));
  }
  if (dla) PetscCall(VecCUDARestoreArrayRead(cu->dl, &dla));
  PetscCall(PetscLogGpuFlops((PetscLogDouble)k * (2.0 * (PetscLogDouble)sg->nv + 6.0 * (PetscLogDouble)sg->m)));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_PowersCUDA, A, 0, 0, 0));
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
    PetscCall((*cu->hostops.getdiagonal)(A, d));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIACUDACopyToGPU(A));
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
  PetscCall(SGDIACUDAWritten(A));
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
  PetscCall(SGDIACUDAWritten(A));
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
    PetscCall((*cu->hostops.diagonalset)(A, D, mode));
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
  PetscCall(SGDIACUDAWritten(A));
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
    PetscCall((*cu->hostops.diagonalscale)(A, l, r));
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
  PetscCall(SGDIACUDAWritten(A));
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
  PetscCall(SGDIACUDAWritten(A));
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
    PetscCall((*cu->hostops.axpy)(Y, a, X, str));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIACUDACopyToGPU(X));
  PetscCall(SGDIACUDADeviceWrite_Private(Y, PETSC_TRUE, &v, &stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_OpsCUDA, Y, X, 0, 0));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitSGDIAAXPYCUDA((long long)sy->nv, a, ((Mat_SGDIACUDA *)((Mat_SGDIA *)X->data)->spptr)->v, v, (int)cu->block, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)sy->nv));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_OpsCUDA, Y, X, 0, 0));
  PetscCall(SGDIACUDAWritten(Y));
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
    PetscCall((*cu->hostops.copy)(A, B, str));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIACUDACopyToGPU(A));
  PetscCall(SGDIACUDADeviceWrite_Private(B, PETSC_FALSE, &v, &stream));
  if (sa->nv) PetscCallCUDA(cudaMemcpyAsync(v, cu->v, (size_t)sa->nv * sizeof(PetscScalar), cudaMemcpyDeviceToDevice, stream));
  PetscCall(SGDIACUDAWritten(B));
  PetscCall(PetscObjectStateIncrease((PetscObject)B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDuplicate_SGDIACUDA(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_SGDIA     *sa = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *ca = (Mat_SGDIACUDA *)sa->spptr, *cb;

  PetscFunctionBegin;
  PetscCall((*ca->hostops.duplicate)(A, MAT_DO_NOT_COPY_VALUES, B)); /* a MATSGDIACUDA of the same layout, zero */
  cb           = (Mat_SGDIACUDA *)((Mat_SGDIA *)(*B)->data)->spptr;
  cb->block    = ca->block;
  cb->variant  = ca->variant;
  cb->autotune = ca->autotune;
  cb->tuned    = ca->tuned;
  cb->tune_ms  = ca->tune_ms;
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
    if (columns) PetscCall((*cu->hostops.zerorowscolumns)(A, n, rows, diag, x, b));
    else PetscCall((*cu->hostops.zerorows)(A, n, rows, diag, x, b));
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
  PetscCall(SGDIACUDAWritten(A));
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
    PetscCall((*cu->hostops.invertblockdiagonal)(A, values));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIACUDACopyToGPU(A));
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
  PetscCall(SGDIACUDACopyToGPU(A));
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
   COO assembly: MatSetPreallocationCOO() once, then MatSetValuesCOO() with host or device values
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode SGDIACUDACOOFree_Private(Mat_SGDIACUDA *cu)
{
  PetscFunctionBegin;
  if (cu->coo_slot) PetscCallCUDA(cudaFree(cu->coo_slot));
  if (cu->coo_jmap) PetscCallCUDA(cudaFree(cu->coo_jmap));
  if (cu->coo_perm) PetscCallCUDA(cudaFree(cu->coo_perm));
  if (cu->coo_recv) PetscCallCUDA(cudaFree(cu->coo_recv));
  if (cu->coo_vbuf) PetscCallCUDA(cudaFree(cu->coo_vbuf));
  cu->coo_slot = cu->coo_jmap = cu->coo_perm = NULL;
  cu->coo_recv = cu->coo_vbuf = NULL;
  cu->coo_n = cu->coo_nrecv = cu->coo_nu = 0;
  PetscCall(PetscSFDestroy(&cu->coo_sf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <typename T>
static PetscErrorCode SGDIACUDAUpload_Private(T **d, const T *h, size_t n, cudaStream_t stream)
{
  PetscFunctionBegin;
  PetscCallCUDA(cudaMalloc((void **)d, PetscMax(n, (size_t)1) * sizeof(T)));
  if (n) PetscCallCUDA(cudaMemcpyAsync(*d, h, n * sizeof(T), cudaMemcpyHostToDevice, stream));
  PetscCall(PetscLogCpuToGpu((PetscLogDouble)n * sizeof(T)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetPreallocationCOO_SGDIACUDA(Mat A, PetscCount n, PetscInt coo_i[], PetscInt coo_j[])
{
  Mat_SGDIA                                   *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA                               *cu = (Mat_SGDIACUDA *)sg->spptr;
  MPI_Comm                                     comm;
  PetscMPIInt                                  size, rank;
  std::vector<std::pair<PetscCount, long long>> ent; /* (slot, index into [local values | received values]) */
  std::vector<PetscInt>                        leaves;
  std::vector<PetscSFNode>                     remotes;
  cudaStream_t                                 stream;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetComm((PetscObject)A, &comm));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(SGDIACUDACheckSetUp_Private(A));
  PetscCall(SGDIACUDACOOFree_Private(cu));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_COO, A, 0, 0, 0));
  cu->coo_n = n;
  /* local entries; other ranks' rows are sent to their owners */
  std::vector<std::vector<PetscInt>> out(size);  /* (i, j) pairs per destination rank */
  std::vector<std::vector<PetscCount>> outidx(size);
  for (PetscCount e = 0; e < n; e++) {
    PetscInt   i = coo_i[e], j = coo_j[e];
    PetscCount slot;
    if (i < 0 || j < 0) continue;
    PetscCheck(i < A->rmap->N && j < A->cmap->N, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "COO entry %" PetscCount_FMT " is (%" PetscInt_FMT ", %" PetscInt_FMT "), outside the %" PetscInt_FMT " x %" PetscInt_FMT " matrix", e, i, j, A->rmap->N, A->cmap->N);
    if (i >= A->rmap->rstart && i < A->rmap->rend) {
      PetscCall(SGDIAEntrySlot_Private(A, i, j, &slot));
      if (slot >= 0) ent.push_back(std::make_pair(slot, (long long)e));
    } else {
      PetscMPIInt owner;
      PetscCheck(!sg->ignore_offproc, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "COO entry %" PetscCount_FMT " is in row %" PetscInt_FMT " of another rank, and MAT_IGNORE_OFF_PROC_ENTRIES is set; leave such entries out (negative indices)", e, i);
      PetscCall(PetscLayoutFindOwner(A->rmap, i, &owner));
      out[owner].push_back(i);
      out[owner].push_back(j);
      outidx[owner].push_back(e);
    }
  }
  if (size > 1) { /* counts, then where each sender's entries land in the owner's receive buffer, then (i, j) */
    std::vector<PetscMPIInt> scount(size), rcount(size), sdispl(size), rdispl(size), rstartof(size), mystart(size);
    std::vector<PetscInt>    rbuf, sbuf;
    PetscMPIInt              nr = 0, ns = 0;
    for (PetscMPIInt r = 0; r < size; r++) PetscCall(PetscMPIIntCast((PetscCount)outidx[r].size(), &scount[r]));
    PetscCallMPI(MPI_Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, comm));
    for (PetscMPIInt r = 0; r < size; r++) {
      rstartof[r] = nr; /* entries from rank r start here in my receive buffer */
      nr += rcount[r];
    }
    PetscCallMPI(MPI_Alltoall(rstartof.data(), 1, MPI_INT, mystart.data(), 1, MPI_INT, comm));
    cu->coo_nrecv = nr;
    for (PetscMPIInt r = 0; r < size; r++)
      for (size_t t = 0; t < outidx[r].size(); t++) {
        PetscSFNode node;
        node.rank  = r;
        node.index = mystart[r] + (PetscInt)t;
        remotes.push_back(node);
        leaves.push_back((PetscInt)outidx[r][t]);
      }
    for (PetscMPIInt r = 0; r < size; r++) {
      sdispl[r] = ns;
      ns += 2 * scount[r];
      scount[r] *= 2;
      rdispl[r] = 2 * rstartof[r];
      rcount[r] *= 2;
      sbuf.insert(sbuf.end(), out[r].begin(), out[r].end());
    }
    rbuf.resize(2 * (size_t)nr + 1);
    sbuf.push_back(0);
    PetscCallMPI(MPI_Alltoallv(sbuf.data(), scount.data(), sdispl.data(), MPIU_INT, rbuf.data(), rcount.data(), rdispl.data(), MPIU_INT, comm));
    for (PetscMPIInt t = 0; t < nr; t++) {
      PetscCount slot;
      PetscCall(SGDIAEntrySlot_Private(A, rbuf[2 * t], rbuf[2 * t + 1], &slot));
      if (slot >= 0) ent.push_back(std::make_pair(slot, (long long)n + t));
    }
    PetscCall(PetscSFCreate(comm, &cu->coo_sf));
    PetscCall(PetscSFSetGraph(cu->coo_sf, (PetscInt)nr, (PetscInt)leaves.size(), leaves.data(), PETSC_COPY_VALUES, remotes.data(), PETSC_COPY_VALUES));
    PetscCall(PetscSFSetUp(cu->coo_sf));
  }
  /* group by slot; within a slot keep the entry order, so the sums do not depend on the run */
  std::stable_sort(ent.begin(), ent.end(), [](const std::pair<PetscCount, long long> &a, const std::pair<PetscCount, long long> &b) { return a.first < b.first; });
  {
    std::vector<long long> slot, jmap(1, 0), perm(ent.size());
    for (size_t t = 0; t < ent.size(); t++) {
      if (t == 0 || ent[t].first != ent[t - 1].first) {
        slot.push_back((long long)ent[t].first);
        if (t) jmap.push_back((long long)t);
      }
      perm[t] = ent[t].second;
    }
    if (!ent.empty()) jmap.push_back((long long)ent.size());
    cu->coo_nu = (PetscCount)slot.size();
    PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
    PetscCall(SGDIACUDAUpload_Private(&cu->coo_slot, slot.data(), slot.size(), stream));
    PetscCall(SGDIACUDAUpload_Private(&cu->coo_jmap, jmap.data(), jmap.size(), stream));
    PetscCall(SGDIACUDAUpload_Private(&cu->coo_perm, perm.data(), perm.size(), stream));
    PetscCallCUDA(cudaMalloc((void **)&cu->coo_recv, (size_t)PetscMax(cu->coo_nrecv, 1) * sizeof(PetscScalar)));
    PetscCallCUDA(cudaStreamSynchronize(stream));
  }
  PetscCall(PetscInfo(A, "COO: %" PetscCount_FMT " entries, %" PetscCount_FMT " from other ranks, onto %" PetscCount_FMT " stored values\n", n, cu->coo_nrecv, cu->coo_nu));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_COO, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetValuesCOO_SGDIACUDA(Mat A, const PetscScalar coo_v[], InsertMode imode)
{
  Mat_SGDIA         *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA     *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscMemType       mtype;
  const PetscScalar *dv = coo_v;
  PetscScalar       *v;
  cudaStream_t       stream;

  PetscFunctionBegin;
  PetscCheck(imode == INSERT_VALUES || imode == ADD_VALUES, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "MatSetValuesCOO() takes INSERT_VALUES or ADD_VALUES");
  PetscCall(SGDIACUDADeviceWrite_Private(A, imode == ADD_VALUES ? PETSC_TRUE : PETSC_FALSE, &v, &stream));
  PetscCall(PetscLogEventBegin(MAT_SGDIA_COO, A, 0, 0, 0));
  PetscCall(PetscGetMemType(coo_v, &mtype));
  if (cu->coo_n && !PetscMemTypeDevice(mtype)) { /* host values: one upload */
    if (!cu->coo_vbuf) PetscCallCUDA(cudaMalloc((void **)&cu->coo_vbuf, (size_t)cu->coo_n * sizeof(PetscScalar)));
    PetscCallCUDA(cudaMemcpyAsync(cu->coo_vbuf, coo_v, (size_t)cu->coo_n * sizeof(PetscScalar), cudaMemcpyHostToDevice, stream));
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)cu->coo_n * sizeof(PetscScalar)));
    dv = cu->coo_vbuf;
  }
  if (cu->coo_sf) { /* values for other ranks' rows, device to device through PETSc's SF */
    PetscCall(PetscSFReduceWithMemTypeBegin(cu->coo_sf, MPIU_SCALAR, PETSC_MEMTYPE_CUDA, dv, PETSC_MEMTYPE_CUDA, cu->coo_recv, MPI_REPLACE));
    PetscCall(PetscSFReduceEnd(cu->coo_sf, MPIU_SCALAR, dv, cu->coo_recv, MPI_REPLACE));
  }
  if (imode == INSERT_VALUES && sg->nv) PetscCallCUDA(cudaMemsetAsync(v, 0, (size_t)sg->nv * sizeof(PetscScalar), stream));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitSGDIASetValuesCOOCUDA((long long)cu->coo_nu, cu->coo_slot, cu->coo_jmap, cu->coo_perm, (long long)cu->coo_n, dv, cu->coo_recv, imode == ADD_VALUES ? 1 : 0, v, (int)cu->block, stream));
  PetscCall(PetscLogGpuTimeEnd());
  if (dv == cu->coo_vbuf) PetscCallCUDA(cudaStreamSynchronize(stream)); /* coo_v may change when we return */
  PetscCall(PetscLogEventEnd(MAT_SGDIA_COO, A, 0, 0, 0));
  PetscCall(SGDIACUDAWritten(A));
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
  PetscCall(SGDIACUDAWritten(A));
  PetscCall(PetscObjectStateIncrease((PetscObject)A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSGDIAGetArrayReadCUDA_SGDIACUDA(Mat A, const PetscScalar **v)
{
  PetscFunctionBegin;
  PetscCall(SGDIACUDACopyToGPU(A));
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

/* the device ops; MatBindToCPU(A, PETSC_TRUE) puts the host ones back */
static PetscErrorCode SGDIACUDASetDeviceOps_Private(Mat A, PetscBool host)
{
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)((Mat_SGDIA *)A->data)->spptr;

#define GPUKIT_SGDIACUDA_OP(op, fn) A->ops->op = host ? cu->hostops.op : fn
  PetscFunctionBegin;
  GPUKIT_SGDIACUDA_OP(mult, MatMult_SGDIACUDA);
  GPUKIT_SGDIACUDA_OP(multadd, MatMultAdd_SGDIACUDA);
  GPUKIT_SGDIACUDA_OP(multtranspose, MatMultTranspose_SGDIACUDA);
  GPUKIT_SGDIACUDA_OP(multtransposeadd, MatMultTransposeAdd_SGDIACUDA);
  GPUKIT_SGDIACUDA_OP(getdiagonal, MatGetDiagonal_SGDIACUDA);
  GPUKIT_SGDIACUDA_OP(scale, MatScale_SGDIACUDA);
  GPUKIT_SGDIACUDA_OP(shift, MatShift_SGDIACUDA);
  GPUKIT_SGDIACUDA_OP(diagonalset, MatDiagonalSet_SGDIACUDA);
  GPUKIT_SGDIACUDA_OP(diagonalscale, MatDiagonalScale_SGDIACUDA);
  GPUKIT_SGDIACUDA_OP(zeroentries, MatZeroEntries_SGDIACUDA);
  GPUKIT_SGDIACUDA_OP(axpy, MatAXPY_SGDIACUDA);
  GPUKIT_SGDIACUDA_OP(copy, MatCopy_SGDIACUDA);
  GPUKIT_SGDIACUDA_OP(duplicate, MatDuplicate_SGDIACUDA);
  GPUKIT_SGDIACUDA_OP(zerorows, MatZeroRows_SGDIACUDA);
  GPUKIT_SGDIACUDA_OP(zerorowscolumns, MatZeroRowsColumns_SGDIACUDA);
  GPUKIT_SGDIACUDA_OP(invertblockdiagonal, MatInvertBlockDiagonal_SGDIACUDA);
#if PETSC_VERSION_GE(3, 26, 0)
  GPUKIT_SGDIACUDA_OP(getblockdiagonal, MatGetBlockDiagonal_SGDIACUDA);
#endif
#undef GPUKIT_SGDIACUDA_OP
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", host ? NULL : MatSetPreallocationCOO_SGDIACUDA));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetValuesCOO_C", host ? NULL : MatSetValuesCOO_SGDIACUDA));
  /* KSPCACG's matrix powers hook: the device one; none while bound to the CPU (KSPCACG then runs its reference) */
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMatrixPowers_C", host ? NULL : MatMatrixPowers_SGDIACUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatBindToCPU_SGDIACUDA(Mat A, PetscBool flg)
{
  PetscFunctionBegin;
  PetscCall(SGDIACUDASetDeviceOps_Private(A, flg));
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
  Mat_SGDIACUDA *cu      = (Mat_SGDIACUDA *)((Mat_SGDIA *)A->data)->spptr;
  PetscInt       block   = cu->block, variant = cu->variant;
  PetscBool      set, tune = cu->autotune;

  PetscFunctionBegin;
  PetscCall((*cu->hostops.setfromoptions)(A, PetscOptionsObject));
  PetscOptionsHeadBegin(PetscOptionsObject, "MATSGDIACUDA options");
  PetscCall(PetscOptionsInt("-mat_sgdia_cuda_block_size", "Threads per block of the MATSGDIACUDA kernels (a multiple of 32 in 32..1024)", "MATSGDIACUDA", block, &block, &set));
  if (set) PetscCall(MatSGDIACUDASetBlockSize_Private(A, block));
  PetscCall(PetscOptionsEList("-mat_sgdia_cuda_variant", "Product kernel: row (a thread per row), row2 (two rows per thread, 16-byte loads) or stencil (a thread per row, specialised on the stencil size)", "MATSGDIACUDA", SGDIACUDAVariants, GPUKIT_SGDIA_CUDA_VARIANTS, SGDIACUDAVariants[variant], &variant, &set));
  if (set) cu->variant = variant;
  PetscCall(PetscOptionsBool("-mat_sgdia_autotune", "Time every kernel variant and block size at the first product and keep the fastest", "MATSGDIACUDA", tune, &tune, &set));
  if (set) {
    cu->autotune = tune;
    cu->tuned    = PETSC_FALSE;
  }
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Mat_SGDIA's viewinfo hook: the lines MatView() with ::ascii_info adds for the device */
static PetscErrorCode SGDIACUDAViewInfo(Mat A, PetscViewer viewer)
{
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)((Mat_SGDIA *)A->data)->spptr;

  PetscFunctionBegin;
  {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  GPU product kernel: variant %s, %" PetscInt_FMT " threads per block", SGDIACUDAVariants[cu->variant], cu->block));
    if (cu->autotune && cu->tuned) PetscCall(PetscViewerASCIIPrintf(viewer, " (autotuned on rank 0: %.4f ms per product; default row/256: %.4f ms)\n", (double)cu->tune_ms, (double)cu->tune_default_ms));
    else if (cu->autotune) PetscCall(PetscViewerASCIIPrintf(viewer, " (autotune at the first product)\n"));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "\n"));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  values valid on: %s\n", A->offloadmask == PETSC_OFFLOAD_GPU ? "GPU" : A->offloadmask == PETSC_OFFLOAD_BOTH ? "GPU and host" : A->offloadmask == PETSC_OFFLOAD_CPU ? "host" : "host (no device copy yet)"));
  }
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
  if (!set) {
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", NULL));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetValuesCOO_C", NULL));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMatrixPowers_C", NULL));
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
  PetscCall(SGDIACUDACOOFree_Private(*cu));
  PetscCall(VecDestroy(&(*cu)->xl));
  PetscCall(VecDestroy(&(*cu)->yl));
  PetscCall(VecDestroy(&(*cu)->dl));
  PetscCall(PetscFree(*cu));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_SGDIACUDA(Mat A)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscErrorCode (*hostdestroy)(Mat) = cu->hostops.destroy;

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
  cu->block = GPUKIT_SGDIA_CUDA_BLOCK_SIZE;
  PetscCall(PetscMemcpy(&cu->hostops, A->ops, sizeof(struct _MatOps)));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatMatrixPowers_C", &cu->hostmpk)); /* replaced by the device one */
  sg->spptr              = cu;
  sg->hostaccess         = SGDIACUDAHostAccess;
  A->ops->bindtocpu      = MatBindToCPU_SGDIACUDA;
  A->ops->setfromoptions = MatSetFromOptions_SGDIACUDA;
  sg->viewinfo           = SGDIACUDAViewInfo;
  A->ops->destroy        = MatDestroy_SGDIACUDA;
  PetscCall(SGDIACUDASetDeviceOps_Private(A, PETSC_FALSE));
  PetscCall(MatSetVecType(A, VECCUDA));
  A->boundtocpu  = PETSC_FALSE;
  A->offloadmask = PETSC_OFFLOAD_UNALLOCATED;
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
  PetscCall(SGDIACUDACopyFromGPU(A));
  sg->hostaccess = NULL;
  sg->viewinfo   = NULL;
  PetscCall(SGDIACUDAComposeFunctions_Private(A, PETSC_FALSE));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMatrixPowers_C", cu->hostmpk)); /* the host type's, if it had one */
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
   MATSEQSGDIACUDA - "seqsgdiacuda" - `MATSEQSGDIA` with its values on an NVIDIA GPU: products (also transposed),
   diagonal, scaling, shifts, AXPY, copies, zeroing of rows and columns, block-diagonal inverse and COO assembly
   run on the device; other operations run the host code on the host copy.

   Options Database Keys:
+  -mat_type seqsgdiacuda - the type (or -dm_mat_type sgdiacuda with `DMCreateMatrix()`)
.  -mat_sgdia_cuda_block_size <256> - threads per block of the kernels, a multiple of 32 in 32..1024
.  -mat_sgdia_cuda_variant <row,row2,stencil> - product kernel: a thread per row; two rows per thread
     with 16-byte loads (an odd number of local rows falls back to row); a thread per row specialised on the stencil
     size (dof 1..4 with 5, 7 or 9 stencil points, dof 1 with 27; other stencils fall back to row)
-  -mat_sgdia_autotune - time every variant and block size at the first product and keep the fastest (MatView shows it)

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
   SGDIAMatPowCUDA; the product's variant: stencil, else row). Bound to the CPU the matrix has none.

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
  PetscCall(PetscLogEventRegister("SGDIAMatPowCUDA", MAT_CLASSID, &MAT_SGDIA_PowersCUDA));
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
