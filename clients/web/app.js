// The cod dashboard: polls cod-server's JSON API and draws what it answers.
// Plain browser JavaScript, no build step; charts by uPlot (vendor/).
'use strict';

const POLL_MS = 3000;
const FETCH_TIMEOUT_MS = 10000;
const MAX_POINTS = 2000;  // a loss curve is downsampled to about this many points
const COLORS = ['#2f6fde', '#d9480f', '#2b8a3e', '#ae3ec9', '#e67700', '#0c8599',
  '#c2255c', '#5c940d', '#364fc7', '#862e9c'];

const $ = (id) => document.getElementById(id);
// Steps and layers are integers: ticks at 1, 2, 5 × 10^k, never between.
const INT_TICKS = [0, 1, 2, 3, 4, 5, 6, 7].flatMap((k) => [1, 2, 5].map((m) => m * 10 ** k));

const state = {
  token: localStorage.getItem('cod.token') || '',
  experiments: [],
  selected: [],                    // ids, in the order clicked
  chosen: false,                   // the user (or the address) chose them
  focus: null,                     // the experiment shown over steps
  layerStep: null,                 // null: follow the newest step
  layerSteps: [],                  // the steps the slider runs over
  series: new Map(),               // id -> {key, loss, ppl, outVar, gradNorm}
  sweeps: new Map(),               // sweep id -> its table
  charts: new Map(),               // element id -> {plot, shape}
  authWanted: false,
};
viewFromAddress();

class AuthError extends Error {}
class ServerError extends Error {}

// The view lives in the address (#sel=3,4,5&step=200), so that it can be
// shared: the selection in the order clicked (the last is shown over steps)
// and the layer step when it is not the newest.
function viewFromAddress() {
  const sel = /sel=([0-9,]+)/.exec(location.hash);
  const step = /step=([0-9]+)/.exec(location.hash);
  state.selected = sel ? sel[1].split(',').filter(Boolean).map(Number) : [];
  state.chosen = state.selected.length > 0;
  state.focus = state.selected.length ? state.selected[state.selected.length - 1] : null;
  state.layerStep = step ? Number(step[1]) : null;
}

function viewToAddress() {
  const parts = [];
  if (state.selected.length) parts.push('sel=' + state.selected.join(','));
  if (state.layerStep !== null) parts.push('step=' + state.layerStep);
  const hash = parts.length ? '#' + parts.join('&') : '';
  if (location.hash !== hash) history.replaceState(null, '', hash || location.pathname);
}

// Until the user picks, the view follows what is most likely wanted: the
// newest sweep and every running experiment (as many as there are colours),
// else the newest experiment that has begun.
function defaultSelection() {
  const newest = state.experiments;  // newest first
  const sweep = (newest.find((e) => e.sweep) || {}).sweep;
  let ids = newest.filter((e) => e.state === 'running' || (sweep && e.sweep === sweep)).map((e) => e.id);
  if (!ids.length) ids = newest.filter((e) => e.step > 0).slice(0, 1).map((e) => e.id);
  return ids.slice(0, COLORS.length).sort((a, b) => a - b);
}

function colorOf(id) {
  const i = state.selected.indexOf(id);
  return COLORS[(i < 0 ? 0 : i) % COLORS.length];
}

// ---- the API

async function api(path) {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), FETCH_TIMEOUT_MS);
  const headers = state.token ? { Authorization: 'Bearer ' + state.token } : {};
  let res;
  try {
    res = await fetch(path, { headers, signal: ctl.signal, cache: 'no-store' });
  } finally {
    clearTimeout(timer);
  }
  if (res.status === 401) throw new AuthError('token refused');
  if (res.status === 404) return null;
  if (!res.ok) throw new ServerError(`${path}: HTTP ${res.status}`);
  return res.json();
}

// ---- polling: one round fetches everything; errors show a banner and the
// next round simply tries again, so a restarted server is picked up silently.

