/*
   KSPCACG's one global reduction per outer iteration (step 2 of the algorithm in cacgsolve.c): the inner products of
   the Gram matrices as a list of pairs, their local sums in one pass (the backend's), one MPI_Allreduce; and the
   per-solve backend table (cacgimpl.h), with the host backend.
*/
#include "cacgimpl.h"

/* ---------------------------------------------------------------------------------------------------------- */
/* the fused reduction                                                                                         */

/* The inner products of one outer iteration, as a list of pairs (a_p, b_p) grouped by a: for each i, a = W_i against
   Y_i..Y_m-1 (G), then W_i..W_m-1 (W^T W) or W_i alone (||W_i||), then Y_0 for i = 1 (the symmetry check of M);
   a = Y_i against Y_i..Y_m-1 (Y^T Y) or Y_i alone; finally x against x. Without a preconditioner W is Y and only
   the first group of each i remains. dst[p] receives the value; sym[p], when not NULL, too (the mirror entry). */
static PetscInt CACGGramPairs(KSP ksp, PetscInt m, const CACGGramPlan *pl, double *ysq, double *wsq, double *xsq)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;
  PetscInt  n  = 0;

  /* at most m(m+1)/2 (G) + m(m+1)/2 (one norm Gram) + m (the other side's column norms) + 1 + 1 = m(m+2) + 2,
     GPUKIT_CACG_MAX_PAIRS for m = GPUKIT_CACG_MAX_M */
#define CACG_PAIR(A, B, D, S) \
  do { \
    cg->pa[n]    = (A); \
    cg->pb[n]    = (B); \
    cg->pdst[n]  = (D); \
    cg->psym[n++] = (S); \
  } while (0)
  for (PetscInt i = 0; i < m; i++) {
    for (PetscInt j = i; j < m; j++) CACG_PAIR(cg->W[i], cg->Y[j], &cg->G[i * m + j], &cg->G[j * m + i]);
    if (cg->aliased) continue;
    if (pl->ww)
      for (PetscInt j = i; j < m; j++) CACG_PAIR(cg->W[i], cg->W[j], &cg->Gn[i * m + j], &cg->Gn[j * m + i]);
    else if (pl->diag) CACG_PAIR(cg->W[i], cg->W[i], &wsq[i], NULL);
    if (i == 1) CACG_PAIR(cg->W[1], cg->Y[0], &cg->g10, NULL);
    if (pl->yy)
      for (PetscInt j = i; j < m; j++) CACG_PAIR(cg->Y[i], cg->Y[j], &cg->Gn[i * m + j], &cg->Gn[j * m + i]);
    else if (pl->diag) CACG_PAIR(cg->Y[i], cg->Y[i], &ysq[i], NULL);
  }
  if (pl->x) CACG_PAIR(ksp->vec_sol, ksp->vec_sol, xsq, NULL);
#undef CACG_PAIR
  return n;
}

/* out[j] += x . b[j][off..off+n) for the nb <= 4 vectors b[j]: two rows per step, eight independent sums */
static inline void CACGDots(PetscInt n, const PetscScalar *x, const PetscScalar *const *b, PetscInt nb, PetscInt off, PetscScalar *out)
{
  PetscScalar        s0 = 0, s1 = 0, s2 = 0, s3 = 0, t0 = 0, t1 = 0, t2 = 0, t3 = 0;
  const PetscScalar *b0 = b[0] + off, *b1 = b[nb > 1 ? 1 : 0] + off, *b2 = b[nb > 2 ? 2 : 0] + off, *b3 = b[nb > 3 ? 3 : 0] + off;
  PetscInt           k;

  for (k = 0; k + 1 < n; k += 2) {
    const PetscScalar x0 = x[k], x1 = x[k + 1];
    s0 += x0 * b0[k];
    t0 += x1 * b0[k + 1];
    s1 += x0 * b1[k];
    t1 += x1 * b1[k + 1];
    s2 += x0 * b2[k];
    t2 += x1 * b2[k + 1];
    s3 += x0 * b3[k];
    t3 += x1 * b3[k + 1];
  }
  if (k < n) {
    s0 += x[k] * b0[k];
    s1 += x[k] * b1[k];
    s2 += x[k] * b2[k];
    s3 += x[k] * b3[k];
  }
  out[0] += s0 + t0;
  if (nb > 1) out[1] += s1 + t1;
  if (nb > 2) out[2] += s2 + t2;
  if (nb > 3) out[3] += s3 + t3;
}

/* The host backend's gram: the local parts of all np inner products in one pass over the rows (each vector read once,
   in blocks that stay in cache), for vectors in host memory (done = PETSC_FALSE otherwise); the caller sums them over
   the ranks */
