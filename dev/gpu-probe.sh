#!/usr/bin/env bash
# One network, both library backends, with the planning notes (2026-11-27 late): the candidates the
# cudnn backend raced on each layer (--verbose: every legacy algorithm and graph plan, time,
# workspace), the per-layer profile and the step under cudnn and auto, to see where a layer's
# choice and time come from. NET: a file or a built-in; the random ones are made first.
#   NET=/tmp/gn/gen-inception-s3.json BATCH=128 PREC=bf16 LAYOUT=nhwc GREP="inception_1/1x1" bash dev/gpu-probe.sh
set -u; NAME=probe; . dev/gpu-prep.sh
NET=${NET:-/tmp/gn/gen-inception-s3.json}; BATCH=${BATCH:-128}; PREC=${PREC:-bf16}; LAYOUT=${LAYOUT:-nhwc}
for be in cudnn auto; do
    timeout 120 $B/convbench profile $NET --batch $BATCH --backend $be --precision $PREC --layout $LAYOUT --direction all --verbose \
        --format csv --output $R/profile-$be.csv 2>$R/profile-$be.log || echo "profile $be failed: $(tail -1 $R/profile-$be.log)"
    timeout 120 $B/convbench fullpass $NET --batch $BATCH --backend $be --precision $PREC --layout $LAYOUT --update --no-data-grad \
        --format json --quiet --output $R/fullpass-$be.json 2>$R/fullpass-$be.log || echo "fullpass $be failed: $(tail -1 $R/fullpass-$be.log)"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], 'step', [round(r['median_ms'],3) for r in d['tables']['fullpass'] if r['phase'].strip()=='total'], 'MiB', round(d['memory_mb'],1))" $R/fullpass-$be.json $be
done
for g in ${GREP:-inception_1/1x1}; do echo "== $g"; grep -F "'$g'" $R/profile-cudnn.log | grep -v skipped | head -20; grep -F "$g" $R/profile-cudnn.csv $R/profile-auto.csv | head -12; done
tar -C $R -czf $OUT/probe.tgz .
