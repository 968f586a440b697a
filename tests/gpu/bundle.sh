#!/usr/bin/env bash
# Builds the GPU bundle here, for a GPU machine that has the NVIDIA driver,
# the CUDA 13 toolkit's libraries and python3 with torch, but no compiler
# toolchain for cod, no Debian packages and no network:
#   .gpu/bundle.tar.xz  the GPU programs (portable x86-64, -march=x86-64-v2),
#                       cod-server, cod-worker and cod (for tests/gpu/gang.sh
#                       and the depth study: studies/depth/local.sh gpu), the shared libraries
#                       they need that are not glibc's (OpenBLAS, jansson,
#                       PCRE2, libgomp, libgfortran, libmicrohttpd, SQLite,
#                       libcurl, ...), a slice of the default corpus as bytes
#                       (data/gpu-bytes: the first 4M training tokens, all
#                       the held-out ones), the whole of it (data/default-bytes,
#                       the depth study's data), and the CPU run of the
#                       loss-curve spec on it (tests/gpu/loss_curve.sh)
# .gpu/ is git-ignored (the build and its sources stay in var/gpu-bundle); name it in the GPU machine's carry list. There,
# tests/gpu/run.sh and bench/gpu/run.sh unpack it (tests/gpu/bundle_env.sh)
# and run from it without building. cuBLASLt, cuDNN and NCCL are not carried
# (hundreds of MB each): the programs open the machine's own copies.
# usage: tests/gpu/bundle.sh [--no-reference]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
dest=$root/.gpu
work=$root/var/gpu-bundle
mkdir -p "$dest"
reference=1
[ "${1:-}" = --no-reference ] && reference=0

command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] ||
    { echo "bundle: nvcc not found: the GPU programs need the CUDA toolkit to build" >&2; exit 1; }
[ -f var/data/default-bytes/meta.json ] || CORPUS_TOKENIZERS=bytes scripts/corpus.sh
tests/gpu/slice_shards.py var/data/default-bytes var/data/gpu-bytes 4000000

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
progs=("$src/bin/cod-train" "$src/bin/cod-analyze" "$src/bin/cod-server" "$src/bin/cod-worker" "$src/bin/cod"
       "$src/build/gpu/test_ops_cuda" "$src/build/gpu/test_model_cuda" "$src/build/gpu/test_emu"
       "$src/build/gpu/bench_train_cuda" "$src/build/gpu/bench_attention_cuda")
rm -f "${progs[@]}"
make -C "$src" -j"$(nproc)" ARCH="-march=x86-64-v2 -mtune=generic" \
    LDFLAGS="-Wl,--disable-new-dtags,-rpath,'\$\$ORIGIN/../lib'" \
    "${progs[@]#"$src"/}" > "$work/build.log" 2>&1 ||
    { tail -30 "$work/build.log"; echo "bundle: build failed (see $work/build.log)" >&2; exit 1; }

stage=$work/stage
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib" "$stage/data"
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
cp -r var/data/gpu-bytes var/data/default-bytes "$stage/data/"

if [ "$reference" = 1 ]; then
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
tar -C "$stage" -cJf "$dest/bundle.tar.xz.tmp" .
mv "$dest/bundle.tar.xz.tmp" "$dest/bundle.tar.xz"
# an unpacked copy (a dry run's, here) would travel with a carried .gpu and
# take it past the 64 MiB a call to the GPU machine sends; the scripts
# unpack it where they run
rm -rf "$dest/bundle"
du -sh "$dest/bundle.tar.xz" "$stage" | sed 's/^/bundle: /'
