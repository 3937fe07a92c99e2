// A text as long as a GPT-2's context, in a real browser (each engine of tests/browser/driver.js),
// one page load: the committed 1,024-position GPT-2 (tests/golden/models/gpt2-long, written by
// scripts/reference/gen_long_model.js) picked as files reads a 1,000-token text, and every view
// draws it: the single head (its map fits its box, max-pooled, the cell under the pointer names
// its tokens and full weight, and the keyboard walks it to the last cell), the heads of the layer, the compare view, every layer and
// head (pooled by the core), the W_O view, the head followed, the weights table (the row of the
// token followed) and the token strip (scrolling in its box); the CSV export has every weight in
// full and the PNG every weight as a pixel or more; another layer is asked for and shown.
// Screenshot: build/screenshots/<engine>/long-text.png.
//
//   MHA_BROWSER=chromium node --test tests/browser/long-text.test.js

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { startWeb, stopWeb, test } from './driver.js';
import { attachExplorer, waitForExplorer } from './page-state.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const files = ['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => path.join(root, 'tests', 'golden', 'models', 'gpt2-long', f));
/** 1,000 ASCII characters: 1,000 tokens of the byte-level tokenizer without merges. */
const TEXT = Array.from({ length: 1000 }, (_, i) => 'the cat sat on the mat. '[i % 24]).join('');

let server;
let browser;
let page;
const errors = [];

before(async () => {
  ({ server, browser } = await startWeb({ needs: ['web/lib/wasm/mha_core.wasm', 'web/lib/wasm/mha_models.js', 'web/lib/wasm/mha_models.wasm'] }));
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageError', (message) => errors.push(`page error: ${message}`));
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.status === 'ok' || document.body.dataset.status === 'error', null, { timeout: 30000 });
  assert.equal(await page.evaluate(() => document.body.dataset.status), 'ok', `page status: ${await page.text('#status')}`);
  await attachExplorer(page);
});

after(async () => {
  await stopWeb({ server, browser });
});

