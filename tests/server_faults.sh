#!/usr/bin/env bash
# cod-server on a failing disk and under another process's lock: the real
# server with the failing disk of tests/faulty_vfs.h preloaded (while
# $t/disk exists, the SQLite operations it names fail: ENOSPC, EIO), curl
# and a real cod-worker as its clients, the sqlite3 shell as the other
# process. A client sees 503 unavailable with the reason and retries;
# nothing acknowledged is lost, nothing refused is half there, and the
# server goes on once the disk or the lock does. bench/RESULTS.md
# ("Faults") shows what each client saw.
cd "$(dirname "$0")/.."
. tests/worker_helpers.bash
need_faulty_disk server_faults
make_data
# long enough that the disk fails and mends while the worker trains
export STEPS=1000 CKPT=100
train_ref
REF="$t/ref/metrics.jsonl"
logged() { grep -q "$1" "$t/server.log"; }
# the error of the last answer, as "code: message"
error_of() { node -e 'const e=JSON.parse(require("fs").readFileSync(process.argv[1])).error; console.log(e.code + ": " + e.message)' "$t/body"; }
names() { get "/v1/experiments?limit=100" | js "j.experiments.map(e => e.name).reverse().join(',')"; }

# The reaper runs once, at the start: the only writes are the tests' and the worker's.
# One HTTP thread: a write that waits must not hold up the connections it serves.
start_faulty_server --lease-seconds 60 --lock-timeout 60 --reap-seconds 3600 --threads 1
check "the failing disk is under the real server" poll logged "faulty_vfs: installed"

# --- a full disk, then a failing fsync, while a worker trains and a client submits
e1=$(submit "$(wspec trained)")
start_worker a --max-jobs 1
begun() { [ "$(local_step "$e1")" -ge 20 ] 2>/dev/null; }
await "the worker's run begun" begun
echo "write sync ENOSPC" > "$t/disk"
check "disk full: a write of the WAL fails under the server" poll logged "faulty_vfs: a write of .*cod.db-wal fails: No space left on device"
is "disk full: a submission is answered 503" \
    "$(req POST /v1/experiments "$(wspec refused)" -H 'Idempotency-Key: k-full')" 503
is "disk full: the error says the database is unavailable, and why" "$(error_of)" \
    "unavailable: the database is unavailable (database or disk is full); the request was not acknowledged: try it again"
is "disk full: reads go on, without the refused experiment" "$(names)" trained
waits() { grep -q "server unreachable (the database is unavailable (database or disk is full).*reports wait on disk" "$t/worker-a.log"; }
check "disk full: the worker's reports get 503 and wait on its disk" poll waits
down_at=$(local_step "$e1")
trains_on() { [ "$(local_step "$e1")" -ge $((down_at + 20)) ] 2>/dev/null; }
check "disk full: the worker trains on" poll trains_on
echo "sync EIO" > "$t/disk"
check "fsync fails: an fsync of the WAL fails under the server" poll logged "faulty_vfs: an fsync of .*cod.db-wal fails: Input/output error"
is "fsync fails: a submission is answered 503" \
    "$(req POST /v1/experiments "$(wspec refused)" -H 'Idempotency-Key: k-full')" 503
is "fsync fails: the error says why" "$(error_of)" \
    "unavailable: the database is unavailable (disk I/O error); the request was not acknowledged: try it again"
is "fsync fails: not there" "$(names)" trained
rm "$t/disk"
is "the disk mended: the same submission is created" \
    "$(req POST /v1/experiments "$(wspec refused)" -H 'Idempotency-Key: k-full')" 201
await "experiment 1 succeeded" state_is "$e1" succeeded
is "the disk mended: the worker's run succeeded" "$(field "$e1" state)" succeeded
check "the disk mended: the worker sent the reports that waited" grep -q "sending the reports that waited" "$t/worker-a.log"
is "nothing lost: the loss curve is an uninterrupted run's, each step once" "$(curve "$e1")" "$(ref_curve "$REF")"
is "nothing lost: every point of the run is stored" "$(server_points "$e1" "$t/work/experiments/$e1/metrics.jsonl" | md5sum)" \
    "$(file_points "$t/work/experiments/$e1/metrics.jsonl" | md5sum)"
is "nothing lost: the experiments acknowledged, each once" "$(names)" trained,refused
wait "${WPID[a]}"

