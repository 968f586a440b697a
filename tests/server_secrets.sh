#!/usr/bin/env bash
# Runs bound to their lease (docs/api.md, "Threat model"): every holder of
# the shared worker token could heartbeat, report to, fail, release and
# re-lease another worker's run, mark other workers offline and lease under
# their ids; a zombie worker with a stale run id could do the same by
# mistake. Now a worker acts for its own id with the secret it got at
# registration, and a run's rank with the secret its lease gave it: without
# them 403, and nothing changes.
cd "$(dirname "$0")/.." && . tests/server_helpers.bash
make_data
start_server --token T --worker-token W --lease-seconds 3600
C=(-H "Authorization: Bearer T")
WK=(-H "Authorization: Bearer W")
err_names() { # name, expected status, got status, text the error must contain
    if [ "$3" = "$2" ] && grep -q '"error":{' "$t/body" && grep -qF -- "$4" "$t/body"; then
        echo "PASS $1"; else echo "FAIL $1 (status $3): $(head -c 400 "$t/body")"; fi
}
exp_field() { curl -s -m "$WAIT_LIMIT" "$B/v1/experiments/$1" "${C[@]}" | grep -o "\"$2\":[^,]*" | head -1; }
AS_W2=(-H "Cod-Worker-Secret: none")  # replaced by w2's own below

req POST /v1/workers/register '{"name": "w1", "device": "cpu"}' "${WK[@]}" > /dev/null; w1=$(jget id)
check "registration gives a worker its secret" test -n "$(jget secret)"
req POST /v1/workers/register '{"name": "w2", "device": "cpu"}' "${WK[@]}" > /dev/null; w2=$(jget id)
s2=$(jget secret)
AS_W2=(-H "Cod-Worker-Secret: $s2")
req POST /v1/experiments "$(spec '"name": "theirs"')" "${C[@]}" > /dev/null; e=$(jget id)
code=$(req POST /v1/workers/$w1/lease '{"wait": 0}' "${WK[@]}"); run=$(jget run)
is "the owner leases with its secret" "$code" 200
check "the lease gives the rank its secret" test -n "$(jget secret)"
req POST /v1/runs/$run/metrics '{"points": [{"step": 1, "name": "train/loss", "value": 5}]}' "${WK[@]}" > /dev/null

# w2, holding the worker token and its own secrets, against w1's run
code=$(req POST /v1/runs/$run/heartbeat '{"step": 5}' "${WK[@]}" -H 'Cod-Lease-Secret: guessed')
err_names "another worker's heartbeat: 403" 403 "$code" Cod-Lease-Secret
code=$(req POST /v1/runs/$run/heartbeat '{"step": 5}' "${WK[@]}" -H 'Cod-Worker-Secret: x')
err_names "a heartbeat without the lease's secret: 403" 403 "$code" Cod-Lease-Secret
code=$(req POST /v1/runs/$run/metrics '{"points": [{"step": 1, "name": "train/loss", "value": 99}]}' "${WK[@]}" "${AS_W2[@]}")
err_names "points posted to another worker's run: 403" 403 "$code" Cod-Lease-Secret
code=$(req POST /v1/runs/$run/logs '{"logs": [{"seq": 7, "line": "not mine"}]}' "${WK[@]}" "${AS_W2[@]}")
err_names "logs posted to another worker's run: 403" 403 "$code" Cod-Lease-Secret
code=$(req POST /v1/runs/$run/finish '{"outcome": "failed", "reason": "x"}' "${WK[@]}" "${AS_W2[@]}")
err_names "another worker's run failed: 403" 403 "$code" Cod-Lease-Secret
code=$(req POST /v1/runs/$run/finish '{"outcome": "released"}' "${WK[@]}" "${AS_W2[@]}")
err_names "another worker's run released: 403" 403 "$code" Cod-Lease-Secret
code=$(req POST /v1/workers/$w1/lease '{"wait": 0}' "${WK[@]}" "${AS_W2[@]}")
err_names "a lease under another worker's id: 403" 403 "$code" Cod-Worker-Secret
code=$(req POST /v1/workers/$w1/offline '' "${WK[@]}" "${AS_W2[@]}")
err_names "another worker marked offline: 403" 403 "$code" Cod-Worker-Secret
code=$(req POST /v1/workers/$w1/offline '' "${WK[@]}" -H 'Cod-Lease-Secret: x')
err_names "offline without a worker secret: 403" 403 "$code" Cod-Worker-Secret
is "w1's run still running" "$(exp_field "$e" state)" '"state":"running"'
is "its step not moved by the foreign heartbeat (the owner's point made it 1)" "$(exp_field "$e" step)" '"step":1'
req GET "/v1/experiments/$e/metrics?name=train/loss" "" "${C[@]}" > /dev/null
check "its points not overwritten" grep -q '"train/loss":\[\[1,5\(\.0\)\?\]\]' "$t/body"
req GET "/v1/experiments/$e/logs" "" "${C[@]}" > /dev/null
check "no foreign log line" grep -q '"lines":\[\]' "$t/body"
req GET /v1/workers "" "${C[@]}" > /dev/null
check "w1 not offline" bash -c "! grep -q '\"id\":$w1,[^}]*\"state\":\"offline\"' '$t/body'"
is "w2 leases for itself with its own secret (nothing queued: 204)" "$(req POST /v1/workers/$w2/lease '{"wait": 0}' "${WK[@]}")" 204

# the owner, with its secrets, carries on
is "the owner's heartbeat: 200" "$(req POST /v1/runs/$run/heartbeat '{"step": 10}' "${WK[@]}")" 200
req POST /v1/runs/$run/metrics '{"points": [{"step": 10, "name": "train/loss", "value": 4}]}' "${WK[@]}" > /dev/null
is "the owner's finish: 200" "$(req POST /v1/runs/$run/finish '{"outcome": "succeeded"}' "${WK[@]}")" 200
is "succeeded" "$(exp_field "$e" state)" '"state":"succeeded"'

