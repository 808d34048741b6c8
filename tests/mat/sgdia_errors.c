static const char help[] = "MATSGDIA: every misuse gets its own clear error, and nothing is lost or silently wrong.\n";

#include "gktest.h"
#include <petscdmshell.h>

static PetscErrorCode CreateDA(PetscInt dof, DM *da)
{
  PetscFunctionBegin;
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 8, 7, PETSC_DECIDE, PETSC_DECIDE, dof, 1, NULL, NULL, da));
  PetscCall(DMSetUp(*da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CreateMat(DM da, MatType type, Mat *A)
{
  PetscFunctionBegin;
  PetscCall(DMSetMatType(da, type));
  PetscCall(DMCreateMatrix(da, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the first owned row (grid point (xs, ys), component 0) and the column of the grid point two steps away in x:
   outside a width-1 stencil */
static PetscErrorCode FarEntry(Mat A, PetscInt *row, PetscInt *col)
{
  DM       da;
  AO       ao;
  PetscInt xs, ys, M, dof, idx[2];

  PetscFunctionBegin;
  PetscCall(MatGetDM(A, &da));
  PetscCall(DMDAGetInfo(da, NULL, &M, NULL, NULL, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetAO(da, &ao));
  idx[0] = (ys * M + xs) * dof;
  idx[1] = (ys * M + (xs + 2 < M ? xs + 2 : xs - 2)) * dof;
  PetscCall(AOApplicationToPetsc(ao, 2, idx));
  *row = idx[0];
  *col = idx[1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  DM             da, shell;
  Mat            A, B, C;
  PetscErrorCode ierr;
  PetscInt       row, col, rstart, rend;
  PetscScalar    one = 1.0, two = 2.0;
  Vec            x, y;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(CreateDA(1, &da));

  /* 1. an entry outside the stencil: an error naming the entry, its grid points and the stencil */
  PetscCall(CreateMat(da, MATSGDIA, &A));
  PetscCall(FarEntry(A, &row, &col));
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetValues(A, 1, &row, 1, &col, &one, INSERT_VALUES);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "outside the DMDA's star stencil of width 1", "insertion outside the stencil"));
  PetscCall(MatDestroy(&A));

  /* 2. the same with -mat_sgdia_drop_outside_stencil: dropped, the other entries of the call land */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_sgdia_drop_outside_stencil", "1"));
  PetscCall(CreateMat(da, MATSGDIA, &A));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_sgdia_drop_outside_stencil"));
  PetscCall(CreateMat(da, MATAIJ, &B));
  PetscCall(FarEntry(A, &row, &col));
  {
    PetscInt    cols[2] = {col, row};
    PetscScalar vals[2] = {one, two};
    PetscCall(MatSetValues(A, 1, &row, 2, cols, vals, INSERT_VALUES));
    PetscCall(MatSetValues(B, 1, &row, 1, &row, &two, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscCall(GKCheckMatClose(A, B, 0.0, "-mat_sgdia_drop_outside_stencil keeps the in-stencil entries"));
  PetscCall(MatDestroy(&A));

  /* 3. MAT_NEW_NONZERO_LOCATIONS false drops them too, as it does for AIJ */
  PetscCall(CreateMat(da, MATSGDIA, &A));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
  PetscCall(MatSetValues(A, 1, &row, 1, &col, &one, INSERT_VALUES));
  PetscCall(MatSetValues(A, 1, &row, 1, &row, &two, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(GKCheckMatClose(A, B, 0.0, "MAT_NEW_NONZERO_LOCATIONS false drops entries outside the stencil"));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));

  /* 4. no DM at all */
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, 56, 56));
  PetscCall(MatSetType(A, MATSGDIA));
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetUp(A);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_WRONGSTATE, "takes its layout from a DMDA", "MatSetUp without a DM"));
  PetscCall(MatDestroy(&A));

  /* 5. a DM that is not a DMDA */
  PetscCall(DMShellCreate(PETSC_COMM_WORLD, &shell));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetType(A, MATSGDIA));
  PetscCall(MatSetDM(A, shell));
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetUp(A);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_WRONG, "DM attached to this matrix is of type shell", "MatSetUp with a DMShell"));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&shell));

  /* 6. sizes that do not match the DMDA */
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, 57, 57));
  PetscCall(MatSetType(A, MATSGDIA));
  PetscCall(MatSetDM(A, da));
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetUp(A);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_SIZ, "does not match the DMDA", "sizes that do not match the DMDA"));
  PetscCall(MatDestroy(&A));

  /* the hand-made matrix with the right sizes works, and MatSetValuesStencil with it */
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetType(A, MATSGDIA));
  PetscCall(MatSetDM(A, da));
  PetscCall(MatSetUp(A));
  {
    PetscInt   xs, ys;
    MatStencil r, c;
    PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, NULL, NULL, NULL));
    r.i = xs, r.j = ys, r.k = 0, r.c = 0;
    c   = r;
    PetscCall(MatSetValuesStencil(A, 1, &r, 1, &c, &two, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));

  /* 7. use before assembly */
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(MatSetValues(A, 1, &rstart, 1, &rstart, &one, ADD_VALUES));
  PetscCall(GKExpectErrorBegin());
  ierr = MatMult(A, x, y);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_WRONGSTATE, "nassembled", "MatMult before MatAssemblyEnd"));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatMult(A, x, y));
  {
    PetscReal s;
    PetscCall(VecSum(y, &s));
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCheck(s == 3.0 * size, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "after the failed MatMult the matrix still holds its values: sum %g, expected %d", (double)s, 3 * size);
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));

  /* 8. MatConvert: an AIJ without its DMDA; an AIJ with a nonzero outside the stencil; inserting outside
        the stencil after a conversion */
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatDestroy(&A));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &C));
  PetscCall(MatGetLocalSize(B, &rstart, &rend));
  PetscCall(MatSetSizes(C, rstart, rend, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(C, MATAIJ));
  PetscCall(MatSetUp(C));
  PetscCall(MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCopy(B, C, DIFFERENT_NONZERO_PATTERN)); /* the values of B, without its DMDA */
  PetscCall(GKExpectErrorBegin());
  ierr = MatConvert(C, MATSGDIA, MAT_INITIAL_MATRIX, &A);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_WRONG, "needs the DMDA it lives on", "MatConvert AIJ -> SGDIA without a DMDA"));
  PetscCall(MatDestroy(&C));
  PetscCall(MatConvert(B, MATSGDIA, MAT_INITIAL_MATRIX, &A));
  PetscCall(FarEntry(A, &row, &col));
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetValues(A, 1, &row, 1, &col, &one, ADD_VALUES);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "outside the DMDA's", "MatSetValues outside the stencil after MatConvert AIJ -> SGDIA"));
  PetscCall(MatDestroy(&A));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetValues(B, 1, &row, 1, &col, &one, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscCall(GKExpectErrorBegin());
  ierr = MatConvert(B, MATSGDIA, MAT_INITIAL_MATRIX, &A);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "outside the DMDA's", "MatConvert of an AIJ with a nonzero outside the stencil"));
  PetscCall(MatDestroy(&B));

  /* 9. a singular diagonal block for PCPBJACOBI (dof 2, a zero block) */
  {
    DM da2;
    PetscCall(CreateDA(2, &da2));
    PetscCall(CreateMat(da2, MATSGDIA, &A));
    PetscCall(MatShift(A, 1.0));
    PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
    {
      PetscInt    r2[2] = {rstart, rstart + 1};
      PetscScalar z[4]  = {0, 0, 0, 0};
      PetscCall(MatSetValues(A, 2, r2, 2, r2, z, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    {
      const PetscScalar *ib;
      PetscCall(GKExpectErrorBegin());
      ierr = MatInvertBlockDiagonal(A, &ib);
      PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_MAT_LU_ZRPVT, "is singular", "MatInvertBlockDiagonal with a singular block"));
    }
    PetscCall(MatDestroy(&A));
    PetscCall(DMDestroy(&da2));
  }

  /* 10. rows outside the matrix in MatZeroRows */
  PetscCall(CreateMat(da, MATSGDIA, &A));
  {
    PetscInt bad = 1000;
    PetscCall(GKExpectErrorBegin());
    ierr = MatZeroRows(A, 1, &bad, 1.0, NULL, NULL);
    PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, NULL, "MatZeroRows with a row outside the matrix"));
  }
  PetscCall(MatDestroy(&A));

  /* 11. a bad option value, and an unknown type */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_sgdia_drop_outside_stencil", "maybe"));
  PetscCall(DMSetMatType(da, MATSGDIA));
  PetscCall(GKExpectErrorBegin());
  ierr = DMCreateMatrix(da, &A);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_WRONG, "maybe", "-mat_sgdia_drop_outside_stencil maybe"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_sgdia_drop_outside_stencil"));
  PetscCall(MatDestroy(&A));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetType(A, "sgdiax");
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_UNKNOWN_TYPE, "sgdiax", "an unknown matrix type"));
  PetscCall(MatDestroy(&A));

#if !defined(PETSC_HAVE_CUDA)
  /* 12. the CUDA type from a PETSc without CUDA */
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetType(A, MATSGDIACUDA);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_SUP, "make petsc-cuda", "MATSGDIACUDA from a PETSc without CUDA"));
  PetscCall(MatDestroy(&A));
#endif

  PetscCall(DMDestroy(&da));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "sgdia_errors: every misuse gave its error\n"));
  PetscCall(PetscFinalize());
  return 0;
}
