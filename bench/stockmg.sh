#!/usr/bin/env bash
# Stock PETSc programs with PCMG on the GPU (issue 16): SNES ex19 (driven cavity, 4 dof, FGMRES + MG) and KSP ex45
# (3-D Laplacian, CG + MG), unmodified, with -dm_vec_type cuda and -dm_mat_type aijcusparse, then sgdiacuda (gpukit
# loaded with -dll_append). Both use the same options: Chebyshev/Jacobi smoothing on every level, rediscretised
# coarse operators, PETSc's default coarse solver (LU). From each run's -log_view: KSPSolve time (the max over
# ranks), the iteration counts, and the host<->device copies counted inside PCApply (PETSc's CpuToGpu/GpuToCpu
# columns). Prints a table with KSPSolve ratios aijcusparse/sgdiacuda (> 1: sgdiacuda faster) and writes
# bench/results/stockmg-<date>.jsonl (copied to $OUT when set).
#
#   bash bench/stockmg.sh      on the GPU machine, after tests/gpu/run built the library (build/gpu)
#
# Environment: PETSC_DIR (default gpucarry/petsc-cuda), OBJDIR (build/gpu), GPUKIT_STOCKMG_EX19_REFINE (6: 9x9 refined
# to 513^2), GPUKIT_STOCKMG_EX45_REFINE (5: 9^3 refined to 257^3), GPUKIT_STOCKMG_TYPES ("aijcusparse sgdiacuda"),
# GPUKIT_STOCKMG_TIMEOUT (240 s per run), GPUKIT_COMMIT. Shared set-up: bench/gpucommon.sh.
set -uo pipefail
source "$(dirname "$0")/gpucommon.sh" || exit 1
tmo=${GPUKIT_STOCKMG_TIMEOUT:-240}
r19=${GPUKIT_STOCKMG_EX19_REFINE:-6}
r45=${GPUKIT_STOCKMG_EX45_REFINE:-5}
lib=$top/$objdir/lib/libpetscgpukit.so
[ -f "$lib" ] || { echo "stockmg.sh: no $lib (build the library first: tests/gpu/run)" >&2; exit 1; }
for ex in snes/tutorials/ex19 ksp/ksp/tutorials/ex45; do
  gk_build_tutorial "$ex" "$objdir/tutorials/mg_$(basename "$ex")" || exit 1
done
out=bench/results/stockmg-$(date -u +%Y-%m-%d).jsonl
gk_results "$out"
gk_tmpdir stockmg
mg=(-pc_type mg -mg_levels_ksp_type chebyshev -mg_levels_pc_type jacobi -dm_vec_type cuda -use_gpu_aware_mpi 0 -log_view ":$tmp/log")
printf '%-5s %-12s %9s %7s %7s %9s %9s\n' prog mat_type KSPSolve_s KSPits SNESits PCApp_H2D PCApp_D2H
failed=0
declare -A tsolve
for prog in ex19 ex45; do
  case $prog in
    ex19) args=(-da_grid_x 9 -da_grid_y 9 -da_refine "$r19" -ksp_type fgmres -snes_converged_reason -ksp_converged_reason) ;;
    ex45) args=(-da_grid_x 9 -da_grid_y 9 -da_grid_z 9 -da_refine "$r45" -pc_mg_levels $((r45 + 1)) -ksp_type cg -ksp_rtol 1e-8 -ksp_converged_reason) ;;
  esac
  for mt in ${GPUKIT_STOCKMG_TYPES:-aijcusparse sgdiacuda}; do
    rm -f "$tmp/log"
    o=$(timeout "$tmo" "$objdir/tutorials/mg_$prog" -dll_append "$lib" -dm_mat_type "$mt" "${args[@]}" "${mg[@]}" 2>&1)
    rc=$?
    if [ $rc -ne 0 ] || [ ! -s "$tmp/log" ]; then
      echo "$o" | tail -n 20
      echo "stockmg.sh: $prog with $mt failed (exit $rc)" >&2
      failed=1
      continue
    fi
    grep -q -i "type: *$mt\|$mt" "$tmp/log" || true
    ks=$(gk_event "$tmp/log" KSPSolve); pa=$(gk_event "$tmp/log" PCApply)
    t=$(awk '{print $4}' <<<"$ks")
    # the last five columns of a GPU build's -log_view: CpuToGpu count, size, GpuToCpu count, size, GPU %F
    h2d=$(awk '{print $(NF-4)}' <<<"$pa"); d2h=$(awk '{print $(NF-2)}' <<<"$pa")
    kits=$(grep -o "Linear solve converged due to [A-Z_]* iterations [0-9]*" <<<"$o" | awk '{s += $NF} END {print s + 0}')
    nits=$(grep -o "Nonlinear solve converged due to [A-Z_]* iterations [0-9]*" <<<"$o" | awk '{print $NF}')
    tsolve[$prog-$mt]=$t
    printf '%-5s %-12s %9s %7s %7s %9s %9s\n' "$prog" "$mt" "$t" "$kits" "${nits:--}" "$h2d" "$d2h"
    echo "{\"bench\": \"stockmg\", \"program\": \"$prog\", \"mat_type\": \"$mt\", \"kspsolve_s\": ${t:-null}, \"ksp_its\": ${kits:-null}, \"snes_its\": ${nits:-null}, \"pcapply_h2d\": ${h2d:-null}, \"pcapply_d2h\": ${d2h:-null}, \"options\": \"${args[*]} ${mg[*]% *}\", \"commit\": \"$commit\", \"device\": \"$device\", \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}" >>"$out"
  done
  a=${tsolve[$prog-aijcusparse]:-}; s=${tsolve[$prog-sgdiacuda]:-}
  [ -n "$a" ] && [ -n "$s" ] && echo "$prog: KSPSolve aijcusparse / sgdiacuda = $(awk -v a="$a" -v s="$s" 'BEGIN {printf "%.2f", a / s}')"
done
echo "device: ${device:-?}, commit $commit; records in $out"
gk_copy_out "$out"
exit $failed
