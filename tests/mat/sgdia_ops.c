static const char help[] = "MATSGDIA against MATAIJ built from the same values, operation by operation.\n"
                           "Options: -dim 1|2|3 -dof d -stencil star|box -sw w -bx none|periodic|ghosted -n points per dimension\n";

/*
   Every operation of MATSGDIA is applied to an SGDIA matrix and to the AIJ matrix that DMCreateMatrix()
   gives on the same DMDA, after filling both through the same calls with the same random values (never
   zeros). Data movement must agree exactly, arithmetic to 1e-13 relative; at dof 1 without periodic dimensions
   MatMult() and MatMultAdd() exactly, on any number of ranks (they sum each row in AIJ's order; the AIJ reference
   without inodes, see below).
*/
#include "gktest.h"
#include <petscksp.h>
#include <unistd.h>

#define TOL 1e-13

typedef struct {
  DM          da;
  PetscInt    dim, dof, sw, n;
  PetscRandom rnd;
} Ctx;

/* random value in +-[0.5, 1.5]: never zero */
static PetscScalar RandNZ(PetscRandom r)
{
  PetscScalar v;
  PetscRandomGetValue(r, &v);
  return (PetscRealPart(v) < 0.5 ? -1.0 : 1.0) * (0.5 + PetscRealPart(v));
}

/* Is neighbour (i+dx, j+dy, k+dz) inside the domain (non-periodic dimensions) */
static PetscBool InDomain(Ctx *c, PetscInt i, PetscInt j, PetscInt k, PetscInt dx, PetscInt dy, PetscInt dz)
{
  PetscInt       M, N, P;
  DMBoundaryType bx, by, bz;
  DMDAGetInfo(c->da, NULL, &M, &N, &P, NULL, NULL, NULL, NULL, NULL, &bx, &by, &bz, NULL);
  if (bx != DM_BOUNDARY_PERIODIC && (i + dx < 0 || i + dx >= M)) return PETSC_FALSE;
  if (c->dim > 1 && by != DM_BOUNDARY_PERIODIC && (j + dy < 0 || j + dy >= N)) return PETSC_FALSE;
  if (c->dim > 2 && bz != DM_BOUNDARY_PERIODIC && (k + dz < 0 || k + dz >= P)) return PETSC_FALSE;
  return PETSC_TRUE;
}

static PetscBool InStencil(Ctx *c, PetscInt dx, PetscInt dy, PetscInt dz)
{
  DMDAStencilType st;
  DMDAGetInfo(c->da, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &st);
  if (st == DMDA_STENCIL_STAR && ((dx != 0) + (dy != 0) + (dz != 0)) > 1) return PETSC_FALSE;
  return PETSC_TRUE;
}

/* The same values through five insertion paths, into both matrices:
   1. MatSetValuesStencil, INSERT, owned rows, every coupling;
   2. MatSetValuesBlockedStencil, ADD, every row of the ghosted box (other ranks' rows are stashed);
   3. MatSetValues with global indices, ADD, the centre couplings of owned rows;
   4. MatSetValuesBlocked with global block indices, ADD, the diagonal blocks;
   5. MatSetValuesLocal, ADD, one coupling per owned row. */
