// The pretrained encoder in WebAssembly (web/lib/encoder.js on mha_encoder.wasm):
//  - the golden cases of the model's own TF.js graph and tokenizer (tests/golden/encoder):
//    ids equal, attention weights within 1e-5, embedding within 1e-4, float32 weights;
//  - float16 weights against float32 (what the page downloads): the errors printed, and bounded;
//  - what the API returns: shapes, pieces and words, ids in, truncation, ablation, W_O.
// Needs web/models/use-lite (node scripts/build/build-model.js) and the WebAssembly build.
//
//   node --test tests/js/encoder.test.js
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { loadEncoder, wordsOfPieces } from '../../web/lib/encoder.js';
import { parseSafetensors } from '../../web/lib/safetensors.js';
import { loadEncoderGolden, maxAbsDiff } from '../golden/encoder/golden_common.js';
import fs from 'node:fs';

const golden = loadEncoderGolden();
let encoder;
let float16;

before(async () => {
  encoder = await loadEncoder();
  float16 = await loadEncoder({ dtype: 'float16' });
});

after(() => {
  encoder?.dispose();
  float16?.dispose();
});

test('the golden cases: ids as the reference tokenizer, weights and embedding as the TF.js graph', () => {
  let worstWeights = { err: 0, at: '' };
  let worstEmbedding = { err: 0, at: '' };
  let tokens = 0;
  for (const c of golden.cases) {
    const { ids } = encoder.tokenize(c.text);
    assert.deepEqual(ids, c.ids, `${c.name}: ids`);
    tokens += ids.length;
    const result = encoder.encode(c.text, { truncate: true });
    assert.equal(result.truncated, c.ids.length > golden.maxTokens, `${c.name}: truncated`);
    result.layers.forEach((layer, l) => {
      assert.deepEqual(layer.weights.shape, c.expectedWeights[l].shape, `${c.name} layer ${l}: shape`);
      const err = maxAbsDiff(layer.weights.data, c.expectedWeights[l].data);
      assert.ok(err <= golden.tolerances.weights, `${c.name} layer ${l}: weights max |diff| ${err} > ${golden.tolerances.weights}`);
      if (err > worstWeights.err) worstWeights = { err, at: `${c.name} layer ${l}` };
    });
    const err = maxAbsDiff(result.embedding, c.expectedEmbedding);
    assert.ok(err <= golden.tolerances.embedding, `${c.name}: embedding max |diff| ${err} > ${golden.tolerances.embedding}`);
    if (err > worstEmbedding.err) worstEmbedding = { err, at: c.name };
  }
  console.log(`  ${golden.cases.length} cases (${tokens} tokens), ids equal in all; attention weights max |diff| ` +
    `${worstWeights.err.toExponential(2)} (tolerance ${golden.tolerances.weights}, ${worstWeights.at}); embedding max |diff| ` +
    `${worstEmbedding.err.toExponential(2)} (tolerance ${golden.tolerances.embedding}, ${worstEmbedding.at})`);
});

test('float16 weights against float32: the page\'s error, measured', () => {
  let weights = 0;
  let embedding = 0;
  let cosine = 1;
  const dot = (a, b) => a.reduce((s, v, i) => s + v * b[i], 0);
  for (const c of golden.cases) {
    const a = encoder.encode(c.text, { truncate: true });
    const b = float16.encode(c.text, { truncate: true });
    a.layers.forEach((layer, l) => { weights = Math.max(weights, maxAbsDiff(layer.weights.data, b.layers[l].weights.data)); });
    embedding = Math.max(embedding, maxAbsDiff(a.embedding, b.embedding));
    cosine = Math.min(cosine, dot(a.embedding, b.embedding));
  }
  console.log(`  float16 vs float32 over ${golden.cases.length} cases: attention weights max |diff| ${weights.toExponential(2)}, ` +
    `embedding max |diff| ${embedding.toExponential(2)}, lowest cosine similarity ${cosine.toFixed(6)}`);
  // Bounds well above what was measured (docs/pretrained.md), so that a broken float16 path fails.
  assert.ok(weights < 2e-2, `float16 weights differ by ${weights}`);
  assert.ok(embedding < 3e-3, `float16 embedding differs by ${embedding}`);
  assert.ok(cosine > 0.999, `float16 embedding cosine ${cosine}`);
  assert.ok(weights > 0, 'float16 weights give the very same numbers as float32: was float16 loaded?');
});

