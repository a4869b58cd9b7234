#!/usr/bin/env bash
# The persistent wgmma pipeline (2026-11-28 evening: one block per SM runs its tiles, or backward-filter
# units, as one stream of k-steps, src/cuda/igemm_wgmma.cuh) on the GPU machine, in one call: build
# convbench and the lab; the lab's check (every tile against float64, also with 3 blocks for all
# tiles) beside test_gpu --part wg; the lab's timing of ResNet-50 and VGG-A b64 layers, persistent
# against one block per tile and the backward filter's split (LAB_OWN_ONLY: no cuDNN Find); then
# dev/gpu-wgstore.sh's FORCED cells: the kernel / library per phase on the storage (the ratio).
#   FORCED="resnet50:64 vgg-a:64" bash dev/gpu-wgpersist.sh          (results: $OUT/wgpersist.tgz)
set -u; NAME=wgpersist; . dev/gpu-lab-prep.sh
timeout ${CHECK_S:-150} /tmp/wgmma_lab check >$R/lab_check.txt 2>&1 &
timeout ${TEST_S:-150} $B/tests/test_gpu --part wg >$R/t_wg.log 2>&1 &
# STORAGE=1: test_gpu --part storage as well (every storage's networks on auto, which may pick the kernel)
[ -n "${STORAGE:-}" ] && timeout ${STORAGE_S:-260} $B/tests/test_gpu --part storage >$R/t_storage.log 2>&1 &
wait
[ -n "${STORAGE:-}" ] && { echo "test_gpu --part storage: $(tail -1 $R/t_storage.log)"; grep -E "^FAIL" $R/t_storage.log | head -20; }
grep -E "FAIL|check:" $R/lab_check.txt | head -20
echo "test_gpu --part wg: $(tail -1 $R/t_wg.log)"; grep -E "^FAIL" $R/t_wg.log | head -20
LAB_OWN_ONLY=1 timeout ${TIME_S:-150} /tmp/wgmma_lab time csv=$R/lab.csv >$R/lab_time.txt 2>&1; echo "lab time rc=$?"
sed -n '/== summary/,$p' $R/lab_time.txt
tar -C $R -czf $OUT/wgpersist.tgz .
[ -n "${FORCED:-}" ] && CELLS="" TEST=0 FORCED="$FORCED" DEADLINE=${DEADLINE:-200} bash dev/gpu-wgstore.sh
