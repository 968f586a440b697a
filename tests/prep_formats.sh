#!/usr/bin/env bash
# cod-prep's inputs as corpora ship them: the same documents as text files,
# as JSON lines (.jsonl and .json, plain, .gz, .zst and .xz, written by the
# usual tools, split over files in a directory tree, the text at a nested
# key) give the same shards. Lines without text are counted, the first
# ten reported with file and line, the rest as a count, and --strict stops
# at the first. The held-out documents are those a SHA-256 of their text
# picks (worked out here with sha256sum), whatever else is given. A
# .jsonl.zst larger than the process's memory limit is read whole.
cd "$(dirname "$0")/.." && . tests/lib.sh
COD_PREP=${COD_PREP:-bin/cod-prep}
t=$(mktemp -d /tmp/cod-prep-formats.XXXXXX)
trap 'rm -rf "$t"' EXIT
need_corpus

# The documents: the default corpus's held-out Brown samples and speeches
# and a few of its books, and some that JSON must escape.
mkdir -p "$t/text"
ls var/corpus/default/val/* | head -40 | while read -r f; do cp "$f" "$t/text/$(basename "$f")"; done
cp var/corpus/default/train/gutenberg-austen-* "$t/text/" 2>/dev/null
printf 'Quotes "like these", a back\\slash, a tab\there,\nand \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 beyond ASCII.\r\n' >"$t/text/zz-escapes.txt"
printf '\x01 control characters \x7f and a form feed \x0c too' >"$t/text/zz-controls.txt"
# JSON lines of those documents, in name order: FILE.jsonl (all), and
# parts/ split over a tree; with the text at "text" and at "meta.body"
node - "$t" <<'JS'
const fs = require('fs'), path = require('path');
const t = process.argv[2], dir = path.join(t, 'text');
const names = fs.readdirSync(dir).sort();
const line = (f, i) => {
    const text = fs.readFileSync(path.join(dir, f)).toString('utf8');
    return JSON.stringify({id: i, text, meta: {source: f, body: text}});
};
fs.writeFileSync(path.join(t, 'all.jsonl'), names.map(line).join('\n') + '\n');
fs.mkdirSync(path.join(t, 'parts/b'), {recursive: true});
const cut = [0, 10, 25, names.length];
const files = ['parts/a.jsonl', 'parts/b/c.jsonl', 'parts/d.json'];
files.forEach((f, k) => fs.writeFileSync(path.join(t, f), names.slice(cut[k], cut[k + 1]).map(line).join('\n') + '\n'));
JS
check "the JSON lines were written" test -s "$t/all.jsonl"
(cd "$t" && gzip -k all.jsonl && zstd -q -k all.jsonl && xz -k all.jsonl && cp all.jsonl all.json &&
    gzip parts/a.jsonl && zstd -q --rm parts/b/c.jsonl && xz parts/d.json)
ls "$t"/parts/a.jsonl.gz "$t"/parts/b/c.jsonl.zst "$t"/parts/d.json.xz >/dev/null || echo "FAIL compressing the inputs"

. tests/prep_helpers.bash
prep text-out "$t/text"
check "the text files are tokenized, some held out" grep -q '"val_000000.bin"' "$t/text-out/meta.json"
for input in all.jsonl all.json all.jsonl.gz all.jsonl.zst all.jsonl.xz parts; do
    prep "out-$input" "$t/$input" || cat "$t/out-$input.log"
    check "$input: the same shards as the text files" same_shards text-out "out-$input"
done
prep nested --text-key meta.body "$t/all.jsonl.zst"
check "--text-key meta.body: the same shards" same_shards text-out nested
check "meta.json names the key" grep -q '"text_key": "meta.body"' "$t/nested/meta.json"

# Held out: a document whose text, whitespace runs made one space and the
# ends trimmed, has a SHA-256 whose first 8 bytes are below 0.1 * 2^64
# (0x1999999999999a00, 0.1 as a double). sources.txt says where each went.
expected_split() { # FILE
    local h
    h=$(tr -s ' \t\n\r\v\f' ' ' <"$1" | sed '1s/^ //; $s/ $//' | sha256sum | cut -c1-16)
    if [[ "$h" < "1999999999999a00" ]]; then echo val; else echo train; fi
}
splits_agree() { # OUT: every text file's split in OUT/sources.txt is its hash's
    local f want got bad=0
    for f in "$t"/text/*; do
        want=$(expected_split "$f")
        got=$(awk -v p="$f" '$5 == p {print $4}' "$t/$1/sources.txt")
        [ "$want" = "$got" ] || { echo "  $f: $got, its hash says $want"; bad=1; }
    done
    return $bad
}
check "each document is held out as its text's SHA-256 says" splits_agree text-out
# more inputs, given before: no document of the first run moves
mkdir -p "$t/more"
for i in $(seq 1 30); do printf 'Another document, number %d, added later.\n' "$i" >"$t/more/added-$i.txt"; done
prep more "$t/more" "$t/text"
check "with inputs added before them, the documents stay where they were" splits_agree more
check "and the added ones are split too" grep -q ' val .*/more/added-' "$t/more/sources.txt"

