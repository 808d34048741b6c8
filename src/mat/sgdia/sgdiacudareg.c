/*
   MATSGDIACUDA on a PETSc without CUDA: the type names exist, so that asking for them gives a clear error
   rather than "unknown type". With CUDA, sgdiacuda.cu registers the real types instead.
*/
#include "sgdiaimpl.h"

#if !defined(GPUKIT_SGDIACUDA_AVAILABLE)
static PetscErrorCode MatCreate_SGDIACUDA_NoCUDA(Mat A)
{
  PetscFunctionBegin;
#if defined(GPUKIT_HAVE_CUDA)
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "MATSGDIACUDA needs a PETSc with real double-precision scalars; this one has %s %s. On the CPU use -dm_mat_type sgdia", PetscDefined(USE_COMPLEX) ? "complex" : "real", PetscDefined(USE_REAL_SINGLE) ? "single" : (PetscDefined(USE_REAL_DOUBLE) ? "double" : "other"));
#else
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP,
          "MATSGDIACUDA needs a PETSc configured with CUDA, and this libpetscgpukit was built against a PETSc without CUDA. Build one with 'make petsc-cuda' (or point PETSC_DIR/PETSC_ARCH at your own CUDA-enabled PETSc), rebuild gpukit against it, and use it with -dm_vec_type cuda; on the CPU use -dm_mat_type sgdia");
#endif
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
  return PETSC_FALSE; /* no usable MATSGDIACUDA in this build */
}
#endif
