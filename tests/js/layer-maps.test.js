// Long texts (web/lib/models.js run's weightsLayer and pooledSize, web/views/long-maps.js,
// web/sources/model.js): the max-pool against values worked out by hand; a 1,000-token run of the
// committed 1,024-position GPT-2 (tests/golden/models/gpt2-long) that keeps one layer's maps
// equals the full run's layer exactly, holds less by the other layers' maps, and pools every
// layer as maxPool does; options out of range are refused by name and the model keeps working;
// the model source keeps the layer in view only, asks again on a layer change, and keeps no maps
// of a run with heads switched off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../web/lib/models.js';
import { loadMha } from '../../web/lib/index.js';
import { maxPool, cellsFor, leastCell } from '../../web/views/long-maps.js';
import { ModelSource, MODEL_MAX_TOKENS, POOLED_SIZE } from '../../web/sources/model.js';

const LONG = path.join(fileURLToPath(new URL('../..', import.meta.url)), 'tests', 'golden', 'models', 'gpt2-long');
/** 1,000 ASCII characters: 1,000 tokens of the byte-level tokenizer without merges. */
const TEXT = Array.from({ length: 1000 }, (_, i) => 'the cat sat on the mat. '[i % 24]).join('');

function maxAbsDifference(a, b) {
  assert.equal(a.length, b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i += 1) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

test('maxPool: each block\'s largest value, worked out by hand', () => {
  // 5 × 5 to 2 × 2: row and column blocks [0, 2) and [2, 5)
  const map = [
    0.1, 0.2, 0, 0, 0,
    0.3, 0, 0, 0.9, 0,
    0, 0, 0.05, 0, 0,
    0.7, 0, 0, 0, 0,
    0, 0.6, 0, 0, 0.4,
  ];
  const pooled = maxPool(map, 5, 5, 2, 2);
  assert.deepEqual(Array.from(pooled, (v) => Math.round(v * 100) / 100), [0.3, 0.9, 0.7, 0.4]);
  // what drawCells paints: the map where it fits, else pooled to a cell a device pixel
  assert.equal(cellsFor(map, 5, 5, 5, 5)[0], map);
  const [drawn, R, C] = cellsFor(map, 5, 5, 2.6, 2);
  assert.deepEqual([R, C], [2, 2]);
  assert.deepEqual(drawn, pooled);
  // cells of 3 px for a lesson's texts; a long text's fit the room, a quarter pixel at least
  assert.deepEqual([leastCell(128, 100), leastCell(1000, 500), leastCell(1000, 100), leastCell(200, 1000)], [3, 0.5, 0.25, 3]);
  // 2 × 6 to 1 × 3: columns in pairs, (1 2 6 5) (3 4 4 3) (5 6 2 1)
  assert.deepEqual(Array.from(maxPool([1, 2, 3, 4, 5, 6, 6, 5, 4, 3, 2, 1], 2, 6, 1, 3)), [6, 4, 6]);
  // 7 columns to 3: blocks [0, 2), [2, 4), [4, 7)
  assert.deepEqual(Array.from(maxPool([7, 1, 2, 6, 3, 4, 5], 1, 7, 1, 3)), [7, 6, 5]);
});

test('a 1,000-token run keeping one layer\'s maps equals the full run\'s layer, holds less, and pools every layer', async () => {
  const model = await loadModel(LONG);
  try {
    const { numLayers: L, numHeads: H, maxPositions } = model.config;
    assert.equal(maxPositions, 1024);
    const ids = model.encode(TEXT);
    const T = ids.length;
    assert.equal(T, 1000);
    const full = model.run(ids);
    const fullBytes = model.memory().resultBytes;
    const S = 96;
    for (let l = 0; l < L; l += 1) {
      const one = model.run(ids, { weightsLayer: l, pooledSize: S });
      const kept = model.memory().resultBytes;
      const worst = maxAbsDifference(one.layers[l].weights.data, full.layers[l].weights.data);
      const mapBytes = H * T * T * 4, pooledBytes = L * H * S * S * 4;
      console.log(`layer ${l}: max |layer-only - full| = ${worst} (tolerance 0); the run's results ${kept} bytes, the full run's ${fullBytes} (the other ${L - 1} layers' maps: ${(L - 1) * mapBytes})`);
      assert.equal(worst, 0);
      assert.deepEqual(one.layers[l].weights.shape, [H, T, T]);
      for (let k = 0; k < L; k += 1) {
        if (k !== l) assert.equal(one.layers[k].weights, null, `layer ${k}'s maps`);
        assert.deepEqual(one.layers[k].pooled.shape, [H, S, S]);
        const expected = new Float32Array(H * S * S);
        for (let h = 0; h < H; h += 1) expected.set(maxPool(full.layers[k].weights.data.subarray(h * T * T, (h + 1) * T * T), T, T, S, S), h * S * S);
        assert.equal(maxAbsDifference(one.layers[k].pooled.data, expected), 0, `layer ${k} pooled by the core and by maxPool`);
      }
      assert.equal(kept, fullBytes - (L - 1) * mapBytes + pooledBytes);
      assert.equal(maxAbsDifference(one.logits.data, full.logits.data), 0);
    }
    // head outputs: of the layer kept only
    const outputs = model.run(ids, { weightsLayer: 1, headOutputs: true });
    assert.deepEqual(outputs.layers.map((layer) => !!layer.headOutputs), [false, true, false]);
    assert.deepEqual(outputs.layers[1].headOutputs.shape, [H, T, model.config.hidden / H]);
    const none = model.run(ids, { weightsLayer: 'none' });
    assert.ok(none.layers.every((layer) => layer.weights === null));
    assert.equal(model.memory().resultBytes, fullBytes - L * H * T * T * 4);
    assert.equal(maxAbsDifference(none.hidden.data, full.hidden.data), 0);
  } finally {
    model.dispose();
  }
});

test('weightsLayer and pooledSize out of range are refused by name, and the model keeps working', async () => {
  const model = await loadModel(LONG);
  try {
    const ids = model.encode('the cat');
    assert.throws(() => model.run(ids, { weightsLayer: 3 }), /weights_layer 3: expected a layer from 0 to 2, -1 \(every layer\) or -2 \(none\)/);
    assert.throws(() => model.run(ids, { weightsLayer: /** @type {any} */ ('first') }), /weightsLayer: expected 'all', 'none' or a layer from 0 to 2, got "first"/);
    assert.throws(() => model.run(ids, { weightsLayer: -1 }), /weightsLayer: expected 'all', 'none' or a layer from 0 to 2, got -1/);
    assert.throws(() => model.run(ids, { pooledSize: 1.5 }), /pooledSize: expected 0 \(none\) or a whole number >= 1, got 1.5/);
    assert.throws(() => model.run(ids, { pooledSize: -2 }), /pooledSize: expected 0 \(none\) or a whole number >= 1, got -2/);
    const after = model.run(ids, { weightsLayer: 1, pooledSize: 4 });
    assert.deepEqual(after.layers[1].weights.shape, [4, 7, 7]);
    assert.deepEqual(after.layers[0].pooled.shape, [4, 4, 4]);
  } finally {
    model.dispose();
  }
});

test('the model source reads 1,000 tokens, keeps the layer in view only and asks the core again on a layer change', async () => {
  assert.equal(MODEL_MAX_TOKENS, 1024);
  const model = await loadModel(LONG);
  const source = new ModelSource({ opened: { name: 'gpt2-long', stamp: '1', model } });
  try {
    await source.load(await loadMha());
    assert.equal(source.maxTokens, 1024);
    const sentence = await source.sentence(TEXT);
    assert.equal(sentence.tokens.length, 1000);
    const full = model.run(sentence.ids);
    for (const layer of [0, 2, 1]) {
      source.layer = layer;
      const result = await source.compute(sentence);
      assert.equal(maxAbsDifference(result.weights.data, full.layers[layer].weights.data), 0);
      assert.deepEqual(sentence.run.layers.map((l) => l.weights !== null), [0, 1, 2].map((l) => l === layer), 'only the layer in view keeps its maps');
      assert.deepEqual(result.layers.map((l) => l.shape), [0, 1, 2].map(() => [4, POOLED_SIZE, POOLED_SIZE]));
    }
    // heads switched off: the hidden states and logits of the run, no maps
    const off = await source.ablation(sentence, [0, 1]);
    assert.ok(off.run.layers.every((l) => l.weights === null), 'an ablation keeps no maps');
    assert.equal(maxAbsDifference(off.run.logits.data, model.run(sentence.ids, { ablate: [[1, 0], [1, 1]] }).logits.data), 0);
    await assert.rejects(source.sentence(TEXT + TEXT.slice(0, 25)), /1025 tokens.*1024/s);
    // a text of up to 128 tokens keeps every layer's maps (the detectors' scores of the text in view read them)
    const short = await source.sentence(TEXT.slice(0, 128));
    const n = short.tokens.length;
    assert.ok(n > 100 && n <= 128, `${n} tokens`);
    assert.deepEqual(short.run.layers.map((l) => l.weights?.shape), [0, 1, 2].map(() => [4, n, n]));
  } finally {
    source.dispose();
    model.dispose();
  }
});
