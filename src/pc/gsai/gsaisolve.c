/*
   PCGSAI's host set-up, part 2: the local problems (Householder QR least squares, FSAI Cholesky) of the rows of N on
   their pattern, with the fallback to the diagonal, and the failures that have none: agreed on by every rank and raised
   as the same error everywhere. The device kernels (gsaikernels.cu) follow the same steps and the same fallback rule.
*/
#include "gsaiimpl.h"

/* ------------------------------------------------------------------------------------------------------
   Local problems, in double precision
   ------------------------------------------------------------------------------------------------------ */

/*
   min || C x - e_p ||_2 by Householder QR, C n1 x n2 column-major (overwritten), rhs work of n1.
   Returns PETSC_FALSE (x untouched) when p < 0, n1 < n2, or a pivot |R(c,c)| is at most GSAI_RCOND_TOL times
   the largest, or x is not finite. The device kernels (gsaikernels.cu) follow the same steps.
*/
static PetscBool GSAILeastSquares(PetscInt n1, PetscInt n2, PetscScalar *C, PetscInt p, PetscScalar *rhs, PetscScalar *diag, PetscScalar *x)
{
  PetscReal rmax = 0.0, rmin = PETSC_MAX_REAL;

  if (p < 0 || n1 < n2) return PETSC_FALSE;
  for (PetscInt i = 0; i < n1; i++) rhs[i] = 0.0;
  rhs[p] = 1.0;
  for (PetscInt c = 0; c < n2; c++) {
    PetscScalar   *v = C + c * n1 + c; /* the part of column c at and below the diagonal */
    PetscReal      s = 0.0, norm, alpha, vtv;
    const PetscInt m = n1 - c;

    for (PetscInt i = 0; i < m; i++) s += PetscRealPart(v[i] * v[i]);
    norm = PetscSqrtReal(s);
    if (norm == 0.0) return PETSC_FALSE;
    alpha = PetscRealPart(v[0]) >= 0.0 ? -norm : norm;
    vtv   = 2.0 * norm * (norm + PetscAbsScalar(v[0]));
    v[0] -= alpha; /* v = x - alpha e_1, H = I - 2 v v^T / (v^T v) */
    for (PetscInt c2 = c + 1; c2 < n2; c2++) {
      PetscScalar *w = C + c2 * n1 + c, d = 0.0;
      for (PetscInt i = 0; i < m; i++) d += v[i] * w[i];
      d *= 2.0 / vtv;
      for (PetscInt i = 0; i < m; i++) w[i] -= d * v[i];
    }
    {
      PetscScalar *w = rhs + c, d = 0.0;
      for (PetscInt i = 0; i < m; i++) d += v[i] * w[i];
      d *= 2.0 / vtv;
      for (PetscInt i = 0; i < m; i++) w[i] -= d * v[i];
    }
    diag[c] = alpha;
    rmax    = PetscMax(rmax, PetscAbsReal(alpha));
    rmin    = PetscMin(rmin, PetscAbsReal(alpha));
  }
  if (rmin <= GSAI_RCOND_TOL * rmax) return PETSC_FALSE;
  for (PetscInt c = n2 - 1; c >= 0; c--) {
    PetscScalar s = rhs[c];
    for (PetscInt c2 = c + 1; c2 < n2; c2++) s -= C[c2 * n1 + c] * rhs[c2];
    rhs[c] = s / diag[c];
  }
  for (PetscInt c = 0; c < n2; c++)
    if (PetscIsInfOrNanScalar(rhs[c])) return PETSC_FALSE;
  for (PetscInt c = 0; c < n2; c++) x[c] = rhs[c];
  return PETSC_TRUE;
}

