/*
   gpukit: GPU-oriented matrix, preconditioner and Krylov types for PETSc, loaded as a plugin.

   A PETSc program picks the types up at run time with
     -dll_append <prefix>/lib/libpetscgpukit.so -dm_mat_type sgdia ...
   or links the library and calls PetscGPUKitInitialize() after PetscInitialize().
*/
#pragma once

#include <petscmat.h>
#include <petscksp.h>

/* SETERRQ-style version of the library */
#define GPUKIT_VERSION_MAJOR 0
#define GPUKIT_VERSION_MINOR 1

/*MC
   MATSGDIA - "sgdia" - structured-grid diagonal storage for operators built on a `DMDA`.

   For a DMDA with a k-point stencil and d degrees of freedom per grid point, the matrix stores one dense
   d x d block per stencil point per owned grid point, as k*d columns of length (owned points * d),
   column-major, with no column indices. The matrix sizes itself from the `DMDA` attached with `MatSetDM()`
   (as `DMCreateMatrix()` does), so stock programs use it with `-dm_mat_type sgdia`.

   It resolves to `MATSEQSGDIA` on one MPI rank and `MATMPISGDIA` on more.

   Options Database Keys:
.  -mat_sgdia_drop_outside_stencil - drop (and count, see `-info`) entries outside the stencil instead of raising an error

   Level: beginner

.seealso: `MATSEQSGDIA`, `MATMPISGDIA`, `MATSGDIACUDA`, `DMCreateMatrix()`, `MatSetDM()`
M*/
#define MATSGDIA    "sgdia"
#define MATSEQSGDIA "seqsgdia"
#define MATMPISGDIA "mpisgdia"

/*MC
   MATSGDIACUDA - "sgdiacuda" - `MATSGDIA` with its values and kernels on an NVIDIA GPU.

   Requires a PETSc configured with CUDA (see `make petsc-cuda`). Use with `-dm_vec_type cuda`.

   Level: beginner

.seealso: `MATSGDIA`
M*/
#define MATSGDIACUDA    "sgdiacuda"
#define MATSEQSGDIACUDA "seqsgdiacuda"
#define MATMPISGDIACUDA "mpisgdiacuda"

/*MC
   MATAMB - "amb" - adaptive multi-level blocking (AMB) storage for general sparse matrices: AIJ plus an AMB copy of
   the values that the product uses (16-bit column segments, SELL-C-sigma chunks, blocks of b columns).

   It resolves to `MATSEQAMB` on one MPI rank and `MATMPIAMB` on more. The concrete types derive from AIJ (their
   names begin with "seqaij"/"mpiaij", as PETSc's own AIJ-derived types do, so every AIJ code path accepts them);
   "seqamb" and "mpiamb" are accepted by `MatSetType()` too. Options: `-mat_amb_b`, `-mat_amb_segment_width`,
   `-mat_amb_chunk_sort`, `-mat_amb_host_kernel` (docs/amb.md).

.seealso: `MATAMBCUDA`, `MATAIJ`
M*/
#define MATAMB        "amb"
#define MATSEQAMB     "seqaijamb"
#define MATMPIAMB     "mpiaijamb"
/*MC
   MATAMBCUDA - "ambcuda" - `MATAMB` with the AMB layout built and multiplied on an NVIDIA GPU.

.seealso: `MATAMB`
M*/
#define MATAMBCUDA    "ambcuda"
#define MATSEQAMBCUDA "seqaijambcuda"
#define MATMPIAMBCUDA "mpiaijambcuda"
/*MC
   MATDCSR - "dcsr" - dynamic CSR: rows made of up to K segments in one buffer, so that new nonzeros after assembly
   are inserted in place without a rebuild (docs/dcsr.md).

.seealso: `MATDCSRCUDA`, `MATAIJ`
M*/
#define MATDCSR        "dcsr"
#define MATSEQDCSR     "seqdcsr"
#define MATMPIDCSR     "mpidcsr"
/*MC
   MATDCSRCUDA - "dcsrcuda" - `MATDCSR` with its structure on an NVIDIA GPU: new entries travel, the matrix does not.

.seealso: `MATDCSR`, `MatDCSRSetValuesCOODevice()`
M*/
#define MATDCSRCUDA    "dcsrcuda"
#define MATSEQDCSRCUDA "seqdcsrcuda"
#define MATMPIDCSRCUDA "mpidcsrcuda"
/* the solver types */
#define PCGSAI     "gsai"
#define KSPCACG    "cacg"

