static const char help[] = "The CSR matrix powers kernel of MATSEQAIJCUSPARSE (src/mat/utils/gpukitcsrmpkcuda.cu) against the host reference.\n\n"
                           "  -problem lap2d|lap3d|random  the matrix (default lap2d): the 5- or 7-point Laplacian of a DMDA, or a\n"
                           "                               random-pattern SPD matrix with rows of 1 to several hundred entries\n"
                           "  -n n                    grid points per direction, or rows of the random matrix (default 64)\n"
                           "  -nonsymmetric           random matrix: different values in (i,j) and (j,i)\n"
                           "  -empty f                random matrix: a fraction f of empty rows (from 0.6 on: compressed rows)\n"
                           "  -maxk k                 steps 1..k (default 8, at most 16)\n"
                           "  -tprs 0,1,2,...         threads per row to run (default 0,1,2,4,8,16,32; 0: tuned)\n"
                           "  -mpk_tol t              device vs host reference, max relative difference (default 1e-12)\n"
                           "  -lean_tol t             lean W vs W with V, max relative difference (default 1e-14)\n"
                           "  -bench reps             instead of the checks: time each -tprs variant (k = 8) and cuSPARSE's MatMult\n";

/*
   GpukitMatGetCaps() gives this kernel for the matrix (none when bound to the CPU or for MATSEQAIJ). For k = 1..maxk
   and every threads-per-row variant: GpukitMatMatrixPowers_SeqAIJCUSPARSE() on a MATSEQAIJCUSPARSE with
   VECSEQCUDA vectors, with dinv (V and W), without dinv (V == W) and lean (V == NULL), against
   GKMatPowersReference() on a host MATSEQAIJ holding the same values (the lean W against the reference with V, and
   against the device W with V). Checks: the max relative difference; V[0], W[0] (and dinv) unchanged bit for bit;
   the event CSRMatPowCUDA once per call and no host<->device copy in the call. The threads-per-row tuner: with an
   injected timer it settles on the fastest value for both bases, and a value set on the matrix is fixed. Then the
   reference paths: host vectors, and the matrix bound to the CPU (correct results, no device event), and the
   argument checks.
*/
#include "gktest.h"
#include "gpukitmat.h"
#include "gpukittune.h"
#include "gpukitcsrmpk.h"
#include <petscdmda.h>
#include <petsctime.h>
#include <unistd.h>
#if PetscDefined(HAVE_CUDA)
  #include <petscdevice.h>
#endif

#if PetscDefined(HAVE_CUDA) && defined(GPUKIT_HAVE_CUDA)

  #define MAXK 16

static unsigned long long Mix(unsigned long long h)
{
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 29;
  h *= 0x94D049BB133111EBULL;
  h ^= h >> 32;
  return h;
}

/* in [0.1, 1) */
static PetscReal Val(unsigned long long h)
{
  return 0.1 + 0.9 * (PetscReal)(Mix(h) % 1000003ULL) / 1000003.0;
}

/* row i of the random matrix is empty (a fraction 'empty' of the rows) */
static PetscBool IsEmpty(PetscInt i, PetscReal empty)
{
  return (PetscReal)(Mix(3 * (unsigned long long)i + 11) % 1000ULL) < 1000.0 * empty ? PETSC_TRUE : PETSC_FALSE;
}

static PetscInt Degree(PetscInt i, PetscReal empty)
{
  const unsigned long long h = Mix((unsigned long long)i + 1);

  if (IsEmpty(i, empty)) return 0;
  return h % 64 == 0 ? 64 + (PetscInt)((h >> 8) % 448) : (PetscInt)((h >> 8) % 7);
}

/* A random pattern with widely varying row lengths: row i sends deg(i) edges (0..6, one row in 64 from 64 to 511) to
   hashed columns; each edge (i,j) puts -v in (i,j) and -v' in (j,i) (v' = v unless nonsymmetric), and the diagonal
   is 1 + the row's sum of magnitudes: diagonally dominant, SPD when symmetric. A fraction 'empty' of the rows has no
   entry at all (no diagonal, no edge): from 0.6 on, PETSc stores the matrix in compressed rows. COO assembly on
   type mattype (duplicate edges add up). */
