#!/usr/bin/env bash
# The GPU checks of the CUDA backend, in one command, on a machine with an
# NVIDIA GPU (sm_80 or newer) and the CUDA toolkit: builds, then
#   test_ops_cuda    every op against the CPU backend, outputs poisoned first
#   test_model_cuda  loss and every gradient of every preset and norm variant
#   loss_curve.sh    300 steps of llama-9m, CUDA within 2% of the CPU run
#   sanitize.sh      compute-sanitizer memcheck and racecheck, tiny model
# Each prints PASS/FAIL lines; exits 0 only if every check passed. Not part
# of `make test` (tests/run.sh runs build/tests/* and tests/*.sh only).
# Usage: tests/gpu/run.sh [name-filter]
set -u
cd "$(dirname "$0")/../.."
only="${1:-}"
log_dir=build/gpu/logs
mkdir -p "$log_dir"
if ! make -j"$(nproc)" all gpu-tests > "$log_dir/build.log" 2>&1; then
    echo "FAIL build (see $log_dir/build.log)"
    tail -20 "$log_dir/build.log"
    exit 1
fi
if [ ! -x build/gpu/test_ops_cuda ]; then
    echo "FAIL build: no nvcc found, so no CUDA backend was built"
    exit 1
fi
passed=0 failed=0
run_one() {
    local name=$1; shift
    [ -n "$only" ] && [[ "$name" != *"$only"* ]] && return
    local log="$log_dir/$name.log" start=$SECONDS
    "$@" > "$log" 2>&1
    local rc=$? p f
    p=$(grep -c '^PASS ' "$log"); f=$(grep -c '^FAIL ' "$log")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "FAIL $name (exit $rc)"; fi
    grep -E '^(PASS|FAIL) ' "$log" | sed "s/^\(PASS\|FAIL\) /\1 $name: /"
    [ "$f" -ne 0 ] && grep -vE '^(PASS|FAIL) ' "$log" | tail -n 40 | sed 's/^/    /'
    passed=$((passed + p)); failed=$((failed + f))
    printf '%-16s %3d passed %3d failed  %4ds\n' "$name" "$p" "$f" $((SECONDS - start))
}
run_one test_ops_cuda build/gpu/test_ops_cuda
run_one test_model_cuda build/gpu/test_model_cuda
run_one loss_curve bash tests/gpu/loss_curve.sh
run_one sanitize bash tests/gpu/sanitize.sh
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
