#!/usr/bin/env bash
# After `scripts/gpu-run.sh check` in the same call (its build-gpu): the convolutions' workspaces in
# the arena (2026-11-27 evening). Each cell's fullpass --update with CONVBENCH_WORKSPACE=separate
# (one workspace buffer outside the arena, the largest any layer asks, as before) and the default
# (each workspace in arena bytes no buffer live at its call uses; only those that fit nowhere
# outside); step time and planned memory side by side.
#   CELLS="net:batch:prec:layout ..." bash dev/gpu-ws.sh      (results in $OUT/ws.tgz)
set -u; B=build-gpu; R=/tmp/ws; rm -rf $R; mkdir -p $R $OUT; . scripts/device-env.sh
CELLS=${CELLS:-"alexnet:128:tf32:nhwc vgg-a:64:fp32:nchw resnet50:64:bf16:nhwc vgg-a:64:bf16:nhwc"}
for c in $CELLS; do
    IFS=: read -r n b p l <<<"$c"
    for mode in separate default; do
        [ $mode = default ] && m= || m=$mode
        CONVBENCH_WORKSPACE=$m timeout 60 $B/convbench fullpass $n --batch $b --backend auto --precision $p --layout $l \
            --no-data-grad --no-criterion --update --warmup 3 --iters 10 --format json --quiet --output $R/fp-$n-$b-$p-$l-$mode.json \
            2>$R/fp-$n-$b-$p-$l-$mode.log || echo "fullpass $c $mode failed: $(tail -1 $R/fp-$n-$b-$p-$l-$mode.log)"
    done
done
python3 dev/ab_table.py $R workspace | tee $R/summary.md
tar -C $R -czf $OUT/ws.tgz .
