// Does each designed head do what its label says, on this sentence? Every check reads the
// attention weights (as the core returns them) and compares one number with a threshold. Heads 1,
// 2, 7 and 8 are checked against positions and the core's statistics; heads 3 to 6 against the
// tagger's analysis of the tokens, the same parse their features were built from: those checks
// say whether the weights follow the parse, not whether the parse is right (`basis: 'parse'`).
// The page shows the verdicts with the parse's guesses; the browser tests assert them for every
// example sentence.

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
 * @returns {LabelVerdict}
 */
export function checkHeadLabel(head, map, tokens, stats) {
  const L = tokens.length;
  const w = (/** @type {number} */ i, /** @type {number} */ j) => map[i * L + j];
  /** @type {{ row: number, share: number }[]} share of the relation target(s) in that row */
  const rows = [];
  /** @type {string[]} the parse's relation on each row checked, "sat → cat" */
  const guess = [];
  const addRow = (/** @type {number} */ row, /** @type {number} */ share, /** @type {number[]} */ targets = []) => {
    rows.push({ row, share });
    if (targets.length) guess.push(`${tokens[row].text} → ${targets.map((j) => tokens[j].text).join(', ')}`);
  };
  let threshold = THRESHOLDS.targetShare;
  /** @type {LabelVerdict['basis']} */
  let basis = 'parse';
  let what;
  switch (head) {
    case 0:
      what = 'weight on token i − 1';
      basis = 'positions';
      for (let i = 1; i < L; i += 1) addRow(i, w(i, i - 1));
      break;
    case 1:
      what = 'weight on token i + 1';
      basis = 'positions';
      for (let i = 0; i < L - 1; i += 1) addRow(i, w(i, i + 1));
      break;
    case 2: {
      what = 'weight on tokens of the same class';
      threshold = THRESHOLDS.sameClassShare;
      for (let i = 0; i < L; i += 1) {
        let share = 0;
        for (let j = 0; j < L; j += 1) if (tokens[j].cls === tokens[i].cls) share += w(i, j);
        addRow(i, share);
      }
      // the parse's guess here is each word's class
      const classes = [...new Set(tokens.filter((t) => !t.isPunct && t.cls !== 'function').map((t) => t.cls))];
      for (const c of classes) guess.push(`${c}: ${tokens.filter((t) => t.cls === c && !t.isPunct).map((t) => t.text).join(', ')}`);
      break;
    }
    case 3:
    case 4:
    case 5:
      what = RELATION_CHECKED[head];
      for (const { row, targets } of parseTargets(head, tokens)) addRow(row, targets.reduce((sum, j) => sum + w(row, j), 0), targets);
      break;
    case 6: {
      const share = stats.firstTokenShare;
      const holds = share >= THRESHOLDS.firstTokenShare;
      return { holds, checked: L, failed: holds ? 0 : L, worst: share, basis: 'statistics', guess: [],
        summary: `mean weight on the first token ${share.toFixed(3)} (needs ≥ ${THRESHOLDS.firstTokenShare})` };
    }
    case 7: {
      const h = stats.normalizedEntropy;
      const holds = h >= THRESHOLDS.normalizedEntropy;
      return { holds, checked: L, failed: holds ? 0 : L, worst: h, basis: 'statistics', guess: [],
        summary: `normalised entropy ${h.toFixed(3)} (needs ≥ ${THRESHOLDS.normalizedEntropy})` };
    }
    default:
      throw new Error(`checkHeadLabel: expected head 0..7, got ${head}`);
  }
  if (!rows.length) {
    // nothing checked is no verdict
    return { holds: null, checked: 0, failed: 0, worst: null, basis, guess, summary: `no rows to check (${what}: none in this sentence)` };
  }
  const failed = rows.filter((r) => !(r.share >= threshold)).length;
  const worst = rows.reduce((a, b) => (b.share < a.share ? b : a));
  return {
    holds: failed === 0, checked: rows.length, failed, worst: worst.share, basis, guess,
    summary: `${what}: lowest ${worst.share.toFixed(3)} (row “${tokens[worst.row].text}”) over ${rows.length} row${rows.length > 1 ? 's' : ''} (needs ≥ ${threshold})`,
  };
}

/**
 * A designed head's verdict on one sentence. basis: what the weights were checked against
 * (positions, the core's statistics, or the tagger's parse, which their features come from);
 * guess: the parse's relation on each row checked ("sat → cat"), or each class's words;
 * holds: null where no row had anything to check.
 * @typedef {{ holds: boolean | null, checked: number, failed: number, worst: number | null, summary: string,
 *             basis: 'positions' | 'statistics' | 'parse', guess: string[] }} LabelVerdict
 */

/** What heads 4 to 6 (0-based 3 to 5) weigh on each row the parse gives them a target. */
const RELATION_CHECKED = /** @type {Record<number, string>} */ ({
  3: 'verb → weight on its subject', 4: 'pronoun → weight on agreeing nouns', 5: 'modifier → weight on its noun',
});

/**
 * The rows where the parse gives head 4, 5 or 6 (0-based 3 to 5) something to find, and what:
 * a verb's subject, the nouns agreeing with a third-person pronoun, a modifier's noun. The other
 * rows fall back on the first token.
 * @param {number} head  3, 4 or 5
 * @param {import('./tokens.js').Token[]} tokens
 * @returns {{ row: number, targets: number[] }[]}
 */
export function parseTargets(head, tokens) {
  /** @type {{ row: number, targets: number[] }[]} */
  const out = [];
  tokens.forEach((t, row) => {
    if (head === 3 && t.pos === 'VERB' && t.subject >= 0) out.push({ row, targets: [t.subject] });
    if (head === 4 && t.pronoun && t.pronoun.person === 3) {
      const agreeing = agreeingNouns(t, tokens);
      if (agreeing.length) out.push({ row, targets: agreeing });
    }
    if (head === 5 && t.modifies >= 0) out.push({ row, targets: [t.modifies] });
  });
  return out;
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
