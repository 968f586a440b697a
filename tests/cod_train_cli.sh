#!/usr/bin/env bash
# bin/cod-train as a user meets it: bad specs refused before any work with
# the field or file named; SIGTERM stops at a checkpoint; --resume continues
# to the end without a duplicated point.
cd "$(dirname "$0")/.." && . tests/lib.sh
need_corpus
t=$(mktemp -d /tmp/cod-cli-XXXXXX)
base='"model": {"dim": 32, "n_layers": 2, "n_heads": 2, "ffn_dim": 64},
 "data": {"train": "var/data/default-bytes/train_*.bin", "val": "var/data/default-bytes/val_*.bin"}'
refuses() { # name, spec text, text the error must contain
    printf '%s' "$2" > "$t/spec.json"
    bin/cod-train "$t/spec.json" --out "$t/never" > "$t/out" 2>&1
    local rc=$?
    if [ $rc -eq 2 ] && grep -qF -- "$3" "$t/out" && [ ! -e "$t/never/metrics.jsonl" ]; then
        echo "PASS refuses $1"
    else
        echo "FAIL refuses $1 (exit $rc): $(cat "$t/out")"
    fi
}
refuses "malformed JSON" '{"name": "x", ' 'spec.json'
refuses "unknown field" "{$base, \"trian\": {}}" 'trian'
refuses "unknown nested field" "{$base, \"train\": {\"lrr\": 1}}" 'train.lrr'
refuses "unknown norm" "{$base, \"norm\": \"prenorm\"}" 'norm'
refuses "unknown norm setting" "{$base, \"norm\": {\"placement\": \"middle\"}}" 'norm.placement'
refuses "wrong type" "{$base, \"train\": {\"steps\": \"ten\"}}" 'train.steps'
refuses "non-positive steps" "{$base, \"train\": {\"steps\": 0}}" 'train.steps'
refuses "batch that does not divide" "{$base, \"train\": {\"batch_seqs\": 10, \"micro_batch\": 4}}" 'train.micro_batch'
refuses "missing data file" '{"model": "llama-9m", "data": {"train": "/nonexistent/train_*.bin", "val": "/nonexistent/val_*.bin"}}' '/nonexistent/train_*.bin'
bin/cod-train /nonexistent/spec.json --out "$t/never" > "$t/out" 2>&1
check "refuses a missing spec file, naming it" bash -c "[ $? -eq 2 ] && grep -q /nonexistent/spec.json '$t/out'"
bin/cod-train > "$t/out" 2>&1
check "usage without arguments" bash -c "[ $? -eq 2 ] && grep -q usage '$t/out'"
printf '{%s, "train": {"steps": 5, "seq_len": 64, "batch_seqs": 4, "micro_batch": 4}}' "$base" > "$t/spec.json"
bin/cod-train "$t/spec.json" --out "$t/gpu" --device cuda:0 > "$t/out" 2>&1
check "cuda without a GPU says so" bash -c "[ $? -eq 2 ] && grep -qE 'no CUDA|no GPU' '$t/out'"

# stop with SIGTERM, refuse to overwrite, resume to the end
printf '{%s, "train": {"steps": 400, "seq_len": 64, "batch_seqs": 8, "micro_batch": 4},
 "eval": {"every": 100, "tokens": 4096}, "stats": {"every": 50}, "checkpoint": {"every": 0, "keep": 2}}' "$base" > "$t/spec.json"
bin/cod-train "$t/spec.json" --out "$t/run" --progress-seconds 0 > "$t/log1" 2>&1 &
pid=$!
await "cod-train to log step 20" grep -q 'step 20/' "$t/log1"
# frozen, it cannot reach the end between this look and the signal
kill -STOP $pid
at=$(grep -o 'step [0-9]*/400' "$t/log1" | tail -1)
check "SIGTERM sent mid-run (at ${at:-no step})" bash -c "[ -n '$at' ] && [ '$at' != 'step 400/400' ]"
kill -TERM $pid; kill -CONT $pid
wait $pid
rc=$?
check "SIGTERM stops with exit 3" test $rc -eq 3
check "SIGTERM leaves a checkpoint" bash -c "ls -d '$t'/run/checkpoints/step_* >/dev/null 2>&1"
stopped=$(ls "$t/run/checkpoints" | sed 's/step_0*//' | sort -n | tail -1)
bin/cod-train "$t/spec.json" --out "$t/run" > "$t/log2" 2>&1
check "refuses to start over a run without --resume" bash -c "[ $? -eq 2 ] && grep -q -- --resume '$t/log2'"
bin/cod-train "$t/spec.json" --out "$t/run" --resume > "$t/log3" 2>&1
check "resume runs to the end" bash -c "[ $? -eq 0 ] && grep -q 'resumed at step $stopped' '$t/log3' && grep -q 'step 400/400' '$t/log3'"
steps=$(grep '"name": "train/loss"' "$t/run/metrics.jsonl" | sed 's/.*"step": \([0-9]*\).*/\1/')
check "every step logged once, in order" bash -c "[ \"\$(echo '$steps' | tr '\n' ' ')\" = \"\$(seq 1 400 | tr '\n' ' ')\" ]"
check "final checkpoint has the three files" bash -c "ls '$t'/run/checkpoints/step_00000400/{model.safetensors,optim.safetensors,state.json} >/dev/null"
rm -rf "$t"
