# The dev/*_emu.sh scripts' shared set-up, sourced by each: a kernel file built for the CPU
# (dev/emu/cuda_runtime.h and cuda_bf16.h stand in for CUDA; rewrite_launches.py turns each
# kernel launch into emu_launch), under AddressSanitizer, and run.
#   emu_begin NAME        the repository root, and $tmp (removed at exit)
#   emu_rewrite SRC OUT   SRC's launches rewritten into $tmp/OUT
#   emu_ref               src/cpu/ref.c (the reference loops) into $tmp/ref.o
#   emu_run ARGS...       g++ -std=c++20 -O1 -g -Idev/emu -Iinclude -Isrc ARGS -o $tmp/emu, then runs it
#                         (ARGS: the sanitizers, -D flags, the harness, $tmp/ref.o, libraries)
#   $EMU_SAN              AddressSanitizer with alignment checks that stop at the first report
EMU_SAN="-fsanitize=address,alignment -fno-sanitize-recover=alignment -fno-strict-aliasing"
emu_begin() {
    cd "$(dirname "$0")/.."
    tmp=${TMPDIR:-/tmp}/$1.$$
    mkdir -p "$tmp"
    trap 'rm -rf "$tmp"' EXIT
}
emu_rewrite() { python3 dev/emu/rewrite_launches.py "$1" "$tmp/$2"; }
emu_ref() { cc -O1 -g -fsanitize=address -Iinclude -Isrc -c src/cpu/ref.c -o "$tmp/ref.o"; }
emu_run() {
    g++ -std=c++20 -O1 -g -Idev/emu -Iinclude -Isrc "$@" -o "$tmp/emu"
    "$tmp/emu"
}
