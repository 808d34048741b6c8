/*
   The AIJ forwarder: makes a matrix type that OWNS its storage (not AIJ-derived) work in every PETSc code path that
   AIJ works in, by running the READ-ONLY operations the type does not implement on an AIJ copy of the matrix.

   The type supplies one callback, getaij(A, &aij): it returns a MATSEQAIJ (one-rank communicator) or MATMPIAIJ
   copy of A that A owns (the caller never destroys it), current with A's values: the type keeps it and refreshes
   it when A's PetscObjectState changed (values only when A->nonzerostate did not). The copy must have A's layouts.

   GpukitMatAIJForwardInstall(A, getaij), called by the type's constructor AFTER it set its own ops:
   - for every read-only op of struct _MatOps still NULL on A, installs a forwarder that calls getaij and runs the
     op on the copy (SOR, sub-matrices, overlap, diagonal block, row/column IJ structure, transpose, norms,
     row/column reductions, symmetry tests, getinfo, getvalues, getrow, view (non-ASCII viewers), convert to any
     type, equal, permute, products, create graph, ...). Ops that change A's values or structure (setvalues,
     scale, shift, zerorows, axpy, ...) are NEVER forwarded: they stay the type's own, or NULL ("No method");
   - composes "MatProductSetFromOptions_<type>_<other>_C" and the ops->productsetfromoptions so that MatProduct
     (AB, AtB, ABt, PtAP, RARt, ABC) works with such a matrix as A, B or C: the product is computed on the AIJ
     copies into an AIJ matrix; MAT_REUSE recomputes on refreshed copies (A's values may change in between);
   - results of transposes, sub-matrices, converts and products are AIJ (or the type asked for).
   Calling it twice is harmless. The forwarder keeps its own data in a container composed on A under the name
   "GpukitMatAIJFwd" (destroyed with A).

   GpukitMatAIJForwardRegisterFactors(type): MatSolverTypeRegister(MATSOLVERPETSC, type, LU/ILU/Cholesky/ICC):
   PETSc's AIJ factorizations of the AIJ copy (one rank), refreshed at every numeric factorization; on more than
   one rank MUMPS / SuperLU_dist when PETSc has them (registered as MATSOLVERMUMPS / MATSOLVERSUPERLU_DIST for
   the type). Call it once per type name (seq and mpi), e.g. in the package initializer.

   GpukitMatAIJForwardUninstall(A): the type's destroy calls it (removes the container and the functions the
   forwarder composed on A, so that a MatSetType() to another type leaves nothing of it behind).

   GpukitMatAIJForwardGetAIJ(A, &aij): the copy through A's forwarder (for the type's own code, e.g. a native op
   that wants AIJ's implementation for a special case); errors clearly if A has no forwarder.
*/
#pragma once

#include <petsc/private/matimpl.h>
#include "gpukitimpl.h"

typedef PetscErrorCode (*GpukitMatGetAIJFn)(Mat, Mat *);

PETSC_INTERN PetscErrorCode GpukitMatAIJForwardInstall(Mat A, PetscErrorCode (*getaij)(Mat A, Mat *aij));
PETSC_INTERN PetscErrorCode GpukitMatAIJForwardRegisterFactors(MatType type);
PETSC_INTERN PetscErrorCode GpukitMatAIJForwardRegisterDeviceFactors(MatType type);
PETSC_INTERN PetscErrorCode GpukitMatAIJForwardUninstall(Mat A);
PETSC_INTERN PetscErrorCode GpukitMatAIJForwardGetAIJ(Mat A, Mat *aij);
