#!/usr/bin/env bash
# convbench report's page in a real browser: Debian's headless Chromium loads it with no console
# message, and a screenshot of it is far from blank. Skips when chromium is not installed.
#   tests/report_browser.sh build/convbench [SCREENSHOT.png]
set -u
cb=${1:-build/convbench}
shot_out=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
if ! command -v chromium >/dev/null; then echo "skip: no chromium (apt-get install chromium)"; echo "0 passed, 0 failed, 1 skipped"; exit 0; fi

# load URL: the browser's console lines (CONSOLE) and errors, and a screenshot
load() {
    timeout 120 chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0 \
        --window-size=1000,7000 --screenshot="$2" "$1" 2>&1 | grep -E 'CONSOLE|Uncaught|ERR_' || true
}

# the detector sees a console error when there is one
printf '<!DOCTYPE html><html><body><script>console.error("boom")</script></body></html>' > "$tmp/bad.html"
if load "file://$tmp/bad.html" "$tmp/bad.png" | grep -q boom; then ok "the console is read"; else bad "a console error went unseen"; fi

R=$here/../docs/results/2026-11-21-h200-final
"$cb" simulate alexnet --workers 1,2,4,8 --format json --output "$tmp/sim.json" 2>/dev/null
"$cb" predict alexnet --device h200 --precision bf16 --batch 128 --format json --output "$tmp/pred.json" 2>/dev/null
"$cb" train fashion-lenet --epochs 2 --limit 1000 --format json --output "$tmp/train.json" --quiet 2>/dev/null
if "$cb" report "$R/profile_alexnet_bf16.json" "$R"/fullpass_alexnet_*.json "$R/infer_ece408_cudnn-fp32.json" \
        "$R/infer_ece408_direct-bf16.json" "$R/layers_bf16.json" "$tmp/pred.json" "$tmp/sim.json" "$tmp/train.json" \
        --peer "$R/peer.out" --output "$tmp/page.html" --quiet; then ok "report"; else bad "report"; fi
msgs=$(load "file://$tmp/page.html" "$tmp/page.png")
if [ -z "$msgs" ]; then ok "no console messages"; else bad "console: $msgs"; fi
# far from blank: many non-white pixels (Debian's python3-pil when there, else the PNG's size)
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import PIL" 2>/dev/null; then
    ink=$(/usr/bin/python3 -c "
from PIL import Image
im = Image.open('$tmp/page.png').convert('L')
print(sum(1 for p in im.getdata() if p < 200))")
    [ "$ink" -gt 50000 ] && ok "screenshot shows the charts ($ink dark pixels)" || bad "screenshot nearly blank ($ink dark pixels)"
else
    size=$(stat -c %s "$tmp/page.png" 2>/dev/null || echo 0)
    [ "$size" -gt 100000 ] && ok "screenshot ($size bytes)" || bad "screenshot too small ($size bytes)"
fi
[ -n "$shot_out" ] && cp "$tmp/page.png" "$shot_out"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
