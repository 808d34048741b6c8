/*
   The GPU path of the driven cavity (examples/cavity.c, -use_gpu): the residual and the Jacobian computed by
   CUDA kernels on device arrays, with the point functions of cavity.h (the host code runs the same ones).

   Residual: DMGlobalToLocal into the DMDA's device local vector (-dm_vec_type cuda), then one thread per owned
   grid point writes its 4 residuals into the device array of F.
   Jacobian: one thread per row writes the row's k*4 values in MATSGDIA's layout, v[(s*4 + c)*m + row], so
   consecutive threads write consecutive addresses:
     - MATSGDIACUDA: straight into the matrix, MatSGDIAGetArrayWriteCUDA()/MatSGDIARestoreArrayWriteCUDA()
       (every slot is written, 0 where the neighbour is outside the domain);
     - MATAIJCUSPARSE: one thread per row writes the row's in-domain values in COO order (CavityCOORow(): row by
       row, columns ascending). On one rank (-cavity_aij_fill auto or csr) that order is the CSR order of the
       stencil's structure, which CavityGetCSR() (cavity.c) gives the matrix and checks here (CavityCSRCheckCUDA(),
       on the device CSR arrays) once per matrix, so the kernel writes straight into the device CSR value array
       (MatSeqAIJCUSPARSEGetArrayWrite()): no COO set-up, no extra array, no scatter. Otherwise (several ranks, or
       -cavity_aij_fill coo) it writes a device vector, then MatSetValuesCOO() with that device array; the COO
       pattern is set once per matrix (CavityGetCOO() in cavity.c) in that order, so that PETSc's host set-up needs no
       sort. Either way DMCreateMatrix() builds no structure (cavity.c sets DMSetMatrixPreallocateSkip() on every
       level whose matrices are aijcusparse).
   Nothing goes through the host per Newton step. Kernels run on the stream of the current PetscDeviceContext,
   the one PETSc's CUDA vectors use.

   MG interpolation (-pc_type mg): DMDA builds its Q1 interpolation as a host MATAIJ/MAIJ and its scaling vector
   through host products. Here it is a MATSHELL whose products are CUDA kernels on the DMDA's device vectors, and
   whose scaling vector 1 ./ (P^T 1) is computed with those kernels; cavity.c's DM coarsen hook calls
   CavityDeviceInterpolationAttach() on every coarse DMDA that PCMG makes, so that DMCreateInterpolation() returns it
   where it applies (CavityInterpolationQualifies()) and DMDA's own interpolation elsewhere.
*/
#include <petscdevice_cuda.h>
#include <petscgpukit.h>
#include <petsc/private/dmimpl.h> /* DM->ops->createinterpolation, replaced on the coarse DMDAs */
#include "cavity.h"

#if defined(CAVITY_HAVE_CUDA)

  #define CAVITY_CUDA_BLOCK 256

static PetscErrorCode CavityGetStream(cudaStream_t *stream)
{
  PetscDeviceContext dctx;
  PetscDeviceType    type;
  void              *handle;

  PetscFunctionBeginUser;
  PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
  PetscCall(PetscDeviceContextGetDeviceType(dctx, &type));
  PetscCheck(type == PETSC_DEVICE_CUDA, PETSC_COMM_SELF, PETSC_ERR_SUP, "-use_gpu launches its kernels on the stream of the current PetscDeviceContext, which is of type %s, not CUDA", PetscDeviceTypes[type]);
  PetscCall(PetscDeviceContextGetStreamHandle(dctx, &handle));
  *stream = *(cudaStream_t *)handle;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CavityCheckCUDAVec(Vec v, const char *what)
{
  PetscBool flg;
  VecType   type;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)v, &flg, VECSEQCUDA, VECMPICUDA, ""));
  PetscCall(VecGetType(v, &type));
  PetscCheck(flg, PetscObjectComm((PetscObject)v), PETSC_ERR_ARG_WRONG, "-use_gpu: the %s is of type %s, not a CUDA vector; use -dm_vec_type cuda", what, type ? type : "(none)");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the DMDA's ghosted local vector of X, on the device */
