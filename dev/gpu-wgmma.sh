# The device check of the Hopper wgmma convolution (src/cuda/igemm_wgmma.cuh, own algorithm
# igemm-wgmma-bf16): build; the lab's check (every tile against float64) beside test_gpu's
# own-algorithm cases for it; then the lab's timing of the ResNet-50 and VGG-A b64 layers against
# igemm-bf16 and cuDNN (REST=1: test_gpu --part rest beside the checks); with PROFILE=1 also `convbench profile` of ResNet-50 b64 (cuda backend with
# each own bf16 algorithm named, and cudnn on bf16 NHWC); LAB=0 and TEST=0 leave the lab and the
# test out. Results under $OUT; the summary last.
#   bash dev/gpu-wgmma.sh [COMMIT]        (from the repository root, on the GPU machine)
set -u; . scripts/device-env.sh; B=build-gpu; R=${OUT:-wgmma-out}; CB=$B/convbench; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude dev/cuda/wgmma_lab.cu -L"$CUDA_HOME/lib64" \
    -L"$CUDA_HOME/lib" -Xlinker -rpath,"$CUDA_HOME/lib64:$CUDA_HOME/lib" -lcudnn -o /tmp/wgmma_lab > "$R/lab_build.log" 2>&1 &
make -j16 BUILD=$B COMMIT=${1:-unknown} all > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
wait
grep -E "warning|error" /tmp/build.log "$R/lab_build.log" | head -5
[ -x /tmp/wgmma_lab ] || { cat "$R/lab_build.log"; exit 1; }
# LAB=0: the lab neither checks nor times (a call for the profiles alone)
[ "${LAB:-1}" = 0 ] || timeout ${CHECK_S:-100} /tmp/wgmma_lab check > "$R/lab_check.txt" 2>&1 &
[ "${TEST:-1}" = 0 ] || CB_TEST_ALGOS=igemm-wgmma-bf16 timeout ${TEST_S:-150} $B/tests/test_gpu --part own > "$R/t_own.log" 2>&1 &
# REST=1: also the rest of test_gpu (the networks on cuda and auto, whose measured choices may now pick it)
[ -n "${REST:-}" ] && timeout ${TEST_S:-150} $B/tests/test_gpu --part rest > "$R/t_rest.log" 2>&1 &
wait
[ -n "${REST:-}" ] && { echo "test_gpu --part rest: $(tail -1 "$R/t_rest.log")"; grep -E "^FAIL" "$R/t_rest.log" | head -12; }
echo "test_gpu --part own (igemm-wgmma-bf16): $(tail -1 "$R/t_own.log")"; grep -E "^FAIL" "$R/t_own.log" | head -12
grep -cE "^ok" "$R/t_own.log" | sed 's/^/test_gpu ok lines: /'
grep -E "FAIL|check:|declined|error" "$R/lab_check.txt" 2>/dev/null | head -30
[ "${LAB:-1}" = 0 ] || timeout ${TIME_S:-150} /tmp/wgmma_lab time csv="$R/lab.csv" > "$R/lab_time.txt" 2>&1; echo "lab time rc=$?"
if [ -n "${PROFILE:-}" ]; then
    for a in igemm-wgmma-bf16 igemm-bf16; do
        timeout ${PROF_S:-60} $CB profile nets/resnet50.json --batch 64 --backend cuda --precision bf16 --conv-algo $a --direction all \
            --warmup 1 --iters 5 --format csv --quiet --output "$R/prof_r50_$a.csv"; echo "profile $a rc=$?"
    done
    timeout ${PROF_S:-60} $CB profile nets/resnet50.json --batch 64 --backend cudnn --precision bf16 --layout nhwc --direction all \
        --warmup 1 --iters 5 --format csv --quiet --output "$R/prof_r50_cudnn.csv"; echo "profile cudnn rc=$?"
fi
sed -n '/== summary/,$p' "$R/lab_time.txt" 2>/dev/null
