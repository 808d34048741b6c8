static const char help[] = "PETSc components that accept only AIJ (PCML, the greedy MatColoring) on a gpukit matrix type, against AIJ\n"
                           "(src/mat/utils/gpukitaijonly.c). Options: -type sgdia|dcsr|... (the DMDA's matrix type) -dim 2|3 -n points\n"
                           "per dimension -test coloring|ml|mlnullspace\n";

/*
   The same Laplacian on the same DMDA, once as AIJ and once as -type (DMCreateMatrix(), GKFillPoisson()).
   - coloring: the greedy colouring (distance 1 and 2) of both; the number of colours and every column's colour must
     be the same (PETSc's greedy colouring refuses any type but AIJ by name; gpukit runs it on the AIJ copy);
   - ml: CG + PCML on both; the same iteration count and the solutions to 1e-10 relative, then again after a shift of
     both (ML must see the new values). After the set-up the KSP's operators are still the user's matrix (the copy is
     ML's only), and ML's finest level is built from an AIJ matrix (the forwarder's copy; MATAMB as it is);
   - mlnullspace: as ml with -pc_ml_nullspace user and the constant near null space set on the matrices only (ML
     errors without one): the copy must carry it.
*/
#include "gktest.h"
#include <petscksp.h>

static PetscErrorCode Coloring(Mat A, PetscInt dist, ISColoring *isc)
{
  MatColoring mc;

  PetscFunctionBegin;
  PetscCall(MatColoringCreate(A, &mc));
  PetscCall(MatColoringSetType(mc, MATCOLORINGGREEDY));
  PetscCall(MatColoringSetDistance(mc, dist));
  PetscCall(MatColoringApply(mc, isc));
  PetscCall(MatColoringDestroy(&mc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestColoring(Mat A, Mat S)
{
  PetscFunctionBegin;
  for (PetscInt dist = 1; dist <= 2; dist++) {
    ISColoring             ia, is;
    PetscInt               na, ns, nca, ncs, bad = 0;
    const ISColoringValue *ca, *cs;
    char                   msg[128];

    PetscCall(Coloring(A, dist, &ia));
    PetscCall(Coloring(S, dist, &is));
    PetscCall(ISColoringGetColors(ia, &na, &nca, &ca));
    PetscCall(ISColoringGetColors(is, &ns, &ncs, &cs));
    PetscCall(PetscSNPrintf(msg, sizeof(msg), "distance-%" PetscInt_FMT " greedy colouring: %" PetscInt_FMT " colours on %" PetscInt_FMT " local columns with AIJ, %" PetscInt_FMT " on %" PetscInt_FMT, dist, nca, na, ncs, ns));
    PetscCall(GKCheck((PetscBool)(na == ns && nca == ncs), msg));
    for (PetscInt i = 0; i < na; i++) bad += ca[i] != cs[i];
    PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &bad, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
    PetscCall(PetscSNPrintf(msg, sizeof(msg), "distance-%" PetscInt_FMT " greedy colouring: %" PetscInt_FMT " columns coloured differently from AIJ's", dist, bad));
    PetscCall(GKCheck((PetscBool)(bad == 0), msg));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "distance-%" PetscInt_FMT " greedy colouring: %" PetscInt_FMT " colours, the same as AIJ's for every column\n", dist, nca));
    PetscCall(ISColoringDestroy(&ia));
    PetscCall(ISColoringDestroy(&is));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SolveML(Mat A, Vec b, Vec x, PetscInt *its, PetscBool check)
{
  KSP                ksp;
  PC                 pc;
  Mat                Amat, Pmat, fine;
  KSP                smoother;
  PetscBool          isaij;
  PetscInt           nlev;
  MatType            ta, tf;
  KSPConvergedReason reason;

  PetscFunctionBegin;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCML));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 200));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(GKCheck((PetscBool)(reason > 0), "CG + PCML did not converge"));
  if (check) {
    PetscCall(KSPGetOperators(ksp, &Amat, &Pmat));
    PetscCall(GKCheck((PetscBool)(Amat == A && Pmat == A), "after PCML's set-up the KSP's operators are not the user's matrix"));
    PetscCall(PCMGGetLevels(pc, &nlev));
    PetscCall(PCMGGetSmoother(pc, nlev - 1, &smoother));
    PetscCall(KSPGetOperators(smoother, NULL, &fine));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)fine, &isaij, MATSEQAIJ, MATMPIAIJ, ""));
    if (!isaij && fine == A) { /* a type derived from AIJ (MATAMB: seqaijamb), which ML takes as it is */
      MatType t;

      PetscCall(MatGetType(A, &t));
      PetscCall(PetscStrbeginswith(t, "seqaij", &isaij));
      if (!isaij) PetscCall(PetscStrbeginswith(t, "mpiaij", &isaij));
    }
    PetscCall(GKCheck(isaij, "PCML's finest level is not built from an AIJ matrix (or one derived from AIJ)"));
    PetscCall(MatGetType(A, &ta));
    PetscCall(MatGetType(fine, &tf));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PCML on %s: the KSP keeps the user's matrix, ML's finest level built from %s\n", ta, tf));
  }
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestML(Mat A, Mat S, PetscBool nullspace)
{
  Vec       b, bs, xa, xs;
  PetscInt  ita, its;
  PetscReal diff;
  MatType   ts;
  char      msg[128];

  PetscFunctionBegin;
  if (nullspace) {
    MatNullSpace nsp;

    PetscCall(PetscOptionsSetValue(NULL, "-pc_ml_nullspace", "user"));
    PetscCall(MatNullSpaceCreate(PETSC_COMM_WORLD, PETSC_TRUE, 0, NULL, &nsp));
    PetscCall(MatSetNearNullSpace(A, nsp));
    PetscCall(MatSetNearNullSpace(S, nsp));
    PetscCall(MatNullSpaceDestroy(&nsp));
  }
  PetscCall(MatCreateVecs(A, &xa, &b));
  PetscCall(MatCreateVecs(S, &xs, &bs)); /* S's own vectors (device vectors for a CUDA type) */
  PetscCall(VecSet(b, 1.0));
  PetscCall(VecSet(bs, 1.0));
  PetscCall(MatGetType(S, &ts));
  for (PetscInt pass = 0; pass < 2; pass++) { /* the second after a shift of both: ML must see S's new values */
    if (pass) {
      PetscCall(MatShift(A, 0.5));
      PetscCall(MatShift(S, 0.5));
    }
    PetscCall(SolveML(A, b, xa, &ita, PETSC_FALSE));
    PetscCall(SolveML(S, bs, xs, &its, PETSC_TRUE));
    PetscCall(GKRelDiff(xs, xa, NORM_INFINITY, &diff));
    PetscCall(PetscSNPrintf(msg, sizeof(msg), "CG + PCML (%s): %" PetscInt_FMT " iterations with AIJ, %" PetscInt_FMT " with %s", pass ? "shifted" : "first", ita, its, ts));
    PetscCall(GKCheck((PetscBool)(ita == its), msg));
    PetscCall(PetscSNPrintf(msg, sizeof(msg), "CG + PCML (%s): the solutions differ by %g relative", pass ? "shifted" : "first", (double)diff));
    PetscCall(GKCheck((PetscBool)(diff <= 1e-10), msg));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "CG + PCML%s, %s matrix: %" PetscInt_FMT " iterations as with AIJ, solutions within %.1e\n", nullspace ? " with the near null space" : "", pass ? "shifted" : "first", its, (double)diff));
  }
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&bs));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&xs));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  DM        da;
  Mat       A, S;
  PetscInt  dim = 2, n = 17;
  char      type[64] = MATSGDIA, test[32] = "coloring";
  PetscBool iscol, isml, ismlns;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dim", &dim, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-type", type, sizeof(type), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-test", test, sizeof(test), NULL));
  if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, &da));
  PetscCall(DMSetUp(da));
  PetscCall(DMSetMatType(da, MATAIJ));
  PetscCall(DMCreateMatrix(da, &A));
  PetscCall(DMSetMatType(da, type));
  PetscCall(DMCreateMatrix(da, &S));
  PetscCall(GKFillPoisson(da, A));
  PetscCall(GKFillPoisson(da, S));
  PetscCall(PetscStrcmp(test, "coloring", &iscol));
  PetscCall(PetscStrcmp(test, "ml", &isml));
  PetscCall(PetscStrcmp(test, "mlnullspace", &ismlns));
  PetscCheck(iscol || isml || ismlns, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-test %s: coloring, ml or mlnullspace", test);
  if (iscol) PetscCall(TestColoring(A, S));
  else PetscCall(TestML(A, S, ismlns));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&S));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
