#!/usr/bin/env bash
# Side by side on this CPU, in one run: convbench fullpass --update against PyTorch's CPU
# training step for AlexNet b16 and VGG-16 b4. Alternates the two so that load from elsewhere
# touches both. Writes JSON under OUTDIR and prints a table with the ratio last.
# BACKENDS="cpu onednn" times each convbench backend named (default: cpu), one row each.
set -euo pipefail
cb=${CB:-build/convbench}
out=${1:-/tmp/cpu-vs-pytorch}
iters=${ITERS:-5}
backends=${BACKENDS:-cpu}
mkdir -p "$out"
printf '%-8s %5s %-8s %12s %12s %12s %8s\n' net batch backend convbench_ms pytorch_ms ratio threads > "$out/table.txt"
for spec in alexnet:16 vgg16:4; do
    net=${spec%:*} b=${spec#*:}
    for be in $backends; do
        "$cb" fullpass "$net" --batch "$b" --backend "$be" --update --no-data-grad --warmup 1 --iters "$iters" --format json --quiet > "$out/convbench-$net-$be.json"
    done
    /usr/bin/python3 bench/pytorch_cpu.py "$net" "$b" --iters "$iters" --warmup 1 > "$out/pytorch-$net.json"
    for be in $backends; do
        /usr/bin/python3 - "$out" "$net" "$b" "$be" >> "$out/table.txt" <<'PY'
import json, sys
out, net, b, be = sys.argv[1:]
c = json.load(open(f'{out}/convbench-{net}-{be}.json'))
p = json.load(open(f'{out}/pytorch-{net}.json'))
ct = {r['phase']: r for r in c['tables']['fullpass']}['total']['median_ms']
print(f"{net:<8} {b:>5} {be:<8} {ct:12.1f} {p['total_ms']:12.1f} {ct / p['total_ms']:12.2f} {c['threads']:>8}")
PY
    done
done
cat "$out/table.txt"
