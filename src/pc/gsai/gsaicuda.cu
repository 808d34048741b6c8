/*
   PCGSAI's device set-up for a one-rank device matrix: the PETSc glue around gsaikernels.cu. Built only against a
   PETSc with CUDA. A is read through its device CSR (GpukitMatGetDeviceCSR(): MATSEQAIJCUSPARSE, and any type that
   composes it, e.g. MATSEQSGDIACUDA), with no copy to the host; a device matrix that gives none is converted to
   MATSEQAIJCUSPARSE first. The steps mirror PCSetUp_GSAI_Host() in gsaihost.c, which is their reference
   (tests/gpu/gsai_cuda.c compares both):
     rows     - B = A (left, spd) or A^T (right, by the library's device transpose, a stable radix sort; its
                permutation is kept so that new values of A only permute)
     pattern  - select (threshold, lower part, cap) and union (powers) kernels: J as CSR on the device; then the
                plan: the size class of every local problem, |I| where needed, the workspace offsets of the rows
                solved in global memory. One read-back to the host (the class sizes and the workspace).
     solve    - the small class (at most 32 pattern entries and 2048 doubles) one warp per row in shared memory; the
                large and huge classes one block per row (128, 512 threads; the large one on an auxiliary stream
                beside the huge one) in a global workspace, in batches of consecutive rows when it exceeds the limit
                (-pc_gsai_device_workspace, else half the free device memory). Householder QR least squares or FSAI
                Cholesky, with the fallback to the diagonal where documented.
     assemble - M (or G) kept in the device CSR the set-up built (gsaidevm.h): its structure is J (for the right
                type M = N^T, which is the structure of A when J is the pattern of A^T, else a device transpose of
                J), its values written on the device by a copy, or a scatter by the transpose's permutation; for
                spd G^T is built on the device too. PCApply() multiplies with it through cuSPARSE; the
                MATSEQAIJCUSPARSE is made only when asked for (PCGSAIGetMatrix()), so no copy to the host.
   With SAME_NONZERO_PATTERN the pattern, the plan and M's structure are kept: only B's values, the solve and the
   copy of the values run again. The values never leave the device. Device memory comes from the library's
   stream-ordered pool (src/sys/gpukitpool.h), so that a new PC does not pay for cudaMalloc()/cudaFree().
*/
#include <petscdevice_cuda.h>
#include <petsctime.h>
#include <climits>
#include "gpukitcuda.h"
#include "gpukitpool.h"
#include "gpukitcsropskernels.h"
#include "gsaiimpl.h"
#include "gsaidevm.h"
#include "gsaikernels.h"

#if defined(GPUKIT_GSAICUDA_AVAILABLE)

/* how M's device value array (CSR order) is made from vals (the order of the rows of N) */
typedef enum {
  GSAI_MAP_IDENTITY, /* left, spd: M = N */
  GSAI_MAP_SCATTER,  /* right, J = the pattern of A^T: M has A's structure, M[perm[e]] = vals[e] */
  GSAI_MAP_GATHER    /* right, other patterns: M = N^T by a transpose of J, M[e] = vals[mperm[e]] */
} GSAIMap;

/* the events that time the device stages */
enum {
  GSAI_EV_START,
  GSAI_EV_ROWS,
  GSAI_EV_PATTERN,
  GSAI_EV_SOLVE,
  GSAI_EV_MSTRUCT,
  GSAI_EV_FORK, /* the large class on the auxiliary stream, beside the huge one */
  GSAI_EV_JOIN,
  GSAI_NEV
};

typedef struct {
  int n;
  /* right: B = A^T, owned here; perm: bval[e] = aval[perm[e]] */
  int    *bptr, *bcol, *perm;
  double *bval;
  int     nnzb;
  /* the pattern J of the rows of N (jcol has room for nnzjcap), and what the local problems need */
  int            *jptr, *jcol, nnzj, nnzjcap;
  int            *n1, *cur, *pos, *cls, *small, *large, *huge, *status;
  long long      *woff;
  double         *vals;
  GpukitGSAIInfo *dinfo;  /* on the device */
  GpukitGSAIInfo *dinfo0; /* on the device: dinfo before the large classes, while the tuner times them */
  GpukitGSAIInfo  plan;  /* the host's copy after the plan */
  /* M from vals */
  GSAIMap     map;
  int        *mperm;
  /* several ranks: the rows of B held here (own and fetched; made on the host or on the device) as a square CSR over
     the compact numbers of their columns, shifted by -u0 so that the local rows of N are 0 .. n-1: bptr has nu + 1
     entries and the kernels get bptr + u0; columns left of the local rows are negative, the merges only compare them */
  int       nu, u0;
  PetscInt *ucol;      /* the global numbers of the nu compact numbers, when the held rows were made on the device */
  PetscBool devrows;   /* the held rows were made on the device from B's device blocks (GSAICUDAHeldRowsDeviceMPI()) */
  PetscBool hostsolve; /* this rank solved its problems on the host (GSAICUDASetUpMPI()) */
  int       nshare;    /* ranks of the PC's communicator that use this rank's device (0: not counted yet, one rank) */
  cudaEvent_t  ev[GSAI_NEV];
  PetscBool    haveev;
  cudaStream_t aux; /* created when both the large and the huge classes have rows */
} PC_GSAI_CUDA;