PETSC_EXTERN PetscErrorCode PetscGPUKitInitialize(void);
PETSC_EXTERN PetscErrorCode PetscGPUKitGetVersion(PetscInt *, PetscInt *);

PETSC_EXTERN PetscErrorCode MatCreateSGDIA(DM, Mat *);
PETSC_EXTERN PetscErrorCode MatSGDIASetDropOutsideStencil(Mat, PetscBool);
PETSC_EXTERN PetscErrorCode MatSGDIAGetArray(Mat, PetscScalar **);
PETSC_EXTERN PetscErrorCode MatSGDIARestoreArray(Mat, PetscScalar **);
PETSC_EXTERN PetscErrorCode MatSGDIAGetStencil(Mat, PetscInt *, PetscInt *, const PetscInt **);

/* MATSGDIACUDA device assembly: the SG-DIA array on the device, same layout as MatSGDIAGetArray() */
PETSC_EXTERN PetscErrorCode MatSGDIAGetArrayCUDA(Mat, PetscScalar **);
PETSC_EXTERN PetscErrorCode MatSGDIARestoreArrayCUDA(Mat, PetscScalar **);
PETSC_EXTERN PetscErrorCode MatSGDIAGetArrayReadCUDA(Mat, const PetscScalar **);
PETSC_EXTERN PetscErrorCode MatSGDIARestoreArrayReadCUDA(Mat, const PetscScalar **);
PETSC_EXTERN PetscErrorCode MatSGDIAGetArrayWriteCUDA(Mat, PetscScalar **);
PETSC_EXTERN PetscErrorCode MatSGDIARestoreArrayWriteCUDA(Mat, PetscScalar **);

/* MATAMB */
PETSC_EXTERN PetscErrorCode MatAMBGetInfo(Mat, PetscInt *, PetscInt *, PetscBool *, PetscLogDouble *);

/* MATDCSR: defragmentation on demand; MATDCSRCUDA: a batch of entries that is already on the device */
PETSC_EXTERN PetscErrorCode MatDCSRDefragment(Mat);
PETSC_EXTERN PetscErrorCode MatDCSRGetInfo(Mat, PetscInt *, PetscInt *, PetscCount *, PetscCount *);
PETSC_EXTERN PetscErrorCode MatDCSRSetValuesCOODevice(Mat, PetscCount, const PetscInt[], const PetscInt[], const PetscScalar[], InsertMode);

/* PCGSAI (issue 6): public functions here */
/*E
   PCGSAIType - the kind of approximate inverse `PCGSAI` builds

$  `PCGSAI_GENERAL` - M minimises ||AM - I||_F column by column (right preconditioning) or ||MA - I||_F row by row (left)
$  `PCGSAI_SPD`     - M = G^T G with G lower triangular (factorised sparse approximate inverse, FSAI), SPD when A is; for `KSPCG`
$  `PCGSAI_AUTO`    - (default) `PCGSAI_SPD` when A is marked SPD (`MAT_SPD`) or is symmetric with a positive diagonal, else `PCGSAI_GENERAL`

   Level: intermediate

.seealso: `PCGSAI`, `PCGSAISetType()`
E*/
typedef enum {
  PCGSAI_GENERAL,
  PCGSAI_SPD,
  PCGSAI_AUTO
} PCGSAIType;
PETSC_EXTERN const char *const PCGSAITypes[];

