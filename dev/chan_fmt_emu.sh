#!/bin/sh
# Builds src/storage/chan_fmt.cu (SE product, layer scale, LayerNorm on the storages) for the CPU
# (dev/emu stands in for CUDA) with AddressSanitizer and alignment checks, and checks it against
# the reference loops (dev/chan_fmt_emu.cpp).   sh dev/chan_fmt_emu.sh
set -e
cd "$(dirname "$0")/.."
tmp=${TMPDIR:-/tmp}/chan_fmt_emu.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
python3 dev/emu/rewrite_launches.py src/storage/chan_fmt.cu "$tmp/chan_fmt.cpp"
cc -O1 -g -fsanitize=address -Iinclude -Isrc -c src/cpu/ref.c -o "$tmp/ref.o"
g++ -std=c++20 -O1 -g -fsanitize=address,alignment -fno-sanitize-recover=alignment -fno-strict-aliasing \
    -Idev/emu -Iinclude -Isrc -DCHAN_FMT_SRC="\"$tmp/chan_fmt.cpp\"" dev/chan_fmt_emu.cpp "$tmp/ref.o" -o "$tmp/emu" -lpthread -lm
"$tmp/emu"
