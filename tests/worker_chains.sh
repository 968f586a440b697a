#!/usr/bin/env bash
# Chains through cod-server and real workers: a sweep of two variants, each
# pretrained and then fine-tuned from its final checkpoint (cod sweep
# --then), runs every fine-tuning only after its own pretraining; a
# pretraining that fails blocks the fine-tuning that waits for it, naming
# the failure; a worker killed with -9 during a fine-tuning is replaced and
# the fine-tuning resumes from its checkpoint to the loss curve of an
# uninterrupted run; cod ls and cod show show the chain; the fine-tunings
# are scored at their end on two tasks (analysis.tasks, read with the
# pretraining's tokenizer) and the sweep's report shows the fine-tuning
# table: a row per variant, a column per task, the average.
cd "$(dirname "$0")/.."
. tests/worker_helpers.bash
need_corpus
python3 - "$t" <<'PY'
import json, random, sys
r = random.Random(11)
abc = 'abcdefghijklmnopqrstuvwxyz'
words = set()
while len(words) < 1100:
    words.add(''.join(r.choice(abc) for _ in range(3)))
words = sorted(words)
r.shuffle(words)
shift = lambda w: ''.join(abc[(abc.index(c) + 1) % 26] for c in w)
# the prompt ends in a space, as the tasks' context and choice are joined
for name, ws in (('train', words[:1000]), ('val', words[1000:])):
    with open('%s/%s.jsonl' % (sys.argv[1], name), 'w') as f:
        for w in ws:
            f.write(json.dumps({'prompt': w + '> ', 'response': shift(w)}) + '\n')
# two multiple-choice tasks of held-out words: the answer among 4, among 2
for name, n in (('shift', 4), ('pick', 2)):
    with open('%s/%s.jsonl' % (sys.argv[1], name), 'w') as f:
        for i, w in enumerate(words[1000:1040]):
            wrong = [shift(x) for x in words[1040 + 3 * i:1040 + 3 * i + n - 1]]
            gold = i % n
            f.write(json.dumps({'context': w + '>', 'choices': wrong[:gold] + [shift(w)] + wrong[gold:],
                                'gold': gold}) + '\n')
PY
pre_spec() { # name data-dir
    printf '{"name": "%s", "model": {"dim": 48, "n_layers": 2, "n_heads": 2, "ffn_dim": 96},
 "data": {"train": "%s/train_*.bin", "val": "%s/val_*.bin"},
 "train": {"steps": 30, "seq_len": 32, "batch_seqs": 8, "lr": 3e-3},
 "eval": {"every": 10, "tokens": 1024}, "stats": {"every": 0}, "checkpoint": {"every": 10},
 "resources": {"device": "cpu"}}' "$1" "$2" "$2"
}
pre_spec chain var/data/default-bytes > "$t/pre.json"
# Enough steps that the fine-tuning cannot end between the step the test
# waits for and the kill, however the machine schedules the two.
cat > "$t/ft.json" <<JSON
{"name": "sft", "data": {"format": "instructions", "train": "$t/train.jsonl", "val": "$t/val.jsonl"},
 "train": {"steps": 600, "seq_len": 8, "batch_seqs": 32, "lr": 3e-3, "warmup": 20},
 "eval": {"every": 100}, "stats": {"every": 0}, "checkpoint": {"every": 50},
 "analysis": {"tasks": ["$t/shift.jsonl", "$t/pick.jsonl"]}, "resources": {"device": "cpu"}}
JSON
LEASE=10
start_server --lease-seconds $LEASE
C=(bin/cod --server "$B")

# a pretraining whose data is gone once it is queued fails; what waits for it is blocked
cp -r var/data/default-bytes "$t/gone"
bad=$("${C[@]}" submit <(pre_spec gone "$t/gone") --json | js j.id)
sed "s/\"name\": \"sft\"/\"name\": \"gone-sft\", \"init\": {\"from\": {\"experiment\": $bad}}/" "$t/ft.json" > "$t/bad-ft.json"
bad_ft=$("${C[@]}" submit "$t/bad-ft.json" --json | js j.id)
rm -rf "$t/gone"
is "a fine-tuning from an experiment that has not run waits for it" "$(field "$bad_ft" state)" waiting

"${C[@]}" sweep "$t/pre.json" norm=pre,lns --then "$t/ft.json" --json > "$t/sweep.json"
sid=$(js j.id < "$t/sweep.json")
cells=$(js "j.cells.map(c=>c.experiment).join(' ')" < "$t/sweep.json")
fts=$(js "j.stages.map(c=>c.experiment).join(' ')" < "$t/sweep.json")
is "the sweep: two cells, each followed by its fine-tuning, which waits" \
    "$(js "j.cells.length + ' ' + j.stages.map(s=>s.state).join(' ')" < "$t/sweep.json")" "2 waiting waiting"
"${C[@]}" ls --sweep "$sid" > "$t/ls.txt"
read -r pre lns <<< "$cells"
read -r pre_ft lns_ft <<< "$fts"
check "cod ls shows what each fine-tuning waits for" \
    bash -c "grep -qE '^ *$pre_ft +chain-pre\.sft .* waiting .* $pre *\$' '$t/ls.txt' && grep -qE '^ *$lns_ft +chain-lns\.sft .* $lns *\$' '$t/ls.txt'"

