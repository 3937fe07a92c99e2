// Choosing the next token from a row of logits: the most probable one, or one drawn with a
// temperature and top-k from a seeded generator, so that a seed (and a link that carries it)
// gives the same text again in every engine. Shared by the model on this thread (models.js)
// and the one in a worker (models-worker.js).
//   p(v) = exp(logit_v / T) / sum over the k largest logits of exp(logit_u / T),  v among them
import { MhaError } from './errors.js';
import { mulberry32 } from './random.js';

export { mulberry32 };

/**
 * The seed of the draw for the token at `position`: each position draws from a stream of its own,
 * so that a text written one step at a time is the text written at once.
 * @param {number} seed
 * @param {number} position
 */
export function positionSeed(seed, position) {
  return (seed ^ Math.imul(position + 1, 0x9e3779b9)) >>> 0;
}

/** @param {unknown} value */
const shown = (value) => (typeof value === 'string' ? JSON.stringify(value) : String(value));

/**
 * generate()'s options, checked: greedy (the default when no temperature or topK is given), or
 * sampled at a temperature > 0 among the topK most probable tokens (all when topK is absent)
 * with a seed (0 when absent).
 * @param {unknown} options
 * @param {string} what  the call, for messages
 * @returns {{ greedy: boolean, temperature: number, topK: number, seed: number }}
 */
export function samplingOf(options, what) {
  if (options === null || typeof options !== 'object') throw new MhaError('INVALID_ARGUMENT', `${what}: expected an options object, got ${shown(options)}`);
  const { greedy, temperature, topK, seed } = /** @type {Record<string, unknown>} */ (options);
  if (greedy !== undefined && typeof greedy !== 'boolean') throw new MhaError('INVALID_ARGUMENT', `${what}: greedy must be true or false, got ${shown(greedy)}`);
  if (temperature !== undefined && !(typeof temperature === 'number' && Number.isFinite(temperature) && temperature > 0)) {
    throw new MhaError('INVALID_ARGUMENT', `${what}: temperature must be a number > 0, got ${shown(temperature)}`);
  }
  if (topK !== undefined && !(Number.isInteger(topK) && /** @type {number} */ (topK) >= 1)) {
    throw new MhaError('INVALID_ARGUMENT', `${what}: topK must be a whole number >= 1, got ${shown(topK)}`);
  }
  if (seed !== undefined && !(Number.isInteger(seed) && /** @type {number} */ (seed) >= 0 && /** @type {number} */ (seed) < 2 ** 32)) {
    throw new MhaError('INVALID_ARGUMENT', `${what}: seed must be a whole number 0 to 4294967295, got ${shown(seed)}`);
  }
  const sampled = temperature !== undefined || topK !== undefined;
  if (greedy === true && sampled) {
    throw new MhaError('INVALID_ARGUMENT', `${what}: greedy takes the most probable token; it takes no temperature or topK`);
  }
  return {
    greedy: greedy ?? !sampled,
    temperature: /** @type {number | undefined} */ (temperature) ?? 1,
    topK: /** @type {number | undefined} */ (topK) ?? Infinity,
    seed: /** @type {number | undefined} */ (seed) ?? 0,
  };
}

/**
 * The next token from one row of logits: the most probable (ties: the smaller id), or drawn
 * with `random`. probability: the model's own, softmax of the row at temperature 1.
 * @param {Float32Array} row  (vocab)
 * @param {{ greedy: boolean, temperature: number, topK: number }} sampling
 * @param {() => number} random
 * @returns {{ id: number, probability: number }}
 */
export function pickToken(row, sampling, random) {
  let max = -Infinity;
  let best = 0;
  for (let v = 0; v < row.length; ++v) {
    if (row[v] > max) { max = row[v]; best = v; }
  }
  let sum = 0;
  for (let v = 0; v < row.length; ++v) sum += Math.exp(row[v] - max);
  const probabilityOf = (/** @type {number} */ id) => Math.exp(row[id] - max) / sum;
  if (sampling.greedy || sampling.topK === 1) return { id: best, probability: probabilityOf(best) };
  const candidates = topIds(row, Math.min(sampling.topK, row.length));
  const T = sampling.temperature;
  const weights = candidates.map((id) => Math.exp((row[id] - max) / T));
  const total = weights.reduce((a, b) => a + b, 0);
  let u = random() * total;
  for (let i = 0; i < candidates.length; ++i) {
    u -= weights[i];
    if (u < 0) return { id: candidates[i], probability: probabilityOf(candidates[i]) };
  }
  const last = candidates[candidates.length - 1];  // u within rounding of the total
  return { id: last, probability: probabilityOf(last) };
}

/**
 * The k ids of the largest logits, largest first (ties: the smaller id first).
 * @param {Float32Array} row
 * @param {number} k
 * @returns {number[]}
 */
function topIds(row, k) {
  if (k >= row.length) return Array.from(row.keys()).sort((a, b) => row[b] - row[a] || a - b);
  /** @type {number[]} */
  const kept = [];  // sorted, at most k: an insertion per id that beats the smallest kept
  for (let v = 0; v < row.length; ++v) {
    if (kept.length === k && row[v] <= row[kept[k - 1]]) continue;
    let at = kept.length;
    while (at > 0 && row[kept[at - 1]] < row[v]) --at;
    kept.splice(at, 0, v);
    if (kept.length > k) kept.pop();
  }
  return kept;
}
