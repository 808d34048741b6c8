static const char help[] = "One Mat type against a reference type, operation by operation, on a DMDA stencil operator.\n"
                           "  -type <t>      the matrix type under test (as -dm_mat_type takes it)\n"
                           "  -ref <t>       the reference type (default aij)\n"
                           "  -vec_type <t>  the vectors' type (default: the DMDA's; cuda for a device type)\n"
                           "  -dim <d> -dof <k> -n <m> -stencil <star,box> -periodic  the grid\n"
                           "  -tol <t>       relative tolerance of arithmetic results (default 1e-12)\n"
                           "A new matrix type is tested by adding its name to tests/mat/types.txt (host) or\n"
                           "tests/gpu/types.txt (device, with its host reference): tests/run.sh expands the\n"
                           "lines of tests/mat/matgeneric.list and tests/gpu/matgeneric.list for each.\n";

/*
   The two matrices come from DMCreateMatrix() on the same DMDA with -type and -ref, and are filled through the same
   MatSetValuesStencil() calls with values that depend only on the global row and column (so any number of ranks
   gives the same matrix). Every operation a PETSc user does with AIJ on such an operator is compared: products (also
   transposed and added), diagonal, norms, duplicate, copy, scaling, shift, diagonal scaling, AXPY, zeroed rows (and
   columns), conversion to AIJ, KSP solves with several preconditioners (same iteration counts, same solution), and
   the Galerkin coarse operator with the DMDA's interpolation (MATMAIJ for dof > 1).
*/
#include <petscdmda.h>
#include <petscksp.h>
#include "gktest.h"
#include <string.h>

typedef struct {
  PetscInt  dim, dof, n;
  PetscBool box, periodic;
  PetscReal tol;
} Opts;

/* a value that depends only on (global row, global column): off-diagonal in (-1, 1), a dominant diagonal */
static PetscScalar Value(PetscInt row, PetscInt col, PetscInt nper)
{
  unsigned long long h = (unsigned long long)row * 2654435761ULL ^ ((unsigned long long)col + 0x9e3779b97f4a7c15ULL) * 40503ULL;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 32;
  if (row == col) return (PetscScalar)(2.0 * nper + (double)(h % 1000) / 1000.0);
  return (PetscScalar)((double)(h % 2001) / 1000.0 - 1.0);
}

