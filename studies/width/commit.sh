#!/usr/bin/env bash
# The width study's results into the tree, from what the GPU machine's
# width call sent back (tests/gpu/plan.sh width: $OUT/width.tgz): the
# reports (studies/width/gpu-RECIPE/: report.html, the CSV files,
# base.json, plan.txt, every run's series in runs/) and the reading
# (gpu-reading.md), then a screenshot of each report (report.png, headless
# Chromium through scripts/cdp.js, as the depth study's were taken) and the
# reading made again here from the files (read.py: it must say what the
# machine's said). Prints what to commit; commits nothing.
#   studies/width/commit.sh PATH/width.tgz
set -euo pipefail
cd "$(dirname "$0")/../.."
archive=${1:?usage: studies/width/commit.sh PATH/width.tgz}
[ -f "$archive" ] || { echo "width commit: no $archive" >&2; exit 1; }
mapfile -t members < <(tar -tzf "$archive" | grep -E '^studies/width/gpu-' | grep -vE '/$')
[ ${#members[@]} -gt 0 ] || { echo "width commit: $archive holds no studies/width/gpu-* (the study wrote no report)" >&2; exit 1; }
rm -rf studies/width/gpu-*
tar -xzf "$archive" "${members[@]}"
folders=()
for d in studies/width/gpu-*/; do
    d=${d%/}
    [ -f "$d/report.html" ] || continue
    folders+=("$d")
    chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
    if [ -n "$chromium" ]; then
        CHROMIUM=$chromium node scripts/cdp.js screenshot "$d/report.html" "$d/report.png"
    else
        echo "width commit: no chromium here, so no $d/report.png" >&2
    fi
done
[ ${#folders[@]} -gt 0 ] || { echo "width commit: no report.html in $archive" >&2; exit 1; }
python3 studies/width/read.py "${folders[@]}" > studies/width/gpu-reading.here.md
if cmp -s studies/width/gpu-reading.md studies/width/gpu-reading.here.md; then
    rm studies/width/gpu-reading.here.md
    echo "width commit: the reading made here is the machine's (studies/width/gpu-reading.md)"
else
    echo "width commit: the reading made here differs from the machine's:" >&2
    diff studies/width/gpu-reading.md studies/width/gpu-reading.here.md >&2 || true
fi
du -sh "${folders[@]}" | sed 's/^/width commit: /'
echo "width commit: now: git add studies/width/gpu-*; put the reading into studies/width/README.md"
echo "  (\"What it found\") and bench/RESULTS.md, with the machine and the commit of the bundle:"
tar -xzOf "$archive" --wildcards '*/setup.log' 2>/dev/null | grep -m1 '^bundle: built from' | sed 's/^/  /' || true
