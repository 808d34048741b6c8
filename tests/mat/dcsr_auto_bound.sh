#!/usr/bin/env bash
# dcsr_ops_auto_bound_np<n> (tests/mat/dcsr.list): the default automatic defragmentation bound of MATDCSR. Runs
# dcsr_ops on $1 ranks (MPIEXEC and BIN come from tests/run.sh's environment) with -info written to
# a file per rank (two ranks writing -info to one pipe can split a line), then reads every assembly's "rows fragmented"
# line: each with more than 1/16 of its rows fragmented must say ", defragmenting", and at least one between 1/16 and
# 1/8 must have defragmented. Fails when dcsr_ops fails, when no assembly was reported, or when a check fails.
set -o pipefail
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
$MPIEXEC -n "${1:?usage: dcsr_auto_bound.sh <ranks>}" "$BIN/mat/dcsr_ops" -info "$t/info:mat" >"$t/out" 2>&1
rc=$?
cat "$t/out" "$t"/info* | awk '
  /rows fragmented/ {
    for (i = 1; i <= NF; i++) if ($i == "of" && $(i + 2) == "rows") { x = $(i - 1); m = $(i + 1) }
    d = /defragmenting/; n++
    if (x > m / 16 && !d) bad++
    if (x > m / 16 && x <= m / 8 && d) between++
  }
  /^(ok|FAIL|not ok)|rror/ { print }
  END {
    print n + 0, "assemblies,", between + 0, "defragmented between 1/16 and 1/8 of the rows fragmented,", bad + 0, "above 1/16 not defragmented"
    exit !(n && between && !bad)
  }'
s=$?
[ $rc = 0 ] && [ $s = 0 ]
