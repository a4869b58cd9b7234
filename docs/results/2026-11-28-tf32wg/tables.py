#!/usr/bin/env python3
"""Reprints the tables of docs/results/2026-11-28-tf32wg.md from the files of this folder (no GPU):
the own wgmma kernels' tf32 form against the libraries, per call."""
import collections, csv, glob, gzip, json, math, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
TREES = {'call1': 'fa2b4a3', 'call3': 'ddb7c23', 'call4': '43720d0', 'call5': '5c5aec1', 'call6': '1661f42'}


def load(path):
    """a result file, plain or gzipped (the large ones are stored as .json.gz)"""
    if os.path.exists(path + '.gz'): path += '.gz'
    return json.load(gzip.open(path, 'rt') if path.endswith('.gz') else open(path))


def gm(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float('nan')


def f3(x):
    return '-' if x != x else '%.3f' % x


def step_ms(fp):
    return [r['median_ms'] for r in fp['tables']['fullpass'] if r['phase'].strip() == 'total'][0]


print('## Forced: own wgmma / library, race times per conv phase (fullpass --backend auto --layout nhwc, CONVBENCH_AUTO_WGMMA=own)\n')
print('| call | tree | cell | step ms | forward | backward data | backward filter | all | phases taken |')
print('|---|---|---|---:|---:|---:|---:|---:|---|')
for call in sorted(TREES):
    for f in sorted([f[:-3] if f.endswith('.gz') else f for f in glob.glob(os.path.join(HERE, call, 'fp-*-forced.json*'))]):
        fp = load(f)
        rows, per, allr, conv = fp['tables']['layers'], {}, [], 0
        for k in ('algo_fwd', 'algo_bwd_data', 'algo_bwd_filter'):
            rat = []
            for r in rows:
                a = r.get(k) or ''
                m = re.search(r'igemm-wgmma-(?:bf16|tf32) \(forced ([0-9.]+), else ([0-9.]+)\)', a)
                if m: rat.append(float(m.group(1)) / float(m.group(2)))
                conv += r.get('kind') == 'Convolution' and bool(a)
            per[k] = gm(rat)
            allr += rat
        cell = os.path.basename(f)[3:-12]
        print('| %s | %s | %s | %.3f | %s | %s | %s | **%.3f** | %d of %d |' % (call, TREES[call], cell, step_ms(fp), f3(per['algo_fwd']),
              f3(per['algo_bwd_data']), f3(per['algo_bwd_filter']), gm(allr), len(allr), conv))

print('\n## auto as it is (race) against the libraries alone (lib: CONVBENCH_AUTO_WGMMA=cudnn), tf32 NHWC, ms a step\n')
print('| call | tree | cell | race | lib | own wgmma phases in the race |')
print('|---|---|---|---:|---:|---:|')
for call in sorted(TREES):
    for f in sorted([f[:-3] if f.endswith('.gz') else f for f in glob.glob(os.path.join(HERE, call, 'fp-*-race.json*'))]):
        fp = load(f)
        lib = f.replace('-race.json', '-lib.json')
        wg = sum(1 for r in fp['tables']['layers'] for k, v in r.items() if k.startswith('algo') and v and 'wgmma' in str(v))
        print('| %s | %s | %s | %.3f | %s | %d |' % (call, TREES[call], os.path.basename(f)[3:-10], step_ms(fp),
              '%.3f' % step_ms(load(lib)) if os.path.exists(lib) or os.path.exists(lib + '.gz') else '-', wg))

print('\n## The lab (dev/cuda/wgmma_tf32_lab.cu): own tf32 (picked tile) / cuDNN legacy best (cudnnFind, fp32 NHWC, tensor-op math), geometric means\n')
print('| call | tree | forward | backward data | backward filter | layers |')
print('|---|---|---:|---:|---:|---:|')
for call in ('call4', 'call5', 'call6'):
    t = collections.defaultdict(dict)
    for r in csv.DictReader(open(os.path.join(HERE, call, 'wgtf32', 'lab.csv'))):
        t[(r['layer'], r['phase'])][r['version']] = float(r['ms'])
    g = {}
    for ph in ('fwd', 'bwd-data', 'bwd-filt'):
        rat = [v['wgmma-tf32-t0'] / [x for k, x in v.items() if k.startswith('cudnn')][0] for (l, p), v in t.items()
               if p == ph and 'wgmma-tf32-t0' in v and any(k.startswith('cudnn') for k in v)]
        g[ph] = (gm(rat), len(rat))
    print('| %s | %s | %s | %s | %s | %d |' % (call, TREES[call], *['%.3f' % g[p][0] if g[p][1] else '-' for p in ('fwd', 'bwd-data', 'bwd-filt')],
          max(n for _, n in g.values())))
t = collections.defaultdict(dict)
for r in csv.DictReader(open(os.path.join(HERE, 'call6', 'wgtf32', 'lab.csv'))):
    t[r['layer']][r['version']] = (float(r['ms']), float(r['tflops']))
rat = [v['wgmma-tf32-t0'][0] / v['wgmma-tf32-s2-2'][0] for v in t.values() if 'wgmma-tf32-s2-2' in v]
print('\ncall6: backward filter with a K-major ring of 3 / of 2: %.3f over %d layers' % (gm(rat), len(rat)))
print('call6: backward filter TF/s (picked) on VGG-A: ' + ', '.join('%s %.0f' % (l[5:], v['wgmma-tf32-t0'][1]) for l, v in t.items() if l.startswith('vgga')))

print('\n## The suite (call 2, tree fa2b4a3), scripts/suite-summary.py\n')
print(open(os.path.join(HERE, 'call2-suite', 'suite_summary.md')).read())
