#!/usr/bin/python3
"""Issue 13's check that ONNX import and the built-ins agree: exports torchvision's MobileNetV2,
EfficientNet-B0, ResNeXt-50 32x4d and ConvNeXt-Tiny to ONNX (Debian's python3-torch and
python3-torchvision, under /usr/bin/python3; symbolic batch, BatchNormalization kept), then checks
that `convbench summary MODEL.onnx` gives the built-in's parameter count (batch-norm scale and shift
included), its forward, backward-data and backward-filter FLOPs (over the layers both have: an
eval-mode export has no Dropout, and torchvision's models end without the Softmax that the
built-ins add for the criterion), and the same output shape, filter and parameter count for every
convolution and fully connected layer in order; and that
`convbench fullpass MODEL.onnx` runs a training step (cpu backend, batch 1). Prints one line per
check and "N passed, M failed".

Usage: /usr/bin/python3 tools/check_onnx_builtins.py CONVBENCH     (tests/run_tests.sh runs it)
"""
import json
import os
import subprocess
import sys
import tempfile

import torch
import torchvision

MODELS = {"mobilenet-v2": "mobilenet_v2", "efficientnet-b0": "efficientnet_b0", "resnext50": "resnext50_32x4d",
          "convnext-tiny": "convnext_tiny"}
passed = failed = 0


def check(what, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok   " + what)
    else:
        failed += 1
        print("FAIL %s: %s" % (what, detail))


def summary(cb, net, tmp):
    out = os.path.join(tmp, "s.json")
    r = subprocess.run([cb, "summary", net, "--batch", "2", "--format", "json", "--quiet", "--output", out],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return json.load(open(out))["tables"], ""


def totals(t):
    return {r["quantity"].strip(): r["value"] for r in t["totals"] if r["value"] is not None}


def flops(t, key):
    """GFLOP of one direction over every layer but Dropout and Softmax (see above)"""
    return sum(L[key] for L in t["layers"] if L["type"] not in ("Dropout", "Softmax", None))


def weighted(t):
    return [(L["type"], L["output"], L["filters"], L["params"]) for L in t["layers"] if L["type"] in ("Convolution", "InnerProduct")]


def main():
    cb = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/convbench")
    torch.manual_seed(1)
    with tempfile.TemporaryDirectory() as tmp:
        for builtin, tv in MODELS.items():
            model = getattr(torchvision.models, tv)().eval()
            path = os.path.join(tmp, tv + ".onnx")
            torch.onnx.export(model, torch.randn(1, 3, 224, 224), path, opset_version=17, input_names=["x"], output_names=["y"],
                              dynamic_axes={"x": {0: "N"}, "y": {0: "N"}}, training=torch.onnx.TrainingMode.PRESERVE)
            imp, err = summary(cb, path, tmp)
            ref, err2 = summary(cb, builtin, tmp)
            check("%s: summary of the exported .onnx" % builtin, imp is not None, err)
            check("%s: summary of the built-in" % builtin, ref is not None, err2)
            if imp is None or ref is None:
                continue
            torch_params = sum(p.numel() for p in model.parameters())
            ti, tr = totals(imp), totals(ref)
            check("%s: parameters %d (torchvision %d)" % (builtin, ti.get("parameters", -1), torch_params),
                  ti.get("parameters") == tr.get("parameters") == torch_params, "built-in %s" % tr.get("parameters"))
            for key in ("fwd_gflop", "bwd_data_gflop", "bwd_filter_gflop"):
                a, b = flops(imp, key), flops(ref, key)
                check("%s: %s %.6f" % (builtin, key, a), abs(a - b) <= 1e-9 * max(abs(b), 1), "built-in %.9f" % b)
            wi, wr = weighted(imp), weighted(ref)
            first = next((k for k, (x, y) in enumerate(zip(wi, wr)) if x != y), None)
            check("%s: %d conv/FC layers, shapes, filters and parameters in order" % (builtin, len(wi)),
                  len(wi) == len(wr) and first is None,
                  "%d vs %d layers; first difference at %s: %s vs %s" % (len(wi), len(wr), first, wi[first] if first is not None else "",
                                                                        wr[first] if first is not None else ""))
            r = subprocess.run([cb, "fullpass", path, "--batch", "1", "--backend", "cpu", "--iters", "1", "--warmup", "0", "--quiet",
                                "--format", "csv"], capture_output=True, text=True, timeout=600)
            check("%s: fullpass of the exported .onnx (cpu, batch 1)" % builtin, r.returncode == 0 and "images_per_s" in r.stdout,
                  r.stderr.strip()[-300:])
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
