#!/bin/sh
# Builds src/cuda/pool.cu for the CPU (dev/emu/cuda_runtime.h stands in for CUDA; each kernel
# launch becomes emu_launch) with AddressSanitizer and a small cap on elements per launch, so
# that a tensor runs as several launches, and checks it against the reference loops.
#   sh dev/pool_emu.sh
set -e
. "$(dirname "$0")/emu/common.sh"
emu_begin pool_emu
emu_rewrite src/cuda/pool.cu pool.cpp
emu_ref
emu_run -fsanitize=address -DPOOL_LAUNCH_CAP=1500 -DPOOL_SRC="\"$tmp/pool.cpp\"" dev/pool_emu.cpp "$tmp/ref.o" -lpthread
