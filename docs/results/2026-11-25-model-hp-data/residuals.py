#!/usr/bin/env python3
"""Signed and absolute held-out errors by group, from model-eval --rows JSON (eval.sh's OUTDIR/*.json).
   python3 residuals.py NETS_DIR ROWS.json [ROWS.json...]     (run from the repository root; NETS_DIR: the
   random networks, tools/gen_random_net.py --suite NETS_DIR --seeds 1-3 --max-gflop 400; layer shapes
   from `build/convbench summary`; + = predicted too slow)"""
import glob, json, os, statistics as st, subprocess, sys

CB = os.environ.get('CB', 'build/convbench')
nets = {}
for spec in ['alexnet', 'vgg16', 'googlenet', 'resnet50'] + sorted(glob.glob(sys.argv[1] + '/*.json')):
    d = json.loads(subprocess.run([CB, 'summary', spec, '--format', 'json', '--quiet'], capture_output=True, text=True).stdout)
    nets[d['network']] = {r['layer']: r for r in d['tables']['layers']}

def pct(v, q):
    v = sorted(v); k = q * (len(v) - 1); i = int(k)
    return v[i] if i + 1 >= len(v) else v[i] + (k - i) * (v[i + 1] - v[i])

def kind(r):
    L = nets[r['network']][r['layer']]
    f, t = L.get('filters') or '', L['type']
    g = {'dir': r['direction'], 'batch': r['batch'], 'type': t}
    if t == 'Convolution':
        v = [int(x) for x in f.split(']')[0].strip('[').split(',')[:4]]
        c, k = v[2], v[3]
        g['grouped'] = 'grouped' in f
        g['unaligned'] = not g['grouped'] and (c % 4 != 0 or k % 4 != 0)
        g['first'] = c <= 4
    elif t in ('Pooling', 'AvgPool', 'MaxPool', 'GlobalAvgPool'):
        g['pool'] = ('avg' if f.startswith('avg') else 'max') + (' s1' if L['stride'].startswith('1') else ' s2+')
        g['own'] = 'own' in (r.get('measured_alg') or '')
    return g

def line(name, rs):
    if not rs: return
    e = [(r['model_ms'] / r['measured_ms'] - 1) * 100 for r in rs]
    a = [abs(x) for x in e]
    print(f"| {name} | {len(rs)} | {st.median(a):.1f} / {pct(a, .9):.1f} | {st.median(e):+.1f} | "
          f"{sum(r['measured_ms'] for r in rs):.2f} | {sum(r['model_ms'] for r in rs):.2f} |")

for path in sys.argv[2:]:
    rows = json.load(open(path))['tables']['rows']
    for r in rows: r['g'] = kind(r)
    print(f'\n{path}\n\n| rows | n | median / p90 % | signed median % | measured ms | model ms |\n|---|---|---|---|---|---|')
    conv = [r for r in rows if r['g']['type'] == 'Convolution']
    for d in ('fwd', 'bwd_data', 'bwd_filter'):
        c = [r for r in conv if r['g']['dir'] == d]
        line(f'conv {d}, aligned channels', [r for r in c if not r['g']['unaligned'] and not r['g']['grouped']])
        line(f'conv {d}, unaligned channels', [r for r in c if r['g']['unaligned']])
        line(f'conv {d}, depthwise', [r for r in c if r['g']['grouped']])
        line(f'conv {d}, batch 1-4', [r for r in c if r['batch'] <= 4])
        line(f'conv {d}, batch >= 16', [r for r in c if r['batch'] >= 16])
    line('conv bwd_filter, 3-4 input channels', [r for r in conv if r['g']['dir'] == 'bwd_filter' and r['g']['first']])
    line('conv, model algorithm = cuDNN\'s', [r for r in conv if r['model_alg'] == r['measured_alg']])
    line('conv, model algorithm != cuDNN\'s', [r for r in conv if r['model_alg'] != r['measured_alg']])
    pool = [r for r in rows if 'pool' in r['g']]
    for d in ('fwd', 'bwd_data'):
        line(f'pool {d}', [r for r in pool if r['g']['dir'] == d])
        for p in ('max s1', 'max s2+', 'avg s1'):
            line(f'pool {d}, {p} (cuDNN)', [r for r in pool if r['g']['dir'] == d and r['g']['pool'] == p and not r['g']['own']])
        line(f'pool {d}, own kernels (SAME)', [r for r in pool if r['g']['dir'] == d and r['g']['own']])
    line('other kinds (FC, BN, elementwise, concat, ...)', [r for r in rows if r['g']['type'] not in ('Convolution',) and 'pool' not in r['g']])