test('a 1,000-token text opens in a 1,024-position GPT-2 and every view draws it', { engines: 'all', why: 'layout', timeout: 300000 }, async () => {
  await page.setInputFiles('#model-files', files);
  await waitForExplorer(page, () => window.explorer.source?.id === 'model' && window.explorer.busy === 0, null, 60000);
  await page.fill('#free-text', TEXT);
  await page.click('#free-text-form button[type="submit"]');
  await waitForExplorer(page, (t) => window.explorer.sentence?.text === t && window.explorer.busy === 0, TEXT, 180000);
  const shown = await page.evaluate(() => {
    const x = window.explorer;
    const box = (/** @type {string} */ id) => {
      const e = /** @type {HTMLElement} */ (document.getElementById(id));
      const r = e.getBoundingClientRect();
      return { width: r.width, height: r.height, scrollHeight: e.scrollHeight, clientHeight: e.clientHeight };
    };
    const canvasDrawn = (/** @type {Element | null} */ c) => !!c && /** @type {HTMLCanvasElement} */ (c).width > 0 && /** @type {HTMLCanvasElement} */ (c).height > 0;
    return {
      tokens: x.sentence.tokens.length,
      weights: x.result.weights.shape,
      layers: x.result.layers.map((/** @type {{ shape: number[] }} */ t) => t.shape),
      kept: x.sentence.run.layers.map((/** @type {{ weights: unknown }} */ l) => l.weights !== null),
      mainMap: box('main-heatmap'),
      explorer: box('explorer'),
      grid: [...document.querySelectorAll('#small-multiples canvas')].filter(canvasDrawn).length,
      compare: ['pair-map-a', 'pair-map-b', 'pair-map-diff'].filter((id) => canvasDrawn(document.getElementById(id))).length,
      modelCells: [...document.querySelectorAll('#model-grid .model-cell canvas')].filter(canvasDrawn).length,
      woShown: !/** @type {HTMLElement} */ (document.getElementById('wo-view')).hidden,
      follow: /** @type {HTMLElement} */ (document.getElementById('follow-view')).textContent,
      tableRows: document.querySelectorAll('#weights-table tbody tr').length,
      tableCells: document.querySelectorAll('#weights-table tbody td').length,
      tableCaption: document.querySelector('#weights-table caption')?.textContent ?? '',
      strip: box('token-strip'),
      stripButtons: document.querySelectorAll('#token-strip button[data-index]').length,
      textScores: /** @type {HTMLElement} */ (document.getElementById('detectors-text')).textContent ?? '',
      legend: /** @type {HTMLElement} */ (document.getElementById('pooled-note')).hidden ? '' : /** @type {HTMLElement} */ (document.getElementById('pooled-note')).textContent,
      pageWidth: document.documentElement.scrollWidth,
      ablation: box('ablation-bars'),
      status: /** @type {HTMLElement} */ (document.getElementById('status')).textContent,
    };
  });
  console.log(`  ${JSON.stringify({ ...shown, follow: shown.follow.slice(0, 80) })}`);
  assert.equal(shown.tokens, 1000);
  assert.deepEqual(shown.weights, [4, 1000, 1000]);
  assert.deepEqual(shown.layers, [[4, 128, 128], [4, 128, 128], [4, 128, 128]], 'every layer pooled for the model view');
  assert.deepEqual(shown.kept, [true, false, false], 'only the layer in view keeps its maps');
  // the single head: its map fits the explorer (cells under a pixel), not 3 px a token
  assert.ok(shown.mainMap.width > 200 && shown.mainMap.width <= shown.explorer.width, `the head's map: ${shown.mainMap.width} px in ${shown.explorer.width}`);
  assert.ok(shown.pageWidth <= 1280, `page width ${shown.pageWidth}`);
  assert.equal(shown.grid, 4, 'the heads of the layer');
  assert.equal(shown.compare, 3, 'the compare view');
  assert.equal(shown.modelCells, 12, 'every layer and head');
  assert.ok(shown.woShown, 'the W_O view');
  assert.match(shown.follow, /its 1000 weights sum to 1\.000/);
  assert.equal(shown.tableRows, 1);
  assert.equal(shown.tableCells, 1000);
  assert.match(shown.tableCaption, /Of the 1000 rows, the one of the token followed \(1000\)/);
  assert.equal(shown.stripButtons, 1000);
  assert.match(shown.textScores, /The scores of every head need every layer's maps, which a text of 1000 tokens does not keep/);
  assert.match(shown.legend, /^1000 tokens: a map with fewer pixels than tokens .* shows in each pixel the largest weight of the cells it covers \(max-pooled\)/);
  assert.ok(shown.strip.scrollHeight > shown.strip.clientHeight && shown.strip.height < 400, `the token strip scrolls in its box: ${JSON.stringify(shown.strip)}`);
  assert.match(shown.status, /^Ready: 4 heads × 1000 tokens/);
  // a bar per token where heads are switched off: they scroll in their box, and the explorer stays a few screens tall
  assert.ok(shown.ablation.scrollHeight > shown.ablation.clientHeight && shown.ablation.height < 600, `the ablation bars scroll: ${JSON.stringify(shown.ablation)}`);
  assert.ok(shown.explorer.height < 8000, `the explorer is ${shown.explorer.height} px tall`);

  // the cell under the pointer: its query and key tokens and its full weight, from the full map
  const canvas = await page.evaluate(() => {
    const map = /** @type {HTMLElement} */ (document.getElementById('main-heatmap'));
    map.scrollIntoView({ block: 'start' });
    const r = map.getBoundingClientRect();
    return { x: r.left, y: r.top, width: r.width, height: r.height };
  });
  const layout = await page.evaluate(async () => {
    const { drawnOn } = await import('/views/heatmap.js');
    const d = drawnOn(/** @type {HTMLCanvasElement} */ (document.getElementById('main-heatmap')));
    return d && d.layout;
  });
  assert.ok(layout && layout.cell < 3 && layout.cell * 1000 <= shown.explorer.width, `cells smaller than a short text's least, 3 px, to fit: ${JSON.stringify(layout)}`);
  const row = 700, col = 350;
  await page.mouseMove(canvas.x + layout.left + (col + 0.5) * layout.cell, canvas.y + layout.top + (row + 0.5) * layout.cell);
  const tip = await page.evaluate(() => /** @type {HTMLElement} */ (document.getElementById('tooltip'))?.textContent ?? '');
  const expected = await page.evaluate(([r, c]) => {
    const x = window.explorer;
    const T = x.sentence.tokens.length;
    return x.result.weights.data[x.selectedHead * T * T + r * T + c];
  }, [row, col]);
  assert.match(tip, new RegExp(`: ${expected.toFixed(3).replace('.', '\\.')}$`), `the tooltip "${tip}" gives the full map's weight at (${row}, ${col})`);
  await page.screenshot('long-text.png', { selector: '#explorer' });

  // the keyboard: the map is a tab stop, End and Page Down walk to the last cell, which is announced with its weight
  await page.focus('#main-heatmap');
  for (const key of ['Enter', 'End', 'PageDown']) await page.keyboard(key);
  const walked = await page.evaluate(() => {
    const map = /** @type {HTMLElement} */ (document.getElementById('main-heatmap'));
    const x = window.explorer;
    const T = x.sentence.tokens.length;
    return { focused: document.activeElement === map, said: map.parentElement?.querySelector('.cell-announcer')?.textContent ?? '', last: x.result.weights.data[x.selectedHead * T * T + T * T - 1] };
  });
  assert.ok(walked.focused);
  assert.equal(walked.said, `Query 1000 “t”, key 1000 “t”: weight ${walked.last.toFixed(3)}.`);

  // the exports: CSV with every weight in full, a PNG with every weight a pixel or more, SVG refused by name
  const exported = await page.evaluate(async ([r, c]) => {
    const { selectedHead, toCsv, toPng, toSvg, mapLayout, PNG_SCALE } = await import('/app/lesson/export.js');
    const map = selectedHead(window.explorer);
    const lines = toCsv(map).trimEnd().split('\n');
    const png = await createImageBitmap(await toPng(map));
    const layout = mapLayout(map.tokens, map);
    let svg = '';
    try { toSvg(map); } catch (error) { svg = String(error.message); }
    return {
      rows: lines.length, columns: lines[1 + r].split(',').length, value: Number(lines[1 + r].split(',')[1 + c]), full: map.values[r * map.tokens.length + c],
      png: [png.width, png.height], expected: [layout.width * PNG_SCALE, layout.height * PNG_SCALE], cellPixels: layout.cell * PNG_SCALE, svg,
    };
  }, [row, col]);
  console.log(`  exports: ${JSON.stringify(exported)}`);
  assert.equal(exported.rows, 1001);
  assert.equal(exported.columns, 1001);
  assert.equal(exported.value, exported.full, 'the CSV keeps the weight in full');
  assert.deepEqual(exported.png, exported.expected);
  assert.ok(exported.cellPixels >= 1 && exported.png[0] <= 4096, `the PNG: ${exported.cellPixels} px a weight, ${exported.png}`);
  assert.match(exported.svg, /^SVG export: a map of 1000 × 1000 weights .* save it as PNG/);

  // another layer: asked for again, and only it kept
  await page.evaluate(() => window.explorer.setState({ layer: 2 }));
  await waitForExplorer(page, () => window.explorer.shown().source.layer === 2 && window.explorer.busy === 0, null, 120000);
  const again = await page.evaluate(() => ({
    kept: window.explorer.sentence.run.layers.map((/** @type {{ weights: unknown }} */ l) => l.weights !== null),
    weights: window.explorer.result.weights.shape,
  }));
  assert.deepEqual(again.kept, [false, false, true]);
  assert.deepEqual(again.weights, [4, 1000, 1000]);
  assert.deepEqual(errors, []);
});
