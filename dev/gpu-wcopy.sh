#!/usr/bin/env bash
# After `scripts/gpu-run.sh check` in the same call (its build-gpu): the bf16 weight copies in the
# arena (2026-11-27 evening). Each cell's fullpass with CONVBENCH_WEIGHT_COPY=keep (the copies the
# backend's own, as before: made when the weights change), plan (the default: in the arena, made in
# every forward, made again in the backward where keeping them would raise the peak) and remake
# (every copy made again in the backward); time and planned memory side by side.
#   bash dev/gpu-wcopy.sh [bench] [test]    (results in $OUT/wcopy.tgz)
#   test: test_gpu --part storage and the graph cases with CONVBENCH_WEIGHT_COPY=remake (the
#         backward's own copies on every layer, which the default plans only where they pay)
set -u; B=build-gpu; R=/tmp/wcopy; rm -rf $R; mkdir -p $R $OUT; . scripts/device-env.sh
parts=${*:-bench}
for part in $parts; do
case $part in
test)
    CONVBENCH_WEIGHT_COPY=remake timeout ${TEST_S:-200} $B/tests/test_gpu --part storage >$R/test_storage_remake.log 2>&1 & p1=$!
    CONVBENCH_WEIGHT_COPY=remake timeout ${TEST_S:-200} $B/tests/test_gpu --part graph >$R/test_graph_remake.log 2>&1 & p2=$!
    CONVBENCH_WEIGHT_COPY=remake timeout ${TEST_S:-200} compute-sanitizer --tool memcheck --print-limit 20 $B/tests/test_gpu --part storage-small \
        >$R/memcheck_storage_remake.log 2>&1 & p3=$!
    wait $p1; echo "test_gpu --part storage, remake: rc=$? $(tail -1 $R/test_storage_remake.log)"
    wait $p2; echo "test_gpu --part graph, remake: rc=$? $(tail -1 $R/test_graph_remake.log)"
    wait $p3; echo "memcheck --part storage-small, remake: rc=$? $(grep -h 'passed\|ERROR SUMMARY' $R/memcheck_storage_remake.log | tail -2 | tr '\n' ' ')"
    ;;
bench)
    CELLS=${CELLS:-"alexnet:128 vgg-a:64 resnet50:64 resnext50:64"}
    for c in $CELLS; do
        n=${c%%:*}; b=${c#*:}
        for mode in ${MODES:-keep plan remake}; do # (default: the variable unset)
            [ $mode = default ] && m= || m=$mode
            CONVBENCH_WEIGHT_COPY=$m timeout 60 $B/convbench fullpass $n --batch $b --backend auto --precision bf16 --layout nhwc \
                --no-data-grad --warmup 3 --iters 10 --format json --quiet --output $R/fp-$n-$b-$mode.json 2>$R/fp-$n-$b-$mode.log \
                || echo "fullpass $n $mode failed: $(tail -1 $R/fp-$n-$b-$mode.log)"
        done
        for mode in ${UMODES:-keep default}; do # with the update: keep makes its copies every step too
            [ $mode = default ] && m= || m=$mode
            CONVBENCH_WEIGHT_COPY=$m timeout 60 $B/convbench fullpass $n --batch $b --backend auto --precision bf16 --layout nhwc \
                --no-data-grad --update --warmup 3 --iters 10 --format json --quiet --output $R/fpu-$n-$b-$mode.json 2>/dev/null \
                || echo "fullpass --update $n $mode failed"
        done
    done
    python3 dev/ab_table.py $R 'backend copies' | tee $R/summary.md
    ;;
esac
done
tar czf $OUT/wcopy.tgz -C /tmp wcopy
