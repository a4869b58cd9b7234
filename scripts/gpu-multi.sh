#!/usr/bin/env bash
# Multi-GPU checks and timings (issue 15) on a machine with 2+ GPUs, in one device call of about
# 5 minutes (carry .devpack):   OUT=dir scripts/gpu-multi.sh
# ONLY=allreduce runs test_dist and the all-reduce parts alone.
# Builds, runs tests/test_dist (replicas against one GPU on the whole batch, fp32 and bf16
# gradients), `allreduce` (fp32 and bf16, 8 B to 256 MiB), `fullpass --gpus N` weak and strong
# scaling (ResNet-50 bf16 NHWC on auto, VGG-16 fp32 on cudnn, VGG-16 with --grad-precision bf16),
# `calibrate --refit --allreduce-gpus N` (the H200 calibration recorded in docs/results with this
# machine's all-reduce link stored) and `simulate` for the same runs from it; a table of measured
# against simulated step times last.
# With one GPU it runs the 1-GPU parts and says what it skipped. NVLink multicast stays off.
set -u
OUT=${OUT:-multi-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
B=${B:-build-gpu}
CB=$B/convbench
t0=$SECONDS
stamp() { echo "== $(date -u +%T) (+$((SECONDS - t0)) s) $*"; }
DEADLINE_S=${DEADLINE_S:-540} # the device call's limit is 600 s: later parts are skipped, and said so
left() { [ $((SECONDS - t0)) -lt "$DEADLINE_S" ] || { echo "skipped (deadline): $*"; return 1; }; }
. scripts/device-env.sh
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpus.txt"
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
N=$(nvidia-smi -L | wc -l)
# the device simulate prices from: this machine's own kind, by name
DEV=h200; nvidia-smi -L | head -1 | grep -q H100 && DEV=h100
GS="$N"; [ "$N" -gt 2 ] && GS="2 $N" # worker counts measured: 2 and all
stamp "build"
make -j32 BUILD=$B ${COMMIT:+COMMIT=$COMMIT} "$CB" $B/tests/test_dist >"$OUT/build.log" 2>&1 || { echo "build failed:"; tail -30 "$OUT/build.log"; exit 1; }
grep -q CB_HAVE_NCCL "$OUT/build.log" && echo "built with NCCL" || echo "built WITHOUT NCCL"
stamp "test_dist"
timeout 120 $B/tests/test_dist 2>&1 | tee "$OUT/test_dist.log" | tail -8
stamp "allreduce"
for g in $GS; do
    for dt in fp32 bf16; do
        timeout 120 $CB allreduce --gpus "$g" --dtype $dt --format json --quiet --output "$OUT/allreduce_${g}gpu_$dt.json" &&
            timeout 60 $CB allreduce --gpus "$g" --dtype $dt --min-mb 64 --iters 5 --quiet | tail -4
    done
done
if [ "$N" -ge 2 ]; then
    stamp "peer all-reduce (PyTorch, same GPUs) and NCCL settings"
    timeout 120 python3 bench/peer_dist.py allreduce --gpus "$N" --min-mb 16 --max-mb 1024 --output "$OUT/peer_allreduce_${N}gpu.json" 2>"$OUT/peer_allreduce.err" |
        tail -4 || echo "peer all-reduce failed: $(tail -2 "$OUT/peer_allreduce.err")"
    i=0
    for env in "NCCL_ALGO=Ring" "NCCL_ALGO=Ring NCCL_PROTO=Simple" "NCCL_MIN_NCHANNELS=32" "NCCL_MIN_NCHANNELS=32 NCCL_ALGO=Ring NCCL_PROTO=Simple"; do
        i=$((i + 1))
        env $env timeout 60 $CB allreduce --gpus "$N" --min-mb 64 --max-mb 1024 --iters 10 --quiet --format json --output "$OUT/nccl_env$i.json" &&
            python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2] + ': ' + ', '.join('%.0f MiB %.1f GB/s' % (r['bytes'] / 1048576, r['busbw_gbs']) for r in d['tables']['allreduce']))" \
                "$OUT/nccl_env$i.json" "$env" || echo "$env: failed"
    done
