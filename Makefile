# moontorch: make (build), make test, make run, make asan, make fuzz, make bench,
# make install PREFIX=...

PREFIX ?= /usr/local
BUILD ?= build
CC ?= gcc
# ARCH: the ISA the whole build targets. On x86-64, x86-64: a binary that runs on any
# x86-64 CPU, its hot loops compiled per level (baseline, AVX2 + FMA, AVX-512) and picked at
# start-up from cpuid (src/tensor/mt_isa.h; torch.backends.cpu.get_cpu_capability() says
# which ran). ARCH=native builds for the build machine alone (no faster: bench/builds.py);
# elsewhere native is the default.
HOST_X86_64 := $(if $(filter x86_64%,$(shell $(CC) -dumpmachine 2>/dev/null)),1,)
ARCH ?= $(if $(HOST_X86_64),x86-64,native)
OPT ?= -O3 -march=$(ARCH)
SAN ?=

DEPS_STAMP := .deps-ok
PKG_CFLAGS = $(shell pkg-config --cflags lua5.4 openblas 2>/dev/null)
PKG_LIBS_BLAS = $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
PKG_LIBS_LUA = $(shell pkg-config --libs lua5.4 2>/dev/null || echo -llua5.4)

# -fopenmp-simd: the kernels' `omp simd` hints without the OpenMP runtime;
# threads come from the engine's own pool (src/tensor/mt_parallel.c).
CFLAGS_ALL = -std=gnu11 $(OPT) -g -fPIC -pthread -fopenmp-simd -fno-math-errno -Wall -Wextra $(SAN) $(PKG_CFLAGS) $(CFLAGS)
LDFLAGS_ALL = -pthread $(SAN) $(LDFLAGS)

# The direct convolution is compiled once per x86-64 level (src/tensor/mt_conv_direct.h),
# each unit with its own -march after the build's, whatever ARCH is; the engine picks one
# at run time. ISA_FLAGS is read by the compile rule alone (target-specific variables also
# reach prerequisites, such as the flags stamp).
ifeq ($(HOST_X86_64),1)
$(BUILD)/src/tensor/mt_conv_isa_base.o: ISA_FLAGS = -march=x86-64
$(BUILD)/src/tensor/mt_conv_isa_v3.o: ISA_FLAGS = -march=x86-64-v3
$(BUILD)/src/tensor/mt_conv_isa_v4.o: ISA_FLAGS = -march=x86-64-v4
endif

