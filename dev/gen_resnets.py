#!/usr/bin/env python3
"""ResNet-34 and ResNet-101 (torchvision's definitions, v1.5) as convbench network files, for
checking speed and memory on networks outside the built-ins and the issues' lists. Writes
dev/nets/resnet34.json and dev/nets/resnet101.json; parameter counts asserted against
torchvision's (resnet34 21,797,672; resnet101 44,549,160, BN gamma/beta included).
    python3 dev/gen_resnets.py"""
import json, os, sys
from collections import OrderedDict
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from gen_nets import Net, conv, pool, fc, softmax, eltwise, block, infer, dumps  # noqa: E402


def resnet(title, blocks, bottleneck):
    n = Net(title, 32, 224, 224, 3)
    n.add("conv1", conv([n.last], 7, 3, 64, s=2, pad=[3, 3], bn=True, bias=False))
    n.add("pool1", pool([n.last], 3, 2, pad=[1, 1]))
    cin, exp = 64, 4 if bottleneck else 1
    for li, (width, nblocks, stride) in enumerate(zip([64, 128, 256, 512], blocks, [1, 2, 2, 2]), 1):
        for bi in range(nblocks):
            s = stride if bi == 0 else 1
            bname = "layer%d_%d" % (li, bi)
            L = OrderedDict()
            if bottleneck:
                L["conv1"] = conv([], 1, cin, width, bn=True, bias=False)
                L["conv2"] = conv(["conv1"], 3, width, width, s=s, pad=[1, 1], bn=True, bias=False)
                L["conv3"] = conv(["conv2"], 1, width, exp * width, relu=False, bn=True, bias=False)
                last = "conv3"
            else:
                L["conv1"] = conv([], 3, cin, width, s=s, pad=[1, 1], bn=True, bias=False)
                L["conv2"] = conv(["conv1"], 3, width, width, pad=[1, 1], relu=False, bn=True, bias=False)
                last = "conv2"
            proj = s != 1 or cin != exp * width
            if proj:
                L["downsample"] = conv([], 1, cin, exp * width, s=s, relu=False, bn=True, bias=False)
            prev = n.last
            n.add(bname, block([prev], last, L))
            n.add(bname + "_add", eltwise([bname + "/" + last, bname + "/downsample" if proj else prev], True))
            cin = exp * width
    n.add("pool5", pool([n.last], 7, 1, avg=True))
    n.add("fc", fc([n.last], 1000, False))
    n.add("softmax", softmax([n.last], 1000))
    return n


if __name__ == "__main__":
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nets")
    os.makedirs(out, exist_ok=True)
    for key, title, blocks, bott, want in [("resnet34", "ResNet-34 (torchvision resnet34)", [3, 4, 6, 3], False, 21797672),
                                           ("resnet101", "ResNet-101 v1.5 (torchvision resnet101)", [3, 4, 23, 3], True, 44549160)]:
        doc = resnet(title, blocks, bott).doc()
        params, shapes = infer(doc)
        assert params == want, (key, params, want)
        with open(os.path.join(out, key + ".json"), "w") as f:
            f.write(dumps(doc) + "\n")
        print("%-10s %12s params  out %s" % (key, format(params, ","), list(shapes.values())[-1]))
