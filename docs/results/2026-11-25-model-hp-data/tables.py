#!/usr/bin/env python3
"""The tables of docs/results/2026-11-25-model-hp.md from eval.sh's OUTDIR (model-eval text and --rows JSON).
   python3 tables.py OUTDIR [NAME...]    (layer shapes from `convbench summary`-free parsing: none needed)"""
import json, os, re, statistics as st, sys

def pooled(path):
    out, on = {}, False
    for line in open(path):
        if line.startswith('pooled'): on = True; continue
        if on and not line.strip(): break
        f = line.split()
        if on and f and f[0] in ('fwd', 'bwd_data', 'bwd_filter', 'all') and f[1] != 'no':
            out[f[0]] = (float(f[2]), float(f[3]))
    m = re.search(r'whole steps \(16\): median error ([0-9.]+)%, p90 ([0-9.]+)%', open(path).read())
    return out, (float(m.group(1)), float(m.group(2))) if m else None

def pct(v, q):
    v = sorted(v); k = q * (len(v) - 1); i = int(k)
    return v[i] if i + 1 >= len(v) else v[i] + (k - i) * (v[i + 1] - v[i])

def steps(path):
    rows = json.load(open(path))['tables']['steps']
    return {r['network']: (r['step_ms'], r['step_model_ms'], r['step_err_pct'], r['batch']) for r in rows}

O = sys.argv[1]
names = sys.argv[2:] or sorted({f.rsplit('-', 1)[0] for f in os.listdir(O) if f.endswith('.txt')})
print('| run | kinds | fwd | bwd_data | bwd_filter | all | steps median / p90 | steps within 5% / 10% |')
print('|---|---|---|---|---|---|---|---|')
for n in names:
    for k in ('conv', 'all'):
        p, s = pooled(f'{O}/{n}-{k}.txt')
        st_ = steps(f'{O}/{n}-{k}.json')
        w5 = sum(1 for v in st_.values() if v[2] <= 5); w10 = sum(1 for v in st_.values() if v[2] <= 10)
        cells = ' | '.join(f'{p[d][0]:.1f} / {p[d][1]:.1f}' for d in ('fwd', 'bwd_data', 'bwd_filter', 'all'))
        print(f'| {n} | {k} | {cells} | {s[0]:.1f} / {s[1]:.1f} | {w5} / {w10} of {len(st_)} |')
print()
for n in names:
    st_ = steps(f'{O}/{n}-conv.json')
    print(f'steps {n}: ' + ', '.join(f'{k.split(" (")[0]} b{v[3]} {v[0]:.3f}/{v[1]:.3f} ({v[2]:.1f}%)' for k, v in st_.items()))
