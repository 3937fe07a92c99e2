// The pretrained encoder in each engine (tests/browser/driver.js), as a page uses it: loadEncoder() fetches the model from
// the page's own origin with progress, keeps it in the Cache Storage (a second load reads no
// byte from the network; a copy of another build is dropped), and gives what Node.js computes; createWorkerEncoder() gives the same
// in a worker; a missing file rejects with MODEL_FILE naming it. All of it runs in every engine:
// the Cache Storage, the worker and the fetch of a missing file are the engine's own.
//
//   node --test tests/browser/encoder.test.js
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launch, limits, note, serve, test } from './driver.js';
import { loadEncoder } from '../../web/lib/encoder.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SENTENCE = 'The keys to the old cabinet are on the kitchen table.';

let server;
let browser;
let page;
let node;
const errors = [];
const modelRequests = [];

before(async () => {
  for (const file of ['web/lib/wasm/mha_encoder.wasm', 'web/models/use-lite/model-f16.safetensors']) {
    assert.ok(existsSync(path.join(root, file)), `expected ${file}: run "npm run build" and "node scripts/build/build-model.js" first`);
  }
  const encoder = await loadEncoder({ dtype: 'float16' });
  node = encoder.encode(SENTENCE);
  encoder.dispose();
  server = await serve({ root: path.join(root, 'web') });
  browser = await launch();
  page = await browser.newPage();
  page.on('pageError', (message) => errors.push(message));
  page.on('request', (url) => { if (url.includes('/models/')) modelRequests.push(url); });
  await page.goto(`${server.url}embed.html`);
  if (await page.requests() !== null) note(limits.requests);
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.close();
});

const sameAsNode = (r) => {
  assert.deepEqual(r.ids, node.ids);
  assert.deepEqual(r.pieces, node.pieces);
  assert.deepEqual(r.words, node.words);
  assert.deepEqual(r.embedding, Array.from(node.embedding));
  assert.deepEqual(r.weights1, Array.from(node.layers[1].weights.data));
};

test('loadEncoder in the page: progress, the same numbers as Node.js, and the second load from the cache', { engines: 'all', why: 'wasm' }, async () => {
  // webkit: the requests of a run are the Resource Timing entries it added
  const run = async () => {
    const before = (await page.requests())?.length;
    const r = await runInPage();
    if (before !== undefined) modelRequests.push(...(await page.requests()).slice(before).filter((u) => u.includes('/models/')));
    return r;
  };
  const runInPage = () => page.evaluate(async (sentence) => {
    const { loadEncoder } = await import('/lib/encoder.js');
    const progress = [];
    const encoder = await loadEncoder({ dtype: 'float16', onProgress: (p) => progress.push(p) });
    const r = encoder.encode(sentence);
    encoder.dispose();
    return { ids: r.ids, pieces: r.pieces, words: r.words, embedding: Array.from(r.embedding), weights1: Array.from(r.layers[1].weights.data), progress, modelUrl: encoder.config.modelUrl };
  }, SENTENCE);
  const first = await run();
  sameAsNode(first);
  assert.equal(first.modelUrl, `${server.url}models/use-lite/`);
  const last = first.progress[first.progress.length - 1];
  assert.equal(last.loaded, last.total);
  assert.ok(first.progress.length > 3);
  const fetchedFirst = modelRequests.filter((u) => /safetensors|vocab/.test(u)).length;
  assert.ok(fetchedFirst >= 2, `the first load fetched ${fetchedFirst} model files`);
  modelRequests.length = 0;
  const second = await run();
  sameAsNode(second);
  assert.deepEqual(modelRequests.filter((u) => /safetensors|vocab/.test(u)), [], 'the second load reads the files from the Cache Storage');
  // a copy of another build of a file is dropped once the current one is fetched
  const keys = await page.evaluate(async () => {
    const cache = await caches.open('mha-explorer-models');
    for (const request of await cache.keys()) if (request.url.includes('vocab.txt')) await cache.delete(request);
    await cache.put(new URL('/models/use-lite/vocab.txt?sha256=0000', location.href).href, new Response('stale'));
    return (await cache.keys()).map((r) => new URL(r.url).pathname + new URL(r.url).search.slice(0, 12));
  });
  assert.ok(keys.includes('/models/use-lite/vocab.txt?sha256=0000'));
  modelRequests.length = 0;
  sameAsNode(await run());
  assert.deepEqual(modelRequests.filter((u) => /safetensors|vocab/.test(u)).map((u) => new URL(u).pathname), ['/models/use-lite/vocab.txt']);
  const after = await page.evaluate(async () => (await (await caches.open('mha-explorer-models')).keys()).map((r) => r.url));
  assert.ok(!after.some((u) => u.endsWith('?sha256=0000')), 'the stale copy is gone');
  assert.ok(after.some((u) => /vocab\.txt\?sha256=[0-9a-f]{64}$/.test(u)), 'the current copy is cached');
  await page.flushEvents();
  assert.deepEqual(errors, []);
});

