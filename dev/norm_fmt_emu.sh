#!/bin/sh
# Builds src/storage/norm_fmt.cu (batch norm on the storages) for the CPU (dev/emu/cuda_runtime.h and
# cuda_bf16.h stand in for CUDA; each kernel launch becomes emu_launch) with AddressSanitizer and
# alignment checks, and checks it against a float64 reference (dev/norm_fmt_emu.cpp).
#   sh dev/norm_fmt_emu.sh
set -e
. "$(dirname "$0")/emu/common.sh"
emu_begin norm_fmt_emu
emu_rewrite src/storage/norm_fmt.cu norm_fmt.cpp
emu_run $EMU_SAN -DNORM_FMT_SRC="\"$tmp/norm_fmt.cpp\"" dev/norm_fmt_emu.cpp -lpthread
