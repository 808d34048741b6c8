/*
   The host/device twin protocol of gpukit's device matrix types: offload-mask transitions, logged copies, the op list
   that MatBindToCPU() swaps (see gpukittwin.h). No CUDA call here (the type's callbacks move the values), but the
   offload mask exists only in a PETSc with a device, so this is glue: built against a CUDA PETSc only.
*/
#include "gpukittwin.h"

/* the device ops (host = PETSC_FALSE) or the host type's (PETSC_TRUE), and the device-only composed functions */
PetscErrorCode GpukitTwinBind(Mat A, GpukitTwin *tw, PetscBool host)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < tw->nops; i++) {
    const size_t off = tw->ops[i].off;

    *(GpukitTwinFn *)((char *)A->ops + off) = host ? *(GpukitTwinFn *)((char *)&tw->hostops + off) : tw->ops[i].fn;
  }
  for (PetscInt i = 0; i < tw->nmethods; i++) PetscCall(PetscObjectComposeFunction((PetscObject)A, tw->methods[i].name, host ? NULL : tw->methods[i].fn));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the host type -> the device type, in place: host ops saved, device ops installed, VECCUDA vectors, nothing on the device yet */
PetscErrorCode GpukitTwinAttach(Mat A, GpukitTwin *tw)
{
  PetscFunctionBegin;
  PetscCheck(tw->copyup && tw->copydown, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A device twin needs both copies (copyup, copydown)");
  PetscCheck(tw->nmethods >= 0 && tw->nmethods <= GPUKIT_TWIN_MAX_METHODS, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A device twin composes at most %d functions, got %" PetscInt_FMT, GPUKIT_TWIN_MAX_METHODS, tw->nmethods);
  PetscCall(PetscMemcpy(&tw->hostops, A->ops, sizeof(struct _MatOps)));
  for (PetscInt i = 0; i < tw->nmethods; i++) PetscCall(PetscObjectQueryFunction((PetscObject)A, tw->methods[i].name, &tw->hostmethods[i]));
  PetscCall(GpukitTwinBind(A, tw, PETSC_FALSE));
  PetscCall(MatSetVecType(A, VECCUDA));
  A->boundtocpu  = PETSC_FALSE;
  A->offloadmask = PETSC_OFFLOAD_UNALLOCATED;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device type -> the host type, in place: values down, the host ops and composed functions back */
PetscErrorCode GpukitTwinDetach(Mat A, GpukitTwin *tw)
{
  PetscFunctionBegin;
  PetscCall(GpukitTwinCopyFromGPU(A, tw));
  for (PetscInt i = 0; i < tw->nmethods; i++) PetscCall(PetscObjectComposeFunction((PetscObject)A, tw->methods[i].name, tw->hostmethods[i]));
  PetscCall(PetscMemcpy(A->ops, &tw->hostops, sizeof(struct _MatOps)));
  PetscCall(MatSetVecType(A, VECSTANDARD));
  A->boundtocpu  = PETSC_TRUE;
  A->offloadmask = PETSC_OFFLOAD_CPU;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* make the device copy valid: copy the values up when only the host has them (the device storage must exist) */
PetscErrorCode GpukitTwinCopyToGPU(Mat A, GpukitTwin *tw)
{
  PetscLogDouble bytes = 0.0;

  PetscFunctionBegin;
  if (A->offloadmask == PETSC_OFFLOAD_GPU || A->offloadmask == PETSC_OFFLOAD_BOTH) PetscFunctionReturn(PETSC_SUCCESS);
  if (!tw->told && tw->ondevice) {
    PetscCall(PetscInfo(A, "%s: %s\n", ((PetscObject)A)->type_name, tw->ondevice));
    tw->told = PETSC_TRUE;
  }
  PetscCall(PetscLogEventBegin(tw->evup, A, 0, 0, 0));
  PetscCall((*tw->copyup)(A, &bytes));
  PetscCall(PetscLogCpuToGpu(bytes));
  PetscCall(PetscLogEventEnd(tw->evup, A, 0, 0, 0));
  A->offloadmask = PETSC_OFFLOAD_BOTH;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* make the host copy valid: copy the values down when only the device has them */
PetscErrorCode GpukitTwinCopyFromGPU(Mat A, GpukitTwin *tw)
{
  PetscLogDouble bytes = 0.0;

  PetscFunctionBegin;
  if (A->offloadmask != PETSC_OFFLOAD_GPU) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(tw->evdown, A, 0, 0, 0));
  PetscCall((*tw->copydown)(A, &bytes));
  PetscCall(PetscLogGpuToCpu(bytes));
  PetscCall(PetscLogEventEnd(tw->evdown, A, 0, 0, 0));
  A->offloadmask = PETSC_OFFLOAD_BOTH;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* before host code reads (write = PETSC_FALSE) or changes (PETSC_TRUE) the values */
PetscErrorCode GpukitTwinHostAccess(Mat A, GpukitTwin *tw, PetscBool write)
{
  PetscFunctionBegin;
  PetscCall(GpukitTwinCopyFromGPU(A, tw));
  if (write) A->offloadmask = PETSC_OFFLOAD_CPU;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* after a device operation changed the values: the device copy is the only valid one */
PetscErrorCode GpukitTwinDeviceWritten(Mat A)
{
  PetscFunctionBegin;
  A->offloadmask = PETSC_OFFLOAD_GPU;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device storage was (re)allocated for a new layout: whatever it held is gone, the host copy is the valid one */
PetscErrorCode GpukitTwinDeviceLost(Mat A)
{
  PetscFunctionBegin;
  if (A->offloadmask == PETSC_OFFLOAD_GPU || A->offloadmask == PETSC_OFFLOAD_BOTH) A->offloadmask = PETSC_OFFLOAD_CPU;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the line of MatView() ::ascii_info that says where the values are valid */
PetscErrorCode GpukitTwinView(Mat A, PetscViewer viewer)
{
  const char *where;

  PetscFunctionBegin;
  switch (A->offloadmask) {
  case PETSC_OFFLOAD_GPU:
    where = "GPU";
    break;
  case PETSC_OFFLOAD_BOTH:
    where = "GPU and host";
    break;
  case PETSC_OFFLOAD_CPU:
    where = "host";
    break;
  default:
    where = "host (no device copy yet)";
    break;
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "  values valid on: %s\n", where));
  PetscFunctionReturn(PETSC_SUCCESS);
}
