// Which core loadMha() loads in each engine (tests/browser/driver.js): the pthreads core (2
// threads) on a page served crossOriginIsolated (COOP same-origin + COEP require-corp), with the
// same numbers as the single-thread core; the single-thread core on a page that is not, where
// asking for threads is a clear error. Also in a Web Worker of an isolated page
// (createWorkerMha). An engine that does not isolate the page (no SharedArrayBuffer) says so,
// and the test checks the fallback there: the single-thread core, and threads: true refused.
// All of it in every engine (threads and workers are the engine's). One page for the file: the
// isolated server's blank page for the first two tests, then the plain server's.
//
//   node --test tests/browser/threads.test.js

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BLANK_PAGE, ENGINE, launch, note, serve, test } from './driver.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const ISOLATION = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

let plain;
let isolated;
let browser;
let page = null;
const errors = [];

before(async () => {
  assert.ok(existsSync(path.join(root, 'web/lib/wasm/threads/mha_core_threads.wasm')),
    'expected web/lib/wasm/threads/mha_core_threads.wasm: run "npm run build" first');
  plain = await serve({ root: path.join(root, 'web') });
  isolated = await serve({ root: path.join(root, 'web'), headers: ISOLATION });
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  if (plain) await plain.close();
  if (isolated) await isolated.close();
});

/** The file's page at `server`'s origin (the page it is on, else it goes there). */
async function openPage(server) {
  if (!page) {
    page = await browser.newPage();
    page.on('pageError', (message) => errors.push(message));
  }
  // a blank page of the origin: the tests import the API themselves
  const url = `${server.url}${BLANK_PAGE}`;
  if (page.url() !== url) await page.goto(url);
  return page;
}

// In the page: the same forward pass on both cores (big enough that the threads split it).
async function compareCores() {
  const { loadMha, threadsAvailable } = await import('/lib/index.js');
  const auto = await loadMha();
  const single = await loadMha({ threads: false });
  const config = { embedDim: 128, numHeads: 8, batchFirst: true, seed: 5 };
  const L = 300;
  const x = { data: new Float32Array(L * 128).map((_, i) => Math.sin(i * 0.013)), shape: [1, L, 128] };
  const run = (mha, needWeights) => {
    const attention = new mha.MultiHeadAttention(config);
    const t0 = performance.now();
    const r = attention.forward({ query: x, needWeights, isCausal: true });
    const ms = performance.now() - t0;
    attention.dispose();
    return { r, ms };
  };
  const diff = (p, q) => p.data.reduce((m, v, i) => Math.max(m, Math.abs(v - q.data[i])), 0);
  let refused = null;
  if (!threadsAvailable()) await loadMha({ threads: true }).catch((e) => { refused = `${e.name} ${e.code}`; });
  const a = run(auto, true), b = run(single, true);
  const c = run(auto, false), d = run(single, false);
  return {
    crossOriginIsolated: globalThis.crossOriginIsolated, threadsAvailable: threadsAvailable(), refused,
    sharedArrayBuffer: typeof SharedArrayBuffer,
    autoThreads: auto.threads, singleThreads: single.threads,
    output: diff(a.r.output, b.r.output), weights: diff(a.r.weights, b.r.weights),
    streaming: diff(c.r.output, d.r.output), ms: [a.ms, b.ms],
  };
}

test('crossOriginIsolated page: loadMha() loads the pthreads core, with the numbers of the single-thread one', { engines: 'all', why: 'workers' }, async () => {
  await openPage(isolated);
  const r = await page.evaluate(compareCores);
  console.log(`# isolated page: crossOriginIsolated ${r.crossOriginIsolated}, loadMha() threads ${r.autoThreads}; ` +
    `max |threads - single|: output ${r.output.toExponential(2)}, weights ${r.weights.toExponential(2)}, ` +
    `streaming ${r.streaming.toExponential(2)} (tolerance 0); first forward ${r.ms[0].toFixed(1)} ms vs ${r.ms[1].toFixed(1)} ms`);
  assert.equal(r.crossOriginIsolated, true);
  if (ENGINE === 'webkit' && r.sharedArrayBuffer !== 'function') {
    // WebKitGTK isolates the page but exposes no SharedArrayBuffer constructor
    note(`the page is crossOriginIsolated but typeof SharedArrayBuffer is "${r.sharedArrayBuffer}": no pthreads core here; checked instead: loadMha() falls back to the single-thread core, threads: true is refused (${r.refused})`);
    assert.equal(r.threadsAvailable, false);
    assert.equal(r.autoThreads, 1);
    assert.equal(r.refused, 'MhaError INVALID_ARGUMENT');
  } else {
    assert.equal(r.threadsAvailable, true);
    assert.equal(r.autoThreads, 2);
  }
  assert.equal(r.singleThreads, 1);
  assert.equal(r.output, 0);
  assert.equal(r.weights, 0);
  assert.equal(r.streaming, 0);
});

