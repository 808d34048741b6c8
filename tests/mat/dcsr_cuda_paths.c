static const char help[] = "MATDCSRCUDA's product paths and device duplicate against AIJ (MAT_NEW_NONZERO_ALLOCATION_ERR false):\n"
                           "rows long enough for the block-per-row kernel (-mat_dcsr_cuda_long_row), fragmented (several\n"
                           "segments: the segment table) and defragmented (one segment: the row table), MatMult and MatMultAdd\n"
                           "(also y == z); MatDuplicate() of a matrix whose only valid copy is on the device (device-to-device\n"
                           "copy: no host<->device copy for the duplicate's first product and batch), with and without values.\n"
                           "  -n <rows> -rounds <r> -hot <rows with many entries> -hotlen <entries per hot row and round>\n"
                           "  -batch <other random entries per round> -tol <1e-12> -repeat_equal (three more MatMult give bitwise the same\n"
                           "  result: for a fixed kernel, e.g. with -mat_dcsr_autotune 0); -mat_dcsr_* options apply to the DCSR matrix\n";

/*
   One process. Ad (MATDCSRCUDA, options from the command line) and Aa (MATAIJ, MAT_NEW_NONZERO_ALLOCATION_ERR false)
   get a tridiagonal assembly, then rounds of device batches (MatDCSRSetValuesCOODevice(), ADD) into Ad and the same
   entries by MatSetValues() into Aa. A few "hot" rows get -hotlen random columns per round, so that they grow past the
   long-row threshold (default 256; after three rounds of 1200 columns out of 6000 they pass 2048 entries, so that the
   long bin's rows are split in several chunks of GPUKIT_DCSR_LONG_CHUNK entries). After every round the products of
   Ad on CUDA vectors are compared with Aa's; then after MatDCSRDefragment(). Then MatDuplicate(): the duplicate's
   products and a batch into it against AIJ duplicates, the original unchanged, and the count of DCSRCUDACopy events
   (host<->device copies of the structure) unchanged by the duplicate's first product and batch.
*/
#include "gktest.h"
#include "gkbench.h"
#if PetscDefined(HAVE_CUDA)
  #include <petscdevice_cuda.h>
#endif

#if PetscDefined(HAVE_CUDA)
typedef struct {
  PetscInt    n, hot, hotlen, batch;
  PetscReal   tol;
  PetscBool   repeat; /* -repeat_equal */
  PetscInt    expect_base, nbase; /* -expect_csr_base_product 1: the products that ran the base stream kernel (kernel 3 of
                                     "MatDCSRCUDAGetMultKernel_C", lane code 64) */
  PetscRandom rnd;
} Ctx;

/* y = A x, y = w + A x and w = w + A x of Ad (CUDA vectors) against Aa (host vectors) */
static PetscErrorCode CompareProducts(Ctx *c, Mat Ad, Mat Aa, const char *what)
{
  Vec  xd, yd, wd, xa, ya, wa, t;
  char buf[256];

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(Ad, &xd, &yd));
  PetscCall(VecDuplicate(yd, &wd));
  PetscCall(MatCreateVecs(Aa, &xa, &ya));
  PetscCall(VecDuplicate(ya, &wa));
  PetscCall(VecDuplicate(ya, &t));
  PetscCall(VecSetRandom(xa, c->rnd));
  PetscCall(VecSetRandom(wa, c->rnd));
  PetscCall(GKCopyValues(xa, xd));
  PetscCall(GKCopyValues(wa, wd));

  PetscCall(MatMult(Ad, xd, yd));
  PetscCall(MatMult(Aa, xa, ya));
  PetscCall(GKCopyValues(yd, t));
  PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: MatMult", what));
  PetscCall(GKCheckVecClose(ya, t, c->tol, buf));
  if (c->repeat) { /* the product does not depend on the scheduling (the long rows' partial sums in a fixed order) */
    Vec       y2;
    PetscBool eq = PETSC_TRUE;
    PetscCall(VecDuplicate(yd, &y2));
    for (PetscInt k = 0; k < 3 && eq; k++) {
      PetscCall(MatMult(Ad, xd, y2));
      PetscCall(VecEqual(yd, y2, &eq));
    }
    PetscCall(VecDestroy(&y2));
    PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: three more MatMult give bitwise the same result", what));
    PetscCall(GKCheck(eq, buf));
  }
  if (c->expect_base >= 0) { /* which product ran the MatMult above */
    PetscErrorCode (*f)(Mat, PetscInt *, PetscInt *) = NULL;
    PetscInt kernel = -1, lanes = 0;
    PetscCall(PetscObjectQueryFunction((PetscObject)Ad, "MatDCSRCUDAGetMultKernel_C", &f));
    PetscCall(GKCheck((PetscBool)(f != NULL), "the matrix composes MatDCSRCUDAGetMultKernel_C"));
    PetscCall((*f)(Ad, &kernel, &lanes));
    if (kernel == 3 && (c->expect_base == 1) == (lanes == 64)) c->nbase++;
  }

  PetscCall(MatMultAdd(Ad, xd, wd, yd));
  PetscCall(MatMultAdd(Aa, xa, wa, ya));
  PetscCall(GKCopyValues(yd, t));
  PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: MatMultAdd", what));
  PetscCall(GKCheckVecClose(ya, t, c->tol, buf));

  PetscCall(MatMultAdd(Ad, xd, wd, wd)); /* y == z */
  PetscCall(MatMultAdd(Aa, xa, wa, wa));
  PetscCall(GKCopyValues(wd, t));
  PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: MatMultAdd with y == z", what));
  PetscCall(GKCheckVecClose(wa, t, c->tol, buf));

  PetscCall(VecDestroy(&xd));
  PetscCall(VecDestroy(&yd));
  PetscCall(VecDestroy(&wd));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&wa));
  PetscCall(VecDestroy(&t));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok: %s: products equal AIJ's\n", what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a round's entries: hot rows (spread over the matrix) with hotlen random columns each, then batch random entries
   near the diagonal or anywhere; about 10% repeat an earlier entry (duplicates, summed by ADD) */
