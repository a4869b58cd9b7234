#!/usr/bin/env bash
# After a build in the same call, or alone (it builds): the workspaces' placement A/B in one call,
# each cell's fullpass --update --no-data-grad --no-criterion (the suite's fair mode) as
#   old    CONVBENCH_WORKSPACE=arena --memory-slack 0: the arena's gaps, else one buffer outside
#   grow   the default: past the arena's end where no gap holds one, the arena grown (be->grow),
#          and the trim at --memory-slack 1
#   slack5 the same with --memory-slack 5
# printing the median step, the planned and the measured device peak, and the workspace notes.
#   CELLS="net:batch:prec:layout:backend ..." bash dev/gpu-grow.sh      (results in $OUT/grow.tgz)
set -u; NAME=grow; . dev/gpu-prep.sh
CELLS=${CELLS:-"alexnet:128:tf32:nhwc:auto vgg-a:64:fp32:nchw:auto resnet50:64:bf16:nhwc:auto"}
MODES=${MODES:-"old grow slack5"}
echo "| cell | mode | step ms | planned MiB | device peak MiB |"; echo "|---|---|---:|---:|---:|"
for c in $CELLS; do
    IFS=: read -r n b p l be <<<"$c"; tag=$(basename $n .json)-$b-$p-$l-$be
    for mode in $MODES; do
        env=(); f=()
        case $mode in old) env=(CONVBENCH_WORKSPACE=arena); f=(--memory-slack 0) ;; slack5) f=(--memory-slack 5) ;; esac
        env "${env[@]}" timeout 150 $B/convbench fullpass $n --batch $b --backend $be --precision $p --layout $l --no-data-grad \
            --no-criterion --update "${f[@]}" --warmup 3 --iters 10 --format json --quiet --output $R/fp-$tag-$mode.json \
            2>$R/fp-$tag-$mode.log || echo "fullpass $c $mode failed: $(tail -2 $R/fp-$tag-$mode.log)"
        python3 - $R/fp-$tag-$mode.json "$tag" $mode <<'PY'
import json, sys
try:
    fp = json.load(open(sys.argv[1]))
except Exception as e:
    print('| %s | %s | (no result: %s) | | |' % (sys.argv[2], sys.argv[3], e)); sys.exit(0)
step = [r['median_ms'] for r in fp['tables']['fullpass'] if r['phase'].strip() == 'total'][0]
print('| %s | %s | %.3f | %.1f | %s |' % (sys.argv[2], sys.argv[3], step, fp['memory_mb'], fp.get('device_peak_mb')))
for nte in fp.get('notes', []):
    if 'workspace' in str(nte)[:40]: print('  ', str(nte)[:400])
for r in fp['tables'].get('memory', []):
    if r['kind'] in ('workspace', 'arena grown for workspaces'): print('   memory %s: %.1f MiB (at peak %s)' % (r['kind'], r['mib'] or 0, r['at_peak_mib']))
PY
    done
done
tar -C $R -czf $OUT/grow.tgz .
