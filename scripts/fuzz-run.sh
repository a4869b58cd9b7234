#!/usr/bin/env bash
# Runs each libFuzzer harness for SECONDS from its seed corpus (fuzz/corpus/NAME; new inputs go
# to BUILD/corpus/NAME, findings to BUILD/artifacts/). One line per harness with its executions;
# exits non-zero when any harness finds a crash, hang (> 10 s), leak or sanitizer report.
#   scripts/fuzz-run.sh SECONDS BUILD NAME...     (from the repository root; make fuzz-smoke)
set -u
secs=$1 build=$2; shift 2
[ $# -gt 0 ] || { echo "fuzz-run: no harnesses named" >&2; exit 2; }
fail=0
mkdir -p "$build/artifacts"
for name in "$@"; do
    bin=$build/fuzz/$name
    if [ ! -x "$bin" ]; then echo "FAIL $name: $bin is missing (make fuzz)"; fail=1; continue; fi
    mkdir -p "$build/corpus/$name"
    log=$build/artifacts/$name.log
    OMP_NUM_THREADS=1 ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 "$bin" -max_total_time="$secs" -timeout=10 \
        -rss_limit_mb=3072 -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$build/artifacts/$name-" \
        "$build/corpus/$name" "fuzz/corpus/$name" > "$log" 2>&1
    rc=$?
    execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -1)
    if [ "$rc" -ne 0 ]; then
        grep -E "ERROR|runtime error|SUMMARY|invariant|Test unit written|timeout" "$log" | head -8
        echo "FAIL $name: exit $rc after ${execs:-?} executions (log: $log)"
        fail=1
    else
        echo "ok   $name: ${execs:-?} executions in ${secs} s, no findings"
    fi
done
exit $fail
