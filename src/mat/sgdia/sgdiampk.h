/*
   MATSGDIA's matrix powers kernel: the ghost region shared by the host route (sgdiampk.c) and the device route of
   MATSGDIACUDA (sgdiapowerscuda.cu). The set-up (the star forest, the ghosted box, the matrix values and dinv
   gathered over the box) is built and cached here, on the host, for both; the device route uploads what it needs
   once per matrix state (vgen), dinv state (dgen) and region (gen).
*/
#pragma once

#include <petscsf.h>
#include "sgdiaimpl.h"

struct _n_SGDIAMPK {
  PetscInt         kc;             /* levels the ghost region is built for (depth kc*sw); 0: nothing built */
  PetscInt         infomask;       /* bit k: the fallback for k levels was announced */
  PetscInt         force;          /* -mat_sgdia_mpk_ghost_region: -1 automatic, 0 never, 1 always (an error when it cannot) */
  PetscBool        toldforce;      /* -info said once that the option turned the region off */
  PetscInt         gen;            /* SGDIAMPKSetUp() calls so far: the region (sf, box, gidx, rp) changes with it */
  PetscInt         vgen, dgen;     /* gathers of val and dg so far: a device copy is stale when its count differs */
  PetscSF          sf;             /* roots: owned points; leaves: the ghost points of the box (owned ones excluded) */
  PetscInt         nleaves, *gidx; /* ghost points: their positions in the box */
  PetscInt         nrp, *rp;       /* owned points some neighbour may read (within the ghost depth of an exchanged face) */
  MPI_Datatype     uv, uvw, um;    /* units: dof, 2 dof, k*dof*dof scalars */
  PetscInt         lo[3], n[3];    /* the ghosted box (global grid coordinates, may be negative when periodic) */
  PetscInt         gnp;            /* points in it */
  PetscInt        *off;            /* k: stencil offsets in the ghosted box, in points */
  PetscScalar     *val;            /* matrix values over the ghosted box: val[(s*dof + c)*gnp*dof + p*dof + r] */
  PetscObjectState valstate;
  PetscBool        valok;
  PetscScalar     *dg;             /* dinv over the ghosted box */
  PetscInt64       did;
  PetscObjectState dstate;
  PetscBool        dok;
  PetscScalar     *buf[4];         /* arrays over the ghosted box: W[j-1], W[j], W[j+1] in turn, and V[0] */
  PetscScalar     *root, *leaf;    /* exchange buffers: V[0] and W[0] interleaved at the owned points, at the ghost points */
  PetscScalar     *line;           /* products along one x-line */
  PetscInt        *sl;             /* k: stencil points of a line */
};

/* the route of one call with k levels */
typedef enum {
  SGDIA_MPK_LOCAL,    /* no ghosts at all (one rank, no periodic dimension, or stencil width 0) */
  SGDIA_MPK_GHOST,    /* one exchange over the ghost region (built for at least k levels on return) */
  SGDIA_MPK_FALLBACK  /* the region does not fit, or -mat_sgdia_mpk_ghost_region false: a product per level */
} SGDIAMPKRoute;

PETSC_INTERN PetscErrorCode SGDIAMPKChooseRoute_Private(Mat, PetscInt, SGDIAMPKRoute *);
PETSC_INTERN PetscErrorCode SGDIAMPKGatherValues_Private(Mat);
PETSC_INTERN PetscErrorCode SGDIAMPKGatherDinv_Private(Mat, Vec);
PETSC_INTERN void           SGDIAMPKLevelRegion_Private(const Mat_SGDIA *, PetscInt, PetscInt, PetscInt[3], PetscInt[3]);
PETSC_INTERN PetscErrorCode SGDIAMPKSetForce_Private(Mat, PetscInt);
