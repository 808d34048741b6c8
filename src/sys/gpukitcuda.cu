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
