#!/bin/sh
# Builds src/storage/pool_fmt.cu (and src/cuda/pool.cu, which it runs for fp32 NCHW) for the CPU
# (dev/emu/cuda_runtime.h and cuda_bf16.h stand in for CUDA; each kernel launch becomes emu_launch)
# with AddressSanitizer, alignment checks (the 16-byte vector accesses) and a small cap on elements
# per launch, so that a tensor runs as several launches, and checks it against the reference loops;
# NHWC 2x2 and 3x3 windows' forward with CONVBENCH_POOL_RS=on (the window known at compile time, at
# every vector width), off (the runtime loops) and unset (the default); the fp32 max backward at one
# channel a thread as a scatter (by default), at every width (CONVBENCH_POOL_SCATTER=on) and as the
# gather (off): every run must pass.
#   sh dev/pool_fmt_emu.sh
set -e
. "$(dirname "$0")/emu/common.sh"
emu_begin pool_fmt_emu
emu_rewrite src/cuda/pool.cu pool.cpp
emu_rewrite src/storage/pool_fmt.cu pool_fmt.cpp
emu_ref
# -fno-strict-aliasing: the kernels move bf16 and argmax bytes as uint4 / uint2 / uint32 words
CONVBENCH_POOL_RS=on emu_run $EMU_SAN -DPOOL_LAUNCH_CAP=1500 -DPOOL_FMT_LAUNCH_CAP=1500 -DPOOL_SRC="\"$tmp/pool.cpp\"" -DPOOL_FMT_SRC="\"$tmp/pool_fmt.cpp\"" \
    dev/pool_fmt_emu.cpp "$tmp/ref.o" -lpthread
echo "== CONVBENCH_POOL_RS=off CONVBENCH_POOL_SCATTER=off"; CONVBENCH_POOL_RS=off CONVBENCH_POOL_SCATTER=off "$tmp/emu"
echo "== CONVBENCH_POOL_RS unset (the default)"; "$tmp/emu"
echo "== CONVBENCH_POOL_SCATTER=on (at every width)"; CONVBENCH_POOL_SCATTER=on "$tmp/emu"
