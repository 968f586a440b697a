#!/usr/bin/env bash
# Runs every test binary in build/tests and every tests/*.sh script. Each
# prints "PASS name" / "FAIL name" lines; a program that exits non-zero
# without a FAIL line, or that ran no check at all, counts as one failure
# (silence is not a pass). Ends with "N passed, N failed". TEST_TIMEOUT only
# ends a program that hangs: the tests wait for events, not durations.
# TEST_JOBS programs run at once (default: the number of cores): the tests
# keep their state apart (their own directories, servers on port 0), and
# each one's block is printed when it ends.
set -u
cd "$(dirname "$0")/.."
log_dir=build/test-logs
mkdir -p "$log_dir"
only="${1:-}"
limit=${TEST_TIMEOUT:-900}
jobs=${TEST_JOBS:-$(nproc)}
case $jobs in '' | *[!0-9]* | 0) echo "tests/run.sh: TEST_JOBS must be a positive number, not '$jobs'" >&2; exit 2 ;; esac
# one program: its log, then its line (and the log's tail if it failed) on
# stdout, and its counts in NAME.count for the total
run_one() {
    local name=$1; shift
    local log="$log_dir/$name.log" start=$SECONDS
    timeout "$limit" "$@" >"$log" 2>&1
    local rc=$? p f lines
    p=$(grep -c '^PASS ' "$log"); f=$(grep -c '^FAIL ' "$log")
    if [ "$rc" -eq 124 ]; then f=$((f + 1)); lines="FAIL $name (hung: ended after $limit s)"$'\n'
    elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; lines="FAIL $name (exit $rc)"$'\n'
    elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then f=1; lines="FAIL $name (no check ran)"$'\n'
    else lines=; fi
    lines+=$(printf '%-34s %3d passed %3d failed  %4ds' "$name" "$p" "$f" $((SECONDS - start)))
    [ "$f" -ne 0 ] && lines+=$'\n'$(sed 's/^/    /' "$log" | tail -n 60)
    echo "$p $f" > "$log_dir/$name.count"
    # one write, so that blocks of programs ending together do not mix
    printf '%s\n' "$lines"
}
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
# OpenMP threads that spin while waiting crawl when something else holds the
# cores; the tests measure results, not speed, so they wait passively.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
export UBSAN_OPTIONS=print_stacktrace=1
# the scripts that take minutes (a line "# tests/run.sh: start first") go
# first, so that the rest fill the other cores around them
first=() rest=()
for s in tests/*.sh; do
    case "$(basename "$s")" in lib.sh | run.sh) continue ;; esac
    if grep -qx '# tests/run.sh: start first' "$s"; then first+=("$s"); else rest+=("$s"); fi
done
names=() cmds=()
for s in "${first[@]}"; do names+=("$(basename "$s" .sh)"); cmds+=("bash $s"); done
for t in build/tests/*; do
    [ -x "$t" ] && { names+=("$(basename "$t")"); cmds+=("$t"); }
done
for s in "${rest[@]}"; do names+=("$(basename "$s" .sh)"); cmds+=("bash $s"); done
# the default corpus once, before programs that need it start at once
. tests/lib.sh
need_corpus
ran=()
for i in "${!names[@]}"; do
    name=${names[$i]}
    [ -n "$only" ] && [[ "$name" != *"$only"* ]] && continue
    rm -f "$log_dir/$name.count"
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    # shellcheck disable=SC2086 # a command's words
    run_one "$name" ${cmds[$i]} &
    ran+=("$name")
done
wait
[ ${#ran[@]} -gt 0 ] || { echo "tests/run.sh: no test program's name holds '$only'" >&2; exit 1; }
passed=0 failed=0
for name in "${ran[@]}"; do
    if read -r p f < "$log_dir/$name.count"; then
        passed=$((passed + p)); failed=$((failed + f))
    else
        echo "FAIL $name (its count was never written)"; failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
