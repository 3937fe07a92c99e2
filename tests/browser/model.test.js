// A model the user opens, in a real browser (each engine of tests/browser/driver.js), one page for
// the file: the small GPT-2 trained on the repo's sentences picked as files, BERT and a nanoGPT
// export picked the same way, the page's example model fetched from a URL, and <mha-explorer
// model-url> (the example, and a BERT and a nanoGPT export served from another origin). Checks:
// the ids, every layer's attention weights (the model view's maps) and head importance equal
// the PyTorch goldens of tests/golden/models (scripts/reference/hf_reference.py) within 1e-5 / 1e-4; the
// predictions panel is the softmax of the golden logits; a click in the model view opens that
// layer and head; switching a head off changes the predictions shown; bad files get a message
// naming the file, and the page keeps working. Screenshots: build/screenshots/<engine>/ with MHA_SCREENSHOTS=all.
// axe-core finds 0 WCAG 2.1 A/AA violations with a model open (light and dark). At 390, 768
// and 1280 px wide, with each source and then a model open (its predictions, every layer and
// its head importance shown), the page is no wider than the window and no text is cut
// (readable.js); a text of 128 pieces, the most the pretrained model reads, has every token
// named on its map's axes or when its cell is pointed at.
//
// In every engine: the GPT-2 picked as files with one golden sentence (and the note saying where
// its files came from), axe and the screenshot with its head importance shown, the model view's
// click and arrow keys, one bad file (no model.safetensors), the example from a URL with
// <mha-explorer model-url>, one layer of a BERT in the element from another origin, the widths,
// and a course page on an origin of its own whose element comes from a CDN-like server
// (Access-Control-Allow-Origin: *) with a model from a third origin, under the
// Content-Security-Policy docs/element.md gives, with and without worker="never" (its workers start
// through blob: trampolines; a crossOriginIsolated page keeps to the single-thread core). In
// Chromium only (the numbers do not depend on the engine): the other golden sentences and head
// importance against PyTorch, heads switched off, its heads measured by the roles rule (the
// relations a causal model cannot see shown as not visible), BERT and nanoGPT from files, every
// other bad file, and every other layer of the models from another origin.
//
//   node --test tests/browser/model.test.js

