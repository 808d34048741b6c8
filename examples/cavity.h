/*
   The driven cavity (examples/cavity.c): declarations shared by the host program and its CUDA part
   (examples/cavitycuda.cu), and the point functions that both call, so that host and device compute the
   same residual and Jacobian from one body.

   Unknowns per grid point: (u, v, omega, T), interleaved (the DMDA's layout). Grid point (i, j) of a rank's
   ghosted local array is xl[(j - gys) * gxm + (i - gxs)].
   The 5-point star is numbered as MATSGDIA numbers its stencil points, (dz, dy, dx) lexicographic:
     CAVITY_S (0,-1)   CAVITY_W (-1,0)   CAVITY_C (0,0)   CAVITY_E (1,0)   CAVITY_N (0,1)      (dx, dy)
*/
#pragma once

#include <petscsnes.h>
#include <petscdmda.h>
#include <petscversion.h>

#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

/* the GPU path: a PETSc with CUDA, real scalars */
#if defined(PETSC_HAVE_CUDA) && !defined(PETSC_USE_COMPLEX)
  #define CAVITY_HAVE_CUDA 1
#endif

#if defined(__CUDACC__)
  #define CAVITY_HD static inline __host__ __device__
#else
  #define CAVITY_HD static inline
#endif

typedef struct {
  PetscScalar u, v, omega, temp;
} CavityField;

enum {
  CAVITY_S = 0,
  CAVITY_W = 1,
  CAVITY_C = 2,
  CAVITY_E = 3,
  CAVITY_N = 4,
  CAVITY_NPOINTS = 5
};
#define CAVITY_DOF   4
#define CAVITY_MAX_K 9 /* stencil points of a matrix layout we write: a width-1 star (5) or box (9) */

/* one rank's part of one grid level, and the physical parameters */
typedef struct {
  PetscInt  mx, my;             /* grid points of the level */
  PetscInt  xs, ys, xm, ym;     /* owned box */
  PetscInt  gxs, gys, gxm, gym; /* ghosted box */
  PetscReal hx, hy, dhx, dhy, hxdhy, hydhx;
  PetscReal lid, grashof, prandtl;
} CavityGrid;

/* an array layout of the Jacobian: entry (s*4 + c)*m + p*4 + r couples row component r of owned point p
   (p = (j - ys)*xm + (i - xs)) with component c of its neighbour through layout point s; slot[s] is the star
   point (CAVITY_S..CAVITY_N) of layout point s, or -1 for a point outside the star (a box corner: stays 0).
   This is MATSGDIA's layout (docs/sgdia.md), and the order of the COO entries for other matrix types. */
typedef struct {
  CavityGrid g;
  PetscInt   k;                  /* layout points */
  PetscInt   slot[CAVITY_MAX_K]; /* star point of each layout point, or -1 */
} CavityLayout;

/* one product of the MG interpolation P (cavitycuda.cu): the output's owned box, the box of the input array (the
   input's ghosted box: its local vector's, or on one rank the global vector's, which is the same box), and the fine
   grid's size */
typedef struct {
  PetscInt mx, my;         /* fine grid points */
  PetscInt xs, ys, xm, ym; /* owned box of the output (fine grid for P x, coarse for P^T x) */
  PetscInt gxs, gys, gxm;  /* box of the input array (coarse grid for P x, fine for P^T x) */
} CavityInterpBox;

/* how the Jacobian's values reach a (Seq/MPI)AIJ matrix, -cavity_aij_fill: straight into the CSR value array of a
   one-rank matrix whose structure is the stencil's (CavityGetCSR()), or through COO (CavityGetCOO()); auto: CSR where
   it applies, else COO */
typedef enum {
  CAVITY_FILL_AUTO,
  CAVITY_FILL_COO,
  CAVITY_FILL_CSR
} CavityFill;

/* physical parameters, from the options, and the AIJ fill */
typedef struct {
  PetscReal  lid, grashof, prandtl;
  CavityFill fill;
} CavityParams;

