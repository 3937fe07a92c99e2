// Property-based tests of the JS API (fast-check):
//  1. random valid configurations and inputs agree with the plain-JS reference (reference-mha.js);
//  2. 10,000 random invalid calls each throw MhaError with the documented code, the runtime never
//     aborts, a valid call afterwards is still correct, and the WebAssembly heap has not grown.
//
// Seeds are fixed (FC_SEED overrides) so that a failure can be replayed.
import assert from 'node:assert/strict';
import test, { after } from 'node:test';
import fc from 'fast-check';
import { loadMha, MhaError } from '../../web/lib/index.js';
import { referenceForward, maxAbsDiff } from './reference-mha.js';
import { buildCase, randomStateDict, rng, uniform } from './property-helpers.js';

const mha = await loadMha();
const SEED = Number(process.env.FC_SEED ?? 20261130);
const VALID_RUNS = 400;
const INVALID_CALLS = 10_000;
const OUTPUT_TOLERANCE = 1e-4;  // relative to max(1, max |reference|): float32 against float64
const WEIGHTS_TOLERANCE = 1e-5;

const validCase = fc.record({
  numHeads: fc.integer({ min: 1, max: 4 }),
  headDim: fc.integer({ min: 1, max: 4 }),
  kvChoice: fc.nat(7),
  kdim: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
  vdim: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
  bias: fc.boolean(),
  addBiasKv: fc.boolean(),
  addZeroAttn: fc.boolean(),
  batchFirst: fc.boolean(),
  layout: fc.constantFrom('batched', 'unbatched'),
  N: fc.integer({ min: 1, max: 3 }),
  L: fc.integer({ min: 1, max: 5 }),
  S: fc.integer({ min: 1, max: 6 }),
  selfAttention: fc.boolean(),
  randomWeights: fc.boolean(),
  seed: fc.nat(1000),
  dataSeed: fc.integer(),
  kpm: fc.constantFrom('none', 'none', 'bool', 'float'),
  attnMask: fc.constantFrom('none', 'none', 'bool', 'float', 'bool3d', 'float3d'),
  needWeights: fc.boolean(),
  averageAttnWeights: fc.boolean(),
  isCausal: fc.boolean(),
  fullyMaskedRowsZero: fc.boolean(),
  returnHeadOutputs: fc.boolean(),
  returnConcat: fc.boolean(),
  skipOutProj: fc.boolean(),
  ablate: fc.array(fc.nat(4), { maxLength: 2 }),
});

/** Runs one valid case through the module and the reference; returns the errors seen. */
function compareCase(d) {
  const { config, input, stateDict, random } = buildCase(d);
  const attention = new mha.MultiHeadAttention(config);
  try {
    if (stateDict === 'random') attention.loadStateDict(randomStateDict(attention, random));
    const params = attention.stateDict();
    const got = attention.forward(input);
    const want = referenceForward(config, params, input);
    const scale = (t) => Math.max(1, ...Array.from(t.data).filter(Number.isFinite).map(Math.abs));
    const errors = {};
    assert.deepEqual(got.output.shape, want.output.shape, 'output shape');
    errors.output = maxAbsDiff(got.output.data, want.output.data) / scale(want.output);
    assert.ok(errors.output <= OUTPUT_TOLERANCE, `output: max error ${errors.output} > ${OUTPUT_TOLERANCE}`);
    if (d.needWeights) {
      assert.deepEqual(got.weights.shape, want.weights.shape, 'weights shape');
      errors.weights = maxAbsDiff(got.weights.data, want.weights.data);
      assert.ok(errors.weights <= WEIGHTS_TOLERANCE, `weights: max error ${errors.weights} > ${WEIGHTS_TOLERANCE}`);
    } else {
      assert.equal(got.weights, null);
    }
    if (d.returnHeadOutputs) {
      assert.deepEqual(got.headOutputs.shape, want.headOutputs.shape, 'headOutputs shape');
      errors.headOutputs = maxAbsDiff(got.headOutputs.data, want.headOutputs.data) / scale(want.headOutputs);
      assert.ok(errors.headOutputs <= OUTPUT_TOLERANCE, `headOutputs: max error ${errors.headOutputs}`);
    }
    if (d.returnConcat) {
      assert.deepEqual(got.concat.shape, want.concat.shape, 'concat shape');
      errors.concat = maxAbsDiff(got.concat.data, want.concat.data) / scale(want.concat);
      assert.ok(errors.concat <= OUTPUT_TOLERANCE, `concat: max error ${errors.concat}`);
    }
    return errors;
  } finally {
    attention.dispose();
  }
}

