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
/usr/bin/python3 - src/cuda/conv_fft.cu "$tmp/fft.cpp" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
out, i = [], 0
for m in re.finditer(r'([\w:]+(?:<[^<>;]*>)?)<<<(.*?)>>>\(', src):
    grid, block = m.group(2), None  # split the launch configuration at its top-level comma
    depth = 0
    for j, ch in enumerate(grid):
        depth += ch in '(<[' and 1 or ch in ')>]' and -1 or 0
        if ch == ',' and depth == 0:
            grid, block = grid[:j], grid[j + 1:]
            break
    out.append(src[i:m.start()] + 'emu_launch(%s, %s, %s, ' % (grid.strip(), block.strip(), m.group(1)))
    i = m.end()
out.append(src[i:])
open(sys.argv[2], 'w').write(''.join(out))
PY
cc -O1 -g -fsanitize=address -Iinclude -Isrc -c src/cpu/ref.c -o "$tmp/ref.o"
g++ -std=c++20 -O1 -g -fsanitize=address -Idev/emu -Idev/fft_emu -Iinclude -Isrc -DFFT_SRC="\"$tmp/fft.cpp\"" \
    dev/fft_emu.cpp "$tmp/ref.o" -o "$tmp/emu" -lpthread
"$tmp/emu"
