#!/usr/bin/env bash
# Host<->device copies of a driven-cavity solve: runs examples/cavity.c (device vectors) with -log_view and checks the
# copies inside SNESSolve against a limit per Newton step.
#
#   copies.sh NP MAX[,FIRST] ARGS...   e.g. copies.sh 1 10,9 -use_gpu -dm_vec_type cuda -dm_mat_type sgdiacuda -da_refine 4
#
# The example prints, from PETSc's copy counters, the CpuToGpu/GpuToCpu copies before the first Newton step (SNES and
# PC set-up) and in each Newton step (the first one includes the first PCSetUp), with the number of GpuToCpu copies
# that were VecMDot results. Checks: the run converges; every Newton step after the first makes at most MAX CpuToGpu
# copies; with FIRST, the first Newton step makes at most FIRST CpuToGpu copies and at most FIRST data GpuToCpu copies
# (GpuToCpu minus the VecMDot results); and the bytes copied device-to-host inside SNESSolve (the -log_view GpuToCpu
# column) stay below one solution vector (4 * mx * my doubles) per Newton step. GpuToCpu *counts* of the later steps
# are only reported: PETSc logs each VecMDot/VecDot result (a few scalars) as a GpuToCpu copy, so they grow with the
# Krylov iterations whatever the application does. Also prints the events that copied (inclusive counts) and the
# total CpuToGpu per Newton step (set-up included).
set -u
[ $# -ge 3 ] || { echo "usage: $0 NP MAX[,FIRST] ARGS..." >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cavity.sh"
np=$1 max=${2%%,*} first=
case $2 in *,*) first=${2#*,} ;; esac
[[ "$max" =~ ^[0-9]+$ ]] && [[ "$first" =~ ^[0-9]*$ ]] || { echo "copies: MAX[,FIRST] must be numbers, got '$2'" >&2; exit 2; }
shift 2
MPIEXEC=${MPIEXEC:-mpiexec}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpukit-copies.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "copies: $MPIEXEC -n $np $CAVITY $* -log_view :$tmp/log"
"$MPIEXEC" -n "$np" "$CAVITY" "$@" -log_view ":$tmp/log" >"$tmp/out" 2>&1 </dev/null
rc=$?
cat "$tmp/out"
[ $rc -eq 0 ] || { echo "copies: FAILED: the run exited with status $rc"; exit 1; }
summary=$(grep -m1 '^cavity: grid' "$tmp/out")
newton=$(sed -n 's/.*Newton its \([0-9]*\),.*/\1/p' <<<"$summary")
grid=$(sed -n 's/^cavity: grid \([0-9]*\)x\([0-9]*\),.*/\1 \2/p' <<<"$summary")
[ -n "$newton" ] && [ "$newton" -gt 0 ] && [ -n "$grid" ] || { echo "copies: FAILED: no summary line with the grid and Newton iterations"; exit 1; }
grep -q 'CpuToGpu' "$tmp/log" || { echo "copies: FAILED: the -log_view table has no GPU columns (PETSc without a device?)"; exit 1; }
read -r _ _ _ ctog ctogmb gtoc gtocmb _ < <(bash "$here/logview.sh" "$tmp/log" SNESSolve)
echo "SNESSolve: CpuToGpu $ctog copies ($ctogmb MB), GpuToCpu $gtoc copies ($gtocmb MB) per rank, $newton Newton iterations"
awk '/^Event  *Count/ {t = 1} t && NF > 10 && $2 ~ /^[0-9]+$/ && ($(NF - 4) + $(NF - 2)) > 0 {print "  " $1 ": CpuToGpu " $(NF - 4) " (" $(NF - 3) " MB), GpuToCpu " $(NF - 2) " (" $(NF - 1) " MB)"}' "$tmp/log"
steps=$(sed -n 's/^cavity: host<->device copies in SNESSolve.*Newton steps \(.*\)$/\1/p' "$tmp/out")
[ -n "$steps" ] || { echo "copies: FAILED: the example printed no per-step copy counts (a build without CUDA, or host vectors?)"; exit 1; }
read -r mx my <<<"$grid"
awk -v steps="$steps" -v c="$ctog" -v g="$gtocmb" -v n="$newton" -v m="$max" -v f="$first" -v vmb="$(awk -v a="$mx" -v b="$my" 'BEGIN {print 32 * a * b / 1e6}')" 'BEGIN {
  k = split(steps, s, ", *"); worst = 0; ok = 1
  for (i = 2; i <= k; i++) { split(s[i], cg, "/"); if (cg[1] + 0 > worst) worst = cg[1] + 0 }
  printf "copies: CpuToGpu in Newton steps after the first: at most %d (limit %s); all of SNESSolve: %.1f per Newton step; GpuToCpu %.3g MB per Newton step (limit: one solution vector, %.3g MB)\n", worst, m, c / n, g / n, vmb
  if (f != "") {
    split(s[1], q, "[/ ()]+") # CpuToGpu, GpuToCpu, of which VecMDot results
    printf "copies: first Newton step: CpuToGpu %d, data GpuToCpu %d (GpuToCpu %d less %d VecMDot results); limit %s each\n", q[1], q[2] - q[3], q[2], q[3], f
    ok = q[1] + 0 <= f + 0 && q[2] - q[3] <= f + 0 && q[3] != ""
  }
  exit !(ok && worst <= m && g / n < vmb) }' || { echo "copies: FAILED: more host<->device traffic inside SNESSolve than the limits above"; exit 1; }
