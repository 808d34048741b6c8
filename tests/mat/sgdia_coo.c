static const char help[] = "MATSGDIA through PETSc's COO assembly (MatSetPreallocationCOO + MatSetValuesCOO) against MATAIJ with the same\n"
                           "entries set by MatSetValues: INSERT_VALUES, ADD_VALUES, repeated entries, negative indices, rows of other ranks.\n"
                           "  -dim <2,3> -dof <d> -stencil <star,box> -n <points per dimension>\n";

/*
   Every rank lists the couplings of the AIJ pattern that DMCreateMatrix() gives, for its own rows and for the first
   rows of the next rank (so some entries belong to another rank), a quarter of them twice, plus entries with
   negative indices that must be ignored. The SG-DIA matrix assembled by COO must equal, after conversion, the AIJ
   matrix assembled with MatSetValues(ADD_VALUES) from the same list (exactly: the sums add the same numbers, and
   each (row, column) gets at most two of them).
*/
#include "gktest.h"

int main(int argc, char **argv)
{
  DM          da;
  Mat         A, B, C;
  PetscInt    dim = 2, dof = 2, n = 6, sidx = 0, rs, re, N, cap = 0, cnt = 0, *ii, *jj;
  PetscScalar *vv;
  const char *stencils[] = {"star", "box"};
  PetscMPIInt rank, size;
  PetscBool   eq;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "sgdia_coo options", "test");
  PetscCall(PetscOptionsInt("-dim", "Grid dimension, 2 or 3", "test", dim, &dim, NULL));
  PetscCall(PetscOptionsInt("-dof", "Components per grid point", "test", dof, &dof, NULL));
  PetscCall(PetscOptionsInt("-n", "Grid points per dimension", "test", n, &n, NULL));
  PetscCall(PetscOptionsEList("-stencil", "DMDA stencil", "test", stencils, 2, stencils[sidx], &sidx, NULL));
  PetscOptionsEnd();
  if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, sidx ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, n, n + 1, PETSC_DECIDE, PETSC_DECIDE, dof, 1, NULL, NULL, &da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, sidx ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, n, n, n + 1, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, dof, 1, NULL, NULL, NULL, &da));
  PetscCall(DMSetUp(da));
  PetscCall(DMSetMatType(da, MATAIJ));
  PetscCall(DMCreateMatrix(da, &B));
  PetscCall(DMSetMatType(da, MATSGDIA));
  PetscCall(DMCreateMatrix(da, &A));
  PetscCall(MatGetOwnershipRange(B, &rs, &re));
  PetscCall(MatGetSize(B, &N, NULL));

  /* the list: own rows, a quarter of them twice; then negative indices */
  for (PetscInt r = rs; r < re; r++) {
    PetscInt nc;
    PetscCall(MatGetRow(B, r, &nc, NULL, NULL));
    cap += 2 * nc;
    PetscCall(MatRestoreRow(B, r, &nc, NULL, NULL));
  }
  cap += 2 * (size > 1 ? 4 * dof * 9 : 0) + 2;
  PetscCall(PetscMalloc3(cap, &ii, cap, &jj, cap, &vv));
  for (PetscInt r = rs; r < re; r++) {
    PetscInt        nc;
    const PetscInt *c;
    PetscCall(MatGetRow(B, r, &nc, &c, NULL));
    for (PetscInt k = 0; k < nc; k++) {
      ii[cnt] = r;
      jj[cnt] = c[k];
      vv[cnt] = 1.0 + 0.5 * r + 0.001 * c[k];
      cnt++;
      if ((r + k) % 4 == 0) { /* repeated: the sum counts */
        ii[cnt] = r;
        jj[cnt] = c[k];
        vv[cnt] = -0.25 * r;
        cnt++;
      }
    }
    PetscCall(MatRestoreRow(B, r, &nc, &c, NULL));
  }
  ii[cnt] = -1, jj[cnt] = rs, vv[cnt++] = 1e30; /* ignored */
  ii[cnt] = rs, jj[cnt] = -3, vv[cnt++] = 1e30; /* ignored */
  {
    /* entries for the next rank's first row: its diagonal coupling, set from here (the next rank adds its own too) */
    if (size > 1) {
      PetscInt r = re % N;
      ii[cnt] = r, jj[cnt] = r, vv[cnt++] = 3.0 + rank;
    }
  }
  PetscCheck(cnt <= cap, PETSC_COMM_SELF, PETSC_ERR_PLIB, "list overflow");

  /* reference: AIJ with MatSetValues(ADD_VALUES) from a zero matrix */
  PetscCall(MatZeroEntries(B));
  for (PetscInt k = 0; k < cnt; k++)
    if (ii[k] >= 0 && jj[k] >= 0) PetscCall(MatSetValue(B, ii[k], jj[k], vv[k], ADD_VALUES));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));

  /* INSERT_VALUES: A must equal B */
  PetscCall(MatSetPreallocationCOO(A, cnt, ii, jj));
  PetscCall(MatSetValuesCOO(A, vv, INSERT_VALUES));
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &C));
  PetscCall(MatEqual(B, C, &eq));
  PetscCall(GKCheck(eq, "MatSetValuesCOO(INSERT_VALUES) on MATSGDIA differs from MatSetValues(ADD_VALUES) on MATAIJ with the same entries"));
  PetscCall(MatDestroy(&C));

  /* ADD_VALUES on top: A must equal 2 B */
  PetscCall(MatSetValuesCOO(A, vv, ADD_VALUES));
  PetscCall(MatScale(B, 2.0));
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &C));
  PetscCall(MatEqual(B, C, &eq));
  PetscCall(GKCheck(eq, "MatSetValuesCOO(ADD_VALUES) on MATSGDIA does not add the entries to the values already there"));
  PetscCall(MatDestroy(&C));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "sgdia_coo: %d-d, dof %" PetscInt_FMT ", %s stencil, %d rank(s): INSERT and ADD equal to AIJ\n", (int)dim, dof, stencils[sidx], (int)size));

  PetscCall(PetscFree3(ii, jj, vv));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
