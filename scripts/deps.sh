#!/usr/bin/env bash
# make deps: install, non-interactively, what the CPU build and the tests need. Quick when all is there.
#   - Debian's PETSc 3.18 with MPI (petsc-dev), unless PETSC_DIR points at another PETSc;
#   - the tutorial sources of Debian's PETSc examples package (the conformance tests build them);
#   - valgrind (memory checks in the test suite);
#   - python3-petsc4py, Debian's petsc4py for /usr/bin/python3 (tests/python, docs/python.md), with Debian's PETSc
#     only (it is built against that PETSc).
set -euo pipefail
pkgs=()
petsc_dir=${PETSC_DIR:-/usr/lib/petsc}
if [ "$petsc_dir" = /usr/lib/petsc ] && [ ! -f /usr/lib/petsc/lib/petsc/conf/petscvariables ]; then pkgs+=(petsc-dev); fi
if [ ! -d /usr/share/petsc/3.18/share/petsc/examples/src ]; then pkgs+=(libpetsc3.18-dev-examples); fi
command -v valgrind >/dev/null || pkgs+=(valgrind)
if [ "$petsc_dir" = /usr/lib/petsc ] && ! /usr/bin/python3 -c 'import petsc4py' >/dev/null 2>&1; then pkgs+=(python3-petsc4py); fi
command -v mpiexec >/dev/null || pkgs+=(openmpi-bin)
if [ ${#pkgs[@]} -eq 0 ]; then echo "deps: everything is installed"; exit 0; fi
if ! command -v apt-get >/dev/null; then
  echo "deps: missing ${pkgs[*]} and this is not a Debian-like system; install them, or set PETSC_DIR/PETSC_ARCH" >&2
  exit 1
fi
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
echo "deps: installing ${pkgs[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${pkgs[@]}" >/dev/null
echo "deps: done"
