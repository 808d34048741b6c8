# gpukit: a PETSc plugin library (libpetscgpukit.so).
#
#   make deps         install what the CPU build and the tests need (Debian's PETSc 3.18, its examples)
#   make              build lib/libpetscgpukit.so against PETSC_DIR/PETSC_ARCH (default: Debian's PETSc)
#   make run          deps + build + the example with gpukit's types (a DMDA Poisson solve until the driven-cavity example exists)
#   make test         deps + build + the CPU test suite (ends with "N passed, N failed")
#   make test-gpu     the GPU test suite (needs a GPU and a CUDA-enabled PETSc)
#   make bench        benchmarks against PETSc's own types; JSON in bench/results/ (make benches: build them only)
#   make petsc-cuda   build the current PETSc release with CUDA into deps/petsc-cuda
#   make install PREFIX=...   library, headers and a pkg-config file
#   make clean
#
# PETSc is found the way PETSc's own makefiles find it: PETSC_DIR and PETSC_ARCH (PETSC_ARCH empty for a
# prefix install). Compilers and flags come from PETSc's lib/petsc/conf/petscvariables.

PETSC_DIR  ?= /usr/lib/petsc
PETSC_ARCH ?=
PETSC_PREFIX := $(PETSC_DIR)$(if $(PETSC_ARCH),/$(PETSC_ARCH))
PETSC_VARS   := $(PETSC_PREFIX)/lib/petsc/conf/petscvariables
PREFIX     ?= /usr/local
CUDA_ARCH  ?= 90
NVCC       ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)

-include $(PETSC_VARS)

HAVE_PETSC := $(wildcard $(PETSC_VARS))
HAVE_CUDA  := $(shell grep -qs '^\#define PETSC_HAVE_CUDA 1' $(PETSC_PREFIX)/include/petscconf.h && echo 1)

GK_CC     := $(or $(PCC),mpicc)
GK_CXX    := $(or $(CXX),mpicxx)
GK_CFLAGS := $(PCC_FLAGS) $(EXTRA_CFLAGS) -fPIC -O2 -Wall -Wno-unused-function -Iinclude -Isrc/sys -Isrc/mat/utils $(PETSC_CC_INCLUDES)
GK_LIBS   := $(PETSC_WITH_EXTERNAL_LIB)
GK_NVFLAGS := -O3 -std=c++17 -Xcompiler -fPIC -gencode arch=compute_$(CUDA_ARCH),code=sm_$(CUDA_ARCH) \
              -gencode arch=compute_$(CUDA_ARCH),code=compute_$(CUDA_ARCH) -ccbin $(GK_CXX)

LIBDIR ?= lib
OBJDIR ?= build
LIB    := $(LIBDIR)/libpetscgpukit.so

# Objects built against one PETSc must never be linked with another: OBJDIR remembers its PETSc.
PETSC_STAMP := $(OBJDIR)/.petsc-prefix
ifneq ($(filter-out clean deps petsc-cuda,$(or $(MAKECMDGOALS),all)),)
ifneq ($(wildcard $(PETSC_STAMP)),)
ifneq ($(shell cat $(PETSC_STAMP)),$(PETSC_PREFIX))
$(error $(OBJDIR)/ holds objects built against the PETSc at $(shell cat $(PETSC_STAMP)), not $(PETSC_PREFIX): run 'make clean', or build elsewhere with OBJDIR=<dir> LIBDIR=<dir>)
endif
endif
endif

# SRC_EXCLUDE: make patterns of sources to leave out (with -DGPUKIT_WITHOUT_<FAMILY> in EXTRA_CFLAGS), only for
# building one type family while another one is being written; empty in every real build
SRC_EXCLUDE ?=
# host sources: every .c under src/
C_SRC := $(filter-out $(SRC_EXCLUDE),$(sort $(shell find src -name '*.c')))
# device kernels that need no CUDA-enabled PETSc (pure CUDA, C interface): *kernels.cu
KERNEL_CU := $(filter-out $(SRC_EXCLUDE),$(sort $(shell find src -name '*kernels.cu')))
# PETSc/CUDA glue: the other .cu files, built only when PETSc has CUDA
GLUE_CU := $(filter-out $(KERNEL_CU) $(SRC_EXCLUDE),$(sort $(shell find src -name '*.cu')))

OBJS := $(C_SRC:%.c=$(OBJDIR)/%.o)
ifeq ($(HAVE_CUDA),1)
OBJS += $(KERNEL_CU:%.cu=$(OBJDIR)/%.cu.o) $(GLUE_CU:%.cu=$(OBJDIR)/%.cu.o)
GK_CFLAGS += -DGPUKIT_HAVE_CUDA
endif

