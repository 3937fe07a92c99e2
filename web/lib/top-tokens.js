// The k most probable tokens at one position of a model's logits (softmax of its row), shared by
// the model on this thread (models.js) and the one in a worker (models-worker.js), which needs no
// round trip for it.
import { MhaError } from './errors.js';

/**
 * [[id, probability], …], most probable first (ties by id).
 * @param {{ logits: { data: Float32Array, shape: number[] } | null }} result  a run's result
 * @param {number} [k]
 * @param {number} [position]  the last one by default
 * @returns {Array<[number, number]>}
 */
export function topTokens(result, k = 5, position = undefined) {
  if (!result || typeof result !== 'object') throw new MhaError('INVALID_ARGUMENT', 'top: expected the result of run()');
  if (!result.logits) throw new MhaError('INVALID_ARGUMENT', 'top: this model has no LM head');
  const [T, V] = result.logits.shape;
  const t = position ?? T - 1;
  if (!Number.isInteger(t) || t < 0 || t >= T) throw new MhaError('INVALID_ARGUMENT', `top: position ${t} is not 0 to ${T - 1}`);
  const row = result.logits.data.subarray(t * V, (t + 1) * V);
  let max = -Infinity;
  for (const v of row) max = Math.max(max, v);
  let sum = 0;
  for (const v of row) sum += Math.exp(v - max);
  const order = Array.from(row.keys()).sort((a, b) => row[b] - row[a] || a - b).slice(0, k);
  return order.map((id) => [id, Math.exp(row[id] - max) / sum]);
}
