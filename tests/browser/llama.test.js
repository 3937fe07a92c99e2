// A Llama-family model with grouped-query attention (tests/golden/models/llama-gqa: 2 layers of 4
// query heads sharing 2 key/value heads, rotary positions, RMSNorm, a gated feed-forward layer),
// in a real browser (each engine of tests/browser/driver.js), one page for the file: picked as
// files in the page and fetched by <mha-explorer model-url> from another origin. Checks: the ids
// and every layer's attention weights equal the PyTorch goldens (scripts/reference/
// llama_reference.py) within 1e-5; the query heads that share a key/value head are drawn as one
// group in the model view and the element's grid, the head panel names its key/value head and
// the heads that share it, the compare view offers a pair from one group and a pair from two;
// the lesson's grouped-query attention section links to the model and works out its KV cache
// from its config. Screenshots: build/screenshots/<engine>/.
//
// In every engine: the model picked as files with its groups drawn, one golden sentence, and
// the element from another origin; then a Mistral (tests/golden/models/mistral-window) and a
// Qwen2 (qwen2-bias-window) fetched by the element from that origin (one golden sentence, the
// last layer) and picked as files (both golden sentences, every layer). In Chromium only (the numbers do not depend on the engine):
// the other golden sentence, its predictions against PyTorch's logits, head importance, a head
// switched off, the W_O view, its heads measured by the roles rule, and the lesson's figures.
//
//   node --test tests/browser/llama.test.js

