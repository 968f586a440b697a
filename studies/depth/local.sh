#!/usr/bin/env bash
# The depth study in one command on this machine: starts a cod-server (its
# own database, var/study-depth-TARGET/cod.db, so the study stands apart
# from the demo's) and workers, runs studies/depth/run.sh TARGET (submit,
# wait, report), then stops them. Run again after a stop, it resumes: the
# same database, the same sweep, workers resuming from their checkpoints.
# STUDY=NAME runs studies/NAME/run.sh TARGET the same way instead (its
# state in var/study-NAME-TARGET): STUDY=recipe is the recipe study.
#   studies/depth/local.sh cpu   WORKERS CPU workers (default 2) of THREADS
#                                OpenMP threads each (default 1), at nice 10
#   studies/depth/local.sh gpu   WORKERS cuda:0 workers, from the GPU bundle
#                                (.gpu/bundle.tar.xz, made by
#                                tests/gpu/bundle.sh; COD_BUNDLE names
#                                another, .gpu/width.tar.xz say) when there
#                                is one, else built here (nvcc and the
#                                corpus needed).
#                                Models this small fill a few of the GPU's
#                                132 SMs a kernel, so several runs at once
#                                pay only when their kernels can share the
#                                GPU: through NVIDIA's MPS daemon, started
#                                for the study where the machine has one
#                                and a probe run goes through it (MPS=0:
#                                never); 6 workers then, else 3, which only
#                                fill each other's gaps between launches
# COD_BIN names the directory of cod-server, cod-worker and cod (default
# bin/, or the bundle's); STUDY_DIR the study's state: its database, the
# logs, the workers' checkpoints (default var/study-depth-TARGET). Stopped
# by a signal (INT, TERM), it stops the workers, whose runs go back to the
# queue, then the server, and exits 130. With DEADLINE (seconds from its
# start), at the deadline it stops every worker at once, each run at its
# next update with a checkpoint and every metric delivered, so that runs
# that went side by side are cut at the same point, and then run.sh
# reports what they reached (STUDY_CUT: the file that says the cut is done).
# PROBE_DATA: the shard folder of the MPS probe's run (default
# var/data/default-bytes; a study whose bundle carries other data names its own).
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${1:-}
[ "$target" = cpu ] || [ "$target" = gpu ] || { echo "usage: studies/depth/local.sh cpu|gpu" >&2; exit 2; }
export STUDY=${STUDY:-depth}
[ -x "studies/$STUDY/run.sh" ] || { echo "study: no studies/$STUDY/run.sh" >&2; exit 2; }
d=${STUDY_DIR:-var/study-$STUDY-$target}
mkdir -p "$d"
d=$(cd "$d" && pwd)
# NVIDIA's Multi-Process Service for the study's workers alone: its pipe
# directory is the study's, so other programs on the GPU are not its
# clients. Kept only if a two-update run on cuda:0 went through it (the
# daemon then lists a server); a daemon left by a stopped call is reused.
mps_dir=
mps_start() { # study directory, directory of cod-train
    local m=$1/mps servers
    command -v nvidia-cuda-mps-control >/dev/null ||
        { echo "study: no nvidia-cuda-mps-control here, so the workers take turns on the GPU"; return 1; }
    mkdir -p "$m"
    export CUDA_MPS_PIPE_DIRECTORY=$m CUDA_MPS_LOG_DIRECTORY=$m
    mps_dir=$m
    nvidia-cuda-mps-control -d >> "$m/start.log" 2>&1
    if mps_probe "$1" "$2"; then
        servers=$(echo get_server_list | timeout 10 nvidia-cuda-mps-control 2>/dev/null)
        if [ -n "$servers" ]; then
            echo "study: the workers share the GPU through MPS (server $servers; logs in $m)"
            return 0
        fi
    fi
    echo "study: a probe run did not go through MPS (see $m/), so the workers take turns on the GPU"
    mps_stop
    return 1
}
mps_probe() { # study directory, directory of cod-train
    local p=$1/mps/probe probe_data=${PROBE_DATA:-var/data/default-bytes}
    [ -x "$2/cod-train" ] || { echo "no $2/cod-train to probe with" > "$1/mps/probe.log"; return 1; }
    mkdir -p "$p"
    printf '%s\n' '{"model": {"dim": 64, "n_layers": 1, "n_heads": 2, "ffn_dim": 176},' \
        " \"data\": {\"train\": \"$probe_data/train_*.bin\", \"val\": \"$probe_data/val_*.bin\"}," \
        ' "train": {"steps": 2, "seq_len": 128, "batch_seqs": 4, "micro_batch": 4},' \
        ' "eval": {"every": 2, "tokens": 512}, "stats": {"every": 0}, "checkpoint": {"every": 0}}' > "$p/spec.json"
    rm -rf "$p/run"
    timeout -k 5 60 "$2/cod-train" "$p/spec.json" --out "$p/run" --device cuda:0 > "$1/mps/probe.log" 2>&1
}
mps_stop() {
    [ -n "$mps_dir" ] || return 0
    echo quit | timeout 30 nvidia-cuda-mps-control >/dev/null 2>&1 || true
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    mps_dir=
}
if [ "$target" = gpu ]; then
    # the machine's CUDA libraries on LD_LIBRARY_PATH, and the bundle unpacked
    . tests/gpu/bundle_env.sh
    gpu_env_setup "$d" || exit 1
    if [ -f "${COD_BUNDLE:-.gpu/bundle.tar.xz}" ] || [ -n "${COD_BIN_DRY:-}" ]; then
        BIN=$COD_BIN
        # the depth study's base spec names var/data/default-bytes, which its bundle carries
        [ -e var/data/default-bytes ] || [ ! -d "$COD_DATA/default-bytes" ] ||
            { mkdir -p var/data && ln -s "$COD_DATA/default-bytes" var/data/default-bytes; }
    else
        BIN=bin
        make -j"$(nproc)" all >"$d/build.log" 2>&1 || { echo "study: build failed (see $d/build.log)" >&2; exit 1; }
    fi
    device=cuda:0 nice=0 threads=${THREADS:-2}
    # on the GPU the study fits a call of ten minutes (tests/gpu/plan.sh):
    # report what ended by eight
    export POLL=${POLL:-5} DEADLINE=${DEADLINE:-480}
