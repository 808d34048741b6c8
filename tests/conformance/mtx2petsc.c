static const char help[] = "Convert a Matrix Market file (coordinate, real/integer/pattern, general/symmetric/skew-symmetric;\n"
                           "gzip-compressed when its name ends in .gz) into a PETSc binary file holding the matrix and a\n"
                           "right-hand side, the layout stock KSP ex10 reads with -f FILE (MatLoad, then VecLoad).\n"
                           "  -mtx FILE[.gz]   the Matrix Market file\n"
                           "  -o FILE          the PETSc binary file to write\n"
                           "  -rhs sin|ones|none  b_i = 1 + sin(i+1)/2 (default), b_i = 1, or no vector at all\n"
                           "Run it on one rank; explicit zeros of the file are kept as stored entries.\n";

/*
   The conformance suite (tests/conformance/ex10.sh, matrices.sh) converts the shared SuiteSparse set
   (tests/data/matrices/NAME.mtx.gz) with this program into build/.../matrices/NAME.petsc. Symmetric files hold one
   triangle: the other is added here (MatLoad wants the full matrix). The right-hand side is deterministic and not a
   multiple of a constant vector, so that Krylov iterations are not trivially short.
*/
#include <petscmat.h>
#include <petscversion.h>
#include <stdio.h>
#include <string.h>
#include <math.h>

#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

typedef enum {
  MM_GENERAL,
  MM_SYMMETRIC,
  MM_SKEW
} MMSymmetry;

/* lower-case a string in place */
static void Lower(char *s)
{
  for (; *s; s++)
    if (*s >= 'A' && *s <= 'Z') *s = (char)(*s - 'A' + 'a');
}