test(`${VALID_RUNS} random valid calls agree with the plain-JS reference`, () => {
  const worst = { output: 0, weights: 0, headOutputs: 0, concat: 0 };
  let nanRows = 0;
  fc.assert(
    fc.property(validCase, (d) => {
      const errors = compareCase(d);
      for (const [k, v] of Object.entries(errors)) worst[k] = Math.max(worst[k], v);
      return true;
    }),
    { seed: SEED, numRuns: VALID_RUNS, verbose: 1 },
  );
  // A case with fully masked rows, to be sure NaN placement is compared too.
  const masked = {
    numHeads: 2, headDim: 2, kvChoice: 0, kdim: undefined, vdim: undefined, bias: true, addBiasKv: false,
    addZeroAttn: false, batchFirst: true, layout: 'batched', N: 2, L: 3, S: 3, selfAttention: false,
    randomWeights: true, seed: 1, dataSeed: 7, kpm: 'none', attnMask: 'none', needWeights: true,
    averageAttnWeights: false, isCausal: false, fullyMaskedRowsZero: false, returnHeadOutputs: true,
    returnConcat: true, skipOutProj: false, ablate: [],
  };
  const { config, input } = buildCase(masked);
  input.keyPaddingMask = { data: new Uint8Array([1, 1, 1, 0, 1, 0]), shape: [2, 3], dtype: 'bool' };
  const attention = new mha.MultiHeadAttention(config);
  const got = attention.forward(input);
  nanRows = Array.from(got.output.data).filter(Number.isNaN).length / 4;
  const want = referenceForward(config, attention.stateDict(), input);
  attention.dispose();
  assert.equal(maxAbsDiff(got.output.data, want.output.data) <= OUTPUT_TOLERANCE, true);
  assert.equal(nanRows, 3, 'batch item 0 has every key masked: its 3 output rows are NaN');
  console.log(`valid: ${VALID_RUNS} random cases; max relative error output ${worst.output.toExponential(2)}, ` +
    `headOutputs ${worst.headOutputs.toExponential(2)}, concat ${worst.concat.toExponential(2)} ` +
    `(tolerance ${OUTPUT_TOLERANCE}); max abs error weights ${worst.weights.toExponential(2)} (tolerance ${WEIGHTS_TOLERANCE})`);
});

// ---------------------------------------------------------------------------------------------
// Invalid calls

// A few live objects the faults are aimed at (created once; disposed at the end).
const POOL_CONFIGS = [
  { embedDim: 8, numHeads: 2, batchFirst: true, seed: 1 },
  { embedDim: 8, numHeads: 4, numKvHeads: 2, seed: 2 },
  { embedDim: 6, numHeads: 3, kdim: 4, vdim: 5, addBiasKv: true, addZeroAttn: true, seed: 3 },
  { embedDim: 4, numHeads: 1, bias: false, batchFirst: true, seed: 4 },
];
const pool = POOL_CONFIGS.map((c) => new mha.MultiHeadAttention(c));
const capped = new mha.MultiHeadAttention({ embedDim: 8, numHeads: 2, batchFirst: true });
capped.setMemoryCap(4096);

const NOT_FINITE = [NaN, Infinity, -Infinity];
const pick = (random, list) => list[Math.floor(random() * list.length)];
const int = (random, lo, hi) => lo + Math.floor(random() * (hi - lo + 1));
const numel = (shape) => shape.reduce((a, b) => a * b, 1);

