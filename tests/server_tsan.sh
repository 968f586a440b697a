#!/usr/bin/env bash
# tests/run.sh: start first
# cod-server's threads under ThreadSanitizer: the server built with
# -fsanitize=thread (build/tsan-bin/cod-server, from make build-tests) runs
# the server tests, which drive its HTTP, store, waker and reaper threads
# together (parked polls, wakes, gangs' formation, heartbeats, every route,
# limits, injected disk faults, load), and worker_states, whose real
# workers lease, beat, cancel and finish against it. Every check must pass
# as on the plain build, each server must stop on SIGTERM, and TSan must
# report nothing.
cd "$(dirname "$0")/.." || exit 1
bin=build/tsan-bin/cod-server
[ -x "$bin" ] || { echo "FAIL $bin is not built (make build-tests)"; exit 1; }
reports=$(mktemp -d /tmp/cod-tsan-XXXXXX)
trap 'rm -rf "$reports"' EXIT
export TSAN_OPTIONS="log_path=$reports/tsan halt_on_error=0"
for t in server_longpoll server_gangs server_heartbeats server_api server_submit server_limits server_secrets \
    server_exclusive server_faults server_load worker_states; do
    COD_SERVER_BIN=$bin bash "tests/$t.sh" 2>&1 | sed -n "s/^\(PASS\|FAIL\) /\1 $t under TSan: /p"
done
if ls "$reports"/tsan* >/dev/null 2>&1; then
    echo "FAIL ThreadSanitizer reported:"
    grep -h -A12 'WARNING: ThreadSanitizer' "$reports"/tsan* | head -60
else
    echo "PASS ThreadSanitizer reported nothing"
fi
