#!/usr/bin/env bash
# Stock KSP ex45 (3-D 7-point Laplacian on a DMDA, unmodified) on the GPU with KSPCG and with KSPCACG, untuned and
# tuned: is KSPCACG ever slower than KSPCG? (issue: at 193^3 on aijcusparse, -ksp_cacg_s 4 was measured at 0.84x
# KSPCG on an H100 before the tuner.) For each mat type and method: one warm-up solve (the tuner searches there, with a
# fresh cache file), then the KSPSolve time less KSPSetUp's (the operator's assembly) of a second run from -log_view,
# and the iterations.
#
#   bash bench/ex45_cacg.sh            on the GPU machine, after tests/gpu/run built the library (build/gpu)
#
# Environment: PETSC_DIR (default gpucarry/petsc-cuda), OBJDIR (build/gpu), GPUKIT_EX45_N (193), GPUKIT_EX45_TYPES
# ("aijcusparse sgdiacuda"). Writes bench/results/cacg/ex45-<date>.jsonl (copied to $OUT when set) and prints a table.
set -uo pipefail
source "$(dirname "$0")/gpucommon.sh" || exit 1
n=${GPUKIT_EX45_N:-193}
bin=$objdir/tutorials/ex45
mkdir -p bench/results/cacg
gk_build_tutorial ksp/ksp/tutorials/ex45 "$bin" || exit 1
lib=$top/$objdir/lib/libpetscgpukit.so
out=bench/results/cacg/ex45-$(date -u +%Y-%m-%d).jsonl
rm -f "$out"
printf '%-12s %-12s %10s %6s %12s %s\n' mat_type method KSPSolve_s its vs_cg choice
for mt in ${GPUKIT_EX45_TYPES:-aijcusparse sgdiacuda}; do
  cgt=""
  for m in cg cacg4 cacg4tuned; do
    case $m in
      cg) opts="-ksp_type cg" ;;
      cacg4) opts="-ksp_type cacg -ksp_cacg_s 4 -ksp_cacg_tune 0" ;;
      cacg4tuned) opts="-ksp_type cacg -ksp_cacg_s 4 -ksp_cacg_tune 1" ;;
    esac
    cache=$(mktemp -d)
    # two solves in one run (-num_solves? ex45 solves once): run twice, the first fills the tuning cache
    # shellcheck disable=SC2086
    timeout 300 "$bin" -dll_append "$lib" -da_grid_x $n -da_grid_y $n -da_grid_z $n -dm_vec_type cuda -dm_mat_type $mt -pc_type jacobi $opts -gpukit_tune_cache $cache/c -use_gpu_aware_mpi 0 >/dev/null 2>&1
    # shellcheck disable=SC2086
    log=$(timeout 300 "$bin" -dll_append "$lib" -da_grid_x $n -da_grid_y $n -da_grid_z $n -dm_vec_type cuda -dm_mat_type $mt -pc_type jacobi $opts -gpukit_tune_cache $cache/c -use_gpu_aware_mpi 0 -ksp_converged_reason -ksp_view -log_view 2>&1)
    # KSPSolve's time less KSPSetUp's (nested in it: ex45 assembles the operator on the host there)
    t=$(echo "$log" | awk '/^KSPSolve /{s = $4} /^KSPSetUp /{u = $4} END {if (s != "") printf "%.6f", s - u}')
    its=$(echo "$log" | sed -n 's/.*Linear solve converged due to [A-Z_]* iterations \([0-9]*\).*/\1/p' | head -n 1)
    choice=$(echo "$log" | sed -n 's/^ *tuner CACGStep: \(.*\) (.*/\1/p' | head -n 1)
    rm -rf "$cache"
    [ "$m" = cg ] && cgt=$t
    ratio=$(python3 -c "print(f'{float(\"$cgt\")/float(\"$t\"):.3f}')" 2>/dev/null || echo "-")
    printf '%-12s %-12s %10s %6s %12s %s\n' "$mt" "$m" "${t:--}" "${its:--}" "$ratio" "${choice:-}"
    echo "{\"bench\": \"ex45_cacg\", \"n\": $n, \"mat_type\": \"$mt\", \"method\": \"$m\", \"kspsolve_s\": ${t:-null}, \"its\": ${its:-null}, \"speedup_vs_cg\": ${ratio/-/null}, \"tuned_choice\": \"$choice\", \"commit\": \"$commit\", \"device\": \"$device\", \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}" >>"$out"
  done
done
[ -n "${OUT:-}" ] && cp "$out" "$OUT/"
