#!/usr/bin/env bash
# gpukit CPU benchmarks (run by `make bench`, which builds build/bench/* first).
#
# Runs MatMult of MATSGDIA against MATAIJ and MATBAIJ (bench/sgdia_mult.c) on 1 and 2 MPI ranks for
#   3D 7-point, dof 1, n = 64 and 96        2D 5-point, dof 4, n = 256 and 512
# writes the records to bench/results/cpu-<YYYY-MM-DD>.json (a JSON list; a second run on the same day
# replaces it) and regenerates docs/performance.md with bench/report.py. About a minute or two on 2 cores.
#
# Environment: MPIEXEC (default mpiexec); GPUKIT_BENCH_BATCHES (default 15) timed batches per format, of which the
# fastest counts, so that a short interruption by another process does not show; OBJDIR (default build, as in the
# makefile, which passes `make bench OBJDIR=...` on) where the benchmark binaries are.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
source "$top/scripts/mpienv.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
batches=${GPUKIT_BENCH_BATCHES:-15}
objdir=${OBJDIR:-build}
case $objdir in /*) ;; *) objdir=$top/$objdir ;; esac
bin=$objdir/bench/sgdia_mult
[ -x "$bin" ] || { echo "bench/run.sh: $bin is missing; run 'make bench' (it builds the benchmarks first)" >&2; exit 1; }

source "$top/bench/runinfo.sh" # commit, GPUKIT_COMMIT, GPUKIT_SOURCE_STATE, GPUKIT_HOST, ...

mkdir -p bench/results
out=bench/results/cpu-$(date -u +%Y-%m-%d).json
tmp=$(mktemp "${TMPDIR:-/tmp}/gpukit-bench.XXXXXX")
trap 'rm -f "$tmp"' EXIT

# case: options and MatMult calls per timed batch (about 50-100 ms a batch for AIJ on one core)
cases=(
  "-dim 3 -dof 1 -stencil star -n 64  -reps 40"
  "-dim 3 -dof 1 -stencil star -n 96  -reps 10"
  "-dim 2 -dof 4 -stencil star -n 256 -reps 10"
  "-dim 2 -dof 4 -stencil star -n 512 -reps 3"
)
echo "gpukit CPU benchmarks: commit $GPUKIT_COMMIT (library sources: $GPUKIT_SOURCE_STATE), $GPUKIT_HOST ($GPUKIT_MACHINE), $GPUKIT_DATE"
if awk -v l="$GPUKIT_LOAD" 'BEGIN { exit !(l + 0 > 0.5) }'; then
  echo "bench/run.sh: warning: load average $GPUKIT_LOAD before starting; other processes share the cores and the times will be noisy" >&2
fi
start=$(date +%s)
for np in 1 2; do
  for c in "${cases[@]}"; do
    # shellcheck disable=SC2086
    $MPIEXEC -n "$np" "$bin" $c -batches "$batches" -json "$tmp" || {
      echo "bench/run.sh: '$MPIEXEC -n $np $bin $c' failed; nothing written to $out" >&2
      exit 1
    }
  done
done
{ echo "["; sed '$!s/$/,/' "$tmp"; echo "]"; } >"$out"
echo "benchmarks took $(($(date +%s) - start)) s; $(wc -l <"$tmp") records in $out"

if command -v python3 >/dev/null 2>&1; then
  python3 bench/report.py
else
  echo "bench/run.sh: no python3, so docs/performance.md was not regenerated (run 'python3 bench/report.py')" >&2
fi