/** A valid input for attention `a` of the pool: batched in its layout, N=2, L=3, S=4. */
function validInput(a, random) {
  const { embedDim: E, kdim, vdim, batchFirst } = a.config;
  const shape = (T, D) => (batchFirst ? [2, T, D] : [T, 2, D]);
  const t = (T, D) => ({ data: uniform(random, 2 * T * D), shape: shape(T, D) });
  return { query: t(3, E), key: t(4, kdim), value: t(4, vdim) };
}

// Each fault: (random) => { what, code, call }. One thing wrong per call.
const FAULTS = [
  // Tensors
  (r) => {
    const a = pick(r, pool);
    const input = validInput(a, r);
    const which = pick(r, ['query', 'key', 'value']);
    const n = input[which].data.length + pick(r, [-1, 1, -5, 7]);
    input[which] = { data: uniform(r, Math.max(0, n)), shape: input[which].shape };
    return { what: `${which} with ${n} values for shape [${input[which].shape}]`, code: 'LENGTH_MISMATCH', call: () => a.forward(input) };
  },
  (r) => {
    const a = pick(r, pool);
    const input = validInput(a, r);
    const which = pick(r, ['query', 'key', 'value']);
    const shape = [...input[which].shape];
    shape[2] += int(r, 1, 3);
    input[which] = { data: uniform(r, numel(shape)), shape };
    return { what: `${which} with last dimension ${shape[2]}`, code: 'SHAPE_MISMATCH', call: () => a.forward(input) };
  },
  (r) => {
    const a = pick(r, pool);
    const E = a.config.embedDim;
    const shape = pick(r, [[E], [1, 2, 3, E], [2, 2 * E]]).map((d) => d);
    const q = { data: uniform(r, numel(shape)), shape };
    return { what: `query of shape [${shape}]`, code: 'SHAPE_MISMATCH', call: () => a.forward({ query: q, key: shape.length === 2 ? { data: uniform(r, 2 * a.config.kdim), shape: [2, a.config.kdim] } : undefined }) };
  },
  (r) => {
    const a = pick(r, pool);
    const E = a.config.embedDim;
    const shape = pick(r, [[0, 3, E], [2, 0, E], [0, E], [3, 2, 0]]);
    return { what: `query with a zero dimension [${shape}]`, code: 'SHAPE_MISMATCH', call: () => a.forward({ query: { data: new Float32Array(0), shape } }) };
  },
  (r) => {
    const a = pick(r, pool);
    const bad = pick(r, [-1, -3, 1.5, NaN, Infinity, -Infinity, 2 ** 31, 2 ** 40, Number.MAX_VALUE, '3', null]);
    const shape = [2, bad, a.config.embedDim];
    return { what: `query shape [${String(bad)}]`, code: 'SHAPE_MISMATCH', call: () => a.forward({ query: { data: new Float32Array(8), shape } }) };
  },
  (r) => {
    const a = pick(r, pool);
    const shape = [pick(r, [65536, 2 ** 31 - 1, 1e6]), pick(r, [65536, 2 ** 31 - 1]), a.config.embedDim];
    return { what: `huge query shape [${shape}] with 8 values`, code: 'LENGTH_MISMATCH', call: () => a.forward({ query: { data: new Float32Array(8), shape } }) };
  },
  (r) => {
    const a = pick(r, pool);
    const input = validInput(a, r);
    const which = pick(r, ['query', 'key', 'value']);
    const value = pick(r, NOT_FINITE);
    input[which].data[int(r, 0, input[which].data.length - 1)] = value;
    return { what: `${which} holding ${value}`, code: 'INVALID_ARGUMENT', call: () => a.forward(input) };
  },
  (r) => {
    const a = pick(r, pool);
    const input = validInput(a, r);
    const dtype = pick(r, ['float64', 'int32', 'bool', 'float16', 7]);
    input.query = { ...input.query, dtype };
    return { what: `query dtype ${dtype}`, code: 'INVALID_DTYPE', call: () => a.forward(input) };
  },
  (r) => {
    const a = pick(r, pool);
    const input = validInput(a, r);
    const data = pick(r, ['not numbers', 42, null, true, Symbol.iterator]);
    input.key = { data, shape: input.key.shape };
    return { what: `key data ${String(data)}`, code: 'INVALID_DTYPE', call: () => a.forward(input) };
  },
  (r) => {
    const a = pick(r, pool);
    const query = pick(r, [null, 5, 'query', [1, 2, 3], { data: new Float32Array(4) }, { shape: [2, 2] }, undefined]);
    return { what: `query ${String(query)}`, code: 'INVALID_ARGUMENT', call: () => a.forward({ query }) };
  },
  (r) => {
    const a = pick(r, pool);
    const arg = pick(r, [null, 5, 'x', undefined]);
    return { what: `forward(${String(arg)})`, code: 'INVALID_ARGUMENT', call: () => a.forward(arg) };
  },
  (r) => {
    const a = pick(r, pool);
    const input = validInput(a, r);
    const { batchFirst, kdim, vdim } = a.config;
    const kind = pick(r, ['batch', 'kdim', 'length']);
    const shape = (N, T, D) => (batchFirst ? [N, T, D] : [T, N, D]);
    if (kind === 'batch') {
      const s = shape(3, 4, kdim);
      input.key = { data: uniform(r, numel(s)), shape: s };
      const v = shape(3, 4, vdim);
      input.value = { data: uniform(r, numel(v)), shape: v };
    } else if (kind === 'kdim') {
      const s = shape(2, 4, kdim + 1);
      input.key = { data: uniform(r, numel(s)), shape: s };
    } else {
      const v = shape(2, 5, vdim);
      input.value = { data: uniform(r, numel(v)), shape: v };
    }
    return { what: `key/value mismatch (${kind})`, code: 'SHAPE_MISMATCH', call: () => a.forward(input) };
  },
  // Masks
  (r) => {
    const a = pick(r, pool);
    const input = validInput(a, r);
    const shape = pick(r, [[2, 3], [4], [1, 4], [2, 4, 1], [4, 2]]);
    const dtype = pick(r, ['bool', 'float32']);
    input.keyPaddingMask = { data: dtype === 'bool' ? new Uint8Array(numel(shape)) : new Float32Array(numel(shape)), shape, dtype };
    return { what: `keyPaddingMask shape [${shape}]`, code: 'SHAPE_MISMATCH', call: () => a.forward(input) };
  },
  (r) => {
    const a = pick(r, pool);
    const input = validInput(a, r);
    const H = a.config.numHeads;
    const shape = pick(r, [[3, 3], [4, 4], [12], [2 * H + 1, 3, 4], [H, 3, 4, 1], [2 * H, 4, 3]]);
    const dtype = pick(r, ['bool', 'float32']);
    input.attnMask = { data: dtype === 'bool' ? new Uint8Array(numel(shape)) : new Float32Array(numel(shape)), shape, dtype };
    return { what: `attnMask shape [${shape}]`, code: 'SHAPE_MISMATCH', call: () => a.forward(input) };
  },
  (r) => {
    const a = pick(r, pool);
    const input = validInput(a, r);
    const which = pick(r, ['keyPaddingMask', 'attnMask']);
    const shape = which === 'keyPaddingMask' ? [2, 4] : [3, 4];
    input[which] = { data: new Uint8Array(numel(shape) + pick(r, [-1, 1, 3])), shape, dtype: 'bool' };
    return { what: `${which} of the wrong length`, code: 'LENGTH_MISMATCH', call: () => a.forward(input) };
  },
  (r) => {
    const a = pick(r, pool);
    const input = validInput(a, r);
    const which = pick(r, ['keyPaddingMask', 'attnMask']);
    const shape = which === 'keyPaddingMask' ? [2, 4] : [3, 4];
    const dtype = pick(r, ['int8', 'float64', 'uint8', 'string']);
    input[which] = { data: new Uint8Array(numel(shape)), shape, dtype };
    return { what: `${which} dtype ${dtype}`, code: 'INVALID_DTYPE', call: () => a.forward(input) };
  },
  (r) => {
    const a = pick(r, pool);
    const input = validInput(a, r);
    const which = pick(r, ['keyPaddingMask', 'attnMask']);
    const shape = which === 'keyPaddingMask' ? [2, 4] : [3, 4];
    const data = new Float32Array(numel(shape));
    const value = pick(r, [NaN, Infinity]);
    data[int(r, 0, data.length - 1)] = value;
    input[which] = { data, shape, dtype: 'float32' };
    return { what: `float ${which} holding ${value}`, code: 'INVALID_ARGUMENT', call: () => a.forward(input) };
  },
  (r) => {
    const a = pick(r, pool);
    const input = validInput(a, r);
    input.attnMask = pick(r, [5, 'mask', { data: new Uint8Array(12) }, { data: null, shape: [3, 4] }]);
    const code = input.attnMask && typeof input.attnMask === 'object' && 'shape' in input.attnMask ? 'INVALID_DTYPE' : 'INVALID_ARGUMENT';
    return { what: `attnMask ${JSON.stringify(input.attnMask)}`, code, call: () => a.forward(input) };
  },
  // Options
  (r) => {
    const a = pick(r, pool);
    const input = validInput(a, r);
    const option = pick(r, ['needWeights', 'averageAttnWeights', 'isCausal', 'returnHeadOutputs', 'returnConcat', 'skipOutProj', 'fullyMaskedRowsZero']);
    input[option] = pick(r, [1, 0, 'yes', 'false', null, {}]);
    return { what: `${option}: ${String(input[option])}`, code: 'INVALID_ARGUMENT', call: () => a.forward(input) };
  },
  (r) => {
    const a = pick(r, pool);
    const input = validInput(a, r);
    input.ablateHeads = pick(r, [[-1], [a.config.numHeads], [0.5], [NaN], 'all', 3, [null]]);
    return { what: `ablateHeads ${String(input.ablateHeads)}`, code: 'INVALID_ARGUMENT', call: () => a.forward(input) };
  },
  // The memory cap
  (r) => {
    const input = validInput(capped, r);
    const L = int(r, 40, 80);
    input.query = { data: uniform(r, L * 8), shape: [1, L, 8] };
    input.key = { data: uniform(r, L * 8), shape: [1, L, 8] };
    input.value = input.key;
    return { what: `L=S=${L} over a 4 KiB cap`, code: 'TOO_LARGE', call: () => capped.forward(input) };
  },
  (r) => {
    const bytes = pick(r, [0, -1, 1.5, NaN, Infinity, '1024', 2 ** 60]);
    return { what: `setMemoryCap(${String(bytes)})`, code: 'INVALID_ARGUMENT', call: () => capped.setMemoryCap(bytes) };
  },
  // Configurations
  (r) => {
    const field = pick(r, ['embedDim', 'numHeads', 'numKvHeads', 'kdim', 'vdim']);
    const bad = pick(r, [0, -1, -8, 1.5, NaN, Infinity, -Infinity, '8', null, 2 ** 31, 2 ** 53]);
    const config = { embedDim: 8, numHeads: 2, [field]: bad };
    return { what: `${field}: ${String(bad)}`, code: 'INVALID_CONFIG', call: () => new mha.MultiHeadAttention(config) };
  },
  (r) => {
    const numHeads = pick(r, [2, 3, 4, 6, 8]);
    const numKvHeads = pick(r, [3, 5, 7, 16].filter((g) => numHeads % g !== 0));
    return { what: `numKvHeads ${numKvHeads} with numHeads ${numHeads}`, code: 'INVALID_CONFIG', call: () => new mha.MultiHeadAttention({ embedDim: numHeads * 2, numHeads, numKvHeads }) };
  },
  (r) => {
    const numHeads = pick(r, [3, 5, 7]);
    return { what: `embedDim 16 with numHeads ${numHeads}`, code: 'INVALID_CONFIG', call: () => new mha.MultiHeadAttention({ embedDim: 16, numHeads }) };
  },
  (r) => {
    const config = pick(r, [{ embedDim: 2 ** 30, numHeads: 1 }, { embedDim: 2 ** 31 - 1, numHeads: 1 }, { embedDim: 65536, numHeads: 4 }, { embedDim: 8, numHeads: 2, kdim: 2 ** 31 - 1 }]);
    return { what: `huge config ${JSON.stringify(config)}`, code: 'TOO_LARGE', call: () => new mha.MultiHeadAttention(config) };
  },
  (r) => {
    const config = pick(r, [null, 5, 'config', undefined]);
    return { what: `config ${String(config)}`, code: 'INVALID_CONFIG', call: () => new mha.MultiHeadAttention(config) };
  },
  (r) => {
    const field = pick(r, ['bias', 'addBiasKv', 'addZeroAttn', 'batchFirst']);
    const config = { embedDim: 8, numHeads: 2, [field]: pick(r, [1, 'true', null]) };
    return { what: `${field}: ${String(config[field])}`, code: 'INVALID_ARGUMENT', call: () => new mha.MultiHeadAttention(config) };
  },
  // Parameters
  (r) => {
    const a = pick(r, pool);
    const name = pick(r, ['in_proj', 'weight', 'out_proj.weights', '', 'bias_k_', '__proto__', 'constructor']);
    return { what: `getParameter('${name}')`, code: 'UNKNOWN_PARAMETER', call: () => a.getParameter(name) };
  },
  (r) => {
    const a = pick(r, pool);
    const name = pick(r, a.parameterNames());
    const shape = [...a.parameterShape(name)];
    shape[0] += 1;
    return { what: `setParameter('${name}') shape [${shape}]`, code: 'SHAPE_MISMATCH', call: () => a.setParameter(name, { data: uniform(r, numel(shape)), shape }) };
  },
  (r) => {
    const a = pick(r, pool);
    const name = pick(r, a.parameterNames());
    const shape = a.parameterShape(name);
    const data = uniform(r, numel(shape));
    data[int(r, 0, data.length - 1)] = pick(r, NOT_FINITE);
    return { what: `setParameter('${name}') with a non-finite value`, code: 'INVALID_ARGUMENT', call: () => a.setParameter(name, { data, shape }) };
  },
  (r) => {
    const a = pick(r, pool);
    const sd = {};
    for (const name of a.parameterNames()) sd[name] = a.getParameter(name);
    const kind = pick(r, ['missing', 'extra']);
    if (kind === 'missing') delete sd[pick(r, Object.keys(sd))];
    else sd.extra_weight = { data: new Float32Array(1), shape: [1] };
    return { what: `loadStateDict with a ${kind} name`, code: 'UNKNOWN_PARAMETER', call: () => a.loadStateDict(sd) };
  },
  // Disposed objects
  (r) => {
    const a = new mha.MultiHeadAttention(pick(r, POOL_CONFIGS));
    a.dispose();
    const method = pick(r, ['forward', 'getParameter', 'parameterNames', 'stateDict', 'resetParameters', 'setMemoryCap', 'loadStateDict']);
    const args = { forward: [validInput(pool[0], r)], getParameter: ['out_proj.weight'], parameterNames: [], stateDict: [], resetParameters: [1], setMemoryCap: [1024], loadStateDict: [{}] }[method];
    return { what: `${method} on a disposed object`, code: 'DISPOSED', call: () => a[method](...args) };
  },
  // Statistics
  (r) => {
    const shape = pick(r, [[4, 4], [8], [1, 2, 3, 4, 5]]);
    return { what: `headStatistics on shape [${shape}]`, code: 'SHAPE_MISMATCH', call: () => mha.headStatistics({ data: new Float32Array(numel(shape)), shape }) };
  },
  (r) => {
    const shape = [2, 3, 4];
    return { what: 'headSimilarity with the wrong length', code: 'LENGTH_MISMATCH', call: () => mha.headSimilarity({ data: new Float32Array(numel(shape) - 1), shape }) };
  },
  (r) => {
    const threshold = pick(r, [-0.1, 1.5, NaN, '0.1', Infinity]);
    return { what: `sparsityThreshold ${String(threshold)}`, code: 'INVALID_ARGUMENT', call: () => mha.headStatistics({ data: new Float32Array(8), shape: [1, 2, 4] }, { sparsityThreshold: threshold }) };
  },
  (r) => {
    const a = { data: new Float32Array(12), shape: [3, 4] };
    const b = { data: new Float32Array(12), shape: pick(r, [[4, 3], [2, 6], [12, 1]]) };
    return { what: `jsDivergence of shapes [3,4] and [${b.shape}]`, code: 'SHAPE_MISMATCH', call: () => mha.jsDivergence(a, b) };
  },
];

