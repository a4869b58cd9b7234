#!/usr/bin/env python3
"""The tf32 held-out rows of call 4 (model-gpu.sh PRECS=tf32) split by what cuDNN ran: a graph-API
engine (the backend's race in tf32, which the calibration did not measure) or a legacy algorithm.
CPU only, from the kept tarball. Usage: python3 docs/results/2026-11-27-h200-pick/tf32_rows_by_path.py"""
import collections, io, json, os, statistics, tarfile

here = os.path.dirname(os.path.abspath(__file__))
with tarfile.open(os.path.join(here, 'call4_model_tf32', 'model-h200.tgz')) as t:
    rows = json.load(io.TextIOWrapper(t.extractfile('cb-model-h200/eval_tf32_conv.json')))['tables']['rows']
groups, signed = collections.defaultdict(list), collections.defaultdict(list)
for r in rows:
    path = 'graph engine' if 'graph' in (r.get('measured_alg') or '') else 'legacy algorithm'
    for key in ((r['direction'], path), ('all', path), ('all', 'any')):
        groups[key].append(r['heldout_err_pct'])
        signed[key].append((r['model_ms'] - r['measured_ms']) / r['measured_ms'] * 100)  # (+: predicted too slow)
print('| direction | cuDNN ran | rows | held-out median % | p90 % | signed median % |')
print('|---|---|---:|---:|---:|---:|')
for (d, p), v in sorted(groups.items()):
    v = sorted(v)
    print(f'| {d} | {p} | {len(v)} | {statistics.median(v):.1f} | {v[int(0.9 * len(v))]:.1f} | {statistics.median(signed[(d, p)]):+.1f} |')
