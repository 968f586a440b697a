#!/usr/bin/env bash
# The width study's data as its bundle carries it (tests/gpu/bundle.sh
# --width), made here, from the extended corpus's JSON lines
# (var/corpus/extended-{train,val}.jsonl.xz, `make corpus CORPUS=extended`):
#   DIR/train.jsonl.xz  WIDTH_TRAIN_SHARE of its training documents, spread
#                       evenly over its sources (slice.py), xz -9
#   DIR/val.jsonl.xz    WIDTH_VAL_SHARE of its held-out documents, the same way
#   DIR/sp.model        a SentencePiece unigram model of WIDTH_VOCAB pieces
#                       (default 32000, the paper's vocabulary) trained on the
#                       training share by spm_train, with T5's conventions:
#                       pad 0, </s> 1 (after each document), unk 2, no <s>,
#                       NFKC; its seed, sentence sample and threads fixed,
#                       so that the same inputs give the same model
#   DIR/corpus.txt      what was made, from what
# Made again only when an input or a setting changed (DIR/key).
#   studies/width/corpus.sh DIR
# WIDTH_CORPUS: the folder of extended-{train,val}.jsonl.xz (default var/corpus).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: studies/width/corpus.sh DIR}
corpus=${WIDTH_CORPUS:-var/corpus}
train_share=${WIDTH_TRAIN_SHARE:-0.7}
val_share=${WIDTH_VAL_SHARE:-0.62}
vocab=${WIDTH_VOCAB:-32000}
# spm_train's sample of sentences (lines), its seed and threads: fixed, for
# a model that does not depend on the machine that made it
sentences=${WIDTH_SPM_SENTENCES:-1000000}
for f in "$corpus/extended-train.jsonl.xz" "$corpus/extended-val.jsonl.xz"; do
    [ -f "$f" ] || { echo "width corpus: no $f (make corpus CORPUS=extended makes it)" >&2; exit 1; }
done
command -v spm_train >/dev/null || { echo "width corpus: no spm_train (scripts/deps.sh test installs sentencepiece)" >&2; exit 1; }
key=$( (sha256sum "$corpus"/extended-{train,val}.jsonl.xz | cut -d' ' -f1
        echo "$train_share $val_share $vocab $sentences"; spm_train --version 2>&1
        cat studies/width/corpus.sh studies/width/slice.py) | sha256sum | cut -c1-16)
[ "$(cat "$out/key" 2>/dev/null)" = "$key" ] && exit 0
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
t=$out.tmp
echo "width corpus: the training share ($train_share) and the held-out share ($val_share)"
read -r n_train k_train b_train < <(python3 studies/width/slice.py "$train_share" "$corpus/extended-train.jsonl.xz" \
    "$t/train.jsonl" --text "$t/sentences.txt")
read -r n_val k_val b_val < <(python3 studies/width/slice.py "$val_share" "$corpus/extended-val.jsonl.xz" "$t/val.jsonl")
echo "width corpus: spm_train, $vocab pieces (minutes)"
# in the folder, by relative names: the model records its input's and its
# own path, which would otherwise make it differ by where it was made
(cd "$t" && spm_train --input=sentences.txt --model_prefix=sp --vocab_size="$vocab" --model_type=unigram \
    --pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1 --input_sentence_size="$sentences" \
    --shuffle_input_sentence=true --random_seed=1 --num_threads=2 --max_sentence_length=16384 \
    > spm_train.log 2>&1) || { tail -5 "$t/spm_train.log"; exit 1; }
echo "width corpus: xz -9"
xz -9 -T1 "$t/train.jsonl" "$t/val.jsonl"
{
    echo "the extended corpus (make corpus CORPUS=extended), sha256:"
    (cd "$corpus" && sha256sum extended-train.jsonl.xz extended-val.jsonl.xz | sed 's/^/  /')
    echo "train.jsonl.xz: $k_train of $n_train training documents (share $train_share), $b_train bytes of text"
    echo "val.jsonl.xz: $k_val of $n_val held-out documents (share $val_share), $b_val bytes of text"
    echo "sp.model: SentencePiece unigram, $vocab pieces, pad 0, </s> 1, unk 2, no <s>, nmt_nfkc;"
    echo "  spm_train on $sentences sentences (lines) of train.jsonl's text, shuffled, seed 1, 2 threads ($(spm_train --version 2>&1 | head -1))"
    (cd "$t" && sha256sum train.jsonl.xz val.jsonl.xz sp.model | sed 's/^/  /')
} > "$t/corpus.txt"
rm -f "$t/sentences.txt" "$t/sp.vocab"
echo "$key" > "$t/key"
rm -rf "$out"
mv "$t" "$out"
sed 's/^/width corpus: /' "$out/corpus.txt"
