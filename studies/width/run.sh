#!/usr/bin/env bash
# The width study against a running cod-server ($COD_SERVER): makes the
# data once (data.sh: cod-prep tokenizes the bundle's text with its
# SentencePiece model), sizes each recipe's schedule for TOKENS training
# targets an arm (steps.py), submits one sweep per recipe through the depth
# study's run.sh (norm pre, lns × SEEDS × DEPTHS on RECIPE-gpu.json, all
# at once, so that the workers run every arm side by side), writes each
# sweep's report into OUT/gpu-RECIPE with every run's own series
# (runs/ID.csv, ID the experiment's: what a run cut at the deadline
# reached, which the report's figures, averaging finished runs only, leave
# out), and the reading (read.py) into OUT/gpu-reading.md (for other SEEDS
# or DEPTHS than 1 and 12, OUT/gpu-RECIPE-TAG and OUT/gpu-TAG-reading.md,
# TAG as seeds2-3 or L24).
# studies/width/local.sh runs it with a server and workers of its own.
#   studies/width/run.sh gpu
# RECIPES: "paper" (default), "today", or both ("paper today": twice the
# training, more than one call of the GPU machine holds at TOKENS 100M:
# README.md). SEEDS (default "1"), DEPTHS (default "12"; "12 24" adds the
# 24-layer shape), TOKENS (training targets an arm, default 100000000).
# SPEC_MORE: KEY=VALUE words set in every recipe's base (a dry run's small
# model: SPEC_MORE="model.dim=64 model.n_heads=2 ..."). WIDTH_DATA: the
# shards' folder (default var/data/width), WIDTH_SRC: the text's (default
# $COD_DATA/width, the unpacked bundle's). OUT (default studies/width),
# COD, COD_TOKEN, POLL, DEADLINE as for studies/depth/run.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${1:-}
[ "$target" = gpu ] || { echo "usage: studies/width/run.sh gpu" >&2; exit 2; }
COD=${COD:-bin/cod}
out=${OUT:-studies/width}
data=${WIDTH_DATA:-var/data/width}
tokens=${TOKENS:-100000000}
comma() { echo "$*" | tr -s ' ' ','; }
seeds=$(comma "${SEEDS:-1}")
depths=$(comma "${DEPTHS:-12}")
# a call of other seeds or depths than the first call's writes folders of
# its own (gpu-paper-seeds2, gpu-seeds2-reading.md), beside the first's
# rather than over them, so that read.py can pool them (A+B)
tag=
[ "$seeds" = 1 ] || tag+=-seeds${seeds//,/-}
[ "$depths" = 12 ] || tag+=-L${depths//,/-}

COD_PREP=${COD_PREP:-$(dirname "$COD")/cod-prep} WIDTH_DATA=$data \
    studies/width/data.sh "${WIDTH_SRC:-${COD_DATA:-var/gpu-bundle}/width}"

names=() bases=() grids=()
for r in ${RECIPES:-paper}; do
    base=studies/width/$r-$target.json
    [ -f "$base" ] || { echo "width study: no recipe '$r' ($base)" >&2; exit 2; }
    n=$target-$r$tag
    # the folder holds this call's runs alone (and plan.sh archives what is newer than its start)
    rm -rf "${out:?}/$n"
    mkdir -p "$out/$n"
    # shellcheck disable=SC2086 # SPEC_MORE: words
    python3 studies/width/steps.py "$base" "$data/tokens.json" "$tokens" \
        "data.train=$data/train_*.bin" "data.val=$data/val_*.bin" ${SPEC_MORE:-} \
        > "$out/$n/base.json" 2> "$out/$n/plan.txt"
    sed 's/^/width study: /' "$out/$n/plan.txt"
    names+=("$n") bases+=("$out/$n/base.json")
    grids+=("train.seed=$seeds norm=pre,lns model.n_layers=$depths")
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
python3 studies/width/read.py "${names[@]/#/$out/}" | tee "$out/$target$tag-reading.md"
exit $status
