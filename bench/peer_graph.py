"""A PyTorch module built from `convbench summary NET --graph --format json`: the same network as
convbench runs (every layer after Block and ModelParallel expansion, with all four pads of each
window, groups, dilation, fused batch norm and activation), so that the peer can time networks that
have no hand-written PyTorch definition (tools/gen_random_net.py's, ONNX imports).
    m, (c, h, w), batch = graph_module('net.graph.json')
tests/peer_graph_test.py checks it against convbench's shapes and parameter counts."""
import json
import torch, torch.nn as nn, torch.nn.functional as F

ACTS = {'relu': nn.ReLU, 'sigmoid': nn.Sigmoid, 'silu': nn.SiLU, 'hardswish': nn.Hardswish,
        'hardsigmoid': nn.Hardsigmoid, 'relu6': nn.ReLU6, 'gelu': nn.GELU}


def _shape(s):
    return tuple(int(v) for v in s.split(','))


def _act(name):
    return nn.Identity() if name in (None, 'none') else ACTS[name]()


class _Layer(nn.Module):
    """One convbench layer: its op, then the fused batch norm and activation."""

    def __init__(self, r):
        super().__init__()
        self.op, self.r = r['op'], r
        n, c, h, w = _shape(r['in'])
        oc = _shape(r['out'])[1]
        self.pads = None
        if self.op in ('Convolution', 'Pooling'):
            t, b, le, ri = r['pad_top'], r['pad_bottom'], r['pad_left'], r['pad_right']
            k, st = (r['r'], r['s']), (r['stride_h'], r['stride_w'])
            dil = (r['dil_h'] or 1, r['dil_w'] or 1) if self.op == 'Convolution' else (1, 1)
            oh, ow = _shape(r['out'])[2:]
            # PyTorch pads both sides alike: the leading pads on both sides where that gives the same
            # output (a trailing pad that convbench counts smaller is never read), else F.pad first, as a
            # PyTorch user of TF SAME padding writes it
            sym = (h + 2 * t - dil[0] * (k[0] - 1) - 1) // st[0] + 1 == oh and (w + 2 * le - dil[1] * (k[1] - 1) - 1) // st[1] + 1 == ow
            sym = sym and (self.op == 'Convolution' or (2 * t <= k[0] and 2 * le <= k[1]))  # (a pool's pad: at most half its window)
            self.pads = None if sym else (le, ri, t, b)  # F.pad's order: last dimension first
            pad = (t, le) if sym else (0, 0)
        if self.op == 'Convolution':
            self.f = nn.Conv2d(c, r['outputs'], k, st, pad, (r['dil_h'], r['dil_w']), r['groups'], r['bias'] == 'yes')
        elif self.op == 'Pooling':
            if r['pool'] == 'global avg':
                self.f = nn.AdaptiveAvgPool2d(1)
            elif r['pool'] == 'avg':
                self.f = nn.AvgPool2d(k, st, pad, count_include_pad=False)
            else:
                self.f = nn.MaxPool2d(k, st, pad)
            self.fill = float('-inf') if r['pool'] == 'max' else 0.0
        elif self.op == 'InnerProduct':
            self.f = nn.Linear(c * h * w, r['outputs'], r['bias'] == 'yes')
        elif self.op == 'Dropout':
            self.f = nn.Dropout(1 - r['keep'])
        elif self.op == 'LayerNorm':
            self.f = nn.LayerNorm(oc, eps=r['keep'])
        elif self.op == 'Scale':
            self.f = None
            self.scale = nn.Parameter(torch.ones(oc))
        elif self.op == 'LRN':
            self.f = nn.LocalResponseNorm(5)
        elif self.op in ('Input', 'Concatenate', 'Elementwise', 'Product', 'Softmax', 'Reshape', 'Activation', 'BatchNorm'):
            self.f = None
        else:
            raise ValueError("layer '%s': op %s has no PyTorch equivalent here" % (r['layer'], self.op))
        self.bn = nn.BatchNorm2d(oc, eps=r['bn_eps']) if r['batch_norm'] == 'yes' else None
        self.act = _act(r['activation'])

    def forward(self, xs):
        x = xs[0]
        if self.op == 'Convolution' or self.op == 'Pooling':
            if self.pads:
                x = F.pad(x, self.pads, value=self.fill if self.op == 'Pooling' else 0.0)
            x = self.f(x)
        elif self.op == 'InnerProduct':
            x = self.f(torch.flatten(x, 1))
        elif self.op == 'Concatenate':
            x = torch.cat(xs, 1)
        elif self.op == 'Elementwise':
            for y in xs[1:]:
                x = x + y
        elif self.op == 'Product':
            x = xs[0] * xs[1]
        elif self.op == 'LayerNorm':
            x = self.f(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        elif self.op == 'Scale':
            x = x * self.scale.view(1, -1, 1, 1)
        elif self.f is not None:
            x = self.f(x)
        if self.bn is not None:
            x = self.bn(x if x.dim() == 4 else x.view(x.shape[0], -1, 1, 1)).view(x.shape)
        return self.act(x)


class GraphNet(nn.Module):
    def __init__(self, rows):
        super().__init__()
        self.names = [r['layer'] for r in rows]
        index = {n: i for i, n in enumerate(self.names)}
        self.parents = [[index[p] for p in r['parents'].split('|')] if r['parents'] else [] for r in rows]
        self.layers = nn.ModuleList(_Layer(r) for r in rows)
        self.shapes = None  # a dict to fill with every layer's output shape (tests)
        self.last_use = {}
        for i, ps in enumerate(self.parents):
            for p in ps:
                self.last_use[p] = i

    def forward(self, x):
        out = {0: x}
        for i in range(1, len(self.layers)):
            out[i] = self.layers[i]([out[p] for p in self.parents[i]])
            if self.shapes is not None:
                self.shapes[self.names[i]] = tuple(out[i].shape)
            for p in self.parents[i]:  # drop what no later layer reads, as autograd keeps what it needs
                if self.last_use.get(p) == i:
                    del out[p]
        return out[len(self.layers) - 1]


def graph_module(path):
    """(module, (c, h, w) of the input, batch) from a summary --graph JSON file."""
    d = json.load(open(path))
    rows = d['tables']['graph']
    n, c, h, w = _shape(rows[0]['out'])
    return GraphNet(rows), (c, h, w), n
