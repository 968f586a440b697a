// The ids of an independent implementation of Hugging Face tokenizers
// (@huggingface/tokenizers, the tokenizers of transformers.js, fetched by
// scripts/hf_tokenizers.sh) against the shard cod-prep wrote:
//   node tests/hf_tokenizers.js compare TOKDIR DOCS SHARD
// TOKDIR holds tokenizer.json and tokenizer_config.json; DOCS the documents
// cod-prep read (in name order, every one to the train split); SHARD its
// train_000000.bin. Each document must be the doc token and then exactly the
// reference's ids. Prints the first difference, with its text, when not.
//   node tests/hf_tokenizers.js tiny DIR KIND
// writes DIR/tokenizer.json: a tiny byte-level BPE, valid, then broken as
// KIND says (for the refusals), from scratch.
'use strict';
const fs = require('fs');
const path = require('path');

function shardIds(file) {
    const b = fs.readFileSync(file), magic = b.readInt32LE(0), n = b.readInt32LE(8);
    const wide = magic === 20240801, out = new Array(n);
    for (let i = 0; i < n; i++) out[i] = wide ? b.readUInt32LE(1024 + 4 * i) : b.readUInt16LE(1024 + 2 * i);
    return out;
}

async function compare(tokdir, docs, shard) {
    const {Tokenizer} = require(path.resolve('var/cache/npm/huggingface-tokenizers-0.2.0/package/dist/tokenizers.cjs'));
    const tj = JSON.parse(fs.readFileSync(path.join(tokdir, 'tokenizer.json')));
    const tc = JSON.parse(fs.readFileSync(path.join(tokdir, 'tokenizer_config.json')));
    const tok = new Tokenizer(tj, tc);
    const names = fs.readdirSync(docs).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const got = shardIds(shard);
    const doc = got[0];
    let pos = 0, total = 0;
    for (const name of names) {
        const text = fs.readFileSync(path.join(docs, name), 'utf8');
        const want = tok.encode(text, {add_special_tokens: false}).ids;
        if (got[pos] !== doc) {
            console.log(`${name}: no doc token ${doc} at ${pos}`);
            process.exit(1);
        }
        pos++;
        for (let i = 0; i < want.length; i++, pos++)
            if (got[pos] !== want[i]) {
                const ctx = tok.decode(want.slice(Math.max(0, i - 3), i + 3));
                console.log(`${path.basename(tokdir)}: ${name}: token ${i} is ${got[pos]}, the reference's ` +
                            `${want[i]} (around ${JSON.stringify(ctx)}); cod: ` +
                            JSON.stringify(got.slice(pos - 3, pos + 3)) + ', reference: ' +
                            JSON.stringify(want.slice(Math.max(0, i - 3), i + 3)));
                process.exit(1);
            }
        total += want.length;
    }
    if (pos !== got.length) {
        console.log(`${path.basename(tokdir)}: the shard holds ${got.length - pos} tokens after the last document`);
        process.exit(1);
    }
    console.log(`${path.basename(tokdir)}: ${names.length} documents, ${total} tokens, every id the reference's (doc token ${doc})`);
}

