// Writing on in WebAssembly (Model.extend, Model.generate, web/lib/sampling.js): each greedy
// step is the argmax of a full run of the text so far, and its attention rows are that run's
// last rows; a seed gives the same sampled text again and another seed another text; topK 1 is
// greedy; bad n, temperature, topK and seed, a BERT and a text past max_positions are refused
// with clear errors, and the model keeps working after each; a worker model writes the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../web/lib/models.js';
import { mulberry32, pickToken, samplingOf } from '../../web/lib/sampling.js';

const DIR = fileURLToPath(new URL('../golden/models', import.meta.url));
const filesOf = (name) => Object.fromEntries(['config.json', 'model.safetensors', 'tokenizer.json']
  .map((file) => [file, fs.readFileSync(path.join(DIR, name, file))]));
const PROMPT = [5, 17, 2, 40, 11];

function argmax(row) {
  let best = 0;
  for (let v = 1; v < row.length; ++v) if (row[v] > row[best]) best = v;
  return best;
}

test('greedy writing: each step is the argmax of a full run of the text so far, with that run\'s attention rows', async () => {
  for (const name of ['gpt2-tied', 'llama-gqa', 'mistral-window', 'qwen2-bias-window']) {
    const model = await loadModel(filesOf(name));
    const written = model.generate(10, { prompt: PROMPT });
    assert.equal(written.ids.length, 10);
    assert.equal(written.first, PROMPT.length);
    assert.equal(model.cachedLength(), PROMPT.length + 10);
    const { numLayers: L, numHeads: H, vocabSize: V } = model.config;
    let worstRow = 0;
    for (const [i, step] of written.steps.entries()) {
      const text = [...PROMPT, ...written.ids.slice(0, i)];
      const full = model.run(text);
      const T = text.length;
      assert.equal(step.id, argmax(full.logits.data.subarray((T - 1) * V, T * V)), `${name} step ${i}`);
      assert.equal(step.position, T);
      // step i's rows are those of a run that includes its token: position T
      const withIt = model.run([...text, step.id]);
      for (let l = 0; l < L; ++l) {
        const rows = step.layers[l].weights;
        assert.deepEqual(rows.shape, [H, 1, T + 1]);
        for (let h = 0; h < H; ++h) {
          for (let j = 0; j <= T; ++j) {
            const expected = withIt.layers[l].weights.data[(h * (T + 1) + T) * (T + 1) + j];
            worstRow = Math.max(worstRow, Math.abs(expected - rows.data[h * (T + 1) + j]));
          }
        }
      }
    }
    console.log(`${name}: 10 greedy steps, attention rows max error ${worstRow.toExponential(2)} (tolerance 1e-5)`);
    assert.ok(worstRow <= 1e-5, `${name}: ${worstRow}`);
    model.dispose();
  }
});

test('extend in pieces gives the full run\'s logits; from writes over the text after a position', async () => {
  const model = await loadModel(filesOf('llama-gqa'));
  const text = [...PROMPT, 9, 100, 3, 250, 7];
  const full = model.run(text);
  const V = model.config.vocabSize;
  let at = 0;
  let worst = 0;
  for (const piece of [3, 1, 4, 2]) {
    const r = model.extend(text.slice(at, at + piece), at === 0 ? { from: 0 } : {});
    assert.equal(r.first, at);
    assert.deepEqual(r.logits.shape, [piece, V]);
    for (let i = 0; i < piece * V; ++i) worst = Math.max(worst, Math.abs(r.logits.data[i] - full.logits.data[at * V + i]));
    at += piece;
  }
  assert.ok(worst <= 1e-5, `logits ${worst}`);
  assert.equal(model.cachedLength(), text.length);
  // from: the text after its first 4 positions again, as the full run has them
  const again = model.extend(text.slice(4, 6), { from: 4 });
  assert.equal(again.first, 4);
  assert.equal(model.cachedLength(), 6);
  for (let i = 0; i < 2 * V; ++i) assert.ok(Math.abs(again.logits.data[i] - full.logits.data[4 * V + i]) <= 1e-5);
  assert.throws(() => model.extend([1], { from: 7 }), (error) => error.code === 'INVALID_ARGUMENT' && /from 7: expected 0 to the 6 positions/.test(error.message));
  assert.throws(() => model.extend([1], { from: -1 }), (error) => error.code === 'INVALID_ARGUMENT' && /from must be a whole number >= 0/.test(error.message));
  assert.equal(model.extend(text.slice(0, 2), { from: 0 }).first, 0);
  model.dispose();
});

test('seeded sampling: the same seed writes the same text, another seed another; topK 1 is greedy', async () => {
  const model = await loadModel(filesOf('gpt2-tied'));
  const options = { prompt: PROMPT, temperature: 1.5, topK: 50 };
  const a = model.generate(16, { ...options, seed: 1 }).ids;
  const b = model.generate(16, { ...options, seed: 1 }).ids;
  const c = model.generate(16, { ...options, seed: 2 }).ids;
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
  const greedy = model.generate(12, { prompt: PROMPT }).ids;
  assert.deepEqual(model.generate(12, { prompt: PROMPT, topK: 1, temperature: 3, seed: 9 }).ids, greedy);
  assert.deepEqual(model.generate(12, { prompt: PROMPT, greedy: true }).ids, greedy);
  // writing on from the cached text: the same as writing all at once, greedy or sampled
  model.generate(5, { prompt: PROMPT });
  assert.deepEqual(model.generate(7).ids, greedy.slice(5));
  const sampled = model.generate(12, { ...options, seed: 1 }).ids;
  model.generate(5, { ...options, seed: 1 });
  const onward = [];
  for (let i = 0; i < 7; ++i) onward.push(...model.generate(1, { temperature: 1.5, topK: 50, seed: 1 }).ids);
  assert.deepEqual([...a.slice(0, 12)], sampled);
  assert.deepEqual(onward, sampled.slice(5));
  model.dispose();
});

