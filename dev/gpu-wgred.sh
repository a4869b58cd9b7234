#!/usr/bin/env bash
# The backward filter's atomics as 16-byte vector reductions (stop 44, 2026-11-28), on the GPU machine in one
# call: build convbench and the lab; the lab's check (every tile, the scalar atomics too) beside
# test_gpu --part storage, own and rest; the lab's timing (LAB_OWN_ONLY: vector against scalar
# atomics, the split's epilogue weight swept); then dev/gpu-wgstore.sh's FORCED cells (the kernel /
# library per phase on the storage). Every part's summary goes to $OUT/summary.txt as it ends.
#   FORCED="resnet50:64" bash dev/gpu-wgred.sh          (results: $OUT/wgred.tgz, $OUT/summary.txt)
set -u; NAME=wgred; . dev/gpu-lab-prep.sh
S=$OUT/summary.txt; say() { echo "$*" | tee -a $S; }
say "tree ${CB_COMMIT:-?} on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
if [ "${CHECK:-1}" != 0 ]; then
    timeout ${CHECK_S:-150} /tmp/wgmma_lab check >$R/lab_check.txt 2>&1 &
    for p in ${PARTS:-storage own rest}; do timeout ${TEST_S:-200} $B/tests/test_gpu --part $p >$R/t_$p.log 2>&1 & done
    wait
    say "lab check: $(grep -E '^check:' $R/lab_check.txt)"; grep -E "FAIL" $R/lab_check.txt | head -10 | tee -a $S
    for p in ${PARTS:-storage own rest}; do say "test_gpu --part $p: $(tail -1 $R/t_$p.log)"; grep -E "^FAIL" $R/t_$p.log | head -10 | tee -a $S; done
fi
cp $R/*.txt $R/*.log $OUT/ 2>/dev/null
if [ "${TIME:-1}" != 0 ]; then
    LAB_OWN_ONLY=1 timeout ${TIME_S:-150} /tmp/wgmma_lab time ${ONLY:+only=$ONLY} csv=$R/lab.csv >$R/lab_time.txt 2>&1; say "lab time rc=$?"
    cp $R/lab.csv $R/lab_time.txt $OUT/ 2>/dev/null
    python3 - $R/lab.csv <<'PY' | tee -a $S
import csv, sys, collections, math
t = collections.defaultdict(dict)
for r in csv.DictReader(open(sys.argv[1])): t[(r['layer'], r['phase'])][r['version']] = float(r['ms'])
vs = ['wgmma-red-scalar', 'wgmma-epi1', 'wgmma-epi2', 'wgmma-epi3', 'wgmma-epi8']
print('| layer | bwd-filt ms (vector, epi 5) | scalar / vector | epi 1 | epi 2 | epi 3 | epi 8 |'); print('|---|---:|---:|---:|---:|---:|---:|')
lg = collections.defaultdict(list)
for (l, ph), v in t.items():
    if ph != 'bwd-filt' or 'wgmma-t0' not in v: continue
    b = v['wgmma-t0']
    print('| %s | %.4f | %s |' % (l, b, ' | '.join('%.3f' % (v[k] / b) if k in v else '-' for k in vs)))
    for k in vs:
        if k in v: lg[k].append(math.log(v[k] / b))
print('geomean over layers, time / vector epi 5: ' + ', '.join('%s %.3f (%d)' % (k[6:], math.exp(sum(x) / len(x)), len(x)) for k, x in lg.items()))
PY
fi
tar -C $R -czf $OUT/wgred.tgz .
[ -n "${FORCED:-}" ] && CELLS="" TEST=0 FORCED="$FORCED" DEADLINE=${DEADLINE:-200} bash dev/gpu-wgstore.sh 2>&1 | tee -a $S
exit 0