import { after, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { BLANK_PAGE, ENGINE, note, serve, startWeb, stopWeb, test } from './driver.js';
import { attachExplorer, resetExplorer, settled, waitForExplorer } from './page-state.js';
import { runAxe } from './axe.js';
import { clippedText, tokensNamed } from './readable.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const models = path.join(root, 'tests', 'golden', 'models');
const files = (name, list = ['config.json', 'model.safetensors', 'tokenizer.json']) => list.map((f) => path.join(models, name, f));
const golden = (name) => JSON.parse(readFileSync(path.join(models, `${name}.golden.json`), 'utf8')).dtypes.F32.runs;
const WEIGHTS_TOLERANCE = 1e-5;

let server;
let modelServer;
let browser;
let page;
const consoleErrors = [];

before(async () => {
  // the golden models served from a site of their own, as a course author may host them
  modelServer = await serve({ root: models, headers: { 'Access-Control-Allow-Origin': '*' } });
  ({ server, browser } = await startWeb({ needs: ['web/lib/wasm/mha_core.wasm', 'web/lib/wasm/mha_models.js', 'web/lib/wasm/mha_models.wasm', 'web/lib/wasm/mha_encoder.wasm', 'web/models/use-lite/manifest.json'] }));
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('consoleError', (text, url) => {
    if (/\/app\/lesson\/index\.js$/.test(url || '')) return;
    consoleErrors.push(`${text} (${url || 'no url'})`);
  });
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

/** The model source again: it shows the last model opened from files (the GPT-2 until BERT and nanoGPT are opened). */
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

/** Every layer's weights as the page holds them (what the model view draws), as plain arrays. */
const shownLayers = () => page.evaluate(() => {
  const x = window.explorer;
  return { ids: x.sentence.ids, layers: x.result.layers.map((t) => ({ shape: t.shape, data: Array.from(t.data) })) };
});

function maxDifference(layers, attentions) {
  let worst = 0;
  layers.forEach((layer, l) => {
    const expected = attentions[l].flat(Infinity);
    assert.equal(layer.data.length, expected.length, `layer ${l}: ${layer.data.length} weights, expected ${expected.length}`);
    layer.data.forEach((v, i) => { worst = Math.max(worst, Math.abs(v - expected[i])); });
  });
  return worst;
}

/** A golden run shown: its ids, every layer's weights, the model view's maps, and the predictions at its last token as PyTorch computes them. */
async function checkRun(run) {
  await showSentence(run.text);
  const shown = await shownLayers();
  assert.deepEqual(shown.ids, run.ids, `ids of "${run.text}"`);
  const worst = maxDifference(shown.layers, run.attentions);
  console.log(`  "${run.text}": every layer's weights, max |page − PyTorch| = ${worst.toExponential(2)} (tolerance ${WEIGHTS_TOLERANCE})`);
  assert.ok(worst <= WEIGHTS_TOLERANCE, `"${run.text}": weights differ from PyTorch by ${worst}`);
  // the model view: one map per layer and head
  assert.equal(await page.count('#model-grid .model-cell'), run.attentions.length * await page.evaluate(() => window.explorer.numHeads));
  // the predictions at the last token: the softmax of PyTorch's logits there
  const last = run.ids.length - 1;
  const at = run.logit_positions.indexOf(last);
  if (at >= 0) {
    const V = run.logits.length / run.logit_positions.length;
    const logits = run.logits.slice(at * V, (at + 1) * V);
    const max = Math.max(...logits);
    const sum = logits.reduce((s, v) => s + Math.exp(v - max), 0);
    const expected = logits.map((v, id) => [id, Math.exp(v - max) / sum]).sort((a, b) => b[1] - a[1]).slice(0, 5);
    await page.evaluate((t) => window.explorer.setFocusToken(t), last);
    const predicted = await page.evaluate(() => {
      const x = window.explorer;
      return x.source.predictions(x.sentence.run, x.sentence.tokens.length - 1).map((p) => [p.id, p.probability]);
    });
    predicted.forEach(([id, p], k) => {
      assert.equal(id, expected[k][0], `prediction ${k}: token ${id}, PyTorch's ${expected[k][0]}`);
      assert.ok(Math.abs(p - expected[k][1]) < 1e-5, `prediction ${k}: ${p} vs ${expected[k][1]}`);
    });
    assert.equal(await page.count('#predictions-view li'), 5);
    assert.match(await page.text('#predictions-view'), /After “/);
  }
}

test('a GPT-2 picked as files: the ids and every layer of a sentence as PyTorch computes them', { engines: 'all', why: 'files', timeout: 120000 }, async () => {
  await page.setInputFiles('#model-files', files('gpt2-trained'));
  await waitForExplorer(page, () => window.explorer.source?.id === 'model' && window.explorer.busy === 0, null, 60000);
  assert.equal(await page.evaluate(() => document.querySelector('input[name="source"][value="model"]').checked), true);
  // where its files came from, and what is shown
  assert.match(await page.text('#source-note'), /Its files were read in this page from the files you opened \(config\.json, model\.safetensors, tokenizer\.json\); nothing was uploaded\./);
  assert.match(await page.text('#status'), /^Ready: 4 heads × \d+ tokens of “.+”, d_model 32, GPT-2-family model “[^”]+”, layer 0:/);
  await checkRun(golden('gpt2-trained')[0]);
});

test('the GPT-2\'s other golden sentences and its head importance as PyTorch computes them', { engines: 'chromium', why: 'computation', timeout: 120000 }, async () => {
  await showModel();
  for (const run of golden('gpt2-trained').slice(1)) await checkRun(run);
  // head importance, on the last golden sentence
  const run = golden('gpt2-trained').at(-1);
  await page.click('#importance-measure');
  await page.waitForFunction(() => !!window.explorer.importance && window.explorer.busy === 0, null, { timeout: 60000 });
  const importance = await page.evaluate(() => Array.from(window.explorer.importance.data));
  const expected = run.head_importance.flat(Infinity);
  assert.equal(importance.length, expected.length);
  let worst = 0;
  importance.forEach((v, i) => { worst = Math.max(worst, Math.abs(v - expected[i])); });
  console.log(`  head importance: max |page − PyTorch| = ${worst.toExponential(2)} (tolerance 1e-4)`);
  importance.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) <= 1e-4, `head importance ${i}: ${v} vs PyTorch ${expected[i]}`));
  assert.equal(await page.count('#importance-view .importance-cell'), expected.length);
});

test('the page with a GPT-2 open and its head importance shown: 0 axe violations, light and dark', { engines: 'all', why: 'accessibility', timeout: 120000 }, async () => {
  await showModel();
  // head importance on the last golden sentence, as the test above measures it
  await showSentence(golden('gpt2-trained').at(-1).text);
  await page.click('#importance-measure');
  await page.waitForFunction(() => !!window.explorer.importance && window.explorer.busy === 0, null, { timeout: 60000 });
  const [layers, heads] = await page.evaluate(() => window.explorer.importance.shape);
  assert.equal(await page.count('#importance-view .importance-cell'), layers * heads);
  // the explorer, where every model panel is (the page around it, with the lesson, is many screens long)
  await page.screenshot('model-gpt2.png', { selector: '#explorer' });
  // the lesson below the explorer is checked at every width and in both themes by
  // accessibility.test.js, and a GPT-2 changes nothing in it
  assert.deepEqual(await runAxe(page, 'the page with a GPT-2 open, head importance measured', { exclude: ['#lesson'] }), []);
  await page.click('#theme-toggle');
  assert.deepEqual(await runAxe(page, 'the same, dark', { exclude: ['#lesson'] }), []);
  await page.click('#theme-toggle');
});

