// The independent side of tests/parquet_npm.sh and tests/prep_parquet.sh:
// parquet-wasm (arrow-rs) writes the files, hyparquet reads them back.
//   node npm.mjs matrix DIR        the codec x page version x encoding
//                                  files, DIR/NAME.parquet beside
//                                  DIR/NAME.jsonl (the rows written)
//   node npm.mjs shaped DIR        MMLU-, ARC-, HellaSwag- and FineWeb-
//                                  shaped files and their JSON-lines twins
//   node npm.mjs fineweb JSONL OUT [nested]   a FineWeb-shaped file of the
//                                  texts of JSONL (nested: with a struct
//                                  meta {source, body} holding them too)
//   node npm.mjs verify DIR NAME...  for each NAME: DIR/NAME.parquet read by
//                                  hyparquet, DIR/NAME.cod (cod's rows) and
//                                  DIR/NAME.s (cod's strings of column s,
//                                  where there is one) against the rows
//                                  written, DIR/NAME.jsonl: a PASS or FAIL
//                                  line each
//   node npm.mjs refused DIR       files cod must refuse, one thing each
//                                  (DIR/NAME.parquet; NAME says what)
//   node npm.mjs read FILE         the rows through hyparquet, JSON lines
// Each written file is checked to be what its name says (its codec, its
// page version, its encodings), so that a case cannot pass untested.
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm/node';
import { parquetMetadata, parquetReadObjects, parquetSchema } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import fs from 'fs';
import path from 'path';

const utf8 = new arrow.Utf8();
const field = (name, type) => new arrow.Field(name, type, true);
const listOf = t => new arrow.List(field('element', t));
const bigints = (k, v) => (typeof v === 'bigint' ? Number(v) : v);

function table(columns, rows) {
    const schema = new arrow.Schema(columns.map(([name, type]) => field(name, type)));
    const data = {};
    for (const f of schema.fields) data[f.name] = arrow.vectorFromArray(rows.map(r => r[f.name]), f.type);
    return new arrow.Table(schema, data);
}

const codecs = {uncompressed: pw.Compression.UNCOMPRESSED, snappy: pw.Compression.SNAPPY,
                gzip: pw.Compression.GZIP, zstd: pw.Compression.ZSTD};
const refusedCodecs = {lz4: pw.Compression.LZ4_RAW, brotli: pw.Compression.BROTLI};

function write(file, columns, rows, {codec = 'snappy', v2 = false, dict = true, rowGroup = 0, page = 0,
                                     dictPage = 0, rleBool = null, enc = null} = {}) {
    let b = new pw.WriterPropertiesBuilder().setCompression(codecs[codec] ?? refusedCodecs[codec])
        .setWriterVersion(v2 ? pw.WriterVersion.V2 : pw.WriterVersion.V1)
        .setDictionaryEnabled(dict).setEncoding(pw.Encoding.PLAIN);
    if (rowGroup) b = b.setMaxRowGroupSize(rowGroup);
    if (page) b = b.setDataPageSizeLimit(page).setWriteBatchSize(4);
    if (dictPage) b = b.setDictionaryPageSizeLimit(dictPage);
    if (rleBool) b = b.setColumnEncoding(rleBool, pw.Encoding.RLE);
    if (enc) b = b.setColumnEncoding(enc[0], enc[1]);
    const bytes = pw.writeParquet(pw.Table.fromIPCStream(arrow.tableToIPC(table(columns, rows), 'stream')), b.build());
    fs.writeFileSync(file, bytes);
    const plain = (k, v) => (typeof v === 'bigint' ? Number(v) : v instanceof Map ? Object.fromEntries(v) : v);
    fs.writeFileSync(file.replace(/\.parquet$/, '.jsonl'), rows.map(r => JSON.stringify(r, plain) + '\n').join(''));
    return bytes;
}

// what the file holds, from its footer: codecs, encodings, page types
function features(bytes) {
    const md = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    const f = {codecs: new Set(), encodings: new Set(), pages: new Set(), groups: md.row_groups.length};
    for (const g of md.row_groups)
        for (const c of g.columns) {
            f.codecs.add(c.meta_data.codec);
            for (const e of c.meta_data.encodings) f.encodings.add(e);
            for (const s of c.meta_data.encoding_stats ?? []) f.pages.add(s.page_type);
        }
    return f;
}

