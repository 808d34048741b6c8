/*
   MATSGDIACUDA's matrix powers hook, composed as "MatMatrixPowers_C" while the matrix runs on the device (contract and
   reference, GpukitMatMatrixPowersReference(), in src/mat/utils/gpukitmat.h). Kernel: GpukitSGDIAPowersCUDA() in
   sgdiakernels.cu, the product with the basis recurrence and the Jacobi scaling in its epilogue.
*/
#include "sgdiacudaimpl.h"
#include "sgdiampk.h"
#include "sgdiampkkernels.h"
#include "gpukitipc.h"

#if defined(GPUKIT_SGDIACUDA_AVAILABLE)

PetscLogEvent MAT_SGDIA_PowersCUDA;  /* "SGDIAMatPowCUDA", registered with the types (sgdiacuda.cu) */
PetscLogEvent MAT_SGDIA_MPKGhostCUDA; /* "SGDIAMPKGhostCUDA": the ghost-region route, inside SGDIAMatPowCUDA */

/* the device side of the ghost region (the host side, shared with the host route: struct _n_SGDIAMPK, sgdiampk.h) */
struct _n_SGDIAMPKCUDA {
  PetscInt         gen, vgen;      /* the host region and values these copies were made from (-1: none) */
  PetscObjectId    did;            /* dinv over the box: of the vector of this id and state (did 0: none) */
  PetscObjectState dstate;
  PetscInt         gnp, np, nleaves, nrp, dof, k;
  PetscScalar     *val, *dg;       /* the matrix values and dinv over the box */
  PetscScalar     *buf[4];         /* over the box: three W arrays in turn, and V[0] */
  PetscScalar     *root, *leaf;    /* the exchange: 2 dof scalars per owned point, per ghost point */
  long long       *off;            /* k: stencil offsets in the box */
  int             *delta;          /* 3k */
  int             *gidx, *rp;      /* the ghost points' positions in the box; the owned points a neighbour reads */
  PetscBool        ipctried;       /* the region's exchange through CUDA IPC was tried (-mat_sgdia_cuda_ipc) */
  GpukitIPCHalo    ipc;            /* the region's star forest through CUDA IPC (NULL: the star forest) */
};

