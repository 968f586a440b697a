#!/usr/bin/env bash
# cod-server against a hostile client (docs/api.md, "Threat model"), each
# attack through the real server and its database: a sweep key that would
# cost seconds a level of its depth, cross-site and rebound-name requests,
# headers dribbled to hold every connection slot, data patterns that walk
# the filesystem or read it through errors, sizes with no upper bound,
# bodies that leave memory behind, terminal escapes for the CLI, and a
# malformed Content-Length. The runs' secrets are tests/server_secrets.sh.
# New settings go through the environment (COD_*), as any setting may.
cd "$(dirname "$0")/.." && . tests/server_helpers.bash
make_data
port() { echo "${B##*:}"; }
err_names() { # name, expected status, got status, text the error must contain
    if [ "$3" = "$2" ] && grep -q '"error":{' "$t/body" && grep -qF -- "$4" "$t/body"; then
        echo "PASS $1"; else echo "FAIL $1 (status $3): $(head -c 400 "$t/body")"; fi
}
count() { curl -s -m "$WAIT_LIMIT" "$B/v1/experiments?limit=1000" | grep -o '"id":' | wc -l; }
# the server's CPU time so far, in clock ticks (user + system)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SPID/stat"; }
rss_mb() { awk "/^${1:-VmRSS}:/ {print int(\$2 / 1024)}" "/proc/$SPID/status"; }
# each part on a database of its own
fresh_server() { rm -f "$t"/cod.db*; start_server "$@"; }

# --- 2. browsers: a tokenless server, as "Running a cluster" shows one on
# loopback. A page elsewhere may POST text/plain and read nothing back; a
# rebound name reads everything unless Host is checked.
fresh_server
code=$(curl -s -m "$WAIT_LIMIT" -o "$t/body" -w '%{http_code}' -X POST "$B/v1/experiments" \
    -H 'Content-Type: text/plain' --data-binary "$(spec '"name": "plain"')")
err_names "a POST that is not application/json: 415" 415 "$code" application/json
code=$(curl -s -m "$WAIT_LIMIT" -o "$t/body" -w '%{http_code}' -X POST "$B/v1/experiments" \
    -H 'Origin: http://evil.example' -H 'Content-Type: application/json' --data-binary "$(spec '"name": "evil"')")
err_names "a POST from a foreign Origin: 403" 403 "$code" Origin
code=$(curl -s -m "$WAIT_LIMIT" -o "$t/body" -w '%{http_code}' -X POST "$B/v1/experiments" \
    -H 'Origin: null' -H 'Content-Type: application/json' --data-binary "$(spec '"name": "opaque"')")
err_names "a POST from an opaque Origin (null): 403" 403 "$code" Origin
is "nothing was queued by the cross-site posts" "$(count)" 0
code=$(curl -s -m "$WAIT_LIMIT" -o "$t/body" -w '%{http_code}' "$B/v1/experiments" -H 'Host: evil.example')
err_names "a rebound name (Host evil.example): refused" 421 "$code" Host
code=$(curl -s -m "$WAIT_LIMIT" -o "$t/body" -w '%{http_code}' "$B/v1/experiments" -H "Host: evil.example:$(port)")
err_names "a rebound name with the server's port: refused" 421 "$code" Host
code=$(curl -s -m "$WAIT_LIMIT" -o "$t/body" -w '%{http_code}' -X POST "$B/v1/experiments" \
    -H "Origin: http://127.0.0.1:$(port)" -H 'Content-Type: application/json' --data-binary "$(spec '"name": "own"')")
is "the server's own Origin, as JSON: 201" "$code" 201
is "Host localhost: served" "$(curl -s -m "$WAIT_LIMIT" -o /dev/null -w '%{http_code}' "$B/v1/experiments" -H "Host: localhost:$(port)")" 200
is "Host the listen address: served" "$(curl -s -m "$WAIT_LIMIT" -o /dev/null -w '%{http_code}' "$B/healthz" -H "Host: 127.0.0.1:$(port)")" 200
code=$(curl -s -m "$WAIT_LIMIT" -o "$t/body" -w '%{http_code}' -X POST "$B/v1/experiments/1/cancel" -H 'Origin: http://evil.example')
err_names "a cancel from a foreign Origin: 403" 403 "$code" Origin
is "and the experiment is still queued" "$(curl -s -m "$WAIT_LIMIT" "$B/v1/experiments/1" | grep -o '"state":"[a-z]*"')" '"state":"queued"'
stop_server
COD_ALLOWED_HOSTS=cod.example,lab.example fresh_server
is "a name given with --allowed-hosts: served" "$(curl -s -m "$WAIT_LIMIT" -o /dev/null -w '%{http_code}' "$B/healthz" -H "Host: lab.example:$(port)")" 200
code=$(curl -s -m "$WAIT_LIMIT" -o "$t/body" -w '%{http_code}' -X POST "$B/v1/experiments" \
    -H "Origin: http://cod.example:$(port)" -H "Host: cod.example:$(port)" -H 'Content-Type: application/json' --data-binary "$(spec '"name": "named"')")
is "a POST from that name's own page: 201" "$code" 201
is "another name still refused" "$(curl -s -m "$WAIT_LIMIT" -o /dev/null -w '%{http_code}' "$B/healthz" -H 'Host: evil.example')" 421
stop_server

# --- 3. headers dribbled: a connection that has not sent its headers is
# closed at --header-deadline, and at --per-ip-limit the oldest such makes
# room for a new connection, so workers and the CLI are served while eight
# connections, the limit, keep dribbling and reconnecting.
trap '' PIPE
COD_HEADER_DEADLINE=1 fresh_server --per-ip-limit 8 --conn-timeout 3600 --token T --worker-token W
exec 3<>"/dev/tcp/127.0.0.1/$(port)"
printf 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n' >&3
# one byte at a time, at whatever pace the machine allows, until the server cuts it
dribbled=0
closed_on_it() { printf 'X' >&3 2>/dev/null || return 0; dribbled=$((dribbled + 1)); return 1; }
await "the dribbling connection to be closed by the header deadline" closed_on_it; rc=$?
exec 3>&-
check "a connection dribbling its headers is closed (after $dribbled bytes; --conn-timeout 3600)" test "$rc" = 0
dribbler() { # keeps one connection dribbling, a new one whenever the server closes it
    trap '' PIPE
    while :; do
        exec 4<>"/dev/tcp/127.0.0.1/$1" 2>/dev/null || continue
        printf 'GET /v1/experiments HTTP/1.1\r\nHost: 127.0.0.1\r\n' >&4 2>/dev/null || continue
        echo up >> "$t/ups"
        # the pace of the attack, one byte every 0.2 s, and of its reconnections
        while printf 'X' >&4 2>/dev/null; do sleep 0.2; done
        exec 4>&-
        echo cut >> "$t/cuts"
        sleep 0.2
    done
}
DPIDS=()
for _ in 1 2 3 4 5 6 7 8; do dribbler "$(port)" & DPIDS+=($!); done
export COD_SERVER=$B COD_TOKEN=T
open_conns() { [ "$(wc -l < "$t/ups" 2>/dev/null)" -ge 8 ]; }
await "eight dribbling connections" open_conns
bin/cod ls > "$t/cli.out" 2>&1; rc=$?
check "the CLI is served while eight connections dribble headers (exit $rc: $(head -c 200 "$t/cli.out"))" test "$rc" = 0
req POST /v1/experiments "$(spec '"name": "during"')" -H 'Authorization: Bearer T' > /dev/null; e=$(jget id)
bin/cod-worker --server "$B" --token W --work-dir "$t/work" --threads 1 --name dribbled-on --max-jobs 1 --wait 1 \
    > "$t/worker.log" 2>&1 &
wpid=$!
finished() { bin/cod show "$e" --json 2>/dev/null | grep -q '"state":"succeeded"'; }
await "the worker to run its job while the connections dribble" finished
check "a worker registers, leases, reports and finishes while they dribble" finished
check "the dribbling connections were still at it" test -s "$t/cuts"
for p in "${DPIDS[@]}" "$wpid"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
unset COD_SERVER COD_TOKEN
stop_server
trap - PIPE

