// The JavaScript API as a developer meets it: shapes, defaults, options, errors, ownership.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadMha, MhaError, threadsAvailable } from '../../web/lib/index.js';

const mha = await loadMha();

function sequence(n, seed = 1) {
  const out = new Float32Array(n);
  let s = seed;
  for (let i = 0; i < n; ++i) {
    s = (s * 1103515245 + 12345) % 2147483648;
    out[i] = s / 1073741824 - 1;
  }
  return out;
}

function maxAbsDiff(a, b) {
  assert.equal(a.length, b.length);
  let worst = 0;
  for (let i = 0; i < a.length; ++i) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

function throwsCode(fn, code, pattern) {
  assert.throws(fn, (error) => {
    assert.ok(error instanceof MhaError, `expected MhaError, got ${error}`);
    assert.equal(error.code, code, error.message);
    if (pattern) assert.match(error.message, pattern);
    return true;
  });
}

test('loadMha returns one module', async () => {
  assert.equal(await loadMha(), mha);
});

test('in Node.js loadMha() loads the pthreads core; threads: false the single-thread one, with the same numbers', async () => {
  const single = await loadMha({ threads: false });
  assert.equal(mha.threads, 2);
  assert.equal(single.threads, 1);
  assert.equal(await loadMha({ threads: true }), mha);
  assert.equal(await loadMha({ threads: false }), single);
  assert.equal(threadsAvailable(), true);
  // Big enough that the GEMMs' column panels are split over threads, and attention either by
  // whole (batch, head) pairs or, when the pairs do not share out evenly, by row blocks; with
  // the fused in-projection and the per-head one (over 2M floats of q, k, v), GQA and masks.
  const keyPadding = (N, S) => ({ data: Uint8Array.from({ length: N * S }, (_, i) => (i % S) >= S - 7 - (i / S | 0)), shape: [N, S] });
  const cases = [
    { what: 'pairs split, causal', config: { embedDim: 128, numHeads: 8 }, N: 2, L: 150, isCausal: true },
    { what: '3 pairs: row blocks split, key padding', config: { embedDim: 96, numHeads: 3 }, N: 1, L: 150, mask: true },
    { what: 'GQA 8 heads over 2, key padding', config: { embedDim: 128, numHeads: 8, numKvHeads: 2 }, N: 2, L: 130, mask: true },
    { what: 'per-head in-projection, pairs split', config: { embedDim: 512, numHeads: 8 }, N: 2, L: 700, weights: [false] },
  ];
  for (const { what, config, N, L, isCausal = false, mask = false, weights = [true, false] } of cases) {
    const E = config.embedDim;
    const query = { data: sequence(N * L * E, 7), shape: [N, L, E] };
    const keyPaddingMask = mask ? keyPadding(N, L) : undefined;
    for (const needWeights of weights) {
      const a = new mha.MultiHeadAttention({ ...config, batchFirst: true, seed: 3 });
      const b = new single.MultiHeadAttention({ ...config, batchFirst: true, seed: 3 });
      const ra = a.forward({ query, keyPaddingMask, needWeights, isCausal });
      const rb = b.forward({ query, keyPaddingMask, needWeights, isCausal });
      const out = maxAbsDiff(ra.output.data, rb.output.data);
      console.log(`# ${what}, needWeights ${needWeights}: max |threads - single| output ${out.toExponential(2)} (tolerance 0)`);
      assert.equal(out, 0, what);
      assert.ok(ra.output.data.every(Number.isFinite), what);
      if (needWeights) assert.equal(maxAbsDiff(ra.weights.data, rb.weights.data), 0, what);
      a.dispose();
      b.dispose();
    }
  }
  // wasmBinary names the single-thread module's bytes: 'auto' keeps to it.
  const { readFile } = await import('node:fs/promises');
  const bytes = await readFile(new URL('../../web/lib/wasm/mha_core.wasm', import.meta.url));
  assert.equal((await loadMha({ wasmBinary: bytes })).threads, 1);
});

test('loadMha: a bad threads option is an MhaError naming what it expects', async () => {
  for (const bad of [2, 'yes', {}]) {
    assert.throws(() => loadMha({ threads: bad }), (error) => {
      assert.ok(error instanceof MhaError);
      assert.equal(error.code, 'INVALID_ARGUMENT');
      assert.match(error.message, /threads must be 'auto', true or false/);
      return true;
    });
  }
  assert.throws(() => loadMha('fast'), /expected an options object, got string fast/);
});

test("the lesson's call: (1, 10, 64) in, (1, 10, 64) and (1, 10, 10) out", () => {
  const attn = new mha.MultiHeadAttention({ embedDim: 64, numHeads: 8, batchFirst: true });
  assert.equal(attn.headDim, 8);
  const x = { data: sequence(640), shape: [1, 10, 64] };
  const { output, weights, headOutputs, concat } = attn.forward({ query: x, key: x, value: x });
  assert.deepEqual(output.shape, [1, 10, 64]);
  assert.deepEqual(weights.shape, [1, 10, 10]);
  assert.equal(headOutputs, null);
  assert.equal(concat, null);
  for (let i = 0; i < 10; ++i) {
    const row = weights.data.subarray(i * 10, i * 10 + 10).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(row - 1) < 1e-5, `row ${i} sums to ${row}`);
  }
});

