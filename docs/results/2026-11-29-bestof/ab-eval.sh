#!/usr/bin/env bash
# Two convbench builds' held-out evaluation (no GPU): every stored set of
# ../2026-11-28-h200-local/ab-eval.sh, then this session's fresh bf16 H200 set (call2/model,
# measured at 22c3aa9, after the "cuDNN's fastest" form was built on the older sets). A build before
# 22c3aa9 cannot read a calibration that holds the FWD_BEST ... entries, so the fresh set's
# calibration is read without them (every build refits the entries from the samples anyway):
#   bash docs/results/2026-11-29-bestof/ab-eval.sh /path/before/convbench /path/after/convbench
# (from the repository root; KINDS=conv for the convolutions alone)
set -u
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
H=docs/results/2026-11-29-bestof/call2/model
python3 -c "
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
d['calibration']['algos'] = [a for a in d['calibration']['algos'] if not a['name'].endswith('_BEST')]
json.dump(d, open(sys.argv[2], 'w'))" "$H/h200-cal.json.gz" "$T/cal.json" || exit 2
python3 tools/gen_random_net.py --suite "$T/nets" --seeds 1-3 --max-gflop 400 >/dev/null || exit 2
nets=$(ls "$T"/nets/*.json | paste -sd, -)
bash docs/results/2026-11-28-h200-local/ab-eval.sh "$@"
for BIN in "$@"; do
    echo "== $BIN: bf16 H200 (2026-11-29-bestof, fresh)"
    "$BIN" model-eval --device "$T/cal.json" --precision bf16 "$H"/profiles/*-bf16.json.gz "$H"/fullpass/*-bf16.json.gz --nets "$nets" \
        --kinds ${KINDS:-all} --quiet | grep -E '^all  |note: whole' | tr -s ' ' |
        sed -E 's/^all [0-9,]+ ([0-9.]+) ([0-9.]+).*/rows \1 \/ \2/; s/.*held-out median error ([0-9.]+)%, p90 ([0-9.]+)%.*/steps \1 \/ \2/' | paste -sd' '
done
