static const char help[] = "Compares two vectors written by PETSc's binary viewer (e.g. -snes_view_solution binary:file), field by field.\n"
                           "  -a <file> -b <file>   the two vectors (same length)\n"
                           "  -dof <n>              interleaved fields (default 4: u, v, omega, T of the driven cavity)\n"
                           "  -rtol <t>             fail unless, in every field, max|a - b| <= t * max|a| (default 1e-6)\n"
                           "  -atol <t>             ... or max|a - b| <= t (default 1e-14)\n";

/*
   Used by tests/cavity/compare.sh and bench/cavity.sh to check that two runs reached the same solution. A DMDA
   vector is written in the natural ordering whatever the number of ranks, so runs on different rank counts
   compare directly. Runs on one rank. Prints one line per field; exits with an error if a field differs by more than the
   tolerance, or if the lengths differ, or if either vector holds a NaN.
*/
#include <petscvec.h>
#include <petscviewer.h>
#include <petscversion.h>

#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

static PetscErrorCode Load(const char *file, Vec *v)
{
  PetscViewer viewer;

  PetscFunctionBeginUser;
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, file, FILE_MODE_READ, &viewer));
  PetscCall(VecCreate(PETSC_COMM_WORLD, v));
  PetscCall(VecSetType(*v, VECSTANDARD));
  PetscCall(VecLoad(*v, viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char               fa[PETSC_MAX_PATH_LEN] = "", fb[PETSC_MAX_PATH_LEN] = "";
  PetscInt           dof = 4, na, nb;
  PetscReal          rtol = 1e-6, atol = 1e-14, worst = 0.0;
  Vec                a, b;
  const PetscScalar *xa, *xb;
  PetscBool          fail = PETSC_FALSE;
  const char        *names[] = {"u", "v", "omega", "T"};
  PetscMPIInt        size;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCheck(size == 1, PETSC_COMM_WORLD, PETSC_ERR_SUP, "Run on one MPI rank (the files hold the whole vectors)");
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Vector comparison options", NULL);
  PetscCall(PetscOptionsString("-a", "First vector (PETSc binary file)", NULL, fa, fa, sizeof(fa), NULL));
  PetscCall(PetscOptionsString("-b", "Second vector (PETSc binary file)", NULL, fb, fb, sizeof(fb), NULL));
  PetscCall(PetscOptionsInt("-dof", "Interleaved fields", NULL, dof, &dof, NULL));
  PetscCall(PetscOptionsReal("-rtol", "Relative tolerance per field (to max|a| of the field)", NULL, rtol, &rtol, NULL));
  PetscCall(PetscOptionsReal("-atol", "Absolute tolerance", NULL, atol, &atol, NULL));
  PetscOptionsEnd();
  PetscCheck(fa[0] && fb[0], PETSC_COMM_WORLD, PETSC_ERR_USER, "Give both vectors: -a <file> -b <file>");
  PetscCheck(dof >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dof must be at least 1, got %" PetscInt_FMT, dof);
  PetscCall(Load(fa, &a));
  PetscCall(Load(fb, &b));
  PetscCall(VecGetSize(a, &na));
  PetscCall(VecGetSize(b, &nb));
  PetscCheck(na == nb, PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ, "The vectors have different lengths: %" PetscInt_FMT " (%s) and %" PetscInt_FMT " (%s)", na, fa, nb, fb);
  PetscCheck(na % dof == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ, "Length %" PetscInt_FMT " is not a multiple of -dof %" PetscInt_FMT, na, dof);
  PetscCall(VecGetArrayRead(a, &xa));
  PetscCall(VecGetArrayRead(b, &xb));
  for (PetscInt f = 0; f < dof; f++) {
    PetscReal dmax = 0.0, amax = 0.0, tol, glob[2];
    PetscInt  nloc, nan = 0;

    PetscCall(VecGetLocalSize(a, &nloc));
    for (PetscInt i = f; i < nloc; i += dof) {
      PetscReal d = PetscAbsScalar(xa[i] - xb[i]);

      if (PetscIsInfOrNanScalar(xa[i]) || PetscIsInfOrNanScalar(xb[i])) nan++;
      dmax = PetscMax(dmax, d);
      amax = PetscMax(amax, PetscAbsScalar(xa[i]));
    }
    glob[0] = dmax;
    glob[1] = amax;
    tol = PetscMax(rtol * glob[1], atol);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "field %" PetscInt_FMT " (%s): max|a-b| %.3e, max|a| %.3e, relative %.3e, tolerance %.3e%s\n", f, dof == 4 ? names[f] : "-", (double)glob[0], (double)glob[1], glob[1] > 0 ? (double)(glob[0] / glob[1]) : 0.0, (double)tol,
                          nan ? ", NaN/Inf present" : (glob[0] > tol ? ", TOO LARGE" : "")));
    if (nan || glob[0] > tol) fail = PETSC_TRUE;
    if (glob[1] > 0) worst = PetscMax(worst, glob[0] / glob[1]);
  }
  PetscCall(VecRestoreArrayRead(a, &xa));
  PetscCall(VecRestoreArrayRead(b, &xb));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "vecdiff: %s (largest relative difference %.3e, rtol %.1e)\n", fail ? "FAILED" : "OK", (double)worst, (double)rtol));
  PetscCall(VecDestroy(&a));
  PetscCall(VecDestroy(&b));
  PetscCheck(!fail, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "The vectors %s and %s differ by more than the tolerance (see above)", fa, fb);
  PetscCall(PetscFinalize());
  return 0;
}
