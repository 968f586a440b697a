#!/usr/bin/env bash
# cod-prep's sentencepiece tokenizer against Debian's spm_encode, on two
# models trained here with spm_train on 3 MB of the default corpus (test
# fixtures, made fresh, never committed): a unigram model with T5's
# special ids (pad 0, </s> 1, unk 2, no <s>; T5's NFKC normaliser) and a
# BPE model set up as LLaMA's (<s> 1, </s> 2, byte fallback, no
# normalisation). Every document must get spm_encode's ids, with the
# model's own boundary: </s> after each for the T5-like model, <s> before
# each for the LLaMA-like one; meta.json records which, the pad id and the
# model's sha256.
cd "$(dirname "$0")/.." && . tests/lib.sh
COD_PREP=${COD_PREP:-bin/cod-prep}
t=$(mktemp -d /tmp/cod-prep-spm.XXXXXX)
trap 'rm -rf "$t"' EXIT
need_corpus
for tool in spm_train spm_encode; do
    command -v $tool >/dev/null || { echo "FAIL $tool is missing (scripts/deps.sh test installs sentencepiece)"; exit 1; }
done

cat var/corpus/default/train/* | grep -v '^[[:space:]]*$' | head -c 3000000 >"$t/train.txt"
spm_train --input="$t/train.txt" --model_prefix="$t/t5" --model_type=unigram --vocab_size=1000 \
    --pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1 --minloglevel=2 >"$t/t5.log" 2>&1
check "spm_train: a unigram model with T5's ids" test -s "$t/t5.model"
spm_train --input="$t/train.txt" --model_prefix="$t/llama" --model_type=bpe --vocab_size=1000 \
    --normalization_rule_name=identity --remove_extra_whitespaces=false --split_digits=true --byte_fallback=true \
    --allow_whitespace_only_pieces=true --minloglevel=2 >"$t/llama.log" 2>&1
check "spm_train: a BPE model set up as LLaMA's" test -s "$t/llama.model"

# The documents: each non-blank line of the held-out corpus (spm_encode
# encodes a line at a time), once (cod-prep keeps a document once), as JSON lines.
cat var/corpus/default/val/* | awk '{ k = $0; gsub(/[ \t\r\v\f]+/, " ", k); sub(/^ /, "", k); sub(/ $/, "", k)
                                      if (k != "" && !seen[k]++) print }' >"$t/docs.txt"
node -e 'const fs = require("fs");
    const lines = fs.readFileSync(process.argv[1], "utf8").split("\n").slice(0, -1);
    fs.writeFileSync(process.argv[2], lines.map((l) => JSON.stringify({text: l})).join("\n") + "\n");' \
    "$t/docs.txt" "$t/docs.jsonl"

# NAME DOC_AT: cod-prep's stream must be spm_encode's ids with the doc token at DOC_AT
compare() {
    local name=$1 at=$2
    spm_encode --model="$t/$name.model" --output_format=id <"$t/docs.txt" >"$t/$name.ids"
    "$COD_PREP" --quiet --tokenizer sentencepiece --tokenizer-model "$t/$name.model" --val-fraction 0 \
        --out "$t/$name" "$t/docs.jsonl" >"$t/$name.prep.log" 2>&1 || { cat "$t/$name.prep.log"; return 1; }
    node -e '
        const fs = require("fs");
        const [ids, shard, at] = process.argv.slice(1);
        const b = fs.readFileSync(shard);
        const n = b.readInt32LE(8), got = new Uint16Array(b.buffer, b.byteOffset + 1024, n);
        const doc = JSON.parse(fs.readFileSync(shard.replace(/[^/]*$/, "meta.json"))).doc_token;
        let pos = 0, lines = 0;
        for (const line of fs.readFileSync(ids, "utf8").split("\n").slice(0, -1)) {
            const want = line.split(" ").filter((x) => x !== "").map(Number);
            const all = at === "end" ? [...want, doc] : [doc, ...want];
            for (let i = 0; i < all.length; i++)
                if (got[pos + i] !== all[i]) {
                    console.error(`document ${lines + 1}: token ${i} is ${got[pos + i]}, spm_encode says ${all[i]}`);
                    process.exit(1);
                }
            pos += all.length;
            lines++;
        }
        if (pos !== n) { console.error(`shard holds ${n} tokens, spm_encode ${pos}`); process.exit(1); }
        console.error(`${lines} documents, ${n} tokens agree`);' "$t/$name.ids" "$t/$name/train_000000.bin" "$at"
}
check "T5-like unigram: spm_encode's ids, </s> after each document" compare t5 end
check "LLaMA-like BPE: spm_encode's ids, <s> before each document" compare llama start
check "the documents were many" test "$(wc -l <"$t/docs.txt")" -gt 1000

meta_has() { grep -q "$2" "$t/$1/meta.json" || { echo "  $1/meta.json lacks $2"; return 1; }; }
t5_sha=$(sha256sum "$t/t5.model" | cut -d' ' -f1)
check "meta.json (T5-like): </s> 1 at the end, pad 0, vocab 1000, the model's sha256" bash -c "
    $(declare -f meta_has); t='$t'
    meta_has t5 '\"tokenizer\": \"sentencepiece\"' && meta_has t5 '\"doc_token\": 1,' && meta_has t5 '\"doc_token_at\": \"end\"' &&
    meta_has t5 '\"pad_token\": 0,' && meta_has t5 '\"vocab_size\": 1000,' && meta_has t5 '\"t5.model\": \"$t5_sha\"'"
check "meta.json (LLaMA-like): <s> 1 at the start, no pad" bash -c "
    $(declare -f meta_has); t='$t'
    meta_has llama '\"doc_token\": 1,' && meta_has llama '\"doc_token_at\": \"start\"' && ! grep -q pad_token '$t/llama/meta.json'"

# Whole text files (documents of many lines) on 1 thread and on 2: the same shards.
for n in 1 2; do
    "$COD_PREP" --quiet --threads $n --tokenizer sentencepiece --tokenizer-model "$t/t5.model" --out "$t/files$n" \
        var/corpus/default/val >"$t/files$n.log" 2>&1 || cat "$t/files$n.log"
done
check "text files: 1 thread and 2 give the same shards" bash -c "
    for f in '$t'/files1/*.bin; do cmp -s \"\$f\" '$t/files2/'\$(basename \"\$f\") || exit 1; done; ls '$t'/files1/*.bin >/dev/null"
"$COD_PREP" --quiet --verify --tokenizer sentencepiece --tokenizer-model "$t/t5.model" --out "$t/v" "$t/docs.jsonl" \
    >"$t/v.log" 2>&1
check "--verify is refused: the model's normaliser changes the text" bash -c "[ $? = 1 ] &&
    grep -q 'normaliser does not keep' '$t/v.log'"
spm_train --input="$t/train.txt" --model_prefix="$t/none" --model_type=unigram --vocab_size=300 --bos_id=-1 \
    --eos_id=-1 --minloglevel=2 >/dev/null 2>&1
"$COD_PREP" --quiet --tokenizer sentencepiece --tokenizer-model "$t/none.model" --out "$t/n" "$t/docs.jsonl" >"$t/n.log" 2>&1
check "a model without <s> or </s> is refused: nothing would mark a document's end" \
    grep -q 'none.model: the model has neither <s> nor </s>' "$t/n.log"
