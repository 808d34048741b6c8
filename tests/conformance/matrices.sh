#!/usr/bin/env bash
# Write the shared SuiteSparse matrices (tests/data/matrices/NAME.mtx.gz) as PETSc binary files NAME.petsc (the
# matrix, then a right-hand side: what stock KSP ex10 reads with -f), converting only what is missing or older than
# its source:
#
#   tests/conformance/matrices.sh [NAME...]        (no NAME: all of them)
#
# Output directory: $GPUKIT_MATRICES, default $BIN/../matrices (BIN defaults to build/tests, so build/matrices).
# Converter: $BIN/conformance/mtx2petsc (tests/conformance/mtx2petsc.c, built by the makefile), run on one rank.
# Each file is written under a temporary name and renamed, so a reader never sees half a file. Prints the path of
# the last file, fails (exit 1, with a message) when a NAME has no .mtx.gz or the conversion fails.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${BIN:-$top/build/tests}
dir=${GPUKIT_MATRICES:-$bin/../matrices}
conv=$bin/conformance/mtx2petsc
[ -x "$conv" ] || { echo "matrices.sh: no converter $conv (build it: make tests, or make $conv)" >&2; exit 1; }
mkdir -p "$dir" || exit 1
dir=$(cd "$dir" && pwd)
if [ $# -eq 0 ]; then set -- $(ls "$top"/tests/data/matrices/*.mtx.gz | xargs -n1 basename | sed 's/\.mtx\.gz$//'); fi
for name in "$@"; do
  src=$top/tests/data/matrices/$name.mtx.gz
  dst=$dir/$name.petsc
  [ -f "$src" ] || { echo "matrices.sh: no matrix $src" >&2; exit 1; }
  if [ ! -s "$dst" ] || [ "$src" -nt "$dst" ] || [ "$conv" -nt "$dst" ]; then
    tmp=$dst.tmp.$$
    # one rank, no MPI launcher needed (singleton init); </dev/null: never read the caller's stdin;
    # -use_gpu_aware_mpi 0: a CUDA PETSc would refuse a non-CUDA-aware MPI if it ever started the device
    "$conv" -mtx "$src" -o "$tmp" -use_gpu_aware_mpi 0 >/dev/null </dev/null || { rm -f "$tmp"; echo "matrices.sh: converting $src failed" >&2; exit 1; }
    mv -f "$tmp" "$dst"
  fi
done
echo "$dst"
