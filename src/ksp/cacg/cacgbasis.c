/*
   KSPCACG's basis: the parameters of the three-term recurrence A rho_j = sigma_j rho_{j+1} + theta_j rho_j +
   gamma_j rho_{j-1} (monomial, Newton with Leja-ordered Ritz values, Chebyshev on an interval of the spectrum), the
   change of basis B, and the small dense algebra of the inner steps on the host, in double: quadratic forms of the
   Gram matrix and their rounding scale, the eigenvalues of the Lanczos matrix of the estimate, the symmetry check.
   The algorithm that uses them is in cacgsolve.c.
*/
#include "cacgimpl.h"

/* ---------------------------------------------------------------------------------------------------------- */
/* small dense algebra on the host, in double                                                                  */

double CACGQuad(PetscInt m, const double *G, const double *a, const double *b)
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
double CACGScale(PetscInt m, const double *a, const double *d)
{
  double s = 0.0;

  for (PetscInt i = 0; i < m; i++) s += PetscAbsReal(a[i]) * d[i];
  return s;
}

/* relative rounding error of q = a^T G b computed from a Gram matrix whose entries are accurate to eps d_i d_j */
double CACGLoss(double q, double sa, double sb)
{
  const double eps = PETSC_MACHINE_EPSILON;

  if (q == 0.0) return (sa * sb == 0.0) ? 0.0 : PETSC_INFINITY;
  return eps * sa * sb / PetscAbsReal(q);
}

/* Eigenvalues of the symmetric tridiagonal matrix (diagonal a[0..n-1], off-diagonal b[0..n-2]), ascending, by
   bisection on Sturm counts */
void CACGTridiagEigenvalues(PetscInt n, const double *a, const double *b, double *ev)
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
void CACGAsymmetry(PetscInt m, PetscInt s, const double *G, const double *B, const double *d, double *round, double *rel)
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
PetscErrorCode CACGSetSpectrum(KSP ksp)
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
void CACGChangeOfBasis(KSP_CACG *cg, PetscInt s, double *B)
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

