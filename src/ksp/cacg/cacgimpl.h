/* KSPCACG: communication-avoiding (s-step) conjugate gradients. Private declarations. */
#pragma once

#include <petsc/private/kspimpl.h>
#include "gpukitimpl.h"

/* s is 1..GPUKIT_CACG_MAX_S; the basis has m = 2s+1 columns */
#define GPUKIT_CACG_MAX_S   16
#define GPUKIT_CACG_MAX_M   (2 * GPUKIT_CACG_MAX_S + 1)
#define GPUKIT_CACG_MAX_EIG 64 /* most CG steps for the eigenvalue estimate */
/* inner products per outer iteration: two triangles of m x m, m column norms, the symmetry check, ||x|| */
#define GPUKIT_CACG_MAX_PAIRS (GPUKIT_CACG_MAX_M * (GPUKIT_CACG_MAX_M + 2) + 2)
/* sums of one reduction: the pairs above, or with the lean basis three m x m matrices and ||x|| */
#define GPUKIT_CACG_MAX_SUMS (3 * GPUKIT_CACG_MAX_M * GPUKIT_CACG_MAX_M + 1 > GPUKIT_CACG_MAX_PAIRS ? 3 * GPUKIT_CACG_MAX_M * GPUKIT_CACG_MAX_M + 1 : GPUKIT_CACG_MAX_PAIRS)

/*
   The matrix powers hook, composed on a Mat under the name "MatMatrixPowers_C".

     PetscErrorCode MatMatrixPowers(Mat A, Vec dinv, PetscInt k, const PetscReal theta[], const PetscReal sigma[],
                                    const PetscReal gamma[], Vec V[], Vec W[])

   Builds k new vectors of a three-term polynomial basis in one call. On entry V[0] and W[0] hold the start
   vector y_0 and w_0 = M y_0, where M^{-1} = diag(dinv) (dinv == NULL: M = I, and then W == V, the same array).
   For j = 0, ..., k-1 it must compute
       W[j+1] = (A V[j] - theta[j] W[j] - gamma[j] W[j-1]) / sigma[j]      (no gamma term for j = 0)
       V[j+1] = dinv .* W[j+1]                                              (nothing when dinv == NULL)
   leaving V[0], W[0] unchanged. theta, sigma (never 0) and gamma are host arrays of length k; gamma[0] is 0.
   Lean basis: V may be NULL when dinv is not NULL. Then the basis is kept as W alone: the product input is
   y_j = dinv .* W[j], formed where it is read (each entry the single product dinv[i] * W[j][i], so W comes out as
   with V given), and no V vector is written. KSPCACG passes V = NULL only on CUDA vectors (-ksp_cacg_lean_basis).
   All vectors are compatible with A (MatCreateVecs); on a device type they are device vectors, and the hook
   should leave the results valid on the device. k is 1..GPUKIT_CACG_MAX_S.

   KSPCACG calls it only for PCNONE and PCJACOBI (any variant: dinv is the PC applied to a vector of ones),
   without a null space and not in a transpose solve; otherwise, or when -ksp_cacg_matrix_powers 0 is given, it
   uses s MatMult + PCApply calls (CACGPowersDefault() in cacg.c, the reference for any hook). A hook that
   exchanges a ghost region of depth k once, or fuses the k products, saves messages or memory traffic.
*/
typedef PetscErrorCode (*GpukitMatMatrixPowersFn)(Mat, Vec, PetscInt, const PetscReal[], const PetscReal[], const PetscReal[], Vec[], Vec[]);

