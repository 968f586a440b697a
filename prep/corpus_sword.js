// A SWORD commentary as `mod2imp MODULE` writes it ("$$$Book C:V" key
// lines, each followed by that entry's OSIS markup) turned into one plain
// document per chapter (the Treasury of David is one book, the Psalms),
// for prep/corpus_extend.js:
//   sword(IMP_FILE, fresh) -> [[name, text], ...]
// A note on a range of verses is exported once per verse, and Debian's MHCC
// module gives libsword read errors ("Error reading ulBuffNum") after which
// entries repeat whole blocks of others: so `fresh(paragraph)` (the
// caller's deduplication) keeps each paragraph's first copy. The markup
// goes: OSIS paragraphs, line breaks and titles become paragraph breaks,
// every other tag is dropped and its text kept; tables (outlines of verse
// numbers) and notes go whole.
'use strict';
const { lines, decodeEntities } = require('./corpus_text');

function osisText(s) {
    s = s.replace(/<table\b[\s\S]*?<\/table>/g, ' ').replace(/<note\b[\s\S]*?<\/note>/g, ' ')
        .replace(/<(?:div|p|lb|l|lg|list|item|title|chapter)\b[^>]*>|<\/(?:div|p|l|lg|list|item|title|chapter)>/g, '\n\n')
        .replace(/<[^>]*>/g, '');
    return decodeEntities(s).split(/\n\s*\n/).map((p) => p.replace(/\s+/g, ' ').trim())
        .filter((p) => /[a-z]/.test(p));
}

function sword(impFile, fresh) {
    const books = new Map();
    let book = null; // and chapter
    for (const line of lines(impFile)) {
        const m = /^\$\$\$(.+?)(?: (\d+):\d+)?$/.exec(line);
        if (m) {
            book = /^\[.*\]$/.test(m[1]) ? null : m[1] + ' ' + (m[2] || '0').padStart(3, '0');
            if (book && !books.has(book)) books.set(book, []);
        } else if (book && line.trim()) {
            books.get(book).push(...osisText(line).filter(fresh));
        }
    }
    return [...books].filter(([, e]) => e.length)
        .map(([b, e], i) => [String(i).padStart(4, '0') + '-' + b.replace(/[^A-Za-z0-9]+/g, '_'), e.join('\n\n')]);
}

module.exports = { sword };
