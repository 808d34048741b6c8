static const char help[] = "Timing of MATDCSR on the host (one rank): inserting a batch of new random nonzeros into an assembled matrix,\n"
                           "against AIJ with MAT_NEW_NONZERO_ALLOCATION_ERR false and against a rebuild through the COO interface;\n"
                           "MatMult of the fragmented and the defragmented matrix against AIJ.\n"
                           "  -m <m>        2D 5-point Laplacian of m x m rows (default 448: about 1M nonzeros)\n"
                           "  -frac <f>     new nonzeros as a fraction of nnz (default 0.002)\n"
                           "  -reps <r>     MatMult repetitions (default 50; the fastest single product is reported, the three matrices alternating)\n"
                           "  -rounds <k>   iterative protocol: k x [new batch, 5 MatMult] on DCSR (default 10; AIJ 1 round)\n"
                           "  -check        compare the matrices (DCSR, AIJ, rebuild) after the batch\n";

#include <petscmat.h>
#include <petsctime.h>
#include "gktest.h"

static unsigned long long Rand(unsigned long long *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static PetscErrorCode Laplacian(MatType type, PetscInt m, Mat *A)
{
  PetscInt N = m * m;

  PetscFunctionBegin;
  PetscCall(MatCreate(PETSC_COMM_SELF, A));
  PetscCall(MatSetSizes(*A, N, N, N, N));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 5, NULL));
  for (PetscInt i = 0; i < N; i++) {
    PetscInt    r = i / m, c = i % m, cols[5], k = 0;
    PetscScalar v[5];
    if (r > 0) { cols[k] = i - m; v[k++] = -1.0; }
    if (c > 0) { cols[k] = i - 1; v[k++] = -1.0; }
    cols[k] = i;
    v[k++]  = 4.0;
    if (c < m - 1) { cols[k] = i + 1; v[k++] = -1.0; }
    if (r < m - 1) { cols[k] = i + m; v[k++] = -1.0; }
    PetscCall(MatSetValues(*A, 1, &i, k, cols, v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Insert(Mat A, PetscInt nb, const PetscInt *bi, const PetscInt *bj, const PetscScalar *bv, PetscLogDouble *t)
{
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  for (PetscInt k = 0; k < nb; k++) PetscCall(MatSetValues(A, 1, &bi[k], 1, &bj[k], &bv[k], ADD_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscTime(&t1));
  *t = t1 - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MultTime(Mat A, Vec x, Vec y, PetscInt reps, PetscLogDouble *t)
{
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(MatMult(A, x, y));
  *t = PETSC_MAX_REAL;
  for (PetscInt c = 0; c < 10; c++) { /* the fastest of 10 chunks: the machine is shared */
    PetscInt n = PetscMax(reps / 10, 1);
    PetscCall(PetscTime(&t0));
    for (PetscInt r = 0; r < n; r++) PetscCall(MatMult(A, x, y));
    PetscCall(PetscTime(&t1));
    *t = PetscMin(*t, (t1 - t0) / n);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* new random locations of the current pattern of A (an AIJ reference), none twice */
static PetscErrorCode NewBatch(Mat R, PetscInt N, PetscInt nb, unsigned long long *seed, PetscInt *bi, PetscInt *bj, PetscScalar *bv)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < nb;) {
    PetscInt    i = (PetscInt)(Rand(seed) % N), j = (PetscInt)(Rand(seed) % N);
    PetscScalar v;
    PetscBool   dup = PETSC_FALSE;
    PetscCall(MatGetValues(R, 1, &i, 1, &j, &v));
    if (v != 0.0) continue;
    for (PetscInt q = 0; q < k; q++)
      if (bi[q] == i && bj[q] == j) dup = PETSC_TRUE;
    if (dup) continue;
    bi[k] = i;
    bj[k] = j;
    bv[k] = 0.01 * (PetscScalar)(1 + Rand(seed) % 100);
    k++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat                D, R, C;
  Vec                x, y;
  PetscInt           m = 448, N, nb, reps = 50, rounds = 10, *bi, *bj;
  PetscReal          frac = 0.002;
  PetscScalar       *bv;
  PetscLogDouble     tD, tR, tC, tmA, tmF, tmD, tdef, t0, t1, titer = 0, tmults = 0;
  MatInfo            info;
  PetscBool          check = PETSC_FALSE;
  unsigned long long seed = 0x9E3779B97F4A7C15ULL;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-m", &m, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-frac", &frac, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-reps", &reps, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-rounds", &rounds, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-check", &check, NULL));
  N = m * m;
  PetscCall(Laplacian(MATSEQDCSR, m, &D));
  PetscCall(Laplacian(MATSEQAIJ, m, &R));
  PetscCall(MatSetOption(R, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatGetInfo(R, MAT_LOCAL, &info));
  nb = (PetscInt)(frac * info.nz_used);
  PetscCall(PetscMalloc3(nb, &bi, nb, &bj, nb, &bv));
  PetscCall(NewBatch(R, N, nb, &seed, bi, bj, bv));
  PetscCall(MatCreateVecs(R, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MultTime(R, x, y, reps, &tmA));

  /* one batch: DCSR, AIJ (reallocations), rebuild through COO with every entry */
  PetscCall(Insert(D, nb, bi, bj, bv, &tD));
  PetscCall(Insert(R, nb, bi, bj, bv, &tR));
  {
    PetscInt           nz, *ci, *cj;
    PetscScalar       *cv;
    const PetscInt    *ii, *jj;
    const PetscScalar *aa;
    PetscBool          done;
    PetscInt           n;
    PetscCall(MatGetInfo(R, MAT_LOCAL, &info));
    nz = (PetscInt)info.nz_used;
    PetscCall(PetscMalloc3(nz, &ci, nz, &cj, nz, &cv));
    PetscCall(MatGetRowIJ(R, 0, PETSC_FALSE, PETSC_FALSE, &n, &ii, &jj, &done));
    PetscCall(MatSeqAIJGetArrayRead(R, &aa));
    for (PetscInt i = 0; i < n; i++)
      for (PetscInt k = ii[i]; k < ii[i + 1]; k++) {
        ci[k] = i;
        cj[k] = jj[k];
        cv[k] = aa[k];
      }
    PetscCall(MatSeqAIJRestoreArrayRead(R, &aa));
    PetscCall(MatRestoreRowIJ(R, 0, PETSC_FALSE, PETSC_FALSE, &n, &ii, &jj, &done));
    PetscCall(PetscTime(&t0));
    PetscCall(MatCreate(PETSC_COMM_SELF, &C));
    PetscCall(MatSetSizes(C, N, N, N, N));
    PetscCall(MatSetType(C, MATSEQAIJ));
    PetscCall(MatSetPreallocationCOO(C, nz, ci, cj));
    PetscCall(MatSetValuesCOO(C, cv, INSERT_VALUES));
    PetscCall(PetscTime(&t1));
    tC = t1 - t0;
    PetscCall(PetscFree3(ci, cj, cv));
  }
  if (check) {
    PetscCall(GKCheckMatClose(D, R, 1e-14, "DCSR after the batch"));
    PetscCall(GKCheckMatClose(C, R, 1e-14, "COO rebuild after the batch"));
  }
  { /* the three products interleaved, fastest chunk of each (the machine is shared) */
    Mat            F, M3[3];
    PetscLogDouble best[3] = {PETSC_MAX_REAL, PETSC_MAX_REAL, PETSC_MAX_REAL};
    PetscCall(MatDuplicate(D, MAT_COPY_VALUES, &F)); /* the same fragmented storage */
    PetscCall(PetscTime(&t0));
    PetscCall(MatDCSRDefragment(D));
    PetscCall(PetscTime(&t1));
    tdef  = t1 - t0;
    M3[0] = R;
    M3[1] = F;
    M3[2] = D;
    for (PetscInt q = 0; q < 3; q++) PetscCall(MatMult(M3[q], x, y));
    for (PetscInt c = 0; c < reps; c++) /* single products, alternating, the fastest of each */
      for (PetscInt q = 0; q < 3; q++) {
        PetscCall(PetscTime(&t0));
        PetscCall(MatMult(M3[q], x, y));
        PetscCall(PetscTime(&t1));
        best[q] = PetscMin(best[q], t1 - t0);
      }
    tmA = best[0];
    tmF = best[1];
    tmD = best[2];
    PetscCall(MatDestroy(&F));
  }
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "matrix: %" PetscInt_FMT " rows, %.0f nonzeros before the batch; batch: %" PetscInt_FMT " new nonzeros (%.2f%%)\n", N, info.nz_used - nb, nb, 100.0 * frac));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "insert batch + assembly: DCSR %.4g s, AIJ (ALLOCATION_ERR false) %.4g s, COO rebuild %.4g s\n", tD, tR, tC));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "  in MatMults (AIJ): DCSR %.3g, AIJ %.3g, rebuild %.3g\n", tD / tmA, tR / tmA, tC / tmA));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "MatMult: AIJ %.4g ms, DCSR fragmented %.4g ms (%+.1f%%), defragmented %.4g ms (%+.1f%%); defragmentation %.4g ms = %.2f MatMults\n", 1e3 * tmA, 1e3 * tmF, 100.0 * (tmF / tmA - 1), 1e3 * tmD, 100.0 * (tmD / tmA - 1), 1e3 * tdef, tdef / tmA));

  /* iterative protocol on DCSR: rounds x [new batch, 5 MatMult] (the batch drawn outside the timing) */
  for (PetscInt r = 0; r < rounds; r++) {
    PetscLogDouble ti, tm;
    PetscCall(NewBatch(D, N, nb, &seed, bi, bj, bv));
    PetscCall(Insert(D, nb, bi, bj, bv, &ti));
    PetscCall(MultTime(D, x, y, 5, &tm));
    titer += ti;
    tmults += 5 * tm;
  }
  {
    PetscInt   K, mx;
    PetscCount used, cap;
    PetscCall(MatDCSRGetInfo(D, &K, &mx, &used, &cap));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "iterative DCSR, %" PetscInt_FMT " x [batch, 5 MatMult]: inserts %.4g s, MatMults %.4g s (%.4g ms each); segments in use %" PetscInt_FMT " of %" PetscInt_FMT ", used %" PetscCount_FMT " of %" PetscCount_FMT "\n", rounds, titer, tmults, 1e3 * tmults / (5.0 * PetscMax(rounds, 1)), mx, K, used, cap));
  }
  PetscCall(PetscFree3(bi, bj, bv));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&R));
  PetscCall(MatDestroy(&C));
  PetscCall(PetscFinalize());
  return 0;
}
