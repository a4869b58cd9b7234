#!/bin/sh
# Builds src/cuda/conv_fft.cu for the CPU (dev/emu/cuda_runtime.h stands in for CUDA, each kernel
# launch becoming emu_launch; dev/fft_emu/cufft.h for cuFFT) with AddressSanitizer, and checks its
# three phases against the reference loops (dev/fft_emu.cpp).
#   sh dev/fft_emu.sh
set -e
. "$(dirname "$0")/emu/common.sh"
emu_begin fft_emu
emu_rewrite src/cuda/conv_fft.cu fft.cpp
emu_ref
emu_run -fsanitize=address -Idev/fft_emu -DFFT_SRC="\"$tmp/fft.cpp\"" dev/fft_emu.cpp "$tmp/ref.o" -lpthread
