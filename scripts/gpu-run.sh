#!/usr/bin/env bash
# Everything convbench measures on a GPU machine, in two parts that fit the device's 10-minute
# calls (run them back to back: the second finds the first one's build):
#   check   build; test_gpu (every own algorithm, cuDNN, auto against the float64-checked CPU
#           reference); compute-sanitizer memcheck; the ECE408 lab (own kernels
#           against cuDNN at batch 10000) and `infer` with cuDNN and the own variants (issue 5);
#           with MODEL=1, the model's calibration and profiles (issue 4, scripts/model-device.sh)
#   storage the NHWC / bf16 storage tests alone, with memcheck and racecheck on their small cases
#   race    compute-sanitizer racecheck, one process per own algorithm (RACE_S seconds each)
#   bench   scripts/gpu-bench.sh: whole networks per backend and precision, L1-L5, every conv
#           layer own vs cuDNN, and the PyTorch peer in the same run (issue 3)
# Results land in $OUT: results.json (every JSON result), summary.md (the tables), logs.tgz, log.txt.
#   scripts/gpu-run.sh [check] [bench]      # default both; CB_COMMIT names the commit
# The device image lacks cJSON/OpenBLAS/zlib headers and the data set: carry .devpack
# (scripts/device-env.sh says how to make it).
set -u
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
B=${B:-build-gpu}
RES=${RES:-/tmp/cb-res} # at most 8 files come back from $OUT: the results are bundled there at the end
mkdir -p "$RES"
LOG="$OUT/log.txt"
parts=${*:-check bench}
exec > >(tee -a "$LOG") 2>&1
echo "== gpu-run $parts $(date -u +%FT%TZ) commit ${CB_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader
. scripts/device-env.sh
CB=$B/convbench
# the own convolution algorithms' names (from the JSON: the CSV is in long format)
algo_names() { $CB algos --format json --quiet | python3 -c 'import json, sys; print(" ".join(r["name"] for r in json.load(sys.stdin)["tables"]["algorithms"]))'; }
t0=$SECONDS
stamp() { echo "== $(date -u +%T) (+$((SECONDS - t0)) s) $*"; }

stamp "build"
COMMIT_ARG=${CB_COMMIT:+COMMIT=$CB_COMMIT}
LAB=/tmp/ece408_lab
(nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude dev/cuda/ece408_lab.cu -o $LAB -lcudnn \
    >"$RES/lab_build.log" 2>&1 || echo "ece408 lab build failed") &
labpid=$! # wait for it alone: a bare `wait` would also wait for the tee above, forever
make -j16 BUILD=$B $COMMIT_ARG all >"$RES/build.log" 2>&1 || { echo "build failed:"; tail -30 "$RES/build.log"; exit 1; }
wait $labpid
grep -E 'warning|error' "$RES/build.log" | grep -v poison64 | sort -u | head -10