test('averaged weights are the mean of the per-head weights', () => {
  const attn = new mha.MultiHeadAttention({ embedDim: 16, numHeads: 4, batchFirst: true, seed: 3 });
  const x = { data: sequence(2 * 5 * 16, 7), shape: [2, 5, 16] };
  const averaged = attn.forward({ query: x }).weights;
  const perHead = attn.forward({ query: x, averageAttnWeights: false }).weights;
  assert.deepEqual(perHead.shape, [2, 4, 5, 5]);
  const mean = new Float32Array(2 * 25);
  for (let n = 0; n < 2; ++n)
    for (let h = 0; h < 4; ++h)
      for (let i = 0; i < 25; ++i) mean[n * 25 + i] += perHead.data[(n * 4 + h) * 25 + i] / 4;
  const err = maxAbsDiff(mean, averaged.data);
  console.log(`  averaged vs mean of heads: max err ${err.toExponential(2)} (tol 1e-6)`);
  assert.ok(err < 1e-6);
});

test('self-attention with key and value omitted equals passing them explicitly (copies)', () => {
  const attn = new mha.MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 5 });
  const x = { data: sequence(3 * 2 * 8, 9), shape: [3, 2, 8] };
  const copy = () => ({ data: x.data.slice(), shape: x.shape });
  const a = attn.forward({ query: x });
  const b = attn.forward({ query: x, key: copy(), value: copy() });
  const err = maxAbsDiff(a.output.data, b.output.data);
  console.log(`  fused vs separate projections: max err ${err.toExponential(2)} (tol 1e-6)`);
  assert.ok(err < 1e-6);
});

test('need_weights false gives the same output and no weights', () => {
  const attn = new mha.MultiHeadAttention({ embedDim: 32, numHeads: 4, batchFirst: true, seed: 2 });
  const x = { data: sequence(200 * 32, 4), shape: [1, 200, 32] };
  const a = attn.forward({ query: x, isCausal: true });
  const b = attn.forward({ query: x, isCausal: true, needWeights: false });
  assert.equal(b.weights, null);
  const err = maxAbsDiff(a.output.data, b.output.data);
  console.log(`  streaming vs explicit: max err ${err.toExponential(2)} (tol 1e-5)`);
  assert.ok(err < 1e-5);
});

test('causal: no weight on a later key', () => {
  const attn = new mha.MultiHeadAttention({ embedDim: 8, numHeads: 2, batchFirst: true });
  const x = { data: sequence(6 * 8), shape: [1, 6, 8] };
  const { weights } = attn.forward({ query: x, isCausal: true });
  for (let i = 0; i < 6; ++i) for (let j = i + 1; j < 6; ++j) assert.equal(weights.data[i * 6 + j], 0);
});

test('masks: bool and float agree, dtype inferred', () => {
  const attn = new mha.MultiHeadAttention({ embedDim: 8, numHeads: 2, batchFirst: true, seed: 4 });
  const x = { data: sequence(2 * 4 * 8, 3), shape: [2, 4, 8] };
  const ignore = [0, 0, 1, 0, 0, 1, 1, 0];
  const asBool = attn.forward({ query: x, keyPaddingMask: { data: Uint8Array.from(ignore), shape: [2, 4] } });
  const asBooleans = attn.forward({ query: x, keyPaddingMask: { data: ignore.map(Boolean), shape: [2, 4] } });
  const asFloat = attn.forward({
    query: x,
    keyPaddingMask: { data: Float32Array.from(ignore, (v) => (v ? -Infinity : 0)), shape: [2, 4] },
  });
  assert.deepEqual(asBool.output.data, asBooleans.output.data);
  assert.ok(maxAbsDiff(asBool.output.data, asFloat.output.data) < 1e-6);
  assert.equal(asBool.weights.data[2], 0);
});

