/*
   What gpukit serves itself for PETSc's MATSEQAIJCUSPARSE (gpukitmat.h): its device CSR and its matrix powers kernel.
   CUDA builds only.
*/
#include <petscdevice_cuda.h>
#include "gpukitcuda.h"
#include "gpukitmat.h"

PETSC_INTERN PetscErrorCode GpukitMatGetDeviceCSR_SeqAIJCUSPARSE(Mat A, GpukitDeviceCSR *csr)
{
  const int         *ai, *aj;
  const PetscScalar *aa;
  PetscInt           m, n;

  PetscFunctionBegin;
  PetscCheck(sizeof(PetscInt) == sizeof(int), PETSC_COMM_SELF, PETSC_ERR_SUP, "A device CSR needs 32-bit PetscInt");
  PetscCall(MatGetLocalSize(A, &m, &n));
  PetscCall(MatSeqAIJCUSPARSEGetIJ(A, PETSC_FALSE, &ai, &aj));
  PetscCall(MatSeqAIJCUSPARSEGetArrayRead(A, &aa));
  csr->m      = m;
  csr->n      = n;
  csr->nnz    = 0;
  csr->rowptr = ai;
  csr->colidx = aj;
  csr->val    = aa;
  {
    MatInfo info; /* the host's count: no device read */
    PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
    csr->nnz = (PetscInt)info.nz_used;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode GpukitMatRestoreDeviceCSR_SeqAIJCUSPARSE(Mat A, GpukitDeviceCSR *csr)
{
  const int         *ai = csr->rowptr, *aj = csr->colidx;
  const PetscScalar *aa = csr->val;

  PetscFunctionBegin;
  if (aa) PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(A, &aa));
  if (ai) PetscCall(MatSeqAIJCUSPARSERestoreIJ(A, PETSC_FALSE, &ai, &aj));
  PetscFunctionReturn(PETSC_SUCCESS);
}
