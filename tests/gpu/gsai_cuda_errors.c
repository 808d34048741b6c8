/*
   PCGSAI's device set-up on bad input and on the documented fallbacks, against the host set-up of the same matrix:
   every local problem with no fallback must raise the same error code with the same message on the device as on the
   host (the first failing row, its kind, a_kk for spd), a failed set-up must leave no M, and a later set-up must work;
   the fallbacks to the diagonal must be the same rows' count and give the host's M (1e-12).
   On several ranks (issue 19: the device set-up on every rank) the same checks run on MATMPIAIJ against
   MATMPIAIJCUSPARSE: -n <n> (default 12) sets the size and -off <k> relabels A symmetrically (row i of the test is
   rule row (i + k) mod n), so that the rows that fail or fall back lie on another rank than the first; the errors
   must name the relabelled rows. With at most 1024 rows on a rank the general type's problems are solved on the host
   by that rank (gsaicuda.cu), with more on its device.
*/
#include "gktest.h"
#include "../pc/gsairules.h"

static PetscInt off = 0; /* -off: row i of A is row (i + off) mod n of the rule */

/* the row of A that is row r of the rule */
static PetscInt Row(PetscInt n, PetscInt r)
{
  return ((r - off) % n + n) % n;
}

static PetscErrorCode Build(PetscInt n, Rule rule, Mat *A)
{
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n, n, 5, NULL, 5, NULL, A));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++)
    for (PetscInt j = 0; j < n; j++) {
      PetscBool   stored = PETSC_FALSE;
      PetscScalar v      = rule(n, (i + off) % n, (j + off) % n, &stored);
      if (stored) PetscCall(MatSetValue(*A, i, j, v, INSERT_VALUES));
    }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MakePC(Mat A, PCGSAIType type, PCSide side, PC *pc)
{
  PetscFunctionBegin;
  PetscCall(PCCreate(PETSC_COMM_WORLD, pc));
  PetscCall(PCSetType(*pc, PCGSAI));
  PetscCall(PCSetOperators(*pc, A, A));
  PetscCall(PCGSAISetType(*pc, type));
  PetscCall(PCGSAISetPattern(*pc, PCGSAI_PATTERN_A)); /* the pattern these cases were written for (the default is auto) */
  if (type == PCGSAI_GENERAL) PetscCall(PCGSAISetSide(*pc, side));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device and the host set-ups of A must both fail with code and a message that says text */
static PetscErrorCode ExpectSameError(Mat A, PCGSAIType type, PCSide side, PetscErrorCode code, const char *text, const char *what)
{
  Mat            Ad;
  PC             pc;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(MatConvert(A, MATAIJCUSPARSE, MAT_INITIAL_MATRIX, &Ad));
  for (int dev = 0; dev < 2; dev++) {
    char w[256];
    PetscCall(PetscSNPrintf(w, sizeof(w), "%s (%s)", what, dev ? "device" : "host"));
    PetscCall(MakePC(dev ? Ad : A, type, side, &pc));
    PetscCall(GKExpectErrorBegin());
    ierr = PCSetUp(pc);
    PetscCall(GKExpectErrorEnd(ierr, code, text, w));
    {
      Mat            M;
      PetscErrorCode ierr2;
      PetscCall(GKExpectErrorBegin());
      ierr2 = PCGSAIGetMatrix(pc, &M);
      PetscCall(GKExpectErrorEnd(ierr2, PETSC_ERR_ARG_WRONGSTATE, "no approximate inverse", w));
    }
    PetscCall(PCDestroy(&pc));
  }
  PetscCall(MatDestroy(&Ad));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* pcd (device matrix) and pch (host) set up: the same fallback count nf, M finite and equal to 1e-12; pcd's M built on
   the device, or on the host where the device set-up hands the matrix to the host (zero diagonals, general type) */
static PetscErrorCode CompareSetUps(PC pcd, PC pch, PetscBool expectdevice, PetscInt nfexpect, const char *what)
{
  Mat       Md, Mh;
  PetscInt  nfd, nfh;
  PetscBool ond;
  PetscReal nrm;

  PetscFunctionBegin;
  PetscCall(PCGSAIGetSetUpInfo(pcd, NULL, &nfd, &ond));
  PetscCall(PCGSAIGetSetUpInfo(pch, NULL, &nfh, NULL));
  PetscCheck(ond == expectdevice, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: M was built on the %s, expected the %s", what, ond ? "device" : "host", expectdevice ? "device" : "host");
  PetscCheck(nfd == nfexpect && nfh == nfexpect, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: %" PetscInt_FMT " fallbacks on the device, %" PetscInt_FMT " on the host, expected %" PetscInt_FMT, what, nfd, nfh, nfexpect);
  PetscCall(PCGSAIGetMatrix(pcd, &Md));
  PetscCall(PCGSAIGetMatrix(pch, &Mh));
  PetscCall(MatNorm(Md, NORM_FROBENIUS, &nrm));
  PetscCheck(!PetscIsInfOrNanReal(nrm), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the device M has Inf or NaN entries", what);
  PetscCall(GKCheckMatClose(Md, Mh, 1e-12, what));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: %s -> %" PetscInt_FMT " fallbacks, device M = host M, ||M||_F = %g\n", what, nfd, (double)nrm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ExpectFallbacks(Mat A, PCGSAIType type, PCSide side, PetscBool expectdevice, PetscInt nfexpect, const char *what)
{
  Mat Ad;
  PC  pcd, pch;

  PetscFunctionBegin;
  PetscCall(MatConvert(A, MATAIJCUSPARSE, MAT_INITIAL_MATRIX, &Ad));
  PetscCall(MakePC(Ad, type, side, &pcd));
  PetscCall(MakePC(A, type, side, &pch));
  PetscCall(PCSetUp(pcd));
  PetscCall(PCSetUp(pch));
  PetscCall(CompareSetUps(pcd, pch, expectdevice, nfexpect, what));
  PetscCall(PCDestroy(&pcd));
  PetscCall(PCDestroy(&pch));
  PetscCall(MatDestroy(&Ad));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat            A, Ad, Z, Zd, W;
  PC             pcd, pch;
  PetscErrorCode ierr;
  PetscInt       n = 12;
  char           a33[64], row5[64], col5[64], a55[64];

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-off", &off, NULL));
  PetscCheck(n >= 12 && off >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n must be at least 12 and -off not negative");
  /* the messages name the rows of A: rule rows 3 and 5 relabelled */
  PetscCall(PetscSNPrintf(a33, sizeof(a33), "A(%" PetscInt_FMT ",%" PetscInt_FMT ") = 0", Row(n, 3), Row(n, 3)));
  PetscCall(PetscSNPrintf(a55, sizeof(a55), "A(%" PetscInt_FMT ",%" PetscInt_FMT ") = 0", Row(n, 5), Row(n, 5)));
  PetscCall(PetscSNPrintf(row5, sizeof(row5), "row %" PetscInt_FMT " of A has no nonzero entry", Row(n, 5)));
  PetscCall(PetscSNPrintf(col5, sizeof(col5), "column %" PetscInt_FMT " of A has no nonzero entry", Row(n, 5)));

  /* no fallback: the same error on the device as on the host */
  PetscCall(Build(n, ZeroDiag3, &A));
  PetscCall(ExpectSameError(A, PCGSAI_SPD, PC_LEFT, PETSC_ERR_ARG_WRONG, a33, "spd, zero diagonal"));
  PetscCall(ExpectFallbacks(A, PCGSAI_GENERAL, PC_LEFT, PETSC_FALSE, 0, "general left, zero diagonal reached by the pattern"));
  PetscCall(ExpectFallbacks(A, PCGSAI_GENERAL, PC_RIGHT, PETSC_FALSE, 0, "general right, zero diagonal reached by the pattern"));
  PetscCall(MatDestroy(&A));
  PetscCall(Build(n, Shift, &A));
  /* a zero diagonal that the pattern reaches through the transpose's structure (issue 18): no error, no fallback */
  PetscCall(ExpectFallbacks(A, PCGSAI_GENERAL, PC_LEFT, PETSC_FALSE, 0, "cyclic shift, left"));
  PetscCall(ExpectFallbacks(A, PCGSAI_GENERAL, PC_RIGHT, PETSC_FALSE, 0, "cyclic shift, right"));
  PetscCall(MatDestroy(&A));
  PetscCall(Build(n, EmptyRowCol5, &A));
  PetscCall(ExpectSameError(A, PCGSAI_GENERAL, PC_LEFT, PETSC_ERR_ARG_WRONG, row5, "empty row, left"));
  PetscCall(ExpectSameError(A, PCGSAI_GENERAL, PC_RIGHT, PETSC_ERR_ARG_WRONG, col5, "empty column, right"));
  PetscCall(ExpectSameError(A, PCGSAI_SPD, PC_LEFT, PETSC_ERR_ARG_WRONG, a55, "empty row, spd"));
  PetscCall(MatDestroy(&A));

  /* the fallbacks to the diagonal */
  PetscCall(Build(n, NearlyDependent, &A));
  PetscCall(ExpectFallbacks(A, PCGSAI_GENERAL, PC_LEFT, PETSC_TRUE, 2, "nearly dependent rows 0 and 1, left"));
  PetscCall(MatDestroy(&A));
  PetscCall(Build(n, NearlySingularSPD, &A));
  PetscCall(ExpectFallbacks(A, PCGSAI_SPD, PC_LEFT, PETSC_TRUE, 1, "nearly singular 2x2 block, spd"));
  PetscCall(MatDestroy(&A));

  /* SAME_NONZERO_PATTERN: a good set-up, new values that fail (no M afterwards), the good values again */
  PetscCall(Build(n, Tridiag, &A));
  PetscCall(Build(n, ZeroDiag3, &Z));
  PetscCall(MatConvert(A, MATAIJCUSPARSE, MAT_INITIAL_MATRIX, &Ad));
  PetscCall(MatConvert(Z, MATAIJCUSPARSE, MAT_INITIAL_MATRIX, &Zd));
  PetscCall(MatDuplicate(Ad, MAT_COPY_VALUES, &W));
  PetscCall(MakePC(W, PCGSAI_SPD, PC_LEFT, &pcd));
  PetscCall(MakePC(A, PCGSAI_SPD, PC_LEFT, &pch));
  PetscCall(PCSetUp(pcd));
  PetscCall(PCSetUp(pch));
  PetscCall(CompareSetUps(pcd, pch, PETSC_TRUE, 0, "spd, tridiagonal"));
  PetscCall(MatCopy(Zd, W, SAME_NONZERO_PATTERN));
  PetscCall(PCSetOperators(pcd, W, W));
  PetscCall(GKExpectErrorBegin());
  ierr = PCSetUp(pcd);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_WRONG, a33, "spd, SAME_NONZERO_PATTERN with A(3,3) = 0 (device)"));
  {
    Mat M;
    PetscCall(GKExpectErrorBegin());
    ierr = PCGSAIGetMatrix(pcd, &M);
    PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_WRONGSTATE, "no approximate inverse", "no M after a failed set-up (device)"));
  }
  PetscCall(MatCopy(Ad, W, SAME_NONZERO_PATTERN));
  PetscCall(PCSetOperators(pcd, W, W));
  PetscCall(PCSetUp(pcd));
  PetscCall(CompareSetUps(pcd, pch, PETSC_TRUE, 0, "spd, tridiagonal again after the failed set-up"));
  PetscCall(PCDestroy(&pcd));
  PetscCall(PCDestroy(&pch));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&Ad));
  PetscCall(MatDestroy(&W));
  PetscCall(MatDestroy(&Z));
  PetscCall(MatDestroy(&Zd));

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "gsai_cuda_errors: ok\n"));
  PetscCall(PetscFinalize());
  return 0;
}
