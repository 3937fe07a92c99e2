// The lesson below the explorer, in a real browser (each engine of tests/browser/driver.js),
// served by scripts/serve/serve.js on a free port, one page for the file. Every interactive piece is
// driven and its numbers are compared with what the JS API computes in the same page with a
// fresh module; each export is downloaded and its content compared with the core's map. No
// console errors. Every section is drawn in light and dark; its screenshot goes to
// build/screenshots/<engine>/lesson-*.png with MHA_SCREENSHOTS=all (by default only the one
// docs/browsers.md shows).
//
// In every engine: the sections and KaTeX, the answer under the interview question, the exports
// (downloads), the screenshots, a strict Content-Security-Policy, the console and requests. In
// Chromium only: the interactive pieces' numbers against the core and the core's timing (they
// do not depend on the engine), and the practice box's reading of answers.
//
//   node --test tests/browser/lesson.test.js

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { SCREENSHOTS, SHOTS, limits, note, serve, startWeb, stopWeb, test } from './driver.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const webRoot = path.join(root, 'web');
const SECTIONS = ['lesson-idea', 'lesson-cost', 'lesson-one-head', 'lesson-code', 'lesson-mistakes', 'lesson-gqa', 'lesson-masks',
  'lesson-ablation', 'lesson-interview', 'lesson-practice', 'lesson-takeaways', 'lesson-related'];
const TOLERANCE = 1e-5;

let server;
const isOwn = (url) => url.startsWith(server.url) || /^(data|blob):/.test(url);
let browser;
let page;
const consoleErrors = [];
const outsideRequests = [];

before(async () => {
  ({ server, browser } = await startWeb({ needs: ['web/lib/wasm/mha_core.js', 'web/lib/wasm/mha_core.wasm'] }));
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('consoleError', (text, url) => consoleErrors.push(`${text} (${url || 'no url'})`));
  page.on('pageError', (message) => consoleErrors.push(`page error: ${message}`));
  page.on('request', (url) => { if (!isOwn(url)) outsideRequests.push(url); });
  await page.goto(server.url);
  await page.waitForFunction(() => document.querySelector('#lesson')?.dataset.ready, null, { timeout: 30000 });
  assert.equal(await page.evaluate(() => document.querySelector('#lesson').dataset.ready), 'true',
    `lesson failures: ${await page.evaluate(() => JSON.stringify(window.__mhaLesson?.failures))}`);
});

after(() => stopWeb({ server, browser }));

/** Max |a − b|, printed beside the tolerance. */
function assertClose(what, actual, expected, tolerance = TOLERANCE) {
  assert.equal(actual.length, expected.length, `${what}: ${actual.length} values, expected ${expected.length}`);
  let max = 0;
  for (let k = 0; k < actual.length; k += 1) max = Math.max(max, Math.abs(actual[k] - expected[k]));
  console.log(`  ${what}: max |Δ| = ${max.toExponential(2)} (tolerance ${tolerance})`);
  assert.ok(max <= tolerance, `${what}: max |Δ| = ${max} > ${tolerance}`);
}

async function clickSegment(group, value) {
  await page.click(`[data-name="${group}"] button[data-value="${value}"]`);
}

test('every section is there, in order, and the formulas are typeset by the vendored KaTeX', { engines: 'all', why: 'layout' }, async () => {
  const ids = await page.evaluate(() => [...document.querySelectorAll('#lesson .lesson-section')].map((s) => s.id));
  console.log(`  sections: ${ids.join(', ')}`);
  assert.deepEqual(ids, SECTIONS);
  await page.scrollIntoView('#lesson-formula');
  await page.waitForFunction(() => document.querySelectorAll('#lesson-formula .katex').length >= 3, null, { timeout: 30000 });
  const formula = await page.evaluate(() => [...document.querySelectorAll('#lesson-formula .katex-mathml')].map((m) => m.textContent).join('\n'));
  assert.match(formula, /MultiHead/);
  assert.match(formula, /softmax/);
  const katexHref = await page.evaluate(() => [...document.querySelectorAll('link[rel="stylesheet"]')].map((l) => l.href).find((h) => h.includes('katex')));
  assert.ok(katexHref && katexHref.startsWith(server.url) && katexHref.includes('/vendor/katex/'), `KaTeX stylesheet from ${katexHref}`);
});

