#!/usr/bin/env bash
# The width study's reading (studies/width/read.py) on the committed H100
# run of seed 1 (studies/width/gpu-paper) and copies of it whose final
# evaluations, pruning and training-sample losses are set to values whose
# figures are worked out by hand:
#  - seed 2 in a folder of its own ("A+B"): each arm's runs of both folders
#    in one row, mean ± sd of the final perplexity; Pre-LN − LNS at equal
#    seeds in nats, seed 1 4.13749432 − 4.15169337 = −0.0142, seed 2
#    ln 62.0 − ln 62.5 = −0.0080: mean −0.0111, se 0.00308, t = −3.61 on
#    1 degree of freedom, p = 1 − (2/π)·atan(3.61) = 0.17, interval
#    ± 12.71 se = [−0.0503, +0.0281], TOST p = 1/2 + atan(0.36)/π = 0.61:
#    unresolved, claim 2 neither shown nor refuted; the deepest half's ΔP
#    averaged with each folder's runs as weights;
#  - the training sample's loss set 0.1 (Pre-LN) and 0.12 (LNS) below the
#    held-out loss at every evaluation: the memorisation table's gaps and
#    LNS's excess, 0.02, at the last evaluation of each pass;
#  - the same run at lr 2e-3 (a rate pair, Pre-LN 61.0, LNS 62.0): each
#    arm's change, ln 61 − 4.13749432 = −0.0266 and ln 62 − 4.15169337
#    = −0.0246, and the gap's, −0.0021, each n = 1;
#  - the committed folder alone gives the committed reading;
#  - a seed in both folders refused, naming it and the folders; folders of
#    another schedule refused, naming the folder.
cd "$(dirname "$0")/.." && . tests/lib.sh
t=$(mktemp -d /tmp/cod-width-read-XXXXXX)
trap 'rm -rf "$t"' EXIT
read_py=$PWD/studies/width/read.py
for d in seed1 seed2 rate orig; do cp -r studies/width/gpu-paper "$t/$d"; done
# SEED, FINAL PRE, FINAL LNS, SAMPLE (1: the training sample 0.1 and 0.12 below), LR, ΔP PRE, ΔP LNS
python3 - "$t" <<'PY'
import csv, json, math, os, sys
def rewrite(d, name, change):
    path = os.path.join(d, name)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    fields = list(rows[0].keys())
    out = [r for r in rows if change(r) is not False]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fields)
        w.writeheader()
        w.writerows(out)
def make(d, seed, final, sample, lr, dp):
    norms = {}
    def cell(r):
        norms[r["experiment"]] = r["norm"]
        r["seed"] = seed
        if final:
            r["eval_ppl"], r["eval_loss"] = str(final[r["norm"]]), str(math.log(final[r["norm"]]))
    rewrite(d, "cells.csv", cell)
    for e, norm in norms.items():
        path = os.path.join(d, "runs", f"{e}.csv")
        rows = list(csv.DictReader(open(path, newline="")))
        for r in rows:
            if final and r["step"] == "967" and r["name"] == "eval/ppl":
                r["value"] = str(final[norm])
            elif final and r["step"] == "967" and r["name"] == "eval/loss":
                r["value"] = str(math.log(final[norm]))
        if sample:
            below = {"pre": 0.1, "lns": 0.12}[norm]
            rows += [{"step": r["step"], "name": "train_eval/loss", "layer": "", "value": str(float(r["value"]) - below)}
                     for r in rows if r["name"] == "eval/loss"]
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, ["step", "name", "layer", "value"])
            w.writeheader()
            w.writerows(rows)
    if dp:
        def summary(r):
            r["deep_half_delta_ppl"] = dp[r["norm"]]
        rewrite(d, "depth_summary.csv", summary)
    if lr:
        b = json.load(open(os.path.join(d, "base.json")))
        b["train"]["lr"] = lr
        json.dump(b, open(os.path.join(d, "base.json"), "w"), indent=1)
