/*
   COO assembly on the device, shared by gpukit's device matrix types (gpukitcoocuda.cu; CUDA builds only).

   A type that keeps its values in one device array composes "MatSetPreallocationCOO_C" and "MatSetValuesCOO_C" and
   hands the work to this helper. The only thing the helper asks of the type is where entry (i, j) lives: a slot
   lookup, slot(A, i, j, &s), called on the host for every entry of a locally owned row i (the entries of other ranks'
   rows are sent to their owners first, and looked up there), that gives the position s of the entry in the type's
   value array, or s < 0 to drop the entry; it raises the type's error for an entry that the type cannot store.

     GpukitCOOCreate()     at MatSetPreallocationCOO(): checks the indices, sends other ranks' entries to their
                           owners (one MPI_Alltoall and one MPI_Alltoallv), looks every local entry up, groups the
                           entries by slot (stable: within a slot, local entries in their order, then received ones
                           by rank and order, so the sums do not depend on the run), uploads that map once and builds
                           a PetscSF from the entries for other ranks' rows to their owners;
     GpukitCOOSetValues()  at MatSetValuesCOO(): values on the host (one upload) or the device; those for other ranks'
                           rows go to their owners through the PetscSF on device buffers; then one kernel sums the
                           entries of each slot into the value array. INSERT_VALUES first zeroes the whole array: the
                           values that no entry names become zero.

   Negative indices are ignored, as PETSc's COO does. The helper knows nothing of the type's storage; the type logs its
   own event around the calls and manages its offload mask (the value array must be valid on the device for
   ADD_VALUES, and is the only valid copy afterwards).
*/
#pragma once

#include <petscmat.h>
#include "gpukitimpl.h"

typedef struct _n_GpukitCOO *GpukitCOO;

/* where entry (i, j) of a locally owned row i lives in the type's value array, or *slot < 0 to drop it */
typedef PetscErrorCode (*GpukitCOOSlotFn)(Mat, PetscInt, PetscInt, PetscCount *);

PETSC_INTERN PetscErrorCode GpukitCOOCreate(Mat, PetscCount, const PetscInt[], const PetscInt[], GpukitCOOSlotFn, PetscBool, GpukitCOO *);
PETSC_INTERN PetscErrorCode GpukitCOOSetValues(GpukitCOO, const PetscScalar[], InsertMode, PetscScalar *, PetscCount, int);
PETSC_INTERN PetscErrorCode GpukitCOOGetSizes(GpukitCOO, PetscCount *, PetscCount *, PetscCount *);
PETSC_INTERN PetscErrorCode GpukitCOODestroy(GpukitCOO *);