test('cost: d_model and h controls offer divisors only and change d_k, parameters and FLOPs; the core is timed', { engines: 'chromium', why: 'computation' }, async () => {
  await page.scrollIntoView('#lesson-cost');
  for (const dModel of [64, 512]) {
    await clickSegment('d-model', dModel);
    const offered = await page.$$eval('[data-name="heads"] button', (bs) => bs.map((b) => Number(b.dataset.value)));
    console.log(`  d_model ${dModel}: h offered ${offered.join(', ')}`);
    assert.ok(offered.length >= 5 && offered.every((h) => dModel % h === 0), `offered heads ${offered} must all divide ${dModel}`);
  }
  await clickSegment('d-model', 512);
  await clickSegment('heads', 16);
  assert.equal(await page.text('#cost-dk'), '32');
  const readRow = (cls) => page.$$eval(`#cost-table tr.${cls} td`, (tds) => tds.map((td) => td.textContent));
  const params = (await readRow('row-params')).map((t) => Number(t.replace(/,/g, '')));
  // the core's own count, from a fresh module in the page
  const coreParams = await page.evaluate(async () => {
    const mha = await (await import('./lib/index.js')).loadMha();
    const m = new mha.MultiHeadAttention({ embedDim: 512, numHeads: 16 });
    const n = m.parameterNames().reduce((s, name) => s + m.parameterShape(name).reduce((a, b) => a * b, 1), 0);
    m.dispose();
    return n;
  });
  console.log(`  parameters shown ${params.join(' / ')}, core ${coreParams}, 4·d² + 4·d = ${4 * 512 * 512 + 4 * 512}`);
  assert.deepEqual(params, [coreParams, coreParams]);
  assert.equal(coreParams, 4 * 512 * 512 + 4 * 512);
  const softmax16 = (await readRow('row-softmax')).map((t) => Number(t.replace(/,/g, '')));
  assert.deepEqual(softmax16, [64 * 64, 16 * 64 * 64], 'softmax exponentials: L² for one head, h·L² for h heads at L = 64');
  await clickSegment('heads', 4);
  assert.equal(await page.text('#cost-dk'), '128');
  const softmax4 = (await readRow('row-softmax')).map((t) => Number(t.replace(/,/g, '')));
  assert.deepEqual(softmax4, [64 * 64, 4 * 64 * 64]);
  await page.waitForFunction(() => document.querySelector('#cost-table').dataset.timeH && !document.querySelector('#cost-table .time-h').textContent.includes('measuring'), null, { timeout: 30000 });
  const times = await page.evaluate(() => [Number(document.querySelector('#cost-table').dataset.time1), Number(document.querySelector('#cost-table').dataset.timeH)]);
  console.log(`  core time at d_model 512, L 64: 1 head ${times[0].toFixed(3)} ms, 4 heads ${times[1].toFixed(3)} ms`);
  assert.ok(times.every((t) => Number.isFinite(t) && t > 0), `times ${times}`);
  await clickSegment('d-model', 64);
  await clickSegment('heads', 8);
  assert.equal(await page.text('#cost-dk'), '8');
});