test('config, shapes, pieces joined into words', () => {
  const { config } = encoder;
  assert.equal(config.numLayers, 2);
  assert.equal(config.maxTokens, 128);
  assert.equal(config.vocabSize, 8000);
  assert.deepEqual(config.layers.map((l) => [l.numHeads, l.embedDim, l.headDim, l.outDim]), [[4, 256, 64, 512], [4, 512, 128, 512]]);
  const r = encoder.encode('The cat sat on the mat because it was tired.');
  const T = r.ids.length;
  assert.equal(T, 12);
  assert.deepEqual(r.layers.map((l) => l.weights.shape), [[4, T, T], [4, T, T]]);
  assert.deepEqual(r.layers.map((l) => l.headOutputs.shape), [[4, T, 64], [4, T, 128]]);
  assert.deepEqual(r.layers.map((l) => l.concat.shape), [[T, 256], [T, 512]]);
  assert.deepEqual(r.layers.map((l) => l.attentionOutput.shape), [[T, 512], [T, 512]]);
  assert.deepEqual(r.layers.map((l) => l.residual.shape), [[T, 512], [T, 512]]);
  assert.equal(r.embedding.length, 512);
  assert.ok(Math.abs(r.embedding.reduce((s, v) => s + v * v, 0) - 1) < 1e-5, 'the embedding is L2-normalised');
  const joined = [];
  r.pieces.forEach((p, i) => { joined[r.words[i]] = (joined[r.words[i]] ?? '') + p; });
  assert.deepEqual(joined.map((w) => w.replace(/^▁/, '')), ['The', 'cat', 'sat', 'on', 'the', 'mat', 'because', 'it', 'was', 'tired', '.']);
  // a word starts at "▁", at a piece of punctuation, and after one
  const quoted = encoder.tokenize('"Hello," she said (twice).');
  const words = [];
  quoted.pieces.forEach((p, i) => { words[quoted.words[i]] = (words[quoted.words[i]] ?? '') + p; });
  const punctuation = /^▁?[\p{P}\p{S}]+$/u;
  quoted.pieces.forEach((p, i) => {
    if (i > 0 && (punctuation.test(p) || punctuation.test(quoted.pieces[i - 1]))) assert.notEqual(quoted.words[i], quoted.words[i - 1], `${p} after ${quoted.pieces[i - 1]}`);
  });
  assert.ok(words.includes('Hello') || words.includes('▁Hello'), words.join(' | '));
  // a lone "▁" begins a word and the piece after it continues it (the roles' data depend on it)
  const aunt = encoder.tokenize('My aunt ran.');
  assert.deepEqual([aunt.pieces.slice(0, 3), aunt.words.slice(0, 3)], [['▁My', '▁', 'aunt'], [0, 1, 1]]);
  for (const layer of r.layers) {
    for (let row = 0; row < 4 * T; ++row) {
      const sum = layer.weights.data.subarray(row * T, row * T + T).reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - 1) < 1e-5, `a weights row sums to ${sum}`);
    }
  }
});

test('which pieces make a word: the mark, punctuation and what follows it', () => {
  assert.deepEqual(wordsOfPieces(['▁The', '▁ma', 't', '▁is', '▁red', '.']), [0, 1, 1, 2, 3, 4]);
  assert.deepEqual(wordsOfPieces(['▁(', 'cat', ')', '▁ok']), [0, 1, 2, 3]);
  assert.deepEqual(wordsOfPieces(['t', 'cat', '—', 'mat', '▁']), [0, 0, 1, 2, 3]);
  assert.deepEqual(wordsOfPieces(['▁is', '▁', 'mat', '.']), [0, 1, 1, 2]);  // a lone "▁" begins a word
  assert.deepEqual(wordsOfPieces(['—', '▁', 'mat']), [0, 1, 1]);
  assert.deepEqual(wordsOfPieces(['mat', '▁€5', 't']), [0, 1, 1]);  // "€5" is not all symbols
  assert.deepEqual(wordsOfPieces(['a', '\uD800', 'b', '\t']), [0, 0, 0, 0]);  // a lone surrogate, a control character: neither
  assert.deepEqual(wordsOfPieces([]), []);
});

test('ids in give what the text gives; an unknown piece keeps its text', () => {
  const text = 'Snow ☃☃ fell on Zürich.';
  const fromText = encoder.encode(text);
  const fromIds = encoder.encode({ ids: fromText.ids });
  assert.deepEqual(Array.from(fromIds.embedding), Array.from(fromText.embedding));
  assert.deepEqual(fromIds.layers[1].weights.data, fromText.layers[1].weights.data);
  const unknown = fromText.ids.indexOf(0);
  assert.ok(unknown >= 0);
  assert.equal(fromText.pieces[unknown], '☃☃');
  assert.equal(fromIds.pieces[unknown], '\ufffd', 'from ids, an unknown piece is the vocabulary\'s');
  assert.deepEqual(fromIds.words, fromText.words);
});