/* log events, registered by examples/cavity.c */
PETSC_EXTERN PetscLogEvent CAVITY_Residual, CAVITY_Jacobian, CAVITY_ResidualCUDA, CAVITY_JacobianCUDA, CAVITY_InterpToGPU, CAVITY_InterpCUDA, CAVITY_COOSetUp, CAVITY_CSRSetUp, CAVITY_CSRColumns, CAVITY_CSRStructure, CAVITY_CSRCheck;

/* the grid of the DMDA dm (any MG level) with the parameters */
PETSC_EXTERN PetscErrorCode CavityGetGrid(DM, const CavityParams *, CavityGrid *);
/* B's COO preallocation (made once per matrix) in row order: CavityCOORow() below, so that PETSc's COO set-up finds
   the rows sorted and, on one rank, each row's columns strictly increasing (no sort; O(entries)); and its value
   vector, of type VECSEQCUDA when device is true (else VECSEQ); the vector belongs to B */
PETSC_EXTERN PetscErrorCode CavityGetCOO(DM, Mat, PetscBool, Vec *);
/* whether B's values can be written straight into its CSR value array in CavityCOORow()'s order (one rank, MATSEQAIJ,
   or MATSEQAIJCUSPARSE when device is true): B gets the stencil's structure (once per matrix: exact preallocation, the
   column indices, assembly) unless it has it already, and the structure is verified (host arrays, or the device
   arrays by CavityCSRCheckCUDA()) once per nonzero state. CAVITY_FILL_COO: false; CAVITY_FILL_AUTO: false, with a
   PetscInfo() line, where it does not apply; CAVITY_FILL_CSR: an error there */
PETSC_EXTERN PetscErrorCode CavityGetCSR(DM, Mat, CavityFill, PetscBool, PetscBool *);
/* the layout of a MATSGDIA(CUDA) matrix: its stencil points mapped to the star; an error for another stencil */
PETSC_EXTERN PetscErrorCode CavitySGDIALayout(Mat, const CavityGrid *, CavityLayout *);

#if defined(CAVITY_HAVE_CUDA)
/* the GPU path (examples/cavitycuda.cu): residual and Jacobian by CUDA kernels on device arrays */
PETSC_EXTERN PetscErrorCode CavityFormFunctionCUDA(SNES, Vec, Vec, void *);
PETSC_EXTERN PetscErrorCode CavityFormJacobianCUDA(SNES, Vec, Mat, Mat, void *);
/* rows of the MATSEQAIJCUSPARSE B whose device CSR structure differs from the stencil's (CavityCSRRowMatches()) */
PETSC_EXTERN PetscErrorCode CavityCSRCheckCUDA(Mat, const CavityGrid *, PetscInt *);
/* the MG interpolation on the device (cavitycuda.cu): whether it applies to a coarse/fine DMDA pair (collective; why
   says why not, or what it is), the MATSHELL and its scaling vector 1 ./ (P^T 1) (rscale may be NULL), and the
   replacement of a coarse DMDA's DMCreateInterpolation() by one that returns them where they apply */
PETSC_EXTERN PetscErrorCode CavityInterpolationQualifies(DM, DM, PetscBool *, char[], size_t);
PETSC_EXTERN PetscErrorCode CavityCreateInterpolationCUDA(DM, DM, Mat *, Vec *);
PETSC_EXTERN PetscErrorCode CavityDeviceInterpolationAttach(DM);
#endif

/* ---- point functions: the same body on host and device -------------------------------------------------- */

/* the five star points of grid point (i, j) in the ghosted local array xl; a neighbour outside the domain is
   given as the point itself (no formula reads it: boundary rows use only neighbours inside) */
CAVITY_HD void CavityNeighbours(const CavityGrid *g, const CavityField *xl, PetscInt i, PetscInt j, const CavityField *nb[CAVITY_NPOINTS])
{
  const CavityField *c = xl + (j - g->gys) * g->gxm + (i - g->gxs);

  nb[CAVITY_S] = j > 0 ? c - g->gxm : c;
  nb[CAVITY_W] = i > 0 ? c - 1 : c;
  nb[CAVITY_C] = c;
  nb[CAVITY_E] = i < g->mx - 1 ? c + 1 : c;
  nb[CAVITY_N] = j < g->my - 1 ? c + g->gxm : c;
}

