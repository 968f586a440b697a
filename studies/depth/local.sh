#!/usr/bin/env bash
# The depth study in one command on this machine: starts a cod-server (its
# own database, var/study-depth-TARGET/cod.db, so the study stands apart
# from the demo's) and workers, runs studies/depth/run.sh TARGET (submit,
# wait, report), then stops them. Run again after a stop, it resumes: the
# same database, the same sweep, workers resuming from their checkpoints.
#   studies/depth/local.sh cpu   WORKERS CPU workers (default 2) of THREADS
#                                OpenMP threads each (default 1), at nice 10
#   studies/depth/local.sh gpu   WORKERS cuda:0 workers (default 3: models
#                                this small leave the GPU idle between
#                                launches, which the other runs fill), from
#                                the GPU bundle (.gpu/bundle.tar.xz, made by
#                                tests/gpu/bundle.sh) when there is one, else
#                                built here (nvcc and the corpus needed)
# COD_BIN names the directory of cod-server, cod-worker and cod (default
# bin/, or the bundle's); STUDY_DIR the study's state: its database, the
# logs, the workers' checkpoints (default var/study-depth-TARGET). Stopped
# by a signal (INT, TERM), it stops the workers, whose runs go back to the
# queue, then the server, and exits 130.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${1:-}
[ "$target" = cpu ] || [ "$target" = gpu ] || { echo "usage: studies/depth/local.sh cpu|gpu" >&2; exit 2; }
d=${STUDY_DIR:-var/study-depth-$target}
mkdir -p "$d"
d=$(cd "$d" && pwd)
if [ "$target" = gpu ]; then
    # the machine's CUDA libraries on LD_LIBRARY_PATH, and the bundle unpacked
    . tests/gpu/bundle_env.sh
    gpu_env_setup "$d" || exit 1
    if [ -f .gpu/bundle.tar.xz ]; then
        BIN=${COD_BIN_STUDY:-$COD_BIN}
        # the base spec names var/data/default-bytes, which the bundle carries
        [ -e var/data/default-bytes ] || { mkdir -p var/data && ln -s "$COD_DATA/default-bytes" var/data/default-bytes; }
    else
        BIN=bin
        make -j"$(nproc)" all >"$d/build.log" 2>&1 || { echo "study: build failed (see $d/build.log)" >&2; exit 1; }
    fi
    device=cuda:0 workers=${WORKERS:-3} nice=0 threads=${THREADS:-4}
    # a lent machine answers within ten minutes: report what ended by eight
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

pids=() server='' runner=''
# the waiting script, then the workers while the server can still take
# back their runs (released, no attempt spent, queued at once for the next
# start), then the server
stop() {
    local p
    [ -z "$runner" ] || { kill -TERM "$runner" 2>/dev/null; wait "$runner" 2>/dev/null; } || true
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    [ -z "$server" ] || { kill -TERM "$server" 2>/dev/null; wait "$server" 2>/dev/null; } || true
}
trap stop EXIT
trap 'echo "study: stopping (run again to resume)"; exit 130' INT TERM
rm -f "$d/port"
"$BIN/cod-server" --listen 127.0.0.1:0 --port-file "$d/port" --db "$d/cod.db" \
    --log-requests 0 2>>"$d/server.log" &
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
# in the background, because bash runs a trap only once a foreground
# command has ended: a TERM would otherwise wait for the whole sweep
COD=$BIN/cod studies/depth/run.sh "$target" &
runner=$!
wait "$runner"
runner=
echo "study: $(( (SECONDS - start) / 60 )) min"
