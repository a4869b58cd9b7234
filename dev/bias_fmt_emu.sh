#!/bin/sh
# Builds src/storage/bias_fmt.cu (the bias gradient, alone and with the activation's gradient) for
# the CPU (dev/emu stands in for CUDA) with AddressSanitizer and alignment checks, and checks it
# against float64 (dev/bias_fmt_emu.cpp).   sh dev/bias_fmt_emu.sh
set -e
. "$(dirname "$0")/emu/common.sh"
emu_begin bias_fmt_emu
emu_rewrite src/storage/bias_fmt.cu bias_fmt.cpp
emu_run $EMU_SAN -DBIAS_FMT_SRC="\"$tmp/bias_fmt.cpp\"" dev/bias_fmt_emu.cpp -lpthread -lm
