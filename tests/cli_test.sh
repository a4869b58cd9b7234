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
expect "summary: memory planned by liveness" 0 "train memory planned by liveness, bf16 activations" -- "$cb" summary resnet50 --batch 8
# --graph: every layer with its parents, shapes, all four pads (the trailing ones as used: ResNet-50's
# conv1 reads 2 of its 3, a TF SAME stride-2 layer 1 and 0 leading) and fused ops
"$cb" summary resnet50 --batch 2 --graph --format json --quiet --output "$tmp/graph.json" 2>/dev/null
if python3 -c "
import json; d = json.load(open('$tmp/graph.json')); g = {r['layer']: r for r in d['tables']['graph']}
assert len(g) == len(d['tables']['layers']) - 1, 'a row per layer'
c = g['conv1']; assert (c['r'], c['stride_h'], c['pad_top'], c['pad_bottom'], c['outputs'], c['batch_norm'], c['activation']) == (7, 2, 3, 2, 64, 'yes', 'relu'), c
assert c['in'] == '2,3,224,224' and c['out'] == '2,64,112,112', c
s = [r for r in g.values() if r['op'] == 'Elementwise'][0]; assert len(s['parents'].split('|')) == 2, s
assert g[d['tables']['graph'][-1]['layer']]['out'].startswith('2,1000'), 'the last layer'
" 2>"$tmp/py.err"; then ok "summary --graph: parents, shapes, pads, fused ops"; else bad "summary --graph: $(tail -2 "$tmp/py.err")"; fi
python3 - "$tmp" <<'PY' > "$tmp/same.json"
import json, sys
print(json.dumps({"name": "same", "layers": {"data": {"parents": [], "type": "Input", "tensor": [1, 8, 8, 3]},
    "conv": {"parents": ["data"], "type": "Convolution", "filter": [3, 3, 3, 4], "padding": "SAME", "strides": [1, 2, 2, 1],
             "activation_fn": None, "bias": False}}}))
PY
if "$cb" summary "$tmp/same.json" --graph --format csv --quiet 2>/dev/null | python3 -c "
import csv, sys; r = [r for r in csv.DictReader(sys.stdin) if r['table'] == 'graph' and r['layer'] == 'conv'][0]
assert (r['pad_top'], r['pad_bottom'], r['pad_left'], r['pad_right']) == ('0', '1', '0', '1'), r" 2>"$tmp/py.err"; then
    ok "summary --graph: TF SAME's asymmetric pads"; else bad "summary --graph asymmetric: $(tail -2 "$tmp/py.err")"; fi
# a concatenation of 300 long-named branches: every parent listed, none cut
python3 -c "
import json
L = {'data': {'parents': [], 'type': 'Input', 'tensor': [1, 4, 4, 2]}}
for i in range(300):
    L['a_rather_long_branch_name_%03d' % i] = {'parents': ['data'], 'type': 'Convolution', 'filter': [1, 1, 2, 2], 'padding': 'VALID',
                                               'strides': [1, 1, 1, 1], 'activation_fn': None, 'bias': False}
L['cat'] = {'parents': [n for n in L if n != 'data'], 'type': 'Concatenate', 'dim': 3}
json.dump({'name': 'wide', 'layers': L}, open('$tmp/wide.json', 'w'))"
if "$cb" summary "$tmp/wide.json" --graph --format json --quiet 2>/dev/null | python3 -c "
import json, sys; r = [r for r in json.load(sys.stdin)['tables']['graph'] if r['layer'] == 'cat'][0]
assert len(r['parents'].split('|')) == 300 and r['parents'].endswith('_299'), len(r['parents'])" 2>"$tmp/py.err"; then
    ok "summary --graph: 300 parents, none cut"; else bad "summary --graph wide: $(tail -2 "$tmp/py.err")"; fi
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
# the JSON schema: version, booleans, the full command line, commit and dirty flag, raw samples
if python3 -c "
import json; d=json.load(open('$tmp/f.json'))
assert d['schema_version'] == 2 and d['verb'] == 'fullpass'
assert d['argv'] == ['convbench', 'fullpass', 'fashion-lenet', '--batch', '4', '--warmup', '0', '--iters', '2', '--format', 'json', '--quiet']
assert d['command'] == 'convbench fullpass fashion-lenet --batch 4 --warmup 0 --iters 2 --format json --quiet'
assert d['update'] is False and d['data_grad'] is True and isinstance(d['convbench_dirty'], bool) and d['convbench_commit']
assert d['host_max_rss_mb'] > 0 and d['memory_mb'] > 0 and 0 < d['plan_s'] < 60
s = [x for x in d['tables']['samples'] if x['phase'] == 'total']
assert [x['iteration'] for x in s] == [0, 1] and all(x['ms'] > 0 for x in s)
r = {x['phase'].strip(): x for x in d['tables']['fullpass']}['total']
assert r['min_ms'] <= r['median_ms'] <= r['max_ms'] and r['stddev_ms'] >= 0 and r['iqr_pct'] is None  # 2 steps: no spread
" 2>"$tmp/py.err"; then ok "json schema: version, booleans, command line, samples"; else bad "json schema: $(tail -2 "$tmp/py.err")"; fi
# CSV: one long table with a table column and the header fields on every row
"$cb" fullpass fashion-lenet --batch 4 --warmup 0 --iters 3 --format csv --quiet > "$tmp/f.csv" 2>/dev/null
if python3 -c "
import csv; rows = list(csv.DictReader(open('$tmp/f.csv')))
assert {r['table'] for r in rows} == {'fullpass', 'samples', 'breakdown', 'memory'}
assert {r['kind'] for r in rows if r['table'] == 'memory'} >= {'parameters', 'layer outputs', 'activation gradients', 'shared by liveness (arena)', 'total planned'}
mem = {r['kind']: r for r in rows if r['table'] == 'memory'}
assert float(mem['parameters']['at_peak_mib']) == float(mem['parameters']['mib']) and float(mem['total planned']['at_peak_mib']) == float(mem['total planned']['mib'])
assert 0 <= float(mem['layer outputs']['at_peak_mib']) <= float(mem['layer outputs']['mib'])
assert all(r['batch'] == '4' and r['backend'] == 'cpu' and r['update'] == 'false' and r['convbench_commit'] for r in rows)
assert len([r for r in rows if r['table'] == 'samples' and r['phase'] == 'total']) == 3
assert rows[0]['command'].startswith('convbench fullpass fashion-lenet')
" 2>"$tmp/py.err"; then ok "csv: long format, header fields included"; else bad "csv: $(tail -2 "$tmp/py.err")"; fi
CONVBENCH_MEMORY=bogus expect "CONVBENCH_MEMORY refused by name" 2 "CONVBENCH_MEMORY: 'bogus' is not reuse or separate" -- "$cb" fullpass fashion-lenet --batch 2 --warmup 0 --iters 1 --quiet
CONVBENCH_MEMORY=separate expect "CONVBENCH_MEMORY=separate runs" 0 "memory_mode separate" -- "$cb" fullpass fashion-lenet --batch 2 --warmup 0 --iters 1 --quiet
# (in a CUDA build, before any GPU is looked for: the same answer on a machine without one)
if "$cb" algos 2>/dev/null | grep -q igemm-simt; then
    for be in cuda cudnn auto; do
        CONVBENCH_WG_BLOCKS=0x3 expect "CONVBENCH_WG_BLOCKS refused by name ($be)" 2 "CONVBENCH_WG_BLOCKS: '0x3' is not a count of blocks" -- "$cb" fullpass fashion-lenet --backend $be --batch 2 --warmup 0 --iters 1 --quiet
        CONVBENCH_WG_TMA=yes expect "CONVBENCH_WG_TMA refused by name ($be)" 2 "CONVBENCH_WG_TMA: 'yes' is not on, off, 1 or 0" -- "$cb" fullpass fashion-lenet --backend $be --batch 2 --warmup 0 --iters 1 --quiet
        CONVBENCH_FP32_3XTF32=fast expect "CONVBENCH_FP32_3XTF32 refused by name ($be)" 2 "CONVBENCH_FP32_3XTF32: 'fast' is not on, off, 1 or 0" -- "$cb" fullpass fashion-lenet --backend $be --batch 2 --warmup 0 --iters 1 --quiet
    done
    for be in cudnn auto; do # (the graph race's check bound: a number from 0 to 1)
        for v in 2 -1e-3 1e-3x; do
            CONVBENCH_DNN_GRAPH_TOL=$v expect "CONVBENCH_DNN_GRAPH_TOL=$v refused by name ($be)" 2 "CONVBENCH_DNN_GRAPH_TOL: '$v' is not a number from 0 to 1" -- "$cb" fullpass fashion-lenet --backend $be --batch 2 --warmup 0 --iters 1 --quiet
        done
    done
