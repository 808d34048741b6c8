# Sourced by the benchmark scripts (bench/run.sh, bench/gpu.sh, bench/gsai.sh): what the records say about this run.
# Sets commit and exports GPUKIT_COMMIT (kept when set, e.g. by tests/gpu/run on a machine without .git, else git's
# HEAD), GPUKIT_SOURCE_STATE (kept when set, else "clean", "modified: <files>" naming the library sources (src/,
# include/, makefile) that differ from the commit, or "unknown"; uncommitted files elsewhere, such as bench/, docs/ or
# tests/, do not change what is measured), GPUKIT_HOST, GPUKIT_MACHINE, GPUKIT_DATE (GPUKIT_RUN_DATE when set: the parts
# of a run spread over several GPUs, bench/amb.sh, share it, so the report shows them as one run) and GPUKIT_LOAD.
commit=${GPUKIT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
if [ -z "${GPUKIT_SOURCE_STATE:-}" ]; then
  changed=$(git status --porcelain -- src include makefile 2>/dev/null | awk '{print $NF}' | tr '\n' ' ' | sed 's/ $//')
  if [ "$commit" = unknown ] || ! git rev-parse HEAD >/dev/null 2>&1; then GPUKIT_SOURCE_STATE=unknown
  elif [ -n "$changed" ]; then GPUKIT_SOURCE_STATE="modified: $changed"
  else GPUKIT_SOURCE_STATE=clean; fi
fi
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
mem=$(awk '/^MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo 2>/dev/null || true)
export GPUKIT_COMMIT=$commit GPUKIT_SOURCE_STATE
export GPUKIT_HOST=$(hostname 2>/dev/null || echo unknown)
export GPUKIT_MACHINE="${cpu:-unknown CPU}, $(nproc) cores, ${mem:-unknown memory}"
export GPUKIT_DATE=${GPUKIT_RUN_DATE:-$(date -u +%Y-%m-%dT%H:%M:%SZ)} # GPUKIT_RUN_DATE: one date for the parts of one run
export GPUKIT_LOAD=$(cut -d ' ' -f 1 /proc/loadavg 2>/dev/null || echo unknown)
