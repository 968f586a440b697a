#!/usr/bin/env bash
# The default corpus cut into documents at its paragraphs, as bytes, in
# var/data/default-paragraphs-bytes (once; a second call finds it made):
# paragraphs.py, then cod-prep. What studies/recipe/run.sh and
# bench/recipe.sh train on. COD_PREP names cod-prep (default bin/cod-prep).
set -euo pipefail
cd "$(dirname "$0")/../.."
docs=var/data/default-paragraphs-bytes
[ ! -f "$docs/meta.json" ] || exit 0
[ -d var/corpus/default/train ] || CORPUS_TOKENIZERS=bytes scripts/corpus.sh
rm -rf var/corpus/default-paragraphs
# at most 128 bytes, the rows' seq_len, grouped (README.md)
python3 studies/recipe/paragraphs.py 128 128 var/corpus/default var/corpus/default-paragraphs
"${COD_PREP:-bin/cod-prep}" --tokenizer bytes --out "$docs" \
    --val var/corpus/default-paragraphs/val var/corpus/default-paragraphs/train
