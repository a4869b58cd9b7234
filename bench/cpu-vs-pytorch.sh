#!/usr/bin/env bash
# Side by side on this CPU, in one run: convbench fullpass --update against PyTorch's CPU
# training step for AlexNet b16 and VGG-16 b4. Alternates the two so that load from elsewhere
# touches both. Writes JSON under OUTDIR and prints a table with the ratio last.
# BACKENDS="cpu onednn cpu-auto" times each convbench backend named (default: cpu), one row each;
# OUTDIR/table.md repeats it by phase, with PyTorch / convbench and, where onednn ran, / onednn.
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
/usr/bin/python3 - "$out" "$backends" > "$out/table.md" <<'PY'
import json, sys
out, bes = sys.argv[1], sys.argv[2].split()
print("| net | batch | backend | fwd | bwd (grad-input + grad-weight) | update | total | PyTorch total | PyTorch / convbench | / onednn | loss |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for net, b in (("alexnet", 16), ("vgg16", 4)):
    p = json.load(open(f"{out}/pytorch-{net}.json"))
    t = {}
    for be in bes:
        c = json.load(open(f"{out}/convbench-{net}-{be}.json"))
        t[be] = ({r["phase"].strip(): r["median_ms"] for r in c["tables"]["fullpass"]}, c.get("loss"))
    for be in bes:
        m, loss = t[be]
        vs = f"{m['total'] / t['onednn'][0]['total']:.2f}" if "onednn" in t else ""
        print(f"| {net} | {b} | {be} | {m['net forward']:.1f} | {m['net backward']:.1f} ({m['grad-input']:.1f} + {m['grad-weight']:.1f}) "
              f"| {m['update']:.1f} | {m['total']:.1f} | {p['total_ms']:.1f} | {p['total_ms'] / m['total']:.2f} | {vs} | {loss:.7f} |")
PY
cat "$out/table.txt"
