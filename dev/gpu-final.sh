# The session's last device call: build, test_gpu (the depthwise algorithm and the storage part),
# the depthwise networks' steps (bf16 NHWC), then ResNeXt-50 against eager and compiled PyTorch in
# both modes (scripts/gpu-bench.sh suite). Results under $OUT.   bash dev/gpu-final.sh COMMIT
set -u; . scripts/device-env.sh; B=build-gpu; R=$OUT; CB=$B/convbench; RES=/tmp/cb-res; mkdir -p $RES
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 BUILD=$B COMMIT=$1 all > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
CB_TEST_ALGOS=depthwise timeout 200 $B/tests/test_gpu --part own > $RES/t_own.log 2>&1 &
timeout 260 $B/tests/test_gpu --part storage > $RES/t_storage.log 2>&1 &
wait
for f in $RES/t_*.log; do echo "$f: $(tail -1 $f)"; grep -E "^FAIL" $f | head -8; done
for c in convnext-tiny:64 efficientnet-b0:128 mobilenet-v2:128; do IFS=: read n b <<<"$c"
 timeout 60 $CB fullpass $n --batch $b --backend auto --precision bf16 --layout nhwc --no-data-grad --no-criterion --warmup 3 --iters 10 --format json --quiet --output $RES/fp_${n}.json
 python3 scripts/fp-table.py $RES/fp_${n}.json | head -1; done
B=$B RES=$RES ITERS=10 SUITE_BACKENDS=auto PEER_S=${PEER_S:-200} SUITE="resnext50:64:bf16:nhwc resnext50:64:fp32:nchw" bash scripts/gpu-bench.sh suite 2>&1 | grep -v "^==" | tail -12
(cd $RES && tar czf $R/final.tgz .)
