#!/usr/bin/env bash
# tests/run.sh: start first
# The depth study's one command (studies/depth/local.sh cpu) stopped and run
# again, as a researcher does with a sweep of hours: a small GRID on the
# study's own base spec and the default corpus, its state in a folder of
# its own (STUDY_DIR).
#  - TERM to the script alone, not its process group, while cells train:
#    it stops at once (exit 130, no report written), and no server or worker
#    of it is left running;
#  - run again, it follows the same sweep, the interrupted runs resume from
#    their checkpoints, every cell ends succeeded and the report is written.
cd "$(dirname "$0")/.." && . tests/lib.sh
need_corpus
t=$(mktemp -d /tmp/cod-study-XXXXXX)
pid=
cleanup() {
    [ -z "$pid" ] || { kill -9 "$pid"; wait "$pid"; } 2>/dev/null
    pkill -9 -f "$t/state" 2>/dev/null
    rm -rf "$t"
}
trap cleanup EXIT
# no process of the study's own (its server's database, its workers' folder)
none_left() { ! pgrep -f "$t/state" >/dev/null; }
export STUDY_DIR=$t/state OUT=$t/report POLL=0.2
export GRID="train.seed=1,2 norm=pre,lns model.n_layers=2 train.steps=60 train.warmup=6 eval.every=20 stats.every=20"
# has any run trained this many steps
trained() {
    local f
    for f in "$t"/state/work/experiments/*/metrics.jsonl; do
        [ "$(newest_step "$f")" -ge "$1" ] 2>/dev/null && return 0
    done
    return 1
}

studies/depth/local.sh cpu >"$t/first.log" 2>&1 &
pid=$!
trained_or_gone() { trained 5 || ! kill -0 "$pid" 2>/dev/null; }
await "a cell of the study to train 5 steps" trained_or_gone || exit 1
trained 5 || { echo "FAIL local.sh ended before any cell trained: $(tail -3 "$t/first.log")"; exit 1; }
kill -TERM "$pid"
wait "$pid"
rc=$? pid=
check "TERM to local.sh while cells train: it stops (exit 130)" \
    bash -c "[ $rc = 130 ] && grep -q 'study: stopping' '$t/first.log'"
check "stopped, it wrote no report: it did not wait for the sweep to end" test ! -e "$t/report"
check "stopped, no server or worker of it is left running" none_left
pkill -9 -f "$t/state"

studies/depth/local.sh cpu >"$t/second.log" 2>&1
rc=$?
check "run again, it ends (exit 0)" test "$rc" = 0
sweep() { grep -o 'depth study: sweep [0-9]*' "$1"; }
check "run again, it follows the same sweep" \
    bash -c "[ -n '$(sweep "$t/first.log")' ] && [ '$(sweep "$t/first.log")' = '$(sweep "$t/second.log")' ]"
check "the interrupted runs resume from their checkpoints" \
    bash -c "cat '$t'/state/worker-*.log | grep -q 'resuming from $t/state/work/experiments/[0-9]*/checkpoints/step_'"
states=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { print $c["state"], $c["step"] }' \
    "$t/report/cells.csv" 2>/dev/null | sort | uniq -c | awk '{ print $1, $2, $3 }')
check "every cell ends succeeded at step 60 (cells.csv: ${states//$'\n'/; })" test "$states" = "4 succeeded 60"
check "the report is written" test -s "$t/report/report.html"
check "after the sweep, no server or worker of it is left running" none_left
