#!/usr/bin/env bash
# What the paper's recipe costs in CPU training throughput, at the recipe
# study's shape (studies/recipe/today-cpu.json: width 64, 24 layers, 16 ×
# 128 tokens an update), on its documents (var/data/default-paragraphs-
# bytes): cod-train on one thread, as the study's workers run, for STEPS
# updates (default 60; no evaluation, statistics or checkpoint but the
# last) in each of train.precision mixed, bf16 × data.packing stream,
# documents, the four in turn, ROUNDS times (default 3), each
# configuration's fastest round kept. Per configuration:
# updates/s and token slots/s (the wall clock of the whole run, start-up
# and the documents' index included), and the targets trained on per
# second (state.json's tokens: in documents packing the pads are not
# counted); then the ratios, measured in this run.
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${STEPS:-60} ROUNDS=${ROUNDS:-3}
out=bench/out/recipe
mkdir -p "$out"
studies/recipe/data.sh >/dev/null
now() { date +%s.%N; }
declare -A best tokens
for round in $(seq "$ROUNDS"); do
    for mode in mixed:stream bf16:stream mixed:documents bf16:documents; do
        precision=${mode%:*} packing=${mode#*:}
        python3 - "$precision" "$packing" "$STEPS" > "$out/$precision-$packing.json" <<'PY'
import json, sys
s = json.load(open("studies/recipe/today-cpu.json"))
s["name"] = f"bench-{sys.argv[1]}-{sys.argv[2]}"
s["train"].update(precision=sys.argv[1], steps=int(sys.argv[3]), warmup=0)
s["data"]["packing"] = sys.argv[2]
s.update(eval={"every": 0}, stats={"every": 0}, checkpoint={"every": 0, "keep": 1},
         analysis={"prune": False, "angular": False})
print(json.dumps(s))
PY
        run=$out/$precision-$packing
        rm -rf "$run"
        t0=$(now)
        bin/cod-train "$out/$precision-$packing.json" --out "$run" --threads 1 --progress-seconds 1e9 \
            > "$run.log" 2>&1
        t=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')
        if [ -z "${best[$mode]:-}" ] || awk -v x="$t" -v y="${best[$mode]}" 'BEGIN { exit !(x < y) }'; then
            best[$mode]=$t
            tokens[$mode]=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["tokens"])' \
                "$run/checkpoints/step_$(printf %08d "$STEPS")/state.json")
        fi
    done
done
slots=$((STEPS * 16 * 128))
printf '%-18s %9s %10s %12s %14s\n' configuration seconds updates/s "slots/s" "targets/s"
for mode in mixed:stream bf16:stream mixed:documents bf16:documents; do
    awk -v m="$mode" -v t="${best[$mode]}" -v n="$STEPS" -v s="$slots" -v k="${tokens[$mode]}" \
        'BEGIN { printf "%-18s %9.2f %10.2f %12.0f %14.0f\n", m, t, n / t, s / t, k / t }'
done
ratio() { awk -v a="${best[$1]}" -v b="${best[$2]}" -v ka="${tokens[$1]}" -v kb="${tokens[$2]}" -v w="$3" \
    'BEGIN { printf "%-44s updates/s %.3f, targets/s %.3f\n", w, b / a, (ka / a) / (kb / b) }'; }
ratio bf16:stream mixed:stream "bf16 / mixed (stream):"
ratio bf16:documents mixed:documents "bf16 / mixed (documents):"
ratio mixed:documents mixed:stream "documents / stream (mixed):"
ratio bf16:documents mixed:stream "the paper's (bf16, documents) / today's:"
