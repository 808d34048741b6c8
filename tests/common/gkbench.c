/* Helpers shared by gpukit's benchmark programs (bench/): device timing and JSON records. */
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
