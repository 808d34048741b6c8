static const char help[] = "KSPCACG's lean-basis Gram kernel (GpukitCACGGramWCUDA, src/ksp/cacg/cacggramkernels.cu) against a host loop.\n\n"
                           "  -ms 1,3,5,9,17,33          basis sizes m (default)\n"
                           "  -ns 0,1,63,1000,100003     rows n (default)\n"
                           "  -variants 0,1,2,3          tensor-core variants GPUKIT_CACG_GRAMW_* (default: all)\n"
                           "  -tol t                     |G - ref| <= t ||w_i|| ||w_j|| in the weighted norms (default 1e-12)\n"
                           "  -bench                     time it instead: n = -bench_n (16777216), m = -bench_ms (9,17), with d and\n"
                           "                             W^T D^2 W, each variant, median of -bench_reps (20) calls, against a\n"
                           "                             device-to-device cudaMemcpy of one vector and the general kernel (cacgkernels.cu)\n";

/*
   For every m, n, variant and set of matrices (d or not, W^T D^2 W, W^T W, x.x): every entry of the device result
   within -tol of a long-double host loop, relative to the product of the two vectors' norms (weighted as the
   matrix is); each matrix exactly symmetric; nothing written past the result; a repeated call bit-identical
   (no atomics); vectors at odd 8-byte offsets (not 16-byte aligned); n = 0 gives zeros without touching the
   device arrays; bad arguments return cudaErrorInvalidValue and launch nothing. Exits non-zero on any mismatch.
*/
#include "gktest.h"
#include <petsctime.h>
#if PetscDefined(HAVE_CUDA)
  #include <cuda_runtime.h>
  #include "../../src/ksp/cacg/cacggramkernels.h"
  #include "../../src/ksp/cacg/cacgkernels.h"

  #define GK_MAXM GPUKIT_CACG_GRAMW_MAX_M

  #define GKCallCUDA(call) \
    do { \
      cudaError_t gk_e_ = (call); \
      PetscCheck(gk_e_ == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "%s failed: %s (%d)", #call, cudaGetErrorString(gk_e_), (int)gk_e_); \
    } while (0)

/* a reproducible value in [-1, 1) for (stream, index) */
static double Hash(unsigned long long s, unsigned long long i)
{
  unsigned long long h = s * 0x9E3779B97F4A7C15ULL + i * 0xD1B54A32D192ED03ULL + 0x632BE59BD9B4E019ULL;
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBULL;
  h ^= h >> 31;
  return (double)(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* host and device copies of GK_MAXM basis vectors, d and x of n rows; device vector j starts at an offset of j % 2
   doubles into its allocation (odd j: 8- but not 16-byte aligned) */
typedef struct {
  PetscInt n;
  double  *hw[GK_MAXM], *hd, *hx;
  double  *alloc[GK_MAXM + 2], *dw[GK_MAXM], *dd, *dx;
} Data;

static PetscErrorCode DataCreate(PetscInt n, Data *D)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(D, sizeof(*D)));
  D->n = n;
  for (int j = 0; j < GK_MAXM + 2; j++) {
    double *h;
    PetscCall(PetscMalloc1(n + 1, &h));
    for (PetscInt k = 0; k < n; k++) {
      const double v = Hash((unsigned long long)j + 1, (unsigned long long)k);
      /* d: positive (an inverse diagonal) in [0.25, 4); the basis vectors: mixed signs, scales 1/(j+1) */
      h[k] = j == GK_MAXM ? pow(2.0, 2.0 * v) : v / (j + 1);
    }
    GKCallCUDA(cudaMalloc((void **)&D->alloc[j], (size_t)(n + 2) * sizeof(double)));
    if (j < GK_MAXM) {
      D->hw[j] = h;
      D->dw[j] = D->alloc[j] + (j % 2);
      if (n) GKCallCUDA(cudaMemcpy(D->dw[j], h, (size_t)n * sizeof(double), cudaMemcpyHostToDevice));
    } else if (j == GK_MAXM) {
      D->hd = h;
      D->dd = D->alloc[j] + 1;
      if (n) GKCallCUDA(cudaMemcpy(D->dd, h, (size_t)n * sizeof(double), cudaMemcpyHostToDevice));
    } else {
      D->hx = h;
      D->dx = D->alloc[j];
      if (n) GKCallCUDA(cudaMemcpy(D->dx, h, (size_t)n * sizeof(double), cudaMemcpyHostToDevice));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DataDestroy(Data *D)
{
  PetscFunctionBegin;
  for (int j = 0; j < GK_MAXM; j++) PetscCall(PetscFree(D->hw[j]));
  PetscCall(PetscFree(D->hd));
  PetscCall(PetscFree(D->hx));
  for (int j = 0; j < GK_MAXM + 2; j++) GKCallCUDA(cudaFree(D->alloc[j]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the reference for the first m vectors, in long double: q = 0: W^T D W, 1: W^T D^2 W, 2: W^T W (each m x m), and
   the weighted norms nrm[q][i] (sqrt of sum |d| w_i^2, d^2 w_i^2, w_i^2), x.x */
static PetscErrorCode Reference(const Data *D, int m, long double *ref, double *nrm, long double *xx)
{
  const PetscInt n = D->n;

  PetscFunctionBegin;
  for (int i = 0; i < m; i++)
    for (int j = i; j < m; j++) {
      const double *a = D->hw[i], *b = D->hw[j], *d = D->hd;
      long double   s0 = 0, s1 = 0, s2 = 0;
      for (PetscInt k = 0; k < n; k++) {
        const long double p = (long double)a[k] * b[k];
        s0 += d[k] * p;
        s1 += (long double)d[k] * d[k] * p;
        s2 += p;
      }
      ref[0 * m * m + i * m + j] = ref[0 * m * m + j * m + i] = s0;
      ref[1 * m * m + i * m + j] = ref[1 * m * m + j * m + i] = s1;
      ref[2 * m * m + i * m + j] = ref[2 * m * m + j * m + i] = s2;
    }
  for (int i = 0; i < m; i++) {
    nrm[0 * m + i] = (double)sqrtl(ref[0 * m * m + i * m + i]); /* d > 0 */
    nrm[1 * m + i] = (double)sqrtl(ref[1 * m * m + i * m + i]);
    nrm[2 * m + i] = (double)sqrtl(ref[2 * m * m + i * m + i]);
  }
  *xx = 0;
  for (PetscInt k = 0; k < n; k++) *xx += (long double)D->hx[k] * D->hx[k];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one call against the reference; *bad counts failures, *maxrel the largest error relative to the norms */
static PetscErrorCode CheckOne(const Data *D, int m, int withd, int gd2, int g1, int withx, int variant, const long double *ref, const double *nrm, long double xx, double *work, PetscReal tol, cudaStream_t stream, PetscInt *bad, double *maxrel)
{
  GpukitCACGGramWArgs a;
  long long           nres, nwork;
  double             *res, *res2;
  cudaError_t         err;
  const int           guard = 4;
  char                what[128];

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&a, sizeof(a)));
  a.n = D->n;
  a.m = m;
  for (int j = 0; j < m; j++) a.w[j] = D->dw[j];
  a.d       = withd ? D->dd : NULL;
  a.x       = withx ? D->dx : NULL;
  a.gd2     = gd2;
  a.g1      = g1;
  a.variant = variant;
  PetscCall(PetscSNPrintf(what, sizeof(what), "m %d n %" PetscInt_FMT " d %d gd2 %d g1 %d x %d variant %d", m, D->n, withd, gd2, g1, withx, variant));
  nres  = GpukitCACGGramWResultSize(&a);
  nwork = GpukitCACGGramWWorkSize(&a);
  if (nres != (long long)m * m * (1 + gd2 + g1) + withx) {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s: result size %lld\n", what, nres));
    (*bad)++;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if ((D->n == 0) != (nwork == 0)) {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s: work size %lld\n", what, nwork));
    (*bad)++;
  }
  PetscCall(PetscMalloc2(nres + guard, &res, nres + guard, &res2));
  for (long long e = 0; e < nres + guard; e++) res[e] = res2[e] = -12345.0;
  err = GpukitCACGGramWCUDA(&a, work, res, stream);
  if (err != cudaSuccess) {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s: %s\n", what, cudaGetErrorString(err)));
    (*bad)++;
    PetscCall(PetscFree2(res, res2));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (int e = 0; e < guard; e++)
    if (res[nres + e] != -12345.0) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s: wrote past the result (entry %lld)\n", what, nres + e));
      (*bad)++;
    }
  /* the matrices in order: G (q = 0 reference, or q = 2 without d), G2 (q = 1), G1 (q = 2) */
  {
    int qs[3], nq = 0;
    qs[nq++] = withd ? 0 : 2;
    if (gd2) qs[nq++] = 1;
    if (g1) qs[nq++] = 2;
    for (int r = 0; r < nq; r++) {
      const int     q = qs[r];
      const double *G = res + (long long)r * m * m;
      for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
          const double sc = nrm[q * m + i] * nrm[q * m + j], diff = fabs((double)((long double)G[i * m + j] - ref[q * m * m + i * m + j]));
          const double rel = sc > 0 ? diff / sc : diff;
          if (rel > *maxrel) *maxrel = rel;
          if (!(diff <= tol * sc) || G[i * m + j] != G[j * m + i]) {
            if (*bad < 20) PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s: matrix %d entry (%d,%d) = %.17g, reference %.17Lg, transposed %.17g\n", what, r, i, j, G[i * m + j], ref[q * m * m + i * m + j], G[j * m + i]));
            (*bad)++;
          }
        }
    }
    if (withx) {
      const double v = res[nres - 1], sc = (double)xx, diff = fabs((double)((long double)v - xx));
      if (!(diff <= tol * sc)) {
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s: x.x = %.17g, reference %.17Lg\n", what, v, xx));
        (*bad)++;
      }
    }
  }
  /* the same call again: bit-identical */
  if (D->n > 0) {
    err = GpukitCACGGramWCUDA(&a, work, res2, stream);
    if (err != cudaSuccess || memcmp(res, res2, (size_t)nres * sizeof(double))) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s: a repeated call differs (%s)\n", what, cudaGetErrorString(err)));
      (*bad)++;
    }
  }
  PetscCall(PetscFree2(res, res2));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* bad arguments: cudaErrorInvalidValue, no launch (no pending error), result untouched; n = 0: zeros */
static PetscErrorCode CheckArgs(const Data *D, double *work, PetscInt *bad)
{
  GpukitCACGGramWArgs a, b;
  double              res[4 * GK_MAXM * GK_MAXM];
  cudaError_t         err;
  struct {
    const char *what;
    int         kind;
  } cases[] = {
    {"NULL args",               0 },
    {"NULL result",             1 },
    {"m = 0",                   2 },
    {"m = 34",                  3 },
    {"n = -1",                  4 },
    {"gd2 without d",           5 },
    {"g1 without d",            6 },
    {"gd2 = 2",                 7 },
    {"g1 = -1",                 8 },
    {"a NULL basis vector",     9 },
    {"NULL work",               10},
    {"misaligned basis vector", 11},
    {"misaligned d",            12},
    {"misaligned x",            13},
    {"variant 4",               14},
    {"variant -1",              15},
  };

  PetscFunctionBegin;
  PetscCheck(D->n >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "needs rows");
  PetscCall(PetscMemzero(&a, sizeof(a)));
  a.n = D->n;
  a.m = 5;
  for (int j = 0; j < a.m; j++) a.w[j] = D->dw[j];
  a.d   = D->dd;
  a.x   = D->dx;
  a.gd2 = 1;
  a.g1  = 1;
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    double *r = res;
    b         = a;
    switch (cases[c].kind) {
    case 1:
      r = NULL;
      break;
    case 2:
      b.m = 0;
      break;
    case 3:
      b.m = GK_MAXM + 1;
      break;
    case 4:
      b.n = -1;
      break;
    case 5:
      b.d   = NULL;
      b.g1  = 0;
      break;
    case 6:
      b.d   = NULL;
      b.gd2 = 0;
      break;
    case 7:
      b.gd2 = 2;
      break;
    case 8:
      b.g1 = -1;
      break;
    case 9:
      b.w[3] = NULL;
      break;
    case 11:
      b.w[2] = (const double *)((const char *)D->dw[2] + 4);
      break;
    case 12:
      b.d = (const double *)((const char *)D->dd + 4);
      break;
    case 13:
      b.x = (const double *)((const char *)D->dx + 4);
      break;
    case 14:
      b.variant = 4;
      break;
    case 15:
      b.variant = -1;
      break;
    default:
      break;
    }
    res[0] = -12345.0;
    err    = GpukitCACGGramWCUDA(cases[c].kind == 0 ? NULL : &b, cases[c].kind == 10 ? NULL : work, r, 0);
    if (err != cudaErrorInvalidValue || res[0] != -12345.0 || cudaGetLastError() != cudaSuccess) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL bad arguments (%s): returned %s\n", cases[c].what, cudaGetErrorString(err)));
      (*bad)++;
    }
    if (cases[c].kind != 1 && cases[c].kind != 10 && GpukitCACGGramWWorkSize(cases[c].kind == 0 ? NULL : &b) != 0) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL bad arguments (%s): work size not 0\n", cases[c].what));
      (*bad)++;
    }
  }
  if (GpukitCACGGramWResultSize(NULL) != 0 || GpukitCACGGramWResultSize(&a) != 3 * 25 + 1) {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL result sizes\n"));
    (*bad)++;
  }
  /* n = 0: NULL arrays and NULL work are fine, the result is zeros */
  b   = a;
  b.n = 0;
  for (int j = 0; j < b.m; j++) b.w[j] = NULL;
  b.x = NULL;
  for (int e = 0; e < 3 * 25 + 1; e++) res[e] = -12345.0;
  err = GpukitCACGGramWCUDA(&b, NULL, res, 0);
  if (err != cudaSuccess || GpukitCACGGramWWorkSize(&b) != 0) {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL n = 0 with NULL arrays: %s\n", cudaGetErrorString(err)));
    (*bad)++;
  }
  for (int e = 0; e < 3 * 25; e++)
    if (res[e] != 0.0) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL n = 0: entry %d = %g\n", e, res[e]));
      (*bad)++;
      break;
    }
  if (res[3 * 25] != -12345.0) {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL n = 0: wrote past the result\n"));
    (*bad)++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int CmpDouble(const void *x, const void *y)
{
  const double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

/* median of reps timings (ms) of the Gram call, a device-to-device copy of one vector and the general kernel */
static PetscErrorCode Bench(PetscInt n, const PetscInt *ms, PetscInt nms, PetscInt reps)
{
  double      *dw[GK_MAXM + 1], *work, *res, *t, tcopy;
  cudaEvent_t  e0, e1;
  cudaStream_t stream;
  float        ms_;
  int          dev;
  struct cudaDeviceProp prop;

  PetscFunctionBegin;
  GKCallCUDA(cudaGetDevice(&dev));
  GKCallCUDA(cudaGetDeviceProperties(&prop, dev));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "device %s, %d SMs; n = %" PetscInt_FMT ", median of %" PetscInt_FMT " calls\n", prop.name, prop.multiProcessorCount, n, reps));
  GKCallCUDA(cudaStreamCreate(&stream));
  GKCallCUDA(cudaEventCreate(&e0));
  GKCallCUDA(cudaEventCreate(&e1));
  PetscCall(PetscMalloc1(reps, &t));
  {
    double *h;
    PetscCall(PetscMalloc1(n, &h));
    for (int j = 0; j <= GK_MAXM; j++) dw[j] = NULL;
    for (PetscInt ii = 0; ii < nms; ii++)
      for (int j = 0; j <= ms[ii]; j++)
        if (!dw[j]) {
          for (PetscInt k = 0; k < n; k++) h[k] = Hash((unsigned long long)j + 1, (unsigned long long)k);
          GKCallCUDA(cudaMalloc((void **)&dw[j], (size_t)n * sizeof(double)));
          GKCallCUDA(cudaMemcpy(dw[j], h, (size_t)n * sizeof(double), cudaMemcpyHostToDevice));
        }
    PetscCall(PetscFree(h));
  }
  /* the copy: dw[1] -> dw[0] (d, which then holds values of [-1, 1): the timings do not care) */
  for (PetscInt r = 0; r < reps + 3; r++) {
    GKCallCUDA(cudaEventRecord(e0, stream));
    GKCallCUDA(cudaMemcpyAsync(dw[0], dw[1], (size_t)n * sizeof(double), cudaMemcpyDeviceToDevice, stream));
    GKCallCUDA(cudaEventRecord(e1, stream));
    GKCallCUDA(cudaEventSynchronize(e1));
    GKCallCUDA(cudaEventElapsedTime(&ms_, e0, e1));
    if (r >= 3) t[r - 3] = ms_;
  }
  qsort(t, (size_t)reps, sizeof(double), CmpDouble);
  tcopy = t[reps / 2];
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "cudaMemcpy D2D of one vector: %.4f ms, %.0f GB/s (read + write)\n", tcopy, 2.0 * n * sizeof(double) / (tcopy * 1e6)));

  for (PetscInt ii = 0; ii < nms; ii++) {
    const int           m = (int)ms[ii];
    GpukitCACGGramWArgs a;
    const double        bytes = (double)(m + 1) * n * sizeof(double);

    PetscCall(PetscMemzero(&a, sizeof(a)));
    a.n = n;
    a.m = m;
    for (int j = 0; j < m; j++) a.w[j] = dw[j + 1];
    a.d   = dw[0];
    a.gd2 = 1;
    GKCallCUDA(cudaMalloc((void **)&work, (size_t)GpukitCACGGramWWorkSize(&a) * sizeof(double)));
    PetscCall(PetscMalloc1(GpukitCACGGramWResultSize(&a), &res));
    for (int v = 0; v <= GPUKIT_CACG_GRAMW_M16N8K16; v++) {
      a.variant = v;
      for (PetscInt r = 0; r < reps + 3; r++) {
        GKCallCUDA(cudaEventRecord(e0, stream));
        GKCallCUDA(GpukitCACGGramWCUDA(&a, work, res, stream));
        GKCallCUDA(cudaEventRecord(e1, stream));
        GKCallCUDA(cudaEventSynchronize(e1));
        GKCallCUDA(cudaEventElapsedTime(&ms_, e0, e1));
        if (r >= 3) t[r - 3] = ms_;
      }
      qsort(t, (size_t)reps, sizeof(double), CmpDouble);
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "GramW m %2d + d, W^T D W and W^T D^2 W, variant %d: %.4f ms (min %.4f), %.0f GB/s read = %.0f%% of the copy's bandwidth, %.2f x the time to read the vectors at the copy's rate\n", m, v, t[reps / 2], t[0], bytes / (t[reps / 2] * 1e6),
                            100.0 * (bytes / t[reps / 2]) / (2.0 * n * sizeof(double) / tcopy), t[reps / 2] / (tcopy * (m + 1) / 2.0)));
    }
    PetscCall(PetscFree(res));
    GKCallCUDA(cudaFree(work));
    /* the general kernel (cacgkernels.cu) on the m + 1 vectors, the m (m + 1) / 2 products of W^T W and the m of d.w_i */
    {
      GpukitCACGGramArgs *g;
      double             *gres;
      PetscCall(PetscNew(&g));
      g->n    = n;
      g->nvec = m + 1;
      for (int j = 0; j <= m; j++) g->v[j] = dw[j];
      for (int i = 1; i <= m; i++)
        for (int j = i; j <= m; j++) {
          g->a[g->npairs] = (unsigned char)i;
          g->b[g->npairs] = (unsigned char)j;
          g->npairs++;
        }
      for (int i = 1; i <= m; i++) {
        g->a[g->npairs] = 0;
        g->b[g->npairs] = (unsigned char)i;
        g->npairs++;
      }
      GKCallCUDA(cudaMalloc((void **)&work, (size_t)GpukitCACGGramWorkSize(g) * sizeof(double)));
      PetscCall(PetscMalloc1(g->npairs, &gres));
      for (PetscInt r = 0; r < reps + 3; r++) {
        GKCallCUDA(cudaEventRecord(e0, stream));
        GKCallCUDA(GpukitCACGGramCUDA(g, work, gres, stream));
        GKCallCUDA(cudaEventRecord(e1, stream));
        GKCallCUDA(cudaEventSynchronize(e1));
        GKCallCUDA(cudaEventElapsedTime(&ms_, e0, e1));
        if (r >= 3) t[r - 3] = ms_;
      }
      qsort(t, (size_t)reps, sizeof(double), CmpDouble);
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "general kernel (GpukitCACGGramCUDA), the same %d vectors, %d products: %.4f ms, %.0f GB/s read\n", m + 1, g->npairs, t[reps / 2], bytes / (t[reps / 2] * 1e6)));
      PetscCall(PetscFree(gres));
      PetscCall(PetscFree(g));
      GKCallCUDA(cudaFree(work));
    }
  }
  for (int j = 0; j <= GK_MAXM; j++)
    if (dw[j]) GKCallCUDA(cudaFree(dw[j]));
  PetscCall(PetscFree(t));
  GKCallCUDA(cudaEventDestroy(e0));
  GKCallCUDA(cudaEventDestroy(e1));
  GKCallCUDA(cudaStreamDestroy(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

int main(int argc, char **argv)
{
  PetscInt  ms[16] = {1, 3, 5, 9, 17, 33}, nms = 16, ns[16] = {0, 1, 63, 1000, 100003}, nns = 16, vs[8] = {0, 1, 2, 3}, nvs = 8;
  PetscInt  bms[8] = {9, 17}, nbms = 8, bn = 16777216, reps = 20;
  PetscReal tol   = 1e-12;
  PetscBool bench = PETSC_FALSE, flg;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "KSPCACG lean-basis Gram kernel test", NULL);
  PetscCall(PetscOptionsIntArray("-ms", "basis sizes m", NULL, ms, &nms, &flg));
  if (!flg) nms = 6;
  PetscCall(PetscOptionsIntArray("-ns", "rows n", NULL, ns, &nns, &flg));
  if (!flg) nns = 5;
  PetscCall(PetscOptionsIntArray("-variants", "variants", NULL, vs, &nvs, &flg));
  if (!flg) nvs = 4;
  PetscCall(PetscOptionsReal("-tol", "tolerance relative to the product of the norms", NULL, tol, &tol, NULL));
  PetscCall(PetscOptionsBool("-bench", "time it", NULL, bench, &bench, NULL));
  PetscCall(PetscOptionsInt("-bench_n", "rows for -bench", NULL, bn, &bn, NULL));
  PetscCall(PetscOptionsIntArray("-bench_ms", "basis sizes for -bench", NULL, bms, &nbms, &flg));
  if (!flg) nbms = 2;
  PetscCall(PetscOptionsInt("-bench_reps", "timed calls per case", NULL, reps, &reps, NULL));
  PetscOptionsEnd();
  PetscCheck(PetscDefined(HAVE_CUDA), PETSC_COMM_WORLD, PETSC_ERR_SUP, "This test needs a PETSc configured with CUDA (make petsc-cuda) and a GPU");
#if PetscDefined(HAVE_CUDA)
  for (PetscInt i = 0; i < nms; i++) PetscCheck(ms[i] >= 1 && ms[i] <= GK_MAXM, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-ms: 1..%d", GK_MAXM);
  for (PetscInt i = 0; i < nvs; i++) PetscCheck(vs[i] >= 0 && vs[i] <= GPUKIT_CACG_GRAMW_M16N8K16, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-variants: 0..%d", GPUKIT_CACG_GRAMW_M16N8K16);
  if (bench) {
    for (PetscInt i = 0; i < nbms; i++) PetscCheck(bms[i] >= 1 && bms[i] <= GK_MAXM, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-bench_ms: 1..%d", GK_MAXM);
    PetscCheck(bn >= 1 && reps >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-bench_n, -bench_reps: 1 or more");
    PetscCall(Bench(bn, bms, nbms, reps));
  } else {
    /* (d, gd2, g1, x) */
    const int    sets[][4] = {
      {0, 0, 0, 0},
      {0, 0, 0, 1},
      {1, 0, 0, 0},
      {1, 1, 0, 0},
      {1, 0, 1, 1},
      {1, 1, 1, 1}
    };
    const int    nsets = (int)(sizeof(sets) / sizeof(sets[0]));
    PetscInt     bad = 0, calls = 0, nmax = 1;
    PetscBool    args = PETSC_FALSE;
    double      *work;
    cudaStream_t stream;

    for (PetscInt i = 0; i < nns; i++) {
      PetscCheck(ns[i] >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-ns: 0 or more");
      nmax = PetscMax(nmax, ns[i]);
    }
    {
      GpukitCACGGramWArgs a;
      PetscCall(PetscMemzero(&a, sizeof(a)));
      a.n = nmax;
      a.m = GK_MAXM;
      for (int j = 0; j < GK_MAXM; j++) a.w[j] = (const double *)&a; /* any aligned address: only sizes are asked */
      a.d   = a.w[0];
      a.x   = a.w[0];
      a.gd2 = a.g1 = 1;
      GKCallCUDA(cudaMalloc((void **)&work, (size_t)GpukitCACGGramWWorkSize(&a) * sizeof(double)));
      GKCallCUDA(cudaMemset(work, 0xff, (size_t)GpukitCACGGramWWorkSize(&a) * sizeof(double))); /* NaNs: nothing may rely on zeros */
    }
    GKCallCUDA(cudaStreamCreate(&stream));
    for (PetscInt ni = 0; ni < nns; ni++) {
      Data D;
      PetscCall(DataCreate(ns[ni], &D));
      if (ns[ni] > 0 && !args) {
        PetscCall(CheckArgs(&D, work, &bad));
        args = PETSC_TRUE;
      }
      for (PetscInt mi = 0; mi < nms; mi++) {
        const int    m = (int)ms[mi];
        long double *ref, xx;
        double      *nrm, maxrel = 0;
        PetscInt     bad0 = bad;

        PetscCall(PetscMalloc2(3 * m * m, &ref, 3 * m, &nrm));
        PetscCall(Reference(&D, m, ref, nrm, &xx));
        for (int s = 0; s < nsets; s++)
          for (PetscInt v = 0; v < nvs; v++) {
            PetscCall(CheckOne(&D, m, sets[s][0], sets[s][1], sets[s][2], sets[s][3], (int)vs[v], ref, nrm, xx, work, tol, (s + v) % 2 ? stream : 0, &bad, &maxrel));
            calls++;
          }
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "m %2d n %6" PetscInt_FMT ": %d sets x %" PetscInt_FMT " variants, %s, largest error %.2e of the norms' product\n", m, ns[ni], nsets, nvs, bad == bad0 ? "ok" : "FAILED", maxrel));
        PetscCall(PetscFree2(ref, nrm));
      }
      PetscCall(DataDestroy(&D));
    }
    GKCallCUDA(cudaStreamDestroy(stream));
    GKCallCUDA(cudaFree(work));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " calls, %" PetscInt_FMT " failures\n", calls, bad));
    PetscCheck(bad == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%" PetscInt_FMT " mismatches against the host reference (see above)", bad);
  }
#endif
  PetscCall(PetscFinalize());
  return 0;
}
