// Drives the dashboard in headless Chromium (tests/dashboard/cdp.js) as a
// person would: types the token, reads
// the table, clicks experiments, checks what the charts draw, saves a
// screenshot, then waits through a server restart that tests/dashboard.sh
// performs when asked (files in SYNC_DIR).
// Writes one line per check to RESULTS: "1 name" or "0 name: why".
//   node drive.js   (settings in the environment, see below)
'use strict';
const fs = require('fs');
const path = require('path');

const env = (k) => {
  if (!process.env[k]) throw new Error('drive.js: ' + k + ' is not set');
  return process.env[k];
};
const URL = env('DASH_URL');
const TOKEN = env('DASH_TOKEN');
const RESULTS = env('DASH_RESULTS');
const SHOT = env('DASH_SHOT');
const SYNC = env('DASH_SYNC');
const PROFILE = env('DASH_PROFILE');
const ROWS = Number(env('DASH_ROWS'));             // experiments submitted
const LAYERS = Number(env('DASH_LAYERS'));         // n_layers of the trained model
const STEPS = Number(env('DASH_STEPS'));           // train.steps of each experiment
const PICK = env('DASH_PICK').split(',').map(Number);  // experiments to click, in order
const FIRST = env('DASH_FIRST').split(',').map(Number); // the first view: the newest sweep and the running ones
const FILTER = env('DASH_FILTER');                 // "text=rows": a filter and what it leaves
const CHROMIUM = process.env.CHROMIUM || 'chromium';
// The longest any one wait may take: it only ends a wait for what never
// comes. Each wait is for something the page shows, never a guessed delay.
const WAIT_MS = Number(env('DASH_WAIT_MS'));

const results = [];
function check(name, ok, why) {
  results.push(ok ? `1 ${name}` : `0 ${name}: ${String(why).replace(/\s+/g, ' ').slice(0, 600)}`);
  return ok;
}

const {
  send, evaluate, sleep, waitFor: waitUntil, click, typeInto, openPage, attach, use, current, waitNewPage, events,
  pageErrors, chromeLog, close, screenshot,
} = require('../../scripts/cdp')(CHROMIUM, PROFILE);
// every wait has the one limit: it only ends a wait for what never comes
const waitFor = (expression) => waitUntil(expression, WAIT_MS);

const rows = '#experiments tbody tr[data-id]';
const attr = (chart, a) => `Number(document.getElementById('${chart}').dataset.${a} || 0)`;
const drawn = (chart, series, points) =>
  `${attr(chart, 'series')} === ${series} && ${attr(chart, 'points')} === ${points} &&` +
  ` !!document.querySelector('#${chart} canvas')`;
const describe = (chart) => evaluate(`JSON.stringify(document.getElementById('${chart}').dataset)`);

async function waitFile(name) {
  const until = Date.now() + WAIT_MS;
  while (Date.now() < until) {
    if (fs.existsSync(path.join(SYNC, name))) return true;
    await sleep(100);
  }
  return false;
}

