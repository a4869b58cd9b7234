#!/usr/bin/env python3
"""Prints the step time and the per-layer-kind breakdown of fullpass JSON results (convbench
fullpass --per-layer --format json): one block per file, the parts sorted by time.
Usage: python3 scripts/fp-table.py RESULT.json...  (a short table for the end of a device call)"""
import json, sys

for f in sys.argv[1:]:
    try:
        d = json.load(open(f))
    except Exception as e:
        print(f"{f}: unreadable ({e})")
        continue
    t = d.get("tables", {})
    total = next((r for r in t.get("fullpass", []) if r.get("phase", "").strip() == "total"), None)
    step = total["median_ms"] if total else float("nan")
    print(f"## {d.get('network')} b{d.get('batch')} {d.get('precision')} {d.get('layout')} {d.get('backend')}: "
          f"{step:.2f} ms/step, {d.get('images_per_s', 0):.0f} img/s, peak {d.get('device_peak_mb', 0):.0f} MiB")
    for r in sorted(t.get("breakdown", []), key=lambda r: -(r["total_ms"] if isinstance(r["total_ms"], (int, float)) else 0)):
        fw, bw = r.get("forward_ms"), r.get("backward_ms")
        fmt = lambda v: f"{v:8.2f}" if isinstance(v, (int, float)) else " " * 8
        print(f"  {r['part'][:38]:38s} {fmt(fw)} {fmt(bw)} {fmt(r['total_ms'])} {r['share_pct']:6.1f}%")
    # the slowest layers, with their algorithms (--per-layer's table)
    L = t.get("layers", [])
    tot = lambda r: sum(r.get(k) or 0 for k in ("fwd_ms", "fwd_epilogue_ms", "bwd_data_ms", "bwd_epilogue_ms", "bwd_filter_ms"))
    for r in sorted(L, key=lambda r: -tot(r))[: int(__import__("os").environ.get("TOP", "6"))]:
        print(f"    {r['layer'][:24]:24s} {r['kind'][:12]:12s} {tot(r):7.3f} ms  fwd {r.get('fwd_ms') or 0:.3f} [{r.get('algo_fwd', '')[:28]}]"
              f" dgrad {r.get('bwd_data_ms') or 0:.3f} [{r.get('algo_bwd_data', '')[:28]}] wgrad {r.get('bwd_filter_ms') or 0:.3f} [{r.get('algo_bwd_filter', '')[:28]}]")
