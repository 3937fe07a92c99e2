// What a head attends to, in words, read from the core's statistics (headStatistics): the one
// description every source without names of its own gives its heads.

const pct = (/** @type {number} */ x) => `${Math.round(x * 100)}%`;

/** Shares above this are what a head "focuses on". */
export const FOCUS_SHARE = 0.4;
/** Normalised entropy above this: the head attends to nothing in particular. */
export const UNIFORM_ENTROPY = 0.9;

/**
 * What a head looks at, as a phrase that follows "This head focuses on": from its statistics
 * (normalised entropy, previous-token, diagonal and first-token shares, max attention, mean distance).
 * @param {import('../lib/index.js').HeadStatistics} s
 */
export function describeByStatistics(s) {
  const parts = [];
  if (s.normalizedEntropy > UNIFORM_ENTROPY) parts.push(`nothing in particular: its weights are nearly uniform (normalised entropy ${s.normalizedEntropy.toFixed(2)})`);
  if (s.previousTokenShare > FOCUS_SHARE) parts.push(`the previous token (${pct(s.previousTokenShare)} of each row on average)`);
  if (s.diagonalShare > FOCUS_SHARE) parts.push(`the token itself (${pct(s.diagonalShare)})`);
  if (s.firstTokenShare > FOCUS_SHARE) parts.push(`the first token (${pct(s.firstTokenShare)})`);
  if (!parts.length) parts.push(`a mix: largest weight per row ${s.maxAttention.toFixed(2)} on average, mean distance ${s.meanDistance.toFixed(1)} tokens`);
  return parts.join('; ');
}

