# Sourced by the dev/gpu-*.sh scripts of the wgmma lab on the GPU machine, after `set -u; NAME=...`:
# the lab (dev/cuda/wgmma_lab.cu, /tmp/wgmma_lab) built beside dev/gpu-prep.sh's build, then the GPU's
# name, driver and clocks.
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude dev/cuda/wgmma_lab.cu -L"$CUDA_HOME/lib64" \
    -L"$CUDA_HOME/lib" -Xlinker -rpath,"$CUDA_HOME/lib64:$CUDA_HOME/lib" -lcudnn -o /tmp/wgmma_lab >/tmp/lab_build.log 2>&1 &
. dev/gpu-prep.sh
wait
[ -x /tmp/wgmma_lab ] || { tail -20 /tmp/lab_build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
