// The page holds against what students type and load (each engine of tests/browser/driver.js,
// scripts/serve/serve.js):
//   - typed text holding HTML or script stays text: nothing runs, no element is made from it;
//   - a weights file that is malformed, truncated, mis-shaped, non-finite or huge gives a
//     message in the page, and the page keeps working (and still loads a good file after);
//   - the embed page's URL options (the element's attributes) are validated: bad values give a
//     message or fall back to the default, and never inject anything.
// In every engine: one bad file from the file picker, then a good one, and no uncaught errors.
// In Chromium only, as our own parsing and validation: the typed markup, every other bad file
// and the embed page's URL options. One page for the file: the explorer tests share it
// (explorer.reset() between them), then the embed page's URLs are opened in it one after another.
//
//   node --test tests/browser/robustness.test.js

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startWeb, stopWeb, test } from './driver.js';
import { loadMha, toSafetensors } from '../../web/lib/index.js';
import { attachExplorer, resetExplorer, waitForExplorer } from './page-state.js';

let server;
let browser;
/** The file's one page, opened when a test first needs it; whether it shows the explorer. */
let shared = null;
let onExplorer = false;
const pageErrors = [];
const dialogs = [];

// Markup that would run script if it were ever parsed as HTML: each sets window.__pwned.
const PAYLOADS = [
  '<img src=x onerror=alert(1)>',
  '<img src=x onerror="window.__pwned=1">',
  '<script>window.__pwned=2</script>',
  '<svg onload="window.__pwned=3"></svg>',
  '"><iframe src="javascript:window.parent.__pwned=4"></iframe>',
  '<a href="javascript:window.__pwned=5">the link</a> & &amp; &lt;b&gt;',
];

before(async () => {
  ({ server, browser } = await startWeb({ needs: ['web/lib/wasm/mha_core.js', 'web/lib/wasm/mha_core.wasm'] }));
});

after(() => stopWeb({ server, browser }));

async function newPage() {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageError', (message) => pageErrors.push(`${page.url()}: ${message}`));
  page.on('dialog', (text) => dialogs.push(text));
  return page;
}

/** The explorer in the file's page: put back as it opened (explorer.reset()) if it is there, else opened. */
async function openExplorer() {
  if (shared && onExplorer) {
    await resetExplorer(shared);
    return shared;
  }
  shared ??= await newPage();
  const page = shared;
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.status === 'ok' || document.body.dataset.status === 'error', null, { timeout: 30000 });
  assert.equal(await page.evaluate(() => document.body.dataset.status), 'ok', `page status: ${await page.text('#status')}`);
  await attachExplorer(page);
  onExplorer = true;
  return page;
}

/** Nothing was made from markup: no handlers, no frames, no flag set, no dialog. */
async function assertNothingInjected(page, where) {
  const found = await page.evaluate(() => {
    const all = [document, ...[...document.querySelectorAll('*')].filter((e) => e.shadowRoot).map((e) => e.shadowRoot)];
    const count = (selector) => all.reduce((n, r) => n + r.querySelectorAll(selector).length, 0);
    return {
      pwned: window.__pwned ?? null,
      handlers: count('[onerror],[onload],[onclick]'),
      frames: count('iframe'),
      imgX: count('img[src="x"]'),
      scripts: count('script:not([src]):not([type="module"])') - document.querySelectorAll('head script:not([src])').length,
      jsLinks: count('a[href^="javascript:"]'),
    };
  });
  await page.flushEvents();
  assert.deepEqual(found, { pwned: null, handlers: 0, frames: 0, imgX: 0, scripts: 0, jsLinks: 0 }, `${where}: markup was injected: ${JSON.stringify(found)}`);
  assert.deepEqual(dialogs, [], `${where}: a dialog opened`);
}

