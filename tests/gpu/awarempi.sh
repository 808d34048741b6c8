# Sourced on the GPU machine (after tests/gpu/run has built everything with the machine's own MPI): puts the carried
# CUDA-aware Open MPI (gpucarry/ompi, from 'make ompi-cuda' and tests/gpu/pack.sh) in front of the machine's MPI, so
# that mpiexec, PETSc, gpukit and the tests run on it (the same libmpi.so.40 ABI), e.g.
#
#   source tests/gpu/awarempi.sh && GPUKIT_GPU_AWARE_MPI=1 bash tests/gpu/parallel.sh 'np[2-9]'
#   source tests/gpu/awarempi.sh && bash bench/multigpu.sh     # adds the -use_gpu_aware_mpi 1 runs
#
# Returns non-zero, changing nothing, when gpucarry/ompi is missing or is not CUDA-aware.
gk_aware_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ ! -x "$gk_aware_top/gpucarry/ompi/bin/mpiexec" ]; then
  echo "awarempi.sh: no gpucarry/ompi (build it with 'make ompi-cuda', then run tests/gpu/pack.sh)" >&2
  return 1
fi
if [ "$(OPAL_PREFIX=$gk_aware_top/gpucarry/ompi LD_LIBRARY_PATH=$gk_aware_top/gpucarry/ompi/lib "$gk_aware_top/gpucarry/ompi/bin/ompi_info" --parsable --all 2>/dev/null | grep -c 'mpi_built_with_cuda_support:value:true')" -eq 0 ]; then
  echo "awarempi.sh: gpucarry/ompi is not CUDA-aware (ompi_info)" >&2
  return 1
fi
export OPAL_PREFIX=$gk_aware_top/gpucarry/ompi # the prefix was built elsewhere: Open MPI finds its parts here
export PATH=$OPAL_PREFIX/bin:$PATH LD_LIBRARY_PATH=$OPAL_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "awarempi.sh: $(mpiexec --version 2>&1 | head -n 1), CUDA-aware, from $OPAL_PREFIX"