fi
CONVBENCH_GRAD_ROUTE=alias expect "CONVBENCH_GRAD_ROUTE refused by name" 2 "CONVBENCH_GRAD_ROUTE: 'alias' is not direct or copy" -- "$cb" fullpass fashion-lenet --batch 2 --warmup 0 --iters 1 --quiet
expect "fullpass --graph refused on the CPU" 2 "--graph: backend cpu does not record steps as graphs" -- "$cb" fullpass fashion-lenet --batch 2 --warmup 0 --iters 1 --quiet --graph
expect "fullpass --graph refused with --gpus" 2 "--graph are for one GPU" -- "$cb" fullpass fashion-lenet --gpus 2 --graph --quiet
expect "fullpass --min-time" 0 "until they add up to --min-time" -- "$cb" fullpass fashion-lenet --batch 2 --warmup 0 --iters 2 --min-time 0.05 --quiet
"$cb" fullpass fashion-lenet --batch 2 --warmup 0 --iters 1 --threads 1 --format json --quiet > "$tmp/t.json" 2>/dev/null
if python3 -c "import json; assert json.load(open('$tmp/t.json'))['threads'] == 1" 2>/dev/null; then ok "fullpass --threads 1"; else bad "--threads 1"; fi
expect "bad --threads" 2 "--threads" -- "$cb" fullpass fashion-lenet --threads -1
expect "progress has elapsed time and ETA" 0 "s] fullpass: iteration 1/3" -- "$cb" fullpass fashion-lenet --batch 2 --warmup 0 --iters 3
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
expect "bad hold" 2 "--hold: 'maybe' is not on or off" -- "$cb" profile fashion-lenet --hold maybe
expect "bad calibrate timing" 2 "--timing: 'nope' is not stream or held" -- "$cb" calibrate --backend cudnn --timing nope
expect "bad precision on cpu" 2 "backend cpu does not compute in bf16 [unsupported: precision]" -- "$cb" fullpass fashion-lenet --precision bf16
expect "bad iters" 2 "--iters: 0 must be in" -- "$cb" fullpass fashion-lenet --iters 0
expect "bad memory slack" 2 "--memory-slack: -1 must be in" -- "$cb" fullpass fashion-lenet --memory-slack -1
expect "bad memory slack (nan)" 2 "--memory-slack: nan is out of range" -- "$cb" profile fashion-lenet --memory-slack nan
expect "bad recompute" 2 "--recompute: 'sometimes' is not one of auto, on, all, off" -- "$cb" fullpass fashion-lenet --recompute sometimes
expect "bad max memory" 2 "--max-memory: 0 must be in" -- "$cb" fullpass fashion-lenet --max-memory 0
expect "max memory unmet, noted" 0 "above what --max-memory leaves" -- "$cb" fullpass fashion-lenet --iters 1 --warmup 0 --max-memory 1
# out of host memory: refused before anything is touched, whatever the kernel overcommits (an H200
# host let the buffers be taken and cli_test ran out of time here, 2026-11-28-plans)
expect "out of memory" 3 "out of host memory: the buffers at batch 1000000 need" -- "$cb" fullpass vgg16 --batch 1000000 --quiet
expect "out of memory: the machine's memory named" 3 "this machine has" -- "$cb" profile vgg16 --batch 1000000 --quiet

# the other commands' bad inputs
expect "train missing data" 2 "$tmp/nodata" -- "$cb" train fashion-lenet --data "$tmp/nodata" --quiet
expect "train wrong size" 2 "pass --resize 86" -- "$cb" train fashion-ece408 --epochs 1 --limit 64 --quiet
# a small valid Fashion-MNIST test set (100 random 28x28 images, labels 0-9) for the infer checks
# that come after the data is read, so that they do not depend on the installed set (a GPU machine
# without it failed them, 2026-11-28-plans)
mkdir -p "$tmp/idx100"
{ printf '\0\0\10\3\0\0\0\144\0\0\0\34\0\0\0\34'; head -c 78400 /dev/urandom; } > "$tmp/idx100/t10k-images-idx3-ubyte"
{ printf '\0\0\10\1\0\0\0\144'; for i in $(seq 0 99); do printf "\\$(printf %03o $((i % 10)))"; done; } > "$tmp/idx100/t10k-labels-idx1-ubyte"
expect "infer missing weights" 2 "$tmp/none.cbw" -- "$cb" infer fashion-lenet --data "$tmp/idx100" --weights "$tmp/none.cbw" --quiet
expect "predict unknown device" 2 "nodev" -- "$cb" predict alexnet --device nodev
expect "predict paleo" 0 "conv1" -- "$cb" predict alexnet --device titanx-maxwell --paleo
expect "layers --help states its batch" 0 "default 128" -- "$cb" layers --help
expect "simulate defaults a device and interconnect" 0 "default --network" -- "$cb" simulate alexnet --workers 1,2
# a calibrated entry ("h200-cudnn") is an H200: NVLink 4, not the PCIe 3 of a GPU unknown (it was PCIe 3 before 2026-11-28)
expect "simulate: a calibration's H200 gets NVLink 4" 0 "interconnect: nvlink4" -- "$cb" simulate resnet50 --workers 1,2 \
    --calibration "$(dirname "$0")/../docs/results/2026-11-23-model-data/h200-cal.json.gz"
