#!/usr/bin/env bash
# The model against the profiles of a GPU run (scripts/model-device.sh wrote them): for AlexNet,
# VGG-16, GoogLeNet and ResNet-50, convbench predict with the calibrated entry and --measure, for
# the convolutions alone, for convolutions + FC + pooling, and for every layer; prints per-net
# and pooled median / p90 absolute % error of the calibrated model and of Paleo's method.
#   scripts/model-check.sh RESULTS_DIR [DEVICE_FILE]    # CB=path/to/convbench (default build/convbench)
set -u
RES=${1:?usage: scripts/model-check.sh RESULTS_DIR [DEVICE_FILE]}
DEV=${2:-$RES/h200-calibrated.json}
CB=${CB:-build/convbench}
[ -f "$DEV" ] || { echo "model-check: no device entry '$DEV'" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for nb in alexnet:128 vgg16:64 googlenet:128 resnet50:64; do
    net=${nb%:*} b=${nb#*:}
    m=$RES/model_${net}
    files=""
    for d in fwd bwd_data bwd_filter; do [ -f "${m}_$d.json" ] && files="$files${files:+,}${m}_$d.json"; done
    [ -n "$files" ] || { echo "model-check: no profiles for $net in $RES" >&2; continue; }
    for k in conv conv,fc,pool all; do
        "$CB" predict "$net" --batch "$b" --device "$DEV" --measure "$files" --kinds "$k" --format json --quiet \
            --output "$out/${net}_${k//,/+}.json" || echo "model-check: predict $net --kinds $k failed" >&2
    done
done
python3 - "$out" <<'PY'
import json, glob, os, sys, statistics
out = sys.argv[1]
def pct(v, q):
    v = sorted(v)
    if not v: return float('nan')
    p = q * (len(v) - 1); i = int(p)
    return v[i] if i + 1 >= len(v) else v[i] + (p - i) * (v[i + 1] - v[i])
pool = {}
print(f"{'network':10} {'kinds':14} {'dir':10} {'n':>4} {'model med':>9} {'model p90':>9} {'paleo med':>9} {'paleo p90':>9} {'alg agree':>9}")
for f in sorted(glob.glob(out + '/*.json')):
    net, kinds = os.path.basename(f)[:-5].split('_', 1)
    rows = json.load(open(f))['tables']['compare']
    for d in ('fwd', 'bwd_data', 'bwd_filter', 'all'):
        rr = [r for r in rows if d == 'all' or r['direction'] == d]
        if not rr: continue
        m = [r['model_err_pct'] for r in rr]; p = [r['paleo_err_pct'] for r in rr]
        algs = [r for r in rr if r.get('measured_alg') and r.get('model_alg') and not r['measured_alg'].startswith(('own', 'cublas', '-'))]
        agree = sum(r['measured_alg'] == r['model_alg'] for r in algs)
        ag = f"{agree}/{len(algs)}" if algs else '-'
        if d == 'all' or kinds == 'conv':
            print(f"{net:10} {kinds:14} {d:10} {len(rr):4d} {pct(m, .5):9.1f} {pct(m, .9):9.1f} {pct(p, .5):9.1f} {pct(p, .9):9.1f} {ag:>9}")
        pool.setdefault((kinds, d), ([], []))
        pool[(kinds, d)][0].extend(m); pool[(kinds, d)][1].extend(p)
print()
print(f"{'all nets':10} {'kinds':14} {'dir':10} {'n':>4} {'model med':>9} {'model p90':>9} {'paleo med':>9} {'paleo p90':>9}")
for (kinds, d), (m, p) in sorted(pool.items()):
    print(f"{'pooled':10} {kinds:14} {d:10} {len(m):4d} {pct(m, .5):9.1f} {pct(m, .9):9.1f} {pct(p, .5):9.1f} {pct(p, .9):9.1f}")
PY
