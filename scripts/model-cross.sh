#!/usr/bin/env bash
# Offline, after scripts/model-gpu.sh ran on an H200 and on an H100 (issue 14): the held-out
# per-layer and per-step errors on each GPU from its own calibration, and across GPUs (the H200's
# calibration carried onto the H100's datasheet figures, and the reverse). No GPU needed.
#   scripts/model-cross.sh model-h200.tgz model-h100.tgz [OUTDIR]    # CB=path/to/convbench
# Writes OUTDIR/cross-<cal>-on-<gpu>-<kinds>.{txt,json,svg} and prints the pooled tables.
set -u
A=${1:?usage: scripts/model-cross.sh model-h200.tgz model-h100.tgz [OUTDIR]} B=${2:?usage: scripts/model-cross.sh model-h200.tgz model-h100.tgz [OUTDIR]}
OUTD=${3:-model-cross}
CB=${CB:-build/convbench}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$OUTD"
for t in "$A" "$B"; do tar -xzf "$t" -C "$work" || { echo "model-cross: cannot unpack '$t'" >&2; exit 2; }; done
h200=$work/cb-model-h200 h100=$work/cb-model-h100
for d in "$h200" "$h100"; do [ -f "$d/$(basename "$d" | sed 's/cb-model-//')-cal.json" ] || { echo "model-cross: no calibration in $d" >&2; exit 2; }; done
# the random networks are the same files on both (a fixed seed); the built-ins need none
nets=$(ls "$h200"/nets/*.json | paste -sd, -)
run() { # NAME DEVICE-ARGS... -- PROFILE-DIR
    local name=$1; shift
    local args=()
    while [ "$1" != -- ]; do args+=("$1"); shift; done
    local dir=$2
    for k in conv all; do
        "$CB" model-eval "${args[@]}" --nets "$nets" --kinds $k --precision fp32 "$dir"/profiles/*fp32.json "$dir"/fullpass/*fp32.json \
            >"$OUTD/$name-$k.txt" 2>&1 || echo "model-cross: $name $k failed: $(tail -1 "$OUTD/$name-$k.txt")"
        "$CB" model-eval "${args[@]}" --nets "$nets" --kinds $k --precision fp32 --rows --format json --quiet --output "$OUTD/$name-$k.json" \
            --plot "$OUTD/$name-$k.svg" "$dir"/profiles/*fp32.json "$dir"/fullpass/*fp32.json 2>/dev/null
        echo "### $name, $k"
        sed -n '/^pooled/,/^$/p' "$OUTD/$name-$k.txt"
        grep 'whole steps' "$OUTD/$name-$k.txt"
    done
}
run cross-h200-on-h200 --device "$h200/h200-cal.json" -- "$h200"
run cross-h100-on-h100 --device "$h100/h100-cal.json" -- "$h100"
run cross-h200-on-h100 --device h100 --calibration "$h200/h200-cal.json" -- "$h100"
run cross-h100-on-h200 --device h200 --calibration "$h100/h100-cal.json" -- "$h200"
