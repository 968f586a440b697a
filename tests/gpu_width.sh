#!/usr/bin/env bash
# tests/run.sh: start first
# The width study's call of the time-boxed GPU plan (tests/gpu/plan.sh
# width), which otherwise runs only on a GPU machine, run here on the CUDA
# emulator at a toy size, from a width bundle made here as the real one is
# (tests/gpu/bundle.sh --width, the emulator's programs in it): a corpus
# of a few Brown samples as xz JSON lines, a SentencePiece model of 400
# pieces trained by spm_train, the bundle unpacked, the text tokenized
# there by the bundle's cod-prep (split at paragraphs, documents packing's
# meta.json: </s> after each document, pad 0), the sweeps through
# cod-server and cod-worker on the emulated cuda:0:
#  - the seeds call (CALL=seeds, the plan's default) whole, a toy model of
#    2 layers: three seed pairs and a pair at lr 2e-3, eight runs side by
#    side, a few updates each (TOKENS: the emulator takes seconds an
#    update; the call's one pass over the pool is sized by steps.py, run
#    on the toy data), trained to the end with the loss on a fixed sample
#    of training rows at every evaluation: both reports, every run's own
#    series, the reading (the paired gap over three seeds with its
#    verdict, the rate pair, the held-out − training gap per pass),
#    within the budget;
#  - the later call (CALL=half) on half the pool, about two passes, too
#    long for its deadline: all eight runs cut at once by the deadline (each
#    stopped at a checkpoint, handed back, its metrics in), the reading
#    saying so and comparing the three pairs at the last evaluation every
#    pair reached; its folders beside the first call's, which stay;
#    nothing of the study left running.
cd "$(dirname "$0")/.." && . tests/lib.sh
need_emulator gpu_width
command -v spm_train >/dev/null || { echo "FAIL gpu_width: no spm_train (scripts/deps.sh test installs sentencepiece)"; exit 1; }
need_corpus
t=$(mktemp -d /tmp/cod-width-XXXXXX)
# KEEP=1 keeps the folder, for a look after a failure
if [ -n "${KEEP:-}" ]; then echo "gpu_width: the folder is $t"; else trap 'rm -rf "$t"' EXIT; fi
mkdir -p "$t/bin" "$t/corpus"
ln -s "$PWD"/build/emu/bin/cod-train "$PWD"/build/emu/bin/cod-worker "$PWD/bin/cod-server" "$PWD/bin/cod" \
    "$PWD/bin/cod-prep" "$t/bin/"
# the extended corpus's shape (xz JSON lines, one document a line) from a
# few of the default corpus's Brown samples
python3 - "$t/corpus" <<'PY'
import glob, json, lzma, os, sys
for split, n in (("train", 40), ("val", 8)):
    files = sorted(glob.glob(f"var/corpus/default/{split}/brown-*.txt"))[:n]
    with lzma.open(os.path.join(sys.argv[1], f"extended-{split}.jsonl.xz"), "wt") as f:
        for p in files:
            f.write(json.dumps({"text": open(p, encoding="utf-8").read()}) + "\n")
PY
BUNDLE_DRY_BIN=$t/bin BUNDLE_DEST=$t/width.tar.xz BUNDLE_WORK=$t/bundle BUNDLE_XZ=-0 WIDTH_BUNDLE_DATA=$t/width-data \
    WIDTH_CORPUS=$t/corpus WIDTH_VOCAB=400 WIDTH_TRAIN_SHARE=1 WIDTH_VAL_SHARE=1 \
    tests/gpu/bundle.sh --width > "$t/bundle.log" 2>&1
rc=$?
check "the width bundle made (the emulator's programs, the text, the model)" \
    bash -c "[ $rc -eq 0 ] && tar -tJf '$t/width.tar.xz' > '$t/bundle.list' || { tail -20 '$t/bundle.log'; false; }"
check "the bundle holds cod-prep, the text and the SentencePiece model" \
    bash -c "grep -qx './bin/cod-prep' '$t/bundle.list' && grep -qx './data/width/train.jsonl.xz' '$t/bundle.list' &&
             grep -qx './data/width/val.jsonl.xz' '$t/bundle.list' && grep -qx './data/width/sp.model' '$t/bundle.list'"
