#!/usr/bin/env bash
# After `scripts/gpu-run.sh check` in the same call, or alone (it builds): the workspace slack
# (--workspace-slack, 2026-11-27 late): where cuDNN's algorithms race, the least workspace among
# those at most PCT% slower than the fastest. Each cell's fullpass --update at each slack, step time
# and planned memory side by side; then, per cell, the -v listing of every candidate (algorithm or
# graph plan, time, workspace) of the layers whose workspace is 16 MiB or more at slack 0.
#   CELLS="net:batch:prec:layout ..." SLACKS="0 3 10" bash dev/gpu-slack.sh      (results in $OUT/slack.tgz)
set -u; B=build-gpu; R=/tmp/slack; rm -rf $R; mkdir -p $R $OUT; . scripts/device-env.sh
[ -x $B/convbench ] || make -j16 BUILD=$B ${CB_COMMIT:+COMMIT=$CB_COMMIT} all >/tmp/slack-build.log 2>&1 || { tail -20 /tmp/slack-build.log; exit 1; }
CELLS=${CELLS:-"alexnet:128:tf32:nhwc vgg-a:64:fp32:nchw resnet50:64:bf16:nhwc googlenet:64:bf16:nhwc"}
for c in $CELLS; do
    IFS=: read -r n b p l <<<"$c"
    for s in ${SLACKS:-0 3 10}; do
        v=; [ "$s" = 0 ] && v=--verbose
        timeout 90 $B/convbench fullpass $n --batch $b --backend auto --precision $p --layout $l --workspace-slack $s $v \
            --no-data-grad --no-criterion --update --warmup 3 --iters 10 --format json --quiet --output $R/fp-$n-$b-$p-$l-s$s.json \
            2>$R/fp-$n-$b-$p-$l-s$s.log || echo "fullpass $c slack $s failed: $(tail -1 $R/fp-$n-$b-$p-$l-s$s.log)"
    done
    # the candidates of the phases with a workspace of 16 MiB or more (any candidate that large)
    grep -E 'workspace ([0-9]{3,}|1[6-9]|[2-9][0-9])\.' $R/fp-$n-$b-$p-$l-s0.log | sed 's/^note: //' > $R/cand-$n-$b-$p-$l.txt
    echo "== $c: candidates with 16 MiB or more of workspace"; head -40 $R/cand-$n-$b-$p-$l.txt
done
python3 dev/ab_table.py $R workspace | tee $R/summary.md
tar -C $R -czf $OUT/slack.tgz .
