/*
   Device kernel of the COO assembly shared by gpukit's device matrix types (glue in gpukitcoocuda.cu, interface in
   gpukitcoo.h). Pure CUDA with a C interface, no PETSc: the makefile compiles it in every build that has nvcc.

   The type stores its values in one device array v; "slot" is a position in v. The glue has grouped the COO entries by
   the slot they land in (jmap, perm) on the host, once, at MatSetPreallocationCOO(); this kernel then does
   MatSetValuesCOO() on the device.
*/
#pragma once

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* For each of the nu unique slots u, with the device arrays
       slot[u]             the position of the slot in v (each slot appears once),
       jmap[u]..jmap[u+1]  the range (nu+1 entries) of its contributions in perm,
       perm[t]             a contribution: an index into vlocal when < nlocal, else into vrecv (perm[t] - nlocal),
   sum the contributions in that order, starting from 0 (so the sum does not depend on the run), and set
   v[slot[u]] = sum (add == 0) or v[slot[u]] += sum (add != 0). Slots not listed are left alone. vlocal holds the
   caller's values (may be NULL when nlocal is 0), vrecv those received from other ranks (may be NULL when there are
   none). One thread per unique slot, no atomics. block: threads per block, a multiple of 32 in 32..1024.
   Returns cudaErrorInvalidValue for bad arguments, cudaErrorInvalidConfiguration when the grid would need more than
   2^31-1 blocks, cudaSuccess without a launch when nu is 0, else the launch status. Asynchronous on stream. */
cudaError_t GpukitCOOSetValuesCUDA(long long nu, const long long *slot, const long long *jmap, const long long *perm, long long nlocal, const double *vlocal, const double *vrecv, int add, double *v, int block, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