# Bad lines: counted, the first ten reported with file and line, the rest counted
{
    printf '{"text": "a good line"}\n{"text": "cut short\n{"title": "no text"}\n{"text": 7}\n'
    printf '{"text": "\xff"}\n{"text": ""}\n\n'
    for i in $(seq 1 20); do printf '{"text": null}\n'; done
    printf '{"text": "the last good line"}\n'
} >"$t/bad.jsonl"
"$COD_PREP" --quiet --tokenizer bytes --val-fraction 0 --out "$t/bad" "$t/bad.jsonl" >"$t/bad.log" 2>&1
check "bad lines: the run goes on" test $? -eq 0
check "bad lines: the first is reported with its file and line" \
    grep -q "skipped $t/bad.jsonl:2: malformed JSON: unterminated string" "$t/bad.log"
check "bad lines: a missing key, a number, invalid UTF-8, an empty text, a blank line" bash -c "
    grep -q 'bad.jsonl:3: no \"text\" key' '$t/bad.log' && grep -q 'bad.jsonl:4: \"text\" is a number, not a string' '$t/bad.log' &&
    grep -q 'bad.jsonl:5: invalid UTF-8' '$t/bad.log' && grep -q 'bad.jsonl:6: \"text\" is empty' '$t/bad.log' &&
    grep -q 'bad.jsonl:7: malformed: a blank line' '$t/bad.log'"
check "bad lines: ten reported, then the rest counted" bash -c "
    [ \$(grep -c '^cod-prep: skipped ' '$t/bad.log') = 10 ] && grep -q '\\.\\.\\. and 16 more lines skipped' '$t/bad.log'"
check "bad lines: the summary counts each kind" \
    grep -q '2 documents: 2 kept, 0 duplicates dropped; 26 lines without text skipped (2 malformed, 1 missing key, 21 not a string, 1 invalid UTF-8, 1 empty text)' "$t/bad.log"