PetscErrorCode SGDIACUDAMPKDestroy_Private(SGDIAMPKCUDA *dp)
{
  SGDIAMPKCUDA d = *dp;

  PetscFunctionBegin;
  if (!d) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GpukitIPCHaloDestroy(&d->ipc)); /* collective: MatDestroy(), or a new region (SGDIAMPKSetUp() is collective) */
  PetscCallCUDA(cudaFree(d->val));
  PetscCallCUDA(cudaFree(d->dg));
  for (int i = 0; i < 4; i++) PetscCallCUDA(cudaFree(d->buf[i]));
  PetscCallCUDA(cudaFree(d->root));
  PetscCallCUDA(cudaFree(d->leaf));
  PetscCallCUDA(cudaFree(d->off));
  PetscCallCUDA(cudaFree(d->delta));
  PetscCallCUDA(cudaFree(d->gidx));
  PetscCallCUDA(cudaFree(d->rp));
  PetscCall(PetscFree(*dp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* int copies of the host's PetscInt index arrays, on the device */
static PetscErrorCode SGDIACUDAMPKUploadIdx(PetscInt n, const PetscInt *h, int **dd)
{
  int *t;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(PetscMax(n, 1), &t));
  for (PetscInt i = 0; i < n; i++) t[i] = (int)h[i];
  PetscCallCUDA(cudaMalloc((void **)dd, sizeof(int) * PetscMax(n, 1)));
  PetscCallCUDA(cudaMemcpy(*dd, t, sizeof(int) * n, cudaMemcpyHostToDevice));
  PetscCall(PetscLogCpuToGpu((PetscLogDouble)n * sizeof(int)));
  PetscCall(PetscFree(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device copies for the host region of sg->mpk: (re)made when the region was rebuilt, the values uploaded when
   they were gathered again (a new matrix state) */
static PetscErrorCode SGDIACUDAMPKUpload(Mat A, SGDIAMPKCUDA *dp, GpukitSGDIAMPKBox *box)
{
  Mat_SGDIA     *sg = (Mat_SGDIA *)A->data;
  SGDIAMPK       mk = sg->mpk;
  SGDIAMPKCUDA   d  = *dp;
  const PetscInt dof = sg->dof;

  PetscFunctionBegin;
  PetscCheck(sizeof(PetscInt) == sizeof(int) || mk->gnp * dof < PETSC_INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "The matrix powers ghost region of %" PetscInt_FMT " points is too large for the device route's 32-bit indices", mk->gnp);
  if (d && d->gen != mk->gen) PetscCall(SGDIACUDAMPKDestroy_Private(dp));
  if (!*dp) {
    PetscInt *delta;

    PetscCall(PetscNew(dp));
    d       = *dp;
    d->gen  = mk->gen;
    d->vgen = -1;
    d->gnp  = mk->gnp;
    d->np   = sg->np;
    d->dof  = dof;
    d->k    = sg->k;
    d->nleaves = mk->nleaves;
    d->nrp     = mk->nrp;
    PetscCallCUDA(cudaMalloc((void **)&d->val, sizeof(PetscScalar) * PetscMax((size_t)sg->k * dof * dof * mk->gnp, 1)));
    PetscCallCUDA(cudaMalloc((void **)&d->dg, sizeof(PetscScalar) * PetscMax(mk->gnp * dof, 1)));
    for (int i = 0; i < 4; i++) PetscCallCUDA(cudaMalloc((void **)&d->buf[i], sizeof(PetscScalar) * PetscMax(mk->gnp * dof, 1)));
    PetscCallCUDA(cudaMalloc((void **)&d->root, sizeof(PetscScalar) * PetscMax(2 * sg->np * dof, 1)));
    PetscCallCUDA(cudaMalloc((void **)&d->leaf, sizeof(PetscScalar) * PetscMax(2 * mk->nleaves * dof, 1)));
    {
      long long *off;
      PetscCall(PetscMalloc2(sg->k, &off, 3 * sg->k, &delta));
      for (PetscInt s = 0; s < sg->k; s++) off[s] = (long long)mk->off[s];
      PetscCallCUDA(cudaMalloc((void **)&d->off, sizeof(long long) * sg->k));
      PetscCallCUDA(cudaMemcpy(d->off, off, sizeof(long long) * sg->k, cudaMemcpyHostToDevice));
      PetscCall(SGDIACUDAMPKUploadIdx(3 * sg->k, sg->delta, &d->delta));
      PetscCall(PetscLogCpuToGpu((PetscLogDouble)sg->k * sizeof(long long)));
      PetscCall(PetscFree2(off, delta));
    }
    PetscCall(SGDIACUDAMPKUploadIdx(mk->nleaves, mk->gidx, &d->gidx));
    PetscCall(SGDIACUDAMPKUploadIdx(mk->nrp, mk->rp, &d->rp));
  }
  if (d->vgen != mk->vgen) { /* once per matrix state (and region) */
    const size_t n = (size_t)sg->k * dof * dof * mk->gnp;
    PetscCallCUDA(cudaMemcpy(d->val, mk->val, sizeof(PetscScalar) * n, cudaMemcpyHostToDevice));
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)n * sizeof(PetscScalar)));
    d->vgen = mk->vgen;
  }
  PetscCall(PetscMemzero(box, sizeof(*box)));
  box->dof = (int)dof;
  box->k   = (int)sg->k;
  for (int e = 0; e < 3; e++) {
    box->M[e]        = (int)sg->M[e];
    box->periodic[e] = sg->bd[e] == DM_BOUNDARY_PERIODIC;
    box->lo[e]       = (int)mk->lo[e];
    box->n[e]        = (int)mk->n[e];
    box->olo[e]      = (int)sg->xs[e];
    box->on[e]       = (int)sg->xm[e];
  }
  box->vm    = (long long)mk->gnp * dof;
  box->val   = d->val;
  box->off   = d->off;
  box->delta = d->delta;
  box->pk    = sg->k <= GPUKIT_SGDIA_MPK_PARAM_K;
  if (box->pk)
    for (PetscInt s = 0; s < sg->k; s++) {
      box->poff[s] = (long long)mk->off[s];
      for (int e = 0; e < 3; e++) box->pdelta[3 * s + e] = (signed char)sg->delta[3 * s + e];
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the region's exchange through CUDA IPC, made at its first exchange (collective, as the exchange is) from the star
   forest's graph: 2 dof scalars per point at most (V[0] and W[0]); NULL when IPC cannot be used or -mat_sgdia_cuda_ipc
   is false */
static PetscErrorCode SGDIACUDAMPKGetIPC(Mat A, SGDIAMPKCUDA d)
{
  SGDIAMPK           mk = ((Mat_SGDIA *)A->data)->mpk;
  PetscBool          ipc = PETSC_TRUE;
  PetscInt           nroots, nleaves;
  const PetscInt    *ilocal;
  const PetscSFNode *iremote;

  PetscFunctionBegin;
  if (d->ipctried) PetscFunctionReturn(PETSC_SUCCESS);
  d->ipctried = PETSC_TRUE;
  PetscCall(PetscOptionsGetBool(((PetscObject)A)->options, ((PetscObject)A)->prefix, "-mat_sgdia_cuda_ipc", &ipc, NULL));
  /* GpukitIPCHaloCreate() is collective: every rank must take the same branch, whatever its options say */
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ipc, 1, GPUKIT_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)A)));
  if (ipc) {
    PetscCall(PetscSFGetGraph(mk->sf, &nroots, &nleaves, &ilocal, &iremote));
    PetscCall(GpukitIPCHaloCreate(PetscObjectComm((PetscObject)A), nroots, nleaves, ilocal, iremote, 2 * d->dof, &d->ipc));
  }
  PetscCall(PetscInfo(A, "Matrix powers ghost-region exchange: %s\n", d->ipc ? "through CUDA IPC (device to device)" : (ipc ? "PetscSF (CUDA IPC unavailable; -info of GpukitIPCHaloCreate says why)" : "PetscSF (-mat_sgdia_cuda_ipc false)")));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* dinv over the box, on the device (the owned part copied, the ghost part by one exchange), when dinv changed */
