# A quick device call for the depthwise / SE / global-pool work: build, test_gpu (the depthwise
# algorithm, the storage part, the rest), then whole steps of the depthwise networks with the
# per-layer table, auto backend, fair mode. Results under $OUT; the short table last.
#   bash dev/gpu-dw-quick.sh [COMMIT]
set -u; . scripts/device-env.sh; B=build-gpu; R=$OUT; CB=$B/convbench
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 BUILD=$B COMMIT=${1:-unknown} all > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
grep -E "warning|error" /tmp/build.log | head -5
CB_TEST_ALGOS=depthwise timeout 200 $B/tests/test_gpu --part own > /tmp/t_own.log 2>&1 &
timeout 260 $B/tests/test_gpu --part storage > /tmp/t_storage.log 2>&1 &
[ -n "${REST:-}" ] && timeout 260 $B/tests/test_gpu --part rest > /tmp/t_rest.log 2>&1 &
wait
for f in /tmp/t_*.log; do echo "$f: $(tail -1 $f)"; grep -E "^FAIL" $f | head -12; done
for c in ${CELLS:-convnext-tiny:64:bf16:nhwc efficientnet-b0:128:bf16:nhwc mobilenet-v2:128:bf16:nhwc convnext-tiny:64:fp32:nchw efficientnet-b0:128:fp32:nchw}; do
 IFS=: read n b p l <<<"$c"
 timeout 100 $CB fullpass $n --batch $b --backend auto --precision $p --layout $l --no-data-grad --no-criterion --warmup 3 --iters 10 --per-layer --format json --quiet --output $R/fp_${n}_${p}_${l}.json; echo "$c rc=$?"
done
cp /tmp/t_*.log $R/ 2>/dev/null; gzip $R/t_*.log
TOP=${TOP:-8} python3 scripts/fp-table.py $R/fp_*.json
