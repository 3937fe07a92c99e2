// The worker API in each engine (tests/browser/driver.js): createWorkerMha() gives the results of the direct call, errors
// with their codes, dispose/terminate; and a large forward pass in the worker leaves the main
// thread free (animation frames keep coming) where the direct call blocks it. All of it in
// every engine (workers are the engine's), in one page.
//
//   node --test tests/browser/worker.test.js

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BLANK_PAGE, launch, serve, test } from './driver.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

let server;
let browser;
let page;
const errors = [];

before(async () => {
  assert.ok(existsSync(path.join(root, 'web/lib/wasm/mha_core.wasm')), 'expected web/lib/wasm/mha_core.wasm: run "npm run build" first');
  server = await serve({ root: path.join(root, 'web') });
  browser = await launch();
  page = await browser.newPage();
  page.on('pageError', (message) => errors.push(message));
  // a blank page of the origin: the tests import the API themselves
  await page.goto(`${server.url}${BLANK_PAGE}`);
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.close();
});

test('the worker call returns what the direct call returns', { engines: 'all', why: 'workers' }, async () => {
  const result = await page.evaluate(async () => {
    const { loadMha, createWorkerMha } = await import('/lib/index.js');
    const direct = await loadMha();
    const worker = await createWorkerMha();
    const config = { embedDim: 32, numHeads: 4, numKvHeads: 2, batchFirst: true, seed: 11 };
    const x = { data: new Float32Array(2 * 9 * 32).map((_, i) => Math.cos(i * 0.37)), shape: [2, 9, 32] };
    const input = { query: x, isCausal: true, averageAttnWeights: false, returnHeadOutputs: true };
    const a = new direct.MultiHeadAttention(config);
    const b = new worker.MultiHeadAttention(config);
    const resolved = await b.ready;
    const ra = a.forward(input);
    const rb = await b.forward(input);
    const diff = (p, q) => p.data.reduce((m, v, i) => Math.max(m, Math.abs(v - q.data[i])), 0);
    const statsA = direct.headStatistics(ra.weights).heads[0].entropy;
    const statsB = (await worker.headStatistics(rb.weights)).heads[0].entropy;
    const names = await b.parameterNames();
    const inputKept = x.data.length; // inputs are copied, not transferred
    a.dispose();
    await b.dispose();
    worker.terminate();
    return {
      output: diff(ra.output, rb.output), weights: diff(ra.weights, rb.weights), heads: diff(ra.headOutputs, rb.headOutputs),
      shapes: [rb.output.shape, rb.weights.shape], statsA, statsB, names, inputKept, numKvHeads: resolved.numKvHeads,
    };
  });
  console.log(`  direct vs worker: output max |diff| ${result.output}, weights ${result.weights}, head outputs ${result.heads} (expected 0: the same core)`);
  assert.equal(result.output, 0);
  assert.equal(result.weights, 0);
  assert.equal(result.heads, 0);
  assert.deepEqual(result.shapes, [[2, 9, 32], [2, 4, 9, 9]]);
  assert.equal(result.statsA, result.statsB);
  assert.equal(result.numKvHeads, 2);
  assert.equal(result.inputKept, 2 * 9 * 32);
  assert.deepEqual(result.names, ['q_proj_weight', 'k_proj_weight', 'v_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']);
});

