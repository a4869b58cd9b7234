#!/usr/bin/env python3
"""Reprints this stop's tables from the stored files (no GPU): the lab's errors and times, the
forced own / library ratios per conv phase, the suites. python3 docs/results/2026-11-28-fp32x3/tables.py"""
import gzip, json, math, os, re

D = os.path.dirname(os.path.abspath(__file__))


def geo(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float('nan')


def lab_errors(call):
    """per layer and phase: 3xTF32 error (picked tile), tf32 products' error, cuDNN strict fp32's"""
    rows, name, ph = [], None, None
    for line in open(os.path.join(D, call, 'lab_check.txt')):
        m = re.match(r'check (\S+)', line)
        if m: name = m.group(1); continue
        m = re.match(r'\s+(ok  |FAIL) tile  0 (\S+)\s+err (\S+)', line)
        if m: ph = m.group(2); rows.append([name, ph, float(m.group(3)), None, None]); continue
        m = re.search(r'tf32 products on the same inputs: err (\S+),', line)
        if m and rows: rows[-1][3] = float(m.group(1))
        m = re.search(r'cuDNN strict fp32, algo \d+, on the same inputs without bias: err (\S+)\)', line)
        if m and rows: rows[-1][4] = float(m.group(1))
    return rows


def forced(path):
    t = json.load(gzip.open(path))['tables']
    out = {}
    for k in ('algo_fwd', 'algo_bwd_data', 'algo_bwd_filter'):
        out[k[5:]] = [float(m.group(1)) / float(m.group(2)) for r in t['layers']
                      for m in [re.search(r'igemm-wgmma-3xtf32 \(forced ([0-9.]+), else ([0-9.]+)\)', r.get(k) or '')] if m]
    step = [r['median_ms'] for r in t['fullpass'] if r['phase'].strip() == 'total'][0]
    return out, step


print('## Lab errors, ||own - ref|| / ||ref|| against float64 (inputs at fp32\'s 24 bits), picked tile')
for call in ('call1', 'call5'):
    rows = lab_errors(call)
    print('\n### %s (%s)\n' % (call, 'first form: one tensor-core accumulator' if call == 'call1' else 'each k-step added into fp32 sums'))
    print('| layer | phase | 3xTF32 | tf32 products | cuDNN strict fp32 |')
    print('|---|---|---:|---:|---:|')
    for n, ph, e, e2, e3 in rows:
        print('| %s | %s | %.2e | %s | %s |' % (n, ph, e, '%.2e' % e2 if e2 else '', '%.2e' % e3 if e3 else ''))
    ok = [r[2] for r in rows]
    print('\nmax 3xTF32 error %.2e over %d layer-phases' % (max(ok), len(ok)))

print('\n## Lab times: own 3xTF32 / cuDNN legacy best under CUDNN_FMA_MATH (geometric means)\n')
for call in ('call1', 'call2', 'call5'):
    for line in open(os.path.join(D, call, 'lab_time.txt')):
        if line.startswith('geomean') and 'over  0' not in line: print(call, line.strip())

print('\n## Forced: own 3xTF32 / library per conv phase (race times on fp32 NHWC storage)\n')
print('| call | network | forward | backward data | backward filter | all | phases | step ms |')
print('|---|---|---:|---:|---:|---:|---:|---:|')
for call in ('call2', 'call5', 'call7'):
    for f in sorted(os.listdir(os.path.join(D, call))):
        if not f.endswith('-forced.json.gz'): continue
        r, step = forced(os.path.join(D, call, f))
        allr = r['fwd'] + r['bwd_data'] + r['bwd_filter']
        print('| %s | %s | %.3f | %.3f | %s | **%.3f** | %d | %.2f |' % (call, f[3:-15], geo(r['fwd']), geo(r['bwd_data']),
              '%.3f' % geo(r['bwd_filter']) if r['bwd_filter'] else '-', geo(allr), len(allr), step))

print('\n## auto race against the libraries alone (ResNet-50 b64 fp32 NHWC, fullpass --update --no-data-grad)\n')
for call in ('call1', 'call2', 'call5'):
    s = {}
    for mode in ('race', 'lib'):
        t = json.load(gzip.open(os.path.join(D, call, 'fp-resnet50-64-fp32-%s.json.gz' % mode)))['tables']
        s[mode] = [r['median_ms'] for r in t['fullpass'] if r['phase'].strip() == 'total'][0]
    print('%s: race %.2f ms, libraries %.2f ms (%.3f)' % (call, s['race'], s['lib'], s['race'] / s['lib']))

for call, f in (('call4', 'summary.md'), ('call6', 'prof_summary.md')):
    print('\n## %s: own kernels (cuda backend) against cuDNN per conv layer\n' % call)
    txt = open(os.path.join(D, call, f)).read()
    m = re.search(r'### Own kernels vs cuDNN.*?\n\n(\|.*?)\n\n', txt, re.S)
    print(m.group(1) if m else '(not found)')

for call in ('call3', 'call6'):
    print('\n## %s: suite against PyTorch 2.11, same call\n' % call)
    print(open(os.path.join(D, call, 'suite_summary.md')).read().strip())
