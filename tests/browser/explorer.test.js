// The explorer page in a real browser (each engine of tests/browser/driver.js), served by
// scripts/serve/serve.js on a free port. Checks: no console errors; the heatmaps and statistics the
// page shows equal what the JS API computes for the same weights and input; every designed
// head's label holds by its weights on every example sentence and on typed text; keyboard,
// hover, sources of weights, free text (as text, never HTML), timing. Screenshots go to
// build/screenshots/<engine>/.
//
// In every engine: the first load (in an empty cache), the first example sentence drawn for
// every head, a typed sentence, the JSON download loaded back, keyboard, hover, the dark theme
// and a device pixel ratio of 2, the console. In Chromium only: the other example sentences,
// the head labels, the random heads, the state_dict files (refused, four heads, grouped-query),
// the tagger, the free-text labels, markup and length limit, switching heads off and the
// timings: our own code on the same WebAssembly.
// The tests share one page, put back by explorer.reset() before each; the DPR-2 test opens one
// more.
//
//   node --test tests/browser/explorer.test.js

import { after, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import os from 'node:os';
import { note, startWeb, stopWeb, test } from './driver.js';
import { EXAMPLES } from '../../web/sources/examples.js';
import { checkHeadLabel, THRESHOLDS } from '../../web/sources/label-checks.js';
import { attachExplorer, resetExplorer, settled, waitForExplorer } from './page-state.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const webRoot = path.join(root, 'web');
const HEAD_NAMES = ['previous token', 'next token', 'same class', 'verb→subject', 'pronoun→noun', 'modifier→noun', 'first-token sink', 'broad average'];

let server;
let browser;
let page;
const consoleErrors = [];
/** The browser's CPU time (ms) from navigation to interactive on the file's page, or null. */
let firstLoadCpuMs = null;

function expectedMissing(url) {
  // The lesson text is optional; the page imports it only if it exists.
  return /\/app\/lesson\/index\.js$/.test(url || '') && !existsSync(path.join(webRoot, 'app', 'lesson', 'index.js'));
}

before(async () => {
  ({ server, browser } = await startWeb({ needs: ['web/lib/wasm/mha_core.js', 'web/lib/wasm/mha_core.wasm'] }));
  // the file's one page is a first load in a context of its own (an empty cache): the first
  // test reports its wall time to interactive and the CPU time the browser spent on it, which
  // other processes on a busy machine do not inflate
  page = await newPage({ width: 1280, height: 900 }, { freshContext: true });
  const cpuBefore = browserCpuMs();
  await openPage();
  if (cpuBefore != null) firstLoadCpuMs = browserCpuMs() - cpuBefore;
});

after(() => stopWeb({ server, browser }));

beforeEach(() => resetExplorer(page));

async function newPage(viewport, options = {}) {
  const p = await browser.newPage({ viewport, ...options });
  p.on('consoleError', (text, url) => {
    if (expectedMissing(url)) return;
    consoleErrors.push(`${text} (${url || 'no url'})`);
  });
  p.on('pageError', (message) => consoleErrors.push(`page error: ${message}`));
  return p;
}

async function openPage(p = page) {
  await p.goto(server.url);
  await p.waitForFunction(() => document.body.dataset.status === 'ok' || document.body.dataset.status === 'error', null, { timeout: 20000 });
  assert.equal(await p.evaluate(() => document.body.dataset.status), 'ok', `page status: ${await p.text('#status')}`);
  await attachExplorer(p);
}

/** Everything the page shows for the current state, plus the API's own computation for the
 *  same weights and input, done in the page with a fresh module. */
async function snapshotWithReference(p = page) {
  await settled(p);
  return p.evaluate(async () => {
    const x = window.explorer;
    const { loadMha } = await import('/lib/index.js');
    const { drawnOn } = await import('/views/heatmap.js');
    const mha = await loadMha();
    const tokens = x.sentence.tokens.map((t) => ({
      text: t.text, pos: t.pos, cls: t.cls, number: t.number, gender: t.gender && { ...t.gender },
      pronoun: t.pronoun && { ...t.pronoun }, chunk: t.chunk, isHead: t.isHead, isSubject: t.isSubject,
      subject: t.subject, modifies: t.modifies,
    }));
    const L = tokens.length;
    const config = x.source.attention.config;
    const attention = new mha.MultiHeadAttention({
      embedDim: config.embedDim, numHeads: config.numHeads, numKvHeads: config.numKvHeads, bias: config.bias,
      addBiasKv: config.addBiasKv, addZeroAttn: config.addZeroAttn,
    });
    try {
      attention.loadStateDict(x.source.attention.stateDict());
      const input = x.sentence.features;
      const result = attention.forward({ query: { data: input, shape: [L, input.length / L] }, needWeights: true, averageAttnWeights: false, returnConcat: true });
      const stats = mha.headStatistics(result.weights).heads;
      const H = config.numHeads;
      const pair = { a: x.pair.a, b: x.pair.b, mean: x.result.similarity[x.pair.a * H + x.pair.b] };
      const map = (h) => result.weights.data.subarray(h * L * L, (h + 1) * L * L);
      const pairJsd = mha.jsDivergence({ data: map(pair.a), shape: [L, L] }, { data: map(pair.b), shape: [L, L] }).mean;
      const table = [...document.querySelectorAll('#weights-table tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent)));
      const shownStats = [...document.querySelectorAll('#head-stats .stat dd')].map((dd) => dd.textContent);
      const shown = (canvas) => { const d = canvas && drawnOn(canvas); return d ? Array.from(d.values) : null; };
      const drawn = {
        'main-heatmap': shown(document.getElementById('main-heatmap')),
        'pair-map-a': shown(document.getElementById('pair-map-a')),
        'pair-map-b': shown(document.getElementById('pair-map-b')),
        'pair-map-diff': shown(document.getElementById('pair-map-diff')),
        'wo-concat': [...document.querySelectorAll('#wo-heads canvas')].flatMap((c) => shown(c) ?? []),
      };
      document.querySelectorAll('#small-multiples canvas').forEach((c, h) => { drawn[`multiple-${h}`] = shown(c); });
      return {
        tokens, L, H, selectedHead: x.selectedHead, drawn, pageStats: x.result.stats.map((st) => ({ ...st })), pair, pairJsd,
        apiWeights: Array.from(result.weights.data), apiConcat: Array.from(result.concat.data), apiStats: stats,
        pageConcat: x.result.concat ? Array.from(x.result.concat.data) : null, focusToken: x.hoverToken >= 0 ? x.hoverToken : x.focusToken,
        table, shownStats, sentence: x.sentence.text, source: x.source.id, timings: { ...x.timings },
      };
    } finally {
      attention.dispose();
    }
  });
}

function maxAbsDiff(a, b) {
  assert.equal(a.length, b.length, `lengths differ: ${a.length} vs ${b.length}`);
  let m = 0;
  for (let k = 0; k < a.length; k += 1) m = Math.max(m, Math.abs(a[k] - b[k]));
  return m;
}

function headMap(snap, h) {
  const L2 = snap.L * snap.L;
  return snap.apiWeights.slice(h * L2, (h + 1) * L2);
}

/** Assert that every view's numbers equal the API's; returns the largest error seen. */
function assertViewsMatchApi(snap, label) {
  const tol = 1e-6;
  let worst = 0;
  const check = (what, drawn, expected) => {
    assert.ok(drawn, `${label}: the page drew nothing for ${what}`);
    const err = maxAbsDiff(drawn, expected);
    worst = Math.max(worst, err);
    assert.ok(err <= tol, `${label}: ${what} differs from the API by ${err} (tolerance ${tol})`);
  };
  check(`main heatmap (head ${snap.selectedHead + 1})`, snap.drawn['main-heatmap'], headMap(snap, snap.selectedHead));
  for (let h = 0; h < snap.H; h += 1) check(`small multiple ${h + 1}`, snap.drawn[`multiple-${h}`], headMap(snap, h));
  check('pair map A', snap.drawn['pair-map-a'], headMap(snap, snap.pair.a));
  check('pair map B', snap.drawn['pair-map-b'], headMap(snap, snap.pair.b));
  const a = headMap(snap, snap.pair.a), b = headMap(snap, snap.pair.b);
  check('pair difference', snap.drawn['pair-map-diff'], a.map((v, k) => v - b[k]));
  // the screen-reader table: 3 decimals
  const selected = headMap(snap, snap.selectedHead);
  const tableErr = maxAbsDiff(snap.table.flat(), selected);
  assert.ok(tableErr <= 0.0005 + 1e-9, `${label}: weights table differs from the API by ${tableErr} (tolerance 0.0005, 3 decimals)`);
  // statistics: the page's numbers are the core's
  for (let h = 0; h < snap.H; h += 1) {
    for (const key of ['entropy', 'sparsity', 'maxAttention', 'averageAttention', 'normalizedEntropy', 'firstTokenShare']) {
      const err = Math.abs(snap.pageStats[h][key] - snap.apiStats[h][key]);
      assert.ok(err <= 1e-9, `${label}: head ${h + 1} ${key} ${snap.pageStats[h][key]} vs API ${snap.apiStats[h][key]}`);
    }
  }
  const s = snap.apiStats[snap.selectedHead];
  assert.deepEqual(snap.shownStats, [`${s.entropy.toFixed(2)} nats`, `${(s.sparsity * 100).toFixed(0)}%`, s.maxAttention.toFixed(2), s.averageAttention.toFixed(3)],
    `${label}: the statistics shown for head ${snap.selectedHead + 1}`);
  assert.ok(Math.abs(snap.pair.mean - snap.pairJsd) <= 1e-9, `${label}: pair JS divergence ${snap.pair.mean} vs API ${snap.pairJsd}`);
  return { worst, tableErr };
}

function labelVerdicts(snap) {
  return Array.from({ length: 8 }, (_, h) => checkHeadLabel(h, headMap(snap, h), snap.tokens, snap.apiStats[h]));
}

test('the page loads, becomes interactive, and shows eight heads', { engines: 'all', why: 'wasm' }, async () => {
  // the file's page was opened in before() as a first load, in an empty cache
  const timings = await page.evaluate(() => window.explorer.timings);
  if (firstLoadCpuMs != null) {
    console.log(`fresh load: interactive after ${timings.readyMs.toFixed(0)} ms wall (core loaded at ${timings.coreLoadedMs.toFixed(0)} ms); browser CPU time from navigation to interactive ${firstLoadCpuMs.toFixed(0)} ms (load average ${(os.loadavg()[0]).toFixed(1)} on ${os.cpus().length} cores)`);
  }
  const nav = await page.evaluate(() => performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd);
  console.log(`interactive ${timings.readyMs.toFixed(0)} ms after navigation start (DOMContentLoaded ${nav.toFixed(0)} ms; target 500 ms on an idle machine)`);
  // 500 ms is the target on an idle machine; this only catches a page that hangs on a busy one
  assert.ok(timings.readyMs < 15000, `interactive after ${timings.readyMs} ms (limit here 15000 ms)`);
  assert.equal(await page.count('#head-tabs [role="tab"]'), 8);
  assert.equal(await page.count('#small-multiples canvas'), 8);
  assert.equal(await page.text('h1'), 'Multi-Head Attention Comparison');
  const tabText = await page.texts('#head-tabs [role="tab"]');
  console.log(`tabs: ${tabText.join(' | ')}`);
  await page.screenshot('explorer-light.png', { selector: '#explorer' });
  // an overview: the tokens, the coreference head and all heads side by side
  await page.click('#head-tab-4');
  await page.evaluate(() => window.scrollTo(0, 0));
  const top = await page.box('.tokens-panel');
  const bottom = await page.box('#small-multiples');
  await page.screenshot('explorer-overview.png', { fullPage: true,
    clip: { x: 0, y: top.y - 12, width: 1280, height: bottom.y + bottom.height - top.y + 36 } });
  await page.click('#head-tab-0');
});

/** Sentences first..last-1 (clicked), each head (clicked): the views equal the API's numbers. */
async function assertSentencesMatchApi(first, last) {
  let worst = 0;
  for (let i = first; i < last; i += 1) {
    await page.click('#sentence-list [role="radio"]', { index: i });
    for (let h = 0; h < 8; h += 1) {
      await page.click(`#head-tab-${h}`);
      const snap = await snapshotWithReference();
      assert.equal(snap.sentence, EXAMPLES[i].text);
      assert.equal(snap.selectedHead, h);
      worst = Math.max(worst, assertViewsMatchApi(snap, `sentence ${i + 1}, head ${h + 1}`).worst);
    }
  }
  return worst;
}

// The drawing code is the same for every sentence: every engine draws the first, Chromium the rest.
test('the first example sentence and every head: what the page draws is what the API computes', { engines: 'all', why: 'layout' }, async () => {
  const worst = await assertSentencesMatchApi(0, 1);
  console.log(`sentence 1 × 8 heads: largest difference page vs API ${worst} (tolerance 1e-6)`);
});

test('every other example sentence and every head: what the page draws is what the API computes', { engines: 'chromium', why: 'computation' }, async () => {
  const sentences = await page.count('#sentence-list [role="radio"]');
  assert.ok(sentences >= 6, `expected at least 6 example sentences, got ${sentences}`);
  const worst = await assertSentencesMatchApi(1, sentences);
  console.log(`sentences 2-${sentences} × 8 heads: largest difference page vs API ${worst} (tolerance 1e-6)`);
});

test('every designed head label holds by its weights on every example sentence', { engines: 'chromium', why: 'computation' }, async () => {
  const rows = [];
  let failures = [];
  for (let i = 0; i < EXAMPLES.length; i += 1) {
    await page.click('#sentence-list [role="radio"]', { index: i });
    const snap = await snapshotWithReference();
    const verdicts = labelVerdicts(snap);
    rows.push(`S${i + 1} ${verdicts.map((v, h) => `H${h + 1}:${v.holds === null ? 'n/a' : `${v.holds ? 'ok' : 'FAIL'}(${v.worst.toFixed(2)})`}`).join(' ')}`);
    verdicts.forEach((v, h) => { if (v.holds === false) failures.push(`sentence ${i + 1}, head ${h + 1} (${HEAD_NAMES[h]}): ${v.summary}`); });
    // heads 4-6 have rows to check on the sentences chosen for them
    if (/coreference/.test(EXAMPLES[i].shows)) assert.ok(verdicts[4].checked > 0, `sentence ${i + 1} should have a pronoun to check`);
    // and the page shows the same verdict for the selected head
    const shown = await page.text('#label-check');
    assert.ok(shown.startsWith(verdicts[snap.selectedHead].holds ? '✓' : '✗'), `page verdict "${shown}"`);
  }
  console.log(`thresholds: ${JSON.stringify(THRESHOLDS)}; worst share per head in brackets`);
  console.log(rows.join('\n'));
  assert.deepEqual(failures, []);
});

test('the label checks can fail: random heads are diffuse and carry none of the labels', { engines: 'chromium', why: 'computation' }, async () => {
  await page.click('#sentence-list [role="radio"]', { index: 0 });
  await page.check('input[name="source"][value="random"]');
  await waitForExplorer(page, () => window.explorer.source.id === 'random');
  const snap = await snapshotWithReference();
  assertViewsMatchApi(snap, 'random seed 0');
  const verdicts = labelVerdicts(snap);
  const held = verdicts.map((v, h) => (v.holds && v.checked > 0 ? h + 1 : null)).filter(Boolean);
  const meanEntropy = snap.apiStats.reduce((s, x) => s + x.normalizedEntropy, 0) / snap.H;
  console.log(`random init (seed 0): labels holding ${JSON.stringify(held)}; mean normalised entropy ${meanEntropy.toFixed(3)}`);
  // only the "broad average" label (uniform maps) may hold for untrained heads
  assert.ok(held.every((h) => h === 8), `random heads unexpectedly satisfy labels ${held}`);
  assert.ok(meanEntropy > 0.9, `random heads should be diffuse: mean normalised entropy ${meanEntropy}`);
  assert.match(await page.text('#source-note'), /diffuse/);
  // another seed gives other weights
  await page.fill('#seed', '7');
  await page.dispatchEvent('#seed', 'change');
  await waitForExplorer(page, () => window.explorer.spec.seed === 7);
  const snap7 = await snapshotWithReference();
  assertViewsMatchApi(snap7, 'random seed 7');
  assert.ok(maxAbsDiff(snap7.apiWeights, snap.apiWeights) > 1e-4, 'seed 7 should differ from seed 0');
  await page.screenshot('explorer-random.png', { selector: '#small-multiples' });
  await page.screenshot('explorer-random-head.png', { selector: '.head-panel' });
  await page.check('input[name="source"][value="designed"]');
  await waitForExplorer(page, () => window.explorer.source.id === 'designed');
});

test('loading a state_dict file: wrong width is refused with a clear message; a good one is applied', { engines: 'chromium', why: 'faults' }, async () => {
  const bad = JSON.stringify({ config: { embed_dim: 8, num_heads: 2 }, state_dict: {
    in_proj_weight: { shape: [24, 8], dtype: 'float32', data: new Array(192).fill(0) },
    in_proj_bias: { shape: [24], dtype: 'float32', data: new Array(24).fill(0) },
    'out_proj.weight': { shape: [8, 8], dtype: 'float32', data: new Array(64).fill(0) },
    'out_proj.bias': { shape: [8], dtype: 'float32', data: new Array(8).fill(0) },
  } });
  await page.setInputFiles('#state-dict-file', { name: 'small.json', buffer: Buffer.from(bad) });
  await page.waitForSelector('#source-error:not([hidden])');
  const message = await page.text('#source-error');
  console.log(`refused: ${message}`);
  assert.match(message, /d_model 8\b/);
  assert.match(message, /d_model 64/);
  assert.equal(await page.evaluate(() => window.explorer.source.id), 'designed');

  // a good file: random weights made by the API with seed 11, 4 heads, as a bare state_dict
  const good = await page.evaluate(async () => {
    const { loadMha } = await import('/lib/index.js');
    const mha = await loadMha();
    const a = new mha.MultiHeadAttention({ embedDim: 64, numHeads: 4, seed: 11 });
    const sd = Object.fromEntries(Object.entries(a.stateDict()).map(([k, v]) => [k, { shape: v.shape, dtype: 'float32', data: Array.from(v.data) }]));
    a.dispose();
    return JSON.stringify({ config: { embed_dim: 64, num_heads: 4 }, state_dict: sd });
  });
  await page.setInputFiles('#state-dict-file', { name: 'four-heads.json', buffer: Buffer.from(good) });
  await waitForExplorer(page, () => window.explorer.source.id === 'file');
  const snap = await snapshotWithReference();
  assert.equal(snap.H, 4);
  assert.equal(await page.count('#head-tabs [role="tab"]'), 4);
  const { worst } = assertViewsMatchApi(snap, 'loaded 4-head state_dict');
  console.log(`loaded 4-head weights: page vs API ${worst}`);

  // grouped-query attention: 8 query heads sharing 2 key/value heads, separate projections
  const gqa = await page.evaluate(async () => {
    const { loadMha } = await import('/lib/index.js');
    const mha = await loadMha();
    const a = new mha.MultiHeadAttention({ embedDim: 64, numHeads: 8, numKvHeads: 2, seed: 5 });
    const sd = Object.fromEntries(Object.entries(a.stateDict()).map(([k, v]) => [k, { shape: v.shape, dtype: 'float32', data: Array.from(v.data) }]));
    a.dispose();
    return JSON.stringify({ config: { embed_dim: 64, num_heads: 8, num_kv_heads: 2 }, state_dict: sd });
  });
  await page.setInputFiles('#state-dict-file', { name: 'gqa.json', buffer: Buffer.from(gqa) });
  await waitForExplorer(page, () => window.explorer.source.id === 'file' && window.explorer.source.config.numKvHeads === 2);
  await page.click('#head-how summary');
  await page.click('#head-tab-5');
  const snapGqa = await snapshotWithReference();
  assert.equal(snapGqa.H, 8);
  console.log(`loaded GQA weights (8 query heads, 2 KV heads): page vs API ${assertViewsMatchApi(snapGqa, 'loaded GQA state_dict').worst}`);
  await page.click('#head-how summary');
  await page.check('input[name="source"][value="designed"]');
  await waitForExplorer(page, () => window.explorer.source.id === 'designed' && window.explorer.source.numHeads === 8);
});

test('export: the weights as JSON that loads back', { engines: 'all', why: 'downloads' }, async () => {
  await page.click('#sentence-list [role="radio"]', { index: 0 });
  await page.click('#head-tab-4');
  const snap = await snapshotWithReference();
  const { bytes: json, name, how } = await page.download('#download-weights');
  console.log(`download ${name}: ${json.length} bytes, taken from ${how}`);
  await page.setInputFiles('#state-dict-file', { name: 'designed.json', buffer: json });
  await waitForExplorer(page, () => window.explorer.source.id === 'file');
  const reloaded = await snapshotWithReference();
  const roundTrip = maxAbsDiff(reloaded.apiWeights, snap.apiWeights);
  console.log(`designed weights saved as JSON and loaded back: attention maps differ by ${roundTrip.toExponential(2)}`);
  assert.ok(roundTrip <= 1e-5);
  await page.check('input[name="source"][value="designed"]');
  await waitForExplorer(page, () => window.explorer.source.id === 'designed');
});

test('the example sentences were tagged at build time exactly as the tagger tags them now', { engines: 'chromium', why: 'computation' }, async () => {
  const mismatches = await page.evaluate(async () => {
    const { default: nlp } = await import('/vendor/compromise-three.mjs');
    const { tagText } = await import('/sources/tokens.js');
    const { TAGGED_EXAMPLES } = await import('/sources/examples.tagged.js');
    return Object.entries(TAGGED_EXAMPLES)
      .filter(([text, stored]) => JSON.stringify(tagText(nlp, text)) !== JSON.stringify(stored))
      .map(([text]) => text);
  });
  assert.deepEqual(mismatches, [], 'web/sources/examples.tagged.js is out of date: run node scripts/build/tag-examples.js');
});

const FREE_TEXTS = [
  'The girl told her brother that he was late.',
  'Two old dogs and a young cat slept in the warm kitchen while the children played outside.',
];

/** Type `text` into the free-text box and send it; resolves to the page's snapshot once shown. */
async function typeSentence(text) {
  await page.fill('#free-text', text);
  await page.click('#free-text-form button[type="submit"]');
  await waitForExplorer(page, (t) => window.explorer.sentence.text === t, text);
  const snap = await snapshotWithReference();
  assertViewsMatchApi(snap, `free text "${text}"`);
  return snap;
}

test('free text typed and sent is tagged in the page and drawn as the API computes it', { engines: 'all', why: 'input' }, async () => {
  const snap = await typeSentence(FREE_TEXTS[0]);
  console.log(`"${FREE_TEXTS[0]}": ${snap.L} tokens, drawn as the API computes them`);
  await page.screenshot('explorer-free-text.png', { fullPage: false });
});

test('German and misspelled text: the check follows the tagger\'s parse, shows it as a guess and says the text is likely outside what the tagger reads; the status line says what is shown', { engines: 'all', why: 'layout' }, async () => {
  const status = async () => page.text('#status');
  assert.match(await status(), /^Ready: 8 heads × 11 tokens of “The cat sat on the mat because it was…”, d_model 64, designed heads: [\d.]+ ms in the WebAssembly core\.$/);
  assert.match(await page.text('.lede'), /the designed heads shown first are written by hand/);
  await page.click('#head-tab-3');
  // an English example: the verb head follows the parse, no tick of approval, nothing outside the tagger
  assert.equal(await page.text('#label-check-title'), 'Does it follow the tagger\'s parse here?');
  assert.match(await page.text('#label-check'), /^Follows the parse: verb → weight on its subject/);
  assert.equal(await page.attribute('#label-check', 'class'), 'guess');
  assert.match(await page.text('#label-check-guess'), /The tagger's guess, which this head's features were built from: sat → cat; was → it\./);
  assert.equal(await page.count('#label-check-limits p'), 0);
  assert.match(await page.text('#label-check-note'), /not that the parse is right\. On 776 hand-annotated English sentences the parse gives the annotated subject for \d+% of verbs/);

  const german = 'Die Katze saß auf der Matte, weil sie müde war.';
  await page.fill('#free-text', german);
  await page.click('#free-text-form button[type="submit"]');
  await waitForExplorer(page, (t) => window.explorer.sentence.text === t, german);
  assert.match(await status(), /^Ready: 8 heads × 12 tokens of “Die Katze saß auf der Matte, weil sie…”/);
  const check = await page.text('#label-check');
  console.log(`German, head 4: ${check} | ${await page.text('#label-check-limits')}`);
  assert.match(check, /^Nothing to check: the tagger's parse found no verb with a subject/);
  assert.doesNotMatch(check, /✓/);
  assert.match(await page.text('#label-check-limits'), /^Likely not English: the tagger, which reads English only, knew nothing of 6 of its 10 words .*letters English does not use \(ß, ü\)/);
  assert.match(await page.text('#parse-summary'), /^The tagger's parse, a guess, .*Likely not English/);
  await page.click('#head-tab-5');
  assert.match(await page.text('#label-check'), /^Follows the parse: modifier → weight on its noun/);
  assert.match(await page.text('#label-check-limits'), /^Likely not English/);
  await page.screenshot('explorer-check-german.png', { selector: '.head-info' });

  const misspelled = 'Teh cat sat on teh mat becuase it was tird.';
  await page.fill('#free-text', misspelled);
  await page.click('#free-text-form button[type="submit"]');
  await waitForExplorer(page, (t) => window.explorer.sentence.text === t, misspelled);
  await page.click('#head-tab-3');
  assert.match(await status(), /^Ready: 8 heads × 11 tokens of “Teh cat sat on teh mat becuase it was…”/);
  assert.match(await page.text('#label-check'), /^Follows the parse: verb → weight on its subject/);
  assert.match(await page.text('#label-check-guess'), /sat → cat; becuase → cat; was → it/);
  assert.match(await page.text('#label-check-limits'), /^Words the tagger does not know: it knew nothing of 3 of its 10 words \(Teh, teh, tird\)/);
  // the position heads are checked against positions, not the parse: a tick where it holds
  await page.click('#head-tab-0');
  assert.equal(await page.text('#label-check-title'), 'Does the label hold on this sentence?');
  assert.match(await page.text('#label-check'), /^✓ Holds: weight on token i − 1/);
  assert.equal(await page.count('#label-check-limits p'), 0);
  // its description says what the first row does on this map
  const first = await page.evaluate(() => {
    const x = window.explorer;
    const map = x.map(0);
    const L = x.sentence.tokens.length;
    let best = 0;
    for (let j = 1; j < L; j += 1) if (map[j] > map[best]) best = j;
    return { weight: map[best].toFixed(2), token: x.sentence.tokens[best].text };
  });
  assert.ok((await page.text('#head-focus')).includes(`The first token has no previous token: on this sentence its largest weight, ${first.weight}, is on “${first.token}”.`), await page.text('#head-focus'));
  // another source: the status line follows it
  await page.check('input[name="source"][value="random"]');
  await waitForExplorer(page, () => window.explorer.source.id === 'random');
  assert.match(await status(), /^Ready: 8 heads × 11 tokens of “Teh cat sat on teh mat becuase it was…”, d_model 64, random heads \(seed \d+\):/);
});

test('free text: the labels hold on it, it is shown as text, and its length is limited', { engines: 'chromium', why: 'validation' }, async () => {
  for (const text of FREE_TEXTS) {
    const snap = await typeSentence(text);
    const verdicts = labelVerdicts(snap);
    console.log(`"${text}" (${snap.L} tokens): ${verdicts.map((v, h) => `H${h + 1}:${v.holds === null ? 'n/a' : v.holds ? 'ok' : 'FAIL'}`).join(' ')}`);
    verdicts.forEach((v, h) => assert.notEqual(v.holds, false, `free text, head ${h + 1}: ${v.summary}`));
  }

  // markup typed by the user stays text
  const markup = 'The <img src=x onerror="window.__injected=1"> cat <b>sat</b>.';
  await page.fill('#free-text', markup);
  await page.click('#free-text-form button[type="submit"]');
  await waitForExplorer(page, (t) => window.explorer.sentence.text === t, markup);
  assert.equal(await page.count('#token-strip img, #token-strip b, #weights-table img'), 0, 'markup became elements');
  assert.equal(await page.evaluate(() => window.__injected), undefined);
  const stripText = await page.text('#token-strip');
  assert.ok(stripText.includes('<') || stripText.includes('img'), `token strip: ${stripText}`);

  // too long: a clear message, and the sentence stays as it was
  const long = Array.from({ length: 70 }, (_, k) => `word${k}`).join(' ');
  await page.fill('#free-text', long);
  await page.click('#free-text-form button[type="submit"]');
  await page.waitForSelector('#free-text-error:not([hidden])');
  const error = await page.text('#free-text-error');
  console.log(`70 words: ${error}`);
  assert.match(error, /70 tokens/);
  assert.match(error, /at most 64/);
  assert.equal(await page.evaluate(() => window.explorer.sentence.text), markup);

  // 64 tokens exactly is accepted
  const sixtyFour = `${Array.from({ length: 63 }, (_, k) => (k % 2 ? 'cats' : 'big')).join(' ')}.`;
  await page.fill('#free-text', sixtyFour);
  await page.click('#free-text-form button[type="submit"]');
  await waitForExplorer(page, (t) => window.explorer.sentence.text === t, sixtyFour);
  const snap64 = await snapshotWithReference();
  assert.equal(snap64.L, 64);
  assertViewsMatchApi(snap64, '64 tokens');
  const verdicts64 = labelVerdicts(snap64);
  console.log(`64 tokens: ${verdicts64.map((v, h) => `H${h + 1}:${v.holds === null ? 'n/a' : v.holds ? 'ok' : 'FAIL'}`).join(' ')}`);
  for (const h of [0, 1, 2, 6, 7]) assert.ok(verdicts64[h].holds, `64 tokens, head ${h + 1}: ${verdicts64[h].summary}`);
  await page.screenshot('explorer-64-tokens.png', { fullPage: false });
});

test('keyboard: sentences and heads are reachable and selectable without a mouse', { engines: 'all', why: 'input' }, async () => {
  await page.click('#sentence-list [role="radio"]', { index: 0 });
  await waitForExplorer(page, (t) => window.explorer.sentence.text === t, EXAMPLES[0].text);
  await page.click('#head-tab-0');
  await page.focus('#head-tab-0');
  await page.keyboard('ArrowRight');
  assert.equal(await page.evaluate(() => window.explorer.selectedHead), 1);
  assert.equal(await page.evaluate(() => document.activeElement.id), 'head-tab-1');
  await page.keyboard('End');
  assert.equal(await page.evaluate(() => window.explorer.selectedHead), 7);
  await page.keyboard('5');
  assert.equal(await page.evaluate(() => window.explorer.selectedHead), 4);
  await page.keyboard('ArrowLeft');
  assert.equal(await page.evaluate(() => window.explorer.selectedHead), 3);
  assert.equal(await page.attribute('#head-tab-3', 'aria-selected'), 'true');
  await page.focus('#sentence-list [role="radio"][aria-checked="true"]');
  await page.keyboard('ArrowDown');
  // a sentence is analysed in slices: the key starts it, the explorer holds it once drawn
  await waitForExplorer(page, (t) => window.explorer.sentence.text === t, EXAMPLES[1].text, 10_000)
    .catch(() => {});
  assert.equal(await page.evaluate(() => window.explorer.sentence.text), EXAMPLES[1].text);
  // every interactive control can be reached with Tab
  const tabbable = await page.evaluate(() => [...document.querySelectorAll('button, input, select, summary, [tabindex]')]
    .filter((e) => !e.disabled && e.tabIndex >= 0 && e.offsetParent !== null).length);
  assert.ok(tabbable > 20, `tabbable controls: ${tabbable}`);
  // ARIA: tabs, table, labelled canvases, read once the page has drawn the new sentence
  const { L } = await snapshotWithReference();
  assert.equal(await page.attribute('#head-panel', 'role'), 'tabpanel');
  assert.match(await page.attribute('#main-heatmap', 'aria-label'), /Head 4/);
  assert.equal(await page.count('#weights-table th[scope="col"]'), L + 1);
});

test('hovering a token highlights its row in every head; the W_O view follows it', { engines: 'all', why: 'input' }, async () => {
  await page.click('#sentence-list [role="radio"]', { index: 0 });
  await page.hover('#token-strip button[data-index="7"]');
  // the highlight is drawn on the animation frame after the hover
  await page.waitForFunction(() => window.explorer.hoverToken === 7 && document.querySelector('#token-strip button.active'));
  assert.equal(await page.count('#token-strip button.active'), 1);
  const snap = await snapshotWithReference();
  const E = snap.apiConcat.length / snap.L;
  const err = maxAbsDiff(snap.drawn['wo-concat'], snap.apiConcat.slice(7 * E, 8 * E));
  assert.ok(err <= 1e-6, `W_O view shows the concat of token 8 with error ${err}`);
  assert.match(await page.text('#wo-formula'), /“it”.*8 heads × 8 dimensions = 64/);
  // the head followed at "it": its largest weights and its output are the core's
  const row = headMap(snap, snap.selectedHead).slice(7 * snap.L, 8 * snap.L);
  const follow = await page.evaluate(() => ({
    keys: [...document.querySelectorAll('#follow-view .bar-row')].map((r) => [Number(r.dataset.key), Number(r.dataset.weight)]),
    text: document.querySelector('#follow-view .follow-output').textContent,
  }));
  const expectedKeys = row.map((w, j) => [j, w]).sort((p, q) => q[1] - p[1]).slice(0, follow.keys.length);
  assert.equal(follow.keys.length, Math.min(5, snap.L));
  follow.keys.forEach(([j, w], k) => assert.ok(Math.abs(w - expectedKeys[k][1]) <= 1e-6, `followed key ${k}: ${j} ${w} vs ${expectedKeys[k]}`));
  assert.match(follow.text, /8 numbers/);
  await page.mouseMove(0, 0);
  // focus keeps the highlight while the page scrolls for the screenshot
  await page.focus('#token-strip button[data-index="7"]');
  await page.waitForFunction(() => window.explorer.hoverToken === 7);
  await page.scrollIntoView('#token-strip');
  await page.screenshot('explorer-hover.png', { fullPage: false });
  await page.screenshot('explorer-multiples-hover.png', { selector: '#small-multiples' });
  await page.scrollIntoView('#wo-heads');
  await page.screenshot('explorer-wo.png', { selector: '.wo-view' });
  await page.evaluate(() => document.activeElement.blur());
});

test('switching heads off: the bars are how far the core says each token moves', { engines: 'chromium', why: 'computation' }, async () => {
  await page.click('#sentence-list [role="radio"]', { index: 0 });
  await settled(page);
  await page.check('#ablation-view input[data-head="3"]');
  await page.check('#ablation-view input[data-head="4"]');
  await page.waitForFunction(() => document.querySelectorAll('#ablation-bars .bar-row').length > 0 && window.explorer.ablated.size === 2 && /H4, H5 off/.test(document.getElementById('ablation-text').textContent));
  const r = await page.evaluate(async () => {
    const x = window.explorer;
    const { loadMha } = await import('/lib/index.js');
    const mha = await loadMha();
    const attention = new mha.MultiHeadAttention(x.source.attention.config);
    attention.loadStateDict(x.source.attention.stateDict());
    const L = x.sentence.tokens.length;
    const query = { data: x.sentence.features, shape: [L, 64] };
    const base = attention.forward({ query, needWeights: false }).output.data;
    const off = attention.forward({ query, needWeights: false, ablateHeads: [3, 4] }).output.data;
    attention.dispose();
    const expected = Array.from({ length: L }, (_, t) => Math.hypot(...Array.from({ length: 64 }, (_, c) => base[t * 64 + c] - off[t * 64 + c])));
    const shown = [...document.querySelectorAll('#ablation-bars .bar-row')].map((row) => Number(row.dataset.difference));
    return { expected, shown, text: document.getElementById('ablation-text').textContent };
  });
  console.log(`ablation H4+H5: ${r.text}`);
  const err = maxAbsDiff(r.shown, r.expected);
  assert.ok(err <= 1e-5, `bars differ from the core's differences by ${err}`);
  assert.ok(Math.max(...r.expected) > 0.1, 'switching off the verb and pronoun heads moves some token');
  await page.screenshot('explorer-ablation.png', { selector: '#ablation-view' });
  await page.uncheck('#ablation-view input[data-head="3"]');
  await page.uncheck('#ablation-view input[data-head="4"]');
  await page.waitForFunction(() => window.explorer.ablated.size === 0 && /No head is switched off/.test(document.getElementById('ablation-text').textContent));
});

/** CPU time (ms) used so far by the browser and all its child processes, from /proc (Linux). */
function browserCpuMs() {
  // chromium is started by this test process: count every descendant of it
  const root = process.pid;
  if (!existsSync('/proc/self/stat')) return null;
  const stats = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      stats.set(Number(entry), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch { /* gone */ }
  }
  const inTree = (pid) => {
    if (pid === root) return false;
    for (let p = pid, n = 0; p > 1 && n < 50; p = stats.get(p)?.ppid ?? 0, n += 1) if (p === root) return true;
    return false;
  };
  let ticks = 0;
  for (const [pid, st] of stats) if (inTree(pid)) ticks += st.ticks;
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

test('recompute and redraw time at lesson size', { engines: 'chromium', why: 'timing' }, async () => {
  // sync: the page's own measurement of forward pass + statistics + drawing (window.explorer.timings);
  // frame: from the click to the next animation frame after it, so style, layout and paint count too;
  // cpu: CPU time of all browser processes per change (frames included), which a busy machine does not inflate
  const rounds = 42;
  const cpuBefore = browserCpuMs();
  const samples = await page.evaluate(async (n) => {
    const out = [];
    const sentences = document.querySelectorAll('#sentence-list [role="radio"]');
    const tabs = document.querySelectorAll('#head-tabs [role="tab"]');
    const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
    for (let k = 0; k < n; k += 1) {
      let t0 = performance.now();
      sentences[k % sentences.length].click();
      const sentenceSync = window.explorer.timings.lastUpdateMs;
      await nextFrame();
      out.push({ kind: 'sentence', sync: sentenceSync, frame: performance.now() - t0 });
      t0 = performance.now();
      tabs[k % tabs.length].click();
      const headSync = window.explorer.timings.lastUpdateMs;
      await nextFrame();
      out.push({ kind: 'head', sync: headSync, frame: performance.now() - t0 });
    }
    return out;
  }, rounds);
  const cpuAfter = browserCpuMs();
  const sorted = (xs) => xs.slice().sort((a, b) => a - b);
  const summary = (kind, key) => {
    const xs = sorted(samples.filter((s) => s.kind === kind).map((s) => s[key]));
    return { min: xs[0], median: xs[xs.length >> 1], p90: xs[Math.floor(xs.length * 0.9)] };
  };
  const show = (s) => `min ${s.min.toFixed(1)}, median ${s.median.toFixed(1)}, p90 ${s.p90.toFixed(1)} ms`;
  const sentenceSync = summary('sentence', 'sync');
  console.log(`change sentence, forward + statistics + redraw: ${show(sentenceSync)}; to the next frame: ${show(summary('sentence', 'frame'))}`);
  console.log(`change head, redraw: ${show(summary('head', 'sync'))}; to the next frame: ${show(summary('head', 'frame'))}`);
  let cpuPerChange = null;
  if (cpuBefore != null && cpuAfter != null) {
    cpuPerChange = (cpuAfter - cpuBefore) / (2 * rounds);
    console.log(`CPU time of all browser processes: ${cpuPerChange.toFixed(1)} ms per change (${2 * rounds} changes, sentence and head alternating, each with its frame)`);
  }
  console.log(`(target: one frame, 16.7 ms; load average now ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores)`);
  // The one-frame goal (16.7 ms) is a speed goal: the figures above report it, and a loaded machine
  // must not fail the test on it. These bounds only catch an update that hangs.
  console.log(`one-frame goal ${sentenceSync.min < 16.7 ? 'met' : 'NOT met'} by the fastest sentence update (${sentenceSync.min.toFixed(1)} ms vs 16.7 ms)`);
  assert.ok(sentenceSync.min < 2000, `fastest sentence update ${sentenceSync.min} ms (hang bound 2000 ms; goal 16.7 ms)`);
  if (cpuPerChange != null) assert.ok(cpuPerChange < 5000, `CPU per change ${cpuPerChange} ms (hang bound 5000 ms)`);
});

test('dark theme and a device pixel ratio of 2', { engines: 'all', why: 'layout' }, async () => {
  await page.click('#theme-toggle');
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
  await page.screenshot('explorer-dark.png', { selector: '#explorer' });
  await page.click('#theme-toggle');
  // a page of its own: the device pixel ratio is set when a page opens
  const hi = await newPage({ width: 1280, height: 900 }, { deviceScaleFactor: 2 });
  await openPage(hi);
  const size = await hi.evaluate(() => {
    const c = document.getElementById('main-heatmap');
    return { dpr: devicePixelRatio, width: c.width, cssWidth: parseFloat(c.style.width), height: c.height, cssHeight: parseFloat(c.style.height) };
  });
  const ratio = 2;
  assert.equal(size.dpr, ratio, 'devicePixelRatio');
  assert.equal(size.width, Math.round(size.cssWidth * ratio), `canvas backing store ${size.width} for CSS width ${size.cssWidth} at DPR ${ratio}`);
  assert.equal(size.height, Math.round(size.cssHeight * ratio));
  await hi.screenshot('explorer-heatmap-dpr2.png', { selector: '.head-panel' });
  await hi.close();
});

test('no console errors', { engines: 'all', why: 'errors' }, async () => {
  await page.flushEvents();
  assert.deepEqual(consoleErrors, []);
  // a lesson section computed again after the engine trapped is a warning, said here
  const retried = await page.evaluate(() => window.__mhaLesson?.retried ?? []);
  if (retried.length) note(`the lesson computed a section again after a trap of the WebAssembly engine: ${retried.join('; ')}`);
});
