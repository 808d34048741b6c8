/*
   MATMPISGDIACUDA's product with the halo exchange overlapped (sgdiahalocuda.cu). Include from .cu files only.

   SGDIACUDAHaloMult_Private(A, &h, x, y, z, variant, block, &done): z = A x (y NULL) or z = y + A x on more than one
   rank: the ghost points are scattered while the rows whose stencil stays in the owned box are computed from x, then
   the other rows; done is false (nothing computed) on one rank or with -mat_sgdia_overlap 0. h is the matrix's
   (made at the first call for its layout; SGDIACUDAHaloDestroy_Private() frees it).
*/
#pragma once

#include <petscmat.h>

typedef struct _n_SGDIAHaloCUDA *SGDIAHaloCUDA; /* also Mat_SGDIACUDA's halo */

PETSC_INTERN PetscErrorCode SGDIACUDAHaloMult_Private(Mat, SGDIAHaloCUDA *, Vec, Vec, Vec, PetscInt, PetscInt, PetscBool *);
PETSC_INTERN PetscErrorCode SGDIACUDAHaloDestroy_Private(SGDIAHaloCUDA *);
