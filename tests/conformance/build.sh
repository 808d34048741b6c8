#!/usr/bin/env bash
# Build the stock PETSc tutorials that the conformance suite runs, from the sources of the PETSc in use:
# Debian's examples package (libpetsc3.18-dev-examples) or $PETSC_DIR/share/petsc/examples (or src/).
# They are built unmodified and link only PETSc: gpukit reaches them through -dll_append.
# $TUT picks the output directory (default build/tutorials). When the converter tests/conformance/mtx2petsc is
# built ($BIN/conformance/mtx2petsc, BIN defaulting to build/tests), the shared SuiteSparse matrices
# (tests/data/matrices/*.mtx.gz) are also written as PETSc binary files for KSP ex10 (tests/conformance/matrices.sh).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${TUT:-$top/build/tutorials}
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
# -dm_mat_type (DMDA): snes ex19, ex5; ksp ex29, ex32, ex45, ex50. -mat_type (MatSetFromOptions): ksp ex10 (loads a
# matrix file: tests/conformance/ex10.sh), ex2 (2-D Laplacian), ex23 (1-D Laplacian); snes ex3 (1-D nonlinear, DMDA
# vectors, its Jacobian from MatCreate + MatSetFromOptions).
for ex in snes/tutorials/ex19 snes/tutorials/ex5 ksp/ksp/tutorials/ex2 ksp/ksp/tutorials/ex29 ksp/ksp/tutorials/ex32 ksp/ksp/tutorials/ex45 ksp/ksp/tutorials/ex50 \
  ksp/ksp/tutorials/ex10 ksp/ksp/tutorials/ex23 snes/tutorials/ex3; do
  name=$(echo "$ex" | cut -d/ -f1)_$(basename "$ex")
  [ "$out/$name" -nt "$src/$ex.c" ] && continue
  # under a temporary name, then renamed: a run that starts meanwhile never finds half a binary
  $cc -O2 -w $inc "$src/$ex.c" -o "$out/$name.tmp.$$" -Wl,-rpath,"$prefix/lib" $libs -lm
  mv -f "$out/$name.tmp.$$" "$out/$name"
done

# the shared matrices as PETSc binary files, when the converter is built (cheap: skipped when up to date)
conv=${BIN:-$top/build/tests}/conformance/mtx2petsc
# (not fatal: only the ex10 lines need them, and tests/conformance/ex10.sh converts on demand and says why it cannot)
if [ -x "$conv" ]; then bash "$top/tests/conformance/matrices.sh" >/dev/null || echo "conformance: converting the shared matrices failed (see above); the KSP ex10 lines will fail" >&2; fi
