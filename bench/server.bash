# A cod-server for a benchmark, sourced by bench/run.sh and bench/fleet.sh:
# a fresh database in the folder $sd, requests not logged, the data its
# specs name in $sd too (its data root).
#   server_up [SETTING...]   starts it, waits for its port file: $spid, $port
#   server_down              stops it
server_up() {
    rm -f "$sd"/cod.db* "$sd/port"
    bin/cod-server --listen 127.0.0.1:0 --db "$sd/cod.db" --port-file "$sd/port" --log-requests 0 \
        --data-root "$sd" "$@" 2>"$sd/server.log" &
    spid=$!
    # the port file is the event; a server that exits first is a failure
    until [ -s "$sd/port" ]; do
        kill -0 "$spid" 2>/dev/null ||
            { echo "bench: cod-server did not start:" >&2; tail -5 "$sd/server.log" >&2; return 1; }
        sleep 0.05
    done
    port=$(cat "$sd/port")
}
server_down() {
    kill -TERM "$spid"
    wait "$spid" || true
}
