#!/usr/bin/env bash
# The wgmma lab's TMA-fed warp-specialized tiles (9-11, dev/cuda/wgmma_ws.cuh) on the GPU machine, in
# one call: build the lab alone; its check (every tile against float64, odd shapes and the real
# layers at batch 2, each also with 3 blocks running every tile); the forward and backward-data tiles
# of ResNet-50 and VGG-A b64 timed (LAB_QUICK), with each TMA tile / the picked tile per layer.
#   CHECK_S=120 TIME_S=200 LAB_SKIP=6,7,8 bash dev/gpu-wgtma.sh          (results: $OUT/wgtma/)
set -u
R=$OUT/wgtma; mkdir -p $R
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude dev/cuda/wgmma_lab.cu -L"$CUDA_HOME/lib64" -L"$CUDA_HOME/lib" \
    -Xlinker -rpath,"$CUDA_HOME/lib64:$CUDA_HOME/lib" -lcudnn -o /tmp/wgmma_lab >$R/build.log 2>&1 || { tail -20 $R/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
export LAB_SKIP=${LAB_SKIP:-6,7,8}
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
print('| layer | phase | picked ms (TF/s) | best lib tile | t9 | t10 | t11 | best TMA / picked |'); print('|---|---|---:|---:|---:|---:|---:|---:|')
lg = collections.defaultdict(list)
for (l, ph), v in t.items():
    p = v.get('wgmma-t0')
    if not p: continue
    lib = min(v[k][0] for k in v if k in ('wgmma-t1','wgmma-t2','wgmma-t3','wgmma-t4','wgmma-t5'))
    tm = [v.get('wgmma-t%d' % i, (float('nan'),0))[0] for i in (9, 10, 11)]
    ok = [x for x in tm if x == x and x > 0]
    b = min(ok) if ok else float('nan')
    if ok: lg[ph].append(math.log(b / p[0]))
    print('| %s | %s | %.3f (%.0f) | %.3f | %s | %.3f |' % (l, ph, p[0], p[1], lib, ' | '.join('%.3f' % x for x in tm), b / p[0]))
for ph, v in lg.items(): print('geomean best TMA / picked, %s over %d layers: %.3f' % (ph, len(v), math.exp(sum(v) / len(v))))
PY
