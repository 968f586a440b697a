#!/usr/bin/env bash
# make bench: the figures of bench/RESULTS.md, each a ratio measured in the
# same run. Outputs go to bench/out/.
#  1. CPU training throughput at seq 256 for the llama-9m and llama-20m
#     shapes (vocab 32000), beside this machine's cblas_sgemm FLOP/s at the
#     same shapes, measured in the same process; and its peak memory.
#  2. layer/out_var by layer for pre and lns on a 12-layer small model after
#     a short run on the default corpus (bytes); what the paper's recipe
#     (train.precision bf16, data.packing documents) costs in CPU training
#     throughput at the recipe study's shape (bench/recipe.sh); fine-tuning's
#     tokens/s against pretraining's at the same shape, and the padding share
#     of LLM-Adapters' rows on real instruction records (bench/sft.sh).
#  3. tokenizer throughput (bench_tokenize), when built; cod-prep end to
#     end on every core, the default corpus as text files against the same
#     documents as .jsonl.zst, .jsonl.xz and snappy .parquet (bench_prep);
#     cod-prep's peak memory on a Parquet file and a .jsonl.zst larger than
#     its ulimit -v (bench/prep_memory.sh); the evaluation's items/s and
#     tokens/s against the forward's, and pruning with the prefix reused
#     against the L + 1 forwards (bench_eval); cod-analyze's analyses on a
#     Hugging Face folder (bench/bench_analyze_hf.sh).
#  4. cod-worker: submission to first update, tokens/s against cod-train
#     (bench_worker.sh).
#  5. cod-server: GET/s, p50/p99, metric points/s, leases/s (bench_server);
#     a sweep's expansion for a grid key of 80,000 dots and more
#     (bench_sweep), and the server's memory around six 4 MiB sweep bodies
#     (bench/sweep_memory.sh);
#     gang leases/s with 1000 simulated workers and the last member's wait
#     for its gang (bench_gangs); with group commit off too; what 5000
#     workers long-polling an empty queue cost it, and what a submission
#     wakes of them (bench_parked).
#  6. the fleet simulator (bench/fleet.sh): 10,000 and 17,500 workers and
#     100 dashboards for 60 s, and 10,000 without group commit (17,500
#     needs 18,600 open files).
#  7. where a GPU answers (nvidia-smi -L): the GPU trainer against PyTorch
#     (bench/gpu/run.sh, make bench-gpu alone).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/server.bash
out=bench/out
mkdir -p "$out"
echo "== CPU training throughput (seq 256, vocab 32000, micro-batch 16, 4 updates) =="
for shape in "llama-9m 128 4 4 352" "llama-20m 256 4 4 688"; do
    set -- $shape
    echo "-- $1"
    build/bench/bench_train "$2" "$3" "$4" "$5" 32000 16 4 | tee "$out/train-$1.txt"
done

echo
echo "== layer/out_var, pre vs lns, 12 layers (dim 128), 300 updates of 32 x 128 bytes =="
scripts/corpus.sh >/dev/null
for norm in pre lns; do
    cat > "$out/depth12-$norm.json" <<JSON
{"name": "depth12-$norm", "model": {"dim": 128, "n_layers": 12, "n_heads": 4, "ffn_dim": 352},
 "norm": "$norm",
 "data": {"train": "var/data/default-bytes/train_*.bin", "val": "var/data/default-bytes/val_*.bin"},
 "train": {"steps": 300, "seq_len": 128, "batch_seqs": 32, "micro_batch": 32, "lr": 2e-3, "warmup": 30},
 "eval": {"every": 300, "tokens": 131072}, "stats": {"every": 50}, "checkpoint": {"every": 0, "keep": 1}}
JSON
    rm -rf "$out/depth12-$norm"
    bin/cod-train "$out/depth12-$norm.json" --out "$out/depth12-$norm" --progress-seconds 60
done
bench/out_var_table.sh "$out/depth12-pre/metrics.jsonl" "$out/depth12-lns/metrics.jsonl" | tee "$out/out_var.txt"

echo
echo "== the paper's recipe: bf16 and documents packing against mixed and stream (recipe study's shape, 1 thread) =="
bench/recipe.sh | tee "$out/recipe.txt"

echo
echo "== fine-tuning against pretraining (llama-9m's shape, gpt2, 16 x 256, 1 thread) =="
bench/sft.sh | tee "$out/sft.txt"

if [ -x build/bench/bench_tokenize ]; then
    echo
    echo "== tokenizer throughput =="
    build/bench/bench_tokenize | tee "$out/tokenize.txt"
fi
if [ -x build/bench/bench_prep ]; then
    echo
    echo "== cod-prep: text files against JSON lines (.jsonl.zst, .jsonl.xz) and Parquet (snappy), gpt2, every core =="
    build/bench/bench_prep | tee "$out/prep.txt"
    echo
    echo "== cod-prep's peak memory under ulimit -v 192 MiB: 230 MB of text as Parquet and as .jsonl.zst =="
    bench/prep_memory.sh | tee "$out/prep-memory.txt"
