#!/usr/bin/env bash
# The cod CLI end to end against a real cod-server and database: every
# subcommand, bad arguments (exit 2), refusals shown as the server wrote them
# (exit 1), a wrong token (exit 4), the server down (exit 3), and watch's
# exit code for each final state. Metrics and logs come from a worker that
# curl plays. COD_BIN runs another build of the CLI (e.g. a sanitizer one).
cd "$(dirname "$0")/.." && . tests/server_helpers.bash
COD=${COD_BIN:-bin/cod}
[ -x "$COD" ] || { echo "FAIL cli: $COD is not built"; exit 1; }
make_data
# the run that curl plays holds its lease through many CLI calls: a lease
# that no loaded machine outlasts
start_server --token T --worker-token W --lease-seconds 3600
export COD_SERVER=$B COD_TOKEN=T
WK=(-H "Authorization: Bearer W")

# cod ARGS: runs the CLI; stdout in $t/out, stderr in $t/err, the status in $rc
cod() { "$COD" "$@" >"$t/out" 2>"$t/err"; rc=$?; }
# expect NAME STATUS TEXT [out|err]: the exit status, and TEXT in stdout (or stderr)
expect() {
    if [ "$rc" = "$2" ] && grep -qF -- "$3" "$t/${4:-out}"; then echo "PASS $1"
    else echo "FAIL $1 (exit $rc, wanted $2 and '$3'): $(head -c 600 "$t/out") | $(head -c 600 "$t/err")"; fi
}
# the first value of a scalar member of the JSON in $t/out
oget() { grep -o "\"$1\":\(\"[^\"]*\"\|[^,}]*\)" "$t/out" | head -1 | cut -d: -f2- | tr -d '"'; }
ids() { grep -o '"id":' "$t/out" | wc -l; }
lines() { wc -l < "$t/out"; }
# in_file FILE TEXT: TEXT is in FILE
in_file() { grep -qF -- "$2" "$1" 2>/dev/null; }

M='{"dim": 32, "n_layers": 2, "n_heads": 2, "ffn_dim": 64}'
F=(--model "$M" --data-train "$t/data/train_*.bin" --data-val "$t/data/train_*.bin"
   --steps 10 --seq-len 16 --batch 2 --micro-batch 2 --device cpu)
spec > "$t/spec.json"

# --- usage: exit 2, nothing sent
cod help; expect "help: exit codes documented" 0 "exit codes"
cod; expect "no command: usage, exit 2" 2 usage err
cod frobnicate; expect "unknown command: exit 2" 2 'unknown command "frobnicate"' err
cod ls --bogus; expect "unknown option: exit 2" 2 "unknown option --bogus" err
cod submit --help; expect "submit --help lists the spec flags" 0 "--seq-len"
cod help watch; expect "help CMD: the command's usage" 0 "Exit 0 when it succeeded"
cod show abc; expect "show: a bad id" 2 "not an experiment id" err
cod show; expect "show: no id" 2 "too few arguments" err
cod submit "${F[@]}" --steps abc; expect "submit: --steps not a number" 2 "--steps wants a whole number" err
cod submit "$t/nothing.json"; expect "submit: missing spec file, named once" 2 "cod submit: cannot read the spec $t/nothing.json: No such file or directory" err
check "submit: missing spec file, one line" test "$(wc -l <"$t/err")" = 1
echo '{"train": ' >"$t/torn.json"
cod submit "$t/torn.json"; expect "submit: malformed spec file, line and column" 2 "torn.json, line 2, column 0:" err
cod sweep "${F[@]}"; expect "sweep: no grid" 2 "no grid" err
cod sweep "${F[@]}" --grid lr; expect "sweep: a bad axis" 2 "KEY=V1,V2" err
cod metrics 1 --csv --json; expect "metrics: --csv and --json" 2 "not both" err
cod ls --limit -3; expect "ls: a negative limit" 2 "--limit wants" err
cod cancel 1 x; expect "cancel: a bad id" 2 '"x" is not an experiment id' err
cod compare; expect "compare: nothing to compare" 2 "one of the two" err
cod submit --dry-run "${F[@]}" --norm lns --set analysis.prune=false --set train.beta2=0.5
check "submit --dry-run: flags and --set in the spec" bash -c "[ $rc = 0 ] && grep -qF '\"norm\":\"lns\"' '$t/out' && grep -qF '\"analysis\":{\"prune\":false}' '$t/out' && grep -qF '\"beta2\":0.5' '$t/out' && grep -qF '\"steps\":10' '$t/out'"
cod submit --dry-run --model llama-9m --set model.dim=64
expect "--set into a preset's name: its object form" 0 '{"model":{"preset":"llama-9m","dim":64}}'
cod submit --dry-run --name x --set name.y=1; expect "--set into a string: exit 2" 2 "name is not an object" err
cod submit --dry-run --embed-std 0.02 --gains frozen --norm lns --model llama-9m --precision bf16 --packing documents
expect "submit --dry-run: the paper's recipe by flags, a section before its fields" 0 \
    '{"norm":{"base":"lns","gains":"frozen"},"model":{"preset":"llama-9m","embed_std":0.02},"train":{"precision":"bf16"},"data":{"packing":"documents"}}'