# --- another process holds the write lock: a write waits for it (up to --lock-timeout)
mkfifo "$t/sql"
sqlite3 "$t/cod.db" < "$t/sql" > "$t/sqlite.log" 2>&1 &
SQPID=$!
exec 7> "$t/sql"
# the shell waits for the lock itself: the server may be mid-write (a reaper
# tick, heartbeats flushed) just as the shell asks for it
echo ".timeout 60000" >&7
# held: another writer is refused at once
held() { ! sqlite3 -cmd '.timeout 0' "$t/cod.db" 'BEGIN IMMEDIATE; ROLLBACK;' 2>/dev/null; }
echo "BEGIN IMMEDIATE;" >&7
check "lock: the sqlite3 shell holds the write lock (BEGIN IMMEDIATE)" poll held
is "lock: reads go on (WAL)" "$(names)" trained,refused
# (7>&-: the shell's input must end when the test closes it, not live on in children)
wcurl -s -m 120 -o "$t/waited.json" -w '%{http_code}' -X POST "$B/v1/experiments" \
    --data-binary "$(wspec waited)" > "$t/waited.code" 7>&- &
CPID=$!
check "lock: the write waits, and the server says so" poll logged "the database is locked by another connection; waiting up to 60 s"
# it waits on a write thread (api/writes.h), not on the one HTTP thread
is "lock: while the write waits, the one HTTP thread answers a read" "$(names)" trained,refused
echo "COMMIT;" >&7
wait "$CPID"
is "lock let go within the timeout: the write succeeds" "$(cat "$t/waited.code")" 201
is "lock let go: it is there" "$(names)" trained,refused,waited

# --- held past --lock-timeout: 503, and the server goes on when it is let go
stop_server
start_server --lease-seconds 60 --lock-timeout 0.5 --reap-seconds 3600 7>&-
echo "BEGIN EXCLUSIVE;" >&7
check "lock past the timeout: the sqlite3 shell holds BEGIN EXCLUSIVE" poll held
is "lock past the timeout: reads go on (in WAL, EXCLUSIVE blocks only writers)" "$(names)" trained,refused,waited
is "lock past the timeout: a submission is answered 503" \
    "$(req POST /v1/experiments "$(wspec late)" -H 'Idempotency-Key: k-lock')" 503
is "lock past the timeout: the error says why" "$(error_of)" \
    "unavailable: the database is unavailable (database is locked); the request was not acknowledged: try it again"
is "lock past the timeout: not there" "$(names)" trained,refused,waited
echo "COMMIT;" >&7
free() { ! held; }
check "lock past the timeout: let go" poll free
is "lock let go: the same submission is created" \
    "$(req POST /v1/experiments "$(wspec late)" -H 'Idempotency-Key: k-lock')" 201

# --- an outside reader (what .backup is) holds a snapshot: writes go on, never waiting
echo "BEGIN; SELECT count(*) FROM experiments;" >&7
reading() { grep -qx 4 "$t/sqlite.log"; }
check "reader: the sqlite3 shell reads inside a transaction" poll reading
waits_before=$(grep -c "waiting up to" "$t/server.log")
is "reader: a submission meanwhile is created" "$(req POST /v1/experiments "$(wspec beside)")" 201
is "reader: without waiting for a lock" "$(grep -c "waiting up to" "$t/server.log")" "$waits_before"
echo "COMMIT;" >&7
exec 7>&-
wait "$SQPID"
sqlite3 "$t/cod.db" ".backup $t/backup.db"
is "reader: a .backup beside the server holds every acknowledged experiment" \
    "$(sqlite3 "$t/backup.db" 'SELECT group_concat(name) FROM (SELECT name FROM experiments ORDER BY id)')" \
    trained,refused,waited,late,beside
is "reader: the backup is sound" "$(sqlite3 "$t/backup.db" 'PRAGMA integrity_check')" ok
stop_server
is "after it all: the database is sound" "$(bin/cod-server --db "$t/cod.db" --check-db 2>&1)" ok
# a commit that failed is rolled back by SQLite itself; a ROLLBACK after
# it would log "cannot rollback - no transaction is active" at each fault
is "after it all: no ROLLBACK of a transaction SQLite had already ended" \
    "$(grep -c 'cannot rollback' "$t/server.log")" 0
