#!/usr/bin/env python3
"""Per-layer conv rows of a profile against the race's own time for the same plan (issue 14).

Reads `convbench model-eval --rows --format csv` output. Each conv row's measured_alg carries the
time the plan race measured for the algorithm it took, alone on the layer's buffers, as
"... <taken ms><<runner-up ms>". The script prints, per direction, whether the input channels were
padded, and batch 1 or larger:
  - the row's in-network time over that race time (median, p10, p90);
  - the model's held-out error on those rows.
   python3 dev/race_vs_row.py ROWS.csv
"""
import collections
import csv
import re
import statistics
import sys

ratio, err = collections.defaultdict(list), collections.defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    m = r.get('table') == 'rows' and re.search(r'(\d+\.\d+)<(\d+\.\d+)', r['measured_alg'])
    if not m:
        continue
    meas = float(r['measured_ms'])
    key = (r['direction'], 'padded C' if '(C ' in r['measured_alg'] else 'C as is', 'batch 1' if r['batch'] == '1' else 'batch > 1')
    ratio[key].append(meas / float(m.group(1)))
    err[key].append(abs(float(r['model_ms']) - meas) / meas * 100)
print('| direction | channels | batch | rows | row / race: median | p10 | p90 | model held-out error, median % |')
print('|---|---|---|---:|---:|---:|---:|---:|')
for k in sorted(ratio):
    v = sorted(ratio[k])
    print('| %s | %s | %s | %d | %.2f | %.2f | %.2f | %.1f |' % (*k, len(v), statistics.median(v), v[len(v) // 10], v[9 * len(v) // 10],
                                                             statistics.median(err[k])))
