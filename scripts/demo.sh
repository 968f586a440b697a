#!/usr/bin/env bash
# The main job: the whole system on the embedded default. Fetches and
# tokenizes the default corpus (once), starts cod-server (database
# var/cod.db) and one CPU worker (work dir var/worker), submits a sweep of
# the default model (6 layers, bytes) × {pre, lns, post}, follows it, and
# ends with the comparison: final eval perplexity per variant and the
# per-layer out_var profiles side by side, and what that scale can and
# cannot show. The server keeps running for the dashboard; the script says
# how to stop it.
#
# Ctrl-C stops the worker at a checkpoint; running `make demo` again resumes
# the same sweep where it stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
port=${COD_DEMO_PORT:-8470}
B=http://127.0.0.1:$port
export COD_SERVER=$B
d=var/demo
mkdir -p "$d"

scripts/corpus.sh

# A server from an earlier demo is restarted (same database): the binary may be newer.
if [ -s "$d/server.pid" ] && kill -0 "$(cat "$d/server.pid")" 2>/dev/null; then
    kill -TERM "$(cat "$d/server.pid")"
    for _ in $(seq 100); do kill -0 "$(cat "$d/server.pid")" 2>/dev/null || break; sleep 0.1; done
fi
if curl -s -m 2 "$B/healthz" >/dev/null; then
    echo "demo: port $port is taken by another program; set COD_DEMO_PORT to a free port" >&2
    exit 1
fi
# Own sessions (setsid): a Ctrl-C on the terminal reaches only this script,
# which stops the worker with exactly one signal (a second would make it
# abandon delivery) and leaves the server up.
setsid bin/cod-server --listen "127.0.0.1:$port" --db var/cod.db 2>>"$d/server.log" &
echo $! >"$d/server.pid"
for _ in $(seq 100); do curl -s -m 1 "$B/healthz" >/dev/null && break; sleep 0.1; done
curl -s -m 1 "$B/healthz" >/dev/null || { echo "demo: cod-server did not start; see $d/server.log" >&2; exit 1; }

setsid bin/cod-worker --server "$B" --work-dir var/worker --name demo-cpu >>"$d/worker.log" 2>&1 &
worker=$!
stop_worker() {
    kill -TERM "$worker" 2>/dev/null || return 0
    wait "$worker" 2>/dev/null || true
}
trap 'echo; echo "demo: stopping the worker at a checkpoint; make demo resumes the sweep"; stop_worker; exit 130' INT TERM
trap stop_worker EXIT

# The sweep of an interrupted demo is resumed rather than queued again.
sid=
if [ -s "$d/sweep.id" ] &&
    bin/cod ls --sweep "$(cat "$d/sweep.id")" --json 2>/dev/null | grep -q '"state":"\(queued\|running\)"'; then
    sid=$(cat "$d/sweep.id")
    echo "demo: resuming sweep $sid"
else
    bin/cod-train default --print-spec >"$d/base.json"
    sid=$(bin/cod sweep "$d/base.json" --name demo --grid norm=pre,lns,post --json |
        grep -o '"id":[0-9]*' | head -1 | cut -d: -f2)
    echo "$sid" >"$d/sweep.id"
    echo "demo: queued sweep $sid: the default model × norm = pre, lns, post (about 3 minutes each on 2 cores)"
fi
echo "demo: dashboard $B/ · worker log $d/worker.log"
echo
ids=$(bin/cod ls --sweep "$sid" --json | grep -o '"id":[0-9]*,"name"' | cut -d: -f2 | cut -d, -f1 | sort -n)
for id in $ids; do
    norm=$(bin/cod show "$id" --json | grep -o '"norm":"[a-z_]*"' | head -1 | cut -d'"' -f4)
    echo "experiment $id: norm $norm"
    bin/cod watch "$id" || true
done
stop_worker
trap - EXIT INT TERM
echo
bin/cod compare --sweep "$sid"
# What a reader may and may not take from the table above: one seed of a
# few hundred updates says nothing of which norm is better, whichever way
# it came out, and the depth study's seeds are what does
json=$(bin/cod compare --sweep "$sid" --json) || json=
ppl() { # norm: its eval/ppl in the sweep's JSON, nothing where it did not succeed
    printf '%s\n' "$json" |
        grep -o "\"norm\":\"$1\",\"state\":\"succeeded\",\"step\":[0-9]*,\"eval/ppl\":[0-9.e+-]*" |
        head -1 | sed 's/.*://' || true
}
pre=$(ppl pre) lns=$(ppl lns)
if [ -n "$pre" ] && [ -n "$lns" ]; then
    here=$(awk -v p="$pre" -v l="$lns" 'BEGIN {
        printf "Here LNS ended %.3f %s Pre-LN (%.3f against %.3f): one seed of a\nshort run, which cannot say which norm trains better.", \
            (l < p ? p - l : l - p), (l < p ? "below" : "above"), l, p }')
else
    here="Here Pre-LN or LNS did not finish: there is nothing to compare."
fi
cat <<EOF

What this scale shows: Pre-LN's out_var grows block after block and LNS
holds it flatter, the variance half of the Curse of Depth.
$here
The depth study (studies/depth, bench/RESULTS.md), three seeds at width
64, found LNS behind Pre-LN beyond the seed noise at 24 and 48 layers
(unresolved at 6 and 12), and LNS's damped deep blocks, not Pre-LN's, the
idle ones.

demo: the server keeps running (pid $(cat "$d/server.pid")):
  dashboard   $B/
  API         $B/v1/experiments   ·   $B/v1/sweeps/$sid
  CLI         bin/cod ls · bin/cod compare --sweep $sid · bin/cod report --sweep $sid · bin/cod metrics ID
  stop it     kill $(cat "$d/server.pid")
EOF
