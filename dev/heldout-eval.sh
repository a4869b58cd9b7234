#!/usr/bin/env bash
# The held-out figures of a stored model run (docs/results/*/: h200-cal.json or .json.gz, profiles/, fullpass/),
# no GPU: the calibration as measured, then the same with some of its samples removed, each with
# --kinds conv and all. The random networks are made again from their seeds (the runs', byte for byte).
#   bash dev/heldout-eval.sh DIR PRECISION LABEL DROP [OP...]      (from the repository root; CB=build/convbench)
# DROP: a Python expression over a sample s (a dict of the saved "samples") that is true for those
# removed; OP: the fitted pass entries removed from the calibration's ops_bf16 with them ('*': all).
set -u
[ $# -ge 4 ] || { echo "usage: dev/heldout-eval.sh DIR PRECISION LABEL DROP [OP...]" >&2; exit 2; }
D=$1 P=$2 LABEL=$3 DROP=$4; shift 4
CB=${CB:-build/convbench}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
CAL=$D/h200-cal.json; [ -f "$CAL" ] || CAL=$D/h200-cal.json.gz # (the stored ones are gzipped)
/usr/bin/python3 - "$CAL" "$T/without.json" "$DROP" "$@" <<'PY' || { echo "heldout-eval: the reduced calibration failed" >&2; exit 2; }
import gzip, json, sys
d = json.load((gzip.open if sys.argv[1].endswith('.gz') else open)(sys.argv[1], 'rt'))
d['samples'] = [s for s in d['samples'] if not eval(sys.argv[3], {}, {'s': s})]
ops = d.get('calibration', {}).get('ops_bf16', {})
for k in sys.argv[4:]:
    if k == '*': ops.clear()
    else: ops.pop(k, None)
json.dump(d, open(sys.argv[2], 'w'))
PY
python3 tools/gen_random_net.py --suite "$T/nets" --seeds 1-3 --max-gflop 400 >/dev/null || { echo "heldout-eval: gen_random_net failed" >&2; exit 2; }
nets=$(ls "$T"/nets/*.json | paste -sd, -)
for cal in "$CAL" "$T/without.json"; do
    for k in conv all; do
        echo "== $P, --kinds $k, $( [ "$cal" = "$CAL" ] && echo 'as calibrated' || echo "$LABEL")"
        "$CB" model-eval --device "$cal" --nets "$nets" --precision "$P" --kinds $k --quiet "$D"/profiles/*-"$P".json "$D"/fullpass/*-"$P".json |
            grep -E '^(fwd|bwd_data|bwd_filter|all) |note: whole'
    done
done