import { after, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { ENGINE, serve, startWeb, stopWeb, test } from './driver.js';
import { attachExplorer, resetExplorer, settled, waitForExplorer } from './page-state.js';
import { runAxe } from './axe.js';
import { clippedText } from './readable.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const models = path.join(root, 'tests', 'golden', 'models');
const NAME = 'llama-gqa';
const files = ['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => path.join(models, NAME, f));
const runs = JSON.parse(readFileSync(path.join(models, `${NAME}.golden.json`), 'utf8')).dtypes.F32.runs;
const config = JSON.parse(readFileSync(path.join(models, NAME, 'config.json'), 'utf8'));
const WEIGHTS_TOLERANCE = 1e-5;
// query head h reads key/value head h / (H / G)
const H = config.num_attention_heads;
const G = config.num_key_value_heads;
const KV = Array.from({ length: H }, (_, h) => Math.floor(h / (H / G)));

let server;
let modelServer;
let browser;
let page;
const consoleErrors = [];

before(async () => {
  assert.ok(G > 1 && G < H, `${NAME} shares key/value heads: ${H} query heads, ${G} key/value heads`);
  // the golden models served from a site of their own, as a course author may host them
  modelServer = await serve({ root: models, headers: { 'Access-Control-Allow-Origin': '*' } });
  ({ server, browser } = await startWeb({ needs: ['web/lib/wasm/mha_core.wasm', 'web/lib/wasm/mha_models.js', 'web/lib/wasm/mha_models.wasm'] }));
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('consoleError', (text, url) => consoleErrors.push(`${text} (${url || 'no url'})`));
  page.on('pageError', (message) => consoleErrors.push(`page error: ${message}`));
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.status === 'ok' || document.body.dataset.status === 'error', null, { timeout: 30000 });
  assert.equal(await page.evaluate(() => document.body.dataset.status), 'ok', `page status: ${await page.text('#status')}`);
  await attachExplorer(page);
});

after(async () => {
  await stopWeb({ server, browser });
  if (modelServer) await modelServer.close();
});

beforeEach(() => resetExplorer(page, 60000));

/** The model source again: the Llama opened from files. */
async function showModel() {
  await page.check('input[name="source"][value="model"]');
  await waitForExplorer(page, () => window.explorer.source?.id === 'model' && window.explorer.busy === 0, null, 60000);
}

/** Type a sentence and wait until the explorer shows it. */
async function showSentence(text) {
  await page.fill('#free-text', text);
  await page.click('#free-text-form button[type="submit"]');
  await waitForExplorer(page, (t) => window.explorer.sentence?.text === t && window.explorer.busy === 0, text, 60000);
}

/** A golden run shown: its ids, and every layer's weights (the model view's maps) against PyTorch's. */
async function checkRun(run, name = NAME) {
  await showSentence(run.text);
  const shown = await page.evaluate(() => {
    const x = window.explorer;
    return { ids: x.sentence.ids, layers: x.result.layers.map((t) => Array.from(t.data)) };
  });
  assert.deepEqual(shown.ids, run.ids, `ids of "${run.text}"`);
  let worst = 0;
  shown.layers.forEach((data, l) => {
    const expected = run.attentions[l].flat(Infinity);
    assert.equal(data.length, expected.length, `layer ${l}: ${data.length} weights, expected ${expected.length}`);
    data.forEach((v, i) => { worst = Math.max(worst, Math.abs(v - expected[i])); });
  });
  console.log(`  [${ENGINE}] ${name} "${run.text}": every layer's weights, max |page − PyTorch| = ${worst.toExponential(2)} (tolerance ${WEIGHTS_TOLERANCE})`);
  assert.ok(worst <= WEIGHTS_TOLERANCE, `"${run.text}": weights differ from PyTorch by ${worst}`);
}

test('a Llama with grouped-query attention picked as files: every layer as PyTorch computes it; the groups in the model view, the head panel and the compare view', { engines: 'all', why: 'files', timeout: 180000 }, async () => {
  await page.setInputFiles('#model-files', files);
  await waitForExplorer(page, () => window.explorer.source?.id === 'model' && window.explorer.busy === 0, null, 60000);
  assert.match(await page.text('#status'), new RegExp(`^Ready: ${H} heads × \\d+ tokens of “.+”, d_model ${config.hidden_size}, Llama-family model`));
  await checkRun(runs[0]);

  // the model view: one label over each group, each cell the key/value head it reads
  await page.waitForFunction(() => document.querySelectorAll('#model-grid .model-grid-group').length > 0, null, { timeout: 10000 });
  const grid = await page.evaluate(() => ({
    groups: [...document.querySelectorAll('#model-grid .model-grid-group')].map((g) => [g.textContent, getComputedStyle(g).gridColumnStart]),
    cells: [...document.querySelectorAll('#model-grid .model-cell[data-layer="0"]')].map((c) => [Number(c.dataset.kv), c.classList.contains('kv-alt'), c.getAttribute('aria-label')]),
    note: document.getElementById('layers-groups').hidden ? null : document.getElementById('layers-groups').textContent,
    // the groups stand side by side, the heads of a group under their label
    label: [...document.querySelectorAll('#model-grid .model-grid-group')].map((g) => { const r = g.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.right)]; }),
    heads: [...document.querySelectorAll('#model-grid .model-cell[data-layer="0"]')].map((c) => { const r = c.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.right)]; }),
  }));
  assert.deepEqual(grid.groups.map(([text]) => text), Array.from({ length: G }, (_, g) => `KV ${g + 1}`));
  assert.deepEqual(grid.groups.map(([, span]) => span), Array.from({ length: G }, () => `span ${H / G}`));
  assert.deepEqual(grid.cells.map(([kv]) => kv), KV);
  assert.deepEqual(grid.cells.map(([, alt]) => alt), KV.map((g) => g % 2 === 1), 'every other group tinted');
  grid.cells.forEach(([kv, , label], h) => assert.match(label, new RegExp(`head ${h + 1}.*\\(key/value head ${kv + 1}\\)`)));
  KV.forEach((g, h) => assert.ok(grid.heads[h][0] >= grid.label[g][0] - 2 && grid.heads[h][1] <= grid.label[g][1] + 6, `head ${h + 1} under its label: ${grid.heads[h]} in ${grid.label[g]}`));
  assert.match(grid.note, new RegExp(`its ${H} query heads share ${G} key/value heads, ${H / G} query heads each`));

  // a head's panel: its key/value head and the query heads that read the same keys and values
  await page.click('#model-grid .model-cell[data-layer="1"][data-head="2"]');
  await waitForExplorer(page, () => window.explorer.layer === 1 && window.explorer.selectedHead === 2 && window.explorer.busy === 0, null, 30000);
  const same = KV.flatMap((g, h) => (g === KV[2] && h !== 2 ? [h + 1] : []));
  assert.match(await page.text('#head-kv'), new RegExp(`^Reads key/value head ${KV[2] + 1} of ${G} \\(grouped-query attention.*Query heads? ${same.join(' and ')} reads? the same keys and values`));
  await page.screenshot('llama-gqa-explorer.png', { selector: '#explorer' });
  await page.screenshot('llama-gqa-layers.png', { selector: '#layers-panel' });
  await page.screenshot('llama-gqa-head.png', { selector: '#head-panel' });

  // the compare view: a pair from one group, then a pair from two groups
  await page.scrollIntoView('#compare-view');
  await page.selectOption('#pair-a', '0');
  await page.waitForFunction(() => window.explorer.pair.a === 0, null, { timeout: 10000 });
  await page.click('#pair-same-kv');
  await page.waitForFunction(() => window.explorer.pair.b !== 0 && document.getElementById('pair-kv-note').textContent.includes('same keys'), null, { timeout: 10000 });
  const one = await page.evaluate(() => window.explorer.pair);
  assert.equal(KV[one.a], KV[one.b], `H${one.a + 1} and H${one.b + 1} read one key/value head`);
  assert.match(await page.text('#pair-caption-a'), new RegExp(`· KV ${KV[one.a] + 1}$`));
  await page.click('#pair-other-kv');
  await page.waitForFunction(() => document.getElementById('pair-kv-note').textContent.startsWith('A reads'), null, { timeout: 10000 });
  const two = await page.evaluate(() => window.explorer.pair);
  assert.notEqual(KV[two.a], KV[two.b], `H${two.a + 1} and H${two.b + 1} read two key/value heads`);
  assert.match(await page.text('#pair-kv-note'), new RegExp(`A reads key/value head ${KV[two.a] + 1}, B key/value head ${KV[two.b] + 1}`));
  await page.screenshot('llama-gqa-compare.png', { selector: '#compare-view' });
  assert.deepEqual(consoleErrors, []);
});

