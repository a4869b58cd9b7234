#!/usr/bin/env bash
# The command line as a user meets it: --help everywhere, formats, Paleo's numbers, bad flags
# and bad files (one clear line, exit 2), result files written whole or not at all.
set -u
cb=${1:-build/convbench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

# expect NAME STATUS NEEDLE -- command...: exit status and a needle in stdout+stderr
expect() {
    local name=$1 want=$2 needle=$3; shift 4
    local out rc
    out=$("$@" 2>&1); rc=$?
    if [ "$rc" -ne "$want" ]; then bad "$name: exit $rc, want $want: $(printf '%s' "$out" | tail -2)"; return; fi
    if [ -n "$needle" ] && ! printf '%s' "$out" | grep -qF -- "$needle"; then bad "$name: output lacks '$needle': $(printf '%s' "$out" | tail -3)"; return; fi
    ok "$name"
}
# a bad-input error is one line on stderr
one_line() {
    local name=$1; shift
    local n
    n=$("$@" 2>&1 >/dev/null | wc -l)
    if [ "$n" -eq 1 ]; then ok "$name"; else bad "$name: $n lines on stderr"; fi
}

expect "no command" 2 "usage" -- "$cb"
expect "top help" 0 "commands:" -- "$cb" --help
expect "unknown command" 2 "unknown command 'frob'" -- "$cb" frob
for c in $("$cb" --help | awk '/^commands:/{f=1;next} f && !NF {exit} f {print $1}'); do
    expect "$c --help" 0 "usage: convbench $c" -- "$cb" "$c" --help
    expect "$c bad flag" 2 "unknown option '--bogus'" -- "$cb" "$c" --bogus
done

expect "paleo vgg16 params" 0 "Number of params: 138,357,544 (553,430,176 Bytes)" -- "$cb" summary vgg16
expect "alexnet params" 0 "Number of params: 61,100,840" -- "$cb" summary alexnet
expect "summary --batch" 0 "[2, 224, 224, 64]" -- "$cb" summary vgg16 --batch 2
# layers (L1-L5) and the own-algorithm list
expect "layers cpu L5 b1" 0 "L5" -- "$cb" layers --backend cpu --batch 1 --layers L5 --iters 1 --warmup 0 --quiet
expect "layers bad layer" 2 "--layers: 'L9'" -- "$cb" layers --layers L9
expect "layers bad batch" 2 "--batch" -- "$cb" layers --batch 0
expect "layers csv best row" 0 "L4,best" -- "$cb" layers --backend cpu,ref --batch 1 --layers L4 --iters 1 --warmup 0 --quiet --format csv
expect "algos json" 0 '"tables"' -- "$cb" algos --format json
expect "fullpass bad conv-algo" 2 "--conv-algo" -- "$cb" fullpass alexnet --backend cpu --conv-algo nope
for f in table csv json md; do
    expect "summary --format $f" 0 "conv1" -- "$cb" summary alexnet --format "$f"
done
expect "bad --format" 2 "--format: 'xml'" -- "$cb" summary alexnet --format xml
expect "bad --batch" 2 "--batch: 'abc' is not an integer" -- "$cb" summary alexnet --batch abc
expect "zero --batch" 2 "--batch: 0 must be in" -- "$cb" summary alexnet --batch 0
expect "missing value" 2 "--batch needs a value" -- "$cb" summary alexnet --batch
expect "missing net" 2 "cannot open" -- "$cb" summary "$tmp/none.json"
expect "extra argument" 2 "unexpected argument" -- "$cb" summary alexnet vgg16

# JSON: valid, with the environment, written whole
"$cb" summary alexnet --format json --output "$tmp/s.json" >/dev/null 2>&1
if python3 -c "import json,sys; d=json.load(open('$tmp/s.json')); assert d['convbench_commit'] and d['cpu'] and d['tables']['layers']" 2>/dev/null; then ok "json has environment and tables"; else bad "json output"; fi
if ls "$tmp" | grep -q tmp; then bad "temporary file left behind"; else ok "no temporary left"; fi
expect "unwritable output" 2 "cannot write" -- "$cb" summary alexnet --output "$tmp/no/such/dir/x.json"
[ -e "$tmp/no/such/dir/x.json" ] && bad "partial output exists" || ok "nothing written on failure"

# malformed descriptions: one line naming file and layer, exit 2
printf '{"name": "x",\n "layers": {"data": {"parents": [], "type": "Input", "tensor": [1, 8, 8, 3]},\n  "c": {"parents": ["data"] "type": "ReLU"}}}\n' > "$tmp/syntax.json"
expect "syntax error" 2 "syntax.json: JSON syntax error at line 3, column" -- "$cb" summary "$tmp/syntax.json"
one_line "syntax error one line" "$cb" summary "$tmp/syntax.json"
printf '{"layers": {"data": {"parents": [], "type": "Input", "tensor": [1, 8, 8, 3]}, "c": {"parents": ["data"], "type": "Convolution", "filter": [11, 11, 3, 4], "padding": "VALID"}}}' > "$tmp/big.json"
expect "kernel too large" 2 "layer 'c': kernel height 11 is larger" -- "$cb" summary "$tmp/big.json"
printf '{"layers": {"data": {"parents": [], "type": "Input", "tensor": [1, 8, 8, 3]}, "c": {"parents": ["dta"], "type": "ReLU"}}}' > "$tmp/parent.json"
expect "unknown parent" 2 "layer 'c': unknown parent 'dta'" -- "$cb" fullpass "$tmp/parent.json"
: > "$tmp/empty.json"
expect "empty file" 2 "empty.json" -- "$cb" summary "$tmp/empty.json"
head -c 300 nets/alexnet.json > "$tmp/trunc.json"
expect "truncated file" 2 "trunc.json: JSON syntax error" -- "$cb" summary "$tmp/trunc.json"

# running: a small network end to end, every format
expect "fullpass lenet" 0 "grad-weight" -- "$cb" fullpass fashion-lenet --batch 8 --warmup 1 --iters 2 --update --quiet
expect "fullpass no criterion" 0 "net backward" -- "$cb" fullpass fashion-lenet --batch 4 --warmup 0 --iters 1 --no-criterion --no-data-grad --quiet
"$cb" fullpass fashion-lenet --batch 4 --warmup 0 --iters 2 --format json --quiet > "$tmp/f.json" 2>/dev/null
if python3 -c "import json; d=json.load(open('$tmp/f.json')); r={x['phase'].strip():x['median_ms'] for x in d['tables']['fullpass']}; assert r['total']>0 and d['threads']>=1; assert r['net backward'] >= 0.8*(r['grad-input']+r['grad-weight']) > 0" 2>/dev/null; then ok "fullpass json: backward covers its split"; else bad "fullpass json"; fi
# the breakdown by layer kind: every layer kind of the net has a part, and parts plus gaps are the step
"$cb" fullpass resnet50 --batch 1 --warmup 1 --iters 2 --update --format json --quiet > "$tmp/r.json" 2>/dev/null
if python3 -c "
import json; d=json.load(open('$tmp/r.json')); b={x['part']:x['total_ms'] for x in d['tables']['breakdown']}
step=b.pop('step (measured)'); gaps=b.pop('gaps (launches, syncs; step - parts)')
assert {'Convolution','batch norm (+act), fused','Elementwise','Pooling','InnerProduct','update'} <= set(b), b
assert abs(sum(b.values()) + gaps - step) < 1e-6 * step and 0.8 < d['breakdown_coverage'] < 1.2, (sum(b.values()), step)
" 2>"$tmp/err"; then ok "fullpass breakdown adds up to the step"; else bad "fullpass breakdown: $(tail -1 "$tmp/err")"; fi
expect "fullpass progress" 0 "fullpass: iteration 2/2" -- "$cb" fullpass fashion-lenet --batch 4 --warmup 0 --iters 2
expect "profile backward filter" 0 "Sum" -- "$cb" profile fashion-lenet --batch 4 --direction backward --wrt filter --iters 2 --quiet
expect "profile two backends" 0 "ref_ms" -- "$cb" profile fashion-lenet --batch 2 --backend cpu,ref --iters 1 --warmup 0 --quiet --format csv
expect "bad backend" 2 "unknown backend 'tpu'" -- "$cb" fullpass fashion-lenet --backend tpu --quiet
expect "bad direction" 2 "--direction: 'sideways'" -- "$cb" profile fashion-lenet --direction sideways
expect "bad precision on cpu" 2 "backend cpu does not compute in bf16 [unsupported: precision]" -- "$cb" fullpass fashion-lenet --precision bf16
expect "bad iters" 2 "--iters: 0 must be in" -- "$cb" fullpass fashion-lenet --iters 0
expect "out of memory" 3 "out of host memory" -- "$cb" fullpass vgg16 --batch 1000000 --quiet

# the other commands' bad inputs
expect "train missing data" 2 "$tmp/nodata" -- "$cb" train fashion-lenet --data "$tmp/nodata" --quiet
expect "train wrong size" 2 "pass --resize 86" -- "$cb" train fashion-ece408 --epochs 1 --limit 64 --quiet
expect "infer missing weights" 2 "$tmp/none.cbw" -- "$cb" infer fashion-lenet --weights "$tmp/none.cbw" --quiet
expect "predict unknown device" 2 "nodev" -- "$cb" predict alexnet --device nodev
expect "predict paleo" 0 "conv1" -- "$cb" predict alexnet --device titanx-maxwell --paleo
expect "simulate bad workers" 2 "--workers" -- "$cb" simulate alexnet --device h200 --workers 0
expect "calibrate bad backend" 2 "--backend" -- "$cb" calibrate --backend tpu
# GPU calibration: without a GPU one line and status 3; the fit again from saved H200 samples; the entry as --device
if ! nvidia-smi -L >/dev/null 2>&1; then
    expect "calibrate cudnn without a GPU" 3 "cudnn" -- "$cb" calibrate --backend cudnn --quiet
    one_line "calibrate without a GPU: one line" "$cb" calibrate --backend cuda --quiet
fi
# GPU runs with NHWC / bf16 storage: one clean line without a GPU (status 3; 2 in a build without
# CUDA); the cuda backend (own kernels) refuses NHWC, GPU or not
if "$cb" algos 2>/dev/null | grep -q igemm-simt; then # a CUDA build
    if ! nvidia-smi -L >/dev/null 2>&1; then
        expect "cudnn nhwc bf16 without a GPU" 3 "no CUDA device" -- "$cb" fullpass alexnet --backend cudnn --layout nhwc --precision bf16
        one_line "cudnn nhwc bf16 without a GPU: one line" "$cb" fullpass alexnet --backend cudnn --layout nhwc --precision bf16 --quiet
        expect "auto nhwc without a GPU" 3 "no CUDA device" -- "$cb" fullpass alexnet --backend auto --layout nhwc
    fi
    expect "cuda nhwc refused" 2 "backend cuda stores nchw only" -- "$cb" fullpass alexnet --backend cuda --layout nhwc
else
    expect "cudnn nhwc bf16 without CUDA" 2 "no CUDA" -- "$cb" fullpass alexnet --backend cudnn --layout nhwc --precision bf16
fi
expect "calibrate bad --shapes" 2 "--shapes" -- "$cb" calibrate --backend cudnn --shapes 5-2
expect "calibrate refit" 0 "FWD_WINOGRAD_NONFUSED" -- "$cb" calibrate --refit tests/data/h200-cal-subset.json --save "$tmp/cal.json" --quiet
expect "predict on a calibrated entry" 0 "FWD_" -- "$cb" predict vgg16 --batch 8 --device "$tmp/cal.json"
printf '{"name": "x", "peak": {"fp32": 1e12}, "mem_bw": 1e11}' > "$tmp/nosamples.json"
expect "refit without samples" 2 "no GPU calibration samples" -- "$cb" calibrate --refit "$tmp/nosamples.json"
expect "predict bad --kinds" 2 "--kinds" -- "$cb" predict alexnet --device h200 --kinds convs

# ONNX: import to a file, a .onnx NET in every command (its initializers are its weights), bad files
if /usr/bin/python3 - "$tmp/m.onnx" <<'PY'
import sys, numpy as np, onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T
w = nh.from_array(np.ones((4, 1, 3, 3), np.float32), "w")
f = nh.from_array(np.ones((10, 4 * 14 * 14), np.float32), "f")
nodes = [h.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]), h.make_node("Relu", ["c"], ["r"]),
         h.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
         h.make_node("Flatten", ["p"], ["fl"]), h.make_node("Gemm", ["fl", "f"], ["y"], name="fc", transB=1)]