test('one head followed: the page\'s q·k softmax and Σ softmax·v agree with the core, and the verb head finds the subject', { engines: 'chromium', why: 'computation' }, async () => {
  await page.scrollIntoView('#lesson-one-head');
  await clickSegment('follow-head', 3); // H4: verb -> subject
  await clickSegment('follow-token', 2); // "sat"
  const checks = await page.evaluate(() => ({ ...document.querySelector('#follow-checks').dataset }));
  console.log(`  page vs core: softmax ${Number(checks.softmax).toExponential(2)}, context ${Number(checks.context).toExponential(2)}, concat slot ${Number(checks.concat).toExponential(2)} (tolerance ${TOLERANCE})`);
  for (const key of ['softmax', 'context', 'concat']) assert.ok(Number(checks[key]) <= TOLERANCE, `${key}: ${checks[key]}`);
  const top = await page.text('#follow-table tr.top-weight th');
  assert.match(top, /cat/, `H4 from "sat" should weigh "cat" most, got ${top}`);
  // the numbers in the table are the core's weights for head 4, row "sat"
  const shown = await page.$$eval('#follow-table tbody td.weight .num', (tds) => tds.map((td) => Number(td.textContent.replace('−', '-'))));
  const core = await page.evaluate(async () => {
    const { loadMha } = await import('./lib/index.js');
    const { designedStateDict } = await import('./sources/designed-heads.js');
    const { exampleInput } = await import('./app/lesson/inputs.js');
    const mha = await loadMha();
    const input = exampleInput(0);
    const m = new mha.MultiHeadAttention({ embedDim: 64, numHeads: 8 });
    m.loadStateDict(designedStateDict());
    const { weights } = m.forward({ query: { data: input.x, shape: [input.L, 64] }, averageAttnWeights: false });
    m.dispose();
    const L = input.L;
    return Array.from(weights.data.slice((3 * L + 2) * L, (3 * L + 3) * L));
  });
  assertClose('softmax column (3 decimals) vs core', shown, core, 5e-4);
});

