// Walks a running cod-server against api/openapi.json: the document the
// server serves is the repository's, it is a valid OpenAPI 3.1 document (by
// @seriousme/openapi-schema-validator), every route of `cod-server --routes`
// is described and every described operation is a route, and real answers
// (successes and errors, for every route) have a described status, media
// type and a body that validates against the described schema (ajv, JSON
// Schema 2020-12, as OpenAPI 3.1 uses).
// Prints "PASS name" / "FAIL name: why" lines.
//   node check.mjs   (settings in the environment: see env() below)
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const env = (k) => {
  if (!process.env[k]) throw new Error('check.mjs: ' + k + ' is not set');
  return process.env[k];
};
const BASE = env('OA_BASE');            // http://127.0.0.1:PORT
const CLIENT = env('OA_CLIENT_TOKEN');
const WORKER = env('OA_WORKER_TOKEN');
const ROUTES = env('OA_ROUTES');        // the output of cod-server --routes
const DOC = env('OA_DOC');              // api/openapi.json
const DATA = env('OA_DATA');            // a directory of token shards (train_*.bin)
const MODULES = env('OA_MODULES');      // node_modules of the validator

const require = createRequire(path.join(MODULES, 'x.js'));
const { Validator } = await import(path.join(MODULES, '@seriousme/openapi-schema-validator/index.js'));
const Ajv2020 = require('ajv/dist/2020.js');

let failed = 0;
const check = (name, ok, why) => {
  if (ok) console.log('PASS ' + name);
  else { failed++; console.log('FAIL ' + name + (why ? ': ' + why : '')); }
};

// --- the document
const served = await fetch(BASE + '/openapi.json');
const text = await served.text();
const repo = fs.readFileSync(DOC, 'utf8');
check('GET /openapi.json serves api/openapi.json, without a token', served.status === 200 && text === repo,
  'status ' + served.status + (text === repo ? '' : ', a different document'));
const doc = JSON.parse(text);
const validator = new Validator();
const res = await validator.validate(JSON.parse(text));
check('the document is valid OpenAPI ' + doc.openapi + ' (@seriousme/openapi-schema-validator)',
  res.valid && validator.version === '3.1', String(JSON.stringify(res.errors)).slice(0, 600));

// --- every route described, every described operation a route
const docPath = (pattern) => pattern.replace(/\/\*$/, '/{file}');
const routes = fs.readFileSync(ROUTES, 'utf8').trim().split('\n').map((l) => {
  const [method, pattern, auth] = l.split(' ');
  return { method: method.toLowerCase(), pattern, path: docPath(pattern), auth };
});
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const described = [];
for (const [p, item] of Object.entries(doc.paths))
  for (const m of METHODS) if (item[m]) described.push(m + ' ' + p);
const routeKeys = routes.map((r) => r.method + ' ' + r.path);
const undescribed = routeKeys.filter((k) => !described.includes(k));
const unrouted = described.filter((k) => !routeKeys.includes(k));
check('every route of cod-server --routes (' + routes.length + ') is described', undescribed.length === 0,
  'not described: ' + undescribed.join(', '));
check('every described operation is a route', unrouted.length === 0, 'no such route: ' + unrouted.join(', '));
const wantSec = { none: [], client: [{ clientToken: [] }], worker: [{ workerToken: [] }] };
const badSec = routes.filter((r) => {
  const o = doc.paths[r.path]?.[r.method];
  return o && JSON.stringify(o.security ?? doc.security) !== JSON.stringify(wantSec[r.auth]);
});
check('each operation names the token its route needs', badSec.length === 0,
  badSec.map((r) => r.method + ' ' + r.pattern).join(', '));