cod sweep --dry-run "$t/spec.json" --grid 'train.seed=[1,2]' lr=0.001,0.002 norm=pre
expect "sweep --dry-run: axes by flag name, path or JSON list" 0 '"grid":{"train.seed":[1,2],"train.lr":[0.001,0.002],"norm":["pre"]}'

# --- tokens
COD_TOKEN=wrong cod ls; expect "wrong token: exit 4, the server's words" 4 "unauthorized" err
COD_TOKEN= cod ls; expect "no token: exit 4" 4 "unauthorized" err
COD_TOKEN=wrong cod ls --token T; expect "--token beats COD_TOKEN" 0 "ID"
env -u COD_SERVER -u COD_TOKEN "$COD" --server "$B" --token=T --json ls >"$t/out" 2>"$t/err"; rc=$?
expect "--server, --token, --json before the command" 0 '{"experiments":['

# --- submit, ls, show
cod submit "${F[@]}" --name one; expect "submit by flags" 0 "(one) queued: L2-d32 pre on cpu"
e1=$(sed -n 's/^experiment \([0-9]*\) .*/\1/p' "$t/out")
cod submit "$t/spec.json" --name two --priority 5 --json; expect "submit a file, flags over it, --json" 0 '"name":"two"'
e2=$(oget id)
cod show "$e2" --json
check "the flags reached the server" bash -c "grep -qF '\"priority\":5' '$t/out' && grep -qF '\"state\":\"queued\"' '$t/out'"
"$COD" submit - --name three < "$t/spec.json" >"$t/out" 2>"$t/err"; rc=$?
expect "submit from stdin" 0 "(three) queued"
e3=$(sed -n 's/^experiment \([0-9]*\) .*/\1/p' "$t/out")
cod submit "${F[@]}" --norm prenorm
expect "refused spec: exit 1, the server's message" 1 'unknown norm variant "prenorm"' err
expect "refused spec: the field named" 1 "field norm" err
cod ls; expect "ls: a table" 0 "ID  NAME"
check "ls: one row each, nothing refused was queued" bash -c "[ $(lines) = 4 ] && grep -q '^ *$e2  two  *L2-d32  *pre  *cpu  *queued  *0/10' '$t/out'"
cod ls --limit 1; expect "ls --limit: the next cursor told" 0 "more: --cursor" err
check "ls --limit 1: one row" test "$(lines)" = 2
cod ls --limit 1 --all --json; expect "ls --all --json: every page" 0 '"next_cursor":null'
check "ls --all: all three" test "$(ids)" = 3
cod ls --state running --json; expect "ls --state: none running" 0 '{"experiments":[],"next_cursor":null}'
cod ls --state bogus; expect "ls: a bad filter refused by the server" 1 "state must be" err
cod show "$e2"; expect "show: state and progress" 0 "queued, step 0 of 10 (0.0%)"
expect "show: priority" 0 "priority   5"
expect "show: no attempt yet" 0 "attempt    none yet (3 allowed)"
cod show 999; expect "show: unknown id, exit 1" 1 "no such experiment" err