/*
   g = S^{-1} e_last by Cholesky (S n x n column-major, lower triangle used, overwritten), then x = g / sqrt(g_last).
   Returns PETSC_FALSE when a pivot is at most GSAI_RCOND_TOL times its diagonal entry (or not positive), or x
   is not finite.
*/
static PetscBool GSAICholeskyRow(PetscInt n, PetscScalar *S, PetscScalar *x)
{
  for (PetscInt j = 0; j < n; j++) {
    PetscScalar d = S[j + j * n];
    for (PetscInt k = 0; k < j; k++) d -= S[j + k * n] * S[j + k * n];
    if (!(PetscRealPart(d) > GSAI_RCOND_TOL * PetscRealPart(S[j + j * n]))) return PETSC_FALSE;
    d            = PetscSqrtScalar(d);
    S[j + j * n] = d;
    for (PetscInt i = j + 1; i < n; i++) {
      PetscScalar s = S[i + j * n];
      for (PetscInt k = 0; k < j; k++) s -= S[i + k * n] * S[j + k * n];
      S[i + j * n] = s / d;
    }
  }
  /* L y = e_last: y = e_last / L_last; L^T g = y; x = g / sqrt(g_last) = g * L_last */
  {
    const PetscScalar llast = S[(n - 1) + (n - 1) * n];
    x[n - 1]                = 1.0 / llast; /* g_last * L_last, g_last = 1 / L_last^2 */
    for (PetscInt i = n - 2; i >= 0; i--) {
      PetscScalar s = 0.0;
      for (PetscInt k = i + 1; k < n; k++) s += S[k + i * n] * x[k];
      x[i] = -s / S[i + i * n];
    }
  }
  for (PetscInt i = 0; i < n; i++)
    if (PetscIsInfOrNanScalar(x[i])) return PETSC_FALSE;
  return PETSC_TRUE;
}

/* the name of row k of B in messages */
const char *GSAIWhat(const PC_GSAI *gs)
{
  if (gs->type == PCGSAI_SPD) return "row";
  return gs->sideused == PC_RIGHT ? "column" : "row";
}

