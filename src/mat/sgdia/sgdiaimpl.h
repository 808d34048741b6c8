/*
   Private declarations of MATSGDIA (structured-grid diagonal storage), shared by its host, MPI and CUDA code.

   Storage (see docs/sgdia.md): a rank owns the grid points of its DMDA box, np = xm*ym*zm points, and
   m = np*dof rows. For stencil point s (0 <= s < k, ordered lexicographically with x fastest) and
   neighbour component c, the dof x dof block coupling owned point p to its neighbour p + delta_s is stored as
       v[(s*dof + c)*m + p*dof + r]   for row component r,
   that is k*dof columns of length m, column-major, with no column indices. Slots whose neighbour lies
   outside a non-periodic domain stay exactly zero and are never read by the kernels.
*/
#pragma once

#include <petscdmda.h>
#include <petsc/private/matimpl.h>
#include "../../sys/gpukitimpl.h"

#define GPUKIT_SGDIA_MAX_WIDTH 8

/* MATSGDIACUDA's kernels are written for real double precision */
#if defined(GPUKIT_HAVE_CUDA) && defined(PETSC_USE_REAL_DOUBLE) && !defined(PETSC_USE_COMPLEX)
  #define GPUKIT_SGDIACUDA_AVAILABLE 1
#endif

/* an entry set from another rank, waiting for assembly */
typedef struct {
  PetscInt     n, nalloc;
  PetscInt    *ij; /* 2*n: global row, global column */
  PetscScalar *v;
} SGDIAStash;

/* the matrix powers kernel's ghost region and cached values (sgdiampk.c) */
typedef struct _n_SGDIAMPK *SGDIAMPK;

/* the border points' stencil lists in AIJ's order (sgdia.c, MatMultAdd_SGDIA() at dof 1 on several ranks): the points
   with ghost columns outside the line stretches, in the border pass's order, made at the first product and read by the
   later ones (the layout is the DMDA's and does not change) */
typedef struct {
  PetscInt *ptr, *list; /* n+1 offsets into list */
  PetscInt  n, nalloc, lalloc, cur;
  PetscBool built;
} SGDIAOrderCache;

typedef struct {
  /* grid and stencil, from the DMDA */
  DM               da;
  PetscInt         dim, dof, sw, k, center;
  DMDAStencilType  stype;
  DMBoundaryType   bd[3];
  PetscInt         M[3];            /* global grid points in x, y, z (1 for unused dimensions) */
  PetscInt         xs[3], xm[3];    /* owned box */
  PetscInt         gxs[3], gxm[3];  /* ghosted box of the DMDA local vector */
  PetscInt         np, m;           /* owned points, owned rows (= np*dof) */
  PetscInt        *delta;           /* 3*k: stencil offsets (dx, dy, dz) */
  PetscInt        *goff;            /* k: offset of neighbour s in the ghosted local vector, in points */
  PetscInt        *ooff;            /* k: offset of neighbour s in the owned box, in points */
  PetscInt        *sindex;          /* (2sw+1)^3 table: offset -> stencil point, or -1 */
  PetscInt         nranks[3];       /* process grid */
  PetscInt        *rstart[3];       /* first grid index owned by each process row/column/layer (+ total) */
  PetscBool        periodic_alias;  /* some periodic dimension is shorter than the stencil */

  /* values */
  PetscScalar     *v;
  PetscCount       nv;              /* k*dof*m */
  PetscCount       nzused;          /* of them inside the grid (MatGetInfo()'s nz_used): counted once per layout, -1 before */

  /* work: ghosted local vectors and assembly */
  Vec              xl, yl;
  SGDIAStash       stash;
  PetscBool        roworiented, drop_outside, ignore_offproc;
  PetscInt         ndropped;

  /* the AIJ copy the AIJ forwarder runs the operations MATSGDIA does not implement on, see SGDIAGetAIJ_Private() */
  Mat              aij;
  PetscObjectState aijstate;

  /* inverted diagonal blocks for PCPBJACOBI */
  PetscScalar     *ibdiag;

  /* MatGetRow() buffers */
  PetscInt        *rowcols;
  PetscScalar     *rowvals;

  /* FD coloring: colour of every ghosted local column */
  PetscInt        *colorl;

  /* the viewer DMCreateMatrix() installs on several ranks (natural ordering), kept for non-info formats */
  PetscErrorCode (*dmview)(Mat, PetscViewer);

  /* spptr-like slot for the CUDA twin */
  void            *spptr;

  /* the CUDA twin's hook, called before host code touches v: brings the device values back when the device
     copy is newer, and with write marks the host copy as the only valid one (see SGDIAHostAccess()) */
  PetscErrorCode (*hostaccess)(Mat, PetscBool);
  /* the CUDA twin's lines for MatView() with ::ascii_info */
  PetscErrorCode (*viewinfo)(Mat, PetscViewer);

  /* MatMatrixPowers_SGDIA(): ghost region of depth k*sw and the values gathered there (sgdiampk.c) */
  SGDIAMPK         mpk;

  /* MatMult() at dof 1 on several ranks: the border points' terms in AIJ's order */
  SGDIAOrderCache  aijord;
} Mat_SGDIA;

