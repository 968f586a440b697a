#!/usr/bin/env bash
# The sweep report end to end: a real cod-server and cod-worker train a
# sweep with replicates (norm pre, lns × 2 and 3 layers × lr 0.003 and 1e30
# × seeds 1, 2, 3: the lr 1e30 cells all diverge), then
#  - the sweep view's groups and comparisons agree with its own cells
#    (means, deviations and paired differences recomputed here), diverged
#    runs counted and never averaged;
#  - `cod compare --sweep` shows the groups, `cod report` writes the files;
#  - every number in the report's CSV files equals the API's answer;
#  - headless Chromium opens report.html from disk: Table 1 and every figure
#    with the right number of series, nothing loaded from anywhere, and a
#    screenshot in tests/out/report.png (tests/dashboard/report.js).
cd "$(dirname "$0")/.." && . tests/worker_helpers.bash
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser)}
if [ -z "$CHROMIUM" ] || ! command -v node >/dev/null; then
    echo "FAIL report: needs chromium and node (scripts/deps.sh test installs them)"; exit 1
fi
make_data
start_server
start_worker w1
cat > "$t/base.json" <<JSON
{"name": "rep", "model": {"dim": 32, "n_layers": 2, "n_heads": 2, "ffn_dim": 64},
 "data": {"train": "$t/data/train_*.bin", "val": "$t/data/train_*.bin"},
 "train": {"steps": 30, "seq_len": 16, "batch_seqs": 4, "micro_batch": 4, "warmup": 3},
 "eval": {"every": 10, "tokens": 1024}, "stats": {"every": 10},
 "analysis": {"prune": true, "angular": true}, "resources": {"device": "cpu"}}
JSON
export COD_SERVER=$B
sid=$(bin/cod sweep "$t/base.json" --grid train.lr=0.003,1e30 model.n_layers=2,3 norm=pre,lns train.seed=1,2,3 --json |
    js 'j.id')
check "a sweep of 24 cells with seeds" test "$(get "/v1/sweeps/$sid" | js 'j.cells.length + " " + j.replicates')" = "24 train.seed"
# every cell ends (cod watch returns when its experiment does); a group
# differs from 3 others in one key each (lr, depth, norm): 12 comparisons
for id in $(get "/v1/sweeps/$sid" | js 'j.cells.map(c => c.experiment)'); do
    bin/cod watch "$id" --interval 0.2 >/dev/null 2>&1
done
check "every cell ended" test "$(bin/cod ls --sweep "$sid" --all --json | grep -c '"state":"\(queued\|running\)"')" = 0

bin/cod compare --sweep "$sid" > "$t/compare.txt"
check "cod compare --sweep: the replicate groups, diverged runs apart" \
    grep -qE '^ +[0-9]+ +0\.003 +3 +lns +3 +0 +0 +[0-9.]+ ± [0-9.]+' "$t/compare.txt"
check "cod compare --sweep: the 1e30 groups: 3 diverged, nothing averaged" \
    test "$(grep -cE '^ +[0-9]+ +1e\+30 +[23] +(pre|lns) +0 +3 +0 +- ' "$t/compare.txt")" = 4
check "cod compare --sweep: paired comparisons with a reading" \
    grep -qE 'norm=pre .* norm=lns .* 3 .* (within seed noise|A lower|B lower)$' "$t/compare.txt"
check "cod compare: the norm once (NORM), not again as a grid column" \
    bash -c "head -1 '$t/compare.txt' | grep -q NORM && ! head -1 '$t/compare.txt' | grep -qw norm"
bin/cod compare --sweep "$sid" --json > "$t/compare.json"
check "cod compare --sweep --json: groups, comparisons and the averaged layers" \
    test "$(js 'j.groups.length + " " + j.comparisons.length + " " + j.layers.groups.length' < "$t/compare.json")" = "8 12 8"

bin/cod report 2>/dev/null; rc=$?
check "cod report without --sweep: usage (exit 2)" test "$rc" = 2
bin/cod report --sweep 999 --out "$t/none" 2>/dev/null; rc=$?
check "cod report of no such sweep: refused (exit 1), nothing written" bash -c "[ $rc = 1 ] && [ ! -e '$t/none' ]"
bin/cod report --sweep "$sid" --out "$t/report" > "$t/files.txt"
check "cod report writes report.html and the CSV files" test "$(ls "$t/report" | tr '\n' ' ')" = \
    "angular.csv cells.csv comparisons.csv curves.csv depth_summary.csv grad_norm.csv out_var.csv prune.csv report.html table1.csv "
# the depth study's layout of a report (studies/depth/table.py): a table per
# lr, a row per depth, Pre-LN's perplexity as depth_summary.csv has it
python3 studies/depth/table.py "$t/report" > "$t/table.md"
pre2=$(awk -F, 'NR > 1 && $2 ~ /^0\.003/ && $3 == 2 && $4 == "pre" { printf "%.2f", $6 }' "$t/report/depth_summary.csv")
check "studies/depth/table.py: a table per lr, Pre-LN's perplexity at L = 2 as the report has it ($pre2)" \
    bash -c "[ \$(grep -c '^train.lr=' '$t/table.md') = 2 ] && grep -q '^| 2 | $pre2 ± ' '$t/table.md' &&
             [ \$(grep -c '^| [23] | ' '$t/table.md') = 4 ]"
