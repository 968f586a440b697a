#!/usr/bin/env bash
# tests/run.sh: start first
# The worker surviving what breaks on real clusters: a job whose data
# vanished, a worker killed with -9, the server killed with -9, a cancel, a
# worker stopped with SIGTERM. Each experiment that resumes must end with the
# exact loss curve of an uninterrupted cod-train run of the same spec.
cd "$(dirname "$0")/.."
. tests/worker_helpers.bash
make_data
# Enough steps that a run cannot end between the step a section waits for
# and its signal, however the machine schedules the two.
export STEPS=1000 CKPT=50
wspec ref > "$t/ref.json"
bin/cod-train "$t/ref.json" --out "$t/ref" --threads 1 >/dev/null 2>&1
REF="$t/ref/metrics.jsonl"
# A worker killed with -9 is found out when its lease lapses: LEASE is that
# wait. Worker a heartbeats every second, so its lease lapses only once it
# is dead (alive, a stall of LEASE - 1 s would be a hung machine).
LEASE=10
start_server --lease-seconds $LEASE
newest_checkpoint() { ls "$t/work/experiments/$1/checkpoints" | grep -x 'step_[0-9]*' | sort | tail -1 | sed 's/step_0*//'; }

# --- a job whose data is deleted after submission fails, naming the file; the worker goes on
f=$(submit_vanishing)
e1=$(submit "$(wspec killed-worker)")
start_worker a --heartbeat-seconds 1 --flush-seconds 0.2
await "the job without data to fail" state_is "$f" failed
is "vanished data: failed" "$(field "$f" state)" failed
is "vanished data: the reason names the files" "$(field "$f" reason | grep -c "data2/train_\*.bin")" 1
is "vanished data: the reason is in the experiment's logs" "$(get "/v1/experiments/$f/logs" | grep -c 'failed: data.train')" 1

# --- kill -9 of a worker mid-run: the lease lapses, another worker resumes from the newest checkpoint
# past two checkpoints, with reports delivered (for b not to send them again)
delivered_past() { local_step_at_least "$e1" 120 && [ -s "$t/work/experiments/$e1/metrics.delivered" ]; }
await "worker a to train e1 to step 120 and deliver reports" delivered_past
kill -9 "${WPID[a]}"; wait "${WPID[a]}" 2>/dev/null
killed_at=$(local_step "$e1") newest=$(newest_checkpoint "$e1")
check "kill -9 worker: killed mid-run (step $killed_at of $STEPS)" [ "${killed_at:-$STEPS}" -lt "$STEPS" ]
# a's lease lapses LEASE s after its last heartbeat: the experiment is queued
# again. Only then is the server restarted: a restart gives every running
# lease a full lease of grace (docs/api.md), which a's would take.
await "e1 to be queued again once a's lease lapsed" state_is "$e1" queued
# From here on no lease is meant to lapse: the server gives long ones.
# Heartbeats every 2 s keep a cancel quick to arrive.
stop_server
restart_server --lease-seconds 600
start_worker b --heartbeat-seconds 2
await "e1 to succeed on worker b" state_is "$e1" succeeded
is "kill -9 worker: the experiment succeeded" "$(field "$e1" state)" succeeded
is "kill -9 worker: one lapsed attempt" "$(field "$e1" attempts)" 1
resumed=$(grep -o "resuming from .*step_0*\([0-9]*\)" "$t/worker-b.log" | head -1 | sed 's/.*step_0*//')
newest_at_kill() { [ -n "$resumed" ] && [ "$resumed" = "$newest" ] && [ "$resumed" -le "$killed_at" ] && [ $((killed_at - resumed)) -le $CKPT ]; }
check "kill -9 worker: b resumed from the newest checkpoint (step $resumed, the newest on disk $newest, killed at $killed_at)" \
    newest_at_kill
check "kill -9 worker: b did not send again what a had delivered" grep -q "resuming from .*step_0*$resumed ([1-9][0-9]* metric points already delivered)" "$t/worker-b.log"
is "kill -9 worker: ends at step $STEPS" "$(field "$e1" step)" "$STEPS"
is "kill -9 worker: loss curve = an uninterrupted run, each step once" "$(curve "$e1")" "$(ref_curve "$REF")"
is "kill -9 worker: eval/ppl = an uninterrupted run" "$(curve "$e1" eval/ppl)" "$(ref_curve "$REF" eval/ppl)"
is "kill -9 worker: final layer/out_var = an uninterrupted run" "$(layers_at "$e1" layer/out_var "$STEPS")" "$(ref_layers_at "$REF" layer/out_var "$STEPS")"