/* the pattern, its plan and M's value map; stream 0: every set-up ends synchronised, so nothing still uses them */
static PetscErrorCode GSAICUDAFreePattern(PC_GSAI_CUDA *cu)
{
  PetscFunctionBegin;
  PetscCallCUDA(GpukitPoolFreeN(&cu->jptr, 0));
  PetscCallCUDA(GpukitPoolFreeN(&cu->jcol, 0));
  PetscCallCUDA(GpukitPoolFreeN(&cu->n1, 0));
  PetscCallCUDA(GpukitPoolFreeN(&cu->cur, 0));
  PetscCallCUDA(GpukitPoolFreeN(&cu->pos, 0));
  PetscCallCUDA(GpukitPoolFreeN(&cu->cls, 0));
  PetscCallCUDA(GpukitPoolFreeN(&cu->small, 0));
  PetscCallCUDA(GpukitPoolFreeN(&cu->large, 0));
  PetscCallCUDA(GpukitPoolFreeN(&cu->huge, 0));
  PetscCallCUDA(GpukitPoolFreeN(&cu->status, 0));
  PetscCallCUDA(GpukitPoolFreeN(&cu->woff, 0));
  PetscCallCUDA(GpukitPoolFreeN(&cu->vals, 0));
  PetscCallCUDA(GpukitPoolFreeN(&cu->mperm, 0));
  PetscCall(PetscFree(cu->ucol));
  cu->nnzj = cu->nnzjcap = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCReset_GSAI_CUDA(PC pc)
{
  PC_GSAI      *gs = (PC_GSAI *)pc->data;
  PC_GSAI_CUDA *cu = (PC_GSAI_CUDA *)gs->cuda;

  PetscFunctionBegin;
  if (!cu) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GSAICUDAFreePattern(cu));
  PetscCallCUDA(GpukitPoolFreeN(&cu->bptr, 0));
  PetscCallCUDA(GpukitPoolFreeN(&cu->bcol, 0));
  PetscCallCUDA(GpukitPoolFreeN(&cu->bval, 0));
  PetscCallCUDA(GpukitPoolFreeN(&cu->perm, 0));
  PetscCallCUDA(GpukitPoolFreeN(&cu->dinfo, 0));
  PetscCallCUDA(GpukitPoolFreeN(&cu->dinfo0, 0));
  if (cu->haveev)
    for (int i = 0; i < GSAI_NEV; i++) PetscCallCUDA(cudaEventDestroy(cu->ev[i]));
  if (cu->aux) PetscCallCUDA(cudaStreamDestroy(cu->aux));
  PetscCall(PetscFree(gs->cuda));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* rows (selected and capped) of (ptr, col, val) with weights w (NULL: |val|): a new CSR of exactly *nnz entries (read
   back: the power pattern's levels), and its weights when ow; the total also to *dtotal (device) when not NULL */
static PetscErrorCode GSAICUDASelect(int n, const int *ptr, const int *col, const double *val, const double *w, const GpukitGSAISelectArgs *a, int **optr, int **ocol, double **ow, int *nnz, int *dtotal, cudaStream_t stream)
{
  int *cnt;

  PetscFunctionBegin;
  PetscCallCUDA(GpukitPoolMallocN(&cnt, (size_t)n, stream));
  PetscCallCUDA(GpukitPoolMallocN(optr, (size_t)n + 1, stream));
  PetscCallCUDA(GpukitGSAISelectCUDA(n, ptr, col, val, w, a, cnt, NULL, NULL, NULL, stream));
  PetscCallCUDA(GpukitCSRScanCUDA(n, cnt, *optr, dtotal, nnz, stream));
  PetscCallCUDA(GpukitPoolFreeN(&cnt, stream));
  PetscCallCUDA(GpukitPoolMallocN(ocol, (size_t)*nnz, stream));
  if (ow) PetscCallCUDA(GpukitPoolMallocN(ow, (size_t)*nnz, stream));
  PetscCallCUDA(GpukitGSAISelectCUDA(n, ptr, col, val, w, a, NULL, *optr, *ocol, ow ? *ow : NULL, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one level of the power: row k = union of T(j,:) over j in S(k,:), weights summed */
static PetscErrorCode GSAICUDAUnion(int n, const int *sptr, const int *scol, const double *sw, int snnz, const int *tptr, const int *tcol, const double *tw, int **optr, int **ocol, double **ow, int *nnz, cudaStream_t stream)
{
  int *cnt, *cur;

  PetscFunctionBegin;
  PetscCallCUDA(GpukitPoolMallocN(&cnt, (size_t)n, stream));
  PetscCallCUDA(GpukitPoolMallocN(&cur, (size_t)snnz, stream));
  PetscCallCUDA(GpukitPoolMallocN(optr, (size_t)n + 1, stream));
  PetscCallCUDA(GpukitGSAIUnionCUDA(n, sptr, scol, NULL, tptr, tcol, NULL, cur, cnt, NULL, NULL, NULL, stream));
  PetscCallCUDA(GpukitCSRScanCUDA(n, cnt, *optr, NULL, nnz, stream));
  PetscCallCUDA(GpukitPoolMallocN(ocol, (size_t)*nnz, stream));
  PetscCallCUDA(GpukitPoolMallocN(ow, (size_t)*nnz, stream));
  PetscCallCUDA(GpukitGSAIUnionCUDA(n, sptr, scol, sw, tptr, tcol, tw, cur, NULL, *optr, *ocol, *ow, stream));
  PetscCallCUDA(GpukitPoolFreeN(&cnt, stream));
  PetscCallCUDA(GpukitPoolFreeN(&cur, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* J on the device (GSAIPatternRows() in gsaipattern.c); its size goes to cu->dinfo->nnzj. The rows of N are the cu->n
   rows of B from bptr + u0; B has nall rows from bptr (on one rank nall = n and u0 = 0; on several, the rows held, in
   compact numbers shifted by -u0, so that the columns of row u are numbered from -u0 and its diagonal is u - u0: the
   power pattern reaches them through T, the thresholded B, over all nall rows). Without powers nothing is read
   back: jcol gets room for the bound nnz(B) + n. */
static PetscErrorCode GSAICUDAPattern(PC_GSAI *gs, PC_GSAI_CUDA *cu, const int *bptr, const int *bcol, const double *bval, int nnzb, int nall, int u0, cudaStream_t stream)
{
  const int            n = cu->n;
  GpukitGSAISelectArgs a;

  PetscFunctionBegin;
  a.tau  = (double)gs->tau;
  a.coff = 0;
  if (gs->pattern != PCGSAI_PATTERN_POWER || gs->power == 1) {
    int *cnt;

    PetscCheck((long long)nnzb + n <= INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "The device set-up of PCGSAI uses 32-bit indices: A has too many nonzeros (%d) for its pattern; use -pc_gsai_use_device false", nnzb);
    a.threshold = gs->pattern != PCGSAI_PATTERN_A;
    a.lower     = gs->type == PCGSAI_SPD;
    a.cap       = (int)gs->maxnnz;
    cu->nnzjcap = nnzb + n;
    PetscCallCUDA(GpukitPoolMallocN(&cnt, (size_t)n, stream));
    PetscCallCUDA(GpukitPoolMallocN(&cu->jptr, (size_t)n + 1, stream));
    PetscCallCUDA(GpukitPoolMallocN(&cu->jcol, (size_t)cu->nnzjcap, stream));
    PetscCallCUDA(GpukitGSAISelectCUDA(n, bptr + u0, bcol, bval, NULL, &a, cnt, NULL, NULL, NULL, stream));
    PetscCallCUDA(GpukitCSRScanCUDA(n, cnt, cu->jptr, &cu->dinfo->nnzj, NULL, stream));
    PetscCallCUDA(GpukitPoolFreeN(&cnt, stream));
    PetscCallCUDA(GpukitGSAISelectCUDA(n, bptr + u0, bcol, bval, NULL, &a, NULL, cu->jptr, cu->jcol, NULL, stream));
  } else {
    int    *tptr, *tcol, *lptr, *lcol, tnnz, lnnz;
    double *tw, *lw;

    /* level 1: T, the thresholded rows with their diagonal, weights |a|, over all rows; the rows of N are its rows
       u0 .. u0+n-1, and a column j of them is its row j + u0 */
    a.threshold = 1;
    a.lower     = 0;
    a.cap       = 0;
    a.coff      = -u0;
    PetscCall(GSAICUDASelect(nall, bptr, bcol, bval, NULL, &a, &tptr, &tcol, &tw, &tnnz, NULL, stream));
    lptr = tptr + u0;
    lcol = tcol;
    lw   = tw;
    lnnz = tnnz;
    for (PetscInt l = 2; l <= gs->power; l++) {
      int    *nptr, *ncol, nnnz;
      double *nw;
      PetscCall(GSAICUDAUnion(n, lptr, lcol, lw, lnnz, tptr + u0, tcol, tw, &nptr, &ncol, &nw, &nnnz, stream));
      if (lptr != tptr + u0) {
        PetscCallCUDA(GpukitPoolFreeN(&lptr, stream));
        PetscCallCUDA(GpukitPoolFreeN(&lcol, stream));
        PetscCallCUDA(GpukitPoolFreeN(&lw, stream));
      }
      lptr = nptr;
      lcol = ncol;
      lw   = nw;
      lnnz = nnnz;
    }
    /* the lower part (spd) and the cap, on the weights of the power (rows 0 .. n-1, diagonal k) */
    a.threshold = 0;
    a.lower     = gs->type == PCGSAI_SPD;
    a.cap       = (int)gs->maxnnz;
    a.coff      = 0;
    PetscCall(GSAICUDASelect(n, lptr, lcol, NULL, lw, &a, &cu->jptr, &cu->jcol, NULL, &cu->nnzjcap, &cu->dinfo->nnzj, stream));
    PetscCallCUDA(GpukitPoolFreeN(&lptr, stream));
    PetscCallCUDA(GpukitPoolFreeN(&lcol, stream));
    PetscCallCUDA(GpukitPoolFreeN(&lw, stream));
    PetscCallCUDA(GpukitPoolFreeN(&tptr, stream));
    PetscCallCUDA(GpukitPoolFreeN(&tcol, stream));
    PetscCallCUDA(GpukitPoolFreeN(&tw, stream));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A(k,k) for the message of a failure, from the device CSR */
static PetscErrorCode GSAICUDADiagonalEntry(const int *ptr, const int *col, const double *val, int k, PetscReal *akk)
{
  int     range[2], len;
  int    *c;
  double *v;

  PetscFunctionBegin;
  *akk = 0.0;
  PetscCallCUDA(cudaMemcpy(range, ptr + k, 2 * sizeof(int), cudaMemcpyDeviceToHost));
  len = range[1] - range[0];
  if (len <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscMalloc2(len, &c, len, &v));
  PetscCallCUDA(cudaMemcpy(c, col + range[0], (size_t)len * sizeof(int), cudaMemcpyDeviceToHost));
  PetscCallCUDA(cudaMemcpy(v, val + range[0], (size_t)len * sizeof(double), cudaMemcpyDeviceToHost));
  for (int e = 0; e < len; e++)
    if (c[e] == k) *akk = v[e];
  PetscCall(PetscFree2(c, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GSAICUDAElapsed(cudaEvent_t a, cudaEvent_t b, PetscLogDouble *t)
{
  float ms;

  PetscFunctionBegin;
  PetscCallCUDA(cudaEventElapsedTime(&ms, a, b));
  *t += 1e-3 * (PetscLogDouble)ms;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the bucket of a size for a tuner's shape class: the number of bits of v */
static int GSAICUDABits(long long v)
{
  int b = 0;
  while (v > 0) {
    b++;
    v >>= 1;
  }
  return b;
}

/* a class without rows keeps its starting block size: the tuner times only the knobs that matter (ctx: the PC) */
static PetscBool GSAICUDATuneValid(void *ctx, const PetscInt v[])
{
  PC_GSAI      *gs = (PC_GSAI *)((PC)ctx)->data;
  PC_GSAI_CUDA *cu = (PC_GSAI_CUDA *)gs->cuda;

  if (!cu) return PETSC_TRUE;
  if (!cu->plan.nl && v[0] != GPUKIT_GSAI_BLOCK_THREADS) return PETSC_FALSE;
  if (!cu->plan.nh && v[1] != GPUKIT_GSAI_HUGE_THREADS) return PETSC_FALSE;
  return PETSC_TRUE;
}

/* the tuner of the block sizes of the large and huge classes (the PC's, kept across set-ups), for the shape of this
   set-up's local problems: the type, and the buckets of the rows of each class, of their mean workspace and of the
   largest pattern */
static PetscErrorCode GSAICUDATuner(PC pc, PC_GSAI_CUDA *cu)
{
  PC_GSAI        *gs = (PC_GSAI *)pc->data;
  const long long nb = (long long)cu->plan.nl + cu->plan.nh;
  char            shape[96];

  PetscFunctionBegin;
  if (!gs->tuner) {
    const int      lv[] = GPUKIT_GSAI_LARGE_NT, hv[] = GPUKIT_GSAI_HUGE_NT;
    GpukitTuneKnob knobs[2];

    PetscCall(PetscMemzero(knobs, sizeof(knobs)));
    knobs[0].name = "large_threads";
    knobs[0].n    = (PetscInt)(sizeof(lv) / sizeof(lv[0]));
    knobs[1].name = "huge_threads";
    knobs[1].n    = (PetscInt)(sizeof(hv) / sizeof(hv[0]));
    for (PetscInt i = 0; i < knobs[0].n; i++) {
      knobs[0].values[i] = lv[i];
      if (lv[i] == GPUKIT_GSAI_BLOCK_THREADS) knobs[0].start = i;
    }
    for (PetscInt i = 0; i < knobs[1].n; i++) {
      knobs[1].values[i] = hv[i];
      if (hv[i] == GPUKIT_GSAI_HUGE_THREADS) knobs[1].start = i;
    }
    PetscCall(GpukitTunerCreate((PetscObject)pc, "GSAISolveLarge", 2, knobs, &gs->tuner));
    PetscCall(GpukitTunerSetDevice(gs->tuner, PETSC_TRUE));
    PetscCall(GpukitTunerSetRepeatable(gs->tuner, PETSC_TRUE));
    PetscCall(GpukitTunerSetValid(gs->tuner, GSAICUDATuneValid, (void *)pc));
  }
  PetscCall(PetscSNPrintf(shape, sizeof(shape), "%s.l%d.h%d.w%d.x%d", gs->type == PCGSAI_SPD ? "spd" : "ls", GSAICUDABits(cu->plan.nl), GSAICUDABits(cu->plan.nh), GSAICUDABits(nb ? cu->plan.wtotal / nb : 0), GSAICUDABits(cu->plan.maxn2)));
  PetscCall(GpukitTunerSetShape(gs->tuner, shape));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   The large and huge classes, every row at once (workspace ws for all of them), with the tuner's block sizes. While the
   tuner searches, it times its candidates here, each launched -gpukit_tune_samples times (every launch gathers the
   problems again and restores the counts of dinfo, so it gives the same values); the search ends within this call and,
   if the last candidate timed is not the choice, the choice solves once more: M is always the choice's.
*/
static PetscErrorCode GSAICUDASolveLargeTuned(PC pc, PC_GSAI_CUDA *cu, const GpukitGSAIProblem *P, double *ws, cudaStream_t stream, int *lnt, int *hnt)
{
  PC_GSAI        *gs = (PC_GSAI *)pc->data;
  const PetscInt *cfg;
  PetscInt        nlaunch, last[2] = {-1, -1}, ncalls = 0;
  PetscBool       done = PETSC_FALSE, restore = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(GSAICUDATuner(pc, cu));
  if (!cu->dinfo0) PetscCallCUDA(GpukitPoolMallocN(&cu->dinfo0, 1, stream));
  PetscCallCUDA(cudaMemcpyAsync(cu->dinfo0, cu->dinfo, sizeof(GpukitGSAIInfo), cudaMemcpyDeviceToDevice, stream));
  while (!done) {
    PetscCall(GpukitTunerBegin(gs->tuner, 0, (void *)stream, &cfg, &nlaunch));
    last[0] = cfg[0];
    last[1] = cfg[1];
    for (PetscInt l = 0; l < nlaunch; l++) {
      if (restore) PetscCallCUDA(cudaMemcpyAsync(cu->dinfo, cu->dinfo0, sizeof(GpukitGSAIInfo), cudaMemcpyDeviceToDevice, stream));
      PetscCallCUDA(GpukitGSAISolveLargeCUDA(P, 0, cu->n, 1, cu->large, cu->plan.nl, cu->huge, cu->plan.nh, ws, 0, cu->vals, cu->status, cu->dinfo, (int)last[0], (int)last[1], stream, cu->aux, cu->ev[GSAI_EV_FORK], cu->ev[GSAI_EV_JOIN]));
      restore = PETSC_TRUE;
      PetscCall(GpukitTunerMark(gs->tuner));
    }
    PetscCall(GpukitTunerEnd(gs->tuner));
    PetscCall(GpukitTunerGetConfig(gs->tuner, &cfg, &done));
    PetscCheck(done || ++ncalls < 1000, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The tuner of PCGSAI's large classes did not end its search");
  }
  if (cfg[0] != last[0] || cfg[1] != last[1]) {
    PetscCallCUDA(cudaMemcpyAsync(cu->dinfo, cu->dinfo0, sizeof(GpukitGSAIInfo), cudaMemcpyDeviceToDevice, stream));
    PetscCallCUDA(GpukitGSAISolveLargeCUDA(P, 0, cu->n, 1, cu->large, cu->plan.nl, cu->huge, cu->plan.nh, ws, 0, cu->vals, cu->status, cu->dinfo, (int)cfg[0], (int)cfg[1], stream, cu->aux, cu->ev[GSAI_EV_FORK], cu->ev[GSAI_EV_JOIN]));
  }
  *lnt = (int)cfg[0];
  *hnt = (int)cfg[1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the local problems of the plan's rows: the small class in shared memory, the others in a global workspace (in batches
   when it exceeds the limit); enqueued on stream (the batches and the tuner synchronise it) */
static PetscErrorCode GSAICUDASolve(PC pc, PC_GSAI_CUDA *cu, const GpukitGSAIProblem *P, PetscBool newpattern, cudaStream_t stream)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCallCUDA(GpukitGSAISolveSmallCUDA(P, cu->small, cu->plan.ns, cu->plan.smallws, cu->vals, cu->status, cu->dinfo, stream));
  {
    long long budget, cap = 0, base, size, wtotal = cu->plan.wtotal;
    int       nb = 0, r0, r1, lnt = GPUKIT_GSAI_BLOCK_THREADS, hnt = GPUKIT_GSAI_HUGE_THREADS;
    double   *ws;

    if (cu->plan.nl + cu->plan.nh > 0) {
      if (gs->workspace > 0) budget = (long long)gs->workspace * 1024 / (long long)sizeof(double);
      else if (wtotal * (long long)sizeof(double) <= (64LL << 20)) budget = wtotal; /* small enough: no query */
      else {
        size_t fr, tot;
        PetscCallCUDA(cudaMemGetInfo(&fr, &tot));
        budget = (long long)(fr / 2 / (size_t)PetscMax(cu->nshare, 1) / sizeof(double)); /* ranks sharing the device share it */
      }
      if (cu->plan.nl && cu->plan.nh && !cu->aux) PetscCallCUDA(cudaStreamCreateWithFlags(&cu->aux, cudaStreamNonBlocking));
      if (wtotal <= budget) {
        nb  = 1;
        cap = wtotal;
        PetscCallCUDA(GpukitPoolMallocN(&ws, (size_t)cap, stream));
        PetscCall(GSAICUDASolveLargeTuned(pc, cu, P, ws, stream, &lnt, &hnt));
      } else {
        const PetscInt *cfg;

        /* in batches: the tuner's current choice (the starting values until a whole solve has tuned this shape) */
        PetscCall(GSAICUDATuner(pc, cu));
        PetscCall(GpukitTunerGetConfig(gs->tuner, &cfg, NULL));
        lnt = (int)cfg[0];
        hnt = (int)cfg[1];
        /* the largest batch first, to allocate the workspace once */
        for (r0 = 0; r0 < cu->n; r0 = r1, nb++) {
          PetscCallCUDA(GpukitGSAINextBatchCUDA(P, r0, budget, &r1, &base, &size, stream));
          cap = PetscMax(cap, size);
        }
        PetscCallCUDA(GpukitPoolMallocN(&ws, (size_t)cap, stream));
        for (r0 = 0; r0 < cu->n; r0 = r1) {
          PetscCallCUDA(GpukitGSAINextBatchCUDA(P, r0, budget, &r1, &base, &size, stream));
          if (size) PetscCallCUDA(GpukitGSAISolveLargeCUDA(P, r0, r1, 0, cu->large, cu->plan.nl, cu->huge, cu->plan.nh, ws, base, cu->vals, cu->status, cu->dinfo, lnt, hnt, stream, cu->aux, cu->ev[GSAI_EV_FORK], cu->ev[GSAI_EV_JOIN]));
        }
      }
      PetscCallCUDA(GpukitPoolFreeN(&ws, stream)); /* stream-ordered: after the kernels */
    }
    if (newpattern)
      PetscCall(PetscInfo(pc, "%d local problems: small %d (one warp each, %d doubles of shared memory), large %d (one block of %d threads each), huge %d (one block of %d threads each); workspace %lld doubles in %d batch(es) of at most %lld\n", cu->n, cu->plan.ns, cu->plan.smallws, cu->plan.nl, lnt, cu->plan.nh, hnt, wtotal, nb, cap));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one rank: A read through its device CSR */
static PetscErrorCode GSAICUDASetUpSeq(PC pc, Mat A, PetscBool reuse)
{
  PC_GSAI           *gs = (PC_GSAI *)pc->data;
  PC_GSAI_CUDA      *cu;
  Mat                Acsr; /* A, or its MATSEQAIJCUSPARSE copy when A gives no device CSR */
  GpukitMatCaps      caps;
  GpukitDeviceCSR    csr;
  const int         *ai, *aj;
  const PetscScalar *aa;
  const int         *bptr, *bcol;
  const double      *bval;
  int               *mptr = NULL, *mcol = NULL;
  cudaStream_t       stream;
  PetscBool          right, newpattern, newM;
  PetscLogDouble     t0, t1, t2, t3;
  GpukitGSAIProblem  P;
  GpukitGSAIInfo     fin;
  int                nnza;
  GSAIFailure        fail;

  PetscFunctionBegin;
  if (!gs->cuda) PetscCall(PetscNew((PC_GSAI_CUDA **)&gs->cuda));
  cu    = (PC_GSAI_CUDA *)gs->cuda;
  right = (gs->type == PCGSAI_GENERAL && gs->sideused == PC_RIGHT) ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(GpukitCUDAGetStream("PCGSAI builds M (or use -pc_gsai_use_device false)", &stream));
  gs->conversion[0] = 0;
  PetscCall(GpukitMatGetCaps(A, &caps));
  if (caps.devicecsr) {
    PetscCall(PetscObjectReference((PetscObject)A));
    Acsr = A;
    PetscCall(PetscInfo(pc, "The device set-up reads the %s matrix through its device CSR\n", ((PetscObject)A)->type_name));
  } else {
    PetscCall(PetscSNPrintf(gs->conversion, sizeof(gs->conversion), "%s converted to MATSEQAIJCUSPARSE for its CSR", ((PetscObject)A)->type_name));
    PetscCall(PetscInfo(pc, "The device set-up reads CSR: converting the %s matrix, which gives no device CSR, to MATSEQAIJCUSPARSE\n", ((PetscObject)A)->type_name));
    PetscCall(MatConvert(A, MATSEQAIJCUSPARSE, MAT_INITIAL_MATRIX, &Acsr));
  }
  PetscCall(GpukitMatGetDeviceCSR(Acsr, &csr));
  PetscCheck(csr.m == A->rmap->n && csr.n == A->cmap->n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The device CSR of the %s matrix is %" PetscInt_FMT " x %" PetscInt_FMT ", the matrix %" PetscInt_FMT " x %" PetscInt_FMT, ((PetscObject)Acsr)->type_name, csr.m, csr.n, A->rmap->n, A->cmap->n);
  PetscCheck(csr.nnz <= INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "The device set-up of PCGSAI uses 32-bit indices: A has too many nonzeros (%" PetscInt_FMT "); use -pc_gsai_use_device false", csr.nnz);
  ai    = csr.rowptr;
  aj    = csr.colidx;
  aa    = csr.val;
  nnza  = (int)csr.nnz;
  cu->n = (int)csr.m;
  if (!cu->haveev) {
    for (int i = 0; i < GSAI_NEV; i++) PetscCallCUDA(cudaEventCreateWithFlags(&cu->ev[i], i < GSAI_EV_MSTRUCT ? cudaEventDefault : cudaEventDisableTiming));
    cu->haveev = PETSC_TRUE;
  }
  if (!cu->dinfo) PetscCallCUDA(GpukitPoolMallocN(&cu->dinfo, 1, stream));

  /* rows: B */
  PetscCall(PetscLogEventBegin(PC_GSAI_PatternCUDA, pc, 0, 0, 0));
  PetscCallCUDA(cudaEventRecord(cu->ev[GSAI_EV_START], stream));
  PetscCallCUDA(GpukitGSAIInfoInit(cu->dinfo, stream));
  if (right) {
    if (!reuse || !cu->perm || cu->nnzb != nnza) {
      PetscCallCUDA(GpukitPoolFreeN(&cu->bptr, stream));
      PetscCallCUDA(GpukitPoolFreeN(&cu->bcol, stream));
      PetscCallCUDA(GpukitPoolFreeN(&cu->bval, stream));
      PetscCallCUDA(GpukitPoolFreeN(&cu->perm, stream));
      PetscCallCUDA(GpukitPoolMallocN(&cu->bptr, (size_t)cu->n + 1, stream));
      PetscCallCUDA(GpukitPoolMallocN(&cu->bcol, (size_t)nnza, stream));
      PetscCallCUDA(GpukitPoolMallocN(&cu->bval, (size_t)nnza, stream));
      PetscCallCUDA(GpukitPoolMallocN(&cu->perm, (size_t)nnza, stream));
      PetscCallCUDA(GpukitCSRTransposeCUDA(cu->n, cu->n, nnza, ai, aj, aa, cu->bptr, cu->bcol, cu->bval, cu->perm, stream));
      cu->nnzb = nnza;
    } else PetscCallCUDA(GpukitCSRPermuteCUDA(nnza, cu->perm, aa, cu->bval, stream));
    bptr = cu->bptr;
    bcol = cu->bcol;
    bval = cu->bval;
  } else {
    bptr = ai;
    bcol = aj;
    bval = aa;
  }
  PetscCallCUDA(cudaEventRecord(cu->ev[GSAI_EV_ROWS], stream));

  /* pattern */
  newpattern = (!reuse || !cu->jptr) ? PETSC_TRUE : PETSC_FALSE;
  if (newpattern) {
    PetscCall(GSAICUDAFreePattern(cu));
    PetscCall(GSAICUDAPattern(gs, cu, bptr, bcol, bval, nnza, cu->n, 0, stream));
  }
  PetscCall(PetscLogEventEnd(PC_GSAI_PatternCUDA, pc, 0, 0, 0));

  P.n    = cu->n;
  P.spd  = gs->type == PCGSAI_SPD;
  P.bptr = bptr;
  P.bcol = bcol;
  P.bval = bval;

  /* the plan: size classes, |I| where needed, workspace offsets; one read-back */
  PetscCall(PetscLogEventBegin(PC_GSAI_DimsCUDA, pc, 0, 0, 0));
  if (newpattern) {
    PetscCallCUDA(GpukitPoolMallocN(&cu->n1, (size_t)cu->n, stream));
    PetscCallCUDA(GpukitPoolMallocN(&cu->cur, (size_t)cu->nnzjcap, stream));
    PetscCallCUDA(GpukitPoolMallocN(&cu->pos, (size_t)cu->n, stream));
    PetscCallCUDA(GpukitPoolMallocN(&cu->cls, (size_t)cu->n, stream));
    PetscCallCUDA(GpukitPoolMallocN(&cu->small, (size_t)cu->n, stream));
    PetscCallCUDA(GpukitPoolMallocN(&cu->large, (size_t)cu->n, stream));
    PetscCallCUDA(GpukitPoolMallocN(&cu->huge, (size_t)cu->n, stream));
    PetscCallCUDA(GpukitPoolMallocN(&cu->status, (size_t)cu->n, stream));
    PetscCallCUDA(GpukitPoolMallocN(&cu->woff, (size_t)cu->n + 1, stream));
  }
  P.jptr = cu->jptr;
  P.jcol = cu->jcol;
  P.n1   = cu->n1;
  P.woff = cu->woff;
  P.cur  = cu->cur;
  P.pos  = cu->pos;
  if (newpattern) {
    PetscCallCUDA(GpukitGSAIPlanCUDA(&P, cu->cls, cu->small, cu->large, cu->huge, cu->dinfo, stream));
    if (right) PetscCallCUDA(GpukitGSAISamePatternCUDA(cu->n, cu->nnzb, bptr, bcol, cu->jptr, cu->jcol, cu->dinfo, stream));
    PetscCallCUDA(GpukitGSAIInfoGet(cu->dinfo, &cu->plan, stream));
    cu->nnzj = cu->plan.nnzj;
    PetscCallCUDA(GpukitPoolMallocN(&cu->vals, (size_t)cu->nnzj, stream));
    PetscCallCUDA(GpukitPoolFreeN(&cu->cls, stream));
  }
  PetscCallCUDA(cudaEventRecord(cu->ev[GSAI_EV_PATTERN], stream));
  PetscCall(PetscLogEventEnd(PC_GSAI_DimsCUDA, pc, 0, 0, 0));

  /* right, M not built yet and J not the pattern of A^T: M's structure is the transpose of J, made before the solve so
     that the host can copy it while the device solves */
  newM = gs->devm ? PETSC_FALSE : PETSC_TRUE;
  if (newM) {
    cu->map = !right ? GSAI_MAP_IDENTITY : (cu->plan.jdiffers ? GSAI_MAP_GATHER : GSAI_MAP_SCATTER);
    if (cu->map == GSAI_MAP_GATHER) {
      PetscCallCUDA(GpukitPoolFreeN(&cu->mperm, stream));
      PetscCallCUDA(GpukitPoolMallocN(&cu->mperm, (size_t)cu->nnzj, stream));
      PetscCallCUDA(GpukitPoolMallocN(&mptr, (size_t)cu->n + 1, stream));
      PetscCallCUDA(GpukitPoolMallocN(&mcol, (size_t)cu->nnzj, stream));
      PetscCallCUDA(GpukitCSRTransposeCUDA(cu->n, cu->n, cu->nnzj, cu->jptr, cu->jcol, NULL, mptr, mcol, NULL, cu->mperm, stream));
      PetscCallCUDA(cudaEventRecord(cu->ev[GSAI_EV_MSTRUCT], stream));
    }
  }

  /* solve: the small class in shared memory, the others in a global workspace (in batches if it exceeds the limit) */
  PetscCall(PetscLogEventBegin(PC_GSAI_SolveCUDA, pc, 0, 0, 0));
  PetscCall(GSAICUDASolve(pc, cu, &P, newpattern, stream));
  PetscCallCUDA(cudaEventRecord(cu->ev[GSAI_EV_SOLVE], stream));
  PetscCall(PetscLogGpuFlops((PetscLogDouble)cu->plan.flops));
  PetscCall(PetscLogEventEnd(PC_GSAI_SolveCUDA, pc, 0, 0, 0));

  /* M (or G) kept in the device CSR (gsaidevm.h) and applied from there: its structure (J, copied; right with J the
     pattern of A^T: A's, copied; else the transpose of J made before the solve, taken over), then its values written on
     the device (copied, scattered or gathered from vals) and, spd, G^T built on the device: no PETSc Mat unless asked
     for (PCGSAIGetMatrix()) */
  PetscCall(PetscLogEventBegin(PC_GSAI_AssembleCUDA, pc, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  if (newM) {
    PetscCall(PetscInfo(pc, "M's structure: %s\n", cu->map == GSAI_MAP_IDENTITY ? "J, the pattern of the rows of N (values copied)" : (cu->map == GSAI_MAP_SCATTER ? "that of A, J being the pattern of A^T (values scattered)" : "the transpose of J (values gathered)")));
    if (cu->map == GSAI_MAP_IDENTITY) PetscCall(GSAIDevMCreate(pc, cu->n, cu->nnzj, cu->jptr, cu->jcol, &gs->devm));
    else if (cu->map == GSAI_MAP_SCATTER) PetscCall(GSAIDevMCreate(pc, cu->n, cu->nnzj, ai, aj, &gs->devm)); /* M = N^T has A's structure */
    else PetscCall(GSAIDevMCreateTake(pc, cu->n, cu->nnzj, &mptr, &mcol, &gs->devm)); /* mptr, mcol now NULL */
    PetscCall(PetscInfo(pc, "%s kept in the device CSR (%d rows, %d nonzeros): no Mat made by the set-up\n", gs->type == PCGSAI_SPD ? "G" : "M", cu->n, cu->nnzj));
  }
  PetscCall(PetscTime(&t1));
  PetscCallCUDA(cudaEventSynchronize(cu->ev[GSAI_EV_SOLVE])); /* not counted: the device finishes the solve */
  PetscCall(PetscTime(&t2));
  {
    double *mv;

    PetscCall(GSAIDevMGetValues(gs->devm, &mv));
    switch (cu->map) {
    case GSAI_MAP_IDENTITY:
      if (cu->nnzj) PetscCallCUDA(cudaMemcpyAsync(mv, cu->vals, (size_t)cu->nnzj * sizeof(double), cudaMemcpyDeviceToDevice, stream));
      break;
    case GSAI_MAP_SCATTER:
      PetscCallCUDA(GpukitCSRScatterCUDA(cu->nnzj, cu->perm, cu->vals, mv, stream));
      break;
    case GSAI_MAP_GATHER:
      PetscCallCUDA(GpukitCSRPermuteCUDA(cu->nnzj, cu->mperm, cu->vals, mv, stream));
      break;
    default:
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "Unknown value map %d of M", (int)cu->map);
    }
    PetscCall(GSAIDevMValuesUpdated(gs->devm, gs->type == PCGSAI_SPD ? PETSC_TRUE : PETSC_FALSE)); /* spd: G^T */
  }
  PetscCallCUDA(GpukitGSAIInfoGet(cu->dinfo, &fin, stream)); /* synchronises: the copies and G^T are counted */
  PetscCall(PetscTime(&t3));
  gs->time[GSAI_STAGE_ASSEMBLE] += (t1 - t0) + (t3 - t2);
  PetscCall(PetscLogEventEnd(PC_GSAI_AssembleCUDA, pc, 0, 0, 0));
  PetscCall(GSAICUDAElapsed(cu->ev[GSAI_EV_START], cu->ev[GSAI_EV_ROWS], &gs->time[GSAI_STAGE_ROWS]));
  PetscCall(GSAICUDAElapsed(cu->ev[GSAI_EV_ROWS], cu->ev[GSAI_EV_PATTERN], &gs->time[GSAI_STAGE_PATTERN]));
  PetscCall(GSAICUDAElapsed(cu->ev[GSAI_EV_PATTERN], cu->ev[GSAI_EV_SOLVE], &gs->time[GSAI_STAGE_SOLVE]));

  fail.row = -1;
  if (fin.failrow != INT_MAX) {
    int st;
    PetscCallCUDA(cudaMemcpy(&st, cu->status + fin.failrow, sizeof(int), cudaMemcpyDeviceToHost));
    fail.row   = fin.failrow;
    fail.kind  = st - GPUKIT_GSAI_FAIL;
    fail.value = 0.0;
    if (fail.kind == GSAI_FAIL_NOTSPD) PetscCall(GSAICUDADiagonalEntry(bptr, bcol, bval, fin.failrow, &fail.value));
    PetscCall(GSAIDevMDestroy(&gs->devm)); /* its values are not M's */
  }
  PetscCall(GpukitMatRestoreDeviceCSR(Acsr, &csr));
  PetscCall(MatDestroy(&Acsr));
  PetscCall(GSAIRaiseFailure(pc, &fail)); /* one rank: no agreement needed */

  gs->nnz         = cu->nnzj;
  gs->nfallback   = fin.nfallback;
  gs->maxn1       = PetscMax(cu->plan.maxn1, fin.maxn1);
  gs->maxn2       = cu->plan.maxn2;
  gs->nloc        = cu->n;
  gs->havepattern = PETSC_TRUE;
  gs->ptype       = gs->type;
  gs->pside       = gs->sideused;
  if (fin.nfallback) PetscCall(PetscInfo(pc, "%d local problems fell back to the diagonal (singular or ill-conditioned)\n", fin.nfallback));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Several ranks (issue 19): every rank builds its rows of M on its device
   ------------------------------------------------------------------------------------------------------ */

/* B on several ranks, as PCSetUp_GSAI_Host() reads it: A (left, spd) when its rows can be fetched (MATMPIAIJ and
   the types based on it, MATMPIAIJCUSPARSE included), else its MATAIJ copy; A^T (right). A new reference. */
static PetscErrorCode GSAICUDAGetBMPI(PC pc, Mat A, PetscBool right, Mat *B)
{
  PC_GSAI  *gs = (PC_GSAI *)pc->data;
  PetscBool isaij;

  PetscFunctionBegin;
  gs->conversion[0] = 0;
  PetscCall(PetscObjectBaseTypeCompareAny((PetscObject)A, &isaij, MATMPIAIJ, ""));
  if (isaij && !(A->ops->createsubmatrices && A->ops->getrow)) isaij = PETSC_FALSE;
  if (right) {
    Mat Aaij = A;
    if (!isaij) {
      PetscCall(PetscSNPrintf(gs->conversion, sizeof(gs->conversion), "%s converted to AIJ for the transpose", ((PetscObject)A)->type_name));
      PetscCall(PetscInfo(pc, "Right GSAI needs A^T: converting the %s matrix to MATAIJ first\n", ((PetscObject)A)->type_name));
      PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &Aaij));
    }
    PetscCall(MatTranspose(Aaij, MAT_INITIAL_MATRIX, B));
    if (Aaij != A) PetscCall(MatDestroy(&Aaij));
  } else if (isaij) {
    PetscCall(PetscObjectReference((PetscObject)A));
    *B = A;
  } else {
    PetscCall(PetscSNPrintf(gs->conversion, sizeof(gs->conversion), "%s converted to AIJ to read its rows", ((PetscObject)A)->type_name));
    PetscCall(PetscInfo(pc, "PCGSAI reads rows of A: converting the %s matrix to MATAIJ\n", ((PetscObject)A)->type_name));
    PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, B));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the rows of B this rank holds: its own and, for a power pattern of power p, every row within p steps of them in the
   graph of B (unthresholded: a superset of the rows the thresholded pattern and its local problems read, so the
   pattern is found on the device from these rows alone, GSAICUDAPatternMPI()). Their global numbers go to
   gs->fetchis. One step from the own rows: the own rows and the columns of B's off-diagonal block (garray), with no
   pass over the own rows; each further step adds the columns of the other ranks' rows the last step reached, fetched
   alone (MatCreateSubMatrices() of those rows: a few planes of a stencil matrix). */
static PetscErrorCode GSAICUDARowsMPI(PC pc, Mat B, PetscInt first, PetscInt nloc)
{
  PC_GSAI        *gs     = (PC_GSAI *)pc->data;
  const PetscInt  levels = gs->pattern == PCGSAI_PATTERN_POWER ? gs->power : 1;
  Mat             Ad, Ao;
  const PetscInt *garray;
  PetscInt        nneed, *need, nfront, *front, ngar;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(B, &Ad, &Ao, &garray)); /* B is MATMPIAIJ or based on it (GSAICUDAGetBMPI()) */
  PetscCall(MatGetLocalSize(Ao, NULL, &ngar));
  /* one step: the own rows (also the diagonal block's columns: PCSetUp_GSAI() checks that the row and column layouts
     are the same) and garray (sorted); the other ranks' rows one step away are garray */
  PetscCall(PetscMalloc1(nloc, &front));
  for (PetscInt i = 0; i < nloc; i++) front[i] = first + i;
  need = NULL;
  PetscCall(PetscMergeIntArray(nloc, front, ngar, garray, &nneed, &need));
  PetscCall(PetscFree(front));
  PetscCall(PetscMalloc1(ngar, &front));
  PetscCall(PetscArraycpy(front, garray, ngar));
  nfront = ngar;
  for (PetscInt l = 1; l < levels; l++) {
    IS              is, all;
    Mat            *sub;
    const PetscInt *ia, *ja;
    PetscInt        m, nc, *cols, nn, *nw, nf = 0;
    PetscBool       done;

    /* the columns of the frontier's rows (every rank takes part: MatCreateSubMatrices() is collective) */
    PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nfront, front, PETSC_OWN_POINTER, &is));
    PetscCall(ISCreateStride(PETSC_COMM_SELF, B->cmap->N, 0, 1, &all));
    PetscCall(MatCreateSubMatrices(B, 1, &is, &all, MAT_INITIAL_MATRIX, &sub));
    PetscCall(ISDestroy(&all));
    PetscCall(ISDestroy(&is));
    PetscCall(MatGetRowIJ(sub[0], 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "PCGSAI: cannot read the structure of the fetched rows of %s", ((PetscObject)B)->type_name);
    nc = ia[m];
    PetscCall(PetscMalloc1(nc, &cols));
    PetscCall(PetscArraycpy(cols, ja, nc));
    PetscCall(MatRestoreRowIJ(sub[0], 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
    PetscCall(MatDestroySubMatrices(1, &sub));
    PetscCall(PetscSortRemoveDupsInt(&nc, cols));
    /* the next frontier: the other ranks' rows not reached before */
    PetscCall(PetscMalloc1(nc, &front));
    for (PetscInt t = 0, q = 0; t < nc; t++) {
      while (q < nneed && need[q] < cols[t]) q++;
      if ((q == nneed || need[q] != cols[t]) && (cols[t] < first || cols[t] >= first + nloc)) front[nf++] = cols[t];
    }
    nfront = nf;
    nw = NULL;
    PetscCall(PetscMergeIntArray(nneed, need, nc, cols, &nn, &nw));
    PetscCall(PetscFree(cols));
    PetscCall(PetscFree(need));
    nneed = nn;
    need  = nw;
  }
  PetscCall(PetscFree(front));
  PetscCall(ISDestroy(&gs->fetchis));
  if (gs->fetched) PetscCall(MatDestroySubMatrices(1, &gs->fetched));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nneed, need, PETSC_OWN_POINTER, &gs->fetchis));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the structure of the held rows R as the kernels read them (see PC_GSAI_CUDA), uploaded; room for their values */
static PetscErrorCode GSAICUDAHeldRowsMPI(PC_GSAI_CUDA *cu, const GSAIRows *R, PetscInt first, PetscInt nloc, cudaStream_t stream)
{
  const PetscInt nnzb = R->ptr[R->n];
  PetscInt       u0   = 0;
  int           *hptr, *hcol;

  PetscFunctionBegin;
  PetscCheck(nnzb <= INT_MAX && R->nu < INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "The device set-up of PCGSAI uses 32-bit indices: the rows of A this rank reads hold %" PetscInt_FMT " nonzeros, too many; use -pc_gsai_use_device false", nnzb);
  if (nloc) {
    u0 = GSAIRowsCompact(R, first);
    PetscCheck(u0 >= 0 && u0 + nloc <= R->nu && R->ucol[u0 + nloc - 1] == first + nloc - 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCGSAI: the rows fetched for the device set-up do not hold the local rows %" PetscInt_FMT " .. %" PetscInt_FMT, first, first + nloc - 1);
  }
  cu->nu   = (int)R->nu;
  cu->u0   = (int)u0;
  cu->nnzb = (int)nnzb;
  PetscCall(PetscMalloc2(R->nu + 1, &hptr, nnzb, &hcol));
  /* R's rows increase with their global (so compact) numbers: their entries in R's order are the CSR's */
  hptr[0] = 0;
  for (PetscInt u = 0; u < R->nu; u++) {
    const PetscInt r = R->rowof[u];
    hptr[u + 1]      = hptr[u] + (int)(r >= 0 ? R->ptr[r + 1] - R->ptr[r] : 0);
    PetscCheck(r < 0 || hptr[u] == R->ptr[r], PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCGSAI: the fetched rows are not in increasing order");
  }
  for (PetscInt e = 0; e < nnzb; e++) hcol[e] = (int)(R->lcol[e] - u0);
  PetscCallCUDA(GpukitPoolMallocN(&cu->bptr, (size_t)R->nu + 1, stream));
  PetscCallCUDA(GpukitPoolMallocN(&cu->bcol, (size_t)nnzb, stream));
  PetscCallCUDA(GpukitPoolMallocN(&cu->bval, (size_t)nnzb, stream));
  PetscCallCUDA(cudaMemcpyAsync(cu->bptr, hptr, (R->nu + 1) * sizeof(int), cudaMemcpyHostToDevice, stream));
  if (nnzb) PetscCallCUDA(cudaMemcpyAsync(cu->bcol, hcol, (size_t)nnzb * sizeof(int), cudaMemcpyHostToDevice, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream)); /* the host arrays go now */
  PetscCall(PetscFree2(hptr, hcol));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Collective: can every rank make its held rows on the device, from B's device blocks (B = A, a MATMPIAIJCUSPARSE or
   a type based on MATMPIAIJ whose blocks give a device CSR)? Not with an empty rank or diagonal block, nor for a general
   type on a rank so small that it may solve on the host (GSAICUDAPatternMPI()), which reads the held rows there. */
static PetscErrorCode GSAICUDADeviceRowsUsable(PC pc, Mat A, Mat B, PetscInt nloc, PetscBool *ok)
{
  PC_GSAI      *gs = (PC_GSAI *)pc->data;
  PetscBool     mpi = PETSC_FALSE;
  GpukitMatCaps cd, co;
  Mat           Ad, Ao;

  PetscFunctionBegin;
  *ok = PETSC_FALSE;
  if (sizeof(PetscInt) == sizeof(int) && B == A && nloc > 0 && (gs->type == PCGSAI_SPD || nloc > GPUKIT_GSAI_SMALL_WS / 2)) PetscCall(PetscObjectBaseTypeCompare((PetscObject)B, MATMPIAIJ, &mpi));
  if (mpi) {
    MatInfo info;
    PetscCall(MatMPIAIJGetSeqAIJ(B, &Ad, &Ao, NULL));
    PetscCall(GpukitMatGetCaps(Ad, &cd));
    PetscCall(GpukitMatGetCaps(Ao, &co));
    PetscCall(MatGetInfo(Ad, MAT_LOCAL, &info));
    *ok = (cd.devicecsr && co.devicecsr && info.nz_used > 0) ? PETSC_TRUE : PETSC_FALSE;
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, ok, 1, GPUKIT_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)pc)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   The held rows (the rows of gs->fetchis) made on the device: the own rows straight from the device CSR of B's
   diagonal and off-diagonal blocks, with no copy to the host; only the other ranks' rows come through the host
   (MatCreateSubMatrices() of those rows, kept in gs->fetched: with SAME_NONZERO_PATTERN only their values are fetched
   again). The compact numbers (cu->ucol): the held rows and every column of theirs, sorted. Sets cu->nu, u0, nnzb;
   makes bptr, bcol (new pattern) and bval.
*/
static PetscErrorCode GSAICUDAHeldRowsDeviceMPI(PC pc, PC_GSAI_CUDA *cu, Mat B, PetscInt first, PetscInt nloc, PetscBool newpattern, cudaStream_t stream)
{
  PC_GSAI           *gs = (PC_GSAI *)pc->data;
  const PetscInt    *need, *garray, *ia = NULL, *ja = NULL;
  const PetscScalar *sa = NULL;
  PetscInt           nneed, noff = 0, *off, ngar, nse = 0, nsc, *scols, nu, u0, m, lo, hi;
  IS                 offis, all;
  Mat                Ad, Ao, S;
  PetscBool          done = PETSC_FALSE;
  GpukitDeviceCSR    cd, co;
  int               *hgmap, *hsrow, *hsptr, *hscol, *gmap = NULL, *srow = NULL, *sptr = NULL, *scol = NULL, *len, nnzb, *cidx = NULL;
  double            *sval = NULL;
  MatInfo            info;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(B, &Ad, &Ao, &garray));
  PetscCall(MatGetLocalSize(Ao, NULL, &ngar));
  /* the other ranks' rows, fetched */
  PetscCall(ISGetLocalSize(gs->fetchis, &nneed));
  PetscCall(ISGetIndices(gs->fetchis, &need));
  PetscCall(PetscMalloc1(nneed, &off));
  for (PetscInt t = 0; t < nneed; t++)
    if (need[t] < first || need[t] >= first + nloc) off[noff++] = need[t];
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, noff, off, PETSC_COPY_VALUES, &offis));
  PetscCall(ISCreateStride(PETSC_COMM_SELF, B->cmap->N, 0, 1, &all));
  PetscCall(MatCreateSubMatrices(B, 1, &offis, &all, newpattern ? MAT_INITIAL_MATRIX : MAT_REUSE_MATRIX, &gs->fetched));
  PetscCall(ISDestroy(&all));
  PetscCall(ISDestroy(&offis));
  S = gs->fetched[0];
  PetscCall(MatGetRowIJ(S, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCheck(done && m == noff, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCGSAI: cannot read the %" PetscInt_FMT " rows fetched from the other ranks", noff);
  PetscCall(MatSeqAIJGetArrayRead(S, &sa));
  nse = ia[noff];
  /* the compact numbers: the held rows and the fetched rows' columns (the own rows' columns are own rows or in garray,
     both held: gs->fetchis is at least one step around the own rows). Where the global numbers they span, [lo, hi], are
     few (at most 4 times the held rows and fetched entries, as for a partition of a mesh: its rows and a few layers
     around them), a dense index over the span gives them in one scan and each fetched column's compact number by a
     lookup (cidx[g - lo] = compact number + 1, 0: not held); otherwise by sorting, a merge and binary searches */
  lo = nneed ? need[0] : 0;
  hi = nneed ? need[nneed - 1] : -1;
  for (PetscInt e = 0; e < nse; e++) {
    lo = PetscMin(lo, ja[e]);
    hi = PetscMax(hi, ja[e]);
  }
  if (hi >= lo && hi - lo < 4 * (nneed + nse) && hi - lo < INT_MAX - 1) {
    const PetscInt span = hi - lo + 1;
    PetscInt       c    = 0;
    PetscBool      make = (newpattern || !cu->ucol) ? PETSC_TRUE : PETSC_FALSE;

    PetscCall(PetscCalloc1(span, &cidx));
    for (PetscInt t = 0; t < nneed; t++) cidx[need[t] - lo] = 1;
    for (PetscInt e = 0; e < nse; e++) cidx[ja[e] - lo] = 1;
    if (make) {
      for (PetscInt g = 0; g < span; g++) c += cidx[g];
      PetscCall(PetscFree(cu->ucol));
      PetscCall(PetscMalloc1(c, &cu->ucol));
      nu = c;
    } else nu = cu->nu;
    c = 0;
    for (PetscInt g = 0; g < span; g++)
      if (cidx[g]) {
        if (make) cu->ucol[c] = lo + g;
        else PetscCheck(c < nu && cu->ucol[c] == lo + g, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "PCGSAI: SAME_NONZERO_PATTERN, but the rows this rank reads from other ranks have other columns than before");
        cidx[g] = (int)++c;
      }
    PetscCheck(c == nu, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "PCGSAI: SAME_NONZERO_PATTERN, but the rows this rank reads from other ranks have other columns than before");
  } else if (newpattern || !cu->ucol) {
    PetscCall(PetscFree(cu->ucol));
    PetscCall(PetscMalloc1(nse, &scols));
    PetscCall(PetscArraycpy(scols, ja, nse));
    nsc = nse;
    PetscCall(PetscSortRemoveDupsInt(&nsc, scols));
    cu->ucol = NULL;
    PetscCall(PetscMergeIntArray(nneed, need, nsc, scols, &nu, &cu->ucol));
    PetscCall(PetscFree(scols));
  } else nu = cu->nu;
  PetscCall(ISRestoreIndices(gs->fetchis, &need));
  {
    MatInfo id, io;
    PetscCall(MatGetInfo(Ad, MAT_LOCAL, &id));
    PetscCall(MatGetInfo(Ao, MAT_LOCAL, &io));
    PetscCheck(nu < INT_MAX && id.nz_used + io.nz_used + (PetscLogDouble)nse < (PetscLogDouble)INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "The device set-up of PCGSAI uses 32-bit indices: this rank holds %" PetscInt_FMT " rows and columns with %.0f nonzeros, too many; use -pc_gsai_use_device false", nu, (double)(id.nz_used + io.nz_used + (PetscLogDouble)nse));
  }
  u0 = 0;
  if (nloc) {
    PetscCall(PetscFindInt(first, nu, cu->ucol, &u0));
    PetscCheck(u0 >= 0 && u0 + nloc <= nu && cu->ucol[u0 + nloc - 1] == first + nloc - 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCGSAI: the rows held for the device set-up do not hold the local rows %" PetscInt_FMT " .. %" PetscInt_FMT, first, first + nloc - 1);
  }
  /* garray, the fetched rows and their columns in shifted compact numbers (all increasing: walks, no search) */
  PetscCall(PetscMalloc4(ngar + 1, &hgmap, noff + 1, &hsrow, noff + 1, &hsptr, nse + 1, &hscol));
  for (PetscInt j = 0, u = 0; j < ngar; j++) {
    while (u < nu && cu->ucol[u] < garray[j]) u++;
    PetscCheck(u < nu && cu->ucol[u] == garray[j], PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCGSAI: column %" PetscInt_FMT " of B's off-diagonal block is not held", garray[j]);
    hgmap[j] = (int)(u - u0);
  }
  for (PetscInt k = 0, u = 0; k < noff; k++) {
    while (u < nu && cu->ucol[u] < off[k]) u++;
    PetscCheck(u < nu && cu->ucol[u] == off[k], PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCGSAI: fetched row %" PetscInt_FMT " has no compact number", off[k]);
    hsrow[k] = (int)u;
    hsptr[k] = (int)ia[k];
    for (PetscInt e = ia[k]; e < ia[k + 1]; e++) {
      PetscInt c;
      if (cidx) c = (PetscInt)cidx[ja[e] - lo] - 1;
      else PetscCall(PetscFindInt(ja[e], nu, cu->ucol, &c));
      PetscCheck(c >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCGSAI: column %" PetscInt_FMT " of fetched row %" PetscInt_FMT " has no compact number", ja[e], off[k]);
      hscol[e] = (int)(c - u0);
    }
  }
  hsptr[noff] = (int)nse;
  PetscCall(PetscFree(off));
  PetscCall(PetscFree(cidx));
  /* to the device; the own rows from B's device blocks */
  if (ngar) PetscCallCUDA(GpukitPoolMallocN(&gmap, (size_t)ngar, stream));
  PetscCallCUDA(GpukitPoolMallocN(&srow, (size_t)noff + 1, stream));
  PetscCallCUDA(GpukitPoolMallocN(&sptr, (size_t)noff + 1, stream));
  PetscCallCUDA(GpukitPoolMallocN(&scol, (size_t)nse + 1, stream));
  PetscCallCUDA(GpukitPoolMallocN(&sval, (size_t)nse + 1, stream));
  PetscCallCUDA(GpukitPoolMallocN(&len, (size_t)nu + 1, stream));
  if (ngar) PetscCallCUDA(cudaMemcpyAsync(gmap, hgmap, (size_t)ngar * sizeof(int), cudaMemcpyHostToDevice, stream));
  PetscCallCUDA(cudaMemcpyAsync(srow, hsrow, (size_t)(noff + 1) * sizeof(int), cudaMemcpyHostToDevice, stream));
  PetscCallCUDA(cudaMemcpyAsync(sptr, hsptr, (size_t)(noff + 1) * sizeof(int), cudaMemcpyHostToDevice, stream));
  if (nse) PetscCallCUDA(cudaMemcpyAsync(scol, hscol, (size_t)nse * sizeof(int), cudaMemcpyHostToDevice, stream));
  if (nse) PetscCallCUDA(cudaMemcpyAsync(sval, sa, (size_t)nse * sizeof(double), cudaMemcpyHostToDevice, stream));
  PetscCall(GpukitMatGetDeviceCSR(Ad, &cd));
  PetscCall(PetscMemzero(&co, sizeof(co)));
  PetscCall(MatGetInfo(Ao, MAT_LOCAL, &info));
  if (info.nz_used > 0) PetscCall(GpukitMatGetDeviceCSR(Ao, &co));
  PetscCallCUDA(GpukitGSAIHeldRowsCUDA((int)nu, (int)u0, (int)nloc, cd.rowptr, cd.colidx, cd.val, co.rowptr, co.colidx, co.val, gmap, (int)noff, srow, sptr, scol, sval, len, NULL, NULL, NULL, stream));
  if (newpattern) {
    PetscCallCUDA(GpukitPoolFreeN(&cu->bptr, stream));
    PetscCallCUDA(GpukitPoolMallocN(&cu->bptr, (size_t)nu + 1, stream));
  }
  PetscCallCUDA(GpukitCSRScanCUDA((int)nu, len, cu->bptr, NULL, &nnzb, stream)); /* synchronises */
  if (newpattern) {
    PetscCallCUDA(GpukitPoolFreeN(&cu->bcol, stream));
    PetscCallCUDA(GpukitPoolFreeN(&cu->bval, stream));
    PetscCallCUDA(GpukitPoolMallocN(&cu->bcol, (size_t)nnzb + 1, stream));
    PetscCallCUDA(GpukitPoolMallocN(&cu->bval, (size_t)nnzb + 1, stream));
  }
  if (newpattern || nnzb == cu->nnzb) PetscCallCUDA(GpukitGSAIHeldRowsCUDA((int)nu, (int)u0, (int)nloc, cd.rowptr, cd.colidx, cd.val, co.rowptr, co.colidx, co.val, gmap, (int)noff, srow, sptr, scol, sval, NULL, cu->bptr, cu->bcol, cu->bval, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream)); /* the host arrays and the fetched values go now */
  if (co.rowptr) PetscCall(GpukitMatRestoreDeviceCSR(Ao, &co));
  PetscCall(GpukitMatRestoreDeviceCSR(Ad, &cd));
  PetscCall(MatSeqAIJRestoreArrayRead(S, &sa));
  PetscCall(MatRestoreRowIJ(S, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCall(PetscFree4(hgmap, hsrow, hsptr, hscol));
  PetscCallCUDA(GpukitPoolFreeN(&gmap, stream));
  PetscCallCUDA(GpukitPoolFreeN(&srow, stream));
  PetscCallCUDA(GpukitPoolFreeN(&sptr, stream));
  PetscCallCUDA(GpukitPoolFreeN(&scol, stream));
  PetscCallCUDA(GpukitPoolFreeN(&sval, stream));
  PetscCallCUDA(GpukitPoolFreeN(&len, stream));
  PetscCheck(newpattern || nnzb == cu->nnzb, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "PCGSAI: SAME_NONZERO_PATTERN, but the rows of A this rank reads have %d nonzeros, %d before", nnzb, cu->nnzb);
  cu->nu   = (int)nu;
  cu->u0   = (int)u0;
  cu->nnzb = nnzb;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* M's structure from J on the device (GSAICUDADevMSplitDeviceMPI()): the held rows were made there (so PetscInt is
   int and J's columns are shifted compact numbers, the own ones 0 .. n-1) and M = N (left, spd); gs->Jcol is then
   not made */
static inline PetscBool GSAICUDASplitOnDevice(const PC_GSAI *gs, const PC_GSAI_CUDA *cu)
{
  return (cu->devrows && !(gs->type == PCGSAI_GENERAL && gs->sideused == PC_RIGHT)) ? PETSC_TRUE : PETSC_FALSE;
}

/* J, the pattern of the local rows of N, found on the device from the held rows and their values (GSAICUDAPattern(),
   the kernels of the one-rank set-up over the compact numbers, whose order is the global one: the same J as the
   host's GSAIPatternRows()), read back once to the host (gs->Jptr, and gs->Jcol: global columns through ucol, which
   M's structure is made from, unless it is made on the device: GSAICUDASplitOnDevice()); then the plan of the local
   problems. The plan's bound of |I| before a merge is min(sum of the row
   lengths, n), exact on one rank where every column is below n but not here, where I may hold more than n columns:
   a rank with so few rows that this bound can pick the small class with too small a leading dimension solves on the
   host instead (cu->hostsolve). */
static PetscErrorCode GSAICUDAPatternMPI(PC pc, PC_GSAI_CUDA *cu, const GSAIRows *R, const PetscInt *ucol, PetscInt first, PetscInt nloc, cudaStream_t stream)
{
  PC_GSAI          *gs = (PC_GSAI *)pc->data;
  int              *hjptr, *hjcol, nnzj;
  GpukitGSAIProblem P;

  PetscFunctionBegin;
  PetscCall(PetscFree(gs->Jptr));
  PetscCall(PetscFree(gs->Jcol));
  PetscCall(GSAICUDAPattern(gs, cu, cu->bptr, cu->bcol, cu->bval, cu->nnzb, cu->nu, cu->u0, stream));
  PetscCall(PetscMalloc1(nloc + 1, &hjptr));
  PetscCallCUDA(cudaMemcpyAsync(hjptr, cu->jptr, (nloc + 1) * sizeof(int), cudaMemcpyDeviceToHost, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream));
  nnzj     = hjptr[nloc];
  cu->nnzj = nnzj;
  PetscCall(PetscMalloc1(nloc + 1, &gs->Jptr));
  for (PetscInt i = 0; i <= nloc; i++) gs->Jptr[i] = hjptr[i];
  PetscCall(PetscFree(hjptr));
  if (!GSAICUDASplitOnDevice(gs, cu)) { /* J's global columns for M's structure (else split on the device) */
    PetscCall(PetscMalloc1(nnzj, &hjcol));
    if (nnzj) PetscCallCUDA(cudaMemcpy(hjcol, cu->jcol, (size_t)nnzj * sizeof(int), cudaMemcpyDeviceToHost));
    PetscCall(PetscMalloc1(PetscMax(nnzj, 1), &gs->Jcol));
    for (PetscInt e = 0; e < nnzj; e++) gs->Jcol[e] = ucol[hjcol[e] + cu->u0];
    PetscCall(PetscFree(hjcol));
  }
  PetscCallCUDA(GpukitPoolMallocN(&cu->vals, (size_t)nnzj, stream));
  PetscCallCUDA(GpukitPoolMallocN(&cu->status, (size_t)nloc, stream));
  cu->hostsolve = PETSC_FALSE;
  if (R && gs->type == PCGSAI_GENERAL && nloc <= GPUKIT_GSAI_SMALL_WS / 2) { /* else no row can meet the test below (R: the
                                                                              held rows on the host, GSAICUDADeviceRowsUsable()) */
    for (PetscInt i = 0; i < nloc; i++) {
      const PetscInt n2 = gs->Jptr[i + 1] - gs->Jptr[i];
      PetscInt       s  = 0;
      for (PetscInt e = gs->Jptr[i]; e < gs->Jptr[i + 1]; e++) {
        const PetscInt u = GSAIRowsCompact(R, gs->Jcol[e]), r = u >= 0 ? R->rowof[u] : -1;
        PetscCheck(r >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCGSAI: row %" PetscInt_FMT " of the pattern of row %" PetscInt_FMT " was not fetched", gs->Jcol[e], first + i);
        s += R->ptr[r + 1] - R->ptr[r];
      }
      if (s > nloc && n2 <= GPUKIT_GSAI_WARP_MAX && nloc <= GPUKIT_GSAI_SMALL_WS / (n2 + 1)) cu->hostsolve = PETSC_TRUE;
    }
  }
  PetscCall(PetscMemzero(&cu->plan, sizeof(cu->plan)));
  if (cu->hostsolve) {
    PetscCall(PetscInfo(pc, "This rank has %" PetscInt_FMT " rows only, fewer than the columns of some local problems: it solves them on the host\n", nloc));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallCUDA(GpukitPoolMallocN(&cu->n1, (size_t)nloc, stream));
  PetscCallCUDA(GpukitPoolMallocN(&cu->cur, (size_t)nnzj, stream));
  PetscCallCUDA(GpukitPoolMallocN(&cu->pos, (size_t)nloc, stream));
  PetscCallCUDA(GpukitPoolMallocN(&cu->cls, (size_t)nloc, stream));
  PetscCallCUDA(GpukitPoolMallocN(&cu->small, (size_t)nloc, stream));
  PetscCallCUDA(GpukitPoolMallocN(&cu->large, (size_t)nloc, stream));
  PetscCallCUDA(GpukitPoolMallocN(&cu->huge, (size_t)nloc, stream));
  PetscCallCUDA(GpukitPoolMallocN(&cu->woff, (size_t)nloc + 1, stream));
  P.n    = (int)nloc;
  P.spd  = gs->type == PCGSAI_SPD;
  P.bptr = cu->bptr + cu->u0;
  P.bcol = cu->bcol;
  P.bval = cu->bval; /* values not read by the plan */
  P.jptr = cu->jptr;
  P.jcol = cu->jcol;
  P.n1   = cu->n1;
  P.woff = cu->woff;
  P.cur  = cu->cur;
  P.pos  = cu->pos;
  PetscCallCUDA(GpukitGSAIPlanCUDA(&P, cu->cls, cu->small, cu->large, cu->huge, cu->dinfo, stream));
  PetscCallCUDA(GpukitGSAIInfoGet(cu->dinfo, &cu->plan, stream));
  PetscCallCUDA(GpukitPoolFreeN(&cu->cls, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* left, spd on several ranks: M = N has only local rows, with J's structure (sorted within a row: the entries left of
   the diagonal block, then its own, then those right of it, each in order). It is kept in the device CSR (gsaidevm.h)
   as MATMPIAIJ splits it: a diagonal block over the local columns and an off-diagonal block over the ghost columns it
   uses (garray, ascending). No PETSc Mat is made (PCGSAIGetMatrix() makes one when asked). cu->mperm (device): the
   positions in J of the diagonal block's entries, then of the off-diagonal block's, which the values are gathered by.

   GSAICUDADevMSplitDeviceMPI(): the split on the device (GSAICUDASplitOnDevice(): J's columns are compact numbers of
   the held rows, cu->ucol[c + u0] the global ones) by GpukitGSAISplitCUDA(); only the off-diagonal block's columns
   come to the host (the entries next to other ranks' rows), renumbered over the ghost columns they use and sent back.
   GSAICUDADevMSplitHostMPI(): from J on the host (global columns), uploaded. */
static PetscErrorCode GSAICUDADevMSplitDeviceMPI(PC pc, PC_GSAI_CUDA *cu, Mat A, PetscInt nloc, cudaStream_t stream)
{
  PC_GSAI  *gs   = (PC_GSAI *)pc->data;
  const int nnzj = cu->nnzj;
  int      *dcnt, *ocnt, *dptr, *optr, *dcol, *ocol, nd, no, *hoc, *gnum;
  PetscInt  cstart, cend, ng = 0, *garray;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRangeColumn(A, &cstart, &cend));
  PetscCheck(cend - cstart == nloc && cu->ucol[cu->u0] == cstart, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCGSAI: M's diagonal block does not hold the own rows' columns");
  PetscCallCUDA(GpukitPoolMallocN(&dcnt, (size_t)nloc + 1, stream));
  PetscCallCUDA(GpukitPoolMallocN(&ocnt, (size_t)nloc + 1, stream));
  PetscCallCUDA(GpukitPoolMallocN(&dptr, (size_t)nloc + 1, stream));
  PetscCallCUDA(GpukitPoolMallocN(&optr, (size_t)nloc + 1, stream));
  PetscCallCUDA(GpukitGSAISplitCUDA((int)nloc, cu->jptr, cu->jcol, dcnt, ocnt, NULL, NULL, 0, NULL, NULL, NULL, stream));
  PetscCallCUDA(GpukitCSRScanCUDA((int)nloc, dcnt, dptr, NULL, &nd, stream));
  PetscCallCUDA(GpukitCSRScanCUDA((int)nloc, ocnt, optr, NULL, &no, stream));
  PetscCheck(nd + no == nnzj, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCGSAI: M's blocks hold %d + %d entries, the pattern %d", nd, no, nnzj);
  PetscCallCUDA(GpukitPoolFreeN(&dcnt, stream));
  PetscCallCUDA(GpukitPoolFreeN(&ocnt, stream));
  PetscCallCUDA(GpukitPoolMallocN(&dcol, (size_t)nd + 1, stream));
  PetscCallCUDA(GpukitPoolMallocN(&ocol, (size_t)no + 1, stream));
  PetscCallCUDA(GpukitPoolFreeN(&cu->mperm, stream));
  PetscCallCUDA(GpukitPoolMallocN(&cu->mperm, (size_t)nnzj + 1, stream));
  PetscCallCUDA(GpukitGSAISplitCUDA((int)nloc, cu->jptr, cu->jcol, NULL, NULL, dptr, optr, nd, dcol, ocol, cu->mperm, stream));
  /* the ghost columns: the held rows' compact numbers that the off-diagonal block uses, in order (so ascending) */
  PetscCall(PetscMalloc1(PetscMax(no, 1), &hoc));
  if (no) PetscCallCUDA(cudaMemcpyAsync(hoc, ocol, (size_t)no * sizeof(int), cudaMemcpyDeviceToHost, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream));
  PetscCall(PetscCalloc1(cu->nu + 1, &gnum));
  for (int t = 0; t < no; t++) {
    const int h = hoc[t] + cu->u0;
    PetscCheck(h >= 0 && h < cu->nu && (h < cu->u0 || h >= cu->u0 + nloc), PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCGSAI: an off-diagonal entry of M in held row %d of %d (own rows %d ..)", h, cu->nu, cu->u0);
    gnum[h] = 1;
  }
  for (int h = 0; h < cu->nu; h++) ng += gnum[h];
  PetscCall(PetscMalloc1(ng, &garray));
  ng = 0;
  for (int h = 0; h < cu->nu; h++)
    if (gnum[h]) {
      garray[ng] = cu->ucol[h];
      gnum[h]    = (int)ng++;
    }
  for (int t = 0; t < no; t++) hoc[t] = gnum[hoc[t] + cu->u0];
  if (no) PetscCallCUDA(cudaMemcpyAsync(ocol, hoc, (size_t)no * sizeof(int), cudaMemcpyHostToDevice, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream)); /* hoc goes now */
  PetscCall(PetscFree(hoc));
  PetscCall(PetscFree(gnum));
  PetscCall(GSAIDevMCreateMPITake(pc, A, nd, &dptr, &dcol, no, &optr, &ocol, ng, &garray, &gs->devm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GSAICUDADevMSplitHostMPI(PC pc, PC_GSAI_CUDA *cu, Mat A, PetscInt nloc, cudaStream_t stream)
{
  PC_GSAI       *gs   = (PC_GSAI *)pc->data;
  const PetscInt nnzj = gs->Jptr[nloc];
  PetscInt       cstart, cend, nd = 0, no, ng, d = 0, o = 0, *garray;
  int           *h, *hdptr, *hoptr, *hdcol, *hocol, *hperm, *dptr, *optr, *dcol, *ocol;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRangeColumn(A, &cstart, &cend));
  for (PetscInt e = 0; e < nnzj; e++) nd += (gs->Jcol[e] >= cstart && gs->Jcol[e] < cend) ? 1 : 0;
  no = nnzj - nd;
  PetscCall(PetscMalloc1(no, &garray));
  for (PetscInt e = 0; e < nnzj; e++)
    if (gs->Jcol[e] < cstart || gs->Jcol[e] >= cend) garray[o++] = gs->Jcol[e];
  ng = no;
  PetscCall(PetscSortRemoveDupsInt(&ng, garray));
  PetscCall(PetscMalloc1(2 * (nloc + 1) + 2 * nnzj + 1, &h));
  hdptr = h;
  hoptr = hdptr + nloc + 1;
  hdcol = hoptr + nloc + 1;
  hocol = hdcol + nd;
  hperm = hocol + no;
  hdptr[0] = hoptr[0] = 0;
  o                   = 0;
  for (PetscInt i = 0; i < nloc; i++) {
    for (PetscInt e = gs->Jptr[i]; e < gs->Jptr[i + 1]; e++) {
      const PetscInt g = gs->Jcol[e];
      if (g >= cstart && g < cend) {
        hdcol[d]   = (int)(g - cstart);
        hperm[d++] = (int)e;
      } else {
        PetscInt loc;
        PetscCall(PetscFindInt(g, ng, garray, &loc));
        hocol[o]        = (int)loc;
        hperm[nd + o++] = (int)e;
      }
    }
    hdptr[i + 1] = (int)d;
    hoptr[i + 1] = (int)o;
  }
  PetscCallCUDA(GpukitPoolMallocN(&dptr, (size_t)nloc + 1, stream));
  PetscCallCUDA(GpukitPoolMallocN(&optr, (size_t)nloc + 1, stream));
  PetscCallCUDA(GpukitPoolMallocN(&dcol, (size_t)nd + 1, stream));
  PetscCallCUDA(GpukitPoolMallocN(&ocol, (size_t)no + 1, stream));
  PetscCallCUDA(GpukitPoolFreeN(&cu->mperm, stream));
  PetscCallCUDA(GpukitPoolMallocN(&cu->mperm, (size_t)nnzj + 1, stream));
  PetscCallCUDA(cudaMemcpyAsync(dptr, hdptr, ((size_t)nloc + 1) * sizeof(int), cudaMemcpyHostToDevice, stream));
  PetscCallCUDA(cudaMemcpyAsync(optr, hoptr, ((size_t)nloc + 1) * sizeof(int), cudaMemcpyHostToDevice, stream));
  if (nd) PetscCallCUDA(cudaMemcpyAsync(dcol, hdcol, (size_t)nd * sizeof(int), cudaMemcpyHostToDevice, stream));
  if (no) PetscCallCUDA(cudaMemcpyAsync(ocol, hocol, (size_t)no * sizeof(int), cudaMemcpyHostToDevice, stream));
  if (nnzj) PetscCallCUDA(cudaMemcpyAsync(cu->mperm, hperm, (size_t)nnzj * sizeof(int), cudaMemcpyHostToDevice, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream)); /* h goes now */
  PetscCall(PetscFree(h));
  PetscCall(GSAIDevMCreateMPITake(pc, A, nd, &dptr, &dcol, no, &optr, &ocol, ng, &garray, &gs->devm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   Several ranks: every rank builds its rows of N (so of M) on its device.
     rows     - B = A (left, spd) or A^T (right) as PCSetUp_GSAI_Host() reads it; the rows of B within p steps of the
                own ones (p the power of the pattern, GSAICUDARowsMPI()): the other ranks' ones fetched
                (MatCreateSubMatrices() of those only, kept: with SAME_NONZERO_PATTERN only their values are fetched);
                the own ones straight from B's device blocks when B = A has them (GSAICUDAHeldRowsDeviceMPI()), else
                read from B's CSR arrays on the host and uploaded
     pattern  - the held rows as one CSR over local numbers (see PC_GSAI_CUDA): made on the device in every set-up,
                or uploaded (the structure once per pattern, the values in every set-up); J found from them by the
                one-rank kernels (threshold, powers, lower part, cap: the host's J and so its M); J's row pointers
                read back, its columns too unless M's split is made on the device; the device plan of the local rows
     solve    - the device kernels of one rank on the local rows (small, large, huge classes, batches, tuner)
     assemble - left, spd (M = N, local rows): M (or G) kept in the device CSR (gsaidevm.h) as J split into M's
                diagonal and off-diagonal blocks (the structure once per pattern, GSAICUDADevMSplitDeviceMPI()), the
                values gathered on the device; PCApply() multiplies with it and a VecScatter of the ghost values, and
                the MATMPIAIJCUSPARSE is made only when asked for (PCGSAIGetMatrix()). Right (M = N^T, whose entries
                of other ranks' rows PETSc sends to them): MATMPIAIJCUSPARSE through COO, the values by
                MatSetValuesCOO() with device memory. The values never come to the host.
*/
static PetscErrorCode GSAICUDASetUpMPI(PC pc, Mat A, PetscBool reuse)
{
  PC_GSAI          *gs = (PC_GSAI *)pc->data;
  PC_GSAI_CUDA     *cu;
  MPI_Comm          comm;
  Mat               B;
  GSAIRows          R;
  PetscInt          first, nloc, nf = 0, m1 = 0, m2 = 0;
  PetscBool         right, newpattern;
  cudaStream_t      stream;
  PetscLogDouble    t0, t1;
  GpukitGSAIProblem P;
  GpukitGSAIInfo    fin;
  GSAIFailure       fail;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  if (!gs->cuda) PetscCall(PetscNew((PC_GSAI_CUDA **)&gs->cuda));
  cu    = (PC_GSAI_CUDA *)gs->cuda;
  right = (gs->type == PCGSAI_GENERAL && gs->sideused == PC_RIGHT) ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(GpukitCUDAGetStream("PCGSAI builds M (or use -pc_gsai_use_device false)", &stream));
  if (!cu->haveev) {
    for (int i = 0; i < GSAI_NEV; i++) PetscCallCUDA(cudaEventCreateWithFlags(&cu->ev[i], i < GSAI_EV_MSTRUCT ? cudaEventDefault : cudaEventDisableTiming));
    cu->haveev = PETSC_TRUE;
  }
  if (!cu->dinfo) PetscCallCUDA(GpukitPoolMallocN(&cu->dinfo, 1, stream));
  if (!cu->nshare) { /* the ranks on this node that use the same device (collective, once) */
    MPI_Comm    node;
    PetscMPIInt nsize;
    int         dev = -1, *devs;

    PetscCallCUDA(cudaGetDevice(&dev));
    PetscCallMPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    PetscCallMPI(MPI_Comm_size(node, &nsize));
    PetscCall(PetscMalloc1(nsize, &devs));
    PetscCallMPI(MPI_Allgather(&dev, 1, MPI_INT, devs, 1, MPI_INT, node));
    for (PetscMPIInt i = 0; i < nsize; i++) cu->nshare += devs[i] == dev;
    PetscCall(PetscFree(devs));
    PetscCallMPI(MPI_Comm_free(&node));
  }
  PetscCall(PetscMemzero(&R, sizeof(R)));

  /* rows and pattern */
  PetscCall(PetscLogEventBegin(PC_GSAI_Rows, pc, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  PetscCall(GSAICUDAGetBMPI(pc, A, right, &B));
  PetscCall(PetscTime(&t1));
  gs->time[GSAI_STAGE_ROWS] += t1 - t0;
  PetscCall(PetscLogEventEnd(PC_GSAI_Rows, pc, 0, 0, 0));
  PetscCall(MatGetOwnershipRange(B, &first, NULL));
  PetscCall(MatGetLocalSize(B, &nloc, NULL));
  PetscCheck(nloc < INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "The device set-up of PCGSAI uses 32-bit indices: %" PetscInt_FMT " local rows are too many; use -pc_gsai_use_device false", nloc);
  newpattern = (!reuse || !cu->jptr || !gs->fetched || !gs->Jptr || gs->nloc != nloc) ? PETSC_TRUE : PETSC_FALSE;
  gs->nloc   = nloc;
  cu->n      = (int)nloc;
  if (newpattern) {
    PetscCall(GSAICUDAFreePattern(cu));
    PetscCallCUDA(GpukitPoolFreeN(&cu->bptr, stream));
    PetscCallCUDA(GpukitPoolFreeN(&cu->bcol, stream));
    PetscCallCUDA(GpukitPoolFreeN(&cu->bval, stream));
    PetscCall(MatDestroy(&gs->M));
    PetscCall(GSAIDevMDestroy(&gs->devm));
    PetscCall(PetscLogEventBegin(PC_GSAI_Rows, pc, 0, 0, 0));
    PetscCall(PetscTime(&t0));
    PetscCall(GSAICUDARowsMPI(pc, B, first, nloc));
    PetscCall(PetscTime(&t1));
    gs->time[GSAI_STAGE_ROWS] += t1 - t0;
    PetscCall(PetscLogEventEnd(PC_GSAI_Rows, pc, 0, 0, 0));
  }
  PetscCall(PetscLogEventBegin(PC_GSAI_Rows, pc, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  if (newpattern) PetscCall(GSAICUDADeviceRowsUsable(pc, A, B, nloc, &cu->devrows));
  if (cu->devrows) PetscCall(GSAICUDAHeldRowsDeviceMPI(pc, cu, B, first, nloc, newpattern, stream));
  else {
    PetscCall(GSAIRowsFetch(B, gs->fetchis, newpattern ? MAT_INITIAL_MATRIX : MAT_REUSE_MATRIX, &gs->fetched, &R));
    PetscCheck(R.ptr[R.n] == (PetscInt)cu->nnzb || newpattern, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "PCGSAI: SAME_NONZERO_PATTERN, but the rows of A this rank reads have %" PetscInt_FMT " nonzeros, %d before", R.ptr[R.n], cu->nnzb);
  }
  PetscCall(PetscTime(&t1));
  gs->time[GSAI_STAGE_ROWS] += t1 - t0;
  PetscCall(PetscLogEventEnd(PC_GSAI_Rows, pc, 0, 0, 0));

  /* the held rows' structure (new pattern), their values (every set-up), the pattern and the plan (new pattern) */
  PetscCall(PetscLogEventBegin(PC_GSAI_PatternCUDA, pc, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  PetscCallCUDA(GpukitGSAIInfoInit(cu->dinfo, stream));
  if (!cu->devrows) {
    if (newpattern) PetscCall(GSAICUDAHeldRowsMPI(cu, &R, first, nloc, stream));
    if (cu->nnzb) PetscCallCUDA(cudaMemcpyAsync(cu->bval, R.val, (size_t)cu->nnzb * sizeof(double), cudaMemcpyHostToDevice, stream));
  }
  if (newpattern) PetscCall(GSAICUDAPatternMPI(pc, cu, cu->devrows ? NULL : &R, cu->devrows ? cu->ucol : R.ucol, first, nloc, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream)); /* R.val may be pageable and is freed below */
  PetscCall(PetscTime(&t1));
  gs->time[GSAI_STAGE_PATTERN] += t1 - t0;
  PetscCall(PetscLogEventEnd(PC_GSAI_PatternCUDA, pc, 0, 0, 0));
  if (newpattern) {
    int dev = -1;
    PetscCallCUDA(cudaGetDevice(&dev));
    PetscInt nheld;
    PetscCall(ISGetLocalSize(gs->fetchis, &nheld));
    PetscCall(PetscInfo(pc, "Device set-up on several ranks: rows %" PetscInt_FMT " .. %" PetscInt_FMT " of M on CUDA device %d (used by %d rank(s) of the PC), from %" PetscInt_FMT " rows of B (%" PetscInt_FMT " of them from other ranks; the own ones read %s), %d nonzeros in the pattern\n", first, first + nloc - 1, dev, cu->nshare, nheld, nheld - nloc,
                        cu->devrows ? "on the device from B's device blocks" : "on the host", cu->nnzj));
  }

  /* solve */
  PetscCall(PetscLogEventBegin(PC_GSAI_SolveCUDA, pc, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  fail.row = -1;
  if (cu->hostsolve) {
    PetscScalar *hvals;
    PetscCall(PetscMalloc1(cu->nnzj, &hvals));
    PetscCall(GSAISolveRows(pc, &R, first, hvals, &nf, &m1, &m2, &fail));
    if (cu->nnzj) PetscCallCUDA(cudaMemcpyAsync(cu->vals, hvals, (size_t)cu->nnzj * sizeof(double), cudaMemcpyHostToDevice, stream));
    PetscCallCUDA(cudaStreamSynchronize(stream));
    PetscCall(PetscFree(hvals));
  } else {
    P.n    = (int)nloc;
    P.spd  = gs->type == PCGSAI_SPD;
    P.bptr = cu->bptr + cu->u0;
    P.bcol = cu->bcol;
    P.bval = cu->bval;
    P.jptr = cu->jptr;
    P.jcol = cu->jcol;
    P.n1   = cu->n1;
    P.woff = cu->woff;
    P.cur  = cu->cur;
    P.pos  = cu->pos;
    if (nloc) PetscCall(GSAICUDASolve(pc, cu, &P, newpattern, stream));
    PetscCallCUDA(GpukitGSAIInfoGet(cu->dinfo, &fin, stream)); /* synchronises */
    PetscCall(PetscLogGpuFlops((PetscLogDouble)cu->plan.flops));
    nf = fin.nfallback;
    m1 = PetscMax(cu->plan.maxn1, fin.maxn1);
    m2 = cu->plan.maxn2;
    if (fin.failrow != INT_MAX) {
      int st;
      PetscCallCUDA(cudaMemcpy(&st, cu->status + fin.failrow, sizeof(int), cudaMemcpyDeviceToHost));
      fail.row   = first + fin.failrow;
      fail.kind  = st - GPUKIT_GSAI_FAIL;
      fail.value = 0.0;
      if (fail.kind == GSAI_FAIL_NOTSPD && cu->devrows) PetscCall(GSAICUDADiagonalEntry(cu->bptr + cu->u0, cu->bcol, cu->bval, fin.failrow, &fail.value)); /* a_kk, from the held rows */
      else if (fail.kind == GSAI_FAIL_NOTSPD) {
        const PetscInt r = GSAIRowsFind(&R, fail.row);
        for (PetscInt e = r >= 0 ? R.ptr[r] : 0; r >= 0 && e < R.ptr[r + 1]; e++)
          if (R.col[e] == fail.row) fail.value = PetscRealPart(R.val[e]);
      }
    }
  }
  PetscCall(PetscTime(&t1));
  gs->time[GSAI_STAGE_SOLVE] += t1 - t0;
  PetscCall(PetscLogEventEnd(PC_GSAI_SolveCUDA, pc, 0, 0, 0));
  PetscCall(GSAIRowsDestroy(&R));
  PetscCall(GSAIAgreeFailure(pc, &fail));
  if (fail.row >= 0) {
    PetscCall(MatDestroy(&gs->M)); /* its values are not M's */
    PetscCall(GSAIDevMDestroy(&gs->devm));
    PetscCall(MatDestroy(&B));
    PetscCall(GSAIRaiseFailure(pc, &fail));
  }

  /* assemble: M's structure once per pattern (left, spd: from J's CSR, split on the device by
     GSAICUDADevMSplitDeviceMPI() or on the host by GSAICUDADevMSplitHostMPI(), kept in the device CSR; right: through COO), its values from the
     device */
  PetscCall(PetscLogEventBegin(PC_GSAI_AssembleCUDA, pc, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  if (!gs->devm && !right) {
    PetscCall(PetscInfo(pc, "M's structure: J, the pattern of the local rows of N, as the CSR of M's diagonal and off-diagonal blocks (split on the %s), kept in the device CSR\n", GSAICUDASplitOnDevice(gs, cu) ? "device" : "host"));
    if (GSAICUDASplitOnDevice(gs, cu)) PetscCall(GSAICUDADevMSplitDeviceMPI(pc, cu, A, nloc, stream));
    else PetscCall(GSAICUDADevMSplitHostMPI(pc, cu, A, nloc, stream));
  } else if (!gs->M && right) {
    PetscInt *ci, *cj;
    PetscCall(PetscInfo(pc, "M's structure: %s, through COO\n", "the transpose of J (entries sent to the ranks of their rows)"));
    PetscCall(PetscMalloc2(cu->nnzj, &ci, cu->nnzj, &cj));
    for (PetscInt i = 0; i < nloc; i++)
      for (PetscInt e = gs->Jptr[i]; e < gs->Jptr[i + 1]; e++) {
        ci[e] = right ? gs->Jcol[e] : first + i;
        cj[e] = right ? first + i : gs->Jcol[e];
      }
    PetscCall(MatCreate(comm, &gs->M));
    PetscCall(MatSetSizes(gs->M, A->rmap->n, A->cmap->n, A->rmap->N, A->cmap->N));
    PetscCall(MatSetType(gs->M, MATAIJCUSPARSE));
    PetscCall(MatSetPreallocationCOO(gs->M, (PetscCount)cu->nnzj, ci, cj));
    PetscCall(PetscFree2(ci, cj));
  }
  if (right) PetscCall(MatSetValuesCOO(gs->M, cu->vals, INSERT_VALUES));
  else { /* the values gathered into the device M's blocks (diagonal, then off-diagonal) */
    double  *mv;
    PetscInt dnnz;
    PetscCall(GSAIDevMGetInfo(gs->devm, NULL, &dnnz, NULL));
    PetscCheck(dnnz == (PetscInt)cu->nnzj, PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCGSAI: the device M holds %" PetscInt_FMT " entries, the pattern %d", dnnz, cu->nnzj);
    PetscCall(GSAIDevMGetValues(gs->devm, &mv));
    if (cu->nnzj) PetscCallCUDA(GpukitCSRPermuteCUDA(cu->nnzj, cu->mperm, cu->vals, mv, stream));
    PetscCall(GSAIDevMValuesUpdated(gs->devm, gs->type == PCGSAI_SPD ? PETSC_TRUE : PETSC_FALSE)); /* spd: G^T */
  }
  PetscCall(PetscTime(&t1));
  gs->time[GSAI_STAGE_ASSEMBLE] += t1 - t0;
  PetscCall(PetscLogEventEnd(PC_GSAI_AssembleCUDA, pc, 0, 0, 0));
  PetscCall(MatDestroy(&B));

  {
    PetscInt in[2] = {gs->Jptr[nloc], nf}, out[2], inm[2] = {m1, m2}, outm[2];
    PetscCallMPI(MPI_Allreduce(in, out, 2, MPIU_INT, MPI_SUM, comm));
    PetscCallMPI(MPI_Allreduce(inm, outm, 2, MPIU_INT, MPI_MAX, comm));
    gs->nnz       = out[0];
    gs->nfallback = out[1];
    gs->maxn1     = outm[0];
    gs->maxn2     = outm[1];
  }
  gs->havepattern = PETSC_TRUE;
  gs->ptype       = gs->type;
  gs->pside       = gs->sideused;
  if (gs->nfallback) PetscCall(PetscInfo(pc, "%" PetscInt_FMT " local problems fell back to the diagonal (singular or ill-conditioned)\n", gs->nfallback));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device set-up: one rank reads A's device CSR; several ranks fetch the rows of A they need (GSAICUDASetUpMPI()) */
PetscErrorCode PCSetUp_GSAI_CUDA(PC pc, Mat A, PetscBool reuse)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)pc), &size));
  if (size > 1) PetscCall(GSAICUDASetUpMPI(pc, A, reuse));
  else PetscCall(GSAICUDASetUpSeq(pc, A, reuse));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif
