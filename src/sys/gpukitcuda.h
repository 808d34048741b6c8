/* CUDA helpers shared by the PETSc/CUDA glue of every gpukit type (gpukitcuda.cu); include from .cu files only */
#pragma once

#include <cuda_runtime.h>
#include "gpukitimpl.h"

PETSC_INTERN PetscErrorCode GpukitCUDAGetStream(const char[], cudaStream_t *);
