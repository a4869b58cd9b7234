#!/usr/bin/env python3
"""Tables from a GPU run's JSON results (scripts/gpu-bench.sh): whole networks against the PyTorch
peer, L1-L5, and own-vs-cuDNN per conv layer and direction with geometric means.
Usage: scripts/gpu-summary.py RES_DIR [OUT.md]   (prints the markdown; writes it to OUT.md too)"""
import glob, json, math, os, sys

res = sys.argv[1]
out_path = sys.argv[2] if len(sys.argv) > 2 else None
L = []


def load(path):
    try:
        return json.load(open(path))
    except Exception:
        return None


def gmean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float('nan')


# the peer's results: every peer*.json (one per mode and layout run), else the result lines its
# .out logs kept (a run cut short)
peer = []
for f in sorted(glob.glob(os.path.join(res, 'peer*.json'))):
    peer += load(f) or []
if not peer:
    for f in sorted(glob.glob(os.path.join(res, 'peer*.out'))):
        for line in open(f):
            if line.startswith('{'):
                try: peer.append(json.loads(line))
                except ValueError: pass
PEER_NET = {'alexnet': 'alexnet', 'overfeat-fast': 'overfeat', 'vgg-a': 'vgg_a', 'googlenet': 'googlenet', 'vgg16': 'vgg16'}


def peer_row(net, mode, layout):
    for r in peer:
        if r.get('net') == PEER_NET.get(net) and r.get('mode') == mode and r.get('layout') == layout:
            return r
    return None


# ---- whole networks (fullpass_NET_BACKEND_PREC[_LAYOUT].json; the layout is read from the JSON)
fp = {}
for f in glob.glob(os.path.join(res, 'fullpass_*.json')):
    d = load(f)
    if not d: continue
    net, be, prec = os.path.basename(f)[:-5].split('_')[1:4]
    lay = (d.get('layout') or 'nchw').upper()
    ph = {r['phase'].strip(): r['median_ms'] for r in d['tables']['fullpass']}
    fp[(net, be, prec, lay)] = (ph.get('net forward', 0), ph.get('net backward', 0) + ph.get('update', 0),
                                ph.get('total', 0), d.get('batch'))
if fp:
    L.append('### Whole networks: median ms per step (forward + backward [+ update]), convbench vs PyTorch 2.11 + cuDNN '
             'in the same layout\n')
    L.append('| network | batch | precision | layout | auto | cudnn | cuda (own) | PyTorch | auto / PyTorch |')
    L.append('|---|---|---|---|---|---|---|---|---|')
    for net in PEER_NET:
        for prec in ('fp32', 'tf32', 'bf16'):
            for lay in ('NCHW', 'NHWC'):
                row = [fp.get((net, be, prec, lay)) for be in ('auto', 'cudnn', 'cuda')]
                if not any(row): continue
                batch = next(r[3] for r in row if r)
                pr = peer_row(net, prec, lay)
                cell = lambda r: f'{r[2]:.2f}' if r else '-'
                a = row[0][2] if row[0] else None
                L.append(f'| {net} | {batch} | {prec} | {lay} | {cell(row[0])} | {cell(row[1])} | {cell(row[2])} | '
                         f'{pr["total"]:.2f} | {a / pr["total"]:.2f} |' if pr and a else
                         f'| {net} | {batch} | {prec} | {lay} | {cell(row[0])} | {cell(row[1])} | {cell(row[2])} | '
                         f'{pr["total"]:.2f} | - |' if pr else
                         f'| {net} | {batch} | {prec} | {lay} | {cell(row[0])} | {cell(row[1])} | {cell(row[2])} | - | - |')
    L.append('')

# ---- L1-L5
for f in sorted(glob.glob(os.path.join(res, 'layers_*.json'))):
    d = load(f)
    if not d: continue
    prec = os.path.basename(f)[7:-5]
    L.append(f'### L1-L5, batch 128, {prec}: ms (forward / backward-data / backward-filter)\n')
    L.append('| layer | own (cuda) | cudnn | best | own/cudnn fwd | PyTorch NCHW fwd / bwd | PyTorch NHWC fwd / bwd |')
    L.append('|---|---|---|---|---|---|---|')
    rows = d['tables']['layers']
    for name in ('L1', 'L2', 'L3', 'L4', 'L5'):
        by = {r['backend']: r for r in rows if r['layer'] == name}
        if not by: continue
        c = lambda r: f"{r['fwd_ms']:.3f} / {r['bwd_data_ms']:.3f} / {r['bwd_filter_ms']:.3f}" if r else '-'
        own, dnn = by.get('cuda'), by.get('cudnn')
        ratio = f"{own['fwd_ms'] / dnn['fwd_ms']:.2f}" if own and dnn and dnn['fwd_ms'] > 0 else '-'
        pl = lambda lay: next((f"{r['fwd']:.3f} / {r['bwd']:.3f}" for r in peer if r.get('layer') == name and r.get('mode') == prec
                               and r.get('layout') == lay), '-')
        L.append(f'| {name} | {c(own)} | {c(dnn)} | {c(by.get("best"))} | {ratio} | {pl("NCHW")} | {pl("NHWC")} |')
    L.append('')

