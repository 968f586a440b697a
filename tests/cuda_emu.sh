#!/usr/bin/env bash
# tests/run.sh: start first
# The GPU checks of the CUDA backend on the CUDA emulator (kernels/cuda/emu/):
# the backend's own kernels, run on the CPU, against the CPU backend, by the
# very programs tests/gpu/run.sh runs on a GPU: test_emu (the emulator's own
# reading of the PTX ISA and the runtime, and faults that must be faults),
# test_ops_cuda whole (every op, forward and backward, both attention
# paths), test_matmul_cuda (cuBLASLt's candidates, the timed choice and its
# cache, the second stream), then cod's own kernels again under the
# emulator's race check,
# test_model_cuda at the small presets (loss and every gradient; every
# variant; the CUDA-core attention; a repeated step; the recorded
# micro-batch replayed as a graph), and cod-train on cuda:0 (fault: an
# injected device fault stops a run as an error naming the op; moves: a run
# goes from the CPU to the GPU and back) and the GPU benchmark's program;
# which attention runs (cuDNN is absent under the emulator: cod's kernels,
# the run's log saying why; COD_ATTENTION=cudnn an error saying why), and
# cuDNN's attention graphs against the real cuDNN, as far as compiling
# their kernels for an H100 and an A100 without a GPU (test_cudnn_graphs,
# with the toolkit's stub driver); the evaluation on cuda:0 (cod-analyze
# eval and prune --task) against the CPU's, and bench/gpu/eval.sh dry.
# Built by make build-tests wherever the
# CUDA toolkit is (CI's machine); without one there is no CUDA backend to
# check. EMU_PRESETS names the presets of test_model_cuda's presets check
# (each larger one takes minutes).
set -u
cd "$(dirname "$0")/.." && . tests/lib.sh
bin=build/emu/bin
if [ ! -x "$bin/test_ops_cuda" ] && ! cuda_toolkit; then
    echo "PASS cuda_emu: no CUDA toolkit on this machine, so no CUDA backend was built to check"
    exit 0
fi
log_dir=build/test-logs/cuda_emu
rm -rf "$log_dir"
mkdir -p "$log_dir"
# the matmuls' timed choices in this run's own file, not the user's cache
export COD_CUBLASLT_CACHE=$PWD/$log_dir/cublaslt.txt
# each program's output to its log and its exit status beside it; the two
# halves run at once (each emulator is one host thread), then report in order
execute() { # name, command...
    local name=$1; shift
    "$@" > "$log_dir/$name.log" 2>&1
    echo $? > "$log_dir/$name.rc"
}
status=0
report() { # name
    local name=$1 rc
    rc=$(cat "$log_dir/$name.rc" 2>/dev/null || echo "?")
    grep -E '^(PASS|FAIL|SKIP) ' "$log_dir/$name.log" |
        sed "/^\(PASS\|FAIL\|SKIP\) $name[: (]/b; s/^\(PASS\|FAIL\|SKIP\) /\1 $name: /"
    if [ "$rc" != 0 ]; then
        grep -qE '^FAIL ' "$log_dir/$name.log" || echo "FAIL $name (exit $rc)"
        grep -vE '^(PASS|FAIL) ' "$log_dir/$name.log" | tail -n 40 | sed 's/^/    /'
        status=1
    fi
}
{
    execute test_emu "$bin/test_emu"
    # the matmuls on the heuristic's first algorithm, the emulator's
    # default (emu.h): test_matmul_cuda checks every candidate and the
    # timing, test_model_cuda and the benchmark's program run timed
    execute test_ops_cuda "$bin/test_ops_cuda"
    execute test_matmul_cuda "$bin/test_matmul_cuda"
    # cod's own kernels (not cuBLASLt's matmuls), each launch run twice in
    # different orders (kernels/cuda/emu/emu.h); attention at small shapes
    execute racecheck env COD_EMU_RACECHECK=1 "$bin/test_ops_cuda" embedding rmsnorm \
        attention_small swiglu elementwise cross_entropy adam reductions
} &
execute test_model_cuda env COD_CUBLASLT_TUNE=1 "$bin/test_model_cuda" ${EMU_PRESETS:-llama-9m llama-20m}
# cod-train on cuda:0 end to end, by the GPU checks' own scripts
need_corpus
[ -f var/data/gpu-bytes/meta.json ] ||
    tests/gpu/slice_shards.py var/data/default-bytes var/data/gpu-bytes 4000000 > /dev/null ||
    { echo "FAIL cuda_emu: slicing the corpus for the GPU checks"; exit 1; }
