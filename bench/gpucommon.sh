# Sourced (not run) by the GPU benchmark scripts that run on the GPU machine (bench/stockmg.sh, bench/multigpu.sh,
# bench/ex45_cacg.sh): what they share. Sourcing it
#   - makes the repository root the working directory and sets top to it, sources scripts/mpienv.sh (OpenMPI as root,
#     oversubscription), sets objdir (OBJDIR, default build/gpu) and PETSC_DIR (default gpucarry/petsc-cuda, what
#     tests/gpu/pack.sh carries), and puts PETSc's and CUDA's (CUDA_HOME, /usr/local/cuda) lib folders first in
#     LD_LIBRARY_PATH;
#   - sets commit (GPUKIT_COMMIT, else git's short HEAD, else "unknown") and device (GPU 0's name from nvidia-smi, empty
#     where there is none).
# Functions:
#   gk_tmpdir NAME              sets tmp to a new folder (gpukit-NAME.XXXXXX under TMPDIR), removed when the script exits
#   gk_build_tutorial EX BIN    compiles PETSc's stock tutorial EX (e.g. ksp/ksp/tutorials/ex45), unmodified, from
#                               $PETSC_DIR/share/petsc/examples/src/EX.c against PETSC_DIR into BIN; says why and
#                               returns 1 when it cannot
#   gk_event LOG NAME           the line of event NAME in a -log_view file (field 4: the max time over ranks)
#   gk_mpiexec TMO NP ARGS...   timeout TMO mpiexec --bind-to none -n NP ARGS (one rank per GPU by PETSc's rule, device =
#                               rank % GPUs; no binding, so that each rank's CUDA threads are free)
#   gk_ngpus                    prints how many GPUs nvidia-smi sees (0 without one)
#   gk_results FILE             starts a results file: makes its folder, removes an old one
#   gk_runinfo_json             prints the common tail of a JSON record: "commit": ..., "device": ..., "date": ...
#   gk_copy_out FILE...         copies the files to $OUT when OUT is set (what the GPU machine sends back)
# The caller keeps its own `set -uo pipefail`; nothing here exits.
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top" || return 1
source "$top/scripts/mpienv.sh"
objdir=${OBJDIR:-build/gpu}
PETSC_DIR=${PETSC_DIR:-$top/gpucarry/petsc-cuda}
export LD_LIBRARY_PATH=$PETSC_DIR/lib:${CUDA_HOME:-/usr/local/cuda}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
commit=${GPUKIT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
device=$(timeout 30 nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -n 1)

gk_tmpdir() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpukit-$1.XXXXXX") || { echo "gpucommon.sh: mktemp failed" >&2; exit 1; }
  trap 'rm -rf "$tmp"' EXIT
}

gk_build_tutorial() {
  local ex=$1 bin=$2 src vars cc incs libs
  src=$PETSC_DIR/share/petsc/examples/src/$ex.c
  [ -f "$src" ] || { echo "$(basename "$0"): no $src (tests/gpu/pack.sh carries it)" >&2; return 1; }
  vars=$PETSC_DIR/lib/petsc/conf/petscvariables
  cc=$(sed -n 's/^PCC = //p' "$vars"); incs=$(sed -n 's/^PETSC_CC_INCLUDES = //p' "$vars"); libs=$(sed -n 's/^PETSC_WITH_EXTERNAL_LIB = //p' "$vars")
  mkdir -p "$(dirname "$bin")"
  # shellcheck disable=SC2086
  timeout 120 ${cc:-mpicc} -O2 -w $incs "$src" -o "$bin" -Wl,-rpath,"$PETSC_DIR/lib" $libs -lm || { echo "$(basename "$0"): building $ex failed" >&2; return 1; }
}

gk_event() { grep -E "^$2 " "$1" | head -n 1; }

gk_mpiexec() {
  local tmo=$1 np=$2
  shift 2
  timeout "$tmo" mpiexec --bind-to none -n "$np" "$@"
}

gk_ngpus() { timeout 30 nvidia-smi -L 2>/dev/null | grep -c '^GPU'; }

gk_results() {
  mkdir -p "$(dirname "$1")"
  rm -f "$1"
}

gk_runinfo_json() { printf '"commit": "%s", "device": "%s", "date": "%s"' "$commit" "$device" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"; }

gk_copy_out() { [ -n "${OUT:-}" ] && cp "$@" "$OUT/" 2>/dev/null; return 0; }
