#!/usr/bin/env bash
# The map of ARCHITECTURE.md holds: every #include of a part names only the
# parts it may use, no two files of a part call each other in a circle (nm,
# tsort), cod-server carries no trainer, kernel or tokenizer code (nm),
# nor OpenBLAS or OpenMP (ldd), nor the tokenizers' libraries (readelf).
cd "$(dirname "$0")/.." && . tests/lib.sh
# part: the parts it may include besides itself (build/ is generated code)
declare -A may=(
    [common]="" [parquet]="common" [spec]="common" [kernels]="" [trainer]="kernels spec common"
    [text]="common" [eval]="trainer kernels spec text parquet common" [prep]="text parquet common"
    [schema]="common" [views]="schema common" [report]="spec" [api]="views schema spec report common"
    [daemon]="api schema common"
    [sft]="eval trainer kernels spec text common"
    [worker]="sft eval trainer kernels spec text common" [clients]="common"
    [analyze]="eval trainer kernels spec text common"
    [cmd]="clients daemon api views report schema worker analyze sft prep eval text trainer kernels spec parquet common"
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
# every program's entry is in cmd/, so that a part's folder holds no program of its own
mains=$(grep -rlE '^int main\(' --include='*.c' --include='*.cc' --include='*.cu' "${!may[@]}" | grep -v '^cmd/')
check "every main is in cmd/ ($(ls cmd/*.c | wc -l) programs)" test -z "$mains" -a "$(ls cmd/*.c | wc -l)" -ge 6
[ -n "$mains" ] && echo "$mains" | sed 's/^/  main outside cmd\/: /'

# Every global symbol the trainer, the kernels, the tokenizers, the
# evaluation and the instruction data define (objects of sources that still
# exist: a build folder may hold older ones).
objs=()
for src in trainer/*.c kernels/*.c kernels/cpu/*.c text/*.c eval/*.c sft/*.c prep/*.c parquet/*.c kernels/cuda/*.cu; do
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
# the tokenizers' and Parquet's libraries stay out of the server (libcurl, which the
# server does not link, may load libzstd for itself)
check "cod-server links no library of the tokenizers' (sentencepiece, ICU, zstd, lzma, PCRE2, snappy)" \
    bash -c "! readelf -d bin/cod-server | grep NEEDED | grep -E 'sentencepiece|icu|zstd|lzma|pcre2|snappy'"
check "cod-prep and cod-worker do (the check can tell)" \
    bash -c "readelf -d bin/cod-prep | grep NEEDED | grep -q sentencepiece && readelf -d bin/cod-worker | grep NEEDED | grep -q sentencepiece"

# Calls between the files of a part go one way: each object's undefined
# symbols resolved to the object of the same folder that defines them make
# the edges "caller callee", and tsort finds any circle among them (a file
# calling into one that calls it back, directly or around several). text/
# is left out: its tokenizer registry (tokenizer.c) and the tokenizers it
# lists call each other. In report/, schema/ and views/ every such call is
# also one that the caller's row of ARCHITECTURE.md's tables allows.
calls() { # objects of one folder: "caller callee" per file calling another
    local o
    for o in "$@"; do
        nm -g --defined-only "$o" | awk -v f="$o" 'NF == 3 {print "D", f, $3}'
        nm -u "$o" | awk -v f="$o" '{print "U", f, $NF}'
    done | awk '$1 == "D" {def[$3] = $2} $1 == "U" {use[++n] = $2 " " $3}
        END {for (i = 1; i <= n; i++) {split(use[i], u, " ")
                 if ((u[2] in def) && def[u[2]] != u[1]) print u[1], def[u[2]]}}' |
        sed 's|build/rel/||g; s|\.o\b||g' | sort -u
}
declare -A may_call=()
while IFS='|' read -r _ file _ callees _; do
    file=$(tr -d '` ' <<< "$file")
    may_call[${file%.c}]=$(tr -d ',—' <<< "$callees")
done < <(grep -E '^ *\| `(report|schema|views)/[a-z_]+\.c` \|' ARCHITECTURE.md)
loops=() n_calls=0 unlisted=() barred=()
for dir in $(find "${!may[@]}" -name '*.c' ! -path 'text/*' -printf '%h\n' | sort -u); do
    objs=()
    for src in "$dir"/*.c; do [ -f "build/rel/${src%.c}.o" ] && objs+=("build/rel/${src%.c}.o"); done
    [ ${#objs[@]} -gt 1 ] || continue
    edges=$(calls "${objs[@]}")
    n_calls=$((n_calls + $(echo "$edges" | grep -c .)))
    case $dir in
    report | schema | views)
        for src in "$dir"/*.c; do [ -n "${may_call[${src%.c}]+set}" ] || unlisted+=("$src"); done
        while read -r from to; do
            [ -n "$from" ] || continue
            case " ${may_call[$from]-} " in *" ${to#*/} "*) ;; *) barred+=("$from.c calls $to.c") ;; esac
        done <<< "$edges"
        ;;
    esac
    loop=$(tsort <<< "$edges" 2>&1 >/dev/null | grep -v 'input contains a loop' | sed 's/^tsort: //' | sort -u | tr '\n' ' ')
    [ -z "$loop" ] || loops+=("$dir: $loop")
done
check "the calls between the files of each part are seen (a check that sees none proves nothing)" \
    test "$n_calls" -gt 50
check "no two files of a part call each other, directly or around a circle" test ${#loops[@]} -eq 0
for l in "${loops[@]}"; do echo "  calls in a circle in $l"; done
check "every file of report/, schema/ and views/ has its row in ARCHITECTURE.md (${#may_call[@]} rows)" \
    test ${#unlisted[@]} -eq 0 -a ${#may_call[@]} -gt 20
for f in "${unlisted[@]}"; do echo "  $f has no row"; done
check "every call between two of their files is one the caller's row allows" test ${#barred[@]} -eq 0
for b in "${barred[@]}"; do echo "  $b, which its row does not allow"; done
