#!/usr/bin/env bash
# cod-server against clients that misbehave at the socket level (docs/api.md):
# an idle connection is closed after --conn-timeout, one address cannot hold
# more than --per-ip-limit connections, and a body dripped byte by byte is
# cut off with 408 at --request-deadline. Raw sockets through bash's /dev/tcp.
cd "$(dirname "$0")/.."
. tests/server_helpers.bash
port() { echo "${B##*:}"; }

# --- an idle connection is closed by the server
start_server --conn-timeout 1
exec 3<>"/dev/tcp/127.0.0.1/$(port)"
start=$SECONDS
timeout 10 cat <&3 >/dev/null
took=$((SECONDS - start))
exec 3<&-
check "idle connection closed after --conn-timeout 1 (${took}s)" [ "$took" -le 4 ]
stop_server

# --- at most --per-ip-limit connections from one address
start_server --per-ip-limit 3 --conn-timeout 30
exec 3<>"/dev/tcp/127.0.0.1/$(port)" 4<>"/dev/tcp/127.0.0.1/$(port)" 5<>"/dev/tcp/127.0.0.1/$(port)"
sleep 0.3 # the server has accepted all three
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$B/healthz"); rc=$?
check "a fourth connection from the address is refused (curl exit $rc)" [ "$rc" -ne 0 ]
exec 5<&-
sleep 0.3
is "after one closes, the next is served" "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$B/healthz")" 200
exec 3<&- 4<&-
stop_server

# --- a body dripped slower than --request-deadline allows is cut off. The
# server answers 408 in its log; libmicrohttpd will not send a reply before
# the body is complete, so the client sees the connection closed.
trap '' PIPE # a write to the closed socket fails instead of killing the test
start_server --request-deadline 1 --conn-timeout 30
exec 3<>"/dev/tcp/127.0.0.1/$(port)"
printf 'POST /v1/experiments HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n' >&3
start=$SECONDS sent=0
for _ in $(seq 50); do printf ' ' >&3 2>/dev/null || break; sent=$((sent + 1)); sleep 0.2; done
took=$((SECONDS - start))
exec 3<&-
check "dripped body cut off before it completed ($sent of 100 bytes, ${took}s)" bash -c "[ $sent -lt 50 ] && [ $took -le 4 ]"
check "the server logged it as a 408" grep -q 'POST /v1/experiments 408' "$t/server.log"
is "nothing was queued by the dripped request" "$(curl -s "$B/v1/experiments" | grep -o '"id":' | wc -l)" 0
is "the server still answers" "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$B/healthz")" 200
