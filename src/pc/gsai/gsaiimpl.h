/*
   Private declarations of PCGSAI, the static sparse approximate inverse preconditioner (seed 004, chapter 5),
   shared by the PC (gsai.c), its host set-up (gsaihost.c: the driver; gsaipattern.c: the rows of B and the pattern;
   gsaisolve.c: the local problems and their failures) and its device set-up (gsaicuda.cu, gsaikernels.cu).

   Every flavour reduces to one computation: given a square matrix B and, for each row k of B, a sorted set
   J_k of columns (k in J_k), compute row k of a matrix N with pattern J_k:
     - general (least squares):  n_k = argmin || B(J_k, :)^T n - e_k ||_2, that is row k of N minimises
       ||N B - I||_F over the pattern. Left preconditioning: B = A, M = N (min ||MA - I||_F). Right
       preconditioning: B = A^T, M = N^T (min ||AM - I||_F, the seed's column-wise M).
     - spd (FSAI, Kolotilina-Yeremin): B = A, J_k holds only columns <= k, g = A(J_k, J_k)^{-1} e_k and
       row k of G is g / sqrt(g_k), so that diag(G A G^T) = 1; M = G^T G.
*/
#pragma once

#include <petsc/private/pcimpl.h>
#include <petsc/private/matimpl.h>
#include "gpukitimpl.h"
#include "gpukitmat.h"
#include "gpukittune.h"

/* the device set-up is written for real double precision and 32-bit indices */
#if defined(GPUKIT_HAVE_CUDA) && defined(PETSC_USE_REAL_DOUBLE) && !defined(PETSC_USE_COMPLEX) && !defined(PETSC_USE_64BIT_INDICES)
  #define GPUKIT_GSAICUDA_AVAILABLE 1
#endif

/* the stages of PCSetUp_GSAI() whose times PCView() prints */
typedef enum {
  GSAI_STAGE_ROWS,     /* getting the rows of A (or A^T) that the local problems need */
  GSAI_STAGE_PATTERN,  /* thresholds, powers, caps: the pattern of M (device: and the plan of the local problems) */
  GSAI_STAGE_SOLVE,    /* the local least-squares (or SPD) problems */
  GSAI_STAGE_ASSEMBLE, /* M as a PETSc matrix (device: the host's part, while the device solves) */
  GSAI_NSTAGES
} GSAIStage;

PETSC_INTERN const char *const GSAIStageNames[];

/* a local least-squares (or SPD) system whose smallest pivot is below this fraction of the largest falls back
   to the diagonal (documented in docs/gsai.md) */
#define GSAI_RCOND_TOL 1.0e-12

#define GSAI_TYPE_AUTO    PCGSAI_AUTO
#define GSAI_PATTERN_AUTO PCGSAI_PATTERN_AUTO
/* -pc_gsai_max_nnz default: the budget, ceil(budget * nnz(A) / n) per row (spd: ceil(budget * 0.75 (nnz(A) / n + 1)) per
   row of G), at most max(48, nnz(A) / n + 1) (gsai.c) */
#define GSAI_MAXNNZ_AUTO (-1)
#define GSAI_BUDGET_DEFAULT 2.0