static PetscErrorCode CavityLocalX(SNES snes, Vec X, DM *dm, Vec *Xl)
{
  PetscFunctionBeginUser;
  PetscCall(SNESGetDM(snes, dm));
  PetscCall(DMGetLocalVector(*dm, Xl));
  PetscCall(CavityCheckCUDAVec(*Xl, "DMDA's local vector"));
  PetscCall(DMGlobalToLocalBegin(*dm, X, INSERT_VALUES, *Xl));
  PetscCall(DMGlobalToLocalEnd(*dm, X, INSERT_VALUES, *Xl));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one thread per owned grid point p = (j - ys)*xm + (i - xs): the 4 residuals of CavityResidualPoint() */
__global__ static void CavityResidualKernel(const CavityGrid g, const CavityField *__restrict__ xl, CavityField *__restrict__ f)
{
  const PetscInt np = g.xm * g.ym;
  const PetscInt p  = (PetscInt)blockIdx.x * blockDim.x + threadIdx.x;

  if (p < np) {
    const PetscInt     i = g.xs + p % g.xm, j = g.ys + p / g.xm;
    const CavityField *nb[CAVITY_NPOINTS];
    CavityField        r;

    CavityNeighbours(&g, xl, i, j, nb);
    CavityResidualPoint(&g, i, j, nb, &r);
    f[p] = r;
  }
}

/* one thread per row of the layout: CavityLayoutRow() */
__global__ static void CavityJacobianKernel(const CavityLayout L, const CavityField *__restrict__ xl, PetscScalar *__restrict__ v)
{
  const PetscInt m   = CAVITY_DOF * L.g.xm * L.g.ym;
  const PetscInt row = (PetscInt)blockIdx.x * blockDim.x + threadIdx.x;

  if (row < m) CavityLayoutRow(&L, xl, row, v);
}

/* one thread per row: CavityCOORow() (MATAIJCUSPARSE) */
__global__ static void CavityJacobianCOOKernel(const CavityGrid g, const CavityField *__restrict__ xl, PetscScalar *__restrict__ v)
{
  const PetscInt m   = CAVITY_DOF * g.xm * g.ym;
  const PetscInt row = (PetscInt)blockIdx.x * blockDim.x + threadIdx.x;

  if (row < m) CavityCOORow(&g, xl, row, v);
}

/* one thread per row: counts the rows whose CSR structure is not the stencil's (CavityCSRRowMatches()) */
__global__ static void CavityCSRCheckKernel(const CavityGrid g, const PetscInt *__restrict__ ia, const PetscInt *__restrict__ ja, unsigned int *__restrict__ nbad)
{
  const PetscInt m   = CAVITY_DOF * g.xm * g.ym;
  const PetscInt row = (PetscInt)blockIdx.x * blockDim.x + threadIdx.x;

  if (row < m && !CavityCSRRowMatches(&g, row, ia, ja)) atomicAdd(nbad, 1u);
}

PetscErrorCode CavityCSRCheckCUDA(Mat B, const CavityGrid *g, PetscInt *nbad)
{
  const PetscInt *ia, *ja;
  const PetscInt  m = CAVITY_DOF * g->xm * g->ym;
  unsigned int   *dbad, hbad = 0;
  cudaStream_t    stream;

  PetscFunctionBeginUser;
  PetscCall(MatSeqAIJCUSPARSEGetIJ(B, PETSC_FALSE, &ia, &ja)); /* uploads the matrix if it is on the host only */
  PetscCall(CavityGetStream(&stream));
  PetscCallCUDA(cudaMalloc((void **)&dbad, sizeof(*dbad)));
  PetscCallCUDA(cudaMemsetAsync(dbad, 0, sizeof(*dbad), stream));
  if (m > 0) {
    CavityCSRCheckKernel<<<(unsigned int)((m + CAVITY_CUDA_BLOCK - 1) / CAVITY_CUDA_BLOCK), CAVITY_CUDA_BLOCK, 0, stream>>>(*g, ia, ja, dbad);
    PetscCallCUDA(cudaGetLastError());
  }
  PetscCallCUDA(cudaMemcpyAsync(&hbad, dbad, sizeof(hbad), cudaMemcpyDeviceToHost, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream));
  PetscCall(PetscLogGpuToCpu(sizeof(hbad)));
  PetscCallCUDA(cudaFree(dbad));
  PetscCall(MatSeqAIJCUSPARSERestoreIJ(B, PETSC_FALSE, &ia, &ja));
  *nbad = (PetscInt)hbad;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one thread per row: CavityDenseRow() (MATSEQDENSECUDA, one rank) */
__global__ static void CavityJacobianDenseKernel(const CavityGrid g, const CavityField *__restrict__ xl, PetscInt lda, PetscScalar *__restrict__ a)
{
  const PetscInt m   = CAVITY_DOF * g.xm * g.ym;
  const PetscInt row = (PetscInt)blockIdx.x * blockDim.x + threadIdx.x;

  if (row < m) CavityDenseRow(&g, xl, row, lda, a);
}

PetscErrorCode CavityFormFunctionCUDA(SNES snes, Vec X, Vec F, void *ctx)
{
  const CavityParams *par = (const CavityParams *)ctx;
  DM                  dm;
  Vec                 Xl;
  CavityGrid          g;
  const PetscScalar  *x;
  PetscScalar        *f;
  cudaStream_t        stream;
  PetscInt            np;

  PetscFunctionBeginUser;
  PetscCall(CavityLocalX(snes, X, &dm, &Xl));
  PetscCall(CavityCheckCUDAVec(F, "residual vector"));
  PetscCall(CavityGetGrid(dm, par, &g));
  np = g.xm * g.ym;
  PetscCall(PetscLogEventBegin(CAVITY_ResidualCUDA, X, F, 0, 0));
  PetscCall(CavityGetStream(&stream));
  PetscCall(VecCUDAGetArrayRead(Xl, &x));
  PetscCall(VecCUDAGetArrayWrite(F, &f));
  PetscCall(PetscLogGpuTimeBegin());
  if (np > 0) {
    CavityResidualKernel<<<(unsigned int)((np + CAVITY_CUDA_BLOCK - 1) / CAVITY_CUDA_BLOCK), CAVITY_CUDA_BLOCK, 0, stream>>>(g, (const CavityField *)x, (CavityField *)f);
    PetscCallCUDA(cudaGetLastError());
  }
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(84.0 * np));
  PetscCall(VecCUDARestoreArrayWrite(F, &f));
  PetscCall(VecCUDARestoreArrayRead(Xl, &x));
  PetscCall(PetscLogEventEnd(CAVITY_ResidualCUDA, X, F, 0, 0));
  PetscCall(DMRestoreLocalVector(dm, &Xl));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CavityFormJacobianCUDA(SNES snes, Vec X, Mat J, Mat B, void *ctx)
{
  const CavityParams *par = (const CavityParams *)ctx;
  DM                  dm;
  Vec                 Xl, coo = NULL;
  CavityGrid          g;
  CavityLayout        L;
  const PetscScalar  *x;
  PetscScalar        *v;
  PetscBool           issg, iscusparse, isdense, csr = PETSC_FALSE;
  cudaStream_t        stream;
  PetscInt            m;
  MatType             mtype;

  PetscFunctionBeginUser;
  PetscCall(CavityLocalX(snes, X, &dm, &Xl));
  PetscCall(CavityGetGrid(dm, par, &g));
  m = CAVITY_DOF * g.xm * g.ym;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &issg, MATSEQSGDIACUDA, MATMPISGDIACUDA, ""));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &iscusparse, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQDENSECUDA, &isdense));
  PetscCall(MatGetType(B, &mtype));
  PetscCheck(issg || iscusparse || isdense, PetscObjectComm((PetscObject)B), PETSC_ERR_SUP, "-use_gpu writes the Jacobian on the device into MATSGDIACUDA, MATAIJCUSPARSE or (one rank, e.g. -coarse_mat_type densecuda) MATSEQDENSECUDA; the matrix of the %" PetscInt_FMT " x %" PetscInt_FMT " grid is %s (see -dm_mat_type, -coarse_mat_type)", g.mx, g.my, mtype);
  PetscCall(PetscLogEventBegin(CAVITY_JacobianCUDA, B, 0, 0, 0));
  if (isdense) { /* zero, then each row's star entries; the matrix stays on the device */
    PetscInt lda;

    PetscCall(MatDenseGetLDA(B, &lda));
    PetscCall(CavityGetStream(&stream));
    PetscCall(MatDenseCUDAGetArrayWrite(B, &v));
    PetscCall(VecCUDAGetArrayRead(Xl, &x));
    PetscCall(PetscLogGpuTimeBegin());
    if (m > 0) {
      PetscCallCUDA(cudaMemsetAsync(v, 0, sizeof(PetscScalar) * (size_t)lda * (size_t)m, stream));
      CavityJacobianDenseKernel<<<(unsigned int)((m + CAVITY_CUDA_BLOCK - 1) / CAVITY_CUDA_BLOCK), CAVITY_CUDA_BLOCK, 0, stream>>>(g, (const CavityField *)x, lda, v);
      PetscCallCUDA(cudaGetLastError());
    }
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(VecCUDARestoreArrayRead(Xl, &x));
    PetscCall(MatDenseCUDARestoreArrayWrite(B, &v));
    PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
    PetscCall(PetscLogEventEnd(CAVITY_JacobianCUDA, B, 0, 0, 0));
    if (J != B) {
      PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));
    }
    PetscCall(DMRestoreLocalVector(dm, &Xl));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (issg) {
    PetscCall(CavitySGDIALayout(B, &g, &L));
    PetscCall(MatSGDIAGetArrayWriteCUDA(B, &v));
  } else {
    PetscCall(CavityGetCSR(dm, B, par->fill, PETSC_TRUE, &csr));
    if (csr) PetscCall(MatSeqAIJCUSPARSEGetArrayWrite(B, &v)); /* every entry is written below */
    else {
      PetscCall(CavityGetCOO(dm, B, PETSC_TRUE, &coo));
      PetscCall(VecCUDAGetArrayWrite(coo, &v));
    }
  }
  PetscCall(CavityGetStream(&stream));
  PetscCall(VecCUDAGetArrayRead(Xl, &x));
  PetscCall(PetscLogGpuTimeBegin());
  if (m > 0) {
    const unsigned int nb = (unsigned int)((m + CAVITY_CUDA_BLOCK - 1) / CAVITY_CUDA_BLOCK);

    if (issg) CavityJacobianKernel<<<nb, CAVITY_CUDA_BLOCK, 0, stream>>>(L, (const CavityField *)x, v);
    else CavityJacobianCOOKernel<<<nb, CAVITY_CUDA_BLOCK, 0, stream>>>(g, (const CavityField *)x, v); /* COO order = CSR order (csr) */
    PetscCallCUDA(cudaGetLastError());
  }
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(VecCUDARestoreArrayRead(Xl, &x));
  if (issg) {
    PetscCall(MatSGDIARestoreArrayWriteCUDA(B, &v)); /* the matrix stays assembled; its device values are current */
  } else if (csr) {
    PetscCall(MatSeqAIJCUSPARSERestoreArrayWrite(B, &v)); /* likewise */
  } else {
    const PetscScalar *cv;

    PetscCall(VecCUDARestoreArrayWrite(coo, &v));
    PetscCall(VecCUDAGetArrayRead(coo, &cv));
    PetscCall(MatSetValuesCOO(B, cv, INSERT_VALUES));
    PetscCall(VecCUDARestoreArrayRead(coo, &cv));
  }
  PetscCall(PetscLogEventEnd(CAVITY_JacobianCUDA, B, 0, 0, 0));
  if (J != B) {
    PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(DMRestoreLocalVector(dm, &Xl));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- MG interpolation on the device --------------------------------------------------------------------------

   P (fine x coarse, 4 dof per point) is DMDA's Q1 interpolation for refinement ratio 2 in x and y, non-periodic:
   fine point (i, j) = sum of coarse points (I, J), (I+1, J), (I, J+1), (I+1, J+1), I = i/2, J = j/2, with weights
   (1-x)(1-y), x(1-y), (1-x)y, xy, x = (i - 2I)/2, y = (j - 2J)/2; zero weights are skipped, the others summed in
   ascending column order as in DMDA's AIJ row (weights 1, 1/2, 1/4: every product is exact, so MatMult matches
   DMDA's matrix to the last bit on one rank). P^T gathers: coarse (I, J) sums the fine points (2I+a, 2J+b),
   a, b in {-1, 0, 1}, inside the domain, with weight w(a) w(b), w(0) = 1, w(+-1) = 1/2; no atomics, so the result
   is deterministic. One thread per output entry (point and component), CavityInterpEntry() and
   CavityInterpTransposeEntry() of cavity.h (host and device share them). The input is the DMDA's ghosted local
   vector (DMGlobalToLocal() on device vectors) on several ranks, the global vector's array on one rank. */

typedef struct {
  DM              dac, daf;     /* coarse and fine DMDA (referenced) */
  CavityInterpBox mult, trans;  /* MatMult, MatMultTranspose */
  PetscBool       local;        /* inputs through the ghosted local vector (several ranks) */
  PetscLogDouble  nzmult, nztr; /* nonzeros this rank's product touches */
} CavityInterp;

/* one thread per output entry: CavityInterpEntry() / CavityInterpTransposeEntry() of cavity.h */
template <bool ADD>
__global__ static void CavityInterpMultKernel(const CavityInterpBox b, const PetscScalar *__restrict__ xc, PetscScalar *__restrict__ yf)
{
  const PetscInt t = (PetscInt)blockIdx.x * blockDim.x + threadIdx.x;

  if (t < CAVITY_DOF * b.xm * b.ym) {
    const PetscScalar s = CavityInterpEntry(&b, xc, t);

    yf[t] = ADD ? yf[t] + s : s;
  }
}

template <bool ADD>
__global__ static void CavityInterpMultTransposeKernel(const CavityInterpBox b, const PetscScalar *__restrict__ xf, PetscScalar *__restrict__ yc)
{
  const PetscInt t = (PetscInt)blockIdx.x * blockDim.x + threadIdx.x;

  if (t < CAVITY_DOF * b.xm * b.ym) {
    const PetscScalar s = CavityInterpTransposeEntry(&b, xf, t);

    yc[t] = ADD ? yc[t] + s : s;
  }
}

/* y = P x (transpose false) or P^T x, plus z when z is given (z may be y) */
static PetscErrorCode CavityInterpApply(Mat P, Vec x, Vec z, Vec y, PetscBool transpose)
{
  CavityInterp          *ip;
  const CavityInterpBox *b;
  DM                     din;
  Vec                    xin, xl = NULL;
  const PetscScalar     *xa;
  PetscScalar           *ya;
  cudaStream_t           stream;
  PetscInt               n;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(P, &ip));
  b   = transpose ? &ip->trans : &ip->mult;
  din = transpose ? ip->daf : ip->dac;
  n   = CAVITY_DOF * b->xm * b->ym;
  PetscCall(PetscLogEventBegin(CAVITY_InterpCUDA, P, x, y, 0));
  if (z && z != y) PetscCall(VecCopy(z, y));
  xin = x;
  if (ip->local) {
    PetscCall(DMGetLocalVector(din, &xl));
    PetscCall(DMGlobalToLocalBegin(din, x, INSERT_VALUES, xl));
    PetscCall(DMGlobalToLocalEnd(din, x, INSERT_VALUES, xl));
    xin = xl;
  }
  PetscCall(CavityGetStream(&stream));
  PetscCall(VecCUDAGetArrayRead(xin, &xa));
  if (z) PetscCall(VecCUDAGetArray(y, &ya));
  else PetscCall(VecCUDAGetArrayWrite(y, &ya));
  PetscCall(PetscLogGpuTimeBegin());
  if (n > 0) {
    const unsigned int nb = (unsigned int)((n + CAVITY_CUDA_BLOCK - 1) / CAVITY_CUDA_BLOCK);

    if (transpose) {
      if (z) CavityInterpMultTransposeKernel<true><<<nb, CAVITY_CUDA_BLOCK, 0, stream>>>(*b, xa, ya);
      else CavityInterpMultTransposeKernel<false><<<nb, CAVITY_CUDA_BLOCK, 0, stream>>>(*b, xa, ya);
    } else {
      if (z) CavityInterpMultKernel<true><<<nb, CAVITY_CUDA_BLOCK, 0, stream>>>(*b, xa, ya);
      else CavityInterpMultKernel<false><<<nb, CAVITY_CUDA_BLOCK, 0, stream>>>(*b, xa, ya);
    }
    PetscCallCUDA(cudaGetLastError());
  }
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(2.0 * (transpose ? ip->nztr : ip->nzmult) + (z ? n : 0)));
  if (z) PetscCall(VecCUDARestoreArray(y, &ya));
  else PetscCall(VecCUDARestoreArrayWrite(y, &ya));
  PetscCall(VecCUDARestoreArrayRead(xin, &xa));
  if (xl) PetscCall(DMRestoreLocalVector(din, &xl));
  PetscCall(PetscLogEventEnd(CAVITY_InterpCUDA, P, x, y, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CavityInterpMult(Mat P, Vec x, Vec y)
{
  PetscFunctionBeginUser;
  PetscCall(CavityInterpApply(P, x, NULL, y, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CavityInterpMultAdd(Mat P, Vec x, Vec z, Vec y)
{
  PetscFunctionBeginUser;
  PetscCall(CavityInterpApply(P, x, z, y, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CavityInterpMultTranspose(Mat P, Vec x, Vec y)
{
  PetscFunctionBeginUser;
  PetscCall(CavityInterpApply(P, x, NULL, y, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CavityInterpMultTransposeAdd(Mat P, Vec x, Vec z, Vec y)
{
  PetscFunctionBeginUser;
  PetscCall(CavityInterpApply(P, x, z, y, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CavityInterpDestroy(Mat P)
{
  CavityInterp *ip;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(P, &ip));
  PetscCall(DMDestroy(&ip->dac));
  PetscCall(DMDestroy(&ip->daf));
  PetscCall(PetscFree(ip));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* does [lo, hi] (lo > hi: empty) lie in the box [s, s + m)? */
static PetscBool CavityInBox(PetscInt lo, PetscInt hi, PetscInt s, PetscInt m)
{
  return (PetscBool)(lo > hi || (lo >= s && hi < s + m));
}

PetscErrorCode CavityInterpolationQualifies(DM dac, DM daf, PetscBool *ok, char why[], size_t len)
{
  PetscBool             isda[2] = {PETSC_FALSE, PETSC_FALSE}, cuda[2];
  PetscInt              dim[2], M[2], N[2], pm[2], pn[2], dof[2], sw[2];
  DMBoundaryType        bx[2], by[2];
  DMDAStencilType       st[2];
  DMDAInterpolationType itype;
  PetscMPIInt           size[2];
  DMDALocalInfo         f, c;
  VecType               vtype;
  int                   lok, gok;
  DM                    dm[2] = {dac, daf};

  PetscFunctionBeginUser;
  *ok = PETSC_FALSE;
  for (PetscInt k = 0; k < 2; k++) {
    PetscCall(PetscObjectTypeCompare((PetscObject)dm[k], DMDA, &isda[k]));
    if (!isda[k]) break;
    PetscCall(DMDAGetInfo(dm[k], &dim[k], &M[k], &N[k], NULL, &pm[k], &pn[k], NULL, &dof[k], &sw[k], &bx[k], &by[k], NULL, &st[k]));
    PetscCall(DMGetVecType(dm[k], &vtype));
    PetscCall(PetscStrInList(vtype ? vtype : "", "cuda,seqcuda,mpicuda", ',', &cuda[k]));
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)dm[k]), &size[k]));
  }
  if (!isda[0] || !isda[1]) {
    PetscCall(PetscSNPrintf(why, len, "not a pair of DMDAs"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(DMDAGetInterpolationType(dac, &itype));
  if (dim[0] != 2 || dim[1] != 2) PetscCall(PetscSNPrintf(why, len, "the DMDAs are %" PetscInt_FMT "-D and %" PetscInt_FMT "-D, not 2-D", dim[0], dim[1]));
  else if (dof[0] != CAVITY_DOF || dof[1] != CAVITY_DOF || sw[0] != 1 || sw[1] != 1) PetscCall(PetscSNPrintf(why, len, "dof %" PetscInt_FMT "/%" PetscInt_FMT " and stencil width %" PetscInt_FMT "/%" PetscInt_FMT ", not %d and 1", dof[0], dof[1], sw[0], sw[1], CAVITY_DOF));
  else if (bx[0] != DM_BOUNDARY_NONE || by[0] != DM_BOUNDARY_NONE || bx[1] != DM_BOUNDARY_NONE || by[1] != DM_BOUNDARY_NONE) PetscCall(PetscSNPrintf(why, len, "a DMDA has non-default (periodic or ghosted) boundaries"));
  else if (itype != DMDA_Q1) PetscCall(PetscSNPrintf(why, len, "the DMDA interpolation type is %s", itype == DMDA_Q0 ? "Q0, not Q1" : "not Q1"));
  else if (M[1] - 1 != 2 * (M[0] - 1) || N[1] - 1 != 2 * (N[0] - 1)) PetscCall(PetscSNPrintf(why, len, "the refinement ratio (%" PetscInt_FMT " x %" PetscInt_FMT " points to %" PetscInt_FMT " x %" PetscInt_FMT ") is not 2 in x and y", M[0], N[0], M[1], N[1]));
  else if (size[0] != size[1]) PetscCall(PetscSNPrintf(why, len, "the coarse DMDA lives on %d ranks, the fine one on %d", size[0], size[1]));
  else if (!cuda[0] || !cuda[1]) PetscCall(PetscSNPrintf(why, len, "the DMDAs' vectors are not CUDA vectors (-dm_vec_type cuda)"));
  else if ((st[0] == DMDA_STENCIL_STAR || st[1] == DMDA_STENCIL_STAR) && ((pm[0] > 1 && pn[0] > 1) || (pm[1] > 1 && pn[1] > 1)))
    PetscCall(PetscSNPrintf(why, len, "star stencil on a %" PetscInt_FMT " x %" PetscInt_FMT " grid of ranks: the products read diagonal ghost points, which a star stencil's DMGlobalToLocal() does not fill", pm[1], pn[1]));
  else {
    /* MatMult: fine (i, j) reads coarse i/2 .. (i+1)/2 from the coarse ghosted box; MatMultTranspose: coarse (I, J)
       reads fine 2I-1 .. 2I+1 (clipped to the grid) from the fine ghosted box. With a star stencil the ranks form a
       1 x n or m x 1 grid (above), so every ghost point differs from an owned one in one direction only, and is filled. */
    PetscCall(DMDAGetLocalInfo(dac, &c));
    PetscCall(DMDAGetLocalInfo(daf, &f));
    lok = 1;
    if (f.xm > 0 && f.ym > 0) {
      lok = lok && CavityInBox(f.xs / 2, (f.xs + f.xm) / 2, c.gxs, c.gxm) && CavityInBox(f.ys / 2, (f.ys + f.ym) / 2, c.gys, c.gym);
    }
    if (c.xm > 0 && c.ym > 0) {
      lok = lok && CavityInBox(PetscMax(2 * c.xs - 1, 0), PetscMin(2 * (c.xs + c.xm - 1) + 1, f.mx - 1), f.gxs, f.gxm);
      lok = lok && CavityInBox(PetscMax(2 * c.ys - 1, 0), PetscMin(2 * (c.ys + c.ym - 1) + 1, f.my - 1), f.gys, f.gym);
    }
    PetscCallMPI(MPIU_Allreduce(&lok, &gok, 1, MPI_INT, MPI_MIN, PetscObjectComm((PetscObject)daf)));
    if (!gok) PetscCall(PetscSNPrintf(why, len, "on some rank the ghost regions do not hold the neighbours that the products read (coarse i/2..(i+1)/2 of fine point i, fine 2I-1..2I+1 of coarse point I)"));
    else {
      *ok = PETSC_TRUE;
      PetscCall(PetscSNPrintf(why, len, "Q1, ratio 2, dof %d", CAVITY_DOF));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* nonzeros of this rank's rows of P (transpose false) or P^T, per component: products of per-direction counts */
static PetscLogDouble CavityInterpNonzeros(PetscInt s, PetscInt m, PetscInt mf, PetscBool transpose)
{
  PetscLogDouble n = 0;

  for (PetscInt i = s; i < s + m; i++) {
    if (transpose) n += 1 + (2 * i - 1 >= 0) + (2 * i + 1 < mf);
    else n += 1 + (i % 2);
  }
  return n;
}

PetscErrorCode CavityCreateInterpolationCUDA(DM dac, DM daf, Mat *P, Vec *rscale)
{
  CavityInterp *ip;
  DMDALocalInfo f, c;
  PetscBool     ok;
  char          why[256];
  PetscMPIInt   size;

  PetscFunctionBeginUser;
  PetscCall(CavityInterpolationQualifies(dac, daf, &ok, why, sizeof(why)));
  PetscCheck(ok, PetscObjectComm((PetscObject)daf), PETSC_ERR_SUP, "The device interpolation does not apply to these DMDAs: %s; use DMDA's own (DMCreateInterpolation() on a DMDA without the cavity's coarsen hook, or -cavity_device_interpolation 0)", why);
  PetscCall(DMDAGetLocalInfo(dac, &c));
  PetscCall(DMDAGetLocalInfo(daf, &f));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)daf), &size));
  PetscCall(PetscNew(&ip));
  PetscCall(PetscObjectReference((PetscObject)dac));
  PetscCall(PetscObjectReference((PetscObject)daf));
  ip->dac   = dac;
  ip->daf   = daf;
  ip->local = (PetscBool)(size > 1); /* one rank, no periodic boundary: the ghosted box is the owned box */
  ip->mult  = CavityInterpBox{f.mx, f.my, f.xs, f.ys, f.xm, f.ym, c.gxs, c.gys, c.gxm};
  ip->trans = CavityInterpBox{f.mx, f.my, c.xs, c.ys, c.xm, c.ym, f.gxs, f.gys, f.gxm};
  ip->nzmult = CAVITY_DOF * CavityInterpNonzeros(f.xs, f.xm, f.mx, PETSC_FALSE) * CavityInterpNonzeros(f.ys, f.ym, f.my, PETSC_FALSE);
  ip->nztr   = CAVITY_DOF * CavityInterpNonzeros(c.xs, c.xm, f.mx, PETSC_TRUE) * CavityInterpNonzeros(c.ys, c.ym, f.my, PETSC_TRUE);
  PetscCall(MatCreateShell(PetscObjectComm((PetscObject)daf), CAVITY_DOF * f.xm * f.ym, CAVITY_DOF * c.xm * c.ym, CAVITY_DOF * f.mx * f.my, CAVITY_DOF * c.mx * c.my, ip, P));
  PetscCall(MatShellSetManageScalingShifts(*P)); /* the products below are the whole operator */
  PetscCall(MatShellSetOperation(*P, MATOP_MULT, (void (*)(void))CavityInterpMult));
  PetscCall(MatShellSetOperation(*P, MATOP_MULT_ADD, (void (*)(void))CavityInterpMultAdd));
  PetscCall(MatShellSetOperation(*P, MATOP_MULT_TRANSPOSE, (void (*)(void))CavityInterpMultTranspose));
  PetscCall(MatShellSetOperation(*P, MATOP_MULT_TRANSPOSE_ADD, (void (*)(void))CavityInterpMultTransposeAdd));
  PetscCall(MatShellSetOperation(*P, MATOP_DESTROY, (void (*)(void))CavityInterpDestroy));
  PetscCall(MatShellSetVecType(*P, VECCUDA));
  PetscCall(PetscObjectSetName((PetscObject)*P, "CavityInterpolationCUDA"));
  if (rscale) { /* 1 ./ (P^T 1), as DMCreateInterpolationScale() makes it, on the device */
    Vec ones;

    PetscCall(DMCreateGlobalVector(dac, rscale));
    PetscCall(DMGetGlobalVector(daf, &ones));
    PetscCall(VecSet(ones, 1.0));
    PetscCall(MatMultTranspose(*P, ones, *rscale));
    PetscCall(DMRestoreGlobalVector(daf, &ones));
    PetscCall(VecReciprocal(*rscale));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the coarse DMDA's DMCreateInterpolation(): the device interpolation where it applies, else DMDA's own (the
   function that CavityDeviceInterpolationAttach() replaced) */
static PetscErrorCode CavityCreateInterpolation_DM(DM dac, DM daf, Mat *P, Vec *rscale)
{
  PetscErrorCode (*dacreate)(DM, DM, Mat *, Vec *) = NULL;
  PetscBool       ok;
  char            why[256];
  PetscInt        Mc, Nc, Mf, Nf;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(dac, NULL, &Mc, &Nc, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetInfo(daf, NULL, &Mf, &Nf, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(CavityInterpolationQualifies(dac, daf, &ok, why, sizeof(why)));
  if (ok) {
    PetscCall(PetscInfo(dac, "Cavity: MG interpolation %" PetscInt_FMT "x%" PetscInt_FMT " -> %" PetscInt_FMT "x%" PetscInt_FMT " built on the device (MATSHELL, CUDA kernels; %s)\n", Mc, Nc, Mf, Nf, why));
    PetscCall(CavityCreateInterpolationCUDA(dac, daf, P, rscale));
  } else {
    PetscCall(PetscObjectQueryFunction((PetscObject)dac, "CavityDACreateInterpolation_C", &dacreate));
    PetscCheck(dacreate, PetscObjectComm((PetscObject)dac), PETSC_ERR_PLIB, "The coarse DMDA lost DMDA's own DMCreateInterpolation()");
    PetscCall(PetscInfo(dac, "Cavity: MG interpolation %" PetscInt_FMT "x%" PetscInt_FMT " -> %" PetscInt_FMT "x%" PetscInt_FMT ": DMDA's own (host) interpolation, the device one does not apply: %s\n", Mc, Nc, Mf, Nf, why));
    PetscCall((*dacreate)(dac, daf, P, rscale));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CavityDeviceInterpolationAttach(DM coarse)
{
  PetscBool isda;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)coarse, DMDA, &isda));
  if (!isda) {
    PetscCall(PetscInfo(coarse, "Cavity: the coarse DM is not a DMDA: its own interpolation is used\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (coarse->ops->createinterpolation == CavityCreateInterpolation_DM) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(coarse->ops->createinterpolation, PetscObjectComm((PetscObject)coarse), PETSC_ERR_PLIB, "The coarse DMDA has no DMCreateInterpolation()");
  PetscCall(PetscObjectComposeFunction((PetscObject)coarse, "CavityDACreateInterpolation_C", coarse->ops->createinterpolation));
  coarse->ops->createinterpolation = CavityCreateInterpolation_DM;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif
