#!/usr/bin/env bash
# On the GPU machine: build, test (plus compute-sanitizer memcheck and racecheck), then time the
# GPU backends and the PyTorch peer on AlexNet b128 (and VGG-16 b16 with --update), and print a
# short table last. Everything lands under $OUT (at most 8 files come back: keep it to a few).
#   scripts/gpu-run.sh            # $OUT defaults to ./gpu-out; CB_COMMIT names the commit
set -u
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
B=build-gpu
LOG="$OUT/log.txt"
RES=$(mktemp -d)
exec > >(tee -a "$LOG") 2>&1
echo "== gpu-run $(date -u +%FT%TZ) commit ${CB_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
nvcc --version | tail -2

echo "== build"
# the device image lacks cJSON, OpenBLAS and zlib headers and the data set: a carried .devpack supplies them
. scripts/device-env.sh
COMMIT_ARG=${CB_COMMIT:+COMMIT=$CB_COMMIT}
make -j16 BUILD=$B $COMMIT_ARG >"$RES/build.log" 2>&1 || {
    echo "full build failed (tail below); building convbench and test_gpu alone"; tail -20 "$RES/build.log"
    make -j16 BUILD=$B $COMMIT_ARG $B/convbench $B/tests/test_gpu 2>&1 | tail -20
}
grep -E 'warning|error' "$RES/build.log" | grep -v poison64 | head -20

echo "== test_gpu"
timeout 240 $B/tests/test_gpu | tee "$RES/test.log" | grep -v '^ok '
TEST_LINE=$(tail -1 "$RES/test.log")

if [ -z "${SKIP_SANITIZERS:-}" ]; then
echo "== compute-sanitizer memcheck (cuda backend cases)"
timeout 150 compute-sanitizer --tool memcheck --print-limit 20 $B/tests/test_gpu --backends cuda 2>&1 | grep -v '^ok ' | tail -15
echo "== compute-sanitizer memcheck (cudnn backend cases)"
timeout 150 compute-sanitizer --tool memcheck --print-limit 20 $B/tests/test_gpu --backends cudnn 2>&1 | grep -v '^ok ' | tail -15
echo "== compute-sanitizer racecheck (small cuda cases)"
timeout 120 compute-sanitizer --tool racecheck --print-limit 20 $B/tests/test_gpu --backends cuda-small 2>&1 | grep -v '^ok ' | tail -10
fi

echo "== convbench profile / fullpass"
CB=$B/convbench
for d in "forward" "backward --wrt data" "backward --wrt filter"; do
    tag=$(echo "$d" | tr -d ' -' | sed 's/wrt//')
    timeout 120 $CB profile alexnet --batch 128 --backend cuda,cudnn --direction $d --format json --quiet \
        --output "$RES/profile_alexnet_$tag.json" || echo "profile $d failed"
done
run_fp() { # name backend precision extra...
    local net=$1 be=$2 prec=$3; shift 3
    timeout 150 $CB fullpass $net --backend $be --precision $prec --format json --quiet --warmup 3 --iters 10 "$@" \
        --output "$RES/fullpass_${net}_${be}_${prec}.json" || echo "fullpass $net $be $prec failed"
}
run_fp alexnet cudnn fp32 --batch 128 --no-data-grad
run_fp alexnet cuda fp32 --batch 128 --no-data-grad
run_fp alexnet auto fp32 --batch 128 --no-data-grad
run_fp alexnet cudnn tf32 --batch 128 --no-data-grad
run_fp vgg16 cudnn fp32 --batch 16 --no-data-grad --update
run_fp vgg16 cuda fp32 --batch 16 --no-data-grad --update

echo "== ECE408 course network (seed 004): infer with cuDNN and each own direct kernel"
W=.devpack/ece408.cbwt
if [ -f "$W" ] && [ -n "${CB_FASHION_DATA:-}" ]; then
    ece() { # tag backend precision [--conv-algo A]
        local tag=$1 be=$2 prec=$3; shift 3
        timeout 120 $CB infer fashion-ece408 --weights "$W" --data "$CB_FASHION_DATA" --resize 86 --batch 100,1000,10000 \
            --backend $be --precision $prec "$@" --format json --quiet --output "$RES/infer_ece408_$tag.json" || echo "infer $tag failed"
    }
    ece cudnn-fp32 cudnn fp32
    ece cudnn-tf32 cudnn tf32
    for a in igemm-simt direct-const direct-const+pool direct-smem direct-smem+pool unroll-smem; do ece $a cuda fp32 --conv-algo $a; done
    for a in direct-tf32 direct-tf32+pool; do ece $a cuda tf32 --conv-algo $a; done
    for a in direct-bf16 direct-bf16+pool; do ece $a cuda bf16 --conv-algo $a; done
