#!/usr/bin/env bash
# Gangs against the real cod-server: an experiment with gpus N > 1 is leased
# to N cuda workers at once or to none. Concurrent long-polls never make a
# partial gang or put a worker in two runs; a gang is packed onto the fewest
# hosts; a lapsed rank ends the run for every rank and queues it again; a
# gang that does not rendezvous in time is ended; a gang at the head of the
# queue is not starved by a stream of one-GPU jobs; bad gang specs get 422.
# Simulated workers are curl loops; every wait is for a state seen.
cd "$(dirname "$0")/.." && . tests/server_helpers.bash
make_data
GANG_TRAIN='{"steps": 10, "seq_len": 16, "batch_seqs": 8, "micro_batch": 2}'
gang_spec() { TRAIN=$GANG_TRAIN RES="{\"device\": \"cuda\", \"gpus\": $1}" spec "\"name\": \"$2\""; }
one_spec() { RES='{"device": "cuda"}' spec "\"name\": \"$1\""; }
register() { # name host: prints the worker id
    req POST /v1/workers/register "{\"name\": \"$1\", \"device\": \"cuda\", \"host\": \"$2\"}" >/dev/null
    jget id
}
exp_field() { req GET "/v1/experiments/$1" >/dev/null; jget "$2"; }
# sim_worker ID DIR: long-polls until it holds a lease (its answer in DIR/lease.ID) or DIR/stop exists
sim_worker() {
    local code
    until [ -e "$2/stop" ]; do
        code=$(wcurl -s -m "$WAIT_LIMIT" -o "$2/try.$1" -w '%{http_code}' -X POST "$B/v1/workers/$1/lease" -d '{"wait": 2}')
        if [ "$code" = 200 ]; then mv "$2/try.$1" "$2/lease.$1"; return; fi
        [ "$code" = 204 ] || { echo "lease $code $(cat "$2/try.$1")" >> "$2/bad"; return; }
    done
}
# the leases in DIR checked as gangs: every run whole, ranks 0..N-1, no worker twice
check_gangs() { # DIR expected_runs world
    python3 - "$@" <<'EOF'
import glob, json, sys
d, want_runs, world = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = {}
for f in glob.glob(d + "/lease.*"):
    l = json.load(open(f))
    runs.setdefault(l["run"], []).append((l["rank"], l["world_size"], f.rsplit(".", 1)[1]))
ok = len(runs) == want_runs
for run, m in runs.items():
    ok &= sorted(r for r, _, _ in m) == list(range(world)) and all(w == world for _, w, _ in m)
workers = [w for m in runs.values() for _, _, w in m]
ok &= len(workers) == len(set(workers))
if not ok:
    print(runs, file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
}

# Simulated workers never heartbeat: where a lapse is not the point, leases
# last an hour, so that a slow machine cannot end a run under the test.
LONG=3600

# --- bad gang specs: 422 naming the field, nothing queued
start_server --max-gang 4 --lease-seconds $LONG
code=$(req POST /v1/experiments "$(TRAIN=$GANG_TRAIN RES='{"device": "cpu", "gpus": 2}' spec)")
is "gpus 2 on device cpu: 422 resources.gpus" "$code $(jget field)" "422 resources.gpus"
code=$(req POST /v1/experiments "$(TRAIN=$GANG_TRAIN RES='{"device": "any", "gpus": 2}' spec)")
is "gpus 2 on device any: 422 resources.gpus" "$code $(jget field)" "422 resources.gpus"
code=$(req POST /v1/experiments "$(TRAIN='{"steps": 10, "seq_len": 16, "batch_seqs": 16, "micro_batch": 2}' RES='{"device": "cuda", "gpus": 8}' spec)")
is "gpus above --max-gang: 422 resources.gpus" "$code $(jget field)" "422 resources.gpus"
check "the refusal says the limit" grep -q 'max-gang 4' "$t/body"
code=$(req POST /v1/experiments "$(TRAIN='{"steps": 10, "seq_len": 16, "batch_seqs": 6, "micro_batch": 2}' RES='{"device": "cuda", "gpus": 4}' spec)")
is "batch_seqs not a multiple of gpus x micro_batch: 422 train.batch_seqs" "$code $(jget field)" "422 train.batch_seqs"
req GET /v1/experiments >/dev/null
check "nothing queued by the refusals" grep -q '"experiments":\[\]' "$t/body"

# --- all or nothing under concurrent long-polls: 10 workers, 3 gangs of 4
d=$t/concurrent; mkdir -p "$d"
for i in 1 2 3; do req POST /v1/experiments "$(gang_spec 4 g$i)" >/dev/null; done
ids=(); for i in $(seq 10); do ids+=("$(register w$i host$((i % 3)))"); done
pids=(); for w in "${ids[@]}"; do sim_worker "$w" "$d" & pids+=($!); done
await "8 leases" bash -c "[ \$(ls '$d' | grep -c '^lease') -ge 8 ]"
# the two left over go on asking; a third gang would need four
req GET "/v1/experiments?state=running" >/dev/null
check "two gangs running, the third queued" bash -c "[ \$(grep -o '\"id\":' '$t/body' | wc -l) = 2 ]"
touch "$d/stop"; wait "${pids[@]}"
check "no lease call failed" test ! -s "$d/bad"
check "8 leases: two whole gangs of 4, ranks 0..3, no worker twice" check_gangs "$d" 2 4
req GET /v1/workers >/dev/null
check "the workers list says the host" grep -q '"host":"host1"' "$t/body"
stop_server

# --- packing: the gang goes to the host with the most waiting workers
rm -f "$t"/cod.db*
start_server --lease-seconds $LONG
d=$t/packing; mkdir -p "$d"
a=(); for i in 1 2; do a+=("$(register a/$i a)"); done
b=(); for i in 1 2 3 4; do b+=("$(register b/$i b)"); done
pids=(); for w in "${a[@]}" "${b[@]}"; do sim_worker "$w" "$d" & pids+=($!); done
# every worker parked in its long-poll before the gang exists
await "all six workers parked" bash -c "[ \$(curl -s '$B/v1/workers' | grep -o '\"waiting\":true' | wc -l) = 6 ]"
req POST /v1/experiments "$(gang_spec 4 packed)" >/dev/null
await "4 leases" bash -c "[ \$(ls '$d' | grep -c '^lease') -ge 4 ]"
touch "$d/stop"; wait "${pids[@]}"
got=$(for w in "${b[@]}"; do [ -e "$d/lease.$w" ] && echo "$w"; done | wc -l)
is "a gang of 4 packed onto host b, which has 4" "$got $(ls "$d" | grep -c '^lease')" "4 4"
stop_server

# --- a lapsed rank ends the run for every rank and requeues it
rm -f "$t"/cod.db*
start_server --lease-seconds 1 --reap-seconds 0.1
d=$t/lapse; mkdir -p "$d"
req POST /v1/experiments "$(gang_spec 2 lapse)" >/dev/null; e=$(jget id)
w0=$(register r0 h); w1=$(register r1 h)
sim_worker "$w0" "$d" & p0=$!; sim_worker "$w1" "$d" & p1=$!
wait $p0 $p1
run=$(grep -o '"run":[0-9]*' "$d/lease.$w0" | cut -d: -f2)
r0=$(grep -o '"rank":[0-9]*' "$d/lease.$w0" | cut -d: -f2)
# rank r0 heartbeats on, the other rank is silent, until a heartbeat is
# refused. (Were r0's own lease to lapse first on a loaded machine, the run
# would end the same way.)
refused() { hb=$(req POST /v1/runs/$run/heartbeat "{\"step\": 1, \"rank\": $r0}"); [ "$hb" != 200 ]; }
await "a heartbeat of rank $r0 refused" refused
is "the heartbeating rank is told: 409" "$hb" 409
await "the lapsed gang queued again" bash -c "[ \"\$(curl -s '$B/v1/experiments/$e' | grep -o '\"state\":\"[a-z]*\"')\" = '\"state\":\"queued\"' ]"
req GET /v1/experiments/$e >/dev/null
check "requeued with attempts 1, the reason naming the gang" bash -c "grep -q '\"attempts\":1' '$t/body' && grep -q 'ends the gang of 2' '$t/body'"
is "a late finish of the lost run: 409" "$(req POST /v1/runs/$run/finish "{\"outcome\": \"succeeded\", \"rank\": $r0}")" 409
stop_server

# --- rendezvous: rank 0 posts, the others read it; a gang that never meets
# is ended. The gang that meets has all the time it needs: the server ends
# gangs that do not meet in 1 s only once it has been leased.
rm -f "$t"/cod.db*
RDV=(--lease-seconds $LONG --reap-seconds 0.1)
start_server "${RDV[@]}" --rendezvous-seconds $LONG
d=$t/rdv; mkdir -p "$d"
req POST /v1/experiments "$(gang_spec 2 meets)" >/dev/null; em=$(jget id)
req POST /v1/experiments "$(gang_spec 2 never)" >/dev/null; en=$(jget id)
w0=$(register m0 h); w1=$(register m1 h)
sim_worker "$w0" "$d" & p0=$!; sim_worker "$w1" "$d" & p1=$!
wait $p0 $p1
run=$(grep -o '"run":[0-9]*' "$d/lease.$w0" | cut -d: -f2)
wcurl -s -m "$WAIT_LIMIT" -o "$d/rdv" "$B/v1/runs/$run/rendezvous?wait=20" & reader=$!
req POST /v1/runs/$run/rendezvous '{"rank": 0, "id": "bmNjbC1pZA=="}' >/dev/null
wait $reader
check "a waiting rank reads the id rank 0 posted" grep -q '"id":"bmNjbC1pZA=="' "$d/rdv"
is "posting it again is a retry: 200" "$(req POST /v1/runs/$run/rendezvous '{"rank": 0, "id": "bmNjbC1pZA=="}')" 200
is "rank 1 may not post: 422" "$(req POST /v1/runs/$run/rendezvous '{"rank": 1, "id": "eA=="}')" 422
is "an id that is not base64: 422" "$(req POST /v1/runs/$run/rendezvous '{"id": "not base64!"}')" 422
req POST /v1/experiments/$em/cancel >/dev/null
for w in "$w0" "$w1"; do
    r=$(grep -o '"rank":[0-9]*' "$d/lease.$w" | cut -d: -f2)
    req POST /v1/runs/$run/finish "{\"outcome\": \"released\", \"rank\": $r}" >/dev/null
done
rm -f "$d"/lease.*
stop_server
start_server "${RDV[@]}" --rendezvous-seconds 1
sim_worker "$w0" "$d" & p0=$!; sim_worker "$w1" "$d" & p1=$!
wait $p0 $p1
run2=$(grep -o '"run":[0-9]*' "$d/lease.$w0" | cut -d: -f2)
req GET /v1/experiments/$en >/dev/null
check "the second gang leased" test "$(jget run)" = "$run2"
await "the second gang ended for not meeting" bash -c "curl -s '$B/v1/experiments/$en' | grep -q 'did not rendezvous'"
req GET /v1/experiments/$en >/dev/null
check "not met within 1 s: queued again, an attempt spent" bash -c "grep -q '\"state\":\"queued\"' '$t/body' && grep -q '\"attempts\":1' '$t/body'"
is "its rendezvous then: 409" "$(req POST /v1/runs/$run2/rendezvous '{"id": "eA=="}')" 409
stop_server

# --- not starved: a gang of 4 at the head of the queue, one-GPU jobs streaming in
rm -f "$t"/cod.db*
start_server --lease-seconds $LONG
d=$t/starve; mkdir -p "$d"
for i in $(seq 6); do req POST /v1/experiments "$(one_spec before$i)" >/dev/null; done
req POST /v1/experiments "$(gang_spec 4 head)" >/dev/null; eh=$(jget id)
# four workers that run one-GPU jobs at once (finish at once) and stop when they hold a gang rank
busy_worker() { # id
    local code run exp
    until [ -e "$d/stop" ]; do
        code=$(wcurl -s -m "$WAIT_LIMIT" -o "$d/l.$1" -w '%{http_code}' -X POST "$B/v1/workers/$1/lease" -d '{"wait": 2}')
        [ "$code" = 200 ] || continue
        if grep -q '"world_size":4' "$d/l.$1"; then mv "$d/l.$1" "$d/lease.$1"; return; fi
        run=$(grep -o '"run":[0-9]*' "$d/l.$1" | cut -d: -f2)
        exp=$(grep -o '"experiment":[0-9]*' "$d/l.$1" | cut -d: -f2)
        echo "$exp" >> "$d/ran"
        wcurl -s -m "$WAIT_LIMIT" -o /dev/null -X POST "$B/v1/runs/$run/finish" -d '{"outcome": "failed", "reason": "simulated"}'
    done
}
streamer() { local i=0; until [ -e "$d/stop" ]; do i=$((i + 1)); wcurl -s -m "$WAIT_LIMIT" -o /dev/null -X POST "$B/v1/experiments" --data-binary "$(one_spec after$i)"; done; }
streamer & sp=$!
pids=(); for i in 1 2 3 4; do w=$(register s$i h$i); busy_worker "$w" & pids+=($!); done
await "the gang of 4 leased" bash -c "[ \$(ls '$d' | grep -c '^lease') = 4 ]"
touch "$d/stop"; wait "${pids[@]}" "$sp"
is "the gang of 4 leased while one-GPU jobs kept coming" "$(ls "$d" | grep -c '^lease')" 4
check "no one-GPU job queued after the gang ran before it" bash -c "[ -z \"\$(awk '\$1 > $eh' '$d/ran' 2>/dev/null)\" ]"
check "the ones queued before it did" bash -c "[ \$(sort -u '$d/ran' | wc -l) = 6 ]"
stop_server