test('more than 128 tokens: refused with a message saying so, or the first 128 with truncate', () => {
  const long = Array.from({ length: 140 }, (_, i) => `w${i}`).join(' ');
  const all = encoder.tokenize(long);
  assert.ok(all.ids.length > 128 && all.totalTokens === all.ids.length && !all.truncated);
  assert.throws(() => encoder.encode(long), (e) => e.code === 'TOO_LARGE' && /at most 128/.test(e.message) && new RegExp(`${all.ids.length} tokens`).test(e.message));
  const cut = encoder.encode(long, { truncate: true });
  assert.equal(cut.ids.length, 128);
  assert.equal(cut.truncated, true);
  assert.equal(cut.totalTokens, all.ids.length);
  assert.deepEqual(cut.ids, all.ids.slice(0, 128));
  assert.deepEqual(encoder.tokenize(long, { truncate: true }).ids, all.ids.slice(0, 128));
  assert.throws(() => encoder.encode({ ids: new Array(129).fill(9) }), (e) => e.code === 'TOO_LARGE');
});

test('ablation: a head switched off is zero before W_O; earlier layers do not change, later ones do', () => {
  const text = 'Mary gave John a book, and she smiled at him.';
  const base = encoder.encode(text);
  const off = encoder.encode(text, { ablate: [[1, 2]] });
  assert.deepEqual(off.layers[0].weights.data, base.layers[0].weights.data, 'layer 0 is before the ablated head');
  assert.deepEqual(off.layers[1].weights.data, base.layers[1].weights.data, 'weights of layer 1 are computed before W_O');
  const [H, T, hd] = off.layers[1].headOutputs.shape;
  assert.equal(H, 4);
  assert.deepEqual(off.layers[1].headOutputs.data, base.layers[1].headOutputs.data, 'head outputs are what each head computed');
  const E = off.layers[1].concat.shape[1];
  for (let t = 0; t < T; ++t) assert.ok(off.layers[1].concat.data.subarray(t * E + 2 * hd, t * E + 3 * hd).every((v) => v === 0));
  assert.ok(maxAbsDiff(off.embedding, base.embedding) > 1e-4, 'switching a head off moves the embedding');
  const early = encoder.encode(text, { ablate: [[0, 0]] });
  assert.ok(maxAbsDiff(early.layers[1].weights.data, base.layers[1].weights.data) > 1e-6, 'ablation in layer 0 changes layer 1');
  assert.throws(() => encoder.encode(text, { ablate: [[2, 0]] }), (e) => e.code === 'INVALID_ARGUMENT' && /layer from 0 to 1/.test(e.message));
  assert.throws(() => encoder.encode(text, { ablate: [[0, 4]] }), (e) => e.code === 'INVALID_ARGUMENT' && /expected 0 to 3/.test(e.message));
  assert.throws(() => encoder.encode(text, { ablate: [0, 1] }), (e) => e.code === 'INVALID_ARGUMENT');
});

test('parameter(): the attention parameters of the model file, W_O of layer 0 as wide as its output', () => {
  const file = parseSafetensors(fs.readFileSync(new URL('../../web/models/use-lite/model-f32.safetensors', import.meta.url)));
  for (const layer of [0, 1]) {
    for (const name of ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']) {
      const p = encoder.parameter(layer, name);
      const expected = file.tensors[`layers.${layer}.self_attn.${name}`];
      assert.deepEqual(p.shape, expected.shape, `layer ${layer} ${name}`);
      assert.deepEqual(p.data, expected.data, `layer ${layer} ${name}`);
    }
  }
  assert.deepEqual(encoder.parameter(0, 'out_proj.weight').shape, [512, 256]);
  // attentionOutput is concat · W_Oᵀ + b_O
  const r = encoder.encode('A man is playing a guitar.');
  const W = encoder.parameter(0, 'out_proj.weight');
  const b = encoder.parameter(0, 'out_proj.bias');
  const { concat, attentionOutput } = r.layers[0];
  const [T, E] = concat.shape;
  let worst = 0;
  for (let t = 0; t < T; ++t) {
    for (let o = 0; o < 512; ++o) {
      let s = b.data[o];
      for (let e = 0; e < E; ++e) s += concat.data[t * E + e] * W.data[o * E + e];
      worst = Math.max(worst, Math.abs(s - attentionOutput.data[t * 512 + o]));
    }
  }
  assert.ok(worst < 1e-4, `attentionOutput differs from concat · W_Oᵀ + b_O by ${worst}`);
  assert.throws(() => encoder.parameter(0, 'linear1.weight'), (e) => e.code === 'UNKNOWN_PARAMETER');
  assert.throws(() => encoder.parameter(2, 'in_proj_weight'), (e) => e.code === 'INVALID_ARGUMENT');
});
