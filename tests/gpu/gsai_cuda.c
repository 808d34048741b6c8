/*
   PCGSAI on the GPU against the host set-up: the same A as MATAIJ (host set-up) and as a CUDA matrix
   (MATAIJCUSPARSE, or MATSGDIACUDA from a DMDA with -dm_mat_type sgdiacuda; device set-up on one rank, host
   set-up on every rank, each rank fetching the rows of A it needs): M must have the same pattern and agree to 1e-12
   (relative, Frobenius), the fallback counts must agree, M must be a device matrix built on the device (on any number
   of ranks; -expect_device 0: on the host), and a BiCGStab (or CG for spd) solve with device vectors must converge,
   in nearly as many iterations as the same solve with the host set-up's M (-pc_gsai_use_device false: at most
   max(2, its/10) apart, its true residual at most 10 times the host's or 10 rtol). Every rank prints the CUDA device it
   uses. -reuse: new values with the same nonzero
   pattern (SAME_NONZERO_PATTERN), both set-ups again, compared again. -residual_check <rtol>: for matrices whose
   local least-squares problems are nearly singular (condition numbers near 1e12, where any two summation orders give
   different M), compare the residuals ||I - MA||_F (-pc_gsai_side left) or ||I - AM||_F instead of the values, to
   rtol relative; pattern, nnz and fallback counts are still compared exactly.

   The applications (PCApply(), PCApplyTranspose(), and for spd without row scaling PCApplySymmetricLeft/Right()) of a
   random vector are compared with the host set-up's (1e-8 relative, max norm; not with -residual_check), right after
   the set-up, while the device set-up holds M in its device CSR only (issue 18: no Mat made; several ranks: left and
   spd), and again after
   PCGSAIGetMatrix() made the Mat of M: the device applications before and after must agree to rounding (1e-13; the
   Mat must not change M). The line "gsai_cuda: set-up done" separates the two in the output (-info :pc greps).

   -nocopy (one rank): A is made valid on the device only (a MatScale() on the device, the host copy scaled alike), and
   every device set-up of A must read it where it is: A's offload mask stays PETSC_OFFLOAD_GPU (any host read of its
   values would copy it down), MATSGDIA's copy events (SGDIACopyToGPU, SGDIACopyFromGPU) are not logged, and the set-up
   copies nothing from the device (M stays in its device CSR; at most 1 KiB is allowed for counts a device CSR provider
   reads back, a copy of A's values would be 8 nnz(A) bytes). The Mat of M, made at the first PCGSAIGetMatrix(), copies
   M's structure only ((n + 1 + nnz(M)) PetscInt; none after a SAME_NONZERO_PATTERN set-up, which updates the Mat's
   values on the device). After the first set-up, M must also be the same, pattern and values bit for bit, as the device
   M built from A's MATAIJCUSPARSE copy.

   Problem: -f <file.mtx[.gz]> | -random <n> | -da <2|3> -n <n> [-beta b]. PCGSAI options from the command line
   (-pc_gsai_type, -pc_gsai_pattern, -pc_gsai_side, -pc_gsai_device_workspace <KiB> to force batches, ...).
*/
#include "gktest.h"
#include "../pc/gsaiprob.h"
#if PetscDefined(HAVE_CUDA)
  #include <petscdevice_cuda.h>      /* cudaGetDevice() */
  #include <petsc/private/matimpl.h> /* the matrix's offload mask */
#endif

