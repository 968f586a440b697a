#!/usr/bin/env bash
# The worker surviving what breaks on real clusters: a job whose data
# vanished, a worker killed with -9, the server killed with -9, a cancel, a
# worker stopped with SIGTERM. Each experiment that resumes must end with the
# exact loss curve of an uninterrupted cod-train run of the same spec.
cd "$(dirname "$0")/.."
. tests/worker_helpers.bash
make_data
export STEPS=500 CKPT=50
wspec ref > "$t/ref.json"
bin/cod-train "$t/ref.json" --out "$t/ref" --threads 1 >/dev/null 2>&1
REF="$t/ref/metrics.jsonl"
start_server --lease-seconds 6
local_step() { tail -1 "$t/work/experiments/$1/metrics.jsonl" 2>/dev/null | sed 's/{"step": \([0-9]*\),.*/\1/'; }

# --- a job whose data is deleted after submission fails, naming the file; the worker goes on
f=$(submit_vanishing)
e1=$(submit "$(wspec killed-worker)")
start_worker a
wait_for 30 state_is "$f" failed
is "vanished data: failed" "$(field "$f" state)" failed
is "vanished data: the reason names the files" "$(field "$f" reason | grep -c "data2/train_\*.bin")" 1
is "vanished data: the reason is in the experiment's logs" "$(get "/v1/experiments/$f/logs" | grep -c 'failed: data.train')" 1

# --- kill -9 of a worker mid-run: the lease lapses, another worker resumes from the newest checkpoint
wait_for 60 step_at_least "$e1" 120
kill -9 "${WPID[a]}"; wait "${WPID[a]}" 2>/dev/null
killed_at=$(local_step "$e1")
check "kill -9 worker: killed mid-run (step $killed_at of 500)" [ "${killed_at:-0}" -lt 500 ]
start_worker b
wait_for 90 state_is "$e1" succeeded
is "kill -9 worker: the experiment succeeded" "$(field "$e1" state)" succeeded
is "kill -9 worker: one lapsed attempt" "$(field "$e1" attempts)" 1
resumed=$(grep -o "resuming from .*step_0*\([0-9]*\)" "$t/worker-b.log" | head -1 | sed 's/.*step_0*//')
check "kill -9 worker: b resumed from the newest checkpoint (step $resumed, killed at $killed_at)" \
    [ -n "$resumed" ] && [ "$resumed" -le "$killed_at" ] && [ $((killed_at - resumed)) -lt 50 ]
check "kill -9 worker: b did not send again what a had delivered" grep -q "resuming from .*step_0*$resumed ([1-9][0-9]* metric points already delivered)" "$t/worker-b.log"
is "kill -9 worker: ends at step 500" "$(field "$e1" step)" 500
is "kill -9 worker: loss curve = an uninterrupted run, each step once" "$(curve "$e1")" "$(ref_curve "$REF")"
is "kill -9 worker: eval/ppl = an uninterrupted run" "$(curve "$e1" eval/ppl)" "$(ref_curve "$REF" eval/ppl)"
is "kill -9 worker: final layer/out_var = an uninterrupted run" "$(layers_at "$e1" layer/out_var 500)" "$(ref_layers_at "$REF" layer/out_var 500)"

# --- kill -9 of the server mid-run: the worker trains on, keeps its reports on disk, delivers them
e2=$(submit "$(wspec killed-server)")
wait_for 60 step_at_least "$e2" 100
kill -9 "$SPID"; wait "$SPID" 2>/dev/null
down_at=$(local_step "$e2")
trains_on() { [ "$(local_step "$e2")" -ge $((down_at + 60)) ] 2>/dev/null; }
check "kill -9 server: the worker trains on while the server is down" wait_for 30 trains_on
noticed() { grep -q 'reports wait on disk' "$t/worker-b.log"; }
check "kill -9 server: the worker noticed and keeps its reports on disk" wait_for 10 noticed
restart_server --lease-seconds 6
wait_for 90 state_is "$e2" succeeded
is "kill -9 server: the experiment succeeded" "$(field "$e2" state)" succeeded
is "kill -9 server: the waiting reports were sent once it was back" \
    "$(grep -c 'sending the reports that waited' "$t/worker-b.log")" 1
is "kill -9 server: loss curve complete and equal to an uninterrupted run" "$(curve "$e2")" "$(ref_curve "$REF")"
is "kill -9 server: eval/ppl complete" "$(curve "$e2" eval/ppl)" "$(ref_curve "$REF" eval/ppl)"
is "kill -9 server: database intact" "$(bin/cod-server --db "$t/cod.db" --check-db 2>&1)" ok

# --- cancel mid-run: the worker stops within a heartbeat (2 s here), at a checkpoint
e3=$(STEPS=100000 wspec cancelled)
e3=$(submit "$e3")
wait_for 60 step_at_least "$e3" 50
req POST "/v1/experiments/$e3/cancel" >/dev/null
t0=$SECONDS
stopped() { grep -q "stopped at step" "$t/work/experiments/$e3/logs/"run-*.log 2>/dev/null; }
wait_for 20 stopped
took=$((SECONDS - t0))
check "cancel: the worker stopped within a heartbeat of 2 s and an update (${took}s)" [ "$took" -le 4 ]
is "cancel: the experiment is cancelled" "$(field "$e3" state)" cancelled
check "cancel: stopped at a checkpoint" bash -c "ls -d '$t/work/experiments/$e3/checkpoints/'step_* >/dev/null"

# --- SIGTERM: the worker checkpoints, gives the lease back (no attempt spent), exits 0
e4=$(submit "$(wspec released)")
wait_for 60 step_at_least "$e4" 100
kill -TERM "${WPID[b]}"
wait "${WPID[b]}"; rb=$?
is "SIGTERM: the worker exits 0" "$rb" 0
is "SIGTERM: the experiment is queued again" "$(field "$e4" state)" queued
is "SIGTERM: no attempt spent" "$(field "$e4" attempts)" 0
start_worker c
wait_for 90 state_is "$e4" succeeded
check "SIGTERM: the next worker resumed it" grep -q "resuming from" "$t/worker-c.log"
is "SIGTERM: loss curve = an uninterrupted run" "$(curve "$e4")" "$(ref_curve "$REF")"
