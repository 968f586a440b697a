#!/usr/bin/env bash
# A device fault is an error, never a result. COD_CUDA_INJECT_FAULT makes
# one op's first launch trap on the GPU, a real fault; cod-train must stop
# with "device fault" naming that op (COD_CUDA_SYNC=1 charges a fault to the
# launch that made it), exit 1, record no metric of the faulted step, write
# no checkpoint, and never say "diverged". Without COD_CUDA_SYNC the fault
# still stops the run as a device fault, charged to the op that noticed it.
# Run from tests/gpu/run.sh.
cd "$(dirname "$0")/../.." && . tests/lib.sh
: "${COD_BIN:?run from tests/gpu/run.sh}"
t=${GPU_LOGS:-build/gpu/logs}/fault
rm -rf "$t"
mkdir -p "$t"
cat > "$t/spec.json" <<SPEC
{"model": "llama-9m",
 "data": {"train": "$COD_DATA/gpu-bytes/train_*.bin", "val": "$COD_DATA/gpu-bytes/val_*.bin"},
 "train": {"steps": 5, "seq_len": 128, "batch_seqs": 8, "micro_batch": 8},
 "eval": {"every": 5, "tokens": 1024}, "stats": {"every": 0}, "checkpoint": {"every": 1}}
SPEC
# the fault goes into cod's own attention kernels' backward, wherever
# cuDNN's would otherwise run
for sync in 1 0; do
    COD_ATTENTION=own COD_CUDA_SYNC=$sync COD_CUDA_INJECT_FAULT="attention_bwd (dq)" \
        "$COD_BIN/cod-train" "$t/spec.json" --out "$t/run$sync" --device cuda:0 > "$t/run$sync.log" 2>&1
    rc=$?
    check "fault (COD_CUDA_SYNC=$sync): cod-train exits 1" \
        bash -c "[ $rc -eq 1 ] || { tail -3 '$t/run$sync.log'; false; }"
    check "fault (COD_CUDA_SYNC=$sync): reported as a device fault at step 1" \
        grep -q 'device fault on cuda at step 1' "$t/run$sync.log"
    check "fault (COD_CUDA_SYNC=$sync): never called divergence" \
        bash -c "! grep -qi 'diverged' '$t/run$sync.log'"
    check "fault (COD_CUDA_SYNC=$sync): no metric of the faulted step" \
        bash -c "! grep -q '\"step\": 1,' '$t/run$sync/metrics.jsonl'"
    check "fault (COD_CUDA_SYNC=$sync): no checkpoint" \
        bash -c "[ -z \"\$(ls '$t/run$sync/checkpoints' 2>/dev/null)\" ]"
    grep -m1 'device fault' "$t/run$sync.log" | sed 's/^/  /'
done
check "fault: under COD_CUDA_SYNC=1 the message names the op" \
    grep -q 'device fault on cuda at step 1: attention_bwd (dq)' "$t/run1.log"