/** Makes and runs fault number `kind` from `seed`; returns the error thrown. */
function runFault(kind, seed) {
  const r = rng(seed);
  const fault = FAULTS[kind](r);
  let thrown = null;
  try {
    fault.call();
  } catch (error) {
    thrown = error;
  }
  return { fault, thrown };
}

function checkFault(kind, seed, seen) {
  const { fault, thrown } = runFault(kind, seed);
  assert.ok(thrown !== null, `fault ${kind} (${fault.what}): no error was thrown`);
  assert.ok(thrown instanceof MhaError, `fault ${kind} (${fault.what}): threw ${thrown?.constructor?.name}: ${thrown?.message}`);
  assert.equal(thrown.code, fault.code, `fault ${kind} (${fault.what}): code ${thrown.code}, expected ${fault.code}: ${thrown.message}`);
  assert.ok(typeof thrown.message === 'string' && thrown.message.length >= 10, `fault ${kind}: message too short: '${thrown.message}'`);
  seen.set(fault.code, (seen.get(fault.code) ?? 0) + 1);
}

/** A fixed valid call checked against the reference: the module still computes correctly. */
function checkStillCorrect() {
  const d = {
    numHeads: 2, headDim: 3, kvChoice: 0, kdim: undefined, vdim: undefined, bias: true, addBiasKv: true,
    addZeroAttn: false, batchFirst: false, layout: 'batched', N: 2, L: 4, S: 5, selfAttention: false,
    randomWeights: true, seed: 3, dataSeed: 99, kpm: 'bool', attnMask: 'float', needWeights: true,
    averageAttnWeights: false, isCausal: false, fullyMaskedRowsZero: true, returnHeadOutputs: false,
    returnConcat: false, skipOutProj: false, ablate: [],
  };
  const errors = compareCase(d);
  return errors.output;
}