static PetscErrorCode CreateRandom(PetscInt n, PetscBool nonsym, PetscReal empty, MatType mattype, Mat *A)
{
  PetscCount   nc = 0, c = 0;
  PetscInt    *ii, *jj;
  PetscScalar *vv;
  PetscReal   *diag;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < n; i++) nc += 2 * Degree(i, empty) + 1;
  PetscCall(PetscMalloc4(nc, &ii, nc, &jj, nc, &vv, n, &diag));
  for (PetscInt i = 0; i < n; i++) diag[i] = 1.0;
  for (PetscInt i = 0; i < n; i++) {
    const PetscInt deg = Degree(i, empty);
    for (PetscInt e = 0; e < deg; e++) {
      unsigned long long g = Mix(((unsigned long long)i << 20) ^ (unsigned long long)(e + 7));
      PetscInt           j = -1;
      PetscReal          v, w;

      for (PetscInt t = 0; t < 32 && j < 0; t++, g = Mix(g)) { /* a nonempty row other than i */
        const PetscInt q = (PetscInt)(g % (unsigned long long)n);
        if (q != i && !IsEmpty(q, empty)) j = q;
      }
      if (j < 0) continue;
      v       = Val(g);
      w       = nonsym ? Val(g ^ 0x5555ULL) : v;
      ii[c]   = i;
      jj[c]   = j;
      vv[c++] = -v;
      ii[c]   = j;
      jj[c]   = i;
      vv[c++] = -w;
      diag[i] += v;
      diag[j] += w;
    }
  }
  for (PetscInt i = 0; i < n; i++) {
    if (IsEmpty(i, empty)) continue;
    ii[c]   = i;
    jj[c]   = i;
    vv[c++] = diag[i];
  }
  PetscCall(MatCreate(PETSC_COMM_SELF, A));
  PetscCall(MatSetSizes(*A, n, n, n, n));
  PetscCall(MatSetType(*A, mattype));
  PetscCall(MatSetPreallocationCOO(*A, c, ii, jj));
  PetscCall(MatSetValuesCOO(*A, vv, ADD_VALUES));
  PetscCall(PetscFree4(ii, jj, vv, diag));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device and host matrices with the same values (no host matrix when Ah is NULL) */
