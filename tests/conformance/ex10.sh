#!/usr/bin/env bash
# Stock KSP ex10 (MatCreate + MatSetFromOptions + MatLoad, so it takes -mat_type) on one of the shared SuiteSparse
# matrices, run twice by tests/conformance/compare.sh (reference options, new options; same iteration counts, norms
# within tolerance; the new run must create the gpukit type it names):
#
#   tests/conformance/ex10.sh [--cuda] NP MATRIX "EX10 OPTIONS" "OPTS_REF" "OPTS_NEW" [RTOL [ATOL]]
#
# MATRIX is a name of tests/data/matrices (bcsstk03, ...): it is converted to PETSc binary on first use
# (tests/conformance/matrices.sh; the file holds the matrix and the right-hand side ex10 loads). ex10 prints
# "Number of iterations = N" and "Residual norm R" (3.18: "Residual norm < 1.e-12" below that); the options should
# add -ksp_converged_reason (and -ksp_monitor_short or -ksp_monitor for per-iteration norms).
# --cuda: use ex10 compiled against the PETSc at $PETSC_DIR (else the prefix of $BIN/../.petsc-prefix), kept in
# $BIN/../tutorials-cuda/ksp_ex10 (the GPU lists; the source must be in $PETSC_DIR/share/petsc/examples/src, which
# tests/gpu/pack.sh carries, or deps/src/petsc-*/src). Otherwise $TUT/ksp_ex10 (tests/conformance/build.sh).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
cuda=0
[ "${1:-}" = --cuda ] && { cuda=1; shift; }
if [ $# -lt 5 ] || [ $# -gt 7 ]; then
  echo "usage: $0 [--cuda] NP MATRIX \"EX10 OPTIONS\" \"OPTS_REF\" \"OPTS_NEW\" [RTOL [ATOL]]" >&2
  exit 2
fi
np=$1 mat=$2 opts=$3 ref=$4 new=$5
shift 5
file=$(bash tests/conformance/matrices.sh "$mat") || exit 1
if [ $cuda = 1 ]; then
  export BIN=${BIN:-$top/build/tests}
  tut=$(cd "$BIN/.." && pwd)/tutorials-cuda
  if [ ! -x "$tut/ksp_ex10" ]; then
    pdir=${PETSC_DIR:-$(cat "$BIN/../.petsc-prefix" 2>/dev/null)}
    [ -n "$pdir" ] || { echo "ex10.sh: no PETSC_DIR and no $BIN/../.petsc-prefix: which PETSc should ex10 be built against?" >&2; exit 1; }
    src=
    for s in "$pdir/share/petsc/examples/src/ksp/ksp/tutorials/ex10.c" $(ls -d "$top"/deps/src/petsc-*/src/ksp/ksp/tutorials/ex10.c 2>/dev/null); do
      [ -f "$s" ] && { src=$s; break; }
    done
    [ -n "$src" ] || { echo "ex10.sh: no stock ex10.c under $pdir/share/petsc/examples/src or deps/src/petsc-*/src (tests/gpu/pack.sh must carry ksp/ksp/tutorials/ex10.c)" >&2; exit 1; }
    vars=$pdir/lib/petsc/conf/petscvariables
    read -r -a pcc <<<"$(sed -n 's/^PCC = //p' "$vars")"
    read -r -a pinc <<<"$(sed -n 's/^PETSC_CC_INCLUDES = //p' "$vars")"
    read -r -a plibs <<<"$(sed -n 's/^PETSC_WITH_EXTERNAL_LIB = //p' "$vars")"
    mkdir -p "$tut"
    "${pcc[@]}" -O2 -w "${pinc[@]}" "$src" -o "$tut/ksp_ex10.tmp.$$" -Wl,-rpath,"$pdir/lib" "${plibs[@]}" -lm &&
      mv -f "$tut/ksp_ex10.tmp.$$" "$tut/ksp_ex10" || { rm -f "$tut/ksp_ex10.tmp.$$"; echo "ex10.sh: compiling $src failed" >&2; exit 1; }
  fi
  export TUT=$tut
fi
exec bash tests/conformance/compare.sh "$np" "ksp_ex10 -f $file $opts" "$ref" "$new" "$@"