const invalidCall = fc.record({ kind: fc.nat(FAULTS.length - 1), seed: fc.integer() });

test(`${INVALID_CALLS} random invalid calls throw MhaError with the documented code; the heap stays flat`, () => {
  // Warm-up: every fault kind a few times, so that the per-object input buffers, the error
  // strings and the statistics scratch have reached the sizes these calls use (they are
  // reused, never freed, by design), and fast-check itself has run once.
  const warm = new Map();
  for (let kind = 0; kind < FAULTS.length; ++kind) for (let s = 0; s < 20; ++s) checkFault(kind, 1000 + s, warm);
  checkStillCorrect();
  const heapBefore = mha.heapBytes();
  const inUseBefore = mha.heapInUse();
  const liveBefore = mha.liveObjects();

  const seen = new Map();
  let calls = 0;
  const run = () => fc.assert(
    fc.property(invalidCall, ({ kind, seed }) => {
      calls += 1;
      checkFault(kind, seed, seen);
      if (calls % 2500 === 0) assert.ok(checkStillCorrect() <= OUTPUT_TOLERANCE);
    }),
    { seed: SEED, numRuns: INVALID_CALLS },
  );
  run();
  const afterError = checkStillCorrect();
  const heapAfter = mha.heapBytes();
  const inUseAfter = mha.heapInUse();
  console.log(`invalid: ${calls} calls over ${FAULTS.length} kinds of fault, every one an MhaError with the expected code: ` +
    [...seen.entries()].sort().map(([c, n]) => `${c} ${n}`).join(', '));
  console.log(`heap: WebAssembly memory ${heapBefore} -> ${heapAfter} bytes; allocator bytes in use ${inUseBefore} -> ${inUseAfter} ` +
    `(${inUseAfter - inUseBefore >= 0 ? '+' : ''}${inUseAfter - inUseBefore}); live objects ${liveBefore} -> ${mha.liveObjects()}; ` +
    `valid call afterwards: output error ${afterError.toExponential(2)} (tolerance ${OUTPUT_TOLERANCE})`);
  assert.equal(calls, INVALID_CALLS);
  assert.ok(afterError <= OUTPUT_TOLERANCE);
  assert.equal(heapAfter, heapBefore, 'the WebAssembly memory grew during the invalid calls');
  assert.equal(mha.liveObjects(), liveBefore, 'objects were left alive');
  // Buffers sized by the largest input seen may still grow a little past the warm-up's largest.
  assert.ok(inUseAfter - inUseBefore <= 16 * 1024, `allocator bytes in use grew by ${inUseAfter - inUseBefore}`);

  // The same 10,000 calls again: every buffer is already at its size, so nothing may grow at all.
  const inUseReplay = mha.heapInUse();
  calls = 0;
  run();
  checkStillCorrect();
  console.log(`replay of the same ${calls} calls: allocator bytes in use ${inUseReplay} -> ${mha.heapInUse()}`);
  assert.equal(mha.heapInUse(), inUseReplay, 'memory leaked during the replay');
  assert.equal(mha.heapBytes(), heapBefore);
});

