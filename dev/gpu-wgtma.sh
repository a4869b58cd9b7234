#!/usr/bin/env bash
# The own wgmma kernel's TMA-fed warp-specialized tiles (6-10, src/cuda/igemm_wgmma.cuh) in the lab, on the GPU machine, in
# one call: build the lab alone; its check (every tile against float64, odd shapes and the real
# layers at batch 2, each also with 3 blocks running every tile); the forward and backward-data tiles
# of ResNet-50 and VGG-A b64 timed (LAB_QUICK): the picked TMA tile against the pick among the cp.async
# tiles (1-5, the kernel before), and against the best TMA tile (the picker's regret).
#   CHECK_S=120 TIME_S=200 bash dev/gpu-wgtma.sh          (results: $OUT/wgtma/; LAB_SKIP=1,2 leaves tiles out)
set -u
R=$OUT/wgtma; mkdir -p $R
if [ -n "${ENGINE:-}" ]; then # convbench's build beside the lab's (dev/gpu-wgstore.sh's then finds it done)
    (B=build-gpu; . scripts/device-env.sh; make -j15 BUILD=build-gpu ${CB_COMMIT:+COMMIT=$CB_COMMIT} all >/tmp/wgtma-build.log 2>&1) &
fi
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude dev/cuda/wgmma_lab.cu -L"$CUDA_HOME/lib64" -L"$CUDA_HOME/lib" \
    -Xlinker -rpath,"$CUDA_HOME/lib64:$CUDA_HOME/lib" -lcudnn -o /tmp/wgmma_lab >$R/build.log 2>&1 || { tail -20 $R/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
if [ "${CHECK:-1}" != 0 ]; then
    timeout ${CHECK_S:-120} /tmp/wgmma_lab check ${CHECK_ONLY:+only=$CHECK_ONLY} >$R/lab_check.txt 2>&1; echo "check rc=$?"
    grep -E "FAIL|^check:" $R/lab_check.txt | head -30; tail -2 $R/lab_check.txt
fi
LAB_OWN_ONLY=1 LAB_QUICK=1 timeout ${TIME_S:-200} /tmp/wgmma_lab time ${ONLY:+only=$ONLY} csv=$R/lab.csv >$R/lab_time.txt 2>&1; echo "time rc=$?"
grep -E "^geomean.*warp-specialized" $R/lab_time.txt
python3 - $R/lab.csv <<'PY'
import csv, sys, collections, math
t = collections.defaultdict(dict)
for r in csv.DictReader(open(sys.argv[1])): t[(r['layer'], r['phase'])][r['version']] = (float(r['ms']), float(r['tflops']))
print('| layer | phase | cp.async picked ms | TMA picked ms (TF/s) | t6 | t7 | t8 | t9 | t10 | TMA / cp.async | picked / best TMA |')
print('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
lg = collections.defaultdict(list); rg = collections.defaultdict(list)
for (l, ph), v in t.items():
    p, c = v.get('wgmma-t0'), v.get('wgmma-cpasync')
    if not p or not c: continue
    tm = [v.get('wgmma-t%d' % i, (float('nan'), 0))[0] for i in range(6, 11)]
    ok = [x for x in tm if x == x and x > 0]
    b = min(ok) if ok else float('nan')
    lg[ph].append(math.log(p[0] / c[0])); rg[ph].append(math.log(p[0] / b))
    print('| %s | %s | %.3f | %.3f (%.0f) | %s | %.3f | %.3f |' % (l, ph, c[0], p[0], p[1], ' | '.join('%.3f' % x for x in tm), p[0] / c[0], p[0] / b))
for ph in lg:
    print('geomean %s over %d layers: TMA picked / cp.async picked %.3f; TMA picked / best TMA tile %.3f' % (ph, len(lg[ph]),
          math.exp(sum(lg[ph]) / len(lg[ph])), math.exp(sum(rg[ph]) / len(rg[ph]))))
PY
# ENGINE=1: then dev/gpu-wgstore.sh (the convbench build, test_gpu --part wg, and its CELLS / MODES /
# FORCED / FORCED_TMA cells: the engine's race with the TMA tiles, and the issue's own / library ratio)
if [ -n "${ENGINE:-}" ]; then
    wait
    t=$SECONDS
    bash dev/gpu-wgstore.sh
    echo "engine part: $((SECONDS - t)) s"
fi
