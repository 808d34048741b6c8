/*
   MATSEQAIJCUSPARSE from a CSR structure on the device (gpukitaijcuda.h). CUDA builds only.
*/
#include <petscdevice_cuda.h>
#include <petsc/private/petscimpl.h>
#include "gpukitcuda.h"
#include "gpukitaijcuda.h"

PetscErrorCode GpukitMatCreateSeqAIJCUSPARSEFromDeviceCSR(MPI_Comm comm, PetscInt m, PetscInt n, PetscInt nnz, const int *dptr, const int *dcol, const PetscScalar *dval, Mat *M)
{
  void          *block;
  PetscScalar   *ha;
  PetscInt      *hi, *hj;
  PetscContainer c;

  PetscFunctionBegin;
  GpukitAssertPointer(M, 8);
  PetscCheck(sizeof(PetscInt) == sizeof(int), comm, PETSC_ERR_SUP, "A MATSEQAIJCUSPARSE from a device CSR needs 32-bit PetscInt (configure PETSc without --with-64-bit-indices)");
  PetscCheck(m >= 0 && n >= 0 && nnz >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Sizes must be non-negative: m %" PetscInt_FMT ", n %" PetscInt_FMT ", nnz %" PetscInt_FMT, m, n, nnz);
  PetscCheck(dptr && (dcol || !nnz), comm, PETSC_ERR_ARG_NULL, "The device CSR structure (row pointers and, with entries, column indices) is required");
  PetscCall(PetscMalloc((size_t)nnz * sizeof(PetscScalar) + ((size_t)m + 1 + (size_t)nnz) * sizeof(PetscInt), &block));
  ha = (PetscScalar *)block;
  hi = (PetscInt *)(ha + nnz);
  hj = hi + m + 1;
  PetscCallCUDA(cudaMemcpy(hi, dptr, ((size_t)m + 1) * sizeof(PetscInt), cudaMemcpyDeviceToHost));
  if (nnz) PetscCallCUDA(cudaMemcpy(hj, dcol, (size_t)nnz * sizeof(PetscInt), cudaMemcpyDeviceToHost));
  PetscCall(PetscLogGpuToCpu(((size_t)m + 1 + (size_t)nnz) * sizeof(PetscInt)));
  PetscCheck(hi[0] == 0 && hi[m] == nnz, comm, PETSC_ERR_ARG_CORRUPT, "The device row pointers run from %" PetscInt_FMT " to %" PetscInt_FMT ", expected 0 to nnz = %" PetscInt_FMT, hi[0], hi[m], nnz);
  PetscCall(MatCreateSeqAIJWithArrays(comm, m, n, hi, hj, ha, M));
  PetscCall(MatConvert(*M, MATSEQAIJCUSPARSE, MAT_INPLACE_MATRIX, M));
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscContainerSetPointer(c, block));
  PetscCall(GpukitContainerSetFreeDestroy(c));
  PetscCall(PetscObjectCompose((PetscObject)*M, "GpukitHostCSR", (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  if (dval) {
    const PetscInt *mi, *mj;
    PetscScalar    *mv;
    cudaStream_t    stream;

    PetscCall(MatSeqAIJCUSPARSEGetIJ(*M, PETSC_FALSE, &mi, &mj)); /* uploads the structure */
    PetscCall(MatSeqAIJCUSPARSERestoreIJ(*M, PETSC_FALSE, &mi, &mj));
    PetscCall(MatSeqAIJCUSPARSEGetArrayWrite(*M, &mv));
    PetscCall(GpukitCUDAGetStream("GpukitMatCreateSeqAIJCUSPARSEFromDeviceCSR() copies the values", &stream));
    if (nnz) PetscCallCUDA(cudaMemcpyAsync(mv, dval, (size_t)nnz * sizeof(PetscScalar), cudaMemcpyDeviceToDevice, stream));
    PetscCall(MatSeqAIJCUSPARSERestoreArrayWrite(*M, &mv));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