typedef struct {
  /* options */
  PetscInt         s;          /* requested steps per outer iteration */
  KSPCACGBasisType basis;      /* polynomial basis */
  PetscBool        eiggiven;   /* emin, emax given by the user */
  PetscReal        emin, emax; /* user's interval of the spectrum of M^{-1}A */
  PetscInt         eigsteps;   /* CG steps for the estimate; 0: max(2s, 10) */
  PetscBool        replace;    /* residual replacement */
  PetscBool        truecheck;  /* check the true residual at convergence */
  PetscBool        usehook;    /* use the matrix's MatMatrixPowers_C when it has one */
  PetscBool        leanopt;    /* -ksp_cacg_lean_basis: keep the basis as W alone where everything allows it */

  /* the spectrum estimate: Ritz values of the preconditioned operator, kept while the operators do not change */
  PetscInt         nritz;
  PetscReal        ritz[GPUKIT_CACG_MAX_EIG];
  Mat              estA, estP; /* not referenced: only compared */
  PetscObjectState estAstate, estPstate, estPCstate;
  PetscReal        lmin, lmax; /* the interval the basis uses */

  /* basis parameters for j = 0..scur-1: A rho_j = sigma_j rho_{j+1} + theta_j rho_j + gamma_j rho_{j-1} */
  PetscInt  scur; /* s in use (may drop below s when the basis loses precision) */
  PetscReal theta[GPUKIT_CACG_MAX_S], sigma[GPUKIT_CACG_MAX_S], gamma[GPUKIT_CACG_MAX_S];
  PetscReal shifts[GPUKIT_CACG_MAX_S]; /* Newton: Leja-ordered shifts */

  /* vectors */
  PetscInt  sallocated; /* s the pools were made for; 0: none */
  PetscBool aliased;    /* W == Y: no preconditioner (M = I) and no null space */
  GpukitMatMatrixPowersFn hook; /* this solve's matrix powers kernel (CACGGetHook()), or NULL */
  PetscBool hookused;   /* the last CACGPowers() call went through a matrix powers kernel */
  PetscBool lean;       /* this solve keeps the basis as W alone: Y = dinv .* W is never stored (ypool NULL; Y[j] NULL but
                           Y[0] = P, Y[s+1] = Z); the hook gets V = NULL, the Gram and update kernels form Y where read */
  Vec       yt;         /* with the lean basis: work vector for Y x' outside the kernels */
  Vec      *ypool, *wpool; /* 2s-1 basis vectors each (wpool == ypool when aliased) */
  Vec       P, U, Z, R;    /* search direction p, u = M p, z = M^{-1} r, residual r (U == P, R == Z when aliased) */
  Vec       Pn, Un, Zn, Rn; /* the next ones */
  Vec       dinv;           /* diagonal preconditioner for the hook */
  Vec       Xb;             /* KSPBuildSolution() during the inner steps */
  Vec       Y[GPUKIT_CACG_MAX_M], W[GPUKIT_CACG_MAX_M];
  /* the inner products of the Gram step: pairs (pa, pb), their destinations (see CACGGramPairs()) */
  Vec     pa[GPUKIT_CACG_MAX_PAIRS], pb[GPUKIT_CACG_MAX_PAIRS];
  double *pdst[GPUKIT_CACG_MAX_PAIRS], *psym[GPUKIT_CACG_MAX_PAIRS];
  PetscBool fusedgram; /* all local sums in one pass (host loop or the device kernel) and one MPI_Allreduce */
  PetscBool fusedupdate; /* step 4 in one device kernel on CUDA vectors with Jacobi (cg->dinv) or no PC (cacgcuda.cu) */
  void     *gramwork;     /* device workspace of the Gram kernel (cacgcuda.cu) */
  long long gramworksize; /* its size in doubles */

  /* Gram matrices (m x m, row-major, symmetric) and column norms of the current basis */
  double      G[GPUKIT_CACG_MAX_M * GPUKIT_CACG_MAX_M];  /* W^T Y = Y^T M Y */
  double      Gn[GPUKIT_CACG_MAX_M * GPUKIT_CACG_MAX_M]; /* the norm Gram: Y^T Y (preconditioned) or W^T W (unpreconditioned) */
  double      B[GPUKIT_CACG_MAX_M * GPUKIT_CACG_MAX_M];  /* change of basis: K Y(:, j) = Y B(:, j) */
  double      ynrm[GPUKIT_CACG_MAX_M], wnrm[GPUKIT_CACG_MAX_M], xnrm;
  double      xc[GPUKIT_CACG_MAX_M]; /* coordinates of the update of x in Y during the inner steps */
  PetscInt    mcur;                  /* columns of Y in use */
  PetscBool   inner;                 /* inside the inner steps: the solution is x + Y xc */
  PetscScalar gbuf[GPUKIT_CACG_MAX_SUMS], gloc[GPUKIT_CACG_MAX_SUMS];

  /* residual replacement state */
  PetscReal anorm; /* ||A||_inf, < 0: unknown */
  Mat       anormA;
  PetscObjectState anormstate;
  double    dev, devinit, devprev, rprev, inc;
  PetscBool devreset;

  PetscReal         rnorm0; /* the norm at iteration 0 */
  double            asym;   /* the largest asymmetry of Y^T A Y seen in the last solve, in rounding units */
  double            g10;    /* w_1^T y_0, to compare with G(0,1) = w_0^T y_1 */
  KSPCACGStatistics stats;
} KSP_CACG;

PETSC_INTERN PetscLogEvent KSP_CACG_MPK, KSP_CACG_Gram, KSP_CACG_GramCUDA, KSP_CACG_Update, KSP_CACG_UpdateCUDA, KSP_CACG_Eig;

#if defined(GPUKIT_HAVE_CUDA)
/* cacgcuda.cu: the local sums of pa[p] . pb[p] by the device kernel when every vector is VECCUDA (done) */
PETSC_INTERN PetscErrorCode CACGGramCUDA_Private(KSP, PetscInt, const Vec[], const Vec[], PetscScalar[], PetscBool *);
PETSC_INTERN PetscErrorCode CACGGramCUDAFree_Private(KSP);
/* cacgcuda.cu: the lean basis's local sums (W^T D W, then W^T D^2 W if gd2, W^T W if g1, full m x m each, then x.x if
   withx) by the register-blocked device kernel (cacggramkernels.cu) into local[] (host); the number of sums in *nsum */
PETSC_INTERN PetscErrorCode CACGGramLeanCUDA_Private(KSP, PetscInt, PetscBool, PetscBool, PetscBool, PetscScalar[], PetscInt *);
/* cacgcuda.cu: x += Y xc, Un = W pc, Rn = W zc (Pn, Zn = dinv .* Un, Rn) by one device kernel when every vector is VECCUDA (done) */
PETSC_INTERN PetscErrorCode CACGUpdateCUDA_Private(KSP, PetscInt, const double[], const double[], const double[], PetscBool *);
/* cacgcsrcuda.cu: KSPCACG's own matrix powers kernel for MATSEQAIJCUSPARSE (the contract above). Exported only so
   that tests/gpu/cacg_csr_cuda.c can call it and set its threads per row: not public API */
PETSC_EXTERN PetscErrorCode CACGMatMatrixPowers_SeqAIJCUSPARSE(Mat, Vec, PetscInt, const PetscReal[], const PetscReal[], const PetscReal[], Vec[], Vec[]);
PETSC_INTERN PetscErrorCode CACGCSRRegisterEvents_Private(PetscClassId); /* its event, CACGMatPowCSR */
PETSC_EXTERN PetscErrorCode CACGCSRSetThreadsPerRow_Private(Mat, PetscInt); /* 0: from the mean row length (tests) */
#endif
