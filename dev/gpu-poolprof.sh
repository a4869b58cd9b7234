#!/usr/bin/env bash
# Where the NHWC pool kernels' time goes, on the GPU machine: dev/pool_bench.cu over every shape
# (the kernels alone against the DRAM floor, each setting), then Nsight Compute on one shape's
# forward, gather backward and scatter backward (SHAPE, default 0: an Inception-like network's 3x3
# stride-1 pool of C 322 at V 1; PREC fp32): speed of light, memory, warp stalls, occupancy. On
# 2026-11-29 ncu printed "No kernels were profiled" there (docs/results/2026-11-29-pools.md): try
# it on another machine before relying on it. Results: $OUT/poolprof.tgz (bench.md, ncu-*.txt).
#   SHAPE=0 PREC=fp32 bash dev/gpu-poolprof.sh
set -u; NAME=poolprof; . dev/gpu-prep.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
nvcc -O3 -std=c++17 -arch=sm_90 -DCB_HAVE_CUDA -Iinclude -Isrc dev/pool_bench.cu -L$B -lconvbench -Xlinker -rpath,$PWD/$B -o $R/pool_bench || exit 1
timeout 150 $R/pool_bench > $R/bench.md 2>&1; echo "pool_bench rc $?"; cat $R/bench.md
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats"
for k in pf_nhwc_fwd_kernel pf_nhwc_bwd_kernel pf_nhwc_scatter_kernel; do
    timeout 120 ncu --clock-control none $S -k regex:$k --launch-skip 3 --launch-count 1 $R/pool_bench ${SHAPE:-0} ${PREC:-fp32} > $R/ncu-$k.txt 2>&1
    echo "== ncu $k rc $?"; grep -E "Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Issued Warp|No Eligible|Stall|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Compute \(SM\)" $R/ncu-$k.txt | head -40
done
tar -C /tmp -czf $OUT/poolprof.tgz poolprof