/* upwinding: v+ = (v + |v|)/2, v- = (v - |v|)/2 and their derivatives, taking sign(0) = +1 (the side a
   forward finite difference sees) */
CAVITY_HD void CavityUpwind(PetscScalar v, PetscScalar *vp, PetscScalar *vm, PetscReal *dvp, PetscReal *dvm)
{
  PetscBool pos = PetscRealPart(v) >= 0 ? PETSC_TRUE : PETSC_FALSE;

  *vp  = pos ? v : 0.0;
  *vm  = pos ? 0.0 : v;
  *dvp = pos ? 1.0 : 0.0;
  *dvm = pos ? 0.0 : 1.0;
}

/* The residual at grid point (i, j): SNES ex19's discretisation (velocity-vorticity form with temperature,
   5-point differences, upwinded convection, multiplied through by hx*hy). On the edges, in this priority:
   left (i = 0), right (i = mx-1), bottom (j = 0), top (j = my-1); so the corners take the side walls' rows. */
CAVITY_HD void CavityResidualPoint(const CavityGrid *g, PetscInt i, PetscInt j, const CavityField *const nb[CAVITY_NPOINTS], CavityField *f)
{
  const CavityField *x = nb[CAVITY_C], *xw = nb[CAVITY_W], *xe = nb[CAVITY_E], *xs = nb[CAVITY_S], *xn = nb[CAVITY_N];

  if (i == 0) {
    f->u     = x->u;
    f->v     = x->v;
    f->omega = x->omega - (xe->v - x->v) * g->dhx;
    f->temp  = x->temp;
  } else if (i == g->mx - 1) {
    f->u     = x->u;
    f->v     = x->v;
    f->omega = x->omega - (x->v - xw->v) * g->dhx;
    f->temp  = x->temp - (PetscReal)(g->grashof > 0);
  } else if (j == 0) {
    f->u     = x->u;
    f->v     = x->v;
    f->omega = x->omega + (xn->u - x->u) * g->dhy;
    f->temp  = x->temp - xn->temp;
  } else if (j == g->my - 1) {
    f->u     = x->u - g->lid;
    f->v     = x->v;
    f->omega = x->omega + (x->u - xs->u) * g->dhy;
    f->temp  = x->temp - xs->temp;
  } else {
    PetscScalar vxp, vxm, vyp, vym, w;
    PetscReal   d1, d2;

    CavityUpwind(x->u, &vxp, &vxm, &d1, &d2);
    CavityUpwind(x->v, &vyp, &vym, &d1, &d2);
    f->u     = (2.0 * x->u - xw->u - xe->u) * g->hydhx + (2.0 * x->u - xs->u - xn->u) * g->hxdhy - 0.5 * (xn->omega - xs->omega) * g->hx;
    f->v     = (2.0 * x->v - xw->v - xe->v) * g->hydhx + (2.0 * x->v - xs->v - xn->v) * g->hxdhy + 0.5 * (xe->omega - xw->omega) * g->hy;
    w        = x->omega;
    f->omega = (2.0 * w - xw->omega - xe->omega) * g->hydhx + (2.0 * w - xs->omega - xn->omega) * g->hxdhy + (vxp * (w - xw->omega) + vxm * (xe->omega - w)) * g->hy + (vyp * (w - xs->omega) + vym * (xn->omega - w)) * g->hx - 0.5 * g->grashof * (xe->temp - xw->temp) * g->hy;
    w        = x->temp;
    f->temp  = (2.0 * w - xw->temp - xe->temp) * g->hydhx + (2.0 * w - xs->temp - xn->temp) * g->hxdhy + g->prandtl * ((vxp * (w - xw->temp) + vxm * (xe->temp - w)) * g->hy + (vyp * (w - xs->temp) + vym * (xn->temp - w)) * g->hx);
  }
}

/* Row r (0 u, 1 v, 2 omega, 3 T) of the Jacobian at grid point (i, j): J[s][c] = d f_r / d x_c at star point
   s. Entries that couple to a neighbour outside the domain are 0. */