/** The explorer still works: another sentence and another head recompute and redraw. */
async function assertExplorerWorks(page, where) {
  const before = await page.evaluate(() => ({ sentence: window.explorer.sentence.text, head: window.explorer.selectedHead }));
  const radios = '#sentence-list [role="radio"]';
  const count = await page.count(radios);
  const texts = await page.texts(radios);
  const next = (texts.indexOf(before.sentence) + 1) % Math.max(count, 1);
  await page.click(radios, { index: next });
  await waitForExplorer(page, (text) => window.explorer.sentence.text === text, texts[next], 10000);
  const tabs = '#head-tabs [role="tab"]';
  await page.click(tabs, { index: (before.head + 1) % (await page.count(tabs)) });
  await waitForExplorer(page, (h) => window.explorer.selectedHead === h, (before.head + 1) % (await page.count(tabs)));
  const drawn = await page.evaluate(async () => {
    const d = (await import('/views/heatmap.js')).drawnOn(document.getElementById('main-heatmap'));
    return d ? Array.from(d.values).every(Number.isFinite) && d.values.length > 0 : false;
  });
  assert.ok(drawn, `${where}: the main heatmap was not redrawn with finite weights`);
  assert.equal(await page.evaluate(() => document.body.dataset.status), 'ok', `${where}: page status`);
}

test('typed HTML and script stay text in the explorer', { engines: 'chromium', why: 'validation' }, async () => {
  const page = await openExplorer();
  for (const payload of PAYLOADS) {
    await page.fill('#free-text', payload);
    await page.press('#free-text', 'Enter');
    // Either the text is tagged and shown as tokens, or a message says why not.
    await page.waitForFunction((typed) => (window.explorer.sentence.text === typed.trim() && !window.explorer.busy) || !document.querySelector('#free-text-error').hidden, payload, { timeout: 15000 });
    const shown = await page.evaluate(() => ({
      strip: document.querySelector('#token-strip').textContent,
      error: document.querySelector('#free-text-error').hidden ? '' : document.querySelector('#free-text-error').textContent,
      elements: [...document.querySelectorAll('#token-strip *')].map((e) => e.tagName.toLowerCase()),
    }));
    console.log(`typed ${JSON.stringify(payload)} -> tokens "${shown.strip.replace(/\s+/g, ' ').slice(0, 80)}"${shown.error ? `; message: ${shown.error}` : ''}`);
    if (!shown.error) {
      // The characters come back as text: some of the payload's words are in the token strip.
      const words = payload.match(/[a-z]{3,}/gi) ?? [];
      assert.ok(words.some((w) => shown.strip.includes(w)), `the tokens do not show the typed words: "${shown.strip}"`);
      assert.ok(shown.elements.every((t) => ['li', 'span', 'button', 'small', 'b', 'abbr'].includes(t)), `unexpected elements in the token strip: ${shown.elements}`);
    }
    await assertNothingInjected(page, `typed ${payload}`);
  }
  await assertExplorerWorks(page, 'after typed markup');
});

/** nn.MultiheadAttention(64, 8) with seed 3: its state_dict and its safetensors file, made in Node. */
async function goodWeights() {
  const mha = await loadMha();
  const a = new mha.MultiHeadAttention({ embedDim: 64, numHeads: 8, seed: 3 });
  const sd = a.stateDict();
  a.dispose();
  return { mha, sd, good: toSafetensors(sd, { num_heads: '8', embed_dim: '64' }) };
}

/** The bad file every engine is given: the good one cut in half. */
const truncatedOf = (good) => ({ name: 'truncated.safetensors', buffer: Buffer.from(good.subarray(0, Math.floor(good.length / 2))), expect: /truncated/i });