// A byte-level BPE of the 256 byte tokens, a few merges and <|endoftext|>;
// KIND breaks one field of it.
function tiny(dir, kind) {
    const bs = [];
    for (let b = 0; b < 256; b++) bs.push(b);
    const cs = [];
    let n = 0;
    for (const b of bs) {
        const printable = (b >= 33 && b <= 126) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
        cs.push(String.fromCodePoint(printable ? b : 256 + n++));
    }
    const vocab = {};
    cs.forEach((c, i) => { vocab[c] = i; });
    const merges = [['t', 'h'], ['th', 'e'], ['Ġ', 't']];
    let id = 256;
    for (const [a, b] of merges) vocab[a + b] = id++;
    vocab['<|endoftext|>'] = id;
    const j = {
        version: '1.0', truncation: null, padding: null,
        added_tokens: [{id, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false,
                        normalized: false, special: true}],
        normalizer: null,
        pre_tokenizer: {type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true},
        post_processor: {type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: true},
        decoder: {type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true},
        model: {type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
                end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab, merges},
    };
    const sp = () => { // SentencePiece-style: Llama 2's normalizer, byte fallback
        const v = {'<unk>': 0, '<s>': 1, '</s>': 2};
        for (let b = 0; b < 256; b++) v[`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`] = 3 + b;
        let n = 259;
        for (const c of ['▁', 'a', 'e', 'h', 't', 'o', 'n', 's', 'é', '日']) v[c] = n++;
        const m = [['▁', 't'], ['h', 'e'], ['▁t', 'he'], ['▁', '▁'], ['o', 'n'], ['▁', 'a']];
        for (const [a, b] of m) v[a + b] = n++;
        j.added_tokens = [{id: 1, content: '<s>', special: true}];
        j.normalizer = {type: 'Sequence', normalizers: [{type: 'Prepend', prepend: '▁'},
                                                        {type: 'Replace', pattern: {String: ' '}, content: '▁'}]};
        j.pre_tokenizer = null;
        j.post_processor = {type: 'TemplateProcessing', single: [{SpecialToken: {id: '<s>', type_id: 0}}, {Sequence: {id: 'A', type_id: 0}}],
                            pair: [], special_tokens: {'<s>': {id: '<s>', ids: [1], tokens: ['<s>']}}};
        j.decoder = {type: 'Sequence', decoders: [{type: 'Replace', pattern: {String: '▁'}, content: ' '}, {type: 'ByteFallback'}, {type: 'Fuse'}, {type: 'Strip', content: ' ', start: 1, stop: 0}]};
        j.model = {type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null,
                   fuse_unk: true, byte_fallback: true, vocab: v, merges: m.map(x => x.join(' '))};
    };
    const breaks = {
        valid: () => {},
        // Qwen2's kind: NFC, then its Split regex, then ByteLevel
        split: () => {
            j.normalizer = {type: 'NFC'};
            j.pre_tokenizer = {type: 'Sequence', pretokenizers: [
                {type: 'Split', pattern: {Regex: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, behavior: 'Isolated', invert: false},
                {type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false}]};
            j.model.ignore_merges = true;
        },
        sp,
        unigram: () => { j.model = {type: 'Unigram', unk_id: 0, vocab: [['a', -1]]}; },
        wordpiece: () => { j.model = {type: 'WordPiece', unk_token: '[UNK]', vocab}; },
        nfkc: () => { j.normalizer = {type: 'NFKC'}; },
        lowercase: () => { j.normalizer = {type: 'Sequence', normalizers: [{type: 'Prepend', prepend: '▁'}, {type: 'Lowercase'}]}; },
        whitespace: () => { j.pre_tokenizer = {type: 'Whitespace'}; },
        removed: () => { j.pre_tokenizer = {type: 'Sequence', pretokenizers: [{type: 'Split', pattern: {Regex: '\\s+'}, behavior: 'Removed', invert: false}, {type: 'ByteLevel', add_prefix_space: false, use_regex: false}]}; },
        digits: () => { j.pre_tokenizer = {type: 'Sequence', pretokenizers: [{type: 'Digits', individual_digits: true}, {type: 'ByteLevel', add_prefix_space: false, use_regex: false}]}; },
        prefix: () => { j.pre_tokenizer.add_prefix_space = true; },
        dropout: () => { j.model.dropout = 0.1; },
        suffix: () => { j.model.end_of_word_suffix = '</w>'; },
        merge: () => { j.model.merges.push(['q', 'z']); },
        nodoc: () => { j.added_tokens = []; },
    };
    if (!breaks[kind]) throw new Error(`unknown kind ${kind}`);
    breaks[kind]();
    fs.mkdirSync(dir, {recursive: true});
    fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(j));
    fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), '{}');
}

const [cmd, a, b, c] = process.argv.slice(2);
if (cmd === 'compare') compare(a, b, c).catch(e => { console.log(String(e.stack || e)); process.exit(1); });
else if (cmd === 'tiny') tiny(a, b);
else { console.error('usage: hf_tokenizers.js compare TOKDIR DOCS SHARD | tiny DIR KIND'); process.exit(2); }
