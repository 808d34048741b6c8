# Sourced by bench/amb.sh and bench/dcsr.sh: one benchmark run on several GPUs of one machine.
#
#   gk_deal_gpus NAME SCRIPT NGPU PREFIX OUT MATRICES...
#
# NAME names the script in messages (bench/amb.sh); SCRIPT is the script to run once per GPU; NGPU is a count > 1 or
# "all"; PREFIX is the script's variable prefix (GPUKIT_AMB): each part runs with ${PREFIX}_GPUS=1,
# ${PREFIX}_MATRICES=<its share>, ${PREFIX}_OUT=<a temporary file>, ${PREFIX}_PART=1 and OUT unset, on one GPU
# (CUDA_VISIBLE_DEVICES = the g-th of the caller's CUDA_VISIBLE_DEVICES, else of nvidia-smi -L); the matrices are dealt
# round-robin in their order. Every part has its own budget; all share one GPUKIT_RUN_DATE, so that the records are one
# run in the report. The parts' records are joined into OUT (copied to $OUT when set) and summarised.
# Returns 2 when NGPU asks for one GPU (or one is visible): the caller measures itself; else 0, or 1 when a part failed
# or nothing was recorded.
gk_deal_gpus()
{
  local name=$1 script=$2 ngpu=$3 prefix=$4 out=$5
  shift 5
  local -a gpus pids=() mats=("$@")
  local g i k sub part failed=0
  [ "$ngpu" = all ] || [ "${ngpu:-1}" -gt 1 ] 2>/dev/null || return 2
  if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then # the caller's GPUs (indices or UUIDs), in its order
    IFS=, read -r -a gpus <<<"$CUDA_VISIBLE_DEVICES"
  else
    mapfile -t gpus < <(timeout 30 nvidia-smi -L 2>/dev/null | grep '^GPU' | sed 's/^GPU \([0-9]*\):.*/\1/')
  fi
  [ "$ngpu" = all ] && ngpu=${#gpus[@]}
  [ "${ngpu:-1}" -gt 1 ] 2>/dev/null || return 2
  if [ "$ngpu" -gt "${#gpus[@]}" ]; then
    echo "$name: ${prefix}_GPUS=$ngpu but ${#gpus[@]} GPU(s) visible (${CUDA_VISIBLE_DEVICES:-nvidia-smi -L}); using ${#gpus[@]}" >&2
    ngpu=${#gpus[@]}
    [ "$ngpu" -gt 1 ] || return 2
  fi
  export GPUKIT_RUN_DATE=${GPUKIT_RUN_DATE:-$(date -u +%Y-%m-%dT%H:%M:%SZ)} # one run in the records and the report
  GK_DEAL_PARTS=() # global: the EXIT trap removes them too when the caller is interrupted
  trap 'kill $(jobs -p) 2>/dev/null; rm -f "${GK_DEAL_PARTS[@]}" "${GK_DEAL_PARTS[@]/%/.log}"' EXIT # the parts do not outlive their caller
  trap 'exit 130' INT TERM
  for ((g = 0; g < ngpu; g++)); do
    sub=""
    for ((k = g; k < ${#mats[@]}; k += ngpu)); do sub="$sub ${mats[$k]}"; done
    [ -z "$sub" ] && continue
    part=$(mktemp "${TMPDIR:-/tmp}/gpukit-part-gpu$g.XXXXXX")
    GK_DEAL_PARTS+=("$part")
    echo "$name: GPU ${gpus[$g]}:$sub"
    env CUDA_VISIBLE_DEVICES="${gpus[$g]}" "${prefix}_GPUS=1" "${prefix}_MATRICES=$sub" "${prefix}_OUT=$part" "${prefix}_PART=1" OUT= bash "$script" >"$part.log" 2>&1 &
    pids+=($!)
  done
  if [ ${#GK_DEAL_PARTS[@]} -eq 0 ]; then
    echo "$name: no matrix to measure (${prefix}_MATRICES is empty)" >&2
    return 1
  fi
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || failed=1
    sed "s/^/[gpu part $i] /" "${GK_DEAL_PARTS[$i]}.log"
  done
  trap - EXIT INT TERM
  cat "${GK_DEAL_PARTS[@]}" >"$out"
  rm -f "${GK_DEAL_PARTS[@]}" "${GK_DEAL_PARTS[@]/%/.log}"
  if [ ! -s "$out" ]; then
    echo "$name: no record from any GPU; nothing written" >&2
    return 1
  fi
  [ -n "${OUT:-}" ] && cp "$out" "$OUT/"
  echo "== $out ($(wc -l <"$out") records from $ngpu GPUs${OUT:+, copied to \$OUT})"
  command -v python3 >/dev/null 2>&1 && { python3 bench/report_formats.py --print "$out" || true; }
  return $failed
}
