# Issue 14's backward-filter question on the GPU machine: dev/cuda/ctx_lab.cu (the call timed in the
# ways a pass and calibrate differ), beside `convbench profile` of the one-convolution networks
# dev/nets/ctx/*.json; with DIAG="net:batch:prec:layout ..." also scripts/gpu-bench.sh diag.
#   bash dev/gpu-ctx.sh COMMIT        (repository root, GPU machine; results under $OUT)
set -u; . scripts/device-env.sh; B=build-gpu; R=${OUT:-ctx-out}; CB=$B/convbench; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
nvcc -O3 -std=c++17 -arch=sm_90 dev/cuda/ctx_lab.cu -L"$CUDA_HOME/lib64" -L"$CUDA_HOME/lib" \
    -Xlinker -rpath,"$CUDA_HOME/lib64:$CUDA_HOME/lib" -lcudnn -o /tmp/ctx_lab > "$R/lab_build.log" 2>&1 &
make -j16 BUILD=$B COMMIT=${1:-unknown} all > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
wait
[ -x /tmp/ctx_lab ] || { cat "$R/lab_build.log"; exit 1; }
[ "${LAB:-1}" = 0 ] || { timeout ${LAB_S:-120} /tmp/ctx_lab > "$R/ctx_lab.txt" 2>&1; echo "ctx_lab rc=$?"; } # LAB=0: the profiles alone
for f in dev/nets/ctx/*.json ${NETS:-}; do # NETS: more network files or built-in names
    t=$(basename $f .json)
    timeout 60 $CB profile $f --backend cudnn --precision fp32 --direction all --warmup 2 --iters 5 --format csv --quiet \
        --output "$R/prof_$t.csv" || echo "profile $t failed"
done
if [ -n "${DIAG:-}" ]; then B=$B RES=$R/diag DIAG="$DIAG" bash scripts/gpu-bench.sh diag; tar -czf "$R/diag.tgz" -C "$R" diag && rm -rf "$R/diag"; fi
command -v nsys >/dev/null && echo "nsys: yes" || echo "nsys: no"
cat "$R/ctx_lab.txt" 2>/dev/null
for f in "$R"/prof_*.csv; do echo "== $f"; grep -E "^bwd_filter" "$f" | cut -d, -f27-29 | head -8; done
