/*
   The same-host halo exchange through CUDA IPC (gpukitipc.h): set-up, the token protocol, tear-down.

   Set-up (GpukitIPCHaloCreate): every rank of comm on one node (MPI_COMM_TYPE_SHARED), every owner's GPU visible to
   its readers (PCI bus ids) and peer-accessible (or the same GPU); each reader sends each owner the root indices it
   needs, in its leaf order, on a duplicated communicator; each owner allocates ONE send buffer with cudaMalloc()
   (IPC memory handles need a plain allocation) holding, reader after reader, the entries that reader reads (maxunit
   scalars each), plus the device list of the root indices to pack; a "ready" event on the owner, a "done" event on the
   reader (cudaEventInterprocess | cudaEventDisableTiming); the handles travel; readers open the buffers and the ready
   events, owners the readers' done events. A failure anywhere is agreed on (MPI_Allreduce) and gives NULL everywhere.

   One exchange, k-th call, with zero-byte MPI tokens (tag READY owner -> reader, DONE reader -> owner):
     Begin (owner side)  wait for the DONE tokens of call k-1 (receives posted at End k-1); the stream waits for each
                         reader's done event; pack; record ready; Isend READY to each reader; (reader side) post the
                         receives of the owners' READY tokens.
     End   (reader side) wait for the READY tokens; the stream waits for each owner's ready event; one kernel reads every
                         owner's buffer (peer pointers) into leafdata, one copies the entries owned here; record done;
                         Isend DONE to each owner; (owner side) post the receives of call k's DONE tokens.
   Why no interprocess event is re-recorded before the other side's stream waited on it: cudaStreamWaitEvent() waits for
   the record that is the event's latest when it is called. An owner re-records ready at Begin k+1 only after the DONE
   tokens of call k, which each reader sends after its End k called cudaStreamWaitEvent() on ready (record k). A reader
   re-records done at End k+1 only after the READY tokens of call k+1, which each owner sends after its Begin k+1 called
   cudaStreamWaitEvent() on done (record k). So the send buffer is packed again only after every reader's unpack of the
   previous call (ordered through done), and read only after the pack of this call (ordered through ready).
   The pack (Begin) and the unpack (End) run on a second stream of this halo, created with the device's highest
   priority (-gpukit_ipc_side_stream, default true): Begin records an event on the caller's stream that the side
   stream waits for (rootdata is final), End makes the caller's stream wait for the side stream's last record. So the
   copies and the waits for the other processes' events overlap the caller's work between Begin and End, which on the
   caller's stream would come after it (the interior product, for MATSGDIACUDA); false: everything on the caller's
   stream, as before.
   -gpukit_ipc_host_sync: each side synchronizes its own event (cudaEventSynchronize) before it sends its token and no
   stream waits on another process's event (for drivers that refuse cudaStreamWaitEvent on an event of another
   process's other device); the argument above holds with "the event completed" for "the stream waited".
*/
#include <petscdevice_cuda.h>
#include "gpukitcompat.h"
#include "gpukitipc.h"
#include "gpukitipckernels.h"

#define GPUKIT_IPC_BLOCK 256 /* threads per block of the gather kernel (a copy: no knob) */

enum {
  IPC_TAG_READY = 1,
  IPC_TAG_DONE,
  IPC_TAG_IDX,
  IPC_TAG_OWNER,
  IPC_TAG_READER
};

/* why IPC cannot be used, agreed on by MPI_MAX: the order is the order of the checks */
typedef enum {
  IPC_OK,
  IPC_OFF,
  IPC_NODE,
  IPC_VISIBLE,
  IPC_PEER,
  IPC_CALL
} IPCWhy;
static const char *const IPCWhyText[] = {"", "-gpukit_ipc false", "not every rank of the communicator is on this node", "a neighbour's GPU is not visible to this process", "a neighbour's GPU is not peer-accessible from this one", "a CUDA IPC call failed"};

struct _n_GpukitIPCHalo {
  MPI_Comm    comm; /* duplicate: set-up messages and tokens */
  PetscMPIInt rank;
  PetscInt    maxunit;
  PetscInt    unit; /* of the exchange in progress (0: none) */
  PetscBool   hostsync;
  cudaStream_t side;     /* the pack and unpack stream (NULL: the caller's) */
  cudaEvent_t  xready;   /* on the caller's stream at Begin: rootdata is final */
  cudaEvent_t  fin;      /* on the side stream at End: leafdata is complete */

