static const char help[] = "MATSGDIACUDA against the host MATSGDIA on one DMDA, operation by operation: products and transpose products,\n"
                           "diagonal, scaling, shifts, AXPY, copies, duplicates, Dirichlet rows and columns, block inversion, COO and\n"
                           "device-array assembly, the offload mask (host reads after device changes and the reverse), converts,\n"
                           "MatBindToCPU, and KSP solves (GMRES and CG with Jacobi) without host copies.\n"
                           "  -dim <1,2,3> -dof <d> -stencil <star,box> -sw <w> -bx/-by/-bz <none,periodic> -n <points per dimension>\n"
                           "  -tol <relative tolerance, 1e-13>\n"
                           "  -tune_fake <variant>:<block> (the tuner's clock says that this product kernel is the fastest)\n"
                           "  -tune_expect <variant>:<block>|none (the choice the matrix's tuner must make; none: it has no tuner)\n"
                           "  -tune_check (the main matrix's tuner must make a choice) -tune_expect_cached (it must come from the tuning\n"
                           "   cache, with no timed call)\n";

/*
   Both matrices get the same random values through MatSetValuesStencil(). The host matrix works on host
   vectors (MatCreateVecs() of MATSGDIA), the device one on VECCUDA vectors (MatCreateVecs() of MATSGDIACUDA).
   Every operation is applied to both; then the device values (read through MatSGDIAGetArrayReadCUDA()) are
   compared with the host ones, and a product with fresh random x is compared, each as max |a - ref| / max |ref|
   over all ranks, failing above -tol. Results that are vectors must have been written on the device (their offload
   mask is PETSC_OFFLOAD_GPU, so no host code touched them), and so must the matrix after an operation that runs on
   the device. The DMDA's vector type is cuda unless -dm_vec_type says otherwise (then MATSGDIACUDA gathers ghosts
   into a device vector of its own).

   The KSP part solves an SPD system (CG) and a non-symmetric one (GMRES), both with PCJACOBI, once to set up and
   once measured: between the start and the end of the second KSPSolve() the per-event copy counters of -log_view
   (PetscEventPerfInfo CpuToGpuCount/GpuToCpuCount) must show no host copy. Two kinds are PETSc's own and are counted
   apart: VecMDot() (GMRES's Gram-Schmidt) reads its few dot products back to the host and logs that as a GPU->CPU
   copy of a few scalars; and with several ranks and -use_gpu_aware_mpi 0, PETSc's scatter stages each ghost
   exchange through host buffers (one GPU->CPU and one CPU->GPU copy per exchange), inside the VecScatter/PetscSF
   events. Everything else must be zero; on one rank the scatter counts must be zero too.

   The device CSR of MATSEQSGDIACUDA (GpukitMatGetDeviceCSR(), one rank) must equal MatConvert() to AIJ row by row,
   be built without copying the matrix to the host, be kept while the matrix is unchanged and follow its changes.

   The product's tuner (-tune_fake, -tune_expect): the tuner's clock is replaced by a model in which one (variant,
   block) is the fastest; the tuner of the main matrix must then choose it, or the value an option fixed.
*/
#include "gktest.h"
#include <petscksp.h>
#include "gpukitmat.h"
#include "gpukittune.h"
#if PetscDefined(HAVE_CUDA)
  #include <petscdevice_cuda.h>
  #include <petsc/private/matimpl.h> /* the matrix's offload mask (vectors have VecGetOffloadMask()) */
#endif

typedef struct {
  DM            da;
  PetscMPIInt   size, rank;
  PetscReal     tol, errmax;
  PetscInt      nchecks;
  PetscRandom   rnd;
  PetscLogEvent evup;     /* SGDIACopyToGPU */
  PetscBool     devlocal; /* the DMDA's local vectors are device vectors (-dm_vec_type cuda, the default here) */
  Mat           Ah, Ad; /* the host reference and the device matrix, kept equal */
  Vec           xh, yh, wh, xd, yd, wd;
} Ctx;

static PetscErrorCode Record(Ctx *c, const char *what, PetscReal err)
{
  PetscFunctionBegin;
  c->nchecks++;
  c->errmax = PetscMax(c->errmax, err);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-100s %.1e\n", what, (double)err));
  PetscFunctionReturn(PETSC_SUCCESS);
}

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

