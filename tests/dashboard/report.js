// Checks a sweep's report (tests/report.sh trains the sweep): the API's
// groups against its own cells, every number of the CSV files against the
// API's answers, then report.html in headless Chromium (tests/dashboard/cdp.js)
// opened from disk: Table 1, every figure with its number of series,
// nothing loaded from anywhere, and a screenshot for a person to look at.
// Prints "PASS name" / "FAIL name: why" lines.
//   node report.js   (settings in the environment, see below)
'use strict';
const fs = require('fs');
const path = require('path');

const env = (k) => {
  if (!process.env[k]) throw new Error('report.js: ' + k + ' is not set');
  return process.env[k];
};
const API = env('REPORT_API');        // cod-server's base URL
const SWEEP = env('REPORT_SWEEP');    // the sweep's id
const DIR = env('REPORT_DIR');        // what `cod report --out` wrote
const SHOT = env('REPORT_SHOT');
const PROFILE = env('REPORT_PROFILE');
const CHROMIUM = env('CHROMIUM');

let failed = 0;
function check(name, ok, why) {
  if (ok) console.log('PASS ' + name);
  else { failed++; console.log('FAIL ' + name + ': ' + String(why).replace(/\s+/g, ' ').slice(0, 600)); }
}
const get = async (p) => (await fetch(API + p)).json();
const close = (a, b) => Math.abs(a - b) <= 1e-12 * (1 + Math.abs(b));
const mean = (x) => x.reduce((s, v) => s + v, 0) / x.length;
const sd = (x) => Math.sqrt(x.reduce((s, v) => s + (v - mean(x)) ** 2, 0) / (x.length - 1));

// One CSV line's fields ("..." quoted, "" a quote inside).
function fields(line) {
  const out = [];
  let f = '', q = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (q && ch === '"' && line[i + 1] === '"') { f += '"'; i++; } else if (ch === '"') q = !q;
    else if (ch === ',' && !q) { out.push(f); f = ''; } else f += ch;
  }
  out.push(f);
  return out;
}
// A CSV file as objects; an empty field is null, a number stays its text
// (compared exactly against the API's JSON number).
function csv(name) {
  const [head, ...rows] = fs.readFileSync(path.join(DIR, name), 'utf8').trim().split('\n');
  const keys = fields(head);
  return rows.map((r) => Object.fromEntries(fields(r).map((v, i) => [keys[i], v === '' ? null : v])));
}
// The CSV's text of a number is the API's double: parsed back, the same value.
const same = (text, value) => (value === null ? text === null : text !== null && Number(text) === value);

async function apiChecks() {
  const sw = await get('/v1/sweeps/' + SWEEP);
  const settings = (g) => `${g.params['train.lr']}/${g.params['model.n_layers']}`;
  let agree = true, why = '';
  for (const g of sw.groups) {
    const cells = sw.cells.filter((c) => c.group === g.group);
    const done = cells.filter((c) => c.state === 'succeeded' && !c.diverged).map((c) => c['eval/ppl']);
    const diverged = cells.filter((c) => c.diverged).length;
    const p = g['eval/ppl'];
    const ok = g.n === done.length && g.diverged === diverged &&
      (done.length === 0 ? p === null
        : close(p.mean, mean(done)) && (done.length < 2 ? p.sd === null : close(p.sd, sd(done))));
    if (!ok) { agree = false; why += JSON.stringify(g) + ' vs ' + JSON.stringify(done) + '; '; }
  }
  check('each group\'s mean and sd are those of its finished, non-diverged cells', agree, why);
  const blown = sw.groups.filter((g) => g.params['train.lr'] === 1e30);
  check('the lr 1e30 groups: 3 diverged each, nothing averaged', blown.length === 4 &&
    blown.every((g) => g.diverged === 3 && g.n === 0 && g['eval/ppl'] === null), JSON.stringify(blown));
  const fine = sw.groups.filter((g) => g.params['train.lr'] === 0.003);
  check('the lr 0.003 groups: 3 seeds each', fine.length === 4 && fine.every((g) => g.n === 3), JSON.stringify(fine));
  why = '';
  const byNorm = sw.comparisons.filter((c) => c.differs === 'norm' && c.pairs === 3);
  for (const c of byNorm) {
    const seedPpl = (gi, s) => sw.cells.find((x) => x.group === gi && x.seed === s)['eval/ppl'];
    const d = [1, 2, 3].map((s) => seedPpl(c.a, s) - seedPpl(c.b, s));
    if (!close(c.mean_diff, mean(d)) || !close(c.sd_diff, sd(d)) || !(c.p > 0 && c.p <= 1) ||
        c.within_noise !== (c.p >= 0.05) || !(c.ci95[0] <= c.mean_diff && c.mean_diff <= c.ci95[1]))
      why += JSON.stringify(c) + ' vs ' + JSON.stringify(d) + '; ';
  }
  check('pre vs lns at lr 0.003: paired at the 3 seeds, the mean difference and its test', byNorm.length === 2 && !why,
    why || byNorm.length + ' comparisons');
  const none = sw.comparisons.filter((c) => blown.some((g) => g.group === c.a) && blown.some((g) => g.group === c.b));
  check('between diverged groups: no pairs, no test', none.length > 0 &&
    none.every((c) => c.pairs === 0 && c.p === null && c.within_noise === null), JSON.stringify(none[0]));
  return { sw, settings };
}

