/*
   The matrix powers kernel of MATSEQAIJCUSPARSE (gpukitcsrmpkcuda.cu, CUDA builds only): the contract of
   GpukitMatMatrixPowersFn (gpukitmat.h) by gpukit's fused CSR kernel (gpukitcsrmpkkernels.cu). Solvers get it from
   GpukitMatGetCaps(); the entry points below are for gpukitmat.c and for tests/gpu/cacg_csr_cuda.c, not public API.
*/
#pragma once

#include "gpukitmat.h"

/* the names of its two tuners (threads per row; gpukittune.h), for GpukitTuneFind() on the matrix: stored, lean basis */
#define GPUKIT_CSR_MPK_TUNER      "csr_powers"
#define GPUKIT_CSR_MPK_TUNER_LEAN "csr_powers_lean"

/* the kernel when this build can run it on the device (real double scalars, 32-bit indices), else NULL */
PETSC_INTERN PetscErrorCode GpukitMatGetPowers_SeqAIJCUSPARSE(Mat, GpukitMatMatrixPowersFn *);
/* the kernel itself; its event is CSRMatPowCUDA */
PETSC_EXTERN PetscErrorCode GpukitMatMatrixPowers_SeqAIJCUSPARSE(Mat, Vec, PetscInt, const PetscReal[], const PetscReal[], const PetscReal[], Vec[], Vec[]);
/* threads per row on this matrix: 1, 2, 4, ..., 32, or 0 to choose from the mean row length (the default) */
PETSC_EXTERN PetscErrorCode GpukitCSRMPKSetThreadsPerRow_Private(Mat, PetscInt);
PETSC_EXTERN PetscErrorCode GpukitCSRMPKGetThreadsPerRow_Private(Mat, PetscInt *);
