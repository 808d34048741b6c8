/*
   A same-host device-to-device halo exchange through CUDA IPC (gpukitipccuda.cu; kernels: gpukitipckernels.{h,cu}).
   Include from .cu files only (CUDA builds).

   What a CUDA-aware MPI gives on one node, without one: a broadcast root -> leaf (MPI_REPLACE) of unit scalars per
   entry on device buffers, as PetscSFBcast() does, where every owner packs the entries its readers need into ONE device
   send buffer that the readers open through cudaIpcOpenMemHandle() and read directly (peer access over NVLink, or the
   same GPU), ordered by interprocess CUDA events and zero-byte MPI tokens (the protocol: gpukitipccuda.cu). Nothing
   travels through the host.

     GpukitIPCHaloCreate(comm, nroots, nleaves, ilocal, iremote, maxunit, &h)   collective; h NULL on every rank when
                                                                               IPC cannot be used (-info says why)
     GpukitIPCHaloBcastBegin(h, unit, rootdata, leafdata, stream)              unit <= maxunit scalars per entry
     ... work on stream that neither writes rootdata nor touches leafdata ...
     GpukitIPCHaloBcastEnd(h, unit, rootdata, leafdata, stream)                leafdata complete on stream after it
     GpukitIPCHaloDestroy(&h)                                                  collective

   The graph is PetscSF's: nroots entries owned here, nleaves leaves at ilocal[i] (NULL: i) reading entry
   iremote[i].index of rank iremote[i].rank; entry e of root data is rootdata[e*unit .. e*unit + unit), a leaf l's slot
   leafdata[l*unit .. l*unit + unit). Every rank of comm calls Begin and End with the same unit, on its stream (the one
   its kernels that write rootdata and read leafdata run on). Options (global): -gpukit_ipc <bool> (default true: false
   makes Create return NULL), -gpukit_ipc_host_sync <bool> (default false: each side waits for its own CUDA event on the
   host before its token, instead of the other side's stream waiting on the interprocess event),
   -gpukit_ipc_side_stream <bool> (default true: the pack and the unpack run on a high-priority stream of the halo that
   overlaps the caller's work between Begin and End; false: on the caller's stream). Log event:
   "GpukitIPCHalo" (Begin and End each).
*/
#pragma once

#include <petscsf.h>
#include <cuda_runtime.h>

typedef struct _n_GpukitIPCHalo *GpukitIPCHalo;

PETSC_INTERN PetscErrorCode GpukitIPCHaloCreate(MPI_Comm, PetscInt, PetscInt, const PetscInt[], const PetscSFNode[], PetscInt, GpukitIPCHalo *);
PETSC_INTERN PetscErrorCode GpukitIPCHaloBcastBegin(GpukitIPCHalo, PetscInt, const PetscScalar *, PetscScalar *, cudaStream_t);
PETSC_INTERN PetscErrorCode GpukitIPCHaloBcastEnd(GpukitIPCHalo, PetscInt, const PetscScalar *, PetscScalar *, cudaStream_t);
PETSC_INTERN PetscErrorCode GpukitIPCHaloDestroy(GpukitIPCHalo *);
PETSC_INTERN PetscErrorCode GpukitIPCRegister_Private(void);
