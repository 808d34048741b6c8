/*
   PCGSAI: a static sparse approximate inverse preconditioner (seed 004, chapter 5). This file is the PC: creation,
   options, view, set-up dispatch, apply, the public functions and their man pages. The set-up algorithm is elsewhere:
   on the host in gsaipattern.c (rows of B, pattern), gsaisolve.c (local problems, failures) and gsaihost.c (the
   driver, one or more ranks); on the device, for a one-rank CUDA matrix, in gsaicuda.cu and gsaikernels.cu. Both
   compute the same M (see gsaiimpl.h for the formulation).
*/
#include <petsctime.h>
#include "gsaiimpl.h"

const char *const PCGSAITypes[]        = {"general", "spd", "PCGSAIType", "PCGSAI_", NULL};
const char *const PCGSAIPatternTypes[] = {"a", "threshold", "power", "PCGSAIPatternType", "PCGSAI_PATTERN_", NULL};
const char *const GSAIStageNames[]     = {"rows", "pattern", "solve", "assemble"};

PetscLogEvent PC_GSAI_SetUp, PC_GSAI_Rows, PC_GSAI_Pattern, PC_GSAI_Solve, PC_GSAI_Assemble, PC_GSAI_PatternCUDA, PC_GSAI_DimsCUDA, PC_GSAI_SolveCUDA, PC_GSAI_AssembleCUDA;

/* ------------------------------------------------------------------------------------------------------
   Set-up: the side, then the host (gsaihost.c) or the device (gsaicuda.cu) builds M
   ------------------------------------------------------------------------------------------------------ */

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
  PetscCall(GSAIResolveSide(pc));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  /* what A can do, not its type name: a device matrix (M is one too) on one rank is set up on the device */
  PetscCall(GpukitMatGetCaps(A, &caps));
#if defined(GPUKIT_GSAICUDA_AVAILABLE)
  if (A->boundtocpu && caps.devicecsr) PetscCall(PetscInfo(pc, "A (%s) is bound to the CPU: building M on the host\n", ((PetscObject)A)->type_name));
  if (gs->usedevice && size == 1 && caps.device) device = PETSC_TRUE;
#endif
  if (caps.device && !device)
    PetscCall(PetscInfo(pc, "Building M on the host for a %s matrix (%s)\n", ((PetscObject)A)->type_name, !gs->usedevice ? "-pc_gsai_use_device false" : (size > 1 ? "the device set-up is for one rank" : "no device set-up for it in this build")));
  reuse = (pc->setupcalled && pc->flag == SAME_NONZERO_PATTERN && gs->havepattern && gs->ptype == gs->type && gs->pside == gs->sideused && gs->ondevice == device) ? PETSC_TRUE : PETSC_FALSE;
  if (!reuse) PetscCall(PCReset_GSAI(pc));
  for (PetscInt s = 0; s < GSAI_NSTAGES; s++) gs->time[s] = 0;
#if defined(GPUKIT_GSAICUDA_AVAILABLE)
  if (device) PetscCall(PCSetUp_GSAI_CUDA(pc, A, reuse));
  else
