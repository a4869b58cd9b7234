#!/usr/bin/env bash
# After a build in the same call, or alone (it builds): cuDNN's legacy candidates timed again as the
# step calls them (the default) against cudnnFind's own times (CONVBENCH_DNN_TIMES=find), A/B in one
# call: each cell's fullpass --update --no-data-grad under each backend, step time, planned memory,
# and the wall seconds of the whole run (planning included).
#   CELLS="net:batch:prec:layout ..." BACKENDS="cudnn auto" bash dev/gpu-retime.sh      (results in $OUT/retime.tgz)
set -u; B=build-gpu; R=/tmp/retime; rm -rf $R; mkdir -p $R $OUT; . scripts/device-env.sh
[ -x $B/convbench ] || make -j16 BUILD=$B ${CB_COMMIT:+COMMIT=$CB_COMMIT} all >/tmp/retime-build.log 2>&1 || { tail -20 /tmp/retime-build.log; exit 1; }
python3 tools/gen_random_net.py --suite /tmp/gn --seeds 1-3 --max-gflop 400 >/dev/null
CELLS=${CELLS:-"/tmp/gn/gen-inception-s3.json:128:bf16:nhwc googlenet:64:bf16:nhwc resnet50:64:bf16:nhwc vgg-a:64:fp32:nchw"}
for c in $CELLS; do
    IFS=: read -r n b p l <<<"$c"; tag=$(basename $n .json)-$b-$p-$l
    for be in ${BACKENDS:-cudnn auto}; do
        for mode in find step; do
            t=$SECONDS
            CONVBENCH_DNN_TIMES=$mode timeout 120 $B/convbench fullpass $n --batch $b --backend $be --precision $p --layout $l \
                --no-data-grad --update --warmup 3 --iters 10 --format json --quiet --output $R/fp-$tag-$be-$mode.json \
                2>$R/fp-$tag-$be-$mode.log || echo "fullpass $c $be $mode failed: $(tail -1 $R/fp-$tag-$be-$mode.log)"
            echo "$tag $be $mode: $((SECONDS - t)) s wall"
        done
    done
done
python3 dev/ab_table.py $R workspace | tee $R/summary.md
tar -C $R -czf $OUT/retime.tgz .
