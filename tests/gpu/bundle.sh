#!/usr/bin/env bash
# Builds a GPU bundle here, for a GPU machine that has the NVIDIA driver,
# the CUDA 13 toolkit's libraries and python3 with torch, but no compiler
# toolchain for cod, no Debian packages and no network:
#   .gpu/bundle.tar.xz  the GPU programs (portable x86-64, -march=x86-64-v2),
#                       cod-server, cod-worker and cod (for tests/gpu/gang.sh
#                       and the depth study: studies/depth/local.sh gpu), the shared libraries
#                       they need that are not glibc's (OpenBLAS, jansson,
#                       PCRE2, libgomp, libgfortran, libmicrohttpd, SQLite,
#                       libcurl, the tokenizers' ...), a slice of the default corpus as bytes
#                       (data/gpu-bytes: the first 4M training tokens, all
#                       the held-out ones), the whole of it (data/default-bytes,
#                       the depth study's data), and the CPU run of the
#                       loss-curve spec on it (tests/gpu/loss_curve.sh)
#   .gpu/width.tar.xz   (--width) the width study's (studies/width/): cod-train,
#                       cod-server, cod-worker, cod and cod-prep with their
#                       libraries (libsentencepiece, zstd, lzma, ICU's, ...),
#                       and its data as text (studies/width/corpus.sh: a
#                       share of the extended corpus as xz JSON lines and
#                       the SentencePiece model cod-prep tokenizes it with
#                       there), nothing of the checks; made to travel alone
#                       with the tree, within the 64 MiB a call to the GPU
#                       machine sends (it says the sizes, and fails past it)
# .gpu/ is git-ignored (the build and its sources stay in var/gpu-bundle); name it in the GPU machine's carry list. There,
# tests/gpu/run.sh and bench/gpu/run.sh unpack it (tests/gpu/bundle_env.sh)
# and run from it without building. cuBLASLt, cuDNN and NCCL are not carried
# (hundreds of MB each): the programs open the machine's own copies.
# usage: tests/gpu/bundle.sh [--no-reference | --width]
# For a dry run of the width bundle (tests/gpu_width.sh): BUNDLE_DRY_BIN
# names a directory of programs to pack as they are (the CUDA emulator's,
# with the emulated cuBLASLt of build/emu/lib beside them), BUNDLE_DEST the
# archive, BUNDLE_WORK its staging folder (default var/gpu-bundle), WIDTH_BUNDLE_DATA the data's directory (default
# var/gpu-bundle/width-data), WIDTH_CORPUS what studies/width/corpus.sh
# makes it from, BUNDLE_XZ the archive's xz level (default -9).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
dest=$root/.gpu
work=${BUNDLE_WORK:-$root/var/gpu-bundle}
mkdir -p "$dest"
reference=1 kind=checks
case ${1:-} in
'') ;;
--no-reference) reference=0 ;;
--width) kind=width ;;
*) echo "usage: tests/gpu/bundle.sh [--no-reference | --width]" >&2; exit 2 ;;
esac
# What a call to the GPU machine may send: the tree and what it carries;
# and what the width call must leave of it, for the code and results
# committed before the next call (tests/gpu_room.sh checks it in make test)
CALL_LIMIT=$((64 * 1024 * 1024)) CALL_ROOM=$((4 * 1024 * 1024))

if [ -n "${BUNDLE_DRY_BIN:-}" ]; then
    [ "$kind" = width ] || { echo "bundle: BUNDLE_DRY_BIN is for --width only" >&2; exit 2; }
else
    command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] ||
        { echo "bundle: nvcc not found: the GPU programs need the CUDA toolkit to build" >&2; exit 1; }
fi
if [ "$kind" = checks ]; then
    [ -f var/data/default-bytes/meta.json ] || CORPUS_TOKENIZERS=bytes scripts/corpus.sh
    tests/gpu/slice_shards.py var/data/default-bytes var/data/gpu-bytes 4000000
    names=(cod-train cod-analyze cod-server cod-worker cod test_ops_cuda test_matmul_cuda test_model_cuda
           test_emu bench_train_cuda bench_attention_cuda bench_eval_cuda)
    archive=${BUNDLE_DEST:-$dest/bundle.tar.xz}
else
    width_data=${WIDTH_BUNDLE_DATA:-$work/width-data}
    studies/width/corpus.sh "$width_data"
    names=(cod-train cod-server cod-worker cod cod-prep)
    archive=${BUNDLE_DEST:-$dest/width.tar.xz}
fi
# where make leaves each program
made() { case $1 in cod*) echo "bin/$1" ;; *) echo "build/gpu/$1" ;; esac; }

