#!/usr/bin/env bash
# Parked lease long-polls against the real cod-server: what they cost while
# nothing happens, and what wakes them. A poll parked on an empty queue runs
# no store job between its park and its deadline (a fleet of idle workers
# costs the server nothing); a run's end wakes its own worker's poll at
# once; a cancel of the gang that holds parked workers lets them take the
# next job at once; a submission wakes a few polls of workers that can take
# its jobs, not every parked one; a parked poll whose worker died claims
# nothing. Every wait is for a state seen; the "at
# once" bounds (4 s) tell an answer to the event from the 5 s refresh pass
# that would answer it otherwise.
cd "$(dirname "$0")/.." && . tests/server_helpers.bash
make_data
one_spec() { RES="{\"device\": \"$1\"}" spec "\"name\": \"$2\""; }
jobs_total() { req GET /metrics >/dev/null; grep '^cod_store_jobs_total ' "$t/body" | cut -d' ' -f2; }
jobs_above() { [ "$(jobs_total)" -gt "$1" ]; }
waiting_at_least() { [ "$(curl -s -m "$WAIT_LIMIT" "$B/v1/workers" | grep -o '"waiting":true' | wc -l)" -ge "$1" ]; }
register() { req POST /v1/workers/register "{\"device\": \"$1\", \"capacity\": ${2:-1}}" >/dev/null; jget id; }
# lease_poll WORKER WAIT NAME: a lease long-poll in the background; status and body in $t/NAME.{code,body}, its pid in $!
# (curl itself in the background, so that $! is the connection's process;
# the worker's secret read by a builtin, so that polls start close together)
lease_poll() {
    local sec= s=()
    [ -s "$t/secrets/worker-$1" ] && read -r sec < "$t/secrets/worker-$1" && s=(-H "Cod-Worker-Secret: $sec")
    curl -s -m "$WAIT_LIMIT" -o "$t/$3.body" -w '%{http_code}' -X POST "$B/v1/workers/$1/lease" \
        -H 'Content-Type: application/json' "${s[@]}" --data-binary "{\"wait\": $2}" > "$t/$3.code" &
}
# ms since START (date +%s%N)
since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

# No reaper pass and no lapse during the test: the store's jobs are the
# requests' own.
start_server --lease-seconds 3600 --reap-seconds 3600

# --- idle: N polls of 4 s on an empty queue; each parks after one pass,
# and runs once more at its deadline (a fixed tick would run each 40 times)
N=20
pids=() ws=()
for i in $(seq $N); do ws+=("$(register cuda)"); done
for i in $(seq $N); do
    lease_poll "${ws[i - 1]}" 4 "idle$i"
    pids+=($!)
done
await "the $N polls parked" waiting_at_least $N
parked_metric() { req GET /metrics >/dev/null; grep -q "^cod_longpolls_parked $1\$" "$t/body"; }
await "/metrics to count the $N parked polls" parked_metric $N
j0=$(jobs_total)
wait "${pids[@]}"
j1=$(jobs_total)
is "idle: every poll answered 204 at its deadline" "$(cat "$t"/idle*.code | grep -o 204 | wc -l)" $N
check "idle: /metrics counts no parked poll once they are answered" parked_metric 0
check "idle: $((j1 - j0)) store jobs while $N polls waited (at most 2 a poll)" test $((j1 - j0)) -le $((2 * N))

# --- a run's end frees its worker's one slot: the poll the worker parked
# at capacity takes the next queued job at once
w=$(register cpu 1)
req POST /v1/experiments "$(one_spec cpu first)" >/dev/null
req POST /v1/experiments "$(one_spec cpu second)" >/dev/null; second=$(jget id)
is "the worker's first lease" "$(req POST /v1/workers/$w/lease '{"wait": 0}')" 200
run=$(jget run)
j0=$(jobs_total)
lease_poll "$w" 30 full
p=$!
await "the poll's pass (nothing: the worker is full)" jobs_above "$j0"
start=$(date +%s%N)
is "the run ends (cancelled)" "$(req POST /v1/runs/$run/finish '{"outcome": "cancelled"}')" 200
wait $p
ms=$(since "$start")
check "a run's end: the parked poll takes the next job at once ($ms ms)" \
    bash -c "[ \$(cat '$t/full.code') = 200 ] && grep -q '\"experiment\":$second' '$t/full.body' && [ $ms -lt 4000 ]"

# --- a gang of 3 heads the cuda queue while 3 cuda workers live: the two
# that ask are held (parked) for it; cancelling it lets them take the
# one-GPU job behind it at once
g1=$(register cuda) g2=$(register cuda) g3=$(register cuda)
req POST /v1/experiments "$(TRAIN='{"steps": 10, "seq_len": 16, "batch_seqs": 6, "micro_batch": 2}' \
    RES='{"device": "cuda", "gpus": 3}' spec '"name": "gang"')" >/dev/null; gang=$(jget id)
