# convbench build. `make` builds the library, the CLI and the tests; `make test` runs them
# (plain build, then again under ASan+UBSan); `make run` installs what is missing and runs the
# main job. CUDA sources are compiled when nvcc is present; nothing in the tests needs a GPU.

.DEFAULT_GOAL := all
SAN      ?=
BUILD    ?= build$(if $(SAN),-san,)$(if $(FUZZ),-fuzz,)
CC       ?= gcc
NVCC     ?= $(shell command -v nvcc 2>/dev/null)
CUDA_HOME ?= $(if $(NVCC),$(patsubst %/bin/nvcc,%,$(realpath $(NVCC))),)

COMMIT   := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wno-unused-parameter -fopenmp -MMD -MP \
            -Iinclude -Isrc
LDLIBS   += -lcjson -lopenblas -lz -lm -fopenmp

# gcc's "undefined" leaves out float-cast-overflow (a double too large for its integer type)
ifeq ($(SAN),1)
CFLAGS   += -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS  += -fsanitize=address,undefined,float-cast-overflow
NVCC     :=
endif

# FUZZ=1: the libFuzzer build (clang; ASan, UBSan with float-cast-overflow), see `make fuzz`
ifeq ($(FUZZ),1)
CC       := clang
CFLAGS   += -fsanitize=fuzzer-no-link,address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer \
            -Wno-pass-failed
LDFLAGS  += -fsanitize=fuzzer,address,undefined,float-cast-overflow
NVCC     :=
endif

