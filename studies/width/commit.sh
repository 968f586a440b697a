#!/usr/bin/env bash
# The width study's results into the tree, from what the GPU machine's
# width call sent back (tests/gpu/plan.sh width: $OUT/width.tgz): the
# reports (studies/width/gpu-RECIPE/: report.html, the CSV files,
# base.json, plan.txt, every run's series in runs/) and the reading
# (gpu-reading.md), then a screenshot of each report (report.png, headless
# Chromium through scripts/cdp.js, as the depth study's were taken) and the
# reading made again here from the files (read.py: it must say what the
# machine's said). A call of other seeds or depths (studies/width/run.sh:
# gpu-paper-seeds2, gpu-seeds2-reading.md) lands beside the folders of
# earlier calls, which stay; only what the archive holds is replaced.
# Prints what to commit, and how to pool a recipe's folders; commits nothing.
#   studies/width/commit.sh PATH/width.tgz
set -euo pipefail
cd "$(dirname "$0")/../.."
archive=${1:?usage: studies/width/commit.sh PATH/width.tgz}
[ -f "$archive" ] || { echo "width commit: no $archive" >&2; exit 1; }
mapfile -t members < <(tar -tzf "$archive" | grep -E '^studies/width/gpu-' | grep -vE '/$')
[ ${#members[@]} -gt 0 ] || { echo "width commit: $archive holds no studies/width/gpu-* (the study wrote no report)" >&2; exit 1; }
mapfile -t tops < <(printf '%s\n' "${members[@]}" | cut -d/ -f1-3 | sort -u)
rm -rf "${tops[@]}"
tar -xzf "$archive" "${members[@]}"
folders=() reading=
for d in "${tops[@]}"; do
    case $d in *-reading.md) reading=$d; continue ;; esac
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
[ -n "$reading" ] || { echo "width commit: $archive holds no reading (studies/width/gpu-*reading.md)" >&2; exit 1; }
python3 studies/width/read.py "${folders[@]}" > "${reading%.md}.here.md"
if cmp -s "$reading" "${reading%.md}.here.md"; then
    rm "${reading%.md}.here.md"
    echo "width commit: the reading made here is the machine's ($reading)"
else
    echo "width commit: the reading made here differs from the machine's:" >&2
    diff "$reading" "${reading%.md}.here.md" >&2 || true
fi
du -sh "${folders[@]}" | sed 's/^/width commit: /'
# the folders of one recipe from several calls: one reading of them all
for f in studies/width/gpu-*/; do
    f=${f%/}
    [ -f "$f/report.html" ] || continue
    recipe=${f#studies/width/gpu-} recipe=${recipe%%-*}
    same=(studies/width/gpu-"$recipe" studies/width/gpu-"$recipe"-*/)
    same=("${same[@]%/}")
    [ "$f" = studies/width/gpu-"$recipe" ] && [ ${#same[@]} -gt 1 ] && [ -d "${same[1]}" ] || continue
    echo "width commit: $recipe's seeds of every call, read together: python3 studies/width/read.py $(IFS=+; echo "${same[*]}")"
done
echo "width commit: now: git add studies/width/gpu-*; put the reading into studies/width/README.md"
echo "  (\"What it found\") and bench/RESULTS.md, with the machine and the commit of the bundle:"
tar -xzOf "$archive" --wildcards '*/setup.log' 2>/dev/null | grep -m1 '^bundle: built from' | sed 's/^/  /' || true
