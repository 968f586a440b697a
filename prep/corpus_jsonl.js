// One split of a corpus's documents as JSON lines, one {"text": ...} object
// a document in its MANIFEST's order, the shape C4 and Dolma ship and the
// GPU bundle carries (xz-compressed by scripts/corpus.sh):
//   node prep/corpus_jsonl.js CORPUS_DIR train|val OUT.jsonl
// Needs only node.
'use strict';
const fs = require('fs');
const path = require('path');

const [dir, split, out] = process.argv.slice(2);
if (!out || !['train', 'val'].includes(split)) {
    console.error('usage: node prep/corpus_jsonl.js CORPUS_DIR train|val OUT.jsonl');
    process.exit(2);
}
const fd = fs.openSync(out, 'w');
let docs = 0;
for (const line of fs.readFileSync(path.join(dir, 'MANIFEST'), 'utf8').split('\n')) {
    const rel = line.slice(66);
    if (!rel.startsWith(split + '/')) continue;
    fs.writeSync(fd, JSON.stringify({ text: fs.readFileSync(path.join(dir, rel), 'utf8') }) + '\n');
    docs++;
}
fs.closeSync(fd);
console.log(`${out}: ${docs} documents`);