// --- real answers
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema(doc, 'openapi.json');
const ptr = (s) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const deref = (o) => {
  while (o && o.$ref) {
    const parts = o.$ref.replace(/^#\//, '').split('/');
    o = parts.reduce((x, k) => x[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return o;
};
// The route a request takes: the one of its path and method, else (405)
// any of its path; undefined when no route has the path.
const match = (p, method) => {
  const fits = routes.filter((r) =>
    new RegExp('^' + r.pattern.replace(/\*$/, '.+').replace(/\{id\}/g, '[1-9][0-9]*') + '$').test(p));
  return fits.find((r) => r.method === method) || fits[0];
};
const seen = new Map();   // "method path" -> statuses answered
// The secrets answers gave, sent as a worker sends them (docs/api.md,
// "Threat model"): a worker's with its own calls, a rank's with its run's.
const workerSecret = new Map(), leaseSecret = new Map();
const secretHeader = (url, body) => {
  const w = url.match(/^\/v1\/workers\/(\d+)\/(lease|offline)/), r = url.match(/^\/v1\/runs\/(\d+)\//);
  if (w && workerSecret.has(w[1])) return { 'Cod-Worker-Secret': workerSecret.get(w[1]) };
  const q = url.match(/[?&]rank=(\d+)/);
  const rank = q ? Number(q[1]) : (body && body.rank) || 0;
  if (r && leaseSecret.has(r[1] + '/' + rank)) return { 'Cod-Lease-Secret': leaseSecret.get(r[1] + '/' + rank) };
  return {};
};
async function call(method, url, { body, token = CLIENT, headers = {}, raw } = {}) {
  const given = Object.keys(headers).some((k) => /^cod-(worker|lease)-secret$/i.test(k));
  const h = { ...(given ? {} : secretHeader(url, body)), ...headers };
  if (token) h.Authorization = 'Bearer ' + token;
  const init = { method: method.toUpperCase(), headers: h };
  if (raw !== undefined) init.body = raw;
  else if (body !== undefined) init.body = JSON.stringify(body);
  if (init.body !== undefined && !Object.keys(h).some((k) => /^content-type$/i.test(k)))
    h['Content-Type'] = 'application/json';
  const r = await fetch(BASE + url, init);
  const t = await r.text();
  const p = url.split('?')[0];
  try {
    const j = JSON.parse(t);
    if (p === '/v1/workers/register' && r.status === 201) workerSecret.set(String(j.id), j.secret);
    if (/^\/v1\/workers\/\d+\/lease$/.test(p) && r.status === 200) leaseSecret.set(j.run + '/' + j.rank, j.secret);
  } catch { /* not JSON: checked below */ }
  const route = match(p, method);
  const what = method.toUpperCase() + ' ' + url + ' -> ' + r.status;
  let json = null;
  try { json = t ? JSON.parse(t) : null; } catch { /* checked below */ }
  if (!route) {
    check(what + ': an error body', r.status === 404 && validates('Error', json), t.slice(0, 200));
    return { status: r.status, json, headers: r.headers };
  }
  const key = route.method + ' ' + route.path;
  const op = doc.paths[route.path]?.[route.method];
  if (route.method === method && !op) {
    check(what + ': a described operation', false, route.method + ' ' + route.path + ' is not in the document');
    return { status: r.status, json, headers: r.headers };
  }
  if (route.method !== method) {
    // the path exists under other methods: 405, an error, and the Allow header
    check(what + ': 405 with Allow and an error body',
      r.status === 405 && r.headers.get('allow') && validates('Error', json), t.slice(0, 200));
    return { status: r.status, json, headers: r.headers };
  }
  if (!seen.has(key)) seen.set(key, new Set());
  seen.get(key).add(r.status);
  const resp = deref(op.responses[String(r.status)]);
  if (!resp) {
    check(what + ': a described status', false, 'described: ' + Object.keys(op.responses).join(', ') + '; body ' + t.slice(0, 200));
    return { status: r.status, json, headers: r.headers };
  }
  if (!resp.content) {
    check(what + ': no body, as described', t === '', t.slice(0, 200));
    return { status: r.status, json, headers: r.headers };
  }
  const type = (r.headers.get('content-type') || '').split(';')[0].trim();
  const media = resp.content[type];
  if (!media) {
    check(what + ': a described media type', false, type + ' not in ' + Object.keys(resp.content).join(', '));
    return { status: r.status, json, headers: r.headers };
  }
  if (type === 'application/json') {
    const where = 'openapi.json#/paths/' + ptr(route.path) + '/' + route.method + '/responses/' + r.status;
    const schemaRef = op.responses[String(r.status)].$ref
      ? 'openapi.json' + op.responses[String(r.status)].$ref + '/content/application~1json/schema'
      : where + '/content/application~1json/schema';
    const validate = ajv.getSchema(schemaRef);
    const ok = json !== null && validate(json);
    check(what + ': the body validates', ok, ok ? '' : ajv.errorsText(validate.errors) + '; body ' + t.slice(0, 300));
  } else {
    check(what + ': a ' + type + ' body', t.length > 0);
  }
  return { status: r.status, json, headers: r.headers };
}
function validates(name, json) {
  const v = ajv.getSchema('openapi.json#/components/schemas/' + name);
  return json !== null && v(json);
}
const expect = (name, got, want) => check(name, got === want, 'got ' + got + ', want ' + want);

const spec = (name, extra = {}) => ({
  name, model: { dim: 32, n_layers: 2, n_heads: 2, ffn_dim: 64 },
  data: { train: DATA + '/train_*.bin', val: DATA + '/train_*.bin' },
  train: { steps: 4, seq_len: 16, batch_seqs: 2, micro_batch: 2 }, resources: { device: 'cpu' }, ...extra,
});

// service routes
await call('get', '/healthz', { token: null });
await call('get', '/readyz');
await call('get', '/readyz', { token: null });
await call('get', '/metrics');
await call('get', '/', { token: null });
const js = await call('get', '/static/app.js', { token: null });
await call('get', '/static/app.js', { token: null, headers: { 'If-None-Match': js.headers.get('etag') } });
await call('get', '/static/no-such-file.js', { token: null });
await call('get', '/openapi.json', { token: null });

// experiments and sweeps
let r = await call('post', '/v1/experiments', { body: spec('first'), headers: { 'Idempotency-Key': 'oa-1' } });
expect('create: 201', r.status, 201);
const e1 = r.json?.id;
r = await call('post', '/v1/experiments', { body: spec('other'), headers: { 'Idempotency-Key': 'oa-1' } });
expect('an Idempotency-Key reused: 422', r.status, 422);
r = await call('post', '/v1/experiments', { body: spec('second', { priority: -1 }) });
const e2 = r.json?.id;
await call('post', '/v1/experiments', { raw: '{"name": ' });
r = await call('post', '/v1/experiments', { body: { ...spec('bad'), train: { lr: -1 } } });
expect('an invalid spec: 422 naming train.lr', r.json?.error?.field, 'train.lr');
r = await call('post', '/v1/experiments', { raw: JSON.stringify({ name: 'x'.repeat(70000) }) });
expect('an oversize body: 413', r.status, 413);
await call('get', '/v1/experiments?limit=1');
await call('get', '/v1/experiments?limit=abc');
await call('get', '/v1/experiments?state=queued&model=L2-d32');
await call('get', '/v1/experiments/' + e1);
await call('get', '/v1/experiments/999999');
await call('get', '/v1/experiments', { token: 'wrong' });
r = await call('post', '/v1/sweeps', { body: { base: spec('grid'), grid: { norm: ['pre', 'lns'], 'train.seed': [1, 2] } } });
expect('a sweep: 201', r.status, 201);
const sw = r.json?.id;
r = await call('get', '/v1/sweeps/' + sw);
check('a sweep with seeds: its replicate groups and their comparison',
  r.json?.replicates === 'train.seed' && r.json?.groups?.length === 2 && r.json?.comparisons?.length === 1);
await call('get', '/v1/sweeps/999999');
await call('get', '/v1/sweeps/' + sw + '/series?name=layer/out_var&every=2');
await call('get', '/v1/sweeps/' + sw + '/series');
await call('get', '/v1/sweeps/999999/series?name=eval/ppl');
await call('get', '/v1/sweeps/' + sw + '/report');
await call('get', '/v1/sweeps/999999/report');
await call('post', '/v1/sweeps', { body: { base: spec('grid'), grid: {} } });

// the worker protocol
r = await call('post', '/v1/workers/register', { token: WORKER, body: { name: 'oa', device: 'cuda:0', capacity: 1 } });
const wgpu = r.json?.id;
r = await call('post', '/v1/workers/register', { token: WORKER, body: { name: 'oa', device: 'cpu', capacity: 1 } });
expect('register: 201', r.status, 201);
const w = r.json?.id;
await call('post', '/v1/workers/register', { token: WORKER, body: { device: 'tpu' } });
await call('post', '/v1/workers/register', { token: CLIENT, body: { device: 'cpu' } });
r = await call('post', '/v1/workers/' + w + '/lease', { token: WORKER, body: { wait: 0 } });
expect('lease: 200, the first experiment', r.json?.experiment, e1);
const run = r.json?.run;
r = await call('post', '/v1/workers/' + w + '/lease', { token: WORKER, raw: '' });
expect('lease at capacity: 204', r.status, 204);
await call('post', '/v1/workers/999999/lease', { token: WORKER, body: { wait: 0 } });
await call('post', '/v1/workers/' + wgpu + '/lease', { token: WORKER, body: { wait: -1 } });
await call('post', '/v1/runs/' + run + '/heartbeat', { token: WORKER, body: { step: 2 } });
await call('post', '/v1/runs/' + run + '/heartbeat', { token: WORKER, body: { step: 'two' } });
const points = [
  { step: 1, name: 'train/loss', value: 5.5 }, { step: 2, name: 'train/loss', value: null },
  { step: 2, name: 'eval/ppl', value: 120.5 },
  { step: 2, name: 'layer/out_var', layer: 0, value: 1.0 }, { step: 2, name: 'layer/out_var', layer: 2, value: 3.5 },
];
r = await call('post', '/v1/runs/' + run + '/metrics', { token: WORKER, body: { points, logs: [{ seq: 1, line: 'step 1' }] } });
expect('report: 200', r.status, 200);
await call('post', '/v1/runs/' + run + '/metrics', { token: WORKER, body: { points: [{ step: 1, name: 'x' }] } });
await call('post', '/v1/runs/' + run + '/logs', { token: WORKER, body: { logs: [{ seq: 2, line: 'step 2' }] } });
await call('post', '/v1/runs/999999/logs', { token: WORKER, body: { logs: [] } });
await call('get', '/v1/experiments/' + e1 + '/metrics?every=1');
await call('get', '/v1/experiments/' + e1 + '/metrics?name=train/loss&from=0&to=10');
await call('get', '/v1/experiments/' + e1 + '/metrics?every=0');
await call('get', '/v1/experiments/' + e1 + '/layers?name=layer/out_var');
await call('get', '/v1/experiments/' + e1 + '/layers?name=layer/none');
await call('get', '/v1/experiments/' + e1 + '/layers/history?name=layer/out_var');
await call('get', '/v1/experiments/999999/layers/history');
await call('get', '/v1/experiments/' + e1 + '/logs?after=0&limit=10');
await call('get', '/v1/experiments/' + e1 + '/logs?limit=0');
r = await call('get', '/v1/experiments/' + e1);
check('show: the newest value of each scalar, null for a non-finite one',
  r.json?.latest?.['train/loss']?.value === null && r.json?.latest?.['eval/ppl']?.value === 120.5);
r = await call('post', '/v1/runs/' + run + '/finish', { token: WORKER, body: { outcome: 'succeeded', points: 99 } });
expect('finish succeeded with points missing: 409 points_missing', r.json?.error?.code, 'points_missing');
await call('post', '/v1/runs/' + run + '/finish', { token: WORKER, body: { outcome: 'won' } });
await call('post', '/v1/runs/' + run + '/metrics', { token: WORKER, body: { points: [{ step: 4, name: 'train/loss', value: 4.25 }] } });
r = await call('post', '/v1/runs/' + run + '/finish', { token: WORKER, body: { outcome: 'succeeded' } });
expect('finish: 200', r.status, 200);
r = await call('post', '/v1/runs/' + run + '/heartbeat', { token: WORKER, body: {} });
expect('a heartbeat of an ended run: 409 lease_lost', r.json?.error?.code, 'lease_lost');
r = await call('post', '/v1/experiments/' + e2 + '/cancel');
expect('cancel a queued experiment: 202', r.status, 202);
r = await call('post', '/v1/experiments/' + e1 + '/cancel');
expect('cancel a finished experiment: 409', r.status, 409);
// chains: after a finished experiment, after a queued one, an unknown one,
// a chain cancelled; a sweep with a later stage and its fine-tuning table
r = await call('post', '/v1/experiments', { body: spec('next', { after: [e1] }) });
check('after a succeeded experiment: queued', r.json?.state === 'queued' && r.json?.after?.[0]?.id === e1);
const eq = r.json?.id;
r = await call('post', '/v1/experiments', { body: spec('later', { after: [eq] }) });
check('after a queued one: waiting', r.json?.state === 'waiting');
r = await call('post', '/v1/experiments', { body: spec('lost', { after: [999999] }) });
expect('after an unknown experiment: 422 naming after', r.json?.error?.field, 'after');
await call('get', '/v1/experiments?state=waiting');
r = await call('post', '/v1/experiments/' + eq + '/cancel?chain=true');
check('cancel with its chain', r.status === 202 && r.json?.then?.[0]?.state === 'cancelled');
await call('post', '/v1/experiments/' + eq + '/cancel?chain=maybe');
const stage = { name: 'sft', data: { format: 'instructions', train: DATA + '/train_*.bin' },
  train: { steps: 2, seq_len: 16, batch_seqs: 2 }, resources: { device: 'cpu' } };
r = await call('post', '/v1/sweeps', { body: { base: spec('chain'), grid: { norm: ['pre', 'lns'] }, then: stage } });
check('a sweep with a later stage: each cell followed by its fine-tuning, waiting for it',
  r.status === 201 && r.json?.stages?.length === 2 && r.json?.stages?.[0]?.state === 'waiting' &&
  Array.isArray(r.json?.finetune), JSON.stringify(r.json).slice(0, 300));
r = await call('post', '/v1/sweeps', { body: { base: spec('chain'), grid: { norm: ['pre'] }, then: { ...stage, init: { from: '/x' } } } });
expect('a later stage with its own init: 422 naming then[0]', r.json?.error?.field, 'then[0]');
// a gang of two cuda workers, its rendezvous, a rank's failure
r = await call('post', '/v1/experiments', { body: { ...spec('gang2'), resources: { device: 'cpu', gpus: 2 } } });
expect('gpus 2 on a cpu: 422 naming resources.gpus', r.json?.error?.field, 'resources.gpus');
r = await call('post', '/v1/experiments', { body: { ...spec('gang2'), resources: { device: 'cuda', gpus: 2 } } });
expect('2 sequences over 2 GPUs in micro-batches of 2: 422 naming train.batch_seqs', r.json?.error?.field, 'train.batch_seqs');
r = await call('post', '/v1/experiments', { body: { ...spec('gang9'), train: { steps: 4, seq_len: 16, batch_seqs: 18, micro_batch: 2 }, resources: { device: 'cuda', gpus: 9 } } });
expect('gpus above --max-gang: 422 naming resources.gpus', r.json?.error?.field, 'resources.gpus');
const gtrain = { steps: 4, seq_len: 16, batch_seqs: 4, micro_batch: 2 };
r = await call('post', '/v1/experiments', { body: { ...spec('gang2'), train: gtrain, resources: { device: 'cuda', gpus: 2 } } });
expect('a gang experiment: 201', r.status, 201);
const eg = r.json?.id;
r = await call('post', '/v1/workers/register', { token: WORKER, body: { name: 'oa2/0', device: 'cuda:0', host: 'oa2' } });
const wg2 = r.json?.id;
const [ga, gb] = await Promise.all([wgpu, wg2].map((id) =>
  call('post', '/v1/workers/' + id + '/lease', { token: WORKER, body: { wait: 10 } })));
check('both ranks leased, one run, ranks 0 and 1',
  ga.status === 200 && gb.status === 200 && ga.json?.run === gb.json?.run && ga.json?.experiment === eg &&
  ga.json?.world_size === 2 && ga.json?.rank + gb.json?.rank === 1,
  JSON.stringify([ga.json, gb.json]).slice(0, 300));
const grun = ga.json?.run;
r = await call('get', '/v1/runs/' + grun + '/rendezvous?wait=0', { token: WORKER });
expect('rendezvous before rank 0 posts: 204', r.status, 204);
await call('get', '/v1/runs/' + grun + '/rendezvous?wait=x', { token: WORKER });
await call('post', '/v1/runs/' + grun + '/rendezvous', { token: WORKER, body: { rank: 1, id: 'QUJD' } });
r = await call('post', '/v1/runs/' + grun + '/rendezvous', { token: WORKER, body: { rank: 0, id: 'QUJD' } });
expect('rendezvous posted: 200', r.status, 200);
r = await call('post', '/v1/runs/' + grun + '/rendezvous', { token: WORKER, body: { rank: 0, id: 'REVG' } });
expect('another id: 409 rendezvous_taken', r.json?.error?.code, 'rendezvous_taken');
r = await call('get', '/v1/runs/' + grun + '/rendezvous?wait=5', { token: WORKER });
expect('rendezvous read: the id', r.json?.id, 'QUJD');
await call('get', '/v1/runs/999999/rendezvous', { token: WORKER });
r = await call('post', '/v1/runs/' + grun + '/heartbeat', { token: WORKER, body: { step: 1, rank: 7 } });
expect('a rank the run lacks: 422 naming rank', r.json?.error?.field, 'rank');
await call('post', '/v1/runs/' + grun + '/heartbeat', { token: WORKER, body: { step: 1, rank: 1 } });
r = await call('post', '/v1/runs/' + grun + '/finish', { token: WORKER, body: { outcome: 'failed', rank: 1, reason: 'nccl' } });
expect('a rank fails: 200', r.status, 200);
r = await call('post', '/v1/runs/' + grun + '/heartbeat', { token: WORKER, body: { step: 1, rank: 0 } });
expect('the other rank is told: 409 lease_lost', r.json?.error?.code, 'lease_lost');
r = await call('get', '/v1/experiments/' + eg);
check('the gang experiment is queued again, an attempt spent',
  r.json?.state === 'queued' && r.json?.attempts === 1, JSON.stringify(r.json).slice(0, 200));
await call('post', '/v1/experiments/' + eg + '/cancel');
await call('get', '/v1/workers');
r = await call('delete', '/v1/workers/' + w);
expect('remove a worker still there: 409 worker_not_gone', r.json?.error?.code, 'worker_not_gone');
await call('post', '/v1/workers/' + w + '/offline', { token: WORKER, body: { at: 1 } });
await call('post', '/v1/workers/' + w + '/offline', { token: WORKER });
r = await call('delete', '/v1/workers/' + w);
expect('remove an offline worker: 200', r.status, 200);
await call('delete', '/v1/workers/999999');

// what a browser could be made to send, and a call without its secret
r = await call('post', '/v1/experiments', { raw: JSON.stringify(spec('plain')), headers: { 'Content-Type': 'text/plain' } });
expect('a POST that is not JSON: 415', r.status, 415);
r = await call('post', '/v1/experiments', { body: spec('evil'), headers: { Origin: 'http://evil.example' } });
expect('a foreign Origin: 403 cross_origin', r.json?.error?.code, 'cross_origin');
r = await call('post', '/v1/runs/' + grun + '/heartbeat', { token: WORKER, body: { rank: 0 }, headers: { 'Cod-Lease-Secret': '0'.repeat(32) } });
expect('a heartbeat with another secret: 403 forbidden', r.json?.error?.code, 'forbidden');
r = await call('post', '/v1/workers/' + wg2 + '/lease', { token: WORKER, body: { wait: 0 }, headers: { 'Cod-Worker-Secret': '0'.repeat(32) } });
expect('a lease under another worker\'s id: 403 forbidden', r.json?.error?.code, 'forbidden');

// not a route, and a route under another method
await call('get', '/v1/nothing');
await call('delete', '/v1/experiments');
await call('put', '/v1/workers/register', { token: WORKER });

// every route answered, each with a success
const missing = routes.filter((r) => ![...(seen.get(r.method + ' ' + r.path) || [])].some((s) => s < 400));
check('every route answered a success that was checked', missing.length === 0,
  missing.map((r) => r.method + ' ' + r.pattern).join(', '));
const answered = [...seen.values()].reduce((n, s) => n + s.size, 0);
console.log('  ' + seen.size + ' routes, ' + answered + ' (route, status) pairs checked against the document');
process.exit(failed ? 1 : 0);
