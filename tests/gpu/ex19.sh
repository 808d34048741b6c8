#!/usr/bin/env bash
# Stock SNES ex19, unmodified, on the GPU with gpukit's MATSGDIACUDA through -dll_append, against the same run with
# PETSc's AIJCUSPARSE (tests/conformance/compare.sh: same iteration counts, same printed norms):
#
#   tests/gpu/ex19.sh NP "EX19 OPTIONS" [RTOL [ATOL]]
#
# GPUKIT_EX19_REF replaces the reference options (default "-dm_mat_type aijcusparse"), e.g. "-dm_vec_type standard
# -dm_mat_type aij" for a host reference where PETSc's own GPU run is wrong (see tests/gpu/ex19.list).
# ex19 is compiled once against the CUDA PETSc (scripts/build-ex19.sh) into $BIN/../tutorials-cuda/snes_ex19.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
np=$1 opts=$2
tut=$(cd "$BIN/.." && pwd)/tutorials-cuda
if [ ! -x "$tut/snes_ex19" ]; then
  PETSC_DIR=${PETSC_DIR:-$(cat "$BIN/../.petsc-prefix")} bash scripts/build-ex19.sh "$tut/snes_ex19" || exit 1
fi
TUT=$tut exec bash tests/conformance/compare.sh "$np" "snes_ex19 $opts -use_gpu_aware_mpi 0 -dm_vec_type cuda" "${GPUKIT_EX19_REF:--dm_mat_type aijcusparse}" "-dm_mat_type sgdiacuda" "${3:-1e-6}" "${4:-1e-12}"
