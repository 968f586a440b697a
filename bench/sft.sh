#!/usr/bin/env bash
# Fine-tuning against pretraining at the same shape (llama-9m's, gpt2's
# vocabulary of 50,257, 16 rows of 256 tokens an update, one thread), in
# this run, each of ROUNDS rounds (default 3) running the three in turn and
# each configuration's fastest round kept:
#   pretrain   the default corpus (gpt2 shards), stream packing;
#   ft rows    from pretrain's checkpoint, LLM-Adapters' recipe (a record a
#              row, cut at 256 tokens, right-padded) on instruction records;
#   ft packed  the same records end to end in blocks (sft.pack), as OwLore.
# Throughput is the trainer's own count over its updates alone (its last
# log line: the tokens are the positions that hold a token, not a pad; the
# targets those the loss counts), so that tokenizing the records and
# starting up are left out, per second of the process's processor time (a
# machine shared with other work lends a run a changing share of its cores,
# which wall-clock rates would measure instead). Then the ratios, and the
# padding share that cutoff_len leaves: the share of a row's positions
# that are pads.
# The records: four of the eight commonsense training sets LLM-Adapters'
# Commonsense170K gathers (BoolQ, ARC-Easy, ARC-Challenge, OpenBookQA:
# 17,754 records in its layout), fetched once into var/cache/sft/ from its
# repository at a fixed commit, each checked by its sha256.
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${STEPS:-24} ROUNDS=${ROUNDS:-3}
out=bench/out/sft
mkdir -p "$out" var/cache/sft
scripts/corpus.sh >/dev/null
commit=816657208af4db747803f87ba40a4c71383fed7a
while read -r sha name; do
    f=var/cache/sft/$name-train.json
    [ -f "$f" ] || curl -fsSL -o "$f.tmp" \
        "https://raw.githubusercontent.com/AGI-Edgerunners/LLM-Adapters/$commit/dataset/$name/train.json" &&
        [ -f "$f.tmp" ] && mv "$f.tmp" "$f"
    echo "$sha  $f" | sha256sum -c --quiet - || { echo "bench/sft.sh: $f is not the pinned file" >&2; exit 1; }
done <<'SUMS'
5ccbaceebaddc69765e1c4a363632196b81851d303696672165ab59ec4e48c83 boolq
6a06cece3dec32f4fb1c1b0fc29dab14be7cf3053b417290dbc6cd845359f5ff ARC-Easy
a9debff28aafed86a08211dc3584a3b6cb38edca8c56bb34cd5002ed54aeebfb ARC-Challenge
a1e094eeea01f70c0baa880f37497b26700ae99b243927b9c529984de9b1fe90 openbookqa
SUMS
shape='"model": {"dim": 128, "n_layers": 4, "n_heads": 4, "ffn_dim": 352}'
quiet='"eval": {"every": 0}, "stats": {"every": 0}, "checkpoint": {"every": 0, "keep": 1}'
cat > "$out/pretrain.json" <<JSON
{"name": "pretrain", $shape, "norm": "pre",
 "data": {"train": "var/data/default/train_*.bin", "val": "var/data/default/val_*.bin"},
 "train": {"steps": $STEPS, "seq_len": 256, "batch_seqs": 16, "micro_batch": 16, "warmup": 0}, $quiet}
JSON
ft() { # name, sft settings
    cat > "$out/$1.json" <<JSON
{"name": "$1", "init": {"from": "$out/start/checkpoints/step_$(printf %08d "$STEPS")"},
 "data": {"format": "instructions", "train": "var/cache/sft/*-train.json"},
 "sft": {"recipe": "llm-adapters", "val_size": 0$2},
 "train": {"steps": $STEPS, "seq_len": 256, "batch_seqs": 16, "micro_batch": 16, "warmup": 0}, $quiet}
JSON
}
ft ft-rows ''
ft ft-packed ', "pack": true, "cutoff_len": 0'
rm -rf "$out/start"
bin/cod-train "$out/pretrain.json" --out "$out/start" --threads 1 > "$out/start.log" 2>&1
declare -A tok tgt
for round in $(seq "$ROUNDS"); do
    for run in pretrain ft-rows ft-packed; do
        rm -rf "${out:?}/$run"
        bin/cod-train "$out/$run.json" --out "$out/$run" --threads 1 --progress-seconds 1e9 > "$out/$run.log" 2>&1
        # "N updates in S s (C s of processor time): X tokens/s, Y targets/s"
        read -r t g < <(sed -n 's/.* updates in \([0-9.]*\) s (\([0-9.]*\) s of processor time): \([0-9]*\) tokens\/s, \([0-9]*\) targets\/s$/\1 \2 \3 \4/p' "$out/$run.log" |
            awk '{ printf "%.0f %.0f\n", $3 * $1 / $2, $4 * $1 / $2 }')
        if [ -z "${tok[$run]:-}" ] || [ "$t" -gt "${tok[$run]}" ]; then
            tok[$run]=$t tgt[$run]=$g
        fi
    done
done
printf '%-10s %26s %28s\n' run "tokens/processor-second" "targets/processor-second"
for run in pretrain ft-rows ft-packed; do
    printf '%-10s %26d %28d\n' "$run" "${tok[$run]}" "${tgt[$run]}"
done
for run in ft-rows ft-packed; do
    awk -v a="${tok[$run]}" -v b="${tok[pretrain]}" -v r="$run" \
        'BEGIN { printf "%s / pretrain, real tokens a processor-second: %.3f\n", r, a / b }'
done
echo "the rows of LLM-Adapters' recipe, as cod-train made them:"
grep -o 'instructions (.*' "$out/ft-rows.log"
grep -o 'instructions (.*' "$out/ft-packed.log"
