#!/usr/bin/env bash
# Every metric point reaches the server exactly once, through the race that
# lost points before: the server is killed -9 while the worker is sending,
# stays down until the run's lease has lapsed and the worker has trained to
# the end; back up, it refuses the old run (409) and the worker stops; a
# second worker sharing the work dir resumes the experiment from its final
# checkpoint. Then every point on the server must be the run's metrics.jsonl,
# line for line, and the final run's log must be there whole.
cd "$(dirname "$0")/.."
. tests/worker_helpers.bash
make_data
export STEPS=600 CKPT=50
# The lease must lapse while the server is down: LEASE is that wait. The
# worker heartbeats every second, so before the kill its lease lapses only
# on a machine hung for LEASE - 1 s.
LEASE=10
start_server --lease-seconds $LEASE
e=$(submit "$(wspec points)")
M="$t/work/experiments/$e/metrics.jsonl"
start_worker a --max-jobs 1 --flush-seconds 0.2 --heartbeat-seconds 1

# killed while batches are going out (one every 0.2 s), once the worker has
# recorded a delivered batch, and the run goes on
acked() { [ -s "$t/work/experiments/$e/metrics.delivered" ]; }
await "worker a to record a delivered batch" acked
# frozen from before the kill until its step is read: that is the step the
# kill found, and the run cannot have ended before it
kill -STOP "${WPID[a]}"
kill -9 "$SPID"; wait "$SPID" 2>/dev/null
killed_ms=$(date +%s%3N)
at=$(local_step "$e")
kill -CONT "${WPID[a]}"
check "the server died mid-run (the worker at step $at of $STEPS)" [ "${at:-$STEPS}" -lt "$STEPS" ]
trained() { grep -q "step $STEPS/$STEPS" "$t/worker-a.log"; }
check "the worker trained to the end with the server down" poll trained
# The last heartbeat the server took was before the kill, so the lease it
# recorded ends before LEASE s after the kill: a moment on the clock, not a
# guess.
lapsed() { [ "$(date +%s%3N)" -gt $((killed_ms + LEASE * 1000)) ]; }
await "the lease to lapse while the server is down" lapsed
# A restarted server gives every running lease a full lease of grace
# (docs/api.md), which a's heartbeats would take: a stays frozen through it,
# so its lease lapses with the server up, and only then goes on.
kill -STOP "${WPID[a]}"
restart_server --lease-seconds $LEASE
await "the run to lapse and the experiment to be queued again" state_is "$e" queued
kill -CONT "${WPID[a]}"
wait "${WPID[a]}"
check "back up, the server refused the lapsed run and the worker stopped" \
    grep -q "the server took the lease back" "$t/worker-a.log"
is "the lapsed lease cost one attempt" "$(field "$e" attempts)" 1

start_worker b --max-jobs 1 --flush-seconds 0.2
wait "${WPID[b]}"
check "the second worker resumed from the final checkpoint" \
    grep -q "resuming from .*step_0*$STEPS " "$t/worker-b.log"
is "the experiment succeeded" "$(field "$e" state)" succeeded
file_points "$M" >"$t/file.points"
server_points "$e" "$M" >"$t/server.points"
check "metrics.jsonl holds each point once" [ -z "$(cut -d' ' -f1-3 "$t/file.points" | uniq -d)" ]
is "train/loss at every step on the server" "$(grep -c '^train/loss ' "$t/server.points")" "$STEPS"
is "every point on the server, none missing, none doubled, none extra ($(wc -l <"$t/file.points") in the file)" \
    "$(diff "$t/file.points" "$t/server.points" | head -5)$(cmp -s "$t/file.points" "$t/server.points" && echo same)" same
last=$(ls "$t/work/experiments/$e/logs/" | sort -t- -k2 -n | tail -1)
is "the final run's log lines, each once" \
    "$(get "/v1/experiments/$e/logs" | js "j.lines.filter(l => l.run === ${last//[^0-9]/}).map(l => l.line).join('\n')")" \
    "$(cat "$t/work/experiments/$e/logs/$last")"

# A server whose --max-body is below a batch answers 413: the batch was not
# stored, so the worker sends smaller ones, and every point arrives.
# No lease is meant to lapse from here on: a long one, whatever the load.
stop_server
restart_server --lease-seconds 600 --max-body 4096
e=$(submit "$(wspec small-bodies)")
M="$t/work/experiments/$e/metrics.jsonl"
start_worker c --max-jobs 1 --flush-seconds 0.2
wait "${WPID[c]}"
check "413: the worker sent smaller batches" grep -q "found a report too large" "$t/worker-c.log"
is "413: the experiment succeeded" "$(field "$e" state)" succeeded
is "413: every point on the server" "$(server_points "$e" "$M" | cmp - <(file_points "$M") && echo same)" same
