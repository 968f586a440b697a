#!/usr/bin/env bash
# A run moves between the CPU and a GPU and goes on: a checkpoint holds the
# fp32 master weights and Adam's state whichever device wrote it, so a run
# checkpointed on one resumes on the other. Six updates of a small model
# (LayerNorm Scaling) on each device, checkpointed every two; the CPU run's
# step-2 checkpoint resumed on cuda:0, and the cuda:0 run's on the CPU.
# Each resumed run must record steps 3 to 6 only, with training losses
# within 1% of the CPU run that never moved (the loss curve's tolerance:
# bf16 on one side) and the same held-out loss at step 6 within 1%. Then
# the same under the paper's recipe (train.precision bf16, documents
# packing, frozen gains), whose checkpoints, written by either device,
# hold only values bf16 can represent. Run from tests/gpu/run.sh, and on
# the CUDA emulator by tests/cuda_emu.sh.
cd "$(dirname "$0")/../.." && . tests/lib.sh
: "${COD_BIN:?run from tests/gpu/run.sh or tests/cuda_emu.sh}"
t=${GPU_LOGS:-build/gpu/logs}/moves
rm -rf "$t"
mkdir -p "$t"
spec() { # norm, data.packing, train.precision
    cat <<SPEC
{"model": {"dim": 64, "n_layers": 2, "n_heads": 2, "ffn_dim": 176}, "norm": $1,
 "data": {"train": "$COD_DATA/gpu-bytes/train_*.bin", "val": "$COD_DATA/gpu-bytes/val_*.bin",
          "packing": "$2"},
 "train": {"steps": 6, "seq_len": 64, "batch_seqs": 8, "micro_batch": 4, "warmup": 1, "lr": 3e-3,
           "precision": "$3"},
 "eval": {"every": 6, "tokens": 2048}, "stats": {"every": 0}, "checkpoint": {"every": 2, "keep": 3}}
SPEC
}
spec '"lns"' stream mixed > "$t/spec.json"
train() { # run dir, device, more arguments
    local dir=$1 device=$2; shift 2
    "$COD_BIN/cod-train" "$t/spec.json" --out "$t/$dir" --device "$device" "$@" > "$t/$dir.log" 2>&1
    check "moves${r:-}: $dir: cod-train on $device${*:+ $*} exits 0" \
        bash -c "[ $? -eq 0 ] || { tail -5 '$t/$dir.log'; false; }"
}
# a copy of a run as it stood after its checkpoint at step 2
at_step2() {
    cp -r "$t/$1" "$t/$2"
    rm -rf "$t/$2/checkpoints/step_00000004" "$t/$2/checkpoints/step_00000006"
}
points() { grep "\"name\": \"$2\"" "$1/metrics.jsonl" | sed 's/.*"step": \([0-9]*\).*"value": \([^,}]*\).*/\1 \2/'; }
# the run's points of one metric, each within 1% of the CPU run's at its step
close_to_cpu() { # run, metric, the steps it must hold
    local run=$1 name=$2 want=$3
    awk -v want="$want" -v run="$run $name" 'NR == FNR { ref[$1] = $2; next }
        { steps = steps (steps == "" ? "" : " ") $1; d = ($2 - ref[$1]) / ref[$1]; if (d < 0) d = -d
          if (d > worst) worst = d; if (!($1 in ref) || d >= 0.01) bad = 1 }
        END { printf "  %s: steps %s, at most %.4f%% from the CPU run\n", run, steps, 100 * worst
              exit bad || steps != want }' <(points "$t/cpu" "$name") <(points "$t/$run" "$name")
}
moves() { # the recipe's name in the checks
    local r=$1
    train cpu cpu
    train cuda cuda:0
    check "moves$r: the cuda:0 run's training losses within 1% of the CPU run's" \
        close_to_cpu cuda train/loss "1 2 3 4 5 6"
    at_step2 cpu cpu-to-cuda
    train cpu-to-cuda cuda:0 --resume
    check "moves$r: resumed on cuda:0 from the CPU's checkpoint at step 2, it goes on from step 3" \
        close_to_cpu cpu-to-cuda train/loss "1 2 3 4 5 6"
    check "moves$r: and its held-out loss at step 6 is the CPU run's within 1%" \
        close_to_cpu cpu-to-cuda eval/loss "0 6"
    at_step2 cuda cuda-to-cpu
    train cuda-to-cpu cpu --resume
    check "moves$r: resumed on the CPU from cuda:0's checkpoint at step 2, it goes on from step 3" \
        close_to_cpu cuda-to-cpu train/loss "1 2 3 4 5 6"
    check "moves$r: and its held-out loss at step 6 is the CPU run's within 1%" \
        close_to_cpu cuda-to-cpu eval/loss "0 6"
    check "moves$r: each resumed run went on from step 2" \
        bash -c "grep -q 'resumed at step 2' '$t/cpu-to-cuda.log' && grep -q 'resumed at step 2' '$t/cuda-to-cpu.log'"
}
# every tensor of a checkpoint's safetensors files a bf16 value (the low 16 bits of its fp32 zero)
all_bf16() { # checkpoint directory
    python3 - "$1" <<'PY'
import json, struct, sys
for name in ("model.safetensors", "optim.safetensors"):
    data = open(f"{sys.argv[1]}/{name}", "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    head = json.loads(data[8:8 + n])
    for k, v in head.items():
        if k == "__metadata__":
            continue
        lo, hi = v["data_offsets"]
        if v["dtype"] != "F32" or any(data[8 + n + i] | data[9 + n + i] for i in range(lo, hi, 4)):
            sys.exit(f"{name}: {k} holds values bf16 cannot represent")
PY
}
moves ""
rm -rf "$t"/cpu* "$t"/cuda*
spec '{"base": "lns", "gains": "frozen"}' documents bf16 > "$t/spec.json"
moves " (bf16, documents, frozen gains)"
bf16_checkpoints() {
    all_bf16 "$t/cpu/checkpoints/step_00000006" && all_bf16 "$t/cuda/checkpoints/step_00000006"
}
check "moves (bf16): the checkpoints the CPU and cuda:0 wrote hold bf16 values only" bf16_checkpoints
