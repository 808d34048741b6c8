/*
   The GPU path of the driven cavity (examples/cavity.c, -use_gpu): the residual and the Jacobian computed by
   CUDA kernels on device arrays, with the point functions of cavity.h (the host code runs the same ones).

   Residual: DMGlobalToLocal into the DMDA's device local vector (-dm_vec_type cuda), then one thread per owned
   grid point writes its 4 residuals into the device array of F.
   Jacobian: one thread per row writes the row's k*4 values in MATSGDIA's layout, v[(s*4 + c)*m + row], so
   consecutive threads write consecutive addresses:
     - MATSGDIACUDA: straight into the matrix, MatSGDIAGetArrayWriteCUDA()/MatSGDIARestoreArrayWriteCUDA()
       (every slot is written, 0 where the neighbour is outside the domain);
     - MATAIJCUSPARSE: into a device vector of COO values (the COO pattern is set once per matrix, CavityGetCOO()
       in cavity.c), then MatSetValuesCOO() with that device array.
   Nothing goes through the host per Newton step. Kernels run on the stream of the current PetscDeviceContext,
   the one PETSc's CUDA vectors use.
*/
#include <petscdevice_cuda.h>
#include <petscgpukit.h>
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
  PetscBool           issg, iscusparse;
  cudaStream_t        stream;
  PetscInt            m;
  MatType             mtype;

  PetscFunctionBeginUser;
  PetscCall(CavityLocalX(snes, X, &dm, &Xl));
  PetscCall(CavityGetGrid(dm, par, &g));
  m = CAVITY_DOF * g.xm * g.ym;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &issg, MATSEQSGDIACUDA, MATMPISGDIACUDA, ""));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &iscusparse, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
  PetscCall(MatGetType(B, &mtype));
  PetscCheck(issg || iscusparse, PetscObjectComm((PetscObject)B), PETSC_ERR_SUP, "-use_gpu writes the Jacobian on the device into MATSGDIACUDA or MATAIJCUSPARSE; the matrix of the %" PetscInt_FMT " x %" PetscInt_FMT " grid is %s (see -dm_mat_type, -coarse_mat_type)", g.mx, g.my, mtype);
  PetscCall(PetscLogEventBegin(CAVITY_JacobianCUDA, B, 0, 0, 0));
  if (issg) {
    PetscCall(CavitySGDIALayout(B, &g, &L));
    PetscCall(MatSGDIAGetArrayWriteCUDA(B, &v));
  } else {
    L.g = g;
    L.k = CAVITY_NPOINTS;
    for (PetscInt s = 0; s < CAVITY_NPOINTS; s++) L.slot[s] = s;
    PetscCall(CavityGetCOO(dm, B, PETSC_TRUE, &coo));
    PetscCall(VecCUDAGetArrayWrite(coo, &v));
  }
  PetscCall(CavityGetStream(&stream));
  PetscCall(VecCUDAGetArrayRead(Xl, &x));
  PetscCall(PetscLogGpuTimeBegin());
  if (m > 0) {
    CavityJacobianKernel<<<(unsigned int)((m + CAVITY_CUDA_BLOCK - 1) / CAVITY_CUDA_BLOCK), CAVITY_CUDA_BLOCK, 0, stream>>>(L, (const CavityField *)x, v);
    PetscCallCUDA(cudaGetLastError());
  }
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(VecCUDARestoreArrayRead(Xl, &x));
  if (issg) {
    PetscCall(MatSGDIARestoreArrayWriteCUDA(B, &v)); /* the matrix stays assembled; its device values are current */
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

#endif
