/*
   PETSc components that read AIJ's private structures and therefore refuse every other matrix type by name:
   - PCML ("Matrix type '...' cannot be used with ML. ML can only handle AIJ matrices."; it accepts a type whose name
     begins with seqaij/mpiaij, such as MATAMB's seqaijamb);
   - the greedy MatColoring ("Matrix must be AIJ for greedy coloring", -mat_coloring_type greedy, e.g. for SNES's
     finite-difference Jacobian with -snes_fd_color_use_mat; its parallel distance-1 colouring accepts MATMPIAIJ only,
     by exact name, so it refuses MATAMB's mpiaijamb too).
   A program that runs with AIJ must run with gpukit's types too. gpukit therefore registers its own constructor
   under each of the two names; it calls PETSc's constructor (found in PCList / MatColoringList when gpukit is
   loaded) and wraps the one method that reads the matrix (PCSetUp, MatColoringApply). For a matrix of a gpukit type
   that runs the operations it lacks on an AIJ copy (the AIJ forwarder: MATSGDIA, MATDCSR and their CUDA twins), the
   wrapped method runs on that copy (current with the matrix, owned by it); the colouring of a MATAMB/MATAMBCUDA
   matrix (derived from AIJ) runs on a MatConvert() to AIJ kept with the matrix (until it is destroyed) and made again
   when it changes; for any other matrix, and for ML on MATAMB, it is PETSc's own, untouched. So the result is AIJ's: ML's hierarchy and smoothers, and the colouring, are those of the same
   matrix in AIJ form (ML keeps the copy as its finest preconditioning operator; with a reused or lagged
   preconditioner its fine-level smoother therefore keeps the values of the set-up, where PETSc's ML on an AIJ matrix
   would smooth with the current ones). -info says when the copy is used.
*/
#include <petsc/private/pcimpl.h>
#include "gpukitaijfwd.h"
#include <petscgpukit.h>

static PetscErrorCode (*GkPCCreateML)(PC)                               = NULL; /* PETSc's PCCreate_ML */
static PetscErrorCode (*GkPCSetUpML)(PC)                                = NULL; /* PETSc's PCSetUp_ML */
static PetscErrorCode (*GkMatColoringCreateGreedy)(MatColoring)         = NULL; /* PETSc's MatColoringCreate_Greedy */
static PetscErrorCode (*GkMatColoringApplyGreedy)(MatColoring, ISColoring *) = NULL;

static PetscInt GkAIJOnlyStateId = -1; /* composed data: A's state when its converted copy was made */

/* the AIJ copy of A if A is a gpukit matrix, else NULL (PETSc's own code decides):
   - a type with the AIJ forwarder (MATSGDIA, MATDCSR and their CUDA twins): the forwarder's copy;
   - with derived true, a type derived from AIJ under another name (MATAMB, MATAMBCUDA): a MatConvert() to MATAIJ,
     composed on A and made again when A's state has changed.
   The copy gets A's null spaces (PCML reads the near null space, e.g. rigid-body modes, from the matrix it is given;
   setting them is the one change gpukit makes to the forwarder's copy) */
