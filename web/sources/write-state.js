// What a causal model writes after the sentence, as setState's `write` field gives it: checked
// here, for the model source (model.js). Two forms: { steps, temperature?, topK?, seed? } (the
// controller's, a link's), or the element's attributes as they are written: a function from an
// attribute's name (write, temperature, top-k, write-seed) to its text, or null where absent.
/** @typedef {import('./source.js').WriteState} WriteState */

/** The most tokens one request writes (the explorer's own token limit is checked by the source). */
export const MAX_WRITE_STEPS = 4096;

/** @param {unknown} v @param {number} min @param {number} max */
const whole = (v, min, max) => Number.isInteger(v) && /** @type {number} */ (v) >= min && /** @type {number} */ (v) <= max;

/**
 * The attributes' texts as numbers (a text that is not a plain decimal number is NaN, which the
 * checks refuse); a field absent stays absent.
 * @param {(name: string) => string | null} get
 */
function fromAttributes(get) {
  /** @param {string | null} text */
  const number = (text) => (typeof text === 'string' && /^\s*\d{1,10}(\.\d{1,6})?\s*$/.test(text) ? Number(text) : NaN);
  /** @type {Record<string, unknown>} */
  const w = { steps: number(get('write')) };
  for (const [name, field] of [['temperature', 'temperature'], ['top-k', 'topK'], ['write-seed', 'seed']]) {
    if (get(name) !== null) w[field] = number(get(name));
  }
  return w;
}

/**
 * The write state asked for, checked: { write } or { error } naming the field and what it takes.
 * @param {unknown} want
 * @returns {{ write: WriteState, error?: undefined } | { error: string, write?: undefined }}
 */
export function checkedWrite(want) {
  const attributes = typeof want === 'function';
  if (!attributes && (want === null || typeof want !== 'object')) return { error: `expected { steps, temperature?, topK?, seed? }, got ${String(want)}` };
  const w = attributes ? fromAttributes(/** @type {(name: string) => string | null} */ (want)) : /** @type {Record<string, unknown>} */ (want);
  /** @type {Array<[string, string, boolean, string]>} */
  const fields = [
    ['steps', 'write', whole(w.steps, 1, MAX_WRITE_STEPS), `a number of tokens from 1 to ${MAX_WRITE_STEPS}`],
    ['temperature', 'temperature', w.temperature === undefined || (typeof w.temperature === 'number' && w.temperature > 0 && w.temperature <= 100), 'a temperature above 0, at most 100'],
    ['topK', 'top-k', w.topK === undefined || whole(w.topK, 1, 2 ** 31), 'a whole number from 1'],
    ['seed', 'write-seed', w.seed === undefined || whole(w.seed, 0, 2 ** 32 - 1), 'a whole number from 0 to 4294967295'],
  ];
  const bad = fields.find(([, , ok]) => !ok);
  if (bad) {
    const [field, attribute, , expected] = bad;
    const given = attributes ? /** @type {(name: string) => string | null} */ (want)(attribute) : w[field];
    return { error: `${attributes ? attribute : field}: expected ${expected}, got ${JSON.stringify(given) ?? String(given)}` };
  }
  const { steps, temperature, topK, seed } = /** @type {WriteState} */ (/** @type {unknown} */ (w));
  return { write: { steps, ...(temperature !== undefined ? { temperature } : {}), ...(topK !== undefined ? { topK } : {}), ...(seed !== undefined ? { seed } : {}) } };
}