/* values of the local rows of N on the pattern Jptr/Jcol; R holds every row of B in the pattern */
PetscErrorCode GSAISolveRows(PC pc, const GSAIRows *R, PetscInt first, PetscScalar *vals, PetscInt *nfallback, PetscInt *maxn1, PetscInt *maxn2, GSAIFailure *fail)
{
  PC_GSAI       *gs   = (PC_GSAI *)pc->data;
  PetscInt       nloc = gs->nloc, *mark, *list, cap = 0, nf = 0, m1 = 0, m2 = 0;
  PetscScalar   *C = NULL, *rhs = NULL, *diag = NULL;
  PetscLogDouble flops = 0;

  PetscFunctionBegin;
  fail->row = -1;
  PetscCall(PetscMalloc2(R->nu, &mark, R->nu, &list));
  for (PetscInt u = 0; u < R->nu; u++) mark[u] = -1;
  for (PetscInt i = 0; i < nloc; i++) {
    const PetscInt  gk = first + i, n2 = gs->Jptr[i + 1] - gs->Jptr[i];
    const PetscInt *J  = gs->Jcol + gs->Jptr[i];
    PetscScalar    *x  = vals + gs->Jptr[i];
    PetscInt        n1 = 0, rk = GSAIRowsFind(R, gk), p = -1;
    PetscBool       ok;

    PetscCheck(rk >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "row %" PetscInt_FMT " is not held", gk);
    if (gs->type == PCGSAI_GENERAL) {
      /* I: the columns of the rows J of B, in increasing order */
      for (PetscInt c = 0; c < n2; c++) {
        const PetscInt r = GSAIRowsFind(R, J[c]);
        PetscCheck(r >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "row %" PetscInt_FMT " is not held", J[c]);
        for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++)
          if (mark[R->lcol[e]] < 0) {
            mark[R->lcol[e]] = 0;
            list[n1++]       = R->lcol[e];
          }
      }
      PetscCall(PetscSortInt(n1, list));
      for (PetscInt t = 0; t < n1; t++) mark[list[t]] = t;
      if (n1 * n2 > cap || n1 > cap) {
        cap = PetscMax(2 * cap, PetscMax(n1 * n2, n1));
        PetscCall(PetscFree3(C, rhs, diag));
        PetscCall(PetscMalloc3(cap, &C, cap, &rhs, cap, &diag));
      }
      PetscCall(PetscArrayzero(C, n1 * n2));
      for (PetscInt c = 0; c < n2; c++) {
        const PetscInt r = GSAIRowsFind(R, J[c]);
        for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++) C[c * n1 + mark[R->lcol[e]]] = R->val[e];
      }
      {
        const PetscInt uk = GSAIRowsCompact(R, gk);
        p                 = (uk >= 0) ? mark[uk] : -1;
      }
      for (PetscInt t = 0; t < n1; t++) mark[list[t]] = -1;
      ok = GSAILeastSquares(n1, n2, C, p, rhs, diag, x);
      flops += 2.0 * n1 * n2 * n2 + 4.0 * n1 * n2;
      if (!ok) {
        /* the diagonal-only least-squares solution b_kk / ||b_k||^2 */
        PetscReal   s   = 0.0;
        PetscScalar bkk = 0.0;
        for (PetscInt e = R->ptr[rk]; e < R->ptr[rk + 1]; e++) {
          s += PetscRealPart(R->val[e] * R->val[e]);
          if (R->col[e] == gk) bkk = R->val[e];
        }
        if (s != 0.0 && p >= 0 && bkk == 0.0) {
          /* zero diagonal: the best one-entry solution, x_j = b_jk / ||b_j||^2 for the row j of the pattern with b_jk != 0
             and the largest b_jk^2 / ||b_j||^2 (the smallest residual 1 - b_jk^2 / ||b_j||^2) */
          PetscReal best = 0.0, bestx = 0.0;
          PetscInt  bestc = -1;
          for (PetscInt c = 0; c < n2; c++) {
            const PetscInt r = GSAIRowsFind(R, J[c]);
            PetscReal      sj = 0.0;
            PetscScalar    bjk = 0.0;
            for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++) {
              sj += PetscRealPart(R->val[e] * R->val[e]);
              if (R->col[e] == gk) bjk = R->val[e];
            }
            if (bjk != 0.0 && PetscRealPart(bjk * bjk) / sj > best) {
              best  = PetscRealPart(bjk * bjk) / sj;
              bestx = PetscRealPart(bjk) / sj;
              bestc = c;
            }
          }
          if (bestc >= 0) {
            for (PetscInt c = 0; c < n2; c++) x[c] = (c == bestc) ? bestx : 0.0;
            nf++;
            m1 = PetscMax(m1, n1);
            m2 = PetscMax(m2, n2);
            continue;
          }
        }
        if (s == 0.0 || p < 0 || bkk == 0.0) { /* no fallback: an error, raised on every rank by GSAIRaiseFailure() */
          if (fail->row < 0) {
            fail->row   = gk;
            fail->kind  = s == 0.0 ? GSAI_FAIL_EMPTY : (p < 0 ? (gs->maxnnz == 1 ? GSAI_FAIL_CAPPED : GSAI_FAIL_STRUCTURAL) : GSAI_FAIL_SINGULAR);
            fail->value = (PetscReal)gs->maxnnz;
          }
          continue;
        }
        for (PetscInt c = 0; c < n2; c++) x[c] = (J[c] == gk) ? bkk / s : 0.0;
        nf++;
      }
    } else {
      /* spd: S = A(J,J), lower triangle from rows J */
      if (n2 * n2 > cap) {
        cap = PetscMax(2 * cap, n2 * n2);
        PetscCall(PetscFree3(C, rhs, diag));
        PetscCall(PetscMalloc3(cap, &C, cap, &rhs, cap, &diag));
      }
      PetscCall(PetscArrayzero(C, n2 * n2));
      for (PetscInt c = 0; c < n2; c++) mark[GSAIRowsCompact(R, J[c])] = c;
      for (PetscInt c = 0; c < n2; c++) {
        const PetscInt r = GSAIRowsFind(R, J[c]);
        PetscCheck(r >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "row %" PetscInt_FMT " is not held", J[c]);
        for (PetscInt e = R->ptr[r]; e < R->ptr[r + 1]; e++) {
          const PetscInt t = mark[R->lcol[e]];
          if (t >= 0) C[c + t * n2] = R->val[e];
        }
      }
      for (PetscInt c = 0; c < n2; c++) mark[GSAIRowsCompact(R, J[c])] = -1;
      /* S = the symmetric matrix that A dominates entrywise, on J x J: s_ij = sign(a_ij) min(|a_ij|, |a_ji|) where
         a_ij and a_ji have the same sign, else 0. S = A when A is symmetric; when A is only nearly symmetric (Dirichlet
         rows that keep only their diagonal, as stock KSP ex45/ex66) the one-sided couplings drop out, so that M = G^T G
         does not mix the boundary and the interior and CG converges as with Jacobi (docs/gsai.md) */
      for (PetscInt c = 0; c < n2; c++)
        for (PetscInt t = 0; t < c; t++) C[c + t * n2] = GSAISymmetricEntry(C[c + t * n2], C[t + c * n2]);
      n1 = n2;
      ok = GSAICholeskyRow(n2, C, x);
      flops += n2 * n2 * n2 / 3.0 + 2.0 * n2 * n2;
      if (!ok) {
        PetscScalar akk = 0.0;
        for (PetscInt e = R->ptr[rk]; e < R->ptr[rk + 1]; e++)
          if (R->col[e] == gk) akk = R->val[e];
        if (!(PetscRealPart(akk) > 0.0)) {
          if (fail->row < 0) {
            fail->row   = gk;
            fail->kind  = GSAI_FAIL_NOTSPD;
            fail->value = PetscRealPart(akk);
          }
          continue;
        }
        for (PetscInt c = 0; c < n2; c++) x[c] = (J[c] == gk) ? 1.0 / PetscSqrtScalar(akk) : 0.0;
        nf++;
      }
    }
    m1 = PetscMax(m1, n1);
    m2 = PetscMax(m2, n2);
  }
  PetscCall(PetscFree3(C, rhs, diag));
  PetscCall(PetscFree2(mark, list));
  PetscCall(PetscLogFlops(flops));
  *nfallback = nf;
  *maxn1     = m1;
  *maxn2     = m2;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Collective: makes *fail the first failure (lowest row) over all ranks, on every rank (row -1: none) */
