#!/usr/bin/env bash
# GPU training throughput: cod's CUDA backend against the same model in
# PyTorch (bench/gpu/torch_ref.py: bf16 autocast, SDPA, multi-tensor AdamW;
# eager and torch.compile) on the same GPU in the same run, for llama-71m,
# -130m, -350m and -1b at seq 256, vocab 32000, one micro-batch per preset
# for every implementation. First the GPU's own ceilings at those shapes
# (bench/gpu/ceilings.py) and the attention's (bench/gpu/attention.sh:
# PyTorch's SDPA backends and cod's attention, forward and backward, at
# llama-130m's and llama-1b's micro-batches). Prints tokens/s, MFU and
# peak device memory per implementation, the SDPA backend each PyTorch
# mode ran, and cod's tokens/s over each PyTorch mode; then writes the
# measurement's results file (bench/gpu/results.py: RESULTS_DIR, default
# BENCH_OUT/results, "" for none; commit it into bench/gpu/results/, from
# which bench/gpu/results_table.py makes bench/RESULTS.md's table). Without
# torch, PyTorch's side says SKIP and the rest runs. MFU is against
# the dense bf16 peak: 989 TFLOP/s (H100 SXM, H200) unless PEAK_TFLOPS says
# otherwise (H100 PCIe: 756, A100: 312). Targets (issue 12): MFU ≥ 45% at
# llama-130m, ≥ 55% at llama-1b, ≥ 1.2× torch.compile, peak memory ≤
# PyTorch's. `make bench-gpu` runs it; from the bundle on a GPU node
# without a compiler (tests/gpu/README.md), else it builds here; needs
# python3 with torch. On a machine without a GPU it says so and exits 0.
# ACCUM micro-batches make one optimizer update on both sides: `paper`
# (the default) is the paper's batch of 512 sequences, 512 / micro-batch;
# 1 updates after every micro-batch, the optimizer's worst case. STEPS
# counts timed updates: 10 at ACCUM=1, else 3 (24-48 micro-batches).
# usage: [IMPLS="cod torch-eager torch-compile"] [ACCUM=paper|K] [STEPS=N] [CEILINGS=0]
#        [ATTENTION_SHAPES="llama-130m llama-1b"] [RESULTS_DIR=DIR] bench/gpu/run.sh [preset...]
set -u
cd "$(dirname "$0")/../.."
peak=${PEAK_TFLOPS:-989}
accum_arg=${ACCUM:-paper}
case $accum_arg in
paper | [1-9] | [1-9][0-9] | [1-9][0-9][0-9]) ;;
*) echo "bench/gpu/run.sh: ACCUM must be paper or a positive integer, not '$accum_arg'" >&2; exit 2 ;;
esac
presets=("$@")
[ ${#presets[@]} -eq 0 ] && presets=(llama-71m llama-130m llama-350m llama-1b)
out=${BENCH_OUT:-bench/out/gpu}
. tests/gpu/bundle_env.sh
# One micro-batch per preset for every implementation, so that tokens/s and
# peak memory compare the same work (MICRO_BATCH overrides it).
. bench/gpu/presets.sh
gpu_found || { gpu_skip "the GPU benchmark"; exit 0; }
mkdir -p "$out"
gpu_env_setup "$out" || exit 1
status=0
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null |
    sed 's/^/GPU: /'
echo "dense bf16 peak for MFU: $peak TFLOP/s; seq 256, vocab 32000; micro-batches per update: $accum_arg"
# the GPU's own ceilings at these shapes, measured before the models
if [ "${CEILINGS:-1}" = 1 ]; then
    ceil_args=()
    for p in "${presets[@]}"; do ceil_args+=("$p:${micro[$p]:-64}"); done
    python3 bench/gpu/ceilings.py "${ceil_args[@]}" 2>&1 | tee "$out/ceilings.log" | grep -E '^(CEILING|SKIP)'
fi
attention_shapes=${ATTENTION_SHAPES-llama-130m llama-1b}
# shellcheck disable=SC2086 # presets or shapes, as words
[ -z "$attention_shapes" ] || BENCH_OUT=$out bench/gpu/attention.sh $attention_shapes || status=1
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<< "$2"; }
printf '%-11s %-14s %6s %6s %12s %8s %9s\n' model impl batch accum tokens/s MFU peak_GiB
for p in "${presets[@]}"; do
    declare -A tps=()
    B=${MICRO_BATCH:-${micro[$p]:-64}}
    accum=$accum_arg
    [ "$accum" = paper ] && accum=$(( (512 + B - 1) / B ))
    steps=${STEPS:-$([ "$accum" = 1 ] && echo 10 || echo 3)}
    for impl in ${IMPLS:-cod torch-eager torch-compile}; do
        log="$out/$p-$impl-accum$accum.log"
        case $impl in
        cod) "$COD_BIN/bench_train_cuda" "$p" "$peak" "$B" "$steps" "$accum" > "$log" 2>&1 ;;
        torch-*) python3 bench/gpu/torch_ref.py "$p" "$peak" --mode "${impl#torch-}" \
                     --micro-batch "$B" --steps "$steps" --accum "$accum" > "$log" 2>&1 ;;
        esac
        r=$(grep '^RESULT' "$log" | tail -1)
        if [ -z "$r" ]; then
            # no torch, or no GPU for it: a skip, not a failure
            if grep -q '^SKIP' "$log"; then
                printf '%-11s %-14s %s\n' "$p" "$impl" "$(grep -m1 '^SKIP' "$log")"
                continue
            fi
            printf '%-11s %-14s failed: %s\n' "$p" "$impl" "$(tail -1 "$log")"
            status=1
            continue
        fi
        tps[$impl]=$(field tokens_per_s "$r")
        printf '%-11s %-14s %6s %6s %12s %7.1f%% %9s\n' "$p" "$impl" "$(field micro_batch "$r")" "$accum" \
            "${tps[$impl]}" "$(awk -v m="$(field mfu "$r")" 'BEGIN { print 100 * m }')" \
            "$(field peak_gib "$r")"
        r=$(grep -m1 '^SDPA impl=' "$log")
        [ -z "$r" ] || printf '%-11s %-14s SDPA backend %s (%s)\n' "$p" "$impl" "$(field backend "$r")" "$(field ops "$r")"
    done
    for ref in torch-eager torch-compile; do
        [ -n "${tps[cod]:-}" ] && [ -n "${tps[$ref]:-}" ] &&
            awk -v p="$p" -v r="$ref" -v a="${tps[cod]}" -v b="${tps[$ref]}" \
                'BEGIN { printf "%-11s cod / %-13s %.2fx\n", p, r, a / b }'
    done
    unset tps
done
results=${RESULTS_DIR-$out/results}
[ -z "$results" ] || python3 bench/gpu/results.py write "$out" "$results" "${presets[@]}" --peak "$peak" \
    --command "bench/gpu/run.sh ${presets[*]}" || status=1
exit $status