// Every row of a series CSV equals the API's series of that name.
async function seriesEqual(file, metric, every = 1) {
  const api = await get(`/v1/sweeps/${SWEEP}/series?name=${encodeURIComponent(metric)}&every=${every}`);
  const rows = csv(file).filter((r) => (r.metric ?? metric) === metric);
  let n = 0, bad = '';
  for (const g of api.groups)
    g.step.forEach((step, i) => {
      const r = rows.find((x) => Number(x.group) === g.group && Number(x.step) === step &&
        (g.layer[i] === null ? x.layer === null : Number(x.layer) === g.layer[i]));
      n++;
      if (!r || !same(r.mean, g.mean[i]) || !same(r.sd, g.sd[i]) || Number(r.n) !== g.n[i])
        bad = bad || `group ${g.group} step ${step} layer ${g.layer[i]}: ${JSON.stringify(r)} vs ${g.mean[i]}`;
    });
  check(`${file}: ${metric} equals the API's series (${n} values)`, n > 0 && n === rows.length && !bad,
    bad || `${n} from the API, ${rows.length} in the file`);
}

async function csvChecks(sw) {
  let bad = '';
  for (const r of csv('table1.csv')) {
    const g = sw.groups[Number(r.group)];
    const p = g['eval/ppl'] || { mean: null, sd: null };
    if (!same(r.ppl_mean, p.mean) || !same(r.ppl_sd, p.sd) || Number(r.n) !== g.n || Number(r.diverged) !== g.diverged)
      bad = bad || JSON.stringify(r) + ' vs ' + JSON.stringify(g);
  }
  check('table1.csv: every mean, sd, n and diverged count equals the API\'s', csv('table1.csv').length === 8 && !bad, bad);
  const best = csv('table1.csv').filter((r) => r.best_of_column === 'true');
  check('table1.csv: the best of each column that has a value', best.length === 2 && best.every((b) =>
    csv('table1.csv').filter((r) => r['model.n_layers'] === b['model.n_layers'] && r['train.lr'] === b['train.lr'] && r.ppl_mean !== null)
      .every((r) => Number(r.ppl_mean) >= Number(b.ppl_mean))), JSON.stringify(best));
  bad = '';
  for (const r of csv('cells.csv')) {
    const c = sw.cells.find((x) => x.experiment === Number(r.experiment));
    if (!c || !same(r.eval_ppl, c['eval/ppl']) || r.diverged !== String(c.diverged) || r.state !== c.state)
      bad = bad || JSON.stringify(r);
  }
  check('cells.csv: every run\'s state, divergence and eval/ppl equal the API\'s', csv('cells.csv').length === 24 && !bad, bad);
  bad = '';
  for (const r of csv('comparisons.csv')) {
    const c = sw.comparisons.find((x) => x.a === Number(r.a) && x.b === Number(r.b));
    if (!c || !same(r.p, c.p) || !same(r.mean_diff, c.mean_diff) || !same(r.ci95_lo, c.ci95 && c.ci95[0]))
      bad = bad || JSON.stringify(r);
  }
  check('comparisons.csv: every comparison equals the API\'s', csv('comparisons.csv').length === sw.comparisons.length && !bad, bad);
  await seriesEqual('out_var.csv', 'layer/out_var');
  await seriesEqual('grad_norm.csv', 'layer/grad_norm');
  await seriesEqual('curves.csv', 'train/loss');
  await seriesEqual('curves.csv', 'eval/ppl');
  await seriesEqual('prune.csv', 'prune/delta_loss');
  await seriesEqual('prune.csv', 'prune/delta_ppl');
  // angular.csv: span K of angular/nK
  for (const k of [1, 2]) {
    const api = await get(`/v1/sweeps/${SWEEP}/series?name=angular/n${k}`);
    const rows = csv('angular.csv').filter((r) => Number(r.span) === k);
    const vals = api.groups.flatMap((g) => g.layer.map((l, i) => [g.group, l, g.mean[i]]));
    check(`angular.csv: d(l, ${k}) equals the API's angular/n${k} (${vals.length} values)`, vals.length > 0 &&
      vals.length === rows.length && vals.every(([g, l, m]) =>
        rows.some((r) => Number(r.group) === g && Number(r.layer) === l && same(r.mean, m))), vals.length + ' vs ' + rows.length);
  }
  // the depth summary's ratio: the API's mean out_var of block L over block 1
  const ov = await get(`/v1/sweeps/${SWEEP}/series?name=layer/out_var`);
  bad = '';
  for (const r of csv('depth_summary.csv')) {
    const g = ov.groups.find((x) => x.group === Number(r.group));
    const last = Math.max(...g.step);
    const at = (l) => g.mean[g.step.findIndex((s, i) => s === last && g.layer[i] === l)];
    const want = g.step.length ? at(Number(r.layers)) / at(1) : null;
    if (want === null ? r.out_var_ratio_last_first !== null : !close(Number(r.out_var_ratio_last_first), want))
      bad = bad || JSON.stringify(r) + ' want ' + want;
  }
  check('depth_summary.csv: the out_var ratio of the last block to the first, from the API\'s series', !bad, bad);
  // its flatness: eval/ppl's change from the last evaluation at or before 90 % of the steps to the last
  const pp = await get(`/v1/sweeps/${SWEEP}/series?name=eval/ppl`);
  bad = '';
  let tails = 0;
  for (const r of csv('depth_summary.csv')) {
    const g = pp.groups.find((x) => x.group === Number(r.group));
    const steps = g ? g.step.filter((s, i) => g.layer[i] === null) : [];
    const last = Math.max(...steps), from = Math.max(...steps.filter((s) => s <= 0.9 * last));
    const at = (s) => g.mean[g.step.findIndex((x, i) => x === s && g.layer[i] === null)];
    const want = steps.length > 1 ? at(last) / at(from) - 1 : null;
    if (want === null ? r.ppl_change_last_tenth !== null
                      : !close(Number(r.ppl_change_last_tenth), want) || Number(r.ppl_change_from_step) !== from)
      bad = bad || JSON.stringify(r) + ' want ' + want + ' from ' + from;
    if (want !== null) tails++;
  }
  check('depth_summary.csv: the eval ppl\'s change over the last tenth of training, from the API\'s series',
    tails === 4 && !bad, bad || tails + ' groups with a change');
}

