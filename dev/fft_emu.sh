#!/bin/sh
# Builds src/cuda/conv_fft.cu for the CPU (dev/emu/cuda_runtime.h stands in for CUDA, each kernel
# launch becoming emu_launch; dev/fft_emu/cufft.h for cuFFT) with AddressSanitizer, and checks its
# three phases against the reference loops (dev/fft_emu.cpp).
#   sh dev/fft_emu.sh
set -e
cd "$(dirname "$0")/.."
tmp=${TMPDIR:-/tmp}/fft_emu.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
python3 dev/emu/rewrite_launches.py src/cuda/conv_fft.cu "$tmp/fft.cpp"
cc -O1 -g -fsanitize=address -Iinclude -Isrc -c src/cpu/ref.c -o "$tmp/ref.o"
g++ -std=c++20 -O1 -g -fsanitize=address -Idev/emu -Idev/fft_emu -Iinclude -Isrc -DFFT_SRC="\"$tmp/fft.cpp\"" \
    dev/fft_emu.cpp "$tmp/ref.o" -o "$tmp/emu" -lpthread
"$tmp/emu"
