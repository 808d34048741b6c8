/*
   KSPCACG: communication-avoiding (s-step) preconditioned conjugate gradients. User documentation: docs/cacg.md.

   Notation: A SPD, M the preconditioner (PCApply gives M^{-1}), K = M^{-1} A. CG keeps x, r = b - A x,
   z = M^{-1} r and the direction p; this method also keeps u = M p. Each outer iteration does s CG steps:

   1. Matrix powers (CACGPowers): with a three-term polynomial basis rho_0..rho_s,
        A rho_j(K) = M (sigma_j rho_{j+1}(K) + theta_j rho_j(K) + gamma_j rho_{j-1}(K)),
      build Y = [rho_0(K) p .. rho_s(K) p | rho_0(K) z .. rho_{s-1}(K) z]   (m = 2s+1 columns)
      and   W = M Y, column by column: W(:,j+1) = (A Y(:,j) - theta_j W(:,j) - gamma_j W(:,j-1)) / sigma_j and
      Y(:,j+1) = M^{-1} W(:,j+1). W(:,0) = u and r, so M itself is never applied. 2s-1 MatMult and PCApply, or one
      call of a matrix powers kernel the matrix composes (cacgimpl.h). Without a preconditioner W is Y.
   2. ONE global reduction (CACGGram): the Gram matrix G = W^T Y = Y^T M Y (upper triangle) and, in the same
      reduction, the norm Gram (Y^T Y for the preconditioned norm, W^T W for the unpreconditioned one; nothing for
      the natural norm or without a preconditioner), column norms and ||x|| for residual replacement, and w_1^T y_0
      for the symmetry check of M: local sums in one pass (host loop, or the CUDA kernel of cacgkernels.cu) and one
      MPI_Allreduce, or VecMDotBegin()/End() around one PetscCommSplitReductionBegin().
   3. s CG steps on coordinates in Y, on the host in double: with B the change of basis (K Y(:,j) = Y B(:,j)),
      (r,z) = z'^T G z', (p, A p) = p'^T G B p', ||z||^2 = z'^T Y^T Y z', ... Each step calls KSPMonitor and the
      convergence test, so iteration counts and monitors are those of CG.
   4. x += Y x', u = W p', r = W z' (VecMAXPY), then p = M^{-1} u and z = M^{-1} r (PCApply): the z-space vectors
      stay M^{-1} of the r-space ones (updating both from the coordinates lets them drift apart, which on badly
      scaled problems stalls or breaks the iteration).

   Precision: each quadratic form q = a^T G b is checked against its rounding scale eps (|a|^T d)(|b|^T d),
   d_i = sqrt(G_ii). When (p, Ap) has lost more than CACG_LOSS of its relative accuracy the outer iteration ends
   before that step and s is lowered for the rest of the solve (a truncation); when (r, z) or the norm has, the
   step is finished and those two are computed directly (one more reduction). No step ever uses an unresolved
   number, so a poor basis costs iterations, not correctness.
*/
#include "cacgimpl.h"

PetscLogEvent KSP_CACG_MPK, KSP_CACG_Gram, KSP_CACG_GramCUDA, KSP_CACG_Update, KSP_CACG_UpdateCUDA, KSP_CACG_Eig;

const char *const KSPCACGBasisTypes[] = {"monomial", "newton", "chebyshev", "KSPCACGBasisType", "KSP_CACG_BASIS_", NULL};

/* the largest relative rounding error accepted in an inner product computed from the Gram matrix */
#define CACG_LOSS 1.0e-8
/* the asymmetry of Y^T A Y, in units of its rounding scale eps * (|Y|^T |A Y|), above which A or M is not symmetric */
#define CACG_ASYM 1.0e6
/* the asymmetry relative to the symmetric part above which the solve stops */
#define CACG_ASYM_REL 0.25

/* ---------------------------------------------------------------------------------------------------------- */
/* small dense algebra on the host, in double                                                                  */

static double CACGQuad(PetscInt m, const double *G, const double *a, const double *b)
{
  double q = 0.0;

  for (PetscInt i = 0; i < m; i++) {
    double t = 0.0;
    if (a[i] == 0.0) continue;
    for (PetscInt j = 0; j < m; j++) t += G[i * m + j] * b[j];
    q += a[i] * t;
  }
  return q;
}

/* sum_i |a_i| d_i */
static double CACGScale(PetscInt m, const double *a, const double *d)
{
  double s = 0.0;

  for (PetscInt i = 0; i < m; i++) s += PetscAbsReal(a[i]) * d[i];
  return s;
}

/* relative rounding error of q = a^T G b computed from a Gram matrix whose entries are accurate to eps d_i d_j */
static double CACGLoss(double q, double sa, double sb)
{
  const double eps = PETSC_MACHINE_EPSILON;

  if (q == 0.0) return (sa * sb == 0.0) ? 0.0 : PETSC_INFINITY;
  return eps * sa * sb / PetscAbsReal(q);
}

/* Eigenvalues of the symmetric tridiagonal matrix (diagonal a[0..n-1], off-diagonal b[0..n-2]), ascending, by
   bisection on Sturm counts */
static void CACGTridiagEigenvalues(PetscInt n, const double *a, const double *b, double *ev)
{
  double lo = PETSC_MAX_REAL, hi = -PETSC_MAX_REAL;

  for (PetscInt i = 0; i < n; i++) {
    double r = (i > 0 ? PetscAbsReal(b[i - 1]) : 0.0) + (i < n - 1 ? PetscAbsReal(b[i]) : 0.0);
    lo       = PetscMin(lo, a[i] - r);
    hi       = PetscMax(hi, a[i] + r);
  }
  for (PetscInt k = 0; k < n; k++) {
    double l = lo, h = hi;
    for (int it = 0; it < 200 && h - l > 1e-15 * PetscMax(PetscAbsReal(l), PetscAbsReal(h)); it++) {
      double   x = 0.5 * (l + h), q = 1.0;
      PetscInt cnt = 0; /* eigenvalues below x */
      for (PetscInt i = 0; i < n; i++) {
        q = a[i] - x - (i > 0 ? b[i - 1] * b[i - 1] / q : 0.0);
        if (q == 0.0) q = -1e-300;
        if (q < 0.0) cnt++;
      }
      if (cnt > k) h = x;
      else l = x;
    }
    ev[k] = 0.5 * (l + h);
  }
}

/* The first k points of the Leja ordering of the n values v (k <= n): the smallest first, then each the one that
   maximises the product of the distances to those already taken */
static void CACGLeja(PetscInt n, const double *v, PetscInt k, double *out)
{
  PetscBool taken[GPUKIT_CACG_MAX_EIG + GPUKIT_CACG_MAX_S] = {PETSC_FALSE};

  for (PetscInt c = 0; c < k; c++) {
    PetscInt best = -1;
    double   bv   = -PETSC_MAX_REAL;
    for (PetscInt i = 0; i < n; i++) {
      double l = 0.0;
      if (taken[i]) continue;
      if (c == 0) l = -v[i]; /* the smallest first: then (p, Ap) of the first step is a sum of positive terms */
      else
        for (PetscInt j = 0; j < c; j++) l += PetscLogReal(PetscAbsReal(v[i] - out[j]) + 1e-300);
      if (l > bv) {
        bv   = l;
        best = i;
      }
    }
    taken[best] = PETSC_TRUE;
    out[c]      = v[best];
  }
}

/* The asymmetry of S = G B (= Y^T A Y) over the pairs of columns that have a successor (the first s of the p block,
   the first s-1 of the z block): in units of the rounding scale of each pair (*round), and, over the pairs beyond
   CACG_ASYM rounding units, relative to the A-norms, |S_ij - S_ji| / sqrt(S_ii S_jj) (*rel). 0, 0 without a pair. */
static void CACGAsymmetry(PetscInt m, PetscInt s, const double *G, const double *B, const double *d, double *round, double *rel)
{
  PetscInt cols[GPUKIT_CACG_MAX_M], nc = 0;
  double   sdiag[GPUKIT_CACG_MAX_M];

  *round = *rel = 0.0;
  for (PetscInt j = 0; j < s; j++) cols[nc++] = j;
  for (PetscInt j = 0; j < s - 1; j++) cols[nc++] = s + 1 + j;
  for (PetscInt a = 0; a < nc; a++) {
    PetscInt i = cols[a];
    sdiag[a]   = 0.0;
    for (PetscInt k = 0; k < m; k++) sdiag[a] += G[i * m + k] * B[k * m + i];
  }
  for (PetscInt a = 0; a < nc; a++)
    for (PetscInt b = a + 1; b < nc; b++) {
      PetscInt i = cols[a], j = cols[b];
      double   sij = 0.0, sji = 0.0, e = 0.0, r;
      for (PetscInt k = 0; k < m; k++) {
        sij += G[i * m + k] * B[k * m + j];
        sji += G[j * m + k] * B[k * m + i];
        e += d[k] * (d[i] * PetscAbsReal(B[k * m + j]) + d[j] * PetscAbsReal(B[k * m + i]));
      }
      if (!(e > 0.0)) continue;
      r      = PetscAbsReal(sij - sji) / (PETSC_MACHINE_EPSILON * e);
      *round = PetscMax(*round, r);
      if (r > CACG_ASYM) *rel = PetscMax(*rel, PetscAbsReal(sij - sji) / PetscSqrtReal(PetscAbsReal(sdiag[a] * sdiag[b])));
    }
}

/* ---------------------------------------------------------------------------------------------------------- */

