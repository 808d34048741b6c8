static const char help[] = "MatMult benchmark: MATSGDIA against MATAIJ and MATBAIJ on the same DMDA stencil operator.\n\n"
                           "  -dim 2|3             grid dimension (default 3)\n"
                           "  -dof d               components per grid point (default 1)\n"
                           "  -stencil star|box    DMDA stencil of width 1 (default star)\n"
                           "  -n n                 grid points per dimension (default 64)\n"
                           "  -reps r              MatMult calls per timed batch (default 50)\n"
                           "  -batches b           timed batches; the fastest batch is reported (default 5)\n"
                           "  -json path           append one JSON record per format to this file (one record a line)\n\n"
                           "The three matrices are assembled by the same MatSetValuesStencil() loop with the same pseudo-random\n"
                           "values (a hash of the natural row and column index, so the operator does not depend on the number\n"
                           "of ranks); their products must agree to 1e-12 relative before anything is timed.\n"
                           "Environment: GPUKIT_COMMIT, GPUKIT_SOURCE_STATE, GPUKIT_HOST, GPUKIT_MACHINE, GPUKIT_DATE, GPUKIT_LOAD go into the JSON record.\n";

#include <petscdmda.h>
#include <petscgpukit.h>
#include <petsctime.h>
#include <time.h>
#include "gpukitcompat.h"

#define NFORMATS 3

typedef struct {
  const char    *name; /* sgdia, aij, baij */
  MatType        type;
  Mat            A;
  PetscLogDouble bytes;  /* stored matrix */
  const char    *memsrc; /* where bytes came from */
  PetscReal      tmin;   /* seconds per MatMult, fastest batch */
  PetscReal      tmed;   /* seconds per MatMult, median batch */
  PetscReal     *tbatch; /* seconds per MatMult of every batch */
} Format;

/* A nonzero pseudo-random value in +-[0.5, 1.5) for the entry (row, col) of the natural ordering (splitmix64). */
static PetscScalar EntryValue(PetscInt row, PetscInt col)
{
  unsigned long long z = 0x9E3779B97F4A7C15ULL * (unsigned long long)(row + 1) + 0xBF58476D1CE4E5B9ULL * (unsigned long long)(col + 7);
  double             u;

  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z = z ^ (z >> 31);
  u = (double)(z >> 11) / 9007199254740992.0; /* [0, 1) */
  return (PetscScalar)((z & 1ULL) ? -(0.5 + u) : (0.5 + u));
}