test('grouped-query attention: parameters by PyTorch name and shape', () => {
  const attn = new mha.MultiHeadAttention({ embedDim: 32, numHeads: 8, numKvHeads: 2, batchFirst: true });
  assert.deepEqual(attn.parameterNames(), ['q_proj_weight', 'k_proj_weight', 'v_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']);
  assert.deepEqual(attn.parameterShape('k_proj_weight'), [8, 32]);
  assert.deepEqual(attn.parameterShape('in_proj_bias'), [48]);
  const x = { data: sequence(3 * 32), shape: [1, 3, 32] };
  assert.deepEqual(attn.forward({ query: x, averageAttnWeights: false }).weights.shape, [1, 8, 3, 3]);
});

test('state_dict round trip, and a bad state_dict changes nothing', () => {
  const a = new mha.MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 1 });
  const b = new mha.MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 2 });
  const x = { data: sequence(4 * 8), shape: [4, 8] };
  assert.notDeepEqual(a.forward({ query: x }).output.data, b.forward({ query: x }).output.data);
  const before = b.stateDict();
  const bad = { ...a.stateDict(), 'out_proj.bias': { data: new Float32Array(7), shape: [7] } };
  throwsCode(() => b.loadStateDict(bad), 'SHAPE_MISMATCH', /out_proj\.bias.*expected shape \(8,\), got \(7,\)/);
  assert.deepEqual(b.stateDict(), before);
  throwsCode(() => b.loadStateDict({ in_proj_weight: before.in_proj_weight }), 'UNKNOWN_PARAMETER', /missing \[in_proj_bias/);
  b.loadStateDict(a.stateDict());
  assert.deepEqual(a.forward({ query: x }).output.data, b.forward({ query: x }).output.data);
});

test('default initialisation: same seed same weights, xavier bound', () => {
  const a = new mha.MultiHeadAttention({ embedDim: 64, numHeads: 8, seed: 11 });
  const b = new mha.MultiHeadAttention({ embedDim: 64, numHeads: 8, seed: 11 });
  const w = a.getParameter('in_proj_weight');
  assert.deepEqual(w.shape, [192, 64]);
  assert.deepEqual(w.data, b.getParameter('in_proj_weight').data);
  const bound = Math.sqrt(6 / (64 + 192));
  assert.ok(w.data.every((v) => Math.abs(v) <= bound));
  assert.ok(a.getParameter('in_proj_bias').data.every((v) => v === 0));
  a.resetParameters(12);
  assert.notDeepEqual(a.getParameter('in_proj_weight').data, w.data);
});

test('lesson views: head outputs, concat, ablation and skipping W_O agree', () => {
  const attn = new mha.MultiHeadAttention({ embedDim: 16, numHeads: 4, batchFirst: true, seed: 8 });
  const x = { data: sequence(5 * 16, 2), shape: [1, 5, 16] };
  const full = attn.forward({ query: x, returnHeadOutputs: true, returnConcat: true });
  assert.deepEqual(full.headOutputs.shape, [1, 4, 5, 4]);
  for (let h = 0; h < 4; ++h)
    for (let l = 0; l < 5; ++l)
      for (let d = 0; d < 4; ++d) assert.equal(full.concat.data[l * 16 + h * 4 + d], full.headOutputs.data[(h * 5 + l) * 4 + d]);
  const skipped = attn.forward({ query: x, skipOutProj: true });
  assert.deepEqual(skipped.output.data, full.concat.data);
  const ablated = attn.forward({ query: x, ablateHeads: [2], returnConcat: true });
  for (let l = 0; l < 5; ++l) for (let d = 0; d < 4; ++d) assert.equal(ablated.concat.data[l * 16 + 8 + d], 0);
  assert.ok(maxAbsDiff(ablated.output.data, full.output.data) > 1e-4, 'ablating a head changes the output');
});

