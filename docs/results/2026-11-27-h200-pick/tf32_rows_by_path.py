#!/usr/bin/env python3
"""The tf32 held-out rows of call 4 (model-gpu.sh PRECS=tf32) split by what cuDNN ran: a graph-API
engine (the backend's race in tf32, which the calibration did not measure) or a legacy algorithm.
CPU only, from the kept files and a build (model-eval --rows). Repository root:
  python3 docs/results/2026-11-27-h200-pick/tf32_rows_by_path.py [CONVBENCH]"""
import collections, glob, json, os, statistics, subprocess, sys

d = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'call4_model_tf32')
cb = sys.argv[1] if len(sys.argv) > 1 else 'build/convbench'
nets = ','.join(sorted(glob.glob(os.path.join(d, 'nets', '*.json'))))
out = subprocess.run([cb, 'model-eval', '--device', os.path.join(d, 'h200-cal.json.gz'), '--nets', nets, '--precision', 'tf32',
                      '--kinds', 'conv', '--rows', '--format', 'json', '--quiet'] + sorted(glob.glob(os.path.join(d, 'profiles', '*.json'))),
                     capture_output=True, text=True, check=True).stdout
rows = json.loads(out)['tables']['rows']
groups, signed = collections.defaultdict(list), collections.defaultdict(list)
for r in rows:
    path = 'graph engine' if 'graph' in (r.get('measured_alg') or '') else 'legacy algorithm'
    for key in ((r['direction'], path), ('all', path), ('all', 'any')):
        groups[key].append(r['heldout_err_pct'])
        signed[key].append((r['model_ms'] - r['measured_ms']) / r['measured_ms'] * 100)  # (+: predicted too slow)
print('| direction | cuDNN ran | rows | held-out median % | p90 % | signed median % |')
print('|---|---|---:|---:|---:|---:|')
for (dr, p), v in sorted(groups.items()):
    v = sorted(v)
    print(f'| {dr} | {p} | {len(v)} | {statistics.median(v):.1f} | {v[int(0.9 * len(v))]:.1f} | {statistics.median(signed[(dr, p)]):+.1f} |')
