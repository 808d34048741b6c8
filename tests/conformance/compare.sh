#!/usr/bin/env bash
# Conformance check: run a stock PETSc tutorial twice, with a reference and a new set of options, and check that
# both print the same iteration counts and the same norms.
#
#   compare.sh NP "TUTORIAL ARGS..." "OPTS_REF" "OPTS_NEW" [RTOL [ATOL]]
#
# runs   $MPIEXEC -n NP $TUT/TUTORIAL ARGS OPTS_REF -dll_append $LIB
# and    $MPIEXEC -n NP $TUT/TUTORIAL ARGS OPTS_NEW -dll_append $LIB
# (e.g. OPTS_REF="-dm_mat_type aij", OPTS_NEW="-dm_mat_type sgdia").
#
# Compared are the lines that do not start with "[" (PetscInfo lines do) and that mention "iteration", "norm" or
# "error" (any case): -ksp_converged_reason, -snes_converged_reason, -ksp_monitor, -snes_monitor(_short),
# "Number of SNES iterations = N", "Residual norm X", "Norm of error X iterations N", ...  Each such line is cut
# into words; the two runs must give the same lines in the same order, the same non-numeric words (converged
# reasons, ...), EQUAL integers (iteration counts) and floating-point numbers that agree to
#   |a - b| <= max(RTOL * max(|a|,|b|), ATOL, one unit in the last digit printed, counting at least 6 digits)
# (RTOL defaults to 1e-6, ATOL to 1e-12; the last term only matters for numbers printed with few digits, like
# %g's 6). A larger ATOL suits runs whose last norms are round-off noise (see conformance.list).
# It fails (exit 1, printing both runs' compared lines and the first mismatch) if either run fails or prints
# "PETSC ERROR", if the numbers of compared words differ, if a number is NaN, or if no number was compared at all.
# When OPTS_NEW selects a gpukit matrix type, the new run also gets -info <tmpfile>:mat and must report that it
# really created that type (the info goes to per-rank files so that it cannot interleave with the tutorial's own
# output):
#   - OPTS_NEW names "sgdia" anywhere (sgdia, sgdiacuda, ...): "SGDIA from DMDA" (gpukit's PetscInfo line when it
#     creates a MATSGDIA matrix from a DMDA);
#   - the last -mat_type or -dm_mat_type of OPTS_NEW is amb, ambcuda, dcsr or dcsrcuda (or a seq/mpi name of one,
#     e.g. seqaijamb, mpidcsrcuda): a line "gpukit: created a <name> matrix" whose name ends in that family
#     (amb: seqaijamb/mpiaijamb, not ...ambcuda; ambcuda: seqaijambcuda/mpiaijambcuda; same for dcsr, dcsrcuda);
#   - $COMPARE_EXPECT_INFO, when set, replaces these: an extended regular expression the new run's -info :mat
#     output must match (e.g. to check the mechanism itself with a stock type).
# Environment: $MPIEXEC (default mpiexec), $TUT (default build/tutorials), $LIB (default lib/libpetscgpukit.so).
set -u
if [ $# -lt 4 ] || [ $# -gt 6 ]; then
  echo "usage: $0 NP \"TUTORIAL ARGS...\" \"OPTS_REF\" \"OPTS_NEW\" [RTOL [ATOL]]" >&2
  exit 2
fi
np=$1 tutargs=$2 optsref=$3 optsnew=$4 rtol=${5:-1e-6} atol=${6:-1e-12}
top=$(cd "$(dirname "$0")/../.." && pwd)
MPIEXEC=${MPIEXEC:-mpiexec}
TUT=${TUT:-$top/build/tutorials}
LIB=${LIB:-$top/lib/libpetscgpukit.so}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpukit-compare.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

read -r -a targs <<<"$tutargs"
read -r -a oref <<<"$optsref"
read -r -a onew <<<"$optsnew"
[ ${#targs[@]} -gt 0 ] || { echo "compare: no tutorial given" >&2; exit 2; }
exe=$TUT/${targs[0]}
[ -x "$exe" ] || { echo "compare: no executable $exe (run tests/conformance/build.sh)" >&2; exit 1; }
# the gpukit type the new run must create, and the -info line that proves it
newtype=
for ((i = 0; i + 1 < ${#onew[@]}; i++)); do
  case "${onew[i]}" in -mat_type | -dm_mat_type) newtype=${onew[i + 1]} ;; esac
done
fam=${newtype#seq}; fam=${fam#mpi}; fam=${fam#aij}
expect= expectwhat=
if [ -n "${COMPARE_EXPECT_INFO:-}" ]; then
  expect=$COMPARE_EXPECT_INFO expectwhat="line matching '$COMPARE_EXPECT_INFO' (\$COMPARE_EXPECT_INFO)"
else
  case "$optsnew" in
    *sgdia*) expect='SGDIA from DMDA' expectwhat="'SGDIA from DMDA' line: it did not create a MATSGDIA matrix" ;;
    *)
      case "$fam" in
        amb | ambcuda | dcsr | dcsrcuda)
          expect="gpukit: created a [a-z]*$fam matrix"
          expectwhat="'gpukit: created a ...$fam matrix' line: it did not create a gpukit $fam matrix (-mat_type/-dm_mat_type $newtype)" ;;
      esac ;;
  esac
fi
checktype=0
[ -n "$expect" ] && { checktype=1; onew+=(-info "$tmp/info:mat"); }

fail() {
  echo "compare: FAILED: $*"
  for r in ref new; do
    echo "---- $r run: $MPIEXEC -n $np $exe ${targs[*]:1} $([ $r = ref ] && echo "${oref[*]}" || echo "${onew[*]}") -dll_append $LIB"
    if [ -s "$tmp/$r.sel" ]; then cat "$tmp/$r.sel"; else tail -n 40 "$tmp/$r.out" 2>/dev/null; fi
  done
  echo "compare: FAILED: $*"
  exit 1
}

for r in ref new; do
  if [ $r = ref ]; then opts=("${oref[@]}"); else opts=("${onew[@]}"); fi
  echo "compare: $MPIEXEC -n $np $exe ${targs[*]:1} ${opts[*]} -dll_append $LIB"
  "$MPIEXEC" -n "$np" "$exe" "${targs[@]:1}" "${opts[@]}" -dll_append "$LIB" >"$tmp/$r.out" 2>&1
  rc=$?
  # the lines compared: not PetscInfo ("[rank] <class> ..."), mentioning iterations, norms or errors
  grep -v '^\[' "$tmp/$r.out" | grep -iE 'iteration|norm|error' | grep -v 'PETSC ERROR' >"$tmp/$r.sel"
  if [ $rc -ne 0 ]; then rm -f "$tmp/$r.sel"; fail "the $r run exited with status $rc"; fi
  if grep -q 'PETSC ERROR' "$tmp/$r.out"; then rm -f "$tmp/$r.sel"; fail "the $r run printed PETSC ERROR"; fi
done
if [ $checktype = 1 ]; then
  cat "$tmp"/info* >"$tmp/new.info" 2>/dev/null
  grep -qE "$expect" "$tmp/new.info" || fail "the new run's -info :mat output has no $expectwhat"
  echo "compare: the new run's -info :mat says: $(grep -m1 -E "$expect" "$tmp/new.info")"
fi

# one record per word: kind (I integer, F float, T text), the word, the line number in the .sel file
tokens() {
  awk '{
    n = split($0, w, /[ \t,;=()]+/)
    for (i = 1; i <= n; i++) {
      t = w[i]
      if (t == "") continue
      if (t ~ /^[-+]?[0-9]+$/) k = "I"
      else if (t ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/) k = "F"
      else if (t ~ /^[-+]?[nN][aA][nN]$/) k = "F"
      else k = "T"
      print k, t, NR
    }
  }' "$1"
}
tokens "$tmp/ref.sel" >"$tmp/ref.tok"
tokens "$tmp/new.sel" >"$tmp/new.tok"
nref=$(grep -c '^[IF] ' "$tmp/ref.tok")
nnew=$(grep -c '^[IF] ' "$tmp/new.tok")
[ "$nref" -gt 0 ] || fail "no iteration count or norm found in the reference output: nothing to compare"

# compare word by word: "BAD refline newline why" at the first mismatch, else "OK worst" (the largest difference/tolerance);
# where one run prints more words, the other's list is padded with "(end-of-output)" words, a mismatch
wref=$(wc -l <"$tmp/ref.tok") wnew=$(wc -l <"$tmp/new.tok")
for ((i = wref; i < wnew; i++)); do echo "E (end-of-output) 0"; done >>"$tmp/ref.tok"
for ((i = wnew; i < wref; i++)); do echo "E (end-of-output) 0"; done >>"$tmp/new.tok"
verdict=$(paste -d' ' "$tmp/ref.tok" "$tmp/new.tok" | awk -v rtol="$rtol" -v atol="$atol" '
  function abs(x) { return x < 0 ? -x : x }
  # one unit in the last printed digit of a decimal number, taking at least 6 significant digits (%g drops
  # trailing zeros: 1e-05 may be 1.00000e-05)
  function ulp(s,   m, e, p, f, g) {
    m = s; e = 0
    if (match(m, /[eE]/)) { e = substr(m, RSTART + 1) + 0; m = substr(m, 1, RSTART - 1) }
    p = index(m, "."); f = (p ? length(m) - p : 0)
    g = m; gsub(/[^0-9]/, "", g); sub(/^0+/, "", g)
    if (length(g) == 0) return 0
    if (length(g) < 6) f += 6 - length(g)
    return 10 ^ (e - f)
  }
  function isnan(s) { return s ~ /[nN][aA][nN]/ }
  function bad(msg) { printf "BAD %d %d %s\n", $3, $6, msg; done = 1; exit }
  {
    k1 = $1; v1 = $2; k2 = $4; v2 = $5
    if (k1 != k2 || (k1 != "F" && v1 != v2)) bad("\"" v1 "\" vs \"" v2 "\"")
    if (k1 != "F") next
    if (isnan(v1) || isnan(v2)) bad("NaN (" v1 " vs " v2 ")")
    a = v1 + 0; b = v2 + 0; d = abs(a - b)
    tol = rtol * (abs(a) > abs(b) ? abs(a) : abs(b))
    if (tol < atol) tol = atol
    u = ulp(v1); if (ulp(v2) > u) u = ulp(v2)
    if (tol < u) tol = u
    if (d > tol) bad(sprintf("%s vs %s (difference %.3g, tolerance %.3g)", v1, v2, d, tol))
    if (tol > 0 && d / tol > worst) { worst = d / tol; wv = v1 " vs " v2 }
  }
  END { if (!done) printf "OK %.3g%s\n", worst, (wv != "" ? " (" wv ")" : "") }')
if [ "${verdict%% *}" != OK ]; then
  read -r _ l1 l2 why <<<"$verdict"
  fail "first mismatch: $why
  ref line $l1: $(sed -n "${l1}p" "$tmp/ref.sel")
  new line $l2: $(sed -n "${l2}p" "$tmp/new.sel")"
fi
[ "$wref" -eq "$wnew" ] && [ "$nref" -eq "$nnew" ] ||
  fail "the runs print different numbers of compared words ($nref numbers in ref, $nnew in new)"
echo "---- compared lines (ref run):"
cat "$tmp/ref.sel"
echo "compare: OK: $nref numbers agree ($(grep -c "^I " "$tmp/ref.tok") integers equal, $(grep -c "^F " "$tmp/ref.tok") floats to rtol $rtol, atol $atol; largest difference/tolerance ${verdict#OK })"
