#!/usr/bin/env bash
# On the GPU machine: build the ECE408 lab and the engine, run the lab (checks, then timing at
# batch 10000 against cuDNN), count the lab kernels' instructions, train the course network if no
# weights came along, then `convbench infer` at batch 10000 with cuDNN and each own algorithm, and
# the engine's GPU tests of the small cases. Files under $OUT; a short summary last.
#   OUT=/tmp/o dev/cuda/ece408_device.sh      (from the repository root; .devpack carried)
set -u
OUT=${OUT:-ece408-out}
mkdir -p "$OUT"
B=${B:-build-dev1}
. scripts/device-env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
LAB=/tmp/ece408_lab
(nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude dev/cuda/ece408_lab.cu -o $LAB -lcudnn \
    >"$OUT/lab_build.txt" 2>&1 || echo "lab build failed") &
make -j14 BUILD=$B $B/convbench $B/tests/test_gpu >/tmp/make.log 2>&1 || { echo "engine build failed"; tail -15 /tmp/make.log; }
wait
tail -5 "$OUT/lab_build.txt"

echo "== lab"
timeout 100 $LAB ${LAB_N:-10000} >"$OUT/lab.txt" 2>&1
echo "lab rc=$?"
grep -E "^FAIL" "$OUT/lab.txt" | head -20
cuobjdump -sass $LAB 2>/dev/null | awk '
    /Function :/ { f = $3 }
    / FFMA / { ffma[f]++; if ($0 ~ /c\[0x3\]/) ffmac[f]++ }
    / LDC/ { ldc[f]++ } / LDS/ { lds[f]++ } / HMMA/ { hmma[f]++ } / LDL| STL/ { local[f]++ }
    END { for (f in ffma) printf "%-70s FFMA %6d (c[0x3] %6d) LDC %5d LDS %5d HMMA %5d local %d\n", substr(f, 1, 70), ffma[f], ffmac[f], ldc[f], lds[f], hmma[f], local[f]
          for (f in hmma) if (!(f in ffma)) printf "%-70s HMMA %5d LDS %5d local %d\n", substr(f, 1, 70), hmma[f], lds[f], local[f] }' \
    >"$OUT/sass.txt"

CB=$B/convbench
[ -x $CB ] || { echo "no convbench"; tail -40 "$OUT/lab.txt"; exit 1; }
W=.devpack/ece408.cbwt
if [ ! -f $W ]; then
    echo "== train"
    timeout 150 $CB train fashion-ece408 --backend cuda --conv-algo igemm-simt --data "$CB_FASHION_DATA" --resize 86 \
        --epochs 6 --weights-out "$OUT/ece408.cbwt" --quiet --format csv 2>&1 | tail -8
    W=$OUT/ece408.cbwt
fi

echo "== infer, batch ${INFER_BATCH:-10000}"
: >"$OUT/infer.txt"
run_infer() { # tag backend precision [--conv-algo A]
    local tag=$1 be=$2 prec=$3; shift 3
    timeout 40 $CB infer fashion-ece408 --weights $W --data "$CB_FASHION_DATA" --resize 86 --batch ${INFER_BATCH:-10000} \
        --backend $be --precision $prec "$@" --format json --quiet --output /tmp/infer.json || { echo "$tag failed" >>"$OUT/infer.txt"; return; }
    python3 - "$tag" /tmp/infer.json >>"$OUT/infer.txt" <<'PY'
import json, sys
tag, d = sys.argv[1], json.load(open(sys.argv[2]))
t = d['tables']
for b in t['batch sizes']:
    conv = [r for r in t['conv layers'] if r['batch'] == b['batch']]
    ops = ' '.join(f"{r['layer']} {r['op_ms']:.3f} (layer {r['layer_ms']:.0f}) [{r.get('algo', '')}]" for r in conv)
    print(f"{tag:18} b{b['batch']:<6} {ops}  sum {sum(r['op_ms'] for r in conv):.3f} ms  acc {b['test_accuracy']:.4f}")
PY
}
run_infer cudnn-fp32 cudnn fp32
run_infer cudnn-tf32 cudnn tf32
[ -n "${INFER_SHORT:-}" ] || run_infer cudnn-bf16 cudnn bf16
[ -n "${INFER_SHORT:-}" ] || run_infer igemm-simt cuda fp32 --conv-algo igemm-simt
for a in ${INFER_FP32:-direct-const direct-const+pool direct-smem direct-smem+pool unroll-smem}; do run_infer $a cuda fp32 --conv-algo $a; done
for a in direct-tf32 direct-tf32+pool; do run_infer $a cuda tf32 --conv-algo $a; done
for a in direct-bf16 direct-bf16+pool; do run_infer $a cuda bf16 --conv-algo $a; done
run_infer cuda-auto-fp32 cuda fp32
run_infer cuda-auto-bf16 cuda bf16
cat "$OUT/infer.txt"

if [ -n "${SANITIZE:-}" ]; then
    echo "== compute-sanitizer on the lab's checks"
    for tool in memcheck racecheck; do
        timeout ${SAN_TIMEOUT:-45} compute-sanitizer --tool $tool --print-limit 10 $LAB 0 >/tmp/san.txt 2>&1
        echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|checks' /tmp/san.txt | tr '\n' ' ')"
        grep -E "^=========" /tmp/san.txt | grep -v "SUMMARY" | head -6
    done
fi
if [ -z "${SKIP_TEST:-}" ]; then
    echo "== test_gpu --backends cuda-small"
    timeout ${TEST_TIMEOUT:-60} $B/tests/test_gpu --backends cuda-small >"$OUT/test_gpu.txt" 2>&1
    grep -E '^FAIL|passed' "$OUT/test_gpu.txt" | tail -15
fi
echo "== lab summary"
grep -A45 "^batch " "$OUT/lab.txt"
