/*
   MATMPIAMB ("mpiaijamb"): a MATMPIAIJ whose diagonal and off-diagonal blocks are seqaijamb (or, through the same
   code, seqaijambcuda for MATMPIAMBCUDA). MPIAIJ's MatMult overlaps the halo exchange with the diagonal block's
   product and calls the blocks' mult/multadd, so both blocks use the AMB kernels. MPIAIJ creates or recreates its
   blocks as plain seqaij at preallocation and at (dis)assembly: the wrapped MatMPIAIJSetPreallocation_C and
   MatAssemblyEnd retype them in place afterwards.
*/
#include "ambimpl.h"

static struct _MatOps MPIAIJOps; /* MPIAIJ's operations, the parent of every mpiaijamb */
static PetscBool      MPIAIJOpsSaved = PETSC_FALSE;

static PetscErrorCode AMBSaveMPIAIJOps(void)
{
  Mat T;

  PetscFunctionBegin;
  if (MPIAIJOpsSaved) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatCreate(PETSC_COMM_SELF, &T));
  PetscCall(MatSetType(T, MATMPIAIJ));
  MPIAIJOps      = *T->ops;
  MPIAIJOpsSaved = PETSC_TRUE;
  PetscCall(MatDestroy(&T));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the block type's in-place converter from seqaij (the "MatConvert_seqaij_<blocktype>_C" its matrices compose), found
   once on a scratch matrix of that type; called directly because MatConvert() refuses unassembled matrices */
