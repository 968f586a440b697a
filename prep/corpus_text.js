// What the corpus scripts share (prep/corpus_normalize.js, the default
// corpus; prep/corpus_extend.js, the extended one): the text normalisation
// every document gets, and the writer of a document and its MANIFEST line.
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

module.exports = { normalize, write };
