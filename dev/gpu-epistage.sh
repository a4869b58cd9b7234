#!/usr/bin/env bash
# The wgmma kernels' stores (2026-11-28, late): the forward / backward data epilogue staged through
# shared memory into whole 128-byte row segments, and the backward filter's atomics into a KRSC
# workspace then transposed to the fp32 KCRS master gradient, on the GPU machine in one call: build
# convbench and the lab; the lab's check (every tile against float64, the KCRS path too) beside
# test_gpu --part wg; the lab's timing of ResNet-50 and VGG-A b64 layers (LAB_OWN_ONLY: staged against
# direct stores, KRSC workspace against atomics into KCRS); dev/gpu-wgstore.sh's FORCED cells (the
# kernel / library per phase on the storage: the issue's ratio); NCU=1: Nsight Compute's sections
# for the kernel and for cuDNN's on a few layers (where the main loop loses).
#   FORCED="resnet50:64 vgg-a:64" NCU=1 bash dev/gpu-epistage.sh          (results: $OUT/epistage.tgz)
set -u; NAME=epistage; . dev/gpu-lab-prep.sh
if [ "${CHECK:-1}" != 0 ]; then
    timeout ${CHECK_S:-150} /tmp/wgmma_lab check >$R/lab_check.txt 2>&1 &
    timeout ${TEST_S:-150} $B/tests/test_gpu --part wg >$R/t_wg.log 2>&1 &
    wait
    grep -E "FAIL|check:" $R/lab_check.txt | head -20
    echo "test_gpu --part wg: $(tail -1 $R/t_wg.log)"; grep -E "^FAIL" $R/t_wg.log | head -20
fi
LAB_OWN_ONLY=1 timeout ${TIME_S:-170} /tmp/wgmma_lab time ${ONLY:+only=$ONLY} csv=$R/lab.csv >$R/lab_time.txt 2>&1; echo "lab time rc=$?"
grep -E "^geomean" $R/lab_time.txt
python3 - $R/lab.csv <<'PY'
import csv, sys, collections
t = collections.defaultdict(dict)
for r in csv.DictReader(open(sys.argv[1])): t[(r['layer'], r['phase'])][r['version']] = float(r['ms'])
print('| layer | phase | new ms | old ms | new/old |'); print('|---|---|---:|---:|---:|')
for (l, ph), v in t.items():
    a, b = ('wgmma-staged', 'wgmma-direct') if ph != 'bwd-filt' else ('wgmma-kcrs', 'wgmma-kcrs-direct')
    if a in v and b in v and abs(v[a] / v[b] - 1) > 0.05: print('| %s | %s | %.3f | %.3f | %.3f |' % (l, ph, v[a], v[b], v[a] / v[b]))
PY
tar -C $R -czf $OUT/epistage.tgz .
[ -n "${FORCED:-}" ] && CELLS="" TEST=0 FORCED="$FORCED" DEADLINE=${DEADLINE:-200} bash dev/gpu-wgstore.sh
if [ -n "${NCU:-}" ]; then
    NCUB=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
    [ -z "$NCUB" ] && { echo "no ncu here"; exit 0; }
    N=/tmp/ncu; rm -rf $N; mkdir -p $N
    SEC="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy"
    for L in ${NCU_LAYERS:-vgga-conv4-256-256 r50-l1-1x1-64-256}; do
        LAB_OWN_ONLY=1 timeout 90 $NCUB $SEC --kernel-name regex:cb_wgmma_conv_kernel --launch-count 1 /tmp/wgmma_lab time only=$L >$N/own-$L.txt 2>&1
        echo "ncu own $L rc=$?"
    done
    # cuDNN's kernels on one convolution (VGG-A conv3_2: 256 -> 256 at 56x56, b64) under the cudnn backend's race
    python3 - >$N/one.json <<'PY'
import json
print(json.dumps({"name": "one-conv", "layers": {"data": {"parents": [], "type": "Input", "tensor": [64, 56, 56, 256]},
    "conv": {"parents": ["data"], "type": "Convolution", "filter": [3, 3, 256, 256], "padding": "SAME", "strides": [1, 1, 1, 1],
             "activation_fn": None, "normalizer_fn": None}}}))
PY
    CONVBENCH_DNN_GRAPH_PLANS=2 timeout 150 $NCUB --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
        --kernel-name regex:'sm90|xmma|cutlass|implicit' --launch-count ${NCU_DNN_N:-24} $B/convbench profile $N/one.json --backend cudnn \
        --precision bf16 --layout nhwc --warmup 0 --iters 1 --quiet >$N/dnn.txt 2>&1
    echo "ncu cudnn rc=$?"
    for f in $N/*.txt; do
        echo "== $(basename $f)"
        grep -E "^  [a-zA-Z_0-9]+.*\(|Duration|Compute \(SM\) Throughput|L2 Cache Throughput|DRAM Throughput|Memory Throughput|Executed Ipc Active|Issue Slots Busy" $f | head -${NCU_LINES:-60}
    done
    tar -C $N -czf $OUT/ncu.tgz .
fi