# --- sweeps
cod sweep "$t/spec.json" --grid norm=pre,lns lr=0.001,0.002; expect "sweep: 4 cells" 0 "4 experiments"
expect "sweep: cell parameters" 0 "norm=lns train.lr=0.002"
sid=$(sed -n 's/^sweep \([0-9]*\):.*/\1/p' "$t/out")
cod ls --sweep "$sid" --norm lns --json
check "ls --sweep --norm" test "$(ids)" = 2
cod sweep "$t/spec.json" --grid norm=pre,bogus; expect "sweep: a bad cell refused" 1 'cell {"norm":"bogus"}' err
# the recipe's settings as grid keys; norm.gains on a norm named in the grid
# (its object form, whatever the grid's order), on a preset name
cod sweep "$t/spec.json" --grid norm.gains=learned,frozen norm=pre,lns precision=mixed,bf16 \
    model.embed_std=0.02,0.632 packing=stream,documents --json
rsid=$(oget id)
check "sweep: 32 cells of the recipe's settings" test "$rc $(grep -o '"experiment":' "$t/out" | wc -l)" = "0 32"
cod ls --sweep "$rsid" --norm lns --json
check "sweep: frozen gains keep the variant's name (lns)" test "$(ids)" = 16
cod compare --sweep "$rsid"
check "compare --sweep: the recipe's keys as columns" \
    bash -c "head -1 '$t/out' | grep -q 'norm.gains' && head -1 '$t/out' | grep -q 'train.precision' &&
             head -1 '$t/out' | grep -q 'model.embed_std' && head -1 '$t/out' | grep -q 'data.packing' &&
             grep -q ' frozen  *bf16  *0.632  *documents ' '$t/out'"
cod ls --sweep "$rsid" --all --json
cell=$(grep -o '"id":[0-9]*,"name":"[^"]*-frozen-lns-bf16-0.632-documents"' "$t/out" | grep -o '^"id":[0-9]*' | cut -d: -f2)
cod show "$cell" --json
check "a cell's spec: every setting in place" bash -c "[ -n '$cell' ] && [ $rc = 0 ] &&
    grep -qF '\"gains\":\"frozen\"' '$t/out' && grep -qF '\"precision\":\"bf16\"' '$t/out' &&
    grep -qF '\"embed_std\":0.63' '$t/out' && grep -qF '\"packing\":\"documents\"' '$t/out'"
mkdir -p "$t/nometa" && cp "$t/data/train_000000.bin" "$t/nometa/"
cod sweep "$t/spec.json" --set "data.train=$t/nometa/train_*.bin" --grid packing=stream,documents
expect "sweep: documents packing of shards without meta.json refused, naming doc_token" 1 'doc_token' err

# --- a worker (curl) runs e2: metrics, logs
wreq() { req "$1" "$2" "$3" "${WK[@]}"; }
wreq POST /v1/workers/register '{"name": "w1", "device": "cpu", "capacity": 8}' >/dev/null; w=$(jget id)
lease() { wreq POST /v1/workers/$w/lease '{"wait": 0}' >/dev/null; run=$(jget run); exp=$(jget experiment); }
lease; r2=$run
check "worker leased e2 (priority 5)" test "$exp" = "$e2"
wreq POST /v1/runs/$r2/heartbeat '{"step": 3}' >/dev/null
code=$(wreq POST /v1/runs/$r2/metrics '{"points": [{"step": 1, "name": "train/loss", "value": 5.5}, {"step": 2, "name": "train/loss", "value": 5.0}, {"step": 3, "name": "train/loss", "value": 4.5}, {"step": 3, "name": "eval/ppl", "value": 90}, {"step": 3, "name": "eval/loss", "value": 4.5}, {"step": 3, "name": "layer/out_var", "layer": 0, "value": 1.5}, {"step": 3, "name": "layer/out_var", "layer": 1, "value": 2.25}, {"step": 3, "name": "layer/out_var", "layer": 2, "value": null}], "logs": [{"seq": 1, "line": "step 1 loss 5.5"}, {"seq": 2, "line": "step 2 loss 5.0"}]}')
check "worker reported" test "$code" = 200

