# Helpers for the tests/server_*.sh end-to-end tests: a real bin/cod-server
# (or $COD_SERVER_BIN: tests/server_tsan.sh's build) on an ephemeral
# loopback port, curl as the client. Sourced, not a test (tests/run.sh runs
# only *.sh).
. tests/lib.sh
t=$(mktemp -d /tmp/cod-server-XXXXXX)
SPID=
cleanup() { [ -n "$SPID" ] && { kill -9 "$SPID"; wait "$SPID"; } 2>/dev/null; rm -rf "$t"; }
trap cleanup EXIT

# Tiny byte-level shards for specs to point at (one document, all of it
# to train on: the specs use the training shards for val too).
make_data() {
    head -c 30000 /dev/urandom | base64 > "$t/text.txt"
    bin/cod-prep --tokenizer bytes --val-fraction 0 --out "$t/data" "$t/text.txt" >/dev/null 2>&1
}
spec() { # extra top-level fields (JSON members), may be empty; $TRAIN, $RES replace the train and resources objects
    printf '{"model": {"dim": 32, "n_layers": 2, "n_heads": 2, "ffn_dim": 64}, "data": {"train": "%s/data/train_*.bin", "val": "%s/data/train_*.bin"}, "train": %s, "resources": %s%s}' \
        "$t" "$t" "${TRAIN:-{\"steps\": 10, \"seq_len\": 16, \"batch_seqs\": 2, \"micro_batch\": 2\}}" "${RES:-{\"device\": \"cpu\"\}}" "${1:+, $1}"
}
# the server's port file written, or the server gone (it refused its flags or its database)
port_or_gone() { [ -s "$t/port" ] || ! kill -0 "$SPID" 2>/dev/null; }
start_server() { # extra flags; sets SPID, B
    rm -f "$t/port"
    "${COD_SERVER_BIN:-bin/cod-server}" --listen 127.0.0.1:0 --db "$t/cod.db" --port-file "$t/port" "$@" \
        2>>"$t/server.log" &
    SPID=$!
    await "cod-server to write its port file" port_or_gone
    [ -s "$t/port" ] || { echo "FAIL cod-server did not start: $(tail -3 "$t/server.log")"; return 1; }
    B="http://127.0.0.1:$(cat "$t/port")"
}
stop_server() { kill -TERM "$SPID" 2>/dev/null; wait "$SPID"; local rc=$?; SPID=; return $rc; }
# req METHOD PATH [BODY] [curl args...]: prints the status; the body lands in $t/body
req() {
    local m=$1 p=$2 body=${3-}; shift 2; [ $# -gt 0 ] && shift
    if [ -n "$body" ]; then
        curl -s -m "$WAIT_LIMIT" -o "$t/body" -w '%{http_code}' -X "$m" "$B$p" --data-binary "$body" "$@"
    else
        curl -s -m "$WAIT_LIMIT" -o "$t/body" -w '%{http_code}' -X "$m" "$B$p" "$@"
    fi
}
# the first value of a scalar JSON member in $t/body (compact JSON)
jget() { grep -o "\"$1\":\(\"[^\"]*\"\|[^,}]*\)" "$t/body" | head -1 | cut -d: -f2- | tr -d '"'; }
# is NAME ACTUAL EXPECTED; an empty ACTUAL never passes (a failed command is not a match)
is() { if [ -n "$2" ] && [ "$2" = "$3" ]; then echo "PASS $1"; else echo "FAIL $1 (got '${2:0:200}', want '${3:0:200}')"; fi; }
