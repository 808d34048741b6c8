static const char help[] = "MATAMB against MATAIJ built from the same entries, operation by operation.\n"
                           "  -f file.mtx[.gz]        a Matrix Market matrix (real/integer, general/symmetric), or\n"
                           "  -gen random|band|mixed  a generated one: -m rows -n cols -nzrow k -seed s\n"
                           "       -empty_rows p -empty_cols p   percent of rows/columns left empty\n"
                           "  -prealloc xaij|seqmpi|none         how the matrices are preallocated\n"
                           "  -pcs none,jacobi,...    GMRES solves with these PCs (square matrices): same iterations as AIJ\n"
                           "  -skip_solve -skip_products -tol t  (default 1e-11)\n"
                           "AMB options (-mat_amb_b, -mat_amb_segment_width, ...) reach the AMB matrices through MatSetFromOptions().\n";

/*
   Every rank generates or reads all entries (the matrices are small) and keeps its rows, so any number of ranks
   builds the same matrix. The AIJ reference and the AMB matrix receive the same MatSetValues() calls.
*/
#include <petscksp.h>
#include <unistd.h>
#include "gktest.h"

typedef struct {
  PetscInt     M, N, nz;
  PetscInt    *ri, *ci;
  PetscScalar *va;
} Triplets;

static PetscReal tol = 1e-11;
static PetscBool inodes = PETSC_FALSE, bitwise = PETSC_TRUE, checkbits = PETSC_FALSE; /* without inodes AIJ sums each row sequentially: AMB's host order */

