#!/usr/bin/env bash
# The own wgmma kernel's tf32 form (fp32 NHWC operands and output, tf32 products; src/cuda/igemm_wgmma.cuh)
# on the GPU machine, in one call: the lab alone built (dev/cuda/wgmma_tf32_lab.cu); its check (every
# TMA tile of the forward and stride-1 backward data against float64, odd shapes and real layers at
# batch 2, each also with 3 blocks running every tile); its timing against cuDNN's legacy best. ENGINE=1:
# convbench built beside it, then dev/gpu-wgstore.sh with PREC=tf32 (test_gpu --part wg, the table's
# igemm-wgmma-tf32 under --part own, the CELLS' race against the libraries and the FORCED cells' own /
# library ratio per conv phase on fp32 NHWC storage).
# PREC=fp32: the 3xTF32 form (LAB_X3=1: fp32-accurate products, inputs at fp32's full 24 bits, timed
# against cuDNN's strict fp32; the engine part on fp32 NHWC storage under --precision fp32).
#   CHECK_S=100 TIME_S=150 ENGINE=1 CELLS="vgg-a:64" FORCED="resnet50:64" bash dev/gpu-wgtf32.sh   (results: $OUT/wgtf32/)
set -u
PREC=${PREC:-tf32}; [ "$PREC" = fp32 ] && export LAB_X3=1
R=$OUT/wgtf32; mkdir -p $R
if [ -n "${ENGINE:-}" ]; then
    (. scripts/device-env.sh; make -j15 BUILD=build-gpu ${CB_COMMIT:+COMMIT=$CB_COMMIT} all >/tmp/wgtf32-build.log 2>&1) &
fi
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude dev/cuda/wgmma_tf32_lab.cu -L"$CUDA_HOME/lib64" -L"$CUDA_HOME/lib" \
    -Xlinker -rpath,"$CUDA_HOME/lib64:$CUDA_HOME/lib" -lcudnn -o /tmp/wgmma_tf32_lab >$R/build.log 2>&1 || { tail -20 $R/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
if [ "${CHECK:-1}" != 0 ]; then
    timeout ${CHECK_S:-100} /tmp/wgmma_tf32_lab check >$R/lab_check.txt 2>&1; echo "check rc=$?"
    grep -E "FAIL|^check:" $R/lab_check.txt | head -30; tail -1 $R/lab_check.txt
fi
if [ "${TIME:-1}" != 0 ]; then
    timeout ${TIME_S:-150} /tmp/wgmma_tf32_lab time ${ONLY:+only=$ONLY} csv=$R/lab.csv >$R/lab_time.txt 2>&1; echo "time rc=$?"
    grep -E "own/cudnn|^geomean" $R/lab_time.txt | sed 's/ | [0-9]:.* | cudnn/ | cudnn/'
fi
if [ -n "${ENGINE:-}" ]; then
    wait
    tail -3 /tmp/wgtf32-build.log
    t=$SECONDS
    own=igemm-wgmma-tf32; [ "$PREC" = fp32 ] && own=igemm-wgmma-3xtf32
    PREC=$PREC OWN=${OWN-1} OWN_ALGOS=${OWN_ALGOS-$own} MODES=${MODES:-race lib} bash dev/gpu-wgstore.sh
    echo "engine part: $((SECONDS - t)) s"
fi
# last: the check's and the timing's summary lines, and every file in one archive (a call brings few files back)
grep -h -E "^check:" $R/lab_check.txt 2>/dev/null; grep -h "^geomean" $R/lab_time.txt 2>/dev/null
[ -d /tmp/wgstore ] && cp -r /tmp/wgstore $R/
tar -C $OUT -czf $OUT/wgtf32.tgz wgtf32 && rm -rf $R
