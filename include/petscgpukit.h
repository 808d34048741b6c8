/*
   gpukit: GPU-oriented matrix, preconditioner and Krylov types for PETSc, loaded as a plugin.

   A PETSc program picks the types up at run time with
     -dll_append <prefix>/lib/libpetscgpukit.so -dm_mat_type sgdia ...
   or links the library and calls PetscGPUKitInitialize() after PetscInitialize().
*/
#pragma once

#include <petscmat.h>
#include <petscksp.h>

/* SETERRQ-style version of the library */
#define GPUKIT_VERSION_MAJOR 0
#define GPUKIT_VERSION_MINOR 1

/*MC
   MATSGDIA - "sgdia" - structured-grid diagonal storage for operators built on a `DMDA`.

   For a DMDA with a k-point stencil and d degrees of freedom per grid point, the matrix stores one dense
   d x d block per stencil point per owned grid point, as k*d columns of length (owned points * d),
   column-major, with no column indices. The matrix sizes itself from the `DMDA` attached with `MatSetDM()`
   (as `DMCreateMatrix()` does), so stock programs use it with `-dm_mat_type sgdia`.

   It resolves to `MATSEQSGDIA` on one MPI rank and `MATMPISGDIA` on more.

   Options Database Keys:
.  -mat_sgdia_drop_outside_stencil - drop (and count, see `-info`) entries outside the stencil instead of raising an error

   Level: beginner

.seealso: `MATSEQSGDIA`, `MATMPISGDIA`, `MATSGDIACUDA`, `DMCreateMatrix()`, `MatSetDM()`
M*/
#define MATSGDIA    "sgdia"
#define MATSEQSGDIA "seqsgdia"
#define MATMPISGDIA "mpisgdia"

/*MC
   MATSGDIACUDA - "sgdiacuda" - `MATSGDIA` with its values and kernels on an NVIDIA GPU.

   Requires a PETSc configured with CUDA (see `make petsc-cuda`). Use with `-dm_vec_type cuda`.

   Level: beginner

.seealso: `MATSGDIA`
M*/
#define MATSGDIACUDA    "sgdiacuda"
#define MATSEQSGDIACUDA "seqsgdiacuda"
#define MATMPISGDIACUDA "mpisgdiacuda"

/* Types named by the project plan; each is registered once its implementation exists. */
#define MATAMB     "amb"
#define MATAMBCUDA "ambcuda"
#define MATDCSR    "dcsr"
#define PCGSAI     "gsai"
#define KSPCACG    "cacg"

PETSC_EXTERN PetscErrorCode PetscGPUKitInitialize(void);
PETSC_EXTERN PetscErrorCode PetscGPUKitGetVersion(PetscInt *, PetscInt *);

PETSC_EXTERN PetscErrorCode MatCreateSGDIA(DM, Mat *);
PETSC_EXTERN PetscErrorCode MatSGDIASetDropOutsideStencil(Mat, PetscBool);
PETSC_EXTERN PetscErrorCode MatSGDIAGetArray(Mat, PetscScalar **);
PETSC_EXTERN PetscErrorCode MatSGDIARestoreArray(Mat, PetscScalar **);
PETSC_EXTERN PetscErrorCode MatSGDIAGetStencil(Mat, PetscInt *, PetscInt *, const PetscInt **);

/* MATSGDIACUDA device assembly: the SG-DIA array on the device, same layout as MatSGDIAGetArray() */
PETSC_EXTERN PetscErrorCode MatSGDIAGetArrayCUDA(Mat, PetscScalar **);
PETSC_EXTERN PetscErrorCode MatSGDIARestoreArrayCUDA(Mat, PetscScalar **);
PETSC_EXTERN PetscErrorCode MatSGDIAGetArrayReadCUDA(Mat, const PetscScalar **);
PETSC_EXTERN PetscErrorCode MatSGDIARestoreArrayReadCUDA(Mat, const PetscScalar **);
PETSC_EXTERN PetscErrorCode MatSGDIAGetArrayWriteCUDA(Mat, PetscScalar **);
PETSC_EXTERN PetscErrorCode MatSGDIARestoreArrayWriteCUDA(Mat, PetscScalar **);

/* PCGSAI (issue 6): public functions here */

/* KSPCACG (issue 7): public functions here */
