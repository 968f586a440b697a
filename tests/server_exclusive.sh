#!/usr/bin/env bash
# One port, one server; one database, one server. A second cod-server on a
# port that is taken exits with an error naming the port (it used to share
# it through SO_REUSEPORT and answer some requests from its own, empty
# database); a second cod-server on the same database file is refused
# whatever port it asks for, also through another path to the file. The
# lock goes with the server: after a clean stop or a kill -9 the database
# can be served again.
cd "$(dirname "$0")/.." && . tests/worker_helpers.bash
make_data
start_server
port=${B##*:}
e=$(submit "$(spec)")
check "the first server serves" [ -n "$e" ]

# second NAME ARGS...: a second cod-server in the background; waits until it
# has exited (status: its exit status) or says it is listening (status
# empty, pid2 its process, left running).
second() {
    local name=$1; shift
    bin/cod-server "$@" >"$t/$name.log" 2>&1 &
    pid2=$!
    status=
    ended() { ! kill -0 "$pid2" 2>/dev/null || grep -q 'listening on' "$t/$name.log"; }
    await "the second cod-server to exit or listen" ended
    kill -0 "$pid2" 2>/dev/null || { wait "$pid2"; status=$?; pid2=; }
    WPID[second]=$pid2  # the cleanup on exit kills it
}
end_second() { [ -z "$pid2" ] || { kill -9 "$pid2"; wait "$pid2"; } 2>/dev/null; unset 'WPID[second]'; }
second port --listen "127.0.0.1:$port" --db "$t/other.db"
is "a taken port: the second server exits 1" "$status" 1
check "a taken port: the error names the address and the reason" \
    grep -q "cannot listen on 127.0.0.1:$port: Address already in use" "$t/port.log"
check "a taken port: the second server made no database" [ ! -e "$t/other.db" ]
answers=$(for _ in $(seq 10); do get /v1/experiments | js "j.experiments.length"; done | sort | uniq -c | tr -s ' ')
is "10 requests, each answered from the first server's database" "$answers" " 10 1"
end_second

second db --listen 127.0.0.1:0 --db "$t/cod.db"
end_second
is "the same database on another port: refused, exit 1" "$status" 1
check "the same database: the error names it and the server holding it" \
    grep -q "database $t/cod.db is in use by another cod-server, pid $SPID" "$t/db.log"
ln -s "$t/cod.db" "$t/alias.db"
second alias --listen 127.0.0.1:0 --db "$t/alias.db"
end_second
is "the same database through a symlink: refused" "$status" 1

stop_server
restart_server
is "after a clean stop, the database is served again" "$(get "/v1/experiments/$e" | js j.id)" "$e"
kill -9 "$SPID"; wait "$SPID" 2>/dev/null
restart_server
is "after a kill -9, the database is served again" "$(get "/v1/experiments/$e" | js j.id)" "$e"