# --- 1. a sweep key of 80,000 dots: checked as it is read, in linear time
# (the server's CPU, not the wall clock: the machine is shared)
fresh_server
dots=$(head -c 80000 /dev/zero | tr '\0' .)
printf '{"base": {}, "grid": {"%s": [0]}}' "$dots" > "$t/dots.json"
c0=$(cpu_ticks)
code=$(curl -s -m "$WAIT_LIMIT" -o "$t/body" -w '%{http_code}' -X POST "$B/v1/sweeps" \
    -H 'Content-Type: application/json' --data-binary @"$t/dots.json")
c1=$(cpu_ticks)
err_names "an 80,000-dot grid key: 422" 422 "$code" '"field":"grid.'
check "an 80,000-dot grid key costs the server under 0.5 s of CPU ($((c1 - c0)) ticks)" \
    [ $((c1 - c0)) -lt $(($(getconf CLK_TCK) / 2)) ]
# axes bounded (--max-sweep-axes), so that 64 such requests hold nothing
awk 'BEGIN { printf "{\"base\": {}, \"grid\": {"; for (i = 0; i < 40; i++) printf "%s\"train.seed%d\": [1]", i ? ", " : "", i; print "}}" }' > "$t/axes.json"
code=$(curl -s -m "$WAIT_LIMIT" -o "$t/body" -w '%{http_code}' -X POST "$B/v1/sweeps" \
    -H 'Content-Type: application/json' --data-binary @"$t/axes.json")
err_names "a grid of 40 axes, over --max-sweep-axes (32): 422 naming grid" 422 "$code" 'max-sweep-axes'

# --- 7. six bodies of 4 MiB, each a grid of ~330,000 one-value axes, at once:
# the memory they took while handled goes back
awk 'BEGIN { printf "{\"base\": {}, \"grid\": {"; n = 15; for (i = 0; n < 4194000; i++) { s = sprintf("%s\"a%d\": [0]", i ? "," : "", i); n += length(s); printf "%s", s }; print "}}" }' > "$t/wide.json"
rss0=$(rss_mb)
logged() { grep -c 'POST /v1/sweeps 422' "$t/server.log"; }
n0=$(logged)
CPIDS=()
for i in 1 2 3 4 5 6; do
    curl -s -m "$WAIT_LIMIT" -o "$t/wide$i" -w '%{http_code}' -X POST "$B/v1/sweeps" \
        -H 'Content-Type: application/json' --data-binary @"$t/wide.json" > "$t/wide$i.code" &
    CPIDS+=($!)
done
wait "${CPIDS[@]}"
# each request's log line comes once its memory is given back
sweeps_logged() { [ "$(logged)" -ge $((n0 + 6)) ]; }
await "the six requests logged" sweeps_logged
codes=$(for f in "$t"/wide?.code; do echo "$(cat "$f")"; done | sort -u | paste -sd' ')
rss1=$(rss_mb)
echo "  RSS: ${rss0} MB before, ${rss1} MB after six 4 MiB sweep bodies of $(grep -o '"a[0-9]*"' "$t/wide.json" | wc -l) axes (peak $(rss_mb VmHWM) MB)"
is "six 4 MiB grids of one-value axes refused (422)" "$codes" 422
check "the server's RSS after them is under 200 MB (${rss1} MB)" test "$rss1" -lt 200
stop_server

