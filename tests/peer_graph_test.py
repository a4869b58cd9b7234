#!/usr/bin/python3
"""bench/peer_graph.py against convbench: the PyTorch module built from `summary --graph` has every
layer's output shape and the parameter count convbench gives, on the built-in networks and on
random ones (tools/gen_random_net.py). Needs torch (Debian's python3-torch under /usr/bin/python3);
skips without it.   /usr/bin/python3 tests/peer_graph_test.py BUILD_DIR"""
import json, os, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..', 'bench'))
try:
    import torch
except ImportError:
    print('skip peer_graph_test: no torch for this python')
    print('0 passed, 0 failed, 1 skipped')
    sys.exit(0)
from peer_graph import graph_module

cb = os.path.join(sys.argv[1] if len(sys.argv) > 1 else 'build', 'convbench')
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print('FAIL ' + what)


def nchw(s):  # convbench's (n, c, h, w) as PyTorch gives it (rank 2: n, c)
    n, c, h, w = (int(v) for v in s.split(','))
    return (n, c, h, w)


def one(spec, batch, tmp):
    out = os.path.join(tmp, 'g.json')
    subprocess.run([cb, 'summary', spec, '--graph', '--batch', str(batch), '--format', 'json', '--quiet', '--output', out], check=True)
    d = json.load(open(out))
    rows = d['tables']['graph']
    params = [r for r in d['tables']['totals'] if r['quantity'] == 'parameters'][0]['value']
    m, (c, h, w), n = graph_module(out)
    m.shapes = {}
    torch.manual_seed(0)
    with torch.no_grad():
        y = m.eval()(torch.randn(n, c, h, w))
    bad = []
    for r in rows[1:]:
        want, got = nchw(r['out']), m.shapes.get(r['layer'])
        if got is None or (got != want and not (len(got) == 2 and got == want[:2] and want[2:] == (1, 1))):
            bad.append('%s %s vs %s' % (r['layer'], got, want))
    check(not bad, '%s b%d: layer shapes differ from convbench\'s: %s' % (spec, batch, '; '.join(bad[:4])))
    got = sum(p.numel() for p in m.parameters())
    check(got == params, '%s: %d parameters in PyTorch, convbench counts %d' % (spec, got, params))
    check(bool(torch.isfinite(y).all()), '%s: the output is not finite' % spec)


with tempfile.TemporaryDirectory() as tmp:
    specs = [('alexnet', 2), ('vgg-a', 1), ('googlenet', 2), ('resnet50', 2), ('resnext50', 1), ('mobilenet-v2', 2),
             ('efficientnet-b0', 1), ('convnext-tiny', 1), ('fashion-lenet', 3)]
    gen = os.path.join(tmp, 'gen')
    subprocess.run([sys.executable, os.path.join(here, '..', 'tools', 'gen_random_net.py'), '--suite', gen,
                    '--seeds', '1-2', '--max-gflop', '2'], check=True, stdout=subprocess.DEVNULL)
    specs += [(os.path.join(gen, f), 2) for f in sorted(os.listdir(gen))]
    for spec, b in specs:
        try:
            one(spec, b, tmp)
        except Exception as e:  # a layer PyTorch cannot build, or convbench refused: a failure either way
            check(False, '%s: %s' % (spec, e))
print('%d passed, %d failed, 0 skipped' % (passed, failed))
sys.exit(1 if failed else 0)
