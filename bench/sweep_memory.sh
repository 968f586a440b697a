#!/usr/bin/env bash
# A real cod-server's memory around six 4 MiB sweep bodies sent at once,
# each a grid of ~290,000 one-value keys (refused, 422: over
# --max-sweep-axes): its resident set before, after, and at its peak. Each
# body parsed as JSON takes several times its size on one of many threads'
# malloc arenas; six such requests once left the server at 1.3 GB.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/server.bash
sd=$(mktemp -d /tmp/cod-bench-sweep-XXXXXX)
trap 'rm -rf "$sd"' EXIT
awk 'BEGIN { printf "{\"base\": {}, \"grid\": {"; n = 15
             for (i = 0; n < 4194000; i++) { s = sprintf("%s\"a%d\": [0]", i ? "," : "", i); n += length(s); printf "%s", s }
             print "}}" }' > "$sd/wide.json"
keys=$(grep -o '"a[0-9]*"' "$sd/wide.json" | wc -l)
# requests logged: a request's line says its memory was given back
server_up --log-requests 1
rss() { awk "/^$1:/ {print int(\$2 / 1024)}" "/proc/$spid/status"; }
before=$(rss VmRSS)
pids=()
for i in 1 2 3 4 5 6; do
    curl -s -o /dev/null -w '%{http_code}\n' -X POST "http://127.0.0.1:$port/v1/sweeps" \
        -H 'Content-Type: application/json' --data-binary @"$sd/wide.json" > "$sd/code.$i" &
    pids+=($!)
done
wait "${pids[@]}"
# each refusal's log line is the event; a server that exits first is a failure
until [ "$(grep -c 'POST /v1/sweeps 422' "$sd/server.log")" = 6 ]; do
    kill -0 "$spid" 2>/dev/null || { echo "bench: cod-server exited:" >&2; tail -5 "$sd/server.log" >&2; exit 1; }
    sleep 0.05
done
after=$(rss VmRSS) peak=$(rss VmHWM)
echo "six 4 MiB sweep bodies of $keys one-value grid keys at once (answered $(sort -u "$sd"/code.* | paste -sd,)):" \
    "RSS ${before} MB before, ${after} MB after, ${peak} MB at the peak"
server_down
