// Which core loadMha() loads in each engine (tests/browser/driver.js): the pthreads core (2
// threads) on a page served crossOriginIsolated (COOP same-origin + COEP require-corp), with the
// same numbers as the single-thread core; the single-thread core on a page that is not, where
// asking for threads is a clear error. Also in a Web Worker of an isolated page
// (createWorkerMha). An engine that does not isolate the page (no SharedArrayBuffer) says so,
// and the test checks the fallback there: the single-thread core, and threads: true refused.
// The models the same way (loadModel, loadWorkerModel: the models' pthreads module, bit for bit
// the single-thread module's numbers, PyTorch's on the lesson's example model; on a page that is
// not isolated, the single-thread module with the isolated page's numbers). The lesson page
// as `npm start` serves it (scripts/serve/serve.js, SERVE_HEADERS): cross-origin isolated, its
// models on threads, and the iframe embed and the element still loading on a course page of
// another origin, isolated or not.
// All of it in every engine (threads and workers are the engine's). One page for the file: the
// isolated server's blank page for the first tests, then the plain server's.
//
//   node --test tests/browser/threads.test.js

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVE_HEADERS } from '../../scripts/serve/serve.js';
import { BLANK_PAGE, ENGINE, ensureVendored, launch, note, serve, test } from './driver.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const ISOLATION = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

let plain;
let isolated;
let browser;
let page = null;
const errors = [];

