#!/usr/bin/env bash
# 300 updates of the small model of tests/gpu/loss_curve.json (Pre-LN, the
# default corpus in LLaMA tokens) on cuda:0, against the CPU run of the same
# spec and seed: the same initial weights, the same batches. The CPU run
# comes from the bundle (tests/gpu/bundle.sh trains it where the bundle is
# made) when its spec is this one, else it is trained here. Passes when the
# training-loss curves differ by less than 1% of the loss on average
# (mean |cuda − cpu| over mean cpu) and the final held-out loss by less than
# 1%, and when the CUDA run replayed its micro-batches from a CUDA graph
# (the curve is then the graph's). Writes both curves to
# $GPU_LOGS/loss_curve/curve.csv and keeps the
# CUDA run's final checkpoint there for the export check. The CUDA run
# uses the backend's choice of attention, or the one COD_ATTENTION names
# (own or cudnn: then its curve is in loss_curve-own or loss_curve-cudnn),
# and its log must say once which it used. Run from tests/gpu/run.sh.
cd "$(dirname "$0")/../.." && . tests/lib.sh
: "${COD_BIN:?run from tests/gpu/run.sh}"
att=${COD_ATTENTION:-}
out=${GPU_LOGS:-build/gpu/logs}/loss_curve${att:+-$att}
rm -rf "$out"
mkdir -p "$out"
sed "s|@DATA@|$COD_DATA/gpu-bytes|g" tests/gpu/loss_curve.json > "$out/spec.json"
if [ -n "${COD_REF:-}" ] && [ -f "$COD_REF/metrics.jsonl" ] &&
    cmp -s tests/gpu/loss_curve.json "$COD_REF/spec.json"; then
    cpu=$COD_REF/metrics.jsonl
    echo "CPU run: from the bundle ($COD_REF)"
else
    "$COD_BIN/cod-train" "$out/spec.json" --out "$out/cpu" --device cpu --progress-seconds 60 \
        > "$out/cpu.log" 2>&1
    check "300 updates on the CPU" test $? -eq 0
    cpu=$out/cpu/metrics.jsonl
fi
start=$SECONDS
"$COD_BIN/cod-train" "$out/spec.json" --out "$out/cuda" --device cuda:0 --progress-seconds 10 \
    > "$out/cuda.log" 2>&1
rc=$?
check "300 updates on cuda:0${att:+ (COD_ATTENTION=$att)} ($((SECONDS - start)) s)" \
    bash -c "[ $rc -eq 0 ] || { tail -5 '$out/cuda.log'; false; }"
# step and value of each point of one metric, "step value" per line
points() { grep "\"name\": \"$2\"" "$1" | sed 's/.*"step": \([0-9]*\).*"value": \([^,}]*\).*/\1 \2/'; }
points "$cpu" train/loss > "$out/cpu.loss"
points "$out/cuda/metrics.jsonl" train/loss > "$out/cuda.loss"
points "$cpu" eval/loss | tail -1 > "$out/cpu.loss_eval"
points "$out/cuda/metrics.jsonl" eval/loss | tail -1 > "$out/cuda.loss_eval"
{ echo "step,cpu_train_loss,cuda_train_loss"; paste -d' ' "$out/cpu.loss" "$out/cuda.loss" |
    awk '{ print $1 "," $2 "," $4 }'; } > "$out/curve.csv"
curves_close() {
    [ "$(wc -l < "$out/cpu.loss")" -eq 300 ] && [ "$(wc -l < "$out/cuda.loss")" -eq 300 ] ||
        { echo "  expected 300 points each"; return 1; }
    paste -d' ' "$out/cpu.loss" "$out/cuda.loss" | awk '
        $1 != $3 { bad = 1 }
        { d = $4 - $2; if (d < 0) d = -d; s += d; c += $2; if (d > w) w = d }
        END { printf "  train/loss: mean |cuda - cpu| %.5f over mean loss %.4f = %.3f%% (largest %.4f)\n", s / NR, c / NR, 100 * s / c, w
              exit bad || !(s / c < 0.01) }'
}
final_eval_close() {
    awk 'NR == FNR { a = $0; next } { b = $0 } END {
        split(a, x, " "); split(b, y, " "); d = (y[2] - x[2]) / x[2]; if (d < 0) d = -d
        printf "  final eval/loss at step %s: cpu %.5f, cuda %.5f (%.3f%%)\n", x[1], x[2], y[2], 100 * d
        exit !(x[1] == y[1] && x[1] == 300 && d < 0.01) }' "$out/cpu.loss_eval" "$out/cuda.loss_eval"
}
check "training loss within 1% of the CPU run on average" curves_close
check "final held-out loss within 1% of the CPU run" final_eval_close
check "no device fault" bash -c "! grep -q 'device fault' '$out/cuda.log'"
check "the CUDA run's micro-batches were replayed from a CUDA graph" \
    bash -c "grep -q 'micro-batches replay a recording' '$out/cuda.log' ||
             { grep -m1 'micro-batches run op by op' '$out/cuda.log'; false; }"
# one line, and the attention asked for where one was
says_attention() {
    local lines
    lines=$(grep -c '] attention: ' "$out/cuda.log")
    grep -m1 '] attention: ' "$out/cuda.log" | sed 's/^/  /'
    [ "$lines" -eq 1 ] || { echo "  $lines lines say it"; return 1; }
    case $att in
    cudnn) grep -q '] attention: cuDNN ' "$out/cuda.log" ;;
    own) grep -q "] attention: cod's .*(COD_ATTENTION=own)" "$out/cuda.log" ;;
    esac
}
check "the CUDA run's log says once which attention it ran${att:+ (COD_ATTENTION=$att)}" says_attention
