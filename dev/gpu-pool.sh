#!/usr/bin/env bash
# NHWC pooling with the window's size known at compile time (src/storage/pool_fmt.cu, 2x2 and 3x3:
# every tap's load issued before the compares) against the runtime loops, 2026-11-28-plans:
# CONVBENCH_POOL_RS=off (the loops), unset (the default: the new forward at one channel a thread),
# on (the new forward at every width). Call 4 ran 1dc7f39, whose default and `on` also had a
# backward of that form (measured slower, since removed). On the GPU machine, in one call: build;
# test_gpu --part storage (every pool case both ways) beside tests/cli_test.sh (TEST=0 leaves them
# out); per cell of $CELLS and setting of $MODES, auto fullpass --update --no-data-grad
# --no-criterion --per-layer, the step and the pool layers' sum; then scripts/gpu-bench.sh's suite
# for $SUITE (auto beside eager and compiled PyTorch). Results: $OUT/pool.tgz.
#   CELLS="gen-inception-s2:192:tf32 googlenet:128:tf32" SUITE="/tmp/gn/gen-inception-s2.json:192:tf32:nhwc:update" bash dev/gpu-pool.sh
set -u; NAME=pool; . dev/gpu-prep.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
if [ "${TEST:-1}" != 0 ]; then
    t=$SECONDS
    timeout ${TEST_S:-170} $B/tests/test_gpu --part storage > $R/t_storage.txt 2>&1 &
    timeout ${TEST_S:-170} bash tests/cli_test.sh $B/convbench > $R/t_cli.txt 2>&1 & wait
    for p in storage cli; do echo "$p ($((SECONDS - t)) s): $(grep -c '^ok' $R/t_$p.txt) ok; $(tail -1 $R/t_$p.txt)"; grep -E "^FAIL" $R/t_$p.txt | head -10; done
fi
DEADLINE=${DEADLINE:-150}; t0=$SECONDS
echo "| cell | CONVBENCH_POOL_RS | step ms | pools fwd+bwd ms |"; echo "|---|---|---:|---:|"
for c in ${CELLS-gen-inception-s2:192:tf32 googlenet:128:tf32}; do
    IFS=: read -r n b prec <<<"$c"; net=$n; [ -f /tmp/gn/$n.json ] && net=/tmp/gn/$n.json
    for rs in ${MODES-off default on}; do
        [ $((SECONDS - t0)) -ge $DEADLINE ] && { echo "skip (past $DEADLINE s): $c $rs"; continue; }
        f=$R/fp-$n-$b-$prec-rs$rs; env $([ $rs = default ] || echo CONVBENCH_POOL_RS=$rs) timeout 120 $B/convbench fullpass $net --batch $b --backend auto --precision $prec \
            --layout nhwc --no-data-grad --no-criterion --update --warmup 3 --iters ${ITERS:-10} --per-layer --format json --quiet \
            --output $f.json 2>$f.txt || { echo "fullpass $c $rs failed: $(tail -2 $f.txt)"; continue; }
        python3 - $f.json "$c" $rs <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); t = d['tables']
step = [r['median_ms'] for r in t['fullpass'] if r['phase'].strip() == 'total'][0]
pool = sum(r['fwd_ms'] + r['bwd_data_ms'] for r in t['layers'] if r['kind'] == 'Pooling')
print('| %s | %s | %.3f | %.3f |' % (sys.argv[2], ' '.join(sys.argv[3:]), step, pool))
PY
    done
done
if [ -n "${SUITE-/tmp/gn/gen-inception-s2.json:192:tf32:nhwc:update}" ]; then
    B=$B RES=$R/suite ITERS=${ITERS:-10} SUITE_BACKENDS=auto PEER_S=${PEER_S:-150} DEADLINE=${SUITE_DEADLINE:-30} \
        SUITE="${SUITE-/tmp/gn/gen-inception-s2.json:192:tf32:nhwc:update}" bash scripts/gpu-bench.sh suite > $R/suite.txt 2>&1
    echo "suite rc $?"; tail -${TAIL:-6} $R/suite.txt
fi
tar -C /tmp -czf $OUT/pool.tgz pool
