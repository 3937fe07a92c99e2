// The pretrained source (tests/browser/driver.js), one page for the file. In every engine: the
// Universal Sentence Encoder lite picked in the explorer loads with a progress bar and its roles
// panel, and the views of the first layer and head show what the encoder API computes for the
// same text (its own module in the page, the float16 weights the page loads); a missing model
// file is named and the other sources still work; no console errors. In Chromium only (the
// numbers do not depend on the engine): the heads × roles table, a cell's items and the table
// measured again in the page; every view in both layers and typed text; the similarity panel's
// cosine and head importances against the embedding's; a damaged model file; the element serving
// the same heads. Screenshots go to build/screenshots/<engine>/ with MHA_SCREENSHOTS=all.
//
//   node --test tests/browser/pretrained.test.js

import { after, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { serve, startWeb, stopWeb, test } from './driver.js';
import { attachExplorer, resetExplorer, waitForExplorer } from './page-state.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const TOLERANCE = 1e-6;

let server;
let browser;
let page;
const consoleErrors = [];

before(async () => {
  ({ server, browser } = await startWeb({ needs: ['web/lib/wasm/mha_core.wasm', 'web/lib/wasm/mha_encoder.wasm', 'web/models/use-lite/manifest.json'] }));
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('consoleError', (text) => consoleErrors.push(text));
  page.on('pageError', (message) => consoleErrors.push(`page error: ${message}`));
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.status === 'ok', null, { timeout: 30000 });
  await attachExplorer(page);
});

after(() => stopWeb({ server, browser }));

beforeEach(() => resetExplorer(page, 60000));

/** Pick the pretrained source (loaded once a page) and wait until it is shown. */
async function showPretrained(timeout = 60_000) {
  await page.check('input[name="source"][value="pretrained"]');
  await waitForExplorer(page, () => window.explorer.source.id === 'pretrained', null, timeout);
}


/** What the page shows for the layer and sentence shown, against the encoder API's own numbers. */
async function compareWithApi() {
  return page.evaluate(async () => {
    const x = window.explorer;
    const { loadMha } = await import('/lib/index.js');
    const { drawnOn } = await import('/views/heatmap.js');
    // the encoder API's own encoder, loaded once a page beside the explorer's
    const { loadEncoder } = await import('/lib/encoder.js');
    window.__encoderReference ??= loadEncoder({ dtype: x.source.dtype });
    const encoder = await window.__encoderReference;
    const mha = await loadMha();
    const encoding = encoder.encode(x.sentence.text);
    const layer = encoding.layers[x.source.layer];
    const [H, T] = layer.weights.shape;
    const map = (h) => layer.weights.data.subarray(h * T * T, (h + 1) * T * T);
    const diff = (a, b) => { let m = a.length === b.length ? 0 : Infinity; for (let k = 0; k < a.length; k += 1) m = Math.max(m, Math.abs(a[k] - b[k])); return m; };
    let maps = 0;
    maps = Math.max(maps, diff(drawnOn(document.getElementById('main-heatmap')).values, map(x.selectedHead)));
    document.querySelectorAll('#small-multiples canvas').forEach((c, h) => { maps = Math.max(maps, diff(drawnOn(c).values, map(h))); });
    maps = Math.max(maps, diff(drawnOn(document.getElementById('pair-map-a')).values, map(x.pair.a)), diff(drawnOn(document.getElementById('pair-map-b')).values, map(x.pair.b)));
    const stats = mha.headStatistics(layer.weights).heads;
    let statistics = 0;
    for (let h = 0; h < H; h += 1) for (const key of ['entropy', 'maxAttention', 'sparsity']) statistics = Math.max(statistics, Math.abs(stats[h][key] - x.result.stats[h][key]));
    const t = x.hoverToken >= 0 ? x.hoverToken : x.focusToken;
    const hd = layer.headOutputs.shape[2];
    const heads = [...document.querySelectorAll('#wo-heads canvas')].flatMap((c) => Array.from(drawnOn(c).values));
    const expectedHeads = Array.from({ length: H * hd }, (_, k) => layer.headOutputs.data[(Math.floor(k / hd) * T + t) * hd + (k % hd)]);
    return {
      H, T, layer: x.source.layer, pieces: encoding.pieces, shownPieces: x.sentence.tokens.map((k) => k.piece),
      maps, statistics, headOutputs: diff(heads, expectedHeads), wo: document.getElementById('wo-formula').textContent,
      tabs: [...document.querySelectorAll('#head-tabs .tab-name')].map((n) => n.textContent),
      labels: Array.from({ length: H }, (_, h) => x.source.short(h)),
    };
  });
}

