# The small networks' rare failures (test_gpu --part net, $REPEAT fresh inputs per process, 4
# processes) with the shared arena and with one buffer each (CONVBENCH_MEMORY=separate), A/B in
# one call: is a failure the arena's or the inputs'? Results (logs) under $OUT.
#   bash dev/gpu-netflake.sh COMMIT
set -u; B=build-gpu; RES=/tmp/cb-res; mkdir -p $RES $OUT; . scripts/device-env.sh
[ -x $B/tests/test_gpu ] || make -j16 BUILD=$B COMMIT=$1 all > $RES/build.log 2>&1 || { tail -20 $RES/build.log; exit 1; }
for mode in reuse separate; do for k in 1 2 3 4; do
  CONVBENCH_MEMORY=$mode CB_TEST_REPEAT=${REPEAT:-8} CB_TEST_SEED=$((RANDOM * 65536 + k)) timeout ${NET_S:-240} $B/tests/test_gpu --part net > $RES/net_${mode}_$k.log 2>&1 &
done; done; wait
for f in $RES/net_*.log; do echo "$(basename $f) $(head -1 $f): $(tail -1 $f)"; grep -E "^FAIL" $f | head -5; done
(cd $RES && tar czf $OUT/netlogs.tgz net_*.log)
