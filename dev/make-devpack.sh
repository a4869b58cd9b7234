#!/usr/bin/env bash
# Makes .devpack/ (ignored by git) for the device tool's carry, on a machine where
# scripts/install-deps.sh has run and `make all` has built build/gen/onnx.pb-c.[ch]:
#   .devpack/deps.tar.xz  a .deps/{include,lib} tree: the Debian headers and libraries the GPU
#                         machine's image lacks (cJSON, OpenBLAS with libgfortran, zlib, protobuf-c,
#                         SQLite), read by scripts/device-env.sh there
#   .devpack/gen/         the ONNX reader's generated protobuf-c code
# Carry ".devpack/deps.tar.xz" and ".devpack/gen" in the device call (scripts/device-env.sh).
#   bash dev/make-devpack.sh
set -eu
cd "$(dirname "$0")/.."
[ -f build/gen/onnx.pb-c.c ] || { echo "make-devpack: build/gen/onnx.pb-c.c missing: run make all first" >&2; exit 1; }
L=/usr/lib/x86_64-linux-gnu
rm -rf .deps && mkdir -p .deps/include .deps/lib .devpack/gen
cp -r /usr/include/cjson /usr/include/protobuf-c /usr/include/sqlite3.h /usr/include/zlib.h /usr/include/zconf.h .deps/include/
cp /usr/include/x86_64-linux-gnu/openblas-pthread/*.h .deps/include/
# each library under its link name and its soname, as the real file (no links into /etc/alternatives)
lib() { # lib LINKNAME SONAME: the file $L/SONAME resolves to
    local f
    f=$(readlink -f "$L/$2" 2>/dev/null || readlink -f "/lib/x86_64-linux-gnu/$2")
    [ -f "$f" ] || { echo "make-devpack: $2 not found (scripts/install-deps.sh)" >&2; exit 1; }
    cp "$f" ".deps/lib/$2" && ln -sf "$2" ".deps/lib/$1"
}
lib libcjson.so libcjson.so.1
lib libopenblas.so libopenblas.so.0
lib libprotobuf-c.so libprotobuf-c.so.1
lib libsqlite3.so libsqlite3.so.0
lib libz.so libz.so.1
lib libgfortran.so libgfortran.so.5
lib libquadmath.so libquadmath.so.0
cp build/gen/onnx.pb-c.[ch] .devpack/gen/
tar -cJf .devpack/deps.tar.xz .deps
rm -rf .deps
du -sh .devpack/deps.tar.xz .devpack/gen
