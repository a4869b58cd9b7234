#!/usr/bin/env bash
# Held out (leave one network out), bf16 H200 profiles and steps: this session's two sets (call 1,
# call 5) and six stored ones, under five calibrations:
#   stop44       2026-11-28-cache call 4 (the calibration of the stop before)
#   c1-grid      call 1's grid parts alone, refit (calibrate --refit of its calparts without net_*)
#   c1-nets      call 1 as run: the grid and eight random networks' convolutions (CAL_SEEDS=101-102)
#   c5           call 5: the grid, with the concatenation entries
#   c5-nocat     call 5 without its concatenation samples (the model then prices a concatenation as copies)
#   c5-pools     call 5 with call 6's four large pools of 72-144 channels (every pooling pass on them), refit
# Per set and calibration: conv rows, all rows, steps (median / p90 %). No GPU (about 4 minutes;
# CALS="c5 c5-nocat" for some):
#   bash docs/results/2026-11-28-hostcall/ab-hostcall.sh [CONVBENCH]     (from the repository root)
set -u
CB=$(readlink -f "${1:-build/convbench}")
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
python3 tools/gen_random_net.py --suite "$T/nets" --seeds 1-3 --max-gflop 400 >/dev/null || exit 2
nets=$(ls "$T"/nets/*.json | paste -sd, -)
D=docs/results/2026-11-28-hostcall
gunzip -c docs/results/2026-11-28-cache/call4/h200-cal.json.gz >"$T/stop44.json"
gunzip -c $D/call1/h200-cal-grid.json.gz >"$T/c1-grid.json"
gunzip -c $D/call1/h200-cal-nets.json.gz >"$T/c1-nets.json"
gunzip -c $D/call5/h200-cal.json.gz >"$T/c5.json"
python3 - "$T/c5.json" "$T/c5-nocat.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def strip(o):
    if isinstance(o, dict):
        for k, v in list(o.items()):
            if k == "samples" and isinstance(v, list): o[k] = [s for s in v if s.get("name") not in ("concat", "concat_narrow")]
            elif k in ("ops", "ops_bf16") and isinstance(v, dict): v.pop("concat", None); v.pop("concat_narrow", None)
            else: strip(v)
    elif isinstance(o, list):
        for v in o: strip(v)
strip(d); json.dump(d, open(sys.argv[2], "w"))
PY
gunzip -c $D/call6/mops.json.gz >"$T/call6.json"
python3 - "$T/c5.json" "$T/call6.json" "$T/c5-pools-in.json" <<'PY'
import json, sys
def holder(o): # the object holding the samples
    if isinstance(o, dict):
        if isinstance(o.get("samples"), list): return o
        for v in o.values():
            r = holder(v)
            if r is not None: return r
    elif isinstance(o, list):
        for v in o:
            r = holder(v)
            if r is not None: return r
base, new = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
tensors = {(32, 72, 200), (64, 96, 120), (16, 144, 150), (32, 128, 110)} # (calshapes.c's four added pools)
pools = ("pool_fwd", "pool_bwd", "avgpool_fwd", "avgpool_bwd", "own_pool_fwd", "own_pool_bwd")
holder(base)["samples"] += [s for s in holder(new)["samples"] if tuple(s["shape"][:3]) in tensors and s["name"] in pools]
json.dump(base, open(sys.argv[3], "w"))
PY
"$CB" calibrate --refit "$T/c5-pools-in.json" --save "$T/c5-pools.json" --format json --output /dev/null --quiet || exit 2
ev() { # CAL SET KINDS -> "median / p90" of the rows (all: and of the steps)
    "$CB" model-eval --device "$1" --nets "$nets" --precision bf16 --kinds "$3" --quiet "$2"/profiles/*-bf16.json $([ "$3" = all ] && echo "$2"/fullpass/*-bf16.json) |
        grep -E '^all  |note: whole' | tr -s ' ' | sed -E 's/^all [0-9,]+ ([0-9.]+) ([0-9.]+).*/\1 \/ \2/; s/.*held-out median error ([0-9.]+)%, p90 ([0-9.]+)%.*/\1 \/ \2/' | paste -sd'|'
}
echo "| profiles | calibration | conv rows | all rows | steps |"
echo "|---|---|---|---|---|"
for S in $D/call5 $D/call1 docs/results/2026-11-28-cache/call2 docs/results/2026-11-28-calnets/model docs/results/2026-11-28-h200-local/model \
         docs/results/2026-11-28-workspace/model docs/results/2026-11-27-h200-stepcheck/model docs/results/2026-11-27-h200-late/model; do
    for C in ${CALS:-stop44 c1-grid c1-nets c5 c5-nocat c5-pools}; do
        c=$(ev "$T/$C.json" "$S" conv) a=$(ev "$T/$C.json" "$S" all)
        echo "| $S | $C | $c | ${a%%|*} | ${a##*|} |"
    done
done
