#!/usr/bin/env bash
# cod-server end to end, curl as the client: every endpoint's happy path, the
# state machine (cancel queued and running, a lease that lapses), bad input
# (each a JSON error naming the problem, nothing written), auth, /metrics,
# long-poll, and a clean SIGTERM.
cd "$(dirname "$0")/.." && . tests/server_helpers.bash
make_data
# Until the section about a lapsing lease, nothing may lapse, however slowly
# the machine runs the requests in between: a long lease.
SERVE=(--token T --worker-token W --reap-seconds 0.1 --max-body 65536)
start_server "${SERVE[@]}" --lease-seconds 3600
C=(-H "Authorization: Bearer T")
WK=(-H "Authorization: Bearer W")
err_names() { # name, expected status, got status, text the error must contain
    if [ "$3" = "$2" ] && grep -q '"error":{' "$t/body" && grep -qF -- "$4" "$t/body"; then
        echo "PASS $1"; else echo "FAIL $1 (status $3): $(cat "$t/body")"; fi
}
count() { req GET "/v1/experiments?limit=1000" "" "${C[@]}" >/dev/null; grep -o '"id":' "$t/body" | wc -l; }

# --- auth
is "healthz needs no token" "$(req GET /healthz)" 200
code=$(req GET /v1/experiments); err_names "no token: 401" 401 "$code" unauthorized
code=$(req GET /v1/experiments "" -H "Authorization: Bearer X"); err_names "wrong token: 401" 401 "$code" unauthorized
code=$(req GET /v1/experiments "" "${WK[@]}"); err_names "worker token is not a client token" 401 "$code" unauthorized
code=$(req POST /v1/workers/register '{"device": "cpu"}' "${C[@]}"); err_names "client token is not a worker token" 401 "$code" unauthorized
is "readyz" "$(req GET /readyz "" "${C[@]}")" 200

# --- create, idempotency, show, list
code=$(req POST /v1/experiments "$(spec '"name": "one"')" "${C[@]}" -H "Idempotency-Key: k-1")
e1=$(jget id)
is "create: 201" "$code" 201
is "create: queued" "$(jget state)" queued
code=$(req POST /v1/experiments "$(spec '"name": "one"')" "${C[@]}" -H "Idempotency-Key: k-1")
check "Idempotency-Key: same experiment, nothing new" bash -c "[ $code = 201 ] && [ '$(jget id)' = '$e1' ] && [ $(count) = 1 ]"
code=$(req POST /v1/experiments "$(spec '"name": "other"')" "${C[@]}" -H "Idempotency-Key: k-1")
reused=$(grep -c idempotency_key_reused "$t/body")
is "Idempotency-Key reused for another spec: 422, nothing new" "$code $reused $(count)" "422 1 1"
req POST /v1/experiments "$(spec '"name": "two", "priority": 5')" "${C[@]}" >/dev/null; e2=$(jget id)
req POST /v1/experiments "$(spec '"name": "three"')" "${C[@]}" >/dev/null; e3=$(jget id)
code=$(req POST /v1/experiments "$(RES='{"device": "cuda", "gpus": 1}' spec '"name": "gpu", "priority": 9')" "${C[@]}"); eg=$(jget id)
is "create: a cuda experiment" "$code" 201
code=$(req GET /v1/experiments/$e1 "" "${C[@]}")
check "show: spec with every default" bash -c "[ $code = 200 ] && grep -q '\"spec\":{' '$t/body' && grep -q '\"warmup\"' '$t/body'"
req GET "/v1/experiments?state=queued&limit=2" "" "${C[@]}" >/dev/null
cur=$(jget next_cursor)
check "list: limit and a cursor" bash -c "[ $(grep -o '\"id\":' "$t/body" | wc -l) = 2 ] && [ -n '$cur' ] && [ '$cur' != null ]"
req GET "/v1/experiments?state=queued&limit=2&cursor=$cur" "" "${C[@]}" >/dev/null
check "list: the next page" bash -c "[ $(grep -o '\"id\":' "$t/body" | wc -l) = 2 ] && [ '$(jget next_cursor)' = null ]"
req GET "/v1/experiments?norm=lns" "" "${C[@]}" >/dev/null
check "list: filter by norm" bash -c "! grep -q '\"id\"' '$t/body'"
is "show: unknown id 404" "$(req GET /v1/experiments/999 "" "${C[@]}")" 404

