static const char help[] = "MATAMB / MATAMBCUDA benchmark: FP64 MatMult, MatMultTranspose, conversion, values refresh and KSPSolve per iteration\n"
                           "on gpukit's generated large matrices (tests/common/gkgen.c) against PETSc's formats and cuSPARSE directly.\n\n"
                           "  -matrices n1,n2,...  generated cases (default: all; see bench/genmat -list)\n"
                           "  -scale s             generator scale 0..4 (default 3, the benchmark set); -seed s (default 1)\n"
                           "  -formats f1,f2,...   host: amb aij sell baij; GPU: ambcuda ambcuda_single ambcuda_det aijcusparse sellcuda\n"
                           "                       cusparse_sell cusparse_bsr aijcusparse_alg2 (AIJCUSPARSE with -mat_cusparse_spmv_alg\n"
                           "                       CSRMV_ALG2) (default: all of one side but aijcusparse_alg2; aij / aijcusparse is the\n"
                           "                       baseline and must be listed; baij and cusparse_bsr only run on matrices with blocks)\n"
                           "  -batch_ms t          target milliseconds of one timed batch (default 20); -batches b (default 7): fastest counts\n"
                           "  -transpose 0|1       also time MatMultTranspose (default 1)\n"
                           "  -refresh 0|1         time a values refresh (baseline, amb, ambcuda): MatSetValues + assembly + first product,\n"
                           "                       MatSetValuesCOO (device values on the GPU) + first product, and the first product after a\n"
                           "                       MatScale (the values changed on the device; refresh_scale_spmv) (default 1)\n"
                           "  -ksp_its n           KSPSolve per iteration over n iterations: GMRES(30) + Jacobi on square matrices, CG +\n"
                           "                       Jacobi on SPD ones (default 50; 0 skips)\n"
                           "  -copy_n n            GPU: entries of the VecCopy vectors that measure the copy bandwidth (default 2^25)\n"
                           "  -tune_products n     after the first product, n more untimed-by-batch products (default 40) whose time over n\n"
                           "                       steady ones is the tuner's search cost (tune_overhead_spmv); 0 skips\n"
                           "  -json path           append one JSON record per (matrix, format) to this file\n"
                           "  -strict              exit with an error if any product is wrong or a format could not be created (tests)\n\n"
                           "Bandwidth: every format's GB/s is the CSR-equivalent traffic over the time, bytes = 12 nnz + 4 (M+1) + 8 M + 8 N\n"
                           "(FP64 values and 32-bit column indices, row offsets, x read once, y written once), so GB/s ratios are time ratios;\n"
                           "frac_copy_bw divides by the device copy bandwidth (VecCopy, 16 bytes an entry) measured in the same run. MATAMB\n"
                           "formats also report the traffic model's bytes (MatAMBGetInfo) over the measured time. Conversion: the first\n"
                           "MatMult after assembly (upload + build) minus a steady one, in SpMVs of that format; the AMBCUDABuild/AMBBuild\n"
                           "log event's time is reported too (the host-side time of that event). MATAMBCUDA splits the first product with its\n"
                           "events: upload (AMBCUDACopyUp), plan (AMBCUDAPlan: model counts, SELL size), builds (AMBCUDABuild,\n"
                           "AMBCUDASellBuild) and the rest (tuned launches, cuSPARSE analysis); conversion_device_spmv is the first product\n"
                           "minus the upload minus one steady product, the cost from the device CSR. Refresh: new values with the same pattern.\n"
                           "Every product is checked against the baseline's before anything is timed (1e-10 relative in the max norm, 1e-5\n"
                           "for FP32 values); a format that fails the check, or whose type is missing, is reported and skipped.\n";

#include <petscksp.h>
#include <petscgpukit.h>
#include <petsctime.h>
#include <time.h>
#include "gpukitcompat.h"
#include "gkbench.h"
#include "gkgen.h"
#if defined(GK_BENCH_CUDA)
  #include <petscdevice_cuda.h>
  #include <cusparse.h>
#endif

#define MAX_FORMATS 12

typedef enum {
  KIND_MAT, /* a PETSc (or gpukit) Mat type */
  KIND_CUSPARSE_SELL,
  KIND_CUSPARSE_BSR
} Kind;

typedef struct {
  const char *name;
  const char *type;    /* Mat type */
  PetscBool   device;  /* VECCUDA vectors */
  Kind        kind;
  const char *prefix;  /* options prefix (gpukit type options) */
  const char *options; /* set in the database under that prefix */
  PetscBool   amb;     /* MatAMBGetInfo applies */
  PetscBool   blocked; /* only for matrices with bs > 1 */
  PetscBool   single;  /* FP32 values: looser check */
} FormatKind;

static const FormatKind kinds[] = {
  {"amb",            MATAMB,         PETSC_FALSE, KIND_MAT,           "hamb_", NULL,                             PETSC_TRUE,  PETSC_FALSE, PETSC_FALSE},
  {"aij",            MATAIJ,         PETSC_FALSE, KIND_MAT,           NULL,    NULL,                             PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"sell",           MATSELL,        PETSC_FALSE, KIND_MAT,           NULL,    NULL,                             PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"baij",           MATBAIJ,        PETSC_FALSE, KIND_MAT,           NULL,    NULL,                             PETSC_FALSE, PETSC_TRUE,  PETSC_FALSE},
  {"ambcuda",        MATAMBCUDA,     PETSC_TRUE,  KIND_MAT,           "amb_",  NULL,                             PETSC_TRUE,  PETSC_FALSE, PETSC_FALSE},
  {"ambcuda_single", MATAMBCUDA,     PETSC_TRUE,  KIND_MAT,           "ambs_", "-ambs_mat_amb_values single",    PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE },
  {"ambcuda_det",    MATAMBCUDA,     PETSC_TRUE,  KIND_MAT,           "ambd_", "-ambd_mat_amb_deterministic 1",  PETSC_TRUE,  PETSC_FALSE, PETSC_FALSE},
  {"aijcusparse",    "aijcusparse",  PETSC_TRUE,  KIND_MAT,           NULL,    NULL,                             PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"aijcusparse_alg2", "aijcusparse", PETSC_TRUE, KIND_MAT,         "cs2_",  "-cs2_mat_cusparse_spmv_alg CSRMV_ALG2", PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"sellcuda",       "sellcuda",     PETSC_TRUE,  KIND_MAT,           NULL,    NULL,                             PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"cusparse_sell",  NULL,           PETSC_TRUE,  KIND_CUSPARSE_SELL, NULL,    NULL,                             PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"cusparse_bsr",   NULL,           PETSC_TRUE,  KIND_CUSPARSE_BSR,  NULL,    NULL,                             PETSC_FALSE, PETSC_TRUE,  PETSC_FALSE},
};

/* a cuSPARSE matrix built directly from the host CSR (one rank) */
typedef struct {
#if defined(GK_BENCH_CUDA)
  cusparseHandle_t     h;
  cusparseSpMatDescr_t mat;  /* SELL */
  cusparseDnVecDescr_t vx, vy;
  cusparseMatDescr_t   descr; /* BSR */
  void                *buf;
  double              *val;
  int                 *col, *off;
  int                  mb, nb, nnzb, bs;
#endif
  PetscInt64 stored; /* stored entries (padding included) */
} Raw;

typedef struct {
  const FormatKind *kind;
  Mat               A;
  Raw               raw;
  PetscBool         ok;          /* created and checked */
  char              why[256];    /* why not */
  PetscLogDouble    tsetup;      /* create + fill + assembly (Mat), host conversion + upload (raw) */
  PetscReal         tfirst;      /* first MatMult after assembly, s */
  PetscReal         tbuild_ev;   /* AMB(CUDA)Build event time, s (0: none) */
  PetscReal         tup_ev, tplan_ev, tsell_ev; /* first product: AMBCUDACopyUp, AMBCUDAPlan, AMBCUDASellBuild event times, s */
  PetscReal         ttune, ttune_build;         /* the -tune_products products after the first: total time, build events in them */
  PetscReal         tcoo_dev, tcoo_down;        /* COO refresh: AMBCUDACOO and AMBCUDACopyDown event time per refresh, s */
  char              layout[16];                 /* MATAMBCUDA: the layout the product uses after tuning */
  PetscReal         tmin, tmed, ttmin; /* s per MatMult (fastest, median batch), MatMultTranspose */
  PetscReal        *tb, *ttb;
  PetscInt          reps, treps; /* MatMult and MatMultTranspose calls per batch (treps 0: the transpose timed once, too slow) */
  PetscReal         err;
  PetscReal         trefresh, tsetvals, trefresh_coo; /* s */
  PetscReal         trefresh_scale;                   /* the first product after a MatScale (values changed on the device), s */
  PetscReal         kspgm, kspcg; /* s per iteration */
  PetscInt          ambb, ambW;
  PetscBool         ambfallback, hasinfo, transok;
  PetscLogDouble    modelbytes;
} Format;

