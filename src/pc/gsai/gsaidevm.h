/*
   PCGSAI's M (general) or G (spd) kept in the device CSR the one-rank device set-up built (gsaidevmcuda.cu), and
   applied from there with cuSPARSE's SpMV: the set-up makes no PETSc Mat. The MATSEQAIJCUSPARSE of M is made only when
   something asks for it (PCGSAIGetMatrix(), PCView() does not), from the same arrays, and kept up to date afterwards.

   Ownership: the object owns every device array it holds (pool memory, src/sys/gpukitpool.h): the structure is either
   copied device to device from the set-up's arrays (GSAIDevMCreate(), the set-up keeps its own) or taken over
   (GSAIDevMCreateTake(), the set-up's pointers are set to NULL). The values are always its own array, written by the
   set-up through GSAIDevMGetValues() on the stream of the current PetscDeviceContext, then GSAIDevMValuesUpdated().
   The transpose (for G^T in the spd apply, and for PCApplyTranspose()) is built on the device once per structure
   (GpukitCSRTransposeCUDA(), with its permutation), then refreshed by a permutation of the values.

   gs->devm (gsaiimpl.h) holds the object; while it is set, gs->M is NULL (the Mat lives in the object). Only the
   one-rank device set-ups use it (gsaicuda.cu, gsaiadaptivecuda.cu); the multi-rank and host set-ups keep gs->M.
*/
#pragma once

#include "gsaiimpl.h"

/* the device apply of M (or G, G^T), its transpose build and the lazy Mat (registered in gsai.c) */
PETSC_INTERN PetscLogEvent PC_GSAI_ApplyCUDA, PC_GSAI_TransposeCUDA, PC_GSAI_MatCUDA;

#if defined(GPUKIT_GSAICUDA_AVAILABLE)
/* an n x n matrix of nnz entries whose structure (ptr: n+1, col: nnz, 32-bit, columns sorted within a row; device) is
   copied; the values are not set yet (GSAIDevMGetValues()) */
PETSC_INTERN PetscErrorCode GSAIDevMCreate(PC, PetscInt, PetscInt, const int *, const int *, void **);
/* the same, taking over *ptr and *col (pool memory, from GpukitPoolMalloc()): they are set to NULL */
PETSC_INTERN PetscErrorCode GSAIDevMCreateTake(PC, PetscInt, PetscInt, int **, int **, void **);
/* the device value array (nnz, CSR order), to be written on the current PetscDeviceContext's stream */
PETSC_INTERN PetscErrorCode GSAIDevMGetValues(void *, double **);
/* after the values were written: the transpose's values (built now, with its structure, when transpose is true and it
   does not exist yet; refreshed when it exists) and the Mat's values (when it was made) follow */
PETSC_INTERN PetscErrorCode GSAIDevMValuesUpdated(void *, PetscBool);
/* y = M x, y = M^T x (CUDA vectors, as MATSEQAIJCUSPARSE wants them; M^T is built at the first call if needed) */
PETSC_INTERN PetscErrorCode GSAIDevMMult(void *, Vec, Vec);
PETSC_INTERN PetscErrorCode GSAIDevMMultTranspose(void *, Vec, Vec);
/* the MATSEQAIJCUSPARSE of M, made at the first call (its structure is copied to the host once), owned by the object */
PETSC_INTERN PetscErrorCode GSAIDevMGetMat(void *, Mat *);
/* the size, the nonzeros, and whether the Mat was made */
PETSC_INTERN PetscErrorCode GSAIDevMGetInfo(void *, PetscInt *, PetscInt *, PetscBool *);
/* a CUDA vector of M's size */
PETSC_INTERN PetscErrorCode GSAIDevMCreateVec(void *, Vec *);
PETSC_INTERN PetscErrorCode GSAIDevMDestroy(void **);
#endif
