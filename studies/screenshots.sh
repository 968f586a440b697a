#!/usr/bin/env bash
# The studies' screenshots (report.png beside each report.html under
# studies/, or under the folders named), made again from the reports:
# they are not committed, so that what a call to a GPU machine sends (the
# tree, within 64 MiB with the width bundle: tests/gpu_room.sh) does not
# carry 7 MB of pictures of pages the tree already holds. A picture newer
# than its page is kept; FORCE=1 makes every one again. Headless Chromium
# through scripts/cdp.js (CHROMIUM names the browser).
#   studies/screenshots.sh [DIR...]
set -euo pipefail
cd "$(dirname "$0")/.."
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$chromium" ] && command -v node >/dev/null ||
    { echo "screenshots: no chromium or node here (scripts/deps.sh test installs them)" >&2; exit 1; }
[ $# -gt 0 ] || set -- studies
made=0 kept=0 failed=0
while IFS= read -r -d '' page; do
    png=${page%.html}.png
    if [ -z "${FORCE:-}" ] && [ "$png" -nt "$page" ]; then
        kept=$((kept + 1))
        continue
    fi
    if CHROMIUM=$chromium node scripts/cdp.js screenshot "$page" "$png"; then
        made=$((made + 1))
    else
        echo "screenshots: $page: no picture" >&2
        failed=$((failed + 1))
    fi
done < <(find "$@" -name report.html -print0 | sort -z)
echo "screenshots: $made made, $kept kept (newer than their page), $failed failed"
[ "$failed" -eq 0 ]
