#!/usr/bin/env bash
# The width study against a running cod-server ($COD_SERVER): makes the
# data once (data.sh: cod-prep tokenizes the bundle's text with its
# SentencePiece model), sizes each recipe's schedule (steps.py), submits
# the call's sweeps through the depth study's run.sh, all at once, so that
# the workers run every arm side by side: per recipe, norm pre, lns ×
# SEEDS × DEPTHS on RECIPE-gpu.json, and per rate of RATES the same at
# that lr and the first seed alone; writes each sweep's report into
# OUT/gpu-RECIPE-TAG (the rate's OUT/gpu-RECIPE-TAG-lrRATE) with every
# run's own series (runs/ID.csv, ID the experiment's: what a run cut at
# the deadline reached, which the report's figures, averaging finished
# runs only, leave out) and tokens.json (what the rows held), and the
# reading of them all (read.py) into OUT/gpu-TAG-reading.md (DEPTHS other
# than 12 add -LDEPTHS to both).
# studies/width/local.sh runs it with a server and workers of its own.
#   studies/width/run.sh gpu
# CALL picks the call's preset (call.sh: seeds, the default; half; first),
# which sets what follows unless it is set: SEEDS, RATES, BATCH
# (train.batch_seqs), PASSES (passes over the unique training targets an
# arm) or TOKENS (training targets an arm), TRAIN_EVAL (eval.train_tokens),
# EVAL_TOKENS (eval.tokens), ANALYSIS (1: pruning and angles at the end),
# WIDTH_POOL (the share of the training documents), TAG. RECIPES: "paper"
# (default), "today", or both. DEPTHS (default "12"). SPEC_MORE: KEY=VALUE
# words set in every recipe's base after the call's (a dry run's small
# model: SPEC_MORE="model.dim=64 model.n_heads=2 ..."). WIDTH_DATA: the
# shards' folder (call.sh's default), WIDTH_SRC: the text's (default
# $COD_DATA/width, the unpacked bundle's). OUT (default studies/width),
# COD, COD_TOKEN, POLL, DEADLINE as for studies/depth/run.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${1:-}
[ "$target" = gpu ] || { echo "usage: studies/width/run.sh gpu" >&2; exit 2; }
. studies/width/call.sh
COD=${COD:-bin/cod}
out=${OUT:-studies/width}
data=$WIDTH_DATA
amount=${TOKENS:-${PASSES}x}
comma() { echo "$*" | tr -s ' ' ','; }
seeds=$(comma "$SEEDS")
depths=$(comma "${DEPTHS:-12}")
first_seed=${seeds%%,*}
ltag=
[ "$depths" = 12 ] || ltag=-L${depths//,/-}
analysis=true
[ "$ANALYSIS" = 1 ] || analysis=false
call_words=(train.batch_seqs="$BATCH" eval.tokens="$EVAL_TOKENS" analysis.prune=$analysis analysis.angular=$analysis)
[ "$TRAIN_EVAL" = 0 ] || call_words+=(eval.train_tokens="$TRAIN_EVAL")

COD_PREP=${COD_PREP:-$(dirname "$COD")/cod-prep} WIDTH_DATA=$data \
    studies/width/data.sh "${WIDTH_SRC:-${COD_DATA:-var/gpu-bundle}/width}"

names=() bases=() grids=()
# one sweep: its folder's name, its recipe's base, more words, its grid
sweep() {
    local n=$1 base=$2 more=$3 grid=$4
    # the folder holds this call's runs alone (and plan.sh archives what is newer than its start)
    rm -rf "${out:?}/$n"
    mkdir -p "$out/$n"
    # shellcheck disable=SC2086 # SPEC_MORE and more: words
    python3 studies/width/steps.py "$base" "$data/tokens.json" "$amount" \
        "data.train=$data/train_*.bin" "data.val=$data/val_*.bin" "${call_words[@]}" $more ${SPEC_MORE:-} \
        > "$out/$n/base.json" 2> "$out/$n/plan.txt"
    cp "$data/tokens.json" "$out/$n/tokens.json"
    sed 's/^/width study: /' "$out/$n/plan.txt"
    names+=("$n") bases+=("$out/$n/base.json") grids+=("$grid")
}
for r in ${RECIPES:-paper}; do
    base=studies/width/$r-$target.json
    [ -f "$base" ] || { echo "width study: no recipe '$r' ($base)" >&2; exit 2; }
    sweep "$target-$r$TAG$ltag" "$base" "" "train.seed=$seeds norm=pre,lns model.n_layers=$depths"
    for lr in $RATES; do
        sweep "$target-$r$TAG-lr$lr$ltag" "$base" "train.lr=$lr" \
            "train.seed=$first_seed norm=pre,lns model.n_layers=$depths"
    done
done
. studies/depth/sweeps.sh
status=0
sweeps_run "$target" width "$out" run.log || status=1
# every run's own series: its scalars, and layer/out_var at each point the
# statistics were taken, from the server (a cut run's too)
for n in "${names[@]}"; do
    grep -E '^(\[|width study|study)' "$out/$n/run.log" | sed "s/^/$n: /" || true
    sid=$(sed -n 's/^width study: sweep \([0-9]*\) .*/\1/p' "$out/$n/run.log" | head -1)
    [ -n "$sid" ] || { echo "width study: $n: no sweep (see $out/$n/run.log)" >&2; status=1; continue; }
    every=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stats"]["every"])' "$out/$n/base.json")
    rm -rf "$out/$n/runs"
    mkdir -p "$out/$n/runs"
    for id in $("$COD" ls --sweep "$sid" --all --json | grep -o '"id": *[0-9]*' | grep -o '[0-9]*$'); do
        f=$out/$n/runs/$id.csv
        "$COD" metrics "$id" --csv | tail -n +2 > "$f.tmp"
        last=$(awk -F, '$2 == "train/loss" && $1 > s { s = $1 } END { print s + 0 }' "$f.tmp")
        for s in $(seq 0 "$every" "$last") "$last"; do
            "$COD" metrics "$id" --layers layer/out_var --step "$s" --csv 2>/dev/null | tail -n +2 >> "$f.tmp" || true
        done
        { echo step,name,layer,value; sort -u -t, -k1,1n -k2,2 -k3,3n "$f.tmp"; } > "$f"
        rm -f "$f.tmp"
    done
done
python3 studies/width/read.py "${names[@]/#/$out/}" | tee "$out/$target$TAG$ltag-reading.md"
exit $status