// Regression: in wasm32 a cap of 2^32 bytes or more was converted to size_t as 0, so that every
// call failed with TOO_LARGE ("more than the memory cap of 0 bytes").
test('a memory cap beyond 4 GiB means no practical cap, not zero', () => {
  const a = new mha.MultiHeadAttention({ embedDim: 8, numHeads: 2, batchFirst: true });
  const x = { data: uniform(rng(5), 24), shape: [1, 3, 8] };
  for (const cap of [2 ** 32, 2 ** 32 + 100, 2 ** 40, Number.MAX_SAFE_INTEGER]) {
    a.setMemoryCap(cap);
    assert.deepEqual(a.forward({ query: x }).output.shape, [1, 3, 8], `cap ${cap}`);
  }
  a.setMemoryCap(100);
  assert.throws(() => a.forward({ query: x }), (e) => e instanceof MhaError && e.code === 'TOO_LARGE');
  a.dispose();
});

// Regression: inputs were copied into WebAssembly memory before the cap was checked, so two
// 800 MB inputs aborted the runtime (2 GB at most) instead of failing with TOO_LARGE.
test('inputs past the memory cap are refused before they are copied in', () => {
  const a = new mha.MultiHeadAttention({ embedDim: 8, numHeads: 2, batchFirst: true });
  a.setMemoryCap(16 * 1024);
  const small = { data: uniform(rng(6), 24), shape: [1, 3, 8] };
  a.forward({ query: small });
  const inUse = mha.heapInUse();
  const big = { data: uniform(rng(7), 8 * 1000), shape: [1, 1000, 8] };  // 32,000 bytes
  assert.throws(() => a.forward({ query: big }), (e) => e instanceof MhaError && e.code === 'TOO_LARGE' && /query/.test(e.message));
  assert.throws(() => a.forward({ query: small, key: big, value: big }), (e) => e instanceof MhaError && e.code === 'TOO_LARGE' && /key/.test(e.message));
  assert.equal(mha.heapInUse(), inUse, 'the refused inputs were allocated');
  assert.deepEqual(a.forward({ query: small }).output.shape, [1, 3, 8]);
  a.dispose();
});

after(() => {
  for (const a of pool) a.dispose();
  capped.dispose();
});
