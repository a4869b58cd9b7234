#!/usr/bin/env bash
# On a GPU machine, in one call of about 7 minutes (DEADLINE_S=450 leaves the profiles room):
# everything the model's held-out evaluation needs (issue 14), for this GPU (tagged h200 or h100):
#   1. build convbench (carry .devpack: scripts/device-env.sh)
#   2. calibrate cudnn (passes, GEMMs, every cuDNN algorithm on the calibration grid) and the own
#      kernels' convolutions (the cudnn backend's fallback for padding cuDNN lacks), merged into
#      TAG-cal.json (scripts/model-device.sh does the parts)
#   3. random networks (tools/gen_random_net.py, seeds 1-3, four kinds) and the built-ins AlexNet
#      b128, VGG-16 b64, GoogLeNet b128, ResNet-50 b64: per-layer cuDNN profiles, every direction
#      (profile --direction all), and a whole training step (fullpass --update) of each; then each
#      step once more (fullpass2/, fp32: the run-to-run spread of a step)
#   4. convbench model-eval on them, leave one network out (conv layers; all layers)
# HOLD_AB (a list of networks, as below): those profiled again with --hold off (profiles-unheld/).
# CACHE_AB=1: the passes, GEMMs and convolutions calibrated a second time back to back (calibrate
# --cache hot, the timing before stop 44, 2026-11-28) into TAG-cal-hot.json, both evaluated on this
# call's profiles (the own fallback's convolutions are the same in both).
# PRECS="fp32 tf32" also calibrates and profiles TF32 (about 3 minutes more; default fp32); bf16 runs on
# NHWC storage (calibrate and the profiles).
# Steps that would start after DEADLINE_S (default 400, counted from the start) are skipped. Results in $OUT (4 files):
# model-TAG.tgz (every JSON: calibration, profiles, fullpass, the networks), eval-TAG.txt,
# TAG-cal.json, log.txt.
#   OUT=/some/dir scripts/model-gpu.sh
# For a dry run without a GPU: CAL=FILE (skip the calibration, use FILE), PROFILE_BACKEND=cpu,
# MAX_GFLOP=0.5 (small random networks), BUILTINS="" (none), DEADLINE_S, GPU_TAG=h200 (the name).
set -u
OUT=${OUT:-model-out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
DEADLINE=${DEADLINE_S:-400}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
case "$gpu" in *H100*) TAG=h100 ;; *H200*) TAG=h200 ;; *) TAG=gpu ;; esac
TAG=${GPU_TAG:-$TAG}
RES=/tmp/cb-model-$TAG
rm -rf "$RES"
mkdir -p "$RES/nets" "$RES/profiles" "$RES/fullpass"
B=${B:-build-gpu}
CB=$B/convbench
t0=$SECONDS
stamp() { echo "== $(date -u +%T) (+$((SECONDS - t0)) s) $*"; }
late() { [ $((SECONDS - t0)) -ge "$DEADLINE" ] && { echo "model-gpu: skipping $1 (past ${DEADLINE} s)"; return 0; }; return 1; }
# (CB_COMMIT: the tree's commit where the device's copy of .git is older; the results name it)
echo "== model-gpu $TAG ($gpu) commit ${CB_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader

# the GPU's clocks and power every 250 ms, and when each part began (clocks.csv, phases.txt in the
# archive; a summary per part at the end): whether the calibration's short bursts and the profiles'
# long runs see the same SM clock (the 2026-11-28 calibration priced every family 10-20% short)
mark() { echo "$(date -u '+%Y/%m/%d %H:%M:%S.%3N') $1" >>"$RES/phases.txt"; }
clkpid=
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader,nounits -lms 250 \
        >"$RES/clocks.csv" 2>/dev/null &
    clkpid=$!
    trap 'kill "$clkpid" 2>/dev/null' EXIT
fi
mark build
stamp "build"
. scripts/device-env.sh
make -j16 BUILD=$B ${CB_COMMIT:+COMMIT=$CB_COMMIT} "$CB" >"$RES/build.log" 2>&1 || { echo "build failed:"; tail -30 "$RES/build.log"; exit 1; }

if [ -n "${CAL:-}" ]; then
    cp "$CAL" "$RES/$TAG-cal.json"
