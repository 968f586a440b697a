#!/usr/bin/env bash
# A job's analysis.tasks end to end, through cod-server and a worker: the
# tasks evaluated on the trained model at the job's end, each block removed
# too (analysis.prune), arrive as metrics task/NAME/acc, task/NAME/acc_norm
# and prune/NAME/delta_acc per block, equal to cod-train's on the same spec;
# a sweep's report shows each task's accuracy drop beside the loss's, its
# CSV the API's numbers; a task file the worker cannot read fails the job
# before it trains, the reason naming the file.
cd "$(dirname "$0")/.."
. tests/worker_helpers.bash
make_data
tasks='"tasks": ["tests/eval/piqa.jsonl", {"file": "tests/eval/arc.jsonl", "layout": "arc_easy", "shots": 1, "fewshot_from": "tests/eval/arc_train.jsonl"}]'
# rows of 128 tokens: the fixtures' longest input fits
spec=$(STEPS=6 wspec tasks | sed "s|\"seq_len\": 32|\"seq_len\": 128|; s|}\$|, \"norm\": \"pre\", \"analysis\": {\"prune\": true, $tasks}}|")
printf '%s\n' "$spec" > "$t/spec.json"
bin/cod-train "$t/spec.json" --out "$t/ref" --threads 1 > "$t/ref.log" 2>&1
check "cod-train runs the spec's tasks" grep -q '"name": "task/piqa/acc"' "$t/ref/metrics.jsonl"
start_server --lease-seconds 600
start_worker a
id=$(submit "$spec")
export COD_SERVER=$B
sid=$(bin/cod sweep "$t/spec.json" --grid norm=pre,lns --json | js 'j.id')
missing=$(submit "$(STEPS=6 wspec nofile | sed 's|}$|, "analysis": {"tasks": ["tests/eval/no_such_task.jsonl"]}}|')")
ended() { st=$(field "$1" state); [ "$st" = succeeded ] || [ "$st" = failed ]; }
await "the job with tasks to end" ended "$id"
await "the job with a missing task file to end" ended "$missing"
is "the job succeeded" "$(field "$id" state)" succeeded
for task in piqa arc; do
    for m in acc acc_norm; do
        is "task/$task/$m at the last step, as cod-train's" \
            "$(curve "$id" "task/$task/$m")" "$(ref_curve "$t/ref/metrics.jsonl" "task/$task/$m")"
    done
    is "prune/$task/delta_acc for each of the 3 blocks" \
        "$(get "/v1/experiments/$id/layers?name=prune/$task/delta_acc" | js "j.layers.map(l=>l.layer).join(' ')")" "1 2 3"
    is "prune/$task/delta_acc as cod-train's" "$(layers_at "$id" "prune/$task/delta_acc" 6)" \
        "$(ref_layers_at "$t/ref/metrics.jsonl" "prune/$task/delta_acc" 6)"
done
is "the run's log says each task's accuracy" \
    "$(get "/v1/experiments/$id/logs" | grep -c 'task piqa: acc .* over 3 items (piqa, 0-shot, 0 lines skipped)')" 1
ls "$t/work/experiments/$id/analysis" > "$t/analysis.txt" 2>&1
is "eval.json, prune_tasks.json and a samples file a task in the run's analysis folder" \
    "$(grep -cxE 'eval.json|prune_tasks.json|samples_(piqa|arc).jsonl' "$t/analysis.txt")" 4
for e in $(get "/v1/sweeps/$sid" | js 'j.cells.map(c => c.experiment)'); do
    await "sweep experiment $e to end" ended "$e"
done
bin/cod report --sweep "$sid" --out "$t/report" > /dev/null
check "the report adds prune_acc.csv" test -s "$t/report/prune_acc.csv"
is "its figures: each task's accuracy drop per block, a panel per setting" \
    "$(grep -o 'data-figure="prune_acc_[a-z]*' "$t/report/report.html" | sort | uniq -c | awk '{print $1, $2}' | tr '\n' ' ')" \
    '1 data-figure="prune_acc_arc 1 data-figure="prune_acc_piqa '
lns=$(get "/v1/experiments?sweep=$sid&norm=lns" | js "j.experiments[0].id")
check "prune_acc.csv holds lns's prune/piqa/delta_acc as the API has it" python3 - "$t/report/prune_acc.csv" \
    "$(get "/v1/experiments/$lns/layers?name=prune/piqa/delta_acc" | js "j.layers.map(l=>l.layer+':'+l.value).join(' ')")" <<'PY'
import csv, sys
want = {int(k): float(v) for k, v in (x.split(":") for x in sys.argv[2].split())}
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r.get("metric") == "prune/piqa/delta_acc"
        and "lns" in " ".join(r.values()).lower()]
got = {int(r["layer"]): float(r["mean"]) for r in rows}
assert len(want) == 3 and got == want, (got, want)
PY
is "a missing task file fails the job" "$(field "$missing" state)" failed
is "its reason names the file" "$(field "$missing" reason | grep -c 'analysis.tasks\[0\]: tests/eval/no_such_task.jsonl')" 1
is "it trained nothing" "$(get "/v1/experiments/$missing/metrics?name=train/loss" | js "(j.series['train/loss']||[]).length")" 0
