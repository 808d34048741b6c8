static const char help[] = "KSPCACG: bad options give clear errors; an indefinite preconditioner, a non-symmetric matrix and\n"
                           "KSPSetErrorIfNotConverged() are reported; KSPView shows s and the basis.\n";

#include "gktest.h"
#include <petscksp.h>

/* the 1D Laplacian (2, -1) of size n, shifted by -shift */
static PetscErrorCode Laplacian(PetscInt n, PetscReal shift, PetscReal skew, Mat *A)
{
  PetscInt rstart, rend;

  PetscFunctionBegin;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n, n, 3, NULL, 2, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscCall(MatSetValue(*A, i, i, 2.0 - shift, INSERT_VALUES));
    if (i > 0) PetscCall(MatSetValue(*A, i, i - 1, -1.0 - skew, INSERT_VALUES));
    if (i < n - 1) PetscCall(MatSetValue(*A, i, i + 1, -1.0 + skew, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a negative definite preconditioner: y = -x */
static PetscErrorCode NegativeApply(PC pc, Vec x, Vec y)
{
  PetscFunctionBegin;
  (void)pc;
  PetscCall(VecAXPBY(y, -1.0, 0.0, x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode NewSolver(Mat A, const char *opts, KSP *ksp)
{
  PetscFunctionBegin;
  PetscCall(PetscOptionsClear(NULL));
  if (opts) PetscCall(PetscOptionsInsertString(NULL, opts));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, ksp));
  PetscCall(KSPSetOperators(*ksp, A, A));
  PetscCall(KSPSetType(*ksp, KSPCACG));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* solve and return the reason */
static PetscErrorCode Solve(KSP ksp, Mat A, KSPConvergedReason *reason)
{
  Vec x, b;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetConvergedReason(ksp, reason));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ExpectReason(Mat A, const char *opts, PetscBool negpc, KSPConvergedReason want, const char *what)
{
  KSP                ksp;
  KSPConvergedReason reason;

  PetscFunctionBegin;
  PetscCall(NewSolver(A, opts, &ksp));
  if (negpc) {
    PC pc;
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCSHELL));
    PetscCall(PCShellSetApply(pc, NegativeApply));
  }
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(Solve(ksp, A, &reason));
  PetscCheck(reason == want, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: expected %s, got %s", what, KSPConvergedReasons[want], KSPConvergedReasons[reason]);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: %s -> %s\n", what, KSPConvergedReasons[reason]));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat                A, Aind, Ansym;
  KSP                ksp;
  PetscErrorCode     ierr;
  KSPConvergedReason reason;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(Laplacian(100, 0.0, 0.0, &A));
  PetscCall(Laplacian(100, 0.5, 0.0, &Aind));  /* eigenvalues 2 - 2cos(k pi/101) - 0.5: both signs */
  PetscCall(Laplacian(100, 0.0, 0.3, &Ansym)); /* non-symmetric: -1.3 below, -0.7 above the diagonal */

  /* 1. s out of range, through the function and through the option */
  PetscCall(NewSolver(A, NULL, &ksp));
  PetscCall(GKExpectErrorBegin());
  ierr = KSPCACGSetS(ksp, 0);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "s must be in 1..16, got 0", "KSPCACGSetS(0)"));
  PetscCall(GKExpectErrorBegin());
  ierr = KSPCACGSetS(ksp, 17);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "s must be in 1..16, got 17", "KSPCACGSetS(17)"));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(NewSolver(A, "-ksp_cacg_s 40", &ksp));
  PetscCall(GKExpectErrorBegin());
  ierr = KSPSetFromOptions(ksp);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "s must be in 1..16, got 40", "-ksp_cacg_s 40"));
  PetscCall(KSPDestroy(&ksp));

  /* 2. an unknown basis */
  PetscCall(NewSolver(A, "-ksp_cacg_basis legendre", &ksp));
  PetscCall(GKExpectErrorBegin());
  ierr = KSPSetFromOptions(ksp);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_USER, "legendre", "-ksp_cacg_basis legendre"));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(NewSolver(A, NULL, &ksp));
  PetscCall(GKExpectErrorBegin());
  ierr = KSPCACGSetBasis(ksp, (KSPCACGBasisType)7);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "unknown basis 7", "KSPCACGSetBasis(7)"));
  PetscCall(KSPDestroy(&ksp));

  /* 3. a bad interval, a bad number of estimate steps */
  PetscCall(NewSolver(A, "-ksp_cacg_eigenvalues 2,1", &ksp));
  PetscCall(GKExpectErrorBegin());
  ierr = KSPSetFromOptions(ksp);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "0 < emin < emax", "-ksp_cacg_eigenvalues 2,1"));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(NewSolver(A, "-ksp_cacg_eigenvalues 1", &ksp));
  PetscCall(GKExpectErrorBegin());
  ierr = KSPSetFromOptions(ksp);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_SIZ, "takes two numbers", "-ksp_cacg_eigenvalues 1"));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(NewSolver(A, "-ksp_cacg_eig_steps 1", &ksp));
  PetscCall(GKExpectErrorBegin());
  ierr = KSPSetFromOptions(ksp);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "2..64 CG steps", "-ksp_cacg_eig_steps 1"));
  PetscCall(KSPDestroy(&ksp));

  /* 4. right preconditioning is not supported */
  PetscCall(NewSolver(A, "-ksp_pc_side right", &ksp));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(GKExpectErrorBegin());
  ierr = Solve(ksp, A, &reason);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_SUP, "RIGHT", "-ksp_pc_side right"));
  PetscCall(KSPDestroy(&ksp));

  /* 5. the options took effect, and KSPView shows them */
  {
    PetscInt         s;
    KSPCACGBasisType basis;
    PetscReal        emin, emax;
    PetscViewer      sv;
    const char      *text;
    char            *has, viewbuf[4096];
    PetscCall(NewSolver(A, "-ksp_cacg_s 6 -ksp_cacg_basis chebyshev -ksp_cacg_eigenvalues 0.001,4", &ksp));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(KSPCACGGetS(ksp, &s));
    PetscCall(KSPCACGGetBasis(ksp, &basis));
    PetscCall(KSPCACGGetEigenvalues(ksp, &emin, &emax));
    PetscCall(GKCheck((PetscBool)(s == 6 && basis == KSP_CACG_BASIS_CHEBYSHEV && emin == 0.001 && emax == 4.0), "options -ksp_cacg_s/-ksp_cacg_basis/-ksp_cacg_eigenvalues took effect"));
    PetscCall(Solve(ksp, A, &reason));
    PetscCall(GKCheck((PetscBool)(reason > 0), "the 1D Laplacian with a given interval converges"));
    PetscCall(PetscViewerStringOpen(PETSC_COMM_WORLD, viewbuf, sizeof(viewbuf), &sv));
    PetscCall(KSPView(ksp, sv));
    PetscCall(PetscViewerStringGetStringRead(sv, &text, NULL));
    PetscCall(PetscStrstr(text, "s = 6", &has));
    PetscCall(GKCheck((PetscBool)!!has, "KSPView prints s"));
    PetscCall(PetscStrstr(text, "basis chebyshev", &has));
    PetscCall(GKCheck((PetscBool)!!has, "KSPView prints the basis"));
    PetscCall(PetscViewerDestroy(&sv));
    PetscCall(KSPDestroy(&ksp));
  }

  /* 6. not positive definite: the matrix, the preconditioner, non-symmetry, each a divergence reason */
  PetscCall(ExpectReason(Aind, "-ksp_cacg_basis monomial -pc_type jacobi", PETSC_FALSE, KSP_DIVERGED_INDEFINITE_MAT, "indefinite matrix, monomial basis"));
  PetscCall(ExpectReason(Aind, "-ksp_cacg_basis newton -pc_type jacobi", PETSC_FALSE, KSP_DIVERGED_INDEFINITE_MAT, "indefinite matrix, Newton basis"));
  PetscCall(ExpectReason(Aind, "-ksp_cacg_basis chebyshev -ksp_cacg_eigenvalues 0.1,4 -pc_type none", PETSC_FALSE, KSP_DIVERGED_INDEFINITE_MAT, "indefinite matrix, Chebyshev basis on a given interval"));
  PetscCall(ExpectReason(A, "-ksp_cacg_basis monomial", PETSC_TRUE, KSP_DIVERGED_INDEFINITE_PC, "negative definite preconditioner"));
  PetscCall(ExpectReason(Ansym, "-ksp_cacg_basis newton -ksp_cacg_eigenvalues 0.01,4 -pc_type jacobi", PETSC_FALSE, KSP_DIVERGED_INDEFINITE_MAT, "non-symmetric matrix"));
  PetscCall(ExpectReason(Ansym, "-ksp_cacg_basis monomial -pc_type none", PETSC_FALSE, KSP_DIVERGED_INDEFINITE_MAT, "non-symmetric matrix, no preconditioner"));
  PetscCall(ExpectReason(A, "-ksp_cacg_basis monomial -pc_type sor -pc_sor_local_forward", PETSC_FALSE, KSP_DIVERGED_INDEFINITE_PC, "non-symmetric preconditioner (forward SOR)"));

  /* 7. with KSPSetErrorIfNotConverged() the divergence is an error that says why */
  PetscCall(NewSolver(Aind, "-ksp_cacg_basis monomial -pc_type jacobi -ksp_error_if_not_converged", &ksp));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(GKExpectErrorBegin());
  ierr = Solve(ksp, Aind, &reason);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_NOT_CONVERGED, "not positive definite", "indefinite matrix with -ksp_error_if_not_converged"));
  PetscCall(KSPDestroy(&ksp));

  /* 8. a CACG Set function on another KSP type is ignored, a Get function is an error */
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPCACGSetS(ksp, 8));
  {
    PetscInt s;
    PetscCall(GKExpectErrorBegin());
    ierr = KSPCACGGetS(ksp, &s);
    PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_SUP, NULL, "KSPCACGGetS() on a KSPCG"));
  }
  PetscCall(KSPDestroy(&ksp));

  PetscCall(PetscOptionsClear(NULL));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&Aind));
  PetscCall(MatDestroy(&Ansym));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "all checks passed\n"));
  PetscCall(PetscFinalize());
  return 0;
}
