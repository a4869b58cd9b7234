# A device call after moving every activation-sized buffer into the liveness arena (src/core/exec.c):
# the GPU suite with memcheck (scripts/gpu-run.sh check, no lab), then the suite's cells with the
# arena, ResNet-50 b256 also with one buffer each (CONVBENCH_MEMORY=separate), planned memory by
# kind and the device's high-water mark, and PyTorch eager's peak on the same cells (same call).
#   bash dev/gpu-mem.sh COMMIT        # SKIP_CHECK=1 leaves the tests out; CELLS, PEER_NETS override
set -u; B=build-gpu; RES=/tmp/cb-res; mkdir -p $RES $OUT; start=$SECONDS
[ -n "${SKIP_CHECK:-}" ] || CB_COMMIT=$1 SKIP_LAB=1 TEST_S=${TEST_S:-240} SAN_S=${SAN_S:-240} bash scripts/gpu-run.sh check
. scripts/device-env.sh; CB=$B/convbench
[ -x $CB ] || make -j16 BUILD=$B COMMIT=$1 all > $RES/build.log 2>&1 || { tail -20 $RES/build.log; exit 1; }
row() { python3 -c "
import json,sys; d=json.load(open(sys.argv[1]))
m=' | '.join('%s %.0f' % (r['kind'], r['mib']) for r in d['tables'].get('memory', []))
print('%-22s %-9s step %7.2f ms  planned %6.0f MiB  device peak %s MiB :: %s' % (sys.argv[2], sys.argv[3], d['batch'] * 1e3 / d['images_per_s'], d['memory_mb'], d.get('device_peak_mb'), m))" "$@" 2>&1 | tail -1; }
for c in ${CELLS:-resnet50:256:bf16:nhwc:u:separate resnet50:64:bf16:nhwc alexnet:128:bf16:nhwc googlenet:128:bf16:nhwc vgg-a:64:bf16:nhwc vgg16:16:bf16:nhwc:u}; do
  IFS=: read n b p l u ab <<<"$c"
  for mode in reuse ${ab:+separate}; do
    [ $((SECONDS - start)) -lt ${DEADLINE:-480} ] || { echo "skip $c $mode (deadline)"; continue; }
    CONVBENCH_MEMORY=$mode timeout 90 $CB fullpass $n --batch $b --backend auto --precision $p --layout $l --no-data-grad --no-criterion \
      ${u:+--update} --warmup 3 --iters 10 --format json --quiet --output $OUT/fp_${n}_${b}_${p}_$mode.json
    row $OUT/fp_${n}_${b}_${p}_$mode.json "$n b$b ${u:+upd}" $mode
  done; done
[ $((SECONDS - start)) -lt ${DEADLINE:-480} ] && timeout $(( ${PEER_END:-570} - (SECONDS - start) )) python3 bench/peer_pytorch.py $RES/peer.json --layers '' \
  --nets ${PEER_NETS:-resnet50:256:train,resnet50:64,alexnet:128,googlenet:128,vgg_a:64,vgg16:16:train} --modes bf16 --layouts nhwc > $RES/peer.log 2>&1
grep '"net"' $RES/peer.log | python3 -c "
import json,sys
for l in sys.stdin:
    d=json.loads(l); print('PyTorch eager %-14s b%-4s upd %-5s %8.2f ms  peak %.0f MiB' % (d.get('net'), d.get('batch'), d.get('update'), d.get('total', -1), d.get('peak_mib')))" 2>&1 | tail -8
(cd $RES && tar czf $OUT/logs.tgz *.log *.json *.txt 2>/dev/null); (cd $OUT && tar czf fp.tgz fp_*.json && rm -f fp_*.json)