test('the live code prints [1, 10, 64], [1, 10, 10] and d_k = 8, runs again on request, and pasted into the console prints the same', { engines: 'chromium', why: 'computation' }, async () => {
  await page.scrollIntoView('#lesson-code');
  await page.waitForFunction(() => Number(document.querySelector('#code-output').dataset.runs || 0) >= 1, null, { timeout: 30000 });
  const first = await page.text('#code-output');
  console.log(`  output:\n${first.split('\n').map((l) => `    ${l}`).join('\n')}`);
  const lines = first.split('\n');
  assert.deepEqual(lines.slice(0, 3), ['[1, 10, 64]', '[1, 10, 10]', '8']);
  const shown = await page.text('#code-js');
  assert.match(shown, /new mha\.MultiHeadAttention\(\{\s*embedDim: 64, numHeads: 8, batchFirst: true/);
  assert.match(shown, /console\.log\(output\.shape\)/);
  assert.doesNotMatch(shown, /\bprint\(/, 'no print(): in a browser it opens the print dialog');
  await page.click('#code-run');
  await page.waitForFunction(() => Number(document.querySelector('#code-output').dataset.runs) >= 2, null, { timeout: 30000 });
  assert.match(await page.text('#code-output'), /^\[1, 10, 64\]\n\[1, 10, 10\]\n8\n/);
  // The text shown, pasted into the page's console: a script with top-level await, its
  // console.log calls recorded as the console would show them.
  const pasted = await page.evaluate(async (code) => {
    const logged = [];
    const log = console.log;
    console.log = (...values) => { logged.push(values.map((v) => (Array.isArray(v) ? `[${v.join(', ')}]` : String(v))).join(' ')); };
    try {
      await (0, eval)(`(async () => {\n${code}\n})()`);
    } finally {
      console.log = log;
    }
    return logged;
  }, shown);
  console.log(`  pasted into the console: ${pasted.join(' | ')}`);
  assert.deepEqual(pasted, lines.slice(0, 3));
});

test('more heads: h = 1, 2, 4, 8, 16 at d_model 64 with d_k and diversity from the core', { engines: 'chromium', why: 'computation' }, async () => {
  const rows = await page.$$eval('#heads-table tbody tr', (trs) => trs.map((tr) => ({
    h: Number(tr.dataset.h), dk: Number(tr.children[1].textContent), maps: tr.querySelectorAll('canvas').length, diversity: tr.querySelector('.diversity').textContent,
  })));
  console.log(`  ${rows.map((r) => `h ${r.h}: d_k ${r.dk}, ${r.maps} maps, diversity ${r.diversity}`).join('; ')}`);
  assert.deepEqual(rows.map((r) => r.h), [1, 2, 4, 8, 16]);
  for (const r of rows) {
    assert.equal(r.dk, 64 / r.h);
    assert.equal(r.maps, r.h);
  }
  const core = await page.evaluate(async () => {
    const { loadMha } = await import('./lib/index.js');
    const { meanPairwiseJsd } = await import('./app/lesson/mistakes.js');
    const { designedStateDict } = await import('./sources/designed-heads.js');
    const { exampleInput } = await import('./app/lesson/inputs.js');
    const mha = await loadMha();
    const input = exampleInput(0);
    const m = new mha.MultiHeadAttention({ embedDim: 64, numHeads: 16 });
    m.loadStateDict(designedStateDict());
    const { weights } = m.forward({ query: { data: input.x, shape: [input.L, 64] }, averageAttnWeights: false });
    m.dispose();
    return meanPairwiseJsd(mha, weights);
  });
  assert.equal(rows[4].diversity, core.toFixed(3));
});

test('forgetting W_O: the toggle changes the output; without W_O it equals the concatenation, heads unmixed', { engines: 'chromium', why: 'computation' }, async () => {
  await page.scrollIntoView('#mistake-wo');
  const read = () => page.evaluate(() => ({ ...document.querySelector('#mistake-wo').dataset, numbers: document.querySelector('#wo-demo-numbers').textContent }));
  const withWo = await read();
  assert.equal(withWo.applyWo, 'true');
  await page.click('#wo-toggle');
  const without = await read();
  console.log(`  with W_O: ${withWo.numbers}, ${withWo.mixed} numbers mix heads, max |out − concat| ${Number(withWo.diffFromConcat).toFixed(3)}`);
  console.log(`  without : ${without.numbers}, ${without.mixed} numbers mix heads, max |out − concat| ${without.diffFromConcat}`);
  assert.equal(without.applyWo, 'false');
  assert.notEqual(without.numbers, withWo.numbers);
  assert.equal(Number(without.diffFromConcat), 0, 'skipOutProj: the output is the concatenation exactly');
  assert.equal(Number(without.mixed), 0, 'without W_O no output number mixes two heads');
  assert.ok(Number(withWo.mixed) > 0 && Number(withWo.diffFromConcat) > 0.01);
  assert.match(await page.text('#wo-verdict'), /Without W_O the output is the concatenation/);
  await page.screenshot('lesson-wo-off.png', { selector: '#mistake-wo' });
  await page.click('#wo-toggle');
  assert.equal((await read()).numbers, withWo.numbers);
});

test('grouped-query attention: the KV-head control changes the sharing diagram and the memory figure', { engines: 'chromium', why: 'computation' }, async () => {
  await page.scrollIntoView('#lesson-gqa');
  for (const G of [8, 4, 2, 1]) {
    await clickSegment('kv-heads', G);
    const seen = await page.evaluate(() => ({
      kv: document.querySelectorAll('#gqa-diagram .gqa-kv').length,
      edges: [...document.querySelectorAll('#gqa-diagram .gqa-edge')].map((e) => Number(e.dataset.kv)),
      bytes: Number(document.querySelector('#gqa-memory').dataset.bytesPerTokenPerLayer),
      text: document.querySelector('#gqa-per-token').textContent,
      core: document.querySelector('#gqa-core').textContent,
    }));
    console.log(`  ${G} KV heads: ${seen.kv} boxes, query→KV ${seen.edges.join('')}, ${seen.text} per token per layer`);
    assert.equal(seen.kv, G);
    assert.deepEqual(seen.edges, Array.from({ length: 8 }, (_, i) => Math.floor(i / (8 / G))));
    assert.equal(seen.bytes, 2 * G * 8 * 2);
    assert.equal(seen.text, `${2 * G * 8 * 2} B`);
    assert.match(seen.core, new RegExp(`W_K and W_V are ${G * 8} × 64`));
  }
  const llama = await page.text('#gqa-llama .llama-gqa');
  assert.match(llama, /^4,096 B/, 'Llama 3 70B: 2 × 8 KV heads × 128 × 2 bytes');
});

test('masks: the causal toggle zeroes every weight above the diagonal; a second sentence gives cross-attention', { engines: 'chromium', why: 'computation' }, async () => {
  await page.scrollIntoView('#lesson-masks');
  const read = () => page.evaluate(() => ({ ...document.querySelector('#lesson-masks').dataset }));
  const open = await read();
  await page.click('#causal-toggle');
  const causal = await read();
  await page.screenshot('lesson-masks-causal.png', { selector: '#lesson-masks' });
  console.log(`  weight above the diagonal: ${Number(open.future).toFixed(3)} without the mask, ${causal.future} with it`);
  assert.ok(Number(open.future) > 1);
  assert.equal(Number(causal.future), 0);
  await page.click('#causal-toggle');
  await page.selectOption('#masks-source', '4');
  const cross = await read();
  console.log(`  cross-attention map: ${cross.shape}`);
  assert.equal(cross.shape, '11x13');
  assert.match(await page.text('#masks-verdict'), /Cross-attention/);
  await page.screenshot('lesson-masks-cross.png', { selector: '#lesson-masks' });
  await page.selectOption('#masks-source', '-1');
});

test('head ablation: switching heads off changes the output, by the norms the core gives', { engines: 'chromium', why: 'computation' }, async () => {
  await page.scrollIntoView('#lesson-ablation');
  const boxes = '#lesson-ablation input[type="checkbox"]';
  for (let h = 0; h < 8; h += 1) await page.uncheck(boxes, h);
  const none = await page.$$eval('#ablation-chart .bar-row', (rows) => rows.map((r) => Number(r.dataset.difference)));
  assert.ok(none.every((d) => d === 0), `no head off: differences ${none}`);
  await page.check(boxes, 3);
  await page.check(boxes, 6);
  const shown = await page.$$eval('#ablation-chart .bar-row', (rows) => rows.map((r) => Number(r.dataset.difference)));
  const core = await page.evaluate(async () => {
    const { loadMha } = await import('./lib/index.js');
    const { designedStateDict } = await import('./sources/designed-heads.js');
    const { exampleInput } = await import('./app/lesson/inputs.js');
    const mha = await loadMha();
    const input = exampleInput(0);
    const m = new mha.MultiHeadAttention({ embedDim: 64, numHeads: 8 });
    m.loadStateDict(designedStateDict());
    const q = { data: input.x, shape: [input.L, 64] };
    const a = m.forward({ query: q, needWeights: false }).output.data;
    const b = m.forward({ query: q, needWeights: false, ablateHeads: [3, 6] }).output.data;
    m.dispose();
    return Array.from({ length: input.L }, (_, t) => Math.hypot(...Array.from({ length: 64 }, (_, c) => a[t * 64 + c] - b[t * 64 + c])));
  });
  console.log(`  ‖Δ‖ per token with H4, H7 off: ${shown.map((d) => d.toFixed(2)).join(' ')}`);
  assertClose('ablation norms vs core', shown, core);
  assert.ok(shown.some((d) => d > 0.5));
  await page.uncheck(boxes, 6);
});

test('interview: the answer opens under the question', { engines: 'all', why: 'input' }, async () => {
  await page.scrollIntoView('#lesson-interview');
  assert.equal(await page.visible('#interview-answer p'), false);
  await page.click('#interview-answer summary');
  assert.equal(await page.visible('#interview-answer p'), true);
  assert.match(await page.text("#interview-answer"), /the projections are the same matrices/);
});

test('practice: the answer box accepts 64 and rejects other answers with feedback', { engines: 'chromium', why: 'validation' }, async () => {
  await page.scrollIntoView('#lesson-practice');
  const answer = async (text) => {
    await page.fill('#practice-answer', text);
    await page.click('#practice-form button[type="submit"]');
    return page.evaluate(() => ({ correct: document.querySelector('#practice-feedback').dataset.correct, text: document.querySelector('#practice-feedback').textContent }));
  };
  for (const [text, correct] of [['512', 'false'], ['8', 'false'], ['4096', 'false'], ['sixty-four', 'false'], ['', 'false'], ['63', 'false'], ['64', 'true'], [' 64 ', 'true'], ['d_k = 64', 'true']]) {
    const result = await answer(text);
    console.log(`  "${text}" -> ${result.correct}: ${result.text.slice(0, 70)}…`);
    assert.equal(result.correct, correct, `answer "${text}"`);
    assert.ok(result.text.length > 10, 'feedback is given');
  }
});

/** Split one CSV line, honouring double quotes. */
function csvCells(line) {
  const cells = [];
  let cell = '';
  let quoted = false;
  for (let k = 0; k < line.length; k += 1) {
    const c = line[k];
    if (quoted) {
      if (c === '"' && line[k + 1] === '"') { cell += '"'; k += 1; } else if (c === '"') quoted = false; else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { cells.push(cell); cell = ''; } else cell += c;
  }
  cells.push(cell);
  return cells;
}

test('export: PNG, SVG, CSV and JSON of the selected head match the core\'s numbers', { engines: 'all', why: 'downloads' }, async () => {
  await page.scrollIntoView('#explorer');
  await page.click('#head-tab-4'); // H5
  // the core's map for the explorer's current state, recomputed in the page with a fresh module
  const expected = await page.evaluate(async () => {
    const x = (await import('./app/main.js')).explorer;
    const mha = await (await import('./lib/index.js')).loadMha();
    const { config } = x.source.attention;
    const m = new mha.MultiHeadAttention(config);
    m.loadStateDict(x.source.attention.stateDict());
    const L = x.sentence.tokens.length;
    const { weights } = m.forward({ query: { data: x.sentence.features, shape: [L, config.embedDim] }, averageAttnWeights: false });
    m.dispose();
    const h = x.selectedHead;
    return { h, L, tokens: x.sentence.tokens.map((t) => t.text), values: Array.from(weights.data.slice(h * L * L, (h + 1) * L * L)) };
  });
  assert.equal(expected.h, 4);
  const where = await page.evaluate(() => {
    const bar = document.getElementById('lesson-export');
    if (!bar) return 'SVG and JSON beside the explorer\'s own PNG and CSV';
    return bar.closest('#explorer') ? 'a bar under the explorer\'s map' : 'a section of the lesson';
  });
  const inExplorer = where.startsWith('SVG'); // the PNG is then the explorer's canvas
  console.log(`  export buttons: ${where}`);
  await page.scrollIntoView('#save-svg');
  await page.screenshot('lesson-export-bar.png', { selector: '#head-panel figure.heatmap-figure' });
  const download = async (format) => {
    const file = await page.download(`#save-${format}`);
    console.log(`  ${format}: ${file.name} (${file.bytes.length} bytes, from ${file.how})`);
    assert.match(file.name, new RegExp(`^head-5-.*\\.${format}$`));
    return file.bytes;
  };
  const { L, values, tokens } = expected;

  const csv = (await download('csv')).toString('utf8').trim().split('\n').map(csvCells);
  assert.deepEqual(csv[0].slice(1), tokens);
  assert.deepEqual(csv.slice(1).map((row) => row[0]), tokens);
  assertClose('CSV vs core', csv.slice(1).flatMap((row) => row.slice(1).map(Number)), values, 1e-6);

  const json = JSON.parse((await download('json')).toString('utf8'));
  assert.deepEqual(json.shape, [L, L]);
  assert.equal(json.head, 5);
  assert.deepEqual(json.tokens, tokens);
  assertClose('JSON vs core', json.weights.flat(), values, 0);

  const svgText = (await download('svg')).toString('utf8');
  const cells = await page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    if (doc.querySelector('parsererror')) return { error: doc.querySelector('parsererror').textContent };
    return { rects: [...doc.querySelectorAll('rect.cell')].map((r) => ({ v: Number(r.dataset.value), fill: r.getAttribute('fill') })) };
  }, svgText);
  assert.ok(!cells.error, `SVG parses: ${cells.error}`);
  assertClose('SVG cell values vs core', cells.rects.map((r) => r.v), values, 0);
  const colours = await page.evaluate(async (vs) => {
    const { sequentialColor } = await import('./views/heatmap.js');
    return vs.map(sequentialColor);
  }, values);
  assert.deepEqual(cells.rects.map((r) => r.fill), colours, 'each SVG cell is coloured by its weight');

  const png = await download('png');
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  const expectedRgb = colours.map((c) => c.match(/\d+/g).map(Number));
  const seen = await page.evaluate(async ({ b64, tokens: names, inExplorer: fromCanvas }) => {
    const blob = await (await fetch(`data:image/png;base64,${b64}`)).blob();
    const bitmap = await createImageBitmap(blob);
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const ctx = canvas.getContext('2d');
    ctx.drawImage(bitmap, 0, 0);
    const image = ctx.getImageData(0, 0, bitmap.width, bitmap.height).data;
    const colourSet = new Set();
    for (let k = 0; k < image.length; k += 4) colourSet.add(`${image[k]},${image[k + 1]},${image[k + 2]}`);
    const result = { width: bitmap.width, height: bitmap.height, colours: [...colourSet] };
    if (fromCanvas) {
      // the explorer saves its canvas: the file must be that canvas, pixel for pixel
      const onScreen = document.getElementById('main-heatmap');
      const live = onScreen.getContext('2d').getImageData(0, 0, onScreen.width, onScreen.height).data;
      let differing = live.length === image.length ? 0 : -1;
      if (differing === 0) for (let k = 0; k < live.length; k += 1) if (live[k] !== image[k]) differing += 1;
      result.canvas = { width: onScreen.width, height: onScreen.height, differing };
    } else {
      const { mapLayout, PNG_SCALE } = await import('./app/lesson/export.js');
      const { left, top, cell, L: n } = mapLayout(names); // cell positions do not depend on the title
      result.cells = [];
      for (let i = 0; i < n; i += 1) {
        for (let j = 0; j < n; j += 1) {
          const d = ctx.getImageData(Math.round((left + j * cell + 4) * PNG_SCALE), Math.round((top + i * cell + 4) * PNG_SCALE), 1, 1).data;
          result.cells.push([d[0], d[1], d[2]]);
        }
      }
    }
    return result;
  }, { b64: png.toString('base64'), tokens, inExplorer });
  const missing = expectedRgb.filter((rgb) => !seen.colours.includes(rgb.join(',')));
  console.log(`  PNG ${seen.width}×${seen.height}: ${expectedRgb.length - missing.length} of ${expectedRgb.length} cells' colours (viridis of the core's weight) found in the image`);
  assert.equal(missing.length, 0, `colours of weights missing from the PNG: ${missing.slice(0, 5).join(' | ')}`);
  if (seen.canvas) {
    console.log(`  PNG vs the explorer's canvas ${seen.canvas.width}×${seen.canvas.height}: ${seen.canvas.differing} bytes differ`);
    assert.equal(seen.canvas.differing, 0);
    const drawn = await page.evaluate(async () => Array.from((await import('./views/heatmap.js')).drawnOn(document.getElementById('main-heatmap')).values));
    assertClose('the canvas saved shows the core\'s map', drawn, values, 0);
  } else {
    let worst = 0;
    seen.cells.forEach((rgb, k) => rgb.forEach((v, c) => { worst = Math.max(worst, Math.abs(v - expectedRgb[k][c])); }));
    console.log(`  largest colour difference of a cell from its weight's colour ${worst} (tolerance 2 of 255)`);
    assert.ok(worst <= 2);
  }
  await page.click('#head-tab-0');
});

test('every section drawn, light and dark (their screenshots with MHA_SCREENSHOTS=all)', { engines: 'all', why: 'layout' }, async () => {
  for (const theme of ['light', 'dark']) {
    const dark = await page.evaluate(() => document.documentElement.dataset.theme === 'dark');
    if ((theme === 'dark') !== dark) await page.click('#theme-toggle');
    await page.waitForFunction((t) => document.documentElement.dataset.theme === t, theme);
    for (const id of SECTIONS) {
      await page.scrollIntoView(`#${id}`);
      // the formulas on screen typeset (KaTeX types each as it comes within 400 px), then a frame drawn
      await page.waitForFunction(async (s) => {
        const waiting = [...document.querySelector(s).querySelectorAll('.math:not(.math-rendered):not(.math-failed)')]
          .filter((m) => { const r = m.getBoundingClientRect(); return r.bottom > -400 && r.top < innerHeight + 400; });
        if (waiting.length) return false;
        await new Promise((r) => requestAnimationFrame(() => r()));
        return true;
      }, `#${id}`);
      // docs/browsers.md shows the light one-head section of each engine; MHA_SCREENSHOTS=all takes every section
      const shown = theme === 'light' && id === 'lesson-one-head' ? 'docs/browsers.md' : undefined;
      await page.screenshot(`lesson-${theme}-${id.replace('lesson-', '')}.png`, { selector: `#${id}`, shown });
    }
  }
  await page.click('#theme-toggle');
  await page.scrollIntoView('#lesson .lesson-toc');
  await page.screenshot('lesson-light-contents.png');
  console.log(`  ${SCREENSHOTS === 'all' ? SECTIONS.length * 2 + 1 : 1} screenshot(s) in ${path.relative(root, SHOTS)}/ (MHA_SCREENSHOTS=${SCREENSHOTS})`);
});

test('under a strict Content-Security-Policy the lesson and KaTeX cause no violation', { engines: 'all', why: 'csp' }, async () => {
  // the policy of tests/browser/csp.test.js: no inline script or style, nothing from elsewhere
  const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";
  const strict = await serve({ root: webRoot, headers: { 'Content-Security-Policy': CSP } });
  const p = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  try {
    await p.addInitScript(() => {
      window.__violations = [];
      document.addEventListener('securitypolicyviolation', (e) => window.__violations.push({ directive: e.violatedDirective, blocked: e.blockedURI, source: e.sourceFile, line: e.lineNumber }));
    });
    await p.goto(strict.url);
    await p.waitForFunction(() => document.querySelector('#lesson')?.dataset.ready, null, { timeout: 30000 });
    for (const id of SECTIONS) await p.scrollIntoView(`#${id}`);
    await p.waitForFunction(() => document.querySelectorAll('#lesson .math-rendered').length > 20, null, { timeout: 30000 });
    const rendered = await p.evaluate(() => document.querySelectorAll('#lesson .math-rendered').length);
    const violations = await p.evaluate(() => window.__violations);
    const ours = violations.filter((v) => /\/app\/lesson\/|\/vendor\/katex\//.test(`${v.source} ${v.blocked}`) || /font/.test(v.directive));
    console.log(`  ${rendered} formulas typeset; ${violations.length} violations on the page, ${ours.length} from the lesson or KaTeX${violations.length ? ` (others: ${violations.filter((v) => !ours.includes(v)).map((v) => `${v.directive} ${v.blocked} ${v.source.replace(strict.url, '/')}:${v.line}`).join('; ')})` : ''}`);
    assert.deepEqual(ours, []);
  } finally {
    await p.close();
    await strict.close();
  }
});

test('no console errors and no request outside the page\'s own server', { engines: 'all', why: 'errors' }, async () => {
  await page.flushEvents();
  const timed = await page.requests();
  if (timed) {
    note(`${limits.requests} (${timed.length} entries)`);
    for (const url of timed) if (!isOwn(url)) outsideRequests.push(url);
  }
  console.log(`  console errors: ${consoleErrors.length}; outside requests: ${outsideRequests.length}`);
  assert.deepEqual(consoleErrors, []);
  assert.deepEqual(outsideRequests, []);
});
