#!/usr/bin/env bash
# Multi-GPU scaling (issue 19), one MPI rank per GPU on one host, against PETSc's MPIAIJCUSPARSE and KSPCG measured
# in the same run:
#   weak   MatMult, 3-D 7-point, 256^3 rows per GPU (n = 256, 323, 406 for 1, 2, 4 GPUs): sgdiacuda and aijcusparse
#          (bench/sgdia_mult), with -use_gpu_aware_mpi 0 (halo staged through the host) and, where MPI is CUDA-aware,
#          1; CG + Jacobi and KSPCACG (s = 4, 8) per iteration on sgdiacuda, CG on aijcusparse (bench/cacg_bench);
#   strong the latency-bound 128^3 on 1, 2, 4 GPUs: CG against KSPCACG s = 4, 8 (sgdiacuda), CG on aijcusparse.
# Efficiency = time on 1 GPU / time on P GPUs (weak), speed-up (strong). Records: bench/results/multigpu-<date>.jsonl
# (the benchmarks' own JSON records, each with "gpus" and "gpu_aware" added); copied to $OUT when set.
#
#   bash bench/multigpu.sh        on a 2- or 4-GPU machine, after tests/gpu/run built the benchmarks (build/gpu)
#
# Environment: OBJDIR (build/gpu), PETSC_DIR (gpucarry/petsc-cuda), GPUKIT_MULTI_GPUS (1 2 4, capped at the GPUs
# present), GPUKIT_MULTI_WEAK_N ("256 323 406"), GPUKIT_MULTI_STRONG_N (128), GPUKIT_MULTI_TIMEOUT (300 s per run),
# GPUKIT_MULTI_SKIP (words: weakmult weakcg strong aware).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
source "$top/scripts/mpienv.sh"
objdir=${OBJDIR:-build/gpu}
PETSC_DIR=${PETSC_DIR:-$top/gpucarry/petsc-cuda}
export LD_LIBRARY_PATH=$PETSC_DIR/lib:${CUDA_HOME:-/usr/local/cuda}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0
tmo=${GPUKIT_MULTI_TIMEOUT:-300}
skip=" ${GPUKIT_MULTI_SKIP:-} "
ngpu=$(timeout 30 nvidia-smi -L 2>/dev/null | grep -c '^GPU')
device=$(timeout 30 nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -n 1)
read -r -a weakn <<<"${GPUKIT_MULTI_WEAK_N:-256 323 406}"
sn=${GPUKIT_MULTI_STRONG_N:-128}
gpus=()
for g in ${GPUKIT_MULTI_GPUS:-1 2 4}; do [ "$g" -le "$ngpu" ] && gpus+=("$g"); done
echo "multigpu: $ngpu x ${device:-?} visible; runs on ${gpus[*]} GPU(s); $(mpiexec --version 2>&1 | head -n 1)"
mult=$objdir/bench/sgdia_mult cacg=$objdir/bench/cacg_bench
for b in "$mult" "$cacg"; do [ -x "$b" ] || { echo "multigpu.sh: $b is missing (tests/gpu/run builds the benchmarks)" >&2; exit 1; }; done
out=bench/results/multigpu-$(date -u +%Y-%m-%d).jsonl
rm -f "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpukit-multigpu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0

# is this MPI CUDA-aware? (OpenMPI says so through ompi_info)
aware=0
ompi_info --parsable --all 2>/dev/null | grep -q 'mpi_built_with_cuda_support:value:true' && aware=1
echo "multigpu: MPI CUDA-aware: $aware"

# run <label> <gpus> <aware> <binary and options...>: one run, its JSON records tagged and appended to $out
run() {
  local label=$1 p=$2 aw=$3
  shift 3
  rm -f "$tmp/rec.jsonl"
  echo "== $label: $p GPU(s), gpu-aware $aw: $*"
  if ! timeout "$tmo" mpiexec --bind-to none -n "$p" "$@" -use_gpu_aware_mpi "$aw" -json "$tmp/rec.jsonl" 2>&1 | tail -n 14; then
    echo "multigpu.sh: $label on $p GPU(s) failed" >&2
    failed=1
    return
  fi
  [ -f "$tmp/rec.jsonl" ] && sed "s/}\$/, \"bench_set\": \"$label\", \"gpus\": $p, \"gpu_aware\": $aw}/" "$tmp/rec.jsonl" >>"$out"
}

for i in "${!gpus[@]}"; do
  p=${gpus[$i]}
  n=${weakn[$i]:-${weakn[-1]}}
  case $skip in *" weakmult "*) ;; *)
    run weak-mult "$p" 0 "$mult" -formats sgdiacuda,aijcusparse -dim 3 -n "$n" -reps 50 -batches 5
    if [ $aware = 1 ] && [ "$p" -gt 1 ]; then case $skip in *" aware "*) ;; *) run weak-mult "$p" 1 "$mult" -formats sgdiacuda,aijcusparse -dim 3 -n "$n" -reps 50 -batches 5 ;; esac; fi ;;
  esac
  case $skip in *" weakcg "*) ;; *)
    run weak-cg "$p" 0 "$cacg" -dim 3 -n "$n" -mat_type sgdiacuda -methods cg,cacg4,cacg8 -its 60 -batches 2 -rtol 1e-6
    run weak-cg "$p" 0 "$cacg" -dim 3 -n "$n" -mat_type aijcusparse -methods cg -its 60 -batches 2 -rtol 1e-6 ;;
  esac
  case $skip in *" strong "*) ;; *)
    run strong-cg "$p" 0 "$cacg" -dim 3 -n "$sn" -mat_type sgdiacuda -methods cg,cacg4,cacg8 -its 200 -batches 3
    run strong-cg "$p" 0 "$cacg" -dim 3 -n "$sn" -mat_type aijcusparse -methods cg -its 200 -batches 3 ;;
  esac
done

# a summary: efficiency (weak) and speed-up (strong) against 1 GPU, per record kind
python3 - "$out" <<'PY' || true
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def key(r):
    return (r.get("bench_set"), r.get("format") or r.get("mat_type"), r.get("method", ""), r.get("gpu_aware"))
def t(r):  # seconds: sgdia_mult's time_ms (one MatMult, fastest batch), cacg_bench's time_per_it_ms
    for k in ("time_ms", "time_per_it_ms"):
        if r.get(k):
            return 1e-3 * float(r[k])
    return None
base = {}
for r in recs:
    if r.get("gpus") == 1 and t(r):
        base[key(r)] = t(r)
print("%-10s %-12s %-12s %5s %6s %12s %8s" % ("set", "type", "method", "aware", "gpus", "time_ms", "vs_1gpu"))
for r in recs:
    k, tt = key(r), t(r)
    b = base.get(k[:3] + (0,)) or base.get(k)
    print("%-10s %-12s %-12s %5s %6s %12s %8s" % (k[0], k[1], k[2], k[3], r.get("gpus"), "%.4f" % (1e3 * tt) if tt else "-", "%.2f" % (b / tt) if (b and tt) else "-"))
PY
echo "multigpu: records in $out"
[ -n "${OUT:-}" ] && cp "$out" "$OUT/" 2>/dev/null
exit $failed
