/* CUDA helpers shared by the PETSc/CUDA glue of every gpukit type (gpukitcuda.cu); include from .cu files only */
#pragma once

#include <cuda_runtime.h>
#include <cusparse.h>
#include "gpukitimpl.h"
#include "gpukitpowers.h"

PETSC_INTERN PetscErrorCode GpukitCUDAGetStream(const char[], cudaStream_t *);
PETSC_INTERN PetscErrorCode GpukitCUSPARSEGetHandle(cudaStream_t, cusparseHandle_t *);

/* y = A x or y = z + A x through cuSPARSE's CSR product (CUSPARSE_SPMV_CSR_ALG1, what MATAIJCUSPARSE runs by default),
   for a type whose device arrays are (or, in some state, are exactly) a 32-bit CSR: the descriptor, work buffer and
   ALG1's analysis are made once per set of arrays and kept while the same arrays (pointers, sizes) come back, so that
   values changed in place need nothing; GpukitCSRSpMVReset() frees them (stream-ordered). The caller resets it whenever
   it frees or reallocates the arrays: a caching allocator may give the same addresses to a new structure. prepafter (set by the caller,
   0 by default): the analysis (cusparseSpMV_preprocess(), which costs a few products on irregular matrices) is made at
   the product number prepafter of a descriptor, not at its first, for a type whose structure changes often */
typedef struct {
  cusparseSpMatDescr_t mat;
  cusparseDnVecDescr_t x, y;                /* made once; their arrays are set at every product */
  const void          *row, *col, *val;     /* the arrays mat was made for */
  PetscInt             m, n;
  PetscCount           nnz;
  PetscBool            bufok;               /* buf was sized for mat */
  PetscBool            prepok;              /* the analysis was made for mat */
  PetscInt             ncalls, prepafter;   /* products with mat so far; the product that makes the analysis */
  void                *buf;
  size_t               bufsize;
} GpukitCSRSpMV;

PETSC_INTERN PetscErrorCode GpukitCSRSpMVApply(GpukitCSRSpMV *, PetscInt, PetscInt, PetscCount, const int *, const int *, const double *, const double *, const double *, double *, cudaStream_t);
PETSC_INTERN PetscErrorCode GpukitCSRSpMVAnalyse(GpukitCSRSpMV *, PetscInt, PetscInt, PetscCount, const int *, const int *, const double *, const double *, double *, cudaStream_t);
PETSC_INTERN PetscErrorCode GpukitCSRSpMVReset(GpukitCSRSpMV *, cudaStream_t);
/* the mean over the rows of a device CSR of (last column - first column), for the tuners' locality class */
PETSC_INTERN PetscErrorCode GpukitCSRMeanRowSpan(PetscInt, const int *, const int *, cudaStream_t, PetscReal *);

/* the device arrays (VecCUDAGetArrayRead()) of the vectors one kernel launch reads, each vector got once however
   often it is asked for (a matrix powers step may read V[j] == W[j]); GpukitCUDAReadsRestore() gives them all back */
#define GPUKIT_CUDA_READS_MAX 6
typedef struct {
  PetscInt           n;
  Vec                v[GPUKIT_CUDA_READS_MAX];
  const PetscScalar *a[GPUKIT_CUDA_READS_MAX];
} GpukitCUDAReads;

PETSC_INTERN PetscErrorCode GpukitCUDAReadsGet(GpukitCUDAReads *, Vec, const PetscScalar **);
PETSC_INTERN PetscErrorCode GpukitCUDAReadsRestore(GpukitCUDAReads *);

/* one matrix powers step of a device hook (contract: src/mat/utils/gpukitmat.h), around the hook's own product input
   (e->xs and the x it passes the kernel): Begin fills the epilogue *e for step j (its coefficients, the earlier W it
   reads into rd, dinv and V[j+1] unless V == NULL) and gets W[j+1]'s array in *w1; End gives back all of them */
PETSC_INTERN PetscErrorCode GpukitCUDAPowersStepBegin(GpukitCUDAReads *, PetscInt, const PetscReal[], const PetscReal[], const PetscReal[], Vec, Vec[], Vec[], GpukitPowersEpilogue *, PetscScalar **);
PETSC_INTERN PetscErrorCode GpukitCUDAPowersStepEnd(GpukitCUDAReads *, PetscInt, Vec, Vec[], Vec[], GpukitPowersEpilogue *, PetscScalar **);