/*E
   PCGSAIPatternType - the sparsity pattern of the approximate inverse built by `PCGSAI`

$  `PCGSAI_PATTERN_A`         - the stored pattern of A, plus the diagonal
$  `PCGSAI_PATTERN_THRESHOLD` - the entries of A with |a| > (1 - tau) max |a| over the same row (left) or column (right), plus the diagonal
$  `PCGSAI_PATTERN_POWER`     - the pattern of the k-th power of the thresholded matrix
$  `PCGSAI_PATTERN_AUTO`      - (default) a budgeted power pattern: power 2 of A, at most about budget x nnz(A)/n entries per row
$  `PCGSAI_PATTERN_ADAPTIVE`  - grown from the diagonal, in rounds, where the residual of each row of M is largest (SPAI-like; `PCGSAISetAdaptive()`), capped by the budget

   Level: intermediate

.seealso: `PCGSAI`, `PCGSAISetPattern()`, `PCGSAISetThreshold()`, `PCGSAISetPower()`
E*/
typedef enum {
  PCGSAI_PATTERN_A,
  PCGSAI_PATTERN_THRESHOLD,
  PCGSAI_PATTERN_POWER,
  PCGSAI_PATTERN_AUTO,
  PCGSAI_PATTERN_ADAPTIVE
} PCGSAIPatternType;
PETSC_EXTERN const char *const PCGSAIPatternTypes[];

PETSC_EXTERN PetscErrorCode PCGSAISetType(PC, PCGSAIType);
PETSC_EXTERN PetscErrorCode PCGSAIGetType(PC, PCGSAIType *);
PETSC_EXTERN PetscErrorCode PCGSAISetPattern(PC, PCGSAIPatternType);
PETSC_EXTERN PetscErrorCode PCGSAIGetPattern(PC, PCGSAIPatternType *);
PETSC_EXTERN PetscErrorCode PCGSAISetThreshold(PC, PetscReal);
PETSC_EXTERN PetscErrorCode PCGSAIGetThreshold(PC, PetscReal *);
PETSC_EXTERN PetscErrorCode PCGSAISetPower(PC, PetscInt);
PETSC_EXTERN PetscErrorCode PCGSAIGetPower(PC, PetscInt *);
PETSC_EXTERN PetscErrorCode PCGSAISetMaxNnz(PC, PetscInt);
PETSC_EXTERN PetscErrorCode PCGSAIGetMaxNnz(PC, PetscInt *);
PETSC_EXTERN PetscErrorCode PCGSAISetSide(PC, PCSide);
PETSC_EXTERN PetscErrorCode PCGSAIGetSide(PC, PCSide *);
PETSC_EXTERN PetscErrorCode PCGSAISetUseDevice(PC, PetscBool);
PETSC_EXTERN PetscErrorCode PCGSAIGetUseDevice(PC, PetscBool *);
PETSC_EXTERN PetscErrorCode PCGSAISetDeviceWorkspace(PC, PetscInt);
PETSC_EXTERN PetscErrorCode PCGSAIGetMatrix(PC, Mat *);
PETSC_EXTERN PetscErrorCode PCGSAIGetSetUpInfo(PC, PetscInt *, PetscInt *, PetscBool *);
PETSC_EXTERN PetscErrorCode PCGSAIGetSetUpTimes(PC, PetscReal *, PetscReal *, PetscReal *, PetscReal *, PetscReal *);
PETSC_EXTERN PetscErrorCode PCGSAISetBudget(PC, PetscReal);
PETSC_EXTERN PetscErrorCode PCGSAISetRowScaling(PC, PetscBool);
PETSC_EXTERN PetscErrorCode PCGSAIGetSetUpChoices(PC, PCGSAIType *, PCGSAIPatternType *, PetscReal *, PetscInt *, PetscInt *);
PETSC_EXTERN PetscErrorCode PCGSAISetAdaptive(PC, PetscInt, PetscInt, PetscReal);
PETSC_EXTERN PetscErrorCode PCGSAIGetAdaptive(PC, PetscInt *, PetscInt *, PetscReal *);
PETSC_EXTERN PetscErrorCode PCGSAIGetAdaptiveInfo(PC, PetscInt *, PetscInt *, PetscReal *, PetscReal *);

