/*
   Registration of every gpukit type into PETSc, and the library's log events.

   Two entry points run the same code, once per process:
   - PetscDLLibraryRegister_petscgpukit(), which PETSc calls when it loads the library with -dll_append;
   - PetscGPUKitInitialize(), for programs that link the library directly.
*/
#include "gpukitimpl.h"
#include "gpukittune.h"

PetscLogEvent MAT_SGDIA_Mult, MAT_SGDIA_MultTr, MAT_SGDIA_SetValues, MAT_SGDIA_Assembly, MAT_SGDIA_ToAIJ, MAT_SGDIA_FromAIJ, MAT_SGDIA_FDColor, MAT_SGDIA_InvBlkDiag;
PetscLogEvent MAT_SGDIA_CopyToGPU, MAT_SGDIA_CopyFromGPU, MAT_SGDIA_MultCUDA, MAT_SGDIA_MultTrCUDA, MAT_SGDIA_OpsCUDA, MAT_SGDIA_InvBlkDiagCUDA, MAT_SGDIA_COO, MAT_SGDIA_Autotune;

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

  PetscCall(PetscLogEventRegister("SGDIAMult", MAT_CLASSID, &MAT_SGDIA_Mult));
  PetscCall(PetscLogEventRegister("SGDIAMultTr", MAT_CLASSID, &MAT_SGDIA_MultTr));
  PetscCall(PetscLogEventRegister("SGDIASetValues", MAT_CLASSID, &MAT_SGDIA_SetValues));
  PetscCall(PetscLogEventRegister("SGDIAAssembly", MAT_CLASSID, &MAT_SGDIA_Assembly));
  PetscCall(PetscLogEventRegister("SGDIAToAIJ", MAT_CLASSID, &MAT_SGDIA_ToAIJ));
  PetscCall(PetscLogEventRegister("SGDIAFromAIJ", MAT_CLASSID, &MAT_SGDIA_FromAIJ));
  PetscCall(PetscLogEventRegister("SGDIAFDColor", MAT_CLASSID, &MAT_SGDIA_FDColor));
  PetscCall(PetscLogEventRegister("SGDIAInvBlkDiag", MAT_CLASSID, &MAT_SGDIA_InvBlkDiag));
  PetscCall(PetscLogEventRegister("SGDIACopyToGPU", MAT_CLASSID, &MAT_SGDIA_CopyToGPU));
  PetscCall(PetscLogEventRegister("SGDIACopyFromGPU", MAT_CLASSID, &MAT_SGDIA_CopyFromGPU));
  PetscCall(PetscLogEventRegister("SGDIAMultCUDA", MAT_CLASSID, &MAT_SGDIA_MultCUDA));
  PetscCall(PetscLogEventRegister("SGDIAMultTrCUDA", MAT_CLASSID, &MAT_SGDIA_MultTrCUDA));
  PetscCall(PetscLogEventRegister("SGDIAOpsCUDA", MAT_CLASSID, &MAT_SGDIA_OpsCUDA));
  PetscCall(PetscLogEventRegister("SGDIAInvBlkDgCUDA", MAT_CLASSID, &MAT_SGDIA_InvBlkDiagCUDA));
  PetscCall(PetscLogEventRegister("SGDIASetValsCOO", MAT_CLASSID, &MAT_SGDIA_COO));
  PetscCall(PetscLogEventRegister("SGDIAAutotune", MAT_CLASSID, &MAT_SGDIA_Autotune));
  /* PC and KSP events: registered by their own registration functions below */

  PetscCall(MatRegister_SGDIA_Private());
  PetscCall(MatRegister_SGDIACUDA_Private());
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
