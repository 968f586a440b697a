#!/usr/bin/env bash
# The recipe study against a running cod-server ($COD_SERVER): cuts the
# default corpus into documents (var/data/default-paragraphs-bytes, once),
# submits one sweep per recipe through the depth study's run.sh (norm pre,
# lns × seeds 1, 2, 3 on today-cpu.json and on paper-cpu.json), all at
# once so that the workers never wait for one sweep to end, writes each
# sweep's report into OUT/cpu-RECIPE, and reads the gaps with gap.py into
# OUT/gaps.txt (OUT/gaps-one-at-a-time.txt for the follow-ups).
# studies/depth/local.sh runs it with a server and workers of its own:
# STUDY=recipe studies/depth/local.sh cpu.
#   studies/recipe/run.sh cpu
# CHANGES (words KEY=VALUE) runs the one-at-a-time follow-ups instead: a
# sweep on today's recipe for each word, with that one setting of the
# paper's, each read against today's (whose sweep, the same as before, is
# followed, not run again, in the same STUDY_DIR):
#   CHANGES="train.precision=bf16 data.packing=documents model.embed_std=0.02 norm.gains=frozen"
# RECIPES (default "today paper"): which recipes' sweeps run, say
# RECIPES=paper GRID_MORE="model.n_layers=12" OUT=studies/recipe/cpu-12
# for the width study's 12 x 64 cell (its README).
# OUT: the reports' folder (default studies/recipe); GRID_MORE: words added
# to every sweep's grid (a small check: GRID_MORE="model.n_layers=2
# train.steps=20 train.warmup=2"). SEEDS (default 1,2,3): the seeds, comma
# separated; seeds added later make sweeps of their own, so give them an
# OUT of their own and read them with the first ones (gap.py
# today+later/cpu-today ...). COD, COD_TOKEN, POLL, DEADLINE as for
# studies/depth/run.sh. The sweeps run at once (studies/depth/sweeps.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${1:-}
[ "$target" = cpu ] || { echo "usage: studies/recipe/run.sh cpu" >&2; exit 2; }
COD=${COD:-bin/cod}
out=${OUT:-studies/recipe}
grid="train.seed=${SEEDS:-1,2,3} norm=pre,lns${GRID_MORE:+ $GRID_MORE}"

COD_PREP=$(dirname "$COD")/cod-prep studies/recipe/data.sh

names=() bases=() grids=()
if [ -z "${CHANGES:-}" ]; then
    for r in ${RECIPES:-today paper}; do
        [ -f "studies/recipe/$r-cpu.json" ] || { echo "recipe study: no studies/recipe/$r-cpu.json" >&2; exit 2; }
        names+=("cpu-$r") bases+=("studies/recipe/$r-cpu.json") grids+=("$grid")
    done
else
    names+=("cpu-today") bases+=("studies/recipe/today-cpu.json") grids+=("$grid")
    for c in $CHANGES; do
        case "$c" in *=*) ;; *) echo "recipe study: CHANGES word '$c' is not KEY=VALUE" >&2; exit 2 ;; esac
        names+=("cpu-${c//=/-}") bases+=("studies/recipe/today-cpu.json") grids+=("$grid $c")
    done
fi
. studies/depth/sweeps.sh
sweeps_run "$target" recipe "$out"
python3 studies/recipe/gap.py "${names[@]/#/$out/}" | tee "$out/gaps${CHANGES:+-one-at-a-time}.txt"
