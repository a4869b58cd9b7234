#!/bin/sh
# Builds src/cuda/conv_winograd.cu for the CPU (dev/emu/cuda_runtime.h stands in for CUDA; each
# kernel launch becomes emu_launch) with AddressSanitizer and a 4 MiB workspace cap, so that the
# image chunks and the split reductions run too, and checks it against the reference loops.
#   sh dev/winograd_emu.sh
set -e
. "$(dirname "$0")/emu/common.sh"
emu_begin winograd_emu
emu_rewrite src/cuda/conv_winograd.cu wino.cpp
emu_ref
emu_run -fsanitize=address -DWINO_CAP='((size_t)4 << 20)' -DWINO_SRC="\"$tmp/wino.cpp\"" dev/winograd_emu.cpp "$tmp/ref.o" -lpthread