CAVITY_HD void CavityJacobianRow(const CavityGrid *g, PetscInt i, PetscInt j, PetscInt r, const CavityField *const nb[CAVITY_NPOINTS], PetscScalar J[CAVITY_NPOINTS][CAVITY_DOF])
{
  const CavityField *x = nb[CAVITY_C], *xw = nb[CAVITY_W], *xe = nb[CAVITY_E], *xs = nb[CAVITY_S], *xn = nb[CAVITY_N];

  for (PetscInt s = 0; s < CAVITY_NPOINTS; s++)
    for (PetscInt c = 0; c < CAVITY_DOF; c++) J[s][c] = 0.0;
  J[CAVITY_C][r] = 1.0; /* every boundary row; replaced below in the interior */
  if (i == 0) {
    if (r == 2) {
      J[CAVITY_E][1] = -g->dhx;
      J[CAVITY_C][1] = g->dhx;
    }
  } else if (i == g->mx - 1) {
    if (r == 2) {
      J[CAVITY_C][1] = -g->dhx;
      J[CAVITY_W][1] = g->dhx;
    }
  } else if (j == 0) {
    if (r == 2) {
      J[CAVITY_N][0] = g->dhy;
      J[CAVITY_C][0] = -g->dhy;
    } else if (r == 3) J[CAVITY_N][3] = -1.0;
  } else if (j == g->my - 1) {
    if (r == 2) {
      J[CAVITY_C][0] = g->dhy;
      J[CAVITY_S][0] = -g->dhy;
    } else if (r == 3) J[CAVITY_S][3] = -1.0;
  } else {
    const PetscReal diag = 2.0 * (g->hydhx + g->hxdhy);
    PetscScalar     vxp, vxm, vyp, vym;
    PetscReal       dvxp, dvxm, dvyp, dvym;

    /* the Laplacian, in every component */
    J[CAVITY_C][r] = diag;
    J[CAVITY_W][r] = J[CAVITY_E][r] = -g->hydhx;
    J[CAVITY_S][r] = J[CAVITY_N][r] = -g->hxdhy;
    if (r == 0) { /* - omega_y / 2 * hx */
      J[CAVITY_N][2] = -0.5 * g->hx;
      J[CAVITY_S][2] = 0.5 * g->hx;
    } else if (r == 1) { /* + omega_x / 2 * hy */
      J[CAVITY_E][2] = 0.5 * g->hy;
      J[CAVITY_W][2] = -0.5 * g->hy;
    } else {
      const PetscReal   a = r == 2 ? 1.0 : g->prandtl; /* the convection term's factor */
      const PetscScalar q = r == 2 ? x->omega : x->temp, qw = r == 2 ? xw->omega : xw->temp, qe = r == 2 ? xe->omega : xe->temp;
      const PetscScalar qs = r == 2 ? xs->omega : xs->temp, qn = r == 2 ? xn->omega : xn->temp;

      CavityUpwind(x->u, &vxp, &vxm, &dvxp, &dvxm);
      CavityUpwind(x->v, &vyp, &vym, &dvyp, &dvym);
      /* a * [(vx+ (q - qw) + vx- (qe - q)) hy + (vy+ (q - qs) + vy- (qn - q)) hx] */
      J[CAVITY_C][r] += a * ((vxp - vxm) * g->hy + (vyp - vym) * g->hx);
      J[CAVITY_W][r] -= a * vxp * g->hy;
      J[CAVITY_E][r] += a * vxm * g->hy;
      J[CAVITY_S][r] -= a * vyp * g->hx;
      J[CAVITY_N][r] += a * vym * g->hx;
      J[CAVITY_C][0] = a * (dvxp * (q - qw) + dvxm * (qe - q)) * g->hy;
      J[CAVITY_C][1] = a * (dvyp * (q - qs) + dvym * (qn - q)) * g->hx;
      if (r == 2) { /* - grashof/2 * T_x * hy */
        J[CAVITY_E][3] = -0.5 * g->grashof * g->hy;
        J[CAVITY_W][3] = 0.5 * g->grashof * g->hy;
      }
    }
  }
}