static PetscErrorCode Fill(DM da, Mat A, const Opts *o)
{
  DMDALocalInfo info;
  PetscInt      w = o->box ? 3 : 1, npts = o->box ? (o->dim == 1 ? 3 : o->dim == 2 ? 9 : 27) : 2 * o->dim + 1;
  MatStencil   *col;
  PetscScalar  *v;
  AO            ao;

  PetscFunctionBegin;
  (void)w;
  PetscCall(DMDAGetLocalInfo(da, &info));
  PetscCall(DMDAGetAO(da, &ao));
  PetscCall(PetscMalloc2(npts * o->dof, &col, npts * o->dof, &v));
  for (PetscInt k = info.zs; k < info.zs + info.zm; k++)
    for (PetscInt j = info.ys; j < info.ys + info.ym; j++)
      for (PetscInt i = info.xs; i < info.xs + info.xm; i++)
        for (PetscInt c = 0; c < o->dof; c++) {
          MatStencil row = {0};
          PetscInt   nc = 0, grow, n[3] = {info.mx, info.my, info.mz};

          row.i = i;
          row.j = j;
          row.k = k;
          row.c = c;
          grow  = ((k * info.my + j) * info.mx + i) * o->dof + c; /* the natural ordering: independent of the ranks */
          for (PetscInt dk = (o->dim > 2 ? -1 : 0); dk <= (o->dim > 2 ? 1 : 0); dk++)
            for (PetscInt dj = (o->dim > 1 ? -1 : 0); dj <= (o->dim > 1 ? 1 : 0); dj++)
              for (PetscInt di = -1; di <= 1; di++) {
                PetscInt off = (di != 0) + (dj != 0) + (dk != 0), p[3] = {i + di, j + dj, k + dk};
                if (!o->box && off > 1) continue;
                for (PetscInt d = 0; d < o->dim; d++) {
                  if (o->periodic) p[d] = (p[d] + n[d]) % n[d];
                  else if (p[d] < 0 || p[d] >= n[d]) off = -1;
                }
                if (off < 0) continue;
                for (PetscInt cc = 0; cc < o->dof; cc++) {
                  PetscInt gcol = ((p[2] * info.my + p[1]) * info.mx + p[0]) * o->dof + cc;
                  col[nc].i     = i + di;
                  col[nc].j     = j + dj;
                  col[nc].k     = k + dk;
                  col[nc].c     = cc;
                  v[nc++]       = Value(grow, gcol, npts * o->dof);
                }
              }
          PetscCall(MatSetValuesStencil(A, 1, &row, nc, col, v, INSERT_VALUES));
        }
  PetscCall(PetscFree2(col, v));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A and R agree as matrices (through AIJ copies) */
static PetscErrorCode SameMat(Mat A, Mat R, PetscReal tol, const char *what)
{
  Mat Raij;

  PetscFunctionBegin;
  PetscCall(MatConvert(R, MATAIJ, MAT_INITIAL_MATRIX, &Raij));
  PetscCall(GKCheckMatClose(A, Raij, tol, what));
  PetscCall(MatDestroy(&Raij));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the products of A and R on the same vectors agree */
static PetscErrorCode SameProducts(Mat A, Mat R, Vec x, Vec y0, PetscReal tol, const char *what)
{
  Vec  ya, yr;
  char msg[128];

  PetscFunctionBegin;
  PetscCall(VecDuplicate(x, &ya));
  PetscCall(VecDuplicate(x, &yr));
  PetscCall(MatMult(A, x, ya));
  PetscCall(MatMult(R, x, yr));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: MatMult", what));
  PetscCall(GKCheckVecClose(ya, yr, tol, msg));
  PetscCall(MatMultAdd(A, x, y0, ya));
  PetscCall(MatMultAdd(R, x, y0, yr));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: MatMultAdd", what));
  PetscCall(GKCheckVecClose(ya, yr, tol, msg));
  PetscCall(MatMultTranspose(A, x, ya));
  PetscCall(MatMultTranspose(R, x, yr));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: MatMultTranspose", what));
  PetscCall(GKCheckVecClose(ya, yr, tol, msg));
  PetscCall(MatMultTransposeAdd(A, x, y0, ya));
  PetscCall(MatMultTransposeAdd(R, x, y0, yr));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: MatMultTransposeAdd", what));
  PetscCall(GKCheckVecClose(ya, yr, tol, msg));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&yr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Solve(Mat A, Mat R, Vec b, const char pc[], PetscReal tol)
{
  KSP       ka, kr;
  Vec       xa, xr;
  PetscInt  ita, itr;
  char      msg[128];
  KSPConvergedReason reason;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(b, &xa));
  PetscCall(VecDuplicate(b, &xr));
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), &ka));
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), &kr));
  PetscCall(KSPSetOperators(ka, A, A));
  PetscCall(KSPSetOperators(kr, R, R));
  for (KSP k = ka;; k = kr) {
    PC p;
    PetscCall(KSPSetType(k, KSPGMRES));
    PetscCall(KSPSetTolerances(k, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 500));
    PetscCall(KSPGetPC(k, &p));
    PetscCall(PCSetType(p, pc));
    if (!strcmp(pc, "hypre")) { /* BoomerAMG with nodal coarsening: it reads the matrix's block size */
      PetscCall(PetscOptionsSetValue(NULL, "-pc_hypre_boomeramg_nodal_coarsen", "6"));
      PetscCall(PCSetFromOptions(p));
    }
    if (k == kr) break;
  }
  PetscCall(KSPSolve(ka, b, xa));
  PetscCall(KSPSolve(kr, b, xr));
  PetscCall(KSPGetIterationNumber(ka, &ita));
  PetscCall(KSPGetIterationNumber(kr, &itr));
  PetscCall(KSPGetConvergedReason(ka, &reason));
  PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "GMRES + %s did not converge with the type under test (reason %d)", pc, (int)reason);
  PetscCheck(PetscAbsInt(ita - itr) <= 1, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "GMRES + %s: %" PetscInt_FMT " iterations, the reference %" PetscInt_FMT, pc, ita, itr);
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "KSPSolve with GMRES + %s", pc));
  PetscCall(GKCheckVecClose(xa, xr, PetscMax(tol, 1e-7), msg));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: GMRES + %s, %" PetscInt_FMT " iterations (reference %" PetscInt_FMT ")\n", pc, ita, itr));
  PetscCall(KSPDestroy(&ka));
  PetscCall(KSPDestroy(&kr));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&xr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The Galerkin coarse operator P^T A P with the DMDA's own interpolation (PCMG -pc_mg_galerkin; MATMAIJ for dof > 1,
   which PETSc multiplies natively only with a matrix named seqaij/mpiaij), on a grid of 2k+1 points per dimension
   (coarsenable by 2), then again with MAT_REUSE_MATRIX after the values changed */
