#!/usr/bin/env bash
# `make fuzz`: runs each harness named (build/fuzz/fuzz_NAME) for SECONDS,
# starting from its checked-in seeds (tests/fuzz/corpus/NAME/) and keeping
# what it finds in var/fuzz/NAME/ (ignored; the next run goes on from it),
# with its dictionary (tests/fuzz/dict/NAME.dict) where it has one. Prints
# one line a harness: executions, executions per second, the corpus libFuzzer
# ended with, and where a crash was saved (var/fuzz/crashes/NAME-*). Exits 1
# when any harness crashed; its log is var/fuzz/NAME.log.
#   usage: tests/fuzz/run.sh SECONDS NAME...
set -u
cd "$(dirname "$0")/../.."
secs=$1
shift
crashed=0
mkdir -p var/fuzz/crashes
printf '%-12s %8s %10s %8s  %s\n' harness seconds execs exec/s 'corpus (units/bytes), result'
for name in "$@"; do
    bin=build/fuzz/fuzz_$name corpus=var/fuzz/$name log=var/fuzz/$name.log
    mkdir -p "$corpus"
    dict=()
    [ -f "tests/fuzz/dict/$name.dict" ] && dict=("-dict=tests/fuzz/dict/$name.dict")
    "$bin" -max_total_time="$secs" -timeout=20 -print_final_stats=1 "${dict[@]}" \
        -artifact_prefix="var/fuzz/crashes/$name-" "$corpus" "tests/fuzz/corpus/$name" >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    corp=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -n 1 | cut -d' ' -f2)
    result=ok
    if [ "$rc" -ne 0 ]; then
        crashed=1
        result="CRASH (exit $rc): $(grep -o 'Test unit written to .*' "$log" | tail -n 1 | cut -d' ' -f5-)"
    fi
    printf '%-12s %8s %10s %8s  %s, %s\n' "$name" "$secs" "${execs:-?}" "${rate:-?}" "${corp:-?}" "$result"
done
exit "$crashed"