test('with the Llama open in the compare view, at 390 and 1280 px wide: no text cut, the page no wider than the window; 0 axe violations', { engines: 'all', why: 'layout', timeout: 300000 }, async () => {
  await showModel();
  await page.evaluate(() => window.explorer.setState({ pair: [0, 2], head: 1 }));
  await settled(page, 60000);
  const problems = [];
  try {
    for (const width of [390, 1280]) {
      await page.setViewport({ width, height: 900 });
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 50)))));
      await settled(page, 60000);
      const r = await page.evaluate(clippedText, { within: '#explorer' });
      console.log(`  [${ENGINE}] the Llama at ${r.innerWidth} px: the document is ${r.scrollWidth} px wide; ${r.clipped.length} texts cut`);
      if (r.scrollWidth > r.innerWidth) problems.push(`at ${r.innerWidth} px the page is ${r.scrollWidth} px wide`);
      for (const c of r.clipped) problems.push(`at ${r.innerWidth} px: ${c.what} "${c.text}": ${c.why}`);
      if (width === 390) {
        await page.scrollIntoView('#layers-panel');
        await page.screenshot('llama-gqa-390.png');
      }
    }
  } finally {
    await page.setViewport({ width: 1280, height: 900 });
  }
  assert.deepEqual(problems, []);
  assert.deepEqual(await runAxe(page, 'the page with a Llama open'), []);
});