start_worker a --heartbeat-seconds 1 --flush-seconds 0.2
await "the pretraining without data to fail" state_is "$bad" failed
await "its fine-tuning to be blocked" state_is "$bad_ft" blocked
get /metrics > "$t/metrics.txt"
check "/metrics counts the blocked and the waiting" \
    bash -c "grep -q '^cod_experiments{state=\"blocked\"} 1\$' '$t/metrics.txt' && grep -q '^cod_experiments{state=\"waiting\"} ' '$t/metrics.txt'"
"${C[@]}" show "$bad_ft" > "$t/bad.txt"
check "blocked with the reason: the pretraining's failure" \
    grep -q "reason     waits for experiment $bad (gone), which failed: data.train" "$t/bad.txt"

# the first fine-tuning to run: killed with -9 past two checkpoints
running_ft() { for e in $fts; do state_is "$e" running && echo "$e" && return 0; done; return 1; }
await "a fine-tuning to run" eval 'running_ft > /dev/null'
ft=$(running_ft)
await "worker a to fine-tune past step 100" local_step_at_least "$ft" 100
kill -9 "${WPID[a]}"; wait "${WPID[a]}" 2>/dev/null
killed_at=$(local_step "$ft")
check "the worker killed mid-fine-tuning (step $killed_at of 600)" [ "${killed_at:-600}" -lt 600 ]
start_worker b --heartbeat-seconds 1 --flush-seconds 0.2
all_ended() { [ "$(get "/v1/experiments?sweep=$sid" | js "j.experiments.filter(e=>['succeeded','failed','cancelled','blocked'].includes(e.state)).length")" = 4 ]; }
await "the sweep's four experiments to end" all_ended
is "all four succeeded" "$(get "/v1/experiments?sweep=$sid&state=succeeded" | js "j.experiments.length")" 4
for pair in "$pre $pre_ft" "$lns $lns_ft"; do
    read -r p f <<< "$pair"
    check "experiment $f started after experiment $p had succeeded" \
        bash -c "[ \"\$(node -e 'console.log(process.argv[1] >= process.argv[2])' $(field "$f" started) $(field "$p" finished))\" = true ]"
    is "experiment $f started from $p's final checkpoint" \
        "$(get "/v1/experiments/$f/logs" | grep -o "weights from [^ ]*" | sort -u)" \
        "weights from $t/work/experiments/$p/checkpoints/step_00000030"
done
is "the killed fine-tuning lapsed once and resumed from its checkpoint" \
    "$(field "$ft" attempts) $(get "/v1/experiments/$ft/logs" | grep -c "resuming from $t/work/experiments/$ft/checkpoints/step_")" "1 1"
# the same fine-tuning, never interrupted, with cod-train from the same start
sed "s/\"name\": \"sft\"/\"name\": \"$(field "$ft" name)\", \"init\": {\"from\": {\"experiment\": $(field "$ft" "after[0].id")}}/" \
    "$t/ft.json" > "$t/ref.json"
bin/cod-train "$t/ref.json" --out "$t/ref" --work-dir "$t/work" --threads 1 > "$t/ref.log" 2>&1
is "the resumed fine-tuning's loss curve is the uninterrupted one's" "$(curve "$ft")" "$(ref_curve "$t/ref/metrics.jsonl")"
is "and its held-out loss over the responses" "$(curve "$ft" eval/loss)" "$(ref_curve "$t/ref/metrics.jsonl" eval/loss)"
"${C[@]}" show "$pre" > "$t/show.txt"
check "cod show names what waits for it" grep -qE "^  then +$pre_ft chain-pre\.sft \(succeeded\)" "$t/show.txt"

get "/v1/sweeps/$sid" > "$t/view.json"
is "the sweep's fine-tuning table: a row per variant, the tasks' columns" \
    "$(js "j.finetune.map(t => t.stage + ': ' + t.tasks.join(',') + ' / ' + t.rows.map(r => r.params.norm + ' n=' + r.n).join(', ')).join()" < "$t/view.json")" \
    "1: pick,shift / pre n=1, lns n=1"
check "the fine-tuned models answer the held-out words (accuracy over 0.6 where chance is 0.25)" \
    node -e 'const j = JSON.parse(require("fs").readFileSync(process.argv[1]));
        const accs = j.finetune[0].rows.map(r => r.tasks.shift.acc.mean);
        console.log("shift accuracy by variant: " + accs.join(", "));
        process.exit(accs.every(a => a > 0.6) ? 0 : 1)' "$t/view.json"
check "the average is the mean of the tasks" node -e 'const j = JSON.parse(require("fs").readFileSync(process.argv[1]));
    process.exit(j.finetune[0].rows.every(r => Math.abs(r.average.mean - (r.tasks.shift.acc.mean + r.tasks.pick.acc.mean) / 2) < 1e-12) ? 0 : 1)' "$t/view.json"
"${C[@]}" report --sweep "$sid" --out "$t/report" > /dev/null
check "the report shows the fine-tuning table" grep -q 'Table 2. Fine-tuned accuracy on the evaluation tasks' "$t/report/report.html"
check "its CSV beside it: a row per variant, each task's accuracy" \
    bash -c "head -1 '$t/report/finetune.csv' | grep -q '^stage,variant,n,pick_acc_mean,.*,shift_acc_mean,.*,average_mean' && [ \$(grep -cE '^1,norm=(pre|lns),1,' '$t/report/finetune.csv') = 2 ]"
kill -TERM "${WPID[b]}"
wait "${WPID[b]}"
is "the worker stops on SIGTERM with status 0" "$?" 0
