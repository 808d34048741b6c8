#!/usr/bin/env bash
# Build a CUDA-aware Open MPI into deps/ompi-cuda (make ompi-cuda), for the multi-GPU runs with -use_gpu_aware_mpi 1
# (issue 19): the lent GPU machines' own Open MPI 4.1.6 is built without CUDA.
# Source: Debian's original tarball of the Open MPI that Debian's PETSc is built with (4.1.4), so that the same
# libmpi.so.40 ABI serves PETSc, gpukit and the tests. Configured --with-cuda (the smcuda BTL moves device buffers
# between ranks of one node through CUDA IPC; the driver library is opened at run time), without Fortran, UCX or
# verbs; its own hwloc, libevent and PMIx. About 25 minutes on 2 cores; 14 MB installed.
# Idempotent: does nothing when deps/ompi-cuda holds this version. tests/gpu/pack.sh carries it to gpucarry/ompi when
# it exists, and tests/gpu/awarempi.sh puts it in front of the GPU machine's MPI.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ver=${OMPI_CUDA_VERSION:-4.1.4}
cuda=${CUDA_HOME:-/usr/local/cuda}
deps=$top/deps
prefix=$deps/ompi-cuda
log=$deps/ompi-cuda.log
jobs=${MAKE_NP:-$(nproc)}
if [ -x "$prefix/bin/mpiexec" ] && grep -qx "$ver" "$prefix/.gpukit-version" 2>/dev/null; then
  echo "ompi-cuda: Open MPI $ver with CUDA already in $prefix"; exit 0
fi
[ -f "$cuda/include/cuda.h" ] || { echo "ompi-cuda: no $cuda/include/cuda.h (set CUDA_HOME)" >&2; exit 1; }
start=$(date +%s)
mkdir -p "$deps/src"
: >"$log"
cd "$deps/src"
tarball=openmpi_$ver.orig.tar.xz
[ -f "$tarball" ] || curl -fsS -o "$tarball" "http://deb.debian.org/debian/pool/main/o/openmpi/$tarball" || { echo "ompi-cuda: could not download $tarball from deb.debian.org" >&2; exit 1; }
rm -rf "openmpi-$ver"
tar xJf "$tarball"
cd "openmpi-$ver"
echo "ompi-cuda: building Open MPI $ver with CUDA ($cuda) into $prefix; log in $log"
./configure --prefix="$prefix" --with-cuda="$cuda" --disable-mpi-fortran --disable-oshmem --disable-mpi-cxx \
  --without-ucx --without-verbs --without-ofi --without-psm2 --without-portals4 --without-libfabric \
  --with-hwloc=internal --with-libevent=internal --with-pmix=internal --disable-static --enable-shared CFLAGS=-O2 >>"$log" 2>&1 ||
  { echo "ompi-cuda: configure failed, see $log" >&2; exit 1; }
make -j"$jobs" >>"$log" 2>&1 || { echo "ompi-cuda: build failed, see $log" >&2; exit 1; }
make install >>"$log" 2>&1 || { echo "ompi-cuda: install failed, see $log" >&2; exit 1; }
[ "$("$prefix/bin/ompi_info" --parsable --all 2>/dev/null | grep -c 'mpi_built_with_cuda_support:value:true')" -gt 0 ] ||
  { echo "ompi-cuda: the build in $prefix says it has no CUDA support (ompi_info)" >&2; exit 1; }
echo "$ver" >"$prefix/.gpukit-version"
echo "ompi-cuda: done in $(($(date +%s) - start)) s: $prefix (CUDA-aware: yes)"