# --- bad input: a JSON error naming the problem, nothing written
n0=$(count)
code=$(req POST /v1/experiments '{"name": "x", ' "${C[@]}"); err_names "malformed JSON: 400" 400 "$code" malformed
code=$(req POST /v1/experiments "$(TRAIN='{"steps": "ten"}' spec)" "${C[@]}"); err_names "wrong type names train.steps" 422 "$code" '"field":"train.steps"'
code=$(req POST /v1/experiments "$(spec '"trian": {}')" "${C[@]}"); err_names "unknown field named" 422 "$code" '"field":"trian"'
code=$(req POST /v1/experiments "$(spec '"norm": "prenorm"')" "${C[@]}"); err_names "unknown variant names norm" 422 "$code" '"field":"norm"'
code=$(req POST /v1/experiments "$(TRAIN='{"steps": 0}' spec)" "${C[@]}"); err_names "non-positive steps" 422 "$code" '"field":"train.steps"'
code=$(req POST /v1/experiments "$(TRAIN='{"lr": 1e999}' spec)" "${C[@]}"); err_names "invalid number (overflow)" 400 "$code" malformed
code=$(req POST /v1/experiments "$(TRAIN='{"lr": NaN}' spec)" "${C[@]}"); err_names "invalid number (NaN)" 400 "$code" malformed
code=$(req POST /v1/experiments '{"model": "llama-9m", "data": {"train": "/nonexistent/t_*.bin", "val": "/nonexistent/v_*.bin"}}' "${C[@]}")
err_names "missing data names data.train" 422 "$code" '"field":"data.train"'
code=$(req POST /v1/experiments '[1, 2]' "${C[@]}"); err_names "not an object" 422 "$code" object
head -c 70000 /dev/zero | tr '\0' ' ' > "$t/big"
J=(-H 'Content-Type: application/json')
code=$(curl -s -o "$t/body" -w '%{http_code}' -X POST "$B/v1/experiments" "${C[@]}" "${J[@]}" --data-binary @"$t/big"); err_names "oversize body: 413" 413 "$code" too_large
code=$(curl -s -o "$t/body" -w '%{http_code}' -X POST "$B/v1/experiments" "${C[@]}" "${J[@]}" -H "Transfer-Encoding: chunked" --data-binary @"$t/big"); err_names "oversize chunked body: 413" 413 "$code" too_large
code=$(req GET /v1/nothing "" "${C[@]}"); err_names "unknown route: 404" 404 "$code" not_found
code=$(curl -s -D "$t/hdr" -o "$t/body" -w '%{http_code}' -X DELETE "$B/v1/experiments" "${C[@]}"); err_names "wrong method: 405" 405 "$code" method_not_allowed
check "405 says Allow" grep -qi '^Allow: GET, POST' "$t/hdr"
is "HEAD of a GET route: 200, no body" "$(curl -s -I -o "$t/body" -w '%{http_code} %{size_download}' "$B/healthz")" "200 0"
code=$(req GET "/v1/experiments?limit=abc" "" "${C[@]}"); err_names "bad query value named" 400 "$code" '"field":"limit"'
is "nothing invalid was queued" "$(count)" "$n0"