function expect(what, ok) {
    if (!ok) {
        console.error(`npm.mjs: ${what}`);
        process.exit(1);
    }
}

// rows with every kind the reader reads: nullable strings (some long, some
// repeated, unicode, empty), INT64 beyond 32 bits, INT32, BOOLEAN, DOUBLE,
// a LIST of strings (null, empty, with null elements), a struct of lists
function mixedRows(n) {
    const words = ['alpha', 'beta', 'γάμμα', 'δέλτα', 'emoji 😀', '', 'quote "x"\\ tab\t'];
    const rows = [];
    for (let i = 0; i < n; i++) {
        const s = i % 11 === 3 ? null : i % 5 === 0 ? words[i % words.length].repeat(1 + (i % 40) * 50) : words[i % words.length];
        rows.push({
            s, id: BigInt(1e12) + BigInt(i * 7919) * (i % 2 ? 1n : -1n), n32: i % 9 === 4 ? null : (i * 48271) % 65536 - 32768,
            ok: i % 7 === 6 ? null : i % 3 === 0, x: i % 13 === 12 ? null : i / 8 - 3.1e-3,
            tags: i % 6 === 5 ? null : i % 6 === 4 ? [] : Array.from({length: 1 + (i % 4)}, (_, k) => (k === 2 ? null : words[(i + k) % words.length])),
            choices: i % 10 === 9 ? null : {text: Array.from({length: i % 5}, (_, k) => `choice ${i}.${k}`),
                                            label: i % 8 === 7 ? null : Array.from({length: i % 5}, (_, k) => 'ABCDE'[k])},
            plain: `row ${i}`,
        });
    }
    return rows;
}
const mixedColumns = [['s', utf8], ['id', new arrow.Int64()], ['n32', new arrow.Int32()], ['ok', new arrow.Bool()],
    ['x', new arrow.Float64()], ['tags', listOf(utf8)],
    ['choices', new arrow.Struct([field('text', listOf(utf8)), field('label', listOf(utf8))])], ['plain', utf8]];

function matrix(dir) {
    const rows = mixedRows(300);
    const names = [];
    for (const codec of Object.keys(codecs))
        for (const v2 of [false, true])
            for (const dict of [true, false]) {
                const name = `${codec}-${v2 ? 'v2' : 'v1'}-${dict ? 'dict' : 'plain'}`;
                const bytes = write(path.join(dir, name + '.parquet'), mixedColumns, rows,
                                    {codec, v2, dict, rowGroup: 128, page: 512, rleBool: v2 && !dict ? 'ok' : null});
                const f = features(bytes);
                expect(`${name}: codec ${[...f.codecs]}`, f.codecs.size === 1 && f.codecs.has(codec.toUpperCase()));
                expect(`${name}: pages ${[...f.pages]}`, f.pages.has(v2 ? 'DATA_PAGE_V2' : 'DATA_PAGE') &&
                       !f.pages.has(v2 ? 'DATA_PAGE' : 'DATA_PAGE_V2'));
                // arrow-rs writes RLE_DICTIONARY in v1 pages too (pyarrow's format 1.0
                // PLAIN_DICTIONARY comes from tests/parquet/writer.c)
                const dictEnc = 'RLE_DICTIONARY';
                expect(`${name}: encodings ${[...f.encodings]}`, dict ? f.encodings.has(dictEnc) && f.pages.has('DICTIONARY_PAGE')
                                                                        : !f.encodings.has(dictEnc) && f.encodings.has('PLAIN'));
                if (v2 && !dict) expect(`${name}: RLE booleans`, f.encodings.has('RLE'));
                expect(`${name}: row groups`, f.groups === 3);
                names.push(name);
            }
    // a dictionary that fills up: dictionary pages, then PLAIN pages in the same chunk
    const bytes = write(path.join(dir, 'fallback.parquet'), mixedColumns, rows, {codec: 'zstd', dictPage: 256, rowGroup: 1000});
    const f = features(bytes);
    expect(`fallback: encodings ${[...f.encodings]}`, f.encodings.has('RLE_DICTIONARY') && f.encodings.has('PLAIN'));
    names.push('fallback');
    console.log(names.join('\n'));
}

