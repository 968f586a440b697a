#!/usr/bin/env bash
# The main job on the embedded default: fetch and tokenize the default
# corpus (once), train the default spec (a small LNS model, bytes, CPU) with
# bin/cod-train, then show final perplexity and the per-layer variance
# profile. Each run gets its own directory under var/runs/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/corpus.sh
run=var/runs/default-$(date +%Y%m%d-%H%M%S)
mkdir -p var/runs
echo "demo: training the default spec into $run (Ctrl-C stops at a checkpoint;"
echo "      bin/cod-train default --out $run --resume continues it)"
bin/cod-train default --out "$run"
m=$run/metrics.jsonl
echo
echo "held-out perplexity by step:"
grep '"name": "eval/ppl"' "$m" | sed 's/.*"step": \([0-9]*\).*"value": \([^}]*\)}/  step \1: \2/'
last=$(grep '"name": "layer/out_var"' "$m" | tail -1 | sed 's/.*"step": \([0-9]*\).*/\1/')
echo
echo "layer/out_var at step $last (layer 0 = embedding output):"
grep "\"step\": $last, \"name\": \"layer/out_var\"" "$m" |
    sed 's/.*"layer": \([0-9]*\), "value": \([^}]*\)}/\1 \2/' |
    awk '{printf "  layer %2d  %10.4f\n", $1, $2}'
echo
echo "demo: metrics in $m, checkpoints in $run/checkpoints/"
