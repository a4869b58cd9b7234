#!/usr/bin/env python3
"""Residuals of `convbench model-eval --rows --format json` outputs, by measured time, direction,
the algorithm cuDNN ran and the padded copy: rows, held-out median and p90 |error| (%), and the
median signed error (predicted / measured - 1, %: + over-predicts).
    residuals.py ROWS.json [ROWS.json ...]"""
import json
import statistics
import sys


def line(name, rows):
    if not rows:
        return
    e = sorted(r["heldout_err_pct"] for r in rows)
    s = statistics.median(100 * (r["model_ms"] / r["measured_ms"] - 1) for r in rows)
    p90 = e[int(0.9 * (len(e) - 1))]
    print(f"| {name} | {len(rows)} | {statistics.median(e):.1f} | {p90:.1f} | {s:+.1f} |")


for path in sys.argv[1:]:
    rows = json.load(open(path))["tables"]["rows"]
    print(f"\n{path}\n\n| rows | n | median % | p90 % | signed median % |\n|---|---|---|---|---|")
    for lo, hi in [(0, 0.02), (0.02, 0.05), (0.05, 0.1), (0.1, 0.3), (0.3, 1), (1, 1e9)]:
        line(f"measured {lo}-{hi if hi < 1e9 else 'inf'} ms", [r for r in rows if lo <= r["measured_ms"] < hi])
    for d in ("fwd", "bwd_data", "bwd_filter"):
        line(f"{d}, < 0.1 ms", [r for r in rows if r["direction"] == d and r["measured_ms"] < 0.1])
        line(f"{d}, >= 0.1 ms", [r for r in rows if r["direction"] == d and r["measured_ms"] >= 0.1])
    line("batch 1-4", [r for r in rows if r["batch"] <= 4])
    line("batch >= 16", [r for r in rows if r["batch"] >= 16])
    line("SAME copy (padded input)", [r for r in rows if "SAME copy" in r["measured_alg"]])
    line("depthwise layers", [r for r in rows if "depthwise" in r["layer"]])
    line("model's algorithm = cuDNN's", [r for r in rows if r["model_alg"] == r["measured_alg"]])
    line("model's algorithm != cuDNN's", [r for r in rows if r["model_alg"] != r["measured_alg"]])
