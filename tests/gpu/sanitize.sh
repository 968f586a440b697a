#!/usr/bin/env bash
# compute-sanitizer's memcheck and racecheck on a few training steps of a
# tiny model on cuda:0 (every op of the backend runs, cuBLASLt included):
# any report fails. Run from tests/gpu/run.sh after the build.
cd "$(dirname "$0")/../.." && . tests/lib.sh
need_corpus
cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [ -z "$cs" ]; then
    echo "FAIL compute-sanitizer not found (CUDA toolkit's bin/)"
    exit 1
fi
t=$(mktemp -d /tmp/cod-gpu-san-XXXXXX)
cat > "$t/spec.json" <<'SPEC'
{"model": {"dim": 64, "n_layers": 2, "n_heads": 2, "ffn_dim": 96},
 "norm": "layerscale",
 "data": {"train": "var/data/default-bytes/train_*.bin", "val": "var/data/default-bytes/val_*.bin"},
 "train": {"steps": 3, "seq_len": 48, "batch_seqs": 4, "micro_batch": 2},
 "eval": {"every": 3, "tokens": 512}, "stats": {"every": 1}, "checkpoint": {"every": 0}}
SPEC
# no --leak-check: cuBLASLt's workspace and the reduction partials live
# for the whole process by design
for tool in memcheck racecheck; do
    "$cs" --tool "$tool" --error-exitcode 99 \
        bin/cod-train "$t/spec.json" --out "$t/$tool" --device cuda:0 > "$t/$tool.log" 2>&1
    rc=$?
    check "compute-sanitizer $tool clean on a tiny model" \
        bash -c "[ $rc -eq 0 ] || { grep -m 20 -E '=+ (ERROR|Invalid|Race|Leaked)|cod-train:' '$t/$tool.log'; echo '  exit $rc'; false; }"
done
rm -rf "$t"
