#!/usr/bin/env python3
"""The suite's table (scripts/gpu-bench.sh suite): per cell, each convbench backend's step time
against PyTorch eager and torch.compile measured in the same call, the ratios (convbench time /
peer time: below 1 is faster), peak memory (convbench's planned and measured; eager's and
torch.compile's allocated and reserved), and the geometric means of the ratios. With SUITE_GRAPH=1 a backend's step replayed
as one CUDA graph (fullpass --graph) is a column of its own, BACKEND-graph.
Usage: scripts/suite-summary.py RES_DIR"""
import glob, json, math, os, re, sys

res = sys.argv[1]
PEER = {'vgg-a': 'vgg_a', 'overfeat-fast': 'overfeat'}


def gmean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float('nan')


def total_ms(d, phase='total'):
    for r in d.get('tables', {}).get('fullpass', []):
        if r.get('phase') == phase:
            return r.get('median_ms')
    return None


peer = []
for f in sorted(glob.glob(os.path.join(res, 'suitepeer_*.out'))):  # the .out keeps the lines of a run cut short
    for line in open(f):
        if line.startswith('{'):
            try: peer.append(json.loads(line))
            except ValueError: pass

cells = {}
for f in sorted(glob.glob(os.path.join(res, 'suite_*.json'))):
    m = re.match(r'suite_(.+)_(\d+)_(fp32|tf32|bf16)_(nchw|nhwc)(_update)?_(\w+)\.json$', os.path.basename(f))
    if not m: continue
    try: d = json.load(open(f))
    except Exception: continue
    key = m.group(1, 2, 3, 4, 5)
    # (step ms, planned buffers MiB, measured device high-water mark MiB: fullpass's device_peak_mb,
    # cudaMemGetInfo above the start, so the libraries' own allocations and the graph's included)
    cells.setdefault(key, {})[m.group(6)] = (total_ms(d), d.get('memory_mb'), d.get('device_peak_mb'))
    g = total_ms(d, 'total, one graph (--graph)')  # SUITE_GRAPH=1: the same step replayed as one CUDA graph
    if g: cells[key][m.group(6) + '-graph'] = (g, None, None)  # (the same run's memory: shown once)

backends = sorted({b for c in cells.values() for b in c})
# the peer's columns: eager, torch.compile's default mode, and its reduce-overhead mode (CUDA
# graphs) where the run had it (SUITE_COMPILE_MODES)
def peer_kind(r):
    if not r.get('compiled'): return 'eager'
    return 'compiled' if r.get('compile_mode') in (None, 'default') else 'compiled-' + r['compile_mode']
kinds = ['eager', 'compiled'] + sorted({peer_kind(r) for r in peer} - {'eager', 'compiled'})
ratios = {(b, p): [] for b in backends for p in kinds}
missing = []  # cells a peer column did not measure: the call's DEADLINE skipped its group, or PEER_S cut it
print('| cell | ' + ' | '.join(f'{b} ms' for b in backends) + ' | ' + ' | '.join(f'{k} ms' for k in kinds) + ' | ' +
      ' | '.join(f'{b}/{k}' for b in backends for k in kinds) + ' | peak MiB: convbench planned (measured) / eager allocated (reserved) / compiled allocated (reserved) |')
print('|---' * (1 + len(backends) + len(kinds) + len(backends) * len(kinds) + 1) + '|')
for (net, batch, prec, lay, upd), bes in sorted(cells.items()):
    want = dict(net=PEER.get(net, net), batch=int(batch), mode=prec, layout=lay.upper(), update=bool(upd))
    pr = {peer_kind(r): r for r in peer if all(r.get(k) == v for k, v in want.items())}
    refs = [(k, (pr.get(k) or {}).get('total')) for k in kinds]
    row = [f'{net} b{batch} {prec} {lay.upper()}{" +update" if upd else ""}']
    row += [f'{bes[b][0]:.2f}' if b in bes and bes[b][0] else '-' for b in backends]
    row += [f'{ref:.2f}' if ref else 'not run' for _, ref in refs]
    if not all(ref for _, ref in refs): missing.append(row[0])
    for b in backends:
        t = bes.get(b, (None,))[0]
        for p, ref in refs:
            if t and ref:
                ratios[(b, p)].append(t / ref)
                row.append(f'{t / ref:.2f}')
            else:
                row.append('-')
    mem = [f'{bes[b][1]:.0f}' + (f' ({bes[b][2]:.0f})' if bes[b][2] else '') for b in backends if b in bes and bes[b][1]]
    # PyTorch's peaks, eager and torch.compile's (which saves fewer activations: its partitioner
    # recomputes cheap ones in the backward); the memory target is against the smaller
    def peak_of(k):
        r = pr.get(k) or {}
        peak, reserved = r.get("peak_mib"), r.get("reserved_mib")
        return f'{f"{peak:.0f}" if peak else "-"}{f" ({reserved:.0f})" if reserved else ""}'
    row.append(f'{"/".join(mem) or "-"} / {peak_of("eager")} / {peak_of("compiled")}')
    print('| ' + ' | '.join(row) + ' |')
print()
if missing:
    print(f'peer not run for {", ".join(missing)}: its precision group was skipped past DEADLINE or cut at PEER_S '
          '(suitepeer_*.out has what ran); a column not run leaves its cell out of that mean')
for (b, p), xs in ratios.items():
    if xs:
        print(f'geometric mean {b}/{p}: {gmean(xs):.3f} over {len(xs)} cells (below 1: convbench faster)')
