static const char help[] = "MATDCSR / MATDCSRCUDA benchmark (issue 17's protocols) against the ways a PETSc user grows an AIJ(CUSPARSE) matrix.\n\n"
                           "  -matrices n1[:s],n2[:s],...  generated cases, each at its own scale s (default -scale); default stencil7,powerlaw\n"
                           "  -scale s -seed s              generator scale (default 3) and seed (default 1)\n"
                           "  -formats f,g                  dcsrcuda,aijcusparse (GPU, default) or dcsr,aij (host); the AIJ one is the baseline\n"
                           "  -fractions a,b,c              streaming batches as fractions of nnz (default 0.001,0.01,0.1)\n"
                           "  -sample k                     entries timed one by one for AIJ's MatSetValues path (default 8; see below)\n"
                           "  -iter_steps n -iter_frac f -iter_mults k   iterative protocol: n x [f*nnz new entries, k MatMult] (50, 0.002, 5)\n"
                           "  -iter_coo_sample k            AIJ's COO rebuild in the iterative protocol: time one step in k (the middle one\n"
                           "                                of each k steps; each step rebuilds from all entries so far, so a step does not\n"
                           "                                depend on the ones before) and EXTRAPOLATE the total (default 1: every step)\n"
                           "  -batches b                    timed MatMult batches, the fastest counts (default 5); -batch_ms t (default 20)\n"
                           "  -json path                    append one JSON record per (matrix, measurement) to this file\n"
                           "  -strict                       exit with an error if any check failed (tests); -dcsr_type t: time type t in DCSR's place\n\n"
                           "Protocols (every new entry is a random (row, column) outside the pattern, value in +-[0.5, 1.5), ADD_VALUES;\n"
                           "every rank inserts into its own rows):\n"
                           " 1. streaming: one batch of a fraction of nnz into the assembled matrix, timed up to the end of the first\n"
                           "    MatMult after it (device synchronised): AIJ way 1 = MatSetValues with MAT_NEW_NONZERO_ALLOCATION_ERR false +\n"
                           "    assembly; each new entry in a full row reallocates the whole matrix on the host, so only -sample entries are\n"
                           "    timed (per entry) and the batch time is EXTRAPOLATED as sample time per entry x batch + the measured assembly\n"
                           "    and first product; AIJ way 2 = MatSetPreallocationCOO + MatSetValuesCOO with all entries (host arrays);\n"
                           "    DCSR: MatSetValues + assembly (host entries), and on the GPU MatDCSRSetValuesCOODevice (device arrays;\n"
                           "    the first fraction's batch goes once, untimed, into a scratch copy first: no one-time cost of the process).\n"
                           " 2. iterative: n x [new entries, k MatMult], total time; AIJ by the COO rebuild (its fastest way), and way 1\n"
                           "    extrapolated as above; DCSRCUDA's device batch alone (mean over the steps, to the device's end of it), also\n"
                           "    in the baseline's SpMVs.\n"
                           " 3. SpMV of the fragmented DCSR matrix after (2), after MatDCSRDefragment, and of AIJ(CUSPARSE) with the same\n"
                           "    entries; the defragmentation's time in SpMVs.\n"
                           " 4. memory: device bytes (cudaMemGetInfo before and after creating the matrix and its first product) and\n"
                           "    DCSR's used/capacity (MatDCSRGetInfo); of DCSR's bytes, what the matrix holds (structure, bins) apart from\n"
                           "    pooled work space still reserved (dcsr_storage_bytes / dcsr_work_bytes).\n"
                           "Every DCSR product after insertions is compared with the AIJ one built by COO with the same entries (1e-12).\n";

#include <petscmat.h>
#include <petscgpukit.h>
#include <petsctime.h>
#include <time.h>
#include "gpukitcompat.h"
#include "gkbench.h"
#include "gkgen.h"
#if defined(GK_BENCH_CUDA)
  #include <petscdevice_cuda.h>
#endif

typedef struct {
  PetscCount   n;       /* local entries */
  PetscInt    *i, *j;   /* global */
  PetscScalar *v;
} Batch;

static FILE       *fp;
static PetscMPIInt rank, size;
static char        version[32], date[64], device[256] = "cpu";
static PetscBool   gpu;
static const char *aijtype, *dcsrtype;
static PetscInt    nwrong; /* failed checks, for -strict */

#define REFRAG 10 /* batches of new entries between the first defragmentation and the later one timed (host path, or
                     without a CSR base to count the marked rows) */
#define REFRAG_MAX 200 /* on the GPU: batches until the next would pass the auto defragmentation's bound, at most this */

