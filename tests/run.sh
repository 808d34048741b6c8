#!/usr/bin/env bash
# gpukit test runner. Runs every test listed in tests/*/*.list (or, with GPUKIT_GPU=1, tests/gpu/*.list).
#
# A list line is:   name  nranks  timeout_s  command...
# '#' starts a comment. The command runs from the repository root with $LIB (the plugin library), $BIN
# (build/tests; GPUKIT_LIB and GPUKIT_BIN override both), $TUT (PETSc's tutorial binaries, see tests/conformance/build.sh) and $MPIEXEC set; a test
# passes when it exits 0. Each test's output is kept in build/test-logs/<name>.log.
# A line whose name holds {type} runs once per line "type [ref]" of types.txt beside its list, with {type} in the
# name replaced and $type, $ref (default aij) set: a new matrix type is tested by adding its name there.
# Options: GPUKIT_TEST_FILTER=regex runs only the tests whose name matches. GPUKIT_GPU_AWARE_MPI=1 (GPU lines, under
# a CUDA-aware MPI) runs every line that passes -use_gpu_aware_mpi 0 on its command line with 1 instead (not the
# options inside a script a line calls, e.g. tests/gpu/ex19.sh).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export LIB=${GPUKIT_LIB:-$top/lib/libpetscgpukit.so} BIN=${GPUKIT_BIN:-$top/build/tests} TUT=$top/build/tutorials
source "$top/scripts/mpienv.sh"
export MPIEXEC=${MPIEXEC:-mpiexec}
logs=$top/build/test-logs
mkdir -p "$logs"
# the run-time tuner's cache (docs/tuning.md): one of the suite's own, empty at the start, never the user's
export XDG_CACHE_HOME=$top/build/test-cache
rm -rf "$XDG_CACHE_HOME"
if [ "${GPUKIT_GPU:-0}" = 1 ]; then lists=$(ls tests/gpu/*.list 2>/dev/null); else lists=$(ls tests/*/*.list | grep -v '^tests/gpu/'); fi
filter=${GPUKIT_TEST_FILTER:-.}

# the stock tutorials for the conformance suite (CPU only)
if [ "${GPUKIT_GPU:-0}" != 1 ]; then bash tests/conformance/build.sh || { echo "could not build the PETSc tutorials"; exit 1; }; fi

pass=0 fail=0 failed=()
start=$(date +%s)

# run one test: name np timeout command (type and ref, for a per-type line, in the environment)
run_one() {
  local name=$1 np=$2 tmo=$3 cmd=$4 t0 rc ms dt why
  [[ "$name" =~ $filter ]] || return 0
  [ "${GPUKIT_GPU_AWARE_MPI:-0}" = 1 ] && cmd=${cmd//-use_gpu_aware_mpi 0/-use_gpu_aware_mpi 1}
  t0=$(date +%s%N)
  timeout "$tmo" bash -c "np=$np; $cmd" >"$logs/$name.log" 2>&1 </dev/null
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  dt=$((ms / 1000)).$((ms % 1000 / 100))
  if [ $rc -eq 0 ]; then
    pass=$((pass + 1)); printf 'ok    %-48s %6ss\n' "$name" "$dt"
  else
    fail=$((fail + 1)); failed+=("$name")
    [ $rc -eq 124 ] && why="timed out after ${tmo}s" || why="exit $rc"
    printf 'FAIL  %-48s %6ss  (%s)\n' "$name" "$dt" "$why"
    tail -n 15 "$logs/$name.log" | sed 's/^/      | /'
  fi
}

for list in $lists; do
  types=$(dirname "$list")/types.txt
  while read -r name np tmo cmd; do
    case "$name" in '' | '#'*) continue ;; esac
    if [[ "$name" == *'{type}'* ]]; then
      # a per-type line: once for each line "type [ref]" of types.txt beside the list ($type and $ref set)
      [ -f "$types" ] || { echo "$list: $name needs $types"; fail=$((fail + 1)); failed+=("$name"); continue; }
      while read -r t r; do
        case "$t" in '' | '#'*) continue ;; esac
        type=$t ref=${r:-aij} run_one "${name//\{type\}/$t}" "$np" "$tmo" "export type=$t ref=${r:-aij}; $cmd" <&3
      done 3<&0 <"$types"
    else
      run_one "$name" "$np" "$tmo" "$cmd"
    fi
  done <"$list"
done
echo "suite took $(($(date +%s) - start)) s; logs in build/test-logs/"
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
