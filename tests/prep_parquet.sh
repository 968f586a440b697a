#!/usr/bin/env bash
# cod-prep on Parquet, as FineWeb and the Hugging Face Hub ship it: a
# FineWeb-shaped file (text, id, dump, url, date, file_path, language,
# language_score, token_count; snappy, row groups of 16 documents, written
# by parquet-wasm) gives the same shards as the same documents as JSON
# lines, and so does a directory tree of such files, and the text at a
# nested key (--text-key meta.body). A row whose text is null or empty is
# counted and skipped, reported with its row; --strict stops at it.
# meta.json records what was read. A truncated file, a footer that lies
# about offsets, a codec cod does not read and a missing column are each
# an error naming the problem, and leave no output. A Parquet file larger
# than the process's memory limit is read whole.
cd "$(dirname "$0")/.." && . tests/lib.sh
COD_PREP=${COD_PREP:-bin/cod-prep}
N=var/cache/parquet-npm/node_modules
if [ ! -d "$N/parquet-wasm" ] || [ ! -x build/test-tools/parquet_write ]; then
    echo "FAIL prep parquet: $N or build/test-tools/parquet_write missing (scripts/deps.sh test; make build-tests)"
    exit 1
fi
t=$(mktemp -d /tmp/cod-prep-parquet.XXXXXX)
trap 'rm -rf "$t"' EXIT
ln -s "$PWD/$N" "$t/node_modules"
cp tests/parquet/npm.mjs "$t/"
need_corpus

# The documents: the default corpus's held-out files, as JSON lines, with
# a null and an empty text among them
node - "$t" <<'JS'
const fs = require('fs'), path = require('path');
const dir = 'var/corpus/default/val', t = process.argv[2];
const docs = fs.readdirSync(dir).sort().slice(0, 60).map(f => fs.readFileSync(path.join(dir, f), 'utf8'));
const rows = docs.map(text => ({text}));
rows.splice(7, 0, {text: null}), rows.splice(20, 0, {text: ''});
fs.writeFileSync(path.join(t, 'all.jsonl'), rows.map(r => JSON.stringify(r) + '\n').join(''));
fs.mkdirSync(path.join(t, 'parts/b'), {recursive: true});
const cut = [0, 15, 40, rows.length], files = ['parts/a.jsonl', 'parts/b/c.jsonl', 'parts/d.jsonl'];
files.forEach((f, k) => fs.writeFileSync(path.join(t, f), rows.slice(cut[k], cut[k + 1]).map(r => JSON.stringify(r) + '\n').join('')));
JS
node "$t/npm.mjs" fineweb "$t/all.jsonl" "$t/fineweb.parquet" nested
for p in a b/c d; do node "$t/npm.mjs" fineweb "$t/parts/$p.jsonl" "$t/parts/$p.parquet" && rm "$t/parts/$p.jsonl"; done
check "parquet-wasm wrote the FineWeb-shaped files" test -s "$t/fineweb.parquet" -a -s "$t/parts/b/c.parquet"

. tests/prep_helpers.bash
prep jsonl "$t/all.jsonl"
check "the JSON lines are tokenized, some held out" grep -q '"val_000000.bin"' "$t/jsonl/meta.json"
prep pq "$t/fineweb.parquet" || cat "$t/pq.log"
check "the FineWeb-shaped Parquet file: the same shards as its JSON lines" same_shards jsonl pq
prep parts "$t/parts" || cat "$t/parts.log"
check "a directory tree of Parquet files: the same shards" same_shards jsonl parts
prep nested --text-key meta.body "$t/fineweb.parquet" || cat "$t/nested.log"
check "--text-key meta.body (a struct's field): the same shards" same_shards jsonl nested
check "null and empty texts are reported with their rows" bash -c "
    grep -q 'skipped $t/fineweb.parquet: row 7: \"text\" is null' '$t/pq.log' &&
    grep -q 'skipped $t/fineweb.parquet: row 20: \"text\" is empty' '$t/pq.log'"
check "and counted, as a JSON line without text is" bash -c "
    grep -q '60 documents: 60 kept, 0 duplicates dropped; 2 lines without text skipped (1 not a string, 1 empty text)' '$t/pq.log' &&
    grep -q '\"not a string\": 1,' '$t/pq/meta.json' && grep -q '\"empty text\": 1' '$t/pq/meta.json'"