async function main() {
  await openPage(URL);

  check('the page asks for the token when the API answers 401',
    await waitFor(`!document.getElementById('login').hidden`), 'no token form');
  await typeInto('#token', TOKEN);
  await click('#login button');
  const listed = await waitFor(`document.querySelectorAll('${rows}').length === ${ROWS}`);
  check(`the table lists the ${ROWS} experiments`, listed,
    (await evaluate(`document.querySelectorAll('${rows}').length`)) + ' rows');
  const states = await evaluate(`[...document.querySelectorAll('${rows}')].map((r) => r.children[5].textContent).sort().join(',')`);
  check('the table shows each state', states === 'running,succeeded,succeeded,waiting', states);
  const chain = await evaluate(`[...document.querySelectorAll('${rows}')].filter((r) => r.children[5].textContent === 'waiting').map((r) => r.children[9].textContent).join()`);
  check('the one that waits shows what it waits for', chain === '← ' + process.env.DASH_AFTER, chain);
  const progress = await evaluate(`[...document.querySelectorAll('${rows}')].map((r) => r.children[6].textContent).sort().join(',')`);
  const want = [`${STEPS / 2}/${STEPS}`, `${STEPS}/${STEPS}`, `${STEPS}/${STEPS}`, `0/${STEPS}`].sort().join(',');
  check('the table shows progress (the running one half way)', progress === want, progress);
  const attempts = await evaluate(`[...document.querySelectorAll('${rows}')].map((r) => r.children[7].textContent).sort().join(',')`);
  check('the table shows the attempt: 1 for those begun, 0 for the waiting one', attempts === '0/3,1/3,1/3,1/3', attempts);

  // The first view, before any click: something to look at, and its address.
  const selectedRows = `[...document.querySelectorAll('#experiments tr.selected')].map((r) => Number(r.dataset.id)).sort((a, b) => a - b).join(',')`;
  check(`the first view selects the newest sweep and the running experiment (${FIRST})`,
    await waitFor(`${selectedRows} === '${FIRST.join(',')}' && ${attr('chart-loss', 'series')} === ${FIRST.length}`),
    (await evaluate(selectedRows)) + ' ' + (await describe('chart-loss')));
  check('the first view is in the address', await waitFor(`location.hash === '#sel=${FIRST.join(',')}'`),
    await evaluate('location.hash'));
  check('the first view: the step slider is at the newest layer statistics',
    await waitFor(`document.getElementById('layer-step-label').textContent === 'step ${STEPS} (newest)'`),
    await evaluate(`document.getElementById('layer-step-label').textContent`));
  const legend = (chart) => `[...document.querySelectorAll('#${chart} .u-legend .u-value')].map((v) => v.textContent)`;
  for (const chart of ['chart-loss', 'chart-ppl', 'chart-outvar']) {
    const numbers = `${legend(chart)}.length === ${FIRST.length + 1} && ${legend(chart)}.every((t) => t !== '' && !isNaN(Number(t)))`;
    check(`the first view: the ${chart} legend shows the newest values, not --`,
      await waitFor(numbers), JSON.stringify(await evaluate(legend(chart))));
  }
  await click('#clear-selection');
  check('clear selection: no chart, and the address says so', await waitFor(
    `${attr('chart-loss', 'series')} === 0 && location.hash === '' && /Select experiments/.test(document.getElementById('chart-loss').textContent)`),
  await describe('chart-loss'));

  const [first, second] = PICK;
  await click(`#experiments tr[data-id="${first}"]`);
  check('a click selects the row',
    await waitFor(`document.querySelector('#experiments tr[data-id="${first}"]').classList.contains('selected')`), 'not selected');
  const lossOk = await waitFor(`${attr('chart-loss', 'series')} === 1 && ${attr('chart-loss', 'points')} > 10 && !!document.querySelector('#chart-loss canvas')`);
  check('a click shows its loss curve (1 series)', lossOk, await describe('chart-loss'));
  check('its eval/ppl curve (1 series)', await waitFor(`${attr('chart-ppl', 'series')} === 1 && ${attr('chart-ppl', 'points')} >= 3`), await describe('chart-ppl'));
  check(`layer/out_var by layer: ${LAYERS + 1} points, layers 0..${LAYERS}`,
    await waitFor(drawn('chart-outvar', 1, LAYERS + 1)), await describe('chart-outvar'));
  check(`layer/grad_norm by layer: ${LAYERS} blocks`,
    await waitFor(drawn('chart-gradnorm', 1, LAYERS)), await describe('chart-gradnorm'));
  check(`layer/out_var over steps: one line per layer (${LAYERS + 1})`,
    await waitFor(`${attr('chart-history', 'series')} === ${LAYERS + 1} && ${attr('chart-history', 'points')} > 2`),
    await describe('chart-history'));

  await click(`#experiments tr[data-id="${second}"]`);
  check('two selected: the loss chart overlays 2 series', await waitFor(drawn('chart-loss', 2, STEPS)), await describe('chart-loss'));
  check('two selected: layer/out_var overlays 2 series of ' + (LAYERS + 1) + ' layers',
    await waitFor(drawn('chart-outvar', 2, LAYERS + 1)), await describe('chart-outvar'));

  // an earlier step on the slider: still every layer, at that step
  await evaluate(`(() => { const s = document.getElementById('layer-step'); s.value = 0;
    s.dispatchEvent(new Event('input')); })()`);
  check('the step slider picks step 0', await waitFor(
    `document.getElementById('layer-step-label').textContent === 'step 0' && ${attr('chart-outvar', 'points')} === ${LAYERS + 1}`),
    await evaluate(`document.getElementById('layer-step-label').textContent`));
  await evaluate(`(() => { const s = document.getElementById('layer-step'); s.value = s.max;
    s.dispatchEvent(new Event('input')); })()`);

  const cells = await evaluate(`document.querySelectorAll('#sweeps td.cell').length`);
  check('the sweep grid has a cell per experiment of the sweep', cells === 2, cells + ' cells');
  check('the sweep grid shows final eval/ppl', await evaluate(
    `[...document.querySelectorAll('#sweeps td.cell')].every((td) => /^\\d+(\\.\\d+)?(?![\\d.])/.test(td.textContent))`),
  await evaluate(`document.getElementById('sweeps').textContent`));

  // One click on Report: the sweep's report in a new tab, its figures drawn.
  const dashboard = current(), seen = events.length;
  await click('#sweeps button.report');
  const tab = await waitNewPage(seen, 10000);
  check('the Report button opens a new tab', !!tab, 'no tab opened');
  if (tab) {
    await attach(tab);
    check('the report tab shows Table 1 and the per-layer figure of the sweep (2 variants)', await waitFor(
      `!!document.querySelector('table.t1') && [...document.querySelectorAll('svg.figure')]` +
      `.some((s) => s.dataset.figure.startsWith('out_var:') && s.dataset.series === '2')`, 10000),
    await evaluate('location.href + " " + document.title').catch((e) => e.message));
    check('the report tab\'s CSV links are the files that came with it', await evaluate(
      `[...document.querySelectorAll('a')].filter((a) => a.download).length >= 5`),
    await evaluate(`[...document.querySelectorAll('a')].map((a) => a.download).join(',')`));
    await send('Target.closeTarget', { targetId: tab }, null);
    use(dashboard);
  }
  const worker = await evaluate(`document.querySelector('#workers tbody').textContent`);
  check('the workers table shows the worker, busy, with its heartbeat age', /busy/.test(worker) && /s ago/.test(worker), worker);

  const [text, left] = FILTER.split('=');
  await typeInto('#filter', text);
  check(`the filter "${text}" leaves ${left} rows`,
    await waitFor(`document.querySelectorAll('${rows}').length === ${left}`),
    await evaluate(`document.querySelectorAll('${rows}').length`));
  await evaluate(`document.getElementById('filter').value = ''; document.getElementById('filter').dispatchEvent(new Event('input'))`);

  // the table whole again and its charts drawn anew before the picture
  check('the filter cleared: every row and both curves back', await waitFor(
    `document.querySelectorAll('${rows}').length === ${ROWS} && ${drawn('chart-loss', 2, STEPS)}`),
  await describe('chart-loss'));
  await screenshot(SHOT);
  check('screenshot saved', fs.statSync(SHOT).size > 10000, 'too small');

  // The server goes away and comes back on the same port.
  fs.writeFileSync(path.join(SYNC, 'stop'), '');
  await waitFile('stopped');
  const banner = await waitFor(`!document.getElementById('banner').hidden &&
    /unreachable/.test(document.getElementById('banner').textContent)`);
  check('server down: the "unreachable, retrying" banner shows', banner, 'no banner');
  fs.writeFileSync(path.join(SYNC, 'banner'), '');
  await waitFile('started');
  check('server back: the banner goes and the table is whole again', await waitFor(
    `document.getElementById('banner').hidden && document.querySelectorAll('${rows}').length === ${ROWS}` +
    ` && ${attr('chart-loss', 'series')} === 2`),
  await evaluate(`document.getElementById('banner').textContent`));

  // A shared address: the same view in a fresh page.
  await send('Page.navigate', { url: URL + `#sel=${second},${first}&step=0` });
  check('an address pasted into an open page shows its view', await waitFor(
    `${selectedRows} === '${[first, second].sort((a, b) => a - b).join(',')}' && ${attr('chart-loss', 'series')} === 2` +
    ` && document.getElementById('layer-step-label').textContent === 'step 0'`),
  await evaluate(selectedRows));
  await send('Page.reload');
  check('a shared address opens on its view: the selection, the focus and the step', await waitFor(
    `${selectedRows} === '${[first, second].sort((a, b) => a - b).join(',')}' && ${attr('chart-loss', 'series')} === 2` +
    ` && document.getElementById('layer-step-label').textContent === 'step 0'` +
    ` && /#${first} /.test(document.getElementById('history-of').textContent)`),
  (await evaluate(selectedRows)) + ' ' + (await evaluate(`document.getElementById('layer-step-label').textContent`)));
  check('no JavaScript errors in the page', pageErrors.length === 0, pageErrors.join(' | '));
}

main().catch((e) => check('the browser session', false, e.message + ' (chromium: ' + chromeLog().slice(-300) + ')'))
  .finally(async () => {
    fs.writeFileSync(RESULTS, results.join('\n') + '\n');
    await close();
    process.exit(0);
  });
