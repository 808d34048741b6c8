/*
   Private declarations of MATSGDIACUDA shared by its PETSc/CUDA glue files (include from .cu files only):
     sgdiacuda.cu        the twin (offload mask through gpukittwin.h), the device ops, options, view, converts;
     sgdiapowerscuda.cu  the device matrix powers hook ("MatMatrixPowers_C");
     sgdiacsrcuda.cu     the device CSR of MATSEQSGDIACUDA ("GpukitMatGetDeviceCSR_C", gpukitmat.h).
   COO assembly is the shared helper of gpukitcoo.h, the product's knobs live in the shared tuner (gpukittune.h).
*/
#pragma once

#include <petscdevice_cuda.h>
#include "gpukitcuda.h"
#include "gpukittune.h"
#include "gpukittwin.h"
#include "gpukitcoo.h"
#include "gpukitmat.h"
#include "sgdiaimpl.h"
#include "sgdiakernels.h"
#include "sgdiaopskernels.h"

#if defined(GPUKIT_SGDIACUDA_AVAILABLE)

#define GPUKIT_SGDIA_CUDA_BLOCK_SIZE 256                                 /* default threads per block */
#define SGDIACUDA_WHO                "MATSGDIACUDA launches its kernels" /* for GpukitCUDAGetStream() errors */

typedef struct {
  PetscScalar     *v;     /* device copy of Mat_SGDIA's v */
  PetscCount       nv;    /* its length */
  long long       *off;   /* 2k: stencil offsets in grid points, in the owned box (first k), then in the ghosted box */
  int             *delta; /* 3k: stencil offsets (dx, dy, dz) */
  PetscInt         k;     /* stencil points that off and delta hold */
  Vec              xl, yl; /* device ghosted local vectors, when the DMDA's local vectors are not VECSEQCUDA */
  Vec              dl;     /* matrix powers, lean basis: dinv over the ghosted box of DM dlda, for dinv of id did and state dstate */
  DM               dlda;   /* not referenced: only compared */
  PetscObjectId    did;
  PetscObjectState dstate;
  PetscScalar     *ibdiag; /* device: inverted diagonal blocks */

  /* kernel knobs. block: threads per block of every kernel, and the product's when its knob is fixed; the product's
     variant and block come from the tuner (knobs "variant" and "block"), fixed by the options that set them, and not
     tuned at all with autotune false */
  PetscInt            block, variant;
  PetscBool           fixblock, fixvariant, autotune;
  GpukitTuner         tuner;     /* made at the first product (NULL: not yet, or autotune false) */
  PetscInt            tune_m;    /* the local rows it was made for */
  GpukitSGDIAMultArgs tuneargs;  /* the product's arguments, for the tuner's validity callback */

  /* COO assembly (gpukitcoo.h) */
  GpukitCOO coo;

  /* device CSR of the local rows (sgdiacsrcuda.cu): structure built once per layout, values refilled when the
     object state changed */
  int             *csr_rowptr, *csr_colidx;
  PetscScalar     *csr_val;
  PetscInt         csr_m, csr_nnz;
  PetscObjectState csr_state;
  PetscBool        csr_filled;

  struct _n_SGDIAHaloCUDA *halo; /* the overlapped MPI product's scatter and shell rows (sgdiahalocuda.cu) */
  struct _n_SGDIAMPKCUDA  *mpkd; /* the matrix powers ghost region on the device (sgdiapowerscuda.cu) */

  PetscBool  told_vec, told_dof;
  GpukitTwin twin; /* offload mask, logged copies, the host ops for MatBindToCPU() and the way back */
} Mat_SGDIACUDA;

static inline Mat_SGDIACUDA *SGDIACUDAGet(Mat A)
{
  return (Mat_SGDIACUDA *)((Mat_SGDIA *)A->data)->spptr;
}

/* sgdiacuda.cu, for the other glue files */
PETSC_INTERN PetscErrorCode SGDIACUDAVecsOnDevice_Private(Mat, const char[], PetscInt, const Vec[], PetscBool *);
PETSC_INTERN PetscErrorCode SGDIACUDACopyToGPU_Private(Mat);
PETSC_INTERN PetscErrorCode SGDIACUDAGetLocalVecs_Private(Mat, Vec *, Vec *);
PETSC_INTERN PetscErrorCode SGDIACUDASetArgs_Private(Mat, PetscBool, GpukitSGDIAMultArgs *);
PETSC_INTERN PetscErrorCode SGDIACUDAGetProductConfig_Private(Mat, PetscInt *, PetscInt *);
PETSC_INTERN PetscBool      SGDIACUDANeedsGhosts_Private(const Mat_SGDIA *);

/* sgdiapowerscuda.cu */
typedef struct _n_SGDIAMPKCUDA *SGDIAMPKCUDA;
PETSC_INTERN PetscErrorCode MatMatrixPowers_SGDIACUDA(Mat, Vec, PetscInt, const PetscReal[], const PetscReal[], const PetscReal[], Vec[], Vec[]);
PETSC_INTERN PetscErrorCode SGDIACUDAMPKDestroy_Private(SGDIAMPKCUDA *);
PETSC_INTERN PetscLogEvent  MAT_SGDIA_PowersCUDA, MAT_SGDIA_MPKGhostCUDA;

/* sgdiacsrcuda.cu */
PETSC_INTERN PetscErrorCode MatGetDeviceCSR_SeqSGDIACUDA(Mat, GpukitDeviceCSR *);
PETSC_INTERN PetscErrorCode MatRestoreDeviceCSR_SeqSGDIACUDA(Mat, GpukitDeviceCSR *);
PETSC_INTERN PetscErrorCode SGDIACUDACSRFree_Private(Mat_SGDIACUDA *);
PETSC_INTERN PetscLogEvent  MAT_SGDIA_CSRCUDA;

#endif /* GPUKIT_SGDIACUDA_AVAILABLE */
