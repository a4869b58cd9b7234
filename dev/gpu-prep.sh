# Sourced by the dev/gpu-*.sh A/B scripts on the GPU machine, after `set -u` and NAME=...:
# B (the build folder), R=/tmp/NAME made afresh, $OUT, the device's environment (scripts/device-env.sh),
# an incremental build into $B (its log in /tmp/NAME-build.log: a warm machine keeps the last call's
# objects, and a binary left from an older tree would be timed otherwise), and the random networks
# of seeds 1-3 in /tmp/gn (tools/gen_random_net.py, as the stored runs made them).
# CB_COMMIT: the commit the results record. Give it literally (CB_COMMIT=3e2d90b): the device's copy
# of the tree is the session's first commit with the changes on top, so its git names that first
# commit, dirty (2026-11-29-concat.md, calls 2-4).
B=build-gpu; R=/tmp/$NAME; rm -rf $R; mkdir -p $R $OUT; . scripts/device-env.sh
[ -n "${CB_COMMIT:-}" ] || echo "gpu-prep: CB_COMMIT not given: the results will name this copy's git HEAD, which may not be the tree built" >&2
make -j16 BUILD=$B ${CB_COMMIT:+COMMIT=$CB_COMMIT} all >/tmp/$NAME-build.log 2>&1 || { tail -20 /tmp/$NAME-build.log; exit 1; }
python3 tools/gen_random_net.py --suite /tmp/gn --seeds 1-3 --max-gflop 400 >/dev/null
# GEN_SEEDS (A-B or A,B,C): more random networks there, never tuned on (stop 60: seeds 21-23)
[ -n "${GEN_SEEDS:-}" ] && python3 tools/gen_random_net.py --suite /tmp/gn --seeds "$GEN_SEEDS" --max-gflop 400 >/dev/null
