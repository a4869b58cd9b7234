#!/usr/bin/env bash
# The narrow class's effect (the model's entries of their own for convolutions of at most 8 input
# channels, cb_conv_narrow) on every stored evaluation set, without a GPU: the held-out evaluation
# (all layers; median / p90 of the rows, then of the steps) by a convbench built without it
# (CB_OLD: commit 61ef2b3) and with it (CB: commit 6eda701; reverted in the next, b0b68c3).
#   CB_OLD=/path/61ef2b3/convbench CB=/path/6eda701/convbench docs/results/2026-11-27-h200-stepcheck/narrow-eval.sh
#   (from the repository root)
set -u
CB=${CB:-$PWD/build/convbench}; T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
python3 tools/gen_random_net.py --suite "$T/nets" --seeds 1-3 --max-gflop 400 >/dev/null || exit 2
nets=$(ls "$T"/nets/*.json | paste -sd, -)
cd docs/results
H1=2026-11-27-h100-model H2=2026-11-27-h200-cpad/call6_model_23434ad H3=2026-11-27-h200-late/model H4=2026-11-27-h200-stepcheck/model
row() { "$BIN" model-eval "$@" --nets "$nets" --kinds all --quiet | grep -E '^all  |note: whole' | tr -s ' ' |
        sed -E 's/^all [0-9,]+ ([0-9.]+) ([0-9.]+).*/rows \1 \/ \2/; s/.*held-out median error ([0-9.]+)%, p90 ([0-9.]+)%.*/steps \1 \/ \2/' | paste -sd' '; }
for BIN in "$CB_OLD" "$CB"; do
    echo "== $( [ "$BIN" = "$CB_OLD" ] && echo 'without the narrow class' || echo 'with the narrow class')"
    for P in tf32 bf16; do
        echo "$P H100, H100: $(row --device $H1/h100-cal.json --precision $P $H1/profiles/*-$P.json $H1/fullpass/*-$P.json)"
        echo "$P H200 -> H100: $(row --device h100 --calibration $H2/h200-cal.json --precision $P $H1/profiles/*-$P.json $H1/fullpass/*-$P.json)"
        echo "$P H100 -> H200: $(row --device h200 --calibration $H1/h100-cal.json --precision $P $H2/profiles/*-$P.json $H2/fullpass/*-$P.json)"
        echo "$P H200, H200 (23434ad): $(row --device $H2/h200-cal.json --precision $P $H2/profiles/*-$P.json $H2/fullpass/*-$P.json)"
    done
    echo "bf16 H200, H200 (2026-11-27 late, unpadded grid): $(row --device $H3/h200-cal.json --precision bf16 $H3/profiles/*-bf16.json $H3/fullpass/*-bf16.json)"
    echo "bf16 H200, H200 (this stop, call 4, padded grid): $(row --device $H4/h200-cal.json --precision bf16 $H4/profiles/*-bf16.json $H4/fullpass/*-bf16.json)"
done
