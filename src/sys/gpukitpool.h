/*
   gpukit's stream-ordered device memory pool (gpukitpool.cu): device memory for the work arrays of a set-up or a
   kernel, allocated and freed in the order of a stream, so that a new object reuses the memory of the previous one
   instead of calling cudaMalloc()/cudaFree() (each synchronises the device).

   The pool is one cudaMemPool_t of the library on the current device (cudaMallocFromPoolAsync()); it keeps up to
   GPUKIT_POOL_KEEP bytes (-gpukit_pool_keep MiB) of device memory, in use or free, across a synchronisation (CUDA's
   release threshold: free memory above it goes back to the device), so that the next allocation reuses it, and is
   destroyed at PetscFinalize() (it registers that itself when it is created). Another device gets its default pool
   (cudaMallocAsync()); a device without memory pools gets plain cudaMalloc()/cudaFree(). Memory from here is freed with
   GpukitPoolFree() on a stream that is ordered after every use of it (the stream it was used on, or any stream after
   a synchronisation).

   Pure C interface with CUDA types only, no PETSc: device kernel files (*kernels.cu) include it as well as the
   PETSc/CUDA glue (wrap the calls in PetscCallCUDA()).
*/
#pragma once

#include <cuda_runtime.h>

/* device memory the pool holds on to across a synchronisation, in use or free, bytes (CUDA's release threshold: free
   memory above it is released at the next synchronisation); -gpukit_pool_keep <MiB> sets it when the pool is created */
#define GPUKIT_POOL_KEEP (256ull << 20)

#ifdef __cplusplus
extern "C" {
#endif

/* *p = bytes (0 is taken as 1) of device memory, usable on stream after the work already enqueued on it */
cudaError_t GpukitPoolMalloc(void **p, size_t bytes, cudaStream_t stream);
/* gives p (may be NULL) back to the pool, after the work already enqueued on stream */
cudaError_t GpukitPoolFree(void *p, cudaStream_t stream);
/* after the work enqueued on stream (it synchronises the stream), gives the pool's freed memory above keep bytes back
   to the device (a large transient work space no longer counts in cudaMemGetInfo()) */
cudaError_t GpukitPoolTrim(size_t keep, cudaStream_t stream);
/* the device memory the pool holds now (allocated from it or kept), bytes; 0 before its first use */
cudaError_t GpukitPoolReserved(size_t *bytes);
/* destroys the pool (PetscFinalize() calls it; memory still allocated from it is released when freed) */
cudaError_t GpukitPoolDestroy(void);

#ifdef __cplusplus
}

/* typed forms: n elements of T; GpukitPoolFreeN() also sets *p to NULL */
template <typename T>
static inline cudaError_t GpukitPoolMallocN(T **p, size_t n, cudaStream_t stream)
{
  void       *v   = nullptr;
  cudaError_t err = GpukitPoolMalloc(&v, (n ? n : 1) * sizeof(T), stream);
  *p              = static_cast<T *>(v);
  return err;
}

template <typename T>
static inline cudaError_t GpukitPoolFreeN(T **p, cudaStream_t stream)
{
  cudaError_t err = cudaSuccess;
  if (*p) err = GpukitPoolFree((void *)*p, stream);
  *p = nullptr;
  return err;
}

/* scratch memory of one function, given back when it goes out of scope (on the stream it was taken on) */
struct GpukitPoolTemp {
  void        *p = nullptr;
  cudaStream_t s;
  explicit GpukitPoolTemp(cudaStream_t st) : s(st) { }
  GpukitPoolTemp(const GpukitPoolTemp &)            = delete;
  GpukitPoolTemp &operator=(const GpukitPoolTemp &) = delete;
  ~GpukitPoolTemp()
  {
    if (p) (void)GpukitPoolFree(p, s);
  }
  cudaError_t Get(size_t bytes) { return GpukitPoolMalloc(&p, bytes, s); }
  cudaError_t Release()
  {
    cudaError_t err = GpukitPoolFree(p, s);
    p               = nullptr;
    return err;
  }
  template <typename T>
  T *As() const
  {
    return static_cast<T *>(p);
  }
};
#endif
