/* Helpers shared by gpukit's test programs: comparisons that fail with a clear message. */
#pragma once

#include <petscgpukit.h>
#include <petscdmda.h>
#include <petscversion.h>

#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

/* the function type MatFDColoringSetFunction() takes: MatFDColoringFn from 3.24 on */
#if PETSC_VERSION_LT(3, 24, 0)
  #define GK_FDCOLORING_FN(f) ((PetscErrorCode (*)(void))(f))
#else
  #define GK_FDCOLORING_FN(f) ((MatFDColoringFn *)(f))
#endif

PETSC_EXTERN PetscErrorCode GKCheckVecClose(Vec, Vec, PetscReal, const char *);
PETSC_EXTERN PetscErrorCode GKCheckMatClose(Mat, Mat, PetscReal, const char *);
PETSC_EXTERN PetscErrorCode GKExpectErrorBegin(void);
PETSC_EXTERN PetscErrorCode GKExpectErrorEnd(PetscErrorCode, PetscErrorCode, const char *, const char *);
PETSC_EXTERN PetscErrorCode GKCheck(PetscBool, const char *);
PETSC_EXTERN PetscErrorCode GKPCViewToString(PC, char *, size_t);
PETSC_EXTERN PetscErrorCode GKFillPoisson(DM, Mat);
PETSC_EXTERN PetscErrorCode GKCopyValues(Vec, Vec);
PETSC_EXTERN PetscErrorCode GKToDevice(Vec);
PETSC_EXTERN PetscErrorCode GKRelDiff(Vec, Vec, NormType, PetscReal *);
PETSC_EXTERN PetscErrorCode GKLogEventCount(PetscLogEvent, PetscInt *);
PETSC_EXTERN PetscErrorCode GKMatPowersReference(Mat, Vec, PetscInt, const PetscReal[], const PetscReal[], const PetscReal[], Vec[], Vec[]);
