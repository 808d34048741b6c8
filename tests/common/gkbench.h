/* Helpers shared by gpukit's benchmark programs (tests/common/gkbench.c). */
#pragma once

#include <petscsys.h>
#include <petscdm.h>
#include <petscmat.h>
#include <petscversion.h>

#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

/* device timing needs a PETSc with CUDA and the PetscDevice API (3.19 on) */
#if PetscDefined(HAVE_CUDA) && PETSC_VERSION_GE(3, 19, 0)
  #define GK_BENCH_CUDA 1
#endif

PETSC_EXTERN PetscErrorCode GKDeviceSynchronize(PetscBool);
PETSC_EXTERN PetscErrorCode GKDeviceName(char *, size_t);
PETSC_EXTERN PetscErrorCode GKDeviceCOOCopy(PetscCount, const PetscInt[], const PetscInt[], const PetscScalar[], PetscInt **, PetscInt **, PetscScalar **);
PETSC_EXTERN PetscErrorCode GKDeviceCOOFree(PetscInt **, PetscInt **, PetscScalar **);
PETSC_EXTERN PetscErrorCode GKJSONString(FILE *, const char *, const char *, PetscBool);
PETSC_EXTERN PetscErrorCode GKJSONRunInfo(FILE *, const char *, const char *, const char *);
PETSC_EXTERN PetscErrorCode GKFillStencil(DM, Mat);
