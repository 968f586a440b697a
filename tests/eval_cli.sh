#!/usr/bin/env bash
# cod-analyze eval and prune --task as a user meets them, on a tiny
# checkpoint of the bytes corpus: every fixture layout scored, eval.json's
# fields and samples_TASK.jsonl's lines (each pred the argmax of its
# log-likelihoods); a choice's log-likelihood equals the sum of its tokens'
# log-probabilities from cod-analyze logits on the same tokens; bad lines
# reported as FILE:LINE, --strict failing at the first; prune --task writes
# each task's accuracy with each block removed; bad usage refused.
cd "$(dirname "$0")/.." && . tests/lib.sh
need_corpus
t=$(mktemp -d /tmp/cod-eval-cli-XXXXXX)
trap 'rm -rf "$t"' EXIT
cat > "$t/spec.json" <<JSON
{"model": {"dim": 32, "n_layers": 3, "n_heads": 2, "ffn_dim": 64}, "norm": "lns",
 "data": {"train": "var/data/default-bytes/train_*.bin", "val": "var/data/default-bytes/val_*.bin"},
 "train": {"steps": 3, "seq_len": 256, "batch_seqs": 2, "micro_batch": 2, "lr": 0.003, "warmup": 1},
 "eval": {"every": 0, "tokens": 512}, "stats": {"every": 0}}
JSON
bin/cod-train "$t/spec.json" --out "$t/run" --threads 2 > "$t/train.log" 2>&1
ck="$t/run/checkpoints/step_00000003"
check "a checkpoint to evaluate" test -s "$ck/state.json"

e=tests/eval
bin/cod-analyze eval "$ck" --threads 2 --out "$t/ev" \
    --task $e/mmlu.jsonl --fewshot-from $e/mmlu_dev.jsonl --task $e/arc.jsonl:arc_easy \
    --fewshot-from $e/arc_train.jsonl --task $e/hellaswag.jsonl --task $e/piqa.jsonl \
    --task $e/boolq.jsonl --task $e/winogrande.jsonl --task $e/social_iqa.jsonl \
    --task $e/openbookqa.jsonl --task $e/commonsense.jsonl --task $e/generic.jsonl \
    --shots 1 > "$t/eval.txt" 2>&1
rc=$?
check "eval of every layout, 1-shot, exits 0" test $rc -eq 0
[ $rc -eq 0 ] || tail -5 "$t/eval.txt"
check "the table has a row per task" test "$(grep -cE '^(mmlu|arc|hellaswag|piqa|boolq|winogrande|social_iqa|openbookqa|commonsense|generic) ' "$t/eval.txt")" -eq 10
check "the speed line" grep -qE '^eval: 31 items, .* items/s, [0-9]+ tokens/s$' "$t/eval.txt"
check "eval.json: each task's acc, acc_norm, stderrs, n, shots, layout, harness" python3 - "$t/ev" <<'PY'
import json, sys
d = json.load(open(sys.argv[1] + "/eval.json"))
assert d["harness"] == "lm-evaluation-harness v0.4.12", d["harness"]
assert len(d["tasks"]) == 10
for name, r in d["tasks"].items():
    assert 0 <= r["acc"] <= 1 and 0 <= r["acc_norm"] <= 1, name
    assert r["acc_stderr"] > 0 or r["acc"] in (0, 1), name
    assert r["shots"] == 1 and r["harness"] == d["harness"] and r["n"] >= 3, name
assert d["tasks"]["arc"]["layout"] == "arc" and d["tasks"]["mmlu"]["subjects"]["abstract_algebra"]["n"] == 2
PY
check "samples: a line per item, pred the first argmax of its log-likelihoods" python3 - "$t/ev" <<'PY'
import json, sys
d = json.load(open(sys.argv[1] + "/eval.json"))
for name, r in d["tasks"].items():
    lines = [json.loads(l) for l in open(f"{sys.argv[1]}/samples_{name}.jsonl")]
    assert len(lines) == r["n"], name
    right = 0
    for s in lines:
        ll = s["loglik"]
        assert len(ll) == len(s["continuations"]) == len(s["tokens"]), name
        assert s["pred"] == ll.index(max(ll)), (name, s["line"])
        right += s["pred"] == s["gold"]
    assert abs(right / len(lines) - r["acc"]) < 1e-12, name
PY
check "MMLU's context: the description, the dev example of its subject, the question" \
    python3 -c 'import json,sys; s=json.loads(open(sys.argv[1]).readline()); assert s["context"].startswith("The following are multiple choice questions (with answers) about abstract algebra.\n\nFind all c in Z_3") and s["context"].endswith("D. 6\nAnswer:") and s["continuations"]==[" A"," B"," C"," D"], s' "$t/ev/samples_mmlu.jsonl"