/* KSPCACG (issue 7): public functions here */
/*E
   KSPCACGBasisType - the polynomial basis in which `KSPCACG` builds the s-step Krylov basis

$  `KSP_CACG_BASIS_MONOMIAL`  - rho_j = K^j: no spectral information needed; loses precision quickly (s <= 5 on Poisson + Jacobi; above, KSPCACG lowers s)
$  `KSP_CACG_BASIS_NEWTON`    - rho_{j+1} = (K - theta_j) rho_j / sigma, with Leja-ordered Ritz values theta_j
$  `KSP_CACG_BASIS_CHEBYSHEV` - scaled and shifted Chebyshev polynomials of an interval [emin, emax] of the spectrum

   where K = M^{-1} A is the preconditioned operator.

   Level: intermediate

.seealso: `KSPCACG`, `KSPCACGSetBasis()`, `KSPCACGSetEigenvalues()`
E*/
typedef enum {
  KSP_CACG_BASIS_MONOMIAL,
  KSP_CACG_BASIS_NEWTON,
  KSP_CACG_BASIS_CHEBYSHEV
} KSPCACGBasisType;
PETSC_EXTERN const char *const KSPCACGBasisTypes[];

/*S
   KSPCACGStatistics - what the last `KSPSolve()` with `KSPCACG` did

   Level: advanced

.seealso: `KSPCACG`, `KSPCACGGetStatistics()`
S*/
typedef struct {
  PetscInt outer;        /* s-step outer iterations */
  PetscInt cgsteps;      /* plain CG iterations run for the eigenvalue estimate */
  PetscInt reductions;   /* global reductions the method issued (MPI_Allreduce on more than one rank) */
  PetscInt replacements; /* residual replacements */
  PetscInt truncations;  /* outer iterations ended early because the basis lost precision */
  PetscInt direct;       /* outer iterations that computed their last inner products directly */
  PetscInt s;            /* s in use at the end (s, or less after truncations) */
  PetscInt  truefail;    /* convergence claims the true residual did not confirm (-ksp_cacg_true_residual) */
  PetscInt  devicegram;  /* outer iterations whose Gram matrix the device kernel computed (CUDA vectors) */
  PetscInt  leanbasis;   /* outer iterations that kept the basis as W alone (KSPCACGSetLeanBasis()) */
  PetscInt  mpk;         /* outer iterations whose basis went to a matrix powers kernel (a hook, not KSPCACG's MatMult + PCApply loop) */
  PetscReal asymmetry;   /* largest |y^T A y' - y'^T A y| / (||y||_A ||y'||_A) beyond rounding over the basis vectors (0: symmetric) */
  PetscReal pcasymmetry; /* the same for M */
  PetscReal truenorm;    /* the true residual norm at the end (-ksp_cacg_true_residual; 0 without) */
  PetscInt  plainsteps;  /* plain CG steps (two reductions each) the run-time tuner ran or chose instead of s-step ones */
  PetscInt  products;    /* outer iterations whose basis the tuner built by s products although a matrix powers kernel exists */
} KSPCACGStatistics;

PETSC_EXTERN PetscErrorCode KSPCACGSetS(KSP, PetscInt);
PETSC_EXTERN PetscErrorCode KSPCACGGetS(KSP, PetscInt *);
PETSC_EXTERN PetscErrorCode KSPCACGSetBasis(KSP, KSPCACGBasisType);
PETSC_EXTERN PetscErrorCode KSPCACGGetBasis(KSP, KSPCACGBasisType *);
PETSC_EXTERN PetscErrorCode KSPCACGSetEigenvalues(KSP, PetscReal, PetscReal);
PETSC_EXTERN PetscErrorCode KSPCACGGetEigenvalues(KSP, PetscReal *, PetscReal *);
PETSC_EXTERN PetscErrorCode KSPCACGSetEigenvalueSteps(KSP, PetscInt);
PETSC_EXTERN PetscErrorCode KSPCACGSetReplace(KSP, PetscBool);
PETSC_EXTERN PetscErrorCode KSPCACGSetCheckTrueResidual(KSP, PetscBool);
PETSC_EXTERN PetscErrorCode KSPCACGSetUseMatrixPowers(KSP, PetscBool);
PETSC_EXTERN PetscErrorCode KSPCACGSetFusedGram(KSP, PetscBool);
PETSC_EXTERN PetscErrorCode KSPCACGSetFusedUpdate(KSP, PetscBool);
PETSC_EXTERN PetscErrorCode KSPCACGSetLeanBasis(KSP, PetscBool);
PETSC_EXTERN PetscErrorCode KSPCACGSetTune(KSP, PetscBool);
PETSC_EXTERN PetscErrorCode KSPCACGGetStatistics(KSP, KSPCACGStatistics *);
