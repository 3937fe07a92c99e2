// Strict embedding: the pages and <mha-explorer> served with
//   Content-Security-Policy: default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'
// must raise no `securitypolicyviolation` (nor a CSP console error), request nothing beyond
// their own origin, and add no global names (Object.keys(window) before the page's scripts and
// after they ran). The worker path runs too (a 2048-wide model in the example page). Every
// test runs in all three engines (the policy is enforced by the engine). The three pages are
// loaded one after the other in one browser page: each load is a document of its own, with the
// probe installed before its scripts and a report of its own.
//
//   node --test tests/browser/csp.test.js

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { DRIVER_GLOBALS, ENGINE, limits, note, startWeb, stopWeb, test } from './driver.js';

export const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";
const PROBE = 'mha-csp-probe';

let server;
let browser;
let page = null;
/** What the page loaded last has reported; visit() starts a new one. */
let report = null;
let readRequests = async () => {};

before(async () => {
  ({ server, browser } = await startWeb({ needs: ['web/lib/wasm/mha_core.js', 'web/lib/wasm/mha_core.wasm'], headers: { 'Content-Security-Policy': CSP } }));
});

after(async () => {
  if (page) await page.close();
  await stopWeb({ server, browser });
});

const newReport = () => ({ violations: [], cspConsole: [], errors: [], foreign: [], requests: 0 });

/** The browser page, with the probe installed in every frame before any of its scripts. */
async function open() {
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const origin = new URL(server.url).origin;
  report = newReport();
  await page.addInitScript((key) => {
    // A symbol-keyed, non-enumerable record: invisible to Object.keys(window).
    const record = { baseline: Object.keys(window), violations: [] };
    document.addEventListener('securitypolicyviolation', (e) => {
      record.violations.push(`${e.violatedDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber}`);
    });
    Object.defineProperty(window, Symbol.for(key), { value: record });
  }, PROBE);
  const consoleMessage = (type, text, url) => {
    if (/Content Security Policy|Refused to/i.test(text)) report.cspConsole.push(text);
    else if (type === 'error' && !(url || '').endsWith('/favicon.ico')) report.errors.push(text);
  };
  // webkit has no console events: its probe reports console.error calls (CSP refusals reach the
  // securitypolicyviolation events the init script records)
  if (ENGINE === 'webkit') page.on('consoleError', (text, url) => consoleMessage('error', text, url));
  else page.on('console', consoleMessage);
  page.on('pageError', (message) => report.errors.push(`page error: ${message}`));
  const request = (url) => {
    report.requests += 1;
    if (!url.startsWith(`${origin}/`) && !url.startsWith('data:') && !url.startsWith('blob:')) report.foreign.push(url);
    // Firefox reports a font of its own as a request of the page: a data: URL the page's CSP
    // would refuse, for which no violation is raised (the violations are checked as well)
    if (ENGINE === 'firefox' && url.startsWith('data:font/')) report.engineFonts = (report.engineFonts || 0) + 1;
    else if (url.startsWith('data:') || url.startsWith('blob:')) report.foreign.push(`${url.slice(0, 40)} (not 'self')`);
  };
  page.on('request', request);
  // WebKit has no request events: the requests of every frame, read from Resource Timing
  readRequests = async () => {
    if (await page.requests() === null) return;
    note(limits.requests);
    for (const frame of await page.frames()) for (const url of await frame.evaluate(() => [location.href, ...performance.getEntriesByType('resource').map((e) => e.name)])) request(url);
  };
  if (!page.onWorkerConsole((text) => { if (/Content Security Policy|Refused to/i.test(text)) report.cspConsole.push(`worker: ${text}`); })) {
    note(`${limits.workerConsole}: a worker's CSP refusals are seen only as its failure to compute`);
  }
  return page;
}

/** Load urlPath in the page, with a new report: { page, report }. */
async function visit(urlPath) {
  if (!page) await open();
  // what the document before reported is delivered to its own report first
  await page.flushEvents();
  report = newReport();
  await page.goto(`${server.url}${urlPath}`);
  return { page, report };
}

/** Violations and new globals recorded in every frame of the page. */
async function collect(page, report) {
  const frames = [];
  await page.flushEvents();
  await readRequests();
  for (const frame of await page.frames()) {
    const result = await frame.evaluate((key) => {
      const record = window[Symbol.for(key)];
      if (!record) return null;
      const before = new Set(record.baseline);
      return { url: location.href, violations: record.violations, added: Object.keys(window).filter((k) => !before.has(k) && !/^\d+$/.test(k)) }; // window[0…]: child frames
    }, PROBE);
    if (result) frames.push(result);
  }
  const violations = frames.flatMap((f) => f.violations.map((v) => `${f.url}: ${v}`));
  const byDriver = frames.flatMap((f) => f.added.filter((k) => DRIVER_GLOBALS.includes(k)));
  if (byDriver.length) note(`the driver's own names, not counted: ${[...new Set(byDriver)].join(', ')}`);
  if (report.engineFonts) note(`${report.engineFonts} data: font request(s) of Firefox's own (no violation raised for them)`);
  const added = frames.flatMap((f) => f.added.filter((k) => !DRIVER_GLOBALS.includes(k)).map((k) => `${f.url}: ${k}`));
  console.log(`  ${page.url()}: ${frames.length} frame(s), ${report.requests} requests, ${violations.length} CSP violations, ${report.cspConsole.length} CSP console errors, ${report.foreign.length} requests beyond the origin, ${added.length} new globals`);
  for (const line of [...violations, ...report.cspConsole, ...report.foreign.map((u) => `foreign request: ${u}`), ...added.map((k) => `new global: ${k}`), ...report.errors]) {
    console.log(`    ${line}`);
  }
  return { violations, added };
}

