static const char help[] = "Writes gpukit's generated large test matrices (tests/common/gkgen.c) to PETSc binary files and prints their statistics.\n\n"
                           "  -name n1,n2,...  cases (default: all; -list prints them)\n"
                           "  -scale s         0 (tests) .. 4; 3 is the benchmark set (default 3)\n"
                           "  -seed s          seed (default 1)\n"
                           "  -o dir           write <dir>/<name>-s<scale>.petsc (MatView, binary; default: write nothing)\n"
                           "  -list            list the cases and exit\n"
                           "  -check           also assemble each as AIJ and compare its statistics with the generator's\n"
                           "  -span            the share of the entries whose 32-row group's columns fit a 16-bit window (max - min\n"
                           "                   < 65536), and the CSR bytes a layout with 16-bit group-relative indices would keep\n";

#include <petscmat.h>
#include <petsctime.h>
#include "gkgen.h"

#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

/* y_i = sum_j |a_ij| of the local rows (MatGetRow) */
static PetscErrorCode MatGetRowSumAbs_GK(Mat A, Vec y)
{
  PetscInt     rs, re;
  PetscScalar *py;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(VecGetArray(y, &py));
  for (PetscInt r = rs; r < re; r++) {
    PetscInt           n;
    const PetscScalar *v;
    PetscReal          s = 0;
    PetscCall(MatGetRow(A, r, &n, NULL, &v));
    for (PetscInt k = 0; k < n; k++) s += PetscAbsScalar(v[k]);
    PetscCall(MatRestoreRow(A, r, &n, NULL, &v));
    py[r - rs] = s;
  }
  PetscCall(VecRestoreArray(y, &py));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char            *names[64], dir[PETSC_MAX_PATH_LEN] = "";
  PetscInt         nn = 64, scale = GK_GEN_SCALE_DEFAULT, seed = 1, ncases;
  PetscBool        set, hasdir, list = PETSC_FALSE, check = PETSC_FALSE, span = PETSC_FALSE;
  const GKGenCase *cs;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Generated matrices", "bench");
  PetscCall(PetscOptionsStringArray("-name", "Cases, comma-separated (default all)", "genmat", names, &nn, &set));
  PetscCall(PetscOptionsInt("-scale", "Scale 0..4 (3 = benchmark set)", "genmat", scale, &scale, NULL));
  PetscCall(PetscOptionsInt("-seed", "Seed", "genmat", seed, &seed, NULL));
  PetscCall(PetscOptionsString("-o", "Directory for the PETSc binary files", "genmat", dir, dir, sizeof(dir), &hasdir));
  PetscCall(PetscOptionsBool("-list", "List the cases", "genmat", list, &list, NULL));
  PetscCall(PetscOptionsBool("-check", "Assemble as AIJ and compare the statistics", "genmat", check, &check, NULL));
  PetscCall(PetscOptionsBool("-span", "Share of the entries in 32-row groups whose columns fit 16 bits", "genmat", span, &span, NULL));
  PetscOptionsEnd();
  PetscCall(GKGenerateList(&ncases, &cs));
  if (list) {
    for (PetscInt i = 0; i < ncases; i++) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-14s %-9s %s%s\n", cs[i].name, cs[i].family, cs[i].desc, cs[i].spd ? " [SPD]" : ""));
    PetscCall(PetscFinalize());
    return 0;
  }
  if (!set) {
    nn = ncases;
    for (PetscInt i = 0; i < nn; i++) PetscCall(PetscStrallocpy(cs[i].name, &names[i]));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "scale %" PetscInt_FMT ", seed %" PetscInt_FMT "\n", scale, seed));
  for (PetscInt i = 0; i < nn; i++) {
    GKCSR         *c;
    GKRowStats     s;
    PetscLogDouble t0, t1, t2;
    Mat            A = NULL;

    PetscCall(PetscTime(&t0));
    PetscCall(GKGenerateCSR(PETSC_COMM_WORLD, names[i], scale, seed, &c));
    PetscCall(PetscTime(&t1));
    if ((hasdir && dir[0]) || check) PetscCall(GKCSRToMat(PETSC_COMM_WORLD, c, MATAIJ, NULL, &A));
    PetscCall(PetscTime(&t2));
    PetscCall(GKCSRRowStats(PETSC_COMM_WORLD, c, &s));
    PetscCall(GKRowStatsPrint(PETSC_COMM_WORLD, names[i], &s, (PetscBool)(i == 0)));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-14s generated in %.2f s%s", "", t1 - t0, A ? "" : "\n"));
    if (A) PetscCall(PetscPrintf(PETSC_COMM_WORLD, ", AIJ assembly %.2f s\n", t2 - t1));
    if (span) { /* the rows of each rank in groups of 32 (a warp's rows): do their columns fit one 16-bit window? */
      PetscInt64 l[3] = {0, 0, 0}, g[3]; /* entries in fitting groups, entries, groups */
      for (PetscInt w0 = 0; w0 < c->m; w0 += 32) {
        const PetscInt w1 = PetscMin(c->m, w0 + 32);
        PetscInt       lo = PETSC_MAX_INT, hi = -1;
        for (PetscInt64 q = c->ia[w0]; q < c->ia[w1]; q++) {
          lo = PetscMin(lo, c->ja[q]);
          hi = PetscMax(hi, c->ja[q]);
        }
        if (hi < lo || hi - lo < 65536) l[0] += c->ia[w1] - c->ia[w0];
        l[1] += c->ia[w1] - c->ia[w0];
        l[2]++;
      }
      PetscCall(MPIU_Allreduce(l, g, 3, MPIU_INT64, MPI_SUM, PETSC_COMM_WORLD));
      {
        /* CSR: 12 B an entry and 4 B a row; 16-bit: 10 B an entry where its group fits (12 elsewhere), 4 B a row, 4 B a group */
        const double csr = 12.0 * (double)g[1] + 4.0 * (double)s.rows, s16 = 10.0 * (double)g[0] + 12.0 * (double)(g[1] - g[0]) + 4.0 * (double)s.rows + 4.0 * (double)g[2];
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-14s 16-bit windows of 32 rows: %.1f%% of the entries; such a layout keeps %.3f of CSR's bytes (x and y not counted)\n", "", g[1] ? 100.0 * (double)g[0] / (double)g[1] : 0.0, csr > 0 ? s16 / csr : 1.0));
      }
    }
    if (check) {
      GKRowStats s2;
      PetscCall(GKMatRowStats(A, &s2));
      PetscCheck(s2.nnz == s.nnz && s2.rows == s.rows && s2.cols == s.cols && s2.maxlen == s.maxlen, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the assembled AIJ matrix (%" PetscInt64_FMT " nonzeros) differs from the generated rows (%" PetscInt64_FMT ")", names[i], s2.nnz, s.nnz);
      if (c->symmetric) {
        PetscBool sym;
        PetscCall(MatIsSymmetric(A, 0.0, &sym));
        PetscCheck(sym, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: generated as symmetric, but the matrix is not", names[i]);
      }
      if (c->spd) { /* positive diagonal, strictly dominant: SPD with the symmetry */
        Vec       d, rs;
        PetscReal mind;
        PetscCall(MatCreateVecs(A, &d, &rs));
        PetscCall(MatGetDiagonal(A, d));
        PetscCall(MatGetRowSumAbs_GK(A, rs));
        PetscCall(VecAXPY(rs, -2.0, d)); /* sum |a_ij| - 2 a_ii = sum_{j != i} |a_ij| - a_ii < 0 */
        PetscCall(VecMax(rs, NULL, &mind));
        PetscCheck(mind < 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: generated as SPD but not strictly diagonally dominant (%g)", names[i], (double)mind);
        PetscCall(VecDestroy(&d));
        PetscCall(VecDestroy(&rs));
      }
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-14s check: sizes, nnz, max row length%s%s as generated\n", "", c->symmetric ? ", symmetric" : "", c->spd ? ", diagonally dominant (SPD)" : ""));
    }
    if (hasdir && dir[0]) {
      char        path[PETSC_MAX_PATH_LEN];
      PetscViewer v;
      PetscCall(PetscSNPrintf(path, sizeof(path), "%s/%s-s%" PetscInt_FMT ".petsc", dir, names[i], scale));
      PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, path, FILE_MODE_WRITE, &v));
      PetscCall(MatView(A, v));
      PetscCall(PetscViewerDestroy(&v));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-14s wrote %s\n", "", path));
    }
    PetscCall(MatDestroy(&A));
    PetscCall(GKCSRDestroy(&c));
  }
  for (PetscInt i = 0; i < nn; i++) PetscCall(PetscFree(names[i]));
  PetscCall(PetscFinalize());
  return 0;
}
