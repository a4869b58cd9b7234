#!/bin/sh
# Builds src/cuda/conv_winograd.cu for the CPU (dev/emu/cuda_runtime.h stands in for CUDA; each
# kernel launch becomes emu_launch) with AddressSanitizer and a 4 MiB workspace cap, so that the
# image chunks and the split reductions run too, and checks it against the reference loops.
#   sh dev/winograd_emu.sh
set -e
cd "$(dirname "$0")/.."
tmp=${TMPDIR:-/tmp}/winograd_emu.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
python3 dev/emu/rewrite_launches.py src/cuda/conv_winograd.cu "$tmp/wino.cpp"
cc -O1 -g -fsanitize=address -Iinclude -Isrc -c src/cpu/ref.c -o "$tmp/ref.o"
g++ -std=c++20 -O1 -g -fsanitize=address -Idev/emu -Iinclude -Isrc -DWINO_CAP='((size_t)4 << 20)' \
    -DWINO_SRC="\"$tmp/wino.cpp\"" dev/winograd_emu.cpp "$tmp/ref.o" -o "$tmp/emu" -lpthread
"$tmp/emu"