cod workers; expect "workers: a table" 0 "HEARTBEAT"
check "workers: name, device, busy, its experiment" grep -q "w1  *cpu  *8  *busy  *[0-9]*s ago  *$e2\$" "$t/out"
cod workers --json; expect "workers --json" 0 '"state":"busy"'
cod show "$e2"; expect "show: running with its worker" 0 "running, step 3 of 10 (30.0%)"
check "show: latest metrics" grep -q "train/loss  *3  *4.5" "$t/out"
cod metrics "$e2"; expect "metrics: CSV header" 0 "step,name,layer,value"
check "metrics: every point of every series" bash -c "[ $(lines) = 6 ] && grep -qx '3,train/loss,,4.5' '$t/out' && grep -qx '3,eval/ppl,,90' '$t/out'"
cod metrics "$e2" --name train/loss --name eval/ppl --json
expect "metrics --json: several names merged" 0 '"series":{"train/loss":[[1,5.5],[2,5.0],[3,4.5]],"eval/ppl":[[3,90.0]]}'
cod metrics "$e2" --name train/loss --every 2 --from 1
check "metrics --every: every other point and the newest" bash -c "[ $rc = 0 ] && [ $(lines) = 3 ] && grep -qx '1,train/loss,,5.5' '$t/out' && grep -qx '3,train/loss,,4.5' '$t/out'"
cod metrics "$e2" --layers layer/out_var
check "metrics --layers: per layer, null as empty" bash -c "[ $rc = 0 ] && grep -qx '3,layer/out_var,1,2.25' '$t/out' && grep -qx '3,layer/out_var,2,' '$t/out'"
cod metrics 999; expect "metrics: unknown id, exit 1" 1 "not_found" err
cod logs "$e2"
check "logs: the lines as written" bash -c "[ $rc = 0 ] && [ \"\$(cat '$t/out')\" = \"\$(printf 'step 1 loss 5.5\nstep 2 loss 5.0')\" ]"
cod logs "$e2" --json; first=$(oget id)
cod logs "$e2" --after "$first" --json
check "logs --after --json: the rest" bash -c "[ $rc = 0 ] && [ $(lines) = 1 ] && grep -qF '\"line\":\"step 2 loss 5.0\"' '$t/out'"
cod compare "$e2" "$e1"; expect "compare: final eval/ppl" 0 "EVAL_PPL"
check "compare: a row each" bash -c "grep -q '^ *$e2  two  *L2-d32  *pre  *running  *3  *90  *4.5  *4.5' '$t/out' && grep -q '^ *$e1  one .* queued' '$t/out'"
check "compare: out_var side by side" bash -c "grep -q 'LAYER  *#$e2 [a-z]*  *#$e1 [a-z]*' '$t/out' && grep -q '^ *1  *2.25  *-' '$t/out'"
cod compare "$e2" --json; expect "compare --json" 0 '"eval/ppl":90'
cod compare --sweep "$sid"; expect "compare --sweep: the grid's columns" 0 "train.lr"
check "compare --sweep: a row per cell" bash -c "[ $(grep -c ' queued ' "$t/out") = 4 ]"
cod compare 999; expect "compare: unknown id, exit 1" 1 "no such experiment" err

