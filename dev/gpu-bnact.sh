# A device call after a change to the batch-norm kernels: build; the cross-backend op driver on the
# GPU backends, again with auto's batch norm forced onto the own kernels (conv + BN + every
# activation, fused and CONVBENCH_BN_ACT=separate), and the storage part of test_gpu; then the
# depthwise networks' steps with the activation fused into the batch norm and apart, A/B in one
# call, with the per-kind breakdown (scripts/fp-table.py). Results under $OUT.
#   bash dev/gpu-bnact.sh COMMIT
set -u; . scripts/device-env.sh; B=build-gpu; R=$OUT; CB=$B/convbench; RES=/tmp/cb-res; mkdir -p $RES
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 BUILD=$B COMMIT=$1 all > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
timeout 200 $B/tests/test_ops cuda cudnn auto > $RES/t_ops.log 2>&1 &
CONVBENCH_AUTO_BN=own timeout 200 $B/tests/test_ops auto > $RES/t_ops_ownbn.log 2>&1 &
CONVBENCH_AUTO_BN=own CONVBENCH_BN_ACT=separate timeout 200 $B/tests/test_ops auto > $RES/t_ops_ownbn_sep.log 2>&1 &
timeout 260 $B/tests/test_gpu --part storage > $RES/t_storage.log 2>&1 &
wait
for f in $RES/t_*.log; do echo "$(basename $f): $(tail -1 $f)"; grep -E "^FAIL" $f | head -8; done
grep -c "BN silu.*\[" $RES/t_ops_ownbn.log
for c in ${CELLS:-efficientnet-b0:128:bf16:nhwc mobilenet-v2:128:bf16:nhwc efficientnet-b0:128:fp32:nchw}; do IFS=: read n b p l <<<"$c"
 for mode in fused separate; do
  CONVBENCH_BN_ACT=$mode timeout 60 $CB fullpass $n --batch $b --backend auto --precision $p --layout $l --no-data-grad --no-criterion \
    --warmup 3 --iters 10 --per-layer --format json --quiet --output $RES/fp_${n}_${p}_${l}_$mode.json
  echo "-- CONVBENCH_BN_ACT=$mode"; python3 scripts/fp-table.py $RES/fp_${n}_${p}_${l}_$mode.json 2>/dev/null | head -4
 done; done
(cd $RES && tar czf $R/bnact.tgz .)
