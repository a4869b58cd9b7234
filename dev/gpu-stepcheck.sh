#!/usr/bin/env bash
# After a build in the same call, or alone (it builds): the step check (cb_exec_opts.step_check,
# on by default in the commands) against --no-step-check, A/B in one call: each cell's fullpass
# --update --no-data-grad (median step ms, wall seconds of the whole command) and the check's note.
#   CELLS="net:batch:prec:layout:backend ..." bash dev/gpu-stepcheck.sh      (results in $OUT/stepcheck.tgz)
set -u; NAME=stepcheck; . dev/gpu-prep.sh
CELLS=${CELLS:-"/tmp/gn/gen-inception-s3.json:128:bf16:nhwc:auto /tmp/gn/gen-inception-s3.json:128:bf16:nhwc:cudnn googlenet:128:bf16:nhwc:auto resnet50:64:bf16:nhwc:auto"}
echo "| cell | step check | step ms | command s |"; echo "|---|---|---:|---:|"
for c in $CELLS; do
    IFS=: read -r n b p l be <<<"$c"; tag=$(basename $n .json)-$b-$p-$l-$be
    for mode in off on; do
        f=; [ $mode = off ] && f=--no-step-check
        t0=$(date +%s.%N)
        timeout 150 $B/convbench fullpass $n --batch $b --backend $be --precision $p --layout $l --no-data-grad --update $f \
            --warmup 3 --iters 20 --per-layer --format json --quiet --output $R/fp-$tag-$mode.json 2>$R/fp-$tag-$mode.log || echo "fullpass $c $mode failed: $(tail -2 $R/fp-$tag-$mode.log)"
        t1=$(date +%s.%N)
        python3 - $R/fp-$tag-$mode.json "$tag" $mode $(python3 -c "print($t1-$t0)") <<'PY'
import json, sys
fp = json.load(open(sys.argv[1]))
step = [r['median_ms'] for r in fp['tables']['fullpass'] if r['phase'].strip() == 'total'][0]
print('| %s | %s | %.3f | %.1f |' % (sys.argv[2], sys.argv[3], step, float(sys.argv[4])))
for nte in fp.get('notes', []):
    if 'step check' in str(nte): print('  ', str(nte)[:600])
PY
    done
done
tar -C $R -czf $OUT/stepcheck.tgz .
