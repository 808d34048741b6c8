#include "gktest.h"
#include <unistd.h>

/* ||a - b||_inf <= tol * max(||b||_inf, tiny) */
PetscErrorCode GKCheckVecClose(Vec a, Vec b, PetscReal tol, const char *what)
{
  Vec       d;
  PetscReal nb, nd;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(b, &d));
  PetscCall(VecWAXPY(d, -1.0, b, a));
  PetscCall(VecNorm(d, NORM_INFINITY, &nd));
  PetscCall(VecNorm(b, NORM_INFINITY, &nb));
  PetscCall(VecDestroy(&d));
  PetscCheck(nd <= tol * PetscMax(nb, PETSC_SMALL), PetscObjectComm((PetscObject)a), PETSC_ERR_PLIB, "%s: differs from the reference by %g (reference norm %g, tolerance %g relative)", what, (double)nd, (double)nb, (double)tol);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A (any type) and B (AIJ): || A - B ||_F <= tol * ||B||_F; tol = 0 asks for exact equality */
PetscErrorCode GKCheckMatClose(Mat A, Mat B, PetscReal tol, const char *what)
{
  Mat       Aa;
  PetscReal nb, nd;

  PetscFunctionBegin;
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &Aa));
  PetscCall(MatNorm(B, NORM_FROBENIUS, &nb));
  PetscCall(MatAXPY(Aa, -1.0, B, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatNorm(Aa, NORM_FROBENIUS, &nd));
  PetscCall(MatDestroy(&Aa));
  PetscCheck(nd <= tol * nb, PetscObjectComm((PetscObject)A), PETSC_ERR_PLIB, "%s: matrix differs from the AIJ reference by %g in the Frobenius norm (reference %g, tolerance %g relative)", what, (double)nd, (double)nb, (double)tol);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static char gk_errmsg[4096];

/* keeps the message of the error being raised, and lets it return to the caller */
static PetscErrorCode GKErrorHandler(MPI_Comm comm, int line, const char *func, const char *file, PetscErrorCode n, PetscErrorType p, const char *mess, void *ctx)
{
  (void)comm;
  (void)line;
  (void)func;
  (void)file;
  (void)ctx;
  if (p == PETSC_ERROR_INITIAL) PetscStrncpy(gk_errmsg, mess ? mess : "", sizeof(gk_errmsg));
  return n;
}

/* Run before a call that must fail: errors then return to the caller, with their message kept */
PetscErrorCode GKExpectErrorBegin(void)
{
  PetscFunctionBegin;
  gk_errmsg[0] = 0;
  PetscCall(PetscPushErrorHandler(GKErrorHandler, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* got must be the error code want, and the error message must contain text */
PetscErrorCode GKExpectErrorEnd(PetscErrorCode got, PetscErrorCode want, const char *text, const char *what)
{
  PetscFunctionBegin;
  PetscCall(PetscPopErrorHandler());
  PetscCheck(got != 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: expected an error (code %d), got success", what, (int)want);
  PetscCheck(got == want, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: expected error code %d, got %d (%s)", what, (int)want, (int)got, gk_errmsg);
  PetscCheck(!text || strstr(gk_errmsg, text), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the error message \"%s\" does not say \"%s\"", what, gk_errmsg, text);
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok: %s -> error %d: %s\n", what, (int)got, gk_errmsg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GKCheck(PetscBool cond, const char *what)
{
  PetscFunctionBegin;
  PetscCheck(cond, PETSC_COMM_SELF, PETSC_ERR_PLIB, "check failed: %s", what);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the Poisson operator of a DMDA (one dof, any dimension): 2*dim on the diagonal, -1 per neighbour in the domain
   (homogeneous Dirichlet), assembled */
PetscErrorCode GKFillPoisson(DM da, Mat A)
{
  DMDALocalInfo info;

  PetscFunctionBegin;
  PetscCall(DMDAGetLocalInfo(da, &info));
  for (PetscInt k = info.zs; k < info.zs + info.zm; k++)
    for (PetscInt j = info.ys; j < info.ys + info.ym; j++)
      for (PetscInt i = info.xs; i < info.xs + info.xm; i++) {
        MatStencil  row = {0}, col[7];
        PetscScalar v[7];
        PetscInt    nc = 0, ii[3] = {i, j, k}, n[3] = {info.mx, info.my, info.mz};
        row.i   = i;
        row.j   = j;
        row.k   = k;
        col[nc] = row;
        v[nc++] = 2.0 * info.dim;
        for (PetscInt d = 0; d < info.dim; d++)
          for (PetscInt sg = -1; sg <= 1; sg += 2) {
            MatStencil c = row;
            if (ii[d] + sg < 0 || ii[d] + sg >= n[d]) continue;
            if (d == 0) c.i += sg;
            else if (d == 1) c.j += sg;
            else c.k += sg;
            col[nc] = c;
            v[nc++] = -1.0;
          }
        PetscCall(MatSetValuesStencil(A, 1, &row, nc, col, v, INSERT_VALUES));
      }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The reference of KSPCACG's matrix powers hooks (contract in src/mat/utils/gpukitmat.h), written here again from the
   contract so that the tests do not check the library against itself: for j < k, W[j+1] = (A V[j] - theta[j] W[j] -
   gamma[j] W[j-1]) / sigma[j] and V[j+1] = dinv .* W[j+1], with the branches of GpukitMatMatrixPowersReference() */
PetscErrorCode GKMatPowersReference(Mat A, Vec dinv, PetscInt k, const PetscReal theta[], const PetscReal sigma[], const PetscReal gamma[], Vec V[], Vec W[])
{
  PetscFunctionBegin;
  for (PetscInt j = 0; j < k; j++) {
    const PetscScalar a = 1.0 / sigma[j], b = -theta[j] / sigma[j], c = -gamma[j] / sigma[j];

    PetscCall(MatMult(A, V[j], W[j + 1]));
    if (j > 0 && gamma[j] != 0.0) PetscCall(VecAXPBYPCZ(W[j + 1], b, c, a, W[j], W[j - 1]));
    else if (theta[j] != 0.0) PetscCall(VecAXPBY(W[j + 1], b, a, W[j]));
    else if (sigma[j] != 1.0) PetscCall(VecScale(W[j + 1], a));
    if (dinv) PetscCall(VecPointwiseMult(V[j + 1], dinv, W[j + 1]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* dst = src for vectors of any two types with the same local size, through host arrays (the device copy of dst is
   then stale: GKToDevice() makes it current) */
PetscErrorCode GKCopyValues(Vec src, Vec dst)
{
  const PetscScalar *s;
  PetscScalar       *d;
  PetscInt           n, nd;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(src, &n));
  PetscCall(VecGetLocalSize(dst, &nd));
  PetscCheck(n == nd, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "GKCopyValues: %" PetscInt_FMT " local entries into %" PetscInt_FMT, n, nd);
  PetscCall(VecGetArrayRead(src, &s));
  PetscCall(VecGetArrayWrite(dst, &d));
  PetscCall(PetscArraycpy(d, s, n));
  PetscCall(VecRestoreArrayWrite(dst, &d));
  PetscCall(VecRestoreArrayRead(src, &s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* makes the device copy of a device vector current (an upload when the host has the newer values), so that a
   measured region that follows sees no copy; nothing for host vectors or v == NULL */
PetscErrorCode GKToDevice(Vec v)
{
  const PetscScalar *a;
  PetscMemType       mt;

  PetscFunctionBegin;
  if (!v) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecGetArrayReadAndMemType(v, &a, &mt));
  PetscCall(VecRestoreArrayReadAndMemType(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* how many times event ev was logged on this rank in the current stage */
PetscErrorCode GKLogEventCount(PetscLogEvent ev, PetscInt *count)
{
  PetscEventPerfInfo info;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&info, sizeof(info)));
  PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, ev, &info));
  *count = (PetscInt)info.count;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ||a - b|| / ||b|| in the norm given (||a - b|| when b = 0), a and b of any two types with the same layout */
PetscErrorCode GKRelDiff(Vec a, Vec b, NormType type, PetscReal *rel)
{
  Vec       t;
  PetscReal nd, nb;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(b, &t));
  PetscCall(GKCopyValues(a, t));
  PetscCall(VecAXPY(t, -1.0, b));
  PetscCall(VecNorm(t, type, &nd));
  PetscCall(VecNorm(b, type, &nb));
  PetscCall(VecDestroy(&t));
  *rel = nb > 0 ? nd / nb : nd;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PCView()'s ASCII text into buf (len bytes, NUL-terminated): written to a file by the PC's communicator, read back by
   its rank 0 and sent to every rank */
PetscErrorCode GKPCViewToString(PC pc, char *buf, size_t len)
{
  PetscViewer v;
  char        fname[PETSC_MAX_PATH_LEN];
  MPI_Comm    comm = PetscObjectComm((PetscObject)pc);
  PetscMPIInt rank;
  int         pid  = (int)getpid();

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Bcast(&pid, 1, MPI_INT, 0, comm));
  PetscCall(PetscSNPrintf(fname, sizeof(fname), "gk_pcview.%d.txt", pid));
  PetscCall(PetscMemzero(buf, len));
  PetscCall(PetscViewerASCIIOpen(comm, fname, &v));
  PetscCall(PCView(pc, v));
  PetscCall(PetscViewerDestroy(&v));
  if (rank == 0) {
    FILE  *f = fopen(fname, "r");
    size_t got;
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot read back %s", fname);
    got = fread(buf, 1, len - 1, f);
    fclose(f);
    (void)remove(fname);
    PetscCheck(got > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "read nothing back from %s (the PCView output)", fname);
  }
  PetscCallMPI(MPI_Bcast(buf, (PetscMPIInt)len, MPI_CHAR, 0, comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}
