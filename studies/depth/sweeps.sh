# Sourced by a study's run.sh that runs several sweeps through
# studies/depth/run.sh at once (studies/recipe/, studies/width/), so that
# the workers never wait for one sweep to end:
#   names=(...) bases=(...) grids=(...)
#   sweeps_run TARGET STUDY OUT [LOG]
# runs studies/depth/run.sh TARGET for each i with BASE=${bases[i]},
# GRID=${grids[i]}, OUT=OUT/${names[i]}, STUDY and COD (its output into
# OUT/${names[i]}/LOG when LOG is given), waits for them all and returns 1
# if any failed. A signal to the calling script stops them.
sweep_pids=()
sweeps_stop() {
    local p
    for p in "${sweep_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
}
sweeps_run() {
    local target=$1 study=$2 out=$3 log=${4:-} i p status=0
    trap sweeps_stop EXIT
    trap 'exit 130' INT TERM
    for i in "${!names[@]}"; do
        mkdir -p "$out/${names[$i]}"
        (
            [ -z "$log" ] || exec > "$out/${names[$i]}/$log" 2>&1
            BASE=${bases[$i]} GRID=${grids[$i]} OUT=$out/${names[$i]} STUDY=$study COD=$COD \
                exec studies/depth/run.sh "$target"
        ) &
        sweep_pids+=($!)
    done
    for p in "${sweep_pids[@]}"; do wait "$p" || status=1; done
    sweep_pids=()
    return $status
}
