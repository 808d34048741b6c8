/*
   Test problems of the PCGSAI tests (header only: the makefile builds every .c file under tests/<dir> as a program of its
   own): a Matrix Market reader, DMDA operators, and random sparse matrices.

   The Matrix Market reader reads "coordinate real|integer|pattern general|symmetric|skew-symmetric" files, plain
   or gzip-compressed (through `gzip -dc`). Every rank reads the whole file and inserts its own rows, so the
   matrix (explicit zeros included: they stay stored) does not depend on the number of ranks.
*/
#pragma once

#include <stdio.h>
#include "gktest.h" /* PETSC_SUCCESS on 3.18 */

typedef struct {
  PetscInt     n, m, nz; /* rows, columns, entries in the file (after mirroring: up to 2 nz) */
  PetscInt    *i, *j;
  PetscScalar *v;
} GKTriplets;

static PetscErrorCode GKReadMatrixMarket_Private(const char *path, GKTriplets *t)
{
  FILE     *f;
  char      line[1024], obj[64], fmt[64], field[64], sym[64];
  PetscBool gz, pattern, symmetric, skew;
  size_t    len;
  long      n, m, nz, k = 0;

  PetscFunctionBegin;
  PetscCall(PetscStrlen(path, &len));
  gz = (len > 3 && !strcmp(path + len - 3, ".gz")) ? PETSC_TRUE : PETSC_FALSE;
  if (gz) {
    char cmd[PETSC_MAX_PATH_LEN + 32];
    PetscCall(PetscSNPrintf(cmd, sizeof(cmd), "gzip -dc '%s'", path));
    f = popen(cmd, "r");
  } else f = fopen(path, "r");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open the Matrix Market file %s", path);
  PetscCheck(fgets(line, sizeof(line), f), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s is empty (is it there? gzip installed?)", path);
  PetscCheck(sscanf(line, "%%%%MatrixMarket %63s %63s %63s %63s", obj, fmt, field, sym) == 4, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: no MatrixMarket banner", path);
  PetscCheck(!strcmp(fmt, "coordinate"), PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: only coordinate files are read, not %s", path, fmt);
  PetscCheck(!strcmp(field, "real") || !strcmp(field, "integer") || !strcmp(field, "pattern"), PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: field %s is not read", path, field);
  pattern   = !strcmp(field, "pattern") ? PETSC_TRUE : PETSC_FALSE;
  symmetric = !strcmp(sym, "symmetric") ? PETSC_TRUE : PETSC_FALSE;
  skew      = !strcmp(sym, "skew-symmetric") ? PETSC_TRUE : PETSC_FALSE;
  PetscCheck(symmetric || skew || !strcmp(sym, "general"), PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: symmetry %s is not read", path, sym);
  do {
    PetscCheck(fgets(line, sizeof(line), f), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: no size line", path);
  } while (line[0] == '%');
  PetscCheck(sscanf(line, "%ld %ld %ld", &n, &m, &nz) == 3, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: bad size line", path);
  t->n = (PetscInt)n;
  t->m = (PetscInt)m;
  PetscCall(PetscMalloc3(2 * nz, &t->i, 2 * nz, &t->j, 2 * nz, &t->v));
  for (long e = 0; e < nz; e++) {
    long   r, c;
    double v = 1.0;
    PetscCheck(fgets(line, sizeof(line), f), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: %ld entries instead of %ld", path, e, nz);
    PetscCheck(sscanf(line, "%ld %ld %lf", &r, &c, &v) >= (pattern ? 2 : 3), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: bad entry line %ld", path, e + 1);
    PetscCheck(r >= 1 && r <= n && c >= 1 && c <= m, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: entry %ld out of range", path, e + 1);
    t->i[k]   = (PetscInt)(r - 1);
    t->j[k]   = (PetscInt)(c - 1);
    t->v[k++] = v;
    if ((symmetric || skew) && r != c) {
      t->i[k]   = (PetscInt)(c - 1);
      t->j[k]   = (PetscInt)(r - 1);
      t->v[k++] = skew ? -v : v;
    }
  }
  t->nz = (PetscInt)k;
  if (gz) pclose(f);
  else fclose(f);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A (MATAIJ, or type) from a Matrix Market file; preallocated exactly, duplicates added */
static PetscErrorCode GKLoadMatrixMarket(MPI_Comm comm, const char *path, MatType type, Mat *A)
{
  GKTriplets t;
  PetscInt   rs, re, cs, ce, *dnz, *onz;

  PetscFunctionBegin;
  PetscCall(GKReadMatrixMarket_Private(path, &t));
  {
    PetscInt nl = PETSC_DECIDE, ml = PETSC_DECIDE;

    PetscCall(PetscSplitOwnership(comm, &nl, &t.n));
    PetscCall(PetscSplitOwnership(comm, &ml, &t.m));
    PetscCallMPI(MPI_Scan(&nl, &re, 1, MPIU_INT, MPI_SUM, comm));
    rs = re - nl;
    PetscCallMPI(MPI_Scan(&ml, &ce, 1, MPIU_INT, MPI_SUM, comm));
    cs = ce - ml;
    PetscCall(MatCreate(comm, A));
    PetscCall(MatSetSizes(*A, nl, ml, t.n, t.m));
    PetscCall(MatSetType(*A, type ? type : MATAIJ));
    PetscCall(PetscCalloc2(re - rs, &dnz, re - rs, &onz));
    for (PetscInt e = 0; e < t.nz; e++)
      if (t.i[e] >= rs && t.i[e] < re) {
        if (t.j[e] >= cs && t.j[e] < ce) dnz[t.i[e] - rs]++;
        else onz[t.i[e] - rs]++;
      }
    for (PetscInt r = 0; r < re - rs; r++) { /* duplicates may overcount: harmless, never past the row length */
      dnz[r] = PetscMin(dnz[r], ce - cs);
      onz[r] = PetscMin(onz[r], t.m - (ce - cs));
    }
    PetscCall(MatSeqAIJSetPreallocation(*A, 0, dnz));
    PetscCall(MatMPIAIJSetPreallocation(*A, 0, dnz, 0, onz));
    PetscCall(PetscFree2(dnz, onz));
    for (PetscInt e = 0; e < t.nz; e++)
      if (t.i[e] >= rs && t.i[e] < re) PetscCall(MatSetValue(*A, t.i[e], t.j[e], t.v[e], ADD_VALUES));
    PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
    PetscCall(PetscFree3(t.i, t.j, t.v));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   A DMDA operator with dof 1 (DMCreateMatrix(), so -dm_mat_type applies): the 5-point (2-D) or 7-point (3-D)
   Laplacian, scaled by h^2, plus first-order upwind convection with velocity beta*(1, 1/2, 1/4) (beta = 0:
   symmetric positive definite). Dirichlet boundary rows are kept as identity-like rows of the same stencil.
*/
static PetscErrorCode GKDMDAOperator(MPI_Comm comm, PetscInt dim, PetscInt n, PetscReal beta, DM *da, Mat *A)
{
  PetscInt    xs, ys, zs, xm, ym, zm;
  PetscReal   h = 1.0 / (n + 1), b[3] = {beta, 0.5 * beta, 0.25 * beta};
  MatStencil  row, col[7];
  PetscScalar v[7];

  PetscFunctionBegin;
  if (dim == 2) PetscCall(DMDACreate2d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, da));
  else PetscCall(DMDACreate3d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, da));
  PetscCall(DMSetFromOptions(*da));
  PetscCall(DMSetUp(*da));
  PetscCall(DMCreateMatrix(*da, A));
  PetscCall(DMDAGetCorners(*da, &xs, &ys, &zs, &xm, &ym, &zm));
  for (PetscInt k = zs; k < zs + zm; k++)
    for (PetscInt j = ys; j < ys + ym; j++)
      for (PetscInt i = xs; i < xs + xm; i++) {
        PetscInt nc = 0, g[3] = {i, j, k};
        row.i   = i;
        row.j   = j;
        row.k   = k;
        row.c   = 0;
        col[nc] = row;
        v[nc++] = 2.0 * dim;
        for (PetscInt d = 0; d < dim; d++) {
          /* upwind for a positive velocity: -u_{i-1} gets the convection term */
          const PetscReal cm = -1.0 - b[d] * h, cp = -1.0;
          v[0] += b[d] * h;
          for (PetscInt s = -1; s <= 1; s += 2) {
            if (g[d] + s < 0 || g[d] + s >= n) continue;
            col[nc] = row;
            if (d == 0) col[nc].i += s;
            else if (d == 1) col[nc].j += s;
            else col[nc].k += s;
            v[nc++] = s < 0 ? cm : cp;
          }
        }
        PetscCall(MatSetValuesStencil(*A, 1, &row, nc, col, v, INSERT_VALUES));
      }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   A random n x n MATAIJ matrix, the same on any number of ranks: in each row the diagonal (uniform in [1, 2),
   or stored zero when zerodiag) and nper random off-diagonal columns with values in [-1, 1).
*/
static inline PetscErrorCode GKRandomMatrix(MPI_Comm comm, PetscInt n, PetscInt nper, PetscBool zerodiag, Mat *A)
{
  PetscRandom r;
  PetscInt    rs, re;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, 12345));
  PetscCall(PetscRandomSeed(r));
  PetscCall(MatCreateAIJ(comm, PETSC_DECIDE, PETSC_DECIDE, n, n, nper + 1, NULL, nper + 1, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = 0; i < n; i++) {
    PetscScalar d, v;
    PetscReal   c;
    PetscCall(PetscRandomGetValue(r, &d));
    if (i >= rs && i < re) PetscCall(MatSetValue(*A, i, i, zerodiag ? 0.0 : 1.0 + d, INSERT_VALUES));
    for (PetscInt e = 0; e < nper; e++) {
      PetscCall(PetscRandomGetValueReal(r, &c));
      PetscCall(PetscRandomGetValue(r, &v));
      {
        const PetscInt j = PetscMin((PetscInt)(c * n), n - 1);
        if (i >= rs && i < re && j != i) PetscCall(MatSetValue(*A, i, j, 2.0 * v - 1.0, INSERT_VALUES));
      }
    }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(PETSC_SUCCESS);
}