async function poll() {
  try {
    await refresh();
    setBanner(null);
    showLogin(false);
    $('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
  } catch (e) {
    if (e instanceof AuthError) {
      setBanner(null);  // it answered: reachable, only the token is wanting
      showLogin(true);
    } else setBanner(e instanceof ServerError ? 'Server error (' + e.message + '), retrying…'
      : 'Server unreachable, retrying…');
  }
  setTimeout(poll, POLL_MS);
}

async function refresh() {
  const [list, workers] = await Promise.all([
    api('/v1/experiments?limit=1000'),
    api('/v1/workers'),
  ]);
  state.experiments = list ? list.experiments : [];
  $('exp-count').textContent = state.experiments.length + ' experiments' +
    (list && list.next_cursor ? ' (the newest 1000)' : '');
  const known = new Set(state.experiments.map((e) => e.id));
  state.selected = state.chosen ? state.selected.filter((id) => known.has(id)) : defaultSelection();
  if (!state.chosen) state.focus = state.selected[state.selected.length - 1] ?? null;
  viewToAddress();
  renderExperiments();
  renderWorkers(workers ? workers.workers : []);
  await Promise.all([refreshSeries(), refreshSweeps()]);
  renderCharts();
  renderSweeps();
}

// Curves of the selected experiments, fetched again only when their step or
// state moved.
async function refreshSeries() {
  const byId = new Map(state.experiments.map((e) => [e.id, e]));
  for (const id of state.series.keys())
    if (!state.selected.includes(id)) state.series.delete(id);
  await Promise.all(state.selected.map(async (id) => {
    const e = byId.get(id);
    const key = e.state + ':' + e.step;
    const old = state.series.get(id);
    if (old && old.key === key) return;
    const every = Math.max(1, Math.floor((e.step || 0) / MAX_POINTS));
    const base = '/v1/experiments/' + id;
    const [loss, ppl, outVar, gradNorm] = await Promise.all([
      api(base + '/metrics?name=train/loss&every=' + every),
      api(base + '/metrics?name=eval/ppl'),
      api(base + '/layers/history?name=layer/out_var'),
      api(base + '/layers/history?name=layer/grad_norm'),
    ]);
    state.series.set(id, {
      key,
      loss: (loss && loss.series['train/loss']) || [],
      ppl: (ppl && ppl.series['eval/ppl']) || [],
      outVar: outVar || { steps: [], values: [] },
      gradNorm: gradNorm || { steps: [], values: [] },
    });
  }));
}

async function refreshSweeps() {
  const ids = [...new Set(state.experiments.map((e) => e.sweep).filter((s) => s))];
  const tables = await Promise.all(ids.map((id) => api('/v1/sweeps/' + id)));
  state.sweeps = new Map();
  ids.forEach((id, i) => tables[i] && state.sweeps.set(id, tables[i]));
}

// ---- banner and token

function setBanner(text) {
  const b = $('banner');
  b.hidden = !text;
  if (text) b.textContent = text;
}

function showLogin(show) {
  const form = $('login');
  if (show && form.hidden) {
    $('login-note').textContent = state.token ? 'the token was refused' : '';
    form.hidden = false;
    $('token').focus();
  } else if (!show) {
    form.hidden = true;
  }
}

$('login').addEventListener('submit', (ev) => {
  ev.preventDefault();
  state.token = $('token').value.trim();
  localStorage.setItem('cod.token', state.token);
  $('login').hidden = true;
  refresh().then(() => setBanner(null), () => {});
});

// ---- tables

function el(tag, attrs, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') n.className = v;
    else if (k.startsWith('data-')) n.setAttribute(k, v);
    else n[k] = v;
  }
  for (const c of children) n.append(c instanceof Node ? c : String(c ?? ''));
  return n;
}

const stateTag = (s) => el('span', { class: 'state ' + s }, s);
// The attempt that is running or that ended the experiment: the API counts
// lapsed leases only, which a first-attempt success would show as 0.
const attempt = (e) => (e.started && e.state !== 'queued' && e.attempts < e.max_attempts
  ? e.attempts + 1 : e.attempts);

function matchesFilter(e) {
  const st = $('state-filter').value;
  if (st && e.state !== st) return false;
  const words = $('filter').value.toLowerCase().split(/\s+/).filter(Boolean);
  const hay = [e.id, e.name, e.model, e.norm, e.device, e.state, e.worker, e.sweep && 'sweep' + e.sweep,
    ...(e.after || []).map((a) => 'after' + a)]
    .join(' ').toLowerCase();
  return words.every((w) => hay.includes(w));
}

