static const char help[] = "MATSGDIACUDA against the host MATSGDIA on one DMDA: MatMult, MatMultAdd, MatGetDiagonal, re-upload\n"
                           "after MatScale and MatAXPY, MatConvert both ways, MatBindToCPU, results in device memory.\n"
                           "  -dim <1,2,3> -dof <d> -stencil <star,box> -sw <w> -bx/-by/-bz <none,periodic> -n <points per dimension>\n"
                           "  -tol <relative tolerance, 1e-13>\n";

/*
   Both matrices get the same random values through MatSetValuesStencil(). The host matrix works on host
   vectors (MatCreateVecs() of MATSGDIA), the device one on VECCUDA vectors (MatCreateVecs() of MATSGDIACUDA);
   every check compares max |y - yref| / max |yref| over all ranks and fails above -tol. The DMDA's vector type
   is cuda unless -dm_vec_type says otherwise (then MATSGDIACUDA gathers ghosts into a device vector of its own).
*/
#include "gktest.h"
#if PetscDefined(HAVE_CUDA)
  #include <petscdevice_cuda.h>
#endif

/* max |a - ref| / max |ref| over the communicator; any NaN or Inf counts as an infinite error */
static PetscErrorCode CompareVecs(Vec a, Vec ref, PetscReal *relerr)
{
  const PetscScalar *pa, *pr;
  PetscInt           n, nr;
  PetscReal          loc[2] = {0.0, 0.0}, glob[2];

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(a, &n));
  PetscCall(VecGetLocalSize(ref, &nr));
  PetscCheck(n == nr, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Compared vectors have local sizes %" PetscInt_FMT " and %" PetscInt_FMT, n, nr);
  PetscCall(VecGetArrayRead(a, &pa));
  PetscCall(VecGetArrayRead(ref, &pr));
  for (PetscInt i = 0; i < n; i++) {
    PetscReal d = PetscAbsScalar(pa[i] - pr[i]);
    if (PetscIsInfOrNanReal(d)) d = PETSC_MAX_REAL;
    loc[0] = PetscMax(loc[0], d);
    loc[1] = PetscMax(loc[1], PetscAbsScalar(pr[i]));
  }
  PetscCall(VecRestoreArrayRead(a, &pa));
  PetscCall(VecRestoreArrayRead(ref, &pr));
  PetscCall(MPIU_Allreduce(loc, glob, 2, MPIU_REAL, MPIU_MAX, PetscObjectComm((PetscObject)a)));
  PetscCheck(glob[1] > 0.0, PetscObjectComm((PetscObject)a), PETSC_ERR_PLIB, "The reference result is zero: the comparison would prove nothing");
  *relerr = glob[0] / glob[1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckClose(Vec a, Vec ref, PetscReal tol, const char *what, PetscReal *relerr)
{
  PetscFunctionBegin;
  PetscCall(CompareVecs(a, ref, relerr));
  PetscCheck(*relerr <= tol, PetscObjectComm((PetscObject)a), PETSC_ERR_PLIB, "%s: MATSGDIACUDA differs from the host MATSGDIA by %g (relative, max norm), above the tolerance %g", what, (double)*relerr, (double)tol);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the result must be in device memory, read without moving it */
static PetscErrorCode CheckOnDevice(Vec v, const char *what)
{
  const PetscScalar *a;
  PetscMemType       mtype;

  PetscFunctionBegin;
  PetscCall(VecGetArrayReadAndMemType(v, &a, &mtype));
  PetscCall(VecRestoreArrayReadAndMemType(v, &a));
  PetscCheck(PetscMemTypeDevice(mtype), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the result of MATSGDIACUDA is in host memory (PetscMemType %d), not on the device", what, (int)mtype);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* dst = src for vectors of any two types with the same layout */
static PetscErrorCode CopyValues(Vec src, Vec dst)
{
  const PetscScalar *s;
  PetscScalar       *d;
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(src, &n));
  PetscCall(VecGetArrayRead(src, &s));
  PetscCall(VecGetArrayWrite(dst, &d));
  PetscCall(PetscArraycpy(d, s, n));
  PetscCall(VecRestoreArrayWrite(dst, &d));
  PetscCall(VecRestoreArrayRead(src, &s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* fresh random host x, and the same values in the device vector */
static PetscErrorCode FreshInput(PetscRandom rnd, Vec xh, Vec xd)
{
  PetscFunctionBegin;
  PetscCall(VecSetRandom(xh, rnd));
  PetscCall(CopyValues(xh, xd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* number of host-to-device copies of the matrix values on this rank (event SGDIACopyToGPU) */
static PetscErrorCode UploadCount(PetscLogEvent ev, PetscInt *count)
{
  PetscEventPerfInfo info;

  PetscFunctionBegin;
  PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, ev, &info));
  *count = info.count;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Random values for every stencil coupling of every owned point, the same in both matrices. */
static PetscErrorCode FillRandom(DM da, PetscRandom rnd, Mat A, Mat B)
{
  PetscInt        dim, dof, sw, M[3], xs[3], xm[3], ncols, nmax;
  DMBoundaryType  bd[3];
  DMDAStencilType st;
  MatStencil     *rows, *cols;
  PetscScalar    *vals;

  PetscFunctionBegin;
  PetscCall(DMDAGetInfo(da, &dim, &M[0], &M[1], &M[2], NULL, NULL, NULL, &dof, &sw, &bd[0], &bd[1], &bd[2], &st));
  PetscCall(DMDAGetCorners(da, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  for (PetscInt d = dim; d < 3; d++) {
    M[d]  = 1;
    xs[d] = 0;
    xm[d] = 1;
    bd[d] = DM_BOUNDARY_NONE;
  }
  nmax = 1;
  for (PetscInt d = 0; d < dim; d++) nmax *= 2 * sw + 1;
  nmax *= dof;
  PetscCall(PetscMalloc3(dof, &rows, nmax, &cols, dof * nmax, &vals));
  for (PetscInt k = xs[2]; k < xs[2] + xm[2]; k++) {
    for (PetscInt j = xs[1]; j < xs[1] + xm[1]; j++) {
      for (PetscInt i = xs[0]; i < xs[0] + xm[0]; i++) {
        PetscInt g[3] = {i, j, k};
        ncols         = 0;
        for (PetscInt dz = (dim > 2 ? -sw : 0); dz <= (dim > 2 ? sw : 0); dz++) {
          for (PetscInt dy = (dim > 1 ? -sw : 0); dy <= (dim > 1 ? sw : 0); dy++) {
            for (PetscInt dx = -sw; dx <= sw; dx++) {
              PetscInt  e[3] = {dx, dy, dz};
              PetscBool in   = PETSC_TRUE;
              if (st == DMDA_STENCIL_STAR && (dx != 0) + (dy != 0) + (dz != 0) > 1) continue;
              for (PetscInt d = 0; d < 3; d++)
                if (bd[d] != DM_BOUNDARY_PERIODIC && (g[d] + e[d] < 0 || g[d] + e[d] >= M[d])) in = PETSC_FALSE;
              if (!in) continue;
              for (PetscInt c = 0; c < dof; c++) {
                cols[ncols].i   = i + dx;
                cols[ncols].j   = j + dy;
                cols[ncols].k   = k + dz;
                cols[ncols++].c = c;
              }
            }
          }
        }
        for (PetscInt r = 0; r < dof; r++) {
          rows[r].i = i;
          rows[r].j = j;
          rows[r].k = k;
          rows[r].c = r;
        }
        for (PetscInt q = 0; q < dof * ncols; q++) PetscCall(PetscRandomGetValue(rnd, &vals[q]));
        PetscCall(MatSetValuesStencil(A, dof, rows, ncols, cols, vals, INSERT_VALUES));
        PetscCall(MatSetValuesStencil(B, dof, rows, ncols, cols, vals, INSERT_VALUES));
      }
    }
  }
  PetscCall(PetscFree3(rows, cols, vals));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckType(Mat A, PetscBool device, const char *what)
{
  PetscBool ok;
  MatType   type;

  PetscFunctionBegin;
  PetscCall(MatGetType(A, &type));
  if (device) PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &ok, MATSEQSGDIACUDA, MATMPISGDIACUDA, ""));
  else PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &ok, MATSEQSGDIA, MATMPISGDIA, ""));
  PetscCheck(ok, PetscObjectComm((PetscObject)A), PETSC_ERR_PLIB, "%s: matrix of type %s, expected %s", what, type, device ? "seqsgdiacuda or mpisgdiacuda" : "seqsgdia or mpisgdia");
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  const char     *stencils[] = {"star", "box"}, *bds[] = {"none", "periodic"};
  PetscInt        dim = 2, dof = 1, sw = 1, n = 16, ist = 0, ib[3] = {0, 0, 0}, N, c0, c1;
  PetscReal       tol = 1e-13, err[10], errmax = 0.0;
  DMBoundaryType  bd[3];
  DM              da;
  Mat             Ah, Ad, B, Ac, Ab;
  Vec             xh, yh, wh, xd, yd, wd;
  PetscRandom     rnd;
  PetscLogEvent   ev;
  PetscBool       ok;
  PetscMPIInt     size, rank;
  VecType         vtype;
  char            devname[256] = "unknown";

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCheck(PetscDefined(HAVE_CUDA), PETSC_COMM_WORLD, PETSC_ERR_SUP, "sgdia_cuda tests MATSGDIACUDA and needs a PETSc configured with CUDA (make petsc-cuda; make PETSC_DIR=.../petsc-cuda tests)");
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscLogDefaultBegin()); /* to count the uploads; harmless under -log_view */
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "sgdia_cuda options", NULL);
  PetscCall(PetscOptionsRangeInt("-dim", "Grid dimension", NULL, dim, &dim, NULL, 1, 3));
  PetscCall(PetscOptionsRangeInt("-dof", "Degrees of freedom per grid point", NULL, dof, &dof, NULL, 1, 64));
  PetscCall(PetscOptionsEList("-stencil", "Stencil type", NULL, stencils, 2, stencils[ist], &ist, NULL));
  PetscCall(PetscOptionsRangeInt("-sw", "Stencil width", NULL, sw, &sw, NULL, 0, 8));
  PetscCall(PetscOptionsEList("-bx", "Boundary in x", NULL, bds, 2, bds[ib[0]], &ib[0], NULL));
  PetscCall(PetscOptionsEList("-by", "Boundary in y", NULL, bds, 2, bds[ib[1]], &ib[1], NULL));
  PetscCall(PetscOptionsEList("-bz", "Boundary in z", NULL, bds, 2, bds[ib[2]], &ib[2], NULL));
  PetscCall(PetscOptionsRangeInt("-n", "Grid points per dimension", NULL, n, &n, NULL, 1, 1 << 24));
  PetscCall(PetscOptionsReal("-tol", "Relative tolerance of every comparison", NULL, tol, &tol, NULL));
  PetscOptionsEnd();
  for (PetscInt d = 0; d < 3; d++) bd[d] = ib[d] ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE;

  if (dim == 1) PetscCall(DMDACreate1d(PETSC_COMM_WORLD, bd[0], n, dof, sw, NULL, &da));
  else if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, bd[0], bd[1], ist ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, n, n, PETSC_DECIDE, PETSC_DECIDE, dof, sw, NULL, NULL, &da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, bd[0], bd[1], bd[2], ist ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, n, n, n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, dof, sw, NULL, NULL, NULL, &da));
  PetscCall(DMSetVecType(da, VECCUDA)); /* -dm_vec_type may override */
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));

  /* the host reference and the device matrix, with the same values */
  PetscCall(DMSetMatType(da, MATSGDIA));
  PetscCall(DMCreateMatrix(da, &Ah));
  PetscCall(DMSetMatType(da, MATSGDIACUDA));
  PetscCall(DMCreateMatrix(da, &Ad));
  PetscCall(CheckType(Ah, PETSC_FALSE, "DMCreateMatrix with MATSGDIA"));
  PetscCall(CheckType(Ad, PETSC_TRUE, "DMCreateMatrix with MATSGDIACUDA"));
  PetscCall(MatGetSize(Ah, &N, NULL));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(rnd, 1234567 + 1000 * (unsigned long)rank));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(FillRandom(da, rnd, Ah, Ad));
  PetscCall(MatEqual(Ah, Ad, &ok));
  PetscCheck(ok, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "The host copies of the two matrices differ after MatSetValuesStencil with the same values");

  PetscCall(MatCreateVecs(Ah, &xh, &yh));
  PetscCall(VecDuplicate(yh, &wh));
  PetscCall(MatCreateVecs(Ad, &xd, &yd));
  PetscCall(VecDuplicate(yd, &wd));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)yd, &ok, VECSEQCUDA, VECMPICUDA, ""));
  PetscCall(VecGetType(yd, &vtype));
  PetscCheck(ok, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MatCreateVecs of MATSGDIACUDA gave a vector of type %s, expected VECCUDA", vtype);
  PetscCall(PetscLogEventGetId("SGDIACopyToGPU", &ev));

  /* MatMult: one upload; a second product with the matrix unchanged makes none */
  PetscCall(UploadCount(ev, &c0));
  PetscCall(FreshInput(rnd, xh, xd));
  PetscCall(VecSet(yd, 1.0e300)); /* poison: an unwritten row fails the comparison */
  PetscCall(MatMult(Ah, xh, yh));
  PetscCall(MatMult(Ad, xd, yd));
  PetscCall(CheckOnDevice(yd, "MatMult"));
  PetscCall(CheckClose(yd, yh, tol, "MatMult", &err[0]));
  PetscCall(UploadCount(ev, &c1));
  PetscCheck(c1 == c0 + 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The first MatMult copied the matrix to the GPU %" PetscInt_FMT " times, expected once", c1 - c0);
  PetscCall(FreshInput(rnd, xh, xd));
  PetscCall(VecSet(yd, 1.0e300));
  PetscCall(MatMult(Ah, xh, yh));
  PetscCall(MatMult(Ad, xd, yd));
  PetscCall(CheckClose(yd, yh, tol, "second MatMult", &err[1]));
  PetscCall(UploadCount(ev, &c0));
  PetscCheck(c0 == c1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A MatMult with the matrix unchanged copied it to the GPU again (%" PetscInt_FMT " copies)", c0 - c1);

  /* MatMultAdd into a third vector, then in place */
  PetscCall(FreshInput(rnd, xh, xd));
  PetscCall(FreshInput(rnd, wh, wd));
  PetscCall(VecSet(yd, 1.0e300));
  PetscCall(MatMultAdd(Ah, xh, wh, yh));
  PetscCall(MatMultAdd(Ad, xd, wd, yd));
  PetscCall(CheckOnDevice(yd, "MatMultAdd"));
  PetscCall(CheckClose(yd, yh, tol, "MatMultAdd", &err[2]));
  PetscCall(MatMultAdd(Ah, xh, wh, wh));
  PetscCall(MatMultAdd(Ad, xd, wd, wd));
  PetscCall(CheckOnDevice(wd, "MatMultAdd in place"));
  PetscCall(CheckClose(wd, wh, tol, "MatMultAdd in place (y = z)", &err[3]));

  /* MatGetDiagonal */
  PetscCall(VecSet(yd, 1.0e300));
  PetscCall(MatGetDiagonal(Ah, yh));
  PetscCall(MatGetDiagonal(Ad, yd));
  PetscCall(CheckOnDevice(yd, "MatGetDiagonal"));
  PetscCall(CheckClose(yd, yh, tol, "MatGetDiagonal", &err[4]));

  /* MatScale changes the state: the next product copies the values again */
  PetscCall(UploadCount(ev, &c0));
  PetscCall(MatScale(Ah, 2.5));
  PetscCall(MatScale(Ad, 2.5));
  PetscCall(FreshInput(rnd, xh, xd));
  PetscCall(VecSet(yd, 1.0e300));
  PetscCall(MatMult(Ah, xh, yh));
  PetscCall(MatMult(Ad, xd, yd));
  PetscCall(CheckClose(yd, yh, tol, "MatMult after MatScale (the values must be copied to the GPU again)", &err[5]));
  PetscCall(UploadCount(ev, &c1));
  PetscCheck(c1 == c0 + 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatMult after MatScale copied the matrix to the GPU %" PetscInt_FMT " times, expected once", c1 - c0);

  /* MatAXPY with a host MATSGDIA of the same layout (the fast path of MatAXPY_SGDIA) */
  PetscCall(MatDuplicate(Ah, MAT_COPY_VALUES, &B));
  PetscCall(MatShift(B, 1.0));
  PetscCall(MatAXPY(Ah, -0.75, B, SAME_NONZERO_PATTERN));
  PetscCall(MatAXPY(Ad, -0.75, B, SAME_NONZERO_PATTERN));
  PetscCall(FreshInput(rnd, xh, xd));
  PetscCall(VecSet(yd, 1.0e300));
  PetscCall(MatMult(Ah, xh, yh));
  PetscCall(MatMult(Ad, xd, yd));
  PetscCall(CheckClose(yd, yh, tol, "MatMult after MatAXPY (MatAXPY must increase the object state, so that the values are copied to the GPU again)", &err[6]));
  PetscCall(MatDestroy(&B));

  /* MatConvert both ways */
  PetscCall(MatConvert(Ah, MATSGDIACUDA, MAT_INITIAL_MATRIX, &Ac));
  PetscCall(CheckType(Ac, PETSC_TRUE, "MatConvert MATSGDIA -> MATSGDIACUDA"));
  PetscCall(FreshInput(rnd, xh, xd));
  PetscCall(VecSet(yd, 1.0e300));
  PetscCall(MatMult(Ah, xh, yh));
  PetscCall(MatMult(Ac, xd, yd));
  PetscCall(CheckOnDevice(yd, "MatMult of a converted matrix"));
  PetscCall(CheckClose(yd, yh, tol, "MatMult of MatConvert(MATSGDIA -> MATSGDIACUDA)", &err[7]));
  PetscCall(MatConvert(Ac, MATSGDIA, MAT_INPLACE_MATRIX, &Ac));
  PetscCall(CheckType(Ac, PETSC_FALSE, "MatConvert MATSGDIACUDA -> MATSGDIA in place"));
  PetscCall(MatConvert(Ad, MATSGDIA, MAT_INITIAL_MATRIX, &Ab));
  PetscCall(CheckType(Ab, PETSC_FALSE, "MatConvert MATSGDIACUDA -> MATSGDIA"));
  PetscCall(MatEqual(Ab, Ah, &ok));
  PetscCheck(ok, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MatConvert(MATSGDIACUDA -> MATSGDIA) changed the values");
  PetscCall(MatEqual(Ac, Ah, &ok));
  PetscCheck(ok, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MatConvert(MATSGDIA -> MATSGDIACUDA -> MATSGDIA) changed the values");
  PetscCall(MatDestroy(&Ab));
  PetscCall(MatDestroy(&Ac));

  /* bound to the CPU: host kernel on the CUDA vectors, same result */
  PetscCall(MatBindToCPU(Ad, PETSC_TRUE));
  PetscCall(FreshInput(rnd, xh, xd));
  PetscCall(VecSet(yd, 1.0e300));
  PetscCall(MatMult(Ah, xh, yh));
  PetscCall(MatMult(Ad, xd, yd));
  PetscCall(CheckClose(yd, yh, tol, "MatMult bound to the CPU", &err[8]));
  PetscCall(MatBindToCPU(Ad, PETSC_FALSE));
  PetscCall(FreshInput(rnd, xh, xd));
  PetscCall(VecSet(yd, 1.0e300));
  PetscCall(MatMult(Ah, xh, yh));
  PetscCall(MatMult(Ad, xd, yd));
  PetscCall(CheckOnDevice(yd, "MatMult after MatBindToCPU(PETSC_FALSE)"));
  PetscCall(CheckClose(yd, yh, tol, "MatMult after MatBindToCPU(PETSC_FALSE)", &err[9]));

  PetscCall(DMGetVecType(da, &vtype));
  for (int i = 0; i < 10; i++) errmax = PetscMax(errmax, err[i]);
#if PetscDefined(HAVE_CUDA)
  {
    int                   dev;
    struct cudaDeviceProp prop;
    PetscCallCUDA(cudaGetDevice(&dev));
    PetscCallCUDA(cudaGetDeviceProperties(&prop, dev));
    PetscCall(PetscStrncpy(devname, prop.name, sizeof(devname)));
  }
#endif
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "device: %s\n", devname));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "sgdia_cuda: dim %" PetscInt_FMT " dof %" PetscInt_FMT " %s sw %" PetscInt_FMT " bx %s by %s bz %s n %" PetscInt_FMT ", %d rank(s), local vectors %s: MatMult %.1e, MatMultAdd %.1e / %.1e in place, diagonal %.1e, after MatScale %.1e, after MatAXPY %.1e, converted %.1e, bound to CPU %.1e / unbound %.1e: pass\n", dim, dof, stencils[ist], sw, bds[ib[0]], bds[ib[1]], bds[ib[2]], n, size, vtype, (double)err[0], (double)err[2], (double)err[3], (double)err[4], (double)err[5], (double)err[6], (double)err[7], (double)err[8], (double)err[9]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "smoke: VECCUDA + %s MatMult on %s, %" PetscInt_FMT " rows, max rel err %.1e\n", size == 1 ? "MATSEQSGDIACUDA" : "MATMPISGDIACUDA", devname, N, (double)errmax));

  PetscCall(VecDestroy(&xh));
  PetscCall(VecDestroy(&yh));
  PetscCall(VecDestroy(&wh));
  PetscCall(VecDestroy(&xd));
  PetscCall(VecDestroy(&yd));
  PetscCall(VecDestroy(&wd));
  PetscCall(MatDestroy(&Ah));
  PetscCall(MatDestroy(&Ad));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
