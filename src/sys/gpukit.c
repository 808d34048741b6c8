/*
   Registration of every gpukit type into PETSc: the package's one entry point, calling each family's registration
   hook (which registers the family's types and its log events).

   Two entry points run the same code, once per process:
   - PetscDLLibraryRegister_petscgpukit(), which PETSc calls when it loads the library with -dll_append;
   - PetscGPUKitInitialize(), for programs that link the library directly.
*/
#include "gpukitimpl.h"
#include "gpukittune.h"

static PetscBool GpukitPackageInitialized = PETSC_FALSE;

static PetscErrorCode GpukitFinalizePackage(void)
{
  PetscFunctionBegin;
  GpukitPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GpukitInitializePackage(void)
{
  PetscFunctionBegin;
  if (GpukitPackageInitialized) PetscFunctionReturn(PETSC_SUCCESS);
  GpukitPackageInitialized = PETSC_TRUE;
  PetscCall(MatInitializePackage());
  PetscCall(PCInitializePackage());
  PetscCall(KSPInitializePackage());


  /* one registration hook per type family (and one for the shared Mat layer); each registers its own log events */
  PetscCall(GpukitMatUtilsRegister_Private());
  PetscCall(GpukitAIJOnlyRegister_Private());
  PetscCall(MatRegister_SGDIA_Private());
  PetscCall(MatRegister_SGDIACUDA_Private());
#if !defined(GPUKIT_WITHOUT_AMB) /* only for building one family while another is being written (makefile SRC_EXCLUDE) */
  PetscCall(MatRegister_AMB_Private());
  #if !defined(GPUKIT_WITHOUT_AMBCUDA)
  PetscCall(MatRegister_AMBCUDA_Private());
  #endif
#endif
#if !defined(GPUKIT_WITHOUT_DCSR)
  PetscCall(MatRegister_DCSR_Private());
  #if !defined(GPUKIT_WITHOUT_DCSRCUDA)
  PetscCall(MatRegister_DCSRCUDA_Private());
  #endif
#endif
  /* PCGSAI (issue 6) registers here */
  PetscCall(PCRegister_GSAI_Private());
  /* KSPCACG (issue 7) registers here */
  PetscCall(KSPRegister_CACG_Private());
  PetscCall(GpukitTuneInitialize());
  PetscCall(PetscRegisterFinalize(GpukitFinalizePackage));
  PetscCall(PetscInfo(NULL, "gpukit %d.%d registered its types (CUDA: %s)\n", GPUKIT_VERSION_MAJOR, GPUKIT_VERSION_MINOR, GpukitHaveCUDA() ? "yes" : "no"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GpukitMatSetTypeBySize_Private(Mat A, MatType seq, MatType mpi)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(MatSetType(A, size == 1 ? seq : mpi));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  PetscGPUKitInitialize - Registers every gpukit type (`MATSGDIA`, ...) with PETSc

  Not Collective

  Level: beginner

  Notes:
  Call it after `PetscInitialize()` in a program that links libpetscgpukit directly. A program that loads
  the library with `-dll_append <path>/libpetscgpukit.so` needs no call. Calling it more than once is harmless.

.seealso: `MATSGDIA`, `PetscGPUKitGetVersion()`
@*/
PetscErrorCode PetscGPUKitInitialize(void)
{
  PetscFunctionBegin;
  PetscCall(GpukitInitializePackage());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PetscGPUKitGetVersion - Returns the version of the gpukit library

  Not Collective

  Output Parameters:
+ major - the major version (or `NULL`)
- minor - the minor version (or `NULL`)

  Level: beginner

.seealso: `PetscGPUKitInitialize()`
@*/
PetscErrorCode PetscGPUKitGetVersion(PetscInt *major, PetscInt *minor)
{
  PetscFunctionBegin;
  if (major) *major = GPUKIT_VERSION_MAJOR;
  if (minor) *minor = GPUKIT_VERSION_MINOR;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Called by PETSc when the library is loaded with -dll_append / -dll_prepend */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_petscgpukit(void)
{
  PetscFunctionBegin;
  PetscCall(GpukitInitializePackage());
  PetscFunctionReturn(PETSC_SUCCESS);
}
