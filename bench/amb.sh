#!/usr/bin/env bash
# MATAMBCUDA benchmark (bench/amb_bench.c) on gpukit's generated large matrices (tests/common/gkgen.c), one MPI rank:
# FP64 MatMult of ambcuda, ambcuda_single (-mat_amb_values single), ambcuda_det (-mat_amb_deterministic) against
# aijcusparse (the baseline), sellcuda, cuSPARSE SELL (CUSPARSE_SPMV_SELL_ALG1) and cuSPARSE BSR (blocked matrices);
# MatMultTranspose; conversion and values refresh in SpMVs; KSPSolve per iteration (GMRES(30), CG on SPD cases);
# each case with the copy bandwidth (VecCopy) measured in the same run. One process per matrix (a per-case timeout),
# the matrices generated on the host (about 1-9 s each at scale 3).
#
#   bash bench/amb.sh            on the GPU machine, after tests/gpu/run built $OBJDIR (else it builds the binary)
#
# Writes bench/results/amb/amb-<YYYY-MM-DD>.jsonl (one record a line; a second run on the same day replaces it; a
# subdirectory, so bench/report.py's sgdia tables do not pick the records up), copies it to $OUT when set, and
# prints a summary; then `python3 bench/report_formats.py` writes the markdown section and plots.
# Environment: OBJDIR (build/gpu), LIBDIR ($OBJDIR/lib), PETSC_DIR (the PETSc $OBJDIR was built against, else
# gpucarry/petsc-cuda, else deps/petsc-cuda); GPUKIT_AMB_SCALE (3) generator scale; GPUKIT_AMB_MATRICES (all 13, the
# order below); GPUKIT_AMB_FORMATS (the default GPU list of amb_bench); GPUKIT_BENCH_BATCHES (7); GPUKIT_CASE_TIMEOUT
# (150; stencil27 passed 90 s in a call whose host also ran 4 test groups) seconds per matrix; GPUKIT_AMB_BUDGET
# (280) seconds for all matrices: later ones are skipped once it is spent;
# GPUKIT_AMB_OPTIONS more options for every run (e.g. -ksp_its 0 -refresh 0 for a MatMult-only run);
# GPUKIT_COMMIT and GPUKIT_SOURCE_STATE when the working tree has no .git (pass them from the dev machine);
# GPUKIT_AMB_OUT another record file (instead of bench/results/amb/amb-<date>.jsonl);
# GPUKIT_AMB_GPUS=n (n > 1, or "all"): the matrices dealt round-robin to n GPUs (the first n of CUDA_VISIBLE_DEVICES
# when set, else of nvidia-smi -L), one run of this script per GPU at the same time (its own budget), their records
# joined into the one file.
# Every record's formats and baseline still ran on one GPU, in one process.
# About 4-5 minutes on an H100 host (16 cores) at scale 3 for the first 6 matrices; all 13 in about that on 4 GPUs.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
source "$top/scripts/mpienv.sh"
objdir=${OBJDIR:-build/gpu}
libdir=${LIBDIR:-$objdir/lib}
PETSC_DIR=${PETSC_DIR:-$(cat "$objdir/.petsc-prefix" 2>/dev/null || { [ -d "$top/gpucarry/petsc-cuda" ] && echo "$top/gpucarry/petsc-cuda"; } || echo "$top/deps/petsc-cuda")}
export PETSC_DIR PETSC_ARCH=
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
cudalib=$CUDA_HOME/lib64
[ -d "$cudalib" ] || cudalib=$CUDA_HOME/lib
export LD_LIBRARY_PATH=$PETSC_DIR/lib:$cudalib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -d "$top/gpucarry/extra-libs" ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$top/gpucarry/extra-libs LIBRARY_PATH=$top/gpucarry/extra-libs${LIBRARY_PATH:+:$LIBRARY_PATH}
scale=${GPUKIT_AMB_SCALE:-3}
matrices=${GPUKIT_AMB_MATRICES-stencil7 stencil27 stencil7_perm fem_p1 fem_p2 fem_elast band_wide powerlaw powerlaw_band rmat20 rmat22 circuit lp_rect}
formats=${GPUKIT_AMB_FORMATS:-}
batches=${GPUKIT_BENCH_BATCHES:-7}
case_timeout=${GPUKIT_CASE_TIMEOUT:-150}
budget=${GPUKIT_AMB_BUDGET:-280}
bin=$objdir/bench/amb_bench
t0=$SECONDS

