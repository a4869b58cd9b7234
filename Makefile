# convbench build. `make` builds the library, the CLI and the tests; `make test` runs them
# (plain build, then again under ASan+UBSan); `make run` installs what is missing and runs the
# main job; `make install PREFIX=DIR` installs. CUDA sources are compiled when nvcc is present;
# nothing in the tests needs a GPU.

.DEFAULT_GOAL := all
# every core by default (nvcc's .cu files take minutes one after another); -jN overrides
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif
VERSION  := 0.1.0
SOVER    := 0
PREFIX   ?= /usr/local
DATADIR  := $(PREFIX)/share/convbench
SAN      ?=
BUILD    ?= build$(if $(SAN),-san,)$(if $(FUZZ),-fuzz,)
CC       ?= gcc
NVCC     ?= $(shell command -v nvcc 2>/dev/null)
CUDA_HOME ?= $(if $(NVCC),$(patsubst %/bin/nvcc,%,$(realpath $(NVCC))),)

COMMIT   := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
# 1 when tracked files differ from that commit (results then say convbench_dirty: true)
DIRTY    := $(shell test -n "$$(git status --porcelain --untracked-files=no 2>/dev/null)" && echo 1 || echo 0)
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wno-unused-parameter -fopenmp -fPIC -MMD -MP \
            -Iinclude -Isrc