HEADERS := $(wildcard include/*.h) $(shell find src -name '*.h')

.PHONY: all lib deps run test test-gpu bench petsc-cuda ompi-cuda install clean check-petsc cuda-check examples tests benches conformance-dmda

all: lib

lib: check-petsc $(LIB)

check-petsc:
	@test -n "$(HAVE_PETSC)" || { echo "gpukit: no PETSc at $(PETSC_PREFIX) (looked for $(PETSC_VARS)). Run 'make deps' for Debian's PETSc, or set PETSC_DIR/PETSC_ARCH." >&2; exit 1; }

$(PETSC_STAMP):
	@mkdir -p $(OBJDIR)
	@echo "$(PETSC_PREFIX)" > $@

$(LIB): $(OBJS) | $(PETSC_STAMP)
	@mkdir -p $(LIBDIR)
	$(GK_CC) -shared -fPIC -Wl,-soname,libpetscgpukit.so -Wl,--no-undefined -o $@ $(OBJS) $(GK_LIBS) $(if $(HAVE_CUDA),-lcudart)

$(OBJDIR)/%.o: %.c $(HEADERS) | $(PETSC_STAMP)
	@mkdir -p $(dir $@)
	$(GK_CC) $(GK_CFLAGS) -c $< -o $@

$(OBJDIR)/%.cu.o: %.cu $(HEADERS) | $(PETSC_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(GK_NVFLAGS) $(EXTRA_CFLAGS) -Iinclude -Isrc/sys -Isrc/mat/utils $(PETSC_CC_INCLUDES) $(if $(HAVE_CUDA),-DGPUKIT_HAVE_CUDA) -c $< -o $@

# Compile every device-kernel file with nvcc where nvcc exists, even against a CPU-only PETSc (CI).
cuda-check:
	@if [ -z "$(NVCC)" ]; then echo "cuda-check: no nvcc, skipped"; else \
	  mkdir -p $(OBJDIR)/cuda-check && for f in $(KERNEL_CU); do \
	    echo "$(NVCC) -c $$f"; $(NVCC) $(GK_NVFLAGS) -Iinclude -Isrc/sys -Isrc/mat/utils -c $$f -o $(OBJDIR)/cuda-check/$$(basename $$f).o || exit 1; \
	  done; fi

# ---- programs built against the library (tests, examples, benchmarks) --------------------------------
PROG_CFLAGS := $(filter-out -Wno-unused-function,$(GK_CFLAGS)) -Itests/common
PROG_LIBS   := -L$(abspath $(LIBDIR)) -Wl,-rpath,$(abspath $(LIBDIR)) -lpetscgpukit $(GK_LIBS)
TEST_SRC    := $(sort $(wildcard tests/*/*.c))
TEST_SRC    := $(filter-out tests/common/%,$(TEST_SRC))
TEST_BIN    := $(TEST_SRC:%.c=$(OBJDIR)/%)
EXAMPLE_SRC := $(sort $(wildcard examples/*.c))
EXAMPLE_BIN := $(EXAMPLE_SRC:%.c=$(OBJDIR)/%)
BENCH_SRC   := $(sort $(wildcard bench/*.c))
BENCH_BIN   := $(BENCH_SRC:%.c=$(OBJDIR)/%)
COMMON_SRC  := $(wildcard tests/common/*.c)

$(OBJDIR)/tests/%: tests/%.c $(COMMON_SRC) $(wildcard tests/common/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(GK_CC) $(PROG_CFLAGS) $< $(COMMON_SRC) -o $@ $(PROG_LIBS)

$(OBJDIR)/examples/%: examples/%.c $(wildcard examples/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(GK_CC) $(PROG_CFLAGS) $< $(filter %.cu.o,$^) -o $@ $(PROG_LIBS)

# an example's CUDA part, examples/<name>cuda.cu, is compiled with $(NVCC) and linked into examples/<name> when
# PETSc has CUDA (without CUDA the example compiles its GPU path out)
ifeq ($(HAVE_CUDA),1)
$(foreach cu,$(wildcard examples/*cuda.cu),$(eval $(OBJDIR)/$(cu:cuda.cu=): $(OBJDIR)/$(cu).o)$(eval $(OBJDIR)/$(cu).o: $(wildcard examples/*.h)))
endif

$(OBJDIR)/bench/%: bench/%.c $(COMMON_SRC) $(LIB)
	@mkdir -p $(dir $@)
	$(GK_CC) $(PROG_CFLAGS) $< $(COMMON_SRC) -o $@ $(PROG_LIBS)

tests: lib $(TEST_BIN)
examples: lib $(EXAMPLE_BIN)
benches: lib $(BENCH_BIN)

# ---- the two commands --------------------------------------------------------------------------------
deps:
	@bash scripts/deps.sh

run: deps
	@$(MAKE) --no-print-directory examples
	@bash scripts/run-example.sh

RUN_ENV := GPUKIT_LIB=$(abspath $(LIB)) GPUKIT_BIN=$(abspath $(OBJDIR))/tests

test: deps
	@$(MAKE) --no-print-directory tests examples benches
	@$(MAKE) --no-print-directory cuda-check
	@$(RUN_ENV) bash tests/run.sh

test-gpu:
	@$(MAKE) --no-print-directory tests
	@$(RUN_ENV) GPUKIT_GPU=1 bash tests/run.sh

# issue 16: every DMDA tutorial of PETSc's snes/ksp/ts, aij against sgdia on 1-3 ranks (long: not in `make test`;
# e.g. make conformance-dmda DMDA_ARGS="--filter ^snes_ex5_ -j 2")
conformance-dmda: lib
	@$(RUN_ENV) LIB=$(abspath $(LIB)) bash tests/conformance/dmda/sweep.sh $(DMDA_ARGS)

bench: lib $(BENCH_BIN)
	@bash bench/run.sh

petsc-cuda:
	@bash scripts/petsc-cuda.sh

# a CUDA-aware Open MPI for the multi-GPU runs with -use_gpu_aware_mpi 1 (tests/gpu/awarempi.sh, docs/multigpu.md)
ompi-cuda:
	@bash scripts/ompi-cuda.sh

install: lib
	install -d $(PREFIX)/lib $(PREFIX)/include $(PREFIX)/lib/pkgconfig
	install -m 755 $(LIB) $(PREFIX)/lib/
	install -m 644 include/petscgpukit.h $(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|g' scripts/petscgpukit.pc.in > $(PREFIX)/lib/pkgconfig/petscgpukit.pc

clean:
	rm -rf $(OBJDIR) $(LIBDIR)/libpetscgpukit.so
