#!/usr/bin/env bash
# make install PREFIX=TMP, then, from another directory: a program built with pkg-config loads a
# built-in network and runs it, against the shared library and the static one; the installed CLI
# finds its networks and device database from /.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
p=$tmp/prefix

if make -C "$src" --no-print-directory install PREFIX="$p" >"$tmp/install.log" 2>&1; then ok "make install"; else bad "make install: $(tail -3 "$tmp/install.log")"; fi
for f in bin/convbench lib/libconvbench.a lib/libconvbench.so lib/libconvbench.so.0 include/convbench.h \
         lib/pkgconfig/convbench.pc share/convbench/nets/alexnet.json share/convbench/data/devices.json; do
    [ -e "$p/$f" ] || bad "installed $f"
done
ok "installed files"
soname=$(readelf -d "$p/lib/libconvbench.so" 2>/dev/null | sed -nE 's/.*soname: \[(.*)\]/\1/p')
[ "$soname" = libconvbench.so.0 ] && ok "soname $soname" || bad "soname '$soname'"

export PKG_CONFIG_PATH=$p/lib/pkgconfig
cd /
unset CONVBENCH_DATA CONVBENCH_NETS CONVBENCH_DEVICES OMP_WAIT_POLICY
if cc -o "$tmp/ex" "$here/install_example.c" $(pkg-config --cflags --libs convbench) -Wl,-rpath,"$p/lib" 2>"$tmp/cc.log"; then
    out=$("$tmp/ex" 2>&1)
    case "$out" in *"9 layers, sum of p = 1.0000, OMP_WAIT_POLICY=PASSIVE") ok "pkg-config program, shared: $out" ;; *) bad "shared example: $out" ;; esac
else bad "cc with pkg-config: $(head -3 "$tmp/cc.log")"; fi
if cc -o "$tmp/ex_static" "$here/install_example.c" $(pkg-config --cflags convbench) "$p/lib/libconvbench.a" \
      $(pkg-config --static --libs-only-other --libs-only-l convbench | sed 's/-lconvbench//') 2>"$tmp/cc.log"; then
    out=$("$tmp/ex_static" 2>&1)
    case "$out" in *"sum of p = 1.0000, OMP_WAIT_POLICY=PASSIVE") ok "static library: $out" ;; *) bad "static example: $out" ;; esac
else bad "cc static: $(head -3 "$tmp/cc.log")"; fi

cb=$p/bin/convbench
out=$("$cb" summary alexnet 2>&1) && printf '%s' "$out" | grep -q "Number of params: 61,100,840" && ok "convbench summary alexnet from /" || bad "summary from /: $(printf '%s' "$out" | tail -2)"
out=$("$cb" predict alexnet --device h200 --batch 8 2>&1) && ok "predict finds the device database from /" || bad "predict from /: $(printf '%s' "$out" | tail -2)"
out=$("$cb" summary nosuch 2>&1)
case "$out" in *"in $p/share/convbench/nets:"*) ok "the installed nets come first" ;; *) bad "search path: $out" ;; esac
mkdir -p "$tmp/mydata/nets" && cp "$src/nets/fashion-lenet.json" "$tmp/mydata/nets/mine.json"
out=$(CONVBENCH_DATA=$tmp/mydata "$cb" summary mine 2>&1) && ok "CONVBENCH_DATA" || bad "CONVBENCH_DATA: $out"
v=$("$cb" --version)
case "$v" in "convbench 0."*) ok "--version: $v" ;; *) bad "--version: $v" ;; esac
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
