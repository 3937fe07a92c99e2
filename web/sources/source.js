// Where heads come from: every source of heads implements HeadSource (source.d.ts beside this
// file), and the page and the element show any of them with the same views. Helpers they share
// (their types are in source.d.ts too: it is this module's declaration).

/** @typedef {import('../lib/index.js').Tensor} Tensor */

/**
 * The core's statistics and head-to-head divergences for per-head weights (H, L, L).
 * @param {import('./source.js').AnyMhaModule} mha
 * @param {import('../lib/index.js').TensorInput} weights
 */
export async function analyseHeads(mha, weights) {
  const [statistics, similarity] = await Promise.all([mha.headStatistics(weights), mha.headSimilarity(weights)]);
  return { stats: statistics.heads, similarity: similarity.jsd };
}

/** Head h's (L, L) map: a view into per-head weights { data, shape: [H, L, L] }. @param {Tensor} weights @param {number} h */
export function headMap(weights, h) {
  const L = weights.shape[weights.shape.length - 1];
  return weights.data.subarray(h * L * L, (h + 1) * L * L);
}

/** Every head's map, in order. @param {Tensor} weights */
export function headMaps(weights) {
  return Array.from({ length: weights.shape[0] }, (_, h) => headMap(weights, h));
}

/**
 * Per token t: ‖a_t − b_t‖ and ‖a_t‖ for two (L, E) outputs.
 * @param {ArrayLike<number>} a
 * @param {ArrayLike<number>} b
 * @param {number} L
 * @param {number} E
 */
export function tokenDifferences(a, b, L, E) {
  return Array.from({ length: L }, (_, t) => {
    let difference = 0;
    let baseline = 0;
    for (let c = t * E; c < (t + 1) * E; c += 1) {
      difference += (a[c] - b[c]) ** 2;
      baseline += a[c] ** 2;
    }
    return { difference: Math.sqrt(difference), baseline: Math.sqrt(baseline) };
  });
}

/**
 * A clear message when a sentence has more tokens than a source takes.
 * @param {number} count
 * @param {number} max
 */
export function tooManyTokens(count, max, unit = 'tokens', what = 'words and punctuation marks each count as one') {
  const extra = count - max;
  return new Error(`The sentence has ${count} ${unit}; the explorer takes at most ${max}. Remove ${extra} ${extra > 1 ? unit : unit.replace(/s$/, '')} (${what}).`);
}
