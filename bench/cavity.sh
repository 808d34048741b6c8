#!/usr/bin/env bash
# Driven-cavity benchmark (issue 5): a whole Newton-Krylov solve of the driven cavity (SNES ex19's physics), end to end.
#
#   ours-gpu          examples/cavity -use_gpu -dm_vec_type cuda -dm_mat_type sgdiacuda   (residual and Jacobian by CUDA
#                     kernels on every MG level; interpolation moved to aijcusparse by the example)
#   ours-gpu-lean     the same plus -coarse_mat_type densecuda -mg_coarse_pc_factor_mat_solver_type cuda (the
#                     coarsest level a dense device matrix written by a kernel, its LU factorisation and solves by
#                     cuSOLVER on the device) and -mg_levels_pc_jacobi_fixdiagonal 0 (PCJACOBI set-up without a host
#                     round trip of the diagonal). Left: one upload per smoothed level and Newton step, the Chebyshev
#                     eigenvalue estimate's "noisy" right-hand side, which PETSc fills on the host (the smoothers have no
#                     other right-hand side at set-up; -mg_levels_ksp_chebyshev_esteig_noisy 0 stops with "Chebyshev
#                     must use a noisy ... right-hand side ... when no right-hand side is available" under PCMG)
#   ours-gpu-aijcusparse  examples/cavity -use_gpu -dm_vec_type cuda -dm_mat_type aijcusparse -cavity_aij_fill csr:
#                     the same example and kernels on PETSc's format, on its fast path: the kernel writes the Jacobian
#                     values straight into the device CSR value array (MatSeqAIJCUSPARSEGetArrayWrite()); the stencil's
#                     structure is set by the example once per matrix in O(nonzeros) (exact preallocation +
#                     MatSeqAIJSetColumnIndices(), no COO set-up, DMCreateMatrix() told to skip its own) and checked on
#                     the device; csr, not auto, so that a run that cannot take it fails instead of falling back to COO.
#                     Its SNESSolve against ours-gpu's is the format's own share (the acceptance of issue 16: within 1.5x)
#   ex19-aijcusparse  stock SNES ex19 -dm_vec_type cuda -dm_mat_type aijcusparse (Jacobian by FD colouring on the host)
#   ex19-aij-np2      stock SNES ex19 -dm_mat_type aij on 2 MPI ranks (CPU)
# and, on request (GPUKIT_CAVITY_CONFIGS): ours-gpu-aijcusparse-coo (the aijcusparse run through MatSetValuesCOO(),
# -cavity_aij_fill coo, the path before the CSR fill), and CPU runs for reference: ours-sgdia, ours-sgdia-array (-jacobian_assembly
# array), ours-aij-np2, ex19-aij (1 rank).
#
# all with   -da_grid_x 9 -da_grid_y 9 -da_refine R   (R = 5 6 7: 257^2, 513^2, 1025^2), lid velocity 1/(mx*my),
# Grashof 1, -ksp_type fgmres -pc_type mg -mg_levels_ksp_type chebyshev -mg_levels_pc_type jacobi -mg_coarse_pc_type lu,
# default SNES/KSP tolerances. From each run's -log_view: SNESSolve time, Newton and KSP iterations (the outer KSP's
# -ksp_converged_reason lines), host<->device copies inside SNESSolve (CpuToGpu/GpuToCpu count and MB; note that
# PETSc counts every VecMDot/VecDot result as a GpuToCpu copy), and the share of SNESSolve time in the Jacobian
# (SNESJacobianEval), residual (SNESFunctionEval), PCSetUp, MatMult and PCApply (inclusive events: coarse-level
# Jacobians are inside PCSetUp too). Every run's solution is compared with ex19-aijcusparse's (tests/cavity/
# cavity_vecdiff.c, per field, 1e-6 relative) and must converge.
#
# Writes bench/results/cavity/cavity-<device>-<YYYY-MM-DD>.json (a JSON list; bench/report.py does not read this
# folder) and copies it to $OUT when set; prints a table with ratios against ex19-aijcusparse.
#
#   bash bench/cavity.sh        on the GPU machine, after tests/gpu/run has built build/gpu (or any CUDA build)
#
# Stock ex19 is compiled here, unmodified, against the CUDA PETSc, from the first of: $GPUKIT_EX19_SRC,
# $PETSC_DIR/share/petsc/examples/src/snes/tutorials/ex19.c, deps/src/petsc-*/src/snes/tutorials/ex19.c. Without a
# source the ex19 runs are skipped (and said so). Environment: PETSC_DIR (default: the PETSc OBJDIR was built against),
# OBJDIR (build/gpu), LIBDIR ($OBJDIR/lib), MPIEXEC, GPUKIT_CAVITY_REFINE ("5 6 7"), GPUKIT_CAVITY_CONFIGS (default
# "ours-gpu ours-gpu-lean ours-gpu-aijcusparse ex19-aijcusparse ex19-aij-np2"), GPUKIT_CAVITY_TIMEOUT (300 s per run), GPUKIT_COMMIT.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
source "$top/scripts/mpienv.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
objdir=${OBJDIR:-build/gpu}
libdir=${LIBDIR:-$objdir/lib}
PETSC_DIR=${PETSC_DIR:-$(cat "$objdir/.petsc-prefix" 2>/dev/null || echo "$top/deps/petsc-cuda")}
export PETSC_DIR PETSC_ARCH=
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=$PETSC_DIR/lib:$CUDA_HOME/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
refines=${GPUKIT_CAVITY_REFINE:-5 6 7}
configs=${GPUKIT_CAVITY_CONFIGS:-ours-gpu ours-gpu-lean ours-gpu-aijcusparse ex19-aijcusparse ex19-aij-np2}
run_timeout=${GPUKIT_CAVITY_TIMEOUT:-300}
t0=$SECONDS

