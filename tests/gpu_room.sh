#!/usr/bin/env bash
# Room in the width call: a call to the GPU machine sends the tree (tracked
# files and untracked ones not ignored) and what it carries, at most
# 64 MiB; the width call carries the width bundle (.gpu/width.tar.xz,
# whose size tests/gpu/bundle.sh --width records in
# tests/gpu/width-bundle.txt, so that this check runs where no bundle is
# built; a bundle here counts instead). It fails once the two leave less
# than 4 MiB, the room the next call's code and results need, and when a
# study's screenshot (report.png, made again by studies/screenshots.sh) is
# tracked again.
cd "$(dirname "$0")/.." && . tests/lib.sh
limit=$((64 * 1024 * 1024)) room=$((4 * 1024 * 1024))
record=tests/gpu/width-bundle.txt
bundle=$(sed -n 's/^width\.tar\.xz \([0-9]*\) bytes.*/\1/p' "$record" 2>/dev/null)
check "the width bundle's size is recorded ($record)" test -n "$bundle"
[ -f .gpu/width.tar.xz ] && bundle=$(stat -c %s .gpu/width.tar.xz)
tree=$(git ls-files -z --cached --others --exclude-standard | du --files0-from=- -cb 2>/dev/null | tail -1 | cut -f1)
left=$((limit - tree - ${bundle:-0}))
echo "  the tree $((tree / 1024)) KiB, the width bundle $((${bundle:-0} / 1024)) KiB: $((left / 1024)) KiB of 64 MiB left"
check "the width call leaves at least 4 MiB of the 64 MiB a call sends ($((left / 1024)) KiB)" test "$left" -ge "$room"
shots=$(git ls-files 'studies/*report.png' | head -3)
check "no study's screenshot tracked (studies/screenshots.sh makes them): ${shots:-none}" test -z "$shots"