/** The window `width` CSS px wide, the page drawn again for it: what a reader cannot see there (readable.js). */
async function atWidth(width, { skip = null } = {}) {
  await page.setViewport({ width, height: 900 });
  // the page redraws at the frame after a resize
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 50)))));
  await settled(page, 60000);
  return page.evaluate(clippedText, { skip });
}

/** Pick a source (the model source: the GPT-2 opened from files) and wait until it is shown. */
async function pickSource(id) {
  if (id === 'model') return showModel();
  await page.check(`input[name="source"][value="${id}"]`);
  await waitForExplorer(page, (want) => window.explorer.source?.id === want && window.explorer.busy === 0, id, 120000);
}

test('at 390, 768 and 1280 px wide, with each source and a model open: the page is no wider than the window, and no text is cut', { engines: 'all', why: 'layout', timeout: 600_000 }, async () => {
  await page.waitForFunction(() => document.getElementById('lesson')?.dataset.ready === 'true', null, { timeout: 60000 });
  // every formula of the lesson typeset now, not when it scrolls into view
  await page.evaluate(async () => { await (await import('/app/lesson/math.js')).renderAllMath(); });
  const problems = [];
  try {
    for (const source of ['designed', 'random', 'trained', 'pretrained', 'model']) {
      await pickSource(source);
      if (source === 'model') {
        // every panel a model has: its predictions, every layer, and its head importance
        await page.click('#importance-measure');
        await page.waitForFunction(() => !!window.explorer.importance && window.explorer.busy === 0, null, { timeout: 60000 });
      }
      for (const width of [390, 768, 1280]) {
        // the lesson is read whole with the first source and with the model; the sources between
        // change only the explorer and the header (the page's width is still measured whole)
        const r = await atWidth(width, { skip: source === 'designed' || source === 'model' ? null : '#lesson' });
        if (r.innerWidth > width) note(`${source}: asked for ${width} px, the window is ${r.innerWidth} px wide inside (its smallest)`);
        console.log(`  [${ENGINE}] ${source} at ${r.innerWidth} px: the document is ${r.scrollWidth} px wide; ${r.clipped.length} texts cut`);
        if (r.scrollWidth > r.innerWidth) problems.push(`${source} at ${r.innerWidth} px: the page is ${r.scrollWidth} px wide`);
        for (const c of r.clipped) problems.push(`${source} at ${r.innerWidth} px: ${c.what} "${c.text}": ${c.why}`);
        if (source === 'model') {
          await page.evaluate(() => document.getElementById('predictions-panel').scrollIntoView());
          await page.screenshot(`widths-model-${width}.png`);
        }
      }
    }
  } finally {
    await page.setViewport({ width: 1280, height: 900 });
  }
  assert.deepEqual(problems, []);
});

test('128 pieces, the most the pretrained model reads: every token is named on the map\'s axes or when its cell is pointed at, at 390 and 1280 px', { engines: 'all', why: 'input', timeout: 300_000 }, async () => {
  await pickSource('pretrained');
  // short words, added until one more would make the text longer than the model reads
  const text = await page.evaluate(async () => {
    const { encoder, maxTokens } = window.explorer.source;
    const words = 'the cat sat on the mat and the dog ran to the park , but it was late .'.split(' ');
    let text = '';
    for (let k = 0; ; k += 1) {
      const next = `${text} ${words[k % words.length]}`.trim();
      if ((await encoder.tokenize(next)).totalTokens > maxTokens) return text;
      text = next;
    }
  });
  await page.evaluate((t) => window.explorer.selectSentence(t), text);
  await waitForExplorer(page, (t) => window.explorer.sentence?.text === t && window.explorer.busy === 0, text, 60000);
  assert.equal(await page.evaluate(() => window.explorer.sentence.tokens.length), 128);
  try {
    for (const width of [390, 1280]) {
      await atWidth(width);
      for (const [map, said] of [['main-heatmap', '#tooltip'], ['pair-map-a', '#pair-cell']]) {
        await page.scrollIntoView(`#${map}`);
        const named = await page.evaluate(tokensNamed, { map, said });
        console.log(`  [${ENGINE}] ${map} at ${width} px: ${named.tokens} tokens in ${named.cell} px cells; labels drawn: ${named.rowsDrawn} rows, ${named.colsDrawn} columns at ${named.fontSize} px; `
          + `${named.pointedAt} more pointed at, unnamed: ${named.unnamed.length}`);
        assert.equal(named.tokens, 128);
        assert.deepEqual(named.unnamed, [], `${map} at ${width} px: tokens not named`);
      }
    }
    // a real pointer over the main map names the cell under it
    await page.scrollIntoView('#main-heatmap');
    await page.hover('#main-heatmap');
    await page.waitForFunction(() => !document.getElementById('tooltip').hidden, null, { timeout: 10000 });
    assert.match(await page.text('#tooltip'), /“.*” → “.*”: \d\.\d{3}/);
  } finally {
    await page.setViewport({ width: 1280, height: 900 });
  }
});

