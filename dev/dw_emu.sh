#!/bin/sh
# Builds src/cuda/conv_depthwise.cu (depthwise convolution, every phase and storage) for the CPU
# (dev/emu stands in for CUDA) with AddressSanitizer and alignment checks, and checks it against
# the float64 reference convolution (dev/dw_emu.cpp); then again with CONVBENCH_DW_PAIR=on (the
# two-channel stride-1 NHWC kernel where C is even).   sh dev/dw_emu.sh
set -e
. "$(dirname "$0")/emu/common.sh"
emu_begin dw_emu
emu_rewrite src/cuda/conv_depthwise.cu dw.cpp
emu_ref
emu_run $EMU_SAN -DDW_SRC="\"$tmp/dw.cpp\"" dev/dw_emu.cpp "$tmp/ref.o" -lpthread -lm
echo "== CONVBENCH_DW_PAIR=on"; CONVBENCH_DW_PAIR=on "$tmp/emu"
