/*
   PCGSAI's M (general) or G (spd) kept in the device CSR the device set-up built (gsaidevmcuda.cu), and applied from
   there with cuSPARSE's SpMV: the set-up makes no PETSc Mat. The MATSEQAIJCUSPARSE of M (several ranks:
   MATMPIAIJCUSPARSE) is made only when something asks for it (PCGSAIGetMatrix(), PCView() does not), from the same
   arrays, and kept up to date afterwards.

   Several ranks (GSAIDevMCreateMPITake()): the local rows as MATMPIAIJ splits them, a diagonal block over the local
   columns and an off-diagonal block over the ghost columns (compact numbers 0 .. ng-1 of garray[], global and
   ascending); the ghost values travel by a VecScatter (device buffers; staged through the host without a CUDA-aware
   MPI), overlapped with the diagonal block's product.

   Ownership: the object owns every device array it holds (pool memory, src/sys/gpukitpool.h): the structure is either
   copied device to device from the set-up's arrays (GSAIDevMCreate(), the set-up keeps its own) or taken over
   (GSAIDevMCreateTake(), the set-up's pointers are set to NULL). The values are always its own array, written by the
   set-up through GSAIDevMGetValues() on the stream of the current PetscDeviceContext, then GSAIDevMValuesUpdated().
   The transpose (for G^T in the spd apply, and for PCApplyTranspose()) is built on the device once per structure
   (GpukitCSRTransposeCUDA(), with its permutation), then refreshed by a permutation of the values.

   gs->devm (gsaiimpl.h) holds the object; while it is set, gs->M is NULL (the Mat lives in the object). The device
   set-ups use it (gsaicuda.cu, gsaiadaptivecuda.cu), except on several ranks for the right-side M = N^T (whose entries
   belong to other ranks' rows: MATMPIAIJCUSPARSE through COO); the host set-ups keep gs->M.
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
/* several ranks: M's local rows, the diagonal block (nnz entries, local columns) and the off-diagonal block (onnz
   entries, columns 0 .. ng-1 numbering the ghost columns garray[], global and ascending), rows of A's local size, all
   taken over (the device arrays pool memory, garray PetscMalloc()ed; all set to NULL). Collective (the ghost scatter) */
PETSC_INTERN PetscErrorCode GSAIDevMCreateMPITake(PC, Mat, PetscInt, int **, int **, PetscInt, int **, int **, PetscInt, PetscInt **, void **);
/* the device value array (nnz, CSR order; several ranks: the diagonal block's nnz, then the off-diagonal block's), to be written on the current PetscDeviceContext's stream */
PETSC_INTERN PetscErrorCode GSAIDevMGetValues(void *, double **);
/* after the values were written: the transpose's values (built now, with its structure, when transpose is true and it
   does not exist yet; refreshed when it exists) and the Mat's values (when it was made) follow */
PETSC_INTERN PetscErrorCode GSAIDevMValuesUpdated(void *, PetscBool);
/* y = M x, y = M^T x (CUDA vectors, as MATSEQAIJCUSPARSE wants them; M^T is built at the first call if needed) */
PETSC_INTERN PetscErrorCode GSAIDevMMult(void *, Vec, Vec);
PETSC_INTERN PetscErrorCode GSAIDevMMultTranspose(void *, Vec, Vec);
/* the MATSEQAIJCUSPARSE (several ranks: MATMPIAIJCUSPARSE) of M, made at the first call (its structure is copied to
   the host once), owned by the object */
PETSC_INTERN PetscErrorCode GSAIDevMGetMat(void *, Mat *);
/* the (local) size, the (local) nonzeros, and whether the Mat was made */
PETSC_INTERN PetscErrorCode GSAIDevMGetInfo(void *, PetscInt *, PetscInt *, PetscBool *);
/* a CUDA vector of M's size (several ranks: its layout) */
PETSC_INTERN PetscErrorCode GSAIDevMCreateVec(void *, Vec *);
PETSC_INTERN PetscErrorCode GSAIDevMDestroy(void **);
#endif
