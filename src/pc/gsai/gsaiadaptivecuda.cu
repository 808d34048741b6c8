/*
   PCGSAI's adaptive pattern on the device (one rank, left general or spd type): the PETSc glue around
   gsaiadaptivekernels.cu and gsaikernels.cu. The host reference is gsaiadaptive.c; the rule is the same (docs/gsai.md).
   A is read through its device CSR (converted to MATSEQAIJCUSPARSE when it gives none). Every round:
     solve - the local problems of every row on the current pattern J, with gsaikernels.h's plan and batched solvers
             (small class one warp per row in shared memory, large and huge classes one block per row in a global
             workspace, in batches of consecutive rows when the workspace exceeds the limit);
     grow  - GpukitGSAIAdaptStepCUDA(): every growing row's residual and new entries; the new J by a scan of the lengths
             and a merge. A round in which no row grows ends the growth (the values of the last solve are on the final J).
   After the last round the residuals of the rows still growing are measured and the values of the last solve are M's:
   M (or G) is kept in the device CSR of J (gsaidevm.h: J taken over, the values copied on the device, spd: G^T built
   on the device) and applied from there; its MATSEQAIJCUSPARSE is made only when asked for (PCGSAIGetMatrix()). The per-row
   residuals and the pattern are read back once, for the counts PCView() prints and for SAME_NONZERO_PATTERN: then the
   kept pattern is uploaded and solved once, and the values written into the same device M.
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
#include "gsaiadaptivekernels.h"

#if defined(GPUKIT_GSAICUDA_AVAILABLE)

  #if GPUKIT_GSAI_ADAPT_MAXJ != GSAI_ADAPTIVE_DEVICE_MAXJ || GPUKIT_GSAI_ADAPT_MAXSTEP != GSAI_ADAPTIVE_DEVICE_MAXSTEP
    #error "keep gsaiimpl.h's GSAI_ADAPTIVE_DEVICE_* equal to gsaiadaptivekernels.h's GPUKIT_GSAI_ADAPT_*"
  #endif

/* the local problems of every row on (jptr, jcol): vals and status; *plan the plan's facts, *fin the solve's */
static PetscErrorCode AdaptSolve(PC pc, GpukitGSAIProblem *P, int nnzj, GpukitGSAIInfo *dinfo, double *vals, int *status, GpukitGSAIInfo *plan, GpukitGSAIInfo *fin, cudaStream_t stream)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;
  int     *cls = NULL, *small = NULL, *large = NULL, *huge = NULL;
  double  *ws  = NULL;

  PetscFunctionBegin;
  PetscCallCUDA(GpukitPoolMallocN(&P->n1, (size_t)P->n, stream));
  PetscCallCUDA(GpukitPoolMallocN(&P->cur, (size_t)nnzj, stream));
  PetscCallCUDA(GpukitPoolMallocN(&P->pos, (size_t)P->n, stream));
  PetscCallCUDA(GpukitPoolMallocN(&P->woff, (size_t)P->n + 1, stream));
  PetscCallCUDA(GpukitPoolMallocN(&cls, (size_t)P->n, stream));
  PetscCallCUDA(GpukitPoolMallocN(&small, (size_t)P->n, stream));
  PetscCallCUDA(GpukitPoolMallocN(&large, (size_t)P->n, stream));
  PetscCallCUDA(GpukitPoolMallocN(&huge, (size_t)P->n, stream));
  PetscCallCUDA(GpukitGSAIInfoInit(dinfo, stream));
  PetscCallCUDA(GpukitGSAIPlanCUDA(P, cls, small, large, huge, dinfo, stream));
  PetscCallCUDA(GpukitGSAIInfoGet(dinfo, plan, stream));
  if (plan->ns) PetscCallCUDA(GpukitGSAISolveSmallCUDA(P, small, plan->ns, plan->smallws, vals, status, dinfo, stream));
  if (plan->nl || plan->nh) {
    long long limit = gs->workspace > 0 ? (long long)gs->workspace * 1024 / (long long)sizeof(double) : 0;
    if (!limit) {
      size_t fr, tot;
      PetscCallCUDA(cudaMemGetInfo(&fr, &tot));
      limit = (long long)(fr / 2 / sizeof(double));
    }
    if (plan->wtotal <= limit) {
      PetscCallCUDA(GpukitPoolMallocN(&ws, (size_t)PetscMax(plan->wtotal, 1), stream));
      PetscCallCUDA(GpukitGSAISolveLargeCUDA(P, 0, P->n, 1, large, plan->nl, huge, plan->nh, ws, 0, vals, status, dinfo, GPUKIT_GSAI_BLOCK_THREADS, GPUKIT_GSAI_HUGE_THREADS, stream, NULL, NULL, NULL));
    } else {
      int r0 = 0;
      PetscCall(PetscInfo(pc, "adaptive pattern: the local problems need %lld doubles of workspace, more than the limit %lld: solved in batches\n", plan->wtotal, limit));
      PetscCallCUDA(GpukitPoolMallocN(&ws, (size_t)limit, stream));
      while (r0 < P->n) {
        int       r1;
        long long base, size;
        PetscCallCUDA(GpukitGSAINextBatchCUDA(P, r0, limit, &r1, &base, &size, stream));
        if (size > limit) { /* one row larger than the limit: a workspace of its own */
          PetscCallCUDA(GpukitPoolFreeN(&ws, stream));
          PetscCallCUDA(GpukitPoolMallocN(&ws, (size_t)size, stream));
          limit = size;
        }
        PetscCallCUDA(GpukitGSAISolveLargeCUDA(P, r0, r1, 0, large, plan->nl, huge, plan->nh, ws, base, vals, status, dinfo, GPUKIT_GSAI_BLOCK_THREADS, GPUKIT_GSAI_HUGE_THREADS, stream, NULL, NULL, NULL));
        r0 = r1;
      }
    }
  }
  PetscCallCUDA(GpukitGSAIInfoGet(dinfo, fin, stream));
  PetscCall(PetscLogGpuFlops((PetscLogDouble)plan->flops));
  PetscCallCUDA(GpukitPoolFreeN(&ws, stream));
  PetscCallCUDA(GpukitPoolFreeN(&cls, stream));
  PetscCallCUDA(GpukitPoolFreeN(&small, stream));
  PetscCallCUDA(GpukitPoolFreeN(&large, stream));
  PetscCallCUDA(GpukitPoolFreeN(&huge, stream));
  PetscCallCUDA(GpukitPoolFreeN(&P->n1, stream));
  PetscCallCUDA(GpukitPoolFreeN(&P->cur, stream));
  PetscCallCUDA(GpukitPoolFreeN(&P->pos, stream));
  PetscCallCUDA(GpukitPoolFreeN(&P->woff, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCSetUp_GSAI_AdaptiveCUDA(PC pc, Mat A, PetscBool reuse)
{
  PC_GSAI            *gs = (PC_GSAI *)pc->data;
  Mat                 Acsr;
  GpukitMatCaps       caps;
  GpukitDeviceCSR     csr;
  cudaStream_t        stream;
  GpukitGSAIProblem   P;
  GpukitGSAIAdaptArgs a;
  GpukitGSAIInfo      plan, fin, *dinfo = NULL;
  int                 n, nnzj, *jptr = NULL, *jcol = NULL, *nptr = NULL, *ncol = NULL, *cnt = NULL, *status = NULL, *grow = NULL, *addcnt = NULL, *add = NULL, rounds = 0, cap;
  double             *vals = NULL, *res = NULL, *diag = NULL;
  PetscLogDouble      t0, t1;
  GSAIFailure         fail;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(PC_GSAI_AdaptiveCUDA, pc, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  PetscCall(GpukitCUDAGetStream("PCGSAI builds M (or use -pc_gsai_use_device false)", &stream));
  gs->conversion[0] = 0;
  PetscCall(GpukitMatGetCaps(A, &caps));
  if (caps.devicecsr) {
    PetscCall(PetscObjectReference((PetscObject)A));
    Acsr = A;
  } else {
    PetscCall(PetscSNPrintf(gs->conversion, sizeof(gs->conversion), "%s converted to MATSEQAIJCUSPARSE for its CSR", ((PetscObject)A)->type_name));
    PetscCall(MatConvert(A, MATSEQAIJCUSPARSE, MAT_INITIAL_MATRIX, &Acsr));
  }
  PetscCall(GpukitMatGetDeviceCSR(Acsr, &csr));
  PetscCheck(csr.nnz <= INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "The device set-up of PCGSAI uses 32-bit indices: A has too many nonzeros (%" PetscInt_FMT "); use -pc_gsai_use_device false", csr.nnz);
  n   = (int)csr.m;
  cap = gs->maxnnz > 0 ? (int)PetscMin(gs->maxnnz, (PetscInt)n) : n;

  P.n    = n;
  P.spd  = gs->type == PCGSAI_SPD;
  P.bptr = csr.rowptr;
  P.bcol = csr.colidx;
  P.bval = csr.val;

  PetscCallCUDA(GpukitPoolMallocN(&dinfo, 1, stream));
  PetscCallCUDA(GpukitPoolMallocN(&jptr, (size_t)n + 1, stream));
  PetscCallCUDA(GpukitPoolMallocN(&jcol, (size_t)PetscMax(n, 1), stream));
  PetscCallCUDA(GpukitPoolMallocN(&status, (size_t)PetscMax(n, 1), stream));
  PetscCallCUDA(GpukitPoolMallocN(&grow, (size_t)PetscMax(n, 1), stream));
  PetscCallCUDA(GpukitPoolMallocN(&res, (size_t)PetscMax(n, 1), stream));
  PetscCallCUDA(GpukitPoolMallocN(&addcnt, (size_t)PetscMax(n, 1), stream));
  PetscCallCUDA(GpukitPoolMallocN(&add, (size_t)PetscMax(n, 1) * gs->adperstep, stream));
  PetscCallCUDA(GpukitPoolMallocN(&cnt, (size_t)PetscMax(n, 1), stream));
  if (reuse) { /* SAME_NONZERO_PATTERN: the pattern of the set-up that grew it (kept on the host), one solve */
    PetscCheck(gs->Jptr && gs->nloc == n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "adaptive pattern: no kept pattern to reuse");
    nnzj = (int)gs->Jptr[n];
    PetscCallCUDA(GpukitPoolFreeN(&jcol, stream));
    PetscCallCUDA(GpukitPoolMallocN(&jcol, (size_t)PetscMax(nnzj, 1), stream));
    PetscCallCUDA(cudaMemcpyAsync(jptr, gs->Jptr, (size_t)(n + 1) * sizeof(int), cudaMemcpyHostToDevice, stream));
    PetscCallCUDA(cudaMemcpyAsync(jcol, gs->Jcol, (size_t)nnzj * sizeof(int), cudaMemcpyHostToDevice, stream));
  } else {
    PetscCallCUDA(GpukitGSAIAdaptDiagonalCUDA(n, jptr, jcol, stream));
    nnzj = n;
  }
  {
    /* grow = 1, res = 1, addcnt = 0 */
    int    *one;
    double *dres;
    PetscCall(PetscMalloc2(n, &one, n, &dres));
    for (int i = 0; i < n; i++) {
      one[i]  = 1;
      dres[i] = 1.0;
    }
    PetscCallCUDA(cudaMemcpyAsync(grow, one, (size_t)n * sizeof(int), cudaMemcpyHostToDevice, stream));
    PetscCallCUDA(cudaMemcpyAsync(res, dres, (size_t)n * sizeof(double), cudaMemcpyHostToDevice, stream));
    PetscCallCUDA(cudaMemsetAsync(addcnt, 0, (size_t)n * sizeof(int), stream));
    PetscCallCUDA(cudaStreamSynchronize(stream));
    PetscCall(PetscFree2(one, dres));
  }
  if (P.spd) { /* the diagonal of A */
    Vec                d;
    const PetscScalar *da;
    PetscMemType       mt;
    PetscCall(MatCreateVecs(A, NULL, &d));
    PetscCall(MatGetDiagonal(A, d));
    PetscCallCUDA(GpukitPoolMallocN(&diag, (size_t)PetscMax(n, 1), stream));
    PetscCall(VecGetArrayReadAndMemType(d, &da, &mt));
    PetscCallCUDA(cudaMemcpyAsync(diag, da, (size_t)n * sizeof(double), PetscMemTypeDevice(mt) ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice, stream));
    PetscCallCUDA(cudaStreamSynchronize(stream));
    PetscCall(VecRestoreArrayReadAndMemType(d, &da));
    PetscCall(VecDestroy(&d));
  }
  a.n       = n;
  a.spd     = P.spd;
  a.perstep = (int)gs->adperstep;
  a.room    = (int)PetscMin((PetscInt)cap, 1 + gs->adsteps * gs->adperstep);
  a.tol     = gs->adtol;
  a.bptr    = csr.rowptr;
  a.bcol    = csr.colidx;
  a.bval    = csr.val;
  a.diag    = diag;
  a.status  = status;
  a.grow    = grow;
  a.res     = res;
  a.addcnt  = addcnt;
  a.add     = add;

  for (PetscInt s = reuse ? gs->adsteps : 0; s <= gs->adsteps; s++) {
    int nnew;
    PetscCallCUDA(GpukitPoolFreeN(&vals, stream));
    PetscCallCUDA(GpukitPoolMallocN(&vals, (size_t)PetscMax(nnzj, 1), stream));
    P.jptr = jptr;
    P.jcol = jcol;
    PetscCall(AdaptSolve(pc, &P, nnzj, dinfo, vals, status, &plan, &fin, stream));
    a.jptr = jptr;
    a.jcol = jcol;
    a.x    = vals;
    if (reuse) break; /* the counts stay those of the set-up that grew the pattern */
    PetscCallCUDA(GpukitGSAIAdaptStepCUDA(&a, s == gs->adsteps ? 1 : 0, stream));
    if (s == gs->adsteps) break;
    PetscCallCUDA(GpukitGSAIAdaptLengthsCUDA(n, jptr, addcnt, cnt, stream));
    PetscCallCUDA(GpukitPoolMallocN(&nptr, (size_t)n + 1, stream));
    PetscCallCUDA(GpukitCSRScanCUDA(n, cnt, nptr, NULL, &nnew, stream)); /* synchronises */
    if (nnew == nnzj) { /* no row grew: J is final, the values of this solve are on it */
      PetscCallCUDA(GpukitPoolFreeN(&nptr, stream));
      break;
    }
    rounds = (int)s + 1;
    PetscCallCUDA(GpukitPoolMallocN(&ncol, (size_t)nnew, stream));
    PetscCallCUDA(GpukitGSAIAdaptMergeCUDA(n, jptr, jcol, addcnt, add, a.perstep, nptr, ncol, stream));
    PetscCallCUDA(cudaMemsetAsync(addcnt, 0, (size_t)n * sizeof(int), stream));
    PetscCallCUDA(GpukitPoolFreeN(&jptr, stream));
    PetscCallCUDA(GpukitPoolFreeN(&jcol, stream));
    jptr = nptr;
    jcol = ncol;
    nptr = ncol = NULL;
    nnzj = nnew;
  }

  /* the failures and the counts */
  fail.row = -1;
  if (fin.failrow != INT_MAX) {
    int st;
    PetscCallCUDA(cudaMemcpy(&st, status + fin.failrow, sizeof(int), cudaMemcpyDeviceToHost));
    fail.row   = fin.failrow;
    fail.kind  = st - GPUKIT_GSAI_FAIL;
    fail.value = 0.0;
  }
  if (!reuse) { /* the counts, and the pattern kept on the host for SAME_NONZERO_PATTERN */
    double  *hres, maxres = 0.0;
    int     *hptr;
    PetscInt met = 0, capped = 0;
    PetscCall(PetscMalloc2(n, &hres, n + 1, &hptr));
    PetscCallCUDA(cudaMemcpyAsync(hres, res, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost, stream));
    PetscCallCUDA(cudaMemcpyAsync(hptr, jptr, (size_t)(n + 1) * sizeof(int), cudaMemcpyDeviceToHost, stream));
    PetscCallCUDA(cudaStreamSynchronize(stream));
    for (int i = 0; i < n; i++) {
      if (hres[i] <= gs->adtol) met++;
      else if (hptr[i + 1] - hptr[i] >= cap) capped++;
      maxres = PetscMax(maxres, hres[i]);
    }
    gs->admet      = met;
    gs->adcapped   = capped;
    gs->ncapped    = capped;
    gs->adrounds   = rounds;
    gs->admaxres   = maxres;
    gs->adnnzratio = csr.nnz ? (PetscReal)nnzj / (PetscReal)csr.nnz : 0.0;
    PetscCall(PetscFree(gs->Jptr));
    PetscCall(PetscFree(gs->Jcol));
    PetscCall(PetscMalloc1(n + 1, &gs->Jptr));
    PetscCall(PetscMalloc1(PetscMax(nnzj, 1), &gs->Jcol));
    for (int i = 0; i <= n; i++) gs->Jptr[i] = hptr[i];
    PetscCallCUDA(cudaMemcpy(gs->Jcol, jcol, (size_t)nnzj * sizeof(int), cudaMemcpyDeviceToHost));
    PetscCall(PetscFree2(hres, hptr));
  }
  PetscCall(PetscTime(&t1));
  gs->time[GSAI_STAGE_PATTERN] += t1 - t0; /* the rounds, solves included */

  /* M (or G) kept in the device CSR (gsaidevm.h): J taken over, the last solve's values copied; spd: G^T built on the
     device; no PETSc Mat unless asked for (PCGSAIGetMatrix()) */
  PetscCall(PetscTime(&t0));
  if (!reuse || fail.row >= 0) {
    PetscCall(MatDestroy(&gs->M));
    PetscCall(GSAIDevMDestroy(&gs->devm));
  }
  if (fail.row < 0) {
    double  *mv;
    PetscInt dn, dnnz;
    if (!gs->devm) {
      PetscCall(GSAIDevMCreateTake(pc, n, nnzj, &jptr, &jcol, &gs->devm)); /* jptr, jcol now NULL */
      PetscCall(PetscInfo(pc, "%s kept in the device CSR (%d rows, %d nonzeros): no Mat made by the set-up\n", gs->type == PCGSAI_SPD ? "G" : "M", n, nnzj));
    }
    PetscCall(GSAIDevMGetInfo(gs->devm, &dn, &dnnz, NULL));
    PetscCheck(dn == n && dnnz == nnzj, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The kept device M is %" PetscInt_FMT " x %" PetscInt_FMT " with %" PetscInt_FMT " nonzeros, the kept pattern %d x %d with %d", dn, dn, dnnz, n, n, nnzj);
    PetscCall(GSAIDevMGetValues(gs->devm, &mv));
    if (nnzj) PetscCallCUDA(cudaMemcpyAsync(mv, vals, (size_t)nnzj * sizeof(double), cudaMemcpyDeviceToDevice, stream));
    PetscCall(GSAIDevMValuesUpdated(gs->devm, gs->type == PCGSAI_SPD ? PETSC_TRUE : PETSC_FALSE));
  }
  if (fail.row >= 0 && fail.kind == GSAI_FAIL_NOTSPD) PetscCallCUDA(cudaMemcpy(&fail.value, diag + fail.row, sizeof(double), cudaMemcpyDeviceToHost));
  PetscCallCUDA(GpukitPoolFreeN(&vals, stream));
  PetscCallCUDA(GpukitPoolFreeN(&jptr, stream));
  PetscCallCUDA(GpukitPoolFreeN(&jcol, stream));
  PetscCallCUDA(GpukitPoolFreeN(&status, stream));
  PetscCallCUDA(GpukitPoolFreeN(&grow, stream));
  PetscCallCUDA(GpukitPoolFreeN(&res, stream));
  PetscCallCUDA(GpukitPoolFreeN(&addcnt, stream));
  PetscCallCUDA(GpukitPoolFreeN(&add, stream));
  PetscCallCUDA(GpukitPoolFreeN(&cnt, stream));
  PetscCallCUDA(GpukitPoolFreeN(&diag, stream));
  PetscCallCUDA(GpukitPoolFreeN(&dinfo, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream));
  PetscCall(GpukitMatRestoreDeviceCSR(Acsr, &csr));
  PetscCall(MatDestroy(&Acsr));
  PetscCall(PetscTime(&t1));
  gs->time[GSAI_STAGE_ASSEMBLE] += t1 - t0;
  PetscCall(PetscLogEventEnd(PC_GSAI_AdaptiveCUDA, pc, 0, 0, 0));
  PetscCall(GSAIRaiseFailure(pc, &fail)); /* one rank: no agreement needed */

  gs->nnz         = nnzj;
  gs->nfallback   = fin.nfallback;
  gs->maxn1       = PetscMax(plan.maxn1, fin.maxn1);
  gs->maxn2       = plan.maxn2;
  gs->nloc        = n;
  gs->nforced     = 0;
  gs->forcedcut   = 0;
  gs->havepattern = PETSC_TRUE; /* J is kept on the host (gs->Jptr, gs->Jcol) */
  gs->ptype       = gs->type;
  gs->pside       = gs->sideused;
  PetscCall(PetscInfo(pc, "Adaptive pattern on the device: %d rounds of growth, nnz %d (%.3g x nnz(A)); %" PetscInt_FMT " rows met the target residual %g, %" PetscInt_FMT " stopped at the cap %d; largest residual %g\n", rounds, nnzj, (double)gs->adnnzratio, gs->admet, (double)gs->adtol, gs->adcapped, cap, (double)gs->admaxres));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif
