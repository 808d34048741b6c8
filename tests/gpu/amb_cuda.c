static const char help[] = "MATAMBCUDA against AIJ and the host MATAMB: products (also added, in place, transposed) for every block width,\n"
                           "the deterministic kernel bitwise against the host AMB kernel, FP32 values within FP32 rounding, the values\n"
                           "refresh through the map (only values move), device ops (diagonal, scale, shift, zero entries), a new pattern,\n"
                           "COO on the device (the host copy stale until a host operation reads it: every kind of read against AIJ),\n"
                           "MatBindToCPU back and forth, converts, bad options, and a KSP solve without CPU<->GPU copies.\n"
                           "  -f file.mtx[.gz]     a Matrix Market matrix (real/integer, general/symmetric), or\n"
                           "  -gen name -gen_scale s -gen_seed k   a matrix of tests/common/gkgen.c (default: powerlaw, scale 0)\n"
                           "  -solve <auto,cg,gmres,none>   the KSP check (auto: cg for an SPD generated case, else gmres; square only)\n"
                           "  -det_check <0,1>     deterministic mode: also compare with the host AMB kernel bitwise (default 1)\n"
                           "Matrix options (-mat_amb_segment_width, -mat_amb_deterministic, -mat_amb_values, -mat_amb_csr_fallback, ...) reach\n"
                           "both the device and the host AMB matrices.\n";

/*
   R is a host MATAIJ, H = MatConvert(R, MATAMB) the host AMB reference, D = MatConvert(R, MATAMBCUDA) the device matrix;
   H and D read the same -mat_amb_* options. Products are compared entry by entry against AIJ with the bound
   |y_D - y_R|_i <= tol * (|A| |x| + |z|)_i (tol 1e-13 for double values, 2e-6 with -mat_amb_values single), and
   their results must have been written on the device (offload mask GPU). With -mat_amb_deterministic the device
   product must equal the host AMB product bit for bit (b fixed on both, so both build the same layout) and repeat
   itself bit for bit. The device's own counters (the composed "MatAMBCUDAGetStats_C") show what moved: a value
   change on the host uploads the values only (no structure, no layout build) and refreshes the layout through the
   map; a device op (scale, shift, zero entries) uploads nothing; a new nonzero uploads the structure and rebuilds.
   SELL-32 (-mat_amb_cuda_sell): gpukit's SELL kernel and cuSPARSE's sliced ELLPACK forced, then as tuner candidates,
   all products against AIJ; the SELL kernel bit for bit against the host AMB kernel on deterministic lines with
   -mat_amb_csr_fallback never; the layout in use read back through the composed "MatAMBCUDAGetLayout_C".
*/
#include "gktest.h"
#include "gkgen.h"
#include <petscksp.h>

#if PetscDefined(HAVE_CUDA)

typedef PetscErrorCode (*StatsFn)(Mat, PetscInt *, PetscInt *, PetscInt *, PetscInt *, PetscInt *, PetscInt *, PetscInt *);

typedef struct {
  PetscInt structup, valup, build, refresh, coo, b, block;
} Stats;

typedef struct {
  MPI_Comm    comm;
  PetscMPIInt size, rank;
  PetscRandom rnd;
  PetscBool   det, single, square, spd;
  PetscReal   tol;
  Mat         R, Rabs, H, D;
  Vec         xh, xd, yh, yd, zh, zd, wh, wd; /* x: columns, y/z: rows (host and device); w: host scratch over rows */
  Vec         txh, txd, tyh, tyd;             /* transpose: x over rows, y over columns */
  PetscInt    nchecks;
} Ctx;

/* the type name of a Mat or a Vec (no private header here) */
static const char *MatTN(Mat A)
{
  MatType t = NULL;
  if (MatGetType(A, &t)) return "?";
  return t ? t : "(none)";
}
static const char *VecTN(Vec v)
{
  VecType t = NULL;
  if (VecGetType(v, &t)) return "?";
  return t ? t : "(none)";
}

/* ------------------------------------------------------------------------------------------------------------------
   Input
   ------------------------------------------------------------------------------------------------------------------ */