typedef struct {
  /* options as given (auto values allowed) */
  PCGSAIType        typeopt;
  PCGSAIPatternType patternopt;
  PetscReal         tauopt;
  PetscInt          poweropt;
  PetscInt          maxnnzopt; /* GSAI_MAXNNZ_AUTO, 0 (no cap) or a cap */
  PetscBool         tauset, powerset;
  PetscReal         budget; /* the automatic cap per row: budget times the average nonzeros per row of A */

  /* the options the set-up uses, resolved from the above by GSAIResolveOptions() (gsai.c) at every set-up */
  PCGSAIType        type;
  PCGSAIPatternType pattern; /* never auto */
  PetscReal         tau;     /* threshold, in [0,1] */
  PetscInt          power;   /* >= 1 */
  PetscInt          maxnnz;  /* per row/column of M (diagonal included); 0: no cap */
  char              typewhy[160];   /* why the type was picked (auto) */
  char              patternwhy[160];/* how the pattern was picked (auto) and what was ignored */
  PetscInt          nzerodiag;      /* zero or missing diagonal entries of A (global) */
  PetscBool         devicefallback; /* the device set-up was skipped for the host's */
  Vec               dirichlet;      /* spd, A not symmetric: 1/a_pp on the rows p of A with only a diagonal entry, else 0 */
  Vec               dwork, dwork2;
  PetscInt          ndirichlet;
  Vec               rowscale;  /* spd, A = D_w S with S symmetric (gsaiscale.c): 1/w; G is built from S = D_w^{-1} A, M = G^T G D_w^{-1} */
  PetscReal         wrange[2]; /* the smallest and the largest w (geometric mean 1) */
  Mat               As;        /* S, kept for the next set-up */
  PetscBool         userowscale; /* PCGSAISetRowScaling() */
  PetscBool         asymknown, asym; /* GSAIResolveOptions() checked A's symmetry in this set-up, and its answer */
  PetscInt          ndense, *dense; /* the dense rows of B (global, sorted): more than denselimit nonzeros */
  PetscInt          denselimit;
  PCSide            side;      /* PC_LEFT, PC_RIGHT, or PC_SIDE_DEFAULT: -ksp_pc_side, else left */
  PetscBool         usedevice; /* build on the GPU when A is a CUDA matrix */
  PetscInt          workspace; /* device workspace limit in KiB; 0: automatic */

  /* what the last set-up used */
  PCSide         sideused;
  PetscBool      ondevice;
  Mat            M;            /* general: M; spd: G (M = G^T G) */
  void          *devm;         /* device set-up (several ranks: left, spd): M (or G) in the device CSR the set-up built, applied from there; M is made from it only when asked (gsaidevmcuda.cu) */
  Vec            work;         /* spd: G x */
  PetscInt       nnz;          /* global nonzeros of M (or G) */
  PetscInt       nfallback;    /* global count of rows/columns that fell back to the diagonal (or one entry) */
  PetscInt       nforced;      /* rows/columns whose pattern got the column structure of B (zero diagonal); -1: not counted */
  PetscInt       ncapped;      /* rows/columns whose pattern the cap cut; -1: not counted (device) */
  PetscInt       forcedcut;    /* rows/columns whose forced entries the cap cut (kept the largest |b_jk|) */
  PetscInt       maxn1, maxn2; /* largest local system (rows x columns), over all ranks */
  PetscLogDouble time[GSAI_NSTAGES], ttotal;
  char           conversion[256]; /* the conversion of A the set-up needed, if any ("" if none) */

  /* kept for SAME_NONZERO_PATTERN: the pattern, and on several ranks the index set of the rows fetched */
  PetscBool  havepattern;
  PCGSAIType ptype; /* type and side the pattern was made for */
  PCSide     pside;
  PetscInt   nloc;        /* local rows of N */
  PetscInt  *Jptr, *Jcol; /* pattern of the local rows of N, global sorted columns (Jcol NULL after a multi-rank device
                             set-up that split M on the device: J is kept there) */
  IS         fetchis;     /* MPI: the rows of B the set-up holds (host: those the local problems need; device: all within
                             the pattern's power of steps of the own rows) */
  Mat       *fetched;     /* MPI: those rows (MatCreateSubMatrices), reused; only the other ranks' rows where B is AIJ */
  Mat        N;           /* right: N, with M = N^T */

  /* the adaptive pattern (gsaiadaptive.c): options, and what the last set-up that made the pattern achieved */
  PetscInt  adsteps;     /* rounds of growth, >= 1 */
  PetscInt  adperstep;   /* entries added per row and round, >= 1 */
  PetscReal adtol;       /* target residual of a row, >= 0 */
  PetscBool adset;       /* set by the user (reported when the pattern is not adaptive) */
  PetscInt  admet;       /* rows whose final residual is at most adtol (global) */
  PetscInt  adcapped;    /* rows that stopped at the cap above adtol (global) */
  PetscInt  adrounds;    /* rounds actually needed (a round where no row grew ends the growth) */
  PetscReal adnnzratio;  /* nnz(M) / nnz(A) */
  PetscReal admaxres;    /* the largest final residual of a row (global) */
  PetscBool adhost;      /* A is a device matrix but the adaptive pattern was built on the host */

  void       *cuda;  /* device set-up data (gsaicuda.cu), NULL on the host */
  GpukitTuner tuner; /* device set-up: the block sizes of the large and huge classes (gsaicuda.cu), kept across set-ups */
} PC_GSAI;

/* a local problem with no diagonal fallback: the first one of a rank; GSAIAgreeFailure() (collective) makes it
   the first one of all ranks, GSAIRaiseFailure() raises it as the same error on every rank */
typedef enum {
  GSAI_FAIL_NONE,
  GSAI_FAIL_EMPTY,      /* row k of B has no nonzero */
  GSAI_FAIL_STRUCTURAL, /* index k is out of reach of the pattern (k not in I) */
  GSAI_FAIL_SINGULAR,   /* singular local problem and b_kk = 0 */
  GSAI_FAIL_NOTSPD,     /* spd: a_kk <= 0 */
  GSAI_FAIL_CAPPED      /* k out of reach because the cap (-pc_gsai_max_nnz) cut the entries that reach it */
} GSAIFailureKind;

