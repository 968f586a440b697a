#!/usr/bin/env bash
# cod-server against clients that misbehave at the socket level (docs/api.md):
# an idle connection is closed after --conn-timeout, one address cannot hold
# more than --per-ip-limit connections (an idle one makes room for a new
# one; one inside a request never does), and a body dripped byte by byte is
# cut off with 408 at --request-deadline. Raw sockets through bash's /dev/tcp.
# Headers dribbled past --header-deadline: tests/server_abuse.sh.
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
# three is served a request first: then the server holds all three, kept
# alive and idle. The connection timeout is far off: no connection may close
# by itself here.
start_server --per-ip-limit 3 --conn-timeout 3600
served_on() { # fd: a GET on a kept-alive connection, answered 200
    printf 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' >&"$1" && read -r -t "$WAIT_LIMIT" line <&"$1" && [[ "$line" == "HTTP/1.1 200"* ]] &&
        while read -r -t "$WAIT_LIMIT" line <&"$1" && [ "$line" != $'\r' ]; do :; done && read -r -t "$WAIT_LIMIT" -n 16 line <&"$1"
}
all_served() { served_on 3 && served_on 4 && served_on 5; }
exec 3<>"/dev/tcp/127.0.0.1/$(port)" 4<>"/dev/tcp/127.0.0.1/$(port)" 5<>"/dev/tcp/127.0.0.1/$(port)"
check "three connections from one address, each served" all_served
served() { [ "$(curl -s -m "$WAIT_LIMIT" -o /dev/null -w '%{http_code}' "$B/healthz")" = 200 ]; }
# at the limit, the oldest idle connection makes room: the fourth is served,
# and the first is closed (its read sees the end)
check "a fourth connection is served: an idle one makes room" served
closed() { ! read -r -t "$WAIT_LIMIT" line <&3; }
check "the oldest idle connection was the one closed" closed
exec 3<&- 4<&- 5<&-
# connections inside a request (headers in, the body yet to come) are
# never closed for another: with all three so, a fourth finds no room. The
# server's "100 Continue" says it has read a request's headers.
for fd in 3 4 5; do
    eval "exec $fd<>/dev/tcp/127.0.0.1/$(port)"
    printf 'POST /v1/experiments HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n' >&"$fd"
done
continued() { read -r -t "$WAIT_LIMIT" line <&"$1" && [[ "$line" == "HTTP/1.1 100"* ]]; }
all_continued() { continued 3 && continued 4 && continued 5; }
check "three connections inside a request (each told 100 Continue)" all_continued
refused() {
    curl -s -m "$WAIT_LIMIT" -o /dev/null -w '%{http_code}' "$B/healthz" > "$t/code"
    local rc=$?
    # refused: the connection closed unanswered (52, 56), not served nor left hanging (28)
    [ "$rc" = 52 ] || [ "$rc" = 56 ]
}
check "a fourth connection, with every one inside a request, is refused" refused
exec 3<&- 4<&- 5<&-
check "after they close, the next is served" poll served
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
printf 'POST /v1/experiments HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n' >&3
sent=0
logged_408() { grep -q 'POST /v1/experiments 408' "$t/server.log"; }
drip_until_cut() { logged_408 && return 0; printf ' ' >&3 2>/dev/null || return 0; sent=$((sent + 1)); return 1; }
await "the dripped request to be cut off" drip_until_cut
exec 3<&-
check "dripped body cut off before it completed ($sent of 100000 bytes)" [ "$sent" -lt 100000 ]
check "the server logged it as a 408" poll logged_408
is "nothing was queued by the dripped request" "$(curl -s -m "$WAIT_LIMIT" "$B/v1/experiments" | grep -o '"id":' | wc -l)" 0
is "the server still answers" "$(curl -s -m "$WAIT_LIMIT" -o /dev/null -w '%{http_code}' "$B/healthz")" 200
