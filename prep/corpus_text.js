// What the corpus scripts share (prep/corpus_normalize.js, the default
// corpus; prep/corpus_extend.js and its extractors, the extended one): the
// text normalisation every document gets, the writer of a document and its
// MANIFEST line, and the helpers that the extractors use to keep prose and
// drop the rest.
'use strict';
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');

// UTF-8 if it is valid UTF-8, else Latin-1 (two Gutenberg files are); LF
// line ends; no BOM; no C0 control characters but tab and newline (one
// speech holds a stray \x02); no trailing spaces; one final newline.
function normalize(buf) {
    let s;
    try {
        s = new TextDecoder('utf-8', { fatal: true }).decode(buf);
    } catch (e) {
        s = buf.toString('latin1');
    }
    s = s.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
    s = s.replace(/[\x00-\x08\x0B-\x1F\x7F]/g, '');
    s = s.replace(/[ \t]+\n/g, '\n').replace(/^\n+/, '').replace(/\s+$/, '');
    return s + '\n';
}

function write(outDir, split, name, text, manifest) {
    const rel = split + '/' + name;
    fs.writeFileSync(path.join(outDir, rel), text);
    manifest.push(crypto.createHash('sha256').update(text).digest('hex') + '  ' + rel);
}

// The files under dir, in name order, that want(name, path) picks; links
// are not followed (the Rust books link to files of other packages).
function walk(dir, want, out = []) {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p, want, out);
        else if (e.isFile() && want(e.name, p)) out.push(p);
    }
    return out;
}

// The lines of a UTF-8 file, read a block at a time: mod2imp's export of
// a commentary is larger than a string may be.
function* lines(file) {
    const fd = fs.openSync(file, 'r'), buf = Buffer.alloc(1 << 24);
    let rest = Buffer.alloc(0), n;
    try {
        while ((n = fs.readSync(fd, buf, 0, buf.length, null)) > 0) {
            const data = Buffer.concat([rest, buf.subarray(0, n)]);
            const end = data.lastIndexOf(10);
            if (end < 0) { rest = data; continue; }
            yield* data.subarray(0, end).toString('utf8').split('\n');
            rest = Buffer.from(data.subarray(end + 1));
        }
        if (rest.length) yield rest.toString('utf8');
    } finally {
        fs.closeSync(fd);
    }
}

// Text split at blank lines, each paragraph's lines joined by single spaces
// (the dictionaries and manuals wrap their lines by hand).
function paragraphs(text) {
    return text.split(/\n[ \t]*\n/).map((p) => p.replace(/\s+/g, ' ').trim()).filter(Boolean);
}

// Whether a paragraph reads as English prose: at least five words, mostly
// letters, and few of the marks that code, command lines and tables of
// symbols are made of. The manuals' extractors drop their code blocks and
// tables by their markup first; this catches what is left (a command line
// in a paragraph of its own, a row of options, a signature).
function isProse(p) {
    const words = p.split(/\s+/).filter((w) => /[A-Za-z]{2}/.test(w));
    if (words.length < 5) return false;
    const chars = p.replace(/\s+/g, '');
    const letters = (chars.match(/[A-Za-z\u00C0-\u024F]/g) || []).length;
    if (letters < 0.75 * chars.length) return false;
    const marks = (p.match(/[{}<>=;|\\$@#_[\]]|::|->|=>|\(\)/g) || []).length;
    return marks <= words.length / 8;
}

// The HTML entities that the manuals use, by name or number.
const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', mdash: '—', ndash: '–',
    hellip: '…', lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”', copy: '©', reg: '®', trade: '™',
    times: '×', minus: '−', laquo: '«', raquo: '»', shy: '', zwnj: '', zwj: '' };
function decodeEntities(s) {
    return s.replace(/&(#x[0-9a-fA-F]+|#\d+|[A-Za-z]+);/g, (m, e) => {
        if (e[0] === '#') {
            const cp = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
            return cp > 0 && cp < 0x110000 ? String.fromCodePoint(cp) : m;
        }
        return e in ENTITIES ? ENTITIES[e] : m;
    });
}

// Entries gathered into documents of about `size` bytes, named
// PREFIX-0000, PREFIX-0001, ...: a dictionary is one long list, and whole
// documents of about this size are what validation holds out.
function chunk(prefix, entries, size = 100000) {
    const docs = [];
    let cur = [], bytes = 0;
    const flush = () => {
        if (cur.length) docs.push([prefix + '-' + String(docs.length).padStart(4, '0'), cur.join('\n\n')]);
        cur = [];
        bytes = 0;
    };
    for (const e of entries) {
        cur.push(e);
        bytes += e.length;
        if (bytes >= size) flush();
    }
    flush();
    return docs;
}

module.exports = { normalize, write, walk, lines, paragraphs, isProse, decodeEntities, chunk };
