#!/bin/sh
# Builds src/storage/bias_fmt.cu (the bias gradient, alone and with the activation's gradient) for
# the CPU (dev/emu stands in for CUDA) with AddressSanitizer and alignment checks, and checks it
# against float64 (dev/bias_fmt_emu.cpp).   sh dev/bias_fmt_emu.sh
set -e
cd "$(dirname "$0")/.."
tmp=${TMPDIR:-/tmp}/bias_fmt_emu.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
python3 dev/emu/rewrite_launches.py src/storage/bias_fmt.cu "$tmp/bias_fmt.cpp"
g++ -std=c++20 -O1 -g -fsanitize=address,alignment -fno-sanitize-recover=alignment -fno-strict-aliasing \
    -Idev/emu -Iinclude -Isrc -DBIAS_FMT_SRC="\"$tmp/bias_fmt.cpp\"" dev/bias_fmt_emu.cpp -o "$tmp/emu" -lpthread -lm
"$tmp/emu"
