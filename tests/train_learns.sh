#!/usr/bin/env bash
# A small model learns real English (the default corpus, bytes): the train
# loss falls far below ln(vocab) in a few hundred steps, and held-out
# perplexity falls at every evaluation.
cd "$(dirname "$0")/.." && . tests/lib.sh
need_corpus
out=$(mktemp -d /tmp/cod-learn-XXXXXX)
cat > "$out/spec.json" <<JSON
{"name": "learn", "model": {"dim": 64, "n_layers": 2, "n_heads": 2, "ffn_dim": 176},
 "norm": "lns",
 "data": {"train": "var/data/default-bytes/train_*.bin", "val": "var/data/default-bytes/val_*.bin"},
 "train": {"steps": 250, "seq_len": 128, "batch_seqs": 16, "micro_batch": 16, "lr": 3e-3, "warmup": 25},
 "eval": {"every": 50, "tokens": 65536}, "stats": {"every": 50}, "checkpoint": {"every": 0}}
JSON
bin/cod-train "$out/spec.json" --out "$out/run" --progress-seconds 30 > "$out/log" 2>&1
check "learn: cod-train exits 0" test $? -eq 0
m="$out/run/metrics.jsonl"
vocab=$(grep -o '"vocab_size": [0-9]*' var/data/default-bytes/meta.json | grep -o '[0-9]*$')
last=$(values "$m" train/loss | tail -10 | awk '{s += $1} END {printf "%.4f", s / NR}')
echo "  final train loss (mean of last 10) $last, ln(vocab) $(awk -v v="$vocab" 'BEGIN {printf "%.3f", log(v)}')"
check "learn: train loss below half of ln(vocab)" awk -v l="$last" -v v="$vocab" 'BEGIN {exit !(l < 0.5 * log(v))}'
ppl=$(values "$m" eval/ppl | tr '\n' ' ')
echo "  eval perplexity at steps 0,50,...,250: $ppl"
check "learn: eval perplexity falls at every evaluation" awk -v s="$ppl" 'BEGIN {
    n = split(s, p, " "); if (n < 6) exit 1
    for (i = 2; i <= n; i++) if (p[i] + 0 >= p[i - 1] + 0) exit 1 }'
check "learn: per-layer out_var for layers 0..2" test "$(grep -c '"step": 250, "name": "layer/out_var"' "$m")" -eq 3
rm -rf "$out"