PetscErrorCode GSAIAgreeFailure(PC pc, GSAIFailure *fail)
{
  MPI_Comm  comm;
  PetscInt  row = fail->row < 0 ? PETSC_MAX_INT : fail->row, grow, kind, gkind;
  PetscReal value, gvalue;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  PetscCallMPI(MPI_Allreduce(&row, &grow, 1, MPIU_INT, MPI_MIN, comm));
  kind  = (fail->row >= 0 && fail->row == grow) ? fail->kind : 0;
  value = (fail->row >= 0 && fail->row == grow) ? fail->value : -PETSC_MAX_REAL;
  PetscCallMPI(MPI_Allreduce(&kind, &gkind, 1, MPIU_INT, MPI_MAX, comm));
  PetscCallMPI(MPI_Allreduce(&value, &gvalue, 1, MPIU_REAL, MPI_MAX, comm));
  fail->row   = grow == PETSC_MAX_INT ? -1 : grow;
  fail->kind  = gkind;
  fail->value = gvalue;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the error of a failure agreed on by GSAIAgreeFailure(), the same on every rank */
PetscErrorCode GSAIRaiseFailure(PC pc, const GSAIFailure *fail)
{
  PC_GSAI        *gs = (PC_GSAI *)pc->data;
  MPI_Comm        comm;
  const char     *what = GSAIWhat(gs);
  const PetscInt  grow = fail->row, gkind = fail->kind;
  const PetscReal gvalue = fail->value;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  if (grow < 0) PetscFunctionReturn(PETSC_SUCCESS);
  switch (gkind) {
  case GSAI_FAIL_EMPTY:
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "PCGSAI: %s %" PetscInt_FMT " of A has no nonzero entry, so A is singular and has no approximate inverse", what, grow);
  case GSAI_FAIL_STRUCTURAL:
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "PCGSAI: %s %" PetscInt_FMT " of M cannot be computed: A(%" PetscInt_FMT ",%" PetscInt_FMT ") is zero or not stored and no %s of A has a nonzero at index %" PetscInt_FMT ", so A is structurally singular and has no approximate inverse", what, grow, grow, grow, what, grow);
  case GSAI_FAIL_CAPPED:
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "PCGSAI: %s %" PetscInt_FMT " of M cannot be computed: A(%" PetscInt_FMT ",%" PetscInt_FMT ") is zero or not stored, and the cap -pc_gsai_max_nnz %g (PCGSAISetMaxNnz()) leaves no room in its pattern for the entries that reach index %" PetscInt_FMT "; raise the cap to 2 or more (or 0: none)", what, grow, grow, grow, (double)gvalue, grow);
  case GSAI_FAIL_SINGULAR:
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "PCGSAI: the local least-squares problem of %s %" PetscInt_FMT " of M is (numerically) singular and A(%" PetscInt_FMT ",%" PetscInt_FMT ") = 0, so the diagonal fallback does not exist either; A is singular or nearly so", what, grow, grow, grow);
  case GSAI_FAIL_NOTSPD:
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "PCGSAI type spd needs a symmetric positive definite matrix, but A(%" PetscInt_FMT ",%" PetscInt_FMT ") = %g is not positive; use -pc_gsai_type general", grow, grow, (double)gvalue);
  default:
    SETERRQ(comm, PETSC_ERR_PLIB, "PCGSAI: unknown failure %" PetscInt_FMT " in row %" PetscInt_FMT, gkind, grow);
  }
}
