// The explorer's "trained" source in a real browser (each engine of tests/browser/driver.js),
// served by scripts/serve/serve.js on a free port, one page for the file. In every engine: picking it
// shows the grammar's sentences, and the maps the page draws for the first one equal what
// web/lib/train.js returns for the same sentence (to 1e-6), its statistics are the core's
// headStatistics of those maps; leaving it brings the other sources back unchanged; no console
// errors. In Chromium only (the numbers do not depend on the engine): the same on layer 1 and on
// another head and sentence, the head names against the measured heads x relations table, typed
// text, and unknown words named. Screenshot: build/screenshots/<engine>/ with MHA_SCREENSHOTS=all.
//
//   node --test tests/browser/trained-source.test.js

import { after, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { startWeb, stopWeb, test } from './driver.js';
import { attachExplorer, resetExplorer, waitForExplorer } from './page-state.js';
import { EXAMPLES } from '../../web/sources/examples.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const webRoot = path.join(root, 'web');
const TOLERANCE = 1e-6;

let server;
let browser;
let page;
const consoleErrors = [];

before(async () => {
  ({ server, browser } = await startWeb({ needs: ['web/lib/wasm/mha_core.js', 'web/lib/wasm/mha_core.wasm', 'web/lib/wasm/mha_train.js', 'web/lib/wasm/mha_train.wasm', 'web/sources/weights/trained-seed1.bin'] }));
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('consoleError', (text, url) => {
    if (/\/app\/lesson\/index\.js$/.test(url || '') && !existsSync(path.join(webRoot, 'app', 'lesson', 'index.js'))) return;
    consoleErrors.push(`${text} (${url || 'no url'})`);
  });
  page.on('pageError', (message) => consoleErrors.push(`page error: ${message}`));
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.status === 'ok' || document.body.dataset.status === 'error', null, { timeout: 30000 });
  assert.equal(await page.evaluate(() => document.body.dataset.status), 'ok', `page status: ${await page.text('#status')}`);
  await attachExplorer(page);
});

after(() => stopWeb({ server, browser }));

beforeEach(() => resetExplorer(page, 60000));

/**
 * The reference: web/lib/train.js with the shipped weights, in the same page but its own session
 * (window.__trainedReference), made the first time a test asks; with `roles`, also the heads
 * measured by the one rule (web/roles/) on it.
 */
async function reference({ roles = false } = {}) {
  await page.evaluate(async (withRoles) => {
    if (!window.__trainedReference) {
      const { loadTrainer } = await import('/lib/train.js');
      const { loadMha } = await import('/lib/index.js');
      const trainer = await loadTrainer({ seed: 1, heldOut: 300 });
      trainer.loadWeights(new Uint8Array(await (await fetch('/sources/weights/trained-seed1.bin')).arrayBuffer()));
      window.__trainedReference = { trainer, mha: await loadMha(), roles: null };
      window.__views = await import('/views/heatmap.js');
    }
    const r = window.__trainedReference;
    if (withRoles && !r.roles) {
      const { trainedRoles } = await import('/roles/measure.js');
      const { labelName } = await import('/roles/vocabulary.js');
      Object.assign(r, { roles: await trainedRoles(r.trainer), labelName });
    }
  }, roles);
}

/** Pick the trained source and wait until it is shown. */
async function showTrained() {
  await page.check('input[name="source"][value="trained"]');
  await waitShown(() => window.explorer.source.id === 'trained');
}

async function waitShown(predicate) {
  await waitForExplorer(page, predicate, null, 60000);
}

