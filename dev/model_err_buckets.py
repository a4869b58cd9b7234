#!/usr/bin/env python3
"""Where the model's held-out conv error lies: `convbench model-eval --rows --format csv` rows
(their held-out error, as model-eval pools it) bucketed by how much more the profile row holds than the race's time for the plan taken
(measured / race, the race time read from the measured algorithm's "T<..." note) and by the row's
size. A row near 1 is a convolution alone; rows far above 1 hold more (a batch norm on cuDNN's
legacy path, a bias pass, a padded copy).
    convbench model-eval --device CAL.json --nets ... --kinds conv --rows --format csv --quiet P... > rows.csv
    python3 dev/model_err_buckets.py rows.csv"""
import csv, math, re, statistics, sys

rows = [r for r in csv.DictReader(open(sys.argv[1])) if r.get("table") == "rows"]
if not rows:
    sys.exit("model_err_buckets: no rows table in %s (model-eval --rows --format csv)" % sys.argv[1])


def stats(b):
    if not b:
        return "n=0"
    err = statistics.median(x["err"] for x in b) / 100
    sign = statistics.median(math.log(x["mod"] / x["meas"]) for x in b)
    return "n=%d  median |error| %.1f%%  median log(model/measured) %+.3f" % (len(b), 100 * err, sign)


res = []
for r in rows:
    m = re.search(r" ([0-9.]+)<", r["measured_alg"])
    res.append({"race": float(m.group(1)) if m else None, "meas": float(r["measured_ms"]), "mod": float(r["model_ms"]),
                "err": float(r["heldout_err_pct"])})
print("all rows: " + stats(res))
for lo, hi in [(0, 1.15), (1.15, 1.5), (1.5, 3), (3, float("inf"))]:
    print("measured / race in [%g, %g): %s" % (lo, hi, stats([x for x in res if x["race"] and lo <= x["meas"] / x["race"] < hi])))
print("no race time in the row: " + stats([x for x in res if not x["race"]]))
for lo, hi in [(0, 0.02), (0.02, 0.05), (0.05, 0.2), (0.2, 1), (1, float("inf"))]:
    print("measured ms in [%g, %g): %s" % (lo, hi, stats([x for x in res if lo <= x["meas"] < hi])))
