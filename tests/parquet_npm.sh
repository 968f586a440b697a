#!/usr/bin/env bash
# cod's Parquet reader against an independent implementation: parquet-wasm
# (arrow-rs, pinned by tests/parquet/package-lock.json) writes files in each
# codec (UNCOMPRESSED, SNAPPY, GZIP, ZSTD), with data pages v1 and v2, in
# dictionary and plain encodings (and a dictionary that fills up and falls
# back to PLAIN), with nullable strings, INT64, INT32, BOOLEAN (RLE in one),
# DOUBLE, a LIST of strings and a struct of lists, over several row groups
# and pages; hyparquet reads them too, and both give the rows written, row
# for row. PLAIN_DICTIONARY (pyarrow's format 1.0), which arrow-rs does not
# write, comes from the tests' own writer (tests/parquet/writer.c), read by
# both. MMLU-, ARC- and HellaSwag-shaped files give the same JSON values as
# their JSON-lines twins (the rows interface a task loader reads), and
# cod-analyze eval scores them as the same items. What
# cod does not read (a DELTA encoding, LZ4 and BROTLI, deeper nesting, a
# MAP, a timestamp, a date, a decimal) is refused, naming what it is.
cd "$(dirname "$0")/.." && . tests/lib.sh
N=var/cache/parquet-npm/node_modules
if [ ! -d "$N/parquet-wasm" ] || [ ! -x build/test-tools/parquet_dump ] || [ ! -x build/test-tools/parquet_write ]; then
    echo "FAIL parquet npm: $N or build/test-tools/parquet_{dump,write} missing (scripts/deps.sh test; make build-tests)"
    exit 1
fi
t=$(mktemp -d /tmp/cod-parquet-npm.XXXXXX)
trap 'rm -rf "$t"' EXIT
ln -s "$PWD/$N" "$t/node_modules"
cp tests/parquet/npm.mjs "$t/"
npm() { node "$t/npm.mjs" "$@"; }
DUMP=build/test-tools/parquet_dump

mkdir -p "$t/m"
npm matrix "$t/m" >"$t/names" 2>"$t/matrix.err"
check "parquet-wasm wrote the 17 files, each with its codec, page version and encodings" \
    bash -c "[ \$(wc -l <'$t/names') = 17 ] || { cat '$t/matrix.err'; false; }"
# each file: cod's rows, cod's strings of column s (cod-prep's way in) and
# hyparquet's rows are the rows written
names=$(cat "$t/names")
for name in $names; do
    $DUMP "$t/m/$name.parquet" >"$t/m/$name.cod" 2>&1
    $DUMP --text s "$t/m/$name.parquet" >"$t/m/$name.s" 2>&1
done
npm verify "$t/m" $names

# PLAIN_DICTIONARY (v1) and RLE_DICTIONARY (v2) strings, bit-packed indices,
# from the tests' writer
mkdir -p "$t/d"
node -e 'for (let i = 0; i < 500; i++) console.log(JSON.stringify({text: i % 17 == 5 ? null : ["one", "two", "", "δύο 😀", "a longer text " + (i % 30)][i % 5], id: i}))' >"$t/d.jsonl"
names=
for codec in none snappy gzip zstd; do
    for v in v1 v2; do
        f=$t/d/dict-$codec-$v
        build/test-tools/parquet_write --dict --codec $codec $([ $v = v2 ] && echo --v2) --group-rows 200 --page-bytes 300 \
            "$f.parquet" text:string id:int64 <"$t/d.jsonl"
        cp "$t/d.jsonl" "$f.jsonl"
        $DUMP "$f.parquet" >"$f.cod" 2>&1
        names="$names dict-$codec-$v"
    done
done
npm verify "$t/d" $names

# The task layouts the Hub ships, against their JSON-lines twins
mkdir -p "$t/s"
npm shaped "$t/s" >/dev/null
for n in mmlu arc hellaswag; do
    check "$n-shaped: the same JSON values as its JSON-lines twin, row for row" bash -c "
        $DUMP --against '$t/s/$n.jsonl' '$t/s/$n.parquet' | grep -q '^the same [0-9]* rows'"
