# A device call after a kernel change in the fp32 NCHW path: build, test_gpu (storage and rest,
# in parallel), then the fp32 NCHW depthwise networks against eager and compiled PyTorch in the
# same call (scripts/gpu-bench.sh suite). Results under $OUT.   bash dev/gpu-fp32-check.sh COMMIT
set -u; . scripts/device-env.sh; B=build-gpu; R=$OUT; RES=/tmp/cb-res; mkdir -p $RES
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 BUILD=$B COMMIT=$1 all > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
timeout 220 $B/tests/test_gpu --part storage > $RES/t_storage.log 2>&1 &
timeout 220 $B/tests/test_gpu --part rest > $RES/t_rest.log 2>&1 &
wait
for f in $RES/t_*.log; do echo "$f: $(tail -1 $f)"; grep -E "^FAIL" $f | head -8; done
B=$B RES=$RES ITERS=10 SUITE_BACKENDS=auto PEER_S=${PEER_S:-200} SUITE="${SUITE:-efficientnet-b0:128:fp32:nchw mobilenet-v2:128:fp32:nchw}" \
  bash scripts/gpu-bench.sh suite 2>&1 | grep -v "^==" | tail -8
(cd $RES && tar czf $R/fp32check.tgz .)