static PetscErrorCode SGDIACUDAMPKGatherDinv(Mat A, SGDIAMPKCUDA d, const GpukitSGDIAMPKBox *box, Vec dinv, int block, cudaStream_t stream)
{
  SGDIAMPK           mk = ((Mat_SGDIA *)A->data)->mpk;
  PetscObjectId      id;
  PetscObjectState   st;
  const PetscScalar *da;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetId((PetscObject)dinv, &id));
  PetscCall(PetscObjectStateGet((PetscObject)dinv, &st));
  if (d->did == id && d->dstate == st) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SGDIACUDAMPKGetIPC(A, d));
  PetscCall(VecCUDAGetArrayRead(dinv, &da));
  if (d->ipc) PetscCall(GpukitIPCHaloBcastBegin(d->ipc, box->dof, da, d->leaf, stream));
  else PetscCall(PetscSFBcastWithMemTypeBegin(mk->sf, mk->uv, PETSC_MEMTYPE_DEVICE, da, PETSC_MEMTYPE_DEVICE, d->leaf, MPI_REPLACE));
  PetscCallCUDA(GpukitSGDIAMPKOwnedToBoxCUDA(box, da, d->dg, block, stream));
  if (d->ipc) PetscCall(GpukitIPCHaloBcastEnd(d->ipc, box->dof, da, d->leaf, stream));
  else PetscCall(PetscSFBcastEnd(mk->sf, mk->uv, da, d->leaf, MPI_REPLACE));
  PetscCallCUDA(GpukitSGDIAMPKUnpackCUDA(box->dof, (long long)d->nleaves, d->gidx, 1, d->leaf, d->dg, NULL, block, stream));
  PetscCall(VecCUDARestoreArrayRead(dinv, &da));
  d->did    = id;
  d->dstate = st;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   The ghost-region route (route SGDIA_MPK_GHOST of SGDIAMPKChooseRoute_Private(), the region built for >= k levels):
   ONE exchange of V[0] and W[0] (V[0] alone without dinv, W[0] alone for the lean basis) over the ghosted box: device
   to device through CUDA IPC (SGDIACUDAMPKGetIPC(): one node, peer-accessible GPUs, -mat_sgdia_cuda_ipc not false), else
   through the region's star forest with device buffers (PETSc stages them through the host when MPI is not CUDA-aware), then
   level j+1 as one kernel over the owned box grown by (k-1-j)*sw: the product, the three-term update and the Jacobi
   scaling, writing W[j+1] (and V[j+1]) for the owned points. The product of level j+1 reads dinv .* W[j] over the box
   (V[0] itself at level 1 when it is given), as the host route does.
