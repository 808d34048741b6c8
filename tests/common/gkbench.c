/* Helpers shared by gpukit's benchmark programs (bench/): device timing and JSON records. */
#include <petscdmda.h>
#include "gkbench.h"
#if defined(GK_BENCH_CUDA)
  #include <petscdevice_cuda.h>
#endif

/*
  GKDeviceSynchronize - waits for every kernel and copy on the device (when gpu), so that a host clock reading
  after it counts them; an error in a build without CUDA
*/
PetscErrorCode GKDeviceSynchronize(PetscBool gpu)
{
  PetscFunctionBegin;
#if defined(GK_BENCH_CUDA)
  if (gpu) PetscCallCUDA(cudaDeviceSynchronize());
#else
  PetscCheck(!gpu, PETSC_COMM_SELF, PETSC_ERR_SUP, "No CUDA in this build");
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  GKDeviceCOOCopy - n entries (i, j, v) on the host copied to new device arrays *di, *dj, *dv (at least one element
  each), e.g. for MatDCSRSetValuesCOODevice(); the copies are complete when it returns. GKDeviceCOOFree frees them
  (NULL ones are skipped) and sets them to NULL. Errors in a build without CUDA.
*/
PetscErrorCode GKDeviceCOOCopy(PetscCount n, const PetscInt i[], const PetscInt j[], const PetscScalar v[], PetscInt **di, PetscInt **dj, PetscScalar **dv)
{
  PetscFunctionBegin;
  *di = *dj = NULL;
  *dv       = NULL;
#if defined(GK_BENCH_CUDA)
  PetscCallCUDA(cudaMalloc((void **)di, sizeof(PetscInt) * PetscMax(1, n)));
  PetscCallCUDA(cudaMalloc((void **)dj, sizeof(PetscInt) * PetscMax(1, n)));
  PetscCallCUDA(cudaMalloc((void **)dv, sizeof(PetscScalar) * PetscMax(1, n)));
  PetscCallCUDA(cudaMemcpy(*di, i, sizeof(PetscInt) * n, cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaMemcpy(*dj, j, sizeof(PetscInt) * n, cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaMemcpy(*dv, v, sizeof(PetscScalar) * n, cudaMemcpyHostToDevice));
  PetscCallCUDA(cudaDeviceSynchronize());
#else
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "No CUDA in this build");
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GKDeviceCOOFree(PetscInt **di, PetscInt **dj, PetscScalar **dv)
{
  PetscFunctionBegin;
#if defined(GK_BENCH_CUDA)
  if (*di) PetscCallCUDA(cudaFree(*di));
  if (*dj) PetscCallCUDA(cudaFree(*dj));
  if (*dv) PetscCallCUDA(cudaFree(*dv));
#else
  PetscCheck(!*di && !*dj && !*dv, PETSC_COMM_SELF, PETSC_ERR_SUP, "No CUDA in this build");
#endif
  *di = *dj = NULL;
  *dv       = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  GKDeviceName - the GPU this rank uses, from CUDA; else $GPUKIT_DEVICE, else "gpu"
*/
PetscErrorCode GKDeviceName(char *name, size_t len)
{
  const char *env = getenv("GPUKIT_DEVICE");

  PetscFunctionBegin;
  PetscCall(PetscStrncpy(name, env && env[0] ? env : "gpu", len));
#if defined(GK_BENCH_CUDA)
  {
    int                   dev;
    struct cudaDeviceProp prop;

    PetscCallCUDA(cudaGetDevice(&dev));
    PetscCallCUDA(cudaGetDeviceProperties(&prop, dev));
    PetscCall(PetscStrncpy(name, prop.name, len));
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  GKJSONString - writes "key": "s" with " and \ escaped and control characters dropped, then ", " unless last
*/
PetscErrorCode GKJSONString(FILE *fp, const char *key, const char *s, PetscBool last)
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

/*
  GKJSONRunInfo - ends a JSON record with what it says about the run: "petsc_version", "date", then "commit",
  "source_state", "host", "load_avg" and "machine" from the environment (GPUKIT_COMMIT, GPUKIT_SOURCE_STATE,
  GPUKIT_HOST, GPUKIT_LOAD, GPUKIT_MACHINE, as bench/runinfo.sh exports them; "unknown" when unset), "device",
  and the closing brace and newline
*/
PetscErrorCode GKJSONRunInfo(FILE *fp, const char *version, const char *date, const char *device)
{
  const char *env[][2] = {
    {"commit",       "GPUKIT_COMMIT"      },
    {"source_state", "GPUKIT_SOURCE_STATE"},
    {"host",         "GPUKIT_HOST"        },
    {"load_avg",     "GPUKIT_LOAD"        },
    {"machine",      "GPUKIT_MACHINE"     }
  };

  PetscFunctionBegin;
  PetscCall(GKJSONString(fp, "petsc_version", version, PETSC_FALSE));
  PetscCall(GKJSONString(fp, "date", date, PETSC_FALSE));
  for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++) {
    const char *v = getenv(env[i][1]);
    PetscCall(GKJSONString(fp, env[i][0], v ? v : "unknown", PETSC_FALSE));
  }
  PetscCall(GKJSONString(fp, "device", device, PETSC_TRUE));
  PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "}\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

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

/* A benchmark operator: every coupling of the DMDA's stencil of width 1, all dof x dof component pairs, one row
   block per owned point, with EntryValue() of the natural row and column (independent of the number of ranks);
   assembled */
PetscErrorCode GKFillStencil(DM da, Mat A)
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

