#!/usr/bin/env python3
"""The GPU's SM clock, memory clock, power and temperature per part of a run: nvidia-smi's samples
(CSV: timestamp, clocks.sm, clocks.mem, power.draw, temperature.gpu; no units) against the times
each part began (phases.txt: "YYYY/MM/DD HH:MM:SS.mmm name" a line). Median and 10th percentile
of each, per part.
    python3 scripts/clock-summary.py clocks.csv phases.txt"""
import sys
from datetime import datetime


def when(s):
    return datetime.strptime(s.strip(), '%Y/%m/%d %H:%M:%S.%f')


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    try:
        lines, plines = open(sys.argv[1]).read().splitlines(), open(sys.argv[2]).read().splitlines()
    except OSError as e:
        print('clock-summary: %s' % e, file=sys.stderr)
        return 1
    phases = []
    for line in plines:
        parts = line.split()
        if len(parts) >= 3:
            phases.append((when(parts[0] + ' ' + parts[1]), parts[2]))
    samples = {}
    for line in lines:
        f = [x.strip() for x in line.split(',')]
        if len(f) < 5:
            continue
        try:
            t, vals = when(f[0]), [float(x) for x in f[1:5]]
        except ValueError:
            continue
        part = None
        for start, name in phases:
            if start <= t:
                part = name
        if part:
            samples.setdefault(part, []).append(vals)
    if not samples:
        print('clock-summary: no samples within the parts', file=sys.stderr)
        return 1
    print('| part | samples | SM MHz median (p10) | memory MHz | power W median (p90) | temperature C |')
    print('|---|---:|---:|---:|---:|---:|')
    for _, name in phases:
        v = samples.get(name)
        if not v:
            continue
        col = lambda k: sorted(x[k] for x in v)
        q = lambda a, p: a[min(len(a) - 1, int(p * len(a)))]
        sm, mem, pw, tc = col(0), col(1), col(2), col(3)
        print('| %s | %d | %.0f (%.0f) | %.0f | %.0f (%.0f) | %.0f |' % (name, len(v), q(sm, .5), q(sm, .1), q(mem, .5), q(pw, .5), q(pw, .9), q(tc, .5)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
