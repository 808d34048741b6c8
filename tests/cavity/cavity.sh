#!/usr/bin/env bash
# Sourced by the cavity tests (tests/cavity/*.sh, tests/cavity/cavity.list, tests/gpu/cavity.list) and bench/cavity.sh:
# sets CAVITY to the driven-cavity example (examples/cavity.c) of the build under test, and VECDIFF to the
# solution comparison program (tests/cavity/cavity_vecdiff.c).
#
# The build under test is the one tests/run.sh names: $BIN is <OBJDIR>/tests and $LIB is <LIBDIR>/libpetscgpukit.so, so
# the example is <OBJDIR>/examples/cavity. `make test`/`make tests` build the tests but not the examples, so a missing
# example is built here with the same OBJDIR/LIBDIR (and the PETSC_DIR/PETSC_ARCH of the environment); a lock keeps
# two tests from building it at once. CAVITY (environment) overrides all of this.
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${BIN:-${GPUKIT_BIN:-$top/build/tests}}
LIB=${LIB:-${GPUKIT_LIB:-$top/lib/libpetscgpukit.so}}
VECDIFF=${VECDIFF:-$BIN/cavity/cavity_vecdiff}
if [ -z "${CAVITY:-}" ]; then
  objdir=$(dirname "$BIN")
  CAVITY=$objdir/examples/cavity
  if [ ! -x "$CAVITY" ] || [ "$top/examples/cavity.c" -nt "$CAVITY" ] || [ "$top/examples/cavity.h" -nt "$CAVITY" ] || [ "$top/examples/cavitycuda.cu" -nt "$CAVITY" ]; then
    (
      cd "$top" && flock 9 &&
        make --no-print-directory -o "$LIB" OBJDIR="$objdir" LIBDIR="$(dirname "$LIB")" "$CAVITY" >"$objdir/cavity-build.log" 2>&1
    ) 9>"$objdir/.cavity-build.lock" || { echo "cavity: could not build $CAVITY (see $objdir/cavity-build.log)" >&2; cat "$objdir/cavity-build.log" >&2; }
  fi
fi
[ -x "$CAVITY" ] || echo "cavity: no example binary at $CAVITY ('make examples' with the same OBJDIR/LIBDIR builds it)" >&2
[ -x "$VECDIFF" ] || echo "cavity: no comparison program at $VECDIFF ('make tests' builds it)" >&2
export CAVITY VECDIFF