export COD_BIN=$PWD/$bin COD_DATA=$PWD/var/data GPU_LOGS=$log_dir
execute fault bash tests/gpu/fault.sh
execute moves bash tests/gpu/moves.sh
# cuDNN's graphs need a driver only to load the kernels they compile: the
# toolkit's stub, under the name cuDNN opens
stub=${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so
if [ -f "$stub" ] && [ -x build/gpu/test_cudnn_graphs ]; then
    mkdir -p "$log_dir/driver-stub" && ln -sf "$stub" "$log_dir/driver-stub/libcuda.so.1"
    execute cudnn_graphs env LD_LIBRARY_PATH="$PWD/$log_dir/driver-stub" build/gpu/test_cudnn_graphs
else
    echo "SKIP cudnn_graphs: no $stub or no build/gpu/test_cudnn_graphs" > "$log_dir/cudnn_graphs.log"
    echo 0 > "$log_dir/cudnn_graphs.rc"
fi
# which attention cod-train runs, and what it says: one step of a tiny model
mkdir -p "$log_dir/attention"
cat > "$log_dir/attention/spec.json" <<SPEC
{"model": {"dim": 64, "n_layers": 1, "n_heads": 2, "ffn_dim": 96},
 "data": {"train": "$COD_DATA/gpu-bytes/train_*.bin", "val": "$COD_DATA/gpu-bytes/val_*.bin"},
 "train": {"steps": 1, "seq_len": 64, "batch_seqs": 2, "micro_batch": 2},
 "eval": {"every": 0, "tokens": 128}, "stats": {"every": 0}, "checkpoint": {"every": 0}}
SPEC
attention_run() { # name, environment settings...
    local name=$1; shift
    env -u COD_ATTENTION -u COD_CUDA_ATTENTION "$@" "$bin/cod-train" "$log_dir/attention/spec.json" \
        --out "$log_dir/attention/$name" --device cuda:0 > "$log_dir/attention/$name.log" 2>&1
    echo $? > "$log_dir/attention/$name.rc"
}
attention_run default
attention_run own COD_ATTENTION=own
attention_run cores COD_CUDA_ATTENTION=cores
attention_run cudnn COD_ATTENTION=cudnn
attention_run bad COD_ATTENTION=flash
attention_run both COD_ATTENTION=cudnn COD_CUDA_ATTENTION=cores
# the GPU benchmark's program at a small shape: two updates of two
# micro-batches each, as bench/gpu/run.sh times them at the paper's batch
spec='{"model": {"dim": 64, "n_layers": 2, "n_heads": 2, "ffn_dim": 176, "vocab": 257},
       "norm": "lns", "train": {"seq_len": 64}}'
COD_CUBLASLT_TUNE=1 "$bin/bench_train_cuda" "$spec" 989 4 2 2 > "$log_dir/bench_train_cuda.log" 2>&1
"$bin/bench_train_cuda" "${spec/, \"vocab\": 257/}" 989 4 2 2 > "$log_dir/bench_no_vocab.log" 2>&1
no_vocab=$?
# the evaluation on cuda:0 through the ops table (cod-analyze eval and
# prune --task) on the checkpoint above, the CPU's numbers beside it; and
# the evaluation's GPU timing (bench/gpu/eval.sh) dry, at a tiny shape
ev=$log_dir/eval
mkdir -p "$ev"
eval_ck=$log_dir/attention/default/checkpoints/step_00000001
eval_tasks=(--task tests/eval/piqa.jsonl --task tests/eval/generic.jsonl)
"$bin/cod-analyze" eval "$eval_ck" --device cuda:0 "${eval_tasks[@]}" --out "$ev/gpu" > "$ev/gpu.log" 2>&1
eval_gpu=$?
bin/cod-analyze eval "$eval_ck" "${eval_tasks[@]}" --out "$ev/cpu" > "$ev/cpu.log" 2>&1
"$bin/cod-analyze" prune "$eval_ck" --device cuda:0 --tokens 128 --task tests/eval/generic.jsonl \
    --out "$ev/prune" > "$ev/prune.log" 2>&1
eval_prune=$?
COD_BIN_DRY=$bin BENCH_OUT=$ev/timing EVAL_ITEMS=24 EVAL_SHAPE="64 2 2 128 32000 1024" BUDGET=6 \
    BATCH_TOKENS=8192 bash bench/gpu/eval.sh > "$ev/timing.log" 2>&1
wait
for name in test_emu test_ops_cuda test_matmul_cuda racecheck test_model_cuda fault moves cudnn_graphs; do
    report $name