test('the Llama\'s other golden sentence, its predictions as PyTorch computes them; head importance, a head switched off, the W_O view', { engines: 'chromium', why: 'computation', timeout: 180000 }, async () => {
  await showModel();
  for (const run of runs) {
    await checkRun(run);
    // the predictions after the last token: the softmax of PyTorch's logits there
    const last = run.ids.length - 1;
    const at = run.logit_positions.indexOf(last);
    assert.ok(at >= 0, 'the golden run has logits at its last token');
    const V = run.logits.length / run.logit_positions.length;
    const logits = run.logits.slice(at * V, (at + 1) * V);
    const max = Math.max(...logits);
    const sum = logits.reduce((s, v) => s + Math.exp(v - max), 0);
    const expected = logits.map((v, id) => [id, Math.exp(v - max) / sum]).sort((a, b) => b[1] - a[1]).slice(0, 5);
    const predicted = await page.evaluate(() => {
      const x = window.explorer;
      return x.source.predictions(x.sentence.run, x.sentence.tokens.length - 1).map((p) => [p.id, p.probability]);
    });
    predicted.forEach(([id, p], k) => {
      assert.equal(id, expected[k][0], `prediction ${k}: token ${id}, PyTorch's ${expected[k][0]}`);
      assert.ok(Math.abs(p - expected[k][1]) < 1e-5, `prediction ${k}: ${p} vs ${expected[k][1]}`);
    });
  }
  assert.equal(await page.evaluate(() => document.getElementById('predictions-panel').hidden), false);
  // head importance: one figure per layer and head, each finite
  await page.click('#importance-measure');
  await page.waitForFunction(() => !!window.explorer.importance && window.explorer.busy === 0, null, { timeout: 60000 });
  const importance = await page.evaluate(() => ({ shape: window.explorer.importance.shape, data: Array.from(window.explorer.importance.data) }));
  assert.deepEqual(importance.shape, [config.num_hidden_layers, H]);
  assert.ok(importance.data.every(Number.isFinite) && importance.data.some((v) => v !== 0), importance.data.join(', '));
  assert.equal(await page.count('#importance-view .importance-cell'), config.num_hidden_layers * H);
  // the W_O view: every query head's output, concatenated, through o_proj
  assert.equal(await page.evaluate(() => document.getElementById('wo-view').hidden), false);
  const headDim = config.hidden_size / H;
  assert.match(await page.text('#wo-view'), new RegExp(`${H} heads × ${headDim} dimensions = ${H * headDim}`));
  // both heads of one group off: the predictions move
  await page.evaluate((heads) => window.explorer.setAblated(heads), KV.flatMap((g, h) => (g === 0 ? [h] : [])));
  await page.waitForFunction(() => window.explorer.ablation?.heads.length > 0 && !!window.explorer.ablation.run, null, { timeout: 30000 });
  const moved = await page.evaluate(() => {
    const x = window.explorer;
    const t = x.sentence.tokens.length - 1;
    const on = x.source.predictions(x.sentence.run, t);
    const off = x.source.predictions(x.ablation.run, t);
    return Math.abs(on[0].probability - off[0].probability);
  });
  assert.ok(moved > 1e-6, `switching off key/value group 1's query heads moved the top prediction by ${moved}`);
  await page.evaluate(() => window.explorer.setAblated([]));
});

test('the Llama\'s heads measured by the roles rule, its causal reading', { engines: 'chromium', why: 'computation', timeout: 300000 }, async () => {
  await showModel();
  await page.click('#roles-measure');
  await page.waitForFunction(() => !!window.explorer.source.roles && !!document.querySelector('#roles-view table'), null, { timeout: 280000 });
  const measured = await page.evaluate(() => ({ heads: window.explorer.source.roles.heads.length, sentences: window.explorer.source.roles.corpus.sentences }));
  console.log(`  roles: ${measured.heads} heads on ${measured.sentences} sentences`);
  assert.equal(measured.heads, config.num_hidden_layers * H);
  assert.ok(measured.sentences > 100, `${measured.sentences} sentences measured`);
});

test('the lesson\'s grouped-query attention section with the Llama open: a link to its groups and its KV cache from its config', { engines: 'chromium', why: 'computation', timeout: 120000 }, async () => {
  await page.waitForFunction(() => document.getElementById('lesson')?.dataset.ready === 'true', null, { timeout: 60000 });
  assert.equal(await page.evaluate(() => document.getElementById('gqa-model').hidden), true, 'no model open: nothing said');
  await showModel();
  await page.waitForFunction(() => !document.getElementById('gqa-model').hidden, null, { timeout: 10000 });
  const text = await page.text('#gqa-model');
  assert.match(text, new RegExp(`${H} query heads \\(num_attention_heads\\) and ${G} key/value heads \\(num_key_value_heads\\)`));
  // 2 (K and V) × G × head_dim × layers × 2 bytes, against H
  const headDim = config.hidden_size / H;
  const per = (heads) => 2 * heads * headDim * config.num_hidden_layers * 2;
  assert.equal(await page.evaluate(() => document.getElementById('gqa-model').dataset.bytesPerToken), String(per(G)));
  assert.equal(await page.text('#gqa-model-per-token'), `${per(G)} B`);
  assert.equal(await page.text('#gqa-model-mha'), `${per(H)} B`);
  assert.equal(await page.text('#gqa-model-saved'), `${Math.round((1 - G / H) * 100)}%`);
  assert.equal(await page.attribute('#gqa-model-link', 'href'), '#layers-panel');
  await page.scrollIntoView('#gqa-model');
  await page.screenshot('llama-gqa-lesson.png', { selector: '#lesson-gqa' });
  // the designed heads: each has its own keys and values, nothing said
  await page.check('input[name="source"][value="designed"]');
  await waitForExplorer(page, () => window.explorer.source?.id === 'designed' && window.explorer.busy === 0, null, 30000);
  assert.equal(await page.evaluate(() => document.getElementById('gqa-model').hidden), true);
});

