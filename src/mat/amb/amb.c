/*
   MATSEQAMB ("seqaijamb"): a MATSEQAIJ whose product runs on an AMB copy of the values (ambimpl.h, docs/amb.md).
   It derives from AIJ the way PETSc's AIJPERM does: the constructor makes a SeqAIJ, keeps SeqAIJ's operations table
   (one static copy, taken from a fresh SeqAIJ), overrides the few operations AMB changes and keeps its data in
   A->spptr. Everything else (MatSetValues, preallocation, MatLoad, factorizations, products, submatrices) is AIJ's.
*/
#include "ambimpl.h"

PetscLogEvent MAT_AMB_Build, MAT_AMB_Mult, MAT_AMB_Refresh;

static struct _MatOps SeqAIJOps; /* SeqAIJ's operations, the parent of every seqaijamb */
static PetscBool      SeqAIJOpsSaved = PETSC_FALSE;

static PetscErrorCode AMBSaveSeqAIJOps(void)
{
  Mat T;

  PetscFunctionBegin;
  if (SeqAIJOpsSaved) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatCreate(PETSC_COMM_SELF, &T));
  PetscCall(MatSetType(T, MATSEQAIJ));
  SeqAIJOps      = *T->ops;
  SeqAIJOpsSaved = PETSC_TRUE;
  PetscCall(MatDestroy(&T));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   Options
   ------------------------------------------------------------------------------------------------------------------ */
static const char *const AMBHostKernels[]  = {"amb", "csr"};
static const char *const AMBFallbackModes[] = {"auto", "never", "always"};
static const char *const AMBValuesNames[]  = {"double", "single"};

