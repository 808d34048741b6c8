/* gpukit's generator of large sparse test matrices (tests/common/gkgen.c), shared by the benchmarks and the tests.

   Every case is built in memory from a name, a scale and a seed: the same (name, scale, seed) gives the same matrix
   on any number of MPI ranks (rows are split as PetscSplitOwnership() splits them; every rank keeps its own rows).
   Scales: 0 (tests: hundreds to a few thousand rows) .. GK_GEN_SCALE_DEFAULT (the benchmark set: 1M-60M nonzeros)
   .. GK_GEN_SCALE_MAX; one step changes the number of rows by about 8x. PETSc API only. */
#pragma once

#include <petscmat.h>

#define GK_GEN_SCALE_DEFAULT 3
#define GK_GEN_SCALE_MAX     4

/* one named case */
typedef struct {
  const char *name;      /* e.g. "stencil27" */
  const char *family;    /* e.g. "fem", "stencil", "graph", "powerlaw", "band", "circuit", "lp" */
  const char *desc;      /* one line */
  PetscBool   symmetric; /* symmetric pattern and values */
  PetscBool   spd;       /* symmetric, positive diagonal, strictly diagonally dominant: CG works */
  PetscBool   square;
  PetscInt    bs;        /* natural block size (3 for elasticity), else 1 */
} GKGenCase;

/* the local rows of a generated matrix: rows rstart..rstart+m-1 of M, columns (global numbering, sorted, no
   duplicates) of N; columns cstart..cstart+n-1 are the diagonal block's */
typedef struct {
  char        name[64];
  PetscInt    scale, seed;
  PetscInt    M, N, m, n, rstart, cstart, bs;
  PetscInt64 *ia; /* m+1 offsets */
  PetscInt   *ja;
  PetscScalar *a;
  PetscBool   symmetric, spd;
} GKCSR;

/* row-length statistics over all ranks */
typedef struct {
  PetscInt   rows, cols, maxlen, minlen, emptyrows;
  PetscInt64 nnz;
  PetscReal  mean, std, maxovermean;
} GKRowStats;

PETSC_EXTERN PetscErrorCode GKGenerateList(PetscInt *, const GKGenCase **);
PETSC_EXTERN PetscErrorCode GKGenerateLookup(const char[], const GKGenCase **);
PETSC_EXTERN PetscErrorCode GKGenerateCSR(MPI_Comm, const char[], PetscInt, PetscInt, GKCSR **);
PETSC_EXTERN PetscErrorCode GKCSRToMat(MPI_Comm, const GKCSR *, MatType, const char[], Mat *);
PETSC_EXTERN PetscErrorCode GKCSRDestroy(GKCSR **);
PETSC_EXTERN PetscErrorCode GKCSRRowStats(MPI_Comm, const GKCSR *, GKRowStats *);
PETSC_EXTERN PetscErrorCode GKGenerate(MPI_Comm, const char[], PetscInt, PetscInt, MatType, Mat *);
PETSC_EXTERN PetscErrorCode GKMatRowStats(Mat, GKRowStats *);
PETSC_EXTERN PetscErrorCode GKRowStatsPrint(MPI_Comm, const char[], const GKRowStats *, PetscBool);
PETSC_EXTERN PetscErrorCode GKGenerateUniform(PetscInt64, PetscInt64, PetscInt64, PetscReal *);
