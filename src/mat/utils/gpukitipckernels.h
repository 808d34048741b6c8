/*
   Device kernels of the same-host halo exchange through CUDA IPC (glue: gpukitipccuda.cu, gpukitipc.h). Pure CUDA with a
   C interface, no PETSc. One gather serves the three copies of an exchange (the owner's pack into its send buffer, the
   reader's unpack from the owners' send buffers, the copy of the entries a rank owns itself):

     out[(dst ? dst[i] : i)*unit + c] = (slot ? bases[slot[i]] : base)[src[i]*unit + c]    for i < n, c < unit

   Entries are unit words of wsize bytes (4, 8 or 16: sizeof the caller's scalar); bases is a device array of device
   pointers (another process's buffers opened through cudaIpcOpenMemHandle() among them).
*/
#pragma once

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  long long        n;     /* entries */
  int              unit;  /* words per entry (>= 1) */
  int              wsize; /* bytes per word: 4, 8 or 16 */
  const long long *src;   /* device, n: the entry read, in units of unit words */
  const long long *dst;   /* device, n: the entry written (NULL: i) */
  const int       *slot;  /* device, n: which of bases each entry is read from (NULL: base) */
  void *const     *bases; /* device: the source arrays picked by slot */
  const void      *base;  /* the source array when slot is NULL */
  void            *out;   /* the destination array */
} GpukitIPCGatherArgs;

/* Returns cudaErrorInvalidValue for bad arguments, launches nothing when n is 0, else the launch status; asynchronous on
   stream, block threads per block (a multiple of 32 in 32..1024). */
cudaError_t GpukitIPCGatherCUDA(const GpukitIPCGatherArgs *a, int block, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
