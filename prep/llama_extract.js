// Pulls the LLaMA vocabulary and merges out of llama-tokenizer-js, where they
// sit as two base64 string constants, into the files that
// text/tokenizer_llama.c reads:
//   node prep/llama_extract.js package/llama-tokenizer.js VOCAB_OUT MERGES_OUT
// VOCAB_OUT: the 32000 pieces joined by newlines (UTF-8); MERGES_OUT: uint16-LE
// id pairs, best merge first. Run by scripts/corpus.sh, which checks both sha256s.
'use strict';
const fs = require('fs');

const [src, vocabOut, mergesOut] = process.argv.slice(2);
if (!mergesOut) {
    console.error('usage: node prep/llama_extract.js llama-tokenizer.js VOCAB_OUT MERGES_OUT');
    process.exit(2);
}
const js = fs.readFileSync(src, 'utf8');
function constant(name) {
    const m = js.match(new RegExp('const ' + name + ' = "([A-Za-z0-9+/=]*)"'));
    if (!m) {
        console.error(`llama_extract: ${src}: no constant ${name}`);
        process.exit(1);
    }
    return Buffer.from(m[1], 'base64');
}
fs.writeFileSync(vocabOut, constant('llama_vocab_base64'));
fs.writeFileSync(mergesOut, constant('llama_merges_binary'));