LIB_SRC  := $(wildcard src/spec/*.c src/core/*.c src/layers/*.c src/cpu/*.c src/model/*.c \
                       src/bench/*.c src/data/*.c src/gpu/*.c)
TOOL_SRC := $(wildcard tools/*.c)
TEST_SRC := $(wildcard tests/test_*.c)

ifneq ($(NVCC),)
CU_SRC   := $(wildcard src/cuda/*.cu src/cudnn/*.cu src/storage/*.cu)
endif
ifneq ($(CU_SRC),)
CUC_SRC  := $(wildcard src/cudnn/*.c src/cuda/*.c src/storage/*.c src/blas/*.c src/sched/*.c)
CFLAGS   += -DCB_HAVE_CUDA -I$(CUDA_HOME)/include
NVFLAGS  ?= -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_90,code=sm_90 \
            -Xcompiler -fPIC -Iinclude -Isrc -lineinfo
LDLIBS   += -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib -lcudnn -lcublas -lcufft -lcudart -lstdc++ \
            -Wl,-rpath,$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib
endif

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(CUC_SRC:%.c=$(BUILD)/%.o) $(CU_SRC:%.cu=$(BUILD)/%.cu.o)

# ONNX import (src/spec/onnx.c): protobuf-c code generated at build time from the onnx.proto
# that Debian's libonnx-dev installs (proto2, which protoc-c reads as it is)
ONNX_PROTO ?= $(shell dpkg -L libonnx-dev 2>/dev/null | grep '/onnx\.proto$$' | head -1)
GEN      := $(BUILD)/gen
LIB_OBJ  += $(GEN)/onnx.pb-c.o
LDLIBS   += -lprotobuf-c
$(GEN)/onnx.pb-c.c: $(ONNX_PROTO)
	@test -n "$(ONNX_PROTO)" || { echo "convbench: no onnx.proto: install libonnx-dev (scripts/install-deps.sh)" >&2; exit 1; }
	@mkdir -p $(@D)
	protoc-c --proto_path=$(dir $(ONNX_PROTO)) --c_out=$(@D) $(ONNX_PROTO)
$(GEN)/onnx.pb-c.h: $(GEN)/onnx.pb-c.c
$(GEN)/onnx.pb-c.o: $(GEN)/onnx.pb-c.c
	$(CC) $(filter-out -Wall -Wextra -MMD -MP,$(CFLAGS)) -I$(GEN) -c -o $@ $<
$(BUILD)/src/spec/onnx.o $(BUILD)/src/spec/onnx_ops.o: $(GEN)/onnx.pb-c.h
$(BUILD)/src/spec/onnx.o $(BUILD)/src/spec/onnx_ops.o: CFLAGS += -I$(GEN)
TOOL_OBJ := $(TOOL_SRC:%.c=$(BUILD)/%.o)

# objects rebuild when the flags change (CUDA appearing, sanitizers), and the file that
# reports the commit rebuilds when it changes
FLAGS_ID := $(shell echo '$(CC) $(CFLAGS) $(NVFLAGS)' | md5sum | cut -c1-12)
FLAGS_STAMP := $(BUILD)/.flags-$(FLAGS_ID)
COMMIT_STAMP := $(BUILD)/.commit-$(COMMIT)
$(FLAGS_STAMP):
	@mkdir -p $(@D) && rm -f $(BUILD)/.flags-* && touch $@
$(COMMIT_STAMP):
	@mkdir -p $(@D) && rm -f $(BUILD)/.commit-* && touch $@
FUZZ_SRC := $(wildcard fuzz/*.c)
FUZZERS  := $(patsubst fuzz/%.c,%,$(wildcard fuzz/fuzz_*.c))
$(LIB_OBJ) $(TOOL_OBJ) $(TEST_SRC:%.c=$(BUILD)/%.o) $(FUZZ_SRC:%.c=$(BUILD)/%.o): $(FLAGS_STAMP)
$(BUILD)/src/bench/env.o: $(COMMIT_STAMP)
$(BUILD)/src/bench/env.o: CFLAGS += -DCB_COMMIT=\"$(COMMIT)\"

TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)

.PHONY: all test test-plain test-san run deps clean fuzz fuzz-build fuzz-smoke
all: $(BUILD)/convbench $(TESTS)

$(BUILD)/libconvbench.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	@rm -f $@ # ar adds to an archive: a deleted source's object would stay in it
	ar rcs $@ $^

$(BUILD)/convbench: $(TOOL_OBJ) $(BUILD)/libconvbench.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/libconvbench.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/%.cu.o: %.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -c -o $@ $<

# the whole suite: plain, then ASan+UBSan
test: test-plain test-san

test-plain: all
	@tests/run_tests.sh $(BUILD)

test-san:
	@$(MAKE) --no-print-directory SAN=1 all
	@ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 tests/run_tests.sh build-san

deps:
	@scripts/install-deps.sh

# libFuzzer harnesses, one per reader (fuzz/fuzz_*.c), in build-fuzz/fuzz/. `make fuzz` installs
# clang first (scripts/install-deps.sh fuzz: fails loudly where it cannot); `make fuzz-smoke`
# runs each harness FUZZ_SECONDS (30) from its seed corpus, fuzz/corpus/NAME, and fails on any
# crash, hang, leak or sanitizer report (scripts/fuzz-run.sh).
FUZZ_SECONDS ?= 30
fuzz:
	@scripts/install-deps.sh fuzz
	@$(MAKE) --no-print-directory FUZZ=1 fuzz-build

fuzz-build: $(FUZZERS:%=$(BUILD)/fuzz/%)

fuzz-smoke: fuzz
	@scripts/fuzz-run.sh $(FUZZ_SECONDS) build-fuzz $(FUZZERS)

# a harness: its object, the shared helpers, the library (the CLI harness also the commands)
$(BUILD)/fuzz/fuzz_cli: $(filter-out $(BUILD)/tools/main.o,$(TOOL_OBJ))
$(BUILD)/fuzz/fuzz_%: $(BUILD)/fuzz/fuzz_%.o $(BUILD)/fuzz/common.o $(BUILD)/libconvbench.a
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(BUILD)/libconvbench.a $(LDLIBS)

run: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/convbench fullpass nets/alexnet.json --backend cpu --batch 16 --warmup 1 --iters 5

clean:
	rm -rf build build-san build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
