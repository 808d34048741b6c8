/* Library-private declarations shared by every gpukit type: log events, registration hooks. */
#pragma once

#include <petscgpukit.h>
#include "gpukitcompat.h"

/* Log events: one per kernel or phase, declared in the family's private header and registered by the family's
   registration hook below (names of at most 16 characters) */

PETSC_INTERN PetscErrorCode GpukitInitializePackage(void);

/* one registration function per type family, each called once by GpukitInitializePackage(); the shared Mat layer's
   (src/mat/utils/gpukitmat.c) first */
PETSC_INTERN PetscErrorCode GpukitMatUtilsRegister_Private(void);
PETSC_INTERN PetscErrorCode GpukitAIJOnlyRegister_Private(void); /* src/mat/utils/gpukitaijonly.c: PCML, greedy colouring on gpukit types */
PETSC_INTERN PetscErrorCode MatRegister_SGDIA_Private(void);
PETSC_INTERN PetscErrorCode MatRegister_SGDIACUDA_Private(void);
PETSC_INTERN PetscErrorCode MatRegister_AMB_Private(void);
PETSC_INTERN PetscErrorCode MatRegister_AMBCUDA_Private(void);
PETSC_INTERN PetscErrorCode MatRegister_DCSR_Private(void);
PETSC_INTERN PetscErrorCode MatRegister_DCSRCUDA_Private(void);
/* PCGSAI (issue 6): its registration function here */
PETSC_INTERN PetscErrorCode PCRegister_GSAI_Private(void);
PETSC_INTERN PetscLogEvent  PC_GSAI_SetUp, PC_GSAI_Rows, PC_GSAI_Pattern, PC_GSAI_Solve, PC_GSAI_Assemble, PC_GSAI_PatternCUDA, PC_GSAI_DimsCUDA, PC_GSAI_SolveCUDA, PC_GSAI_AssembleCUDA;
/* KSPCACG (issue 7): its registration function here */
PETSC_INTERN PetscErrorCode KSPRegister_CACG_Private(void);

/* a root type's create function: the Seq type on one rank, the MPI type on more */
PETSC_INTERN PetscErrorCode GpukitMatSetTypeBySize_Private(Mat, MatType, MatType);

/* true when this PETSc was configured with CUDA and gpukit was built with its CUDA sources */
PETSC_INTERN PetscBool GpukitHaveCUDA(void);
