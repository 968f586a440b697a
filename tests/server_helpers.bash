# Helpers for the tests/server_*.sh end-to-end tests: a real bin/cod-server
# (or $COD_SERVER_BIN: tests/server_tsan.sh's build) on an ephemeral
# loopback port, curl as the client. Sourced, not a test (tests/run.sh runs
# only *.sh).
. tests/lib.sh
t=$(mktemp -d /tmp/cod-server-XXXXXX)
# the data a test's specs name lies in its own folder, or in var/data (the
# default corpus): the servers' data roots (--data-root), for every server a
# test starts
export COD_DATA_ROOT=$t:var/data
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
# The secrets a worker is given (docs/api.md, "Who holds what"): its own at
# registration, a run's rank's with each lease. keep_secrets PATH FILE keeps
# those of an answer in FILE to PATH (files: req runs in subshells);
# secret_args PATH BODY prints, a line each, the curl arguments that send
# the one a call to PATH needs, when it is known.
mkdir -p "$t/secrets"
keep_secrets() {
    local p=$1 f=$2 id sec
    sec=$(grep -o '"secret":"[^"]*"' "$f" 2>/dev/null | head -1 | cut -d'"' -f4)
    [ -n "$sec" ] || return 0
    if [ "$p" = /v1/workers/register ]; then
        id=$(grep -o '"id":[0-9]*' "$f" | head -1 | cut -d: -f2)
        echo "$sec" > "$t/secrets/worker-$id"
    elif [[ $p =~ ^/v1/workers/[0-9]+/lease ]]; then
        id=$(grep -o '"run":[0-9]*' "$f" | head -1 | cut -d: -f2)
        echo "$sec" > "$t/secrets/run-$id-$(grep -o '"rank":[0-9]*' "$f" | head -1 | cut -d: -f2)"
    fi
}
secret_args() {
    local p=$1 body=$2 rank=0 f=
    if [[ $p =~ ^/v1/workers/([0-9]+)/(lease|offline) ]]; then
        f=$t/secrets/worker-${BASH_REMATCH[1]}
        [ -s "$f" ] && printf '%s\n' -H "Cod-Worker-Secret: $(cat "$f")"
    elif [[ $p =~ ^/v1/runs/([0-9]+)/ ]]; then
        f=$t/secrets/run-${BASH_REMATCH[1]}
        [[ $body =~ \"rank\":\ *([0-9]+) ]] && rank=${BASH_REMATCH[1]}
        [[ $p =~ [?\&]rank=([0-9]+) ]] && rank=${BASH_REMATCH[1]}
        [ -s "$f-$rank" ] && printf '%s\n' -H "Cod-Lease-Secret: $(cat "$f-$rank")"
    fi
    return 0
}
# req METHOD PATH [BODY] [curl args...]: prints the status; the body lands in
# $t/body. A body goes as JSON; a worker's call carries the secret it was
# given, unless the arguments name one.
req() {
    local m=$1 p=$2 body=${3-} code; shift 2; [ $# -gt 0 ] && shift
    local extra=()
    [[ "$*" == *Cod-Worker-Secret* || "$*" == *Cod-Lease-Secret* ]] || mapfile -t extra < <(secret_args "$p" "$body")
    if [ -n "$body" ]; then
        code=$(curl -s -m "$WAIT_LIMIT" -o "$t/body" -w '%{http_code}' -X "$m" "$B$p" \
            -H 'Content-Type: application/json' --data-binary "$body" "${extra[@]}" "$@")
    else
        code=$(curl -s -m "$WAIT_LIMIT" -o "$t/body" -w '%{http_code}' -X "$m" "$B$p" "${extra[@]}" "$@")
    fi
    case $code in 200 | 201) keep_secrets "$p" "$t/body" ;; esac
    echo "$code"
}
# wcurl ARGS...: curl as cod-worker and the CLI call: a body (-d,
# --data-binary) goes as JSON, a worker's call carries its secret, and the
# secrets of a registration or lease answered into -o FILE are kept
wcurl() {
    local args=("$@") url= out= body= i extra=()
    for ((i = 0; i < ${#args[@]}; i++)); do
        case ${args[i]} in
        -o) out=${args[i + 1]} ;;
        -d | --data-binary) body=${args[i + 1]} ;;
        http://*) url=${args[i]} ;;
        esac
    done
    [ -n "$body" ] && extra+=(-H 'Content-Type: application/json')
    [[ "$*" == *Cod-Worker-Secret* || "$*" == *Cod-Lease-Secret* ]] ||
        mapfile -t -O ${#extra[@]} extra < <(secret_args "${url#"$B"}" "$body")
    curl "$@" "${extra[@]}"
    local rc=$?
    [ -n "$out" ] && [ -s "$out" ] && { local p=${url#"$B"}; keep_secrets "${p%%\?*}" "$out"; }
    return $rc
}
# the first value of a scalar JSON member in $t/body (compact JSON)
jget() { grep -o "\"$1\":\(\"[^\"]*\"\|[^,}]*\)" "$t/body" | head -1 | cut -d: -f2- | tr -d '"'; }
# is NAME ACTUAL EXPECTED; an empty ACTUAL never passes (a failed command is not a match)
is() { if [ -n "$2" ] && [ "$2" = "$3" ]; then echo "PASS $1"; else echo "FAIL $1 (got '${2:0:200}', want '${3:0:200}')"; fi; }
