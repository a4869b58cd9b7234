#!/usr/bin/env python3
"""Random but plausible networks in Paleo's JSON format, for testing the performance model on
networks it has never seen (issue 14). The same seed and kind give the same file on any Python 3
(a splitmix64 generator of our own, not the random module).

Usage:  python3 tools/gen_random_net.py --kind resnet|vgg|inception|mobile --seed S [--batch N]
                                        [--max-gflop G] [--output FILE]
        python3 tools/gen_random_net.py --suite DIR [--seeds 1-3] [--max-gflop G]
            (every kind for each seed; prints the file names)

What varies: batch 1 to 256 (unless --batch), input planes 32 to 288 (odd sizes too), channel
counts that are often odd (24 + 7, 3 * 13, ...), filters 1x1, 3x3, 5x5 and 7x7, stride 2 with
TF SAME padding (larger trailing pad on even planes, as cuDNN cannot express), explicit padding,
batch norm, residual sums, concatenations, depthwise (grouped) convolutions, max and average
pooling, FC layers with dropout. The input plane shrinks (and then the batch) until one forward
pass is at most --max-gflop GFLOP (default 400), so a GPU profiles one in seconds.
Layer makers, shape inference and the JSON layout are tools/gen_nets.py's.
"""
import argparse
import os
import sys
from collections import OrderedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_nets import Net, block, concat, conv, dropout, dumps, eltwise, fc, infer, pool, softmax  # noqa: E402

KINDS = ("resnet", "vgg", "inception", "mobile")
BATCHES = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256)


class Rng:
    """splitmix64: the same stream on every platform and Python version."""

    def __init__(self, seed):
        self.s = seed & (2 ** 64 - 1)

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & (2 ** 64 - 1)
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2 ** 64 - 1)
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2 ** 64 - 1)
        return z ^ (z >> 31)

    def int(self, lo, hi):  # lo..hi inclusive
        return lo + self.next() % (hi - lo + 1)

    def pick(self, seq):
        return seq[self.next() % len(seq)]

    def chance(self, p):
        return self.next() % 1000 < p * 1000