fi

echo
echo "== prune (ΔP(l)) and angular distance, pre vs lns, on the 12-layer checkpoints above =="
# a prune sweep is 13 evaluations (the full model, then each block
# removed): 16k tokens each keeps the section to a few minutes on two cores
for norm in pre lns; do
    ck="$out/depth12-$norm/checkpoints/step_00000300"
    bin/cod-analyze prune "$ck" --tokens 16384 --out "$out/analysis-$norm" | tee "$out/prune-$norm.txt"
    bin/cod-analyze angular "$ck" --tokens 32768 --out "$out/analysis-$norm" | tee "$out/angular-$norm.txt"
done

echo
echo "== the evaluation (eval/): items/s and tokens/s against the forward's, pruning with the prefix reused (bench_eval) =="
# the cloze of the held-out text (4 choices, about 128 bytes an input) on
# the 12-layer shape above, random weights, every core
bin/cod-analyze cloze var/corpus/default/val --out "$out/cloze.jsonl" --items 1000 >/dev/null
build/bench/bench_eval "$out/cloze.jsonl" 'var/data/default-bytes/val_*.bin' | tee "$out/eval.txt"

echo
echo "== cod-analyze on a Hugging Face folder (CPU, llama-20m's shape with GQA, Llama 2's tokenizer) =="
bench/bench_analyze_hf.sh

echo
bench/bench_worker.sh

echo
echo "== cod-server on loopback (bench_server: GET/s and latency at 32 connections, points/s, leases/s) =="
# its own database and tiny shards in a temporary folder; requests not logged
sd=$(mktemp -d /tmp/cod-bench-server-XXXXXX)
head -c 30000 /dev/urandom | base64 > "$sd/text.txt"
bin/cod-prep --tokenizer bytes --val-fraction 0 --out "$sd/data" "$sd/text.txt" >/dev/null 2>&1
printf '{"model": {"dim": 32, "n_layers": 2, "n_heads": 2, "ffn_dim": 64}, "data": {"train": "%s/data/train_*.bin", "val": "%s/data/train_*.bin"}, "resources": {"device": "cpu"}}' "$sd" "$sd" > "$sd/spec.json"
server_up
build/bench/bench_server "$port" "$sd/spec.json" 10 | tee "$out/server.txt"
server_down
echo "-- the same without group commit (--group-commit 0)"
server_up --group-commit 0
build/bench/bench_server "$port" "$sd/spec.json" 10 | tee "$out/server-no-gc.txt"
server_down

echo
echo "== a sweep's expansion: one grid key of N dots, in process (bench_sweep), and six 4 MiB bodies against the server =="
build/bench/bench_sweep | tee "$out/sweep.txt"
bench/sweep_memory.sh | tee -a "$out/sweep.txt"

echo
echo "== gangs: 1000 simulated cuda workers, gangs of 8 (bench_gangs) =="
# a connection per simulated worker: the limits above 1000, as many files
printf '{"model": {"dim": 32, "n_layers": 2, "n_heads": 2, "ffn_dim": 64}, "data": {"train": "%s/data/train_*.bin", "val": "%s/data/train_*.bin"}, "train": {"batch_seqs": 16, "micro_batch": 2}, "resources": {"device": "cuda", "gpus": 8}}' "$sd" "$sd" > "$sd/gang.json"
(ulimit -n 8192
 server_up --conn-limit 4000 --per-ip-limit 4000 --lease-seconds 120
 build/bench/bench_gangs "$port" "$sd/gang.json" 1000 8 | tee "$out/gangs.txt"
 server_down)

echo
echo "== parked lease long-polls: 5000 cuda workers polling an empty queue, then submissions (bench_parked) =="
printf '{"model": {"dim": 32, "n_layers": 2, "n_heads": 2, "ffn_dim": 64}, "data": {"train": "%s/data/train_*.bin", "val": "%s/data/train_*.bin"}, "resources": {"device": "cuda"}}' "$sd" "$sd" > "$sd/cuda.json"
(ulimit -n 12000
 server_up --conn-limit 6000 --per-ip-limit 6000
 build/bench/bench_parked "$port" "$spid" "$sd/cuda.json" 5000 10 | tee "$out/parked.txt"
 server_down)
rm -rf "$sd"

echo
echo "== the fleet: N simulated workers (a beat every 5 s) and 100 dashboards, 60 s (bench/fleet.sh) =="
for run in "10000 1" "10000 0" "17500 1"; do
    set -- $run
    echo "-- $1 workers, group commit $2"
    bench/fleet.sh "$1" 100 60 "$2" | tee "$out/fleet-$1-gc$2.txt"
done

echo
echo "== the GPU trainer against PyTorch (bench/gpu/run.sh: make bench-gpu; skipped without a GPU) =="
bench/gpu/run.sh | tee "$out/gpu.txt"
