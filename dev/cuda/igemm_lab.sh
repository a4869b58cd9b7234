#!/usr/bin/env bash
# On the GPU machine: build dev/cuda/igemm_lab.cu and run it (check, then time), writing the full
# output and a CSV under ${OUT:-lab-out}; extra arguments go to the timing run (e.g. only=L2,L3).
#   bash dev/cuda/igemm_lab.sh [only=NAME,...]
set -u
OUT=${OUT:-lab-out}
mkdir -p "$OUT"
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
LAB=${LAB:-/tmp/igemm_lab}
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude dev/cuda/igemm_lab.cu \
    -L"$CUDA_HOME/lib64" -L"$CUDA_HOME/lib" -Xlinker -rpath,"$CUDA_HOME/lib64:$CUDA_HOME/lib" -lcudnn -o "$LAB" || exit 1
timeout "${CHECK_S:-60}" "$LAB" check "$@" >"$OUT/lab_check.txt" 2>&1
echo "lab check rc=$?"
timeout "${TIME_S:-120}" "$LAB" time csv="$OUT/lab.csv" "$@" >"$OUT/lab_time.txt" 2>&1
echo "lab time rc=$?"
grep -E "FAIL|check:|error" "$OUT/lab_check.txt" | head -40
sed -n '/== summary/,$p' "$OUT/lab_time.txt"
