#!/usr/bin/env bash
# Where a cell's step goes, ours beside PyTorch's, in one call (a network where convbench loses: find
# the layers). Build; test_gpu --part $PARTS (TEST=0: none); per cell of $CELLS (net:batch:prec, a
# random network's file in /tmp/gn) and backend of $BACKENDS (default auto), fullpass --per-layer
# --update --no-data-grad --no-criterion as a table (every layer's phases and algorithms) and JSON;
# then, PEER=1, dev/peer_profile.py on the same network eager (and compiled, PEER_COMPILE=1): its
# kernels by GPU time. Results: $OUT/layers.tgz.
#   CELLS="gen-mobile-s12:192:bf16" BACKENDS="auto cudnn" PEER=1 bash dev/gpu-layers.sh
set -u; NAME=layers; . dev/gpu-prep.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
if [ "${TEST:-1}" != 0 ]; then
    for p in ${PARTS:-wg}; do timeout ${TEST_S:-170} $B/tests/test_gpu --part $p > $R/t_$p.txt 2>&1; echo "$p: $(tail -1 $R/t_$p.txt)"; grep -E "^FAIL" $R/t_$p.txt | head -10; done
fi
for c in ${CELLS:-gen-mobile-s12:192:bf16}; do
    IFS=: read -r n b prec <<<"$c"; net=$n; [ -f /tmp/gn/$n.json ] && net=/tmp/gn/$n.json
    for be in ${BACKENDS:-auto}; do
        f=$R/fp-$n-$b-$prec-$be
        env ${ENVS:-} timeout 150 $B/convbench fullpass $net --batch $b --backend $be --precision $prec --layout nhwc --no-data-grad \
            --no-criterion --update --warmup 3 --iters ${ITERS:-10} --per-layer --format json --quiet --output $f.json 2>$f.err || { echo "fullpass $c $be failed: $(tail -2 $f.err)"; continue; }
        python3 - $f.json "$c $be" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); t = d['tables']
step = [r['median_ms'] for r in t['fullpass'] if r['phase'].strip() == 'total'][0]
print('\n## %s: step %.3f ms, planned %.0f MiB, planning %.1f s' % (sys.argv[2], step, d['memory_mb'], d.get('plan_s') or -1))
print(' '.join('%s %.2f' % (r['part'][:22], r['total_ms']) for r in t['breakdown']))
rows = sorted(t['layers'], key=lambda r: -(r['fwd_ms'] + r['bwd_data_ms'] + r['bwd_filter_ms'] + r.get('fwd_epilogue_ms', 0) + r.get('bwd_epilogue_ms', 0)))
print('| layer | kind | fwd | fwd epi | bwd data | bwd epi | bwd filter | algos |'); print('|---|---|---:|---:|---:|---:|---:|---|')
for r in rows[:int(__import__('os').environ.get('TOP', '24'))]:
    print('| %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %s / %s / %s |' % (r['layer'], r['kind'], r['fwd_ms'], r.get('fwd_epilogue_ms', 0), r['bwd_data_ms'],
          r.get('bwd_epilogue_ms', 0), r['bwd_filter_ms'], r.get('algo_fwd', ''), r.get('algo_bwd_data', ''), r.get('algo_bwd_filter', '')))
for k in d.get('notes', []):
    if 'slow' in k or 'pad' in k or 'copy' in k: print('note:', k[:400])
PY
    done
    if [ "${PEER:-0}" = 1 ]; then
        mkdir -p $R/graphs; g=$(basename $net .json)
        case $net in *.json) $B/convbench summary $net --graph --batch $b --format json --quiet --output $R/graphs/$g.graph.json ;; esac
        for comp in "" ${PEER_COMPILE:+--compile}; do
            timeout ${PEER_S:-120} python3 dev/peer_profile.py $g --graph-dir $R/graphs --batch $b --mode $prec $comp --top ${PEER_TOP:-25} > $R/peer-$g-$prec${comp:+-compiled}.md 2>$R/peer.err \
                || { echo "peer profile $g $comp failed: $(tail -3 $R/peer.err)"; continue; }
            echo; cat $R/peer-$g-$prec${comp:+-compiled}.md
        done
    fi
done
tar -C /tmp -czf $OUT/layers.tgz layers
