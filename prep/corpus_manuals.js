// The prose of the larger manuals in Debian main, one document per page or
// source file, for prep/corpus_extend.js. Each reader knows its markup:
//   rst(DIR)       reStructuredText (Python's html/_sources/**/*.rst.txt)
//   pod(DIR)       Perl's POD (perl-doc's pod/*.pod, the core modules' *.pm)
//   asciidoc(DIR)  Git's manual pages and guides (git-doc's *.txt)
//   man(DIR)       manual pages (man-db's roff, gzipped)
//   html(DIR)      DocBook, Sphinx or mdBook HTML (PostgreSQL's manual, the Rust
//                  books): the page's <main> where there is one
// What goes: code blocks and literal blocks, doctests (>>>), tables,
// synopses, option and definition lists' terms, headings, directives and
// comments, each recognised by its markup; inline markup is taken off its
// text (``x``, C<x>, `x`, <code>x</code> keep x). Of what is left, a
// paragraph stays only if it reads as prose (prep/corpus_text.js's
// isProse): that catches the command line or signature that the markup did
// not mark as code.
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const { walk, paragraphs, isProse, decodeEntities } = require('./corpus_text');

const prose = (text) => paragraphs(text).filter(isProse).join('\n\n');

// [name, prose] for each file of dir that `want` picks, `extract` reading
// its text (gunzipped if it ends in .gz)
function readAll(dir, want, extract, suffix) {
    const docs = [];
    for (const file of walk(dir, want)) {
        const raw = fs.readFileSync(file);
        const text = prose(extract((file.endsWith('.gz') ? zlib.gunzipSync(raw) : raw).toString('utf8')));
        if (text) docs.push([path.relative(dir, file).replace(suffix, '').replace(/\//g, '_').replace(/[^A-Za-z0-9._-]/g, '-'), text]);
    }
    return docs;
}

const indentOf = (line) => line.length - line.trimStart().length;
const UNDERLINE = /^([=\-~^"'*#+`:.])\1{2,}\s*$/;

// Directives whose bodies are code, tables or indexes, not prose.
const RST_SKIP = new Set(['code-block', 'sourcecode', 'code', 'testcode', 'testoutput', 'testsetup', 'testcleanup',
    'doctest', 'productionlist', 'literalinclude', 'highlight', 'toctree', 'csv-table', 'table', 'list-table', 'index',
    'image', 'figure', 'raw', 'include', 'autosummary', 'tabularcolumns', 'opcodes', 'availability']);
function rstText(src) {
    const out = [];
    let skipAbove = -1;   // skipping the block indented deeper than this
    let table = 0;        // border lines of a simple table seen
    const lines = src.split('\n');
    for (let i = 0; i < lines.length; i++) {
        const line = lines[i], t = line.trim(), ind = indentOf(line);
        if (skipAbove >= 0) {
            if (t === '' || ind > skipAbove) continue;
            skipAbove = -1;
        }
        if (/^=+( +=+)+$/.test(t)) { table++; continue; }
        if (table) {
            if (t === '' && table >= 3) table = 0;
            continue;
        }
        if (/^[+|]/.test(t) || t.startsWith('>>>') || t.startsWith('... ') || t === '...') continue;
        if (UNDERLINE.test(t)) {
            if (out.length && out[out.length - 1].trim()) out.pop();
            out.push('');
            continue;
        }
        const d = /^\.\.\s+([\w:-]+)::/.exec(t);
        if (d || t.startsWith('.. ')) {
            // a directive's own line and options go; a comment, a label, or
            // a directive of code or tables goes with its body
            if (!d || RST_SKIP.has(d[1].replace(/^\w+:/, ''))) skipAbove = ind;
            else while (i + 1 < lines.length && /^\s+:[\w-]+:/.test(lines[i + 1])) i++;
            out.push('');
            continue;
        }
        if (t.endsWith('::')) {
            // "text::" ends in ":" and starts a literal block; "::" alone is nothing
            if (t !== '::') out.push(line.replace(/::\s*$/, ':'));
            skipAbove = ind;
            continue;
        }
        out.push(line);
    }
    return out.join('\n')
        .replace(/:[\w:.-]+:`~?!?([^`<]*?)(?:\s*<[^`]*>)?`/g, '$1')   // :func:`~a.b <target>`
        .replace(/``([^`]+)``/g, '$1').replace(/`([^`<]*?)(?:\s*<[^`]*>)?`_{0,2}/g, '$1')
        .replace(/\*\*([^*]+)\*\*/g, '$1').replace(/\*([^*\s][^*]*)\*/g, '$1')
        .replace(/\|(\w[\w -]*)\|/g, '$1').replace(/\\(.)/g, '$1');
}
const rst = (dir) => readAll(dir, (f) => f.endsWith('.rst.txt') || f.endsWith('.txt'), rstText, /\.(rst\.)?txt$/);

// POD: of a module, only its POD (from a line "=command" to "=cut");
// command paragraphs (=head1, =item, =begin ... =end) and verbatim ones
// (indented) go; the formatting codes keep their text.
function podText(src) {
    const pod = [];
    let inPod = false;
    for (const line of src.split('\n')) {
        if (/^=cut\b/.test(line)) inPod = false;
        else if (/^=[a-zA-Z]/.test(line)) inPod = true;
        if (inPod) pod.push(line);
    }
    const out = [];
    let skipping = false;
    for (const para of pod.join('\n').split(/\n\s*\n/)) {
        if (/^=begin\b/.test(para)) { skipping = true; continue; }
        if (/^=end\b/.test(para)) { skipping = false; continue; }
        if (skipping || /^[=\s]/.test(para)) continue;
        out.push(para);
    }
    let text = out.join('\n\n');
    const codes = { lt: '<', gt: '>', verbar: '|', sol: '/', quot: '"', amp: '&' };
    for (let prev = null; prev !== text;) {
        prev = text;
        text = text.replace(/[A-Z]<<+\s+([\s\S]*?)\s+>>+/g, '$1')
            .replace(/L<([^<>|]*)\|[^<>]*>/g, '$1').replace(/L<"?([^<>"]*)"?>/g, '$1')
            .replace(/E<(\w+)>/g, (m, e) => codes[e] || (/^\d+$/.test(e) ? String.fromCodePoint(+e) : ''))
            .replace(/[BCIFSXZ]<([^<>]*)>/g, (m, x) => (m[0] === 'X' || m[0] === 'Z' ? '' : x));
    }
    return text;
}
const pod = (dir) => readAll(dir, (f) => /\.(pod|pm)$/.test(f), podText, /\.(pod|pm)$/);

// AsciiDoc as Git writes it: delimited listing and literal blocks,
// [verse] and other blocks named by an attribute line, indented literal
// paragraphs and "term::" lines go (the term's indented definition stays).
function asciidocText(src) {
    const out = [];
    let fence = null, dropPara = false, def = false;
    const lines = src.split('\n');
    for (let i = 0; i < lines.length; i++) {
        const line = lines[i], t = line.trim();
        if (fence) {
            if (t === fence) fence = null;
            continue;
        }
        if (/^(-{4,}|\.{4,}|\+{4,}|\/{4,})$/.test(t) && !(out.length && out[out.length - 1].trim() &&
            Math.abs(out[out.length - 1].trim().length - t.length) <= 2 && t[0] === '-')) {
            fence = t;
            continue;
        }
        if (t === '') { dropPara = def = false; out.push(''); continue; }
        if (dropPara) continue;
        if (UNDERLINE.test(t)) {
            if (out.length && out[out.length - 1].trim()) out.pop();
            out.push('');
            continue;
        }
        if (/^\[.*\]$/.test(t)) { dropPara = /^\[(verse|listing|literal|source)/.test(t); continue; }
        if (/^(include|ifdef|ifndef|endif|ifeval)::/.test(t) || t.startsWith('//') || /^:[\w-]+:/.test(t) ||
            t.endsWith('::') || /^={1,5} /.test(t) || t === '+') {
            def = t.endsWith('::');   // the term's definition follows, indented
            out.push('');
            continue;
        }
        if (/^\s/.test(line) && !def && (!out.length || out[out.length - 1] === '')) { dropPara = true; continue; }
        out.push(line);
    }
    return out.join('\n').replace(/linkgit:([\w.-]+)\[\d+\]/g, '$1').replace(/\{litdd\}/g, '--')
        .replace(/`([^`]*)`/g, '$1').replace(/(^|\W)'([^'\n]+)'(?=\W|$)/g, '$1$2')
        .replace(/(^|\W)_([^_\n]+)_(?=\W|$)/g, '$1$2').replace(/\*([^*\n]+)\*/g, '$1');
}
const asciidoc = (dir) => readAll(dir, (f, p) => f.endsWith('.txt') && !/RelNotes/.test(p), asciidocText, /\.txt$/);

// roff with the man macros: the SYNOPSIS, EXAMPLES, SEE ALSO, ATTRIBUTES
// and COLOPHON sections, no-fill, example and table blocks, the tags of
// tagged paragraphs and comments go; font macros (.B, .BR, ...) keep their
// words, escapes become their characters. A page that only includes
// another (.so) is nothing.
const ROFF_CHARS = { em: '—', en: '–', aq: "'", dq: '"', lq: '“', rq: '”', oq: '‘', cq: '’', mu: '×', bu: '•', co: '©', rg: '®', ti: '~', ha: '^' };
const MAN_SKIP = /^(SYNOPSIS|EXAMPLES?|SEE ALSO|ATTRIBUTES|COLOPHON)$/;
function manText(src) {
    const out = [];
    let skipSection = false, block = null, dropTag = false;
    for (const line of src.split('\n')) {
        const req = /^[.'](\S+)\s*(.*)$/.exec(line);
        if (block) {
            if (req && req[1] === block) block = null;
            continue;
        }
        if (req) {
            const [, name, args] = req;
            if (name === 'SH') skipSection = MAN_SKIP.test(args.replace(/"/g, '').trim());
            else if (name === 'nf') block = 'fi';
            else if (name === 'EX') block = 'EE';
            else if (name === 'TS') block = 'TE';
            else if (name === 'so') return '';
            else if (/^(B|I|BR|RB|IR|RI|BI|IB|SM|SB)$/.test(name) && !dropTag && !skipSection) {
                const words = args.match(/"[^"]*"|\S+/g) || [];
                out.push(words.map((w) => w.replace(/^"|"$/g, '')).join(name.length === 2 ? '' : ' '));
                continue;
            }
            dropTag = name === 'TP';
            if (!/^(B|I|BR|RB|IR|RI|BI|IB|SM|SB)$/.test(name)) out.push('');
            continue;
        }
        if (skipSection) continue;
        if (dropTag) { dropTag = false; continue; }
        out.push(line);
    }
    return out.join('\n').replace(/\\"[^\n]*/g, '').replace(/\\f(\[[^\]]*\]|\(..|.)/g, '')
        .replace(/\\\((..)|\\\[(\w\w)\]|\\\*\((..)/g, (m, a, b, c) => ROFF_CHARS[a || b || c] || '')
        .replace(/\\[-e]/g, (m) => (m === '\\-' ? '-' : '\\')).replace(/\\[&%:c]/g, '').replace(/\\[ ~]/g, ' ');
}
const man = (dir) => readAll(dir, (f) => /\.\w+\.gz$/.test(f), manText, /\.gz$/);

// HTML: the page's <main> if it has one; scripts, code blocks, tables,
// synopses, navigation and headings go; block elements end paragraphs.
function htmlText(src) {
    const main = /<main\b[^>]*>([\s\S]*)<\/main>/.exec(src);
    let s = main ? main[1] : src;
    s = s.replace(/<!--[\s\S]*?-->/g, '')
        .replace(/<(script|style|pre|table|nav|head|h[1-6]|button)\b[\s\S]*?<\/\1>/gi, '\n\n')
        .replace(/<div class="(?:cmdsynopsis|funcsynopsis|navheader|navfooter|toc)"[\s\S]*?<\/div>/g, '\n\n')
        .replace(/<\/?(?:p|div|li|ul|ol|dl|dt|dd|br|blockquote|section|article|tr|hr)\b[^>]*>/gi, '\n\n')
        .replace(/<[^>]*>/g, '');
    return decodeEntities(s);
}
// Pages that repeat others whole (a book on one page: print.html, Node's
// all.html, the Developer's Reference as developers-reference.html) or list
// them are left out.
const html = (dir) => readAll(dir, (f) => f.endsWith('.html') && f !== path.basename(dir) + '.html' &&
    !/^(print|all|toc|404|search|index|genindex|py-modindex)\.html$/.test(f), htmlText, /\.html$/);

module.exports = { rst, pod, asciidoc, man, html };
