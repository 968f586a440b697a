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
# No lease is meant to lapse here (not even through the server's outage):
# long ones, and heartbeats every second to hear a cancel soon.
start_server --lease-seconds 600
f=$(submit_vanishing)
e1=$(submit "$(wspec whole)")
start_worker s --heartbeat-seconds 1
await "the whole job to succeed" state_is "$e1" succeeded
is "sanitized worker: the failing job failed" "$(field "$f" state)" failed
is "sanitized worker: the next job succeeded" "$(field "$e1" state)" succeeded
is "sanitized worker: every train/loss point delivered" "$(curve "$e1" | wc -l)" 150
# long enough that it cannot end between the step awaited and the kill
e2=$(STEPS=600 wspec outage)
e2=$(submit "$e2")
await "the worker to train e2 to step 20" local_step_at_least "$e2" 20
# frozen from before the kill until its step is read: the run cannot have
# ended before the outage it is to go through
kill -STOP "${WPID[s]}"
kill -9 "$SPID"; wait "$SPID" 2>/dev/null
down_at=$(local_step "$e2")
kill -CONT "${WPID[s]}"
check "sanitized worker: the server died mid-run (step $down_at of 600)" [ "${down_at:-600}" -lt 600 ]
noticed() { grep -q 'reports wait on disk' "$t/worker-s.log"; }
await "the worker to notice the server is down" noticed
restart_server --lease-seconds 600
await "e2 to succeed once the server is back" state_is "$e2" succeeded
is "sanitized worker: through a server outage" "$(curve "$e2" | wc -l)" 600
e3=$(STEPS=100000 wspec cancelled)
e3=$(submit "$e3")
await "the worker to train e3 to step 5" local_step_at_least "$e3" 5
req POST "/v1/experiments/$e3/cancel" >/dev/null
await "the worker to stop the cancelled e3" grep -q "experiment $e3: cancelled" "$t/worker-s.log"
is "sanitized worker: cancelled" "$(field "$e3" state)" cancelled
e4=$(STEPS=100000 wspec released)
e4=$(submit "$e4")
await "the worker to train e4 to step 5" local_step_at_least "$e4" 5
kill -TERM "${WPID[s]}"
wait "${WPID[s]}"; rc=$?
is "sanitized worker: SIGTERM exits 0" "$rc" 0
is "sanitized worker: released" "$(field "$e4" state)" queued
is "sanitized worker: no sanitizer report" "$(grep -c 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error' "$t/worker-s.log")" 0