t = sys.argv[1]
make(os.path.join(t, "seed1"), "1", None, True, None, None)
make(os.path.join(t, "seed2"), "2", {"pre": 62.0, "lns": 62.5}, True, None, {"pre": "10.8", "lns": "2.26"})
make(os.path.join(t, "rate"), "1", {"pre": 61.0, "lns": 62.0}, False, 0.002, None)
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
check "read.py A+B: Pre-LN − LNS at equal seeds in nats over both seeds, its interval, tests and verdict" \
    has pooled.txt 'L = 12, Pre-LN − LNS at equal seeds: -0.698 ppl; -0.0111 nats [-0.0503, +0.0281], n = 2, p = 0.17, TOST ±0.01: p = 0.61 (one test): unresolved (final; by seed 1: -0.0142, 2: -0.0080)'
check "read.py A+B: claim 2 unresolved, not read as no effect" \
    has pooled.txt '2. LNS reaches the lower held-out loss: unresolved: neither a difference nor an equivalence shown (final; 2 pairs)'
check "read.py A+B: claim 3 from the pooled ΔP" \
    has pooled.txt 'removing one of the deepest half costs Pre-LN 11.8, LNS 2.76 ppl'
check "read.py A+B: the held-out − training-sample gap at the last evaluation of each pass, LNS's excess 0.02" \
    bash -c "grep -qF 'Held-out loss − loss on the training sample, nats, at the last evaluation of each pass:' pooled.txt &&
             grep -qE '^\| 1 \| 194 \(0\.76[0-9]\) \| 0\.100 ± 0\.000 \(n=2\) \| 0\.120 ± 0\.000 \(n=2\) \| \+0\.0200 nats .*exploratory, uncorrected' pooled.txt &&
             grep -qE '^\| 4 \| 967 \(3\.8[0-9]?\) \| 0\.100 ± 0\.000 \(n=2\) \| 0\.120 ± 0\.000 \(n=2\) \| \+0\.0200 nats ' pooled.txt"
python3 "$read_py" orig rate > rate.txt 2>&1
check "read.py A B: what differs, each arm's change from A's at equal seeds, and the gap's, n = 1" \
    bash -c "grep -qF 'What differs: train.lr: 0.001 → 0.002.' rate.txt &&
             grep -qF -- '- Pre-LN, its final loss here − there: -0.0266 nats (n = 1: no interval) (by seed 1: -0.0266)' rate.txt &&
             grep -qF -- '- LNS, its final loss here − there: -0.0246 nats (n = 1: no interval) (by seed 1: -0.0246)' rate.txt &&
             grep -qF -- '- Pre-LN − LNS, its change here − there: -0.0021 nats (n = 1: no interval) (by seed 1: -0.0021)' rate.txt &&
             grep -qF 'no comparison of this reading has an interval' rate.txt"
(cd "$OLDPWD" && python3 "$read_py" "$t/orig") > one.txt 2>&1
sed "s#studies/width/gpu-paper#$t/orig#g" "$OLDPWD/studies/width/gpu-reading.md" > committed.txt
check "read.py A alone: the committed reading" cmp one.txt committed.txt
check "read.py A alone: one pair is n = 1, no verdict drawn" \
    has one.txt "2. LNS reaches the lower held-out loss: n = 1: Pre-LN lower at the one seed, by 0.0142 nats; no interval, no verdict (final; 1 pair)"
python3 "$read_py" seed1+seed1 > twice.txt 2>&1
rc=$?
check "read.py A+A: refused, naming the seed and the folders" \
    bash -c "[ $rc -ne 0 ] && grep -qF 'read.py: seed 1 of Pre-LN at 12 layers is in both seed1 and seed1' twice.txt"
python3 "$read_py" seed1+rate > other.txt 2>&1
rc=$?
check "read.py A+B of two schedules: refused, naming the folder" \
    bash -c "[ $rc -ne 0 ] && grep -qF 'read.py: rate trained on another schedule than seed1' other.txt"
