#!/usr/bin/env bash
# cod-server under concurrent use, and across a kill -9.
# Concurrency: submitters and simulated workers at once: no experiment
# leased twice, no point duplicated, no "database is locked" (or any 5xx)
# reaching a client. Durability: kill -9 during a burst of submissions and
# metric reports; after a restart every acknowledged (2xx) write is there and
# PRAGMA integrity_check says ok.
cd "$(dirname "$0")/.." && . tests/server_helpers.bash
make_data
SPEC=$(spec)
N_SUB=6 PER_SUB=30 N_WORK=4

# No lease may lapse in this test, however slowly a loaded machine serves it.
LONG=3600

# --- concurrency
start_server --lease-seconds $LONG --log-requests 0
submitter() { # i
    for _ in $(seq $PER_SUB); do
        wcurl -s -m "$WAIT_LIMIT" -o /dev/null -w '%{http_code}\n' -X POST "$B/v1/experiments" --data-binary "$SPEC" >> "$t/sub.$1"
    done
}
points() { # steps 1..20 of train/loss and of one layer series
    local p="" s
    for s in $(seq 20); do p="$p{\"step\": $s, \"name\": \"train/loss\", \"value\": $s.5}, {\"step\": $s, \"name\": \"layer/out_var\", \"layer\": 1, \"value\": 2},"; done
    echo "{\"points\": [${p%,}]}"
}
BATCH=$(points)
worker() { # i: leases until the queue is empty once every submission is in
    local w code run exp body
    wcurl -s -m "$WAIT_LIMIT" -o "$t/w.$1" -X POST "$B/v1/workers/register" -d '{"device": "cpu"}'
    w=$(grep -o '"id":[0-9]*' "$t/w.$1" | cut -d: -f2)
    while :; do
        code=$(wcurl -s -m "$WAIT_LIMIT" -o "$t/l.$1" -w '%{http_code}' -X POST "$B/v1/workers/$w/lease" -d '{"wait": 0.2}')
        if [ "$code" = 204 ]; then [ -e "$t/submitted" ] && return; continue; fi
        [ "$code" = 200 ] || { echo "lease $code $(cat "$t/l.$1")" >> "$t/bad"; return; }
        run=$(grep -o '"run":[0-9]*' "$t/l.$1" | cut -d: -f2)
        exp=$(grep -o '"experiment":[0-9]*' "$t/l.$1" | cut -d: -f2)
        echo "$exp" >> "$t/leased"
        for call in "heartbeat {\"step\": 5}" "metrics $BATCH" "metrics $BATCH" "finish {\"outcome\": \"succeeded\"}"; do
            code=$(wcurl -s -m "$WAIT_LIMIT" -o "$t/r.$1" -w '%{http_code}' -X POST "$B/v1/runs/$run/${call%% *}" --data-binary "${call#* }")
            [ "$code" = 200 ] || echo "${call%% *} $code $(cat "$t/r.$1")" >> "$t/bad"
        done
    done
}
pids=()
for i in $(seq $N_WORK); do worker "$i" & pids+=($!); done
subs=()
for i in $(seq $N_SUB); do submitter "$i" & subs+=($!); done
wait "${subs[@]}"
touch "$t/submitted"
wait "${pids[@]}"
total=$((N_SUB * PER_SUB))
check "every submission acknowledged (201)" bash -c "[ \$(cat '$t'/sub.* | grep -c '^201$') = $total ]"
check "no error reached a worker" bash -c "[ ! -s '$t/bad' ] || { cat '$t/bad' >&2; false; }"
check "every experiment leased exactly once" bash -c "[ \$(wc -l < '$t/leased') = $total ] && [ \$(sort -u '$t/leased' | wc -l) = $total ]"
req GET "/v1/experiments?state=succeeded&limit=1000" >/dev/null
check "every experiment succeeded" bash -c "[ \$(grep -o '\"id\":' '$t/body' | wc -l) = $total ]"
dup=0
for e in $(sort -u "$t/leased" | shuf -n 5 --random-source=/dev/zero); do
    req GET "/v1/experiments/$e/metrics?name=train/loss" >/dev/null
    [ "$(grep -o '\],\[' "$t/body" | wc -l)" = 19 ] || dup=1
done
check "no point duplicated by retried batches" test $dup = 0
check "no 'database is locked' anywhere" bash -c "! grep -qi 'locked' '$t'/server.log '$t'/l.* '$t'/r.* 2>/dev/null"
stop_server

# --- durability: kill -9 during a burst
rm -f "$t"/cod.db* "$t"/sub.* "$t/leased"
start_server --lease-seconds $LONG --log-requests 0
req POST /v1/experiments "$SPEC" >/dev/null
req POST /v1/workers/register '{"device": "cpu"}' >/dev/null; w=$(jget id)
req POST /v1/workers/$w/lease '{"wait": 1}' >/dev/null; run=$(jget run); exp=$(jget experiment)
# The bursts go on until the kill ends them (a request that finds no server:
# 000), so the kill lands in the middle of one however fast they run.
burst_submit() { # i
    while :; do
        wcurl -s -m "$WAIT_LIMIT" -o "$t/b.$1" -w '%{http_code}' -X POST "$B/v1/experiments" --data-binary "$SPEC" > "$t/c.$1"
        case $(cat "$t/c.$1") in
            201) grep -o '"id":[0-9]*' "$t/b.$1" | head -1 | cut -d: -f2 >> "$t/acked" ;;
            000) return ;;
        esac
    done
}
burst_report() {
    local k p s
    for ((k = 0; ; k++)); do
        p=""
        for s in $(seq $((k * 10 + 1)) $((k * 10 + 10))); do p="$p{\"step\": $s, \"name\": \"train/loss\", \"value\": 1.5},"; done
        case $(wcurl -s -m "$WAIT_LIMIT" -o /dev/null -w '%{http_code}' -X POST "$B/v1/runs/$run/metrics" --data-binary "{\"points\": [${p%,}]}") in
            200) echo $((k * 10 + 10)) >> "$t/acked_steps" ;;
            000) return ;;
        esac
    done
}
bp=()
for i in 1 2 3 4; do burst_submit "$i" & bp+=($!); done
burst_report & bp+=($!)
under_way() { [ "$(wc -l < "$t/acked" 2>/dev/null)" -ge 20 ] && [ -s "$t/acked_steps" ]; }
check "the burst under way: 20 submissions and a metric batch acknowledged" poll under_way
kill -9 "$SPID"; wait "$SPID" 2>/dev/null; SPID=
wait "${bp[@]}"
echo "  killed with $(wc -l < "$t/acked") submissions and $(wc -l < "$t/acked_steps") metric batches acknowledged"
start_server --lease-seconds $LONG --log-requests 0
req GET "/v1/experiments?limit=1000" >/dev/null
grep -o '"id":[0-9]*' "$t/body" | cut -d: -f2 | sort > "$t/present"
check "every acknowledged submission survived kill -9" bash -c "[ -z \"\$(sort '$t/acked' | comm -23 - '$t/present')\" ]"
req GET "/v1/experiments/$exp/metrics?name=train/loss" >/dev/null
missing=0
for s in $(cat "$t/acked_steps"); do grep -q "\[$s,1.5\]" "$t/body" || missing=$((missing + 1)); done
check "every acknowledged metric batch survived ($(wc -l < "$t/acked_steps") batches)" test "$missing" = 0
check "the run still holds its lease after the restart" test "$(req POST /v1/runs/$run/heartbeat '{}')" = 200
stop_server
check "integrity_check ok after kill -9 and restart" bash -c "bin/cod-server --db '$t/cod.db' --check-db | grep -qx ok"
