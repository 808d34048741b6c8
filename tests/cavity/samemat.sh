#!/usr/bin/env bash
# Driven-cavity Jacobian comparison: two runs of examples/cavity.c (one rank) must assemble the same matrices.
#
#   samemat.sh "ARGS..." "ARGS..." [RTOL [STEPS]]
#
# Each run is   $CAVITY ARGS -snes_max_it STEPS -check_converged 0 -ksp_view_mat binary:<file>   (STEPS default 2)
# so it writes the Jacobian of each of its Newton steps (the outer KSP's operator: the finest level with MG) as the
# linear solve sees it. Use STEPS 1 where the two runs' solves may round differently (device reductions): from the
# second step on, the Jacobian depends on the iterate, and upwinding switches where a velocity is near 0. tests/cavity/cavity_matdiff.c then checks, matrix by matrix, equal structure (row
# lengths, column indices) and values within RTOL relative to max|a_ij| (default 0: equal values). Both runs must
# take the same number of Newton steps. Used to check that -cavity_aij_fill csr (values straight into the CSR array)
# and coo (MatSetValuesCOO), and the host stencil assembly, give the same matrix. Environment as tests/cavity/cavity.sh.
set -u
if [ $# -lt 2 ] || [ $# -gt 4 ]; then
  echo "usage: $0 \"ARGS...\" \"ARGS...\" [RTOL [STEPS]]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cavity.sh"
MATDIFF=${MATDIFF:-$(dirname "$VECDIFF")/cavity_matdiff}
[ -x "$MATDIFF" ] || { echo "samemat: no comparison program at $MATDIFF ('make tests' builds it)" >&2; exit 1; }
MPIEXEC=${MPIEXEC:-mpiexec}
rtol=${3:-0} steps=${4:-2}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpukit-samemat.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
its=()
for k in 1 2; do
  args=$([ $k = 1 ] && echo "$1" || echo "$2")
  echo "samemat: run $k: $MPIEXEC -n 1 $CAVITY $args -snes_max_it $steps -check_converged 0 -ksp_view_mat binary:$tmp/$k.bin"
  # shellcheck disable=SC2086
  out=$($MPIEXEC -n 1 "$CAVITY" $args -snes_max_it "$steps" -check_converged 0 -ksp_view_mat "binary:$tmp/$k.bin" 2>&1 </dev/null)
  rc=$?
  echo "$out" | tail -n 3 | sed 's/^/  /'
  if [ $rc -ne 0 ] || grep -q "PETSC ERROR" <<<"$out"; then
    echo "samemat: FAILED: run $k exited with $rc" >&2
    exit 1
  fi
  its[$k]=$(sed -n 's/^cavity: .*Newton its \([0-9]*\),.*/\1/p' <<<"$out")
done
if [ -z "${its[1]}" ] || [ "${its[1]}" != "${its[2]}" ] || [ "${its[1]}" -lt 1 ]; then
  echo "samemat: FAILED: Newton steps '${its[1]}' and '${its[2]}' (expected equal and at least 1)" >&2
  exit 1
fi
"$MATDIFF" -a "$tmp/1.bin" -b "$tmp/2.bin" -n "${its[1]}" -rtol "$rtol" </dev/null || { echo "samemat: FAILED: the matrices differ" >&2; exit 1; }
echo "samemat: OK: ${its[1]} Jacobians equal (rtol $rtol)"