test('errors cross the worker as MhaError with their codes', { engines: 'all', why: 'workers' }, async () => {
  const result = await page.evaluate(async () => {
    const { createWorkerMha, MhaError } = await import('/lib/index.js');
    const worker = await createWorkerMha();
    const caught = async (promise) => {
      try {
        await promise;
        return 'no error';
      } catch (error) {
        return `${error instanceof MhaError ? 'MhaError' : error.name} ${error.code}: ${error.message}`;
      }
    };
    const bad = new worker.MultiHeadAttention({ embedDim: 10, numHeads: 3 });
    const good = new worker.MultiHeadAttention({ embedDim: 8, numHeads: 2 });
    const out = {
      ready: await caught(bad.ready),
      forwardOnBad: await caught(bad.forward({ query: { data: new Float32Array(10), shape: [1, 10] } })),
      shape: await caught(good.forward({ query: { data: new Float32Array(12), shape: [2, 6] } })),
      unknown: await caught(good.getParameter('nope')),
    };
    await good.dispose();
    out.disposed = await caught(good.forward({ query: { data: new Float32Array(8), shape: [1, 8] } }));
    const pending = worker.MultiHeadAttention && new worker.MultiHeadAttention({ embedDim: 8, numHeads: 2 }).ready;
    worker.terminate();
    out.terminated = await caught(pending);
    out.after = await caught(worker.heapBytes());
    return out;
  });
  for (const [k, v] of Object.entries(result)) console.log(`  ${k}: ${v}`);
  assert.match(result.ready, /^MhaError INVALID_CONFIG: .*divisible|^MhaError INVALID_CONFIG: .*3/);
  assert.equal(result.forwardOnBad, result.ready);
  assert.match(result.shape, /^MhaError (SHAPE_MISMATCH|INVALID_ARGUMENT): /);
  assert.match(result.unknown, /^MhaError UNKNOWN_PARAMETER: .*nope/);
  assert.match(result.disposed, /^MhaError DISPOSED: /);
  assert.match(result.terminated, /^MhaError WORKER_ERROR: .*terminated/);
  assert.match(result.after, /^MhaError WORKER_ERROR: /);
});

test('a large forward pass in the worker leaves the main thread free; the direct call blocks it', { engines: 'all', why: 'workers' }, async () => {
  const result = await page.evaluate(async () => {
    const { loadMha, createWorkerMha } = await import('/lib/index.js');
    const L = 384;
    const E = 512;
    const config = { embedDim: E, numHeads: 8, batchFirst: true, seed: 3 };
    const x = { data: new Float32Array(L * E).map((_, i) => Math.sin(i * 0.01)), shape: [1, L, E] };
    /** While `work` runs: how many timer tasks the main thread ran, the longest wait between
     *  them, and how long the work took. A timer chain (not animation frames) because a loaded
     *  machine's compositor delays frames even when the main thread is idle. */
    async function mainThreadTasks(work) {
      let ticks = 0;
      let last = 0;
      let longest = 0;
      let running = true;
      const tick = () => {
        if (!running) return;
        const now = performance.now();
        longest = Math.max(longest, now - last);
        last = now;
        ticks += 1;
        setTimeout(tick, 0);
      };
      const started = performance.now();
      last = started;
      setTimeout(tick, 0);
      await work();
      running = false;
      const ms = performance.now() - started;
      longest = Math.max(longest, performance.now() - last);
      return { ticks, longest, ms };
    }
    const worker = await createWorkerMha();
    const remote = new worker.MultiHeadAttention(config);
    await remote.ready;
    await remote.forward({ query: x });
    const REPEAT = 5;
    const inWorker = await mainThreadTasks(async () => {
      for (let i = 0; i < REPEAT; i += 1) await remote.forward({ query: x });
    });
    const direct = new (await loadMha()).MultiHeadAttention(config);
    direct.forward({ query: x });
    const onMain = await mainThreadTasks(async () => {
      for (let i = 0; i < REPEAT; i += 1) direct.forward({ query: x });
    });
    direct.dispose();
    await remote.dispose();
    worker.terminate();
    return { inWorker, onMain };
  });
  const { inWorker, onMain } = result;
  console.log(`  L=384, E=512, 5 forwards: in the worker ${inWorker.ms.toFixed(0)} ms, the main thread ran ${inWorker.ticks} timer tasks meanwhile (longest wait ${inWorker.longest.toFixed(0)} ms); on the main thread ${onMain.ms.toFixed(0)} ms, ${onMain.ticks} tasks`);
  // The direct call holds the main thread: no task runs until it returns.
  assert.equal(onMain.ticks, 0, 'no task ran during the direct call');
  // In the worker the main thread keeps running tasks throughout: many of them, and never a wait
  // of half the computation (a single blocked stretch would be about all of it).
  assert.ok(inWorker.ticks >= 10, `the main thread ran only ${inWorker.ticks} tasks in ${inWorker.ms.toFixed(0)} ms while the worker computed`);
  assert.ok(inWorker.longest < inWorker.ms * 0.5,
    `the main thread waited ${inWorker.longest.toFixed(0)} ms for a task while the worker computed for ${inWorker.ms.toFixed(0)} ms`);
  await page.flushEvents();
  assert.deepEqual(errors, []);
});
