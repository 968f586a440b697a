#!/usr/bin/env bash
# The width study's shards, made where it trains (once: a second call finds
# them): cod-prep tokenizes the bundle's text (SRC/train.jsonl.xz, with
# SRC/val.jsonl.xz held out) with its SentencePiece model (SRC/sp.model)
# on every core into WIDTH_DATA (default var/data/width), each document cut
# at its blank lines into documents of at most WIDTH_SPLIT tokens (default
# WIDTH_SEQ − 1, 255, so that one with its </s> fits a row of 256 + 1: the
# paper's recipe trains the first 257 tokens of a document and never sees
# the rest); then tokens.py says what rows of WIDTH_SEQ (default 256, the
# paper's seq_len) hold (WIDTH_DATA/tokens.json).
#   studies/width/data.sh SRC     (the unpacked bundle's data/width, or
#                                  var/gpu-bundle/width-data here)
# COD_PREP names cod-prep (default bin/cod-prep). WIDTH_POOL (default 1):
# the share of the training documents tokenized (slice.py: spread evenly
# over the sources, as the bundle's share was drawn), for a call that
# repeats a smaller pool; the held-out documents are all kept.
set -euo pipefail
cd "$(dirname "$0")/../.."
src=${1:?usage: studies/width/data.sh SRC}
data=${WIDTH_DATA:-var/data/width}
seq=${WIDTH_SEQ:-256}
split=${WIDTH_SPLIT:-$((seq - 1))}
if [ ! -f "$data/meta.json" ]; then
    for f in train.jsonl.xz val.jsonl.xz sp.model; do
        [ -f "$src/$f" ] || { echo "width data: no $src/$f" >&2; exit 1; }
    done
    start=$SECONDS
    train=$src/train.jsonl.xz
    if [ "${WIDTH_POOL:-1}" != 1 ]; then
        mkdir -p "$(dirname "$data")"
        train=$data.pool.jsonl
        read -r n kept _ < <(python3 studies/width/slice.py "$WIDTH_POOL" "$src/train.jsonl.xz" "$train")
        echo "width data: the pool's share $WIDTH_POOL: $kept of $n training documents"
    fi
    "${COD_PREP:-bin/cod-prep}" --tokenizer sentencepiece --tokenizer-model "$src/sp.model" \
        --split "paragraphs:$split" --threads "$(nproc)" --quiet --out "$data" \
        --val "$src/val.jsonl.xz" "$train"
    [ "$train" = "$src/train.jsonl.xz" ] || rm -f "$train"
    echo "width data: tokenized in $((SECONDS - start)) s on $(nproc) cores into $data"
fi
[ -f "$data/tokens.json" ] || python3 studies/width/tokens.py "$data" "$seq" > "$data/tokens.json"
python3 - "$data/tokens.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
for s in ("train", "val"):
    x = t[s]
    print(f"width data: {s}: {x['rows']:,} documents of 2+ tokens, {x['tokens']:,} tokens; "
          f"in rows of {t['seq_len']}: {x['targets']:,} targets, fill {x['fill']:.3f}, "
          f"{x['truncated']} truncated ({x['truncated_targets_lost']:,} targets never seen)")
PY
