#!/usr/bin/env python3
"""Generate convbench's built-in network descriptions (nets/*.json, Paleo's JSON format plus
convbench extensions) and the expected shapes/parameter counts (tests/data/nets_expected.json).

Usage:  python3 tools/gen_nets.py            (run from anywhere; stdlib only)

Cross-check: every parameter count and every layer output shape written here was checked
independently with PyTorch 1.13 (Debian's /usr/bin/python3, CPU):
  (1) each generated JSON was executed layer by layer with torch.nn.functional ops
      (TF-style asymmetric padding for "SAME"), comparing every layer's actual output shape and
      the parameter count of the created modules with tests/data/nets_expected.json;
  (2) reference PyTorch models were built independently -- alexnet/overfeat/vgg_a/vgg16/googlenet
      from /work/shared/peers/pytorch_convnets.py, a hand-written copy of torchvision's ResNet-50
      (v1.5, stride on the 3x3 conv; 25,557,032 params incl. BN gamma/beta), and hand-written
      OverFeat-accurate, LeNet-5 and ECE408 Fashion-MNIST nets -- and their parameter counts,
      final output shapes and the ordered list of conv output shapes were compared with ours.
  All nets matched.  (The checker lives outside the repo; it needs torch, this script does not.)

Format (Paleo = github.com/TalwalkarLab/paleo nets/*.json; EXT = convbench extension):
  {"name": ..., "layers": {name: layer, ...}} in topological order; input layer named "data".
  Input        {"tensor": [N,H,W,C]}  (NHWC)
  Convolution  "filter" [R,S,Cin,Cout], "padding" "SAME"|"VALID"|[ph,pw], "strides" [1,sh,sw,1],
               "activation_fn" "relu"|null (always explicit; Paleo's default is relu),
               "normalizer_fn" "batch_norm"|null, EXT "bias": false (default true), EXT "groups"
  Pooling/AvgPool "ksize" [1,kh,kw,1], "strides" [1,sh,sw,1], "padding" "SAME"|"VALID"|[ph,pw]
  InnerProduct "num_outputs" (input flattened), EXT "activation_fn" "relu"|null (default null)
  Concatenate  "dim": 3;  Elementwise: sum of parents, EXT "activation_fn" "relu"|null
  Dropout "dropout_keep_prob";  Softmax "num_classes"
  Block        {"parents", "endpoint", "layers": {sub: {... "parents": [] = block's parents,
               otherwise sibling names}}}; members are named "block/sub".
Shape rules used (as Paleo): VALID out = ceil((h-k+1)/s); SAME out = ceil(h/s);
  [p,p] out = (h+2p-k)//s+1.  InnerProduct/Softmax outputs are 2-D [N,K].
Parameter rule (convbench; unlike Paleo, BN gamma/beta are counted):
  conv = R*S*Cin*Cout (Cin: per group) + (Cout if bias) + (2*Cout if batch_norm); fc = K*out + out.
"""
import json
import math
import os
from collections import OrderedDict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ----------------------------------------------------------------------------- layer makers
def conv(parents, k, cin, cout, s=1, pad="VALID", relu=True, bn=False, bias=True, kw=None, groups=1, act=None):
    """act names the activation ("relu6", "silu", ...) where relu=True/False is not enough."""
    d = OrderedDict()
    d["parents"] = list(parents)
    d["type"] = "Convolution"
    d["filter"] = [k, kw if kw is not None else k, cin // groups, cout]
    d["padding"] = pad
    d["strides"] = [1, s, s, 1]
    d["activation_fn"] = act if act else ("relu" if relu else None)
    d["normalizer_fn"] = "batch_norm" if bn else None
    if not bias:
        d["bias"] = False
    if groups > 1:
        d["groups"] = groups
    return d


def pool(parents, k, s, pad="VALID", avg=False):
    d = OrderedDict()
    d["parents"] = list(parents)
    d["type"] = "AvgPool" if avg else "Pooling"
    d["ksize"] = [1, k, k, 1]
    d["strides"] = [1, s, s, 1]
    d["padding"] = pad
    return d


def fc(parents, n, relu):
    d = OrderedDict()
    d["parents"] = list(parents)
    d["type"] = "InnerProduct"
    d["num_outputs"] = n
    d["activation_fn"] = "relu" if relu else None
    return d


def dropout(parents, keep=0.5):
    return OrderedDict([("parents", list(parents)), ("type", "Dropout"),
                        ("dropout_keep_prob", keep)])


def softmax(parents, n):
    return OrderedDict([("parents", list(parents)), ("type", "Softmax"), ("num_classes", n)])


def concat(parents):
    return OrderedDict([("parents", list(parents)), ("type", "Concatenate"), ("dim", 3)])


def eltwise(parents, relu):
    return OrderedDict([("parents", list(parents)), ("type", "Elementwise"),
                        ("activation_fn", "relu" if relu else None)])


def gap(parents):
    return OrderedDict([("parents", list(parents)), ("type", "GlobalAvgPool")])


def mul(parents):  # the second operand may be [N, 1, 1, C], broadcast (squeeze-excitation)
    return OrderedDict([("parents", list(parents)), ("type", "Elementwise"), ("operation", "mul")])


def layernorm(parents, eps=1e-6):  # over the channels of each pixel
    return OrderedDict([("parents", list(parents)), ("type", "LayerNorm"), ("epsilon", eps)])


def scale(parents):  # a learned factor per channel (ConvNeXt's layer scale)
    return OrderedDict([("parents", list(parents)), ("type", "Scale")])


def block(parents, endpoint, layers):
    return OrderedDict([("type", "Block"), ("parents", list(parents)),
                        ("endpoint", endpoint), ("layers", layers)])


def data(n, h, w, c):
    return OrderedDict([("parents", []), ("type", "Input"), ("tensor", [n, h, w, c])])


class Net:
    """Sequential helper: add(name, layer) with parents defaulting to the previous layer."""

    def __init__(self, name, n, h, w, c):
        self.name = name
        self.layers = OrderedDict()
        self.layers["data"] = data(n, h, w, c)
        self.last = "data"

    def add(self, name, layer):
        assert name not in self.layers, name
        self.layers[name] = layer
        self.last = name
        return name

    def doc(self):
        return OrderedDict([("name", self.name), ("layers", self.layers)])


# ----------------------------------------------------------------------------- networks
def alexnet():
    n = Net("AlexNet (One weird trick; convnet-benchmarks / torchvision alexnet)", 128, 224, 224, 3)
    n.add("conv1", conv([n.last], 11, 3, 64, s=4, pad=[2, 2]))
    n.add("pool1", pool([n.last], 3, 2))
    n.add("conv2", conv([n.last], 5, 64, 192, pad=[2, 2]))
    n.add("pool2", pool([n.last], 3, 2))
    n.add("conv3", conv([n.last], 3, 192, 384, pad=[1, 1]))
    n.add("conv4", conv([n.last], 3, 384, 256, pad=[1, 1]))
    n.add("conv5", conv([n.last], 3, 256, 256, pad=[1, 1]))
    n.add("pool5", pool([n.last], 3, 2))
    n.add("fc6", fc([n.last], 4096, True))
    n.add("dropout6", dropout([n.last]))
    n.add("fc7", fc([n.last], 4096, True))
    n.add("dropout7", dropout([n.last]))
    n.add("fc8", fc([n.last], 1000, False))
    n.add("softmax", softmax([n.last], 1000))
    return n


def overfeat_fast():
    n = Net("OverFeat fast (convnet-benchmarks)", 128, 231, 231, 3)
    n.add("conv1", conv([n.last], 11, 3, 96, s=4))
    n.add("pool1", pool([n.last], 2, 2))
    n.add("conv2", conv([n.last], 5, 96, 256))
    n.add("pool2", pool([n.last], 2, 2))
    n.add("conv3", conv([n.last], 3, 256, 512, pad=[1, 1]))
    n.add("conv4", conv([n.last], 3, 512, 1024, pad=[1, 1]))
    n.add("conv5", conv([n.last], 3, 1024, 1024, pad=[1, 1]))
    n.add("pool5", pool([n.last], 2, 2))
    n.add("fc6", fc([n.last], 3072, True))
    n.add("fc7", fc([n.last], 4096, True))
    n.add("fc8", fc([n.last], 1000, False))
    n.add("softmax", softmax([n.last], 1000))
    return n


def overfeat_accurate():
    n = Net("OverFeat accurate (Sermanet et al. 2014, Table 3)", 128, 221, 221, 3)
    n.add("conv1", conv([n.last], 7, 3, 96, s=2))
    n.add("pool1", pool([n.last], 3, 3))
    n.add("conv2", conv([n.last], 7, 96, 256))
    n.add("pool2", pool([n.last], 2, 2))
    n.add("conv3", conv([n.last], 3, 256, 512, pad=[1, 1]))
    n.add("conv4", conv([n.last], 3, 512, 512, pad=[1, 1]))
    n.add("conv5", conv([n.last], 3, 512, 1024, pad=[1, 1]))
    n.add("conv6", conv([n.last], 3, 1024, 1024, pad=[1, 1]))
    n.add("pool6", pool([n.last], 3, 3))
    n.add("fc7", fc([n.last], 4096, True))
    n.add("fc8", fc([n.last], 4096, True))
    n.add("fc9", fc([n.last], 1000, False))
    n.add("softmax", softmax([n.last], 1000))
    return n


VGG_A = [[64], [128], [256, 256], [512, 512], [512, 512]]
VGG_16 = [[64, 64], [128, 128], [256, 256, 256], [512, 512, 512], [512, 512, 512]]


def vgg(title, stages):
    n = Net(title, 64, 224, 224, 3)
    c = 3
    for si, stage in enumerate(stages, 1):
        for li, v in enumerate(stage, 1):
            n.add("conv%d_%d" % (si, li), conv([n.last], 3, c, v, pad=[1, 1]))
            c = v
        n.add("pool%d" % si, pool([n.last], 2, 2))
    n.add("fc6", fc([n.last], 4096, True))
    n.add("fc7", fc([n.last], 4096, True))
    n.add("fc8", fc([n.last], 1000, False))
    n.add("softmax", softmax([n.last], 1000))
    return n


# GoogLeNet inception modules: (in, 1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool proj)
INCEPTION = OrderedDict([
    ("inception_3a", (192, 64, 96, 128, 16, 32, 32)),
    ("inception_3b", (256, 128, 128, 192, 32, 96, 64)),
    ("pool3", None),
    ("inception_4a", (480, 192, 96, 208, 16, 48, 64)),
    ("inception_4b", (512, 160, 112, 224, 24, 64, 64)),
    ("inception_4c", (512, 128, 128, 256, 24, 64, 64)),
    ("inception_4d", (512, 112, 144, 288, 32, 64, 64)),
    ("inception_4e", (528, 256, 160, 320, 32, 128, 128)),
    ("pool4", None),
    ("inception_5a", (832, 256, 160, 320, 32, 128, 128)),
    ("inception_5b", (832, 384, 192, 384, 48, 128, 128)),
])


def inception_block(parent, i, c1, c3r, c3, c5r, c5, pp):
    L = OrderedDict()
    L["1x1"] = conv([], 1, i, c1)
    L["3x3_reduce"] = conv([], 1, i, c3r)
    L["3x3"] = conv(["3x3_reduce"], 3, c3r, c3, pad=[1, 1])
    L["5x5_reduce"] = conv([], 1, i, c5r)
    L["5x5"] = conv(["5x5_reduce"], 5, c5r, c5, pad=[2, 2])
    L["pool"] = pool([], 3, 1, pad="SAME")  # = MaxPool2d(3, 1, padding=1)
    L["pool_proj"] = conv(["pool"], 1, i, pp)
    L["output"] = concat(["1x1", "3x3", "5x5", "pool_proj"])
    return block([parent], "output", L)


def googlenet():
    n = Net("GoogLeNet v1 (no BN, no aux heads; convnet-benchmarks)", 128, 224, 224, 3)
    n.add("conv1", conv([n.last], 7, 3, 64, s=2, pad=[3, 3]))
    # MaxPool2d(3, 2, ceil_mode=True) == TF "SAME" 3x3/2 here (extra pad at bottom/right):
    # 112->56->28->14->7
    n.add("pool1", pool([n.last], 3, 2, pad="SAME"))
    n.add("conv2_reduce", conv([n.last], 1, 64, 64))
    n.add("conv2", conv([n.last], 3, 64, 192, pad=[1, 1]))
    n.add("pool2", pool([n.last], 3, 2, pad="SAME"))
    for name, cfg in INCEPTION.items():
        if cfg is None:
            n.add(name, pool([n.last], 3, 2, pad="SAME"))
        else:
            n.add(name, inception_block(n.last, *cfg))
            n.last = name + "/output"
    n.add("pool5", pool([n.last], 7, 1, avg=True))
    n.add("fc", fc([n.last], 1000, False))
    n.add("softmax", softmax([n.last], 1000))
    return n


def resnet50():
    n = Net("ResNet-50 v1.5 (torchvision resnet50: stride on the 3x3 conv)", 32, 224, 224, 3)
    n.add("conv1", conv([n.last], 7, 3, 64, s=2, pad=[3, 3], bn=True, bias=False))
    n.add("pool1", pool([n.last], 3, 2, pad=[1, 1]))
    cin = 64
    for li, (width, nblocks, stride) in enumerate(
            [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], 1):
        for bi in range(nblocks):
            s = stride if bi == 0 else 1
            bname = "layer%d_%d" % (li, bi)
            L = OrderedDict()
            L["conv1"] = conv([], 1, cin, width, bn=True, bias=False)
            L["conv2"] = conv(["conv1"], 3, width, width, s=s, pad=[1, 1], bn=True, bias=False)
            L["conv3"] = conv(["conv2"], 1, width, 4 * width, relu=False, bn=True, bias=False)
            if bi == 0:  # projection shortcut (channels and/or stride change)
                L["downsample"] = conv([], 1, cin, 4 * width, s=s, relu=False, bn=True,
                                       bias=False)
            prev = n.last
            n.add(bname, block([prev], "conv3", L))
            # The residual sum + ReLU is a top-level layer after each block: a Block member can
            # only name its siblings (or take the block's parents via []), so an identity
            # shortcut (sum with the block's input) cannot be expressed inside the block; for
            # uniformity the projection blocks are laid out the same way.
            short = bname + "/downsample" if bi == 0 else prev
            n.add(bname + "_add", eltwise([bname + "/conv3", short], True))
            cin = 4 * width
    n.add("pool5", pool([n.last], 7, 1, avg=True))
    n.add("fc", fc([n.last], 1000, False))
    n.add("softmax", softmax([n.last], 1000))
    return n


def resnext50():
    """torchvision resnext50_32x4d: ResNet-50 with a 32-group 3x3 of twice the width."""
    n = Net("ResNeXt-50 32x4d (torchvision resnext50_32x4d)", 32, 224, 224, 3)
    n.add("conv1", conv([n.last], 7, 3, 64, s=2, pad=[3, 3], bn=True, bias=False))
    n.add("pool1", pool([n.last], 3, 2, pad=[1, 1]))
    cin = 64
    for li, (planes, nblocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], 1):
        width = planes * 4 // 64 * 32
        for bi in range(nblocks):
            s = stride if bi == 0 else 1
            bname = "layer%d_%d" % (li, bi)
            L = OrderedDict()
            L["conv1"] = conv([], 1, cin, width, bn=True, bias=False)
            L["conv2"] = conv(["conv1"], 3, width, width, s=s, pad=[1, 1], bn=True, bias=False, groups=32)
            L["conv3"] = conv(["conv2"], 1, width, 4 * planes, relu=False, bn=True, bias=False)
            if bi == 0:
                L["downsample"] = conv([], 1, cin, 4 * planes, s=s, relu=False, bn=True, bias=False)
            prev = n.last
            n.add(bname, block([prev], "conv3", L))
            n.add(bname + "_add", eltwise([bname + "/conv3", bname + "/downsample" if bi == 0 else prev], True))
            cin = 4 * planes
    n.add("pool5", gap([n.last]))
    n.add("fc", fc([n.last], 1000, False))
    n.add("softmax", softmax([n.last], 1000))
    return n


