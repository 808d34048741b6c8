/*
   COO assembly on the device for any gpukit matrix type that keeps its values in one device array (interface and
   protocol in gpukitcoo.h, kernel in gpukitcookernels.cu). Built only against a PETSc with CUDA.
*/
#include <petscdevice_cuda.h>
#include <petscsf.h>
#include <algorithm>
#include <utility>
#include <vector>
#include "gpukitcuda.h"
#include "gpukitcoo.h"
#include "gpukitcookernels.h"

#if defined(PETSC_USE_REAL_DOUBLE) && !defined(PETSC_USE_COMPLEX) /* the kernel is written for real double precision */

#define GPUKIT_COO_WHO "MatSetValuesCOO() on a gpukit device matrix launches its kernel" /* for GpukitCUDAGetStream() errors */

struct _n_GpukitCOO {
  PetscCount   n, nrecv, nu;       /* the caller's entries, those received from other ranks, unique slots */
  long long   *slot, *jmap, *perm; /* device: see GpukitCOOSetValuesCUDA() */
  PetscSF      sf;                 /* local entries in other ranks' rows -> their owners' receive buffers */
  PetscScalar *recv, *vbuf;        /* device: received values; a device copy of host values */
};

template <typename T>
static PetscErrorCode GpukitCOOUpload_Private(T **d, const T *h, size_t n, cudaStream_t stream)
{
  PetscFunctionBegin;
  PetscCallCUDA(cudaMalloc((void **)d, std::max(n, (size_t)1) * sizeof(T)));
  if (n) PetscCallCUDA(cudaMemcpyAsync(*d, h, n * sizeof(T), cudaMemcpyHostToDevice, stream));
  PetscCall(PetscLogCpuToGpu((PetscLogDouble)n * sizeof(T)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  GpukitCOOCreate - the device COO map of A for the n entries (coo_i[e], coo_j[e]) (global indices; negative ones are
  ignored); slot says where an entry of a locally owned row lives. With ignore_offproc an entry in another rank's row
  is an error (MAT_IGNORE_OFF_PROC_ENTRIES). Collective on A.
*/
PetscErrorCode GpukitCOOCreate(Mat A, PetscCount n, const PetscInt coo_i[], const PetscInt coo_j[], GpukitCOOSlotFn slot, PetscBool ignore_offproc, GpukitCOO *coo)
{
  GpukitCOO                                     c;
  MPI_Comm                                      comm;
  PetscMPIInt                                   size;
  std::vector<std::pair<PetscCount, long long>> ent; /* (slot, index into [local values | received values]) */
  PetscLayout                                   rmap;
  PetscInt                                      M, N, rstart, rend;
  cudaStream_t                                  stream;

  PetscFunctionBegin;
  PetscCheck(n >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "The number of COO entries must be >= 0, got %" PetscCount_FMT, n);
  PetscCheck(!n || (coo_i && coo_j), PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "COO index arrays are NULL for %" PetscCount_FMT " entries", n);
  PetscCall(PetscObjectGetComm((PetscObject)A, &comm));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatGetSize(A, &M, &N));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(MatGetLayouts(A, &rmap, NULL));
  PetscCall(PetscNew(&c));
  c->n = n;
  /* local entries now; other ranks' rows are sent to their owners */
  std::vector<std::vector<PetscInt>>   out(size); /* (i, j) pairs per destination rank */
  std::vector<std::vector<PetscCount>> outidx(size);
  for (PetscCount e = 0; e < n; e++) {
    PetscInt   i = coo_i[e], j = coo_j[e];
    PetscCount s;
    if (i < 0 || j < 0) continue;
    PetscCheck(i < M && j < N, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "COO entry %" PetscCount_FMT " is (%" PetscInt_FMT ", %" PetscInt_FMT "), outside the %" PetscInt_FMT " x %" PetscInt_FMT " matrix", e, i, j, M, N);
    if (i >= rstart && i < rend) {
      PetscCall((*slot)(A, i, j, &s));
      if (s >= 0) ent.push_back(std::make_pair(s, (long long)e));
    } else {
      PetscMPIInt owner;
      PetscCheck(!ignore_offproc, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "COO entry %" PetscCount_FMT " is in row %" PetscInt_FMT " of another rank, and MAT_IGNORE_OFF_PROC_ENTRIES is set; leave such entries out (negative indices)", e, i);
      PetscCall(PetscLayoutFindOwner(rmap, i, &owner));
      out[owner].push_back(i);
      out[owner].push_back(j);
      outidx[owner].push_back(e);
    }
  }
  if (size > 1) { /* counts, then where each sender's entries land in the owner's receive buffer, then (i, j) */
    std::vector<PetscMPIInt> scount(size), rcount(size), sdispl(size), rdispl(size), rstartof(size), mystart(size);
    std::vector<PetscInt>    rbuf, sbuf, leaves;
    std::vector<PetscSFNode> remotes;
    PetscMPIInt              nr = 0, ns = 0;

    for (PetscMPIInt r = 0; r < size; r++) PetscCall(PetscMPIIntCast((PetscCount)outidx[r].size(), &scount[r]));
    PetscCallMPI(MPI_Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, comm));
    for (PetscMPIInt r = 0; r < size; r++) {
      rstartof[r] = nr; /* entries from rank r start here in my receive buffer */
      nr += rcount[r];
    }
    PetscCallMPI(MPI_Alltoall(rstartof.data(), 1, MPI_INT, mystart.data(), 1, MPI_INT, comm));
    c->nrecv = nr;
    for (PetscMPIInt r = 0; r < size; r++)
      for (size_t t = 0; t < outidx[r].size(); t++) {
        PetscSFNode node;
        node.rank  = r;
        node.index = mystart[r] + (PetscInt)t;
        remotes.push_back(node);
        leaves.push_back((PetscInt)outidx[r][t]);
      }
    for (PetscMPIInt r = 0; r < size; r++) {
      sdispl[r] = ns;
      ns += 2 * scount[r];
      scount[r] *= 2;
      rdispl[r] = 2 * rstartof[r];
      rcount[r] *= 2;
      sbuf.insert(sbuf.end(), out[r].begin(), out[r].end());
    }
    rbuf.resize(2 * (size_t)nr + 1);
    sbuf.push_back(0); /* never empty: data() is then a valid pointer */
    PetscCallMPI(MPI_Alltoallv(sbuf.data(), scount.data(), sdispl.data(), MPIU_INT, rbuf.data(), rcount.data(), rdispl.data(), MPIU_INT, comm));
    for (PetscMPIInt t = 0; t < nr; t++) {
      PetscCount s;
      PetscCall((*slot)(A, rbuf[2 * t], rbuf[2 * t + 1], &s));
      if (s >= 0) ent.push_back(std::make_pair(s, (long long)n + t));
    }
    PetscCall(PetscSFCreate(comm, &c->sf));
    PetscCall(PetscSFSetGraph(c->sf, (PetscInt)nr, (PetscInt)leaves.size(), leaves.data(), PETSC_COPY_VALUES, remotes.data(), PETSC_COPY_VALUES));
    PetscCall(PetscSFSetUp(c->sf));
  }
  /* group by slot; within a slot keep the entry order, so the sums do not depend on the run */
  std::stable_sort(ent.begin(), ent.end(), [](const std::pair<PetscCount, long long> &a, const std::pair<PetscCount, long long> &b) { return a.first < b.first; });
  {
    std::vector<long long> uslot, jmap(1, 0), perm(ent.size());
    for (size_t t = 0; t < ent.size(); t++) {
      if (t == 0 || ent[t].first != ent[t - 1].first) {
        uslot.push_back((long long)ent[t].first);
        if (t) jmap.push_back((long long)t);
      }
      perm[t] = ent[t].second;
    }
    if (!ent.empty()) jmap.push_back((long long)ent.size());
    c->nu = (PetscCount)uslot.size();
    PetscCall(GpukitCUDAGetStream(GPUKIT_COO_WHO, &stream));
    PetscCall(GpukitCOOUpload_Private(&c->slot, uslot.data(), uslot.size(), stream));
    PetscCall(GpukitCOOUpload_Private(&c->jmap, jmap.data(), jmap.size(), stream));
    PetscCall(GpukitCOOUpload_Private(&c->perm, perm.data(), perm.size(), stream));
    PetscCallCUDA(cudaMalloc((void **)&c->recv, (size_t)std::max(c->nrecv, (PetscCount)1) * sizeof(PetscScalar)));
    PetscCallCUDA(cudaStreamSynchronize(stream)); /* the host vectors go out of scope */
  }
  *coo = c;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  GpukitCOOSetValues - MatSetValuesCOO(): coo_v (host or device memory, the n values of GpukitCOOCreate()'s entries)
  into the device value array v of nv values, with INSERT_VALUES (v zeroed first) or ADD_VALUES (v must hold the
  current values). block: threads per block of the kernel. Collective (the PetscSF) when other ranks' rows had entries.
*/
PetscErrorCode GpukitCOOSetValues(GpukitCOO c, const PetscScalar coo_v[], InsertMode imode, PetscScalar *v, PetscCount nv, int block)
{
  PetscMemType       mtype;
  const PetscScalar *dv = coo_v;
  cudaStream_t       stream;

  PetscFunctionBegin;
  PetscCheck(imode == INSERT_VALUES || imode == ADD_VALUES, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "MatSetValuesCOO() takes INSERT_VALUES or ADD_VALUES");
  PetscCheck(c->n == 0 || coo_v, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "MatSetValuesCOO(): the values are NULL for %" PetscCount_FMT " entries", c->n);
  PetscCall(GpukitCUDAGetStream(GPUKIT_COO_WHO, &stream));
  PetscCall(PetscGetMemType(coo_v, &mtype));
  if (c->n && !PetscMemTypeDevice(mtype)) { /* host values: one upload */
    if (!c->vbuf) PetscCallCUDA(cudaMalloc((void **)&c->vbuf, (size_t)c->n * sizeof(PetscScalar)));
    PetscCallCUDA(cudaMemcpyAsync(c->vbuf, coo_v, (size_t)c->n * sizeof(PetscScalar), cudaMemcpyHostToDevice, stream));
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)c->n * sizeof(PetscScalar)));
    dv = c->vbuf;
  }
  if (c->sf) { /* values for other ranks' rows, device to device through PETSc's SF */
    PetscCall(PetscSFReduceWithMemTypeBegin(c->sf, MPIU_SCALAR, PETSC_MEMTYPE_CUDA, dv, PETSC_MEMTYPE_CUDA, c->recv, MPI_REPLACE));
    PetscCall(PetscSFReduceEnd(c->sf, MPIU_SCALAR, dv, c->recv, MPI_REPLACE));
  }
  if (imode == INSERT_VALUES && nv) PetscCallCUDA(cudaMemsetAsync(v, 0, (size_t)nv * sizeof(PetscScalar), stream));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitCOOSetValuesCUDA((long long)c->nu, c->slot, c->jmap, c->perm, (long long)c->n, dv, c->recv, imode == ADD_VALUES ? 1 : 0, v, block, stream));
  PetscCall(PetscLogGpuTimeEnd());
  if (dv == c->vbuf) PetscCallCUDA(cudaStreamSynchronize(stream)); /* coo_v may change when we return */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the caller's entries, those received from other ranks, and the unique slots they land in (for -info) */
PetscErrorCode GpukitCOOGetSizes(GpukitCOO c, PetscCount *n, PetscCount *nrecv, PetscCount *nu)
{
  PetscFunctionBegin;
  if (n) *n = c->n;
  if (nrecv) *nrecv = c->nrecv;
  if (nu) *nu = c->nu;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GpukitCOODestroy(GpukitCOO *coo)
{
  GpukitCOO c = *coo;

  PetscFunctionBegin;
  if (!c) PetscFunctionReturn(PETSC_SUCCESS);
  if (c->slot) PetscCallCUDA(cudaFree(c->slot));
  if (c->jmap) PetscCallCUDA(cudaFree(c->jmap));
  if (c->perm) PetscCallCUDA(cudaFree(c->perm));
  if (c->recv) PetscCallCUDA(cudaFree(c->recv));
  if (c->vbuf) PetscCallCUDA(cudaFree(c->vbuf));
  PetscCall(PetscSFDestroy(&c->sf));
  PetscCall(PetscFree(*coo));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