fi
# ONLY=allreduce: the all-reduce parts alone (test_dist, the sweeps, the peer's); the rest is skipped as past the deadline
[ "${ONLY:-}" = allreduce ] && DEADLINE_S=0
CAL=docs/results/2026-11-23-model-data/h200-cal.json.gz
if [ "$N" -ge 2 ] && left "calibrate --allreduce-gpus"; then # the recorded calibration with this machine's all-reduce stored: simulate's link
    stamp "calibrate --allreduce-gpus $N"
    timeout 120 $CB calibrate --refit "$CAL" --allreduce-gpus "$N" --save "$OUT/cal-link.json" --quiet --format json \
        --output "$OUT/calibrate_link.json" 2>"$OUT/calibrate_link.err" && CAL=$OUT/cal-link.json ||
        echo "calibrate --allreduce-gpus failed: $(tail -2 "$OUT/calibrate_link.err")"
fi
run() { # NAME NET BATCH BACKEND PREC LAYOUT SCALING [GRAD [GPUS]]
    local name=$1 net=$2 batch=$3 be=$4 prec=$5 lay=$6 sc=$7 grad=${8:-fp32} g=${9:-$N}
    name=${name}_${g}gpu
    left "fullpass $name" || return 0
    stamp "fullpass $name"
    timeout 150 $CB fullpass "$net" --batch "$batch" --backend "$be" --precision "$prec" --layout "$lay" --gpus "$g" --scaling "$sc" \
        --grad-precision "$grad" --update --no-data-grad --warmup 3 --iters 10 --format json --quiet --output "$OUT/fullpass_$name.json" \
        2>"$OUT/fullpass_$name.err" || echo "fullpass $name failed: $(tail -2 "$OUT/fullpass_$name.err")"
    timeout 60 $CB simulate "$net" --batch "$batch" --precision "$prec" --device $DEV --calibration "$CAL" --workers 1,$g --scaling "$sc" \
        --grad-precision "$grad" --overlap --format json --quiet --output "$OUT/simulate_$name.json" 2>"$OUT/simulate_$name.err" ||
        echo "simulate $name failed: $(tail -1 "$OUT/simulate_$name.err")"
}
# most telling first: weak scaling on all GPUs, then the peer, then the rest
run resnet50_b128_bf16_weak resnet50 128 auto bf16 nhwc weak
run vgg16_b32_fp32_weak vgg16 32 cudnn fp32 nchw weak
if [ "$N" -ge 2 ] && left "peer DDP"; then
    stamp "peer: PyTorch DDP, same GPUs"
    timeout 150 python3 bench/peer_dist.py ddp --gpus "$N" --net resnet50 --batch 128 --precision bf16 --layout nhwc --iters 10 \
        --output "$OUT/peer_ddp_resnet50_b128_bf16_${N}gpu.json" 2>"$OUT/peer_ddp.err" || echo "peer DDP failed: $(tail -2 "$OUT/peer_ddp.err")"
    left "peer DDP vgg16" && timeout 120 python3 bench/peer_dist.py ddp --gpus "$N" --net vgg16 --batch 32 --precision fp32 --layout nchw --iters 10 \
        --output "$OUT/peer_ddp_vgg16_b32_fp32_${N}gpu.json" 2>>"$OUT/peer_ddp.err" || echo "peer DDP vgg16 failed: $(tail -2 "$OUT/peer_ddp.err")"
fi
run resnet50_b256_bf16_strong resnet50 256 auto bf16 nhwc strong
run vgg16_b32_bf16_weak vgg16 32 cudnn bf16 nhwc weak
run vgg16_b32_fp32_weak_gradbf16 vgg16 32 cudnn fp32 nchw weak bf16
run resnet50_b64_bf16_weak resnet50 64 auto bf16 nhwc weak
if [ "$N" -gt 2 ]; then # the simulator at 2 of the N GPUs too
    run resnet50_b128_bf16_weak resnet50 128 auto bf16 nhwc weak fp32 2
    run vgg16_b32_fp32_weak vgg16 32 cudnn fp32 nchw weak fp32 2
