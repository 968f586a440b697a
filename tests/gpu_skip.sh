#!/usr/bin/env bash
# make test-gpu and make bench-gpu on a machine without a GPU: each says so
# and exits 0, having built and run nothing (a skip, not a failure). Two
# such machines: this one when the driver lists no GPU here, and one whose
# driver answers that it found none (an nvidia-smi on the PATH that says so,
# as the driver's does), which stands in for it wherever this one has a GPU.
cd "$(dirname "$0")/.." && . tests/lib.sh
t=$(mktemp -d /tmp/cod-gpu-skip-XXXXXX)
trap 'rm -rf "$t"' EXIT
unset COD_BIN_DRY
mkdir -p "$t/none" "$t/one"
printf '#!/bin/sh\necho "No devices were found"\nexit 6\n' > "$t/none/nvidia-smi"
printf '#!/bin/sh\necho "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)"\n' > "$t/one/nvidia-smi"
chmod +x "$t/none/nvidia-smi" "$t/one/nvidia-smi"

skips() { # label, then the environment's PATH
    local label=$1 path=$2 rc
    PATH=$path GPU_LOGS=$t/logs-$label BENCH_OUT=$t/bench-$label \
        make -s --no-print-directory test-gpu > "$t/test-$label.log" 2>&1
    rc=$?
    check "$label: make test-gpu exits 0" bash -c "[ $rc -eq 0 ] || { cat '$t/test-$label.log'; false; }"
    check "$label: it says the GPU checks are skipped for want of a GPU" \
        grep -q '^SKIP the GPU checks: no NVIDIA GPU' "$t/test-$label.log"
    check "$label: it built and ran nothing" bash -c "[ -z \"\$(ls -A '$t/logs-$label')\" ]"
    PATH=$path BENCH_OUT=$t/bench-$label make -s --no-print-directory bench-gpu > "$t/bench-$label.log" 2>&1
    rc=$?
    check "$label: make bench-gpu exits 0" bash -c "[ $rc -eq 0 ] || { cat '$t/bench-$label.log'; false; }"
    check "$label: it says the benchmark is skipped for want of a GPU" \
        grep -q '^SKIP the GPU benchmark: no NVIDIA GPU' "$t/bench-$label.log"
    check "$label: it wrote nothing" test ! -e "$t/bench-$label"
}

if nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "this machine has a GPU: only the driver that lists none stands in for a machine without"
else
    skips "this machine" "$PATH"
fi
skips "a driver that lists no GPU" "$t/none:$PATH"
# the check can tell: the same test finds a GPU where the driver lists one
found() { PATH=$1 bash -c '. tests/gpu/bundle_env.sh; gpu_found'; }
check "a driver that lists a GPU: found, so nothing is skipped" found "$t/one:$PATH"
not_found() { ! found "$1"; }
check "a driver that lists none: not found" not_found "$t/none:$PATH"