check "the bundle says what a call carrying it sends" \
    grep -qE '^bundle: a call that carries width.tar.xz sends [0-9]+ KiB: the tree' "$t/bundle.log"

# a toy model on the emulated GPU: 2 layers of 64, 4 rows of 64 tokens an
# update (documents cut at 63), 128 targets an evaluation of each kind
export OUT=$t/out COD_BUNDLE=$t/width.tar.xz STUDY_OUT=$t/report WIDTH_SEQ=64
small="model.dim=64 model.n_heads=2 model.ffn_dim=176 train.seq_len=64 train.batch_seqs=4 train.micro_batch=4 eval.tokens=128 eval.train_tokens=128"
STUDY_DIR=$t/study WIDTH_DATA=$t/data DEPTHS=2 TOKENS=300 SPEC_MORE="$small eval.every=2 stats.every=1" BUDGET=300 \
    tests/gpu/plan.sh width > "$t/width.log" 2>&1
rc=$?
s=$OUT/width.txt
r=$t/report
sed 's/^/  /' "$s"
check "seeds: exit 0, every run ended" bash -c "[ $rc -eq 0 ] || { tail -30 '$t/width.log'; tail -30 '$t/study/worker-1.log'; false; }"
check "seeds: the bundle unpacked, its programs used" \
    bash -c "[ -x '$t/width/bin/cod-prep' ] && grep -q '^bundle: built from ' '$s'"
check "seeds: tokenized by the bundle's cod-prep: SentencePiece, </s> at the end, pad 0" python3 - "$t/data/meta.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m["tokenizer"] == "sentencepiece" and m["vocab_size"] == 400, m
assert m["doc_token"] == 1 and m["doc_token_at"] == "end" and m["pad_token"] == 0, m
assert m["input"]["split_paragraphs"] == 63 and m["input"]["documents_cut"] > 0, m["input"]
PY
check "seeds: what a row holds said, and the schedule" \
    bash -c "grep -qE '^width data: train: .* targets, fill 0\.[0-9]+, 0 truncated' '$s' &&
             grep -qE '^width study: width-paper: [0-9]+ updates of 4 × 64 \(documents packing\): .* passes over the' '$s'"
# the call's own size, one pass over the unique targets, on the toy data:
# the updates × the targets of one make the pool once
python3 studies/width/steps.py studies/width/paper-gpu.json "$t/data/tokens.json" 1x train.batch_seqs=4 train.seq_len=64 \
    > "$t/pass.json" 2> "$t/pass.txt"
check "seeds: its size, one pass over the unique targets (steps.py 1x), on the toy data" python3 - "$t/pass.json" "$t/data/tokens.json" "$t/pass.txt" <<'PY'
import json, math, re, sys
spec, tok = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
per, steps = 4 * tok["train"]["mean_targets_per_row"], spec["train"]["steps"]
# one pass, up to a multiple of ten updates (the evaluations a tenth apart)
assert steps % 10 == 0 and 0 <= steps - math.ceil(tok["train"]["targets"] / per) < 10, spec["train"]
assert spec["eval"]["every"] == steps // 10, spec["eval"]
assert re.search(r" 1\.0[0-9] passes over the", open(sys.argv[3]).read())
PY
check "seeds: three seed pairs, and a pair at lr 2e-3, every run succeeded" \
    bash -c "[ \$(grep -c ',succeeded,' '$r/gpu-paper-seeds-L2/cells.csv') -eq 6 ] &&
             [ \$(grep -c ',succeeded,' '$r/gpu-paper-seeds-lr2e-3-L2/cells.csv') -eq 2 ] &&
             [ -s '$r/gpu-paper-seeds-L2/report.html' ] && [ -s '$r/gpu-paper-seeds-lr2e-3-L2/tokens.json' ]"
check "seeds: the call's specs: the paper's recipe, the training sample, no pruning, the rate pair at seed 1" \
    python3 - "$r/gpu-paper-seeds-L2/base.json" "$r/gpu-paper-seeds-lr2e-3-L2/base.json" "$r/gpu-paper-seeds-lr2e-3-L2/cells.csv" <<'PY'