static PetscErrorCode CreateProblem(const char *problem, PetscInt n, PetscBool nonsym, PetscReal empty, Mat *Ad, Mat *Ah)
{
  PetscBool lap2, lap3, rnd;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(problem, "lap2d", &lap2));
  PetscCall(PetscStrcmp(problem, "lap3d", &lap3));
  PetscCall(PetscStrcmp(problem, "random", &rnd));
  if (lap2 || lap3) {
    DM da;

    if (lap2) PetscCall(DMDACreate2d(PETSC_COMM_SELF, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, 1, 1, 1, 1, NULL, NULL, &da));
    else PetscCall(DMDACreate3d(PETSC_COMM_SELF, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, n, 1, 1, 1, 1, 1, NULL, NULL, NULL, &da));
    PetscCall(DMSetUp(da));
    if (Ah) {
      PetscCall(DMSetMatType(da, MATAIJ));
      PetscCall(DMCreateMatrix(da, Ah));
      PetscCall(GKFillPoisson(da, *Ah));
    }
    PetscCall(DMSetMatType(da, MATAIJCUSPARSE));
    PetscCall(DMCreateMatrix(da, Ad));
    PetscCall(GKFillPoisson(da, *Ad));
    PetscCall(DMDestroy(&da));
  } else {
    PetscCheck(rnd, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "-problem must be lap2d, lap3d or random, got %s", problem);
    if (Ah) PetscCall(CreateRandom(n, nonsym, empty, MATSEQAIJ, Ah));
    PetscCall(CreateRandom(n, nonsym, empty, MATSEQAIJCUSPARSE, Ad));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CreateVec(PetscInt n, VecType type, Vec *v)
{
  PetscFunctionBegin;
  PetscCall(VecCreate(PETSC_COMM_SELF, v));
  PetscCall(VecSetSizes(*v, n, n));
  PetscCall(VecSetType(*v, type));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* max |a - b| / max |b| (abs: max |a - b|), any types */
static PetscErrorCode MaxDiff(Vec a, Vec b, PetscReal *rel, PetscReal *abs)
{
  const PetscScalar *x, *y;
  PetscInt           n;
  PetscReal          d = 0.0, nb = 0.0;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(b, &n));
  PetscCall(VecGetArrayRead(a, &x));
  PetscCall(VecGetArrayRead(b, &y));
  for (PetscInt i = 0; i < n; i++) {
    const PetscReal e = PetscAbsScalar(x[i] - y[i]);
    if (!(e <= d)) d = e; /* a NaN wins */
    nb = PetscMax(nb, PetscAbsScalar(y[i]));
  }
  PetscCall(VecRestoreArrayRead(b, &y));
  PetscCall(VecRestoreArrayRead(a, &x));
  if (rel) *rel = nb > 0 ? d / nb : d;
  if (abs) *abs = d;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one device product: the matrix's upload (when its host values are newer) before any count of copies */
static PetscErrorCode Upload(Mat A, PetscInt m)
{
  Vec a, b;

  PetscFunctionBegin;
  PetscCall(CreateVec(m, VECSEQCUDA, &a));
  PetscCall(CreateVec(m, VECSEQCUDA, &b));
  PetscCall(VecSet(a, 1.0));
  PetscCall(MatMult(A, a, b));
  PetscCall(VecDestroy(&a));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef enum {
  MODE_DINV,
  MODE_LEAN,
  MODE_NODINV
} Mode;
static const char *ModeName[] = {"dinv", "lean", "no dinv"};

typedef struct {
  Mat           Ad, Ah;
  PetscInt      m;
  PetscLogEvent ev; /* CSRMatPowCUDA; -1: not registered yet */
  PetscReal     tol, leantol;
  PetscInt      fails;
} Ctx;

/* One call of the hook on vectors of type vtype against the host references Vr/Wr (with dinv) and Wn (without):
   fills Wout[1..k] (the W it computed, device or host vectors the caller destroys) */
static PetscErrorCode RunOne(Ctx *c, const char *what, VecType vtype, PetscInt k, Mode mode, const PetscReal theta[], const PetscReal sigma[], const PetscReal gamma[], Vec dh, Vec Vr[], Vec Wr[], Vec Wn[], PetscBool expectdevice, Vec Wout[])
{
  Vec            V[MAXK + 1], W[MAXK + 1], d = NULL, v0 = NULL, w0 = NULL, d0 = NULL;
  PetscReal      worst = 0.0, r, a;
  PetscLogDouble gtoc0, ctog0, gtoc, ctog;
  PetscInt       c0 = 0, c1 = 0;
  PetscLogEvent  evb;
  Vec           *Vref = mode == MODE_NODINV ? Wn : Vr, *Wref = mode == MODE_NODINV ? Wn : Wr;

  PetscFunctionBegin;
  for (PetscInt j = 0; j <= k; j++) {
    PetscCall(CreateVec(c->m, vtype, &W[j]));
    if (mode == MODE_DINV) PetscCall(CreateVec(c->m, vtype, &V[j]));
    else V[j] = mode == MODE_NODINV ? W[j] : NULL;
    if (j > 0) { /* a sentinel: an output the call does not write fails the comparison */
      PetscCall(VecSet(W[j], 1e300));
      if (mode == MODE_DINV) PetscCall(VecSet(V[j], 1e300));
    }
  }
  PetscCall(GKCopyValues(Wref[0], W[0]));
  if (mode == MODE_DINV) PetscCall(GKCopyValues(Vref[0], V[0]));
  if (mode != MODE_NODINV) {
    PetscCall(CreateVec(c->m, vtype, &d));
    PetscCall(GKCopyValues(dh, d));
    PetscCall(VecDuplicate(dh, &d0));
    PetscCall(GKCopyValues(dh, d0));
  }
  PetscCall(VecDuplicate(Wref[0], &w0));
  PetscCall(GKCopyValues(Wref[0], w0));
  if (mode == MODE_DINV) {
    PetscCall(VecDuplicate(Vref[0], &v0));
    PetscCall(GKCopyValues(Vref[0], v0));
  }
  for (PetscInt j = 0; j <= k; j++) {
    PetscCall(GKToDevice(W[j]));
    if (mode == MODE_DINV) PetscCall(GKToDevice(V[j]));
  }
  PetscCall(GKToDevice(d));
  if (c->ev < 0) PetscCall(PetscLogEventGetId("CSRMatPowCUDA", &c->ev)); /* -1 until registered */
  evb = c->ev;
  if (evb >= 0) PetscCall(GKLogEventCount(evb, &c0));
  gtoc0 = petsc_gtoc_ct;
  ctog0 = petsc_ctog_ct;
  PetscCall(GpukitMatMatrixPowers_SeqAIJCUSPARSE(c->Ad, d, k, theta, sigma, gamma, mode == MODE_LEAN ? NULL : V, W));
  gtoc = petsc_gtoc_ct - gtoc0;
  ctog = petsc_ctog_ct - ctog0;
  if (evb >= 0) {
    PetscCall(GKLogEventCount(evb, &c1));
    if (c1 - c0 != (expectdevice ? 1 : 0)) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s k=%" PetscInt_FMT " %s: the event CSRMatPowCUDA logged %" PetscInt_FMT " times (%d expected: %s)\n", what, k, ModeName[mode], c1 - c0, expectdevice ? 1 : 0, expectdevice ? "the device path" : "the reference"));
      c->fails++;
    }
  } else { /* registered at the first device call */
    PetscCall(PetscLogEventGetId("CSRMatPowCUDA", &c->ev));
    if (expectdevice && c->ev < 0) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s k=%" PetscInt_FMT " %s: the event CSRMatPowCUDA is not registered: the device path did not run\n", what, k, ModeName[mode]));
      c->fails++;
    }
  }
  for (PetscInt j = 1; j <= k; j++) {
    PetscCall(MaxDiff(W[j], Wref[j], &r, NULL));
    worst = PetscMax(worst, r);
    if (mode == MODE_DINV) {
      PetscCall(MaxDiff(V[j], Vref[j], &r, NULL));
      worst = PetscMax(worst, r);
    }
  }
  if (!(worst <= c->tol)) {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s k=%" PetscInt_FMT " %s: differs from the host reference by %.3e (tolerance %.1e)\n", what, k, ModeName[mode], (double)worst, (double)c->tol));
    c->fails++;
  }
  PetscCall(MaxDiff(W[0], w0, NULL, &a));
  if (a != 0.0) {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s k=%" PetscInt_FMT " %s: W[0] changed (by %g)\n", what, k, ModeName[mode], (double)a));
    c->fails++;
  }
  if (v0) {
    PetscCall(MaxDiff(V[0], v0, NULL, &a));
    if (a != 0.0) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s k=%" PetscInt_FMT " %s: V[0] changed (by %g)\n", what, k, ModeName[mode], (double)a));
      c->fails++;
    }
  }
  if (d) {
    PetscCall(MaxDiff(d, d0, NULL, &a));
    if (a != 0.0) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s k=%" PetscInt_FMT " %s: dinv changed (by %g)\n", what, k, ModeName[mode], (double)a));
      c->fails++;
    }
  }
  if (expectdevice && (gtoc > 0 || ctog > 0)) {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s k=%" PetscInt_FMT " %s: %g device-to-host and %g host-to-device copies in the call (0 expected)\n", what, k, ModeName[mode], (double)gtoc, (double)ctog));
    c->fails++;
  }
  PetscCall(PetscInfo(c->Ad, "%s k=%" PetscInt_FMT " %s: max rel. diff %.2e\n", what, k, ModeName[mode], (double)worst));
  for (PetscInt j = 0; j <= k; j++) {
    if (Wout && j > 0) Wout[j] = W[j];
    else PetscCall(VecDestroy(&W[j]));
    if (mode == MODE_DINV) PetscCall(VecDestroy(&V[j]));
  }
  PetscCall(VecDestroy(&d));
  PetscCall(VecDestroy(&d0));
  PetscCall(VecDestroy(&v0));
  PetscCall(VecDestroy(&w0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the basis parameters: every branch of the reference (plain product, scaling, theta term, theta and gamma terms),
   rotating with k, random magnitudes; gamma[0] = 0 */
static PetscErrorCode Params(PetscRandom rnd, PetscInt k, PetscReal theta[], PetscReal sigma[], PetscReal gamma[])
{
  PetscFunctionBegin;
  for (PetscInt j = 0; j < k; j++) {
    const PetscInt b = (j + k) % 4;
    PetscReal      r[3];
    for (PetscInt q = 0; q < 3; q++) PetscCall(PetscRandomGetValueReal(rnd, &r[q]));
    theta[j] = b >= 2 ? r[0] : 0.0;
    sigma[j] = b == 0 ? 1.0 : r[1];
    gamma[j] = b == 3 && j > 0 ? 0.5 * r[2] : 0.0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}


/* -bench reps: the time of a step of k = 8 (theta and gamma terms from j = 1 on) for each -tprs entry, with dinv
   and lean, and of cuSPARSE's MatMult on the same matrix; the bandwidth counts each array once (matrix, row offsets,
   the vectors read and written; x once, as if its gathers all hit the cache). No correctness check. */
static PetscErrorCode Bench(Mat A, PetscInt m, PetscInt reps, const PetscInt tprs[], PetscInt ntpr)
{
  const PetscInt     k = 8;
  PetscReal          theta[8], sigma[8], gamma[8];
  Vec                V[9], W[9], d;
  MatInfo            info;
  PetscDeviceContext dctx;
  PetscLogDouble     t0, t1;

  PetscFunctionBegin;
  PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
  PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
  for (PetscInt j = 0; j < k; j++) {
    theta[j] = 2.0 + 0.1 * j;
    sigma[j] = 1.5;
    gamma[j] = j ? 0.3 : 0.0;
  }
  for (PetscInt j = 0; j <= k; j++) {
    PetscCall(CreateVec(m, VECSEQCUDA, &V[j]));
    PetscCall(CreateVec(m, VECSEQCUDA, &W[j]));
  }
  PetscCall(CreateVec(m, VECSEQCUDA, &d));
  PetscCall(VecSet(d, 0.25));
  PetscCall(VecSet(W[0], 1.0));
  PetscCall(VecPointwiseMult(V[0], d, W[0]));
  { /* cuSPARSE: y = A x */
    PetscCall(MatMult(A, V[0], W[1]));
    PetscCall(PetscDeviceContextSynchronize(dctx));
    PetscCall(PetscTime(&t0));
    for (PetscInt r = 0; r < reps * k; r++) PetscCall(MatMult(A, V[0], W[1]));
    PetscCall(PetscDeviceContextSynchronize(dctx));
    PetscCall(PetscTime(&t1));
    {
      const double s = (t1 - t0) / (double)(reps * k), bytes = 12.0 * info.nz_used + 4.0 * (m + 1) + 16.0 * m;
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "bench MatMult (cuSPARSE)     : %9.2f us, %7.1f GB/s\n", 1e6 * s, 1e-9 * bytes / s));
    }
  }
  for (PetscInt t = 0; t < ntpr; t++) {
    PetscCall(GpukitCSRMPKSetThreadsPerRow_Private(A, tprs[t]));
    for (PetscInt lean = 0; lean < 2; lean++) {
      /* per step (j >= 1), lean: W[j] (the input and the theta term), dinv, W[j-1] read, W[j+1] written; with V:
         V[j], W[j], W[j-1], dinv read, W[j+1], V[j+1] written */
      const double bytes = 12.0 * info.nz_used + 4.0 * (m + 1) + 8.0 * m * (lean ? 4.0 : 6.0);
      double       s;

      PetscCall(GpukitMatMatrixPowers_SeqAIJCUSPARSE(A, d, k, theta, sigma, gamma, lean ? NULL : V, W));
      PetscCall(PetscDeviceContextSynchronize(dctx));
      PetscCall(PetscTime(&t0));
      for (PetscInt r = 0; r < reps; r++) PetscCall(GpukitMatMatrixPowers_SeqAIJCUSPARSE(A, d, k, theta, sigma, gamma, lean ? NULL : V, W));
      PetscCall(PetscDeviceContextSynchronize(dctx));
      PetscCall(PetscTime(&t1));
      s = (t1 - t0) / (double)(reps * k);
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "bench tpr=%2" PetscInt_FMT " %-5s k=8 step  : %9.2f us, %7.1f GB/s\n", tprs[t], lean ? "lean" : "dinv", 1e6 * s, 1e-9 * bytes / s));
    }
  }
  for (PetscInt j = 0; j <= k; j++) {
    PetscCall(VecDestroy(&V[j]));
    PetscCall(VecDestroy(&W[j]));
  }
  PetscCall(VecDestroy(&d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the tuner's injected timer: 8 threads a row is the fastest, the farther from 8 the slower */
static PetscErrorCode FakeTime(void *ctx, const char kernel[], const PetscInt cfg[], PetscReal *ms)
{
  PetscFunctionBegin;
  (void)ctx;
  (void)kernel;
  *ms = 1.0 + PetscAbsReal(PetscLog2Real((PetscReal)cfg[0]) - 3.0);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The threads per row go through the tuner: with the injected timer the search settles on 8 (from the rule's start)
   for the stored and the lean basis, results stay right meanwhile (a call may launch a step several times); a value
   set on the matrix is a fixed knob. -gpukit_tune on and a cache file of our own, removed at the end. */
static PetscErrorCode RunTuner(Ctx *c, Vec dh, Vec w0)
{
  const PetscReal zero = 0.0, one = 1.0;
  const char     *kernels[2] = {GPUKIT_CSR_MPK_TUNER, GPUKIT_CSR_MPK_TUNER_LEAN};
  char            dir[PETSC_MAX_PATH_LEN], path[PETSC_MAX_PATH_LEN];
  Mat             B;
  Vec             V[2], W[2], d, Vh[2], Wh[2];

  PetscFunctionBegin;
  for (PetscInt j = 0; j < 2; j++) { /* the host reference: W[1] = A (dinv .* w0) */
    PetscCall(CreateVec(c->m, VECSEQ, &Vh[j]));
    PetscCall(CreateVec(c->m, VECSEQ, &Wh[j]));
  }
  PetscCall(VecCopy(w0, Wh[0]));
  PetscCall(VecPointwiseMult(Vh[0], dh, Wh[0]));
  PetscCall(GKMatPowersReference(c->Ah, dh, 1, &zero, &one, &zero, Vh, Wh));
  PetscCall(PetscGetTmp(PETSC_COMM_SELF, dir, sizeof(dir)));
  PetscCall(PetscSNPrintf(path, sizeof(path), "%s/gpukit-cacg-csr-tune-%d.txt", dir, (int)getpid()));
  PetscCall(PetscOptionsSetValue(NULL, "-gpukit_tune", "on"));
  PetscCall(PetscOptionsSetValue(NULL, "-gpukit_tune_cache", path));
  PetscCall(GpukitTuneSetTestTimer(FakeTime, NULL));
  PetscCall(MatDuplicate(c->Ad, MAT_COPY_VALUES, &B)); /* a matrix without tuners yet */
  PetscCall(Upload(B, c->m));
  for (PetscInt j = 0; j < 2; j++) {
    PetscCall(CreateVec(c->m, VECSEQCUDA, &V[j]));
    PetscCall(CreateVec(c->m, VECSEQCUDA, &W[j]));
  }
  PetscCall(CreateVec(c->m, VECSEQCUDA, &d));
  PetscCall(GKCopyValues(dh, d));
  PetscCall(GKCopyValues(w0, W[0]));
  PetscCall(VecPointwiseMult(V[0], d, W[0]));
  for (PetscInt lean = 0; lean < 2; lean++) {
    GpukitTuner     t     = NULL;
    const PetscInt *cfg   = NULL;
    PetscBool       done  = PETSC_FALSE;
    PetscInt        calls = 0;
    PetscReal       err;

    for (; calls < 40 && !done; calls++) {
      PetscCall(GpukitMatMatrixPowers_SeqAIJCUSPARSE(B, d, 1, &zero, &one, &zero, lean ? NULL : V, W));
      if (!t) PetscCall(GpukitTuneFind((PetscObject)B, kernels[lean], &t));
      if (t) PetscCall(GpukitTunerGetConfig(t, &cfg, &done));
    }
    PetscCall(MaxDiff(W[1], Wh[1], &err, NULL)); /* W[1] = A (dinv .* W[0]) either way */
    if (!t || !done || cfg[0] != 8 || !(err <= c->tol)) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL tuner %s: %s after %" PetscInt_FMT " calls, threads per row %" PetscInt_FMT " (8 expected), W[1] off by %.3e\n", kernels[lean], t ? (done ? "done" : "still searching") : "not created", calls, cfg ? cfg[0] : -1, (double)err));
      c->fails++;
    } else PetscCall(PetscPrintf(PETSC_COMM_SELF, "tuner %s: 8 threads per row after %" PetscInt_FMT " calls\n", kernels[lean], calls));
  }
  { /* a value set on the matrix is fixed: the tuner hands out that one only */
    GpukitTuner     t;
    const PetscInt *cfg;
    PetscBool       done;

    PetscCall(GpukitCSRMPKSetThreadsPerRow_Private(B, 4));
    PetscCall(GpukitMatMatrixPowers_SeqAIJCUSPARSE(B, d, 1, &zero, &one, &zero, V, W));
    PetscCall(GpukitTuneFind((PetscObject)B, GPUKIT_CSR_MPK_TUNER, &t));
    PetscCall(GpukitTunerGetConfig(t, &cfg, &done));
    if (cfg[0] != 4) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL tuner: threads per row %" PetscInt_FMT " with 4 set on the matrix\n", cfg[0]));
      c->fails++;
    }
  }
  for (PetscInt j = 0; j < 2; j++) {
    PetscCall(VecDestroy(&V[j]));
    PetscCall(VecDestroy(&W[j]));
    PetscCall(VecDestroy(&Vh[j]));
    PetscCall(VecDestroy(&Wh[j]));
  }
  PetscCall(VecDestroy(&d));
  PetscCall(MatDestroy(&B));
  PetscCall(GpukitTuneSetTestTimer(NULL, NULL));
  PetscCall(PetscOptionsClearValue(NULL, "-gpukit_tune"));
  PetscCall(PetscOptionsClearValue(NULL, "-gpukit_tune_cache"));
  (void)remove(path);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Run(PetscInt *fails)
{
  char        problem[16] = "lap2d";
  PetscInt    n = 64, maxk = 8, tprs[8] = {0, 1, 2, 4, 8, 16, 32}, ntpr = 8, calls = 0, reps = 0;
  PetscBool   nonsym = PETSC_FALSE, flg;
  PetscReal   empty  = 0.0;
  PetscRandom rnd;
  Ctx         c;
  MatInfo     info;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&c, sizeof(c)));
  c.ev      = -1;
  c.tol     = 1e-12;
  c.leantol = 1e-14;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "CSR matrix powers kernel test", NULL);
  PetscCall(PetscOptionsString("-problem", "lap2d, lap3d or random", NULL, problem, problem, sizeof(problem), NULL));
  PetscCall(PetscOptionsInt("-n", "grid points per direction or rows", NULL, n, &n, NULL));
  PetscCall(PetscOptionsBool("-nonsymmetric", "random matrix with different (i,j), (j,i)", NULL, nonsym, &nonsym, NULL));
  PetscCall(PetscOptionsReal("-empty", "random matrix: fraction of empty rows", NULL, empty, &empty, NULL));
  PetscCall(PetscOptionsInt("-maxk", "largest k", NULL, maxk, &maxk, NULL));
  PetscCall(PetscOptionsIntArray("-tprs", "threads per row to run", NULL, tprs, &ntpr, &flg));
  if (!flg) ntpr = 7;
  PetscCall(PetscOptionsInt("-bench", "time this many calls per variant instead of the checks", NULL, reps, &reps, NULL));
  PetscCall(PetscOptionsReal("-mpk_tol", "device vs host", NULL, c.tol, &c.tol, NULL));
  PetscCall(PetscOptionsReal("-lean_tol", "lean vs with V", NULL, c.leantol, &c.leantol, NULL));
  PetscOptionsEnd();
  PetscCheck(maxk >= 1 && maxk <= MAXK, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-maxk must be 1..%d", MAXK);
  if (reps > 0) {
    PetscCall(CreateProblem(problem, n, nonsym, empty, &c.Ad, NULL));
    PetscCall(MatGetLocalSize(c.Ad, &c.m, NULL));
    PetscCall(MatGetInfo(c.Ad, MAT_LOCAL, &info));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "%s: %" PetscInt_FMT " rows, %.0f entries (%.2f a row)\n", problem, c.m, info.nz_used, c.m ? info.nz_used / c.m : 0.0));
    PetscCall(Bench(c.Ad, c.m, reps, tprs, ntpr));
    PetscCall(MatDestroy(&c.Ad));
    *fails = 0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(CreateProblem(problem, n, nonsym, empty, &c.Ad, &c.Ah));
  PetscCall(MatGetLocalSize(c.Ah, &c.m, NULL));
  PetscCall(MatGetInfo(c.Ah, MAT_LOCAL, &info));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "%s: %" PetscInt_FMT " rows, %.0f entries (%.2f a row)\n", problem, c.m, info.nz_used, c.m ? info.nz_used / c.m : 0.0));
  PetscCall(Upload(c.Ad, c.m));
  { /* the capability query hands out this kernel, and none for the matrix bound to the CPU or for the host matrix */
    GpukitMatCaps caps, bound, host;

    PetscCall(GpukitMatGetCaps(c.Ad, &caps));
    PetscCall(MatBindToCPU(c.Ad, PETSC_TRUE));
    PetscCall(GpukitMatGetCaps(c.Ad, &bound));
    PetscCall(MatBindToCPU(c.Ad, PETSC_FALSE));
    PetscCall(Upload(c.Ad, c.m));
    PetscCall(GpukitMatGetCaps(c.Ah, &host));
    if (caps.powers != GpukitMatMatrixPowers_SeqAIJCUSPARSE || !caps.device || !caps.devicecsr || bound.powers || host.powers) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL: GpukitMatGetCaps(): powers %s, device %d, devicecsr %d; bound to the CPU: powers %s; MATSEQAIJ: powers %s\n", caps.powers == GpukitMatMatrixPowers_SeqAIJCUSPARSE ? "the CSR kernel" : "other", (int)caps.device, (int)caps.devicecsr, bound.powers ? "set" : "NULL", host.powers ? "set" : "NULL"));
      c.fails++;
    }
  }
  { /* one call first: the full row offsets of a matrix in compressed rows are uploaded once, the event registered */
    const PetscReal zero = 0.0, one = 1.0;
    Vec             w[2], d;

    PetscCall(CreateVec(c.m, VECSEQCUDA, &w[0]));
    PetscCall(CreateVec(c.m, VECSEQCUDA, &w[1]));
    PetscCall(CreateVec(c.m, VECSEQCUDA, &d));
    PetscCall(VecSet(w[0], 1.0));
    PetscCall(VecSet(d, 0.5));
    PetscCall(GpukitMatMatrixPowers_SeqAIJCUSPARSE(c.Ad, d, 1, &zero, &one, &zero, NULL, w));
    PetscCall(VecDestroy(&w[0]));
    PetscCall(VecDestroy(&w[1]));
    PetscCall(VecDestroy(&d));
    PetscCall(PetscLogEventGetId("CSRMatPowCUDA", &c.ev));
    if (c.ev < 0) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL: the event CSRMatPowCUDA is not registered after a call on the device: the device path did not run\n"));
      c.fails++;
    }
  }
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, 0.5, 1.5));
  PetscCall(PetscRandomSetSeed(rnd, 2024));
  PetscCall(PetscRandomSeed(rnd));

  for (PetscInt k = 1; k <= maxk; k++) {
    PetscReal theta[MAXK], sigma[MAXK], gamma[MAXK];
    Vec       Vr[MAXK + 1], Wr[MAXK + 1], Wn[MAXK + 1], dh;

    /* the host references: with dinv (V, W) and without (V == W), from the same W[0] */
    PetscCall(Params(rnd, k, theta, sigma, gamma));
    for (PetscInt j = 0; j <= k; j++) {
      PetscCall(CreateVec(c.m, VECSEQ, &Vr[j]));
      PetscCall(CreateVec(c.m, VECSEQ, &Wr[j]));
      PetscCall(CreateVec(c.m, VECSEQ, &Wn[j]));
    }
    PetscCall(CreateVec(c.m, VECSEQ, &dh));
    PetscCall(VecSetRandom(Wr[0], rnd));
    PetscCall(VecSetRandom(dh, rnd));
    PetscCall(VecCopy(Wr[0], Wn[0]));
    PetscCall(VecPointwiseMult(Vr[0], dh, Wr[0]));
    PetscCall(GKMatPowersReference(c.Ah, dh, k, theta, sigma, gamma, Vr, Wr));
    PetscCall(GKMatPowersReference(c.Ah, NULL, k, theta, sigma, gamma, Wn, Wn));

    for (PetscInt t = 0; t < ntpr; t++) {
      Vec       Wv[MAXK + 1], Wl[MAXK + 1];
      PetscReal worst = 0.0;
      char      what[32];

      PetscCall(PetscSNPrintf(what, sizeof(what), "tpr=%" PetscInt_FMT, tprs[t]));
      PetscCall(GpukitCSRMPKSetThreadsPerRow_Private(c.Ad, tprs[t]));
      PetscCall(RunOne(&c, what, VECSEQCUDA, k, MODE_DINV, theta, sigma, gamma, dh, Vr, Wr, Wn, PETSC_TRUE, Wv));
      PetscCall(RunOne(&c, what, VECSEQCUDA, k, MODE_LEAN, theta, sigma, gamma, dh, Vr, Wr, Wn, PETSC_TRUE, Wl));
      PetscCall(RunOne(&c, what, VECSEQCUDA, k, MODE_NODINV, theta, sigma, gamma, dh, Vr, Wr, Wn, PETSC_TRUE, NULL));
      calls += 3;
      for (PetscInt j = 1; j <= k; j++) { /* the lean W is the W with V */
        PetscReal r;
        PetscCall(MaxDiff(Wl[j], Wv[j], &r, NULL));
        worst = PetscMax(worst, r);
        PetscCall(VecDestroy(&Wl[j]));
        PetscCall(VecDestroy(&Wv[j]));
      }
      if (!(worst <= c.leantol)) {
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s k=%" PetscInt_FMT ": the lean W differs from the W with V by %.3e (tolerance %.1e)\n", what, k, (double)worst, (double)c.leantol));
        c.fails++;
      }
    }
    if (k == 1) PetscCall(RunTuner(&c, dh, Wr[0]));
    if (k == PetscMin(4, maxk)) { /* the reference path: the matrix bound to the CPU (host vectors: an error, below) */
      PetscCall(GpukitCSRMPKSetThreadsPerRow_Private(c.Ad, 0));
      PetscCall(MatBindToCPU(c.Ad, PETSC_TRUE));
      PetscCall(RunOne(&c, "bound to CPU", VECSEQCUDA, k, MODE_DINV, theta, sigma, gamma, dh, Vr, Wr, Wn, PETSC_FALSE, NULL));
      PetscCall(RunOne(&c, "bound to CPU", VECSEQCUDA, k, MODE_LEAN, theta, sigma, gamma, dh, Vr, Wr, Wn, PETSC_FALSE, NULL));
      PetscCall(MatBindToCPU(c.Ad, PETSC_FALSE));
      PetscCall(Upload(c.Ad, c.m));
      calls += 2;
    }
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "k=%" PetscInt_FMT " done (%" PetscInt_FMT " calls so far, %" PetscInt_FMT " failures)\n", k, calls, c.fails));
    for (PetscInt j = 0; j <= k; j++) {
      PetscCall(VecDestroy(&Vr[j]));
      PetscCall(VecDestroy(&Wr[j]));
      PetscCall(VecDestroy(&Wn[j]));
    }
    PetscCall(VecDestroy(&dh));
  }
  PetscCall(PetscRandomDestroy(&rnd));

  { /* the argument checks */
    PetscErrorCode ierr;
    PetscReal      one = 1.0, zero = 0.0;
    Vec            w[2];

    PetscCall(GKExpectErrorBegin());
    ierr = GpukitCSRMPKSetThreadsPerRow_Private(c.Ad, 3);
    PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "threads per row", "3 threads per row"));
    PetscCall(CreateVec(c.m, VECSEQCUDA, &w[0]));
    PetscCall(CreateVec(c.m, VECSEQCUDA, &w[1]));
    PetscCall(GKExpectErrorBegin());
    ierr = GpukitMatMatrixPowers_SeqAIJCUSPARSE(c.Ad, NULL, 1, &zero, &one, &zero, NULL, w);
    PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_NULL, "lean basis", "V = NULL without dinv"));
    PetscCall(VecDestroy(&w[0]));
    PetscCall(VecDestroy(&w[1]));
    PetscCall(CreateVec(c.m, VECSEQ, &w[0])); /* host vectors */
    PetscCall(CreateVec(c.m, VECSEQ, &w[1]));
    PetscCall(GKExpectErrorBegin());
    ierr = GpukitMatMatrixPowers_SeqAIJCUSPARSE(c.Ad, NULL, 1, &zero, &one, &zero, w, w);
    PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_WRONG, "VECSEQCUDA", "host vectors"));
    PetscCall(VecDestroy(&w[0]));
    PetscCall(VecDestroy(&w[1]));
  }
  PetscCall(MatDestroy(&c.Ad));
  PetscCall(MatDestroy(&c.Ah));
  *fails = c.fails;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

int main(int argc, char **argv)
{
  PetscInt    fails = 0;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCheck(size == 1, PETSC_COMM_WORLD, PETSC_ERR_SUP, "This test is for one rank (MATSEQAIJCUSPARSE)");
#if PetscDefined(HAVE_CUDA) && defined(GPUKIT_HAVE_CUDA)
  PetscCall(PetscLogDefaultBegin()); /* the event counts */
  PetscCall(Run(&fails));
  PetscCheck(!fails, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%" PetscInt_FMT " checks failed", fails);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "all checks passed\n"));
#else
  (void)fails;
  SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_SUP, "This test needs gpukit built against a PETSc configured with CUDA (make petsc-cuda) and a GPU");
#endif
  PetscCall(PetscFinalize());
  return 0;
}