typedef struct {
  PetscInt  row;  /* global row of N, -1: none */
  PetscInt  kind; /* GSAIFailureKind */
  PetscReal value;
} GSAIFailure;

PETSC_INTERN PetscErrorCode GSAIAgreeFailure(PC, GSAIFailure *);
PETSC_INTERN PetscErrorCode GSAIRaiseFailure(PC, const GSAIFailure *);
/* the name of row k of B in messages: "row" or "column" */
PETSC_INTERN const char *GSAIWhat(const PC_GSAI *);

/* the spd type's entry (i,j) of S from a_ij and a_ji: sign(a_ij) min(|a_ij|, |a_ji|) when they have the same sign, else
   0 (gsaisolve.c; the device's SolveSPD() in gsaikernels.cu does the same) */
static inline PetscScalar GSAISymmetricEntry(PetscScalar aij, PetscScalar aji)
{
  const PetscReal x = PetscRealPart(aij), y = PetscRealPart(aji);
  if (x > 0.0 && y > 0.0) return PetscMin(x, y);
  if (x < 0.0 && y < 0.0) return PetscMax(x, y);
  return 0.0;
}

/* ------------------------------------------------------------------------------------------------------
   The host set-up (gsaihost.c, gsaipattern.c, gsaisolve.c)
   ------------------------------------------------------------------------------------------------------ */

/* a local copy of some rows of B, with global column numbers and a compact numbering of those columns */
typedef struct {
  PetscInt     n;   /* rows held */
  PetscInt    *gid; /* their global numbers, increasing */
  PetscInt    *ptr; /* n+1 */
  PetscInt    *col; /* global columns, increasing within a row */
  PetscScalar *val;
  PetscInt     nu;    /* distinct numbers among the columns and gid */
  PetscInt    *ucol;  /* them, increasing: compact number -> global number */
  PetscInt    *lcol;  /* compact number of every col[] */
  PetscInt    *rowof; /* compact number -> row held, or -1 */
} GSAIRows;

/* R holds rows roff .. roff+n-1 of S (MatGetRow() numbering), which are rows gid[0..n-1] of B; takes gid */
PETSC_INTERN PetscErrorCode GSAIRowsCreate(Mat, PetscInt, PetscInt, PetscInt *, GSAIRows *);
PETSC_INTERN PetscErrorCode GSAIRowsDestroy(GSAIRows *);
/* the rows of B with the global numbers in an IS (sorted), from every rank: kept in *sub for reuse */
/* (own rows read from B's CSR arrays, only the other ranks' rows through MatCreateSubMatrices(), which *sub keeps) */
PETSC_INTERN PetscErrorCode GSAIRowsFetch(Mat, IS, MatReuse, Mat **, GSAIRows *);
PETSC_INTERN PetscErrorCode GSAIRowLengths(Mat, PetscInt *, PetscBool *);
/* the sorted distinct columns of the pattern (Jptr, Jcol) of local rows first .. first+nloc-1: the rows of B it reads */
PETSC_INTERN PetscErrorCode GSAIPatternColumns(PetscInt, PetscInt, const PetscInt *, const PetscInt *, PetscInt *, PetscInt **);

/* the row held for global row g (-1 if none) */
static inline PetscInt GSAIRowsFind(const GSAIRows *R, PetscInt g)
{
  PetscInt lo = 0, hi = R->n;
  while (lo < hi) {
    PetscInt mid = (lo + hi) / 2;
    if (R->gid[mid] < g) lo = mid + 1;
    else hi = mid;
  }
  return (lo < R->n && R->gid[lo] == g) ? lo : -1;
}

/* the compact number of global column g (-1 if none) */
static inline PetscInt GSAIRowsCompact(const GSAIRows *R, PetscInt g)
{
  PetscInt lo = 0, hi = R->nu;
  while (lo < hi) {
    PetscInt mid = (lo + hi) / 2;
    if (R->ucol[mid] < g) lo = mid + 1;
    else hi = mid;
  }
  return (lo < R->nu && R->ucol[lo] == g) ? lo : -1;
}

/* dense rows of B (more than gs->denselimit nonzeros, found by GSAIResolveOptions()) are handled apart: they are
   not expanded by the power pattern and do not enter the pattern of another row (but their own row is computed):
   one of them in J_k would make the local problem of row k as tall as the dense row is long */
static inline PetscBool GSAIIsDense(const PC_GSAI *gs, PetscInt g)
{
  PetscInt lo = 0, hi = gs->ndense;
  while (lo < hi) {
    PetscInt mid = (lo + hi) / 2;
    if (gs->dense[mid] < g) lo = mid + 1;
    else hi = mid;
  }
  return (lo < gs->ndense && gs->dense[lo] == g) ? PETSC_TRUE : PETSC_FALSE;
}