for part in $parts; do
case $part in
check)
    # correctness in parallel processes (16 cores; the float64 references run on the CPU): the
    # full suite split in parts, compute-sanitizer memcheck; timing comes after
    stamp "test_gpu (parts in parallel) + compute-sanitizer memcheck"
    ALGOS=$(algo_names)
    set -- $ALGOS
    g=0; groups=("" "" "" "")
    for a in "$@"; do groups[$g]="${groups[$g]:+${groups[$g]},}$a"; g=$(( (g + 1) % 4 )); done
    pids=()
    for g in 0 1 2 3; do
        [ -n "${groups[$g]}" ] || continue
        CB_TEST_ALGOS="${groups[$g]}" timeout ${TEST_S:-300} $B/tests/test_gpu --part own >"$RES/test_gpu_own$g.log" 2>&1 & pids+=($!)
    done
    timeout ${TEST_S:-300} $B/tests/test_gpu --part rest >"$RES/test_gpu_rest.log" 2>&1 & pids+=($!)
    timeout ${TEST_S:-300} $B/tests/test_gpu --part storage >"$RES/test_gpu_storage.log" 2>&1 & pids+=($!)
    timeout ${TEST_S:-300} $B/tests/test_gpu --part dnngraph >"$RES/test_gpu_dnngraph.log" 2>&1 & pids+=($!) # cuDNN's graph API forced
    timeout ${TEST_S:-300} $B/tests/test_gpu --part dnnbn >"$RES/test_gpu_dnnbn.log" 2>&1 & pids+=($!) # cuDNN's Ex batch norm on
    timeout ${TEST_S:-300} $B/tests/test_gpu --part pick >"$RES/test_gpu_pick.log" 2>&1 & pids+=($!) # every cuDNN algorithm, not the fastest
    # the cross-backend op driver on the GPU backends, and the multi-GPU tests (those needing 2+
    # GPUs skip on one)
    timeout ${TEST_S:-300} $B/tests/test_ops cuda cudnn auto >"$RES/test_ops.log" 2>&1 & pids+=($!)
    timeout ${TEST_S:-300} $B/tests/test_dist >"$RES/test_dist.log" 2>&1 & pids+=($!)
    if [ -z "${SKIP_SANITIZERS:-}" ]; then
        for be in cuda-small cudnn-small; do
            timeout ${SAN_S:-300} compute-sanitizer --tool memcheck --print-limit 20 $B/tests/test_gpu --backends $be \
                >"$RES/memcheck_$be.log" 2>&1 & pids+=($!)
        done
        # the NHWC / bf16 storages' own kernels (pooling, bias, padding copies), small cases
        timeout ${SAN_S:-300} compute-sanitizer --tool memcheck --print-limit 20 $B/tests/test_gpu --part storage-small \
            >"$RES/memcheck_storage-small.log" 2>&1 & pids+=($!)
    fi
    for p in "${pids[@]}"; do wait $p; done
    P=0 F=0 S=0
    for f in "$RES"/test_gpu_*.log "$RES"/test_ops.log "$RES"/test_dist.log; do
        line=$(grep -E '^[0-9]+ passed' "$f" | tail -1)
        [ -n "$line" ] || { echo "$(basename $f): no result line (timed out or crashed): $(tail -2 $f | tr '\n' ' ')"; F=$((F + 1)); continue; }
        set -- $line; P=$((P + $1)) F=$((F + $3)) S=$((S + $5))
        grep -E '^FAIL' "$f" | head -10
    done
    echo "test_gpu, test_ops, test_dist: $P passed, $F failed, $S skipped (own algorithms: $(echo $ALGOS | tr ' ' ','))" | tee "$RES/test_line.txt"
    for f in "$RES"/memcheck_*.log; do
        [ -f "$f" ] || continue
        echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed' "$f" | tr '\n' ' ')" | tee -a "$RES/test_line.txt"
        grep -E '^=========' "$f" | grep -v SUMMARY | head -6
    done
    if [ -z "${SKIP_LAB:-}" ]; then # SKIP_LAB=1: the tests alone (a short device call)
        stamp "ECE408 lab: own kernels against cuDNN, batch 10000"
        [ -x $LAB ] && timeout 100 $LAB 10000 >"$RES/ece408_lab.txt" 2>&1; echo "lab rc=$?"
        grep -E '^FAIL' "$RES/ece408_lab.txt" | head
    fi
    W=.devpack/ece408.cbwt
    if [ -f "$W" ] && [ -n "${CB_FASHION_DATA:-}" ]; then
        stamp "ECE408 infer (seed 004's report) with cuDNN and own variants"
        ece() { # tag backend precision batches [--conv-algo A]
            local tag=$1 be=$2 prec=$3 bs=$4; shift 4
            timeout 60 $CB infer fashion-ece408 --weights "$W" --data "$CB_FASHION_DATA" --resize 86 --batch $bs \
                --backend $be --precision $prec "$@" --format json --quiet --output "$RES/infer_ece408_$tag.json" || echo "infer $tag failed"
        }
        ece cudnn-fp32 cudnn fp32 100,1000,10000
        ece cudnn-tf32 cudnn tf32 10000
        ece cuda-auto-fp32 cuda fp32 100,1000,10000
        ece cuda-auto-bf16 cuda bf16 100,1000,10000
        for a in ${ECE_FP32:-igemm-simt direct-const direct-smem direct-smem+pool unroll-smem}; do ece $a cuda fp32 10000 --conv-algo $a; done
        for a in direct-tf32 direct-tf32+pool; do ece $a cuda tf32 10000 --conv-algo $a; done
        for a in direct-bf16 direct-bf16+pool; do ece $a cuda bf16 10000 --conv-algo $a; done
    else
        echo "skip ECE408 infer: no $W (convbench train fashion-ece408 --resize 86 --weights-out $W) or no data"
    fi
    if [ -n "${MODEL:-}" ]; then
        stamp "model: calibrate cudnn, cuDNN profiles of 4 nets x 3 directions"
        timeout 200 bash scripts/model-device.sh $CB "$RES" 150 || echo "model-device failed"
        CB=$CB scripts/model-check.sh "$RES" 2>&1 | tail -14
    fi ;;
