#!/usr/bin/env bash
# On the GPU machine: dev/cuda/dw_lab.cu (the own NHWC depthwise kernels at stride 1, 16 bytes a
# thread against two channels a thread, on a sweep of planes and channels) built as the tree has it
# and in VARIANTS (each a comma-separated list of -D flags, "-" for none; built in parallel), each
# run with ARGS; output under ${OUT:-lab-out}.
#   VARIANTS="- -DDW_PAIR_CPB_MAX=32" ARGS="k=3,7" bash dev/cuda/dw_lab.sh
set -u
OUT=${OUT:-lab-out}
mkdir -p "$OUT"
. "$(dirname "$0")/lab_build.sh"
lab_build dw_lab
for v in ${VARIANTS:--}; do
    tag=$(tag_of "$v")
    [ -x /tmp/dw_lab_$tag ] || { echo "build $v failed"; continue; }
    echo "== $v"
    timeout ${LAB_S:-120} /tmp/dw_lab_$tag ${ARGS:-} | tee "$OUT/dw_lab_$tag.md"
done
