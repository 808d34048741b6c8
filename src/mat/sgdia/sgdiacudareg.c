/*
   MATSGDIACUDA on a PETSc without CUDA: the type names exist, so that asking for them gives a clear error
   rather than "unknown type". With CUDA, sgdiacuda.cu registers the real types instead.
*/
#include "sgdiaimpl.h"

#if !defined(GPUKIT_HAVE_CUDA)
static PetscErrorCode MatCreate_SGDIACUDA_NoCUDA(Mat A)
{
  PetscFunctionBegin;
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP,
          "MATSGDIACUDA needs a PETSc configured with CUDA, and this libpetscgpukit was built against a PETSc without CUDA. Build one with 'make petsc-cuda' (or point PETSC_DIR/PETSC_ARCH at your own CUDA-enabled PETSc), rebuild gpukit against it, and use it with -dm_vec_type cuda; on the CPU use -dm_mat_type sgdia");
}

PetscErrorCode MatRegister_SGDIACUDA_Private(void)
{
  PetscFunctionBegin;
  PetscCall(MatRegisterRootName(MATSGDIACUDA, MATSEQSGDIACUDA, MATMPISGDIACUDA));
  PetscCall(MatRegister(MATSGDIACUDA, MatCreate_SGDIACUDA_NoCUDA));
  PetscCall(MatRegister(MATSEQSGDIACUDA, MatCreate_SGDIACUDA_NoCUDA));
  PetscCall(MatRegister(MATMPISGDIACUDA, MatCreate_SGDIACUDA_NoCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool GpukitHaveCUDA(void)
{
  return PETSC_FALSE;
}
#endif
