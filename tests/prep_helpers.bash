# Helpers for the cod-prep tests that tokenize the same documents from
# several formats (tests/prep_formats.sh, tests/prep_parquet.sh): a run of
# $COD_PREP into $t/OUT, and the comparison of two runs' shards. Sourced,
# not a test.
prep() { # OUT, then cod-prep's arguments
    local out=$1; shift
    "$COD_PREP" --quiet --tokenizer gpt2 --out "$t/$out" "$@" >"$t/$out.log" 2>&1
}
same_shards() { # A B: the same shard files, byte for byte, and at least one
    local a=$t/$1 b=$t/$2 f n=0
    for f in "$a"/train_*.bin "$a"/val_*.bin; do
        [ -f "$f" ] || continue
        cmp -s "$f" "$b/$(basename "$f")" || return 1
        n=$((n + 1))
    done
    [ "$n" -ge 2 ] && [ "$(ls "$b"/*.bin | wc -l)" -eq "$n" ]
}
