#!/usr/bin/env bash
# cod-worker's own cost, measured against itself in the same run:
#  1. submission → lease → first update on an idle worker (long-polling), a
#     few times; the lease time is the dispatch latency, the rest is model
#     setup (allocation, init, the step-0 evaluation) and the first update.
#  2. training tokens/s through cod-worker against cod-train on the same
#     spec (the default model, 2 threads), alternating A B A B; the figure is
#     the ratio of median per-update tokens/s.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${BENCH_OUT:-bench/out}/worker
rm -rf "$out"; mkdir -p "$out"
scripts/corpus.sh >/dev/null
bin/cod-server --listen 127.0.0.1:0 --db "$out/cod.db" --port-file "$out/port" 2>"$out/server.log" &
server=$!
bin_worker_pid=
trap 'kill $bin_worker_pid $server 2>/dev/null; wait 2>/dev/null' EXIT
for _ in $(seq 100); do [ -s "$out/port" ] && break; sleep 0.05; done
B=http://127.0.0.1:$(cat "$out/port")
bin/cod-worker --server "$B" --work-dir "$out/work" --name bench >"$out/worker.log" 2>&1 &
bin_worker_pid=$!
ts() { date -d "$1" +%s.%N; } # a worker log timestamp (local time) in epoch seconds
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "== submission to first update on an idle worker (default model, 5 times) =="
bin/cod-train default --print-spec >"$out/base.json"
for i in 1 2 3 4 5; do
    sleep 1 # the worker is back in its long-poll
    spec=$(sed "s/\"steps\": 400/\"steps\": 2/; s/\"name\": \"default-lns\"/\"name\": \"latency-$i\"/" "$out/base.json")
    t0=$(date +%s.%N)
    id=$(curl -s -X POST "$B/v1/experiments" --data-binary "$spec" | grep -o '"id":[0-9]*' | head -1 | cut -d: -f2)
    for _ in $(seq 600); do grep -q "\[exp $id\] first update done" "$out/worker.log" && break; sleep 0.05; done
    lease=$(ts "$(grep "\[exp $id\] leased run" "$out/worker.log" | cut -d' ' -f1)")
    first=$(ts "$(grep "\[exp $id\] first update done" "$out/worker.log" | cut -d' ' -f1)")
    eval0=$(grep "\[exp $id\] eval step 0" "$out/worker.log" | cut -d' ' -f1)
    awk -v a="$t0" -v b="$lease" -v c="$first" -v e="$(ts "$eval0")" 'BEGIN {
        printf "  run %d: lease %6.1f ms after the POST; first update %.3f s after the POST (setup and step-0 eval %.3f s, update %.3f s)\n",
            '"$i"', (b - a) * 1000, c - a, e - b, c - e }' | tee -a "$out/latency.txt"
done
for _ in $(seq 600); do grep -q "experiment $id: " "$out/worker.log" && break; sleep 0.1; done

echo
echo "== tokens/s: cod-worker against cod-train, same spec, A B A B =="
sed 's/"steps": 400/"steps": 60/; s/"every": 100, "tokens"/"every": 0, "tokens"/; s/"name": "default-lns"/"name": "throughput"/' "$out/base.json" >"$out/tp.json"
rate() { grep '"train/tokens_per_s"' "$1" | awk -F'"value": ' 'NR > 2 {sub(/}/, "", $2); print $2}' | median; }
for round in 1 2; do
    rm -rf "$out/train-$round"
    bin/cod-train "$out/tp.json" --out "$out/train-$round" --progress-seconds 60 >/dev/null
    a=$(rate "$out/train-$round/metrics.jsonl")
    id=$(curl -s -X POST "$B/v1/experiments" --data-binary @"$out/tp.json" | grep -o '"id":[0-9]*' | head -1 | cut -d: -f2)
    for _ in $(seq 3000); do grep -q "experiment $id: " "$out/worker.log" && break; sleep 0.1; done
    b=$(rate "$out/work/experiments/$id/metrics.jsonl")
    echo "  round $round: cod-train $a tok/s, cod-worker $b tok/s, ratio $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b / a}')" | tee -a "$out/throughput.txt"
done
