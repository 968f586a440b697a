#!/usr/bin/env bash
# tests/run.sh: start first
# The fuzz harnesses of tests/fuzz/ in `make test`: each replays its
# checked-in corpus (tests/fuzz/corpus/NAME/: the seeds, and an input for
# every bug fuzzing found, named bug_*) and then fuzzes from it for
# FUZZ_REPLAY_SECONDS (default 3), keeping nothing. `make build-tests`
# builds them (clang). A failure shows the end of the harness's report.
cd "$(dirname "$0")/.." && . tests/lib.sh
secs=${FUZZ_REPLAY_SECONDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ran() { # name, log, then the command
    local name=$1 log=$2
    shift 2
    if "$@" >"$log" 2>&1; then echo "PASS $name"; else
        echo "FAIL $name"
        grep -v '^\(INFO\|Running\|Executed\|#\)' "$log" | tail -n 30 | sed 's/^/    /'
    fi
}
for dir in tests/fuzz/corpus/*/; do
    name=$(basename "$dir") bin=build/fuzz/fuzz_$(basename "$dir")
    if [ ! -x "$bin" ]; then
        echo "FAIL fuzz $name: $bin is not built (make build-tests)"
        continue
    fi
    ran "fuzz $name: its corpus ($(ls "$dir" | wc -l) inputs) replays" "$tmp/$name.replay" \
        "$bin" -timeout=20 "$dir"*
    dict=()
    [ -f "tests/fuzz/dict/$name.dict" ] && dict=("-dict=tests/fuzz/dict/$name.dict")
    mkdir -p "$tmp/$name"
    ran "fuzz $name: ${secs}s of fuzzing finds nothing" "$tmp/$name.fuzz" \
        "$bin" -max_total_time="$secs" -timeout=20 "${dict[@]}" -artifact_prefix="$tmp/" "$tmp/$name" "$dir"
done
