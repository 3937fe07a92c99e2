// The model writes on, in a real browser (each engine of tests/browser/driver.js): a GPT-2 opened
// by a link to the local stand-in for the Hub (tests/js/mimic-hub.js, the golden gpt2-trained)
// writes 20 tokens through the panel "The model writes on", each the most probable: every written
// token is the argmax of the page's full run of the longer text at the position before it (the
// logits the predictions panel reads), its attention rows are in the map, the model view, the W_O
// view and the token strip, and the link says write=20. Then 20 tokens sampled with a temperature,
// top-k and seed: <mha-explorer model-url> with the same attributes writes the same tokens, the
// page's link applied again restores them, and the link of the same model opened from its files
// (a new page; the files picked again) writes them again.
//
//   MHA_BROWSER=chromium node --test tests/browser/write.test.js

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startWeb, stopWeb, test } from './driver.js';
import { attachExplorer, settled, waitForExplorer } from './page-state.js';
import { startMimicHub } from '../js/mimic-hub.js';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const models = fileURLToPath(new URL('../golden/models', import.meta.url));

let server;
let browser;
let page;
let hub;
const errors = [];
const PROMPT = 'the king follows';

before(async () => {
  hub = await startMimicHub();
  ({ server, browser } = await startWeb({ needs: ['web/lib/wasm/mha_core.wasm', 'web/lib/wasm/mha_models.js', 'web/lib/wasm/mha_models.wasm'] }));
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageError', (message) => errors.push(`page error: ${message}`));
});

after(async () => {
  await stopWeb({ server, browser });
  if (hub) await hub.close();
});

/** The page opened anew at `query`; resolves once it has started and settled. */
async function open(query) {
  await page.goto(`${server.url}${query}`);
  await page.waitForFunction(() => document.body.dataset.status === 'ok' || document.body.dataset.status === 'error', null, { timeout: 60000 });
  assert.equal(await page.evaluate(() => document.body.dataset.status), 'ok', `page status: ${await page.text('#status')}`);
  await attachExplorer(page);
  await settled(page, 60000);
}

/** What the page shows of the written text: ids, which are written, the logits' argmax per row, the views' sizes. */
function shown() {
  return page.evaluate(() => {
    const x = window.explorer;
    const { sentence, result } = x;
    const [T, V] = sentence.run.logits.shape;
    const argmax = [];
    for (let t = 0; t < T; ++t) {
      let best = 0;
      for (let v = 1; v < V; ++v) if (sentence.run.logits.data[t * V + v] > sentence.run.logits.data[t * V + best]) best = v;
      argmax.push(best);
    }
    const [H, , S] = result.weights.shape;
    // each written row of the layer shown: its sum over the keys (a softmax row sums to 1)
    const rowSums = [];
    for (let h = 0; h < H; ++h) {
      for (let i = T - sentence.written; i < T; ++i) {
        let sum = 0;
        for (let j = 0; j < S; ++j) sum += result.weights.data[(h * T + i) * S + j];
        rowSums.push(sum);
      }
    }
    return {
      ids: sentence.ids, written: sentence.written, flags: sentence.tokens.map((t) => !!t.written), argmax, T, S, rowSums,
      texts: sentence.tokens.map((t) => t.text), write: sentence.write ?? null, search: location.search,
      strip: document.querySelectorAll('#token-strip .token, #token-strip [data-token]').length,
      gridMaps: document.querySelectorAll('#model-grid canvas').length,
      woShown: !document.getElementById('wo-missing') || document.getElementById('wo-missing').hidden,
      woChildren: document.getElementById('wo-view').childElementCount,
      focus: x.focusToken, panel: document.getElementById('write-panel').hidden ? null : document.getElementById('write-panel').textContent,
      marks: [...document.querySelectorAll('#write-panel mark.written')].map((m) => m.textContent),
    };
  });
}

