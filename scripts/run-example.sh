#!/usr/bin/env bash
# make run: the driven-cavity example (examples/cavity.c, the physics of PETSc's SNES ex19 with an analytic Jacobian)
# with gpukit's MATSGDIA, then with PETSc's AIJ, on 1 and 2 MPI ranks, and a check that all four runs agree.
#
# Grid 257 x 257 (9 x 9 refined 5 times), Newton with FGMRES and multigrid on every level (Chebyshev/Jacobi
# smoothing, rediscretised coarse levels, LU on the coarsest level, which is AIJ: -coarse_mat_type aij). Each type
# assembles its Jacobian by its own fast path (the example's default -jacobian_assembly auto: sgdia written straight
# into its array, MatSGDIAGetArray(); aij through MatSetValuesStencil, faster for AIJ than COO). Every run
# must converge (the example exits with an error otherwise), use the matrix type asked for, take the same number
# of Newton iterations as the others and the same number of KSP iterations as the other type on the same ranks, and
# reach the same solution: per field (u, v, omega, T), max|x - x_ref| <= 1e-6 max|x_ref| against the 1-rank AIJ run
# (tests/cavity/cavity_vecdiff.c, built here if missing). About 30 s on 2 cores.
# Environment: MPIEXEC (default mpiexec); GPUKIT_EXAMPLE_ARGS (extra options for every run, e.g. "-da_refine 3"
# for a 65 x 65 grid, or "-grashof 1000"); GPUKIT_EXAMPLE_RANKS (default "1 2"); OBJDIR (default build).
# examples/poisson.c (3-D Poisson, CG) is still built by 'make examples'; run it by hand (see its -help).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
source "$top/scripts/mpienv.sh"
mpiexec=${MPIEXEC:-mpiexec}
objdir=${OBJDIR:-build}
bin=$objdir/examples/cavity
vecdiff=$objdir/tests/cavity/cavity_vecdiff
[ -x "$bin" ] || { echo "run-example: $bin is missing; build it with 'make examples'" >&2; exit 1; }
if [ ! -x "$vecdiff" ]; then
  make --no-print-directory OBJDIR="$objdir" "$vecdiff" >/dev/null || { echo "run-example: could not build $vecdiff" >&2; exit 1; }
fi
opts=(-da_grid_x 9 -da_grid_y 9 -da_refine 5 -ksp_type fgmres -pc_type mg -mg_levels_ksp_type chebyshev -mg_levels_pc_type jacobi -coarse_mat_type aij -snes_converged_reason)
read -r -a extra <<<"${GPUKIT_EXAMPLE_ARGS:-}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpukit-example.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# run <ranks> <mat type>: print the output; leave the summary line in $summary and the solution in $tmp/<ranks>-<type>.bin
run() {
  local np=$1 type=$2 out
  echo "== $mpiexec -n $np $bin -dm_mat_type $type ${opts[*]}${extra[*]:+ ${extra[*]}}"
  if ! out=$("$mpiexec" -n "$np" "$bin" -dm_mat_type "$type" "${opts[@]}" "${extra[@]}" -snes_view_solution "binary:$tmp/$np-$type.bin" 2>&1); then
    echo "$out"
    echo "run-example: FAILED with -dm_mat_type $type on $np rank(s)" >&2
    exit 1
  fi
  echo "$out"
  echo
  summary=$(echo "$out" | grep '^cavity: grid')
  case "$(field mat)" in
  "$type" | "seq$type" | "mpi$type") ;;
  *) echo "run-example: asked for -dm_mat_type $type, the matrix is $(field mat)" >&2; exit 1 ;;
  esac
}
# field <name>: the value after "<name> " in the summary line (names: mat, Newton its, KSP its, SNESSolve)
field() { echo "$summary" | tr ',' '\n' | sed -n "s/^ *$1 \([^ ]*\).*/\1/p"; }

lines=()
ref_newton=
for np in ${GPUKIT_EXAMPLE_RANKS:-1 2}; do
  run "$np" sgdia
  s_newton=$(field "Newton its") s_ksp=$(field "KSP its") s_t=$(field SNESSolve)
  run "$np" aij
  a_newton=$(field "Newton its") a_ksp=$(field "KSP its") a_t=$(field SNESSolve)
  ref_newton=${ref_newton:-$a_newton}
  [ "$s_newton" = "$a_newton" ] && [ "$a_newton" = "$ref_newton" ] || { echo "run-example: Newton iterations differ: sgdia $s_newton, aij $a_newton, first run $ref_newton" >&2; exit 1; }
  [ "$s_ksp" = "$a_ksp" ] || { echo "run-example: KSP iterations differ on $np rank(s): sgdia $s_ksp, aij $a_ksp" >&2; exit 1; }
  ratio=$(awk -v s="$s_t" -v a="$a_t" 'BEGIN { if (s > 0) printf "%.2f", a / s; else print "n/a" }')
  lines+=("$(printf '%d rank(s): sgdia %s Newton / %s KSP its, SNESSolve %s s | aij %s / %s, %s s | aij/sgdia time %s' "$np" "$s_newton" "$s_ksp" "$s_t" "$a_newton" "$a_ksp" "$a_t" "$ratio")")
done

echo "== solutions against the first AIJ run (per field, max|x - x_ref| / max|x_ref|, tolerance 1e-6)"
first=$(ls "$tmp"/*-aij.bin | head -n 1)
for f in "$tmp"/*.bin; do
  [ "$f" = "$first" ] && continue
  if ! d=$("$vecdiff" -a "$first" -b "$f" -rtol 1e-6 2>&1); then
    echo "$d"
    echo "run-example: the solution of $(basename "$f" .bin) differs from $(basename "$first" .bin)" >&2
    exit 1
  fi
  echo "$(basename "$f" .bin): $(echo "$d" | sed -n 's/^vecdiff: //p')"
done
echo
echo "== comparison (driven cavity, Newton + FGMRES + MG)"
printf '%s\n' "${lines[@]}"
