/*
   MATMPISGDIACUDA's product with the halo exchange overlapped (sgdiahalocuda.h):

     VecScatterBegin(x -> ghost points of xl)        only the ghost points travel (no copy of the owned part)
     interior rows  from x itself                    while the ghosts are on their way
     VecScatterEnd
     shell rows     owned neighbours from x, ghost neighbours from xl

   The exchange is device to device through CUDA IPC (GpukitIPCHaloBcastBegin/End, src/mat/utils/gpukitipc.h) when
   every rank is on one node with peer-accessible GPUs and -mat_sgdia_cuda_ipc is not false; else PETSc's VecScatter
   (which stages the ghosts through the host when MPI is not CUDA-aware). Both move the same values (-info says which).

   The interior rows are those whose whole stencil stays in the owned box; the shell rows (the others) are listed
   once per layout on the device. Both halves sum a row's terms in the order of the plain product's variant 0
   (sgdiakernels.h), so the product does not depend on the number of ranks beyond that.
*/
#include "sgdiacudaimpl.h"
#include "sgdiahalocuda.h"
#include "gpukitipc.h"

#if defined(GPUKIT_SGDIACUDA_AVAILABLE)

struct _n_SGDIAHaloCUDA {
  VecScatter sc;          /* global x -> the ghost points of xl */
  Vec        xl;          /* VECSEQCUDA over the ghosted box: only its ghost points are written */
  long long *rows;        /* device: the shell rows */
  long long  nrows;       /* their number */
  int        ilo[3], ihi[3]; /* interior box of grid points (global indices) */
  PetscBool  off;         /* -mat_sgdia_overlap 0 */
  GpukitIPCHalo ipc;      /* the same exchange through CUDA IPC (NULL: the scatter) */
};

PetscErrorCode SGDIACUDAHaloDestroy_Private(SGDIAHaloCUDA *h)
{
  PetscFunctionBegin;
  if (!*h) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GpukitIPCHaloDestroy(&(*h)->ipc)); /* collective, as MatDestroy() is */
  PetscCall(VecScatterDestroy(&(*h)->sc));
  PetscCall(VecDestroy(&(*h)->xl));
  if ((*h)->rows) PetscCallCUDA(cudaFree((*h)->rows));
  PetscCall(PetscFree(*h));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the interior box, the shell rows and the ghost scatter of A's layout */
