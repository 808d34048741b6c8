#!/usr/bin/env bash
# The GPU suite in several groups at once on one machine, after tests/gpu/run has set the machine up and built
# everything into build/gpu (run it first, e.g. with GPUKIT_TEST_FILTER='^multi_devices_np1$' GPUKIT_SKIP_BENCH=1):
#
#   bash tests/gpu/parallel.sh 'regex1' 'regex2' ...
#
# Each regex is one group (tests/run.sh with GPUKIT_TEST_FILTER=regex, GPUKIT_GPU=1); the groups run concurrently
# on the same GPU(s) (the tests are small; timing tests may take longer but check behaviour, not speed). Prints each
# group's last lines and the failed tests; exit 0 only when every group passed. Logs: $OUT/<n>.log when OUT is set,
# else build/gpu-logs/parallel-<n>.log. GPUKIT_GROUP_TIMEOUT (500 s) per group. GPUKIT_GROUP_GPUS (multi-GPU
# machines): one word per group, in order and repeated: the group's CUDA_VISIBLE_DEVICES (a GPU index: its multi-rank
# tests share that GPU; a list such as 1,2,3,0: rank r uses the r-th of the list, so one-rank tests run on the
# first and multi-rank tests have one GPU per rank) or "all"; e.g. "0,1,2,3 1,2,3,0 2,3,0,1 3,0,1,2" spreads the
# groups' one-rank tests over 4 GPUs.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
PETSC_DIR=${PETSC_DIR:-$top/gpucarry/petsc-cuda}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PETSC_DIR PETSC_ARCH= PATH=$PATH:$CUDA_HOME/bin
export LD_LIBRARY_PATH=$PETSC_DIR/lib:$CUDA_HOME/lib64:$top/gpucarry/extra-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
logs=${OUT:-$top/build/gpu-logs}
mkdir -p "$logs"
[ -f build/gpu/lib/libpetscgpukit.so ] || { echo "parallel.sh: build/gpu is not built (run tests/gpu/run first)" >&2; exit 1; }
pids=()
n=0
read -r -a ggpus <<<"${GPUKIT_GROUP_GPUS:-}"
for re in "$@"; do
  n=$((n + 1))
  vis=()
  if [ ${#ggpus[@]} -gt 0 ]; then
    g=${ggpus[$(((n - 1) % ${#ggpus[@]}))]}
    [ "$g" = all ] || vis=(CUDA_VISIBLE_DEVICES="$g")
  fi
  env "${vis[@]}" GPUKIT_GPU=1 GPUKIT_TEST_FILTER="$re" GPUKIT_BIN=$top/build/gpu/tests GPUKIT_LIB=$top/build/gpu/lib/libpetscgpukit.so \
    timeout "${GPUKIT_GROUP_TIMEOUT:-500}" bash tests/run.sh >"$logs/parallel-$n.log" 2>&1 &
  pids+=($!)
done
rc=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || rc=1
  echo "== group $((i + 1)) (${*:$((i + 1)):1}):"
  grep -E '^(FAIL|failed:)|passed, .* failed' "$logs/parallel-$((i + 1)).log" | tail -n 12
done
exit $rc
