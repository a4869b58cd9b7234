#!/usr/bin/env bash
# Four H200 calibrations of this session (bf16 NHWC, cuDNN), held out (leave one network out) on
# six sets of bf16 H200 profiles and steps: call 2's own and five earlier ones (other days and machines).
#   hot        call 2, calibrate --cache hot: every call timed back to back (the timing before)
#   flushed    call 2, the convolutions and GEMMs after a flush alone (the first version of --cache step)
#   step-conv  call 3, the convolutions and GEMMs the larger of the two medians, the passes back to back
#   step       call 4, calibrate --cache step as committed: the passes too
# Per set and calibration: conv rows, all rows (median p90 %), steps (median p90 %). No GPU (about 2 minutes;
# CALS="hot step" for two):
#   bash docs/results/2026-11-28-cache/ab-cache.sh [CONVBENCH]     (from the repository root)
set -u
CB=$(readlink -f "${1:-build/convbench}")
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
python3 tools/gen_random_net.py --suite "$T/nets" --seeds 1-3 --max-gflop 400 >/dev/null || exit 2
nets=$(ls "$T"/nets/*.json | paste -sd, -)
D=docs/results/2026-11-28-cache
gunzip -c $D/call2/h200-cal-hot.json.gz >"$T/hot.json"
gunzip -c $D/call2/h200-cal-flushed.json.gz >"$T/flushed.json"
gunzip -c $D/call3/h200-cal.json.gz >"$T/step-conv.json"
gunzip -c $D/call4/h200-cal.json.gz >"$T/step.json"
ev() { # CAL SET KINDS -> "median p90" of the rows (all: and of the steps)
    "$CB" model-eval --device "$1" --nets "$nets" --precision bf16 --kinds "$3" --quiet "$2"/profiles/*-bf16.json "$2"/fullpass/*-bf16.json |
        grep -E '^all  |note: whole' | tr -s ' ' | sed -E 's/^all [0-9,]+ ([0-9.]+) ([0-9.]+).*/\1 \/ \2/; s/.*held-out median error ([0-9.]+)%, p90 ([0-9.]+)%.*/\1 \/ \2/' | paste -sd'|'
}
echo "| profiles | calibration | conv rows | all rows | steps |"
echo "|---|---|---|---|---|"
for S in $D/call2 docs/results/2026-11-28-calnets/model docs/results/2026-11-28-h200-local/model docs/results/2026-11-28-workspace/model \
         docs/results/2026-11-27-h200-stepcheck/model docs/results/2026-11-27-h200-late/model; do
    for C in ${CALS:-hot flushed step-conv step}; do
        c=$(ev "$T/$C.json" "$S" conv | cut -d'|' -f1) a=$(ev "$T/$C.json" "$S" all)
        echo "| $S | $C | $c | ${a%%|*} | ${a##*|} |"
    done
done