static PetscErrorCode CheckClose(Ctx *c, Vec a, Vec ref, const char *what)
{
  PetscReal relerr = 0.0;

  PetscFunctionBegin;
  PetscCall(CompareVecs(a, ref, &relerr));
  PetscCheck(relerr <= c->tol, PetscObjectComm((PetscObject)a), PETSC_ERR_PLIB, "%s: MATSGDIACUDA differs from the host MATSGDIA by %g (relative, max norm), above the tolerance %g", what, (double)relerr, (double)c->tol);
  PetscCall(Record(c, what, relerr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The result must have been written on the device and nowhere else: its offload mask is PETSC_OFFLOAD_GPU. Call it
   before anything reads the vector on the host (that would make the mask PETSC_OFFLOAD_BOTH). */
static PetscErrorCode CheckOnDevice(Vec v, const char *what)
{
  PetscFunctionBegin;
#if PetscDefined(HAVE_CUDA)
  PetscOffloadMask mask;

  PetscCall(VecGetOffloadMask(v, &mask));
  PetscCheck(mask == PETSC_OFFLOAD_GPU, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the result vector has offload mask %s, expected PETSC_OFFLOAD_GPU: MATSGDIACUDA computed or copied it on the host", what, PetscOffloadMaskToString(mask));
#else
  (void)v;
  (void)what;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* fresh random host x, and the same values in the device vector */
static PetscErrorCode FreshInput(PetscRandom rnd, Vec xh, Vec xd)
{
  PetscFunctionBegin;
  PetscCall(VecSetRandom(xh, rnd));
  PetscCall(GKCopyValues(xh, xd));
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

/* y = D x on the device and yref = H x on the host, for fresh random x; compared */
static PetscErrorCode CheckMult(Ctx *c, Mat D, Mat H, const char *what)
{
  char msg[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: MatMult", what));
  PetscCall(FreshInput(c->rnd, c->xh, c->xd));
  PetscCall(VecSet(c->yd, 1.0e300)); /* poison: an unwritten row fails the comparison */
  PetscCall(MatMult(H, c->xh, c->yh));
  PetscCall(MatMult(D, c->xd, c->yd));
  PetscCall(CheckOnDevice(c->yd, msg));
  PetscCall(CheckClose(c, c->yd, c->yh, msg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the product's tuner ---- */

static const char *const TuneVariants[] = {"row", "row2", "stencil"};
static const PetscInt    TuneBlocks[]   = {64, 96, 128, 192, 256, 512, 1024};

typedef struct {
  PetscInt variant, block; /* the fast configuration of the model */
} TuneModel;

static PetscInt TuneBlockIndex(PetscInt b)
{
  for (PetscInt i = 0; i < 7; i++)
    if (TuneBlocks[i] == b) return i;
  return -1;
}

/* the model: 1 ms for the fast configuration, 1 ms more for another variant, 0.2 ms more per step of block size
   (every step gains more than the tuner's 5% threshold, so a greedy search reaches the fast one) */
static PetscErrorCode TuneModelTime(void *ctx, const char kernel[], const PetscInt cfg[], PetscReal *ms)
{
  const TuneModel *mdl = (const TuneModel *)ctx;
  PetscBool        mult;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(kernel, "sgdia_mult", &mult));
  *ms = 1.0;
  if (mult) *ms += (cfg[0] != mdl->variant ? 1.0 : 0.0) + 0.2 * PetscAbsInt(TuneBlockIndex(cfg[1]) - TuneBlockIndex(mdl->block));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* "<variant>:<block>" -> the two values */
static PetscErrorCode TuneParse(const char *s, PetscInt *variant, PetscInt *block)
{
  char      name[32];
  PetscInt  i;
  PetscBool same;

  PetscFunctionBegin;
  for (i = 0; s[i] && s[i] != ':' && i < 31; i++) name[i] = s[i];
  name[i] = 0;
  PetscCheck(s[i] == ':', PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "Expected <variant>:<block>, got %s", s);
  *variant = -1;
  for (PetscInt v = 0; v < 3; v++) {
    PetscCall(PetscStrcmp(name, TuneVariants[v], &same));
    if (same) *variant = v;
  }
  PetscCheck(*variant >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "Unknown variant %s (row, row2, stencil)", name);
  *block = (PetscInt)atoi(s + i + 1);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* products until the main matrix's tuner has chosen (at most 40), then its choice against the expectation */
static PetscErrorCode TestTuner(Ctx *c, const char *expect, PetscBool cached)
{
  GpukitTuner     t;
  const PetscInt *cfg;
  PetscBool       done = PETSC_FALSE, none, fromcache;
  PetscInt        ncalls, variant, block;
  char            msg[256];

  PetscFunctionBegin;
  PetscCall(GpukitTuneFind((PetscObject)c->Ad, "sgdia_mult", &t));
  PetscCall(PetscStrcmp(expect, "none", &none));
  if (none) {
    PetscCheck(!t, PETSC_COMM_SELF, PETSC_ERR_PLIB, "-mat_sgdia_autotune false, yet the matrix has a tuner");
    PetscCall(Record(c, "tuner: none with -mat_sgdia_autotune false", 0.0));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(t, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The matrix has no tuner of its product after MatMult");
  for (PetscInt i = 0; i < 40; i++) {
    PetscCall(GpukitTunerGetConfig(t, &cfg, &done));
    if (done) break;
    PetscCall(CheckMult(c, c->Ad, c->Ah, "products while the tuner searches"));
  }
  PetscCall(GpukitTunerGetConfig(t, &cfg, &done));
  PetscCall(GpukitTunerGetStats(t, &ncalls, NULL, NULL, NULL, NULL, &fromcache));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The tuner of the product has not chosen after 40 more products (%" PetscInt_FMT " timed calls)", ncalls);
  if (expect[0]) {
    PetscCall(TuneParse(expect, &variant, &block));
    PetscCheck(cfg[0] == variant && cfg[1] == block, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The tuner chose variant %s with %" PetscInt_FMT " threads per block; expected %s", cfg[0] >= 0 && cfg[0] < 3 ? TuneVariants[cfg[0]] : "?", cfg[1], expect);
  }
  if (cached) PetscCheck(fromcache && ncalls == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The choice should have come from the tuning cache with no timed call: from the cache %d, %" PetscInt_FMT " timed calls", (int)fromcache, ncalls);
  PetscCall(PetscViewerPushFormat(PETSC_VIEWER_STDOUT_WORLD, PETSC_VIEWER_ASCII_INFO));
  PetscCall(MatView(c->Ad, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(PetscViewerPopFormat(PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "tuner: variant %s, %" PetscInt_FMT " threads per block after %" PetscInt_FMT " timed calls%s", TuneVariants[cfg[0]], cfg[1], ncalls, fromcache ? " (from the cache)" : ""));
  PetscCall(Record(c, msg, 0.0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if PetscDefined(HAVE_CUDA)
/* ------------------------------------------------------------------------------------------------------
   Device-only checks (the test needs a CUDA PETSc; against a CPU PETSc only the part above compiles)
   ------------------------------------------------------------------------------------------------------ */

/* After an operation that runs on the device, the current values are there and only there */
static PetscErrorCode CheckMatOnDevice(Mat A, const char *what)
{
  PetscFunctionBegin;
  PetscCheck(A->offloadmask == PETSC_OFFLOAD_GPU, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the matrix has offload mask %s after an operation that should run on the device, expected PETSC_OFFLOAD_GPU: the operation ran on the host, or copied the values back", what, PetscOffloadMaskToString(A->offloadmask));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode IsDeviceMat(Mat A, PetscBool *flg)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, flg, MATSEQSGDIACUDA, MATMPISGDIACUDA, ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* number of stored values on this rank: k*dof*m */
static PetscErrorCode LocalValues(Mat A, PetscInt *nv)
{
  PetscInt dof, k, m;

  PetscFunctionBegin;
  PetscCall(MatSGDIAGetStencil(A, &dof, &k, NULL));
  PetscCall(MatGetLocalSize(A, &m, NULL));
  *nv = k * dof * m;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a host copy of the stored values: the device array of a MATSGDIACUDA, the host array of a MATSGDIA */
static PetscErrorCode GetValues(Mat A, PetscScalar **vals, PetscInt *nv)
{
  PetscBool dev;

  PetscFunctionBegin;
  PetscCall(LocalValues(A, nv));
  PetscCall(PetscMalloc1(PetscMax(*nv, 1), vals));
  PetscCall(IsDeviceMat(A, &dev));
  if (dev) {
    const PetscScalar *dv;
    PetscCall(MatSGDIAGetArrayReadCUDA(A, &dv));
    PetscCallCUDA(cudaDeviceSynchronize()); /* whatever stream wrote it */
    if (*nv) PetscCallCUDA(cudaMemcpy(*vals, dv, (size_t)*nv * sizeof(PetscScalar), cudaMemcpyDeviceToHost));
    PetscCall(MatSGDIARestoreArrayReadCUDA(A, &dv));
  } else {
    PetscScalar *hv;
    PetscCall(MatSGDIAGetArray(A, &hv));
    PetscCall(PetscArraycpy(*vals, hv, *nv));
    PetscCall(MatSGDIARestoreArray(A, &hv));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the stored values of A against those of Ref, max |a - ref| / max |ref| over all ranks; an all-zero Ref asks for
   an all-zero A */
static PetscErrorCode CheckMatValues(Ctx *c, Mat A, Mat Ref, const char *what)
{
  PetscScalar *a, *r;
  PetscInt     na, nr;
  PetscReal    loc[2] = {0.0, 0.0}, glob[2], err;
  char         msg[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: stored values", what));
  PetscCall(GetValues(A, &a, &na));
  PetscCall(GetValues(Ref, &r, &nr));
  PetscCheck(na == nr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: %" PetscInt_FMT " stored values against %" PetscInt_FMT " in the reference", msg, na, nr);
  for (PetscInt i = 0; i < na; i++) {
    PetscReal d = PetscAbsScalar(a[i] - r[i]);
    if (PetscIsInfOrNanReal(d)) d = PETSC_MAX_REAL;
    loc[0] = PetscMax(loc[0], d);
    loc[1] = PetscMax(loc[1], PetscAbsScalar(r[i]));
  }
  PetscCall(PetscFree(a));
  PetscCall(PetscFree(r));
  PetscCall(MPIU_Allreduce(loc, glob, 2, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  err = glob[1] > 0.0 ? glob[0] / glob[1] : glob[0];
  PetscCheck(err <= (glob[1] > 0.0 ? c->tol : 0.0), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: differ from the host MATSGDIA by %g (%s), above the tolerance %g", msg, (double)err, glob[1] > 0.0 ? "relative, max norm" : "absolute: the reference is zero", (double)c->tol);
  PetscCall(Record(c, msg, err));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the same matrix: stored values and a product */
static PetscErrorCode CheckSame(Ctx *c, Mat D, Mat H, const char *what)
{
  PetscFunctionBegin;
  PetscCall(CheckMatValues(c, D, H, what));
  PetscCall(CheckMult(c, D, H, what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* every stored value zero, and the product zero, written on the device */
static PetscErrorCode CheckZero(Ctx *c, Mat D, const char *what)
{
  PetscScalar *v;
  PetscInt     nv;
  PetscReal    loc = 0.0, glob, ny;
  char         msg[256];

  PetscFunctionBegin;
  PetscCall(GetValues(D, &v, &nv));
  for (PetscInt i = 0; i < nv; i++) loc = PetscMax(loc, PetscIsInfOrNanScalar(v[i]) ? PETSC_MAX_REAL : PetscAbsScalar(v[i]));
  PetscCall(PetscFree(v));
  PetscCall(MPIU_Allreduce(&loc, &glob, 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  PetscCheck(glob == 0.0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: a stored value is %g, expected all zero", what, (double)glob);
  PetscCall(FreshInput(c->rnd, c->xh, c->xd));
  PetscCall(VecSet(c->yd, 1.0e300));
  PetscCall(MatMult(D, c->xd, c->yd));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: MatMult", what));
  PetscCall(CheckOnDevice(c->yd, msg));
  PetscCall(VecNorm(c->yd, NORM_INFINITY, &ny));
  PetscCheck(ny == 0.0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the product of the zero matrix has max norm %g", msg, (double)ny);
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: all values and the product zero", what));
  PetscCall(Record(c, msg, glob));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the same random values in a host and a device vector; interval [lo, lo+1) */
static PetscErrorCode RandomPair(Ctx *c, PetscReal lo, Vec h, Vec d)
{
  PetscFunctionBegin;
  PetscCall(VecSetRandom(h, c->rnd)); /* [-1, 1) */
  PetscCall(VecScale(h, 0.5));
  PetscCall(VecShift(h, lo + 0.5));
  PetscCall(GKCopyValues(h, d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatMultTranspose, MatMultTransposeAdd into a third vector and in place */
static PetscErrorCode TestTranspose(Ctx *c)
{
  PetscFunctionBegin;
  PetscCall(FreshInput(c->rnd, c->xh, c->xd));
  PetscCall(VecSet(c->yd, 1.0e300));
  PetscCall(MatMultTranspose(c->Ah, c->xh, c->yh));
  PetscCall(MatMultTranspose(c->Ad, c->xd, c->yd));
  PetscCall(CheckOnDevice(c->yd, "MatMultTranspose"));
  PetscCall(CheckClose(c, c->yd, c->yh, "MatMultTranspose"));
  PetscCall(FreshInput(c->rnd, c->xh, c->xd));
  PetscCall(FreshInput(c->rnd, c->wh, c->wd));
  PetscCall(VecSet(c->yd, 1.0e300));
  PetscCall(MatMultTransposeAdd(c->Ah, c->xh, c->wh, c->yh));
  PetscCall(MatMultTransposeAdd(c->Ad, c->xd, c->wd, c->yd));
  PetscCall(CheckOnDevice(c->yd, "MatMultTransposeAdd"));
  PetscCall(CheckClose(c, c->yd, c->yh, "MatMultTransposeAdd"));
  PetscCall(MatMultTransposeAdd(c->Ah, c->xh, c->wh, c->wh));
  PetscCall(MatMultTransposeAdd(c->Ad, c->xd, c->wd, c->wd));
  PetscCall(CheckOnDevice(c->wd, "MatMultTransposeAdd in place"));
  PetscCall(CheckClose(c, c->wd, c->wh, "MatMultTransposeAdd in place (y = z)"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatShift, MatDiagonalSet (INSERT, ADD), MatDiagonalScale (left, right, both) */
static PetscErrorCode TestDiagonal(Ctx *c)
{
  Vec lh, ld, rh, rd;

  PetscFunctionBegin;
  PetscCall(MatShift(c->Ah, 0.7));
  PetscCall(MatShift(c->Ad, 0.7));
  PetscCall(CheckMatOnDevice(c->Ad, "MatShift"));
  PetscCall(CheckSame(c, c->Ad, c->Ah, "MatShift"));

  PetscCall(VecDuplicate(c->xh, &lh));
  PetscCall(VecDuplicate(c->xh, &rh));
  PetscCall(VecDuplicate(c->xd, &ld));
  PetscCall(VecDuplicate(c->xd, &rd));
  PetscCall(RandomPair(c, -1.0, lh, ld));
  PetscCall(MatDiagonalSet(c->Ah, lh, INSERT_VALUES));
  PetscCall(MatDiagonalSet(c->Ad, ld, INSERT_VALUES));
  PetscCall(CheckMatOnDevice(c->Ad, "MatDiagonalSet INSERT_VALUES"));
  PetscCall(CheckSame(c, c->Ad, c->Ah, "MatDiagonalSet INSERT_VALUES"));
  PetscCall(RandomPair(c, -1.0, lh, ld));
  PetscCall(MatDiagonalSet(c->Ah, lh, ADD_VALUES));
  PetscCall(MatDiagonalSet(c->Ad, ld, ADD_VALUES));
  PetscCall(CheckMatOnDevice(c->Ad, "MatDiagonalSet ADD_VALUES"));
  PetscCall(CheckSame(c, c->Ad, c->Ah, "MatDiagonalSet ADD_VALUES"));

  /* scaling vectors in [0.5, 1.5): the values keep their size */
  PetscCall(RandomPair(c, 0.5, lh, ld));
  PetscCall(MatDiagonalScale(c->Ah, lh, NULL));
  PetscCall(MatDiagonalScale(c->Ad, ld, NULL));
  PetscCall(CheckMatOnDevice(c->Ad, "MatDiagonalScale left"));
  PetscCall(CheckSame(c, c->Ad, c->Ah, "MatDiagonalScale left"));
  PetscCall(RandomPair(c, 0.5, rh, rd));
  PetscCall(MatDiagonalScale(c->Ah, NULL, rh));
  PetscCall(MatDiagonalScale(c->Ad, NULL, rd));
  PetscCall(CheckMatOnDevice(c->Ad, "MatDiagonalScale right"));
  PetscCall(CheckSame(c, c->Ad, c->Ah, "MatDiagonalScale right (ghost values of r)"));
  PetscCall(RandomPair(c, 0.5, lh, ld));
  PetscCall(RandomPair(c, 0.5, rh, rd));
  PetscCall(MatDiagonalScale(c->Ah, lh, rh));
  PetscCall(MatDiagonalScale(c->Ad, ld, rd));
  PetscCall(CheckMatOnDevice(c->Ad, "MatDiagonalScale left and right"));
  PetscCall(CheckSame(c, c->Ad, c->Ah, "MatDiagonalScale left and right"));
  PetscCall(VecDestroy(&lh));
  PetscCall(VecDestroy(&rh));
  PetscCall(VecDestroy(&ld));
  PetscCall(VecDestroy(&rd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatDuplicate (both options), MatAXPY (device X, host X), MatCopy (device -> device, host -> device, device -> host),
   MatZeroEntries */
static PetscErrorCode TestWholeMatrix(Ctx *c)
{
  Mat Bh, Bd, Zd, Zh;

  PetscFunctionBegin;
  PetscCall(MatDuplicate(c->Ah, MAT_COPY_VALUES, &Bh));
  PetscCall(MatDuplicate(c->Ad, MAT_COPY_VALUES, &Bd));
  PetscCall(CheckType(Bd, PETSC_TRUE, "MatDuplicate(MAT_COPY_VALUES) of MATSGDIACUDA"));
  PetscCall(CheckSame(c, Bd, c->Ah, "MatDuplicate(MAT_COPY_VALUES)"));
  PetscCall(MatDuplicate(c->Ad, MAT_DO_NOT_COPY_VALUES, &Zd));
  PetscCall(CheckType(Zd, PETSC_TRUE, "MatDuplicate(MAT_DO_NOT_COPY_VALUES) of MATSGDIACUDA"));
  PetscCall(CheckZero(c, Zd, "MatDuplicate(MAT_DO_NOT_COPY_VALUES)"));

  /* X = (A + I)/2 on both sides, then Y += a X */
  PetscCall(MatShift(Bh, 1.0));
  PetscCall(MatShift(Bd, 1.0));
  PetscCall(MatScale(Bh, 0.5));
  PetscCall(MatScale(Bd, 0.5));
  PetscCall(MatAXPY(c->Ah, -0.75, Bh, SAME_NONZERO_PATTERN));
  PetscCall(MatAXPY(c->Ad, -0.75, Bd, SAME_NONZERO_PATTERN));
  PetscCall(CheckMatOnDevice(c->Ad, "MatAXPY with X a MATSGDIACUDA"));
  PetscCall(CheckSame(c, c->Ad, c->Ah, "MatAXPY(SAME_NONZERO_PATTERN), X a MATSGDIACUDA"));
  PetscCall(MatAXPY(c->Ah, 0.5, Bh, SAME_NONZERO_PATTERN));
  PetscCall(MatAXPY(c->Ad, 0.5, Bh, SAME_NONZERO_PATTERN));
  PetscCall(CheckSame(c, c->Ad, c->Ah, "MatAXPY(SAME_NONZERO_PATTERN), X a host MATSGDIA"));

  PetscCall(MatCopy(c->Ad, Zd, SAME_NONZERO_PATTERN));
  PetscCall(CheckSame(c, Zd, c->Ah, "MatCopy MATSGDIACUDA -> MATSGDIACUDA"));
  PetscCall(MatZeroEntries(Zd));
  PetscCall(CheckZero(c, Zd, "MatZeroEntries"));
  PetscCall(MatCopy(Bh, Zd, SAME_NONZERO_PATTERN));
  PetscCall(CheckSame(c, Zd, Bh, "MatCopy MATSGDIA -> MATSGDIACUDA (a host op writes the device matrix)"));
  PetscCall(MatDuplicate(c->Ah, MAT_DO_NOT_COPY_VALUES, &Zh));
  PetscCall(MatCopy(c->Ad, Zh, SAME_NONZERO_PATTERN));
  PetscCall(CheckMatValues(c, Zh, c->Ah, "MatCopy MATSGDIACUDA -> MATSGDIA"));
  PetscCall(MatDestroy(&Zh));
  PetscCall(MatDestroy(&Zd));
  PetscCall(MatDestroy(&Bd));
  PetscCall(MatDestroy(&Bh));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Dirichlet rows named by each rank: a few of its own, some of the next rank's, one twice */
static PetscErrorCode DirichletRows(Mat A, PetscInt shift, PetscInt rows[], PetscInt *nr)
{
  PetscInt rstart, rend, N, n = 0;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(MatGetSize(A, &N, NULL));
  rows[n++] = rstart + shift % (rend - rstart);
  rows[n++] = (rstart + rend) / 2;
  rows[n++] = rend - 1;
  rows[n++] = (rend + 1 + shift) % N; /* on several ranks, often another rank's */
  rows[n++] = (rend + 7 + 3 * shift) % N;
  rows[n++] = rows[0]; /* twice */
  *nr       = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatZeroRows and MatZeroRowsColumns with x and b, on the two matrices themselves */
static PetscErrorCode TestDirichlet(Ctx *c)
{
  PetscInt rows[6], nr;
  char     msg[128];

  PetscFunctionBegin;
  for (int columns = 0; columns < 2; columns++) {
    const char *name = columns ? "MatZeroRowsColumns" : "MatZeroRows";
    PetscCall(DirichletRows(c->Ah, columns ? 2 : 0, rows, &nr));
    PetscCall(FreshInput(c->rnd, c->xh, c->xd));
    PetscCall(FreshInput(c->rnd, c->wh, c->wd));
    if (columns) {
      PetscCall(MatZeroRowsColumns(c->Ah, nr, rows, 2.5, c->xh, c->wh));
      PetscCall(MatZeroRowsColumns(c->Ad, nr, rows, 2.5, c->xd, c->wd));
    } else {
      PetscCall(MatZeroRows(c->Ah, nr, rows, 2.5, c->xh, c->wh));
      PetscCall(MatZeroRows(c->Ad, nr, rows, 2.5, c->xd, c->wd));
    }
    PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s with x, b: right-hand side b", name));
    if (!columns || c->devlocal) { /* the column marks travel in the DMDA's local vectors: host ones keep MatZeroRowsColumns on the host (-info says so) */
      PetscCall(CheckMatOnDevice(c->Ad, name));
      PetscCall(CheckOnDevice(c->wd, msg));
    }
    PetscCall(CheckClose(c, c->wd, c->wh, msg));
    PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s (diag 2.5, rows of other ranks too)", name));
    PetscCall(CheckSame(c, c->Ad, c->Ah, msg));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatInvertBlockDiagonal: the device matrix's blocks against the host's, relative to each block's condition
   number (kappa_1 = |B|_1 |B^-1|_1), since the two may round differently */
static PetscErrorCode TestInvertBlockDiagonal(Ctx *c)
{
  const PetscScalar *ih, *id;
  PetscScalar       *v;
  PetscInt           dof, k, m, center, np;
  PetscReal          loc = 0.0, glob;

  PetscFunctionBegin;
  PetscCall(MatInvertBlockDiagonal(c->Ah, &ih));
  PetscCall(MatInvertBlockDiagonal(c->Ad, &id));
  PetscCall(MatSGDIAGetStencil(c->Ah, &dof, &k, NULL));
  PetscCall(MatGetLocalSize(c->Ah, &m, NULL));
  center = (k - 1) / 2;
  np     = m / dof;
  PetscCall(MatSGDIAGetArray(c->Ah, &v));
  for (PetscInt p = 0; p < np; p++) {
    const PetscScalar *bi = ih + p * dof * dof, *di = id + p * dof * dof;
    PetscReal          nb = 0.0, ni = 0.0, err = 0.0, ref = 0.0, kappa;
    for (PetscInt cc = 0; cc < dof; cc++) {
      PetscReal sb = 0.0, si = 0.0;
      for (PetscInt r = 0; r < dof; r++) {
        PetscReal d = PetscAbsScalar(di[r + cc * dof] - bi[r + cc * dof]);
        if (PetscIsInfOrNanReal(d)) d = PETSC_MAX_REAL;
        sb += PetscAbsScalar(v[(center * dof + cc) * m + p * dof + r]);
        si += PetscAbsScalar(bi[r + cc * dof]);
        err = PetscMax(err, d);
        ref = PetscMax(ref, PetscAbsScalar(bi[r + cc * dof]));
      }
      nb = PetscMax(nb, sb);
      ni = PetscMax(ni, si);
    }
    kappa = PetscMax(1.0, nb * ni);
    loc   = PetscMax(loc, err / (ref * kappa));
  }
  PetscCall(MatSGDIARestoreArray(c->Ah, &v));
  PetscCall(MPIU_Allreduce(&loc, &glob, 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  PetscCheck(glob <= c->tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MatInvertBlockDiagonal: MATSGDIACUDA's inverse blocks differ from the host's by %g (relative to the largest entry times the block's condition number), above the tolerance %g", (double)glob, (double)c->tol);
  PetscCall(Record(c, "MatInvertBlockDiagonal (relative, over the condition number of each block)", glob));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Device assembly through the raw array: write the host matrix's values with cudaMemcpy, then the products must
   agree, the read-only array must give them back, and the host side must see them */
static PetscErrorCode TestDeviceArray(Ctx *c)
{
  Mat                Dw, Hs;
  PetscScalar       *hv, *dv, *buf, *back;
  const PetscScalar *rv;
  PetscInt           nv, c0, c1;
  PetscBool          eq;
  int                same;

  PetscFunctionBegin;
  PetscCall(MatDuplicate(c->Ad, MAT_DO_NOT_COPY_VALUES, &Dw));
  PetscCall(LocalValues(Dw, &nv));
  PetscCall(GKLogEventCount(c->evup, &c0));
  PetscCall(MatSGDIAGetArray(c->Ah, &hv));
  PetscCall(MatSGDIAGetArrayWriteCUDA(Dw, &dv));
  PetscCallCUDA(cudaDeviceSynchronize());
  if (nv) PetscCallCUDA(cudaMemcpy(dv, hv, (size_t)nv * sizeof(PetscScalar), cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscCall(MatSGDIARestoreArrayWriteCUDA(Dw, &dv));
  PetscCall(MatSGDIARestoreArray(c->Ah, &hv));
  PetscCall(CheckMatOnDevice(Dw, "MatSGDIARestoreArrayWriteCUDA"));
  PetscCall(CheckMult(c, Dw, c->Ah, "values written through MatSGDIAGetArrayWriteCUDA"));
  PetscCall(GKLogEventCount(c->evup, &c1));
  PetscCheck(c1 == c0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Values written on the device through MatSGDIAGetArrayWriteCUDA were followed by %" PetscInt_FMT " host-to-device copies of the matrix (the host copy overwrote them?)", c1 - c0);

  /* the read-only array gives back exactly what was written */
  PetscCall(PetscMalloc2(PetscMax(nv, 1), &buf, PetscMax(nv, 1), &back));
  PetscCall(MatSGDIAGetArray(c->Ah, &hv));
  PetscCall(PetscArraycpy(buf, hv, nv));
  PetscCall(MatSGDIARestoreArray(c->Ah, &hv));
  PetscCall(MatSGDIAGetArrayReadCUDA(Dw, &rv));
  PetscCallCUDA(cudaDeviceSynchronize());
  if (nv) PetscCallCUDA(cudaMemcpy(back, rv, (size_t)nv * sizeof(PetscScalar), cudaMemcpyDeviceToHost));
  PetscCall(MatSGDIARestoreArrayReadCUDA(Dw, &rv));
  PetscCall(PetscArraycmp(buf, back, nv, &eq));
  same = eq ? 1 : 0;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, PETSC_COMM_WORLD));
  PetscCheck(same, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MatSGDIAGetArrayReadCUDA does not return the values written through MatSGDIAGetArrayWriteCUDA");
  PetscCall(Record(c, "MatSGDIAGetArrayReadCUDA returns the values written (exact)", 0.0));
  PetscCall(MatEqual(Dw, c->Ah, &eq));
  PetscCheck(eq, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MatEqual (a host read) does not see the values written through MatSGDIAGetArrayWriteCUDA");
  PetscCall(Record(c, "MatEqual (host read) after MatSGDIAGetArrayWriteCUDA (exact)", 0.0));

  /* read-write: double every value on the device */
  PetscCall(MatSGDIAGetArrayCUDA(Dw, &dv));
  PetscCallCUDA(cudaDeviceSynchronize());
  if (nv) PetscCallCUDA(cudaMemcpy(back, dv, (size_t)nv * sizeof(PetscScalar), cudaMemcpyDeviceToHost));
  for (PetscInt i = 0; i < nv; i++) back[i] *= 2.0;
  if (nv) PetscCallCUDA(cudaMemcpy(dv, back, (size_t)nv * sizeof(PetscScalar), cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscCall(MatSGDIARestoreArrayCUDA(Dw, &dv));
  PetscCall(MatDuplicate(c->Ah, MAT_COPY_VALUES, &Hs));
  PetscCall(MatScale(Hs, 2.0));
  PetscCall(CheckMatOnDevice(Dw, "MatSGDIARestoreArrayCUDA"));
  PetscCall(CheckSame(c, Dw, Hs, "values changed through MatSGDIAGetArrayCUDA (read-write)"));
  PetscCall(PetscFree2(buf, back));
  PetscCall(MatDestroy(&Hs));
  PetscCall(MatDestroy(&Dw));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the device CSR (one rank) ---- */

/* csr of the device matrix against MatConvert() of the host one to AIJ: the same structure exactly, values to -tol */
static PetscErrorCode CompareDeviceCSR(Ctx *c, const GpukitDeviceCSR *csr, const char *what)
{
  Mat                Aij;
  PetscInt           m, n, rstart, nbad = 0;
  int               *rowptr, *colidx;
  PetscScalar       *val;
  PetscReal          err = 0.0, ref = 0.0;
  char               msg[256];

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(c->Ad, &m, &n));
  PetscCall(MatGetOwnershipRange(c->Ad, &rstart, NULL));
  PetscCheck(csr->m == m && csr->n == n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the device CSR is %" PetscInt_FMT " x %" PetscInt_FMT ", the matrix %" PetscInt_FMT " x %" PetscInt_FMT, what, csr->m, csr->n, m, n);
  PetscCall(PetscMalloc3(m + 1, &rowptr, PetscMax(csr->nnz, 1), &colidx, PetscMax(csr->nnz, 1), &val));
  PetscCallCUDA(cudaDeviceSynchronize()); /* the CSR kernels ran on PETSc's stream */
  PetscCallCUDA(cudaMemcpy(rowptr, csr->rowptr, (size_t)(m + 1) * sizeof(int), cudaMemcpyDeviceToHost));
  PetscCheck(rowptr[0] == 0 && rowptr[m] == csr->nnz, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the device CSR's row pointers run from %d to %d, for %" PetscInt_FMT " entries", what, rowptr[0], rowptr[m], csr->nnz);
  if (csr->nnz) {
    PetscCallCUDA(cudaMemcpy(colidx, csr->colidx, (size_t)csr->nnz * sizeof(int), cudaMemcpyDeviceToHost));
    PetscCallCUDA(cudaMemcpy(val, csr->val, (size_t)csr->nnz * sizeof(PetscScalar), cudaMemcpyDeviceToHost));
  }
  PetscCall(MatConvert(c->Ah, MATAIJ, MAT_INITIAL_MATRIX, &Aij));
  for (PetscInt i = 0; i < m; i++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscCall(MatGetRow(Aij, rstart + i, &nc, &cols, &vals));
    if (nc != rowptr[i + 1] - rowptr[i]) nbad++;
    else
      for (PetscInt t = 0; t < nc; t++) {
        if (cols[t] != colidx[rowptr[i] + t]) nbad++;
        err = PetscMax(err, PetscAbsScalar(vals[t] - val[rowptr[i] + t]));
        ref = PetscMax(ref, PetscAbsScalar(vals[t]));
      }
    PetscCall(MatRestoreRow(Aij, rstart + i, &nc, &cols, &vals));
  }
  PetscCall(MatDestroy(&Aij));
  PetscCall(PetscFree3(rowptr, colidx, val));
  PetscCheck(!nbad, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: %" PetscInt_FMT " rows or columns of the device CSR differ from MatConvert() to AIJ", what, nbad);
  PetscCheck(ref > 0.0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the matrix is zero: the comparison would prove nothing", what);
  PetscCheck(err <= c->tol * ref, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the device CSR's values differ from AIJ's by %g (relative), above %g", what, (double)(err / ref), (double)c->tol);
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "device CSR = MatConvert to AIJ: %s (%" PetscInt_FMT " entries)", what, csr->nnz));
  PetscCall(Record(c, msg, err / ref));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestDeviceCSR(Ctx *c)
{
  GpukitMatCaps   caps;
  GpukitDeviceCSR csr, again;
  PetscLogEvent   evcsr, evdown;
  PetscInt        f0, f1, d0, d1, u0, u1, rstart;
  PetscScalar     seven = 7.0;

  PetscFunctionBegin;
  PetscCall(GpukitMatGetCaps(c->Ad, &caps));
  if (c->size > 1) {
    PetscCheck(!caps.devicecsr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MATMPISGDIACUDA says it gives a device CSR; only MATSEQSGDIACUDA does");
    PetscCall(Record(c, "no device CSR on several ranks", 0.0));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(caps.devicecsr && caps.device, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "GpukitMatGetCaps: MATSEQSGDIACUDA must be a device matrix that gives a device CSR (device %d, device CSR %d)", (int)caps.device, (int)caps.devicecsr);
  PetscCall(MatBindToCPU(c->Ad, PETSC_TRUE));
  PetscCall(GpukitMatGetCaps(c->Ad, &caps));
  PetscCheck(!caps.devicecsr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MATSEQSGDIACUDA bound to the CPU still says it gives a device CSR");
  PetscCall(MatBindToCPU(c->Ad, PETSC_FALSE));
  PetscCall(PetscLogEventGetId("SGDIACSRCUDA", &evcsr));
  PetscCall(PetscLogEventGetId("SGDIACopyFromGPU", &evdown));

  /* values changed on the device: the CSR is made there, without a copy to the host (the mask stays GPU) */
  PetscCall(MatScale(c->Ad, 0.5));
  PetscCall(MatScale(c->Ah, 0.5));
  PetscCall(GKLogEventCount(evcsr, &f0));
  PetscCall(GKLogEventCount(evdown, &d0));
  PetscCall(GKLogEventCount(c->evup, &u0));
  PetscCall(GpukitMatGetDeviceCSR(c->Ad, &csr));
  PetscCall(CheckMatOnDevice(c->Ad, "GpukitMatGetDeviceCSR after a device MatScale"));
  PetscCall(GKLogEventCount(evdown, &d1));
  PetscCall(GKLogEventCount(c->evup, &u1));
  PetscCheck(d1 == d0 && u1 == u0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "GpukitMatGetDeviceCSR of a matrix valid on the device copied it %" PetscInt_FMT " times to the host and %" PetscInt_FMT " times to the device, expected no copy", d1 - d0, u1 - u0);
  PetscCall(CompareDeviceCSR(c, &csr, "after a device MatScale"));
  PetscCall(GpukitMatRestoreDeviceCSR(c->Ad, &csr));

  /* unchanged matrix: the same arrays, no new fill */
  PetscCall(GKLogEventCount(evcsr, &f1));
  PetscCheck(f1 == f0 + 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The first GpukitMatGetDeviceCSR filled the CSR %" PetscInt_FMT " times, expected once", f1 - f0);
  PetscCall(GpukitMatGetDeviceCSR(c->Ad, &csr));
  PetscCall(GpukitMatGetDeviceCSR(c->Ad, &again));
  PetscCheck(csr.val == again.val && csr.rowptr == again.rowptr && csr.colidx == again.colidx, PETSC_COMM_SELF, PETSC_ERR_PLIB, "GpukitMatGetDeviceCSR of an unchanged matrix gave other arrays");
  PetscCall(GpukitMatRestoreDeviceCSR(c->Ad, &again));
  PetscCall(GpukitMatRestoreDeviceCSR(c->Ad, &csr));
  PetscCall(GKLogEventCount(evcsr, &f0));
  PetscCheck(f0 == f1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "GpukitMatGetDeviceCSR of an unchanged matrix filled the CSR again (%" PetscInt_FMT " times)", f0 - f1);
  PetscCall(Record(c, "device CSR kept while the matrix is unchanged", 0.0));

  /* a device change (shift) and a host change (MatSetValues + assembly): the CSR follows each */
  PetscCall(MatShift(c->Ad, 1.5));
  PetscCall(MatShift(c->Ah, 1.5));
  PetscCall(GpukitMatGetDeviceCSR(c->Ad, &csr));
  PetscCall(CompareDeviceCSR(c, &csr, "after a device MatShift"));
  PetscCall(GpukitMatRestoreDeviceCSR(c->Ad, &csr));
  PetscCall(MatGetOwnershipRange(c->Ad, &rstart, NULL));
  PetscCall(MatSetValues(c->Ad, 1, &rstart, 1, &rstart, &seven, INSERT_VALUES));
  PetscCall(MatSetValues(c->Ah, 1, &rstart, 1, &rstart, &seven, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(c->Ad, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(c->Ad, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(c->Ah, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(c->Ah, MAT_FINAL_ASSEMBLY));
  PetscCall(GpukitMatGetDeviceCSR(c->Ad, &csr));
  PetscCall(CompareDeviceCSR(c, &csr, "after a host MatSetValues and assembly"));
  PetscCall(GpukitMatRestoreDeviceCSR(c->Ad, &csr));
  PetscCall(CheckSame(c, c->Ad, c->Ah, "after the device CSR tests"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ScaleBoth(Mat D, Mat H, PetscScalar a)
{
  PetscFunctionBegin;
  PetscCall(MatScale(D, a));
  PetscCall(MatScale(H, a));
  PetscCall(CheckMatOnDevice(D, "offload: MatScale"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Offload mask: after a change on the device, each host read sees the new values; after a change on the host, the
   next product sees it (one upload). The two matrices hold the same values bit for bit (a convert, then the same
   exact scalings), so the host reads must agree exactly. Each read follows a fresh device change. */
static PetscErrorCode TestOffload(Ctx *c)
{
  Mat         H2, D2, Ca, Cb;
  PetscBool   eq;
  PetscInt    rstart, rend, N, c0, c1, rows[2], nrow;
  PetscReal   nd, nh, diff = 0.0, worst = 0.0;
  NormType    types[3] = {NORM_FROBENIUS, NORM_1, NORM_INFINITY};
  PetscScalar one      = 1.25;

  PetscFunctionBegin;
  PetscCall(MatDuplicate(c->Ah, MAT_COPY_VALUES, &H2));
  PetscCall(MatConvert(H2, MATSGDIACUDA, MAT_INITIAL_MATRIX, &D2));
  PetscCall(CheckMult(c, D2, H2, "offload: a converted copy"));
  PetscCall(MatGetOwnershipRange(H2, &rstart, &rend));
  PetscCall(MatGetSize(H2, &N, NULL));

  /* MatGetRow */
  PetscCall(ScaleBoth(D2, H2, 3.0));
  for (PetscInt row = rstart; row < rend; row++) {
    PetscInt           n1, n2;
    const PetscInt    *c1s, *c2s;
    const PetscScalar *v1, *v2;
    PetscCall(MatGetRow(D2, row, &n1, &c1s, &v1));
    PetscCall(MatGetRow(H2, row, &n2, &c2s, &v2));
    PetscCheck(n1 == n2, PETSC_COMM_SELF, PETSC_ERR_PLIB, "offload: MatGetRow of row %" PetscInt_FMT " gives %" PetscInt_FMT " entries, the host matrix %" PetscInt_FMT, row, n1, n2);
    for (PetscInt j = 0; j < n1; j++) {
      PetscCheck(c1s[j] == c2s[j], PETSC_COMM_SELF, PETSC_ERR_PLIB, "offload: MatGetRow of row %" PetscInt_FMT ": column %" PetscInt_FMT " against %" PetscInt_FMT, row, c1s[j], c2s[j]);
      diff = PetscMax(diff, PetscAbsScalar(v1[j] - v2[j]));
    }
    PetscCall(MatRestoreRow(H2, row, &n2, &c2s, &v2));
    PetscCall(MatRestoreRow(D2, row, &n1, &c1s, &v1));
  }
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &diff, 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  PetscCheck(diff == 0.0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "offload: MatGetRow after a device MatScale differs from the host matrix by %g: the host read saw stale values", (double)diff);
  PetscCall(Record(c, "offload: MatGetRow after a device MatScale (exact)", diff));

  /* MatNorm: the first read after the change, then the other norms */
  PetscCall(ScaleBoth(D2, H2, 0.5));
  for (int t = 0; t < 3; t++) {
    PetscCall(MatNorm(D2, types[t], &nd));
    PetscCall(MatNorm(H2, types[t], &nh));
    PetscCheck(PetscAbsReal(nd - nh) <= c->tol * nh, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "offload: MatNorm %s after a device MatScale is %g, the host matrix's %g", NormTypes[types[t]], (double)nd, (double)nh);
    worst = PetscMax(worst, PetscAbsReal(nd - nh) / nh);
  }
  PetscCall(Record(c, "offload: MatNorm (Frobenius, 1, infinity) after a device MatScale", worst));

  /* MatConvert to AIJ */
  PetscCall(ScaleBoth(D2, H2, -2.0));
  PetscCall(MatConvert(D2, MATAIJ, MAT_INITIAL_MATRIX, &Ca));
  PetscCall(MatConvert(H2, MATAIJ, MAT_INITIAL_MATRIX, &Cb));
  PetscCall(MatEqual(Ca, Cb, &eq));
  PetscCheck(eq, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "offload: MatConvert to MATAIJ after a device MatScale does not give the host matrix's values");
  PetscCall(MatDestroy(&Ca));
  PetscCall(MatDestroy(&Cb));
  PetscCall(Record(c, "offload: MatConvert to MATAIJ after a device MatScale (exact)", 0.0));

  /* MatEqual with the host twin */
  PetscCall(ScaleBoth(D2, H2, 1.5));
  PetscCall(MatEqual(D2, H2, &eq));
  PetscCheck(eq, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "offload: MatEqual(device matrix, host twin) is false after the same MatScale on both");
  PetscCall(Record(c, "offload: MatEqual with the host twin after a device MatScale (exact)", 0.0));

  /* a host change right after a device change: the host insertion must start from the device values, and the
     next product must see it, with exactly one upload on each rank. Rank 0 inserts into its first row and into rank 1's
     first row (stashed, sent at assembly), so rank 1's values change through the assembly alone; ranks past 1 insert
     into their own first row. */
  PetscCall(ScaleBoth(D2, H2, 2.0));
  PetscCall(GKLogEventCount(c->evup, &c0));
  nrow = 0;
  if (c->rank == 0) {
    rows[nrow++] = rstart;
    if (c->size > 1) rows[nrow++] = rend % N;
  } else if (c->rank > 1) rows[nrow++] = rstart; /* ranks past 1 change their own rows, so that every rank uploads once */
  for (PetscInt i = 0; i < nrow; i++) {
    PetscCall(MatSetValues(D2, 1, &rows[i], 1, &rows[i], &one, ADD_VALUES));
    PetscCall(MatSetValues(H2, 1, &rows[i], 1, &rows[i], &one, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(D2, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(D2, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(H2, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(H2, MAT_FINAL_ASSEMBLY));
  PetscCall(CheckMult(c, D2, H2, "offload: after a device MatScale then MatSetValues + assembly"));
  PetscCall(GKLogEventCount(c->evup, &c1));
  PetscCheck(c1 == c0 + 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "offload: the product after a host change copied the matrix to the GPU %" PetscInt_FMT " times, expected once", c1 - c0);
  PetscCall(CheckMatValues(c, D2, H2, "offload: after a device MatScale then MatSetValues + assembly"));
  PetscCall(MatDestroy(&D2));
  PetscCall(MatDestroy(&H2));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* COO assembly: the COO list of every (sub-sampled) coupling of every point of the ghosted box, so that on several
   ranks some rows belong to another rank (and on one periodic rank, ghost points repeat owned rows); some couplings
   left out (INSERT_VALUES must zero them), a quarter of the entries given twice (summed), and entries with a negative
   row or column (ignored). The reference: the same entries through MatSetValues(ADD_VALUES) into the host type. */
static PetscErrorCode TestCOO(Ctx *c)
{
  DM                     da = c->da;
  PetscInt               dim, dof, sw, gxs[3], gxm[3], ng, k = 0, w, n = 0, stride, *off, *li = NULL, *lj = NULL, *gi, *gj, ndup, nneg, nco, *ci, *cj;
  DMDAStencilType        st;
  ISLocalToGlobalMapping ltog;
  PetscScalar           *vals[3], *dvals[2];
  Mat                    Hc, Dc;

  PetscFunctionBegin;
  PetscCall(DMDAGetInfo(da, &dim, NULL, NULL, NULL, NULL, NULL, NULL, &dof, &sw, NULL, NULL, NULL, &st));
  PetscCall(DMDAGetGhostCorners(da, &gxs[0], &gxs[1], &gxs[2], &gxm[0], &gxm[1], &gxm[2]));
  for (PetscInt d = dim; d < 3; d++) {
    gxs[d] = 0;
    gxm[d] = 1;
  }
  w = 2 * sw + 1;
  PetscCall(PetscMalloc1(3 * w * w * w, &off));
  for (PetscInt dz = (dim > 2 ? -sw : 0); dz <= (dim > 2 ? sw : 0); dz++)
    for (PetscInt dy = (dim > 1 ? -sw : 0); dy <= (dim > 1 ? sw : 0); dy++)
      for (PetscInt dx = -sw; dx <= sw; dx++) {
        if (st == DMDA_STENCIL_STAR && (dx != 0) + (dy != 0) + (dz != 0) > 1) continue;
        off[3 * k]     = dx;
        off[3 * k + 1] = dy;
        off[3 * k + 2] = dz;
        k++;
      }
  ng     = gxm[0] * gxm[1] * gxm[2];
  stride = 1 + (ng * k * dof * dof) / 200000; /* keep the list near 200000 entries */
  for (int pass = 0; pass < 2; pass++) {
    n = 0;
    for (PetscInt l = 0; l < ng; l++) {
      const PetscInt q[3] = {l % gxm[0], (l / gxm[0]) % gxm[1], l / (gxm[0] * gxm[1])};
      for (PetscInt s = 0; s < k; s++) {
        PetscInt  b[3], lb;
        PetscBool in = PETSC_TRUE;
        if ((l + s) % stride) continue;
        for (PetscInt d = 0; d < 3; d++) {
          b[d] = q[d] + off[3 * s + d];
          if (b[d] < 0 || b[d] >= gxm[d]) in = PETSC_FALSE;
        }
        if (!in) continue;
        lb = b[0] + gxm[0] * (b[1] + gxm[1] * b[2]);
        for (PetscInt r = 0; r < dof; r++)
          for (PetscInt cc = 0; cc < dof; cc++) {
            if ((7 * l + 3 * s + r + 2 * cc) % 5 == 0) continue; /* left out */
            if (pass) {
              li[n] = l * dof + r;
              lj[n] = lb * dof + cc;
            }
            n++;
          }
      }
    }
    if (!pass) PetscCall(PetscMalloc4(PetscMax(n, 1), &li, PetscMax(n, 1), &lj, PetscMax(n, 1), &gi, PetscMax(n, 1), &gj));
  }
  PetscCall(DMGetLocalToGlobalMapping(da, &ltog));
  PetscCall(ISLocalToGlobalMappingApply(ltog, n, li, gi));
  PetscCall(ISLocalToGlobalMappingApply(ltog, n, lj, gj));
  ndup = (n + 3) / 4;
  nneg = 2 * ((n + 49) / 50);
  nco  = n + nneg + ndup;
  PetscCall(PetscMalloc2(PetscMax(nco, 1), &ci, PetscMax(nco, 1), &cj));
  for (PetscInt t = 0; t < n; t++) {
    ci[t] = gi[t];
    cj[t] = gj[t];
  }
  for (PetscInt t = 0, q = n; t < n; t += 50) { /* negative indices: ignored */
    ci[q]   = -1;
    cj[q++] = gj[t];
    ci[q]   = gi[t];
    cj[q++] = -1;
  }
  for (PetscInt t = 0, q = n + nneg; t < n; t += 4, q++) { /* duplicates, apart from the first entry */
    ci[q] = gi[t];
    cj[q] = gj[t];
  }
  for (int r = 0; r < 3; r++) {
    PetscCall(PetscMalloc1(PetscMax(nco, 1), &vals[r]));
    for (PetscInt t = 0; t < nco; t++) PetscCall(PetscRandomGetValue(c->rnd, &vals[r][t]));
  }
  for (int r = 0; r < 2; r++) {
    PetscCallCUDA(cudaMalloc((void **)&dvals[r], (size_t)PetscMax(nco, 1) * sizeof(PetscScalar)));
    if (nco) PetscCallCUDA(cudaMemcpy(dvals[r], vals[r], (size_t)nco * sizeof(PetscScalar), cudaMemcpyHostToDevice));
  }
  PetscCallCUDA(cudaDeviceSynchronize());

  PetscCall(DMSetMatType(da, MATSGDIA));
  PetscCall(DMCreateMatrix(da, &Hc));
  PetscCall(DMSetMatType(da, MATSGDIACUDA));
  PetscCall(DMCreateMatrix(da, &Dc));
  PetscCall(CheckType(Dc, PETSC_TRUE, "DMCreateMatrix for the COO assembly"));
  {
    PetscInt *ci2, *cj2; /* MatSetPreallocationCOO may change the arrays it is given */
    PetscCall(PetscMalloc2(PetscMax(nco, 1), &ci2, PetscMax(nco, 1), &cj2));
    PetscCall(PetscArraycpy(ci2, ci, nco));
    PetscCall(PetscArraycpy(cj2, cj, nco));
    PetscCall(MatSetPreallocationCOO(Dc, (PetscCount)nco, ci2, cj2));
    PetscCall(PetscFree2(ci2, cj2));
  }
  for (int round = 0; round < 3; round++) {
    const InsertMode mode = round == 1 ? ADD_VALUES : INSERT_VALUES;
    const char      *what[3] = {"MatSetValuesCOO INSERT_VALUES, values in device memory (duplicates, negative indices, left-out couplings, other ranks' rows)", "MatSetValuesCOO ADD_VALUES, values in device memory", "MatSetValuesCOO INSERT_VALUES, values in host memory"};

    if (mode == INSERT_VALUES) PetscCall(MatZeroEntries(Hc));
    for (PetscInt t = 0; t < nco; t++)
      if (ci[t] >= 0 && cj[t] >= 0) PetscCall(MatSetValues(Hc, 1, &ci[t], 1, &cj[t], &vals[round][t], ADD_VALUES));
    PetscCall(MatAssemblyBegin(Hc, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Hc, MAT_FINAL_ASSEMBLY));
    PetscCall(MatSetValuesCOO(Dc, round < 2 ? dvals[round] : vals[round], mode));
    PetscCall(CheckMatOnDevice(Dc, what[round]));
    PetscCall(CheckSame(c, Dc, Hc, what[round]));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  (COO list on rank 0: %" PetscInt_FMT " entries, %" PetscInt_FMT " repeated, %" PetscInt_FMT " with a negative index, one block in %" PetscInt_FMT ")\n", nco, ndup, nneg, stride));
  PetscCallCUDA(cudaDeviceSynchronize());
  for (int r = 0; r < 2; r++) PetscCallCUDA(cudaFree(dvals[r]));
  for (int r = 0; r < 3; r++) PetscCall(PetscFree(vals[r]));
  PetscCall(PetscFree2(ci, cj));
  PetscCall(PetscFree4(li, lj, gi, gj));
  PetscCall(PetscFree(off));
  PetscCall(MatDestroy(&Hc));
  PetscCall(MatDestroy(&Dc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A diagonally dominant operator through MatSetValuesStencil(ADD_VALUES), the same in both matrices: per component
   a 2*dim+1-point Laplacian (when the stencil has width 1 or more) plus 0.2 on the diagonal, with a first-order
   convection term beta along x (beta = 0: symmetric positive definite), and 0.1/dof coupling the components of a
   point symmetrically. */
static PetscErrorCode FillOperator(DM da, PetscReal beta, Mat A, Mat B)
{
  PetscInt       dim, dof, sw, M[3], xs[3], xm[3], n;
  DMBoundaryType bd[3];
  MatStencil     row, cols[64];
  PetscScalar    vals[64];

  PetscFunctionBegin;
  PetscCall(DMDAGetInfo(da, &dim, &M[0], &M[1], &M[2], NULL, NULL, NULL, &dof, &sw, &bd[0], &bd[1], &bd[2], NULL));
  PetscCall(DMDAGetCorners(da, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  for (PetscInt d = dim; d < 3; d++) {
    M[d]  = 1;
    xs[d] = 0;
    xm[d] = 1;
    bd[d] = DM_BOUNDARY_NONE;
  }
  for (PetscInt kk = xs[2]; kk < xs[2] + xm[2]; kk++)
    for (PetscInt j = xs[1]; j < xs[1] + xm[1]; j++)
      for (PetscInt i = xs[0]; i < xs[0] + xm[0]; i++)
        for (PetscInt r = 0; r < dof; r++) {
          const PetscInt g[3] = {i, j, kk};
          row.i               = i;
          row.j               = j;
          row.k               = kk;
          row.c               = r;
          n                   = 0;
          for (PetscInt cc = 0; cc < dof && n < 64; cc++) {
            cols[n]   = row;
            cols[n].c = cc;
            vals[n++] = cc == r ? (sw > 0 ? 2.0 * dim : 1.0) + 0.2 : 0.1 / dof;
          }
          for (PetscInt d = 0; sw > 0 && d < dim; d++)
            for (PetscInt sgn = -1; sgn <= 1; sgn += 2) {
              const PetscInt q = g[d] + sgn;
              if (bd[d] != DM_BOUNDARY_PERIODIC && (q < 0 || q >= M[d])) continue;
              if (n == 64) break;
              cols[n] = row;
              if (d == 0) cols[n].i = q;
              else if (d == 1) cols[n].j = q;
              else cols[n].k = q;
              vals[n++] = -1.0 + (d == 0 ? sgn * beta : 0.0);
            }
          PetscCall(MatSetValuesStencil(A, 1, &row, n, cols, vals, ADD_VALUES));
          PetscCall(MatSetValuesStencil(B, 1, &row, n, cols, vals, ADD_VALUES));
        }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* copy counters (CPU->GPU count, GPU->CPU count, GPU->CPU bytes) of this rank, from the events' perf info */
typedef struct {
  PetscLogDouble ksp[3], mdot[3], scatter[3];
} CopyCounts;

static PetscErrorCode EventCopies(const char *name, PetscLogDouble cnt[3])
{
  PetscLogEvent      ev;
  PetscEventPerfInfo info;

  PetscFunctionBegin;
  PetscCall(PetscLogEventGetId(name, &ev));
  if (ev < 0) PetscFunctionReturn(PETSC_SUCCESS); /* never registered: nothing logged */
  PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, ev, &info));
  cnt[0] += info.CpuToGpuCount;
  cnt[1] += info.GpuToCpuCount;
  cnt[2] += info.GpuToCpuSize;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* VecScatter events cover DMGlobalToLocal/DMLocalToGlobal; PetscSF's own events a direct PetscSF use (a scatter
   logs only its VecScatter events, so nothing is counted twice) */
static PetscErrorCode GetCopyCounts(CopyCounts *cc)
{
  const char *scatter[] = {"VecScatterBegin", "VecScatterEnd", "SFBcastBegin", "SFBcastEnd", "SFReduceBegin", "SFReduceEnd"};

  PetscFunctionBegin;
  PetscCall(PetscMemzero(cc, sizeof(*cc)));
  PetscCall(EventCopies("KSPSolve", cc->ksp));
  PetscCall(EventCopies("VecMDot", cc->mdot));
  for (int i = 0; i < 6; i++) PetscCall(EventCopies(scatter[i], cc->scatter));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Solve with the device matrix twice (set-up, then measured) and once with the host matrix (iterations), check the
   solution on the host, and the copies of the measured solve */
static PetscErrorCode TestSolve(Ctx *c, KSPType type, PetscReal beta, const char *prefix)
{
  Mat                Lh, Ld;
  KSP                kd, kh;
  Vec                xe, bd, xd, bh, xh, r;
  PetscInt           itsd, itsh, restart = 30;
  KSPConvergedReason reason;
  CopyCounts         c0, c1;
  PetscLogDouble     loc[5], glob[5], ksp_htod, ksp_dtoh, md_dtoh, md_bytes, sc_htod, sc_dtoh;
  PetscReal          rn, bn;
  KSP                ks[2];
  Mat                ms[2];

  PetscFunctionBegin;
  PetscCall(DMSetMatType(c->da, MATSGDIA));
  PetscCall(DMCreateMatrix(c->da, &Lh));
  PetscCall(DMSetMatType(c->da, MATSGDIACUDA));
  PetscCall(DMCreateMatrix(c->da, &Ld));
  PetscCall(FillOperator(c->da, beta, Lh, Ld));
  PetscCall(MatCreateVecs(Ld, &xd, &bd));
  PetscCall(VecDuplicate(xd, &xe));
  PetscCall(MatCreateVecs(Lh, &xh, &bh));
  PetscCall(VecDuplicate(bh, &r));
  PetscCall(VecSetRandom(xe, c->rnd));
  PetscCall(MatMult(Ld, xe, bd)); /* b on the device */
  PetscCall(GKCopyValues(bd, bh));

  ms[0] = Ld;
  ms[1] = Lh;
  for (int i = 0; i < 2; i++) {
    PC pc;
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ks[i]));
    PetscCall(KSPSetOperators(ks[i], ms[i], ms[i]));
    PetscCall(KSPSetType(ks[i], type));
    PetscCall(KSPGetPC(ks[i], &pc));
    PetscCall(PCSetType(pc, PCJACOBI));
    PetscCall(KSPSetTolerances(ks[i], 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
    PetscCall(KSPSetOptionsPrefix(ks[i], prefix));
    PetscCall(KSPSetFromOptions(ks[i]));
  }
  kd = ks[0];
  kh = ks[1];
  PetscCall(KSPSolve(kd, bd, xd)); /* set-up: PCSetUp, work vectors */
  PetscCall(GetCopyCounts(&c0));
  PetscCall(KSPSolve(kd, bd, xd)); /* measured */
  PetscCall(GetCopyCounts(&c1));
  PetscCall(KSPGetIterationNumber(kd, &itsd));
  PetscCall(KSPGetConvergedReason(kd, &reason));
  PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "KSPSolve %s with MATSGDIACUDA did not converge: %s after %" PetscInt_FMT " iterations", type, KSPConvergedReasons[reason], itsd);
  if (!strcmp(type, KSPGMRES)) PetscCall(KSPGMRESGetRestart(kd, &restart));

  /* the solution, checked on the host */
  PetscCall(GKCopyValues(xd, xh));
  PetscCall(MatMult(Lh, xh, r));
  PetscCall(VecAXPY(r, -1.0, bh));
  PetscCall(VecNorm(r, NORM_2, &rn));
  PetscCall(VecNorm(bh, NORM_2, &bn));
  PetscCheck(rn <= 1e-6 * bn, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "KSPSolve %s with MATSGDIACUDA: |b - A x| / |b| = %g on the host", type, (double)(rn / bn));
  PetscCall(VecSet(xh, 0.0));
  PetscCall(KSPSolve(kh, bh, xh));
  PetscCall(KSPGetIterationNumber(kh, &itsh));
  PetscCheck(PetscAbsInt(itsd - itsh) <= 2 + itsh / 10, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "KSPSolve %s: %" PetscInt_FMT " iterations with MATSGDIACUDA, %" PetscInt_FMT " with the host MATSGDIA", type, itsd, itsh);

  /* the copies of the measured solve, worst rank */
  loc[0] = c1.ksp[0] - c0.ksp[0] - (c1.scatter[0] - c0.scatter[0]);                                     /* CPU->GPU, not the scatter's */
  loc[1] = c1.ksp[1] - c0.ksp[1] - (c1.scatter[1] - c0.scatter[1]) - (c1.mdot[1] - c0.mdot[1]);          /* GPU->CPU, neither the scatter's nor VecMDot's */
  loc[2] = c1.mdot[2] - c0.mdot[2] - (c1.mdot[1] - c0.mdot[1]) * (restart + 1) * sizeof(PetscScalar); /* > 0: VecMDot read back more than its dot products */
  loc[3] = c1.scatter[0] - c0.scatter[0];
  loc[4] = c1.scatter[1] - c0.scatter[1];
  PetscCall(MPIU_Allreduce(loc, glob, 5, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD)); /* PetscLogDouble is double */
  ksp_htod = c1.ksp[0] - c0.ksp[0];
  ksp_dtoh = c1.ksp[1] - c0.ksp[1];
  md_dtoh  = c1.mdot[1] - c0.mdot[1];
  md_bytes = c1.mdot[2] - c0.mdot[2];
  sc_htod  = c1.scatter[0] - c0.scatter[0];
  sc_dtoh  = c1.scatter[1] - c0.scatter[1];
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  KSPSolve %s + jacobi: %" PetscInt_FMT " iterations (host MATSGDIA %" PetscInt_FMT "); copies in the measured solve on rank 0: CPU->GPU %.0f, GPU->CPU %.0f, of which VecMDot results %.0f (%.0f bytes) and ghost exchange %.0f CPU->GPU / %.0f GPU->CPU; other copies on the worst rank %.0f / %.0f\n", type, itsd,
                        itsh, ksp_htod, ksp_dtoh, md_dtoh, md_bytes, sc_htod, sc_dtoh, glob[0], glob[1]));
  PetscCheck(glob[0] == 0.0 && glob[1] == 0.0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "KSPSolve %s with MATSGDIACUDA copied between CPU and GPU inside the solve: %.0f CPU->GPU and %.0f GPU->CPU copies besides the ghost exchange and VecMDot's dot products (worst rank); run with -log_view to see which event", type, glob[0], glob[1]);
  PetscCheck(glob[2] <= 0.0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "KSPSolve %s: VecMDot copied more than its dot products from the GPU", type);
  if (c->size == 1) PetscCheck(glob[3] == 0.0 && glob[4] == 0.0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "KSPSolve %s on one rank: the ghost exchange copied between CPU and GPU (%.0f / %.0f)", type, glob[3], glob[4]);
  PetscCall(Record(c, !strcmp(type, KSPCG) ? "KSPSolve CG + Jacobi: no CPU<->GPU copy but the ghost exchange's" : "KSPSolve GMRES + Jacobi: no CPU<->GPU copy but the ghost exchange's and VecMDot's dot products", 0.0));

  PetscCall(KSPDestroy(&kd));
  PetscCall(KSPDestroy(&kh));
  PetscCall(VecDestroy(&xe));
  PetscCall(VecDestroy(&bd));
  PetscCall(VecDestroy(&xd));
  PetscCall(VecDestroy(&bh));
  PetscCall(VecDestroy(&xh));
  PetscCall(VecDestroy(&r));
  PetscCall(MatDestroy(&Lh));
  PetscCall(MatDestroy(&Ld));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif /* PetscDefined(HAVE_CUDA) */

int main(int argc, char **argv)
{
  const char     *stencils[] = {"star", "box"}, *bds[] = {"none", "periodic"};
  PetscInt        dim = 2, dof = 1, sw = 1, n = 16, ist = 0, ib[3] = {0, 0, 0}, N, c0, c1;
  DMBoundaryType  bd[3];
  Ctx             ctx, *c = &ctx;
  Mat             Ac, Ab;
  PetscBool       ok;
  VecType         vtype;
  char            devname[256] = "unknown", tunefake[64] = "", tuneexpect[64] = "";
  PetscBool       tunecheck = PETSC_FALSE, tuneset = PETSC_FALSE, tunecached = PETSC_FALSE;
  TuneModel       model     = {0, 256};

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCheck(PetscDefined(HAVE_CUDA), PETSC_COMM_WORLD, PETSC_ERR_SUP, "sgdia_cuda tests MATSGDIACUDA and needs a PETSc configured with CUDA (make petsc-cuda; make PETSC_DIR=.../petsc-cuda tests)");
  PetscCall(PetscMemzero(c, sizeof(*c)));
  c->tol = 1e-13;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &c->size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &c->rank));
  PetscCall(PetscLogDefaultBegin()); /* to count the uploads and copies; harmless under -log_view */
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "sgdia_cuda options", NULL);
  PetscCall(PetscOptionsRangeInt("-dim", "Grid dimension", NULL, dim, &dim, NULL, 1, 3));
  PetscCall(PetscOptionsRangeInt("-dof", "Degrees of freedom per grid point", NULL, dof, &dof, NULL, 1, 64));
  PetscCall(PetscOptionsEList("-stencil", "Stencil type", NULL, stencils, 2, stencils[ist], &ist, NULL));
  PetscCall(PetscOptionsRangeInt("-sw", "Stencil width", NULL, sw, &sw, NULL, 0, 8));
  PetscCall(PetscOptionsEList("-bx", "Boundary in x", NULL, bds, 2, bds[ib[0]], &ib[0], NULL));
  PetscCall(PetscOptionsEList("-by", "Boundary in y", NULL, bds, 2, bds[ib[1]], &ib[1], NULL));
  PetscCall(PetscOptionsEList("-bz", "Boundary in z", NULL, bds, 2, bds[ib[2]], &ib[2], NULL));
  PetscCall(PetscOptionsRangeInt("-n", "Grid points per dimension", NULL, n, &n, NULL, 1, 1 << 24));
  PetscCall(PetscOptionsReal("-tol", "Relative tolerance of every comparison", NULL, c->tol, &c->tol, NULL));
  PetscCall(PetscOptionsString("-tune_fake", "The product kernel <variant>:<block> that the tuner's model clock makes the fastest", NULL, tunefake, tunefake, sizeof(tunefake), NULL));
  PetscCall(PetscOptionsString("-tune_expect", "The choice <variant>:<block> the main matrix's tuner must make, or none", NULL, tuneexpect, tuneexpect, sizeof(tuneexpect), &tuneset));
  PetscCall(PetscOptionsBool("-tune_check", "The main matrix's tuner must make a choice (any)", NULL, tunecheck, &tunecheck, NULL));
  PetscCall(PetscOptionsBool("-tune_expect_cached", "The tuner's choice must come from the cache, with no timed call", NULL, tunecached, &tunecached, NULL));
  PetscOptionsEnd();
  if (tunefake[0]) { /* before any product: the model clock decides */
    PetscCall(TuneParse(tunefake, &model.variant, &model.block));
    PetscCall(GpukitTuneSetTestTimer(TuneModelTime, &model));
    if (!tuneset) PetscCall(PetscStrncpy(tuneexpect, tunefake, sizeof(tuneexpect)));
    tunecheck = PETSC_TRUE;
  }
  tunecheck = (PetscBool)(tunecheck || tuneset || tunecached);
  for (PetscInt d = 0; d < 3; d++) bd[d] = ib[d] ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE;

  if (dim == 1) PetscCall(DMDACreate1d(PETSC_COMM_WORLD, bd[0], n, dof, sw, NULL, &c->da));
  else if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, bd[0], bd[1], ist ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, n, n, PETSC_DECIDE, PETSC_DECIDE, dof, sw, NULL, NULL, &c->da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, bd[0], bd[1], bd[2], ist ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, n, n, n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, dof, sw, NULL, NULL, NULL, &c->da));
  PetscCall(DMSetVecType(c->da, VECCUDA)); /* -dm_vec_type may override */
  PetscCall(DMSetFromOptions(c->da));
  PetscCall(DMSetUp(c->da));
  {
    Vec l;
    PetscCall(DMGetLocalVector(c->da, &l));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)l, &c->devlocal, VECSEQCUDA, VECMPICUDA, VECCUDA, ""));
    PetscCall(DMRestoreLocalVector(c->da, &l));
  }

  /* the host reference and the device matrix, with the same values */
  PetscCall(DMSetMatType(c->da, MATSGDIA));
  PetscCall(DMCreateMatrix(c->da, &c->Ah));
  PetscCall(DMSetMatType(c->da, MATSGDIACUDA));
  PetscCall(DMCreateMatrix(c->da, &c->Ad));
  PetscCall(CheckType(c->Ah, PETSC_FALSE, "DMCreateMatrix with MATSGDIA"));
  PetscCall(CheckType(c->Ad, PETSC_TRUE, "DMCreateMatrix with MATSGDIACUDA"));
  PetscCall(MatGetSize(c->Ah, &N, NULL));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &c->rnd));
  PetscCall(PetscRandomSetInterval(c->rnd, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(c->rnd, 1234567 + 1000 * (unsigned long)c->rank));
  PetscCall(PetscRandomSeed(c->rnd));
  PetscCall(PetscLogEventGetId("SGDIACopyToGPU", &c->evup));
  PetscCall(GKLogEventCount(c->evup, &c0)); /* host assembly, then one upload in all (at the assembly or at the product) */
  PetscCall(FillRandom(c->da, c->rnd, c->Ah, c->Ad));
  PetscCall(MatEqual(c->Ah, c->Ad, &ok));
  PetscCheck(ok, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "The host copies of the two matrices differ after MatSetValuesStencil with the same values");

  PetscCall(MatCreateVecs(c->Ah, &c->xh, &c->yh));
  PetscCall(VecDuplicate(c->yh, &c->wh));
  PetscCall(MatCreateVecs(c->Ad, &c->xd, &c->yd));
  PetscCall(VecDuplicate(c->yd, &c->wd));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)c->yd, &ok, VECSEQCUDA, VECMPICUDA, ""));
  PetscCall(VecGetType(c->yd, &vtype));
  PetscCheck(ok, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MatCreateVecs of MATSGDIACUDA gave a vector of type %s, expected VECCUDA", vtype);

  /* MatMult: one upload since the assembly; a second product with the matrix unchanged makes none */
  PetscCall(CheckMult(c, c->Ad, c->Ah, "first product"));
  PetscCall(GKLogEventCount(c->evup, &c1));
  PetscCheck(c1 == c0 + 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The assembly, MatEqual and the first MatMult copied the matrix to the GPU %" PetscInt_FMT " times, expected once", c1 - c0);
  PetscCall(CheckMult(c, c->Ad, c->Ah, "second product"));
  PetscCall(GKLogEventCount(c->evup, &c0));
  PetscCheck(c0 == c1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A MatMult with the matrix unchanged copied it to the GPU again (%" PetscInt_FMT " copies)", c0 - c1);
  if (tunecheck) PetscCall(TestTuner(c, tuneexpect, tunecached));

  /* MatMultAdd into a third vector, then in place */
  PetscCall(FreshInput(c->rnd, c->xh, c->xd));
  PetscCall(FreshInput(c->rnd, c->wh, c->wd));
  PetscCall(VecSet(c->yd, 1.0e300));
  PetscCall(MatMultAdd(c->Ah, c->xh, c->wh, c->yh));
  PetscCall(MatMultAdd(c->Ad, c->xd, c->wd, c->yd));
  PetscCall(CheckOnDevice(c->yd, "MatMultAdd"));
  PetscCall(CheckClose(c, c->yd, c->yh, "MatMultAdd"));
  PetscCall(MatMultAdd(c->Ah, c->xh, c->wh, c->wh));
  PetscCall(MatMultAdd(c->Ad, c->xd, c->wd, c->wd));
  PetscCall(CheckOnDevice(c->wd, "MatMultAdd in place"));
  PetscCall(CheckClose(c, c->wd, c->wh, "MatMultAdd in place (y = z)"));

  /* MatGetDiagonal */
  PetscCall(VecSet(c->yd, 1.0e300));
  PetscCall(MatGetDiagonal(c->Ah, c->yh));
  PetscCall(MatGetDiagonal(c->Ad, c->yd));
  PetscCall(CheckOnDevice(c->yd, "MatGetDiagonal"));
  PetscCall(CheckClose(c, c->yd, c->yh, "MatGetDiagonal"));

  /* MatScale runs on the device: the next product makes no upload */
  PetscCall(GKLogEventCount(c->evup, &c0));
  PetscCall(MatScale(c->Ah, 2.5));
  PetscCall(MatScale(c->Ad, 2.5));
#if PetscDefined(HAVE_CUDA)
  PetscCall(CheckMatOnDevice(c->Ad, "MatScale"));
  PetscCall(CheckMatValues(c, c->Ad, c->Ah, "MatScale"));
#endif
  PetscCall(CheckMult(c, c->Ad, c->Ah, "MatScale"));
  PetscCall(GKLogEventCount(c->evup, &c1));
  PetscCheck(c1 == c0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatScale on the device and a MatMult copied the matrix to the GPU %" PetscInt_FMT " times, expected no copy", c1 - c0);

#if PetscDefined(HAVE_CUDA)
  PetscCall(TestTranspose(c));
  PetscCall(TestDiagonal(c));
  PetscCall(TestWholeMatrix(c));
  PetscCall(TestDirichlet(c));
  PetscCall(TestInvertBlockDiagonal(c));
#endif

  /* MatConvert both ways */
  PetscCall(MatConvert(c->Ah, MATSGDIACUDA, MAT_INITIAL_MATRIX, &Ac));
  PetscCall(CheckType(Ac, PETSC_TRUE, "MatConvert MATSGDIA -> MATSGDIACUDA"));
  PetscCall(CheckMult(c, Ac, c->Ah, "MatConvert(MATSGDIA -> MATSGDIACUDA)"));
  PetscCall(MatConvert(Ac, MATSGDIA, MAT_INPLACE_MATRIX, &Ac));
  PetscCall(CheckType(Ac, PETSC_FALSE, "MatConvert MATSGDIACUDA -> MATSGDIA in place"));
  PetscCall(MatConvert(c->Ad, MATSGDIA, MAT_INITIAL_MATRIX, &Ab));
  PetscCall(CheckType(Ab, PETSC_FALSE, "MatConvert MATSGDIACUDA -> MATSGDIA"));
  PetscCall(MatEqual(Ab, c->Ah, &ok));
  PetscCheck(ok, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MatConvert(MATSGDIACUDA -> MATSGDIA) changed the values");
  PetscCall(MatEqual(Ac, c->Ah, &ok));
  PetscCheck(ok, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MatConvert(MATSGDIA -> MATSGDIACUDA -> MATSGDIA) changed the values");
  PetscCall(MatDestroy(&Ab));
  PetscCall(MatDestroy(&Ac));

  /* bound to the CPU: host kernel on the CUDA vectors, same result */
  PetscCall(MatBindToCPU(c->Ad, PETSC_TRUE));
  PetscCall(FreshInput(c->rnd, c->xh, c->xd));
  PetscCall(VecSet(c->yd, 1.0e300));
  PetscCall(MatMult(c->Ah, c->xh, c->yh));
  PetscCall(MatMult(c->Ad, c->xd, c->yd));
  PetscCall(CheckClose(c, c->yd, c->yh, "MatMult bound to the CPU"));
  PetscCall(MatBindToCPU(c->Ad, PETSC_FALSE));
  PetscCall(CheckMult(c, c->Ad, c->Ah, "after MatBindToCPU(PETSC_FALSE)"));

#if PetscDefined(HAVE_CUDA)
  PetscCall(TestDeviceArray(c));
  PetscCall(TestDeviceCSR(c));
  PetscCall(TestOffload(c));
  PetscCall(TestCOO(c));
  PetscCall(TestSolve(c, KSPCG, 0.0, "cg_"));
  PetscCall(TestSolve(c, KSPGMRES, 0.3, "gmres_"));
  {
    int                   dev;
    struct cudaDeviceProp prop;
    PetscCallCUDA(cudaGetDevice(&dev));
    PetscCallCUDA(cudaGetDeviceProperties(&prop, dev));
    PetscCall(PetscStrncpy(devname, prop.name, sizeof(devname)));
  }
#endif

  PetscCall(DMGetVecType(c->da, &vtype));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "device: %s\n", devname));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "sgdia_cuda: dim %" PetscInt_FMT " dof %" PetscInt_FMT " %s sw %" PetscInt_FMT " bx %s by %s bz %s n %" PetscInt_FMT ", %d rank(s), local vectors %s: %" PetscInt_FMT " checks, max rel err %.1e: pass\n", dim, dof, stencils[ist], sw, bds[ib[0]], bds[ib[1]], bds[ib[2]], n, c->size, vtype, c->nchecks, (double)c->errmax));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "smoke: VECCUDA + %s on %s, %" PetscInt_FMT " rows, %" PetscInt_FMT " checks, max rel err %.1e\n", c->size == 1 ? "MATSEQSGDIACUDA" : "MATMPISGDIACUDA", devname, N, c->nchecks, (double)c->errmax));

  PetscCall(VecDestroy(&c->xh));
  PetscCall(VecDestroy(&c->yh));
  PetscCall(VecDestroy(&c->wh));
  PetscCall(VecDestroy(&c->xd));
  PetscCall(VecDestroy(&c->yd));
  PetscCall(VecDestroy(&c->wd));
  PetscCall(MatDestroy(&c->Ah));
  PetscCall(MatDestroy(&c->Ad));
  PetscCall(PetscRandomDestroy(&c->rnd));
  PetscCall(DMDestroy(&c->da));
  if (tunefake[0]) PetscCall(GpukitTuneSetTestTimer(NULL, NULL));
  PetscCall(PetscFinalize());
  return 0;
}
