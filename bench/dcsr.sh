#!/usr/bin/env bash
# MATDCSRCUDA benchmark (bench/dcsr_bench.c, issue 17's protocols) against MATAIJCUSPARSE, one MPI rank, on
# gpukit's generated matrices (tests/common/gkgen.c): streaming insertion of batches of 0.1%, 1%, 10% of nnz
# (AIJCUSPARSE: MatSetValues with MAT_NEW_NONZERO_ALLOCATION_ERR false, extrapolated from a timed sample of entries,
# and the COO rebuild; DCSRCUDA: MatSetValues + assembly and MatDCSRSetValuesCOODevice), the iterative protocol
# (50 x [0.2% new entries, 5 MatMult]), SpMV fragmented / defragmented / AIJCUSPARSE, defragmentation cost, memory.
#
#   bash bench/dcsr.sh           on the GPU machine, after tests/gpu/run built $OBJDIR (else it builds the binary)
#
# Writes bench/results/dcsr/dcsr-<YYYY-MM-DD>.jsonl (one record a line; a second run on the same day replaces it),
# copies it to $OUT when set and prints a summary (python3 bench/report_formats.py).
# Environment: OBJDIR (build/gpu), LIBDIR, PETSC_DIR as in bench/amb.sh; GPUKIT_DCSR_MATRICES (name:scale list,
# default "stencil7:2 powerlaw:3 rmat20:2 fem_p1:2": 3.5M, 17M, 3.6M, 2.9M nonzeros); GPUKIT_DCSR_OPTIONS more
# options (e.g. -iter_steps 20); GPUKIT_CASE_TIMEOUT (240; powerlaw:3 takes about 150 s, most of it the 50 COO rebuilds of the baseline) seconds per matrix; GPUKIT_DCSR_BUDGET (280) seconds for
# all: later matrices are skipped once it is spent; GPUKIT_DCSR_OUT another record file (e.g. for runs side by side on
# several GPUs); GPUKIT_COMMIT, GPUKIT_SOURCE_STATE as in bench/gpu.sh; GPUKIT_DCSR_GPUS=n (n > 1, or "all"): the
# matrices dealt round-robin to n GPUs, one run of this script per GPU at the same time (bench/deal.sh; each its own
# budget), the records joined into the one file.
# The generated large set of issue 15 at scale 3 on 4 GPUs, the COO rebuild baseline timed on one step in 5:
#   GPUKIT_DCSR_GPUS=all GPUKIT_DCSR_OPTIONS="-iter_coo_sample 5" GPUKIT_DCSR_MATRICES="stencil7:3 stencil27:3
#   stencil7_perm:3 fem_p1:3 fem_p2:3 fem_elast:3 band_wide:3 powerlaw:3 powerlaw_band:3 rmat20:3 rmat22:3 circuit:3
#   lp_rect:3" GPUKIT_CASE_TIMEOUT=300 GPUKIT_DCSR_BUDGET=500 bash bench/dcsr.sh
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
matrices=${GPUKIT_DCSR_MATRICES-stencil7:2 powerlaw:3 rmat20:2 fem_p1:2}
case_timeout=${GPUKIT_CASE_TIMEOUT:-240}
budget=${GPUKIT_DCSR_BUDGET:-280}
bin=$objdir/bench/dcsr_bench
t0=$SECONDS

if [ ! -x "$bin" ] || [ bench/dcsr_bench.c -nt "$bin" ] || [ tests/common/gkgen.c -nt "$bin" ]; then
  if ! timeout 300 make --no-print-directory PETSC_DIR="$PETSC_DIR" PETSC_ARCH= OBJDIR="$objdir" LIBDIR="$libdir" -j"$(nproc)" "$bin"; then
    echo "bench/dcsr.sh: building $bin against $PETSC_DIR failed (or timed out); nothing measured" >&2
    exit 1
  fi
fi
grep -qs '^#define PETSC_HAVE_CUDA 1' "$PETSC_DIR/include/petscconf.h" || {
  echo "bench/dcsr.sh: the PETSc at $PETSC_DIR has no CUDA; set PETSC_DIR to a CUDA PETSc" >&2
  exit 1
}
tbuild=$((SECONDS - t0))
source "$top/bench/deal.sh"
mkdir -p bench/results/dcsr
# shellcheck disable=SC2086
gk_deal_gpus bench/dcsr.sh "$0" "${GPUKIT_DCSR_GPUS:-1}" GPUKIT_DCSR "${GPUKIT_DCSR_OUT:-bench/results/dcsr/dcsr-$(date -u +%Y-%m-%d).jsonl}" $matrices
rc=$?
[ $rc -ne 2 ] && exit $rc # 2: one GPU, measured here
t0=$SECONDS # the budget counts the measurements, not the build
source "$top/bench/runinfo.sh"
export GPUKIT_DEVICE=$(timeout 30 nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -n 1)
mkdir -p bench/results/dcsr
out=${GPUKIT_DCSR_OUT:-bench/results/dcsr/dcsr-$(date -u +%Y-%m-%d).jsonl}
tmp=$(mktemp "${TMPDIR:-/tmp}/gpukit-dcsr.XXXXXX")
trap 'rm -f "$tmp"' EXIT
echo "gpukit MATDCSR benchmark: commit $GPUKIT_COMMIT (library sources: $GPUKIT_SOURCE_STATE), $GPUKIT_HOST ($GPUKIT_MACHINE), ${GPUKIT_DEVICE:-no GPU seen by nvidia-smi}, PETSc at $PETSC_DIR, $GPUKIT_DATE"
failed=0
skipped=""
for m in $matrices; do
  if [ $((SECONDS - t0)) -ge "$budget" ]; then
    skipped="$skipped $m"
    continue
  fi
  s=$SECONDS
  # shellcheck disable=SC2086
  timeout "$case_timeout" "$bin" -matrices "$m" -formats dcsrcuda,aijcusparse -use_gpu_aware_mpi 0 ${GPUKIT_DCSR_OPTIONS:-} -json "$tmp" </dev/null
  rc=$?
  if [ $rc -ne 0 ]; then
    [ $rc -eq 124 ] && why="timed out after ${case_timeout}s" || why="exit $rc"
    echo "bench/dcsr.sh: matrix $m failed ($why); its records are missing or partial" >&2
    failed=1
  else
    echo "(matrix $m took $((SECONDS - s)) s)"
  fi
done
[ -n "$skipped" ] && echo "bench/dcsr.sh: budget of ${budget}s spent; skipped:$skipped" >&2
if [ ! -s "$tmp" ]; then
  echo "bench/dcsr.sh: no record; nothing written" >&2
  exit 1
fi
cp "$tmp" "$out"
[ -n "${OUT:-}" ] && cp "$out" "$OUT/"
echo "== $out ($(wc -l <"$out") records${OUT:+, copied to \$OUT})"
if [ -z "${GPUKIT_DCSR_PART:-}" ] && command -v python3 >/dev/null 2>&1; then # a part of a run on several GPUs: the whole prints it
  python3 bench/report_formats.py --print "$out" || true
fi
echo "bench/dcsr.sh: $((SECONDS - t0)) s in all (+ ${tbuild} s building)"
exit $failed