if [ ! -x "$bin" ] || [ bench/amb_bench.c -nt "$bin" ] || [ tests/common/gkgen.c -nt "$bin" ]; then
  if ! timeout 300 make --no-print-directory PETSC_DIR="$PETSC_DIR" PETSC_ARCH= OBJDIR="$objdir" LIBDIR="$libdir" -j"$(nproc)" "$bin"; then
    echo "bench/amb.sh: building $bin against $PETSC_DIR failed (or timed out); nothing measured" >&2
    exit 1
  fi
fi
grep -qs '^#define PETSC_HAVE_CUDA 1' "$PETSC_DIR/include/petscconf.h" || {
  echo "bench/amb.sh: the PETSc at $PETSC_DIR has no CUDA; set PETSC_DIR to a CUDA PETSc" >&2
  exit 1
}

tbuild=$((SECONDS - t0))
source "$top/bench/deal.sh"
mkdir -p bench/results/amb
# shellcheck disable=SC2086
gk_deal_gpus bench/amb.sh "$0" "${GPUKIT_AMB_GPUS:-1}" GPUKIT_AMB "${GPUKIT_AMB_OUT:-bench/results/amb/amb-$(date -u +%Y-%m-%d).jsonl}" $matrices
rc=$?
[ $rc -ne 2 ] && exit $rc # 2: one GPU, measured here
t0=$SECONDS # the budget counts the measurements, not the build
source "$top/bench/runinfo.sh" # commit, GPUKIT_COMMIT, GPUKIT_SOURCE_STATE, GPUKIT_HOST, ...
export GPUKIT_DEVICE=$(timeout 30 nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -n 1)
mkdir -p bench/results/amb
out=${GPUKIT_AMB_OUT:-bench/results/amb/amb-$(date -u +%Y-%m-%d).jsonl}
tmp=$(mktemp "${TMPDIR:-/tmp}/gpukit-amb.XXXXXX")
trap 'rm -f "$tmp"' EXIT
echo "gpukit MATAMB benchmark: commit $GPUKIT_COMMIT (library sources: $GPUKIT_SOURCE_STATE), $GPUKIT_HOST ($GPUKIT_MACHINE), ${GPUKIT_DEVICE:-no GPU seen by nvidia-smi}, PETSc at $PETSC_DIR, scale $scale, $GPUKIT_DATE"
failed=0
skipped=""
for m in $matrices; do
  if [ $((SECONDS - t0)) -ge "$budget" ]; then
    skipped="$skipped $m"
    continue
  fi
  s=$SECONDS
  # shellcheck disable=SC2086
  timeout "$case_timeout" "$bin" -matrices "$m" -scale "$scale" ${formats:+-formats $formats} -batches "$batches" -use_gpu_aware_mpi 0 ${GPUKIT_AMB_OPTIONS:-} -json "$tmp" </dev/null
  rc=$?
  if [ $rc -ne 0 ]; then
    [ $rc -eq 124 ] && why="timed out after ${case_timeout}s" || why="exit $rc"
    echo "bench/amb.sh: matrix $m failed ($why); its records are missing or partial" >&2
    failed=1
  else
    echo "(matrix $m took $((SECONDS - s)) s)"
  fi
done
[ -n "$skipped" ] && echo "bench/amb.sh: budget of ${budget}s spent; skipped:$skipped" >&2
if [ ! -s "$tmp" ]; then
  echo "bench/amb.sh: no record; nothing written" >&2
  exit 1
fi
cp "$tmp" "$out"
[ -n "${OUT:-}" ] && cp "$out" "$OUT/"
echo "== $out ($(wc -l <"$out") records${OUT:+, copied to \$OUT})"
if [ -z "${GPUKIT_AMB_PART:-}" ] && command -v python3 >/dev/null 2>&1; then # a part of a run on several GPUs: the whole prints it
  python3 bench/report_formats.py --print "$out" || true
fi
echo "bench/amb.sh: $((SECONDS - t0)) s in all (+ ${tbuild} s building)"
exit $failed
