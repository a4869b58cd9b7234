#!/usr/bin/env bash
# NHWC pooling A/B on the GPU machine (src/storage/pool_fmt.cu), and any other A/B of settings, per
# setting of $MODES: each "default", fullpass flags --flag=value[,--flag=value...] (--recompute=on), or VAR=value[,VAR=value...], such as CONVBENCH_CONCAT_RELU=off
# (2026-11-29-concat) or CONVBENCH_POOL_SCATTER=off (the fp32 max backward at
# one channel a thread as the gather, 2026-11-29-pools) or CONVBENCH_POOL_RS=off|on (a 2x2 or 3x3
# window's forward known at compile time, 2026-11-28-plans). In one call: build; BENCH=1:
# dev/pool_bench.cu (the kernels alone on pool shapes of several networks, each setting, against
# the DRAM floor: pool_bench.md); test_gpu
# --part storage (every pool case under each setting; PARTS="storage dnngraph" runs more parts at
# once) beside tests/cli_test.sh (TEST=0 leaves them out, CLI=0 the second); per cell of $CELLS and setting of $MODES, auto fullpass --update
# --no-data-grad --no-criterion --per-layer, the step, the pool layers' sum (and each pool row:
# pools.md), the concatenations' and the fused activation passes' parts, the planned memory and the
# device's measured peak; then scripts/gpu-bench.sh's suite for $SUITE (auto beside eager and compiled
# PyTorch). BNLAB=HxWxC,...: dev/cuda/bn_lab.cu on those batch-norm shapes first (BNLAB_BATCH).
# Results: $OUT/pool.tgz.
#   CELLS="gen-inception-s2:192:tf32 googlenet:128:tf32" MODES="default CONVBENCH_POOL_SCATTER=off" SUITE= bash dev/gpu-pool.sh
set -u; NAME=pool; . dev/gpu-prep.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
if [ "${BENCH:-0}" = 1 ]; then
    nvcc -O3 -std=c++17 -arch=sm_90 -DCB_HAVE_CUDA -Iinclude -Isrc dev/pool_bench.cu -L$B -lconvbench -Xlinker -rpath,$PWD/$B \
        -o $R/pool_bench && timeout 120 $R/pool_bench > $R/pool_bench.md 2>&1
    echo "pool_bench rc $?"; cat $R/pool_bench.md
fi
if [ -n "${BNLAB:-}" ]; then # dev/cuda/bn_lab.cu on the shapes BNLAB (HxWxC,...) at BNLAB_BATCH, periodic and one channel a thread
    [ "${TEST:-1}" != 0 ] && { BUILD_ONLY=1 bash dev/cuda/bn_lab.sh > $R/bn_lab_build.txt 2>&1 & } # (built beside the tests, run after them)
fi
if [ "${TEST:-1}" != 0 ]; then
    t=$SECONDS
    for p in ${PARTS:-storage}; do timeout ${TEST_S:-170} $B/tests/test_gpu --part $p > $R/t_$p.txt 2>&1 & done
    [ "${CLI:-1}" != 0 ] && { timeout ${TEST_S:-170} bash tests/cli_test.sh $B/convbench > $R/t_cli.txt 2>&1 & }
    wait
    for p in ${PARTS:-storage} $([ "${CLI:-1}" != 0 ] && echo cli); do echo "$p ($((SECONDS - t)) s): $(grep -c '^ok' $R/t_$p.txt) ok; $(tail -1 $R/t_$p.txt)"; grep -E "^FAIL" $R/t_$p.txt | head -10; done
fi
if [ -n "${BNLAB:-}" ]; then
    wait
    NOBUILD=1 OUT=$R/bn_lab SHAPES=$BNLAB BATCHES=${BNLAB_BATCH:-192} PRECS=${BNLAB_PRECS:-bf16} FORMS="${BNLAB_FORMS:-periodic one}" bash dev/cuda/bn_lab.sh
    cat $R/bn_lab/*.txt
fi
DEADLINE=${DEADLINE:-150}; t0=$SECONDS
echo "| cell | setting | step ms | pools fwd+bwd ms | concat fwd+bwd ms | activation, fused ms | batch norms ms | made again ms | planned MiB | device peak MiB | planning s |"; echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for c in ${CELLS-gen-inception-s2:192:tf32 googlenet:128:tf32}; do
    IFS=: read -r n b prec <<<"$c"; net=$n; [ -f /tmp/gn/$n.json ] && net=/tmp/gn/$n.json
    for m in ${MODES-default CONVBENCH_POOL_SCATTER=off}; do
        [ $((SECONDS - t0)) -ge $DEADLINE ] && { echo "skip (past $DEADLINE s): $c $m"; continue; }
        envs=; flags=; case $m in default) ;; --*) flags=$(echo $m | tr ',=' '  ') ;; *) envs=$(echo $m | tr , ' ') ;; esac # (a mode of flags: --recompute=on)
        f=$R/fp-$n-$b-$prec-$(echo $m | tr -c 'a-zA-Z0-9\n' '_'); env $envs timeout 120 $B/convbench fullpass $net --batch $b --backend auto --precision $prec \
            --layout nhwc --no-data-grad --no-criterion --update --warmup 3 --iters ${ITERS:-10} --per-layer $flags --format json --quiet \
            --output $f.json 2>$f.txt || { echo "fullpass $c $m failed: $(tail -2 $f.txt)"; continue; }
        python3 - $f.json "$c" $m $R/pools.md <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); t = d['tables']
step = [r['median_ms'] for r in t['fullpass'] if r['phase'].strip() == 'total'][0]
pools = [r for r in t['layers'] if r['kind'] == 'Pooling']
part = {r['part']: r['total_ms'] for r in t['breakdown']}
print('| %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.0f | %.0f | %.1f |' % (sys.argv[2], sys.argv[3], step, sum(r['fwd_ms'] + r['bwd_data_ms'] for r in pools),
      part.get('Concatenate', 0), part.get('activation, fused', 0), sum(v for k, v in part.items() if 'batch norm' in k),
      part.get('outputs made again (--recompute)', 0), d['memory_mb'], d.get('device_peak_mb') or 0, d.get('plan_s') or -1))
with open(sys.argv[4], 'a') as f:
    for r in pools: f.write('| %s | %s | %s | %.3f | %.3f |\n' % (sys.argv[2], sys.argv[3], r['layer'], r['fwd_ms'], r['bwd_data_ms']))
PY
    done
done
[ -f $R/pools.md ] && { echo; echo "| cell | setting | pool | fwd ms | bwd ms |"; echo "|---|---|---|---:|---:|"; sort -s -t'|' -k2,2 -k4,4 $R/pools.md; }
if [ -n "${SUITE-/tmp/gn/gen-inception-s2.json:192:tf32:nhwc:update}" ]; then
    B=$B RES=$R/suite ITERS=${ITERS:-10} SUITE_BACKENDS=auto PEER_S=${PEER_S:-150} DEADLINE=${SUITE_DEADLINE:-30} \
        SUITE="${SUITE-/tmp/gn/gen-inception-s2.json:192:tf32:nhwc:update}" bash scripts/gpu-bench.sh suite > $R/suite.txt 2>&1
    echo "suite rc $?"; tail -${TAIL:-6} $R/suite.txt
fi
tar -C /tmp -czf $OUT/pool.tgz pool
