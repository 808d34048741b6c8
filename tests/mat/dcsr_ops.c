static const char help[] = "MATDCSR against AIJ (MAT_NEW_NONZERO_ALLOCATION_ERR false, same insertions) after every round of new entries.\n"
                           "  -n <N>         global rows (default 60)\n"
                           "  -rounds <r>    rounds of new entries (default 5)\n"
                           "  -per <k>       MatSetValues() calls per rank per round (default 40)\n"
                           "  -type <t>      the type under test (default dcsr); the -mat_dcsr_* options reach it\n"
                           "  -tol <t>       relative tolerance of arithmetic results (default 1e-12)\n";

/*
   A round: every rank calls MatSetValues() on random rows (its own and, in ADD rounds, any rank's; in INSERT rounds
   only its own and those of the next rank, so that no entry gets two INSERTs from two ranks whose order assembly
   does not define) at random columns (new off-process columns included), with duplicates inside a call,
   row- and column-oriented; ADD and INSERT alternate. After each assembly every operation is compared with AIJ.
*/
#include <petscmat.h>
#include <unistd.h>
#include <stdio.h>
#include "gktest.h"

static unsigned long long Rand(unsigned long long *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static PetscScalar RandVal(unsigned long long *s)
{
  return (PetscScalar)((double)(Rand(s) % 2001) / 1000.0 - 1.0);
}

/* every operation that reads the matrix, A against the AIJ reference R */
static PetscErrorCode CompareAll(Mat A, Mat R, PetscReal tol, const char *when)
{
  Vec       x, y, z, ya, yr, xt, yt;
  PetscInt  rstart, rend, N, K, maxseg;
  PetscReal na, nr;
  NormType  types[3] = {NORM_1, NORM_FROBENIUS, NORM_INFINITY};
  MatInfo   ia, ir;
  char      what[256];
  PetscRandom rnd;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: MatConvert", when));
  PetscCall(GKCheckMatClose(A, R, tol, what));
  PetscCall(MatCreateVecs(R, &x, &y));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecDuplicate(y, &ya));
  PetscCall(VecDuplicate(y, &yr));
  PetscCall(VecDuplicate(x, &xt));
  PetscCall(VecDuplicate(x, &yt));
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)A), &rnd));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSetRandom(z, rnd));
  PetscCall(VecSetRandom(xt, rnd));
  PetscCall(PetscRandomDestroy(&rnd));

  PetscCall(MatMult(A, x, ya));
  PetscCall(MatMult(R, x, yr));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: MatMult", when));
  PetscCall(GKCheckVecClose(ya, yr, tol, what));
  PetscCall(MatMultAdd(A, x, z, ya));
  PetscCall(MatMultAdd(R, x, z, yr));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: MatMultAdd", when));
  PetscCall(GKCheckVecClose(ya, yr, tol, what));
  PetscCall(VecCopy(z, ya));
  PetscCall(VecCopy(z, yr));
  PetscCall(MatMultAdd(A, x, ya, ya));
  PetscCall(MatMultAdd(R, x, yr, yr));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: MatMultAdd in place", when));
  PetscCall(GKCheckVecClose(ya, yr, tol, what));
  PetscCall(MatMultTranspose(A, y, xt));
  PetscCall(MatMultTranspose(R, y, yt));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: MatMultTranspose", when));
  PetscCall(GKCheckVecClose(xt, yt, tol, what));
  PetscCall(VecSet(xt, 1.0));
  PetscCall(VecSet(yt, 1.0));
  PetscCall(MatMultTransposeAdd(A, z, xt, xt));
  PetscCall(MatMultTransposeAdd(R, z, yt, yt));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: MatMultTransposeAdd", when));
  PetscCall(GKCheckVecClose(xt, yt, tol, what));
  PetscCall(MatGetDiagonal(A, ya));
  PetscCall(MatGetDiagonal(R, yr));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: MatGetDiagonal", when));
  PetscCall(GKCheckVecClose(ya, yr, tol, what));

  for (PetscInt t = 0; t < 3; t++) {
    PetscCall(MatNorm(A, types[t], &na));
    PetscCall(MatNorm(R, types[t], &nr));
    PetscCheck(PetscAbsReal(na - nr) <= tol * nr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: norm %s %g, AIJ %g", when, NormTypes[types[t]], (double)na, (double)nr);
  }
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &ia));
  PetscCall(MatGetInfo(R, MAT_GLOBAL_SUM, &ir));
  PetscCheck(ia.nz_used == ir.nz_used, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: MatGetInfo nz_used %g, AIJ %g", when, ia.nz_used, ir.nz_used);

  /* rows: same columns, sorted, no duplicates, same values; and MatGetValues() on them and next to them */
  PetscCall(MatGetOwnershipRange(R, &rstart, &rend));
  PetscCall(MatGetSize(R, NULL, &N));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt           nca, ncr;
    const PetscInt    *ca, *cr;
    const PetscScalar *va, *vr;
    PetscScalar        g[2];
    PetscInt           gc[2];

    PetscCall(MatGetRow(A, r, &nca, &ca, &va));
    PetscCall(MatGetRow(R, r, &ncr, &cr, &vr));
    PetscCheck(nca == ncr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: row %" PetscInt_FMT " has %" PetscInt_FMT " entries, AIJ %" PetscInt_FMT, when, r, nca, ncr);
    for (PetscInt k = 0; k < nca; k++) {
      PetscCheck(ca[k] == cr[k], PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: row %" PetscInt_FMT " entry %" PetscInt_FMT ": column %" PetscInt_FMT ", AIJ %" PetscInt_FMT, when, r, k, ca[k], cr[k]);
      PetscCheck(k == 0 || ca[k] > ca[k - 1], PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: row %" PetscInt_FMT " not sorted or has a duplicate", when, r);
      PetscCheck(PetscAbsScalar(va[k] - vr[k]) <= tol * PetscMax(1.0, PetscAbsScalar(vr[k])) || (PetscIsNanScalar(va[k]) && PetscIsNanScalar(vr[k])), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: value (%" PetscInt_FMT ",%" PetscInt_FMT ") %g, AIJ %g", when, r, ca[k], (double)PetscRealPart(va[k]), (double)PetscRealPart(vr[k]));
    }
    gc[0] = nca ? ca[nca / 2] : 0;
    gc[1] = (r * 7 + 3) % N;
    PetscCall(MatRestoreRow(R, r, &ncr, &cr, &vr));
    PetscCall(MatRestoreRow(A, r, &nca, &ca, &va));
    PetscCall(MatGetValues(A, 1, &r, 2, gc, g));
    {
      PetscScalar gr[2];
      PetscCall(MatGetValues(R, 1, &r, 2, gc, gr));
      PetscCheck(g[0] == gr[0] && g[1] == gr[1], PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: MatGetValues in row %" PetscInt_FMT " differs from AIJ", when, r);
    }
  }
  PetscCall(MatDCSRGetInfo(A, &K, &maxseg, NULL, NULL));
  PetscCheck(maxseg <= K, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: a row has %" PetscInt_FMT " segments, more than K = %" PetscInt_FMT, when, maxseg, K);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&yr));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&yt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the same MatSetValues() on both */
static PetscErrorCode SetBoth(Mat A, Mat R, PetscInt m, const PetscInt *rows, PetscInt n, const PetscInt *cols, const PetscScalar *v, InsertMode mode)
{
  PetscFunctionBegin;
  PetscCall(MatSetValues(A, m, rows, n, cols, v, mode));
  PetscCall(MatSetValues(R, m, rows, n, cols, v, mode));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AssembleBoth(Mat A, Mat R)
{
  PetscFunctionBegin;
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(R, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(R, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* operations that change the matrix: on duplicates of both */
static PetscErrorCode CompareModifying(Mat A, Mat R, PetscReal tol, PetscMPIInt size)
{
  Mat         D, DR, X;
  Vec         l, r, x, b, br;
  PetscInt    rstart, rend, N, zr[3], nz = 0;
  PetscRandom rnd;
  MatInfo     info;
  PetscReal   nrm;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(R, &rstart, &rend));
  PetscCall(MatGetSize(R, &N, NULL));
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)A), &rnd));
  PetscCall(MatCreateVecs(R, &r, &l));
  PetscCall(VecSetRandom(l, rnd));
  PetscCall(VecSetRandom(r, rnd));

  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &D));
  PetscCall(MatDuplicate(R, MAT_COPY_VALUES, &DR));
  PetscCall(CompareAll(D, DR, tol, "MatDuplicate"));
  PetscCall(MatScale(D, 2.5));
  PetscCall(MatScale(DR, 2.5));
  PetscCall(CompareAll(D, DR, tol, "MatScale"));
  PetscCall(MatShift(D, -1.25));
  PetscCall(MatShift(DR, -1.25));
  PetscCall(CompareAll(D, DR, tol, "MatShift"));
  PetscCall(MatDiagonalScale(D, l, r));
  PetscCall(MatDiagonalScale(DR, l, r));
  PetscCall(CompareAll(D, DR, tol, "MatDiagonalScale"));
  PetscCall(MatAXPY(D, 0.5, A, SUBSET_NONZERO_PATTERN));
  PetscCall(MatAXPY(DR, 0.5, R, SUBSET_NONZERO_PATTERN));
  PetscCall(CompareAll(D, DR, tol, "MatAXPY same pattern"));
  /* X: AIJ with a pattern of its own (a "shifted" diagonal, new off-process columns on several ranks) */
  PetscCall(MatCreateAIJ(PetscObjectComm((PetscObject)A), rend - rstart, rend - rstart, N, N, 2, NULL, 2, NULL, &X));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt    c[2] = {(i * 5 + 11) % N, (i + N / 2) % N};
    PetscScalar v[2] = {0.3, -0.7};
    if (c[0] == c[1]) c[1] = (c[1] + 1) % N;
    PetscCall(MatSetValues(X, 1, &i, 2, c, v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAXPY(D, -2.0, X, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatAXPY(DR, -2.0, X, DIFFERENT_NONZERO_PATTERN));
  PetscCall(CompareAll(D, DR, tol, "MatAXPY different pattern"));
  PetscCall(MatDestroy(&X));

  /* zeroed rows (some owned elsewhere) with a diagonal value and a right-hand side */
  PetscCall(MatCreateVecs(R, &x, &b));
  PetscCall(VecDuplicate(b, &br));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSetRandom(b, rnd));
  PetscCall(VecCopy(b, br));
  zr[nz++] = rstart;
  if (rend - rstart > 2) zr[nz++] = rstart + 2;
  zr[nz++] = (rend + 1) % N;
  PetscCall(MatZeroRows(D, nz, zr, 3.0, x, b));
  PetscCall(MatZeroRows(DR, nz, zr, 3.0, x, br));
  PetscCall(GKCheckVecClose(b, br, tol, "MatZeroRows right-hand side"));
  PetscCall(CompareAll(D, DR, tol, "MatZeroRows"));
  PetscCall(MatZeroRowsColumns(D, nz, zr, 2.0, x, b));
  PetscCall(MatZeroRowsColumns(DR, nz, zr, 2.0, x, br));
  PetscCall(GKCheckVecClose(b, br, tol, "MatZeroRowsColumns right-hand side"));
  PetscCall(CompareAll(D, DR, tol, "MatZeroRowsColumns"));
  /* copy back A's values into D (different pattern: D has more) */
  PetscCall(MatCopy(A, D, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatCopy(R, DR, DIFFERENT_NONZERO_PATTERN));
  PetscCall(CompareAll(D, DR, tol, "MatCopy"));
  PetscCall(MatZeroEntries(D));
  PetscCall(MatZeroEntries(DR));
  PetscCall(CompareAll(D, DR, tol, "MatZeroEntries"));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&DR));

  /* duplicate without values: A's pattern, zeros */
  PetscCall(MatDuplicate(A, MAT_DO_NOT_COPY_VALUES, &D));
  PetscCall(MatNorm(D, NORM_FROBENIUS, &nrm));
  PetscCall(MatGetInfo(D, MAT_GLOBAL_SUM, &info));
  {
    MatInfo ir;
    PetscCall(MatGetInfo(R, MAT_GLOBAL_SUM, &ir));
    PetscCheck(nrm == 0.0 && info.nz_used == ir.nz_used, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatDuplicate(MAT_DO_NOT_COPY_VALUES): norm %g, nonzeros %g (want 0 and %g)", (double)nrm, info.nz_used, ir.nz_used);
  }
  PetscCall(MatDestroy(&D));

  /* conversions both ways */
  PetscCall(MatConvert(R, MATDCSR, MAT_INITIAL_MATRIX, &D));
  PetscCall(CompareAll(D, R, tol, "MatConvert AIJ -> DCSR"));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &D));
  PetscCall(MatConvert(D, MATAIJ, MAT_INPLACE_MATRIX, &D));
  PetscCall(GKCheckMatClose(D, R, tol, "MatConvert DCSR -> AIJ in place"));
  PetscCall(MatDestroy(&D));

  /* MatLoad() of an AIJ file into a MATDCSR matrix */
  {
    PetscViewer vw;
    char        fname[PETSC_MAX_PATH_LEN];
    int         pid = (int)getpid();
    PetscCallMPI(MPI_Bcast(&pid, 1, MPI_INT, 0, PetscObjectComm((PetscObject)A)));
    PetscCall(PetscSNPrintf(fname, sizeof(fname), "/tmp/gpukit_dcsr_ops_%d.bin", pid));
    PetscCall(PetscViewerBinaryOpen(PetscObjectComm((PetscObject)A), fname, FILE_MODE_WRITE, &vw));
    PetscCall(MatView(R, vw));
    PetscCall(PetscViewerDestroy(&vw));
    PetscCall(MatCreate(PetscObjectComm((PetscObject)A), &D));
    PetscCall(MatSetType(D, MATDCSR));
    PetscCall(PetscViewerBinaryOpen(PetscObjectComm((PetscObject)A), fname, FILE_MODE_READ, &vw));
    PetscCall(MatLoad(D, vw));
    PetscCall(PetscViewerDestroy(&vw));
    PetscCall(CompareAll(D, R, tol, "MatLoad"));
    PetscCall(MatDestroy(&D));
    if (!size || !rstart) { /* rank 0 removes the file and its .info */
      char info[PETSC_MAX_PATH_LEN + 8];
      PetscCall(PetscSNPrintf(info, sizeof(info), "%s.info", fname));
      (void)remove(fname);
      (void)remove(info);
    }
  }

  /* products through the forwarder */
  {
    Mat T, TR, P, PR;
    PetscCall(MatTranspose(A, MAT_INITIAL_MATRIX, &T));
    PetscCall(MatTranspose(R, MAT_INITIAL_MATRIX, &TR));
    PetscCall(GKCheckMatClose(T, TR, tol, "MatTranspose"));
    PetscCall(MatMatMult(A, A, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &P));
    PetscCall(MatMatMult(R, R, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &PR));
    PetscCall(GKCheckMatClose(P, PR, tol, "MatMatMult"));
    PetscCall(MatDestroy(&T));
    PetscCall(MatDestroy(&TR));
    PetscCall(MatDestroy(&P));
    PetscCall(MatDestroy(&PR));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&br));
  PetscCall(VecDestroy(&l));
  PetscCall(VecDestroy(&r));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat                A, R;
  PetscInt           N = 60, rounds = 5, per = 40, rstart, rend, *dnnz, *onnz, K, maxseg, nlocal, *range, *sent, nsent = 0;
  PetscReal          tol = 1e-12;
  PetscMPIInt        rank, size;
  char               type[64] = MATDCSR;
  unsigned long long seed;
  PetscObjectState   sa0, sr0, sa1, sr1;
  PetscCount         used, cap;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &N, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-rounds", &rounds, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-per", &per, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &tol, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-type", type, sizeof(type), NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscMalloc1(2 * per + 2, &sent));
  seed = 88172645463325252ULL + 7919ULL * (unsigned long long)rank;

  /* a tridiagonal start, preallocated exactly (AIJ: then the option is turned off, as the issue says) */
  nlocal = N / size + (rank < N % size ? 1 : 0);
  PetscCallMPI(MPI_Scan(&nlocal, &rend, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  rstart = rend - nlocal;
  PetscCall(PetscMalloc1(size + 1, &range));
  range[0] = 0;
  PetscCallMPI(MPI_Allgather(&rend, 1, MPIU_INT, range + 1, 1, MPIU_INT, PETSC_COMM_WORLD));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, nlocal, nlocal, N, N));
  PetscCall(MatSetType(A, type));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &R));
  PetscCall(MatSetSizes(R, nlocal, nlocal, N, N));
  PetscCall(MatSetType(R, MATAIJ));
  PetscCall(PetscMalloc2(rend - rstart, &dnnz, rend - rstart, &onnz));
  for (PetscInt i = rstart; i < rend; i++) {
    dnnz[i - rstart] = onnz[i - rstart] = 0;
    for (PetscInt c = i - 1; c <= i + 1; c++) {
      if (c < 0 || c >= N) continue;
      if (c >= rstart && c < rend) dnnz[i - rstart]++;
      else onnz[i - rstart]++;
    }
  }
  PetscCall(MatXAIJSetPreallocation(A, 1, dnnz, onnz, NULL, NULL));
  PetscCall(MatXAIJSetPreallocation(R, 1, dnnz, onnz, NULL, NULL));
  PetscCall(PetscFree2(dnnz, onnz));
  PetscCall(MatSetOption(R, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt    c[3] = {i - 1, i, i + 1}; /* -1 is skipped, N is replaced */
    PetscScalar v[3] = {-1.0, 4.0, -1.0};
    if (c[2] == N) c[2] = -1;
    PetscCall(SetBoth(A, R, 1, &i, 3, c, v, INSERT_VALUES));
  }
  PetscCall(AssembleBoth(A, R));
  PetscCall(CompareAll(A, R, tol, "initial"));

  for (PetscInt round = 1; round <= rounds; round++) {
    InsertMode mode = (round % 2) ? ADD_VALUES : INSERT_VALUES;
    PetscInt   next0 = (rend % N), nextn;
    char       when[64];

    /* INSERT rounds touch own rows and the next rank's rows only */
    nextn = size > 1 ? range[(rank + 1) % size + 1] - range[(rank + 1) % size] : 0;
    next0 = size > 1 ? range[(rank + 1) % size] : 0;
    PetscCall(MatGetNonzeroState(A, &sa0));
    PetscCall(MatGetNonzeroState(R, &sr0));
    nsent = 0;
    for (PetscInt k = 0; k < per; k++) {
      PetscInt    row, nc = 1 + (PetscInt)(Rand(&seed) % 4), cols[4];
      PetscScalar v[4];

      if (mode == ADD_VALUES) row = (PetscInt)(Rand(&seed) % N);
      else if (nextn && Rand(&seed) % 3 == 0) row = next0 + (PetscInt)(Rand(&seed) % nextn);
      else row = rstart + (PetscInt)(Rand(&seed) % (rend - rstart));
      for (PetscInt l = 0; l < nc; l++) {
        cols[l] = (PetscInt)(Rand(&seed) % N);
        v[l]    = RandVal(&seed);
      }
      if (nc > 2) cols[nc - 1] = cols[0]; /* a duplicate inside the call */
      if (mode == INSERT_VALUES && (row < rstart || row >= rend)) {
        /* AIJ's stash sorts entries of other ranks' rows without keeping their order, so which of two INSERTs at
           one location wins is undefined there: send each location once */
        PetscBool seen = PETSC_FALSE;
        nc = 1;
        for (PetscInt q = 0; q < nsent; q++)
          if (sent[2 * q] == row && sent[2 * q + 1] == cols[0]) seen = PETSC_TRUE;
        if (seen) continue;
        sent[2 * nsent]     = row;
        sent[2 * nsent + 1] = cols[0];
        nsent++;
      }
      PetscCall(SetBoth(A, R, 1, &row, nc, cols, v, mode));
    }
    /* a 2 x 3 block, column-oriented, on own rows */
    if (rend - rstart >= 2) {
      PetscInt    rows[2] = {rstart, rend - 1}, cols[3];
      PetscScalar v[6];
      for (PetscInt l = 0; l < 3; l++) cols[l] = (PetscInt)(Rand(&seed) % N);
      for (PetscInt l = 0; l < 6; l++) v[l] = RandVal(&seed);
      PetscCall(MatSetOption(A, MAT_ROW_ORIENTED, PETSC_FALSE));
      PetscCall(MatSetOption(R, MAT_ROW_ORIENTED, PETSC_FALSE));
      PetscCall(SetBoth(A, R, 2, rows, 3, cols, v, mode));
      PetscCall(MatSetOption(A, MAT_ROW_ORIENTED, PETSC_TRUE));
      PetscCall(MatSetOption(R, MAT_ROW_ORIENTED, PETSC_TRUE));
    }
    PetscCall(AssembleBoth(A, R));
    PetscCall(MatGetNonzeroState(A, &sa1));
    PetscCall(MatGetNonzeroState(R, &sr1));
    PetscCheck((sa1 != sa0) == (sr1 != sr0), PETSC_COMM_SELF, PETSC_ERR_PLIB, "round %" PetscInt_FMT ": nonzerostate %s, AIJ's %s", round, sa1 != sa0 ? "changed" : "did not change", sr1 != sr0 ? "changed" : "did not change");
    PetscCall(PetscSNPrintf(when, sizeof(when), "round %" PetscInt_FMT " (%s)", round, mode == ADD_VALUES ? "ADD" : "INSERT"));
    PetscCall(CompareAll(A, R, tol, when));

    /* a round of hits only: values change, the pattern does not */
    PetscCall(MatGetNonzeroState(A, &sa0));
    for (PetscInt i = rstart; i < rend; i++) {
      PetscScalar v = 0.125;
      PetscCall(SetBoth(A, R, 1, &i, 1, &i, &v, ADD_VALUES));
    }
    PetscCall(AssembleBoth(A, R));
    PetscCall(MatGetNonzeroState(A, &sa1));
    PetscCheck(sa0 == sa1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "round %" PetscInt_FMT ": nonzerostate changed by existing entries only", round);
    PetscCall(CompareAll(A, R, tol, "hits only"));
  }

  PetscCall(CompareModifying(A, R, tol, size));

  /* defragmentation: same matrix, same pattern, one segment per row */
  PetscCall(MatGetNonzeroState(A, &sa0));
  PetscCall(MatDCSRDefragment(A));
  PetscCall(MatGetNonzeroState(A, &sa1));
  PetscCheck(sa0 == sa1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatDCSRDefragment() changed nonzerostate");
  PetscCall(MatDCSRGetInfo(A, &K, &maxseg, &used, &cap));
  PetscCheck(maxseg <= 1 && used <= cap, PETSC_COMM_SELF, PETSC_ERR_PLIB, "after MatDCSRDefragment(): %" PetscInt_FMT " segments in a row, used %" PetscCount_FMT " of %" PetscCount_FMT, maxseg, used, cap);
  PetscCall(CompareAll(A, R, tol, "defragmented"));
  PetscCall(MatViewFromOptions(A, NULL, "-view_dcsr"));

  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscCall(PetscFree(range));
  PetscCall(PetscFree(sent));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dcsr_ops: all checks passed (%" PetscInt_FMT " rounds)\n", rounds));
  PetscCall(PetscFinalize());
  return 0;
}
