/*
   PCGSAI: a static sparse approximate inverse preconditioner (seed 004, chapter 5). This file is the PC: creation,
   options, view, set-up dispatch, apply, the public functions and their man pages. The set-up algorithm is elsewhere:
   on the host in gsaipattern.c (rows of B, pattern), gsaisolve.c (local problems, failures) and gsaihost.c (the
   driver, one or more ranks); on the device, for a one-rank CUDA matrix, in gsaicuda.cu and gsaikernels.cu. Both
   compute the same M (see gsaiimpl.h for the formulation). The adaptive pattern: gsaiadaptive.c (host, the reference),
   gsaiadaptivecuda.cu and gsaiadaptivekernels.cu (device).
*/
#include <petsctime.h>
#include "gsaiimpl.h"
#include "gsaidevm.h"

const char *const PCGSAITypes[]        = {"general", "spd", "auto", "PCGSAIType", "PCGSAI_", NULL};
const char *const PCGSAIPatternTypes[] = {"a", "threshold", "power", "auto", "adaptive", "PCGSAIPatternType", "PCGSAI_PATTERN_", NULL};
const char *const GSAIStageNames[]     = {"rows", "pattern", "solve", "assemble"};

PetscLogEvent PC_GSAI_SetUp, PC_GSAI_Rows, PC_GSAI_Pattern, PC_GSAI_Solve, PC_GSAI_Assemble, PC_GSAI_PatternCUDA, PC_GSAI_DimsCUDA, PC_GSAI_SolveCUDA, PC_GSAI_AssembleCUDA;
PetscLogEvent PC_GSAI_Adaptive, PC_GSAI_AdaptiveCUDA;
PetscLogEvent PC_GSAI_ApplyCUDA, PC_GSAI_TransposeCUDA, PC_GSAI_MatCUDA;

/* ------------------------------------------------------------------------------------------------------
   Set-up: the side, then the host (gsaihost.c) or the device (gsaicuda.cu) builds M
   ------------------------------------------------------------------------------------------------------ */

/* the automatic pattern: the power pattern of this power and threshold (ParaSails' default pattern is that of the
   thresholded A^2), capped by the budget */
#define GSAI_AUTO_POWER 2
#define GSAI_AUTO_TAU   1.0
#define GSAI_AUTO_MAXCAP 48

/* whether A's entries can be read on the host without a copy from the device: not a device matrix, or one whose host
   copy is up to date (the GPU-only case is left alone, so that the device set-up never copies A to the host) */
static PetscErrorCode GSAIHostReadable(Mat A, PetscBool *flg)
{
  GpukitMatCaps caps;

  PetscFunctionBegin;
  PetscCall(GpukitMatGetCaps(A, &caps));
#if defined(PETSC_HAVE_DEVICE)
  *flg = (!caps.device || A->offloadmask != PETSC_OFFLOAD_GPU) ? PETSC_TRUE : PETSC_FALSE;
#else
  *flg = PETSC_TRUE;
  (void)caps;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Collective: is A symmetric? The flags when set, else its values (an AIJ copy for a type or device matrix that
   cannot say), |a_ij - a_ji| <= 1e-12 ||A||_inf. *how: "marked" or "checked" */
static PetscErrorCode GSAIIsSymmetric(Mat A, PetscBool *sym, const char **how)
{
  PetscBool     set, flg, isaij, readable;
  GpukitMatCaps caps;
  Mat           C = A;
  PetscReal     nrm;

  PetscFunctionBegin;
  PetscCall(MatIsSymmetricKnown(A, &set, &flg));
  if (set) {
    *sym = flg;
    *how = "marked";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(GSAIHostReadable(A, &readable));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &readable, 1, GPUKIT_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)A)));
  if (!readable) { /* values only on the device: not checked (set MAT_SYMMETRIC or MAT_SPD) */
    *sym = PETSC_FALSE;
    *how = "values on the device only, not checked: set MAT_SYMMETRIC or MAT_SPD";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(GpukitMatGetCaps(A, &caps));
  PetscCall(PetscObjectBaseTypeCompareAny((PetscObject)A, &isaij, MATSEQAIJ, MATMPIAIJ, ""));
  /* an AIJ-based device matrix (host copy up to date) is read in place */
  if (!isaij || !A->ops->issymmetric) PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &C));
  PetscCall(MatNorm(C, NORM_INFINITY, &nrm));
  PetscCall(MatIsSymmetric(C, 1e-12 * nrm, sym));
  if (C != A) PetscCall(MatDestroy(&C));
  *how = "checked";
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Collective: the type, pattern, threshold, power and cap of this set-up from the options (auto values), and the
   zero or missing diagonal entries of A */
/* A = D_w S with S symmetric and max w / min w <= maxratio: gs->rowscale := 1/w (gsaiscale.c), else NULL */
static PetscErrorCode GSAIRowScaling(PC pc, Mat A, PetscReal maxratio, PetscBool *found)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  *found = PETSC_FALSE;
  if (!gs->userowscale) PetscFunctionReturn(PETSC_SUCCESS);
  if (!A->ops->diagonalscale) {
    PetscCall(PetscInfo(pc, "A (%s) has no MatDiagonalScale(): no row scaling\n", ((PetscObject)A)->type_name));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(GSAIFindRowScaling(A, &gs->rowscale, found, gs->wrange));
  if (*found && !(gs->wrange[1] <= maxratio * gs->wrange[0])) {
    PetscCall(PetscInfo(pc, "A = D_w S with S symmetric, but max w / min w = %g exceeds %g: not used\n", (double)(gs->wrange[1] / gs->wrange[0]), (double)maxratio));
    PetscCall(VecDestroy(&gs->rowscale));
    *found = PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GSAIResolveOptions(PC pc, Mat A)
{
  PC_GSAI    *gs   = (PC_GSAI *)pc->data;
  MPI_Comm    comm = PetscObjectComm((PetscObject)pc);
  PetscInt    loc[2] = {0, 0}, glob[2], nloc, rstart;
  PetscReal   nnzA = 0.0, avg;
  PetscBool   prevscaled;
  const char *ign  = "";

  PetscFunctionBegin;
  /* the diagonal: zero (or missing) and nonpositive entries */
  PetscCall(MatGetOwnershipRange(A, &rstart, NULL));
  PetscCall(MatGetLocalSize(A, &nloc, NULL));
  if (A->ops->getdiagonal) {
    /* min(d) by a vector reduction, so that a device matrix's diagonal stays on the device in the common case (all
       entries positive: no zero, no nonpositive entry); otherwise the diagonal is read on the host and counted */
    Vec       d;
    PetscReal dmin;
    PetscCall(MatCreateVecs(A, NULL, &d));
    PetscCall(MatGetDiagonal(A, d));
    PetscCall(VecMin(d, NULL, &dmin));
    if (!(dmin > 0.0)) {
      const PetscScalar *a;
      PetscCall(VecGetArrayRead(d, &a));
      for (PetscInt i = 0; i < nloc; i++) {
        if (a[i] == 0.0) loc[0]++;
        if (!(PetscRealPart(a[i]) > 0.0)) loc[1]++;
      }
      PetscCall(VecRestoreArrayRead(d, &a));
      PetscCallMPI(MPI_Allreduce(loc, glob, 2, MPIU_INT, MPI_SUM, comm));
    } else glob[0] = glob[1] = 0;
    PetscCall(VecDestroy(&d));
  } else if (A->ops->getrow) {
    for (PetscInt i = 0; i < nloc; i++) {
      PetscInt           nc;
      const PetscInt    *c;
      const PetscScalar *v;
      PetscScalar        dii = 0.0;
      PetscCall(MatGetRow(A, rstart + i, &nc, &c, &v));
      for (PetscInt e = 0; e < nc; e++)
        if (c[e] == rstart + i) dii = v[e];
      PetscCall(MatRestoreRow(A, rstart + i, &nc, &c, &v));
      if (dii == 0.0) loc[0]++;
      if (!(PetscRealPart(dii) > 0.0)) loc[1]++;
    }
  }
  if (!A->ops->getdiagonal) PetscCallMPI(MPI_Allreduce(loc, glob, 2, MPIU_INT, MPI_SUM, comm));
  gs->nzerodiag = glob[0];

  /* the type */
  gs->typewhy[0] = 0;
  prevscaled     = gs->rowscale ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(VecDestroy(&gs->rowscale));
  gs->asymknown = PETSC_FALSE;
  if (gs->typeopt == GSAI_TYPE_AUTO) {
    PetscBool   set, flg, sym = PETSC_FALSE;
    const char *how = "";
    PetscCall(MatIsSPDKnown(A, &set, &flg));
    if (set && flg) {
      gs->type = PCGSAI_SPD;
      PetscCall(PetscSNPrintf(gs->typewhy, sizeof(gs->typewhy), "A is marked SPD (MAT_SPD)"));
    } else {
      PetscBool devonly;
      PetscCall(GSAIIsSymmetric(A, &sym, &how));
      gs->asymknown = PETSC_TRUE;
      gs->asym      = sym;
      PetscCall(PetscStrbeginswith(how, "values on the device only", &devonly));
      if (devonly && pc->setupcalled && pc->flag == SAME_NONZERO_PATTERN && gs->havepattern && !prevscaled) {
        /* new values of the same pattern, not readable on the host: the type stays (a SNES Jacobian's symmetry does not
           change between Newton steps; the device set-up does not copy A to the host to check it) */
        gs->type = gs->ptype;
        PetscCall(PetscSNPrintf(gs->typewhy, sizeof(gs->typewhy), "kept from the previous set-up (same nonzero pattern; the new values are on the device only, not checked)"));
      } else if (sym && !glob[1]) {
        gs->type = PCGSAI_SPD;
        PetscCall(PetscSNPrintf(gs->typewhy, sizeof(gs->typewhy), "A is symmetric (%s) with a positive diagonal", how));
      } else {
        PetscBool checked, found = PETSC_FALSE;
        PetscCall(PetscStrcmp(how, "checked", &checked));
        if (!sym && checked && !glob[1]) PetscCall(GSAIRowScaling(pc, A, GSAI_ROWSCALE_RATIO, &found));
        if (found) {
          gs->type = PCGSAI_SPD;
          PetscCall(PetscSNPrintf(gs->typewhy, sizeof(gs->typewhy), "A = D_w S with S symmetric (checked) and a positive diagonal"));
        } else {
          gs->type = PCGSAI_GENERAL;
          if (sym) PetscCall(PetscSNPrintf(gs->typewhy, sizeof(gs->typewhy), "A is symmetric (%s) but %" PetscInt_FMT " diagonal entries are not positive", how, glob[1]));
          else PetscCall(PetscSNPrintf(gs->typewhy, sizeof(gs->typewhy), "A is not symmetric (%s)", how));
        }
      }
    }
    PetscCall(PetscInfo(pc, "-pc_gsai_type auto picked %s: %s\n", PCGSAITypes[gs->type], gs->typewhy));
  } else {
    gs->type = gs->typeopt;
    if (gs->type == PCGSAI_SPD) { /* a nonsymmetric A: is it a row-scaled symmetric one? */
      PetscBool   sym, checked, found;
      const char *how;
      PetscCall(GSAIIsSymmetric(A, &sym, &how));
      gs->asymknown = PETSC_TRUE;
      gs->asym      = sym;
      PetscCall(PetscStrcmp(how, "checked", &checked));
      if (!sym && checked) PetscCall(GSAIRowScaling(pc, A, GSAI_ROWSCALE_RATIO, &found));
    }
  }

  /* the pattern */
  gs->patternwhy[0] = 0;
  gs->tau           = gs->tauopt;
  gs->power         = gs->poweropt;
  if (gs->patternopt == GSAI_PATTERN_AUTO) {
    gs->pattern = PCGSAI_PATTERN_POWER;
    if (!gs->tauset) gs->tau = GSAI_AUTO_TAU;
    if (!gs->powerset) gs->power = GSAI_AUTO_POWER;
  } else gs->pattern = gs->patternopt;
  if (gs->pattern == PCGSAI_PATTERN_A && (gs->tauset || gs->powerset)) ign = gs->tauset && gs->powerset ? "-pc_gsai_threshold and -pc_gsai_power have no effect with -pc_gsai_pattern a" : (gs->tauset ? "-pc_gsai_threshold has no effect with -pc_gsai_pattern a" : "-pc_gsai_power has no effect with -pc_gsai_pattern a");
  else if (gs->pattern == PCGSAI_PATTERN_THRESHOLD && gs->powerset) ign = "-pc_gsai_power has no effect with -pc_gsai_pattern threshold";
  else if (gs->pattern == PCGSAI_PATTERN_ADAPTIVE && (gs->tauset || gs->powerset)) ign = "-pc_gsai_threshold and -pc_gsai_power have no effect with -pc_gsai_pattern adaptive";
  else if (gs->pattern != PCGSAI_PATTERN_ADAPTIVE && gs->adset) ign = "-pc_gsai_adaptive_steps, _per_step and _tol (PCGSAISetAdaptive()) have no effect unless -pc_gsai_pattern adaptive";
  if (ign[0]) {
    PetscCall(PetscSNPrintf(gs->patternwhy, sizeof(gs->patternwhy), "%s", ign));
    PetscCall(PetscInfo(pc, "%s\n", ign));
  }

  /* the cap */
  if (gs->maxnnzopt == GSAI_MAXNNZ_AUTO) {
    if (A->ops->getinfo) {
      MatInfo info;
      PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
      nnzA = info.nz_used;
    } else {
      PetscInt c = 0, nc, g;
      for (PetscInt i = 0; i < nloc; i++) {
        PetscCall(MatGetRow(A, rstart + i, &nc, NULL, NULL));
        c += nc;
        PetscCall(MatRestoreRow(A, rstart + i, &nc, NULL, NULL));
      }
      PetscCallMPI(MPI_Allreduce(&c, &g, 1, MPIU_INT, MPI_SUM, comm));
      nnzA = (PetscReal)g;
    }
    avg = A->rmap->N ? nnzA / (PetscReal)A->rmap->N : 1.0;
    if (gs->type == PCGSAI_SPD) avg = 0.75 * (avg + 1.0); /* G holds about half of a row; 1.5 x the budget on it */
    /* budget x the average row, but at most max(48, the average row + 1): the local problems of a nearly dense A
       (n1 ~ n, n2 = the cap) cost n1 n2^2 each */
    gs->maxnnz = PetscMax(2, PetscMin((PetscInt)PetscCeilReal(gs->budget * avg), PetscMax(GSAI_AUTO_MAXCAP, (PetscInt)PetscCeilReal(avg) + 1)));
  } else gs->maxnnz = gs->maxnnzopt;
  if (gs->pattern == PCGSAI_PATTERN_A && gs->maxnnzopt == GSAI_MAXNNZ_AUTO) gs->maxnnz = 0; /* pattern a: the work is that of A already */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Collective: the dense rows of B (A, or A^T for the right type): more than max(64, 10 x the average) nonzeros,
   handled apart by the pattern (GSAIIsDense(), gsaiimpl.h) */
static PetscErrorCode GSAIFindDense(PC pc, Mat A)
{
  PC_GSAI      *gs    = (PC_GSAI *)pc->data;
  MPI_Comm      comm  = PetscObjectComm((PetscObject)pc);
  PetscBool     right = (gs->type == PCGSAI_GENERAL && gs->sideused == PC_RIGHT) ? PETSC_TRUE : PETSC_FALSE, isaij;
  Mat           C     = A;
  PetscInt      N = A->rmap->N, rstart, rend, *cnt, tot = 0, gtot, nd = 0, *ld, gnd;
  PetscMPIInt   size, *recv, *displ, nd32;
  GpukitMatCaps caps;
  PetscBool     readable, lengths = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscFree(gs->dense));
  gs->ndense = 0;
  PetscCall(GSAIHostReadable(A, &readable));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &readable, 1, GPUKIT_MPI_BOOL, MPI_LAND, comm));
  if (!readable) {
    PetscCall(PetscInfo(pc, "A's values are on the device only: dense rows are not looked for\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(GpukitMatGetCaps(A, &caps));
  PetscCall(PetscObjectBaseTypeCompareAny((PetscObject)A, &isaij, MATSEQAIJ, MATMPIAIJ, ""));
  if ((caps.device && !isaij) || !A->ops->getrow || (!isaij && right)) PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &C));
  PetscCall(MatGetOwnershipRange(C, &rstart, &rend));
  PetscCall(PetscCalloc1(right ? N : rend - rstart, &cnt));
  if (!right) PetscCall(GSAIRowLengths(C, cnt, &lengths));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt        nc;
    const PetscInt *c;
    if (lengths) {
      tot += cnt[i - rstart];
      continue;
    }
    PetscCall(MatGetRow(C, i, &nc, &c, NULL));
    if (right)
      for (PetscInt e = 0; e < nc; e++) cnt[c[e]]++;
    else cnt[i - rstart] = nc;
    tot += nc;
    PetscCall(MatRestoreRow(C, i, &nc, &c, NULL));
  }
  if (C != A) PetscCall(MatDestroy(&C));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (right && size > 1) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, cnt, (PetscMPIInt)N, MPIU_INT, MPI_SUM, comm));
  PetscCallMPI(MPI_Allreduce(&tot, &gtot, 1, MPIU_INT, MPI_SUM, comm));
  gs->denselimit = PetscMax(64, (PetscInt)PetscCeilReal(10.0 * (N ? (PetscReal)gtot / (PetscReal)N : 1.0)));
  PetscCall(PetscMalloc1(rend - rstart + 1, &ld));
  for (PetscInt i = rstart; i < rend; i++)
    if (cnt[right ? i : i - rstart] > gs->denselimit) ld[nd++] = i;
  PetscCall(PetscFree(cnt));
  PetscCall(PetscMPIIntCast(nd, &nd32));
  PetscCall(PetscMalloc2(size, &recv, size + 1, &displ));
  PetscCallMPI(MPI_Allgather(&nd32, 1, MPI_INT, recv, 1, MPI_INT, comm));
  displ[0] = 0;
  for (PetscMPIInt r = 0; r < size; r++) displ[r + 1] = displ[r] + recv[r];
  gnd = displ[size];
  if (gnd) {
    PetscCall(PetscMalloc1(gnd, &gs->dense));
    PetscCallMPI(MPI_Allgatherv(ld, nd32, MPIU_INT, gs->dense, recv, displ, MPIU_INT, comm));
    gs->ndense = gnd;
    PetscCall(PetscInfo(pc, "%" PetscInt_FMT " dense %ss of A (more than %" PetscInt_FMT " nonzeros) are kept out of the other %ss' patterns\n", gnd, right ? "column" : "row", gs->denselimit, right ? "column" : "row"));
  }
  PetscCall(PetscFree2(recv, displ));
  PetscCall(PetscFree(ld));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Collective: spd type, A not symmetric: the rows of A with only a diagonal entry (Dirichlet rows, whose columns still
   couple to other rows: A is then not symmetric, as in stock KSP ex45/ex66), to be solved exactly and eliminated by
   PCApply_GSAI() */
