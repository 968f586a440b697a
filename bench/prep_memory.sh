#!/usr/bin/env bash
# cod-prep's peak memory on inputs larger than its memory limit (make
# bench): 230 MB of text as one uncompressed Parquet file (larger than the
# limit itself) and as one .jsonl.zst, each run under ulimit -v 192 MiB
# with one malloc arena (as tests/prep_parquet.sh and tests/prep_formats.sh
# run them), gpt2 on 2 threads; the peak RSS and the times from GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."
t=$(mktemp -d /tmp/cod-bench-memory.XXXXXX)
trap 'rm -rf "$t"' EXIT
limit_kb=196608
node tests/parquet/big_documents.js >"$t/big.jsonl"
build/test-tools/parquet_write --group-rows 5000 "$t/big.parquet" text:string <"$t/big.jsonl"
zstd -q -1 --rm "$t/big.jsonl"
printf '%-11s %10s %14s %8s %8s\n' input "file MB" "peak RSS MiB" "wall s" "CPU s"
for f in big.parquet big.jsonl.zst; do
    (ulimit -v $limit_kb && MALLOC_ARENA_MAX=1 exec /usr/bin/time -f '%M %e %U %S' -o "$t/time" bin/cod-prep --quiet \
        --threads 2 --tokenizer gpt2 --val-fraction 0 --out "$t/out" "$t/$f") >"$t/log" 2>&1 || { cat "$t/log"; exit 1; }
    read -r rss wall user sys <"$t/time"
    printf '%-11s %10.1f %14.1f %8.1f %8.1f\n' "${f#big}" "$(($(stat -c %s "$t/$f") / 100000))e-1" "$((rss / 1024))" \
        "$wall" "$(echo "$user + $sys" | bc)"
done
echo "limit: ulimit -v $limit_kb KiB ($((limit_kb / 1024)) MiB)"