// The layouts the Hub's converted copies have (MMLU, ARC, HellaSwag, FineWeb)
function shaped(dir) {
    const L = listOf(utf8);
    const mmlu = Array.from({length: 60}, (_, i) => ({question: `Question ${i}: what is ${i} + ${i}?`, subject: ['abstract_algebra', 'anatomy', 'astronomy'][i % 3],
        choices: [`${2 * i}`, `${2 * i + 1}`, `${i}`, 'none of these'], answer: BigInt(i % 4)}));
    write(path.join(dir, 'mmlu.parquet'), [['question', utf8], ['subject', utf8], ['choices', L], ['answer', new arrow.Int64()]], mmlu);
    const arc = Array.from({length: 60}, (_, i) => ({id: `Mercury_${7000 + i}`, question: `Which is item ${i}?`,
        choices: {text: Array.from({length: 3 + (i % 3)}, (_, k) => `option ${k} of ${i}`), label: Array.from({length: 3 + (i % 3)}, (_, k) => (i % 4 === 1 ? '12345' : 'ABCDE')[k])},
        answerKey: (i % 4 === 1 ? '12345' : 'ABCDE')[i % 3]}));
    write(path.join(dir, 'arc.parquet'), [['id', utf8], ['question', utf8], ['choices', new arrow.Struct([field('text', L), field('label', L)])], ['answerKey', utf8]], arc);
    const hs = Array.from({length: 40}, (_, i) => ({ind: 24 + i, activity_label: 'Removing ice from car', ctx_a: `Then, the man writes over the snow ${i}.`,
        ctx_b: 'then', ctx: `Then, the man writes over the snow ${i}. then`, endings: [`ending a ${i}`, `ending b ${i}`, `ending c ${i}`, `ending d ${i}`],
        source_id: `activitynet~v_${i}`, split: 'val', split_type: 'indomain', label: `${i % 4}`}));
    write(path.join(dir, 'hellaswag.parquet'), [['ind', new arrow.Int32()], ['activity_label', utf8], ['ctx_a', utf8], ['ctx_b', utf8], ['ctx', utf8],
        ['endings', L], ['source_id', utf8], ['split', utf8], ['split_type', utf8], ['label', utf8]], hs);
    console.log('mmlu\narc\nhellaswag');
}

// what cod does not read, a file each, beside a string column `ok`
function refused(dir) {
    const n = 6, s = i => `row ${i}`;
    const cases = {
        delta: [['n', new arrow.Int64()], i => BigInt(i), {v2: true, dict: false, enc: ['n', pw.Encoding.DELTA_BINARY_PACKED]}],
        lz4: [['n', new arrow.Int64()], i => BigInt(i), {codec: 'lz4'}],
        brotli: [['n', new arrow.Int64()], i => BigInt(i), {codec: 'brotli'}],
        listlist: [['n', listOf(listOf(utf8))], i => [[s(i)]], {}],
        liststruct: [['n', listOf(new arrow.Struct([field('a', utf8)]))], i => [{a: s(i)}], {}],
        structstruct: [['n', new arrow.Struct([field('inner', new arrow.Struct([field('a', utf8)]))])], i => ({inner: {a: s(i)}}), {}],
        map: [['n', new arrow.Map_(new arrow.Field('entries', new arrow.Struct([new arrow.Field('key', utf8, false), field('value', new arrow.Int32())]), false))],
              i => new Map([[s(i), i]]), {}],
        timestamp: [['n', new arrow.TimestampMillisecond()], i => 1.7e12 + i, {}],
        date: [['n', new arrow.DateDay()], i => new Date(1.7e12 + i * 864e5), {}],
        decimal: [['n', new arrow.Decimal(2, 10, 128)], i => new Uint32Array([i, 0, 0, 0]), {}],
    };
    for (const [name, [col, value, opts]] of Object.entries(cases)) {
        const rows = Array.from({length: n}, (_, i) => ({ok: s(i), n: value(i)}));
        write(path.join(dir, name + '.parquet'), [['ok', utf8], col], rows, opts);
    }
    console.log(Object.keys(cases).join('\n'));
}

const finewebColumns = [['text', utf8], ['id', utf8], ['dump', utf8], ['url', utf8], ['date', utf8], ['file_path', utf8],
    ['language', utf8], ['language_score', new arrow.Float64()], ['token_count', new arrow.Int64()]];

