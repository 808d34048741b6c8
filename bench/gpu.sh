#!/usr/bin/env bash
# gpukit GPU benchmarks: MatMult of MATSGDIACUDA against PETSc's MATAIJCUSPARSE (bench/sgdia_mult.c with
# -formats sgdiacuda,aijcusparse, VECCUDA vectors), one MPI rank, on
#   3D 7-point 256^3 dof 1     2D 5-point 1024^2 dof 4     3D 7-point 128^3 dof 3     3D 27-point (box) 128^3 dof 1
# each with the device copy bandwidth (VecCopy) measured in the same run. Writes the records to
# bench/results/gpu-<YYYY-MM-DD>.json (a JSON list; a second run on the same day replaces it), copies that file to
# $OUT when set, prints the records and a short table, and regenerates docs/performance.md with bench/report.py.
#
#   bash bench/gpu.sh          on the GPU machine; tests/gpu/run calls it after the GPU suite, with the carried PETSc
#
# Builds $OBJDIR/bench/sgdia_mult first (tests/gpu/run builds only the library and the tests). About 2 minutes on an
# H100/H200 host, most of it assembling the matrices on the host (16.7M rows for 256^3).
# Environment: PETSC_DIR (default: the PETSc that $OBJDIR was built against, else deps/petsc-cuda), OBJDIR (build/gpu)
# and LIBDIR ($OBJDIR/lib) as in the makefile; GPUKIT_BENCH_BATCHES (10) timed batches per format, the fastest counts;
# GPUKIT_CASE_TIMEOUT (150) seconds per case; GPUKIT_BENCH_CACG=0 skips the KSPCACG runs; GPUKIT_BENCH_TUNE=0 the tuner's; GPUKIT_BENCH_OPTIONS (default -mat_sgdia_autotune) more options for every case; GPUKIT_COMMIT and GPUKIT_SOURCE_STATE when the working tree has no .git
# (the device machine's copy has none): pass them from the dev machine.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
source "$top/scripts/mpienv.sh"
objdir=${OBJDIR:-build/gpu}
libdir=${LIBDIR:-$objdir/lib}
PETSC_DIR=${PETSC_DIR:-$(cat "$objdir/.petsc-prefix" 2>/dev/null || echo "$top/deps/petsc-cuda")}
export PETSC_DIR PETSC_ARCH=
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=$PETSC_DIR/lib:$CUDA_HOME/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
batches=${GPUKIT_BENCH_BATCHES:-10}
case_timeout=${GPUKIT_CASE_TIMEOUT:-150}
bin=$objdir/bench/sgdia_mult

t0=$SECONDS
if ! timeout 300 make --no-print-directory PETSC_DIR="$PETSC_DIR" PETSC_ARCH= OBJDIR="$objdir" LIBDIR="$libdir" "$bin"; then
  echo "bench/gpu.sh: building $bin against $PETSC_DIR failed (or timed out); nothing measured" >&2
  exit 1
fi
grep -qs '^#define PETSC_HAVE_CUDA 1' "$PETSC_DIR/include/petscconf.h" || {
  echo "bench/gpu.sh: the PETSc at $PETSC_DIR has no CUDA; set PETSC_DIR to a CUDA PETSc (make petsc-cuda, or the carried gpucarry/petsc-cuda)" >&2
  exit 1
}

source "$top/bench/runinfo.sh" # commit, GPUKIT_COMMIT, GPUKIT_SOURCE_STATE, GPUKIT_HOST, ...
export GPUKIT_DEVICE=$(timeout 30 nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -n 1)
driver=$(timeout 30 nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 2>/dev/null | head -n 1)

mkdir -p bench/results
out=bench/results/gpu-$(date -u +%Y-%m-%d).json
tmp=$(mktemp "${TMPDIR:-/tmp}/gpukit-gpubench.XXXXXX")
trap 'rm -f "$tmp"' EXIT

# case: options and MatMult calls per timed batch (a batch of a few tens of ms)
cases=(
  "-dim 3 -dof 1 -stencil star -n 256  -reps 100"
  "-dim 2 -dof 4 -stencil star -n 1024 -reps 150"
  "-dim 3 -dof 3 -stencil star -n 128  -reps 100"
  "-dim 3 -dof 1 -stencil box  -n 128  -reps 200"
)
echo "gpukit GPU benchmarks: commit $GPUKIT_COMMIT (library sources: $GPUKIT_SOURCE_STATE), $GPUKIT_HOST ($GPUKIT_MACHINE), ${GPUKIT_DEVICE:-no GPU seen by nvidia-smi} (driver ${driver:-?}), PETSc at $PETSC_DIR, $GPUKIT_DATE"
failed=0
for c in "${cases[@]}"; do
  s=$SECONDS
  # shellcheck disable=SC2086
  timeout "$case_timeout" "$bin" $c -formats sgdiacuda,aijcusparse -use_gpu_aware_mpi 0 -batches "$batches" -ksp_its 60 ${GPUKIT_BENCH_OPTIONS--mat_sgdia_autotune} -json "$tmp" </dev/null
  rc=$?
  if [ $rc -ne 0 ]; then
    [ $rc -eq 124 ] && why="timed out after ${case_timeout}s" || why="exit $rc"
    echo "bench/gpu.sh: case '$c' failed ($why); its records are missing from $out" >&2
    failed=1
  else
    echo "(case took $((SECONDS - s)) s)"
  fi