/* basis parameters for s steps from the basis type and the spectrum estimate */
static PetscErrorCode CACGSetBasisParameters(KSP ksp)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;
  PetscInt  s  = cg->scur;

  PetscFunctionBegin;
  for (PetscInt j = 0; j < s; j++) {
    cg->theta[j] = 0.0;
    cg->sigma[j] = 1.0;
    cg->gamma[j] = 0.0;
  }
  switch (cg->basis) {
  case KSP_CACG_BASIS_MONOMIAL:
    break;
  case KSP_CACG_BASIS_NEWTON: {
    double cap = 0.25 * (cg->lmax - cg->lmin); /* logarithmic capacity of the interval: keeps the columns O(1) */
    if (!(cap > 0.0)) cap = PetscMax(PetscAbsReal(cg->lmax), 1.0);
    for (PetscInt j = 0; j < s; j++) {
      cg->theta[j] = cg->shifts[j];
      cg->sigma[j] = cap;
    }
  } break;
  case KSP_CACG_BASIS_CHEBYSHEV: {
    double c = 0.5 * (cg->lmax + cg->lmin), d = 0.5 * (cg->lmax - cg->lmin);
    if (!(d > 0.0)) d = PetscMax(0.5 * PetscAbsReal(c), 1e-300);
    for (PetscInt j = 0; j < s; j++) {
      cg->theta[j] = c;
      cg->sigma[j] = j == 0 ? d : 0.5 * d;
      cg->gamma[j] = j == 0 ? 0.0 : 0.5 * d;
    }
  } break;
  default:
    SETERRQ(PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "Unknown KSPCACG basis %d", (int)cg->basis);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The interval [lmin, lmax] and the Newton shifts, from the Ritz values or from the user's interval */
static PetscErrorCode CACGSetSpectrum(KSP ksp)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;
  double    cand[GPUKIT_CACG_MAX_EIG + GPUKIT_CACG_MAX_S];
  PetscInt  nc = 0;

  PetscFunctionBegin;
  if (cg->basis == KSP_CACG_BASIS_MONOMIAL) {
    PetscCall(CACGSetBasisParameters(ksp));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (cg->eiggiven) {
    cg->lmin = cg->emin;
    cg->lmax = cg->emax;
  } else {
    PetscCheck(cg->nritz > 0, PetscObjectComm((PetscObject)ksp), PETSC_ERR_PLIB, "KSPCACG has no spectrum estimate");
    /* Lanczos finds the top of the spectrum well and overestimates the bottom; Chebyshev polynomials grow
       fast above the interval, so widen it a little at the top */
    cg->lmin = cg->ritz[0];
    cg->lmax = cg->ritz[cg->nritz - 1] * (cg->basis == KSP_CACG_BASIS_CHEBYSHEV ? 1.05 : 1.0);
    for (PetscInt i = 0; i < cg->nritz; i++) cand[nc++] = cg->ritz[i];
  }
  if (cg->basis == KSP_CACG_BASIS_NEWTON) {
    /* too few Ritz values (or none): add Chebyshev points of the interval */
    if (nc < cg->scur) {
      PetscInt need = cg->scur;
      for (PetscInt k = 0; k < need; k++) cand[nc++] = 0.5 * (cg->lmax + cg->lmin) + 0.5 * (cg->lmax - cg->lmin) * PetscCosReal(PETSC_PI * (2 * k + 1) / (2.0 * need));
    }
    CACGLeja(nc, cand, cg->scur, cg->shifts);
  }
  PetscCall(CACGSetBasisParameters(ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B: K Y(:, j) = Y B(:, j) for every column but the last of each block */
static void CACGChangeOfBasis(KSP_CACG *cg, PetscInt s, double *B)
{
  const PetscInt m = 2 * s + 1;

  for (PetscInt i = 0; i < m * m; i++) B[i] = 0.0;
  for (PetscInt blk = 0; blk < 2; blk++) {
    PetscInt o = blk ? s + 1 : 0, k = blk ? s - 1 : s; /* columns with a successor */
    for (PetscInt j = 0; j < k; j++) {
      B[(o + j + 1) * m + o + j] = cg->sigma[j];
      B[(o + j) * m + o + j]     = cg->theta[j];
      if (j > 0) B[(o + j - 1) * m + o + j] = cg->gamma[j];
    }
  }
}

/* ---------------------------------------------------------------------------------------------------------- */
/* vectors                                                                                                     */

static PetscErrorCode CACGFreeVectors(KSP ksp)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;
  PetscInt  n  = 2 * cg->sallocated - 1;

  PetscFunctionBegin;
  if (!cg->sallocated) PetscFunctionReturn(PETSC_SUCCESS);
  if (cg->wpool != cg->ypool) PetscCall(VecDestroyVecs(n, &cg->wpool));
  if (cg->ypool) PetscCall(VecDestroyVecs(n, &cg->ypool));
  cg->wpool = cg->ypool = NULL;
  PetscCall(VecDestroy(&cg->yt));
  if (cg->U != cg->P) {
    PetscCall(VecDestroy(&cg->U));
    PetscCall(VecDestroy(&cg->R));
    PetscCall(VecDestroy(&cg->Un));
    PetscCall(VecDestroy(&cg->Rn));
  }
  cg->U = cg->R = cg->Un = cg->Rn = NULL;
  PetscCall(VecDestroy(&cg->P));
  PetscCall(VecDestroy(&cg->Z));
  PetscCall(VecDestroy(&cg->Pn));
  PetscCall(VecDestroy(&cg->Zn));
  PetscCall(VecDestroy(&cg->dinv));
  cg->sallocated = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the vectors for s; lean: no pool for Y (then not aliased) */
static PetscErrorCode CACGAllocate(KSP ksp, PetscBool aliased, PetscBool lean)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;
  Vec      *v;

  PetscFunctionBegin;
  if (cg->sallocated == cg->s && cg->aliased == aliased && (cg->ypool == NULL) == lean) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CACGFreeVectors(ksp));
  if (lean) {
    PetscCall(KSPCreateVecs(ksp, 2 * cg->s - 1, &cg->wpool, 0, NULL));
    PetscCall(KSPCreateVecs(ksp, 1, &v, 0, NULL));
    cg->yt = v[0];
    PetscCall(PetscFree(v));
  } else {
    PetscCall(KSPCreateVecs(ksp, 2 * cg->s - 1, &cg->ypool, 0, NULL));
    if (aliased) cg->wpool = cg->ypool;
    else PetscCall(KSPCreateVecs(ksp, 2 * cg->s - 1, &cg->wpool, 0, NULL));
  }
  PetscCall(KSPCreateVecs(ksp, aliased ? 4 : 8, &v, 0, NULL));
  cg->P  = v[0];
  cg->Z  = v[1];
  cg->Pn = v[2];
  cg->Zn = v[3];
  if (aliased) {
    cg->U  = cg->P;
    cg->R  = cg->Z;
    cg->Un = cg->Pn;
    cg->Rn = cg->Zn;
  } else {
    cg->U  = v[4];
    cg->R  = v[5];
    cg->Un = v[6];
    cg->Rn = v[7];
  }
  PetscCall(PetscFree(v)); /* the array only; the vectors are kept */
  cg->sallocated = cg->s;
  cg->aliased    = aliased;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the basis arrays of one outer iteration of s steps: Y = [P pool(0..s-1) Z pool(s..2s-2)], W alike */
static void CACGBasisArrays(KSP_CACG *cg, PetscInt s)
{
  const PetscInt o = s + 1;

  cg->Y[0] = cg->P;
  cg->W[0] = cg->U;
  for (PetscInt j = 1; j <= s; j++) {
    cg->Y[j] = cg->ypool ? cg->ypool[j - 1] : NULL; /* NULL: the lean basis */
    cg->W[j] = cg->wpool[j - 1];
  }
  cg->Y[o] = cg->Z;
  cg->W[o] = cg->R;
  for (PetscInt j = 1; j < s; j++) {
    cg->Y[o + j] = cg->ypool ? cg->ypool[s + j - 1] : NULL;
    cg->W[o + j] = cg->wpool[s + j - 1];
  }
}

/* v += Y c over the first m columns; with the lean basis Y = dinv .* W (W c formed in cg->yt) */
static PetscErrorCode CACGAddBasis(KSP ksp, PetscInt m, const PetscScalar c[], Vec v)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  if (!cg->lean) {
    PetscCall(VecMAXPY(v, m, c, cg->Y));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(VecSet(cg->yt, 0.0));
  PetscCall(VecMAXPY(cg->yt, m, c, cg->W));
  PetscCall(VecPointwiseMult(cg->yt, cg->dinv, cg->yt));
  PetscCall(VecAXPY(v, 1.0, cg->yt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------------------- */
/* matrix powers                                                                                               */

/* The reference for every MatMatrixPowers_C hook (see cacgimpl.h): k MatMult + PCApply */
static PetscErrorCode CACGPowersDefault(KSP ksp, Mat A, PetscInt k, const PetscReal *theta, const PetscReal *sigma, const PetscReal *gamma, Vec *Y, Vec *W, PetscBool aliased)
{
  PetscFunctionBegin;
  for (PetscInt j = 0; j < k; j++) {
    const PetscScalar a = 1.0 / sigma[j], b = -theta[j] / sigma[j], c = -gamma[j] / sigma[j];

    PetscCall(KSP_MatMult(ksp, A, Y[j], W[j + 1]));
    if (j > 0 && gamma[j] != 0.0) PetscCall(VecAXPBYPCZ(W[j + 1], b, c, a, W[j], W[j - 1]));
    else if (theta[j] != 0.0) PetscCall(VecAXPBY(W[j + 1], b, a, W[j]));
    else if (sigma[j] != 1.0) PetscCall(VecScale(W[j + 1], a));
    if (!aliased) PetscCall(KSP_PCApply(ksp, W[j + 1], Y[j + 1]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the matrix powers kernel for A: the matrix's "MatMatrixPowers_C", else KSPCACG's own for MATSEQAIJCUSPARSE (CUDA
   builds), else NULL (-ksp_cacg_matrix_powers 0, a transpose solve: NULL) */
static PetscErrorCode CACGGetHook(KSP ksp, Mat A, GpukitMatMatrixPowersFn *hook)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  *hook = NULL;
  if (!cg->usehook || ksp->transpose_solve) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatMatrixPowers_C", hook));
#if defined(GPUKIT_HAVE_CUDA)
  if (!*hook && PetscDefined(USE_REAL_DOUBLE) && !PetscDefined(USE_COMPLEX) && !PetscDefined(USE_64BIT_INDICES)) { /* what its kernel takes */
    PetscBool iscsr;
    PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJCUSPARSE, &iscsr));
    if (iscsr) *hook = CACGMatMatrixPowers_SeqAIJCUSPARSE;
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* this solve's hook (cg->hook) when the preconditioner is none or Jacobi (cg->dinv is set only for Jacobi); else the
   default */
static PetscErrorCode CACGPowers(KSP ksp, Mat A, PetscInt k, Vec *Y, Vec *W)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  if (k < 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(KSP_CACG_MPK, ksp, 0, 0, 0));
  cg->hookused = PETSC_TRUE;
  if (cg->lean) PetscCall((*cg->hook)(A, cg->dinv, k, cg->theta, cg->sigma, cg->gamma, NULL, W)); /* checked in KSPSolve_CACG() */
  else if (cg->hook && (cg->aliased || cg->dinv)) PetscCall((*cg->hook)(A, cg->aliased ? NULL : cg->dinv, k, cg->theta, cg->sigma, cg->gamma, Y, W));
  else {
    cg->hookused = PETSC_FALSE;
    PetscCall(CACGPowersDefault(ksp, A, k, cg->theta, cg->sigma, cg->gamma, Y, W, cg->aliased));
  }
  PetscCall(PetscLogEventEnd(KSP_CACG_MPK, ksp, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------------------- */
/* the fused reduction                                                                                         */

typedef struct {
  PetscBool yy, ww, diag, x; /* the norm Gram Y^T Y / W^T W, column norms, ||x|| */
} CACGGramPlan;

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

/* the local parts of all np inner products in one pass over the rows (each vector read once, in blocks that stay
   in cache), for vectors in host memory; the caller sums them over the ranks */
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

/* G = W^T Y and what the plan asks for, in ONE global reduction: the local sums by one pass over the vectors
   (CACGGramHost() for host memory, the device kernel of cacgcuda.cu for CUDA vectors) and one MPI_Allreduce of the
   packed sums; otherwise (-ksp_cacg_fused_gram 0, other device vectors) VecMDotBegin() per group, one
   PetscCommSplitReductionBegin() and VecMDotEnd(), which PETSc packs into one MPI_Allreduce as well. Returns
   PETSC_FALSE in ok if a number is Inf or NaN. */
static PetscErrorCode CACGGram(KSP ksp, PetscInt m, const CACGGramPlan *pl, PetscBool *ok)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;
  double    ysq[GPUKIT_CACG_MAX_M], wsq[GPUKIT_CACG_MAX_M], xsq = 0.0;
  PetscInt  np;
  PetscBool done = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(KSP_CACG_Gram, ksp, 0, 0, 0));
#if defined(GPUKIT_HAVE_CUDA)
  if (cg->lean) { /* W^T D W, W^T D^2 W (= Y^T Y), W^T W by the device kernel: full matrices, one MPI_Allreduce */
    const PetscBool    gd2 = (PetscBool)(pl->yy || pl->diag), g1 = (PetscBool)(pl->ww || pl->diag);
    const PetscScalar *g2, *g1p;
    PetscInt           nsum;

    PetscCall(CACGGramLeanCUDA_Private(ksp, m, gd2, g1, pl->x, cg->gloc, &nsum));
    cg->stats.devicegram++;
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
    if (pl->x) xsq = (double)PetscRealPart(cg->gbuf[nsum - 1]);
    cg->g10 = cg->G[1]; /* w_1^T (dinv .* w_0) and w_0^T (dinv .* w_1): one sum, M is symmetric by construction */
    np      = 0;
    done    = PETSC_TRUE;
  } else
#endif
    np = CACGGramPairs(ksp, m, pl, ysq, wsq, &xsq);
  if (cg->fusedgram && !cg->lean) {
    PetscCall(CACGGramHost(ksp, np, cg->gloc, &done));
#if defined(GPUKIT_HAVE_CUDA)
    if (!done) {
      PetscCall(CACGGramCUDA_Private(ksp, np, cg->pa, cg->pb, cg->gloc, &done));
      if (done) cg->stats.devicegram++;
    }
#endif
    if (done) PetscCall(MPIU_Allreduce(cg->gloc, cg->gbuf, (PetscMPIInt)np, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)ksp)));
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

/* one more iterate: log, monitor, test */
static PetscErrorCode CACGTest(KSP ksp, PetscReal rnorm)
{
  PetscFunctionBegin;
  ksp->its++;
  ksp->rnorm = rnorm;
  PetscCall(KSPLogResidualHistory(ksp, rnorm));
  PetscCall(KSPMonitor(ksp, ksp->its, rnorm));
  PetscCall((*ksp->converged)(ksp, ksp->its, rnorm, &ksp->reason, ksp->cnvP));
  if (!ksp->reason && ksp->its >= ksp->max_it) ksp->reason = KSP_DIVERGED_ITS;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the norm of the current residual from (r, z) and the direct norms, by the KSP's norm type */
static PetscReal CACGNorm(KSP ksp, PetscReal rz, PetscReal zz, PetscReal rr)
{
  switch (ksp->normtype) {
  case KSP_NORM_PRECONDITIONED:
    return PetscSqrtReal(zz);
  case KSP_NORM_UNPRECONDITIONED:
    return PetscSqrtReal(rr);
  case KSP_NORM_NATURAL:
    return PetscSqrtReal(PetscAbsReal(rz));
  default:
    return 0.0;
  }
}

/* (r, z) and the norm's square, directly: one split reduction */
static PetscErrorCode CACGDirectDots(KSP ksp, Vec R, Vec Z, PetscReal *rz, PetscReal *nrm)
{
  KSP_CACG   *cg = (KSP_CACG *)ksp->data;
  PetscScalar d  = 0.0;
  PetscReal   n  = 0.0;

  PetscFunctionBegin;
  PetscCall(VecDotBegin(R, Z, &d));
  if (ksp->normtype == KSP_NORM_PRECONDITIONED) PetscCall(VecNormBegin(Z, NORM_2, &n));
  else if (ksp->normtype == KSP_NORM_UNPRECONDITIONED) PetscCall(VecNormBegin(R, NORM_2, &n));
  PetscCall(PetscCommSplitReductionBegin(PetscObjectComm((PetscObject)ksp)));
  PetscCall(VecDotEnd(R, Z, &d));
  if (ksp->normtype == KSP_NORM_PRECONDITIONED) PetscCall(VecNormEnd(Z, NORM_2, &n));
  else if (ksp->normtype == KSP_NORM_UNPRECONDITIONED) PetscCall(VecNormEnd(R, NORM_2, &n));
  cg->stats.reductions++;
  *rz = PetscRealPart(d);
  if (ksp->normtype == KSP_NORM_NATURAL) n = PetscSqrtReal(PetscAbsReal(*rz));
  *nrm = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* r = b - A x, z = M^{-1} r */
static PetscErrorCode CACGResidual(KSP ksp, Mat A, PetscBool zero)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  if (zero) PetscCall(VecCopy(ksp->vec_rhs, cg->R));
  else {
    PetscCall(KSP_MatMult(ksp, A, ksp->vec_sol, cg->R));
    PetscCall(VecAYPX(cg->R, -1.0, ksp->vec_rhs));
  }
  if (!cg->aliased) PetscCall(KSP_PCApply(ksp, cg->R, cg->Z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* set a divergence reason; an error instead with KSPSetErrorIfNotConverged() */
static PetscErrorCode CACGDiverged(KSP ksp, KSPConvergedReason reason, const char *why)
{
  PetscFunctionBegin;
  PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "KSPCACG: %s", why);
  PetscCall(PetscInfo(ksp, "diverged: %s\n", why));
  ksp->reason = reason;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Plain PCG steps that estimate the spectrum of K (Ritz values of the Lanczos matrix of the CG coefficients).
   On entry delta = (r, z), p = z (or the current direction), u = M p. */
static PetscErrorCode CACGEstimate(KSP ksp, Mat A, PetscInt nsteps, PetscReal *delta)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;
  double    alpha[GPUKIT_CACG_MAX_EIG], beta[GPUKIT_CACG_MAX_EIG], td[GPUKIT_CACG_MAX_EIG], te[GPUKIT_CACG_MAX_EIG], ev[GPUKIT_CACG_MAX_EIG];
  PetscInt  n = 0;
  Vec       Wv = cg->Zn; /* A p */

  PetscFunctionBegin;
  for (PetscInt k = 0; k < nsteps && !ksp->reason; k++) {
    PetscScalar pw;
    PetscReal   rz, nrm;

    PetscCall(KSP_MatMult(ksp, A, cg->P, Wv));
    PetscCall(VecDot(cg->P, Wv, &pw));
    cg->stats.reductions++;
    if (PetscIsInfOrNanScalar(pw)) {
      PetscCall(CACGDiverged(ksp, KSP_DIVERGED_NANORINF, "Inf or NaN in (p, Ap)"));
      break;
    }
    if (PetscRealPart(pw) <= 0.0) {
      PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_MAT, "(p, Ap) <= 0: the matrix is not positive definite"));
      break;
    }
    alpha[n] = *delta / PetscRealPart(pw);
    PetscCall(VecAXPY(ksp->vec_sol, alpha[n], cg->P));
    PetscCall(VecAXPY(cg->R, -alpha[n], Wv));
    if (!cg->aliased) PetscCall(KSP_PCApply(ksp, cg->R, cg->Z));
    PetscCall(CACGDirectDots(ksp, cg->R, cg->Z, &rz, &nrm));
    if (PetscIsInfOrNanReal(rz) || PetscIsInfOrNanReal(nrm)) {
      PetscCall(CACGDiverged(ksp, KSP_DIVERGED_NANORINF, "Inf or NaN in (r, z)"));
      break;
    }
    cg->stats.cgsteps++;
    n++;
    PetscCall(CACGTest(ksp, nrm));
    if (ksp->reason) break;
    if (rz < 0.0) {
      PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_PC, "(r, M^{-1} r) < 0: the preconditioner is not positive definite"));
      break;
    }
    beta[n - 1] = rz / *delta;
    *delta      = rz;
    PetscCall(VecAYPX(cg->P, beta[n - 1], cg->Z));
    if (!cg->aliased) PetscCall(VecAYPX(cg->U, beta[n - 1], cg->R));
  }
  if (ksp->reason || n == 0) PetscFunctionReturn(PETSC_SUCCESS);
  if (!cg->aliased) PetscCall(KSP_PCApply(ksp, cg->U, cg->P)); /* p = M^{-1} u exactly, as the s-step phase keeps it */
  PetscCall(PetscLogEventBegin(KSP_CACG_Eig, ksp, 0, 0, 0));
  for (PetscInt k = 0; k < n; k++) {
    td[k] = 1.0 / alpha[k] + (k > 0 ? beta[k - 1] / alpha[k - 1] : 0.0);
    if (k < n - 1) te[k] = PetscSqrtReal(beta[k]) / alpha[k];
  }
  CACGTridiagEigenvalues(n, td, te, ev);
  cg->nritz = n;
  for (PetscInt k = 0; k < n; k++) cg->ritz[k] = ev[k];
  PetscCall(PetscLogEventEnd(KSP_CACG_Eig, ksp, 0, 0, 0));
  PetscCall(PetscInfo(ksp, "%" PetscInt_FMT " CG steps: Ritz values of M^{-1}A in [%g, %g]\n", n, ev[0], ev[n - 1]));
  if (!(ev[0] > 0.0)) PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_MAT, "a Ritz value of M^{-1}A is not positive: the operator is not positive definite"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ||A||_inf for residual replacement, once per operator state; < 0 when the matrix cannot give it */
static PetscErrorCode CACGMatNorm(KSP ksp, Mat A)
{
  KSP_CACG        *cg = (KSP_CACG *)ksp->data;
  PetscObjectState st;
  PetscBool        has;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &st));
  if (cg->anormA == A && cg->anormstate == st) PetscFunctionReturn(PETSC_SUCCESS);
  cg->anormA     = A;
  cg->anormstate = st;
  cg->anorm      = -1.0;
  PetscCall(MatHasOperation(A, MATOP_NORM, &has));
  if (has) {
    PetscCall(MatNorm(A, NORM_INFINITY, &cg->anorm));
    cg->stats.reductions++;
  } else PetscCall(PetscInfo(ksp, "Matrix type %s has no MatNorm(): no residual replacement\n", ((PetscObject)A)->type_name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------------------- */

static PetscErrorCode KSPSolve_CACG(KSP ksp)
{
  KSP_CACG    *cg = (KSP_CACG *)ksp->data;
  Mat          A, Pmat;
  PetscBool    isnone, ok;
  MatNullSpace nsp;
  PetscReal    delta, nrm;
  const double eps = PETSC_MACHINE_EPSILON, epshat = PetscSqrtReal(PETSC_MACHINE_EPSILON);

  PetscFunctionBegin;
  PetscCall(PCGetOperators(ksp->pc, &A, &Pmat));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCNONE, &isnone));
  PetscCall(MatGetNullSpace(A, &nsp));
  PetscCall(PetscMemzero(&cg->stats, sizeof(cg->stats)));
  cg->asym     = 0.0;
  cg->scur     = cg->s;
  cg->devreset = PETSC_TRUE;
  ksp->its     = 0;
  ksp->reason  = KSP_CONVERGED_ITERATING;

  /* the vectors, with the lean basis (Y = dinv .* W never stored) where the matrix powers hook, the Gram kernel and
     the update kernel can all form Y where they read it: CUDA vectors, Jacobi, the hook, both fused steps; and the
     diagonal preconditioner for a matrix powers hook and for the fused device update: the PC applied to ones */
  {
    PetscBool               isjac, devupd = PETSC_FALSE, lean;
    GpukitMatMatrixPowersFn hook;
    PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCJACOBI, &isjac));
    PetscCall(CACGGetHook(ksp, A, &hook));
    cg->hook = hook;
    lean = (PetscBool)(cg->leanopt && isjac && !nsp && hook && cg->fusedgram && cg->fusedupdate && !ksp->transpose_solve && PetscDefined(USE_REAL_DOUBLE) && !PetscDefined(USE_COMPLEX));
#if defined(GPUKIT_HAVE_CUDA)
    /* the kernels that form Y where they read it are CUDA kernels: the solution's type says where the vectors live */
    if (lean) PetscCall(PetscObjectTypeCompareAny((PetscObject)ksp->vec_sol, &lean, VECSEQCUDA, VECMPICUDA, ""));
#else
    lean = PETSC_FALSE;
#endif
    PetscCall(CACGAllocate(ksp, (PetscBool)(isnone && !nsp), lean));
#if defined(GPUKIT_HAVE_CUDA)
    if (cg->fusedupdate && !ksp->transpose_solve) PetscCall(PetscObjectTypeCompareAny((PetscObject)cg->P, &devupd, VECSEQCUDA, VECMPICUDA, ""));
#endif
    if (lean && !devupd) PetscCall(CACGAllocate(ksp, (PetscBool)(isnone && !nsp), (lean = PETSC_FALSE))); /* KSPCreateVecs() made host vectors after all */
    cg->lean = lean;
    if ((hook || devupd) && isjac && !nsp) {
      Vec one = cg->Pn, t = cg->Zn; /* free until the first update (not aliased: Jacobi) */
      PetscCall(VecSet(one, 1.0));
      if (!cg->dinv) {
        PetscCall(VecDuplicate(cg->P, &cg->dinv));
        PetscCall(PCApply(ksp->pc, one, cg->dinv));
      } else { /* dinv keeps its object state when the diagonal did not change: a hook may cache what it derives from it */
        PetscReal diff;
        PetscCall(PCApply(ksp->pc, one, t));
        PetscCall(VecWAXPY(one, -1.0, cg->dinv, t));
        PetscCall(VecNorm(one, NORM_1, &diff)); /* 0 exactly when no entry changed (NORM_1: no copy logged on CUDA vectors) */
        if (diff != 0.0) PetscCall(VecCopy(t, cg->dinv));
      }
    } else PetscCall(VecDestroy(&cg->dinv));
  }
  if (cg->replace) PetscCall(CACGMatNorm(ksp, A));

  /* r, z, p = z, u = r, and the first norm */
  PetscCall(CACGResidual(ksp, A, ksp->guess_zero));
  PetscCall(VecCopy(cg->Z, cg->P));
  if (!cg->aliased) PetscCall(VecCopy(cg->R, cg->U));
  PetscCall(CACGDirectDots(ksp, cg->R, cg->Z, &delta, &nrm));
  KSPCheckNorm(ksp, nrm);
  KSPCheckDot(ksp, delta);
  cg->rnorm0 = nrm;
  ksp->rnorm = nrm;
  PetscCall(KSPLogResidualHistory(ksp, nrm));
  PetscCall(KSPMonitor(ksp, 0, nrm));
  PetscCall((*ksp->converged)(ksp, 0, nrm, &ksp->reason, ksp->cnvP));
  if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS);
  if (delta < 0.0) {
    PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_PC, "(r, M^{-1} r) < 0: the preconditioner is not positive definite"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (delta == 0.0) {
    PetscCall(CACGDiverged(ksp, KSP_DIVERGED_BREAKDOWN, "(r, M^{-1} r) = 0 with a nonzero residual: the preconditioner is singular"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* the spectrum: given, kept from the last solve with the same operators, or estimated by plain CG steps */
  if (cg->basis != KSP_CACG_BASIS_MONOMIAL && !cg->eiggiven) {
    PetscObjectState sa, sp, spc;
    PetscCall(PetscObjectStateGet((PetscObject)A, &sa));
    PetscCall(PetscObjectStateGet((PetscObject)Pmat, &sp));
    PetscCall(PetscObjectStateGet((PetscObject)ksp->pc, &spc));
    if (!(cg->nritz && cg->estA == A && cg->estP == Pmat && cg->estAstate == sa && cg->estPstate == sp && cg->estPCstate == spc)) {
      PetscInt steps = cg->eigsteps ? cg->eigsteps : PetscMax(2 * cg->s, 10);
      cg->nritz      = 0;
      PetscCall(CACGEstimate(ksp, A, PetscMin(steps, GPUKIT_CACG_MAX_EIG), &delta));
      if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS);
      cg->estA       = A;
      cg->estP       = Pmat;
      cg->estAstate  = sa;
      cg->estPstate  = sp;
      cg->estPCstate = spc;
    }
  }
  PetscCall(CACGSetSpectrum(ksp));

  while (!ksp->reason) {
    const PetscInt s = cg->scur, m = 2 * s + 1, o = s + 1;
    CACGGramPlan   pl;
    double        *G = cg->G, *Gn = cg->Gn, *B = cg->B, d[GPUKIT_CACG_MAX_M], dn[GPUKIT_CACG_MAX_M];
    double         pc[GPUKIT_CACG_MAX_M] = {0}, zc[GPUKIT_CACG_MAX_M] = {0}, *xc = cg->xc, wc[GPUKIT_CACG_MAX_M];
    double         dl, worst = 0.0;
    PetscInt       j, steps;
    PetscBool      fused, direct = PETSC_FALSE, replace_now = PETSC_FALSE, useanorm = (PetscBool)(cg->replace && cg->anorm >= 0.0);
    PetscScalar    coef[GPUKIT_CACG_MAX_M];

    /* 1. the basis */
    CACGBasisArrays(cg, s);
    PetscCall(CACGPowers(ksp, A, s, cg->Y, cg->W));
    if (cg->hookused) cg->stats.mpk++;
    PetscCall(CACGPowers(ksp, A, s - 1, cg->Y + o, cg->W + o));

    /* 2. one reduction */
    pl.yy   = (PetscBool)(ksp->normtype == KSP_NORM_PRECONDITIONED);
    pl.ww   = (PetscBool)(ksp->normtype == KSP_NORM_UNPRECONDITIONED);
    pl.diag = useanorm;
    pl.x    = useanorm;
    PetscCall(CACGGram(ksp, m, &pl, &ok));
    cg->stats.outer++;
    if (cg->lean) cg->stats.leanbasis++;
    if (!ok) {
      PetscCall(CACGDiverged(ksp, KSP_DIVERGED_NANORINF, "Inf or NaN in the Gram matrix of the s-step basis"));
      break;
    }
    for (PetscInt i = 0; i < m; i++) {
      if (G[i * m + i] < 0.0) {
        PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_PC, "y^T M y < 0 for a basis vector y: the preconditioner is not positive definite"));
        break;
      }
      d[i]  = PetscSqrtReal(G[i * m + i]);
      dn[i] = PetscSqrtReal(PetscAbsReal(Gn[i * m + i]));
    }
    if (ksp->reason) break;

    /* residual replacement (van der Vorst and Ye; Carson and Demmel): dev estimates ||b - A x - r|| */
    if (useanorm) {
      const double rk = cg->wnrm[o];
      if (cg->devreset) {
        cg->dev = cg->devinit = eps * (cg->anorm * cg->xnrm + rk);
        cg->devreset          = PETSC_FALSE;
      } else {
        cg->dev += eps * (cg->anorm * cg->xnrm + cg->inc);
        if (cg->devprev <= epshat * cg->rprev && cg->dev > epshat * rk && cg->dev > 1.1 * cg->devinit) replace_now = PETSC_TRUE;
      }
      cg->devprev = cg->dev;
      cg->rprev   = rk;
    }

    /* 3. s CG steps on the coordinates */
    CACGChangeOfBasis(cg, s, B);
    /* symmetry: S = G B = Y^T A Y on the columns with a successor must be symmetric; a clear asymmetry means the
       matrix or the preconditioner is not symmetric */
    /* symmetry: G = W^T Y = Y^T M Y is symmetric when M is, S = G B = Y^T A Y (columns with a successor) when A
       is. Beyond rounding (CACG_ASYM) the solve goes on while the asymmetry is small against the symmetric part
       (Dirichlet rows without symmetric elimination, as KSPCG tolerates), and stops above CACG_ASYM_REL. */
    {
      double    round = 0.0, rel = 0.0;
      PetscBool pcsym = PETSC_TRUE;
      if (!cg->aliased) {
        round = PetscAbsReal(cg->g10 - G[1]) / (PETSC_MACHINE_EPSILON * d[0] * d[1]);
        if (round > CACG_ASYM) {
          rel   = PetscAbsReal(cg->g10 - G[1]) / (d[0] * d[1]);
          pcsym = PETSC_FALSE;
        }
        if (rel > CACG_ASYM_REL) {
          char why[256];
          PetscCall(PetscSNPrintf(why, sizeof(why), "y^T M^T y' and y'^T M^T y differ by %.3g of ||y||_M ||y'||_M for basis vectors y, y': the preconditioner is not symmetric", rel));
          PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_PC, why));
          break;
        }
        if (rel > cg->stats.pcasymmetry) cg->stats.pcasymmetry = rel;
      }
      CACGAsymmetry(m, s, G, B, d, &round, &rel);
      if (rel > CACG_ASYM_REL) { /* with a non-symmetric M, S is not symmetric either: blame M */
        char why[256];
        PetscCall(PetscSNPrintf(why, sizeof(why), "y^T A y' and y'^T A y differ by %.3g of ||y||_A ||y'||_A for basis vectors y, y' (from the Gram matrix, which assumes M symmetric): the %s is not symmetric", rel, pcsym ? "matrix" : "preconditioner"));
        PetscCall(CACGDiverged(ksp, pcsym ? KSP_DIVERGED_INDEFINITE_MAT : KSP_DIVERGED_INDEFINITE_PC, why));
        break;
      }
      if (rel > cg->stats.asymmetry) cg->stats.asymmetry = rel;
      cg->asym = PetscMax(cg->asym, round);
    }
    for (PetscInt i = 0; i < m; i++) xc[i] = 0.0;
    cg->mcur  = m;
    cg->inner = PETSC_TRUE; /* KSPBuildSolution() adds Y xc */
    pc[0] = 1.0;
    zc[o] = 1.0;
    delta = G[o * m + o];
    for (j = 0; j < s; j++) {
      double pap, rz, nn, alpha, beta;

      for (PetscInt i = 0; i < m; i++) {
        wc[i] = 0.0;
        for (PetscInt k = 0; k < m; k++) wc[i] += B[i * m + k] * pc[k];
      }
      pap = CACGQuad(m, G, pc, wc);
      dl  = CACGLoss(pap, CACGScale(m, pc, d), CACGScale(m, wc, d));
      worst = PetscMax(worst, dl);
      if (dl > CACG_LOSS) {
        if (j == 0) {
          PetscCall(CACGDiverged(ksp, KSP_DIVERGED_BREAKDOWN, "the s-step basis lost the precision of (p, Ap) in the first step: use a smaller s or another basis"));
        } else {
          PetscCall(PetscInfo(ksp, "outer %" PetscInt_FMT ": (p, Ap) of step %" PetscInt_FMT " has relative error %g: s lowered from %" PetscInt_FMT " to %" PetscInt_FMT "\n", cg->stats.outer, j, dl, s, j));
          cg->stats.truncations++;
          cg->scur = j;
        }
        break;
      }
      if (pap <= 0.0) {
        PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_MAT, "(p, Ap) <= 0: the matrix is not positive definite"));
        break;
      }
      alpha = delta / pap;
      for (PetscInt i = 0; i < m; i++) {
        xc[i] += alpha * pc[i];
        zc[i] -= alpha * wc[i];
      }
      rz = CACGQuad(m, G, zc, zc);
      dl = CACGLoss(rz, CACGScale(m, zc, d), CACGScale(m, zc, d));
      nn = 0.0;
      if (ksp->normtype == KSP_NORM_PRECONDITIONED || ksp->normtype == KSP_NORM_UNPRECONDITIONED) {
        double sz = CACGScale(m, zc, dn);
        nn        = CACGQuad(m, Gn, zc, zc);
        dl        = PetscMax(dl, CACGLoss(nn, sz, sz));
      }
      worst = PetscMax(worst, dl);
      if (dl > CACG_LOSS) { /* finish this step with direct inner products */
        direct = PETSC_TRUE;
        j++;
        break;
      }
      if (rz < 0.0) {
        j++;
        PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_PC, "(r, M^{-1} r) < 0: the preconditioner is not positive definite"));
        break;
      }
      PetscCall(CACGTest(ksp, CACGNorm(ksp, rz, nn, nn)));
      if (ksp->reason) {
        j++;
        break;
      }
      beta  = rz / delta;
      delta = rz;
      for (PetscInt i = 0; i < m; i++) pc[i] = zc[i] + beta * pc[i];
    }
    steps = j;
    cg->inner = PETSC_FALSE;
    PetscCall(PetscInfo(ksp, "outer %" PetscInt_FMT ": %" PetscInt_FMT " steps of %" PetscInt_FMT ", largest relative rounding of a Gram inner product %g%s; deviation estimate %g\n", cg->stats.outer, steps, s, worst, direct ? " (last step direct)" : "", cg->dev));

    /* 4. back to vectors */
    PetscCall(PetscLogEventBegin(KSP_CACG_Update, ksp, 0, 0, 0));
    fused = PETSC_FALSE;
#if defined(GPUKIT_HAVE_CUDA)
    /* on CUDA vectors with no preconditioner or Jacobi (dinv: then PCApply is dinv .* v exactly), all of the below
       in one device pass */
    if (cg->fusedupdate && steps && !ksp->reason && !ksp->transpose_solve && (cg->aliased || cg->dinv)) PetscCall(CACGUpdateCUDA_Private(ksp, m, xc, pc, zc, &fused));
#endif
    if (!fused) {
      for (PetscInt i = 0; i < m; i++) coef[i] = xc[i];
      if (steps) PetscCall(CACGAddBasis(ksp, m, coef, ksp->vec_sol));
    }
    if (ksp->reason || !steps) {
      PetscCall(PetscLogEventEnd(KSP_CACG_Update, ksp, 0, 0, 0));
      if (ksp->reason) break;
      continue; /* truncated before the first step: a new basis with the smaller s */
    }
    /* the r-space vectors come from W; the z-space ones are M^{-1} of them, so that u = M p and r = M z hold to
       rounding at every outer iteration (updating both from the coordinates lets them drift apart) */
    if (!fused) {
      for (PetscInt i = 0; i < m; i++) coef[i] = pc[i];
      PetscCall(VecAXPBY(cg->Un, coef[0], 0.0, cg->W[0]));
      PetscCall(VecMAXPY(cg->Un, m - 1, coef + 1, cg->W + 1));
      if (!cg->aliased) PetscCall(KSP_PCApply(ksp, cg->Un, cg->Pn));
      for (PetscInt i = 0; i < m; i++) coef[i] = zc[i];
      PetscCall(VecAXPBY(cg->Rn, coef[0], 0.0, cg->W[0]));
      PetscCall(VecMAXPY(cg->Rn, m - 1, coef + 1, cg->W + 1));
      if (!cg->aliased) PetscCall(KSP_PCApply(ksp, cg->Rn, cg->Zn));
    }
    {
      Vec t;
      t      = cg->P;
      cg->P  = cg->Pn;
      cg->Pn = t;
      t      = cg->Z;
      cg->Z  = cg->Zn;
      cg->Zn = t;
      if (!cg->aliased) {
        t      = cg->U;
        cg->U  = cg->Un;
        cg->Un = t;
        t      = cg->R;
        cg->R  = cg->Rn;
        cg->Rn = t;
      } else {
        cg->U  = cg->P;
        cg->R  = cg->Z;
        cg->Un = cg->Pn;
        cg->Rn = cg->Zn;
      }
    }
    PetscCall(PetscLogEventEnd(KSP_CACG_Update, ksp, 0, 0, 0));
    if (useanorm) cg->inc = cg->anorm * CACGScale(m, xc, cg->ynrm) + CACGScale(m, zc, cg->wnrm);

    if (replace_now) {
      PetscCall(PetscInfo(ksp, "outer %" PetscInt_FMT ": residual replaced (deviation estimate %g, ||r|| %g)\n", cg->stats.outer, cg->dev, cg->rprev));
      PetscCall(CACGResidual(ksp, A, PETSC_FALSE));
      cg->stats.replacements++;
      cg->devreset = PETSC_TRUE;
    }

    if (direct) { /* the last step's (r, z) and norm lost precision in the Gram form: compute them, then the step's beta */
      PetscReal rz;
      cg->stats.direct++;
      PetscCall(CACGDirectDots(ksp, cg->R, cg->Z, &rz, &nrm));
      KSPCheckNorm(ksp, nrm);
      KSPCheckDot(ksp, rz);
      PetscCall(CACGTest(ksp, nrm));
      if (ksp->reason) break;
      if (rz < 0.0) {
        PetscCall(CACGDiverged(ksp, KSP_DIVERGED_INDEFINITE_PC, "(r, M^{-1} r) < 0: the preconditioner is not positive definite"));
        break;
      }
      PetscCall(VecAYPX(cg->P, rz / delta, cg->Z));
      if (!cg->aliased) PetscCall(VecAYPX(cg->U, rz / delta, cg->R));
    }
    if (cg->scur != s) PetscCall(CACGSetSpectrum(ksp));
  }

  /* -ksp_cacg_true_residual: a converged claim must hold for b - A x too */
  if (cg->truecheck && ksp->normtype != KSP_NORM_NONE) {
    PetscReal rz, tn;
    Vec       Rs = cg->R, Zs = cg->Z;
    cg->R = cg->Rn; /* keep the recursive vectors: work in the spares */
    cg->Z = cg->aliased ? cg->Rn : cg->Zn;
    PetscCall(CACGResidual(ksp, A, PETSC_FALSE));
    PetscCall(CACGDirectDots(ksp, cg->R, cg->Z, &rz, &tn));
    cg->R        = Rs;
    cg->Z        = Zs;
    cg->stats.truenorm = tn;
    if (ksp->reason > 0 && tn > 10.0 * PetscMax(ksp->rtol * cg->rnorm0, ksp->abstol) && tn > 10.0 * ksp->rnorm) cg->stats.truefail++;
    PetscCall(PetscViewerASCIIPrintf(PETSC_VIEWER_STDOUT_(PetscObjectComm((PetscObject)ksp)), "KSPCACG true residual check: %s norm of the true residual %g, of the recursive residual %g%s\n", KSPNormTypes[ksp->normtype], (double)tn, (double)ksp->rnorm,
                                     ksp->reason > 0 ? (cg->stats.truefail ? ": convergence NOT confirmed" : ": convergence confirmed") : ""));
    if (cg->stats.truefail) PetscCall(CACGDiverged(ksp, KSP_DIVERGED_BREAKDOWN, "the true residual does not meet the tolerance that the recursive residual met"));
  }
  cg->stats.s = cg->scur;
  PetscCall(PetscInfo(ksp, "largest asymmetry of Y^T A Y: %g rounding units\n", cg->asym));
  if (cg->stats.asymmetry > 0.0) PetscCall(PetscInfo(ksp, "the matrix is not symmetric: y^T A y' - y'^T A y reached %g of ||y||_A ||y'||_A (CG converges only by luck)\n", (double)cg->stats.asymmetry));
  if (cg->stats.pcasymmetry > 0.0) PetscCall(PetscInfo(ksp, "the preconditioner is not symmetric: up to %g of ||y||_M ||y'||_M\n", (double)cg->stats.pcasymmetry));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------------------- */

/* during the s inner steps the solution is x + Y x' (monitors of the true residual or the solution ask for it) */
static PetscErrorCode KSPBuildSolution_CACG(KSP ksp, Vec v, Vec *V)
{
  KSP_CACG   *cg = (KSP_CACG *)ksp->data;
  PetscScalar coef[GPUKIT_CACG_MAX_M];

  PetscFunctionBegin;
  if (!cg->inner) {
    PetscCall(KSPBuildSolutionDefault(ksp, v, V));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!v) {
    if (!cg->Xb) PetscCall(VecDuplicate(ksp->vec_sol, &cg->Xb));
    v = cg->Xb;
  }
  for (PetscInt i = 0; i < cg->mcur; i++) coef[i] = cg->xc[i];
  PetscCall(VecCopy(ksp->vec_sol, v));
  PetscCall(CACGAddBasis(ksp, cg->mcur, coef, v));
  if (V) *V = v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSetUp_CACG(KSP ksp)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  PetscCheck(ksp->pc_side == PC_LEFT, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "KSPCACG supports left preconditioning only, not %s", PCSides[ksp->pc_side]);
  PetscCheck(cg->basis == KSP_CACG_BASIS_MONOMIAL || cg->eiggiven || cg->eigsteps == 0 || cg->eigsteps >= 2, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "KSPCACG needs at least 2 CG steps for the eigenvalue estimate");
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPReset_CACG(KSP ksp)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  PetscCall(CACGFreeVectors(ksp));
  PetscCall(VecDestroy(&cg->Xb));
#if defined(GPUKIT_HAVE_CUDA)
  PetscCall(CACGGramCUDAFree_Private(ksp));
#endif
  cg->nritz  = 0;
  cg->estA   = cg->estP = NULL;
  cg->anormA = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPDestroy_CACG(KSP ksp)
{
  PetscFunctionBegin;
  PetscCall(KSPReset_CACG(ksp));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetS_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGGetS_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetBasis_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGGetBasis_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetEigenvalues_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGGetEigenvalues_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetEigenvalueSteps_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetReplace_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetCheckTrueResidual_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetUseMatrixPowers_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetFusedGram_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetFusedUpdate_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetLeanBasis_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGGetStatistics_C", NULL));
  PetscCall(PetscFree(ksp->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPView_CACG(KSP ksp, PetscViewer viewer)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;
  PetscBool isascii, isstring;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERSTRING, &isstring));
  if (isstring) PetscCall(PetscViewerStringSPrintf(viewer, " s = %" PetscInt_FMT " basis %s", cg->s, KSPCACGBasisTypes[cg->basis]));
  if (!isascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerASCIIPrintf(viewer, "  s = %" PetscInt_FMT " CG steps per outer iteration (one global reduction each), basis %s\n", cg->s, KSPCACGBasisTypes[cg->basis]));
  if (cg->basis != KSP_CACG_BASIS_MONOMIAL) {
    if (cg->eiggiven) PetscCall(PetscViewerASCIIPrintf(viewer, "  spectrum of M^{-1}A: [%g, %g] (given)\n", (double)cg->emin, (double)cg->emax));
    else if (cg->nritz) PetscCall(PetscViewerASCIIPrintf(viewer, "  spectrum of M^{-1}A: [%g, %g] (Ritz values of %" PetscInt_FMT " CG steps)\n", (double)cg->ritz[0], (double)cg->ritz[cg->nritz - 1], cg->nritz));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "  spectrum of M^{-1}A: estimated by %" PetscInt_FMT " CG steps at the first solve\n", cg->eigsteps ? cg->eigsteps : PetscMax(2 * cg->s, 10)));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "  residual replacement: %s; true residual check: %s; matrix powers hook: %s\n", cg->replace ? "on" : "off", cg->truecheck ? "on" : "off", cg->usehook ? "used if the matrix has one (MatMatrixPowers_C, or KSPCACG's own for MATSEQAIJCUSPARSE)" : "off"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  fused Gram: %s; fused update: %s; lean basis: %s\n", cg->fusedgram ? "on" : "off", cg->fusedupdate ? "on (CUDA vectors with Jacobi or no preconditioner)" : "off", cg->leanopt ? (cg->stats.leanbasis ? "on (used in the last solve)" : "on where it applies (CUDA vectors, Jacobi, a matrix powers kernel)") : "off"));
  if (cg->stats.outer)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  last solve: %" PetscInt_FMT " outer iterations, %" PetscInt_FMT " CG steps for the estimate, %" PetscInt_FMT " reductions, %" PetscInt_FMT " replacements, %" PetscInt_FMT " truncations (s at the end %" PetscInt_FMT ")\n", cg->stats.outer, cg->stats.cgsteps, cg->stats.reductions, cg->stats.replacements, cg->stats.truncations, cg->stats.s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSetFromOptions_CACG(KSP ksp, GpukitOptionItems PetscOptionsObject)
{
  KSP_CACG        *cg = (KSP_CACG *)ksp->data;
  PetscInt         s  = cg->s, nsteps = cg->eigsteps, n = 2;
  KSPCACGBasisType basis = cg->basis;
  PetscReal        ev[2] = {cg->emin, cg->emax};
  PetscBool        flg, b;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "KSP CACG (s-step CG) options");
  PetscCall(PetscOptionsInt("-ksp_cacg_s", "CG steps per outer iteration (one global reduction each)", "KSPCACGSetS", s, &s, &flg));
  if (flg) PetscCall(KSPCACGSetS(ksp, s));
  PetscCall(PetscOptionsEnum("-ksp_cacg_basis", "Polynomial basis of the s-step Krylov basis", "KSPCACGSetBasis", KSPCACGBasisTypes, (PetscEnum)basis, (PetscEnum *)&basis, &flg));
  if (flg) PetscCall(KSPCACGSetBasis(ksp, basis));
  PetscCall(PetscOptionsRealArray("-ksp_cacg_eigenvalues", "emin,emax: interval of the spectrum of M^{-1}A (default: estimated)", "KSPCACGSetEigenvalues", ev, &n, &flg));
  if (flg) {
    PetscCheck(n == 2, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_SIZ, "-ksp_cacg_eigenvalues takes two numbers, emin,emax; got %" PetscInt_FMT, n);
    PetscCall(KSPCACGSetEigenvalues(ksp, ev[0], ev[1]));
  }
  PetscCall(PetscOptionsInt("-ksp_cacg_eig_steps", "CG steps that estimate the spectrum (0: max(2s, 10))", "KSPCACGSetEigenvalueSteps", nsteps, &nsteps, &flg));
  if (flg) PetscCall(KSPCACGSetEigenvalueSteps(ksp, nsteps));
  b = cg->replace;
  PetscCall(PetscOptionsBool("-ksp_cacg_replace", "Residual replacement", "KSPCACGSetReplace", b, &b, &flg));
  if (flg) PetscCall(KSPCACGSetReplace(ksp, b));
  b = cg->truecheck;
  PetscCall(PetscOptionsBool("-ksp_cacg_true_residual", "Check the true residual at convergence", "KSPCACGSetCheckTrueResidual", b, &b, &flg));
  if (flg) PetscCall(KSPCACGSetCheckTrueResidual(ksp, b));
  b = cg->fusedgram;
  PetscCall(PetscOptionsBool("-ksp_cacg_fused_gram", "All local inner products in one pass (host loop or CUDA kernel) and one MPI_Allreduce (else VecMDot and a split reduction)", "KSPCACGSetFusedGram", b, &b, &flg));
  if (flg) PetscCall(KSPCACGSetFusedGram(ksp, b));
  b = cg->fusedupdate;
  PetscCall(PetscOptionsBool("-ksp_cacg_fused_update", "On CUDA vectors with Jacobi or no preconditioner: x, the next u, r, p, z of an outer iteration in one device kernel (else VecMAXPY + PCApply)", "KSPCACGSetFusedUpdate", b, &b, &flg));
  if (flg) PetscCall(KSPCACGSetFusedUpdate(ksp, b));
  b = cg->leanopt;
  PetscCall(PetscOptionsBool("-ksp_cacg_lean_basis", "On CUDA vectors with Jacobi and a matrix powers kernel: keep the basis as W alone, M^{-1} W formed where it is read", "KSPCACGSetLeanBasis", b, &b, &flg));
  if (flg) PetscCall(KSPCACGSetLeanBasis(ksp, b));
  b = cg->usehook;
  PetscCall(PetscOptionsBool("-ksp_cacg_matrix_powers", "Use a matrix powers kernel: the matrix's MatMatrixPowers_C, or KSPCACG's own for MATSEQAIJCUSPARSE", "KSPCACGSetUseMatrixPowers", b, &b, &flg));
  if (flg) PetscCall(KSPCACGSetUseMatrixPowers(ksp, b));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------------------- */
/* Set/Get implementations                                                                                     */

static PetscErrorCode KSPCACGSetS_CACG(KSP ksp, PetscInt s)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  PetscCheck(s >= 1 && s <= GPUKIT_CACG_MAX_S, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "KSPCACG: s must be in 1..%d, got %" PetscInt_FMT " (s-step bases lose precision quickly; 2..8 is the useful range)", GPUKIT_CACG_MAX_S, s);
  if (s != cg->s) cg->nritz = 0; /* the default number of estimate steps depends on s */
  cg->s = s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGGetS_CACG(KSP ksp, PetscInt *s)
{
  PetscFunctionBegin;
  *s = ((KSP_CACG *)ksp->data)->s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetBasis_CACG(KSP ksp, KSPCACGBasisType basis)
{
  PetscFunctionBegin;
  PetscCheck(basis >= KSP_CACG_BASIS_MONOMIAL && basis <= KSP_CACG_BASIS_CHEBYSHEV, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "KSPCACG: unknown basis %d; use monomial, newton or chebyshev", (int)basis);
  ((KSP_CACG *)ksp->data)->basis = basis;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGGetBasis_CACG(KSP ksp, KSPCACGBasisType *basis)
{
  PetscFunctionBegin;
  *basis = ((KSP_CACG *)ksp->data)->basis;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetEigenvalues_CACG(KSP ksp, PetscReal emin, PetscReal emax)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  if (emin == 0.0 && emax == 0.0) { /* back to the estimate */
    cg->eiggiven = PETSC_FALSE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(emin > 0.0 && emax > emin, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "KSPCACG: the spectrum of an SPD M^{-1}A lies in 0 < emin < emax; got emin %g, emax %g", (double)emin, (double)emax);
  cg->emin     = emin;
  cg->emax     = emax;
  cg->eiggiven = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGGetEigenvalues_CACG(KSP ksp, PetscReal *emin, PetscReal *emax)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  if (cg->eiggiven) {
    if (emin) *emin = cg->emin;
    if (emax) *emax = cg->emax;
  } else {
    if (emin) *emin = cg->nritz ? cg->ritz[0] : 0.0;
    if (emax) *emax = cg->nritz ? cg->ritz[cg->nritz - 1] : 0.0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetEigenvalueSteps_CACG(KSP ksp, PetscInt n)
{
  KSP_CACG *cg = (KSP_CACG *)ksp->data;

  PetscFunctionBegin;
  PetscCheck(n == 0 || (n >= 2 && n <= GPUKIT_CACG_MAX_EIG), PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "KSPCACG: the eigenvalue estimate takes 2..%d CG steps (0: the default max(2s, 10)), got %" PetscInt_FMT, GPUKIT_CACG_MAX_EIG, n);
  if (n != cg->eigsteps) cg->nritz = 0;
  cg->eigsteps = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetReplace_CACG(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  ((KSP_CACG *)ksp->data)->replace = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetCheckTrueResidual_CACG(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  ((KSP_CACG *)ksp->data)->truecheck = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetFusedGram_CACG(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  ((KSP_CACG *)ksp->data)->fusedgram = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetFusedUpdate_CACG(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  ((KSP_CACG *)ksp->data)->fusedupdate = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetLeanBasis_CACG(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  ((KSP_CACG *)ksp->data)->leanopt = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGSetUseMatrixPowers_CACG(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  ((KSP_CACG *)ksp->data)->usehook = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCACGGetStatistics_CACG(KSP ksp, KSPCACGStatistics *st)
{
  PetscFunctionBegin;
  *st = ((KSP_CACG *)ksp->data)->stats;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------------------- */

/*MC
   KSPCACG - "cacg" - communication-avoiding (s-step) preconditioned conjugate gradients, for SPD A and SPD M.

   Each outer iteration builds a basis of the Krylov space of the next s CG steps (2s-1 `MatMult()` and
   `PCApply()` calls, or one call of a matrix powers kernel the matrix provides), computes all the inner
   products those s steps need in ONE global reduction (a Gram matrix of 2s+1 vectors), and then performs the s
   steps on small coordinate vectors on the host. In exact arithmetic the iterates are those of `KSPCG`.

   Options Database Keys:
+  -ksp_cacg_s <4> - CG steps per outer iteration, 1..16
.  -ksp_cacg_basis <newton> - monomial, newton or chebyshev
.  -ksp_cacg_eigenvalues emin,emax - interval of the spectrum of M^{-1}A for the Newton and Chebyshev bases (default: estimated)
.  -ksp_cacg_eig_steps <n> - plain CG steps whose Ritz values give the estimate (default max(2s, 10))
.  -ksp_cacg_replace <true> - residual replacement, so that the true residual keeps converging
.  -ksp_cacg_true_residual <false> - check at convergence that b - Ax meets the tolerance too
.  -ksp_cacg_fused_gram <true> - the Gram matrices in one pass over the vectors (host loop or CUDA kernel) and one MPI_Allreduce
.  -ksp_cacg_fused_update <true> - on CUDA vectors with Jacobi or no preconditioner, the vector updates of an outer iteration in one device kernel
.  -ksp_cacg_lean_basis <true> - on CUDA vectors with Jacobi and a matrix powers kernel, keep the basis as W alone (M^{-1} W formed where read)
-  -ksp_cacg_matrix_powers <true> - use a matrix powers kernel: the one the matrix composes as "MatMatrixPowers_C", or KSPCACG's own for `MATSEQAIJCUSPARSE`

   Level: intermediate

   Notes:
   Left preconditioning only; norm types preconditioned (default), unpreconditioned, natural and none. The
   preconditioned and unpreconditioned norms need a second Gram matrix in the same reduction; the natural norm
   needs none. A matrix or preconditioner that is not positive definite stops the solve with
   `KSP_DIVERGED_INDEFINITE_MAT` or `KSP_DIVERGED_INDEFINITE_PC`; a basis too ill-conditioned for even one step
   with `KSP_DIVERGED_BREAKDOWN`. KSPCACG's CSR matrix powers kernel for `MATSEQAIJCUSPARSE` takes the matrix option
   -mat_cacg_csr_threads_per_row <n> (1, 2, 4, ..., 32; 0, the default: from the mean row length), read at its first
   call. See docs/cacg.md.

.seealso: `KSPCG`, `KSPPIPECG`, `KSPGROPPCG`, `KSPCACGSetS()`, `KSPCACGSetBasis()`, `KSPCACGSetEigenvalues()`, `KSPCACGSetReplace()`, `KSPCACGSetLeanBasis()`, `KSPCACGGetStatistics()`
M*/
static PetscErrorCode KSPCreate_CACG(KSP ksp)
{
  KSP_CACG *cg;

  PetscFunctionBegin;
  PetscCheck(!PetscDefined(USE_COMPLEX), PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "KSPCACG supports real scalars only; use KSPCG");
  PetscCall(PetscNew(&cg));
  cg->s       = 4;
  cg->basis   = KSP_CACG_BASIS_NEWTON;
  cg->replace = PETSC_TRUE;
  cg->usehook   = PETSC_TRUE;
  cg->fusedgram = PETSC_TRUE;
  cg->fusedupdate = PETSC_TRUE;
  cg->leanopt     = PETSC_TRUE;
  cg->anorm     = -1.0;
  ksp->data   = (void *)cg;

  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_PRECONDITIONED, PC_LEFT, 3));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_UNPRECONDITIONED, PC_LEFT, 2));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_NATURAL, PC_LEFT, 2));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_NONE, PC_LEFT, 1));

  ksp->ops->setup          = KSPSetUp_CACG;
  ksp->ops->solve          = KSPSolve_CACG;
  ksp->ops->reset          = KSPReset_CACG;
  ksp->ops->destroy        = KSPDestroy_CACG;
  ksp->ops->view           = KSPView_CACG;
  ksp->ops->setfromoptions = KSPSetFromOptions_CACG;
  ksp->ops->buildsolution  = KSPBuildSolution_CACG;
  ksp->ops->buildresidual  = KSPBuildResidualDefault;

  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetS_C", KSPCACGSetS_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGGetS_C", KSPCACGGetS_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetBasis_C", KSPCACGSetBasis_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGGetBasis_C", KSPCACGGetBasis_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetEigenvalues_C", KSPCACGSetEigenvalues_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGGetEigenvalues_C", KSPCACGGetEigenvalues_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetEigenvalueSteps_C", KSPCACGSetEigenvalueSteps_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetReplace_C", KSPCACGSetReplace_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetCheckTrueResidual_C", KSPCACGSetCheckTrueResidual_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetUseMatrixPowers_C", KSPCACGSetUseMatrixPowers_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetFusedGram_C", KSPCACGSetFusedGram_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetFusedUpdate_C", KSPCACGSetFusedUpdate_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGSetLeanBasis_C", KSPCACGSetLeanBasis_CACG));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCACGGetStatistics_C", KSPCACGGetStatistics_CACG));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPRegister_CACG_Private(void)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventRegister("CACGMatPowers", KSP_CLASSID, &KSP_CACG_MPK));
  PetscCall(PetscLogEventRegister("CACGGram", KSP_CLASSID, &KSP_CACG_Gram));
  PetscCall(PetscLogEventRegister("CACGGramCUDA", KSP_CLASSID, &KSP_CACG_GramCUDA));
#if defined(GPUKIT_HAVE_CUDA)
  PetscCall(CACGCSRRegisterEvents_Private(KSP_CLASSID));
#endif
  PetscCall(PetscLogEventRegister("CACGUpdate", KSP_CLASSID, &KSP_CACG_Update));
  PetscCall(PetscLogEventRegister("CACGUpdateCUDA", KSP_CLASSID, &KSP_CACG_UpdateCUDA));
  PetscCall(PetscLogEventRegister("CACGEigEstimate", KSP_CLASSID, &KSP_CACG_Eig));
  PetscCall(KSPRegister(KSPCACG, KSPCreate_CACG));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------------------- */
/* public functions                                                                                            */

/*@
  KSPCACGSetS - Sets the number of CG steps `KSPCACG` does per outer iteration, that is per global reduction

  Logically Collective

  Input Parameters:
+ ksp - the `KSPCACG` solver
- s   - the number of steps, 1..16 (default 4)

  Options Database Key:
. -ksp_cacg_s s - the number of steps

  Level: intermediate

  Notes:
  Each outer iteration costs 2s-1 products with A and M^{-1} (s+1 more than s CG steps) and one reduction,
  against 2s reductions for `KSPCG`. Larger s saves more reductions but the basis loses precision: with the
  Newton and Chebyshev bases s up to 8 converges like CG on well-behaved problems, the monomial basis only up
  to about 4. When the basis is too ill-conditioned for s steps, the method lowers s by itself (see
  `KSPCACGGetStatistics()`).

.seealso: `KSPCACG`, `KSPCACGGetS()`, `KSPCACGSetBasis()`
@*/
PetscErrorCode KSPCACGSetS(KSP ksp, PetscInt s)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveInt(ksp, s, 2);
  PetscTryMethod(ksp, "KSPCACGSetS_C", (KSP, PetscInt), (ksp, s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGGetS - Gets the number of CG steps `KSPCACG` does per outer iteration

  Not Collective

  Input Parameter:
. ksp - the `KSPCACG` solver

  Output Parameter:
. s - the number of steps

  Level: intermediate

.seealso: `KSPCACG`, `KSPCACGSetS()`
@*/
PetscErrorCode KSPCACGGetS(KSP ksp, PetscInt *s)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscUseMethod(ksp, "KSPCACGGetS_C", (KSP, PetscInt *), (ksp, s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetBasis - Sets the polynomial basis in which `KSPCACG` builds the s-step Krylov basis

  Logically Collective

  Input Parameters:
+ ksp   - the `KSPCACG` solver
- basis - `KSP_CACG_BASIS_MONOMIAL`, `KSP_CACG_BASIS_NEWTON` (default) or `KSP_CACG_BASIS_CHEBYSHEV`

  Options Database Key:
. -ksp_cacg_basis <monomial,newton,chebyshev> - the basis

  Level: intermediate

  Notes:
  The Newton basis shifts by Leja-ordered Ritz values, the Chebyshev basis uses an interval of the spectrum of
  M^{-1}A. Both take them from a few plain CG steps at the start of the first solve (they count as iterations)
  unless `KSPCACGSetEigenvalues()` gives an interval; the estimate is kept for later solves while the operators
  do not change.

.seealso: `KSPCACG`, `KSPCACGBasisType`, `KSPCACGSetEigenvalues()`, `KSPCACGSetEigenvalueSteps()`
@*/
PetscErrorCode KSPCACGSetBasis(KSP ksp, KSPCACGBasisType basis)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(ksp, basis, 2);
  PetscTryMethod(ksp, "KSPCACGSetBasis_C", (KSP, KSPCACGBasisType), (ksp, basis));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGGetBasis - Gets the polynomial basis of `KSPCACG`

  Not Collective

  Input Parameter:
. ksp - the `KSPCACG` solver

  Output Parameter:
. basis - the basis

  Level: intermediate

.seealso: `KSPCACG`, `KSPCACGSetBasis()`
@*/
PetscErrorCode KSPCACGGetBasis(KSP ksp, KSPCACGBasisType *basis)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscUseMethod(ksp, "KSPCACGGetBasis_C", (KSP, KSPCACGBasisType *), (ksp, basis));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetEigenvalues - Gives `KSPCACG` an interval that contains the spectrum of the preconditioned operator

  Logically Collective

  Input Parameters:
+ ksp  - the `KSPCACG` solver
. emin - the smallest eigenvalue of M^{-1}A (an estimate), > 0
- emax - the largest, > emin

  Options Database Key:
. -ksp_cacg_eigenvalues emin,emax - the interval

  Level: advanced

  Notes:
  The Chebyshev basis uses the interval; the Newton basis shifts by s Chebyshev points of it, in Leja order.
  Then no CG steps estimate the spectrum. emin = emax = 0 returns to the estimate.

.seealso: `KSPCACG`, `KSPCACGSetBasis()`, `KSPCACGGetEigenvalues()`
@*/
PetscErrorCode KSPCACGSetEigenvalues(KSP ksp, PetscReal emin, PetscReal emax)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveReal(ksp, emin, 2);
  PetscValidLogicalCollectiveReal(ksp, emax, 3);
  PetscTryMethod(ksp, "KSPCACGSetEigenvalues_C", (KSP, PetscReal, PetscReal), (ksp, emin, emax));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGGetEigenvalues - Gets the interval of the spectrum of M^{-1}A that `KSPCACG` uses: the given one, or the
  extreme Ritz values of its estimate (0, 0 before the first solve)

  Not Collective

  Input Parameter:
. ksp - the `KSPCACG` solver

  Output Parameters:
+ emin - the lower end (or `NULL`)
- emax - the upper end (or `NULL`)

  Level: advanced

.seealso: `KSPCACG`, `KSPCACGSetEigenvalues()`
@*/
PetscErrorCode KSPCACGGetEigenvalues(KSP ksp, PetscReal *emin, PetscReal *emax)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscUseMethod(ksp, "KSPCACGGetEigenvalues_C", (KSP, PetscReal *, PetscReal *), (ksp, emin, emax));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetEigenvalueSteps - Sets the number of plain CG steps whose Ritz values estimate the spectrum for the
  Newton and Chebyshev bases of `KSPCACG`

  Logically Collective

  Input Parameters:
+ ksp - the `KSPCACG` solver
- n   - the number of steps, 2..64, or 0 for the default max(2s, 10)

  Options Database Key:
. -ksp_cacg_eig_steps n - the number of steps

  Level: advanced

.seealso: `KSPCACG`, `KSPCACGSetBasis()`, `KSPCACGSetEigenvalues()`
@*/
PetscErrorCode KSPCACGSetEigenvalueSteps(KSP ksp, PetscInt n)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveInt(ksp, n, 2);
  PetscTryMethod(ksp, "KSPCACGSetEigenvalueSteps_C", (KSP, PetscInt), (ksp, n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetReplace - Turns residual replacement of `KSPCACG` on or off

  Logically Collective

  Input Parameters:
+ ksp - the `KSPCACG` solver
- flg - `PETSC_TRUE` (default) to replace

  Options Database Key:
. -ksp_cacg_replace <true,false> - residual replacement

  Level: advanced

  Notes:
  The residual that s-step CG updates drifts from b - Ax by rounding errors, more than in CG. The method keeps an
  estimate dev of ||b - Ax - r||: eps (||A|| ||x|| + ||r||) after r = b - Ax is computed, plus, per outer
  iteration, eps (||A|| ||x|| + ||A|| sum_i |x'_i| ||Y_i|| + sum_i |z'_i| ||W_i||) for the coordinates x', z' of
  the update in the basis columns Y_i, W_i = M Y_i. It replaces r by b - Ax (and z by M^{-1} r) at the end of an
  outer iteration when dev crossed sqrt(eps) ||r|| since the last one and grew by more than 10% since the last
  replacement (the criterion of van der Vorst and Ye, as Carson and Demmel use it for s-step methods). The norms
  come with the Gram matrix in the same reduction; ||A|| is `MatNorm(A, NORM_INFINITY)`, once per operator;
  a matrix without `MatNorm()` gets no replacement. A replacement costs one `MatMult()` and one `PCApply()`.

.seealso: `KSPCACG`, `KSPCACGSetCheckTrueResidual()`
@*/
PetscErrorCode KSPCACGSetReplace(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveBool(ksp, flg, 2);
  PetscTryMethod(ksp, "KSPCACGSetReplace_C", (KSP, PetscBool), (ksp, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetCheckTrueResidual - Makes `KSPCACG` check at the end of a solve that b - Ax meets the tolerance too

  Logically Collective

  Input Parameters:
+ ksp - the `KSPCACG` solver
- flg - `PETSC_TRUE` to check (default `PETSC_FALSE`)

  Options Database Key:
. -ksp_cacg_true_residual <true,false> - the check

  Level: advanced

  Notes:
  The check computes b - Ax (and M^{-1}(b - Ax) for the preconditioned and natural norms): one `MatMult()`, one
  `PCApply()` and one reduction. If the solve claims convergence but the true residual norm exceeds both
  10 max(rtol ||r_0||, abstol) and 10 times the final recursive norm, the reason becomes
  `KSP_DIVERGED_BREAKDOWN`. The norm is printed by -info (and in `KSPCACGGetStatistics()`).

.seealso: `KSPCACG`, `KSPCACGSetReplace()`
@*/
PetscErrorCode KSPCACGSetCheckTrueResidual(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveBool(ksp, flg, 2);
  PetscTryMethod(ksp, "KSPCACGSetCheckTrueResidual_C", (KSP, PetscBool), (ksp, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetUseMatrixPowers - Lets `KSPCACG` use (or not) a matrix powers kernel that the matrix provides

  Logically Collective

  Input Parameters:
+ ksp - the `KSPCACG` solver
- flg - `PETSC_TRUE` (default) to use one when the matrix composes "MatMatrixPowers_C", and KSPCACG's own for a
        `MATSEQAIJCUSPARSE` that composes none (CUDA builds)

  Options Database Key:
. -ksp_cacg_matrix_powers <true,false> - use the kernel

  Level: developer

  Notes:
  The kernel is used with `PCNONE` and `PCJACOBI`, without a null space; otherwise the basis is built with
  `MatMult()` and `PCApply()`. The contract of the kernel is in src/ksp/cacg/cacgimpl.h.

.seealso: `KSPCACG`
@*/
PetscErrorCode KSPCACGSetUseMatrixPowers(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveBool(ksp, flg, 2);
  PetscTryMethod(ksp, "KSPCACGSetUseMatrixPowers_C", (KSP, PetscBool), (ksp, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetFusedGram - Chooses how `KSPCACG` computes the local part of its Gram matrices

  Logically Collective

  Input Parameters:
+ ksp - the `KSPCACG` solver
- flg - `PETSC_TRUE` (default): one pass over the rows that computes every inner product of the outer iteration
        (each basis vector read once; a host loop for host vectors, one CUDA kernel and one device-to-host copy for
        CUDA vectors), then one `MPI_Allreduce()` of the packed sums; `PETSC_FALSE`: one `VecMDotBegin()` per basis
        vector, one `PetscCommSplitReductionBegin()` and the `VecMDotEnd()` calls, which PETSc packs into one
        `MPI_Allreduce()` as well

  Options Database Key:
. -ksp_cacg_fused_gram <true,false> - the fused pass

  Level: developer

  Notes:
  Both give one global reduction per outer iteration. Vectors in device memory of another kind than CUDA always
  take the `VecMDotBegin()` route.

.seealso: `KSPCACG`
@*/
PetscErrorCode KSPCACGSetFusedGram(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveBool(ksp, flg, 2);
  PetscTryMethod(ksp, "KSPCACGSetFusedGram_C", (KSP, PetscBool), (ksp, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetFusedUpdate - Chooses how `KSPCACG` forms the vectors at the end of an outer iteration on CUDA vectors

  Logically Collective

  Input Parameters:
+ ksp - the `KSPCACG` solver
- flg - `PETSC_TRUE` (default): when the vectors are CUDA vectors (`VECSEQCUDA`, `VECMPICUDA`) and the
        preconditioner is `PCNONE` or `PCJACOBI` (without a null space, not a transpose solve), one CUDA kernel reads
        each basis vector once and writes x += Y x', u = W p', r = W z', p = M^{-1} u, z = M^{-1} r in one pass;
        `PETSC_FALSE`: `VecMAXPY()`, `VecAXPBY()` and `PCApply()` calls

  Options Database Key:
. -ksp_cacg_fused_update <true,false> - the fused kernel

  Level: developer

  Notes:
  The two agree to rounding (the sums are taken in another order). The kernel is local to each rank: no
  communication, no copy between host and device. Host vectors and other preconditioners always take the
  `VecMAXPY()` route. `PCJACOBI` is applied as the diagonal the preconditioner gives a vector of ones.

.seealso: `KSPCACG`, `KSPCACGSetFusedGram()`
@*/
PetscErrorCode KSPCACGSetFusedUpdate(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveBool(ksp, flg, 2);
  PetscTryMethod(ksp, "KSPCACGSetFusedUpdate_C", (KSP, PetscBool), (ksp, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGSetLeanBasis - Chooses whether `KSPCACG` keeps its s-step basis as W alone on CUDA vectors with `PCJACOBI`

  Logically Collective

  Input Parameters:
+ ksp - the `KSPCACG` solver
- flg - `PETSC_TRUE` (default): where the vectors are CUDA vectors, the preconditioner is `PCJACOBI` (no null space,
        not a transpose solve), the matrix has a matrix powers kernel (`MATSGDIACUDA`, or `MATSEQAIJCUSPARSE` through
        `KSPCACG`'s own) and the fused Gram and update steps are on, the basis is stored as W only and Y = M^{-1} W is
        formed by each kernel where it reads it; `PETSC_FALSE`: both W and Y are stored

  Options Database Key:
. -ksp_cacg_lean_basis <true,false> - the lean basis

  Level: developer

  Notes:
  With s steps per outer iteration the basis has 2s + 1 columns; the lean basis writes 2s - 1 vectors fewer per outer
  iteration and the Gram and update kernels read 2s + 1 vectors fewer, which matters where the solve is bound by
  memory bandwidth (large grids on a GPU). Each entry of Y is the single product dinv[i] * W[j][i], as the stored Y
  would hold, so W and the iteration agree with the stored basis to rounding. `KSPCACGGetStatistics()` reports the
  outer iterations that used it.

.seealso: `KSPCACG`, `KSPCACGSetFusedUpdate()`, `KSPCACGSetFusedGram()`, `KSPCACGSetUseMatrixPowers()`
@*/
PetscErrorCode KSPCACGSetLeanBasis(KSP ksp, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  PetscValidLogicalCollectiveBool(ksp, flg, 2);
  PetscTryMethod(ksp, "KSPCACGSetLeanBasis_C", (KSP, PetscBool), (ksp, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  KSPCACGGetStatistics - Gets what the last `KSPSolve()` with `KSPCACG` did: outer iterations, reductions,
  residual replacements, truncations of the basis

  Not Collective

  Input Parameter:
. ksp - the `KSPCACG` solver

  Output Parameter:
. st - the statistics

  Level: advanced

.seealso: `KSPCACG`, `KSPCACGStatistics`
@*/
PetscErrorCode KSPCACGGetStatistics(KSP ksp, KSPCACGStatistics *st)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(ksp, KSP_CLASSID, 1);
  GpukitAssertPointer(st, 2);
  PetscUseMethod(ksp, "KSPCACGGetStatistics_C", (KSP, KSPCACGStatistics *), (ksp, st));
  PetscFunctionReturn(PETSC_SUCCESS);
}