  /* owner side: my readers */
  PetscMPIInt  nr, *rrank;
  PetscInt     nsend;    /* entries in sendbuf */
  long long   *dpack;    /* device, nsend: the root index of each */
  PetscScalar *sendbuf;  /* cudaMalloc, nsend*maxunit: reader after reader */
  cudaEvent_t  ready;    /* recorded after the pack */
  cudaEvent_t *rdone;    /* nr: the readers' done events, opened */
  MPI_Request *rreadyrq; /* nr: READY sends */
  MPI_Request *rdonerq;  /* nr: DONE receives */

  /* reader side: my owners */
  PetscMPIInt  no, *orank;
  PetscInt     nrecv;    /* entries read from owners */
  void       **obuf;     /* no: the owners' send buffers, opened */
  void       **dbases;   /* device copy of obuf */
  int         *dslot;    /* device, nrecv: owner of each entry */
  long long   *dsrc;     /* device, nrecv: the entry in that owner's buffer */
  long long   *ddst;     /* device, nrecv: the leaf */
  cudaEvent_t  done;     /* recorded after the unpack */
  cudaEvent_t *oready;   /* no: the owners' ready events, opened */
  MPI_Request *oreadyrq; /* no: READY receives */
  MPI_Request *odonerq;  /* no: DONE sends */

  /* the entries owned here */
  PetscInt   nself;
  long long *dsroot, *dsleaf;
};

typedef struct {
  cudaIpcMemHandle_t   mem;
  cudaIpcEventHandle_t ready;
  long long            start; /* the reader's first entry in the send buffer */
} IPCOwnerMsg;

static PetscLogEvent GPUKIT_IPC_Halo;
static char          IPCToken; /* zero-byte messages need an address */

