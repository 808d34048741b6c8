/*
   CUDA helpers shared by every gpukit type's PETSc/CUDA glue. Built only against a PETSc with CUDA.
*/
#include <petscdevice_cuda.h>
#include "gpukitcuda.h"

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
