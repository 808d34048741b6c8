/*
   MATSEQAIJCUSPARSE from data already on the device (gpukitaijcuda.cu), for any type or solver that builds a CSR
   matrix on the device (PCGSAI's M, and the planned general-sparse types). CUDA builds only.
*/
#pragma once

#include <petscmat.h>
#include "gpukitimpl.h"

/*
   A MATSEQAIJCUSPARSE of m x n with nnz entries whose CSR structure (dptr: m+1, dcol: nnz; 32-bit indices, columns
   sorted within a row) is on the device, without a COO pass (MatSetPreallocationCOO() analyses the indices on the
   host). The structure is copied to the host once, into one block that holds M's host value array, row pointers and
   column indices (MatCreateSeqAIJWithArrays() borrows them; a container composed on M frees the block with M), and M
   is converted in place. dval (device, nnz values, or NULL):
     - given: M's structure is uploaded and the values copied into M's device value array (device to device); the
       device copy is then the valid one (PETSc copies it back to the host whenever the host values are read).
     - NULL: M's values are not initialised. The caller writes them with MatSeqAIJCUSPARSEGetArrayWrite(); to choose
       when the structure is uploaded (it costs a host-to-device copy), call MatSeqAIJCUSPARSEGetIJ() and
       MatSeqAIJCUSPARSERestoreIJ() first, e.g. while other work runs on the device.
   The structure's device arrays are only read; the copy synchronises with the device.
*/
PETSC_INTERN PetscErrorCode GpukitMatCreateSeqAIJCUSPARSEFromDeviceCSR(MPI_Comm, PetscInt, PetscInt, PetscInt, const int *, const int *, const PetscScalar *, Mat *);