function renderExperiments() {
  const body = $('experiments').tBodies[0];
  const rows = state.experiments.filter(matchesFilter).map((e) => {
    const pct = Math.round(100 * (e.progress || 0));
    const tr = el('tr', { 'data-id': e.id },
      el('td', {}, e.id),
      el('td', {}, e.name || ''),
      el('td', {}, e.model),
      el('td', {}, e.norm),
      el('td', {}, e.device),
      el('td', {}, stateTag(e.state), e.cancel_requested && e.state === 'running' ? ' (cancelling)' : ''),
      el('td', {}, el('span', { class: 'progress' }, el('span', { style: `width:${pct}%` })),
        `${e.step ?? 0}/${e.steps}`),
      el('td', { title: `${e.attempts} lapsed lease(s)` }, `${attempt(e)}/${e.max_attempts}`),
      el('td', {}, e.sweep ?? ''),
      // its chain: the experiments it waits for
      el('td', { class: 'after' }, (e.after || []).length ? '← ' + e.after.join(', ') : ''),
      el('td', {}, e.worker ?? ''),
      el('td', { class: 'reason', title: e.reason || '' }, e.reason || ''));
    if (state.selected.includes(e.id)) {
      tr.classList.add('selected');
      tr.style.setProperty('--swatch', colorOf(e.id));
    }
    return tr;
  });
  body.replaceChildren(...rows);
}

$('experiments').tBodies[0].addEventListener('click', (ev) => {
  const tr = ev.target.closest('tr[data-id]');
  if (tr) toggle(Number(tr.dataset.id));
});

function toggle(id) {
  const i = state.selected.indexOf(id);
  if (i >= 0) {
    state.selected.splice(i, 1);
    if (state.focus === id) state.focus = state.selected[state.selected.length - 1] ?? null;
  } else {
    state.selected.push(id);
    state.focus = id;
  }
  state.chosen = true;
  viewToAddress();
  renderExperiments();
  redraw();
}

async function redraw() {
  try {
    await refreshSeries();
  } catch (e) {
    return;  // the next poll shows what is wrong
  }
  renderCharts();
  renderSweeps();
}

$('clear-selection').addEventListener('click', () => {
  state.selected = [];
  state.focus = null;
  state.chosen = true;
  viewToAddress();
  renderExperiments();
  renderCharts();
  renderSweeps();
});
// A view pasted into the address bar of an open page.
window.addEventListener('hashchange', () => {
  viewFromAddress();
  renderExperiments();
  redraw();
});
$('filter').addEventListener('input', renderExperiments);
$('state-filter').addEventListener('change', renderExperiments);

function age(s) {
  if (s < 90) return Math.round(s) + ' s ago';
  if (s < 5400) return Math.round(s / 60) + ' min ago';
  return Math.round(s / 3600) + ' h ago';
}

function renderWorkers(workers) {
  $('workers').tBodies[0].replaceChildren(...workers.map((w) => el('tr', {},
    el('td', {}, w.id),
    el('td', {}, w.name || ''),
    el('td', {}, w.device),
    el('td', {}, w.capacity),
    el('td', {}, stateTag(w.state)),
    el('td', {}, age(w.heartbeat_age_s)),
    el('td', {}, (w.experiments || []).join(', ')))));
  if (!workers.length)
    $('workers').tBodies[0].replaceChildren(el('tr', {}, el('td', { colSpan: 7, class: 'note' }, 'No workers registered.')));
}

// A sweep as a grid of its replicate groups (cells equal but for the seed,
// as the server groups them): the last grid key across, the others down;
// each cell holds the final eval/ppl, mean ± sd over the finished seeds and
// n when the grid varies the seed, the diverged runs counted apart (never
// averaged in), the best of each column in bold and ≈ on a group whose
// paired comparison with it is within the seed noise; a click selects the
// group's runs. The Report button opens the sweep's report (the server's
// GET /v1/sweeps/{id}/report) in a new tab.
function renderSweeps() {
  const box = $('sweeps');
  if (!state.sweeps.size) {
    box.replaceChildren(el('p', { class: 'note' }, 'No sweeps yet.'));
    return;
  }
  box.replaceChildren(...[...state.sweeps.values()].sort((a, b) => b.id - a.id).map(sweepTable));
}

const fmtNum = (v) => (typeof v === 'number' ? String(Number(v.toPrecision(4))) : '–');