expect "calibrate cpu detects the CPU" 0 "cpu_isa:" -- "$cb" calibrate --backend cpu --size 128 --reps 1 --quiet
# the results database: append, list, compare
"$cb" fullpass fashion-lenet --batch 4 --warmup 1 --iters 5 --db "$tmp/r.db" --quiet >/dev/null 2>&1
"$cb" fullpass fashion-lenet --batch 4 --warmup 1 --iters 5 --db "$tmp/r.db" --quiet >/dev/null 2>&1
"$cb" summary alexnet --db "$tmp/r.db" --quiet >/dev/null 2>&1
expect "history lists the runs" 0 "3 runs" -- "$cb" history --db "$tmp/r.db"
expect "history --verb" 0 "2 runs" -- "$cb" history --db "$tmp/r.db" --verb fullpass
expect "compare two runs" 0 "ratio2" -- "$cb" compare --db "$tmp/r.db" 1 2
expect "compare the newest two" 0 "change2" -- "$cb" compare --db "$tmp/r.db" -3 -2
expect "compare a missing run" 2 "no run 9" -- "$cb" compare --db "$tmp/r.db" 1 9
expect "history of no database" 2 "cannot open" -- "$cb" history --db "$tmp/none.db"
if [ "$(sqlite3 "$tmp/r.db" "select count(*) from cells where run = 1 and tbl = 'fullpass' and col = 'median_ms'" 2>/dev/null)" = 7 ]; then
    ok "database cells"; else command -v sqlite3 >/dev/null && bad "database cells" || ok "database cells (no sqlite3 client: skipped)"; fi
"$cb" fullpass fashion-lenet --batch 4 --warmup 0 --iters 4 --format json --output "$tmp/a.json" --quiet 2>/dev/null
cp "$tmp/a.json" "$tmp/b.json"
expect "compare files: the same run is within its noise" 0 "0 changes beyond the noise" -- "$cb" compare "$tmp/a.json" "$tmp/b.json"
# the HTML report: one page, inline SVG, no script
R=docs/results/2026-11-21-h200-final
"$cb" simulate alexnet --workers 1,2,4 --format json --output "$tmp/sim.json" 2>/dev/null
if "$cb" report "$R/profile_alexnet_bf16.json" "$R/fullpass_alexnet_auto_fp32.json" "$R/infer_ece408_cudnn-fp32.json" "$R/layers_bf16.json" \
        "$tmp/sim.json" --peer "$R/peer.out" --output "$tmp/r.html" --quiet 2>"$tmp/rep.err" &&
   [ "$(grep -c '<svg' "$tmp/r.html")" -ge 8 ] && ! grep -q '<script\|http://[^w]\|https://' "$tmp/r.html"; then
    ok "report: self-contained page with every chart kind given"; else bad "report: $(cat "$tmp/rep.err")"; fi
expect "report of a non-result" 2 "not a convbench JSON result" -- "$cb" report data/devices.json
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
    if nvidia-smi -L >/dev/null 2>&1; then # (on a GPU machine) --verbose shows what cuDNN's graph race was offered, and what it left out
        expect "cudnn --verbose: the graph race's lists" 0 "the heuristics list offers" -- \
            "$cb" fullpass fashion-lenet --batch 4 --backend cudnn --precision tf32 --layout nhwc --warmup 0 --iters 1 --verbose
        # CONVBENCH_DNN_GRAPH_PLANS=3 times three plans in some phase (before 2026-11-28 a phase timed
        # at most one config per list whatever it said); "first", one per list (at most two a phase)
        most_timed() {
            CONVBENCH_DNN_GRAPH_PLANS=$1 "$cb" fullpass fashion-lenet --batch 4 --backend cudnn --precision tf32 --layout nhwc \
                --warmup 0 --iters 1 --verbose 2>&1 | sed -n "s/^note: layer '\(.*\)' \(.*\) graph plan: engine [0-9-]*, [0-9.]* ms.*/\1 \2/p" |
                sort | uniq -c | sort -rn | awk 'NR == 1 {print $1}'
        }
        most=$(most_timed 3)
        if [ "${most:-0}" -eq 3 ]; then ok "CONVBENCH_DNN_GRAPH_PLANS=3: three plans timed"; else bad "CONVBENCH_DNN_GRAPH_PLANS=3: at most ${most:-0} plans timed in a phase"; fi
        most=$(most_timed first)
        if [ "${most:-0}" -ge 1 ] && [ "${most:-0}" -le 2 ]; then ok "CONVBENCH_DNN_GRAPH_PLANS=first: one per list"; else bad "CONVBENCH_DNN_GRAPH_PLANS=first: ${most:-0} plans timed in a phase"; fi
    fi
else
    expect "cudnn nhwc bf16 without CUDA" 2 "no CUDA" -- "$cb" fullpass alexnet --backend cudnn --layout nhwc --precision bf16
fi
expect "calibrate bad --shapes" 2 "--shapes" -- "$cb" calibrate --backend cudnn --shapes 5-2
expect "calibrate bad --cache" 2 "--cache: 'warm' is not step or hot" -- "$cb" calibrate --backend cudnn --cache warm
# --shapes-from: a network that cannot be read, and one with no convolution calibrate measures, in one line each
expect "calibrate --shapes-from a missing file" 2 "nonet.json" -- "$cb" calibrate --backend cudnn --shapes-from "$tmp/nonet.json"
printf '{"name": "fc", "layers": {"data": {"parents": [], "type": "Input", "tensor": [2, 1, 1, 8]}, "fc": {"parents": ["data"], "type": "InnerProduct", "num_outputs": 4}}}' > "$tmp/noconv.json"
expect "calibrate --shapes-from without a convolution" 2 "no convolution" -- "$cb" calibrate --backend cudnn --shapes-from "$tmp/noconv.json"
one_line "calibrate --shapes-from without a convolution: one line" "$cb" calibrate --backend cudnn --shapes-from "$tmp/noconv.json"
expect "calibrate refit" 0 "FWD_WINOGRAD_NONFUSED" -- "$cb" calibrate --refit tests/data/h200-cal-subset.json --save "$tmp/cal.json" --quiet
# a refit keeps how the samples were timed: this file's are back to back (before stop 44, 2026-11-28), not in a step's cache state
expect "calibrate refit keeps the cache state" 0 '"hot"' -- grep '"cache"' "$tmp/cal.json"
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

