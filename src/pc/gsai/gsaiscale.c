/*
   PCGSAI type spd on a row-scaled symmetric matrix, A = D_w S with S symmetric and w > 0.

   Such matrices come from mirror (Neumann) boundaries that double a boundary row's couplings (stock KSP ex66) and
   from finite volumes whose rows were divided by the cell volumes. CG with Jacobi converges on them (diag(A)^{-1} A =
   diag(S)^{-1} S), but an FSAI G built from the symmetric part (A + A^T)/2 does not: CG + G^T G stagnated on ex66.
   With G built from S = D_w^{-1} A and applied as M = G^T G D_w^{-1}, M A = G^T G S, as with Jacobi (ex66, refine 3:
   82 CG iterations against 119 for Jacobi; refine 5: 247 against 448).

   GSAIFindRowScaling() finds w from the value pairs: a_ij / a_ji = w_i / w_j for every stored pair (both entries
   nonzero, same sign), i.e. u = log w is a potential on the graph of A with differences l_ij = log(a_ij / a_ji).
     1. each rank walks its diagonal block (breadth first) and gets u up to one constant per local component;
     2. the components are tied together across ranks: in rounds, every component that has a neighbour row in an
        already placed component is shifted to agree with it (one scatter of u and the placed flags per round);
        when no component can be placed, the first unplaced one (lowest rank) is placed as it is;
     3. every pair is checked: |u_i - u_j - l_ij| <= 1e-8 (1 + |l_ij|).
   It fails (found = false, -info says why) when an entry's mirror entry is zero while it is not (one-sided pattern:
   the Dirichlet rows of ex45, which gsai.c handles apart), when a pair has opposite signs, when the ratios are not
   consistent (a genuinely nonsymmetric matrix), or when w = 1 everywhere (A is symmetric already).
*/
#include "gsaiimpl.h"

#define GSAI_SCALE_TOL     1.0e-8
#define GSAI_SCALE_ROUNDS  64
#define GSAI_SCALE_TRIVIAL 1.0e-12

typedef struct {
  PetscInt   n, rstart;
  PetscInt  *eptr, *ecol; /* the pairs of each local row: global columns, i excluded */
  PetscReal *el;          /* l_ij = log(a_ij / a_ji) */
} GSAIPairs;

static PetscErrorCode GSAIPairsDestroy(GSAIPairs *p)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(p->eptr));
  PetscCall(PetscFree(p->ecol));
  PetscCall(PetscFree(p->el));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the pairs of the local rows from the rows of C = A (AIJ) and T = A^T; *ok = false with the reason in why */
