#!/bin/sh
# Builds src/cuda/conv_depthwise.cu (depthwise convolution, every phase and storage) for the CPU
# (dev/emu stands in for CUDA) with AddressSanitizer and alignment checks, and checks it against
# the float64 reference convolution (dev/dw_emu.cpp).   sh dev/dw_emu.sh
set -e
cd "$(dirname "$0")/.."
tmp=${TMPDIR:-/tmp}/dw_emu.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
python3 dev/emu/rewrite_launches.py src/cuda/conv_depthwise.cu "$tmp/dw.cpp"
cc -O1 -g -fsanitize=address -Iinclude -Isrc -c src/cpu/ref.c -o "$tmp/ref.o"
g++ -std=c++20 -O1 -g -fsanitize=address,alignment -fno-sanitize-recover=alignment -fno-strict-aliasing \
    -Idev/emu -Iinclude -Isrc -DDW_SRC="\"$tmp/dw.cpp\"" dev/dw_emu.cpp "$tmp/ref.o" -o "$tmp/emu" -lpthread -lm
"$tmp/emu"
