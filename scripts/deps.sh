#!/usr/bin/env bash
# Installs the Debian packages that building, testing and the demo need,
# and only those that are missing. Both README commands call it;
# `scripts/deps.sh corpus-extended` adds libsword-utils (mod2imp, which
# reads the Bible and the commentaries for `make corpus CORPUS=extended`)
# and xz-utils (its JSON lines);
# `scripts/deps.sh test` adds what only the tests need: Chromium for the
# dashboard test, clang with libFuzzer and OpenMP's header for the fuzz
# harnesses (tests/fuzz/), the sqlite3 shell (the other process that holds
# the server's database in tests/server_faults.sh), gzip, zstd and xz (the
# compressed inputs of tests/prep_formats.sh, the extended corpus's JSON
# lines in tests/prep_extend.sh) and sentencepiece (spm_train
# and spm_encode, tests/prep_sentencepiece.sh), and the OpenAPI
# validator for tests/openapi.sh (an npm package pinned by
# tests/openapi/package-lock.json, installed once into
# var/cache/openapi-validator; npm's cache is var/cache/npm/.npm, as for
# the corpus, so a second machine state reuses what it fetched), and the
# independent Parquet writer and reader of tests/parquet_npm.sh
# (tests/parquet/package-lock.json, into var/cache/parquet-npm).
set -euo pipefail
cd "$(dirname "$0")/.."
# cod-prep reads compressed inputs with zlib, libzstd and liblzma, Parquet
# pages with libsnappy too, and runs SentencePiece models with libsentencepiece
pkgs=(build-essential libopenblas-openmp-dev libjansson-dev libpcre2-dev libicu-dev libssl-dev libsqlite3-dev libmicrohttpd-dev libcurl4-openssl-dev curl nodejs npm ca-certificates
      zlib1g-dev libzstd-dev liblzma-dev libsnappy-dev libsentencepiece-dev)
[ "${1:-}" = test ] && pkgs+=(chromium systemd sqlite3 clang libclang-rt-14-dev libomp-dev gzip zstd xz-utils sentencepiece)
[ "${1:-}" = corpus-extended ] && pkgs+=(libsword-utils xz-utils)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs/npm may come from elsewhere than Debian (the image's own node): accept a working npm.
if command -v npm >/dev/null 2>&1; then
    missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
want=()
for p in "${missing[@]}"; do [ -n "$p" ] && want+=("$p"); done
if [ ${#want[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "deps: installing ${want[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${want[@]}"
fi
[ "${1:-}" = test ] || exit 0
# npm_ci SOURCE_DIR DEST_DIR CHECK_FILE: installs SOURCE_DIR's locked packages
# into DEST_DIR unless they are there already
npm_ci() {
    local src=$1 dir=$2 check=$3
    if ! cmp -s "$src/package-lock.json" "$dir/package-lock.json" || [ ! -f "$dir/node_modules/$check" ]; then
        echo "deps: installing $src's npm packages into $dir"
        rm -rf "$dir"
        mkdir -p "$dir" var/cache/npm
        cp "$src/package.json" "$src/package-lock.json" "$dir/"
        (cd "$dir" && npm_config_cache="$PWD/../npm/.npm" npm_config_update_notifier=false \
            npm ci --prefer-offline --no-audit --no-fund --silent)
    fi
}
npm_ci tests/openapi var/cache/openapi-validator @seriousme/openapi-schema-validator/package.json
npm_ci tests/parquet var/cache/parquet-npm parquet-wasm/package.json
