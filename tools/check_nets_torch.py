#!/usr/bin/python3
"""Checks the built-in modern networks (tools/gen_nets.py MODERN, tests/data/nets_expected_modern.json)
against torchvision's definitions (Debian's python3-torchvision, under /usr/bin/python3): the
parameter count, and the output shape of every convolution and fully connected layer in the order
they run (a batch-1 forward with hooks). Prints one line per check and "N passed, M failed".

Usage: /usr/bin/python3 tools/check_nets_torch.py     (from anywhere; tests/run_tests.sh runs it)
"""
import json
import os
import sys

import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = {"mobilenet-v2": torchvision.models.mobilenet_v2, "efficientnet-b0": torchvision.models.efficientnet_b0,
          "resnext50": torchvision.models.resnext50_32x4d, "convnext-tiny": torchvision.models.convnext_tiny}


def ours(name, expected):
    """[N, H, W, C] (or [N, K]) of every Convolution and InnerProduct, in file order."""
    doc = json.load(open(os.path.join(ROOT, "nets", name + ".json")))
    out = []
    for lname, L in doc["layers"].items():
        subs = [("%s/%s" % (lname, s), S) for s, S in L["layers"].items()] if L["type"] == "Block" else [(lname, L)]
        for full, S in subs:
            if S["type"] in ("Convolution", "InnerProduct"):
                out.append((full, expected["layers"][full][1:]))
    return out


def theirs(model):
    """Output shapes of every Conv2d and Linear as they run, NHWC ([K] for a 2-d output)."""
    shapes = []

    def hook(mod, inp, out):
        s = list(out.shape[1:])
        shapes.append([s[1], s[2], s[0]] if isinstance(mod, torch.nn.Conv2d) else s)

    for m in model.modules():
        if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)):
            m.register_forward_hook(hook)
    model.eval()
    with torch.no_grad():
        model(torch.zeros(1, 3, 224, 224))
    return shapes


def main():
    expected = json.load(open(os.path.join(ROOT, "tests", "data", "nets_expected_modern.json")))
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        passed, failed = passed + ok, failed + (not ok)
        print("%s %s" % ("ok  " if ok else "FAIL", what))

    for name, ctor in MODELS.items():
        torch.manual_seed(0)
        model = ctor()
        n = sum(p.numel() for p in model.parameters())
        check(n == expected[name]["params"], "%s: torchvision %d params, convbench %d" % (name, n, expected[name]["params"]))
        a, b = ours(name, expected[name]), theirs(model)
        bad = [(i, x, y) for i, (x, y) in enumerate(zip(a, b)) if x[1] != y]
        check(len(a) == len(b) and not bad,
              "%s: %d conv/fc layers (torchvision %d), shapes agree%s" % (name, len(a), len(b),
                                                                         "" if not bad else ": first differs at %s %s vs %s" % (bad[0][1][0], bad[0][1][1], bad[0][2])))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
