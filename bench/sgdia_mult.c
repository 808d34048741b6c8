static const char help[] = "MatMult benchmark: gpukit's MATSGDIA (or MATSGDIACUDA) against PETSc's formats on the same DMDA stencil operator.\n\n"
                           "  -formats f1,f2,...   formats to time, the first is ours (default sgdia,aij,baij; on a GPU sgdiacuda,aijcusparse);\n"
                           "                       known: sgdia, aij, baij (host), sgdiacuda, aijcusparse (GPU, VECCUDA vectors)\n"
                           "  -dim 2|3             grid dimension (default 3)\n"
                           "  -dof d               components per grid point (default 1)\n"
                           "  -stencil star|box    DMDA stencil of width 1 (default star)\n"
                           "  -n n                 grid points per dimension (default 64)\n"
                           "  -nxyz nx,ny,nz       3D only: a box grid instead of n^3 (weak scaling with 256^3 per rank: 256,256,512 on 2\n"
                           "                       ranks, 256,512,512 on 4, which PETSc's DMDA splits 1x1x2 and 1x2x2 into 256^3 boxes)\n"
                           "  -reps r              MatMult calls per timed batch (default 50)\n"
                           "  -batches b           timed batches; the fastest batch is reported (default 5)\n"
                           "  -copy_n n            GPU runs: entries per rank of the vectors whose VecCopy measures the copy bandwidth (default 2^25)\n"
                           "  -json path           append one JSON record per format to this file (one record a line)\n\n"
                           "The matrices are assembled by the same MatSetValuesStencil() loop with the same pseudo-random values (a\n"
                           "hash of the natural row and column index, so the operator does not depend on the number of ranks); every\n"
                           "product must agree with the baseline's (aij on the host, aijcusparse on the GPU) to 1e-12 relative before\n"
                           "anything is timed. Host formats and GPU formats cannot be mixed in one run. On the GPU the device is\n"
                           "synchronised before each clock reading, and the copy bandwidth (VecCopy of two large VECCUDA vectors,\n"
                           "2 x 8 bytes an entry) is measured in the same run as the reference for GB/s.\n"
                           "Environment: GPUKIT_COMMIT, GPUKIT_SOURCE_STATE, GPUKIT_HOST, GPUKIT_MACHINE, GPUKIT_DATE, GPUKIT_LOAD go into the\n"
                           "JSON record; GPUKIT_DEVICE names the GPU where the program cannot ask CUDA.\n";

#include <petscdmda.h>
#include <petscgpukit.h>
#include <petsctime.h>
#include <time.h>
#include "gpukitcompat.h"
#include "gkbench.h"
#if defined(GK_BENCH_CUDA)
  #include <petscdevice_cuda.h>
#endif

#define MAX_FORMATS 8

typedef enum {
  FAMILY_SGDIA,
  FAMILY_AIJ,
  FAMILY_BAIJ
} Family;

/* a format the benchmark knows */
typedef struct {
  const char *name;   /* as in -formats */
  MatType     type;   /* given to DMSetMatType() */
  PetscBool   device; /* a GPU format: VECCUDA vectors, a PETSc with CUDA */
  Family      family; /* how it stores the matrix, for the bytes a product moves */
} FormatKind;

static const FormatKind kinds[] = {
  {"sgdia",       MATSGDIA,       PETSC_FALSE, FAMILY_SGDIA},
  {"aij",         MATAIJ,         PETSC_FALSE, FAMILY_AIJ  },
  {"baij",        MATBAIJ,        PETSC_FALSE, FAMILY_BAIJ },
  {"sgdiacuda",   MATSGDIACUDA,   PETSC_TRUE,  FAMILY_SGDIA},
  {"aijcusparse", MATAIJCUSPARSE, PETSC_TRUE,  FAMILY_AIJ  },
};

typedef struct {
  const FormatKind *kind;
  Mat               A;
  PetscLogDouble    bytes;  /* stored matrix */
  const char       *memsrc; /* where bytes came from */
  PetscLogDouble    moved;  /* bytes one product moves at least: the stored values (and indices), x and y, each once */
  PetscReal         kspit;  /* KSPSolve time per iteration (GMRES(30) + Jacobi), seconds; 0 when not measured */
  PetscLogDouble    tsetup; /* seconds: DMCreateMatrix(), the fill, the assembly */
  PetscReal         tmin;   /* seconds per MatMult, fastest batch */
  PetscReal         tmed;   /* seconds per MatMult, median batch */
  PetscReal        *tbatch; /* seconds per MatMult of every batch */
} Format;

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