static PetscErrorCode JSONNumber(FILE *fp, const char *key, PetscReal v, PetscBool valid, PetscBool last)
{
  PetscFunctionBegin;
  if (valid && PetscIsNormalReal(v + 1.0)) PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"%s\": %.6g%s", key, (double)v, last ? "" : ", "));
  else PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"%s\": null%s", key, last ? "" : ", "));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -------------------------------------------------------------------------------------------------------------- */
#if defined(GK_BENCH_CUDA)
  #define GKCallCUSPARSE(call) \
    do { \
      cusparseStatus_t st_ = (call); \
      PetscCheck(st_ == CUSPARSE_STATUS_SUCCESS, PETSC_COMM_SELF, PETSC_ERR_LIB, "cuSPARSE error %d (%s) in %s", (int)st_, cusparseGetErrorString(st_), #call); \
    } while (0)

/* SELL-32 (slice width = longest row of the slice, padding column -1, column-major inside a slice), no row sort */
static PetscErrorCode RawCreateSELL(const GKCSR *c, Raw *r)
{
  const int C = 32;
  PetscInt  ns = (c->m + C - 1) / C;
  int      *off, *col;
  double   *val;
  size_t    sz;
  double    one = 1.0, zero = 0.0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(ns + 1, &off));
  off[0] = 0;
  for (PetscInt s = 0; s < ns; s++) {
    PetscInt w = 0;
    for (PetscInt i = s * C; i < PetscMin(c->m, (s + 1) * C); i++) w = PetscMax(w, (PetscInt)(c->ia[i + 1] - c->ia[i]));
    PetscCheck((PetscInt64)off[s] + (PetscInt64)w * C < PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, "SELL storage beyond 32-bit offsets");
    off[s + 1] = off[s] + (int)(w * C);
  }
  r->stored = off[ns];
  PetscCall(PetscMalloc2(off[ns], &col, off[ns], &val));
  for (PetscInt k = 0; k < off[ns]; k++) {
    col[k] = -1;
    val[k] = 0;
  }
  for (PetscInt i = 0; i < c->m; i++) {
    PetscInt s = i / C, l = i % C;
    for (PetscInt64 k = c->ia[i]; k < c->ia[i + 1]; k++) {
      PetscInt64 at = off[s] + (k - c->ia[i]) * C + l;
      col[at]       = (int)c->ja[k];
      val[at]       = (double)PetscRealPart(c->a[k]);
    }
  }
  PetscCallCUDA(cudaMalloc((void **)&r->off, sizeof(int) * (ns + 1)));
  PetscCallCUDA(cudaMalloc((void **)&r->col, sizeof(int) * PetscMax(1, off[ns])));
  PetscCallCUDA(cudaMalloc((void **)&r->val, sizeof(double) * PetscMax(1, off[ns])));
  PetscCallCUDA(cudaMemcpy(r->off, off, sizeof(int) * (ns + 1), cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaMemcpy(r->col, col, sizeof(int) * off[ns], cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaMemcpy(r->val, val, sizeof(double) * off[ns], cudaMemcpyHostToDevice));
  PetscCall(PetscFree2(col, val));
  GKCallCUSPARSE(cusparseCreate(&r->h));
  GKCallCUSPARSE(cusparseCreateSlicedEll(&r->mat, c->M, c->N, (int64_t)c->ia[c->m], (int64_t)off[ns], C, r->off, r->col, r->val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  GKCallCUSPARSE(cusparseCreateDnVec(&r->vx, c->N, r->val, CUDA_R_64F)); /* pointers set at each product */
  GKCallCUSPARSE(cusparseCreateDnVec(&r->vy, c->M, r->val, CUDA_R_64F));
  GKCallCUSPARSE(cusparseSpMV_bufferSize(r->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, r->mat, r->vx, &zero, r->vy, CUDA_R_64F, CUSPARSE_SPMV_SELL_ALG1, &sz));
  PetscCallCUDA(cudaMalloc(&r->buf, PetscMax(sz, 16)));
  PetscCall(PetscFree(off));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* BSR with bs x bs row-major blocks (cusparseDbsrmv); blocks are those of the first row of each block row's pattern
   union (every row of a block row is scanned) */
static PetscErrorCode RawCreateBSR(const GKCSR *c, Raw *r)
{
  PetscInt bs = c->bs, mb = c->m / bs, *bj, *mark;
  int     *rp;
  double  *bv;
  PetscInt64 nnzb = 0;

  PetscFunctionBegin;
  PetscCheck(bs > 1 && c->m % bs == 0 && c->N % bs == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "BSR needs a block size > 1");
  PetscCall(PetscMalloc1(mb + 1, &rp));
  PetscCall(PetscMalloc1(c->N / bs, &mark));
  for (PetscInt j = 0; j < c->N / bs; j++) mark[j] = -1;
  rp[0] = 0;
  for (PetscInt b = 0; b < mb; b++) {
    for (PetscInt a = 0; a < bs; a++)
      for (PetscInt64 k = c->ia[b * bs + a]; k < c->ia[b * bs + a + 1]; k++)
        if (mark[c->ja[k] / bs] != b) {
          mark[c->ja[k] / bs] = b;
          nnzb++;
        }
    rp[b + 1] = (int)nnzb;
  }
  PetscCall(PetscMalloc1(nnzb, &bj));
  PetscCall(PetscCalloc1(nnzb * bs * bs, &bv));
  for (PetscInt j = 0; j < c->N / bs; j++) mark[j] = -1;
  for (PetscInt b = 0; b < mb; b++) {
    PetscInt n = 0;
    for (PetscInt a = 0; a < bs; a++)
      for (PetscInt64 k = c->ia[b * bs + a]; k < c->ia[b * bs + a + 1]; k++)
        if (mark[c->ja[k] / bs] != b) {
          mark[c->ja[k] / bs] = b;
          bj[rp[b] + n++]     = c->ja[k] / bs;
        }
    PetscCall(PetscSortInt(n, bj + rp[b]));
    for (PetscInt a = 0; a < bs; a++)
      for (PetscInt64 k = c->ia[b * bs + a]; k < c->ia[b * bs + a + 1]; k++) {
        PetscInt loc;
        PetscCall(PetscFindInt(c->ja[k] / bs, n, bj + rp[b], &loc));
        bv[((PetscInt64)rp[b] + loc) * bs * bs + a * bs + c->ja[k] % bs] = (double)PetscRealPart(c->a[k]);
      }
  }
  r->mb     = (int)mb;
  r->nb     = (int)(c->N / bs);
  r->nnzb   = (int)nnzb;
  r->bs     = (int)bs;
  r->stored = nnzb * bs * bs;
  {
    int *bji;
    PetscCall(PetscMalloc1(nnzb, &bji));
    for (PetscInt64 k = 0; k < nnzb; k++) bji[k] = (int)bj[k];
    PetscCallCUDA(cudaMalloc((void **)&r->off, sizeof(int) * (mb + 1)));
    PetscCallCUDA(cudaMalloc((void **)&r->col, sizeof(int) * PetscMax(1, nnzb)));
    PetscCallCUDA(cudaMalloc((void **)&r->val, sizeof(double) * PetscMax(1, nnzb * bs * bs)));
    PetscCallCUDA(cudaMemcpy(r->off, rp, sizeof(int) * (mb + 1), cudaMemcpyHostToDevice));
    PetscCallCUDA(cudaMemcpy(r->col, bji, sizeof(int) * nnzb, cudaMemcpyHostToDevice));
    PetscCallCUDA(cudaMemcpy(r->val, bv, sizeof(double) * nnzb * bs * bs, cudaMemcpyHostToDevice));
    PetscCall(PetscFree(bji));
  }
  GKCallCUSPARSE(cusparseCreate(&r->h));
  GKCallCUSPARSE(cusparseCreateMatDescr(&r->descr));
  GKCallCUSPARSE(cusparseSetMatType(r->descr, CUSPARSE_MATRIX_TYPE_GENERAL));
  GKCallCUSPARSE(cusparseSetMatIndexBase(r->descr, CUSPARSE_INDEX_BASE_ZERO));
  PetscCall(PetscFree(rp));
  PetscCall(PetscFree(mark));
  PetscCall(PetscFree(bj));
  PetscCall(PetscFree(bv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RawMult(Kind kind, Raw *r, Vec x, Vec y)
{
  const PetscScalar *px;
  PetscScalar       *py;
  double             one = 1.0, zero = 0.0;

  PetscFunctionBegin;
  PetscCall(VecCUDAGetArrayRead(x, &px));
  PetscCall(VecCUDAGetArrayWrite(y, &py));
  if (kind == KIND_CUSPARSE_SELL) {
    GKCallCUSPARSE(cusparseDnVecSetValues(r->vx, (void *)px));
    GKCallCUSPARSE(cusparseDnVecSetValues(r->vy, (void *)py));
    GKCallCUSPARSE(cusparseSpMV(r->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, r->mat, r->vx, &zero, r->vy, CUDA_R_64F, CUSPARSE_SPMV_SELL_ALG1, r->buf));
  } else {
    GKCallCUSPARSE(cusparseDbsrmv(r->h, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, r->mb, r->nb, r->nnzb, &one, r->descr, r->val, r->off, r->col, r->bs, (const double *)px, &zero, (double *)py));
  }
  PetscCall(VecCUDARestoreArrayRead(x, &px));
  PetscCall(VecCUDARestoreArrayWrite(y, &py));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RawDestroy(Kind kind, Raw *r)
{
  PetscFunctionBegin;
  if (!r->h) PetscFunctionReturn(PETSC_SUCCESS);
  if (kind == KIND_CUSPARSE_SELL) {
    GKCallCUSPARSE(cusparseDestroySpMat(r->mat));
    GKCallCUSPARSE(cusparseDestroyDnVec(r->vx));
    GKCallCUSPARSE(cusparseDestroyDnVec(r->vy));
    PetscCallCUDA(cudaFree(r->buf));
  } else GKCallCUSPARSE(cusparseDestroyMatDescr(r->descr));
  PetscCallCUDA(cudaFree(r->off));
  PetscCallCUDA(cudaFree(r->col));
  PetscCallCUDA(cudaFree(r->val));
  GKCallCUSPARSE(cusparseDestroy(r->h));
  r->h = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/* y = A x in format f */
static PetscErrorCode Mult(Format *f, Vec x, Vec y)
{
  PetscFunctionBegin;
  if (f->kind->kind == KIND_MAT) PetscCall(MatMult(f->A, x, y));
#if defined(GK_BENCH_CUDA)
  else PetscCall(RawMult(f->kind->kind, &f->raw, x, y));
#else
  else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "No CUDA");
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CopyBandwidth(PetscInt n, PetscInt reps, PetscInt batches, PetscReal *gbps)
{
  Vec       a, b;
  PetscInt  N;
  PetscReal tmin = PETSC_MAX_REAL;

  PetscFunctionBegin;
  PetscCall(VecCreate(PETSC_COMM_WORLD, &a));
  PetscCall(VecSetSizes(a, n, PETSC_DECIDE));
  PetscCall(VecSetType(a, VECCUDA));
  PetscCall(VecDuplicate(a, &b));
  PetscCall(VecGetSize(a, &N));
  PetscCall(VecSet(a, 1.0)); /* on the device */
  PetscCall(VecSet(b, 0.0));
  for (PetscInt r = 0; r < 3; r++) PetscCall(VecCopy(a, b));
  for (PetscInt bt = 0; bt < batches; bt++) {
    PetscLogDouble t0, t1;
    PetscReal      dt, dtmax;
    PetscCall(GKDeviceSynchronize(PETSC_TRUE));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(PetscTime(&t0));
    for (PetscInt r = 0; r < reps; r++) PetscCall(VecCopy(a, b));
    PetscCall(GKDeviceSynchronize(PETSC_TRUE));
    PetscCall(PetscTime(&t1));
    dt = (PetscReal)((t1 - t0) / reps);
    PetscCall(MPIU_Allreduce(&dt, &dtmax, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
    tmin = PetscMin(tmin, dtmax);
  }
  *gbps = (PetscReal)(1e-9 * 2.0 * sizeof(PetscScalar) * (PetscLogDouble)N / tmin);
  PetscCall(VecDestroy(&a));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* seconds per call of op (0: MatMult, 1: MatMultTranspose) over reps calls, slowest rank */
static PetscErrorCode TimeBatch(Format *f, PetscBool gpu, PetscInt op, PetscInt reps, Vec x, Vec y, Vec xt, Vec yt, PetscReal *dt)
{
  PetscLogDouble t0, t1;
  PetscReal      d;

  PetscFunctionBegin;
  PetscCall(GKDeviceSynchronize(gpu));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(&t0));
  for (PetscInt r = 0; r < reps; r++) {
    if (op == 0) PetscCall(Mult(f, x, y));
    else PetscCall(MatMultTranspose(f->A, xt, yt));
  }
  PetscCall(GKDeviceSynchronize(gpu));
  PetscCall(PetscTime(&t1));
  d = (PetscReal)((t1 - t0) / reps);
  PetscCall(MPIU_Allreduce(&d, dt, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode LookupFormat(const char *name, const FormatKind **kind)
{
  PetscBool match;

  PetscFunctionBegin;
  *kind = NULL;
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
    PetscCall(PetscStrcmp(name, kinds[i].name, &match));
    if (match) {
      *kind = &kinds[i];
      break;
    }
  }
  PetscCheck(*kind, PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "Unknown format '%s' in -formats; known: amb aij sell baij (host), ambcuda ambcuda_single ambcuda_det aijcusparse aijcusparse_alg2 sellcuda cusparse_sell cusparse_bsr (GPU)", name);
#if !defined(GK_BENCH_CUDA)
  PetscCheck(!(*kind)->device, PETSC_COMM_WORLD, PETSC_ERR_SUP, "Format %s runs on a GPU; build this benchmark against a PETSc 3.19 or later with CUDA (PETSC_DIR=deps/petsc-cuda)", name);
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the time of a log event so far, 0 when there is no such event or no logging */
static PetscErrorCode EventTime(const char *name, PetscReal *t)
{
  PetscLogEvent      ev = -1;
  PetscEventPerfInfo info;
  PetscErrorCode     ierr;

  PetscFunctionBegin;
  *t = 0;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = PetscLogEventGetId(name, &ev);
  if (!ierr && ev >= 0) {
    ierr = PetscLogEventGetPerfInfo(0, ev, &info);
    if (!ierr) *t = (PetscReal)info.time;
  }
  PetscCall(PetscPopErrorHandler());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSPSolve time per iteration: fixed iterations (no convergence test), Jacobi, fastest of 3 after a warm-up */
static PetscErrorCode KSPPerIt(Mat A, KSPType type, PetscInt its, PetscBool gpu, PetscReal *tit)
{
  KSP ksp;
  PC  pc;
  Vec b, u;

  PetscFunctionBegin;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOptionsPrefix(ksp, "bench_"));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, 0.0, 0.0, PETSC_DEFAULT, its));
  PetscCall(KSPSetConvergenceTest(ksp, KSPConvergedSkip, NULL, NULL));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(MatCreateVecs(A, &u, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPSetUp(ksp));
  *tit = PETSC_MAX_REAL;
  for (PetscInt r = 0; r < 4; r++) {
    PetscLogDouble t0, t1;
    PetscInt       n;
    PetscReal      dt;
    PetscCall(VecSet(u, 0.0));
    PetscCall(GKDeviceSynchronize(gpu));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(PetscTime(&t0));
    PetscCall(KSPSolve(ksp, b, u));
    PetscCall(GKDeviceSynchronize(gpu));
    PetscCall(PetscTime(&t1));
    PetscCall(KSPGetIterationNumber(ksp, &n));
    PetscCheck(n > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "KSPSolve did no iteration");
    dt = (PetscReal)((t1 - t0) / n);
    PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &dt, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
    if (r) *tit = PetscMin(*tit, dt);
  }
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&b));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* max-norm relative difference of y against yref */
static PetscErrorCode RelErr(Vec y, Vec yref, Vec w, PetscReal *err)
{
  PetscReal e, n;

  PetscFunctionBegin;
  PetscCall(VecWAXPY(w, -1.0, yref, y));
  PetscCall(VecNorm(w, NORM_INFINITY, &e));
  PetscCall(VecNorm(yref, NORM_INFINITY, &n));
  *err = n > 0 ? e / n : e;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* builds format f from the generated rows; on failure (type missing, error) f->ok = false and why says it */
static PetscErrorCode CreateFormat(Format *f, const GKCSR *c, PetscMPIInt size)
{
  PetscLogDouble t0, t1;
  PetscErrorCode ierr = PETSC_SUCCESS;

  PetscFunctionBegin;
  f->ok = PETSC_FALSE;
  if (f->kind->blocked && c->bs == 1) {
    PetscCall(PetscStrncpy(f->why, "no blocks in this matrix", sizeof(f->why)));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (f->kind->kind != KIND_MAT && size > 1) {
    PetscCall(PetscStrncpy(f->why, "direct cuSPARSE formats run on one rank only", sizeof(f->why)));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#if defined(GPUKIT_BENCH_NO_TYPES)
  if (f->kind->amb) {
    PetscCall(PetscStrncpy(f->why, "built with GPUKIT_BENCH_NO_TYPES (no MATAMB in this library)", sizeof(f->why)));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  if (f->kind->options) PetscCall(PetscOptionsInsertString(NULL, f->kind->options));
  PetscCall(GKDeviceSynchronize(f->kind->device));
  PetscCall(PetscTime(&t0));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  if (f->kind->kind == KIND_MAT) ierr = GKCSRToMat(PETSC_COMM_WORLD, c, f->kind->type, f->kind->prefix, &f->A);
#if defined(GK_BENCH_CUDA)
  else if (f->kind->kind == KIND_CUSPARSE_SELL) ierr = RawCreateSELL(c, &f->raw);
  else ierr = RawCreateBSR(c, &f->raw);
#endif
  PetscCall(PetscPopErrorHandler());
  PetscCall(GKDeviceSynchronize(f->kind->device));
  PetscCall(PetscTime(&t1));
  {
    PetscErrorCode any;
    PetscCallMPI(MPI_Allreduce(&ierr, &any, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD));
    if (any) {
      const char *text;
      PetscCall(PetscErrorMessage(any, &text, NULL));
      PetscCall(PetscSNPrintf(f->why, sizeof(f->why), "creating it failed (PETSc error %d: %s; a missing type?)", (int)any, text ? text : "?"));
      PetscCall(MatDestroy(&f->A));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  f->tsetup = t1 - t0;
  f->ok     = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DestroyFormat(Format *f)
{
  PetscFunctionBegin;
  PetscCall(MatDestroy(&f->A));
#if defined(GK_BENCH_CUDA)
  if (f->kind->kind != KIND_MAT) PetscCall(RawDestroy(f->kind->kind, &f->raw));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Values refresh with the same pattern: (1) MatSetValues of every local row (host; timed apart) + assembly + first
   product; (2) MatSetPreallocationCOO once, then MatSetValuesCOO with the values on the device (GPU formats) or host
   + first product (fastest of 3). Both minus nothing: the report subtracts one steady product. */
/* a timed section on every rank, device work included: TimedBegin() waits for the device and the other ranks and
   starts the clock; TimedEnd() waits for the device, takes the slowest rank's time and keeps the smallest in *best */
static PetscErrorCode TimedBegin(PetscBool gpu, PetscLogDouble *t0)
{
  PetscFunctionBegin;
  PetscCall(GKDeviceSynchronize(gpu));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(t0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TimedEnd(PetscBool gpu, PetscLogDouble t0, PetscReal *best)
{
  PetscLogDouble t1;
  PetscReal      dt;

  PetscFunctionBegin;
  PetscCall(GKDeviceSynchronize(gpu));
  PetscCall(PetscTime(&t1));
  dt = (PetscReal)(t1 - t0);
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &dt, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
  *best = PetscMin(*best, dt);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Refresh(Format *f, const GKCSR *c, PetscBool gpu, Vec x, Vec y)
{
  PetscLogDouble t0, t1, t2;
  PetscScalar   *v, *vd = NULL;
  PetscInt      *ci, *cj;
  PetscCount     n = (PetscCount)c->ia[c->m];
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(n, &v));
  for (PetscCount k = 0; k < n; k++) v[k] = c->a[k] * 1.0009765625; /* exact in binary: the same matrix times 1 + 2^-10 */
  PetscCall(GKDeviceSynchronize(gpu));
  PetscCall(PetscTime(&t0));
  for (PetscInt r = 0; r < c->m; r++) {
    PetscInt row = c->rstart + r, len = (PetscInt)(c->ia[r + 1] - c->ia[r]);
    PetscCall(MatSetValues(f->A, 1, &row, len, c->ja + c->ia[r], v + c->ia[r], INSERT_VALUES));
  }
  PetscCall(PetscTime(&t1));
  PetscCall(MatAssemblyBegin(f->A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(f->A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatMult(f->A, x, y));
  PetscCall(GKDeviceSynchronize(gpu));
  PetscCall(PetscTime(&t2));
  f->tsetvals = (PetscReal)(t1 - t0);
  f->trefresh = (PetscReal)(t2 - t1);
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &f->trefresh, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &f->tsetvals, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));

  /* COO */
  f->trefresh_coo = 0;
  PetscCall(PetscMalloc2(n, &ci, n, &cj));
  for (PetscInt r = 0; r < c->m; r++)
    for (PetscInt64 k = c->ia[r]; k < c->ia[r + 1]; k++) {
      ci[k] = c->rstart + r;
      cj[k] = c->ja[k];
    }
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MatSetPreallocationCOO(f->A, n, ci, cj);
  if (!ierr) ierr = MatSetValuesCOO(f->A, c->a, INSERT_VALUES);
  if (!ierr) ierr = MatMult(f->A, x, y);
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscFree2(ci, cj));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ierr, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD));
  if (ierr) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: MatSetPreallocationCOO/MatSetValuesCOO failed (error %d); no COO refresh time\n", f->kind->name, (int)ierr));
    f->trefresh_coo = -1;
  } else {
#if defined(GK_BENCH_CUDA)
    if (gpu) {
      PetscCallCUDA(cudaMalloc((void **)&vd, sizeof(PetscScalar) * PetscMax(1, n)));
      PetscCallCUDA(cudaMemcpy(vd, v, sizeof(PetscScalar) * n, cudaMemcpyHostToDevice));
    }
#endif
    PetscReal e0[2], e1[2];
    PetscCall(EventTime("AMBCUDACOO", &e0[0]));
    PetscCall(EventTime("AMBCUDACopyDown", &e0[1]));
    f->trefresh_coo = PETSC_MAX_REAL;
    for (PetscInt rep = 0; rep < 3; rep++) {
      PetscCall(TimedBegin(gpu, &t0));
      PetscCall(MatSetValuesCOO(f->A, vd ? vd : v, INSERT_VALUES));
      PetscCall(MatMult(f->A, x, y));
      PetscCall(TimedEnd(gpu, t0, &f->trefresh_coo));
    }
    PetscCall(EventTime("AMBCUDACOO", &e1[0]));
    PetscCall(EventTime("AMBCUDACopyDown", &e1[1]));
    f->tcoo_dev  = f->kind->amb ? (e1[0] - e0[0]) / 3 : 0;
    f->tcoo_down = f->kind->amb ? (e1[1] - e0[1]) / 3 : 0;
#if defined(GK_BENCH_CUDA)
    if (vd) PetscCallCUDA(cudaFree(vd));
#endif
  }
  PetscCall(PetscFree(v));

  /* (3) the values changed on the device alone: MatScale (by 2 and 1/2 in turn, exact) then the first product, which
     refreshes whatever the format keeps besides the CSR values; fastest of 5, only the product timed */
  f->trefresh_scale = PETSC_MAX_REAL;
  for (PetscInt rep = 0; rep < 5; rep++) {
    PetscCall(MatScale(f->A, rep % 2 ? 0.5 : 2.0));
    PetscCall(TimedBegin(gpu, &t0));
    PetscCall(MatMult(f->A, x, y));
    PetscCall(TimedEnd(gpu, t0, &f->trefresh_scale));
  }
  PetscCall(MatScale(f->A, 0.5)); /* 2, 1/2, 2, 1/2, 2: one more halving gives the values back */
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char           *mnames[64], *fnames[MAX_FORMATS], json[PETSC_MAX_PATH_LEN] = "", version[32], date[64], device[256] = "cpu";
  PetscInt        nm = 64, nf = MAX_FORMATS, scale = GK_GEN_SCALE_DEFAULT, seed = 1, batches = 7, kspits = 50, copyn = 33554432, ncases, ntune = 40;
  PetscReal       batchms = 20, copy_gbps = 0;
  PetscBool       mset, fset, hasjson, gpu, dotrans = PETSC_TRUE, dorefresh = PETSC_TRUE, strict = PETSC_FALSE;
  PetscInt        nwrong = 0;
  PetscMPIInt     size, rank;
  Format          fmt[MAX_FORMATS];
  const GKGenCase *cs;
  const char     *envdate, *baseline;
  FILE           *fp = NULL;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscLogDefaultBegin()); /* for the build event's time */
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscArrayzero(fmt, MAX_FORMATS));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "MATAMB benchmark", "bench");
  PetscCall(PetscOptionsStringArray("-matrices", "Generated cases, comma-separated (default all)", "amb_bench", mnames, &nm, &mset));
  PetscCall(PetscOptionsStringArray("-formats", "Formats, comma-separated", "amb_bench", fnames, &nf, &fset));
  PetscCall(PetscOptionsInt("-scale", "Generator scale", "amb_bench", scale, &scale, NULL));
  PetscCall(PetscOptionsInt("-seed", "Generator seed", "amb_bench", seed, &seed, NULL));
  PetscCall(PetscOptionsInt("-batches", "Timed batches (the fastest counts)", "amb_bench", batches, &batches, NULL));
  PetscCall(PetscOptionsReal("-batch_ms", "Target milliseconds of one batch", "amb_bench", batchms, &batchms, NULL));
  PetscCall(PetscOptionsBool("-transpose", "Also time MatMultTranspose", "amb_bench", dotrans, &dotrans, NULL));
  PetscCall(PetscOptionsBool("-refresh", "Time the values refresh", "amb_bench", dorefresh, &dorefresh, NULL));
  PetscCall(PetscOptionsInt("-ksp_its", "KSPSolve iterations per solve (0: skip)", "amb_bench", kspits, &kspits, NULL));
  PetscCall(PetscOptionsInt("-tune_products", "Products after the first whose time over steady ones is the tuning cost (0: skip)", "amb_bench", ntune, &ntune, NULL));
  PetscCall(PetscOptionsInt("-copy_n", "Entries per rank of the copy-bandwidth vectors", "amb_bench", copyn, &copyn, NULL));
  PetscCall(PetscOptionsString("-json", "Append JSON records to this file", "amb_bench", json, json, sizeof(json), &hasjson));
  PetscCall(PetscOptionsBool("-strict", "Exit with an error when a product or a format creation failed (for tests)", "amb_bench", strict, &strict, NULL));
  PetscOptionsEnd();
  PetscCall(GKGenerateList(&ncases, &cs));
  if (!mset) {
    nm = ncases;
    for (PetscInt i = 0; i < nm; i++) PetscCall(PetscStrallocpy(cs[i].name, &mnames[i]));
  }
  if (!fset) {
#if defined(GK_BENCH_CUDA)
    const char *def[] = {"ambcuda", "ambcuda_single", "ambcuda_det", "aijcusparse", "sellcuda", "cusparse_sell", "cusparse_bsr"};
#else
    const char *def[] = {"amb", "aij", "sell", "baij"};
#endif
    nf = (PetscInt)(sizeof(def) / sizeof(def[0]));
    for (PetscInt i = 0; i < nf; i++) PetscCall(PetscStrallocpy(def[i], &fnames[i]));
  }
  PetscCheck(nf >= 1 && nm >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "No format or no matrix to run");
  PetscCheck(batches >= 1 && batchms > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-batches must be >= 1 and -batch_ms > 0");
  for (PetscInt i = 0; i < nf; i++) {
    PetscCall(LookupFormat(fnames[i], &fmt[i].kind));
    PetscCheck(fmt[i].kind->device == fmt[0].kind->device, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-formats mixes host and GPU formats (%s, %s)", fmt[0].kind->name, fmt[i].kind->name);
    for (PetscInt j = 0; j < i; j++) PetscCheck(fmt[j].kind != fmt[i].kind, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "Format %s listed twice", fmt[i].kind->name);
  }
  gpu      = fmt[0].kind->device;
  baseline = gpu ? "aijcusparse" : "aij";
  {
    PetscInt ib = -1;
    for (PetscInt i = 0; i < nf; i++) {
      PetscBool m;
      PetscCall(PetscStrcmp(fmt[i].kind->name, baseline, &m));
      if (m) ib = i;
    }
    PetscCheck(ib >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-formats must include %s (the baseline and the reference of the correctness check)", baseline);
    if (ib != 0) { /* the baseline first: it gives the reference product */
      Format t = fmt[0];
      fmt[0]   = fmt[ib];
      fmt[ib]  = t;
    }
  }
  if (gpu) {
    PetscCall(CopyBandwidth(copyn, 20, 5, &copy_gbps));
    PetscCall(GKDeviceName(device, sizeof(device)));
  }
  envdate = getenv("GPUKIT_DATE");
  if (envdate && envdate[0]) PetscCall(PetscStrncpy(date, envdate, sizeof(date)));
  else {
    time_t now = time(NULL);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
  }
  PetscCall(PetscSNPrintf(version, sizeof(version), "%d.%d.%d", PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "amb_bench: %s, %d rank(s), scale %" PetscInt_FMT ", seed %" PetscInt_FMT "%s", gpu ? device : "host", size, scale, seed, gpu ? "" : "\n"));
  if (gpu) PetscCall(PetscPrintf(PETSC_COMM_WORLD, ", copy bandwidth %.0f GB/s (VecCopy)\n", (double)copy_gbps));
  if (hasjson && json[0]) PetscCall(PetscFOpen(PETSC_COMM_WORLD, json, "a", &fp));

  for (PetscInt mi = 0; mi < nm; mi++) {
    GKCSR           *c;
    GKRowStats       st;
    const GKGenCase *gc;
    PetscLogDouble   tg0, tg1;
    Vec              x, y, yref, w, xt = NULL, yt = NULL, ytref = NULL, wt = NULL;
    PetscRandom      rnd;
    PetscLogDouble   csrbytes;

    PetscCall(GKGenerateLookup(mnames[mi], &gc));
    PetscCall(PetscTime(&tg0));
    PetscCall(GKGenerateCSR(PETSC_COMM_WORLD, mnames[mi], scale, seed, &c));
    PetscCall(PetscTime(&tg1));
    PetscCall(GKCSRRowStats(PETSC_COMM_WORLD, c, &st));
    csrbytes = 12.0 * (PetscLogDouble)st.nnz + 4.0 * (st.rows + 1) + 8.0 * st.rows + 8.0 * st.cols;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "== %s: %" PetscInt_FMT " x %" PetscInt_FMT ", nnz %" PetscInt64_FMT ", row length mean %.2f std %.2f max %" PetscInt_FMT " (generated in %.2f s)\n", mnames[mi], st.rows, st.cols, st.nnz, (double)st.mean, (double)st.std, st.maxlen, tg1 - tg0));

    for (PetscInt f = 0; f < nf; f++) {
      Format *F  = &fmt[f];
      F->why[0]  = 0;
      F->tbuild_ev = F->tup_ev = F->tplan_ev = F->tsell_ev = F->ttune = F->ttune_build = F->tcoo_dev = F->tcoo_down = 0;
      F->layout[0] = 0;
      F->treps     = 0; /* the transpose's figures are this matrix's or none (a slow or wrong one left none behind) */
      F->ttmin     = 0;
      PetscCall(CreateFormat(F, c, size));
      if (!F->ok) {
        PetscCheck(f > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "The baseline %s could not be created: %s", baseline, F->why);
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-15s skipped: %s\n", F->kind->name, F->why));
        if (F->why[0] == 'c') nwrong++; /* "creating it failed" (not "no blocks", not "one rank only") */
        continue;
      }
      if (f == 0) {
        PetscCall(MatCreateVecs(F->A, &x, &y));
        PetscCall(VecDuplicate(y, &yref));
        PetscCall(VecDuplicate(y, &w));
        PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
        PetscCall(PetscRandomSetSeed(rnd, 20240601));
        PetscCall(PetscRandomSeed(rnd));
        PetscCall(VecSetRandom(x, rnd));
        PetscCall(PetscRandomDestroy(&rnd));
        if (dotrans) {
          PetscCall(VecDuplicate(y, &xt));
          PetscCall(VecDuplicate(x, &yt));
          PetscCall(VecDuplicate(x, &ytref));
          PetscCall(VecDuplicate(x, &wt)); /* xt is set from the reference product below */
        }
      }
      /* the first product after assembly: upload + conversion (+ the product) */
      {
        PetscLogDouble t0, t1;
        PetscReal      ev0, ev1, dt, s0[3], s1[3];
        const char    *evname = gpu ? "AMBCUDABuild" : "AMBBuild", *split[3] = {"AMBCUDACopyUp", "AMBCUDAPlan", "AMBCUDASellBuild"};
        PetscCall(EventTime(evname, &ev0));
        for (int k = 0; k < 3; k++) PetscCall(EventTime(split[k], &s0[k]));
        PetscCall(GKDeviceSynchronize(gpu));
        PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
        PetscCall(PetscTime(&t0));
        PetscCall(Mult(F, x, y));
        PetscCall(GKDeviceSynchronize(gpu));
        PetscCall(PetscTime(&t1));
        PetscCall(EventTime(evname, &ev1));
        for (int k = 0; k < 3; k++) PetscCall(EventTime(split[k], &s1[k]));
        dt = (PetscReal)(t1 - t0);
        PetscCall(MPIU_Allreduce(&dt, &F->tfirst, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
        F->tbuild_ev = F->kind->amb ? ev1 - ev0 : 0;
        if (F->kind->amb && gpu) {
          F->tup_ev   = s1[0] - s0[0];
          F->tplan_ev = s1[1] - s0[1];
          F->tsell_ev = s1[2] - s0[2];
        }
      }
      /* the tuner's search: the next products (every format, so that the baseline's shows the noise floor) */
      if (ntune > 0) {
        PetscLogDouble t0, t1;
        PetscReal      b0[2], b1[2], dt;
        PetscCall(EventTime(gpu ? "AMBCUDABuild" : "AMBBuild", &b0[0]));
        PetscCall(EventTime("AMBCUDASellBuild", &b0[1]));
        PetscCall(GKDeviceSynchronize(gpu));
        PetscCall(PetscTime(&t0));
        for (PetscInt k = 0; k < ntune; k++) PetscCall(Mult(F, x, y));
        PetscCall(GKDeviceSynchronize(gpu));
        PetscCall(PetscTime(&t1));
        PetscCall(EventTime(gpu ? "AMBCUDABuild" : "AMBBuild", &b1[0]));
        PetscCall(EventTime("AMBCUDASellBuild", &b1[1]));
        dt = (PetscReal)(t1 - t0);
        PetscCall(MPIU_Allreduce(&dt, &F->ttune, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
        F->ttune_build = F->kind->amb ? (b1[0] - b0[0]) + (b1[1] - b0[1]) : 0;
      }
#if defined(GK_BENCH_CUDA) && !defined(GPUKIT_BENCH_NO_TYPES)
      if (F->kind->amb && gpu && F->A) { /* the layout the tuner chose (rank 0's diagonal block on MPI) */
        Mat         blk = F->A;
        const char *name = NULL;
        PetscErrorCode (*lf)(Mat, const char **) = NULL;
        if (size > 1) PetscCall(MatMPIAIJGetSeqAIJ(F->A, &blk, NULL, NULL));
        PetscCall(PetscObjectQueryFunction((PetscObject)blk, "MatAMBCUDAGetLayout_C", &lf));
        if (lf) PetscCall((*lf)(blk, &name));
        PetscCall(PetscStrncpy(F->layout, name ? name : "?", sizeof(F->layout)));
      }
#endif
      F->transok = (PetscBool)(dotrans && F->kind->kind == KIND_MAT);
      if (f == 0) {
        PetscCall(VecCopy(y, yref));
        if (dotrans) {
          PetscCall(VecCopy(yref, xt));
          PetscCall(VecShift(xt, 0.5));
          PetscCall(MatMultTranspose(F->A, xt, ytref));
        }
        F->err = 0;
      } else {
        PetscReal tol = F->kind->single ? 1e-5 : 1e-10;
        PetscCall(RelErr(y, yref, w, &F->err));
        if (!(F->err <= tol)) {
          PetscCall(PetscSNPrintf(F->why, sizeof(F->why), "MatMult differs from %s by %g relative (> %g)", baseline, (double)F->err, (double)tol));
          F->ok = PETSC_FALSE;
        } else if (dotrans && F->kind->kind == KIND_MAT) {
          PetscReal et;
          PetscCall(MatMultTranspose(F->A, xt, yt));
          PetscCall(RelErr(yt, ytref, wt, &et));
          F->transok = (PetscBool)(et <= tol);
          if (!F->transok) nwrong++;
          if (!F->transok) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-15s WRONG MatMultTranspose: differs from %s by %g relative (> %g); its transpose is not timed\n", F->kind->name, baseline, (double)et, (double)tol));
        }
        if (!F->ok) {
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-15s WRONG: %s; not timed\n", F->kind->name, F->why));
          nwrong++;
          PetscCall(DestroyFormat(F));
          continue;
        }
      }
      F->hasinfo = PETSC_FALSE;
#if !defined(GPUKIT_BENCH_NO_TYPES)
      if (F->kind->amb) {
        PetscCall(MatAMBGetInfo(F->A, &F->ambb, &F->ambW, &F->ambfallback, &F->modelbytes));
        F->hasinfo = PETSC_TRUE;
      }
#endif
      /* reps per batch from a short measurement */
      {
        PetscReal t1;
        PetscCall(TimeBatch(F, gpu, 0, 3, x, y, NULL, NULL, &t1));
        F->reps = (PetscInt)PetscMax(3, PetscMin(2000, PetscCeilReal(1e-3 * batchms / t1)));
        /* the transpose from its own call: PETSc's MATSELLCUDA took 50-580 ms a MatMultTranspose (session 22, H200)
           and the batches with MatMult's reps passed the case limit on rmat20; past 0.1 s a call one call is the figure */
        if (F->transok) {
          PetscCall(TimeBatch(F, gpu, 1, 1, NULL, NULL, xt, yt, &t1));
          F->treps = t1 > 0.1 ? 0 : (PetscInt)PetscMax(1, PetscMin(F->reps, PetscCeilReal(1e-3 * batchms / t1)));
          if (!F->treps) F->ttmin = t1;
        }
      }
    }

    /* batches interleaved over the formats */
    for (PetscInt f = 0; f < nf; f++)
      if (fmt[f].ok) PetscCall(PetscMalloc2(batches, &fmt[f].tb, batches, &fmt[f].ttb));
    for (PetscInt b = 0; b < batches; b++)
      for (PetscInt f = 0; f < nf; f++)
        if (fmt[f].ok) PetscCall(TimeBatch(&fmt[f], gpu, 0, fmt[f].reps, x, y, NULL, NULL, &fmt[f].tb[b]));
    if (dotrans)
      for (PetscInt b = 0; b < batches; b++)
        for (PetscInt f = 0; f < nf; f++)
          if (fmt[f].ok && fmt[f].transok && fmt[f].treps) PetscCall(TimeBatch(&fmt[f], gpu, 1, fmt[f].treps, NULL, NULL, xt, yt, &fmt[f].ttb[b]));
    for (PetscInt f = 0; f < nf; f++) {
      Format *F = &fmt[f];
      if (!F->ok) continue;
      PetscCall(PetscSortReal(batches, F->tb));
      F->tmin = F->tb[0];
      F->tmed = batches % 2 ? F->tb[batches / 2] : 0.5 * (F->tb[batches / 2 - 1] + F->tb[batches / 2]);
      if (F->transok && F->treps) {
        PetscCall(PetscSortReal(batches, F->ttb));
        F->ttmin = F->ttb[0];
      }
    }
    /* refresh and KSP */
    for (PetscInt f = 0; f < nf; f++) {
      Format *F = &fmt[f];
      F->trefresh = F->trefresh_coo = F->tsetvals = F->trefresh_scale = 0;
      F->kspgm = F->kspcg = 0;
      if (!F->ok || F->kind->kind != KIND_MAT) continue;
      if (kspits > 0 && gc->square) {
        PetscCall(KSPPerIt(F->A, KSPGMRES, kspits, gpu, &F->kspgm));
        if (gc->spd) PetscCall(KSPPerIt(F->A, KSPCG, kspits, gpu, &F->kspcg));
      }
      if (dorefresh && (f == 0 || (F->kind->amb && !F->kind->options))) PetscCall(Refresh(F, c, gpu, x, y)); /* baseline and amb/ambcuda only: SELL's COO preallocation is PETSc's slow generic one; the variants would only repeat it */
    }

    /* report */
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-15s %9s %8s %7s %6s %8s %9s %8s %9s %8s %8s %9s %9s\n", "format", "time_ms", "GB/s", "%copy", "vs_base", "T_ms", "model_GB/s", "conv_spmv", "refr_spmv", "coo_spmv", "gmres_ms", "cg_ms", "setup_s"));
    for (PetscInt f = 0; f < nf; f++) {
      Format   *F = &fmt[f], *B = &fmt[0];
      PetscReal gbps, conv, refr, coo;
      if (!F->ok) continue;
      gbps = (PetscReal)(1e-9 * csrbytes / F->tmin);
      conv = (F->tfirst - F->tmin) / F->tmin;
      refr = F->trefresh > 0 ? (F->trefresh - F->tmin) / F->tmin : 0;
      coo  = F->trefresh_coo > 0 ? (F->trefresh_coo - F->tmin) / F->tmin : 0;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-15s %9.4f %8.1f %6.1f%% %6.2fx %8.4f %9.1f %8.1f %9.1f %8.1f %8.4f %9.4f %9.2f\n", F->kind->name, 1e3 * (double)F->tmin, (double)gbps, gpu ? 100.0 * (double)(gbps / copy_gbps) : 0.0, (double)(B->tmin / F->tmin), 1e3 * (double)F->ttmin,
                            F->hasinfo ? 1e-9 * F->modelbytes / (double)F->tmin : 0.0, (double)conv, (double)refr, (double)coo, 1e3 * (double)F->kspgm, 1e3 * (double)F->kspcg, F->tsetup));
      if (F->hasinfo) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-15s AMB b %" PetscInt_FMT ", W %" PetscInt_FMT ", %s%s%s, model %.1f MB a product (CSR-equivalent %.1f MB); build event %.3f ms\n", "", F->ambb, F->ambW, F->ambfallback ? (F->layout[0] ? "not AMB" : "CSR FALLBACK") : "AMB kernel", F->layout[0] ? ": layout " : "", F->layout, 1e-6 * F->modelbytes, 1e-6 * csrbytes, 1e3 * (double)F->tbuild_ev));
      if (F->hasinfo && gpu) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-15s first product %.3f ms = upload %.3f + plan %.3f + AMB build %.3f + SELL build %.3f + rest %.3f ms; from the device CSR %.1f SpMVs; tuning: %" PetscInt_FMT " products %.1f SpMVs over steady (builds %.3f ms); COO: device %.3f ms, copy down %.3f ms; refresh after a device MatScale %.2f SpMVs\n", "", 1e3 * (double)F->tfirst, 1e3 * (double)F->tup_ev, 1e3 * (double)F->tplan_ev, 1e3 * (double)F->tbuild_ev, 1e3 * (double)F->tsell_ev,
                                                 1e3 * (double)(F->tfirst - F->tup_ev - F->tplan_ev - F->tbuild_ev - F->tsell_ev), (double)((F->tfirst - F->tup_ev - F->tmin) / F->tmin), ntune, ntune > 0 ? (double)((F->ttune - ntune * F->tmin) / F->tmin) : 0.0, 1e3 * (double)F->ttune_build, 1e3 * (double)F->tcoo_dev, 1e3 * (double)F->tcoo_down, F->trefresh_scale > 0 ? (double)((F->trefresh_scale - F->tmin) / F->tmin) : 0.0));
      if (fp && rank == 0) {
        MatType type = F->kind->type ? F->kind->type : "cusparse";
        if (F->A) PetscCall(MatGetType(F->A, &type));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "{"));
        PetscCall(GKJSONString(fp, "bench", "amb_bench", PETSC_FALSE));
        PetscCall(GKJSONString(fp, "case", mnames[mi], PETSC_FALSE));
        PetscCall(GKJSONString(fp, "family", gc->family, PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"scale\": %" PetscInt_FMT ", \"seed\": %" PetscInt_FMT ", \"nranks\": %d, \"rows\": %" PetscInt_FMT ", \"cols\": %" PetscInt_FMT ", \"nnz\": %" PetscInt64_FMT ", \"row_mean\": %.4g, \"row_std\": %.4g, \"row_max\": %" PetscInt_FMT ", \"spd\": %s, \"bs\": %" PetscInt_FMT ", ", scale, seed, size, st.rows, st.cols, st.nnz, (double)st.mean, (double)st.std, st.maxlen, gc->spd ? "true" : "false", c->bs));
        PetscCall(GKJSONString(fp, "format", F->kind->name, PETSC_FALSE));
        PetscCall(GKJSONString(fp, "mat_type", type, PETSC_FALSE));
        PetscCall(GKJSONString(fp, "baseline", baseline, PETSC_FALSE));
        PetscCall(GKJSONString(fp, "bytes_formula", "12*nnz + 4*(rows+1) + 8*rows + 8*cols", PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"csr_bytes\": %.0f, \"time_ms\": %.6g, \"time_ms_median\": %.6g, \"reps\": %" PetscInt_FMT ", \"batches\": %" PetscInt_FMT ", \"gbps\": %.6g, \"max_rel_err\": %.3g, ", csrbytes, 1e3 * (double)F->tmin, 1e3 * (double)F->tmed, F->reps, batches, (double)gbps, (double)F->err));
        PetscCall(JSONNumber(fp, "copy_gbps", copy_gbps, gpu, PETSC_FALSE));
        PetscCall(JSONNumber(fp, "frac_copy_bw", gbps / copy_gbps, gpu, PETSC_FALSE));
        PetscCall(JSONNumber(fp, "speedup_vs_baseline", B->tmin / F->tmin, PETSC_TRUE, PETSC_FALSE));
        PetscCall(JSONNumber(fp, "mult_transpose_ms", 1e3 * F->ttmin, (PetscBool)(F->ttmin > 0), PETSC_FALSE));
        PetscCall(JSONNumber(fp, "mult_transpose_speedup_vs_baseline", F->ttmin > 0 ? B->ttmin / F->ttmin : 0, (PetscBool)(F->ttmin > 0 && B->ttmin > 0), PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"mult_transpose_wrong\": %s, ", dotrans && F->kind->kind == KIND_MAT && !F->transok ? "true" : "false"));
        PetscCall(JSONNumber(fp, "amb_b", (PetscReal)F->ambb, F->hasinfo, PETSC_FALSE));
        PetscCall(JSONNumber(fp, "amb_segment_width", (PetscReal)F->ambW, F->hasinfo, PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"amb_csr_fallback\": %s, ", F->hasinfo ? (F->ambfallback ? "true" : "false") : "null"));
        PetscCall(JSONNumber(fp, "model_bytes", (PetscReal)F->modelbytes, F->hasinfo, PETSC_FALSE));
        PetscCall(JSONNumber(fp, "model_gbps", (PetscReal)(1e-9 * F->modelbytes) / F->tmin, F->hasinfo, PETSC_FALSE));
        PetscCall(JSONNumber(fp, "model_frac_copy_bw", (PetscReal)(1e-9 * F->modelbytes) / F->tmin / copy_gbps, (PetscBool)(F->hasinfo && gpu), PETSC_FALSE));
        PetscCall(JSONNumber(fp, "first_mult_ms", 1e3 * F->tfirst, PETSC_TRUE, PETSC_FALSE));
        PetscCall(JSONNumber(fp, "conversion_spmv", conv, F->kind->kind == KIND_MAT, PETSC_FALSE));
        PetscCall(JSONNumber(fp, "conversion_minus_baseline_spmv", (F->tfirst - B->tfirst) / F->tmin, F->kind->kind == KIND_MAT, PETSC_FALSE)); /* both first products upload the CSR: the difference is the build */
        PetscCall(JSONNumber(fp, "build_event_ms", 1e3 * F->tbuild_ev, F->kind->amb, PETSC_FALSE));
        PetscCall(JSONNumber(fp, "build_event_spmv", F->tbuild_ev / F->tmin, F->kind->amb, PETSC_FALSE));
        {
          PetscBool split = (PetscBool)(F->kind->amb && gpu);
          PetscCall(JSONNumber(fp, "first_upload_ms", 1e3 * F->tup_ev, split, PETSC_FALSE));
          PetscCall(JSONNumber(fp, "first_plan_ms", 1e3 * F->tplan_ev, split, PETSC_FALSE));
          PetscCall(JSONNumber(fp, "first_sell_build_ms", 1e3 * F->tsell_ev, split, PETSC_FALSE));
          PetscCall(JSONNumber(fp, "first_rest_ms", 1e3 * (F->tfirst - F->tup_ev - F->tplan_ev - F->tbuild_ev - F->tsell_ev), split, PETSC_FALSE));
          PetscCall(JSONNumber(fp, "conversion_device_spmv", (F->tfirst - F->tup_ev - F->tmin) / F->tmin, split, PETSC_FALSE));
          PetscCall(JSONNumber(fp, "tune_products", (PetscReal)ntune, (PetscBool)(ntune > 0), PETSC_FALSE));
          PetscCall(JSONNumber(fp, "tune_ms", 1e3 * F->ttune, (PetscBool)(ntune > 0), PETSC_FALSE));
          PetscCall(JSONNumber(fp, "tune_overhead_spmv", (F->ttune - ntune * F->tmin) / F->tmin, (PetscBool)(ntune > 0), PETSC_FALSE));
          PetscCall(JSONNumber(fp, "tune_build_ms", 1e3 * F->ttune_build, (PetscBool)(ntune > 0 && F->kind->amb), PETSC_FALSE));
          PetscCall(JSONNumber(fp, "refresh_coo_device_ms", 1e3 * F->tcoo_dev, (PetscBool)(split && F->trefresh_coo > 0), PETSC_FALSE));
          PetscCall(JSONNumber(fp, "refresh_coo_copydown_ms", 1e3 * F->tcoo_down, (PetscBool)(split && F->trefresh_coo > 0), PETSC_FALSE));
          if (F->layout[0]) PetscCall(GKJSONString(fp, "amb_layout", F->layout, PETSC_FALSE));
        }
        PetscCall(JSONNumber(fp, "setvalues_host_ms", 1e3 * F->tsetvals, (PetscBool)(F->trefresh > 0), PETSC_FALSE));
        PetscCall(JSONNumber(fp, "refresh_ms", 1e3 * F->trefresh, (PetscBool)(F->trefresh > 0), PETSC_FALSE));
        PetscCall(JSONNumber(fp, "refresh_spmv", refr, (PetscBool)(F->trefresh > 0), PETSC_FALSE));
        PetscCall(JSONNumber(fp, "refresh_coo_ms", 1e3 * F->trefresh_coo, (PetscBool)(F->trefresh_coo > 0), PETSC_FALSE));
        PetscCall(JSONNumber(fp, "refresh_coo_spmv", coo, (PetscBool)(F->trefresh_coo > 0), PETSC_FALSE));
        PetscCall(JSONNumber(fp, "refresh_scale_spmv", F->trefresh_scale > 0 ? (F->trefresh_scale - F->tmin) / F->tmin : 0, (PetscBool)(F->trefresh_scale > 0), PETSC_FALSE));
        PetscCall(JSONNumber(fp, "ksp_gmres_ms_per_it", 1e3 * F->kspgm, (PetscBool)(F->kspgm > 0), PETSC_FALSE));
        PetscCall(JSONNumber(fp, "ksp_gmres_speedup_vs_baseline", F->kspgm > 0 ? B->kspgm / F->kspgm : 0, (PetscBool)(F->kspgm > 0 && B->kspgm > 0), PETSC_FALSE));
        PetscCall(JSONNumber(fp, "ksp_cg_ms_per_it", 1e3 * F->kspcg, (PetscBool)(F->kspcg > 0), PETSC_FALSE));
        PetscCall(JSONNumber(fp, "ksp_cg_speedup_vs_baseline", F->kspcg > 0 ? B->kspcg / F->kspcg : 0, (PetscBool)(F->kspcg > 0 && B->kspcg > 0), PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"ksp_its\": %" PetscInt_FMT ", \"setup_s\": %.4g, \"generate_s\": %.4g, \"stored_entries\": %" PetscInt64_FMT ", ", kspits, F->tsetup, tg1 - tg0, F->raw.stored));
        PetscCall(GKJSONRunInfo(fp, version, date, device));
      }
    }
    for (PetscInt f = 0; f < nf; f++) {
      if (!fmt[f].ok && fmt[f].why[0] && fp && rank == 0) { /* a record that says why a format is missing */
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "{"));
        PetscCall(GKJSONString(fp, "bench", "amb_bench", PETSC_FALSE));
        PetscCall(GKJSONString(fp, "case", mnames[mi], PETSC_FALSE));
        PetscCall(GKJSONString(fp, "format", fmt[f].kind->name, PETSC_FALSE));
        PetscCall(GKJSONString(fp, "skipped", fmt[f].why, PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"scale\": %" PetscInt_FMT ", \"nranks\": %d, ", scale, size));
        PetscCall(GKJSONRunInfo(fp, version, date, device));
      }
      if (fmt[f].ok) PetscCall(PetscFree2(fmt[f].tb, fmt[f].ttb));
      PetscCall(DestroyFormat(&fmt[f]));
      fmt[f].ok = PETSC_FALSE;
    }
    if (fp && rank == 0) fflush(fp);
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(VecDestroy(&yref));
    PetscCall(VecDestroy(&w));
    PetscCall(VecDestroy(&xt));
    PetscCall(VecDestroy(&yt));
    PetscCall(VecDestroy(&ytref));
    PetscCall(VecDestroy(&wt));
    PetscCall(GKCSRDestroy(&c));
  }
  if (fp) PetscCall(PetscFClose(PETSC_COMM_WORLD, fp));
  for (PetscInt i = 0; i < nm; i++) PetscCall(PetscFree(mnames[i]));
  for (PetscInt i = 0; i < nf; i++) PetscCall(PetscFree(fnames[i]));
  PetscCheck(!strict || nwrong == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "-strict: %" PetscInt_FMT " wrong product(s) or failed format creation(s), see above", nwrong);
  PetscCall(PetscFinalize());
  return 0;
}
