#!/bin/sh
# Builds src/storage/format.cu (the storages' conversions and the zero-padded input copies) for the
# CPU (dev/emu stands in for CUDA) with AddressSanitizer and alignment checks, and checks it against
# plain loops (dev/format_emu.cpp), then once more under CONVBENCH_CONCAT=gather.   sh dev/format_emu.sh
set -e
. "$(dirname "$0")/emu/common.sh"
emu_begin format_emu
emu_rewrite src/storage/format.cu format.cpp
emu_run $EMU_SAN -DFORMAT_SRC="\"$tmp/format.cpp\"" dev/format_emu.cpp -lpthread -lm
# again with the one-pass concatenation forward wherever it can run ($CONVBENCH_CONCAT=gather:
# bf16 and 16-byte rows too; the default takes it for narrow fp32 rows alone)
echo "again with CONVBENCH_CONCAT=gather:"
CONVBENCH_CONCAT=gather "$tmp/emu"
