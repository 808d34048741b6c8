static const char help[] = "Host MatMult: MATAMB's host AMB kernel against MATAIJ on one generated matrix (timings; results compared).\n"
                           "  -kind stencil27|random|band  -n <grid points per side or rows>  -nzrow <k>  -its <products>\n"
                           "Use -log_view for the MatMult / AMBMult events.\n";

#include <petscmat.h>
#include <petsctime.h>
#include "gktest.h"

static unsigned long long rs = 88172645463325252ULL;
static unsigned long long Next(void)
{
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return rs;
}

/* rows [rstart, rend) of the matrix, the same on any number of ranks (values from the (row, col) pair) */
static PetscErrorCode Fill(Mat A, const char *kind, PetscInt n, PetscInt nzrow)
{
  PetscInt rstart, rend, N;
  PetscInt cols[512];
  PetscScalar v[512];

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(MatGetSize(A, &N, NULL));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt nc = 0;
    if (!strcmp(kind, "stencil27")) {
      PetscInt x = i % n, y = (i / n) % n, z = i / (n * n);
      for (PetscInt dz = -1; dz <= 1; dz++)
        for (PetscInt dy = -1; dy <= 1; dy++)
          for (PetscInt dx = -1; dx <= 1; dx++) {
            if (x + dx < 0 || x + dx >= n || y + dy < 0 || y + dy >= n || z + dz < 0 || z + dz >= n) continue;
            cols[nc] = i + dx + dy * n + dz * n * n;
            v[nc++]  = (dx || dy || dz) ? -1.0 : 26.5;
          }
    } else {
      rs = 0x9E3779B97F4A7C15ULL * (unsigned long long)(i + 1);
      for (PetscInt k = 0; k < nzrow && nc < 512; k++) {
        PetscInt j = !strcmp(kind, "band") ? (i + k - nzrow / 2 + N) % N : (PetscInt)(Next() % (unsigned long long)N);
        cols[nc] = j;
        v[nc++]  = 1.0 / (1.0 + (double)(Next() % 100));
      }
    }
    PetscCall(MatSetValues(A, 1, &i, nc, cols, v, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char           kind[32] = "stencil27";
  PetscInt       n = 36, nzrow = 27, its = 50, N, b, W;
  Mat            A[2];
  Vec            x, y[2];
  PetscLogDouble t[2], bytes;
  PetscBool      fb;
  MatInfo        info;
  const char    *names[2] = {"aij", "amb"};

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "amb_perf", NULL);
  PetscCall(PetscOptionsString("-kind", "stencil27|random|band", NULL, kind, kind, sizeof(kind), NULL));
  PetscCall(PetscOptionsInt("-n", "grid side (stencil27) or rows", NULL, n, &n, NULL));
  PetscCall(PetscOptionsInt("-nzrow", "entries per row (random, band)", NULL, nzrow, &nzrow, NULL));
  PetscCall(PetscOptionsInt("-its", "products timed", NULL, its, &its, NULL));
  PetscOptionsEnd();
  N = !strcmp(kind, "stencil27") ? n * n * n : n;
  for (PetscInt t2 = 0; t2 < 2; t2++) {
    PetscCall(MatCreate(PETSC_COMM_WORLD, &A[t2]));
    PetscCall(MatSetSizes(A[t2], PETSC_DECIDE, PETSC_DECIDE, N, N));
    PetscCall(MatSetType(A[t2], t2 ? MATAMB : MATAIJ));
    PetscCall(MatSetFromOptions(A[t2]));
    PetscCall(MatSeqAIJSetPreallocation(A[t2], !strcmp(kind, "stencil27") ? 27 : nzrow, NULL));
    PetscCall(MatMPIAIJSetPreallocation(A[t2], !strcmp(kind, "stencil27") ? 27 : nzrow, NULL, !strcmp(kind, "stencil27") ? 27 : nzrow, NULL));
    PetscCall(Fill(A[t2], kind, n, nzrow));
  }
  PetscCall(MatCreateVecs(A[0], &x, &y[0]));
  PetscCall(VecDuplicate(y[0], &y[1]));
  PetscCall(VecSetRandom(x, NULL));
  for (PetscInt t2 = 0; t2 < 2; t2++) {
    PetscLogDouble t0, t1;
    PetscCall(MatMult(A[t2], x, y[t2])); /* the layout is built here for amb */
    PetscCall(PetscTime(&t0));
    for (PetscInt k = 0; k < its; k++) PetscCall(MatMult(A[t2], x, y[t2]));
    PetscCall(PetscTime(&t1));
    t[t2] = (t1 - t0) / its;
  }
  PetscCall(GKCheckVecClose(y[1], y[0], 1e-12, "AMB MatMult vs AIJ"));
  PetscCall(MatGetInfo(A[0], MAT_GLOBAL_SUM, &info));
  PetscCall(MatAMBGetInfo(A[1], &b, &W, &fb, &bytes));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %" PetscInt_FMT " rows, %.0f nonzeros; rank 0: b %" PetscInt_FMT ", W %" PetscInt_FMT ", %s, model %.3g bytes per product\n", kind, N, info.nz_used, b, W, fb ? "CSR fallback" : "AMB kernel", bytes));
  for (PetscInt t2 = 0; t2 < 2; t2++) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s MatMult: %.3f ms, %.2f GFlop/s\n", names[t2], 1e3 * t[t2], 2e-9 * info.nz_used / t[t2]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  AMB / AIJ time: %.3f\n", t[1] / t[0]));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y[0]));
  PetscCall(VecDestroy(&y[1]));
  PetscCall(MatDestroy(&A[0]));
  PetscCall(MatDestroy(&A[1]));
  PetscCall(PetscFinalize());
  return 0;
}