/* Row `row` (= p*4 + r) of the layout: writes its k*4 values, v[(s*4 + c)*m + row], m = 4*xm*ym.
   xl is the ghosted local array. The host loop (examples/cavity.c) and the CUDA kernel call it per row. */
CAVITY_HD void CavityLayoutRow(const CavityLayout *L, const CavityField *xl, PetscInt row, PetscScalar *v)
{
  const CavityGrid  *g = &L->g;
  const PetscInt     m = CAVITY_DOF * g->xm * g->ym, p = row / CAVITY_DOF, r = row % CAVITY_DOF;
  const PetscInt     i = g->xs + p % g->xm, j = g->ys + p / g->xm;
  const CavityField *nb[CAVITY_NPOINTS];
  PetscScalar        J[CAVITY_NPOINTS][CAVITY_DOF];

  CavityNeighbours(g, xl, i, j, nb);
  CavityJacobianRow(g, i, j, r, nb, J);
  for (PetscInt s = 0; s < L->k; s++) {
    const PetscInt t = L->slot[s];
    for (PetscInt c = 0; c < CAVITY_DOF; c++) v[(s * CAVITY_DOF + c) * m + row] = t >= 0 ? J[t][c] : 0.0;
  }
}

/* ---- the COO order (matrix types other than MATSGDIA): row by row, only the entries inside the domain ----------
   Owned point p = (j - ys)*xm + (i - xs) has cnt(i, j) in-domain star points (5 less one per wall it lies on); its
   4 rows each hold cnt*4 entries, star points in the order S, W, C, E, N and components ascending, which is the
   order of the global columns on one rank. Entries of earlier points come first, so a row starts at
   16 * (sum of cnt over the earlier owned points) + r*4*cnt(i, j). */

/* in-domain star points of grid point (i, j) */
CAVITY_HD PetscInt CavityPointCount(const CavityGrid *g, PetscInt i, PetscInt j)
{
  return CAVITY_NPOINTS - (i == 0) - (i == g->mx - 1) - (j == 0) - (j == g->my - 1);
}

/* COO entries before owned point (i, j) (box order); (xs, ys + ym) gives the total */
CAVITY_HD PetscInt CavityCOOPointStart(const CavityGrid *g, PetscInt i, PetscInt j)
{
  const PetscInt xs = g->xs, ys = g->ys, xm = g->xm;
  const PetscInt lx = (xs == 0) + (xs + xm == g->mx); /* wall points in each row of the box (left, right) */
  PetscInt       n;

  if (g->xm <= 0 || g->ym <= 0) return 0;
  /* whole rows ys .. j-1 of the box; rows 0 and my-1 lose one point more each */
  n = (j - ys) * (CAVITY_NPOINTS * xm - lx) - xm * ((ys == 0 && j > 0) + (g->my - 1 < j));
  /* points xs .. i-1 of row j */
  n += CAVITY_NPOINTS * (i - xs) - (xs == 0 && i > 0) - (g->mx - 1 < i) - (i - xs) * ((j == 0) + (j == g->my - 1));
  return CAVITY_DOF * CAVITY_DOF * n;
}

/* COO entries of the owned box */
CAVITY_HD PetscInt CavityCOOCount(const CavityGrid *g)
{
  return CavityCOOPointStart(g, g->xs, g->ys + g->ym);
}

/* Row `row` (= p*4 + r) in the COO order: its cnt*4 values at v[CavityCOOPointStart() + r*4*cnt ...]. The host loop
   (examples/cavity.c) and the CUDA kernel call it per row. */