import csv, json, sys
p, q = (json.load(open(f)) for f in sys.argv[1:3])
assert p["train"]["precision"] == "bf16" and p["data"]["packing"] == "documents" and p["model"]["embed_std"] == 0.02, p
assert p["train"]["clip"] == 0 and p["train"]["lr"] == 1e-3 and q["train"]["lr"] == 2e-3, (p, q)
assert p["eval"]["train_tokens"] == 128 and p["analysis"] == {"prune": False, "angular": False}, p
assert p["train"]["warmup"] == max(1, round(p["train"]["steps"] / 10)), p["train"]
assert {r["seed"] for r in csv.DictReader(open(sys.argv[3]))} == {"1"}
PY
check "seeds: every run's own series holds the training sample's loss at each evaluation" \
    bash -c "for f in '$r'/gpu-paper-seeds*-L2/runs/*.csv; do
                 [ \$(grep -c ',eval/loss,,' \"\$f\") -ge 2 ] &&
                 [ \$(grep -c ',train_eval/loss,,' \"\$f\") -eq \$(grep -c ',eval/loss,,' \"\$f\") ] || exit 1
             done"
reading=$r/gpu-seeds-L2-reading.md
check "seeds: the reading's table, three runs an arm, one at lr 2e-3" \
    bash -c "grep -qE '^\| 2 \| Pre-LN \| 3 \| ([0-9]+) of \\1 updates \| [0-9.]+ ± [0-9.]+ \(n=3\) \|' '$reading' &&
             grep -qE '^\| 2 \| LNS \| 1 \| [0-9]+ of [0-9]+ updates \| [0-9.]+ \(n=1\) \|' '$reading'"
check "seeds: the paired gap over three seeds, with its interval and its verdict by the rule" \
    grep -qE '^L = 2, Pre-LN − LNS at equal seeds: [-+][0-9.]+ ppl; [-+][0-9.]+ nats \[[-+][0-9.]+, [-+][0-9.]+\], n = 3, p = [0-9.e-]+, TOST ±0\.01: p = [0-9.e-]+ \([^)]*\): (Pre-LN lower|LNS lower|unresolved|within noise|.*by less than).* \(final; by seed 1: ' "$reading"
check "seeds: the rate pair n = 1, and each arm's change from lr 1e-3 at seed 1" \
    bash -c "grep -qE '^L = 2, Pre-LN − LNS at equal seeds: [-+][0-9.]+ ppl; [-+][0-9.]+ nats \(n = 1: no interval\) \(final; by seed 1: ' '$reading' &&
             grep -qF 'What differs: train.lr: 0.001 → 0.002.' '$reading' &&
             grep -qE '^- LNS, its final loss here − there: [-+][0-9.]+ nats \(n = 1: no interval\) \(by seed 1: ' '$reading'"
check "seeds: the held-out − training-sample gap at the last evaluation of the pass, per arm, LNS's minus Pre-LN's" \
    grep -qE '^\| 1 \| [0-9]+ \([0-9.e-]+\) \| [-0-9.]+ ± [0-9.]+ \(n=3\) \| [-0-9.]+ ± [0-9.]+ \(n=3\) \| [-+][0-9.]+ nats .*\(exploratory, uncorrected\)' "$reading"
check "seeds: claim 3 not measured in this call (no pruning), said why" \
    grep -qF "3. Pre-LN's deep blocks matter less than LNS's: not measured (no pruning" "$reading"
check "seeds: ended within its budget" \
    bash -c "n=\$(sed -n 's/^plan width: \([0-9]*\) s of 300$/\1/p' '$s'); [ -n \"\$n\" ] && [ \"\$n\" -le 300 ]"
tar -tzf "$OUT/width.tgz" > "$t/width.list" 2>&1
check "seeds: the archive holds both reports, the runs' series and the reading" \
    bash -c "grep -q 'report/gpu-paper-seeds-L2/report.html$' '$t/width.list' && grep -q 'report/gpu-paper-seeds-lr2e-3-L2/runs/.*\.csv$' '$t/width.list' &&
             grep -q 'report/gpu-seeds-L2-reading.md$' '$t/width.list'"

# the later call, half the pool and about two passes, too long for its
# deadline (BUDGET 240, the deadline 120 s before it: the emulated workers
# take many seconds to finish an update and report): all eight runs cut at
# once, at a checkpoint; its folders beside the seeds call's
rm -rf "$OUT"
STUDY_DIR=$t/study-half WIDTH_DATA=$t/data-half CALL=half DEPTHS=2 SPEC_MORE="$small eval.every=2" BUDGET=240 WIDTH_MARGIN=120 \
    tests/gpu/plan.sh width > "$t/half.log" 2>&1
s=$OUT/width.txt
sed 's/^/  /' "$s"
reading=$r/gpu-half-L2-reading.md
check "half: half the training documents, about two passes planned" \
    bash -c "grep -qF \"width data: the pool's share 0.5: 20 of 40 training documents\" '$s' &&
             grep -qE '^width study: width-paper: [0-9]+ updates of 4 × 64 .* (1\.9[5-9]|2\.0[0-9]) passes over the' '$s'"
check "half: the workers stopped at the deadline, all eight runs at a checkpoint" \
    bash -c "grep -qF 'study: cut at the deadline: the workers stopped, their runs at a checkpoint' '$s' &&
             grep -qF 'width study: DEADLINE passed with cells unfinished' '$s' &&
             [ \$(grep -l 'stopped at step' '$t/study-half'/worker-*.log | xargs grep -l 'experiment [0-9]*: released' | wc -l) -eq 8 ]"
check "half: the reports written with every run unfinished, beside the seeds call's" \
    bash -c "[ -s '$r/gpu-paper-half-L2/report.html' ] && [ \$(grep -c ',queued,' '$r/gpu-paper-half-L2/cells.csv') -eq 6 ] &&
             [ \$(grep -c ',queued,' '$r/gpu-paper-half-lr2e-3-L2/cells.csv') -eq 2 ] &&
             [ \$(grep -c ',succeeded,' '$r/gpu-paper-seeds-L2/cells.csv') -eq 6 ] && [ -s '$r/gpu-seeds-L2-reading.md' ]"
tar -tzf "$OUT/width.tgz" > "$t/half.list" 2>&1
check "half: the archive holds this call's reports and reading, not the seeds call's" \
    bash -c "grep -q 'report/gpu-paper-half-L2/report.html$' '$t/half.list' && grep -q 'report/gpu-half-L2-reading.md$' '$t/half.list' &&
             ! grep -qE 'report/(gpu-paper-seeds|gpu-seeds-L2-reading.md)' '$t/half.list'"
check "half: the reading says where each run was cut, of how many updates" \
    bash -c "grep -qE '^\| 2 \| (Pre-LN|LNS) \| 3 \| cut at the deadline: update [0-9]+ of [0-9]+' '$reading' &&
             [ \$(grep -cE '^\| 2 \| (Pre-LN|LNS) \| [13] \| cut at the deadline: update [0-9]+ of [0-9]+' '$reading') -eq 4 ]"
# every pair compared at one update, which every run of the three pairs reached
check "half: the three pairs compared at the last evaluation every pair reached" python3 - "$reading" "$r/gpu-paper-half-L2" <<'PY'
import csv, glob, os, re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^L = 2, Pre-LN − LNS at equal seeds: .*\(at update (\d+), the last evaluation every pair reached; by seed 1: [-+0-9.]+, 2: [-+0-9.]+, 3: [-+0-9.]+\)$", text, re.M)
assert m, text
at = int(m.group(1))
for f in glob.glob(os.path.join(sys.argv[2], "runs", "*.csv")):
    evals = {int(r["step"]) for r in csv.DictReader(open(f)) if r["name"] == "eval/loss"}
    assert at in evals, (f, at, sorted(evals))
PY
check "half: claim 3 not measured, said why" \
    grep -qF "3. Pre-LN's deep blocks matter less than LNS's: not measured (no pruning" "$reading"
python3 studies/width/read.py "$r/gpu-paper-seeds-L2+$r/gpu-paper-half-L2" > "$t/pooled.txt" 2>&1
rc=$?
check "half: the two calls' folders, of two schedules, not pooled, and said why" \
    bash -c "[ $rc -ne 0 ] && grep -qF 'gpu-paper-half-L2 trained on another schedule than' '$t/pooled.txt'"
check "half: ended within its budget" \
    bash -c "n=\$(sed -n 's/^plan width: \([0-9]*\) s of 240$/\1/p' '$s'); [ -n \"\$n\" ] && [ \"\$n\" -le 240 ]"
none_left() { ! pgrep -f "$t/study" >/dev/null; }
check "no server or worker of the study left" none_left
