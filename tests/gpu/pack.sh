#!/usr/bin/env bash
# Prepare gpucarry/ on the dev machine: the parts of the CUDA PETSc prefix (deps/petsc-cuda, 'make petsc-cuda')
# that tests/gpu/run needs on the GPU machine, small enough to travel with the working tree.
#
#   bash tests/gpu/pack.sh [--blas] [--check]
#
# Copies lib/libpetsc.so* (stripped of its static symbol table), lib/petsc/conf, lib/pkgconfig and include/ into
# gpucarry/petsc-cuda; share/ (examples, 65 MB) stays behind, except the stock tutorials that the GPU side builds:
# every '<snes|ksp|ts|...>/tutorials/exN' named in bench/*.sh, tests/gpu/*.list, tests/gpu/*.sh or scripts/*.sh
# (ex19, ex45 and ex10 at least). gpucarry/extra-libs gets libnvtx3interop (named at
# link time by the prefix's petscvariables), and with --blas also Debian's BLAS, LAPACK, libgfortran and
# libquadmath, for a GPU machine that lacks them (tests/gpu/run adds them only when ldd says something is missing).
# --check first builds everything in the repository (library, tests, examples, benchmarks; what tests/gpu/run builds
# on the GPU machine) against that prefix into GPUKIT_CHECK_OBJDIR (default build/pack-check) and stops, naming each
# target that failed, if anything does not build: a break shows here instead of on the GPU machine.
# With deps/ompi-cuda ('make ompi-cuda') also a CUDA-aware Open MPI into gpucarry/ompi (tests/gpu/awarempi.sh).
# PETSC_DIR picks another prefix, GPUKIT_CARRY another destination. Fails above 60 MB.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
src=${PETSC_DIR:-$top/deps/petsc-cuda}
dst=${GPUKIT_CARRY:-$top/gpucarry}
limit_mb=60
blas=0
check=0
for a in "$@"; do
  case "$a" in
    --blas) blas=1 ;;
    --check) check=1 ;;
    *) echo "pack.sh: unknown argument '$a' (the options are --blas and --check)" >&2; exit 2 ;;
  esac
done

vars=$src/lib/petsc/conf/petscvariables
[ -f "$vars" ] && [ -e "$src/lib/libpetsc.so" ] || { echo "pack.sh: no PETSc prefix at $src (lib/libpetsc.so, lib/petsc/conf); build it with 'make petsc-cuda' or set PETSC_DIR" >&2; exit 1; }
grep -qs '^#define PETSC_HAVE_CUDA 1' "$src/include/petscconf.h" || { echo "pack.sh: the PETSc at $src has no CUDA; the GPU machine needs a CUDA PETSc" >&2; exit 1; }

if [ "$check" = 1 ]; then
  cobj=${GPUKIT_CHECK_OBJDIR:-build/pack-check}
  clog=$top/$cobj.log
  mkdir -p "$(dirname "$clog")"
  echo "pack.sh: --check: building the library, tests, examples and benchmarks against $src into $cobj (log: $clog)"
  if [ -f "$top/$cobj/.petsc-prefix" ] && [ "$(cat "$top/$cobj/.petsc-prefix")" != "$src" ]; then rm -rf "${top:?}/$cobj"; fi
  if ! (cd "$top" && make --no-print-directory PETSC_DIR="$src" PETSC_ARCH= OBJDIR="$cobj" LIBDIR="$cobj/lib" -j"${GPUKIT_CHECK_JOBS:-2}" -k lib tests examples benches) >"$clog" 2>&1; then
    echo "pack.sh: --check: the build against $src failed; targets that failed:" >&2
    sed -n 's/^make: \*\*\* \[[^]]*: \([^]]*\)\] Error .*/  \1/p' "$clog" | sort -u >&2
    grep -m5 -E '(:[0-9]+|\([0-9]+\)): (fatal )?error|undefined reference' "$clog" | sed 's/^/  | /' >&2
    echo "pack.sh: fix these before spending GPU time (tests/gpu/run would stop at its build step); nothing packed" >&2
    exit 1
  fi
  echo "pack.sh: --check: everything builds against $src ($(grep -c warning "$clog") warning lines)"
fi

rm -rf "$dst/petsc-cuda" "$dst/extra-libs"
mkdir -p "$dst/petsc-cuda/lib/petsc" "$dst/extra-libs"
cp -a "$src"/lib/libpetsc.so* "$dst/petsc-cuda/lib/"
for f in "$dst"/petsc-cuda/lib/libpetsc.so*; do
  [ -L "$f" ] || strip --strip-unneeded "$f"
