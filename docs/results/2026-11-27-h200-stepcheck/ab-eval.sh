#!/usr/bin/env bash
# Two convbench builds' held-out evaluation over every stored set, no GPU: all layers (rows median /
# p90), then the steps. The model's forward epilogue fix was measured with the build before it
# (commit b0c48d4) against the build with it (this stop's commit after, see the results file):
#   bash docs/results/2026-11-27-h200-stepcheck/ab-eval.sh /path/before/convbench /path/after/convbench
# (from the repository root; EXTRA_SETS="DIR ..." adds later bf16 H200 sets)
set -u
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
python3 tools/gen_random_net.py --suite "$T/nets" --seeds 1-3 --max-gflop 400 >/dev/null || exit 2
nets=$(ls "$T"/nets/*.json | paste -sd, -)
cd docs/results
H1=2026-11-27-h100-model H2=2026-11-27-h200-cpad/call6_model_23434ad H3=2026-11-27-h200-late/model H4=2026-11-27-h200-stepcheck/model
row() { "$BIN" model-eval "$@" --nets "$nets" --kinds ${KINDS:-all} --quiet | grep -E '^all  |note: whole' | tr -s ' ' |
        sed -E 's/^all [0-9,]+ ([0-9.]+) ([0-9.]+).*/rows \1 \/ \2/; s/.*held-out median error ([0-9.]+)%, p90 ([0-9.]+)%.*/steps \1 \/ \2/' | paste -sd' '; }
for BIN in "$@"; do
    echo "== $BIN"
    for P in tf32 bf16; do
        echo "$P H100, H100: $(row --device $H1/h100-cal.json.gz --precision $P $H1/profiles/*-$P.json $H1/fullpass/*-$P.json)"
        echo "$P H200 -> H100: $(row --device h100 --calibration $H2/h200-cal.json.gz --precision $P $H1/profiles/*-$P.json $H1/fullpass/*-$P.json)"
        echo "$P H100 -> H200: $(row --device h200 --calibration $H1/h100-cal.json.gz --precision $P $H2/profiles/*-$P.json $H2/fullpass/*-$P.json)"
        echo "$P H200, H200 (23434ad): $(row --device $H2/h200-cal.json.gz --precision $P $H2/profiles/*-$P.json $H2/fullpass/*-$P.json)"
    done
    echo "bf16 H200 (late): $(row --device $H3/h200-cal.json.gz --precision bf16 $H3/profiles/*-bf16.json $H3/fullpass/*-bf16.json)"
    echo "bf16 H200 (stepcheck): $(row --device $H4/h200-cal.json.gz --precision bf16 $H4/profiles/*-bf16.json $H4/fullpass/*-bf16.json)"
    for H in ${EXTRA_SETS:-}; do # later bf16 H200 sets (folders under docs/results), as ../2026-11-28-h200-local/ab-eval.sh names them
        echo "bf16 H200 ($H): $(row --device $H/h200-cal.json.gz --precision bf16 $H/profiles/*-bf16.json $H/fullpass/*-bf16.json)"
    done
done