case " $configs " in *gpu* | *cusparse*) needcuda=1 ;; *) needcuda=0 ;; esac
[ $needcuda = 0 ] || grep -qs '^#define PETSC_HAVE_CUDA 1' "$PETSC_DIR/include/petscconf.h" || {
  echo "bench/cavity.sh: the PETSc at $PETSC_DIR has no CUDA; set PETSC_DIR to a CUDA PETSc (make petsc-cuda, or the carried gpucarry/petsc-cuda)" >&2
  exit 1
}
# our example and the solution comparison program
cavity=$objdir/examples/cavity vecdiff=$objdir/tests/cavity/cavity_vecdiff
keep=() # a library that is there is used as it is (tests/gpu/run built it)
[ -f "$libdir/libpetscgpukit.so" ] && keep=(-o "$libdir/libpetscgpukit.so")
if ! timeout 600 make --no-print-directory PETSC_DIR="$PETSC_DIR" PETSC_ARCH= OBJDIR="$objdir" LIBDIR="$libdir" "${keep[@]}" "$cavity" "$vecdiff"; then
  echo "bench/cavity.sh: building $cavity and $vecdiff against $PETSC_DIR failed" >&2
  exit 1
fi
# stock ex19, unmodified, against the same PETSc
ex19=$objdir/bench/snes_ex19
bash scripts/build-ex19.sh "$ex19" || { echo "bench/cavity.sh: no stock ex19; its runs are skipped" >&2; ex19=; }