async function browserChecks() {
  const b = require('../../scripts/cdp')(CHROMIUM, PROFILE);
  try {
    await b.openPage('file://' + path.resolve(DIR, 'report.html'));
    const loaded = await b.waitFor(`document.readyState === 'complete' && !!document.querySelector('table.t1')`, 15000);
    check('report.html opens from disk with Table 1', loaded, 'not loaded');
    const table = await b.evaluate(`(() => {
      const t = document.querySelector('table.t1');
      return { rows: t.tBodies[0].rows.length, cols: t.tHead.rows[0].cells.length - 1,
        best: t.querySelectorAll('td.best').length,
        diverged: [...t.querySelectorAll('td')].filter((td) => /3 diverged/.test(td.textContent)).length,
        withSd: [...t.querySelectorAll('td')].filter((td) => /±.*\\(n=3\\)/.test(td.textContent)).length };
    })()`);
    check('Table 1: 2 variants down, 4 settings across, the best of the 2 columns with values marked',
      table.rows === 2 && table.cols === 4 && table.best === 2, JSON.stringify(table));
    check('Table 1: the 4 diverged cells say "3 diverged", the 4 others mean ± sd (n=3)',
      table.diverged === 4 && table.withSd === 4, JSON.stringify(table));
    const figs = await b.evaluate(`[...document.querySelectorAll('svg.figure')].map((s) =>
      ({ f: s.dataset.figure, series: Number(s.dataset.series), points: Number(s.dataset.points),
         lines: s.querySelectorAll('g.series').length, title: s.querySelector('text').textContent }))`);
    for (const f of ['out_var', 'out_var_history', 'grad_norm', 'train_loss', 'eval_ppl', 'prune']) {
      const mine = figs.filter((x) => x.f.startsWith(f + ':'));
      const drawn = mine.filter((x) => x.points > 0);
      check(`figure ${f}: a titled panel per setting (4) of 2 series, drawn where the runs did not diverge (2)`,
        mine.length === 4 && mine.every((x) => x.series === 2 && x.title.length > 10) &&
        drawn.length === 2 && drawn.every((x) => x.lines === 2), JSON.stringify(mine));
    }
    const maps = figs.filter((x) => x.f.startsWith('angular:'));
    check('angular heat maps: one per group that did not diverge (4), a row per block',
      maps.length === 4 && maps.every((m) => m.series === Number(/n_layers=(\d+)/.exec(m.f)[1]) && m.points > 0),
      JSON.stringify(maps));
    // measured as Chromium lays the text out: a title or label that runs
    // past its figure's edge is clipped in the page and in a paper
    const clipped = await b.evaluate(`[...document.querySelectorAll('svg.figure')].flatMap((s) => {
      const w = s.viewBox.baseVal.width, h = s.viewBox.baseVal.height;
      return [...s.querySelectorAll('text')].filter((t) => {
        const r = t.getBBox(), m = t.getCTM(), sm = s.getCTM().inverse().multiply(m);
        const xs = [r.x, r.x + r.width].flatMap((x) => [r.y, r.y + r.height].map((y) =>
          new DOMPoint(x, y).matrixTransform(sm)));
        return xs.some((p) => p.x < -0.5 || p.x > w + 0.5 || p.y < -0.5 || p.y > h + 0.5);
      }).map((t) => s.dataset.figure + ': ' + t.textContent);
    })`);
    check('every figure\'s title and labels lie within its panel', figs.length > 0 && clipped.length === 0,
      clipped.slice(0, 4).join(' | '));
    const external = await b.evaluate(`(() => {
      const refs = [...document.querySelectorAll('[src], link, script, img, iframe, object, embed')].length;
      const net = [...document.querySelectorAll('[href]')].filter((e) => /^(https?:|\\/\\/)/.test(e.getAttribute('href'))).length;
      return refs + net + performance.getEntriesByType('resource').length;
    })()`);
    check('self-contained: no script, stylesheet, image or link to the network, nothing fetched', external === 0, external);
    const links = await b.evaluate(`[...document.querySelectorAll('a')].map((a) => a.getAttribute('href'))`);
    check('every data link names a CSV file written beside the report', links.length >= 8 &&
      links.every((h) => fs.existsSync(path.join(DIR, h))), links.join(' '));
    await b.screenshot(SHOT);
    check('screenshot saved', fs.statSync(SHOT).size > 10000, 'too small');
    check('no JavaScript errors', b.pageErrors.length === 0, b.pageErrors.join(' | '));
  } finally {
    await b.close();
  }
}

(async () => {
  try {
    const { sw } = await apiChecks();
    await csvChecks(sw);
    await browserChecks();
  } catch (e) {
    check('the report checks ran', false, e.stack);
  }
  process.exit(failed ? 1 : 0);
})();
