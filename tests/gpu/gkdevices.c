static const char help[] = "Which GPU each MPI rank uses: PETSc's rule (device = rank in PETSC_COMM_WORLD modulo the number of visible\n"
                           "devices, unless -device_select is given) must hold, and with at most as many ranks as GPUs every rank must\n"
                           "have a GPU of its own (distinct PCI bus ids). Prints one line per rank and a vector check on every device.\n\n"
                           "  -expect_distinct 0|1   require distinct GPUs (default 1 when ranks <= devices)\n";

#include "gktest.h"
#if PetscDefined(HAVE_CUDA)
  #include <petscdevice_cuda.h>
#endif

int main(int argc, char **argv)
{
  PetscMPIInt rank, size;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
#if PetscDefined(HAVE_CUDA)
  {
    Vec       v;
    PetscReal nrm, want;
    int       dev = -1, ndev = 0;
    char      bus[32] = "", *all = NULL, name[256] = "";
    PetscBool distinct;
    struct cudaDeviceProp prop;

    /* a CUDA vector initialises PETSc's device (lazily, as every program does) */
    PetscCall(VecCreate(PETSC_COMM_WORLD, &v));
    PetscCall(VecSetSizes(v, 1000, PETSC_DECIDE));
    PetscCall(VecSetType(v, VECCUDA));
    PetscCall(VecSet(v, 1.0));
    PetscCall(VecNorm(v, NORM_1, &nrm));
    want = 1000.0 * size;
    PetscCheck(PetscAbsReal(nrm - want) <= 1e-12 * want, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "VecNorm on the devices gave %g, expected %g", (double)nrm, (double)want);
    PetscCallCUDA(cudaGetDevice(&dev));
    PetscCallCUDA(cudaGetDeviceCount(&ndev));
    PetscCallCUDA(cudaDeviceGetPCIBusId(bus, (int)sizeof(bus), dev));
    PetscCallCUDA(cudaGetDeviceProperties(&prop, dev));
    PetscCall(PetscStrncpy(name, prop.name, sizeof(name)));
    PetscCall(PetscSynchronizedPrintf(PETSC_COMM_WORLD, "gkdevices: rank %d of %d uses device %d of %d (PCI %s, %s)\n", rank, size, dev, ndev, bus, name));
    PetscCall(PetscSynchronizedFlush(PETSC_COMM_WORLD, PETSC_STDOUT));
    PetscCheck(ndev > 0 && dev == rank % ndev, PETSC_COMM_SELF, PETSC_ERR_PLIB, "rank %d uses device %d, PETSc's rule (rank %% %d devices) gives %d", rank, dev, ndev, ndev > 0 ? rank % ndev : -1);
    distinct = (PetscBool)(size <= ndev);
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_distinct", &distinct, NULL));
    PetscCall(PetscMalloc1(32 * (size_t)size, &all));
    PetscCallMPI(MPI_Allgather(bus, 32, MPI_CHAR, all, 32, MPI_CHAR, PETSC_COMM_WORLD));
    if (distinct)
      for (PetscMPIInt r = 0; r < size; r++)
        for (PetscMPIInt s = r + 1; s < size; s++) {
          PetscBool same;
          PetscCall(PetscStrcmp(all + 32 * r, all + 32 * s, &same));
          PetscCheck(!same, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "ranks %d and %d share the GPU at PCI %s although there are %d GPUs for %d ranks", r, s, all + 32 * r, ndev, size);
        }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "gkdevices: %d rank(s), %d device(s) visible, %s; vector norm on the devices correct\n", size, ndev, distinct ? "every rank on its own GPU" : "ranks share GPUs (more ranks than GPUs)"));
    PetscCall(PetscFree(all));
    PetscCall(VecDestroy(&v));
  }
#else
  SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_SUP, "gkdevices needs a PETSc with CUDA (it checks which GPU each rank uses)");
#endif
  PetscCall(PetscFinalize());
  return 0;
}