# The log-likelihood of "The capital of France is" + " Paris" from the
# model's logits on the same tokens: the doc token, then the bytes.
bin/cod-analyze eval "$ck" --task $e/generic.jsonl --out "$t/ev0" > "$t/ev0.txt" 2>&1
python3 - "$t/row.bin" <<'PY'
import struct, sys
toks = [256] + list(b"The capital of France is Paris")
hdr = struct.pack("<256i", 20240520, 1, len(toks), *([0] * 253))
open(sys.argv[1], "wb").write(hdr + struct.pack(f"<{len(toks)}H", *toks))
PY
n=$(( 1 + 30 - 1 ))
bin/cod-analyze logits "$ck" --val "$t/row.bin" --seq-len $n --out "$t/row.npy" > "$t/logits.txt" 2>&1
check "cod-analyze logits on the same tokens" test -s "$t/row.npy"
check "Paris's log-likelihood is the sum of its tokens' log-probabilities from the logits" python3 - "$t/row.npy" "$t/ev0/samples_generic.jsonl" <<'PY'
import json, math, struct, sys
b = open(sys.argv[1], "rb").read()
hl = struct.unpack("<H", b[8:10])[0]
shape = eval(b[10:10 + hl].decode().split("'shape': ")[1].split("),")[0] + ")")
_, T, V = shape
x = struct.unpack(f"<{T * V}f", b[10 + hl:10 + hl + 4 * T * V])
toks = [256] + list(b"The capital of France is Paris")
ll = 0.0
for p in range(len(toks) - 1 - len(b" Paris"), len(toks) - 1):
    row = x[p * V:(p + 1) * V]
    m = max(row)
    ll += row[toks[p + 1]] - m - math.log(sum(math.exp(v - m) for v in row))
s = json.loads(open(sys.argv[2]).readline())
assert s["continuations"][0] == " Paris" and s["tokens"][0] == 6, s
assert abs(s["loglik"][0] - ll) < 1e-4 * max(1, abs(ll)), (s["loglik"][0], ll)
PY

printf '%s\n' '{"goal":"g","sol1":"a","sol2":"b","label":1}' '{"goal":"g","sol1":"a"}' \
    '{"goal":"g","sol1":"a","sol2":"b","label":2}' 'oops' > "$t/bad.jsonl"
bin/cod-analyze eval "$ck" --task "$t/bad.jsonl" > "$t/bad.txt" 2>&1
rc=$?
check "bad lines skipped, the run goes on" bash -c "[ $rc -eq 0 ] && grep -qE '^bad +piqa +0 +1 ' '$t/bad.txt'"
check "each bad line reported as FILE:LINE" bash -c "grep -q '^$t/bad.jsonl:2: no field \"sol2\"' '$t/bad.txt' && grep -q '^$t/bad.jsonl:3: the gold choice 2 is out of range (2 choices)' '$t/bad.txt' && grep -q '^$t/bad.jsonl:4: not JSON' '$t/bad.txt'"
bin/cod-analyze eval "$ck" --task "$t/bad.jsonl" --strict > "$t/strict.txt" 2>&1
rc=$?
check "--strict fails at the first, naming it" bash -c "[ $rc -eq 1 ] && grep -q '$t/bad.jsonl:2: no field' '$t/strict.txt'"

bin/cod-analyze prune "$ck" --tokens 512 --task $e/piqa.jsonl --task $e/generic.jsonl --out "$t/pr" \
    > "$t/prune.txt" 2>&1
rc=$?
check "prune --task: exits 0, prints each task's accuracy per removed block" bash -c "[ $rc -eq 0 ] && grep -q '^piqa (piqa, 3 items, 0-shot)' '$t/prune.txt' && [ \$(grep -cE '^ +[123] +[0-9.]+ +[-+][0-9.]+' '$t/prune.txt') -eq 6 ]"
check "prune_tasks.json: a row per block, delta_acc = acc without it - acc" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for name in ("piqa", "generic"):
    r = d[name]
    assert [l["layer"] for l in r["layers"]] == [1, 2, 3]
    assert all(abs(l["delta_acc"] - (l["acc"] - r["acc"])) < 1e-12 for l in r["layers"])
' "$t/pr/prune_tasks.json"
check "prune --task still writes the loss ΔP" test -s "$t/pr/prune.json"

bin/cod-analyze eval "$ck" > "$t/u.txt" 2>&1
check "eval without --task refused" bash -c "[ $? -eq 2 ] && grep -q 'eval needs --task' '$t/u.txt'"
bin/cod-analyze eval "$ck" --task $e/piqa.jsonl --bos maybe > "$t/u.txt" 2>&1
check "a bad --bos refused" bash -c "[ $? -eq 2 ] && grep -q 'auto, yes or no' '$t/u.txt'"
bin/cod-analyze angular "$ck" --task $e/piqa.jsonl > "$t/u.txt" 2>&1
check "--task with angular refused" bash -c "[ $? -eq 2 ] && grep -q 'goes with eval and prune' '$t/u.txt'"
bin/cod-analyze eval "$ck" --task $e/mmlu.jsonl --shots 1 > "$t/u.txt" 2>&1
check "MMLU few-shot without its dev split refused" bash -c "[ $? -eq 1 ] && grep -q 'fewshot-from DEV' '$t/u.txt'"
