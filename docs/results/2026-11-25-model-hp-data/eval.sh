#!/usr/bin/env bash
# Every held-out figure of docs/results/2026-11-25-model-hp.md, from the JSON kept here and in
# ../2026-11-25-model-data/rerun (no GPU needed). Run from the repository root:
#   docs/results/2026-11-25-model-hp-data/eval.sh OUTDIR        # CB=path/to/convbench (default build/convbench)
# then python3 docs/results/2026-11-25-model-hp-data/tables.py OUTDIR
# Writes OUTDIR/NAME-{conv,all}.{txt,json} (model-eval's text, and --rows JSON) for each NAME below.
set -u
O=${1:?usage: eval.sh OUTDIR}
CB=${CB:-build/convbench}
H=docs/results/2026-11-25-model-hp-data R=docs/results/2026-11-25-model-data/rerun
mkdir -p "$O"
nets_dir=$(mktemp -d)
trap 'rm -rf "$nets_dir"' EXIT
python3 tools/gen_random_net.py --suite "$nets_dir" --seeds 1-3 --max-gflop 400 >/dev/null || { echo "eval.sh: gen_random_net failed" >&2; exit 2; }
nets=$(ls "$nets_dir"/*.json | paste -sd, -)
one() { # NAME PROFILE-DIR DEVICE-ARGS...
    local name=$1 dir=$2; shift 2
    for k in conv all; do
        "$CB" model-eval "$@" --nets "$nets" --kinds $k --precision fp32 "$dir"/profiles/*fp32.json "$dir"/fullpass/*fp32.json >"$O/$name-$k.txt" 2>&1
        "$CB" model-eval "$@" --nets "$nets" --kinds $k --precision fp32 --rows --format json --quiet --output "$O/$name-$k.json" \
            "$dir"/profiles/*fp32.json "$dir"/fullpass/*fp32.json 2>/dev/null
    done
}
# run 2 (08:30 UTC, the final calibration grid): its own profiles, the other runs' H200 profiles, the H100's
one run2-on-run2 $H/run2 --device $H/run2/h200-cal.json.gz &
one run2-on-run1 $H/run1 --device $H/run2/h200-cal.json.gz &
one run2-on-rerun $R/h200 --device $H/run2/h200-cal.json.gz &
one run2-to-h100 $R/h100 --device h100 --calibration $H/run2/h200-cal.json.gz &
wait
# the H100's calibration of 06:06 (the grid before this branch) on run 2's H200 profiles, and on its own
one h100-to-run2 $H/run2 --device h200 --calibration $R/h100-cal.json.gz &
one h100-on-h100 $R/h100 --device $R/h100-cal.json.gz &
# run 1 (08:18, the grid without the unaligned shapes) on its own profiles
one run1-on-run1 $H/run1 --device $H/run1/h200-cal.json.gz &
# the 06:03 calibration on its profiles and on run 2's (this branch's model, the old grid)
one rerun-on-rerun $R/h200 --device $R/h200-cal.json.gz &
one rerun-on-run2 $H/run2 --device $R/h200-cal.json.gz &
one rerun-to-h100 $R/h100 --device h100 --calibration $R/h200-cal.json.gz &
wait