static PetscErrorCode Galerkin(const Opts *og, const char *type, const char *ref)
{
  Opts            oo = *og, *o = &oo; /* the same operator, on a grid without periodic boundaries */
  DM              da, dac;
  Mat             A, R, P, Ca, Cr;
  const PetscInt  k = PetscMax(o->n / 2, 2), m = 2 * k + 1;
  DMDAStencilType st = o->box ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR;
  MatType         pt;
  char            ptname[64]; /* a copy: a product may convert P in place (MATMAIJ), which frees its type name */

  PetscFunctionBegin;
  oo.periodic = PETSC_FALSE;
  if (o->dim == 1) PetscCall(DMDACreate1d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, 4 * m - 3, o->dof, 1, NULL, &da));
  else if (o->dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, st, m, m, PETSC_DECIDE, PETSC_DECIDE, o->dof, 1, NULL, NULL, &da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, st, m, m, m, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, o->dof, 1, NULL, NULL, NULL, &da));
  PetscCall(DMSetUp(da));
  PetscCall(DMSetMatType(da, type));
  PetscCall(DMCreateMatrix(da, &A));
  PetscCall(DMSetMatType(da, ref));
  PetscCall(DMCreateMatrix(da, &R));
  PetscCall(Fill(da, A, o));
  PetscCall(Fill(da, R, o));
  PetscCall(DMCoarsen(da, PETSC_COMM_WORLD, &dac));
  PetscCall(DMCreateInterpolation(dac, da, &P, NULL));
  PetscCall(MatGetType(P, &pt));
  PetscCall(PetscStrncpy(ptname, pt, sizeof(ptname)));
  PetscCall(MatPtAP(A, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Ca));
  PetscCall(MatPtAP(R, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Cr));
  PetscCall(SameMat(Ca, Cr, o->tol, "MatPtAP with the DMDA's interpolation"));
  PetscCall(MatScale(A, 1.5));
  PetscCall(MatScale(R, 1.5));
  PetscCall(MatShift(A, 0.25));
  PetscCall(MatShift(R, 0.25));
  PetscCall(MatPtAP(A, P, MAT_REUSE_MATRIX, PETSC_DEFAULT, &Ca));
  PetscCall(MatPtAP(R, P, MAT_REUSE_MATRIX, PETSC_DEFAULT, &Cr));
  PetscCall(SameMat(Ca, Cr, o->tol, "MatPtAP reused after new values"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Galerkin P^T A P with the DMDA's %s interpolation: as the reference's, also reused\n", ptname));
  PetscCall(MatDestroy(&Ca));
  PetscCall(MatDestroy(&Cr));
  PetscCall(MatDestroy(&P));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscCall(DMDestroy(&dac));
  PetscCall(DMDestroy(&da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Opts        o = {2, 1, 12, PETSC_FALSE, PETSC_FALSE, 1e-12};
  char        type[64] = "", ref[64] = MATAIJ, vtype[64] = "", stencil[16] = "star";
  DM          da;
  Mat         A, R, A2, R2;
  Vec         x, y0, l, r, d1, d2;
  PetscRandom rnd;
  PetscReal   na, nr;
  PetscBool   set, vset;
  MatType     got;
  PetscInt    rows[3], nrows = 0, rs, re;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-type", type, sizeof(type), &set));
  PetscCheck(set, PETSC_COMM_WORLD, PETSC_ERR_USER, "give the type under test with -type");
  PetscCall(PetscOptionsGetString(NULL, NULL, "-ref", ref, sizeof(ref), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-vec_type", vtype, sizeof(vtype), &vset));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dim", &o.dim, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dof", &o.dof, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &o.n, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-stencil", stencil, sizeof(stencil), NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-periodic", &o.periodic, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &o.tol, NULL));
  PetscCall(PetscStrcmp(stencil, "box", &o.box));

  {
    DMBoundaryType bt = o.periodic ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE;
    DMDAStencilType st = o.box ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR;
    if (o.dim == 1) PetscCall(DMDACreate1d(PETSC_COMM_WORLD, bt, o.n * 4, o.dof, 1, NULL, &da));
    else if (o.dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, bt, bt, st, o.n, o.n + 1, PETSC_DECIDE, PETSC_DECIDE, o.dof, 1, NULL, NULL, &da));
    else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, bt, bt, bt, st, o.n, o.n - 1, o.n + 1, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, o.dof, 1, NULL, NULL, NULL, &da));
  }
  if (vset) PetscCall(DMSetVecType(da, vtype));
  PetscCall(DMSetUp(da));
  PetscCall(DMSetMatType(da, type));
  PetscCall(DMCreateMatrix(da, &A));
  PetscCall(DMSetMatType(da, ref));
  PetscCall(DMCreateMatrix(da, &R));
  PetscCall(MatGetType(A, &got));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "type under test: %s (asked for %s); reference: %s\n", got, type, ref));
  PetscCall(Fill(da, A, &o));
  PetscCall(Fill(da, R, &o));
  PetscCall(SameMat(A, R, 0.0, "assembly (MatSetValuesStencil)"));

  PetscCall(DMCreateGlobalVector(da, &x));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 7));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecDuplicate(x, &y0));
  PetscCall(VecSetRandom(y0, rnd));
  PetscCall(SameProducts(A, R, x, y0, o.tol, "assembled"));

  PetscCall(VecDuplicate(x, &d1));
  PetscCall(VecDuplicate(x, &d2));
  PetscCall(MatGetDiagonal(A, d1));
  PetscCall(MatGetDiagonal(R, d2));
  PetscCall(GKCheckVecClose(d1, d2, 0.0, "MatGetDiagonal"));
  for (PetscInt it = 0; it < 3; it++) {
    const NormType t = it == 0 ? NORM_1 : it == 1 ? NORM_FROBENIUS : NORM_INFINITY;
    PetscCall(MatNorm(A, t, &na));
    PetscCall(MatNorm(R, t, &nr));
    PetscCheck(PetscAbsReal(na - nr) <= o.tol * nr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MatNorm %s: %g, reference %g", NormTypes[t], (double)na, (double)nr);
  }

  /* duplicate, copy, scale, shift, diagonal scale, AXPY */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &A2));
  PetscCall(MatDuplicate(R, MAT_COPY_VALUES, &R2));
  PetscCall(SameMat(A2, R2, 0.0, "MatDuplicate"));
  PetscCall(MatScale(A2, 2.5));
  PetscCall(MatScale(R2, 2.5));
  PetscCall(MatShift(A2, -0.75));
  PetscCall(MatShift(R2, -0.75));
  PetscCall(SameMat(A2, R2, o.tol, "MatScale + MatShift"));
  PetscCall(VecDuplicate(x, &l));
  PetscCall(VecDuplicate(x, &r));
  PetscCall(VecSetRandom(l, rnd));
  PetscCall(VecSetRandom(r, rnd));
  PetscCall(MatDiagonalScale(A2, l, r));
  PetscCall(MatDiagonalScale(R2, l, r));
  PetscCall(SameMat(A2, R2, o.tol, "MatDiagonalScale"));
  PetscCall(MatAXPY(A2, 0.3, A, SAME_NONZERO_PATTERN));
  PetscCall(MatAXPY(R2, 0.3, R, SAME_NONZERO_PATTERN));
  PetscCall(SameMat(A2, R2, o.tol, "MatAXPY"));
  PetscCall(SameProducts(A2, R2, x, y0, o.tol, "after scale, shift, diagonal scale and AXPY"));
  PetscCall(MatCopy(A, A2, SAME_NONZERO_PATTERN));
  PetscCall(MatCopy(R, R2, SAME_NONZERO_PATTERN));
  PetscCall(SameMat(A2, R2, 0.0, "MatCopy"));

  /* zeroed rows, then rows and columns (Dirichlet conditions) */
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  if (re > rs) {
    rows[nrows++] = rs;
    if (re - rs > 2) rows[nrows++] = rs + (re - rs) / 2;
    if (re - rs > 1) rows[nrows++] = re - 1;
  }
  PetscCall(MatZeroRows(A2, nrows, rows, 3.0, NULL, NULL));
  PetscCall(MatZeroRows(R2, nrows, rows, 3.0, NULL, NULL));
  PetscCall(SameMat(A2, R2, 0.0, "MatZeroRows"));
  PetscCall(MatCopy(A, A2, DIFFERENT_NONZERO_PATTERN)); /* AIJ dropped the zeroed rows' entries */
  PetscCall(MatCopy(R, R2, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatZeroRowsColumns(A2, nrows, rows, 2.0, NULL, NULL));
  PetscCall(MatZeroRowsColumns(R2, nrows, rows, 2.0, NULL, NULL));
  PetscCall(SameMat(A2, R2, 0.0, "MatZeroRowsColumns"));
  PetscCall(SameProducts(A2, R2, x, y0, o.tol, "after MatZeroRowsColumns"));

  /* solves */
  PetscCall(Solve(A, R, y0, PCJACOBI, o.tol));
  PetscCall(Solve(A, R, y0, PCBJACOBI, o.tol));
  PetscCall(Solve(A, R, y0, PCPBJACOBI, o.tol)); /* point-block Jacobi: the matrix's block size (dof) */
  if (!vset) { /* PCBDDC and PCMG's GDSW coarse space convert the matrix to MATIS: the same operator as from the reference */
    Mat ia, ir, ba, br;

    PetscCall(MatConvert(A, MATIS, MAT_INITIAL_MATRIX, &ia));
    PetscCall(MatConvert(R, MATIS, MAT_INITIAL_MATRIX, &ir));
    PetscCall(MatConvert(ia, MATAIJ, MAT_INITIAL_MATRIX, &ba));
    PetscCall(MatConvert(ir, MATAIJ, MAT_INITIAL_MATRIX, &br));
    PetscCall(SameMat(ba, br, o.tol, "MatConvert to MATIS and back"));
    PetscCall(MatDestroy(&ia));
    PetscCall(MatDestroy(&ir));
    PetscCall(MatDestroy(&ba));
    PetscCall(MatDestroy(&br));
  }
#if defined(PETSC_HAVE_HYPRE)
  if (!vset) { /* PCHYPRE converts the matrix to MATHYPRE: the same entries and block size as from the reference */
    Mat       ha, hr, ba, br;
    PetscInt  bsa, bsr;
    char      msg[128];

    PetscCall(MatConvert(A, MATHYPRE, MAT_INITIAL_MATRIX, &ha));
    PetscCall(MatConvert(R, MATHYPRE, MAT_INITIAL_MATRIX, &hr));
    PetscCall(MatGetBlockSize(ha, &bsa));
    PetscCall(MatGetBlockSize(hr, &bsr));
    PetscCall(PetscSNPrintf(msg, sizeof(msg), "MatConvert to MATHYPRE: block size %" PetscInt_FMT ", from the reference %" PetscInt_FMT, bsa, bsr));
    PetscCall(GKCheck((PetscBool)(bsa == bsr), msg));
    PetscCall(MatConvert(ha, MATAIJ, MAT_INITIAL_MATRIX, &ba));
    PetscCall(MatConvert(hr, MATAIJ, MAT_INITIAL_MATRIX, &br));
    PetscCall(SameMat(ba, br, 0.0, "MatConvert to MATHYPRE and back"));
    PetscCall(MatDestroy(&ha));
    PetscCall(MatDestroy(&hr));
    PetscCall(MatDestroy(&ba));
    PetscCall(MatDestroy(&br));
    PetscCall(Solve(A, R, y0, "hypre", o.tol));
  }
#endif
  PetscCall(Solve(A, R, y0, PCNONE, o.tol));
  PetscCall(Galerkin(&o, type, ref)); /* the device types too (GPU lines, -vec_type cuda): PCMG -pc_mg_galerkin's product */

  PetscCall(MatDestroy(&A2));
  PetscCall(MatDestroy(&R2));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y0));
  PetscCall(VecDestroy(&l));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&d1));
  PetscCall(VecDestroy(&d2));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS\n"));
  PetscCall(PetscFinalize());
  return 0;
}
