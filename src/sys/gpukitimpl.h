/* Library-private declarations shared by every gpukit type: log events, registration hooks. */
#pragma once

#include <petscgpukit.h>
#include "gpukitcompat.h"

/* log events, one per kernel or phase; registered once by GpukitInitializePackage() */
PETSC_INTERN PetscLogEvent MAT_SGDIA_Mult, MAT_SGDIA_MultTr, MAT_SGDIA_SetValues, MAT_SGDIA_Assembly, MAT_SGDIA_ToAIJ, MAT_SGDIA_FromAIJ, MAT_SGDIA_FDColor, MAT_SGDIA_InvBlkDiag;
PETSC_INTERN PetscLogEvent MAT_SGDIA_CopyToGPU, MAT_SGDIA_CopyFromGPU, MAT_SGDIA_MultCUDA, MAT_SGDIA_MultTrCUDA, MAT_SGDIA_OpsCUDA, MAT_SGDIA_InvBlkDiagCUDA, MAT_SGDIA_COO, MAT_SGDIA_Autotune;

PETSC_INTERN PetscErrorCode GpukitInitializePackage(void);

/* one registration function per type family, each called once by GpukitInitializePackage() */
PETSC_INTERN PetscErrorCode MatRegister_SGDIA_Private(void);
PETSC_INTERN PetscErrorCode MatRegister_SGDIACUDA_Private(void);
/* PCGSAI (issue 6): its registration function here */
PETSC_INTERN PetscErrorCode PCRegister_GSAI_Private(void);
PETSC_INTERN PetscLogEvent  PC_GSAI_SetUp, PC_GSAI_Rows, PC_GSAI_Pattern, PC_GSAI_Solve, PC_GSAI_Assemble, PC_GSAI_PatternCUDA, PC_GSAI_DimsCUDA, PC_GSAI_SolveCUDA, PC_GSAI_AssembleCUDA;
/* KSPCACG (issue 7): its registration function here */
PETSC_INTERN PetscErrorCode KSPRegister_CACG_Private(void);

/* a root type's create function: the Seq type on one rank, the MPI type on more */
PETSC_INTERN PetscErrorCode GpukitMatSetTypeBySize_Private(Mat, MatType, MatType);

/* true when this PETSc was configured with CUDA and gpukit was built with its CUDA sources */
PETSC_INTERN PetscBool GpukitHaveCUDA(void);
