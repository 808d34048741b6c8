#!/usr/bin/env bash
# Build the current PETSc release with CUDA into deps/petsc-cuda (make petsc-cuda).
# Source: the PyPI source distribution of petsc (no binary). MPI and BLAS/LAPACK: Debian's.
# NVML header and stub library (required by PETSc's CUDA configure): PyPI's nvidia-nvml-dev.
# Idempotent: does nothing when deps/petsc-cuda/lib/libpetsc.so exists for the requested version.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ver=${PETSC_CUDA_VERSION:-3.26.1}
arch=${CUDA_ARCH:-90}
cuda=${CUDA_HOME:-/usr/local/cuda}
deps=$top/deps
prefix=$deps/petsc-cuda
log=$deps/petsc-cuda.log
jobs=${MAKE_NP:-$(nproc)}
if [ -f "$prefix/lib/libpetsc.so" ] && grep -qx "$ver" "$prefix/.gpukit-version" 2>/dev/null; then
  echo "petsc-cuda: PETSc $ver with CUDA already in $prefix"; exit 0
fi
command -v "$cuda/bin/nvcc" >/dev/null || { echo "petsc-cuda: no nvcc in $cuda/bin (set CUDA_HOME)" >&2; exit 1; }
command -v mpicc >/dev/null || { echo "petsc-cuda: no mpicc; run 'make deps' first" >&2; exit 1; }
start=$(date +%s)
mkdir -p "$deps/src"
echo "petsc-cuda: building PETSc $ver with CUDA (sm_$arch) into $prefix; log in $log"
: >"$log"
cd "$deps/src"
if [ ! -d "petsc-$ver" ]; then
  [ -f "petsc-$ver.tar.gz" ] || {
  # pip prepares the sdist's metadata with setuptools+wheel: give it a private venv that has them,
  # so that it does not build every build dependency from source.
  [ -x "$deps/pyenv/bin/python" ] || python3 -m venv "$deps/pyenv" >>"$log" 2>&1
  "$deps/pyenv/bin/python" -m pip install -q setuptools wheel >>"$log" 2>&1
  "$deps/pyenv/bin/python" -m pip download --no-binary :all: --no-deps --no-build-isolation -d . "petsc==$ver" >>"$log" 2>&1
  }
  tar xzf "petsc-$ver.tar.gz"
fi
# A private CUDA directory: links to the toolkit plus nvml.h and the libnvidia-ml stub from PyPI.
cudadir=$deps/cuda
if [ ! -f "$cudadir/include/nvml.h" ]; then
  rm -rf "$cudadir" "$deps/src/nvml"
  python3 -m pip download --no-deps --only-binary=:all: -d "$deps/src/nvml" nvidia-nvml-dev >>"$log" 2>&1
  (cd "$deps/src/nvml" && python3 -m zipfile -e ./*.whl x)
  mkdir -p "$cudadir/include" "$cudadir/lib64/stubs"
  for f in "$cuda"/*; do b=$(basename "$f"); case $b in include | lib64) ;; *) ln -s "$f" "$cudadir/$b" ;; esac; done
  for f in "$cuda"/include/*; do ln -s "$f" "$cudadir/include/"; done
  for f in "$(readlink -f "$cuda/lib64")"/*; do b=$(basename "$f"); [ "$b" = stubs ] || ln -s "$f" "$cudadir/lib64/$b"; done
  if [ -d "$cuda/lib64/stubs" ]; then for f in "$cuda"/lib64/stubs/*; do ln -s "$f" "$cudadir/lib64/stubs/"; done; fi
  nvmlh=$(find "$deps/src/nvml/x" -name nvml.h | head -1)
  nvmls=$(find "$deps/src/nvml/x" -name 'libnvidia-ml.so*' | head -1)
  [ -n "$nvmlh" ] || { echo "petsc-cuda: nvidia-nvml-dev has no nvml.h" >&2; exit 1; }
  cp "$nvmlh" "$cudadir/include/nvml.h"
  if [ -n "$nvmls" ]; then
    cp "$nvmls" "$cudadir/lib64/stubs/libnvidia-ml.so"
  else
    # Recent nvidia-nvml-dev wheels ship the header only. PETSc links libnvidia-ml only for its
    # energy logging; a link-time stub with the driver library's soname is enough (the driver's
    # real libnvidia-ml.so.1 is what loads at run time).
    printf '%s\n' '#include <nvml.h>' \
      'nvmlReturn_t nvmlInit_v2(void) { return NVML_ERROR_UNINITIALIZED; }' \
      'nvmlReturn_t nvmlShutdown(void) { return NVML_SUCCESS; }' \
      'nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) { (void)i; (void)d; return NVML_ERROR_UNINITIALIZED; }' \
      'nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int n, nvmlFieldValue_t *v) { (void)d; (void)n; (void)v; return NVML_ERROR_UNINITIALIZED; }' \
      'nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *e) { (void)d; (void)e; return NVML_ERROR_UNINITIALIZED; }' \
      'const char *nvmlErrorString(nvmlReturn_t r) { (void)r; return "NVML stub"; }' >"$deps/src/nvml/stub.c"
    cc -shared -fPIC -I"$cudadir/include" -Wl,-soname,libnvidia-ml.so.1 -o "$cudadir/lib64/stubs/libnvidia-ml.so" "$deps/src/nvml/stub.c"
  fi
fi
cd "$deps/src/petsc-$ver"
unset PETSC_DIR PETSC_ARCH
python3 ./configure --prefix="$prefix" PETSC_ARCH=arch-gpukit-cuda \
  --with-cc=mpicc --with-cxx=mpicxx --with-fc=0 --with-x=0 \
  --with-cuda=1 --with-cuda-dir="$cudadir" --with-cuda-arch="$arch" \
  --with-blaslapack-lib="-llapack -lblas" \
  --with-shared-libraries=1 --with-debugging=0 \
  COPTFLAGS=-O3 CXXOPTFLAGS=-O3 CUDAOPTFLAGS=-O3 >>"$log" 2>&1 || { echo "petsc-cuda: configure failed, see $log" >&2; exit 1; }
make PETSC_DIR="$PWD" PETSC_ARCH=arch-gpukit-cuda MAKE_NP="$jobs" all >>"$log" 2>&1 || { echo "petsc-cuda: build failed, see $log" >&2; exit 1; }
make PETSC_DIR="$PWD" PETSC_ARCH=arch-gpukit-cuda install >>"$log" 2>&1 || { echo "petsc-cuda: install failed, see $log" >&2; exit 1; }
echo "$ver" >"$prefix/.gpukit-version"
end=$(date +%s)
echo "petsc-cuda: done in $((end - start)) s; $(du -sh "$prefix/lib" | cut -f1) in lib/, prefix $prefix" | tee -a "$log"