ENGINE_SRC := $(wildcard src/tensor/*.c src/autograd/*.c src/ops/*.c)
VM_SRC := $(filter-out src/vm/th.c,$(wildcard src/vm/*.c))
ENGINE_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/%.o)
VM_OBJ := $(VM_SRC:%.c=$(BUILD)/%.o)

LIB := $(BUILD)/libmoontorch.so
CORE := $(BUILD)/torch/core.so
TH := $(BUILD)/th

BUSTED = busted --lpath='./lib/?.lua;./lib/?/init.lua' --cpath='./$(BUILD)/?.so'

.PHONY: all deps test run asan asan-build install clean bench FORCE

# ---- the CUDA backend (src/cuda -> build/torch/cuda.so) ----
# Built whenever nvcc is found: on PATH, under $CUDA_HOME, or in the bin/ of
# the toolkit's default prefix (which PATH often lacks); `make CUDA=0` skips
# it. The CPU build never links CUDA: cuda.so links libmoontorch.so, and
# `require 'torch'` loads it only when it is present and a GPU answers.
# Device code for sm_80 and sm_90, plus PTX for newer GPUs; warnings are
# errors in the CUDA sources.
NVCC ?= $(shell command -v nvcc 2>/dev/null || \
  { [ -n "$$CUDA_HOME" ] && [ -x "$$CUDA_HOME/bin/nvcc" ] && echo "$$CUDA_HOME/bin/nvcc"; } || \
  { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
CUDA ?= $(if $(NVCC),1,0)
CUDA_ROOT = $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
  -gencode arch=compute_90,code=compute_90
NVCC_FLAGS = -std=c++17 -O3 $(CUDA_ARCH) -Werror all-warnings \
  -Xcompiler -fPIC,-Wall,-Wextra,-Werror,-Wno-unused-parameter $(NVCCFLAGS)
CUDA_CFLAGS = -std=gnu11 $(OPT) -g -fPIC -Wall -Wextra -Werror -I$(CUDA_ROOT)/include $(PKG_CFLAGS)
CUDA_SRC := $(wildcard src/cuda/*.cu)
CUDA_CSRC := $(wildcard src/cuda/*.c)
CUDA_OBJ := $(CUDA_SRC:%.cu=$(BUILD)/%.cu.o) $(CUDA_CSRC:%.c=$(BUILD)/%.o)
CUDA_LIB := $(BUILD)/torch/cuda.so
ifeq ($(CUDA),1)
CUDA_TARGET := $(CUDA_LIB)
endif

# ---- the MPI backend of lib/distributed (src/distributed -> build/distributed/mpi.so) ----
# Built whenever mpicc is found (OpenMPI's libopenmpi-dev, which scripts/deps.sh
# installs): looked for when the build runs, after deps.sh, so a first `make`
# on a clean machine builds it too; `make MPI=0` skips it, MPI=1 insists. Only
# mpi.so links MPI, with mpicc's own flags: the engine and th never do, and
# `require 'distributed'` loads it on init_process_group.
MPICC ?= $(shell command -v mpicc 2>/dev/null)
MPI ?= auto
MPI_CFLAGS = $(shell $(MPICC) -showme:compile 2>/dev/null || pkg-config --cflags ompi-c mpich 2>/dev/null)
MPI_LIBS = $(shell $(MPICC) -showme:link 2>/dev/null || pkg-config --libs ompi-c mpich 2>/dev/null)
MPI_RPATH = $(patsubst -L%,-Wl$(comma)-rpath$(comma)%,$(filter -L%,$(MPI_LIBS)))
comma := ,
MPI_LIB := $(BUILD)/distributed/mpi.so
ifeq ($(MPI),1)
MPI_TARGET := $(MPI_LIB)
else ifeq ($(MPI),auto)
MPI_TARGET := mpi-auto
endif

STORE_LIB := $(BUILD)/distributed/store.so
NCCL ?= $(if $(and $(filter 1,$(CUDA)),$(wildcard $(CUDA_ROOT)/include/nccl.h)),1,0)
NCCL_LIB := $(BUILD)/distributed/nccl.so
ifeq ($(NCCL),1)
NCCL_TARGET := $(NCCL_LIB)
endif

all: $(LIB) $(CORE) $(TH) $(CUDA_TARGET) $(MPI_TARGET) $(STORE_LIB) $(NCCL_TARGET)

$(BUILD)/src/distributed/%.o: src/distributed/%.c $(FLAGS_STAMP) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(MPI_CFLAGS) $(DEPFLAGS) -c $< -o $@

-include $(BUILD)/src/distributed/mpi.d

$(MPI_LIB): $(BUILD)/src/distributed/mpi.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS_ALL) -Wl,-z,nodelete -o $@ $< -L$(BUILD) -lmoontorch $(MPI_LIBS) $(MPI_RPATH) \
	  -Wl,-rpath,'$$ORIGIN/..:$$ORIGIN/../../..' -lm

mpi: $(MPI_LIB)
mpi-auto: $(LIB) | $(DEPS_STAMP)
	@if command -v mpicc > /dev/null 2>&1; then $(MAKE) --no-print-directory MPI=1 $(MPI_LIB); fi
.PHONY: mpi mpi-auto

# ---- the rendezvous of init_process_group{backend='nccl'} (src/distributed/store.c ->
# build/distributed/store.so): rank 0 hands a blob to the others over TCP at
# MASTER_ADDR:MASTER_PORT. Plain C and POSIX sockets: built always.
-include $(BUILD)/src/distributed/store.d
$(STORE_LIB): $(BUILD)/src/distributed/store.o
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS_ALL) -o $@ $<

# ---- the NCCL backend of lib/distributed (src/distributed/nccl.c -> build/distributed/nccl.so) ----
# Built with the CUDA backend when the toolkit has NCCL (nccl.h); it links
# cuda.so (the tensors' streams) and libnccl, and is loaded only by
# init_process_group{backend='nccl'}. `make NCCL=0` skips it (NCCL, NCCL_LIB
# and STORE_LIB are set above `all`).
-include $(BUILD)/src/distributed/nccl.d
$(BUILD)/src/distributed/nccl.o: src/distributed/nccl.c $(FLAGS_STAMP) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CUDA_CFLAGS) -MMD -MP -c $< -o $@
$(NCCL_LIB): $(BUILD)/src/distributed/nccl.o $(CUDA_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS_ALL) -Wl,-z,nodelete -o $@ $< -L$(BUILD) -lmoontorch -L$(BUILD)/torch -l:cuda.so \
	  -L$(CUDA_ROOT)/lib64 -lnccl -lcudart \
	  -Wl,-rpath,'$$ORIGIN/..:$$ORIGIN/../torch:$$ORIGIN/../../..:$(CUDA_ROOT)/lib64:/usr/local/cuda/lib64' -lm


cuda: $(CUDA_LIB)
.PHONY: cuda

NVCC_STAMP := $(BUILD)/.nvccflags
$(NVCC_STAMP): FORCE
	@mkdir -p $(BUILD)
	@echo '$(NVCC) $(NVCC_FLAGS)' | cmp -s - $@ || echo '$(NVCC) $(NVCC_FLAGS)' > $@

$(BUILD)/src/cuda/%.cu.o: src/cuda/%.cu $(NVCC_STAMP) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCC_FLAGS) -MMD -MP -c $< -o $@

$(BUILD)/src/cuda/%.o: src/cuda/%.c $(FLAGS_STAMP) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CUDA_CFLAGS) -MMD -MP -c $< -o $@

-include $(CUDA_OBJ:.o=.d)

# cudart, cuBLAS and cuDNN from the toolkit's lib64 (rpath there and to the
# toolkit's usual prefix), the engine from build/ beside it.
$(CUDA_LIB): $(CUDA_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS_ALL) -Wl,-z,nodelete -o $@ $(CUDA_OBJ) -L$(BUILD) -lmoontorch \
	  -L$(CUDA_ROOT)/lib64 -lcudnn -lcublas -lcudart -lstdc++ \
	  -Wl,-rpath,'$$ORIGIN/..:$$ORIGIN/../../..:$(CUDA_ROOT)/lib64:/usr/local/cuda/lib64' -lm

$(DEPS_STAMP): scripts/deps.sh
	@sh scripts/deps.sh
	@touch $@

deps: $(DEPS_STAMP)

# The flags an object was built with are part of what it depends on: a tree
# built before a change of SAN or OPT is rebuilt, not reused.
FLAGS_STAMP := $(BUILD)/.cflags
$(FLAGS_STAMP): FORCE
	@mkdir -p $(BUILD)
	@echo '$(CFLAGS_ALL) $(DEPFLAGS)' | cmp -s - $@ || echo '$(CFLAGS_ALL) $(DEPFLAGS)' > $@
FORCE:

# -MMD -MP: the compiler writes each object's header dependencies beside it
# (build/.../x.d), so a one-line change rebuilds only the objects that include
# what changed. They are in the flags stamp, so a tree built without them
# (no .d files) is rebuilt once.
DEPFLAGS := -MMD -MP
$(BUILD)/%.o: %.c $(FLAGS_STAMP) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(ISA_FLAGS) $(DEPFLAGS) -c $< -o $@

-include $(ENGINE_OBJ:.o=.d) $(VM_OBJ:.o=.d) $(BUILD)/src/vm/th.d

# -z nodelete: Lua unloads C modules when a state closes, while the pool's
# and OpenBLAS's worker threads may still sit in their code.
$(LIB): $(ENGINE_OBJ)
	$(CC) -shared $(LDFLAGS_ALL) -Wl,-z,nodelete -o $@ $^ $(PKG_LIBS_BLAS) -lz -lmvec -lm

# The Lua C module: resolved against the host's Lua (lua5.4, busted, th).
$(CORE): $(VM_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS_ALL) -Wl,-z,nodelete -o $@ $(VM_OBJ) -L$(BUILD) -lmoontorch -Wl,-rpath,'$$ORIGIN/..:$$ORIGIN/../../..' -lz -lm

$(TH): $(BUILD)/src/vm/th.o $(VM_OBJ) $(LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $(BUILD)/src/vm/th.o $(VM_OBJ) -L$(BUILD) -lmoontorch \
	  -Wl,-rpath,'$$ORIGIN:$$ORIGIN/../lib' -Wl,-E $(PKG_LIBS_LUA) -lreadline -lz -lm

# Runs the specs with the busted command $(1): its TAP output (kept in $(2)),
# then the one-line summary CI reads, "N passed, N failed" (a run that dies
# early, a sanitizer's abort, counts one failure more than its TAP shows).
define run_specs
	@rm -f $(2)
	@$(1) -o TAP spec > $(2) 2>&1; status=$$?; \
	  cat $(2); \
	  passed=$$(grep -c '^ok ' $(2)); failed=$$(grep -c '^not ok ' $(2)); \
	  if [ $$status -ne 0 ] && [ $$failed -eq 0 ]; then failed=1; fi; \
	  echo "$$passed passed, $$failed failed"; [ $$failed -eq 0 ]
endef

test: all
	$(call run_specs,$(BUSTED),$(BUILD)/test.tap)

run: all
	$(TH) examples/fashion_mnist_mlp.lua --epochs $(or $(EPOCHS),10) --workers $(or $(WORKERS),0) $(if $(THREADS),--threads $(THREADS))

# Specs under AddressSanitizer + UndefinedBehaviorSanitizer, in their own
# build tree; the sanitizer runtimes are preloaded into the stock lua5.4.
# -fno-sanitize-recover=all: UBSan's reports abort, as ASan's do, rather
# than print and let the run pass.
ASAN_BUILD := build-asan
ASAN_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
asan-build:
	$(MAKE) BUILD=$(ASAN_BUILD) OPT=-O1 SAN='$(ASAN_SAN)' CUDA=0 all

ASAN_BUSTED = ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
  busted --lpath='./lib/?.lua;./lib/?/init.lua' --cpath='./$(ASAN_BUILD)/?.so'
asan: asan-build
	$(call run_specs,$(ASAN_BUSTED),$(ASAN_BUILD)/test.tap)

# The GPU's checks, where one is: spec/cuda_spec.lua (every registry op, the index, conv and
# norm kernels, autograd, the optimizers and both FashionMNIST examples against the CPU) and
# spec/distributed_nccl_spec.lua (the NCCL backend's collectives and DDP on the GPU), then
# the GPU benchmarks against PyTorch on the same GPU when python3 has torch. Without a GPU the
# spec says why and skips.
.PHONY: gpu-check
gpu-check: all
	@$(BUSTED) -o TAP spec/cuda_spec.lua spec/distributed_nccl_spec.lua > $(BUILD)/gpu-check.tap 2>&1; status=$$?; \
	  cat $(BUILD)/gpu-check.tap; \
	  passed=$$(grep -c '^ok ' $(BUILD)/gpu-check.tap); failed=$$(grep -c '^not ok ' $(BUILD)/gpu-check.tap); \
	  if [ $$status -ne 0 ] && [ $$failed -eq 0 ]; then failed=1; fi; \
	  echo "$$passed passed, $$failed failed"; [ $$failed -eq 0 ]
	@if python3 -c 'import torch' 2> /dev/null; then \
	  for b in cuda_ops cuda_train; do RUNS=$(or $(RUNS),3) THREADS=$(or $(THREADS),1) python3 bench/run.py $$b || exit 1; done; \
	else echo 'gpu-check: no PyTorch here, the GPU benchmarks are not run'; fi

# Benchmarks against PyTorch, side by side: make bench [B=name] [THREADS=n] [RUNS=n]
bench: all
	THREADS=$(or $(THREADS),1) RUNS=$(or $(RUNS),5) python3 bench/run.py $(B)

# The reference values under spec/ref against the installed PyTorch: each
# generator regenerates its file and fails when a value moved (past last-digit
# noise, see spec/ref/refgen.py) or the cases changed. Needs torch from PyPI.
.PHONY: check-ref
check-ref:
	for g in spec/ref/gen_*.py; do python3 $$g --check || exit 1; done

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/lib/lua/5.4/torch \
	  $(DESTDIR)$(PREFIX)/share/lua/5.4
	install -m 755 $(LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(CORE) $(DESTDIR)$(PREFIX)/lib/lua/5.4/torch/
	install -m 755 $(TH) $(DESTDIR)$(PREFIX)/bin/
	$(if $(CUDA_TARGET),install -m 755 $(CUDA_LIB) $(DESTDIR)$(PREFIX)/lib/lua/5.4/torch/)
	install -d $(DESTDIR)$(PREFIX)/lib/lua/5.4/distributed
	install -m 755 $(STORE_LIB) $(DESTDIR)$(PREFIX)/lib/lua/5.4/distributed/
	if [ -f $(MPI_LIB) ]; then install -m 755 $(MPI_LIB) $(DESTDIR)$(PREFIX)/lib/lua/5.4/distributed/; fi
	$(if $(NCCL_TARGET),install -m 755 $(NCCL_LIB) $(DESTDIR)$(PREFIX)/lib/lua/5.4/distributed/)
	cp -r lib/* $(DESTDIR)$(PREFIX)/share/lua/5.4/

clean:
	rm -rf build build-asan build-fuzz

# Fuzzing: make fuzz [SECONDS=60] [SEED=n] runs the API fuzzer for SECONDS,
# then, where clang is installed, each loader fuzzer for SECONDS too (three
# times SECONDS in all; without clang the loaders are skipped, with a note).
#
# make fuzz-api [SECONDS=60] [SEED=n] [CALLS=n]: fuzz/api.lua calls every
# function and method of the Lua API with odd arguments under the ASan build
# (fuzz/run_api.sh: a crash, a sanitizer report or a hung call fails). The
# seed is random unless given, and printed; CALLS=n replays a run's first n
# calls. CI runs it with a fixed seed and budget (.ci/run).
SECONDS ?= 60
.PHONY: fuzz fuzz-api fuzz-loaders
fuzz: fuzz-api
	@if command -v clang > /dev/null; then $(MAKE) fuzz-loaders; \
	  else echo "fuzz: clang not found, the loader fuzzers (make fuzz-loaders) are skipped"; fi

fuzz-api: asan-build
	$(if $(CALLS),FUZZ_CALLS=$(CALLS)) sh fuzz/run_api.sh $(ASAN_BUILD)/th $(SECONDS) $(SEED)

# Fuzzing the loaders with libFuzzer: make fuzz-loaders [FUZZ_SECONDS=SECONDS]. clang
# builds the engine into build-fuzz under AddressSanitizer with coverage, one
# target per loader (torch.load's format: t7; safetensors) links it, and each
# runs FUZZ_SECONDS from a corpus seeded with valid files (fuzz/seeds.lua).
# A finding stops make and is kept as build-fuzz/crash-<target>-*. Leak
# checks are off: the Lua state frees what an input allocated only when its
# collector runs, so LeakSanitizer would scan the heap after nearly every input.
FUZZ_SECONDS ?= $(SECONDS)
FUZZ_BUILD := build-fuzz
FUZZ_TARGETS := t7 safetensors
fuzz-loaders:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=clang OPT=-O1 SAN='-fsanitize=address,fuzzer-no-link -fno-omit-frame-pointer' \
	  CFLAGS='-Wno-pass-failed -Wno-unknown-warning-option' CUDA=0 all
	for t in $(FUZZ_TARGETS); do \
	  clang -std=gnu11 -O1 -g -Wall -Wextra -fsanitize=address,fuzzer $(PKG_CFLAGS) -DFUZZ_LOADER="\"$$t\"" \
	    -DFUZZ_LIB="\"$(CURDIR)/lib\"" fuzz/fuzz_loader.c $(VM_SRC:%.c=$(FUZZ_BUILD)/%.o) -L$(FUZZ_BUILD) -lmoontorch \
	    -Wl,-rpath,'$(CURDIR)/$(FUZZ_BUILD)' $(PKG_LIBS_LUA) -pthread -lz -lm -o $(FUZZ_BUILD)/fuzz_$$t || exit 1; \
	done
	ASAN_OPTIONS=detect_leaks=0 $(FUZZ_BUILD)/th fuzz/seeds.lua $(FUZZ_BUILD)/corpus
	for t in $(FUZZ_TARGETS); do \
	  OMP_NUM_THREADS=1 $(FUZZ_BUILD)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=16384 -detect_leaks=0 \
	    -artifact_prefix=$(FUZZ_BUILD)/crash-$$t- $(FUZZ_BUILD)/corpus/$$t || exit 1; \
	done
