# A device call after a change to the engine's shared arena (src/core/exec.c): the GPU suite with
# memcheck (scripts/gpu-run.sh check, no lab); the fft-cufft cases under 8 fresh seeds (test_gpu
# counts the fp32 ReLU mask flips it zeroes); then whole steps with the arena and with one buffer
# each (CONVBENCH_MEMORY=separate), A/B in one call, with the planned memory by kind, and PyTorch
# eager's peak on the first cell. Results under $OUT.
#   bash dev/gpu-arena.sh COMMIT        # SKIP_CHECK=1, SKIP_FFT=1, SKIP_AB=1 leave parts out
set -u; B=build-gpu; RES=/tmp/cb-res; mkdir -p $RES $OUT
[ -n "${SKIP_CHECK:-}" ] || CB_COMMIT=$1 SKIP_LAB=1 TEST_S=300 SAN_S=330 bash scripts/gpu-run.sh check
. scripts/device-env.sh; CB=$B/convbench
[ -x $CB ] || make -j16 BUILD=$B COMMIT=$1 all > $RES/build.log 2>&1 || { tail -20 $RES/build.log; exit 1; }
if [ -z "${SKIP_FFT:-}" ]; then
  for k in 1 2 3 4 5 6 7 8; do
    CB_TEST_SEED=$((RANDOM * 65536 + k)) CB_TEST_ALGOS=fft-cufft timeout 100 $B/tests/test_gpu --part own > $RES/fft_$k.log 2>&1 &
  done; wait
  for k in 1 2 3 4 5 6 7 8; do echo "fft seed $(head -1 $RES/fft_$k.log | awk '{print $3}'): $(tail -1 $RES/fft_$k.log); $(grep -c '^note' $RES/fft_$k.log) notes"; grep -E "^FAIL|^note" $RES/fft_$k.log | head -4; done
fi
if [ -z "${SKIP_AB:-}" ]; then
for c in ${CELLS:-resnet50:256:bf16:nhwc:u efficientnet-b0:128:bf16:nhwc resnext50:64:bf16:nhwc convnext-tiny:64:fp32:nchw}; do IFS=: read n b p l u <<<"$c"
  for mode in reuse separate; do
    CONVBENCH_MEMORY=$mode timeout 90 $CB fullpass $n --batch $b --backend auto --precision $p --layout $l --no-data-grad --no-criterion \
      ${u:+--update} --warmup 3 --iters 10 --format json --quiet --output $OUT/fp_${n}_${p}_$mode.json
    python3 -c "
import json,sys; d=json.load(open(sys.argv[1]))
m=' '.join('%s %.0f' % (r['kind'], r['mib']) for r in d['tables'].get('memory', []))
print('%-16s %-9s step %7.2f ms  planned %6.0f MiB  device peak %s MiB | %s' % (sys.argv[2], sys.argv[3], d['batch'] * 1e3 / d['images_per_s'], d['memory_mb'], d.get('device_peak_mb'), m))" $OUT/fp_${n}_${p}_$mode.json $n $mode 2>&1 | tail -1
  done; done
timeout 150 python3 bench/peer_pytorch.py $RES/peer.json --nets ${PEER_NETS:-resnet50:256} --modes bf16 --layouts nhwc > $RES/peer.log 2>&1; grep '"net"' $RES/peer.log
fi
(cd $RES && tar czf $OUT/logs.tgz *.log *.json 2>/dev/null)
