// The head detectors' tables in the page (web/views/detectors.js), one page load for the file:
// the two-layer GPT-2 trained to have an induction head (tests/golden/models/gpt2-induction,
// scripts/reference/train_induction.py) picked as files, then its random initialisation
// (gpt2-induction-random). "Find the heads" runs the detectors in the page: in the trained model
// they name its induction head (layer 1) and, in layer 0, the previous-token head it reads, and
// nothing in the random twin; a click on a cell opens that head. Beside the tables, every head's
// three scores on the text in view, checked here against the weights of the page's own run. One
// end-to-end pass of a model's files through the detectors, so it runs in every engine.
//
//   MHA_BROWSER=firefox node --test tests/browser/detectors.test.js

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { ENGINE, startWeb, stopWeb, test } from './driver.js';
import { attachExplorer, waitForExplorer } from './page-state.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const filesOf = (name) => ['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => path.join(root, 'tests', 'golden', 'models', name, f));

let server;
let browser;
let page;
const consoleErrors = [];

before(async () => {
  ({ server, browser } = await startWeb({ needs: ['web/lib/wasm/mha_core.wasm', 'web/lib/wasm/mha_models.js', 'web/lib/wasm/mha_models.wasm'] }));
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

after(() => stopWeb({ server, browser }));

/** Pick a model's files and wait until it is shown with its first text. */
async function pickModel(name) {
  await page.evaluate(() => { window.sourceBefore = window.explorer.source; });
  await page.setInputFiles('#model-files', filesOf(name));
  await waitForExplorer(page, () => window.explorer.source?.id === 'model' && window.explorer.source !== window.sourceBefore && window.explorer.busy === 0, null, 60000);
}

/** Run the detectors on the model shown; their heads. */
async function findHeads() {
  await page.evaluate(() => { window.explorer.detectors = null; });
  await page.click('#detectors-run');
  await waitForExplorer(page, () => !!window.explorer.detectors && window.explorer.busy === 0, null, 120000);
  return page.evaluate(() => ({ heads: window.explorer.detectors.heads, ms: window.explorer.detectors.ms }));
}

/**
 * The text table's cells against the mul scores worked out here from the weights of the page's
 * run of the text (column 0 left out): [{ layer, head, shown, computed }].
 */
function textScoresByHand() {
  const { ids, run } = window.explorer.sentence;
  const T = ids.length;
  const out = [];
  run.layers.forEach((layer, l) => {
    const [H] = layer.weights.shape;
    for (let h = 0; h < H; ++h) {
      const a = layer.weights.data.subarray(h * T * T, (h + 1) * T * T);
      let all = 0; let prev = 0; let dup = 0; let ind = 0;
      for (let i = 0; i < T; ++i) {
        for (let j = 1; j <= i; ++j) {
          all += a[i * T + j];
          if (j === i - 1) prev += a[i * T + j];
          if (j < i && ids[j] === ids[i]) dup += a[i * T + j];
          if (ids[j - 1] === ids[i]) ind += a[i * T + j];
        }
      }
      const cell = document.querySelector(`#detector-text .detector-cell[data-layer="${l}"][data-head="${h}"]`);
      const shown = cell ? [...cell.querySelectorAll('.text-score')].map((s) => s.textContent) : null;
      out.push({ layer: l, head: h, shown, computed: [`prev ${(prev / all).toFixed(2)}`, `dup ${(dup / all).toFixed(2)}`, `ind ${(ind / all).toFixed(2)}`], induction: ind / all });
    }
  });
  return out;
}

test('the model trained on repeated tokens: the detectors name its induction head, and the text in view shows it at work; its random twin: nothing named', { engines: 'all', why: 'end-to-end', timeout: 300000 }, async () => {
  assert.equal(await page.evaluate(() => document.getElementById('detectors-panel').hidden), true, 'no detectors for the designed heads');
  await pickModel('gpt2-induction');
  assert.equal(await page.evaluate(() => document.getElementById('detectors-panel').hidden), false);

  // a text that repeats itself, after <|endoftext|> as the model was trained: the scores on it
  const text = '<|endoftext|>QWERTYUIOPASDFGHJKLZXCVBNMQWERTYUIOPASDFGHJKLZXCVBNM';
  await page.evaluate((t) => window.explorer.selectSentence(t), text);
  await waitForExplorer(page, (t) => window.explorer.sentence?.text === t && window.explorer.busy === 0, text, 60000);
  let onText = await page.evaluate(textScoresByHand);
  for (const e of onText) assert.deepEqual(e.shown, e.computed, `layer ${e.layer} head ${e.head} on the text`);

  const trained = await findHeads();
  const best = trained.heads.reduce((a, b) => (b.induction > a.induction ? b : a));
  console.log(`  [${ENGINE}] trained: detectors in ${Math.round(trained.ms)} ms; named ${JSON.stringify(trained.heads.filter((h) => h.label).map((h) => `${h.layer}.${h.head} ${h.label} ${h[h.label].toFixed(3)}`))}`);
  const induction = trained.heads.filter((h) => h.label === 'induction');
  assert.ok(induction.length >= 1, `an induction head named: ${JSON.stringify(trained.heads)}`);
  for (const h of induction) {
    assert.equal(h.layer, 1, 'the induction head reads layer 0\'s output');
    assert.ok(h.induction >= 0.4 && h.induction > h.control.induction);
  }
  assert.equal(best.label, 'induction');
  assert.deepEqual(trained.heads.filter((h) => h.label === 'previousToken').map((h) => h.layer), [0], 'the previous-token head it reads is in layer 0');
  const cell = `#detector-induction .detector-cell[data-layer="1"][data-head="${best.head}"]`;
  assert.equal(await page.count(`${cell}.named`), 1);
  assert.equal(await page.text(cell), `${best.induction.toFixed(2)}ctrl ${best.control.induction.toFixed(2)}induction`);
  assert.match(await page.text('#detectors-summary'), new RegExp(`layer 1 head ${best.head + 1} \\(induction, ${best.induction.toFixed(2)}\\)`));
  // on the text in view, the same head finishes the repeat
  const seen = onText.find((e) => e.layer === 1 && e.head === best.head);
  console.log(`  [${ENGINE}] induction head ${best.layer}.${best.head} on the text: ${seen.computed.join(', ')}`);
  assert.ok(seen.induction >= 0.4, `induction score on the repeated text ${seen.induction}`);
  await page.screenshot('detectors-tables.png', { selector: '#detectors-panel' });

  // a click opens that head
  await page.click(cell);
  await waitForExplorer(page, (h) => window.explorer.layer === 1 && window.explorer.selectedHead === h && window.explorer.busy === 0, best.head, 30000);
  assert.equal(await page.evaluate((s) => document.querySelector(s).getAttribute('aria-pressed'), cell), 'true');

  // the random twin, on the same text: nothing named
  await pickModel('gpt2-induction-random');
  await page.evaluate((t) => window.explorer.selectSentence(t), text);
  await waitForExplorer(page, (t) => window.explorer.sentence?.text === t && window.explorer.busy === 0, text, 60000);
  onText = await page.evaluate(textScoresByHand);
  for (const e of onText) assert.deepEqual(e.shown, e.computed, `random: layer ${e.layer} head ${e.head} on the text`);
  const random = await findHeads();
  console.log(`  [${ENGINE}] random: highest induction score ${Math.max(...random.heads.map((h) => h.induction)).toFixed(3)}`);
  assert.deepEqual(random.heads.filter((h) => h.label), []);
  assert.match(await page.text('#detectors-summary'), /^No head is named/);
  for (const name of ['previousToken', 'duplicateToken', 'induction']) {
    assert.equal(await page.count(`#detector-${name} .detector-cell`), random.heads.length);
    assert.equal(await page.count(`#detector-${name} .detector-cell.named`), 0);
  }
  assert.deepEqual(consoleErrors, []);
});
