/*
   KSPCACG on CUDA vectors: the Gram matrices of an outer iteration by one device pass (cacgkernels.cu) and one
   device-to-host copy, instead of one VecMDot (each with its own copy and synchronisation) per basis vector.
   Built only against a PETSc with CUDA; cacg.c calls it when the vectors of the inner products are VECCUDA.
*/
#include <petscdevice_cuda.h>
#include "gpukitcuda.h"
#include "cacgimpl.h"
#include "cacgkernels.h"

/* The local sums of the np inner products pa[p] . pb[p] into local[] (host), when every vector is a CUDA vector
   (done = PETSC_TRUE); otherwise nothing (done = PETSC_FALSE). */
PetscErrorCode CACGGramCUDA_Private(KSP ksp, PetscInt np, const Vec pa[], const Vec pb[], PetscScalar local[], PetscBool *done)
{
  KSP_CACG          *cg = (KSP_CACG *)ksp->data;
  GpukitCACGGramArgs args;
  Vec                uniq[GPUKIT_CACG_GRAM_MAX_VECS];
  const PetscScalar *arr[GPUKIT_CACG_GRAM_MAX_VECS];
  PetscInt           nu = 0, nloc;
  long long          need;
  cudaStream_t       stream;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  if (!PetscDefined(USE_REAL_DOUBLE) || PetscDefined(USE_COMPLEX) || np > GPUKIT_CACG_GRAM_MAX_PAIRS) PetscFunctionReturn(PETSC_SUCCESS); /* the kernel is for real double */
  for (PetscInt p = 0; p < np; p++) {
    Vec v[2] = {pa[p], pb[p]};
    for (PetscInt t = 0; t < 2; t++) {
      PetscInt u = 0;
      while (u < nu && uniq[u] != v[t]) u++;
      if (u == nu) {
        PetscBool iscuda;
        PetscCall(PetscObjectTypeCompareAny((PetscObject)v[t], &iscuda, VECSEQCUDA, VECMPICUDA, ""));
        if (!iscuda || nu == GPUKIT_CACG_GRAM_MAX_VECS) PetscFunctionReturn(PETSC_SUCCESS);
        uniq[nu++] = v[t];
      }
      if (t == 0) args.a[p] = (unsigned char)u;
      else args.b[p] = (unsigned char)u;
    }
  }
  PetscCall(PetscLogEventBegin(KSP_CACG_GramCUDA, ksp, 0, 0, 0));
  PetscCall(VecGetLocalSize(uniq[0], &nloc));
  args.n      = nloc;
  args.nvec   = (int)nu;
  args.npairs = (int)np;
  for (PetscInt u = 0; u < nu; u++) {
    PetscCall(VecCUDAGetArrayRead(uniq[u], &arr[u]));
    args.v[u] = arr[u];
  }
  need = GpukitCACGGramWorkSize(&args);
  if (need > cg->gramworksize) {
    if (cg->gramwork) PetscCallCUDA(cudaFree(cg->gramwork));
    cg->gramwork = NULL;
    PetscCallCUDA(cudaMalloc(&cg->gramwork, (size_t)need * sizeof(double)));
    cg->gramworksize = need;
  }
  PetscCall(GpukitCUDAGetStream("KSPCACG launches its Gram kernel", &stream));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUDA(GpukitCACGGramCUDA(&args, (double *)cg->gramwork, (double *)local, stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuToCpu(np * sizeof(PetscScalar)));
  PetscCall(PetscLogGpuFlops(2.0 * np * nloc));
  for (PetscInt u = 0; u < nu; u++) PetscCall(VecCUDARestoreArrayRead(uniq[u], &arr[u]));
  PetscCall(PetscLogEventEnd(KSP_CACG_GramCUDA, ksp, 0, 0, 0));
  *done = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CACGGramCUDAFree_Private(KSP ksp)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  if (cg->gramwork) PetscCallCUDA(cudaFree(cg->gramwork));
  cg->gramwork     = NULL;
  cg->gramworksize = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}