/* every rank reads the whole (small) file and inserts its own rows */
static PetscErrorCode LoadMatrixMarket(MPI_Comm comm, const char *path, Mat *R, PetscBool *symmetric)
{
  FILE     *fp;
  char      line[1024], cmd[PETSC_MAX_PATH_LEN + 32], field[64] = "", sym[64] = "";
  size_t    len;
  PetscBool gz;
  long      mm, nn, kk;
  PetscInt  rs, re;

  PetscFunctionBegin;
  PetscCall(PetscStrlen(path, &len));
  gz = (PetscBool)(len > 3 && !strcmp(path + len - 3, ".gz"));
  if (gz) {
    PetscCall(PetscSNPrintf(cmd, sizeof(cmd), "gzip -dc '%s'", path));
    fp = popen(cmd, "r");
  } else fp = fopen(path, "r");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open %s", path);
  PetscCheck(fgets(line, sizeof(line), fp), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s is empty", path);
  PetscCheck(sscanf(line, "%%%%MatrixMarket matrix coordinate %63s %63s", field, sym) == 2, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s is not a Matrix Market coordinate file", path);
  PetscCheck(!strcmp(field, "real") || !strcmp(field, "integer"), PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: values of type %s are not supported here", path, field);
  *symmetric = (PetscBool)!strcmp(sym, "symmetric");
  do {
    PetscCheck(fgets(line, sizeof(line), fp), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: no size line", path);
  } while (line[0] == '%');
  PetscCheck(sscanf(line, "%ld %ld %ld", &mm, &nn, &kk) == 3, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: bad size line", path);
  PetscCall(MatCreate(comm, R));
  PetscCall(MatSetSizes(*R, PETSC_DECIDE, PETSC_DECIDE, (PetscInt)mm, (PetscInt)nn));
  PetscCall(MatSetType(*R, MATAIJ));
  PetscCall(MatSetUp(*R));
  PetscCall(MatSetOption(*R, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatGetOwnershipRange(*R, &rs, &re));
  for (long e = 0; e < kk; e++) {
    long        i, j;
    double      v;
    PetscInt    ii, jj;
    PetscScalar sv;
    PetscCheck(fgets(line, sizeof(line), fp) && sscanf(line, "%ld %ld %lf", &i, &j, &v) == 3, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: bad entry line %ld", path, e);
    ii = (PetscInt)i - 1;
    jj = (PetscInt)j - 1;
    sv = (PetscScalar)v;
    if (ii >= rs && ii < re) PetscCall(MatSetValue(*R, ii, jj, sv, INSERT_VALUES));
    if (*symmetric && ii != jj && jj >= rs && jj < re) PetscCall(MatSetValue(*R, jj, ii, sv, INSERT_VALUES));
  }
  if (gz) pclose(fp);
  else fclose(fp);
  PetscCall(MatAssemblyBegin(*R, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*R, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* |R| entry by entry (for the error bounds) */
static PetscErrorCode AbsMat(Mat R, Mat *Rabs)
{
  Mat       blk[2];
  PetscBool ismpi;

  PetscFunctionBegin;
  PetscCall(MatDuplicate(R, MAT_COPY_VALUES, Rabs));
  PetscCall(PetscObjectTypeCompare((PetscObject)*Rabs, MATMPIAIJ, &ismpi));
  if (ismpi) PetscCall(MatMPIAIJGetSeqAIJ(*Rabs, &blk[0], &blk[1], NULL));
  else {
    blk[0] = *Rabs;
    blk[1] = NULL;
  }
  for (int k = 0; k < 2; k++) {
    PetscScalar *a;
    PetscInt     m;
    MatInfo      info;
    if (!blk[k]) continue;
    PetscCall(MatGetInfo(blk[k], MAT_LOCAL, &info));
    PetscCall(MatGetLocalSize(blk[k], &m, NULL));
    PetscCall(MatSeqAIJGetArray(blk[k], &a));
    for (PetscInt e = 0; e < (PetscInt)info.nz_used; e++) a[e] = PetscAbsScalar(a[e]);
    PetscCall(MatSeqAIJRestoreArray(blk[k], &a));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------------------------------------------------------
   Checks
   ------------------------------------------------------------------------------------------------------------------ */

static PetscErrorCode GetStats(Mat D, Stats *s)
{
  Mat       blk[2] = {D, NULL};
  PetscBool ismpi;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(s, sizeof(*s)));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)D, MATMPIAIJ, &ismpi));
  if (!ismpi) PetscCall(PetscStrbeginswith(MatTN(D), "mpiaij", &ismpi));
  if (ismpi) PetscCall(MatMPIAIJGetSeqAIJ(D, &blk[0], &blk[1], NULL));
  for (int k = 0; k < 2; k++) {
    StatsFn  f = NULL;
    PetscInt v[7];
    if (!blk[k]) continue;
    PetscCall(PetscObjectQueryFunction((PetscObject)blk[k], "MatAMBCUDAGetStats_C", &f));
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s block %d (type %s) has no device statistics: not a MATSEQAMBCUDA", MatTN(D), k, MatTN(blk[k]));
    PetscCall((*f)(blk[k], &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]));
    s->structup += v[0];
    s->valup += v[1];
    s->build += v[2];
    s->refresh += v[3];
    s->coo += v[4];
    if (k == 0) {
      s->b     = v[5];
      s->block = v[6];
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the vector was last written on the device */
static PetscErrorCode CheckOnDevice(Vec v, const char *what)
{
  PetscOffloadMask mask;

  PetscFunctionBegin;
  PetscCall(VecGetOffloadMask(v, &mask));
  PetscCheck(mask == PETSC_OFFLOAD_GPU, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the result was not written on the device (offload mask %d)", what, (int)mask);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* |yd - yr|_i <= tol * bound_i for every i (bound = |A||x| + |z|), worst over ranks */
static PetscErrorCode CheckBound(Ctx *c, Vec yd, Vec yr, Vec bound, const char *what)
{
  const PetscScalar *a, *r, *bd;
  PetscInt           n, bad = -1;
  PetscReal          worst = 0, gworst;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(yr, &n));
  PetscCall(VecGetArrayRead(yd, &a));
  PetscCall(VecGetArrayRead(yr, &r));
  PetscCall(VecGetArrayRead(bound, &bd));
  for (PetscInt i = 0; i < n; i++) {
    PetscReal d = PetscAbsScalar(a[i] - r[i]), lim = c->tol * PetscRealPart(bd[i]) + 1e-300;
    if (!(d <= lim)) {
      if (bad < 0) bad = i;
      worst = PetscMax(worst, lim > 0 ? d / lim : PETSC_MAX_REAL);
      if (PetscIsInfOrNanScalar(a[i])) worst = PETSC_MAX_REAL;
    }
  }
  if (bad >= 0) PetscCall(PetscPrintf(PETSC_COMM_SELF, "[%d] %s: first bad entry %" PetscInt_FMT ": %.17g vs %.17g (bound %g)\n", c->rank, what, bad, (double)PetscRealPart(a[bad]), (double)PetscRealPart(r[bad]), (double)(c->tol * PetscRealPart(bd[bad]))));
  PetscCall(VecRestoreArrayRead(bound, &bd));
  PetscCall(VecRestoreArrayRead(yr, &r));
  PetscCall(VecRestoreArrayRead(yd, &a));
  PetscCall(MPIU_Allreduce(&worst, &gworst, 1, MPIU_REAL, MPIU_MAX, c->comm));
  PetscCheck(gworst == 0, c->comm, PETSC_ERR_PLIB, "%s: the device result differs from AIJ's beyond %g x (|A||x| + |z|) (worst ratio %g)", what, (double)c->tol, (double)gworst);
  c->nchecks++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a and b hold the same bits (NaN = NaN), over all ranks */
static PetscErrorCode CheckBitwise(Ctx *c, Vec a, Vec b, const char *what)
{
  const PetscScalar *x, *y;
  PetscInt           n, bad = -1, gbad;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(a, &n));
  PetscCall(VecGetArrayRead(a, &x));
  PetscCall(VecGetArrayRead(b, &y));
  for (PetscInt i = 0; i < n && bad < 0; i++)
    if (!(x[i] == y[i] || (PetscIsNanScalar(x[i]) && PetscIsNanScalar(y[i])))) bad = i;
  if (bad >= 0) PetscCall(PetscPrintf(PETSC_COMM_SELF, "[%d] %s: entry %" PetscInt_FMT ": %.17g vs %.17g\n", c->rank, what, bad, (double)PetscRealPart(x[bad]), (double)PetscRealPart(y[bad])));
  PetscCall(VecRestoreArrayRead(b, &y));
  PetscCall(VecRestoreArrayRead(a, &x));
  PetscCall(MPIU_Allreduce(&bad, &gbad, 1, MPIU_INT, MPI_MAX, c->comm));
  PetscCheck(gbad < 0, c->comm, PETSC_ERR_PLIB, "%s: not bitwise equal", what);
  c->nchecks++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* fresh random x (and z), the same on host and device */
static PetscErrorCode NewInputs(Ctx *c)
{
  PetscFunctionBegin;
  PetscCall(VecSetRandom(c->xh, c->rnd));
  PetscCall(VecShift(c->xh, -0.5));
  PetscCall(GKCopyValues(c->xh, c->xd));
  PetscCall(VecSetRandom(c->zh, c->rnd));
  PetscCall(GKCopyValues(c->zh, c->zd));
  PetscCall(VecSetRandom(c->txh, c->rnd));
  PetscCall(GKCopyValues(c->txh, c->txd));
  PetscCall(GKToDevice(c->xd));
  PetscCall(GKToDevice(c->zd));
  PetscCall(GKToDevice(c->txd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* every product of D against R's: mult, multadd (z != y), multadd in place, transpose, transpose add */
static PetscErrorCode CheckProducts(Ctx *c, Mat D, Mat R, const char *what)
{
  char msg[256];
  Vec  xa, bound, tb, txa, tza;

  PetscFunctionBegin;
  PetscCall(NewInputs(c));
  PetscCall(VecDuplicate(c->xh, &xa));
  PetscCall(VecDuplicate(c->yh, &bound));
  PetscCall(VecCopy(c->xh, xa));
  PetscCall(VecAbs(xa));
  PetscCall(MatMult(c->Rabs, xa, bound));

  PetscCall(MatMult(D, c->xd, c->yd));
  PetscCall(MatMult(R, c->xh, c->yh));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: MatMult", what));
  PetscCall(CheckOnDevice(c->yd, msg));
  PetscCall(CheckBound(c, c->yd, c->yh, bound, msg));

  PetscCall(VecCopy(c->zh, c->wh)); /* bound + |z| */
  PetscCall(VecAbs(c->wh));
  PetscCall(VecAXPY(bound, 1.0, c->wh));
  PetscCall(MatMultAdd(D, c->xd, c->zd, c->yd));
  PetscCall(MatMultAdd(R, c->xh, c->zh, c->yh));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: MatMultAdd", what));
  PetscCall(CheckOnDevice(c->yd, msg));
  PetscCall(CheckBound(c, c->yd, c->yh, bound, msg));

  PetscCall(VecCopy(c->zd, c->yd)); /* in place: y = y + A x (MPIAIJ's off-diagonal block does this) */
  PetscCall(VecCopy(c->zh, c->yh));
  PetscCall(MatMultAdd(D, c->xd, c->yd, c->yd));
  PetscCall(MatMultAdd(R, c->xh, c->yh, c->yh));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: MatMultAdd in place", what));
  PetscCall(CheckOnDevice(c->yd, msg));
  PetscCall(CheckBound(c, c->yd, c->yh, bound, msg));

  /* transpose: bound |A|^T |tx| (+ |tz|) */
  PetscCall(VecDuplicate(c->txh, &txa));
  PetscCall(VecDuplicate(c->tyh, &tb));
  PetscCall(VecDuplicate(c->tyh, &tza));
  PetscCall(VecCopy(c->txh, txa));
  PetscCall(VecAbs(txa));
  PetscCall(MatMultTranspose(c->Rabs, txa, tb));
  PetscCall(MatMultTranspose(D, c->txd, c->tyd));
  PetscCall(MatMultTranspose(R, c->txh, c->tyh));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: MatMultTranspose", what));
  PetscCall(CheckBound(c, c->tyd, c->tyh, tb, msg));
  PetscCall(VecCopy(c->tyh, tza)); /* z = the last result */
  PetscCall(VecAbs(tza));
  PetscCall(VecAXPY(tb, 1.0, tza));
  PetscCall(MatMultTransposeAdd(D, c->txd, c->tyd, c->tyd));
  PetscCall(MatMultTransposeAdd(R, c->txh, c->tyh, c->tyh));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: MatMultTransposeAdd in place", what));
  PetscCall(CheckBound(c, c->tyd, c->tyh, tb, msg));
  PetscCall(VecDestroy(&txa));
  PetscCall(VecDestroy(&tb));
  PetscCall(VecDestroy(&tza));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&bound));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* deterministic mode: D's product equals H's (host AMB kernel) bitwise, and repeats itself */
static PetscErrorCode CheckDeterministic(Ctx *c, const char *what)
{
  char msg[256];
  Vec  y2, yd2;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(c->yh, &y2));
  PetscCall(VecDuplicate(c->yd, &yd2));
  PetscCall(NewInputs(c));
  PetscCall(MatMult(c->D, c->xd, c->yd));
  PetscCall(MatMult(c->H, c->xh, c->yh));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: deterministic MatMult vs the host AMB kernel", what));
  PetscCall(CheckBitwise(c, c->yd, c->yh, msg));
  PetscCall(MatMult(c->D, c->xd, yd2));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: deterministic MatMult repeated", what));
  PetscCall(CheckBitwise(c, yd2, c->yd, msg));
  PetscCall(MatMultAdd(c->D, c->xd, c->zd, c->yd));
  PetscCall(MatMultAdd(c->H, c->xh, c->zh, c->yh));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: deterministic MatMultAdd vs the host AMB kernel", what));
  PetscCall(CheckBitwise(c, c->yd, c->yh, msg));
  { /* the transpose: repeats itself bitwise (its long rows one block each, no atomics) */
    Vec t1, t2;
    PetscCall(VecDuplicate(c->xd, &t1));
    PetscCall(VecDuplicate(c->xd, &t2));
    PetscCall(MatMultTranspose(c->D, c->yd, t1));
    PetscCall(MatMultTranspose(c->D, c->yd, t2));
    PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: deterministic MatMultTranspose repeated", what));
    PetscCall(CheckBitwise(c, t2, t1, msg));
    PetscCall(VecDestroy(&t1));
    PetscCall(VecDestroy(&t2));
  }
  PetscCall(VecDestroy(&y2));
  PetscCall(VecDestroy(&yd2));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetOpt(const char *name, const char *value)
{
  PetscFunctionBegin;
  PetscCall(PetscOptionsSetValue(NULL, name, value));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* every block width (0: the model's, tuned) on D and H */
static PetscErrorCode CheckEveryB(Ctx *c)
{
  char           what[128], bs[8];
  PetscInt       W = 0, Wopt = 0, fb;
  PetscBool      fallback, hasW, fixfb;
  PetscLogDouble bytes;
  char           fbmode[16] = "";

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-mat_amb_segment_width", &Wopt, &hasW));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_amb_csr_fallback", fbmode, sizeof(fbmode), &fixfb));
  for (PetscInt b = 0; b <= 8; b++) {
    PetscCall(PetscSNPrintf(bs, sizeof(bs), "%" PetscInt_FMT, b));
    PetscCall(SetOpt("-mat_amb_b", bs));
    PetscCall(MatSetFromOptions(c->D));
    PetscCall(MatSetFromOptions(c->H));
    PetscCall(PetscSNPrintf(what, sizeof(what), "b %" PetscInt_FMT "%s", b, b ? "" : " (model, tuned)"));
    PetscCall(CheckProducts(c, c->D, c->R, what));
    PetscCall(MatAMBGetInfo(c->D, &fb, &W, &fallback, &bytes));
    if (hasW) PetscCheck(W == Wopt, c->comm, PETSC_ERR_PLIB, "%s: MatAMBGetInfo says W %" PetscInt_FMT ", -mat_amb_segment_width says %" PetscInt_FMT, what, W, Wopt);
    if (fixfb && !strcmp(fbmode, "always")) PetscCheck(fallback, c->comm, PETSC_ERR_PLIB, "%s: -mat_amb_csr_fallback always, but the device runs AMB", what);
    if (fixfb && !strcmp(fbmode, "never")) {
      PetscInt m;
      PetscCall(MatGetLocalSize(c->R, &m, NULL));
      PetscCheck(!fallback || m == 0, c->comm, PETSC_ERR_PLIB, "%s: -mat_amb_csr_fallback never, but the device runs the CSR kernel", what);
      if (b > 0) PetscCheck(fb >= 1 && fb <= b, c->comm, PETSC_ERR_PLIB, "%s: the device uses b %" PetscInt_FMT, what, fb);
    }
    if (c->det && b > 0 && fixfb && !strcmp(fbmode, "never")) PetscCall(CheckDeterministic(c, what));
    PetscCall(PetscPrintf(c->comm, "ok: %s: products against AIJ (device b %" PetscInt_FMT ", %s, model %.4g bytes)%s\n", what, fb, fallback ? "CSR fallback" : "AMB", (double)bytes, c->det && b > 0 && fixfb && !strcmp(fbmode, "never") ? ", bitwise equal to the host AMB kernel" : ""));
  }
  PetscCall(SetOpt("-mat_amb_b", "0"));
  PetscCall(MatSetFromOptions(c->D));
  PetscCall(MatSetFromOptions(c->H));
  /* the view names the device kernel (one rank: the block is the matrix) */
  PetscCall(PetscViewerPushFormat(PETSC_VIEWER_STDOUT_WORLD, PETSC_VIEWER_ASCII_INFO));
  PetscCall(MatView(c->D, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(PetscViewerPopFormat(PETSC_VIEWER_STDOUT_WORLD));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device plan's block counts for b = 1..8 and its (row, segment) pairs (ambkernels.cu: long rows by segment), on
   every block of D, against a count here from R's block: per pair (a row's entries in one segment of W columns, or with
   the plan's diagonal segments of W values of col - row + dshift), a greedy cover by blocks of b columns, a block
   starting at the pair's first entry and at every entry at least b columns past the last start. Exact equality. */
typedef PetscErrorCode (*PlanCountsFn)(Mat, PetscInt *, PetscInt64[], PetscInt64 *, PetscInt64 *);

static PetscErrorCode CheckPlanCounts(Ctx *c)
{
  Mat       blkd[2] = {c->D, NULL}, blkr[2] = {c->R, NULL};
  PetscBool ismpi;

  PetscFunctionBegin;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)c->R, MATMPIAIJ, &ismpi));
  if (ismpi) {
    PetscCall(MatMPIAIJGetSeqAIJ(c->D, &blkd[0], &blkd[1], NULL));
    PetscCall(MatMPIAIJGetSeqAIJ(c->R, &blkr[0], &blkr[1], NULL));
  }
  for (int k = 0; k < 2; k++) {
    PlanCountsFn    f = NULL;
    PetscInt        W, n, maxlen = 0;
    PetscInt64      dev[8], devpairs, ref[8] = {0}, refpairs = 0, dshift = 0;
    const PetscInt *ia, *ja;
    PetscBool       done;
    if (!blkd[k]) continue;
    PetscCall(PetscObjectQueryFunction((PetscObject)blkd[k], "MatAMBCUDAGetPlanCounts_C", &f));
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s block %d (type %s) has no plan counts: not a MATSEQAMBCUDA", MatTN(c->D), k, MatTN(blkd[k]));
    PetscCall((*f)(blkd[k], &W, dev, &devpairs, &dshift));
    if (devpairs == 0) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "[%d] plan counts of block %d: none (the rules chose the fallback before counting)\n", c->rank, k));
      continue;
    }
    PetscCall(MatGetRowIJ(blkr[k], 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "MatGetRowIJ() of the reference block %d", k);
    for (PetscInt r = 0; r < n; r++) {
      PetscInt64 g = -1, col0[8] = {0};
      maxlen = PetscMax(maxlen, ia[r + 1] - ia[r]);
      for (PetscInt e = ia[r]; e < ia[r + 1]; e++) {
        const PetscInt64 col = dshift ? (PetscInt64)ja[e] - r + dshift : (PetscInt64)ja[e]; /* the plan's segments cut col (or col - r + dshift) */
        if (col / W != g) { /* a new pair: every b starts a block here */
          g = col / W;
          refpairs++;
          for (int b = 0; b < 8; b++) {
            col0[b] = col;
            ref[b]++;
          }
        } else
          for (int b = 0; b < 8; b++)
            if (col - col0[b] >= b + 1) {
              col0[b] = col;
              ref[b]++;
            }
      }
    }
    PetscCall(MatRestoreRowIJ(blkr[k], 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCheck(devpairs == refpairs, PETSC_COMM_SELF, PETSC_ERR_PLIB, "[%d] block %d: the device plan counts %" PetscInt64_FMT " (row, segment) pairs, the host %" PetscInt64_FMT " (W %" PetscInt_FMT ")", c->rank, k, devpairs, refpairs, W);
    for (int b = 0; b < 8; b++) PetscCheck(dev[b] == ref[b], PETSC_COMM_SELF, PETSC_ERR_PLIB, "[%d] block %d: for b = %d the device plan counts %" PetscInt64_FMT " blocks, the host %" PetscInt64_FMT " (W %" PetscInt_FMT ")", c->rank, k, b + 1, dev[b], ref[b], W);
    c->nchecks++;
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "[%d] ok: plan counts of block %d equal the host's: %" PetscInt64_FMT " pairs, %" PetscInt64_FMT " blocks of 1 .. %" PetscInt64_FMT " of 8 (W %" PetscInt_FMT ", %s segments, longest row %" PetscInt_FMT "%s)\n", c->rank, k, refpairs, ref[0], ref[7], W, dshift ? "diagonal" : "column", maxlen, maxlen > 1024 ? ": the long-row kernel ran" : ""));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the layout the device product of D (its diagonal block on MPI) uses, and that block's local nonzeros */
static PetscErrorCode GetLayout(Mat D, const char **name, PetscInt *nz)
{
  Mat       blk = D;
  PetscBool ismpi;
  MatInfo   info;
  PetscErrorCode (*f)(Mat, const char **) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)D, MATMPIAIJ, &ismpi));
  if (!ismpi) PetscCall(PetscStrbeginswith(MatTN(D), "mpiaij", &ismpi));
  if (ismpi) PetscCall(MatMPIAIJGetSeqAIJ(D, &blk, NULL, NULL));
  PetscCall(PetscObjectQueryFunction((PetscObject)blk, "MatAMBCUDAGetLayout_C", &f));
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s (type %s) does not say its device layout: not a MATSEQAMBCUDA", MatTN(D), MatTN(blk));
  PetscCall((*f)(blk, name));
  PetscCall(MatGetInfo(blk, MAT_LOCAL, &info));
  *nz = (PetscInt)info.nz_used;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* SELL-32 on the device (-mat_amb_cuda_sell): gpukit's kernel and cuSPARSE's sliced ELLPACK forced, then as a tuner
   candidate (several rounds of products walk the tuner through its layouts); every product against AIJ, gpukit's SELL
   kernel bitwise against the host AMB kernel where that one runs (deterministic line with -mat_amb_csr_fallback never) */
static PetscErrorCode CheckSell(Ctx *c)
{
  const char *modes[] = {"kernel", "cusparse", "tune"}, *want[] = {"sellk", "sell", NULL};
  char        fbmode[16] = "", given[16] = "";
  PetscBool   fixfb, hasgiven;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_amb_csr_fallback", fbmode, sizeof(fbmode), &fixfb));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_amb_cuda_sell", given, sizeof(given), &hasgiven));
  for (int k = 0; k < 3; k++) {
    char        what[96];
    const char *name = NULL;
    PetscInt    nz   = 0;
    PetscCall(SetOpt("-mat_amb_cuda_sell", modes[k]));
    PetscCall(MatSetFromOptions(c->D));
    PetscCall(PetscSNPrintf(what, sizeof(what), "-mat_amb_cuda_sell %s", modes[k]));
    for (int r = 0; r < (k == 2 ? 10 : 1); r++) PetscCall(CheckProducts(c, c->D, c->R, what));
    PetscCall(GetLayout(c->D, &name, &nz));
    if (want[k] && nz > 0) PetscCheck(!strcmp(name, want[k]), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the device product uses the %s layout, expected %s", what, name, want[k]);
    if (k == 0 && c->det && fixfb && !strcmp(fbmode, "never")) {
      PetscCall(CheckDeterministic(c, what));
      PetscCall(PetscPrintf(c->comm, "ok: %s: gpukit's SELL kernel bitwise equal to the host AMB kernel\n", what));
    }
    PetscCall(PetscPrintf(c->comm, "ok: %s: products against AIJ, layout %s on rank 0's diagonal block\n", what, name));
  }
  PetscCall(PetscViewerPushFormat(PETSC_VIEWER_STDOUT_WORLD, PETSC_VIEWER_ASCII_INFO));
  PetscCall(MatView(c->D, PETSC_VIEWER_STDOUT_WORLD)); /* names the layout that won and the candidates */
  PetscCall(PetscViewerPopFormat(PETSC_VIEWER_STDOUT_WORLD));
  if (hasgiven) PetscCall(SetOpt("-mat_amb_cuda_sell", given));
  else PetscCall(PetscOptionsClearValue(NULL, "-mat_amb_cuda_sell"));
  PetscCall(MatSetFromOptions(c->D));
  PetscCall(CheckProducts(c, c->D, c->R, "-mat_amb_cuda_sell back to the command line's"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a value change with the same pattern moves values only; device ops move nothing; a new entry moves the structure */
static PetscErrorCode CheckRefresh(Ctx *c)
{
  Stats    s0, s1;
  PetscInt rs, re, n;
  Vec      dd, dh;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(c->R, &rs, &re));
  PetscCall(MatGetSize(c->R, NULL, &n));
  PetscCall(CheckProducts(c, c->D, c->R, "before the value change"));
  { /* fix b at the layout's current one: with b tuned, the tuner's search may still rebuild the layout for a candidate b
       during the products below (how far the search has come depends on timing, e.g. on each rank's own GPU) */
    PetscInt  b, W;
    PetscBool      fallback;
    PetscLogDouble bytes;
    char           bs[32];
    PetscCall(MatAMBGetInfo(c->D, &b, &W, &fallback, &bytes));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &b, 1, MPIU_INT, MPI_MAX, c->comm));
    PetscCall(PetscSNPrintf(bs, sizeof(bs), "%" PetscInt_FMT, PetscMax(b, 1)));
    PetscCall(SetOpt("-mat_amb_b", bs));
    PetscCall(MatSetFromOptions(c->D));
    PetscCall(CheckProducts(c, c->D, c->R, "with b fixed before the value change"));
  }
  /* host values with the same pattern: the first stored entry of every local row, scaled */
  PetscCall(GetStats(c->D, &s0));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscInt           col = 0;
    PetscScalar        v   = 0;
    PetscCall(MatGetRow(c->R, i, &nc, &cols, &vals));
    if (nc) {
      col = cols[0];
      v   = 1.5 * vals[0] + 0.25;
    }
    PetscCall(MatRestoreRow(c->R, i, &nc, &cols, &vals));
    if (!nc) continue;
    PetscCall(MatSetValue(c->R, i, col, v, INSERT_VALUES));
    PetscCall(MatSetValue(c->D, i, col, v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(c->R, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(c->R, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(c->D, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(c->D, MAT_FINAL_ASSEMBLY));
  PetscCall(MatDestroy(&c->Rabs));
  PetscCall(AbsMat(c->R, &c->Rabs));
  PetscCall(CheckProducts(c, c->D, c->R, "after a host value change (same pattern)"));
  PetscCall(GetStats(c->D, &s1));
  PetscCheck(s1.structup == s0.structup && s1.build == s0.build, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A value change with the same pattern moved the structure (%" PetscInt_FMT " uploads) or rebuilt the layout (%" PetscInt_FMT " builds)", s1.structup - s0.structup, s1.build - s0.build);
  PetscCheck(s1.valup >= s0.valup + 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A value change on the host was not uploaded (%" PetscInt_FMT " value uploads)", s1.valup - s0.valup);
  PetscCheck(s1.valup <= s0.valup + 2, PETSC_COMM_SELF, PETSC_ERR_PLIB, "One value change uploaded the values %" PetscInt_FMT " times", s1.valup - s0.valup); /* up to 2 blocks on MPI */
  PetscCall(PetscPrintf(c->comm, "ok: host value change: values uploaded once per block, no structure upload, no layout build; layout refreshed through the map\n"));

  /* device ops: nothing uploaded */
  PetscCall(GetStats(c->D, &s0));
  PetscCall(MatScale(c->D, 2.5));
  PetscCall(MatScale(c->R, 2.5));
  PetscCall(MatScale(c->Rabs, 2.5));
  PetscCall(CheckProducts(c, c->D, c->R, "after MatScale"));
  PetscCall(MatCreateVecs(c->D, NULL, &dd));
  PetscCall(MatCreateVecs(c->R, NULL, &dh));
  PetscCall(MatGetDiagonal(c->D, dd));
  PetscCall(MatGetDiagonal(c->R, dh));
  PetscCall(CheckOnDevice(dd, "MatGetDiagonal"));
  PetscCall(CheckBitwise(c, dd, dh, "MatGetDiagonal"));
  PetscCall(GetStats(c->D, &s1));
  PetscCheck(s1.valup == s0.valup && s1.structup == s0.structup, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatScale/MatGetDiagonal uploaded the matrix (%" PetscInt_FMT " value uploads, %" PetscInt_FMT " structure uploads)", s1.valup - s0.valup, s1.structup - s0.structup);
  PetscCall(PetscPrintf(c->comm, "ok: MatScale and MatGetDiagonal on the device, no upload\n"));
  if (c->square) { /* on one rank on the device; MPIAIJ shifts through MatDiagonalSet() on the host (then one upload) */
    PetscBool diagfull = PETSC_TRUE; /* before the shift: a missing diagonal entry makes AIJ insert it (a new pattern) */
    if (c->size == 1) {
      PetscInt n0;
      PetscCall(MatGetLocalSize(c->R, &n0, NULL));
      for (PetscInt i = 0; i < n0 && diagfull; i++) {
        PetscInt        nc;
        const PetscInt *cols;
        PetscBool       has = PETSC_FALSE;
        PetscCall(MatGetRow(c->R, i, &nc, &cols, NULL));
        for (PetscInt t = 0; t < nc; t++) has = (PetscBool)(has || cols[t] == i);
        PetscCall(MatRestoreRow(c->R, i, &nc, &cols, NULL));
        diagfull = has;
      }
    }
    PetscCall(GetStats(c->D, &s0));
    PetscCall(MatShift(c->D, 0.75));
    PetscCall(MatShift(c->R, 0.75));
    PetscCall(MatDestroy(&c->Rabs));
    PetscCall(AbsMat(c->R, &c->Rabs));
    PetscCall(CheckProducts(c, c->D, c->R, "after MatShift"));
    PetscCall(GetStats(c->D, &s1));
    if (c->size == 1) {
      if (diagfull) PetscCheck(s1.valup == s0.valup && s1.structup == s0.structup, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatShift uploaded the matrix (%" PetscInt_FMT " value uploads)", s1.valup - s0.valup);
    }
    PetscCall(PetscPrintf(c->comm, "ok: MatShift (%" PetscInt_FMT " value uploads on rank 0)\n", s1.valup - s0.valup));
  }

  /* a new nonzero: structure upload and rebuild */
  if (c->square) {
    PetscInt i = rs, j = n - 1 - rs;
    PetscCall(GetStats(c->D, &s0));
    PetscCall(MatSetOption(c->R, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MatSetOption(c->D, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    if (re > rs) {
      PetscCall(MatSetValue(c->R, i, j, 0.125, ADD_VALUES));
      PetscCall(MatSetValue(c->D, i, j, 0.125, ADD_VALUES));
      PetscCall(MatSetValue(c->R, i, (j + n / 2) % n, 0.0625, ADD_VALUES));
      PetscCall(MatSetValue(c->D, i, (j + n / 2) % n, 0.0625, ADD_VALUES));
    }
    PetscCall(MatAssemblyBegin(c->R, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(c->R, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyBegin(c->D, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(c->D, MAT_FINAL_ASSEMBLY));
    PetscCall(MatDestroy(&c->Rabs));
    PetscCall(AbsMat(c->R, &c->Rabs));
    PetscCall(CheckProducts(c, c->D, c->R, "after new nonzeros"));
    PetscCall(GetStats(c->D, &s1));
    PetscCall(PetscPrintf(c->comm, "ok: new nonzeros: %" PetscInt_FMT " structure uploads, %" PetscInt_FMT " layout builds on rank 0\n", s1.structup - s0.structup, s1.build - s0.build));
  }

  /* zero entries on the device, then the values back from the host */
  PetscCall(GetStats(c->D, &s0));
  PetscCall(MatZeroEntries(c->D));
  PetscCall(MatZeroEntries(c->R));
  PetscCall(NewInputs(c));
  PetscCall(MatMult(c->D, c->xd, c->yd));
  PetscCall(MatMult(c->R, c->xh, c->yh));
  PetscCall(CheckBitwise(c, c->yd, c->yh, "MatMult after MatZeroEntries"));
  PetscCall(GetStats(c->D, &s1));
  PetscCheck(s1.valup == s0.valup, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatZeroEntries uploaded the values");
  PetscCall(VecDestroy(&dd));
  PetscCall(VecDestroy(&dh));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* an Inf in x reaches only the rows with a nonzero in its column (the zero fill must not spread it) */
static PetscErrorCode CheckNonFinite(Ctx *c)
{
  PetscInt           N, lo, hi, n, bad = -1, gbad;
  PetscInt           j0;
  Vec                xa, bound;
  const PetscScalar *a, *r, *bd;

  PetscFunctionBegin;
  PetscCall(MatGetSize(c->R, NULL, &N));
  j0 = N / 2;
  PetscCall(NewInputs(c));
  PetscCall(VecGetOwnershipRange(c->xh, &lo, &hi));
  PetscCall(VecDuplicate(c->xh, &xa));
  PetscCall(VecDuplicate(c->yh, &bound));
  PetscCall(VecCopy(c->xh, xa));
  PetscCall(VecAbs(xa));
  if (j0 >= lo && j0 < hi) PetscCall(VecSetValue(xa, j0, 0.0, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(xa));
  PetscCall(VecAssemblyEnd(xa));
  PetscCall(MatMult(c->Rabs, xa, bound));
  if (j0 >= lo && j0 < hi) PetscCall(VecSetValue(c->xh, j0, (PetscScalar)INFINITY, INSERT_VALUES)); /* IEEE Inf: PETSC_INFINITY is a finite PETSC_MAX_REAL/4 */
  PetscCall(VecAssemblyBegin(c->xh));
  PetscCall(VecAssemblyEnd(c->xh));
  PetscCall(GKCopyValues(c->xh, c->xd));
  PetscCall(MatMult(c->D, c->xd, c->yd));
  PetscCall(MatMult(c->R, c->xh, c->yh));
  PetscCall(VecGetLocalSize(c->yh, &n));
  PetscCall(VecGetArrayRead(c->yd, &a));
  PetscCall(VecGetArrayRead(c->yh, &r));
  PetscCall(VecGetArrayRead(bound, &bd));
  for (PetscInt i = 0; i < n && bad < 0; i++) {
    if (PetscIsInfOrNanScalar(r[i])) {
      if (!PetscIsInfOrNanScalar(a[i])) { /* allowed only for an explicitly stored zero in column j0 (AIJ: 0 * Inf) */
        PetscInt           nc, rs;
        const PetscInt    *cols;
        const PetscScalar *vals;
        PetscBool          storedzero = PETSC_FALSE;
        PetscCall(MatGetOwnershipRange(c->R, &rs, NULL));
        PetscCall(MatGetRow(c->R, rs + i, &nc, &cols, &vals));
        for (PetscInt t = 0; t < nc; t++)
          if (cols[t] == j0 && vals[t] == 0.0) storedzero = PETSC_TRUE;
        PetscCall(MatRestoreRow(c->R, rs + i, &nc, &cols, &vals));
        if (!storedzero) bad = i;
      }
    } else if (PetscIsInfOrNanScalar(a[i]) || PetscAbsScalar(a[i] - r[i]) > c->tol * PetscRealPart(bd[i]) + 1e-300) bad = i;
  }
  if (bad >= 0) PetscCall(PetscPrintf(PETSC_COMM_SELF, "[%d] Inf in x[%" PetscInt_FMT "]: row %" PetscInt_FMT ": device %.17g, AIJ %.17g, bound %.17g, tol %g\n", c->rank, j0, bad, (double)PetscRealPart(a[bad]), (double)PetscRealPart(r[bad]), (double)PetscRealPart(bd[bad]), (double)c->tol));
  PetscCall(VecRestoreArrayRead(bound, &bd));
  PetscCall(VecRestoreArrayRead(c->yh, &r));
  PetscCall(VecRestoreArrayRead(c->yd, &a));
  PetscCall(MPIU_Allreduce(&bad, &gbad, 1, MPIU_INT, MPI_MAX, c->comm));
  PetscCheck(gbad < 0, c->comm, PETSC_ERR_PLIB, "An Inf in x: the device product is non-finite in other rows than AIJ's (or differs elsewhere)");
  PetscCall(PetscPrintf(c->comm, "ok: an Inf in x reaches the same rows as in AIJ\n"));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&bound));
  c->nchecks++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatBindToCPU(): the host kernels while bound, a host change while bound reaches the device afterwards */
static PetscErrorCode CheckBind(Ctx *c)
{
  Stats s0, s1;

  PetscFunctionBegin;
  PetscCall(MatBindToCPU(c->D, PETSC_TRUE));
  PetscCall(NewInputs(c));
  PetscCall(MatMult(c->D, c->xd, c->yd));
  PetscCall(MatMult(c->R, c->xh, c->yh));
  {
    Vec xa, bound;
    PetscCall(VecDuplicate(c->xh, &xa));
    PetscCall(VecDuplicate(c->yh, &bound));
    PetscCall(VecCopy(c->xh, xa));
    PetscCall(VecAbs(xa));
    PetscCall(MatMult(c->Rabs, xa, bound));
    PetscCall(CheckBound(c, c->yd, c->yh, bound, "MatMult bound to the CPU"));
    PetscCall(VecDestroy(&xa));
    PetscCall(VecDestroy(&bound));
  }
  PetscCall(GetStats(c->D, &s0));
  PetscCall(MatScale(c->D, 0.5)); /* on the host while bound */
  PetscCall(MatScale(c->R, 0.5));
  PetscCall(MatScale(c->Rabs, 0.5));
  PetscCall(MatBindToCPU(c->D, PETSC_FALSE));
  PetscCall(CheckProducts(c, c->D, c->R, "after MatBindToCPU(false) with a host MatScale while bound"));
  PetscCall(GetStats(c->D, &s1));
  PetscCheck(s1.valup > s0.valup, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A MatScale while bound to the CPU did not reach the device");
  PetscCall(PetscPrintf(c->comm, "ok: MatBindToCPU true/false: host kernels while bound, the host's changes uploaded after\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatConvert() both ways */
static PetscErrorCode CheckConverts(Ctx *c)
{
  Mat       C, E, R4;
  PetscBool flg;

  PetscFunctionBegin;
  PetscCall(MatConvert(c->D, MATAIJ, MAT_INITIAL_MATRIX, &C));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)C, &flg, MATSEQAIJ, MATMPIAIJ, ""));
  PetscCheck(flg, c->comm, PETSC_ERR_PLIB, "MatConvert(ambcuda -> aij) gave %s", MatTN(C));
  PetscCall(GKCheckMatClose(C, c->R, 0.0, "MatConvert(ambcuda -> aij)"));
  PetscCall(MatConvert(C, MATAMBCUDA, MAT_INITIAL_MATRIX, &E));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)E, &flg, MATSEQAMBCUDA, MATMPIAMBCUDA, ""));
  PetscCheck(flg, c->comm, PETSC_ERR_PLIB, "MatConvert(aij -> ambcuda) gave %s", MatTN(E));
  PetscCall(CheckProducts(c, E, c->R, "MatConvert(aij -> ambcuda)"));
  PetscCall(MatScale(C, 4.0));
  PetscCall(MatConvert(C, MATAMBCUDA, MAT_REUSE_MATRIX, &E));
  PetscCall(MatDuplicate(c->R, MAT_COPY_VALUES, &R4));
  PetscCall(MatScale(R4, 4.0));
  PetscCall(MatScale(c->Rabs, 4.0));
  PetscCall(CheckProducts(c, E, R4, "MatConvert(aij -> ambcuda, MAT_REUSE_MATRIX)"));
  PetscCall(MatScale(c->Rabs, 0.25));
  PetscCall(MatScale(C, 0.25));
  PetscCall(MatDestroy(&R4));
  PetscCall(MatDestroy(&E));
  PetscCall(MatConvert(C, MATAMBCUDA, MAT_INPLACE_MATRIX, &C));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)C, &flg, MATSEQAMBCUDA, MATMPIAMBCUDA, ""));
  PetscCheck(flg, c->comm, PETSC_ERR_PLIB, "MatConvert(aij -> ambcuda, in place) gave %s", MatTN(C));
  PetscCall(MatDestroy(&C));
  if (c->size == 1) { /* device <-> host AMB */
    PetscCall(MatConvert(c->D, MATSEQAMB, MAT_INITIAL_MATRIX, &C));
    PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQAMB, &flg));
    PetscCheck(flg, c->comm, PETSC_ERR_PLIB, "MatConvert(seqaijambcuda -> seqaijamb) gave %s", MatTN(C));
    PetscCall(GKCheckMatClose(C, c->R, 0.0, "MatConvert(seqaijambcuda -> seqaijamb)"));
    PetscCall(MatConvert(C, MATSEQAMBCUDA, MAT_INPLACE_MATRIX, &C));
    PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQAMBCUDA, &flg));
    PetscCheck(flg, c->comm, PETSC_ERR_PLIB, "MatConvert(seqaijamb -> seqaijambcuda, in place) gave %s", MatTN(C));
    PetscCall(CheckProducts(c, C, c->R, "MatConvert(seqaijamb -> seqaijambcuda)"));
    PetscCall(MatDestroy(&C));
  }
  PetscCall(PetscPrintf(c->comm, "ok: MatConvert aij <-> ambcuda (initial, reuse, in place)%s\n", c->size == 1 ? ", amb <-> ambcuda" : ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the entries of the (sequential) R, row by row as MatGetRow() returns them */
static PetscErrorCode CountRowEntries(Mat R, PetscInt *nz)
{
  PetscInt m;

  PetscFunctionBegin;
  *nz = 0;
  PetscCall(MatGetSize(R, &m, NULL));
  for (PetscInt i = 0; i < m; i++) {
    PetscInt nc;
    PetscCall(MatGetRow(R, i, &nc, NULL, NULL));
    *nz += nc;
    PetscCall(MatRestoreRow(R, i, &nc, NULL, NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* COO on the device (one rank): every entry of R split into two COO entries (duplicates summed), INSERT then ADD */
static PetscErrorCode CheckCOO(Ctx *c)
{
  Mat          C, R2;
  PetscInt     m, n, nz = 0, k = 0;
  PetscInt    *ci, *cj;
  PetscScalar *cv;
  Stats        s;

  PetscFunctionBegin;
  if (c->size > 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetSize(c->R, &m, &n));
  PetscCall(CountRowEntries(c->R, &nz));
  PetscCall(PetscMalloc3(2 * nz + 1, &ci, 2 * nz + 1, &cj, 2 * nz + 1, &cv));
  for (PetscInt i = m - 1; i >= 0; i--) { /* rows backwards: the helper must not rely on the order */
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscCall(MatGetRow(c->R, i, &nc, &cols, &vals));
    for (PetscInt t = 0; t < nc; t++) {
      ci[k]     = i;
      cj[k]     = cols[t];
      cv[k++]   = 0.25 * vals[t];
      ci[k]     = i;
      cj[k]     = cols[t];
      cv[k++]   = 0.75 * vals[t];
    }
    PetscCall(MatRestoreRow(c->R, i, &nc, &cols, &vals));
  }
  ci[k] = -1; /* ignored, as PETSc's COO does */
  cj[k] = 0;
  cv[k++] = 1e30;
  PetscCall(MatCreate(c->comm, &C));
  PetscCall(MatSetSizes(C, PETSC_DECIDE, PETSC_DECIDE, m, n));
  PetscCall(MatSetType(C, MATAMBCUDA));
  PetscCall(MatSetFromOptions(C));
  PetscCall(MatSetPreallocationCOO(C, k, ci, cj));
  PetscCall(MatSetValuesCOO(C, cv, INSERT_VALUES));
  PetscCall(CheckProducts(c, C, c->R, "COO INSERT_VALUES"));
  PetscCall(GKCheckMatClose(C, c->R, 1e-15, "COO INSERT_VALUES: the host copy"));
  PetscCall(MatSetValuesCOO(C, cv, ADD_VALUES));
  PetscCall(MatDuplicate(c->R, MAT_COPY_VALUES, &R2));
  PetscCall(MatScale(R2, 2.0));
  PetscCall(MatScale(c->Rabs, 2.0));
  PetscCall(CheckProducts(c, C, R2, "COO ADD_VALUES"));
  PetscCall(MatScale(c->Rabs, 0.5));
  PetscCall(GKCheckMatClose(C, R2, 1e-15, "COO ADD_VALUES: the host copy"));
  PetscCall(GetStats(C, &s));
  PetscCheck(s.coo == 2, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatSetValuesCOO ran %" PetscInt_FMT " times on the device, expected 2", s.coo);
  PetscCheck(s.valup == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "COO assembly on the device uploaded the values %" PetscInt_FMT " times", s.valup);
  PetscCall(PetscPrintf(c->comm, "ok: COO on the device (%" PetscInt_FMT " entries with duplicates, insert and add), host copy follows, no value upload\n", k));
  PetscCall(MatDestroy(&R2));
  PetscCall(MatDestroy(&C));
  PetscCall(PetscFree3(ci, cj, cv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the host copy after a device COO refresh (one rank): with -mat_amb_cuda_lazy_copydown (opt-in) MatSetValuesCOO() with
   values on the device leaves it stale (no copy down, offload mask GPU; device products do not copy either); then the
   FIRST host read of each kind must give the new values (compared with AIJ scaled the same way, exactly) and copy the
   values down exactly once. Every kind of read gets its own refresh (powers of 2: the values are exact and each refresh
   changes every value), so a path that read the stale host copy fails here. Then the eager mode copies at the refresh. */
typedef PetscErrorCode (*HostStatsFn)(Mat, PetscInt *, PetscBool *);

static PetscErrorCode HostStats(Mat C, PetscInt *ndown, PetscBool *stale)
{
  HostStatsFn f = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)C, "MatAMBCUDAGetHostStats_C", &f));
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s has no \"MatAMBCUDAGetHostStats_C\"", MatTN(C));
  PetscCall((*f)(C, ndown, stale));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatSetValuesCOO(C, s * v) with the values on the device; Rs = s * R */
static PetscErrorCode DeviceRefresh(Ctx *c, Mat C, Vec vd, const PetscScalar *v, PetscInt k, PetscReal s, Mat *Rs)
{
  PetscScalar       *h;
  const PetscScalar *d;

  PetscFunctionBegin;
  PetscCall(VecGetArrayWrite(vd, &h));
  for (PetscInt e = 0; e < k; e++) h[e] = s * v[e];
  PetscCall(VecRestoreArrayWrite(vd, &h));
  PetscCall(VecCUDAGetArrayRead(vd, &d));
  PetscCall(MatSetValuesCOO(C, d, INSERT_VALUES));
  PetscCall(VecCUDARestoreArrayRead(vd, &d));
  PetscCall(MatDestroy(Rs));
  PetscCall(MatDuplicate(c->R, MAT_COPY_VALUES, Rs));
  PetscCall(MatScale(*Rs, s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckCOOHostReads(Ctx *c)
{
  const char *reads[] = {"MatGetRow", "MatGetValues", "MatNorm", "MatConvert(aij)", "MatDuplicate", "MatTranspose", "MatMatMult", "MatBindToCPU + host MatMult", "MatSetValues(ADD) + assembly", "MatAXPY", "MatCopy", "MatGetRowMaxAbs", "MatScale on the device, then MatConvert", "\"GpukitMatSyncHost_C\" + MatSeqAIJGetArrayRead", "LU factorization (refactored after a second refresh)"};
  const PetscInt nreads  = (PetscInt)(sizeof(reads) / sizeof(reads[0]));
  Mat          C, Rs = NULL;
  Vec          vd;
  PetscInt     m, n, k = 0, ndown0, ndown;
  PetscInt    *ci, *cj;
  PetscScalar *v;
  PetscBool    stale;

  PetscFunctionBegin;
  if (c->size > 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetSize(c->R, &m, &n));
  PetscCall(CountRowEntries(c->R, &k));
  PetscCall(PetscMalloc3(PetscMax(k, 1), &ci, PetscMax(k, 1), &cj, PetscMax(k, 1), &v));
  k = 0;
  for (PetscInt i = 0; i < m; i++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscCall(MatGetRow(c->R, i, &nc, &cols, &vals));
    for (PetscInt t = 0; t < nc; t++, k++) {
      ci[k] = i;
      cj[k] = cols[t];
      v[k]  = vals[t];
    }
    PetscCall(MatRestoreRow(c->R, i, &nc, &cols, &vals));
  }
  PetscCall(VecCreateSeqCUDA(PETSC_COMM_SELF, PetscMax(k, 1), &vd));
  PetscCall(MatCreate(c->comm, &C));
  PetscCall(MatSetSizes(C, PETSC_DECIDE, PETSC_DECIDE, m, n));
  PetscCall(MatSetType(C, MATAMBCUDA));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_amb_cuda_lazy_copydown", "1")); /* opt-in */
  PetscCall(MatSetFromOptions(C));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_amb_cuda_lazy_copydown"));
  PetscCall(MatSetPreallocationCOO(C, k, ci, cj));
  for (PetscInt r = 0; r < nreads; r++) {
    PetscReal s = PetscPowReal(2.0, (PetscReal)(r % 6) - 2.0); /* 0.25 .. 8: exact, and each refresh changes the values */
    char      what[128];

    if (r == nreads - 1 && !(c->square && c->spd)) continue; /* LU only where it is safe (SPD) */
    if (r == 6 && !c->square) continue;
    PetscCall(PetscSNPrintf(what, sizeof(what), "after a device COO refresh, %s", reads[r]));
    PetscCall(DeviceRefresh(c, C, vd, v, k, s, &Rs));
    PetscCall(HostStats(C, &ndown0, &stale));
    PetscCheck(stale, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the refresh copied the values down (host copy not stale)", what);
    PetscCall(MatScale(c->Rabs, s));
    PetscCall(CheckProducts(c, C, Rs, what)); /* device products: no copy down */
    PetscCall(MatScale(c->Rabs, 1.0 / s));
    PetscCall(HostStats(C, &ndown, &stale));
    PetscCheck(stale && ndown == ndown0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: device products copied the values down", what);
    switch (r) {
    case 0: /* every row */
      for (PetscInt i = 0; i < m; i++) {
        PetscInt           na, nb;
        const PetscInt    *ca, *cb;
        const PetscScalar *va, *vb;
        PetscCall(MatGetRow(C, i, &na, &ca, &va));
        PetscCall(MatGetRow(Rs, i, &nb, &cb, &vb));
        PetscCheck(na == nb, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: row %" PetscInt_FMT " has %" PetscInt_FMT " entries, AIJ %" PetscInt_FMT, what, i, na, nb);
        for (PetscInt t = 0; t < na; t++) PetscCheck(ca[t] == cb[t] && va[t] == vb[t], PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: row %" PetscInt_FMT " entry %" PetscInt_FMT ": (%" PetscInt_FMT ", %g), AIJ (%" PetscInt_FMT ", %g)", what, i, t, ca[t], (double)PetscRealPart(va[t]), cb[t], (double)PetscRealPart(vb[t]));
        PetscCall(MatRestoreRow(Rs, i, &nb, &cb, &vb));
        PetscCall(MatRestoreRow(C, i, &na, &ca, &va));
      }
      break;
    case 1: /* the first and the last entry */
      if (k > 0) {
        PetscInt    ii[2] = {ci[0], ci[k - 1]}, jj[2] = {cj[0], cj[k - 1]};
        PetscScalar a[4], b[4];
        PetscCall(MatGetValues(C, 2, ii, 2, jj, a));
        PetscCall(MatGetValues(Rs, 2, ii, 2, jj, b));
        for (int t = 0; t < 4; t++) PetscCheck(a[t] == b[t], PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: value %d is %g, AIJ %g", what, t, (double)PetscRealPart(a[t]), (double)PetscRealPart(b[t]));
      }
      break;
    case 2: {
      PetscReal na, nb;
      PetscCall(MatNorm(C, NORM_1, &na));
      PetscCall(MatNorm(Rs, NORM_1, &nb));
      PetscCheck(na == nb, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: 1-norm %g, AIJ %g", what, (double)na, (double)nb);
    } break;
    case 3:
      PetscCall(GKCheckMatClose(C, Rs, 0.0, what));
      break;
    case 4: {
      Mat Dup;
      PetscCall(MatDuplicate(C, MAT_COPY_VALUES, &Dup));
      PetscCall(GKCheckMatClose(Dup, Rs, 0.0, what));
      PetscCall(MatDestroy(&Dup));
    } break;
    case 5: {
      Mat Ct, Rt;
      PetscCall(MatTranspose(C, MAT_INITIAL_MATRIX, &Ct));
      PetscCall(MatTranspose(Rs, MAT_INITIAL_MATRIX, &Rt));
      PetscCall(GKCheckMatClose(Ct, Rt, 0.0, what));
      PetscCall(MatDestroy(&Ct));
      PetscCall(MatDestroy(&Rt));
    } break;
    case 6: { /* C*R (PETSc's AIJ product on the host), then a second refresh and the same product reused */
      Mat P, Q;
      PetscCall(MatMatMult(C, c->R, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &P));
      PetscCall(MatMatMult(Rs, c->R, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &Q));
      PetscCall(GKCheckMatClose(P, Q, 1e-14, what));
      PetscCall(MatDestroy(&Q));
      PetscCall(DeviceRefresh(c, C, vd, v, k, 2.0 * s, &Rs));
      PetscCall(MatMatMult(C, c->R, MAT_REUSE_MATRIX, PETSC_DETERMINE, &P));
      PetscCall(MatMatMult(Rs, c->R, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &Q));
      PetscCall(GKCheckMatClose(P, Q, 1e-14, "after a second device COO refresh, MatMatMult(MAT_REUSE_MATRIX)"));
      PetscCall(MatDestroy(&Q));
      PetscCall(MatDestroy(&P));
      ndown0++; /* two refreshes, two copies down */
    } break;
    case 7: {
      PetscReal nrm, nref;
      PetscCall(MatBindToCPU(C, PETSC_TRUE));
      PetscCall(MatMult(C, c->xh, c->wh));
      PetscCall(MatMult(Rs, c->xh, c->yh));
      PetscCall(VecNorm(c->yh, NORM_INFINITY, &nref));
      PetscCall(VecAXPY(c->wh, -1.0, c->yh));
      PetscCall(VecNorm(c->wh, NORM_INFINITY, &nrm));
      PetscCheck(nrm <= 1e-13 * nref, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: host product differs from AIJ's by %g (of %g)", what, (double)nrm, (double)nref);
      PetscCall(MatBindToCPU(C, PETSC_FALSE));
    } break;
    case 8:
      if (k > 0) {
        PetscCall(MatSetValue(C, ci[0], cj[0], 1.0, ADD_VALUES));
        PetscCall(MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY));
        PetscCall(MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY));
        PetscCall(MatSetValue(Rs, ci[0], cj[0], 1.0, ADD_VALUES));
        PetscCall(MatAssemblyBegin(Rs, MAT_FINAL_ASSEMBLY));
        PetscCall(MatAssemblyEnd(Rs, MAT_FINAL_ASSEMBLY));
        PetscCall(GKCheckMatClose(C, Rs, 0.0, what));
      }
      break;
    case 9:
      PetscCall(MatAXPY(C, 2.0, c->R, SAME_NONZERO_PATTERN));
      PetscCall(MatAXPY(Rs, 2.0, c->R, SAME_NONZERO_PATTERN));
      PetscCall(GKCheckMatClose(C, Rs, 0.0, what));
      break;
    case 10: {
      Mat T;
      PetscCall(MatDuplicate(c->R, MAT_COPY_VALUES, &T));
      PetscCall(MatCopy(C, T, SAME_NONZERO_PATTERN));
      PetscCall(GKCheckMatClose(T, Rs, 0.0, what));
      PetscCall(MatDestroy(&T));
    } break;
    case 11: {
      Vec       a, b;
      PetscReal nrm;
      PetscCall(VecDuplicate(c->yh, &a));
      PetscCall(VecDuplicate(c->yh, &b));
      PetscCall(MatGetRowMaxAbs(C, a, NULL));
      PetscCall(MatGetRowMaxAbs(Rs, b, NULL));
      PetscCall(VecAXPY(a, -1.0, b));
      PetscCall(VecNorm(a, NORM_INFINITY, &nrm));
      PetscCheck(nrm == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: differs from AIJ's by %g", what, (double)nrm);
      PetscCall(VecDestroy(&a));
      PetscCall(VecDestroy(&b));
    } break;
    case 12: /* scaled on the device only (the host copy stays stale), then read */
      PetscCall(MatScale(C, 2.0));
      PetscCall(MatScale(Rs, 2.0));
      PetscCall(HostStats(C, &ndown, &stale));
      PetscCheck(stale && ndown == ndown0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: MatScale copied the values down", what);
      PetscCall(GKCheckMatClose(C, Rs, 0.0, what));
      break;
    case 13: { /* raw array access after the composed sync */
      PetscErrorCode (*sync)(Mat) = NULL;
      const PetscScalar *a, *b;
      PetscCall(PetscObjectQueryFunction((PetscObject)C, "GpukitMatSyncHost_C", &sync));
      PetscCheck(sync, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: no \"GpukitMatSyncHost_C\"", what);
      PetscCall((*sync)(C));
      PetscCall(MatSeqAIJGetArrayRead(C, &a));
      PetscCall(MatSeqAIJGetArrayRead(Rs, &b));
      for (PetscInt e = 0; e < k; e++) PetscCheck(a[e] == b[e], PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: value %" PetscInt_FMT " is %g, AIJ %g", what, e, (double)PetscRealPart(a[e]), (double)PetscRealPart(b[e]));
      PetscCall(MatSeqAIJRestoreArrayRead(Rs, &b));
      PetscCall(MatSeqAIJRestoreArrayRead(C, &a));
    } break;
    case 14: { /* PETSc's LU (MatGetFactor with no solver type finds MATSEQAMBCUDA's), then a refresh and a refactorization */
      Mat           F, G;
      IS            rp, cp;
      MatFactorInfo info;
      Vec           b, xc, xr;
      PetscReal     nrm, nref;
      PetscCall(VecDuplicate(c->yh, &b));
      PetscCall(VecDuplicate(c->xh, &xc));
      PetscCall(VecDuplicate(c->xh, &xr));
      PetscCall(VecSetRandom(b, c->rnd));
      PetscCall(MatFactorInfoInitialize(&info));
      PetscCall(MatGetOrdering(Rs, MATORDERINGND, &rp, &cp));
      PetscCall(MatGetFactor(C, NULL, MAT_FACTOR_LU, &F));
      PetscCall(MatLUFactorSymbolic(F, C, rp, cp, &info));
      PetscCall(MatLUFactorNumeric(F, C, &info));
      for (int pass = 0; pass < 2; pass++) {
        PetscCall(MatGetFactor(Rs, MATSOLVERPETSC, MAT_FACTOR_LU, &G));
        PetscCall(MatLUFactorSymbolic(G, Rs, rp, cp, &info));
        PetscCall(MatLUFactorNumeric(G, Rs, &info));
        PetscCall(MatSolve(F, b, xc));
        PetscCall(MatSolve(G, b, xr));
        PetscCall(MatDestroy(&G));
        PetscCall(VecNorm(xr, NORM_INFINITY, &nref));
        PetscCall(VecAXPY(xc, -1.0, xr));
        PetscCall(VecNorm(xc, NORM_INFINITY, &nrm));
        PetscCheck(nrm <= 1e-10 * nref, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s (%s): the LU solution differs from AIJ's by %g (of %g)", what, pass ? "refactored after a second refresh" : "first factorization", (double)nrm, (double)nref);
        if (pass == 0) { /* the numeric factorization again, after a refresh: it must read the new values */
          PetscCall(DeviceRefresh(c, C, vd, v, k, 4.0 * s, &Rs));
          PetscCall(MatLUFactorNumeric(F, C, &info));
          ndown0++; /* two refreshes, two copies down */
        }
      }
      PetscCall(MatDestroy(&F));
      PetscCall(ISDestroy(&rp));
      PetscCall(ISDestroy(&cp));
      PetscCall(VecDestroy(&b));
      PetscCall(VecDestroy(&xc));
      PetscCall(VecDestroy(&xr));
    } break;
    }
    PetscCall(HostStats(C, &ndown, &stale));
    PetscCheck(!stale, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the host copy is still marked stale", what);
    PetscCheck(ndown == ndown0 + 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: %" PetscInt_FMT " copies down, expected 1", what, ndown - ndown0);
    PetscCall(PetscPrintf(c->comm, "ok: %s: AIJ's values, one copy down\n", what));
    c->nchecks++;
  }
  /* eager mode (the default): the refresh itself copies down */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_amb_cuda_lazy_copydown", "0"));
  PetscCall(MatSetFromOptions(C));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_amb_cuda_lazy_copydown"));
  PetscCall(HostStats(C, &ndown0, &stale));
  PetscCall(DeviceRefresh(c, C, vd, v, k, 3.0, &Rs));
  PetscCall(HostStats(C, &ndown, &stale));
  PetscCheck(!stale && ndown == ndown0 + 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "-mat_amb_cuda_lazy_copydown 0: the refresh did not copy the values down (stale %d, %" PetscInt_FMT " copies)", (int)stale, ndown - ndown0);
  PetscCall(GKCheckMatClose(C, Rs, 0.0, "-mat_amb_cuda_lazy_copydown 0: the host copy"));
  PetscCall(PetscPrintf(c->comm, "ok: -mat_amb_cuda_lazy_copydown 0: the refresh copies the values down\n"));
  PetscCall(MatDestroy(&Rs));
  PetscCall(MatDestroy(&C));
  PetscCall(VecDestroy(&vd));
  PetscCall(PetscFree3(ci, cj, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* per-event copy counters of this rank */
static PetscErrorCode EventCopies(const char *name, PetscLogDouble cnt[2])
{
  PetscLogEvent      ev;
  PetscEventPerfInfo info;

  PetscFunctionBegin;
  PetscCall(PetscLogEventGetId(name, &ev));
  if (ev < 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, ev, &info));
  cnt[0] += info.CpuToGpuCount;
  cnt[1] += info.GpuToCpuCount;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSP copies: all of KSPSolve's minus the scatter's (host-staged ghost exchange) and VecMDot's GPU->CPU results */
static PetscErrorCode SolveCopies(PetscLogDouble out[2])
{
  PetscLogDouble ksp[2] = {0, 0}, sc[2] = {0, 0}, md[2] = {0, 0};
  const char    *scatter[] = {"VecScatterBegin", "VecScatterEnd", "SFBcastBegin", "SFBcastEnd", "SFReduceBegin", "SFReduceEnd"};

  PetscFunctionBegin;
  PetscCall(EventCopies("KSPSolve", ksp));
  PetscCall(EventCopies("VecMDot", md));
  for (int i = 0; i < 6; i++) PetscCall(EventCopies(scatter[i], sc));
  out[0] = ksp[0] - sc[0];
  out[1] = ksp[1] - sc[1] - md[1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckSolve(Ctx *c, const char *solve)
{
  KSP                kd, kh;
  PC                 pc;
  Vec                bd, xd, bh, xh, r;
  PetscInt           itd, ith;
  KSPConvergedReason reason;
  PetscLogDouble     c0[2], c1[2], loc[2], glob[2];
  PetscReal          rn, bn;
  KSPType            type = !strcmp(solve, "cg") ? KSPCG : KSPGMRES;

  PetscFunctionBegin;
  if (!c->square || !strcmp(solve, "none")) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatCreateVecs(c->D, &xd, &bd));
  PetscCall(MatCreateVecs(c->R, &xh, &bh));
  PetscCall(VecDuplicate(bh, &r));
  PetscCall(VecSetRandom(xh, c->rnd));
  PetscCall(MatMult(c->R, xh, bh));
  PetscCall(GKCopyValues(bh, bd));
  PetscCall(GKToDevice(bd));
  PetscCall(KSPCreate(c->comm, &kd));
  PetscCall(KSPSetOperators(kd, c->D, c->D));
  PetscCall(KSPSetType(kd, type));
  PetscCall(KSPGetPC(kd, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(kd, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 3000));
  PetscCall(KSPSetOptionsPrefix(kd, "dev_"));
  PetscCall(KSPSetFromOptions(kd));
  PetscCall(KSPCreate(c->comm, &kh));
  PetscCall(KSPSetOperators(kh, c->R, c->R));
  PetscCall(KSPSetType(kh, type));
  PetscCall(KSPGetPC(kh, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(kh, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 3000));
  PetscCall(KSPSolve(kd, bd, xd)); /* set-up */
  PetscCall(VecSet(xd, 0.0));
  PetscCall(GKToDevice(xd));
  c0[0] = c0[1] = c1[0] = c1[1] = 0;
  PetscCall(SolveCopies(c0));
  PetscCall(KSPSolve(kd, bd, xd)); /* measured */
  PetscCall(SolveCopies(c1));
  PetscCall(KSPGetConvergedReason(kd, &reason));
  PetscCall(KSPGetIterationNumber(kd, &itd));
  PetscCall(VecSet(xh, 0.0));
  PetscCall(KSPSolve(kh, bh, xh));
  PetscCall(KSPGetIterationNumber(kh, &ith));
  loc[0] = c1[0] - c0[0];
  loc[1] = c1[1] - c0[1];
  PetscCall(MPIU_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_MAX, c->comm));
  PetscCall(PetscPrintf(c->comm, "KSPSolve %s + jacobi: %" PetscInt_FMT " iterations (AIJ on the host %" PetscInt_FMT "), %s; copies in the measured solve (worst rank, ghost exchange and VecMDot results excluded): CPU->GPU %.0f, GPU->CPU %.0f\n", type, itd, ith, KSPConvergedReasons[reason], glob[0], glob[1]));
  PetscCheck(reason > 0, c->comm, PETSC_ERR_PLIB, "KSPSolve %s with MATAMBCUDA did not converge: %s", type, KSPConvergedReasons[reason]);
  PetscCheck(glob[0] == 0 && glob[1] == 0, c->comm, PETSC_ERR_PLIB, "KSPSolve %s with MATAMBCUDA copied between CPU and GPU inside the solve (%.0f CPU->GPU, %.0f GPU->CPU); run with -log_view", type, glob[0], glob[1]);
  PetscCheck(PetscAbsInt(itd - ith) <= 2 + ith / 10 || c->single, c->comm, PETSC_ERR_PLIB, "KSPSolve %s: %" PetscInt_FMT " iterations with MATAMBCUDA, %" PetscInt_FMT " with AIJ", type, itd, ith);
  PetscCall(GKCopyValues(xd, xh));
  PetscCall(MatMult(c->R, xh, r));
  PetscCall(VecAXPY(r, -1.0, bh));
  PetscCall(VecNorm(r, NORM_2, &rn));
  PetscCall(VecNorm(bh, NORM_2, &bn));
  PetscCheck(rn <= 1e-5 * bn, c->comm, PETSC_ERR_PLIB, "KSPSolve %s with MATAMBCUDA: |b - A x| / |b| = %g (checked with AIJ on the host)", type, (double)(rn / bn));
  PetscCall(KSPDestroy(&kd));
  PetscCall(KSPDestroy(&kh));
  PetscCall(VecDestroy(&xd));
  PetscCall(VecDestroy(&bd));
  PetscCall(VecDestroy(&xh));
  PetscCall(VecDestroy(&bh));
  PetscCall(VecDestroy(&r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* options out of range must fail with a clear message */
static PetscErrorCode CheckBadOptions(Ctx *c)
{
  PetscErrorCode ierr;

  PetscFunctionBegin;
  if (c->size > 1) PetscFunctionReturn(PETSC_SUCCESS); /* the block size option is read by one-rank matrices */
  PetscCall(SetOpt("-mat_amb_cuda_block_size", "40"));
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetFromOptions(c->D);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "-mat_amb_cuda_block_size", "-mat_amb_cuda_block_size 40"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_amb_cuda_block_size"));
  PetscCall(SetOpt("-mat_amb_cuda_sell", "sometimes"));
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetFromOptions(c->D);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_USER, "-mat_amb_cuda_sell", "-mat_amb_cuda_sell sometimes"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_amb_cuda_sell"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Ctx       c;
  char      file[PETSC_MAX_PATH_LEN] = "", gen[64] = "powerlaw", solve[16] = "auto";
  PetscBool hasf, sym = PETSC_FALSE, detcheck = PETSC_TRUE;
  PetscInt  scale = 0, seed = 1, M, N;
  char      values[16] = "double";

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscLogDefaultBegin());
  PetscCall(PetscMemzero(&c, sizeof(c)));
  c.comm = PETSC_COMM_WORLD;
  PetscCallMPI(MPI_Comm_size(c.comm, &c.size));
  PetscCallMPI(MPI_Comm_rank(c.comm, &c.rank));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), &hasf));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-gen", gen, sizeof(gen), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-gen_scale", &scale, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-gen_seed", &seed, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-solve", solve, sizeof(solve), NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-det_check", &detcheck, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-mat_amb_deterministic", &c.det, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_amb_values", values, sizeof(values), NULL));
  c.det    = (PetscBool)(c.det && detcheck);
  c.single = (PetscBool)!strcmp(values, "single");
  c.tol    = c.single ? 2e-6 : 1e-13;

  if (hasf) PetscCall(LoadMatrixMarket(c.comm, file, &c.R, &sym));
  else {
    const GKGenCase *gc;
    PetscCall(GKGenerateLookup(gen, &gc));
    PetscCall(GKGenerate(c.comm, gen, scale, seed, MATAIJ, &c.R));
    sym   = gc->symmetric;
    c.spd = gc->spd;
  }
  PetscCall(MatGetSize(c.R, &M, &N));
  c.square = (PetscBool)(M == N);
  if (!strcmp(solve, "auto")) PetscCall(PetscStrncpy(solve, c.spd ? "cg" : "gmres", sizeof(solve)));
  PetscCall(PetscPrintf(c.comm, "matrix %s: %" PetscInt_FMT " x %" PetscInt_FMT ", %d ranks, values %s%s\n", hasf ? file : gen, M, N, c.size, values, c.det ? ", deterministic" : ""));
  PetscCall(AbsMat(c.R, &c.Rabs));
  PetscCall(MatConvert(c.R, MATAMB, MAT_INITIAL_MATRIX, &c.H));
  PetscCall(MatSetFromOptions(c.H));
  PetscCall(MatConvert(c.R, MATAMBCUDA, MAT_INITIAL_MATRIX, &c.D));
  PetscCall(MatSetFromOptions(c.D));
  {
    PetscBool ok;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)c.D, &ok, MATSEQAMBCUDA, MATMPIAMBCUDA, ""));
    PetscCheck(ok, c.comm, PETSC_ERR_PLIB, "MatConvert(aij, ambcuda) gave %s", MatTN(c.D));
  }
  PetscCall(PetscRandomCreate(c.comm, &c.rnd));
  PetscCall(PetscRandomSetSeed(c.rnd, 20261126));
  PetscCall(PetscRandomSeed(c.rnd));
  PetscCall(MatCreateVecs(c.R, &c.xh, &c.yh));
  PetscCall(MatCreateVecs(c.D, &c.xd, &c.yd));
  PetscCall(VecDuplicate(c.yh, &c.zh));
  PetscCall(VecDuplicate(c.yh, &c.wh));
  PetscCall(VecDuplicate(c.yd, &c.zd));
  PetscCall(VecDuplicate(c.yd, &c.wd));
  PetscCall(MatCreateVecs(c.R, &c.tyh, &c.txh));
  PetscCall(MatCreateVecs(c.D, &c.tyd, &c.txd));
  {
    PetscBool ok;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)c.xd, &ok, VECSEQCUDA, VECMPICUDA, ""));
    PetscCheck(ok, c.comm, PETSC_ERR_PLIB, "MatCreateVecs() of MATAMBCUDA gave %s vectors, not CUDA ones", VecTN(c.xd));
  }

  PetscCall(CheckEveryB(&c));
  PetscCall(CheckPlanCounts(&c));
  PetscCall(CheckSell(&c));
  PetscCall(CheckNonFinite(&c));
  PetscCall(CheckCOO(&c));
  PetscCall(CheckCOOHostReads(&c));
  PetscCall(CheckConverts(&c));
  PetscCall(CheckBind(&c));
  PetscCall(CheckSolve(&c, solve));
  PetscCall(CheckBadOptions(&c));
  PetscCall(CheckRefresh(&c)); /* last: it changes R and D (zero entries at the end) */
  PetscCall(PetscPrintf(c.comm, "amb_cuda: all checks passed (%" PetscInt_FMT " comparisons)\n", c.nchecks));

  PetscCall(VecDestroy(&c.xh));
  PetscCall(VecDestroy(&c.yh));
  PetscCall(VecDestroy(&c.zh));
  PetscCall(VecDestroy(&c.wh));
  PetscCall(VecDestroy(&c.xd));
  PetscCall(VecDestroy(&c.yd));
  PetscCall(VecDestroy(&c.zd));
  PetscCall(VecDestroy(&c.wd));
  PetscCall(VecDestroy(&c.txh));
  PetscCall(VecDestroy(&c.tyh));
  PetscCall(VecDestroy(&c.txd));
  PetscCall(VecDestroy(&c.tyd));
  PetscCall(PetscRandomDestroy(&c.rnd));
  PetscCall(MatDestroy(&c.R));
  PetscCall(MatDestroy(&c.Rabs));
  PetscCall(MatDestroy(&c.H));
  PetscCall(MatDestroy(&c.D));
  PetscCall(PetscFinalize());
  return 0;
}

#else /* a PETSc without CUDA: the device type must refuse with a clear message */
int main(int argc, char **argv)
{
  Mat            A;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, 10, 10));
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetType(A, MATAMBCUDA);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_SUP, "needs a PETSc configured with CUDA", "MatSetType(ambcuda) without CUDA"));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
#endif
