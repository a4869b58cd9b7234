#!/usr/bin/env bash
# The bf16 NHWC passes' calibration on the GPU (bn_fwd_train_odd and bn_bwd_odd among them: cuDNN's
# legacy batch norm where the channels are not a multiple of 8), saved to $OUT/mops.json; after
# `scripts/gpu-run.sh check` in the same call, or alone (it builds).
#   bash dev/gpu-bnodd.sh
# Then, without a GPU, the held-out bf16 steps with those entries merged into the stored H200 calibration:
#   D=docs/results/2026-11-27-h200-model-bf16
#   build/convbench calibrate --refit $D/h200-cal.json.gz,mops.json --save /tmp/merged.json --quiet
#   python3 tools/gen_random_net.py --suite /tmp/gn --seeds 1-3 --max-gflop 400
#   build/convbench model-eval --device /tmp/merged.json --nets "$(ls /tmp/gn/*.json | paste -sd, -)" --precision bf16 \
#       --kinds all --quiet $D/profiles/*-bf16.json $D/fullpass/*-bf16.json
set -u; B=build-gpu; mkdir -p $OUT; . scripts/device-env.sh
[ -x $B/convbench ] || make -j16 BUILD=$B ${CB_COMMIT:+COMMIT=$CB_COMMIT} all >/tmp/bnodd-build.log 2>&1 || { tail -20 /tmp/bnodd-build.log; exit 1; }
timeout ${CAL_S:-300} $B/convbench calibrate --backend cudnn --sections mops --reps 5 --save $OUT/mops.json --format csv \
    --output $OUT/mops.csv --quiet || echo "calibrate failed: rc=$?"
python3 - $OUT/mops.json <<'PY'
import json, sys
ops = json.load(open(sys.argv[1]))['calibration'].get('ops_bf16', {})
for k in ('bn_fwd_train', 'bn_fwd_train_odd', 'bn_bwd', 'bn_bwd_odd'):
    o = ops.get(k)
    print(k, 'not measured' if not o else 'bw %.3g B/s, overhead %.3g s, %d samples' % (o.get('bw', 0), o.get('overhead_s', 0), o.get('n', 0)))
PY
