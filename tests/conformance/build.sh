#!/usr/bin/env bash
# Build the stock PETSc tutorials that the conformance suite runs, from the sources of the PETSc in use:
# Debian's examples package (libpetsc3.18-dev-examples) or $PETSC_DIR/share/petsc/examples (or src/).
# They are built unmodified and link only PETSc: gpukit reaches them through -dll_append.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/tutorials
pdir=${PETSC_DIR:-/usr/lib/petsc}
prefix=$pdir${PETSC_ARCH:+/$PETSC_ARCH}
src=
for d in "$pdir/share/petsc/examples/src" "$pdir/src" /usr/share/petsc/3.18/share/petsc/examples/src; do
  [ -f "$d/snes/tutorials/ex19.c" ] && { src=$d; break; }
done
[ -n "$src" ] || { echo "conformance: no PETSc tutorial sources found (install libpetsc3.18-dev-examples: make deps)" >&2; exit 1; }
vars=$prefix/lib/petsc/conf/petscvariables
cc=$(sed -n 's/^PCC = //p' "$vars")
inc=$(sed -n 's/^PETSC_CC_INCLUDES = //p' "$vars")
libs=$(sed -n 's/^PETSC_WITH_EXTERNAL_LIB = //p' "$vars")
mkdir -p "$out"
for ex in snes/tutorials/ex19 snes/tutorials/ex5 ksp/ksp/tutorials/ex2 ksp/ksp/tutorials/ex29 ksp/ksp/tutorials/ex32 ksp/ksp/tutorials/ex45 ksp/ksp/tutorials/ex50; do
  name=$(echo "$ex" | cut -d/ -f1)_$(basename "$ex")
  [ "$out/$name" -nt "$src/$ex.c" ] && continue
  $cc -O2 -w $inc "$src/$ex.c" -o "$out/$name" -Wl,-rpath,"$prefix/lib" $libs -lm
done
