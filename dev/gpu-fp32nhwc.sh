#!/usr/bin/env bash
# fp32 NHWC with the input channels as they are (cb_conv_cpad_default, 2026-11-28-cpad), on the GPU
# machine in one call: build; test_gpu --part storage and --part rest side by side (TEST=0 leaves them
# out; their layer cases check that a conv with unaligned C is padded exactly where the default says);
# then scripts/gpu-bench.sh's suite against eager and compiled PyTorch for $SUITE (the random
# networks' files from /tmp/gn). Results: $OUT/fp32nhwc.tgz.
#   SUITE="/tmp/gn/gen-inception-s3.json:128:fp32:nhwc:update" bash dev/gpu-fp32nhwc.sh
set -u; NAME=fp32nhwc; . dev/gpu-prep.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
if [ "${TEST:-1}" != 0 ]; then
    t=$SECONDS
    for p in storage rest; do timeout ${TEST_S:-180} $B/tests/test_gpu --part $p > $R/t_$p.txt 2>&1 & done; wait
    for p in storage rest; do echo "test_gpu --part $p ($((SECONDS - t)) s): $(tail -1 $R/t_$p.txt)"; grep -E "^FAIL" $R/t_$p.txt | head -10; done
fi
B=$B RES=$R/suite ITERS=${ITERS:-10} SUITE_BACKENDS=auto PEER_S=${PEER_S:-170} DEADLINE=${DEADLINE:-30} \
    SUITE="${SUITE:-/tmp/gn/gen-inception-s3.json:128:fp32:nhwc:update /tmp/gn/gen-resnet-s2.json:96:fp32:nhwc:update}" \
    bash scripts/gpu-bench.sh suite > $R/suite.txt 2>&1; echo "suite rc $?"; tail -${TAIL:-14} $R/suite.txt
tar -C /tmp -czf $OUT/fp32nhwc.tgz fp32nhwc
