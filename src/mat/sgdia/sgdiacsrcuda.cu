/*
   MATSEQSGDIACUDA's device CSR ("GpukitMatGetDeviceCSR_C", protocol in src/mat/utils/gpukitmat.h): the local rows as
   a CSR structure on the device, built by the kernels of sgdiacsrkernels.cu from the device values (no host copy of
   the matrix), so that PCGSAI and the other users of a device CSR read an SG-DIA matrix directly. One rank only
   (32-bit indices, the local rows are all rows). The structure depends on the grid alone and is built once per
   layout; the values are refilled when the matrix's object state has changed since the last fill. Both stay until
   the matrix is destroyed (about 12 bytes per entry).
*/
#include "sgdiacudaimpl.h"
#include "sgdiacsrkernels.h"

#if defined(GPUKIT_SGDIACUDA_AVAILABLE)

PetscLogEvent MAT_SGDIA_CSRCUDA; /* "SGDIACSRCUDA", registered with the types (sgdiacuda.cu) */

PetscErrorCode SGDIACUDACSRFree_Private(Mat_SGDIACUDA *cu)
{
  PetscFunctionBegin;
  if (cu->csr_rowptr) PetscCallCUDA(cudaFree(cu->csr_rowptr));
  if (cu->csr_colidx) PetscCallCUDA(cudaFree(cu->csr_colidx));
  if (cu->csr_val) PetscCallCUDA(cudaFree(cu->csr_val));
  cu->csr_rowptr = cu->csr_colidx = NULL;
  cu->csr_val    = NULL;
  cu->csr_m = cu->csr_nnz = 0;
  cu->csr_filled          = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the entries on the host, from the grid alone: dof^2 times, for each stencil point, the number of grid points whose
   neighbour through it is in the domain and reached canonically (the count of sgdiacsrkernels.h, dimension by
   dimension: the conditions are per dimension) */
static PetscCount SGDIACUDACSREntries(const Mat_SGDIA *sg)
{
  PetscCount n = 0;

  for (PetscInt s = 0; s < sg->k; s++) {
    PetscCount cnt = 1;
    for (PetscInt d = 0; d < 3; d++) {
      const PetscInt e = sg->delta[3 * s + d], M = sg->M[d];
      if (sg->bd[d] == DM_BOUNDARY_PERIODIC) {
        PetscInt rep = ((e % M) + M) % M;
        if (rep > sg->sw) rep -= M;
        cnt *= rep == e ? M : 0;
      } else cnt *= PetscMax(M - PetscAbsInt(e), 0);
    }
    n += cnt;
  }
  return n * sg->dof * sg->dof;
}

/* the structure (rowptr, and room for colidx and val) for the current layout */
static PetscErrorCode SGDIACUDACSRStructure_Private(Mat A, cudaStream_t stream)
{
  Mat_SGDIA          *sg  = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA      *cu  = (Mat_SGDIACUDA *)sg->spptr;
  const PetscCount    nnz = SGDIACUDACSREntries(sg);
  GpukitSGDIAMultArgs args;
  int                *counts;
  void               *work;
  size_t              workbytes = 0;

  PetscFunctionBegin;
  PetscCall(SGDIACUDACSRFree_Private(cu));
  PetscCheck(A->cmap->N < PETSC_INT32_MAX && nnz < PETSC_INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "The device CSR of MATSGDIACUDA has 32-bit indices; this matrix has %" PetscInt_FMT " columns and %" PetscCount_FMT " entries", A->cmap->N, nnz);
  PetscCall(SGDIACUDASetArgs_Private(A, PETSC_FALSE, &args));
  PetscCallCUDA(cudaMalloc((void **)&cu->csr_rowptr, ((size_t)sg->m + 1) * sizeof(int)));
  PetscCallCUDA(cudaMalloc((void **)&cu->csr_colidx, (size_t)PetscMax(nnz, 1) * sizeof(int)));
  PetscCallCUDA(cudaMalloc((void **)&cu->csr_val, (size_t)PetscMax(nnz, 1) * sizeof(PetscScalar)));
  PetscCallCUDA(cudaMalloc((void **)&counts, (size_t)PetscMax(sg->m, 1) * sizeof(int)));
  PetscCallCUDA(GpukitSGDIACSRScanCUDA((long long)sg->m, counts, cu->csr_rowptr, NULL, &workbytes, stream));
  PetscCallCUDA(cudaMalloc(&work, PetscMax(workbytes, (size_t)1)));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitSGDIACSRCountCUDA(&args, counts, (int)cu->block, stream));
  PetscCallCUDA(GpukitSGDIACSRScanCUDA((long long)sg->m, counts, cu->csr_rowptr, work, &workbytes, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCallCUDA(cudaStreamSynchronize(stream));
  PetscCallCUDA(cudaFree(work));
  PetscCallCUDA(cudaFree(counts));
  if (PetscDefined(USE_DEBUG)) { /* the host's count must be the kernels' */
    int last;
    PetscCallCUDA(cudaMemcpy(&last, cu->csr_rowptr + sg->m, sizeof(int), cudaMemcpyDeviceToHost));
    PetscCall(PetscLogGpuToCpu(sizeof(int)));
    PetscCheck((PetscCount)last == nnz, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSGDIACUDA device CSR: the kernels count %d entries, the grid %" PetscCount_FMT, last, nnz);
  }
  cu->csr_m   = sg->m;
  cu->csr_nnz = (PetscInt)nnz;
  PetscCall(PetscInfo(A, "Device CSR of the %" PetscInt_FMT " local rows: %" PetscInt_FMT " entries (%" PetscCount_FMT " stored values)\n", sg->m, cu->csr_nnz, sg->nv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* "GpukitMatGetDeviceCSR_C" of MATSEQSGDIACUDA (composed only while on the device, one rank) */
PetscErrorCode MatGetDeviceCSR_SeqSGDIACUDA(Mat A, GpukitDeviceCSR *csr)
{
  Mat_SGDIA       *sg = (Mat_SGDIA *)A->data;
  Mat_SGDIACUDA   *cu = (Mat_SGDIACUDA *)sg->spptr;
  PetscMPIInt      size;
  PetscObjectState state;
  cudaStream_t     stream;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCheck(size == 1, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "The device CSR of MATSGDIACUDA is for one rank; this matrix has %d", size);
  PetscCheck(sg->da && sg->k > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "MATSGDIACUDA matrix is not set up: create it with DMCreateMatrix() on a DMDA, or call MatSetDM() and MatSetUp()");
  PetscCall(SGDIACUDACopyToGPU_Private(A)); /* the device values, uploaded when only the host has them */
  PetscCall(GpukitCUDAGetStream(SGDIACUDA_WHO, &stream));
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (!cu->csr_rowptr || cu->csr_m != sg->m || !cu->csr_filled || cu->csr_state != state) {
    GpukitSGDIAMultArgs args;

    PetscCall(PetscLogEventBegin(MAT_SGDIA_CSRCUDA, A, 0, 0, 0));
    if (!cu->csr_rowptr || cu->csr_m != sg->m) PetscCall(SGDIACUDACSRStructure_Private(A, stream));
    PetscCall(SGDIACUDASetArgs_Private(A, PETSC_FALSE, &args));
    PetscCall(PetscLogGpuTimeBegin());
    PetscCallCUDA(GpukitSGDIACSRFillCUDA(&args, cu->csr_rowptr, cu->csr_colidx, cu->csr_val, (int)cu->block, stream));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(PetscLogEventEnd(MAT_SGDIA_CSRCUDA, A, 0, 0, 0));
    cu->csr_state  = state;
    cu->csr_filled = PETSC_TRUE;
  }
  csr->m      = A->rmap->n;
  csr->n      = A->cmap->n;
  csr->nnz    = cu->csr_nnz;
  csr->rowptr = cu->csr_rowptr;
  csr->colidx = cu->csr_colidx;
  csr->val    = cu->csr_val;
  csr->ctx    = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* "GpukitMatRestoreDeviceCSR_C": nothing to free, the CSR is kept for the next call */
PetscErrorCode MatRestoreDeviceCSR_SeqSGDIACUDA(Mat A, GpukitDeviceCSR *csr)
{
  PetscFunctionBegin;
  (void)A;
  (void)csr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif /* GPUKIT_SGDIACUDA_AVAILABLE */