# --- the worker protocol
code=$(req POST /v1/workers/register '{"name": "w1", "device": "cpu", "capacity": 1}' "${WK[@]}"); w1=$(jget id)
is "register: 201" "$code" 201
code=$(req POST /v1/workers/register '{"device": "tpu"}' "${WK[@]}"); err_names "register: bad device named" 422 "$code" '"field":"device"'
code=$(req POST /v1/workers/$w1/lease '{"wait": 0}' "${WK[@]}"); run=$(jget run)
check "lease: priority first, never the cuda job" bash -c "[ $code = 200 ] && [ '$(jget experiment)' = '$e2' ] && grep -q '\"spec\":{' '$t/body'"
is "lease: at capacity, nothing more (204)" "$(req POST /v1/workers/$w1/lease '{"wait": 0}' "${WK[@]}")" 204
code=$(req POST /v1/runs/$run/heartbeat '{"step": 2}' "${WK[@]}")
check "heartbeat: 200, no cancel" bash -c "[ $code = 200 ] && grep -q '\"cancel\":false' '$t/body'"
batch='{"points": [{"step": 1, "name": "train/loss", "value": 5.5}, {"step": 2, "name": "train/loss", "value": 5.0}, {"step": 3, "name": "train/loss", "value": 4.5}, {"step": 3, "name": "train/tokens_per_s", "value": 1000}, {"step": 3, "name": "eval/ppl", "value": 90}, {"step": 3, "name": "layer/out_var", "layer": 0, "value": 1.5}, {"step": 3, "name": "layer/out_var", "layer": 1, "value": null}], "logs": [{"seq": 1, "line": "step 1"}, {"seq": 2, "line": "step 2"}]}'
is "report: 200" "$(req POST /v1/runs/$run/metrics "$batch" "${WK[@]}")" 200
is "report retried: 200" "$(req POST /v1/runs/$run/metrics "$batch" "${WK[@]}")" 200
code=$(req POST /v1/runs/$run/metrics '{"points": [{"step": 1, "name": "train/loss", "value": "high"}]}' "${WK[@]}")
err_names "report: bad value named" 422 "$code" '"field":"points[0].value"'
code=$(req POST /v1/runs/$run/metrics '{"points": [{"step": 1, "name": "train/loss", "value": 1, "extra": 1}]}' "${WK[@]}")
err_names "report: unknown field named" 422 "$code" 'points[0].extra'
req GET "/v1/experiments/$e2/metrics?name=train/loss" "" "${C[@]}" >/dev/null
check "series: no duplicated point" grep -q '"train/loss":\[\[1,5.5\],\[2,5.0\],\[3,4.5\]\]' "$t/body"
req GET "/v1/experiments/$e2/metrics?name=train/loss&every=2" "" "${C[@]}" >/dev/null
check "series: every=2 keeps every other point and the newest" grep -q '"train/loss":\[\[1,5.5\],\[3,4.5\]\]' "$t/body"
req GET "/v1/experiments/$e2/metrics?from=2&to=2" "" "${C[@]}" >/dev/null
check "series: from/to" grep -q '"train/loss":\[\[2,5.0\]\]' "$t/body"
req GET "/v1/experiments/$e2/layers?name=layer/out_var" "" "${C[@]}" >/dev/null
check "layers: newest step, null kept" grep -q '"step":3,"layers":\[{"layer":0,"value":1.5},{"layer":1,"value":null}\]' "$t/body"
req GET "/v1/experiments/$e2/logs" "" "${C[@]}" >/dev/null
check "logs: each line once" bash -c "[ $(grep -o '\"line\"' "$t/body" | wc -l) = 2 ]"
req GET "/v1/experiments/$e2/logs?after=$(jget next)" "" "${C[@]}" >/dev/null
check "logs: after cursor" grep -q '"lines":\[\]' "$t/body"
req GET /v1/experiments/$e2 "" "${C[@]}" >/dev/null
check "show: running, worker, progress, latest" bash -c "grep -q '\"state\":\"running\"' '$t/body' && grep -q '\"worker\":$w1' '$t/body' && grep -q '\"progress\":0.[23]' '$t/body' && grep -q '\"train/loss\":{\"step\":3,\"value\":4.5}' '$t/body'"
req GET /metrics "" "${C[@]}" >/dev/null
check "/metrics: experiments by state" grep -q '^cod_experiments{state="running"} 1' "$t/body"
check "/metrics: queue depth" grep -q '^cod_queue_depth [0-9]' "$t/body"
check "/metrics: workers by state" grep -q '^cod_workers{state="busy"} 1' "$t/body"
check "/metrics: running loss labelled" grep -q "^cod_train_loss{experiment=\"$e2\",model=\"L2-d32\",norm=\"pre\"} 4.5" "$t/body"
check "/metrics: running tokens/s" grep -q "^cod_train_tokens_per_s{experiment=\"$e2\"" "$t/body"
check "/metrics: requests by route and status" grep -q '^cod_http_requests_total{route="/v1/experiments",status="201"}' "$t/body"
n_exp=$(awk '/^cod_http_requests_total\{route="\/v1\/experiments",/ {s += $2} END {print s + 0}' "$t/body")
check "/metrics: a latency histogram per route, that route's requests in it ($n_exp)" \
    grep -q "^cod_http_request_duration_seconds_bucket{route=\"/v1/experiments\",le=\"+Inf\"} $n_exp\$" "$t/body"
