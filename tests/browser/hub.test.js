// Models on the Hugging Face Hub by name, in a real browser, against the local stand-in for the
// Hub (tests/js/mimic-hub.js: the models API, resolve URLs, the weights redirected to a storage
// host on another origin, the Hub's CORS headers, the faults); the page on its own origin, the
// Hub and its storage on two others. No test reaches the real Hub.
//
// The three families by the three ways, at the least cost: each engine opens each family and
// uses each way once, and Chromium the rest.
//
//   |                    | a link ?model=  | the Hub box     | <mha-explorer model> |
//   | GPT-2              | all three       | Chromium        | Chromium (sharded)   |
//   | BERT               | Chromium        | all three       | all three            |
//   | Llama (SmolLM2)    | all three       | Chromium        | all three            |
//
// In every engine besides: the same link opened again makes no request to the Hub or its storage
// (Cache Storage); a gated repository's link gives its message and the page keeps working. In
// Chromium only: the Hub box (suggestions with their sizes, what will be downloaded, the models
// kept with their sizes, delete), Stop during a download, a link to a model over 100 MB asks
// first, a missing repository, one with pytorch_model.bin only and a connection dropped midway
// give their messages, and a tokenizer.json that backtracks without end on a text is stopped in
// its worker after the link's tokenize-time-limit with its message, the model reading the next
// text; the page's control and the element's attribute for that limit, checked.
//
//   node --test tests/browser/hub.test.js          (MHA_BROWSER=firefox|webkit for the others)

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { startWeb, stopWeb, test } from './driver.js';
import { attachExplorer, settled, waitForExplorer } from './page-state.js';
import { startMimicHub } from '../js/mimic-hub.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const golden = (name) => JSON.parse(readFileSync(path.join(root, 'tests', 'golden', 'models', `${name}.golden.json`), 'utf8')).dtypes.F32.runs;
const TOLERANCE = 1e-5;

let server;
let browser;
let page;
let hub;
const errors = [];

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

const link = (repo, extra = '') => `?model=${repo}&endpoint=${encodeURIComponent(hub.endpoint)}${extra}`;

/** The page's layers against a golden run: the worst difference. */
async function worstAgainst(run) {
  const shown = await page.evaluate(() => ({ ids: window.explorer.sentence.ids, layers: window.explorer.result.layers.map((t) => Array.from(t.data)) }));
  assert.deepEqual(shown.ids, run.ids);
  let worst = 0;
  shown.layers.forEach((data, l) => {
    const expected = run.attentions[l].flat(Infinity);
    assert.equal(data.length, expected.length);
    data.forEach((v, i) => { worst = Math.max(worst, Math.abs(v - expected[i])); });
  });
  return worst;
}

const requestsSince = (at) => hub.requests.slice(at).map((r) => `${r.origin} ${r.path}`);

test('a link ?model=owner/name opens a GPT-2 and a Llama from the Hub: their layers as PyTorch computes them; the same link again makes no request', { engines: 'all', why: 'end-to-end', timeout: 180000 }, async () => {
  await page.goto(`${server.url}__driver/blank.html`).catch(() => {});
  const [run] = golden('gpt2-trained');
  let at = hub.requests.length;
  await open(link('openai-community/gpt2', `&sentence=${encodeURIComponent(run.text)}`));
  assert.equal(await page.evaluate(() => window.explorer.source.id), 'model');
  assert.match(await page.text('#model-name'), /openai-community\/gpt2/);
  const worst = await worstAgainst(run);
  assert.ok(worst <= TOLERANCE, `the layers differ from PyTorch by ${worst}`);
  const first = requestsSince(at);
  assert.ok(first.some((r) => r.startsWith('hub /api/models/openai-community/gpt2/revision/main')), first.join('\n'));
  assert.ok(first.some((r) => r.startsWith('storage /repos/')), 'the weights came from the storage host');
  const params = new URLSearchParams(await page.evaluate(() => location.search));
  assert.equal(params.get('model'), 'openai-community/gpt2');
  assert.equal(params.get('endpoint'), hub.endpoint);
  console.log(`    first open: ${first.length} requests; the layers within ${worst.toExponential(1)} of PyTorch`);

  at = hub.requests.length;
  await open(link('openai-community/gpt2', `&sentence=${encodeURIComponent(run.text)}`));
  assert.equal(await page.evaluate(() => window.explorer.source.id), 'model');
  assert.ok((await worstAgainst(run)) <= TOLERANCE);
  assert.deepEqual(requestsSince(at), [], 'the second open is served from Cache Storage');

  // a Llama-family model (grouped-query attention, rotary positions) by its link too
  const [llama] = golden('llama-gqa');
  at = hub.requests.length;
  await open(link('HuggingFaceTB/SmolLM2-135M', `&sentence=${encodeURIComponent(llama.text)}`));
  assert.match(await page.text('#model-name'), /Llama-family model “HuggingFaceTB\/SmolLM2-135M”/);
  const worstLlama = await worstAgainst(llama);
  assert.ok(worstLlama <= TOLERANCE, `the Llama's layers differ from PyTorch by ${worstLlama}`);
  assert.ok(requestsSince(at).some((r) => r.startsWith('storage /repos/')));
  console.log(`    the Llama: the layers within ${worstLlama.toExponential(1)} of PyTorch`);
  assert.deepEqual(errors, []);
});