"$COD_PREP" --quiet --strict --tokenizer bytes --val-fraction 0 --out "$t/strict" "$t/bad.jsonl" >"$t/strict.log" 2>&1
check "--strict: exit 1 at the first bad line, naming it, and no output" bash -c "[ $? = 1 ] &&
    grep -q 'bad.jsonl:2: malformed JSON: unterminated string at column 20 (--strict' '$t/strict.log' && ! ls '$t'/strict/*.bin 2>/dev/null"

# A duplicate, whitespace aside, is kept once and counted.
printf 'A  document\n' >"$t/dup1.txt"
printf '{"text": "A document"}\n{"text": " A\\tdocument\\n"}\n{"text": "another"}\n' >"$t/dup2.jsonl"
"$COD_PREP" --quiet --tokenizer bytes --val-fraction 0 --out "$t/dup" "$t/dup1.txt" "$t/dup2.jsonl" >"$t/dup.log" 2>&1
check "a document met again is kept once, and counted" bash -c "
    grep -q '4 documents: 2 kept, 2 duplicates dropped' '$t/dup.log' && grep -q '\"duplicates\": 2' '$t/dup/meta.json' &&
    grep -q '\"documents\": 2,' '$t/dup/meta.json'"

# Read whole under a memory limit smaller than its text: 300 MB of JSON
# lines, 1 MB compressed, under ulimit -v 192 MB. glibc sets 64 MB of
# address space aside for each thread's malloc arena, which ulimit -v
# counts; one shared arena (MALLOC_ARENA_MAX=1) makes the limit measure what
# cod-prep holds. The same text as one document (a .txt.zst, which is held
# whole) fails under that limit: the limit bites.
limit_kb=196608
node -e '
const base = "The committee of the city considers its budget for the coming year, line by line. ";
let bytes = 0, i = 0;
const w = process.stdout;
(function go() {
    while (bytes < 300e6) {
        const s = JSON.stringify({id: i, text: "Document " + i + ". " + base.repeat(10 + i % 30) + "It ends, " + i + "."}) + "\n";
        bytes += s.length; i++;
        if (!w.write(s)) return w.once("drain", go);
    }
    require("fs").writeFileSync(process.argv[1], i + " " + bytes + "\n");
    w.end();
})();' "$t/big.count" | zstd -q -1 -o "$t/big.jsonl.zst"
read -r lines bytes <"$t/big.count"
check "the input is larger than the limit ($bytes bytes of JSON lines, limit $((limit_kb * 1024)))" \
    test "$bytes" -gt $((limit_kb * 1024))
(ulimit -v $limit_kb && MALLOC_ARENA_MAX=1 exec "$COD_PREP" --quiet --threads 2 --tokenizer gpt2 --val-fraction 0 \
    --out "$t/big" "$t/big.jsonl.zst") >"$t/big.log" 2>&1
rc=$?
[ $rc -ne 0 ] && tail -3 "$t/big.log"
check "under ulimit -v, the .jsonl.zst is tokenized whole: every line a document" bash -c "
    [ $rc = 0 ] && grep -q '\"documents\": $lines,' '$t/big/meta.json'"
zstd -dc "$t/big.jsonl.zst" | head -c $((limit_kb * 1024 + 1000000)) | zstd -q -1 -o "$t/big.txt.zst"
(ulimit -v $limit_kb && MALLOC_ARENA_MAX=1 exec "$COD_PREP" --quiet --threads 2 --tokenizer gpt2 --val-fraction 0 \
    --out "$t/bigtext" "$t/big.txt.zst") >"$t/bigtext.log" 2>&1
check "under the same limit, the text held whole as one document fails, saying so" \
    grep -q 'big.txt.zst: out of memory for .* bytes (one document or line)' "$t/bigtext.log"

# Usage errors
"$COD_PREP" --tokenizer bytes --split sentences:5 --out "$t/u" "$t/dup1.txt" >"$t/u.log" 2>&1
check "--split wants paragraphs:N" bash -c "[ $? = 2 ] && grep -q \"'sentences:5' is not paragraphs:N\" '$t/u.log'"
"$COD_PREP" --quiet --tokenizer gpt2 --tokenizer-model "$t/x.model" --out "$t/u" "$t/dup1.txt" >"$t/u.log" 2>&1
check "--tokenizer-model is for sentencepiece" grep -q 'a tokenizer model file is for --tokenizer sentencepiece, not gpt2' "$t/u.log"
"$COD_PREP" --quiet --tokenizer bytes --text-key a..b --out "$t/u" "$t/dup2.jsonl" >"$t/u.log" 2>&1
check "a text key with an empty part is refused" grep -q "text key 'a..b' has an empty part" "$t/u.log"
