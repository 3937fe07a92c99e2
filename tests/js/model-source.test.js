// The model source (web/sources/model.js) on the model's reading of its pieces
// (web/lib/tokenizer.js, tested on its own in tokenizer.test.js): every annotated sentence of
// web/data/roles read by the example model's own tokenizer gives its words; and the source
// itself over a model opened in Node.js (ids, layers, predictions, heads switched off) against
// the model's own run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../web/lib/models.js';
import { ModelSource } from '../../web/sources/model.js';
import { dataSentences, onPieces } from '../../web/roles/sentences.js';
import { loadMha } from '../../web/lib/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const EXAMPLE = `${root}web/examples/models/gpt2-lesson`;
const data = (name) => JSON.parse(readFileSync(`${root}web/data/roles/${name}`, 'utf8'));

test('every annotated sentence within the context lines up with its words on the example model\'s tokens', async () => {
  const model = await loadModel(EXAMPLE);
  try {
    const sentences = dataSentences(data('pronouns.json'), data('relations.json'));
    let aligned = 0;
    let long = 0;
    const misaligned = [];
    for (const s of sentences) {
      const ids = model.encode(s.text);
      if (ids.length > model.config.maxPositions) { long += 1; continue; }
      const { words, marked } = model.read(ids);
      if (onPieces(s, { pieces: marked, words })) aligned += 1;
      else misaligned.push(s.id);
    }
    assert.deepEqual(misaligned, [], 'sentences whose pieces do not give their words');
    assert.equal(aligned + long, sentences.length);
    assert.ok(aligned > 0.95 * sentences.length, `${aligned} of ${sentences.length} aligned`);
  } finally {
    model.dispose();
  }
});

test('the source over an opened model: its tokens, every layer, predictions and heads switched off are the model\'s', async () => {
  const model = await loadModel(EXAMPLE);
  const source = new ModelSource({ opened: { name: 'gpt2-lesson', stamp: '1', model } });
  await source.load(await loadMha());
  assert.equal(source.numLayers, model.config.numLayers);
  assert.equal(source.numHeads, model.config.numHeads);
  assert.equal(source.causal, true);
  const sentence = await source.sentence('the king follows himself.');
  const run = model.run('the king follows himself.');
  assert.deepEqual(sentence.ids, run.ids);
  const joined = sentence.tokens.map((t, i) => (i > 0 && t.word !== sentence.tokens[i - 1].word ? ' ' : '') + t.text).join('');
  assert.equal(joined, 'the king follows himself .', 'the pieces of each word joined, the words apart');
  source.layer = 1;
  const result = await source.compute(sentence);
  assert.deepEqual(Array.from(result.weights.data), Array.from(run.layers[1].weights.data));
  assert.equal(result.layers.length, model.config.numLayers);
  assert.equal(result.stats.length, model.config.numHeads);
  // the W_O view's parts, from the core: Concat(head_1 … head_H) is the head outputs side by
  // side, and the attention output is Concat · W_Oᵀ + b_O (recomputed here in double)
  const [H, T, hd] = result.headOutputs.shape;
  const E = H * hd;
  assert.deepEqual(result.concat.shape, [T, E]);
  for (let h = 0; h < H; h += 1) {
    for (let t = 0; t < T; t += 1) {
      for (let d = 0; d < hd; d += 1) assert.equal(result.concat.data[t * E + h * hd + d], result.headOutputs.data[(h * T + t) * hd + d]);
    }
  }
  const wo = await source.outProjectionWeight();
  const bias = model.attentionParameter(1, 'out_proj.bias');
  assert.deepEqual(wo.shape, [E, E]);
  let worst = 0;
  for (let t = 0; t < T; t += 1) {
    for (let o = 0; o < E; o += 1) {
      let sum = bias.data[o];
      for (let c = 0; c < E; c += 1) sum += result.concat.data[t * E + c] * wo.data[o * E + c];
      worst = Math.max(worst, Math.abs(sum - result.output.data[t * E + o]));
    }
  }
  assert.ok(worst < 1e-5, `attention output vs Concat · W_Oᵀ + b: ${worst}`);
  assert.throws(() => model.attentionParameter(9, 'out_proj.weight'), /layer 9: the model has 2 layers/);
  assert.throws(() => model.attentionParameter(0, 'nope'), /nope/);
  const top = source.predictions(sentence.run, sentence.ids.length - 1, 5);
  assert.deepEqual(top.map((p) => p.id), model.top(run, 5).map(([id]) => id));
  // a head switched off: its output still computed, its part of the concatenation zero
  const runOff = model.run(sentence.ids, { ablate: [[1, 2]], headOutputs: true });
  const concatOff = runOff.layers[1].concat.data;
  for (let t = 0; t < T; t += 1) {
    for (let c = 0; c < E; c += 1) {
      const inHead = c >= 2 * hd && c < 3 * hd;
      assert.equal(concatOff[t * E + c], inHead ? 0 : result.concat.data[t * E + c], `token ${t}, column ${c}`);
    }
  }
  assert.ok(model.run(sentence.ids).layers[1].headOutputs === undefined, 'no head outputs unless asked for');
  const off = await source.ablation(sentence, [0, 1, 2, 3]);
  const expected = model.run(sentence.ids, { ablate: [[1, 0], [1, 1], [1, 2], [1, 3]] });
  assert.deepEqual(Array.from(off.run.logits.data), Array.from(expected.logits.data));
  assert.ok(off.rows.some((r) => r.difference > 0), 'switching a whole layer off moves the final hidden states');
  const none = await source.ablation(sentence, []);
  assert.ok(none.rows.every((r) => r.difference === 0));
  await assert.rejects(source.sentence('x'.repeat(200)), /at most 64/);
  source.dispose();
  assert.doesNotThrow(() => model.encode('still open'), 'a model the page opened is not the source\'s to let go');
  model.dispose();
});
