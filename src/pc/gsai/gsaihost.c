/*
   PCGSAI's host set-up for one or more ranks, on every rank for its own rows of N (gsaiimpl.h has the formulation):
     1. B: A (left, spd) or A^T (right), as a matrix whose rows can be read (converted to AIJ if needed).
     2. Rows: the rows of B that the pattern and the local problems need, the own ones read from B's CSR arrays; on
        several ranks the other ranks' ones come through MatCreateSubMatrices() (gsaipattern.c).
     3. Pattern: J_k for every local row k (threshold, powers, lower part for spd, cap; gsaipattern.c).
     4. Solve: one dense Householder QR least-squares problem (general) or Cholesky solve (spd) per row (gsaisolve.c).
     5. Assemble: N as MATAIJ with exact preallocation; M = N, N^T (right) or G = N (spd).
   Every step visits rows, entries and columns in increasing global order, so M does not depend on the
   number of ranks. It is also the reference of the device set-up (gsaicuda.cu).
*/
#include <petsctime.h>
#include "gsaiimpl.h"

static PetscErrorCode GSAIStageBegin(PetscLogEvent ev, PetscLogDouble *t0)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(ev, 0, 0, 0, 0));
  PetscCall(PetscTime(t0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GSAIStageEnd(PC_GSAI *gs, GSAIStage s, PetscLogEvent ev, PetscLogDouble t0)
{
  PetscLogDouble t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t1));
  gs->time[s] += t1 - t0;
  PetscCall(PetscLogEventEnd(ev, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B: the matrix whose rows the set-up reads (a new reference) */
static PetscErrorCode GSAIGetB(PC pc, Mat A, Mat *B)
{
  PC_GSAI    *gs = (PC_GSAI *)pc->data;
  PetscMPIInt size;
  PetscBool   isaij;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  gs->conversion[0] = 0;
  if (gs->sideused == PC_RIGHT) {
    Mat Aaij = A;
    PetscCall(PetscObjectBaseTypeCompareAny((PetscObject)A, &isaij, MATSEQAIJ, MATMPIAIJ, ""));
    if (!isaij) {
      PetscCall(PetscSNPrintf(gs->conversion, sizeof(gs->conversion), "%s converted to AIJ for the transpose", ((PetscObject)A)->type_name));
      PetscCall(PetscInfo(pc, "Right GSAI needs A^T: converting the %s matrix to MATAIJ first\n", ((PetscObject)A)->type_name));
      PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &Aaij));
    }
    PetscCall(MatTranspose(Aaij, MAT_INITIAL_MATRIX, B));
    if (Aaij != A) PetscCall(MatDestroy(&Aaij));
  } else {
    PetscBool readable = size == 1 ? (A->ops->getrow ? PETSC_TRUE : PETSC_FALSE) : (A->ops->createsubmatrices && A->ops->getrow ? PETSC_TRUE : PETSC_FALSE);
    if (readable && size > 1) { /* the fetched rows must be read with MatGetRow() on a sequential AIJ-like matrix */
      PetscCall(PetscObjectBaseTypeCompareAny((PetscObject)A, &isaij, MATMPIAIJ, ""));
      readable = isaij;
    }
    if (readable) {
      PetscCall(PetscObjectReference((PetscObject)A));
      *B = A;
    } else {
      PetscCall(PetscSNPrintf(gs->conversion, sizeof(gs->conversion), "%s converted to AIJ to read its rows", ((PetscObject)A)->type_name));
      PetscCall(PetscInfo(pc, "PCGSAI reads rows of A: converting the %s matrix to MATAIJ\n", ((PetscObject)A)->type_name));
      PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, B));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   The forced entries of the local rows of N whose b_kk is zero or not stored (general type): the rows j with
   b_jk != 0 (stored), from the transpose of B, with |b_jk|. Without one of them in the pattern, index k is out of reach
   of the local problem of row k (k would not be in I). Other rows get none. *nforced: the rows that have some.
*/
PetscErrorCode GSAIForcedEntries(Mat B, PetscInt first, PetscInt nloc, PetscInt **fptr, PetscInt **fcol, PetscReal **fval, PetscInt *nforced)
{
  Mat                Baij = B, Bt;
  PetscBool          isaij;
  PetscInt           ncols, nf = 0, tot = 0, *zero;
  const PetscInt    *cols;
  const PetscScalar *vals;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(nloc, &zero));
  for (PetscInt i = 0; i < nloc; i++) {
    PetscScalar d = 0.0;
    PetscCall(MatGetRow(B, first + i, &ncols, &cols, &vals));
    for (PetscInt e = 0; e < ncols; e++)
      if (cols[e] == first + i) d = vals[e];
    PetscCall(MatRestoreRow(B, first + i, &ncols, &cols, &vals));
    zero[i] = d == 0.0 ? 1 : 0;
  }
  PetscCall(PetscObjectBaseTypeCompareAny((PetscObject)B, &isaij, MATSEQAIJ, MATMPIAIJ, ""));
  if (!isaij) PetscCall(MatConvert(B, MATAIJ, MAT_INITIAL_MATRIX, &Baij));
  PetscCall(MatTranspose(Baij, MAT_INITIAL_MATRIX, &Bt));
  if (Baij != B) PetscCall(MatDestroy(&Baij));
  PetscCall(PetscMalloc1(nloc + 1, fptr));
  (*fptr)[0] = 0;
  for (PetscInt i = 0; i < nloc; i++) {
    PetscInt c = 0;
    if (zero[i]) {
      PetscCall(MatGetRow(Bt, first + i, &ncols, &cols, &vals));
      for (PetscInt e = 0; e < ncols; e++)
        if (vals[e] != 0.0 && cols[e] != first + i) c++;
      PetscCall(MatRestoreRow(Bt, first + i, &ncols, &cols, &vals));
      nf++;
    }
    tot += c;
    (*fptr)[i + 1] = tot;
  }
  PetscCall(PetscMalloc1(tot + 1, fcol));
  PetscCall(PetscMalloc1(tot + 1, fval));
  for (PetscInt i = 0; i < nloc; i++) {
    PetscInt c = (*fptr)[i];
    if (!zero[i]) continue;
    PetscCall(MatGetRow(Bt, first + i, &ncols, &cols, &vals));
    for (PetscInt e = 0; e < ncols; e++)
      if (vals[e] != 0.0 && cols[e] != first + i) {
        (*fcol)[c]   = cols[e];
        (*fval)[c++] = PetscAbsScalar(vals[e]);
      }
    PetscCall(MatRestoreRow(Bt, first + i, &ncols, &cols, &vals));
  }
  PetscCall(MatDestroy(&Bt));
  PetscCall(PetscFree(zero));
  *nforced = nf;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCSetUp_GSAI_Host(PC pc, Mat A, PetscBool reuse)
{
  PC_GSAI       *gs = (PC_GSAI *)pc->data;
  MPI_Comm       comm;
  PetscMPIInt    size;
  Mat            B, N;
  GSAIRows       R;
  PetscInt       first, nloc, nf = 0, m1 = 0, m2 = 0, *dnz, *onz, cstart, cend;
  PetscScalar   *vals;
  PetscLogDouble t0;
  GpukitMatCaps  caps;
  GSAIFailure    fail;
  PetscInt      *fptr = NULL, *fcol = NULL, nforced = 0, ncut = 0, nfcut = 0;
  PetscReal     *fval = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscMemzero(&R, sizeof(R)));

  /* 1. B and the rows of B */
  PetscCall(GSAIStageBegin(PC_GSAI_Rows, &t0));
  PetscCall(GSAIGetB(pc, A, &B));
  PetscCall(MatGetOwnershipRange(B, &first, NULL));
  PetscCall(MatGetLocalSize(B, &nloc, NULL));
  PetscCall(MatGetOwnershipRangeColumn(B, &cstart, &cend));
  gs->nloc = nloc;
  if (size == 1) {
    PetscInt *gid;
    PetscCall(PetscMalloc1(nloc, &gid));
    for (PetscInt i = 0; i < nloc; i++) gid[i] = i;
    PetscCall(GSAIRowsCreate(B, 0, nloc, gid, &R));
  } else if (!reuse) {
    PetscInt *gid;
    PetscCall(PetscMalloc1(nloc, &gid));
    for (PetscInt i = 0; i < nloc; i++) gid[i] = first + i;
    PetscCall(GSAIRowsCreate(B, first, nloc, gid, &R)); /* the own rows: enough for the first level */
  }
  PetscCall(GSAIStageEnd(gs, GSAI_STAGE_ROWS, PC_GSAI_Rows, t0));

  /* 2. the pattern: on several ranks, level l of the power needs the rows that level l-1 reaches */
  if (!reuse) {
    const PetscInt levels = gs->pattern == PCGSAI_PATTERN_POWER ? gs->power : 1;
    PetscCall(PetscFree(gs->Jptr));
    PetscCall(PetscFree(gs->Jcol));
    if (size > 1) {
      for (PetscInt l = 1; l < levels; l++) {
        PetscInt nneed, *need;
        IS       is;
        Mat     *sub;

        PetscCall(GSAIStageBegin(PC_GSAI_Pattern, &t0));
        PetscCall(GSAIPatternRows(gs, &R, first, nloc, l, PETSC_FALSE, NULL, NULL, NULL, NULL, NULL, &nneed, &need, NULL, NULL));
        PetscCall(GSAIStageEnd(gs, GSAI_STAGE_PATTERN, PC_GSAI_Pattern, t0));
        PetscCall(GSAIStageBegin(PC_GSAI_Rows, &t0));
        PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nneed, need, PETSC_OWN_POINTER, &is));
        PetscCall(GSAIRowsDestroy(&R));
        PetscCall(GSAIRowsFetch(B, is, MAT_INITIAL_MATRIX, &sub, &R));
        PetscCall(MatDestroySubMatrices(1, &sub));
        PetscCall(ISDestroy(&is));
        PetscCall(GSAIStageEnd(gs, GSAI_STAGE_ROWS, PC_GSAI_Rows, t0));
      }
    }
    PetscCall(GSAIStageBegin(PC_GSAI_Pattern, &t0));
    if (gs->type == PCGSAI_GENERAL && gs->nzerodiag > 0) PetscCall(GSAIForcedEntries(B, first, nloc, &fptr, &fcol, &fval, &nforced));
    PetscCall(GSAIPatternRows(gs, &R, first, nloc, levels, PETSC_TRUE, fptr, fcol, fval, &gs->Jptr, &gs->Jcol, NULL, NULL, &ncut, &nfcut));
    PetscCall(PetscFree(fptr));
    PetscCall(PetscFree(fcol));
    PetscCall(PetscFree(fval));
    gs->havepattern = PETSC_TRUE;
    gs->ptype       = gs->type;
    gs->pside       = gs->sideused;
    PetscCall(GSAIStageEnd(gs, GSAI_STAGE_PATTERN, PC_GSAI_Pattern, t0));
  }

  /* 3. on several ranks, the rows of B in the pattern */
  if (size > 1) {
    PetscCall(GSAIStageBegin(PC_GSAI_Rows, &t0));
    PetscCall(GSAIRowsDestroy(&R));
    if (!reuse) {
      PetscInt nJ, *need;
      PetscCall(GSAIPatternColumns(first, nloc, gs->Jptr, gs->Jcol, &nJ, &need));
      PetscCall(ISDestroy(&gs->fetchis));
      if (gs->fetched) PetscCall(MatDestroySubMatrices(1, &gs->fetched));
      PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nJ, need, PETSC_OWN_POINTER, &gs->fetchis));
    }
    PetscCall(GSAIRowsFetch(B, gs->fetchis, reuse && gs->fetched ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX, &gs->fetched, &R));
    PetscCall(GSAIStageEnd(gs, GSAI_STAGE_ROWS, PC_GSAI_Rows, t0));
  }

  /* 4. the local problems */
  PetscCall(GSAIStageBegin(PC_GSAI_Solve, &t0));
  PetscCall(PetscMalloc1(gs->Jptr[nloc], &vals));
  PetscCall(GSAISolveRows(pc, &R, first, vals, &nf, &m1, &m2, &fail));
  PetscCall(GSAIRowsDestroy(&R));
  PetscCall(GSAIStageEnd(gs, GSAI_STAGE_SOLVE, PC_GSAI_Solve, t0));
  PetscCall(GSAIAgreeFailure(pc, &fail));
  if (fail.row >= 0) {
    PetscCall(PetscFree(vals));
    PetscCall(MatDestroy(&B));
    PetscCall(GSAIRaiseFailure(pc, &fail));
  }

  /* 5. N, then M */
  PetscCall(GSAIStageBegin(PC_GSAI_Assemble, &t0));
  if (!reuse || !gs->N) {
    PetscCall(MatDestroy(&gs->N));
    PetscCall(MatCreate(comm, &N));
    PetscCall(MatSetSizes(N, nloc, cend - cstart, B->rmap->N, B->cmap->N));
    PetscCall(MatSetType(N, MATAIJ));
    PetscCall(PetscMalloc2(nloc, &dnz, nloc, &onz));
    for (PetscInt i = 0; i < nloc; i++) {
      dnz[i] = onz[i] = 0;
      for (PetscInt e = gs->Jptr[i]; e < gs->Jptr[i + 1]; e++) {
        if (gs->Jcol[e] >= cstart && gs->Jcol[e] < cend) dnz[i]++;
        else onz[i]++;
      }
    }
    PetscCall(MatSeqAIJSetPreallocation(N, 0, dnz));
    PetscCall(MatMPIAIJSetPreallocation(N, 0, dnz, 0, onz));
    PetscCall(PetscFree2(dnz, onz));
    PetscCall(MatSetOption(N, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
    gs->N = N;
  }
  N = gs->N;
  for (PetscInt i = 0; i < nloc; i++) {
    const PetscInt row = first + i;
    PetscCall(MatSetValues(N, 1, &row, gs->Jptr[i + 1] - gs->Jptr[i], gs->Jcol + gs->Jptr[i], vals + gs->Jptr[i], INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(N, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(N, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree(vals));
  PetscCall(MatDestroy(&gs->M));
  if (gs->type == PCGSAI_GENERAL && gs->sideused == PC_RIGHT) PetscCall(MatTranspose(N, MAT_INITIAL_MATRIX, &gs->M));
  else {
    PetscCall(PetscObjectReference((PetscObject)N));
    gs->M = N;
  }
  PetscCall(GpukitMatGetCaps(A, &caps));
  if (caps.device) {
    /* a copy, so that N keeps the host type it was preallocated with */
    Mat Mc;
    PetscCall(MatConvert(gs->M, MATAIJCUSPARSE, MAT_INITIAL_MATRIX, &Mc));
    PetscCall(MatDestroy(&gs->M));
    gs->M = Mc;
    PetscCall(PetscInfo(pc, "A is a CUDA matrix (%s) but M was built on the host; M is stored as MATAIJCUSPARSE\n", ((PetscObject)A)->type_name));
  }
  PetscCall(MatDestroy(&B));
  PetscCall(GSAIStageEnd(gs, GSAI_STAGE_ASSEMBLE, PC_GSAI_Assemble, t0));

  {
    PetscInt in[5] = {gs->Jptr[nloc], nf, nforced, ncut, nfcut}, out[5], inm[2] = {m1, m2}, outm[2];
    PetscCallMPI(MPI_Allreduce(in, out, 5, MPIU_INT, MPI_SUM, comm));
    PetscCallMPI(MPI_Allreduce(inm, outm, 2, MPIU_INT, MPI_MAX, comm));
    gs->nnz       = out[0];
    gs->nfallback = out[1];
    if (!reuse) { /* the pattern's counts stay those of the set-up that made it */
      gs->nforced   = out[2];
      gs->ncapped   = out[3];
      gs->forcedcut = out[4];
    }
    gs->maxn1 = outm[0];
    gs->maxn2 = outm[1];
  }
  if (gs->nfallback) PetscCall(PetscInfo(pc, "%" PetscInt_FMT " %ss of M fell back to the diagonal or to one entry (singular or ill-conditioned local problem)\n", gs->nfallback, GSAIWhat(gs)));
  if (!reuse && gs->nforced) PetscCall(PetscInfo(pc, "%" PetscInt_FMT " %ss of A have a zero or missing diagonal entry: their patterns include the structure of the matching %s of A^T (%" PetscInt_FMT " of them cut by the cap)\n", gs->nforced, GSAIWhat(gs), GSAIWhat(gs), gs->forcedcut));
  if (!reuse && gs->ncapped) PetscCall(PetscInfo(pc, "The cap of %" PetscInt_FMT " nonzeros per %s cut the pattern of %" PetscInt_FMT " %ss of M\n", gs->maxnnz, GSAIWhat(gs), gs->ncapped, GSAIWhat(gs)));
  PetscFunctionReturn(PETSC_SUCCESS);
}