function sweepTable(sw) {
  const keys = Object.keys(sw.grid || {}).filter((k) => k !== sw.replicates);
  const across = keys[keys.length - 1];
  const down = keys.slice(0, -1);
  const fmt = (v) => typeof v === 'string' ? v : JSON.stringify(v);
  // a row names its values; a number says whose it is (lr=0.003,
  // embed_std=0.02), a word (lns, bf16, documents, frozen) says it itself
  const part = (k, v) => (typeof v === 'number' ? `${k.split('.').pop()}=${fmt(v)}` : fmt(v));
  const rowKey = (p) => down.map((k) => part(k, p[k])).join(' · ');
  const cols = across ? sw.grid[across].map(fmt) : [''];
  const groups = sw.groups || [];
  const rows = new Map();
  for (const g of groups) {
    const rk = rowKey(g.params || {});
    if (!rows.has(rk)) rows.set(rk, new Map());
    rows.get(rk).set(across ? fmt((g.params || {})[across]) : '', g);
  }
  const mean = (g) => (g['eval/ppl'] && typeof g['eval/ppl'].mean === 'number' ? g['eval/ppl'].mean : null);
  // the best of each column: the lowest mean of the groups in it
  const bestOf = new Map(cols.map((col) => {
    const ms = [...rows.values()].map((r) => r.get(col)).filter((g) => g && mean(g) !== null);
    return [col, ms.length ? ms.reduce((a, b) => (mean(b) < mean(a) ? b : a)) : null];
  }));
  const tie = (g, best) => (sw.comparisons || []).some((c) => c.within_noise === true &&
    ((c.a === g.group && c.b === best.group) || (c.b === g.group && c.a === best.group)));
  const runsOf = new Map(groups.map((g) => [g.group, sw.cells.filter((c) => c.group === g.group)]));
  const head = el('tr', {}, el('th', {}, down.join(' · ') || ''),
    ...cols.map((c) => el('th', {}, across ? `${across} = ${c}` : 'eval/ppl')));
  const body = [...rows.entries()].map(([rk, byCol]) => el('tr', {}, el('th', {}, rk),
    ...cols.map((col) => {
      const g = byCol.get(col);
      if (!g) return el('td', {}, '');
      const best = bestOf.get(col);
      const ppl = g['eval/ppl'];
      const runs = runsOf.get(g.group) || [];
      const parts = [];
      if (ppl) parts.push(fmtNum(ppl.mean) + (typeof ppl.sd === 'number' ? ' ± ' + fmtNum(ppl.sd) : ''));
      else parts.push('–');
      if (sw.replicates) parts.push(el('span', { class: 'n' }, ` n=${g.n}`));
      if (best && g !== best && tie(g, best)) parts.push(el('span', { class: 'tie', title: 'within seed noise of the best' }, ' ≈'));
      if (g.diverged) parts.push(el('span', { class: 'diverged' }, ` ${g.diverged} diverged`));
      // a single run keeps its state tag; replicates show what is not done yet
      if (runs.length === 1) parts.push(' ', stateTag(runs[0].state));
      else if (g.unfinished) parts.push(el('span', { class: 'n' }, ` ${g.unfinished} to go`));
      const td = el('td', {
        class: 'cell' + (g === best ? ' best' : ''), 'data-group': g.group,
        title: 'experiments ' + runs.map((c) => c.experiment).join(', '),
      }, ...parts);
      if (runs.some((c) => state.selected.includes(c.experiment))) td.style.background = 'var(--sel)';
      td.addEventListener('click', () => toggleGroup(runs.map((c) => c.experiment)));
      return td;
    })));
  const report = el('button', { type: 'button', class: 'report' }, 'Report');
  report.addEventListener('click', () => openReport(sw.id));
  const seeds = sw.replicates ? `, ${sw.grid[sw.replicates].length} seeds each` : '';
  return el('div', { class: 'sweep', 'data-sweep': sw.id },
    el('h3', {}, `Sweep ${sw.id}${sw.name ? ': ' + sw.name : ''} — final eval/ppl of ${groups.length} groups (${sw.cells.length} runs${seeds}) `, report),
    el('table', { class: 'grid' }, el('thead', {}, head), el('tbody', {}, ...body)),
    ...stagesOf(sw));
}