function fineweb(jsonl, out, nested) {
    const rows = fs.readFileSync(jsonl, 'utf8').split('\n').filter(l => l).map((l, i) => {
        const r = JSON.parse(l);
        return {text: r.text ?? null, id: `<urn:uuid:${String(i).padStart(8, '0')}-0000-4000-8000-000000000000>`, dump: 'CC-MAIN-2024-10',
                url: `https://example.org/page/${i}`, date: '2024-02-21T12:00:00Z',
                file_path: 's3://commoncrawl/crawl-data/CC-MAIN-2024-10/segments/0/warc/0.warc.gz', language: 'en',
                language_score: 0.5 + (i % 50) / 100, token_count: BigInt(r.text ? r.text.length >> 2 : 0),
                meta: {source: `doc ${i}`, body: r.text ?? null}};
    });
    const meta = [['meta', new arrow.Struct([field('source', utf8), field('body', utf8)])]];
    // as FineWeb's files are: snappy, small row groups
    write(out, nested ? finewebColumns.concat(meta) : finewebColumns, rows, {codec: 'snappy', rowGroup: 16});
}

// hyparquet leaves a null field out of its object: put it back, as null,
// from the schema (a group not annotated LIST is a struct)
function fill(v, node) {
    const isList = node.element.converted_type === 'LIST' || node.element.logical_type?.type === 'LIST';
    if (v === undefined || v === null) return null;
    if (!node.children.length) return v;
    if (isList) {
        const rep = node.children[0], elem = rep.children.length === 1 ? rep.children[0] : rep;
        return v.map(x => fill(x, elem));
    }
    const o = {};
    for (const c of node.children) o[c.element.name] = fill(v[c.element.name], c);
    return o;
}

async function read(file) {
    const b = fs.readFileSync(file);
    const ab = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
    const root = parquetSchema(parquetMetadata(ab));
    const rows = await parquetReadObjects({file: ab, compressors});
    for (const r of rows) process.stdout.write(JSON.stringify(fill(r, root), bigints) + '\n');
}

const lines = f => fs.readFileSync(f, 'utf8').split('\n').filter(l => l).map(l => JSON.parse(l));
function equal(x, y) {
    if (x === y) return true;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    const kx = Object.keys(x), ky = Object.keys(y);
    return kx.length === ky.length && kx.every((k, i) => k === ky[i] && equal(x[k], y[k]));
}
// the first row where two lists of rows differ, or -1
function differ(a, b) {
    for (let i = 0; i < Math.max(a.length, b.length); i++)
        if (!equal(a[i], b[i])) return i;
    return -1;
}

async function verify(dir, names) {
    let failed = 0;
    for (const name of names) {
        const base = path.join(dir, name), want = lines(base + '.jsonl');
        const b = fs.readFileSync(base + '.parquet');
        const ab = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
        const root = parquetSchema(parquetMetadata(ab));
        const npm = JSON.parse(JSON.stringify((await parquetReadObjects({file: ab, compressors})).map(r => fill(r, root)), bigints));
        const cod = lines(base + '.cod'), bad = [];
        const wantRows = want.map(r => Object.fromEntries(root.children.map(c => [c.element.name, r[c.element.name] ?? null])));
        let i;
        if ((i = differ(npm, wantRows)) >= 0) bad.push(`hyparquet's row ${i}: ${JSON.stringify(npm[i])}, written ${JSON.stringify(wantRows[i])}`);
        if ((i = differ(cod, wantRows)) >= 0) bad.push(`cod's row ${i}: ${JSON.stringify(cod[i])}, written ${JSON.stringify(wantRows[i])}`);
        if (fs.existsSync(base + '.s') && (i = differ(lines(base + '.s'), wantRows.map(r => r.s))) >= 0)
            bad.push(`cod's string ${i} of column s differs`);
        console.log(`${bad.length ? 'FAIL' : 'PASS'} ${name}: cod and hyparquet read the ${want.length} rows written`);
        for (const m of bad) console.log('    ' + m);
        failed += bad.length > 0;
    }
    process.exitCode = failed ? 1 : 0;
}

const [cmd, a, b, c] = process.argv.slice(2);
if (cmd === 'matrix') matrix(a);
else if (cmd === 'shaped') shaped(a);
else if (cmd === 'refused') refused(a);
else if (cmd === 'fineweb') fineweb(a, b, c === 'nested');
else if (cmd === 'verify') await verify(a, process.argv.slice(4));
else if (cmd === 'read') await read(a);
else {
    console.error('usage: node npm.mjs matrix DIR | shaped DIR | fineweb JSONL OUT [nested] | read FILE | verify DIR NAME...');
    process.exit(2);
}