/** The views' numbers against the API's for the layer and head shown, printed beside the tolerance. */
function checkViews(r, h) {
  console.log(`layer ${r.layer}, head ${h + 1}: ${r.T} pieces, maps ${r.maps.toExponential(2)}, statistics ${r.statistics.toExponential(2)}, head outputs ${r.headOutputs.toExponential(2)} (tolerance ${TOLERANCE}); tabs ${r.tabs.join(' | ')}`);
  assert.deepEqual(r.shownPieces, r.pieces, 'the token strip shows the model\'s pieces');
  assert.ok(r.maps <= TOLERANCE && r.statistics <= TOLERANCE && r.headOutputs <= TOLERANCE);
  assert.deepEqual(r.tabs, r.labels, 'the tabs carry the measured labels');
  if (r.layer === 0) assert.match(r.wo, /4 heads × 64 dimensions = 256 = d_model, and W_O maps them to 512 numbers/);
}

test('picking the pretrained model loads it with a progress bar and its roles panel; the first layer and head as the encoder API computes them', { engines: 'all', why: 'end-to-end', timeout: 300_000 }, async () => {
  const started = Date.now();
  await page.check('input[name="source"][value="pretrained"]');
  await page.waitForSelector('#source-progress:not([hidden])', { timeout: 60_000 });
  const progress = await page.text('#source-progress-text');
  await waitForExplorer(page, () => window.explorer.source.id === 'pretrained', null, 240_000);
  console.log(`loaded in ${((Date.now() - started) / 1000).toFixed(1)} s (progress shown: "${progress}")`);
  assert.match(progress, /MB/);
  assert.ok(!(await page.visible('#source-progress')), 'the progress bar goes once the model is loaded');
  assert.ok(await page.evaluate(() => !document.getElementById('roles-panel').hidden && !!document.getElementById('roles-table')), 'the roles panel shows the heads\' table');
  // the status line says what is shown: its four heads, its tokens, the sentence, the source
  const status = await page.text('#status');
  const { T, text } = await page.evaluate(() => ({ T: window.explorer.result.weights.shape[1], text: window.explorer.sentence.text }));
  console.log(`status: ${status}`);
  assert.ok(status.startsWith(`Ready: 4 heads × ${T} tokens of “${text.slice(0, 20)}`), status);
  assert.match(status, /, d_model 256, Universal Sentence Encoder lite, layer 0: [\d.]+ ms in the WebAssembly core\.$/);
  checkViews(await compareWithApi(), 0);
  await page.screenshot('explorer-pretrained.png', { selector: '#explorer' });
});