*/
static PetscErrorCode SGDIACUDAMPKGhost(Mat A, Vec dinv, PetscInt k, const PetscReal theta[], const PetscReal sigma[], const PetscReal gamma[], Vec V[], Vec W[], int block, cudaStream_t stream)
{
  Mat_SGDIA         *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA     *cu = SGDIACUDAGet(A);
  SGDIAMPK           mk;
  SGDIAMPKCUDA       d;
  GpukitSGDIAMPKBox  box;
  const PetscBool    lean = (PetscBool)(V == NULL);
  const int          nu   = dinv && !lean ? 2 : 1, dof = (int)sg->dof;
  const PetscScalar *s0, *s1 = NULL, *root;
  const double      *xj, *wj, *wjm1 = NULL;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(MAT_SGDIA_MPKGhostCUDA, A, 0, 0, 0));
  PetscCall(SGDIAMPKGatherValues_Private(A)); /* on the host, once per matrix state */
  mk = sg->mpk;
  PetscCall(SGDIACUDAMPKUpload(A, &cu->mpkd, &box));
  d = cu->mpkd;
  if (dinv) PetscCall(SGDIACUDAMPKGatherDinv(A, d, &box, dinv, block, stream));
  /* the exchange: the owned points a neighbour reads packed (interleaved when two vectors travel), the owned part
     of the box copied meanwhile */
  PetscCall(SGDIACUDAMPKGetIPC(A, d));
  PetscCall(VecCUDAGetArrayRead(lean ? W[0] : V[0], &s0));
  if (nu == 2) PetscCall(VecCUDAGetArrayRead(W[0], &s1));
  /* the roots: one vector is read where it is (IPC packs its own send buffer), two are interleaved first */
  root = d->ipc && nu == 1 ? s0 : d->root;
  if (root == d->root) {
    PetscCall(PetscLogGpuTimeBegin());
    PetscCallCUDA(GpukitSGDIAMPKPackCUDA(dof, (long long)d->nrp, d->rp, nu, s0, s1, d->root, block, stream));
    PetscCall(PetscLogGpuTimeEnd());
  }
  if (d->ipc) PetscCall(GpukitIPCHaloBcastBegin(d->ipc, nu * dof, root, d->leaf, stream));
  else PetscCall(PetscSFBcastWithMemTypeBegin(mk->sf, nu == 2 ? mk->uvw : mk->uv, PETSC_MEMTYPE_DEVICE, d->root, PETSC_MEMTYPE_DEVICE, d->leaf, MPI_REPLACE));
  PetscCall(PetscLogGpuTimeBegin());
  if (nu == 2) {
    PetscCallCUDA(GpukitSGDIAMPKOwnedToBoxCUDA(&box, s0, d->buf[3], block, stream));
    PetscCallCUDA(GpukitSGDIAMPKOwnedToBoxCUDA(&box, s1, d->buf[0], block, stream));
  } else PetscCallCUDA(GpukitSGDIAMPKOwnedToBoxCUDA(&box, s0, d->buf[0], block, stream));
  PetscCall(PetscLogGpuTimeEnd());
  if (d->ipc) PetscCall(GpukitIPCHaloBcastEnd(d->ipc, nu * dof, root, d->leaf, stream));
  else PetscCall(PetscSFBcastEnd(mk->sf, nu == 2 ? mk->uvw : mk->uv, d->root, d->leaf, MPI_REPLACE));
  PetscCall(PetscLogGpuTimeBegin());
  if (nu == 2) PetscCallCUDA(GpukitSGDIAMPKUnpackCUDA(dof, (long long)d->nleaves, d->gidx, 2, d->leaf, d->buf[3], d->buf[0], block, stream));
  else PetscCallCUDA(GpukitSGDIAMPKUnpackCUDA(dof, (long long)d->nleaves, d->gidx, 1, d->leaf, d->buf[0], NULL, block, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(VecCUDARestoreArrayRead(lean ? W[0] : V[0], &s0));
  if (nu == 2) PetscCall(VecCUDARestoreArrayRead(W[0], &s1));

  wj = d->buf[0];
  xj = nu == 2 ? d->buf[3] : d->buf[0];
  for (PetscInt j = 0; j < k; j++) {
    PetscInt      rlo[3], rhi[3];
    int           ilo[3], ihi[3];
    const double  a = 1.0 / sigma[j], b = -theta[j] / sigma[j], c = -gamma[j] / sigma[j];
    const double *xs = dinv && (j > 0 || lean) ? d->dg : NULL, *w0 = NULL, *wm1 = NULL;
    double       *wn, *wo, *vo = NULL;

    SGDIAMPKLevelRegion_Private(sg, k, j, rlo, rhi);
    for (int e = 0; e < 3; e++) {
      ilo[e] = (int)rlo[e];
      ihi[e] = (int)rhi[e];
    }
    /* the terms of GpukitMatMatrixPowersReference(): gamma only after the first level, theta when not zero */
    if (j > 0 && gamma[j] != 0.0) {
      w0  = wj;
      wm1 = wjm1;
    } else if (theta[j] != 0.0) w0 = wj;
    /* the next W array: the one of the three that holds neither W[j] nor W[j-1] */
    wn = d->buf[0] != wj && d->buf[0] != wjm1 ? d->buf[0] : (d->buf[1] != wj && d->buf[1] != wjm1 ? d->buf[1] : d->buf[2]);
    PetscCall(VecCUDAGetArrayWrite(W[j + 1], &wo));
    if (dinv && !lean) PetscCall(VecCUDAGetArrayWrite(V[j + 1], &vo));
    PetscCall(PetscLogGpuTimeBegin());
    PetscCallCUDA(GpukitSGDIAMPKLevelCUDA(&box, ilo, ihi, xj, xs, a, b, c, w0, wm1, vo ? d->dg : NULL, wn, wo, vo, block, stream));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(VecCUDARestoreArrayWrite(W[j + 1], &wo));
    if (vo) PetscCall(VecCUDARestoreArrayWrite(V[j + 1], &vo));
    wjm1 = wj;
    wj   = wn;
    xj   = wn;
  }
  PetscCall(PetscLogEventEnd(MAT_SGDIA_MPKGhostCUDA, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* lean basis with ghosts: dinv over the ghosted box, gathered once per dinv (id and state) and kept for later calls */
static PetscErrorCode SGDIACUDAPowersGhostedDinv_Private(Mat A, Vec dinv, Vec xl, const PetscScalar **dla)
{
  Mat_SGDIA       *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA   *cu = SGDIACUDAGet(A);
  PetscObjectId    id;
  PetscObjectState st;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetId((PetscObject)dinv, &id));
  PetscCall(PetscObjectStateGet((PetscObject)dinv, &st));
  if (cu->dl) { /* the box changes with the grid (a new DM): then gather again */
    PetscInt nd, nx;
    PetscCall(VecGetLocalSize(cu->dl, &nd));
    PetscCall(VecGetLocalSize(xl, &nx));
    if (nd != nx || cu->dlda != sg->da) PetscCall(VecDestroy(&cu->dl));
  }
  if (!cu->dl) {
    PetscCall(VecDuplicate(xl, &cu->dl));
    cu->dlda = sg->da;
    cu->did  = 0;
  }
  if (cu->did != id || cu->dstate != st) {
    PetscCall(DMGlobalToLocalBegin(sg->da, dinv, INSERT_VALUES, cu->dl));
    PetscCall(DMGlobalToLocalEnd(sg->da, dinv, INSERT_VALUES, cu->dl));
    cu->did    = id;
    cu->dstate = st;
  }
  PetscCall(VecCUDAGetArrayRead(cu->dl, dla));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatMatrixPowers_SGDIACUDA - KSPCACG's matrix powers hook: for j = 0..k-1
       W[j+1] = (A V[j] - theta[j] W[j] - gamma[j] W[j-1]) / sigma[j],   V[j+1] = dinv .* W[j+1] (dinv NULL: V == W)
   with one kernel launch per j (GpukitSGDIAPowersCUDA(): the product with the update and the Jacobi scaling in its
   epilogue), so each new basis vector costs one pass instead of a product, an update and a Jacobi apply. On more
   than one rank (or with periodic dimensions) the route is the host's (SGDIAMPKChooseRoute_Private(), sgdiampk.c):
   the ghost region (SGDIACUDAMPKGhost(): one exchange per call, levels on shrinking boxes, event SGDIAMPKGhostCUDA)
   where it fits and -mat_sgdia_mpk_ghost_region is not false, else the ghost values of V[j] gathered before each
   product as in MatMult (-info says why). Everything stays on the device: no host-device copy on one rank. Host vectors, or a matrix bound to the
   CPU, run the reference GpukitMatMatrixPowersReference().
   Lean basis (V == NULL, dinv given): the product reads W[j] and dinv and multiplies them where it reads them, so
   only W is written: one vector less per step; with ghosts, dinv's are gathered once and kept while dinv (id and
   state) does not change.
   Kernel knobs: the product's current choice (the tuner's, or the fixed one): its block size, and the stencil variant
   when the product uses it and it applies here, else one thread per row. The hook itself times nothing.
*/
PetscErrorCode MatMatrixPowers_SGDIACUDA(Mat A, Vec dinv, PetscInt k, const PetscReal theta[], const PetscReal sigma[], const PetscReal gamma[], Vec V[], Vec W[])
{
  Mat_SGDIA          *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA      *cu = SGDIACUDAGet(A);
  PetscBool           ok = PETSC_TRUE, ghosted, lean = (PetscBool)(V == NULL);
  Vec                 xl = NULL;
  const PetscScalar  *dla = NULL;
  GpukitSGDIAMultArgs args;
  cudaStream_t        stream;
  PetscInt            pvariant, pblock;
  int                 variant;
  SGDIAMPKRoute       route;

  PetscFunctionBegin;
  if (k < 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(theta && sigma && gamma && W, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_NULL, "MatMatrixPowers: the basis parameters and the W array must not be NULL");
  PetscCheck(V || dinv, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_NULL, "MatMatrixPowers: V may be NULL (the lean basis) only with a diagonal preconditioner dinv");
  for (PetscInt j = 0; j <= k && ok; j++) {
    Vec vecs[3] = {lean ? NULL : V[j], W[j], j == 0 ? dinv : NULL};
    PetscCall(SGDIACUDAVecsOnDevice_Private(A, "MatMatrixPowers", 3, vecs, &ok));
  }
  if (!ok || A->boundtocpu) {
    PetscCall(GpukitMatMatrixPowersReference(A, dinv, k, theta, sigma, gamma, V, W));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SGDIACUDACopyToGPU_Private(A));
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
  PetscCall(SGDIAMPKChooseRoute_Private(A, k, &route)); /* before the event: an error there leaves it balanced */
  PetscCall(PetscLogEventBegin(MAT_SGDIA_PowersCUDA, A, 0, 0, 0));
  if (route == SGDIA_MPK_GHOST) {
    PetscCall(SGDIACUDAMPKGhost(A, dinv, k, theta, sigma, gamma, V, W, (int)cu->block, stream));
    PetscCall(PetscLogGpuFlops((PetscLogDouble)k * (2.0 * (PetscLogDouble)sg->nv + 6.0 * (PetscLogDouble)sg->m)));
    PetscCall(PetscLogEventEnd(MAT_SGDIA_PowersCUDA, A, 0, 0, 0));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* no ghosts (route SGDIA_MPK_LOCAL), or the fallback: the ghost values gathered before each product */
  ghosted = SGDIACUDANeedsGhosts_Private(sg);
  if (ghosted) PetscCall(SGDIACUDAGetLocalVecs_Private(A, &xl, NULL));
  if (lean && ghosted) PetscCall(SGDIACUDAPowersGhostedDinv_Private(A, dinv, xl, &dla));
  PetscCall(SGDIACUDASetArgs_Private(A, ghosted, &args));
  PetscCall(SGDIACUDAGetProductConfig_Private(A, &pvariant, &pblock));
  variant = pvariant == 2 && GpukitSGDIAMultVariantValid(&args, 2) ? 2 : 0;
  for (PetscInt j = 0; j < k; j++) {
    GpukitSGDIAPowersArgs e;
    GpukitCUDAReads       rd;
    const PetscScalar    *xa;
    PetscScalar          *w1;
    Vec                   xin = lean ? W[j] : V[j];

    rd.n = 0;
    if (ghosted) {
      PetscCall(DMGlobalToLocalBegin(sg->da, xin, INSERT_VALUES, xl));
      PetscCall(DMGlobalToLocalEnd(sg->da, xin, INSERT_VALUES, xl));
      xin = xl;
    }
    PetscCall(GpukitCUDAReadsGet(&rd, xin, &xa));
    e.xs = NULL;
    if (lean) {
      if (ghosted) e.xs = dla;
      else PetscCall(GpukitCUDAReadsGet(&rd, dinv, &e.xs));
    }
    PetscCall(GpukitCUDAPowersStepBegin(&rd, j, theta, sigma, gamma, dinv, V, W, &e, &w1));
    PetscCall(PetscLogGpuTimeBegin());
    PetscCallCUDA(GpukitSGDIAPowersCUDA(&args, &e, xa, w1, (int)pblock, variant, stream));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(GpukitCUDAPowersStepEnd(&rd, j, dinv, V, W, &e, &w1));
  }
  if (dla) PetscCall(VecCUDARestoreArrayRead(cu->dl, &dla));
  PetscCall(PetscLogGpuFlops((PetscLogDouble)k * (2.0 * (PetscLogDouble)sg->nv + 6.0 * (PetscLogDouble)sg->m)));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_PowersCUDA, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif /* GPUKIT_SGDIACUDA_AVAILABLE */