# --- watch and logs -f follow a run to its end
# (they end when the run does; the timeout only stops one that hangs)
( timeout "$WAIT_LIMIT" "$COD" watch "$e2" --interval 0.05 >"$t/watch" 2>&1; echo $? >"$t/watch_rc" ) &
wpid=$!
await "watch to show step 3/10" in_file "$t/watch" "3/10"
check "watch: progress bar, loss sparkline, ppl" bash -c "grep -q '#$e2 two running .*30.0% 3/10 loss 4.5 .*[▁▂▃▄▅▆▇█].* ppl 90' '$t/watch'"
( timeout "$WAIT_LIMIT" "$COD" logs -f "$e2" --interval 0.05 >"$t/follow" 2>&1; echo $? >"$t/follow_rc" ) &
fpid=$!
await "logs -f to show the second line" in_file "$t/follow" "step 2 loss 5.0"
wreq POST /v1/runs/$r2/heartbeat '{"step": 5}' >/dev/null
await "watch to show step 5/10" in_file "$t/watch" "5/10"
check "watch: a perplexity from an earlier step says which" grep -q "5/10 loss .* ppl 90 (at step 3)" "$t/watch"
wreq POST /v1/runs/$r2/heartbeat '{"step": 10}' >/dev/null
wreq POST /v1/runs/$r2/metrics '{"points": [{"step": 10, "name": "train/loss", "value": 3.0}, {"step": 10, "name": "eval/ppl", "value": 42}], "logs": [{"seq": 3, "line": "done"}]}' >/dev/null
wreq POST /v1/runs/$r2/finish '{"outcome": "succeeded"}' >/dev/null
wait $wpid; wait $fpid
check "watch: exit 0 when it succeeded" test "$(cat "$t/watch_rc")" = 0
check "watch: the final line" grep -q "experiment $e2 succeeded: eval/ppl 42" "$t/watch"
check "logs -f: new lines, then exit 0 at the end" bash -c "[ \$(cat '$t/follow_rc') = 0 ] && [ \$(wc -l < '$t/follow') = 3 ] && tail -1 '$t/follow' | grep -qx done"
cod ls --state succeeded; check "ls --state succeeded" grep -q "^ *$e2  two" "$t/out"
cod show "$e2"; expect "show: succeeded on its first attempt" 0 "attempt    1 of 3"

# --- watch's exit code says how it ended
lease; rf=$run; ef=$exp
wreq POST /v1/runs/$rf/finish '{"outcome": "failed", "reason": "diverged at step 7"}' >/dev/null
cod watch "$ef" --interval 0.05; expect "watch a failed one: exit 5, the reason" 5 "failed: diverged at step 7"
cod cancel "$e3"; expect "cancel a queued one" 0 "experiment $e3 cancelled"
cod watch "$e3"; expect "watch a cancelled one: exit 6" 6 "cancelled"
cod cancel "$e3"; expect "cancel again: exit 1, the server's words" 1 "already finished" err
lease; er=$exp
cod cancel "$er" --json; expect "cancel a running one: requested" 0 '"cancel_requested":true'
cod ls --state running; check "ls: a running one shows it is cancelling" grep -q "^ *$er .*running (cancelling)" "$t/out"

# --- a retried submission with the same Idempotency-Key queues nothing new
cod submit "${F[@]}" --name once --idempotency-key run-42 --json; expect "submit --idempotency-key" 0 '"name":"once"'
k1=$(oget id)
cod submit "${F[@]}" --name once --idempotency-key run-42 --json; expect "the same key again: answered" 0 '"name":"once"'
k2=$(oget id)
cod ls --all --json
check "the same key: the same experiment, queued once ($k1 $k2)" bash -c "[ -n '$k1' ] && [ '$k1' = '$k2' ] && [ \$(grep -o '\"name\":\"once\"' '$t/out' | wc -l) = 1 ]"

# --- the server gone
stop_server
cod ls; expect "server down: exit 3" 3 "cannot reach" err
cod watch "$e2"; expect "server down: watch exits 3" 3 "cannot reach" err
