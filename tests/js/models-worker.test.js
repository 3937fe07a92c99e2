// loadWorkerModel(): the model opened in a worker (worker_threads under the browser's Worker
// interface, tests/js/node-web-worker.js, running web/lib/models-worker-entry.js) gives what
// loadModel() gives on this thread, bit for bit, from a folder path, a folder URL over HTTP,
// Files and bytes; results come back as typed arrays; bytes are moved, not copied; errors keep
// their code and message and the model works on after one; dispose and abort end the worker.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { File as BufferFile } from 'node:buffer'; // Node 18 has File only here
import { loadModel, loadWorkerModel } from '../../web/lib/models.js';
import { MODELS_DIR, serveModels } from './model-server.js';
import { withNodeWorkers } from './node-web-worker.js';

const NAME = 'gpt2-trained';
const TEXT = 'the king follows himself.';
const read = (file, name = NAME) => fs.readFileSync(path.join(MODELS_DIR, name, file));

const server = await serveModels();
after(() => server.close());

/** What the model gives on TEXT: the same calls on a Model and a WorkerModel (awaited). */
async function outputs(model) {
  const ids = await model.encode(TEXT);
  const r = await model.run(ids, { ablate: [[1, 2]] });
  for (const layer of r.layers) assert.ok(layer.weights.data instanceof Float32Array && layer.residual.data instanceof Float32Array);
  assert.ok(r.logits.data instanceof Float32Array && r.hidden.data instanceof Float32Array);
  const importance = await model.headImportance(ids);
  assert.ok(importance.data instanceof Float32Array);
  return {
    config: { ...model.config },
    tokenizer: model.tokenizer,
    ids,
    tokens: await model.tokens(ids),
    reading: await model.read(ids),
    weights: r.layers.map((l) => Array.from(l.weights.data)),
    logits: Array.from(r.logits.data),
    hidden: Array.from(r.hidden.data),
    importance: { ...importance, data: Array.from(importance.data) },
    top: await model.top(r, 5),
  };
}

const direct = await loadModel(path.join(MODELS_DIR, NAME));
const expected = await outputs(direct);
direct.dispose();

test('a worker model gives what loadModel gives: from a folder path, a URL, Files, and bytes (moved to the worker)', { timeout: 120_000 }, async () => {
  await withNodeWorkers(async () => {
    const weights = new Uint8Array(read('model.safetensors'));  // owns its buffer: it is moved
    const weightsBytes = weights.byteLength;
    const inputs = [
      ['a folder path', path.join(MODELS_DIR, NAME)],
      ['a folder URL', new URL(server.url(NAME))],
      ['Files', ['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => new (globalThis.File ?? BufferFile)([read(f)], f))],
      ['an object of bytes', { 'config.json': read('config.json').toString('utf8'), 'model.safetensors': weights, 'tokenizer.json': read('tokenizer.json') }],
    ];
    for (const [what, input] of inputs) {
      const started = performance.now();
      const model = await loadWorkerModel(input);
      assert.deepEqual(await outputs(model), expected, what);
      const memory = await model.memory();
      assert.ok(memory.moduleBytes > memory.weightBytes && memory.weightBytes > 0, `${what}: memory ${JSON.stringify(memory)}`);
      model.dispose();
      console.log(`    ${what}: identical (${(performance.now() - started).toFixed(0)} ms with the worker's start)`);
    }
    assert.equal(weights.byteLength, 0, 'the weights\' buffer was transferred to the worker');
    console.log(`    the caller's ${weightsBytes}-byte weights buffer is detached after the load (moved, not copied)`);
  });
});

test('progress from the worker; errors keep their code and message; the model works on after one; dispose', { timeout: 120_000 }, async () => {
  await withNodeWorkers(async () => {
    const events = [];
    const model = await loadWorkerModel(server.url(NAME), { onProgress: (p) => events.push(p) });
    const weights = events.filter((e) => e.file === 'model.safetensors');
    assert.deepEqual(weights.at(-1), { file: 'model.safetensors', loaded: read('model.safetensors').length, total: read('model.safetensors').length });
    console.log(`    ${events.length} progress events from the worker, ${weights.length} for the weights`);

    const local = await loadModel(path.join(MODELS_DIR, NAME));
    for (const [what, call] of [
      ['run with bad ablation', (m) => m.run(TEXT, { ablate: [0, 1] })],
      ['run with a fraction for an id', (m) => m.run([1, 2.5])],
      ['encode a number', (m) => m.encode(42)],
      ['head importance of one token', (m) => m.headImportance([1])],
    ]) {
      let thrown = null;
      try {
        call(local);
      } catch (error) {
        thrown = error;
      }
      assert.ok(thrown, `${what}: loadModel's model throws`);
      await assert.rejects(call(model), (error) => {
        assert.equal(error.name, 'MhaError');
        assert.equal(error.code, thrown.code, what);
        assert.equal(error.message, thrown.message, what);
        return true;
      });
      console.log(`    ${what}, from the worker as on this thread: ${thrown.code}: ${thrown.message}`);
    }
    local.dispose();
    assert.deepEqual(Array.from((await model.run(expected.ids, { ablate: [[1, 2]] })).logits.data), expected.logits, 'works on after the errors');

    await assert.rejects(loadWorkerModel({ 'config.json': JSON.stringify({ ...JSON.parse(read('config.json')), model_type: 'gemma' }), 'model.safetensors': read('model.safetensors') }),
      { name: 'MhaError', code: 'INVALID_CONFIG', message: /config\.json: field 'model_type' is 'gemma'/ });
    await assert.rejects(loadWorkerModel(`${server.base}/models/nothing-here/`), { name: 'MhaError', code: 'MODEL_FILE', message: /nothing-here\/config\.json: HTTP 404/ });

    model.dispose();
    assert.equal(model.disposed, true);
    await assert.rejects(model.run(expected.ids), { name: 'MhaError', code: 'DISPOSED' });
  });
});

test('a signal aborts a worker load; without Web Workers loadWorkerModel says so', { timeout: 60_000 }, async () => {
  await withNodeWorkers(async () => {
    const controller = new AbortController();
    const loading = loadWorkerModel(server.url(NAME), { signal: controller.signal });
    setTimeout(() => controller.abort(), 1);
    await assert.rejects(loading, { name: 'AbortError' });
    await assert.rejects(loadWorkerModel(server.url(NAME), { signal: AbortSignal.abort() }), { name: 'AbortError' });
  });
  await assert.rejects(loadWorkerModel(server.url(NAME)), { name: 'MhaError', code: 'WORKER_ERROR', message: /needs Web Workers/ });
});