def channels(r, base):
    """a channel count near base, odd about half the time"""
    c = max(3, base + r.int(-base // 4, base // 4))
    return c | 1 if r.chance(0.5) else c & ~1 or 2


def pad_for(r, k, s):
    """TF SAME (asymmetric on even planes when s = 2), explicit symmetric, or VALID"""
    if s > 1 and r.chance(0.6):
        return "SAME"
    return r.pick(("SAME", [k // 2, k // 2], [k // 2, k // 2]))


class Gen:
    def __init__(self, r, title, n, h, c):
        self.r = r
        self.net = Net(title, n, h, h, c)
        self.c = c

    def add(self, name, layer, cout=None):
        self.net.add(name, layer)
        if cout is not None:
            self.c = cout
        return name

    def conv(self, name, k, cout, s=1, pad=None, bn=False, relu=True, parent=None):
        pad = pad if pad is not None else pad_for(self.r, k, s)
        return self.add(name, conv([parent or self.net.last], k, self.c, cout, s=s, pad=pad, relu=relu, bn=bn, bias=not bn), cout)

    def head(self, dropout_fc):
        n = self.net
        _, shapes = infer(n.doc())
        h = shapes[n.last][1]  # planes stay square
        n.add("gpool", pool([n.last], h, 1, avg=True))
        if dropout_fc:
            n.add("fc_hidden", fc([n.last], channels(self.r, 512), True))
            n.add("dropout", dropout([n.last]))
        classes = self.r.pick((10, 37, 100, 1000))
        n.add("fc", fc([n.last], classes, False))
        n.add("softmax", softmax([n.last], classes))


def resnet(g):
    r = g.r
    g.conv("conv1", r.pick((7, 5, 3)), channels(r, 48), s=2, bn=True)
    if r.chance(0.7):
        g.add("pool1", pool([g.net.last], 3, 2, pad=r.pick(("SAME", [1, 1]))))
    bottleneck = r.chance(0.5)
    width = channels(r, 48)
    for si in range(r.int(2, 4)):
        for bi in range(r.int(1, 3)):
            s = 2 if bi == 0 and si > 0 else 1
            cin, prev, name = g.c, g.net.last, "stage%d_%d" % (si + 1, bi)
            L = OrderedDict()
            pad3 = "SAME" if s == 2 and r.chance(0.6) else [1, 1]
            if bottleneck:
                out = 4 * width
                L["conv1"] = conv([], 1, cin, width, bn=True, bias=False)
                L["conv2"] = conv(["conv1"], 3, width, width, s=s, pad=pad3, bn=True, bias=False)
                L["conv3"] = conv(["conv2"], 1, width, out, relu=False, bn=True, bias=False)
            else:
                out = width
                L["conv1"] = conv([], 3, cin, width, s=s, pad=pad3, bn=True, bias=False)
                L["conv3"] = conv(["conv1"], 3, width, out, pad=[1, 1], relu=False, bn=True, bias=False)
            proj = s != 1 or cin != out
            if proj:
                L["downsample"] = conv([], 1, cin, out, s=s, relu=False, bn=True, bias=False)
            g.net.add(name, block([prev], "conv3", L))
            g.add(name + "_add", eltwise([name + "/conv3", name + "/downsample" if proj else prev], True), out)
        width = channels(r, 2 * width)
    g.head(False)


def vgg(g):
    r = g.r
    c = channels(r, 48)
    for si in range(r.int(3, 5)):
        for li in range(r.int(1, 3)):
            k = r.pick((7, 5)) if si == 0 and li == 0 and r.chance(0.5) else 3
            g.conv("conv%d_%d" % (si + 1, li + 1), k, c, s=2 if si == 0 and li == 0 and k == 7 else 1)
        g.add("pool%d" % (si + 1), pool([g.net.last], *r.pick(((2, 2, "VALID"), (3, 2, "SAME"), (2, 2, "SAME")))))
        c = channels(r, min(2 * c, 640))
    g.head(True)


def inception(g):
    r = g.r
    g.conv("conv1", 7, channels(r, 48), s=2, pad=r.pick(("SAME", [3, 3])))
    g.add("pool1", pool([g.net.last], 3, 2, pad="SAME"))
    g.conv("conv2", 3, channels(r, 96))
    for bi in range(r.int(2, 4)):
        if bi and r.chance(0.5):
            g.add("pool_%d" % bi, pool([g.net.last], 3, 2, pad="SAME"))
        cin, L = g.c, OrderedDict()
        c1, c3r, c3, c5r, c5, cp = (channels(r, b) for b in (64, 96, 128, 24, 48, 32))
        big = r.pick((5, 7))
        L["1x1"] = conv([], 1, cin, c1)
        L["3x3_reduce"] = conv([], 1, cin, c3r)
        L["3x3"] = conv(["3x3_reduce"], 3, c3r, c3, pad="SAME")
        L["%dx%d_reduce" % (big, big)] = conv([], 1, cin, c5r)
        L["%dx%d" % (big, big)] = conv(["%dx%d_reduce" % (big, big)], big, c5r, c5, pad=r.pick(("SAME", [big // 2] * 2)))
        L["pool"] = pool([], 3, 1, pad="SAME")
        L["pool_proj"] = conv(["pool"], 1, cin, cp)
        L["output"] = concat(["1x1", "3x3", "%dx%d" % (big, big), "pool_proj"])
        name = "inception_%d" % bi
        g.net.add(name, block([g.net.last], "output", L))
        g.net.last = name + "/output"
        g.c = c1 + c3 + c5 + cp
    g.head(r.chance(0.5))


def mobile(g):
    r = g.r
    g.conv("conv1", 3, channels(r, 32), s=2, pad="SAME", bn=True)
    for bi in range(r.int(4, 8)):
        s = 2 if r.chance(0.4) else 1
        k = r.pick((3, 3, 5))
        cin, prev, name = g.c, g.net.last, "block%d" % bi
        exp, out = channels(r, 3 * cin) if r.chance(0.5) else cin, channels(r, cin + 16 * s)
        L = OrderedDict()
        first = []
        if exp != cin:
            L["expand"] = conv([], 1, cin, exp, bn=True, bias=False)
            first = ["expand"]
        dw = conv(first, k, exp, exp, s=s, pad="SAME" if s == 2 else [k // 2] * 2, bn=True, bias=False)
        dw["filter"][2] = 1  # per group
        dw["groups"] = exp
        L["depthwise"] = dw
        L["project"] = conv(["depthwise"], 1, exp, out, relu=False, bn=True, bias=False)
        g.net.add(name, block([prev], "project", L))
        g.net.last = name + "/project"
        if s == 1 and cin == out:
            g.net.add(name + "_add", eltwise([name + "/project", prev], False))
        g.c = out
    g.conv("conv_last", 1, channels(r, 4 * g.c), bn=True)
    g.head(False)


BUILD = {"resnet": resnet, "vgg": vgg, "inception": inception, "mobile": mobile}


def fwd_gflop(doc):
    """convolution and FC multiply-adds x 2, forward, in GFLOP"""
    _, shapes = infer(doc)
    flops = 0

    def one(name, L, parents):
        nonlocal flops
        if L["type"] == "Convolution":
            R, S, cin, cout = L["filter"]
            o = shapes[name]
            flops += 2 * o[0] * o[1] * o[2] * cout * R * S * cin  # cin: per group
        elif L["type"] == "InnerProduct":
            i = shapes[parents[0]]
            k = 1
            for d in i[1:]:
                k *= d
            flops += 2 * i[0] * k * L["num_outputs"]

    for name, L in doc["layers"].items():
        if L["type"] == "Block":
            for sub, S in L["layers"].items():
                ps = L["parents"] if not S["parents"] else ["%s/%s" % (name, p) for p in S["parents"]]
                one("%s/%s" % (name, sub), S, ps)
        else:
            one(name, L, L["parents"])
    return flops / 1e9


def generate(kind, seed, batch=None, max_gflop=400.0):
    """the network document; the plane shrinks, then the batch, until it fits max_gflop"""
    r0 = Rng(seed * 7919 + KINDS.index(kind))
    n = batch or r0.pick(BATCHES)
    h = r0.int(64, 288) if kind != "vgg" else r0.int(32, 224)
    if kind == "mobile":
        h = max(h, 96)
    cin = r0.pick((3, 3, 3, 1, 4))
    while True:
        g = Gen(Rng(seed * 104729 + KINDS.index(kind)), "gen %s seed %d (b%d, %dx%dx%d)" % (kind, seed, n, cin, h, h), n, h, cin)
        BUILD[kind](g)
        doc = g.net.doc()
        if fwd_gflop(doc) <= max_gflop or (h <= 48 and n == 1):
            return doc
        if h > 48:
            h = max(48, int(h * 0.85))
        else:
            n = max(1, n // 2)


def write(doc, path):
    text = dumps(doc) + "\n"
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kind", choices=KINDS)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int)
    ap.add_argument("--max-gflop", type=float, default=400.0)
    ap.add_argument("--output", default="-")
    ap.add_argument("--suite", metavar="DIR", help="every kind for each of --seeds into DIR/gen-KIND-sS.json")
    ap.add_argument("--seeds", default="1-2", help="with --suite: A-B or A,B,C")
    a = ap.parse_args()
    if a.batch is not None and not 1 <= a.batch <= 4096:
        ap.error("--batch: %d must be in [1, 4096]" % a.batch)
    if a.suite:
        seeds = []
        for part in a.seeds.split(","):
            lo, _, hi = part.partition("-")
            if not lo.isdigit() or (hi and not hi.isdigit()):
                ap.error("--seeds: '%s' is not A-B or A,B,C" % a.seeds)
            seeds += range(int(lo), int(hi or lo) + 1)
        os.makedirs(a.suite, exist_ok=True)
        for s in seeds:
            for k in KINDS:
                p = os.path.join(a.suite, "gen-%s-s%d.json" % (k, s))
                write(generate(k, s, a.batch, a.max_gflop), p)
                print(p)
        return
    if not a.kind:
        ap.error("--kind (or --suite DIR) is required")
    doc = generate(a.kind, a.seed, a.batch, a.max_gflop)
    if a.output == "-":
        sys.stdout.write(dumps(doc) + "\n")
    else:
        write(doc, a.output)


if __name__ == "__main__":
    main()
