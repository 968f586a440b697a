#!/usr/bin/env bash
# The dashboard in headless Chromium against a real cod-server holding real
# experiments: a sweep (pre, lns) and a third experiment, each trained by
# bin/cod-train on its leased spec and reported through the worker protocol;
# the first two finished, the third running half way, a fourth waiting for
# the third.
# tests/dashboard/drive.js then checks the table, the curves, the per-layer
# charts, the sweep grid, the workers, a server restart, and saves
# tests/out/dashboard.png for a person to look at.
cd "$(dirname "$0")/.." && . tests/server_helpers.bash
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser)}
if [ -z "$CHROMIUM" ] || ! command -v node >/dev/null; then
    echo "FAIL dashboard: needs chromium and node (scripts/deps.sh test installs them)"; exit 1
fi
make_data
# the runs it leases are reported at leisure: leases that no load outlasts
start_server --token T --worker-token W --lease-seconds 3600
port=$(cat "$t/port")
C=(-H "Authorization: Bearer T")
WK=(-H "Authorization: Bearer W")
L=4 STEPS=60
spec_of() { # norm name
    printf '{"name": "%s", "norm": "%s", "model": {"dim": 32, "n_layers": %d, "n_heads": 2, "ffn_dim": 64},
 "data": {"train": "%s/data/train_*.bin", "val": "%s/data/train_*.bin"},
 "train": {"steps": %d, "seq_len": 16, "batch_seqs": 2, "micro_batch": 2, "warmup": 5},
 "eval": {"every": 20, "tokens": 512}, "stats": {"every": 10}, "resources": {"device": "cpu"}}' \
        "$2" "$1" "$L" "$t" "$t" "$STEPS"
}
code=$(req POST /v1/sweeps "{\"base\": $(spec_of pre sweep), \"grid\": {\"norm\": [\"pre\", \"lns\"]}}" "${C[@]}")
check "sweep queued" test "$code" = 201
req POST /v1/experiments "$(spec_of pre half-way)" "${C[@]}" >/dev/null; e3=$(jget id)
# the fourth waits for the third (a chain): it shows waiting, and what for
req POST /v1/experiments "$(spec_of lns waiting | sed "s/^{/{\"after\": [$e3], /")" "${C[@]}" >/dev/null
req POST /v1/workers/register '{"name": "test-worker", "device": "cpu", "capacity": 3}' "${WK[@]}" >/dev/null
w=$(jget id)

# work LAST_STEP: leases the next experiment, trains its spec with cod-train,
# reports the points up to LAST_STEP; prints "experiment run" (failures go
# to stderr, where tests/run.sh sees them too)
work() {
    req POST "/v1/workers/$w/lease" '{"wait": 0}' "${WK[@]}" >/dev/null
    local exp run
    exp=$(jget experiment) run=$(jget run)
    node -e 'process.stdout.write(JSON.stringify(JSON.parse(require("fs").readFileSync(process.argv[1])).spec))' \
        "$t/body" > "$t/spec-$exp.json"
    OMP_NUM_THREADS=1 bin/cod-train "$t/spec-$exp.json" --out "$t/run-$exp" > "$t/train-$exp.log" 2>&1 ||
        echo "FAIL cod-train on experiment $exp: $(tail -3 "$t/train-$exp.log")" >&2
    awk -F'[:,]' -v last="$1" '$2 + 0 <= last' "$t/run-$exp/metrics.jsonl" | paste -sd, |
        sed 's/^/{"points": [/; s/$/]}/' > "$t/batch-$exp.json"
    code=$(req POST "/v1/runs/$run/metrics" "@$t/batch-$exp.json" "${WK[@]}" -H 'Content-Type: application/json')
    [ "$code" = 200 ] || echo "FAIL metrics of experiment $exp: $code $(cat "$t/body")" >&2
    req POST "/v1/runs/$run/heartbeat" "{\"step\": $1}" "${WK[@]}" >/dev/null
    echo "$exp $run"
}
read -r e1 r1 < <(work $STEPS)
read -r e2 r2 < <(work $STEPS)
read -r e3b _ < <(work $((STEPS / 2)))
check "the third lease is the separate experiment" test "$e3b" = "$e3"
for r in $r1 $r2; do req POST "/v1/runs/$r/finish" '{"outcome": "succeeded"}' "${WK[@]}" >/dev/null; done
req GET "/v1/experiments/$e1/layers?name=layer/out_var" "" "${C[@]}" >/dev/null
check "layer/out_var stored for layers 0..$L" test "$(grep -o '"layer":' "$t/body" | wc -l)" = $((L + 1))
req GET "/v1/experiments/$e1/layers/history?name=layer/out_var" "" "${C[@]}" >/dev/null
check "layers/history: every stats step, L+1 values each" \
    grep -q "\"steps\":\[0,10,20,30,40,50,60\],\"values\":\[\[[^]]*\(,[^],]*\)\{$L\}\]" "$t/body"
code=$(curl -s -D "$t/hdr" -o "$t/page" -w '%{http_code}' "$B/")
check "GET / serves the page without a token, revalidated" \
    bash -c "[ $code = 200 ] && grep -qi '^Content-Type: text/html' '$t/hdr' && grep -qi '^Cache-Control: no-cache' '$t/hdr' && grep -q '/static/app.js' '$t/page'"
etag=$(grep -i '^ETag:' "$t/hdr" | cut -d' ' -f2 | tr -d '\r')
check "an unchanged page is a 304" test "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$B/")" = 304
check "static files: type and bytes" bash -c "[ \"\$(curl -s -w '%{content_type}' -o '$t/js' '$B/static/vendor/uPlot.iife.min.js')\" = 'text/javascript; charset=utf-8' ] && cmp -s '$t/js' clients/web/vendor/uPlot.iife.min.js"
check "no file outside the dashboard" test "$(curl -s -o /dev/null -w '%{http_code}' "$B/static/../cod.db")" = 404

# The browser; drive.js asks (files in $t/sync) for the restart.
mkdir -p "$t/sync" tests/out
rm -f tests/out/dashboard.png
DASH_URL="$B/" DASH_TOKEN=T DASH_RESULTS="$t/results" DASH_SHOT=tests/out/dashboard.png \
DASH_SYNC="$t/sync" DASH_PROFILE="$t/profile" DASH_ROWS=4 DASH_LAYERS=$L DASH_STEPS=$STEPS \
DASH_PICK="$e1,$e2" DASH_FIRST="$e1,$e2,$e3" DASH_AFTER="$e3" DASH_FILTER="half=1" CHROMIUM="$CHROMIUM" \
DASH_WAIT_MS=$((WAIT_LIMIT * 1000)) node tests/dashboard/drive.js &
drv=$!
asked_or_ended() { [ -e "$t/sync/$1" ] || ! kill -0 "$drv" 2>/dev/null; }
wait_file() { # the driver's request, unless it has ended (its waits are bounded)
    poll asked_or_ended "$1" && [ -e "$t/sync/$1" ]
}
if wait_file stop; then
    stop_server
    touch "$t/sync/stopped"
    wait_file banner
    start_server --token T --worker-token W --lease-seconds 3600 --listen "127.0.0.1:$port"
    touch "$t/sync/started"
fi
wait "$drv"
if [ -s "$t/results" ]; then
    while read -r ok name; do check "$name" test "$ok" = 1; done < "$t/results"
else
    echo "FAIL the browser driver wrote no results"
fi
