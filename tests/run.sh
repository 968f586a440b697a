#!/usr/bin/env bash
# Runs every test binary in build/tests and every tests/*.sh script. Each
# prints "PASS name" / "FAIL name" lines; a program that exits non-zero
# without a FAIL line, or that ran no check at all, counts as one failure
# (silence is not a pass). Ends with "N passed, N failed". TEST_TIMEOUT only
# ends a program that hangs: the tests wait for events, not durations.
set -u
cd "$(dirname "$0")/.."
passed=0 failed=0
log_dir=build/test-logs
mkdir -p "$log_dir"
only="${1:-}"
limit=${TEST_TIMEOUT:-900}
run_one() {
    local name=$1; shift
    [ -n "$only" ] && [[ "$name" != *"$only"* ]] && return
    local log="$log_dir/$name.log" start=$SECONDS
    timeout "$limit" "$@" >"$log" 2>&1
    local rc=$? p f
    p=$(grep -c '^PASS ' "$log"); f=$(grep -c '^FAIL ' "$log")
    if [ "$rc" -eq 124 ]; then f=$((f + 1)); echo "FAIL $name (hung: ended after $limit s)"
    elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "FAIL $name (exit $rc)"
    elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then f=1; echo "FAIL $name (no check ran)"; fi
    passed=$((passed + p)); failed=$((failed + f))
    printf '%-34s %3d passed %3d failed  %4ds\n' "$name" "$p" "$f" $((SECONDS - start))
    if [ "$f" -ne 0 ]; then sed 's/^/    /' "$log" | tail -n 60; fi
}
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
# OpenMP threads that spin while waiting crawl when something else holds the
# cores; the tests measure results, not speed, so they wait passively.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
export UBSAN_OPTIONS=print_stacktrace=1
for t in build/tests/*; do
    [ -x "$t" ] && run_one "$(basename "$t")" "$t"
done
for s in tests/*.sh; do
    case "$(basename "$s")" in lib.sh | run.sh) continue ;; esac
    [ -f "$s" ] && run_one "$(basename "$s" .sh)" bash "$s"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