# ---- per conv layer: own / cuDNN
ratios = {}
worst = []
for f in sorted(glob.glob(os.path.join(res, 'profile_*.json'))):
    d = load(f)
    if not d: continue
    net, prec = os.path.basename(f)[8:-5].rsplit('_', 1)
    for tab in ('forward', 'bwd_data', 'bwd_filter'):
        for r in d['tables'].get(tab, []):
            alg = r.get('cuda_alg') or ''
            if r['layer'] == 'Sum' or not alg.startswith(('igemm', 'direct', 'unroll', 'wino', 'fft')) and 'own' not in alg:
                continue
            if 'SGEMM' in alg or 'cublas' in (r.get('cudnn_alg') or ''): continue  # fully connected layers: not convolutions
            o, c = r.get('cuda_ms'), r.get('cudnn_ms')
            if not o or not c or o <= 0 or c <= 0: continue
            ratios.setdefault((prec, tab), []).append(o / c)
            ratios.setdefault((prec, 'all'), []).append(o / c)
            ratios.setdefault(('all', 'all'), []).append(o / c)
            worst.append((o / c, net, r['layer'], tab, prec, alg, r.get('cudnn_alg')))
if ratios:
    L.append('### Own kernels vs cuDNN per conv layer (time ratio own / cuDNN; < 1: own faster), geometric means\n')
    L.append('| precision | forward | backward-data | backward-filter | all | layers |')
    L.append('|---|---|---|---|---|---|')
    for prec in ('fp32', 'tf32', 'bf16', 'all'):
        g = lambda t: f'{gmean(ratios.get((prec, t), [])):.2f}' if ratios.get((prec, t)) else '-'
        L.append(f'| {prec} | {g("forward")} | {g("bwd_data")} | {g("bwd_filter")} | {g("all")} | {len(ratios.get((prec, "all"), []))} |')
    L.append('')
    worst.sort()
    L.append('Best five (own fastest relative to cuDNN): ' + '; '.join(f'{n} {l} {t} {p} {x:.2f} ({a} vs {c})' for x, n, l, t, p, a, c in worst[:5]))
    L.append('')
    L.append('Worst five: ' + '; '.join(f'{n} {l} {t} {p} {x:.2f} ({a} vs {c})' for x, n, l, t, p, a, c in worst[-5:]))
    L.append('')

# ---- ECE408 (seed 004): Op Time per conv layer at each batch size, test accuracy
ece = {}
for f in sorted(glob.glob(os.path.join(res, 'infer_ece408_*.json'))):
    d = load(f)
    if d: ece[os.path.basename(f)[13:-5]] = d
if ece:
    L.append('### ECE408 course network (seed 004): Op Time (ms, kernels only, summed over the test set) and accuracy\n')
    L.append('| variant | batch | conv1 op | conv2 op | sum | conv1 layer | test accuracy | algorithms |')
    L.append('|---|---|---|---|---|---|---|---|')
    for tag, d in ece.items():
        t = d['tables']
        for b in t['batch sizes']:
            conv = [r for r in t['conv layers'] if r['batch'] == b['batch']]
            if len(conv) < 2: continue
            L.append(f"| {tag} | {b['batch']} | {conv[0]['op_ms']:.3f} | {conv[1]['op_ms']:.3f} | {conv[0]['op_ms'] + conv[1]['op_ms']:.3f} | "
                     f"{conv[0]['layer_ms']:.1f} | {b['test_accuracy']:.4f} | {', '.join(r.get('algo', '') for r in conv)} |")
    L.append('')

tl = os.path.join(res, 'test_line.txt')
if os.path.exists(tl):
    L.append(open(tl).read().strip())
    L.append('')

text = '\n'.join(L) + '\n'
if out_path:
    open(out_path, 'w').write(text)
print(text)
