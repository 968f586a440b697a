#!/usr/bin/env bash
# The attention's ceiling at cod's shapes, measured before cod's own figures
# (bench/gpu/run.sh, tests/gpu/plan.sh speed): PyTorch's SDPA with each of
# its fused backends forced (cuDNN, flash, memory-efficient) and with its
# own choice (bench/gpu/attention.py), then cod's attention at the same
# shapes (bench_attention_cuda): its own kernels, and cuDNN's where the
# build has them (COD_ATTENTION=cudnn; "unavailable" with why where it has
# not, or cuDNN cannot run here). Forward and backward, causal, bf16, each
# with its time and TFLOP/s (forward 2·B·H·T²·D FLOPs, backward 2.5 times
# that); then how they compare (COMPARE lines, bench/gpu/results.py), cuDNN
# falling short at seq 256 said so. A shape is a preset (its micro-batch
# at the paper's batch, bench/gpu/presets.sh, seq 256, head size 64) or
# NAME:B:H:T:D. REPS timed calls each (20). Logs in BENCH_OUT
# (bench/out/gpu): attention-torch.log, attention-cod-own.log,
# attention-cod-cudnn.log. Without torch, PyTorch's side says SKIP; without
# a GPU, the whole of it (exit 0).
# usage: [REPS=20] bench/gpu/attention.sh [shape...]   (llama-130m llama-1b)
set -u
cd "$(dirname "$0")/../.."
out=${BENCH_OUT:-bench/out/gpu}
reps=${REPS:-20}
. tests/gpu/bundle_env.sh
. bench/gpu/presets.sh
gpu_found || { gpu_skip "the attention ceilings"; exit 0; }
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(llama-130m llama-1b)
shapes=()
for s in "${args[@]}"; do
    case $s in
    *:*) shapes+=("$s") ;;
    *) [ -n "${heads[$s]:-}" ] || { echo "bench/gpu/attention.sh: no preset '$s' (${!heads[*]}, or NAME:B:H:T:D)" >&2; exit 2; }
       shapes+=("$s:${micro[$s]}:${heads[$s]}:256:64") ;;
    esac
done
mkdir -p "$out"
gpu_env_setup "$out" || exit 1
status=0
echo "attention: B x heads x seq x head size, causal, bf16; forward 2·B·H·T²·D FLOPs, backward 2.5 times that"
if python3 bench/gpu/attention.py --reps "$reps" "${shapes[@]}" > "$out/attention-torch.log" 2>&1; then
    grep -E '^(SKIP|TORCH|ATTENTION|SDPA impl)' "$out/attention-torch.log"
else
    echo "ATTENTION impl=torch failed: $(tail -n 1 "$out/attention-torch.log")"
    status=1
fi
# A build whose backend chooses among attentions reads COD_ATTENTION (its
# name is in the program); one that does not would run its own kernels
# under any setting, so it is not asked for cuDNN's.
chooses=0
grep -qa COD_ATTENTION "$COD_BIN/bench_attention_cuda" && chooses=1
cod_attention() { # label, COD_ATTENTION's value
    local log=$out/attention-$1.log
    if [ "$chooses" = 0 ] && [ "$2" = cudnn ]; then
        echo "ATTENTION impl=$1 unavailable: this build of cod has no cuDNN attention (its programs do not read COD_ATTENTION)" |
            tee "$log"
        return
    fi
    local env=()
    [ "$chooses" = 1 ] && env=("COD_ATTENTION=$2")
    env "${env[@]}" "$COD_BIN/bench_attention_cuda" "$1" "$reps" "${shapes[@]}" > "$log" 2>&1
    local rc=$?
    grep '^ATTENTION' "$log"
    if [ "$rc" -ne 0 ]; then
        echo "ATTENTION impl=$1 unavailable: $(tail -n 1 "$log")" | tee -a "$log"
        [ "$2" = own ] && status=1
    fi
}
cod_attention cod-own own
cod_attention cod-cudnn cudnn
python3 bench/gpu/results.py compare "$out"/attention-torch.log "$out"/attention-cod-*.log ||
    status=1
exit $status
