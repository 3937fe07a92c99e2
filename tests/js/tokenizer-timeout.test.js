// A tokenizer.json that takes without end on a text (a stranger's, from the Hub) is stopped: the
// text is tokenized in a thread of its own, which is ended after the time limit and started
// again; the call rejects with TIMEOUT naming the tokenizer and the text's length, and the model
// goes on working. The hostile tokenizer is the trained GPT-2's with a Split pre-tokenizer
// (a+)+b put first (mimic-hub.js's slowTokenizer): 40 a's take hours.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadModel, loadWorkerModel, TOKENIZE_TIME_LIMIT } from '../../web/lib/models.js';
import { MODELS_DIR } from './model-server.js';
import { slowTokenizer } from './mimic-hub.js';
import { withNodeWorkers } from './node-web-worker.js';

const NAME = 'gpt2-trained';
const TEXT = 'the king follows himself.';
const HOSTILE_TEXT = 'a'.repeat(40);
const LIMIT = 1000;

const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'mha-hostile-'));
for (const file of ['config.json', 'model.safetensors']) fs.copyFileSync(path.join(MODELS_DIR, NAME, file), path.join(folder, file));
fs.writeFileSync(path.join(folder, 'tokenizer.json'), slowTokenizer(fs.readFileSync(path.join(MODELS_DIR, NAME, 'tokenizer.json'))));
after(() => fs.rmSync(folder, { recursive: true, force: true }));

const reference = await loadModel(path.join(MODELS_DIR, NAME));
const expectedIds = reference.encode(TEXT);
const expectedWeights = Array.from(reference.run(expectedIds).layers[1].weights.data);
reference.dispose();

/** Asserts a TIMEOUT naming the tokenizer, the text's length and the setting; prints it. */
function timedOut(setting) {
  return (error) => {
    assert.equal(error.name, 'MhaError', String(error));
    assert.equal(error.code, 'TIMEOUT', error.message);
    assert.match(error.message, /tokenizer\.json \(byte-level BPE\) took more than 1 s to tokenize a text of 40 characters and was stopped/);
    assert.match(error.message, /The model is still open/);
    assert.ok(error.message.includes(`(the limit is ${setting}, ${LIMIT} ms)`), error.message);
    console.log(`    stopped as expected: ${error.message}`);
    return true;
  };
}

test('the hostile tokenizer reads other text as before; its time on runs of a\'s is printed (the tests below show it stopped)', async () => {
  const model = await loadModel(folder);
  try {
    assert.deepEqual(model.encode(TEXT), expectedIds);
    // on this thread, without a limit: each a more about doubles the time (printed, not a pass
    // mark: a timing on a shared machine; the stop tests below need it over the limit at 40)
    const time = (n) => {
      const start = performance.now();
      model.encode('a'.repeat(n));
      return performance.now() - start;
    };
    time(12);
    const t17 = time(17);
    const t21 = time(21);
    console.log(`    17 a's: ${t17.toFixed(1)} ms, 21 a's: ${t21.toFixed(1)} ms on this thread`);
  } finally {
    model.dispose();
  }
});

test('Model.tokenizerWorker: a text over the limit is stopped with TIMEOUT; the tokenizer and the model work on', { timeout: 60_000 }, async () => {
  const model = await loadModel(folder);
  const tokenizing = model.tokenizerWorker({ timeLimit: LIMIT });
  try {
    assert.equal(tokenizing.timeLimit, LIMIT);
    assert.equal(model.tokenizerWorker().timeLimit, TOKENIZE_TIME_LIMIT);
    assert.deepEqual(await tokenizing.encode(TEXT), expectedIds);
    const start = performance.now();
    await assert.rejects(tokenizing.encode(HOSTILE_TEXT), timedOut('the option timeLimit'));
    const waited = performance.now() - start;
    assert.ok(waited >= LIMIT && waited < LIMIT + 20000, `stopped after ${waited} ms`); // unstopped, 40 a's would take days
    // a text sent at once after it is tokenized by the new worker
    const ids = await tokenizing.encode(TEXT);
    assert.deepEqual(ids, expectedIds);
    assert.deepEqual(Array.from(model.run(ids).layers[1].weights.data), expectedWeights);
    await assert.rejects(tokenizing.encode(42), { code: 'INVALID_ARGUMENT', message: /expected a string, got 42/ });
    assert.throws(() => model.tokenizerWorker({ timeLimit: -1 }), { code: 'INVALID_ARGUMENT', message: /tokenizeTimeLimit must be a number of milliseconds > 0, got -1/ });
  } finally {
    tokenizing.dispose();
    model.dispose();
  }
  await assert.rejects(tokenizing.encode(TEXT), { code: 'DISPOSED' });
});

test('loadWorkerModel: encode, run and headImportance of a text over tokenizeTimeLimit reject with TIMEOUT; the model works on', { timeout: 60_000 }, async () => {
  await withNodeWorkers(async () => {
    await assert.rejects(loadWorkerModel(folder, { tokenizeTimeLimit: 'soon' }), { code: 'INVALID_ARGUMENT', message: /tokenizeTimeLimit must be a number of milliseconds > 0, got string/ });
    const model = await loadWorkerModel(folder, { tokenizeTimeLimit: LIMIT });
    try {
      assert.deepEqual(await model.encode(TEXT), expectedIds);
      await assert.rejects(model.run(HOSTILE_TEXT), timedOut('the option tokenizeTimeLimit'));
      await assert.rejects(model.headImportance(`${HOSTILE_TEXT}`), timedOut('the option tokenizeTimeLimit'));
      const result = await model.run(TEXT);
      assert.deepEqual(result.ids, expectedIds);
      assert.deepEqual(Array.from(result.layers[1].weights.data), expectedWeights);
    } finally {
      model.dispose();
    }
  });
});

test('npm run model: a text over --tokenize-time-limit gives its error line; the texts after it are run', { timeout: 60_000 }, () => {
  const script = fileURLToPath(new URL('../../scripts/commands/model.js', import.meta.url));
  const r = spawnSync(process.execPath, [script, '--json', '--no-build', '--tokenize-time-limit', String(LIMIT), '--model', folder], {
    input: `${TEXT}\n${HOSTILE_TEXT}\n${TEXT}\n`, encoding: 'utf8', timeout: 50_000,
  });
  assert.equal(r.status, 1, r.stderr);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, 3);
  assert.deepEqual(lines[0].ids, expectedIds);
  assert.deepEqual(lines[2], lines[0]);
  assert.equal(lines[1].error.code, 'TIMEOUT');
  assert.ok(lines[1].error.message.startsWith(`${path.join(folder, 'tokenizer.json')} (byte-level BPE) took more than 1 s to tokenize a text of 40 characters`), lines[1].error.message);
  assert.ok(lines[1].error.message.includes('(the limit is --tokenize-time-limit, 1000 ms)'), lines[1].error.message);
  assert.match(r.stderr, /1 of 3 texts could not be run/);
});