done
# ... and cod-analyze eval scores each as the same items: a tiny model's
# eval.json and every sample (prompt, choices, log-likelihoods) the same
# from the Parquet file as from its twin
cat > "$t/spec.json" <<JSON
{"model": {"dim": 32, "n_layers": 2, "n_heads": 2, "ffn_dim": 64},
 "data": {"train": "var/data/default-bytes/train_*.bin", "val": "var/data/default-bytes/val_*.bin"},
 "train": {"steps": 2, "seq_len": 128, "batch_seqs": 2, "micro_batch": 2, "warmup": 1},
 "eval": {"every": 0, "tokens": 256}, "stats": {"every": 0}}
JSON
need_corpus
bin/cod-train "$t/spec.json" --out "$t/run" --threads 2 >"$t/train.log" 2>&1
for n in mmlu arc hellaswag; do
    for f in parquet jsonl; do
        bin/cod-analyze eval "$t/run/checkpoints/step_00000002" --threads 2 --limit 20 \
            --task "$t/s/$n.$f" --out "$t/ev-$n-$f" >"$t/ev-$n-$f.txt" 2>&1
    done
    check "$n.parquet through cod-analyze eval: the same items, prompts and scores as $n.jsonl" \
        bash -c "test -s '$t/ev-$n-parquet/samples_$n.jsonl' &&
                 cmp '$t/ev-$n-parquet/samples_$n.jsonl' '$t/ev-$n-jsonl/samples_$n.jsonl' &&
                 grep -q '^$n .* 20 ' '$t/ev-$n-parquet.txt'"
done
$DUMP "$t/s/arc.parquet" choices answerKey | head -1 >"$t/arc-cols"
check "the columns named, in the order named" grep -qF '{"choices":{"text":["option 0 of 0",' "$t/arc-cols"
check "an ARC row's choices are an object of two arrays" grep -qF '"label":["A","B","C"]},"answerKey":"A"}' "$t/arc-cols"
$DUMP "$t/s/mmlu.parquet" answer nope >"$t/nope.out" 2>&1
check "a missing column is an error naming it and the columns there" \
    grep -q "mmlu.parquet: no column 'nope' (columns there: question, subject, choices, answer)" "$t/nope.out"

# What cod does not read, written by parquet-wasm: refused with the file,
# the column and what it uses; the other column of the same file still read
mkdir -p "$t/r"
npm refused "$t/r" >/dev/null
refused() { # NAME, what the error must say
    $DUMP "$t/r/$1.parquet" >"$t/r/$1.out" 2>&1
    [ $? = 1 ] && grep -q -- "$t/r/$1.parquet: .*$2" "$t/r/$1.out" || { cat "$t/r/$1.out"; return 1; }
}
check "DELTA_BINARY_PACKED: refused, naming the column and the encoding" \
    refused delta "row group 0, column 'n': page at byte [0-9]*: values in the encoding DELTA_BINARY_PACKED, which cod does not read"
check "LZ4_RAW: refused, naming the codec" refused lz4 "column 'ok': compressed with the codec LZ4_RAW (7), which cod does not read"
check "BROTLI: refused, naming the codec" refused brotli "compressed with the codec BROTLI (4), which cod does not read"
check "a list of lists: refused" refused listlist "column 'n' is a list of lists or structs (nesting deeper than one level)"
check "a list of structs: refused" refused liststruct "column 'n' is a list of lists or structs"
check "a struct inside a struct: refused" refused structstruct "column 'n.inner' is a struct inside a struct"
check "a MAP: refused" refused map "column 'n' is a MAP, which cod does not read"
check "a timestamp: refused" refused timestamp "column 'n' is an INT64 that is not an integer (a timestamp"
check "a date: refused" refused date "column 'n' is an INT32 that is not an integer (a date"
check "a decimal: refused" refused decimal "column 'n' is an INT64 that is not an integer (.*a decimal)"
check "the file's other column is still read" bash -c "$DUMP '$t/r/map.parquet' ok | head -1 | grep -qF '{\"ok\":\"row 0\"}'"
