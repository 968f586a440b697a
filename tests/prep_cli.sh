#!/usr/bin/env bash
# bin/cod-prep as a program: usage errors exit 2, input errors exit 1 with a
# message that names the file, and neither leaves a shard behind.
set -u
cd "$(dirname "$0")/.."
COD_PREP=${COD_PREP:-bin/cod-prep}
tmp=$(mktemp -d /tmp/cod-prep-cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
check() { # name expected-exit needle -- command...
    local name=$1 want=$2 needle=$3
    shift 4
    "$@" >"$tmp/out" 2>&1
    local rc=$?
    if [ "$rc" -eq "$want" ] && grep -qF -- "$needle" "$tmp/out" && ! ls "$tmp"/o/*.bin >/dev/null 2>&1; then
        echo "PASS $name"
    else
        echo "FAIL $name (exit $rc, wanted $want and \"$needle\")"
        sed 's/^/    /' "$tmp/out"
    fi
}
printf 'some text\n' >"$tmp/a.txt"
: >"$tmp/empty.txt"
check prep_cli_help 0 "usage: cod-prep" -- "$COD_PREP" --help
check prep_cli_no_args 2 "usage: cod-prep" -- "$COD_PREP"
check prep_cli_unknown_option 2 "unknown option --frobnicate" -- "$COD_PREP" --tokenizer bytes --out "$tmp/o" --frobnicate "$tmp/a.txt"
check prep_cli_bad_number 2 "'lots' is not a number" -- "$COD_PREP" --tokenizer bytes --out "$tmp/o" --shard-tokens lots "$tmp/a.txt"
check prep_cli_missing_file 1 "$tmp/nope.txt: No such file or directory" -- "$COD_PREP" --quiet --tokenizer bytes --out "$tmp/o" "$tmp/a.txt" "$tmp/nope.txt"
check prep_cli_empty_file 1 "$tmp/empty.txt: empty file" -- "$COD_PREP" --quiet --tokenizer bytes --out "$tmp/o" "$tmp/a.txt" "$tmp/empty.txt"
check prep_cli_unknown_tokenizer 1 "unknown tokenizer 'gpt5'" -- "$COD_PREP" --quiet --tokenizer gpt5 --out "$tmp/o" "$tmp/a.txt"
check prep_cli_no_tokenizer_files 1 "$tmp/r50k_base.tiktoken: No such file" -- "$COD_PREP" --quiet --tokenizer gpt2 --tokenizer-dir "$tmp" --out "$tmp/o" "$tmp/a.txt"
check prep_cli_ok 0 "1 documents" -- "$COD_PREP" --quiet --tokenizer bytes --val-fraction 0 --out "$tmp/ok" "$tmp/a.txt"
