#!/usr/bin/env bash
# Fine-tuning on the CPU, from a start (init.from) on instruction records:
#  - learning: a tiny model pretrained on the default corpus, fine-tuned on a
#    synthetic task (a three-letter word's letters each moved one on),
#    answers the held-out words from none right to every one right;
#  - the starting point: the run's held-out loss before its first update is
#    the checkpoint's own loss on the same tokens (cod-analyze over the rows);
#  - an experiment's final checkpoint under --work-dir starts a run, one
#    that has not finished is refused; epochs become steps; a finished run
#    resumes as done, its completed spec the checkpoint's;
#  - a Hugging Face folder (tests/hf_reference.js, with a tokenizer.json)
#    fine-tunes with its own tokenizer, epsilon and end token, and the
#    export of the result computes what an independent reference computes
#    from the stored weights; a shape cod cannot train is refused by name.
cd "$(dirname "$0")/.." && . tests/lib.sh
need_corpus
t=$(mktemp -d /tmp/cod-sft-XXXXXX)
export OMP_NUM_THREADS=1
python3 - "$t" <<'PY'
import json, random, sys
r = random.Random(7)
abc = 'abcdefghijklmnopqrstuvwxyz'
words = set()
while len(words) < 1700:
    words.add(''.join(r.choice(abc) for _ in range(3)))
words = sorted(words)
r.shuffle(words)
for name, ws in (('train', words[:1600]), ('val', words[1600:])):
    with open('%s/%s.jsonl' % (sys.argv[1], name), 'w') as f:
        for w in ws:
            f.write(json.dumps({'prompt': w + '>',
                                'response': ''.join(abc[(abc.index(c) + 1) % 26] for c in w)}) + '\n')
PY
cat > "$t/pre.json" <<JSON
{"model": {"dim": 64, "n_layers": 2, "n_heads": 4, "ffn_dim": 128}, "norm": "pre",
 "data": {"train": "var/data/default-bytes/train_*.bin", "val": "var/data/default-bytes/val_*.bin"},
 "train": {"steps": 30, "seq_len": 32, "batch_seqs": 16, "lr": 3e-3},
 "eval": {"every": 0}, "stats": {"every": 0}, "checkpoint": {"every": 10}}
JSON
bin/cod-train "$t/pre.json" --out "$t/pre" > "$t/pre.log" 2>&1
start="$t/pre/checkpoints/step_00000030"
# ft SPEC-NAME INIT [EXTRA SECTIONS]: a fine-tuning spec on the synthetic records
ft() {
    cat > "$t/$1.json" <<JSON
{"init": {"from": $2},
 "data": {"format": "instructions", "train": "$t/train.jsonl", "val": "$t/val.jsonl"},
 "sft": {"cutoff_len": 9}, "stats": {"every": 0}${3:+, $3}}
JSON
}
ft learn "\"$start\"" '"train": {"steps": 600, "seq_len": 8, "batch_seqs": 32, "lr": 3e-3, "warmup": 20}, "eval": {"every": 100}'
bin/cod-train "$t/learn.json" --out "$t/learn" --progress-seconds 100 > "$t/learn.log" 2>&1
check "the fine-tuning run finishes" grep -q 'checkpoint at step 600' "$t/learn.log"
check "it says what the records became" grep -q 'instructions (bytes tokenizer): 1600 records into 1600 rows.*6400 targets; held out: 100 records, 100 rows, 400 targets' "$t/learn.log"
rows="$t/learn/sft/val.rows" end="$t/learn/checkpoints/step_00000600"
for m in start end; do
    ck=$start; [ $m = end ] && ck=$end
    bin/cod-analyze logits "$ck" --val "$rows" --seq-len 8 --tokens 400 --out "$t/$m.npy" > /dev/null 2>&1
    read -r tok_acc rec_acc < <(python3 tests/rows_accuracy.py "$rows" "$t/$m.npy")
    echo "held-out accuracy at the $m: $tok_acc of the response tokens, $rec_acc of the answers"
    eval "${m}_tok=$tok_acc ${m}_rec=$rec_acc"
done
check "from chance: the pretrained model answers no held-out word (token accuracy $start_tok)" \
    python3 -c "import sys; sys.exit(not float('$start_tok') < 0.1 and float('$start_rec') == 0)"
check "to near-perfect: every held-out answer right ($end_rec; tokens $end_tok)" \
    python3 -c "import sys; sys.exit(not float('$end_tok') >= 0.98 and float('$end_rec') >= 0.95)"
bin/cod-analyze prune "$start" --val "$rows" --seq-len 8 --tokens 400 --out "$t/prune" > /dev/null 2>&1
check "the loss before the first update is the checkpoint's own on the same tokens" python3 -c "
import json, sys
base = json.load(open('$t/prune/prune.json'))['base_loss']
first = next(json.loads(l)['value'] for l in open('$t/learn/metrics.jsonl') if '\"eval/loss\"' in l)
print('eval/loss at step 0: %.8f; the checkpoint on the rows: %.8f' % (first, base))
sys.exit(abs(first - base) > 1e-6 * base)"
bin/cod-train "$t/learn.json" --out "$t/learn" --resume > "$t/resume.log" 2>&1
check "a finished fine-tuning run resumes as done: the spec completed from its start is the checkpoint's" \
    bash -c "[ $? -eq 0 ] && grep -q 'resumed at step 600' '$t/resume.log'"