g = h.make_graph(nodes, "tiny", [h.make_tensor_value_info("x", T.FLOAT, ["N", 1, 28, 28])],
                 [h.make_tensor_value_info("y", T.FLOAT, ["N", 10])], [w, f])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), sys.argv[1])
PY
then
    expect "import stdout" 0 '"activation_fn":	"relu"' -- "$cb" import "$tmp/m.onnx"
    expect "import -o" 0 "" -- "$cb" import "$tmp/m.onnx" -o "$tmp/m.json" --batch 3 --weights-out "$tmp/m.cbw"
    expect "imported json loads" 0 "[3, 28, 28, 4]" -- "$cb" summary "$tmp/m.json"
    expect "summary .onnx" 0 "Number of params: 7,876" -- "$cb" summary "$tmp/m.onnx" --batch 2
    expect "fullpass .onnx" 0 "images_per_s" -- "$cb" fullpass "$tmp/m.onnx" --batch 2 --iters 1 --warmup 0 --quiet
    expect "infer .onnx, own weights" 0 "test_accuracy" -- "$cb" infer "$tmp/m.onnx" --batch 1000 --quiet
    expect "infer .json, imported weights" 0 "test_accuracy" -- "$cb" infer "$tmp/m.json" --weights "$tmp/m.cbw" --batch 1000 --quiet
    head -c 200 "$tmp/m.onnx" > "$tmp/cut.onnx"
    expect "import truncated" 2 "not a valid ONNX model" -- "$cb" import "$tmp/cut.onnx"
    one_line "import truncated one line" "$cb" import "$tmp/cut.onnx"
    expect "summary truncated .onnx" 2 "not a valid ONNX model" -- "$cb" summary "$tmp/cut.onnx"
    expect "import missing file" 2 "cannot open" -- "$cb" import "$tmp/none.onnx"
else
    bad "onnx: /usr/bin/python3 with onnx and numpy (Debian's python3-onnx) could not build a model"
fi
expect "infer without weights" 2 "--weights FILE is required" -- "$cb" infer fashion-lenet --quiet

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