req POST /v1/experiments "$(one_spec cuda single)" >/dev/null; single=$(jget id)
lease_poll "$g1" 30 held1
p1=$!
lease_poll "$g2" 30 held2
p2=$!
# the idle polls above have answered: the waiting workers now are these two
await "two workers held for the gang" waiting_at_least 2
start=$(date +%s%N)
is "the gang cancelled" "$(req POST /v1/experiments/$gang/cancel)" 202
took_single() { cat "$t/held1.body" "$t/held2.body" 2>/dev/null | grep -q "\"experiment\":$single"; }
await "a held worker to take the one-GPU job" took_single
ms=$(since "$start")
check "cancel: a held worker takes the one-GPU job behind the gang at once ($ms ms)" test "$ms" -lt 4000
# the other is still parked, with nothing left for it: a stopping server answers it
stop_server
wait $p1 $p2
is "cancel: the other held worker is answered 204, and no gang ever formed" \
    "$(cat "$t/held1.code" "$t/held2.code" | grep -o '[0-9]\{3\}' | sort | tr '\n' ' ')" "200 204 "

# --- a submission wakes as many parked polls as it has jobs (and one more),
# of workers that can take them, not every parked poll: 8 cpu and 8 cuda
# workers park; a cpu job is taken by a cpu worker at once, and the polls
# woken for it are counted (two, and one more passed on by the poll that
# took it; every parked poll would be 16). On a server started again: the
# checks above leave nothing queued, and no poll parked.
start_server --lease-seconds 3600 --reap-seconds 3600
woken_total() { req GET /metrics >/dev/null; grep '^cod_longpolls_woken_total ' "$t/body" | cut -d' ' -f2; }
M=8
for kind in cpu cuda; do
    for i in $(seq $M); do
        w=$(register $kind)
        lease_poll "$w" 60 "$kind$i"
    done
done
await "the $((2 * M)) polls parked" parked_metric $((2 * M))
w0=$(woken_total)
start=$(date +%s%N)
req POST /v1/experiments "$(one_spec cpu one)" >/dev/null; one=$(jget id)
took() { cat "$t"/$1*.body 2>/dev/null | grep -q "\"experiment\":$2"; }
await "a cpu worker to take the cpu job" took cpu "$one"
ms=$(since "$start")
check "a cpu job: a parked cpu worker takes it at once ($ms ms)" test "$ms" -lt 4000
await "the others parked again" parked_metric $((2 * M - 1))
w1=$(woken_total)
check "a cpu job: $((w1 - w0)) parked polls woken, none of the $M cuda ones (2 or 3 of $((2 * M)))" \
    test $((w1 - w0)) -ge 2 -a $((w1 - w0)) -le 3
# a sweep of 3 cuda jobs: three cuda workers take them at once, and the
# woken polls are the jobs, one more, and what the takers pass on
w0=$(woken_total)
start=$(date +%s%N)
req POST /v1/sweeps "{\"base\": $(RES='{"device": "cuda"}' spec '"name": "burst"'), \"grid\": {\"train.seed\": [1, 2, 3]}}" >/dev/null
took_cuda() { [ "$(cat "$t"/cuda*.code 2>/dev/null | grep -o 200 | wc -l)" -ge 3 ]; }
await "three cuda workers to take the sweep's three jobs" took_cuda
ms=$(since "$start")
check "a sweep of 3 cuda jobs: three parked cuda workers take them at once ($ms ms)" test "$ms" -lt 4000
await "the rest parked again" parked_metric $((2 * M - 4))
w1=$(woken_total)
check "a sweep of 3 cuda jobs: $((w1 - w0)) parked polls woken (4, and at most 3 passed on, of $((2 * M - 1)))" \
    test $((w1 - w0)) -ge 4 -a $((w1 - w0)) -le 7
stop_server
wait
is "the polls left are answered 204 by the server's stop" \
    "$(cat "$t"/cpu*.code "$t"/cuda*.code | grep -o 204 | wc -l)" $((2 * M - 4))

# --- a parked poll whose worker died (its connection closed) claims
# nothing when woken: the job stays queued for a live worker, no attempt
# spent on nobody (the old server leased it to the dead poll, to lapse)
start_server --lease-seconds 3600 --reap-seconds 3600 --log-requests 1
gone=$(register cpu)
lease_poll "$gone" 60 gone
gp=$!
await "the doomed poll parked" parked_metric 1
kill "$gp"
wait "$gp" 2>/dev/null
req POST /v1/experiments "$(one_spec cpu orphan)" >/dev/null; orphan=$(jget id)
dead_ended() { grep -q "POST /v1/workers/$gone/lease" "$t/server.log"; }
await "the dead worker's poll to end" dead_ended
req GET "/v1/experiments/$orphan" >/dev/null
is "a dead worker's parked poll: the job is still queued" "$(jget state)" queued
live=$(register cpu)
is "a live worker's lease" "$(req POST "/v1/workers/$live/lease" '{"wait": 0}')" 200
is "the live worker takes the job, on its first attempt" "$(jget experiment) $(jget attempt)" "$orphan 1"
stop_server
