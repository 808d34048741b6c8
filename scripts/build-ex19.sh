#!/usr/bin/env bash
# Compile PETSc's stock SNES ex19 (driven cavity), unmodified, against the PETSc at $PETSC_DIR (a prefix install):
#
#   scripts/build-ex19.sh OUTPUT_BINARY
#
# The source is the first of: $GPUKIT_EX19_SRC, $PETSC_DIR/share/petsc/examples/src/snes/tutorials/ex19.c (tests/gpu/
# pack.sh carries it with the CUDA prefix), deps/src/petsc-*/src/snes/tutorials/ex19.c. Compiler, includes and
# libraries come from the prefix's petscvariables. Exit 1, with a message, when there is no source or it fails.
# Used by bench/cavity.sh and tests/gpu/ex19.sh.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: build-ex19.sh OUTPUT_BINARY}
src=
for s in "${GPUKIT_EX19_SRC:-}" "$PETSC_DIR/share/petsc/examples/src/snes/tutorials/ex19.c" $(ls -d "$top"/deps/src/petsc-*/src/snes/tutorials/ex19.c 2>/dev/null); do
  [ -n "$s" ] && [ -f "$s" ] && { src=$s; break; }
done
if [ -z "$src" ]; then
  echo "build-ex19: no stock ex19.c (looked in \$GPUKIT_EX19_SRC, $PETSC_DIR/share/petsc/examples/src/snes/tutorials, deps/src/petsc-*); carry share/petsc/examples/src/snes/tutorials/ex19.c with the PETSc prefix (tests/gpu/pack.sh)" >&2
  exit 1
fi
vars=$PETSC_DIR/lib/petsc/conf/petscvariables
mkdir -p "$(dirname "$out")"
read -r -a pcc <<<"$(sed -n 's/^PCC = //p' "$vars")"
read -r -a pinc <<<"$(sed -n 's/^PETSC_CC_INCLUDES = //p' "$vars")"
read -r -a plibs <<<"$(sed -n 's/^PETSC_WITH_EXTERNAL_LIB = //p' "$vars")"
"${pcc[@]}" -O2 -w "${pinc[@]}" "$src" -o "$out" -Wl,-rpath,"$PETSC_DIR/lib" "${plibs[@]}" -lm || { echo "build-ex19: compiling $src failed" >&2; exit 1; }
