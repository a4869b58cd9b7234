#!/usr/bin/env python3
"""The tables of "After the GPU re-run" (docs/results/2026-11-25-model.md): the re-run's model-eval
outputs against the 717ada2 data's, both evaluated by the same build (scripts/model-cross.sh on each
pair of archives, --rows JSON), and the 717ada2 binary's pooled figures read from before/*.txt.
    compare.py BEFORE_TXT_DIR OLD_DATA_DIR RERUN_DIR
BEFORE_TXT_DIR: ../before (717ada2 code, 717ada2 data); OLD_DATA_DIR: model-cross.sh output of this
build on ../model-h*.tgz; RERUN_DIR: model-cross.sh output of this build on rerun/model-h*.tgz."""
import json
import re
import statistics
import sys

before, old, new = sys.argv[1:4]
RUNS = [("H200", "cross-h200-on-h200"), ("H100", "cross-h100-on-h100"),
        ("H200 -> H100", "cross-h200-on-h100"), ("H100 -> H200", "cross-h100-on-h200")]


def load(d, name):
    return json.load(open(f"{d}/{name}.json"))["tables"]


def short(net):
    return net.split(" (")[0] if not net.startswith("gen ") else net.split(",")[0] + ")"


def p90(v):
    v = sorted(v)
    return v[int(0.9 * (len(v) - 1))]


def txt_pooled(path):
    """direction -> (median, p90) from model-eval's text 'pooled' table, and the steps' median."""
    out, steps, on = {}, None, False
    for line in open(path):
        if line.startswith("pooled"):
            on = True
            continue
        if on and not line.strip():
            on = False
        if on and not line.startswith("direction"):
            m = re.match(r"(.+?)\s{2,}([\d,]+)\s+([\d.]+)\s+([\d.]+)", line)
            if m:
                out[m.group(1).strip()] = (float(m.group(3)), float(m.group(4)))
        m = re.search(r"whole steps \(\d+\): median error ([\d.]+)%", line)
        if m:
            steps = float(m.group(1))
    return out, steps


print("\n## pooled held-out median / p90 |error| %: 717ada2 code on 717ada2 data | this build on 717ada2 data | this build on the re-run\n")
print("| run | kinds | direction | rows | 717ada2 | 717ada2 data, this build | re-run |\n|---|---|---|---|---|---|---|")
for label, name in RUNS:
    for k in ("conv", "all"):
        b, _ = txt_pooled(f"{before}/{name}-{k}.txt")
        o, n = load(old, f"{name}-{k}")["pooled"], load(new, f"{name}-{k}")["pooled"]
        for x, y in zip(o, n):
            if k == "all" and x["direction"] != "all":
                continue
            bb = b.get(x["direction"])
            print(f"| {label} | {k} | {x['direction']} | {y['rows']} | {bb[0]:.1f} / {bb[1]:.1f} | "
                  f"{x['heldout_median_pct']:.1f} / {x['heldout_p90_pct']:.1f} | {y['heldout_median_pct']:.1f} / {y['heldout_p90_pct']:.1f} |")

print("\n## per network, conv, held-out median / p90 |error| %: 717ada2 data -> re-run (this build on both)\n")
print("| network | batch | rows | " + " | ".join(l for l, _ in RUNS) + " |\n|---|---|---|" + "---|" * len(RUNS))
tabs = [(load(old, f"{n}-conv")["networks"], load(new, f"{n}-conv")["networks"]) for _, n in RUNS]
for i, x in enumerate(tabs[0][1]):
    cells = []
    for o, n in tabs:
        cells.append(f"{o[i]['heldout_median_pct']:.1f} / {o[i]['heldout_p90_pct']:.1f} -> "
                     f"**{n[i]['heldout_median_pct']:.1f} / {n[i]['heldout_p90_pct']:.1f}**")
    print(f"| {short(x['network'])} | {x['batch']} | {x['rows']} | " + " | ".join(cells) + " |")

print("\n## whole steps (fullpass --update), conv forms: measured ms (717ada2 run, re-run), re-run's |error| %\n")
print("| network | batch | H200 measured | H100 measured | H200 | H100 | H200 -> H100 | H100 -> H200 |\n|---|---|---|---|---|---|---|---|")
st = {name: (load(old, f"{name}-conv")["steps"], load(new, f"{name}-conv")["steps"]) for _, name in RUNS}
for i, s in enumerate(st["cross-h200-on-h200"][1]):
    meas = []
    for g in ("cross-h200-on-h200", "cross-h100-on-h100"):
        o, n = st[g][0][i], st[g][1][i]
        meas.append(f"{o['step_ms']:.3f}, {n['step_ms']:.3f} ({100 * (n['step_ms'] / o['step_ms'] - 1):+.1f}%)")
    errs = [f"{st[name][1][i]['step_err_pct']:.1f}" for _, name in RUNS]
    print(f"| {short(s['network'])} | {s['batch']} | " + " | ".join(meas) + " | " + " | ".join(errs) + " |")
print("\n| run | 717ada2 code: median | 717ada2 data, this build: median, within 5% / 10% | re-run |\n|---|---|---|---|")
for label, name in RUNS:
    _, bs = txt_pooled(f"{before}/{name}-conv.txt")
    cols = []
    for d in (old, new):
        e = [s["step_err_pct"] for s in load(d, f"{name}-conv")["steps"]]
        cols.append(f"{statistics.median(e):.1f}%, {sum(v <= 5 for v in e)} / {sum(v <= 10 for v in e)} of {len(e)}")
    print(f"| {label} | {bs:.1f}% | " + " | ".join(cols) + " |")

print("\n## run to run: the same layers and steps measured in the 717ada2 run and in the re-run (same GPU kind)\n")
print("| GPU | rows | median | p90 | < 0.1 ms median | >= 0.1 ms median | same algorithm | steps, batch >= 16 | steps, batch <= 4 |\n|---|---|---|---|---|---|---|---|---|")
for g, name in (("H200", "cross-h200-on-h200"), ("H100", "cross-h100-on-h100")):
    o, n = load(old, f"{name}-conv"), load(new, f"{name}-conv")
    om = {(r["network"], r["layer"], r["direction"]): r for r in o["rows"]}
    d, small, big, same = [], [], [], 0
    for r in n["rows"]:
        x = om.get((r["network"], r["layer"], r["direction"]))
        if not x:
            continue
        e = 100 * abs(r["measured_ms"] / x["measured_ms"] - 1)
        d.append(e)
        (small if x["measured_ms"] < 0.1 else big).append(e)
        same += x["measured_alg"] == r["measured_alg"]
    sd = [(s2["batch"], 100 * abs(s2["step_ms"] / s1["step_ms"] - 1)) for s1, s2 in zip(o["steps"], n["steps"])]
    lo = [e for b, e in sd if b <= 4]
    hi = [e for b, e in sd if b >= 16]
    print(f"| {g} | {len(d)} | {statistics.median(d):.1f} | {p90(d):.1f} | {statistics.median(small):.1f} ({len(small)}) | "
          f"{statistics.median(big):.1f} ({len(big)}) | {same} | median {statistics.median(hi):.1f}, max {max(hi):.1f} ({len(hi)}) | "
          f"median {statistics.median(lo):.1f}, max {max(lo):.1f} ({len(lo)}) |")
