#!/usr/bin/env bash
# One call on a 2- or 4-GPU machine (nvidia-h100-x2 / -x4): build everything with tests/gpu/run and run, one MPI rank
# per GPU, tests/gpu/multi.list (which GPU each rank uses) and every multi-rank line of the GPU suite (names with
# np2, np3, ...: with PETSc's rule device = rank % GPUs they now run on separate GPUs), then bench/multigpu.sh (weak and
# strong scaling against MPIAIJCUSPARSE and KSPCG, the driven cavity with -use_gpu and PCGSAI's set-up on 1/2/4 GPUs).
#
#   bash tests/gpu/multi.sh
#
# Environment: everything tests/gpu/run takes (GPUKIT_TEST_TIMEOUT, ...); GPUKIT_MULTI_TESTS (default the regex
# 'np[2-9]|^multi_'); GPUKIT_SKIP_MULTI_BENCH=1 skips the benchmarks; bench/multigpu.sh's variables.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
export NCCL_NVLS_ENABLE=0
rc=0
GPUKIT_SKIP_BENCH=1 GPUKIT_TEST_FILTER="${GPUKIT_MULTI_TESTS:-np[2-9]|^multi_}" bash tests/gpu/run || rc=1
if [ "${GPUKIT_SKIP_MULTI_BENCH:-0}" != 1 ]; then
  export PETSC_DIR=${PETSC_DIR:-$top/gpucarry/petsc-cuda}
  timeout 400 make --no-print-directory PETSC_DIR="$PETSC_DIR" PETSC_ARCH= OBJDIR=build/gpu LIBDIR=build/gpu/lib build/gpu/bench/sgdia_mult build/gpu/bench/cacg_bench >/dev/null || { echo "multi.sh: building the benchmarks failed" >&2; exit 1; }
  # the cavity and GSAI sections' programs (tests/gpu/run built them already where they build; without them
  # bench/multigpu.sh skips those sections and says so)
  timeout 600 make --no-print-directory PETSC_DIR="$PETSC_DIR" PETSC_ARCH= OBJDIR=build/gpu LIBDIR=build/gpu/lib build/gpu/examples/cavity build/gpu/examples/poisson build/gpu/tests/cavity/cavity_vecdiff >/dev/null || echo "multi.sh: building examples/cavity, examples/poisson or cavity_vecdiff failed" >&2
  bash bench/multigpu.sh || rc=1
fi
exit $rc
