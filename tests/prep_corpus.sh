#!/usr/bin/env bash
# The default corpus end to end: scripts/corpus.sh makes the shards (and a
# second run reuses them), then cod-prep --verify encodes every document of
# the corpus again with gpt2, llama and bytes and checks decode(encode(text))
# == text, with the same shards as the corpus script's, on 1 thread as on all.
set -u
cd "$(dirname "$0")/.."
COD_PREP=${COD_PREP:-bin/cod-prep}
tmp=$(mktemp -d /tmp/cod-prep-corpus.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
result() { if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1"; fi; }

scripts/corpus.sh >"$tmp/first.log" 2>&1
rc=$?
[ $rc -ne 0 ] && cat "$tmp/first.log"
result prep_corpus_fetch $rc
[ $rc -ne 0 ] && exit 1

# Reuse shows in what the second run did (its log: no fetch, no
# normalising, no tokenizing) and left (the shards untouched), not in how
# long it took on a machine that may be busy.
before=$(stat -c %Y var/data/default/meta.json var/data/default-bytes/meta.json var/data/default-llama/meta.json)
scripts/corpus.sh >"$tmp/second.log" 2>&1
rc=$?
after=$(stat -c %Y var/data/default/meta.json var/data/default-bytes/meta.json var/data/default-llama/meta.json)
if [ $rc -ne 0 ] || [ "$before" != "$after" ] || grep -qE 'npm pack|normalising|tokenizing' "$tmp/second.log"; then
    cat "$tmp/second.log"; rc=1
fi
result prep_corpus_second_run_reuses $rc

for tok in gpt2 llama bytes; do
    case $tok in gpt2) ref=var/data/default ;; *) ref=var/data/default-$tok ;; esac
    rc=0
    "$COD_PREP" --quiet --verify --tokenizer "$tok" --out "$tmp/$tok" \
        --val var/corpus/default/val var/corpus/default/train >"$tmp/$tok.log" 2>&1 || rc=1
    for f in "$ref"/train_*.bin "$ref"/val_*.bin; do
        cmp -s "$f" "$tmp/$tok/$(basename "$f")" || { echo "  $f differs from a fresh run" >&2; rc=1; }
    done
    grep -q "\"vocab_size\": $(case $tok in gpt2) echo 50257 ;; llama) echo 32000 ;; bytes) echo 257 ;; esac)," \
        "$ref/meta.json" || { echo "  $ref/meta.json: wrong vocab_size" >&2; rc=1; }
    [ $rc -ne 0 ] && cat "$tmp/$tok.log"
    result "prep_corpus_round_trip_$tok" $rc
done

rc=0
"$COD_PREP" --quiet --threads 1 --tokenizer gpt2 --out "$tmp/one" \
    --val var/corpus/default/val var/corpus/default/train >"$tmp/one.log" 2>&1 || rc=1
for f in var/data/default/train_*.bin var/data/default/val_*.bin; do
    cmp -s "$f" "$tmp/one/$(basename "$f")" || { echo "  $f: 1 thread differs from all" >&2; rc=1; }
done
result prep_corpus_threads_agree $rc
