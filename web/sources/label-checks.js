// Does each designed head do what its label says, on this sentence? Every check reads the
// attention weights (as the core returns them) and the tagger's analysis of the tokens, and
// compares one number with a threshold. The page shows the verdicts; the browser tests assert
// them for every example sentence.

/** Thresholds, stated once. */
export const THRESHOLDS = {
  /** Rows whose relation target must get at least this weight. */
  targetShare: 0.5,
  /** Same-class head: weight on same-class tokens, every row. */
  sameClassShare: 0.8,
  /** Sink head: mean weight on the first token (the core's firstTokenShare). */
  firstTokenShare: 0.9,
  /** Averaging head: normalised entropy (the core's normalizedEntropy). */
  normalizedEntropy: 0.95,
};

/**
 * @param {number} head 0-based head index (designed order)
 * @param {Float32Array} map the head's (L, L) weights, row-major
 * @param {import('./tokens.js').Token[]} tokens
 * @param {{ firstTokenShare:number, normalizedEntropy:number }} stats the core's statistics of this head
 * @returns {{ holds: boolean, checked: number, failed: number, worst: number|null, summary: string }}
 */
export function checkHeadLabel(head, map, tokens, stats) {
  const L = tokens.length;
  const w = (/** @type {number} */ i, /** @type {number} */ j) => map[i * L + j];
  /** @type {{ row: number, share: number }[]} share of the relation target(s) in that row */
  const rows = [];
  const addRow = (/** @type {number} */ row, /** @type {number} */ share) => rows.push({ row, share });
  let threshold = THRESHOLDS.targetShare;
  let what;
  switch (head) {
    case 0:
      what = 'weight on token i − 1';
      for (let i = 1; i < L; i += 1) addRow(i, w(i, i - 1));
      break;
    case 1:
      what = 'weight on token i + 1';
      for (let i = 0; i < L - 1; i += 1) addRow(i, w(i, i + 1));
      break;
    case 2:
      what = 'weight on tokens of the same class';
      threshold = THRESHOLDS.sameClassShare;
      for (let i = 0; i < L; i += 1) {
        let share = 0;
        for (let j = 0; j < L; j += 1) if (tokens[j].cls === tokens[i].cls) share += w(i, j);
        addRow(i, share);
      }
      break;
    case 3:
      what = 'verb → weight on its subject';
      tokens.forEach((t, i) => { if (t.pos === 'VERB' && t.subject >= 0) addRow(i, w(i, t.subject)); });
      break;
    case 4:
      what = 'pronoun → weight on agreeing nouns';
      tokens.forEach((t, i) => {
        if (!t.pronoun || t.pronoun.person !== 3) return;
        const agreeing = agreeingNouns(t, tokens);
        if (!agreeing.length) return;
        addRow(i, agreeing.reduce((sum, j) => sum + w(i, j), 0));
      });
      break;
    case 5:
      what = 'modifier → weight on its noun';
      tokens.forEach((t, i) => { if (t.modifies >= 0) addRow(i, w(i, t.modifies)); });
      break;
    case 6: {
      const share = stats.firstTokenShare;
      const holds = share >= THRESHOLDS.firstTokenShare;
      return { holds, checked: L, failed: holds ? 0 : L, worst: share,
        summary: `mean weight on the first token ${share.toFixed(3)} (needs ≥ ${THRESHOLDS.firstTokenShare})` };
    }
    case 7: {
      const h = stats.normalizedEntropy;
      const holds = h >= THRESHOLDS.normalizedEntropy;
      return { holds, checked: L, failed: holds ? 0 : L, worst: h,
        summary: `normalised entropy ${h.toFixed(3)} (needs ≥ ${THRESHOLDS.normalizedEntropy})` };
    }
    default:
      throw new Error(`checkHeadLabel: expected head 0..7, got ${head}`);
  }
  if (!rows.length) {
    return { holds: true, checked: 0, failed: 0, worst: null, summary: `no rows to check (${what}: none in this sentence)` };
  }
  const failed = rows.filter((r) => !(r.share >= threshold)).length;
  const worst = Math.min(...rows.map((r) => r.share));
  return {
    holds: failed === 0, checked: rows.length, failed, worst,
    summary: `${what}: lowest ${worst.toFixed(3)} over ${rows.length} row${rows.length > 1 ? 's' : ''} (needs ≥ ${threshold})`,
  };
}

/**
 * Nouns that agree with a third-person pronoun in number and (where the noun has one) gender.
 * @param {import('./tokens.js').Token} pronounToken
 * @param {import('./tokens.js').Token[]} tokens
 */
export function agreeingNouns(pronounToken, tokens) {
  const p = /** @type {import('./tokens.js').Pronoun} */ (pronounToken.pronoun);
  /** @type {number[]} */
  const out = [];
  tokens.forEach((t, j) => {
    if (!t.gender || t.number !== p.number) return;
    if (p.gender && t.gender[p.gender] < 0.5) return;
    out.push(j);
  });
  return out;
}
