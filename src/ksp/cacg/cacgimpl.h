/*
   KSPCACG: communication-avoiding (s-step) conjugate gradients. Private declarations. The files:
     cacg.c       the KSP type: create, options, view, the Set/Get functions and their man pages, registration
     cacgsolve.c  the algorithm: KSPSolve_CACG() and its steps, free of any backend code
     cacgbasis.c  the basis: its parameters from the spectrum estimate, and the small dense algebra of the inner steps
     cacggram.c   the fused reduction (the Gram matrices) and the per-solve backend table, host backend included
     cacgcuda.cu  the CUDA backend (Gram, lean Gram and update kernels of cacgkernels.cu and cacggramkernels.cu)
*/
#pragma once

#include <petsc/private/kspimpl.h>
#include "gpukitimpl.h"
#include "gpukitmat.h"
#include "gpukittune.h"

/* the run-time tuner of the outer iteration (docs/tuning.md, cacgsolve.c) */
#define CACG_TUNER "CACGStep"

/* s is 1..GPUKIT_CACG_MAX_S; the basis has m = 2s+1 columns */
#define GPUKIT_CACG_MAX_S   16
#define GPUKIT_CACG_MAX_M   (2 * GPUKIT_CACG_MAX_S + 1)
#define GPUKIT_CACG_MAX_EIG 64 /* most CG steps for the eigenvalue estimate */
/* inner products per outer iteration: two triangles of m x m, m column norms, the symmetry check, ||x|| */
#define GPUKIT_CACG_MAX_PAIRS (GPUKIT_CACG_MAX_M * (GPUKIT_CACG_MAX_M + 2) + 2)
/* sums of one reduction: the pairs above, or with the lean basis three m x m matrices and ||x|| */
#define GPUKIT_CACG_MAX_SUMS (3 * GPUKIT_CACG_MAX_M * GPUKIT_CACG_MAX_M + 1 > GPUKIT_CACG_MAX_PAIRS ? 3 * GPUKIT_CACG_MAX_M * GPUKIT_CACG_MAX_M + 1 : GPUKIT_CACG_MAX_PAIRS)

/* the largest relative rounding error accepted in an inner product computed from the Gram matrix */
#define CACG_LOSS 1.0e-8
/* the asymmetry of Y^T A Y, in units of its rounding scale eps * (|Y|^T |A Y|), above which A or M is not symmetric */
#define CACG_ASYM 1.0e6
/* the asymmetry relative to the symmetric part above which the solve stops */
#define CACG_ASYM_REL 0.25

/*
   The backend of one solve: the steps whose code depends on where the vectors live, chosen once at the start of
   KSPSolve_CACG() by CACGGetBackend() from the vectors' type (the host table in cacggram.c, the CUDA table from
   cacgcuda.cu). A NULL entry: the backend has no such kernel, and the solve takes the Vec/Mat route (VecMDot,
   VecMAXPY + PCApply) or does not use the lean basis.
*/
typedef struct {
  const char *name;   /* "host", "cuda" (for -info) */
  PetscBool   device; /* its Gram sums run on the device (counted in KSPCACGStatistics.devicegram) */
  /* the local sums of the np inner products cg->pa[p] . cg->pb[p] in one pass, into local[] (host memory); done =
     PETSC_FALSE (and nothing computed) when a vector is not of its kind */
  PetscErrorCode (*gram)(KSP, PetscInt np, PetscScalar local[], PetscBool *done);
  /* the lean basis's local sums: W^T D W, then W^T D^2 W if gd2, W^T W if g1 (full m x m each), then x.x if withx,
     D = diag(cg->dinv), into local[] (host); their number in *nsum */
  PetscErrorCode (*gramlean)(KSP, PetscInt m, PetscBool gd2, PetscBool g1, PetscBool withx, PetscScalar local[], PetscInt *nsum);
  /* step 4 in one pass: x += Y xc, Un = W pc, Rn = W zc and, with Jacobi (cg->dinv), Pn = dinv .* Un, Zn = dinv .* Rn;
     done as for gram. Called only for PCNONE (aliased) or Jacobi with cg->dinv, no null space, no transpose solve */
  PetscErrorCode (*update)(KSP, PetscInt m, const double xc[], const double pc[], const double zc[], PetscBool *done);
  /* frees what it keeps on the KSP (at KSPReset() and when a solve picks another backend) */
  PetscErrorCode (*reset)(KSP);
} CACGBackend;

