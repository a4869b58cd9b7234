#!/usr/bin/python3
"""Small ONNX models for tests/test_onnx.c, written into DIR (Debian's python3-onnx, python3-torch).

  forward.txt  NAME BACKENDS: NAME.onnx with NAME.in (float32 input) and NAME.out (float32 output
               of the framework on the same weights); BACKENDS is "ref,cpu" where the engine runs
               every layer, "-" where it only has to import (layers another branch adds)
  json.txt     NAME<TAB>NEEDLE: `convbench import NAME.onnx` must contain NEEDLE (whitespace removed)
  errors.txt   NAME<TAB>NEEDLE: loading NAME.onnx must fail with one line containing NEEDLE

Every model is built here; a missing module is an error (CI installs them), never a skip.
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

out = sys.argv[1]
rng = np.random.default_rng(13)
forward, jsons, errors = [], [], []


def arr(name, *shape, pos=False):
    a = rng.standard_normal(shape).astype(np.float32)
    return nh.from_array(np.abs(a) + 0.5 if pos else a, name)


def model(name, nodes, inits, in_shape, out_shape, opset=13, inputs=None):
    g = h.make_graph(nodes, name, inputs or [h.make_tensor_value_info("x", T.FLOAT, in_shape)],
                     [h.make_tensor_value_info("y", T.FLOAT, out_shape)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    path = os.path.join(out, name + ".onnx")
    onnx.save(m, path)
    return path


# ---- exported from PyTorch: the engine's output must match torch's ----------------------------
class SE(torch.nn.Module):
    def __init__(s, c, r):
        super().__init__()
        s.fc1, s.fc2 = torch.nn.Conv2d(c, r, 1), torch.nn.Conv2d(r, c, 1)

    def forward(s, x):
        w = torch.nn.functional.adaptive_avg_pool2d(x, 1)
        return x * torch.sigmoid(s.fc2(torch.relu(s.fc1(w))))


class Block(torch.nn.Module):  # residual, grouped and depthwise, dilated, concat
    def __init__(s):
        super().__init__()
        n = torch.nn
        s.c1 = n.Sequential(n.Conv2d(3, 8, 3, 2, 1, bias=False), n.BatchNorm2d(8), n.ReLU())
        s.dw = n.Sequential(n.Conv2d(8, 8, 3, 1, 1, groups=8, bias=False), n.BatchNorm2d(8), n.ReLU())
        s.gr = n.Conv2d(8, 8, 3, 1, 2, dilation=2, groups=2)
        s.pw = n.Conv2d(16, 8, 1)
        s.pool = n.MaxPool2d(3, 2, 1)
        s.avg = n.AvgPool2d(2, 2)
        s.fc = n.Linear(8 * 2 * 2, 5)

    def forward(s, x):
        x = s.c1(x)
        y = torch.relu(s.dw(x) + x)
        z = torch.cat([y, s.gr(y)], 1)
        z = s.pool(s.pw(z))
        return s.fc(torch.flatten(s.avg(z), 1))


class SqueezeExcite(torch.nn.Module):  # SE's broadcast product, global pooling, ReLU only
    def __init__(s):
        super().__init__()
        s.c1 = torch.nn.Conv2d(3, 8, 3, 1, 1)
        s.fc1, s.fc2 = torch.nn.Conv2d(8, 4, 1), torch.nn.Conv2d(4, 8, 1)
        s.fc = torch.nn.Linear(8, 4)

    def forward(s, x):
        x = torch.relu(s.c1(x))
        w = s.fc2(torch.relu(s.fc1(torch.nn.functional.adaptive_avg_pool2d(x, 1))))
        x = x * w
        return s.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


class Mobile(torch.nn.Module):  # the activations of MobileNetV2/V3 and EfficientNet, SE
    def __init__(s):
        super().__init__()
        n = torch.nn
        s.c1 = n.Sequential(n.Conv2d(3, 8, 3, 2, 1, bias=False), n.BatchNorm2d(8, eps=1e-3), n.SiLU())
        s.c2 = n.Sequential(n.Conv2d(8, 8, 3, 1, 1, groups=8), n.ReLU6())
        s.se = SE(8, 4)
        s.c3 = n.Sequential(n.Conv2d(8, 8, 1), n.Hardswish())
        s.c4 = n.Sequential(n.Conv2d(8, 8, 1), n.Hardsigmoid())
        s.fc = n.Linear(8, 4)

    def forward(s, x):
        x = s.se(s.c2(s.c1(x)))
        x = s.c4(s.c3(x))
        return s.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


class Next(torch.nn.Module):  # ConvNeXt's block: LayerNorm over channels between permutes, GELU, layer scale
    def __init__(s, act=torch.nn.functional.gelu):
        super().__init__()
        s.act = act
        n = torch.nn
        s.stem = n.Conv2d(3, 8, 2, 2)
        s.dw = n.Conv2d(8, 8, 7, padding=3, groups=8)
        s.ln = n.LayerNorm(8, eps=1e-6)
        s.l1, s.l2 = n.Linear(8, 32), n.Linear(32, 8)
        s.gamma = n.Parameter(torch.randn(8, 1, 1))
        s.fc = n.Linear(8, 3)

    def forward(s, x):
        x = s.stem(x)
        y = s.dw(x).permute(0, 2, 3, 1)
        y = s.l2(s.act(s.l1(s.ln(y)))).permute(0, 3, 1, 2)
        x = x + s.gamma * y
        return s.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


def export(name, net, shape, backends, opset=13):
    torch.manual_seed(13)
    for p in net.parameters():  # trained-looking weights; batch statistics away from 0 and 1
        torch.nn.init.normal_(p, 0, 0.3)
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.normal_(0, 0.2)
            m.running_var.uniform_(0.5, 1.5)
    net.eval()
    x = torch.randn(*shape)
    with torch.no_grad():
        y = net(x)
    path = os.path.join(out, name + ".onnx")
    # training=PRESERVE keeps BatchNormalization nodes (an eval export folds them into the convolutions)
    torch.onnx.export(net, x, path, opset_version=opset, input_names=["x"], output_names=["y"],
                      training=torch.onnx.TrainingMode.PRESERVE)
    x.numpy().astype(np.float32).tofile(os.path.join(out, name + ".in"))
    y.numpy().astype(np.float32).tofile(os.path.join(out, name + ".out"))
    forward.append((name, backends))


export("torch_block", Block(), (2, 3, 16, 16), "ref,cpu")
export("torch_mobile", Mobile(), (2, 3, 16, 16), "-")
export("torch_next", Next(), (2, 3, 16, 16), "-", opset=17)
# the activations above are engine layers of another branch; these two run here on the same kinds
export("torch_se", SqueezeExcite(), (2, 3, 10, 12), "ref,cpu")
export("torch_next_relu", Next(torch.relu), (2, 3, 16, 16), "ref,cpu", opset=17)
jsons += [("torch_block", '"dilations":[2,2]'), ("torch_block", '"groups":8'), ("torch_block", '"normalizer_fn":"batch_norm"'),
          ("torch_mobile", '"fn":"silu"'), ("torch_mobile", '"activation_fn":"relu6"'),
          ("torch_mobile", '"activation_fn":"hardswish"'), ("torch_mobile", '"activation_fn":"hardsigmoid"'),
          ("torch_mobile", '"operation":"mul"'), ("torch_mobile", '"type":"GlobalAvgPool"'),
          ("torch_mobile", '"type":"BatchNorm","epsilon":0.001'),
          ("torch_next", '"type":"LayerNorm","epsilon":1e-06'), ("torch_next", '"activation_fn":"gelu"'),
          ("torch_next", '"type":"Scale"'), ("torch_next", '"filter":[1,1,8,32]')]

# ---- built with onnx.helper: one operator or attribute at a time --------------------------------
conv = lambda name, **kw: h.make_node("Conv", ["x", "w"], ["y"], name=name, **kw)
w3 = arr("w", 4, 3, 3, 3)
model("asym_pads", [conv("c", pads=[0, 0, 1, 1], strides=[2, 2])], [w3], [1, 3, 8, 8], [1, 4, 4, 4])
model("same_upper", [conv("c", auto_pad="SAME_UPPER", strides=[2, 2])], [w3], [1, 3, 9, 9], [1, 4, 5, 5])
jsons += [("asym_pads", '"padding":[0,0,1,1]'), ("same_upper", '"padding":"SAME"'), ("same_upper", '"bias":false')]
act_cases = [("Clip", {}, ["min0", "max6"], "relu6"), ("Sigmoid", {}, [], '"fn":"sigmoid"'),
             ("HardSigmoid", {"alpha": 1 / 6}, [], '"fn":"hardsigmoid"'), ("HardSwish", {}, [], '"fn":"hardswish"'),
             ("Relu", {}, [], '"type":"ReLU"')]
for op, kw, extra, needle in act_cases:
    inits = [nh.from_array(np.array(0, np.float32), "min0"), nh.from_array(np.array(6, np.float32), "max6")] if extra else []
    # a MaxPool first: an activation that cannot be fused becomes its own layer
    model("act_" + op, [h.make_node("MaxPool", ["x"], ["p"], kernel_shape=[1, 1]),
                        h.make_node(op, ["p"] + extra, ["y"], name="a", **kw)], inits, [1, 3, 4, 4], [1, 3, 4, 4])
    jsons.append(("act_" + op, needle))
model("matmul_bias", [h.make_node("Flatten", ["x"], ["f"]), h.make_node("MatMul", ["f", "w"], ["m"], name="mm"),
                      h.make_node("Add", ["m", "b"], ["y"])], [arr("w", 12, 5), arr("b", 5)], [2, 3, 2, 2], [2, 5])
jsons += [("matmul_bias", '"num_outputs":5'), ("matmul_bias", '"bias":true')]

# ---- error paths: one line, exit 2 ------------------------------------------------------------
model("unknown_op", [h.make_node("Celu", ["x"], ["y"], name="odd")], [], [1, 3, 4, 4], [1, 3, 4, 4])
errors.append(("unknown_op", "node 'odd' (Celu): operator Celu is not supported"))
model("bad_attr", [conv("c", pads=[1, 1, 1, 1], kernel_shape=[3, 3], foo=3)], [w3], [1, 3, 8, 8], [1, 4, 8, 8])
errors.append(("bad_attr", "node 'c' (Conv): attribute 'foo' is not supported"))
model("dynamic", [conv("c")], [w3], [1, 3, "H", 8], [1, 4, 6, 6])
errors.append(("dynamic", "dimension 2 is dynamic ('H')"))
model("no_init", [conv("c")], [], [1, 3, 8, 8], [1, 4, 6, 6])
errors.append(("no_init", "node 'c' (Conv): input 'w' is neither a graph input, an initializer nor an earlier node's output"))
model("ceil", [h.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[2, 2], ceil_mode=1)], [], [1, 3, 5, 5], [1, 3, 3, 3])
errors.append(("ceil", "node 'p' (MaxPool): ceil_mode=1 is not supported"))
model("transpose", [h.make_node("Transpose", ["x"], ["y"], name="t", perm=[0, 1, 3, 2])], [], [1, 3, 5, 5], [1, 3, 5, 5])
errors.append(("transpose", "node 't' (Transpose): only a Transpose between NCHW and NHWC"))
good = open(os.path.join(out, "asym_pads.onnx"), "rb").read()
for name, data in [("truncated", good[: len(good) * 2 // 3]), ("garbage", bytes(range(256)) * 4), ("empty", b"")]:
    open(os.path.join(out, name + ".onnx"), "wb").write(data)
errors += [("truncated", "not a valid ONNX model"), ("garbage", "not a valid ONNX model"), ("empty", "no graph")]
# damaged copies of a real model: every one must load or fail with one line, never crash (the C test
# runs them under ASan too)
real = open(os.path.join(out, "torch_block.onnx"), "rb").read()
fuzz = []
for i in range(40):
    b = bytearray(real[: len(real) * (i + 1) // 41] if i % 2 else real)
    for _ in range(1 + i % 4):
        b[int(rng.integers(len(b)))] ^= 1 << int(rng.integers(8))
    open(os.path.join(out, "fuzz%d.onnx" % i), "wb").write(bytes(b))
    fuzz.append("fuzz%d" % i)
with open(os.path.join(out, "fuzz.txt"), "w") as f:
    f.writelines(n + "\n" for n in fuzz)

with open(os.path.join(out, "forward.txt"), "w") as f:
    f.writelines(f"{n} {b}\n" for n, b in forward)
with open(os.path.join(out, "json.txt"), "w") as f:
    f.writelines(f"{n}\t{s}\n" for n, s in jsons)
with open(os.path.join(out, "errors.txt"), "w") as f:
    f.writelines(f"{n}\t{s}\n" for n, s in errors)