// A sweep's later stages (each cell's fine-tuning after its pretraining):
// how many are in each state, and the fine-tuning table once they have
// scores: accuracy in % per task and on average, mean ± sd over the seeds.
function stagesOf(sw) {
  const stages = sw.stages || [];
  if (!stages.length) return [];
  const count = new Map();
  for (const s of stages) count.set(s.state, (count.get(s.state) || 0) + 1);
  const out = [el('p', { class: 'note stages' }, `Later stages (${stages.length}): `,
    ...[...count.entries()].flatMap(([st, n]) => [stateTag(st), ` ${n} `]))];
  const pct = (s) => (s && typeof s.mean === 'number'
    ? (100 * s.mean).toFixed(2) + (typeof s.sd === 'number' ? ' ± ' + (100 * s.sd).toFixed(2) : '') : '–');
  for (const t of sw.finetune || []) {
    const head = el('tr', {}, el('th', {}, `stage ${t.stage}`), ...t.tasks.map((k) => el('th', {}, k)),
      el('th', {}, 'Avg.'));
    const rows = t.rows.map((r) => el('tr', {},
      el('th', {}, Object.entries(r.params).map(([k, v]) => `${k}=${v}`).join(' ') || 'all'),
      ...t.tasks.map((k) => el('td', { class: 'ft' }, pct((r.tasks[k] || {}).acc))),
      el('td', { class: 'ft' }, pct(r.average), el('span', { class: 'n' }, ` n=${r.n}`))));
    out.push(el('table', { class: 'grid finetune' }, el('thead', {}, head), el('tbody', {}, ...rows)));
  }
  return out;
}

// Selects the group's runs, or clears them when all are selected.
function toggleGroup(ids) {
  const all = ids.every((id) => state.selected.includes(id));
  for (const id of ids) {
    const has = state.selected.includes(id);
    if (all ? has : !has) toggle(id);
  }
}

// The report is fetched with the token and shown from a blob in a new tab;
// its CSV links point at blobs of the CSV files that came with it. The tab
// is opened at the click, before the fetch, so no popup blocker holds it.
async function openReport(id) {
  const win = window.open('', '_blank');
  try {
    const rep = await api('/v1/sweeps/' + id + '/report');
    if (!rep) throw new Error('no such sweep');
    let html = '';
    const links = new Map();
    for (const f of rep.files) {
      if (f.name.endsWith('.html')) html = f.content;
      else links.set(f.name, URL.createObjectURL(new Blob([f.content], { type: f.type })));
    }
    for (const [name, url] of links) html = html.split(`href="${name}"`).join(`href="${url}" download="${name}"`);
    const url = URL.createObjectURL(new Blob([html], { type: 'text/html' }));
    if (win) win.location = url;
    else location.assign(url);
  } catch (e) {
    if (win) win.close();
    setBanner('Report of sweep ' + id + ': ' + e.message);
  }
}

// ---- charts

// Joins [[x, y], …] series on their x values, for uPlot's columnar data.
function join(seriesList) {
  const xs = [...new Set(seriesList.flatMap((s) => s.map((p) => p[0])))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const ys = seriesList.map((s) => {
    const col = new Array(xs.length).fill(null);
    for (const [x, y] of s) col[index.get(x)] = y;
    return col;
  });
  return [xs, ...ys];
}

// A legend shows the values under the cursor while it is over the chart,
// else each series' newest point.
function newestOf(col) {
  for (let i = col.length - 1; i >= 0; i--) if (col[i] !== null && col[i] !== undefined) return col[i];
  return null;
}
const legendNumber = (v) => (v === null || v === undefined ? '--'
  : Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4))));
const legendValue = (u, v, si, idx) => legendNumber(idx == null ? newestOf(u.data[si]) : v);

// On a log axis a value that is not positive has no place: it becomes a gap.
const positive = (col) => col.map((v) => (typeof v === 'number' && v > 0 ? v : null));

// Draws (or updates) one chart; data = [xs, ...ys]. The container carries
// data-series and data-points, what a reader (or a test) can check.
function chart(id, { xLabel, series, data, log, points }) {
  const box = $(id);
  box.dataset.series = series.length;
  box.dataset.points = series.length ? data[0].length : 0;
  const shape = JSON.stringify([series, log]);
  const old = state.charts.get(id);
  if (!series.length || !data[0].length) {
    if (old) old.plot.destroy();
    state.charts.delete(id);
    box.replaceChildren(el('div', { class: 'empty' },
      state.selected.length ? 'No points yet.' : 'Select experiments in the table above.'));
    return;
  }
  if (log) data = [data[0], ...data.slice(1).map(positive)];
  if (old && old.shape === shape) {
    old.plot.setData(data);
    if (old.plot.cursor.idx == null) old.plot.setLegend({ idx: null });
    return;
  }
  if (old) old.plot.destroy();
  box.replaceChildren();
  const opts = {
    width: Math.max(300, box.clientWidth),
    height: 260,
    scales: { x: { time: false }, y: log ? { distr: 3, log: 10 } : {} },
    axes: [{ label: xLabel, incrs: INT_TICKS }, { size: 60 }],
    series: [{ label: xLabel, value: legendValue }, ...series.map((s) => ({
      label: s.label, stroke: s.color, width: 1.5, spanGaps: true, value: legendValue,
      points: { show: !!points, size: 6, fill: s.color },
    }))],
    legend: { live: true },
  };
  const plot = new uPlot(opts, data, box);
  plot.setLegend({ idx: null });
  state.charts.set(id, { plot, shape });
}