check "/metrics: the heartbeats' histogram apart" \
    grep -q '^cod_http_request_duration_seconds_count{route="/v1/runs/{id}/heartbeat"} [1-9]' "$t/body"
is "/metrics needs the token" "$(req GET /metrics)" 401
req GET /v1/workers "" "${C[@]}" >/dev/null
check "workers: device, state, experiment" bash -c "grep -q '\"device\":\"cpu\"' '$t/body' && grep -q '\"state\":\"busy\"' '$t/body' && grep -q '\"experiments\":\[$e2\]' '$t/body' && grep -q heartbeat_age_s '$t/body'"
code=$(req POST /v1/runs/$run/finish '{"outcome": "succeeded"}' "${WK[@]}")
err_names "finish: succeeded refused without the final step's points" 409 "$code" '"code":"points_missing"'
check "finish refused: it names the final step" grep -q 'final step 10' "$t/body"
req POST /v1/runs/$run/metrics '{"points": [{"step": 10, "name": "train/loss", "value": 4.0}]}' "${WK[@]}" >/dev/null
code=$(req POST /v1/runs/$run/finish '{"outcome": "succeeded", "points": 9}' "${WK[@]}")
err_names "finish: succeeded refused with fewer points than the worker's files" 409 "$code" '"code":"points_missing"'
check "finish refused: it counts them" grep -q '8 of the 9 points' "$t/body"
code=$(req POST /v1/runs/$run/finish '{"outcome": "succeeded", "points": -1}' "${WK[@]}")
err_names "finish: bad points named" 422 "$code" '"field":"points"'
code=$(req POST /v1/runs/$run/finish '{"outcome": "succeeded", "points": 8}' "${WK[@]}")
req GET /v1/experiments/$e2 "" "${C[@]}" >/dev/null
check "finish: succeeded" bash -c "[ $code = 200 ] && grep -q '\"state\":\"succeeded\"' '$t/body'"
is "finish retried: 200" "$(req POST /v1/runs/$run/finish '{"outcome": "succeeded"}' "${WK[@]}")" 200
is "report after finish: 409" "$(req POST /v1/runs/$run/metrics "$batch" "${WK[@]}")" 409

# --- cancel: queued now, running at the next heartbeat
code=$(req POST /v1/experiments/$e3/cancel "" "${C[@]}")
check "cancel queued: 202, cancelled" bash -c "[ $code = 202 ] && grep -q '\"state\":\"cancelled\"' '$t/body'"
is "cancel again: 409" "$(req POST /v1/experiments/$e3/cancel "" "${C[@]}")" 409
req POST /v1/workers/$w1/lease '{"wait": 0}' "${WK[@]}" >/dev/null; run=$(jget run)
is "lease: the next one" "$(jget experiment)" "$e1"
code=$(req POST /v1/experiments/$e1/cancel "" "${C[@]}")
check "cancel running: 202, still running" bash -c "[ $code = 202 ] && grep -q '\"state\":\"running\"' '$t/body' && grep -q '\"cancel_requested\":true' '$t/body'"
req POST /v1/runs/$run/heartbeat '{}' "${WK[@]}" >/dev/null
check "heartbeat answers cancel" grep -q '"cancel":true' "$t/body"
req GET /v1/experiments/$e1 "" "${C[@]}" >/dev/null
is "running experiment cancelled" "$(jget state)" cancelled
is "report of a cancelled run: 409" "$(req POST /v1/runs/$run/metrics "$batch" "${WK[@]}")" 409