test('head statistics and similarity from the core', () => {
  // Head 0 looks at the previous token, head 1 is uniform.
  const L = 4;
  const data = new Float32Array(2 * L * L);
  for (let i = 0; i < L; ++i) data[i * L + Math.max(0, i - 1)] = 1;
  data.fill(1 / L, L * L);
  const { heads, rows } = mha.headStatistics({ data, shape: [2, L, L] }, { perRow: true });
  assert.equal(heads[0].previousTokenShare, 1);
  assert.equal(heads[0].entropy, 0);
  assert.ok(Math.abs(heads[1].normalizedEntropy - 1) < 1e-6);
  assert.deepEqual(rows.shape, [1, 2, L]);
  assert.equal(rows.argmax[2], 1);
  const { jsd, numHeads } = mha.headSimilarity({ data, shape: [2, L, L] });
  assert.equal(numHeads, 2);
  assert.equal(jsd[0], 0);
  assert.ok(jsd[1] > 0.3 && jsd[1] <= Math.log(2));
  const same = mha.jsDivergence({ data, shape: [2, L, L] }, { data, shape: [2, L, L] });
  assert.equal(same.mean, 0);
});

test('bad input throws MhaError naming expected and actual, and the module keeps working', () => {
  const attn = new mha.MultiHeadAttention({ embedDim: 8, numHeads: 2, batchFirst: true });
  const good = { data: sequence(3 * 8), shape: [1, 3, 8] };
  throwsCode(() => new mha.MultiHeadAttention({ embedDim: 10, numHeads: 3 }), 'INVALID_CONFIG', /embed_dim must be divisible by num_heads/);
  throwsCode(() => new mha.MultiHeadAttention({ embedDim: 16, numHeads: 8, numKvHeads: 3 }), 'INVALID_CONFIG', /num_kv_heads must divide num_heads/);
  throwsCode(() => new mha.MultiHeadAttention({ embedDim: NaN, numHeads: 2 }), 'INVALID_CONFIG', /embedDim must be a positive integer/);
  throwsCode(() => new mha.MultiHeadAttention({ embedDim: 1 << 20, numHeads: 2 }), 'TOO_LARGE');
  throwsCode(() => attn.forward({ query: { data: new Float32Array(23), shape: [1, 3, 8] } }), 'LENGTH_MISMATCH', /has 23 values but shape \[1, 3, 8\] needs 24/);
  throwsCode(() => attn.forward({ query: { data: new Float32Array(21), shape: [1, 3, 7] } }), 'SHAPE_MISMATCH', /expecting embedding dimension of 8, but got 7/);
  throwsCode(() => attn.forward({ query: { data: 'abc', shape: [3] } }), 'INVALID_DTYPE');
  throwsCode(() => attn.forward({ query: good, keyPaddingMask: { data: new Uint8Array(4), shape: [1, 4] } }), 'SHAPE_MISMATCH', /key_padding_mask shape of \(1, 3\), but got \(1, 4\)/);
  throwsCode(() => attn.forward({ query: good, attnMask: { data: new Float32Array(4), shape: [2, 2] } }), 'SHAPE_MISMATCH', /2D attn_mask is \(2, 2\), but should be \(3, 3\)/);
  throwsCode(() => attn.forward({ query: good, attnMask: { data: new Int32Array(9), shape: [3, 3], dtype: 'int32' } }), 'INVALID_DTYPE');
  throwsCode(() => attn.forward({ query: good, attnMask: { data: new Float32Array(9).fill(NaN), shape: [3, 3] } }), 'INVALID_ARGUMENT', /NaN/);
  const nan = good.data.slice();
  nan[4] = NaN;
  throwsCode(() => attn.forward({ query: { data: nan, shape: [1, 3, 8] } }), 'INVALID_ARGUMENT', /value 4 is NaN/);
  throwsCode(() => attn.forward({ query: good, ablateHeads: [2] }), 'INVALID_ARGUMENT', /out of range/);
  throwsCode(() => attn.setParameter('nope', { data: [1], shape: [1] }), 'UNKNOWN_PARAMETER', /unknown parameter 'nope'/);
  attn.setMemoryCap(512);
  throwsCode(() => attn.forward({ query: good }), 'TOO_LARGE', /memory cap/);
  attn.setMemoryCap(1 << 30);
  const ok = attn.forward({ query: good });
  assert.deepEqual(ok.output.shape, [1, 3, 8]);
  assert.ok(ok.output.data.every(Number.isFinite));
});

test('dispose frees the object; later calls throw DISPOSED', () => {
  const attn = new mha.MultiHeadAttention({ embedDim: 8, numHeads: 2 });
  attn.dispose();
  assert.equal(attn.disposed, true);
  throwsCode(() => attn.forward({ query: { data: sequence(8), shape: [1, 8] } }), 'DISPOSED');
  attn.dispose();  // twice is harmless
});