storage)
    # the NHWC / bf16 storage cases alone (test_gpu --part storage) with memcheck and racecheck on
    # their small cases: a quick check of the cudnn backend's storage kernels before a benchmark
    stamp "test_gpu --part storage + compute-sanitizer memcheck, racecheck (storage-small)"
    timeout ${TEST_S:-300} $B/tests/test_gpu --part storage >"$RES/test_gpu_storage.log" 2>&1 & p1=$!
    timeout ${SAN_S:-300} compute-sanitizer --tool memcheck --print-limit 20 $B/tests/test_gpu --part storage-small \
        >"$RES/memcheck_storage-small.log" 2>&1 & p2=$!
    p3=
    if [ "${STORAGE_RACE:-1}" != 0 ]; then # racecheck is the slow one (about 5 minutes)
        timeout ${SAN_S:-300} compute-sanitizer --tool racecheck --print-limit 20 $B/tests/test_gpu --part storage-small \
            >"$RES/racecheck_storage-small.log" 2>&1 & p3=$!
    fi
    wait $p1 $p2 $p3
    for f in "$RES"/test_gpu_storage.log "$RES"/memcheck_storage-small.log "$RES"/racecheck_storage-small.log; do
        [ -f "$f" ] || continue
        echo "$(basename $f .log): $(grep -E '^[0-9]+ passed|ERROR SUMMARY|RACECHECK SUMMARY' "$f" | tr '\n' ' ')" | tee -a "$RES/test_line.txt"
        grep -E '^FAIL|^=========' "$f" | grep -v SUMMARY | head -8
    done ;;
race)
    # compute-sanitizer racecheck, the slowest tool: one process per own algorithm (RACE_J at a
    # time), each over test_gpu's small cases, so that a slow one cannot hide the others' results
    stamp "compute-sanitizer racecheck, one process per own algorithm"
    pids=()
    for a in $(algo_names); do
        while [ $(jobs -rp | wc -l) -ge ${RACE_J:-8} ]; do sleep 1; done
        f="$RES/racecheck_$(echo $a | tr '+' 'p').log"
        (CB_TEST_ALGOS="$a" timeout ${RACE_S:-500} compute-sanitizer --tool racecheck --print-limit 20 $B/tests/test_gpu \
            --backends cuda-small >"$f" 2>&1; echo "exit $?" >>"$f") &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait $p; done
    for f in "$RES"/racecheck_*.log; do
        echo "$(basename $f .log): $(grep -E 'RACECHECK SUMMARY|passed|^exit' "$f" | tr '\n' ' ')" | tee -a "$RES/race_line.txt"
        grep -E '^=========' "$f" | grep -v SUMMARY | head -4
    done ;;
bench)
    stamp "benchmarks"
    B=$B RES=$RES ITERS=${ITERS:-10} bash scripts/gpu-bench.sh ${BENCH:-nets layers profiles peer} ;;
*) echo "gpu-run: unknown part '$part' (check, storage, race, bench)"; exit 2 ;;
esac
done

stamp "summary"
python3 - "$RES" "$OUT" <<'PY'
import json, glob, os, sys
res, out = sys.argv[1:3]
bundle = {}
for f in sorted(glob.glob(res + '/*.json')):
    try: bundle[os.path.basename(f)] = json.load(open(f))
    except Exception as e: bundle[os.path.basename(f)] = str(e)
json.dump(bundle, open(out + '/results.json', 'w'))
PY
python3 scripts/gpu-summary.py "$RES" "$OUT/summary.md" >/dev/null
(cd "$RES" && tar czf "$OUT/logs.tgz" --exclude='*.json' . 2>/dev/null)
cat "$OUT/summary.md"
[ -f "$RES/test_line.txt" ] && cat "$RES/test_line.txt"
[ -f "$RES/race_line.txt" ] && cat "$RES/race_line.txt"
stamp "done"
