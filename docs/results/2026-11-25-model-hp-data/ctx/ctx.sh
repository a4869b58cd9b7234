#!/bin/bash
# profile one-conv networks: a calibration shape against the evaluation layer it resembles
mkdir -p /tmp/ctx
for f in x/ctx*.json; do
  t=$(basename $f .json)
  timeout 30 build-gpu/convbench profile $f --backend cudnn --precision fp32 --direction all --warmup 2 --iters 5 --format json --quiet --output /tmp/ctx/$t.json 2>/tmp/ctx/$t.log || echo "ctx $t failed"
done
tar -czf $OUT/ctx.tgz -C /tmp ctx
