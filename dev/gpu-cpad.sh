# After `scripts/gpu-run.sh check` in the same call (its build-gpu): the networks with odd channel
# counts that the coalesced channel-padding copy (2026-11-27) is for, and the tf32 engine that a
# 4-byte aligned weight gradient had taken down.
#   bash dev/gpu-cpad.sh    (results in $OUT/cpad.tgz)
set -u; B=build-gpu; R=/tmp/cpad; rm -rf $R; mkdir -p $R $OUT /tmp/cpadnets; . scripts/device-env.sh
python3 tools/gen_random_net.py --suite /tmp/cpadnets --seeds 1-3 --max-gflop 400 >/dev/null
cp /tmp/cpadnets/*.json $R/
# 1. the tf32 NCHW run that failed with cudaErrorMisalignedAddress (engine 67, backward filter)
timeout 90 $B/convbench profile /tmp/cpadnets/gen-resnet-s1.json --backend cudnn --precision tf32 --direction all \
    --format json --quiet --output $R/gen-resnet-s1-tf32.json 2>$R/gen-resnet-s1-tf32.log; echo "tf32 gen-resnet-s1 rc=$? $(tail -1 $R/gen-resnet-s1-tf32.log)"
# 2. bf16 NHWC cudnn profiles (the model's rows), every direction
for n in gen-resnet-s1 gen-mobile-s1 gen-inception-s3 gen-vgg-s1 gen-inception-s1; do
    timeout 60 $B/convbench profile /tmp/cpadnets/$n.json --backend cudnn --precision bf16 --layout nhwc --direction all --warmup 2 --iters 5 \
        --format json --quiet --output $R/$n-bf16.json 2>$R/$n-bf16.log || echo "profile $n failed: $(tail -1 $R/$n-bf16.log)"
    timeout 40 $B/convbench fullpass /tmp/cpadnets/$n.json --backend cudnn --precision bf16 --layout nhwc --update --no-data-grad --warmup 2 --iters 5 \
        --format json --quiet --output $R/fp-$n-bf16.json 2>/dev/null || echo "fullpass $n failed"
done
# 3. the slowest step of the model run (290 ms, cudnn): cudnn and auto, per layer
for be in cudnn auto; do
    timeout 90 $B/convbench fullpass /tmp/cpadnets/gen-mobile-s2.json --backend $be --precision bf16 --layout nhwc --no-data-grad --warmup 2 --iters 5 \
        --per-layer --format json --quiet --output $R/fp-mobile-s2-$be.json 2>$R/fp-mobile-s2-$be.log || echo "mobile-s2 $be failed: $(tail -1 $R/fp-mobile-s2-$be.log)"
done
python3 - $R <<'PY'
import json, sys, glob, os
R = sys.argv[1]
for f in sorted(glob.glob(R + '/fp-*.json')):
    try:
        d = json.load(open(f))
        tot = [r for r in d['tables']['fullpass'] if r['phase'].strip() == 'total'][0]['median_ms']
        print('%-36s %9.3f ms' % (os.path.basename(f), tot))
    except Exception as e:
        print(os.path.basename(f), 'unreadable', e)
PY
tar czf $OUT/cpad.tgz -C /tmp cpad # (one file: the device returns a limited count)
