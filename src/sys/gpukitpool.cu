/*
   gpukit's stream-ordered device memory pool (gpukitpool.h). CUDA builds only; the interface is plain CUDA, the one
   PETSc call is the registration of the pool's destruction at PetscFinalize().
*/
#include <petscdevice_cuda.h>
#include "gpukitpool.h"

#define GPUKIT_POOL_TRY(call) \
  do { \
    cudaError_t err_ = (call); \
    if (err_ != cudaSuccess) return err_; \
  } while (0)

static cudaMemPool_t GpukitPool           = nullptr;
static int           GpukitPoolDevice     = -1;
static PetscBool     GpukitPoolRegistered = PETSC_FALSE;

static PetscErrorCode GpukitPoolFinalize(void)
{
  PetscFunctionBegin;
  GpukitPoolRegistered = PETSC_FALSE;
  PetscCallCUDA(GpukitPoolDestroy());
  PetscFunctionReturn(PETSC_SUCCESS);
}

static cudaError_t GpukitPoolsSupported(int dev, bool *yes)
{
  int v = 0;

  GPUKIT_POOL_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryPoolsSupported, dev));
  *yes = v != 0;
  return cudaSuccess;
}

/* -gpukit_pool_keep, read (and listed by -help) when the pool is made: *keep in bytes, unchanged when not given */
static PetscErrorCode GpukitPoolGetOptions(unsigned long long *keep)
{
  PetscInt  mib = (PetscInt)(*keep >> 20);
  PetscBool set = PETSC_FALSE;

  PetscFunctionBegin;
  PetscOptionsBegin(PETSC_COMM_SELF, NULL, "gpukit's device memory pool", "GPUKIT");
  PetscCall(PetscOptionsInt("-gpukit_pool_keep", "MiB of device memory gpukit's pool holds on to across a synchronisation, in use or free (CUDA's release threshold)", "GpukitPoolMalloc", mib, &mib, &set));
  PetscOptionsEnd();
  PetscCheck(!set || (mib >= 0 && mib <= ((PetscInt)1 << 24)), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-gpukit_pool_keep %" PetscInt_FMT ": the MiB of device memory gpukit's pool holds on to must be >= 0 (and at most 16777216)", mib);
  if (set) *keep = (unsigned long long)mib << 20;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the library's pool on device dev, created (and its destruction registered) at the first use; it holds on to at most
   -gpukit_pool_keep MiB (default GPUKIT_POOL_KEEP) of device memory across a synchronisation, in use or free */
static cudaError_t GpukitPoolGet(int dev)
{
  cudaMemPoolProps   props = {};
  unsigned long long keep  = GPUKIT_POOL_KEEP;

  if (GpukitPool) return cudaSuccess;
  /* a bad value: the PETSc message first; the caller's PetscCallCUDA() then adds the CUDA error */
  if (PetscInitializeCalled && !PetscFinalizeCalled && GpukitPoolGetOptions(&keep) != PETSC_SUCCESS) return cudaErrorInvalidValue;
  props.allocType     = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id   = dev;
  GPUKIT_POOL_TRY(cudaMemPoolCreate(&GpukitPool, &props));
  GPUKIT_POOL_TRY(cudaMemPoolSetAttribute(GpukitPool, cudaMemPoolAttrReleaseThreshold, &keep));
  GpukitPoolDevice = dev;
  if (!GpukitPoolRegistered && PetscInitializeCalled && !PetscFinalizeCalled) {
    if (PetscRegisterFinalize(GpukitPoolFinalize) != PETSC_SUCCESS) return cudaErrorUnknown;
    GpukitPoolRegistered = PETSC_TRUE;
  }
  return cudaSuccess;
}

cudaError_t GpukitPoolMalloc(void **p, size_t bytes, cudaStream_t stream)
{
  int  dev;
  bool pools;

  if (!p) return cudaErrorInvalidValue;
  *p = nullptr;
  if (!bytes) bytes = 1;
  GPUKIT_POOL_TRY(cudaGetDevice(&dev));
  GPUKIT_POOL_TRY(GpukitPoolsSupported(dev, &pools));
  if (!pools) return cudaMalloc(p, bytes);
  GPUKIT_POOL_TRY(GpukitPoolGet(dev));
  if (dev == GpukitPoolDevice) return cudaMallocFromPoolAsync(p, bytes, GpukitPool, stream);
  return cudaMallocAsync(p, bytes, stream); /* another device: its default pool */
}

cudaError_t GpukitPoolFree(void *p, cudaStream_t stream)
{
  int  dev;
  bool pools;

  if (!p) return cudaSuccess;
  GPUKIT_POOL_TRY(cudaGetDevice(&dev));
  GPUKIT_POOL_TRY(GpukitPoolsSupported(dev, &pools));
  return pools ? cudaFreeAsync(p, stream) : cudaFree(p);
}

cudaError_t GpukitPoolTrim(size_t keep, cudaStream_t stream)
{
  cuuint64_t used = 0;

  if (!GpukitPool) return cudaSuccess;
  GPUKIT_POOL_TRY(cudaStreamSynchronize(stream)); /* the frees enqueued on the stream have happened */
  GPUKIT_POOL_TRY(cudaMemPoolGetAttribute(GpukitPool, cudaMemPoolAttrUsedMemCurrent, &used));
  return cudaMemPoolTrimTo(GpukitPool, (size_t)used + keep);
}

cudaError_t GpukitPoolReserved(size_t *bytes)
{
  cuuint64_t r = 0;

  if (!bytes) return cudaErrorInvalidValue;
  *bytes = 0;
  if (!GpukitPool) return cudaSuccess;
  GPUKIT_POOL_TRY(cudaMemPoolGetAttribute(GpukitPool, cudaMemPoolAttrReservedMemCurrent, &r));
  *bytes = (size_t)r;
  return cudaSuccess;
}

cudaError_t GpukitPoolDestroy(void)
{
  cudaError_t err = cudaSuccess;

  if (GpukitPool) err = cudaMemPoolDestroy(GpukitPool); /* memory still allocated from it is released when freed */
  GpukitPool       = nullptr;
  GpukitPoolDevice = -1;
  return err;
}
