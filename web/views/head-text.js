// A head's numbers in words: its statistics as labelled rows, the divergence between two heads,
// in words. One wording for the page and the element.

/**
 * The statistics shown for a head: [name, value, help] rows. `causal`: rows see only earlier
 * tokens (the trained decoder), which changes what the numbers mean.
 * @param {import('../lib/index.js').HeadStatistics} s
 * @param {{ length: number, causal?: boolean }} o  length: the sentence's tokens
 * @returns {[string, string, string][]}
 */
export function statisticsRows(s, { length, causal = false }) {
  return [
    ['Entropy', `${s.entropy.toFixed(2)} nats`, causal
      ? 'mean over query rows; causal rows see only earlier tokens'
      : `normalised ${s.normalizedEntropy.toFixed(2)}; 0 = all weight on one token, ln L = ${Math.log(length).toFixed(2)} = uniform`],
    ['Sparsity', `${(s.sparsity * 100).toFixed(0)}%`, causal ? 'share of weights below 0.01 (the masked future counts)' : 'share of weights below 0.01'],
    ['Max attention', s.maxAttention.toFixed(2), 'largest weight of a row, averaged over rows'],
    ['Avg attention', s.averageAttention.toFixed(3), causal ? 'mean of all weights' : 'mean of all weights (1/L for full rows)'],
  ];
}

/** Jensen–Shannon divergence between two heads' maps, in words. @param {number} jsd */
export function divergenceText(jsd) {
  const verdict = jsd < 0.05 ? 'nearly the same map' : jsd < 0.3 ? 'partly similar' : 'clearly different';
  return `Jensen–Shannon divergence (mean over rows, from the core): ${jsd.toFixed(3)} nats of at most ln 2 ≈ 0.693: ${verdict}.`;
}
