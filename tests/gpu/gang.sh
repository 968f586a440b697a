#!/usr/bin/env bash
# Data parallel through the real NCCL path, end to end: cod-server on
# loopback, cod-worker on cuda:0 with --nccl always, so that a one-GPU
# experiment is a gang of one: rank 0 makes the NCCL id, posts it to the
# server's rendezvous, joins an NCCL communicator of one and trains with its
# all-reduces. Passes when the experiment succeeds through
# that path and its loss curve equals cod-train's plain run of the same spec
# (no communicator) within 0.1% on average. Where the machine has two GPUs
# or more, a gang of two (a cod-worker on each of cuda:0 and cuda:1, the
# experiment asking gpus 2) must give the one-GPU curve within 1% (the two
# ranks sum their gradients in another order). NCCL refuses two ranks on one
# GPU, so one GPU shows the gang of one only. Run from tests/gpu/run.sh.
#
# What it has met on GPU machines, and what keeps each from failing it
# again: the machine's curl loading the bundle's libcurl (2026-11-26, H200:
# the submission failed) — the experiments go through the bundle's own
# `cod`, as the studies' do, and no machine tool but the shell's is used;
# NCCL choosing a network interface a VM has but cannot use for its
# bootstrap — every rank here is on this machine, so NCCL_SOCKET_IFNAME
# defaults to the loopback and InfiniBand is not looked for; a worker that
# never got its job waiting until the check's own limit — it is stopped
# before the check's time ends, and the state the server saw is reported;
# NCCL missing or refused — said first, by the library's path, and
# NCCL_DEBUG=WARN puts NCCL's own reason in the worker's log, whose end is
# shown when the gang fails. GANG_STEPS: the updates of each run (default
# 60; a dry run on the emulator takes fewer: tests/gpu_plan.sh).
cd "$(dirname "$0")/../.." && . tests/lib.sh
: "${COD_BIN:?run from tests/gpu/run.sh}"
t=${GPU_LOGS:-build/gpu/logs}/gang
steps=${GANG_STEPS:-60}
rm -rf "$t"
mkdir -p "$t"
spec() { # gpus
    cat <<SPEC
{"name": "gang-of-$1", "model": "llama-9m", "norm": "pre",
 "data": {"train": "$COD_DATA/gpu-bytes/train_*.bin", "val": "$COD_DATA/gpu-bytes/val_*.bin"},
 "train": {"steps": $steps, "seq_len": 128, "batch_seqs": 32, "micro_batch": 16, "warmup": $((steps / 10 > 0 ? steps / 10 : 1)), "clip": 1.0},
 "eval": {"every": 30, "tokens": 16384}, "stats": {"every": 0}, "checkpoint": {"every": 0},
 "resources": {"device": "cuda", "gpus": $1}}
SPEC
}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo} NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-1} \
    NCCL_DEBUG=${NCCL_DEBUG:-WARN}
