#!/usr/bin/env bash
# The held-out bf16 figures of ../2026-11-27-h200-late.md (call 2), from the files here, no GPU: the
# calibration as measured (the legacy NHWC batch norm's entries included), and the same with those
# samples removed (the model then prices that batch norm as the Ex API's).
#   docs/results/2026-11-27-h200-late/model/eval.sh      (from the repository root; CB=build/convbench)
set -u
D=$(dirname "$0"); CB=${CB:-build/convbench}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
/usr/bin/python3 - "$D/h200-cal.json" "$T/without.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d['samples'] = [s for s in d['samples'] if s['name'] not in ('bn_fwd_train_odd', 'bn_bwd_odd')]
for k in ('bn_fwd_train_odd', 'bn_bwd_odd'): d.get('calibration', {}).get('ops_bf16', {}).pop(k, None)
json.dump(d, open(sys.argv[2], 'w'))
PY
# the random networks, made again from their seeds (the run's, byte for byte; not kept here)
python3 tools/gen_random_net.py --suite "$T/nets" --seeds 1-3 --max-gflop 400 >/dev/null || { echo "eval.sh: gen_random_net failed" >&2; exit 2; }
nets=$(ls "$T"/nets/*.json | paste -sd, -)
for cal in "$D/h200-cal.json" "$T/without.json"; do
    for k in conv all; do
        echo "== bf16, --kinds $k, $( [ "$cal" = "$D/h200-cal.json" ] && echo 'as calibrated' || echo 'without the legacy batch norm entries')"
        "$CB" model-eval --device "$cal" --nets "$nets" --precision bf16 --kinds $k --quiet "$D"/profiles/*-bf16.json "$D"/fullpass/*-bf16.json |
            grep -E '^(fwd|bwd_data|bwd_filter|all) |note: whole'
    done
done
