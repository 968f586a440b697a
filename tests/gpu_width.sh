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
#  - both recipes side by side, a toy model of 2 layers trained to the
#    end: each report written, every run's own series, the reading with its
#    table and the three claims beside the depth study's width-64 run, the
#    pruning and angular distance of every run, within the budget;
#  - a pair too long for its deadline, of another seed (SEEDS=2): both
#    runs cut at once by the deadline (each stopped at a checkpoint,
#    handed back, its metrics in), the reading saying so and comparing the
#    pair at the last evaluation both reached; its folders beside the first
#    call's, which stay; nothing of the study left running.
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
# update (documents cut at 63)
export OUT=$t/out COD_BUNDLE=$t/width.tar.xz WIDTH_DATA=$t/data STUDY_OUT=$t/report WARM_TORCH= WIDTH_SEQ=64
small="model.dim=64 model.n_heads=2 model.ffn_dim=176 train.seq_len=64 train.batch_seqs=4 train.micro_batch=4 eval.tokens=512"
STUDY_DIR=$t/study RECIPES="paper today" DEPTHS=2 TOKENS=500 SPEC_MORE="$small eval.every=3 stats.every=2" BUDGET=200 \
    tests/gpu/plan.sh width > "$t/width.log" 2>&1
rc=$?
s=$OUT/width.txt
sed 's/^/  /' "$s"
check "width: exit 0, every run ended" bash -c "[ $rc -eq 0 ] || { tail -30 '$t/width.log'; tail -30 '$t/study/worker-1.log'; false; }"
check "width: the bundle unpacked, its programs used" \
    bash -c "[ -x '$t/width/bin/cod-prep' ] && grep -q '^bundle: built from ' '$s'"
check "width: tokenized by the bundle's cod-prep: SentencePiece, </s> at the end, pad 0" python3 - "$t/data/meta.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m["tokenizer"] == "sentencepiece" and m["vocab_size"] == 400, m
assert m["doc_token"] == 1 and m["doc_token_at"] == "end" and m["pad_token"] == 0, m
assert m["input"]["split_paragraphs"] == 63 and m["input"]["documents_cut"] > 0, m["input"]
PY
check "width: what a row holds said (fill, unique targets, passes)" \
    bash -c "grep -qE '^width data: train: .* targets, fill 0\.[0-9]+, 0 truncated' '$s' &&
             grep -qE '^width study: width-paper: [0-9]+ updates of 4 × 64 \(documents packing\): .* passes over the' '$s'"
for r in paper today; do
    check "width: $r's report written, its two runs succeeded" \
        bash -c "[ -s '$t/report/gpu-$r-L2/report.html' ] && [ \$(grep -c ',succeeded,' '$t/report/gpu-$r-L2/cells.csv') -eq 2 ]"
    check "width: $r's runs' own series (eval, out_var at every statistics point)" \
        bash -c "for f in '$t/report/gpu-$r-L2'/runs/*.csv; do grep -q ',eval/ppl,,' \"\$f\" && grep -q '^0,layer/out_var,2,' \"\$f\" || exit 1; done"
    check "width: $r pruned and measured the angles at the end" \
        bash -c "grep -q 'prune/delta_loss' '$t/report/gpu-$r-L2/prune.csv' && [ \$(wc -l < '$t/report/gpu-$r-L2/angular.csv') -gt 1 ]"
done
check "width: the paper's recipe ran as it says" python3 - "$t/report/gpu-paper-L2/base.json" "$t/report/gpu-today-L2/base.json" <<'PY'
import json, sys
p, t = (json.load(open(f)) for f in sys.argv[1:])
assert p["train"]["precision"] == "bf16" and p["data"]["packing"] == "documents" and p["model"]["embed_std"] == 0.02, p
assert p["train"]["clip"] == 0 and p["train"]["lr"] == 1e-3 and p["train"]["min_lr_ratio"] == 0.1, p
assert t["train"]["precision"] == "mixed" and t["data"]["packing"] == "stream", t
assert p["train"]["warmup"] == max(1, round(p["train"]["steps"] / 10)), p["train"]
PY
check "width: the reading's table, a row an arm" \
    bash -c "grep -qE '^\| 2 \| Pre-LN \| 1 \| [0-9]+ of [0-9]+ updates \| [0-9.]+ \(n=1\) \|' '$t/report/gpu-L2-reading.md' &&
             grep -qE '^\| 2 \| LNS \| 1 \| [0-9]+ of [0-9]+ updates \|' '$t/report/gpu-L2-reading.md'"
check "width: the pair compared at equal seeds, final" \
    grep -qE '^L = 2, Pre-LN − LNS at equal seeds, eval perplexity: [-+][0-9.]+, [-+][0-9.]+ nats \(final; one seed: no interval\)' \
    "$t/report/gpu-L2-reading.md"
