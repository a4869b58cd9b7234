#!/usr/bin/env bash
# On the GPU machine, one call: whole-network training steps of two source trees side by side
# (engine v2's must-show: the 15 cells of scripts/gpu-bench.sh `nets`, auto backend, before and
# after, each within 3%). The old tree is a `git archive` carried into an ignored folder:
#   rm -rf .v2old && mkdir .v2old && git archive OLD_COMMIT | tar -x -C .v2old
#   (device call, carry .devpack and .v2old)  OUT=dir OLD=.v2old scripts/compare-trees.sh
# Builds both (in parallel), then runs every cell old, new, old, new (alternating, so drift
# hits both alike) and keeps each side's better median; prints new/old per cell and the geomean.
# NETS, MODES and BACKEND as in scripts/gpu-bench.sh (default auto); ITERS per run (default 10).
set -u
OUT=${OUT:-cmp-out} OLD=${OLD:-.v2old}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
[ -d "$OLD/src" ] || { echo "compare-trees: $OLD holds no source tree (see the header)"; exit 2; }
here=$PWD
B=build-gpu . scripts/device-env.sh
mkdir -p "$OLD/build-gpu/gen" && cp -r .deps "$OLD/" 2>/dev/null; cp .devpack/gen/onnx.pb-c.* "$OLD/build-gpu/gen/" 2>/dev/null
t0=$SECONDS
make -j8 BUILD=build-gpu build-gpu/convbench >"$OUT/build-new.log" 2>&1 &
(cd "$OLD" && make -j8 BUILD=build-gpu build-gpu/convbench >"$OUT/build-old.log" 2>&1) &
wait
for side in new old; do
    cb=build-gpu/convbench; [ $side = old ] && cb=$OLD/build-gpu/convbench
    [ -x "$cb" ] || { echo "compare-trees: $side build failed:"; tail -20 "$OUT/build-$side.log"; exit 1; }
done
echo "== built both in $((SECONDS - t0)) s"
NETS=${NETS:-alexnet:128 overfeat-fast:128 vgg-a:64 googlenet:128 vgg16:16}
BE=${BACKEND:-auto}
printf '%-26s %-10s %10s %10s %8s\n' network mode old_ms new_ms new/old >"$OUT/table.txt"
for mode in ${MODES:-fp32:nchw tf32:nhwc bf16:nhwc}; do
    prec=${mode%%:*} lay=${mode##*:}
    for nb in $NETS; do
        net=${nb%%:*} batch=${nb##*:}
        extra="--no-criterion"
        [ "$net" = vgg16 ] && extra="--no-criterion --update"
        for rep in 1 2; do
            for side in old new; do
                cb=build-gpu/convbench; [ $side = old ] && cb=$OLD/build-gpu/convbench
                timeout 120 $cb fullpass $net --batch $batch --backend $BE --precision $prec --layout $lay --no-data-grad \
                    $extra --warmup 3 --iters ${ITERS:-10} --format json --quiet \
                    --output "$OUT/${side}${rep}_${net}_${prec}_${lay}.json" 2>"$OUT/${side}${rep}_${net}_${prec}_${lay}.err" ||
                    echo "compare-trees: $side $net $prec $lay failed: $(tail -1 "$OUT/${side}${rep}_${net}_${prec}_${lay}.err")"
            done
        done
        python3 - "$OUT" "$net" "$prec" "$lay" "$batch" >>"$OUT/table.txt" <<'PY'
import json, sys, os
out, net, prec, lay, batch = sys.argv[1:]
def best(side):
    ms = []
    for rep in (1, 2):
        f = f"{out}/{side}{rep}_{net}_{prec}_{lay}.json"
        if not os.path.exists(f): continue
        d = json.load(open(f))
        v = 1e3 * d["batch"] / d["images_per_s"] if d.get("images_per_s") else None
        if v: ms.append(float(v))
    return min(ms) if ms else None
o, n = best("old"), best("new")
r = f"{n / o:8.3f}" if o and n else "       -"
print(f"{net + ' b' + batch:26s} {prec + ' ' + lay:10s} {o or 0:10.2f} {n or 0:10.2f} {r}")
PY
    done
done
python3 - "$OUT/table.txt" <<'PY' | tee -a "$OUT/table.txt"
import math, sys
rs = [float(l.split()[-1]) for l in open(sys.argv[1]).read().splitlines()[1:] if l.split()[-1] != "-"]
if rs:
    print(f"geomean new/old over {len(rs)} cells: {math.exp(sum(map(math.log, rs)) / len(rs)):.3f}; worst {max(rs):.3f}; cells over 1.03: {sum(r > 1.03 for r in rs)}")
PY
cat "$OUT/table.txt"