/* new random entries outside the generated pattern: about frac * nnz in all, in the local rows in proportion */
static PetscErrorCode MakeBatch(const GKCSR *c, PetscReal frac, PetscInt64 salt, Batch *b)
{
  PetscInt64 n = (PetscInt64)(frac * (PetscReal)c->ia[c->m] + 0.5);
  uint64_t   s = 0;

  PetscFunctionBegin;
  n = PetscMax(1, n);
  PetscCall(PetscMalloc3(n, &b->i, n, &b->j, n, &b->v));
  b->n = 0;
  for (PetscInt64 k = 0; b->n < n && k < 20 * n; k++) {
    PetscReal u1, u2, u3;
    PetscInt  r, col, loc;
    PetscCall(GKGenerateUniform(c->seed * 1000003 + salt, rank, 3 * k, &u1));
    PetscCall(GKGenerateUniform(c->seed * 1000003 + salt, rank, 3 * k + 1, &u2));
    PetscCall(GKGenerateUniform(c->seed * 1000003 + salt, rank, 3 * k + 2, &u3));
    r   = PetscMin(c->m - 1, (PetscInt)(u1 * c->m));
    col = PetscMin(c->N - 1, (PetscInt)(u2 * c->N));
    PetscCall(PetscFindInt(col, (PetscInt)(c->ia[r + 1] - c->ia[r]), c->ja + c->ia[r], &loc));
    if (loc >= 0) continue;
    b->i[b->n]   = c->rstart + r;
    b->j[b->n]   = col;
    b->v[b->n++] = (u3 < 0.5 ? -1.0 : 1.0) * (0.5 + 2.0 * PetscAbsReal(u3 - 0.5));
  }
  (void)s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FreeBatch(Batch *b)
{
  PetscFunctionBegin;
  PetscCall(PetscFree3(b->i, b->j, b->v));
  b->n = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Sync(void)
{
  PetscFunctionBegin;
  PetscCall(GKDeviceSynchronize(gpu));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MaxTime(PetscLogDouble t0, PetscReal *dt)
{
  PetscLogDouble t1;
  PetscReal      d;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t1));
  d = (PetscReal)(t1 - t0);
  PetscCallMPI(MPI_Allreduce(&d, dt, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* seconds per MatMult: fastest of batches batches of about batchms */
static PetscErrorCode TimeMult(Mat A, Vec x, Vec y, PetscInt batches, PetscReal batchms, PetscReal *t)
{
  PetscReal t1;
  PetscInt  reps;

  PetscFunctionBegin;
  PetscCall(MatMult(A, x, y));
  PetscCall(Sync());
  {
    PetscLogDouble t0;
    PetscCall(PetscTime(&t0));
    for (PetscInt r = 0; r < 3; r++) PetscCall(MatMult(A, x, y));
    PetscCall(Sync());
    PetscCall(MaxTime(t0, &t1));
  }
  reps = (PetscInt)PetscMax(3, PetscMin(2000, PetscCeilReal(3e-3 * batchms / t1)));
  *t   = PETSC_MAX_REAL;
  for (PetscInt b = 0; b < batches; b++) {
    PetscLogDouble t0;
    PetscReal      dt;
    PetscCall(Sync());
    PetscCall(PetscTime(&t0));
    for (PetscInt r = 0; r < reps; r++) PetscCall(MatMult(A, x, y));
    PetscCall(Sync());
    PetscCall(MaxTime(t0, &dt));
    *t = PetscMin(*t, dt / reps);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DeviceFree(PetscLogDouble *bytes)
{
  PetscFunctionBegin;
  *bytes = 0;
#if defined(GK_BENCH_CUDA)
  if (gpu) {
    size_t fr, tot;
    PetscCall(GKDeviceSynchronize(PETSC_TRUE));
    PetscCallCUDA(cudaMemGetInfo(&fr, &tot));
    *bytes = (PetscLogDouble)fr;
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* all entries: the generated ones and those of the batches, as COO (copies: MatSetPreallocationCOO may change them) */
static PetscErrorCode AllEntries(const GKCSR *c, PetscInt nb, const Batch b[], PetscCount *n, PetscInt **ci, PetscInt **cj, PetscScalar **cv)
{
  PetscCount k = 0;

  PetscFunctionBegin;
  *n = (PetscCount)c->ia[c->m];
  for (PetscInt q = 0; q < nb; q++) *n += b[q].n;
  PetscCall(PetscMalloc3(*n, ci, *n, cj, *n, cv));
  for (PetscInt r = 0; r < c->m; r++)
    for (PetscInt64 e = c->ia[r]; e < c->ia[r + 1]; e++, k++) {
      (*ci)[k] = c->rstart + r;
      (*cj)[k] = c->ja[e];
      (*cv)[k] = c->a[e];
    }
  for (PetscInt q = 0; q < nb; q++)
    for (PetscCount e = 0; e < b[q].n; e++, k++) {
      (*ci)[k] = b[q].i[e];
      (*cj)[k] = b[q].j[e];
      (*cv)[k] = b[q].v[e];
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* AIJ way 2: (re)build A by COO with all entries, then one MatMult (A created when NULL); time excludes the copies */
static PetscErrorCode COORebuild(const GKCSR *c, PetscInt nb, const Batch b[], Mat *A, Vec x, Vec y, PetscInt mults, PetscReal *t)
{
  PetscCount     n;
  PetscInt      *ci, *cj;
  PetscScalar   *cv;
  PetscLogDouble t0;

  PetscFunctionBegin;
  PetscCall(AllEntries(c, nb, b, &n, &ci, &cj, &cv));
  PetscCall(Sync());
  PetscCall(PetscTime(&t0));
  if (!*A) {
    PetscCall(MatCreate(PETSC_COMM_WORLD, A));
    PetscCall(MatSetSizes(*A, c->m, c->n, c->M, c->N));
    PetscCall(MatSetType(*A, aijtype));
  }
  PetscCall(MatSetPreallocationCOO(*A, n, ci, cj));
  PetscCall(MatSetValuesCOO(*A, cv, ADD_VALUES));
  for (PetscInt k = 0; k < mults; k++) PetscCall(MatMult(*A, x, y));
  PetscCall(Sync());
  PetscCall(MaxTime(t0, t));
  PetscCall(PetscFree3(ci, cj, cv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* host-path insertion of a batch (MatSetValues, ADD) + assembly + mults products */
static PetscErrorCode InsertHost(Mat A, const Batch *b, Vec x, Vec y, PetscInt mults)
{
  PetscFunctionBegin;
  for (PetscCount e = 0; e < b->n; e++) PetscCall(MatSetValues(A, 1, &b->i[e], 1, &b->j[e], &b->v[e], ADD_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  for (PetscInt k = 0; k < mults; k++) PetscCall(MatMult(A, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* device batch (MATDCSRCUDA): the batch copied to the device (not timed by the callers' clocks: done in Upload) */
typedef struct {
  PetscInt    *i, *j;
  PetscScalar *v;
  PetscCount   n;
} DevBatch;

static PetscErrorCode Upload(const Batch *b, DevBatch *d)
{
  PetscFunctionBegin;
  d->n = b->n;
  PetscCall(GKDeviceCOOCopy(b->n, b->i, b->j, b->v, &d->i, &d->j, &d->v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FreeDev(DevBatch *d)
{
  PetscFunctionBegin;
  PetscCall(GKDeviceCOOFree(&d->i, &d->j, &d->v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the batch alone: from an idle device (the products before it finished, outside the clock) to the device's end of it
   (a defragmentation that the batch triggered may still run when MatDCSRSetValuesCOODevice() returns); this rank only,
   no barrier (the records are of one rank); summed over the calls since the last reset (the iterative protocol's
   steps). The two synchronisations are inside the protocol's total time (since 00a1310; a few us a step) */
static PetscLogDouble devbatch_s;

static PetscErrorCode InsertDevice(Mat A, const DevBatch *d, Vec x, Vec y, PetscInt mults)
{
  PetscFunctionBegin;
#if !defined(GPUKIT_BENCH_NO_TYPES)
  {
    PetscLogDouble t0, t1;
    PetscCall(GKDeviceSynchronize(gpu));
    PetscCall(PetscTime(&t0));
    PetscCall(MatDCSRSetValuesCOODevice(A, d->n, d->i, d->j, d->v, ADD_VALUES));
    PetscCall(GKDeviceSynchronize(gpu));
    PetscCall(PetscTime(&t1));
    devbatch_s += t1 - t0;
  }
#else
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "Built with GPUKIT_BENCH_NO_TYPES");
#endif
  for (PetscInt k = 0; k < mults; k++) PetscCall(MatMult(A, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Check(Vec y, Vec yref, Vec w, const char *what, PetscBool *ok)
{
  PetscReal e, n;

  PetscFunctionBegin;
  PetscCall(VecWAXPY(w, -1.0, yref, y));
  PetscCall(VecNorm(w, NORM_INFINITY, &e));
  PetscCall(VecNorm(yref, NORM_INFINITY, &n));
  *ok = (PetscBool)(e <= 1e-12 * n);
  if (!*ok) nwrong++;
  if (!*ok) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  WRONG: %s differs from the AIJ product with the same entries by %g relative\n", what, (double)(e / n)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one JSON record: fixed fields + "key": value pairs given as (name, value, valid) */
typedef struct {
  const char *key;
  PetscReal   v;
  PetscBool   valid;
} KV;

static PetscErrorCode Record(const char *mname, PetscInt scale, const GKRowStats *st, const char *test, const char *method, const char *note, PetscInt nkv, const KV kv[])
{
  PetscFunctionBegin;
  if (!fp || rank) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "{"));
  PetscCall(GKJSONString(fp, "bench", "dcsr_bench", PETSC_FALSE));
  PetscCall(GKJSONString(fp, "case", mname, PETSC_FALSE));
  PetscCall(GKJSONString(fp, "test", test, PETSC_FALSE));
  PetscCall(GKJSONString(fp, "method", method, PETSC_FALSE));
  PetscCall(GKJSONString(fp, "format", method, PETSC_FALSE));
  PetscCall(GKJSONString(fp, "baseline", aijtype, PETSC_FALSE));
  if (note) PetscCall(GKJSONString(fp, "note", note, PETSC_FALSE));
  PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"scale\": %" PetscInt_FMT ", \"nranks\": %d, \"rows\": %" PetscInt_FMT ", \"cols\": %" PetscInt_FMT ", \"nnz\": %" PetscInt64_FMT ", \"row_mean\": %.4g, \"row_max\": %" PetscInt_FMT ", ", scale, size, st->rows, st->cols, st->nnz, (double)st->mean, st->maxlen));
  for (PetscInt k = 0; k < nkv; k++) {
    if (kv[k].valid && PetscIsNormalReal(kv[k].v + 1.0)) PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"%s\": %.6g, ", kv[k].key, (double)kv[k].v));
    else PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"%s\": null, ", kv[k].key));
  }
  PetscCall(GKJSONRunInfo(fp, version, date, device));
  fflush(fp);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* creates a DCSR matrix from the generated rows; NULL (with a message) when the type is missing. -dcsr_type <type>
   replaces the DCSR type by another one (e.g. aij, to check this harness where the DCSR types are absent) */
static PetscBool isdcsr; /* the "DCSR" matrices really are MATDCSR(CUDA): the MatDCSR* calls apply */

static PetscErrorCode CreateDCSR(const GKCSR *c, Mat *A)
{
  PetscErrorCode ierr;

  PetscFunctionBegin;
  *A = NULL;
#if defined(GPUKIT_BENCH_NO_TYPES)
  if (isdcsr) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: built with GPUKIT_BENCH_NO_TYPES, skipped\n", dcsrtype));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  /* prefix "" (not NULL): GKCSRToMat() then calls MatSetFromOptions(), so that the type's options given on the command
     line (-mat_dcsr_*, -mat_dcsr_cuda_*) reach the matrix (the duplicates of the protocols copy them) */
  ierr = GKCSRToMat(PETSC_COMM_WORLD, c, dcsrtype, "", A);
  PetscCall(PetscPopErrorHandler());
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ierr, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD));
  if (ierr) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: creating it failed (error %d; type missing?), skipped\n", dcsrtype, (int)ierr));
    nwrong++;
    PetscCall(MatDestroy(A));
  } else PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE)); /* DCSR ignores it; a stand-in needs it */
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char          *mnames[32], *fnames[4], json[PETSC_MAX_PATH_LEN] = "";
  PetscInt       nm = 32, nfm = 4, nfr = 8, scale = GK_GEN_SCALE_DEFAULT, seed = 1, sample = 8, steps = 50, mults = 5, batches = 5, coosample = 1;
  PetscReal      fractions[8] = {0.001, 0.01, 0.1}, ifrac = 0.002, batchms = 20;
  PetscBool      mset, fset, frset, hasjson, strict = PETSC_FALSE, hostpath = PETSC_TRUE;
  const char    *envdate;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "MATDCSR benchmark", "bench");
  PetscCall(PetscOptionsStringArray("-matrices", "Generated cases name[:scale], comma-separated", "dcsr_bench", mnames, &nm, &mset));
  PetscCall(PetscOptionsStringArray("-formats", "dcsrcuda,aijcusparse or dcsr,aij", "dcsr_bench", fnames, &nfm, &fset));
  PetscCall(PetscOptionsInt("-scale", "Generator scale", "dcsr_bench", scale, &scale, NULL));
  PetscCall(PetscOptionsInt("-seed", "Generator seed", "dcsr_bench", seed, &seed, NULL));
  PetscCall(PetscOptionsRealArray("-fractions", "Streaming batch sizes as fractions of nnz", "dcsr_bench", fractions, &nfr, &frset));
  PetscCall(PetscOptionsInt("-sample", "Entries timed one by one for AIJ's MatSetValues path", "dcsr_bench", sample, &sample, NULL));
  PetscCall(PetscOptionsInt("-iter_steps", "Iterative protocol: steps", "dcsr_bench", steps, &steps, NULL));
  PetscCall(PetscOptionsReal("-iter_frac", "Iterative protocol: new entries a step, fraction of nnz", "dcsr_bench", ifrac, &ifrac, NULL));
  PetscCall(PetscOptionsInt("-iter_coo_sample", "Iterative protocol: AIJ's COO rebuild timed one step in this many, total extrapolated", "dcsr_bench", coosample, &coosample, NULL));
  PetscCall(PetscOptionsInt("-iter_mults", "Iterative protocol: MatMult a step", "dcsr_bench", mults, &mults, NULL));
  PetscCall(PetscOptionsInt("-batches", "Timed MatMult batches", "dcsr_bench", batches, &batches, NULL));
  PetscCall(PetscOptionsReal("-batch_ms", "Target ms of a batch", "dcsr_bench", batchms, &batchms, NULL));
  PetscCall(PetscOptionsString("-json", "Append JSON records to this file", "dcsr_bench", json, json, sizeof(json), &hasjson));
  PetscCall(PetscOptionsBool("-host_path", "Time DCSR's host insertion (MatSetValues + assembly) too; false: only the device batches (on a GPU; e.g. for a -log_view of them alone)", "dcsr_bench", hostpath, &hostpath, NULL));
  PetscCall(PetscOptionsBool("-strict", "Exit with an error when a check failed (for tests)", "dcsr_bench", strict, &strict, NULL));
  PetscOptionsEnd();
  if (!frset) nfr = 3;
  if (!mset) {
    nm = 2;
    PetscCall(PetscStrallocpy("stencil7", &mnames[0]));
    PetscCall(PetscStrallocpy("powerlaw", &mnames[1]));
  }
#if defined(GK_BENCH_CUDA)
  gpu = PETSC_TRUE;
#else
  gpu = PETSC_FALSE;
#endif
  if (fset) {
    PetscBool isgpu;
    PetscCheck(nfm == 2, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-formats takes two formats: dcsrcuda,aijcusparse or dcsr,aij");
    PetscCall(PetscStrcmp(fnames[0], "dcsrcuda", &isgpu));
    gpu = isgpu;
    for (PetscInt f = 0; f < nfm; f++) PetscCall(PetscFree(fnames[f]));
  }
#if !defined(GK_BENCH_CUDA)
  PetscCheck(!gpu, PETSC_COMM_WORLD, PETSC_ERR_SUP, "GPU formats need a build against a CUDA PETSc 3.19 or later");
#endif
  aijtype  = gpu ? "aijcusparse" : MATAIJ;
  dcsrtype = gpu ? MATDCSRCUDA : MATDCSR;
  {
    static char standin[64];
    PetscBool   flg;
    PetscCall(PetscOptionsGetString(NULL, NULL, "-dcsr_type", standin, sizeof(standin), &flg));
    if (flg) dcsrtype = standin;
    PetscCall(PetscStrbeginswith(dcsrtype, "dcsr", &isdcsr));
    if (!isdcsr) PetscCall(PetscStrbeginswith(dcsrtype, "seqdcsr", &isdcsr));
    if (!isdcsr) PetscCall(PetscStrbeginswith(dcsrtype, "mpidcsr", &isdcsr));
  }
  PetscCheck(sample >= 1 && steps >= 1 && mults >= 0 && ifrac > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-sample, -iter_steps must be >= 1, -iter_frac > 0");
  PetscCheck(coosample >= 1 && coosample <= steps, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-iter_coo_sample must be in [1, -iter_steps = %" PetscInt_FMT "], got %" PetscInt_FMT, steps, coosample);
  if (gpu) PetscCall(GKDeviceName(device, sizeof(device)));
  envdate = getenv("GPUKIT_DATE");
  if (envdate && envdate[0]) PetscCall(PetscStrncpy(date, envdate, sizeof(date)));
  else {
    time_t now = time(NULL);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
  }
  PetscCall(PetscSNPrintf(version, sizeof(version), "%d.%d.%d", PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR));
  if (hasjson && json[0]) PetscCall(PetscFOpen(PETSC_COMM_WORLD, json, "a", &fp));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dcsr_bench: %s vs %s on %s, %d rank(s)\n", dcsrtype, aijtype, gpu ? device : "the host", size));

  for (PetscInt mi = 0; mi < nm; mi++) {
    char          *colon, mname[64];
    PetscInt       msc = scale;
    GKCSR         *c;
    GKRowStats     st;
    Mat            Abase = NULL, Dbase = NULL;
    Vec            x, y, yref, w;
    PetscReal      tmult, tmultd = 0, perentry = 0, tasm_sv = 0;
    PetscLogDouble f0, f1, f2, memaij = 0, memd = 0, memstore = -1;
    PetscBool      ok;

    PetscCall(PetscStrncpy(mname, mnames[mi], sizeof(mname)));
    PetscCall(PetscStrchr(mname, ':', &colon));
    if (colon) {
      *colon = 0;
      msc    = (PetscInt)atoi(colon + 1);
    }
    PetscCall(GKGenerateCSR(PETSC_COMM_WORLD, mname, msc, seed, &c));
    PetscCall(GKCSRRowStats(PETSC_COMM_WORLD, c, &st));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "== %s (scale %" PetscInt_FMT "): %" PetscInt_FMT " rows, nnz %" PetscInt64_FMT ", row length mean %.2f max %" PetscInt_FMT "\n", mname, msc, st.rows, st.nnz, (double)st.mean, st.maxlen));

    /* base matrices, their memory and SpMV */
    PetscCall(DeviceFree(&f0));
    PetscCall(GKCSRToMat(PETSC_COMM_WORLD, c, aijtype, NULL, &Abase));
    PetscCall(MatCreateVecs(Abase, &x, &y));
    PetscCall(VecDuplicate(y, &yref));
    PetscCall(VecDuplicate(y, &w));
    PetscCall(VecSet(x, 1.0));
    {
      PetscRandom rnd;
      PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
      PetscCall(PetscRandomSetSeed(rnd, 20240601));
      PetscCall(PetscRandomSeed(rnd));
      PetscCall(VecSetRandom(x, rnd));
      PetscCall(PetscRandomDestroy(&rnd));
    }
    PetscCall(MatMult(Abase, x, y));
    PetscCall(DeviceFree(&f1));
    memaij = f0 - f1;
    PetscCall(TimeMult(Abase, x, y, batches, batchms, &tmult));
    PetscCall(CreateDCSR(c, &Dbase));
    if (Dbase) {
      PetscCall(MatMult(Dbase, x, w));
      PetscCall(DeviceFree(&f2));
      memd = f1 - f2;
      { /* what the matrix itself holds (structure at full capacity, product bins), apart from pooled work space */
        PetscErrorCode (*getbytes)(Mat, PetscLogDouble *) = NULL;
        PetscCall(PetscObjectQueryFunction((PetscObject)Dbase, "MatDCSRCUDAGetDeviceBytes_C", &getbytes));
        if (getbytes) PetscCall((*getbytes)(Dbase, &memstore));
      }
      PetscCall(Check(w, y, yref, "DCSR as assembled", &ok));
      PetscCall(TimeMult(Dbase, x, y, batches, batchms, &tmultd));
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  MatMult: %s %.4f ms, %s %.4f ms; device memory %s %.1f MB, %s %.1f MB\n", aijtype, 1e3 * (double)tmult, dcsrtype, 1e3 * (double)tmultd, aijtype, 1e-6 * memaij, dcsrtype, 1e-6 * memd));
    if (memstore >= 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s device memory: %.1f MB held by the matrix (structure at capacity, product bins; %.2fx %s), %.1f MB other (pooled work space still reserved, library state)\n", dcsrtype, 1e-6 * memstore, memaij > 0 ? memstore / memaij : 0.0, aijtype, 1e-6 * (memd - memstore)));
    {
      PetscInt   K = 0, inuse = 0;
      PetscCount used = 0, cap = 0;
      (void)inuse;
#if !defined(GPUKIT_BENCH_NO_TYPES)
      if (Dbase && isdcsr) PetscCall(MatDCSRGetInfo(Dbase, &K, &inuse, &used, &cap));
#endif
      KV kv[] = {
        {"aij_mult_ms",          1e3 * tmult,          PETSC_TRUE          },
        {"dcsr_mult_ms",         1e3 * tmultd,         (PetscBool)!!Dbase  },
        {"dcsr_vs_aij",          tmult / tmultd,       (PetscBool)!!Dbase  },
        {"aij_device_bytes",     (PetscReal)memaij,    gpu                 },
        {"dcsr_device_bytes",    (PetscReal)memd,      (PetscBool)(gpu && Dbase)},
        {"dcsr_vs_aij_memory",   memaij > 0 ? (PetscReal)(memd / memaij) : 0, (PetscBool)(gpu && Dbase && memaij > 0)},
        {"dcsr_storage_bytes",   (PetscReal)memstore,  (PetscBool)(gpu && Dbase && memstore >= 0)},
        {"dcsr_work_bytes",      (PetscReal)(memd - memstore), (PetscBool)(gpu && Dbase && memstore >= 0)},
        {"dcsr_storage_vs_aij",  memaij > 0 ? (PetscReal)(memstore / memaij) : 0, (PetscBool)(gpu && Dbase && memstore >= 0 && memaij > 0)},
        {"dcsr_max_segments",    (PetscReal)K,         (PetscBool)(Dbase && isdcsr)},
        {"dcsr_used",            (PetscReal)used,      (PetscBool)(Dbase && isdcsr)},
        {"dcsr_capacity",        (PetscReal)cap,       (PetscBool)(Dbase && isdcsr)},
      };
      PetscCall(Record(mname, msc, &st, "memory", dcsrtype, "device bytes: cudaMemGetInfo before and after creating the matrix and its first MatMult; dcsr_storage_bytes: what the DCSR matrix holds (structure at full capacity and product bins, MatDCSRCUDAGetDeviceBytes_C); dcsr_work_bytes: the rest of the measured bytes (pooled work space still reserved)", (PetscInt)(sizeof(kv) / sizeof(kv[0])), kv));
    }

    /* AIJ way 1, per new entry: sample entries one by one into a copy of the base matrix, then its assembly */
    {
      Mat            A;
      Batch          b;
      PetscLogDouble t0;
      PetscReal      dt;
      PetscCall(MakeBatch(c, (PetscReal)sample / (PetscReal)st.nnz * size, 17, &b));
      PetscCall(MatDuplicate(Abase, MAT_COPY_VALUES, &A));
      PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
      PetscCall(Sync());
      PetscCall(PetscTime(&t0));
      for (PetscCount e = 0; e < b.n; e++) PetscCall(MatSetValues(A, 1, &b.i[e], 1, &b.j[e], &b.v[e], ADD_VALUES));
      PetscCall(Sync());
      PetscCall(MaxTime(t0, &dt));
      {
        PetscInt nloc = (PetscInt)b.n, nall;
        PetscCallMPI(MPI_Allreduce(&nloc, &nall, 1, MPIU_INT, MPI_MAX, PETSC_COMM_WORLD));
        perentry = dt / PetscMax(1, nall);
      }
      PetscCall(PetscTime(&t0));
      PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
      PetscCall(MatMult(A, x, y));
      PetscCall(Sync());
      PetscCall(MaxTime(t0, &tasm_sv));
      PetscCall(MatDestroy(&A));
      PetscCall(FreeBatch(&b));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s MatSetValues (MAT_NEW_NONZERO_ALLOCATION_ERR false): %.3f ms per new entry (%" PetscInt_FMT " timed), then assembly + first MatMult %.2f ms\n", aijtype, 1e3 * (double)perentry, sample, 1e3 * (double)tasm_sv));
    }

    /* 1. streaming */
    for (PetscInt q = 0; q < nfr; q++) {
      Batch     b;
      PetscReal tcoo, tsv, th = 0, td = 0;
      PetscInt  ntot;
      Mat       A = NULL;
      PetscBool okh = PETSC_FALSE, okd = PETSC_FALSE;
      PetscCall(MakeBatch(c, fractions[q], 100 + q, &b));
      {
        PetscInt nloc = (PetscInt)b.n;
        PetscCallMPI(MPI_Allreduce(&nloc, &ntot, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
      }
      PetscCall(COORebuild(c, 1, &b, &A, x, yref, 1, &tcoo));
      PetscCall(MatDestroy(&A));
      tsv = perentry * (ntot / (PetscReal)size) + tasm_sv;
      if (Dbase) {
        Mat      D;
        DevBatch d;
        PetscLogDouble t0;
        if (hostpath || !(gpu && isdcsr)) {
          PetscCall(MatDuplicate(Dbase, MAT_COPY_VALUES, &D));
          PetscCall(Sync());
          PetscCall(PetscTime(&t0));
          PetscCall(InsertHost(D, &b, x, y, 1));
          PetscCall(Sync());
          PetscCall(MaxTime(t0, &th));
          PetscCall(Check(y, yref, w, "DCSR after MatSetValues", &okh));
          PetscCall(MatDestroy(&D));
        }
        if (gpu && isdcsr) {
          PetscErrorCode ierr;
          PetscCall(Upload(&b, &d));
          if (q == 0) { /* untimed, once: the same batch into a scratch duplicate, so that the timed batch pays no one-time
                           cost of the process (CUDA loads a kernel's module at its first launch; the pool's first blocks) */
            PetscCall(MatDuplicate(Dbase, MAT_COPY_VALUES, &D));
            PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
            ierr = InsertDevice(D, &d, x, y, 1);
            PetscCall(PetscPopErrorHandler());
            PetscCall(MatDestroy(&D));
            (void)ierr; /* a failure shows in the timed run below */
          }
          PetscCall(MatDuplicate(Dbase, MAT_COPY_VALUES, &D));
          PetscCall(Sync());
          PetscCall(PetscTime(&t0));
          PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
          ierr = InsertDevice(D, &d, x, y, 1);
          PetscCall(PetscPopErrorHandler());
          PetscCall(Sync());
          PetscCall(MaxTime(t0, &td));
          if (!ierr) PetscCall(Check(y, yref, w, "DCSRCUDA after MatDCSRSetValuesCOODevice", &okd));
          else {
            PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  MatDCSRSetValuesCOODevice failed (error %d)\n", (int)ierr));
            nwrong++;
            td = 0;
          }
          PetscCall(FreeDev(&d));
          PetscCall(MatDestroy(&D));
        }
      }
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  streaming %g of nnz (%" PetscInt_FMT " entries): %s MatSetValues %.1f ms (extrapolated), COO rebuild %.2f ms; %s MatSetValues %.2f ms%s", (double)fractions[q], ntot, aijtype, 1e3 * (double)tsv, 1e3 * (double)tcoo, dcsrtype, 1e3 * (double)th, okh ? "" : th > 0 ? " (WRONG)" : " (not run: -host_path false)"));
      if (gpu) PetscCall(PetscPrintf(PETSC_COMM_WORLD, ", device COO %.2f ms%s", 1e3 * (double)td, okd ? "" : " (WRONG or missing)"));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, " (MatMult %.4f ms)\n", 1e3 * (double)tmult));
      {
        KV kv[] = {
          {"fraction",    fractions[q],        PETSC_TRUE},
          {"entries",     (PetscReal)ntot,     PETSC_TRUE},
          {"time_ms",     0,                   PETSC_FALSE},
          {"entries_per_s", 0,                 PETSC_FALSE},
          {"spmv_equiv",  0,                   PETSC_FALSE},
          {"aij_mult_ms", 1e3 * tmult,         PETSC_TRUE},
          {"speedup_vs_coo_rebuild", 0,        PETSC_FALSE},
          {"correct",     0,                   PETSC_FALSE},
          {"sample",      (PetscReal)sample,   PETSC_FALSE},
        };
        const char *methods[4] = {"aij_setvalues", "aij_coo_rebuild", "dcsr_setvalues", "dcsr_device_coo"};
        PetscReal   times[4]   = {tsv, tcoo, th, td};
        PetscBool   valid[4]   = {PETSC_TRUE, PETSC_TRUE, (PetscBool)(Dbase && th > 0), (PetscBool)(Dbase && gpu && td > 0)};
        PetscBool   corr[4]    = {PETSC_TRUE, PETSC_TRUE, okh, okd};
        for (PetscInt k = 0; k < 4; k++) {
          if (!valid[k]) continue;
          kv[2].v = 1e3 * times[k];             kv[2].valid = PETSC_TRUE;
          kv[3].v = ntot / times[k];             kv[3].valid = PETSC_TRUE;
          kv[4].v = times[k] / tmult;            kv[4].valid = PETSC_TRUE;
          kv[6].v = tcoo / times[k];             kv[6].valid = PETSC_TRUE;
          kv[7].v = corr[k] ? 1 : 0;             kv[7].valid = PETSC_TRUE;
          kv[8].valid = (PetscBool)(k == 0);
          PetscCall(Record(mname, msc, &st, "streaming", methods[k], k == 0 ? "extrapolated: time per new entry from -sample entries x entries + measured assembly and first MatMult" : NULL, (PetscInt)(sizeof(kv) / sizeof(kv[0])), kv));
        }
      }
      PetscCall(FreeBatch(&b));
    }

    /* 2. iterative, 3. fragmented / defragmented SpMV */
    {
      Batch    *bs;
      PetscReal tcoo = 0, th = 0, td = 0, tsv, tfrag = 0, tdefr = 0, tdefrag = 0, tdefrag2 = 0, taijf = 0, tbatch = 0, tfragb = 0, taijb = 0;
      PetscInt  nrefrag = 0, nbounddefrag = 0, boundmarked = -1, boundrows = -1, ncoo = 0;
      PetscInt  fragkernel = -1, fraglanes = 0, fragmarked = -1;
      Mat       A    = NULL, D = NULL;
      PetscInt  ntot = 0, K = 0, inuse = 0, inuse2 = 0;
      PetscBool okh = PETSC_FALSE, okd = PETSC_FALSE;
      PetscCount used = 0, cap = 0;
      PetscCall(PetscMalloc1(steps, &bs));
      for (PetscInt s = 0; s < steps; s++) {
        PetscInt nloc;
        PetscCall(MakeBatch(c, ifrac, 1000 + s, &bs[s]));
        nloc = (PetscInt)bs[s].n;
        PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nloc, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
        ntot += nloc;
      }
      /* AIJ: COO rebuild of the same matrix every step (the arrays' copies are outside the clock); with
         -iter_coo_sample k only the middle step of each k is run and timed, the total extrapolated from them; the last
         step is always built (the reference), and counted only when it is a sampled one */
      for (PetscInt s = 0; s < steps; s++) {
        PetscReal       dt;
        const PetscBool timed = (PetscBool)(coosample == 1 || s % coosample == coosample / 2);
        if (!timed && s != steps - 1) continue;
        PetscCall(COORebuild(c, s + 1, bs, &A, x, yref, mults, &dt));
        if (timed) {
          tcoo += dt;
          ncoo++;
        }
      }
      if (ncoo < steps) tcoo *= (PetscReal)steps / (PetscReal)ncoo;
      tsv = steps * (perentry * (ntot / (PetscReal)(steps * size)) + tasm_sv) + steps * (mults - 1) * tmult;
      PetscCall(TimeMult(A, x, w, batches, batchms, &taijf));
      PetscCall(MatMult(A, x, yref));
      if (Dbase) {
        PetscLogDouble t0;
        if (hostpath || !(gpu && isdcsr)) { /* host path */
          PetscCall(MatDuplicate(Dbase, MAT_COPY_VALUES, &D));
          PetscCall(Sync());
          PetscCall(PetscTime(&t0));
          for (PetscInt s = 0; s < steps; s++) PetscCall(InsertHost(D, &bs[s], x, y, mults));
          PetscCall(Sync());
          PetscCall(MaxTime(t0, &th));
          PetscCall(Check(y, yref, w, "DCSR after the iterative protocol (MatSetValues)", &okh));
        }
        if (gpu && isdcsr) { /* device path on a fresh copy */
          DevBatch      *d;
          PetscErrorCode ierr = PETSC_SUCCESS;
          PetscCall(MatDestroy(&D));
          PetscCall(MatDuplicate(Dbase, MAT_COPY_VALUES, &D));
          PetscCall(PetscMalloc1(steps, &d));
          for (PetscInt s = 0; s < steps; s++) PetscCall(Upload(&bs[s], &d[s]));
          PetscCall(Sync());
          PetscCall(PetscTime(&t0));
          PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
          devbatch_s = 0;
          for (PetscInt s = 0; s < steps && !ierr; s++) ierr = InsertDevice(D, &d[s], x, y, mults);
          tbatch = devbatch_s / steps;
          PetscCall(PetscPopErrorHandler());
          PetscCall(Sync());
          PetscCall(MaxTime(t0, &td));
          if (!ierr) PetscCall(Check(y, yref, w, "DCSRCUDA after the iterative protocol (device COO)", &okd));
          else {
            PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  MatDCSRSetValuesCOODevice failed in the iterative protocol (error %d)\n", (int)ierr));
            td = 0;
            nwrong++;
          }
          for (PetscInt s = 0; s < steps; s++) PetscCall(FreeDev(&d[s]));
          PetscCall(PetscFree(d));
        }
        /* fragmented SpMV, defragmentation, defragmented SpMV */
        PetscCall(TimeMult(D, x, y, batches, batchms, &tfrag));
        if (gpu && isdcsr && size == 1) { /* which product ran, and how many rows the batches marked since the CSR base */
          PetscErrorCode (*fk)(Mat, PetscInt *, PetscInt *) = NULL;
          PetscErrorCode (*fm)(Mat, PetscInt *, PetscInt *) = NULL;
          PetscCall(PetscObjectQueryFunction((PetscObject)D, "MatDCSRCUDAGetMultKernel_C", &fk));
          PetscCall(PetscObjectQueryFunction((PetscObject)D, "MatDCSRCUDAGetBaseMarked_C", &fm));
          if (fk) PetscCall((*fk)(D, &fragkernel, &fraglanes));
          if (fm) PetscCall((*fm)(D, &fragmarked, NULL));
        }
#if !defined(GPUKIT_BENCH_NO_TYPES)
        if (isdcsr) {
          PetscCall(MatDCSRGetInfo(D, &K, &inuse, &used, &cap));
          PetscCall(Sync());
          PetscCall(PetscTime(&t0));
          PetscCall(MatDCSRDefragment(D));
          PetscCall(Sync());
          PetscCall(MaxTime(t0, &tdefrag));
        }
#endif
        PetscCall(TimeMult(D, x, y, batches, batchms, &tdefr));
        PetscCall(Check(y, yref, w, "DCSR after defragmentation", &ok));
#if !defined(GPUKIT_BENCH_NO_TYPES)
        if (isdcsr && !(gpu && td == 0)) { /* a later defragmentation: more batches of new entries (device path on the
                         GPU), then one timed with the buffers the first one left (no allocation); its product checked
                         against the fragmented one's (skipped when the device protocol failed above). On one GPU with a
                         CSR base: batches until the next one would take the marked rows past the auto defragmentation's
                         bound (-mat_dcsr_defrag_fraction), i.e. the most fragmented state the default policy leaves, where
                         the fragmented product is timed again against an AIJCUSPARSE copy of the same entries; else
                         REFRAG batches */
          PetscReal err, nrm;
          PetscErrorCode (*fm)(Mat, PetscInt *, PetscInt *) = NULL;
          PetscInt mk = 0, mkprev = 0, bound = -1;
          if (gpu && size == 1) PetscCall(PetscObjectQueryFunction((PetscObject)D, "MatDCSRCUDAGetBaseMarked_C", &fm));
          if (fm) PetscCall((*fm)(D, &mk, &bound));
          if (mk < 0 || bound < 0) fm = NULL;
          mkprev = mk;
          for (PetscInt s = 0; s < (fm ? REFRAG_MAX : REFRAG); s++) {
            Batch b;
            PetscCall(MakeBatch(c, ifrac, 5000 + s, &b));
            if (gpu) {
              DevBatch d;
              PetscCall(Upload(&b, &d));
              PetscCall(MatDCSRSetValuesCOODevice(D, d.n, d.i, d.j, d.v, ADD_VALUES));
              PetscCall(Sync());
              PetscCall(FreeDev(&d));
            } else PetscCall(InsertHost(D, &b, x, y, 0));
            PetscCall(FreeBatch(&b));
            nrefrag++;
            if (fm) {
              PetscCall((*fm)(D, &mk, &bound));
              if (mk < mkprev) { /* the policy defragmented after all (a batch marked more than the last): count again */
                nbounddefrag++;
                mkprev = 0;
              }
              if (mk >= 0 && mk + (mk - mkprev) > bound) break; /* the next batch like this one would defragment */
              mkprev = mk;
            }
          }
          if (fm && mk > 0) { /* the fragmented product at the bound, against AIJCUSPARSE with the same entries */
            Mat Ab;
            Vec t;
            PetscCall(TimeMult(D, x, w, batches, batchms, &tfragb));
            PetscCall(MatConvert(D, MATAIJ, MAT_INITIAL_MATRIX, &Ab));
            PetscCall(MatConvert(Ab, aijtype, MAT_INPLACE_MATRIX, &Ab));
            PetscCall(TimeMult(Ab, x, y, batches, batchms, &taijb));
            PetscCall(VecDuplicate(y, &t));
            PetscCall(Check(w, y, t, "DCSR fragmented at the policy's bound", &ok));
            PetscCall(VecDestroy(&t));
            PetscCall(MatDestroy(&Ab));
            boundmarked = mk;
            boundrows   = bound;
          }
          PetscCall(MatMult(D, x, w));
          PetscCall(MatDCSRGetInfo(D, NULL, &inuse2, NULL, NULL)); /* what the batches left (an auto defragmentation may have run) */
          PetscCall(Sync());
          PetscCall(PetscTime(&t0));
          PetscCall(MatDCSRDefragment(D));
          PetscCall(Sync());
          PetscCall(MaxTime(t0, &tdefrag2));
          PetscCall(MatMult(D, x, y));
          PetscCall(VecNorm(w, NORM_INFINITY, &nrm));
          PetscCall(VecAXPY(y, -1.0, w));
          PetscCall(VecNorm(y, NORM_INFINITY, &err));
          if (err > 1e-12 * PetscMax(nrm, 1.0)) {
            PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  WRONG: the product after the later MatDCSRDefragment differs from the fragmented one by %g\n", (double)err));
            nwrong++;
            tdefrag2 = 0;
          }
        }
#endif
        PetscCall(MatDestroy(&D));
      }
      PetscCall(MatDestroy(&A));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  iterative %" PetscInt_FMT " x [%g nnz new, %" PetscInt_FMT " MatMult]: %s COO rebuild %.1f ms%s, MatSetValues %.0f ms (extrapolated); %s MatSetValues %.1f ms%s", steps, (double)ifrac, mults, aijtype, 1e3 * (double)tcoo, ncoo < steps ? " (extrapolated from sampled steps)" : "", 1e3 * (double)tsv, dcsrtype, 1e3 * (double)th, okh ? "" : th > 0 ? " (WRONG)" : " (not run: -host_path false)"));
      if (gpu) PetscCall(PetscPrintf(PETSC_COMM_WORLD, ", device COO %.1f ms%s (a batch alone: %.3f ms = %.1f %s SpMVs)", 1e3 * (double)td, okd ? "" : " (WRONG or missing)", 1e3 * (double)tbatch, taijf > 0 ? (double)(tbatch / taijf) : 0.0, aijtype));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n  SpMV after it: %s %.4f ms, %s fragmented %.4f ms (%" PetscInt_FMT " of %" PetscInt_FMT " segments in use), defragmented %.4f ms; MatDCSRDefragment %.3f ms = %.1f SpMVs (a later one, after %" PetscInt_FMT " more batches, %" PetscInt_FMT " segments in use then, its buffers reused: %.3f ms = %.1f SpMVs)\n", aijtype, 1e3 * (double)taijf, dcsrtype, 1e3 * (double)tfrag, inuse, K, 1e3 * (double)tdefr, 1e3 * (double)tdefrag, tdefr > 0 ? (double)(tdefrag / tdefr) : 0.0, nrefrag, inuse2, 1e3 * (double)tdefrag2, tdefr > 0 ? (double)(tdefrag2 / tdefr) : 0.0));
      if (boundmarked > 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  At the auto defragmentation's bound (%" PetscInt_FMT " of at most %" PetscInt_FMT " rows marked, %.1f%%, after %" PetscInt_FMT " batches): %s %.4f ms, %s fragmented %.4f ms = %.2fx\n", boundmarked, boundrows, st.rows > 0 ? 100.0 * (double)boundmarked / (double)st.rows : 0.0, nrefrag, aijtype, 1e3 * (double)taijb, dcsrtype, 1e3 * (double)tfragb, tfragb > 0 ? (double)(taijb / tfragb) : 0.0));
      {
        KV kv[] = {
          {"steps",            (PetscReal)steps,   PETSC_TRUE},
          {"fraction",         ifrac,              PETSC_TRUE},
          {"mults_per_step",   (PetscReal)mults,   PETSC_TRUE},
          {"entries",          (PetscReal)ntot,    PETSC_TRUE},
          {"time_ms",          0,                  PETSC_FALSE},
          {"speedup_vs_coo_rebuild", 0,            PETSC_FALSE},
          {"correct",          0,                  PETSC_FALSE},
          {"batch_ms",         0,                  PETSC_FALSE}, /* the device batch alone, mean over the steps */
          {"batch_spmv",       0,                  PETSC_FALSE}, /* the same in the baseline's SpMVs after the protocol */
          {"coo_timed_steps",  (PetscReal)ncoo,    PETSC_TRUE},  /* of steps: the COO rebuild's total is extrapolated when fewer */
        };
        const char *methods[4] = {"aij_coo_rebuild", "aij_setvalues", "dcsr_setvalues", "dcsr_device_coo"};
        PetscReal   times[4]   = {tcoo, tsv, th, td};
        PetscBool   valid[4]   = {PETSC_TRUE, PETSC_TRUE, (PetscBool)(Dbase && th > 0), (PetscBool)(Dbase && gpu && td > 0)};
        PetscBool   corr[4]    = {PETSC_TRUE, PETSC_TRUE, okh, okd};
        for (PetscInt k = 0; k < 4; k++) {
          if (!valid[k]) continue;
          kv[4].v = 1e3 * times[k]; kv[4].valid = PETSC_TRUE;
          kv[5].v = tcoo / times[k]; kv[5].valid = PETSC_TRUE;
          kv[6].v = corr[k] ? 1 : 0; kv[6].valid = PETSC_TRUE;
          kv[7].v = 1e3 * tbatch; kv[7].valid = (PetscBool)(k == 3 && tbatch > 0);
          kv[8].v = taijf > 0 ? tbatch / taijf : 0; kv[8].valid = (PetscBool)(k == 3 && tbatch > 0 && taijf > 0);
          PetscCall(Record(mname, msc, &st, "iterative", methods[k], k == 1 ? "extrapolated from the per-entry time" : ncoo < steps && k == 0 ? "extrapolated from coo_timed_steps of the steps (-iter_coo_sample)" : NULL, (PetscInt)(sizeof(kv) / sizeof(kv[0])), kv));
        }
      }
      if (Dbase) {
        KV kv[] = {
          {"aij_mult_ms",         1e3 * taijf,          PETSC_TRUE},
          {"fragmented_ms",       1e3 * tfrag,          PETSC_TRUE},
          {"defragmented_ms",     1e3 * tdefr,          PETSC_TRUE},
          {"fragmented_vs_aij",   taijf / tfrag,        PETSC_TRUE},
          {"defragmented_vs_aij", taijf / tdefr,        PETSC_TRUE},
          {"defrag_ms",           1e3 * tdefrag,        (PetscBool)(tdefrag > 0)},
          {"defrag_spmv",         tdefrag / tdefr,      (PetscBool)(tdefrag > 0)},
          {"defrag_later_ms",     1e3 * tdefrag2,       (PetscBool)(tdefrag2 > 0)}, /* after REFRAG more batches, the first one's buffers reused */
          {"defrag_later_spmv",   tdefrag2 / tdefr,     (PetscBool)(tdefrag2 > 0)},
          {"segments_in_use_later", (PetscReal)inuse2,  (PetscBool)(tdefrag2 > 0)},
          {"later_batches",       (PetscReal)nrefrag,   (PetscBool)(nrefrag > 0)}, /* batches before the later defragmentation */
          {"bound_marked_rows",   (PetscReal)boundmarked, (PetscBool)(boundmarked > 0)}, /* at the auto policy's bound (since session 19) */
          {"bound_rows",          (PetscReal)boundrows, (PetscBool)(boundmarked > 0)},
          {"bound_marked_fraction", st.rows > 0 ? (PetscReal)boundmarked / (PetscReal)st.rows : 0, (PetscBool)(boundmarked > 0 && st.rows > 0)},
          {"bound_aij_ms",        1e3 * taijb,          (PetscBool)(boundmarked > 0)},
          {"bound_fragmented_ms", 1e3 * tfragb,         (PetscBool)(boundmarked > 0)},
          {"bound_fragmented_vs_aij", tfragb > 0 ? taijb / tfragb : 0, (PetscBool)(boundmarked > 0 && tfragb > 0)},
          {"bound_policy_defrags", (PetscReal)nbounddefrag, (PetscBool)(boundmarked > 0)},
          {"fragmented_kernel",   (PetscReal)fragkernel, (PetscBool)(fragkernel >= 0)}, /* 0 binned, 1 fused, 2 rows, 3 the CSR base */
          {"fragmented_lanes",    (PetscReal)fraglanes, (PetscBool)(fragkernel >= 0)},  /* on the base: 0 cuSPARSE + fix-up after it, -1 beside it, 1..32 the base rows kernel's lanes, 64 the base stream kernel */
          {"fragmented_marked_rows", (PetscReal)fragmarked, (PetscBool)(fragmarked >= 0)},
          {"fragmented_marked_fraction", st.rows > 0 ? (PetscReal)fragmarked / (PetscReal)st.rows : 0, (PetscBool)(fragmarked >= 0 && st.rows > 0)},
          {"segments_in_use",     (PetscReal)inuse,     (PetscBool)(K > 0)},
          {"max_segments",        (PetscReal)K,         (PetscBool)(K > 0)},
          {"used",                (PetscReal)used,      (PetscBool)(K > 0)},
          {"capacity",            (PetscReal)cap,       (PetscBool)(K > 0)},
        };
        PetscCall(Record(mname, msc, &st, "spmv", dcsrtype, "after the iterative protocol (device path on the GPU)", (PetscInt)(sizeof(kv) / sizeof(kv[0])), kv));
      }
      for (PetscInt s = 0; s < steps; s++) PetscCall(FreeBatch(&bs[s]));
      PetscCall(PetscFree(bs));
    }
    PetscCall(MatDestroy(&Abase));
    PetscCall(MatDestroy(&Dbase));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(VecDestroy(&yref));
    PetscCall(VecDestroy(&w));
    PetscCall(GKCSRDestroy(&c));
  }
  if (fp) PetscCall(PetscFClose(PETSC_COMM_WORLD, fp));
  for (PetscInt i = 0; i < nm; i++) PetscCall(PetscFree(mnames[i]));
  PetscCheck(!strict || nwrong == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "-strict: %" PetscInt_FMT " failed check(s), see above", nwrong);
  PetscCall(PetscFinalize());
  return 0;
}