/** What the page shows against what train.js and the core compute for the same sentence. */
async function compareWithReference(label) {
  const r = await page.evaluate(() => {
    const x = window.explorer;
    const { trainer, mha } = window.__trainedReference;
    const { drawnOn } = window.__views;
    const snap = { layer: x.source.layer, words: x.sentence.grammar.words };
    const text = snap.words.filter((w) => w !== '<bos>').join(' ');
    const sentence = trainer.parse(text);
    const maps = trainer.attention(sentence);
    const [, H, T] = maps.shape;
    const size = H * T * T;
    const layer = maps.data.slice(snap.layer * size, (snap.layer + 1) * size);
    const shown = (id) => Array.from(drawnOn(document.getElementById(id)).values);
    const drawn = { 'main-heatmap': shown('main-heatmap'), 'pair-map-a': shown('pair-map-a'), 'pair-map-b': shown('pair-map-b') };
    document.querySelectorAll('#small-multiples canvas').forEach((c, h) => { drawn[`multiple-${h}`] = Array.from(drawnOn(c).values); });
    let maxMap = 0;
    const selected = x.selectedHead;
    const check = (values, h) => {
      if (values.length !== T * T) return Infinity;
      let m = 0;
      for (let k = 0; k < T * T; k += 1) m = Math.max(m, Math.abs(values[k] - layer[h * T * T + k]));
      return m;
    };
    maxMap = Math.max(maxMap, check(drawn['main-heatmap'], selected));
    for (let h = 0; h < H; h += 1) maxMap = Math.max(maxMap, check(drawn[`multiple-${h}`], h));
    const { pair } = x;
    maxMap = Math.max(maxMap, check(drawn['pair-map-a'], pair.a), check(drawn['pair-map-b'], pair.b));
    const stats = mha.headStatistics({ data: layer, shape: [H, T, T] }).heads;
    const pageStats = x.result.stats;
    let maxStat = 0;
    for (let h = 0; h < H; h += 1) {
      for (const key of ['entropy', 'sparsity', 'maxAttention', 'averageAttention']) maxStat = Math.max(maxStat, Math.abs(stats[h][key] - pageStats[h][key]));
    }
    return { T, H, layer: snap.layer, text, pageWords: snap.words, refWords: sentence.words, maxMap, maxStat, source: x.source.id, tokens: x.sentence.tokens.map((t) => t.text),
      tags: x.sentence.tokens.map((t) => t.tag), categories: sentence.tokens.map((id) => trainer.categories[id]) };
  });
  console.log(`${label}: layer ${r.layer}, ${r.T} tokens, ${r.H} heads: max |page − train.js| = ${r.maxMap.toExponential(2)} (tolerance ${TOLERANCE}); statistics max |page − core| = ${r.maxStat.toExponential(2)} (tolerance ${TOLERANCE})`);
  assert.equal(r.source, 'trained');
  assert.equal(r.H, 8);
  assert.deepEqual(r.pageWords, r.refWords, 'the page and train.js read the same words');
  assert.deepEqual(r.tokens, r.refWords, 'the token strip shows the words the model sees');
  // The strip's tags follow the core's word categories (Trainer.categories).
  const TAG = { special: 'BOS', determiner: 'DET', noun: 'NOUN', verb: 'VERB', pronoun: 'PRON', connective: 'CONJ', time: 'TIME', end: 'PUNCT' };
  r.categories.forEach((category, i) => {
    assert.ok(category, `word ${i} "${r.refWords[i]}" has a category`);
    assert.notEqual(r.tags[i], 'WORD', `word ${i} "${r.refWords[i]}" (${category}) has a tag`);
    if (TAG[category]) assert.equal(r.tags[i], TAG[category], `word ${i} "${r.refWords[i]}" is a ${category}`);
  });
  assert.ok(r.categories.includes('noun') && r.categories.includes('verb'), `the sentence has a noun and a verb: ${r.categories.join(' ')}`);
  assert.ok(r.maxMap <= TOLERANCE, `maps: max error ${r.maxMap} > ${TOLERANCE}`);
  assert.ok(r.maxStat <= TOLERANCE, `statistics: max error ${r.maxStat} > ${TOLERANCE}`);
  return r;
}

/** Tab names against the one rule (web/roles/), computed here on the reference trainer. */
async function checkHeadNames() {
  const r = await page.evaluate(() => {
    const { roles, labelName } = window.__trainedReference;
    const layer = window.explorer.source.layer;
    const tabs = [...document.querySelectorAll('#head-tabs .tab-name')].map((n) => n.textContent);
    const expected = tabs.map((_, h) => {
      const e = roles.heads.find((x) => x.layer === layer && x.head === h);
      return { name: labelName(e.label), kind: e.kind, relation: e.kind === 'relation' ? e.relations[e.label] : null };
    });
    return { layer, tabs, expected, note: document.getElementById('source-note').textContent };
  });
  r.tabs.forEach((name, h) => {
    const e = r.expected[h];
    console.log(`  layer ${r.layer} H${h + 1}: "${name}" (the rule: ${e.name})`);
    assert.equal(name, e.name, `H${h + 1} carries the rule's label`);
    if (e.relation) assert.ok(e.relation.ci[0] > e.relation.baseline.score, 'a relation label beats its strongest baseline');
  });
  const named = r.expected.filter((e) => e.kind === 'role' || e.kind === 'relation').length;
  assert.match(r.note, named ? new RegExp(`${named} of 8 heads named`) : /none of its 8 heads clears a bar/);
}