/* a JSON number, or null when there is none (no baseline of that name in this run) */
static PetscErrorCode JSONNumber(FILE *fp, const char *key, PetscReal v, PetscBool valid, PetscBool last)
{
  PetscFunctionBegin;
  if (valid) PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"%s\": %.6g%s", key, (double)v, last ? "" : ", "));
  else PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"%s\": null%s", key, last ? "" : ", "));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode LookupFormat(const char *name, const FormatKind **kind)
{
  PetscBool match;

  PetscFunctionBegin;
  *kind = NULL;
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
    PetscCall(PetscStrcmp(name, kinds[i].name, &match));
    if (match) {
      *kind = &kinds[i];
      break;
    }
  }
  PetscCheck(*kind, PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "Unknown format '%s' in -formats; known: sgdia, aij, baij (host), sgdiacuda, aijcusparse (GPU)", name);
#if !defined(GK_BENCH_CUDA)
  PetscCheck(!(*kind)->device, PETSC_COMM_WORLD, PETSC_ERR_SUP, "Format %s runs on a GPU; this build of the benchmark has none: build it against a PETSc 3.19 or later configured with CUDA (make petsc-cuda; make PETSC_DIR=.../petsc-cuda OBJDIR=build/cuda LIBDIR=build/cuda/lib build/cuda/bench/sgdia_mult)", name);
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Device copy bandwidth in GB/s (bytes read + bytes written, summed over ranks): VecCopy between two VECCUDA
   vectors of n entries per rank, both valid in device memory (a device-to-device cudaMemcpyAsync), reps copies a
   batch, the fastest of batches batches (the slowest rank's). */
static PetscErrorCode CopyBandwidth(PetscInt n, PetscInt reps, PetscInt batches, PetscRandom rnd, PetscReal *gbps)
{
  Vec       a, b;
  PetscInt  N;
  PetscReal tmin = PETSC_MAX_REAL;

  PetscFunctionBegin;
  PetscCall(VecCreate(PETSC_COMM_WORLD, &a));
  PetscCall(VecSetSizes(a, n, PETSC_DECIDE));
  PetscCall(VecSetType(a, VECCUDA));
  PetscCall(VecDuplicate(a, &b));
  PetscCall(VecGetSize(a, &N));
  PetscCall(VecSetRandom(a, rnd)); /* on the host */
  {
    /* upload a: VecCopy() copies from where the source's valid data is, so a host-only a would time host-to-device */
    const PetscScalar *pa;
    PetscMemType       mtype;
    PetscCall(VecGetArrayReadAndMemType(a, &pa, &mtype));
    PetscCheck(PetscMemTypeDevice(mtype), PETSC_COMM_SELF, PETSC_ERR_PLIB, "The copy-bandwidth vector is not in device memory (PetscMemType %d): the GB/s would not be the device's", (int)mtype);
    PetscCall(VecRestoreArrayReadAndMemType(a, &pa));
  }
  PetscCall(VecSet(b, 0.0)); /* on the device */
  for (PetscInt r = 0; r < 3; r++) PetscCall(VecCopy(a, b));
  for (PetscInt bt = 0; bt < batches; bt++) {
    PetscLogDouble t0, t1;
    PetscReal      dt, dtmax;
    PetscCall(GKDeviceSynchronize(PETSC_TRUE));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(PetscTime(&t0));
    for (PetscInt r = 0; r < reps; r++) PetscCall(VecCopy(a, b));
    PetscCall(GKDeviceSynchronize(PETSC_TRUE));
    PetscCall(PetscTime(&t1));
    dt = (PetscReal)((t1 - t0) / reps);
    PetscCall(MPIU_Allreduce(&dt, &dtmax, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
    tmin = PetscMin(tmin, dtmax);
  }
  *gbps = (PetscReal)(1e-9 * 2.0 * sizeof(PetscScalar) * (PetscLogDouble)N / tmin);
  PetscCall(VecDestroy(&a));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The fewest bytes one product moves: the stored matrix (values, and for AIJ/BAIJ indices and row offsets) once,
   x and y once. SGDIA: k*dof*dof values per grid point (zero slots outside the domain included); AIJ: nnz values and
   column indices, rows+1 offsets; BAIJ: nnz values, one column index a dof x dof block, one offset a block row. */
static PetscErrorCode MovedBytes(Format *f, PetscInt k, PetscInt dof, PetscInt rows, PetscLogDouble nnz)
{
  const PetscLogDouble sv = sizeof(PetscScalar), si = sizeof(PetscInt), vecs = 2.0 * sv * rows;

  PetscFunctionBegin;
  switch (f->kind->family) {
  case FAMILY_SGDIA:
    f->moved = (PetscLogDouble)k * dof * rows * sv + vecs; /* k*dof*dof per point, rows/dof points */
    break;
  case FAMILY_AIJ:
    f->moved = nnz * (sv + si) + (rows + 1.0) * si + vecs;
    break;
  case FAMILY_BAIJ:
    f->moved = nnz * sv + nnz / ((PetscLogDouble)dof * dof) * si + (rows / dof + 1.0) * si + vecs;
    break;
  default:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "Format %s of unknown storage family %d", f->kind->name, (int)f->kind->family);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  DM             da;
  Vec            x, y, yref;
  PetscRandom    rnd;
  Format         fmt[MAX_FORMATS];
  char          *names[MAX_FORMATS];
  PetscInt       nxyz[3] = {0, 0, 0}, nnxyz = 3, procs[3] = {1, 1, 1};
  PetscBool      setxyz = PETSC_FALSE;
  PetscInt       dim = 3, dof = 1, n = 64, reps = 50, batches = 5, sidx = 0, k, rows, nf = MAX_FORMATS, copyn = 33554432, kspits = 0;
  int            ib = -1, ibaij = -1;
  const char    *stencils[]               = {"star", "box"};
  char           json[PETSC_MAX_PATH_LEN] = "", casename[64], version[32], date[64], device[256] = "cpu", vsb[32];
  const char    *baseline;
  PetscBool      hasjson, set, gpu;
  PetscMPIInt    size, rank;
  PetscLogDouble nnz, flops;
  PetscReal      copy_gbps = 0;
  MatInfo        info;
  const char    *envdate;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUKitInitialize());
  PetscCall(PetscArrayzero(fmt, MAX_FORMATS));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "MATSGDIA MatMult benchmark", "bench");
  PetscCall(PetscOptionsStringArray("-formats", "Formats to time, comma-separated; the first is ours (sgdia aij baij sgdiacuda aijcusparse)", "bench", names, &nf, &set));
  PetscCall(PetscOptionsInt("-dim", "Grid dimension, 2 or 3", "bench", dim, &dim, NULL));
  PetscCall(PetscOptionsInt("-dof", "Components per grid point", "bench", dof, &dof, NULL));
  PetscCall(PetscOptionsEList("-stencil", "DMDA stencil (width 1)", "bench", stencils, 2, stencils[sidx], &sidx, NULL));
  PetscCall(PetscOptionsInt("-n", "Grid points per dimension", "bench", n, &n, NULL));
  PetscCall(PetscOptionsIntArray("-nxyz", "3D: grid points in x, y and z (instead of -n)", "bench", nxyz, &nnxyz, &setxyz));
  PetscCall(PetscOptionsInt("-reps", "MatMult calls per timed batch", "bench", reps, &reps, NULL));
  PetscCall(PetscOptionsInt("-batches", "Timed batches (the fastest is reported)", "bench", batches, &batches, NULL));
  PetscCall(PetscOptionsInt("-copy_n", "GPU runs: entries per rank of the vectors whose VecCopy gives the copy bandwidth", "bench", copyn, &copyn, NULL));
  PetscCall(PetscOptionsInt("-ksp_its", "Also time KSPSolve (GMRES(30) + Jacobi) over this many iterations per format (0: skip)", "bench", kspits, &kspits, NULL));
  PetscCall(PetscOptionsString("-json", "Append JSON records (one a line) to this file", "bench", json, json, sizeof(json), &hasjson));
  PetscOptionsEnd();
  if (!set) {
    const char *def[] = {"sgdia", "aij", "baij"};
    nf                = 3;
    for (PetscInt f = 0; f < nf; f++) PetscCall(PetscStrallocpy(def[f], &names[f]));
  }
  PetscCheck(nf >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-formats lists no format; give e.g. -formats sgdia,aij,baij or -formats sgdiacuda,aijcusparse");
  PetscCheck(dim == 2 || dim == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dim must be 2 or 3, got %" PetscInt_FMT, dim);
  PetscCheck(dof >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dof must be at least 1, got %" PetscInt_FMT, dof);
  PetscCheck(n >= 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n must be at least 3, got %" PetscInt_FMT, n);
  PetscCheck(reps >= 1 && batches >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-reps and -batches must be at least 1, got %" PetscInt_FMT " and %" PetscInt_FMT, reps, batches);
  PetscCheck(copyn >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-copy_n must be at least 1, got %" PetscInt_FMT, copyn);

  /* the formats: all on the host or all on the GPU; the baseline of that side must be among them */
  for (PetscInt f = 0; f < nf; f++) {
    PetscCall(LookupFormat(names[f], &fmt[f].kind));
    for (PetscInt g = 0; g < f; g++) PetscCheck(fmt[g].kind != fmt[f].kind, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "Format %s is listed twice in -formats", fmt[f].kind->name);
    PetscCheck(fmt[f].kind->device == fmt[0].kind->device, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-formats mixes host and GPU formats (%s, %s): time them in separate runs, host formats with host vectors, GPU formats with VECCUDA vectors", fmt[0].kind->name, fmt[f].kind->name);
  }
  gpu      = fmt[0].kind->device;
  baseline = gpu ? "aijcusparse" : "aij";
  for (PetscInt f = 0; f < nf; f++) {
    PetscBool match;
    PetscCall(PetscStrcmp(fmt[f].kind->name, baseline, &match));
    if (match) ib = (int)f;
    PetscCall(PetscStrcmp(fmt[f].kind->name, "baij", &match));
    if (match) ibaij = (int)f;
  }
  PetscCheck(ib >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-formats must include %s: it is the baseline of the speedups and the reference of the correctness check on the %s", baseline, gpu ? "GPU" : "host");

  if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, sidx ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, n, n, PETSC_DECIDE, PETSC_DECIDE, dof, 1, NULL, NULL, &da));
  else {
    PetscCheck(!setxyz || nnxyz == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-nxyz takes three sizes, got %" PetscInt_FMT, nnxyz);
    if (!setxyz) nxyz[0] = nxyz[1] = nxyz[2] = n;
    PetscCheck(nxyz[0] >= 3 && nxyz[1] >= 3 && nxyz[2] >= 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-nxyz takes three sizes of at least 3");
  }
  PetscCheck(!setxyz || dim == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-nxyz is for -dim 3");
  if (dim == 3) PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, sidx ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, nxyz[0], nxyz[1], nxyz[2], PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, dof, 1, NULL, NULL, NULL, &da));
  if (gpu) PetscCall(DMSetVecType(da, VECCUDA));
  PetscCall(DMSetUp(da));
  k    = sidx ? (dim == 2 ? 9 : 27) : 2 * dim + 1;
  rows = dim == 3 ? dof * nxyz[0] * nxyz[1] * nxyz[2] : dof * n * n;
  PetscCall(DMDAGetInfo(da, NULL, NULL, NULL, NULL, &procs[0], &procs[1], &procs[2], NULL, NULL, NULL, NULL, NULL, NULL));
  if (setxyz) PetscCall(PetscSNPrintf(casename, sizeof(casename), "%" PetscInt_FMT "d%" PetscInt_FMT "pt_dof%" PetscInt_FMT "_%" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT, dim, k, dof, nxyz[0], nxyz[1], nxyz[2]));
  else PetscCall(PetscSNPrintf(casename, sizeof(casename), "%" PetscInt_FMT "d%" PetscInt_FMT "pt_dof%" PetscInt_FMT "_n%" PetscInt_FMT, dim, k, dof, n));

  /* the same operator in every format */
  for (PetscInt f = 0; f < nf; f++) {
    PetscLogDouble t0, t1;
    PetscCall(PetscTime(&t0));
    PetscCall(DMSetMatType(da, fmt[f].kind->type));
    PetscCall(DMCreateMatrix(da, &fmt[f].A));
    PetscCall(MatSetOption(fmt[f].A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
    PetscCall(GKFillStencil(da, fmt[f].A));
    PetscCall(PetscTime(&t1));
    fmt[f].tsetup = t1 - t0;
    PetscCall(MatrixBytes(&fmt[f]));
    PetscCall(PetscMalloc1(batches, &fmt[f].tbatch));
  }
  PetscCall(MatGetInfo(fmt[ib].A, MAT_GLOBAL_SUM, &info));
  nnz   = info.nz_used;
  flops = 2.0 * nnz;
  for (PetscInt f = 0; f < nf; f++) PetscCall(MovedBytes(&fmt[f], k, dof, rows, nnz));

  /* the products must agree with the baseline's before anything is timed */
  PetscCall(DMCreateGlobalVector(da, &x));
  PetscCall(VecDuplicate(x, &y));
  PetscCall(VecDuplicate(x, &yref));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 20240601));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(MatMult(fmt[ib].A, x, yref));
  for (PetscInt f = 0; f < nf; f++) {
    PetscReal err, nrm;
    if (f == ib) continue;
    PetscCall(MatMult(fmt[f].A, x, y));
    PetscCall(VecAXPY(y, -1.0, yref));
    PetscCall(VecNorm(y, NORM_INFINITY, &err));
    PetscCall(VecNorm(yref, NORM_INFINITY, &nrm));
    PetscCheck(err <= 1e-12 * nrm, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Case %s on %d ranks: MatMult with %s differs from %s by %g (relative %g > 1e-12); not timing a wrong product", casename, size, fmt[f].kind->name, baseline, (double)err, (double)(err / nrm));
  }

  /* warm-up, then batches interleaved over the formats so that drift hits all of them alike; on the GPU the
     device is idle before the first clock reading and done before the second */
  for (PetscInt f = 0; f < nf; f++)
    for (PetscInt r = 0; r < PetscMax(3, reps / 5); r++) PetscCall(MatMult(fmt[f].A, x, y));
  for (PetscInt b = 0; b < batches; b++) {
    for (PetscInt f = 0; f < nf; f++) {
      PetscLogDouble t0, t1;
      PetscReal      dt;
      PetscCall(GKDeviceSynchronize(gpu));
      PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
      PetscCall(PetscTime(&t0));
      for (PetscInt r = 0; r < reps; r++) PetscCall(MatMult(fmt[f].A, x, y));
      PetscCall(GKDeviceSynchronize(gpu));
      PetscCall(PetscTime(&t1));
      dt = (PetscReal)((t1 - t0) / reps);
      PetscCall(MPIU_Allreduce(&dt, &fmt[f].tbatch[b], 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
    }
  }
  for (PetscInt f = 0; f < nf; f++) {
    PetscCall(PetscSortReal(batches, fmt[f].tbatch));
    fmt[f].tmin = fmt[f].tbatch[0];
    fmt[f].tmed = batches % 2 ? fmt[f].tbatch[batches / 2] : 0.5 * (fmt[f].tbatch[batches / 2 - 1] + fmt[f].tbatch[batches / 2]);
  }
  /* KSPSolve per iteration: a fixed number of GMRES(30) + Jacobi iterations (no convergence test), fastest of 3 */
  if (kspits > 0) {
    for (PetscInt f = 0; f < nf; f++) {
      KSP ksp;
      PC  pc;
      Vec b, u;
      PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
      PetscCall(KSPSetOptionsPrefix(ksp, "bench_"));
      PetscCall(KSPSetOperators(ksp, fmt[f].A, fmt[f].A));
      PetscCall(KSPSetType(ksp, KSPGMRES));
      PetscCall(KSPGMRESSetRestart(ksp, 30));
      PetscCall(KSPGetPC(ksp, &pc));
      PetscCall(PCSetType(pc, PCJACOBI));
      PetscCall(KSPSetTolerances(ksp, 0.0, 0.0, PETSC_DEFAULT, kspits));
      PetscCall(KSPSetConvergenceTest(ksp, KSPConvergedSkip, NULL, NULL));
      PetscCall(KSPSetFromOptions(ksp));
      PetscCall(MatCreateVecs(fmt[f].A, &u, &b));
      PetscCall(VecCopy(x, b));
      PetscCall(KSPSetUp(ksp));
      fmt[f].kspit = PETSC_MAX_REAL;
      for (PetscInt r = 0; r < 4; r++) { /* the first is a warm-up */
        PetscLogDouble t0, t1;
        PetscInt       its;
        PetscReal      dt;
        PetscCall(VecSet(u, 0.0));
        PetscCall(GKDeviceSynchronize(gpu));
        PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
        PetscCall(PetscTime(&t0));
        PetscCall(KSPSolve(ksp, b, u));
        PetscCall(GKDeviceSynchronize(gpu));
        PetscCall(PetscTime(&t1));
        PetscCall(KSPGetIterationNumber(ksp, &its));
        PetscCheck(its > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "KSPSolve with %s did no iteration", fmt[f].kind->name);
        dt = (PetscReal)((t1 - t0) / its);
        PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &dt, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
        if (r) fmt[f].kspit = PetscMin(fmt[f].kspit, dt);
      }
      PetscCall(VecDestroy(&u));
      PetscCall(VecDestroy(&b));
      PetscCall(KSPDestroy(&ksp));
    }
  }
  if (gpu) {
    PetscCall(CopyBandwidth(copyn, 20, PetscMax(batches, 5), rnd, &copy_gbps));
    PetscCall(GKDeviceName(device, sizeof(device)));
  }

  /* report */
  envdate = getenv("GPUKIT_DATE");
  if (envdate && envdate[0]) PetscCall(PetscStrncpy(date, envdate, sizeof(date)));
  else {
    time_t now = time(NULL);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
  }
  PetscCall(PetscSNPrintf(version, sizeof(version), "%d.%d.%d", PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR));
  PetscCall(PetscSNPrintf(vsb, sizeof(vsb), "vs_%s", baseline));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s; setup (DMCreateMatrix, fill, assembly):", gpu ? device : "host"));
  for (PetscInt f = 0; f < nf; f++) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %s %.2f s%s", fmt[f].kind->name, fmt[f].tsetup, f < nf - 1 ? "," : ""));
  if (gpu) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "; copy bandwidth %.0f GB/s (VecCopy, %" PetscInt_FMT " entries a rank)", (double)copy_gbps, copyn));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n%-22s %5s %-11s %9s %10s %9s %9s %8s%s %10s %8s%s\n", "case", "ranks", "format", "rows", "nnz", "time_ms", "GFlop/s", "GB/s", gpu ? "  %copy" : "", "memory_MB", vsb, ibaij >= 0 ? "  vs_baij" : ""));
  for (PetscInt f = 0; f < nf; f++) {
    char pct[16] = "", vsbaij[16] = "";
    if (gpu) PetscCall(PetscSNPrintf(pct, sizeof(pct), " %5.1f%%", 100.0 * 1e-9 * fmt[f].moved / fmt[f].tmin / copy_gbps));
    if (ibaij >= 0) PetscCall(PetscSNPrintf(vsbaij, sizeof(vsbaij), " %8.2f", (double)(fmt[ibaij].tmin / fmt[f].tmin)));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-22s %5d %-11s %9" PetscInt_FMT " %10.0f %9.3f %9.3f %8.1f%s %10.2f %8.2f%s\n", casename, size, fmt[f].kind->name, rows, nnz, 1e3 * fmt[f].tmin, 1e-9 * flops / fmt[f].tmin, 1e-9 * fmt[f].moved / fmt[f].tmin, pct, fmt[f].bytes / 1048576.0,
                          (double)(fmt[ib].tmin / fmt[f].tmin), vsbaij));
  }
  if (kspits > 0)
    for (PetscInt f = 0; f < nf; f++) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-22s %5d %-11s KSPSolve GMRES(30)+Jacobi: %.4f ms per iteration, %.2fx %s\n", casename, size, fmt[f].kind->name, 1e3 * (double)fmt[f].kspit, (double)(fmt[ib].kspit / fmt[f].kspit), baseline));
  if (hasjson && json[0]) {
    FILE *fp;
    PetscCall(PetscFOpen(PETSC_COMM_WORLD, json, "a", &fp));
    if (rank == 0) {
      for (PetscInt f = 0; f < nf; f++) {
        MatType   type;
        PetscReal gbps = (PetscReal)(1e-9 * fmt[f].moved / fmt[f].tmin), sb = fmt[ib].tmin / fmt[f].tmin;
        PetscCall(MatGetType(fmt[f].A, &type));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "{"));
        PetscCall(GKJSONString(fp, "bench", "sgdia_mult", PETSC_FALSE));
        PetscCall(GKJSONString(fp, "case", casename, PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"nranks\": %d, \"dim\": %" PetscInt_FMT ", \"dof\": %" PetscInt_FMT ", ", size, dim, dof));
        PetscCall(GKJSONString(fp, "stencil", stencils[sidx], PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"stencil_points\": %" PetscInt_FMT ", \"n\": %" PetscInt_FMT ", \"rows\": %" PetscInt_FMT ", \"nnz\": %.0f, ", k, n, rows, nnz));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"grid\": \"%" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT "\", \"procs\": \"%" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT "\", ", dim == 3 ? nxyz[0] : n, dim == 3 ? nxyz[1] : n, dim == 3 ? nxyz[2] : 1, procs[0], procs[1], procs[2]));
        PetscCall(GKJSONString(fp, "format", fmt[f].kind->name, PETSC_FALSE));
        PetscCall(GKJSONString(fp, "mat_type", type, PETSC_FALSE));
        PetscCall(GKJSONString(fp, "ours", fmt[0].kind->name, PETSC_FALSE));
        PetscCall(GKJSONString(fp, "baseline", baseline, PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"time_ms\": %.6g, \"time_ms_median\": %.6g, \"gflops\": %.6g, \"memory_bytes\": %.0f, ", 1e3 * fmt[f].tmin, 1e3 * fmt[f].tmed, 1e-9 * flops / fmt[f].tmin, fmt[f].bytes));
        PetscCall(GKJSONString(fp, "memory_source", fmt[f].memsrc, PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"bytes_moved\": %.0f, \"gbps\": %.6g, ", fmt[f].moved, (double)gbps));
        PetscCall(JSONNumber(fp, "copy_gbps", copy_gbps, gpu, PETSC_FALSE));
        PetscCall(JSONNumber(fp, "frac_copy_bw", gbps / copy_gbps, gpu, PETSC_FALSE));
        PetscCall(JSONNumber(fp, "speedup_vs_baseline", sb, PETSC_TRUE, PETSC_FALSE));
        if (gpu) PetscCall(JSONNumber(fp, "speedup_vs_aijcusparse", sb, PETSC_TRUE, PETSC_FALSE));
        else {
          PetscCall(JSONNumber(fp, "speedup_vs_aij", sb, PETSC_TRUE, PETSC_FALSE));
          PetscCall(JSONNumber(fp, "speedup_vs_baij", ibaij >= 0 ? fmt[ibaij].tmin / fmt[f].tmin : 0, (PetscBool)(ibaij >= 0), PETSC_FALSE));
        }
        PetscCall(JSONNumber(fp, "ksp_ms_per_it", 1e3 * fmt[f].kspit, (PetscBool)(kspits > 0), PETSC_FALSE));
        PetscCall(JSONNumber(fp, "ksp_speedup_vs_baseline", kspits > 0 ? fmt[ib].kspit / fmt[f].kspit : 0, (PetscBool)(kspits > 0), PETSC_FALSE));
        PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\"setup_s\": %.3g, \"reps\": %" PetscInt_FMT ", \"batches\": %" PetscInt_FMT ", ", fmt[f].tsetup, reps, batches));
        PetscCall(GKJSONRunInfo(fp, version, date, device));
      }
    }
    PetscCall(PetscFClose(PETSC_COMM_WORLD, fp));
  }

  for (PetscInt f = 0; f < nf; f++) {
    PetscCall(MatDestroy(&fmt[f].A));
    PetscCall(PetscFree(fmt[f].tbatch));
    PetscCall(PetscFree(names[f]));
  }
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yref));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