test('a GPT-2 from a link writes 20 tokens, the most probable and then sampled, every view drawing their rows; the link and the element give the same text again', { engines: 'all', why: 'end-to-end', timeout: 300000 }, async () => {
  const link = `?model=openai-community/gpt2&endpoint=${encodeURIComponent(hub.endpoint)}&sentence=${encodeURIComponent(PROMPT)}`;
  await open(link);
  await page.waitForFunction(() => !document.getElementById('write-panel').hidden && !!document.getElementById('write-many'), null, { timeout: 30000 });
  const before = await shown();
  const T0 = before.T;

  // 20 tokens, each the most probable
  await page.fill('#write-steps', '20');
  await page.click('#write-many');
  await waitForExplorer(page, () => window.explorer.sentence.write?.steps === 20 && window.explorer.sentence.written === 20, null, 120000);
  const greedy = await shown();
  assert.equal(greedy.T, T0 + 20);
  assert.deepEqual(greedy.ids.slice(0, T0), before.ids, 'the text is kept, the written tokens after it');
  assert.deepEqual(greedy.flags, [...Array(T0).fill(false), ...Array(20).fill(true)]);
  for (let i = T0; i < greedy.T; ++i) assert.equal(greedy.ids[i], greedy.argmax[i - 1], `token ${i} is the most probable after the text before it`);
  assert.equal(greedy.S, greedy.T, 'the map is the longer text\'s');
  for (const sum of greedy.rowSums) assert.ok(Math.abs(sum - 1) < 1e-4, `a written row sums to ${sum}`);
  assert.ok(greedy.gridMaps >= 4, `the model view draws ${greedy.gridMaps} maps`);
  assert.ok(greedy.woShown && greedy.woChildren > 0, 'the W_O view shows the written text');
  assert.equal(greedy.focus, greedy.T - 1, 'the W_O view follows the last written token');
  assert.equal(greedy.marks.length, 1, 'what was written is marked');
  assert.match(greedy.panel, /The model wrote 20 tokens, each the most probable/);
  const params = new URLSearchParams(greedy.search);
  assert.equal(params.get('write'), '20');
  assert.equal(params.get('write-seed'), null);
  console.log(`    greedy: ${JSON.stringify(greedy.texts.slice(T0).join(' '))}`);
  await page.screenshot('write-greedy.png', { selector: '#write-panel' });

  // 20 sampled tokens: other settings write the continuation anew
  await page.click('#write-sampled');
  await page.fill('#write-temperature', '1.5');
  await page.fill('#write-top-k', '40');
  await page.fill('#write-seed', '7');
  await page.click('#write-many');
  await waitForExplorer(page, () => window.explorer.sentence.write?.seed === 7 && window.explorer.sentence.written === 20, null, 120000);
  const sampled = await shown();
  assert.deepEqual(sampled.write, { temperature: 1.5, topK: 40, seed: 7, steps: 20 });
  assert.notDeepEqual(sampled.ids, greedy.ids, 'sampling at 1.5 wrote another text');
  const sampledParams = new URLSearchParams(sampled.search);
  assert.deepEqual(['write', 'temperature', 'top-k', 'write-seed'].map((k) => sampledParams.get(k)), ['20', '1.5', '40', '7']);
  console.log(`    sampled: ${JSON.stringify(sampled.texts.slice(T0).join(' '))}`);
  await page.screenshot('write-sampled.png');

  // <mha-explorer model-url> with the same attributes: the same tokens
  const element = await page.evaluate(async ({ text }) => {
    await import('/element/mha-explorer.js');
    const e = document.createElement('mha-explorer');
    e.id = 'write-element';
    e.setAttribute('model-url', '/examples/models/gpt2-lesson/');
    e.setAttribute('sentence', text);
    for (const [k, v] of [['write', '20'], ['temperature', '1.5'], ['top-k', '40'], ['write-seed', '7']]) e.setAttribute(k, v);
    document.body.append(e);
    // ready, and its panel (loaded then) drawn
    await new Promise((resolve) => {
      const check = () => (e.status === 'error' || (e.status === 'ready' && e.result && e.shadowRoot.querySelector('.write-panel mark')) ? resolve() : setTimeout(check, 100));
      check();
    });
    const panel = e.shadowRoot.querySelector('.write-panel');
    return { status: e.status, tokens: e.result?.tokens, panel: panel?.hidden === false, marked: panel?.querySelector('mark')?.textContent };
  }, { text: PROMPT });
  assert.equal(element.status, 'ready');
  assert.deepEqual(element.tokens, sampled.texts, 'the element writes the same tokens');
  assert.ok(element.panel, 'the element shows the panel');
  assert.equal(element.marked, sampled.marks[0], 'its panel marks the same written text');
  await page.evaluate(() => document.getElementById('write-element').scrollIntoView());
  await page.screenshot('write-element.png', { selector: '#write-element' });
  await page.evaluate(() => document.getElementById('write-element').remove());

  // the page's link applied again after the writing is cleared: the same text (through the
  // controller, as a link is; the page is not loaded again, so the model is not fetched again)
  await page.evaluate(() => window.explorer.setState({ write: null }));
  await waitForExplorer(page, () => window.explorer.sentence?.written === 0, null, 60000);
  await page.evaluate(async (search) => (await import('/explorer/url.js')).followLink(window.explorer, search), sampled.search);
  await waitForExplorer(page, () => window.explorer.sentence?.written === 20, null, 120000);
  const again = await shown();
  assert.deepEqual(again.ids, sampled.ids, 'the link restores the written text');
  assert.deepEqual(again.write, sampled.write);

  // a link of a model opened from files: its files opened again write the same tokens
  const filesLink = new URLSearchParams(sampled.search);
  filesLink.delete('model');
  filesLink.delete('endpoint');
  filesLink.set('source', 'model');
  await open(`?${filesLink}`);
  assert.match(await page.text('#url-note'), /open its folder again: what it wrote is written again then/);
  await page.setInputFiles('#model-files', ['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => path.join(models, 'gpt2-trained', f)));
  await waitForExplorer(page, () => window.explorer.source?.id === 'model' && window.explorer.sentence?.written === 20, null, 120000);
  const fromFiles = await shown();
  assert.deepEqual(fromFiles.ids, sampled.ids, 'the model from files writes the link\'s text again');
  assert.equal(new URLSearchParams(fromFiles.search).get('write-seed'), '7');
  assert.deepEqual(errors, []);
});

test('the panel\'s module not arriving is said in its place (the page) or the status line (the element); the page keeps working and asks for it again at the next change', { engines: 'chromium', why: 'faults', timeout: 120000 }, async () => {
  const panelModule = '**/views/write-panel.js';
  await page.page.route(panelModule, (route) => route.abort('connectionfailed'));
  try {
    await open(`?model=openai-community/gpt2&endpoint=${encodeURIComponent(hub.endpoint)}&sentence=${encodeURIComponent(PROMPT)}`);
    await page.waitForFunction(() => /could not be loaded/.test(document.getElementById('write-panel').textContent), null, { timeout: 30000 });
    assert.match(await page.text('#write-panel'), /^The panel "The model writes on" could not be loaded \(.+\)\.$/);
  } finally {
    await page.page.unroute(panelModule);
  }
  await page.selectOption('#layer', '1');
  await waitForExplorer(page, () => window.explorer.source.layer === 1 && !!document.getElementById('write-many'), null, 30000);
  await page.click('#write-next');
  await waitForExplorer(page, () => window.explorer.sentence.written === 1, null, 60000);
  assert.match(await page.text('#write-panel .write-status'), /The model wrote 1 token, each the most probable/);

  // the element: one removed before the module fails says nothing (its explorer is gone); one
  // shown says so in its status line
  const elementModule = '**/element/write.js';
  let release;
  const released = new Promise((resolve) => { release = resolve; });
  await page.page.route(elementModule, async (route) => { await released; await route.abort('connectionfailed'); });
  try {
    await page.evaluate(async () => {
      await import('/element/mha-explorer.js');
      const e = document.createElement('mha-explorer');
      e.id = 'write-gone';
      e.setAttribute('model-url', '/examples/models/gpt2-lesson/');
      e.setAttribute('sentence', 'the king follows');
      document.body.append(e);
      await new Promise((resolve) => { const check = () => (e.status !== 'loading' && e.status !== 'computing' ? resolve() : setTimeout(check, 20)); check(); });
      e.remove();
    });
    release();
    const status = await page.evaluate(async () => {
      const e = document.createElement('mha-explorer');
      e.setAttribute('model-url', '/examples/models/gpt2-lesson/');
      e.setAttribute('sentence', 'the king follows');
      document.body.append(e);
      await new Promise((resolve) => {
        const check = () => (e.status === 'error' || /could not be loaded/.test(e.shadowRoot.querySelector('.status').textContent) ? resolve() : setTimeout(check, 50));
        check();
      });
      const text = e.shadowRoot.querySelector('.status').textContent;
      e.remove();
      return { status: e.status, text };
    });
    assert.equal(status.status, 'ready');
    assert.match(status.text, /^4 heads × \d+ tokens of .*\. The panel to write on could not be loaded: /);
  } finally {
    await page.page.unroute(elementModule);
  }
  await page.flushEvents();
  assert.deepEqual(errors, []);
});