/* the event "GpukitIPCHalo", registered with the shared Mat layer's CUDA events (GpukitMatUtilsRegisterCUDA_Private()) */
PetscErrorCode GpukitIPCRegister_Private(void)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventRegister("GpukitIPCHalo", PETSCSF_CLASSID, &GPUKIT_IPC_Halo));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a CUDA IPC call of the set-up: a failure is not an error but the reason to fall back (the error is cleared) */
#define IPCTry(call) \
  do { \
    if (why == IPC_OK) { \
      cudaError_t ipc_e_ = (call); \
      if (ipc_e_ != cudaSuccess) { \
        (void)cudaGetLastError(); \
        why = IPC_CALL; \
        PetscCall(PetscInfo(NULL, "CUDA IPC halo: %s failed on rank %d: %s\n", #call, (int)h->rank, cudaGetErrorString(ipc_e_))); \
      } \
    } \
  } while (0)

/* agree on why (the largest reason of any rank); -info says it once */
static PetscErrorCode IPCAgree(MPI_Comm comm, int *why)
{
  int w = *why;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(&w, why, 1, MPI_INT, MPI_MAX, comm));
  if (*why != IPC_OK) PetscCall(PetscInfo(NULL, "CUDA IPC halo exchange not used: %s\n", IPCWhyText[*why]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode IPCUpload(size_t bytes, const void *h, void **d)
{
  PetscFunctionBegin;
  *d = NULL;
  if (!bytes) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallCUDA(cudaMalloc(d, bytes));
  PetscCallCUDA(cudaMemcpy(*d, h, bytes, cudaMemcpyHostToDevice));
  PetscCall(PetscLogCpuToGpu((PetscLogDouble)bytes));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   GpukitIPCHaloDestroy - frees the exchange. Collective: completes the outstanding tokens, waits for this rank's last
   unpack, closes what it opened of the others, then (after a barrier: nobody reads or waits on them any more) frees its
   own buffer and events. Also the clean-up of a failed set-up (every rank calls it then).
*/
PetscErrorCode GpukitIPCHaloDestroy(GpukitIPCHalo *hp)
{
  GpukitIPCHalo h = *hp;

  PetscFunctionBegin;
  if (!h) PetscFunctionReturn(PETSC_SUCCESS);
  if (h->nr) {
    PetscCallMPI(MPI_Waitall(h->nr, h->rdonerq, MPI_STATUSES_IGNORE));
    PetscCallMPI(MPI_Waitall(h->nr, h->rreadyrq, MPI_STATUSES_IGNORE));
  }
  if (h->no) {
    PetscCallMPI(MPI_Waitall(h->no, h->oreadyrq, MPI_STATUSES_IGNORE));
    PetscCallMPI(MPI_Waitall(h->no, h->odonerq, MPI_STATUSES_IGNORE));
  }
  if (h->done) PetscCallCUDA(cudaEventSynchronize(h->done)); /* my last read of the owners' buffers is over */
  if (h->side) PetscCallCUDA(cudaStreamSynchronize(h->side));
  for (PetscMPIInt j = 0; j < h->no; j++) {
    if (h->obuf[j]) PetscCallCUDA(cudaIpcCloseMemHandle(h->obuf[j]));
    if (h->oready[j]) PetscCallCUDA(cudaEventDestroy(h->oready[j]));
  }
  for (PetscMPIInt i = 0; i < h->nr; i++)
    if (h->rdone[i]) PetscCallCUDA(cudaEventDestroy(h->rdone[i]));
  PetscCallMPI(MPI_Barrier(h->comm));
  PetscCallCUDA(cudaFree(h->sendbuf));
  PetscCallCUDA(cudaFree(h->dpack));
  PetscCallCUDA(cudaFree(h->dbases));
  PetscCallCUDA(cudaFree(h->dslot));
  PetscCallCUDA(cudaFree(h->dsrc));
  PetscCallCUDA(cudaFree(h->ddst));
  PetscCallCUDA(cudaFree(h->dsroot));
  PetscCallCUDA(cudaFree(h->dsleaf));
  if (h->ready) PetscCallCUDA(cudaEventDestroy(h->ready));
  if (h->done) PetscCallCUDA(cudaEventDestroy(h->done));
  if (h->xready) PetscCallCUDA(cudaEventDestroy(h->xready));
  if (h->fin) PetscCallCUDA(cudaEventDestroy(h->fin));
  if (h->side) PetscCallCUDA(cudaStreamDestroy(h->side));
  PetscCallMPI(MPI_Comm_free(&h->comm));
  PetscCall(PetscFree4(h->rrank, h->rdone, h->rreadyrq, h->rdonerq));
  PetscCall(PetscFree5(h->orank, h->obuf, h->oready, h->oreadyrq, h->odonerq));
  PetscCall(PetscFree(*hp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   GpukitIPCHaloCreate - the exchange of the graph (nroots, nleaves, ilocal, iremote) as in PetscSFSetGraph(), for up to
   maxunit scalars per entry; *h = NULL on every rank when CUDA IPC cannot be used (-info says why). Collective on comm.
*/
PetscErrorCode GpukitIPCHaloCreate(MPI_Comm comm, PetscInt nroots, PetscInt nleaves, const PetscInt ilocal[], const PetscSFNode iremote[], PetscInt maxunit, GpukitIPCHalo *hp)
{
  GpukitIPCHalo h;
  PetscMPIInt   size, rank, nshm;
  PetscBool     use = PETSC_TRUE, hostsync = PETSC_FALSE, side = PETSC_TRUE;
  int           why = IPC_OK, dev;
  char         *bus;
  PetscMPIInt  *cnt, *rcnt, *oslot;
  PetscInt     *oofs, *rofs, *fill, *ridx, *pidx;
  long long    *src, *dst, *sroot, *sleaf, *pack;
  int          *slot;
  MPI_Request  *rq;
  IPCOwnerMsg  *omsg;
  cudaIpcEventHandle_t *dmsg;
  MPI_Comm      shm;

  PetscFunctionBegin;
  PetscCheck(hp, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "GpukitIPCHaloCreate() needs a place for the halo");
  *hp = NULL;
  PetscCheck(maxunit >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "The CUDA IPC halo needs at least one scalar per entry, not %" PetscInt_FMT, maxunit);
  PetscCheck(nleaves == 0 || iremote, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "The CUDA IPC halo needs the leaves' owners (iremote) for %" PetscInt_FMT " leaves", nleaves);
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));

  /* 1. the option, one node */
  PetscOptionsBegin(comm, NULL, "gpukit CUDA IPC halo exchange (docs/multigpu.md)", NULL); /* global options, listed by -help */
  PetscCall(PetscOptionsBool("-gpukit_ipc", "Exchange halos device to device through CUDA IPC where every rank is on one node (false: PETSc's star forest)", "GpukitIPCHaloCreate", use, &use, NULL));
  PetscCall(PetscOptionsBool("-gpukit_ipc_host_sync", "Each side waits for its own CUDA event on the host before its message, instead of the other side's stream waiting on it", "GpukitIPCHaloCreate", hostsync, &hostsync, NULL));
  PetscCall(PetscOptionsBool("-gpukit_ipc_side_stream", "Pack and unpack on a second, high-priority stream that overlaps the caller's work between Begin and End (false: on the caller's stream)", "GpukitIPCHaloCreate", side, &side, NULL));
  PetscOptionsEnd();
  if (!use) why = IPC_OFF;
  PetscCallMPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm));
  PetscCallMPI(MPI_Comm_size(shm, &nshm));
  PetscCallMPI(MPI_Comm_free(&shm));
  if (why == IPC_OK && nshm != size) why = IPC_NODE;
  PetscCall(IPCAgree(comm, &why));
  if (why != IPC_OK) PetscFunctionReturn(PETSC_SUCCESS);

  /* 2. the owners' GPUs (by PCI bus id: ordinals differ between processes that see different devices) */
  PetscCallCUDA(cudaGetDevice(&dev));
  PetscCall(PetscCalloc1((size_t)size * 32, &bus));
  PetscCallCUDA(cudaDeviceGetPCIBusId(bus + (size_t)rank * 32, 32, dev));
  PetscCallMPI(MPI_Allgather(MPI_IN_PLACE, 32, MPI_CHAR, bus, 32, MPI_CHAR, comm));
  PetscCall(PetscCalloc3(size, &cnt, size, &rcnt, size, &oslot));
  for (PetscInt i = 0; i < nleaves; i++) {
    const PetscInt r = iremote[i].rank;
    PetscCheck(r >= 0 && r < size, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Leaf %" PetscInt_FMT " of the CUDA IPC halo names rank %" PetscInt_FMT ", not one of the %d ranks", i, r, (int)size);
    if (r != rank) cnt[r]++;
  }
  for (PetscMPIInt r = 0; r < size && why == IPC_OK; r++) {
    int pd, can = 0;
    if (!cnt[r] || !strcmp(bus + (size_t)r * 32, bus + (size_t)rank * 32)) continue; /* the same GPU is fine */
    if (cudaDeviceGetByPCIBusId(&pd, bus + (size_t)r * 32) != cudaSuccess) {
      (void)cudaGetLastError();
      why = IPC_VISIBLE;
      PetscCall(PetscInfo(NULL, "CUDA IPC halo: rank %d's GPU %s is not visible to rank %d\n", (int)r, bus + (size_t)r * 32, (int)rank));
    } else if (pd != dev) {
      PetscCallCUDA(cudaDeviceCanAccessPeer(&can, dev, pd));
      if (!can) {
        why = IPC_PEER;
        PetscCall(PetscInfo(NULL, "CUDA IPC halo: rank %d's GPU %s is not peer-accessible from rank %d's GPU %s\n", (int)r, bus + (size_t)r * 32, (int)rank, bus + (size_t)rank * 32));
      }
    }
  }
  PetscCall(PetscFree(bus));
  PetscCall(IPCAgree(comm, &why));
  if (why != IPC_OK) {
    PetscCall(PetscFree3(cnt, rcnt, oslot));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* 3. who reads what: counts, then each reader's root indices to each owner (in its leaf order) */
  PetscCall(PetscNew(&h));
  h->rank    = rank;
  h->maxunit = maxunit;
  h->hostsync = hostsync;
  PetscCallMPI(MPI_Comm_dup(comm, &h->comm));
  /* both sides of an exchange must use the same mode (a host-synchronising reader does not wait on the owner's event):
     one rank asking for it makes every rank use it */
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &h->hostsync, 1, GPUKIT_MPI_BOOL, MPI_LOR, h->comm));
  PetscCallMPI(MPI_Alltoall(cnt, 1, MPI_INT, rcnt, 1, MPI_INT, h->comm));
  for (PetscMPIInt r = 0; r < size; r++) {
    if (cnt[r]) h->no++;
    if (rcnt[r] && r != rank) h->nr++;
  }
  PetscCall(PetscCalloc4(h->nr, &h->rrank, h->nr, &h->rdone, h->nr, &h->rreadyrq, h->nr, &h->rdonerq));
  PetscCall(PetscCalloc5(h->no, &h->orank, h->no, &h->obuf, h->no, &h->oready, h->no, &h->oreadyrq, h->no, &h->odonerq));
  PetscCall(PetscMalloc3(h->no + 1, &oofs, h->nr + 1, &rofs, h->no, &fill));
  h->no = h->nr = 0;
  oofs[0] = rofs[0] = 0;
  for (PetscMPIInt r = 0; r < size; r++) {
    if (cnt[r]) {
      oslot[r]           = h->no;
      h->orank[h->no]    = r;
      oofs[h->no + 1]    = oofs[h->no] + cnt[r];
      h->oreadyrq[h->no] = MPI_REQUEST_NULL;
      h->odonerq[h->no]  = MPI_REQUEST_NULL;
      fill[h->no++]      = 0;
    }
    if (rcnt[r] && r != rank) {
      h->rrank[h->nr]     = r;
      rofs[h->nr + 1]     = rofs[h->nr] + rcnt[r];
      h->rreadyrq[h->nr]  = MPI_REQUEST_NULL;
      h->rdonerq[h->nr++] = MPI_REQUEST_NULL;
    }
  }
  h->nrecv = oofs[h->no];
  h->nsend = rofs[h->nr];
  h->nself = nleaves - h->nrecv;
  PetscCall(PetscMalloc5(h->nrecv, &ridx, h->nrecv, &src, h->nrecv, &dst, h->nrecv, &slot, h->nsend, &pidx));
  PetscCall(PetscMalloc3(h->nself, &sroot, h->nself, &sleaf, h->nsend, &pack));
  {
    PetscInt ns = 0;
    for (PetscInt i = 0; i < nleaves; i++) {
      const PetscMPIInt r = (PetscMPIInt)iremote[i].rank;
      const PetscInt    l = ilocal ? ilocal[i] : i;
      if (r == rank) {
        PetscCheck(iremote[i].index >= 0 && iremote[i].index < nroots, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Leaf %" PetscInt_FMT " of the CUDA IPC halo reads root %" PetscInt_FMT " of this rank, which has %" PetscInt_FMT, i, iremote[i].index, nroots);
        sroot[ns]   = (long long)iremote[i].index;
        sleaf[ns++] = (long long)l;
      } else {
        const PetscMPIInt j = oslot[r];
        const PetscInt    e = oofs[j] + fill[j]++;
        ridx[e] = iremote[i].index;
        src[e]  = (long long)e; /* made an offset in the owner's buffer below */
        dst[e]  = (long long)l;
        slot[e] = (int)j;
      }
    }
  }
  PetscCall(PetscMalloc1(h->no + h->nr, &rq));
  for (PetscMPIInt j = 0; j < h->no; j++) PetscCallMPI(MPI_Isend(ridx + oofs[j], (PetscMPIInt)(oofs[j + 1] - oofs[j]), MPIU_INT, h->orank[j], IPC_TAG_IDX, h->comm, &rq[j]));
  for (PetscMPIInt i = 0; i < h->nr; i++) PetscCallMPI(MPI_Irecv(pidx + rofs[i], (PetscMPIInt)(rofs[i + 1] - rofs[i]), MPIU_INT, h->rrank[i], IPC_TAG_IDX, h->comm, &rq[h->no + i]));
  PetscCallMPI(MPI_Waitall(h->no + h->nr, rq, MPI_STATUSES_IGNORE));
  for (PetscInt e = 0; e < h->nsend; e++) {
    PetscCheck(pidx[e] >= 0 && pidx[e] < nroots, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "A neighbour's leaf of the CUDA IPC halo reads root %" PetscInt_FMT " of rank %d, which has %" PetscInt_FMT, pidx[e], (int)rank, nroots);
    pack[e] = (long long)pidx[e];
  }
  PetscCall(IPCUpload(sizeof(long long) * h->nsend, pack, (void **)&h->dpack));
  PetscCall(IPCUpload(sizeof(long long) * h->nself, sroot, (void **)&h->dsroot));
  PetscCall(IPCUpload(sizeof(long long) * h->nself, sleaf, (void **)&h->dsleaf));

  /* 4. my send buffer and events, and their handles */
  PetscCall(PetscMalloc2(PetscMax(h->no, h->nr), &omsg, PetscMax(h->no, h->nr), &dmsg));
  { /* (what a failed call may have left in its output is never kept: the clean-up frees only what was made) */
    void       *p = NULL;
    cudaEvent_t ev = NULL;

    if (h->nr) {
      /* a whole number of 2 MiB pages: the driver may place smaller allocations in one region with others (e.g. the
         star forest's buffers), and an IPC handle maps the whole region; a CUDA-aware MPI that maps a neighbour's
         region holding this buffer makes our cudaIpcOpenMemHandle() fail with "already mapped" (seen with Open MPI
         4.1's smcuda), and the other way round */
      const size_t page = (size_t)2 << 20, bytes = sizeof(PetscScalar) * (size_t)h->nsend * (size_t)maxunit;

      IPCTry(cudaMalloc(&p, PetscMax((bytes + page - 1) / page, 1) * page));
      if (why == IPC_OK) h->sendbuf = (PetscScalar *)p;
      IPCTry(cudaEventCreateWithFlags(&ev, cudaEventInterprocess | cudaEventDisableTiming));
      if (why == IPC_OK) h->ready = ev;
    }
    if (h->no) {
      IPCTry(cudaEventCreateWithFlags(&ev, cudaEventInterprocess | cudaEventDisableTiming));
      if (why == IPC_OK) h->done = ev;
    }
  }
  PetscCall(IPCAgree(h->comm, &why));
  if (why == IPC_OK) {
    cudaIpcMemHandle_t   mh;
    cudaIpcEventHandle_t eh, dh;

    PetscCall(PetscMemzero(&mh, sizeof(mh)));
    PetscCall(PetscMemzero(&eh, sizeof(eh)));
    PetscCall(PetscMemzero(&dh, sizeof(dh)));

    if (h->nr) {
      IPCTry(cudaIpcGetMemHandle(&mh, h->sendbuf));
      IPCTry(cudaIpcGetEventHandle(&eh, h->ready));
    }
    if (h->no) IPCTry(cudaIpcGetEventHandle(&dh, h->done));
    PetscCall(IPCAgree(h->comm, &why));
    if (why == IPC_OK) { /* 5. the handles travel: owner -> reader its buffer, ready and the reader's slice; reader -> owner done */
      IPCOwnerMsg *osend;

      PetscCall(PetscCalloc1(h->nr, &osend));
      for (PetscMPIInt j = 0; j < h->no; j++) PetscCallMPI(MPI_Irecv(&omsg[j], (PetscMPIInt)sizeof(IPCOwnerMsg), MPI_BYTE, h->orank[j], IPC_TAG_OWNER, h->comm, &rq[j]));
      for (PetscMPIInt i = 0; i < h->nr; i++) {
        osend[i].mem   = mh;
        osend[i].ready = eh;
        osend[i].start = (long long)rofs[i];
        PetscCallMPI(MPI_Isend(&osend[i], (PetscMPIInt)sizeof(IPCOwnerMsg), MPI_BYTE, h->rrank[i], IPC_TAG_OWNER, h->comm, &rq[h->no + i]));
      }
      PetscCallMPI(MPI_Waitall(h->no + h->nr, rq, MPI_STATUSES_IGNORE));
      PetscCall(PetscFree(osend));
      for (PetscMPIInt j = 0; j < h->no; j++) PetscCallMPI(MPI_Isend(&dh, (PetscMPIInt)sizeof(dh), MPI_BYTE, h->orank[j], IPC_TAG_READER, h->comm, &rq[j]));
      for (PetscMPIInt i = 0; i < h->nr; i++) PetscCallMPI(MPI_Irecv(&dmsg[i], (PetscMPIInt)sizeof(cudaIpcEventHandle_t), MPI_BYTE, h->rrank[i], IPC_TAG_READER, h->comm, &rq[h->no + i]));
      PetscCallMPI(MPI_Waitall(h->no + h->nr, rq, MPI_STATUSES_IGNORE));
      /* 6. open them */
      for (PetscMPIInt j = 0; j < h->no; j++) {
        void       *p  = NULL;
        cudaEvent_t ev = NULL;

        IPCTry(cudaIpcOpenMemHandle(&p, omsg[j].mem, cudaIpcMemLazyEnablePeerAccess));
        if (why == IPC_OK) h->obuf[j] = p;
        IPCTry(cudaIpcOpenEventHandle(&ev, omsg[j].ready));
        if (why == IPC_OK) h->oready[j] = ev;
      }
      for (PetscMPIInt i = 0; i < h->nr; i++) {
        cudaEvent_t ev = NULL;

        IPCTry(cudaIpcOpenEventHandle(&ev, dmsg[i]));
        if (why == IPC_OK) h->rdone[i] = ev;
      }
      for (PetscInt e = 0; e < h->nrecv; e++) src[e] = omsg[slot[e]].start + (src[e] - oofs[slot[e]]);
      PetscCall(IPCAgree(h->comm, &why));
    }
  }
  if (why == IPC_OK && side && (h->nr || h->no || h->nself)) { /* (a local choice: the protocol does not depend on it) */
    int lo, hi;

    PetscCallCUDA(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    PetscCallCUDA(cudaStreamCreateWithPriority(&h->side, cudaStreamNonBlocking, hi));
    PetscCallCUDA(cudaEventCreateWithFlags(&h->xready, cudaEventDisableTiming));
    PetscCallCUDA(cudaEventCreateWithFlags(&h->fin, cudaEventDisableTiming));
  }
  if (why == IPC_OK) {
    PetscCall(IPCUpload(sizeof(void *) * h->no, h->obuf, (void **)&h->dbases));
    PetscCall(IPCUpload(sizeof(int) * h->nrecv, slot, (void **)&h->dslot));
    PetscCall(IPCUpload(sizeof(long long) * h->nrecv, src, (void **)&h->dsrc));
    PetscCall(IPCUpload(sizeof(long long) * h->nrecv, dst, (void **)&h->ddst));
    PetscCall(PetscInfo(NULL, "CUDA IPC halo exchange on rank %d (GPU %d): %d owners (%" PetscInt_FMT " entries read from their buffers), %d readers (%" PetscInt_FMT " entries packed), %" PetscInt_FMT " entries of its own, up to %" PetscInt_FMT " scalars each%s%s\n", (int)rank, dev, (int)h->no, h->nrecv, (int)h->nr, h->nsend, h->nself, maxunit, h->hostsync ? "; -gpukit_ipc_host_sync" : "", h->side ? "; on a side stream" : ""));
    *hp = h;
  } else PetscCall(GpukitIPCHaloDestroy(&h));
  PetscCall(PetscFree2(omsg, dmsg));
  PetscCall(PetscFree(rq));
  PetscCall(PetscFree3(sroot, sleaf, pack));
  PetscCall(PetscFree5(ridx, src, dst, slot, pidx));
  PetscCall(PetscFree3(oofs, rofs, fill));
  PetscCall(PetscFree3(cnt, rcnt, oslot));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   GpukitIPCHaloBcastBegin - starts the exchange of unit (<= maxunit) scalars per entry from rootdata (device) on
   stream: packs this rank's send buffer once its readers are done with the previous one, and tells them.
*/
PetscErrorCode GpukitIPCHaloBcastBegin(GpukitIPCHalo h, PetscInt unit, const PetscScalar *rootdata, PetscScalar *leafdata, cudaStream_t stream)
{
  PetscFunctionBegin;
  (void)leafdata;
  PetscCheck(h, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "No CUDA IPC halo (GpukitIPCHaloCreate() gave NULL: use the star forest)");
  PetscCheck(h->unit == 0, PETSC_COMM_SELF, PETSC_ERR_ORDER, "GpukitIPCHaloBcastBegin() called again before GpukitIPCHaloBcastEnd()");
  PetscCheck(unit >= 1 && unit <= h->maxunit, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "The CUDA IPC halo moves 1 to %" PetscInt_FMT " scalars per entry (its maxunit), not %" PetscInt_FMT, h->maxunit, unit);
  PetscCall(PetscLogEventBegin(GPUKIT_IPC_Halo, 0, 0, 0, 0));
  if (h->side) { /* the side stream starts once rootdata is final on the caller's */
    PetscCallCUDA(cudaEventRecord(h->xready, stream));
    PetscCallCUDA(cudaStreamWaitEvent(h->side, h->xready, 0));
    stream = h->side;
  }
  if (h->nr) {
    GpukitIPCGatherArgs a;

    /* the readers' unpack of the previous call is over (host sync) or queued before their done (stream wait) */
    PetscCallMPI(MPI_Waitall(h->nr, h->rdonerq, MPI_STATUSES_IGNORE));
    if (!h->hostsync)
      for (PetscMPIInt i = 0; i < h->nr; i++) PetscCallCUDA(cudaStreamWaitEvent(stream, h->rdone[i], 0));
    PetscCall(PetscMemzero(&a, sizeof(a)));
    a.n     = (long long)h->nsend;
    a.unit  = (int)unit;
    a.wsize = (int)sizeof(PetscScalar);
    a.src   = h->dpack;
    a.base  = rootdata;
    a.out   = h->sendbuf;
    PetscCall(PetscLogGpuTimeBegin());
    PetscCallCUDA(GpukitIPCGatherCUDA(&a, GPUKIT_IPC_BLOCK, stream));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCallCUDA(cudaEventRecord(h->ready, stream));
    if (h->hostsync) PetscCallCUDA(cudaEventSynchronize(h->ready));
    PetscCallMPI(MPI_Waitall(h->nr, h->rreadyrq, MPI_STATUSES_IGNORE));
    for (PetscMPIInt i = 0; i < h->nr; i++) PetscCallMPI(MPI_Isend(&IPCToken, 0, MPI_BYTE, h->rrank[i], IPC_TAG_READY, h->comm, &h->rreadyrq[i]));
  }
  for (PetscMPIInt j = 0; j < h->no; j++) PetscCallMPI(MPI_Irecv(&IPCToken, 0, MPI_BYTE, h->orank[j], IPC_TAG_READY, h->comm, &h->oreadyrq[j]));
  h->unit = unit;
  PetscCall(PetscLogEventEnd(GPUKIT_IPC_Halo, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   GpukitIPCHaloBcastEnd - ends the exchange: leafdata (device) holds the owners' entries on stream after it (rootdata:
   the same as at Begin, read here for the entries owned by this rank).
*/
PetscErrorCode GpukitIPCHaloBcastEnd(GpukitIPCHalo h, PetscInt unit, const PetscScalar *rootdata, PetscScalar *leafdata, cudaStream_t stream)
{
  GpukitIPCGatherArgs a;
  cudaStream_t        caller = NULL;

  PetscFunctionBegin;
  PetscCheck(h, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "No CUDA IPC halo (GpukitIPCHaloCreate() gave NULL: use the star forest)");
  PetscCheck(h->unit == unit, PETSC_COMM_SELF, PETSC_ERR_ORDER, "GpukitIPCHaloBcastEnd() with %" PetscInt_FMT " scalars per entry after a GpukitIPCHaloBcastBegin() with %" PetscInt_FMT " (0: none)", unit, h->unit);
  PetscCall(PetscLogEventBegin(GPUKIT_IPC_Halo, 0, 0, 0, 0));
  if (h->side) { /* the unpack on the side stream; the caller's stream waits for it at the end */
    caller = stream;
    stream = h->side;
  }
  if (h->no) {
    PetscCallMPI(MPI_Waitall(h->no, h->oreadyrq, MPI_STATUSES_IGNORE));
    if (!h->hostsync)
      for (PetscMPIInt j = 0; j < h->no; j++) PetscCallCUDA(cudaStreamWaitEvent(stream, h->oready[j], 0));
  }
  PetscCall(PetscLogGpuTimeBegin());
  if (h->no) {
    PetscCall(PetscMemzero(&a, sizeof(a)));
    a.n     = (long long)h->nrecv;
    a.unit  = (int)unit;
    a.wsize = (int)sizeof(PetscScalar);
    a.src   = h->dsrc;
    a.dst   = h->ddst;
    a.slot  = h->dslot;
    a.bases = h->dbases;
    a.out   = leafdata;
    PetscCallCUDA(GpukitIPCGatherCUDA(&a, GPUKIT_IPC_BLOCK, stream));
  }
  if (h->nself) {
    PetscCall(PetscMemzero(&a, sizeof(a)));
    a.n     = (long long)h->nself;
    a.unit  = (int)unit;
    a.wsize = (int)sizeof(PetscScalar);
    a.src   = h->dsroot;
    a.dst   = h->dsleaf;
    a.base  = rootdata;
    a.out   = leafdata;
    PetscCallCUDA(GpukitIPCGatherCUDA(&a, GPUKIT_IPC_BLOCK, stream));
  }
  PetscCall(PetscLogGpuTimeEnd());
  if (h->no) {
    PetscCallCUDA(cudaEventRecord(h->done, stream));
    if (h->hostsync) PetscCallCUDA(cudaEventSynchronize(h->done));
    PetscCallMPI(MPI_Waitall(h->no, h->odonerq, MPI_STATUSES_IGNORE));
    for (PetscMPIInt j = 0; j < h->no; j++) PetscCallMPI(MPI_Isend(&IPCToken, 0, MPI_BYTE, h->orank[j], IPC_TAG_DONE, h->comm, &h->odonerq[j]));
  }
  for (PetscMPIInt i = 0; i < h->nr; i++) PetscCallMPI(MPI_Irecv(&IPCToken, 0, MPI_BYTE, h->rrank[i], IPC_TAG_DONE, h->comm, &h->rdonerq[i]));
  if (h->side) {
    PetscCallCUDA(cudaEventRecord(h->fin, h->side));
    PetscCallCUDA(cudaStreamWaitEvent(caller, h->fin, 0));
  }
  h->unit = 0;
  PetscCall(PetscLogEventEnd(GPUKIT_IPC_Halo, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
