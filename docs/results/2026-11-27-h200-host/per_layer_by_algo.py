#!/usr/bin/env python3
"""Per-layer convolution errors of the calibrated model on the 2026-11-25 call-4 H200 data, split by
whether the model's algorithm is the one cuDNN's Find ran. CPU only; repository root, after
`python3 tools/gen_random_net.py --suite /tmp/gen-nets --seeds 1-3 --max-gflop 400` and a build.
The errors are `predict --measure`'s (the default form, every coefficient from the calibration's
samples): this splits them, it fits nothing.
Usage: python3 docs/results/2026-11-27-h200-host/per_layer_by_algo.py [GEN_NETS_DIR]"""
import collections, glob, json, os, statistics, subprocess, sys

D = 'docs/results/2026-11-25-h200-bias/call4'
gen = sys.argv[1] if len(sys.argv) > 1 else '/tmp/gen-nets'
rows = []
for prof in sorted(glob.glob(D + '/profiles/*.json')):
    base = os.path.basename(prof).replace('-fp32.json', '')
    net = f'{gen}/{base}.json' if base.startswith('gen') else {'vgg16': 'vgg16'}.get(base, base)
    batch = str(json.load(open(prof)).get('batch', ''))  # (predict refuses a profile of another batch)
    out = subprocess.run(['build/convbench', 'predict', net, '--device', D + '/h200-cal.json.gz', '--measure', prof, '--batch', batch,
                          '--precision', 'fp32', '--format', 'json', '--quiet'], capture_output=True, text=True).stdout
    try:
        d = json.loads(out)
    except ValueError:
        print(f'{base}: predict gave no JSON (left out)')
        continue
    for r in d['tables']['compare']:
        if r.get('measured_alg') and not r['measured_alg'].startswith('own') and r.get('model_ms'):
            rows.append((r['direction'], r['measured_alg'].split(' (')[0] == r.get('model_alg'),
                         abs(r['model_ms'] - r['measured_ms']) / r['measured_ms'] * 100))
groups = collections.defaultdict(list)
for direction, same, e in rows:
    groups[(direction, same)].append(e)
    groups[('all', same)].append(e)
print('direction   model algorithm = measured   rows   median %   p90 %')
for (direction, same), v in sorted(groups.items()):
    v.sort()
    print(f'{direction:11s} {"yes" if same else "no":26s} {len(v):5d}   {statistics.median(v):7.1f} {v[int(0.9 * len(v))]:7.1f}')