static PetscErrorCode MakeEntries(Ctx *c, PetscInt *ne, PetscInt **i, PetscInt **j, PetscScalar **v)
{
  const PetscInt nt = c->hot * c->hotlen + c->batch;
  PetscInt       e  = 0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc3(nt, i, nt, j, nt, v));
  for (PetscInt h = 0; h < c->hot; h++) {
    const PetscInt row = (PetscInt)(((PetscInt64)h * (c->n - 1)) / PetscMax(c->hot - 1, 1));
    for (PetscInt k = 0; k < c->hotlen; k++, e++) {
      PetscReal a, w;
      PetscCall(PetscRandomGetValueReal(c->rnd, &a));
      PetscCall(PetscRandomGetValueReal(c->rnd, &w));
      (*i)[e] = row;
      (*j)[e] = PetscMin((PetscInt)(a * c->n), c->n - 1);
      (*v)[e] = 2.0 * w - 1.0;
    }
  }
  for (PetscInt k = 0; k < c->batch; k++, e++) {
    PetscReal a, b, d, w;
    PetscCall(PetscRandomGetValueReal(c->rnd, &a));
    PetscCall(PetscRandomGetValueReal(c->rnd, &b));
    PetscCall(PetscRandomGetValueReal(c->rnd, &d));
    PetscCall(PetscRandomGetValueReal(c->rnd, &w));
    (*v)[e] = 2.0 * w - 1.0;
    if (e > 0 && d < 0.1) {
      const PetscInt p = (PetscInt)(a * e);
      (*i)[e]          = (*i)[p];
      (*j)[e]          = (*j)[p];
      continue;
    }
    (*i)[e] = PetscMin((PetscInt)(a * c->n), c->n - 1);
    (*j)[e] = b < 0.5 ? PetscMin(PetscMax((*i)[e] + (PetscInt)(8 * b) - 2, 0), c->n - 1) : PetscMin((PetscInt)(b * c->n), c->n - 1);
  }
  *ne = e;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the entries into Ad as a device batch and into the AIJ matrices by MatSetValues(), ADD */
