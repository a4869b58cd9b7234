#!/usr/bin/env bash
# The own wgmma implicit GEMM on bf16 NHWC storage as it is (auto's wg_race, src/sched/auto.c), on
# the GPU machine: build; test_gpu --part wg; then A/B in one call, each cell's fullpass --update
# --no-data-grad --per-layer (median of ITERS steps) under
#   race   auto as it is: the wgmma kernel raced per phase against cuDNN's pick (and cuBLAS's)
#   lib    auto with CONVBENCH_AUTO_WGMMA=cudnn: the libraries alone, auto before this kernel joined
#   cudnn  the cudnn backend
#   tmaoff auto with CONVBENCH_WG_TMA=off: the wgmma kernel's cp.async tiles, as before 2026-11-28 (evening)
# and FORCED cells with the kernel forced (below): issue 12's own-kernel ratio on the storage itself,
# without the fp32 NCHW conversions. STORAGE=1: test_gpu --part storage first; OWN=1: --part own.
# PREC=tf32: the same on fp32 NHWC storage with tf32 products (the kernel's forward and backward data);
# PREC=fp32: with 3xTF32 products (the forward and stride-1 backward data).
#   CELLS="net:batch ..." FORCED="net:batch ..." bash dev/gpu-wgstore.sh     (results: $OUT/wgstore.tgz)
# (CELLS="" runs no A/B cell; TEST=0 leaves the test out)
set -u; NAME=wgstore; . dev/gpu-prep.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
if [ "${TEST:-1}" != 0 ]; then # TEST=0: no test_gpu --part wg
    timeout ${TEST_S:-150} $B/tests/test_gpu --part wg > $R/t_wg.log 2>&1; echo "test_gpu --part wg: $(tail -1 $R/t_wg.log)"
    grep -E "^FAIL" $R/t_wg.log | head -20
fi
if [ "${OWN:-0}" != 0 ]; then # the cuda backend's own-algorithm table (igemm-wgmma-bf16 on fp32 NCHW buffers among them)
    timeout ${OWN_S:-150} env ${OWN_ALGOS:+CB_TEST_ALGOS=$OWN_ALGOS} $B/tests/test_gpu --part own > $R/t_own.log 2>&1; echo "test_gpu --part own (rc $?): $(tail -1 $R/t_own.log)"
    grep -E "^FAIL" $R/t_own.log | head -20
fi
if [ -n "${STORAGE:-}" ]; then
    timeout ${STORAGE_S:-260} $B/tests/test_gpu --part storage > $R/t_storage.log 2>&1; echo "test_gpu --part storage (rc $?): $(tail -1 $R/t_storage.log)"
    grep -E "^FAIL" $R/t_storage.log | head -20
fi
DEADLINE=${DEADLINE:-520}; t0=$SECONDS
late() { [ $((SECONDS - t0)) -ge $DEADLINE ] && { echo "skip (past $DEADLINE s): $*"; return 0; }; return 1; }
echo "| cell | mode | step ms | img/s | wgmma phases |"; echo "|---|---|---:|---:|---:|"
for c in ${CELLS-resnet50:64 resnet50:256 vgg-a:64}; do
    IFS=: read -r n b <<<"$c"; tag=$(basename $n .json)-$b-${PREC:-bf16}
    for mode in ${MODES:-race lib cudnn}; do
        late "$c $mode" && continue
        be=auto; [ $mode = cudnn ] && be=cudnn
        env=; [ $mode = lib ] && env="CONVBENCH_AUTO_WGMMA=cudnn"; [ $mode = tmaoff ] && env="CONVBENCH_WG_TMA=off"
        env $env timeout 150 $B/convbench fullpass $n --batch $b --backend $be --precision ${PREC:-bf16} --layout nhwc --no-data-grad --update \
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
# FORCED cells: fullpass with the kernel forced wherever it runs (CONVBENCH_AUTO_WGMMA=own); each such
# phase's choice keeps both race times, on the layer's own buffers: "(forced OWN, else LIB)", LIB the
# best of cuDNN's pick (and cuBLAS's for a 1x1): own / library per phase, and the step with them all
# (FORCED_TMA="on off": each forced cell with the TMA tiles and again without, CONVBENCH_WG_TMA)
for c in ${FORCED:-resnet50:64}; do
  for tma in ${FORCED_TMA:-on}; do
    IFS=: read -r n b <<<"$c"; tag=$(basename $n .json)-$b-${PREC:-bf16}; [ $tma = off ] && tag=$tag-tmaoff
    late "forced $c" && continue
    echo "FORCED $c (CONVBENCH_WG_TMA=$tma)"
    CONVBENCH_WG_TMA=$tma CONVBENCH_AUTO_WGMMA=own timeout 150 $B/convbench fullpass $n --batch $b --backend auto --precision ${PREC:-bf16} --layout nhwc --no-data-grad \
        --update --warmup 3 --iters ${ITERS:-10} --per-layer --format json --quiet --output $R/fp-$tag-forced.json 2>$R/fp-$tag-forced.log ||
        { echo "fullpass $c forced failed: $(tail -2 $R/fp-$tag-forced.log)"; continue; }
    python3 - $R/fp-$tag-forced.json "$c" $b <<'PY'
import json, math, re, sys
t = json.load(open(sys.argv[1]))['tables']
step = [r['median_ms'] for r in t['fullpass'] if r['phase'].strip() == 'total'][0]
print('%s forced: step %.3f ms (%.0f img/s)' % (sys.argv[2], step, int(sys.argv[3]) * 1000 / step))
allr, conv = [], 0
for k in ('algo_fwd', 'algo_bwd_data', 'algo_bwd_filter'):
    rat = []
    for r in t['layers']:
        a = r.get(k) or ''
        m = re.search(r'igemm-wgmma-(?:bf16|tf32|3xtf32) \(forced ([0-9.]+), else ([0-9.]+)\)', a)
        if m: rat.append(float(m.group(1)) / float(m.group(2)))
        conv += r.get('kind') == 'Convolution' and bool(a)
    allr += rat
    if rat: print('  %s: own wgmma / library (race times) geomean %.3f over %d phases (min %.2f, max %.2f)' % (k[5:],
        math.exp(sum(map(math.log, rat)) / len(rat)), len(rat), min(rat), max(rat)))
if allr: print('  all: %.3f over %d of %d conv phases' % (math.exp(sum(map(math.log, allr)) / len(allr)), len(allr), conv))
PY
  done
done
tar -C $R -czf $OUT/wgstore.tgz .