/* ---------------------------------------------------------------- input ---------------------------------------- */
static PetscErrorCode ReadMatrixMarket(const char *path, Triplets *T)
{
  FILE     *fp;
  char      line[1024], cmd[PETSC_MAX_PATH_LEN + 32], field[64] = "", sym[64] = "";
  PetscBool gz, symmetric;
  size_t    len;
  long      mm, nn, kk;

  PetscFunctionBegin;
  PetscCall(PetscStrlen(path, &len));
  gz = (PetscBool)(len > 3 && !strcmp(path + len - 3, ".gz"));
  if (gz) {
    PetscCall(PetscSNPrintf(cmd, sizeof(cmd), "gzip -dc '%s'", path));
    fp = popen(cmd, "r");
  } else fp = fopen(path, "r");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open %s", path);
  PetscCheck(fgets(line, sizeof(line), fp), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s is empty", path);
  PetscCheck(sscanf(line, "%%%%MatrixMarket matrix coordinate %63s %63s", field, sym) == 2, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: not a Matrix Market coordinate file", path);
  PetscCheck(!strcmp(field, "real") || !strcmp(field, "integer"), PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: field %s", path, field);
  symmetric = (PetscBool)!strcmp(sym, "symmetric");
  while (fgets(line, sizeof(line), fp) && line[0] == '%') { }
  PetscCheck(sscanf(line, "%ld %ld %ld", &mm, &nn, &kk) == 3, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: bad size line", path);
  T->M  = (PetscInt)mm;
  T->N  = (PetscInt)nn;
  T->nz = (PetscInt)kk;
  PetscCall(PetscMalloc3(2 * T->nz, &T->ri, 2 * T->nz, &T->ci, 2 * T->nz, &T->va));
  for (PetscInt e = 0; e < T->nz; e++) {
    long   i, j;
    double v;
    PetscCheck(fgets(line, sizeof(line), fp) && sscanf(line, "%ld %ld %lf", &i, &j, &v) == 3, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: entry %" PetscInt_FMT, path, e);
    T->ri[e] = (PetscInt)i - 1;
    T->ci[e] = (PetscInt)j - 1;
    T->va[e] = v;
  }
  if (gz) pclose(fp);
  else fclose(fp);
  if (symmetric) {
    PetscInt n2 = T->nz;
    for (PetscInt e = 0; e < T->nz; e++)
      if (T->ri[e] != T->ci[e]) {
        T->ri[n2]   = T->ci[e];
        T->ci[n2]   = T->ri[e];
        T->va[n2++] = T->va[e];
      }
    T->nz = n2;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static unsigned long long rng_state;
static unsigned long long Rand(void)
{
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return rng_state >> 17;
}
static double Rand01(void)
{
  return (double)(Rand() % 1000003) / 1000003.0;
}

/* random: uniform columns; band: runs of consecutive columns (blocking); mixed: both plus a few long rows. Square
   ones get a dominant diagonal (the solves) */
static PetscErrorCode Generate(const char *kind, PetscInt M, PetscInt N, PetscInt nzrow, PetscInt seed, PetscInt emptyrows, PetscInt emptycols, Triplets *T)
{
  PetscInt  cap = M * (3 * nzrow + 2) + 8 * N + 64, nz = 0;
  PetscBool band = (PetscBool)!strcmp(kind, "band"), mixed = (PetscBool)!strcmp(kind, "mixed");
  char     *colempty;

  PetscFunctionBegin;
  PetscCheck(!strcmp(kind, "random") || band || mixed, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "-gen random|band|mixed");
  rng_state = 12345 + 7919ULL * (unsigned long long)seed;
  T->M      = M;
  T->N      = N;
  PetscCall(PetscMalloc3(cap, &T->ri, cap, &T->ci, cap, &T->va));
  PetscCall(PetscCalloc1(N, &colempty));
  for (PetscInt j = 0; j < N; j++) colempty[j] = (char)((PetscInt)(Rand() % 100) < emptycols);
  for (PetscInt i = 0; i < M; i++) {
    PetscInt k = nzrow;
    PetscReal rowsum = 0;
    if ((PetscInt)(Rand() % 100) < emptyrows) continue;
    if (mixed && Rand() % 50 == 0) k = PetscMin(N, 10 * nzrow); /* a long row */
    k = PetscMax(1, (PetscInt)(k * (0.5 + Rand01())));
    for (PetscInt e = 0; e < k && nz < cap - 2; e++) {
      PetscInt j;
      if (band || (mixed && e % 2)) j = (i * N / PetscMax(M, 1) + e - k / 2 + N) % N; /* consecutive run near the diagonal */
      else j = (PetscInt)(Rand() % (unsigned long long)N);
      if (colempty[j] && !(M == N && j == i)) continue;
      T->ri[nz]   = i;
      T->ci[nz]   = j;
      T->va[nz]   = (PetscScalar)(2.0 * Rand01() - 1.0);
      rowsum     += PetscAbsScalar(T->va[nz]);
      nz++;
    }
    if (M == N && nz < cap) { /* dominant diagonal */
      T->ri[nz] = i;
      T->ci[nz] = i;
      T->va[nz] = (PetscScalar)(rowsum + 1.0);
      nz++;
    }
  }
  T->nz = nz;
  PetscCall(PetscFree(colempty));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a matrix of type 'type' with the triplets' rows of this rank, preallocated as asked ('ADD_VALUES' merges duplicates) */
static PetscErrorCode Build(const Triplets *T, MatType type, const char *prealloc, PetscBool fromoptions, Mat *A)
{
  PetscInt    rstart, rend, cstart, cend, *dnz, *onz, m, n;
  PetscLayout rmap, cmap;

  PetscFunctionBegin;
  PetscCall(PetscLayoutCreate(PETSC_COMM_WORLD, &rmap));
  PetscCall(PetscLayoutSetSize(rmap, T->M));
  PetscCall(PetscLayoutSetUp(rmap));
  PetscCall(PetscLayoutGetRange(rmap, &rstart, &rend));
  PetscCall(PetscLayoutCreate(PETSC_COMM_WORLD, &cmap));
  PetscCall(PetscLayoutSetSize(cmap, T->N));
  PetscCall(PetscLayoutSetUp(cmap));
  PetscCall(PetscLayoutGetRange(cmap, &cstart, &cend));
  PetscCall(PetscLayoutDestroy(&rmap));
  PetscCall(PetscLayoutDestroy(&cmap));
  m = rend - rstart;
  n = cend - cstart;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, m, n, T->M, T->N));
  PetscCall(MatSetType(*A, type));
  if (fromoptions) PetscCall(MatSetFromOptions(*A));
  PetscCall(PetscCalloc2(m, &dnz, m, &onz));
  for (PetscInt e = 0; e < T->nz; e++)
    if (T->ri[e] >= rstart && T->ri[e] < rend) {
      if (T->ci[e] >= cstart && T->ci[e] < cend) dnz[T->ri[e] - rstart]++;
      else onz[T->ri[e] - rstart]++;
    }
  for (PetscInt i = 0; i < m; i++) { /* counts with duplicates are upper bounds: fine */
    dnz[i] = PetscMin(dnz[i], n);
    onz[i] = PetscMin(onz[i], T->N - n);
  }
  if (!strcmp(prealloc, "xaij")) PetscCall(MatXAIJSetPreallocation(*A, 1, dnz, onz, NULL, NULL));
  else if (!strcmp(prealloc, "seqmpi")) {
    PetscCall(MatSeqAIJSetPreallocation(*A, 0, dnz));
    PetscCall(MatMPIAIJSetPreallocation(*A, 0, dnz, 0, onz));
  } else {
    PetscCheck(!strcmp(prealloc, "none"), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-prealloc xaij|seqmpi|none");
    PetscCall(MatSetUp(*A));
    PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  }
  PetscCall(PetscFree2(dnz, onz));
  if (!inodes) PetscCall(MatSetOption(*A, MAT_USE_INODES, PETSC_FALSE));
  for (PetscInt e = 0; e < T->nz; e++)
    if (T->ri[e] >= rstart && T->ri[e] < rend) PetscCall(MatSetValue(*A, T->ri[e], T->ci[e], T->va[e], ADD_VALUES));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- checks --------------------------------------- */
static PetscErrorCode CheckType(Mat A, PetscBool wantamb, const char *what)
{
  PetscBool   isamb, isaij;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, size > 1 ? MATMPIAMB : MATSEQAMB, &isamb));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, size > 1 ? MATMPIAIJ : MATSEQAIJ, &isaij));
  PetscCheck(wantamb ? isamb : isaij, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: type is not %s", what, wantamb ? "AMB" : "plain AIJ");
  if (wantamb && size > 1) { /* both blocks AMB */
    Mat       Ad, Ao;
    PetscBool b1, b2;
    PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
    PetscCall(PetscObjectTypeCompare((PetscObject)Ad, MATSEQAMB, &b1));
    PetscCall(PetscObjectTypeCompare((PetscObject)Ao, MATSEQAMB, &b2));
    PetscCheck(b1 && b2, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the blocks are not both %s", what, MATSEQAMB);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y and yr equal bit for bit (-bitwise: the host AMB order is AIJ's sequential CSR order) */
static PetscErrorCode CheckBitwise(Vec y, Vec yr, const char *what)
{
  const PetscScalar *a, *b;
  PetscInt           n, bad = -1;

  PetscFunctionBegin;
  if (!bitwise || !checkbits) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecGetLocalSize(y, &n));
  PetscCall(VecGetArrayRead(y, &a));
  PetscCall(VecGetArrayRead(yr, &b));
  for (PetscInt i = 0; i < n && bad < 0; i++)
    if (a[i] != b[i]) bad = i;
  PetscCheck(bad < 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: not bitwise equal to AIJ at local row %" PetscInt_FMT ": %.17g vs %.17g", what, bad, (double)PetscRealPart(a[bad]), (double)PetscRealPart(b[bad]));
  PetscCall(VecRestoreArrayRead(y, &a));
  PetscCall(VecRestoreArrayRead(yr, &b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* all four products of A against those of R with the same random vectors */
static PetscErrorCode CheckProducts(Mat A, Mat R, const char *what)
{
  Vec         x, y, z, yr, xt, yt, zt, ytr;
  PetscRandom rnd;
  char        msg[256];

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 17));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(MatCreateVecs(R, &x, &y));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecDuplicate(y, &yr));
  PetscCall(VecDuplicate(y, &xt));
  PetscCall(VecDuplicate(x, &yt));
  PetscCall(VecDuplicate(x, &zt));
  PetscCall(VecDuplicate(x, &ytr));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSetRandom(z, rnd));
  PetscCall(VecSetRandom(xt, rnd));
  PetscCall(VecSetRandom(zt, rnd));
  PetscCall(MatMult(A, x, y));
  PetscCall(MatMult(R, x, yr));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: MatMult", what));
  PetscCall(GKCheckVecClose(y, yr, tol, msg));
  PetscCall(CheckBitwise(y, yr, msg));
  PetscCall(MatMultAdd(A, x, z, y));
  PetscCall(MatMultAdd(R, x, z, yr));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: MatMultAdd", what));
  PetscCall(GKCheckVecClose(y, yr, tol, msg));
  PetscCall(CheckBitwise(y, yr, msg));
  PetscCall(VecCopy(z, y));
  PetscCall(VecCopy(z, yr));
  PetscCall(MatMultAdd(A, x, y, y));
  PetscCall(MatMultAdd(R, x, yr, yr));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: MatMultAdd in place", what));
  PetscCall(GKCheckVecClose(y, yr, tol, msg));
  PetscCall(MatMultTranspose(A, xt, yt));
  PetscCall(MatMultTranspose(R, xt, ytr));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: MatMultTranspose", what));
  PetscCall(GKCheckVecClose(yt, ytr, tol, msg));
  PetscCall(MatMultTransposeAdd(A, xt, zt, yt));
  PetscCall(MatMultTransposeAdd(R, xt, zt, ytr));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: MatMultTransposeAdd", what));
  PetscCall(GKCheckVecClose(yt, ytr, tol, msg));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&yr));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&yt));
  PetscCall(VecDestroy(&zt));
  PetscCall(VecDestroy(&ytr));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the same entries, row by row, through MatGetRow() */
static PetscErrorCode CheckRows(Mat A, Mat R, const char *what)
{
  PetscInt rstart, rend;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt           na, nr;
    const PetscInt    *ca, *cr;
    const PetscScalar *va, *vr;
    PetscBool          same;
    PetscCall(MatGetRow(A, i, &na, &ca, &va));
    PetscCall(MatGetRow(R, i, &nr, &cr, &vr));
    PetscCheck(na == nr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: MatGetRow %" PetscInt_FMT ": %" PetscInt_FMT " entries, AIJ %" PetscInt_FMT, what, i, na, nr);
    PetscCall(PetscArraycmp(ca, cr, na, &same));
    PetscCheck(same, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: MatGetRow %" PetscInt_FMT ": columns differ", what, i);
    for (PetscInt k = 0; k < na; k++) PetscCheck(PetscAbsScalar(va[k] - vr[k]) <= tol * PetscMax(1.0, PetscAbsScalar(vr[k])), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: MatGetRow %" PetscInt_FMT ": values differ", what, i);
    PetscCall(MatRestoreRow(A, i, &na, &ca, &va));
    PetscCall(MatRestoreRow(R, i, &nr, &cr, &vr));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckSame(Mat A, Mat R, const char *what)
{
  PetscFunctionBegin;
  PetscCall(CheckProducts(A, R, what));
  PetscCall(CheckRows(A, R, what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode EventCount(const char *name, PetscInt *count)
{
  PetscLogEvent ev;

  PetscFunctionBegin;
  PetscCall(PetscLogEventGetId(name, &ev));
  PetscCall(GKLogEventCount(ev, count));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* set one AMB option on A (through MatSetFromOptions), or clear it with value NULL */
static PetscErrorCode SetAMBOption(Mat A, const char *name, const char *value)
{
  PetscFunctionBegin;
  if (value) PetscCall(PetscOptionsSetValue(NULL, name, value));
  else PetscCall(PetscOptionsClearValue(NULL, name));
  PetscCall(MatSetFromOptions(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A x through the host AMB kernel and through AIJ's CSR kernel inside the same AMB matrix */
static PetscErrorCode CheckHostKernels(Mat A, const char *what)
{
  Vec         x, y1, y2;
  PetscRandom rnd;
  PetscInt    n0, n1;
  PetscBool   fb;
  char        msg[256];

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(MatCreateVecs(A, &x, &y1));
  PetscCall(VecDuplicate(y1, &y2));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(MatAMBGetInfo(A, NULL, NULL, &fb, NULL));
  PetscCall(EventCount("AMBMult", &n0));
  PetscCall(MatMult(A, x, y1));
  PetscCall(EventCount("AMBMult", &n1));
  if (!fb) PetscCall(GKCheck((PetscBool)(n1 > n0), "the AMB kernel ran (AMBMult counted)"));
  PetscCall(SetAMBOption(A, "-mat_amb_host_kernel", "csr"));
  PetscCall(EventCount("AMBMult", &n0));
  PetscCall(MatMult(A, x, y2));
  PetscCall(EventCount("AMBMult", &n1));
  PetscCall(GKCheck((PetscBool)(n1 == n0), "-mat_amb_host_kernel csr: the AMB kernel did not run"));
  PetscCall(SetAMBOption(A, "-mat_amb_host_kernel", NULL));
  PetscCall(SetAMBOption(A, "-mat_amb_host_kernel", "amb"));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s: host kernel amb vs csr", what));
  PetscCall(GKCheckVecClose(y1, y2, tol, msg));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y1));
  PetscCall(VecDestroy(&y2));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Inf/NaN in x and in A's values: y has Inf/NaN exactly where AIJ's y has them */
static PetscErrorCode CheckNonFinite(Mat A, Mat R)
{
  Vec                x, y, yr;
  PetscInt           rstart, rend, cstart, cend, N;
  const PetscScalar *a, *b;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(R, &x, &y));
  PetscCall(VecDuplicate(y, &yr));
  PetscCall(MatGetSize(R, NULL, &N));
  PetscCall(VecSet(x, 1.0));
  PetscCall(VecSetValue(x, N / 2, (PetscScalar)INFINITY, INSERT_VALUES));
  if (N > 2) PetscCall(VecSetValue(x, N / 3, (PetscScalar)NAN, INSERT_VALUES)); /* NaN */
  PetscCall(VecAssemblyBegin(x));
  PetscCall(VecAssemblyEnd(x));
  for (PetscInt pass = 0; pass < 2; pass++) {
    if (pass == 1) { /* a NaN value in A (an existing entry of the first local row with entries) and finite x */
      PetscInt           i, nc, col = -1;
      const PetscInt    *cols;
      const PetscScalar *vals;
      PetscCall(VecSet(x, 1.0));
      PetscCall(MatGetOwnershipRange(R, &rstart, &rend));
      for (i = rstart; i < rend && col < 0; i++) {
        PetscCall(MatGetRow(R, i, &nc, &cols, &vals));
        if (nc) col = cols[nc - 1];
        PetscCall(MatRestoreRow(R, i, &nc, &cols, &vals));
        if (col >= 0) break;
      }
      if (col >= 0) {
        PetscCall(MatSetValue(A, i, col, (PetscScalar)NAN, INSERT_VALUES));
        PetscCall(MatSetValue(R, i, col, (PetscScalar)NAN, INSERT_VALUES));
      }
      PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyBegin(R, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(R, MAT_FINAL_ASSEMBLY));
    }
    PetscCall(MatMult(A, x, y));
    PetscCall(MatMult(R, x, yr));
    PetscCall(VecGetOwnershipRange(y, &cstart, &cend));
    PetscCall(VecGetArrayRead(y, &a));
    PetscCall(VecGetArrayRead(yr, &b));
    for (PetscInt i = 0; i < cend - cstart; i++) {
      PetscCheck((PetscBool)PetscIsNanScalar(a[i]) == (PetscBool)PetscIsNanScalar(b[i]) && (PetscBool)PetscIsInfScalar(a[i]) == (PetscBool)PetscIsInfScalar(b[i]), PETSC_COMM_SELF, PETSC_ERR_PLIB, "non-finite pass %" PetscInt_FMT ": row %" PetscInt_FMT ": AMB %g, AIJ %g", pass, cstart + i, (double)PetscRealPart(a[i]), (double)PetscRealPart(b[i]));
      if (!PetscIsInfOrNanScalar(b[i])) PetscCheck(PetscAbsScalar(a[i] - b[i]) <= 1e-9 * PetscMax(1.0, PetscAbsScalar(b[i])), PETSC_COMM_SELF, PETSC_ERR_PLIB, "non-finite pass %" PetscInt_FMT ": row %" PetscInt_FMT " differs", pass, cstart + i);
    }
    PetscCall(VecRestoreArrayRead(y, &a));
    PetscCall(VecRestoreArrayRead(yr, &b));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* new values, same pattern: the layout is refreshed (AMBRefresh), not rebuilt (AMBBuild); then a new entry: rebuilt */
static PetscErrorCode CheckRefresh(Mat A, Mat R, PetscBool newentry)
{
  PetscInt    b0, b1, r0, r1, rstart, rend;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(CheckProducts(A, R, "before refresh")); /* layout up to date */
  PetscCall(EventCount("AMBBuild", &b0));
  PetscCall(EventCount("AMBRefresh", &r0));
  PetscCall(MatGetOwnershipRange(R, &rstart, &rend));
  { /* every existing entry gets a new value: read all rows of R first, then set both */
    PetscInt    *ptr, *cj, tot = 0;
    PetscScalar *cv;
    PetscCall(PetscMalloc1(rend - rstart + 1, &ptr));
    ptr[0] = 0;
    for (PetscInt i = rstart; i < rend; i++) {
      PetscInt nc;
      PetscCall(MatGetRow(R, i, &nc, NULL, NULL));
      ptr[i - rstart + 1] = ptr[i - rstart] + nc;
      PetscCall(MatRestoreRow(R, i, &nc, NULL, NULL));
    }
    tot = ptr[rend - rstart];
    PetscCall(PetscMalloc2(tot, &cj, tot, &cv));
    for (PetscInt i = rstart; i < rend; i++) {
      PetscInt           nc;
      const PetscInt    *cols;
      const PetscScalar *vals;
      PetscCall(MatGetRow(R, i, &nc, &cols, &vals));
      for (PetscInt k = 0; k < nc; k++) {
        cj[ptr[i - rstart] + k] = cols[k];
        cv[ptr[i - rstart] + k] = 0.5 * vals[k] + 0.001 * (PetscScalar)((i + cols[k]) % 7);
      }
      PetscCall(MatRestoreRow(R, i, &nc, &cols, &vals));
    }
    for (PetscInt i = rstart; i < rend; i++) {
      PetscInt nc = ptr[i - rstart + 1] - ptr[i - rstart];
      PetscCall(MatSetValues(A, 1, &i, nc, cj + ptr[i - rstart], cv + ptr[i - rstart], INSERT_VALUES));
      PetscCall(MatSetValues(R, 1, &i, nc, cj + ptr[i - rstart], cv + ptr[i - rstart], INSERT_VALUES));
    }
    PetscCall(PetscFree2(cj, cv));
    PetscCall(PetscFree(ptr));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(R, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(R, MAT_FINAL_ASSEMBLY));
  PetscCall(CheckRows(A, R, "after a values-only change"));
  checkbits = PETSC_TRUE;
  PetscCall(CheckProducts(A, R, "after a values-only change"));
  checkbits = PETSC_FALSE;
  PetscCall(EventCount("AMBBuild", &b1));
  PetscCall(EventCount("AMBRefresh", &r1));
  PetscCall(GKCheck((PetscBool)(b1 == b0), "values-only change: the layout was not rebuilt"));
  PetscCall(GKCheck((PetscBool)(r1 > r0), "values-only change: the layout values were refreshed"));
  if (newentry) { /* a new nonzero: the structure changes, the layout is rebuilt */
    PetscInt M, N;
    MatInfo  info0, info1;
    PetscCall(MatGetSize(R, &M, &N));
    PetscCall(MatGetInfo(A, MAT_LOCAL, &info0));
    PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MatSetOption(R, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    for (PetscInt i = rstart; i < rend; i += 7) {
      PetscInt j = (i * 13 + 5) % N;
      PetscCall(MatSetValue(A, i, j, 0.25, ADD_VALUES));
      PetscCall(MatSetValue(R, i, j, 0.25, ADD_VALUES));
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyBegin(R, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(R, MAT_FINAL_ASSEMBLY));
    PetscCall(EventCount("AMBBuild", &b0));
    PetscCall(CheckSame(A, R, "after new nonzeros"));
    PetscCall(EventCount("AMBBuild", &b1));
    PetscCall(MatGetInfo(A, MAT_LOCAL, &info1));
    if (info1.nz_used > info0.nz_used) PetscCall(GKCheck((PetscBool)(b1 > b0), "new nonzeros: the layout was rebuilt"));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatConvert both ways in all three reuse modes */
static PetscErrorCode CheckConvert(Mat A, Mat R)
{
  Mat B, C, D;

  PetscFunctionBegin;
  /* aij -> amb */
  PetscCall(MatConvert(R, MATAMB, MAT_INITIAL_MATRIX, &B));
  PetscCall(CheckType(B, PETSC_TRUE, "MatConvert(aij, amb, initial)"));
  PetscCall(CheckSame(B, R, "MatConvert(aij, amb, initial)"));
  {
    Mat R2;
    PetscCall(MatDuplicate(R, MAT_COPY_VALUES, &R2));
    PetscCall(MatScale(R2, 2.0));
    PetscCall(MatConvert(R2, MATAMB, MAT_REUSE_MATRIX, &B));
    PetscCall(CheckType(B, PETSC_TRUE, "MatConvert(aij, amb, reuse)"));
    PetscCall(CheckSame(B, R2, "MatConvert(aij, amb, reuse)"));
    PetscCall(MatDestroy(&R2));
  }
  PetscCall(MatDuplicate(R, MAT_COPY_VALUES, &C));
  PetscCall(MatConvert(C, MATAMB, MAT_INPLACE_MATRIX, &C));
  PetscCall(CheckType(C, PETSC_TRUE, "MatConvert(aij, amb, inplace)"));
  PetscCall(CheckSame(C, R, "MatConvert(aij, amb, inplace)"));
  /* the concrete names too */
  {
    PetscMPIInt size;
    Mat         E;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCall(MatConvert(R, size > 1 ? MATMPIAMB : MATSEQAMB, MAT_INITIAL_MATRIX, &E));
    PetscCall(CheckType(E, PETSC_TRUE, "MatConvert(aij, seqaijamb/mpiaijamb)"));
    PetscCall(CheckProducts(E, R, "MatConvert(aij, seqaijamb/mpiaijamb)"));
    PetscCall(MatDestroy(&E));
  }
  /* amb -> aij */
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &D));
  PetscCall(CheckType(D, PETSC_FALSE, "MatConvert(amb, aij, initial)"));
  PetscCall(CheckSame(D, R, "MatConvert(amb, aij, initial)"));
  {
    Mat A3; /* new values into the converted matrix: 3 A, then scaled back */
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &A3));
    PetscCall(MatScale(A3, 3.0));
    PetscCall(MatConvert(A3, MATAIJ, MAT_REUSE_MATRIX, &D));
    PetscCall(MatDestroy(&A3));
    PetscCall(MatScale(D, 1.0 / 3.0));
  }
  PetscCall(CheckType(D, PETSC_FALSE, "MatConvert(amb, aij, reuse)"));
  PetscCall(CheckSame(D, R, "MatConvert(amb, aij, reuse)"));
  PetscCall(MatConvert(C, MATAIJ, MAT_INPLACE_MATRIX, &C));
  PetscCall(CheckType(C, PETSC_FALSE, "MatConvert(amb, aij, inplace)"));
  PetscCall(CheckSame(C, R, "MatConvert(amb, aij, inplace)"));
  /* and back again, in place */
  PetscCall(MatConvert(C, MATAMB, MAT_INPLACE_MATRIX, &C));
  PetscCall(CheckType(C, PETSC_TRUE, "MatConvert(aij, amb, inplace) again"));
  PetscCall(CheckSame(C, R, "MatConvert back and forth"));
  /* MAT_REUSE_MATRIX from a matrix with another nonzero pattern: the target is rebuilt (PetscInfo says so) */
  {
    Mat      X;
    Triplets T2;
    PetscInt M, N;
    PetscCall(MatGetSize(R, &M, &N));
    PetscCall(Generate("random", M, N, 3, 7, 0, 0, &T2));
    PetscCall(Build(&T2, MATAIJ, "xaij", PETSC_FALSE, &X));
    PetscCall(PetscFree3(T2.ri, T2.ci, T2.va));
    PetscCall(MatConvert(X, MATAMB, MAT_REUSE_MATRIX, &B));
    PetscCall(CheckType(B, PETSC_TRUE, "MatConvert(aij, amb, reuse) with another pattern"));
    PetscCall(CheckSame(B, X, "MatConvert(aij, amb, reuse) with another pattern"));
    PetscCall(MatConvert(B, MATAIJ, MAT_REUSE_MATRIX, &D));
    PetscCall(CheckType(D, PETSC_FALSE, "MatConvert(amb, aij, reuse) with another pattern"));
    PetscCall(CheckSame(D, X, "MatConvert(amb, aij, reuse) with another pattern"));
    PetscCall(MatDestroy(&X));
  }
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&D));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckAlgebra(Mat A0, Mat R0, PetscBool square, const Triplets *T, const char *prealloc)
{
  Mat      A, R, X, XR, B;
  Vec      d, dr;
  PetscInt rstart, rend, nz = 0, *rows;

  PetscFunctionBegin;
  PetscCall(MatDuplicate(A0, MAT_COPY_VALUES, &A));
  PetscCall(MatDuplicate(R0, MAT_COPY_VALUES, &R));
  PetscCall(CheckType(A, PETSC_TRUE, "MatDuplicate"));
  PetscCall(CheckSame(A, R, "MatDuplicate"));
  /* MatCopy into a matrix of the same pattern, and with a different one */
  PetscCall(MatDuplicate(A0, MAT_DO_NOT_COPY_VALUES, &B));
  PetscCall(MatCopy(A, B, SAME_NONZERO_PATTERN));
  PetscCall(CheckSame(B, R, "MatCopy same pattern"));
  PetscCall(MatZeroEntries(B));
  PetscCall(MatCopy(A, B, DIFFERENT_NONZERO_PATTERN));
  PetscCall(CheckSame(B, R, "MatCopy different pattern"));
  PetscCall(MatDestroy(&B));
  /* diagonal */
  if (square) {
    PetscCall(MatCreateVecs(R, &d, &dr));
    PetscCall(MatGetDiagonal(A, d));
    PetscCall(MatGetDiagonal(R, dr));
    PetscCall(GKCheckVecClose(d, dr, tol, "MatGetDiagonal"));
    PetscCall(VecDestroy(&d));
    PetscCall(VecDestroy(&dr));
  }
  /* scale, shift, AXPY (same and different pattern); a missing diagonal entry is a new nonzero for shift and zero rows */
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(R, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatScale(A, -1.5));
  PetscCall(MatScale(R, -1.5));
  PetscCall(CheckSame(A, R, "MatScale"));
  if (square) {
    PetscCall(MatShift(A, 2.25));
    PetscCall(MatShift(R, 2.25));
    PetscCall(CheckSame(A, R, "MatShift"));
  }
  PetscCall(MatAXPY(A, 0.5, R0, SUBSET_NONZERO_PATTERN));
  PetscCall(MatAXPY(R, 0.5, R0, SUBSET_NONZERO_PATTERN));
  PetscCall(CheckSame(A, R, "MatAXPY subset pattern"));
  {
    Triplets T2;
    PetscCall(Generate("random", T->M, T->N, 2, 99, 0, 0, &T2));
    PetscCall(Build(&T2, MATAIJ, "xaij", PETSC_FALSE, &XR));
    PetscCall(Build(&T2, MATAMB, "xaij", PETSC_TRUE, &X));
    PetscCall(PetscFree3(T2.ri, T2.ci, T2.va));
  }
  PetscCall(MatAXPY(A, -0.75, X, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatAXPY(R, -0.75, XR, DIFFERENT_NONZERO_PATTERN));
  PetscCall(CheckType(A, PETSC_TRUE, "MatAXPY different pattern"));
  PetscCall(CheckSame(A, R, "MatAXPY different pattern"));
  /* zero rows, zero rows and columns */
  PetscCall(MatGetOwnershipRange(R, &rstart, &rend));
  PetscCall(PetscMalloc1(rend - rstart, &rows));
  for (PetscInt i = rstart; i < rend; i++)
    if (i % 5 == 1) rows[nz++] = i;
  PetscCall(MatZeroRows(A, nz, rows, square ? 3.0 : 0.0, NULL, NULL));
  PetscCall(MatZeroRows(R, nz, rows, square ? 3.0 : 0.0, NULL, NULL));
  PetscCall(CheckSame(A, R, "MatZeroRows"));
  if (square) {
    nz = 0;
    for (PetscInt i = rstart; i < rend; i++)
      if (i % 7 == 3) rows[nz++] = i;
    PetscCall(MatZeroRowsColumns(A, nz, rows, 1.0, NULL, NULL));
    PetscCall(MatZeroRowsColumns(R, nz, rows, 1.0, NULL, NULL));
    PetscCall(CheckSame(A, R, "MatZeroRowsColumns"));
  }
  PetscCall(PetscFree(rows));
  /* transpose */
  {
    Mat At, Rt;
    PetscCall(MatTranspose(A, MAT_INITIAL_MATRIX, &At));
    PetscCall(MatTranspose(R, MAT_INITIAL_MATRIX, &Rt));
    PetscCall(CheckSame(At, Rt, "MatTranspose"));
    /* products: A * A^T (amb x amb, amb x aij), PtAP */
    {
      Mat C, Cr;
      PetscCall(MatMatMult(A, At, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C));
      PetscCall(MatMatMult(R, Rt, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &Cr));
      PetscCall(CheckProducts(C, Cr, "MatMatMult amb x amb"));
      PetscCall(MatMatMult(A, At, MAT_REUSE_MATRIX, PETSC_DETERMINE, &C));
      PetscCall(CheckProducts(C, Cr, "MatMatMult amb x amb (reuse)"));
      PetscCall(MatDestroy(&C));
      PetscCall(MatMatMult(A, Rt, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C));
      PetscCall(CheckProducts(C, Cr, "MatMatMult amb x aij"));
      PetscCall(MatDestroy(&C));
      if (square) {
        Mat P, Pr;
        PetscCall(MatPtAP(A, Rt, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &P));
        PetscCall(MatPtAP(R, Rt, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &Pr));
        PetscCall(CheckProducts(P, Pr, "MatPtAP"));
        PetscCall(MatDestroy(&P));
        PetscCall(MatDestroy(&Pr));
      }
      PetscCall(MatDestroy(&Cr));
    }
    PetscCall(MatDestroy(&At));
    PetscCall(MatDestroy(&Rt));
  }
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&XR));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  (void)prealloc;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* write R with the binary viewer, load it as amb */
static PetscErrorCode CheckLoad(Mat R)
{
  char        name[PETSC_MAX_PATH_LEN], info[PETSC_MAX_PATH_LEN + 8];
  PetscViewer v;
  Mat         L;
  PetscMPIInt rank;
  int         pid = (int)getpid();

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Bcast(&pid, 1, MPI_INT, 0, PETSC_COMM_WORLD));
  PetscCall(PetscSNPrintf(name, sizeof(name), "/tmp/gpukit_amb_load_%d.bin", pid));
  PetscCall(PetscSNPrintf(info, sizeof(info), "%s.info", name));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, name, FILE_MODE_WRITE, &v));
  PetscCall(MatView(R, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, name, FILE_MODE_READ, &v));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &L));
  PetscCall(MatSetType(L, MATAMB));
  PetscCall(MatSetFromOptions(L));
  PetscCall(MatLoad(L, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(CheckType(L, PETSC_TRUE, "MatLoad"));
  PetscCall(CheckSame(L, R, "MatLoad"));
  PetscCall(MatDestroy(&L));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  if (!rank) {
    (void)remove(name);
    (void)remove(info);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* GMRES with each PC: the same iteration count and converged reason as AIJ, close solutions */
static PetscErrorCode CheckSolves(Mat A, Mat R, char **pcs, PetscInt npc)
{
  PetscMPIInt size;
  PetscBool   missing = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  { /* a structurally missing diagonal entry: no factorization-based PC (AIJ fails there too) */
    PetscInt rstart, rend;
    PetscCall(MatGetOwnershipRange(R, &rstart, &rend));
    for (PetscInt i = rstart; i < rend && !missing; i++) {
      PetscInt        nc;
      const PetscInt *cols;
      PetscBool       has = PETSC_FALSE;
      PetscCall(MatGetRow(R, i, &nc, &cols, NULL));
      for (PetscInt k = 0; k < nc; k++)
        if (cols[k] == i) has = PETSC_TRUE;
      PetscCall(MatRestoreRow(R, i, &nc, &cols, NULL));
      if (!has) missing = PETSC_TRUE;
    }
    {
      int lmiss = missing ? 1 : 0, gmiss = 0;
      PetscCallMPI(MPI_Allreduce(&lmiss, &gmiss, 1, MPI_INT, MPI_LOR, PETSC_COMM_WORLD));
      missing = gmiss ? PETSC_TRUE : PETSC_FALSE;
    }
  }
  for (PetscInt p = 0; p < npc; p++) {
    Vec                b, x, xr;
    KSP                k[2];
    PetscInt           its[2];
    KSPConvergedReason reason[2];
    Mat                mats[2] = {A, R};
    PetscReal          nrm, nd;

    if (size > 1 && (!strcmp(pcs[p], "ilu") || !strcmp(pcs[p], "lu") || !strcmp(pcs[p], "icc") || !strcmp(pcs[p], "cholesky"))) continue;
    if (missing && strcmp(pcs[p], "none") && strcmp(pcs[p], "jacobi")) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  GMRES + %s: skipped (a diagonal entry is missing from the pattern)\n", pcs[p]));
      continue;
    }
    PetscCall(MatCreateVecs(R, &x, &b));
    PetscCall(VecDuplicate(x, &xr));
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(R, x, b));
    for (PetscInt t = 0; t < 2; t++) {
      PC pc;
      PetscCall(KSPCreate(PETSC_COMM_WORLD, &k[t]));
      PetscCall(KSPSetOperators(k[t], mats[t], mats[t]));
      PetscCall(KSPSetType(k[t], KSPGMRES));
      PetscCall(KSPGetPC(k[t], &pc));
      PetscCall(PCSetType(pc, pcs[p]));
      PetscCall(KSPSetTolerances(k[t], 1e-8, 1e-50, 1e5, 300));
      PetscCall(KSPSetOptionsPrefix(k[t], "s_"));
      PetscCall(KSPSetFromOptions(k[t]));
      PetscCall(KSPSetErrorIfNotConverged(k[t], PETSC_FALSE));
      PetscCall(KSPSolve(k[t], b, t ? xr : x));
      PetscCall(KSPGetIterationNumber(k[t], &its[t]));
      PetscCall(KSPGetConvergedReason(k[t], &reason[t]));
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  GMRES + %s: AMB %" PetscInt_FMT " iterations (%s), AIJ %" PetscInt_FMT " (%s)\n", pcs[p], its[0], KSPConvergedReasons[reason[0]], its[1], KSPConvergedReasons[reason[1]]));
    PetscCheck(its[0] == its[1] && reason[0] == reason[1], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "GMRES + %s: AMB %" PetscInt_FMT " iterations (%s), AIJ %" PetscInt_FMT " (%s)", pcs[p], its[0], KSPConvergedReasons[reason[0]], its[1], KSPConvergedReasons[reason[1]]);
    if (reason[1] > 0) {
      PetscCall(VecNorm(xr, NORM_INFINITY, &nrm));
      PetscCall(VecAXPY(x, -1.0, xr));
      PetscCall(VecNorm(x, NORM_INFINITY, &nd));
      PetscCheck(nd <= 1e-3 * PetscMax(nrm, 1.0), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "GMRES + %s: solutions differ by %g", pcs[p], (double)nd);
    }
    PetscCall(KSPDestroy(&k[0]));
    PetscCall(KSPDestroy(&k[1]));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&xr));
    PetscCall(VecDestroy(&b));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* AIJ's preallocation semantics: a new entry outside it is the same error */
static PetscErrorCode CheckOutsidePrealloc(const Triplets *T)
{
  Mat            A, R;
  PetscErrorCode ierr[2];
  PetscInt       rstart, rend, M, N;
  PetscMPIInt    rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(Build(T, MATAMB, "xaij", PETSC_TRUE, &A));
  PetscCall(Build(T, MATAIJ, "xaij", PETSC_FALSE, &R));
  PetscCall(MatGetOwnershipRange(R, &rstart, &rend));
  PetscCall(MatGetSize(R, &M, &N));
  if (rend > rstart) { /* a full row cannot be inside the preallocation unless the row is dense */
    PetscInt nc;
    PetscCall(MatGetRow(R, rstart, &nc, NULL, NULL));
    PetscCall(MatRestoreRow(R, rstart, &nc, NULL, NULL));
    if (nc < N) {
      Mat mats[2] = {A, R};
      for (PetscInt t = 0; t < 2; t++) {
        PetscCall(GKExpectErrorBegin());
        ierr[t] = 0;
        for (PetscInt j = 0; j < N && !ierr[t]; j++) ierr[t] = MatSetValue(mats[t], rstart, j, 1.0, ADD_VALUES);
        PetscCall(GKExpectErrorEnd(ierr[t], PETSC_ERR_ARG_OUTOFRANGE, "caused a malloc", t ? "AIJ: entry outside the preallocation" : "AMB: entry outside the preallocation"));
      }
    }
  }
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* options out of range: clear errors */
static PetscErrorCode CheckBadOptions(const Triplets *T)
{
  const char *bad[][3] = {
    {"-mat_amb_b",              "17",     "-mat_amb_b"            },
    {"-mat_amb_b",              "-1",     "-mat_amb_b"            },
    {"-mat_amb_segment_width",  "48",     "power of 2"            },
    {"-mat_amb_segment_width",  "16",     "power of 2"            },
    {"-mat_amb_segment_width",  "131072", "power of 2"            },
    {"-mat_amb_chunk_sort",     "33",     "multiple of 32"        },
    {"-mat_amb_chunk_sort",     "-32",    "multiple of 32"        },
  };
  Mat            A;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(Build(T, MATAMB, "xaij", PETSC_FALSE, &A));
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    PetscCall(PetscOptionsSetValue(NULL, bad[i][0], bad[i][1]));
    PetscCall(GKExpectErrorBegin());
    ierr = MatSetFromOptions(A);
    PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_OUTOFRANGE, bad[i][2], bad[i][0]));
    PetscCall(PetscOptionsClearValue(NULL, bad[i][0]));
  }
  /* sigma must divide W */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_amb_segment_width", "32"));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_amb_chunk_sort", "64"));
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetFromOptions(A);
  PetscCall(GKExpectErrorEnd(ierr, PETSC_ERR_ARG_INCOMP, "must divide the segment width", "-mat_amb_chunk_sort 64 with -mat_amb_segment_width 32"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_amb_segment_width"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_amb_chunk_sort"));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_amb_host_kernel", "gpu"));
  PetscCall(GKExpectErrorBegin());
  ierr = MatSetFromOptions(A);
  PetscCall(GKExpectErrorEnd(ierr, ierr ? ierr : 1, "for -mat_amb_host_kernel", "-mat_amb_host_kernel gpu")); /* PETSc's own EList error; its code differs between releases */
  PetscCall(PetscOptionsClearValue(NULL, "-mat_amb_host_kernel"));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char        file[PETSC_MAX_PATH_LEN] = "", gen[32] = "", prealloc[16] = "xaij", *pcs[16];
  PetscInt    m = 100, n = -1, nzrow = 8, seed = 1, emptyrows = 0, emptycols = 0, npc = 16, breq = 0;
  PetscBool   skipsolve = PETSC_FALSE, skipprod = PETSC_FALSE, errors = PETSC_FALSE, flg, view = PETSC_FALSE, checkmodel = PETSC_FALSE;
  char        expectfb[8] = "";
  Triplets    T;
  Mat         A, R;
  PetscInt    b, W;
  PetscBool   fb;
  PetscLogDouble bytes;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscLogDefaultBegin());
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "amb_ops", NULL);
  PetscCall(PetscOptionsString("-f", "Matrix Market file", NULL, file, file, sizeof(file), NULL));
  PetscCall(PetscOptionsString("-gen", "random|band|mixed", NULL, gen, gen, sizeof(gen), NULL));
  PetscCall(PetscOptionsInt("-m", "rows", NULL, m, &m, NULL));
  PetscCall(PetscOptionsInt("-n", "columns (default: m)", NULL, n, &n, NULL));
  PetscCall(PetscOptionsInt("-nzrow", "mean entries per row", NULL, nzrow, &nzrow, NULL));
  PetscCall(PetscOptionsInt("-seed", "seed", NULL, seed, &seed, NULL));
  PetscCall(PetscOptionsInt("-empty_rows", "percent of empty rows", NULL, emptyrows, &emptyrows, NULL));
  PetscCall(PetscOptionsInt("-empty_cols", "percent of empty columns", NULL, emptycols, &emptycols, NULL));
  PetscCall(PetscOptionsString("-prealloc", "xaij|seqmpi|none", NULL, prealloc, prealloc, sizeof(prealloc), NULL));
  PetscCall(PetscOptionsStringArray("-pcs", "PCs for the GMRES solves", NULL, pcs, &npc, &flg));
  if (!flg) npc = 0;
  PetscCall(PetscOptionsBool("-skip_solve", "no solves", NULL, skipsolve, &skipsolve, NULL));
  PetscCall(PetscOptionsBool("-skip_products", "no MatMatMult/PtAP/algebra", NULL, skipprod, &skipprod, NULL));
  PetscCall(PetscOptionsBool("-errors", "also the bad-input checks", NULL, errors, &errors, NULL));
  PetscCall(PetscOptionsReal("-tol", "relative tolerance", NULL, tol, &tol, NULL));
  PetscCall(PetscOptionsBool("-view", "MatView ::ascii_info of the AMB matrix", NULL, view, &view, NULL));
  PetscCall(PetscOptionsBool("-check_model", "the model's b minimises the modelled bytes", NULL, checkmodel, &checkmodel, NULL));
  PetscCall(PetscOptionsString("-expect_fallback", "yes|no: the CSR fallback decision on every rank", NULL, expectfb, expectfb, sizeof(expectfb), NULL));
  PetscCall(PetscOptionsBool("-inodes", "keep AIJ's inode routines (then AIJ's sums are not sequential)", NULL, inodes, &inodes, NULL));
  PetscCall(PetscOptionsBool("-bitwise", "MatMult/MatMultAdd bitwise equal to AIJ", NULL, bitwise, &bitwise, NULL));
  if (inodes) bitwise = PETSC_FALSE;
  PetscOptionsEnd();
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-mat_amb_b", &breq, NULL));

  if (file[0]) PetscCall(ReadMatrixMarket(file, &T));
  else {
    PetscCheck(gen[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-f file or -gen kind");
    PetscCall(Generate(gen, m, n < 0 ? m : n, nzrow, seed, emptyrows, emptycols, &T));
  }
  PetscCall(Build(&T, MATAIJ, prealloc, PETSC_FALSE, &R));
  PetscCall(Build(&T, MATAMB, prealloc, PETSC_TRUE, &A));
  PetscCall(CheckType(A, PETSC_TRUE, "MatSetType(amb)"));
  PetscCall(MatAMBGetInfo(A, &b, &W, &fb, &bytes));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %" PetscInt_FMT " x %" PetscInt_FMT ", %" PetscInt_FMT " entries given, prealloc %s; rank 0 diagonal block: b %" PetscInt_FMT ", W %" PetscInt_FMT ", %s, model %.0f bytes\n", file[0] ? file : gen, T.M, T.N, T.nz, prealloc, b, W, fb ? "CSR fallback" : "AMB kernel", bytes));
  if (breq > 0) { /* the requested b is used (clamped to the last segment's width) */
    PetscInt Nloc;
    PetscCall(MatGetLocalSize(A, NULL, &Nloc));
    if (Nloc >= breq) PetscCall(GKCheck((PetscBool)(b == breq), "-mat_amb_b took effect"));
  }
  checkbits = PETSC_TRUE; /* only where both matrices hold the same values without inodes */
  PetscCall(CheckSame(A, R, "assembled"));
  checkbits = PETSC_FALSE;
  if (view) {
    PetscCall(PetscViewerPushFormat(PETSC_VIEWER_STDOUT_WORLD, PETSC_VIEWER_ASCII_INFO));
    PetscCall(MatView(A, PETSC_VIEWER_STDOUT_WORLD));
    PetscCall(PetscViewerPopFormat(PETSC_VIEWER_STDOUT_WORLD));
  }
  if (expectfb[0]) PetscCall(GKCheck((PetscBool)(fb == (PetscBool)(expectfb[0] == 'y')), "MatAMBGetInfo: the CSR fallback decision is the expected one"));
  if (checkmodel && breq == 0) { /* the model's b is the one with the fewest modelled bytes among b = 1..8 */
    Mat            D;
    PetscLogDouble best = -1, bb;
    PetscBool      fbk;
    PetscInt       bk;
    char           val[8];
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &D));
    for (PetscInt k = 1; k <= 8; k++) {
      PetscCall(PetscSNPrintf(val, sizeof(val), "%d", (int)k));
      PetscCall(SetAMBOption(D, "-mat_amb_b", val));
      PetscCall(MatAMBGetInfo(D, &bk, NULL, &fbk, &bb));
      if (!fbk && (best < 0 || bb < best)) best = bb;
    }
    PetscCall(SetAMBOption(D, "-mat_amb_b", NULL));
    PetscCall(MatDestroy(&D));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "model: b %" PetscInt_FMT " at %.0f bytes, best over b = 1..8: %.0f bytes\n", b, bytes, best));
    if (!fb && best >= 0) PetscCall(GKCheck((PetscBool)(bytes == best), "the traffic model's b has the fewest modelled bytes"));
  }
  PetscCall(CheckHostKernels(A, "assembled"));
  if (!skipprod) {
    PetscCall(CheckAlgebra(A, R, (PetscBool)(T.M == T.N), &T, prealloc));
    PetscCall(CheckConvert(A, R));
    PetscCall(CheckLoad(R));
  }
  if (T.M == T.N && !skipsolve && npc) PetscCall(CheckSolves(A, R, pcs, npc));
  PetscCall(CheckRefresh(A, R, PETSC_TRUE));
  PetscCall(CheckNonFinite(A, R));
  if (errors) {
    PetscCall(CheckOutsidePrealloc(&T));
    PetscCall(CheckBadOptions(&T));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "amb_ops: all checks passed\n"));
  for (PetscInt p = 0; p < npc; p++) PetscCall(PetscFree(pcs[p]));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&R));
  PetscCall(PetscFree3(T.ri, T.ci, T.va));
  PetscCall(PetscFinalize());
  return 0;
}