check "meta.json records what was read" bash -c "
    node -e 'const m = require(process.argv[1]).input.parquet;
             process.exit(m.files === 3 && m.row_groups === 5 && m.rows === 62 && m.columns_read.join() === \"text\" ? 0 : 1)' \
        '$t/parts/meta.json'"
check "sources.txt names each Parquet file by its sha256" bash -c "
    grep -q \"^\$(sha256sum '$t/parts/b/c.parquet' | cut -c1-64) .* $t/parts/b/c.parquet\$\" '$t/parts/sources.txt'"
"$COD_PREP" --quiet --strict --tokenizer gpt2 --out "$t/strict" "$t/fineweb.parquet" >"$t/strict.log" 2>&1
check "--strict: exit 1 at the first row without text, naming it" bash -c "[ $? = 1 ] &&
    grep -q 'fineweb.parquet: row 7: \"text\" is null (--strict stops at the first row without text)' '$t/strict.log'"

# Bad files: an error naming the file and the problem, no output
build/test-tools/parquet_write --codec snappy --group-rows 20 "$t/good.parquet" text:string <"$t/all.jsonl"
fails() { # NAME, PATTERN, then cod-prep's inputs and options
    local name=$1 pattern=$2; shift 2
    "$COD_PREP" --quiet --tokenizer gpt2 --out "$t/bad-$name" "$@" >"$t/bad-$name.log" 2>&1
    local rc=$?
    [ $rc = 1 ] && grep -q -- "$pattern" "$t/bad-$name.log" && ! ls "$t/bad-$name"/*.bin >/dev/null 2>&1 ||
        { echo "  exit $rc: $(cat "$t/bad-$name.log")"; return 1; }
}
head -c $(($(stat -c %s "$t/good.parquet") - 100)) "$t/good.parquet" >"$t/truncated.parquet"
check "a truncated file: an error saying so" fails truncated "truncated.parquet: no PAR1 at its end (a truncated file?)" \
    "$t/truncated.parquet"
build/test-tools/parquet_write --codec snappy --group-rows 20 --lie 100000000 "$t/lies.parquet" text:string <"$t/all.jsonl"
check "a footer that lies about offsets: an error naming the row group, the column and the bytes" fails lies \
    "lies.parquet: row group 0, column 'text': the footer says its pages lie at bytes 100000004 to .*, outside the file's data" \
    "$t/lies.parquet"
build/test-tools/parquet_write --codec-id 7 "$t/lz4.parquet" text:string <"$t/all.jsonl"
check "a codec cod does not read: an error naming it" fails lz4 \
    "lz4.parquet: row group 0, column 'text': compressed with the codec LZ4_RAW (7), which cod does not read" "$t/lz4.parquet"
build/test-tools/parquet_write --codec-id 42 "$t/c42.parquet" text:string <"$t/all.jsonl"
check "an unknown codec: an error naming its number" fails c42 "compressed with the codec unknown (42)" "$t/c42.parquet"
check "a missing column: an error naming it and the columns there" fails missing \
    "fineweb.parquet: no column 'body' (columns there: text, id, dump, url, date, file_path, language, language_score, token_count, meta)" \
    --text-key body "$t/fineweb.parquet"
check "a column that is not a string: an error saying what it is" fails number \
    "fineweb.parquet: column 'language_score' is DOUBLE, not a string" --text-key language_score "$t/fineweb.parquet"
check "a struct as the text: an error saying so" fails struct "column 'meta' is a struct, not a string" \
    --text-key meta "$t/fineweb.parquet"
cp "$t/good.parquet" "$t/z.parquet" && gzip "$t/z.parquet"
check "a compressed Parquet file: an error saying why" fails gz "z.parquet.gz: a Parquet file compresses its own pages" \
    "$t/z.parquet.gz"
printf 'PAR1 not really' >"$t/fake.parquet"
check "a file that is no Parquet: an error saying so" fails fake "fake.parquet: .*(a truncated file?)" "$t/fake.parquet"

# Read whole under a memory limit smaller than the file: 230 MB of text
# in an uncompressed Parquet file, under ulimit -v 192 MB (one malloc
# arena: see tests/prep_formats.sh).
limit_kb=196608
node tests/parquet/big_documents.js "$t/big.count" | build/test-tools/parquet_write --group-rows 5000 "$t/big.parquet" text:string
rows=$(cat "$t/big.count") size=$(stat -c %s "$t/big.parquet")
check "the Parquet file is larger than the limit ($size bytes, limit $((limit_kb * 1024)))" test "$size" -gt $((limit_kb * 1024))
(ulimit -v $limit_kb && MALLOC_ARENA_MAX=1 exec "$COD_PREP" --quiet --threads 2 --tokenizer gpt2 --val-fraction 0 \
    --out "$t/big" "$t/big.parquet") >"$t/big.log" 2>&1
rc=$?
[ $rc -ne 0 ] && tail -3 "$t/big.log"
check "under ulimit -v, the Parquet file is tokenized whole: every row a document" bash -c "
    [ $rc = 0 ] && grep -q '\"documents\": $rows,' '$t/big/meta.json'"