else
    echo "skip: no $W (convbench train fashion-ece408 --resize 86 --weights-out $W) or no data"
fi

echo "== model (issue 4): calibrate the cudnn backend, cuDNN profiles of 4 nets x 3 directions, predicted vs measured"
# $RES/h200-calibrated.json, calibrate_cudnn.json, model_<net>_{fwd,bwd_data,bwd_filter}.json; about a minute
timeout 200 bash scripts/model-device.sh $CB "$RES" 150 || echo "model-device failed"
CB=$CB scripts/model-check.sh "$RES" 2>&1 | tail -14

echo "== PyTorch peer"
PYTHONUNBUFFERED=1 timeout 150 python3 bench/peer_pytorch.py "$RES/peer.json" --nets alexnet,vgg16-train --layers '' \
    --modes fp32,tf32 --layouts nchw 2>&1 | tail -8

python3 - "$RES" "$OUT" "$TEST_LINE" <<'PY'
import json, glob, os, sys
res, out, test_line = sys.argv[1:4]
bundle = {}
for f in sorted(glob.glob(res + '/*.json')):
    try: bundle[os.path.basename(f)] = json.load(open(f))
    except Exception as e: bundle[os.path.basename(f)] = str(e)
json.dump(bundle, open(out + '/results.json', 'w'), indent=1)
peer = {(r.get('net'), r.get('mode')): r for r in bundle.get('peer.json', []) if isinstance(r, dict) and 'net' in r}
lines = []
# per-layer ratios own/cuDNN from the profiles
for f in sorted(k for k in bundle if k.startswith('profile_')):
    d = bundle[f]
    if not isinstance(d, dict): continue
    for name, rows in d.get('tables', {}).items():
        lines.append(f'{f}: table {name}')
        for r in rows:
            lines.append('  ' + ' '.join(f'{k}={v:.3f}' if isinstance(v, float) else f'{k}={v}' for k, v in r.items()))
lines.append('')
lines.append(f'test_gpu: {test_line}')
hdr = f"{'network':8} {'backend':6} {'prec':5} {'fwd ms':>8} {'bwd ms':>8} {'total ms':>9} | {'torch fwd':>9} {'torch bwd':>9} {'torch tot':>9}"
lines += [hdr, '-' * len(hdr)]
for f in sorted(k for k in bundle if k.startswith('fullpass_')):
    d = bundle[f]
    if not isinstance(d, dict): continue
    _, net, be, prec = f[:-5].split('_')
    ph = {r['phase'].strip(): r['median_ms'] for r in d['tables']['fullpass']}
    fwd, bwd, tot = ph.get('net forward', 0), ph.get('net backward', 0), ph.get('total', 0)
    p = peer.get((net, prec), {})
    pf = lambda k: f"{p[k]:9.2f}" if k in p else f"{'-':>9}"
    lines.append(f"{net:8} {be:6} {prec:5} {fwd:8.2f} {bwd:8.2f} {tot:9.2f} | {pf('fwd')} {pf('bwd')} {pf('total')}")
ece = sorted(k for k in bundle if k.startswith('infer_ece408_'))
if ece:
    lines += ['', 'ECE408 convs at batch 10000: Op Time ms (summed over the batches), test accuracy',
              f"{'variant':20} {'conv1':>8} {'conv2':>8} {'sum':>8} {'acc':>7}  algorithms"]
for f in ece:
    d = bundle[f]
    if not isinstance(d, dict): continue
    conv = [r for r in d['tables']['conv layers'] if r['batch'] == 10000]
    acc = [r['test_accuracy'] for r in d['tables']['batch sizes'] if r['batch'] == 10000]
    if len(conv) < 2 or not acc: continue
    lines.append(f"{f[13:-5]:20} {conv[0]['op_ms']:8.3f} {conv[1]['op_ms']:8.3f} {conv[0]['op_ms'] + conv[1]['op_ms']:8.3f} "
                 f"{acc[0]:7.4f}  {', '.join(r.get('algo', '') for r in conv)}")
open(out + '/summary.txt', 'w').write('\n'.join(lines) + '\n')
print('\n'.join(lines))
PY
