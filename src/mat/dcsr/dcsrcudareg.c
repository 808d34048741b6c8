/*
   MATDCSRCUDA on a PETSc that cannot run it (no CUDA, or complex / single precision scalars, or 64-bit PetscInt):
   the type names exist, so that asking for them gives a clear error rather than "unknown type". With a usable CUDA
   PETSc, dcsrcuda.cu registers the real types instead.
*/
#include "dcsrcudaimpl.h"

#if !defined(GPUKIT_DCSRCUDA_AVAILABLE)
static PetscErrorCode MatCreate_DCSRCUDA_Unavailable(Mat A)
{
  PetscFunctionBegin;
  #if defined(GPUKIT_HAVE_CUDA)
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "MATDCSRCUDA needs a PETSc with real double-precision scalars and 32-bit PetscInt; this one has %s %s scalars and %d-bit PetscInt. On the CPU use -mat_type dcsr", PetscDefined(USE_COMPLEX) ? "complex" : "real",
          PetscDefined(USE_REAL_SINGLE) ? "single" : (PetscDefined(USE_REAL_DOUBLE) ? "double" : "other"), (int)(8 * sizeof(PetscInt)));
  #else
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP,
          "MATDCSRCUDA (-mat_type dcsrcuda) needs a PETSc configured with CUDA, and this libpetscgpukit was built against a PETSc without CUDA. Build one with 'make petsc-cuda' (or point PETSC_DIR/PETSC_ARCH at your own CUDA-enabled PETSc) and rebuild gpukit against it; on the CPU use -mat_type dcsr");
  #endif
}

PetscErrorCode MatRegister_DCSRCUDA_Private(void)
{
  PetscFunctionBegin;
  PetscCall(MatRegisterRootName(MATDCSRCUDA, MATSEQDCSRCUDA, MATMPIDCSRCUDA));
  PetscCall(MatRegister(MATDCSRCUDA, MatCreate_DCSRCUDA_Unavailable));
  PetscCall(MatRegister(MATSEQDCSRCUDA, MatCreate_DCSRCUDA_Unavailable));
  PetscCall(MatRegister(MATMPIDCSRCUDA, MatCreate_DCSRCUDA_Unavailable));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
