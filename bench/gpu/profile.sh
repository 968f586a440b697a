#!/usr/bin/env bash
# Where a training step's GPU time goes, kernel by kernel, from Nsight
# Compute's hardware counters: one timed step of bench_train_cuda (the
# warm-ups are outside the profiled range), every kernel replayed under ncu
# with the clocks left as they are (--clock-control none). Prints, largest
# first, each kernel's time per step and share, and how near it ran to the
# two ceilings (DRAM throughput and the busiest SM unit, % of peak), with
# the L2 hit rate, achieved occupancy and registers that say why; with the
# event profile (COD_CUDA_PROFILE) these tell bytes-bound from
# latency-bound. Keeps the report for Nsight Compute's GUI and its raw
# metrics as CSV in $BENCH_OUT (default bench/out/gpu):
#   ncu-PRESET.ncu-rep  ncu-PRESET-raw.csv  ncu-PRESET.csv  ncu-PRESET-table.txt
# ncu serialises the kernels and empties the caches before each, so L2 reuse
# across kernels is lost here (within a kernel it is measured) and times
# are a little above a real step's.
# usage: [MICRO_BATCH=64] bench/gpu/profile.sh [preset]   (llama-130m)
set -u
cd "$(dirname "$0")/../.."
preset=${1:-llama-130m}
out=${BENCH_OUT:-bench/out/gpu}
mkdir -p "$out"
. tests/gpu/bundle_env.sh
gpu_env_setup "$out" || exit 1
ncu=$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | tail -1)
[ -n "$ncu" ] && [ -x "$ncu" ] || { echo "FAIL profile: no ncu (Nsight Compute) here"; exit 1; }
rep=$out/ncu-$preset
"$ncu" --profile-from-start off --clock-control none --force-overwrite --export "$rep" \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    --section LaunchStats --section ComputeWorkloadAnalysis --section WarpStateStats \
    "$COD_BIN/bench_train_cuda" "$preset" 989 "${MICRO_BATCH:-64}" 1 > "$rep.log" 2>&1 ||
    { echo "FAIL profile: ncu exited $? (see $rep.log)"; tail -20 "$rep.log"; exit 1; }
"$ncu" --import "$rep.ncu-rep" --csv --page raw > "$rep-raw.csv" 2> "$rep-import.log" &&
    "$ncu" --import "$rep.ncu-rep" --csv --page details > "$rep.csv" 2>> "$rep-import.log" ||
    { echo "FAIL profile: ncu --import (see $rep-import.log)"; tail -20 "$rep-import.log"; exit 1; }
python3 bench/gpu/ncu_table.py "$rep.csv" | tee "$rep-table.txt"