test('the pretrained model\'s heads\' table, a cell\'s items, and a measurement in the page that agrees', { engines: 'chromium', why: 'computation', timeout: 420_000 }, async () => {
  await showPretrained();
  const roles = await page.evaluate(() => {
    const { roles } = window.explorer.source;
    return { corpus: roles.corpus, heads: roles.heads.map((e) => ({ layer: e.layer, head: e.head, label: e.label, kind: e.kind, relations: e.relations })),
      rows: document.querySelectorAll('#roles-table tbody tr').length, roleRows: document.querySelectorAll('#roles-shares tbody tr').length,
      summary: document.getElementById('roles-summary').textContent, panel: !document.getElementById('roles-panel').hidden };
  });
  for (const e of roles.heads) console.log(`  L${e.layer} H${e.head + 1}: ${e.label}`);
  console.log(`  ${roles.summary}`);
  assert.equal(roles.corpus.sentences, 776, 'the annotated sentences, every one on the model\'s pieces');
  assert.equal(roles.rows, 2 * 4 + 2, 'one row per head, the strongest baselines and the counts');
  assert.equal(roles.roleRows, 2 * 4 + 2, 'one row per head, the thresholds and uniform attention');
  assert.ok(roles.panel);
  // a head named by a relation beats the strongest baseline with the low end of its interval
  for (const e of roles.heads.filter((x) => x.kind === 'relation')) assert.ok(e.relations[e.label].ci[0] > e.relations[e.label].baseline.score);
  // a relation cell lists the head's test items, right and wrong
  await page.click('#roles-table tbody tr:nth-child(6) button[data-relation="determinerNoun"]');
  await page.waitForSelector('#roles-evidence ol li', { timeout: 10_000 });
  const evidence = await page.evaluate(() => ({ title: document.querySelector('#roles-evidence h4').textContent, lists: document.querySelectorAll('#roles-evidence ol').length }));
  console.log(`  ${evidence.title}`);
  assert.match(evidence.title, /^L1 H2, determiner → noun: the right word in \d+ of \d+ test items/);
  assert.equal(evidence.lists, 2);
  await page.screenshot('explorer-pretrained-roles.png', { selector: '#roles-panel' });
  // measured again in the page, by the same code: the same table
  await page.click('#roles-measure');
  await page.waitForFunction(() => document.getElementById('roles-measure-status').dataset.agree !== undefined || /Could not/.test(document.getElementById('roles-measure-status').textContent), null, { timeout: 200_000 });
  const status = await page.text('#roles-measure-status');
  console.log(`  ${status}`);
  assert.match(status, /the two agree/);
});

test('every view shows what the encoder API computes, in both layers', { engines: 'chromium', why: 'computation', timeout: 120_000 }, async () => {
  await showPretrained();
  for (const layer of ['0', '1']) {
    await page.selectOption('#layer', layer);
    await waitForExplorer(page, (l) => window.explorer.source.layer === Number(l), layer);
    for (const h of [0, 3]) {
      await page.click(`#head-tab-${h}`);
      await waitForExplorer(page, (hh) => window.explorer.selectedHead === hh, h);
      checkViews(await compareWithApi(), h);
    }
  }
  // free text goes through the model's tokenizer; pieces of a word are joined
  await page.fill('#free-text', 'Unbelievably, the astronauts\' rocket launched at 5:30 — everyone cheered!');
  await page.press('#free-text', 'Enter');
  await waitForExplorer(page, () => /astronauts/.test(window.explorer.sentence.text));
  const r = await compareWithApi();
  const grouped = await page.evaluate(() => [...document.querySelectorAll('#token-strip li.pieces')].map((li) => li.textContent));
  console.log(`typed text: ${r.T} pieces (${r.pieces.join(' ')}), joined words ${grouped.length}; maps ${r.maps.toExponential(2)}`);
  assert.deepEqual(r.shownPieces, r.pieces);
  assert.ok(r.maps <= TOLERANCE);
  assert.ok(grouped.length > 0, 'words of several pieces are shown joined');
  await page.screenshot('explorer-pretrained-pieces.png', { selector: '.tokens-panel' });
  // the pretrained source keeps its layer: back to the first for the tests that follow
  await page.selectOption('#layer', '0');
  await waitForExplorer(page, () => window.explorer.source.layer === 0);
});