static PetscErrorCode GSAIPairsCreate(Mat C, Mat T, GSAIPairs *p, PetscBool *ok, char why[], size_t len)
{
  PetscInt cap = 0, ne = 0;

  PetscFunctionBegin;
  *ok = PETSC_TRUE;
  PetscCall(MatGetOwnershipRange(C, &p->rstart, NULL));
  PetscCall(MatGetLocalSize(C, &p->n, NULL));
  PetscCall(PetscMalloc1(p->n + 1, &p->eptr));
  p->eptr[0] = 0;
  for (PetscInt r = 0; r < p->n && *ok; r++) {
    PetscInt           i = p->rstart + r, na, nt, a = 0, t = 0;
    const PetscInt    *ca, *ct;
    const PetscScalar *va, *vt;

    PetscCall(MatGetRow(C, i, &na, &ca, &va));
    PetscCall(MatGetRow(T, i, &nt, &ct, &vt));
    if (ne + na + nt > cap) { /* at most na + nt pairs from this row */
      cap = PetscMax(2 * cap, ne + na + nt + 16);
      PetscCall(PetscRealloc(cap * sizeof(PetscInt), &p->ecol));
      PetscCall(PetscRealloc(cap * sizeof(PetscReal), &p->el));
    }
    /* merge the sorted rows: column j of row i of A and of A^T (= a_ji) */
    while ((a < na || t < nt) && *ok) {
      PetscInt    j;
      PetscScalar x = 0.0, y = 0.0;
      if (t >= nt || (a < na && ca[a] < ct[t])) {
        j = ca[a];
        x = va[a++];
      } else if (a >= na || ct[t] < ca[a]) {
        j = ct[t];
        y = vt[t++];
      } else {
        j = ca[a];
        x = va[a++];
        y = vt[t++];
      }
      if (j == i || (x == 0.0 && y == 0.0)) continue;
      if (x == 0.0 || y == 0.0) {
        *ok = PETSC_FALSE;
        PetscCall(PetscSNPrintf(why, len, "a(%" PetscInt_FMT ",%" PetscInt_FMT ") = %g but a(%" PetscInt_FMT ",%" PetscInt_FMT ") = %g", i, j, (double)PetscRealPart(x), j, i, (double)PetscRealPart(y)));
      } else if (!(PetscRealPart(x) / PetscRealPart(y) > 0.0)) {
        *ok = PETSC_FALSE;
        PetscCall(PetscSNPrintf(why, len, "a(%" PetscInt_FMT ",%" PetscInt_FMT ") and a(%" PetscInt_FMT ",%" PetscInt_FMT ") have opposite signs", i, j, j, i));
      } else {
        p->ecol[ne] = j;
        p->el[ne++] = PetscLogReal(PetscRealPart(x) / PetscRealPart(y));
      }
    }
    PetscCall(MatRestoreRow(T, i, &nt, &ct, &vt));
    PetscCall(MatRestoreRow(C, i, &na, &ca, &va));
    p->eptr[r + 1] = ne;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  GSAIFindRowScaling - finds w > 0 with A = D_w S, S symmetric (see the comment at the top of this file)

  Collective

  Input Parameter:
. A - the matrix; its values must be readable on the host (the caller checks)

  Output Parameters:
+ winv  - when found: 1/w, a vector of A's row layout and type (MatCreateVecs()); else NULL
. found - whether A is a row-scaled symmetric matrix with w not all equal
- range - when found: the smallest and the largest w, w normalised to geometric mean 1 (may be NULL)
*/
PetscErrorCode GSAIFindRowScaling(Mat A, Vec *winv, PetscBool *found, PetscReal range[2])
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)A);
  PetscMPIInt rank, size;
  Mat         C = A, T = NULL;
  PetscBool   isaij, ok;
  GSAIPairs   p = {0};
  char        why[160] = "";
  PetscInt   *comp = NULL, *queue = NULL, ncomp = 0, nghost = 0, *ghost = NULL;
  PetscReal  *u = NULL, *su = NULL;
  PetscBool  *placed = NULL;
  Vec         U = NULL, F = NULL, Ug = NULL, Fg = NULL;
  VecScatter  sc = NULL;

  PetscFunctionBegin;
  *winv  = NULL;
  *found = PETSC_FALSE;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscObjectBaseTypeCompareAny((PetscObject)A, &isaij, MATSEQAIJ, MATMPIAIJ, ""));
  if (!isaij) PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &C));
  PetscCall(MatTranspose(C, MAT_INITIAL_MATRIX, &T));
  PetscCall(GSAIPairsCreate(C, T, &p, &ok, why, sizeof(why)));
  PetscCall(MatDestroy(&T));
  if (C != A) PetscCall(MatDestroy(&C));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, GPUKIT_MPI_BOOL, MPI_LAND, comm));
  if (!ok) {
    if (why[0]) PetscCall(PetscInfo(A, "A is not a row-scaled symmetric matrix: %s\n", why));
    else PetscCall(PetscInfo(A, "A is not a row-scaled symmetric matrix (on another rank)\n"));
    goto done;
  }

  /* 1. local components, breadth first over the diagonal block */
  PetscCall(PetscMalloc3(p.n, &comp, p.n, &queue, p.n, &u));
  for (PetscInt r = 0; r < p.n; r++) comp[r] = -1;
  for (PetscInt r0 = 0; r0 < p.n; r0++) {
    PetscInt head = 0, tail = 0;
    if (comp[r0] >= 0) continue;
    comp[r0]      = ncomp;
    u[r0]         = 0.0;
    queue[tail++] = r0;
    while (head < tail) {
      PetscInt r = queue[head++];
      for (PetscInt e = p.eptr[r]; e < p.eptr[r + 1]; e++) {
        PetscInt s = p.ecol[e] - p.rstart;
        if (s < 0 || s >= p.n || comp[s] >= 0) continue;
        comp[s]       = ncomp;
        u[s]          = u[r] - p.el[e]; /* l_rs = u_r - u_s */
        queue[tail++] = s;
      }
    }
    ncomp++;
  }

  /* 2. the components across ranks */
  PetscCall(PetscCalloc2(ncomp, &placed, ncomp, &su));
  for (PetscInt r = 0; r < p.n; r++)
    for (PetscInt e = p.eptr[r]; e < p.eptr[r + 1]; e++)
      if (p.ecol[e] < p.rstart || p.ecol[e] >= p.rstart + p.n) nghost++;
  PetscCall(PetscMalloc1(nghost, &ghost));
  nghost = 0;
  for (PetscInt r = 0; r < p.n; r++)
    for (PetscInt e = p.eptr[r]; e < p.eptr[r + 1]; e++)
      if (p.ecol[e] < p.rstart || p.ecol[e] >= p.rstart + p.n) ghost[nghost++] = p.ecol[e];
  PetscCall(PetscSortRemoveDupsInt(&nghost, ghost));
  {
    IS is;
    PetscCall(VecCreateMPI(comm, p.n, PETSC_DETERMINE, &U));
    PetscCall(VecDuplicate(U, &F));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, nghost, &Ug));
    PetscCall(VecDuplicate(Ug, &Fg));
    PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nghost, ghost, PETSC_USE_POINTER, &is));
    PetscCall(VecScatterCreate(U, is, Ug, NULL, &sc));
    PetscCall(ISDestroy(&is));
  }
  for (PetscInt round = 0;; round++) {
    PetscInt           unplaced = 0, progress = 0, g[2];
    PetscScalar       *a, *f;
    const PetscScalar *ag, *fg;

    PetscCheck(round < GSAI_SCALE_ROUNDS + 2 * size, comm, PETSC_ERR_PLIB, "PCGSAI: the row scaling did not settle in %d rounds", (int)(GSAI_SCALE_ROUNDS + 2 * size));
    PetscCall(VecGetArrayWrite(U, &a));
    PetscCall(VecGetArrayWrite(F, &f));
    for (PetscInt r = 0; r < p.n; r++) {
      a[r] = u[r];
      f[r] = placed[comp[r]] ? 1.0 : 0.0;
    }
    PetscCall(VecRestoreArrayWrite(F, &f));
    PetscCall(VecRestoreArrayWrite(U, &a));
    PetscCall(VecScatterBegin(sc, U, Ug, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(sc, U, Ug, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterBegin(sc, F, Fg, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(sc, F, Fg, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecGetArrayRead(Ug, &ag));
    PetscCall(VecGetArrayRead(Fg, &fg));
    /* the first placed neighbour of each unplaced component gives its shift */
    for (PetscInt r = 0; r < p.n; r++) {
      PetscInt c = comp[r];
      if (placed[c]) continue;
      for (PetscInt e = p.eptr[r]; e < p.eptr[r + 1] && !placed[c]; e++) {
        PetscInt k, j = p.ecol[e];
        if (j >= p.rstart && j < p.rstart + p.n) continue;
        PetscCall(PetscFindInt(j, nghost, ghost, &k));
        if (PetscRealPart(fg[k]) != 1.0) continue;
        su[c]     = PetscRealPart(ag[k]) + p.el[e] - u[r]; /* u_r + shift = u_j + l_rj */
        placed[c] = PETSC_TRUE;
        progress++;
      }
    }
    PetscCall(VecRestoreArrayRead(Fg, &fg));
    PetscCall(VecRestoreArrayRead(Ug, &ag));
    for (PetscInt r = 0; r < p.n; r++)
      if (placed[comp[r]] && su[comp[r]] != 0.0) u[r] += su[comp[r]];
    for (PetscInt c = 0; c < ncomp; c++) {
      su[c] = 0.0;
      if (!placed[c]) unplaced++;
    }
    g[0] = unplaced;
    g[1] = progress;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, g, 2, MPIU_INT, MPI_SUM, comm));
    if (!g[0]) break;
    if (!g[1]) { /* nothing reaches a placed component: place the first unplaced one of the lowest rank as it is */
      PetscMPIInt first = unplaced ? rank : size;
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm));
      if (first == rank)
        for (PetscInt c = 0; c < ncomp; c++)
          if (!placed[c]) {
            placed[c] = PETSC_TRUE;
            break;
          }
    }
  }

  /* 3. every pair agrees */
  {
    PetscScalar       *a;
    const PetscScalar *ag;
    PetscReal          umax = 0.0, sum = 0.0, ext[3];
    PetscInt           bad = -1, badj = -1;

    PetscCall(VecGetArrayWrite(U, &a));
    for (PetscInt r = 0; r < p.n; r++) a[r] = u[r];
    PetscCall(VecRestoreArrayWrite(U, &a));
    PetscCall(VecScatterBegin(sc, U, Ug, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(sc, U, Ug, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecGetArrayRead(Ug, &ag));
    for (PetscInt r = 0; r < p.n && bad < 0; r++)
      for (PetscInt e = p.eptr[r]; e < p.eptr[r + 1]; e++) {
        PetscInt  j = p.ecol[e], k;
        PetscReal uj;
        if (j >= p.rstart && j < p.rstart + p.n) uj = u[j - p.rstart];
        else {
          PetscCall(PetscFindInt(j, nghost, ghost, &k));
          uj = PetscRealPart(ag[k]);
        }
        if (PetscAbsReal(u[r] - uj - p.el[e]) > GSAI_SCALE_TOL * (1.0 + PetscAbsReal(p.el[e]))) {
          bad  = p.rstart + r;
          badj = j;
          break;
        }
      }
    PetscCall(VecRestoreArrayRead(Ug, &ag));
    ok = (PetscBool)(bad < 0);
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, GPUKIT_MPI_BOOL, MPI_LAND, comm));
    if (!ok) {
      if (bad >= 0) PetscCall(PetscInfo(A, "A is not a row-scaled symmetric matrix: the ratios a_ij/a_ji are not consistent at (%" PetscInt_FMT ",%" PetscInt_FMT ")\n", bad, badj));
      goto done;
    }
    /* w up to one constant: centre log w at 0; w = 1 everywhere means A is symmetric */
    for (PetscInt r = 0; r < p.n; r++) sum += u[r];
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPIU_REAL, MPIU_SUM, comm));
    sum /= (PetscReal)PetscMax(1, A->rmap->N);
    ext[0] = PETSC_MAX_REAL;
    ext[1] = -PETSC_MAX_REAL;
    for (PetscInt r = 0; r < p.n; r++) {
      u[r] -= sum;
      ext[0] = PetscMin(ext[0], u[r]);
      ext[1] = PetscMax(ext[1], u[r]);
      umax   = PetscMax(umax, PetscAbsReal(u[r]));
    }
    ext[0] = -ext[0];
    ext[2] = umax;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, ext, 3, MPIU_REAL, MPIU_MAX, comm));
    if (ext[2] <= GSAI_SCALE_TRIVIAL) {
      PetscCall(PetscInfo(A, "A is symmetric up to rounding: no row scaling\n"));
      goto done;
    }
    if (range) {
      range[0] = PetscExpReal(-ext[0]);
      range[1] = PetscExpReal(ext[1]);
    }
    PetscCall(MatCreateVecs(A, NULL, winv));
    PetscCall(VecGetArrayWrite(*winv, &a));
    for (PetscInt r = 0; r < p.n; r++) a[r] = PetscExpReal(-u[r]);
    PetscCall(VecRestoreArrayWrite(*winv, &a));
    *found = PETSC_TRUE;
    PetscCall(PetscInfo(A, "A = D_w S with S symmetric, w in [%g, %g]\n", (double)PetscExpReal(-ext[0]), (double)PetscExpReal(ext[1])));
  }

done:
  PetscCall(VecScatterDestroy(&sc));
  PetscCall(VecDestroy(&U));
  PetscCall(VecDestroy(&F));
  PetscCall(VecDestroy(&Ug));
  PetscCall(VecDestroy(&Fg));
  PetscCall(PetscFree(ghost));
  PetscCall(PetscFree2(placed, su));
  PetscCall(PetscFree3(comp, queue, u));
  PetscCall(GSAIPairsDestroy(&p));
  PetscFunctionReturn(PETSC_SUCCESS);
}