commit=${GPUKIT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
device=$(timeout 30 nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -n 1)
device=${device:-unknown GPU}
host=$(hostname 2>/dev/null || echo unknown)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
machine="${cpu:-unknown CPU}, $(nproc) cores"
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
pver=$(awk '/define PETSC_VERSION_(MAJOR|MINOR|SUBMINOR) / {v = v (v == "" ? "" : ".") $3} END {print v}' "$PETSC_DIR/include/petscversion.h")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpukit-cavitybench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p bench/results/cavity
out=bench/results/cavity/cavity-$(echo "$device" | tr -c 'A-Za-z0-9\n' '-' | tr -s '-' | sed 's/-$//')-$(date -u +%Y-%m-%d).json
: >"$tmp/records"
echo "bench/cavity.sh: commit $commit, $host ($machine), $device, PETSc $pver at $PETSC_DIR, $date"
echo "  ours: $cavity; stock ex19: ${ex19:-(none)}; grids 9x9 refined ${refines// /, } times; runs: $configs"

common=(-da_grid_x 9 -da_grid_y 9 -ksp_type fgmres -pc_type mg -mg_levels_ksp_type chebyshev -mg_levels_pc_type jacobi -mg_coarse_pc_type lu -snes_converged_reason -ksp_converged_reason -use_gpu_aware_mpi 0)
lean=(-coarse_mat_type densecuda -mg_coarse_pc_factor_mat_solver_type cuda -mg_levels_pc_jacobi_fixdiagonal 0)
failed=0
for r in $refines; do
  for c in $configs; do
    np=1 extra=() post=()
    case $c in
    ours-gpu) exe=("$cavity" -use_gpu -dm_vec_type cuda -dm_mat_type sgdiacuda) ;;
    ours-gpu-lean) exe=("$cavity" -use_gpu -dm_vec_type cuda -dm_mat_type sgdiacuda) extra=("${lean[@]}") ;;
    ours-gpu-aijcusparse) exe=("$cavity" -use_gpu -dm_vec_type cuda -dm_mat_type aijcusparse -cavity_aij_fill csr) ;;
    ours-gpu-aijcusparse-coo) exe=("$cavity" -use_gpu -dm_vec_type cuda -dm_mat_type aijcusparse -cavity_aij_fill coo) ;;
    ex19-aijcusparse) exe=("$ex19" -dm_vec_type cuda -dm_mat_type aijcusparse) ;;
    ex19-aij-np2) exe=("$ex19" -dm_mat_type aij) np=2 post=(-mg_coarse_pc_type redundant -mg_coarse_redundant_pc_type lu) ;; # PETSc's own LU is sequential
    ex19-aij) exe=("$ex19" -dm_mat_type aij) ;;
    ours-sgdia) exe=("$cavity" -dm_mat_type sgdia) ;;
    ours-sgdia-array) exe=("$cavity" -dm_mat_type sgdia -jacobian_assembly array) ;;
    ours-aij-np2) exe=("$cavity" -dm_mat_type aij) np=2 post=(-mg_coarse_pc_type redundant -mg_coarse_redundant_pc_type lu) ;;
    *) echo "bench/cavity.sh: unknown configuration '$c'" >&2; exit 2 ;;
    esac
    if [ -z "${exe[0]}" ]; then echo "== $c, -da_refine $r: skipped (no stock ex19)"; continue; fi
    tag=$c-$r
    cmd=("$MPIEXEC" -n "$np" "${exe[@]}" -da_refine "$r" "${common[@]}" "${post[@]}" "${extra[@]}" -log_view ":$tmp/$tag.log" -snes_view_solution "binary:$tmp/$tag.bin")
    echo "== $c, -da_refine $r: ${cmd[*]}"
    s=$SECONDS
    timeout "$run_timeout" "${cmd[@]}" >"$tmp/$tag.out" 2>&1 </dev/null
    rc=$?
    grep -v '^\[' "$tmp/$tag.out" | grep -v 'Linear solve converged' | tail -n 4 | sed 's/^/   | /'
    if [ $rc -ne 0 ] || ! grep -q 'Nonlinear solve converged' "$tmp/$tag.out" || [ ! -f "$tmp/$tag.log" ]; then
      [ $rc -eq 124 ] && why="timed out after ${run_timeout}s" || why="exit $rc"
      echo "bench/cavity.sh: $tag failed or did not converge ($why); no record" >&2
      grep -v '^\[' "$tmp/$tag.out" | grep 'PETSC ERROR' | head -n 8 >&2
      failed=1
      continue
    fi
    newton=$(sed -n 's/.*Nonlinear solve converged due to [A-Z_]* iterations \([0-9]*\).*/\1/p' "$tmp/$tag.out" | head -n 1)
    ksp=$(awk '/^ *Linear solve converged due to/ {s += $NF} END {print s + 0}' "$tmp/$tag.out")
    grid=$(awk -v r="$r" 'BEGIN {n = 9; for (i = 0; i < r; i++) n = 2 * n - 1; print n}')
    # our example's own count per Newton step: "CtoG/GtoC (VecMDot results)" for the set-up and each step
    steps=$(sed -n 's/^cavity: host<->device copies in SNESSolve.*before the first Newton step \(.*\), Newton steps \(.*\)$/setup \1; steps \2/p' "$tmp/$tag.out" | head -n 1)
    # the -log_view of the finest grid's runs travels back too (a few tens of kB each)
    [ -n "${OUT:-}" ] && [ "$r" = "${refines##* }" ] && cp "$tmp/$tag.log" "$OUT/cavity-$tag-logview.txt"
    bash tests/cavity/logview.sh "$tmp/$tag.log" SNESSolve SNESJacobianEval SNESFunctionEval PCSetUp MatMult PCApply KSPSolve >"$tmp/$tag.ev"
    awk -v cfg="$c" -v r="$r" -v grid="$grid" -v np="$np" -v newton="$newton" -v ksp="$ksp" -v steps="$steps" -v wall=$((SECONDS - s)) -v cmd="${cmd[*]}" \
      -v commit="$commit" -v host="$host" -v machine="$machine" -v device="$device" -v date="$date" -v pver="$pver" '
      function num(x) { return (x ~ /^[-+]?[0-9][0-9.]*([eE][-+]?[0-9]+)?$/) ? x + 0 : "null" }
      { ev[$1] = $3; c[$1] = $4; cmb[$1] = $5; g[$1] = $6; gmb[$1] = $7; pt[$1] = $8 }
      END {
        t = ev["SNESSolve"]
        gsub(/"/, "\\\"", cmd); sub(/ -log_view .*/, "", cmd)
        printf "{\"bench\": \"cavity\", \"case\": \"cavity_%d\", \"config\": \"%s\", \"grid\": %d, \"da_refine\": %d, \"nranks\": %d, ", grid, cfg, grid, r, np
        printf "\"snes_solve_s\": %s, \"newton_its\": %d, \"ksp_its\": %d, ", num(t), newton, ksp
        printf "\"cpu_to_gpu_count\": %s, \"cpu_to_gpu_mb\": %s, \"gpu_to_cpu_count\": %s, \"gpu_to_cpu_mb\": %s, ", num(c["SNESSolve"]), num(cmb["SNESSolve"]), num(g["SNESSolve"]), num(gmb["SNESSolve"])
        printf "\"cpu_to_gpu_per_newton\": %s, ", (c["SNESSolve"] ~ /^[0-9.]+$/ && newton > 0) ? c["SNESSolve"] / newton : "null"
        printf "\"copies_by_step\": %s, ", steps == "" ? "null" : "\"" steps "\""
        n = split("SNESJacobianEval:jacobian SNESFunctionEval:residual PCSetUp:pcsetup MatMult:matmult PCApply:pcapply KSPSolve:kspsolve", pairs, " ")
        # the time when -log_view has it, else %T (whole percents; GPU runs print n/a for events that launch kernels)
        for (i = 1; i <= n; i++) {
          split(pairs[i], kv, ":")
          if (t > 0 && ev[kv[1]] != "n/a") v = sprintf("%.4f", ev[kv[1]] / t)
          else if (pt["SNESSolve"] > 0) v = sprintf("%.4f", pt[kv[1]] / pt["SNESSolve"])
          else v = "null"
          printf "\"share_%s\": %s, ", kv[2], v
        }
        printf "\"wall_s\": %d, \"command\": \"%s\", \"petsc_version\": \"%s\", \"date\": \"%s\", \"commit\": \"%s\", \"host\": \"%s\", \"machine\": \"%s\", \"device\": \"%s\"", wall, cmd, pver, date, commit, host, machine, device
        print ""
      }' "$tmp/$tag.ev" >"$tmp/$tag.rec"
  done
  # solutions against stock ex19 on aijcusparse (else the first run that has one), and speed-ups against it
  ref=
  for c in ex19-aijcusparse ex19-aij ex19-aij-np2 $configs; do [ -f "$tmp/$c-$r.rec" ] && { ref=$c; break; }; done
  [ -n "$ref" ] || continue
  tref=$(sed -n 's/.*"snes_solve_s": \([^,]*\),.*/\1/p' "$tmp/$ref-$r.rec")
  for c in $configs; do
    f=$tmp/$c-$r.rec
    [ -f "$f" ] || continue
    if [ "$c" = "$ref" ]; then diff=0; ok=true
    else
      d=$("$vecdiff" -a "$tmp/$ref-$r.bin" -b "$tmp/$c-$r.bin" -rtol 1e-6 2>&1)
      [ $? -eq 0 ] && ok=true || { ok=false; failed=1; echo "bench/cavity.sh: $c-$r: the solution differs from $ref-$r by more than 1e-6:" >&2; echo "$d" | grep -v '^\[' >&2; }
      diff=$(sed -n 's/.*largest relative difference \([^ ,]*\).*/\1/p' <<<"$d")
    fi
    t=$(sed -n 's/.*"snes_solve_s": \([^,]*\),.*/\1/p' "$f")
    sp=$(awk -v a="$tref" -v b="$t" 'BEGIN { if (b > 0 && a > 0) printf "%.4g", a / b; else print "null" }')
    echo "$(cat "$f"), \"reference\": \"$ref\", \"speedup_vs_reference\": $sp, \"solution_rel_diff_vs_reference\": ${diff:-null}, \"solution_matches\": $ok}" >>"$tmp/records"
  done
