#!/usr/bin/env bash
# tests/run.sh: start first
# The cloze from held-out text (cod-analyze cloze, docs/eval.md) tells a
# model that learned the language from one that did not: the model `make
# demo` trains (the default spec: 400 updates of the default corpus as
# bytes, about 3 minutes on two idle cores) beats chance (1/4) by more
# than three standard errors of chance's own accuracy (z > 3, one-sided
# p < 0.0014; at 2686b79 it scored 0.300 on 1,368 items, z = 4.3); the
# same spec freshly initialised (its one update at the warm-up's learning
# rate 0) does not (0.262, z = 1.1).
cd "$(dirname "$0")/.." && . tests/lib.sh
need_corpus
t=$(mktemp -d /tmp/cod-eval-cloze-XXXXXX)
trap 'rm -rf "$t"' EXIT
bin/cod-analyze cloze var/corpus/default/val --out "$t/cloze.jsonl" --items 5000 --max-chars 40 \
    > "$t/cloze.txt" 2>&1
check "the cloze is built from the held-out text" grep -qE '^wrote .*: [0-9]+ items of 4 choices' "$t/cloze.txt"
bin/cod-train default --print-spec | python3 -c '
import json, sys
s = json.load(sys.stdin)
s["name"], s["train"]["steps"], s["train"]["warmup"] = "fresh", 1, 1
s["eval"]["every"], s["stats"]["every"] = 0, 0
print(json.dumps(s))' > "$t/fresh.json"
bin/cod-train "$t/fresh.json" --out "$t/fresh" > "$t/fresh.log" 2>&1
check "the fresh model's one update had learning rate 0" grep -q 'step 1/1 .* lr 0.00e+00' "$t/fresh.log"
bin/cod-train default --out "$t/demo" --progress-seconds 60 > "$t/demo.log" 2>&1
check "the demo's model trained its 400 updates" test -d "$t/demo/checkpoints/step_00000400"
for m in demo:step_00000400 fresh:step_00000001; do
    bin/cod-analyze eval "$t/${m%%:*}/checkpoints/${m#*:}" --task "$t/cloze.jsonl" --out "$t/ev-${m%%:*}" \
        > "$t/ev-${m%%:*}.txt" 2>&1
done
z() { # the model's z against chance, from its eval.json
    python3 -c '
import json, math, sys
r = json.load(open(sys.argv[1]))["tasks"]["cloze"]
print("%.2f %.4f %d" % ((r["acc"] - 0.25) / math.sqrt(0.25 * 0.75 / r["n"]), r["acc"], r["n"]))' "$1"
}
read -r zd accd n < <(z "$t/ev-demo/eval.json")
read -r zf accf _ < <(z "$t/ev-fresh/eval.json")
echo "  cloze of $n items: the demo's model acc $accd (z = $zd), the fresh one's $accf (z = $zf)"
check "the demo's model beats chance by more than 3 standard errors" awk -v z="$zd" 'BEGIN {exit !(z > 3)}'
check "a freshly initialised model does not" awk -v z="$zf" 'BEGIN {exit !(z < 3)}'
