#!/usr/bin/env bash
# On the GPU machine: dev/cuda/dw_lab.cu (the own NHWC depthwise kernels at stride 1, 16 bytes a
# thread against two channels a thread, on a sweep of planes and channels) built as the tree has it
# and in VARIANTS (each a comma-separated list of -D flags, "-" for none; built in parallel), each
# run with ARGS; output under ${OUT:-lab-out}.
#   VARIANTS="- -DDW_PAIR_CPB_MAX=32" ARGS="k=3,7" bash dev/cuda/dw_lab.sh
set -u
OUT=${OUT:-lab-out}
mkdir -p "$OUT"
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
tag_of() { echo "$1" | tr -c 'A-Za-z0-9_\n' '_'; }
for v in ${VARIANTS:--}; do
    flags=$([ "$v" = - ] || echo "$v" | tr ',' ' ')
    nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude -Idev/cuda $flags dev/cuda/dw_lab.cu -L"$CUDA_HOME/lib64" \
        -L"$CUDA_HOME/lib" -Xlinker -rpath,"$CUDA_HOME/lib64:$CUDA_HOME/lib" -lcudnn -o /tmp/dw_lab_$(tag_of "$v") &
done
wait
for v in ${VARIANTS:--}; do
    tag=$(tag_of "$v")
    [ -x /tmp/dw_lab_$tag ] || { echo "build $v failed"; continue; }
    echo "== $v"
    timeout ${LAB_S:-120} /tmp/dw_lab_$tag ${ARGS:-} | tee "$OUT/dw_lab_$tag.md"
done
