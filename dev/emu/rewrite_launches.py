"""Rewrites a .cu file's kernel launches `k<<<grid, block>>>(args)` as `emu_launch(grid, block, k, args)`
so that dev/emu/cuda_runtime.h can run its kernels on the CPU.
Usage: python3 dev/emu/rewrite_launches.py SRC.cu OUT.cpp"""
import re, sys

src = open(sys.argv[1]).read()
out, i = [], 0
for m in re.finditer(r'([\w:]+(?:<[^<>;]*>)?)<<<(.*?)>>>\(', src):
    grid, block = m.group(2), None  # split the launch configuration at its top-level comma
    depth = 0
    for j, ch in enumerate(grid):
        depth += ch in '([' and 1 or ch in ')]' and -1 or 0  # (not '<': a comparison in the grid, such as blocks < 65535)
        if ch == ',' and depth == 0:
            grid, block = grid[:j], grid[j + 1:]
            break
    depth = 0  # shared bytes and the stream, where given, play no part on the CPU
    for j, ch in enumerate(block):
        depth += ch in '([' and 1 or ch in ')]' and -1 or 0  # (not '<': a comparison in the grid, such as blocks < 65535)
        if ch == ',' and depth == 0:
            block = block[:j]
            break
    out.append(src[i:m.start()] + 'emu_launch(%s, %s, %s, ' % (grid.strip(), block.strip(), m.group(1)))
    i = m.end()
out.append(src[i:])
open(sys.argv[2], 'w').write(''.join(out))