# --- a lease that lapses: the same database served with leases of 1 s (the
# reaper every 0.1 s); a lease granted from now on lapses, nothing else runs
stop_server
start_server "${SERVE[@]}" --lease-seconds 1
req POST /v1/experiments "$(spec '"name": "lapse", "max_attempts": 2')" "${C[@]}" >/dev/null; el=$(jget id)
req POST /v1/workers/$w1/lease '{"wait": 0}' "${WK[@]}" >/dev/null; run=$(jget run)
is "lease: lapse candidate" "$(jget experiment)" "$el"
# the experiment as the server tells it, for the reaper's doing to be seen
exp_shows() { curl -s -m "$WAIT_LIMIT" "$B/v1/experiments/$el" "${C[@]}" | grep -q "$1"; }
await "the lease to lapse and the experiment to be queued again" exp_shows '"attempts":1'
code=$(req POST /v1/runs/$run/metrics "$batch" "${WK[@]}"); err_names "lost lease: report 409" 409 "$code" lease_lost
is "lost lease: heartbeat 409" "$(req POST /v1/runs/$run/heartbeat '{}' "${WK[@]}")" 409
req GET /v1/experiments/$el "" "${C[@]}" >/dev/null
check "lapsed: queued with attempts+1 and the reason" bash -c "grep -q '\"state\":\"queued\"' '$t/body' && grep -q '\"attempts\":1' '$t/body' && grep -q 'lease lapsed' '$t/body'"
req GET "/v1/experiments/$el/metrics" "" "${C[@]}" >/dev/null
check "lapsed: the lost run wrote nothing" grep -q '"series":{}' "$t/body"
req POST /v1/workers/$w1/lease '{"wait": 0}' "${WK[@]}" >/dev/null
is "lapsed: leased again, attempt 2" "$(jget attempt)" 2
await "the second lease to lapse and the experiment to fail" exp_shows '"state":"failed"'
req GET /v1/experiments/$el "" "${C[@]}" >/dev/null
check "lapsed twice: failed after max_attempts" bash -c "grep -q '\"state\":\"failed\"' '$t/body' && grep -q 'attempt 2 of 2' '$t/body'"
req GET /metrics "" "${C[@]}" >/dev/null
check "/metrics: lease expiries counted" grep -q '^cod_lease_expiries_total 2' "$t/body"

# --- long-poll (a 30 s wait is the server's longest). The bounds tell apart
# answers that differ by many seconds, not by what a loaded machine adds.
start=$(date +%s%N)
code=$(req POST /v1/workers/$w1/lease '{"wait": 0.5}' "${WK[@]}")
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "long-poll: 204 after the wait, not before ($ms ms)" bash -c "[ $code = 204 ] && [ $ms -ge 400 ] && [ $ms -lt 15000 ]"
# The server shows a cuda worker's long-poll parked ("waiting", what gangs
# are formed from): a cuda worker waits here, so that the submission comes
# after the poll has found nothing, and wakes it. (The cuda experiment
# queued above would be its work: cancelled.)
parked() { curl -s -m "$WAIT_LIMIT" "$B/v1/workers" "$@" | grep -q '"waiting":true'; }
is "the queued cuda experiment cancelled" "$(req POST /v1/experiments/$eg/cancel "" "${C[@]}")" 202
req POST /v1/workers/register '{"name": "g1", "device": "cuda"}' "${WK[@]}" >/dev/null; wg=$(jget id)
# its own body file: the submission below writes $t/body at the same moment
mapfile -t S < <(secret_args "/v1/workers/$wg/lease")
curl -s -m "$WAIT_LIMIT" -o "$t/lp_body" -w '%{http_code}' -X POST "$B/v1/workers/$wg/lease" --data-binary '{"wait": 30}' "${WK[@]}" \
    "${J[@]}" "${S[@]}" > "$t/lp_code" &
