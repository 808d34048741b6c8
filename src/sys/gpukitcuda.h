/* CUDA helpers shared by the PETSc/CUDA glue of every gpukit type (gpukitcuda.cu); include from .cu files only */
#pragma once

#include <cuda_runtime.h>
#include "gpukitimpl.h"

PETSC_INTERN PetscErrorCode GpukitCUDAGetStream(const char[], cudaStream_t *);

/* the device arrays (VecCUDAGetArrayRead()) of the vectors one kernel launch reads, each vector got once however
   often it is asked for (a matrix powers step may read V[j] == W[j]); GpukitCUDAReadsRestore() gives them all back */
#define GPUKIT_CUDA_READS_MAX 6
typedef struct {
  PetscInt           n;
  Vec                v[GPUKIT_CUDA_READS_MAX];
  const PetscScalar *a[GPUKIT_CUDA_READS_MAX];
} GpukitCUDAReads;

PETSC_INTERN PetscErrorCode GpukitCUDAReadsGet(GpukitCUDAReads *, Vec, const PetscScalar **);
PETSC_INTERN PetscErrorCode GpukitCUDAReadsRestore(GpukitCUDAReads *);
