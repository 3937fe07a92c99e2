// The head detectors' tables in the page (web/views/detectors.js), one page for the file: the
// two-layer GPT-2 at its random initialisation (tests/golden/models/gpt2-induction-random)
// picked as files; "Find the heads" runs the detectors in the page, a table per detector shows
// every head's score over its control, nothing is named, and a click on a cell opens that head in
// the explorer. The scores are the ones `npm run heads` prints (the same code;
// tests/js/detectors.test.js checks them), so they do not depend on the engine: Chromium only.
//
//   node --test tests/browser/detectors.test.js

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { ENGINE, startWeb, stopWeb, test } from './driver.js';
import { attachExplorer, waitForExplorer } from './page-state.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const files = ['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => path.join(root, 'tests', 'golden', 'models', 'gpt2-induction-random', f));

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

test('a random two-layer GPT-2 picked as files: the detectors\' tables show every head\'s score over its control, nothing named, and a cell opens its head', { engines: 'chromium', why: 'computation', timeout: 180000 }, async () => {
  assert.equal(await page.evaluate(() => document.getElementById('detectors-panel').hidden), true, 'no detectors for the designed heads');
  await page.setInputFiles('#model-files', files);
  await waitForExplorer(page, () => window.explorer.source?.id === 'model' && window.explorer.busy === 0, null, 60000);
  assert.equal(await page.evaluate(() => document.getElementById('detectors-panel').hidden), false);
  await page.click('#detectors-run');
  await waitForExplorer(page, () => !!window.explorer.detectors && window.explorer.busy === 0, null, 120000);
  const { heads, ms } = await page.evaluate(() => ({ heads: window.explorer.detectors.heads, ms: window.explorer.detectors.ms }));
  console.log(`  [${ENGINE}] detectors in ${Math.round(ms)} ms; highest induction score ${Math.max(...heads.map((h) => h.induction)).toFixed(3)}`);
  assert.deepEqual(heads.filter((h) => h.label), []);
  assert.match(await page.text('#detectors-summary'), /^No head is named/);
  for (const name of ['previousToken', 'duplicateToken', 'induction']) {
    assert.equal(await page.count(`#detector-${name} .detector-cell`), heads.length);
    assert.equal(await page.count(`#detector-${name} .detector-cell.named`), 0);
  }
  // each cell: the score over its control
  const h = heads.find((e) => e.layer === 1 && e.head === 1);
  const cell = '#detector-induction .detector-cell[data-layer="1"][data-head="1"]';
  assert.equal(await page.text(cell), `${h.induction.toFixed(2)}ctrl ${h.control.induction.toFixed(2)}`);

  await page.screenshot('detectors-tables.png', { selector: '#detectors-panel' });
  // a click opens that head
  await page.click(cell);
  await waitForExplorer(page, () => window.explorer.layer === 1 && window.explorer.selectedHead === 1 && window.explorer.busy === 0, null, 30000);
  assert.equal(await page.evaluate((s) => document.querySelector(s).getAttribute('aria-pressed'), cell), 'true');
  assert.deepEqual(consoleErrors, []);
});