/* Every coupling of the DMDA's stencil of width 1, all dof x dof component pairs, one row block per owned point. */
static PetscErrorCode FillOperator(DM da, Mat A)
{
  DMDALocalInfo   info;
  PetscInt        dof, nmax, w;
  MatStencil     *rows, *cols;
  PetscScalar    *vals;
  DMDAStencilType st;

  PetscFunctionBegin;
  PetscCall(DMDAGetLocalInfo(da, &info));
  PetscCall(DMDAGetInfo(da, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &dof, &w, NULL, NULL, NULL, &st));
  PetscCheck(w == 1, PetscObjectComm((PetscObject)da), PETSC_ERR_SUP, "The benchmark fills stencils of width 1, the DMDA has width %" PetscInt_FMT, w);
  nmax = 27 * dof;
  PetscCall(PetscMalloc3(dof, &rows, nmax, &cols, dof * nmax, &vals));
  for (PetscInt k = info.zs; k < info.zs + info.zm; k++) {
    for (PetscInt j = info.ys; j < info.ys + info.ym; j++) {
      for (PetscInt i = info.xs; i < info.xs + info.xm; i++) {
        PetscInt nc = 0;
        for (PetscInt dz = (info.dim > 2 ? -1 : 0); dz <= (info.dim > 2 ? 1 : 0); dz++) {
          for (PetscInt dy = (info.dim > 1 ? -1 : 0); dy <= (info.dim > 1 ? 1 : 0); dy++) {
            for (PetscInt dx = -1; dx <= 1; dx++) {
              PetscInt ii = i + dx, jj = j + dy, kk = k + dz;
              if (st == DMDA_STENCIL_STAR && (dx != 0) + (dy != 0) + (dz != 0) > 1) continue;
              if (ii < 0 || ii >= info.mx || jj < 0 || jj >= info.my || kk < 0 || kk >= info.mz) continue;
              for (PetscInt c = 0; c < dof; c++) {
                cols[nc].i   = ii;
                cols[nc].j   = jj;
                cols[nc].k   = kk;
                cols[nc++].c = c;
              }
            }
          }
        }
        for (PetscInt r = 0; r < dof; r++) {
          PetscInt grow = ((k * info.my + j) * info.mx + i) * dof + r;
          rows[r].i     = i;
          rows[r].j     = j;
          rows[r].k     = k;
          rows[r].c     = r;
          for (PetscInt q = 0; q < nc; q++) {
            PetscInt gcol    = ((cols[q].k * info.my + cols[q].j) * info.mx + cols[q].i) * dof + cols[q].c;
            vals[r * nc + q] = EntryValue(grow, gcol);
          }
        }
        PetscCall(MatSetValuesStencil(A, dof, rows, nc, cols, vals, INSERT_VALUES));
      }
    }
  }
  PetscCall(PetscFree3(rows, cols, vals));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Bytes the matrix stores, summed over ranks. MATSGDIA reports its stored values (MatGetInfo); PETSc 3.18's
   AIJ/BAIJ report memory 0 there, so for them it is counted from the allocation: values, column (block)
   indices and one row (block-row) offset array per sequential block (two per rank on more than one rank). */
static PetscErrorCode MatrixBytes(Format *f)
{
  MatInfo     info;
  PetscMPIInt size;
  PetscInt    bs, mloc;
  PetscBool   isbaij;

  PetscFunctionBegin;
  PetscCall(MatGetInfo(f->A, MAT_GLOBAL_SUM, &info));
  if (info.memory > 0) {
    f->bytes  = info.memory;
    f->memsrc = "MatGetInfo";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)f->A), &size));
  PetscCall(MatGetLocalSize(f->A, &mloc, NULL));
  PetscCall(MatGetBlockSize(f->A, &bs));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)f->A, &isbaij, MATSEQBAIJ, MATMPIBAIJ, ""));
  PetscCall(MatGetInfo(f->A, MAT_LOCAL, &info));
  {
    PetscInt       b       = isbaij ? bs : 1;
    PetscLogDouble nblocks = info.nz_allocated / (PetscLogDouble)(b * b), loc, glob;
    loc                    = info.nz_allocated * sizeof(PetscScalar) + nblocks * sizeof(PetscInt) + (size > 1 ? 2 : 1) * (mloc / b + 1) * (PetscLogDouble)sizeof(PetscInt);
    PetscCall(MPIU_Allreduce(&loc, &glob, 1, MPIU_PETSCLOGDOUBLE, MPI_SUM, PetscObjectComm((PetscObject)f->A)));
    f->bytes  = glob;
    f->memsrc = "values+indices";
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a JSON string: the text between quotes with " and \ escaped and control characters dropped */
static PetscErrorCode JSONString(FILE *fp, const char *key, const char *s, PetscBool last)
{
  PetscFunctionBegin;
  PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"%s\": \"", key));
  for (const char *p = s ? s : ""; *p; p++) {
    if (*p == '"' || *p == '\\') PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\\%c", *p));
    else if ((unsigned char)*p >= 0x20) PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "%c", *p));
  }
  PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"%s", last ? "" : ", "));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  DM             da;
  Vec            x, y, yref;
  PetscRandom    rnd;
  Format         fmt[NFORMATS];
  PetscInt       dim = 3, dof = 1, n = 64, reps = 50, batches = 5, sidx = 0, k, rows;
  const char    *stencils[]               = {"star", "box"};
  char           json[PETSC_MAX_PATH_LEN] = "", casename[64], version[32], date[64];
  PetscBool      hasjson;
  PetscMPIInt    size, rank;
  PetscLogDouble nnz, flops;
  MatInfo        info;
  const char    *commit, *state, *host, *machine, *envdate, *load;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscArrayzero(fmt, NFORMATS));
  fmt[0].name = "sgdia";
  fmt[0].type = MATSGDIA;
  fmt[1].name = "aij";
  fmt[1].type = MATAIJ;
  fmt[2].name = "baij";
  fmt[2].type = MATBAIJ;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "MATSGDIA MatMult benchmark", "bench");
  PetscCall(PetscOptionsInt("-dim", "Grid dimension, 2 or 3", "bench", dim, &dim, NULL));
  PetscCall(PetscOptionsInt("-dof", "Components per grid point", "bench", dof, &dof, NULL));
  PetscCall(PetscOptionsEList("-stencil", "DMDA stencil (width 1)", "bench", stencils, 2, stencils[sidx], &sidx, NULL));
  PetscCall(PetscOptionsInt("-n", "Grid points per dimension", "bench", n, &n, NULL));
  PetscCall(PetscOptionsInt("-reps", "MatMult calls per timed batch", "bench", reps, &reps, NULL));
  PetscCall(PetscOptionsInt("-batches", "Timed batches (the fastest is reported)", "bench", batches, &batches, NULL));
  PetscCall(PetscOptionsString("-json", "Append JSON records (one a line) to this file", "bench", json, json, sizeof(json), &hasjson));
  PetscOptionsEnd();
  PetscCheck(dim == 2 || dim == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dim must be 2 or 3, got %" PetscInt_FMT, dim);
  PetscCheck(dof >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dof must be at least 1, got %" PetscInt_FMT, dof);
  PetscCheck(n >= 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n must be at least 3, got %" PetscInt_FMT, n);
  PetscCheck(reps >= 1 && batches >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-reps and -batches must be at least 1, got %" PetscInt_FMT " and %" PetscInt_FMT, reps, batches);

  if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, sidx ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, n, n, PETSC_DECIDE, PETSC_DECIDE, dof, 1, NULL, NULL, &da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, sidx ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, n, n, n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, dof, 1, NULL, NULL, NULL, &da));
  PetscCall(DMSetUp(da));
  k    = sidx ? (dim == 2 ? 9 : 27) : 2 * dim + 1;
  rows = dof * n * n * (dim == 3 ? n : 1);
  PetscCall(PetscSNPrintf(casename, sizeof(casename), "%" PetscInt_FMT "d%" PetscInt_FMT "pt_dof%" PetscInt_FMT "_n%" PetscInt_FMT, dim, k, dof, n));

  /* the same operator in the three formats */
  for (int f = 0; f < NFORMATS; f++) {
    PetscCall(DMSetMatType(da, fmt[f].type));
    PetscCall(DMCreateMatrix(da, &fmt[f].A));
    PetscCall(MatSetOption(fmt[f].A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
    PetscCall(FillOperator(da, fmt[f].A));
    PetscCall(MatrixBytes(&fmt[f]));
    PetscCall(PetscMalloc1(batches, &fmt[f].tbatch));
  }
  PetscCall(MatGetInfo(fmt[1].A, MAT_GLOBAL_SUM, &info));
  nnz   = info.nz_used;
  flops = 2.0 * nnz;

  /* the products must agree before anything is timed */
  PetscCall(DMCreateGlobalVector(da, &x));
  PetscCall(VecDuplicate(x, &y));
  PetscCall(VecDuplicate(x, &yref));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 20240601));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(MatMult(fmt[1].A, x, yref));
  for (int f = 0; f < NFORMATS; f++) {
    PetscReal err, nrm;
    if (f == 1) continue;
    PetscCall(MatMult(fmt[f].A, x, y));
    PetscCall(VecAXPY(y, -1.0, yref));
    PetscCall(VecNorm(y, NORM_INFINITY, &err));
    PetscCall(VecNorm(yref, NORM_INFINITY, &nrm));
    PetscCheck(err <= 1e-12 * nrm, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Case %s on %d ranks: MatMult with %s differs from AIJ by %g (relative %g > 1e-12); not timing a wrong product", casename, size, fmt[f].name, (double)err, (double)(err / nrm));
  }

  /* warm-up, then batches interleaved over the formats so that drift hits all of them alike */
  for (int f = 0; f < NFORMATS; f++)
    for (PetscInt r = 0; r < PetscMax(3, reps / 5); r++) PetscCall(MatMult(fmt[f].A, x, y));
  for (PetscInt b = 0; b < batches; b++) {
    for (int f = 0; f < NFORMATS; f++) {
      PetscLogDouble t0, t1;
      PetscReal      dt;
      PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
      PetscCall(PetscTime(&t0));
      for (PetscInt r = 0; r < reps; r++) PetscCall(MatMult(fmt[f].A, x, y));
      PetscCall(PetscTime(&t1));
      dt = (t1 - t0) / reps;
      PetscCall(MPIU_Allreduce(&dt, &fmt[f].tbatch[b], 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
    }
  }
  for (int f = 0; f < NFORMATS; f++) {
    PetscCall(PetscSortReal(batches, fmt[f].tbatch));
    fmt[f].tmin = fmt[f].tbatch[0];
    fmt[f].tmed = batches % 2 ? fmt[f].tbatch[batches / 2] : 0.5 * (fmt[f].tbatch[batches / 2 - 1] + fmt[f].tbatch[batches / 2]);
  }

  /* report */
  commit  = getenv("GPUKIT_COMMIT");
  state   = getenv("GPUKIT_SOURCE_STATE");
  load    = getenv("GPUKIT_LOAD");
  host    = getenv("GPUKIT_HOST");
  machine = getenv("GPUKIT_MACHINE");
  envdate = getenv("GPUKIT_DATE");
  if (envdate && envdate[0]) PetscCall(PetscStrncpy(date, envdate, sizeof(date)));
  else {
    time_t now = time(NULL);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
  }
  PetscCall(PetscSNPrintf(version, sizeof(version), "%d.%d.%d", PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-22s %5s %-6s %9s %10s %9s %9s %11s %8s %8s\n", "case", "ranks", "format", "rows", "nnz", "time_ms", "GFlop/s", "memory_MB", "vs_AIJ", "vs_BAIJ"));
  for (int f = 0; f < NFORMATS; f++) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-22s %5d %-6s %9" PetscInt_FMT " %10.0f %9.3f %9.3f %11.2f %8.2f %8.2f\n", casename, size, fmt[f].name, rows, nnz, 1e3 * fmt[f].tmin, 1e-9 * flops / fmt[f].tmin, fmt[f].bytes / 1048576.0,
                          fmt[1].tmin / fmt[f].tmin, fmt[2].tmin / fmt[f].tmin));
  }
  if (hasjson && json[0]) {
    FILE *fp;
    PetscCall(PetscFOpen(PETSC_COMM_WORLD, json, "a", &fp));
    if (rank == 0) {
      for (int f = 0; f < NFORMATS; f++) {
        MatType type;
        PetscCall(MatGetType(fmt[f].A, &type));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "{"));
        PetscCall(JSONString(fp, "bench", "sgdia_mult", PETSC_FALSE));
        PetscCall(JSONString(fp, "case", casename, PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"nranks\": %d, \"dim\": %" PetscInt_FMT ", \"dof\": %" PetscInt_FMT ", ", size, dim, dof));
        PetscCall(JSONString(fp, "stencil", stencils[sidx], PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"stencil_points\": %" PetscInt_FMT ", \"n\": %" PetscInt_FMT ", \"rows\": %" PetscInt_FMT ", \"nnz\": %.0f, ", k, n, rows, nnz));
        PetscCall(JSONString(fp, "format", fmt[f].name, PETSC_FALSE));
        PetscCall(JSONString(fp, "mat_type", type, PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"time_ms\": %.6g, \"time_ms_median\": %.6g, \"gflops\": %.6g, \"memory_bytes\": %.0f, ", 1e3 * fmt[f].tmin, 1e3 * fmt[f].tmed, 1e-9 * flops / fmt[f].tmin, fmt[f].bytes));
        PetscCall(JSONString(fp, "memory_source", fmt[f].memsrc, PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"speedup_vs_aij\": %.6g, \"speedup_vs_baij\": %.6g, \"reps\": %" PetscInt_FMT ", \"batches\": %" PetscInt_FMT ", ", fmt[1].tmin / fmt[f].tmin, fmt[2].tmin / fmt[f].tmin, reps, batches));
        PetscCall(JSONString(fp, "petsc_version", version, PETSC_FALSE));
        PetscCall(JSONString(fp, "date", date, PETSC_FALSE));
        PetscCall(JSONString(fp, "commit", commit ? commit : "unknown", PETSC_FALSE));
        PetscCall(JSONString(fp, "source_state", state ? state : "unknown", PETSC_FALSE));
        PetscCall(JSONString(fp, "host", host ? host : "unknown", PETSC_FALSE));
        PetscCall(JSONString(fp, "load_avg", load ? load : "unknown", PETSC_FALSE));
        PetscCall(JSONString(fp, "machine", machine ? machine : "unknown", PETSC_FALSE));
        PetscCall(JSONString(fp, "device", "cpu", PETSC_TRUE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "}\n"));
      }
    }
    PetscCall(PetscFClose(PETSC_COMM_WORLD, fp));
  }

  for (int f = 0; f < NFORMATS; f++) {
    PetscCall(MatDestroy(&fmt[f].A));
    PetscCall(PetscFree(fmt[f].tbatch));
  }
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yref));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
