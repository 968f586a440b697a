#!/usr/bin/env bash
# Heartbeats are noted in memory and reach the database with the next write
# (schema/beats.c); what a kill -9 loses of them is covered by the grace a
# restarted server gives every running lease. Against the real server:
# heartbeats extend the lease and advance the step as the database then
# shows; after a kill -9, with the lease in the database already past, the
# restarted server keeps the run (its lease a full lease from the restart),
# the worker's next heartbeat is answered 200, and the reaper requeues
# nothing. Then concurrent writers that the server batches (group commit):
# every acknowledged write is there and the refused ones left nothing.
cd "$(dirname "$0")/.." && . tests/server_helpers.bash
make_data
is() { check "$1" test "$2" = "$3"; }
q() { sqlite3 "$t/cod.db" "$1"; }

start_server --lease-seconds 4 --reap-seconds 0.1
req POST /v1/experiments "$(spec)" >/dev/null; e=$(jget id)
req POST /v1/workers/register '{"device": "cpu"}' >/dev/null; w=$(jget id)
req POST /v1/workers/$w/lease '{"wait": 0}' >/dev/null; run=$(jget run)
first=$(q "SELECT lease_expires FROM runs WHERE id = $run")
is "heartbeat: 200" "$(req POST /v1/runs/$run/heartbeat '{"step": 7}')" 200
# the reaper's next tick is a write: the extension and the step land then
step_is() { [ "$(q "SELECT step FROM experiments WHERE id = $e")" = "$1" ]; }
check "the heartbeat's step reaches the database" poll step_is 7
later=$(q "SELECT lease_expires FROM runs WHERE id = $run")
check "and so does the extension ($first -> $later)" python3 -c "import sys; sys.exit(not $later > $first)"

# a kill -9, then the lease in the database runs out while no server runs
kill -9 "$SPID"; wait "$SPID" 2>/dev/null; SPID=
past() { python3 -c "import sys, time; sys.exit(not time.time() > $(q "SELECT lease_expires FROM runs WHERE id = $run") + 0.5)"; }
check "the lease in the database is past" poll past
# the grace is a full lease from the restart, whenever the restart happens
before=$(date +%s.%N)
start_server --lease-seconds 4 --reap-seconds 0.1
after=$(date +%s.%N)
expires=$(q "SELECT lease_expires FROM runs WHERE id = $run")
check "restarted: the running lease has a full lease of grace (expires $expires, restart $before-$after)" \
    python3 -c "import sys; sys.exit(not $before + 4 <= $expires <= $after + 4)"
is "the worker's next heartbeat: 200" "$(req POST /v1/runs/$run/heartbeat '{"step": 8}')" 200
check "its step lands" poll step_is 8
req GET /v1/experiments/$e >/dev/null
is "the experiment still runs" "$(jget state)" running
req GET /metrics >/dev/null
check "no lease was reaped" grep -q '^cod_lease_expiries_total 0' "$t/body"
stop_server

# --- group commit under concurrent writers
rm -f "$t"/cod.db*
start_server --log-requests 0
N=8 PER=40
writer() { # i: a submission under the writer's Idempotency-Key (the first makes it, the
            # rest replay it), the same key with another spec (refused), every other
            # round a new experiment
    local k
    for k in $(seq $PER); do
        wcurl -s -m 30 -o /dev/null -w '%{http_code} key\n' -X POST "$B/v1/experiments" \
            -H "Idempotency-Key: w$1" --data-binary "$(spec "\"name\": \"w$1\"")"
        wcurl -s -m 30 -o /dev/null -w '%{http_code} bad\n' -X POST "$B/v1/experiments" \
            -H "Idempotency-Key: w$1" --data-binary "$(spec "\"name\": \"other$1-$k\"")"
        [ $((k % 2)) = 0 ] && wcurl -s -m 30 -o /dev/null -w '%{http_code} new\n' -X POST \
            "$B/v1/experiments" --data-binary "$(spec "\"name\": \"w$1-$k\"")"
    done > "$t/writer.$1"
}
req GET /metrics >/dev/null
c0=$(grep '^cod_store_commits_total' "$t/body" | cut -d' ' -f2)
pids=(); for i in $(seq $N); do writer "$i" & pids+=($!); done
wait "${pids[@]}"
req GET /metrics >/dev/null
c1=$(grep '^cod_store_commits_total' "$t/body" | cut -d' ' -f2)
new=$(cat "$t"/writer.* | grep -c '^201 new'); keyed=$(cat "$t"/writer.* | grep -c '^201 key')
bad=$(cat "$t"/writer.* | grep -c '^422 bad')
is "every write answered: the new ones and the keyed ones 201, the reused keys 422" \
    "$new $keyed $bad" "$((N * PER / 2)) $((N * PER)) $((N * PER))"
is "the database holds exactly the acknowledged experiments" \
    "$(q "SELECT count(*) FROM experiments")" "$((N * PER / 2 + N))"
is "nothing of the refused ones" "$(q "SELECT count(*) FROM experiments WHERE name LIKE 'other%'")" 0
# how much they shared depends on how they overlapped: said, not checked
echo "  $((N * PER * 5 / 2)) writes, $((c1 - c0)) commits"
is "integrity_check" "$(q 'PRAGMA integrity_check')" ok
stop_server
