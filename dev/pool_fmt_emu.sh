#!/bin/sh
# Builds src/storage/pool_fmt.cu (and src/cuda/pool.cu, which it runs for fp32 NCHW) for the CPU
# (dev/emu/cuda_runtime.h and cuda_bf16.h stand in for CUDA; each kernel launch becomes emu_launch)
# with AddressSanitizer, alignment checks (the 16-byte vector accesses) and a small cap on elements
# per launch, so that a tensor runs as several launches, and checks it against the reference loops.
#   sh dev/pool_fmt_emu.sh
set -e
cd "$(dirname "$0")/.."
tmp=${TMPDIR:-/tmp}/pool_fmt_emu.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
python3 dev/emu/rewrite_launches.py src/cuda/pool.cu "$tmp/pool.cpp"
python3 dev/emu/rewrite_launches.py src/storage/pool_fmt.cu "$tmp/pool_fmt.cpp"
cc -O1 -g -fsanitize=address -Iinclude -Isrc -c src/cpu/ref.c -o "$tmp/ref.o"
# -fno-strict-aliasing: the kernels move bf16 and argmax bytes as uint4 / uint2 / uint32 words
g++ -std=c++20 -O1 -g -fsanitize=address,alignment -fno-sanitize-recover=alignment -fno-strict-aliasing \
    -Idev/emu -Iinclude -Isrc -DPOOL_LAUNCH_CAP=1500 -DPOOL_FMT_LAUNCH_CAP=1500 \
    -DPOOL_SRC="\"$tmp/pool.cpp\"" -DPOOL_FMT_SRC="\"$tmp/pool_fmt.cpp\"" dev/pool_fmt_emu.cpp "$tmp/ref.o" \
    -o "$tmp/emu" -lpthread
"$tmp/emu"
