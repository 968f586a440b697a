#!/usr/bin/env bash
# The width study in one command on a GPU machine, from the width bundle
# (.gpu/width.tar.xz, made here by tests/gpu/bundle.sh --width; COD_BUNDLE
# names another): unpacks it, makes the data where it trains (data.sh:
# cod-prep on every core), then runs the depth study's local.sh with
# STUDY=width: a cod-server of its own and one cuda:0 worker a run, so that
# every arm trains side by side (sharing the GPU through MPS where the
# machine has it) and a pair of Pre-LN and LNS, progressing together, is
# cut at the same point if the deadline comes first; run.sh submits, waits
# and writes the reports and the reading.
#   studies/width/local.sh gpu
# CALL (call.sh's presets: seeds, the default, half, first) and RECIPES,
# SEEDS, RATES, DEPTHS, TOKENS, SPEC_MORE, ... as for studies/width/run.sh;
# WORKERS (default: one a run), DEADLINE (seconds from this script's start,
# default 480), STUDY_DIR (default var/study-width-gpu), OUT (default
# studies/width), WIDTH_DATA (call.sh's default), MPS as for
# studies/depth/local.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "${1:-}" = gpu ] || { echo "usage: studies/width/local.sh gpu" >&2; exit 2; }
export STUDY=width COD_BUNDLE=${COD_BUNDLE:-.gpu/width.tar.xz}
. studies/width/call.sh
d=${STUDY_DIR:-var/study-width-gpu}
mkdir -p "$d"
. tests/gpu/bundle_env.sh
gpu_env_setup "$d" || exit 1
COD_PREP=$COD_BIN/cod-prep studies/width/data.sh "${WIDTH_SRC:-$COD_DATA/width}"
# the MPS probe's run trains on the study's own data: the bundle has no other
export PROBE_DATA=$WIDTH_DATA
count() { echo $#; }
# shellcheck disable=SC2086 # words
export WORKERS=${WORKERS:-$((2 * $(count ${RECIPES:-paper}) * ($(count $SEEDS) + $(count $RATES)) * $(count ${DEPTHS:-12})))}
[ -z "${DEADLINE:-}" ] || export DEADLINE=$((DEADLINE - SECONDS))
exec studies/depth/local.sh gpu
