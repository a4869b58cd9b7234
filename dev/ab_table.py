#!/usr/bin/env python3
"""The A/B table of the dev/gpu-*.sh scripts: one row per fullpass JSON in DIR named
PREFIX-<cell>-<mode>.json, with the step's median time, the planned peak, one memory kind whole
and at the arena's busiest point, and where that point is.
    python3 dev/ab_table.py DIR KIND [GLOB]     (GLOB: 'fp*.json')"""
import glob, json, os, sys

d_, kind = sys.argv[1], sys.argv[2]
pattern = sys.argv[3] if len(sys.argv) > 3 else 'fp*.json'
print('| cell | mode | step ms | planned MiB | %s MiB (at the peak) | peak at |' % kind)
print('|---|---|---:|---:|---:|---|')
for f in sorted(glob.glob(os.path.join(d_, pattern))):
    name = os.path.basename(f)[:-5]
    try:
        d = json.load(open(f))
        tot = [r for r in d['tables']['fullpass'] if r['phase'].strip() == 'total'][0]['median_ms']
        mem = {r['kind']: r for r in d['tables']['memory']}
        k = mem.get(kind, {'mib': 0, 'at_peak_mib': 0})
        at = [n for n in d.get('notes', []) if 'busiest' in n]
        at = at[0].split('busiest point, ')[1].split(' (')[0] if at else ''
        print('| %s | %s | %.3f | %.1f | %.1f (%.1f) | %s |' % (name.rsplit('-', 1)[0], name.rsplit('-', 1)[1], tot,
              mem['total planned']['mib'], k['mib'] or 0, k['at_peak_mib'] or 0, at))
    except Exception as e:
        print('| %s | unreadable: %s | | | | |' % (name, e))
