#!/usr/bin/env bash
# The GPU checks of the CUDA backend, in one command, on a machine with an
# NVIDIA GPU (sm_80 or newer): from the bundle when .gpu/bundle.tar.xz is
# there (tests/gpu/bundle.sh, made on another machine), else built here:
#   test_emu         what the CUDA emulator (make test's tests/cuda_emu.sh)
#                    assumes of mma.sync, ldmatrix, shuffles, cp.async,
#                    graphs and capture, asked of the hardware
#   test_ops_cuda    every op against the CPU backend, outputs poisoned first
#   test_matmul_cuda every cuBLASLt candidate right and repeatable, the
#                    timed choice and its cache file, the second stream
#   test_model_cuda  loss and every gradient of every preset and norm variant
#   loss_curve       300 updates of a small model on the default corpus,
#                    CUDA against the CPU run of the same spec and seed
#   export           the Hugging Face export of the CUDA-trained checkpoint,
#                    read by transformers, gives cod's logits
#   hf               cod-analyze on Hugging Face folders that transformers
#                    made (Llama, Mistral, Qwen2) gives transformers' logits
#   sanitize         compute-sanitizer memcheck, racecheck and synccheck
#   fault            a device fault stops a run as an error naming the op
#   moves            a run checkpointed on the CPU resumes on the GPU, and
#                    one checkpointed on the GPU on the CPU
#   gang             a gang of one through cod-server, cod-worker and NCCL
#                    equals the plain run; a gang of two where 2+ GPUs
# Each prints PASS/FAIL lines (and SKIP lines for what this machine cannot
# run, cuDNN's checks without a cuDNN: shown, never counted as passed);
# exits 0 only if every check passed. A check
# that runs past CHECK_TIMEOUT seconds (default 240; all of them together
# took 3.5 minutes on an H100), or past CHECKS_UNTIL (a time in seconds
# since 1970, the end of a time-boxed call: tests/gpu/plan.sh), is stopped
# and fails, so that a hung kernel costs one check, not the rest. `make
# test-gpu` runs it; on a machine without a GPU it says so and exits 0
# (SKIP). Not part of `make test` (tests/run.sh runs build/tests/* and
# tests/*.sh only), which checks what the kernels compute on the emulator.
# MODEL_PRESETS names the presets of test_model_cuda's presets check
# (default every one up to llama-1b, whose CPU side takes a minute).
# Usage: tests/gpu/run.sh [name-filter...]   logs in ${GPU_LOGS:-build/gpu/logs}
# (a check runs when its name holds one of the filters; none: every check)
set -u
cd "$(dirname "$0")/../.."
filters=("$@")
log_dir=${GPU_LOGS:-build/gpu/logs}
mkdir -p "$log_dir"
. tests/gpu/bundle_env.sh
gpu_found || { gpu_skip "the GPU checks"; exit 0; }
gpu_env_setup "$log_dir" || exit 1
export GPU_LOGS=$log_dir
passed=0 failed=0
run_one() {
    local name=$1 f; shift
    if [ ${#filters[@]} -gt 0 ]; then
        for f in "${filters[@]}"; do [[ "$name" == *"$f"* ]] && break; done
        [[ "$name" == *"$f"* ]] || return
    fi
    local log="$log_dir/$name.log" start=$SECONDS limit=${CHECK_TIMEOUT:-240}
    if [ -n "${CHECKS_UNTIL:-}" ]; then
        local until=$((CHECKS_UNTIL - $(date +%s)))
        [ "$until" -lt "$limit" ] && limit=$until
        if [ "$limit" -le 0 ]; then
            echo "FAIL $name (not run: CHECKS_UNTIL had passed)"
            failed=$((failed + 1))
            return
        fi
    fi
    timeout -k 10 "$limit" "$@" > "$log" 2>&1
    local rc=$? p f
    p=$(grep -c '^PASS ' "$log"); f=$(grep -c '^FAIL ' "$log")
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        f=$((f + 1)); echo "FAIL $name (stopped after $limit s)"
    elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "FAIL $name (exit $rc)"; fi
    grep -E '^(PASS|FAIL|SKIP) ' "$log" | sed "s/^\(PASS\|FAIL\|SKIP\) /\1 $name: /"
    [ "$f" -ne 0 ] && grep -vE '^(PASS|FAIL) ' "$log" | tail -n 40 | sed 's/^/    /'
    passed=$((passed + p)); failed=$((failed + f))
    printf '%-16s %3d passed %3d failed  %4ds\n' "$name" "$p" "$f" $((SECONDS - start))
}
run_one test_emu "$COD_BIN/test_emu"
run_one test_ops_cuda "$COD_BIN/test_ops_cuda"
run_one test_matmul_cuda "$COD_BIN/test_matmul_cuda"
# shellcheck disable=SC2086 # presets, as words
run_one test_model_cuda "$COD_BIN/test_model_cuda" ${MODEL_PRESETS:-}
run_one loss_curve bash tests/gpu/loss_curve.sh
run_one export python3 tests/gpu/export_matches_transformers.py
run_one hf python3 tests/gpu/hf_matches_transformers.py
run_one sanitize bash tests/gpu/sanitize.sh
run_one fault bash tests/gpu/fault.sh
run_one moves bash tests/gpu/moves.sh
run_one gang bash tests/gpu/gang.sh
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