CAVITY_HD void CavityCOORow(const CavityGrid *g, const CavityField *xl, PetscInt row, PetscScalar *v)
{
  const PetscInt     p = row / CAVITY_DOF, r = row % CAVITY_DOF;
  const PetscInt     i = g->xs + p % g->xm, j = g->ys + p / g->xm;
  const CavityField *nb[CAVITY_NPOINTS];
  PetscScalar        J[CAVITY_NPOINTS][CAVITY_DOF];
  PetscScalar       *w = v + CavityCOOPointStart(g, i, j) + r * CAVITY_DOF * CavityPointCount(g, i, j);

  CavityNeighbours(g, xl, i, j, nb);
  CavityJacobianRow(g, i, j, r, nb, J);
  if (j > 0)
    for (PetscInt c = 0; c < CAVITY_DOF; c++) *w++ = J[CAVITY_S][c];
  if (i > 0)
    for (PetscInt c = 0; c < CAVITY_DOF; c++) *w++ = J[CAVITY_W][c];
  for (PetscInt c = 0; c < CAVITY_DOF; c++) *w++ = J[CAVITY_C][c];
  if (i < g->mx - 1)
    for (PetscInt c = 0; c < CAVITY_DOF; c++) *w++ = J[CAVITY_E][c];
  if (j < g->my - 1)
    for (PetscInt c = 0; c < CAVITY_DOF; c++) *w++ = J[CAVITY_N][c];
}

/* ---- the CSR order (one rank, MATSEQAIJ/MATSEQAIJCUSPARSE with the stencil's structure) ------------------------
   On one rank the global index of (i, j, c) is (j*mx + i)*4 + c, so a row's in-domain star points S, W, C, E, N are
   its columns in ascending order and each row holds exactly its COO entries: its CSR values start at its COO start
   (CavityCOOPointStart() + r*4*cnt), and CavityCOORow() writes the CSR value array as it is. */

/* the global columns of row `row` (one rank), ascending; returns their number, 4*cnt */
CAVITY_HD PetscInt CavityCSRColumns(const CavityGrid *g, PetscInt row, PetscInt *cols)
{
  const PetscInt p = row / CAVITY_DOF, i = g->xs + p % g->xm, j = g->ys + p / g->xm;
  PetscInt       n = 0;

  for (PetscInt s = 0; s < CAVITY_NPOINTS; s++) {
    const PetscInt in = i + (s == CAVITY_W ? -1 : (s == CAVITY_E ? 1 : 0)), jn = j + (s == CAVITY_S ? -1 : (s == CAVITY_N ? 1 : 0));

    if (in < 0 || in >= g->mx || jn < 0 || jn >= g->my) continue;
    for (PetscInt c = 0; c < CAVITY_DOF; c++) cols[n++] = (jn * g->mx + in) * CAVITY_DOF + c;
  }
  return n;
}

/* does row `row` of the CSR structure (ia, ja) start where CavityCOORow() writes it and hold exactly its columns? */
CAVITY_HD PetscBool CavityCSRRowMatches(const CavityGrid *g, PetscInt row, const PetscInt *ia, const PetscInt *ja)
{
  const PetscInt p = row / CAVITY_DOF, r = row % CAVITY_DOF, i = g->xs + p % g->xm, j = g->ys + p / g->xm;
  const PetscInt cnt = CavityPointCount(g, i, j), start = CavityCOOPointStart(g, i, j) + r * CAVITY_DOF * cnt;
  PetscInt       cols[CAVITY_NPOINTS * CAVITY_DOF], n;

  if (ia[row] != start || ia[row + 1] - ia[row] != CAVITY_DOF * cnt) return PETSC_FALSE;
  n = CavityCSRColumns(g, row, cols);
  for (PetscInt k = 0; k < n; k++)
    if (ja[start + k] != cols[k]) return PETSC_FALSE;
  return PETSC_TRUE;
}

/* Row `row` of the Jacobian into a dense column-major array a (leading dimension lda) on one rank, where the
   global index of (i, j, c) is (j*mx + i)*4 + c: the in-domain star points' columns; the rest of the row must be 0
   already (the caller zeroes the array). */
