/*
   Every difference between the PETSc releases gpukit supports (3.18 .. current) lives here.
*/
#pragma once

#include <petscversion.h>
#include <petscsys.h>

/* PETSC_SUCCESS appeared in 3.19 */
#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

/* PetscAssertPointer() replaced PetscValidPointer() in 3.19 */
#if PETSC_VERSION_LT(3, 19, 0)
  #define GpukitAssertPointer(p, a) PetscValidPointer(p, a)
#else
  #define GpukitAssertPointer(p, a) PetscAssertPointer(p, a)
#endif

/* The setfromoptions signature took PetscOptionItems * until 3.22 and PetscOptionItems after. */
#if PETSC_VERSION_LT(3, 23, 0)
typedef PetscOptionItems *GpukitOptionItems;
#else
typedef PetscOptionItems GpukitOptionItems;
#endif

/* PetscObjectComposeFunction takes a function of any signature through this cast in every release. */
#define GPUKIT_FN(f) ((void (*)(void))(f))

/* MatSetOperation's function type: void (*)(void) everywhere, but spelled differently in recent releases. */
#define GPUKIT_OP(f) ((void (*)(void))(f))

/* A PetscContainer whose pointer is freed with PetscFree(): the destroy hook took the pointer (< 3.23), the
   address of the pointer as void ** (3.23, 3.24), then as PetscCtxRt, a void * (3.25 on). */
#if PETSC_VERSION_LT(3, 23, 0)
static inline PetscErrorCode GpukitFreeCtx_Private(void *ctx)
{
  return PetscFree(ctx);
}
  #define GpukitContainerSetFreeDestroy(c) PetscContainerSetUserDestroy((c), GpukitFreeCtx_Private)
#elif PETSC_VERSION_LT(3, 25, 0)
static inline PetscErrorCode GpukitFreeCtx_Private(void **ctx)
{
  return PetscFree(*ctx);
}
  #define GpukitContainerSetFreeDestroy(c) PetscContainerSetCtxDestroy((c), GpukitFreeCtx_Private)
#else
static inline PetscErrorCode GpukitFreeCtx_Private(void *ctx)
{
  return PetscFree(*(void **)ctx);
}
  #define GpukitContainerSetFreeDestroy(c) PetscContainerSetCtxDestroy((c), GpukitFreeCtx_Private)
#endif

/* MPIU_BOOL became MPI_C_BOOL in 3.24 */
#if PETSC_VERSION_LT(3, 24, 0)
  #define GPUKIT_MPI_BOOL MPIU_BOOL
#else
  #define GPUKIT_MPI_BOOL MPI_C_BOOL
#endif

/* KSPSetDMActive() took which parts of the system the DM computes (KSPDMActive) from 3.26 on */
#if PETSC_VERSION_LT(3, 26, 0)
  #define GpukitKSPSetDMActive(ksp, flg) KSPSetDMActive((ksp), (flg))
#else
  #define GpukitKSPSetDMActive(ksp, flg) KSPSetDMActive((ksp), KSP_DMACTIVE_ALL, (flg))
#endif

/* the AIJ forwarder (src/mat/utils/gpukitaijfwd.c): private Mat interfaces that changed */
/* MatCreateGraph() gained num_idx and index[] in 3.21 */
#if PETSC_VERSION_LT(3, 21, 0)
  #define GPUKIT_CREATEGRAPH_ARGS    PetscBool sym, PetscBool scale, PetscReal filter, Mat *G
  #define GPUKIT_CREATEGRAPH_PASS(a) (a, sym, scale, filter, G)
#else
  #define GPUKIT_CREATEGRAPH_ARGS    PetscBool sym, PetscBool scale, PetscReal filter, PetscInt num_idx, PetscInt index[], Mat *G
  #define GPUKIT_CREATEGRAPH_PASS(a) (a, sym, scale, filter, num_idx, index, G)
#endif
/* the record MatTranspose() keeps on its result: MatParentState until 3.25, MatState from 3.26 (for files that
   include petsc/private/matimpl.h) */
#if PETSC_VERSION_LT(3, 26, 0)
  #define GpukitMatParentState MatParentState
#else
  #define GpukitMatParentState MatState
#endif
/* Mat_Product's destroy took the data (< 3.25), then its address */
#if PETSC_VERSION_LT(3, 25, 0)
  #define GpukitMatProductDestroyData(p) ((*(p)->destroy)((p)->data))
#else
  #define GpukitMatProductDestroyData(p) ((*(p)->destroy)(&(p)->data))
#endif
