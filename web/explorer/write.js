// Writing on through the controller (the page's and the element's panels): the write state after
// asking for more tokens, and setState calls that write or clear. A module of its own, imported
// by the panels, so that an embed that does not write does not download it. The state shown is
// the sentence's `write` (the model source's, web/sources/model.js).
/** @typedef {import('../sources/source.js').WriteState} WriteState */

/**
 * The write state after asking for `steps` more tokens with `sampling` (none: the most
 * probable): more of the same continuation, or with other sampling a new one of `steps` tokens.
 * The written text is a function of the text, the number of tokens and the sampling, so that a
 * link gives it again.
 * @param {WriteState | null | undefined} current
 * @param {number} steps
 * @param {{ temperature?: number, topK?: number, seed?: number }} sampling
 * @returns {WriteState}
 */
export function nextWrite(current, steps, sampling) {
  const same = !!current && current.temperature === sampling.temperature && current.topK === sampling.topK && current.seed === sampling.seed;
  return { ...sampling, steps: (same && current ? current.steps : 0) + steps };
}

/** What the model wrote after the sentence shown, or null. @param {import('./controller.js').Explorer} explorer */
export const writeOf = (explorer) => /** @type {WriteState | undefined} */ (explorer.sentence?.write) ?? null;

/**
 * The model writes `steps` more tokens after the sentence shown (a causal model's), with the
 * sampling given (temperature, topK, seed; none: the most probable tokens).
 * @param {import('./controller.js').Explorer} explorer
 * @param {number} steps
 * @param {{ temperature?: number, topK?: number, seed?: number }} [sampling]
 */
export function writeOn(explorer, steps, sampling = {}) {
  return explorer.setState({ write: nextWrite(writeOf(explorer), steps, sampling) });
}

/** The sentence shown without what the model wrote. @param {import('./controller.js').Explorer} explorer */
export function clearWriting(explorer) {
  return explorer.setState({ write: null });
}
