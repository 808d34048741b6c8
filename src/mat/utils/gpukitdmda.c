/*
   GpukitDMDAUseDeviceInterpolation(): PCMG on a DMDA whose matrices are a gpukit device type interpolates on the
   device (see gpukitdmda.h). PETSc's DMDA builds the interpolation with the coarse DM's matrix type when that type's
   name begins with "aij" (so -dm_mat_type aijcusparse gets MATAIJCUSPARSE, and MAIJ is expanded to it for dof > 1)
   and with MATAIJ otherwise. This file wraps the DMDA's createinterpolation method: while the DMDA's own method
   runs, the coarse DM's matrix type reads MATAIJCUSPARSE, so the result is exactly what PETSc builds for
   -dm_mat_type aijcusparse; the DM's matrix type is restored right after. Coarser DMDAs made by DMCoarsen() (PCMG's
   hierarchy) get the same wrapper through a coarsen hook, which passes itself on to the next level.
*/
#include <petsc/private/dmimpl.h>
#include <petscdmda.h>
#include "gpukitdmda.h"
#include "gpukitcompat.h"

/* the DMDA's own method (the same function for every DMDA), saved the first time a DMDA is wrapped */
static PetscErrorCode (*GpukitDMDACreateInterpolation_Base)(DM, DM, Mat *, Vec *) = NULL;

/* a gpukit device matrix type that DMDA's interpolation would turn into host MATAIJ: a name with "cuda" in it that
   does not begin with "aij", "seqaij" or "mpiaij" (those DMDA keeps as they are) */
static PetscErrorCode GpukitDMDAMatTypeNeedsDevice(MatType type, PetscBool *dev)
{
  PetscBool cuda, aij = PETSC_FALSE, b;
  const char *prefixes[] = {MATAIJ, MATSEQAIJ, MATMPIAIJ};

  PetscFunctionBegin;
  *dev = PETSC_FALSE;
  if (!type) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscStrendswith(type, "cuda", &cuda));
  for (int i = 0; i < 3; i++) {
    PetscCall(PetscStrbeginswith(type, prefixes[i], &b));
    aij = (PetscBool)(aij || b);
  }
  *dev = (PetscBool)(cuda && !aij);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GpukitDMDACreateInterpolation(DM dmc, DM dmf, Mat *mat, Vec *vec)
{
  MatType        type;
  char          *saved = NULL;
  PetscBool      dev;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCheck(GpukitDMDACreateInterpolation_Base, PetscObjectComm((PetscObject)dmc), PETSC_ERR_PLIB, "gpukit: the DMDA interpolation wrapper was installed without the DMDA's own method");
  PetscCall(DMGetMatType(dmc, &type));
  PetscCall(GpukitDMDAMatTypeNeedsDevice(type, &dev));
  if (!dev) {
    PetscCall((*GpukitDMDACreateInterpolation_Base)(dmc, dmf, mat, vec));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscStrallocpy(type, &saved));
  PetscCall(DMSetMatType(dmc, MATAIJCUSPARSE));
  ierr = (*GpukitDMDACreateInterpolation_Base)(dmc, dmf, mat, vec);
  PetscCall(DMSetMatType(dmc, saved)); /* restored whether or not the DMDA's method succeeded */
  PetscCall(PetscFree(saved));
  PetscCall(ierr);
  PetscCall(PetscInfo(dmc, "gpukit: the DMDA interpolation for matrix type %s is %s (on the device)\n", type ? type : "", ((PetscObject)*mat)->type_name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GpukitDMDAWrap(DM da);

static PetscErrorCode GpukitDMDACoarsenHook(DM fine, DM coarse, void *ctx)
{
  PetscFunctionBegin;
  (void)fine;
  (void)ctx;
  PetscCall(GpukitDMDAWrap(coarse));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* wrap da's createinterpolation (once) and pass the wrapper on to every DMDA coarsened from da */
static PetscErrorCode GpukitDMDAWrap(DM da)
{
  PetscBool isda;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)da, DMDA, &isda));
  if (!isda || !da->ops->createinterpolation || da->ops->createinterpolation == GpukitDMDACreateInterpolation) PetscFunctionReturn(PETSC_SUCCESS);
  if (!GpukitDMDACreateInterpolation_Base) GpukitDMDACreateInterpolation_Base = da->ops->createinterpolation;
  if (da->ops->createinterpolation != GpukitDMDACreateInterpolation_Base) { /* the program put its own method there: keep it */
    PetscCall(PetscInfo(da, "gpukit: this DMDA's interpolation is the program's own method; it is left as it is\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  da->ops->createinterpolation = GpukitDMDACreateInterpolation;
  PetscCall(DMCoarsenHookAdd(da, GpukitDMDACoarsenHook, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  GpukitDMDAUseDeviceInterpolation - for a matrix A that DMCreateMatrix() builds on the DMDA da: when A's type is a
  gpukit device type, the multigrid interpolation of da and its coarser DMDAs becomes MATAIJCUSPARSE (see gpukitdmda.h)
*/
PetscErrorCode GpukitDMDAUseDeviceInterpolation(DM da, Mat A)
{
  PetscBool dev, devdm;
  MatType   dmtype;

  PetscFunctionBegin;
  PetscCall(DMGetMatType(da, &dmtype));
  PetscCall(GpukitDMDAMatTypeNeedsDevice(((PetscObject)A)->type_name, &dev));
  PetscCall(GpukitDMDAMatTypeNeedsDevice(dmtype, &devdm));
  if (!dev && !devdm) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GpukitDMDAWrap(da));
  PetscFunctionReturn(PETSC_SUCCESS);
}