done

[ -s "$tmp/records" ] || { echo "bench/cavity.sh: no run produced a record; nothing written" >&2; exit 1; }
{ echo "["; sed '$!s/$/,/' "$tmp/records"; echo "]"; } >"$out"
[ -n "${OUT:-}" ] && cp "$out" "$OUT/"
echo "== $out ($(wc -l <"$tmp/records") records${OUT:+, copied to \$OUT})"
echo "== driven cavity, $device, PETSc $pver: SNESSolve s, iterations, copies inside SNESSolve (per rank), shares of SNESSolve time, speed-up and solution difference vs the reference run of each grid ($(sed -n 's/.*"reference": "\([^"]*\)".*/\1/p' "$tmp/records" | sort -u | paste -sd, -))"
awk '
  function f(k,   m) { if (match($0, "\"" k "\": [^,}]*")) { m = substr($0, RSTART, RLENGTH); sub(/^[^:]*: /, "", m); gsub(/"/, "", m); return m } return "-" }
  function pct(x) { return (x == "null" || x == "-") ? "-" : sprintf("%.0f%%", 100 * x) }
  BEGIN { printf "%-6s %-21s %9s %6s %5s %8s %8s %6s %6s %6s %6s %6s %8s %8s %9s\n", "grid", "run", "SNESSolve", "Newton", "KSP", "CtoG", "GtoC", "Jac", "Res", "PCSetUp", "MatMult", "PCApply", "speedup", "vs.ours", "sol.diff" }
  # vs.ours: SNESSolve over that of ours-gpu on the same grid (ours-gpu runs first on each grid)
  { t = f("snes_solve_s"); if (f("config") == "ours-gpu") ours[f("grid")] = t
    rel = (f("grid") in ours && ours[f("grid")] > 0 && t > 0) ? sprintf("%.2fx", t / ours[f("grid")]) : "-"
    printf "%-6s %-21s %9.3f %6s %5s %8s %8s %6s %6s %6s %6s %6s %7sx %8s %9s\n", f("grid") "^2", f("config"), t, f("newton_its"), f("ksp_its"), f("cpu_to_gpu_count"), f("gpu_to_cpu_count"),
      pct(f("share_jacobian")), pct(f("share_residual")), pct(f("share_pcsetup")), pct(f("share_matmult")), pct(f("share_pcapply")), f("speedup_vs_reference"), rel, f("solution_rel_diff_vs_reference") }
' "$tmp/records"
echo "== host<->device copies by Newton step, from the example (CpuToGpu/GpuToCpu (of which VecMDot results)):"
sed -n 's/.*"config": "\([^"]*\)", "grid": \([0-9]*\),.*"copies_by_step": "\([^"]*\)".*/  \2^2 \1: \3/p' "$tmp/records"
echo "bench/cavity.sh: $((SECONDS - t0)) s in all"
exit $failed
