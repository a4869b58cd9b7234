#!/usr/bin/env bash
# make run's main job. With a GPU (nvidia-smi sees one and this build has CUDA): AlexNet at
# batch 128 in bf16 NHWC, a training step on `auto` (the fastest own kernel or cuDNN per layer)
# against plain `cudnn`, compared side by side. Without: AlexNet at batch 16 on this CPU.
#   scripts/run.sh BUILD/convbench
set -euo pipefail
cb=${1:-build/convbench}
out=$(dirname "$cb")/run
mkdir -p "$out"
gpu=$(nvidia-smi -L 2>/dev/null | head -1 || true)
if [ -n "$gpu" ] && ! "$cb" algos 2>/dev/null | grep -q "no CUDA"; then
    echo "make run: on the GPU ($gpu): AlexNet, batch 128, bf16 NHWC, training step, auto against cudnn"
    for be in cudnn auto; do
        "$cb" fullpass alexnet --backend "$be" --precision bf16 --layout nhwc --batch 128 --warmup 5 --iters 20 \
            --format json --output "$out/alexnet_${be}_bf16_nhwc.json"
    done
    "$cb" compare "$out/alexnet_cudnn_bf16_nhwc.json" "$out/alexnet_auto_bf16_nhwc.json"
    echo "make run: run1 = cudnn, run2 = auto; the results are in $out/"
else
    why="no GPU"
    [ -n "$gpu" ] && why="this build has no CUDA (nvcc was not on PATH)"
    echo "make run: on the CPU ($why): AlexNet, batch 16, a training step on the cpu backend"
    "$cb" fullpass alexnet --backend cpu --batch 16 --warmup 1 --iters 5
fi