LDLIBS   += -lcjson -lopenblas -lsqlite3 -lz -lm -fopenmp

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
                       src/bench/*.c src/data/*.c src/gpu/*.c) src/dist/bucket.c src/dist/rendezvous.c
# the "onednn" backend (src/onednn) where oneDNN's headers are found (Debian's libdnnl-dev,
# which scripts/install-deps.sh installs); ONEDNN=0 leaves it out
ONEDNN   ?= $(shell $(CC) -E -include oneapi/dnnl/dnnl.h -x c /dev/null >/dev/null 2>&1 && echo 1)
ifeq ($(ONEDNN),1)
LIB_SRC  += $(wildcard src/onednn/*.c)
CFLAGS   += -DCB_HAVE_ONEDNN
LDLIBS   += -ldnnl
endif
TOOL_SRC := $(wildcard tools/*.c)
TEST_SRC := $(wildcard tests/test_*.c)

ifneq ($(NVCC),)
CU_SRC   := $(wildcard src/cuda/*.cu src/cudnn/*.cu src/storage/*.cu)
endif
ifneq ($(CU_SRC),)
CUC_SRC  := $(wildcard src/cudnn/*.c src/cuda/*.c src/storage/*.c src/blas/*.c src/sched/*.c)
# every stream 0 is the calling thread's default stream, which a CUDA graph can capture (the legacy
# one cannot); the libraries are given cudaStreamPerThread explicitly
CFLAGS   += -DCB_HAVE_CUDA -DCUDA_API_PER_THREAD_DEFAULT_STREAM=1 -I$(CUDA_HOME)/include
NVFLAGS  ?= -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_90,code=sm_90 \
            -Xcompiler -fPIC -Iinclude -Isrc -lineinfo --default-stream per-thread
LDLIBS   += -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib -lcudnn -lcublas -lcufft -lcudart -lstdc++ \
            -Wl,-rpath,$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib
# multi-GPU training and all-reduce (src/dist/nccl.c) where nccl.h is found (the toolkit or the system); NCCL=0 leaves it out
NCCL     ?= $(shell $(CC) -E -I$(CUDA_HOME)/include -include nccl.h -x c /dev/null >/dev/null 2>&1 && echo 1)
ifeq ($(NCCL),1)
CUC_SRC  += src/dist/nccl.c
CFLAGS   += -DCB_HAVE_NCCL
LDLIBS   += -lnccl
endif
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
COMMIT_STAMP := $(BUILD)/.commit-$(COMMIT)-$(DIRTY)
$(FLAGS_STAMP):
	@mkdir -p $(@D) && rm -f $(BUILD)/.flags-* && touch $@
$(COMMIT_STAMP):
	@mkdir -p $(@D) && rm -f $(BUILD)/.commit-* && touch $@
FUZZ_SRC := $(wildcard fuzz/*.c)
FUZZERS  := $(patsubst fuzz/%.c,%,$(wildcard fuzz/fuzz_*.c))
$(LIB_OBJ) $(TOOL_OBJ) $(TEST_SRC:%.c=$(BUILD)/%.o) $(FUZZ_SRC:%.c=$(BUILD)/%.o): $(FLAGS_STAMP)
$(BUILD)/src/bench/env.o: $(COMMIT_STAMP)
$(BUILD)/src/bench/env.o: CFLAGS += -DCB_COMMIT=\"$(COMMIT)\" -DCB_DIRTY=$(DIRTY)
# where the data is looked for: the installed PREFIX, then $$CONVBENCH_DATA, then this tree
PREFIX_STAMP := $(BUILD)/.prefix-$(shell echo '$(DATADIR)' | md5sum | cut -c1-12)
$(PREFIX_STAMP):
	@mkdir -p $(@D) && rm -f $(BUILD)/.prefix-* && touch $@
$(BUILD)/src/core/setup.o $(BUILD)/src/core/setup.so.o: $(PREFIX_STAMP)
$(BUILD)/src/core/setup.o $(BUILD)/src/core/setup.so.o: CFLAGS += -DCB_DATADIR=\"$(DATADIR)\" -DCB_SRCDIR=\"$(CURDIR)\"
# the shared library's copy restarts only an executable that names it as a dependency
$(BUILD)/src/core/setup.so.o: src/core/setup.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DCB_SHARED -c -o $@ $<
SO_OBJ   := $(filter-out $(BUILD)/src/core/setup.o,$(LIB_OBJ)) $(BUILD)/src/core/setup.so.o

TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)

.PHONY: all test test-plain test-san run deps clean install fuzz fuzz-build fuzz-smoke
all: $(BUILD)/convbench $(if $(SAN),,$(BUILD)/libconvbench.so) $(TESTS) $(BUILD)/fma_peak

# the machine's measured FMA peak (bench/fma_peak.c), for "% of peak" in the results
$(BUILD)/fma_peak: bench/fma_peak.c
	@mkdir -p $(@D)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) $(LDFLAGS) -o $@ $< -fopenmp

$(BUILD)/libconvbench.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	@rm -f $@ # ar adds to an archive: a deleted source's object would stay in it
	ar rcs $@ $^

$(BUILD)/libconvbench.so.$(VERSION): $(SO_OBJ)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libconvbench.so.$(SOVER) -o $@ $^ $(LDLIBS)
$(BUILD)/libconvbench.so: $(BUILD)/libconvbench.so.$(VERSION)
	ln -sf libconvbench.so.$(VERSION) $(BUILD)/libconvbench.so.$(SOVER) && ln -sf libconvbench.so.$(SOVER) $@

$(BUILD)/convbench: $(TOOL_OBJ) $(BUILD)/libconvbench.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/libconvbench.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

# (-MMD -MP: the .cu.d beside the object, so a changed kernel header rebuilds what includes it)
$(BUILD)/%.cu.o: %.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -MMD -MP -c -o $@ $<

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

# on a GPU: AlexNet bf16 NHWC, auto against cudnn; else AlexNet on the CPU (scripts/run.sh)
run: deps
	@$(MAKE) --no-print-directory all
	@scripts/run.sh $(BUILD)/convbench

# PREFIX/bin/convbench, PREFIX/lib/libconvbench.{so,a}, PREFIX/include/convbench.h,
# PREFIX/lib/pkgconfig/convbench.pc, PREFIX/share/convbench/{nets,data}; DESTDIR stages it
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(DATADIR)/nets $(DESTDIR)$(DATADIR)/data
	install -m 755 $(BUILD)/convbench $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BUILD)/libconvbench.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libconvbench.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libconvbench.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libconvbench.so.$(SOVER)
	ln -sf libconvbench.so.$(SOVER) $(DESTDIR)$(PREFIX)/lib/libconvbench.so
	install -m 644 include/convbench.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 nets/*.json $(DESTDIR)$(DATADIR)/nets/
	install -m 644 data/devices.json $(DESTDIR)$(DATADIR)/data/
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	    'Name: convbench' 'Description: read, run, measure and predict convolutional networks' \
	    'Version: $(VERSION)' 'Libs: -L$${libdir} -lconvbench' 'Libs.private: $(strip $(LDLIBS))' \
	    'Cflags: -I$${includedir}' > $(DESTDIR)$(PREFIX)/lib/pkgconfig/convbench.pc

clean:
	rm -rf build build-san build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