test('crossOriginIsolated page: a Web Worker (createWorkerMha) computes on the pthreads core too', { engines: 'all', why: 'workers' }, async () => {
  await openPage(isolated);
  const r = await page.evaluate(async () => {
    const { loadMha, createWorkerMha } = await import('/lib/index.js');
    const direct = await loadMha({ threads: false });
    const worker = await createWorkerMha();
    const config = { embedDim: 64, numHeads: 4, batchFirst: true, seed: 2 };
    const x = { data: new Float32Array(200 * 64).map((_, i) => Math.cos(i * 0.07)), shape: [1, 200, 64] };
    const a = new direct.MultiHeadAttention(config);
    const b = new worker.MultiHeadAttention(config);
    await b.ready;
    const ra = a.forward({ query: x, needWeights: false });
    const rb = await b.forward({ query: x, needWeights: false });
    const threads = await worker.threads;
    const sharedArrayBuffer = typeof SharedArrayBuffer;
    a.dispose();
    await b.dispose();
    worker.terminate();
    return { threads, sharedArrayBuffer, diff: ra.output.data.reduce((m, v, i) => Math.max(m, Math.abs(v - rb.output.data[i])), 0) };
  });
  console.log(`# worker in an isolated page: threads ${r.threads}, max |worker - single| ${r.diff.toExponential(2)} (tolerance 0)`);
  if (ENGINE === 'webkit' && r.sharedArrayBuffer !== 'function') {
    note(`no SharedArrayBuffer on this isolated page: the worker computes on the single-thread core (threads ${r.threads})`);
    assert.equal(r.threads, 1);
  } else {
    assert.equal(r.threads, 2);
  }
  assert.equal(r.diff, 0);
});

test('page that is not isolated: loadMha() loads the single-thread core; threads: true is a clear error', { engines: 'all', why: 'workers' }, async () => {
  await openPage(plain);
  const r = await page.evaluate(async () => {
    const { loadMha, threadsAvailable } = await import('/lib/index.js');
    const mha = await loadMha();
    let error = null;
    try {
      await loadMha({ threads: true });
    } catch (e) {
      error = { name: e.name, code: e.code, message: e.message };
    }
    const x = { data: new Float32Array(10 * 64).fill(0.5), shape: [10, 64] };
    const attention = new mha.MultiHeadAttention({ embedDim: 64, numHeads: 8, seed: 0 });
    const ok = Number.isFinite(attention.forward({ query: x }).output.data[0]);
    attention.dispose();
    return { crossOriginIsolated: globalThis.crossOriginIsolated, available: threadsAvailable(), threads: mha.threads, error, ok };
  });
  console.log(`# plain page: crossOriginIsolated ${r.crossOriginIsolated}, loadMha() threads ${r.threads}; threads: true -> ${r.error?.code}: ${r.error?.message}`);
  assert.equal(r.crossOriginIsolated, false);
  assert.equal(r.available, false);
  assert.equal(r.threads, 1);
  assert.equal(r.error?.name, 'MhaError');
  assert.equal(r.error?.code, 'INVALID_ARGUMENT');
  assert.match(r.error.message, /crossOriginIsolated/);
  assert.ok(r.ok, 'the single-thread core still computes after the refused request');
});

test('no page errors', { engines: 'all', why: 'errors' }, async () => {
  if (page) await page.flushEvents();
  assert.deepEqual(errors, []);
});
