// How long a model's tokenizer may take on one text, as a link (tokenize-time-limit=), the
// element's attribute and the page's control give it: milliseconds, checked here. A module of its
// own, imported when a model is opened, so that an embed without a model does not download it.
/** The bounds, in ms: a tenth of a second to ten minutes. */
export const TOKENIZE_TIME_LIMITS = { min: 100, max: 600000 };

/**
 * The limit in ms from a text (or a number); undefined when there is none (the library's 5000 ms
 * then); an Error saying what was expected otherwise. `name`: what a message calls it.
 * @param {string | number | null | undefined} value
 * @param {string} [name]
 * @returns {number | undefined}
 */
export function tokenizeTimeLimitOf(value, name = 'tokenize-time-limit') {
  if (value === null || value === undefined || (typeof value === 'string' && value.trim() === '')) return undefined;
  const text = String(value).trim();
  const ms = /^\d{1,7}(?:\.\d{1,3})?$/.test(text) ? Number(text) : NaN;
  if (!(ms >= TOKENIZE_TIME_LIMITS.min && ms <= TOKENIZE_TIME_LIMITS.max)) {
    throw new Error(`${name}: expected a number of milliseconds from ${TOKENIZE_TIME_LIMITS.min} to ${TOKENIZE_TIME_LIMITS.max} (5000 unless set), got ${JSON.stringify(text.slice(0, 40))}`);
  }
  return ms;
}
