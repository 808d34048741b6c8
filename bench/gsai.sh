#!/usr/bin/env bash
# PCGSAI benchmark runs (bench/gsai_bench.c), one MPI rank:
#   set-up time of PCGSAI (per stage) against hypre's ParaSails with the same pattern (thresh 0, nlevels 0, filter 0),
#   and BiCGStab (rtol 1e-7) with GSAI, Jacobi and no preconditioner, on
#   the SuiteSparse matrices of docs/gsai.md's tables (tests/data/matrices) and 3-D Poisson / conv-diff DMDAs.
#
#   bash bench/gsai.sh                    CPU part (Debian PETSc with hypre, one core): aij, with ParaSails;
#                                         writes bench/results/gsai/cpu-<date>.jsonl
#   GPUKIT_GSAI_GPU=1 bash bench/gsai.sh  GPU part (after tests/gpu/run built build/gpu against the CUDA PETSc; no
#                                         hypre there): aijcusparse, VECCUDA vectors, the set-up on the device;
#                                         writes bench/results/gsai/gpu-<date>.jsonl and copies it to $OUT
# A second run on the same day replaces the file. Then `python3 bench/report.py` adds the tables to
# docs/performance.md (CPU and GPU records are matched by case name: the GPU set-up against ParaSails on one core).
#
# Environment: OBJDIR/LIBDIR as in the makefile (default build, GPU: build/gpu); PETSC_DIR (GPU default: the one
# $OBJDIR was built against); GPUKIT_BENCH_BATCHES (3) timed set-ups/solves, the fastest counts;
# GPUKIT_CASE_TIMEOUT seconds per case (CPU 300, GPU 60); GPUKIT_GSAI_BUDGET seconds for all cases, later cases are
# skipped once it is spent (CPU 900, GPU 200); GPUKIT_GSAI_N grid sizes with solves (CPU "64", GPU "64 128");
# GPUKIT_GSAI_SETUP_N grid sizes with set-up only (CPU "128": ParaSails against the GPU's 128^3) and
# GPUKIT_GSAI_BIG_N (GPU "160") the largest GPU grids, with solves, run last; GPUKIT_GSAI_MATRICES the matrix names;
# GPUKIT_GSAI_ADAPTIVE the cases run again with PCGSAI's adaptive pattern (-pc_gsai_pattern adaptive, docs/gsai.md "The
# adaptive pattern"; case names "<case> adaptive"), after the pattern-of-A cases and before the big grids: matrix
# names (NAME:setup: the set-up only, -solve 0), and poisson3d:N / convdiff3d:N for the 3-D grids (convdiff3d: -beta
# 100), with solves (CPU: the matrices of GPUKIT_GSAI_MATRICES, poisson3d:64 convdiff3d:64; GPU: those and
# poisson3d:128 convdiff3d:128; bcsstk08 as bcsstk08:setup: with its adaptive M, left-preconditioned BiCGStab stops on
# the preconditioned residual at a true relative residual of 1.2e-4, which gsai_bench rejects); on the CPU their
# ParaSails gets its own defaults (thresh 0.1, nlevels 1, filter 0.1) instead of the pattern of A (its BiCGStab does
# not converge on poisson3d:64: 10000 iterations, ~160 s of the CPU run)
# (these lists may be set empty: no such cases);
# GPUKIT_COMMIT and GPUKIT_SOURCE_STATE when the working tree has no .git (pass them from the dev machine).
# CPU: about 7 minutes on the 2-core dev machine (422 s on 2026-11-27, of which 280 s the adaptive cases);
# GPU: meant for one call of at most ~200 s (budget 200 s, the big grids last).
#
#   bash bench/gsai.sh ex10 [MATRIX...]   PCGSAI's defaults against Jacobi, ILU(0) and ParaSails's defaults with stock KSP
#                                         ex10 (build/tutorials/ksp_ex10: tests/conformance/build.sh; the .petsc files:
#                                         tests/conformance/matrices.sh), one rank: GMRES(30) at rtol 1e-8 and 1e-5, and
#                                         CG for the SPD matrices; prints the markdown table of docs/gsai.md ("Defaults
#                                         against the peers"). GPUKIT_EX10_MATDIR: the .petsc files (build/matrices);
#                                         ILU(0) and the rtol 1e-5 column always with GMRES(30).
#
#   bash bench/gsai.sh setup [CASE...]    host set-up of PCGSAI against ParaSails on one core at about the same nnz(M),
#                                         by CPU time (gsai_bench -cpu_time: the 2-core dev machine is shared), the
#                                         fastest of GPUKIT_SETUP_REPS (5) runs of 3 set-ups each; prints a markdown
#                                         table with nnz(M)/nnz(A) of both (ParaSails's from its own log) and the ratio.
#                                         A CASE is "label|gsai_bench problem options|GSAI options|ParaSails options"
#                                         (default: the cases below). GPUKIT_SETUP_BASELIB: a second libpetscgpukit.so
#                                         (e.g. a build of an older commit) whose GSAI set-up is timed too ("before").
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
source "$top/scripts/mpienv.sh"
if [ "${1:-}" = ex10 ]; then
  shift
  objdir=${OBJDIR:-build}
  lib=${LIBDIR:-$objdir/lib}/libpetscgpukit.so
  ex10=${GPUKIT_EX10:-build/tutorials/ksp_ex10}
  mdir=${GPUKIT_EX10_MATDIR:-build/matrices}
  spd=" 1138_bus 494_bus 685_bus LF10 bcsstk03 bcsstk06 bcsstk08 bcsstk10 bcsstk21 bcsstm12 nos6 gr_30_30 "
  [ $# -gt 0 ] || set -- $(ls "$mdir"/*.petsc | xargs -n1 basename | sed 's/\.petsc$//')
  # one solve: "iterations setup_ms solve_ms" (iterations with * when not converged, "err" on an error)
  one() {
    local m=$1 ksp=$2 rtol=$3; shift 3
    local out its su so
    out=$(timeout 300 "$ex10" -f "$mdir/$m.petsc" -dll_append "$lib" -ksp_type "$ksp" -ksp_gmres_restart 30 -ksp_rtol "$rtol" \
      -ksp_max_it 3000 -ksp_converged_reason -log_view "$@" 2>&1)
    its=$(echo "$out" | sed -n 's/.*Number of iterations = *\([0-9]*\).*/\1/p' | head -1)
    echo "$out" | grep -q "solve converged" || its="${its}*"
    echo "$out" | grep -q "PETSC ERROR" && its=err
    su=$(echo "$out" | awk '/^PCSetUp /{printf "%.1f", $4*1000; exit}')
    so=$(echo "$out" | awk '/^KSPSolve /{printf "%.1f", $4*1000; exit}')
    echo "$its ${su:--} ${so:--}"
  }
  echo "| matrix | Krylov | Jacobi | ILU(0) (GMRES) | ParaSails | GSAI default | GSAI set-up / solve ms | ParaSails set-up / solve ms | GMRES rtol 1e-5: Jacobi / GSAI |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for m in "$@"; do
    ksp=gmres; pssym=nonsymmetric
    case "$spd" in *" $m "*) ksp=cg; pssym=SPD ;; esac
    read -r jit _ _ <<<"$(one "$m" "$ksp" 1e-8 -pc_type jacobi)"
    read -r iit _ _ <<<"$(one "$m" gmres 1e-8 -pc_type ilu)"
    read -r pit psu pso <<<"$(one "$m" "$ksp" 1e-8 -pc_type hypre -pc_hypre_type parasails -pc_hypre_parasails_sym $pssym)"
    read -r git gsu gso <<<"$(one "$m" "$ksp" 1e-8 -pc_type gsai)"
    read -r j5 _ _ <<<"$(one "$m" gmres 1e-5 -pc_type jacobi)"
    read -r g5 _ _ <<<"$(one "$m" gmres 1e-5 -pc_type gsai)"
    echo "| $m | $ksp | $jit | $iit | $pit | $git | $gsu / $gso | $psu / $pso | $j5 / $g5 |"
  done
  exit 0