static PetscErrorCode Fill(Ctx *c, Mat A, Mat B)
{
  PetscInt     xs, ys, zs, xm, ym, zm, gxs, gys, gzs, gxm, gym, gzm, dof = c->dof, sw = c->sw;
  PetscInt     ez = c->dim > 2 ? sw : 0, ey = c->dim > 1 ? sw : 0;
  PetscScalar *vals;
  Mat          mats[2] = {A, B};

  PetscFunctionBegin;
  PetscCall(DMDAGetCorners(c->da, &xs, &ys, &zs, &xm, &ym, &zm));
  PetscCall(DMDAGetGhostCorners(c->da, &gxs, &gys, &gzs, &gxm, &gym, &gzm));
  PetscCall(PetscMalloc1(dof * dof, &vals));
  /* 1 */
  for (PetscInt k = zs; k < zs + zm; k++)
    for (PetscInt j = ys; j < ys + ym; j++)
      for (PetscInt i = xs; i < xs + xm; i++)
        for (PetscInt dz = -ez; dz <= ez; dz++)
          for (PetscInt dy = -ey; dy <= ey; dy++)
            for (PetscInt dx = -sw; dx <= sw; dx++) {
              if (!InStencil(c, dx, dy, dz) || !InDomain(c, i, j, k, dx, dy, dz)) continue;
              for (PetscInt r = 0; r < dof; r++)
                for (PetscInt cc = 0; cc < dof; cc++) {
                  MatStencil  row = {.k = k, .j = j, .i = i, .c = r}, col = {.k = k + dz, .j = j + dy, .i = i + dx, .c = cc};
                  PetscScalar v   = RandNZ(c->rnd);
                  for (int m = 0; m < 2; m++) PetscCall(MatSetValuesStencil(mats[m], 1, &row, 1, &col, &v, INSERT_VALUES));
                }
            }
  for (int m = 0; m < 2; m++) {
    PetscCall(MatAssemblyBegin(mats[m], MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(mats[m], MAT_FINAL_ASSEMBLY));
  }
  /* 2: blocks on the rows of the whole ghosted box, couplings to the centre and to +x */
  for (PetscInt k = gzs; k < gzs + gzm; k++)
    for (PetscInt j = gys; j < gys + gym; j++)
      for (PetscInt i = gxs; i < gxs + gxm; i++)
        for (PetscInt dx = 0; dx <= PetscMin(1, sw); dx++) {
          MatStencil row = {.k = k, .j = j, .i = i}, col = {.k = k, .j = j, .i = i + dx};
          if (!InDomain(c, i, j, k, 0, 0, 0) || !InDomain(c, i, j, k, dx, 0, 0)) continue;
          if (i + dx >= gxs + gxm) continue; /* the column must be in the local (ghosted) numbering */
          for (PetscInt q = 0; q < dof * dof; q++) vals[q] = RandNZ(c->rnd);
          for (int m = 0; m < 2; m++) PetscCall(MatSetValuesBlockedStencil(mats[m], 1, &row, 1, &col, vals, ADD_VALUES));
        }
  for (int m = 0; m < 2; m++) {
    PetscCall(MatAssemblyBegin(mats[m], MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(mats[m], MAT_FINAL_ASSEMBLY));
  }
  /* 3, 4 and 5 */
  {
    PetscInt               rstart, rend;
    ISLocalToGlobalMapping ltog;
    PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
    for (PetscInt row = rstart; row < rend; row++) {
      PetscInt    cols[8], nc = 0, p = (row - rstart) / dof;
      PetscScalar v[8];
      for (PetscInt cc = 0; cc < PetscMin(dof, 8); cc++) {
        cols[nc] = rstart + p * dof + cc;
        v[nc++]  = RandNZ(c->rnd);
      }
      for (int m = 0; m < 2; m++) PetscCall(MatSetValues(mats[m], 1, &row, nc, cols, v, ADD_VALUES));
    }
    for (PetscInt brow = rstart / dof; brow < rend / dof; brow++) { /* MatSetValuesBlocked, global block indices */
      for (PetscInt q = 0; q < dof * dof; q++) vals[q] = RandNZ(c->rnd);
      for (int m = 0; m < 2; m++) PetscCall(MatSetValuesBlocked(mats[m], 1, &brow, 1, &brow, vals, ADD_VALUES));
    }
    PetscCall(DMGetLocalToGlobalMapping(c->da, &ltog));
    for (PetscInt k = zs; k < zs + zm; k++)
      for (PetscInt j = ys; j < ys + ym; j++)
        for (PetscInt i = xs; i < xs + xm; i++) {
          PetscInt    lr = ((i - gxs) + gxm * ((j - gys) + gym * (k - gzs))) * dof, lc = lr + (dof - 1);
          PetscScalar v  = RandNZ(c->rnd);
          for (int m = 0; m < 2; m++) PetscCall(MatSetValuesLocal(mats[m], 1, &lr, 1, &lc, &v, ADD_VALUES));
        }
  }
  for (int m = 0; m < 2; m++) {
    PetscCall(MatAssemblyBegin(mats[m], MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(mats[m], MAT_FINAL_ASSEMBLY));
  }
  PetscCall(PetscFree(vals));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RandVec(Ctx *c, Vec *v)
{
  PetscFunctionBegin;
  PetscCall(DMCreateGlobalVector(c->da, v));
  PetscCall(VecSetRandom(*v, c->rnd));
  PetscCall(VecShift(*v, 0.25));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestProducts(Ctx *c, Mat A, Mat B0)
{
  Vec            x, y, z, yr, zr;
  DMBoundaryType bd[3];
  PetscReal      ptol = TOL;
  Mat            B    = B0;

  PetscFunctionBegin;
  /* dof 1 without periodic dimensions: MatMult and MatMultAdd sum each row in AIJ's order (on several ranks: the
     owned columns, then the ghost ones in global order), so the products are AIJ's bit for bit. The reference is a copy
     of AIJ without inodes: AIJ uses them at dof 1 only where two consecutive rows have the same owned columns (boxes a
     few points wide, as on 3 ranks here), and its inode products pair terms */
  PetscCall(DMDAGetInfo(c->da, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &bd[0], &bd[1], &bd[2], NULL));
  if (c->dof == 1 && bd[0] != DM_BOUNDARY_PERIODIC && bd[1] != DM_BOUNDARY_PERIODIC && bd[2] != DM_BOUNDARY_PERIODIC) {
    ptol = 0.0;
    PetscCall(MatDuplicate(B0, MAT_COPY_VALUES, &B));
    PetscCall(MatSetOption(B, MAT_USE_INODES, PETSC_FALSE));
  }
  PetscCall(RandVec(c, &x));
  PetscCall(RandVec(c, &y));
  PetscCall(VecDuplicate(x, &z));
  PetscCall(VecDuplicate(x, &yr));
  PetscCall(VecDuplicate(x, &zr));
  PetscCall(MatMult(A, x, z));
  PetscCall(MatMult(B, x, zr));
  PetscCall(GKCheckVecClose(z, zr, ptol, "MatMult"));
  PetscCall(MatMultAdd(A, x, y, z));
  PetscCall(MatMultAdd(B, x, y, zr));
  PetscCall(GKCheckVecClose(z, zr, ptol, "MatMultAdd"));
  PetscCall(VecCopy(y, yr));
  PetscCall(MatMultAdd(A, x, y, y)); /* in place */
  PetscCall(MatMultAdd(B, x, yr, yr));
  PetscCall(GKCheckVecClose(y, yr, ptol, "MatMultAdd in place"));
  if (B != B0) PetscCall(MatDestroy(&B));
  B = B0;
  PetscCall(MatMultTranspose(A, x, z));
  PetscCall(MatMultTranspose(B, x, zr));
  PetscCall(GKCheckVecClose(z, zr, TOL, "MatMultTranspose"));
  PetscCall(MatMultTransposeAdd(A, x, y, z));
  PetscCall(MatMultTransposeAdd(B, x, y, zr));
  PetscCall(GKCheckVecClose(z, zr, TOL, "MatMultTransposeAdd"));
  PetscCall(VecCopy(y, yr));
  PetscCall(MatMultTransposeAdd(A, x, y, y));
  PetscCall(MatMultTransposeAdd(B, x, yr, yr));
  PetscCall(GKCheckVecClose(y, yr, TOL, "MatMultTransposeAdd in place"));
  PetscCall(MatGetDiagonal(A, z));
  PetscCall(MatGetDiagonal(B, zr));
  PetscCall(GKCheckVecClose(z, zr, 0.0, "MatGetDiagonal"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&yr));
  PetscCall(VecDestroy(&zr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestRows(Mat A, Mat B)
{
  PetscInt rstart, rend;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt row = rstart; row < rend; row++) {
    PetscInt           na, nb;
    const PetscInt    *ca, *cb;
    const PetscScalar *va, *vb;
    PetscCall(MatGetRow(A, row, &na, &ca, &va));
    PetscCall(MatGetRow(B, row, &nb, &cb, &vb));
    PetscCheck(na == nb, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRow: row %" PetscInt_FMT " has %" PetscInt_FMT " entries, AIJ %" PetscInt_FMT, row, na, nb);
    for (PetscInt j = 0; j < na; j++) PetscCheck(ca[j] == cb[j] && va[j] == vb[j], PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRow: row %" PetscInt_FMT " entry %" PetscInt_FMT " is (%" PetscInt_FMT ", %g), AIJ (%" PetscInt_FMT ", %g)", row, j, ca[j], (double)PetscRealPart(va[j]), cb[j], (double)PetscRealPart(vb[j]));
    PetscCall(MatRestoreRow(A, row, &na, &ca, &va));
    PetscCall(MatRestoreRow(B, row, &nb, &cb, &vb));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestNormsInfo(Mat A, Mat B)
{
  NormType types[3] = {NORM_1, NORM_INFINITY, NORM_FROBENIUS};
  MatInfo  ia, ib;
  PetscInt bs;

  PetscFunctionBegin;
  for (int t = 0; t < 3; t++) {
    PetscReal na, nb;
    PetscCall(MatNorm(A, types[t], &na));
    PetscCall(MatNorm(B, types[t], &nb));
    PetscCheck(PetscAbsReal(na - nb) <= TOL * nb, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MatNorm %s: %.17g, AIJ %.17g", NormTypes[types[t]], (double)na, (double)nb);
  }
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &ia));
  PetscCall(MatGetInfo(B, MAT_GLOBAL_SUM, &ib));
  PetscCall(MatGetBlockSize(B, &bs));
  PetscCheck(ia.nz_used == ib.nz_used, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MatGetInfo: %g entries used, AIJ %g", ia.nz_used, ib.nz_used);
  PetscCheck(ia.block_size == bs, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MatGetInfo: block size %g, expected %" PetscInt_FMT, ia.block_size, bs);
  PetscCheck(ia.nz_allocated >= ia.nz_used && ia.memory > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MatGetInfo: allocated %g < used %g, or no memory", ia.nz_allocated, ia.nz_used);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* operations that change the matrix: applied to copies of both */
static PetscErrorCode TestModify(Ctx *c, Mat A, Mat B)
{
  Mat       A2, B2, A3;
  Vec       d, l, r;
  PetscBool eq;

  PetscFunctionBegin;
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &A2));
  PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &B2));
  PetscCall(GKCheckMatClose(A2, B, 0.0, "MatDuplicate(MAT_COPY_VALUES)"));
  PetscCall(MatEqual(A, A2, &eq));
  PetscCall(GKCheck(eq, "MatEqual of a matrix and its copy"));
  PetscCall(RandVec(c, &d));
  PetscCall(RandVec(c, &l));
  PetscCall(RandVec(c, &r));

  PetscCall(MatScale(A2, -1.5));
  PetscCall(MatScale(B2, -1.5));
  PetscCall(GKCheckMatClose(A2, B2, TOL, "MatScale"));
  PetscCall(MatEqual(A, A2, &eq));
  PetscCall(GKCheck((PetscBool)!eq, "MatEqual tells a scaled matrix from the original"));
  PetscCall(MatShift(A2, 3.25));
  PetscCall(MatShift(B2, 3.25));
  PetscCall(GKCheckMatClose(A2, B2, TOL, "MatShift"));
  PetscCall(MatDiagonalSet(A2, d, ADD_VALUES));
  PetscCall(MatDiagonalSet(B2, d, ADD_VALUES));
  PetscCall(GKCheckMatClose(A2, B2, TOL, "MatDiagonalSet(ADD_VALUES)"));
  PetscCall(MatDiagonalSet(A2, d, INSERT_VALUES));
  PetscCall(MatDiagonalSet(B2, d, INSERT_VALUES));
  PetscCall(GKCheckMatClose(A2, B2, TOL, "MatDiagonalSet(INSERT_VALUES)"));
  PetscCall(MatDiagonalScale(A2, l, r));
  PetscCall(MatDiagonalScale(B2, l, r));
  PetscCall(GKCheckMatClose(A2, B2, TOL, "MatDiagonalScale"));
  PetscCall(MatDiagonalScale(A2, NULL, r));
  PetscCall(MatDiagonalScale(B2, NULL, r));
  PetscCall(GKCheckMatClose(A2, B2, TOL, "MatDiagonalScale(right only)"));
  PetscCall(MatAXPY(A2, 0.75, A, SAME_NONZERO_PATTERN));
  PetscCall(MatAXPY(B2, 0.75, B, SAME_NONZERO_PATTERN));
  PetscCall(GKCheckMatClose(A2, B2, TOL, "MatAXPY(SAME_NONZERO_PATTERN)"));
  PetscCall(MatAXPY(A2, -0.5, B, SUBSET_NONZERO_PATTERN)); /* X of another type: PETSc adds row by row */
  PetscCall(MatAXPY(B2, -0.5, B, DIFFERENT_NONZERO_PATTERN));
  PetscCall(GKCheckMatClose(A2, B2, TOL, "MatAXPY with an AIJ X"));

  PetscCall(MatDuplicate(A, MAT_DO_NOT_COPY_VALUES, &A3));
  {
    PetscReal nrm;
    PetscCall(MatNorm(A3, NORM_FROBENIUS, &nrm));
    PetscCheck(nrm == 0.0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MatDuplicate(MAT_DO_NOT_COPY_VALUES) has norm %g", (double)nrm);
  }
  PetscCall(MatCopy(A2, A3, SAME_NONZERO_PATTERN));
  PetscCall(GKCheckMatClose(A3, B2, 0.0, "MatCopy"));
  PetscCall(MatZeroEntries(A3));
  PetscCall(MatCopy(B2, A3, SAME_NONZERO_PATTERN)); /* from AIJ: PETSc copies row by row */
  PetscCall(GKCheckMatClose(A3, B2, 0.0, "MatCopy from AIJ"));
  PetscCall(MatDestroy(&A3));
  PetscCall(MatCopy(A2, B2, SAME_NONZERO_PATTERN)); /* into AIJ */
  PetscCall(GKCheckMatClose(A2, B2, 0.0, "MatCopy into AIJ"));

  PetscCall(VecDestroy(&d));
  PetscCall(VecDestroy(&l));
  PetscCall(VecDestroy(&r));
  PetscCall(MatDestroy(&A2));
  PetscCall(MatDestroy(&B2));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Dirichlet rows: each rank names a few rows, some of them owned by the next rank */
static PetscErrorCode TestZeroRows(Ctx *c, Mat A, Mat B, PetscBool columns)
{
  Mat         A2, B2;
  Vec         x, b, br;
  PetscInt    rows[6], nr = 0, rstart, rend, N;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(MatGetSize(A, &N, NULL));
  rows[nr++] = rstart;
  rows[nr++] = (rstart + rend) / 2;
  rows[nr++] = rend - 1;
  rows[nr++] = (rend + 1) % N; /* often another rank's */
  rows[nr++] = (rend + 7) % N;
  rows[nr++] = rstart; /* a duplicate */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &A2));
  PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &B2));
  PetscCall(RandVec(c, &x));
  PetscCall(RandVec(c, &b));
  PetscCall(VecDuplicate(b, &br));
  PetscCall(VecCopy(b, br));
  if (columns) {
    PetscCall(MatZeroRowsColumns(A2, nr, rows, 2.5, x, b));
    PetscCall(MatZeroRowsColumns(B2, nr, rows, 2.5, x, br));
  } else {
    PetscCall(MatZeroRows(A2, nr, rows, 2.5, x, b));
    PetscCall(MatZeroRows(B2, nr, rows, 2.5, x, br));
  }
  PetscCall(GKCheckMatClose(A2, B2, 0.0, columns ? "MatZeroRowsColumns: matrix" : "MatZeroRows: matrix"));
  PetscCall(GKCheckVecClose(b, br, TOL, columns ? "MatZeroRowsColumns: right-hand side" : "MatZeroRows: right-hand side"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&br));
  PetscCall(MatDestroy(&A2));
  PetscCall(MatDestroy(&B2));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestConvert(Mat A, Mat B)
{
  Mat       C, D;
  PetscBool eq;

  PetscFunctionBegin;
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &C)); /* SGDIA -> AIJ */
  PetscCall(GKCheckMatClose(C, B, 0.0, "MatConvert SGDIA -> AIJ"));
  PetscCall(MatConvert(C, MATSGDIA, MAT_INITIAL_MATRIX, &D)); /* AIJ (with its DMDA) -> SGDIA */
  PetscCall(MatEqual(A, D, &eq));
  PetscCall(GKCheck(eq, "MatConvert AIJ -> SGDIA gives back the same matrix"));
  PetscCall(MatConvert(B, MATSGDIA, MAT_REUSE_MATRIX, &D));
  PetscCall(MatEqual(A, D, &eq));
  PetscCall(GKCheck(eq, "MatConvert AIJ -> SGDIA (MAT_REUSE_MATRIX)"));
  PetscCall(MatConvert(D, MATAIJ, MAT_INPLACE_MATRIX, &D));
  PetscCall(GKCheckMatClose(D, B, 0.0, "MatConvert SGDIA -> AIJ in place"));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&D));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestBlockDiagonalSOR(Ctx *c, Mat A, Mat B)
{
  const PetscScalar *ia, *ib;
  PetscInt           m;
  Vec                b, x, xr;
  MatSORType         types[3] = {SOR_LOCAL_FORWARD_SWEEP, SOR_LOCAL_BACKWARD_SWEEP, SOR_LOCAL_SYMMETRIC_SWEEP};

  PetscFunctionBegin;
  /* the diagonal blocks must be invertible: make the matrices diagonally dominant copies */
  PetscCall(MatGetLocalSize(A, &m, NULL));
  PetscCall(MatShift(A, 50.0));
  PetscCall(MatShift(B, 50.0));
  PetscCall(MatInvertBlockDiagonal(A, &ia));
  PetscCall(MatInvertBlockDiagonal(B, &ib));
  for (PetscInt i = 0; i < m * c->dof; i++) PetscCheck(PetscAbsScalar(ia[i] - ib[i]) <= 1e-12 * PetscMax(1.0, PetscAbsScalar(ib[i])), PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatInvertBlockDiagonal: entry %" PetscInt_FMT " is %g, AIJ %g", i, (double)PetscRealPart(ia[i]), (double)PetscRealPart(ib[i]));
  PetscCall(RandVec(c, &b));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecDuplicate(b, &xr));
  for (int t = 0; t < 3; t++) {
    PetscCall(VecSet(x, 0.0));
    PetscCall(VecSet(xr, 0.0));
    PetscCall(MatSOR(A, b, 1.1, (MatSORType)(types[t] | SOR_ZERO_INITIAL_GUESS), 0.0, 1, 1, x));
    PetscCall(MatSOR(B, b, 1.1, (MatSORType)(types[t] | SOR_ZERO_INITIAL_GUESS), 0.0, 1, 1, xr));
    PetscCall(MatSOR(A, b, 1.1, types[t], 0.0, 2, 1, x));
    PetscCall(MatSOR(B, b, 1.1, types[t], 0.0, 2, 1, xr));
    PetscCall(GKCheckVecClose(x, xr, TOL, "MatSOR"));
  }
  PetscCall(MatShift(A, -50.0));
  PetscCall(MatShift(B, -50.0));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&xr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a nonlinear function whose Jacobian has the pattern of B: F(x) = B x + x.^2 / 2 */
static PetscErrorCode FormF(void *snes, Vec x, Vec f, void *ctx)
{
  Mat B = (Mat)ctx;
  Vec x2;

  PetscFunctionBegin;
  (void)snes;
  PetscCall(MatMult(B, x, f));
  PetscCall(VecDuplicate(x, &x2));
  PetscCall(VecPointwiseMult(x2, x, x));
  PetscCall(VecAXPY(f, 0.5, x2));
  PetscCall(VecDestroy(&x2));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestFDColoring(Ctx *c, Mat A, Mat B)
{
  ISColoring    isc;
  MatFDColoring fa, fb;
  Mat           Ja, Jb;
  Vec           x;
  const char   *htype[2] = {"wp", "ds"};

  PetscFunctionBegin;
  PetscCall(DMCreateColoring(c->da, IS_COLORING_GLOBAL, &isc));
  for (int h = 0; h < 2; h++) {
    PetscCall(MatDuplicate(A, MAT_DO_NOT_COPY_VALUES, &Ja));
    PetscCall(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, &Jb));
    PetscCall(MatFDColoringCreate(Ja, isc, &fa));
    PetscCall(MatFDColoringCreate(Jb, isc, &fb));
    PetscCall(MatFDColoringSetFunction(fa, GK_FDCOLORING_FN(FormF), B));
    PetscCall(MatFDColoringSetFunction(fb, GK_FDCOLORING_FN(FormF), B));
    PetscCall(MatFDColoringSetType(fa, htype[h]));
    PetscCall(MatFDColoringSetType(fb, htype[h]));
    PetscCall(MatFDColoringSetUp(Ja, isc, fa));
    PetscCall(MatFDColoringSetUp(Jb, isc, fb));
    PetscCall(RandVec(c, &x));
    PetscCall(MatFDColoringApply(Ja, fa, x, NULL));
    PetscCall(MatFDColoringApply(Jb, fb, x, NULL));
    PetscCall(GKCheckMatClose(Ja, Jb, TOL, "MatFDColoringApply"));
    PetscCall(VecDestroy(&x));
    PetscCall(MatFDColoringDestroy(&fa));
    PetscCall(MatFDColoringDestroy(&fb));
    PetscCall(MatDestroy(&Ja));
    PetscCall(MatDestroy(&Jb));
  }
  PetscCall(ISColoringDestroy(&isc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* solves with PCs that go through the type's own operations or its AIJ copy */
static PetscErrorCode TestSolve(Ctx *c, Mat A, Mat B)
{
  const char *pcs[] = {"jacobi", "pbjacobi", "sor", "ilu", "bjacobi"};
  PetscMPIInt size;
  Vec         b, x, xr;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(MatShift(A, 20.0)); /* a well-conditioned system */
  PetscCall(MatShift(B, 20.0));
  PetscCall(RandVec(c, &b));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecDuplicate(b, &xr));
  for (size_t p = 0; p < sizeof(pcs) / sizeof(pcs[0]); p++) {
    KSP      ka, kb;
    PC       pa, pb;
    PetscInt ita, itb;
    if (size > 1 && !strcmp(pcs[p], "ilu")) continue;
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ka));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &kb));
    PetscCall(KSPSetOperators(ka, A, A));
    PetscCall(KSPSetOperators(kb, B, B));
    PetscCall(KSPSetType(ka, KSPGMRES));
    PetscCall(KSPSetType(kb, KSPGMRES));
    PetscCall(KSPGetPC(ka, &pa));
    PetscCall(KSPGetPC(kb, &pb));
    PetscCall(PCSetType(pa, pcs[p]));
    PetscCall(PCSetType(pb, pcs[p]));
    PetscCall(KSPSetTolerances(ka, 1e-10, 1e-50, 1e5, 500));
    PetscCall(KSPSetTolerances(kb, 1e-10, 1e-50, 1e5, 500));
    PetscCall(KSPSolve(ka, b, x));
    PetscCall(KSPSolve(kb, b, xr));
    PetscCall(KSPGetIterationNumber(ka, &ita));
    PetscCall(KSPGetIterationNumber(kb, &itb));
    PetscCheck(ita == itb, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "KSPSolve with PC %s: %" PetscInt_FMT " iterations, AIJ %" PetscInt_FMT, pcs[p], ita, itb);
    PetscCall(GKCheckVecClose(x, xr, 1e-9, "KSPSolve solution"));
    PetscCall(KSPDestroy(&ka));
    PetscCall(KSPDestroy(&kb));
  }
  PetscCall(MatShift(A, -20.0));
  PetscCall(MatShift(B, -20.0));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&xr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestView(Mat A)
{
  PetscViewer v;
  char        fname[PETSC_MAX_PATH_LEN] = "sgdia_view_XXXXXX", line[1024];
  FILE       *fp;
  PetscBool   found = PETSC_FALSE;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (rank == 0) {
    int fd = mkstemp(fname);
    PetscCheck(fd >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot create a temporary file");
    close(fd);
  }
  PetscCallMPI(MPI_Bcast(fname, sizeof(fname), MPI_CHAR, 0, PETSC_COMM_WORLD));
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_WORLD, fname, &v));
  PetscCall(PetscViewerPushFormat(v, PETSC_VIEWER_ASCII_INFO));
  PetscCall(MatView(A, v));
  PetscCall(PetscViewerPopFormat(v));
  PetscCall(PetscViewerDestroy(&v));
  if (rank == 0) {
    fp = fopen(fname, "r");
    PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot read %s", fname);
    while (fgets(line, sizeof(line), fp))
      if (strstr(line, "SG-DIA storage") && strstr(line, "dof")) found = PETSC_TRUE;
    fclose(fp);
    remove(fname);
  }
  {
    int f = found ? 1 : 0;
    PetscCallMPI(MPI_Bcast(&f, 1, MPI_INT, 0, PETSC_COMM_WORLD));
    PetscCall(GKCheck(f ? PETSC_TRUE : PETSC_FALSE, "MatView ::ascii_info shows the SG-DIA layout"));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Ctx             c;
  Mat             A, B;
  PetscInt        dim = 2, dof = 1, sw = 1, n = 7;
  char            st[16] = "star", bx[16] = "none";
  DMBoundaryType  bd;
  DMDAStencilType stype;
  PetscBool       isbox, isper, isgh;
  MatType         at;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dim", &dim, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dof", &dof, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-sw", &sw, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-stencil", st, sizeof(st), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-bx", bx, sizeof(bx), NULL));
  PetscCall(PetscStrcmp(st, "box", &isbox));
  PetscCall(PetscStrcmp(bx, "periodic", &isper));
  PetscCall(PetscStrcmp(bx, "ghosted", &isgh));
  bd    = isper ? DM_BOUNDARY_PERIODIC : (isgh ? DM_BOUNDARY_GHOSTED : DM_BOUNDARY_NONE);
  stype = isbox ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR;
  { /* uneven sizes; periodic grids take multiples of 2*sw+1, as DMDA's colourings need */
    PetscInt nn[3] = {n, n + 1, n - 1};
    if (isper) { /* 2-d star width 1 is coloured with 5 colours (i + 3j mod 5), the rest with (2sw+1)^dim */
      PetscInt q = (dim == 2 && !isbox && sw == 1) ? 15 : 2 * sw + 1;
      for (int d = 0; d < 3; d++) nn[d] = q * ((n + q - 1) / q);
    }
    if (dim == 1) PetscCall(DMDACreate1d(PETSC_COMM_WORLD, bd, nn[0], dof, sw, NULL, &c.da));
    else if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, bd, bd, stype, nn[0], nn[1], PETSC_DECIDE, PETSC_DECIDE, dof, sw, NULL, NULL, &c.da));
    else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, bd, bd, bd, stype, nn[0], nn[1], nn[2], PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, dof, sw, NULL, NULL, NULL, &c.da));
  }
  PetscCall(DMSetFromOptions(c.da));
  PetscCall(DMSetUp(c.da));
  c.dim = dim;
  c.dof = dof;
  c.sw  = sw;
  c.n   = n;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &c.rnd));
  PetscCall(PetscRandomSetSeed(c.rnd, 1234));
  PetscCall(PetscRandomSeed(c.rnd));

  PetscCall(DMSetMatType(c.da, MATSGDIA));
  PetscCall(DMCreateMatrix(c.da, &A));
  PetscCall(DMSetMatType(c.da, MATAIJ));
  PetscCall(DMCreateMatrix(c.da, &B));
  PetscCall(MatGetType(A, &at));
  {
    PetscMPIInt size;
    PetscBool   ok;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCall(PetscStrcmp(at, size == 1 ? MATSEQSGDIA : MATMPISGDIA, &ok));
    PetscCall(GKCheck(ok, "-dm_mat_type sgdia resolves to seqsgdia on one rank, mpisgdia on more"));
  }
  PetscCall(Fill(&c, A, B));
  PetscCall(GKCheckMatClose(A, B, 0.0, "values after the five insertion paths"));
  PetscCall(TestProducts(&c, A, B));
  PetscCall(TestRows(A, B));
  PetscCall(TestNormsInfo(A, B));
  PetscCall(TestModify(&c, A, B));
  PetscCall(TestZeroRows(&c, A, B, PETSC_FALSE));
  PetscCall(TestZeroRows(&c, A, B, PETSC_TRUE));
  PetscCall(TestConvert(A, B));
  PetscCall(TestBlockDiagonalSOR(&c, A, B));
  PetscCall(TestFDColoring(&c, A, B));
  PetscCall(TestSolve(&c, A, B));
  PetscCall(TestView(A));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "sgdia_ops: dim %" PetscInt_FMT " dof %" PetscInt_FMT " %s width %" PetscInt_FMT " boundary %s: all operations agree with AIJ\n", dim, dof, st, sw, bx));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(PetscRandomDestroy(&c.rnd));
  PetscCall(DMDestroy(&c.da));
  PetscCall(PetscFinalize());
  return 0;
}
