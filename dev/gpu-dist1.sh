# The multi-GPU code on one GPU (issue 15's runs that one GPU allows): build, tests/test_dist (the
# one-rank bf16 all-reduce runs; the replica tests skip below 2 GPUs), and `fullpass --gpus 1`
# with fp32 and bf16 gradients. Results under $OUT/dist1/.   bash dev/gpu-dist1.sh COMMIT
set -u; . scripts/device-env.sh; B=build-gpu; CB=$B/convbench; D=$OUT/dist1; mkdir -p $D
make -j16 BUILD=$B COMMIT=$1 all > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
timeout 120 $B/tests/test_dist > $D/test_dist.log 2>&1; echo "test_dist: $(tail -1 $D/test_dist.log)"; grep -E "^FAIL|^skip" $D/test_dist.log
for g in fp32 bf16; do
  timeout 90 $CB fullpass resnet50 --batch 64 --backend auto --precision bf16 --layout nhwc --gpus 1 --update --no-data-grad \
    --grad-precision $g --warmup 3 --iters 10 --format json --quiet --output $D/fp_gpus1_$g.json || echo "fullpass --gpus 1 --grad-precision $g failed"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], d.get('grad_precision'), json.dumps(d['tables'], default=str)[:600])" $D/fp_gpus1_$g.json $g 2>&1 | head -3
done