static PetscErrorCode CACGGramHost(KSP ksp, PetscInt np, PetscScalar *local, PetscBool *done)
{
  KSP_CACG           *cg = (KSP_CACG *)ksp->data;
  const PetscScalar **pa, **pb;
  Vec                 uniq[2 * GPUKIT_CACG_MAX_M + 1];
  const PetscScalar  *arr[2 * GPUKIT_CACG_MAX_M + 1];
  PetscInt            nu = 0, nloc, got = 0;
  PetscBool           host = PETSC_TRUE;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  PetscCall(PetscMalloc2(np, &pa, np, &pb));
  /* the distinct vectors, each accessed once */
  for (PetscInt p = 0; p < np; p++) {
    Vec v[2] = {cg->pa[p], cg->pb[p]};
    for (PetscInt t = 0; t < 2; t++) {
      PetscInt u = 0;
      while (u < nu && uniq[u] != v[t]) u++;
      if (u == nu) uniq[nu++] = v[t];
    }
  }
  for (PetscInt u = 0; u < nu; u++) {
    PetscMemType mt;
    PetscCall(VecGetArrayReadAndMemType(uniq[u], &arr[u], &mt));
    got++;
    if (PetscMemTypeDevice(mt)) {
      host = PETSC_FALSE;
      break;
    }
  }
  if (host) {
    const PetscInt bs = 256; /* rows per block: 2m+1 vectors x 256 rows x 8 bytes stay in L2 */
    PetscCall(VecGetLocalSize(cg->Y[0], &nloc));
    for (PetscInt p = 0; p < np; p++) {
      PetscInt ua = 0, ub = 0;
      while (uniq[ua] != cg->pa[p]) ua++;
      while (uniq[ub] != cg->pb[p]) ub++;
      pa[p]    = arr[ua];
      pb[p]    = arr[ub];
      local[p] = 0.0;
    }
    for (PetscInt k0 = 0; k0 < nloc; k0 += bs) {
      const PetscInt k1 = PetscMin(nloc, k0 + bs);
      for (PetscInt p = 0; p < np;) { /* up to 4 pairs with the same a at a time: 8 independent sums */
        PetscInt q = p + 1;
        while (q < np && q < p + 4 && pa[q] == pa[p]) q++;
        CACGDots(k1 - k0, pa[p] + k0, pb + p, q - p, k0, local + p);
        p = q;
      }
    }
    PetscCall(PetscLogFlops(2.0 * np * nloc));
    *done = PETSC_TRUE;
  }
  for (PetscInt u = 0; u < got; u++) PetscCall(VecRestoreArrayReadAndMemType(uniq[u], &arr[u]));
  PetscCall(PetscFree2(pa, pb));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The lean basis (cg->lean, a backend with gramlean): W^T D W, W^T D^2 W (= Y^T Y), W^T W by the backend, full
   matrices, one MPI_Allreduce */
static PetscErrorCode CACGGramLean(KSP ksp, PetscInt m, const CACGGramPlan *pl, double ysq[], double wsq[], double *xsq)
{
  KSP_CACG          *cg  = (KSP_CACG *)ksp->data;
  const PetscBool    gd2 = (PetscBool)(pl->yy || pl->diag), g1 = (PetscBool)(pl->ww || pl->diag);
  const PetscScalar *g2, *g1p;
  PetscInt           nsum;

  PetscFunctionBegin;
  PetscCall((*cg->be->gramlean)(ksp, m, gd2, g1, pl->x, cg->gloc, &nsum));
  if (cg->be->device) cg->stats.devicegram++;
  PetscCall(MPIU_Allreduce(cg->gloc, cg->gbuf, (PetscMPIInt)nsum, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)ksp)));
  g2  = gd2 ? cg->gbuf + m * m : NULL;
  g1p = g1 ? cg->gbuf + m * m * (gd2 ? 2 : 1) : NULL;
  for (PetscInt i = 0; i < m * m; i++) {
    cg->G[i] = (double)PetscRealPart(cg->gbuf[i]);
    if (pl->yy) cg->Gn[i] = (double)PetscRealPart(g2[i]);
    else if (pl->ww) cg->Gn[i] = (double)PetscRealPart(g1p[i]);
  }
  for (PetscInt i = 0; i < m; i++) {
    ysq[i] = g2 ? (double)PetscRealPart(g2[i * m + i]) : 0.0;
    wsq[i] = g1p ? (double)PetscRealPart(g1p[i * m + i]) : 0.0;
  }
  if (pl->x) *xsq = (double)PetscRealPart(cg->gbuf[nsum - 1]);
  cg->g10 = cg->G[1]; /* w_1^T (dinv .* w_0) and w_0^T (dinv .* w_1): one sum, M is symmetric by construction */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* G = W^T Y and what the plan asks for, in ONE global reduction: the local sums by one pass over the vectors (the
   backend's gram: a host loop, or a device kernel for CUDA vectors; its gramlean for the lean basis) and one
   MPI_Allreduce of the packed sums; otherwise (-ksp_cacg_fused_gram 0, vectors of another kind than the backend's)
   VecMDotBegin() per group, one PetscCommSplitReductionBegin() and VecMDotEnd(), which PETSc packs into one
   MPI_Allreduce as well. Returns PETSC_FALSE in ok if a number is Inf or NaN. */
PetscErrorCode CACGGram(KSP ksp, PetscInt m, const CACGGramPlan *pl, PetscBool *ok)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;
  double    ysq[GPUKIT_CACG_MAX_M], wsq[GPUKIT_CACG_MAX_M], xsq = 0.0;
  PetscInt  np = 0;
  PetscBool done = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(KSP_CACG_Gram, ksp, 0, 0, 0));
  if (cg->lean) {
    PetscCall(CACGGramLean(ksp, m, pl, ysq, wsq, &xsq));
    done = PETSC_TRUE;
  } else {
    np = CACGGramPairs(ksp, m, pl, ysq, wsq, &xsq);
    if (cg->fusedgram) {
      PetscCall((*cg->be->gram)(ksp, np, cg->gloc, &done));
      if (done && cg->be->device) cg->stats.devicegram++;
      if (done) PetscCall(MPIU_Allreduce(cg->gloc, cg->gbuf, (PetscMPIInt)np, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)ksp)));
    }
  }
  if (!done) {
    for (PetscInt p0 = 0; p0 < np;) { /* one VecMDotBegin per group of pairs with the same a */
      PetscInt p1 = p0;
      while (p1 < np && cg->pa[p1] == cg->pa[p0]) p1++;
      PetscCall(VecMDotBegin(cg->pa[p0], p1 - p0, cg->pb + p0, cg->gbuf + p0));
      p0 = p1;
    }
    PetscCall(PetscCommSplitReductionBegin(PetscObjectComm((PetscObject)ksp)));
    for (PetscInt p0 = 0; p0 < np;) {
      PetscInt p1 = p0;
      while (p1 < np && cg->pa[p1] == cg->pa[p0]) p1++;
      PetscCall(VecMDotEnd(cg->pa[p0], p1 - p0, cg->pb + p0, cg->gbuf + p0));
      p0 = p1;
    }
  }
  for (PetscInt p = 0; p < np; p++) {
    *cg->pdst[p] = (double)PetscRealPart(cg->gbuf[p]);
    if (cg->psym[p]) *cg->psym[p] = *cg->pdst[p];
  }
  for (PetscInt i = 0; i < m; i++) {
    if (cg->aliased) {
      for (PetscInt j = 0; j < m; j++) cg->Gn[i * m + j] = cg->G[i * m + j];
      cg->ynrm[i] = cg->wnrm[i] = PetscSqrtReal(PetscAbsReal(cg->G[i * m + i]));
      continue;
    }
    cg->wnrm[i] = PetscSqrtReal(PetscAbsReal(pl->ww ? cg->Gn[i * m + i] : (pl->diag || cg->lean ? wsq[i] : 0.0)));
    cg->ynrm[i] = PetscSqrtReal(PetscAbsReal(pl->yy ? cg->Gn[i * m + i] : (pl->diag || cg->lean ? ysq[i] : 0.0)));
  }
  cg->xnrm = PetscSqrtReal(PetscAbsReal(xsq));
  cg->stats.reductions++;
  *ok = PETSC_TRUE;
  for (PetscInt i = 0; i < m * m; i++)
    if (PetscIsInfOrNanReal(cg->G[i]) || PetscIsInfOrNanReal(cg->Gn[i])) *ok = PETSC_FALSE;
  if (PetscIsInfOrNanReal(cg->xnrm)) *ok = PETSC_FALSE;
  PetscCall(PetscLogEventEnd(KSP_CACG_Gram, ksp, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}


/* ---------------------------------------------------------------------------------------------------------- */
/* the backends                                                                                                */

/* host memory: the Gram sums by CACGGramHost(); no lean basis, no fused update (VecMAXPY + PCApply) */
static const CACGBackend CACGBackendHost = {"host", PETSC_FALSE, CACGGramHost, NULL, NULL, NULL};

/* The backend for vectors like v: the CUDA one for a CUDA vector not bound to the CPU (CUDA builds), else the host
   one (whose Gram pass also declines vectors in other device memory: then VecMDot) */
PetscErrorCode CACGGetBackend(Vec v, const CACGBackend **be)
{
  PetscFunctionBegin;
  *be = NULL;
#if defined(GPUKIT_HAVE_CUDA)
  PetscCall(CACGGetBackendCUDA_Private(v, be));
#endif
  if (!*be) *be = &CACGBackendHost;
  PetscFunctionReturn(PETSC_SUCCESS);
}
