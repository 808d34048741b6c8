static const char help[] = "MATDCSRCUDA against the host MATDCSR and against AIJ (MAT_NEW_NONZERO_ALLOCATION_ERR false) after every round\n"
                           "of insertions: host MatSetValues() rounds and device batches (MatDCSRSetValuesCOODevice()), INSERT and ADD,\n"
                           "duplicates inside a batch; products (fragmented and defragmented), transposes, diagonal, scale, shift;\n"
                           "nonzerostate; MatBindToCPU; new-nonzero options; bad input (indices out of range, host pointers, MatSetValues\n"
                           "inside an assembly, a batch larger than the free device memory); a CG + Jacobi solve with no host copy.\n"
                           "  -n <rows> -rounds <r> -batch <entries per rank and round> -prealloc <entries per row preallocated>\n"
                           "  -expect_defrag (the device must have defragmented on its own: K or capacity) -expect_grow (and grown)\n"
                           "  -grid <g> (KSP test: g x g Laplacian; 0 skips it) -memtest (the free-memory batch test) -tol <1e-12>\n"
                           "  -powerlaw <maxlen> (the first assembly adds power-law rows, up to maxlen entries, every 997th row that long)\n"
                           "  -expect_rows_kernel (with -mat_dcsr_cuda_mult_kernel rows: every device product of the diagonal block ran the\n"
                           "   rows kernel exactly when each of its rows had at most one segment, else the fused kernel)\n"
                           "  -expect_rows_fallback (and some of them fell back: fragmented rows)\n";

/*
   Three matrices get the same entries: Ad (MATDCSRCUDA, -mat_type options apply to it with prefix d_), Ah (MATDCSR)
   and Aa (MATAIJ, MAT_NEW_NONZERO_ALLOCATION_ERR false: the reference PETSc users have). Ad gets the device rounds
   through MatDCSRSetValuesCOODevice() (device arrays), Ah and Aa through MatSetValues() of the same entries in the
   same order. After every round: MatMult/MatMultAdd/MatMultTranspose(Add)/MatGetDiagonal of Ad on CUDA vectors
   against Aa, the whole matrix against Aa and Ah (MatConvert to AIJ, Frobenius norm), the number of stored entries,
   and whether nonzerostate moved exactly when new entries came. Device rounds before the host comparisons, so that
   every product runs on a structure that only the device has.
*/
#include "gktest.h"
#include "gkbench.h"
#include <petscksp.h>
#if PetscDefined(HAVE_CUDA)
  #include <petscdevice_cuda.h>
#endif

typedef struct {
  PetscMPIInt size, rank;
  PetscInt    N, rstart, rend, batch;
  PetscReal   tol;
  PetscRandom rnd;
  Mat         Ad, Ah, Aa;
  PetscInt    nchecks;
  PetscBool   expect_rows; /* -expect_rows_kernel */
  PetscInt    nrows_runs, nfallback_runs;
  PetscInt    expect_base; /* -expect_csr_base: 1 the products of the comparisons marked want_base ran on the CSR base, 0 not */
  PetscBool   want_base;
  PetscInt    nbase_runs;
  PetscInt    expect_baserows; /* -expect_csr_base_product: those products ran 0 cuSPARSE and the fix-up (lanes 0), 1 the
                                  base stream kernel (lanes 64) */
  PetscInt    nbaserows_runs;
} Ctx;

#if PetscDefined(HAVE_CUDA)

/* -expect_rows_kernel: the kernel of the last device product of Ad's diagonal block ("MatDCSRCUDAGetMultKernel_C":
   0 binned, 1 fused, 2 rows) is the rows kernel when each row of the block has at most one segment, else fused */
