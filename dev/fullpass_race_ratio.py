#!/usr/bin/env python3
"""Conv phases inside the step against the plan race's own time (issue 14), from stored fullpass files.

Reads every `fullpass --per-layer --format json` file (.json or .json.gz) under the given folders (those whose layer
table has the race's times in its algorithm text, "... <taken ms><<runner-up ms>") and prints, per
phase and algorithm family (cuDNN graph engine, the own kernels, the rest), the row's time in the
step over the time the race measured for the same plan alone on the layer's buffers.
   python3 dev/fullpass_race_ratio.py docs/results/2026-11-28-plans [...]
"""
import collections
import glob
import gzip
import json
import re
import statistics
import sys

ratio = collections.defaultdict(list)
for folder in sys.argv[1:]:
    for f in glob.glob(folder + '/**/*.json', recursive=True) + glob.glob(folder + '/**/*.json.gz', recursive=True):
        try:
            t = json.load(gzip.open(f, 'rt') if f.endswith('.gz') else open(f))
        except (ValueError, UnicodeDecodeError, OSError):
            continue
        layers = t.get('tables', {}).get('layers') if isinstance(t, dict) and isinstance(t.get('tables'), dict) else None
        for r in layers or []:
            if not isinstance(r, dict) or r.get('kind') != 'Convolution':
                continue
            for ph in ('fwd', 'bwd_data', 'bwd_filter'):
                alg, ms = r.get('algo_' + ph) or '', r.get(ph + '_ms') or 0
                m = re.search(r'(\d+\.\d+)<(\d+\.\d+)', alg)
                if not m or ms <= 0 or float(m.group(1)) <= 0:
                    continue
                fam = 'cuDNN graph' if 'graph' in alg else 'own' if alg.startswith('own') or 'igemm' in alg else 'other'
                ratio[(ph, fam)].append(ms / float(m.group(1)))
print('| phase | family | rows | row / race: median | p10 | p90 |')
print('|---|---|---:|---:|---:|---:|')
for k in sorted(ratio):
    v = sorted(ratio[k])
    print('| %s | %s | %d | %.2f | %.2f | %.2f |' % (*k, len(v), statistics.median(v), v[len(v) // 10], v[9 * len(v) // 10]))