static PetscErrorCode SetUpPC(Mat A, PC *pc)
{
  PetscFunctionBegin;
  PetscCall(PCCreate(PETSC_COMM_WORLD, pc));
  PetscCall(PCSetType(*pc, PCGSAI));
  PetscCall(PCSetOperators(*pc, A, A));
  PetscCall(PCSetFromOptions(*pc));
  PetscCall(PCSetUp(*pc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscReal residual_rtol = 0.0; /* -residual_check */
static PetscBool expect_device = PETSC_TRUE; /* -expect_device */
static PetscBool residual_left = PETSC_FALSE;

/* ||I - MA||_F (left) or ||I - AM||_F, all host AIJ */
static PetscErrorCode InverseResidual(Mat M, Mat A, PetscBool left, PetscReal *nrm)
{
  Mat R;

  PetscFunctionBegin;
  PetscCall(MatMatMult(left ? M : A, left ? A : M, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &R));
  PetscCall(MatShift(R, -1.0));
  PetscCall(MatNorm(R, NORM_FROBENIUS, nrm));
  PetscCall(MatDestroy(&R));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device M against the host M: the same pattern, row by row, and values within 1e-12 (relative, Frobenius), or
   with -residual_check the residuals of the two M */
static PetscErrorCode Compare(PC pcd, PC pch, Mat Ah, const char *what)
{
  Mat         Md, Mh, Pd, Ph;
  PetscInt    nnzd, nnzh, nfd, nfh;
  PetscBool   ond, onh, iscuda;
  PetscReal   nrm;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PCGSAIGetMatrix(pcd, &Md));
  PetscCall(PCGSAIGetMatrix(pch, &Mh));
  PetscCall(PCGSAIGetSetUpInfo(pcd, &nnzd, &nfd, &ond));
  PetscCall(PCGSAIGetSetUpInfo(pch, &nnzh, &nfh, &onh));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)Md, &iscuda, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
  PetscCheck(iscuda, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: M of a CUDA matrix is not a MATAIJCUSPARSE", what);
  PetscCheck(!onh, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the reference was built on the device", what);
  PetscCheck(ond == expect_device, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: M built on the %s on %d rank(s), expected the %s", what, ond ? "device" : "host", (int)size, expect_device ? "device" : "host");
  PetscCheck(nnzd == nnzh, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: nnz(M) %" PetscInt_FMT " on the device, %" PetscInt_FMT " on the host", what, nnzd, nnzh);
  PetscCheck(nfd == nfh, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: %" PetscInt_FMT " fallbacks on the device, %" PetscInt_FMT " on the host", what, nfd, nfh);
  /* patterns: |P(Md)| - |P(Mh)| with all values 1 must vanish */
  PetscCall(MatConvert(Md, MATAIJ, MAT_INITIAL_MATRIX, &Pd));
  PetscCall(MatConvert(Mh, MATAIJ, MAT_INITIAL_MATRIX, &Ph));
  if (residual_rtol > 0) {
    PetscReal rd, rh;
    PetscCall(InverseResidual(Pd, Ah, residual_left, &rd));
    PetscCall(InverseResidual(Ph, Ah, residual_left, &rh));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: ||I - %s||_F = %.10e (device M), %.10e (host M)\n", what, residual_left ? "MA" : "AM", (double)rd, (double)rh));
    PetscCheck(PetscAbsReal(rd - rh) <= residual_rtol * rh, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the residual of the device M differs from the host M's by %g relative (tolerance %g)", what, (double)(PetscAbsReal(rd - rh) / rh), (double)residual_rtol);
  } else PetscCall(GKCheckMatClose(Pd, Ph, 1e-12, what));
  {
    PetscInt rs, re;
    PetscCall(MatGetOwnershipRange(Pd, &rs, &re));
    for (PetscInt i = rs; i < re; i++) {
      PetscInt        nd, nh;
      const PetscInt *cd, *ch;
      PetscCall(MatGetRow(Pd, i, &nd, &cd, NULL));
      PetscCall(MatGetRow(Ph, i, &nh, &ch, NULL));
      PetscCheck(nd == nh, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: row %" PetscInt_FMT " of M has %" PetscInt_FMT " entries on the device, %" PetscInt_FMT " on the host", what, i, nd, nh);
      for (PetscInt e = 0; e < nd; e++) PetscCheck(cd[e] == ch[e], PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: row %" PetscInt_FMT " of M: column %" PetscInt_FMT " on the device, %" PetscInt_FMT " on the host", what, i, cd[e], ch[e]);
      PetscCall(MatRestoreRow(Pd, i, &nd, &cd, NULL));
      PetscCall(MatRestoreRow(Ph, i, &nh, &ch, NULL));
    }
  }
  PetscCall(MatAXPY(Pd, -1.0, Ph, SAME_NONZERO_PATTERN));
  PetscCall(MatNorm(Pd, NORM_FROBENIUS, &nrm));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: M built on the %s, %" PetscInt_FMT " nonzeros, %" PetscInt_FMT " fallbacks, ||M_dev - M_host||_F = %.3e\n", what, ond ? "device" : "host", nnzd, nfd, (double)nrm));
  PetscCall(MatDestroy(&Pd));
  PetscCall(MatDestroy(&Ph));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the CUDA device of every rank (PETSc's choice: rank modulo the visible devices, unless -device_select is given) */
static PetscErrorCode PrintDevices(void)
{
  PetscMPIInt rank, size;
  int         dev = -1, ndev = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
#if PetscDefined(HAVE_CUDA)
  PetscCallCUDA(cudaGetDevice(&dev));
  PetscCallCUDA(cudaGetDeviceCount(&ndev));
#endif
  PetscCall(PetscSynchronizedPrintf(PETSC_COMM_WORLD, "rank %d of %d: CUDA device %d of %d\n", (int)rank, (int)size, dev, ndev));
  PetscCall(PetscSynchronizedFlush(PETSC_COMM_WORLD, PETSC_STDOUT));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a BiCGStab (CG for spd) solve of A x = A 1 with PCGSAI, M built on the device or (usedevice false) on the host: the
   iterations and the true relative residual */
static PetscErrorCode SolveWith(Mat A, PCGSAIType type, PetscBool usedevice, PetscInt *its, PetscReal *res, PetscBool *ond, char vtype[], size_t vlen)
{
  KSP                ksp;
  PC                 pc;
  Vec                x, b, xex, r;
  KSPConvergedReason reason;
  PetscReal          nb;

  PetscFunctionBegin;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, type == PCGSAI_SPD ? KSPCG : KSPBCGS));
  PetscCall(KSPSetTolerances(ksp, 1e-7, PETSC_DEFAULT, PETSC_DEFAULT, 10000));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCGSAI));
  PetscCall(KSPSetFromOptions(ksp));
  if (!usedevice) PetscCall(PCGSAISetUseDevice(pc, PETSC_FALSE));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(x, &xex));
  PetscCall(VecDuplicate(x, &r));
  PetscCall(VecSet(xex, 1.0));
  PetscCall(MatMult(A, xex, b));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(PCGSAIGetSetUpInfo(pc, NULL, NULL, ond));
  { /* copied: the type name goes with x */
    VecType vt;
    PetscCall(VecGetType(x, &vt));
    PetscCall(PetscStrncpy(vtype, vt, vlen));
  }
  PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "the solve with the %s-built M did not converge: %s after %" PetscInt_FMT " iterations", usedevice ? "device" : "host", KSPConvergedReasons[reason], *its);
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAXPY(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, res));
  PetscCall(VecNorm(b, NORM_2, &nb));
  *res /= nb;
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xex));
  PetscCall(VecDestroy(&r));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -nocopy: what PETSc has logged of A's copies so far */
typedef struct {
  PetscLogDouble gtoc_sz;   /* bytes copied from the device, all objects */
  PetscInt       sgdia[2];  /* SGDIACopyToGPU, SGDIACopyFromGPU events */
} CopyState;

static PetscErrorCode GetCopyState(CopyState *cs)
{
  const char *names[2] = {"SGDIACopyToGPU", "SGDIACopyFromGPU"};

  PetscFunctionBegin;
  PetscCall(PetscMemzero(cs, sizeof(*cs)));
#if PetscDefined(HAVE_CUDA) && PetscDefined(USE_LOG)
  cs->gtoc_sz = petsc_gtoc_sz;
  for (int i = 0; i < 2; i++) {
    PetscLogEvent ev;
    PetscCall(PetscLogEventGetId(names[i], &ev));
    if (ev >= 0) PetscCall(GKLogEventCount(ev, &cs->sgdia[i]));
  }
#else
  (void)names;
  SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_SUP, "-nocopy needs a PETSc with CUDA and logging");
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if PetscDefined(HAVE_CUDA)
static const char *MaskName(PetscOffloadMask m)
{
  switch (m) {
  case PETSC_OFFLOAD_UNALLOCATED:
    return "UNALLOCATED";
  case PETSC_OFFLOAD_CPU:
    return "CPU";
  case PETSC_OFFLOAD_GPU:
    return "GPU";
  case PETSC_OFFLOAD_BOTH:
    return "BOTH";
  default:
    return "another state";
  }
}
#endif

/* A valid on the device only: MatScale() on the device writes it (Ah, its host copy, is scaled alike) */
static PetscErrorCode MakeDeviceOnly(Mat A, Mat Ah)
{
  MatType mt;

  PetscFunctionBegin;
  PetscCall(MatGetType(A, &mt));
  PetscCall(MatScale(A, 2.0));
  PetscCall(MatScale(Ah, 2.0));
#if PetscDefined(HAVE_CUDA)
  PetscCheck(A->offloadmask == PETSC_OFFLOAD_GPU, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "-nocopy: after MatScale() on the device the %s matrix should be valid on the device only, but its offload mask is %s", mt, MaskName(A->offloadmask));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* after a device set-up of pc on A (valid on the device only): no copy of A was made, and none of M (see the top of the
   file) */
static PetscErrorCode CheckNoCopy(PC pc, Mat A, const CopyState *c0, const char *what)
{
  CopyState      c1s, *c1 = &c1s;
  PetscBool      ond;
  PetscLogDouble extra;
  MatType        mt;

  PetscFunctionBegin;
  PetscCall(MatGetType(A, &mt));
  PetscCall(GetCopyState(c1));
  PetscCall(PCGSAIGetSetUpInfo(pc, NULL, NULL, &ond));
  PetscCheck(ond, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: M was not built on the device", what);
#if PetscDefined(HAVE_CUDA)
  PetscCheck(A->offloadmask == PETSC_OFFLOAD_GPU, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the set-up read the %s matrix on the host (its offload mask went from GPU to %s)", what, mt, MaskName(A->offloadmask));
#endif
  PetscCheck(c1->sgdia[0] == c0->sgdia[0] && c1->sgdia[1] == c0->sgdia[1], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the set-up copied the %s matrix: %" PetscInt_FMT " SGDIACopyToGPU and %" PetscInt_FMT " SGDIACopyFromGPU events", what, mt, c1->sgdia[0] - c0->sgdia[0], c1->sgdia[1] - c0->sgdia[1]);
  extra = c1->gtoc_sz - c0->gtoc_sz;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: A (%s) stays on the device, M too; %g bytes copied from the device\n", what, mt, (double)extra));
  PetscCheck(extra >= 0 && extra <= 1024, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: %g bytes were copied from the device, expected at most 1 KiB (M stays in its device CSR: no copy of its structure)", what, (double)extra);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -nocopy: the Mat of M asked for (PCGSAIGetMatrix()) after a device set-up: made the first time (newM), its structure is
   copied to the host, (n + 1 + nnz(M)) PetscInt; otherwise nothing is copied */
static PetscErrorCode CheckMatCopy(PC pc, PetscBool newM, const char *what)
{
  CopyState      c1s, *c1 = &c1s, c2;
  Mat            M;
  PetscInt       nnz, m;
  PetscLogDouble mbytes, got;

  PetscFunctionBegin;
  PetscCall(PCGSAIGetSetUpInfo(pc, &nnz, NULL, NULL));
  PetscCall(GetCopyState(c1));
  PetscCall(PCGSAIGetMatrix(pc, &M));
  PetscCall(GetCopyState(&c2));
  PetscCall(MatGetLocalSize(M, &m, NULL));
  mbytes = newM ? (PetscLogDouble)(m + 1 + nnz) * sizeof(PetscInt) : 0.0;
  got    = c2.gtoc_sz - c1->gtoc_sz;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: the Mat of M asked for: %g bytes copied from the device, M's structure %g\n", what, (double)got, (double)mbytes));
  PetscCheck(got >= mbytes && got <= mbytes + 1024, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: making the Mat of M copied %g bytes from the device, expected %s (%g bytes)", what, (double)got, newM ? "M's structure" : "nothing, the Mat being kept", (double)mbytes);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the applications of a PC to x: PCApply(), PCApplyTranspose(), and with sym PCApplySymmetricLeft/Right() (NULL otherwise) */
#define NAPPLY 4
static const char *const ApplyNames[NAPPLY] = {"PCApply", "PCApplyTranspose", "PCApplySymmetricLeft", "PCApplySymmetricRight"};

static PetscErrorCode ApplyAll(PC pc, Vec x, PetscBool sym, Vec y[])
{
  PetscFunctionBegin;
  for (int k = 0; k < NAPPLY; k++) {
    y[k] = NULL;
    if (k < 2 || sym) PetscCall(VecDuplicate(x, &y[k]));
  }
  PetscCall(PCApply(pc, x, y[0]));
  PetscCall(PCApplyTranspose(pc, x, y[1]));
  if (sym) {
    PetscCall(PCApplySymmetricLeft(pc, x, y[2]));
    PetscCall(PCApplySymmetricRight(pc, x, y[3]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DestroyAll(Vec y[])
{
  PetscFunctionBegin;
  for (int k = 0; k < NAPPLY; k++) PetscCall(VecDestroy(&y[k]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* whether the set-up's M has a symmetric form: spd, and A not row-scaled (PCView() says "row scaling:") */
static PetscErrorCode HasSymmetricForm(PC pc, PetscBool *sym)
{
  PCGSAIType took;
  char       view[8192];
  char      *found;

  PetscFunctionBegin;
  PetscCall(PCGSAIGetSetUpChoices(pc, &took, NULL, NULL, NULL, NULL));
  PetscCall(GKPCViewToString(pc, view, sizeof(view)));
  PetscCall(PetscStrstr(view, "row scaling:", &found));
  *sym = (took == PCGSAI_SPD && !found) ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device PC's applications yd[] of x against the host PC's (xh: x's values in a host vector), 1e-8 relative (max
   norm; skipped with -residual_check, whose M differ more) */
static PetscErrorCode CompareApplies(PC pcd, PC pch, Vec x, Vec xh, Vec yd[], const char *what)
{
  Vec       yh[NAPPLY];
  PetscBool sym = yd[2] ? PETSC_TRUE : PETSC_FALSE;
  PetscReal rel;
  char      msg[256];

  PetscFunctionBegin;
  (void)x;
  PetscCall(ApplyAll(pch, xh, sym, yh));
  for (int k = 0; k < NAPPLY; k++) {
    if (!yd[k]) continue;
    PetscCall(GKRelDiff(yd[k], yh[k], NORM_INFINITY, &rel));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %s, device set-up's M against the host's: %.3e relative\n", what, ApplyNames[k], (double)rel));
    if (residual_rtol > 0) continue;
    PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: %s with the device set-up's M against the host's", what, ApplyNames[k]));
    PetscCheck(rel <= 1e-8, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: %g relative (tolerance 1e-8)", msg, (double)rel);
  }
  PetscCall(DestroyAll(yh));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device PC's applications after PCGSAIGetMatrix() (ya) against those before (yb): the same to rounding */
static PetscErrorCode CompareBeforeAfter(Vec yb[], Vec ya[], const char *what)
{
  PetscReal rel;

  PetscFunctionBegin;
  for (int k = 0; k < NAPPLY; k++) {
    if (!yb[k]) continue;
    PetscCall(GKRelDiff(ya[k], yb[k], NORM_INFINITY, &rel));
    PetscCheck(rel <= 1e-13, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: %s after PCGSAIGetMatrix() differs from before by %g relative: making the Mat changed M?", what, ApplyNames[k], (double)rel);
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: the applications are the same before and after PCGSAIGetMatrix()\n", what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -nocopy: the device M of A (no copy of A) against the device M of A's MATAIJCUSPARSE copy, bit for bit */
static PetscErrorCode CompareWithAIJCUSPARSE(PC pcd, Mat A, const char *what)
{
  Mat       Ac, Md, Mc, Pd;
  PC        pcc;
  PetscInt  nnzd, nnzc;
  PetscBool ond, onc;
  MatType   mt;

  PetscFunctionBegin;
  PetscCall(MatGetType(A, &mt));
  PetscCall(MatConvert(A, MATAIJCUSPARSE, MAT_INITIAL_MATRIX, &Ac));
  PetscCall(SetUpPC(Ac, &pcc));
  PetscCall(PCGSAIGetSetUpInfo(pcd, &nnzd, NULL, &ond));
  PetscCall(PCGSAIGetSetUpInfo(pcc, &nnzc, NULL, &onc));
  PetscCheck(ond && onc, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: M built on the %s from A, on the %s from its MATAIJCUSPARSE copy; expected the device for both", what, ond ? "device" : "host", onc ? "device" : "host");
  PetscCheck(nnzd == nnzc, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: nnz(M) %" PetscInt_FMT " from the %s matrix, %" PetscInt_FMT " from its MATAIJCUSPARSE copy (their device CSRs differ?)", what, nnzd, mt, nnzc);
  PetscCall(PCGSAIGetMatrix(pcd, &Md));
  PetscCall(PCGSAIGetMatrix(pcc, &Mc));
  PetscCall(MatConvert(Mc, MATAIJ, MAT_INITIAL_MATRIX, &Pd));
  PetscCall(GKCheckMatClose(Md, Pd, 0.0, what));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: M from the %s matrix equals M from its MATAIJCUSPARSE copy (%" PetscInt_FMT " nonzeros)\n", what, mt, nnzd));
  PetscCall(MatDestroy(&Pd));
  PetscCall(PCDestroy(&pcc));
  PetscCall(MatDestroy(&Ac));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat        A, Ah;
  DM         da = NULL;
  PC         pcd, pch;
  char       file[PETSC_MAX_PATH_LEN] = "";
  PetscInt   nrand = 0, dim = 0, n = 16;
  PetscReal  beta  = 0.0;
  PetscBool  reuse = PETSC_FALSE, solve = PETSC_TRUE, nocopy = PETSC_FALSE, iscuda;
  PCGSAIType type, took;
  CopyState  c0;
  Vec        x, xh, yb[NAPPLY], ya[NAPPLY];
  PetscBool  sym = PETSC_FALSE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-random", &nrand, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-da", &dim, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-beta", &beta, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-reuse", &reuse, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-solve", &solve, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-nocopy", &nocopy, NULL));
  if (nocopy) PetscCall(PetscLogDefaultBegin()); /* the event counts */
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-residual_check", &residual_rtol, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_device", &expect_device, NULL));
  {
    char side[16] = "";
    PetscCall(PetscOptionsGetString(NULL, NULL, "-pc_gsai_side", side, sizeof(side), NULL));
    PetscCall(PetscStrcmp(side, "left", &residual_left));
  }

  /* A: a CUDA matrix; Ah: its host copy */
  if (dim) {
    PetscCall(GKDMDAOperator(PETSC_COMM_WORLD, dim, n, beta, &da, &A)); /* -dm_mat_type aijcusparse or sgdiacuda */
  } else {
    Mat A0;
    if (file[0]) PetscCall(GKLoadMatrixMarket(PETSC_COMM_WORLD, file, MATAIJ, &A0));
    else PetscCall(GKRandomMatrix(PETSC_COMM_WORLD, nrand ? nrand : 200, 4, PETSC_FALSE, &A0));
    PetscCall(MatConvert(A0, MATAIJCUSPARSE, MAT_INITIAL_MATRIX, &A));
    PetscCall(MatDestroy(&A0));
  }
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &iscuda, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, MATSEQSGDIACUDA, MATMPISGDIACUDA, ""));
  PetscCheck(iscuda, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "the test needs a CUDA matrix: with -da, give -dm_mat_type aijcusparse or sgdiacuda");
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &Ah));
  PetscCall(PrintDevices());
  if (nocopy) {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCheck(size == 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-nocopy is for the device set-up: one rank");
    PetscCall(MakeDeviceOnly(A, Ah));
    PetscCall(GetCopyState(&c0));
  }

  PetscCall(SetUpPC(A, &pcd));
  if (nocopy) PetscCall(CheckNoCopy(pcd, A, &c0, "set-up"));
  PetscCall(SetUpPC(Ah, &pch));
  { /* a random x (the same values on the host and the device) */
    PetscRandom rnd;
    PetscCall(MatCreateVecs(A, &x, NULL));
    PetscCall(MatCreateVecs(Ah, &xh, NULL));
    PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
    PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
    PetscCall(PetscRandomSetSeed(rnd, 5));
    PetscCall(PetscRandomSeed(rnd));
    PetscCall(VecSetRandom(xh, rnd));
    PetscCall(GKCopyValues(xh, x));
    PetscCall(PetscRandomDestroy(&rnd));
  }
  /* the applications while the device set-up holds M in its device CSR only, then after the Mat was made */
  PetscCall(HasSymmetricForm(pcd, &sym));
  PetscCall(ApplyAll(pcd, x, sym, yb));
  PetscCall(CompareApplies(pcd, pch, x, xh, yb, "set-up"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "gsai_cuda: set-up done, M applied, its Mat not asked for yet\n"));
  if (nocopy) PetscCall(CheckMatCopy(pcd, PETSC_TRUE, "set-up"));
  PetscCall(Compare(pcd, pch, Ah, "set-up"));
  PetscCall(ApplyAll(pcd, x, sym, ya));
  PetscCall(CompareBeforeAfter(yb, ya, "set-up"));
  PetscCall(DestroyAll(yb));
  PetscCall(DestroyAll(ya));
  if (nocopy) PetscCall(CompareWithAIJCUSPARSE(pcd, A, "set-up"));
  PetscCall(PCGSAIGetType(pcd, &type)); /* the type asked for (the solves below: CG for spd) */
  PetscCall(PCGSAIGetSetUpChoices(pcd, &took, NULL, NULL, NULL, NULL)); /* the type the set-up took (auto resolved) */

  if (reuse) { /* new values, same pattern: both PCs see SAME_NONZERO_PATTERN */
    Vec         r, rh;
    PetscRandom rnd;
    PetscCall(MatCreateVecs(A, &r, NULL));
    PetscCall(MatCreateVecs(Ah, &rh, NULL));
    PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
    PetscCall(PetscRandomSetInterval(rnd, 0.5, 4.0));
    PetscCall(PetscRandomSetSeed(rnd, 11));
    PetscCall(PetscRandomSeed(rnd));
    PetscCall(VecSetRandom(rh, rnd));
    PetscCall(VecCopy(rh, r));
    /* spd (asked for, or taken by auto): D A D keeps A symmetric; else D A */
    PetscCall(MatDiagonalScale(A, r, took == PCGSAI_SPD ? r : NULL));
    PetscCall(MatDiagonalScale(Ah, rh, took == PCGSAI_SPD ? rh : NULL));
    PetscCall(PCSetOperators(pcd, A, A));
    PetscCall(PCSetOperators(pch, Ah, Ah));
    if (nocopy) {
      PetscCall(MakeDeviceOnly(A, Ah)); /* MatDiagonalScale() may have left A on both sides */
      PetscCall(GetCopyState(&c0));
    }
    PetscCall(PCSetUp(pcd));
    if (nocopy) PetscCall(CheckNoCopy(pcd, A, &c0, "SAME_NONZERO_PATTERN set-up"));
    PetscCall(PCSetUp(pch));
    /* the new values in the device CSR, its transpose and the Mat made before (updated on the device, not made again) */
    PetscCall(ApplyAll(pcd, x, sym, yb));
    PetscCall(CompareApplies(pcd, pch, x, xh, yb, "SAME_NONZERO_PATTERN set-up"));
    PetscCall(DestroyAll(yb));
    if (nocopy) PetscCall(CheckMatCopy(pcd, PETSC_FALSE, "SAME_NONZERO_PATTERN set-up"));
    PetscCall(Compare(pcd, pch, Ah, "SAME_NONZERO_PATTERN set-up"));
    PetscCall(VecDestroy(&r));
    PetscCall(VecDestroy(&rh));
    PetscCall(PetscRandomDestroy(&rnd));
  }

  if (solve) { /* BiCGStab (CG for spd) with the device M and device vectors, against the same solve with the host's M */
    PetscInt  its, itsh;
    PetscReal res, resh;
    PetscBool ond, onh;
    char      vtype[64], vtypeh[64];

    PetscCall(SolveWith(A, type, PETSC_TRUE, &its, &res, &ond, vtype, sizeof(vtype)));
    PetscCall(SolveWith(A, type, PETSC_FALSE, &itsh, &resh, &onh, vtypeh, sizeof(vtypeh)));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "solve (%s, %s vectors, M built on the %s): %" PetscInt_FMT " iterations, relative residual %.3e; with the host set-up's M: %" PetscInt_FMT " iterations, %.3e\n", type == PCGSAI_SPD ? "cg" : "bcgs", vtype, ond ? "device" : "host", its, (double)res, itsh, (double)resh));
    PetscCheck(ond == expect_device && !onh, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "solve: M built on the %s (expected the %s), the reference on the %s", ond ? "device" : "host", expect_device ? "device" : "host", onh ? "device" : "host");
    PetscCheck(PetscAbsInt(its - itsh) <= PetscMax(2, itsh / 10), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "solve: %" PetscInt_FMT " iterations with the device set-up's M, %" PetscInt_FMT " with the host's: M differ by more than rounding?", its, itsh);
    PetscCheck(res <= 10 * PetscMax(resh, 1e-7), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "solve: true relative residual %g with the device set-up's M, %g with the host's", (double)res, (double)resh);
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "gsai_cuda: ok\n"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&xh));
  PetscCall(PCDestroy(&pcd));
  PetscCall(PCDestroy(&pch));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&Ah));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
