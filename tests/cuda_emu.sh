#!/usr/bin/env bash
# The GPU checks of the CUDA backend on the CUDA emulator (kernels/cuda/emu/):
# the backend's own kernels, run on the CPU, against the CPU backend, by the
# very programs tests/gpu/run.sh runs on a GPU: test_emu (the emulator's own
# reading of the PTX ISA and the runtime, and faults that must be faults),
# test_ops_cuda whole (every op, forward and backward, both attention
# paths), test_model_cuda at the small presets (loss and every gradient;
# every variant; the CUDA-core attention; a repeated step; the recorded
# micro-batch replayed as a graph), and cod-train on cuda:0 (fault: an
# injected device fault stops a run as an error naming the op; moves: a run
# goes from the CPU to the GPU and back). Built by make build-tests wherever the
# CUDA toolkit is (CI's machine); without one there is no CUDA backend to
# check. EMU_PRESETS names the presets of test_model_cuda's first check
# (each larger one takes minutes).
set -u
cd "$(dirname "$0")/.."
bin=build/emu/bin
if [ ! -x "$bin/test_ops_cuda" ] && ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "PASS cuda_emu: no CUDA toolkit on this machine, so no CUDA backend was built to check"
    exit 0
fi
log_dir=build/test-logs/cuda_emu
mkdir -p "$log_dir"
status=0
run() { # name, command...
    local name=$1; shift
    "$@" > "$log_dir/$name.log" 2>&1
    local rc=$?
    grep -E '^(PASS|FAIL) ' "$log_dir/$name.log" | sed "s/^\(PASS\|FAIL\) /\1 $name: /"
    if [ "$rc" -ne 0 ]; then
        grep -qE '^FAIL ' "$log_dir/$name.log" || echo "FAIL $name (exit $rc)"
        grep -vE '^(PASS|FAIL) ' "$log_dir/$name.log" | tail -n 40 | sed 's/^/    /'
        status=1
    fi
}
run test_emu "$bin/test_emu"
run test_ops_cuda "$bin/test_ops_cuda"
run test_model_cuda "$bin/test_model_cuda" ${EMU_PRESETS:-llama-9m llama-20m}
# cod-train on cuda:0 end to end, by the GPU visit's own scripts
. tests/lib.sh
need_corpus
[ -f var/data/gpu-bytes/meta.json ] ||
    tests/gpu/slice_shards.py var/data/default-bytes var/data/gpu-bytes 4000000 > /dev/null ||
    { echo "FAIL cuda_emu: slicing the corpus for the GPU checks"; exit 1; }
export COD_BIN=$PWD/$bin COD_DATA=$PWD/var/data GPU_LOGS=$log_dir
run fault bash tests/gpu/fault.sh
run moves bash tests/gpu/moves.sh
exit $status
