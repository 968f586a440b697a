#!/usr/bin/env bash
# tests/run.sh: start first
# The GPU checks of the CUDA backend on the CUDA emulator (kernels/cuda/emu/):
# the backend's own kernels, run on the CPU, against the CPU backend, by the
# very programs tests/gpu/run.sh runs on a GPU: test_emu (the emulator's own
# reading of the PTX ISA and the runtime, and faults that must be faults),
# test_ops_cuda whole (every op, forward and backward, both attention
# paths), then cod's own kernels again under the emulator's race check,
# test_model_cuda at the small presets (loss and every gradient; every
# variant; the CUDA-core attention; a repeated step; the recorded
# micro-batch replayed as a graph), and cod-train on cuda:0 (fault: an
# injected device fault stops a run as an error naming the op; moves: a run
# goes from the CPU to the GPU and back) and the GPU benchmark's program.
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
    grep -E '^(PASS|FAIL) ' "$log_dir/$name.log" |
        sed "/^\(PASS\|FAIL\) $name[: (]/b; s/^\(PASS\|FAIL\) /\1 $name: /"
    if [ "$rc" != 0 ]; then
        grep -qE '^FAIL ' "$log_dir/$name.log" || echo "FAIL $name (exit $rc)"
        grep -vE '^(PASS|FAIL) ' "$log_dir/$name.log" | tail -n 40 | sed 's/^/    /'
        status=1
    fi
}
{
    execute test_emu "$bin/test_emu"
    execute test_ops_cuda "$bin/test_ops_cuda"
    # cod's own kernels (not cuBLASLt's matmuls), each launch run twice in
    # different orders (kernels/cuda/emu/emu.h); attention at small shapes
    execute racecheck env COD_EMU_RACECHECK=1 "$bin/test_ops_cuda" embedding rmsnorm \
        attention_small swiglu elementwise cross_entropy adam reductions
} &
execute test_model_cuda "$bin/test_model_cuda" ${EMU_PRESETS:-llama-9m llama-20m}
# cod-train on cuda:0 end to end, by the GPU checks' own scripts
need_corpus
[ -f var/data/gpu-bytes/meta.json ] ||
    tests/gpu/slice_shards.py var/data/default-bytes var/data/gpu-bytes 4000000 > /dev/null ||
    { echo "FAIL cuda_emu: slicing the corpus for the GPU checks"; exit 1; }
export COD_BIN=$PWD/$bin COD_DATA=$PWD/var/data GPU_LOGS=$log_dir
execute fault bash tests/gpu/fault.sh
execute moves bash tests/gpu/moves.sh
# the GPU benchmark's program at a small shape: two updates of two
# micro-batches each, as bench/gpu/run.sh times them at the paper's batch
spec='{"model": {"dim": 64, "n_layers": 2, "n_heads": 2, "ffn_dim": 176, "vocab": 257},
       "norm": "lns", "train": {"seq_len": 64}}'
"$bin/bench_train_cuda" "$spec" 989 4 2 2 > "$log_dir/bench_train_cuda.log" 2>&1
"$bin/bench_train_cuda" "${spec/, \"vocab\": 257/}" 989 4 2 2 > "$log_dir/bench_no_vocab.log" 2>&1
no_vocab=$?
wait
for name in test_emu test_ops_cuda racecheck test_model_cuda fault moves; do report $name; done
check "bench_train_cuda: two updates of two micro-batches, a RESULT line with its memory" \
    grep -qE '^RESULT impl=cod .*micro_batch=4 accum=2 .*peak_gib=' "$log_dir/bench_train_cuda.log"
check "bench_train_cuda: a spec without model.vocab is refused, naming it (exit 2)" \
    bash -c "[ $no_vocab -eq 2 ] && grep -q 'model.vocab' '$log_dir/bench_no_vocab.log'"
exit $status