# predict --measure: profiles of this network, batch and precision only; repeated or comma-separated
"$cb" profile fashion-lenet --batch 4 --backend cpu --iters 1 --warmup 0 --quiet --format json --output "$tmp/pf.json"
"$cb" profile fashion-lenet --batch 4 --backend cpu --direction backward --wrt filter --iters 1 --warmup 0 --quiet --format json --output "$tmp/pbf.json"
"$cb" profile fashion-lenet --batch 4 --backend cpu --direction all --iters 1 --warmup 0 --quiet --format json --output "$tmp/pall.json"
"$cb" profile alexnet --batch 1 --backend cpu --iters 1 --warmup 0 --quiet --format json --output "$tmp/palex.json"
expect "predict --measure repeated: the last" 0 "conv1,bwd_filter," -- "$cb" predict fashion-lenet --batch 4 --device h200 --measure "$tmp/pf.json" --measure "$tmp/pbf.json" --format csv
expect "predict --measure repeated: the first kept" 0 "conv1,fwd," -- "$cb" predict fashion-lenet --batch 4 --device h200 --measure "$tmp/pf.json" --measure "$tmp/pbf.json" --format csv
expect "predict --measure list and repeat" 0 "all,"  -- "$cb" predict fashion-lenet --batch 4 --device h200 --measure "$tmp/pf.json,$tmp/pbf.json" --measure "$tmp/pall.json" --format csv
expect "predict --measure direction all" 0 "bwd_data" -- "$cb" predict fashion-lenet --batch 4 --device h200 --measure "$tmp/pall.json" --format csv
expect "predict --measure other batch" 2 "$tmp/pf.json' was measured at batch 4" -- "$cb" predict fashion-lenet --batch 8 --device h200 --measure "$tmp/pf.json"
one_line "predict --measure other batch: one line" "$cb" predict fashion-lenet --batch 8 --device h200 --measure "$tmp/pf.json"
"$cb" profile fashion-lenet --batch 4 --backend cpu --recompute on --iters 1 --warmup 0 --quiet --format json --output "$tmp/prec.json"
expect "predict --measure of a profile with outputs made again" 2 "$tmp/prec.json' was measured with --recompute on" -- "$cb" predict fashion-lenet --batch 4 --device h200 --measure "$tmp/prec.json"
expect "predict --measure other network" 2 "$tmp/palex.json' is of network" -- "$cb" predict fashion-lenet --batch 4 --device h200 --measure "$tmp/pf.json" --measure "$tmp/palex.json"
expect "predict --measure other precision" 2 "measured in fp32" -- "$cb" predict fashion-lenet --batch 4 --device h200 --precision tf32 --measure "$tmp/pf.json"
expect "predict --measure not a profile" 2 "is not the JSON of convbench profile" -- "$cb" predict fashion-lenet --device h200 --measure "$tmp/cal.json"
expect "predict --measure missing file" 2 "cannot read the profile '$tmp/none.json'" -- "$cb" predict fashion-lenet --device h200 --measure "$tmp/none.json"
# the layout: a profile records it (older ones in argv), predict --layout matches it, a bad one is refused
if python3 -c "import json; assert json.load(open('$tmp/pf.json'))['layout'] == 'nchw'" 2>/dev/null; then ok "profile JSON names its layout"; else bad "profile JSON: no layout"; fi
if python3 -c "import json; assert json.load(open('$tmp/pf.json'))['hold'] == 'none'" 2>/dev/null; then ok "a CPU profile records that nothing held its passes"; else bad "profile JSON: no hold"; fi
expect "predict --measure other layout" 2 "measured on nchw storage, the prediction is for nhwc" -- "$cb" predict fashion-lenet --batch 4 --device h200 --layout nhwc --measure "$tmp/pf.json"
one_line "predict --measure other layout: one line" "$cb" predict fashion-lenet --batch 4 --device h200 --layout nhwc --measure "$tmp/pf.json"
expect "predict bad --layout" 2 "--layout: 'chwn' is not nchw or nhwc" -- "$cb" predict fashion-lenet --device h200 --layout chwn
python3 -c "
import json; d = json.load(open('$tmp/pf.json')); del d['layout']; d['argv'] += ['--layout', 'nhwc']; json.dump(d, open('$tmp/pf_old.json', 'w'))"
expect "predict --measure: an older profile's layout from its argv" 2 "measured on nhwc storage" -- "$cb" predict fashion-lenet --batch 4 --device h200 --measure "$tmp/pf_old.json"

# random networks (tools/gen_random_net.py): same seed, same file; every one loads; the suite
# covers 1x1 to 7x7 filters, stride 2 with TF SAME padding, odd channel counts, grouped convolutions
gen=$(dirname "$0")/../tools/gen_random_net.py
python3 "$gen" --suite "$tmp/gen" --seeds 1-2 >/dev/null && python3 "$gen" --kind mobile --seed 2 --output "$tmp/again.json"
if cmp -s "$tmp/gen/gen-mobile-s2.json" "$tmp/again.json"; then ok "gen_random_net: deterministic"; else bad "gen_random_net: seed 2 gave two files"; fi
for f in "$tmp"/gen/gen-*.json; do expect "gen_random_net: $(basename "$f") loads" 0 "Number of params" -- "$cb" summary "$f"; done
if python3 - "$tmp"/gen/gen-*.json <<'PY'; then ok "gen_random_net: coverage"; else bad "gen_random_net: coverage"; fi
import json, sys
k, s2, odd, grp = set(), 0, 0, 0
def walk(L):
    global s2, odd, grp
    for l in L.values():
        if l["type"] == "Block": walk(l["layers"]); continue
        if l["type"] != "Convolution": continue
        k.add(l["filter"][0]); odd += l["filter"][3] % 2; grp += l.get("groups", 1) > 1
        s2 += l["strides"][1] == 2 and l["padding"] == "SAME"
for f in sys.argv[1:]: walk(json.load(open(f))["layers"])
sys.exit(not (k >= {1, 3, 5, 7} and s2 and odd and grp))
PY

# model-eval: leave one network out over profiles (CPU profiles here: the plumbing, not the figures)
python3 "$gen" --kind resnet --seed 1 --batch 2 --max-gflop 0.3 --output "$tmp/g1.json"
"$cb" profile "$tmp/g1.json" --backend cpu --direction all --iters 1 --warmup 0 --quiet --format json --output "$tmp/g1p.json"
expect "model-eval" 0 "heldout_median_pct" -- "$cb" model-eval --device "$tmp/cal.json" --nets "$tmp/g1.json" "$tmp/g1p.json" "$tmp/pf.json" "$tmp/pbf.json" --kinds all
expect "model-eval names both networks" 0 "gen resnet seed 1" -- "$cb" model-eval --device "$tmp/cal.json" --nets "$tmp/g1.json" "$tmp/g1p.json" "$tmp/pf.json" --kinds all --format csv
expect "model-eval --rows" 0 "conv1" -- "$cb" model-eval --device "$tmp/cal.json" "$tmp/pf.json" --rows --format table
expect "model-eval unknown network" 2 "no built-in network or --nets file is named 'gen resnet seed 1" -- "$cb" model-eval --device "$tmp/cal.json" "$tmp/g1p.json"
expect "model-eval bad --nets" 2 "--nets: '$tmp/pf.json' is not a network" -- "$cb" model-eval --device "$tmp/cal.json" --nets "$tmp/pf.json" "$tmp/pf.json"
expect "model-eval uncalibrated device" 2 "holds no GPU calibration" -- "$cb" model-eval --device h200 "$tmp/pf.json"

"$cb" fullpass fashion-lenet --batch 4 --backend cpu --update --no-data-grad --iters 1 --warmup 0 --quiet --format json --output "$tmp/fp.json"
expect "model-eval whole steps" 0 "step_model_ms" -- "$cb" model-eval --device "$tmp/cal.json" "$tmp/pf.json" "$tmp/fp.json"
expect "model-eval steps alone" 0 "whole steps (1)" -- "$cb" model-eval --device "$tmp/cal.json" "$tmp/fp.json"
# a step measured with --update is predicted with its update: fullpass writes the flag as a JSON
# boolean, fullpass --gpus wrote "yes" before 2026-11-28 (model-eval once read only the string, and
# left every single-GPU step's update out of the prediction while the measured step held it)
python3 - "$tmp/fp.json" "$tmp/fp-yes.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["update"] = "yes"; json.dump(d, open(sys.argv[2], "w"))
PY
for f in fp fp-yes; do
    if "$cb" model-eval --device "$tmp/cal.json" "$tmp/$f.json" --format json 2>/dev/null | python3 -c '
