#!/usr/bin/env bash
# compute-sanitizer on training steps of a tiny model on cuda:0, in which
# every op of the backend runs (cuBLASLt's matmuls, the tensor-core
# attention, LayerScale's channel scales, Adam, the statistics): memcheck
# (out-of-bounds and misaligned accesses, device faults), racecheck
# (shared-memory hazards) and synccheck (invalid barriers); any report
# fails. Then memcheck again with cuDNN's fused attention
# (COD_ATTENTION=cudnn), where there is a cuDNN to use (else a SKIP line).
# Run from tests/gpu/run.sh.
cd "$(dirname "$0")/../.." && . tests/lib.sh
: "${COD_BIN:?run from tests/gpu/run.sh}"
cs=$(command -v compute-sanitizer || ls "${CUDA_HOME:-/usr/local/cuda}"/bin/compute-sanitizer 2>/dev/null)
if [ -z "$cs" ]; then
    echo "FAIL compute-sanitizer not found (CUDA toolkit's bin/)"
    exit 1
fi
t=${GPU_LOGS:-build/gpu/logs}/sanitize
rm -rf "$t"
mkdir -p "$t"
# head size 32 and two query tiles (seq 80): the tensor-core kernels with a
# partial tile; LayerScale: the channel-scale ops and their column sums
cat > "$t/spec.json" <<SPEC
{"model": {"dim": 64, "n_layers": 2, "n_heads": 2, "ffn_dim": 100},
 "norm": "layerscale",
 "data": {"train": "$COD_DATA/gpu-bytes/train_*.bin", "val": "$COD_DATA/gpu-bytes/val_*.bin"},
 "train": {"steps": 2, "seq_len": 80, "batch_seqs": 4, "micro_batch": 2, "clip": 1.0},
 "eval": {"every": 2, "tokens": 320}, "stats": {"every": 1}, "checkpoint": {"every": 0}}
SPEC
# no --leak-check: cuBLASLt's workspace and the scratch live for the whole
# process by design
for tool in memcheck racecheck synccheck; do
    COD_ATTENTION=own "$cs" --tool "$tool" --error-exitcode 99 \
        "$COD_BIN/cod-train" "$t/spec.json" --out "$t/$tool" --device cuda:0 > "$t/$tool.log" 2>&1
    rc=$?
    check "compute-sanitizer $tool clean on two training steps" \
        bash -c "[ $rc -eq 0 ] || { grep -m 20 -E '=+ (ERROR|Invalid|Race|Barrier|Leaked)|cod-train:' '$t/$tool.log'; echo '  exit $rc'; false; }"
    grep -E '=+ (ERROR SUMMARY|RACECHECK SUMMARY)' "$t/$tool.log" | sed 's/^/  /'
done
# the same model at a sequence every cuDNN cod accepts takes (128)
sed 's/"seq_len": 80/"seq_len": 128/; s/"tokens": 320/"tokens": 512/' "$t/spec.json" > "$t/spec-cudnn.json"
COD_ATTENTION=cudnn "$cs" --tool memcheck --error-exitcode 99 \
    "$COD_BIN/cod-train" "$t/spec-cudnn.json" --out "$t/memcheck-cudnn" --device cuda:0 \
    > "$t/memcheck-cudnn.log" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q 'COD_ATTENTION=cudnn, but cuDNN cannot be used' "$t/memcheck-cudnn.log"; then
    echo "SKIP compute-sanitizer memcheck with cuDNN's attention: $(grep -m1 -o 'cuDNN cannot be used: .*' "$t/memcheck-cudnn.log")"
else
    check "compute-sanitizer memcheck clean on two training steps with cuDNN's attention" \
        bash -c "[ $rc -eq 0 ] && grep -q '] attention: cuDNN ' '$t/memcheck-cudnn.log' ||
                 { grep -m 20 -E '=+ (ERROR|Invalid)|cod-train:|attention: ' '$t/memcheck-cudnn.log'; echo '  exit $rc'; false; }"
    grep -E '=+ ERROR SUMMARY' "$t/memcheck-cudnn.log" | sed 's/^/  /'
fi