# --- kill -9 of the server mid-run: the worker trains on, keeps its reports on disk, delivers them
e2=$(submit "$(wspec killed-server)")
await "worker b to train e2 to step 100" local_step_at_least "$e2" 100
kill -9 "$SPID"; wait "$SPID" 2>/dev/null
down_at=$(local_step "$e2")
check "kill -9 server: killed mid-run (the worker at step $down_at of $STEPS)" [ "${down_at:-$STEPS}" -lt $((STEPS - 60)) ]
trains_on() { [ "$(local_step "$e2")" -ge $((down_at + 60)) ] 2>/dev/null; }
check "kill -9 server: the worker trains on while the server is down" poll trains_on
noticed() { grep -q 'reports wait on disk' "$t/worker-b.log"; }
check "kill -9 server: the worker noticed and keeps its reports on disk" poll noticed
restart_server --lease-seconds 600
await "e2 to succeed once the server is back" state_is "$e2" succeeded
is "kill -9 server: the experiment succeeded" "$(field "$e2" state)" succeeded
is "kill -9 server: the waiting reports were sent once it was back" \
    "$(grep -c 'sending the reports that waited' "$t/worker-b.log")" 1
is "kill -9 server: loss curve complete and equal to an uninterrupted run" "$(curve "$e2")" "$(ref_curve "$REF")"
is "kill -9 server: eval/ppl complete" "$(curve "$e2" eval/ppl)" "$(ref_curve "$REF" eval/ppl)"
is "kill -9 server: database intact" "$(bin/cod-server --db "$t/cod.db" --check-db 2>&1)" ok

# --- cancel mid-run: the next heartbeat tells the worker, which stops at a checkpoint
e3=$(STEPS=100000 wspec cancelled)
e3=$(submit "$e3")
await "worker b to train e3 to step 50" local_step_at_least "$e3" 50
req POST "/v1/experiments/$e3/cancel" >/dev/null
run_log() { cat "$t/work/experiments/$e3/logs/"run-*.log 2>/dev/null; }
stopped() { run_log | grep -q "stopped at step"; }
await "the cancelled run to stop" stopped
told=$(run_log | grep -o 'cancelled by the server: stopping at a checkpoint\|stopped at step [0-9]*' | paste -sd'|')
is "cancel: a heartbeat told the worker, then it stopped" "${told% [0-9]*}" "cancelled by the server: stopping at a checkpoint|stopped at step"
is "cancel: the experiment is cancelled" "$(field "$e3" state)" cancelled
check "cancel: stopped at a checkpoint of the step it stopped at (${told##* })" \
    [ -d "$t/work/experiments/$e3/checkpoints/step_$(printf %08d "${told##* }")" ]

# --- SIGTERM: the worker checkpoints, gives the lease back (no attempt spent), exits 0
e4=$(submit "$(wspec released)")
await "worker b to train e4 to step 100" local_step_at_least "$e4" 100
# frozen, the worker cannot reach the end between this look and the signal
kill -STOP "${WPID[b]}"
term_at=$(local_step "$e4")
check "SIGTERM: sent mid-run (step $term_at of $STEPS)" [ "${term_at:-$STEPS}" -lt "$STEPS" ]
kill -TERM "${WPID[b]}"; kill -CONT "${WPID[b]}"
wait "${WPID[b]}"; rb=$?
is "SIGTERM: the worker exits 0" "$rb" 0
is "SIGTERM: the experiment is queued again" "$(field "$e4" state)" queued
is "SIGTERM: no attempt spent" "$(field "$e4" attempts)" 0
start_worker c --heartbeat-seconds 2
await "e4 to succeed on worker c" state_is "$e4" succeeded
check "SIGTERM: the next worker resumed it" grep -q "resuming from" "$t/worker-c.log"
is "SIGTERM: loss curve = an uninterrupted run" "$(curve "$e4")" "$(ref_curve "$REF")"