# an experiment's checkpoints under a work dir, as a worker keeps them
mkdir -p "$t/work/experiments/7/checkpoints" "$t/work/experiments/8/checkpoints"
cp -r "$start" "$t/work/experiments/7/checkpoints/"
cp -r "$t/pre/checkpoints/step_00000020" "$t/work/experiments/8/checkpoints/"
ft exp '{"experiment": 7}' '"train": {"epochs": 0.1, "seq_len": 8, "batch_seqs": 32}, "eval": {"every": 0}'
bin/cod-train "$t/exp.json" --out "$t/exp" --work-dir "$t/work" > "$t/exp.log" 2>&1
check "an experiment's final checkpoint starts a run; 0.1 epochs of 50 batches are 5 steps" \
    bash -c "grep -q 'weights from $t/work/experiments/7/checkpoints/step_00000030' '$t/exp.log' && grep -q 'step 5/5' '$t/exp.log' && grep -q '\"train/steps\", \"value\": 5}' '$t/exp/metrics.jsonl'"
ft exp8 '{"experiment": 8}' '"train": {"steps": 2, "seq_len": 8}, "eval": {"every": 0}'
bin/cod-train "$t/exp8.json" --out "$t/exp8" --work-dir "$t/work" > "$t/exp8.log" 2>&1
check "one that has not finished is refused, saying so" grep -q 'init.from.experiment: experiment 8 has not finished: its newest checkpoint, .*step_00000020, is of step 20, not its last' "$t/exp8.log"
bin/cod-train "$t/exp.json" --out "$t/exp-none" > "$t/none.log" 2>&1
check "without a work dir it says where such a start is found" grep -q 'init.from.experiment: .*under a work dir' "$t/none.log"
ft inputs "\"$start\"" '"train": {"steps": 1, "seq_len": 8, "batch_seqs": 32}, "eval": {"every": 0}, "sft": {"cutoff_len": 9, "train_on_inputs": true}'
sed -i 's/"sft": {"cutoff_len": 9}, //' "$t/inputs.json"
bin/cod-train "$t/inputs.json" --out "$t/inputs" > "$t/inputs.log" 2>&1
check "train_on_inputs: the prompts' tokens are targets too (8 a record, not 4)" grep -q '12800 targets' "$t/inputs.log"

# a Hugging Face folder with its tokenizer
node tests/hf_reference.js build "$t/hf" train
node tests/hf_tokenizers.js tiny "$t/hf" valid
ft hf "\"$t/hf\"" '"train": {"steps": 200, "seq_len": 8, "batch_seqs": 32, "lr": 3e-3, "warmup": 20}, "eval": {"every": 200}'
bin/cod-train "$t/hf.json" --out "$t/hfrun" --progress-seconds 100 > "$t/hf.log" 2>&1
check "a Hugging Face folder fine-tunes with its own tokenizer" \
    grep -q 'instructions (hf tokenizer): 1600 records' "$t/hf.log"
check "its held-out loss falls to a tenth" python3 -c "
import json, sys
v = [json.loads(l)['value'] for l in open('$t/hfrun/metrics.jsonl') if '\"eval/loss\"' in l]
print('eval/loss', v)
sys.exit(not v[-1] < v[0] / 10)"
ck="$t/hfrun/checkpoints/step_00000200"
check "the checkpoint keeps the folder's shape, epsilon and vocabulary" python3 -c "
import json, sys
m = json.load(open('$ck/state.json'))['spec']['model']
sys.exit(not (m['dim'] == 64 and m['n_layers'] == 2 and m['vocab'] == 260 and m['norm_eps'] == 1e-5))"
check "the rows end in config.json's eos_token_id" python3 -c "
import struct, sys
b = open('$t/hfrun/sft/val.rows', 'rb').read()
off, ln, _ = struct.unpack_from('<QII', b, struct.unpack_from('<Q', b, 40)[0])
sys.exit(struct.unpack_from('<%dI' % ln, b, off)[-1] != 259)"
bin/cod-analyze export "$ck" --out "$t/hfx" > /dev/null 2>&1
cp "$t/hf/val_000000.bin" "$t/hfx/"
bin/cod-analyze logits "$t/hfx" --val "$t/hfx/val_*.bin" --seq-len 32 --tokens 64 --out "$t/hfx.npy" > /dev/null 2>&1
bin/cod-analyze logits "$ck" --val "$t/hfx/val_*.bin" --seq-len 32 --tokens 64 --out "$t/hfck.npy" > /dev/null 2>&1
check "its export reads back: the folder's logits are the checkpoint's" cmp "$t/hfx.npy" "$t/hfck.npy"
check "and an independent reference computes them from the exported weights" \
    node tests/hf_reference.js check "$t/hfx" "$t/hfx.npy" 32
node tests/hf_reference.js build "$t/gqa" llama
node tests/hf_tokenizers.js tiny "$t/gqa" valid
ft gqa "\"$t/gqa\"" '"train": {"steps": 2, "seq_len": 8}, "eval": {"every": 0}'
bin/cod-train "$t/gqa.json" --out "$t/gqarun" > "$t/gqa.log" 2>&1
check "grouped-query attention is refused for training, naming config.json's field" \
    bash -c "[ $? -eq 2 ] && grep -q 'config.json: num_key_value_heads: grouped-query attention is computed forward only' '$t/gqa.log'"
rm -rf "$t"