test('<mha-explorer model-url> of the Llama on another site: a layer as PyTorch computes it, its groups in the grid and the compare view', { engines: 'all', why: 'network', timeout: 120000 }, async () => {
  const [run] = runs;
  await page.evaluate(async ({ url, text }) => {
    await import('/element/mha-explorer.js');
    document.getElementById('model-element')?.remove();
    const element = document.createElement('mha-explorer');
    element.id = 'model-element';
    element.setAttribute('model-url', url);
    element.setAttribute('sentence', text);
    element.setAttribute('layer', '1');
    element.setAttribute('view', 'grid');
    document.body.append(element);
  }, { url: `${modelServer.url}${NAME}/`, text: run.text });
  await page.waitForFunction(() => ['ready', 'error'].includes(document.getElementById('model-element')?.status), null, { timeout: 60000 });
  const shown = await page.evaluate(() => {
    const element = document.getElementById('model-element');
    const r = element.result;
    return { status: element.status, error: element.shadowRoot.textContent.slice(0, 300), data: r ? Array.from(r.weights.data) : null };
  });
  assert.equal(shown.status, 'ready', shown.error);
  const expected = run.attentions[1].flat(Infinity);
  assert.equal(shown.data.length, expected.length);
  const worst = shown.data.reduce((w, v, i) => Math.max(w, Math.abs(v - expected[i])), 0);
  console.log(`  [${ENGINE}] the element's layer 1: max |page − PyTorch| = ${worst.toExponential(2)}`);
  assert.ok(worst <= WEIGHTS_TOLERANCE, `the element's layer 1 differs from PyTorch by ${worst}`);
  await page.waitForFunction(() => document.getElementById('model-element').shadowRoot.querySelectorAll('.multiple[data-kv]').length > 0, null, { timeout: 10000 });
  const multiples = await page.evaluate(() => [...document.getElementById('model-element').shadowRoot.querySelectorAll('.multiple')]
    .map((m) => [Number(m.dataset.kv), m.classList.contains('kv-alt'), m.querySelector('.multiple-title').textContent]));
  assert.deepEqual(multiples.map(([kv]) => kv), KV);
  assert.deepEqual(multiples.map(([, alt]) => alt), KV.map((g) => g % 2 === 1));
  multiples.forEach(([kv, , title], h) => assert.match(title, new RegExp(`^H${h + 1} · KV ${kv + 1} · `)));
  await page.evaluate(() => new Promise((resolve) => {
    document.getElementById('model-element').scrollIntoView();
    requestAnimationFrame(() => requestAnimationFrame(resolve));
  }));
  await page.screenshot('llama-gqa-element-grid.png', { selector: '#model-element' });
  // the compare view: the pairs of one group and of two
  await page.evaluate(() => document.getElementById('model-element').setAttribute('view', 'compare'));
  await page.waitForFunction(() => {
    const kv = document.getElementById('model-element').shadowRoot.getElementById('pair-kv');
    return kv && !kv.hidden;
  }, null, { timeout: 10000 });
  const buttons = await page.evaluate(() => {
    const shadow = document.getElementById('model-element').shadowRoot;
    return [shadow.getElementById('pair-same-kv').textContent, shadow.getElementById('pair-other-kv').textContent];
  });
  assert.match(buttons[0], /^One group: H1 and H\d \(KV 1\)$/);
  assert.match(buttons[1], /^Two groups: H1 and H\d \(KV 1 and 2\)$/);
  await page.evaluate(() => document.getElementById('model-element').shadowRoot.getElementById('pair-other-kv').click());
  await page.waitForFunction((h) => document.getElementById('model-element').compareHead === h, KV.indexOf(1) + 1, { timeout: 10000 });
  await page.screenshot('llama-gqa-element-compare.png', { selector: '#model-element' });
  await page.evaluate(() => document.getElementById('model-element').remove());
  assert.deepEqual(consoleErrors, []);
});