import json, sys
s = json.load(sys.stdin)["tables"]["steps"][0]
sys.exit(not (s["update_ms"] > 0 and s["update_model_ms"] and s["update_model_ms"] > 0))'; then ok "model-eval: $f.json's update predicted"; else bad "model-eval: $f.json's update left out"; fi
done
# the report says how the calibration's samples were timed (this one's back to back: before stop 44)
expect "model-eval names the calibration's cache state" 0 "calibration_cache: hot" -- "$cb" model-eval --device "$tmp/cal.json" "$tmp/fp.json"

# scripts/suite-summary.py (gpu-bench.sh suite's table): a cell with both peers, one whose peer did not run
mkdir -p "$tmp/suite"
cp "$tmp/fp.json" "$tmp/suite/suite_fashion-lenet_4_fp32_nchw_update_auto.json"
cp "$tmp/fp.json" "$tmp/suite/suite_fashion-lenet_8_fp32_nchw_auto.json"
fpms=$(python3 -c "import json; print([r['median_ms'] for r in json.load(open('$tmp/fp.json'))['tables']['fullpass'] if r['phase'] == 'total'][0])")
printf '%s\n' "{\"net\": \"fashion-lenet\", \"mode\": \"fp32\", \"layout\": \"NCHW\", \"batch\": 4, \"update\": true, \"compiled\": false, \"total\": $fpms, \"peak_mib\": 10, \"reserved_mib\": 12}" \
    "{\"net\": \"fashion-lenet\", \"mode\": \"fp32\", \"layout\": \"NCHW\", \"batch\": 4, \"update\": true, \"compiled\": true, \"compile_mode\": \"default\", \"total\": $(python3 -c "print($fpms * 2)"), \"peak_mib\": 9}" \
    > "$tmp/suite/suitepeer_fp32_nchw.out"
python3 "$(dirname "$0")/../scripts/suite-summary.py" "$tmp/suite" > "$tmp/suite.md" 2>&1
if grep -q "| fashion-lenet b4 fp32 NCHW +update | .* | 1.00 | 0.50 |" "$tmp/suite.md" && grep -q "| fashion-lenet b8 fp32 NCHW | .* | not run | not run |" "$tmp/suite.md" &&
    grep -q "peer not run for fashion-lenet b8 fp32 NCHW" "$tmp/suite.md" && grep -q "geometric mean auto/compiled: 0.500 over 1 cells" "$tmp/suite.md" &&
    grep -q "| fashion-lenet b4 fp32 NCHW +update | .* | [0-9]* / 10 (12) / 9 |" "$tmp/suite.md"; then
    ok "suite-summary: ratios, a peer not run named, eager's allocated and reserved peaks and torch.compile's"
else bad "suite-summary: $(cat "$tmp/suite.md")"; fi

