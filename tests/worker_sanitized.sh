#!/usr/bin/env bash
# cod-worker built with AddressSanitizer and UBSan (build/san-bin) through
# the paths that exercise its threads and buffers: a job to its end, a
# failing job, the server killed and restarted under a running job, a
# cancel, and SIGTERM; no sanitizer report, no leak at exit.
cd "$(dirname "$0")/.."
. tests/worker_helpers.bash
export COD_WORKER=build/san-bin/cod-worker ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
make_data
export STEPS=150 CKPT=50
start_server --lease-seconds 6
f=$(submit_vanishing)
e1=$(submit "$(wspec whole)")
start_worker s
wait_for 120 state_is "$e1" succeeded
is "sanitized worker: the failing job failed" "$(field "$f" state)" failed
is "sanitized worker: the next job succeeded" "$(field "$e1" state)" succeeded
is "sanitized worker: every train/loss point delivered" "$(curve "$e1" | wc -l)" 150
e2=$(submit "$(wspec outage)")
wait_for 60 step_at_least "$e2" 20
kill -9 "$SPID"; wait "$SPID" 2>/dev/null
noticed() { grep -q 'reports wait on disk' "$t/worker-s.log"; }
wait_for 20 noticed
restart_server --lease-seconds 6
wait_for 120 state_is "$e2" succeeded
is "sanitized worker: through a server outage" "$(curve "$e2" | wc -l)" 150
e3=$(STEPS=100000 wspec cancelled)
e3=$(submit "$e3")
wait_for 60 step_at_least "$e3" 5
req POST "/v1/experiments/$e3/cancel" >/dev/null
wait_for 30 grep -q "experiment $e3: cancelled" "$t/worker-s.log"
is "sanitized worker: cancelled" "$(field "$e3" state)" cancelled
e4=$(STEPS=100000 wspec released)
e4=$(submit "$e4")
wait_for 60 step_at_least "$e4" 5
kill -TERM "${WPID[s]}"
wait "${WPID[s]}"; rc=$?
is "sanitized worker: SIGTERM exits 0" "$rc" 0
is "sanitized worker: released" "$(field "$e4" state)" queued
is "sanitized worker: no sanitizer report" "$(grep -c 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error' "$t/worker-s.log")" 0
