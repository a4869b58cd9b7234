# A device call after a change to the gradients' routing through sums (src/core/exec.c: one input
# takes the sum's gradient buffer, others get it added straight in, a cuDNN dgrad adds with beta 1):
# the GPU tests that run whole small networks (with and without CONVBENCH_GRAD_ROUTE=copy), the
# storage part and test_ops; then whole steps A/B (direct / copy) in one call, with the breakdown
# by layer kind. Results under $OUT.
#   bash dev/gpu-route.sh COMMIT     # SKIP_TESTS=1; CELLS="net:batch:prec:layout[:u] ..."
#   AB="CONVBENCH_BN_ADD=fused CONVBENCH_BN_ADD=separate" bash dev/gpu-route.sh COMMIT   # another A/B
set -u; B=build-gpu; RES=/tmp/cb-res; mkdir -p $RES $OUT; . scripts/device-env.sh; CB=$B/convbench
t0=$SECONDS; stamp() { echo "== +$((SECONDS - t0)) s $*"; }
[ -x $CB ] || make -j16 BUILD=$B COMMIT=$1 all > $RES/build.log 2>&1 || { tail -20 $RES/build.log; exit 1; }
stamp built
if [ -z "${SKIP_TESTS:-}" ]; then
  CB_TEST_REPEAT=2 timeout 200 $B/tests/test_gpu --part net > $RES/t_net_direct.log 2>&1 &
  CONVBENCH_GRAD_ROUTE=copy timeout 200 $B/tests/test_gpu --part net > $RES/t_net_copy.log 2>&1 &
  timeout 200 $B/tests/test_gpu --part storage > $RES/t_storage.log 2>&1 &
  timeout 200 $B/tests/test_gpu --part rest > $RES/t_rest.log 2>&1 &
  timeout 200 $B/tests/test_ops cuda cudnn auto > $RES/t_ops.log 2>&1 &
  CONVBENCH_AUTO_BN=own timeout 200 $B/tests/test_gpu --part net > $RES/t_net_ownbn.log 2>&1 &
  wait
  for f in $RES/t_*.log; do echo "$(basename $f): $(tail -1 $f)"; grep -E "^FAIL" $f | head -5; done
  stamp tests
fi
for c in ${CELLS:-resnet50:256:bf16:nhwc:u dev/nets/resnet101.json:128:bf16:nhwc:u}; do IFS=: read n b p l u <<<"$c"
  for ab in ${AB:-CONVBENCH_GRAD_ROUTE=direct CONVBENCH_GRAD_ROUTE=copy}; do
    t=$(basename $n .json); mode=${ab#*=}
    env $ab timeout 100 $CB fullpass $n --batch $b --backend auto --precision $p --layout $l --no-data-grad --no-criterion \
      ${u:+--update} --warmup 3 --iters 10 --format json --quiet --output $RES/fp_${t}_${b}_${p}_$mode.json
    python3 -c "
import json,sys; d=json.load(open(sys.argv[1]))
bd={r['part']: r for r in d['tables'].get('breakdown', [])}
parts=' | '.join('%s %.2f/%.2f' % (k[:12], bd[k]['forward_ms'] or 0, bd[k]['backward_ms'] or 0) for k in bd if isinstance(bd[k]['forward_ms'], float))
print('%-10s b%-4s %-5s %-7s step %7.2f ms  planned %6.0f MiB peak %s | %s' % (sys.argv[2], d['batch'], d['precision'], sys.argv[3], d['batch'] * 1e3 / d['images_per_s'], d['memory_mb'], d.get('device_peak_mb'), parts))" $RES/fp_${t}_${b}_${p}_$mode.json $t $mode 2>&1 | tail -1
  done; done
stamp ab
(cd $RES && tar czf $OUT/logs.tgz *.log 2>/dev/null; tar czf $OUT/fp.tgz fp_*.json 2>/dev/null)
