#!/usr/bin/env python3
# The tables of docs/results/2026-11-28-wgtma.md from this folder's files, with no GPU:
#   python3 docs/results/2026-11-28-wgtma/tables.py
# 1. per call and network, own wgmma / library per conv phase (the forced runs' race times, geometric
#    means); 2. the lab's picked TMA tile / the cp.async pick per phase; 3. the suite (call 6, convbench
#    auto) beside the PyTorch peer (call 5, same machine, warm between the two calls).
import csv, glob, gzip, json, math, os, re, collections
here = os.path.dirname(os.path.abspath(__file__))
gm = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float('nan')
print('| call | run | forward | backward data | backward filter | all | phases | step ms |')
print('|---|---|---:|---:|---:|---:|---:|---:|')
for f in sorted(glob.glob(os.path.join(here, 'call*', 'fp-*forced.json.gz'))):
    t = json.load(gzip.open(f))['tables']
    step = [r['median_ms'] for r in t['fullpass'] if r['phase'].strip() == 'total'][0]
    per = {}
    for k in ('algo_fwd', 'algo_bwd_data', 'algo_bwd_filter'):
        per[k] = [float(m.group(1)) / float(m.group(2)) for r in t['layers']
                  for m in [re.search(r'igemm-wgmma-bf16 \(forced ([0-9.]+), else ([0-9.]+)\)', r.get(k) or '')] if m]
    allr = sum(per.values(), [])
    print('| %s | %s | %.3f | %.3f | %.3f | **%.3f** | %d | %.3f |' % (os.path.basename(os.path.dirname(f)), os.path.basename(f)[3:-8],
          gm(per['algo_fwd']), gm(per['algo_bwd_data']), gm(per['algo_bwd_filter']), gm(allr), len(allr), step))
print()
print('| call | phase | layers | TMA picked / cp.async picked | TMA picked / best TMA tile |')
print('|---|---|---:|---:|---:|')
for f in sorted(glob.glob(os.path.join(here, 'call*', 'lab.csv'))):
    t = collections.defaultdict(dict)
    for r in csv.DictReader(open(f)): t[(r['layer'], r['phase'])][r['version']] = float(r['ms'])
    for ph in ('fwd', 'bwd-data', 'bwd-filt'):
        a = [v['wgmma-t0'] / v['wgmma-cpasync'] for (l, p), v in t.items() if p == ph and 'wgmma-cpasync' in v]
        b = [v['wgmma-t0'] / min(v[k] for k in v if re.fullmatch(r'wgmma-t([6-9]|10)', k)) for (l, p), v in t.items()
             if p == ph and 'wgmma-cpasync' in v and any(re.fullmatch(r'wgmma-t([6-9]|10)', k) for k in v)]
        if a: print('| %s | %s | %d | %.3f | %.3f |' % (os.path.basename(os.path.dirname(f)), ph, len(a), gm(a), gm(b)))
print()
peer = {(r['net'], r['batch'], r['compiled']): r for r in json.load(open(os.path.join(here, 'call5', 'suitepeer_bf16_nhwc.json')))}
print('| cell (bf16 NHWC, --no-data-grad --no-criterion) | convbench auto ms | eager ms | torch.compile ms | auto / compiled | auto / eager | peak MiB auto planned (measured) / eager / compiled allocated |')
print('|---|---:|---:|---:|---:|---:|---|')
for net, pn, b in (('vgg-a', 'vgg_a', 64), ('googlenet', 'googlenet', 128), ('resnet50', 'resnet50', 256)):
    d = json.load(gzip.open(os.path.join(here, 'call6', 'suite_%s_%d.json.gz' % (net, b))))
    step = [r['median_ms'] for r in d['tables']['fullpass'] if r['phase'].strip() == 'total'][0]
    plan, meas = d.get('memory_mb'), d.get('device_peak_mb')
    e, c = peer[(pn, b, False)], peer[(pn, b, True)]
    print('| %s b%d%s | %.3f | %.3f | %.3f | %.2f | %.2f | %.0f (%s) / %.0f / %.0f |' % (net, b, ' +update' if e['update'] else '', step, e['total'],
          c['total'], step / c['total'], step / e['total'], plan, '%.0f' % meas if meas else '?', e['peak_mib'], c['peak_mib']))