done
# KSPCACG against KSPCG / KSPPIPECG / KSPGROPPCG (bench/cacg_bench.c), Jacobi, on both GPU formats: latency-bound
# (2D 256^2, 3D 33^3) to bandwidth-bound (2D 4096^2, 3D 129^3, 193^3, 257^3) grids; cacg8tuned is KSPCACG with its run-time tuner. GPUKIT_BENCH_CACG=0 skips it.
if [ "${GPUKIT_BENCH_CACG:-1}" = 1 ]; then
  cacgbin=$objdir/bench/cacg_bench
  mkdir -p bench/results/cacg
  cacgout=bench/results/cacg/gpu-$(date -u +%Y-%m-%d).jsonl
  rm -f "$cacgout"
  if timeout 300 make --no-print-directory PETSC_DIR="$PETSC_DIR" PETSC_ARCH= OBJDIR="$objdir" LIBDIR="$libdir" "$cacgbin"; then
    for c in "-dim 2 -n 256 -its 200 -rtol 1e-6" "-dim 2 -n 4096 -its 100 -rtol 1e-4" "-dim 3 -n 33 -its 200 -rtol 1e-6" "-dim 3 -n 129 -its 100 -rtol 1e-6" "-dim 3 -n 193 -its 100 -rtol 1e-4" "-dim 3 -n 257 -its 100 -rtol 1e-4"; do
      for mt in aijcusparse sgdiacuda; do
        # shellcheck disable=SC2086
        timeout "$case_timeout" "$cacgbin" $c -mat_type $mt -batches 3 -use_gpu_aware_mpi 0 -json "$cacgout" </dev/null || { echo "bench/gpu.sh: cacg case '$c' $mt failed" >&2; failed=1; }
      done
    done
    [ -n "${OUT:-}" ] && [ -f "$cacgout" ] && cp "$cacgout" "$OUT/"
  else
    echo "bench/gpu.sh: building $cacgbin failed" >&2
    failed=1
  fi
fi

# The run-time tuner (bench/tune_bench.c): for the MATSGDIACUDA product on the cases above, the greedy search against
# an exhaustive search of the same candidates, its timed calls and cost, and the cached rerun. GPUKIT_BENCH_TUNE=0
# skips it.
if [ "${GPUKIT_BENCH_TUNE:-1}" = 1 ]; then
  tunebin=$objdir/bench/tune_bench
  mkdir -p bench/results/tune
  tuneout=bench/results/tune/gpu-$(date -u +%Y-%m-%d).jsonl
  rm -f "$tuneout"
  if timeout 300 make --no-print-directory PETSC_DIR="$PETSC_DIR" PETSC_ARCH= OBJDIR="$objdir" LIBDIR="$libdir" "$tunebin"; then
    for c in "${cases[@]}"; do
      c=${c% -reps*}
      # shellcheck disable=SC2086
      timeout "$case_timeout" "$tunebin" $c -mat_type sgdiacuda -kernel sgdia_mult -use_gpu_aware_mpi 0 -json "$tuneout" </dev/null || { echo "bench/gpu.sh: tune case '$c' failed" >&2; failed=1; }
    done
    [ -n "${OUT:-}" ] && [ -f "$tuneout" ] && cp "$tuneout" "$OUT/"
  else
    echo "bench/gpu.sh: building $tunebin failed" >&2
    failed=1
  fi
fi

if [ ! -s "$tmp" ]; then
  echo "bench/gpu.sh: no case produced a record; nothing written" >&2
  exit 1
fi
{ echo "["; sed '$!s/$/,/' "$tmp"; echo "]"; } >"$out"
[ -n "${OUT:-}" ] && cp "$out" "$OUT/"
echo "== $out ($(wc -l <"$tmp") records${OUT:+, copied to \$OUT})"
cat "$out"

if command -v python3 >/dev/null 2>&1; then
  python3 - "$out" <<'EOF'
import json, sys
recs = json.load(open(sys.argv[1]))
r0 = recs[0]
print(f"== {r0['device']}, PETSc {r0['petsc_version']}, commit {r0['commit']}; copy bandwidth (VecCopy) per case: "
      + ", ".join(sorted({f"{r['copy_gbps']:.0f}" for r in recs})) + " GB/s")
print(f"{'case':<20} {'format':<12} {'time_ms':>8} {'GFlop/s':>8} {'GB/s':>7} {'%copy':>6} {'vs_aijcusparse':>14} {'ksp_ms/it':>9} {'ksp_vs':>7}")
for r in recs:
    ksp = r.get('ksp_ms_per_it')
    kt = f"{ksp:9.4f} {r['ksp_speedup_vs_baseline']:6.2f}x" if ksp else f"{'-':>9} {'-':>7}"
    print(f"{r['case']:<20} {r['format']:<12} {r['time_ms']:8.3f} {r['gflops']:8.1f} {r['gbps']:7.0f} {100 * r['frac_copy_bw']:5.1f}% {r['speedup_vs_aijcusparse']:13.2f}x {kt}")
EOF
  python3 bench/report.py
else
  echo "bench/gpu.sh: no python3: no table, and docs/performance.md was not regenerated (run 'python3 bench/report.py')" >&2
fi
echo "bench/gpu.sh: $((SECONDS - t0)) s in all"
exit $failed
