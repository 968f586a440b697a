// The extended corpus's dictionaries (docs/data.md), each as a list of
// entries in English sentences, for prep/corpus_extend.js:
//   gcide(INDEX, DICT_DZ)   Webster 1913 (GCIDE), dictd format
//   foldoc(INDEX, DICT_DZ)  the Free On-line Dictionary of Computing
//   wordnet(DIR)            WordNet 3.0's glosses and examples (data.*)
// What is kept: the headword and its definitions, their lines joined into
// paragraphs. What goes: pronunciations, etymologies and usage labels (the
// bracketed parts), the sources' own tags ([1913 Webster], [PJC]), FOLDOC's
// subject tags, URLs, citations and dates, the database's own info entries,
// and WordNet's pointers and offsets.
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const { paragraphs } = require('./corpus_text');

// dictd's index: "headword<TAB>offset<TAB>length", the numbers in base64
// digits; several headwords may share one entry, which is read once.
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const b64num = (s) => [...s].reduce((n, c) => n * 64 + B64.indexOf(c), 0);
function dictEntries(index, dictDz) {
    // dictzip is gzip with a random-access table in the header: gunzip reads it.
    const data = zlib.gunzipSync(fs.readFileSync(dictDz));
    const seen = new Set(), out = [];
    for (const line of fs.readFileSync(index, 'utf8').split('\n')) {
        const [head, off, len] = line.split('\t');
        if (!len || head.startsWith('00-database') || head.startsWith('00-gcide') || head.startsWith('00-web1913')) continue;
        const at = b64num(off);
        if (seen.has(at)) continue;
        seen.add(at);
        out.push([at, data.subarray(at, at + b64num(len)).toString('utf8')]);
    }
    return out.sort((a, b) => a[0] - b[0]).map((e) => e[1]);
}

// Bracketed parts nest ([F. mortier [mortar]]): innermost first, then strays.
function unbracket(s) {
    for (let prev = null; prev !== s;) {
        prev = s;
        s = s.replace(/\[[^[\]]*\]/g, '');
    }
    return s.replace(/[[\]]/g, '');
}

function gcideEntry(raw) {
    const text = unbracket(raw
        .replace(/\\[^\\\n]*\\/g, '')            // \Ab*do"men\ pronunciations
        .replace(/\([^()\s]*\*[^()]*\)/g, ''))   // (trans*au"di*ent) ones too
        .replace(/[{}]/g, '')                    // {italics and cross-references}
        .replace(/\s+--\s*[A-Z][\w. ]{0,30}\.(?=\s|$)/g, '') // --Bailey. citations
        .replace(/ +([,.;:])/g, '$1');
    return paragraphs(text).filter((p) => /[a-z]{3}/.test(p)).join(' ');
}
const gcide = (index, dictDz) => dictEntries(index, dictDz).map(gcideEntry).filter((e) => e.split(' ').length >= 5);

function foldocEntry(raw) {
    const text = raw
        .replace(/^(\S[^\n]*)/, (m) => m.split('%%%')[0])   // the headword and its synonyms
        .replace(/<(?:[a-z][a-z ,-]*)>\s*/g, '')            // <programming> subject tags
        .replace(/\{?\(?(?:https?|ftp|mailto|news|telnet):[^\s)}]*\)?\}?\.?/g, '')
        .replace(/\{([^{}]*)\}/g, '$1')                     // {cross-references}
        .replace(/<[^<>\s]+@[^<>\s]+>/g, '');               // e-mail addresses
    return paragraphs(text).filter((p) => !/^\[".*\]\.?$/.test(p) && !/^\(\d{4}-\d\d-\d\d\)$/.test(p) &&
        !/^(Home|E-mail|Mailing list|Latest version|Usenet newsgroup|FAQ|Site):/i.test(p) && /[a-z]{3}/.test(p))
        .join(' ');
}
const foldoc = (index, dictDz) => dictEntries(index, dictDz).map(foldocEntry).filter((e) => e.split(' ').length >= 5);

// data.{noun,verb,adj,adv}: "offset lexfile pos count word lexid ... | gloss",
// the file's licence in its first lines (they start with spaces).
const POS = { noun: 'noun', verb: 'verb', adj: 'adjective', adv: 'adverb' };
function wordnet(dir) {
    const out = [];
    for (const [file, pos] of Object.entries(POS)) {
        const entries = [];
        for (const line of fs.readFileSync(path.join(dir, 'data.' + file), 'utf8').split('\n')) {
            if (!/^\d/.test(line)) continue;
            const bar = line.indexOf(' | ');
            if (bar < 0) continue;
            const f = line.slice(0, bar).split(' ');
            const n = parseInt(f[3], 16), words = [];
            for (let i = 0; i < n; i++)
                words.push(f[4 + 2 * i].replace(/\(\w+\)$/, '').replace(/_/g, ' '));
            entries.push(`${words.join(', ')} (${pos}): ${line.slice(bar + 3).trim()}`);
        }
        out.push([file, entries]);
    }
    return out;
}

module.exports = { gcide, foldoc, wordnet };
