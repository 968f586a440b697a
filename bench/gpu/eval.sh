#!/usr/bin/env bash
# The evaluation's GPU timing (issue 48's target: a 7B model over MMLU's
# 14,042 5-shot items in 5 minutes or less on one H100): bench_eval_cuda
# with a Llama-2-7B-shaped random bf16 model (dim 4096, 32 layers, 32
# heads, ffn 11008, vocab 32000, inputs of up to 4096 tokens) over the
# items bench/gpu/mmlu_synth.py writes (MMLU's shape, random words),
# encoded by the llama tokenizer, in interleaved chunks timed until BUDGET
# seconds are spent, the whole task's time extrapolated from their share
# of its input tokens (the RESULT line says whether it was). From the
# bundle (tests/gpu/bundle.sh carries the program and the tokenizer's
# files) or built here; a machine without a GPU says so and exits 0.
# Writes its lines to BENCH_OUT/eval.txt (default bench/out/gpu) and, where
# $OUT is set (a GPU machine's call), to $OUT/eval.txt.
# usage: [BUDGET=170] [BATCH_TOKENS=65536] [PEAK_TFLOPS=989] bench/gpu/eval.sh
# A dry run on the CUDA emulator (tests/cuda_emu.sh): COD_BIN_DRY, COD_DATA,
# EVAL_ITEMS (the first N items only) and EVAL_SHAPE ("DIM LAYERS HEADS FFN
# VOCAB SEQ") as tests/gpu/README.md says.
set -u
cd "$(dirname "$0")/../.."
out=${BENCH_OUT:-bench/out/gpu}
. tests/gpu/bundle_env.sh
gpu_found || { gpu_skip "the evaluation's GPU timing"; exit 0; }
mkdir -p "$out"
gpu_env_setup "$out" || exit 1
work=$out/eval-task
mkdir -p "$work"
python3 bench/gpu/mmlu_synth.py "$work" || exit 1
task=$work/mmlu_test.jsonl
if [ -n "${EVAL_ITEMS:-}" ]; then
    head -n "$EVAL_ITEMS" "$work/mmlu_test.jsonl" > "$work/mmlu_first.jsonl"
    task=$work/mmlu_first.jsonl
fi
tokenizers=$COD_DATA/tokenizers
[ -f "$tokenizers/llama-vocab.txt" ] || tokenizers=var/cache/tokenizers
{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null |
        sed 's/^/GPU: /'
    # shellcheck disable=SC2086 # EVAL_SHAPE is six numbers
    "$COD_BIN/bench_eval_cuda" "$task" "$work/mmlu_dev.jsonl" "$tokenizers" "${BUDGET:-170}" \
        "${BATCH_TOKENS:-65536}" ${EVAL_SHAPE:-} ${EVAL_SHAPE:+${PEAK_TFLOPS:-989}}
    echo "exit $?"
} 2>&1 | tee "$out/eval.txt"
[ -n "${OUT:-}" ] && cp "$out/eval.txt" "$OUT/eval.txt"
grep -q '^exit 0$' "$out/eval.txt"