static PetscErrorCode AMBFindBlockConvert(MatType blocktype, PetscErrorCode (**conv)(Mat, MatType, MatReuse, Mat *))
{
  Mat  T;
  char name[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_seqaij_%s_C", blocktype));
  PetscCall(MatCreate(PETSC_COMM_SELF, &T));
  PetscCall(MatSetType(T, blocktype));
  PetscCall(PetscObjectQueryFunction((PetscObject)T, name, conv));
  PetscCall(MatDestroy(&T));
  PetscCheck(*conv, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Matrix type %s composes no %s", blocktype, name);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* retype the blocks that are plain seqaij into the block type, and give both blocks the MPI matrix's options */
static PetscErrorCode MatMPIAMBRetypeBlocks_Private(Mat A)
{
  Mat_MPIAMB *mamb = (Mat_MPIAMB *)A->spptr;
  Mat         blk[2];
  PetscErrorCode (*conv)(Mat, MatType, MatReuse, Mat *) = NULL;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &blk[0], &blk[1], NULL));
  for (PetscInt i = 0; i < 2; i++) {
    PetscBool isblk, isaij;
    Mat       X = blk[i];
    if (!X) continue;
    PetscCall(PetscObjectTypeCompare((PetscObject)X, mamb->blocktype, &isblk));
    if (!isblk) {
      PetscCall(PetscObjectTypeCompare((PetscObject)X, MATSEQAIJ, &isaij));
      PetscCheck(isaij, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: unexpected block type %s", ((PetscObject)A)->type_name, ((PetscObject)X)->type_name);
      if (!conv) PetscCall(AMBFindBlockConvert(mamb->blocktype, &conv));
      PetscCall((*conv)(X, mamb->blocktype, MAT_INPLACE_MATRIX, &X));
      PetscCheck(X == blk[i], PETSC_COMM_SELF, PETSC_ERR_PLIB, "in-place block conversion changed the Mat");
    }
    PetscCall(MatSeqAMBSetOptions_Private(X, &mamb->opt));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMPIAIJSetPreallocation_MPIAMB(Mat A, PetscInt d_nz, const PetscInt d_nnz[], PetscInt o_nz, const PetscInt o_nnz[])
{
  Mat_MPIAMB *mamb = (Mat_MPIAMB *)A->spptr;

  PetscFunctionBegin;
  PetscCall((*mamb->mpiaijprealloc)(A, d_nz, d_nnz, o_nz, o_nnz));
  PetscCall(MatMPIAMBRetypeBlocks_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAssemblyEnd_MPIAMB(Mat A, MatAssemblyType mode)
{
  PetscFunctionBegin;
  PetscCall((*MPIAIJOps.assemblyend)(A, mode));
  PetscCall(MatMPIAMBRetypeBlocks_Private(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetFromOptions_MPIAMB(Mat A, GpukitOptionItems PetscOptionsObject)
{
  Mat_MPIAMB *mamb = (Mat_MPIAMB *)A->spptr;
  Mat         Ad, Ao;

  PetscFunctionBegin;
  if (MPIAIJOps.setfromoptions) PetscCall((*MPIAIJOps.setfromoptions)(A, PetscOptionsObject));
  PetscOptionsHeadBegin(PetscOptionsObject, "MATAMB options");
  PetscCall(AMBOptionsSetFromOptions_Private((PetscObject)A, PetscOptionsObject, &mamb->opt));
  PetscOptionsHeadEnd();
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  if (Ad || Ao) PetscCall(MatMPIAMBRetypeBlocks_Private(A));
  for (int k = 0; k < 2; k++) { /* MATMPIAMBCUDA: the device options (-mat_amb_cuda_*) reach the blocks */
    Mat X = k ? Ao : Ad;
    PetscErrorCode (*f)(Mat, Mat) = NULL;
    if (!X) continue;
    PetscCall(PetscObjectQueryFunction((PetscObject)X, "MatAMBCUDASetBlockOptions_C", &f));
    if (f) PetscCall((*f)(X, A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatView_MPIAMB(Mat A, PetscViewer viewer)
{
  Mat_MPIAMB       *mamb = (Mat_MPIAMB *)A->spptr;
  PetscBool         isascii;
  PetscViewerFormat format;

  PetscFunctionBegin;
  PetscCall((*MPIAIJOps.view)(A, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (isascii && (format == PETSC_VIEWER_ASCII_INFO || format == PETSC_VIEWER_ASCII_INFO_DETAIL) && A->assembled) {
    Mat              Ad, Ao;
    const AMBLayout *Ld, *Lo;
    PetscCall(AMBOptionsView_Private(&mamb->opt, viewer));
    PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
    PetscCall(MatSeqAMBGetLayout_Private(Ad, &Ld));
    PetscCall(MatSeqAMBGetLayout_Private(Ao, &Lo));
    PetscCall(PetscViewerASCIIPushSynchronized(viewer));
    PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "  [%d] diagonal block: b %" PetscInt_FMT ", %" PetscInt_FMT " chunks, model %.4g bytes, %s (%s)\n", PetscGlobalRank, Ld->b, Ld->nchunks, Ld->bytes, Ld->fallback ? "CSR fallback" : "AMB", Ld->why));
    PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "  [%d] off-diagonal block: %" PetscInt_FMT " columns, b %" PetscInt_FMT ", %" PetscInt_FMT " chunks, model %.4g bytes, %s (%s)\n", PetscGlobalRank, Lo->n, Lo->b, Lo->nchunks, Lo->bytes, Lo->fallback ? "CSR fallback" : "AMB", Lo->why));
    { /* MATMPIAMBCUDA: the layout each block's device product uses (AMB, csr, sell, sellk: the tuner's choice) */
      PetscErrorCode (*lf)(Mat, const char **) = NULL;
      const char *ld = NULL, *lo = NULL;
      PetscCall(PetscObjectQueryFunction((PetscObject)Ad, "MatAMBCUDAGetLayout_C", &lf));
      if (lf) PetscCall((*lf)(Ad, &ld));
      lf = NULL;
      PetscCall(PetscObjectQueryFunction((PetscObject)Ao, "MatAMBCUDAGetLayout_C", &lf));
      if (lf) PetscCall((*lf)(Ao, &lo));
      if (ld || lo) PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "  [%d] on the GPU: diagonal block layout %s, off-diagonal block layout %s\n", PetscGlobalRank, ld ? ld : "-", lo ? lo : "-"));
    }
    PetscCall(PetscViewerFlush(viewer));
    PetscCall(PetscViewerASCIIPopSynchronized(viewer));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDuplicate_MPIAMB(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_MPIAMB *mamb = (Mat_MPIAMB *)A->spptr;

  PetscFunctionBegin;
  PetscCall((*MPIAIJOps.duplicate)(A, op, B)); /* a matrix of A's type, blocks duplicated from A's */
  if ((*B)->spptr) {
    ((Mat_MPIAMB *)(*B)->spptr)->opt = mamb->opt;
    PetscCall(MatMPIAMBRetypeBlocks_Private(*B));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAMBGetInfo_MPIAMB(Mat A, PetscInt *b, PetscInt *W, PetscBool *fallback, PetscLogDouble *bytes)
{
  Mat Ad;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, NULL, NULL));
  PetscCall(MatAMBGetInfo(Ad, b, W, fallback, bytes));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_MPIAIJ_MPIAMB(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscFunctionBegin;
  (void)type;
  PetscCall(MatConvert_MPIAIJ_MPIAMB_Private(A, MATSEQAMB, MATMPIAMB, reuse, newmat));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* compose (on) or remove (off) the functions of an MPI AMB matrix of type newtype */
static PetscErrorCode MatMPIAMBCompose_Private(Mat B, const char *newtype, PetscBool on)
{
  char      name[256];
  PetscBool ishost;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%s_mpiaij_C", newtype));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, name, on ? GPUKIT_FN(MatConvert_MPIAMB_MPIAIJ) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatAMBGetInfo_C", on ? GPUKIT_FN(MatAMBGetInfo_MPIAMB) : NULL));
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatProductSetFromOptions_%s_mpimaij_C", newtype)); /* PtAP with MATMAIJ, amb.c */
  PetscCall(PetscObjectComposeFunction((PetscObject)B, name, on ? GPUKIT_FN(MatProductSetFromOptions_AMB_AsAIJ) : NULL));
  PetscCall(MatAMBComposeAIJConversions_Private(B, newtype, MATMPIAIJ, on)); /* to MATHYPRE, MATIS: PETSc's for MPIAIJ (amb.c) */
  PetscCall(PetscStrcmp(newtype, MATMPIAMB, &ishost));
  if (ishost) { /* MATMPIAMBCUDA composes its own converters from mpiaij */
    PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatConvert_mpiaij_mpiaijamb_C", on ? GPUKIT_FN(MatConvert_MPIAIJ_MPIAMB) : NULL));
    PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatConvert_mpiaij_mpiamb_C", on ? GPUKIT_FN(MatConvert_MPIAIJ_MPIAMB) : NULL));
    PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatConvert_mpiaij_amb_C", on ? GPUKIT_FN(MatConvert_MPIAIJ_MPIAMB) : NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_MPIAMB(Mat A)
{
  PetscFunctionBegin;
  if (A->spptr) PetscCall(MatMPIAMBCompose_Private(A, ((PetscObject)A)->type_name, PETSC_FALSE));
  PetscCall(PetscFree(A->spptr));
  PetscCall((*MPIAIJOps.destroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the same pattern on both blocks and the same off-diagonal column map */
static PetscErrorCode AMBMPISamePattern(Mat A, Mat B, PetscBool *same)
{
  Mat             Ad, Ao, Bd, Bo;
  const PetscInt *ga, *gb;

  PetscFunctionBegin;
  *same = PETSC_FALSE;
  if (A->rmap->n != B->rmap->n || A->cmap->n != B->cmap->n || !A->assembled || !B->assembled) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &ga));
  PetscCall(MatMPIAIJGetSeqAIJ(B, &Bd, &Bo, &gb));
  if (Ao->cmap->n == Bo->cmap->n && Ad->rmap->n == Bd->rmap->n) {
    const PetscInt *ia, *ja, *ib, *jb;
    PetscBool       s1 = PETSC_FALSE, s2 = PETSC_FALSE, s3 = PETSC_FALSE;
    PetscCall(PetscArraycmp(ga, gb, Ao->cmap->n, &s1));
    PetscCall(MatSeqAIJGetCSRAndMemType(Ad, &ia, &ja, NULL, NULL));
    PetscCall(MatSeqAIJGetCSRAndMemType(Bd, &ib, &jb, NULL, NULL));
    PetscCall(PetscArraycmp(ia, ib, Ad->rmap->n + 1, &s2));
    if (s2) PetscCall(PetscArraycmp(ja, jb, ia[Ad->rmap->n], &s2));
    PetscCall(MatSeqAIJGetCSRAndMemType(Ao, &ia, &ja, NULL, NULL));
    PetscCall(MatSeqAIJGetCSRAndMemType(Bo, &ib, &jb, NULL, NULL));
    PetscCall(PetscArraycmp(ia, ib, Ao->rmap->n + 1, &s3));
    if (s3) PetscCall(PetscArraycmp(ja, jb, ia[Ao->rmap->n], &s3));
    *same = (PetscBool)(s1 && s2 && s3);
  }
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, same, 1, GPUKIT_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)A)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a new matrix of type newtype with A's layout, rows and values (global columns), assembled */
static PetscErrorCode AMBMPIBuildFromRows(Mat A, MatType newtype, Mat *C)
{
  PetscInt     m, rstart, rend, *ii, *jj;
  PetscScalar *vv;
  PetscCount   nz = 0;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  m = rend - rstart;
  PetscCall(PetscMalloc1(m + 1, &ii));
  ii[0] = 0;
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt nc;
    PetscCall(MatGetRow(A, r, &nc, NULL, NULL));
    nz += nc;
    PetscCall(MatRestoreRow(A, r, &nc, NULL, NULL));
    ii[r - rstart + 1] = (PetscInt)nz;
  }
  PetscCall(PetscMalloc2(nz, &jj, nz, &vv));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscCall(MatGetRow(A, r, &nc, &cols, &vals));
    PetscCall(PetscArraycpy(jj + ii[r - rstart], cols, nc));
    PetscCall(PetscArraycpy(vv + ii[r - rstart], vals, nc));
    PetscCall(MatRestoreRow(A, r, &nc, &cols, &vals));
  }
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), C));
  PetscCall(MatSetSizes(*C, A->rmap->n, A->cmap->n, A->rmap->N, A->cmap->N));
  PetscCall(MatSetBlockSizesFromMats(*C, A, A));
  PetscCall(MatSetType(*C, newtype));
  PetscCall(MatMPIAIJSetPreallocationCSR(*C, ii, jj, vv));
  PetscCall(PetscFree(ii));
  PetscCall(PetscFree2(jj, vv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatConvert_MPIAIJ_MPIAMB_Private(Mat A, MatType blocktype, MatType newtype, MatReuse reuse, Mat *newmat)
{
  Mat         B = *newmat;
  Mat_MPIAMB *mamb;
  PetscBool   isaij, iscuda;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscBool same;
    PetscCall(AMBMPISamePattern(A, B, &same));
    if (same) PetscCall(MatCopy(A, B, SAME_NONZERO_PATTERN));
    else {
      Mat C;
      PetscCall(PetscInfo(A, "gpukit: MAT_REUSE_MATRIX with a different nonzero pattern: rebuilding the target\n"));
      PetscCall(MatConvert_MPIAIJ_MPIAMB_Private(A, blocktype, newtype, MAT_INITIAL_MATRIX, &C));
      PetscCall(MatHeaderReplace(B, &C));
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIAIJ, &isaij));
  PetscCheck(isaij, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "%s converts from MATMPIAIJ, not from %s", newtype, ((PetscObject)A)->type_name);
  PetscCall(PetscStrcmp(blocktype, MATSEQAMBCUDA, &iscuda));
  if (iscuda && A->assembled) {
    /* an assembled MPIAIJ has a host ghost vector (lvec) that a converted copy would keep: build the device matrix
       afresh from A's rows instead, so that MPIAIJ's set-up makes its lvec from the device blocks */
    Mat C;
    PetscCall(AMBMPIBuildFromRows(A, newtype, &C));
    if (reuse == MAT_INPLACE_MATRIX) PetscCall(MatHeaderReplace(A, &C));
    else *newmat = C;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(AMBSaveMPIAIJOps());
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  else B = A;

  PetscCall(PetscNew(&mamb));
  PetscCall(AMBOptionsDefault_Private(&mamb->opt));
  mamb->blocktype = blocktype;
  B->spptr        = (void *)mamb;
  PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatMPIAIJSetPreallocation_C", &mamb->mpiaijprealloc));
  PetscCheck(mamb->mpiaijprealloc, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATMPIAIJ composes no MatMPIAIJSetPreallocation_C");
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatMPIAIJSetPreallocation_C", MatMPIAIJSetPreallocation_MPIAMB));

  B->ops->assemblyend    = MatAssemblyEnd_MPIAMB;
  B->ops->setfromoptions = MatSetFromOptions_MPIAMB;
  B->ops->view           = MatView_MPIAMB;
  B->ops->duplicate      = MatDuplicate_MPIAMB;
  B->ops->destroy        = MatDestroy_MPIAMB;
  PetscCall(MatMPIAMBCompose_Private(B, newtype, PETSC_TRUE));
  if (iscuda) {
    PetscCall(MatSetVecType(B, "cuda")); /* VECCUDA: the lvec and MatCreateVecs() on the device */
    /* MatCreate() leaves a matrix bound to the CPU in a device build, and MPIAIJ's assembly then binds its blocks to
       the CPU (their host ops): a device MPI type is not bound */
#if PetscDefined(HAVE_DEVICE)
    B->boundtocpu = PETSC_FALSE;
#endif
  }
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, newtype));
  if (B->preallocated) PetscCall(MatMPIAMBRetypeBlocks_Private(B));
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatConvert_MPIAMB_MPIAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat         B = *newmat, blk[2];
  Mat_MPIAMB *mamb;

  PetscFunctionBegin;
  (void)type;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscBool same;
    PetscCall(AMBMPISamePattern(A, B, &same));
    if (same) PetscCall(MatCopy(A, B, SAME_NONZERO_PATTERN));
    else {
      Mat C;
      PetscCall(MatConvert_MPIAMB_MPIAIJ(A, type, MAT_INITIAL_MATRIX, &C));
      PetscCall(MatHeaderReplace(B, &C));
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  else B = A;
  mamb = (Mat_MPIAMB *)B->spptr;
  PetscCall(MatMPIAIJGetSeqAIJ(B, &blk[0], &blk[1], NULL));
  for (PetscInt i = 0; i < 2; i++) {
    Mat X = blk[i];
    if (X) PetscCall(MatConvert(X, MATSEQAIJ, MAT_INPLACE_MATRIX, &X));
  }
  PetscCall(MatMPIAMBCompose_Private(B, ((PetscObject)B)->type_name, PETSC_FALSE));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatMPIAIJSetPreallocation_C", mamb->mpiaijprealloc));
  PetscCall(PetscFree(B->spptr));
  *B->ops = MPIAIJOps;
  PetscCall(MatSetVecType(B, VECSTANDARD));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATMPIAIJ));
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCreate_MPIAMB(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(A, MATMPIAIJ));
  PetscCall(MatConvert_MPIAIJ_MPIAMB_Private(A, MATSEQAMB, MATMPIAMB, MAT_INPLACE_MATRIX, &A));
  PetscCall(PetscInfo(A, "gpukit: created a %s matrix\n", MATMPIAMB));
  PetscFunctionReturn(PETSC_SUCCESS);
}
