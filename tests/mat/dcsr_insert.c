static const char help[] = "MATDCSR insertion semantics against AIJ and bad input: options of new nonzeros, NaN, indices out of range,\n"
                           "MatSetValues() during assembly, options out of range, the public API on other types.\n"
                           "  -n <N> global rows (default 30)\n"
                           "  -skip_bad_options  leave out the options out of range (for valgrind)\n";

#include <petscmat.h>
#include "gktest.h"

static PetscErrorCode Create(MPI_Comm comm, MatType type, PetscInt N, Mat *A)
{
  PetscInt rstart, rend;

  PetscFunctionBegin;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 3, NULL)); /* "real" preallocation: AIJ refuses new nonzeros beyond it */
  PetscCall(MatMPIAIJSetPreallocation(*A, 3, NULL, 1, NULL));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscScalar v = 2.0;
    PetscCall(MatSetValues(*A, 1, &i, 1, &i, &v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Assemble(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode NNZ(Mat A, PetscLogDouble *nz)
{
  MatInfo info;

  PetscFunctionBegin;
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  *nz = info.nz_used;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* assemble A (DCSR) and R (AIJ) after the same insertions: the same entries, the same number of them (and nz when >= 0) */
static PetscErrorCode AssembleAndCompare(Mat A, Mat R, PetscLogDouble nz, const char *what)
{
  PetscLogDouble nza = 0, nzr = 0;
  char           msg[256];

  PetscFunctionBegin;
  PetscCall(Assemble(A));
  PetscCall(Assemble(R));
  PetscCall(GKCheckMatClose(A, R, 0.0, what));
  PetscCall(NNZ(A, &nza));
  PetscCall(NNZ(R, &nzr));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: the same pattern as AIJ", what));
  PetscCall(GKCheck((PetscBool)(nza == nzr && (nz < 0 || nza == nz)), msg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat              A, R;
  PetscInt         N = 30, rstart, rend, row, cols[3];
  PetscScalar      v[3];
  PetscErrorCode   ierr;
  PetscLogDouble   nza = 0, nzr = 0, nza0 = 0;
  PetscReal        na, na0;
  PetscMPIInt      rank, size;
  PetscObjectState s0, s1;
  PetscBool        skipbad = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &N, NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));

  /* 1. after real preallocation (AIJ would refuse: MAT_NEW_NONZERO_ALLOCATION_ERR is on) a new entry just works */
  PetscCall(Create(PETSC_COMM_WORLD, MATDCSR, N, &A));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  PetscCall(MatGetNonzeroState(A, &s0));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt    c[6] = {(i + 1) % N, (i + 2) % N, (i + 3) % N, (i + 4) % N, (i + 5) % N, (i + 6) % N};
    PetscScalar w[6] = {1, 2, 3, 4, 5, 6};
    PetscCall(MatSetValues(A, 1, &i, 6, c, w, ADD_VALUES));
  }
  PetscCall(Assemble(A));
  PetscCall(MatGetNonzeroState(A, &s1));
  PetscCall(NNZ(A, &nza));
  PetscCall(GKCheck((PetscBool)(nza == 7.0 * N && s1 != s0), "new nonzeros after real preallocation are inserted and nonzerostate advances"));

  /* 2. MAT_NEW_NONZERO_LOCATIONS false: new entries dropped silently, existing ones updated (as AIJ) */
  PetscCall(Create(PETSC_COMM_WORLD, MATAIJ, N, &R));
  PetscCall(MatDestroy(&A));
  PetscCall(Create(PETSC_COMM_WORLD, MATDCSR, N, &A));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
  PetscCall(MatSetOption(R, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt    c[2] = {i, (i + N / 2) % N};
    PetscScalar w[2] = {1.5, 7.0};
    PetscCall(MatSetValues(A, 1, &i, 2, c, w, ADD_VALUES));
    PetscCall(MatSetValues(R, 1, &i, 2, c, w, ADD_VALUES));
  }
  row = (rend) % N; /* another rank's row (or our first) */
  cols[0] = (row + 3) % N;
  v[0]    = 9.0;
  PetscCall(MatSetValues(A, 1, &row, 1, cols, v, ADD_VALUES));
  PetscCall(MatSetValues(R, 1, &row, 1, cols, v, ADD_VALUES));
  PetscCall(AssembleAndCompare(A, R, (PetscLogDouble)N, "MAT_NEW_NONZERO_LOCATIONS false drops new entries as AIJ"));

  /* 3. MAT_NEW_NONZERO_LOCATION_ERR: a clear error; then an existing entry still works */
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE));
  row     = rstart;
  cols[0] = (rstart + 2) % N;
  v[0]    = 1.0;
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetValues(A, 1, &row, 1, cols, v, INSERT_VALUES);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "MAT_NEW_NONZERO_LOCATION_ERR", "new nonzero with MAT_NEW_NONZERO_LOCATION_ERR"));
  PetscCall(MatSetValues(A, 1, &row, 1, &row, v, INSERT_VALUES));
  PetscCall(Assemble(A));
  PetscCall(MatSetOption(R, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE));
  PetscCall(MatSetValues(R, 1, &row, 1, &row, v, INSERT_VALUES));
  PetscCall(Assemble(R));

  /* 3b. MAT_NEW_NONZERO_ALLOCATION_ERR false after MAT_NEW_NONZERO_LOCATION_ERR replaces it, as in AIJ (what
     SNESComputeJacobianDefault() does to a DMDA's matrix): new entries are inserted, in own and off-process columns */
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(R, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt    c[2] = {(i + 2) % N, (i + N / 2 + 1) % N};
    PetscScalar w[2] = {3.0, -4.0};
    PetscCall(MatSetValues(A, 1, &i, 2, c, w, ADD_VALUES));
    PetscCall(MatSetValues(R, 1, &i, 2, c, w, ADD_VALUES));
  }
  PetscCall(AssembleAndCompare(A, R, -1, "MAT_NEW_NONZERO_ALLOCATION_ERR false after MAT_NEW_NONZERO_LOCATION_ERR: new entries inserted as AIJ"));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_LOCATIONS, PETSC_TRUE));

  /* 4. indices out of range: clear error, the matrix unchanged (also the valid entries of the same call) */
  PetscCall(NNZ(A, &nza0));
  PetscCall(MatNorm(A, NORM_FROBENIUS, &na0));
  cols[0] = (rstart + 1) % N;
  cols[1] = N + 3;
  v[0]    = 5.0;
  v[1]    = 6.0;
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetValues(A, 1, &row, 2, cols, v, ADD_VALUES);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "out of range", "column out of range"));
  cols[0] = 0;
  row     = N;
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetValues(A, 1, &row, 1, cols, v, ADD_VALUES);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "out of range", "row out of range"));
  PetscCall(Assemble(A));
  PetscCall(NNZ(A, &nza));
  PetscCall(MatNorm(A, NORM_FROBENIUS, &na));
  PetscCall(GKCheck((PetscBool)(nza == nza0 && na == na0), "matrix unchanged after the out-of-range errors"));

  /* 5. MatSetValues() between MatAssemblyBegin() and MatAssemblyEnd() */
  row = rstart;
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetValues(A, 1, &row, 1, &row, v, ADD_VALUES);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ORDER, "between MatAssemblyBegin() and MatAssemblyEnd()", "MatSetValues during assembly"));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(NNZ(A, &nza));
  PetscCall(MatNorm(A, NORM_FROBENIUS, &na));
  PetscCall(GKCheck((PetscBool)(nza == nza0 && na == na0), "matrix unchanged after MatSetValues during assembly"));

  /* 6. NaN at an existing and at a new location: propagates as in AIJ (norms NaN, products NaN at the same rows) */
  {
    Vec         x, ya, yr;
    PetscScalar nan = (PetscScalar)NAN;
    PetscReal   nr;

    PetscCall(MatDestroy(&R));
    PetscCall(Create(PETSC_COMM_WORLD, MATAIJ, N, &R));
    PetscCall(MatSetOption(R, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MatDestroy(&A));
    PetscCall(Create(PETSC_COMM_WORLD, MATDCSR, N, &A));
    if (rank == 0) {
      PetscInt r0 = 0, c1 = N - 1;
      PetscCall(MatSetValues(A, 1, &r0, 1, &r0, &nan, INSERT_VALUES));
      PetscCall(MatSetValues(R, 1, &r0, 1, &r0, &nan, INSERT_VALUES));
      r0 = N / 2;
      PetscCall(MatSetValues(A, 1, &r0, 1, &c1, &nan, INSERT_VALUES));
      PetscCall(MatSetValues(R, 1, &r0, 1, &c1, &nan, INSERT_VALUES));
    }
    PetscCall(Assemble(A));
    PetscCall(Assemble(R));
    PetscCall(MatNorm(A, NORM_FROBENIUS, &na));
    PetscCall(MatNorm(R, NORM_FROBENIUS, &nr));
    PetscCall(GKCheck((PetscBool)(PetscIsNanReal(na) && PetscIsNanReal(nr)), "NaN entries: Frobenius norm NaN as AIJ"));
    PetscCall(MatNorm(A, NORM_INFINITY, &na));
    PetscCall(MatNorm(R, NORM_INFINITY, &nr));
    PetscCall(GKCheck((PetscBool)(PetscIsNanReal(na) == PetscIsNanReal(nr)), "NaN entries: infinity norm as AIJ"));
    PetscCall(MatCreateVecs(A, &x, &ya));
    PetscCall(VecDuplicate(ya, &yr));
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(A, x, ya));
    PetscCall(MatMult(R, x, yr));
    {
      const PetscScalar *a, *b;
      PetscInt           n;
      PetscCall(VecGetLocalSize(ya, &n));
      PetscCall(VecGetArrayRead(ya, &a));
      PetscCall(VecGetArrayRead(yr, &b));
      for (PetscInt i = 0; i < n; i++) PetscCheck(PetscIsNanScalar(a[i]) == PetscIsNanScalar(b[i]) && (PetscIsNanScalar(a[i]) || a[i] == b[i]), PETSC_COMM_SELF, PETSC_ERR_PLIB, "NaN product: local row %" PetscInt_FMT " differs from AIJ", i);
      PetscCall(VecRestoreArrayRead(ya, &a));
      PetscCall(VecRestoreArrayRead(yr, &b));
    }
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&ya));
    PetscCall(VecDestroy(&yr));
  }

  /* 7. zero entries are structural nonzeros (AIJ keeps them), unless MAT_IGNORE_ZERO_ENTRIES */
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscCall(Create(PETSC_COMM_WORLD, MATDCSR, N, &A));
  PetscCall(Create(PETSC_COMM_WORLD, MATAIJ, N, &R));
  PetscCall(MatSetOption(R, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  for (PetscInt pass = 0; pass < 2; pass++) {
    if (pass) {
      PetscCall(MatSetOption(A, MAT_IGNORE_ZERO_ENTRIES, PETSC_TRUE));
      PetscCall(MatSetOption(R, MAT_IGNORE_ZERO_ENTRIES, PETSC_TRUE));
    }
    for (PetscInt i = rstart; i < rend; i++) {
      PetscInt    c = (i + 1 + pass) % N;
      PetscScalar z = 0.0;
      PetscCall(MatSetValues(A, 1, &i, 1, &c, &z, ADD_VALUES));
      PetscCall(MatSetValues(R, 1, &i, 1, &c, &z, ADD_VALUES));
    }
    PetscCall(Assemble(A));
    PetscCall(Assemble(R));
    PetscCall(NNZ(A, &nza));
    PetscCall(NNZ(R, &nzr));
    PetscCheck(nza == nzr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "zero entries (pass %" PetscInt_FMT "): %g nonzeros, AIJ %g", pass, nza, nzr);
  }

  /* 8. options out of range (-skip_bad_options under valgrind: PETSc leaks the options title of an interrupted
        MatSetFromOptions()) */
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-skip_bad_options", &skipbad, NULL));
  if (!skipbad) {
    const char *bad[][2] = {
      {"-mat_dcsr_max_segments", "0"},
      {"-mat_dcsr_max_segments", "65"},
      {"-mat_dcsr_slack", "-1"},
      {"-mat_dcsr_defrag_slack", "-0.5"},
      {"-mat_dcsr_min_segment", "0"},
      {"-mat_dcsr_capacity_factor", "0.5"},
      {"-mat_dcsr_defrag_fraction", "2"}
    };
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
      Mat  B;
      char what[128];
      PetscCall(PetscOptionsSetValue(NULL, bad[k][0], bad[k][1]));
      PetscCall(MatCreate(PETSC_COMM_WORLD, &B));
      PetscCall(MatSetSizes(B, PETSC_DECIDE, PETSC_DECIDE, N, N));
      PetscCall(MatSetType(B, MATDCSR));
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s %s", bad[k][0], bad[k][1]));
      PetscCall(GKExpectErrorBegin());
      ierr = MatSetFromOptions(B);
      PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, bad[k][0], what));
      PetscCall(PetscOptionsClearValue(NULL, bad[k][0]));
      PetscCall(MatDestroy(&B));
    }
  }

  /* 9. the public API on other types */
  PetscCall(GKExpectErrorBegin());
  ierr = MatDCSRDefragment(R);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_WRONG, "only for MATDCSR", "MatDCSRDefragment on AIJ"));
  PetscCall(GKExpectErrorBegin());
  ierr = MatDCSRGetInfo(R, NULL, NULL, NULL, NULL);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_WRONG, "only for MATDCSR", "MatDCSRGetInfo on AIJ"));
  PetscCall(GKExpectErrorBegin());
  ierr = MatDCSRSetValuesCOODevice(A, 0, NULL, NULL, NULL, INSERT_VALUES);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_SUP, "only for MATDCSRCUDA", "MatDCSRSetValuesCOODevice on MATDCSR"));

  /* 10. no preallocation at all: MatSetUp() and insertion grow the storage */
  {
    Mat B;
    PetscCall(MatCreate(PETSC_COMM_WORLD, &B));
    PetscCall(MatSetSizes(B, PETSC_DECIDE, PETSC_DECIDE, N, N));
    PetscCall(MatSetType(B, MATDCSR));
    PetscCall(MatSetUp(B));
    PetscCall(MatGetOwnershipRange(B, &rstart, &rend));
    for (PetscInt i = rstart; i < rend; i++)
      for (PetscInt j = 0; j < N; j += 3) {
        PetscScalar w = (PetscScalar)(i + j);
        PetscCall(MatSetValues(B, 1, &i, 1, &j, &w, INSERT_VALUES));
      }
    PetscCall(Assemble(B));
    PetscCall(NNZ(B, &nza));
    PetscCall(GKCheck((PetscBool)(nza == (PetscLogDouble)(N * ((N + 2) / 3))), "no preallocation: every entry stored"));
    PetscCall(MatDestroy(&B));
  }

  /* 11. the defragmentation's slack (-mat_dcsr_defrag_slack): 0 (the default) lays the rows back to back, so the used
         slots are the stored entries; s > 0 leaves ceil(s * len) after each row. The product is unchanged. */
  for (int k = 0; k < 2; k++) {
    Mat        B;
    Vec        x, y0, y1;
    PetscCount used, cap;
    PetscInt   K, maxseg;
    PetscReal  err;

    if (k) PetscCall(PetscOptionsSetValue(NULL, "-mat_dcsr_defrag_slack", "1"));
    PetscCall(MatCreate(PETSC_COMM_WORLD, &B));
    PetscCall(MatSetSizes(B, PETSC_DECIDE, PETSC_DECIDE, N, N));
    PetscCall(MatSetType(B, MATDCSR));
    PetscCall(MatSetFromOptions(B));
    if (k) PetscCall(PetscOptionsClearValue(NULL, "-mat_dcsr_defrag_slack"));
    PetscCall(MatSeqAIJSetPreallocation(B, 3, NULL));
    PetscCall(MatMPIAIJSetPreallocation(B, 3, NULL, 1, NULL));
    PetscCall(MatGetOwnershipRange(B, &rstart, &rend));
    for (PetscInt i = rstart; i < rend; i++) {
      PetscInt    c[3] = {i - 1, i, i + 1 < N ? i + 1 : -1};
      PetscScalar w[3] = {-1.0, 4.0, -1.0};
      PetscCall(MatSetValues(B, 1, &i, 3, c, w, INSERT_VALUES));
    }
    PetscCall(Assemble(B));
    for (PetscInt i = rstart; i < rend; i += 2) { /* new entries: second segments */
      PetscInt    j = (i * 7 + 5) % N;
      PetscScalar w = 0.5 + (PetscScalar)i;
      PetscCall(MatSetValues(B, 1, &i, 1, &j, &w, ADD_VALUES));
    }
    PetscCall(Assemble(B));
    PetscCall(MatCreateVecs(B, &x, &y0));
    PetscCall(VecDuplicate(y0, &y1));
    PetscCall(VecSetRandom(x, NULL));
    PetscCall(MatMult(B, x, y0));
    PetscCall(MatDCSRDefragment(B));
    PetscCall(MatMult(B, x, y1));
    PetscCall(VecAXPY(y1, -1.0, y0));
    PetscCall(VecNorm(y1, NORM_INFINITY, &err));
    PetscCall(MatDCSRGetInfo(B, &K, &maxseg, &used, &cap));
    PetscCall(NNZ(B, &nza));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  -mat_dcsr_defrag_slack %d: %" PetscCount_FMT " slots used for %g entries after MatDCSRDefragment()\n", k, used, (double)nza));
    PetscCall(GKCheck((PetscBool)(maxseg <= 1), "after MatDCSRDefragment() every row has at most one segment"));
    PetscCall(GKCheck((PetscBool)((PetscLogDouble)used == (k ? 2 : 1) * nza), k ? "-mat_dcsr_defrag_slack 1: a defragmented row of length l takes 2 l slots" : "-mat_dcsr_defrag_slack 0 (default): the defragmented rows take exactly their entries' slots"));
    PetscCall(GKCheck((PetscBool)(err <= 1e-12 * N), "MatDCSRDefragment() leaves the product unchanged"));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y0));
    PetscCall(VecDestroy(&y1));
    PetscCall(MatDestroy(&B));
  }

  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dcsr_insert: all checks passed\n"));
  PetscCall(PetscFinalize());
  return 0;
}