static PetscErrorCode ReadMatrixMarket(const char *path, Mat *A)
{
  FILE       *f;
  PetscBool   gz, pattern = PETSC_FALSE;
  MMSymmetry  sym = MM_GENERAL;
  char        line[4096], cmd[PETSC_MAX_PATH_LEN + 64], banner[5][64];
  long long   m = -1, n = -1, nz = -1, k, lineno = 0;
  PetscInt   *nnz, *ii, *jj;
  PetscScalar *vv;
  size_t      len;

  PetscFunctionBeginUser;
  PetscCall(PetscStrlen(path, &len));
  gz = (PetscBool)(len > 3 && !strcmp(path + len - 3, ".gz"));
  if (gz) {
    PetscCheck(!strchr(path, '\''), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "mtx2petsc: the file name %s contains a quote", path);
    PetscCall(PetscSNPrintf(cmd, sizeof(cmd), "gzip -dc '%s'", path));
    f = popen(cmd, "r");
  } else f = fopen(path, "r");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "mtx2petsc: cannot open %s", path);

  /* banner: %%MatrixMarket matrix coordinate <field> <symmetry> */
  PetscCheck(fgets(line, sizeof(line), f), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "mtx2petsc: %s is empty (or gzip could not read it)", path);
  lineno++;
  PetscCheck(sscanf(line, "%63s %63s %63s %63s %63s", banner[0], banner[1], banner[2], banner[3], banner[4]) == 5, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "mtx2petsc: %s: the first line is not a Matrix Market banner: %s", path, line);
  for (int i = 0; i < 5; i++) Lower(banner[i]);
  PetscCheck(!strcmp(banner[0], "%%matrixmarket") && !strcmp(banner[1], "matrix"), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "mtx2petsc: %s: not a Matrix Market matrix file", path);
  PetscCheck(!strcmp(banner[2], "coordinate"), PETSC_COMM_SELF, PETSC_ERR_SUP, "mtx2petsc: %s: only coordinate (sparse) files are supported, not '%s'", path, banner[2]);
  if (!strcmp(banner[3], "pattern")) pattern = PETSC_TRUE;
  else PetscCheck(!strcmp(banner[3], "real") || !strcmp(banner[3], "integer"), PETSC_COMM_SELF, PETSC_ERR_SUP, "mtx2petsc: %s: field '%s' is not supported (real, integer or pattern)", path, banner[3]);
  if (!strcmp(banner[4], "symmetric")) sym = MM_SYMMETRIC;
  else if (!strcmp(banner[4], "skew-symmetric")) sym = MM_SKEW;
  else PetscCheck(!strcmp(banner[4], "general"), PETSC_COMM_SELF, PETSC_ERR_SUP, "mtx2petsc: %s: symmetry '%s' is not supported (general, symmetric, skew-symmetric)", path, banner[4]);

  /* comments, then the size line */
  while (fgets(line, sizeof(line), f)) {
    lineno++;
    if (line[0] == '%' || line[strspn(line, " \t\r\n")] == '\0') continue;
    PetscCheck(sscanf(line, "%lld %lld %lld", &m, &n, &nz) == 3, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "mtx2petsc: %s line %lld: expected 'rows cols entries', got: %s", path, lineno, line);
    break;
  }
  PetscCheck(m > 0 && n > 0 && nz >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "mtx2petsc: %s: no valid size line", path);
  PetscCheck(sym == MM_GENERAL ? PETSC_TRUE : m == n, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "mtx2petsc: %s: a %s matrix must be square, got %lld x %lld", path, banner[4], m, n);

  PetscCall(PetscMalloc3(2 * nz, &ii, 2 * nz, &jj, 2 * nz, &vv));
  PetscCall(PetscCalloc1(m, &nnz));
  k = 0;
  for (long long e = 0; e < nz; e++) {
    long long i, j;
    double    v = 1.0;
    int       got;

    do {
      PetscCheck(fgets(line, sizeof(line), f), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "mtx2petsc: %s: the file ends after %lld of %lld entries", path, e, nz);
      lineno++;
    } while (line[0] == '%' || line[strspn(line, " \t\r\n")] == '\0');
    got = pattern ? sscanf(line, "%lld %lld", &i, &j) : sscanf(line, "%lld %lld %lg", &i, &j, &v);
    PetscCheck(got == (pattern ? 2 : 3), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "mtx2petsc: %s line %lld: expected 'i j%s', got: %s", path, lineno, pattern ? "" : " value", line);
    PetscCheck(i >= 1 && i <= m && j >= 1 && j <= n, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "mtx2petsc: %s line %lld: entry (%lld, %lld) outside the %lld x %lld matrix", path, lineno, i, j, m, n);
    ii[k] = (PetscInt)(i - 1);
    jj[k] = (PetscInt)(j - 1);
    vv[k] = (PetscScalar)v;
    nnz[ii[k]]++;
    k++;
    if (sym != MM_GENERAL && i != j) {
      ii[k] = (PetscInt)(j - 1);
      jj[k] = (PetscInt)(i - 1);
      vv[k] = (PetscScalar)(sym == MM_SKEW ? -v : v);
      nnz[ii[k]]++;
      k++;
    }
  }
  if (gz) {
    int st = pclose(f);
    PetscCheck(st == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "mtx2petsc: gzip -dc %s failed (status %d)", path, st);
  } else PetscCheck(fclose(f) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "mtx2petsc: error closing %s", path);

  PetscCall(MatCreate(PETSC_COMM_SELF, A));
  PetscCall(MatSetSizes(*A, (PetscInt)m, (PetscInt)n, (PetscInt)m, (PetscInt)n));
  PetscCall(MatSetType(*A, MATSEQAIJ));
  for (long long r = 0; r < m; r++)
    if (nnz[r] > n) nnz[r] = (PetscInt)n; /* duplicates: at most n per row in the end */
  PetscCall(MatSeqAIJSetPreallocation(*A, 0, nnz));
  /* duplicates (not in the shared set) are summed, as the Matrix Market convention for assembled files has none */
  for (long long e = 0; e < k; e++) PetscCall(MatSetValues(*A, 1, &ii[e], 1, &jj[e], &vv[e], ADD_VALUES));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree3(ii, jj, vv));
  PetscCall(PetscFree(nnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char        in[PETSC_MAX_PATH_LEN] = "", out[PETSC_MAX_PATH_LEN] = "", rhs[16] = "sin";
  Mat         A;
  Vec         b;
  PetscViewer v;
  PetscMPIInt size;
  PetscInt    m, n, rstart, rend;
  MatInfo     info;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCheck(size == 1, PETSC_COMM_WORLD, PETSC_ERR_SUP, "mtx2petsc runs on one rank (the binary file it writes loads on any number)");
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "mtx2petsc options", NULL);
  PetscCall(PetscOptionsString("-mtx", "Matrix Market file (.mtx or .mtx.gz)", NULL, in, in, sizeof(in), NULL));
  PetscCall(PetscOptionsString("-o", "PETSc binary file to write", NULL, out, out, sizeof(out), NULL));
  PetscCall(PetscOptionsString("-rhs", "Right-hand side written after the matrix: sin, ones or none", NULL, rhs, rhs, sizeof(rhs), NULL));
  PetscOptionsEnd();
  PetscCheck(in[0] && out[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "mtx2petsc needs -mtx FILE.mtx[.gz] and -o FILE");
  PetscCheck(!strcmp(rhs, "sin") || !strcmp(rhs, "ones") || !strcmp(rhs, "none"), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-rhs must be sin, ones or none, got '%s'", rhs);

  PetscCall(ReadMatrixMarket(in, &A));
  PetscCall(MatGetSize(A, &m, &n));
  PetscCall(MatGetInfo(A, MAT_LOCAL, &info));

  /* no FILE.info beside it: nothing but the matrix and the vector should steer how a program loads them */
  PetscCall(PetscViewerCreate(PETSC_COMM_WORLD, &v));
  PetscCall(PetscViewerSetType(v, PETSCVIEWERBINARY));
  PetscCall(PetscViewerBinarySetSkipInfo(v, PETSC_TRUE));
  PetscCall(PetscViewerFileSetMode(v, FILE_MODE_WRITE));
  PetscCall(PetscViewerFileSetName(v, out));
  PetscCall(MatView(A, v));
  if (strcmp(rhs, "none")) {
    PetscScalar *a;
    PetscCall(MatCreateVecs(A, NULL, &b));
    PetscCall(VecGetOwnershipRange(b, &rstart, &rend));
    PetscCall(VecGetArray(b, &a));
    for (PetscInt i = rstart; i < rend; i++) a[i - rstart] = !strcmp(rhs, "ones") ? 1.0 : 1.0 + 0.5 * PetscSinReal((PetscReal)(i + 1));
    PetscCall(VecRestoreArray(b, &a));
    PetscCall(VecView(b, v));
    PetscCall(VecDestroy(&b));
  }
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "mtx2petsc: %s -> %s: %" PetscInt_FMT " x %" PetscInt_FMT ", %.0f stored entries, rhs %s\n", in, out, m, n, (double)info.nz_used, rhs));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
