#!/usr/bin/env bash
# 300 steps of llama-9m on the default corpus, once on the CPU and once on
# cuda:0 from the same spec and seed: the CUDA run's training loss must be
# within 2% of the CPU run's at every logged step (and the held-out loss at
# every evaluation). Run from tests/gpu/run.sh after the build.
cd "$(dirname "$0")/../.." && . tests/lib.sh
need_corpus
t=$(mktemp -d /tmp/cod-gpu-curve-XXXXXX)
cat > "$t/spec.json" <<'SPEC'
{"name": "gpu-loss-curve", "model": "llama-9m",
 "data": {"train": "var/data/default-bytes/train_*.bin", "val": "var/data/default-bytes/val_*.bin"},
 "train": {"steps": 300, "seq_len": 128, "batch_seqs": 32, "micro_batch": 16, "warmup": 30},
 "eval": {"every": 100, "tokens": 65536}, "stats": {"every": 50}, "checkpoint": {"every": 0}}
SPEC
for dev in cpu cuda:0; do
    out="$t/${dev%%:*}"
    bin/cod-train "$t/spec.json" --out "$out" --device "$dev" --progress-seconds 30 > "$out.log" 2>&1
    check "300 steps of llama-9m on $dev" bash -c "[ $? -eq 0 ] || { tail -5 '$out.log'; false; }"
done
# step and value of each point of one metric, "step value" per line
points() { grep "\"name\": \"$2\"" "$1" | sed 's/.*"step": \([0-9]*\).*"value": \([^,}]*\).*/\1 \2/'; }
for metric in train/loss eval/loss; do
    points "$t/cpu/metrics.jsonl" "$metric" > "$t/cpu.$metric.txt" 2>/dev/null || true
    points "$t/cuda/metrics.jsonl" "$metric" > "$t/cuda.$metric.txt" 2>/dev/null || true
done
within_2pct() { # metric
    local a="$t/cpu.$1.txt" b="$t/cuda.$1.txt"
    [ -s "$a" ] && [ "$(wc -l < "$a")" -eq "$(wc -l < "$b")" ] || { echo "  $1: missing points"; return 1; }
    paste -d' ' "$a" "$b" | awk -v m="$1" '
        $1 != $3 { print "  " m ": steps differ: " $1 " vs " $3; bad = 1; next }
        { d = ($4 - $2) / $2; if (d < 0) d = -d
          if (d > worst) worst = d
          if (!(d <= 0.02)) { printf "  %s at step %d: cuda %.5f, cpu %.5f (%.2f%%)\n", m, $1, $4, $2, 100 * d; bad = 1 } }
        END { printf "  %s: largest difference %.3f%% over %d points\n", m, 100 * worst, NR; exit bad }'
}
check "train/loss within 2% of the CPU run at every step" within_2pct train/loss
check "eval/loss within 2% of the CPU run at every evaluation" within_2pct eval/loss
rm -rf "$t"
