/*
   What the gpukit matrix types do to a DMDA that they are created on (shared by every type that DMCreateMatrix()
   can build on a DMDA).

   GpukitDMDAUseDeviceInterpolation(da, A): when A is a device matrix type whose name does not begin with "aij",
   PETSc's DMDA would build the multigrid interpolation between da and its coarser levels as a host MATAIJ
   (dainterp.c keeps only AIJ-named types), and PCMG would then interpolate and restrict on the host. This makes
   DMCreateInterpolation() on da, and on every DMDA coarsened from it, return MATAIJCUSPARSE instead (the type
   PETSc itself uses for -dm_mat_type aijcusparse), so that PCMG stays on the device. Harmless on host types.
*/
#pragma once

#include <petscdm.h>
#include <petscmat.h>

PETSC_INTERN PetscErrorCode GpukitDMDAUseDeviceInterpolation(DM, Mat);
