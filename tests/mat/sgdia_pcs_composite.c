static const char help[] = "MATSGDIA under a DMComposite: the matrix that is not a DMDA's gives a clear error (issue 16).\n";

/*
   DMCreateMatrix() of a DMComposite (a DMDA and a DMRedundant) whose matrix type is sgdia builds one matrix for the
   whole composite: it has no DMDA, so MATSGDIA cannot store it and must say so (what is wrong and what to do) instead
   of failing on an index. With only the DMDA of type sgdia, the DMDA's own matrix is MATSGDIA and the composite's AIJ.
*/
#include "gktest.h"
#include <petscdmcomposite.h>
#include <petscdmredundant.h>

int main(int argc, char **argv)
{
  DM             da, red, pack;
  Mat            J, A;
  PetscErrorCode ierr;
  MatType        type;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 6, 5, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
  PetscCall(DMSetUp(da));
  PetscCall(DMRedundantCreate(PETSC_COMM_WORLD, 0, 2, &red));
  PetscCall(DMCompositeCreate(PETSC_COMM_WORLD, &pack));
  PetscCall(DMCompositeAddDM(pack, da));
  PetscCall(DMCompositeAddDM(pack, red));

  /* 1. the composite's matrix as sgdia: a clear error */
  PetscCall(DMSetMatType(pack, MATSGDIA));
  PetscCall(GKExpectErrorBegin());
  ierr = DMCreateMatrix(pack, &J);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_WRONGSTATE, "cannot have sgdia matrices: use MATAIJ", "DMCreateMatrix() of a DMComposite with -dm_mat_type sgdia"));

  /* 2. the way that works: the composite AIJ, the DMDA sgdia */
  PetscCall(DMSetMatType(pack, MATAIJ));
  PetscCall(DMSetMatType(da, MATSGDIA));
  PetscCall(DMCreateMatrix(pack, &J));
  PetscCall(MatGetType(J, &type));
  PetscCall(GKCheck((PetscBool)(strstr(type, "aij") != NULL), "the composite's matrix is AIJ"));
  PetscCall(DMCreateMatrix(da, &A));
  PetscCall(MatGetType(A, &type));
  PetscCall(GKCheck((PetscBool)(strstr(type, "sgdia") != NULL), "the DMDA's matrix is MATSGDIA"));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&J));

  /* 3. MatSetValues() on an sgdia matrix that never got a DMDA */
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, 4, 4, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(A, MATSGDIA));
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetValue(A, 0, 0, 1.0, INSERT_VALUES);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_WRONGSTATE, "takes its layout from a DMDA, and this matrix has none", "MatSetValues() on MATSGDIA without a DMDA"));
  PetscCall(MatDestroy(&A));

  PetscCall(DMDestroy(&pack));
  PetscCall(DMDestroy(&red));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
