#!/usr/bin/env bash
# The C tokenizers against the JavaScript packages they were taken from,
# on the default corpus: every token of var/data/default (gpt2, against
# gpt-tokenizer's r50k_base, whole corpus) and of var/data/default-llama
# (llama, against llama-tokenizer-js: the validation split only, as that
# package encodes 0.1 MB/s; PREP_REFERENCE_FULL=1 for all of it, ~5 min)
# must be the reference's id. Also checks the shard header and that each
# document starts with the doc token.
set -u
cd "$(dirname "$0")/.."
if ! CORPUS_TOKENIZERS="gpt2 llama" scripts/corpus.sh >build/prep_reference.log 2>&1; then
    cat build/prep_reference.log
    echo "FAIL prep_reference_corpus"
    exit 1
fi
node --input-type=module - <<'JS'
import fs from 'fs';
import path from 'path';
import { createRequire } from 'module';
const require = createRequire(import.meta.url);
const npm = path.resolve('var/cache/npm');
const gpt2 = require(npm + '/gpt-tokenizer-4.0.0/package/cjs/encoding/r50k_base.js');
const llama = (await import(npm + '/llama-tokenizer-js-1.2.2/package/llama-tokenizer.js')).default;

function readShard(file) {
    const b = fs.readFileSync(file);
    const magic = b.readInt32LE(0), version = b.readInt32LE(4), n = b.readInt32LE(8);
    if (magic !== 20240520 || version !== 1 || b.length !== 1024 + 2 * n)
        throw new Error(`${file}: bad header (magic ${magic}, version ${version}, ${n} tokens, ${b.length} bytes)`);
    return new Uint16Array(b.buffer, b.byteOffset + 1024, n);
}
function docs(split) {
    const dir = 'var/corpus/default/' + split;
    return fs.readdirSync(dir).filter((f) => !f.startsWith('.')).sort().map((f) => path.join(dir, f));
}
// tokenizers: name -> [data dir, doc token, encode(text) without the doc token]
const cases = {
    gpt2: ['var/data/default', 50256, (t) => gpt2.encode(t, { allowedSpecial: new Set(), disallowedSpecial: new Set() })],
    llama: ['var/data/default-llama', 1, (t) => llama.encode(t, false, true)],
};
for (const [name, [dir, docTok, encode]] of Object.entries(cases)) {
    const splits = name === 'llama' && !process.env.PREP_REFERENCE_FULL ? ['val'] : ['train', 'val'];
    for (const split of splits) {
        const toks = readShard(path.join(dir, split + '_000000.bin'));
        let pos = 0, bad = null;
        for (const f of docs(split)) {
            const want = [docTok, ...encode(fs.readFileSync(f, 'utf8'))];
            for (let i = 0; i < want.length && !bad; i++)
                if (toks[pos + i] !== want[i])
                    bad = `${f}: token ${i} is ${toks[pos + i]}, reference ${want[i]}`;
            pos += want.length;
            if (bad) break;
        }
        if (!bad && pos !== toks.length) bad = `shard holds ${toks.length} tokens, reference ${pos}`;
        console.log(`${bad ? 'FAIL' : 'PASS'} prep_reference_${name}_${split}`);
        if (bad) console.error('  ' + bad);
    }
}
JS
