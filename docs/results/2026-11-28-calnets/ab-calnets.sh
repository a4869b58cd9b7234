#!/usr/bin/env bash
# The calibration with other networks' convolutions (calibrate --shapes-from, random networks of seeds
# 101-102, 131 shapes) against the same session's calibration without them (its grid parts alone,
# refit: model/h200-cal-grid-only.json.gz), held out over this set and the four earlier bf16 H200 sets;
# per set: conv rows, all rows (median / p90 %), steps (median / p90 %). No GPU:
#   bash docs/results/2026-11-28-calnets/ab-calnets.sh [CONVBENCH]     (from the repository root)
set -u
CB=${1:-build/convbench}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
python3 tools/gen_random_net.py --suite "$T/nets" --seeds 1-3 --max-gflop 400 >/dev/null || exit 2
nets=$(ls "$T"/nets/*.json | paste -sd, -)
cd docs/results
N=2026-11-28-calnets/model
row() { "$OLDPWD/$CB" model-eval "$@" --nets "$nets" --precision bf16 --kinds ${KINDS:-all} --quiet | grep -E '^all  |note: whole' | tr -s ' ' |
        sed -E 's/^all [0-9,]+ ([0-9.]+) ([0-9.]+).*/\1 \/ \2/; s/.*held-out median error ([0-9.]+)%, p90 ([0-9.]+)%.*/\1 \/ \2/' | paste -sd'|'; }
echo "| set | conv rows, grid only | conv rows, + nets | all rows, grid only | all rows, + nets | steps, grid only | steps, + nets |"
echo "|---|---|---|---|---|---|---|"
for S in $N 2026-11-28-h200-local/model 2026-11-28-workspace/model 2026-11-27-h200-stepcheck/model 2026-11-27-h200-late/model; do
    f="$S/profiles/*-bf16.json $S/fullpass/*-bf16.json"
    a=$(row --device $N/h200-cal-grid-only.json.gz $f) b=$(row --device $N/h200-cal.json.gz $f)
    ac=$(KINDS=conv row --device $N/h200-cal-grid-only.json.gz $f | cut -d'|' -f1) bc=$(KINDS=conv row --device $N/h200-cal.json.gz $f | cut -d'|' -f1)
    echo "| $S | $ac | $bc | ${a%%|*} | ${b%%|*} | ${a##*|} | ${b##*|} |"
done
