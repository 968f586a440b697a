#!/usr/bin/env bash
# A disk outage longer than a lease costs a running experiment nothing: the
# real server on the failing disk of tests/faulty_vfs.h (writes and fsyncs
# fail: ENOSPC) with a 3-second lease and a reaper every second, a real
# cod-worker training. The disk stays full until the lease the database
# holds has lapsed (the heartbeats cannot be written); once it mends, the
# heartbeats the server kept in memory reach the database before its
# reaper looks, so the run is not taken from its worker: no attempt spent,
# one run, the loss curve an uninterrupted run's.
cd "$(dirname "$0")/.."
. tests/worker_helpers.bash
need_faulty_disk server_lease_outage
make_data
# long enough to train on through the outage and past the reaper's next look
export STEPS=3000 CKPT=500
train_ref
start_faulty_server --lease-seconds 3 --reap-seconds 1
await "the failing disk under the server" grep -q "faulty_vfs: installed" "$t/server.log"

e=$(submit "$(wspec trained)")
start_worker a --max-jobs 1
begun() { [ "$(local_step "$e")" -ge 20 ] 2>/dev/null; }
await "the worker's run begun" begun
# the lease as the database holds it: seconds left (negative: lapsed), and the run's state
db_lease() {
    sqlite3 "$t/cod.db" "SELECT state || ' ' || (lease_expires - (julianday('now') - 2440587.5) * 86400.0)
                         FROM runs WHERE experiment_id = $e ORDER BY id DESC LIMIT 1"
}
lapsed_on_disk() { db_lease | awk '$1 == "active" && $2 < 0 { ok = 1 } END { exit !ok }'; }
echo "write sync ENOSPC" > "$t/disk"
check "disk full: the server's writes fail" poll grep -q "faulty_vfs: a write of .*cod.db-wal fails" "$t/server.log"
check "disk full: the lease the database holds lapses, the heartbeats unwritten" poll lapsed_on_disk
down_at=$(local_step "$e")
trains_on() { [ "$(local_step "$e")" -ge $((down_at + 20)) ] 2>/dev/null; }
check "disk full: the worker trains on past the lapsed lease" poll trains_on
rm "$t/disk"
# either the heartbeats kept in memory are written (the lease runs again)
# or the reaper took the run (lost, requeued): whichever comes first
settled() { db_lease | awk '($1 == "active" && $2 > 0) || $1 != "active" { ok = 1 } END { exit !ok }'; }
check "the disk mended: the lease settles" poll settled
is "the disk mended: the run is still its worker's, the lease running again" \
    "$(db_lease | awk '{ print $1, ($2 > 0 ? "running" : "lapsed") }')" "active running"
ended() { ! state_is "$e" running; }
await "the experiment to end" ended
is "it succeeded" "$(field "$e" state)" succeeded
is "no attempt spent" "$(sqlite3 "$t/cod.db" "SELECT attempts FROM experiments WHERE id = $e")" 0
is "one run" "$(sqlite3 "$t/cod.db" "SELECT count(*) FROM runs WHERE experiment_id = $e")" 1
is "the reaper took no lease" "$(grep -c 'lapsed lease' "$t/server.log")" 0
is "the loss curve is an uninterrupted run's" "$(curve "$e")" "$(ref_curve "$t/ref/metrics.jsonl")"
wait "${WPID[a]}"
stop_server