test('a gated repository\'s link: its message, the designed heads, and the page keeps working', { engines: 'all', why: 'network', timeout: 120000 }, async () => {
  await open(link('test/gated'));
  const note = await page.text('#url-note');
  assert.match(note, /test\/gated is gated \(HTTP 401/, note);
  assert.equal(await page.evaluate(() => window.explorer.source.id), 'designed');
  await page.evaluate(() => window.explorer.useSource({ id: 'random', seed: 3 }));
  await waitForExplorer(page, () => window.explorer.source?.id === 'random' && window.explorer.busy === 0, null, 60000);
  console.log(`    ${note}`);
  assert.deepEqual(errors, []);
});

/** An <mha-explorer model=repo> in the page; resolves to its status, error text and the weights of its layer shown. */
async function elementWith(repo, text, layer) {
  await page.evaluate(async ({ repo: r, endpoint, text: t, layer: l }) => {
    await import('/element/mha-explorer.js');
    document.getElementById('hub-element')?.remove();
    const element = document.createElement('mha-explorer');
    element.id = 'hub-element';
    element.setAttribute('model', r);
    element.setAttribute('hub-endpoint', endpoint);
    element.setAttribute('sentence', t);
    element.setAttribute('layer', String(l));
    document.body.append(element);
  }, { repo, endpoint: hub.endpoint, text, layer });
  await page.waitForFunction(() => ['ready', 'error'].includes(document.getElementById('hub-element')?.status), null, { timeout: 60000 });
  const result = await page.evaluate(() => {
    const e = document.getElementById('hub-element');
    return { status: e.status, error: e.shadowRoot?.textContent?.slice(0, 400), data: e.result ? Array.from(e.result.weights.data) : null };
  });
  await page.evaluate(() => document.getElementById('hub-element').remove());
  return result;
}

/** The worst difference of an element's layer from a golden run's. */
function worstOfLayer(result, run, layer) {
  const expected = run.attentions[layer].flat(Infinity);
  assert.equal(result.data.length, expected.length);
  return result.data.reduce((w, v, i) => Math.max(w, Math.abs(v - expected[i])), 0);
}

/** The Hub box opens `repo` typed into it, with `text`; resolves once it is shown. */
async function openFromBox(repo, text) {
  await page.evaluate((endpoint) => {
    document.getElementById('hub-endpoint').value = endpoint;
    document.getElementById('hub-box').open = true;
  }, hub.endpoint);
  await page.fill('#hub-id', repo);
  await page.click('#hub-form button[type="submit"]');
  await waitForExplorer(page, (url) => window.explorer.source?.url === url && window.explorer.busy === 0, `hf:${repo}`, 60000);
  await page.evaluate((t) => window.explorer.setState({ sentence: t }), text);
  await waitForExplorer(page, (t) => window.explorer.sentence?.text === t && window.explorer.busy === 0, text, 30000);
}

test('<mha-explorer model> opens a BERT and a Llama by name: their layers as PyTorch computes them', { engines: 'all', why: 'end-to-end', timeout: 180000 }, async () => {
  await open('');
  for (const [repo, name] of [['google-bert/bert-base-uncased', 'bert-mlm'], ['HuggingFaceTB/SmolLM2-135M', 'llama-gqa']]) {
    const [run] = golden(name);
    const result = await elementWith(repo, run.text, 1);
    assert.equal(result.status, 'ready', result.error);
    const worst = worstOfLayer(result, run, 1);
    assert.ok(worst <= TOLERANCE, `${repo}: layer 1 differs from PyTorch by ${worst}`);
    console.log(`    ${repo}: layer 1 within ${worst.toExponential(1)} of PyTorch`);
  }
  assert.deepEqual(errors, []);
});

test('the Hub box opens a BERT typed by its id: its layers as PyTorch computes them; it is listed as kept, with its size', { engines: 'all', why: 'end-to-end', timeout: 180000 }, async () => {
  await open('');
  await page.evaluate(async () => { await (await import('/lib/models.js')).deleteCachedModel('google-bert/bert-base-uncased'); });
  const [run] = golden('bert-mlm');
  const at = hub.requests.length;
  await openFromBox('google-bert/bert-base-uncased', run.text);
  const worst = await worstAgainst(run);
  assert.ok(worst <= TOLERANCE, `the layers differ from PyTorch by ${worst}`);
  assert.ok(requestsSince(at).some((r) => r.startsWith('storage /repos/')), 'the weights came from the storage host');
  await page.waitForFunction(() => !!document.querySelector('#hub-cached li[data-cached="google-bert/bert-base-uncased"]'), null, { timeout: 30000 });
  assert.match(await page.text('#hub-cached li[data-cached="google-bert/bert-base-uncased"]'), /^google-bert\/bert-base-uncased74 kB \(commit [0-9a-f]{7}\)Delete$/);
  console.log(`    google-bert/bert-base-uncased from the box: the layers within ${worst.toExponential(1)} of PyTorch`);
  assert.deepEqual(errors, []);
});

test('the rest of the three families by the three ways: a BERT by a link, a Llama from the Hub box, a sharded GPT-2 in <mha-explorer model>: their layers as PyTorch computes them', { engines: 'chromium', why: 'computation', timeout: 180000 }, async () => {
  const [bert] = golden('bert-mlm');
  await open(link('google-bert/bert-base-uncased', `&sentence=${encodeURIComponent(bert.text)}`));
  const worstBert = await worstAgainst(bert);
  assert.ok(worstBert <= TOLERANCE, `the BERT's layers differ from PyTorch by ${worstBert}`);
  console.log(`    google-bert/bert-base-uncased by a link: the layers within ${worstBert.toExponential(1)} of PyTorch`);

  const [llama] = golden('llama-gqa');
  await openFromBox('HuggingFaceTB/SmolLM2-135M', llama.text);
  const worstLlama = await worstAgainst(llama);
  assert.ok(worstLlama <= TOLERANCE, `the Llama's layers differ from PyTorch by ${worstLlama}`);
  console.log(`    HuggingFaceTB/SmolLM2-135M from the box: the layers within ${worstLlama.toExponential(1)} of PyTorch`);

  const [gpt2] = golden('gpt2-trained');
  const result = await elementWith('test/gpt2-sharded', gpt2.text, 1);
  assert.equal(result.status, 'ready', result.error);
  const worst = worstOfLayer(result, gpt2, 1);
  assert.ok(worst <= TOLERANCE, `test/gpt2-sharded: layer 1 differs from PyTorch by ${worst}`);
  console.log(`    test/gpt2-sharded in the element: layer 1 within ${worst.toExponential(1)} of PyTorch`);
  assert.deepEqual(errors, []);
});

test('the Hub box: suggestions with their sizes from the API, an id typed, the models kept with their sizes, delete', { engines: 'chromium', why: 'validation', timeout: 180000 }, async () => {
  await open('');
  await page.evaluate(async (endpoint) => {
    const { deleteCachedModel } = await import('/lib/models.js');
    for (const repo of ['openai-community/gpt2', 'distilbert/distilgpt2', 'google-bert/bert-base-uncased', 'HuggingFaceTB/SmolLM2-135M', 'test/gpt2-sharded']) await deleteCachedModel(repo);
    document.getElementById('hub-endpoint').value = endpoint;
    document.getElementById('hub-box').open = true;
  }, hub.endpoint);
  await page.waitForFunction(() => [...document.querySelectorAll('#hub-suggested li')].length === 5
    && [...document.querySelectorAll('#hub-suggested li .note')].every((n) => n.textContent !== '…'), null, { timeout: 30000 });
  const sizes = await page.evaluate(() => [...document.querySelectorAll('#hub-suggested li')].map((li) => li.textContent));
  assert.deepEqual(sizes, ['openai-community/gpt2167 kB', 'distilbert/distilgpt2106 kB', 'google-bert/bert-base-uncased74 kB', 'HuggingFaceTB/SmolLM2-135M166 kB', 'Qwen/Qwen2.5-0.5Bnot on this Hub']);
  assert.equal(await page.text('#hub-cached'), 'none yet');

  await page.fill('#hub-id', 'distilbert/distilgpt2');
  await page.click('#hub-form button[type="submit"]');
  await waitForExplorer(page, () => window.explorer.source?.id === 'model' && window.explorer.source.url === 'hf:distilbert/distilgpt2' && window.explorer.busy === 0, null, 60000);
  await page.waitForFunction(() => !!document.querySelector('#hub-cached li[data-cached="distilbert/distilgpt2"]'), null, { timeout: 30000 });
  const kept = await page.text('#hub-cached');
  assert.match(kept, /distilbert\/distilgpt2106 kB \(commit [0-9a-f]{7}\)Delete/);

  await page.click('#hub-suggested li button[data-repo="openai-community/gpt2"]');
  await waitForExplorer(page, () => window.explorer.source?.url === 'hf:openai-community/gpt2' && window.explorer.busy === 0, null, 60000);
  await page.waitForFunction(() => document.querySelectorAll('#hub-cached li[data-cached]').length === 2, null, { timeout: 30000 });

  await page.click('#hub-cached li[data-cached="distilbert/distilgpt2"] button[aria-label^="Delete"]');
  await page.waitForFunction(() => document.querySelectorAll('#hub-cached li[data-cached]').length === 1, null, { timeout: 30000 });
  assert.equal(await page.evaluate(async () => (await (await import('/lib/models.js')).listCachedModels()).map((m) => m.repo).join()), 'openai-community/gpt2');

  await page.fill('#hub-id', 'not a repo');
  await page.click('#hub-form button[type="submit"]');
  assert.match(await page.text('#source-error'), /model: expected a Hugging Face Hub repository id such as openai-community\/gpt2, got "not a repo"/);
  assert.deepEqual(errors, []);
});

test('a link to a model over 100 MB asks first; "Not now" shows the designed heads and says why', { engines: 'chromium', why: 'validation', timeout: 120000 }, async () => {
  const at = hub.requests.length;
  await page.goto(`${server.url}${link('test/large-listing')}`);
  await page.waitForSelector('#hub-ask', { timeout: 30000 });
  assert.match(await page.text('#hub-ask'), /This link opens test\/large-listing from http:\/\/127\.0\.0\.1:\d+: 548 MB to download/);
  await page.click('#hub-ask-no');
  await page.waitForFunction(() => document.body.dataset.status === 'ok', null, { timeout: 60000 });
  await attachExplorer(page);
  await settled(page, 60000);
  assert.equal(await page.evaluate(() => window.explorer.source.id), 'designed');
  assert.match(await page.text('#url-note'), /the model it names was not downloaded \(more than 100 MB/);
  assert.deepEqual(requestsSince(at).filter((r) => !r.includes('/api/models/')), [], 'no file was fetched');
});

test('a missing repository, one with pytorch_model.bin only, a connection dropped midway: each its message, and the page keeps working', { engines: 'chromium', why: 'faults', timeout: 180000 }, async () => {
  for (const [repo, expected] of [
    ['nobody/nothing', /no repository nobody\/nothing on the Hub \(HTTP 404/],
    ['test/pytorch-only', /test\/pytorch-only has no model\.safetensors \(its weights are pytorch_model\.bin, which the explorer does not read/],
    ['test/gpt2-dropped', /model\.safetensors: the download broke off after \d+ of 160960 bytes \(open the model again to retry\)/],
  ]) {
    await open(link(repo));
    const note = await page.text('#url-note');
    assert.match(note, expected, note);
    assert.equal(await page.evaluate(() => window.explorer.source.id), 'designed');
    console.log(`    ${note}`);
  }
  await open(link('openai-community/gpt2'));
  assert.equal(await page.evaluate(() => window.explorer.source.id), 'model');
  assert.deepEqual(errors, []);
});

test('a tokenizer.json that takes too long on a text: its worker is stopped after the link\'s tokenize-time-limit with its message; the model reads the next text; the page\'s control and the element\'s attribute for the limit, checked', { engines: 'chromium', why: 'faults', timeout: 120000 }, async () => {
  // Chromium only: the engines meet (a+)+b on 40 a's each their own way. V8 backtracks until the
  // worker is ended; JavaScriptCore stops at its backtracking limit and reads it as no match, and
  // SpiderMonkey throws "too much recursion", each after 1 to 6 s on this machine, racing the limit.
  await open(link('test/slow-tokenizer', '&tokenize-time-limit=2000'));
  assert.equal(await page.evaluate(() => window.explorer.source.id), 'model');
  assert.equal(await page.evaluate(() => document.getElementById('tokenize-time-limit').value), '2000', 'the link\'s limit shows in the control');
  assert.equal(await page.evaluate(() => document.getElementById('hub-endpoint').value), hub.endpoint, 'and its mirror in the box');
  const started = Date.now();
  await page.fill('#free-text', 'a'.repeat(40));
  await page.click('#free-text-form button[type="submit"]');
  await page.waitForFunction(() => document.getElementById('free-text-error').textContent !== '', null, { timeout: 30000 });
  const waited = Date.now() - started;
  const message = await page.text('#free-text-error');
  assert.match(message, /^http:\/\/127\.0\.0\.1:\d+\/test\/slow-tokenizer\/resolve\/[0-9a-f]{40}\/tokenizer\.json \(byte-level BPE\) took more than 2 s to tokenize a text of 40 characters and was stopped: .* The model is still open: try a shorter or different text, or a tokenizer\.json you trust \(the limit is the tokenizer time limit under “Open a model from the Hugging Face Hub”, 2000 ms\)\.$/);
  // not a pass mark on time: the stop comes no earlier than the limit, and well before the 30 s wait ends
  assert.ok(waited >= 2000, `stopped after ${waited} ms`);
  console.log(`    after ${waited} ms: ${message}`);
  const [run] = golden('gpt2-trained');
  await page.fill('#free-text', run.text);
  await page.click('#free-text-form button[type="submit"]');
  await waitForExplorer(page, (text) => window.explorer.sentence?.text === text && window.explorer.busy === 0, run.text, 30000);
  assert.equal(await page.evaluate(() => document.getElementById('free-text-error').hidden), true, 'the message goes once a text is typed');
  const worst = await worstAgainst(run);
  assert.ok(worst <= TOLERANCE, `the next text's layers differ from PyTorch by ${worst}`);

  // the page's control: a value out of bounds is said and changes nothing; another limit opens
  // the model again with it, from the cache, and the link keeps it
  await page.evaluate(() => { document.getElementById('hub-box').open = true; });
  await page.fill('#tokenize-time-limit', '50');
  await page.press('#tokenize-time-limit', 'Tab');
  assert.equal(await page.text('#source-error'), 'The tokenizer time limit: expected a number of milliseconds from 100 to 600000 (5000 unless set), got "50"');
  assert.equal(await page.evaluate(() => window.explorer.spec.tokenizeTimeLimit), 2000);
  const at = hub.requests.length;
  await page.fill('#tokenize-time-limit', '3000');
  await page.press('#tokenize-time-limit', 'Tab');
  await waitForExplorer(page, () => window.explorer.spec?.tokenizeTimeLimit === 3000 && window.explorer.source?.model && window.explorer.busy === 0, null, 60000);
  assert.equal(await page.evaluate(() => document.getElementById('source-error').hidden), true);
  assert.deepEqual(requestsSince(at), [], 'opened again from Cache Storage');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('tokenize-time-limit') === '3000', null, { timeout: 10000 });
  await page.fill('#tokenize-time-limit', '5000');
  await page.press('#tokenize-time-limit', 'Tab');
  await waitForExplorer(page, () => window.explorer.spec?.tokenizeTimeLimit === undefined && window.explorer.source?.model && window.explorer.busy === 0, null, 60000);
  await page.waitForFunction(() => !new URLSearchParams(location.search).has('tokenize-time-limit'), null, { timeout: 10000 });

  // a link's bad limit: its message and the designed heads
  await open(link('test/slow-tokenizer', '&tokenize-time-limit=fast'));
  assert.match(await page.text('#url-note'), /tokenize-time-limit: expected a number of milliseconds from 100 to 600000 \(5000 unless set\), got "fast"; showing the default/);
  assert.equal(await page.evaluate(() => window.explorer.source.id), 'designed');

  // the element's attribute: a bad one is its error; a good one opens the model with that limit
  await page.evaluate(async (endpoint) => {
    await import('/element/mha-explorer.js');
    const element = document.createElement('mha-explorer');
    element.id = 'limit-element';
    element.setAttribute('model', 'test/slow-tokenizer');
    element.setAttribute('hub-endpoint', endpoint);
    element.setAttribute('tokenize-time-limit', '2 s');
    document.body.append(element);
  }, hub.endpoint);
  await page.waitForFunction(() => document.getElementById('limit-element')?.status === 'error', null, { timeout: 30000 });
  assert.match(await page.evaluate(() => document.getElementById('limit-element').shadowRoot.textContent), /Cannot show this: tokenize-time-limit: expected a number of milliseconds from 100 to 600000 \(5000 unless set\), got "2 s"/);
  await page.evaluate(() => document.getElementById('limit-element').setAttribute('tokenize-time-limit', '1500'));
  await page.waitForFunction(() => document.getElementById('limit-element').status === 'ready', null, { timeout: 60000 });
  await page.evaluate(() => document.getElementById('limit-element').setAttribute('sentence', 'a'.repeat(40)));
  await page.waitForFunction(() => document.getElementById('limit-element').status === 'error', null, { timeout: 30000 });
  assert.match(await page.evaluate(() => document.getElementById('limit-element').shadowRoot.textContent), /took more than 1\.5 s to tokenize a text of 40 characters and was stopped: .*\(the limit is the attribute tokenize-time-limit, 1500 ms\)\./);
  await page.evaluate(() => document.getElementById('limit-element').remove());
  assert.deepEqual(errors, []);
});

test('a slow download: what will be fetched and whether it fits, progress per file, and Stop', { engines: 'chromium', why: 'faults', timeout: 120000 }, async () => {
  await open('');
  await page.evaluate(async (endpoint) => {
    await (await import('/lib/models.js')).deleteCachedModel('test/gpt2-slow');
    document.getElementById('hub-endpoint').value = endpoint;
    document.getElementById('hub-box').open = true;
  }, hub.endpoint);
  await page.fill('#hub-id', 'test/gpt2-slow');
  await page.click('#hub-form button[type="submit"]');
  await page.waitForFunction(() => /model\.safetensors \(file 2 of 3\): 0\.[1-9]/.test(document.getElementById('source-progress-text').textContent), null, { timeout: 30000 });
  const shown = await page.text('#source-progress-text');
  assert.match(shown, /^test\/gpt2-slow at [0-9a-f]{7}: 3 files, 167 kB, 167 kB to download; it fits in this tab's memory\. model\.safetensors \(file 2 of 3\): 0\.\d of 0\.2 MB$/);
  assert.equal(await page.evaluate(() => document.getElementById('source-stop').hidden), false);
  await page.click('#source-stop');
  await waitForExplorer(page, () => window.explorer.busy === 0 && !window.explorer.loading, null, 30000);
  assert.match(await page.text('#source-error'), /Stopped: model “test\/gpt2-slow” was not opened/);
  assert.equal(await page.evaluate(() => window.explorer.source.id), 'designed');
  assert.equal(await page.evaluate(() => document.getElementById('source-progress').hidden), true);
  console.log(`    ${shown}`);
  await page.evaluate(() => window.explorer.useSource({ id: 'random', seed: 3 }));
  await waitForExplorer(page, () => window.explorer.source?.id === 'random' && window.explorer.busy === 0, null, 60000);
  assert.deepEqual(errors, []);
});
