// Shared by the property and soak tests: a seeded generator of float32 data, and valid
// configurations / inputs built from a plain description (so that fast-check can shrink it).

import { mulberry32 } from '../../web/lib/random.js';

/** mulberry32: a small seeded PRNG, uniform in [0, 1). */
export const rng = mulberry32;

export function uniform(random, count, lo = -2, hi = 2) {
  const out = new Float32Array(count);
  for (let i = 0; i < count; ++i) out[i] = lo + (hi - lo) * random();
  return out;
}

export function divisors(n) {
  const out = [];
  for (let d = 1; d <= n; ++d) if (n % d === 0) out.push(d);
  return out;
}

/**
 * A valid forward call from a description d (fields as in the fast-check record of
 * property.test.js): the config, a state_dict (or null for the seeded one), the input.
 */
export function buildCase(d) {
  const random = rng(d.dataSeed);
  const E = d.numHeads * d.headDim;
  const kvOptions = divisors(d.numHeads);
  const G = kvOptions[d.kvChoice % kvOptions.length];
  const cross = !d.selfAttention || d.kdim !== undefined || d.vdim !== undefined;
  const config = {
    embedDim: E,
    numHeads: d.numHeads,
    ...(G !== d.numHeads || d.kvChoice % 2 ? { numKvHeads: G } : {}),
    ...(d.kdim !== undefined ? { kdim: d.kdim } : {}),
    ...(d.vdim !== undefined ? { vdim: d.vdim } : {}),
    bias: d.bias,
    addBiasKv: d.addBiasKv,
    addZeroAttn: d.addZeroAttn,
    batchFirst: d.batchFirst,
    seed: d.seed,
  };
  const kdim = d.kdim ?? E;
  const vdim = d.vdim ?? E;
  const batched = d.layout === 'batched';
  const N = batched ? d.N : 1;
  const L = d.L;
  const S = cross ? d.S : d.L;
  const shapeOf = (T, D) => (!batched ? [T, D] : d.batchFirst ? [N, T, D] : [T, N, D]);
  const tensor = (T, D) => {
    const shape = shapeOf(T, D);
    return { data: uniform(random, shape.reduce((a, b) => a * b, 1)), shape };
  };
  const input = { query: tensor(L, E) };
  if (cross) {
    input.key = tensor(S, kdim);
    input.value = tensor(S, vdim);
  }
  const H = d.numHeads;
  const mask = (kind, shape) => {
    const count = shape.reduce((a, b) => a * b, 1);
    if (kind.startsWith('bool')) {
      const data = new Uint8Array(count);
      for (let i = 0; i < count; ++i) data[i] = random() < 0.3 ? 1 : 0;
      return { data, shape, dtype: 'bool' };
    }
    const data = new Float32Array(count);
    for (let i = 0; i < count; ++i) {
      const r = random();
      data[i] = r < 0.25 ? -Infinity : r < 0.5 ? 0 : Math.fround(-2 + 4 * random());
    }
    return { data, shape, dtype: 'float32' };
  };
  if (d.kpm !== 'none') input.keyPaddingMask = mask(d.kpm, batched ? [N, S] : [S]);
  if (d.attnMask !== 'none') {
    input.attnMask = mask(d.attnMask, d.attnMask.endsWith('3d') ? [N * H, L, S] : [L, S]);
  }
  for (const option of ['needWeights', 'averageAttnWeights', 'isCausal', 'fullyMaskedRowsZero',
    'returnHeadOutputs', 'returnConcat', 'skipOutProj']) {
    input[option] = d[option];
  }
  input.ablateHeads = [...new Set(d.ablate.filter((h) => h < H))];

  let stateDict = null;
  if (d.randomWeights) stateDict = 'random';
  return { config, input, stateDict, random };
}

/** Random parameters for every name the module has, with the shapes it asks for. */
export function randomStateDict(attention, random) {
  const out = {};
  for (const name of attention.parameterNames()) {
    const shape = attention.parameterShape(name);
    out[name] = { data: uniform(random, shape.reduce((a, b) => a * b, 1), -0.6, 0.6), shape };
  }
  return out;
}