lp=$!
await "the lease long-poll to be parked" parked "${C[@]}"
req POST /v1/experiments "$(RES='{"device": "cuda"}' spec '"name": "late"')" "${C[@]}" >/dev/null; elate=$(jget id)
start=$(date +%s%N); wait $lp; ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "long-poll: woken by a submission, long before its 30 s ($ms ms)" bash -c "[ \$(cat '$t/lp_code') = 200 ] && grep -q '\"experiment\":$elate' '$t/lp_body' && [ $ms -lt 15000 ]"

# --- sweeps
sw="{\"base\": $(spec), \"grid\": {\"norm\": [\"pre\", \"lns\"], \"train.lr\": [0.001, 0.002]}}"
code=$(req POST /v1/sweeps "$sw" "${C[@]}"); sid=$(jget id)
check "sweep: 201 with 4 cells" bash -c "[ $code = 201 ] && [ $(grep -o '\"experiment\":' "$t/body" | wc -l) = 4 ]"
req GET "/v1/experiments?sweep=$sid&norm=lns" "" "${C[@]}" >/dev/null
check "list: filter by sweep and norm" bash -c "[ $(grep -o '\"id\":' "$t/body" | wc -l) = 2 ]"
code=$(req GET /v1/sweeps/$sid "" "${C[@]}")
check "sweep: table with eval/ppl per cell" bash -c "[ $code = 200 ] && grep -q '\"params\":{\"norm\":\"lns\",\"train.lr\":0.002},\"eval/ppl\":null' '$t/body'"
n0=$(count)
code=$(req POST /v1/sweeps "{\"base\": $(spec), \"grid\": {\"train.seed\": [$(seq -s, 1 300)]}}" "${C[@]}")
err_names "sweep: over the cap" 422 "$code" '"field":"grid"'
code=$(req POST /v1/sweeps "{\"base\": $(spec), \"grid\": {\"norm\": [\"pre\", \"bogus\"]}}" "${C[@]}")
err_names "sweep: a bad cell names its field" 422 "$code" '"field":"norm"'
is "sweep: nothing written from refused grids" "$(count)" "$n0"

# --- operations
bin/cod-server --listen 0.0.0.0:0 --db "$t/other.db" > "$t/out" 2>&1
check "refuses a non-loopback address without a token" bash -c "[ $? = 2 ] && grep -q 'without a token' '$t/out'"
stop_server
check "SIGTERM: exit 0" test $? -eq 0
check "SIGTERM: stopped cleanly (both servers)" test "$(grep -c 'cod-server: stopped' "$t/server.log")" = 2
check "one log line per request" grep -q 'cod-server: POST /v1/experiments 201' "$t/server.log"
check "database intact" bash -c "bin/cod-server --db '$t/cod.db' --check-db | grep -qx ok"

# SIGTERM while a lease long-poll is parked (an empty queue): it is answered
rm -f "$t"/cod.db*
start_server
req POST /v1/workers/register '{"device": "cuda"}' >/dev/null; w=$(jget id)
( req POST /v1/workers/$w/lease '{"wait": 30}' > "$t/lp_code" ) &
lp=$!
await "the lease long-poll to be parked" parked
start=$(date +%s%N)
stop_server
rc=$?
wait $lp
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "SIGTERM with a parked long-poll: exit 0" test $rc -eq 0
check "SIGTERM: the parked long-poll is answered (204), not cut nor left its 30 s ($ms ms)" bash -c "[ \$(cat '$t/lp_code') = 204 ] && [ $ms -lt 15000 ]"
