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
/usr/bin/python3 - src/cuda/conv_winograd.cu "$tmp/wino.cpp" <<'PY'
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
g++ -std=c++20 -O1 -g -fsanitize=address -Idev/emu -Iinclude -Isrc -DWINO_CAP='((size_t)4 << 20)' \
    -DWINO_SRC="\"$tmp/wino.cpp\"" dev/winograd_emu.cpp "$tmp/ref.o" -o "$tmp/emu" -lpthread
"$tmp/emu"