/* the pattern of local rows first .. first+nloc-1 of N from `levels` levels of the power: with final, to Jptr/Jcol;
   otherwise the rows the next level needs, to nneed/need (gsaipattern.c) */
/* with final, fptr/fcol (or NULL): per local row the forced entries, global rows j with b_jk != 0 (zero diagonal), with
   fval their |b_jk|; ncapped/nforcedcut: rows the cap cut, rows whose forced entries the cap cut */
PETSC_INTERN PetscErrorCode GSAIPatternRows(const PC_GSAI *, const GSAIRows *, PetscInt, PetscInt, PetscInt, PetscBool, const PetscInt *, const PetscInt *, const PetscReal *, PetscInt **, PetscInt **, PetscInt *, PetscInt **, PetscInt *, PetscInt *);
/* the values of the local rows of N on the pattern gs->Jptr/Jcol, the fallbacks, the largest problem and the first
   failure of this rank (gsaisolve.c) */
PETSC_INTERN PetscErrorCode GSAISolveRows(PC, const GSAIRows *, PetscInt, PetscScalar *, PetscInt *, PetscInt *, PetscInt *, GSAIFailure *);
/* the whole host set-up of M (gsaihost.c) */
PETSC_INTERN PetscErrorCode PCSetUp_GSAI_Host(PC, Mat, PetscBool);

/* the adaptive pattern (gsaiadaptive.c), host reference for 1 or more ranks: grows gs->Jptr/Jcol from the diagonal (and, general
   type, the entries that reach a zero diagonal) by the rows' residuals, sets gs->fetchis on several ranks and the counts; the
   values are then computed by PCSetUp_GSAI_Host(pc, A, PETSC_TRUE) on that pattern */
PETSC_INTERN PetscErrorCode GSAIAdaptivePattern(PC, Mat);
#define GSAI_ADAPTIVE_STEPS_DEFAULT   5
#define GSAI_ADAPTIVE_PERSTEP_DEFAULT 2
#define GSAI_ADAPTIVE_TOL_DEFAULT     0.1
#define GSAI_ADAPTIVE_RDROP           1.0e-10 /* |r_i| at most this is no candidate (rounding noise) */
PETSC_INTERN PetscLogEvent PC_GSAI_Adaptive, PC_GSAI_AdaptiveCUDA;
/* the device's adaptive pattern (gsaiadaptivecuda.cu) handles rows of at most this many entries and at most this many new
   entries per round (keep equal to gsaiadaptivekernels.h's GPUKIT_GSAI_ADAPT_MAXJ and _MAXSTEP) */
#define GSAI_ADAPTIVE_DEVICE_MAXJ    64
#define GSAI_ADAPTIVE_DEVICE_MAXSTEP 16

/* the device set-up (gsaicuda.cu) of a device matrix on one or more ranks (GpukitMatGetCaps(): device), read through its device CSR
   (converted to MATSEQAIJCUSPARSE first when it gives none) */
#if defined(GPUKIT_GSAICUDA_AVAILABLE)
PETSC_INTERN PetscErrorCode PCSetUp_GSAI_CUDA(PC, Mat, PetscBool);
PETSC_INTERN PetscErrorCode PCReset_GSAI_CUDA(PC);
/* the adaptive pattern and M on the device, one rank, left general or spd (gsaiadaptivecuda.cu) */
PETSC_INTERN PetscErrorCode PCSetUp_GSAI_AdaptiveCUDA(PC, Mat, PetscBool);
#endif

/* gsaiscale.c: A = D_w S with S symmetric and w > 0 (mirror boundaries, volume-scaled rows). -pc_gsai_type auto takes
   spd through it (and spd builds G from S) when max w / min w <= GSAI_ROWSCALE_RATIO (mirror boundaries: 2; constant-coefficient
   convection-diffusion is row-scaled symmetric too, with w growing exponentially across the domain: above the ratio
   the general type (auto) or the symmetric part (spd) stays the choice) */
#define GSAI_ROWSCALE_RATIO 100.0
PETSC_INTERN PetscErrorCode GSAIFindRowScaling(Mat, Vec *, PetscBool *, PetscReal[2]);

/* gsaihost.c: the forced entries of the local rows of B with a zero or missing diagonal (general type): the rows j with
   b_jk != 0 stored, from B^T, with |b_jk|, in column order; *nforced: the rows with a zero diagonal (also used by the
   adaptive pattern, gsaiadaptive.c) */
PETSC_INTERN PetscErrorCode GSAIForcedEntries(Mat, PetscInt, PetscInt, PetscInt **, PetscInt **, PetscReal **, PetscInt *);