test('createWorkerEncoder: the same results in a worker; errors keep their codes', { engines: 'all', why: 'workers' }, async () => {
  const r = await page.evaluate(async (sentence) => {
    const { createWorkerEncoder } = await import('/lib/encoder.js');
    const progress = [];
    const encoder = await createWorkerEncoder({ dtype: 'float16', onProgress: (p) => progress.push(p.loaded) });
    const result = await encoder.encode(sentence, { ablate: [] });
    const tokens = await encoder.tokenize(sentence);
    const wO = await encoder.parameter(0, 'out_proj.weight');
    const tooLong = await encoder.encode({ ids: new Array(200).fill(9) }).catch((e) => ({ name: e.name, code: e.code, message: e.message }));
    const after = await encoder.encode(sentence);
    encoder.dispose();
    const disposed = await encoder.encode(sentence).catch((e) => e.code);
    return {
      ids: result.ids, pieces: result.pieces, words: result.words, embedding: Array.from(result.embedding),
      weights1: Array.from(result.layers[1].weights.data), tokenIds: tokens.ids, wOShape: wO.shape,
      tooLong, afterEqual: Array.from(after.embedding).every((v, i) => v === result.embedding[i]), disposed, progress: progress.length,
      config: encoder.config,
    };
  }, SENTENCE);
  sameAsNode(r);
  assert.deepEqual(r.tokenIds, node.ids);
  assert.deepEqual(r.wOShape, [512, 256]);
  assert.equal(r.tooLong.name, 'MhaError');
  assert.equal(r.tooLong.code, 'TOO_LARGE');
  assert.match(r.tooLong.message, /200 tokens; the model takes at most 128/);
  assert.ok(r.afterEqual, 'the worker still encodes after an error');
  assert.equal(r.disposed, 'DISPOSED');
  assert.ok(r.progress > 0, 'progress came from the worker');
  assert.equal(r.config.numLayers, 2);
});

test('a missing model folder rejects with MODEL_FILE naming the file, in the page and in the worker', { engines: 'all', why: 'workers' }, async () => {
  const r = await page.evaluate(async () => {
    const { loadEncoder, createWorkerEncoder } = await import('/lib/encoder.js');
    const direct = await loadEncoder({ modelUrl: '/models/nothing/' }).catch((e) => ({ code: e.code, message: e.message }));
    const worker = await createWorkerEncoder({ modelUrl: '/models/nothing/' }).catch((e) => ({ code: e.code, message: e.message }));
    return { direct, worker };
  });
  for (const e of [r.direct, r.worker]) {
    assert.equal(e.code, 'MODEL_FILE');
    assert.match(e.message, /^manifest\.json: HTTP 404 .*\/models\/nothing\/manifest\.json/);
  }
});
