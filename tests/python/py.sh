#!/usr/bin/env bash
# Run a petsc4py test script on np ranks with the Python that has Debian's python3-petsc4py (make deps).
#
#   bash tests/python/py.sh NP SCRIPT [args ...]        (from tests/python/python.list; $LIB, $MPIEXEC as in tests/run.sh)
#
# NP 1 runs the interpreter directly (MPI starts as a singleton, as for a user who types 'python3 script.py'), more
# through $MPIEXEC -n NP.
# GPUKIT_PYTHON picks the interpreter (default /usr/bin/python3: Debian's packages are installed for it, and a
# python3 found first on PATH, such as a pyenv one, does not see them). Before running, it checks that petsc4py
# imports and that the plugin $LIB is linked against the same libpetsc as petsc4py: a plugin built against another
# PETSc (e.g. the CUDA 3.26 build) cannot be loaded into Debian's petsc4py, and that is reported, not crashed on.
set -u
np=$1 script=$2
shift 2
py=${GPUKIT_PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=$(command -v python3)
# petsc4py picks its PETSc from PETSC_ARCH when set; the test wants the one it was installed with
unset PETSC_ARCH
if ! pylib=$("$py" -c 'import os, petsc4py.lib as l; print(os.path.dirname(l.__file__))' 2>&1); then
  echo "py.sh: petsc4py does not import with $py: $pylib" >&2
  echo "py.sh: install Debian's python3-petsc4py ('make deps'), or set GPUKIT_PYTHON to a Python with petsc4py" >&2
  exit 1
fi
mod=$(find "$pylib" -name 'PETSc*.so' | head -n 1)
want=$(ldd "$mod" 2>/dev/null | awk '/libpetsc/ {print $3; exit}')
if [ -n "${LIB:-}" ] && [ -e "$LIB" ] && [ -n "$want" ]; then
  have=$(ldd "$LIB" 2>/dev/null | awk '/libpetsc/ {print $3; exit}')
  if [ "$(readlink -f "$have")" != "$(readlink -f "$want")" ]; then
    echo "py.sh: the plugin $LIB is linked against ${have:-no libpetsc}, petsc4py ($mod) against $want:" >&2
    echo "py.sh: build gpukit against the PETSc that petsc4py uses (Debian's: the default 'make')" >&2
    exit 1
  fi
fi
echo "py.sh: $py, petsc4py from $pylib (PETSc library $want), plugin ${LIB:-unset}"
if [ "$np" = 1 ]; then exec "$py" "$script" "$@"; fi
exec ${MPIEXEC:-mpiexec} -n "$np" "$py" "$script" "$@"
