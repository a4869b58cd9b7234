#!/usr/bin/env bash
# Runs every test program in BUILD/tests and the CLI tests; prints one summary line
# "N passed, M failed" and exits non-zero when anything failed.
set -u
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
pass=0 fail=0 skip=0

# run NAME COMMAND...: runs one test program and adds its closing "N passed, M failed[, K skipped]"
run() {
    local name=$1; shift
    local out rc line p f s
    out=$("$@" 2>&1); rc=$?
    line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
    p=$(printf '%s' "$line" | sed -E 's/^([0-9]+) passed.*/\1/'); p=${p:-0}
    f=$(printf '%s' "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/'); f=${f:-0}
    s=$(printf '%s' "$line" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p'); s=${s:-0}
    if [ "$rc" -ne 0 ] || [ -z "$line" ]; then
        [ "$f" -eq 0 ] && f=1
        printf '%s\n' "$out" | grep -vE '^ok ' | tail -40
        echo "FAIL $name (exit $rc)"
    else
        echo "ok   $name: $line"
    fi
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
}

for t in "$build"/tests/test_*; do
    case "$t" in *.o|*.d) continue ;; esac
    [ -x "$t" ] && run "$(basename "$t")" "$t"
done
# the oneDNN backend through the GPU tests' cross-backend harness (skips where the build lacks it);
# under the sanitizers its small cases alone (the large layers' reference loops take minutes there)
case "$build" in *-san) onednn=onednn-small ;; *) onednn=onednn ;; esac
run "test_gpu --backends $onednn" "$build/tests/test_gpu" --backends "$onednn"
# the graph-API operations built from the cudnn backend's descriptors (cuDNN checks them without a GPU)
run "test_gpu --part dnngraph-desc" "$build/tests/test_gpu" --part dnngraph-desc
run cli_test.sh "$here/cli_test.sh" "$build/convbench"
run check_nets_torch.py /usr/bin/python3 "$here/../tools/check_nets_torch.py"
# the four modern built-ins exported from torchvision to ONNX and imported: once, with the plain build
[ "$build" = build ] && run check_onnx_builtins.py /usr/bin/python3 "$here/../tools/check_onnx_builtins.py" "$build/convbench"
# the peer's PyTorch module built from `summary --graph` (bench/peer_graph.py): every layer's shape
# and the parameter count as convbench's, built-in and random networks; once, with the plain build
[ "$build" = build ] && run peer_graph_test.py /usr/bin/python3 "$here/peer_graph_test.py" "$build"
# make install into a temporary PREFIX and use it from /: once, with the plain build
[ "$build" = build ] && run install_test.sh "$here/install_test.sh"
# convbench report's page in headless Chromium (skips without chromium)
[ "$build" = build ] && run report_browser.sh "$here/report_browser.sh" "$build/convbench"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