stage=$work/stage-$kind
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib" "$stage/data"
if [ -n "${BUNDLE_DRY_BIN:-}" ]; then
    # the emulator's programs as they are: their rpath ($ORIGIN/../lib)
    # finds the emulated cuBLASLt here as it finds the real libraries in
    # a bundle
    for n in "${names[@]}"; do
        cp -L "$BUNDLE_DRY_BIN/$n" "$stage/bin/" || { echo "bundle: no $BUNDLE_DRY_BIN/$n" >&2; exit 1; }
    done
    cp -L build/emu/lib/*.so.* "$stage/lib/"
else
    # A separate copy of the tracked and new files, so the portable build does
    # not replace this machine's native one in build/ and bin/.
    # Sources are copied afresh (a deleted file must not linger for the
    # Makefile's wildcards); the previous build moves over, so make stays
    # incremental: tar keeps the modification times.
    src=$work/src
    rm -rf "$src.new"
    mkdir -p "$src.new"
    git ls-files -z --cached --others --exclude-standard |
        tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -C "$src.new" -xf -
    for d in build bin; do [ -d "$src/$d" ] && mv "$src/$d" "$src.new/"; done
    rm -rf "$src"
    mv "$src.new" "$src"
    # The programs find the libraries carried beside them through their own
    # rpath, searched before LD_LIBRARY_PATH and for the libraries' own
    # dependencies too (DT_RPATH, not RUNPATH), rather than through
    # LD_LIBRARY_PATH: there the carried libcurl, OpenSSL and libstdc++ would
    # shadow the GPU machine's own for its curl and python3. make does not relink
    # for a changed LDFLAGS, so the programs are linked afresh.
    progs=()
    for n in "${names[@]}"; do progs+=("$src/$(made "$n")"); done
    rm -f "${progs[@]}"
    blas=()
    if [ "$kind" = width ]; then
        # The reference BLAS (Debian's libblas-dev, which libopenblas-dev
        # brings), linked in, for OpenBLAS: the width study's programs train
        # on the GPU, where no CPU matmul runs, and OpenBLAS's kernels for
        # every x86 CPU (36 MB, 5.2 MB compressed with libgfortran) would take
        # a sixth of what the call may send.
        ref=/usr/lib/$(gcc -print-multiarch)/blas/libblas.a
        [ -f "$ref" ] || { echo "bundle: no $ref (libblas-dev)" >&2; exit 1; }
        blas=(BLAS="$ref")
    fi
    make -C "$src" -j"$(nproc)" ARCH="-march=x86-64-v2 -mtune=generic" "${blas[@]}" \
        LDFLAGS="-Wl,--disable-new-dtags,-rpath,'\$\$ORIGIN/../lib'" \
        "${progs[@]#"$src"/}" > "$work/build.log" 2>&1 ||
        { tail -30 "$work/build.log"; echo "bundle: build failed (see $work/build.log)" >&2; exit 1; }
    for p in "${progs[@]}"; do
        readelf -d "$p" | grep -q 'Library rpath: \[\$ORIGIN/../lib\]' ||
            { echo "bundle: $p has no rpath to the carried libraries" >&2; exit 1; }
        strip -o "$stage/bin/$(basename "$p")" "$p"
    done
    # Every shared library the programs load except glibc's own and the driver.
    for p in "${progs[@]}"; do ldd "$p"; done |
        awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u |
        grep -vE '/(libc|libm|libdl|librt|libpthread|libresolv|ld-linux[^/]*|libcuda)\.so' |
        while read -r lib; do cp -L "$lib" "$stage/lib/"; done
fi

# ICU's data library, emptied: cod's uses of ICU are NFC (a tokenizer.json
# that asks for it) and case mapping (HellaSwag's prompts, eval/pystr.c),
# whose tables libicuuc holds itself;
# the rest of its 31 MB (7.5 MB compressed), locales and converters,
# nothing of cod reads. An ICU package of no items, under the symbol
# and soname libicuuc links against (icupkg and genccode: icu-devtools,
# which libicu-dev brings).
for icu in "$stage"/lib/libicudata.so.*; do
    [ -e "$icu" ] || continue
    v=${icu##*.so.}
    t=$work/icu-empty
    rm -rf "$t" && mkdir -p "$t"
    : > "$t/none.txt"
    (cd "$t" && icupkg -a none.txt new "icudt${v}l.dat" && genccode -e "icudt$v" -a gcc -d . "icudt${v}l.dat" >/dev/null &&
        cc -shared -nostdlib -Wl,-soname,"libicudata.so.$v" -o "libicudata.so.$v" "icudt${v}l_dat.S") ||
        { echo "bundle: cannot make an empty libicudata.so.$v (icupkg, genccode)" >&2; exit 1; }
    cp "$t/libicudata.so.$v" "$icu"
done

if [ "$kind" = checks ]; then
    cp -r var/data/gpu-bytes var/data/default-bytes "$stage/data/"
    # the llama tokenizer's files, for the evaluation's timing (bench/gpu/eval.sh)
    mkdir -p "$stage/data/tokenizers"
    cp var/cache/tokenizers/llama-vocab.txt var/cache/tokenizers/llama-merges.bin "$stage/data/tokenizers/"
else
    mkdir -p "$stage/data/width"
    cp "$width_data"/{train.jsonl.xz,val.jsonl.xz,sp.model,corpus.txt} "$stage/data/width/"
    # the carried cod-prep starts with the carried libraries and reads the
    # carried model (a sentence through it, on this machine)
    printf '{"text": "The width study, tokenized where it trains."}\n' > "$work/probe.jsonl"
    rm -rf "$work/probe-out"
    "$stage/bin/cod-prep" --tokenizer sentencepiece --tokenizer-model "$stage/data/width/sp.model" \
        --val-fraction 0 --quiet --out "$work/probe-out" "$work/probe.jsonl" > "$work/probe.log" 2>&1 ||
        { cat "$work/probe.log"; echo "bundle: the bundle's cod-prep does not run from it" >&2; exit 1; }
fi

if [ "$kind" = checks ] && [ "$reference" = 1 ]; then
    # The CPU half of the loss curve, run here: the GPU machine then only
    # trains the CUDA half of the same spec and seed and compares.
    ref=$work/reference
    # redone when the spec or the CPU side of the trainer changed
    key=$(cat tests/gpu/loss_curve.json kernels/ops.h kernels/real.h kernels/cpu/* trainer/*.[ch] spec/*.[ch] common/*.[ch] \
              var/data/gpu-bytes/*.bin |
          sha256sum | cut -c1-16)
    if [ "$(cat "$ref/done" 2>/dev/null)" != "$key" ]; then
        rm -rf "$ref"
        mkdir -p "$ref"
        cp tests/gpu/loss_curve.json "$ref/spec.json"
        sed 's|@DATA@|var/data/gpu-bytes|g' "$ref/spec.json" > "$ref/run-spec.json"
        echo "bundle: training the CPU reference of the loss curve (a few minutes)"
        "$src/bin/cod-train" "$ref/run-spec.json" --out "$ref/cpu" --progress-seconds 60 \
            > "$ref/cpu.log" 2>&1 || { tail -5 "$ref/cpu.log"; exit 1; }
        echo "$key" > "$ref/done"
    fi
    mkdir -p "$stage/reference"
    cp "$ref/spec.json" "$ref/cpu/metrics.jsonl" "$ref/cpu.log" "$stage/reference/"
fi
git rev-parse HEAD > "$stage/commit" 2>/dev/null || true
git status --porcelain > "$stage/dirty" 2>/dev/null || true
XZ_OPT=${BUNDLE_XZ:--9} tar -C "$stage" -cJf "$archive.tmp" .
mv "$archive.tmp" "$archive"
# an unpacked copy (a dry run's, here) would travel with a carried .gpu and
# take it past the 64 MiB a call to the GPU machine sends; the scripts
# unpack it where they run
rm -rf "${archive%.tar.xz}"
du -sh "$archive" "$stage" | sed 's/^/bundle: /'
# the tree as a call sends it: tracked files and untracked ones not ignored
tree=$(git ls-files -z --cached --others --exclude-standard | du --files0-from=- -cb 2>/dev/null | tail -1 | cut -f1)
size=$(stat -c %s "$archive")
total=$((tree + size))
echo "bundle: a call that carries $(basename "$archive") sends $((total / 1024)) KiB: the tree $((tree / 1024)) KiB, the bundle $((size / 1024)) KiB, of $((CALL_LIMIT / 1024)) KiB"
if [ "$total" -gt "$CALL_LIMIT" ]; then
    echo "bundle: past what a call may send by $(((total - CALL_LIMIT) / 1024)) KiB" >&2
    exit 1
fi
if [ "$kind" = width ] && [ -z "${BUNDLE_DRY_BIN:-}" ] && [ -z "${BUNDLE_DEST:-}" ]; then
    # the width bundle's size, committed, for tests/gpu_room.sh where no bundle is built
    printf 'width.tar.xz %s bytes, built from %s%s\n' "$size" "$(cat "$stage/commit" 2>/dev/null || echo '?')" \
        "$([ -s "$stage/dirty" ] && echo ' with uncommitted changes')" > tests/gpu/width-bundle.txt
    echo "bundle: its size recorded in tests/gpu/width-bundle.txt"
    if [ $((CALL_LIMIT - total)) -lt "$CALL_ROOM" ]; then
        echo "bundle: leaves $(((CALL_LIMIT - total) / 1024)) KiB, under the $((CALL_ROOM / 1024)) KiB the width call keeps free (tests/gpu_room.sh)" >&2
        exit 1
    fi
fi