# a zombie: the secret of its old run against the run now holding its experiment
req POST /v1/experiments "$(spec '"name": "again"')" "${C[@]}" > /dev/null
req POST /v1/workers/$w1/lease '{"wait": 0}' "${WK[@]}" > /dev/null; old=$(jget run)
old_secret=$(cat "$t/secrets/run-$old-0")
req POST /v1/runs/$old/finish '{"outcome": "released"}' "${WK[@]}" > /dev/null
req POST /v1/workers/$w2/lease '{"wait": 0}' "${WK[@]}" > /dev/null; new=$(jget run)
check "the experiment went to w2 as a new run" test -n "$new" -a "$new" != "$old"
code=$(req POST /v1/runs/$new/heartbeat '{}' "${WK[@]}" -H "Cod-Lease-Secret: $old_secret")
err_names "a zombie's stale secret on the new run: 403" 403 "$code" Cod-Lease-Secret
is "the new run's heartbeat: 200" "$(req POST /v1/runs/$new/heartbeat '{}' "${WK[@]}")" 200

# a gang: each rank its own secret
req POST /v1/experiments "$(TRAIN='{"steps": 10, "seq_len": 16, "batch_seqs": 4, "micro_batch": 2}' RES='{"device": "cuda", "gpus": 2}' spec '"name": "gang"')" "${C[@]}" > /dev/null
req POST /v1/workers/register '{"name": "g/0", "device": "cuda"}' "${WK[@]}" > /dev/null; g0=$(jget id)
req POST /v1/workers/register '{"name": "g/1", "device": "cuda"}' "${WK[@]}" > /dev/null; g1=$(jget id)
lease_bg() { # worker: its lease long-poll in the background, the answer in $t/lease-WORKER
    curl -s -m "$WAIT_LIMIT" -o "$t/lease-$1" -X POST "$B/v1/workers/$1/lease" -H 'Content-Type: application/json' \
        -H "Cod-Worker-Secret: $(cat "$t/secrets/worker-$1")" "${WK[@]}" --data-binary '{"wait": 30}'
}
lease_bg "$g0" & p0=$!
lease_bg "$g1" & p1=$!
wait $p0 $p1
keep_secrets "/v1/workers/$g0/lease" "$t/lease-$g0"
keep_secrets "/v1/workers/$g1/lease" "$t/lease-$g1"
grun=$(grep -o '"run":[0-9]*' "$t/lease-$g0" | cut -d: -f2)
r0=$(cat "$t/secrets/run-$grun-0" 2>/dev/null) r1=$(cat "$t/secrets/run-$grun-1" 2>/dev/null)
check "both ranks leased, each with a secret of its own" test -n "$r0" -a -n "$r1" -a "$r0" != "$r1"
code=$(req POST /v1/runs/$grun/heartbeat '{"rank": 0}' "${WK[@]}" -H "Cod-Lease-Secret: $r1")
err_names "rank 1's secret speaking for rank 0: 403" 403 "$code" Cod-Lease-Secret
code=$(req POST /v1/runs/$grun/rendezvous '{"rank": 0, "id": "QUJD"}' "${WK[@]}" -H "Cod-Lease-Secret: $r1")
err_names "rank 1's secret posting rank 0's rendezvous: 403" 403 "$code" Cod-Lease-Secret
code=$(req POST /v1/runs/$grun/finish '{"outcome": "failed", "rank": 0}' "${WK[@]}" -H "Cod-Lease-Secret: $r1")
err_names "rank 1's secret failing the gang as rank 0: 403" 403 "$code" Cod-Lease-Secret
is "rank 0 posts its rendezvous" "$(req POST /v1/runs/$grun/rendezvous '{"rank": 0, "id": "QUJD"}' "${WK[@]}")" 200
is "rank 1 reads it with its own secret" "$(req GET "/v1/runs/$grun/rendezvous?wait=0&rank=1" "" "${WK[@]}")" 200
code=$(req GET "/v1/runs/$grun/rendezvous?wait=0&rank=1" "" "${WK[@]}" -H 'Cod-Lease-Secret: x')
err_names "the rendezvous read without a secret: 403" 403 "$code" Cod-Lease-Secret
is "each rank beats with its own" "$(req POST /v1/runs/$grun/heartbeat '{"rank": 1}' "${WK[@]}") $(req POST /v1/runs/$grun/heartbeat '{"rank": 0}' "${WK[@]}")" "200 200"
is "the gang still running" "$(exp_field "$(grep -o '"experiment":[0-9]*' "$t/lease-$g0" | cut -d: -f2)" state)" '"state":"running"'
stop_server

# after an upgrade: a worker registered and a run leased before secrets
# existed (none stored) keep working without them, until they end
sqlite3 "$t/cod.db" "UPDATE workers SET secret = NULL WHERE id = $w2; UPDATE run_members SET secret = NULL WHERE run_id = $new"
start_server --token T --worker-token W --lease-seconds 3600
is "a run leased before secrets: its heartbeat needs none" "$(req POST /v1/runs/$new/heartbeat '{}' "${WK[@]}" -H 'Cod-Lease-Secret: ')" 200
is "a worker registered before secrets: its lease needs none" "$(req POST /v1/workers/$w2/lease '{"wait": 0}' "${WK[@]}" -H 'Cod-Worker-Secret: ')" 204
code=$(req POST /v1/workers/$w1/lease '{"wait": 0}' "${WK[@]}" -H 'Cod-Worker-Secret: ')
err_names "a worker registered since still needs its own" 403 "$code" Cod-Worker-Secret
stop_server
