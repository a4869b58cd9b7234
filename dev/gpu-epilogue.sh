# The device check of the fused backward epilogue (2026-11-27): a conv or FC layer's activation
# gradient and bias gradient in one pass (cb_fmt_act_bias_grad), and no ReLU pass at all where the
# own max pool that alone reads its output applies it (cb_cuda_plan_relu_mask). Build; test_gpu
# --part storage (the kernels: act+bias against the separate passes, pool relu_mask against the
# reference) and --part rest (every backend's networks against the reference), in parallel; then
# A/B fullpass cells in one call: MODES, each a comma-separated list of CONVBENCH_ settings
# ("FUSE_EPILOGUE=off" the separate passes as before; "DNN_CPAD=off" the first layer's channels
# unpadded), "-" for none; with the per-kind breakdown of each step.
#   bash dev/gpu-epilogue.sh COMMIT      (repository root, GPU machine; results in $OUT/epilogue.tgz)
# TESTS=0 leaves the tests out; CELLS="net:batch:prec:layout ..." the cells; BE the backends.
set -u; . scripts/device-env.sh; B=build-gpu; R=/tmp/epilogue-out; CB=$B/convbench; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 BUILD=$B COMMIT=${1:-unknown} all > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
grep -E "warning|error" /tmp/build.log | head -5
if [ "${TESTS:-1}" != 0 ]; then
    timeout ${TEST_S:-200} $B/tests/test_gpu --part storage > "$R/t_storage.log" 2>&1 &
    timeout ${TEST_S:-200} $B/tests/test_gpu --part rest > "$R/t_rest.log" 2>&1 &
    timeout ${TEST_S:-200} $B/tests/test_gpu --part dnngraph > "$R/t_dnngraph.log" 2>&1 &
    wait
    for f in "$R"/t_*.log; do echo "$(basename $f): $(tail -1 $f)"; grep -E "^FAIL" $f | head -8; done
    grep -E "act\+bias|relu mask" "$R/t_storage.log" | grep -c "" | sed 's/^/fused-epilogue and relu-mask checks printed: /'
fi
for cell in ${CELLS:-vgg-a:64:tf32:nhwc googlenet:128:tf32:nhwc vgg-a:64:bf16:nhwc alexnet:128:fp32:nchw}; do
    IFS=: read -r net batch prec lay <<<"$cell"
    for be in ${BE:-auto}; do
    for spec in ${MODES:-FUSE_EPILOGUE=off - DNN_CPAD=off}; do
        envs=(); [ "$spec" = - ] || { IFS=, read -r -a kv <<<"$spec"; for x in "${kv[@]}"; do envs+=(CONVBENCH_$x); done; }
        tag=$(echo "$spec" | tr ',=' '__'); f="$R/fp_${net}_${batch}_${prec}_${lay}_${be}_$tag.json"
        env "${envs[@]}" timeout 150 $CB fullpass $net --batch $batch --backend $be --precision $prec --layout $lay \
            --no-data-grad --no-criterion --warmup 3 --iters 10 --format json --quiet --output "$f" \
            || { echo "fullpass $cell $be $spec failed"; continue; }
        python3 - "$f" "$cell $be $spec" <<'PY' || true
import json, sys
d = json.load(open(sys.argv[1]))
t = [r for r in d['tables']['fullpass'] if r['phase'].startswith('total')]
b = d['tables'].get('breakdown', [])
kinds = ', '.join('%s %.2f/%.2f' % (r['part'], r['forward_ms'], r['backward_ms']) for r in b
                  if not isinstance(r['forward_ms'], str))  # (the gaps and step rows carry text there)
print('%s: %s | %s' % (sys.argv[2], ', '.join('%s %.2f ms' % (r['phase'], r['median_ms']) for r in t), kinds))
PY
    done
    done
done
tar -czf "${OUT:-.}/epilogue.tgz" -C /tmp epilogue-out
