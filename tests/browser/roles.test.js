// The roles panel for the sources other than the pretrained model (tests/browser/pretrained.test.js
// covers that one): the trained model's table by the one rule, its items behind a cell, and the
// same table measured again in the page (a Web Worker) on demand; a weights
// file's heads measured on demand in the page, by the same rule, random weights named by nothing.
// Both are measurements whose numbers do not depend on the engine: Chromium only (the trained
// source's load and the weights file's picker run in every engine in trained-source.test.js and
// explorer.test.js). One page for the file. Screenshots go to build/screenshots/<engine>/ with MHA_SCREENSHOTS=all.
//
//   node --test tests/browser/roles.test.js

import { after, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startWeb, stopWeb, test } from './driver.js';
import { attachExplorer, resetExplorer, waitForExplorer } from './page-state.js';
import { loadMha } from '../../web/lib/index.js';
import { RandomSource } from '../../web/sources/random.js';
import { stateDictToJson } from '../../web/sources/file.js';

let server;
let browser;
let page;
const errors = [];

before(async () => {
  ({ server, browser } = await startWeb({ needs: ['web/lib/wasm/mha_core.wasm', 'web/lib/wasm/mha_train.wasm'] }));
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageError', (message) => errors.push(`page error: ${message}`));
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.status === 'ok', null, { timeout: 30000 });
  await attachExplorer(page);
});

after(() => stopWeb({ server, browser }));

beforeEach(() => resetExplorer(page, 60000));

test('the trained model: its heads by the one rule, a cell\'s items, and a measurement in the page that agrees', { engines: 'chromium', why: 'computation', timeout: 180_000 }, async () => {
  await page.check('input[name="source"][value="trained"]');
  await waitForExplorer(page, () => window.explorer.source.id === 'trained', null, 120_000);
  await page.waitForSelector('#roles-table', { timeout: 60_000 });
  const r = await page.evaluate(() => ({
    rows: document.querySelectorAll('#roles-table tbody tr').length,
    what: document.getElementById('roles-what').textContent,
    labels: window.explorer.source.roles.heads.map((e) => ({ label: e.label, kind: e.kind, relations: e.relations })),
  }));
  assert.equal(r.rows, 16 + 2);
  assert.equal(r.what, 'sentences of its grammar');
  for (const e of r.labels.filter((x) => x.kind === 'relation')) assert.ok(e.relations[e.label].ci[0] > e.relations[e.label].baseline.score);
  await page.click('#roles-table tbody tr:nth-child(16) button[data-relation="induction"]');
  await page.waitForSelector('#roles-evidence ol li', { timeout: 10_000 });
  assert.match(await page.text('#roles-evidence h4'), /^L1 H8, induction: the right word in \d+ of \d+ test items/);
  // the table the page read (npm run roles wrote it) measured again in the page, in a Web Worker: the same figures
  await page.click('#roles-measure');
  await page.waitForFunction(() => document.getElementById('roles-measure-status').dataset.agree !== undefined || /Could not/.test(document.getElementById('roles-measure-status').textContent), null, { timeout: 200_000 });
  const status = await page.text('#roles-measure-status');
  console.log(`  ${status}`);
  assert.match(status, /the two agree/);
});

test('a weights file: its heads measured in the page on demand; random weights are named by nothing', { engines: 'chromium', why: 'computation', timeout: 240_000 }, async () => {
  const mha = await loadMha();
  const random = new RandomSource({ seed: 4 });
  await random.load(mha);
  const json = await stateDictToJson(random.attention, 'random seed 4');
  random.dispose();
  await page.setInputFiles('#state-dict-file', { name: 'random4.json', buffer: Buffer.from(json) });
  await waitForExplorer(page, () => window.explorer.source.id === 'file', null, 60_000);
  await page.waitForSelector('#roles-measure', { timeout: 30_000 });
  await page.click('#roles-measure');
  await page.waitForSelector('#roles-table', { timeout: 200_000 });
  const r = await page.evaluate(() => ({
    sentences: window.explorer.source.roles.corpus.sentences,
    kinds: window.explorer.source.roles.heads.map((e) => e.kind),
    summary: document.getElementById('roles-summary').textContent,
  }));
  console.log(`weights file: ${r.sentences} sentences; ${r.summary.slice(0, 120)}…`);
  assert.equal(r.sentences, 776);
  assert.ok(r.kinds.every((k) => k === 'broad' || k === 'mixed'), r.kinds.join(' '));
  assert.match(r.summary, /^No head of this model clears any bar\./);
  await page.screenshot('explorer-file-roles.png', { selector: '#roles-panel' });
  assert.deepEqual(errors, []);
});
