#!/usr/bin/env bash
# Worker states as the server tells them (GET /v1/workers, /metrics, cod
# workers): a worker polling for work is idle; one stopped with SIGTERM says
# so and is offline; one killed with -9 is lost once it has not called for
# longer than a lease; an operator removes the gone ones (never one still
# there), and a removed worker that calls again registers anew.
cd "$(dirname "$0")/.."
. tests/worker_helpers.bash
make_data
# A worker is lost once silent for longer than a lease: LEASE is the wait
# for it, and a live worker (polling every second) shows lost only on a
# machine hung for that long.
LEASE=10
start_server --lease-seconds $LEASE
COD=(bin/cod --server "$B")
wid() { grep -o 'registered as worker [0-9]*' "$t/worker-$1.log" | tail -1 | cut -d' ' -f4; }
registered() { [ -n "$(wid "$1")" ]; }
state_of() { get /v1/workers | js "(j.workers.find(w => w.id === $1) || {state: 'absent'}).state"; }
worker_is() { [ "$(state_of "$1")" = "$2" ]; }
gauge() { get /metrics | grep "^cod_workers{state=\"$1\"}" | cut -d' ' -f2; }

for w in a b c; do start_worker "$w" --wait 1; done
for w in a b c; do await "worker $w to register" registered "$w"; done
a=$(wid a) b=$(wid b) c=$(wid c)
is "three workers polling for work are idle" "$(state_of "$a") $(state_of "$b") $(state_of "$c")" "idle idle idle"

kill -TERM "${WPID[a]}"; wait "${WPID[a]}"
is "SIGTERM: the worker says it stops and shows offline at once" "$(state_of "$a")" offline
kill -9 "${WPID[b]}"; wait "${WPID[b]}" 2>/dev/null
# b's state and silence as each answer gives them, "state age" a line
b_lost() {
    get /v1/workers | js "(w => w.state + ' ' + w.heartbeat_age_s)(j.workers.find(w => w.id === $b))" >>"$t/b.seen"
    tail -1 "$t/b.seen" | grep -q '^lost '
}
check "kill -9: the worker is lost once silent for longer than a lease ($LEASE s)" poll b_lost
check "kill -9: every answer on the way said lost exactly when b had been silent longer than a lease ($(wc -l <"$t/b.seen") answers)" \
    awk -v lease=$LEASE '($1 == "lost") != ($2 > lease) { bad = 1 } END { exit bad }' "$t/b.seen"
is "/metrics counts each state" "$(gauge idle) $(gauge busy) $(gauge lost) $(gauge offline)" "1 0 1 1"
"${COD[@]}" workers >"$t/out"
check "cod workers shows them" bash -c "grep -q '^ *$a  *a  *cpu .* offline ' '$t/out' && grep -q '^ *$b  *b  *cpu .* lost ' '$t/out' && grep -q '^ *$c  *c  *cpu .* idle ' '$t/out'"

# removal: only of a worker that is gone
code=$(req DELETE "/v1/workers/$c")
check "removing an idle worker: 409, saying why" bash -c "[ $code = 409 ] && grep -q 'worker $c is idle' '$t/body'"
"${COD[@]}" workers rm "$a" >"$t/out" 2>&1
is "cod workers rm: an offline worker" "$(cat "$t/out")" "worker $a removed"
"${COD[@]}" workers rm "$a" >"$t/out" 2>&1; rc=$?
check "cod workers rm again: exit 1, no such worker" bash -c "[ $rc = 1 ] && grep -q 'no such worker' '$t/out'"
"${COD[@]}" workers rm x >"$t/out" 2>&1; rc=$?
check "cod workers rm x: exit 2" bash -c "[ $rc = 2 ] && grep -q '\"x\" is not a worker id' '$t/out'"
"${COD[@]}" workers prune >"$t/out" 2>&1
is "cod workers prune: the lost one, not the idle one" "$(cat "$t/out")" "$(printf 'worker %s removed\n1 worker removed' "$b")"
is "removed workers are no longer listed" "$(get /v1/workers | js "j.workers.map(w => w.id).join(' ')")" "$c"
is "/metrics: only the idle one left" "$(gauge idle) $(gauge lost) $(gauge offline)" "1 0 0"

# a worker that was frozen long enough to be lost and removed registers anew when it wakes
kill -STOP "${WPID[c]}"
check "a frozen worker is lost" poll worker_is "$c" lost
is "and can be removed" "$(req DELETE "/v1/workers/$c")" 200
kill -CONT "${WPID[c]}"
again() { [ "$(grep -c 'registered as worker' "$t/worker-c.log")" = 2 ]; }
check "woken, it finds itself unknown and registers again" poll again
check "the new registration is idle" poll worker_is "$(wid c)" idle