def inverted_residuals(title, act, stages, se):
    """MobileNetV2 and EfficientNet-B0 as torchvision builds them: a 3x3 stem of 32, stages of
    (expansion t, kernel k, stride, channels c, repeats) blocks (1x1 expand unless t = 1,
    depthwise kxk, squeeze-excitation to max(1, cin/4) when se, linear 1x1 projection, identity
    shortcut when the shape stays), a 1x1 to 1280, global pooling, dropout 0.2, the classifier."""
    n = Net(title, 64, 224, 224, 3)
    n.add("conv1", conv([n.last], 3, 3, 32, s=2, pad=[1, 1], bn=True, bias=False, act=act))
    cin = 32
    i = 0
    for t, k, stride, c, reps in stages:
        for r in range(reps):
            s = stride if r == 0 else 1
            hid = cin * t
            bname = "block%d" % i
            L = OrderedDict()
            first = []
            if t != 1:
                L["expand"] = conv([], 1, cin, hid, bn=True, bias=False, act=act)
                first = ["expand"]
            L["dw"] = conv(first, k, hid, hid, s=s, pad=[(k - 1) // 2] * 2, bn=True, bias=False, groups=hid, act=act)
            last = "dw"
            if se:
                sq = max(1, cin // 4)
                L["se_pool"] = gap(["dw"])
                L["se_reduce"] = conv(["se_pool"], 1, hid, sq, act=act)
                L["se_expand"] = conv(["se_reduce"], 1, sq, hid, act="sigmoid")
                L["se_mul"] = mul(["dw", "se_expand"])
                last = "se_mul"
            L["project"] = conv([last], 1, hid, c, relu=False, bn=True, bias=False)
            prev = n.last
            n.add(bname, block([prev], "project", L))
            if s == 1 and cin == c:
                n.add(bname + "_add", eltwise([bname + "/project", prev], False))
            cin = c
            i += 1
    n.add("conv_last", conv([n.last], 1, cin, 1280, bn=True, bias=False, act=act))
    n.add("pool", gap([n.last]))
    n.add("dropout", dropout([n.last], 0.8))
    n.add("fc", fc([n.last], 1000, False))
    n.add("softmax", softmax([n.last], 1000))
    return n


def mobilenet_v2():
    """torchvision mobilenet_v2 (width 1.0): inverted residuals, ReLU6, linear bottlenecks."""
    return inverted_residuals("MobileNetV2 (torchvision mobilenet_v2)", "relu6",
                              [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 3, 2, 32, 3), (6, 3, 2, 64, 4),
                               (6, 3, 1, 96, 3), (6, 3, 2, 160, 3), (6, 3, 1, 320, 1)], se=False)


def efficientnet_b0():
    """torchvision efficientnet_b0: MBConv with squeeze-excitation, SiLU; batch norm fused
    (epsilon 1e-5, as torchvision's B0; its B5-B7 use 1e-3)."""
    return inverted_residuals("EfficientNet-B0 (torchvision efficientnet_b0)", "silu",
                              [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
                               (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)], se=True)


def convnext_tiny():
    """torchvision convnext_tiny: 7x7 depthwise, LayerNorm over channels, GELU MLP as 1x1
    convolutions (the Linear layers of the NHWC block), layer scale; stochastic depth is the
    identity at inference and not modelled."""
    n = Net("ConvNeXt-Tiny (torchvision convnext_tiny)", 32, 224, 224, 3)
    n.add("stem", conv([n.last], 4, 3, 96, s=4, relu=False))
    n.add("stem_ln", layernorm([n.last]))
    dims = [96, 192, 384, 768]
    for si, (dim, depth) in enumerate(zip(dims, [3, 3, 9, 3])):
        if si > 0:
            n.add("down%d_ln" % si, layernorm([n.last]))
            n.add("down%d" % si, conv([n.last], 2, dims[si - 1], dim, s=2, relu=False))
        for bi in range(depth):
            bname = "stage%d_%d" % (si, bi)
            L = OrderedDict()
            L["dw"] = conv([], 7, dim, dim, pad=[3, 3], relu=False, groups=dim)
            L["ln"] = layernorm(["dw"])
            L["pw1"] = conv(["ln"], 1, dim, 4 * dim, act="gelu")
            L["pw2"] = conv(["pw1"], 1, 4 * dim, dim, relu=False)
            L["scale"] = scale(["pw2"])
            prev = n.last
            n.add(bname, block([prev], "scale", L))
            n.add(bname + "_add", eltwise([bname + "/scale", prev], False))
    n.add("pool", gap([n.last]))
    n.add("head_ln", layernorm([n.last]))
    n.add("fc", fc([n.last], 1000, False))
    n.add("softmax", softmax([n.last], 1000))
    return n


def fashion_lenet():
    n = Net("LeNet-5 style, Fashion-MNIST", 100, 28, 28, 1)
    n.add("conv1", conv([n.last], 5, 1, 6, pad="SAME"))
    n.add("pool1", pool([n.last], 2, 2))
    n.add("conv2", conv([n.last], 5, 6, 16))
    n.add("pool2", pool([n.last], 2, 2))
    n.add("fc3", fc([n.last], 120, True))
    n.add("fc4", fc([n.last], 84, True))
    n.add("fc5", fc([n.last], 10, False))
    n.add("softmax", softmax([n.last], 10))
    return n


def fashion_ece408():
    n = Net("ECE408 Fashion-MNIST net (86x86 input)", 100, 86, 86, 1)
    n.add("conv1", conv([n.last], 7, 1, 4))
    n.add("pool1", pool([n.last], 2, 2))
    n.add("conv2", conv([n.last], 7, 4, 16))
    n.add("pool2", pool([n.last], 4, 4))
    n.add("fc3", fc([n.last], 32, True))
    n.add("fc4", fc([n.last], 10, False))
    n.add("softmax", softmax([n.last], 10))
    return n


NETS = OrderedDict([
    ("alexnet", alexnet),
    ("overfeat-fast", overfeat_fast),
    ("overfeat-accurate", overfeat_accurate),
    ("vgg-a", lambda: vgg("VGG-A (VGG 11, configuration A)", VGG_A)),
    ("vgg16", lambda: vgg("VGG 16 (configuration D)", VGG_16)),
    ("googlenet", googlenet),
    ("resnet50", resnet50),
    ("fashion-lenet", fashion_lenet),
    ("fashion-ece408", fashion_ece408),
])

# Today's convnets (issue 13): their own expectations file, tests/data/nets_expected_modern.json,
# checked against torchvision by tools/check_nets_torch.py.
MODERN = OrderedDict([
    ("mobilenet-v2", mobilenet_v2),
    ("efficientnet-b0", efficientnet_b0),
    ("resnext50", resnext50),
    ("convnext-tiny", convnext_tiny),
])

# Known-good totals; generation fails if the computed count differs.
EXPECTED_PARAMS = {"alexnet": 61100840, "resnet50": 25557032, "mobilenet-v2": 3504872, "efficientnet-b0": 5288548,
                   "resnext50": 25028904, "convnext-tiny": 28589128}


# ----------------------------------------------------------------------------- shape inference
def _out(h, k, s, pad, i):
    if pad == "VALID":
        return int(math.ceil((h - k + 1) / s))
    if pad == "SAME":
        return int(math.ceil(h / s))
    return (h + 2 * pad[i] - k) // s + 1


def infer(doc):
    """Returns (params, OrderedDict full_name -> output shape) following Paleo's rules."""
    shapes = OrderedDict()
    params = 0
    endpoints = {}  # a block's name as a parent means its endpoint

    def one(name, L, parents):
        nonlocal params
        ins = [shapes[endpoints.get(p, p)] for p in parents]
        t = L["type"]
        if t == "Input":
            o = list(L["tensor"])
        elif t == "Convolution":
            N, h, w, c = ins[0]
            R, S, cin, cout = L["filter"]
            g = L.get("groups", 1)
            assert cin * g == c, (name, cin, g, c)  # the filter's Cin is per group, as convbench reads it
            o = [N, _out(h, R, L["strides"][1], L["padding"], 0),
                 _out(w, S, L["strides"][2], L["padding"], 1), cout]
            params += R * S * cin * cout
            params += cout if L.get("bias", True) else 0
            params += 2 * cout if L.get("normalizer_fn") == "batch_norm" else 0
        elif t == "GlobalAvgPool":
            o = [ins[0][0], 1, 1, ins[0][3]]
        elif t == "LayerNorm":
            o = list(ins[0])
            params += 2 * o[-1]
        elif t == "Scale":
            o = list(ins[0])
            params += o[-1]
        elif t in ("Pooling", "AvgPool"):
            N, h, w, c = ins[0]
            o = [N, _out(h, L["ksize"][1], L["strides"][1], L["padding"], 0),
                 _out(w, L["ksize"][2], L["strides"][2], L["padding"], 1), c]
        elif t == "InnerProduct":
            k = 1
            for d in ins[0][1:]:
                k *= d
            o = [ins[0][0], L["num_outputs"]]
            params += k * L["num_outputs"] + L["num_outputs"]
        elif t == "Concatenate":
            o = list(ins[0])
            o[L["dim"]] = sum(x[L["dim"]] for x in ins)
            for x in ins:
                assert all(x[d] == o[d] for d in range(4) if d != L["dim"]), name
        elif t == "Elementwise" and L.get("operation") == "mul":  # the second may be [N, 1, 1, C]
            assert len(ins) == 2 and (ins[1] == ins[0] or ins[1] == [ins[0][0], 1, 1, ins[0][3]]), (name, ins)
            o = list(ins[0])
        elif t == "Elementwise":
            assert all(x == ins[0] for x in ins), (name, ins)
            o = list(ins[0])
        elif t == "Dropout":
            o = list(ins[0])
        elif t == "Softmax":
            o = [ins[0][0], L["num_classes"]]
        else:
            raise ValueError(t)
        assert all(d > 0 for d in o), (name, o)
        shapes[name] = o

    for name, L in doc["layers"].items():
        if L["type"] == "Block":
            for sub, S in L["layers"].items():
                parents = L["parents"] if not S["parents"] else \
                    ["%s/%s" % (name, p) for p in S["parents"]]
                one("%s/%s" % (name, sub), S, parents)
            endpoints[name] = "%s/%s" % (name, L["endpoint"])
        else:
            one(name, L, L["parents"])
    return params, shapes


# ----------------------------------------------------------------------------- output
def dumps(obj, indent=0):
    """Paleo-like layout: 4-space indent, number lists inline, multi-parent lists one per line."""
    pad = " " * indent
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = []
        for k, v in obj.items():
            if k == "parents" and len(v) > 1:
                inner = ",\n".join(" " * (indent + 8) + json.dumps(p) for p in v)
                s = "[\n%s\n%s]" % (inner, " " * (indent + 4))
            else:
                s = dumps(v, indent + 4)
            items.append("%s%s: %s" % (" " * (indent + 4), json.dumps(k), s))
        return "{\n%s\n%s}" % (",\n".join(items), pad)
    if isinstance(obj, list):
        return "[" + ", ".join(json.dumps(x) for x in obj) + "]"
    return json.dumps(obj)


def main():
    write(NETS, "nets_expected.json")
    write(MODERN, "nets_expected_modern.json")


def write(nets, expected_file):
    expected = OrderedDict()
    os.makedirs(os.path.join(ROOT, "nets"), exist_ok=True)
    os.makedirs(os.path.join(ROOT, "tests", "data"), exist_ok=True)
    for key, ctor in nets.items():
        doc = ctor().doc()
        text = dumps(doc) + "\n"
        assert json.loads(text) == json.loads(json.dumps(doc))
        params, shapes = infer(doc)
        if key in EXPECTED_PARAMS:
            assert params == EXPECTED_PARAMS[key], (key, params)
        with open(os.path.join(ROOT, "nets", key + ".json"), "w") as f:
            f.write(text)
        expected[key] = OrderedDict([("params", params), ("layers", shapes)])
        print("%-18s %12s params  out %s" % (key, format(params, ","), list(shapes.values())[-1]))
    lines = ["{"]
    for i, (key, e) in enumerate(expected.items()):
        lines.append('  %s: {' % json.dumps(key))
        lines.append('    "params": %d,' % e["params"])
        lines.append('    "layers": {')
        names = list(e["layers"].keys())
        for j, nm in enumerate(names):
            lines.append('      %s: %s%s' % (json.dumps(nm), json.dumps(e["layers"][nm]),
                                             "," if j + 1 < len(names) else ""))
        lines.append('    }')
        lines.append('  }' + ("," if i + 1 < len(expected) else ""))
    lines.append("}")
    with open(os.path.join(ROOT, "tests", "data", expected_file), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
