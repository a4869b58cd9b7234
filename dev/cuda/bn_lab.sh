#!/usr/bin/env bash
# On the GPU machine: dev/cuda/bn_lab.cu (the own NHWC batch norm against memory speed and cuDNN's
# Ex batch norm on ResNet-50's shapes) built with norm_fmt.cu's policy as it is and in VARIANTS
# (each a comma-separated list of -D flags, "-" for none; built in parallel), run one after
# another at BATCHES and PRECS; output under ${OUT:-lab-out}.
#   VARIANTS="- -DBN_MIN_BLOCKS=4" bash dev/cuda/bn_lab.sh
set -u
OUT=${OUT:-lab-out}
mkdir -p "$OUT"
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
tag_of() { echo "$1" | tr -c 'A-Za-z0-9_\n' '_'; }
for v in ${VARIANTS:--}; do
    flags=$([ "$v" = - ] || echo "$v" | tr ',' ' ')
    nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude $flags dev/cuda/bn_lab.cu -L"$CUDA_HOME/lib64" -L"$CUDA_HOME/lib" \
        -Xlinker -rpath,"$CUDA_HOME/lib64:$CUDA_HOME/lib" -lcudnn -o /tmp/bn_lab_$(tag_of "$v") &
done
wait
for v in ${VARIANTS:--}; do
    tag=$(tag_of "$v")
    [ -x /tmp/bn_lab_$tag ] || { echo "build $v failed"; continue; }
    for b in ${BATCHES:-64}; do
        for prec in ${PRECS:-bf16}; do
            echo "== variant $v, batch $b, $prec"
            timeout 60 /tmp/bn_lab_$tag $b $prec > "$OUT/bn_lab_${tag}_${b}_$prec.txt" 2>&1
            tail -1 "$OUT/bn_lab_${tag}_${b}_$prec.txt"
        done
    done
done