/* the process that owns grid index q in dimension d */
static inline PetscInt SGDIAOwnerInDim(const Mat_SGDIA *sg, PetscInt d, PetscInt q)
{
  PetscInt lo = 0, hi = sg->nranks[d] - 1;
  while (lo < hi) {
    PetscInt mid = (lo + hi + 1) / 2;
    if (sg->rstart[d][mid] <= q) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* Every host function that reads (write = PETSC_FALSE) or changes (PETSC_TRUE) the values calls this first */
static inline PetscErrorCode SGDIAHostAccess(Mat A, PetscBool write)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)A->data;

  PetscFunctionBegin;
  if (sg->hostaccess) PetscCall((*sg->hostaccess)(A, write));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatCreate_SeqSGDIA(Mat);
PETSC_INTERN PetscErrorCode MatCreate_MPISGDIA(Mat);
PETSC_INTERN PetscErrorCode MatCreate_SGDIA(Mat);

/* shared by the host and CUDA code */
PETSC_INTERN PetscErrorCode SGDIASetUpFromDM_Private(Mat, DM);
PETSC_INTERN PetscErrorCode SGDIAGetAIJ_Private(Mat, Mat *);
PETSC_INTERN PetscErrorCode SGDIAStashExchange_Private(Mat);
PETSC_INTERN PetscErrorCode SGDIASendToOwners_Private(Mat, PetscInt, const PetscInt[], PetscInt *, PetscInt **);
PETSC_INTERN PetscErrorCode SGDIAEntrySlot_Private(Mat, PetscInt, PetscInt, PetscCount *);
PETSC_INTERN PetscErrorCode MatSetValues_SGDIA(Mat, PetscInt, const PetscInt[], PetscInt, const PetscInt[], const PetscScalar[], InsertMode);
PETSC_INTERN PetscErrorCode MatConvert_SGDIA_AIJ(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatSGDIAFDColoringCreate_Private(Mat, ISColoring, MatFDColoring);
PETSC_INTERN PetscErrorCode MatSGDIAFDColoringSetUp_Private(Mat, ISColoring, MatFDColoring);
PETSC_INTERN PetscErrorCode MatSGDIAFDColoringApply_Private(Mat, MatFDColoring, Vec, void *);
/* the matrix powers hook "MatMatrixPowers_C" of the host types (sgdiampk.c; contract and reference GpukitMatMatrixPowersReference() in src/mat/utils/gpukitmat.h) */
PETSC_INTERN PetscErrorCode MatMatrixPowers_SGDIA(Mat, Vec, PetscInt, const PetscReal[], const PetscReal[], const PetscReal[], Vec[], Vec[]);
PETSC_INTERN PetscErrorCode SGDIAMPKDestroy_Private(SGDIAMPK *);
PETSC_INTERN PetscLogEvent  MAT_SGDIA_MatPowers;
/* the family's other log events, registered by MatRegister_SGDIA_Private() (sgdia.c) */
PETSC_INTERN PetscLogEvent MAT_SGDIA_Mult, MAT_SGDIA_MultTr, MAT_SGDIA_SetValues, MAT_SGDIA_Assembly, MAT_SGDIA_ToAIJ, MAT_SGDIA_FromAIJ, MAT_SGDIA_FDColor, MAT_SGDIA_InvBlkDiag;
PETSC_INTERN PetscLogEvent MAT_SGDIA_CopyToGPU, MAT_SGDIA_CopyFromGPU, MAT_SGDIA_MultCUDA, MAT_SGDIA_MultTrCUDA, MAT_SGDIA_OpsCUDA, MAT_SGDIA_InvBlkDiagCUDA, MAT_SGDIA_COO;

/* owned point (i,j,k) in owned-box coordinates -> point index */
static inline PetscInt SGDIAPoint(const Mat_SGDIA *sg, PetscInt i, PetscInt j, PetscInt l)
{
  return i + sg->xm[0] * (j + sg->xm[1] * l);
}

/* Does neighbour s of the owned point with global coordinates g[] lie in the domain? */
static inline PetscBool SGDIANeighbourInDomain(const Mat_SGDIA *sg, const PetscInt g[3], PetscInt s)
{
  for (PetscInt d = 0; d < 3; d++) {
    PetscInt q = g[d] + sg->delta[3 * s + d];
    if (sg->bd[d] != DM_BOUNDARY_PERIODIC && (q < 0 || q >= sg->M[d])) return PETSC_FALSE;
  }
  return PETSC_TRUE;
}

/* wrap grid coordinates into the domain along periodic dimensions */
static inline void SGDIAWrap(const Mat_SGDIA *sg, PetscInt g[3])
{
  for (PetscInt d = 0; d < 3; d++)
    if (sg->bd[d] == DM_BOUNDARY_PERIODIC) g[d] = ((g[d] % sg->M[d]) + sg->M[d]) % sg->M[d];
}

/* stencil point coupling grid point a to grid point b, or -1 when b is outside the stencil of a */
static inline PetscInt SGDIAStencilPoint(const Mat_SGDIA *sg, const PetscInt a[3], const PetscInt b[3])
{
  PetscInt e[3], w = 2 * sg->sw + 1;

  for (PetscInt d = 0; d < 3; d++) {
    e[d] = b[d] - a[d];
    if (sg->bd[d] == DM_BOUNDARY_PERIODIC) { /* the representative nearest to zero, positive on ties */
      e[d] = ((e[d] % sg->M[d]) + sg->M[d]) % sg->M[d];
      if (e[d] > sg->sw) e[d] -= sg->M[d];
    }
    if (e[d] < -sg->sw || e[d] > sg->sw) return -1;
  }
  return sg->sindex[(e[0] + sg->sw) + w * ((e[1] + sg->sw) + w * (e[2] + sg->sw))];
}

/* Is stencil point s the one that SGDIAStencilPoint() picks for this neighbour? Only differs on periodic
   dimensions shorter than the stencil, where several stencil points reach the same grid point. */
static inline PetscBool SGDIACanonical(const Mat_SGDIA *sg, const PetscInt g[3], PetscInt s)
{
  PetscInt b[3];

  if (!sg->periodic_alias) return PETSC_TRUE;
  for (PetscInt d = 0; d < 3; d++) b[d] = g[d] + sg->delta[3 * s + d];
  return SGDIAStencilPoint(sg, g, b) == s ? PETSC_TRUE : PETSC_FALSE;
}

/* global coordinates and ghosted-local point index of owned point p */
static inline void SGDIAPointInfo(const Mat_SGDIA *sg, PetscInt p, PetscInt g[3], PetscInt *gl)
{
  PetscInt l[3];

  l[0] = p % sg->xm[0];
  l[1] = (p / sg->xm[0]) % sg->xm[1];
  l[2] = p / (sg->xm[0] * sg->xm[1]);
  for (PetscInt d = 0; d < 3; d++) g[d] = sg->xs[d] + l[d];
  *gl = (g[0] - sg->gxs[0]) + sg->gxm[0] * ((g[1] - sg->gxs[1]) + sg->gxm[1] * (g[2] - sg->gxs[2]));
}

