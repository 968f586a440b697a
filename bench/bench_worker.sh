#!/usr/bin/env bash
# cod-worker's own cost, measured against itself in the same run:
#  1. submission → lease → first update on an idle worker (long-polling), a
#     few times; the lease time is the dispatch latency, the rest is model
#     setup (allocation, init) and the first update (no step-0 evaluation).
#  2. training tokens/s through cod-worker against cod-train on the same
#     spec (the default model, 2 threads), alternating A B A B; the figure is
#     the ratio of median per-update tokens/s, per round and over all.
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

echo "== submission to first update on an idle worker (default model, no step-0 eval, 5 times) =="
bin/cod-train default --print-spec >"$out/base.json"
# edit: a JS expression over the spec s, e.g. 's.train.steps = 2'
edit() { node -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1])); eval(process.argv[2]); console.log(JSON.stringify(s))' "$out/base.json" "$1"; }
ended() { grep -q "experiment $1: " "$out/worker.log"; }
wait_ended() { for _ in $(seq 6000); do ended "$1" && return 0; sleep 0.1; done; return 1; }
for i in 1 2 3 4 5; do
    spec=$(edit "s.name = 'latency-$i'; s.train.steps = 2; s.train.warmup = 1; s.eval.every = 0; s.stats.every = 0")
    sleep 0.5 # the worker is back in its long-poll
    t0=$(date +%s.%N)
    id=$(curl -s -X POST "$B/v1/experiments" -H 'Content-Type: application/json' --data-binary "$spec" | grep -o '"id":[0-9]*' | head -1 | cut -d: -f2)
    wait_ended "$id"
    lease=$(ts "$(grep "\[exp $id\] leased run" "$out/worker.log" | cut -d' ' -f1)")
    first=$(ts "$(grep "\[exp $id\] first update done" "$out/worker.log" | cut -d' ' -f1)")
    awk -v a="$t0" -v b="$lease" -v c="$first" -v i="$i" 'BEGIN {
        printf "  run %d: leased %6.1f ms after the POST; first update done %.3f s after the POST (%.3f s after the lease: model setup and one update)\n",
            i, (b - a) * 1000, c - a, c - b }' | tee -a "$out/latency.txt"
done

echo
echo "== tokens/s: cod-worker against cod-train, same spec, A B A B A B =="
edit "s.name = 'throughput'; s.train.steps = 60; s.train.warmup = 6" >"$out/tp.json"
rate() { grep '"train/tokens_per_s"' "$1" | awk -F'"value": ' 'NR > 2 {sub(/}/, "", $2); print $2}' | median; }
for round in 1 2 3; do
    rm -rf "$out/train-$round"
    bin/cod-train "$out/tp.json" --out "$out/train-$round" --progress-seconds 60 >/dev/null
    a=$(rate "$out/train-$round/metrics.jsonl")
    id=$(curl -s -X POST "$B/v1/experiments" -H 'Content-Type: application/json' --data-binary @"$out/tp.json" | grep -o '"id":[0-9]*' | head -1 | cut -d: -f2)
    wait_ended "$id"
    b=$(rate "$out/work/experiments/$id/metrics.jsonl")
    echo "  round $round: cod-train $a tok/s, cod-worker $b tok/s, ratio $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b / a}')" | tee -a "$out/throughput.txt"
    echo "$a $b" >>"$out/rates.txt"
done
awk '{a += $1; b += $2} END {printf "  all rounds: cod-worker / cod-train = %.3f\n", b / a}' "$out/rates.txt" | tee -a "$out/throughput.txt"
