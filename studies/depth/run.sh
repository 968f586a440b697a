#!/usr/bin/env bash
# The depth study against a running cod-server ($COD_SERVER, default
# http://127.0.0.1:8470): submits the sweep base-TARGET.json × the grid
# below (the same Idempotency-Key each time, so a second run follows the
# sweep the first one queued), waits until every cell has ended, and writes
# the sweep's report (report.html and its CSV files, and report.png, a
# screenshot, where Chromium is) into studies/depth/TARGET/.
#   studies/depth/run.sh cpu|gpu
# COD names the CLI (default bin/cod); COD_TOKEN as for it. POLL: seconds
# between looks at the sweep (default 30). DEADLINE: seconds after which it
# stops waiting and reports what has ended (the rest counted unfinished),
# for a machine held for a fixed time (under local.sh, once it has stopped
# the workers: STUDY_CUT). GRID (words of --grid) and OUT (the
# report's folder) run a follow-up on the same base instead, as its own
# sweep: GRID="train.seed=1,2,3 norm=pre,lns model.n_layers=24 train.steps=3200"
# OUT=studies/depth/cpu-3200 is the longer training of the study's README.
# BASE names another base spec (another study's, which runs its sweeps
# through this script: STUDY names it in the lines it prints).
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${1:-}
[ "$target" = cpu ] || [ "$target" = gpu ] || { echo "usage: studies/depth/run.sh cpu|gpu" >&2; exit 2; }
COD=${COD:-bin/cod}
base=${BASE:-studies/depth/base-$target.json}
study=${STUDY:-depth}
out=${OUT:-studies/depth/$target}
# Seeds outermost: the grid runs one replicate of every cell before the next.
grid=(train.seed=1,2,3 norm=pre,lns,post,mixln model.n_layers=6,12,24,48)
# shellcheck disable=SC2206 # GRID: words, as on a command line
[ -z "${GRID:-}" ] || grid=($GRID)
# A changed base or grid is another sweep, not a replay of the first.
key=$study-$target-$( (cat "$base"; echo "${grid[*]}") | sha256sum | cut -c1-16)
sid=$("$COD" sweep "$base" --grid "${grid[@]}" --idempotency-key "$key" --json |
    grep -o '"id": *[0-9]*' | head -1 | grep -o '[0-9]*$')
echo "$study study: sweep $sid ($base, ${grid[*]})"
# On the CPU, the whole grid's Post-LN and Mix-LN run one seed: their other
# cells are cancelled while still queued (the report counts them as
# cancelled), which keeps the study to about three hours on two cores. A
# GRID given is run as given.
if [ "$target" = cpu ] && [ -z "${GRID:-}" ]; then
    ids=$("$COD" ls --sweep "$sid" --state queued --all --json |
        grep -o '"id": *[0-9]*, *"name": *"depth-[23]-\(post\|mixln\)-' | grep -o '^"id": *[0-9]*' | grep -o '[0-9]*$' || true)
    # shellcheck disable=SC2086
    [ -z "$ids" ] || "$COD" cancel $ids >/dev/null
fi

# Until no cell is queued or running; a line whenever the counts move.
last=
while :; do
    states=$("$COD" ls --sweep "$sid" --all --json | grep -o '"state": *"[a-z]*"' | grep -o '[a-z]*"$' |
        tr -d '"' | sort | uniq -c | awk '{printf "%s %s  ", $1, $2}')
    if [ "$states" != "$last" ]; then
        echo "[$(date +%H:%M:%S)] $states"
        last=$states
    fi
    case "$states" in *queued* | *running*) ;; *) break ;; esac
    if [ -n "${DEADLINE:-}" ] && [ "$SECONDS" -ge "$DEADLINE" ]; then
        # local.sh stops the workers at the deadline (STUDY_CUT): the report
        # then holds every metric the cut runs reached
        if [ -n "${STUDY_CUT:-}" ]; then
            for _ in $(seq 600); do [ -s "$STUDY_CUT" ] && break; sleep 0.2; done
            cat "$STUDY_CUT" 2>/dev/null || echo "$study study: the workers did not stop in 120 s"
        fi
        echo "$study study: DEADLINE passed with cells unfinished; the report shows what ended"
        break
    fi
    sleep "${POLL:-30}"
done
"$COD" compare --sweep "$sid"
"$COD" report --sweep "$sid" --out "$out"
# a picture of the page for people who will not open it, where a browser is
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -n "$chromium" ] && command -v node >/dev/null; then
    CHROMIUM=$chromium node scripts/cdp.js screenshot "$out/report.html" "$out/report.png"
else
    echo "$study study: no chromium here, so no $out/report.png"
fi
echo "$study study: report in $out/report.html"