test('<mha-explorer model-url> of a Mistral and a Qwen2 on another site: the last layer as PyTorch computes it, its key/value groups in the grid', { engines: 'all', why: 'network', timeout: 180000 }, async () => {
  for (const name of ['mistral-window', 'qwen2-bias-window']) {
    const own = JSON.parse(readFileSync(path.join(models, name, 'config.json'), 'utf8'));
    const [run] = JSON.parse(readFileSync(path.join(models, `${name}.golden.json`), 'utf8')).dtypes.F32.runs;
    const layer = own.num_hidden_layers - 1;
    await page.evaluate(async ({ url, text, layer }) => {
      await import('/element/mha-explorer.js');
      document.getElementById('model-element')?.remove();
      const element = document.createElement('mha-explorer');
      element.id = 'model-element';
      element.setAttribute('model-url', url);
      element.setAttribute('sentence', text);
      element.setAttribute('layer', String(layer));
      element.setAttribute('view', 'grid');
      document.body.append(element);
    }, { url: `${modelServer.url}${name}/`, text: run.text, layer });
    await page.waitForFunction(() => ['ready', 'error'].includes(document.getElementById('model-element')?.status), null, { timeout: 60000 });
    const shown = await page.evaluate(() => {
      const element = document.getElementById('model-element');
      const r = element.result;
      return { status: element.status, error: element.shadowRoot.textContent.slice(0, 300), data: r ? Array.from(r.weights.data) : null };
    });
    assert.equal(shown.status, 'ready', `${name}: ${shown.error}`);
    const expected = run.attentions[layer].flat(Infinity);
    assert.equal(shown.data.length, expected.length, `${name}: ${shown.data.length} weights in layer ${layer + 1}, expected ${expected.length}`);
    const worst = shown.data.reduce((w, v, i) => Math.max(w, Math.abs(v - expected[i])), 0);
    console.log(`  [${ENGINE}] the element's ${name}, layer ${layer + 1}: max |page − PyTorch| = ${worst.toExponential(2)}`);
    assert.ok(worst <= WEIGHTS_TOLERANCE, `${name}: the element's layer ${layer + 1} differs from PyTorch by ${worst}`);
    await page.waitForFunction(() => document.getElementById('model-element').shadowRoot.querySelectorAll('.multiple[data-kv]').length > 0, null, { timeout: 10000 });
    const kv = await page.evaluate(() => [...document.getElementById('model-element').shadowRoot.querySelectorAll('.multiple')].map((m) => Number(m.dataset.kv)));
    const perGroup = own.num_attention_heads / own.num_key_value_heads;
    assert.deepEqual(kv, Array.from({ length: own.num_attention_heads }, (_, h) => Math.floor(h / perGroup)), `${name}: each head's key/value group`);
    await page.evaluate(() => document.getElementById('model-element').remove());
  }
  assert.deepEqual(consoleErrors, []);
});

// Last in the file: it leaves another model open in the page.
test('a Mistral (sliding window) and a Qwen2 (q/k/v biases, a window from a layer on, one key/value head) picked as files: every layer as PyTorch computes it, the groups drawn', { engines: 'all', why: 'files', timeout: 240000 }, async () => {
  for (const [name, family] of [['mistral-window', 'Mistral'], ['qwen2-bias-window', 'Qwen2']]) {
    const own = JSON.parse(readFileSync(path.join(models, name, 'config.json'), 'utf8'));
    const golden = JSON.parse(readFileSync(path.join(models, `${name}.golden.json`), 'utf8')).dtypes.F32.runs;
    await page.setInputFiles('#model-files', ['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => path.join(models, name, f)));
    await waitForExplorer(page, (n) => window.explorer.source?.id === 'model' && window.explorer.busy === 0 &&
      document.getElementById('status').textContent.includes(n), family, 60000);
    assert.match(await page.text('#status'), new RegExp(`^Ready: ${own.num_attention_heads} heads × \\d+ tokens of “.+”, d_model ${own.hidden_size}, ${family}-family model`));
    for (const run of golden) await checkRun(run, name);
    const groups = await page.evaluate(() => [...document.querySelectorAll('#model-grid .model-grid-group')].map((g) => g.textContent));
    assert.deepEqual(groups, Array.from({ length: own.num_key_value_heads }, (_, g) => `KV ${g + 1}`), `${name}: a label over each key/value group`);
  }
});