else
    mark calibrate
    stamp "calibrate cudnn"
    # every call is timed as a pass sees it (calls queued behind one more): about 3x the calls of
    # the idle timing before 2026-11-25; 84 convolution shapes and 28 tensors of pooling
    # CAL_SEEDS (e.g. 101-102): random networks of those seeds, never the evaluated seeds 1-3, give
    # calibration shapes too (calibrate --shapes-from): realistic neighbours for the local form
    calnets=
    if [ -n "${CAL_SEEDS:-}" ]; then
        python3 tools/gen_random_net.py --suite "$RES/calnets" --seeds "$CAL_SEEDS" --max-gflop "${MAX_GFLOP:-400}" >/dev/null &&
            calnets=$(ls "$RES"/calnets/*.json)
    fi
    TAG=$TAG SKIP_PROFILES=1 CAL_NETS="$calnets" CAL_PRECISION=$(echo ${PRECS:-fp32} | tr ' ' ,) bash scripts/model-device.sh "$CB" "$RES" ${CAL_S:-170} cudnn
    stamp "calibrate cuda (own convolutions: the fallback)"
    # the strided and large-filter shapes first: the fallback runs TF SAME's strided layers
    TAG=$TAG CAL_SECTIONS=conv CAL_GROUPS="36 30 24 0 12" PART_S=60 bash scripts/model-device.sh "$CB" "$RES" 60 cuda
    # cudnn's parts first: the first file names the calibration's device and backend (a single ls
    # would sort cuda_ before cudnn_ and make it a calibration of the own kernels)
    parts=$({ ls "$RES"/calparts/cudnn_*.json; ls "$RES"/calparts/cuda_*.json; } 2>/dev/null | paste -sd, -)
    "$CB" calibrate --refit "$parts" --save "$RES/$TAG-cal.json" --format json --output "$RES/calibrate_merged.json" --quiet ||
        echo "model-gpu: merged refit failed"
    if [ -n "${CACHE_AB:-}" ]; then
        stamp "calibrate cudnn again, back to back (--cache hot)"
        TAG=$TAG SKIP_PROFILES=1 CAL_ARGS="--cache hot" CAL_PRECISION=$(echo ${PRECS:-fp32} | tr ' ' ,) \
            bash scripts/model-device.sh "$CB" "$RES/hot" ${CAL_S:-170} cudnn
        parts=$({ ls "$RES"/hot/calparts/cudnn_*.json; ls "$RES"/calparts/cuda_*.json; } 2>/dev/null | paste -sd, -)
        "$CB" calibrate --refit "$parts" --save "$RES/$TAG-cal-hot.json" --format json --output /dev/null --quiet ||
            echo "model-gpu: the hot refit failed"
        cp "$RES/$TAG-cal-hot.json" "$OUT/" 2>/dev/null
    fi
fi
cp "$RES/$TAG-cal.json" "$OUT/" 2>/dev/null
BE=${PROFILE_BACKEND:-cudnn}

mark profiles
stamp "networks"
python3 tools/gen_random_net.py --suite "$RES/nets" --seeds 1-3 --max-gflop "${MAX_GFLOP:-400}" >/dev/null || echo "model-gpu: gen_random_net failed"
# seed 1, the built-ins, then seeds 2 and 3: what comes first survives the deadline
list=$(ls "$RES"/nets/gen-*-s1.json)
list="$list ${BUILTINS-alexnet:128 vgg16:64 googlenet:128 resnet50:64} $(ls "$RES"/nets/gen-*-s[23].json)"
for item in $list; do
    late "profile $item" && continue
    case $item in
    *.json) net=$item batch="" tag=$(basename "$item" .json) ;;
    *) net=${item%:*} batch="--batch ${item#*:}" tag=${item%:*} ;;
    esac
    s=$SECONDS
    for prec in ${PRECS:-fp32}; do
        o=$tag-$prec
        lay=$([ $prec = bf16 ] && echo "--layout nhwc") # (bf16 as the suite runs it, and as calibrate measures it)
        timeout 45 "$CB" profile "$net" $batch --backend "$BE" --precision $prec $lay --direction all --warmup 2 --iters 5 \
            --format json --quiet --output "$RES/profiles/$o.json" 2>"$RES/profiles/$o.log" ||
            echo "model-gpu: profile $o failed: $(tail -1 "$RES/profiles/$o.log")"
        # (60 s: VGG-16 b64 bf16's plan, its graph races included, and 7 steps took more than 30)
        timeout 60 "$CB" fullpass "$net" $batch --backend "$BE" --precision $prec $lay --update --no-data-grad --warmup 2 --iters 5 \
            --format json --quiet --output "$RES/fullpass/$o.json" 2>"$RES/fullpass/$o.log"
        rc=$?
        [ $rc = 124 ] && echo "model-gpu: fullpass $o stopped after 60 s (timeout)"
        [ $rc != 0 ] && [ $rc != 124 ] && echo "model-gpu: fullpass $o failed (exit $rc): $(tail -1 "$RES/fullpass/$o.log")"
    done
    echo "model-gpu: $tag $((SECONDS - s)) s"
done

# HOLD_AB="resnet50:64 gen-resnet-s1 ...": those networks profiled again with --hold off (profiles-unheld/):
# the rows with the host's launch gaps, as every profile before 2026-11-30 measured them
for item in ${HOLD_AB:-}; do
    late "profile --hold off $item" && continue
    case $item in
    *:*) net=${item%:*} batch="--batch ${item#*:}" tag=${item%:*} ;;
    *) net=$RES/nets/$item.json batch="" tag=$item ;;
    esac
    mkdir -p "$RES/profiles-unheld"
    for prec in ${PRECS:-fp32}; do
        lay=$([ $prec = bf16 ] && echo "--layout nhwc")
        timeout 45 "$CB" profile "$net" $batch --backend "$BE" --precision $prec $lay --direction all --warmup 2 --iters 5 --hold off \
            --format json --quiet --output "$RES/profiles-unheld/$tag-$prec.json" 2>/dev/null || echo "model-gpu: profile --hold off $tag failed"
    done
done

# the steps once more, each network right after the other (fullpass2/): how far a step moves between two
# measurements of one machine, the floor under the step error (batch 1-4 steps moved 13-49% between runs)
for item in $list; do
    late "fullpass again $item" && continue
    case $item in
    *.json) net=$item batch="" tag=$(basename "$item" .json) ;;
    *) net=${item%:*} batch="--batch ${item#*:}" tag=${item%:*} ;;
    esac
    mkdir -p "$RES/fullpass2"
    timeout 30 "$CB" fullpass "$net" $batch --backend "$BE" --precision fp32 --update --no-data-grad --warmup 2 --iters 5 \
        --format json --quiet --output "$RES/fullpass2/$tag-fp32.json" 2>/dev/null || echo "model-gpu: fullpass again $tag failed"
done

mark model-eval
stamp "model-eval"
[ -n "$clkpid" ] && kill "$clkpid" 2>/dev/null
[ -s "$RES/clocks.csv" ] && { python3 scripts/clock-summary.py "$RES/clocks.csv" "$RES/phases.txt" || echo "model-gpu: no clock summary"; }
nets=$(ls "$RES"/nets/*.json | paste -sd, -)
if [ -s "$RES/$TAG-cal-hot.json" ]; then
    for prec in ${PRECS:-fp32}; do
        for k in conv all; do
            echo "### model-eval --precision $prec --kinds $k ($TAG calibration back to back, --cache hot; $TAG profiles)"
            "$CB" model-eval --device "$RES/$TAG-cal-hot.json" --nets "$nets" --precision $prec --kinds $k --quiet \
                "$RES"/profiles/*.json "$RES"/fullpass/*.json | grep -E "^(all|fwd|bwd_data|bwd_filter) |note: whole"
        done
    done >"$OUT/eval-$TAG-hot.txt" 2>&1
fi
for prec in ${PRECS:-fp32}; do
    for k in conv all; do
        echo "### model-eval --precision $prec --kinds $k ($TAG calibration, $TAG profiles)"
        "$CB" model-eval --device "$RES/$TAG-cal.json" --nets "$nets" --precision $prec --kinds $k \
            "$RES"/profiles/*.json "$RES"/fullpass/*.json
        "$CB" model-eval --device "$RES/$TAG-cal.json" --nets "$nets" --precision $prec --kinds $k --rows --format json --quiet \
            --output "$RES/eval_${prec}_$k.json" --plot "$RES/eval_${prec}_$k.svg" "$RES"/profiles/*.json "$RES"/fullpass/*.json
    done
done >"$OUT/eval-$TAG.txt" 2>&1
tail -25 "$OUT/eval-$TAG.txt"
tar -czf "$OUT/model-$TAG.tgz" -C "$(dirname "$RES")" "$(basename "$RES")"
stamp "done"
