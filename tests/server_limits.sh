#!/usr/bin/env bash
# cod-server against clients that misbehave at the socket level (docs/api.md):
# an idle connection is closed after --conn-timeout, one address cannot hold
# more than --per-ip-limit connections, and a body dripped byte by byte is
# cut off with 408 at --request-deadline. Raw sockets through bash's /dev/tcp.
cd "$(dirname "$0")/.."
. tests/server_helpers.bash
port() { echo "${B##*:}"; }

# --- an idle connection is closed by the server: cat sees the end of it
# (WAIT_LIMIT only stops a cat the server never answers)
start_server --conn-timeout 1
exec 3<>"/dev/tcp/127.0.0.1/$(port)"
start=$(date +%s%N)
timeout "$WAIT_LIMIT" cat <&3 >/dev/null
rc=$? ms=$(( ($(date +%s%N) - start) / 1000000 ))
exec 3<&-
check "idle connection closed by the server after --conn-timeout 1 (${ms} ms)" [ "$rc" -eq 0 ]
stop_server

# --- at most --per-ip-limit connections from one address. Each of the
# three is served a request first: then the server holds all three. The
# connection timeout is far off: no connection may close by itself here.
start_server --per-ip-limit 3 --conn-timeout 3600
served_on() { # fd: a GET on a kept-alive connection, answered 200
    printf 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n' >&"$1" && read -r -t "$WAIT_LIMIT" line <&"$1" && [[ "$line" == "HTTP/1.1 200"* ]]
}
all_served() { served_on 3 && served_on 4 && served_on 5; }
exec 3<>"/dev/tcp/127.0.0.1/$(port)" 4<>"/dev/tcp/127.0.0.1/$(port)" 5<>"/dev/tcp/127.0.0.1/$(port)"
check "three connections from one address, each served" all_served
code=$(curl -s -m "$WAIT_LIMIT" -o /dev/null -w '%{http_code}' "$B/healthz"); rc=$?
# refused: the connection closed unanswered (52, 56), not served nor left hanging (28)
check "a fourth connection from the address is refused (curl exit $rc, status $code)" bash -c "[ $rc = 52 ] || [ $rc = 56 ]"
exec 5<&-
served() { [ "$(curl -s -m "$WAIT_LIMIT" -o /dev/null -w '%{http_code}' "$B/healthz")" = 200 ]; }
check "after one closes, the next is served" poll served
exec 3<&- 4<&-
stop_server

# --- a body dripped past --request-deadline is cut off. The server checks
# the deadline as bytes arrive: the test drips one at a time until it is
# cut off (a write fails, or the 408 is logged), whatever pace the machine
# allows. The server answers 408 in its log; libmicrohttpd will not send a
# reply before the body is complete, so the client sees the connection
# closed.
trap '' PIPE # a write to the closed socket fails instead of killing the test
start_server --request-deadline 1 --conn-timeout 3600
exec 3<>"/dev/tcp/127.0.0.1/$(port)"
printf 'POST /v1/experiments HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n' >&3
sent=0
logged_408() { grep -q 'POST /v1/experiments 408' "$t/server.log"; }
drip_until_cut() { logged_408 && return 0; printf ' ' >&3 2>/dev/null || return 0; sent=$((sent + 1)); return 1; }
await "the dripped request to be cut off" drip_until_cut
exec 3<&-
check "dripped body cut off before it completed ($sent of 100000 bytes)" [ "$sent" -lt 100000 ]
check "the server logged it as a 408" poll logged_408
is "nothing was queued by the dripped request" "$(curl -s -m "$WAIT_LIMIT" "$B/v1/experiments" | grep -o '"id":' | wc -l)" 0
is "the server still answers" "$(curl -s -m "$WAIT_LIMIT" -o /dev/null -w '%{http_code}' "$B/healthz")" 200
