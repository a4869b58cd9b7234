#!/bin/sh
# Builds src/cuda/pool.cu for the CPU (dev/emu/cuda_runtime.h stands in for CUDA; each kernel
# launch becomes emu_launch) with AddressSanitizer and a small cap on elements per launch, so
# that a tensor runs as several launches, and checks it against the reference loops.
#   sh dev/pool_emu.sh
set -e
cd "$(dirname "$0")/.."
tmp=${TMPDIR:-/tmp}/pool_emu.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
python3 dev/emu/rewrite_launches.py src/cuda/pool.cu "$tmp/pool.cpp"
cc -O1 -g -fsanitize=address -Iinclude -Isrc -c src/cpu/ref.c -o "$tmp/ref.o"
g++ -std=c++20 -O1 -g -fsanitize=address -Idev/emu -Iinclude -Isrc -DPOOL_LAUNCH_CAP=1500 \
    -DPOOL_SRC="\"$tmp/pool.cpp\"" dev/pool_emu.cpp "$tmp/ref.o" -o "$tmp/emu" -lpthread
"$tmp/emu"