# model-eval on the recorded H200 data: the default form reproduces the published 9.4% (conv,
# docs/results/2026-11-21-model-h200.md); --default-form makes held-out and default agree
rec=$(dirname "$0")/../docs/results/2026-11-21-model-h200
# the pooled row of every direction ("all"), from the JSON result
pooled_all() { python3 -c "import json,sys; r=[x for x in json.load(sys.stdin)['tables']['pooled'] if x['direction']=='all'][0]; print(r['rows'], r['heldout_median_pct'], r['heldout_p90_pct'], r['default_median_pct'], r['default_p90_pct'])"; }
line=$("$cb" model-eval --device "$rec/h200-calibrated.json.gz" "$rec"/model_*.json --format json 2>/dev/null | pooled_all)
if printf '%s' "$line" | awk '$1 == 380 && sprintf("%.1f", $4) == "9.4" && $2 <= $4 + 1 { ok = 1 } END { exit !ok }'; then ok "model-eval: recorded H200 data"; else bad "model-eval: recorded H200 data: '$line'"; fi
line=$("$cb" model-eval --device "$rec/h200-calibrated.json.gz" "$rec"/model_*.json --default-form --format json 2>/dev/null | pooled_all)
if printf '%s' "$line" | awk '$2 == $4 && $3 == $5 { ok = 1 } END { exit !ok }'; then ok "model-eval --default-form"; else bad "model-eval --default-form: '$line'"; fi
# the tf32 data of 2026-11-27 (docs/results/2026-11-27-h200-pick.md): the pooled rows split by what
# cuDNN ran, its graph-API engines (752 rows) and its legacy algorithms (104), as the doc's table
m4=$(dirname "$0")/../docs/results/2026-11-27-h200-pick/call4_model_tf32
line=$("$cb" model-eval --device "$m4/h200-cal.json.gz" --nets "$(ls "$m4"/nets/*.json | paste -sd, -)" --precision tf32 "$m4"/profiles/*.json \
    --format json 2>/dev/null | python3 -c "import json,sys; p={x['direction']: x['rows'] for x in json.load(sys.stdin)['tables']['pooled']}; print(p.get('all'), p.get('all, cuDNN graph engines'), p.get('all, cuDNN legacy algorithms'))")
if [ "$line" = "856 752 104" ]; then ok "model-eval: rows split by graph engine and legacy algorithm"; else bad "model-eval graph split: '$line'"; fi

# the multi-GPU peer (bench/peer_dist.py, Debian's PyTorch): more GPUs than the machine has is one line, exit 1
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    expect "peer_dist.py: too many GPUs" 1 "--gpus 99: this machine has" -- /usr/bin/python3 "$(dirname "$0")/../bench/peer_dist.py" allreduce --gpus 99
else echo "skip peer_dist.py: no PyTorch under /usr/bin/python3"; fi

# --save: the calibration in the form best on every network, which predict then takes; an
# unwritable path is refused by name and leaves nothing (2026-11-28's bf16 data, two networks)
m5=$(dirname "$0")/../docs/results/2026-11-28-h200-local/model
expect "model-eval --save" 0 "saved to $tmp/best-cal.json: the calibration in the form" -- "$cb" model-eval --device "$m5/h200-cal.json.gz" \
    --precision bf16 "$m5/profiles/alexnet-bf16.json" "$m5/profiles/vgg16-bf16.json" "$m5/fullpass/alexnet-bf16.json" --save "$tmp/best-cal.json" --format json
if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); c=d['calibration']; sys.exit(not (len(d['samples']) == 3684 and c['algos'] and 'host_floor' in c))" "$tmp/best-cal.json" 2>/dev/null; then
    ok "model-eval --save: the refitted entry with its samples and the steps' host floor"
else bad "model-eval --save: $(head -c 300 "$tmp/best-cal.json" 2>&1)"; fi
# --rows: each row's model_ms is the prediction its held-out error is of, the pass's start included
# for a pass's first piece (alexnet's softmax backward, conv1 forward: once left out of model_ms)
if "$cb" model-eval --device "$m5/h200-cal.json.gz" --precision bf16 "$m5/profiles/alexnet-bf16.json" "$m5/profiles/vgg16-bf16.json" \
    --kinds all --rows --format csv 2>/dev/null | python3 -c '
import csv, sys
rows = [r for r in csv.DictReader(sys.stdin) if r["table"] == "rows"]
bad = [r["layer"] for r in rows if abs(100 * abs(float(r["model_ms"]) / float(r["measured_ms"]) - 1) - float(r["heldout_err_pct"])) > 1e-3]
sys.exit(not rows or bool(bad))'; then ok "model-eval --rows: model_ms is what the error is of"; else bad "model-eval --rows: model_ms and the error disagree"; fi
expect "predict with model-eval's saved form" 0 "training step" -- "$cb" predict alexnet --batch 128 --precision bf16 --layout nhwc --device "$tmp/best-cal.json"
expect "model-eval --save unwritable" 2 "$tmp/no/dir/c.json: cannot write" -- "$cb" model-eval --device "$m5/h200-cal.json.gz" --precision bf16 \
    "$m5/profiles/alexnet-bf16.json" --save "$tmp/no/dir/c.json"
if [ ! -e "$tmp/no/dir/c.json" ]; then ok "model-eval --save unwritable: nothing written"; else bad "model-eval --save unwritable: a file"; fi

# --plot: an SVG of predicted against measured, written whole
expect "predict --plot" 0 "conv1" -- "$cb" predict fashion-lenet --batch 4 --device h200 --measure "$tmp/pf.json" --plot "$tmp/p.svg"
if head -c 4 "$tmp/p.svg" 2>/dev/null | grep -q '<svg' && grep -q '</svg>' "$tmp/p.svg" && [ "$(grep -c '<circle' "$tmp/p.svg")" -ge 8 ]; then ok "predict --plot: an SVG with the points"; else bad "predict --plot: no SVG"; fi
expect "predict --plot without --measure" 2 "--plot needs --measure" -- "$cb" predict fashion-lenet --device h200 --plot "$tmp/q.svg"
expect "predict --plot unwritable" 2 "--plot: cannot write" -- "$cb" predict fashion-lenet --batch 4 --device h200 --measure "$tmp/pf.json" --plot "$tmp/no/dir/p.svg"
expect "model-eval --plot" 0 "heldout" -- "$cb" model-eval --device "$tmp/cal.json" "$tmp/pf.json" --plot "$tmp/e.svg"
if grep -q '</svg>' "$tmp/e.svg" 2>/dev/null; then ok "model-eval --plot: an SVG"; else bad "model-eval --plot: no SVG"; fi

# untrusted input (issue 17): every reproducer in tests/data/bad gets one line naming the file,
# layer or flag, and exit 2; nothing hangs (each runs under a 20 s timeout)
bad_dir=$(cd "$(dirname "$0")" && pwd)/data/bad
# bad_input NAME NEEDLE -- command...: exit 2, the needle, one line on stderr
bad_input() {
    local name=$1 needle=$2; shift 3
    expect "$name" 2 "$needle" -- timeout 20 "$@"
    one_line "$name: one line" timeout 20 "$@"
}
b=$bad_dir
bad_input "labels out of range (train)" "idx-label200/train-labels-idx1-ubyte: label 0 is 200" -- "$cb" train fashion-lenet --data "$b/idx-label200" --epochs 1 --quiet
bad_input "labels out of range (infer)" "idx-label200/t10k-labels-idx1-ubyte: label 0 is 200" -- "$cb" infer fashion-lenet --data "$b/idx-label200" --weights "$tmp/none.cbw" --quiet
# multi-GPU: without NCCL or without the GPUs asked for, one line naming the flag (no GPU here in CI)
if [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -lt 2 ]; then
    bad_input "allreduce --gpus 2 without two GPUs" "--gpus" -- "$cb" allreduce --gpus 2
    bad_input "fullpass --gpus 2 without two GPUs" "--gpus" -- "$cb" fullpass fashion-lenet --backend cudnn --gpus 2
fi
bad_input "allreduce --dtype" "--dtype: 'fp8' is not fp32 or bf16" -- "$cb" allreduce --dtype fp8
# simulate against measurements: the link fitted to an all-reduce run, fullpass --gpus beside it
out=$("$cb" simulate resnet50 --batch 128 --precision bf16 --device h200 --workers 1,2 --overlap --format json \
    --interconnect tests/data/allreduce-2gpu.json --measure tests/data/fullpass-gpus2-resnet50.json 2>&1)
if printf '%s' "$out" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = d["tables"]["scaling"]
assert d["interconnect"] == "measured" and "253 GB/s" in " ".join(d["notes"]), d["notes"]
assert rows[1]["measured_ms"] > 0 and abs(rows[1]["error_pct"]) < 10, rows[1]
'; then ok "simulate --interconnect --measure"; else bad "simulate --interconnect --measure: $out"; fi
bad_input "simulate --measure of another network" "is not the simulated" -- "$cb" simulate vgg16 --workers 1,2 --measure tests/data/fullpass-gpus2-resnet50.json
bad_input "simulate --measure of another batch" "measured batch 128 per GPU, simulated 64" -- "$cb" simulate resnet50 --batch 64 --workers 1,2 --measure tests/data/fullpass-gpus2-resnet50.json
bad_input "simulate --interconnect of a fullpass result" "not a result of convbench allreduce" -- "$cb" simulate resnet50 --interconnect tests/data/fullpass-gpus2-resnet50.json
bad_input "simulate --interconnect and --network" "--interconnect and --network" -- "$cb" simulate resnet50 --interconnect tests/data/allreduce-2gpu.json --network pcie4
# --grad-precision: the all-reduce's type, for data-parallel runs only; simulate's the same
bad_input "fullpass --grad-precision fp16" "--grad-precision: 'fp16' is not fp32 or bf16" -- "$cb" fullpass fashion-lenet --backend cudnn --gpus 2 --grad-precision fp16
bad_input "fullpass --grad-precision without --gpus" "--grad-precision: only with --gpus" -- "$cb" fullpass fashion-lenet --grad-precision bf16
bad_input "fullpass --grad-precision bad, one process of a launcher's" "--grad-precision: 'tf32'" -- env RANK=0 WORLD_SIZE=2 "$cb" fullpass fashion-lenet --backend cudnn --rendezvous file:/tmp/none --grad-precision tf32
bad_input "simulate --grad-precision" "--grad-precision: 'int8' is not fp32 or bf16" -- "$cb" simulate resnet50 --grad-precision int8
bad_input "simulate --measure of the other grad precision" "measured with --grad-precision fp32, simulated with bf16" -- "$cb" simulate resnet50 --batch 128 --workers 1,2 --grad-precision bf16 --measure tests/data/fullpass-gpus2-resnet50.json
out=$("$cb" simulate resnet50 --device h200 --network nvlink4 --workers 2 --grad-precision bf16 --format json 2>&1)
out32=$("$cb" simulate resnet50 --device h200 --network nvlink4 --workers 2 --format json 2>&1)
if /usr/bin/python3 -c '
import json, sys
b, f = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert b["grad_precision"] == "bf16" and f["grad_precision"] == "fp32"
rb, rf = b["tables"]["scaling"][0], f["tables"]["scaling"][0]
assert rb["comm_ms"] < rf["comm_ms"] and rb["compute_ms"] == rf["compute_ms"], (rb, rf)
' "$out" "$out32"; then ok "simulate --grad-precision bf16: less communication"; else bad "simulate --grad-precision bf16: $out"; fi
# calibrate stores the interconnect fitted to an all-reduce result; simulate --calibration takes it
expect "calibrate --allreduce" 0 "interconnect measured stored" -- "$cb" calibrate --refit tests/data/h200-cal-subset.json --allreduce tests/data/allreduce-2gpu.json --save "$tmp/cal-ar.json" --quiet
"$cb" calibrate --refit tests/data/h200-cal-subset.json --save "$tmp/cal-plain.json" --quiet >/dev/null 2>&1
a=$("$cb" simulate resnet50 --calibration "$tmp/cal-ar.json" --workers 1,2,8 --format json 2>&1)
i=$("$cb" simulate resnet50 --calibration "$tmp/cal-plain.json" --interconnect tests/data/allreduce-2gpu.json --workers 1,2,8 --format json 2>&1)
if /usr/bin/python3 -c '
import json, sys
a, i = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert a["tables"] == i["tables"], (a["tables"], i["tables"])
assert a["interconnect"] == "measured" and a["interconnect_from"] == "calibration" and i["interconnect_from"] == "--interconnect"
assert any("stored in the calibration" in n and "cal-ar.json" in n for n in a["notes"]), a["notes"]
assert any("allreduce-2gpu.json" in n for n in a["notes"]), a["notes"]
' "$a" "$i"; then ok "simulate --calibration: the stored link, as --interconnect"; else bad "simulate --calibration stored link: $a | $i"; fi
expect "simulate --calibration --network: the named link wins" 0 '"interconnect_from":	"--network"' -- "$cb" simulate resnet50 --calibration "$tmp/cal-ar.json" --network pcie4 --workers 2 --format json
bad_input "calibrate --allreduce of a fullpass result" "not a result of convbench allreduce" -- "$cb" calibrate --refit tests/data/h200-cal-subset.json --allreduce tests/data/fullpass-gpus2-resnet50.json
bad_input "calibrate --allreduce and --allreduce-gpus" "--allreduce and --allreduce-gpus: name one" -- "$cb" calibrate --refit tests/data/h200-cal-subset.json --allreduce tests/data/allreduce-2gpu.json --allreduce-gpus 2
bad_input "calibrate --allreduce-gpus 1" "--allreduce-gpus" -- "$cb" calibrate --refit tests/data/h200-cal-subset.json --allreduce-gpus 1
if [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -lt 2 ]; then
    bad_input "calibrate --allreduce-gpus 2 without two GPUs" "--allreduce-gpus" -- "$cb" calibrate --refit tests/data/h200-cal-subset.json --allreduce-gpus 2
fi
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); d["interconnect"]["bw"] = -5
json.dump(d, open(sys.argv[2], "w"))' "$tmp/cal-ar.json" "$tmp/cal-badlink.json"
bad_input "simulate --calibration with a malformed link" "cal-badlink.json: device" -- "$cb" simulate resnet50 --calibration "$tmp/cal-badlink.json" --workers 2
bad_input "fullpass: a malformed launcher rank" "RANK=3 is not below WORLD_SIZE=2" -- env RANK=3 WORLD_SIZE=2 "$cb" fullpass fashion-lenet
bad_input "fullpass --rendezvous without a launcher" "--rendezvous: no launcher's RANK and WORLD_SIZE" -- "$cb" fullpass fashion-lenet --rendezvous file:/tmp/none
bad_input "fullpass: a launcher's ranks and --gpus" "one GPU per process" -- env RANK=0 WORLD_SIZE=2 "$cb" fullpass fashion-lenet --backend cudnn --gpus 2 --rendezvous file:/tmp/none
# the own direct CPU convolution in a whole network: the same loss as im2col + OpenBLAS
a=$(CONVBENCH_CPU_CONV=gemm "$cb" fullpass fashion-ece408 --batch 8 --iters 1 --warmup 0 --format json --quiet 2>&1)
o=$(CONVBENCH_CPU_CONV=own "$cb" fullpass fashion-ece408 --batch 8 --iters 1 --warmup 0 --per-layer --format json --quiet 2>&1)
if /usr/bin/python3 -c '
import json, sys
a, o = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert abs(a["loss"] - o["loss"]) <= 1e-5 * abs(a["loss"]), (a["loss"], o["loss"])
assert any(r["algo_fwd"].startswith("own direct") for r in o["tables"]["layers"]), "own direct not used"
' "$a" "$o"; then ok "own direct CPU convolution: same loss"; else bad "own direct CPU convolution: $a | $o"; fi
# cpu-auto (where the build has oneDNN): a bad $CONVBENCH_CPU_AUTO is refused by name; a whole
# network gives cpu's loss and its per-layer table says what each convolution ran and why
if "$cb" fullpass --help 2>&1 | grep -q cpu-auto && "$cb" fullpass fashion-lenet --backend cpu-auto --iters 1 --warmup 0 --quiet >/dev/null 2>&1; then
    bad_input "fullpass cpu-auto: a bad CONVBENCH_CPU_AUTO" "CONVBENCH_CPU_AUTO: 'fast' is not race" -- env CONVBENCH_CPU_AUTO=fast "$cb" fullpass fashion-lenet --backend cpu-auto --quiet
    a=$("$cb" fullpass fashion-ece408 --batch 8 --iters 1 --warmup 0 --format json --quiet 2>&1)
    o=$("$cb" fullpass fashion-ece408 --batch 8 --iters 1 --warmup 0 --backend cpu-auto --per-layer --format json --quiet 2>&1)
    if /usr/bin/python3 -c '
import json, sys
a, o = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert abs(a["loss"] - o["loss"]) <= 1e-5 * abs(a["loss"]), (a["loss"], o["loss"])
conv = [r for r in o["tables"]["layers"] if r["kind"] in ("Convolution", "InnerProduct")]
assert conv and all(" vs " in r["algo_fwd"] and "<" in r["algo_fwd"] for r in conv), [r["algo_fwd"] for r in conv]
' "$a" "$o"; then ok "cpu-auto: cpu's loss, the race in the per-layer table"; else bad "cpu-auto: $a | $o"; fi
fi
bad_input "ModelParallel expansion" "layer 'mp': 4096 splits of 25 layers expand to 102400 layers" -- "$cb" summary "$b/modelparallel-4096.json"
bad_input "too many layers" "more than 131072 layers" -- "$cb" summary "$b/too-many-layers.json"
bad_input "too many parent references" "layer 'mp2': more than 2097152 parent references" -- "$cb" summary "$b/modelparallel-all-refs.json"
bad_input "FC parameters overflow" "fc-params-overflow.json: layer 'fc': its parameters" -- "$cb" summary "$b/fc-params-overflow.json"
bad_input "FC input wider than 2^31 - 1" "fc-wide-input.json: layer 'fc': 4398046511104 input values per example" -- "$cb" summary "$b/fc-wide-input.json"
bad_input "conv parameters overflow" "conv-params-overflow.json: layer 'c': its parameters" -- "$cb" summary "$b/conv-params-overflow.json"
bad_input "train bytes overflow at --batch" "layer 'drop'" -- "$cb" summary "$b/fc-large-batch.json" --batch 1073741824
bad_input "predict --batch overflow" "at batch 1073741824, overflow 64 bits" -- "$cb" predict "$b/fc-large-batch.json" --batch 1073741824 --device h200
expect "fc-large-batch fits at batch 1" 0 "Number of params: 72,057,594,306,363,392" -- "$cb" summary "$b/fc-large-batch.json"
bad_input "Reshape overflow" "layer 'r': output_shape's sizes overflow 64 bits" -- "$cb" summary "$b/reshape-overflow.json"
bad_input "filter 1e30" "layer 'c': 'filter' dimension 0 is 1e+30" -- "$cb" summary "$b/filter-1e30.json"
bad_input "device cores 1e300" "'cores' is 1e+300" -- "$cb" predict alexnet --device "$b/device-cores-1e300.json"
bad_input "device sms 1e300" "'calibration.sms' is 1e+300" -- "$cb" predict alexnet --device "$b/device-sms-1e300.json"
bad_input "device sms zero" "'calibration.sms' is 0" -- "$cb" predict alexnet --device "$b/device-sms-zero.json"
bad_input "device negative peak" "'peak.bf16' is -5" -- "$cb" predict alexnet --device "$b/device-negative-peak.json"
bad_input "device zero copy bandwidth" "'measured.copy_bw' is 0" -- "$cb" predict alexnet --device "$b/device-zero-copy-bw.json"
bad_input "device bandwidth 1e999" "'mem_bw' is inf" -- "$cb" predict alexnet --device "$b/device-bw-1e999.json"
bad_input "device duplicate key" "duplicate key 'mem_bw'" -- "$cb" predict alexnet --device "$b/device-duplicate-key.json"
bad_input "interconnect bandwidth 1e999" "devdb-link-1e999.json: interconnect 0" -- "$cb" simulate alexnet --devices "$b/devdb-link-1e999.json" --device v100 --network fast
for n in 5 7; do
    bad_input "weights file of $n bytes" "weights-$n-bytes.cbw: truncated: $n bytes" -- "$cb" infer fashion-lenet --data "$tmp/idx100" --weights "$b/weights-$n-bytes.cbw" --batch 100 --quiet
done
bad_input "weights from an endless file" "/dev/zero: more than" -- "$cb" infer fashion-lenet --data "$tmp/idx100" --weights /dev/zero --batch 100 --quiet
bad_input "IDX claims 6.5 GB in 17 bytes" "truncated: 1 bytes of data, 1677721600000000 needed" -- "$cb" train fashion-lenet --data "$b/idx-huge" --epochs 1 --quiet
bad_input "IDX truncated gzip" "truncated gzip stream" -- "$cb" train fashion-lenet --data "$b/idx-gzip-truncated" --epochs 1 --quiet
out=$("$cb" train fashion-lenet --data "$b/idx-gzip-crc" --epochs 1 --quiet 2>&1)
if [ "$(printf '%s' "$out" | grep -o 'idx-gzip-crc/train-images' | wc -l)" -eq 1 ] && printf '%s' "$out" | grep -q "incorrect data check"; then ok "gzip CRC error names the file once"; else bad "gzip CRC error: $out"; fi
bad_input "--batch -1" "--batch: -1 must be in" -- "$cb" summary alexnet --batch -1
bad_input "--batch -1 (predict)" "--batch: -1 must be in" -- "$cb" predict alexnet --device h200 --batch -1
bad_input "integer out of range" "--batch: 999999999999999999999 is out of range" -- "$cb" summary alexnet --batch 999999999999999999999
bad_input "number out of range" "--lr: 1e999 is out of range" -- "$cb" fullpass fashion-lenet --lr 1e999
bad_input "duplicate JSON key" "duplicate key 'type' in layers > r" -- "$cb" summary "$b/duplicate-key.json"
bad_input "JSON nesting limit" "JSON nested deeper than 1000" -- "$cb" summary "$b/json-nesting.json"
bad_input "a newline quoted back stays one line" "unknown layer type 'Pool?ing'" -- "$cb" summary "$b/newline-in-type.json"
bad_input "a newline in a flag's value" "--batch: '1?2' is not an integer" -- "$cb" summary alexnet --batch "$(printf '1\n2')"
bad_input "Elementwise with one parent" "layer 'a': an Elementwise layer needs two or more parents" -- "$cb" summary "$b/elementwise-one-parent.json"
expect "out of memory gives the plan's size" 3 "the buffers at batch 1000000 need" -- "$cb" fullpass vgg16 --batch 1000000 --quiet
out=$("$cb" summary nonet 2>&1); rc=$?
if [ "$rc" -eq 2 ] && [ "$(printf '%s' "$out" | grep -o 'built-in network in ' | wc -l)" -eq 1 ] && printf '%s' "$out" | grep -q '/nets)$'; then
    ok "not-found message lists the search path once"; else bad "not-found message lists the search path once: exit $rc: $out"; fi
expect "device database: the reason" 2 "cannot open: No such file or directory (the device database" -- "$cb" predict alexnet --devices "$tmp/nodb.json" --device h200
# --device FILE needs no database: from a directory without data/devices.json
"$cb" calibrate --refit tests/data/h200-cal-subset.json --save "$tmp/dev.json" --quiet >/dev/null 2>&1
root=$(cd "$(dirname "$0")/.." && pwd) cb_abs=$(cd "$(dirname "$cb")" && pwd)/$(basename "$cb")
out=$(cd "$tmp" && CONVBENCH_DEVICES= "$cb_abs" predict "$root/nets/alexnet.json" --device "$tmp/dev.json" 2>&1 >/dev/null); rc=$?
if [ "$rc" -eq 0 ] && [ -z "$out" ]; then ok "--device FILE without a database"; else bad "--device FILE without a database: exit $rc: $out"; fi
# --output through a symbolic link: the target replaced whole, the link kept; special files refused
echo old > "$tmp/target.txt"; ln -s target.txt "$tmp/link.txt"
"$cb" summary fashion-lenet --output "$tmp/link.txt" >/dev/null 2>&1
if [ -L "$tmp/link.txt" ] && grep -q "LeNet" "$tmp/target.txt"; then ok "--output writes through a symbolic link"; else bad "--output through a symbolic link"; fi
ln -s /dev/zero "$tmp/zero-link"; mkfifo "$tmp/fifo"; ln -s nowhere "$tmp/dangling"
bad_input "--output to a device through a link" "not a regular file (a device)" -- "$cb" summary fashion-lenet --output "$tmp/zero-link"
if "$cb" summary fashion-lenet --output /dev/null >/dev/null 2>&1 && [ -c /dev/null ]; then ok "--output /dev/null discards"; else bad "--output /dev/null"; fi
bad_input "--output to a pipe" "not a regular file (a pipe or socket)" -- "$cb" summary fashion-lenet --output "$tmp/fifo"
bad_input "--output to a dangling link" "a symbolic link that does not resolve" -- "$cb" summary fashion-lenet --output "$tmp/dangling"
if [ -L "$tmp/zero-link" ] && [ -p "$tmp/fifo" ] && [ -c /dev/null ]; then ok "special files left alone"; else bad "a special file was replaced"; fi
if ls "$tmp" | grep -q '\.tmp\.'; then bad "temporary file left behind"; else ok "no temporary left after refusals"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
