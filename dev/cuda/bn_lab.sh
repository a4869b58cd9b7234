#!/usr/bin/env bash
# On the GPU machine: dev/cuda/bn_lab.cu (the own NHWC batch norm against memory speed and cuDNN's
# Ex batch norm on ResNet-50's shapes) built with norm_fmt.cu's chunk policy as it is and in
# VARIANTS (each a space-free list of -D flags, "-" for none), run at BATCHES; output under ${OUT:-lab-out}.
#   bash dev/cuda/bn_lab.sh
set -u
OUT=${OUT:-lab-out}
mkdir -p "$OUT"
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
for v in ${VARIANTS:--}; do
    flags=$([ "$v" = - ] || echo "$v" | tr ',' ' ')
    tag=$(echo "$v" | tr -c 'A-Za-z0-9_\n' '_')
    nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude $flags dev/cuda/bn_lab.cu -L"$CUDA_HOME/lib64" -L"$CUDA_HOME/lib" \
        -Xlinker -rpath,"$CUDA_HOME/lib64:$CUDA_HOME/lib" -lcudnn -o /tmp/bn_lab_$tag || { echo "build $v failed"; continue; }
    for b in ${BATCHES:-64}; do
        for prec in ${PRECS:-bf16}; do
            echo "== variant $v, batch $b, $prec"
            timeout 60 /tmp/bn_lab_$tag $b $prec | tee "$OUT/bn_lab_${tag}_${b}_$prec.txt" | tail -14
        done
    done
done