fi
if [ "$N" -ge 2 ] && left "two processes"; then # one process per GPU, as a launcher starts them (RANK, WORLD_SIZE, LOCAL_RANK; a shared file)
    stamp "two processes"
    rm -f /tmp/cb-rdv
    for r in 0 1; do
        RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r timeout 150 $CB fullpass resnet50 --batch 64 --backend auto --precision bf16 --layout nhwc \
            --rendezvous file:/tmp/cb-rdv --update --no-data-grad --warmup 3 --iters 10 --format json --quiet \
            --output "$OUT/procs_rank$r.json" 2>"$OUT/procs_rank$r.err" &
    done
    wait
    # (rank 0 alone reports; the other ranks exit 0 with nothing written)
    [ -s "$OUT/procs_rank0.json" ] && echo "rank 0: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d['tables'])[:300])" "$OUT/procs_rank0.json")" ||
        echo "two processes failed: $(tail -2 "$OUT/procs_rank0.err") / $(tail -2 "$OUT/procs_rank1.err")"
fi
stamp "tables"
python3 - "$OUT" <<'PY' | tee "$OUT/summary.md"
import glob, json, os, sys
out = sys.argv[1]
print("| all-reduce | GPUs | dtype | busbw at largest (GB/s) | avg busbw |")
print("|---|---|---|---|---|")
for f in sorted(glob.glob(f"{out}/allreduce_*.json")):
    d = json.load(open(f))
    print(f"| {os.path.basename(f)} | {d.get('gpus')} | {d.get('dtype')} | {d.get('busbw_largest_gbs', 0):.1f} | {d.get('avg_busbw_gbs', 0):.1f} |")
print()
print("| run | GPUs | batch/GPU | step ms | compute ms | comm ms | exposed ms | img/s | eff % | simulated comm ms | predicted step ms | error % |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
# simulate's prediction with the measured 1-GPU step as its compute: step_N = step_1 * (N if weak else 1) / speedup_N
for f in sorted(glob.glob(f"{out}/fullpass_*.json")):
    name = os.path.basename(f)[9:-5]
    d = json.load(open(f))
    sim = {}
    try:
        for r in json.load(open(f"{out}/simulate_{name}.json"))["tables"]["scaling"]:
            sim[int(r["workers"])] = (float(r["speedup"]), float(r["comm_ms"]))
    except Exception:
        pass
    rows = d["tables"]["scaling"]
    weak = d.get("scaling") == "weak"
    for r in rows:
        g = int(r["gpus"]); s1 = rows[0]["step_ms"]
        p = s1 * (g if weak else 1) / sim[g][0] if g in sim and sim[g][0] > 0 else None
        err = f"{100 * (p - r['step_ms']) / r['step_ms']:+.1f}" if p else "-"
        sc = f"{sim[g][1]:.2f}" if g in sim else "-"
        print(f"| {name} | {g} | {r['batch_per_gpu']} | {r['step_ms']:.2f} | {r['compute_ms']:.2f} | {r['comm_ms']:.2f} | "
              f"{r['exposed_comm_ms']:.2f} | {r['images_per_s']:.0f} | {r['scaling_eff_pct']:.1f} | {sc} | {'-' if p is None else f'{p:.2f}'} | {err} |")
for f in sorted(glob.glob(f"{out}/peer_*.json")):
    d = json.load(open(f))
    print()
    print(f"{os.path.basename(f)}: {d['peer']}, {d['device']}")
    for r in d["rows"]:
        print("  " + ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in r.items()))
PY
# the device returns at most 8 files: everything in one archive, the summary beside it
tar -czf /tmp/multi.tgz -C "$OUT" --exclude log.txt . && find "$OUT" -mindepth 1 ! -name log.txt ! -name summary.md -delete &&
    mv /tmp/multi.tgz "$OUT/multi.tgz"
stamp "done"