#endif
    PetscCall(PCSetUp_GSAI_Host(pc, A, reuse));
  gs->ondevice = device;
  if (gs->type == PCGSAI_SPD) {
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

static PetscErrorCode PCApply_GSAI(PC pc, Vec x, Vec y)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  if (gs->type == PCGSAI_SPD) { /* y = G^T G x */
    PetscCall(MatMult(gs->M, x, gs->work));
    PetscCall(MatMultTranspose(gs->M, gs->work, y));
  } else PetscCall(MatMult(gs->M, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCApplyTranspose_GSAI(PC pc, Vec x, Vec y)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  if (gs->type == PCGSAI_SPD) PetscCall(PCApply_GSAI(pc, x, y)); /* G^T G is symmetric */
  else PetscCall(MatMultTranspose(gs->M, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* symmetric application of M = G^T G: the operator is G A G^T */
static PetscErrorCode PCApplySymmetricLeft_GSAI(PC pc, Vec x, Vec y)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(gs->type == PCGSAI_SPD, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP, "PCGSAI type general has no symmetric form; use -pc_gsai_type spd");
  PetscCall(MatMult(gs->M, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCApplySymmetricRight_GSAI(PC pc, Vec x, Vec y)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(gs->type == PCGSAI_SPD, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP, "PCGSAI type general has no symmetric form; use -pc_gsai_type spd");
  PetscCall(MatMultTranspose(gs->M, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCView_GSAI(PC pc, PetscViewer viewer)
{
  PC_GSAI    *gs = (PC_GSAI *)pc->data;
  PetscBool   iascii;
  char        line[512];
  size_t      len;
  const char *what = gs->type == PCGSAI_SPD ? "row of G" : (pc->setupcalled && gs->sideused == PC_RIGHT ? "column" : "row");

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(PETSC_SUCCESS);
  if (gs->type == PCGSAI_SPD) PetscCall(PetscViewerASCIIPrintf(viewer, "type spd: M = G^T G, G lower triangular with diag(G A G^T) = 1 (FSAI)\n"));
  else if (!pc->setupcalled) PetscCall(PetscViewerASCIIPrintf(viewer, "type general, side %s\n", gs->side == PC_SIDE_DEFAULT ? "from -ksp_pc_side (left if not given)" : (gs->side == PC_RIGHT ? "right" : "left")));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "type general, side %s: %s\n", gs->sideused == PC_RIGHT ? "right" : "left", gs->sideused == PC_RIGHT ? "M minimises ||AM - I||_F column by column" : "M minimises ||MA - I||_F row by row"));
  PetscCall(PetscSNPrintf(line, sizeof(line), "pattern %s", PCGSAIPatternTypes[gs->pattern]));
  if (gs->pattern != PCGSAI_PATTERN_A) {
    PetscCall(PetscStrlen(line, &len));
    PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, ", threshold tau %g (relative to the largest |a| of the %s of A)", (double)gs->tau, gs->type == PCGSAI_GENERAL && pc->setupcalled && gs->sideused == PC_RIGHT ? "column" : "row"));
  }
  if (gs->pattern == PCGSAI_PATTERN_POWER) {
    PetscCall(PetscStrlen(line, &len));
    PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, ", power %" PetscInt_FMT, gs->power));
  }
  if (gs->maxnnz > 0) {
    PetscCall(PetscStrlen(line, &len));
    PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, ", at most %" PetscInt_FMT " nonzeros per %s", gs->maxnnz, what));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s\n", line));
  if (!pc->setupcalled || !gs->M) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s: %" PetscInt_FMT " nonzeros (%.2f per row), %s, built on the %s\n", gs->type == PCGSAI_SPD ? "G" : "M", gs->nnz, gs->M->rmap->N ? (double)gs->nnz / (double)gs->M->rmap->N : 0.0, ((PetscObject)gs->M)->type_name, gs->ondevice ? "device" : "host"));
  if (gs->conversion[0]) PetscCall(PetscViewerASCIIPrintf(viewer, "conversion: %s\n", gs->conversion));
  PetscCall(PetscViewerASCIIPrintf(viewer, "largest local problem %" PetscInt_FMT " x %" PetscInt_FMT "; fallbacks to the diagonal: %" PetscInt_FMT "\n", gs->maxn1, gs->maxn2, gs->nfallback));
  PetscCall(PetscSNPrintf(line, sizeof(line), "set-up time (s, rank 0): total %.3g;", gs->ttotal));
  for (PetscInt s = 0; s < GSAI_NSTAGES; s++) {
    PetscCall(PetscStrlen(line, &len));
    PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, " %s %.3g%s", GSAIStageNames[s], gs->time[s], s + 1 < GSAI_NSTAGES ? "," : ""));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s\n", line));
  if (gs->ondevice) PetscCall(PetscViewerASCIIPrintf(viewer, "(device: rows, pattern and solve are device times; assemble is the host's, while the device solves)\n"));
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
  PetscCall(PetscOptionsEnum("-pc_gsai_type", "general: min ||AM-I||_F (right) or ||MA-I||_F (left); spd: M = G^T G (FSAI)", "PCGSAISetType", PCGSAITypes, (PetscEnum)gs->type, (PetscEnum *)&type, &flg));
  if (flg) PetscCall(PCGSAISetType(pc, type));
  PetscCall(PetscOptionsEnum("-pc_gsai_pattern", "Sparsity pattern of M: a, threshold or power", "PCGSAISetPattern", PCGSAIPatternTypes, (PetscEnum)gs->pattern, (PetscEnum *)&pattern, &flg));
  if (flg) PetscCall(PCGSAISetPattern(pc, pattern));
  PetscCall(PetscOptionsReal("-pc_gsai_threshold", "Keep |a_ij| > (1 - tau) max |a| of the row (left) or column (right), 0 <= tau <= 1", "PCGSAISetThreshold", gs->tau, &tau, &flg));
  if (flg) PetscCall(PCGSAISetThreshold(pc, tau));
  PetscCall(PetscOptionsInt("-pc_gsai_power", "Power of the thresholded A whose pattern M takes (pattern power), 1 or more", "PCGSAISetPower", gs->power, &n, &flg));
  if (flg) PetscCall(PCGSAISetPower(pc, n));
  PetscCall(PetscOptionsInt("-pc_gsai_max_nnz", "Largest number of nonzeros per row/column of M, diagonal included (0: no cap)", "PCGSAISetMaxNnz", gs->maxnnz, &n, &flg));
  if (flg) PetscCall(PCGSAISetMaxNnz(pc, n));
  {
    const char *sides[] = {"default", "left", "right"};
    PetscInt    cur = gs->side == PC_LEFT ? 1 : (gs->side == PC_RIGHT ? 2 : 0), idx = cur;
    PetscCall(PetscOptionsEList("-pc_gsai_side", "Side the general M is built for (default: -ksp_pc_side, else left)", "PCGSAISetSide", sides, 3, sides[cur], &idx, &flg));
    side = idx == 1 ? PC_LEFT : (idx == 2 ? PC_RIGHT : PC_SIDE_DEFAULT);
    if (flg) PetscCall(PCGSAISetSide(pc, side));
  }
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
#if defined(GPUKIT_GSAICUDA_AVAILABLE)
  PetscCall(PCReset_GSAI_CUDA(pc));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const char *const GSAIComposed[] = {"PCGSAISetType_C",   "PCGSAIGetType_C", "PCGSAISetPattern_C", "PCGSAIGetPattern_C",   "PCGSAISetThreshold_C", "PCGSAIGetThreshold_C",       "PCGSAISetPower_C",  "PCGSAIGetPower_C",    "PCGSAISetMaxNnz_C",
                                           "PCGSAIGetMaxNnz_C", "PCGSAISetSide_C", "PCGSAIGetSide_C",    "PCGSAISetUseDevice_C", "PCGSAIGetUseDevice_C", "PCGSAISetDeviceWorkspace_C", "PCGSAIGetMatrix_C", "PCGSAIGetSetUpInfo_C", "PCGSAIGetSetUpTimes_C"};

static PetscErrorCode PCDestroy_GSAI(PC pc)
{
  PetscFunctionBegin;
  PetscCall(PCReset_GSAI(pc));
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
  PetscCheck(type == PCGSAI_GENERAL || type == PCGSAI_SPD, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "Unknown PCGSAIType %d: use PCGSAI_GENERAL or PCGSAI_SPD", (int)type);
  if (gs->type != type) pc->setupcalled = PETSC_FALSE;
  gs->type = type;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetType_GSAI(PC pc, PCGSAIType *type)
{
  PetscFunctionBegin;
  *type = ((PC_GSAI *)pc->data)->type;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetPattern_GSAI(PC pc, PCGSAIPatternType pattern)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(pattern >= PCGSAI_PATTERN_A && pattern <= PCGSAI_PATTERN_POWER, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "Unknown PCGSAIPatternType %d: use a, threshold or power", (int)pattern);
  if (gs->pattern != pattern) pc->setupcalled = PETSC_FALSE;
  gs->pattern = pattern;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetPattern_GSAI(PC pc, PCGSAIPatternType *pattern)
{
  PetscFunctionBegin;
  *pattern = ((PC_GSAI *)pc->data)->pattern;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetThreshold_GSAI(PC pc, PetscReal tau)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(tau >= 0.0 && tau <= 1.0, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI threshold tau must lie in [0, 1] (keep |a_ij| > (1 - tau) max |a|; 1 keeps every nonzero, 0 only the largest), got %g", (double)tau);
  if (gs->tau != tau) pc->setupcalled = PETSC_FALSE;
  gs->tau = tau;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetThreshold_GSAI(PC pc, PetscReal *tau)
{
  PetscFunctionBegin;
  *tau = ((PC_GSAI *)pc->data)->tau;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetPower_GSAI(PC pc, PetscInt power)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(power >= 1, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI power must be 1 or more (1: the thresholded pattern of A, k: the pattern of its k-th power), got %" PetscInt_FMT, power);
  if (gs->power != power) pc->setupcalled = PETSC_FALSE;
  gs->power = power;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetPower_GSAI(PC pc, PetscInt *power)
{
  PetscFunctionBegin;
  *power = ((PC_GSAI *)pc->data)->power;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAISetMaxNnz_GSAI(PC pc, PetscInt maxnnz)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(maxnnz >= 0, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCGSAI max nnz must be 0 (no cap) or at least 1 (the diagonal), got %" PetscInt_FMT, maxnnz);
  if (gs->maxnnz != maxnnz) pc->setupcalled = PETSC_FALSE;
  gs->maxnnz = maxnnz;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetMaxNnz_GSAI(PC pc, PetscInt *maxnnz)
{
  PetscFunctionBegin;
  *maxnnz = ((PC_GSAI *)pc->data)->maxnnz;
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
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(gs->M, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCGSAI has no approximate inverse yet: call PCSetUp() (or KSPSetUp()) first");
  *M = gs->M;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetSetUpInfo_GSAI(PC pc, PetscInt *nnz, PetscInt *nfallback, PetscBool *ondevice)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(gs->M, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCGSAI has no approximate inverse yet: call PCSetUp() (or KSPSetUp()) first");
  if (nnz) *nnz = gs->nnz;
  if (nfallback) *nfallback = gs->nfallback;
  if (ondevice) *ondevice = gs->ondevice;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCGSAIGetSetUpTimes_GSAI(PC pc, PetscReal *total, PetscReal *rows, PetscReal *pattern, PetscReal *solve, PetscReal *assemble)
{
  PC_GSAI *gs = (PC_GSAI *)pc->data;

  PetscFunctionBegin;
  PetscCheck(gs->M, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONGSTATE, "PCGSAI has no approximate inverse yet: call PCSetUp() (or KSPSetUp()) first");
  if (total) *total = (PetscReal)gs->ttotal;
  if (rows) *rows = (PetscReal)gs->time[GSAI_STAGE_ROWS];
  if (pattern) *pattern = (PetscReal)gs->time[GSAI_STAGE_PATTERN];
  if (solve) *solve = (PetscReal)gs->time[GSAI_STAGE_SOLVE];
  if (assemble) *assemble = (PetscReal)gs->time[GSAI_STAGE_ASSEMBLE];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   PCGSAI - "gsai" - a static sparse approximate inverse preconditioner with a fixed pattern, built row by row
   (or column by column) from independent small dense problems, on the host or, for a device matrix on one rank
   (`MATSEQAIJCUSPARSE`, `MATSEQSGDIACUDA`: read in place through its device CSR), on the GPU (Dehnavi's GSAI, seed 004
   chapter 5). `PCApply()` is one `MatMult()` with M.

   Options Database Keys:
+  -pc_gsai_type <general,spd>           - general: M minimises ||AM - I||_F (right) or ||MA - I||_F (left); spd: M = G^T G (FSAI), SPD for `KSPCG`
.  -pc_gsai_pattern <a,threshold,power>  - the pattern of M: that of A, thresholded A, or a power of thresholded A (always with the diagonal)
.  -pc_gsai_threshold <tau>              - 0 <= tau <= 1: keep |a_ij| > (1 - tau) max |a| of the row (left, spd) or column (right); default 0.9
.  -pc_gsai_power <k>                    - k >= 1: pattern of the k-th power of the thresholded A; default 2
.  -pc_gsai_max_nnz <n>                  - at most n nonzeros per row (left, spd) or column (right) of M: the diagonal and the largest others (0: no cap)
.  -pc_gsai_side <left,right>            - the side the general M is built for; default: `-ksp_pc_side`, else left
.  -pc_gsai_use_device <bool>            - build M on the GPU when A is a device matrix on one rank (default true)
-  -pc_gsai_device_workspace <KiB>       - limit of the device workspace of the local problems (0: half the free memory)

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
  gs->type      = PCGSAI_GENERAL;
  gs->pattern   = PCGSAI_PATTERN_A;
  gs->tau       = 0.9;
  gs->power     = 2;
  gs->maxnnz    = 0;
  gs->side      = PC_SIDE_DEFAULT;
  gs->usedevice = PETSC_TRUE;
  gs->sideused  = PC_LEFT;

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
- type - `PCGSAI_GENERAL` (min ||AM - I||_F or ||MA - I||_F, see `PCGSAISetSide()`) or `PCGSAI_SPD` (M = G^T G, G lower triangular)

  Options Database Key:
. -pc_gsai_type <general,spd> - the type

  Level: intermediate

  Note:
  Use `PCGSAI_SPD` with `KSPCG`: the general M is not symmetric. The spd type needs a symmetric positive
  definite A and uses its lower triangle.

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
- pattern - `PCGSAI_PATTERN_A` (the stored pattern of A), `PCGSAI_PATTERN_THRESHOLD` (A thresholded with `PCGSAISetThreshold()`) or `PCGSAI_PATTERN_POWER` (the `PCGSAISetPower()`-th power of the thresholded A)

  Options Database Key:
. -pc_gsai_pattern <a,threshold,power> - the pattern

  Level: intermediate

  Note:
  The diagonal is always in the pattern. The spd type keeps the lower triangular part. `PCGSAISetMaxNnz()`
  caps any of them.

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
- maxnnz - 0 (no cap) or the largest number of nonzeros, diagonal included

  Options Database Key:
. -pc_gsai_max_nnz <n> - the cap

  Level: intermediate

  Note:
  A capped row keeps its diagonal and the n - 1 other entries with the largest weight: |a| for the patterns
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

  Not Collective

  Input Parameter:
. pc - the `PCGSAI` preconditioner, set up

  Output Parameter:
. M - the approximate inverse (general type), or the lower triangular factor G with M = G^T G (spd type);
      owned by the PC, do not destroy it

  Level: advanced

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