function label(id) {
  const e = state.experiments.find((x) => x.id === id);
  return e ? `#${id} ${e.name || ''} ${e.norm}`.replace(/\s+/g, ' ') : '#' + id;
}

function renderCharts() {
  const ids = state.selected.filter((id) => state.series.has(id));
  const lines = ids.map((id) => ({ label: label(id), color: colorOf(id) }));
  const got = ids.map((id) => state.series.get(id));
  chart('chart-loss', { xLabel: 'step', series: lines, data: join(got.map((s) => s.loss)) });
  chart('chart-ppl', { xLabel: 'step', series: lines, data: join(got.map((s) => s.ppl)), log: true, points: true });
  renderLayerCharts(ids, lines, got);
}

// The step slider runs over every step any selected experiment has layer
// statistics at; each experiment shows its newest row at or before it.
function renderLayerCharts(ids, lines, got) {
  const steps = [...new Set(got.flatMap((s) => s.outVar.steps))].sort((a, b) => a - b);
  const slider = $('layer-step');
  slider.max = Math.max(0, steps.length - 1);
  let at = steps.length ? steps[steps.length - 1] : null;
  if (state.layerStep !== null && steps.length) {
    at = steps.filter((s) => s <= state.layerStep).pop() ?? steps[0];
  }
  slider.value = at === null ? 0 : steps.indexOf(at);
  slider.disabled = steps.length < 2;
  $('layer-step-label').textContent = at === null ? 'no layer statistics yet'
    : `step ${at}` + (state.layerStep === null ? ' (newest)' : '');
  state.layerSteps = steps;
  const rowAt = (h) => {
    let row = null;
    h.steps.forEach((s, i) => { if (s <= at) row = h.values[i]; });
    return row || [];
  };
  const byLayer = (name) => {
    const rows = got.map((s) => rowAt(s[name]));
    const n = Math.max(0, ...rows.map((r) => r.length));
    const xs = Array.from({ length: n }, (_, i) => i);
    // grad_norm has no layer 0 (the embedding has no block): start where data does
    const first = xs.findIndex((i) => rows.some((r) => r[i] !== null && r[i] !== undefined));
    const from = first < 0 ? n : first;
    return [xs.slice(from), ...rows.map((r) => xs.slice(from).map((i) => r[i] ?? null))];
  };
  chart('chart-outvar', { xLabel: 'layer', series: lines, data: byLayer('outVar'), log: true, points: true });
  chart('chart-gradnorm', { xLabel: 'layer', series: lines, data: byLayer('gradNorm'), log: true, points: true });

  const focus = state.series.get(state.focus) ? state.focus : ids[ids.length - 1];
  const h = focus !== undefined && state.series.get(focus) ? state.series.get(focus).outVar : { steps: [], values: [] };
  $('history-of').textContent = focus !== undefined ? label(focus) : 'no experiment';
  const n = Math.max(0, ...h.values.map((r) => r.length));
  const layerLines = Array.from({ length: n }, (_, l) => ({
    label: 'layer ' + l, color: `hsl(${Math.round(250 - 210 * l / Math.max(1, n - 1))} 70% 45%)`,
  }));
  chart('chart-history', {
    xLabel: 'step', series: layerLines, log: true,
    data: [h.steps, ...layerLines.map((_, l) => h.values.map((r) => r[l] ?? null))],
  });
}

$('layer-step').addEventListener('input', (ev) => {
  const steps = state.layerSteps;
  const i = Number(ev.target.value);
  state.layerStep = i >= steps.length - 1 ? null : steps[i];
  viewToAddress();
  renderCharts();
});

window.addEventListener('resize', () => {
  for (const [id, c] of state.charts) c.plot.setSize({ width: Math.max(300, $(id).clientWidth), height: 260 });
});

poll();
