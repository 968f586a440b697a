#!/usr/bin/env bash
# make bench: cod-analyze on a Hugging Face folder on the CPU. A random
# Llama of llama-20m's shape (dim 256, 4 layers, 4 heads of which 2
# key/value, FFN 688, Llama 2's vocabulary of 32000; bf16 safetensors, made
# by tests/hf_reference.js), held-out text tokenized with Llama 2's own
# tokenizer.json (cod-prep --tokenizer hf), sequences of 256: each
# analysis's tokens/s (forward passes' tokens over its wall time, as
# cod-analyze prints it), the memory the model takes (its first line) and
# the process's peak resident memory.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out/analyze-hf
rm -rf "$out" && mkdir -p "$out"
scripts/corpus.sh >/dev/null
scripts/hf_tokenizers.sh
node tests/hf_reference.js build "$out/model" bench
rm -f "$out/model/val_000000.bin"
bin/cod-prep --tokenizer hf --tokenizer-file var/cache/hf-tokenizers/llama2/tokenizer.json \
    --out "$out/val" --val-fraction 0 --quiet var/corpus/default/val 2>&1 | tail -1
peak() { # command...: runs it, then its peak resident memory
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f 'peak resident memory %M KiB' "$@"
    else
        "$@"
    fi
}
for a in "stats 65536" "angular 65536" "prune 16384" "logits 1024"; do
    set -- $a
    echo "-- $1 ($2 tokens)"
    extra=()
    [ "$1" = logits ] && extra=(--out "$out/logits.npy")
    peak bin/cod-analyze "$1" "$out/model" --val "$out/val/train_*.bin" --seq-len 256 --batch 16 \
        --tokens "$2" "${extra[@]}" 2>&1 | grep -E '^model:|tokens/s|peak resident' | tee -a "$out/summary.txt"
done