before(async () => {
  for (const file of ['mha_core_threads.wasm', 'mha_models_threads.wasm']) {
    assert.ok(existsSync(path.join(root, 'web/lib/wasm/threads', file)), `expected web/lib/wasm/threads/${file}: run "npm run build" first`);
  }
  ensureVendored();
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

// The lesson's example model (tests/golden/models/gpt2-trained) and its first golden sentence.
const LESSON_MODEL = '/examples/models/gpt2-lesson/';
const lessonRun = () => {
  const run = JSON.parse(readFileSync(path.join(root, 'tests/golden/models/gpt2-trained.golden.json'), 'utf8')).dtypes.F32.runs[0];
  return { text: run.text, ids: run.ids, attentions: run.attentions.flat(Infinity) };
};

// In the page: files of a random GPT-2 wide enough that every GEMM and the attention split
// between the threads (width 128, 64 tokens), as { 'config.json', 'model.safetensors' }.
async function randomWideGpt2() {
  const { toSafetensors } = await import('/lib/safetensors.js');
  const E = 128, H = 4, L = 2, V = 500, P = 64;
  let seed = 7;
  const values = (n) => Float32Array.from({ length: n }, () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 0.2);
  const tensors = { 'transformer.wte.weight': { data: values(V * E), shape: [V, E] }, 'transformer.wpe.weight': { data: values(P * E), shape: [P, E] } };
  const norm = (name) => {
    tensors[`${name}.weight`] = { data: Float32Array.from(values(E), (v) => 1 + v), shape: [E] };
    tensors[`${name}.bias`] = { data: values(E), shape: [E] };
  };
  for (let l = 0; l < L; ++l) {
    norm(`transformer.h.${l}.ln_1`);
    norm(`transformer.h.${l}.ln_2`);
    for (const [name, rows, cols] of [['attn.c_attn', E, 3 * E], ['attn.c_proj', E, E], ['mlp.c_fc', E, 4 * E], ['mlp.c_proj', 4 * E, E]]) {
      tensors[`transformer.h.${l}.${name}.weight`] = { data: values(rows * cols), shape: [rows, cols] };
      tensors[`transformer.h.${l}.${name}.bias`] = { data: values(cols), shape: [cols] };
    }
  }
  norm('transformer.ln_f');
  const config = { architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', activation_function: 'gelu_new', layer_norm_epsilon: 1e-5,
    n_positions: P, n_embd: E, n_head: H, n_layer: L, n_inner: null, vocab_size: V };
  return { 'config.json': JSON.stringify(config), 'model.safetensors': toSafetensors(tensors) };
}

// In the page: the example model and the wide random one on loadModel()'s default module and
// on the single-thread one (or in a worker): threads, |default - single|, |default - PyTorch|.
async function compareModels({ run, source, worker }) {
  // each step as it starts, so that a run that never finishes says where it stopped (compared())
  const steps = [];
  window[Symbol.for('mha-threads-steps')] = steps;
  const step = (what) => steps.push(`${Math.round(performance.now())} ms: ${what}`);
  step('import /lib/models.js');
  const { loadModel, loadWorkerModel, modelThreadsAvailable } = await import('/lib/models.js');
  const randomWide = (0, eval)(`(${source})`);
  const ids = Array.from({ length: 64 }, (_, i) => (i * 37 + 11) % 500);
  const flat = (r) => [...r.layers.flatMap((l) => Array.from(l.weights.data)), ...Array.from(r.logits.data)];
  const worst = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);
  // FNV-1a over the float32 bits: equal digests, the same numbers bit for bit
  const digest = (values) => new Uint32Array(Float32Array.from(values).buffer).reduce((h, v) => Math.imul(h ^ v, 16777619) >>> 0, 2166136261).toString(16);
  const open = worker ? loadWorkerModel : loadModel;
  const t0 = performance.now();
  step(`open the lesson's model${worker ? ' in a worker' : ''}`);
  const lesson = await open(run.url);
  step('run it');
  const lessonRun = await lesson.run(run.text);
  step(`open the wide model${worker ? ' in a worker' : ''}`);
  const wide = await open(await randomWide());
  const t1 = performance.now();
  step('run it');
  const wideRun = await wide.run(ids);
  const ms = performance.now() - t1;
  step('open both on the single-thread module');
  const singleWide = await loadModel(await randomWide(), { threads: false });
  const singleLesson = await loadModel(run.url, { threads: false });
  step('compare');
  const result = {
    crossOriginIsolated: globalThis.crossOriginIsolated, available: modelThreadsAvailable(), sharedArrayBuffer: typeof SharedArrayBuffer,
    threads: [lesson.threads, wide.threads, singleWide.threads],
    pytorch: worst(lessonRun.layers.flatMap((l) => Array.from(l.weights.data)), run.attentions),
    lessonDiff: worst(flat(lessonRun), flat(singleLesson.run(run.text))),
    wideDiff: worst(flat(wideRun), flat(singleWide.run(ids))),
    digests: { lesson: digest(flat(lessonRun)), wide: digest(flat(wideRun)) },
    ms: [ms, t1 - t0],
  };
  for (const m of [lesson, wide, singleWide, singleLesson]) m.dispose();
  return result;
}

/**
 * compareModels in the page; one that has not finished in `ms` fails saying which of its steps
 * it was in (the page itself still answers when a worker hangs).
 */
async function compared(args, ms = 90_000) {
  let timer;
  const late = new Promise((resolve) => { timer = setTimeout(resolve, ms, 'late'); });
  const done = page.evaluate(compareModels, args);
  try {
    const first = await Promise.race([done, late]);
    if (first !== 'late') return first;
  } finally {
    clearTimeout(timer);
  }
  done.catch(() => {});
  const steps = await Promise.race([page.evaluate(() => window[Symbol.for('mha-threads-steps')] ?? []), new Promise((resolve) => setTimeout(resolve, 5000, ['(the page did not answer)']))]);
  throw new Error(`compareModels did not finish in ${ms / 1000} s; its steps, the last one unfinished (now ${await page.evaluate(() => Math.round(performance.now())).catch(() => '?')} ms):\n  ${steps.join('\n  ')}`);
}

/** Asserts what compareModels found: threads where the engine has SharedArrayBuffer, the same numbers either way. */
function checkModels(r, where) {
  console.log(`# ${where}: crossOriginIsolated ${r.crossOriginIsolated}, threads ${r.threads.join('/')}; max |threads - single| ` +
    `lesson ${r.lessonDiff.toExponential(2)}, wide ${r.wideDiff.toExponential(2)} (tolerance 0); max |page - PyTorch| ${r.pytorch.toExponential(2)}; ` +
    `wide model forward ${r.ms[0].toFixed(1)} ms`);
  assert.equal(r.crossOriginIsolated, true);
  if (ENGINE === 'webkit' && r.sharedArrayBuffer !== 'function') {
    note(`the page is crossOriginIsolated but has no SharedArrayBuffer: the models run on the single-thread module (${where})`);
    assert.deepEqual(r.threads, [1, 1, 1]);
  } else {
    assert.deepEqual(r.threads, [2, 2, 1]);
  }
  assert.ok(r.pytorch <= 1e-5, `the example model's weights differ from PyTorch by ${r.pytorch}`);
  assert.equal(r.lessonDiff, 0);
  assert.equal(r.wideDiff, 0);
}

// The digests of the isolated page's runs on loadModel()'s default module, for the page that is not isolated.
let isolatedDigests = null;

test('crossOriginIsolated page: loadModel() runs on the models\' pthreads module, with the numbers of the single-thread one', { engines: 'all', why: 'workers', timeout: 120_000 }, async () => {
  await openPage(isolated);
  const run = { ...lessonRun(), url: LESSON_MODEL };
  const r = await compared({ run, source: randomWideGpt2.toString(), worker: false });
  checkModels(r, 'isolated page, loadModel');
  isolatedDigests = r.digests;
});

test('crossOriginIsolated page: loadWorkerModel() runs on the models\' pthreads module in its worker', { engines: 'all', why: 'workers', timeout: 120_000 }, async () => {
  await openPage(isolated);
  const run = { ...lessonRun(), url: LESSON_MODEL };
  checkModels(await compared({ run, source: randomWideGpt2.toString(), worker: true }), 'isolated page, loadWorkerModel');
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

test('page that is not isolated: loadModel() runs on the single-thread module, with the isolated page\'s numbers; threads: true is a clear error', { engines: 'all', why: 'workers', timeout: 120_000 }, async () => {
  await openPage(plain);
  const run = { ...lessonRun(), url: LESSON_MODEL };
  const r = await page.evaluate(async ({ run, source }) => {
    const { loadModel, modelThreadsAvailable } = await import('/lib/models.js');
    const randomWide = (0, eval)(`(${source})`);
    const ids = Array.from({ length: 64 }, (_, i) => (i * 37 + 11) % 500);
    const flat = (r) => [...r.layers.flatMap((l) => Array.from(l.weights.data)), ...Array.from(r.logits.data)];
    const digest = (values) => new Uint32Array(Float32Array.from(values).buffer).reduce((h, v) => Math.imul(h ^ v, 16777619) >>> 0, 2166136261).toString(16);
    const lesson = await loadModel(run.url);
    const refused = await loadModel(run.url, { threads: true }).then(() => null, (e) => ({ name: e.name, code: e.code, message: e.message }));
    const lessonRun = lesson.run(run.text);
    const wide = await loadModel(await randomWide());
    const wideRun = wide.run(ids);
    const weights = lessonRun.layers.flatMap((l) => Array.from(l.weights.data));
    const result = {
      crossOriginIsolated: globalThis.crossOriginIsolated, available: modelThreadsAvailable(), threads: [lesson.threads, wide.threads], refused,
      pytorch: weights.reduce((m, v, i) => Math.max(m, Math.abs(v - run.attentions[i])), 0),
      digests: { lesson: digest(flat(lessonRun)), wide: digest(flat(wideRun)) },
    };
    lesson.dispose();
    wide.dispose();
    return result;
  }, { run, source: randomWideGpt2.toString() });
  console.log(`# plain page: loadModel() threads ${r.threads.join('/')}; max |page - PyTorch| ${r.pytorch.toExponential(2)}; digests ${JSON.stringify(r.digests)}, ` +
    `isolated page's ${JSON.stringify(isolatedDigests)}; threads: true -> ${r.refused?.code}: ${r.refused?.message}`);
  assert.deepEqual({ crossOriginIsolated: r.crossOriginIsolated, available: r.available, threads: r.threads }, { crossOriginIsolated: false, available: false, threads: [1, 1] });
  assert.ok(r.pytorch <= 1e-5, `the example model's weights differ from PyTorch by ${r.pytorch}`);
  if (isolatedDigests) assert.deepEqual(r.digests, isolatedDigests, 'the same numbers, bit for bit, as the isolated page\'s (2 threads where it has SharedArrayBuffer)');
  else note('the isolated page\'s loadModel test did not run: the numbers are checked against PyTorch only');
  assert.equal(r.refused?.code, 'INVALID_ARGUMENT');
  assert.match(r.refused.message, /crossOriginIsolated/);
});

test('the lesson page as npm start serves it: cross-origin isolated, its models on threads; the iframe embed and the element load on a course page of another origin, isolated or not', { engines: 'all', why: 'network', timeout: 240_000 }, async () => {
  const started = await serve({ root: path.join(root, 'web'), headers: SERVE_HEADERS });
  const site = mkdtempSync(path.join(tmpdir(), 'mha-course-'));
  // one of the lesson's examples, tagged at build time: the element from another origin starts no tagger worker
  const sentence = 'The cat sat on the mat because it was tired.';
  writeFileSync(path.join(site, 'index.html'), `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A course page</title>
<script type="module" src="${started.url}element/mha-explorer.js"></script></head>
<body><h1>Attention, from the npm start server</h1>
<mha-explorer id="element" view="grid" sentence="${sentence}"></mha-explorer>
<iframe id="embed" src="${started.url}embed.html?sentence=${encodeURIComponent(sentence)}&view=single" width="600" height="420" title="Multi-head attention explorer"></iframe>
</body></html>`);
  const course = await serve({ root: site });
  const isolatedCourse = await serve({ root: site, headers: { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' } });
  const lesson = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const problems = [];
  lesson.on('pageError', (message) => problems.push(`page error: ${message}`));
  try {
    await lesson.goto(started.url);
    await lesson.waitForFunction(() => document.body.dataset.status === 'ok' || document.body.dataset.status === 'error', null, { timeout: 60_000 });
    const state = await lesson.evaluate(async (url) => {
      const { loadModel } = await import('/lib/models.js');
      const model = await loadModel(url);
      const threads = model.threads;
      model.dispose();
      return { status: document.body.dataset.status, crossOriginIsolated: globalThis.crossOriginIsolated, sharedArrayBuffer: typeof SharedArrayBuffer, threads };
    }, LESSON_MODEL);
    console.log(`# the lesson page as npm start serves it: ${JSON.stringify(state)}`);
    assert.equal(state.status, 'ok');
    assert.equal(state.crossOriginIsolated, true);
    assert.equal(state.threads, ENGINE === 'webkit' && state.sharedArrayBuffer !== 'function' ? 1 : 2);

    for (const [name, server] of [['course page', course], ['crossOriginIsolated course page', isolatedCourse]]) {
      await lesson.goto(server.url);
      await lesson.waitForFunction(() => ['ready', 'error'].includes(document.getElementById('element')?.status), null, { timeout: 90_000 });
      const element = await lesson.evaluate(() => {
        const e = document.getElementById('element');
        return { status: e.status, message: e.shadowRoot.querySelector('.status').textContent, heads: e.result?.numHeads, isolated: globalThis.crossOriginIsolated };
      });
      const frame = (await lesson.frames()).find((f) => f.url.includes('/embed.html'));
      assert.ok(frame, `${name}: the iframe embed is among the page's frames`);
      await frame.waitForFunction(() => ['ready', 'error'].includes(document.querySelector('mha-explorer')?.status), null, { timeout: 90_000 });
      const embedded = await frame.evaluate(() => {
        const e = document.querySelector('mha-explorer');
        return { status: e.status, message: e.shadowRoot.querySelector('.status').textContent, heads: e.result?.numHeads, isolated: globalThis.crossOriginIsolated };
      });
      console.log(`# ${name} (${server.url}): element ${element.status} (${element.heads} heads), iframe embed ${embedded.status} (${embedded.heads} heads); crossOriginIsolated: page ${element.isolated}, embed ${embedded.isolated}`);
      assert.equal(element.isolated, server === isolatedCourse);
      assert.equal(element.status, 'ready', `${name}: the element: ${element.message}`);
      assert.equal(embedded.status, 'ready', `${name}: the iframe embed: ${embedded.message}`);
      assert.equal(element.heads, 8);
      assert.equal(embedded.heads, 8);
    }
    await lesson.flushEvents();
    assert.deepEqual(problems, []);
  } finally {
    await lesson.close();
    await Promise.all([started.close(), course.close(), isolatedCourse.close()]);
    rmSync(site, { recursive: true, force: true });
  }
});

test('no page errors', { engines: 'all', why: 'errors' }, async () => {
  if (page) await page.flushEvents();
  assert.deepEqual(errors, []);
});
