#!/usr/bin/env python3
"""Markdown tables side by side from two sets of `convbench model-eval --rows --format json`
outputs (scripts/model-cross.sh writes them): per network, pooled per direction, whole steps.
    tables.py BEFORE_DIR AFTER_DIR NAME       # NAME: cross-h200-on-h200-conv, ..."""
import json
import statistics
import sys

before, after, name = sys.argv[1:4]
b = json.load(open(f"{before}/{name}.json"))["tables"]
a = json.load(open(f"{after}/{name}.json"))["tables"]


def short(net):
    return net.split(" (")[0] if not net.startswith("gen ") else net.split(",")[0] + ")"


print(f"\n{name}: per network, held-out median / p90 |error| %\n")
print("| network | batch | rows | before | after | form chosen (after) |\n|---|---|---|---|---|---|")
for x, y in zip(b["networks"], a["networks"]):
    print(f"| {short(x['network'])} | {x['batch']} | {x['rows']} | {x['heldout_median_pct']:.1f} / {x['heldout_p90_pct']:.1f} | "
          f"{y['heldout_median_pct']:.1f} / {y['heldout_p90_pct']:.1f} | {y['form_chosen']} |")
print(f"\n{name}: pooled, held-out median / p90 |error| %\n")
print("| direction | rows | before | after |\n|---|---|---|---|")
for x, y in zip(b["pooled"], a["pooled"]):
    print(f"| {x['direction']} | {x['rows']} | {x['heldout_median_pct']:.1f} / {x['heldout_p90_pct']:.1f} | "
          f"{y['heldout_median_pct']:.1f} / {y['heldout_p90_pct']:.1f} |")
print(f"\n{name}: whole steps (fullpass --update), ms and |error| %\n")
print("| network | batch | measured | before | err | after | err |\n|---|---|---|---|---|---|---|")
for x, y in zip(b["steps"], a["steps"]):
    print(f"| {short(x['network'])} | {x['batch']} | {x['step_ms']:.3f} | {x['step_model_ms']:.3f} | {x['step_err_pct']:.1f} | "
          f"{y['step_model_ms']:.3f} | {y['step_err_pct']:.1f} |")
eb = sorted(x["step_err_pct"] for x in b["steps"])
ea = sorted(y["step_err_pct"] for y in a["steps"])
within = lambda e: sum(v <= 5 for v in e)
print(f"\nsteps: median {statistics.median(eb):.1f}% -> {statistics.median(ea):.1f}%; within 5%: {within(eb)} -> {within(ea)} of {len(ea)}")
