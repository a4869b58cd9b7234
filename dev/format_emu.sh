#!/bin/sh
# Builds src/storage/format.cu (the storages' conversions and the zero-padded input copies) for the
# CPU (dev/emu stands in for CUDA) with AddressSanitizer and alignment checks, and checks it against
# plain loops (dev/format_emu.cpp).   sh dev/format_emu.sh
set -e
. "$(dirname "$0")/emu/common.sh"
emu_begin format_emu
emu_rewrite src/storage/format.cu format.cpp
emu_run $EMU_SAN -DFORMAT_SRC="\"$tmp/format.cpp\"" dev/format_emu.cpp -lpthread -lm
