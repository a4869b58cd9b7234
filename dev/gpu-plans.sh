#!/usr/bin/env bash
# How wide cuDNN's graph race should be (2026-11-28-plans). Until d0a3600 every race timed one
# engine config per heuristics list, whatever CONVBENCH_DNN_GRAPH_PLANS said; that stayed the default
# (ONE_PER_LIST). On the GPU machine, in one call: build; stop 50's unrun GPU checks side by side
# (test_gpu --part dnngraph, --part pick, tests/cli_test.sh; TEST=0 leaves them out); then per cell,
# auto fullpass --update --no-data-grad --no-criterion --per-layer --verbose with PLANS unset and each of
# $WIDTHS, the step, the planning seconds and how many plans each race timed (from --verbose).
#   CELLS="gen-vgg-s3:256:tf32 resnet50:64:bf16" WIDTHS="4 12" bash dev/gpu-plans.sh
# (results: $OUT/plans.tgz; a cell is net:batch:precision, NHWC; random nets from /tmp/gn)
set -u; NAME=plans; . dev/gpu-prep.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
if [ "${TEST:-1}" != 0 ]; then
    t=$SECONDS
    for p in dnngraph pick; do timeout ${TEST_S:-180} $B/tests/test_gpu --part $p > $R/t_$p.txt 2>&1 & done
    timeout ${TEST_S:-180} bash tests/cli_test.sh $B/convbench > $R/t_cli.txt 2>&1 & wait
    for p in dnngraph pick cli; do echo "$p ($((SECONDS - t)) s): $(tail -1 $R/t_$p.txt)"; grep -E "^FAIL" $R/t_$p.txt | head -10; done
fi
DEADLINE=${DEADLINE:-240}; t0=$SECONDS
echo "| cell | plans | step ms | plan s | races | most timed |"; echo "|---|---|---:|---:|---:|---:|"
for c in ${CELLS-gen-vgg-s3:256:tf32 gen-inception-s2:192:tf32 resnet50:64:bf16}; do
    IFS=: read -r n b prec <<<"$c"; net=$n; [ -f /tmp/gn/$n.json ] && net=/tmp/gn/$n.json
    for w in default ${WIDTHS-6 16}; do
        [ $((SECONDS - t0)) -ge $DEADLINE ] && { echo "skip (past $DEADLINE s): $c $w"; continue; }
        f=$R/fp-$n-$b-$prec-$w; env $([ $w = default ] || echo CONVBENCH_DNN_GRAPH_PLANS=$w) timeout ${RUN_S:-150} $B/convbench fullpass $net \
            --batch $b --backend auto --precision $prec --layout nhwc --no-data-grad --no-criterion --update --warmup 3 \
            --iters ${ITERS:-10} --per-layer --verbose --format json --quiet --output $f.json 2>$f.txt ||
            { echo "fullpass $c $w failed: $(tail -2 $f.txt)"; continue; }
        python3 - $f "$c" $w <<'PY'
import json, re, sys
f = sys.argv[1]; d = json.load(open(f + '.json')); t = d['tables']
step = [r['median_ms'] for r in t['fullpass'] if r['phase'].strip() == 'total'][0]
import collections  # --verbose: "note: layer 'L' PHASE graph plan: engine N, T ms, ..." per plan timed
races = collections.Counter(re.findall(r"^note: layer '(.*)' (.*) graph plan: engine [0-9-]+, [0-9.]+ ms", open(f + '.txt').read(), re.M))
timed = list(races.values())
print('| %s | %s | %.3f | %.1f | %d | %s |' % (sys.argv[2], sys.argv[3], step, d.get('plan_s', -1), len(timed), max(timed) if timed else '-'))
PY
    done
done
tar -C /tmp -czf $OUT/plans.tgz plans