# --- 4, 5. data: under the roots (--data-root), globs bounded
# (--max-data-files), symlinks kept inside, errors naming no file outside
mkdir -p "$t/many" "$t/meta"
for i in $(seq -w 1 30); do cp "$t/data/train_000000.bin" "$t/many/train_$i.bin"; done
cp "$t/data/train_000000.bin" "$t/meta/train_000000.bin"
ln -s /etc/passwd "$t/meta/meta.json"
ln -s /etc "$t/data/etc"
ln -s /etc/passwd "$t/data/passwd.bin"
COD_DATA_ROOT=$t:$t/many COD_MAX_DATA_FILES=20 fresh_server
dspec() { printf '{"model": {"dim": 32, "n_layers": 2, "n_heads": 2, "ffn_dim": 64}, "data": {"train": "%s", "val": "%s"}, "train": {"steps": 10, "seq_len": 16, "batch_seqs": 2, "micro_batch": 2}}' "$1" "${2:-$1}"; }
outside() { # name, pattern: refused by the rule, no file outside the roots named, no size told
    local code
    code=$(req POST /v1/experiments "$(dspec "$2")")
    if [ "$code" = 422 ] && grep -q 'data root' "$t/body" && ! grep -q 'bytes\|pam\|passwd:\|shadow\|/usr/bin/[a-z]\|root:\|near' "$t/body"; then
        echo "PASS $1"; else echo "FAIL $1 (status $code): $(head -c 400 "$t/body")"; fi
}
outside "/etc/[p]* is outside the data roots: refused, nothing of /etc told" '/etc/[p]*'
outside "a walk through /proc's roots: refused at once" '/proc/1[0-9]*/root/proc/1[0-9]*/root/usr/bin/*'
outside "a relative path that climbs out of the roots" '../../../../../../../../etc/[p]*'
outside "a symlinked directory inside a root that leads out of it" "$t/data/etc/[p]*"
outside "a symlinked file inside a root that leads out of it" "$t/data/passwd.bin"
outside "meta.json beside the shards, a symlink out of the roots" "$t/meta/train_*.bin"
code=$(req POST /v1/experiments "$(dspec "$t/many/train_*.bin")")
err_names "a glob of 30 files, over --max-data-files 20: 422" 422 "$code" 'max-data-files'
code=$(req POST /v1/experiments "$(dspec "$t/data/train_*.bin")")
is "data under a root: 201" "$code" 201
code=$(req POST /v1/experiments "$(dspec "$t/many/train_0*.bin")")
is "data right in a root, its pattern's folder the root itself: 201" "$code" 201
code=$(req POST /v1/experiments "$(dspec "$t/nothing/x_*.bin")")
err_names "no match under a root: the pattern named" 422 "$code" "no file matches $t/nothing/x_*.bin"
stop_server

# --- 8. sizes: the model's memory at its batch against --max-model-gib,
# names, reasons and log lines bounded, a sweep name that is not one refused
fresh_server
mspec() { printf '{"model": %s, "data": {"train": "%s/data/train_*.bin", "val": "%s/data/train_*.bin"}, "train": {"steps": 10, "seq_len": 16, "batch_seqs": 2, "micro_batch": 2}}' "$1" "$t" "$t"; }
code=$(req POST /v1/experiments "$(mspec '{"dim": 128, "n_layers": 100000, "n_heads": 2, "ffn_dim": 512}')")
err_names "100,000 layers: 422, its parameters and memory told" 422 "$code" 'max-model-gib'
code=$(req POST /v1/experiments "$(mspec '{"dim": 2147483646, "n_layers": 2, "n_heads": 1, "ffn_dim": 64}')")
err_names "a dim of 2^31 - 2: 422 naming the model" 422 "$code" '"field":"model"'
code=$(req POST /v1/experiments "$(mspec '{"dim": 1024, "n_layers": 24, "n_heads": 16, "ffn_dim": 4096}')")
is "a model that fits (350M parameters): 201" "$code" 201
long=$(head -c 3000000 /dev/zero | tr '\0' a)
printf '{"name": "%s", "device": "cpu"}' "$long" > "$t/long-worker.json"
code=$(req POST /v1/workers/register @"$t/long-worker.json")
err_names "a 3 MB worker name: 422" 422 "$code" '"field":"name"'
printf '{"base": %s, "grid": {"norm": ["pre"]}, "name": "%s"}' "$(spec)" "$long" > "$t/long-sweep.json"
code=$(req POST /v1/sweeps @"$t/long-sweep.json")
err_names "a 3 MB sweep name: 422" 422 "$code" '"field":"name"'
code=$(req POST /v1/sweeps "{\"base\": $(spec), \"grid\": {\"norm\": [\"pre\"]}, \"name\": 5}")
err_names "a sweep name that is not a string: 422" 422 "$code" '"field":"name"'
code=$(req POST /v1/experiments "$(spec '"name": "-rf"')")
err_names "a name that a shell reads as flags (-rf): 422" 422 "$code" '"field":"name"'
code=$(req POST /v1/workers/register '{"name": "-rf", "device": "cpu"}')
err_names "a worker named -rf: 422" 422 "$code" '"field":"name"'
code=$(req POST /v1/workers/register '{"name": "x\u001b]0;PWNED\u0007", "device": "cpu"}')
err_names "a worker name with control characters: 422" 422 "$code" '"field":"name"'
req POST /v1/workers/register '{"name": "sizes", "device": "cpu", "capacity": 4}' > /dev/null; w=$(jget id)
req POST /v1/workers/$w/lease '{"wait": 0}' > /dev/null; run=$(jget run)
head -c 20000 /dev/zero | tr '\0' a > "$t/line"
code=$(req POST /v1/runs/$run/logs "{\"logs\": [{\"seq\": 1, \"line\": \"$(cat "$t/line")\"}]}")
err_names "a log line of 20,000 bytes: 422" 422 "$code" '"field":"logs[0].line"'
code=$(req POST /v1/runs/$run/finish "{\"outcome\": \"failed\", \"reason\": \"$(cat "$t/line")\"}")
err_names "a reason of 20,000 bytes: 422" 422 "$code" '"field":"reason"'
stop_server

