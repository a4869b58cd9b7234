# The device check of the graph-API convolutions (src/cudnn/graph.c; the race is on by default for
# tf32 and bf16 since it passed here on 2026-11-25): build; test_gpu --part dnngraph (graph plans forced: conv cases fp32/tf32/bf16 against the
# reference, the small networks' SGD steps), --part rest and --part storage under
# CONVBENCH_DNN_GRAPH=race (graph plans where they win), in parallel; then A/B fullpass cells, CONVBENCH_DNN_GRAPH=off against race, in one
# call, with the plan's wall time (the race finalises and times up to 6 plans a phase).
# MODES="off race race,PLANS=16 race,RTC=1": the A/B's variants, each $CONVBENCH_DNN_GRAPH then
# CONVBENCH_DNN_GRAPH_<VAR>=<VAL> settings; BE="auto cudnn": the backends.
#   bash dev/gpu-dnngraph.sh COMMIT      (repository root, GPU machine; results in $OUT/dnngraph.tgz)
# TESTS=0 REST=0 PROFILE=0 BN=0 leave parts out; CELLS="net:batch:prec:layout ..." the A/B cells
set -u; . scripts/device-env.sh; B=build-gpu; R=/tmp/dnngraph-out; CB=$B/convbench; mkdir -p "$R" # (bundled into $OUT at the end)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -j16 BUILD=$B COMMIT=${1:-unknown} all > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
grep -E "warning|error" /tmp/build.log | head -5
[ "${TESTS:-1}" = 0 ] || timeout ${TEST_S:-200} $B/tests/test_gpu --part dnngraph > "$R/t_dnngraph.log" 2>&1 &
[ "${REST:-1}" = 0 ] || [ "${TESTS:-1}" = 0 ] || CONVBENCH_DNN_GRAPH=race timeout ${TEST_S:-200} $B/tests/test_gpu --part rest > "$R/t_rest.log" 2>&1 &
[ "${REST:-1}" = 0 ] || [ "${TESTS:-1}" = 0 ] || CONVBENCH_DNN_GRAPH=race timeout ${TEST_S:-200} $B/tests/test_gpu --part storage > "$R/t_storage.log" 2>&1 &
wait
for f in $(ls "$R"/t_*.log 2>/dev/null); do echo "$(basename $f): $(tail -1 $f)"; grep -E "^FAIL" $f | head -8; done
[ "${TESTS:-1}" = 0 ] || grep -E "graph-API plans" "$R/t_dnngraph.log" | head -4
for cell in ${CELLS:-vgg-a:64:tf32:nhwc googlenet:128:tf32:nhwc resnet50:64:bf16:nhwc alexnet:128:fp32:nchw}; do
    IFS=: read -r net batch prec lay <<<"$cell"
    for be in ${BE:-auto}; do
    for spec in ${MODES:-off race}; do
        IFS=, read -r -a kv <<<"$spec"; envs=(CONVBENCH_DNN_GRAPH=${kv[0]}); for x in "${kv[@]:1}"; do envs+=(CONVBENCH_DNN_GRAPH_$x); done
        tag=$(echo "$spec" | tr ',=' '__'); f="$R/fp_${net}_${batch}_${prec}_${be}_$tag.json"
        t0=$(date +%s.%N)
        env "${envs[@]}" timeout 150 $CB fullpass $net --batch $batch --backend $be --precision $prec --layout $lay \
            --no-data-grad --no-criterion --warmup 3 --iters 10 --format json --quiet --output "$f" \
            || echo "fullpass $cell $be $spec failed"
        t1=$(date +%s.%N)
        python3 -c "import json; d=json.load(open('$f')); t=[r for r in d['tables']['fullpass'] if r['phase'].startswith('total')]; print('$cell $be $spec: wall %.1f s,' % ($t1 - $t0), ', '.join('%s %.2f ms' % (r['phase'], r['median_ms']) for r in t))" || true
    done
    done
done
if [ "${PROFILE:-1}" != 0 ]; then
for be in ${BE:-auto}; do
env ${PROFILE_ENV:-} CONVBENCH_DNN_GRAPH=race timeout 90 $CB profile vgg-a --batch 64 --backend $be --precision tf32 --layout nhwc --direction all --warmup 1 \
    --iters 5 --format md --quiet --output "$R/prof_vgga_tf32_${be}_race.md"
grep -c "graph engine" "$R/prof_vgga_tf32_${be}_race.md"
done
fi
if [ "${BN:-1}" != 0 ]; then
# cuDNN's Ex batch norm (CONVBENCH_DNN_BN=ex) against the legacy call: test_gpu --part dnnbn, then
# ResNet-50 b64 bf16 NHWC on cudnn alone (880 ms a step at b256 with the legacy call) and on auto
timeout ${TEST_S:-200} $B/tests/test_gpu --part dnnbn > "$R/t_dnnbn.log" 2>&1; echo "t_dnnbn.log: $(tail -1 $R/t_dnnbn.log)"; grep -E "^FAIL" "$R/t_dnnbn.log" | head -8
for be in cudnn auto; do
    for bn in legacy ex; do
        CONVBENCH_DNN_BN=$bn timeout 120 $CB fullpass resnet50 --batch 64 --backend $be --precision bf16 --layout nhwc --no-data-grad \
            --no-criterion --warmup 3 --iters 10 --format json --quiet --output "$R/fp_r50_bn_${be}_$bn.json" || echo "fullpass r50 $be $bn failed"
        python3 -c "import json; d=json.load(open('$R/fp_r50_bn_${be}_$bn.json')); print('resnet50 b64 bf16 $be bn=$bn:', ', '.join('%s %.2f ms' % (r['phase'], r['median_ms']) for r in d['tables']['fullpass'] if r['phase'].startswith('total')))" || true
    done
done
fi
tar -czf "${OUT:-.}/dnngraph.tgz" -C /tmp dnngraph-out
