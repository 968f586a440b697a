#!/usr/bin/env bash
# The width study's reading (studies/width/read.py) of seeds that two calls
# wrote into folders of their own ("A+B"): the committed H100 run of seed
# 1 (studies/width/gpu-paper) beside a copy of it made seed 2 here, with
# its final evaluations, pruning and angles set to values whose pooled
# figures are worked out by hand:
#  - each arm's runs of both folders in one row, mean ± sd of the final
#    perplexity over the two seeds;
#  - Pre-LN − LNS at equal seeds over both seeds, with its interval, and
#    claim 2's verdict from it;
#  - the deepest half's ΔP averaged with each folder's runs as weights;
#  - a seed in both folders refused, naming it and the folders; folders of
#    another schedule refused, naming the folder.
cd "$(dirname "$0")/.." && . tests/lib.sh
t=$(mktemp -d /tmp/cod-width-read-XXXXXX)
trap 'rm -rf "$t"' EXIT
read_py=$PWD/studies/width/read.py
cp -r studies/width/gpu-paper "$t/seed1"
cp -r studies/width/gpu-paper "$t/seed2"
# seed 2: Pre-LN ends at 62.0, LNS at 62.5; Pre-LN's deep half ΔP 10.8, LNS's 2.26
python3 - "$t/seed2" <<'PY'
import csv, math, os, sys
d = sys.argv[1]
def rewrite(name, change):
    path = os.path.join(d, name)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    fields = list(rows[0].keys())
    for r in rows:
        change(r)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fields)
        w.writeheader()
        w.writerows(rows)
final = {"pre": 62.0, "lns": 62.5}
experiment = {}
def cell(r):
    r["seed"] = "2"
    r["eval_ppl"], r["eval_loss"] = str(final[r["norm"]]), str(math.log(final[r["norm"]]))
    experiment[r["experiment"]] = r["norm"]
rewrite("cells.csv", cell)
for e, norm in experiment.items():
    def series(r, norm=norm):
        if r["step"] == "967" and r["name"] == "eval/ppl":
            r["value"] = str(final[norm])
        elif r["step"] == "967" and r["name"] == "eval/loss":
            r["value"] = str(math.log(final[norm]))
    rewrite(os.path.join("runs", f"{e}.csv"), series)
def summary(r):
    r["deep_half_delta_ppl"] = {"pre": "10.8", "lns": "2.26"}[r["norm"]]
rewrite("depth_summary.csv", summary)
PY
cd "$t" || exit 1
has() { grep -qF -- "$2" "$1" || { echo "  not in $1:"; sed 's/^/    /' "$1"; return 1; }; }
python3 "$read_py" seed1+seed2 > pooled.txt 2>&1
check "read.py A+B: both folders read as one sweep" has pooled.txt '## seed1 + seed2'
# (62.6457 + 62.0) / 2 = 62.32, sd 0.6457 / √2 = 0.46; (63.5415 + 62.5) / 2 = 63.02, sd 1.0415 / √2 = 0.74;
# ΔP (12.7907 + 10.8) / 2 = 11.8 and (3.2553 + 2.26) / 2 = 2.76
check "read.py A+B: each arm's two seeds in one row, the final perplexity's mean ± sd, the pooled ΔP" \
    bash -c "grep -qF '| 12 | Pre-LN | 2 | 967 of 967 updates | 62.32 ± 0.46 (n=2) |' pooled.txt &&
             grep -qF '| 12 | LNS | 2 | 967 of 967 updates | 63.02 ± 0.74 (n=2) |' pooled.txt &&
             grep -qE '^\| 12 \| Pre-LN .*\| 11\.8 \(' pooled.txt && grep -qE '^\| 12 \| LNS .*\| 2\.76 \(' pooled.txt"
# seed 1: 62.6457 − 63.5415 = −0.8958; seed 2: 62.0 − 62.5 = −0.5; mean −0.698
check "read.py A+B: Pre-LN − LNS at equal seeds over both seeds, with its interval" \
    grep -qE '^L = 12, Pre-LN − LNS at equal seeds, eval perplexity: -0\.698 \[[-+0-9.]+, [-+0-9.]+\], p = [0-9.]+ .*\(final, 2 seeds\)' pooled.txt
check "read.py A+B: claim 2's verdict from the two seeds" \
    has pooled.txt '2. LNS reaches the lower perplexity: not shown: within seed noise (Pre-LN − LNS -0.698'
check "read.py A+B: claim 3 from the pooled ΔP" \
    has pooled.txt 'removing one of the deepest half costs Pre-LN 11.8, LNS 2.76 ppl'
(cd "$OLDPWD" && python3 "$read_py" "$t/seed1") > one.txt 2>&1
sed "s#studies/width/gpu-paper#$t/seed1#g" "$OLDPWD/studies/width/gpu-reading.md" > committed.txt
check "read.py A alone: the committed reading" cmp one.txt committed.txt
python3 "$read_py" seed1+seed1 > twice.txt 2>&1
rc=$?
check "read.py A+A: refused, naming the seed and the folders" \
    bash -c "[ $rc -ne 0 ] && grep -qF 'read.py: seed 1 of Pre-LN at 12 layers is in both seed1 and seed1' twice.txt"
cp -r seed2 other
python3 - other/base.json <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
b["train"]["steps"] = 500
json.dump(b, open(sys.argv[1], "w"), indent=1)
PY
python3 "$read_py" seed1+other > other.txt 2>&1
rc=$?
check "read.py A+B of two schedules: refused, naming the folder" \
    bash -c "[ $rc -ne 0 ] && grep -qF 'read.py: other trained on another schedule than seed1' other.txt"
