#!/usr/bin/env bash
# The map of ARCHITECTURE.md holds: every #include of a part names only the
# parts it may use, and cod-server carries no trainer, kernel or tokenizer
# code (nm), nor OpenBLAS or OpenMP (ldd), and the trainer's programs
# link none of cod-prep's libraries.
cd "$(dirname "$0")/.." && . tests/lib.sh
# part: the parts it may include besides itself (build/ is generated code)
declare -A may=(
    [common]="" [spec]="common" [kernels]="" [trainer]="kernels spec common" [prep]="common"
    [schema]="common" [report]="" [api]="schema spec report common" [daemon]="api schema common"
    [worker]="trainer kernels spec common" [clients]="common"
)
bad=()
for part in "${!may[@]}"; do
    while IFS= read -r line; do
        file=${line%%:*} inc=${line#*#include \"} inc=${inc%%\"*} to=${inc%%/*}
        case " $part build ${may[$part]} " in *" $to "*) ;; *) bad+=("$file includes $inc") ;; esac
    done < <(grep -rn '^#include "' --include='*.c' --include='*.cc' --include='*.h' --include='*.cu' --include='*.cuh' "$part")
done
check "every #include keeps to ARCHITECTURE.md's table" test ${#bad[@]} -eq 0
for b in "${bad[@]}"; do echo "  $b"; done
check "the folders are the table's (no part left out of it)" \
    test "$(ls -d */ | tr -d / | grep -vxE 'bench|build|deploy|docs|scripts|studies|tests|var|bin' | sort | tr '\n' ' ')" = \
    "$(printf '%s\n' "${!may[@]}" | sort | tr '\n' ' ')"

# Every global symbol the trainer, the kernels and the tokenizers define
# (objects of sources that still exist: a build folder may hold older ones).
objs=()
for src in trainer/*.c kernels/*.c kernels/cpu/*.c prep/*.c kernels/cuda/*.cu; do
    for o in "build/rel/${src%.c}.o" "build/cuda/${src%.cu}.o"; do [ -f "$o" ] && objs+=("$o"); done
done
syms=$(nm -g --defined-only "${objs[@]}" | awk 'NF == 3 && $3 != "main" {print $3}' | sort -u)
check "the trainer, kernel and tokenizer objects are built (a check that sees none proves nothing)" \
    test "$(echo "$syms" | grep -c .)" -gt 100
leaked=$(comm -12 <(echo "$syms") <(nm -g --defined-only bin/cod-server | awk 'NF == 3 {print $3}' | sort -u))
check "cod-server defines none of their symbols" test -z "$leaked"
[ -n "$leaked" ] && echo "$leaked" | head -5 | sed 's/^/  /'
check "cod-server does not load OpenBLAS or OpenMP" bash -c "! ldd bin/cod-server | grep -E 'openblas|gomp'"
check "cod-worker does (the check can tell)" bash -c "ldd bin/cod-worker | grep -q openblas"
# cod-prep's readers and tokenizers stay in cod-prep: the trainer's programs
# (and the GPU bundle that carries their libraries) link none of theirs
# (libcurl may load libzstd for itself)
check "cod-train and cod-worker link no library of cod-prep's (sentencepiece, zstd, lzma, PCRE2)" \
    bash -c "! readelf -d bin/cod-train bin/cod-worker | grep NEEDED | grep -E 'sentencepiece|zstd|lzma|pcre2'"
check "cod-prep does (the check can tell)" bash -c "readelf -d bin/cod-prep | grep NEEDED | grep -q sentencepiece"
