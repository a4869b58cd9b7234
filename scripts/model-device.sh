#!/usr/bin/env bash
# On the GPU machine: the model's inputs for issue 4. Calibrates a GPU backend and profiles
# AlexNet (b128), VGG-16 (b64), GoogLeNet (b128) and ResNet-50 (b64) forward, backward-data and
# backward-filter with cuDNN, writing JSON with fixed names into RES:
#   h200-calibrated.json (device entry with its samples), calibrate_cudnn.json (its report),
#   model_<net>_{fwd,bwd_data,bwd_filter}.json (profiles), calparts/ (each calibration part)
# Then scripts/model-check.sh RES compares the model with the profiles (no GPU needed).
#   scripts/model-device.sh CONVBENCH RES [DEADLINE_S] [BACKEND]   # SKIP_PROFILES=1: calibration only
# TAG names the entry (default h200: RES/TAG-calibrated[-BACKEND].json); CAL_SECTIONS the parts
# measured (default "mops gemm conv"); PART_S each part's time limit (default 100 s); CAL_PRECISION
# the convolution precisions (default fp32; fp32,tf32 takes about twice as long); CAL_ARGS more
# calibrate arguments for every part (e.g. --cache hot); CAL_GROUPS the
# groups of six shapes, by first index, in the order measured; CAL_NETS (below) other networks' shapes (default "0 6 12 18 24 30 36 42 48 54 60 66 72 78";
# 36 and 42: the small, latency-bound shapes; 48: grouped (depthwise) convolutions; 54 and 60: long
# reductions (first layers, large planes) and large depthwise; 66 to 78: channels not multiples of 4).
# The calibration runs in parts (passes, GEMMs, groups of six convolution shapes), each its own
# process, merged with calibrate --refit: a part that fails is retried shape by shape and the
# rest still counts. Steps that would start after DEADLINE_S (default 170) are skipped.
set -u
CB=$1 RES=$2 DEADLINE=${3:-170} BE=${4:-cudnn} TAG=${TAG:-h200} SECTIONS=${CAL_SECTIONS:-mops gemm conv}
P=$RES/calparts
mkdir -p "$RES" "$P"
start=$SECONDS
late() { [ $((SECONDS - start)) -ge "$DEADLINE" ] && { echo "model-device: skipping $1 (past ${DEADLINE}s)"; return 0; }; return 1; }
cal() { # TAG ARGS...: one part; on failure its last progress lines
    local tag=$1; shift
    timeout "${PART_S:-100}" "$CB" calibrate --backend "$BE" --save "$P/${BE}_$tag.json" --format json --output /dev/null --verbose ${CAL_ARGS:-} "$@" \
        2>"$P/${BE}_$tag.log"
    local rc=$?
    # (END_OK=1: exit 2, a start past the end of --shapes-from's list, is the list's end, not a failure)
    [ $rc -eq 0 ] || { [ "${END_OK:-}" = 1 ] && [ $rc -eq 2 ]; } || { echo "model-device: calibrate $BE $tag failed ($rc), last lines:"; tail -3 "$P/${BE}_$tag.log"; }
    return $rc
}
t0=$SECONDS
# (--precision: the engine's host time per call is measured on that storage, with the passes)
case " $SECTIONS " in *" mops "*) cal mops --sections mops --precision "${CAL_PRECISION:-fp32}" ;; esac
case " $SECTIONS " in *" gemm "*) cal gemm --sections gemm ;; esac
case " $SECTIONS " in *" conv "*) ;; *) false ;; esac &&
for lo in ${CAL_GROUPS:-0 6 12 18 24 30 36 42 48 54 60 66 72 78}; do
    late "calibration shapes $lo+" && break
    cal conv$lo --sections conv --shapes $lo-$((lo + 5)) --precision "${CAL_PRECISION:-fp32}" && continue
    for i in $(seq $lo $((lo + 5))); do
        late "calibration shape $i" && break
        cal conv${lo}_$i --sections conv --shapes $i --precision "${CAL_PRECISION:-fp32}"
    done
done
# CAL_NETS="F1 F2": also these networks' convolutions (calibrate --shapes-from; random networks of
# seeds the evaluation does not use), ten shapes a part, until calibrate says the list is done
for f in ${CAL_NETS:-}; do
    for lo in $(seq 0 10 500); do
        late "calibration shapes of $f" && break
        tag=net_$(basename "$f" .json)_$lo
        END_OK=1 cal "$tag" --sections conv --shapes-from "$f" --shapes $lo-$((lo + 9)) --precision "${CAL_PRECISION:-fp32}"
        [ $? -eq 2 ] && { rm -f "$P/${BE}_$tag.log"; break; } # past the last shape
    done
done
parts=$(ls "$P"/${BE}_*.json 2>/dev/null | paste -sd, -)
if [ -n "$parts" ]; then
    "$CB" calibrate --refit "$parts" --save "$RES/$TAG-calibrated$([ "$BE" = cudnn ] || echo "-$BE").json" --format json \
        --output "$RES/calibrate_$BE.json" --quiet || echo "model-device: refit failed"
fi
echo "model-device: calibrate $BE $((SECONDS - t0)) s ($(ls "$P"/${BE}_*.json 2>/dev/null | wc -l) parts)"
[ "$BE" = cudnn ] && [ -z "${SKIP_PROFILES:-}" ] || exit 0
for nb in alexnet:128 resnet50:64 googlenet:128 vgg16:64; do
    net=${nb%:*} b=${nb#*:}
    for d in fwd bwd_data bwd_filter; do
        late "$net $d" && continue
        case $d in
        fwd) args="--direction forward" ;;
        bwd_data) args="--direction backward --wrt data" ;;
        bwd_filter) args="--direction backward --wrt filter" ;;
        esac
        t0=$SECONDS
        timeout 60 "$CB" profile "$net" --batch "$b" --backend cudnn $args --warmup 2 --iters 5 --format json --quiet \
            --output "$RES/model_${net}_${d}.json" || echo "model-device: profile $net $d failed"
        echo "model-device: profile $net b$b $d $((SECONDS - t0)) s"
    done
done
