#!/usr/bin/env bash
# Driven-cavity comparison: run two driven-cavity solves and check that both converge, reach the same solution and
# take the same number of Newton iterations.
#
#   compare.sh "NP PROG ARGS..." "NP PROG ARGS..." [RTOL [NEWTON_DIFF [KSP_DIFF]]]
#
# PROG is "cavity" (examples/cavity.c, see tests/cavity/cavity.sh) or "ex19" (stock PETSc SNES ex19, $TUT/snes_ex19,
# built by tests/conformance/build.sh; it gets -dll_append $LIB). Each run is
#   $MPIEXEC -n NP <program> ARGS -snes_converged_reason -snes_view_solution binary:<file>
# Checks, in order:
#   - both runs exit 0, print no "PETSC ERROR" and print "Nonlinear solve converged";
#   - a cavity run given -dm_mat_type T reports (summary line) a matrix of type T, seqT or mpiT;
#   - the Newton iteration counts differ by at most NEWTON_DIFF (default 0);
#   - when KSP_DIFF is given and both runs are cavity runs, their total KSP iteration counts differ by at most KSP_DIFF;
#   - the solutions agree field by field (u, v, omega, T): max|a - b| <= RTOL * max|a| in each field (RTOL default
#     1e-6; tests/cavity/cavity_vecdiff.c). The solution files are in natural ordering, so 1 and 2 ranks compare.
# Exits 1 with both runs' last lines on failure. Environment: MPIEXEC, TUT, LIB, BIN as set by tests/run.sh.
set -u
if [ $# -lt 2 ] || [ $# -gt 5 ]; then
  echo "usage: $0 \"NP PROG ARGS...\" \"NP PROG ARGS...\" [RTOL [NEWTON_DIFF [KSP_DIFF]]]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cavity.sh"
top=$(cd "$here/../.." && pwd)
MPIEXEC=${MPIEXEC:-mpiexec}
TUT=${TUT:-$top/build/tutorials}
rtol=${3:-1e-6} ndiff=${4:-0} kdiff=${5:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpukit-cavity.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "compare: FAILED: $*"
  for r in 1 2; do
    echo "---- run $r: $(cat "$tmp/$r.cmd" 2>/dev/null)"
    grep -v '^\[' "$tmp/$r.out" 2>/dev/null | tail -n 25
  done
  echo "compare: FAILED: $*"
  exit 1
}

declare -A newton ksp prog
for r in 1 2; do
  spec=${!r}
  read -r -a w <<<"$spec"
  [ ${#w[@]} -ge 2 ] || fail "run $r: give \"NP PROG ARGS...\", got '$spec'"
  np=${w[0]} p=${w[1]} args=("${w[@]:2}")
  case $p in
  cavity) exe=("$CAVITY") ;;
  ex19) exe=("$TUT/snes_ex19" -dll_append "$LIB") ;;
  *) fail "run $r: unknown program '$p' (cavity or ex19)" ;;
  esac
  prog[$r]=$p
  cmd=("$MPIEXEC" -n "$np" "${exe[@]}" "${args[@]}" -snes_converged_reason -snes_view_solution "binary:$tmp/$r.bin")
  echo "${cmd[*]}" >"$tmp/$r.cmd"
  echo "compare: run $r: ${cmd[*]}"
  "${cmd[@]}" >"$tmp/$r.out" 2>&1 </dev/null
  rc=$?
  [ $rc -eq 0 ] || fail "run $r exited with status $rc"
  ! grep -q 'PETSC ERROR' "$tmp/$r.out" || fail "run $r printed PETSC ERROR"
  line=$(grep -m1 'Nonlinear solve converged due to' "$tmp/$r.out") || fail "run $r did not converge (no 'Nonlinear solve converged')"
  echo "  $line"
  newton[$r]=$(sed -n 's/.*Nonlinear solve converged due to [A-Z_]* iterations \([0-9]*\).*/\1/p' <<<"$line")
  if [ "$p" = cavity ]; then
    summary=$(grep -m1 '^cavity: grid' "$tmp/$r.out") || fail "run $r printed no summary line"
    echo "  $summary"
    ksp[$r]=$(sed -n 's/.*KSP its \([0-9]*\),.*/\1/p' <<<"$summary")
    want=
    for ((i = 0; i < ${#args[@]} - 1; i++)); do [ "${args[$i]}" = -dm_mat_type ] && want=${args[$((i + 1))]}; done
    if [ -n "$want" ]; then
      got=$(sed -n 's/.*, mat \([a-z]*\),.*/\1/p' <<<"$summary")
      case $got in "$want" | "seq$want" | "mpi$want") ;; *) fail "run $r asked for -dm_mat_type $want and used $got" ;; esac
    fi
  fi
done

d=$((newton[1] - newton[2]))
[ ${d#-} -le "$ndiff" ] || fail "Newton iterations differ: ${newton[1]} and ${newton[2]} (allowed difference $ndiff)"
if [ -n "$kdiff" ] && [ "${prog[1]}" = cavity ] && [ "${prog[2]}" = cavity ]; then
  d=$((ksp[1] - ksp[2]))
  [ ${d#-} -le "$kdiff" ] || fail "total KSP iterations differ: ${ksp[1]} and ${ksp[2]} (allowed difference $kdiff)"
fi
"$VECDIFF" -a "$tmp/1.bin" -b "$tmp/2.bin" -rtol "$rtol" >"$tmp/diff.out" 2>&1
rc=$?
cat "$tmp/diff.out" | grep -v '^\['
[ $rc -eq 0 ] || fail "the solutions differ by more than rtol $rtol per field (see above)"
echo "compare: OK: Newton iterations ${newton[1]} and ${newton[2]}${kdiff:+, KSP iterations ${ksp[1]:-?} and ${ksp[2]:-?}}; solutions agree to rtol $rtol per field"
