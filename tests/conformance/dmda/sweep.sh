#!/usr/bin/env bash
# The DMDA conformance sweep (issue 16): every DMDA program of PETSc's snes, ksp and ts tutorials, each /*TEST*/
# argument set run with -dm_mat_type aij and with -dm_mat_type sgdia on its nsize and on 1, 2 and 3 ranks; see
# tests/conformance/dmda/dmda.py for the classes and the comparison. Prints a summary table and "N passed, N failed";
# exits 0 iff no run failed only with sgdia or mismatched.
#
#   bash tests/conformance/dmda/sweep.sh [dmda.py options: -j N, --filter REGEX, --timeout S, --report FILE, ...]
#
# Environment: $LIB (the plugin; default lib/libpetscgpukit.so), PETSC_DIR/PETSC_ARCH (default Debian's PETSc),
# $MPIEXEC (default mpiexec), DMDA_JOBS (default 2). Output in build/conformance-dmda (binaries, run list, logs).
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$top"
source "$top/scripts/mpienv.sh"
export MPIEXEC=${MPIEXEC:-mpiexec}
export LIB=${LIB:-${GPUKIT_LIB:-$top/lib/libpetscgpukit.so}}
exec python3 "$top/tests/conformance/dmda/dmda.py" run -j "${DMDA_JOBS:-2}" "$@"