static PetscErrorCode AddEntries(Mat Ad, PetscInt na, Mat Aa[], PetscInt ne, const PetscInt *i, const PetscInt *j, const PetscScalar *v)
{
  PetscInt    *di, *dj;
  PetscScalar *dv;

  PetscFunctionBegin;
  PetscCall(GKDeviceCOOCopy(ne, i, j, v, &di, &dj, &dv));
  PetscCall(MatDCSRSetValuesCOODevice(Ad, ne, di, dj, dv, ADD_VALUES));
  PetscCall(GKDeviceCOOFree(&di, &dj, &dv));
  for (PetscInt k = 0; k < na; k++) {
    for (PetscInt e = 0; e < ne; e++) PetscCall(MatSetValues(Aa[k], 1, &i[e], 1, &j[e], &v[e], ADD_VALUES));
    PetscCall(MatAssemblyBegin(Aa[k], MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Aa[k], MAT_FINAL_ASSEMBLY));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CopyEvents(PetscInt *cnt)
{
  PetscLogEvent ev;

  PetscFunctionBegin;
  *cnt = 0;
  PetscCall(PetscLogEventGetId("DCSRCUDACopy", &ev));
  if (ev >= 0) PetscCall(GKLogEventCount(ev, cnt));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCheck(PetscDefined(HAVE_CUDA), PETSC_COMM_WORLD, PETSC_ERR_SUP, "dcsr_cuda_paths tests MATDCSRCUDA and needs a PETSc configured with CUDA (make petsc-cuda; make PETSC_DIR=.../petsc-cuda tests)");
#if PetscDefined(HAVE_CUDA)
  Ctx       ctx, *c = &ctx;
  PetscInt  rounds = 3, maxlen = 0, K, maxseg;
  PetscCount used, cap;
  Mat       Ad, Aa;

  PetscCall(PetscMemzero(c, sizeof(*c)));
  c->n      = 6000;
  c->hot    = 4;
  c->hotlen = 1200;
  c->batch  = 3000;
  c->tol    = 1e-12;
  PetscCall(PetscLogDefaultBegin());
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "dcsr_cuda_paths options", NULL);
  PetscCall(PetscOptionsInt("-n", "Rows", NULL, c->n, &c->n, NULL));
  PetscCall(PetscOptionsInt("-rounds", "Rounds of device batches", NULL, rounds, &rounds, NULL));
  PetscCall(PetscOptionsInt("-hot", "Rows that get many entries", NULL, c->hot, &c->hot, NULL));
  PetscCall(PetscOptionsInt("-hotlen", "Entries per hot row and round", NULL, c->hotlen, &c->hotlen, NULL));
  PetscCall(PetscOptionsInt("-batch", "Other random entries per round", NULL, c->batch, &c->batch, NULL));
  PetscCall(PetscOptionsReal("-tol", "Relative tolerance", NULL, c->tol, &c->tol, NULL));
  PetscCall(PetscOptionsBool("-repeat_equal", "Three more MatMult must give bitwise the same result (fix the kernel: -mat_dcsr_autotune 0)", NULL, c->repeat, &c->repeat, NULL));
  c->expect_base = -1;
  PetscCall(PetscOptionsInt("-expect_csr_base_product", "Some products ran on the CSR base with this product: 0 cuSPARSE and the fix-up, 1 the base stream kernel", NULL, c->expect_base, &c->expect_base, NULL));
  PetscOptionsEnd();
  PetscCheck(c->n >= 2 && c->hot >= 0 && c->hotlen >= 0 && c->batch >= 0 && rounds >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "need -n >= 2, -rounds >= 1 and non-negative -hot, -hotlen, -batch");
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &c->rnd));
  PetscCall(PetscRandomSetSeed(c->rnd, 2718));
  PetscCall(PetscRandomSeed(c->rnd));

  PetscCall(MatCreate(PETSC_COMM_SELF, &Ad));
  PetscCall(MatSetSizes(Ad, c->n, c->n, c->n, c->n));
  PetscCall(MatSetType(Ad, MATDCSRCUDA));
  PetscCall(MatSetFromOptions(Ad));
  PetscCall(MatSeqAIJSetPreallocation(Ad, 3, NULL));
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, c->n, c->n, 3, NULL, &Aa));
  PetscCall(MatSetOption(Aa, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  for (PetscInt row = 0; row < c->n; row++) {
    PetscInt    cols[3] = {row - 1, row, row + 1 < c->n ? row + 1 : -1};
    PetscScalar vals[3] = {-1.0, 3.0, -1.0};
    PetscCall(MatSetValues(Ad, 1, &row, 3, cols, vals, INSERT_VALUES));
    PetscCall(MatSetValues(Aa, 1, &row, 3, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(Ad, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Ad, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(Aa, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Aa, MAT_FINAL_ASSEMBLY));
  PetscCall(CompareProducts(c, Ad, Aa, "first assembly"));

  for (PetscInt r = 0; r < rounds; r++) {
    PetscInt     ne, *i, *j;
    PetscScalar *v;
    char         what[64];
    PetscCall(MakeEntries(c, &ne, &i, &j, &v));
    PetscCall(AddEntries(Ad, 1, &Aa, ne, i, j, v));
    PetscCall(PetscFree3(i, j, v));
    PetscCall(PetscSNPrintf(what, sizeof(what), "round %" PetscInt_FMT " (device batch, ADD)", r));
    PetscCall(CompareProducts(c, Ad, Aa, what));
  }
  for (PetscInt row = 0; row < c->n; row++) {
    PetscInt nc;
    PetscCall(MatGetRow(Aa, row, &nc, NULL, NULL));
    maxlen = PetscMax(maxlen, nc);
    PetscCall(MatRestoreRow(Aa, row, &nc, NULL, NULL));
  }
  PetscCall(MatDCSRGetInfo(Ad, &K, &maxseg, &used, &cap));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "  after the rounds: longest row %" PetscInt_FMT ", at most %" PetscInt_FMT " of K = %" PetscInt_FMT " segments in a row\n", maxlen, maxseg, K));
  PetscCall(CompareProducts(c, Ad, Aa, "after the rounds"));
  PetscCall(MatDCSRDefragment(Ad));
  PetscCall(MatDCSRGetInfo(Ad, &K, &maxseg, &used, &cap));
  PetscCall(GKCheck((PetscBool)(maxseg <= 1), "after MatDCSRDefragment() every row has at most one segment"));
  PetscCall(CompareProducts(c, Ad, Aa, "defragmented"));

  /* one more round, so that the device holds the only valid copy, then the duplicates */
  {
    PetscInt     ne, *i, *j, c0, c1, c2;
    PetscScalar *v;
    Mat          B, C, Ba, Ca, Aref[2];
    Vec          x, y;
    PetscReal    nrm;

    PetscCall(MakeEntries(c, &ne, &i, &j, &v));
    PetscCall(AddEntries(Ad, 1, &Aa, ne, i, j, v));
    PetscCall(PetscFree3(i, j, v));
    PetscCall(CopyEvents(&c0));
    PetscCall(MatDuplicate(Ad, MAT_COPY_VALUES, &B));
    PetscCall(MatDuplicate(Ad, MAT_DO_NOT_COPY_VALUES, &C));
    PetscCall(MatDuplicate(Aa, MAT_COPY_VALUES, &Ba));
    PetscCall(MatDuplicate(Aa, MAT_DO_NOT_COPY_VALUES, &Ca));
    PetscCall(CopyEvents(&c1)); /* the host duplicates copied Ad down once */
    PetscCall(CompareProducts(c, B, Ba, "MatDuplicate(MAT_COPY_VALUES)"));
    PetscCall(MatCreateVecs(C, &x, &y));
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(C, x, y));
    PetscCall(VecNorm(y, NORM_INFINITY, &nrm));
    PetscCall(GKCheck((PetscBool)(nrm == 0.0), "MatDuplicate(MAT_DO_NOT_COPY_VALUES): the product on the device is zero"));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(CopyEvents(&c2));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "  DCSRCUDACopy events: %" PetscInt_FMT " before the duplicates, %" PetscInt_FMT " after them, %" PetscInt_FMT " after their first products\n", c0, c1, c2));
    PetscCall(GKCheck((PetscBool)(c2 == c1), "the duplicates' first products copy nothing between host and device (device-to-device duplicate)"));
    /* batches into the duplicates: independent of Ad */
    PetscCall(MakeEntries(c, &ne, &i, &j, &v));
    Aref[0] = Ba;
    PetscCall(AddEntries(B, 1, Aref, ne, i, j, v));
    Aref[0] = Ca;
    PetscCall(AddEntries(C, 1, Aref, ne, i, j, v));
    PetscCall(PetscFree3(i, j, v));
    PetscCall(CopyEvents(&c1));
    PetscCall(GKCheck((PetscBool)(c1 == c2), "the duplicates' device batches copy nothing between host and device"));
    PetscCall(CompareProducts(c, B, Ba, "duplicate with values, after a batch"));
    PetscCall(CompareProducts(c, C, Ca, "duplicate without values, after a batch"));
    PetscCall(CompareProducts(c, Ad, Aa, "the original, after the duplicates' batches"));
    PetscCall(GKCheckMatClose(B, Ba, c->tol, "duplicate with values (whole matrix, host copy)"));
    PetscCall(MatDestroy(&B));
    PetscCall(MatDestroy(&C));
    PetscCall(MatDestroy(&Ba));
    PetscCall(MatDestroy(&Ca));
  }
  PetscCall(MatDestroy(&Ad));
  PetscCall(MatDestroy(&Aa));
  PetscCall(PetscRandomDestroy(&c->rnd));
  if (c->expect_base >= 0) {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "  -expect_csr_base_product %" PetscInt_FMT ": %" PetscInt_FMT " products on it\n", c->expect_base, c->nbase));
    PetscCall(GKCheck((PetscBool)(c->nbase > 0), "-expect_csr_base_product: some product ran on the CSR base with the expected product"));
  }
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "dcsr_cuda_paths: all checks passed\n"));
#endif
  PetscCall(PetscFinalize());
  return 0;
}
