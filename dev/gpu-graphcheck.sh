#!/usr/bin/env bash
# cuDNN's graph race in every precision, each plan checked against a legacy FMA algorithm on random
# operands before it is taken (src/cudnn/graph.c check_plan), on the GPU machine in one call: build;
# test_gpu --part dnngraph (plans forced, fp32 among them, against float64; a bound of 0 leaves none);
# then A/B per cell, fullpass --update --no-data-grad --per-layer --verbose under auto with the
# graph race (race) and without it (off, as fp32 ran before), the checks' errors and the plans left
# out counted from the verbose log. PICK=1: test_gpu --part pick first (every graph plan, fp32 too).
#   CELLS="vgg-a:64:fp32:nhwc ..." bash dev/gpu-graphcheck.sh        (results: $OUT/graphcheck.tgz)
set -u; NAME=graphcheck; . dev/gpu-prep.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
t=$SECONDS
if [ "${TEST:-1}" != 0 ]; then
    timeout ${TEST_S:-200} $B/tests/test_gpu --part dnngraph > $R/t_dnngraph.txt 2>&1; echo "test_gpu --part dnngraph (rc $?, $((SECONDS - t)) s): $(tail -1 $R/t_dnngraph.txt)"
    grep -E "^FAIL" $R/t_dnngraph.txt | head -20
fi
if [ "${PICK:-0}" != 0 ]; then
    t=$SECONDS; timeout ${PICK_S:-240} $B/tests/test_gpu --part pick > $R/t_pick.txt 2>&1; echo "test_gpu --part pick (rc $?, $((SECONDS - t)) s): $(tail -1 $R/t_pick.txt)"
    grep -E "^FAIL" $R/t_pick.txt | head -20
fi
DEADLINE=${DEADLINE:-400}; t0=$SECONDS
echo "| cell | graph | step ms | graph phases | checked (min / median / max err) | left out |"; echo "|---|---|---:|---:|---|---:|"
for c in ${CELLS-vgg-a:64:fp32:nhwc resnet50:64:fp32:nhwc}; do
    IFS=: read -r n b prec lay <<<"$c"; tag=$(basename $n .json)-$b-$prec-$lay
    for mode in ${MODES:-race off}; do
        [ $((SECONDS - t0)) -ge $DEADLINE ] && { echo "skip (past $DEADLINE s): $c $mode"; continue; }
        CONVBENCH_DNN_GRAPH=$mode timeout 150 $B/convbench fullpass $n --batch $b --backend ${BE:-auto} --precision $prec --layout $lay --no-data-grad --update \
            --warmup 3 --iters ${ITERS:-10} --per-layer --verbose --format json --quiet --output $R/fp-$tag-$mode.json 2>$R/fp-$tag-$mode.txt ||
            { echo "fullpass $c $mode failed: $(tail -2 $R/fp-$tag-$mode.txt)"; continue; }
        python3 - $R/fp-$tag-$mode.json "$c" $mode $R/fp-$tag-$mode.txt <<'PY'
import json, re, sys, statistics as st
fp = json.load(open(sys.argv[1])); t = fp['tables']
step = [r['median_ms'] for r in t['fullpass'] if r['phase'].strip() == 'total'][0]
g = sum(1 for r in t.get('layers', []) for k, v in r.items() if k.startswith('algo') and v and 'graph engine' in str(v))
log = open(sys.argv[4]).read()
errs = [float(x) for x in re.findall(r'checked: ([0-9.e+-]+) from', log)]
out = len(re.findall(r'left out', log))
e = '%.1e / %.1e / %.1e (%d)' % (min(errs), st.median(errs), max(errs), len(errs)) if errs else '-'
print('| %s | %s | %.3f | %d | %s | %d |' % (sys.argv[2], sys.argv[3], step, g, e, out))
PY
    done
done
grep -h "left out" $R/*.txt 2>/dev/null | sed 's/.*engine/engine/' | sort | uniq -c | sort -rn | head -12
tar -C /tmp -czf $OUT/graphcheck.tgz graphcheck