# the depth study's pairing across report folders (studies/depth/pair.py)
# gives, for the cells of one folder, the report's own paired comparisons
python3 studies/depth/pair.py pre lns "$t/report" > "$t/pair.txt"
python3 - "$t/report/comparisons.csv" > "$t/pair_want.txt" <<'PY'
import csv, sys
for c in csv.DictReader(open(sys.argv[1])):
    if c["differs"] != "norm" or c["mean_diff"] == "":
        continue
    sign = 1 if c["a_label"].startswith("Pre-LN") else -1
    lo, hi = sorted(sign * float(c[k]) for k in ("ci95_lo", "ci95_hi"))
    print(f"{sign * float(c['mean_diff']):+.3f} [{lo:+.3f}, {hi:+.3f}], p = {float(c['p']):.2g}")
PY
check "studies/depth/pair.py: the report's paired comparisons ($(tr '\n' ';' < "$t/pair_want.txt")), the diverged lr's seeds left out" \
    bash -c "[ \$(wc -l < '$t/pair_want.txt') = 2 ] && [ \$(grep -c 'pre − lns: [-+]' '$t/pair.txt') = 2 ] &&
             while read -r want; do grep -qF \"pre − lns: \$want,\" '$t/pair.txt' || exit 1; done < '$t/pair_want.txt' &&
             [ \$(grep -c 'too few to test; seeds 1, 2, 3 left out' '$t/pair.txt') = 2 ]"
# a side that fixes a key pairs across that key's values: the lr left out of
# the setting, 3e-3 matching the cells' 0.003, 1e30 picking the diverged runs
python3 studies/depth/pair.py pre:train.lr=3e-3 lns:train.lr=3e-3 "$t/report" > "$t/pair_fixed.txt"
python3 studies/depth/pair.py lns:train.lr=1e30 pre:train.lr=0.003 "$t/report" > "$t/pair_cross.txt"
check "studies/depth/pair.py NORM:KEY=VALUE: the same pairs without the key in the setting; across lrs, the diverged side's seeds left out" \
    bash -c "[ \$(wc -l < '$t/pair_fixed.txt') = 2 ] && ! grep -q train.lr=0 '$t/pair_fixed.txt' &&
             while read -r want; do grep -qF \"pre:train.lr=3e-3 − lns:train.lr=3e-3: \$want,\" '$t/pair_fixed.txt' || exit 1; done < '$t/pair_want.txt' &&
             [ \$(grep -c '^model.n_layers=[23]: lns:train.lr=1e30 − pre:train.lr=0.003: 0 pair(s), too few to test; seeds 1, 2, 3 left out' '$t/pair_cross.txt') = 2 ]"
python3 studies/depth/pair.py pre:train.lr lns "$t/report" 2> "$t/pair_err.txt"; rc=$?
check "studies/depth/pair.py: a side's key without a value refused, naming it" \
    bash -c "[ $rc != 0 ] && grep -q \"'train.lr' in 'pre:train.lr' is not KEY=VALUE\" '$t/pair_err.txt'"
# a folder that ran LNS alone still gets its rows, Pre-LN's columns empty
mkdir -p "$t/lns-only" && cp "$t/report"/*.csv "$t/lns-only/" &&
    awk -F, 'NR == 1 || $4 != "pre"' "$t/report/depth_summary.csv" > "$t/lns-only/depth_summary.csv"
python3 studies/depth/table.py "$t/lns-only" > "$t/table_lns.md"
check "studies/depth/table.py: LNS alone, a row per depth and lr with Pre-LN's columns empty" \
    test "$(grep -c '^| [23] | — | [0-9.]* ± [0-9.]* (n=3) | — | ' "$t/table_lns.md")" = 2
code=$(req GET "/v1/sweeps/$sid/series")
check "GET /v1/sweeps/ID/series without a name: 400 naming it" bash -c "[ $code = 400 ] && grep -q '\"field\":\"name\"' '$t/body'"
# the embedding's std is no part of the model's name: settings that differ
# in it alone are labelled by it, not both "L2-d32"
esid=$(bin/cod sweep "$t/base.json" --set train.steps=2 --set train.warmup=0 --grid norm=pre \
    model.embed_std=0.02,0.632 --json | js 'j.id')
for id in $(get "/v1/sweeps/$esid" | js 'j.cells.map(c => c.experiment)'); do
    bin/cod watch "$id" --interval 0.2 >/dev/null 2>&1
done
bin/cod report --sweep "$esid" --out "$t/report-embed" > /dev/null
check "report: a setting of model.embed_std is labelled by it" \
    bash -c "grep -q 'model.embed_std=0.02' '$t/report-embed/report.html' &&
             grep -q 'model.embed_std=0.632' '$t/report-embed/report.html'"

mkdir -p tests/out
rm -f tests/out/report.png
REPORT_API="$B" REPORT_SWEEP="$sid" REPORT_DIR="$t/report" REPORT_SHOT=tests/out/report.png \
REPORT_PROFILE="$t/profile" CHROMIUM="$CHROMIUM" timeout 120 node tests/dashboard/report.js ||
    echo "FAIL the report checks did not finish"