test('the model view opens a layer and head; the arrow keys move between its maps', { engines: 'all', why: 'input', timeout: 60000 }, async () => {
  await showModel();
  await page.click('#model-grid .model-cell[data-layer="1"][data-head="2"]');
  await waitForExplorer(page, () => window.explorer.layer === 1 && window.explorer.selectedHead === 2 && window.explorer.busy === 0, null, 30000);
  assert.equal(await page.attribute('#model-grid .model-cell[data-layer="1"][data-head="2"]', 'aria-pressed'), 'true');
  assert.equal(await page.evaluate(() => document.getElementById('layer').value), '1');
  // the W_O view draws the model's own head outputs, concatenation and W_O of that layer
  assert.equal(await page.evaluate(() => document.getElementById('wo-view').hidden), false);
  assert.equal(await page.evaluate(() => document.getElementById('wo-missing').hidden), true);
  assert.match(await page.text('#wo-view'), /4 heads × 8 dimensions = 32/);
  // the main map is that head's
  const same = await page.evaluate(() => {
    const x = window.explorer;
    const T = x.sentence.tokens.length;
    const a = x.result.layers[1].data.subarray(2 * T * T, 3 * T * T);
    const b = x.map(2);
    return a.every((v, i) => v === b[i]);
  });
  assert.ok(same, 'the selected head\'s map is layer 1 head 3 of the model view');
  // the arrow keys move between maps
  await page.focus('#model-grid .model-cell[data-layer="1"][data-head="2"]');
  await page.press('#model-grid .model-cell[data-layer="1"][data-head="2"]', 'ArrowUp');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.layer + ':' + document.activeElement?.dataset.head), '0:2');
});

test('a head switched off moves the predictions', { engines: 'chromium', why: 'computation', timeout: 120000 }, async () => {
  await showModel();
  await showSentence(golden('gpt2-trained').at(-1).text);
  await page.selectOption('#layer', '1');
  await waitForExplorer(page, () => window.explorer.layer === 1 && window.explorer.busy === 0, null, 30000);
  // every head of layer 1 off: the prediction moves, and both lists are shown
  await page.evaluate(() => window.explorer.setAblated([0, 1, 2, 3]));
  await page.waitForFunction(() => window.explorer.ablation?.heads.length === 4 && !!window.explorer.ablation.run, null, { timeout: 30000 });
  await page.waitForFunction(() => document.querySelectorAll('#predictions-view .predictions-list').length === 2, null, { timeout: 10000 });
  const moved = await page.evaluate(() => {
    const x = window.explorer;
    const t = x.sentence.tokens.length - 1;
    const on = x.source.predictions(x.sentence.run, t);
    const off = x.source.predictions(x.ablation.run, t);
    return Math.abs(on[0].probability - off[0].probability) > 1e-6 || on[0].id !== off[0].id;
  });
  assert.ok(moved, 'switching off all of layer 1 changed the top prediction');
  assert.match(await page.text('#predictions-view'), /With heads 1, 2, 3, 4 of layer 1 off/);
  await page.evaluate(() => window.explorer.setAblated([]));
});

