/*
   MATSGDIA's AIJ copy: the callback through which the AIJ forwarder (src/mat/utils/gpukitaijfwd.h) runs every
   read-only operation MATSGDIA does not implement itself (SOR, sub-matrices and overlap for PCASM/PCGASM/PCREDUNDANT,
   the diagonal block for PCBJACOBI, products for Galerkin coarse operators, the graph for PCGAMG, symmetry tests,
   row/column IJ structure for orderings, ...) and the factorizations registered for the types (PETSc's on one rank,
   MUMPS and SuperLU_dist on more).

   One copy, with inodes, as DMCreateMatrix()'s AIJ has them: SOR is AIJ's inode SOR, and a factorization is AIJ's
   inode factorization with the ordering AIJ computes (the forwarder expands inode-compressed orderings through the
   same copy). It is made on first use, kept, and refreshed in place when the matrix's state changes (its nonzero
   structure, the whole stencil, never changes).
*/
#include "sgdiaimpl.h"

PetscErrorCode SGDIAGetAIJ_Private(Mat A, Mat *aij)
{
  Mat_SGDIA       *sg = (Mat_SGDIA *)A->data;
  PetscObjectState st;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(A, PETSC_FALSE));
  PetscCall(PetscObjectStateGet((PetscObject)A, &st));
  if (!sg->aij || st != sg->aijstate) {
    PetscCall(PetscInfo(A, "%s the AIJ copy of the %s matrix (operations MATSGDIA does not implement run on it)\n", sg->aij ? "Refreshing" : "Making", ((PetscObject)A)->type_name));
    PetscCall(MatConvert_SGDIA_AIJ(A, MATAIJ, sg->aij ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX, &sg->aij));
    sg->aijstate = st;
  }
  *aij = sg->aij;
  PetscFunctionReturn(PETSC_SUCCESS);
}
