#!/usr/bin/env bash
# Reads a PETSc -log_view summary (a file written with -log_view :<file>) and prints, for each event named, one line
#   <event> <count> <max time s> <CpuToGpu count> <CpuToGpu MB> <GpuToCpu count> <GpuToCpu MB> <%T>
# (a GPU run without -log_view_gpu_time prints "n/a" for the time of events that launch kernels; %T, the event's
# share of the run's time in percent, is there either way)
# (the last four are the "GPU - CpuToGpu - - GpuToCpu -" columns of a PETSc built with a device, per rank, 1 MB =
# 1e6 bytes; "-" without them; an event that did not run prints zeros). Events are inclusive: SNESSolve contains the
# rest. Note that PETSc logs every device-to-host memcpy, so each VecMDot/VecDot result (a few scalars) counts as one
# GpuToCpu copy: GpuToCpu counts grow with the Krylov iterations, their sizes stay tiny.
#
#   logview.sh LOGFILE EVENT...        e.g. logview.sh log.txt SNESSolve SNESJacobianEval PCSetUp MatMult PCApply
# Used by tests/cavity/copies.sh and bench/cavity.sh.
set -u
[ $# -ge 2 ] || { echo "usage: $0 LOGFILE EVENT..." >&2; exit 2; }
log=$1
shift
[ -f "$log" ] || { echo "logview: no file $log" >&2; exit 1; }
grep -q '^Event  *Count' "$log" || { echo "logview: $log has no -log_view event table" >&2; exit 1; }
awk -v evs="$*" '
  BEGIN { n = split(evs, e, " "); for (i = 1; i <= n; i++) want[e[i]] = i }
  /^Event  *Count/ { table = 1; gpu = ($0 ~ /GPU/) }
  table && ($1 in want) && $2 ~ /^[0-9]+$/ && NF > 10 && !($1 in line) {
    if (gpu) line[$1] = $1 " " $2 " " $4 " " $(NF - 4) " " $(NF - 3) " " $(NF - 2) " " $(NF - 1) " " $11
    else line[$1] = $1 " " $2 " " $4 " - - - - " $11
  }
  END { for (i = 1; i <= n; i++) print (e[i] in line) ? line[e[i]] : e[i] " 0 0 0 0 0 0 0" }
' "$log"
