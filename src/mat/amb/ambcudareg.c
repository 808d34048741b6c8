/*
   MATAMBCUDA on a PETSc without CUDA: the type names (and their aliases) exist, so that asking for them gives an error
   that says what to do rather than "unknown type". With CUDA, ambcuda.cu registers the real types instead.
*/
#include "ambimpl.h"

#if !defined(GPUKIT_HAVE_CUDA)
static PetscErrorCode MatCreate_AMBCUDA_NoCUDA(Mat A)
{
  PetscFunctionBegin;
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP,
          "MATAMBCUDA (%s) needs a PETSc configured with CUDA, and this libpetscgpukit was built against a PETSc without CUDA. Build one with 'make petsc-cuda' (or point PETSC_DIR/PETSC_ARCH at your own CUDA-enabled PETSc), rebuild gpukit against it and use CUDA vectors (-vec_type cuda); on the CPU use -mat_type amb",
          ((PetscObject)A)->type_name ? ((PetscObject)A)->type_name : "ambcuda");
}

PetscErrorCode MatRegister_AMBCUDA_Private(void)
{
  PetscFunctionBegin;
  PetscCall(MatRegisterRootName(MATAMBCUDA, MATSEQAMBCUDA, MATMPIAMBCUDA));
  PetscCall(MatRegister(MATAMBCUDA, MatCreate_AMBCUDA_NoCUDA));
  PetscCall(MatRegister(MATSEQAMBCUDA, MatCreate_AMBCUDA_NoCUDA));
  PetscCall(MatRegister(MATMPIAMBCUDA, MatCreate_AMBCUDA_NoCUDA));
  PetscCall(MatRegister("seqambcuda", MatCreate_AMBCUDA_NoCUDA));
  PetscCall(MatRegister("mpiambcuda", MatCreate_AMBCUDA_NoCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
