#!/usr/bin/env bash
# Prints layer/out_var by layer at the last stats step of two runs side by
# side, with their final eval/ppl: usage out_var_table.sh A/metrics.jsonl B/metrics.jsonl
set -euo pipefail
pick() { # file name -> "layer value" lines at the newest step of that metric
    local last
    last=$(grep "\"name\": \"$2\"" "$1" | tail -1 | sed 's/.*"step": \([0-9]*\).*/\1/')
    grep "\"step\": $last, \"name\": \"$2\"" "$1" | sed 's/.*"layer": \([0-9]*\), "value": \([^}]*\)}/\1 \2/'
}
ppl() { grep '"name": "eval/ppl"' "$1" | tail -1 | sed 's/.*"step": \([0-9]*\).*"value": \([^}]*\)}/\2 (step \1)/'; }
a=$(basename "$(dirname "$1")"); b=$(basename "$(dirname "$2")")
printf '%-6s %14s %14s\n' layer "$a" "$b"
join <(pick "$1" layer/out_var) <(pick "$2" layer/out_var) | sort -n | awk '{printf "%-6d %14.4f %14.4f\n", $1, $2, $3}'
echo "final eval/ppl: $a $(ppl "$1"); $b $(ppl "$2")"
