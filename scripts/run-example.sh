#!/usr/bin/env bash
# make run: the DMDA example with gpukit's MATSGDIA, then the same problem with PETSc's AIJ for comparison.
#
# examples/poisson.c (3-D Poisson, 7-point stencil, CG) stands in for the driven-cavity example (issue: driven
# cavity); that example will replace it here once it exists.
#
# Every run solves to -ksp_rtol 1e-8 and must also match the known exact solution (-error_tol), so a broken
# matrix type fails this script, not just a non-converging solve. Runs: 1 rank and 2 ranks, sgdia then aij.
# Environment: MPIEXEC (default mpiexec), GPUKIT_EXAMPLE_ARGS (extra options for every run, e.g. "-n 33"),
# GPUKIT_EXAMPLE_RANKS (default "1 2").
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
source "$top/scripts/mpienv.sh"
mpiexec=${MPIEXEC:-mpiexec}
bin=build/examples/poisson
[ -x "$bin" ] || { echo "run-example: $bin is missing; build it with 'make examples'" >&2; exit 1; }
solver=(-ksp_type cg -pc_type jacobi -ksp_rtol 1e-8 -error_tol 1e-6)
read -r -a extra <<<"${GPUKIT_EXAMPLE_ARGS:-}"

# run <ranks> <mat type>: print the report; leave its summary line in $summary
run() {
  local np=$1 type=$2 out
  echo "== $mpiexec -n $np $bin -dm_mat_type $type ${solver[*]}${extra[*]:+ ${extra[*]}}"
  if ! out=$("$mpiexec" -n "$np" "$bin" -dm_mat_type "$type" "${solver[@]}" "${extra[@]}" 2>&1); then
    echo "$out"
    echo "run-example: FAILED with -dm_mat_type $type on $np rank(s)" >&2
    exit 1
  fi
  echo "$out" | grep -v '^summary:'
  echo
  summary=$(echo "$out" | grep '^summary:')
  case "$(field mat)" in
  *"$type") ;;
  *) echo "run-example: asked for -dm_mat_type $type, the matrix is $(field mat)" >&2; exit 1 ;;
  esac
}
field() { echo "$summary" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

lines=()
for np in ${GPUKIT_EXAMPLE_RANKS:-1 2}; do
  run "$np" sgdia
  s_its=$(field iterations) s_solve=$(field solve_s) s_setup=$(field setup_s) s_asm=$(field assembly_s)
  run "$np" aij
  a_its=$(field iterations) a_solve=$(field solve_s) a_setup=$(field setup_s) a_asm=$(field assembly_s)
  ratio=$(awk -v s="$s_solve" -v a="$a_solve" 'BEGIN { if (s > 0) printf "%.2f", a / s; else print "n/a" }')
  lines+=("$(printf '%d rank(s): sgdia %s its, solve %s s (assembly %s s, setup %s s) | aij %s its, solve %s s (assembly %s s, setup %s s) | aij/sgdia solve time %s' \
    "$np" "$s_its" "$s_solve" "$s_asm" "$s_setup" "$a_its" "$a_solve" "$a_asm" "$a_setup" "$ratio")")
done
echo "== comparison (CG + Jacobi, rtol 1e-8)"
printf '%s\n' "${lines[@]}"
