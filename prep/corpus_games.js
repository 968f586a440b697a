// The narrative text of two free games in Debian main, out of their data
// files' markup, for prep/corpus_extend.js:
//   wesnoth(DIR)     Battle for Wesnoth's campaigns (WML, data/campaigns):
//                    one document per scenario or unit file
//   endlessSky(DIR)  Endless Sky's data/*.txt: one document per file
//   crawl(DIR)       Dungeon Crawl Stone Soup's descriptions (dat/descript,
//                    English only): its entries in documents of ~100 kB
// Only the strings the player reads as story are kept: in WML the
// translatable (`_ "..."`) values of story=, message= and description=,
// in Endless Sky the lines of conversations and the description,
// spaceport, dialog and log strings. Names, objectives, unit statistics and
// every other key go; of Crawl's entries ("%%%%" between them, the key on
// the first line) the key and comments go. A string that still holds markup (a WML variable
// `$x` or macro `{X}`) goes; Pango tags go; Endless Sky's placeholders for
// the player and the ship become a name, its generated jobs' files (names
// of cargo, pay and destinations) are left out. Each string is one
// paragraph, kept if it reads as prose (prep/corpus_text.js's isProse).
'use strict';
const fs = require('fs');
const path = require('path');
const { walk, paragraphs, isProse, chunk } = require('./corpus_text');

const clean = (s) => s.replace(/<[^<>]*>/g, '').replace(/\s+/g, ' ').trim();

function wesnoth(dir) {
    const docs = [];
    for (const file of walk(dir, (f) => f.endsWith('.cfg'))) {
        const wml = fs.readFileSync(file, 'utf8'), paras = [];
        for (const m of wml.matchAll(/\b(?:story|message|description)\s*=\s*_\s*"((?:[^"]|"")*)"/g)) {
            const s = m[1].replace(/""/g, '"');
            if (/[${}]/.test(s)) continue;
            const p = clean(s);
            if (isProse(p)) paras.push(p);
        }
        if (paras.length) docs.push([path.relative(dir, file).replace(/\.cfg$/, '').replace(/[^A-Za-z0-9.-]+/g, '_'), paras.join('\n\n')]);
    }
    return docs;
}

const ES_NAMES = { first: 'Alex', last: 'Reyes', ship: 'Aurora' };
function endlessSky(dir) {
    const docs = [];
    for (const file of walk(dir, (f) => f.endsWith('.txt') && !/jobs/.test(f))) {
        const paras = [];
        for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
            const m = /^\t+(?:(?:description|spaceport|dialog|log)\s+)?(`|")(.*)\1\s*$/.exec(line);
            if (!m || !m[2].includes(' ')) continue;
            const p = clean(m[2].replace(/<(first|last|ship)>/g, (x, k) => ES_NAMES[k]));
            if (!/<\w+>/.test(m[2].replace(/<(first|last|ship)>/g, '')) && isProse(p)) paras.push(p);
        }
        if (paras.length) docs.push([path.basename(file, '.txt').replace(/[^A-Za-z0-9.-]+/g, '_'), paras.join('\n\n')]);
    }
    return docs;
}

function crawl(dir) {
    const docs = [];
    for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.txt')).sort()) {
        const entries = fs.readFileSync(path.join(dir, f), 'utf8').split(/^%%%%$/m).map((e) =>
            paragraphs(e.split('\n').filter((l) => !l.startsWith('#')).join('\n').replace(/^\s*[^\n]*\n/, ''))
                .filter(isProse).join('\n\n')).filter(Boolean);
        docs.push(...chunk(path.basename(f, '.txt'), entries));
    }
    return docs;
}

module.exports = { wesnoth, endlessSky, crawl };