# --- 9. the CLI prints what others wrote with control characters escaped:
# names (as a database of an earlier server may hold them), a log line, a
# failure reason
fresh_server
req POST /v1/workers/register '{"name": "plain", "device": "cpu", "capacity": 2}' > /dev/null; w=$(jget id)
req POST /v1/experiments "$(spec '"name": "escapes"')" > /dev/null; e=$(jget id)
req POST /v1/workers/$w/lease '{"wait": 0}' > /dev/null; run=$(jget run)
req POST /v1/runs/$run/logs '{"logs": [{"seq": 1, "line": "step 1 \u001b]0;PWNED\u0007\u001b[2J"}]}' > /dev/null
req POST /v1/runs/$run/finish '{"outcome": "failed", "reason": "boom \u001b[2J\u001b]0;PWNED\u0007"}' > /dev/null
esc="'x' || char(27) || ']0;PWNED' || char(7) || char(27) || '[2J'"
sqlite3 "$t/cod.db" "UPDATE workers SET name = $esc WHERE id = $w; UPDATE experiments SET name = $esc WHERE id = $e"
export COD_SERVER=$B
raw() { LC_ALL=C grep -c $'[\x01-\x08\x0b-\x1f\x7f]' "$1"; }
for cmd in "workers" "logs $e" "ls" "show $e"; do
    bin/cod $cmd > "$t/cli.out" 2>&1
    check "cod $cmd: no raw control character, the escape shown ($(raw "$t/cli.out") raw)" \
        bash -c "[ \$(LC_ALL=C grep -c $'[\x01-\x08\x0b-\x1f\x7f]' '$t/cli.out') = 0 ] && grep -qF '\\x1b' '$t/cli.out'"
done
unset COD_SERVER
stop_server

# --- 10. a malformed Content-Length: one answer, its status line once
fresh_server
for cl in -1 18446744073709551617; do
    exec 3<>"/dev/tcp/127.0.0.1/$(port)"
    printf 'POST /v1/experiments HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %s\r\nConnection: close\r\n\r\n{}' "$cl" >&3
    timeout "$WAIT_LIMIT" cat <&3 > "$t/raw"
    exec 3<&-
    check "Content-Length $cl: one status line ($(grep -c '^HTTP/1' "$t/raw"): $(head -1 "$t/raw" | tr -d '\r'))" \
        test "$(grep -c '^HTTP/1' "$t/raw")" = 1
done
stop_server
