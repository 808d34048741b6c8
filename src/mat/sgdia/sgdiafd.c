/*
   Finite-difference Jacobians by colouring into MATSGDIA (what SNES does by default on a DMDA).

   Every stored entry couples an owned row to a column of the ghosted local box, so one pass over the
   storage per colour fills the entries whose column has that colour, from F(x + h e_colour) - F(x).
   The differencing formula is the one of PETSc's AIJ implementation, so both give the same Jacobian.
*/
#include "sgdiaimpl.h"

PetscErrorCode MatSGDIAFDColoringCreate_Private(Mat A, ISColoring iscoloring, MatFDColoring c)
{
  PetscFunctionBegin;
  (void)iscoloring;
  PetscCheck(c->ctype == IS_COLORING_GLOBAL, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "MATSGDIA takes IS_COLORING_GLOBAL colourings (as DMCreateColoring() gives SNES by default), not IS_COLORING_LOCAL");
  PetscCall(MatGetSize(A, &c->M, &c->N));
  PetscCall(MatGetLocalSize(A, &c->m, NULL));
  PetscCall(MatGetOwnershipRange(A, &c->rstart, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatSGDIAFDColoringSetUp_Private(Mat A, ISColoring iscoloring, MatFDColoring c)
{
  Mat_SGDIA            *sg = (Mat_SGDIA *)A->data;
  PetscInt              n, nc, nl;
  const ISColoringValue *colors;
  Vec                   g;
  PetscScalar          *ga;
  const PetscScalar    *la;

  PetscFunctionBegin;
  PetscCall(ISColoringGetColors(iscoloring, &n, &nc, &colors));
  PetscCheck(n == sg->m, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "The colouring has %" PetscInt_FMT " local columns, the matrix %" PetscInt_FMT, n, sg->m);
  c->ncolors = nc;
  /* the columns of each colour, as PETSc's own implementations keep them (MatFDColoringView(), Destroy) */
  PetscCall(ISColoringGetIS(iscoloring, PETSC_OWN_POINTER, PETSC_IGNORE, &c->isa));
  PetscCall(PetscMalloc2(nc, &c->ncolumns, nc, &c->columns));
  for (PetscInt k = 0; k < nc; k++) {
    PetscCall(ISGetLocalSize(c->isa[k], &c->ncolumns[k]));
    PetscCall(ISGetIndices(c->isa[k], (const PetscInt **)&c->columns[k]));
  }
  /* colour of every column of the ghosted local box, as the DMDA's scatter sees it */
  PetscCall(DMGetGlobalVector(sg->da, &g));
  PetscCall(VecGetArrayWrite(g, &ga));
  for (PetscInt i = 0; i < n; i++) ga[i] = (PetscScalar)colors[i];
  PetscCall(VecRestoreArrayWrite(g, &ga));
  PetscCall(DMGlobalToLocalBegin(sg->da, g, INSERT_VALUES, sg->xl));
  PetscCall(DMGlobalToLocalEnd(sg->da, g, INSERT_VALUES, sg->xl));
  PetscCall(DMRestoreGlobalVector(sg->da, &g));
  PetscCall(VecGetLocalSize(sg->xl, &nl));
  PetscCall(PetscFree(sg->colorl));
  PetscCall(PetscMalloc1(nl, &sg->colorl));
  PetscCall(VecGetArrayRead(sg->xl, &la));
  for (PetscInt i = 0; i < nl; i++) sg->colorl[i] = (PetscInt)PetscRealPart(la[i]);
  PetscCall(VecRestoreArrayRead(sg->xl, &la));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatSGDIAFDColoringApply_Private(Mat J, MatFDColoring c, Vec x1, void *sctx)
{
  Mat_SGDIA *sg = (Mat_SGDIA *)J->data;
  PetscErrorCode (*f)(void *, Vec, Vec, void *) = (PetscErrorCode (*)(void *, Vec, Vec, void *))c->f;
  const PetscInt     dof = sg->dof, m = sg->m;
  PetscReal          eps = c->error_rel, umin = c->umin, unorm;
  PetscScalar        dx = 0.0, *w3a, *scale = NULL;
  const PetscScalar *dy, *xla;
  Vec                w1 = c->w1, w2 = c->w2, w3;
  PetscBool          wp = c->htype[0] == 'w' ? PETSC_TRUE : PETSC_FALSE;
  PetscInt           nl;

  PetscFunctionBegin;
  PetscCall(SGDIAHostAccess(J, PETSC_TRUE));
  PetscCheck(sg->colorl, PetscObjectComm((PetscObject)J), PETSC_ERR_ARG_WRONGSTATE, "Call MatFDColoringSetUp() first");
  PetscCall(PetscLogEventBegin(MAT_SGDIA_FDColor, J, 0, 0, 0));
  if (!c->fset) PetscCall((*f)(sctx, x1, w1, c->fctx));
  else c->fset = PETSC_FALSE;
  if (!c->w3) PetscCall(VecDuplicate(x1, &c->w3));
  w3 = c->w3;

  /* 1/h for every ghosted column */
  if (wp) {
    PetscCall(VecNorm(x1, NORM_2, &unorm));
    dx = 1.0 / (PetscSqrtReal(1.0 + unorm) * eps);
  } else {
    PetscCall(DMGlobalToLocalBegin(sg->da, x1, INSERT_VALUES, sg->xl));
    PetscCall(DMGlobalToLocalEnd(sg->da, x1, INSERT_VALUES, sg->xl));
    PetscCall(VecGetLocalSize(sg->xl, &nl));
    PetscCall(PetscMalloc1(nl, &scale));
    PetscCall(VecGetArrayRead(sg->xl, &xla));
    for (PetscInt i = 0; i < nl; i++) {
      PetscScalar h = xla[i];
      if (PetscAbsScalar(h) < umin) h = PetscRealPart(h) >= 0.0 ? umin : -umin;
      h *= eps;
      scale[i] = 1.0 / h;
    }
    PetscCall(VecRestoreArrayRead(sg->xl, &xla));
  }

  PetscCall(PetscArrayzero(sg->v, sg->nv));
  for (PetscInt k = 0; k < c->ncolors; k++) {
    c->currentcolor = k;
    PetscCall(VecCopy(x1, w3));
    PetscCall(VecGetArray(w3, &w3a));
    for (PetscInt p = 0; p < sg->np; p++) {
      PetscInt g[3], gl;
      SGDIAPointInfo(sg, p, g, &gl);
      for (PetscInt r = 0; r < dof; r++)
        if (sg->colorl[gl * dof + r] == k) w3a[p * dof + r] += wp ? 1.0 / dx : 1.0 / scale[gl * dof + r];
    }
    PetscCall(VecRestoreArray(w3, &w3a));
    PetscCall((*f)(sctx, w3, w2, c->fctx));
    PetscCall(VecAXPY(w2, -1.0, w1));
    PetscCall(VecGetArrayRead(w2, &dy));
    for (PetscInt p = 0; p < sg->np; p++) {
      PetscInt g[3], gl;
      SGDIAPointInfo(sg, p, g, &gl);
      for (PetscInt s = 0; s < sg->k; s++) {
        PetscInt col0 = (gl + sg->goff[s]) * dof;
        if (!SGDIANeighbourInDomain(sg, g, s) || !SGDIACanonical(sg, g, s)) continue;
        for (PetscInt cc = 0; cc < dof; cc++) {
          if (sg->colorl[col0 + cc] != k) continue;
          for (PetscInt r = 0; r < dof; r++) sg->v[(s * dof + cc) * m + p * dof + r] = dy[p * dof + r] * (wp ? dx : scale[col0 + cc]);
        }
      }
    }
    PetscCall(VecRestoreArrayRead(w2, &dy));
  }
  c->currentcolor = -1;
  PetscCall(PetscFree(scale));
  PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscLogEventEnd(MAT_SGDIA_FDColor, J, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}