done
# the run's log says once which attention ran, and why; a setting that
# cannot hold stops cod-train before any work (exit 2), saying why
says() { # run, exit status, what its output must hold
    local a=$log_dir/attention rc
    rc=$(cat "$a/$1.rc")
    grep -F -- "$3" "$a/$1.log" | head -1 | sed 's/^/  /'
    [ "$rc" = "$2" ] && [ "$(grep -cF -- "$3" "$a/$1.log")" = 1 ] ||
        { echo "  exit $rc:"; tail -3 "$a/$1.log" | sed 's/^/  /'; return 1; }
}
check "attention: cuDNN absent, cod's tensor-core kernels run, the log saying why" \
    says default 0 "] attention: cod's tensor-core kernels (cuDNN not used: cannot load libcudnn-none-in-the-emulator.so.9"
check "attention: COD_ATTENTION=own runs cod's tensor-core kernels and says so" \
    says own 0 "] attention: cod's tensor-core kernels (COD_ATTENTION=own)"
check "attention: COD_CUDA_ATTENTION=cores runs the CUDA-core kernels and says so" \
    says cores 0 "] attention: cod's CUDA-core kernels (COD_CUDA_ATTENTION=cores)"
check "attention: COD_ATTENTION=cudnn without cuDNN stops cod-train (exit 2), saying why" \
    says cudnn 2 "cod-train: device cuda:0: COD_ATTENTION=cudnn, but cuDNN cannot be used: cannot load libcudnn"
check "attention: COD_ATTENTION=flash is refused, naming the variable and the value (exit 2)" \
    says bad 2 'COD_ATTENTION must be "own" or "cudnn" (or unset), not "flash"'
check "attention: COD_ATTENTION=cudnn with COD_CUDA_ATTENTION=cores is refused (exit 2)" \
    says both 2 "COD_ATTENTION=cudnn and COD_CUDA_ATTENTION=cores ask for two attentions"
check "bench_train_cuda: two updates of two micro-batches, a RESULT line with its memory" \
    grep -qE '^RESULT impl=cod .*micro_batch=4 accum=2 .*peak_gib=.* logit_rows=256 keep_swiglu=[01] wgrad_beside=1$' \
    "$log_dir/bench_train_cuda.log"
check "bench_train_cuda: the memory plan said, the matmuls' choices logged (timed, or from the cache)" \
    bash -c "grep -q '^memory: logits 256 rows at a time, .* weight gradients beside' '$log_dir/bench_train_cuda.log' &&
             grep -qE '^cuBLASLt: matmul_fwd m=.*: candidate [0-9]+ (of [0-9]+ timed|\\(.*\\), from .*/cublaslt.txt$)' \
                 '$log_dir/bench_train_cuda.log'"
check "cod-train: the memory plan in the run's log" grep -q '] memory: logits ' "$log_dir/attention/default.log"
COD_LOGIT_ROWS=none "$bin/cod-train" "$log_dir/attention/spec.json" --out "$log_dir/attention/bad-rows" \
    --device cuda:0 > "$log_dir/attention/bad-rows.log" 2>&1
bad_rows=$?
check "cod-train: COD_LOGIT_ROWS=none refused, naming the setting and the value" \
    bash -c "[ $bad_rows -ne 0 ] && grep -q 'COD_LOGIT_ROWS must be a whole number .* not \"none\"' '$log_dir/attention/bad-rows.log'"
check "bench_train_cuda: a spec without model.vocab is refused, naming it (exit 2)" \
    bash -c "[ $no_vocab -eq 2 ] && grep -q 'model.vocab' '$log_dir/bench_no_vocab.log'"
check "cod-analyze eval on cuda:0: every choice's log-likelihood within bf16's error of the CPU's" \
    python3 - "$eval_gpu" "$ev" <<'PY'
import json, sys
assert sys.argv[1] == "0", "exit " + sys.argv[1]
for task in ("piqa", "generic"):
    g = [json.loads(l) for l in open(f"{sys.argv[2]}/gpu/samples_{task}.jsonl")]
    c = [json.loads(l) for l in open(f"{sys.argv[2]}/cpu/samples_{task}.jsonl")]
    assert len(g) == len(c) > 0
    for a, b in zip(g, c):
        assert a["context"] == b["context"] and a["tokens"] == b["tokens"]
        for x, y in zip(a["loglik"], b["loglik"]):
            assert abs(x - y) <= 0.02 * abs(y) + 0.05, (task, a["line"], x, y)
PY
check "cod-analyze prune --task on cuda:0: each block removed, reusing the prefix" \
    bash -c "[ $eval_prune -eq 0 ] && grep -q '\"layer\": 1' '$ev/prune/prune_tasks.json'"
check "bench/gpu/eval.sh dry: the synthetic MMLU task read, chunks timed, a RESULT line" \
    grep -qE '^RESULT items=[0-9]+ tokens=[0-9]+ whole_items=24 .*whole_seconds=' "$ev/timing.log"
exit $status