/** Every other file the page must refuse with a message; built in Node. */
async function badFiles() {
  const { mha, sd, good } = await goodWeights();
  const jsonOf = (stateDict, config = { embed_dim: 64, num_heads: 8 }) => JSON.stringify({
    config,
    state_dict: Object.fromEntries(Object.entries(stateDict).map(([k, v]) => [k, { shape: v.shape, dtype: 'float32', data: Array.from(v.data) }])),
  });
  const misShaped = { ...sd, in_proj_weight: { data: sd.in_proj_weight.data.subarray(0, 192 * 60), shape: [192, 60] } };
  const withNaN = { ...sd, 'out_proj.weight': { data: Float32Array.from(sd['out_proj.weight'].data, (v, i) => (i === 17 ? NaN : v)), shape: [64, 64] } };
  const overflow = jsonOf(sd).replace(/"data":\[([-0-9.e]+)/, '"data":[1e39');  // beyond float32: Infinity
  // A header that claims a huge tensor over a few bytes of data.
  const hugeHeader = (() => {
    const header = JSON.stringify({ in_proj_weight: { dtype: 'F32', shape: [1000000, 1000000], data_offsets: [0, 16] } });
    const bytes = new Uint8Array(8 + header.length + 16);
    new DataView(bytes.buffer).setBigUint64(0, BigInt(header.length), true);
    bytes.set(new TextEncoder().encode(header), 8);
    return bytes;
  })();
  // A real large file: nn.MultiheadAttention(2048, 8), about 67 MB of float32.
  const big = new mha.MultiHeadAttention({ embedDim: 2048, numHeads: 8, seed: 1 });
  const bigFile = toSafetensors(big.stateDict(), { num_heads: '8', embed_dim: '2048' });
  big.dispose();
  const garbage = new Uint8Array(4096);
  for (let i = 0; i < garbage.length; ++i) garbage[i] = (i * 2654435761) >>> 24;
  return {
    good,
    files: [
      { name: 'empty.json', buffer: Buffer.alloc(0), expect: /./ },
      { name: 'malformed.json', buffer: Buffer.from('{"config": {"embed_dim": 64, "num_heads": 8}, "state_dict": {"in_proj_weight": [1, 2,'), expect: /json|JSON|parse|Unexpected|end/ },
      { name: 'not-a-state-dict.json', buffer: Buffer.from('[1, 2, 3]'), expect: /./ },
      { name: 'header-only.safetensors', buffer: Buffer.from(good.subarray(0, 5)), expect: /truncated/i },
      { name: 'mis-shaped.json', buffer: Buffer.from(jsonOf(misShaped)), expect: /shape|192|60/ },
      { name: 'nan.safetensors', buffer: Buffer.from(toSafetensors(withNaN, { num_heads: '8', embed_dim: '64' })), expect: /finite|NaN/i },
      { name: 'overflow.json', buffer: Buffer.from(overflow), expect: /finite|Infinity|range/i },
      { name: 'huge-header.safetensors', buffer: Buffer.from(hugeHeader), expect: /truncated|large|bytes/i },
      { name: 'garbage.safetensors', buffer: Buffer.from(garbage), expect: /./ },
      { name: 'd2048.safetensors', buffer: Buffer.from(bigFile), expect: /2048/ },
    ],
  };
}

/** The page refuses `file` with a message that matches file.expect, and keeps its weights. */
async function assertRefused(page, file) {
  const started = Date.now();
  await page.evaluate(() => { document.querySelector('#source-error').hidden = true; });
  await page.setInputFiles('#state-dict-file', { name: file.name, buffer: file.buffer });
  await page.waitForSelector('#source-error:not([hidden])', { timeout: 60000 });
  const message = (await page.text('#source-error')).trim();
  console.log(`${file.name} (${file.buffer.length} bytes, ${Date.now() - started} ms): ${message.slice(0, 200)}`);
  assert.ok(message.length >= 10, `${file.name}: the message is too short: "${message}"`);
  assert.match(message, file.expect, `${file.name}: unexpected message`);
  assert.equal(await page.evaluate(() => window.explorer.source.id), 'designed', `${file.name}: the page switched its weights`);
  await assertNothingInjected(page, file.name);
}

/** A good file loads, and the explorer works with it. */
async function assertGoodFileLoads(page, good) {
  await page.setInputFiles('#state-dict-file', { name: 'good.safetensors', buffer: Buffer.from(good) });
  await waitForExplorer(page, () => window.explorer.source.id === 'file', null, 20000);
  assert.equal(await page.evaluate(() => window.explorer.source.numHeads), 8);
  await assertExplorerWorks(page, 'after a good file');
}

test('a truncated weights file gives a message; the page keeps working and a good file loads after it', { engines: 'all', why: 'files' }, async () => {
  const { good } = await goodWeights();
  const page = await openExplorer();
  await assertRefused(page, truncatedOf(good));
  await assertExplorerWorks(page, 'after the truncated file');
  await assertGoodFileLoads(page, good);
});

test('malformed, mis-shaped, non-finite and huge weight files give a message; the page keeps working', { engines: 'chromium', why: 'faults' }, async () => {
  const { good, files } = await badFiles();
  const page = await openExplorer();
  for (const file of files) await assertRefused(page, file);
  await assertExplorerWorks(page, 'after the bad files');
  // And a good file still loads after all of that.
  await assertGoodFileLoads(page, good);
});

/** Opens embed.html with a query string in the file's page (a new document each time); waits
 *  for the element to be ready or in error. */
async function openEmbed(query) {
  shared ??= await newPage();
  onExplorer = false;
  const page = shared;
  await page.goto(`${server.url}embed.html?${query}`);
  await page.waitForFunction(() => {
    const e = document.querySelector('mha-explorer');
    return e && (e.status === 'ready' || e.status === 'error');
  }, null, { timeout: 30000 });
  const state = await page.evaluate(() => {
    const e = document.querySelector('mha-explorer');
    return {
      status: e.status,
      message: e.shadowRoot.querySelector('.status')?.textContent ?? '',
      heads: e.result ? e.result.numHeads : null,
      selectedHead: e.selectedHead,
      view: e.view,
      height: e.style.height,
      tokens: e.result ? e.result.tokens : null,
    };
  });
  return { page, state };
}

test('URL options of the embed page are validated: a message or the default, never an injection', { engines: 'chromium', why: 'validation' }, async () => {
  const enc = encodeURIComponent;
  const cases = [
    { query: `sentence=${enc(PAYLOADS[1])}`, status: 'ready' },
    { query: `sentence=${enc(PAYLOADS[2])}&view=${enc('<b>grid</b>')}`, status: 'ready', check: (s) => assert.equal(s.view, 'single') },
    { query: 'selected-head=-4&compare-head=99&theme=%3Cscript%3E', status: 'ready', check: (s) => assert.equal(s.selectedHead, 1) },
    { query: 'selected-head=1e400', status: 'ready', check: (s) => assert.equal(s.selectedHead, 1) },
    { query: `height=${enc('100px;position:fixed;background:url(javascript:1)')}`, status: 'ready', check: (s) => assert.ok(!/fixed|javascript/.test(s.height), `height became "${s.height}"`) },
    { query: 'height=-50', status: 'ready' },
    { query: 'd-model=abc', status: 'error', message: /positive integers/ },
    { query: 'num-heads=0', status: 'error', message: /positive integers/ },
    { query: 'num-heads=3', status: 'error', message: /designed heads|divide/ },
    { query: 'heads=random:1&d-model=64&num-heads=5', status: 'error', message: /divide/ },
    { query: 'heads=random:1&d-model=1000000&num-heads=1', status: 'error', message: /memory cap|too large|bytes/i },
    { query: 'heads=random:99999999999999999999', status: 'error', message: /seed/ },
    { query: `heads=${enc('javascript:window.__pwned=6')}`, status: 'error', message: /./ },
    { query: 'heads=/no/such/weights.safetensors', status: 'error', message: /404|not found|could not|fetch/i },
    { query: `heads=${enc('data:application/json,{"config":{"embed_dim":64,"num_heads":8},"state_dict":{}}')}`, status: 'error', message: /./ },
    { query: 'worker=sometimes&view=compare', status: 'ready' },
  ];
  for (const c of cases) {
    const { page, state } = await openEmbed(c.query);
    console.log(`embed.html?${c.query} -> ${state.status}: ${state.message.slice(0, 160)}`);
    assert.equal(state.status, c.status, `${c.query}: status ${state.status} (${state.message})`);
    if (c.message) assert.match(state.message, c.message, `${c.query}: message`);
    if (c.check) c.check(state);
    await assertNothingInjected(page, `embed.html?${c.query}`);
  }
});

test('no uncaught errors in any page', { engines: 'all', why: 'errors' }, async () => {
  if (shared) await shared.flushEvents();
  assert.deepEqual(pageErrors, []);
  assert.deepEqual(dialogs, []);
});
