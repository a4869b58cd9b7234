#!/usr/bin/env bash
# NHWC with unaligned input channels: cuDNN's convolutions on zero-padded input copies
# (CONVBENCH_DNN_CPAD=on; the default in bf16 alone since 2026-11-28-cpad, cb_conv_cpad_default) against
# the channels as they are (off: fp32's and tf32's default under the graph race, whose engines take
# any C). 2026-11-28-cpad's call 1 measured fp32 (the Inception-like random network, seed 3, had been 8% slower than
# eager PyTorch, its channels odd). On the GPU machine, in one call: build; test_gpu --part dnngraph
# (TEST=0 leaves it out); then per cell, auto with the copies (on) and without (off), fullpass
# --update --no-data-grad --no-criterion --per-layer (the padded-copy time inside each conv row), and
# PyTorch's kernels for the random networks' cells (bench/peer_kernels.py through their graphs).
#   CELLS="gen-inception-s3:128:fp32 googlenet:128:fp32" PEER_CELLS="gen-inception-s3:128:fp32" bash dev/gpu-cpad.sh
# (results: $OUT/cpad.tgz; the precision of a cell is any of fp32, tf32, bf16)
set -u; NAME=cpad; . dev/gpu-prep.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
if [ "${TEST:-1}" != 0 ]; then
    t=$SECONDS; timeout ${TEST_S:-200} $B/tests/test_gpu --part dnngraph > $R/t_dnngraph.txt 2>&1
    echo "test_gpu --part dnngraph (rc $?, $((SECONDS - t)) s): $(tail -1 $R/t_dnngraph.txt)"; grep -E "^FAIL" $R/t_dnngraph.txt | head -20
fi
DEADLINE=${DEADLINE:-300}; t0=$SECONDS
echo "| cell | channel copies | step ms | conv phases padded | plan s |"; echo "|---|---|---:|---:|---:|"
for c in ${CELLS-gen-inception-s3:128:fp32 gen-resnet-s2:96:fp32 gen-inception-s2:192:fp32 googlenet:128:fp32}; do
    IFS=: read -r n b prec <<<"$c"; net=$n; [ -f /tmp/gn/$n.json ] && net=/tmp/gn/$n.json
    for cp in on off; do
        [ $((SECONDS - t0)) -ge $DEADLINE ] && { echo "skip (past $DEADLINE s): $c $cp"; continue; }
        CONVBENCH_DNN_CPAD=$cp timeout 150 $B/convbench fullpass $net --batch $b --backend auto --precision $prec --layout nhwc --no-data-grad \
            --no-criterion --update --warmup 3 --iters ${ITERS:-10} --per-layer --format json --quiet --output $R/fp-$n-$b-$prec-$cp.json \
            2>$R/fp-$n-$b-$prec-$cp.txt || { echo "fullpass $c $cp failed: $(tail -2 $R/fp-$n-$b-$prec-$cp.txt)"; continue; }
        python3 - $R/fp-$n-$b-$prec-$cp.json "$c" $cp <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); t = d['tables']
step = [r['median_ms'] for r in t['fullpass'] if r['phase'].strip() == 'total'][0]
pad = sum(1 for r in t.get('layers', []) for k, v in r.items() if k.startswith('algo') and v and '(C ' in str(v))
print('| %s | %s | %.3f | %d | %.1f |' % (sys.argv[2], sys.argv[3], step, pad, d.get('plan_s', -1)))
PY
    done
done
for c in ${PEER_CELLS-gen-inception-s3:128:fp32}; do
    IFS=: read -r n b prec <<<"$c"; [ -f /tmp/gn/$n.json ] || continue
    $B/convbench summary /tmp/gn/$n.json --graph --batch $b --format json --quiet --output $R/$n.graph.json &&
        timeout 120 python3 bench/peer_kernels.py $n ${prec:-fp32} nhwc --update --batch $b --graph-dir $R > $R/peer-$n.txt 2>&1; head -${PEER_TOP:-20} $R/peer-$n.txt
done
tar -C /tmp -czf $OUT/cpad.tgz cpad
