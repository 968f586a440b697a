# Helpers for the worker tests (tests/worker_*.sh): real cod-server, real
# cod-workers (one thread each, so runs are bit-for-bit reproducible), and
# node for reading JSON answers. Sourced, not a test.
. tests/server_helpers.bash
declare -A WPID
cleanup_workers() { for w in "${!WPID[@]}"; do { kill -9 "${WPID[$w]}"; wait "${WPID[$w]}"; } 2>/dev/null; done; cleanup; }
trap cleanup_workers EXIT

# A spec for the worker tests: sized so a run takes a few seconds on one thread.
wspec() { # name [data dir]
    printf '{"name": "%s", "model": {"dim": 48, "n_layers": 3, "n_heads": 2, "ffn_dim": 128}, "data": {"train": "%s/train_*.bin", "val": "%s/train_*.bin"}, "train": {"steps": %d, "seq_len": 32, "batch_seqs": 4, "micro_batch": 4, "lr": 0.003}, "eval": {"every": 20, "tokens": 2048}, "stats": {"every": 20}, "checkpoint": {"every": %d}, "resources": {"device": "cpu"}}' \
        "$1" "${2:-$t/data}" "${2:-$t/data}" "${STEPS:-120}" "${CKPT:-20}"
}
start_worker() { # name [flags]; the worker's stdout goes to $t/worker-NAME.log
    local n=$1; shift
    ${COD_WORKER:-bin/cod-worker} --server "$B" --work-dir "$t/work" --threads 1 --name "$n" --wait 5 "$@" \
        >>"$t/worker-$n.log" 2>&1 &
    WPID[$n]=$!
}
# restart_server: the same port and database (after a kill -9)
restart_server() {
    local port=${B##*:}
    "${COD_SERVER_BIN:-bin/cod-server}" --listen "127.0.0.1:$port" --db "$t/cod.db" "$@" 2>>"$t/server.log" &
    SPID=$!
    await "cod-server to answer on port $port again" answers_or_gone
    kill -0 "$SPID" 2>/dev/null || { echo "FAIL cod-server did not restart: $(tail -3 "$t/server.log")"; return 1; }
}
answers_or_gone() { curl -s -m "$WAIT_LIMIT" "$B/healthz" >/dev/null || ! kill -0 "$SPID" 2>/dev/null; }
# js EXPR: evaluates EXPR over the JSON on stdin bound to j; arrays print one item a line
js() {
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);const r=eval(process.argv[1]);console.log(Array.isArray(r)?r.join("\n"):r)})' "$1"
}
get() { curl -s -m "$WAIT_LIMIT" "$B$1"; }
field() { get "/v1/experiments/$1" | js "j.$2"; } # experiment id, field path
state_is() { [ "$(field "$1" state)" = "$2" ]; }
# the newest step in the experiment's metrics.jsonl in the shared work dir:
# what the worker has trained, without the lag of a heartbeat
local_step() { newest_step "$t/work/experiments/$1/metrics.jsonl"; }
local_step_at_least() { [ "$(local_step "$1")" -ge "$2" ] 2>/dev/null; }
# prec9: every number in the text on stdin rounded to 9 significant digits,
# as metrics.jsonl writes them (%.9g), so server and file values compare
prec9() {
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(s.replace(/-?[0-9][0-9.]*(e[-+]?[0-9]+)?/gi,x=>String(Number(Number(x).toPrecision(9))))))'
}
# the train/loss curve of an experiment as "step value" lines
curve() { get "/v1/experiments/$1/metrics?name=${2:-train/loss}" | js "j.series['${2:-train/loss}'].map(p=>p[0]+' '+p[1])" | prec9; }
ref_curve() { # metrics.jsonl [name]
    grep "\"name\": \"${2:-train/loss}\"" "$1" | grep -v '"layer"' |
        sed 's/{"step": \([0-9]*\), .*"value": \([^}]*\)}/\1 \2/' | prec9
}
# values of one per-layer metric at a step, space-separated
layers_at() { get "/v1/experiments/$1/layers?name=$2&step=$3" | js "j.layers.map(l=>l.value).join(' ')" | prec9; }
ref_layers_at() { grep "\"step\": $3, \"name\": \"$2\"" "$1" | sed 's/.*"value": \([^}]*\)}/\1/' | paste -sd' ' | prec9; }
submit() { req POST /v1/experiments "$1" >/dev/null; jget id; } # spec → experiment id
# submit_vanishing: a job whose data is deleted right after it is accepted; prints its id
submit_vanishing() {
    cp -r "$t/data" "$t/data2"
    submit "$(wspec vanished "$t/data2")"
    rm -rf "$t/data2"
}
# Every metric point, as sorted "name step layer value" lines (layer -1 for a
# scalar, values at 9 digits), so that what the server holds and what a run
# wrote compare line for line: a point missing, extra or doubled shows.
# A per-layer null is left out on both sides: layers/history pads with null.
server_points() { # experiment id; the per-layer names are those of metrics.jsonl FILE
    local e=$1 file=$2 name
    {
        get "/v1/experiments/$e/metrics" |
            js "Object.entries(j.series).flatMap(([n, s]) => s.map(p => n + ' ' + p[0] + ' -1 ' + p[1]))"
        for name in $(grep -o '"name": "[^"]*", "layer"' "$file" | cut -d'"' -f4 | sort -u); do
            get "/v1/experiments/$e/layers/history?name=$name" |
                js "j.steps.flatMap((s, i) => j.values[i].map((v, l) => v === null ? '' : '$name ' + s + ' ' + l + ' ' + v)).filter(x => x)"
        done
    } | grep . | prec9 | LC_ALL=C sort
}
file_points() { # metrics.jsonl
    node -e 'for (const l of require("fs").readFileSync(process.argv[1], "utf8").split("\n")) {
        if (!l) continue; const p = JSON.parse(l);
        if (p.layer !== undefined && p.value === null) continue;
        console.log(p.name + " " + p.step + " " + (p.layer ?? -1) + " " + p.value); }' "$1" |
        prec9 | LC_ALL=C sort
}

# The fault tests (tests/server_faults.sh, server_lease_outage.sh): the
# failing disk of tests/faulty_vfs.h (while $t/disk exists, the SQLite
# operations it names fail) and the sqlite3 shell, or a FAIL naming the test
need_faulty_disk() { # test name
    VFS=$PWD/build/test-lib/faulty_vfs.so
    [ -f "$VFS" ] || { echo "FAIL $1: $VFS is not built (make build-tests)"; exit 1; }
    command -v sqlite3 >/dev/null || { echo "FAIL $1: needs the sqlite3 shell (scripts/deps.sh test)"; exit 1; }
}
# start_server with the failing disk preloaded into cod-server alone
start_faulty_server() { # flags
    rm -f "$t/port"
    LD_PRELOAD=$VFS COD_FAULTY_VFS=$t/disk bin/cod-server --listen 127.0.0.1:0 --db "$t/cod.db" \
        --port-file "$t/port" "$@" 2>>"$t/server.log" &
    SPID=$!
    await "the server's port file" test -s "$t/port"
    B="http://127.0.0.1:$(cat "$t/port")"
}
# wspec's experiment trained alone by cod-train: $t/ref/metrics.jsonl, the
# curve an uninterrupted run gives
train_ref() {
    wspec ref > "$t/ref.json"
    bin/cod-train "$t/ref.json" --out "$t/ref" --threads 1 >/dev/null 2>&1
}