static PetscErrorCode SGDIACUDAHaloSetUp(Mat A, Vec x, SGDIAHaloCUDA h)
{
  Mat_SGDIA             *sg = (Mat_SGDIA *)A->data;
  PetscInt               gm = sg->gxm[0] * sg->gxm[1] * sg->gxm[2], ng = 0, dof = sg->dof, np = sg->m / sg->dof;
  PetscInt              *lidx, *gidx;
  long long             *rows;
  ISLocalToGlobalMapping ltog;
  IS                     isg, isl;
  long long              nr = 0;

  PetscFunctionBegin;
  for (PetscInt d = 0; d < 3; d++) {
    const PetscBool per = (PetscBool)(sg->bd[d] == DM_BOUNDARY_PERIODIC);
    const PetscInt  sw  = d < sg->dim ? sg->sw : 0;
    /* a neighbour outside a non-periodic domain is skipped, so the owned box's edge on the domain's edge needs no margin */
    h->ilo[d] = (int)(!per && sg->xs[d] == 0 ? sg->xs[d] : sg->xs[d] + sw);
    h->ihi[d] = (int)(!per && sg->xs[d] + sg->xm[d] == sg->M[d] ? sg->xs[d] + sg->xm[d] : sg->xs[d] + sg->xm[d] - sw);
  }
  /* the shell rows: owned points outside the interior box, each with its dof rows */
  PetscCall(PetscMalloc1(sg->m > 0 ? sg->m : 1, &rows));
  for (PetscInt p = 0; p < np; p++) {
    const PetscInt g[3] = {sg->xs[0] + p % sg->xm[0], sg->xs[1] + (p / sg->xm[0]) % sg->xm[1], sg->xs[2] + p / (sg->xm[0] * sg->xm[1])};
    PetscBool      in   = PETSC_TRUE;
    for (PetscInt d = 0; d < 3; d++)
      if (g[d] < h->ilo[d] || g[d] >= h->ihi[d]) in = PETSC_FALSE;
    if (!in)
      for (PetscInt c = 0; c < dof; c++) rows[nr++] = (long long)(p * dof + c);
  }
  h->nrows = nr;
  if (nr) {
    PetscCallCUDA(cudaMalloc((void **)&h->rows, (size_t)nr * sizeof(long long)));
    PetscCallCUDA(cudaMemcpy(h->rows, rows, (size_t)nr * sizeof(long long), cudaMemcpyHostToDevice));
  }
  PetscCall(PetscFree(rows));
  /* the ghost points of the ghosted box (points outside the owned box) and their global indices (blocks of dof) */
  PetscCall(PetscMalloc2(gm, &lidx, gm, &gidx));
  for (PetscInt q = 0; q < gm; q++) {
    const PetscInt g[3] = {sg->gxs[0] + q % sg->gxm[0], sg->gxs[1] + (q / sg->gxm[0]) % sg->gxm[1], sg->gxs[2] + q / (sg->gxm[0] * sg->gxm[1])};
    PetscBool      own  = PETSC_TRUE;
    for (PetscInt d = 0; d < 3; d++)
      if (g[d] < sg->xs[d] || g[d] >= sg->xs[d] + sg->xm[d]) own = PETSC_FALSE;
    if (!own) lidx[ng++] = q;
  }
  PetscCall(DMGetLocalToGlobalMapping(sg->da, &ltog));
  PetscCall(ISLocalToGlobalMappingApplyBlock(ltog, ng, lidx, gidx));
  PetscCall(ISCreateBlock(PETSC_COMM_SELF, dof, ng, gidx, PETSC_COPY_VALUES, &isg));
  PetscCall(ISCreateBlock(PETSC_COMM_SELF, dof, ng, lidx, PETSC_COPY_VALUES, &isl));
  PetscCall(VecCreate(PETSC_COMM_SELF, &h->xl));
  PetscCall(VecSetSizes(h->xl, gm * dof, gm * dof));
  PetscCall(VecSetBlockSize(h->xl, dof));
  PetscCall(VecSetType(h->xl, VECSEQCUDA));
  PetscCall(VecSet(h->xl, 0.0));
  PetscCall(VecScatterCreate(x, isg, h->xl, isl, &h->sc));
  PetscCall(ISDestroy(&isg));
  PetscCall(ISDestroy(&isl));
  {
    PetscBool ipc = PETSC_TRUE;
    PetscCall(PetscOptionsGetBool(((PetscObject)A)->options, ((PetscObject)A)->prefix, "-mat_sgdia_cuda_ipc", &ipc, NULL));
    /* GpukitIPCHaloCreate() is collective: every rank must take the same branch, whatever its options say */
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ipc, 1, GPUKIT_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)A)));
    if (ipc) { /* the same graph in dof-blocks: leaf = ghost point q of xl, root = its owner's local point */
      PetscSFNode *iremote;
      PetscLayout  map;

      PetscCall(VecGetLayout(x, &map));
      PetscCall(PetscMalloc1(ng, &iremote));
      for (PetscInt i = 0; i < ng; i++) {
        PetscMPIInt owner;
        PetscInt    l;
        PetscCall(PetscLayoutFindOwnerIndex(map, gidx[i] * dof, &owner, &l));
        iremote[i].rank  = owner;
        iremote[i].index = l / dof;
      }
      PetscCall(GpukitIPCHaloCreate(PetscObjectComm((PetscObject)A), np, ng, lidx, iremote, dof, &h->ipc));
      PetscCall(PetscFree(iremote));
    }
    PetscCall(PetscInfo(A, "MATSGDIACUDA product halo exchange: %s\n", h->ipc ? "through CUDA IPC (device to device)" : (ipc ? "VecScatter (CUDA IPC unavailable; -info of GpukitIPCHaloCreate says why)" : "VecScatter (-mat_sgdia_cuda_ipc false)")));
  }
  PetscCall(PetscFree2(lidx, gidx));
  PetscCall(PetscInfo(A, "MATSGDIACUDA overlaps the halo exchange with the product: %lld of %" PetscInt_FMT " local rows in the shell, %" PetscInt_FMT " ghost points\n", nr, sg->m, ng));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGDIACUDAHaloMult_Private(Mat A, SGDIAHaloCUDA *hp, Vec x, Vec y, Vec z, PetscInt variant, PetscInt block, PetscBool *done)
{
  Mat_SGDIA          *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA      *cu = (Mat_SGDIACUDA *)sg->spptr;
  SGDIAHaloCUDA       h;
  PetscMPIInt         size;
  GpukitSGDIAMultArgs ai, as;
  const PetscScalar  *xa, *xla, *ya = NULL;
  PetscScalar        *za, *xlw = NULL;
  cudaStream_t        stream;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size == 1) PetscFunctionReturn(PETSC_SUCCESS);
  if (!*hp) {
    PetscCall(PetscNew(hp));
    {
      PetscBool on = PETSC_TRUE;
      PetscCall(PetscOptionsGetBool(((PetscObject)A)->options, ((PetscObject)A)->prefix, "-mat_sgdia_overlap", &on, NULL));
      (*hp)->off = (PetscBool)!on;
    }
    if (!(*hp)->off) PetscCall(SGDIACUDAHaloSetUp(A, x, *hp));
    else PetscCall(PetscInfo(A, "-mat_sgdia_overlap 0: the MPI product exchanges the halo first, then computes\n"));
  }
  h = *hp;
  if (h->off) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
  if (h->ipc) { /* the ghosts device to device: packed from x by the owners, read from their buffers into xl */
    PetscCall(VecCUDAGetArrayRead(x, &xa));
    PetscCall(VecCUDAGetArray(h->xl, &xlw));
    PetscCall(GpukitIPCHaloBcastBegin(h->ipc, sg->dof, xa, xlw, stream));
  } else {
    PetscCall(VecScatterBegin(h->sc, x, h->xl, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecCUDAGetArrayRead(x, &xa));
  }
  /* interior rows from x itself */
  PetscCall(SGDIACUDASetArgs_Private(A, PETSC_FALSE, &ai));
  if (!y) PetscCall(VecCUDAGetArrayWrite(z, &za));
  else if (y == z) {
    PetscCall(VecCUDAGetArray(z, &za));
    ya = za;
  } else {
    PetscCall(VecCUDAGetArrayRead(y, &ya));
    PetscCall(VecCUDAGetArrayWrite(z, &za));
  }
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitSGDIAMultInteriorCUDA(&ai, h->ilo, h->ihi, xa, ya, za, (int)block, (int)variant, stream));
  PetscCall(PetscLogGpuTimeEnd());
  if (h->ipc) {
    PetscCall(GpukitIPCHaloBcastEnd(h->ipc, sg->dof, xa, xlw, stream));
    xla = xlw;
  } else {
    PetscCall(VecScatterEnd(h->sc, x, h->xl, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecCUDAGetArrayRead(h->xl, &xla));
  }
  /* the shell rows: owned neighbours from x, ghosts from xl */
  PetscCall(SGDIACUDASetArgs_Private(A, PETSC_TRUE, &as));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitSGDIAMultShellCUDA(&as, cu->off, xa, h->rows, h->nrows, xla, ya, za, (int)block, stream));
  PetscCall(PetscLogGpuTimeEnd());
  if (h->ipc) PetscCall(VecCUDARestoreArray(h->xl, &xlw));
  else PetscCall(VecCUDARestoreArrayRead(h->xl, &xla));
  if (!y) PetscCall(VecCUDARestoreArrayWrite(z, &za));
  else if (y == z) PetscCall(VecCUDARestoreArray(z, &za));
  else {
    PetscCall(VecCUDARestoreArrayRead(y, &ya));
    PetscCall(VecCUDARestoreArrayWrite(z, &za));
  }
  PetscCall(VecCUDARestoreArrayRead(x, &xa));
  *done = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif
