#!/bin/sh
# Builds src/storage/norm_fmt.cu (batch norm on the storages) for the CPU (dev/emu/cuda_runtime.h and
# cuda_bf16.h stand in for CUDA; each kernel launch becomes emu_launch) with AddressSanitizer and
# alignment checks, and checks it against a float64 reference (dev/norm_fmt_emu.cpp).
#   sh dev/norm_fmt_emu.sh
set -e
cd "$(dirname "$0")/.."
tmp=${TMPDIR:-/tmp}/norm_fmt_emu.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
python3 dev/emu/rewrite_launches.py src/storage/norm_fmt.cu "$tmp/norm_fmt.cpp"
g++ -std=c++20 -O1 -g -fsanitize=address,alignment -fno-sanitize-recover=alignment -fno-strict-aliasing \
    -Idev/emu -Iinclude -Isrc -DNORM_FMT_SRC="\"$tmp/norm_fmt.cpp\"" dev/norm_fmt_emu.cpp -o "$tmp/emu" -lpthread
"$tmp/emu"