test('a causal model\'s heads measured by the roles rule: relations whose key comes after the query are not visible to it, not failures', { engines: 'chromium', why: 'computation', timeout: 300000 }, async () => {
  await showModel();
  // its heads measured by the roles rule on the annotated sentences, read by its own tokenizer
  assert.equal(await page.evaluate(() => document.getElementById('roles-panel').hidden), false);
  assert.match(await page.text('#roles-measure-status'), /each read by the model's own tokenizer/);
  const started = Date.now();
  await page.click('#roles-measure');
  await page.waitForFunction(() => !!window.explorer.source.roles && !!document.querySelector('#roles-view table'), null, { timeout: 280000 });
  const measured = await page.evaluate(() => {
    const { roles } = window.explorer.source;
    return {
      heads: roles.heads.length, sentences: roles.corpus.sentences, skipped: roles.corpus.skipped.length, notVisible: Object.keys(roles.rule.notVisible ?? {}),
      columns: [...document.querySelectorAll('#roles-table thead th')].map((th) => th.textContent),
    };
  });
  console.log(`measured in ${((Date.now() - started) / 1000).toFixed(1)} s: ${measured.sentences} sentences; not visible: ${measured.notVisible.join(', ')}; columns ${measured.columns.join(' | ')}`);
  assert.equal(measured.heads, 8);
  assert.ok(measured.sentences > 700, `${measured.sentences} sentences measured (${measured.skipped} left out: longer than the context)`);
  assert.deepEqual(measured.notVisible, ['determinerNoun', 'adjectiveNoun', 'prepositionObject', 'possessiveNoun']);
  // shown as not visible, apart from what its heads do not do; not a column of failures
  const hidden = await page.text('#roles-not-visible');
  assert.match(hidden, /^Not visible to a causal model: determiner → noun, adjective → noun, preposition → object, possessive → noun\. Their key comes after the query/);
  assert.doesNotMatch(await page.text('#roles-summary'), /determiner → noun|adjective → noun|preposition → object/);
  assert.ok(!measured.columns.some((c) => /determiner|adjective|preposition/.test(c)), measured.columns.join(' | '));
  assert.match(await page.text('#roles-measure-status'), /Measured in this page from the weights of the GPT-2-family model/);
  assert.match(await page.text('#head-tabs'), /H1/);
  await page.evaluate(() => document.getElementById('roles-view').scrollIntoView());
  await page.screenshot('model-roles-causal.png', { selector: '#roles-panel' });
});

test('a model without model.safetensors gets a message naming the file, and the page keeps working', { engines: 'all', why: 'files', timeout: 60000 }, async () => {
  await showModel();
  const before = await page.evaluate(() => window.explorer.source.opened?.stamp);
  await page.setInputFiles('#model-files', files('gpt2-trained', ['config.json', 'tokenizer.json']));
  await page.waitForFunction(() => !document.getElementById('source-error').hidden, null, { timeout: 30000 });
  assert.match(await page.text('#source-error'), /model\.safetensors/);
  assert.equal(await page.evaluate(() => window.explorer.source.opened?.stamp), before, 'the model shown stays');
  // still computing
  await showSentence('Still working after a bad file.');
  await page.click('input[name="source"][value="designed"]');
  await waitForExplorer(page, () => window.explorer.source?.id === 'designed' && window.explorer.busy === 0, null, 30000);
  await page.flushEvents();
  assert.deepEqual(consoleErrors, []);
});

test('every other bad file gets a message naming the file, and the page keeps working', { engines: 'chromium', why: 'faults', timeout: 120000 }, async () => {
  await showModel();
  const before = await page.evaluate(() => window.explorer.source.opened?.stamp);
  const damaged = readFileSync(path.join(models, 'gpt2-trained', 'config.json'), 'utf8').replace('"n_head":4', '"n_head":3');
  await page.setInputFiles('#model-files', [{ name: 'config.json', buffer: Buffer.from(damaged) }, ...files('gpt2-trained', ['model.safetensors', 'tokenizer.json'])]);
  await page.waitForFunction(() => /config\.json|n_head/.test(document.getElementById('source-error').textContent), null, { timeout: 30000 });
  assert.match(await page.text('#source-error'), /n_head|config\.json/);
  const tokenizer = readFileSync(path.join(models, 'gpt2-trained', 'tokenizer.json'), 'utf8');
  await page.setInputFiles('#model-files', [...files('gpt2-trained', ['config.json', 'model.safetensors']), { name: 'tokenizer.json', buffer: Buffer.from(tokenizer.slice(0, tokenizer.length >> 1)) }]);
  await page.waitForFunction(() => /tokenizer\.json/.test(document.getElementById('source-error').textContent), null, { timeout: 30000 });
  assert.equal(await page.evaluate(() => window.explorer.source.opened?.stamp), before, 'the model shown stays after a damaged tokenizer.json');
  // a model without tokenizer.json opens, but the page cannot read text with it: said, and let go
  await page.setInputFiles('#model-files', files('gpt2-trained', ['config.json', 'model.safetensors']));
  await page.waitForFunction(() => /has no tokenizer\.json/.test(document.getElementById('source-error').textContent) && window.explorer.busy === 0, null, { timeout: 30000 });
  assert.equal(await page.evaluate(() => window.explorer.opened?.stamp), before, 'the model opened before is still the one offered');
  // still computing
  await showSentence('Still working after a bad file.');
  await page.click('input[name="source"][value="designed"]');
  await waitForExplorer(page, () => window.explorer.source?.id === 'designed' && window.explorer.busy === 0, null, 30000);
  assert.deepEqual(consoleErrors, []);
});

// Last of the tests that show a model opened from files: the model source shows nanoGPT after it.
test('a BERT and a nanoGPT export open from files; BERT predicts at [MASK]', { engines: 'chromium', why: 'computation', timeout: 120000 }, async () => {
  await showModel();
  const gpt2 = await page.evaluate(() => window.explorer.source.opened?.stamp);
  await page.setInputFiles('#model-files', files('bert-mlm'));
  await waitForExplorer(page, (stamp) => window.explorer.source?.id === 'model' && window.explorer.source.opened?.stamp !== stamp && window.explorer.busy === 0, gpt2, 60000);
  assert.equal(await page.evaluate(() => window.explorer.source.config.task), 'masked');
  const [run] = golden('bert-mlm');
  await showSentence(run.text);
  const shown = await shownLayers();
  assert.deepEqual(shown.ids, run.ids);
  const worst = maxDifference(shown.layers, run.attentions);
  assert.ok(worst <= WEIGHTS_TOLERANCE, `BERT weights differ from PyTorch by ${worst}`);
  assert.equal(await page.evaluate(() => document.getElementById('importance-panel').hidden), true, 'no head importance without a next token');
  assert.equal(await page.evaluate(() => document.getElementById('predictions-panel').hidden), false);
  assert.match(await page.text('#predictions-view'), /In the place of/);
  await page.screenshot('model-bert.png', { selector: '#explorer' });
  assert.deepEqual(await runAxe(page, 'the page with a BERT open', { exclude: ['#lesson'] }), []);

  const bert = await page.evaluate(() => window.explorer.source.opened.stamp);
  await page.setInputFiles('#model-files', files('nanogpt-char'));
  await waitForExplorer(page, (stamp) => window.explorer.source?.id === 'model' && window.explorer.source.opened?.stamp !== stamp && window.explorer.busy === 0, bert, 60000);
  assert.equal(await page.evaluate(() => window.explorer.source.config.task), 'next-token');
  const [nano] = golden('nanogpt-char');
  await showSentence(nano.text);
  const n = await shownLayers();
  assert.deepEqual(n.ids, nano.ids);
  assert.ok(maxDifference(n.layers, nano.attentions) <= WEIGHTS_TOLERANCE);
});

test('the example model from a URL, and <mha-explorer model-url>', { engines: 'all', why: 'end-to-end', timeout: 120000 }, async () => {
  await page.click('#model-example');
  await waitForExplorer(page, () => window.explorer.source?.id === 'model' && !!window.explorer.source.url && window.explorer.busy === 0, null, 60000);
  assert.match(await page.text('#model-name'), /gpt2-lesson/);
  // fetched from the page's server, not read from the user's files
  const note = await page.text('#source-note');
  assert.ok(note.includes(`Its files were fetched from ${server.url}examples/models/gpt2-lesson/.`), note);
  assert.doesNotMatch(note, /your files|files you opened|nothing was uploaded/);
  await page.evaluate(async () => {
    await import('/element/mha-explorer.js');
    const element = document.createElement('mha-explorer');
    element.id = 'model-element';
    element.setAttribute('model-url', '/examples/models/gpt2-lesson/');
    element.setAttribute('sentence', 'the king follows himself.');
    element.setAttribute('layer', '1');
    element.setAttribute('view', 'grid');
    document.body.append(element);
  });
  await page.waitForFunction(() => document.getElementById('model-element')?.status === 'ready', null, { timeout: 60000 });
  const result = await page.evaluate(() => {
    const r = document.getElementById('model-element').result;
    return { source: r.source, numHeads: r.numHeads, tokens: r.tokens, data: Array.from(r.weights.data) };
  });
  const [run] = golden('gpt2-trained');
  assert.equal(result.source, 'model');
  const expected = run.attentions[1].flat(Infinity);
  assert.equal(result.data.length, expected.length);
  const worst = result.data.reduce((w, v, i) => Math.max(w, Math.abs(v - expected[i])), 0);
  assert.ok(worst <= WEIGHTS_TOLERANCE, `the element's layer 1 differs from PyTorch by ${worst}`);
  await page.evaluate(() => new Promise((resolve) => {
    document.getElementById('model-element').scrollIntoView();
    requestAnimationFrame(() => requestAnimationFrame(resolve));
  }));
  await page.screenshot('model-element.png', { selector: '#model-element' });
  await page.evaluate(() => document.getElementById('model-element').remove());
  assert.deepEqual(consoleErrors, []);
});

/** <mha-explorer model-url> of a model `name` served from another origin, at `layer`: its weights against PyTorch's. */
async function elementLayer(name, layer) {
  const [run] = golden(name);
  await page.evaluate(async ({ url, text, layer: l }) => {
    await import('/element/mha-explorer.js');
    document.getElementById('model-element')?.remove();
    const element = document.createElement('mha-explorer');
    element.id = 'model-element';
    element.setAttribute('model-url', url);
    element.setAttribute('sentence', text);
    element.setAttribute('layer', String(l));
    document.body.append(element);
  }, { url: `${modelServer.url}${name}/`, text: run.text, layer });
  await page.waitForFunction(() => ['ready', 'error'].includes(document.getElementById('model-element')?.status), null, { timeout: 60000 });
  const shown = await page.evaluate(() => {
    const element = document.getElementById('model-element');
    const r = element.result;
    return { status: element.status, error: element.shadowRoot.textContent.slice(0, 300), data: r ? Array.from(r.weights.data) : null };
  });
  assert.equal(shown.status, 'ready', `${name} layer ${layer}: ${shown.error}`);
  const expected = run.attentions[layer].flat(Infinity);
  assert.equal(shown.data.length, expected.length);
  const worst = shown.data.reduce((w, v, i) => Math.max(w, Math.abs(v - expected[i])), 0);
  console.log(`  ${name} layer ${layer} in the element: max |element − PyTorch| = ${worst.toExponential(2)} (tolerance ${WEIGHTS_TOLERANCE})`);
  assert.ok(worst <= WEIGHTS_TOLERANCE, `${name} layer ${layer} in the element differs from PyTorch by ${worst}`);
}

test('<mha-explorer model-url> of a BERT on another site: its first layer as PyTorch computes it', { engines: 'all', why: 'network', timeout: 60000 }, async () => {
  await elementLayer('bert-mlm', 0);
  await page.evaluate(() => document.getElementById('model-element').remove());
  await page.flushEvents();
  assert.deepEqual(consoleErrors, []);
});

test('<mha-explorer model-url> of a BERT and a nanoGPT export on another site: every layer as PyTorch computes it', { engines: 'chromium', why: 'computation', timeout: 120000 }, async () => {
  for (const name of ['bert-mlm', 'nanogpt-char']) {
    const layers = golden(name)[0].attentions.length;
    // BERT's first layer is the test above's
    for (let layer = name === 'bert-mlm' ? 1 : 0; layer < layers; layer += 1) await elementLayer(name, layer);
  }
  await page.evaluate(() => document.getElementById('model-element').remove());
  assert.deepEqual(consoleErrors, []);
});

/** What a course site on its own origin sends, with the package on a CDN and models elsewhere (docs/element.md). */
const coursePolicy = (cdn, models) => `default-src 'self'; script-src 'self' ${cdn} 'wasm-unsafe-eval'; ` +
  `worker-src blob: ${cdn}; connect-src 'self' ${cdn} ${models}; style-src 'self'`;

test('a course page on one origin, the package from a CDN on another, a model from a third: designed heads and the model, with and without worker="never"', { engines: 'all', why: 'network', timeout: 180000 }, async () => {
  // A fresh page on an origin of its own is the point. The CDN serves web/ as the package's
  // files are laid out, and lets any origin read them, as CDNs serving npm packages do.
  const cdn = await serve({ root: path.join(root, 'web'), headers: { 'Access-Control-Allow-Origin': '*', 'Cross-Origin-Resource-Policy': 'cross-origin' } });
  const site = mkdtempSync(path.join(tmpdir(), 'mha-course-'));
  const origin = (url) => new URL(url).origin;
  const policy = coursePolicy(origin(cdn.url), origin(modelServer.url));
  const [run] = golden('gpt2-trained');
  const modelUrl = `${modelServer.url}gpt2-trained/`;
  writeFileSync(path.join(site, 'index.html'), `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A course page</title>
<script type="module" src="${cdn.url}element/mha-explorer.js"></script></head>
<body><h1>Attention, from a CDN</h1>
<mha-explorer id="designed-never" worker="never" view="grid"></mha-explorer>
<mha-explorer id="model-never" worker="never" model-url="${modelUrl}" sentence="${run.text}"></mha-explorer>
</body></html>`);
  const course = await serve({ root: site, headers: { 'Content-Security-Policy': policy } });
  const isolated = await serve({ root: site, headers: { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' } });
  const coursePage = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const problems = [];
  coursePage.on('consoleError', (text, url) => { if (!(url || '').endsWith('/favicon.ico')) problems.push(`${text} (${url || 'no url'})`); });
  coursePage.on('pageError', (message) => problems.push(`page error: ${message}`));
  try {
    // every worker the page starts, and every CSP violation, recorded before its scripts run
    await coursePage.addInitScript((key) => {
      const record = { workers: [], violations: [] };
      Object.defineProperty(window, Symbol.for(key), { value: record });
      document.addEventListener('securitypolicyviolation', (e) => record.violations.push(`${e.violatedDirective} blocked ${e.blockedURI}`));
      const Native = window.Worker;
      window.Worker = class extends Native {
        constructor(url, options) {
          super(url, options);
          record.workers.push(String(url));
        }
      };
    }, 'mha-course-probe');
    const record = () => coursePage.evaluate(() => window[Symbol.for('mha-course-probe')]);
    const settled = () => [...document.querySelectorAll('mha-explorer')].every((e) => e.status === 'ready' || e.status === 'error');
    const shown = () => coursePage.evaluate(() => Object.fromEntries([...document.querySelectorAll('mha-explorer')].map((e) => [e.id, {
      status: e.status, message: e.shadowRoot.querySelector('.status').textContent, source: e.result?.source,
      heads: e.result?.numHeads, worker: e.result?.worker, weights: e.result ? Array.from(e.result.weights.data) : null,
    }])));
    const expected = run.attentions[0].flat(Infinity);
    const worstOf = (weights) => weights.reduce((w, v, i) => Math.max(w, Math.abs(v - expected[i])), 0);

    await coursePage.goto(course.url);
    await coursePage.waitForFunction(settled, null, { timeout: 120000 });
    let state = await shown();
    for (const [id, s] of Object.entries(state)) assert.equal(s.status, 'ready', `${id}: ${s.message}`);
    assert.deepEqual([state['designed-never'].source, state['designed-never'].heads], ['designed', 8]);
    assert.equal(state['model-never'].source, 'model');
    assert.equal(state['model-never'].weights.length, expected.length);
    const never = worstOf(state['model-never'].weights);
    assert.ok(never <= WEIGHTS_TOLERANCE, `the model with worker="never" differs from PyTorch by ${never}`);
    assert.deepEqual((await record()).workers, [], 'worker="never": no worker was started, the model included');

    // the same page's elements that compute in workers: the core's worker, the model's and its tokenizer's
    await coursePage.evaluate(({ url, text }) => {
      const designed = Object.assign(document.createElement('mha-explorer'), { id: 'designed-always' });
      designed.setAttribute('worker', 'always');
      const model = Object.assign(document.createElement('mha-explorer'), { id: 'model-auto' });
      model.setAttribute('model-url', url);
      model.setAttribute('sentence', text);
      document.body.append(designed, model);
    }, { url: modelUrl, text: run.text });
    await coursePage.waitForFunction(settled, null, { timeout: 120000 });
    state = await shown();
    for (const [id, s] of Object.entries(state)) assert.equal(s.status, 'ready', `${id}: ${s.message}`);
    assert.equal(state['designed-always'].worker, true, 'worker="always": the designed heads were computed in a worker');
    const auto = worstOf(state['model-auto'].weights);
    assert.ok(auto <= WEIGHTS_TOLERANCE, `the model in its worker differs from PyTorch by ${auto}`);
    const { workers, violations } = await record();
    console.log(`  ${ENGINE}: package from ${origin(cdn.url)}, page on ${origin(course.url)}, model on ${origin(modelServer.url)}; ` +
      `model max |element − PyTorch| ${never.toExponential(2)} (worker="never"), ${auto.toExponential(2)} (in its worker); workers started: ${workers.map((u) => u.split(':')[0]).join(', ')}`);
    assert.equal(workers.length, 3, `one worker for the core, one for the model, one for its tokenizer: ${workers.join(', ')}`);
    assert.ok(workers.every((u) => u.startsWith(`blob:${origin(course.url)}/`)), `each started through a blob: module of the page: ${workers.join(', ')}`);
    assert.deepEqual(violations, [], `no Content-Security-Policy violation under ${policy}`);
    await coursePage.scrollIntoView('#model-auto');
    await coursePage.screenshot('course-page-cdn.png', { fullPage: true });

    // A crossOriginIsolated course page: the pthreads core cannot start its threads from the
    // CDN's URL, so the single-thread core is loaded, and threads: true says why.
    await coursePage.goto(`${isolated.url}${BLANK_PAGE}`);
    const threads = await coursePage.evaluate(async (url) => {
      const api = await import(url);
      const mha = await api.loadMha();
      const refused = await api.loadMha({ threads: true }).then(() => 'loaded', (e) => e.message);
      return { isolated: crossOriginIsolated, available: api.threadsAvailable(), threads: mha.threads, refused };
    }, `${cdn.url}lib/index.js`);
    console.log(`  crossOriginIsolated course page: ${JSON.stringify(threads)}`);
    assert.deepEqual({ ...threads, refused: undefined }, { isolated: true, available: false, threads: 1, refused: undefined });
    assert.match(threads.refused, /needs the package's files on this page's origin/);
    await coursePage.flushEvents();
    assert.deepEqual(problems, []);
  } finally {
    await coursePage.close();
    await Promise.all([cdn.close(), course.close(), isolated.close()]);
    rmSync(site, { recursive: true, force: true });
  }
});
