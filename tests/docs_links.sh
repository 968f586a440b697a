#!/usr/bin/env bash
# The Markdown files as a reader follows them: every relative link and image
# in every tracked .md file (inline, and reference definitions) names a file
# or folder of the tree, and a #fragment names a heading of the target page
# as GitHub makes its anchors (lowercased, punctuation dropped, spaces to
# hyphens, a repeated heading's anchor suffixed -1, -2, ...) or an explicit
# <a name>/id. Links inside code are not links. And README.md stays the
# front page: at most 150 lines, its first commands `make demo` then
# `make test`.
cd "$(dirname "$0")/.." && . tests/lib.sh
command -v node >/dev/null || { echo "FAIL docs_links: needs node (scripts/deps.sh installs it)"; exit 1; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

# The tree as a clone has it: tracked files (a copy without git: the files
# outside what the build and the caches make).
if git ls-files >"$t/files" 2>/dev/null && [ -s "$t/files" ]; then :; else
    find . -type f -not -path './.git/*' -not -path './var/*' -not -path './build/*' \
        -not -path './bin/*' -not -path './tests/out/*' | sed 's|^\./||' >"$t/files"
fi
grep '\.md$' "$t/files" >"$t/md"
check "there are Markdown files to check" test -s "$t/md"

cat >"$t/links.js" <<'JS'
'use strict';
const fs = require('fs'), path = require('path');
const [filesList, mdList] = process.argv.slice(2);
const files = new Set(fs.readFileSync(filesList, 'utf8').split('\n').filter(Boolean));
const dirs = new Set();
for (const f of files) for (let d = path.posix.dirname(f); d !== '.'; d = path.posix.dirname(d)) dirs.add(d);
const stripCode = (line) => line.replace(/(`+)[\s\S]*?\1/g, '');
// the lines outside fenced code blocks, with their numbers
function prose(text) {
  const out = [];
  let fence = null;
  text.split('\n').forEach((line, i) => {
    const m = line.match(/^\s{0,3}(`{3,}|~{3,})/);
    if (fence) { if (m && m[1][0] === fence[0] && m[1].length >= fence.length) fence = null; return; }
    if (m) { fence = m[1]; return; }
    out.push([i + 1, line]);
  });
  return out;
}
// GitHub's anchors (github-slugger): the heading's text as rendered, lowercased,
// every character but letters, marks, digits, spaces, '-' and '_' dropped,
// each space a hyphen; a repeated one gets -1, -2, ...
function anchors(file) {
  const seen = new Map(), set = new Set();
  for (const [, line] of prose(fs.readFileSync(file, 'utf8'))) {
    for (const m of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) set.add(m[1]);
    const h = line.match(/^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/);
    if (!h) continue;
    const text = h[1]
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')   // a link: its text
      .replace(/<[^>]+>/g, '')                     // HTML tags
      .replace(/`/g, '');
    let slug = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N} _-]/gu, '').replace(/ /g, '-');
    const base = slug;
    if (seen.has(base)) { slug = base + '-' + seen.get(base); seen.set(base, seen.get(base) + 1); }
    else seen.set(base, 1);
    set.add(slug);
  }
  return set;
}
const cache = new Map();
const anchorsOf = (f) => { if (!cache.has(f)) cache.set(f, anchors(f)); return cache.get(f); };
let links = 0, bad = 0;
for (const md of fs.readFileSync(mdList, 'utf8').split('\n').filter(Boolean)) {
  for (const [n, raw] of prose(fs.readFileSync(md, 'utf8'))) {
    const line = stripCode(raw);
    const targets = [];
    for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1]);
    const def = line.match(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/);
    if (def) targets.push(def[1]);
    for (const target of targets) {
      if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;  // http:, mailto: ...
      links++;
      const hash = target.indexOf('#');
      const rel = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
      const frag = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
      const dest = rel === '' ? md : path.posix.normalize(path.posix.join(path.posix.dirname(md), rel)).replace(/\/$/, '');
      const where = `${md}:${n}: ${target}`;
      if (!files.has(dest) && !dirs.has(dest) && dest !== '.') {
        console.log(`FAIL ${where}: no file or folder ${dest} in the tree`); bad++; continue;
      }
      if (frag !== null && dest.endsWith('.md') && !anchorsOf(dest).has(frag)) {
        console.log(`FAIL ${where}: ${dest} has no heading whose anchor is #${frag}`); bad++;
      }
    }
  }
}
console.log(`${links} relative links, ${bad} broken`);
process.exit(bad ? 1 : 0);
JS
node "$t/links.js" "$t/files" "$t/md" >"$t/out"
rc=$?
grep '^FAIL' "$t/out"
check "every relative link of the Markdown files resolves, #anchors too ($(tail -n 1 "$t/out"))" test "$rc" = 0

lines=$(wc -l <README.md)
check "README.md is a front page: $lines lines, at most 150" test "$lines" -le 150
# the commands of its first code block, comments and blank lines aside
first=$(awk '/^```/ { if (open) exit; open = 1; next } open' README.md |
    sed 's/#.*//; s/[[:space:]]*$//' | grep -v '^$' | head -n 2 | paste -sd '|')
check "README.md's first commands are make demo, then make test (found: $first)" \
    test "$first" = "make demo|make test"
