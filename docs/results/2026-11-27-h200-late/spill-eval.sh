#!/usr/bin/env bash
# The spill term's effect (6b59e55) on every stored evaluation set, without a GPU: each held-out
# evaluation with the device database as it is (l2_bytes: the spill term fitted) and with l2_bytes
# removed (no spill term, the model before). All layers; median / p90 of the rows, then the steps.
#   docs/results/2026-11-27-h200-late/spill-eval.sh      (from the repository root; CB=build/convbench)
set -u
CB=${CB:-$PWD/build/convbench}; T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sed 's/, "l2_bytes": [0-9]*//' data/devices.json > "$T/nol2.json"
python3 tools/gen_random_net.py --suite "$T/nets" --seeds 1-3 --max-gflop 400 >/dev/null || exit 2
nets=$(ls "$T"/nets/*.json | paste -sd, -)
cd docs/results
H1=2026-11-27-h100-model H2=2026-11-27-h200-cpad/call6_model_23434ad H3=2026-11-27-h200-late/model
row() { "$CB" model-eval --devices "$1" "${@:2}" --nets "$nets" --kinds all --quiet | grep -E '^all  |note: whole' | tr -s ' ' |
        sed -E 's/^all [0-9,]+ ([0-9.]+) ([0-9.]+).*/rows \1 \/ \2/; s/.*held-out median error ([0-9.]+)%, p90 ([0-9.]+)%.*/steps \1 \/ \2/' | paste -sd' '; }
for db in "$T/nol2.json" ../../data/devices.json; do
    echo "== $( [ "$db" = "$T/nol2.json" ] && echo 'without l2_bytes (no spill term)' || echo 'with l2_bytes (the spill term)')"
    for P in tf32 bf16; do
        echo "$P H100, H100: $(row $db --device $H1/h100-cal.json.gz --precision $P $H1/profiles/*-$P.json $H1/fullpass/*-$P.json)"
        echo "$P H200 -> H100: $(row $db --device h100 --calibration $H2/h200-cal.json.gz --precision $P $H1/profiles/*-$P.json $H1/fullpass/*-$P.json)"
        echo "$P H100 -> H200: $(row $db --device h200 --calibration $H1/h100-cal.json.gz --precision $P $H2/profiles/*-$P.json $H2/fullpass/*-$P.json)"
        echo "$P H200, H200 (23434ad): $(row $db --device $H2/h200-cal.json.gz --precision $P $H2/profiles/*-$P.json $H2/fullpass/*-$P.json)"
    done
    echo "bf16 H200, H200 (this stop, call 2): $(row $db --device $H3/h200-cal.json.gz --precision bf16 $H3/profiles/*-bf16.json $H3/fullpass/*-bf16.json)"
done