else
    BIN=${COD_BIN:-bin}
    [ -x "$BIN/cod-worker" ] || make -j2 all >"$d/build.log" 2>&1 ||
        { echo "study: build failed (see $d/build.log)" >&2; exit 1; }
    [ -f var/data/default-bytes/meta.json ] || CORPUS_TOKENIZERS=bytes scripts/corpus.sh
    device=cpu workers=${WORKERS:-2} nice=10 threads=${THREADS:-1}
fi
for p in cod-server cod-worker cod; do
    [ -x "$BIN/$p" ] || { echo "study: $BIN/$p is missing" >&2; exit 1; }
done

pids=() server='' runner='' cutter=''
# the waiting script, then the workers while the server can still take
# back their runs (released, no attempt spent, queued at once for the next
# start), then the server
stop() {
    local p
    [ -z "$cutter" ] || { kill -TERM "$cutter" 2>/dev/null; wait "$cutter" 2>/dev/null; } || true
    [ -z "$runner" ] || { kill -TERM "$runner" 2>/dev/null; wait "$runner" 2>/dev/null; } || true
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    [ -z "$server" ] || { kill -TERM "$server" 2>/dev/null; wait "$server" 2>/dev/null; } || true
    mps_stop
}
trap stop EXIT
trap 'echo "study: stopping (run again to resume)"; exit 130' INT TERM
if [ "$target" = gpu ]; then
    [ "${MPS:-1}" = 0 ] || mps_start "$d" "$BIN" || true
    workers=${WORKERS:-$([ -n "$mps_dir" ] && echo 6 || echo 3)}
fi
rm -f "$d/port"
# the server's data roots: var/data, the bundle's data that var/data links
# to, and the width study's shards wherever WIDTH_DATA puts them
roots=()
for r in var/data "${COD_DATA:-}" "${WIDTH_DATA:-}"; do [ -z "$r" ] || roots+=(--data-root "$r"); done
"$BIN/cod-server" --listen 127.0.0.1:0 --port-file "$d/port" --db "$d/cod.db" \
    "${roots[@]}" --log-requests 0 2>>"$d/server.log" &
server=$!
for _ in $(seq 100); do [ -s "$d/port" ] && break; sleep 0.1; done
[ -s "$d/port" ] || { echo "study: cod-server did not start; see $d/server.log" >&2; exit 1; }
export COD_SERVER=http://127.0.0.1:$(cat "$d/port")
for i in $(seq "$workers"); do
    nice -n "$nice" "$BIN/cod-worker" --server "$COD_SERVER" --device "$device" --threads "$threads" \
        --work-dir "$d/work" --name "study-$target-$i" >>"$d/worker-$i.log" 2>&1 &
    pids+=($!)
done
echo "study: cod-server $COD_SERVER, $workers $device worker(s); logs in $d"
start=$SECONDS
# DEADLINE counts from this script's start, not run.sh's: the MPS probe
# and the server's start come out of it
if [ -n "${DEADLINE:-}" ]; then
    export DEADLINE=$((DEADLINE - SECONDS)) STUDY_CUT=$d/cut
    rm -f "$STUDY_CUT"
    # the cut: every worker signalled at once (one signal: a second would
    # stop their delivery), each stopping its run at the next update and
    # handing it back once its metrics are in; run.sh waits for the file
    (
        end=$((SECONDS + DEADLINE))
        while [ "$SECONDS" -lt "$end" ]; do sleep 1; done
        for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
        for p in "${pids[@]}"; do while kill -0 "$p" 2>/dev/null; do sleep 0.2; done; done
        echo "study: cut at the deadline: the workers stopped, their runs at a checkpoint" > "$STUDY_CUT"
    ) &
    cutter=$!
fi
# in the background, because bash runs a trap only once a foreground
# command has ended: a TERM would otherwise wait for the whole sweep
COD=$BIN/cod "studies/$STUDY/run.sh" "$target" &
runner=$!
wait "$runner"
runner=
echo "study: $(( (SECONDS - start) / 60 )) min"