done
cp -a "$src/lib/petsc/conf" "$dst/petsc-cuda/lib/petsc/"
cp -a "$src/lib/pkgconfig" "$dst/petsc-cuda/lib/"
cp -a "$src/include" "$dst/petsc-cuda/"
# stock tutorials compiled on the GPU machine against this PETSc (bench/cavity.sh: snes ex19; bench/ex45_cacg.sh: ksp ex45;
# tests/gpu/formats.list: ksp ex10), and any other one that the GPU-side scripts and lists name
tuts=$( (echo snes/tutorials/ex19 ksp/ksp/tutorials/ex45 ksp/ksp/tutorials/ex10 | tr ' ' '\n'
  cd "$top" && cat bench/*.sh tests/gpu/*.list tests/gpu/*.sh scripts/*.sh 2>/dev/null |
    grep -oE '(^|[^a-z_])(snes|ksp|ts|tao|dm|vec|mat)/([a-z_]+/)*tutorials/ex[0-9]+[a-z]*' | sed 's/^[^a-z]//') | sort -u)
for ex in $tuts; do
  if [ ! -f "$src/share/petsc/examples/src/$ex.c" ]; then
    echo "pack.sh: note: $ex.c is named by a GPU-side script but not in $src/share/petsc/examples/src; not carried"
    continue
  fi
  mkdir -p "$dst/petsc-cuda/share/petsc/examples/src/$(dirname "$ex")"
  cp "$src/share/petsc/examples/src/$ex.c" "$dst/petsc-cuda/share/petsc/examples/src/$ex.c"
done
echo "pack.sh: tutorials carried: $(echo $tuts)"

# libnvtx3interop from the CUDA directory the prefix was built with
cudadir=$(sed -n 's/^CUDA_INCLUDE = -I\(.*\)\/include *$/\1/p' "$vars")
nvtx=$(ls "$cudadir"/lib/libnvtx3interop.so* "$cudadir"/lib64/libnvtx3interop.so* 2>/dev/null | head -n 1 || true)
if [ -n "$nvtx" ]; then
  cp -L "$nvtx" "$dst/extra-libs/libnvtx3interop.so.1"
  ln -s libnvtx3interop.so.1 "$dst/extra-libs/libnvtx3interop.so"
else
  echo "pack.sh: note: no libnvtx3interop.so under $cudadir; the GPU machine's toolkit must provide it for -lnvtx3interop"
fi

if [ "$blas" = 1 ]; then
  for l in liblapack.so.3 libblas.so.3 libgfortran.so.5 libquadmath.so.0; do
    p=$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ {print $NF; exit}')
    [ -n "$p" ] || { echo "pack.sh: $l not found on this machine (ldconfig -p)" >&2; exit 1; }
    cp -L "$p" "$dst/extra-libs/$l"
    ln -s "$l" "$dst/extra-libs/${l%.*}" # the unversioned name, for -l at link time
  done
  touch "$dst/extra-libs/.blas"
fi

# the CUDA-aware Open MPI of 'make ompi-cuda' (deps/ompi-cuda), for tests/gpu/awarempi.sh: programs, libraries and
# components, headers (mpicc on the GPU machine), help texts; not the libtool files and man pages
rm -rf "$dst/ompi"
ompi=${GPUKIT_OMPI_CUDA:-$top/deps/ompi-cuda}
if [ -x "$ompi/bin/mpiexec" ]; then
  mkdir -p "$dst/ompi/share"
  cp -a "$ompi/bin" "$ompi/lib" "$ompi/etc" "$ompi/include" "$dst/ompi/"
  cp -a "$ompi/share/openmpi" "$dst/ompi/share/"
  find "$dst/ompi" -name '*.la' -delete
  rm -rf "$dst/ompi/lib/pkgconfig"
  echo "pack.sh: CUDA-aware Open MPI carried from $ompi ($(du -sh "$dst/ompi" | cut -f1))"
fi

size=$(du -sm "$dst" | cut -f1)
du -sh "$dst/petsc-cuda/lib" "$dst/petsc-cuda/include" "$dst/extra-libs" | sed 's/^/pack.sh:   /'
if [ "$size" -ge "$limit_mb" ]; then
  echo "pack.sh: $dst is $size MB, at or above the $limit_mb MB limit for what travels to the GPU machine" >&2
  exit 1
fi
echo "pack.sh: $dst ready, $size MB (limit $limit_mb MB); on the GPU machine run: bash tests/gpu/run"