PetscErrorCode AMBOptionsDefault_Private(AMBOptions *opt)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(opt, sizeof(*opt)));
  opt->b             = 0;
  opt->W             = AMB_DEFAULT_W;
  opt->sigma         = AMB_DEFAULT_SIGMA;
  opt->hostkernel    = AMB_HOST_AMB;
  opt->fallback_mode = AMB_FALLBACK_AUTO;
  opt->values        = AMB_VALUES_DOUBLE;
  opt->deterministic = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode AMBOptionsSetB_Private(PetscObject obj, AMBOptions *opt, PetscInt b)
{
  PetscFunctionBegin;
  PetscCheck(b >= 0 && b <= AMB_MAX_B, PetscObjectComm(obj), PETSC_ERR_ARG_OUTOFRANGE, "-mat_amb_b: the block width must be 1..%d (or 0 for the traffic model's choice), got %" PetscInt_FMT, AMB_MAX_B, b);
  opt->b    = b;
  opt->bset = (PetscBool)(b > 0);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode AMBOptionsSetSegmentWidth_Private(PetscObject obj, AMBOptions *opt, PetscInt W)
{
  PetscFunctionBegin;
  PetscCheck(W >= AMB_MIN_W && W <= AMB_MAX_W && (W & (W - 1)) == 0, PetscObjectComm(obj), PETSC_ERR_ARG_OUTOFRANGE, "-mat_amb_segment_width: the segment width must be a power of 2 from %d to %d (16-bit column indices), got %" PetscInt_FMT, AMB_MIN_W, AMB_MAX_W, W);
  opt->W    = W;
  opt->Wset = PETSC_TRUE;
  if (!opt->sigmaset) opt->sigma = PetscMin(AMB_DEFAULT_SIGMA, W);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode AMBOptionsSetChunkSort_Private(PetscObject obj, AMBOptions *opt, PetscInt sigma)
{
  PetscFunctionBegin;
  PetscCheck(sigma == 0 || sigma == 1 || (sigma > 0 && sigma % AMB_C == 0), PetscObjectComm(obj), PETSC_ERR_ARG_OUTOFRANGE, "-mat_amb_chunk_sort: the sort window sigma must be 0 or 1 (no sorting) or a positive multiple of %d, got %" PetscInt_FMT, AMB_C, sigma);
  opt->sigma    = sigma;
  opt->sigmaset = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode AMBOptionsCheck_Private(PetscObject obj, const AMBOptions *opt)
{
  PetscFunctionBegin;
  PetscCheck(opt->sigma <= 1 || opt->W % opt->sigma == 0, PetscObjectComm(obj), PETSC_ERR_ARG_INCOMP, "-mat_amb_chunk_sort %" PetscInt_FMT " must divide the segment width %" PetscInt_FMT " (-mat_amb_segment_width)", opt->sigma, opt->W);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode AMBOptionsSetFromOptions_Private(PetscObject obj, GpukitOptionItems PetscOptionsObject, AMBOptions *opt)
{
  PetscInt  ival;
  PetscBool flg, bval;

  PetscFunctionBegin;
  ival = opt->b;
  PetscCall(PetscOptionsInt("-mat_amb_b", "AMB block width: columns per stored index, 1..16, 0 = chosen by the traffic model", "MatAMBGetInfo", ival, &ival, &flg));
  if (flg) PetscCall(AMBOptionsSetB_Private(obj, opt, ival));
  ival = opt->W;
  PetscCall(PetscOptionsInt("-mat_amb_segment_width", "AMB column segment width W, a power of 2 in [32, 65536]", "MatAMBGetInfo", ival, &ival, &flg));
  if (flg) PetscCall(AMBOptionsSetSegmentWidth_Private(obj, opt, ival));
  ival = opt->sigma;
  PetscCall(PetscOptionsInt("-mat_amb_chunk_sort", "AMB row sort window sigma (multiple of 32 dividing W; 0 or 1: no sorting)", "MatAMBGetInfo", ival, &ival, &flg));
  if (flg) PetscCall(AMBOptionsSetChunkSort_Private(obj, opt, ival));
  ival = (PetscInt)opt->hostkernel;
  PetscCall(PetscOptionsEList("-mat_amb_host_kernel", "Host product: the AMB kernel or AIJ's CSR kernel", "MatAMBGetInfo", AMBHostKernels, 2, AMBHostKernels[ival], &ival, &flg));
  if (flg) opt->hostkernel = (AMBHostKernel)ival;
  ival = (PetscInt)opt->fallback_mode;
  PetscCall(PetscOptionsEList("-mat_amb_csr_fallback", "Use a CSR product instead of AMB: auto (when the traffic model says AMB cannot win), never, always", "MatAMBGetInfo", AMBFallbackModes, 3, AMBFallbackModes[ival], &ival, &flg));
  if (flg) opt->fallback_mode = (AMBFallbackMode)ival;
  ival = (PetscInt)opt->values;
  PetscCall(PetscOptionsEList("-mat_amb_values", "Precision of the stored values on the device (vectors and sums stay double)", "MatAMBGetInfo", AMBValuesNames, 2, AMBValuesNames[ival], &ival, &flg));
  if (flg) opt->values = (AMBValues)ival;
  bval = opt->deterministic;
  PetscCall(PetscOptionsBool("-mat_amb_deterministic", "Device product without atomics, bitwise reproducible (the host kernel always is)", "MatAMBGetInfo", bval, &bval, &flg));
  if (flg) opt->deterministic = bval;
  PetscCall(AMBOptionsCheck_Private(obj, opt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode AMBOptionsView_Private(const AMBOptions *opt, PetscViewer viewer)
{
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "AMB options: b %s%" PetscInt_FMT ", W %" PetscInt_FMT ", sigma %" PetscInt_FMT ", host kernel %s, CSR fallback %s, device values %s%s\n", opt->bset ? "" : "auto (model) ", opt->b, opt->W, opt->sigma, AMBHostKernels[opt->hostkernel], AMBFallbackModes[opt->fallback_mode], AMBValuesNames[opt->values], opt->deterministic ? ", deterministic" : ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatSeqAMBSetOptions_Private(Mat A, const AMBOptions *opt)
{
  Mat_SeqAMB *amb = (Mat_SeqAMB *)A->spptr;
  PetscBool   same;

  PetscFunctionBegin;
  PetscCheck(amb, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Not a MATSEQAMB matrix");
  same = (PetscBool)(amb->opt.b == opt->b && amb->opt.W == opt->W && amb->opt.sigma == opt->sigma && amb->opt.fallback_mode == opt->fallback_mode);
  if (!same) amb->built = PETSC_FALSE; /* the layout depends on these */
  amb->opt = *opt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   The layout: built lazily at the first product after a change of structure, refreshed after a change of values
   ------------------------------------------------------------------------------------------------------------------ */
PetscErrorCode MatSeqAMBGetLayout_Private(Mat A, const AMBLayout **Lout)
{
  Mat_SeqAMB      *amb = (Mat_SeqAMB *)A->spptr;
  PetscObjectState state;
  const PetscInt  *ia, *ja;
  PetscScalar     *a;
  PetscMemType     mtype;

  PetscFunctionBegin;
  PetscCheck(A->assembled, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "MATSEQAMB: the matrix must be assembled before its AMB layout is built");
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (amb->built && amb->nzstate == A->nonzerostate && amb->valstate == state) {
    *Lout = &amb->L;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ia, &ja, &a, &mtype));
  PetscCheck(mtype == PETSC_MEMTYPE_HOST, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MATSEQAMB: the AIJ arrays must be on the host");
  if (amb->built && amb->nzstate == A->nonzerostate) {
    PetscCall(PetscLogEventBegin(MAT_AMB_Refresh, A, 0, 0, 0));
    PetscCall(AMBLayoutRefresh_Host(&amb->L, a));
    PetscCall(PetscLogEventEnd(MAT_AMB_Refresh, A, 0, 0, 0));
    amb->nrefresh++;
    PetscCall(PetscInfo(A, "gpukit: AMB values refreshed (same nonzero pattern), %" PetscCount_FMT " values, refresh %" PetscInt_FMT "\n", amb->L.nnz, amb->nrefresh));
  } else {
    PetscCall(AMBOptionsCheck_Private((PetscObject)A, &amb->opt));
    PetscCall(PetscLogEventBegin(MAT_AMB_Build, A, 0, 0, 0));
    PetscCall(AMBLayoutBuild_Host(A->rmap->n, A->cmap->n, ia, ja, a, &amb->opt, &amb->L));
    PetscCall(PetscLogEventEnd(MAT_AMB_Build, A, 0, 0, 0));
    amb->built = PETSC_TRUE;
    amb->nbuild++;
    PetscCall(PetscInfo(A, "gpukit: AMB layout built (build %" PetscInt_FMT "): %" PetscInt_FMT " x %" PetscInt_FMT ", nnz %" PetscCount_FMT ", b %" PetscInt_FMT "%s, W %" PetscInt_FMT ", sigma %" PetscInt_FMT ", %" PetscInt_FMT " chunks, %" PetscCount_FMT " stored values, model %.4g bytes (CSR %.4g)\n", amb->nbuild, amb->L.m, amb->L.n, amb->L.nnz, amb->L.b, amb->opt.bset ? "" : " (model)", amb->L.W, amb->L.sigma, amb->L.nchunks, amb->L.nzzf, amb->L.bytes, amb->L.bytescsr));
    PetscCall(PetscInfo(A, "gpukit: AMB product uses %s: %s\n", amb->L.fallback ? "the CSR fallback" : "the AMB kernel", amb->L.why));
  }
  amb->nzstate  = A->nonzerostate;
  amb->valstate = state;
  *Lout         = &amb->L;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   Operations
   ------------------------------------------------------------------------------------------------------------------ */
static PetscErrorCode MatMultAMB_Private(Mat A, Vec xx, Vec zz, Vec yy)
{
  Mat_SeqAMB        *amb = (Mat_SeqAMB *)A->spptr;
  const AMBLayout   *L;
  const PetscScalar *x, *z = NULL;
  PetscScalar       *y;
  PetscBool          finite = PETSC_TRUE;
  PetscInt           n      = A->cmap->n;

  PetscFunctionBegin;
  if (amb->opt.hostkernel == AMB_HOST_CSR) {
    if (zz) PetscCall((*SeqAIJOps.multadd)(A, xx, zz, yy));
    else PetscCall((*SeqAIJOps.mult)(A, xx, yy));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatSeqAMBGetLayout_Private(A, &L));
  if (!L->fallback) {
    PetscCall(VecGetArrayRead(xx, &x));
    for (PetscInt i = 0; i < n; i++) {
      if (PetscIsInfOrNanScalar(x[i])) {
        finite = PETSC_FALSE;
        break;
      }
    }
    if (!finite) {
      amb->nnonfinite++;
      PetscCall(PetscInfo(A, "gpukit: x holds Inf or NaN: this product uses AIJ's kernel so that they propagate exactly as in AIJ\n"));
      PetscCall(VecRestoreArrayRead(xx, &x));
    }
  }
  if (L->fallback || !finite) {
    if (zz) PetscCall((*SeqAIJOps.multadd)(A, xx, zz, yy));
    else PetscCall((*SeqAIJOps.mult)(A, xx, yy));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscLogEventBegin(MAT_AMB_Mult, A, xx, yy, 0));
  if (zz && zz != yy) PetscCall(VecGetArrayRead(zz, &z));
  PetscCall(VecGetArray(yy, &y));
  if (zz && zz == yy) z = y;
  PetscCall(AMBMult_Host(L, x, z, y));
  PetscCall(VecRestoreArray(yy, &y));
  if (zz && zz != yy) PetscCall(VecRestoreArrayRead(zz, &z));
  PetscCall(VecRestoreArrayRead(xx, &x));
  PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)L->nnz - (zz ? 0.0 : (PetscLogDouble)A->rmap->n)));
  PetscCall(PetscLogEventEnd(MAT_AMB_Mult, A, xx, yy, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_SeqAMB(Mat A, Vec xx, Vec yy)
{
  PetscFunctionBegin;
  PetscCall(MatMultAMB_Private(A, xx, NULL, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultAdd_SeqAMB(Mat A, Vec xx, Vec zz, Vec yy)
{
  PetscFunctionBegin;
  PetscCall(MatMultAMB_Private(A, xx, zz, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAssemblyEnd_SeqAMB(Mat A, MatAssemblyType mode)
{
  PetscFunctionBegin;
  PetscCall((*SeqAIJOps.assemblyend)(A, mode));
  /* nothing else: the layout follows the object state (values) and the nonzero state (structure) at the next product */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetFromOptions_SeqAMB(Mat A, GpukitOptionItems PetscOptionsObject)
{
  Mat_SeqAMB *amb = (Mat_SeqAMB *)A->spptr;
  AMBOptions  opt = amb->opt;

  PetscFunctionBegin;
  if (SeqAIJOps.setfromoptions) PetscCall((*SeqAIJOps.setfromoptions)(A, PetscOptionsObject));
  PetscOptionsHeadBegin(PetscOptionsObject, "MATAMB options");
  PetscCall(AMBOptionsSetFromOptions_Private((PetscObject)A, PetscOptionsObject, &opt));
  PetscOptionsHeadEnd();
  PetscCall(MatSeqAMBSetOptions_Private(A, &opt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatView_SeqAMB(Mat A, PetscViewer viewer)
{
  Mat_SeqAMB       *amb = (Mat_SeqAMB *)A->spptr;
  PetscBool         isascii;
  PetscViewerFormat format;

  PetscFunctionBegin;
  PetscCall((*SeqAIJOps.view)(A, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (isascii && (format == PETSC_VIEWER_ASCII_INFO || format == PETSC_VIEWER_ASCII_INFO_DETAIL)) {
    PetscCall(AMBOptionsView_Private(&amb->opt, viewer));
    if (A->assembled) {
      const AMBLayout *L;
      PetscCall(MatSeqAMBGetLayout_Private(A, &L));
      PetscCall(PetscViewerASCIIPrintf(viewer, "AMB layout: b %" PetscInt_FMT ", W %" PetscInt_FMT " (%" PetscInt_FMT " segments), sigma %" PetscInt_FMT ", %" PetscInt_FMT " chunks of %d rows, %" PetscInt_FMT " rows in several segments, %" PetscCount_FMT " stored values for %" PetscCount_FMT " nonzeros (%.3f)\n", L->b, L->W, L->nseg, L->sigma, L->nchunks, AMB_C, L->nmulti, L->nzzf, L->nnz, L->nnz ? (double)L->nzzf / (double)L->nnz : 0.0));
      PetscCall(PetscViewerASCIIPrintf(viewer, "AMB traffic model: %.4g bytes per product (%.3f per nonzero), CSR %.4g bytes\n", L->bytes, L->nnz ? L->bytes / (double)L->nnz : 0.0, L->bytescsr));
      if (L->fallback) PetscCall(PetscViewerASCIIPrintf(viewer, "AMB CSR fallback: the product uses CSR (%s)\n", L->why));
      else PetscCall(PetscViewerASCIIPrintf(viewer, "AMB product: AMB kernel (%s)%s\n", L->why, amb->opt.hostkernel == AMB_HOST_CSR ? "; on the host AIJ's kernel (-mat_amb_host_kernel csr)" : ""));
    }
    if (amb->devview) PetscCall((*amb->devview)(A, viewer));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDuplicate_SeqAMB(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_SeqAMB *amb = (Mat_SeqAMB *)A->spptr;

  PetscFunctionBegin;
  PetscCall((*SeqAIJOps.duplicate)(A, op, B)); /* creates a matrix of A's type (through its constructor) */
  if ((*B)->spptr) PetscCall(MatSeqAMBSetOptions_Private(*B, &amb->opt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAMBGetInfo_SeqAMB(Mat A, PetscInt *b, PetscInt *W, PetscBool *fallback, PetscLogDouble *bytes)
{
  const AMBLayout *L;

  PetscFunctionBegin;
  PetscCall(MatSeqAMBGetLayout_Private(A, &L));
  if (b) *b = L->b;
  if (W) *W = L->W;
  if (fallback) *fallback = L->fallback;
  if (bytes) *bytes = L->fallback ? L->bytescsr : L->bytes;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A product whose other matrix provides it for AIJ under AIJ's type name only: PETSc's MATMAIJ composes
   "MatProductSetFromOptions_seqaij_seqmaij_C" (PtAP: PCMG's Galerkin coarse operator with a DMDA interpolation of
   several dof) on itself, and MatProduct looks for the name with A's own type name (seqaijamb). An AMB matrix is an
   AIJ matrix under another name (its data is AIJ's, current on the host), so the product is the one PETSc has for AIJ:
   found on B under the AIJ name and called. Composed on AMB matrices under "MatProductSetFromOptions_<amb>_<maij>_C". */
PetscErrorCode MatProductSetFromOptions_AMB_AsAIJ(Mat C)
{
  Mat_Product *product = C->product;
  Mat          A, B;
  PetscBool    mpi;
  char         name[256];
  PetscErrorCode (*f)(Mat) = NULL;

  PetscFunctionBegin;
  PetscCheck(product, PetscObjectComm((PetscObject)C), PETSC_ERR_PLIB, "No product on the matrix");
  A = product->A;
  B = product->B;
  PetscCall(PetscStrbeginswith(((PetscObject)A)->type_name, "mpi", &mpi));
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatProductSetFromOptions_%s_%s_C", mpi ? MATMPIAIJ : MATSEQAIJ, ((PetscObject)B)->type_name));
  PetscCall(PetscObjectQueryFunction((PetscObject)B, name, &f));
  if (f) {
    PetscCall(PetscInfo(A, "gpukit: %s x %s: PETSc's product for %s (%s)\n", ((PetscObject)A)->type_name, ((PetscObject)B)->type_name, mpi ? MATMPIAIJ : MATSEQAIJ, name));
    PetscCall((*f)(C));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A conversion that PETSc provides for AIJ under AIJ's type name only, composed on every AIJ matrix (so on an AMB
   matrix too, which was made from one): "MatConvert_seqaij_hypre_C" (PCHYPRE converts its matrix), "..._is_C"
   (PCBDDC, PCMG's GDSW coarse space). MatConvert looks for the name with A's own type name; without this it falls back
   to a row-by-row copy, which for MATHYPRE loses what the AIJ converter carries over (BoomerAMG then gave other
   residuals) and for MATIS crashes in PETSc 3.18 (no local-to-global map: ksp ex71's GDSW). */
PetscErrorCode MatConvert_AMB_AsAIJ(Mat A, MatType newtype, MatReuse reuse, Mat *B)
{
  PetscBool mpi;
  char      name[256];
  PetscErrorCode (*f)(Mat, MatType, MatReuse, Mat *) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscStrbeginswith(((PetscObject)A)->type_name, "mpi", &mpi));
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%s_%s_C", mpi ? MATMPIAIJ : MATSEQAIJ, newtype));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, name, &f));
  PetscCheck(f, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "No conversion from %s to %s (%s is not composed)", ((PetscObject)A)->type_name, newtype, name);
  PetscCall(PetscInfo(A, "gpukit: %s to %s: PETSc's conversion for %s\n", ((PetscObject)A)->type_name, newtype, mpi ? MATMPIAIJ : MATSEQAIJ));
  PetscCall((*f)(A, newtype, reuse, B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* compose (on) or remove (off) on an AMB matrix of type amb (seqaijamb, mpiaijamb, ...) the conversions to MATHYPRE
   (PCHYPRE) and MATIS (PCBDDC, PCMG's GDSW coarse space) that its AIJ base ("seqaij"/"mpiaij") carries: a conversion
   that PETSc does not offer for this matrix (e.g. without hypre) is not composed */
PetscErrorCode MatAMBComposeAIJConversions_Private(Mat B, const char *amb, const char *aij, PetscBool on)
{
  const char *targets[] = {MATHYPRE, MATIS};

  PetscFunctionBegin;
  for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++) {
    char name[256];
    PetscErrorCode (*f)(void) = NULL;

    if (on) {
      PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%s_%s_C", aij, targets[t]));
      PetscCall(PetscObjectQueryFunction((PetscObject)B, name, &f));
    }
    PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%s_%s_C", amb, targets[t]));
    PetscCall(PetscObjectComposeFunction((PetscObject)B, name, f ? GPUKIT_FN(MatConvert_AMB_AsAIJ) : NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSeqAMBCompose_Private(Mat B, PetscBool on)
{
  PetscFunctionBegin;
  PetscCall(MatAMBComposeAIJConversions_Private(B, MATSEQAMB, MATSEQAIJ, on));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatProductSetFromOptions_seqaijamb_seqmaij_C", on ? GPUKIT_FN(MatProductSetFromOptions_AMB_AsAIJ) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatConvert_seqaijamb_seqaij_C", on ? GPUKIT_FN(MatConvert_SeqAMB_SeqAIJ) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatConvert_seqaij_seqaijamb_C", on ? GPUKIT_FN(MatConvert_SeqAIJ_SeqAMB) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatConvert_seqaij_seqamb_C", on ? GPUKIT_FN(MatConvert_SeqAIJ_SeqAMB) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatConvert_seqaij_amb_C", on ? GPUKIT_FN(MatConvert_SeqAIJ_SeqAMB) : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatAMBGetInfo_C", on ? GPUKIT_FN(MatAMBGetInfo_SeqAMB) : NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_SeqAMB(Mat A)
{
  Mat_SeqAMB *amb = (Mat_SeqAMB *)A->spptr;

  PetscFunctionBegin;
  if (amb) {
    if (amb->devdestroy) PetscCall((*amb->devdestroy)(A));
    PetscCall(AMBLayoutDestroy_Host(&amb->L));
    PetscCall(PetscFree(A->spptr));
  }
  PetscCall(MatSeqAMBCompose_Private(A, PETSC_FALSE));
  PetscCall((*SeqAIJOps.destroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* true when A and B (both SeqAIJ-based, assembled) have the same sizes and the same nonzero pattern */
static PetscErrorCode AMBSamePattern(Mat A, Mat B, PetscBool *same)
{
  const PetscInt *ia, *ja, *ib, *jb;

  PetscFunctionBegin;
  *same = PETSC_FALSE;
  if (A->rmap->n != B->rmap->n || A->cmap->n != B->cmap->n || !A->assembled || !B->assembled) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ia, &ja, NULL, NULL));
  PetscCall(MatSeqAIJGetCSRAndMemType(B, &ib, &jb, NULL, NULL));
  PetscCall(PetscArraycmp(ia, ib, A->rmap->n + 1, same));
  if (*same) PetscCall(PetscArraycmp(ja, jb, ia[A->rmap->n], same));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MAT_REUSE_MATRIX: copy A's values into *newmat when the patterns agree, else rebuild *newmat with conv */
static PetscErrorCode AMBConvertReuse(Mat A, MatType type, Mat *newmat, PetscErrorCode (*conv)(Mat, MatType, MatReuse, Mat *))
{
  PetscBool same;
  Mat       C;

  PetscFunctionBegin;
  PetscCall(AMBSamePattern(A, *newmat, &same));
  if (same) {
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
  } else {
    PetscCall(PetscInfo(A, "gpukit: MAT_REUSE_MATRIX with a different nonzero pattern: rebuilding the target\n"));
    PetscCall((*conv)(A, type, MAT_INITIAL_MATRIX, &C));
    PetscCall(MatHeaderReplace(*newmat, &C));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* seqaij -> seqaijamb; in place keeps the same Mat (ops, type name and spptr change) */
PetscErrorCode MatConvert_SeqAIJ_SeqAMB(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat         B = *newmat;
  Mat_SeqAMB *amb;
  PetscBool   isaij;

  PetscFunctionBegin;
  (void)type;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(AMBConvertReuse(A, MATSEQAMB, newmat, MatConvert_SeqAIJ_SeqAMB));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJ, &isaij));
  PetscCheck(isaij, PETSC_COMM_SELF, PETSC_ERR_SUP, "MATSEQAMB converts from MATSEQAIJ, not from %s", ((PetscObject)A)->type_name);
  PetscCall(AMBSaveSeqAIJOps());
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  else B = A;

  PetscCall(PetscNew(&amb));
  PetscCall(AMBOptionsDefault_Private(&amb->opt));
  B->spptr = (void *)amb;

  B->ops->mult           = MatMult_SeqAMB;
  B->ops->multadd        = MatMultAdd_SeqAMB;
  B->ops->assemblyend    = MatAssemblyEnd_SeqAMB;
  B->ops->setfromoptions = MatSetFromOptions_SeqAMB;
  B->ops->view           = MatView_SeqAMB;
  B->ops->duplicate      = MatDuplicate_SeqAMB;
  B->ops->destroy        = MatDestroy_SeqAMB;
  PetscCall(MatSeqAMBCompose_Private(B, PETSC_TRUE));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATSEQAMB));
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* back to a plain MATSEQAIJ (also from a type derived from seqaijamb: its device data goes through devdestroy) */
PetscErrorCode MatConvert_SeqAMB_SeqAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat         B = *newmat;
  Mat_SeqAMB *amb;

  PetscFunctionBegin;
  (void)type;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(AMBConvertReuse(A, MATSEQAIJ, newmat, MatConvert_SeqAMB_SeqAIJ));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  else B = A;
  amb = (Mat_SeqAMB *)B->spptr;
  if (amb) {
    if (amb->devdestroy) PetscCall((*amb->devdestroy)(B));
    PetscCall(AMBLayoutDestroy_Host(&amb->L));
    PetscCall(PetscFree(B->spptr));
  }
  /* SeqAIJ's table, keeping the slots SeqAIJ itself sets per matrix (inodes, at assembly) */
  {
    struct _MatOps keep = *B->ops;
    *B->ops                   = SeqAIJOps;
    B->ops->getrowij          = keep.getrowij;
    B->ops->restorerowij      = keep.restorerowij;
    B->ops->getcolumnij       = keep.getcolumnij;
    B->ops->restorecolumnij   = keep.restorecolumnij;
    B->ops->coloringpatch     = keep.coloringpatch;
    B->ops->multdiagonalblock = keep.multdiagonalblock;
  }
  PetscCall(MatSeqAMBCompose_Private(B, PETSC_FALSE));
  PetscCall(MatSetVecType(B, VECSTANDARD));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATSEQAIJ));
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCreate_SeqAMB(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(A, MATSEQAIJ));
  PetscCall(MatConvert_SeqAIJ_SeqAMB(A, MATSEQAMB, MAT_INPLACE_MATRIX, &A));
  PetscCall(PetscInfo(A, "gpukit: created a %s matrix\n", MATSEQAMB));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the root type: MATSEQAMB on one rank, MATMPIAMB on more */
static PetscErrorCode MatCreate_AMB(Mat A)
{
  PetscFunctionBegin;
  PetscCall(GpukitMatSetTypeBySize_Private(A, MATSEQAMB, MATMPIAMB));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatRegister_AMB_Private(void)
{
  PetscFunctionBegin;
  PetscCall(MatRegisterRootName(MATAMB, MATSEQAMB, MATMPIAMB));
  PetscCall(PetscLogEventRegister("AMBBuild", MAT_CLASSID, &MAT_AMB_Build));
  PetscCall(PetscLogEventRegister("AMBMult", MAT_CLASSID, &MAT_AMB_Mult));
  PetscCall(PetscLogEventRegister("AMBRefresh", MAT_CLASSID, &MAT_AMB_Refresh));
  PetscCall(MatRegister(MATAMB, MatCreate_AMB));
  PetscCall(MatRegister(MATSEQAMB, MatCreate_SeqAMB));
  PetscCall(MatRegister(MATMPIAMB, MatCreate_MPIAMB));
  PetscCall(MatRegister("seqamb", MatCreate_SeqAMB));
  PetscCall(MatRegister("mpiamb", MatCreate_MPIAMB));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatAMBGetInfo - Gets the parameters a `MATAMB` (or `MATAMBCUDA`) matrix uses for its product

  Not Collective

  Input Parameter:
. A - the `MATAMB` or `MATAMBCUDA` matrix, assembled

  Output Parameters:
+ b           - the block width: columns per stored 16-bit index (the user's `-mat_amb_b`, or the traffic model's choice)
. segwidth    - the column segment width W (`-mat_amb_segment_width`)
. csrfallback - `PETSC_TRUE` when the product uses a CSR kernel instead of AMB (`-mat_amb_csr_fallback`)
- bytes       - the traffic model's bytes moved by one product with the kernel in use (AMB, or CSR under the fallback)

  Level: intermediate

  Notes:
  Any output may be `NULL`. The layout is built (or refreshed) by this call when the matrix changed since the last
  product. On several MPI ranks the values are those of the calling rank's diagonal block. `-mat_view ::ascii_info`
  prints the same information and the reason for the fallback decision; docs/amb.md describes the model.

.seealso: `MATAMB`, `MATAMBCUDA`, `MatMult()`
@*/
PetscErrorCode MatAMBGetInfo(Mat A, PetscInt *b, PetscInt *segwidth, PetscBool *csrfallback, PetscLogDouble *bytes)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscCheck(A->assembled, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONGSTATE, "MatAMBGetInfo() needs an assembled matrix");
  PetscUseMethod(A, "MatAMBGetInfo_C", (Mat, PetscInt *, PetscInt *, PetscBool *, PetscLogDouble *), (A, b, segwidth, csrfallback, bytes));
  PetscFunctionReturn(PETSC_SUCCESS);
}
