#!/usr/bin/env bash
# The whole loop: cod-server, two CPU workers and a sweep of four tiny
# experiments; everything a researcher asks of the API afterwards is there,
# and equals what cod-train computes on the same spec.
cd "$(dirname "$0")/.."
. tests/worker_helpers.bash
make_data
STEPS=40 wspec ref > "$t/ref.json"
bin/cod-train "$t/ref.json" --out "$t/ref" --threads 1 >/dev/null 2>&1
# lapses are not this test's business: long leases, whatever the load
start_server --lease-seconds 600
start_worker a
start_worker b
# the end-of-job analyses too: their values travel as metrics like any other
base=$(STEPS=40 wspec sweep | sed 's/}$/, "analysis": {"prune": true, "angular": true}}/')
sw="{\"base\": $base, \"grid\": {\"norm\": [\"pre\", \"lns\", \"post\", \"deepnorm\"]}}"
code=$(req POST /v1/sweeps "$sw")
sid=$(jget id)
check "sweep of 4 submitted" [ "$code" = 201 ]
ids=$(get "/v1/experiments?sweep=$sid" | js "j.experiments.map(e=>e.id)")
all_ended() { [ "$(get "/v1/experiments?sweep=$sid" | js "j.experiments.filter(e=>['succeeded','failed','cancelled'].includes(e.state)).length")" = 4 ]; }
await "the sweep's four experiments to end" all_ended
check "all four succeeded" [ "$(get "/v1/experiments?sweep=$sid&state=succeeded" | js "j.experiments.length")" = 4 ]
check "both workers trained" bash -c "grep -q ': succeeded' '$t/worker-a.log' && grep -q ': succeeded' '$t/worker-b.log'"
for id in $ids; do
    norm=$(field "$id" norm)
    is "exp $id ($norm): train/loss at every step 1..40, once" "$(curve $id | cut -d' ' -f1 | tr '\n' ' ')" "$(seq -s' ' 1 40) "
    is "exp $id ($norm): eval/ppl at 0, 20, 40" "$(curve $id eval/ppl | cut -d' ' -f1 | tr '\n' ' ')" "0 20 40 "
    is "exp $id ($norm): layer/out_var for the embedding and 3 blocks" \
        "$(get "/v1/experiments/$id/layers?name=layer/out_var" | js "j.layers.length")" 4
    is "exp $id ($norm): layer/grad_norm of 3 blocks at step 40" \
        "$(get "/v1/experiments/$id/layers?name=layer/grad_norm&step=40" | js "j.layers.filter(l=>l.value>0).length")" 3
    is "exp $id ($norm): prune/delta_ppl for each of the 3 blocks" \
        "$(get "/v1/experiments/$id/layers?name=prune/delta_ppl" | js "j.layers.map(l=>l.layer).join(' ')")" "1 2 3"
    is "exp $id ($norm): the angular matrix, spans 1..3 from block 1" \
        "$(for n in 1 2 3; do get "/v1/experiments/$id/layers?name=angular/n$n" | js "j.layers.length"; done | tr '\n' ' ')" "3 2 1 "
    is "exp $id ($norm): logs carry the run's progress" "$(get "/v1/experiments/$id/logs" | grep -c 'step 40/40')" 1
done
pre=$(get "/v1/experiments?sweep=$sid&norm=pre" | js "j.experiments[0].id")
is "pre's loss curve equals cod-train's on the same spec" "$(curve "$pre")" "$(ref_curve "$t/ref/metrics.jsonl")"
is "pre's eval/ppl equals cod-train's" "$(curve "$pre" eval/ppl)" "$(ref_curve "$t/ref/metrics.jsonl" eval/ppl)"
is "pre's per-layer out_var equals cod-train's" "$(layers_at "$pre" layer/out_var 40)" "$(ref_layers_at "$t/ref/metrics.jsonl" layer/out_var 40)"
is "sweep table: four cells, each with a final eval/ppl" \
    "$(get "/v1/sweeps/$sid" | js "j.cells.filter(c=>typeof c['eval/ppl']==='number').length")" 4
is "workers listed with their heartbeat age" \
    "$(get /v1/workers | js "j.workers.filter(w=>typeof w.heartbeat_age_s==='number' && w.state==='idle').length")" 2
kill -TERM "${WPID[a]}" "${WPID[b]}"
wait "${WPID[a]}"; ra=$?
wait "${WPID[b]}"; rb=$?
is "idle workers stop on SIGTERM with status 0" "$ra $rb" "0 0"