check "width: the three claims, each with a verdict, beside width 64" \
    bash -c "grep -qE '^1\. .*: (holds|does not hold): Pre-LN' '$t/report/gpu-L2-reading.md' &&
             grep -qE '^2\. .*: (holds|does not hold) at one seed' '$t/report/gpu-L2-reading.md' &&
             grep -qE '^3\. .*: (holds|the opposite.*): removing one of the deepest half costs Pre-LN' '$t/report/gpu-L2-reading.md' &&
             grep -qF 'width 64: not run at this depth' '$t/report/gpu-L2-reading.md'"
check "width: ended within its budget" \
    bash -c "n=\$(sed -n 's/^plan width: \([0-9]*\) s of 200$/\1/p' '$s'); [ -n \"\$n\" ] && [ \"\$n\" -le 200 ]"
tar -tzf "$OUT/width.tgz" > "$t/width.list" 2>&1
check "width: the archive holds the reports, the runs' series and the reading" \
    bash -c "grep -q 'report/gpu-paper-L2/report.html$' '$t/width.list' && grep -q 'report/gpu-today-L2/runs/.*\.csv$' '$t/width.list' &&
             grep -q 'report/gpu-L2-reading.md$' '$t/width.list'"

# a pair that cannot end before its deadline (BUDGET 60: the deadline 45 s
# before): both runs cut at once, at a checkpoint; a later call's seed, so
# its report lands in gpu-paper-seeds2-L2 and its reading in gpu-seeds2-L2-reading.md
rm -rf "$OUT"
STUDY_DIR=$t/study-cut RECIPES=paper SEEDS=2 DEPTHS=2 TOKENS=1000000 SPEC_MORE="$small eval.every=2" BUDGET=60 \
    tests/gpu/plan.sh width > "$t/cut.log" 2>&1
s=$OUT/width.txt
sed 's/^/  /' "$s"
check "cut: the workers stopped at the deadline, the runs at a checkpoint" \
    bash -c "grep -qF 'study: cut at the deadline: the workers stopped, their runs at a checkpoint' '$s' &&
             grep -qF 'width study: DEADLINE passed with cells unfinished' '$s' &&
             [ \$(grep -l 'stopped at step' '$t/study-cut'/worker-*.log | xargs grep -l 'experiment [0-9]*: released' | wc -l) -eq 2 ]"
check "cut: the report written with both runs unfinished, beside the first call's" \
    bash -c "[ -s '$t/report/gpu-paper-seeds2-L2/report.html' ] && [ \$(grep -c ',queued,' '$t/report/gpu-paper-seeds2-L2/cells.csv') -eq 2 ] &&
             [ \$(grep -c ',succeeded,' '$t/report/gpu-paper-L2/cells.csv') -eq 2 ] && [ -s '$t/report/gpu-L2-reading.md' ]"
tar -tzf "$OUT/width.tgz" > "$t/cut.list" 2>&1
check "cut: the archive holds this call's report and reading, not the first call's" \
    bash -c "grep -q 'report/gpu-paper-seeds2-L2/report.html$' '$t/cut.list' && grep -q 'report/gpu-seeds2-L2-reading.md$' '$t/cut.list' &&
             ! grep -qE 'report/(gpu-paper-L2/|gpu-L2-reading.md)' '$t/cut.list'"
check "cut: the reading says where each run was cut, of how many updates" \
    bash -c "[ \$(grep -cE '^\| 2 \| (Pre-LN|LNS) \| 1 \| cut at the deadline: update [0-9]+ of [0-9]+ \|' '$t/report/gpu-seeds2-L2-reading.md') -eq 2 ]"
check "cut: the pair compared at the last evaluation both reached" \
    grep -qE '^L = 2, Pre-LN − LNS at equal seeds, eval perplexity: .*\(at the last evaluation both reached \(update [0-9]+ for seed 2\); one seed' \
    "$t/report/gpu-seeds2-L2-reading.md"
check "cut: claim 3 not measured, said why" \
    grep -qF '3. Pre-LN'"'"'s deep blocks matter less than LNS'"'"'s: not measured (no pruning' "$t/report/gpu-seeds2-L2-reading.md"
python3 studies/width/read.py "$t/report/gpu-paper-L2+$t/report/gpu-paper-seeds2-L2" > "$t/pooled.txt" 2>&1
rc=$?
check "cut: the two calls' folders, of two schedules, not pooled, and said why" \
    bash -c "[ $rc -ne 0 ] && grep -qF 'gpu-paper-seeds2-L2 trained on another schedule than' '$t/pooled.txt'"
check "cut: ended within its budget" \
    bash -c "n=\$(sed -n 's/^plan width: \([0-9]*\) s of 60$/\1/p' '$s'); [ -n \"\$n\" ] && [ \"\$n\" -le 60 ]"
none_left() { ! pgrep -f "$t/study" >/dev/null; }
check "no server or worker of the study left" none_left