fi
if [ "${1:-}" = setup ]; then
  shift
  objdir=${OBJDIR:-build}
  bin=$objdir/bench/gsai_bench
  mdir=${GPUKIT_MATRICES:-tests/data/matrices}
  reps=${GPUKIT_SETUP_REPS:-5}
  baselib=${GPUKIT_SETUP_BASELIB:-}
  if ! timeout 300 make --no-print-directory OBJDIR="$objdir" LIBDIR="${LIBDIR:-$objdir/lib}" "$bin"; then
    echo "bench/gsai.sh: building $bin failed (or timed out); nothing measured" >&2
    exit 1
  fi
  pl1="-parasails_pc_hypre_parasails_nlevels 1 -parasails_pc_hypre_parasails_thresh 0"
  pdef="-parasails_pc_hypre_parasails_nlevels 1 -parasails_pc_hypre_parasails_thresh 0.1 -parasails_pc_hypre_parasails_filter 0.1"
  pw="-pc_gsai_pattern power -pc_gsai_threshold 1 -pc_gsai_max_nnz 0"
  if [ $# -eq 0 ]; then
    set -- \
      "bcsstk21 general, power 2|-f $mdir/bcsstk21.mtx.gz|-pc_gsai_type general $pw|$pl1" \
      "bcsstk21 spd, power 2|-f $mdir/bcsstk21.mtx.gz|-pc_gsai_type spd $pw|$pl1" \
      "bcsstk21 spd, default|-f $mdir/bcsstk21.mtx.gz|-pc_gsai_type spd|" \
      "bcsstk21 general, default|-f $mdir/bcsstk21.mtx.gz|-pc_gsai_type general|" \
      "bcsstk21 general, default; ParaSails defaults|-f $mdir/bcsstk21.mtx.gz|-pc_gsai_type general|$pdef" \
      "bcsstk08 general, pattern of A|-f $mdir/bcsstk08.mtx.gz|-pc_gsai_type general -pc_gsai_pattern a|" \
      "bcsstk10 spd, power 2|-f $mdir/bcsstk10.mtx.gz|-pc_gsai_type spd $pw|$pl1" \
      "1138_bus spd, power 2|-f $mdir/1138_bus.mtx.gz|-pc_gsai_type spd $pw|$pl1" \
      "sherman5 general, power 2|-f $mdir/sherman5.mtx.gz|-pc_gsai_type general $pw|$pl1" \
      "poisson2d n128 general, power 2|-da 2 -n 128|-pc_gsai_type general $pw|$pl1" \
      "poisson2d n128 spd, power 2|-da 2 -n 128|-pc_gsai_type spd $pw|$pl1" \
      "poisson2d n128 spd, default|-da 2 -n 128|-pc_gsai_type spd|"
  fi
  # fastest set-up of $reps runs: "ms nnzratio" (GSAI) or "ms nnzratio" (ParaSails, nnz(M) from its log)
  best() {
    local what=$1 lib=$2 src=$3 opts=$4 t=NaN z=- out v
    for _ in $(seq "$reps"); do
      # shellcheck disable=SC2086
      if [ "$what" = gsai ]; then
        out=$(LD_LIBRARY_PATH=${lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} timeout 300 "$bin" $src -solve 0 -batches 3 -cpu_time $opts 2>&1)
        v=$(echo "$out" | sed -n 's/^GSAI set-up *\([0-9.]*\) ms.*/\1/p')
        z=$(echo "$out" | sed -n 's/.*nnz(M) [0-9]* (\([0-9.]*\) nnz(A)).*/\1/p')
      else
        out=$(timeout 300 "$bin" $src -solve 0 -batches 3 -cpu_time -parasails -parasails_pc_hypre_parasails_logging 1 $opts 2>&1)
        v=$(echo "$out" | sed -n 's/^ParaSails *\([0-9.]*\) ms.*/\1/p')
        # ParaSails's "Final Nnz" (the last one), over nnz(A)
        z=$(echo "$out" | awk '/^Final Nnz/{n=$5} /nonzeros, /{a=$4} END{if (n && a) printf "%.2f", n/a; else print "-"}')
      fi
      [ -n "$v" ] || { echo "bench/gsai.sh: no time from: $bin $src $opts" >&2; echo "- -"; return; }
      t=$(python3 -c "import math; print(min(float('$t') if '$t' != 'NaN' else math.inf, $v))")
    done
    echo "$t $z"
  }
  echo "PCGSAI host set-up against ParaSails, one core, CPU time (fastest of $reps x 3), $(date -u +%Y-%m-%d), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "| case | nnz(M)/nnz(A) GSAI | ParaSails |${baselib:+ GSAI ms (before) |} GSAI ms | ParaSails ms | ParaSails / GSAI |"
  echo "|---|---|---|${baselib:+---|}---|---|---|"
  for c in "$@"; do
    IFS='|' read -r label src gopts popts <<<"$c"
    read -r tg zg <<<"$(best gsai "" "$src" "$gopts")"
    tb=""
    [ -n "$baselib" ] && read -r tb _ <<<"$(best gsai "$(dirname "$baselib")" "$src" "$gopts")"
    # ParaSails: its type follows GSAI's (sym SPD for spd), nlevels/thresh/filter from the case (none: pattern of A)
    read -r tp zp <<<"$(best parasails "" "$src" "$gopts $popts")"
    ratio=$(python3 -c "print('%.2f' % ($tp / $tg))" 2>/dev/null || echo -)
    echo "| $label | $zg | $zp |${baselib:+ $tb |} $tg | $tp | $ratio |"
  done
  exit 0
fi
gpu=${GPUKIT_GSAI_GPU:-0}
batches=${GPUKIT_BENCH_BATCHES:-3}
matrices=${GPUKIT_GSAI_MATRICES-sherman5 orsirr_1 hor_131 bcsstk08 bcsstm12 1138_bus}
mdir=${GPUKIT_MATRICES:-tests/data/matrices}
if [ "$gpu" = 1 ]; then
  objdir=${OBJDIR:-build/gpu}
  PETSC_DIR=${PETSC_DIR:-$(cat "$objdir/.petsc-prefix" 2>/dev/null || echo "$top/gpucarry/petsc-cuda")}
  export PETSC_DIR PETSC_ARCH=
  CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
  cudalib=$CUDA_HOME/lib64
  [ -d "$cudalib" ] || cudalib=$CUDA_HOME/lib
  export LD_LIBRARY_PATH=$PETSC_DIR/lib:$cudalib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  [ -d "$top/gpucarry/extra-libs" ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$top/gpucarry/extra-libs LIBRARY_PATH=$top/gpucarry/extra-libs${LIBRARY_PATH:+:$LIBRARY_PATH}
  case_timeout=${GPUKIT_CASE_TIMEOUT:-60}
  budget=${GPUKIT_GSAI_BUDGET:-200}
  sizes=${GPUKIT_GSAI_N-64 128}
  setup_sizes=${GPUKIT_GSAI_SETUP_N-}
  big_sizes=${GPUKIT_GSAI_BIG_N-160}
  adaptive=${GPUKIT_GSAI_ADAPTIVE-${matrices//bcsstk08/bcsstk08:setup} poisson3d:64 convdiff3d:64 poisson3d:128 convdiff3d:128}
  adaptive_ps=""
  common="-mat_type aijcusparse -use_gpu_aware_mpi 0"
  kind=gpu
else
  objdir=${OBJDIR:-build}
  case_timeout=${GPUKIT_CASE_TIMEOUT:-300}
  budget=${GPUKIT_GSAI_BUDGET:-900}
  sizes=${GPUKIT_GSAI_N-64}
  setup_sizes=${GPUKIT_GSAI_SETUP_N-128}
  big_sizes=${GPUKIT_GSAI_BIG_N-}
  adaptive=${GPUKIT_GSAI_ADAPTIVE-${matrices//bcsstk08/bcsstk08:setup} poisson3d:64 convdiff3d:64}
  # ParaSails's own defaults (hypre's), against which the adaptive pattern is compared (gsai_bench's default: the pattern of A)
  adaptive_ps=" -parasails_pc_hypre_parasails_thresh 0.1 -parasails_pc_hypre_parasails_nlevels 1 -parasails_pc_hypre_parasails_filter 0.1"
  common="-mat_type aij -parasails"
  kind=cpu
fi
libdir=${LIBDIR:-$objdir/lib}
bin=$objdir/bench/gsai_bench
t0=$SECONDS
if ! timeout 300 make --no-print-directory ${PETSC_DIR:+PETSC_DIR="$PETSC_DIR" PETSC_ARCH=} OBJDIR="$objdir" LIBDIR="$libdir" "$bin"; then
  echo "bench/gsai.sh: building $bin failed (or timed out); nothing measured" >&2
  exit 1
fi

source "$top/bench/runinfo.sh" # commit, GPUKIT_COMMIT, GPUKIT_SOURCE_STATE, GPUKIT_HOST, ...
[ "$gpu" = 1 ] && export GPUKIT_DEVICE=$(timeout 30 nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -n 1)

mkdir -p bench/results/gsai
out=bench/results/gsai/$kind-$(date -u +%Y-%m-%d).jsonl
rm -f "$out"
echo "gpukit PCGSAI benchmark ($kind): commit $GPUKIT_COMMIT (library sources: $GPUKIT_SOURCE_STATE), $GPUKIT_HOST ($GPUKIT_MACHINE)${GPUKIT_DEVICE:+, $GPUKIT_DEVICE}, load $GPUKIT_LOAD, $GPUKIT_DATE"

# the cases, in order of priority (the budget may cut the last ones)
cases=()
for m in $matrices; do cases+=("-f $mdir/$m.mtx.gz"); done
for n in $sizes; do cases+=("-da 3 -n $n" "-da 3 -n $n -beta 100"); done
for n in $setup_sizes; do cases+=("-da 3 -n $n -solve 0 -batches 2" "-da 3 -n $n -beta 100 -solve 0 -batches 2"); done
for a in $adaptive; do
  case $a in
    poisson3d:[0-9]*) c="-da 3 -n ${a#*:}" ;;
    convdiff3d:[0-9]*) c="-da 3 -n ${a#*:} -beta 100" ;;
    *:setup) c="-f $mdir/${a%:setup}.mtx.gz -solve 0" ;;
    *:*) echo "bench/gsai.sh: GPUKIT_GSAI_ADAPTIVE: '$a' is neither a matrix name nor poisson3d:N / convdiff3d:N" >&2; exit 1 ;;
    *) c="-f $mdir/$a.mtx.gz" ;;
  esac
  cases+=("$c -pc_gsai_pattern adaptive -label adaptive$adaptive_ps")
done
for n in $big_sizes; do cases+=("-da 3 -n $n" "-da 3 -n $n -beta 100"); done

failed=0
for c in "${cases[@]}"; do
  left=$((budget - (SECONDS - t0)))
  if [ $left -le 5 ]; then
    echo "bench/gsai.sh: budget of ${budget}s spent; skipped '$c'" >&2
    failed=1
    continue
  fi
  tl=$((left < case_timeout ? left : case_timeout))
  s=$SECONDS
  echo "== $bin $c $common (timeout ${tl}s)"
  # -batches in $c comes after the default and wins
  # shellcheck disable=SC2086
  timeout "$tl" "$bin" -batches "$batches" $c $common -json "$out" </dev/null
  rc=$?
  if [ $rc -ne 0 ]; then
    [ $rc -eq 124 ] && why="timed out after ${tl}s" || why="exit $rc"
    echo "bench/gsai.sh: case '$c' failed ($why); its record is missing from $out" >&2
    failed=1
  else
    echo "(case took $((SECONDS - s)) s)"
  fi
done
[ -n "${OUT:-}" ] && [ -f "$out" ] && cp "$out" "$OUT/"
if [ -s "$out" ] && command -v python3 >/dev/null 2>&1; then
  python3 - "$out" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def ms(v):
    return f"{v:9.1f}" if isinstance(v, (int, float)) else f"{'-':>9}"
def its(r, k):
    i = r.get(f"its_{k}")
    return "-" if i is None else f"{i}{'' if r.get(f'converged_{k}') else '*'}"
print(f"{'case':<22} {'rows':>8} {'setup':>9} {'rows':>8} {'pattern':>8} {'solve':>8} {'assem':>8} {'ParaSails':>9} {'ratio':>6} | its gsai/jacobi/none   ms gsai / jacobi")
for r in recs:
    ps = r.get("parasails_setup_ms")
    print(f"{r['case']:<22} {r['rows']:>8} {ms(r['setup_ms'])} {r['rows_ms']:8.1f} {r['pattern_ms']:8.1f} {r['solve_ms']:8.1f} {r['assemble_ms']:8.1f} {ms(ps)} "
          f"{(ps / r['setup_ms'] if ps else float('nan')):6.2f} | {its(r, 'gsai'):>5}/{its(r, 'jacobi'):>5}/{its(r, 'none'):>5}   {ms(r.get('time_gsai_ms'))} / {ms(r.get('time_jacobi_ms'))}")
EOF
fi
if [ -s "$out" ]; then
  echo "bench/gsai.sh: $(wc -l <"$out") records in $out${OUT:+ (copied to \$OUT)}; $((SECONDS - t0)) s in all"
else
  echo "bench/gsai.sh: no case produced a record; $((SECONDS - t0)) s in all" >&2
  failed=1
fi
exit $failed
