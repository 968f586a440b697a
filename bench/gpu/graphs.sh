#!/usr/bin/env bash
# What replaying a micro-batch as one CUDA graph buys (model_step,
# kernels/cuda/graph.cu): bench_train_cuda's tokens/s with the recording
# and op by op (COD_CUDA_GRAPHS=0), alternated, twice each, in the same
# run, at small models and micro-batches, where launching a kernel costs the
# host about as long as the kernel runs, and at llama-130m, where it should
# change nothing; and at the depth study's shapes (studies/depth: width 64,
# 6 and 48 layers, 16 × 128 tokens, bytes), whose step time says how long
# the study takes. Runs from the bundle on a bare GPU machine
# (tests/gpu/README.md) or builds here.
# usage: [STEPS=30] bench/gpu/graphs.sh [preset:micro_batch ...]
#        (depth6 and depth48 name the study's shapes)
set -u
cd "$(dirname "$0")/../.."
steps=${STEPS:-30}
cases=("$@")
[ ${#cases[@]} -eq 0 ] &&
    cases=(llama-9m:2 llama-9m:16 llama-20m:8 llama-71m:8 llama-130m:64 depth6:16 depth48:16)
# a preset's name, or the job spec of a depth study shape
model_of() {
    case $1 in
    depth*) printf '{"name": "%s", "model": {"dim": 64, "n_layers": %s, "n_heads": 2, "ffn_dim": 176, "vocab": 257}, "norm": "pre", "train": {"seq_len": 128}}' \
        "$1" "${1#depth}" ;;
    *) printf '%s' "$1" ;;
    esac
}
out=${BENCH_OUT:-bench/out/gpu}
mkdir -p "$out"
. tests/gpu/bundle_env.sh
gpu_env_setup "$out" || exit 1
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<< "$2"; }
declare -A run_s=()
status=0
printf 'GRAPHS %-11s %5s %12s %12s %7s\n' model batch op_by_op graph ratio
for c in "${cases[@]}"; do
    p=${c%%:*} B=${c#*:}
    declare -A best=([0]=0 [1]=0) # tokens/s, op by op (0) and from the graph (1)
    for round in 1 2; do
        for graph in 0 1; do
            log="$out/graphs-$p-$B-$graph-$round.log"
            COD_CUDA_GRAPHS=$graph "$COD_BIN/bench_train_cuda" "$(model_of "$p")" 989 "$B" "$steps" > "$log" 2>&1
            r=$(grep '^RESULT' "$log" | tail -1)
            if [ -z "$r" ] || [ "$(field graph "$r")" != "$graph" ]; then
                echo "GRAPHS $p:$B COD_CUDA_GRAPHS=$graph failed or did not run as asked: $(tail -1 "$log")"
                status=1
                continue
            fi
            t=$(field tokens_per_s "$r")
            [ "$t" -gt "${best[$graph]}" ] && best[$graph]=$t
        done
    done
    best_ops=${best[0]} best_graph=${best[1]}
    [ "$best_ops" -gt 0 ] && [ "$best_graph" -gt 0 ] &&
        awk -v p="$p" -v b="$B" -v o="$best_ops" -v g="$best_graph" \
            'BEGIN { printf "GRAPHS %-11s %5s %12d %12d %6.2fx\n", p, b, o, g, g / o }'
    if [ "${p#depth}" != "$p" ] && [ "$best_graph" -gt 0 ]; then
        run_s[${p#depth}]=$(awk -v b="$B" -v g="$best_graph" 'BEGIN { print 3200 * b * 128 / g }')
        awk -v p="$p" -v b="$B" -v g="$best_graph" -v s="${run_s[${p#depth}]}" \
            'BEGIN { printf "GRAPHS %s: %.2f ms a step, %.0f s for 3,200 updates\n", p, 1000 * b * 128 / g, s }'
    fi
done
# The study's 48 runs, 12 at each depth, from a step time linear in depth
# between the two measured: the GPU time its training needs, run after run.
if [ -n "${run_s[6]:-}" ] && [ -n "${run_s[48]:-}" ]; then
    awk -v a="${run_s[6]}" -v b="${run_s[48]}" 'BEGIN {
        split("6 12 24 48", L, " ")
        for (i = 1; i <= 4; i++) t += 12 * (a + (b - a) * (L[i] - 6) / 42)
        printf "GRAPHS the depth study: about %.1f min of GPU for its 48 runs of 3,200 updates\n", t / 60 }'
fi
exit $status
