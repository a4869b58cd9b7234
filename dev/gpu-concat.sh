#!/usr/bin/env bash
# After a build in the same call, or alone (it builds): the NHWC concatenation's kernel against the
# copy engine's 2D copies it replaced (CONVBENCH_CONCAT=copy2d), A/B in one call (2026-11-27 late),
# and the warp per row for every unit (CONVBENCH_CONCAT=rows; before the flat kernel of 2026-11-28):
# each cell's fullpass --update --no-data-grad (step ms) and the per-layer profile's concatenation
# rows (forward + backward, ms), under auto.
#   CELLS="net:batch:prec:layout ..." MODES="copy2d rows kernel" bash dev/gpu-concat.sh      (results in $OUT/concat.tgz)
set -u; NAME=concat; . dev/gpu-prep.sh
CELLS=${CELLS:-"googlenet:128:bf16:nhwc /tmp/gn/gen-inception-s2.json:192:bf16:nhwc /tmp/gn/gen-inception-s3.json:128:bf16:nhwc"}
echo "| cell | concat | step ms | concat rows ms (fwd + bwd) |"; echo "|---|---|---:|---:|"
for c in $CELLS; do
    IFS=: read -r n b p l <<<"$c"; tag=$(basename $n .json)-$b-$p-$l
    for mode in ${MODES:-copy2d rows kernel}; do
        m=; [ $mode != kernel ] && m=$mode
        CONVBENCH_CONCAT=$m timeout 120 $B/convbench fullpass $n --batch $b --backend auto --precision $p --layout $l --no-data-grad --update \
            --warmup 3 --iters 10 --format json --quiet --output $R/fp-$tag-$mode.json 2>$R/fp-$tag-$mode.log || echo "fullpass $c $mode failed"
        CONVBENCH_CONCAT=$m timeout 120 $B/convbench profile $n --batch $b --backend auto --precision $p --layout $l --direction all \
            --format json --quiet --output $R/pr-$tag-$mode.json 2>$R/pr-$tag-$mode.log || echo "profile $c $mode failed"
        python3 - $R/fp-$tag-$mode.json $R/pr-$tag-$mode.json "$tag" $mode <<'PY'
import json, sys
fp, pr = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
step = [r['median_ms'] for r in fp['tables']['fullpass'] if r['phase'].strip() == 'total'][0]
cat = 0.0
for t, rows in pr['tables'].items():
    for r in rows:
        if str(r.get('layer', '')).endswith('/output'): # (the concatenations of GoogLeNet's and the generated inception blocks)
            cat += float(r.get('auto_ms') or 0)
print('| %s | %s | %.3f | %.3f |' % (sys.argv[3], sys.argv[4], step, cat))
PY
    done
done
tar -C $R -czf $OUT/concat.tgz .
