/*
   The host/device twin protocol, shared by gpukit's device matrix types (gpukittwin.cu; CUDA builds only).

   A device type is its host type plus a device mirror of the values: the same Mat, converted in place. The twin keeps
   the two copies honest, as PETSc's own GPU types do, through A->offloadmask:
   - host code that reads the values calls GpukitTwinHostAccess(write = PETSC_FALSE) first, which copies them down when
     only the device has them; host code that changes them calls it with PETSC_TRUE, which also leaves the host copy as
     the only valid one;
   - device code calls GpukitTwinCopyToGPU() first, which copies the values up when only the host has them; a device
     operation that changes them calls GpukitTwinDeviceWritten() afterwards: the device copy is then the only valid one;
   - each copy is logged in its event (evup, evdown) and in -log_view's CpuToGpu/GpuToCpu columns, and the first upload
     says through -info what runs on the device.
   The type supplies the two copies (copyup, copydown: synchronous, every value, returning the bytes moved) and ONE list
   of the ops it runs on the device (GPUKIT_TWIN_OP) plus the functions it composes only on the device (a
   GpukitTwinMethod list, e.g. "MatSetValuesCOO_C"). GpukitTwinBind() installs them, or puts the host type's back for
   MatBindToCPU(): one list for both directions, so they cannot drift apart.

   Life cycle, in the type's in-place converts:
     to the device type:   fill the GpukitTwin (callbacks, lists, events), GpukitTwinAttach(A, twin) (saves the host
                           ops, installs the device ops, VECCUDA vectors, offload mask unallocated), then set the ops
                           that are the device type's own in both states (bindtocpu, setfromoptions, destroy, ...);
     back to the host type: GpukitTwinDetach(A, twin) (copies the values down, puts the host ops and the host's composed
                           functions back, standard vectors).
*/
#pragma once

#include <stddef.h>
#include <petsc/private/matimpl.h>
#include "gpukitimpl.h"

typedef void (*GpukitTwinFn)(void);

/* an entry of struct _MatOps and the device type's function for it */
typedef struct {
  size_t       off;
  GpukitTwinFn fn;
} GpukitTwinOp;
#define GPUKIT_TWIN_OP(field, fn) {offsetof(struct _MatOps, field), (GpukitTwinFn)(fn)}

/* a function the device type composes while it runs on the device (removed while bound to the CPU) */
typedef struct {
  const char  *name;
  GpukitTwinFn fn;
} GpukitTwinMethod;
#define GPUKIT_TWIN_METHOD(name, fn) {name, (GpukitTwinFn)(fn)}

#define GPUKIT_TWIN_MAX_METHODS 8

typedef struct {
  /* set by the type before GpukitTwinAttach() */
  PetscErrorCode (*copyup)(Mat, PetscLogDouble *);   /* every value host -> device, done when it returns; bytes moved */
  PetscErrorCode (*copydown)(Mat, PetscLogDouble *); /* every value device -> host, done when it returns; bytes moved */
  PetscLogEvent           evup, evdown;             /* logged around the copies */
  const GpukitTwinOp     *ops;                      /* the device ops */
  PetscInt                nops;
  const GpukitTwinMethod *methods;                  /* the device-only composed functions, at most GPUKIT_TWIN_MAX_METHODS */
  PetscInt                nmethods;
  const char             *ondevice;                 /* for -info at the first upload: what runs on the device */

  /* kept by the twin */
  struct _MatOps hostops;                                 /* the host type's ops */
  GpukitTwinFn   hostmethods[GPUKIT_TWIN_MAX_METHODS];    /* what the host type composed under the same names */
  PetscBool      told;
} GpukitTwin;

PETSC_INTERN PetscErrorCode GpukitTwinAttach(Mat, GpukitTwin *);
PETSC_INTERN PetscErrorCode GpukitTwinDetach(Mat, GpukitTwin *);
PETSC_INTERN PetscErrorCode GpukitTwinBind(Mat, GpukitTwin *, PetscBool);
PETSC_INTERN PetscErrorCode GpukitTwinCopyToGPU(Mat, GpukitTwin *);
PETSC_INTERN PetscErrorCode GpukitTwinCopyFromGPU(Mat, GpukitTwin *);
PETSC_INTERN PetscErrorCode GpukitTwinHostAccess(Mat, GpukitTwin *, PetscBool);
PETSC_INTERN PetscErrorCode GpukitTwinDeviceWritten(Mat);
PETSC_INTERN PetscErrorCode GpukitTwinDeviceLost(Mat);
PETSC_INTERN PetscErrorCode GpukitTwinView(Mat, PetscViewer);
