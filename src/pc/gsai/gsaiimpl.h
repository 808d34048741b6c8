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

typedef struct {
  /* options */
  PCGSAIType        type;
  PCGSAIPatternType pattern;
  PetscReal         tau;       /* threshold, in [0,1] */
  PetscInt          power;     /* >= 1 */
  PetscInt          maxnnz;    /* per row/column of M (diagonal included); 0: no cap */
  PCSide            side;      /* PC_LEFT, PC_RIGHT, or PC_SIDE_DEFAULT: -ksp_pc_side, else left */
  PetscBool         usedevice; /* build on the GPU when A is a CUDA matrix */
  PetscInt          workspace; /* device workspace limit in KiB; 0: automatic */

  /* what the last set-up used */
  PCSide         sideused;
  PetscBool      ondevice;
  Mat            M;            /* general: M; spd: G (M = G^T G) */
  Vec            work;         /* spd: G x */
  PetscInt       nnz;          /* global nonzeros of M (or G) */
  PetscInt       nfallback;    /* global count of rows/columns that fell back to the diagonal */
  PetscInt       maxn1, maxn2; /* largest local system (rows x columns), over all ranks */
  PetscLogDouble time[GSAI_NSTAGES], ttotal;
  char           conversion[256]; /* the conversion of A the set-up needed, if any ("" if none) */

  /* kept for SAME_NONZERO_PATTERN: the pattern, and on several ranks the index set of the rows fetched */
  PetscBool  havepattern;
  PCGSAIType ptype; /* type and side the pattern was made for */
  PCSide     pside;
  PetscInt   nloc;        /* local rows of N */
  PetscInt  *Jptr, *Jcol; /* pattern of the local rows of N, global sorted columns */
  IS         fetchis;     /* MPI: the rows of B the local problems need */
  Mat       *fetched;     /* MPI: those rows (MatCreateSubMatrices), reused */
  Mat        N;           /* right: N, with M = N^T */

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
  GSAI_FAIL_NOTSPD      /* spd: a_kk <= 0 */
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
PETSC_INTERN PetscErrorCode GSAIRowsFetch(Mat, IS, MatReuse, Mat **, GSAIRows *);

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

/* the pattern of local rows first .. first+nloc-1 of N from `levels` levels of the power: with final, to Jptr/Jcol;
   otherwise the rows the next level needs, to nneed/need (gsaipattern.c) */
PETSC_INTERN PetscErrorCode GSAIPatternRows(const PC_GSAI *, const GSAIRows *, PetscInt, PetscInt, PetscInt, PetscBool, PetscInt **, PetscInt **, PetscInt *, PetscInt **);
/* the values of the local rows of N on the pattern gs->Jptr/Jcol, the fallbacks, the largest problem and the first
   failure of this rank (gsaisolve.c) */
PETSC_INTERN PetscErrorCode GSAISolveRows(PC, const GSAIRows *, PetscInt, PetscScalar *, PetscInt *, PetscInt *, PetscInt *, GSAIFailure *);
/* the whole host set-up of M (gsaihost.c) */
PETSC_INTERN PetscErrorCode PCSetUp_GSAI_Host(PC, Mat, PetscBool);

/* the device set-up (gsaicuda.cu) of a one-rank device matrix (GpukitMatGetCaps(): device), read through its device CSR
   (converted to MATSEQAIJCUSPARSE first when it gives none) */
#if defined(GPUKIT_GSAICUDA_AVAILABLE)
PETSC_INTERN PetscErrorCode PCSetUp_GSAI_CUDA(PC, Mat, PetscBool);
PETSC_INTERN PetscErrorCode PCReset_GSAI_CUDA(PC);
#endif