test('the similarity panel: cosine of the embeddings, and what each head moves', { engines: 'chromium', why: 'computation', timeout: 120_000 }, async () => {
  await showPretrained();
  await page.fill('#similarity-a', 'A man is playing the guitar.');
  await page.fill('#similarity-b', 'Someone plays an instrument.');
  await page.click('#similarity-form button[type="submit"]');
  await page.waitForFunction(() => window.explorer.similarity && window.explorer.busy === 0, null, { timeout: 60_000 });
  const r = await page.evaluate(async () => {
    const x = window.explorer;
    const { loadEncoder } = await import('/lib/encoder.js');
    window.__encoderReference ??= loadEncoder({ dtype: x.source.dtype });
    const encoder = await window.__encoderReference;
    const cos = (a, b) => a.reduce((s, v, k) => s + v * b[k], 0);
    const e = (t, ablate) => encoder.encode(t, ablate ? { ablate } : undefined).embedding;
    const base = cos(e(x.similarity.a), e(x.similarity.b));
    const heads = x.similarity.heads.map((h) => cos(e(x.similarity.a, [[h.layer, h.head]]), e(x.similarity.b, [[h.layer, h.head]])));
    return { shown: x.similarity.similarity, base, shownHeads: x.similarity.heads.map((h) => h.similarity), heads,
      text: document.getElementById('similarity-value').textContent, bars: document.querySelectorAll('#similarity-view .bar-row').length };
  });
  console.log(`${r.text}; with each head off: ${r.shownHeads.map((v) => v.toFixed(4)).join(', ')}`);
  assert.ok(Math.abs(r.shown - r.base) <= 1e-6);
  r.heads.forEach((v, k) => assert.ok(Math.abs(v - r.shownHeads[k]) <= 1e-6, `head ${k}: ${r.shownHeads[k]} vs ${v}`));
  assert.equal(r.bars, 8);
  await page.screenshot('explorer-pretrained-similarity.png', { selector: '#similarity-panel' });
});

/** A page on a server of its own (an origin of its own: an empty cache) whose model file is `fault`: its message is named, and the other sources still work. */
async function faultyModelFile(fault) {
  const faulty = await serve({ root: path.join(root, 'web'), faults: { '/models/use-lite/model-f16.safetensors': fault } });
  const p = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  try {
    const errors = [];
    p.on('pageError', (message) => errors.push(message));
    await p.goto(faulty.url);
    await p.waitForFunction(() => document.body.dataset.status === 'ok', null, { timeout: 30000 });
    await attachExplorer(p);
    await p.check('input[name="source"][value="pretrained"]');
    await p.waitForSelector('#source-error:not([hidden])', { timeout: 120_000 });
    await waitForExplorer(p, () => window.explorer.source.id === 'designed');
    const message = await p.text('#source-error');
    console.log(`${fault} model file: ${message}`);
    assert.match(message, /model-f16\.safetensors/);
    assert.equal(await p.evaluate(() => document.querySelector('input[name="source"]:checked').value), 'designed');
    await p.click('#sentence-list [role="radio"]', { index: 1 });
    await waitForExplorer(p, () => window.explorer.sentence.example === 1);
    await p.flushEvents();
    assert.deepEqual(errors, []);
  } finally {
    await p.close();
    await faulty.close();
  }
}

test('a missing model file: a message naming the file, and the other sources still work', { engines: 'all', why: 'errors', timeout: 180_000 }, async () => {
  await faultyModelFile('missing');
});

test('a damaged model file: a message naming the file, and the other sources still work', { engines: 'chromium', why: 'faults', timeout: 180_000 }, async () => {
  await faultyModelFile('damaged');
});

test('the element serves the pretrained heads', { engines: 'chromium', why: 'computation', timeout: 180_000 }, async () => {
  const r = await page.evaluate(async () => {
    await import('/element/mha-explorer.js');
    const e = document.createElement('mha-explorer');
    e.setAttribute('heads', 'pretrained');
    e.setAttribute('layer', '1');
    e.setAttribute('view', 'grid');
    document.body.append(e);
    await new Promise((resolve) => { const check = () => (e.status === 'ready' || e.status === 'error' ? resolve() : setTimeout(check, 50)); check(); });
    const result = e.result;
    const status = e.shadowRoot.querySelector('.status').textContent;
    e.remove();
    return { status, numHeads: result && result.numHeads, source: result && result.source, tokens: result && result.tokens.length };
  });
  console.log(`element: ${r.status}`);
  assert.equal(r.source, 'pretrained');
  assert.equal(r.numHeads, 4);
});

test('from the pretrained model back to the designed heads; no console errors', { engines: 'all', why: 'errors', timeout: 60_000 }, async () => {
  await showPretrained();
  await page.check('input[name="source"][value="designed"]');
  await waitForExplorer(page, () => window.explorer.source.id === 'designed');
  await page.flushEvents();
  assert.deepEqual(consoleErrors, []);
});
