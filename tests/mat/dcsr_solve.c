static const char help[] = "KSP solves with MATDCSR against AIJ after rounds of new couplings: same iteration counts, same solution.\n"
                           "  -m <m>       grid points per side of the 2D Laplacian start (default 16)\n"
                           "  -rounds <r>  rounds of new symmetric couplings (default 3)\n"
                           "  the KSP/PC come from the options (-ksp_type, -pc_type, ...), the same for both matrices\n";

/* a 2D 5-point Laplacian, then each round adds symmetric couplings i <-> j (random, also between ranks) that keep
   the matrix an M-matrix: a_ij -= w, a_ji -= w, a_ii += w, a_jj += w (a "contact" spring) */
#include <petscksp.h>
#include "gktest.h"

static unsigned long long Rand(unsigned long long *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static PetscErrorCode Solve(Mat A, Vec b, Vec x, PetscInt *its)
{
  KSP ksp;

  PetscFunctionBegin;
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 500));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat                A, R, M[2];
  Vec                b, xa, xr;
  PetscInt           m = 16, rounds = 3, N, rstart, rend;
  PetscMPIInt        rank;
  unsigned long long seed;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-m", &m, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-rounds", &rounds, NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  seed = 0x2545F4914F6CDD1DULL + 31ULL * (unsigned long long)rank;
  N    = m * m;
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(MatCreate(PETSC_COMM_WORLD, &M[t]));
    PetscCall(MatSetSizes(M[t], PETSC_DECIDE, PETSC_DECIDE, N, N));
    PetscCall(MatSetType(M[t], t ? MATAIJ : MATDCSR));
    PetscCall(MatSetFromOptions(M[t]));
    PetscCall(MatSeqAIJSetPreallocation(M[t], 5, NULL));
    PetscCall(MatMPIAIJSetPreallocation(M[t], 5, NULL, 2, NULL));
    PetscCall(MatSetOption(M[t], MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MatGetOwnershipRange(M[t], &rstart, &rend));
    for (PetscInt i = rstart; i < rend; i++) {
      PetscInt    r = i / m, c = i % m, cols[5], k = 0;
      PetscScalar v[5];
      cols[k] = i;
      v[k++]  = 4.0;
      if (r > 0) { cols[k] = i - m; v[k++] = -1.0; }
      if (r < m - 1) { cols[k] = i + m; v[k++] = -1.0; }
      if (c > 0) { cols[k] = i - 1; v[k++] = -1.0; }
      if (c < m - 1) { cols[k] = i + 1; v[k++] = -1.0; }
      PetscCall(MatSetValues(M[t], 1, &i, k, cols, v, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(M[t], MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(M[t], MAT_FINAL_ASSEMBLY));
  }
  A = M[0];
  R = M[1];
  PetscCall(MatCreateVecs(R, &xr, &b));
  PetscCall(VecDuplicate(xr, &xa));
  PetscCall(VecSet(b, 1.0));

  for (PetscInt round = 0; round <= rounds; round++) {
    PetscInt its_a, its_r;
    char     what[64];

    if (round > 0) {
      for (PetscInt k = 0; k < 2 * m; k++) {
        PetscInt    i = rstart + (PetscInt)(Rand(&seed) % (rend - rstart)), j = (PetscInt)(Rand(&seed) % N);
        PetscInt    rows[2], cols[2];
        PetscScalar w = 0.5 + (PetscScalar)(Rand(&seed) % 100) / 100.0, v[4];
        if (i == j) continue;
        rows[0] = cols[0] = i;
        rows[1] = cols[1] = j;
        v[0] = w; v[1] = -w; v[2] = -w; v[3] = w;
        for (PetscInt t = 0; t < 2; t++) PetscCall(MatSetValues(M[t], 2, rows, 2, cols, v, ADD_VALUES));
      }
      for (PetscInt t = 0; t < 2; t++) {
        PetscCall(MatAssemblyBegin(M[t], MAT_FINAL_ASSEMBLY));
        PetscCall(MatAssemblyEnd(M[t], MAT_FINAL_ASSEMBLY));
      }
    }
    PetscCall(Solve(A, b, xa, &its_a));
    PetscCall(Solve(R, b, xr, &its_r));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "round %" PetscInt_FMT ": iterations DCSR %" PetscInt_FMT ", AIJ %" PetscInt_FMT "\n", round, its_a, its_r));
    PetscCheck(its_a == its_r, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "round %" PetscInt_FMT ": DCSR took %" PetscInt_FMT " iterations, AIJ %" PetscInt_FMT, round, its_a, its_r);
    PetscCall(PetscSNPrintf(what, sizeof(what), "round %" PetscInt_FMT " solution", round));
    PetscCall(GKCheckVecClose(xa, xr, 1e-8, what));
  }
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&xr));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dcsr_solve: all checks passed\n"));
  PetscCall(PetscFinalize());
  return 0;
}