test('sampling draws by the tempered top-k distribution', () => {
  // logits 2, 1, 0, -inf: at T = 1 and top-k 2, p = e^2 / (e^2 + e), e / (e^2 + e), 0
  const row = Float32Array.from([2, 1, 0, -Infinity]);
  const sampling = samplingOf({ temperature: 1, topK: 2 }, 'test');
  const random = mulberry32(7);
  const counts = [0, 0, 0, 0];
  const draws = 20000;
  for (let i = 0; i < draws; ++i) counts[pickToken(row, sampling, random).id] += 1;
  const p0 = Math.exp(2) / (Math.exp(2) + Math.exp(1));
  console.log(`top-2 draws: ${counts.join(', ')} of ${draws}; expected share of id 0 ${p0.toFixed(4)}`);
  assert.equal(counts[2] + counts[3], 0);
  assert.ok(Math.abs(counts[0] / draws - p0) < 0.02, `${counts[0] / draws} vs ${p0}`);
});

test('bad n, temperature, topK and seed, a BERT and a text past max_positions give clear errors, and the model keeps working', async () => {
  const model = await loadModel(filesOf('gpt2-tied'));
  const expected = model.generate(3, { prompt: PROMPT }).ids;
  const refusals = [
    [() => model.generate(0, { prompt: PROMPT }), /n must be a whole number >= 1, got number 0/],
    [() => model.generate(2.5, { prompt: PROMPT }), /n must be a whole number >= 1/],
    [() => model.generate('3', { prompt: PROMPT }), /n must be a whole number >= 1, got string/],
    [() => model.generate(3, { prompt: PROMPT, temperature: 0 }), /temperature must be a number > 0, got 0/],
    [() => model.generate(3, { prompt: PROMPT, temperature: -1 }), /temperature must be a number > 0, got -1/],
    [() => model.generate(3, { prompt: PROMPT, temperature: NaN }), /temperature must be a number > 0, got NaN/],
    [() => model.generate(3, { prompt: PROMPT, topK: 0 }), /topK must be a whole number >= 1, got 0/],
    [() => model.generate(3, { prompt: PROMPT, topK: 1.5 }), /topK must be a whole number >= 1, got 1.5/],
    [() => model.generate(3, { prompt: PROMPT, seed: -1 }), /seed must be a whole number 0 to 4294967295, got -1/],
    [() => model.generate(3, { prompt: PROMPT, greedy: true, temperature: 2 }), /greedy .* takes no temperature or topK/],
    [() => model.generate(3, null), /expected an options object, got null/],
  ];
  for (const [call, message] of refusals) {
    assert.throws(call, (error) => error.code === 'INVALID_ARGUMENT' && message.test(error.message), String(message));
  }
  const P = model.config.maxPositions;
  assert.throws(() => model.generate(P, { prompt: PROMPT }),
    (error) => error.code === 'TOO_LARGE' && error.message.includes(`${P + PROMPT.length} positions; the model takes at most ${P}`));
  model.extend(Array.from({ length: P }, () => 3), { from: 0 });
  assert.throws(() => model.extend([4]), (error) => error.code === 'TOO_LARGE' && error.message.includes(`at most ${P}`));
  assert.throws(() => model.extend([100000]), (error) => error.code === 'INVALID_ARGUMENT' && /expected 0 to 376/.test(error.message));
  assert.equal(model.cachedLength(), P, 'a refused step leaves the text as it was');
  assert.deepEqual(model.generate(3, { prompt: PROMPT }).ids, expected);

  const bert = await loadModel(filesOf('bert-mlm'));
  assert.throws(() => bert.extend(PROMPT), (error) => error.code === 'INVALID_ARGUMENT' && /causal/.test(error.message) && /BERT/.test(error.message));
  assert.throws(() => bert.generate(2, { prompt: PROMPT }), (error) => error.code === 'INVALID_ARGUMENT' && /next-token/.test(error.message));
  assert.equal(bert.run(PROMPT).ids.length, PROMPT.length);
  bert.dispose();
  model.dispose();
});

test('a worker model writes what the model on this thread writes, a text prompt tokenized in its worker; its errors keep their code', { timeout: 120_000 }, async () => {
  const { withNodeWorkers } = await import('./node-web-worker.js');
  const { loadWorkerModel } = await import('../../web/lib/models.js');
  const direct = await loadModel(filesOf('gpt2-trained'));
  const options = { prompt: 'the king follows', temperature: 1.2, topK: 30, seed: 3 };
  const expected = direct.generate(12, options);
  direct.dispose();
  await withNodeWorkers(async () => {
    const model = await loadWorkerModel(filesOf('gpt2-trained'));
    const got = await model.generate(12, options);
    assert.deepEqual(got.ids, expected.ids);
    assert.deepEqual(got.steps.map((s) => Array.from(s.layers[1].weights.data)), expected.steps.map((s) => Array.from(s.layers[1].weights.data)));
    assert.equal(await model.cachedLength(), expected.first + 12);
    const more = await model.extend(got.ids.slice(0, 2), { from: expected.first });
    assert.deepEqual(more.ids, got.ids.slice(0, 2));
    await assert.rejects(model.generate(3, { topK: 0 }), (error) => error.code === 'INVALID_ARGUMENT' && /topK must be a whole number >= 1, got 0/.test(error.message));
    assert.deepEqual((await model.generate(12, options)).ids, expected.ids, 'and writes on after the error');
    model.dispose();
  });
});