/* KSPCACG hands the matrix powers kernel (gpukitmat.h) at most s new vectors per call */
#if GPUKIT_CACG_MAX_S > GPUKIT_MATPOWERS_MAX_K
  #error "GPUKIT_CACG_MAX_S exceeds what a matrix powers kernel takes (GPUKIT_MATPOWERS_MAX_K)"
#endif

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
  PetscInt         tuneopt;    /* -ksp_cacg_tune: -1 (default) on CUDA vectors, 0 never, 1 also on the host */

  /* the run-time tuner (cacgsolve.c): per outer iteration, s-step or plain CG steps, s, and the matrix powers kernel or
     s products; one rank only (every rank must take the same choice at the same iteration) */
  GpukitTuner tuner;
  PetscInt    tunes, tunehook; /* the s and whether a kernel existed when the tuner was made (its candidates) */
  PetscInt    tblock;          /* this outer iteration's s: with plain CG steps, how many of them */
  Mat              tuneA;      /* not referenced: the operator whose size class tunecsr holds */
  PetscObjectState tuneAstate; /* its nonzero state then */
  char             tunecsr[48];
  PetscBool   tuning;          /* this solve is tuned */
  PetscBool   tplain;          /* this outer iteration: plain CG steps */
  PetscBool   tproducts;       /* this outer iteration: the basis by s products, not the kernel */

  /* the spectrum estimate: Ritz values of the preconditioned operator, kept while the operators do not change */
  PetscInt         nritz;
  PetscReal        ritz[GPUKIT_CACG_MAX_EIG];
  Mat              estA, estP; /* not referenced: only compared */
  PetscObjectState estAstate, estPstate, estPCstate;
  PetscReal        lmin, lmax; /* the interval the basis uses */

  /* basis parameters for j = 0..scur-1: A rho_j = sigma_j rho_{j+1} + theta_j rho_j + gamma_j rho_{j-1} */
  PetscInt  scur; /* s in use (may drop below s when the basis loses precision) */
  PetscInt  scap; /* the largest s this solve may still use: s, lowered when the basis lost precision */
  PetscBool deltastale; /* a residual replacement renewed r and z: the next plain CG steps compute (r, z) first */
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
  PetscBool fusedupdate; /* step 4 in one pass by the backend's update (CUDA vectors) with Jacobi (cg->dinv) or no PC */
  const CACGBackend *be; /* this solve's backend (CACGGetBackend()) */
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

/* cacgbasis.c: the basis parameters and the small dense algebra in double (m x m row-major matrices) */
PETSC_INTERN PetscErrorCode CACGSetSpectrum(KSP);
PETSC_INTERN void           CACGChangeOfBasis(KSP_CACG *, PetscInt, double *);
PETSC_INTERN void           CACGTridiagEigenvalues(PetscInt, const double *, const double *, double *);
PETSC_INTERN void           CACGAsymmetry(PetscInt, PetscInt, const double *, const double *, const double *, double *, double *);
PETSC_INTERN double         CACGQuad(PetscInt, const double *, const double *, const double *);
PETSC_INTERN double         CACGScale(PetscInt, const double *, const double *);
PETSC_INTERN double         CACGLoss(double, double, double);

/* cacggram.c: the fused reduction and the backend */
typedef struct {
  PetscBool yy, ww, diag, x; /* the norm Gram Y^T Y / W^T W, column norms, ||x|| */
} CACGGramPlan;
PETSC_INTERN PetscErrorCode CACGGram(KSP, PetscInt, const CACGGramPlan *, PetscBool *);
PETSC_INTERN PetscErrorCode CACGGetBackend(Vec, const CACGBackend **);

/* cacgsolve.c */
PETSC_INTERN PetscErrorCode KSPSolve_CACG(KSP);
PETSC_INTERN PetscErrorCode KSPBuildSolution_CACG(KSP, Vec, Vec *);
PETSC_INTERN PetscErrorCode CACGFreeVectors(KSP);

#if defined(GPUKIT_HAVE_CUDA)
/* cacgcuda.cu: the CUDA backend for v, when v is a CUDA vector (VECSEQCUDA, VECMPICUDA) not bound to the CPU; else NULL */
PETSC_INTERN PetscErrorCode CACGGetBackendCUDA_Private(Vec, const CACGBackend **);
#endif