CAVITY_HD void CavityDenseRow(const CavityGrid *g, const CavityField *xl, PetscInt row, PetscInt lda, PetscScalar *a)
{
  const PetscInt     p = row / CAVITY_DOF, r = row % CAVITY_DOF;
  const PetscInt     i = g->xs + p % g->xm, j = g->ys + p / g->xm;
  const CavityField *nb[CAVITY_NPOINTS];
  PetscScalar        J[CAVITY_NPOINTS][CAVITY_DOF];

  CavityNeighbours(g, xl, i, j, nb);
  CavityJacobianRow(g, i, j, r, nb, J);
  for (PetscInt s = 0; s < CAVITY_NPOINTS; s++) {
    const PetscInt in = i + (s == CAVITY_W ? -1 : (s == CAVITY_E ? 1 : 0)), jn = j + (s == CAVITY_S ? -1 : (s == CAVITY_N ? 1 : 0));

    if (in < 0 || in >= g->mx || jn < 0 || jn >= g->my) continue;
    for (PetscInt c = 0; c < CAVITY_DOF; c++) a[((jn * g->mx + in) * CAVITY_DOF + c) * lda + row] = J[s][c];
  }
}

/* ---- MG interpolation: DMDA's Q1 interpolation for refinement ratio 2, non-periodic, one entry of a product ------ */

/* Entry t = p*4 + c of y = P x on the output box b (owned fine points p = (j - ys)*xm + (i - xs), component c);
   xc is the coarse array on box b.g*. Fine (i, j) = sum over coarse (I, J), (I+1, J), (I, J+1), (I+1, J+1),
   I = i/2, J = j/2, weights (1-x)(1-y), x(1-y), (1-x)y, xy with x = (i - 2I)/2, y = (j - 2J)/2: zero weights are
   skipped (so nothing outside the grid is read), the others summed in ascending column order as in DMDA's AIJ row.
   The weights are 1, 1/2, 1/4, so every product is exact. */
CAVITY_HD PetscScalar CavityInterpEntry(const CavityInterpBox *b, const PetscScalar *xc, PetscInt t)
{
  const PetscInt     c = t % CAVITY_DOF, p = t / CAVITY_DOF;
  const PetscInt     i = b->xs + p % b->xm, j = b->ys + p / b->xm, ic = i / 2, jc = j / 2;
  const PetscBool    oi = (PetscBool)(i != 2 * ic), oj = (PetscBool)(j != 2 * jc);
  const PetscReal    x = oi ? 0.5 : 0.0, y = oj ? 0.5 : 0.0;
  const PetscInt     e = CAVITY_DOF, n = CAVITY_DOF * b->gxm;
  const PetscScalar *xl = xc + ((jc - b->gys) * b->gxm + (ic - b->gxs)) * CAVITY_DOF + c;
  PetscScalar        s  = (1.0 - x) * (1.0 - y) * xl[0];

  if (oi) s += x * (1.0 - y) * xl[e];
  if (oj) s += (1.0 - x) * y * xl[n];
  if (oi && oj) s += x * y * xl[n + e];
  return s;
}

/* Entry t = p*4 + c of y = P^T x on the output box b (owned coarse points); xf is the fine array on box b.g*.
   Gather form (deterministic): coarse (I, J) sums fine (2I+a, 2J+b), a, b in {-1, 0, 1}, inside the grid, with
   weight w(a) w(b), w(0) = 1, w(+-1) = 1/2, in ascending fine index. */
CAVITY_HD PetscScalar CavityInterpTransposeEntry(const CavityInterpBox *b, const PetscScalar *xf, PetscInt t)
{
  const PetscInt c = t % CAVITY_DOF, p = t / CAVITY_DOF;
  const PetscInt ic = b->xs + p % b->xm, jc = b->ys + p / b->xm;
  PetscScalar    s = 0.0;

  for (PetscInt dj = -1; dj <= 1; dj++) {
    const PetscInt j = 2 * jc + dj;

    if (j < 0 || j >= b->my) continue;
    for (PetscInt di = -1; di <= 1; di++) {
      const PetscInt i = 2 * ic + di;

      if (i < 0 || i >= b->mx) continue;
      s += (di ? 0.5 : 1.0) * (dj ? 0.5 : 1.0) * xf[((j - b->gys) * b->gxm + (i - b->gxs)) * CAVITY_DOF + c];
    }
  }
  return s;
}