# the seconds a worker may take: what the check has left (tests/gpu/run.sh's
# CHECKS_UNTIL, else its 240 s limit), less a margin for the report
worker_limit() {
    local left=$((${CHECKS_UNTIL:-$(($(date +%s) + ${CHECK_TIMEOUT:-240}))} - $(date +%s) - 15))
    echo $((left < 10 ? 10 : left))
}
# the NCCL that cod-worker will open (libnccl.so.2 on the loader's path), by its file
nccl=
for d in ${LD_LIBRARY_PATH//:/ } /usr/local/cuda/lib64; do
    [ -e "$d/libnccl.so.2" ] && { nccl=$d/libnccl.so.2; break; }
done
echo "  NCCL: ${nccl:-not on LD_LIBRARY_PATH (cod-worker asks the loader)}; NCCL_SOCKET_IFNAME=$NCCL_SOCKET_IFNAME"
"$COD_BIN/cod-server" --listen 127.0.0.1:0 --db "$t/cod.db" --port-file "$t/port" \
    --data-root "$COD_DATA" --lease-seconds 60 --log-requests 0 2> "$t/server.log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
await "cod-server's port file" test -s "$t/port" || exit 1
B=http://127.0.0.1:$(cat "$t/port")
cod() { "$COD_BIN/cod" --server "$B" --timeout 10 "$@"; }
state_of() { cod --json show "$1" 2>/dev/null | grep -o '"state": *"[a-z]*"' | head -1 | grep -o '[a-z]*"$' | tr -d '"'; }
submit() { # gpus: the experiment's id
    spec "$1" > "$t/spec-submit$1.json"
    cod --json submit "$t/spec-submit$1.json" 2> "$t/submit$1.err" | grep -o '"id": *[0-9]*' | head -1 | grep -o '[0-9]*$'
}
# a worker that failed: its log's end, and the server's view
tell() { # log
    echo "  the experiment is $(state_of "$e1"); the end of $(basename "$1"):"
    tail -n 15 "$1" | sed 's/^/    /'
}
points() { grep '"name": "train/loss"' "$1" 2>/dev/null | sed 's/.*"step": \([0-9]*\).*"value": \([^,}]*\).*/\1 \2/'; }
# mean |a - b| over mean a, of two "step value" files of the same steps, under a limit in %
close() { # a b limit_percent label
    paste -d' ' "$1" "$2" | awk -v lim="$3" -v label="$4" -v steps="$steps" '
        $1 != $3 { bad = 1 }
        { d = $4 - $2; if (d < 0) d = -d; s += d; c += $2 }
        END { printf "  %s: %d steps, mean |diff| / mean loss = %.4f%%\n", label, NR, 100 * s / c
              exit bad || NR != steps || !(100 * s / c < lim) }'
}

# the plain run: no communicator
spec 1 > "$t/spec1.json"
"$COD_BIN/cod-train" "$t/spec1.json" --out "$t/plain" --device cuda:0 > "$t/plain.log" 2>&1
check "the plain run on cuda:0" test $? -eq 0
points "$t/plain/metrics.jsonl" > "$t/plain.loss"

# the gang of one, through the server and NCCL
e1=$(submit 1)
# without an experiment the worker would wait for one until the check's time ran out
check "the experiment was submitted (id ${e1:-none})" test -n "$e1"
[ -n "$e1" ] || { sed 's/^/  /' "$t/submit1.err"; exit 1; }
timeout -k 5 "$(worker_limit)" "$COD_BIN/cod-worker" --server "$B" --device cuda:0 --nccl always \
    --max-jobs 1 --wait 5 --work-dir "$t/w0" > "$t/worker1.log" 2>&1
rc=$?
why=
[ "$rc" = 124 ] && why=", stopped at the check's time"
check "cod-worker --nccl always ran its job (exit $rc$why)" test $rc -eq 0
check "the gang of one met at the server's rendezvous and joined NCCL" \
    grep -q 'rank 0 of 1: rendezvous done, joining the NCCL communicator' "$t/worker1.log"
is_state=$(state_of "$e1")
check "the experiment succeeded (state $is_state)" test "$is_state" = succeeded
[ "$rc" = 0 ] && [ "$is_state" = succeeded ] || tell "$t/worker1.log"
points "$t/w0/experiments/$e1/metrics.jsonl" > "$t/gang1.loss"
check "the gang of one's loss curve equals the plain run's (within 0.1%)" \
    close "$t/plain.loss" "$t/gang1.loss" 0.1 "gang of one vs plain"

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ "${gpus:-0}" -ge 2 ]; then
    e2=$(submit 2)
    check "the gang of two was submitted (id ${e2:-none})" test -n "$e2"
    [ -n "$e2" ] || exit 1
    limit=$(worker_limit)
    timeout -k 5 "$limit" "$COD_BIN/cod-worker" --server "$B" --device cuda:0 --max-jobs 1 --wait 5 \
        --name g/0 --work-dir "$t/g0" > "$t/rank-a.log" 2>&1 &
    a=$!
    timeout -k 5 "$limit" "$COD_BIN/cod-worker" --server "$B" --device cuda:1 --max-jobs 1 --wait 5 \
        --name g/1 --work-dir "$t/g1" > "$t/rank-b.log" 2>&1
    wait $a
    is_state=$(state_of "$e2")
    check "a gang of two on cuda:0 and cuda:1 succeeded (state $is_state)" test "$is_state" = succeeded
    m=$(ls "$t"/g?/experiments/"$e2"/metrics.jsonl 2>/dev/null | head -1)
    points "${m:-/dev/null}" > "$t/gang2.loss"
    check "the gang of two's loss curve equals one GPU's (within 1%)" \
        close "$t/plain.loss" "$t/gang2.loss" 1 "gang of two vs one GPU"
else
    echo "  one GPU here: the gang of two needs two (not run)"
fi
