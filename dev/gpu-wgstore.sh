#!/usr/bin/env bash
# The own wgmma implicit GEMM on bf16 NHWC storage as it is (auto's wg_race, src/sched/auto.c), on
# the GPU machine: build; test_gpu --part wg; then A/B in one call, each cell's fullpass --update
# --no-data-grad --per-layer (median of ITERS steps) under
#   race   auto as it is: the wgmma kernel raced per phase against cuDNN's pick (and cuBLAS's)
#   lib    auto with CONVBENCH_AUTO_WGMMA=cudnn: the libraries alone, auto before this kernel joined
#   cudnn  the cudnn backend
# and, for PROFILE cells, `profile --backend auto,cudnn --direction all` with the own kernel forced
# (CONVBENCH_AUTO_WGMMA=own) and both batch norms on cuDNN: every conv phase it runs beside cuDNN's
# on the same storage (issue 12's own-kernel ratio without the fp32 NCHW conversions).
#   CELLS="net:batch ..." PROFILE="net:batch ..." bash dev/gpu-wgstore.sh     (results: $OUT/wgstore.tgz)
set -u; NAME=wgstore; . dev/gpu-prep.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
timeout ${TEST_S:-150} $B/tests/test_gpu --part wg > $R/t_wg.log 2>&1; echo "test_gpu --part wg: $(tail -1 $R/t_wg.log)"
grep -E "^FAIL" $R/t_wg.log | head -20
DEADLINE=${DEADLINE:-520}; t0=$SECONDS
late() { [ $((SECONDS - t0)) -ge $DEADLINE ] && { echo "skip (past $DEADLINE s): $*"; return 0; }; return 1; }
echo "| cell | mode | step ms | img/s | wgmma phases |"; echo "|---|---|---:|---:|---:|"
for c in ${CELLS:-resnet50:64 resnet50:256 vgg-a:64}; do
    IFS=: read -r n b <<<"$c"; tag=$(basename $n .json)-$b
    for mode in ${MODES:-race lib cudnn}; do
        late "$c $mode" && continue
        be=auto; [ $mode = cudnn ] && be=cudnn
        env=; [ $mode = lib ] && env="CONVBENCH_AUTO_WGMMA=cudnn"
        env $env timeout 150 $B/convbench fullpass $n --batch $b --backend $be --precision bf16 --layout nhwc --no-data-grad --update \
            --warmup 3 --iters ${ITERS:-10} --per-layer --format json --quiet --output $R/fp-$tag-$mode.json 2>$R/fp-$tag-$mode.log ||
            { echo "fullpass $c $mode failed: $(tail -2 $R/fp-$tag-$mode.log)"; continue; }
        python3 - $R/fp-$tag-$mode.json "$c" $mode $b <<'PY'
import json, sys
fp = json.load(open(sys.argv[1])); t = fp['tables']
step = [r['median_ms'] for r in t['fullpass'] if r['phase'].strip() == 'total'][0]
wg = sum(1 for r in t.get('layers', []) for k, v in r.items() if k.startswith('algo') and v and 'wgmma' in str(v))
print('| %s | %s | %.3f | %.0f | %d |' % (sys.argv[2], sys.argv[3], step, int(sys.argv[4]) * 1000 / step, wg))
for nte in fp.get('notes', []):
    if 'step check' in str(nte): print('  ', str(nte)[:400])
PY
    done
done
for c in ${PROFILE:-resnet50:64}; do
    IFS=: read -r n b <<<"$c"; tag=$(basename $n .json)-$b
    late "profile $c" && continue
    CONVBENCH_AUTO_WGMMA=own CONVBENCH_AUTO_BN=cudnn timeout 200 $B/convbench profile $n --batch $b --backend auto,cudnn --precision bf16 \
        --layout nhwc --direction all --warmup 2 --iters ${PITERS:-10} --format json --quiet --output $R/prof-$tag.json 2>$R/prof-$tag.log ||
        { echo "profile $c failed: $(tail -2 $R/prof-$tag.log)"; continue; }
    python3 - $R/prof-$tag.json "$c" <<'PY'
import json, math, sys
t = json.load(open(sys.argv[1]))['tables']
allr = []
for d in ('forward', 'bwd_data', 'bwd_filter'):
    rows = [r for r in t.get(d, []) if 'wgmma' in str(r.get('auto_alg')) and r.get('cudnn_ms')]
    conv = [r for r in t.get(d, []) if r.get('cudnn_alg') and r.get('cudnn_ms')]
    rat = [r['auto_ms'] / r['cudnn_ms'] for r in rows]
    allr += rat
    if rat: print('%s %s: own wgmma / cuDNN geomean %.3f over %d of %d rows (min %.2f, max %.2f)' % (sys.argv[2], d,
        math.exp(sum(map(math.log, rat)) / len(rat)), len(rat), len(conv), min(rat), max(rat)))
if allr: print('%s all: %.3f over %d rows' % (sys.argv[2], math.exp(sum(map(math.log, allr)) / len(allr)), len(allr)))
PY
done
tar -C $R -czf $OUT/wgstore.tgz .
