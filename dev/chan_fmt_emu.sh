#!/bin/sh
# Builds src/storage/chan_fmt.cu (SE product, layer scale, LayerNorm on the storages) for the CPU
# (dev/emu stands in for CUDA) with AddressSanitizer and alignment checks, and checks it against
# the reference loops (dev/chan_fmt_emu.cpp).   sh dev/chan_fmt_emu.sh
set -e
. "$(dirname "$0")/emu/common.sh"
emu_begin chan_fmt_emu
emu_rewrite src/storage/chan_fmt.cu chan_fmt.cpp
emu_ref
emu_run $EMU_SAN -DCHAN_FMT_SRC="\"$tmp/chan_fmt.cpp\"" dev/chan_fmt_emu.cpp "$tmp/ref.o" -lpthread -lm