static PetscErrorCode GkAIJOnlyGetCopy(Mat A, PetscBool derived_too, Mat *aij)
{
  PetscObject  fwd = NULL, prev = NULL;
  PetscBool    derived, valid = PETSC_FALSE;
  PetscInt     st = 0;
  MatNullSpace sp;

  PetscFunctionBegin;
  *aij = NULL;
  if (!A) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectQuery((PetscObject)A, "GpukitMatAIJFwd", &fwd));
  if (fwd) PetscCall(GpukitMatAIJForwardGetAIJ(A, aij));
  else {
    if (!derived_too) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &derived, MATSEQAMB, MATMPIAMB, MATSEQAMBCUDA, MATMPIAMBCUDA, ""));
    if (!derived) PetscFunctionReturn(PETSC_SUCCESS);
    if (GkAIJOnlyStateId < 0) PetscCall(PetscObjectComposedDataRegister(&GkAIJOnlyStateId));
    PetscCall(PetscObjectQuery((PetscObject)A, "GpukitAIJOnlyCopy", &prev));
    if (prev) PetscCall(PetscObjectComposedDataGetInt((PetscObject)A, GkAIJOnlyStateId, st, valid)); /* valid: A unchanged since */
    (void)st;
    if (prev && valid) *aij = (Mat)prev;
    else {
      PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, aij));
      PetscCall(PetscObjectCompose((PetscObject)A, "GpukitAIJOnlyCopy", (PetscObject)*aij)); /* A holds it (and drops the old one) */
      PetscCall(MatDestroy(aij));
      PetscCall(PetscObjectQuery((PetscObject)A, "GpukitAIJOnlyCopy", (PetscObject *)aij));
      PetscCall(PetscObjectComposedDataSetInt((PetscObject)A, GkAIJOnlyStateId, 1));
    }
  }
  PetscCall(MatGetNearNullSpace(A, &sp));
  PetscCall(MatSetNearNullSpace(*aij, sp));
  PetscCall(MatGetNullSpace(A, &sp));
  PetscCall(MatSetNullSpace(*aij, sp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCSetUp_GkML(PC pc)
{
  Mat            pmat = pc->pmat, aij;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(GkAIJOnlyGetCopy(pmat, PETSC_FALSE, &aij)); /* ML takes MATAMB as it is (its name begins with aij's) */
  if (!aij) {
    PetscCall((*GkPCSetUpML)(pc));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscInfo(pc, "gpukit: PCML (which reads AIJ's structures) runs on the AIJ copy of the %s matrix\n", ((PetscObject)pmat)->type_name));
  pc->pmat = aij; /* for the set-up only; pc->pmat is the user's matrix again before any error returns */
  ierr     = (*GkPCSetUpML)(pc);
  pc->pmat = pmat;
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCCreate_GkML(PC pc)
{
  PetscFunctionBegin;
  PetscCall((*GkPCCreateML)(pc));
  PetscCheck(pc->ops->setup, PetscObjectComm((PetscObject)pc), PETSC_ERR_PLIB, "PETSc's PCML constructor set no set-up method");
  GkPCSetUpML    = pc->ops->setup; /* the same function for every PCML */
  pc->ops->setup = PCSetUp_GkML;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatColoringApply_GkGreedy(MatColoring mc, ISColoring *iscoloring)
{
  Mat            mat = mc->mat, aij;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(GkAIJOnlyGetCopy(mat, PETSC_TRUE, &aij));
  if (!aij) {
    PetscCall((*GkMatColoringApplyGreedy)(mc, iscoloring));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscInfo(mc, "gpukit: the greedy colouring (which reads AIJ's structures) runs on the AIJ copy of the %s matrix\n", ((PetscObject)mat)->type_name));
  mc->mat = aij; /* the same rows, columns and layouts; mc->mat is the user's matrix again before any error returns */
  ierr    = (*GkMatColoringApplyGreedy)(mc, iscoloring);
  mc->mat = mat;
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatColoringCreate_GkGreedy(MatColoring mc)
{
  PetscFunctionBegin;
  PetscCall((*GkMatColoringCreateGreedy)(mc));
  PetscCheck(mc->ops->apply, PetscObjectComm((PetscObject)mc), PETSC_ERR_PLIB, "PETSc's greedy MatColoring constructor set no apply method");
  GkMatColoringApplyGreedy = mc->ops->apply;
  mc->ops->apply           = MatColoringApply_GkGreedy;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* called by the package initializer after MatInitializePackage() and PCInitializePackage() (which register PETSc's
   own constructors), again after a PetscFinalize()/PetscInitialize() pair; a PETSc without ML registers no PCML, and
   then nothing is wrapped */
PetscErrorCode GpukitAIJOnlyRegister_Private(void)
{
  PetscErrorCode (*pcf)(PC)          = NULL;
  PetscErrorCode (*mcf)(MatColoring) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscFunctionListFind(PCList, PCML, &pcf));
  if (pcf && pcf != PCCreate_GkML) {
    GkPCCreateML = pcf;
    PetscCall(PCRegister(PCML, PCCreate_GkML));
  }
  PetscCall(PetscFunctionListFind(MatColoringList, MATCOLORINGGREEDY, &mcf));
  if (mcf && mcf != MatColoringCreate_GkGreedy) {
    GkMatColoringCreateGreedy = mcf;
    PetscCall(MatColoringRegister(MATCOLORINGGREEDY, MatColoringCreate_GkGreedy));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