static PetscErrorCode CheckRowsKernel(Ctx *c, const char *what, const char *op)
{
  Mat        D;
  PetscInt   kernel = -1, lanes = 0, K, maxseg;
  PetscCount used, cap;
  char       buf[256];
  PetscErrorCode (*f)(Mat, PetscInt *, PetscInt *) = NULL;

  PetscFunctionBegin;
  if (!c->expect_rows) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetDiagonalBlock(c->Ad, &D));
  PetscCall(PetscObjectQueryFunction((PetscObject)D, "MatDCSRCUDAGetMultKernel_C", &f));
  PetscCall(GKCheck((PetscBool)(f != NULL), "the diagonal block composes MatDCSRCUDAGetMultKernel_C"));
  PetscCall((*f)(D, &kernel, &lanes));
  PetscCall(MatDCSRGetInfo(D, &K, &maxseg, &used, &cap));
  if (maxseg <= 1) {
    PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: %s ran kernel %" PetscInt_FMT " (2: rows) although every row has at most one segment", what, op, kernel));
    PetscCall(GKCheck((PetscBool)(kernel == 2 && (lanes == 1 || lanes == 2 || lanes == 4 || lanes == 8 || lanes == 16 || lanes == 32)), buf));
    c->nrows_runs++;
  } else {
    PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: %s ran kernel %" PetscInt_FMT " (1: fused) with rows of up to %" PetscInt_FMT " segments (the rows kernel must fall back)", what, op, kernel, maxseg));
    PetscCall(GKCheck((PetscBool)(kernel == 1), buf));
    c->nfallback_runs++;
  }
  c->nchecks++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -expect_csr_base 1 (0): the last device product of Ad's diagonal block ran (did not run) on the CSR base, kernel 3 of
   "MatDCSRCUDAGetMultKernel_C" (cuSPARSE's CSR product and the fix-up of the rows marked since), in the comparisons
   made with want_base */
static PetscErrorCode CheckBaseKernel(Ctx *c, const char *what, const char *op)
{
  Mat      D;
  PetscInt kernel = -1, lanes = 0;
  char     buf[256];
  PetscErrorCode (*f)(Mat, PetscInt *, PetscInt *) = NULL;

  PetscFunctionBegin;
  if (c->expect_base < 0 || !c->want_base) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetDiagonalBlock(c->Ad, &D));
  PetscCall(PetscObjectQueryFunction((PetscObject)D, "MatDCSRCUDAGetMultKernel_C", &f));
  PetscCall(GKCheck((PetscBool)(f != NULL), "the diagonal block composes MatDCSRCUDAGetMultKernel_C"));
  PetscCall((*f)(D, &kernel, &lanes));
  PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: %s ran kernel %" PetscInt_FMT " (3: the CSR base) %s", what, op, kernel, c->expect_base ? "on a plain CSR layout and the rows added since" : "with the CSR base off"));
  PetscCall(GKCheck((PetscBool)(c->expect_base ? kernel == 3 : kernel != 3), buf));
  if (kernel == 3) c->nbase_runs++;
  if (kernel == 3 && c->expect_baserows >= 0) {
    const PetscInt got = lanes == 64 ? 1 : 0;
    PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: %s on the CSR base ran %s (lanes %" PetscInt_FMT "), expected product %" PetscInt_FMT, what, op, got ? "the base stream kernel" : "cuSPARSE and the fix-up", lanes, c->expect_baserows));
    PetscCall(GKCheck((PetscBool)(got == c->expect_baserows), buf));
    if (got == c->expect_baserows) c->nbaserows_runs++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -powerlaw: the extra entries of row r in the first assembly, the same on every matrix and any number of ranks (a hash
   of r, no random stream): a Pareto length (P(len >= L) ~ L^-1.2), every 997th row maxlen long (-n 6000 -powerlaw 5000:
   10.6 extra entries a row on average, 15 rows longer than 256, 8 longer than 2048); columns r + 2, r + 3, ... (mod N):
   distinct and apart from the tridiagonal */
static PetscInt PowerLawLength(PetscInt r, PetscInt N, PetscInt maxlen)
{
  unsigned int h = (unsigned int)r * 2654435761u;
  double       u;
  PetscInt     len;

  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  u   = ((double)(h >> 8) + 1.0) / 16777216.0; /* (0, 1] */
  len = r % 997 == 5 ? maxlen : (PetscInt)PetscMin((double)maxlen, PetscPowReal(u, -1.0 / 1.2)) - 1;
  return PetscMax(0, PetscMin(len, N - 3));
}

static PetscErrorCode Compare(Ctx *c, const char *what)
{
  Vec       xd, yd, zd, xa, ya, za, da, dd;
  PetscReal nd, na, rel;
  PetscBool bound;
  char      buf[256];

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(c->Ad, &xd, &yd));
  PetscCall(VecDuplicate(yd, &zd));
  PetscCall(VecDuplicate(yd, &dd));
  PetscCall(MatCreateVecs(c->Aa, &xa, &ya));
  PetscCall(VecDuplicate(ya, &za));
  PetscCall(VecDuplicate(ya, &da));
  PetscCall(VecSetRandom(xa, c->rnd));
  PetscCall(VecSetRandom(za, c->rnd));
  PetscCall(GKCopyValues(xa, xd));
  PetscCall(GKCopyValues(za, zd));
  /* products on the device */
  PetscCall(MatMult(c->Ad, xd, yd));
  PetscCall(MatMult(c->Aa, xa, ya));
  PetscCall(MatBoundToCPU(c->Ad, &bound));
  {
    PetscOffloadMask m;
    PetscCall(VecGetOffloadMask(yd, &m));
    PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: the product's output was written on the device", what));
    if (!bound) PetscCall(GKCheck((PetscBool)(m == PETSC_OFFLOAD_GPU), buf));
  }
  if (!bound) PetscCall(CheckRowsKernel(c, what, "MatMult"));
  if (!bound) PetscCall(CheckBaseKernel(c, what, "MatMult"));
  PetscCall(GKRelDiff(yd, ya, NORM_INFINITY, &rel));
  PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: MatMult differs from AIJ by %g (relative)", what, (double)rel));
  PetscCall(GKCheck((PetscBool)(rel <= c->tol), buf));
  PetscCall(MatMultAdd(c->Ad, xd, zd, yd));
  PetscCall(MatMultAdd(c->Aa, xa, za, ya));
  PetscCall(GKRelDiff(yd, ya, NORM_INFINITY, &rel));
  PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: MatMultAdd differs from AIJ by %g", what, (double)rel));
  PetscCall(GKCheck((PetscBool)(rel <= c->tol), buf));
  if (!bound) PetscCall(CheckRowsKernel(c, what, "MatMultAdd"));
  if (!bound) PetscCall(CheckBaseKernel(c, what, "MatMultAdd"));
  PetscCall(MatMultAdd(c->Ad, xd, yd, yd)); /* y == z */
  PetscCall(MatMultAdd(c->Aa, xa, ya, ya));
  PetscCall(GKRelDiff(yd, ya, NORM_INFINITY, &rel));
  PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: MatMultAdd (y == z) differs from AIJ by %g", what, (double)rel));
  PetscCall(GKCheck((PetscBool)(rel <= c->tol), buf));
  PetscCall(MatMultTranspose(c->Ad, xd, yd));
  PetscCall(MatMultTranspose(c->Aa, xa, ya));
  PetscCall(GKRelDiff(yd, ya, NORM_INFINITY, &rel));
  PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: MatMultTranspose differs from AIJ by %g", what, (double)rel));
  PetscCall(GKCheck((PetscBool)(rel <= c->tol), buf));
  PetscCall(MatMultTransposeAdd(c->Ad, xd, zd, yd));
  PetscCall(MatMultTransposeAdd(c->Aa, xa, za, ya));
  PetscCall(GKRelDiff(yd, ya, NORM_INFINITY, &rel));
  PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: MatMultTransposeAdd differs from AIJ by %g", what, (double)rel));
  PetscCall(GKCheck((PetscBool)(rel <= c->tol), buf));
  PetscCall(MatGetDiagonal(c->Ad, dd));
  PetscCall(MatGetDiagonal(c->Aa, da));
  PetscCall(GKRelDiff(dd, da, NORM_INFINITY, &rel));
  PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: MatGetDiagonal differs from AIJ by %g", what, (double)rel));
  PetscCall(GKCheck((PetscBool)(rel <= c->tol), buf));
  /* the whole matrix (copied down by MatConvert) against AIJ, and the host MATDCSR too */
  PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: MATDCSRCUDA", what));
  PetscCall(GKCheckMatClose(c->Ad, c->Aa, c->tol, buf));
  PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: MATDCSR", what));
  PetscCall(GKCheckMatClose(c->Ah, c->Aa, c->tol, buf));
  {
    MatInfo id, ia;
    PetscCall(MatGetInfo(c->Ad, MAT_GLOBAL_SUM, &id));
    PetscCall(MatGetInfo(c->Aa, MAT_GLOBAL_SUM, &ia));
    nd = id.nz_used;
    na = ia.nz_used;
    PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: MATDCSRCUDA stores %g entries, AIJ %g", what, (double)nd, (double)na));
    PetscCall(GKCheck((PetscBool)(nd == na), buf));
  }
  c->nchecks += 9;
  PetscCall(VecDestroy(&xd));
  PetscCall(VecDestroy(&yd));
  PetscCall(VecDestroy(&zd));
  PetscCall(VecDestroy(&dd));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&za));
  PetscCall(VecDestroy(&da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode StoredEntries(Mat A, PetscLogDouble *nz)
{
  MatInfo info;

  PetscFunctionBegin;
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  *nz = info.nz_used;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a random batch on this rank: rows mostly own (others only with offrank), columns near the diagonal (hits) or
   anywhere (new), 20% repeats of an earlier (i, j) of the batch (duplicates), a few negative indices (skipped) */
static PetscErrorCode RandomBatch(Ctx *c, PetscInt n, PetscBool offrank, PetscInt *i, PetscInt *j, PetscScalar *v)
{
  PetscFunctionBegin;
  for (PetscInt e = 0; e < n; e++) {
    PetscReal a, b, d, w;
    PetscCall(PetscRandomGetValueReal(c->rnd, &a));
    PetscCall(PetscRandomGetValueReal(c->rnd, &b));
    PetscCall(PetscRandomGetValueReal(c->rnd, &d));
    PetscCall(PetscRandomGetValueReal(c->rnd, &w));
    v[e] = 2.0 * w - 1.0;
    if (e > 0 && d < 0.2) { /* a duplicate */
      PetscInt p = (PetscInt)(a * e);
      i[e]       = i[p];
      j[e]       = j[p];
      continue;
    }
    if (offrank && d > 0.8) i[e] = PetscMin((PetscInt)(a * c->N), c->N - 1);
    else i[e] = c->rstart + PetscMin((PetscInt)(a * (c->rend - c->rstart)), c->rend - c->rstart - 1);
    if (b < 0.5) j[e] = PetscMin(PetscMax(i[e] + (PetscInt)(8 * b) - 2, 0), c->N - 1);
    else j[e] = PetscMin((PetscInt)(b * c->N * 7) % c->N, c->N - 1);
    if (d > 0.79 && d < 0.8) j[e] = -1; /* skipped */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetEntries(Mat A, PetscInt n, const PetscInt i[], const PetscInt j[], const PetscScalar v[], InsertMode mode)
{
  PetscFunctionBegin;
  for (PetscInt e = 0; e < n; e++) PetscCall(MatSetValues(A, 1, &i[e], 1, &j[e], &v[e], mode));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the n entries (i, j, v) of this rank copied to device arrays and given to MatDCSRSetValuesCOODevice() */
static PetscErrorCode DeviceBatch(Mat A, PetscInt n, const PetscInt i[], const PetscInt j[], const PetscScalar v[], InsertMode mode)
{
  PetscInt    *di, *dj;
  PetscScalar *dv;

  PetscFunctionBegin;
  PetscCall(GKDeviceCOOCopy(n, i, j, v, &di, &dj, &dv));
  PetscCall(MatDCSRSetValuesCOODevice(A, n, di, dj, dv, mode));
  PetscCall(GKDeviceCOOFree(&di, &dj, &dv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a device ADD of len new entries into one row of each rank (the middle one of its rows), columns row + 7 k + shift, on
   Ad, Ah and Aa: after a defragmentation, rounds with shifts 1, 2, 3 give that row one, two and three pieces outside
   the CSR base (or fewer, where a segment had room), and a long one more than the fix-up's short-tail limit (64): the
   fix-up's table takes the first two, a whole warp the others */
static PetscErrorCode HotRowRound(Ctx *c, PetscInt len, PetscInt shift)
{
  const PetscInt row = c->rstart + (c->rend - c->rstart) / 2;
  PetscInt      *i, *j;
  PetscScalar   *v;

  PetscFunctionBegin;
  PetscCall(PetscMalloc3(len, &i, len, &j, len, &v));
  for (PetscInt k = 0; k < len; k++) {
    i[k] = row;
    j[k] = (row + 7 * k + shift) % c->N; /* len <= N / 7 distinct columns; a repeat would be added, as AIJ does */
    v[k] = 1.0 / (PetscScalar)(k + 2);
  }
  PetscCall(DeviceBatch(c->Ad, len, i, j, v, ADD_VALUES));
  PetscCall(SetEntries(c->Ah, len, i, j, v, ADD_VALUES));
  PetscCall(SetEntries(c->Aa, len, i, j, v, ADD_VALUES));
  PetscCall(PetscFree3(i, j, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one round: host MatSetValues() into all three, or a device batch into Ad and the same by MatSetValues() into the others */
static PetscErrorCode Round(Ctx *c, PetscBool device, InsertMode mode, const char *what)
{
  PetscInt        *i, *j, n = c->batch;
  PetscScalar     *v;
  PetscLogDouble   nz0 = 0, nz1 = 0;
  PetscObjectState s0, s1;
  char             buf[256];

  PetscFunctionBegin;
  PetscCall(PetscMalloc3(n, &i, n, &j, n, &v));
  /* another rank's rows only on the host and with ADD (INSERT from several ranks into one entry has no order) */
  PetscCall(RandomBatch(c, n, (PetscBool)(!device && mode == ADD_VALUES && c->size > 1), i, j, v));
  PetscCall(StoredEntries(c->Aa, &nz0));
  PetscCall(MatGetNonzeroState(c->Ad, &s0));
  if (device) PetscCall(DeviceBatch(c->Ad, n, i, j, v, mode));
  else {
    /* a 2 x 3 block with a negative column, column-oriented, besides the single entries */
    PetscInt    bi[2] = {c->rstart, c->rend - 1}, bj[3] = {0, -1, c->N - 1};
    PetscScalar bv[6] = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0};
    PetscCall(MatSetOption(c->Ad, MAT_ROW_ORIENTED, PETSC_FALSE));
    PetscCall(MatSetOption(c->Ah, MAT_ROW_ORIENTED, PETSC_FALSE));
    PetscCall(MatSetOption(c->Aa, MAT_ROW_ORIENTED, PETSC_FALSE));
    PetscCall(MatSetValues(c->Ad, 2, bi, 3, bj, bv, mode));
    PetscCall(MatSetValues(c->Ah, 2, bi, 3, bj, bv, mode));
    PetscCall(MatSetValues(c->Aa, 2, bi, 3, bj, bv, mode));
    PetscCall(MatSetOption(c->Ad, MAT_ROW_ORIENTED, PETSC_TRUE));
    PetscCall(MatSetOption(c->Ah, MAT_ROW_ORIENTED, PETSC_TRUE));
    PetscCall(MatSetOption(c->Aa, MAT_ROW_ORIENTED, PETSC_TRUE));
    PetscCall(SetEntries(c->Ad, n, i, j, v, mode));
  }
  PetscCall(SetEntries(c->Ah, n, i, j, v, mode)); /* after the block (host rounds), as Ad */
  PetscCall(SetEntries(c->Aa, n, i, j, v, mode));
  PetscCall(StoredEntries(c->Aa, &nz1));
  PetscCall(MatGetNonzeroState(c->Ad, &s1));
  PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s: nonzerostate %s although the round %s new entries", what, s1 != s0 ? "moved" : "stayed", nz1 > nz0 ? "brought" : "brought no"));
  if (c->size == 1) PetscCall(GKCheck((PetscBool)((s1 != s0) == (nz1 > nz0)), buf));
  else PetscCall(GKCheck((PetscBool)(nz1 == nz0 || s1 != s0), buf)); /* MPI: blocks' states are summed; a moved state without new entries is allowed */
  PetscCall(PetscFree3(i, j, v));
  PetscCall(Compare(c, what));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: %s (%s, %s): %g stored entries\n", what, device ? "device batch" : "MatSetValues", mode == ADD_VALUES ? "ADD" : "INSERT", (double)nz1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* copy counters of this rank (CPU->GPU count, GPU->CPU count) of an event, 0 when it was never registered */
static PetscErrorCode EventCopies(const char *name, PetscLogDouble cnt[2])
{
  PetscLogEvent      ev;
  PetscEventPerfInfo info;

  PetscFunctionBegin;
  cnt[0] = cnt[1] = 0;
  PetscCall(PetscLogEventGetId(name, &ev));
  if (ev < 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, ev, &info));
  cnt[0] = info.CpuToGpuCount;
  cnt[1] = info.GpuToCpuCount;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SolveCopies(PetscLogDouble c[2])
{
  const char    *scatter[] = {"VecScatterBegin", "VecScatterEnd", "SFBcastBegin", "SFBcastEnd", "SFReduceBegin", "SFReduceEnd"};
  PetscLogDouble k[2], s[2];

  PetscFunctionBegin;
  PetscCall(EventCopies("KSPSolve", k));
  c[0] = k[0];
  c[1] = k[1];
  for (int q = 0; q < 6; q++) { /* the ghost exchange of -use_gpu_aware_mpi 0 stages through the host: PETSc's, not ours */
    PetscCall(EventCopies(scatter[q], s));
    c[0] -= s[0];
    c[1] -= s[1];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* CG + Jacobi on a g x g Laplacian plus random symmetric couplings added by a device batch: two solves, the second
   measured: no host<->device copy but PETSc's ghost exchange; the solution checked against AIJ on the host */
static PetscErrorCode TestSolve(Ctx *c, PetscInt g)
{
  Mat            Kd, Ka;
  KSP            ksp;
  PC             pc;
  Vec            b, x, bh, xh, r;
  PetscInt       N = g * g, rs, re, its, *ci, *cj, nc = 0;
  PetscScalar   *cv;
  PetscLogDouble c0[2], c1[2], loc[2], glob[2];
  PetscReal      rn, bn;
  KSPConvergedReason reason;
  Mat            ms[2];

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    PetscCall(MatCreate(PETSC_COMM_WORLD, &ms[k]));
    PetscCall(MatSetSizes(ms[k], PETSC_DECIDE, PETSC_DECIDE, N, N));
    PetscCall(MatSetType(ms[k], k ? MATAIJ : MATDCSRCUDA));
    if (!k) PetscCall(MatSetFromOptions(ms[k])); /* the -mat_dcsr_* options of the command line, as the other DCSR matrices */
    PetscCall(MatSetUp(ms[k]));
    PetscCall(MatSetOption(ms[k], MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  }
  Kd = ms[0];
  Ka = ms[1];
  PetscCall(MatGetOwnershipRange(Kd, &rs, &re));
  for (int k = 0; k < 2; k++) {
    for (PetscInt row = rs; row < re; row++) {
      PetscInt    ix = row % g, iy = row / g, cols[5], n = 0;
      PetscScalar vals[5];
      cols[n]   = row;
      vals[n++] = 4.0;
      if (ix > 0) cols[n] = row - 1, vals[n++] = -1.0;
      if (ix < g - 1) cols[n] = row + 1, vals[n++] = -1.0;
      if (iy > 0) cols[n] = row - g, vals[n++] = -1.0;
      if (iy < g - 1) cols[n] = row + g, vals[n++] = -1.0;
      PetscCall(MatSetValues(ms[k], 1, &row, n, cols, vals, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(ms[k], MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(ms[k], MAT_FINAL_ASSEMBLY));
  }
  /* symmetric couplings between own rows: (i,j), (j,i) -0.05 and +0.05 on both diagonals, as one ADD batch */
  PetscCall(PetscMalloc3(4 * (re - rs), &ci, 4 * (re - rs), &cj, 4 * (re - rs), &cv));
  for (PetscInt row = rs; row < re; row++) {
    PetscReal a;
    PetscInt  col;
    PetscCall(PetscRandomGetValueReal(c->rnd, &a));
    col = rs + PetscMin((PetscInt)(a * (re - rs)), re - rs - 1);
    if (col == row) continue;
    ci[nc] = row, cj[nc] = col, cv[nc++] = -0.05;
    ci[nc] = col, cj[nc] = row, cv[nc++] = -0.05;
    ci[nc] = row, cj[nc] = row, cv[nc++] = 0.05;
    ci[nc] = col, cj[nc] = col, cv[nc++] = 0.05;
  }
  PetscCall(DeviceBatch(Kd, nc, ci, cj, cv, ADD_VALUES));
  PetscCall(SetEntries(Ka, nc, ci, cj, cv, ADD_VALUES));
  PetscCall(PetscFree3(ci, cj, cv));

  PetscCall(MatCreateVecs(Kd, &x, &b));
  PetscCall(MatCreateVecs(Ka, &xh, &bh));
  PetscCall(VecDuplicate(bh, &r));
  PetscCall(VecSetRandom(bh, c->rnd));
  PetscCall(GKCopyValues(bh, b));
  PetscCall(GKToDevice(b));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, Kd, Kd));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 5000));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x)); /* set-up */
  PetscCall(SolveCopies(c0));
  PetscCall(KSPSolve(ksp, b, x)); /* measured */
  PetscCall(SolveCopies(c1));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCheck(reason > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "KSPSolve CG + Jacobi with MATDCSRCUDA did not converge: %s after %" PetscInt_FMT " iterations", KSPConvergedReasons[reason], its);
  loc[0] = c1[0] - c0[0];
  loc[1] = c1[1] - c0[1];
  PetscCall(MPIU_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  KSPSolve CG + Jacobi on MATDCSRCUDA (%" PetscInt_FMT " rows after a device batch of couplings): %" PetscInt_FMT " iterations; copies besides the ghost exchange in the measured solve (worst rank): CPU->GPU %.0f, GPU->CPU %.0f\n", N, its, glob[0], glob[1]));
  PetscCheck(glob[0] == 0.0 && glob[1] == 0.0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "KSPSolve with MATDCSRCUDA copied between CPU and GPU inside the solve: %.0f CPU->GPU and %.0f GPU->CPU (worst rank); run with -log_view to see which event", glob[0], glob[1]);
  PetscCall(GKCopyValues(x, xh));
  PetscCall(MatMult(Ka, xh, r));
  PetscCall(VecAXPY(r, -1.0, bh));
  PetscCall(VecNorm(r, NORM_2, &rn));
  PetscCall(VecNorm(bh, NORM_2, &bn));
  PetscCheck(rn <= 1e-8 * bn, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "KSPSolve with MATDCSRCUDA: |b - A_aij x| / |b| = %g", (double)(rn / bn));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: KSPSolve CG + Jacobi: no host<->device copy in the solve, |b - A_aij x|/|b| = %.2e\n", (double)(rn / bn)));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xh));
  PetscCall(VecDestroy(&bh));
  PetscCall(VecDestroy(&r));
  PetscCall(MatDestroy(&Kd));
  PetscCall(MatDestroy(&Ka));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* bad input on one rank: every error clear, the matrix unchanged afterwards */
static PetscErrorCode TestBadInput(Ctx *c)
{
  PetscInt      *di, *dj, hi[2], hj[2];
  PetscScalar   *dv, hv[2] = {1.0, 2.0};
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCallCUDA(cudaMalloc((void **)&di, 2 * sizeof(PetscInt)));
  PetscCallCUDA(cudaMalloc((void **)&dj, 2 * sizeof(PetscInt)));
  PetscCallCUDA(cudaMalloc((void **)&dv, 2 * sizeof(PetscScalar)));
  PetscCallCUDA(cudaMemcpy(dv, hv, 2 * sizeof(PetscScalar), cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaDeviceSynchronize());
  /* a row out of range (after a good entry: nothing of the batch may land) */
  hi[0] = c->rstart, hj[0] = (c->rstart + 3) % c->N, hi[1] = c->N + 5, hj[1] = 0;
  PetscCallCUDA(cudaMemcpy(di, hi, 2 * sizeof(PetscInt), cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaMemcpy(dj, hj, 2 * sizeof(PetscInt), cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscCall(GKExpectErrorBegin());
  ierr = MatDCSRSetValuesCOODevice(c->Ad, 2, di, dj, dv, INSERT_VALUES);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "out of range", "device batch with a row out of range"));
  /* a column out of range */
  hi[1] = c->rstart, hj[1] = c->N;
  PetscCallCUDA(cudaMemcpy(di, hi, 2 * sizeof(PetscInt), cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaMemcpy(dj, hj, 2 * sizeof(PetscInt), cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscCall(GKExpectErrorBegin());
  ierr = MatDCSRSetValuesCOODevice(c->Ad, 2, di, dj, dv, ADD_VALUES);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "out of range", "device batch with a column out of range"));
  /* host arrays given as device arrays */
  PetscCall(GKExpectErrorBegin());
  ierr = MatDCSRSetValuesCOODevice(c->Ad, 2, hi, hj, hv, ADD_VALUES);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_WRONG, "not device memory", "device batch with host pointers"));
  PetscCallCUDA(cudaFree(di));
  PetscCallCUDA(cudaFree(dj));
  PetscCallCUDA(cudaFree(dv));
  /* MatSetValues() between MatAssemblyBegin() and MatAssemblyEnd() */
  PetscCall(MatAssemblyBegin(c->Ad, MAT_FINAL_ASSEMBLY));
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetValues(c->Ad, 1, &hi[0], 1, &hj[0], hv, ADD_VALUES);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ORDER, "MatAssemblyEnd", "MatSetValues inside an assembly"));
  PetscCall(MatAssemblyEnd(c->Ad, MAT_FINAL_ASSEMBLY));
  /* a row out of range through MatSetValues() */
  hi[1] = c->N + 1;
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetValues(c->Ad, 1, &hi[1], 1, &hj[0], hv, ADD_VALUES);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "out of range", "MatSetValues with a row out of range"));
  /* MatSetValues() marks the matrix unassembled before it checks (as for AIJ): assemble again, then compare */
  PetscCall(MatAssemblyBegin(c->Ad, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(c->Ad, MAT_FINAL_ASSEMBLY));
  PetscCall(Compare(c, "after the bad input (matrix unchanged)"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* new-nonzero options through the device batch (one rank): MAT_NEW_NONZERO_LOCATIONS false drops the new entries as
   AIJ drops them; MAT_NEW_NONZERO_LOCATION_ERR errors and leaves the matrix unchanged */
static PetscErrorCode TestNewNonzeroOptions(Ctx *c)
{
  PetscInt      *di, *dj, hi[2], hj[2];
  PetscScalar   *dv, hv[2] = {3.0, 4.0};
  PetscErrorCode ierr;
  Mat            ms[3] = {c->Ad, c->Ah, c->Aa};
  PetscBool      found = PETSC_FALSE;

  PetscFunctionBegin;
  /* an entry not stored yet (row 0: the first column whose value is zero in AIJ and not the diagonal) and a stored one */
  for (PetscInt col = c->N - 1; col > 0 && !found; col--) {
    PetscInt           nc;
    const PetscInt    *cols;
    PetscBool          in = PETSC_FALSE;
    PetscCall(MatGetRow(c->Aa, 0, &nc, &cols, NULL));
    for (PetscInt k = 0; k < nc; k++) in = (PetscBool)(in || cols[k] == col);
    PetscCall(MatRestoreRow(c->Aa, 0, &nc, &cols, NULL));
    if (!in) {
      hj[0] = col;
      found = PETSC_TRUE;
    }
  }
  if (!found) PetscFunctionReturn(PETSC_SUCCESS);
  hi[0] = 0, hi[1] = 0, hj[1] = 0;
  PetscCallCUDA(cudaMalloc((void **)&di, 2 * sizeof(PetscInt)));
  PetscCallCUDA(cudaMalloc((void **)&dj, 2 * sizeof(PetscInt)));
  PetscCallCUDA(cudaMalloc((void **)&dv, 2 * sizeof(PetscScalar)));
  PetscCallCUDA(cudaMemcpy(di, hi, 2 * sizeof(PetscInt), cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaMemcpy(dj, hj, 2 * sizeof(PetscInt), cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaMemcpy(dv, hv, 2 * sizeof(PetscScalar), cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaDeviceSynchronize());
  for (int k = 0; k < 3; k++) PetscCall(MatSetOption(ms[k], MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE));
  PetscCall(GKExpectErrorBegin());
  ierr = MatDCSRSetValuesCOODevice(c->Ad, 2, di, dj, dv, ADD_VALUES);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, "MAT_NEW_NONZERO_LOCATION_ERR", "device batch with a new entry under MAT_NEW_NONZERO_LOCATION_ERR"));
  PetscCall(Compare(c, "after MAT_NEW_NONZERO_LOCATION_ERR (matrix unchanged)"));
  for (int k = 0; k < 3; k++) PetscCall(MatSetOption(ms[k], MAT_NEW_NONZERO_LOCATION_ERR, PETSC_FALSE));
  for (int k = 0; k < 3; k++) PetscCall(MatSetOption(ms[k], MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
  PetscCall(MatDCSRSetValuesCOODevice(c->Ad, 2, di, dj, dv, ADD_VALUES));
  PetscCall(SetEntries(c->Ah, 2, hi, hj, hv, ADD_VALUES));
  PetscCall(SetEntries(c->Aa, 2, hi, hj, hv, ADD_VALUES));
  PetscCall(Compare(c, "MAT_NEW_NONZERO_LOCATIONS false: the new entry dropped, the stored one added"));
  for (int k = 0; k < 3; k++) PetscCall(MatSetOption(ms[k], MAT_NEW_NONZERO_LOCATIONS, PETSC_TRUE));
  PetscCallCUDA(cudaFree(di));
  PetscCallCUDA(cudaFree(dj));
  PetscCallCUDA(cudaFree(dv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a batch whose work space exceeds the free device memory (most of it taken by a hog), into a fresh matrix that must
   grow far beyond its capacity: either it goes in (in chunks, the buffer grown by device defragmentations) and equals
   AIJ built by COO from the same entries, or it fails with PETSC_ERR_MEM and a message that says so, and the matrix
   is still consistent (its products equal those of its own AIJ conversion) */
static PetscErrorCode TestMemory(Ctx *c, PetscInt n2, PetscInt nb, PetscInt leavemb)
{
  PetscInt      *i, *j, *di, *dj;
  PetscScalar   *v, *dv;
  void          *hog = NULL;
  size_t         fre, tot, leave = (size_t)leavemb << 20;
  PetscErrorCode ierr;
  Mat            Ad2, Aa2;
  Vec            x, y, xa, ya;
  PetscReal      rel;
  char           buf[256];

  PetscFunctionBegin;
  PetscCall(PetscMalloc3(nb, &i, nb, &j, nb, &v));
  for (PetscInt e = 0; e < nb; e++) {
    PetscReal a, b, w;
    PetscCall(PetscRandomGetValueReal(c->rnd, &a));
    PetscCall(PetscRandomGetValueReal(c->rnd, &b));
    PetscCall(PetscRandomGetValueReal(c->rnd, &w));
    i[e] = PetscMin((PetscInt)(a * n2), n2 - 1);
    j[e] = PetscMin((PetscInt)(b * n2), n2 - 1);
    v[e] = w;
  }
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, n2, n2, 0, NULL, &Aa2));
  { /* MatSetPreallocationCOO() may reorder the index arrays it is given (PETSc's COO path sorts them in place): give it
       copies, so that i, j still pair with v for the device batch */
    PetscInt *ic, *jc;
    PetscCall(PetscMalloc2(nb, &ic, nb, &jc));
    PetscCall(PetscArraycpy(ic, i, nb));
    PetscCall(PetscArraycpy(jc, j, nb));
    PetscCall(MatSetPreallocationCOO(Aa2, nb, ic, jc)); /* COO sums duplicates: ADD_VALUES into an empty matrix */
    PetscCall(PetscFree2(ic, jc));
  }
  PetscCall(MatSetValuesCOO(Aa2, v, INSERT_VALUES));
  PetscCall(MatCreate(PETSC_COMM_SELF, &Ad2));
  PetscCall(MatSetSizes(Ad2, n2, n2, n2, n2));
  PetscCall(MatSetType(Ad2, MATSEQDCSRCUDA));
  PetscCall(MatSetFromOptions(Ad2));
  PetscCall(MatSeqAIJSetPreallocation(Ad2, 2, NULL));
  PetscCall(MatAssemblyBegin(Ad2, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Ad2, MAT_FINAL_ASSEMBLY));
  PetscCallCUDA(cudaMalloc((void **)&di, nb * sizeof(PetscInt)));
  PetscCallCUDA(cudaMalloc((void **)&dj, nb * sizeof(PetscInt)));
  PetscCallCUDA(cudaMalloc((void **)&dv, nb * sizeof(PetscScalar)));
  PetscCallCUDA(cudaMemcpy(di, i, nb * sizeof(PetscInt), cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaMemcpy(dj, j, nb * sizeof(PetscInt), cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaMemcpy(dv, v, nb * sizeof(PetscScalar), cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscCallCUDA(cudaMemGetInfo(&fre, &tot));
  if (fre > leave) PetscCallCUDA(cudaMalloc(&hog, fre - leave));
  PetscCallCUDA(cudaMemGetInfo(&fre, &tot));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "  memory test: a batch of %" PetscInt_FMT " entries (~%g MB of work space) into an empty %" PetscInt_FMT "-row matrix with %g MB of device memory free\n", nb, (double)nb * 96.0 / 1048576.0, n2, (double)fre / 1048576.0));
  PetscCall(GKExpectErrorBegin());
  ierr = MatDCSRSetValuesCOODevice(Ad2, nb, di, dj, dv, ADD_VALUES);
  PetscCall(PetscPopErrorHandler());
  if (hog) PetscCallCUDA(cudaFree(hog));
  PetscCall(MatCreateVecs(Ad2, &x, &y));
  PetscCall(MatCreateVecs(Aa2, &xa, &ya));
  PetscCall(VecSetRandom(xa, c->rnd));
  PetscCall(GKCopyValues(xa, x));
  PetscCall(MatMult(Ad2, x, y));
  if (!ierr) {
    PetscCall(MatMult(Aa2, xa, ya));
    PetscCall(GKRelDiff(y, ya, NORM_INFINITY, &rel));
    PetscCall(PetscSNPrintf(buf, sizeof(buf), "the batch larger than the free memory: MatMult differs from AIJ (COO) by %g", (double)rel));
    if (rel > c->tol) { /* say where: the stored entries (copied down) against AIJ's, and the device product against them */
      Mat       C;
      PetscInt  shown = 0;
      PetscReal rc;
      PetscCall(MatConvert(Ad2, MATSEQAIJ, MAT_INITIAL_MATRIX, &C));
      PetscCall(MatMult(C, xa, ya));
      PetscCall(GKRelDiff(y, ya, NORM_INFINITY, &rc));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "  device product against its own AIJ conversion: %g\n", (double)rc));
      for (PetscInt r = 0; r < n2 && shown < 3; r++) {
        PetscInt           na, nc;
        const PetscInt    *ca, *cc;
        const PetscScalar *va, *vc;
        PetscBool          same;
        PetscCall(MatGetRow(Aa2, r, &na, &ca, &va));
        PetscCall(MatGetRow(C, r, &nc, &cc, &vc));
        same = (PetscBool)(na == nc);
        for (PetscInt t = 0; t < na && same; t++) same = (PetscBool)(ca[t] == cc[t] && PetscAbsScalar(va[t] - vc[t]) <= 1e-12 * (1 + PetscAbsScalar(va[t])));
        if (!same) {
          PetscCall(PetscPrintf(PETSC_COMM_SELF, "  row %" PetscInt_FMT ": AIJ %" PetscInt_FMT " entries (first col %" PetscInt_FMT " %g), DCSR %" PetscInt_FMT " entries (first col %" PetscInt_FMT " %g)\n", r, na, na ? ca[0] : -1, na ? (double)PetscRealPart(va[0]) : 0.0, nc, nc ? cc[0] : -1, nc ? (double)PetscRealPart(vc[0]) : 0.0));
          shown++;
        }
        PetscCall(MatRestoreRow(C, r, &nc, &cc, &vc));
        PetscCall(MatRestoreRow(Aa2, r, &na, &ca, &va));
      }
      PetscCall(MatDestroy(&C));
    }
    PetscCall(GKCheck((PetscBool)(rel <= c->tol), buf));
    PetscCall(GKCheckMatClose(Ad2, Aa2, c->tol, "the batch larger than the free memory"));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok: the batch larger than the free memory went in and equals AIJ\n"));
  } else {
    Mat C;
    PetscCheck(ierr == PETSC_ERR_MEM, PETSC_COMM_SELF, PETSC_ERR_PLIB, "a batch larger than the free device memory failed with error %d, not PETSC_ERR_MEM", (int)ierr);
    PetscCall(MatConvert(Ad2, MATSEQAIJ, MAT_INITIAL_MATRIX, &C));
    PetscCall(MatMult(C, xa, ya));
    PetscCall(GKRelDiff(y, ya, NORM_INFINITY, &rel));
    PetscCall(GKCheck((PetscBool)(rel <= c->tol), "after the failed batch the matrix is consistent (device product = its AIJ conversion's)"));
    PetscCall(MatDestroy(&C));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok: the batch larger than the free memory failed with PETSC_ERR_MEM and a consistent matrix\n"));
  }
  c->nchecks += 2;
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&ya));
  PetscCall(MatDestroy(&Ad2));
  PetscCall(MatDestroy(&Aa2));
  PetscCallCUDA(cudaFree(di));
  PetscCallCUDA(cudaFree(dj));
  PetscCallCUDA(cudaFree(dv));
  PetscCall(PetscFree3(i, j, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode EventCount(const char *name, PetscInt *cnt)
{
  PetscLogEvent ev;

  PetscFunctionBegin;
  *cnt = 0;
  PetscCall(PetscLogEventGetId(name, &ev));
  if (ev >= 0) PetscCall(GKLogEventCount(ev, cnt));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif /* PetscDefined(HAVE_CUDA) */

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCheck(PetscDefined(HAVE_CUDA), PETSC_COMM_WORLD, PETSC_ERR_SUP, "dcsr_cuda tests MATDCSRCUDA and needs a PETSc configured with CUDA (make petsc-cuda; make PETSC_DIR=.../petsc-cuda tests)");
#if PetscDefined(HAVE_CUDA)
  Ctx       ctx, *c = &ctx;
  PetscInt  n = 2000, rounds = 4, prealloc = 3, grid = 64, memn = 100000, memb = 8000000, memleave = 1024;
  PetscBool expect_defrag = PETSC_FALSE, expect_grow = PETSC_FALSE, memtest = PETSC_FALSE;
  PetscInt  powerlaw = 0;
  PetscBool expect_fallback = PETSC_FALSE;

  PetscCall(PetscMemzero(c, sizeof(*c)));
  c->tol   = 1e-12;
  c->batch = 500;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &c->size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &c->rank));
  PetscCall(PetscLogDefaultBegin());
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "dcsr_cuda options", NULL);
  PetscCall(PetscOptionsInt("-n", "Rows", NULL, n, &n, NULL));
  PetscCall(PetscOptionsInt("-rounds", "Rounds of each kind (host INSERT/ADD, device INSERT/ADD)", NULL, rounds, &rounds, NULL));
  PetscCall(PetscOptionsInt("-batch", "Entries per rank and round", NULL, c->batch, &c->batch, NULL));
  PetscCall(PetscOptionsInt("-prealloc", "Entries per row preallocated", NULL, prealloc, &prealloc, NULL));
  PetscCall(PetscOptionsInt("-grid", "KSP test grid (0: none)", NULL, grid, &grid, NULL));
  PetscCall(PetscOptionsReal("-tol", "Relative tolerance", NULL, c->tol, &c->tol, NULL));
  PetscCall(PetscOptionsBool("-expect_defrag", "The device must have defragmented by itself", NULL, expect_defrag, &expect_defrag, NULL));
  PetscCall(PetscOptionsBool("-expect_grow", "The device must have grown its buffer", NULL, expect_grow, &expect_grow, NULL));
  PetscCall(PetscOptionsBool("-memtest", "The batch larger than the free device memory (one rank)", NULL, memtest, &memtest, NULL));
  PetscCall(PetscOptionsInt("-memtest_rows", "Rows of the memory test's matrix", NULL, memn, &memn, NULL));
  PetscCall(PetscOptionsInt("-memtest_batch", "Entries of the memory test's batch", NULL, memb, &memb, NULL));
  PetscCall(PetscOptionsInt("-memtest_leave_mb", "Device memory (MB) left free by the memory test's hog", NULL, memleave, &memleave, NULL));
  PetscCall(PetscOptionsInt("-powerlaw", "Power-law rows of up to this many entries in the first assembly (0: none)", NULL, powerlaw, &powerlaw, NULL));
  c->expect_base     = -1;
  c->expect_baserows = -1;
  PetscCall(PetscOptionsInt("-expect_csr_base_product", "With -expect_csr_base 1: the products on the CSR base ran 0 cuSPARSE and the fix-up, 1 the base stream kernel", NULL, c->expect_baserows, &c->expect_baserows, NULL));
  PetscCall(PetscOptionsInt("-expect_csr_base", "1: the products after MatDCSRDefragment() (and after a few device entries, MatScale, MatShift) ran on the CSR base; 0: they did not", NULL, c->expect_base, &c->expect_base, NULL));
  PetscCall(PetscOptionsBool("-expect_rows_kernel", "The diagonal block's products ran the rows kernel exactly where every row had at most one segment, else fused", NULL, c->expect_rows, &c->expect_rows, NULL));
  PetscCall(PetscOptionsBool("-expect_rows_fallback", "With -expect_rows_kernel: some product of the diagonal block fell back on the fused kernel (fragmented rows)", NULL, expect_fallback, &expect_fallback, NULL));
  PetscOptionsEnd();
  c->N = n;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &c->rnd));
  PetscCall(PetscRandomSetSeed(c->rnd, 4321 + 17 * (unsigned long)c->rank));
  PetscCall(PetscRandomSeed(c->rnd));
  {
    Mat      *ms[3] = {&c->Ad, &c->Ah, &c->Aa};
    MatType   ts[3] = {MATDCSRCUDA, MATDCSR, MATAIJ};
    PetscInt  K;
    PetscCount used0, cap0, used, cap;
    PetscInt  maxseg, ndef, r;

    for (int k = 0; k < 3; k++) {
      PetscCall(MatCreate(PETSC_COMM_WORLD, ms[k]));
      PetscCall(MatSetSizes(*ms[k], PETSC_DECIDE, PETSC_DECIDE, n, n));
      PetscCall(MatSetType(*ms[k], ts[k]));
      if (k < 2) PetscCall(MatSetFromOptions(*ms[k])); /* -mat_dcsr_* apply to both DCSR matrices */
      PetscCall(MatSeqAIJSetPreallocation(*ms[k], prealloc, NULL));
      PetscCall(MatMPIAIJSetPreallocation(*ms[k], prealloc, NULL, 1, NULL));
      PetscCall(MatSetOption(*ms[k], MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    }
    PetscCall(MatGetOwnershipRange(c->Ad, &c->rstart, &c->rend));
    { /* a new device matrix is not bound to the CPU (else every device check below would be skipped) */
      PetscBool b;
      PetscCall(MatBoundToCPU(c->Ad, &b));
      PetscCall(GKCheck((PetscBool)!b, "a new MATDCSRCUDA matrix is not bound to the CPU"));
    }
    /* the first assembly: a tridiagonal matrix, everything new */
    for (int k = 0; k < 3; k++) {
      for (PetscInt row = c->rstart; row < c->rend; row++) {
        PetscInt    cols[3] = {row - 1, row, row + 1 < n ? row + 1 : -1};
        PetscScalar vals[3] = {-1.0, 3.0, -1.0};
        PetscCall(MatSetValues(*ms[k], 1, &row, 3, cols, vals, INSERT_VALUES));
        if (powerlaw > 0) { /* a power-law row: rows longer than the product's long-row threshold, split in chunks */
          PetscInt     len = PowerLawLength(row, n, powerlaw), *pc;
          PetscScalar *pv;
          PetscCall(PetscMalloc2(len, &pc, len, &pv));
          for (PetscInt q = 0; q < len; q++) {
            pc[q] = (row + 2 + q) % n;
            pv[q] = 0.01 * (PetscScalar)(1 + (row + q) % 7);
          }
          PetscCall(MatSetValues(*ms[k], 1, &row, len, pc, pv, INSERT_VALUES));
          PetscCall(PetscFree2(pc, pv));
        }
      }
      PetscCall(MatAssemblyBegin(*ms[k], MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(*ms[k], MAT_FINAL_ASSEMBLY));
    }
    PetscCall(Compare(c, "first assembly"));
    if (powerlaw > 0) {
      PetscInt lmax = 0, nlong = 0, lrow, gl[2], ll[2];
      for (PetscInt row = c->rstart; row < c->rend; row++) {
        lrow = 3 + PowerLawLength(row, n, powerlaw);
        lmax = PetscMax(lmax, lrow);
        nlong += lrow > 256 ? 1 : 0;
      }
      ll[0] = lmax;
      ll[1] = nlong;
      PetscCall(MPIU_Allreduce(ll, gl, 2, MPIU_INT, MPI_MAX, PETSC_COMM_WORLD));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  power-law rows: the longest has about %" PetscInt_FMT " entries; up to %" PetscInt_FMT " rows per rank longer than 256\n", gl[0], gl[1]));
    }
    PetscCall(MatDCSRGetInfo(c->Ad, &K, &maxseg, &used0, &cap0));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: first assembly; K = %" PetscInt_FMT ", %" PetscCount_FMT " of %" PetscCount_FMT " slots used\n", K, used0, cap0));

    /* rounds: device and host, INSERT and ADD, in turn */
    for (r = 0; r < rounds; r++) {
      char what[64];
      PetscCall(PetscSNPrintf(what, sizeof(what), "round %" PetscInt_FMT " device ADD", r));
      PetscCall(Round(c, PETSC_TRUE, ADD_VALUES, what));
      PetscCall(PetscSNPrintf(what, sizeof(what), "round %" PetscInt_FMT " device INSERT", r));
      PetscCall(Round(c, PETSC_TRUE, INSERT_VALUES, what));
      PetscCall(PetscSNPrintf(what, sizeof(what), "round %" PetscInt_FMT " host ADD", r));
      PetscCall(Round(c, PETSC_FALSE, ADD_VALUES, what));
      PetscCall(PetscSNPrintf(what, sizeof(what), "round %" PetscInt_FMT " host INSERT", r));
      PetscCall(Round(c, PETSC_FALSE, INSERT_VALUES, what));
    }
    PetscCall(MatDCSRGetInfo(c->Ad, &K, &maxseg, &used, &cap));
    PetscCall(EventCount("DCSRCUDADefrag", &ndef));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  after the rounds: at most %" PetscInt_FMT " of K = %" PetscInt_FMT " segments in a row, %" PetscCount_FMT " of %" PetscCount_FMT " slots used, %" PetscInt_FMT " device defragmentations on rank 0\n", maxseg, K, used, cap, ndef));
    PetscCall(GKCheck((PetscBool)(maxseg <= K), "no row has more than K segments"));
    if (expect_defrag) {
      PetscInt gdef;
      PetscCall(MPIU_Allreduce(&ndef, &gdef, 1, MPIU_INT, MPI_MAX, PETSC_COMM_WORLD));
      PetscCall(GKCheck((PetscBool)(gdef > 0), "-expect_defrag: the device defragmented (K or capacity reached)"));
    }
    if (expect_grow) PetscCall(GKCheck((PetscBool)(cap > cap0), "-expect_grow: the buffer grew"));

    /* products fragmented, then defragmented; nonzerostate unchanged by the defragmentation */
    {
      PetscObjectState s0, s1;
      PetscCall(Compare(c, "fragmented"));
      PetscCall(MatGetNonzeroState(c->Ad, &s0));
      PetscCall(MatDCSRDefragment(c->Ad));
      PetscCall(MatGetNonzeroState(c->Ad, &s1));
      PetscCall(GKCheck((PetscBool)(s0 == s1), "MatDCSRDefragment() leaves nonzerostate unchanged"));
      PetscCall(MatDCSRGetInfo(c->Ad, &K, &maxseg, &used, &cap));
      PetscCall(GKCheck((PetscBool)(maxseg <= 1), "after MatDCSRDefragment() every row has at most one segment"));
      c->want_base = PETSC_TRUE;
      PetscCall(Compare(c, "defragmented"));
      if (c->expect_base >= 0) { /* a few new entries on the device: the CSR base stays, its fix-up adds them */
        const PetscInt b = c->batch;
        c->batch = PetscMax(1, b / 16);
        PetscCall(Round(c, PETSC_TRUE, ADD_VALUES, "device ADD after the defragmentation"));
        PetscCall(Compare(c, "the defragmented layout and the rows added since"));
        /* more small rounds: rows with two and with three or more pieces outside the base (the fix-up's table records
           two; more go to a whole warp), then one row with a long tail */
        PetscCall(Round(c, PETSC_TRUE, ADD_VALUES, "second device ADD after the defragmentation"));
        PetscCall(Round(c, PETSC_TRUE, INSERT_VALUES, "third device round (INSERT) after the defragmentation"));
        PetscCall(Compare(c, "the defragmented layout and three rounds since"));
        c->batch = b;
        for (PetscInt sh = 1; sh <= 3; sh++) {
          PetscCall(HotRowRound(c, PetscMin(12, c->N / 7), sh));
          PetscCall(Compare(c, "the defragmented layout and one more piece in a row"));
        }
        PetscCall(HotRowRound(c, PetscMin(200, c->N / 7), 4));
        PetscCall(Compare(c, "the defragmented layout and a row with a long tail"));
      }
      c->want_base = PETSC_FALSE;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok: defragmented on the device: at most %" PetscInt_FMT " segment per row, %" PetscCount_FMT " of %" PetscCount_FMT " slots used\n", maxseg, used, cap));
    }

    /* scale and shift on the device (the shift's diagonal batch hits the stored diagonal) */
    PetscCall(MatScale(c->Ad, 0.5));
    PetscCall(MatScale(c->Ah, 0.5));
    PetscCall(MatScale(c->Aa, 0.5));
    PetscCall(MatShift(c->Ad, 1.25));
    PetscCall(MatShift(c->Ah, 1.25));
    PetscCall(MatShift(c->Aa, 1.25));
    c->want_base = PETSC_TRUE;
    PetscCall(Compare(c, "after MatScale and MatShift"));
    c->want_base = PETSC_FALSE;

    /* bound to the CPU: a host round and products on the host code, then back */
    PetscCall(MatBindToCPU(c->Ad, PETSC_TRUE));
    {
      Mat       D;
      PetscBool b, bd;
      PetscCall(MatBoundToCPU(c->Ad, &b));
      PetscCall(MatGetDiagonalBlock(c->Ad, &D));
      PetscCall(MatBoundToCPU(D, &bd));
      PetscCall(GKCheck((PetscBool)(b && bd), "MatBindToCPU(A, PETSC_TRUE) binds A and its diagonal block"));
    }
    PetscCall(Round(c, PETSC_FALSE, ADD_VALUES, "bound to the CPU: host ADD"));
    PetscCall(MatBindToCPU(c->Ad, PETSC_FALSE));
    PetscCall(Round(c, PETSC_TRUE, ADD_VALUES, "unbound: device ADD"));

    if (c->size == 1) {
      PetscCall(TestBadInput(c));
      PetscCall(TestNewNonzeroOptions(c));
      if (memtest) PetscCall(TestMemory(c, memn, memb, memleave));
    }

    /* zero entries keeps the pattern */
    PetscCall(MatZeroEntries(c->Ad));
    PetscCall(MatZeroEntries(c->Ah));
    PetscCall(MatZeroEntries(c->Aa));
    PetscCall(Compare(c, "after MatZeroEntries"));
    for (int k = 0; k < 3; k++) PetscCall(MatDestroy(ms[k]));
  }
  if (grid > 0) PetscCall(TestSolve(c, grid));
  PetscCall(PetscRandomDestroy(&c->rnd));
  if (c->expect_rows) { /* both states must have been seen: the rows kernel ran, and fell back where rows were fragmented */
    PetscInt l[2] = {c->nrows_runs, c->nfallback_runs}, g[2];
    PetscCall(MPIU_Allreduce(l, g, 2, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  -expect_rows_kernel: %" PetscInt_FMT " products checked on the rows kernel, %" PetscInt_FMT " on its fallback (fused)\n", g[0], g[1]));
    /* at least the "defragmented" and "after MatScale and MatShift" comparisons (MatMult and MatMultAdd) on every rank */
    PetscCall(GKCheck((PetscBool)(g[0] > 0), "-expect_rows_kernel: some product ran the rows kernel"));
    if (expect_fallback) PetscCall(GKCheck((PetscBool)(g[0] >= 4 * (PetscInt)c->size), "-expect_rows_kernel: the defragmented products of every rank ran the rows kernel"));
    if (expect_fallback) PetscCall(GKCheck((PetscBool)(g[1] > 0), "-expect_rows_fallback: some product fell back on the fused kernel"));
  }
  if (c->expect_base == 1) { /* the defragmented, the marked-rows and the scaled comparisons, MatMult and MatMultAdd, every rank */
    PetscInt g;
    PetscCall(MPIU_Allreduce(&c->nbase_runs, &g, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  -expect_csr_base: %" PetscInt_FMT " products checked on the CSR base\n", g));
    PetscCall(GKCheck((PetscBool)(g >= 6 * (PetscInt)c->size), "-expect_csr_base: the products of every rank ran on the CSR base"));
    if (c->expect_baserows >= 1) {
      PetscCall(MPIU_Allreduce(&c->nbaserows_runs, &g, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  -expect_csr_base_product: %" PetscInt_FMT " products on the expected base product\n", g));
      PetscCall(GKCheck((PetscBool)(g >= 6 * (PetscInt)c->size), "-expect_csr_base_product: the base products of every rank ran the expected product"));
    }
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dcsr_cuda: all %" PetscInt_FMT " checks passed on %d rank(s)\n", c->nchecks, (int)c->size));
#endif
  PetscCall(PetscFinalize());
  return 0;
}
