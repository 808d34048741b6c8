static const char help[] = "Compares the matrices of two files written by PETSc's binary viewer (e.g. -ksp_view_mat binary:file), entry by entry.\n"
                           "  -a <file> -b <file>   the two files, each holding -n matrices one after the other\n"
                           "  -n <k>                matrices in each file (default 1)\n"
                           "  -rtol <t>             fail unless, in every matrix, the structures are equal and\n"
                           "                        max|a_ij - b_ij| <= t * max|a_ij| (default 0: equal values; -0.0 equals 0.0)\n";

/*
   Used by tests/cavity/samemat.sh to check that two ways of writing the driven cavity's Jacobian (examples/cavity.c:
   -cavity_aij_fill csr and coo, host stencil assembly, the device kernels) give the same matrix: the same nonzero
   structure (row lengths and column indices) and the same values. A binary matrix file is in the global ordering,
   which for a DMDA on one rank is the natural one. Runs on one rank. Prints one line per matrix; exits with an
   error if a structure differs, a value differs by more than the tolerance, or a value is NaN/Inf.
*/
#include <petscmat.h>
#include <petscviewer.h>
#include <petscversion.h>

#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

/* the structure of A and B equal? the largest |a_ij - b_ij| and |a_ij|, and whether a value is NaN/Inf */
static PetscErrorCode Compare(Mat A, Mat B, PetscBool *same, PetscReal *dmax, PetscReal *amax, PetscBool *nan)
{
  PetscInt m, n, mb, nb;

  PetscFunctionBeginUser;
  *same = PETSC_TRUE;
  *dmax = *amax = 0.0;
  *nan          = PETSC_FALSE;
  PetscCall(MatGetSize(A, &m, &n));
  PetscCall(MatGetSize(B, &mb, &nb));
  if (m != mb || n != nb) {
    *same = PETSC_FALSE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (PetscInt i = 0; i < m && *same; i++) {
    PetscInt           na, nbr;
    const PetscInt    *ca, *cb;
    const PetscScalar *va, *vb;

    PetscCall(MatGetRow(A, i, &na, &ca, &va));
    PetscCall(MatGetRow(B, i, &nbr, &cb, &vb));
    if (na != nbr) *same = PETSC_FALSE;
    for (PetscInt k = 0; k < na && *same; k++) {
      if (ca[k] != cb[k]) *same = PETSC_FALSE;
      if (PetscIsInfOrNanScalar(va[k]) || PetscIsInfOrNanScalar(vb[k])) *nan = PETSC_TRUE;
      *dmax = PetscMax(*dmax, PetscAbsScalar(va[k] - vb[k]));
      *amax = PetscMax(*amax, PetscAbsScalar(va[k]));
    }
    PetscCall(MatRestoreRow(B, i, &nbr, &cb, &vb));
    PetscCall(MatRestoreRow(A, i, &na, &ca, &va));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char        fa[PETSC_MAX_PATH_LEN] = "", fb[PETSC_MAX_PATH_LEN] = "";
  PetscInt    nmat = 1;
  PetscReal   rtol = 0.0;
  PetscViewer va, vb;
  PetscBool   fail = PETSC_FALSE;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCheck(size == 1, PETSC_COMM_WORLD, PETSC_ERR_SUP, "Run on one MPI rank (the files hold the whole matrices)");
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Matrix comparison options", NULL);
  PetscCall(PetscOptionsString("-a", "First file (PETSc binary)", NULL, fa, fa, sizeof(fa), NULL));
  PetscCall(PetscOptionsString("-b", "Second file (PETSc binary)", NULL, fb, fb, sizeof(fb), NULL));
  PetscCall(PetscOptionsInt("-n", "Matrices in each file", NULL, nmat, &nmat, NULL));
  PetscCall(PetscOptionsReal("-rtol", "Relative tolerance (to max|a_ij| of the matrix)", NULL, rtol, &rtol, NULL));
  PetscOptionsEnd();
  PetscCheck(fa[0] && fb[0], PETSC_COMM_WORLD, PETSC_ERR_USER, "Give both files: -a <file> -b <file>");
  PetscCheck(nmat >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n must be at least 1, got %" PetscInt_FMT, nmat);
  PetscCheck(rtol >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-rtol must be at least 0, got %g", (double)rtol);
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, fa, FILE_MODE_READ, &va));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, fb, FILE_MODE_READ, &vb));
  for (PetscInt k = 0; k < nmat; k++) {
    Mat       A, B;
    PetscBool same, nan;
    PetscReal dmax, amax;
    PetscInt  m, n;

    PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
    PetscCall(MatSetType(A, MATSEQAIJ));
    PetscCall(MatLoad(A, va));
    PetscCall(MatCreate(PETSC_COMM_WORLD, &B));
    PetscCall(MatSetType(B, MATSEQAIJ));
    PetscCall(MatLoad(B, vb));
    PetscCall(Compare(A, B, &same, &dmax, &amax, &nan));
    PetscCall(MatGetSize(A, &m, &n));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "matrix %" PetscInt_FMT " (%" PetscInt_FMT " x %" PetscInt_FMT "): structure %s, max|a-b| %.3e, max|a| %.3e%s\n", k, m, n, same ? "equal" : "DIFFERENT", (double)dmax, (double)amax,
                          nan ? ", NaN/Inf present" : (dmax > rtol * amax ? ", TOO LARGE" : "")));
    if (!same || nan || dmax > rtol * amax) fail = PETSC_TRUE;
    PetscCall(MatDestroy(&A));
    PetscCall(MatDestroy(&B));
  }
  PetscCall(PetscViewerDestroy(&va));
  PetscCall(PetscViewerDestroy(&vb));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "matdiff: %s (%" PetscInt_FMT " matrices, rtol %.1e)\n", fail ? "FAILED" : "OK", nmat, (double)rtol));
  PetscCheck(!fail, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "The matrices of %s and %s differ (see above)", fa, fb);
  PetscCall(PetscFinalize());
  return 0;
}
