// Headless Chromium over the DevTools protocol on a pipe (no npm package,
// no port), for the browser checks (tests/dashboard/drive.js, the
// dashboard; tests/dashboard/report.js, the sweep report) and screenshots:
//   const b = require('./cdp')(CHROMIUM, PROFILE_DIR);
//   await b.openPage(url); await b.waitFor('expression', ms); await b.close();
//   node scripts/cdp.js screenshot PAGE.html OUT.png   (the whole page; CHROMIUM
//                                                     names the browser)
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');

module.exports = function cdp(chromium, profile) {
  // ---- the protocol: JSON messages separated by NUL, fd 3 in, fd 4 out
  const chrome = spawn(chromium, [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
    '--no-default-browser-check', '--remote-debugging-pipe', '--user-data-dir=' + profile,
    '--window-size=1400,1000', 'about:blank',
  ], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
  let chromeLog = '';
  chrome.stderr.on('data', (d) => { chromeLog = (chromeLog + d).slice(-4000); });
  const toChrome = chrome.stdio[3];
  const fromChrome = chrome.stdio[4];

  let nextId = 1;
  const pending = new Map();
  const pageErrors = [];
  const events = [];  // every event the browser sent, {method, params, sessionId}
  let buf = Buffer.alloc(0);
  fromChrome.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    let nul;
    while ((nul = buf.indexOf(0)) >= 0) {
      const msg = JSON.parse(buf.subarray(0, nul).toString('utf8'));
      buf = buf.subarray(nul + 1);
      if (msg.id && pending.has(msg.id)) {
        const { resolve, reject, method } = pending.get(msg.id);
        pending.delete(msg.id);
        if (msg.error) reject(new Error(method + ': ' + msg.error.message));
        else resolve(msg.result);
      } else if (msg.method) {
        events.push(msg);
        if (msg.method === 'Runtime.exceptionThrown') {
          const d = msg.params.exceptionDetails;
          pageErrors.push((d.exception && d.exception.description) || d.text);
        }
      }
    }
  });

  let session;
  function send(method, params = {}, sessionId = session) {
    const id = nextId++;
    const msg = { id, method, params };
    if (sessionId) msg.sessionId = sessionId;
    toChrome.write(JSON.stringify(msg) + '\0');
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
  }

  async function evaluate(expression) {
    const r = await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
    const ex = r.exceptionDetails;
    if (ex) throw new Error('evaluate ' + expression + ': ' + ((ex.exception && ex.exception.description) || ex.text));
    return r.result.value;
  }

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  // Polls expression until it is truthy; false after timeout_ms. It may throw
  // meanwhile (the page still loading).
  async function waitFor(expression, timeoutMs) {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      if (await evaluate(expression).catch(() => false)) return true;
      await sleep(100);
    }
    return false;
  }

  // A real mouse click at the middle of the element.
  async function click(selector) {
    const box = await evaluate(`(() => {
      const e = document.querySelector(${JSON.stringify(selector)});
      if (!e) return null;
      e.scrollIntoView({ block: 'center' });
      const r = e.getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
    })()`);
    if (!box) throw new Error('nothing to click at ' + selector);
    for (const type of ['mouseMoved', 'mousePressed', 'mouseReleased'])
      await send('Input.dispatchMouseEvent', { type, x: box.x, y: box.y, button: 'left', clickCount: 1 });
  }

  async function typeInto(selector, text) {
    await evaluate(`document.querySelector(${JSON.stringify(selector)}).focus()`);
    await evaluate(`document.querySelector(${JSON.stringify(selector)}).select?.()`);
    await send('Input.insertText', { text });
  }

  // Attaches to a page (flat session), which later calls then talk to.
  async function attach(targetId) {
    ({ sessionId: session } = await send('Target.attachToTarget', { targetId, flatten: true }, null));
    await send('Runtime.enable');
    await send('Page.enable');
    await send('Emulation.setDeviceMetricsOverride', { width: 1400, height: 1000, deviceScaleFactor: 1, mobile: false });
    return session;
  }

  // The session later calls talk to: the one attach() returned, to go back.
  const use = (s) => { session = s; };
  const current = () => session;

  // A new page at url, attached.
  async function openPage(url) {
    await send('Target.setDiscoverTargets', { discover: true }, null);
    const { targetId } = await send('Target.createTarget', { url: 'about:blank' }, null);
    await attach(targetId);
    await send('Page.navigate', { url });
    return targetId;
  }

  // The first page opened after `since` events (a tab the page opened), or null.
  async function waitNewPage(since, timeoutMs) {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      const e = events.slice(since).find((m) => m.method === 'Target.targetCreated' &&
        m.params.targetInfo.type === 'page' && m.params.targetInfo.openerId);
      if (e) return e.params.targetInfo.targetId;
      await sleep(100);
    }
    return null;
  }

  // The whole page as a PNG.
  async function screenshot(file) {
    const { cssContentSize: size } = await send('Page.getLayoutMetrics');
    const shot = await send('Page.captureScreenshot', {
      format: 'png', captureBeyondViewport: true,
      clip: { x: 0, y: 0, width: 1400, height: Math.ceil(size.height), scale: 1 },
    });
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, Buffer.from(shot.data, 'base64'));
  }

  // Browser.close lets Chromium end its helper processes before the caller
  // removes the profile; a browser that hangs is killed.
  async function close() {
    const exited = new Promise((r) => chrome.once('exit', r));
    send('Browser.close', {}, null).catch(() => {});
    if (await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]) === false)
      chrome.kill('SIGKILL');
  }

  return {
    send, evaluate, sleep, waitFor, click, typeInto, attach, use, current, openPage, waitNewPage,
    screenshot, close,
    pageErrors, events, chromeLog: () => chromeLog,
  };
};

// node scripts/cdp.js screenshot PAGE OUT.png
if (require.main === module) {
  const [cmd, page, out] = process.argv.slice(2);
  if (cmd !== 'screenshot' || !out) {
    console.error('usage: node scripts/cdp.js screenshot PAGE.html OUT.png');
    process.exit(2);
  }
  const os = require('os');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'cod-shot-'));
  const b = module.exports(process.env.CHROMIUM || 'chromium', profile);
  (async () => {
    let rc = 0;
    try {
      await b.openPage(/^[a-z]+:/.test(page) ? page : 'file://' + path.resolve(page));
      if (!(await b.waitFor(`document.readyState === 'complete'`, 20000))) throw new Error(page + ' did not load');
      await b.screenshot(out);
    } catch (e) {
      console.error('cdp.js: ' + e.message);
      rc = 1;
    }
    await b.close();
    fs.rmSync(profile, { recursive: true, force: true });
    process.exit(rc);
  })();
}