test('the trained source shows train.js maps and the core statistics', { engines: 'all', why: 'end-to-end', timeout: 120_000 }, async () => {
  await reference();
  await showTrained();
  const listed = await page.$$eval('#sentence-list [role="radio"]', (b) => b.map((x) => x.textContent));
  assert.ok(listed.length >= 4, `expected grammar sentences as examples, got ${listed.length}`);
  assert.ok(!listed.includes(EXAMPLES[0].text), 'the explorer examples are replaced while the trained source is selected');
  await compareWithReference('grammar example 1');
  await page.screenshot('explorer-trained.png', { selector: '#explorer' });
});

test('the trained source on layer 1 and another head and sentence; its heads named by the one rule', { engines: 'chromium', why: 'computation', timeout: 120_000 }, async () => {
  await reference({ roles: true });
  await showTrained();
  await checkHeadNames();
  await page.selectOption('#layer', '1');
  await waitShown(() => window.explorer.source.layer === 1);
  await compareWithReference('grammar example 1');
  await checkHeadNames();
  await page.click('#head-tab-3');
  await page.click('#sentence-list [role="radio"]:nth-child(3)');
  await waitShown(() => window.explorer.selectedHead === 3 && document.querySelectorAll('#sentence-list [aria-checked="true"]')[0]?.textContent === window.explorer.sentence.text);
  await compareWithReference('grammar example 3');
});

test('typed text in the grammar\'s words is shown; unknown words are named', { engines: 'chromium', why: 'validation', timeout: 60_000 }, async () => {
  await reference();
  await showTrained();
  await page.fill('#free-text', 'each man likes these women so they are late . again each man');
  await page.press('#free-text', 'Enter');
  await waitShown(() => window.explorer.sentence.text === 'each man likes these women so they are late . again each man');
  await compareWithReference('typed sentence');
  await page.fill('#free-text', 'some dog sees the <b>cat</b> and blah');
  await page.press('#free-text', 'Enter');
  await page.waitForSelector('#free-text-error:not([hidden])');
  const message = await page.text('#free-text-error');
  console.log(`unknown words message: ${message.slice(0, 120)}…`);
  for (const word of ['“some”', '“<b>cat</b>”', '“and”', '“blah”']) assert.ok(message.includes(word), `expected ${word} named in: ${message}`);
  assert.ok(!message.includes('“dog”') && !message.includes('“sees”') && !message.includes('“the”'), 'known words are not called unknown');
  assert.equal(await page.$$eval('#free-text-error b', (n) => n.length), 0, 'typed text stays text');
  assert.equal(await page.evaluate(() => window.explorer.sentence.text), 'each man likes these women so they are late . again each man', 'the last good sentence stays shown');
});

test('leaving the trained source brings the explorer back unchanged; no console errors', { engines: 'all', why: 'errors', timeout: 60_000 }, async () => {
  await showTrained();
  await page.click('#sentence-list [role="radio"]:nth-child(2)');
  await waitShown(() => window.explorer.sentence.example === 1);
  await page.check('input[name="source"][value="designed"]');
  await waitShown(() => window.explorer.source.id === 'designed' && window.explorer.sentence.text === document.querySelector('#sentence-list [aria-checked="true"]')?.textContent);
  const back = await page.evaluate(() => ({ sentence: window.explorer.sentence.text, tabs: [...document.querySelectorAll('#head-tabs .tab-name')].map((n) => n.textContent), input: window.explorer.sentence.features.length }));
  console.log(`back to designed: "${back.sentence}", heads ${back.tabs.join(', ')}`);
  assert.equal(back.sentence, EXAMPLES[0].text);
  assert.equal(back.tabs.length, 8);
  assert.ok(!back.tabs.includes('diffuse'));
  assert.ok(back.input > 0);
  assert.match(await page.text('#free-text-help'), /part-of-speech tagger/, 'the free-text help of the other sources is back');
  await page.flushEvents();
  assert.deepEqual(consoleErrors, [], `console errors: ${consoleErrors.join('\n')}`);
});