function assertClean({ violations, added }, report) {
  assert.deepEqual(violations, [], 'securitypolicyviolation events');
  assert.deepEqual(report.cspConsole, [], 'CSP errors in the console');
  assert.deepEqual(report.foreign, [], 'requests beyond the origin');
  assert.deepEqual(added, [], 'new global names');
  assert.deepEqual(report.errors, [], 'errors');
}

const allReady = () => [...document.querySelectorAll('mha-explorer')].length > 0 &&
  [...document.querySelectorAll('mha-explorer')].every((e) => e.status === 'ready' || e.status === 'error');

test('the example page: five elements, an iframe embed, free text, a wide model in a Web Worker', { engines: 'all', why: 'csp' }, async () => {
  const { page, report } = await visit('examples/embed.html');
  await page.waitForFunction(allReady, null, { timeout: 60_000 });
  const frame = (await page.frames()).find((f) => f.url.includes('/embed.html?'));
  assert.ok(frame, 'the iframe embed loaded');
  await frame.waitForFunction(allReady, null, { timeout: 60_000 });
  // free text: loads the tagger lazily under the same policy
  await page.evaluate(() => { document.getElementById('single').sentence = 'The old man gave his dog a bone.'; });
  await page.waitForFunction(() => document.getElementById('single').status === 'ready' &&
    document.getElementById('single').result.tokens.length === 9, null, { timeout: 60_000 });
  // a wide model: computed in a worker, progress shown
  await page.click('#big-start');
  await page.waitForFunction(() => document.getElementById('big')?.status === 'ready' || document.getElementById('big')?.status === 'error', null, { timeout: 120_000 });
  const states = await page.evaluate(() => [...document.querySelectorAll('mha-explorer')].map((e) => `${e.id}:${e.status}:${e.result?.worker ? 'worker' : 'direct'}`));
  console.log(`  elements: ${states.join(', ')}`);
  assert.ok(states.every((s) => s.includes(':ready:')), states.join(', '));
  assert.ok(states.includes('big:ready:worker'), 'the wide model ran in a Web Worker');
  const shadowStyles = await page.evaluate(() => [...document.querySelectorAll('mha-explorer')].map((e) => [e.shadowRoot.querySelectorAll('style').length, e.shadowRoot.adoptedStyleSheets.length]));
  assert.ok(shadowStyles.every(([styles, adopted]) => styles === 0 && adopted === 1), 'styles come from one adopted stylesheet, no <style>');
  const cssRules = await page.evaluate(() => document.querySelector('mha-explorer').shadowRoot.adoptedStyleSheets[0].cssRules.length);
  assert.ok(cssRules > 20, `the adopted stylesheet has its rules under the policy (${cssRules})`);
  await page.screenshot('csp-examples.png', { fullPage: true });
  assertClean(await collect(page, report), report);
});

test('the iframe embed URL with options as query parameters', { engines: 'all', why: 'csp' }, async () => {
  const { page, report } = await visit('embed.html?sentence=The%20dog%20chased%20the%20cat.&view=grid&heads=random:5&theme=dark');
  await page.waitForFunction(allReady, null, { timeout: 60_000 });
  const state = await page.evaluate(() => {
    const e = document.querySelector('mha-explorer');
    return { status: e.status, view: e.view, source: e.result.source, tokens: e.result.tokens.join(' '), dark: e.classList.contains('dark') };
  });
  console.log(`  ${JSON.stringify(state)}`);
  assert.deepEqual(state, { status: 'ready', view: 'grid', source: 'random', tokens: 'The dog chased the cat .', dark: true });
  assertClean(await collect(page, report), report);
});

test('the lesson page (web/index.html)', { engines: 'all', why: 'csp' }, async () => {
  const { page, report } = await visit('index.html');
  await page.waitForFunction(() => document.body.dataset.status === 'ok' || document.body.dataset.status === 'error', null, { timeout: 60_000 });
  // the lesson's sections are mounted after the explorer is ready
  await page.waitForFunction(() => document.getElementById('lesson')?.dataset.ready === 'true', null, { timeout: 60_000 });
  assertClean(await collect(page, report), report);
});