static PetscErrorCode GSAIFindDirichlet(PC pc, Mat A)
{
  PC_GSAI      *gs = (PC_GSAI *)pc->data;
  Mat           C  = A;
  GpukitMatCaps caps;
  PetscInt      rs, re, nd = 0;
  PetscScalar  *d;
  PetscBool     readable;

  PetscFunctionBegin;
  PetscCall(GSAIHostReadable(A, &readable));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &readable, 1, GPUKIT_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)pc)));
  if (!readable) {
    PetscCall(PetscInfo(pc, "PCGSAI type spd: A is not symmetric and its values are on the device only: rows with only a diagonal entry are not eliminated\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(GpukitMatGetCaps(A, &caps));
  if (caps.device || !A->ops->getrow) PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &C));
  PetscCall(MatCreateVecs(A, &gs->dirichlet, NULL));
  PetscCall(MatGetOwnershipRange(C, &rs, &re));
  PetscCall(VecGetArray(gs->dirichlet, &d));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt           nc, off = 0;
    const PetscInt    *c;
    const PetscScalar *v;
    PetscScalar        dii = 0.0;
    PetscCall(MatGetRow(C, i, &nc, &c, &v));
    for (PetscInt e = 0; e < nc; e++) {
      if (c[e] == i) dii = v[e];
      else if (v[e] != 0.0) off++;
    }
    PetscCall(MatRestoreRow(C, i, &nc, &c, &v));
    d[i - rs] = (!off && PetscRealPart(dii) > 0.0) ? 1.0 / dii : 0.0;
    if (!off && PetscRealPart(dii) > 0.0) nd++;
  }
  PetscCall(VecRestoreArray(gs->dirichlet, &d));
  if (C != A) PetscCall(MatDestroy(&C));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nd, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)pc)));
  gs->ndirichlet = nd;
  if (!nd) {
    PetscCall(VecDestroy(&gs->dirichlet));
    PetscCall(PetscInfo(pc, "PCGSAI type spd: A is not symmetric; G is built from the symmetric matrix that A dominates, CG may not converge\n"));
  } else {
    PetscCall(VecDuplicate(gs->dirichlet, &gs->dwork));
    PetscCall(VecDuplicate(gs->dirichlet, &gs->dwork2));
    PetscCall(PetscInfo(pc, "PCGSAI type spd: A is not symmetric; its %" PetscInt_FMT " rows with only a diagonal entry are solved exactly and eliminated in PCApply()\n", nd));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the side the KSP asked for: PCGSAISetSide(), else -ksp_pc_side in the options of the PC's prefix, else left */
static PetscErrorCode GSAIResolveSide(PC pc)
{
  PC_GSAI  *gs = (PC_GSAI *)pc->data;
  PCSide    side;
  PetscBool flg;

  PetscFunctionBegin;
  side = gs->side;
  if (side == PC_SIDE_DEFAULT) {
    PetscCall(PetscOptionsGetEnum(((PetscObject)pc)->options, ((PetscObject)pc)->prefix, "-ksp_pc_side", PCSides, (PetscEnum *)&side, &flg));
    if (!flg) side = PC_LEFT;
  }
  if (gs->type == PCGSAI_SPD) side = PC_SYMMETRIC; /* M = G^T G works on any side */
  PetscCheck(side != PC_SYMMETRIC || gs->type == PCGSAI_SPD, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP, "PCGSAI type general has no symmetric form; use -ksp_pc_side left or right, or -pc_gsai_type spd (M = G^T G, applied as G and G^T)");
  gs->sideused = side;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GSAIResetSetUp(PC_GSAI *gs)
{
  PetscFunctionBegin;
  PetscCall(MatDestroy(&gs->M));
#if defined(GPUKIT_GSAICUDA_AVAILABLE)
  PetscCall(GSAIDevMDestroy(&gs->devm));
#endif
  PetscCall(MatDestroy(&gs->N));
  PetscCall(VecDestroy(&gs->work));
  PetscCall(PetscFree(gs->Jptr));
  PetscCall(PetscFree(gs->Jcol));
  PetscCall(ISDestroy(&gs->fetchis));
  if (gs->fetched) PetscCall(MatDestroySubMatrices(1, &gs->fetched));
  gs->havepattern = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCReset_GSAI(PC);

static PetscErrorCode PCSetUp_GSAI(PC pc)
{
  PC_GSAI       *gs = (PC_GSAI *)pc->data;
  Mat            A  = pc->pmat;
  PetscBool      reuse, device = PETSC_FALSE;
  PetscMPIInt    size;
  PetscLogDouble t0, t1;
  GpukitMatCaps  caps;

  PetscFunctionBegin;
  PetscCheck(A, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCGSAI needs a matrix: call KSPSetOperators() or PCSetOperators() first");
  PetscCheck(A->assembled, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCGSAI needs an assembled matrix: call MatAssemblyBegin()/MatAssemblyEnd() on it before PCSetUp() or KSPSetUp()");
  PetscCheck(A->rmap->N == A->cmap->N && A->rmap->n == A->cmap->n, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_SIZ, "PCGSAI needs a square matrix with the same row and column layouts; A is %" PetscInt_FMT " x %" PetscInt_FMT " with %" PetscInt_FMT " x %" PetscInt_FMT " local",
             A->rmap->N, A->cmap->N, A->rmap->n, A->cmap->n);
  PetscCall(PetscLogEventBegin(PC_GSAI_SetUp, pc, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  PetscCall(GSAIResolveOptions(pc, A));
  PetscCall(GSAIResolveSide(pc));
  if (gs->rowscale) { /* A = D_w S: G is built from S = D_w^{-1} A (kept for the next set-up with the same pattern) */
    PetscBool same = PETSC_FALSE;
    if (gs->As && pc->setupcalled && pc->flag == SAME_NONZERO_PATTERN) same = PETSC_TRUE;
    if (same) PetscCall(MatCopy(A, gs->As, SAME_NONZERO_PATTERN));
    else {
      PetscCall(MatDestroy(&gs->As));
      PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &gs->As));
    }
    PetscCall(MatDiagonalScale(gs->As, gs->rowscale, NULL));
    PetscCall(MatSetOption(gs->As, MAT_SYMMETRIC, PETSC_TRUE));
    A = gs->As;
  } else PetscCall(MatDestroy(&gs->As));
  if (gs->pattern == PCGSAI_PATTERN_A) { /* M has A's pattern: a dense row of A costs only its own row of M, so nothing is set apart */
    PetscCall(PetscFree(gs->dense));
    gs->ndense = 0;
  } else if (!(pc->setupcalled && pc->flag == SAME_NONZERO_PATTERN && gs->havepattern)) PetscCall(GSAIFindDense(pc, A));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  /* what A can do, not its type name: a device matrix (M is one too) is set up on the device, on any number of ranks */
  PetscCall(GpukitMatGetCaps(A, &caps));
#if defined(GPUKIT_GSAICUDA_AVAILABLE)
  if (A->boundtocpu && caps.devicecsr) PetscCall(PetscInfo(pc, "A (%s) is bound to the CPU: building M on the host\n", ((PetscObject)A)->type_name));
  if (gs->usedevice && caps.device) device = PETSC_TRUE;
  if (size > 1) { /* the set-ups are collective: every rank takes the same path */
    PetscInt d = device ? 1 : 0, all;
    PetscCallMPI(MPI_Allreduce(&d, &all, 1, MPIU_INT, MPI_MIN, PetscObjectComm((PetscObject)A)));
    device = all ? PETSC_TRUE : PETSC_FALSE;
  }
  gs->devicefallback = PETSC_FALSE;
  if (device && ((gs->nzerodiag && gs->type == PCGSAI_GENERAL) || gs->ndense)) {
    /* the forced entries of rows with a zero diagonal (gsaihost.c) and the dense rows are handled on the host only */
    device             = PETSC_FALSE;
    gs->devicefallback = PETSC_TRUE;
    PetscCall(PetscInfo(pc, "A has %" PetscInt_FMT " zero or missing diagonal entries and %" PetscInt_FMT " dense rows: building M on the host\n", gs->nzerodiag, gs->ndense));
  }
#endif
  gs->adhost = PETSC_FALSE;
  if (gs->pattern == PCGSAI_PATTERN_ADAPTIVE && caps.device) {
    /* the device grows the pattern for the left general and the spd types with short rows (gsaiadaptivecuda.cu); the
       others are grown on the host (gsaiadaptive.c) and M is stored as a device matrix */
    const char    *why  = NULL;
    const PetscInt cap  = gs->maxnnz > 0 ? gs->maxnnz : A->rmap->N;
    const PetscInt room = PetscMin(cap, 1 + gs->adsteps * gs->adperstep);
  #if defined(GPUKIT_GSAICUDA_AVAILABLE)
    if (!device) why = gs->devicefallback ? "zero diagonal entries or dense rows" : (!gs->usedevice ? "-pc_gsai_use_device false" : (size > 1 ? "several ranks" : "A is bound to the CPU"));
    else if (size > 1) why = "several ranks (the device grows the pattern on one rank)";
    else if (gs->type == PCGSAI_GENERAL && gs->sideused == PC_RIGHT) why = "the right type (the device grows the left general and the spd types)";
    else if (room > GSAI_ADAPTIVE_DEVICE_MAXJ) why = "rows of more than 64 entries (steps x per_step or the cap)";
    else if (gs->adperstep > GSAI_ADAPTIVE_DEVICE_MAXSTEP) why = "more than 16 entries per step";
  #else
    why = "no device set-up in this build";
    (void)room;
  #endif
    if (why) {
      device     = PETSC_FALSE;
      gs->adhost = PETSC_TRUE;
      PetscCall(PetscInfo(pc, "-pc_gsai_pattern adaptive: the pattern and M are built on the host (%s); M is stored on the device\n", why));
    }
  }
  if (caps.device && !device && !gs->devicefallback && !gs->adhost)
    PetscCall(PetscInfo(pc, "Building M on the host for a %s matrix (%s)\n", ((PetscObject)A)->type_name, !gs->usedevice ? "-pc_gsai_use_device false" : "no device set-up for it in this build"));
  reuse = (pc->setupcalled && pc->flag == SAME_NONZERO_PATTERN && gs->havepattern && gs->ptype == gs->type && gs->pside == gs->sideused && gs->ondevice == device) ? PETSC_TRUE : PETSC_FALSE;
  if (!reuse) { /* M and its set-up go; the row scaling found above stays */
    Vec rs = gs->rowscale;
    Mat As = gs->As;
    gs->rowscale = NULL;
    gs->As       = NULL;
    PetscCall(PCReset_GSAI(pc));
    gs->rowscale = rs;
    gs->As       = As;
  }
  for (PetscInt s = 0; s < GSAI_NSTAGES; s++) gs->time[s] = 0;
#if defined(GPUKIT_GSAICUDA_AVAILABLE)
  if (device && gs->pattern == PCGSAI_PATTERN_ADAPTIVE) PetscCall(PCSetUp_GSAI_AdaptiveCUDA(pc, A, reuse));
  else if (device) {
    PetscCall(PCSetUp_GSAI_CUDA(pc, A, reuse));
    if (!reuse) { /* the device does not count the cut patterns; it has no forced entries (zero diagonals go to the host) */
      gs->ncapped   = -1;
      gs->nforced   = 0;
      gs->forcedcut = 0;
    }
  } else
#endif
    if (gs->pattern == PCGSAI_PATTERN_ADAPTIVE) {
    /* the pattern grown by the residuals (gsaiadaptive.c), then the values on it as for a kept pattern (gsaihost.c) */
    if (!reuse) PetscCall(GSAIAdaptivePattern(pc, A));
    PetscCall(PCSetUp_GSAI_Host(pc, A, PETSC_TRUE));
  } else PetscCall(PCSetUp_GSAI_Host(pc, A, reuse));
  gs->ondevice = device;
  PetscCall(VecDestroy(&gs->dirichlet));
  PetscCall(VecDestroy(&gs->dwork));
  PetscCall(VecDestroy(&gs->dwork2));
  gs->ndirichlet = 0;
  if (gs->type == PCGSAI_SPD && !gs->rowscale) {
    PetscBool   sym = gs->asym;
    const char *how;
    if (!gs->asymknown) PetscCall(GSAIIsSymmetric(A, &sym, &how)); /* once per set-up: it transposes A */
    if (!sym) PetscCall(GSAIFindDirichlet(pc, A));
  }
  if (gs->rowscale) PetscCall(VecDuplicate(gs->rowscale, &gs->dwork));
  if (gs->type == PCGSAI_SPD && gs->devm) { /* G in the device CSR (gsaidevm.h): its transpose was built on the device by the set-up */
#if defined(GPUKIT_GSAICUDA_AVAILABLE)
    if (!gs->work) PetscCall(GSAIDevMCreateVec(gs->devm, &gs->work));
#endif
  } else if (gs->type == PCGSAI_SPD) {
    PetscBool seqcusparse;
    if (!gs->work) PetscCall(MatCreateVecs(gs->M, NULL, &gs->work));
    /* PCApply() multiplies with G^T too: let cuSPARSE keep an explicit transpose (of every new G) */
    PetscCall(PetscObjectTypeCompare((PetscObject)gs->M, MATSEQAIJCUSPARSE, &seqcusparse));
    if (seqcusparse) PetscCall(MatSetOption(gs->M, MAT_FORM_EXPLICIT_TRANSPOSE, PETSC_TRUE));
  }
  PetscCall(PetscTime(&t1));
  gs->ttotal = t1 - t0;
  PetscCall(PetscLogEventEnd(PC_GSAI_SetUp, pc, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Apply, view, options, reset, destroy
   ------------------------------------------------------------------------------------------------------ */

/* y = M x and y = M^T x (spd: G, G^T): from the device CSR when the device set-up kept M there (gsaidevm.h), else
   with the Mat */
static PetscErrorCode GSAIMult(PC_GSAI *gs, Vec x, Vec y)
{
  PetscFunctionBegin;
#if defined(GPUKIT_GSAICUDA_AVAILABLE)
  if (gs->devm) {
    PetscCall(GSAIDevMMult(gs->devm, x, y));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(MatMult(gs->M, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GSAIMultTranspose(PC_GSAI *gs, Vec x, Vec y)
{
  PetscFunctionBegin;
#if defined(GPUKIT_GSAICUDA_AVAILABLE)
  if (gs->devm) {
    PetscCall(GSAIDevMMultTranspose(gs->devm, x, y));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(MatMultTranspose(gs->M, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* M as a Mat (spd: G): gs->M, or the one made from the device CSR at the first call (kept by gs->devm) */
static PetscErrorCode GSAIGetMat(PC pc, Mat *M)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(gs->M || gs->devm, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCGSAI has no approximate inverse yet: call PCSetUp() (or KSPSetUp()) first");
#if defined(GPUKIT_GSAICUDA_AVAILABLE)
  if (gs->devm) {
    PetscCall(GSAIDevMGetMat(gs->devm, M));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  *M = gs->M;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCApply_GSAI(PC pc, Vec x, Vec y)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  if (gs->type == PCGSAI_SPD && gs->dirichlet) {
    /* the rows P of A with only a diagonal entry solved exactly, their couplings C = A(not P, P) eliminated:
       d = D_P^{-1} x_P, y = G^T G (x - A d) + d, so that M A = I on P and G^T G A(not P, not P) elsewhere */
    PetscCall(VecPointwiseMult(gs->dwork, gs->dirichlet, x));
    PetscCall(MatMult(pc->pmat, gs->dwork, gs->dwork2));
    PetscCall(VecAYPX(gs->dwork2, -1.0, x));
    PetscCall(GSAIMult(gs, gs->dwork2, gs->work));
    PetscCall(GSAIMultTranspose(gs, gs->work, y));
    PetscCall(VecAXPY(y, 1.0, gs->dwork));
  } else if (gs->type == PCGSAI_SPD && gs->rowscale) { /* A = D_w S: y = G^T G D_w^{-1} x */
    PetscCall(VecPointwiseMult(gs->dwork, gs->rowscale, x));
    PetscCall(GSAIMult(gs, gs->dwork, gs->work));
    PetscCall(GSAIMultTranspose(gs, gs->work, y));
  } else if (gs->type == PCGSAI_SPD) { /* y = G^T G x */
    PetscCall(GSAIMult(gs, x, gs->work));
    PetscCall(GSAIMultTranspose(gs, gs->work, y));
  } else PetscCall(GSAIMult(gs, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCApplyTranspose_GSAI(PC pc, Vec x, Vec y)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  if (gs->type == PCGSAI_SPD && gs->dirichlet) { /* M^T = (I - D_P A^T) G^T G + D_P */
    PetscCall(GSAIMult(gs, x, gs->work));
    PetscCall(GSAIMultTranspose(gs, gs->work, y));
    PetscCall(MatMultTranspose(pc->pmat, y, gs->dwork2));
    PetscCall(VecAXPY(gs->dwork2, -1.0, x));
    PetscCall(VecPointwiseMult(gs->dwork, gs->dirichlet, gs->dwork2));
    PetscCall(VecAXPY(y, -1.0, gs->dwork));
  } else if (gs->type == PCGSAI_SPD && gs->rowscale) { /* M^T = D_w^{-1} G^T G */
    PetscCall(GSAIMult(gs, x, gs->work));
    PetscCall(GSAIMultTranspose(gs, gs->work, y));
    PetscCall(VecPointwiseMult(y, gs->rowscale, y));
  } else if (gs->type == PCGSAI_SPD) PetscCall(PCApply_GSAI(pc, x, y)); /* G^T G is symmetric */
  else PetscCall(GSAIMultTranspose(gs, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* symmetric application of M = G^T G: the operator is G A G^T */
static PetscErrorCode PCApplySymmetricLeft_GSAI(PC pc, Vec x, Vec y)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(gs->type == PCGSAI_SPD, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP, "PCGSAI type general has no symmetric form; use -pc_gsai_type spd");
  PetscCheck(!gs->rowscale, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP, "PCGSAI found A = D_w S with S symmetric (rows scaled by w): M = G^T G D_w^{-1} has no symmetric form; use -ksp_pc_side left or right");
  PetscCall(GSAIMult(gs, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCApplySymmetricRight_GSAI(PC pc, Vec x, Vec y)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(gs->type == PCGSAI_SPD, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP, "PCGSAI type general has no symmetric form; use -pc_gsai_type spd");
  PetscCheck(!gs->rowscale, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP, "PCGSAI found A = D_w S with S symmetric (rows scaled by w): M = G^T G D_w^{-1} has no symmetric form; use -ksp_pc_side left or right");
  PetscCall(GSAIMultTranspose(gs, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCView_GSAI(PC pc, PetscViewer viewer)
{
  PC_GSAI    *gs = (PC_GSAI *)pc->data;
  PetscBool   iascii, setup = pc->setupcalled && (gs->M || gs->devm) ? PETSC_TRUE : PETSC_FALSE;
  char        line[512];
  size_t      len;
  PetscMPIInt size;
  PCGSAIType  type    = setup ? gs->type : gs->typeopt;
  PCGSAIPatternType pattern = setup ? gs->pattern : gs->patternopt;
  const char *what    = type == PCGSAI_SPD ? "row of G" : (setup && gs->sideused == PC_RIGHT ? "column" : "row");
  PetscInt    nrows;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(PETSC_SUCCESS);
  if (!setup && type == GSAI_TYPE_AUTO) PetscCall(PetscViewerASCIIPrintf(viewer, "type auto: spd if A is marked SPD or symmetric with a positive diagonal, else general (decided at set-up)\n"));
  else if (type == PCGSAI_SPD) PetscCall(PetscViewerASCIIPrintf(viewer, "type spd%s: M = G^T G, G lower triangular with diag(G A_s G^T) = 1 (FSAI of the symmetric part A_s of A)\n", gs->typeopt == GSAI_TYPE_AUTO ? " (picked by auto)" : ""));
  else if (!setup) PetscCall(PetscViewerASCIIPrintf(viewer, "type general, side %s\n", gs->side == PC_SIDE_DEFAULT ? "from -ksp_pc_side (left if not given)" : (gs->side == PC_RIGHT ? "right" : "left")));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "type general%s, side %s: %s\n", gs->typeopt == GSAI_TYPE_AUTO ? " (picked by auto)" : "", gs->sideused == PC_RIGHT ? "right" : "left", gs->sideused == PC_RIGHT ? "M minimises ||AM - I||_F column by column" : "M minimises ||MA - I||_F row by row"));
  if (setup && gs->typewhy[0]) PetscCall(PetscViewerASCIIPrintf(viewer, "auto type: %s\n", gs->typewhy));
  if (!setup && pattern == GSAI_PATTERN_AUTO) PetscCall(PetscSNPrintf(line, sizeof(line), "pattern auto (power %" PetscInt_FMT " of the thresholded A, threshold tau %g, capped by a budget of %g x the nonzeros per row of A)", gs->powerset ? gs->poweropt : (PetscInt)GSAI_AUTO_POWER, (double)(gs->tauset ? gs->tauopt : GSAI_AUTO_TAU), (double)gs->budget));
  else {
    const PetscReal tau   = setup ? gs->tau : gs->tauopt;
    const PetscInt  power = setup ? gs->power : gs->poweropt;
    PetscCall(PetscSNPrintf(line, sizeof(line), "pattern %s%s", PCGSAIPatternTypes[pattern], setup && gs->patternopt == GSAI_PATTERN_AUTO ? " (picked by auto)" : ""));
    if (pattern != PCGSAI_PATTERN_A && pattern != PCGSAI_PATTERN_ADAPTIVE) {
      PetscCall(PetscStrlen(line, &len));
      PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, ", threshold tau %g (relative to the largest |a| of the %s of A)", (double)tau, type == PCGSAI_GENERAL && setup && gs->sideused == PC_RIGHT ? "column" : "row"));
    }
    if (pattern == PCGSAI_PATTERN_POWER) {
      PetscCall(PetscStrlen(line, &len));
      PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, ", power %" PetscInt_FMT, power));
    }
    if (pattern == PCGSAI_PATTERN_ADAPTIVE) {
      PetscCall(PetscStrlen(line, &len));
      PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, " (from the diagonal, grown where the residual of the %s is largest): %" PetscInt_FMT " steps, %" PetscInt_FMT " entries per step, target residual %g", what, gs->adsteps, gs->adperstep, (double)gs->adtol));
    }
  }
  if (setup && gs->maxnnz > 0) {
    PetscCall(PetscStrlen(line, &len));
    PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, ", at most %" PetscInt_FMT " nonzeros per %s%s", gs->maxnnz, what, gs->maxnnzopt == GSAI_MAXNNZ_AUTO ? " (budget)" : ""));
  } else if (!setup && gs->maxnnzopt > 0) {
    PetscCall(PetscStrlen(line, &len));
    PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, ", at most %" PetscInt_FMT " nonzeros per %s", gs->maxnnzopt, what));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s\n", line));
  if (setup && gs->patternwhy[0]) PetscCall(PetscViewerASCIIPrintf(viewer, "ignored: %s\n", gs->patternwhy));
  if (!setup) PetscFunctionReturn(PETSC_SUCCESS);
  /* M (or G) is n x n with A's layout; in the device CSR (gs->devm) it is made as MATSEQAIJCUSPARSE (several ranks:
     MATMPIAIJCUSPARSE) only when asked for */
  nrows = pc->pmat->rmap->N;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)pc), &size));
  if (gs->devm) PetscCall(PetscViewerASCIIPrintf(viewer, "%s: %" PetscInt_FMT " nonzeros (%.2f per row), %s, built on the device, kept in the device CSR and applied from there (the Mat is made when asked for)\n", gs->type == PCGSAI_SPD ? "G" : "M", gs->nnz, nrows ? (double)gs->nnz / (double)nrows : 0.0, size > 1 ? MATMPIAIJCUSPARSE : MATSEQAIJCUSPARSE));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "%s: %" PetscInt_FMT " nonzeros (%.2f per row), %s, built on the %s\n", gs->type == PCGSAI_SPD ? "G" : "M", gs->nnz, nrows ? (double)gs->nnz / (double)nrows : 0.0, ((PetscObject)gs->M)->type_name, gs->ondevice ? "device" : "host"));
  if (gs->conversion[0]) PetscCall(PetscViewerASCIIPrintf(viewer, "conversion: %s\n", gs->conversion));
  if (gs->pattern == PCGSAI_PATTERN_ADAPTIVE) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "adaptive: nnz(%s)/nnz(A) = %.3f after %" PetscInt_FMT " of %" PetscInt_FMT " rounds of growth; %" PetscInt_FMT " of %" PetscInt_FMT " %s met the target residual %g, %" PetscInt_FMT " stopped at the cap; largest residual %.3g\n", gs->type == PCGSAI_SPD ? "G" : "M", (double)gs->adnnzratio, gs->adrounds, gs->adsteps, gs->admet, nrows, gs->type == PCGSAI_SPD ? "rows of G" : (gs->sideused == PC_RIGHT ? "columns" : "rows"), (double)gs->adtol, gs->adcapped, (double)gs->admaxres));
    if (gs->adhost) PetscCall(PetscViewerASCIIPrintf(viewer, "adaptive: A is a device matrix, but the adaptive pattern and M were built on the host (-info says why)\n"));
  }
  if (gs->maxnnz > 0) {
    if (gs->ncapped >= 0) PetscCall(PetscViewerASCIIPrintf(viewer, "capped: the cap cut the pattern of %" PetscInt_FMT " %s\n", gs->ncapped, type == PCGSAI_SPD ? "rows of G" : (gs->sideused == PC_RIGHT ? "columns" : "rows")));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "capped: not counted by the device set-up\n"));
  }
  if (gs->type == PCGSAI_SPD && gs->rowscale) PetscCall(PetscViewerASCIIPrintf(viewer, "row scaling: A = D_w S with S symmetric, w in [%g, %g] (max/min %.3f): G is built from S = D_w^{-1} A and M = G^T G D_w^{-1}\n", (double)gs->wrange[0], (double)gs->wrange[1], (double)(gs->wrange[1] / gs->wrange[0])));
  if (gs->type == PCGSAI_SPD && gs->ndirichlet) PetscCall(PetscViewerASCIIPrintf(viewer, "A is not symmetric: its %" PetscInt_FMT " rows with only a diagonal entry are solved exactly and their couplings eliminated (one more product with A per application)\n", gs->ndirichlet));
  if (gs->ndense) PetscCall(PetscViewerASCIIPrintf(viewer, "dense %ss (more than %" PetscInt_FMT " nonzeros, kept out of the other patterns): %" PetscInt_FMT "\n", gs->type == PCGSAI_GENERAL && gs->sideused == PC_RIGHT ? "column" : "row", gs->denselimit, gs->ndense));
  if (gs->nzerodiag) PetscCall(PetscViewerASCIIPrintf(viewer, "zero or missing diagonal entries of A: %" PetscInt_FMT "; %ss given the structure of A^T there: %" PetscInt_FMT " (cut by the cap: %" PetscInt_FMT ")%s\n", gs->nzerodiag, what, gs->nforced, gs->forcedcut, gs->devicefallback ? "; built on the host for them" : ""));
  PetscCall(PetscViewerASCIIPrintf(viewer, "largest local problem %" PetscInt_FMT " x %" PetscInt_FMT "; fallbacks to the diagonal (or to one entry where the diagonal is zero): %" PetscInt_FMT "\n", gs->maxn1, gs->maxn2, gs->nfallback));
  PetscCall(PetscSNPrintf(line, sizeof(line), "set-up time (s, rank 0): total %.3g;", gs->ttotal));
  for (PetscInt s = 0; s < GSAI_NSTAGES; s++) {
    PetscCall(PetscStrlen(line, &len));
    PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, " %s %.3g%s", GSAIStageNames[s], gs->time[s], s + 1 < GSAI_NSTAGES ? "," : ""));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s\n", line));
  if (gs->devm && size > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "(device, several ranks: each stage's host time; assemble: the two blocks made in the device CSR, the ghost scatter, spd: G^T built)\n"));
  else if (gs->devm) PetscCall(PetscViewerASCIIPrintf(viewer, "(device: rows, pattern and solve are device times; assemble is the host's: M made usable in the device CSR, spd: G^T built)\n"));
  else if (gs->ondevice) PetscCall(PetscViewerASCIIPrintf(viewer, "(device: rows, pattern and solve are device times; assemble is the host's, while the device solves)\n"));
  if (gs->ondevice && gs->tuner) PetscCall(GpukitTunerView(gs->tuner, viewer)); /* the block sizes of the large and huge classes */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCSetFromOptions_GSAI(PC pc, GpukitOptionItems PetscOptionsObject)
{
  PC_GSAI          *gs = (PC_GSAI *)pc->data;
  PetscBool         flg, b;
  PCGSAIType        type;
  PCGSAIPatternType pattern;
  PetscReal         tau;
  PetscInt          n;
  PCSide            side;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "GSAI (sparse approximate inverse) options");
  PetscCall(PetscOptionsEnum("-pc_gsai_type", "general: min ||AM-I||_F (right) or ||MA-I||_F (left); spd: M = G^T G (FSAI); auto: spd for a symmetric A", "PCGSAISetType", PCGSAITypes, (PetscEnum)gs->typeopt, (PetscEnum *)&type, &flg));
  if (flg) PetscCall(PCGSAISetType(pc, type));
  PetscCall(PetscOptionsEnum("-pc_gsai_pattern", "Sparsity pattern of M: a, threshold, power, auto (power 2, capped by the budget) or adaptive", "PCGSAISetPattern", PCGSAIPatternTypes, (PetscEnum)gs->patternopt, (PetscEnum *)&pattern, &flg));
  if (flg) PetscCall(PCGSAISetPattern(pc, pattern));
  PetscCall(PetscOptionsReal("-pc_gsai_threshold", "Keep |a_ij| > (1 - tau) max |a| of the row (left) or column (right), 0 <= tau <= 1", "PCGSAISetThreshold", gs->tauopt, &tau, &flg));
  if (flg) PetscCall(PCGSAISetThreshold(pc, tau));
  PetscCall(PetscOptionsInt("-pc_gsai_power", "Power of the thresholded A whose pattern M takes (pattern power), 1 or more", "PCGSAISetPower", gs->poweropt, &n, &flg));
  if (flg) PetscCall(PCGSAISetPower(pc, n));
  PetscCall(PetscOptionsInt("-pc_gsai_max_nnz", "Largest number of nonzeros per row/column of M, diagonal included (0: no cap, -1: the budget)", "PCGSAISetMaxNnz", gs->maxnnzopt, &n, &flg));
  if (flg) PetscCall(PCGSAISetMaxNnz(pc, n));
  PetscCall(PetscOptionsReal("-pc_gsai_budget", "The automatic cap (-pc_gsai_max_nnz -1): this many times the average nonzeros per row of A", "PCGSAISetBudget", gs->budget, &tau, &flg));
  if (flg) PetscCall(PCGSAISetBudget(pc, tau));
  {
    const char *sides[] = {"default", "left", "right"};
    PetscInt    cur = gs->side == PC_LEFT ? 1 : (gs->side == PC_RIGHT ? 2 : 0), idx = cur;
    PetscCall(PetscOptionsEList("-pc_gsai_side", "Side the general M is built for (default: -ksp_pc_side, else left)", "PCGSAISetSide", sides, 3, sides[cur], &idx, &flg));
    side = idx == 1 ? PC_LEFT : (idx == 2 ? PC_RIGHT : PC_SIDE_DEFAULT);
    if (flg) PetscCall(PCGSAISetSide(pc, side));
  }
  {
    PetscInt  st = gs->adsteps, ps = gs->adperstep;
    PetscReal at = gs->adtol;
    PetscBool f1, f2, f3;
    PetscCall(PetscOptionsInt("-pc_gsai_adaptive_steps", "Pattern adaptive: rounds of growth, 1 or more", "PCGSAISetAdaptive", gs->adsteps, &st, &f1));
    PetscCall(PetscOptionsInt("-pc_gsai_adaptive_per_step", "Pattern adaptive: entries added per row (column) and round, 1 or more", "PCGSAISetAdaptive", gs->adperstep, &ps, &f2));
    PetscCall(PetscOptionsReal("-pc_gsai_adaptive_tol", "Pattern adaptive: a row stops growing when its residual is at most this, in [0, 1)", "PCGSAISetAdaptive", gs->adtol, &at, &f3));
    if (f1 || f2 || f3) PetscCall(PCGSAISetAdaptive(pc, st, ps, at));
  }
  PetscCall(PetscOptionsBool("-pc_gsai_row_scaling", "spd: for A = D_w S with S symmetric (max w / min w <= 100), build G from S and apply M = G^T G D_w^{-1}", "PCGSAISetRowScaling", gs->userowscale, &b, &flg));
  if (flg) PetscCall(PCGSAISetRowScaling(pc, b));
  PetscCall(PetscOptionsBool("-pc_gsai_use_device", "Build M on the GPU when A is a CUDA matrix", "PCGSAISetUseDevice", gs->usedevice, &b, &flg));
  if (flg) PetscCall(PCGSAISetUseDevice(pc, b));
  PetscCall(PetscOptionsInt("-pc_gsai_device_workspace", "Device workspace for the local problems solved in global memory, in KiB (0: half the free device memory)", "PCGSAISetDeviceWorkspace", gs->workspace, &n, &flg));
  if (flg) PetscCall(PCGSAISetDeviceWorkspace(pc, n));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCReset_GSAI(PC pc)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCall(GSAIResetSetUp(gs));
  PetscCall(VecDestroy(&gs->dirichlet));
  PetscCall(VecDestroy(&gs->dwork));
  PetscCall(VecDestroy(&gs->dwork2));
  gs->ndirichlet = 0;
  PetscCall(VecDestroy(&gs->rowscale));
  PetscCall(MatDestroy(&gs->As));
#if defined(GPUKIT_GSAICUDA_AVAILABLE)
  PetscCall(PCReset_GSAI_CUDA(pc));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const char *const GSAIComposed[] = {"PCGSAISetType_C",   "PCGSAIGetType_C", "PCGSAISetPattern_C", "PCGSAIGetPattern_C",   "PCGSAISetThreshold_C", "PCGSAIGetThreshold_C",       "PCGSAISetPower_C",  "PCGSAIGetPower_C",    "PCGSAISetMaxNnz_C",
                                           "PCGSAIGetMaxNnz_C", "PCGSAISetSide_C", "PCGSAIGetSide_C",    "PCGSAISetUseDevice_C", "PCGSAIGetUseDevice_C", "PCGSAISetDeviceWorkspace_C", "PCGSAIGetMatrix_C", "PCGSAIGetSetUpInfo_C", "PCGSAIGetSetUpTimes_C", "PCGSAISetBudget_C", "PCGSAISetRowScaling_C", "PCGSAIGetSetUpChoices_C", "PCGSAISetAdaptive_C", "PCGSAIGetAdaptive_C", "PCGSAIGetAdaptiveInfo_C"};

static PetscErrorCode PCDestroy_GSAI(PC pc)
{
  PetscFunctionBegin;
  PetscCall(PCReset_GSAI(pc));
  PetscCall(PetscFree(((PC_GSAI *)pc->data)->dense));
  PetscCall(GpukitTunerDestroy(&((PC_GSAI *)pc->data)->tuner));
  for (size_t i = 0; i < sizeof(GSAIComposed) / sizeof(GSAIComposed[0]); i++) PetscCall(PetscObjectComposeFunction((PetscObject)pc, GSAIComposed[i], NULL));
  PetscCall(PetscFree(pc->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   The methods behind the public functions
   ------------------------------------------------------------------------------------------------------ */

static PetscErrorCode PCGSAISetType_GSAI(PC pc, PCGSAIType type)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(type == PCGSAI_GENERAL || type == PCGSAI_SPD || type == GSAI_TYPE_AUTO, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "Unknown PCGSAIType %d: use PCGSAI_GENERAL, PCGSAI_SPD or PCGSAI_AUTO", (int)type);
  if (gs->typeopt != type) pc->setupcalled = PETSC_FALSE;
  gs->typeopt = type;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetType_GSAI(PC pc, PCGSAIType *type)
{
  PetscFunctionBegin;
  *type = ((PC_GSAI *)pc->data)->typeopt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetPattern_GSAI(PC pc, PCGSAIPatternType pattern)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(pattern >= PCGSAI_PATTERN_A && pattern <= PCGSAI_PATTERN_ADAPTIVE, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "Unknown PCGSAIPatternType %d: use a, threshold, power, auto or adaptive", (int)pattern);
  if (gs->patternopt != pattern) pc->setupcalled = PETSC_FALSE;
  gs->patternopt = pattern;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetPattern_GSAI(PC pc, PCGSAIPatternType *pattern)
{
  PetscFunctionBegin;
  *pattern = ((PC_GSAI *)pc->data)->patternopt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetThreshold_GSAI(PC pc, PetscReal tau)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(tau >= 0.0 && tau <= 1.0, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI threshold tau must lie in [0, 1] (keep |a_ij| > (1 - tau) max |a|; 1 keeps every nonzero, 0 only the largest), got %g", (double)tau);
  if (gs->tauopt != tau) pc->setupcalled = PETSC_FALSE;
  gs->tauopt = tau;
  gs->tauset = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetThreshold_GSAI(PC pc, PetscReal *tau)
{
  PetscFunctionBegin;
  *tau = ((PC_GSAI *)pc->data)->tauopt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetPower_GSAI(PC pc, PetscInt power)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(power >= 1, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI power must be 1 or more (1: the thresholded pattern of A, k: the pattern of its k-th power), got %" PetscInt_FMT, power);
  if (gs->poweropt != power) pc->setupcalled = PETSC_FALSE;
  gs->poweropt = power;
  gs->powerset = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetPower_GSAI(PC pc, PetscInt *power)
{
  PetscFunctionBegin;
  *power = ((PC_GSAI *)pc->data)->poweropt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetMaxNnz_GSAI(PC pc, PetscInt maxnnz)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(maxnnz >= GSAI_MAXNNZ_AUTO, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI max nnz must be -1 (PETSC_DETERMINE: the budget, PCGSAISetBudget()), 0 (no cap) or at least 1 (the diagonal), got %" PetscInt_FMT, maxnnz);
  if (gs->maxnnzopt != maxnnz) pc->setupcalled = PETSC_FALSE;
  gs->maxnnzopt = maxnnz;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetMaxNnz_GSAI(PC pc, PetscInt *maxnnz)
{
  PetscFunctionBegin;
  *maxnnz = ((PC_GSAI *)pc->data)->maxnnzopt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetBudget_GSAI(PC pc, PetscReal budget)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(budget > 0.0, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI budget must be positive (the automatic cap is budget times the average nonzeros per row of A), got %g", (double)budget);
  if (gs->budget != budget) pc->setupcalled = PETSC_FALSE;
  gs->budget = budget;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetSetUpChoices_GSAI(PC pc, PCGSAIType *type, PCGSAIPatternType *pattern, PetscReal *tau, PetscInt *power, PetscInt *maxnnz)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(gs->M || gs->devm, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCGSAI has no approximate inverse yet: call PCSetUp() (or KSPSetUp()) first");
  if (type) *type = gs->type;
  if (pattern) *pattern = gs->pattern;
  if (tau) *tau = gs->tau;
  if (power) *power = gs->power;
  if (maxnnz) *maxnnz = gs->maxnnz;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetAdaptive_GSAI(PC pc, PetscInt steps, PetscInt perstep, PetscReal tol)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  if (steps == PETSC_DEFAULT) steps = GSAI_ADAPTIVE_STEPS_DEFAULT;
  if (perstep == PETSC_DEFAULT) perstep = GSAI_ADAPTIVE_PERSTEP_DEFAULT;
  if (tol == (PetscReal)PETSC_DEFAULT) tol = GSAI_ADAPTIVE_TOL_DEFAULT;
  PetscCheck(steps >= 1, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI adaptive steps must be 1 or more (the rounds in which each row of M may grow its pattern), got %" PetscInt_FMT, steps);
  PetscCheck(perstep >= 1, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI adaptive entries per step must be 1 or more (the entries a row of M may add in one round), got %" PetscInt_FMT, perstep);
  PetscCheck(tol >= 0.0 && tol < 1.0, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI adaptive target residual must lie in [0, 1) (a row of M stops growing when ||e_k - m_k A||_2 is at most it; 0: grow to the steps or the cap), got %g", (double)tol);
  if (gs->adsteps != steps || gs->adperstep != perstep || gs->adtol != tol) pc->setupcalled = PETSC_FALSE;
  gs->adsteps   = steps;
  gs->adperstep = perstep;
  gs->adtol     = tol;
  gs->adset     = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetAdaptive_GSAI(PC pc, PetscInt *steps, PetscInt *perstep, PetscReal *tol)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  if (steps) *steps = gs->adsteps;
  if (perstep) *perstep = gs->adperstep;
  if (tol) *tol = gs->adtol;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetAdaptiveInfo_GSAI(PC pc, PetscInt *nmet, PetscInt *ncapped, PetscReal *ratio, PetscReal *maxres)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(gs->M || gs->devm, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCGSAI has no approximate inverse yet: call PCSetUp() (or KSPSetUp()) first");
  PetscCheck(gs->pattern == PCGSAI_PATTERN_ADAPTIVE, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCGSAI was not set up with the adaptive pattern (-pc_gsai_pattern adaptive)");
  if (nmet) *nmet = gs->admet;
  if (ncapped) *ncapped = gs->adcapped;
  if (ratio) *ratio = gs->adnnzratio;
  if (maxres) *maxres = gs->admaxres;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetSide_GSAI(PC pc, PCSide side)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(side == PC_SIDE_DEFAULT || side == PC_LEFT || side == PC_RIGHT, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI side must be left, right or default (follow -ksp_pc_side), got %d", (int)side);
  if (gs->side != side) pc->setupcalled = PETSC_FALSE;
  gs->side = side;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetSide_GSAI(PC pc, PCSide *side)
{
  PetscFunctionBegin;
  *side = ((PC_GSAI *)pc->data)->side;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetUseDevice_GSAI(PC pc, PetscBool flg)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  if (gs->usedevice != flg) pc->setupcalled = PETSC_FALSE;
  gs->usedevice = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetRowScaling_GSAI(PC pc, PetscBool flg)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  if (gs->userowscale != flg) pc->setupcalled = PETSC_FALSE;
  gs->userowscale = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetUseDevice_GSAI(PC pc, PetscBool *flg)
{
  PetscFunctionBegin;
  *flg = ((PC_GSAI *)pc->data)->usedevice;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetDeviceWorkspace_GSAI(PC pc, PetscInt kib)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(kib >= 0, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI device workspace must be 0 (automatic) or a size in KiB, got %" PetscInt_FMT, kib);
  gs->workspace = kib;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetMatrix_GSAI(PC pc, Mat *M)
{
  PetscFunctionBegin;
  PetscCall(GSAIGetMat(pc, M)); /* made now from the device CSR when the device set-up kept M there */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetSetUpInfo_GSAI(PC pc, PetscInt *nnz, PetscInt *nfallback, PetscBool *ondevice)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(gs->M || gs->devm, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCGSAI has no approximate inverse yet: call PCSetUp() (or KSPSetUp()) first");
  if (nnz) *nnz = gs->nnz;
  if (nfallback) *nfallback = gs->nfallback;
  if (ondevice) *ondevice = gs->ondevice;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetSetUpTimes_GSAI(PC pc, PetscReal *total, PetscReal *rows, PetscReal *pattern, PetscReal *solve, PetscReal *assemble)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(gs->M || gs->devm, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCGSAI has no approximate inverse yet: call PCSetUp() (or KSPSetUp()) first");
  if (total) *total = (PetscReal)gs->ttotal;
  if (rows) *rows = (PetscReal)gs->time[GSAI_STAGE_ROWS];
  if (pattern) *pattern = (PetscReal)gs->time[GSAI_STAGE_PATTERN];
  if (solve) *solve = (PetscReal)gs->time[GSAI_STAGE_SOLVE];
  if (assemble) *assemble = (PetscReal)gs->time[GSAI_STAGE_ASSEMBLE];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   PCGSAI - "gsai" - a static sparse approximate inverse preconditioner with a fixed pattern, built row by row
   (or column by column) from independent small dense problems, on the host or, for a device matrix, on the GPU
   (Dehnavi's GSAI, seed 004 chapter 5): on one rank read in place through its device CSR (`MATSEQAIJCUSPARSE`,
   `MATSEQSGDIACUDA`); on several ranks every rank builds its rows of M on its GPU from the rows of A it fetches from
   the others (M is then a `MATMPIAIJCUSPARSE`). `PCApply()` is one `MatMult()` with M.

   Options Database Keys:
+  -pc_gsai_type <general,spd,auto>      - general: M minimises ||AM - I||_F (right) or ||MA - I||_F (left); spd: M = G^T G (FSAI), SPD for `KSPCG`; auto (default): spd for a symmetric A
.  -pc_gsai_pattern <a,threshold,power,auto,adaptive> - the pattern of M: that of A, thresholded A, a power of thresholded A, auto (default: power 2, budget cap), or adaptive (grown from the diagonal where each row's residual is largest)
.  -pc_gsai_adaptive_steps <s>           - pattern adaptive: rounds of growth (default 5)
.  -pc_gsai_adaptive_per_step <p>        - pattern adaptive: entries added per row and round (default 2)
.  -pc_gsai_adaptive_tol <t>             - pattern adaptive: a row stops when its residual is at most t (default 0.1)
.  -pc_gsai_budget <r>                   - the default cap: r times the average nonzeros per row of A (default 2)
.  -pc_gsai_threshold <tau>              - 0 <= tau <= 1: keep |a_ij| > (1 - tau) max |a| of the row (left, spd) or column (right); default 0.9
.  -pc_gsai_power <k>                    - k >= 1: pattern of the k-th power of the thresholded A; default 2
.  -pc_gsai_max_nnz <n>                  - at most n nonzeros per row (left, spd) or column (right) of M: the diagonal and the largest others (0: no cap, -1: the budget, default)
.  -pc_gsai_side <left,right>            - the side the general M is built for; default: `-ksp_pc_side`, else left
.  -pc_gsai_use_device <bool>            - build M on the GPU when A is a device matrix, on one or more ranks (default true)
.  -pc_gsai_device_workspace <KiB>       - limit of the device workspace of the local problems (0: half the free memory)
-  -pc_gsai_row_scaling <bool>           - spd: for A = D_w S with S symmetric (max w / min w <= 100), G from S and M = G^T G D_w^{-1} (default true)

   Level: intermediate

   Notes:
   A must be square and assembled; any type whose rows `MatGetRow()` reads works, others are converted to
   `MATAIJ` (`-info` says so). On several ranks each rank computes its own rows (or columns) of M, with the
   rows of A it needs from other ranks; M does not depend on the number of ranks. A singular or ill-conditioned
   local problem falls back to the diagonal (counted in `PCView()` and `-info`); one that has no diagonal
   fallback is an error. See docs/gsai.md.

.seealso: `PCGSAISetType()`, `PCGSAISetPattern()`, `PCGSAISetThreshold()`, `PCGSAISetPower()`, `PCGSAISetMaxNnz()`, `PCGSAISetSide()`, `PCGSAIGetMatrix()`, `PCJACOBI`, `PCHYPRE`
M*/
static PetscErrorCode PCCreate_GSAI(PC pc)
{
  PC_GSAI *gs;

  PetscFunctionBegin;
  PetscCall(PetscNew(&gs));
  pc->data      = (void *)gs;
  gs->typeopt    = GSAI_TYPE_AUTO;
  gs->patternopt = GSAI_PATTERN_AUTO;
  gs->tauopt     = 0.9;
  gs->poweropt   = 2;
  gs->maxnnzopt  = GSAI_MAXNNZ_AUTO;
  gs->budget     = GSAI_BUDGET_DEFAULT;
  gs->type       = PCGSAI_GENERAL;
  gs->pattern    = PCGSAI_PATTERN_A;
  gs->tau        = 0.9;
  gs->power      = 2;
  gs->maxnnz     = 0;
  gs->side      = PC_SIDE_DEFAULT;
  gs->usedevice = PETSC_TRUE;
  gs->userowscale = PETSC_TRUE;
  gs->sideused  = PC_LEFT;
  gs->adsteps   = GSAI_ADAPTIVE_STEPS_DEFAULT;
  gs->adperstep = GSAI_ADAPTIVE_PERSTEP_DEFAULT;
  gs->adtol     = GSAI_ADAPTIVE_TOL_DEFAULT;

  pc->ops->setup               = PCSetUp_GSAI;
  pc->ops->apply               = PCApply_GSAI;
  pc->ops->applytranspose      = PCApplyTranspose_GSAI;
  pc->ops->applysymmetricleft  = PCApplySymmetricLeft_GSAI;
  pc->ops->applysymmetricright = PCApplySymmetricRight_GSAI;
  pc->ops->reset               = PCReset_GSAI;
  pc->ops->destroy             = PCDestroy_GSAI;
  pc->ops->setfromoptions      = PCSetFromOptions_GSAI;
  pc->ops->view                = PCView_GSAI;

  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetType_C", PCGSAISetType_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetType_C", PCGSAIGetType_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetPattern_C", PCGSAISetPattern_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetPattern_C", PCGSAIGetPattern_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetThreshold_C", PCGSAISetThreshold_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetThreshold_C", PCGSAIGetThreshold_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetPower_C", PCGSAISetPower_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetPower_C", PCGSAIGetPower_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetMaxNnz_C", PCGSAISetMaxNnz_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetMaxNnz_C", PCGSAIGetMaxNnz_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetSide_C", PCGSAISetSide_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetSide_C", PCGSAIGetSide_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetUseDevice_C", PCGSAISetUseDevice_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetUseDevice_C", PCGSAIGetUseDevice_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetDeviceWorkspace_C", PCGSAISetDeviceWorkspace_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetMatrix_C", PCGSAIGetMatrix_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetSetUpInfo_C", PCGSAIGetSetUpInfo_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetSetUpTimes_C", PCGSAIGetSetUpTimes_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetBudget_C", PCGSAISetBudget_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetRowScaling_C", PCGSAISetRowScaling_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetSetUpChoices_C", PCGSAIGetSetUpChoices_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAISetAdaptive_C", PCGSAISetAdaptive_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetAdaptive_C", PCGSAIGetAdaptive_GSAI));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCGSAIGetAdaptiveInfo_C", PCGSAIGetAdaptiveInfo_GSAI));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCRegister_GSAI_Private(void)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventRegister("GSAISetUp", PC_CLASSID, &PC_GSAI_SetUp));
  PetscCall(PetscLogEventRegister("GSAIRows", PC_CLASSID, &PC_GSAI_Rows));
  PetscCall(PetscLogEventRegister("GSAIPattern", PC_CLASSID, &PC_GSAI_Pattern));
  PetscCall(PetscLogEventRegister("GSAISolve", PC_CLASSID, &PC_GSAI_Solve));
  PetscCall(PetscLogEventRegister("GSAIAssemble", PC_CLASSID, &PC_GSAI_Assemble));
  PetscCall(PetscLogEventRegister("GSAIPatternCUDA", PC_CLASSID, &PC_GSAI_PatternCUDA));
  PetscCall(PetscLogEventRegister("GSAIDimsCUDA", PC_CLASSID, &PC_GSAI_DimsCUDA));
  PetscCall(PetscLogEventRegister("GSAISolveCUDA", PC_CLASSID, &PC_GSAI_SolveCUDA));
  PetscCall(PetscLogEventRegister("GSAIAssembleCUDA", PC_CLASSID, &PC_GSAI_AssembleCUDA));
  PetscCall(PetscLogEventRegister("GSAIAdaptive", PC_CLASSID, &PC_GSAI_Adaptive));
  PetscCall(PetscLogEventRegister("GSAIAdaptiveCUDA", PC_CLASSID, &PC_GSAI_AdaptiveCUDA));
  PetscCall(PetscLogEventRegister("GSAIApplyCUDA", PC_CLASSID, &PC_GSAI_ApplyCUDA));
  PetscCall(PetscLogEventRegister("GSAITransposeCUDA", PC_CLASSID, &PC_GSAI_TransposeCUDA));
  PetscCall(PetscLogEventRegister("GSAIMatCUDA", PC_CLASSID, &PC_GSAI_MatCUDA));
  PetscCall(PCRegister(PCGSAI, PCCreate_GSAI));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------
   Public functions
   ------------------------------------------------------------------------------------------------------ */

/*@
  PCGSAISetType - Sets the kind of approximate inverse `PCGSAI` builds

  Logically Collective

  Input Parameters:
+ pc   - the `PCGSAI` preconditioner
- type - `PCGSAI_GENERAL` (min ||AM - I||_F or ||MA - I||_F, see `PCGSAISetSide()`), `PCGSAI_SPD` (M = G^T G, G lower
         triangular) or `PCGSAI_AUTO` (the default: spd when A is marked `MAT_SPD` or is symmetric, flag or values, with a
         positive diagonal; general otherwise)

  Options Database Key:
. -pc_gsai_type <general,spd,auto> - the type

  Level: intermediate

  Note:
  Use `PCGSAI_SPD` (or auto) with `KSPCG`: the general M is not symmetric. The spd type builds G from S, the symmetric
  matrix that A dominates entrywise (A itself when A is symmetric); when A is not symmetric, its rows with only a
  diagonal entry are solved exactly and eliminated in `PCApply()` (Dirichlet rows, as in stock KSP ex45). `PCView()`
  says which type auto picked and why.

.seealso: `PCGSAI`, `PCGSAIGetType()`, `PCGSAIType`
@*/
PetscErrorCode PCGSAISetType(PC pc, PCGSAIType type)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(pc, type, 2);
  PetscTryMethod(pc, "PCGSAISetType_C", (PC, PCGSAIType), (pc, type));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetType - Gets the kind of approximate inverse `PCGSAI` builds

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner

  Output Parameter:
. type - `PCGSAI_GENERAL` or `PCGSAI_SPD`

  Level: intermediate

.seealso: `PCGSAI`, `PCGSAISetType()`
@*/
PetscErrorCode PCGSAIGetType(PC pc, PCGSAIType *type)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  GpukitAssertPointer(type, 2);
  PetscUseMethod(pc, "PCGSAIGetType_C", (PC, PCGSAIType *), (pc, type));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAISetPattern - Sets the sparsity pattern of the approximate inverse

  Logically Collective

  Input Parameters:
+ pc      - the `PCGSAI` preconditioner
- pattern - `PCGSAI_PATTERN_A` (the stored pattern of A), `PCGSAI_PATTERN_THRESHOLD` (A thresholded with `PCGSAISetThreshold()`), `PCGSAI_PATTERN_POWER` (the `PCGSAISetPower()`-th power of the thresholded A), `PCGSAI_PATTERN_AUTO` (the default: the power pattern with power 2 and threshold 1 unless set, capped by `PCGSAISetBudget()`) or `PCGSAI_PATTERN_ADAPTIVE` (grown from the diagonal by the rows' residuals, `PCGSAISetAdaptive()`)

  Options Database Key:
. -pc_gsai_pattern <a,threshold,power,auto,adaptive> - the pattern

  Level: intermediate

  Note:
  The diagonal is always in the pattern; where it is zero (general type) so are the rows j with a_jk != 0 (left; the
  columns for the right type). The spd type keeps the lower triangular part. `PCGSAISetMaxNnz()` caps any of them
  (by default with the budget, except the pattern a). Dense rows (more than max(64, 10 nnz(A)/n) entries) stay out
  of the other rows' patterns. Options that do not apply to the pattern are reported by `-info` and `PCView()`.

.seealso: `PCGSAI`, `PCGSAIGetPattern()`, `PCGSAISetThreshold()`, `PCGSAISetPower()`, `PCGSAISetMaxNnz()`
@*/
PetscErrorCode PCGSAISetPattern(PC pc, PCGSAIPatternType pattern)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(pc, pattern, 2);
  PetscTryMethod(pc, "PCGSAISetPattern_C", (PC, PCGSAIPatternType), (pc, pattern));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetPattern - Gets the sparsity pattern type of the approximate inverse

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner

  Output Parameter:
. pattern - the pattern type

  Level: intermediate

.seealso: `PCGSAI`, `PCGSAISetPattern()`
@*/
PetscErrorCode PCGSAIGetPattern(PC pc, PCGSAIPatternType *pattern)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  GpukitAssertPointer(pattern, 2);
  PetscUseMethod(pc, "PCGSAIGetPattern_C", (PC, PCGSAIPatternType *), (pc, pattern));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAISetThreshold - Sets the threshold tau of the thresholded pattern (the seed's eq. 5.3)

  Logically Collective

  Input Parameters:
+ pc  - the `PCGSAI` preconditioner
- tau - 0 <= tau <= 1: an entry a of A enters the pattern when |a| > (1 - tau) max |a'|, the maximum over
        the same row of A (left, spd) or the same column (right); tau = 1 keeps every nonzero, tau = 0 only
        the largest. The diagonal is always kept.

  Options Database Key:
. -pc_gsai_threshold <tau> - the threshold (default 0.9)

  Level: intermediate

  Note:
  Used by the patterns `PCGSAI_PATTERN_THRESHOLD` and `PCGSAI_PATTERN_POWER` only.

.seealso: `PCGSAI`, `PCGSAIGetThreshold()`, `PCGSAISetPattern()`
@*/
PetscErrorCode PCGSAISetThreshold(PC pc, PetscReal tau)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveReal(pc, tau, 2);
  PetscTryMethod(pc, "PCGSAISetThreshold_C", (PC, PetscReal), (pc, tau));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetThreshold - Gets the threshold tau of the thresholded pattern

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner

  Output Parameter:
. tau - the threshold

  Level: intermediate

.seealso: `PCGSAI`, `PCGSAISetThreshold()`
@*/
PetscErrorCode PCGSAIGetThreshold(PC pc, PetscReal *tau)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  GpukitAssertPointer(tau, 2);
  PetscUseMethod(pc, "PCGSAIGetThreshold_C", (PC, PetscReal *), (pc, tau));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAISetPower - Sets the power of the thresholded A whose pattern the approximate inverse takes

  Logically Collective

  Input Parameters:
+ pc    - the `PCGSAI` preconditioner
- power - the power, 1 or more (1 is the thresholded pattern itself)

  Options Database Key:
. -pc_gsai_power <k> - the power (default 2)

  Level: intermediate

  Note:
  Used by the pattern `PCGSAI_PATTERN_POWER` only, as ParaSails' levels: the pattern of (thresholded A)^k.

.seealso: `PCGSAI`, `PCGSAIGetPower()`, `PCGSAISetThreshold()`, `PCGSAISetPattern()`
@*/
PetscErrorCode PCGSAISetPower(PC pc, PetscInt power)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveInt(pc, power, 2);
  PetscTryMethod(pc, "PCGSAISetPower_C", (PC, PetscInt), (pc, power));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetPower - Gets the power of the power pattern

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner

  Output Parameter:
. power - the power

  Level: intermediate

.seealso: `PCGSAI`, `PCGSAISetPower()`
@*/
PetscErrorCode PCGSAIGetPower(PC pc, PetscInt *power)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  GpukitAssertPointer(power, 2);
  PetscUseMethod(pc, "PCGSAIGetPower_C", (PC, PetscInt *), (pc, power));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAISetMaxNnz - Caps the nonzeros per row (left, spd) or column (right) of the approximate inverse

  Logically Collective

  Input Parameters:
+ pc     - the `PCGSAI` preconditioner
- maxnnz - `PETSC_DETERMINE` (-1, the default: the budget of `PCGSAISetBudget()`, for every pattern but a), 0 (no
           cap) or the largest number of nonzeros, diagonal included

  Options Database Key:
. -pc_gsai_max_nnz <n> - the cap

  Level: intermediate

  Note:
  A capped row keeps its diagonal, then the entries that reach a zero diagonal, then the others with the largest weight: |a| for the patterns
  a and threshold, the entry of |thresholded A|^k for the power pattern (compared in single precision, ties
  to the smaller column).

.seealso: `PCGSAI`, `PCGSAIGetMaxNnz()`, `PCGSAISetPattern()`
@*/
PetscErrorCode PCGSAISetMaxNnz(PC pc, PetscInt maxnnz)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveInt(pc, maxnnz, 2);
  PetscTryMethod(pc, "PCGSAISetMaxNnz_C", (PC, PetscInt), (pc, maxnnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetMaxNnz - Gets the cap on nonzeros per row or column

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner

  Output Parameter:
. maxnnz - the cap (0: none)

  Level: intermediate

.seealso: `PCGSAI`, `PCGSAISetMaxNnz()`
@*/
PetscErrorCode PCGSAIGetMaxNnz(PC pc, PetscInt *maxnnz)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  GpukitAssertPointer(maxnnz, 2);
  PetscUseMethod(pc, "PCGSAIGetMaxNnz_C", (PC, PetscInt *), (pc, maxnnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAISetSide - Sets the side the general approximate inverse is built for

  Logically Collective

  Input Parameters:
+ pc   - the `PCGSAI` preconditioner
- side - `PC_RIGHT` (M minimises ||AM - I||_F, column by column), `PC_LEFT` (||MA - I||_F, row by row) or
         `PC_SIDE_DEFAULT`: the `-ksp_pc_side` option of the PC's prefix, else left

  Options Database Key:
. -pc_gsai_side <left,right> - the side

  Level: intermediate

  Note:
  A PC cannot see the side its `KSP` uses: a program that calls `KSPSetPCSide()` should call this too (the
  option `-ksp_pc_side` is seen). Either M works on either side; the matching one is the better preconditioner.
  The spd type ignores the side.

.seealso: `PCGSAI`, `PCGSAIGetSide()`, `KSPSetPCSide()`
@*/
PetscErrorCode PCGSAISetSide(PC pc, PCSide side)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(pc, side, 2);
  PetscTryMethod(pc, "PCGSAISetSide_C", (PC, PCSide), (pc, side));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetSide - Gets the side set with `PCGSAISetSide()`

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner

  Output Parameter:
. side - the side (`PC_SIDE_DEFAULT`: follow `-ksp_pc_side`)

  Level: intermediate

.seealso: `PCGSAI`, `PCGSAISetSide()`
@*/
PetscErrorCode PCGSAIGetSide(PC pc, PCSide *side)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  GpukitAssertPointer(side, 2);
  PetscUseMethod(pc, "PCGSAIGetSide_C", (PC, PCSide *), (pc, side));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAISetRowScaling - Sets whether the spd type looks for a row scaling A = D_w S with S symmetric

  Logically Collective

  Input Parameters:
+ pc  - the `PCGSAI` preconditioner
- flg - `PETSC_TRUE` (default) to look for it

  Options Database Key:
. -pc_gsai_row_scaling <bool> - the flag

  Level: advanced

  Notes:
  Mirror (Neumann) boundaries written as PETSc's KSP ex66 writes them double a boundary row's coupling, and finite volume
  rows divided by the cell volumes are scaled rows too: A = D_w S with S symmetric and w > 0, but A is not symmetric.
  CG with an FSAI of the symmetric part of such an A stagnates. When the values of A are on the host and A is not
  symmetric, the set-up finds w from the ratios a_ij / a_ji (they must be positive and consistent), and, when
  max w / min w <= 100, builds G from S = D_w^{-1} A and applies M = G^T G D_w^{-1}; `PCView()` reports w's range.
  With `PCGSAI_AUTO` such a matrix with a positive diagonal gets the spd type. Constant-coefficient convection-diffusion
  is a row-scaled symmetric matrix too, with w growing exponentially across the domain; above the ratio 100 the
  general type (auto) or the symmetric part (spd) is used. `PETSC_FALSE` keeps the symmetric part always.

.seealso: `PCGSAI`, `PCGSAISetType()`
@*/
PetscErrorCode PCGSAISetRowScaling(PC pc, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveBool(pc, flg, 2);
  PetscTryMethod(pc, "PCGSAISetRowScaling_C", (PC, PetscBool), (pc, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAISetUseDevice - Sets whether M is built on the GPU when A is a CUDA matrix

  Logically Collective

  Input Parameters:
+ pc  - the `PCGSAI` preconditioner
- flg - `PETSC_TRUE` (default) to build on the GPU for a `MATSEQAIJCUSPARSE` or `MATSEQSGDIACUDA` matrix

  Options Database Key:
. -pc_gsai_use_device <bool> - the flag

  Level: advanced

  Note:
  With `PETSC_FALSE`, or on several ranks, M is built on the host and stored as `MATAIJCUSPARSE`.

.seealso: `PCGSAI`, `PCGSAIGetUseDevice()`, `PCGSAISetDeviceWorkspace()`
@*/
PetscErrorCode PCGSAISetUseDevice(PC pc, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveBool(pc, flg, 2);
  PetscTryMethod(pc, "PCGSAISetUseDevice_C", (PC, PetscBool), (pc, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetUseDevice - Gets whether M is built on the GPU for a CUDA matrix

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner

  Output Parameter:
. flg - the flag

  Level: advanced

.seealso: `PCGSAI`, `PCGSAISetUseDevice()`
@*/
PetscErrorCode PCGSAIGetUseDevice(PC pc, PetscBool *flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  GpukitAssertPointer(flg, 2);
  PetscUseMethod(pc, "PCGSAIGetUseDevice_C", (PC, PetscBool *), (pc, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAISetDeviceWorkspace - Limits the device memory that holds the local problems at once

  Logically Collective

  Input Parameters:
+ pc  - the `PCGSAI` preconditioner
- kib - the limit in KiB, or 0 (default) for half the free device memory

  Options Database Key:
. -pc_gsai_device_workspace <KiB> - the limit

  Level: advanced

  Note:
  The small local problems (at most 32 pattern entries and 2048 doubles) are solved in shared memory and need no
  workspace. The others are solved in batches of consecutive rows whose dense systems fit the limit (at least one
  row per batch); with the default, the free device memory is asked for only when they need more than 64 MiB.

.seealso: `PCGSAI`, `PCGSAISetUseDevice()`
@*/
PetscErrorCode PCGSAISetDeviceWorkspace(PC pc, PetscInt kib)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveInt(pc, kib, 2);
  PetscTryMethod(pc, "PCGSAISetDeviceWorkspace_C", (PC, PetscInt), (pc, kib));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetMatrix - Gets the approximate inverse built by `PCSetUp()`

  Collective the first time after a device set-up on several ranks (the `MATMPIAIJCUSPARSE` is made then); else not
  collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner, set up

  Output Parameter:
. M - the approximate inverse (general type), or the lower triangular factor G with M = G^T G (spd type);
      owned by the PC, do not destroy it

  Level: advanced

  Note:
  The device set-up keeps M in the device CSR arrays it built and applies it from there: it makes no PETSc matrix
  (on several ranks: the left and spd types; the right type makes a `MATMPIAIJCUSPARSE`). The `MATSEQAIJCUSPARSE` (one
  rank) or `MATMPIAIJCUSPARSE` (several) returned here is made at the first call (its structure is copied to the host
  once, its values device to device) and kept by the PC; a later set-up with `SAME_NONZERO_PATTERN` updates its values.
  On several ranks every rank must call it then.

.seealso: `PCGSAI`, `PCGSAIGetSetUpInfo()`
@*/
PetscErrorCode PCGSAIGetMatrix(PC pc, Mat *M)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  GpukitAssertPointer(M, 2);
  PetscUseMethod(pc, "PCGSAIGetMatrix_C", (PC, Mat *), (pc, M));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetSetUpInfo - Gets facts about the last set-up of `PCGSAI`

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner, set up

  Output Parameters:
+ nnz       - the nonzeros of M (general) or G (spd), over all ranks (or `NULL`)
. nfallback - the rows or columns whose local problem fell back to the diagonal, over all ranks (or `NULL`)
- ondevice  - whether M was built on the GPU (or `NULL`)

  Level: advanced

.seealso: `PCGSAI`, `PCGSAIGetMatrix()`
@*/
PetscErrorCode PCGSAIGetSetUpInfo(PC pc, PetscInt *nnz, PetscInt *nfallback, PetscBool *ondevice)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscUseMethod(pc, "PCGSAIGetSetUpInfo_C", (PC, PetscInt *, PetscInt *, PetscBool *), (pc, nnz, nfallback, ondevice));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetSetUpTimes - Gets the times of the last set-up of `PCGSAI`, in total (wall clock) and per stage (the
  times `PCView()` prints)

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner, set up

  Output Parameters:
+ total    - the whole `PCSetUp()`, in seconds (or `NULL`)
. rows     - getting the rows of A (or of A^T for the right type) that the local problems need (or `NULL`)
. pattern  - thresholds, powers and caps: the pattern of M; on the device also the sizes and workspace of the local problems (or `NULL`)
. solve    - the local least-squares (or SPD) problems (or `NULL`)
- assemble - M (or G) as a PETSc matrix (or `NULL`)

  Level: advanced

  Note:
  The times are those of this rank (rank 0 is the one `PCView()` prints). On the device, rows, pattern and solve are
  measured on the device (CUDA events), and assemble is the host's time to build M (its structure, the copy of the
  structure to the device, the values); the host builds M's structure while the device solves, so the stages can add
  up to more than the total. After a set-up with `SAME_NONZERO_PATTERN` the pattern stage is 0 on the host and
  nearly 0 on the device (the pattern is reused).

.seealso: `PCGSAI`, `PCGSAIGetSetUpInfo()`, `PCView()`
@*/
PetscErrorCode PCGSAIGetSetUpTimes(PC pc, PetscReal *total, PetscReal *rows, PetscReal *pattern, PetscReal *solve, PetscReal *assemble)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscUseMethod(pc, "PCGSAIGetSetUpTimes_C", (PC, PetscReal *, PetscReal *, PetscReal *, PetscReal *, PetscReal *), (pc, total, rows, pattern, solve, assemble));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAISetBudget - Sets the automatic cap of `PCGSAI`: at most ceil(budget * nnz(A) / n) nonzeros per row (or column) of
  M (for the spd type, ceil(budget * (nnz(A) / n + 1) / 2) per row of G), so that nnz(M) is at most about budget * nnz(A)

  Logically Collective

  Input Parameters:
+ pc     - the `PCGSAI` preconditioner
- budget - a positive factor (default 2)

  Options Database Key:
. -pc_gsai_budget <r> - the factor

  Level: intermediate

  Note:
  Used when `PCGSAISetMaxNnz()` is -1 (`PETSC_DETERMINE`, the default) and the pattern is not a (the pattern of A is
  not capped by default). The cap bounds the set-up work of the power patterns.

.seealso: `PCGSAI`, `PCGSAISetMaxNnz()`, `PCGSAISetPattern()`
@*/
PetscErrorCode PCGSAISetBudget(PC pc, PetscReal budget)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveReal(pc, budget, 2);
  PetscTryMethod(pc, "PCGSAISetBudget_C", (PC, PetscReal), (pc, budget));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetSetUpChoices - Gets what the last set-up of `PCGSAI` used, the automatic choices resolved

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner, set up

  Output Parameters:
+ type    - `PCGSAI_GENERAL` or `PCGSAI_SPD` (or `NULL`)
. pattern - `PCGSAI_PATTERN_A`, `PCGSAI_PATTERN_THRESHOLD`, `PCGSAI_PATTERN_POWER` or `PCGSAI_PATTERN_ADAPTIVE` (or `NULL`)
. tau     - the threshold used (or `NULL`)
. power   - the power used (or `NULL`)
- maxnnz  - the cap used, 0 for none (or `NULL`)

  Level: advanced

.seealso: `PCGSAI`, `PCGSAISetType()`, `PCGSAISetPattern()`, `PCGSAISetMaxNnz()`, `PCGSAISetBudget()`
@*/
PetscErrorCode PCGSAIGetSetUpChoices(PC pc, PCGSAIType *type, PCGSAIPatternType *pattern, PetscReal *tau, PetscInt *power, PetscInt *maxnnz)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscUseMethod(pc, "PCGSAIGetSetUpChoices_C", (PC, PCGSAIType *, PCGSAIPatternType *, PetscReal *, PetscInt *, PetscInt *), (pc, type, pattern, tau, power, maxnnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAISetAdaptive - Sets the growth of the adaptive pattern of `PCGSAI` (`PCGSAI_PATTERN_ADAPTIVE`)

  Logically Collective

  Input Parameters:
+ pc      - the `PCGSAI` preconditioner
. steps   - the rounds of growth, 1 or more (`PETSC_DEFAULT`: 5)
. perstep - the entries a row (column) of M may add in one round, 1 or more (`PETSC_DEFAULT`: 2)
- tol     - the target residual, in [0, 1): a row stops growing when its residual is at most tol (`PETSC_DEFAULT`: 0.1)

  Options Database Keys:
+ -pc_gsai_adaptive_steps <s>    - the rounds
. -pc_gsai_adaptive_per_step <p> - the entries per round
- -pc_gsai_adaptive_tol <t>      - the target residual

  Level: intermediate

  Notes:
  Every row k of M starts from the diagonal (general type with a_kk = 0: also the entries that reach index k). In each
  round a row that is still growing solves its local problem on its pattern and computes its residual: general,
  r = e_k^T - m_k A (the row of ||MA - I||_F; columns for the right type), with ||r||_2 in [0, 1]; spd, r_i = (g_k A)_i / sqrt(a_kk)
  for i < k outside the pattern, g_k the row of G. It then adds the perstep indices with the largest |r_i| (ties to the
  smaller index), unless its residual is at most tol, it holds the cap (`PCGSAISetMaxNnz()`, by default the budget of
  `PCGSAISetBudget()`) or it has no candidate. nnz(M) stays at most n * cap, about budget * nnz(A) by default, and at most
  n * (1 + steps * perstep). The values of M are then the least-squares (or FSAI) solution on the final pattern, as for
  the static patterns. `PCView()` prints nnz(M)/nnz(A) and how many rows met the target.

.seealso: `PCGSAI`, `PCGSAIGetAdaptive()`, `PCGSAISetPattern()`, `PCGSAISetMaxNnz()`, `PCGSAISetBudget()`, `PCGSAIGetAdaptiveInfo()`
@*/
PetscErrorCode PCGSAISetAdaptive(PC pc, PetscInt steps, PetscInt perstep, PetscReal tol)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveInt(pc, steps, 2);
  PetscValidLogicalCollectiveInt(pc, perstep, 3);
  PetscValidLogicalCollectiveReal(pc, tol, 4);
  PetscTryMethod(pc, "PCGSAISetAdaptive_C", (PC, PetscInt, PetscInt, PetscReal), (pc, steps, perstep, tol));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetAdaptive - Gets the growth parameters of the adaptive pattern of `PCGSAI`

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner

  Output Parameters:
+ steps   - the rounds of growth (or `NULL`)
. perstep - the entries per round (or `NULL`)
- tol     - the target residual (or `NULL`)

  Level: intermediate

.seealso: `PCGSAI`, `PCGSAISetAdaptive()`
@*/
PetscErrorCode PCGSAIGetAdaptive(PC pc, PetscInt *steps, PetscInt *perstep, PetscReal *tol)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscUseMethod(pc, "PCGSAIGetAdaptive_C", (PC, PetscInt *, PetscInt *, PetscReal *), (pc, steps, perstep, tol));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCGSAIGetAdaptiveInfo - Gets what the adaptive pattern of the last set-up of `PCGSAI` achieved

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner, set up with `PCGSAI_PATTERN_ADAPTIVE`

  Output Parameters:
+ nmet    - the rows (columns) whose final residual is at most the target, over all ranks (or `NULL`)
. ncapped - the rows (columns) that stopped at the cap above the target (or `NULL`)
. ratio   - nnz(M) / nnz(A) (spd: nnz(G) / nnz(A)) (or `NULL`)
- maxres  - the largest final residual of a row (or `NULL`)

  Level: advanced

.seealso: `PCGSAI`, `PCGSAISetAdaptive()`, `PCGSAIGetSetUpInfo()`
@*/
PetscErrorCode PCGSAIGetAdaptiveInfo(PC pc, PetscInt *nmet, PetscInt *ncapped, PetscReal *ratio, PetscReal *maxres)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscUseMethod(pc, "PCGSAIGetAdaptiveInfo_C", (PC, PetscInt *, PetscInt *, PetscReal *, PetscReal *), (pc, nmet, ncapped, ratio, maxres));
  PetscFunctionReturn(PETSC_SUCCESS);
}
